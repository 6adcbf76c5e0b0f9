//! The torch wheel (2–3 GB for a CUDA build) through our download engine instead of pip's:
//! resumable after a dropped link, over several connections, verified against the index's
//! SHA-256 — the slowest step for users far from download.pytorch.org. pip then installs
//! the local file and fetches the small rest as before.
//!
//! Which wheel: the one whose tags the interpreter's own pip accepts first (`pip debug
//! --verbose` lists them in preference order), so the pick is exactly pip's: Python
//! version, free-threading, Windows or the manylinux level glibc allows.

use std::path::Path;
use std::time::Duration;

use super::torch_sources::{self, Trust};
use super::unreachable::{Source, Unreachable};
use super::{Ctx, StepError, StepEvent};
use crate::download::{self, DownloadError, Expected};
use crate::wheels::index::{self, DistFile};

/// One short question to the interpreter (`pip debug` starts pip once): well under this.
const ASK_TIMEOUT: Duration = Duration::from_secs(30);

/// What pip's arguments ask for: `torch==V` from `--index-url U`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchArgs {
    /// Position of `torch==V` in the arguments.
    pub at: usize,
    pub version: String,
    pub index: String,
}

impl TorchArgs {
    pub fn find(args: &[String]) -> Option<TorchArgs> {
        let at = args.iter().position(|a| a.starts_with("torch=="))?;
        // `torch==2.13.0+cu130`: the local label is the index's variant (`is_wanted`).
        let version = args[at]
            .strip_prefix("torch==")?
            .split('+')
            .next()?
            .to_string();
        let index = args
            .iter()
            .position(|a| a == "--index-url")
            .and_then(|i| args.get(i + 1))?
            .clone();
        Some(TorchArgs { at, version, index })
    }
}

/// The tags `pip debug --verbose` prints under "Compatible tags", in pip's order.
pub fn parse_tags(pip_debug: &str) -> Vec<String> {
    pip_debug
        .lines()
        .skip_while(|l| !l.starts_with("Compatible tags"))
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .map(|l| l.trim().to_string())
        .filter(|t| t.split('-').count() == 3)
        .collect()
}

/// The tags a wheel name carries (`cp311-cp311-manylinux_2_28_x86_64.manylinux2014_x86_64`
/// expands to one tag per platform).
fn wheel_tags(filename: &str) -> Vec<String> {
    let Some(stem) = filename.strip_suffix(".whl") else {
        return Vec::new();
    };
    let parts: Vec<&str> = stem.split('-').collect();
    if !(5..=6).contains(&parts.len()) {
        return Vec::new();
    }
    let n = parts.len();
    let mut out = Vec::new();
    for py in parts[n - 3].split('.') {
        for abi in parts[n - 2].split('.') {
            for plat in parts[n - 1].split('.') {
                out.push(format!("{py}-{abi}-{plat}"));
            }
        }
    }
    out
}

/// The torch `version` wheel the interpreter prefers among `files` (a local label such
/// as `+cu126` is allowed; yanked files and files without a SHA-256 are not).
pub fn pick<'a>(files: &'a [DistFile], version: &str, tags: &[String]) -> Option<&'a DistFile> {
    let candidates: Vec<(&DistFile, Vec<String>)> = files
        .iter()
        .filter(|f| !f.yanked && f.sha256.is_some())
        .filter(|f| {
            let mut parts = f.filename.splitn(3, '-');
            parts.next().is_some_and(|d| index::normalize(d) == "torch")
                && parts
                    .next()
                    .is_some_and(|v| v.split('+').next() == Some(version))
        })
        .map(|f| (f, wheel_tags(&f.filename)))
        .collect();
    tags.iter().find_map(|t| {
        candidates
            .iter()
            .find(|(_, wt)| wt.contains(t))
            .map(|(f, _)| *f)
    })
}

/// Runs the interpreter with `args` and returns what it printed (nothing on failure).
fn ask(python: &Path, args: &[&str], ctx: &Ctx) -> String {
    let mut cmd = std::process::Command::new(python);
    cmd.args(args);
    let mut out = String::new();
    let _ = crate::platform::run_long(cmd, ASK_TIMEOUT, &|| ctx.cancel.is_cancelled(), &mut |l| {
        out.push_str(&l);
        out.push('\n');
    });
    out
}

/// The torch version installed in the interpreter (`2.13.0+cu126`), if any.
fn installed_torch(python: &Path, ctx: &Ctx) -> Option<String> {
    let out = ask(
        python,
        &[
            "-c",
            "import importlib.metadata as m; print('CUDA_SETUP_TORCH', m.version('torch'))",
        ],
        ctx,
    );
    out.lines()
        .find_map(|l| l.strip_prefix("CUDA_SETUP_TORCH "))
        .map(|v| v.trim().to_string())
}

/// Whether `installed` is torch `version` of the index's variant (`…/whl/cu126` → `+cu126`).
fn is_wanted(installed: &str, want: &TorchArgs) -> bool {
    let variant = want
        .index
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    installed == format!("{}+{variant}", want.version)
}

/// Whose the wheel's host is, for the words when its download failed (#34): PyTorch's
/// own server (download.pytorch.org, or the index `CUDA_SETUP_TORCH_INDEX` puts in its
/// place), else a mirror of it. By the host that failed, not by the index pip is pointed
/// at: in the automatic choice that is always PyTorch's, whoever served the file.
fn wheel_source(host: &str) -> Source {
    let official = crate::refresh::Sources::from_env().torch_index;
    let pytorch = [crate::compat::TORCH_INDEX_BASE, official.as_str()]
        .into_iter()
        .filter_map(super::unreachable::host_of)
        .any(|h| h == host);
    if pytorch {
        Source::TorchOfficial
    } else {
        Source::TorchMirror
    }
}

/// What could not be reached when the wheel's download failed (`url`: its first source).
/// The automatic choice (`mirrors` not empty) read PyTorch's `index` and each mirror, and
/// downloaded from every one listing the file: its failure means none of them served it,
/// so there is no other source to suggest — their hosts are named, and the words are the
/// network's or the proxy's. Else the one source, by its host.
fn wheel_unreachable(
    url: &str,
    index: &str,
    mirrors: &[torch_sources::MirrorRef],
) -> Option<Unreachable> {
    let host = super::unreachable::host_of(url)?;
    if mirrors.is_empty() {
        return Some(Unreachable {
            source: wheel_source(&host),
            host,
        });
    }
    let mut hosts: Vec<String> = Vec::new();
    let bases = std::iter::once(index).chain(mirrors.iter().map(|m| m.base.as_str()));
    for h in bases.filter_map(super::unreachable::host_of) {
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    Some(Unreachable {
        source: Source::TorchAll,
        host: hosts.join(", "),
    })
}

/// What [`prefetch`] fetched: pip's arguments with the local file, and the file's name
/// and SHA-256 (the guard records them, so the build can be put back offline).
#[derive(Debug, Clone)]
pub struct Prefetched {
    pub args: Vec<String>,
    pub file: String,
    pub sha256: String,
    /// The hash came from this mirror's listing, PyTorch's index not answering (#34).
    pub hash_from_mirror: Option<torch_sources::MirrorRef>,
}

/// The wheel to fetch, its other sources, and whose listing gave its hash.
struct Chosen {
    file: DistFile,
    mirrors: Vec<String>,
    trust: Trust,
}

/// Downloads the torch wheel `args` ask for and returns the arguments with the local file
/// in place of `torch==V`. Ok(None): pip fetches it itself, as before (no pinned torch, a
/// pip that lists no tags, an index that cannot be read or gives no hash) — said in the
/// log. A download that fails is an error: pip would fail the same way, and ours resumes.
/// `mirrors` (the automatic choice): mirrors of PyTorch's index read beside it, each one
/// listing the same file (and hash) a source of the download.
pub fn prefetch(
    python: &Path,
    args: &[String],
    mirrors: &[torch_sources::MirrorRef],
    ctx: &Ctx,
) -> Result<Option<Prefetched>, StepError> {
    let Some(want) = TorchArgs::find(args) else {
        return Ok(None);
    };
    let log = |line: crate::message::Message| (ctx.emit)(StepEvent::Log { line });
    let forced = args.iter().any(|a| a == "--force-reinstall");
    if let Some(v) = installed_torch(python, ctx).filter(|v| !forced && is_wanted(v, &want)) {
        log(crate::msg!("step_torch_present", version = v));
        return Ok(None);
    }
    let tags = parse_tags(&ask(python, &["-m", "pip", "debug", "--verbose"], ctx));
    if tags.is_empty() {
        log(crate::msg!("step_torch_pip_fetches"));
        return Ok(None);
    }
    let chosen = if mirrors.is_empty() {
        one_index(&want, &tags, ctx)?
    } else {
        measured(&want, &tags, mirrors, ctx)
    };
    let Some(Chosen {
        file,
        mirrors: sources,
        trust,
    }) = chosen
    else {
        return Ok(None);
    };
    let name = crate::safe_path::file_name(&file.filename).map_err(|why| {
        StepError::Wheels(crate::wheels::WheelError::UnsafeName {
            origin: index::project_url(&want.index, "torch"),
            why,
        })
    })?;
    let dest = ctx.target.downloads_dir().join(name);
    let allow_http = std::iter::once(&file.url)
        .chain(&sources)
        .any(|u| !u.starts_with("https://"));
    let req = download::Request {
        url: file.url.clone(),
        mirrors: sources,
        expected: Expected {
            sha256: file.sha256.clone(),
            md5: None,
            size: file.size,
        },
        dest: dest.clone(),
        connections: 8,
        cache_dir: crate::platform::cache_dir(&ctx.target.host)
            .filter(|_| ctx.target.root.is_none()),
        bundle_dirs: Vec::new(),
        allow_http,
    };
    let reporter = super::download_reporter(ctx);
    // Speeds per source are remembered beside the run's other state: the next wheel starts
    // with the fastest mirror.
    let opts = download::Options {
        memory: Some(ctx.target.state_dir().join("sources.json")),
        ..download::Options::default()
    };
    download::download(&req, &opts, &reporter, ctx.cancel).map_err(|e| match e {
        DownloadError::Cancelled => StepError::Cancelled,
        // Named by its host, so the words say which source to change (#34).
        e => match wheel_unreachable(&file.url, &want.index, mirrors) {
            Some(from) => StepError::TorchWheel {
                from,
                error: Box::new(e),
            },
            None => StepError::Download(e),
        },
    })?;
    log(crate::msg!(
        "step_torch_wheel_verified",
        file = dest.display()
    ));
    let mut out = args.to_vec();
    // pip takes a wheel by its path.
    out[want.at] = dest.display().to_string();
    let hash_from_mirror = match trust {
        Trust::Official => None,
        Trust::Mirror { mirror, .. } => Some(mirror),
    };
    // PyTorch's index did not answer: pip would still ask it for torchvision and torch's
    // other packages, and fail. The mirror that answered serves them instead.
    if let Some(m) = &hash_from_mirror {
        let index = mirror_index(m, &want.index);
        if let Some(i) = out.iter().position(|a| a == "--index-url") {
            out[i + 1] = index.clone();
            log(crate::msg!("step_torch_pip_index_mirror", index = index));
        }
    }
    Ok(Some(Prefetched {
        args: out,
        file: name.to_string(),
        sha256: file.sha256.clone().unwrap_or_default(),
        hash_from_mirror,
    }))
}

/// The mirror's index for the variant PyTorch's `index` is of (`…/whl/cu126` → the
/// mirror's `<base>/cu126`): the same layout, as [`torch_sources::read_all`] reads it.
fn mirror_index(mirror: &torch_sources::MirrorRef, index: &str) -> String {
    format!(
        "{}/{}",
        mirror.base.trim_end_matches('/'),
        torch_sources::variant_of(index)
    )
}

/// The explicit choice: the index pip's arguments name, alone (None: pip fetches it).
fn one_index(want: &TorchArgs, tags: &[String], ctx: &Ctx) -> Result<Option<Chosen>, StepError> {
    let files = match index::fetch_project(&want.index, "torch", &download::Options::default()) {
        Ok(f) => f,
        // A hostile listing is no index to hand pip either.
        Err(e @ crate::wheels::WheelError::UnsafeName { .. }) => {
            return Err(StepError::Wheels(e));
        }
        Err(e) => {
            (ctx.emit)(StepEvent::Log {
                line: crate::msg!("step_torch_pip_fetches_index")
                    .with("error", crate::error::chain(&e)),
            });
            return Ok(None);
        }
    };
    let Some(file) = pick(&files, &want.version, tags) else {
        no_wheel(want, tags, ctx);
        return Ok(None);
    };
    Ok(Some(Chosen {
        file: file.clone(),
        mirrors: Vec::new(),
        trust: Trust::Official,
    }))
}

fn no_wheel(want: &TorchArgs, tags: &[String], ctx: &Ctx) {
    (ctx.emit)(StepEvent::Log {
        line: crate::msg!("step_torch_pip_fetches_no_hash", version = &want.version)
            .with("index", index::project_url(&want.index, "torch"))
            .with("tag", &tags[0]),
    });
}

/// The automatic choice: PyTorch's index (the arguments') and its mirrors read at once;
/// the wheel from every one listing the same file with PyTorch's hash — or, when PyTorch's
/// index did not answer, a mirror's, said in the log. A listing naming a file that
/// cannot be ours counts as no answer (it is never a source).
fn measured(
    want: &TorchArgs,
    tags: &[String],
    mirrors: &[torch_sources::MirrorRef],
    ctx: &Ctx,
) -> Option<Chosen> {
    let log = |line: crate::message::Message| (ctx.emit)(StepEvent::Log { line });
    let (official, others) = torch_sources::read_all(
        &want.index,
        mirrors,
        torch_sources::LISTING_BUDGET,
        torch_sources::MIRROR_GRACE,
    );
    let others: Vec<(torch_sources::MirrorRef, torch_sources::Listing)> =
        mirrors.iter().cloned().zip(others).collect();
    let pick_one = |files: &[DistFile]| pick(files, &want.version, tags).cloned();
    let Some(d) = torch_sources::decide(&official, &others, &pick_one) else {
        match &official.files {
            Err(e) => log(crate::msg!("step_torch_pip_fetches_index").with("error", e)),
            Ok(_) => no_wheel(want, tags, ctx),
        }
        return None;
    };
    for (_, page) in &d.disagree {
        log(crate::msg!(
            "step_torch_mirror_other_hash",
            index = page,
            file = &d.file.filename
        ));
    }
    if let Trust::Mirror { mirror, error } = &d.trust {
        log(torch_sources::trust_message(mirror).with("error", error));
    }
    let mut sources = vec![d.file.url.clone()];
    sources.extend(d.mirrors.iter().cloned());
    log(crate::msg!(
        "step_torch_sources",
        sources = sources.join(", ")
    ));
    Some(Chosen {
        file: d.file,
        mirrors: d.mirrors,
        trust: d.trust,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, sha: bool) -> DistFile {
        DistFile {
            filename: name.into(),
            url: format!("https://download.pytorch.org/whl/cu126/{name}"),
            sha256: sha.then(|| "ab".repeat(32)),
            size: None,
            requires_python: None,
            metadata: None,
            yanked: false,
        }
    }

    #[test]
    fn the_first_tag_pip_accepts_wins() {
        let files = vec![
            file("torch-2.13.0+cu126-cp311-cp311-win_amd64.whl", true),
            file(
                "torch-2.13.0+cu126-cp311-cp311-manylinux_2_28_x86_64.whl",
                true,
            ),
            file(
                "torch-2.13.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
                true,
            ),
            file(
                "torch-2.12.0+cu126-cp311-cp311-manylinux_2_28_x86_64.whl",
                true,
            ),
        ];
        let debug = "pip version: 25\nCompatible tags: 3\n  cp311-cp311-manylinux_2_36_x86_64\n  cp311-cp311-manylinux_2_28_x86_64\n  py3-none-any\nother: x\n";
        let tags = parse_tags(debug);
        assert_eq!(tags.len(), 3);
        let f = pick(&files, "2.13.0", &tags).unwrap();
        assert_eq!(
            f.filename,
            "torch-2.13.0+cu126-cp311-cp311-manylinux_2_28_x86_64.whl"
        );
        let win = vec!["cp311-cp311-win_amd64".to_string()];
        assert!(
            pick(&files, "2.13.0", &win)
                .unwrap()
                .filename
                .ends_with("win_amd64.whl")
        );
        // A Python with no wheel, or a wheel without a hash, is left to pip.
        assert!(pick(&files, "2.13.0", &["cp39-cp39-win_amd64".to_string()]).is_none());
        let unhashed = vec![file("torch-2.13.0+cu126-cp311-cp311-win_amd64.whl", false)];
        assert!(pick(&unhashed, "2.13.0", &win).is_none());
    }

    #[test]
    fn an_installed_torch_of_the_same_variant_is_not_fetched_again() {
        let want = TorchArgs {
            at: 0,
            version: "2.13.0".into(),
            index: "https://download.pytorch.org/whl/cu126/".into(),
        };
        assert!(is_wanted("2.13.0+cu126", &want));
        assert!(!is_wanted("2.13.0+cu130", &want));
        assert!(!is_wanted("2.13.0", &want), "the CPU build from PyPI");
        assert!(!is_wanted("2.12.1+cu126", &want));
    }

    /// A failed wheel download is named by the host that failed: a mirror is a mirror
    /// even when pip's index is PyTorch's; and when the automatic choice tried PyTorch's
    /// server and every mirror, it is all of them — no mirror to suggest.
    #[test]
    fn a_failed_download_names_the_host_that_failed() {
        let official = "https://download.pytorch.org/whl/cu126";
        let name = "torch-2.13.0+cu126-cp311-cp311-win_amd64.whl";
        let nju = format!("https://mirror.nju.edu.cn/pytorch/whl/cu126/{name}");
        let u =
            wheel_unreachable(&nju, "https://mirror.nju.edu.cn/pytorch/whl/cu126", &[]).unwrap();
        assert_eq!(
            (u.source, u.host.as_str()),
            (Source::TorchMirror, "mirror.nju.edu.cn")
        );
        let u = wheel_unreachable(&format!("{official}/{name}"), official, &[]).unwrap();
        assert_eq!(
            (u.source, u.host.as_str()),
            (Source::TorchOfficial, "download.pytorch.org")
        );
        let mirrors = [
            torch_sources::MirrorRef {
                name: "NJU".into(),
                base: "https://mirror.nju.edu.cn/pytorch/whl".into(),
            },
            torch_sources::MirrorRef {
                name: "SJTU".into(),
                base: "https://mirror.sjtu.edu.cn/pytorch-wheels".into(),
            },
        ];
        let u = wheel_unreachable(&nju, official, &mirrors).unwrap();
        assert_eq!(u.source, Source::TorchAll);
        assert_eq!(
            u.host,
            "download.pytorch.org, mirror.nju.edu.cn, mirror.sjtu.edu.cn"
        );
        let hint = crate::i18n::render(&u.hint(), crate::i18n::Lang::En);
        assert!(
            hint.contains("none of PyTorch's sources") && hint.contains("--proxy"),
            "{hint}"
        );
        assert!(!hint.contains("--torch-index"), "{hint}");
        // pip's index, when the mirror's hash is used: the mirror's for the same variant.
        assert_eq!(
            mirror_index(&mirrors[1], "https://download.pytorch.org/whl/cu126/"),
            "https://mirror.sjtu.edu.cn/pytorch-wheels/cu126"
        );
    }

    #[test]
    fn only_a_pinned_torch_from_an_index_is_fetched() {
        let args = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let a = TorchArgs::find(&args(
            "torch==2.13.0 torchvision --index-url https://download.pytorch.org/whl/cu126",
        ))
        .unwrap();
        assert_eq!(
            (a.at, a.version.as_str(), a.index.as_str()),
            (0, "2.13.0", "https://download.pytorch.org/whl/cu126")
        );
        let pinned = TorchArgs::find(&args(
            "torch==2.13.0+cu130 torchvision --index-url https://download.pytorch.org/whl/cu130",
        ))
        .unwrap();
        assert_eq!(pinned.version, "2.13.0");
        assert!(is_wanted("2.13.0+cu130", &pinned));
        assert!(TorchArgs::find(&args("torch torchvision --index-url https://x/cpu")).is_none());
        assert!(TorchArgs::find(&args("torch==2.13.0")).is_none());
    }
}
