//! The run log: one file per run of a plan, named in every error, written through
//! `tracing`. The executor's own lines keep their format (`[1796314960.716] step 1
//! download_toolkit: started`); warnings that other crates send through the `log` facade
//! (eframe, egui, reqwest, hyper) are captured into every open run log as
//! `[1796314960.716] WARN reqwest::connect: …`, so a failed run's log shows them too.
//!
//! Our crates' `tracing` events (detect, download, refresh, plan, repair: info and debug,
//! with their fields as `key=value`) go into every open run log too: what to read when a
//! user reports a problem. The CLI also shows them on standard error (`-v`, `-vv`,
//! `RUST_LOG`) through a layer it hands to [`install_with`].
//!
//! A front end calls [`install`] once at start-up. Without it (a library user, a test)
//! the executor's own lines still reach their file; only other crates' records do not.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Subscriber};
use tracing_log::NormalizeEvent;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// The target of the executor's lines; the `run` field says which file they belong to.
const RUN_TARGET: &str = "cuda_setup::run";

/// The open run logs, by id. Static so the one layer serves every run in the process.
static OPEN: Mutex<Vec<(u64, std::fs::File)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Our subscriber, built once; `true` beside it once it is the process's global default.
static DISPATCH: OnceLock<(tracing::Dispatch, bool)> = OnceLock::new();

/// Makes the run-log subscriber the process's global default and routes the `log`
/// facade into it: our events at info and above, other crates' at warn and above.
/// Idempotent; returns false when another global subscriber or logger was there first
/// (then other crates' records are not captured, and our lines still are).
pub fn install() -> bool {
    install_with(None, LevelFilter::WARN)
}

/// A layer a front end adds beside the run logs (the CLI's standard error).
pub type Extra = Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>;

/// [`install`] with `extra` beside the run-log layer, and other crates' `log` records up
/// to `log_level` (what `extra`'s filter may want; the run logs still take only warnings).
/// The first call decides: later ones change nothing.
pub fn install_with(extra: Option<Extra>, log_level: LevelFilter) -> bool {
    dispatch_with(extra, log_level);
    DISPATCH.get().is_some_and(|(_, global)| *global)
}

fn dispatch() -> &'static tracing::Dispatch {
    dispatch_with(None, LevelFilter::WARN)
}

fn dispatch_with(extra: Option<Extra>, log_level: LevelFilter) -> &'static tracing::Dispatch {
    &DISPATCH
        .get_or_init(|| {
            let d =
                tracing::Dispatch::new(tracing_subscriber::registry().with(extra).with(layer()));
            let global = tracing::dispatcher::set_global_default(d.clone()).is_ok()
                && tracing_log::LogTracer::init_with_filter(log_filter(
                    log_level.max(LevelFilter::WARN),
                ))
                .is_ok();
            (d, global)
        })
        .0
}

/// The `log` facade's spelling of a level filter.
fn log_filter(level: LevelFilter) -> tracing_log::log::LevelFilter {
    use tracing_log::log::LevelFilter as L;
    match level.into_level() {
        None => L::Off,
        Some(Level::ERROR) => L::Error,
        Some(Level::WARN) => L::Warn,
        Some(Level::INFO) => L::Info,
        Some(Level::DEBUG) => L::Debug,
        Some(_) => L::Trace,
    }
}

/// The layer that writes the run logs, filtered (debug for ours, warn for others'), for a
/// process that builds its own subscriber instead of calling [`install`].
pub fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    // A target prefix: `cuda_setup` is every crate of ours (`cuda_setup_core`,
    // `cuda_setup_fetch`, …) and the front ends.
    let filter = Targets::new()
        .with_default(Level::WARN)
        .with_target("cuda_setup", Level::DEBUG);
    RunLogLayer.with_filter(filter)
}

struct RunLogLayer;

impl<S: Subscriber> Layer<S> for RunLogLayer {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let now = now();
        let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
        let meta = event.normalized_metadata();
        let meta = meta.as_ref().unwrap_or_else(|| event.metadata());
        if meta.target() == RUN_TARGET {
            if let Some((_, f)) = open.iter_mut().find(|(id, _)| Some(*id) == fields.run) {
                let _ = writeln!(f, "[{now:.3}] {}", fields.message);
            }
        } else {
            let (level, target) = (meta.level(), meta.target());
            for (_, f) in open.iter_mut() {
                let _ = writeln!(
                    f,
                    "[{now:.3}] {level} {target}: {}{}",
                    fields.message, fields.rest
                );
            }
        }
    }
}

/// An event's message, and its other fields as ` key=value` (the `log` facade's own
/// `log.*` fields left out: the line already names the target).
#[derive(Default)]
struct Fields {
    run: Option<u64>,
    message: String,
    rest: String,
}

impl Fields {
    fn other(&mut self, field: &Field, value: std::fmt::Arguments) {
        if !field.name().starts_with("log.") {
            let _ = std::fmt::Write::write_fmt(
                &mut self.rest,
                format_args!(" {}={value}", field.name()),
            );
        }
    }
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "run" => self.run = Some(value),
            _ => self.other(field, format_args!("{value}")),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_string(),
            _ => self.other(field, format_args!("{value}")),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            _ => self.other(field, format_args!("{value:?}")),
        }
    }
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// One run's log file, `install-<secs>-<pid>.log` in `dir`, open until dropped.
pub struct RunLog {
    id: u64,
}

impl RunLog {
    /// Creates the file; its path is None when it could not be created (the run goes on
    /// without a log rather than not at all).
    pub fn open(dir: &Path) -> (RunLog, Option<PathBuf>) {
        RunLog::open_in(crate::place::Dir::create(dir))
    }

    /// [`RunLog::open`] in a folder held as a handle (`place::Dir`): the file is created
    /// new in it, never through a link planted at its name or on the way.
    pub fn open_in(dir: std::io::Result<crate::place::Dir>) -> (RunLog, Option<PathBuf>) {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let pid = std::process::id();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        // Two runs in one second of one process (the wizard's cuDNN download, then its
        // install) each get their own file: the second is `install-<secs>.2-<pid>.log`.
        let file = dir.ok().and_then(|d| {
            (1..=8)
                .find_map(|n| {
                    let name = match n {
                        1 => format!("install-{secs}-{pid}.log"),
                        n => format!("install-{secs}.{n}-{pid}.log"),
                    };
                    // A regular file there is an earlier run's log: kept, the next name is
                    // tried. Anything else there is set aside by `create_new`.
                    if d.symlink_metadata(&name).is_ok_and(|m| m.is_file()) {
                        return None;
                    }
                    Some(d.create_new(&name).ok().map(|f| (d.display(&name), f)))
                })
                .flatten()
        });
        let path = file.map(|(path, f)| {
            OPEN.lock().unwrap_or_else(|p| p.into_inner()).push((id, f));
            path
        });
        (RunLog { id }, path)
    }

    /// Appends `[<unix seconds>.<ms>] text`.
    pub fn line(&self, text: &str) {
        let emit = || tracing::info!(target: RUN_TARGET, run = self.id, "{text}");
        match DISPATCH.get() {
            Some((_, true)) => emit(),
            // Not (or not yet) the global subscriber: ours, for this line only.
            _ => tracing::dispatcher::with_default(dispatch(), emit),
        }
    }
}

impl Drop for RunLog {
    fn drop(&mut self) {
        OPEN.lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn two_runs_in_one_second_each_get_their_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let (a, pa) = RunLog::open(dir.path());
        let (b, pb) = RunLog::open(dir.path());
        a.line("first run");
        b.line("second run");
        let (pa, pb) = (pa.unwrap(), pb.unwrap());
        assert_ne!(pa, pb);
        assert!(lines(&pa).iter().any(|l| l.ends_with("first run")));
        assert!(!lines(&pa).iter().any(|l| l.ends_with("second run")));
        assert!(lines(&pb).iter().any(|l| l.ends_with("second run")));
    }

    #[test]
    fn our_lines_keep_their_format() {
        let dir = tempfile::tempdir().unwrap();
        let (log, path) = RunLog::open(dir.path());
        log.line("step 1 download_toolkit: started");
        let path = path.unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("install-") && name.ends_with(&format!("-{}.log", std::process::id()))
        );
        let got = lines(&path);
        let line = got
            .iter()
            .find(|l| l.ends_with("] step 1 download_toolkit: started"))
            .unwrap_or_else(|| panic!("{got:?}"));
        // `[1796314960.716] …`: seconds, a dot, exactly three digits.
        let stamp = line.strip_prefix('[').unwrap().split(']').next().unwrap();
        let (secs, ms) = stamp.split_once('.').unwrap();
        assert!(secs.parse::<u64>().unwrap() > 1_700_000_000, "{line}");
        assert!(ms.len() == 3 && ms.parse::<u32>().is_ok(), "{line}");
    }

    #[test]
    fn each_run_writes_only_its_own_lines() {
        let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, a_path) = RunLog::open(a_dir.path());
        let (b, b_path) = RunLog::open(b_dir.path());
        a.line("only in a");
        b.line("only in b");
        let (a_text, b_text) = (lines(&a_path.unwrap()), lines(&b_path.unwrap()));
        assert!(
            a_text.iter().any(|l| l.ends_with("] only in a")),
            "{a_text:?}"
        );
        assert!(
            !a_text.iter().any(|l| l.contains("only in b")),
            "{a_text:?}"
        );
        assert!(
            !b_text.iter().any(|l| l.contains("only in a")),
            "{b_text:?}"
        );
    }

    #[test]
    fn our_debug_events_land_in_the_run_log_with_their_fields() {
        let dir = tempfile::tempdir().unwrap();
        let (log, path) = RunLog::open(dir.path());
        // Through our subscriber whether or not another test made it global yet.
        tracing::dispatcher::with_default(dispatch(), || {
            tracing::debug!(
                target: "cuda_setup_fetch::download",
                url = "https://example.com/f",
                bytes = 42u64,
                "download: done"
            );
            tracing::trace!(target: "cuda_setup_core::detect", "too fine to keep");
        });
        drop(log);
        let got = lines(&path.unwrap());
        assert!(
            got.iter().any(|l| l.ends_with(
                "] DEBUG cuda_setup_fetch::download: download: done url=https://example.com/f bytes=42"
            )),
            "{got:?}"
        );
        assert!(!got.iter().any(|l| l.contains("too fine")), "{got:?}");
    }

    #[test]
    fn other_crates_warnings_land_in_the_run_log_and_their_chatter_does_not() {
        assert!(
            install(),
            "nothing else installs a global subscriber in these tests"
        );
        assert!(install(), "idempotent");
        let dir = tempfile::tempdir().unwrap();
        let (log, path) = RunLog::open(dir.path());
        tracing_log::log::warn!(target: "reqwest::connect", "proxy refused the tunnel");
        tracing_log::log::info!(target: "hyper_util::client", "connecting to 127.0.0.1");
        tracing::warn!(target: "eframe::native", "no vsync");
        log.line("after");
        let path = path.unwrap();
        let got = lines(&path);
        assert!(
            got.iter()
                .any(|l| l.ends_with("] WARN reqwest::connect: proxy refused the tunnel")),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|l| l.ends_with("] WARN eframe::native: no vsync")),
            "{got:?}"
        );
        assert!(!got.iter().any(|l| l.contains("connecting to")), "{got:?}");
        // A closed run log takes nothing more.
        drop(log);
        tracing_log::log::warn!(target: "reqwest::connect", "after close");
        assert!(
            !std::fs::read_to_string(&path)
                .unwrap()
                .contains("after close")
        );
    }
}
