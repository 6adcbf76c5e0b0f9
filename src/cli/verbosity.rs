//! `-v`/`-vv` and `RUST_LOG`: what cuda-setup does, as `tracing` events on standard
//! error, beside the run log (which takes our events whatever is asked here).

use cuda_setup_core::i18n::{Lang, tf};
use cuda_setup_core::log::Extra;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;

/// Installs the run log with, when asked, a standard-error layer. Call once, after the
/// arguments are parsed.
pub fn install(verbose: u8, lang: Lang) {
    let rust_log = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let filter = match filter(verbose, rust_log.as_deref()) {
        Ok(f) => f,
        Err(error) => {
            let value = rust_log.as_deref().unwrap_or("");
            eprintln!(
                "warning: {}\ndetails: {error}",
                tf(lang, "cli_warn_rust_log", &[("value", &value)])
            );
            filter(verbose, None).unwrap_or_default()
        }
    };
    let level = filter.as_ref().map_or(LevelFilter::OFF, |f| {
        Layer::<tracing_subscriber::Registry>::max_level_hint(f).unwrap_or(LevelFilter::OFF)
    });
    let extra: Option<Extra> = filter.map(|f| {
        Box::new(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .without_time()
                .with_filter(f),
        ) as Extra
    });
    cuda_setup_core::log::install_with(extra, level);
}

/// What goes to standard error: `RUST_LOG` when set (`debug`, `cuda_setup_fetch=debug`,
/// `info,reqwest=debug`: targets and levels), else ours at info (`-v`) or debug (`-vv`),
/// else nothing. An unreadable `RUST_LOG` is the error.
pub fn filter(verbose: u8, rust_log: Option<&str>) -> Result<Option<Targets>, String> {
    if let Some(spec) = rust_log {
        return spec.parse::<Targets>().map(Some).map_err(|e| e.to_string());
    }
    let level = match verbose {
        0 => return Ok(None),
        1 => LevelFilter::INFO,
        _ => LevelFilter::DEBUG,
    };
    // A prefix: every crate of ours (`cuda_setup_core`, `cuda_setup_fetch`, …).
    Ok(Some(Targets::new().with_target("cuda_setup", level)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;
    use tracing_subscriber::filter::Targets;

    fn would(f: &Option<Targets>, target: &str, level: Level) -> bool {
        f.as_ref().is_some_and(|f| f.would_enable(target, &level))
    }

    #[test]
    fn quiet_by_default_and_louder_with_each_v() {
        assert!(filter(0, None).unwrap().is_none());
        let v = filter(1, None).unwrap();
        assert!(would(&v, "cuda_setup_core::detect", Level::INFO));
        assert!(!would(&v, "cuda_setup_core::detect", Level::DEBUG));
        let vv = filter(2, None).unwrap();
        assert!(would(&vv, "cuda_setup_fetch::download", Level::DEBUG));
        assert!(!would(&vv, "reqwest::connect", Level::DEBUG));
    }

    #[test]
    fn rust_log_decides_when_set() {
        let f = filter(0, Some("cuda_setup_fetch=debug,warn")).unwrap();
        assert!(would(&f, "cuda_setup_fetch::refresh", Level::DEBUG));
        assert!(!would(&f, "cuda_setup_core::detect", Level::INFO));
        assert!(would(&f, "reqwest", Level::WARN));
        assert!(filter(2, Some("=nonsense=")).is_err());
    }
}
