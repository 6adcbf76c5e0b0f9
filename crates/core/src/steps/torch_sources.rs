//! Where the torch wheel comes from (#34): the user's explicit choice (PyTorch's own
//! server, a mirror, an address: that index alone, as before), or "automatic" — PyTorch's
//! index and each mirror of it (compat-tables/pytorch.toml `[[mirror]]`) are read at once,
//! and the wheel is downloaded with every index that lists the same file as a source, so
//! the download engine measures them and keeps the fastest.
//!
//! Trust: the SHA-256 comes from PyTorch's own index whenever it answered; a mirror that
//! lists another one for the same file is not used. Only when PyTorch's index did not
//! answer does a mirror's listing give the hash, and the step says so in its log and its
//! outcome — never silently.

use std::str::FromStr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::compat::TorchMirror;
use crate::i18n::Lang;
use crate::message::Message;
use crate::recommend::TorchPick;
use crate::wheels::index::{self, DistFile};

/// How long all the indexes together may take to answer (each its own request, at once).
/// PyTorch's page for a variant is large (every torch wheel it ever built: a few MB).
pub const LISTING_BUDGET: Duration = Duration::from_secs(45);

/// Once PyTorch's listing has answered, how much longer the mirrors' are waited for: a
/// mirror is only another source of the same file then, not worth the full budget.
pub const MIRROR_GRACE: Duration = Duration::from_secs(4);

/// Where PyTorch's wheels come from, as the user chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TorchSource {
    /// Measured: PyTorch's index and its mirrors, the fastest serving the file.
    Auto,
    /// PyTorch's own server alone.
    Official,
    /// This index alone (a mirror's `…/whl` base, or any address of the same layout).
    Index(String),
}

impl TorchSource {
    /// The default of both front ends: measured in Chinese (PyTorch's server is slow or
    /// unreachable from China, and the hash still comes from it when it answers),
    /// PyTorch's own server otherwise.
    pub fn default_for(lang: Lang) -> TorchSource {
        match lang {
            Lang::Zh => TorchSource::Auto,
            _ => TorchSource::Official,
        }
    }
}

impl FromStr for TorchSource {
    type Err = String;

    /// `auto`, `official`, or an index address (`--torch-index`).
    fn from_str(s: &str) -> Result<TorchSource, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(TorchSource::Auto),
            "official" => Ok(TorchSource::Official),
            _ => crate::url::http_url(s).map(TorchSource::Index),
        }
    }
}

/// As `--torch-index` takes it back.
impl std::fmt::Display for TorchSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TorchSource::Auto => f.write_str("auto"),
            TorchSource::Official => f.write_str("official"),
            TorchSource::Index(url) => f.write_str(url),
        }
    }
}

/// A mirror of PyTorch's index asked beside it: its table name (`NJU`) and base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorRef {
    pub name: String,
    pub base: String,
}

/// What the pip step measures before it downloads (empty: the explicit choice, the
/// index pip's arguments name alone).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoSources {
    /// Mirrors of PyTorch's index read beside the one pip's arguments name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub torch_mirrors: Vec<MirrorRef>,
    /// The PyPI index for the other packages is the fastest listed one (`pypi_race`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pypi: bool,
}

impl AutoSources {
    pub fn is_empty(&self) -> bool {
        self.torch_mirrors.is_empty() && !self.pypi
    }
}

/// The variant folder PyTorch's index and its mirrors share (`…/whl/cu126` → `cu126`).
pub(super) fn variant_of(index_url: &str) -> &str {
    index_url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("")
}

/// Applies the choice to the recommended wheel: the index pip is pointed at, and the
/// mirrors the step reads beside it. `official`: PyTorch's index base
/// ([`crate::refresh::Sources::from_env`]: download.pytorch.org, or
/// `CUDA_SETUP_TORCH_INDEX`). Err: the address is a PyPI index, which has no CUDA builds.
pub fn apply(
    pick: &mut TorchPick,
    source: &TorchSource,
    mirrors: &[TorchMirror],
    official: &str,
) -> Result<Vec<MirrorRef>, NotTorchIndex> {
    match source {
        TorchSource::Official => {
            pick.use_index(official);
            Ok(Vec::new())
        }
        TorchSource::Index(base) => {
            if pick.use_index(base) {
                Ok(Vec::new())
            } else {
                Err(NotTorchIndex(base.clone()))
            }
        }
        TorchSource::Auto => {
            pick.use_index(official);
            Ok(mirrors
                .iter()
                .map(|m| MirrorRef {
                    name: m.name.clone(),
                    base: m.base.clone(),
                })
                .collect())
        }
    }
}

/// An address given as PyTorch's index that is a PyPI index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotTorchIndex(pub String);

/// One index's answer: its torch page's files, or why there are none.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The torch page asked for.
    pub page: String,
    pub files: Result<Vec<DistFile>, String>,
}

/// Reads PyTorch's index (`official`, the variant's URL from pip's arguments) and each
/// mirror's page for the same variant at once; what has not answered within `budget` is
/// left out — and, once PyTorch's has answered, what has not within `grace` after it (the
/// full budget is for when the hash may have to come from a mirror). A listing naming a
/// file that cannot be ours (`../x`) counts as no answer.
pub fn read_all(
    official: &str,
    mirrors: &[MirrorRef],
    budget: Duration,
    grace: Duration,
) -> (Listing, Vec<Listing>) {
    let variant = variant_of(official).to_string();
    let mut urls = vec![official.to_string()];
    urls.extend(
        mirrors
            .iter()
            .map(|m| format!("{}/{variant}", m.base.trim_end_matches('/'))),
    );
    let (tx, rx) = mpsc::channel();
    for (i, url) in urls.iter().enumerate() {
        let (tx, url) = (tx.clone(), url.clone());
        let opts = crate::download::Options {
            retries: 1,
            connect_timeout: Duration::from_secs(10),
            stall_timeout: budget,
            ..Default::default()
        };
        // Each thread ends by its own timeouts; one still running at the deadline is
        // left to finish into a channel nobody reads.
        std::thread::spawn(move || {
            let files =
                index::fetch_project(&url, "torch", &opts).map_err(|e| crate::error::chain(&e));
            let _ = tx.send((i, files));
        });
    }
    drop(tx);
    let mut got: Vec<Option<Result<Vec<DistFile>, String>>> = vec![None; urls.len()];
    let start = Instant::now();
    let mut deadline = start + budget;
    while got.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, files)) => {
                if i == 0 && files.is_ok() {
                    deadline = deadline.min(Instant::now() + grace);
                }
                got[i] = Some(files);
            }
            Err(_) => break,
        }
    }
    let waited = start.elapsed().as_secs();
    let mut listings = urls.iter().zip(got).map(|(url, files)| Listing {
        page: index::project_url(url, "torch"),
        files: files.unwrap_or_else(|| Err(format!("no answer within {waited}s"))),
    });
    let official = listings.next().expect("the official index is first");
    (official, listings.collect())
}

/// Whose listing the wheel's SHA-256 comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// PyTorch's own index.
    Official,
    /// PyTorch's index did not answer: this mirror's listing (`error`: why not PyTorch's).
    Mirror { mirror: MirrorRef, error: String },
}

/// What [`decide`] picked: the file (its URL the first source), the other sources of the
/// same bytes, whose hash, and the mirrors left out for listing another hash.
#[derive(Debug, Clone)]
pub struct Decision {
    pub file: DistFile,
    pub mirrors: Vec<String>,
    pub trust: Trust,
    pub disagree: Vec<(MirrorRef, String)>,
}

/// The wheel and its sources from the listings (pure: the step's rule, unit-tested).
/// `pick` chooses the wheel among a listing's files (`torch_wheel::pick`). None: no
/// listing that answered has the wheel.
pub fn decide(
    official: &Listing,
    mirrors: &[(MirrorRef, Listing)],
    pick: &dyn Fn(&[DistFile]) -> Option<DistFile>,
) -> Option<Decision> {
    let (file, trust) = match &official.files {
        Ok(files) => (pick(files)?, Trust::Official),
        Err(error) => mirrors.iter().find_map(|(m, l)| {
            let f = pick(l.files.as_ref().ok()?)?;
            Some((
                f,
                Trust::Mirror {
                    mirror: m.clone(),
                    error: error.clone(),
                },
            ))
        })?,
    };
    let mut out = Decision {
        file,
        mirrors: Vec::new(),
        trust,
        disagree: Vec::new(),
    };
    for (m, l) in mirrors {
        let Ok(files) = &l.files else { continue };
        let Some(same) = files.iter().find(|f| f.filename == out.file.filename) else {
            continue;
        };
        if same.url == out.file.url {
            continue;
        }
        // The bytes are checked against the hash anyway; a mirror listing another one
        // for the same name serves another file, and is not asked for it.
        match (&same.sha256, &out.file.sha256) {
            (Some(a), Some(b)) if !a.eq_ignore_ascii_case(b) => {
                out.disagree.push((m.clone(), l.page.clone()));
            }
            _ => out.mirrors.push(same.url.clone()),
        }
    }
    Some(out)
}

/// The sentence saying the hash comes from a mirror: PyTorch's server did not answer.
/// By the mirror's name as users know it (the catalogue's), else the table's.
pub fn trust_message(mirror: &MirrorRef) -> Message {
    let base = &mirror.base;
    match mirror.name.as_str() {
        "NJU" => crate::msg!("step_torch_hash_from_nju", base = base),
        "SJTU" => crate::msg!("step_torch_hash_from_sjtu", base = base),
        other => crate::msg!("step_torch_hash_from_mirror", name = other, base = base),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "torch-2.13.0+cu126-cp311-cp311-win_amd64.whl";

    fn file(host: &str, sha: &str) -> DistFile {
        DistFile {
            filename: NAME.into(),
            url: format!("https://{host}/whl/cu126/{NAME}"),
            sha256: Some(sha.repeat(64)),
            size: None,
            requires_python: None,
            metadata: None,
            yanked: false,
        }
    }

    fn listing(files: Result<Vec<DistFile>, String>) -> Listing {
        Listing {
            page: "p".into(),
            files,
        }
    }

    fn mirror(name: &str) -> MirrorRef {
        MirrorRef {
            name: name.into(),
            base: format!("https://{name}/whl"),
        }
    }

    fn first(files: &[DistFile]) -> Option<DistFile> {
        files.first().cloned()
    }

    #[test]
    fn the_official_hash_wins_and_a_mirror_with_another_is_left_out() {
        let official = listing(Ok(vec![file("download.pytorch.org", "a")]));
        let mirrors = vec![
            (mirror("NJU"), listing(Ok(vec![file("nju", "a")]))),
            (mirror("SJTU"), listing(Ok(vec![file("sjtu", "b")]))),
            (mirror("X"), listing(Err("down".into()))),
        ];
        let d = decide(&official, &mirrors, &first).unwrap();
        assert_eq!(d.trust, Trust::Official);
        assert_eq!(
            d.file.url,
            format!("https://download.pytorch.org/whl/cu126/{NAME}")
        );
        assert_eq!(d.mirrors, vec![format!("https://nju/whl/cu126/{NAME}")]);
        assert_eq!(d.disagree.len(), 1);
        assert_eq!(d.disagree[0].0.name, "SJTU");
    }

    #[test]
    fn without_pytorch_the_first_mirror_that_has_it_gives_the_hash_and_says_so() {
        let official = listing(Err("connection refused".into()));
        let mirrors = vec![
            (mirror("NJU"), listing(Ok(Vec::new()))),
            (mirror("SJTU"), listing(Ok(vec![file("sjtu", "b")]))),
            (mirror("X"), listing(Ok(vec![file("x", "c")]))),
        ];
        let d = decide(&official, &mirrors, &first).unwrap();
        assert!(matches!(&d.trust, Trust::Mirror { mirror, .. } if mirror.name == "SJTU"));
        assert!(d.mirrors.is_empty(), "X lists another hash");
        assert_eq!(d.disagree.len(), 1);
        assert_eq!(
            trust_message(&mirror("SJTU")).key,
            "step_torch_hash_from_sjtu"
        );
        assert_eq!(
            trust_message(&mirror("X")).key,
            "step_torch_hash_from_mirror"
        );
        assert!(decide(&official, &[], &first).is_none());
    }

    /// PyTorch's listing answers; a mirror accepts the connection and never answers: the
    /// mirror is left out a grace after PyTorch's answer, not at the full budget.
    #[test]
    fn once_pytorch_answered_a_silent_mirror_is_not_waited_for() {
        use std::io::{Read, Write};
        use std::net::TcpListener;
        let official = TcpListener::bind("127.0.0.1:0").unwrap();
        let official_addr = official.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in official.incoming() {
                let Ok(mut s) = s else { return };
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let page = format!(
                    "<html><body><a href=\"/whl/cu126/{NAME}#sha256={}\">{NAME}</a></body></html>",
                    "a".repeat(64)
                );
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            }
        });
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let silent_addr = silent.local_addr().unwrap();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in silent.incoming() {
                held.push(s);
            }
        });
        let mirrors = vec![MirrorRef {
            name: "NJU".into(),
            base: format!("http://{silent_addr}/whl"),
        }];
        let started = Instant::now();
        let (pytorch, others) = read_all(
            &format!("http://{official_addr}/whl/cu126"),
            &mirrors,
            LISTING_BUDGET,
            Duration::from_secs(2),
        );
        let took = started.elapsed();
        assert_eq!(pytorch.files.as_ref().map(Vec::len), Ok(1), "{pytorch:?}");
        assert!(others[0].files.is_err(), "{others:?}");
        assert!(took < Duration::from_secs(20), "waited {took:?}");
    }

    #[test]
    fn the_choice_points_pip_and_names_the_mirrors_only_when_automatic() {
        assert_eq!(TorchSource::default_for(Lang::Zh), TorchSource::Auto);
        assert_eq!(TorchSource::default_for(Lang::En), TorchSource::Official);
        assert_eq!("AUTO".parse::<TorchSource>(), Ok(TorchSource::Auto));
        assert!("nonsense".parse::<TorchSource>().is_err());
        assert_eq!(variant_of("https://x/whl/cu126/"), "cu126");
    }
}
