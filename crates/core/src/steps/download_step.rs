//! The download step: one file through the download engine, its events as the step's.

use crate::download::{self, DownloadError, Expected};
use crate::msg;

use super::{Ctx, DownloadSpec, StepError, StepEvent, StepOutcome};

pub(super) fn run_download(spec: &DownloadSpec, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let req = download::Request {
        url: spec.url.clone(),
        mirrors: spec.mirrors.clone(),
        expected: Expected {
            sha256: spec.sha256.clone(),
            md5: spec.md5.clone(),
            size: spec.size,
        },
        dest: spec.dest.clone(),
        connections: spec.connections,
        cache_dir: spec.cache_dir.clone(),
        bundle_dirs: spec.bundle_dirs.clone(),
        allow_http: !spec.mirrors.is_empty()
            || !spec
                .url
                .starts_with("https://developer.download.nvidia.com"),
    };
    let reporter = download_reporter(ctx);
    let opts = download::Options {
        memory: Some(ctx.target.state_dir().join("sources.json")),
        pinned_first: user_named_first(spec),
        ..download::Options::default()
    };
    let o = if spec.what.may_lack_hash() {
        download::download_signed(&req, &opts, &reporter, ctx.cancel)
    } else {
        download::download(&req, &opts, &reporter, ctx.cancel)
    }
    .map_err(|e| match e {
        DownloadError::Cancelled => StepError::Cancelled,
        // The driver's words name NVIDIA's hosts and what applies to a driver (#34).
        e if spec.what == super::Artifact::DriverInstaller => StepError::DriverDownload {
            hosts: super::unreachable::Unreachable {
                source: super::unreachable::Source::NvidiaDriver,
                host: driver_hosts(spec),
            },
            error: Box::new(e),
        },
        e => StepError::Download(e),
    })?;
    let changed = matches!(
        o.source,
        download::Source::Network(_) | download::Source::Bundle(_) | download::Source::Cache(_)
    );
    // The driver has no checksum to verify: its signature is checked before it runs.
    let detail = if spec.what.may_lack_hash() {
        msg!(
            "step_downloaded_signed",
            path = o.path.display(),
            size = crate::units::bytes(o.size)
        )
    } else {
        msg!(
            "step_downloaded",
            path = o.path.display(),
            size = crate::units::bytes(o.size)
        )
    };
    Ok(StepOutcome {
        changed,
        detail: detail.with("bytes", o.size).with("sha256", o.sha256),
        reboot_required: false,
    })
}

/// The first source is one the user named (`--mirror`, the wizard's mirror field): it is
/// tried first whatever the speed test says (#34: an explicit choice wins). The only
/// mirrors not the user's are NVIDIA's own other hosts for a driver (drivers tables).
fn user_named_first(spec: &DownloadSpec) -> bool {
    spec.mirrors.first().is_some_and(|m| {
        super::unreachable::host_of(m).is_none_or(|h| {
            let h = h.to_ascii_lowercase();
            !(h == "nvidia.com"
                || h.ends_with(".nvidia.com")
                || h == "nvidia.cn"
                || h.ends_with(".nvidia.cn"))
        })
    })
}

/// The hosts a driver download tried, in order, each once.
fn driver_hosts(spec: &DownloadSpec) -> String {
    let mut hosts: Vec<String> = Vec::new();
    for u in spec.mirrors.iter().chain(Some(&spec.url)) {
        if let Some(h) = super::unreachable::host_of(u).filter(|h| !hosts.contains(h)) {
            hosts.push(h);
        }
    }
    hosts.join(", ")
}

/// The download engine's events as step events: progress, and a log line per source
/// (its words from [`download::Event::message`]; a source's raw error a parameter).
pub(super) fn download_reporter<'a>(
    ctx: &'a Ctx<'a>,
) -> impl Fn(download::Event) + Send + Sync + 'a {
    move |e: download::Event| match e {
        download::Event::Progress(p) => (ctx.emit)(StepEvent::Progress {
            done: p.done,
            total: p.total,
            bytes_per_sec: p.bytes_per_sec,
            eta_secs: p.eta_secs,
            source: p.source,
        }),
        e => {
            if let Some(line) = e.message() {
                (ctx.emit)(StepEvent::Log { line })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mirrors: &[&str]) -> DownloadSpec {
        DownloadSpec {
            what: super::super::Artifact::DriverInstaller,
            url: "https://us.download.nvidia.com/Windows/591.86/591.86-desktop.exe".into(),
            mirrors: mirrors.iter().map(|m| m.to_string()).collect(),
            sha256: None,
            md5: None,
            size: None,
            dest: "x.exe".into(),
            bundle_dirs: Vec::new(),
            cache_dir: None,
            connections: 1,
        }
    }

    /// The user's `--mirror` is tried first whatever the speed test says; NVIDIA's other
    /// hosts (the drivers table's) are measured like the canonical URL.
    #[test]
    fn only_a_mirror_the_user_named_is_pinned_first() {
        assert!(user_named_first(&spec(&["http://lan.example/nvidia"])));
        assert!(!user_named_first(&spec(&["https://cn.download.nvidia.cn"])));
        assert!(!user_named_first(&spec(&[
            "https://international.download.nvidia.com"
        ])));
        assert!(!user_named_first(&spec(&[])));
    }
}
