//! Which source a failed pip run or download could not reach (#34), so that the words name
//! the real cause — PyTorch's server, the mirror chosen for it, the PyPI mirror, NVIDIA's
//! driver hosts — and what changes it, instead of "read pip's output".
//!
//! pip's own words (pip 23, 24 and 25 vendor urllib3 1.26, whose retry line names the
//! error and the URL's *path* only; the host is that of the index it belongs to — ours,
//! from pip's `--index-url`/`--extra-index-url`):
//! - `WARNING: Retrying (Retry(total=4, …)) after connection broken by
//!   'NewConnectionError('<…HTTPSConnection object at 0x…>: Failed to establish a new
//!   connection: [Errno 11001] getaddrinfo failed')': /whl/cu118/torch/`
//!   (<https://github.com/vladmandic/sdnext/issues/683>), then `ERROR: Could not find a
//!   version that satisfies the requirement torch==… (from versions: none)` and `ERROR: No
//!   matching distribution found for torch==…` (<https://github.com/pytorch/pytorch/issues/51723>);
//! - `'ConnectTimeoutError(<…>, 'Connection to download.pytorch.org timed out. (connect
//!   timeout=15)')': /whl/cu116/torch/` (<https://github.com/bmaltais/kohya_ss/issues/249>);
//! - `'ProtocolError('Connection aborted.', ConnectionResetError(10054, 'An existing
//!   connection was forcibly closed by the remote host', …))': /whl/cpu/torch/`
//!   (<https://github.com/Slicer/light-the-torch/issues/176>);
//! - a download cut off: `ERROR: Exception:`, a traceback, and
//!   `pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='download.pytorch.org',
//!   port=443): Read timed out.` (<https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/11785>);
//! - SSL: `Could not fetch URL https://pypi.org/simple/pip/: There was a problem confirming
//!   the ssl certificate: HTTPSConnectionPool(host='pypi.org', port=443): Max retries
//!   exceeded …` (pip's index collector).

use serde::Serialize;

use crate::message::Message;
use crate::msg;

/// What could not be reached, by what the user changes to get past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// PyTorch's own server (download.pytorch.org): a mirror of it helps.
    TorchOfficial,
    /// The mirror of PyTorch's index the user chose: PyTorch's own server or another mirror.
    TorchMirror,
    /// PyTorch's own server and its mirrors, all tried (the automatic choice) and none
    /// answered: no other source to suggest; the network or the proxy (`host`: the hosts).
    TorchAll,
    /// The PyPI index (or mirror) pip takes PyTorch's other packages from.
    Pypi,
    /// NVIDIA's hosts for the display driver (all of them were tried).
    NvidiaDriver,
}

/// A source that did not answer, and its host (for the driver, the hosts tried).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreachable {
    pub source: Source,
    pub host: String,
}

impl Unreachable {
    /// What to do, for the command line's `hint:` (names flags). The mirrors suggested for
    /// PyTorch's wheels are compat-tables/pytorch.toml's (the built-in tables: a step
    /// holds no tables).
    pub fn hint(&self) -> Message {
        let host = self.host.as_str();
        match self.source {
            Source::TorchOfficial => {
                let tables = crate::compat::Tables::embedded().ok();
                let mirrors = tables.as_ref().map_or(&[][..], |t| &t.pytorch.mirrors[..]);
                match other_mirrors(mirrors, host).first() {
                    Some(m) => msg!("hint_pip_torch_official", host = host, mirror = &m.base),
                    None => msg!("hint_pip_unreachable", host = host),
                }
            }
            Source::TorchMirror => msg!(
                "hint_pip_torch_mirror",
                host = host,
                official = crate::compat::TORCH_INDEX_BASE
            ),
            Source::TorchAll => msg!("hint_torch_all", hosts = host),
            Source::Pypi => msg!("hint_pip_pypi", host = host),
            Source::NvidiaDriver => msg!("hint_driver_download", hosts = host),
        }
    }
}

/// The mirrors of PyTorch's index (the tables' `[[mirror]]`) that are not on `host`: the
/// ones to suggest when `host` did not answer.
pub fn other_mirrors<'a>(
    mirrors: &'a [crate::compat::TorchMirror],
    host: &str,
) -> Vec<&'a crate::compat::TorchMirror> {
    mirrors
        .iter()
        .filter(|m| host_of(&m.base).is_some_and(|h| !same_host(&h, host)))
        .collect()
}

/// The host of `url` (`https://user:pw@HOST:PORT/path` → `HOST:PORT`), lower case.
pub fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Hosts compared without their ports (pip's `host='…'` names none).
fn same_host(a: &str, b: &str) -> bool {
    let name = |h: &str| {
        h.rsplit_once(':')
            .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
            .map_or(h, |(n, _)| n)
            .to_ascii_lowercase()
    };
    name(a) == name(b)
}

/// Which source `url` (a pip index) is for the user.
fn index_source(url: &str, host: &str) -> Source {
    if crate::recommend::is_pypi_index(url) {
        Source::Pypi
    } else if is_pytorch_host(host) {
        Source::TorchOfficial
    } else {
        Source::TorchMirror
    }
}

fn is_pytorch_host(host: &str) -> bool {
    let h = host.split(':').next().unwrap_or(host);
    h == "pytorch.org" || h.ends_with(".pytorch.org")
}

/// The words in pip's output that mean the network failed it (urllib3's and Python's
/// exception names, pip's own phrases).
const NETWORK: [&str; 16] = [
    "Failed to establish a new connection",
    "NewConnectionError",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "Read timed out",
    "ConnectionResetError",
    "Connection aborted",
    "Connection broken",
    "RemoteDisconnected",
    "IncompleteRead",
    "SSLError",
    "ProxyError",
    "Max retries exceeded",
    "Could not fetch URL",
    "getaddrinfo failed",
    "Temporary failure in name resolution",
];

/// pip giving up: what it says after the network failed it.
const NO_MATCH: &str = "ERROR: No matching distribution found";
const NO_VERSION: &str = "ERROR: Could not find a version that satisfies";
/// pip's last words for an error it did not expect; the network's only when they name it
/// (an `OSError` is as often `[WinError 5] Access is denied`, a file in use).
const OS_ERROR: &str = "ERROR: Could not install packages due to an OSError";
const EXCEPTION: &str = "ERROR: Exception:";

/// Reads pip's output line by line and says which index it could not reach, if that is
/// what ended the run. Holds a few hosts, never the output.
#[derive(Debug, Clone)]
pub struct PipWatch {
    /// pip's indexes: (source, host, path).
    indexes: Vec<(Source, String, String)>,
    /// Hosts the network failed on, first seen first (at most a few).
    failed: Vec<Unreachable>,
    /// pip gave up after (or with) a network error.
    gave_up: bool,
    /// pip listed the versions it found (`(from versions: 1.0, 2.0)`): the index answered,
    /// and "No matching distribution" is about the version, not the network.
    versions_listed: bool,
    /// Inside the traceback after `ERROR: Exception:`: whether its last exception line so
    /// far names the network (None: no traceback). Its final line decides, not the frames
    /// (urllib3's source lines quote `ReadTimeoutError` too).
    traceback_network: Option<bool>,
}

impl PipWatch {
    /// For a `pip install ARGS` run: its indexes come from `--index-url`/`-i` (default
    /// pypi.org) and `--extra-index-url`.
    pub fn new(args: &[String]) -> PipWatch {
        let mut urls: Vec<(bool, String)> = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (primary, value) = match a.as_str() {
                "--index-url" | "-i" => (true, it.next().cloned()),
                "--extra-index-url" => (false, it.next().cloned()),
                _ => match a.split_once('=') {
                    Some(("--index-url", v)) => (true, Some(v.to_string())),
                    Some(("--extra-index-url", v)) => (false, Some(v.to_string())),
                    _ => continue,
                },
            };
            if let Some(v) = value {
                urls.push((primary, v));
            }
        }
        if !urls.iter().any(|(primary, _)| *primary) {
            urls.insert(0, (true, "https://pypi.org/simple".into()));
        }
        let indexes = urls
            .into_iter()
            .filter_map(|(_, u)| {
                let host = host_of(&u)?;
                let path = u
                    .split_once("://")
                    .and_then(|(_, r)| r.find('/').map(|i| r[i..].to_string()))
                    .unwrap_or_default();
                Some((index_source(&u, &host), host, path))
            })
            .collect();
        PipWatch {
            indexes,
            failed: Vec::new(),
            gave_up: false,
            versions_listed: false,
            traceback_network: None,
        }
    }

    /// One line of pip's output (stdout or stderr).
    pub fn line(&mut self, line: &str) {
        let line = line.trim_end();
        let names_host = line.contains("host='");
        let network =
            NETWORK.iter().any(|m| line.contains(m)) || (line.starts_with(OS_ERROR) && names_host);
        if line.starts_with(EXCEPTION) {
            self.traceback_network = Some(false);
        } else if let Some(last) = self.traceback_network.as_mut() {
            // An exception's line, not a frame, its source line or a chain's words.
            let frame = line.starts_with(' ')
                || line.is_empty()
                || line.starts_with("Traceback ")
                || line.starts_with("During handling")
                || line.starts_with("The above exception");
            if !frame {
                *last = network || names_host;
            }
        }
        if line.starts_with(NO_VERSION) {
            if line.contains("(from versions: none)") {
                self.gave_up |= !self.failed.is_empty();
            } else {
                self.versions_listed = true;
            }
        }
        if line.starts_with(NO_MATCH) && !self.versions_listed && !self.failed.is_empty() {
            self.gave_up = true;
        }
        if !network {
            return;
        }
        // A network error that is not a retry, nor a page pip skips (its index collector
        // goes on without it), nor a traceback's frame is pip's last word.
        if !line.contains("Retrying (")
            && !line.ends_with("- skipping")
            && self.traceback_network.is_none()
        {
            self.gave_up = true;
        }
        let Some(found) = self.which(line) else {
            return;
        };
        if self.failed.len() < 8 && !self.failed.iter().any(|u| u == &found) {
            self.failed.push(found);
        }
    }

    /// The source a network error line is about: a host it names, else the index whose
    /// path the retried URL's path starts with.
    fn which(&self, line: &str) -> Option<Unreachable> {
        let named = between(line, "host='", "'")
            .or_else(|| between(line, "Connection to ", " timed out"))
            .or_else(|| {
                ["https://", "http://"]
                    .iter()
                    .find_map(|s| line.find(s).and_then(|i| host_of(&line[i..])))
            });
        if let Some(host) = named {
            let source = self
                .indexes
                .iter()
                .find(|(_, h, _)| same_host(h, &host))
                .map(|(s, _, _)| *s)
                .or_else(|| {
                    if is_pytorch_host(&host) {
                        Some(Source::TorchOfficial)
                    } else if host == "files.pythonhosted.org" || host == "pypi.org" {
                        Some(Source::Pypi)
                    } else {
                        None
                    }
                })?;
            return Some(Unreachable {
                source,
                host: host.to_ascii_lowercase(),
            });
        }
        // `…': /whl/cu126/torch/` — the retried URL's path.
        let path = line.rsplit_once("': ").map(|(_, p)| p.trim())?;
        self.indexes
            .iter()
            .filter(|(_, _, p)| path.starts_with(p.trim_end_matches('/')))
            .max_by_key(|(_, _, p)| p.len())
            .map(|(s, h, _)| Unreachable {
                source: *s,
                host: h.clone(),
            })
    }

    /// What stopped pip, when it was an index it could not reach: PyTorch's source first
    /// (the big file, and the choice on the page), then the PyPI mirror.
    pub fn verdict(&self) -> Option<Unreachable> {
        if !self.gave_up && self.traceback_network != Some(true) {
            return None;
        }
        let torch = self
            .failed
            .iter()
            .find(|u| matches!(u.source, Source::TorchOfficial | Source::TorchMirror));
        torch.or_else(|| self.failed.first()).cloned()
    }
}

/// The text between `open` and the next `close` in `s`.
fn between(s: &str, open: &str, close: &str) -> Option<String> {
    let start = s.find(open)? + open.len();
    let len = s[start..].find(close)?;
    let v = s[start..start + len].trim();
    (!v.is_empty() && !v.contains(' ')).then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn watch(a: &str, out: &str) -> Option<Unreachable> {
        let mut w = PipWatch::new(&args(a));
        for l in out.lines() {
            w.line(l);
        }
        w.verdict()
    }

    const TORCH: &str = "torch==2.13.0+cu126 torchvision --index-url https://download.pytorch.org/whl/cu126 --extra-index-url https://pypi.tuna.tsinghua.edu.cn/simple";

    /// pip 24's words when download.pytorch.org's name does not resolve (sdnext#683).
    const PIP24_DNS: &str = "Looking in indexes: https://download.pytorch.org/whl/cu126, https://pypi.tuna.tsinghua.edu.cn/simple
WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x000001B235707610>: Failed to establish a new connection: [Errno 11001] getaddrinfo failed')': /whl/cu126/torch/
WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x000001B235707CA0>: Failed to establish a new connection: [Errno 11001] getaddrinfo failed')': /whl/cu126/torch/
ERROR: Could not find a version that satisfies the requirement torch==2.13.0+cu126 (from versions: none)
ERROR: No matching distribution found for torch==2.13.0+cu126";

    #[test]
    fn pip_that_cannot_resolve_pytorchs_server_is_told_apart() {
        assert_eq!(
            watch(TORCH, PIP24_DNS),
            Some(Unreachable {
                source: Source::TorchOfficial,
                host: "download.pytorch.org".into()
            })
        );
    }

    /// pip 23's connect timeout names the host itself (kohya_ss#249); pip 25's reset
    /// connection (light-the-torch#176) only the path.
    #[test]
    fn timeouts_and_resets_name_the_host_or_its_index() {
        let timeout = "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ConnectTimeoutError(<pip._vendor.urllib3.connection.HTTPSConnection object at 0x00000242086F6FB0>, 'Connection to download.pytorch.org timed out. (connect timeout=15)')': /whl/cu126/torch/
ERROR: No matching distribution found for torch==2.13.0+cu126";
        assert_eq!(
            watch(TORCH, timeout).map(|u| u.source),
            Some(Source::TorchOfficial)
        );
        let reset = "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ProtocolError('Connection aborted.', ConnectionResetError(10054, 'An existing connection was forcibly closed by the remote host', None, 10054, None))': /simple/filelock/
ERROR: Could not find a version that satisfies the requirement filelock (from torch) (from versions: none)
ERROR: No matching distribution found for filelock";
        assert_eq!(
            watch(TORCH, reset),
            Some(Unreachable {
                source: Source::Pypi,
                host: "pypi.tuna.tsinghua.edu.cn".into()
            })
        );
    }

    /// A download cut off in the middle: the traceback's last line (sd-webui#11785).
    #[test]
    fn a_download_that_timed_out_names_its_host() {
        let out = "Collecting torch==2.13.0+cu126
  Downloading https://download.pytorch.org/whl/cu126/torch-2.13.0%2Bcu126-cp311-cp311-win_amd64.whl (2611.3 MB)
ERROR: Exception:
Traceback (most recent call last):
  File \"C:\\Python311\\lib\\site-packages\\pip\\_vendor\\urllib3\\response.py\", line 438, in _error_catcher
TimeoutError: The read operation timed out
pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='download.pytorch.org', port=443): Read timed out.";
        assert_eq!(
            watch(TORCH, out).map(|u| u.host),
            Some("download.pytorch.org".into())
        );
    }

    /// A mirror chosen for PyTorch's wheels is a mirror, not PyTorch's server; the SSL
    /// words name the URL.
    #[test]
    fn a_torch_mirror_and_ssl_failures() {
        let a = "torch==2.13.0+cu126 --index-url https://mirror.nju.edu.cn/pytorch/whl/cu126";
        let out = "Could not fetch URL https://mirror.nju.edu.cn/pytorch/whl/cu126/torch/: There was a problem confirming the ssl certificate: HTTPSConnectionPool(host='mirror.nju.edu.cn', port=443): Max retries exceeded with url: /pytorch/whl/cu126/torch/ (Caused by SSLError(SSLEOFError(8, 'EOF occurred in violation of protocol (_ssl.c:1006)'))) - skipping
ERROR: No matching distribution found for torch==2.13.0+cu126";
        assert_eq!(
            watch(a, out),
            Some(Unreachable {
                source: Source::TorchMirror,
                host: "mirror.nju.edu.cn".into()
            })
        );
    }

    /// pip that failed for another reason, or recovered from a retry, is not blamed on
    /// the network.
    #[test]
    fn other_failures_are_not_the_network() {
        let conflict = "ERROR: Cannot install torch==2.13.0 because these package versions have conflicting dependencies.
ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/";
        assert_eq!(watch(TORCH, conflict), None);
        let recovered = "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<x>: Failed to establish a new connection: [Errno 111] Connection refused')': /whl/cu126/torch/
Collecting torch==2.13.0+cu126
ERROR: torch-2.13.0-cp311-cp311-win_amd64.whl is not a supported wheel on this platform.";
        assert_eq!(watch(TORCH, recovered), None);
        assert_eq!(
            watch(TORCH, "ERROR: No matching distribution found for torch==9"),
            None
        );
    }

    /// A retry pip recovered from, then a failure that is not the network: a file in use
    /// or access denied (pytorch-ts#56, pinokio audio-webui#205), as pip's one-line
    /// OSError or a traceback after `ERROR: Exception:`; a version the index does not
    /// have (it answered: it lists others); a page pip skipped (its own version check).
    #[test]
    fn access_denied_after_recovered_retries_is_not_the_network() {
        const RETRY: &str = "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='download.pytorch.org', port=443): Read timed out. (read timeout=15)\")': /whl/cu126/torch/\nCollecting torch==2.13.0+cu126\n";
        let denied = format!(
            "{RETRY}Installing collected packages: torch\nERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: 'C:\\\\Python311\\\\Lib\\\\site-packages\\\\~orch\\\\lib\\\\asmjit.dll'\nConsider using the `--user` option or check the permissions.\n"
        );
        assert_eq!(watch(TORCH, &denied), None);
        // urllib3's frames quote its exception names; the traceback's last line decides.
        let traceback = format!(
            "{RETRY}ERROR: Exception:\nTraceback (most recent call last):\n  File \"C:\\Python311\\lib\\site-packages\\pip\\_vendor\\urllib3\\response.py\", line 438, in _error_catcher\n    raise ReadTimeoutError(self._pool, None, \"Read timed out.\")\n  File \"C:\\Python311\\lib\\shutil.py\", line 825, in move\nPermissionError: [WinError 5] Access is denied: 'C:\\\\Python311\\\\Lib\\\\site-packages\\\\torch'\n"
        );
        assert_eq!(watch(TORCH, &traceback), None);
        let other_versions = format!(
            "{RETRY}ERROR: Could not find a version that satisfies the requirement torch==9.0.0+cu126 (from versions: 2.12.0+cu126, 2.13.0+cu126)\nERROR: No matching distribution found for torch==9.0.0+cu126\n"
        );
        assert_eq!(watch(TORCH, &other_versions), None);
        let skipped = "Could not fetch URL https://pypi.tuna.tsinghua.edu.cn/simple/pip/: There was a problem confirming the ssl certificate: HTTPSConnectionPool(host='pypi.tuna.tsinghua.edu.cn', port=443): Max retries exceeded with url: /simple/pip/ (Caused by SSLError(SSLEOFError(8, 'EOF occurred in violation of protocol (_ssl.c:1006)'))) - skipping
ERROR: Could not install packages due to an OSError: [WinError 32] The process cannot access the file because it is being used by another process: 'C:\\\\Temp\\\\pip-unpack-1\\\\torch.whl'";
        assert_eq!(watch(TORCH, skipped), None);
    }

    /// pip's one-line OSError that names the network (Amphion#388) is the network's, and
    /// a traceback whose last line is urllib3's (pip#13056) too.
    #[test]
    fn an_oserror_or_traceback_naming_the_network_is_the_network() {
        let oserror = "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='download.pytorch.org', port=443): Max retries exceeded with url: /whl/cu126/torch-2.13.0%2Bcu126-cp311-cp311-win_amd64.whl (Caused by NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7efffe815c10>: Failed to establish a new connection: [Errno 101] Network is unreachable'))";
        assert_eq!(
            watch(TORCH, oserror).map(|u| u.source),
            Some(Source::TorchOfficial)
        );
        let traceback = "ERROR: Exception:
Traceback (most recent call last):
  File \"/venv/lib/python3.12/site-packages/pip/_vendor/urllib3/util/retry.py\", line 594, in increment
    raise MaxRetryError(_pool, url, error or ResponseError(cause))
pip._vendor.urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='pypi.tuna.tsinghua.edu.cn', port=443): Max retries exceeded with url: /packages/x.whl (Caused by ResponseError('too many 500 error responses'))";
        assert_eq!(
            watch(TORCH, traceback).map(|u| u.source),
            Some(Source::Pypi)
        );
    }

    /// Without `--index-url`, pip's index is pypi.org.
    #[test]
    fn the_default_index_is_pypi() {
        let out = "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<x>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/torch/
ERROR: No matching distribution found for torch";
        assert_eq!(
            watch("torch", out),
            Some(Unreachable {
                source: Source::Pypi,
                host: "pypi.org".into()
            })
        );
    }

    #[test]
    fn hosts_and_mirrors() {
        assert_eq!(
            host_of("https://u:p@Mirror.NJU.edu.cn:8443/x?y").as_deref(),
            Some("mirror.nju.edu.cn:8443")
        );
        assert_eq!(host_of("not a url"), None);
        let t = crate::compat::Tables::embedded().unwrap();
        let from_official = other_mirrors(&t.pytorch.mirrors, "download.pytorch.org");
        assert_eq!(from_official.len(), t.pytorch.mirrors.len());
        let nju = &t.pytorch.mirrors[0].base;
        let from_nju = other_mirrors(&t.pytorch.mirrors, &host_of(nju).unwrap());
        assert!(from_nju.iter().all(|m| &m.base != nju));
        // The command line names the first mirror's address from the tables.
        let hint = Unreachable {
            source: Source::TorchOfficial,
            host: "download.pytorch.org".into(),
        }
        .hint();
        let en = crate::i18n::render(&hint, crate::i18n::Lang::En);
        assert!(en.contains(&format!("--torch-index {nju}")), "{en}");
    }
}
