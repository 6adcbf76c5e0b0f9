//! `cuda-setup download`: the download engine on its own.

use std::path::PathBuf;
use std::time::Duration;

use super::progress::{Progress, Update};
use super::{CliError, exit};
use cuda_setup_core::download::{self, Cancel, Event, Expected, Options, Request};
use cuda_setup_core::i18n::{Lang, t, tf};
use cuda_setup_core::platform::{self, Host};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file's URL (http:// only for your own servers, with a warning)
    #[arg(long)]
    pub url: String,
    /// Expected SHA-256 (hex)
    #[arg(long, value_name = "HEX", required_unless_present = "md5")]
    pub sha256: Option<String>,
    /// Expected MD5 (hex), as in NVIDIA's md5sum.txt
    #[arg(long, value_name = "HEX")]
    pub md5: Option<String>,
    /// Expected size in bytes
    #[arg(long)]
    pub size: Option<u64>,
    /// Where to put the verified file
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Parallel connections when the server allows ranges (1-16)
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub connections: u16,
    /// A mirror base URL (repeatable): the first is tried first, the others and the
    /// original in the order a short speed test finds
    #[arg(long, value_name = "URL", value_parser = cuda_setup_core::url::http_url)]
    pub mirror: Vec<String>,
    /// Offline bundle folder checked before any network (repeatable)
    #[arg(long, value_name = "DIR")]
    pub bundle: Vec<PathBuf>,
    /// Download cache (default: the user's cache folder); verified files are kept here by hash
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,
    /// Do not use the download cache
    #[arg(long)]
    pub no_cache: bool,
    /// Seconds to wait for a connection to a source [default: 15]
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub connect_timeout: Option<Duration>,
    /// Seconds without a byte (of the answer's headers or of the body) before a
    /// connection counts as stalled and is retried, then the next source tried [default: 30]
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub stall_timeout: Option<Duration>,
    /// A source averaging fewer bytes per second than this over --min-speed-window is
    /// left for the next one (0: no floor) [default: 1024]
    #[arg(long, value_name = "BYTES_PER_SEC")]
    pub min_speed: Option<u64>,
    /// The window --min-speed is averaged over, in seconds [default: 60]
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub min_speed_window: Option<Duration>,
    /// Print the result as one JSON object
    #[arg(long)]
    pub json: bool,
}

/// A number of seconds (fractions allowed), more than 0 and at most a day.
fn seconds(v: &str) -> Result<Duration, String> {
    match v.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "{v} is not a number of seconds between 0 and 86400"
        )),
    }
}

impl Args {
    /// The engine's options with the flags given applied (the stall timeout bounds the
    /// wait for an answer's headers too).
    pub fn options(&self) -> Options {
        let d = Options::default();
        Options {
            connect_timeout: self.connect_timeout.unwrap_or(d.connect_timeout),
            stall_timeout: self.stall_timeout.unwrap_or(d.stall_timeout),
            first_byte_timeout: self.stall_timeout.unwrap_or(d.first_byte_timeout),
            min_speed: self.min_speed.unwrap_or(d.min_speed),
            min_speed_window: self.min_speed_window.unwrap_or(d.min_speed_window),
            // The first mirror named is the user's choice: tried first, whatever the probe
            // says of the others.
            pinned_first: true,
            ..d
        }
    }
}

fn hex_ok(h: &str, len: usize) -> bool {
    h.len() == len && h.bytes().all(|b| b.is_ascii_hexdigit())
}

pub fn run(args: &Args, lang: cuda_setup_core::i18n::Lang) -> Result<i32, CliError> {
    let usage = |message: String, hint: &str| CliError::Usage {
        message,
        hint: hint.into(),
    };
    if let Some(h) = &args.sha256
        && !hex_ok(h, 64)
    {
        return Err(usage(
            tf(lang, "cli_err_sha256", &[("value", h)]),
            &t(lang, "cli_hint_sha256"),
        ));
    }
    if let Some(h) = &args.md5
        && !hex_ok(h, 32)
    {
        return Err(usage(
            tf(lang, "cli_err_md5", &[("value", h)]),
            &t(lang, "cli_hint_md5"),
        ));
    }
    for u in std::iter::once(&args.url).chain(&args.mirror) {
        if !(u.starts_with("https://") || u.starts_with("http://")) {
            return Err(usage(
                tf(lang, "cli_err_not_url", &[("url", u)]),
                &t(lang, "cli_hint_full_url"),
            ));
        }
    }
    let host = Host::real();
    let req = Request {
        url: args.url.clone(),
        mirrors: args.mirror.clone(),
        expected: Expected {
            sha256: args.sha256.as_ref().map(|h| h.to_ascii_lowercase()),
            md5: args.md5.as_ref().map(|h| h.to_ascii_lowercase()),
            size: args.size,
        },
        dest: args.out.clone(),
        connections: args.connections as usize,
        cache_dir: if args.no_cache {
            None
        } else {
            args.cache.clone().or_else(|| platform::cache_dir(&host))
        },
        bundle_dirs: args.bundle.clone(),
        // Everything here came from the user: http is theirs to choose.
        allow_http: true,
    };
    let reporter = StatusLine::new(args.json, lang);
    match download::download(&req, &args.options(), &reporter, &Cancel::default()) {
        Ok(o) => {
            reporter.finish();
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&o).expect("serialisable")
                );
            } else {
                println!(
                    "{} ({} bytes, sha256 {})",
                    o.path.display(),
                    o.size,
                    o.sha256
                );
            }
            Ok(exit::OK)
        }
        Err(e) => {
            reporter.finish();
            Err(CliError::Download(e))
        }
    }
}

/// A download's progress on stderr (a bar on a terminal, a line every 5 s otherwise)
/// and what the engine says along the way.
pub struct StatusLine {
    progress: Progress,
    lang: Lang,
}

impl StatusLine {
    /// No bar under `--json`.
    pub fn new(json: bool, lang: Lang) -> Self {
        StatusLine {
            progress: Progress::new(json, "  ", Duration::from_secs(5), lang),
            lang,
        }
    }

    pub fn finish(&self) {
        self.progress.finish();
    }
}

impl download::Reporter for StatusLine {
    fn event(&self, e: Event) {
        let say = |text: String| self.progress.line(&text);
        match e {
            Event::Progress(p) => {
                let conns = p.per_connection.iter().filter(|b| **b > 0).count();
                let key = if conns == 1 {
                    "cli_dl_connection"
                } else {
                    "cli_dl_connections"
                };
                let mut note = tf(self.lang, key, &[("n", &conns)]);
                if let Some(host) = &p.source {
                    note = format!(
                        "{note}  {}",
                        tf(self.lang, "cli_dl_from", &[("host", host)])
                    );
                }
                self.progress.update(&Update {
                    done: p.done,
                    total: p.total,
                    bytes_per_sec: p.bytes_per_sec,
                    eta_secs: p.eta_secs,
                    note: &note,
                });
            }
            // A source's own error is in the final `details:` line, if every one fails.
            e => {
                if let Some(m) = e.message() {
                    say(cuda_setup_core::i18n::render(&m, self.lang))
                }
            }
        }
    }
}
