//! Never stale: reads the sources of truth at run time — NVIDIA's redist manifests for
//! CUDA and cuDNN, the PyTorch wheel index, PyPI — and merges what is new into the
//! tables. The embedded tables stay the offline fallback; what was fetched is cached
//! (`refresh.json`, with the time fetched) so an offline start still knows it.
//!
//! Nothing is inferred: a release learned here has no minimum driver unless a source
//! states one (NVIDIA's manifests do not), and the recommender prefers releases whose
//! minimum is known.

mod fetch;
pub mod gpu_packages;
mod merge;
pub mod nvidia;
pub mod pci_ids;
pub mod pypi;
pub mod torch_index;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::compat::{TableError, Tables};
use crate::platform::Host;
use crate::version::Version;

pub use gpu_packages::{GpuWheelNeeds, LiveGpuRelease};
pub use merge::apply;
pub use nvidia::{LiveArchive, LiveCudnn, LiveToolkit};
pub use pypi::{LivePackage, LiveTorch};
pub use torch_index::LiveVariant;

pub const NVIDIA_BASE: &str = "https://developer.download.nvidia.com/compute";
pub const PYPI_BASE: &str = "https://pypi.org/simple";
/// The cache file's name in the per-user cache folder.
pub const CACHE_FILE: &str = "refresh.json";
/// At most this many new manifests are read per product and run.
const MAX_MANIFESTS: usize = 8;

/// Where to read. Each base can be overridden (a mirror, or a loopback server in tests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sources {
    /// Holds `cuda/redist/` and `cudnn/redist/`.
    pub nvidia: String,
    /// Holds `<variant>/torch/`.
    pub torch_index: String,
    /// A PEP 503/691 simple index.
    pub pypi: String,
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            nvidia: NVIDIA_BASE.into(),
            torch_index: crate::compat::TORCH_INDEX_BASE.into(),
            pypi: PYPI_BASE.into(),
        }
    }
}

impl Sources {
    /// The defaults, overridden by `CUDA_SETUP_NVIDIA_BASE`, `CUDA_SETUP_TORCH_INDEX` and
    /// `CUDA_SETUP_PYPI`.
    pub fn from_env() -> Sources {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let d = Sources::default();
        Sources {
            nvidia: var("CUDA_SETUP_NVIDIA_BASE").unwrap_or(d.nvidia),
            torch_index: var("CUDA_SETUP_TORCH_INDEX").unwrap_or(d.torch_index),
            pypi: var("CUDA_SETUP_PYPI").unwrap_or(d.pypi),
        }
    }

    fn join(base: &str, rest: &str) -> String {
        format!("{}/{rest}", base.trim_end_matches('/'))
    }

    pub fn cuda_redist(&self) -> String {
        Self::join(&self.nvidia, "cuda/redist/")
    }

    /// NVIDIA's list of a CUDA release's files with their MD5s.
    pub fn cuda_md5sum(&self, v: &Version) -> String {
        Self::join(&self.nvidia, &format!("cuda/{v}/docs/sidebar/md5sum.txt"))
    }

    pub fn cudnn_redist(&self) -> String {
        Self::join(&self.nvidia, "cudnn/redist/")
    }

    pub fn torch_page(&self, variant: &str) -> String {
        Self::join(&self.torch_index, &format!("{variant}/torch/"))
    }

    pub fn pypi_page(&self, project: &str) -> String {
        Self::join(&self.pypi, &format!("{project}/"))
    }
}

/// Why a refresh did not produce new data. Transport errors mean "offline" (fall back);
/// the others mean a source sent something we refuse (the cache is left as it was).
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error("{url}: {detail}")]
    Network { url: String, detail: String },
    #[error("{url}: HTTP {status}")]
    Http { url: String, status: u16 },
    #[error("{url}: HTTP 404")]
    NotFound { url: String },
    #[error("{url}: malformed: {problem}")]
    Malformed { url: String, problem: String },
    #[error("{url}: the merged tables are invalid: {source}")]
    Invalid {
        url: String,
        #[source]
        source: TableError,
    },
    #[error("{path}: cannot write the refresh cache: {detail}")]
    Cache { path: PathBuf, detail: String },
}

impl RefreshError {
    /// The source could not be reached (as opposed to: it sent something wrong).
    pub fn is_transport(&self) -> bool {
        matches!(
            self,
            RefreshError::Network { .. }
                | RefreshError::Http { .. }
                | RefreshError::NotFound { .. }
        )
    }

    /// What to do about it, for the command line's `hint:` line.
    pub fn hint(&self) -> crate::message::Message {
        match self {
            RefreshError::Malformed { .. } | RefreshError::Invalid { .. } => {
                crate::msg!("hint_refresh_refused")
            }
            RefreshError::Cache { .. } => crate::msg!("hint_refresh_cache"),
            _ => crate::msg!("hint_refresh_network"),
        }
    }
}

/// One part of what was fetched: its items, the URL read and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section<T> {
    pub url: String,
    pub fetched_at: u64,
    pub items: Vec<T>,
    /// Fetched in this run (false: carried over from the cache).
    #[serde(skip)]
    pub live: bool,
}

/// What `refresh.json` holds: each section from its last successful fetch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub format: u32,
    /// The newest section's time (Unix seconds).
    pub fetched_at: u64,
    pub cuda: Option<Section<LiveToolkit>>,
    pub cudnn: Option<Section<LiveCudnn>>,
    pub torch: Option<Section<LiveVariant>>,
    pub pypi: Option<Section<LivePackage>>,
    /// Torch lines newer than the tables, from PyPI's `torch` page and wheel metadata
    /// (absent in caches written before it was read).
    #[serde(default)]
    pub pypi_torch: Option<Section<LiveTorch>>,
    /// Releases of the GPU packages besides torch newer than `gpu-packages.toml`, with
    /// what their wheels' metadata on PyPI states (absent in older caches).
    #[serde(default)]
    pub gpu_packages: Option<Section<LiveGpuRelease>>,
}

const FORMAT: u32 = 1;

/// `refresh.json` in the per-user cache folder.
pub fn default_cache_file() -> Option<PathBuf> {
    crate::platform::cache_dir(&Host::real()).map(|d| d.join(CACHE_FILE))
}

/// The cached snapshot, if there is a readable one of this format.
pub fn load_cache(file: &Path) -> Option<Snapshot> {
    let text = std::fs::read_to_string(file).ok()?;
    let s: Snapshot = serde_json::from_str(&text).ok()?;
    (s.format == FORMAT).then_some(s)
}

/// Writes `snap` to `file` atomically: a temporary file, then a rename, so a reader
/// never sees half a file and a failure leaves the old cache.
pub fn save_cache(file: &Path, snap: &Snapshot) -> Result<(), RefreshError> {
    let err = |e: std::io::Error| RefreshError::Cache {
        path: file.to_path_buf(),
        detail: e.to_string(),
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
    let text = serde_json::to_vec_pretty(snap).expect("serialisable");
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, file).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })
}

/// `base` with the cached snapshot merged in; `base` itself when there is no usable
/// cache (a cache that no longer merges cleanly is ignored, never trusted in part).
pub fn with_cache(base: Tables, file: Option<&Path>) -> Tables {
    let base = pci_ids::with_cache(base, file);
    match file.and_then(load_cache) {
        Some(snap) => apply(&base, &snap).unwrap_or(base),
        None => base,
    }
}

/// How a refresh went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every source answered.
    Refreshed,
    /// Some answered; the others' data comes from the cache, if any.
    Partial,
    /// None answered: the cached (or built-in) tables are used.
    Offline,
    /// A source sent data that was refused: nothing was merged or cached.
    Rejected,
}

/// What the tables in use rest on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Using {
    /// The built-in (or `--compat-dir`) tables alone.
    Tables,
    Cache {
        fetched_at: u64,
        at: String,
    },
    Live {
        fetched_at: u64,
        at: String,
    },
}

impl Using {
    pub fn of(t: &Tables) -> Using {
        match &t.live.refreshed {
            None => Using::Tables,
            Some(r) if r.live => Using::Live {
                fetched_at: r.fetched_at,
                at: r.at.clone(),
            },
            Some(r) => Using::Cache {
                fetched_at: r.fetched_at,
                at: r.at.clone(),
            },
        }
    }
}

/// A refresh's result: the tables to use from now on and what happened.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub tables: Tables,
    pub status: Status,
    /// The sources that could not be read (`url: why`), and notes (a skipped variant).
    pub errors: Vec<String>,
    pub using: Using,
    /// Releases that are new against `base`.
    pub new: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(20),
        }
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Reads every source, merges what is new into `base`, validates, caches.
///
/// Offline (no source answers) is not an error: the outcome carries the cached or
/// built-in tables and says so. A source that answers with something malformed is an
/// error, and then nothing is written: the cache keeps its last good data.
pub fn refresh(
    base: &Tables,
    sources: &Sources,
    cache: Option<&Path>,
    opts: &Options,
) -> Result<Outcome, RefreshError> {
    tracing::debug!(
        nvidia = %sources.nvidia,
        torch_index = %sources.torch_index,
        pypi = %sources.pypi,
        cache = ?cache,
        "refresh: started"
    );
    let previous = cache.and_then(load_cache);
    let fetcher = fetch::Fetcher::new(opts.timeout)?;
    let at = now();
    let mut errors = Vec::new();

    let old = previous.clone().unwrap_or_default();
    let cuda = section(
        fetch_cuda(&fetcher, base, sources, old.cuda.as_ref(), &mut errors),
        at,
        &mut errors,
    )?;
    let cudnn = section(
        fetch_cudnn(&fetcher, base, sources, old.cudnn.as_ref(), &mut errors),
        at,
        &mut errors,
    )?;
    let torch = section(
        fetch_torch(&fetcher, base, sources, &mut errors),
        at,
        &mut errors,
    )?;
    let pypi = section(fetch_pypi(&fetcher, sources), at, &mut errors)?;
    let r = fetch_pypi_torch(&fetcher, base, sources, &mut errors);
    // A mirror without the torch project answered all the same (noted; what an earlier
    // refresh learned stays).
    let no_torch = matches!(r, Err(RefreshError::NotFound { .. }));
    let pypi_torch = section(r, at, &mut errors)?;
    let r = fetch_gpu_packages(&fetcher, base, sources, &mut errors);
    // The same for a mirror without those projects.
    let no_gpu_packages = matches!(r, Err(RefreshError::NotFound { .. }));
    let gpu_packages = section(r, at, &mut errors)?;
    let answered = [
        cuda.is_some(),
        cudnn.is_some(),
        torch.is_some(),
        pypi.is_some(),
        pypi_torch.is_some() || no_torch,
        gpu_packages.is_some() || no_gpu_packages,
    ];
    let failed = answered.iter().filter(|a| !**a).count();

    let mut snap = Snapshot {
        format: FORMAT,
        fetched_at: 0,
        cuda: cuda.or(old.cuda),
        cudnn: cudnn.or(old.cudnn),
        torch: torch.or(old.torch),
        pypi: pypi.or(old.pypi),
        pypi_torch: pypi_torch.or(old.pypi_torch),
        gpu_packages: gpu_packages.or(old.gpu_packages),
    };
    snap.fetched_at = [
        snap.cuda.as_ref().map(|s| s.fetched_at),
        snap.cudnn.as_ref().map(|s| s.fetched_at),
        snap.torch.as_ref().map(|s| s.fetched_at),
        snap.pypi.as_ref().map(|s| s.fetched_at),
        snap.pypi_torch.as_ref().map(|s| s.fetched_at),
        snap.gpu_packages.as_ref().map(|s| s.fetched_at),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);

    let status = match failed {
        0 => Status::Refreshed,
        n if n == answered.len() => Status::Offline,
        _ => Status::Partial,
    };
    let tables = if status == Status::Offline {
        // Nothing new: the cache as it was (a cache that no longer merges is ignored).
        match &previous {
            Some(p) => apply(base, p).unwrap_or_else(|_| base.clone()),
            None => base.clone(),
        }
    } else {
        let url = sources.nvidia.clone();
        let merged = apply(base, &snap).map_err(|source| RefreshError::Invalid { url, source })?;
        if let Some(file) = cache
            && let Err(e) = save_cache(file, &snap)
        {
            errors.push(e.to_string());
        }
        merged
    };
    let tables = pci_ids::refresh(&fetcher, tables, sources, cache, &mut errors);
    let new = merge::new_rows(base, &tables);
    tracing::info!(status = ?status, notes = errors.len(), "refresh: done");
    Ok(Outcome {
        using: Using::of(&tables),
        tables,
        status,
        errors,
        new,
    })
}

/// A fetched section, None when its source could not be reached (noted in `errors`).
fn section<T>(
    r: Result<(Vec<T>, String), RefreshError>,
    at: u64,
    errors: &mut Vec<String>,
) -> Result<Option<Section<T>>, RefreshError> {
    match r {
        Ok((items, url)) => Ok(Some(Section {
            url,
            fetched_at: at,
            items,
            live: true,
        })),
        Err(e) if e.is_transport() => {
            tracing::info!(error = %e, "refresh: a source did not answer");
            errors.push(e.to_string());
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn fetch_cuda(
    f: &fetch::Fetcher,
    base: &Tables,
    s: &Sources,
    cached: Option<&Section<LiveToolkit>>,
    notes: &mut Vec<String>,
) -> Result<(Vec<LiveToolkit>, String), RefreshError> {
    let newest = base.toolkits.releases.iter().map(|r| &r.version).max();
    let (mut items, index) = fetch_manifests(
        f,
        s.cuda_redist(),
        newest,
        cached,
        notes,
        nvidia::cuda_manifest,
        |t: &LiveToolkit, v| t.version == *v,
    )?;
    // The installers' real names and MD5s, from the list NVIDIA publishes per release
    // (read once: a cached release keeps what was read). Without it the names follow
    // NVIDIA's pattern; a list that cannot be read is a note, never a failed refresh.
    for t in items.iter_mut() {
        t.installers = t.installers.take().or_else(|| {
            cached
                .into_iter()
                .flat_map(|c| &c.items)
                .find(|c| c.version == t.version)
                .and_then(|c| c.installers.clone())
        });
        if t.installers.is_some() {
            continue;
        }
        match f.get(&s.cuda_md5sum(&t.version), None) {
            Ok(text) => {
                let found = nvidia::installers_from_md5sum(&text, &t.version);
                if found == nvidia::LiveInstallers::default() {
                    notes.push(format!(
                        "{}: names no installer of CUDA {}",
                        s.cuda_md5sum(&t.version),
                        t.version
                    ));
                } else {
                    t.installers = Some(found);
                }
            }
            Err(e) => notes.push(e.to_string()),
        }
    }
    Ok((items, index))
}

fn fetch_cudnn(
    f: &fetch::Fetcher,
    base: &Tables,
    s: &Sources,
    cached: Option<&Section<LiveCudnn>>,
    notes: &mut Vec<String>,
) -> Result<(Vec<LiveCudnn>, String), RefreshError> {
    // Manifests are labelled with three parts (9.27.0), releases with four.
    let newest = base
        .cudnn
        .releases
        .iter()
        .map(|r| Version::new(&r.version.parts()[..3.min(r.version.parts().len())]))
        .max();
    fetch_manifests(
        f,
        s.cudnn_redist(),
        newest.as_ref(),
        cached,
        notes,
        nvidia::cudnn_manifest,
        |c: &LiveCudnn, v| c.version.parts().starts_with(v.parts()),
    )
}

/// Reads the redist listing at `index`, then each manifest newer than `newest`. A
/// transport failure on the listing ends the section; a manifest that cannot be read
/// now is a note, and what an earlier refresh read of it (`is_of`) stays.
fn fetch_manifests<T: Clone>(
    f: &fetch::Fetcher,
    index: String,
    newest: Option<&Version>,
    cached: Option<&Section<T>>,
    notes: &mut Vec<String>,
    parse: impl Fn(&str, &Version) -> Result<T, String>,
    is_of: impl Fn(&T, &Version) -> bool,
) -> Result<(Vec<T>, String), RefreshError> {
    let listing = nvidia::listing(&f.get(&index, None)?);
    if listing.is_empty() {
        return Err(RefreshError::Malformed {
            url: index,
            problem: "the listing names no redistrib_<version>.json".into(),
        });
    }
    let mut items = Vec::new();
    for v in newer(&listing, newest) {
        let url = format!("{index}{}", nvidia::manifest_name(v));
        match f.get(&url, None) {
            Ok(text) => items
                .push(parse(&text, v).map_err(|problem| RefreshError::Malformed { url, problem })?),
            Err(e) if e.is_transport() => {
                notes.push(e.to_string());
                items.extend(
                    cached
                        .into_iter()
                        .flat_map(|c| &c.items)
                        .filter(|t| is_of(t, v))
                        .cloned(),
                );
            }
            Err(e) => return Err(e),
        }
    }
    Ok((items, index))
}

/// The listed versions above `newest`, the newest few.
fn newer<'a>(listing: &'a [Version], newest: Option<&Version>) -> Vec<&'a Version> {
    let mut v: Vec<&Version> = listing
        .iter()
        .filter(|v| newest.is_none_or(|n| *v > n))
        .collect();
    let skip = v.len().saturating_sub(MAX_MANIFESTS);
    v.drain(..skip);
    v
}

/// The variants of the three newest torch lines that name any.
pub fn variants_to_read(base: &Tables) -> Vec<String> {
    let mut names: Vec<String> = base
        .pytorch
        .releases
        .iter()
        .rev()
        .filter(|r| !r.variants.is_empty())
        .take(3)
        .flat_map(|r| r.variants.iter().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}

fn fetch_torch(
    f: &fetch::Fetcher,
    base: &Tables,
    s: &Sources,
    notes: &mut Vec<String>,
) -> Result<(Vec<LiveVariant>, String), RefreshError> {
    let mut items = Vec::new();
    let mut reached = false;
    let mut first_error = None;
    for name in variants_to_read(base) {
        let url = s.torch_page(&name);
        match f.get(&url, None) {
            Ok(html) => {
                reached = true;
                let wheels = torch_index::parse(&html, &name)
                    .map_err(|problem| RefreshError::Malformed { url, problem })?;
                items.push(LiveVariant { name, wheels });
            }
            // A variant the index does not have: nothing is known about it.
            Err(e @ RefreshError::NotFound { .. }) => {
                reached = true;
                notes.push(e.to_string());
            }
            Err(e) if e.is_transport() => {
                if reached {
                    notes.push(e.to_string());
                } else {
                    // The host is unreachable: the next pages would fail the same way.
                    first_error = Some(e);
                    break;
                }
            }
            Err(e) => return Err(e),
        }
    }
    match first_error {
        Some(e) if !reached => Err(e),
        // Every page missing: this index does not carry them (a mirror?); keep the cache.
        _ if items.is_empty() => Err(RefreshError::NotFound {
            url: s.torch_page("<variant>"),
        }),
        _ => Ok((items, s.torch_index.clone())),
    }
}

fn fetch_pypi(f: &fetch::Fetcher, s: &Sources) -> Result<(Vec<LivePackage>, String), RefreshError> {
    let mut items = Vec::new();
    for (i, name) in pypi::PACKAGES.iter().enumerate() {
        let url = s.pypi_page(name);
        match f.get(&url, Some(pypi::ACCEPT)) {
            Ok(body) => items.push(LivePackage {
                name: name.to_string(),
                newest: pypi::newest(&body, name)
                    .map_err(|problem| RefreshError::Malformed { url, problem })?,
            }),
            Err(e) if i == 0 => return Err(e),
            Err(RefreshError::NotFound { .. }) => {}
            Err(e) if e.is_transport() => {}
            Err(e) => return Err(e),
        }
    }
    Ok((items, s.pypi.clone()))
}

/// Torch lines newer than `base` from PyPI's `torch` page, each with its newest
/// patch's Linux and Windows wheel metadata (PEP 658) when the page offers it. A
/// metadata file that cannot be read is a note (its facts stay unknown); one that is
/// not what it claims is refused like a malformed page.
fn fetch_pypi_torch(
    f: &fetch::Fetcher,
    base: &Tables,
    s: &Sources,
    notes: &mut Vec<String>,
) -> Result<(Vec<LiveTorch>, String), RefreshError> {
    let url = s.pypi_page(pypi::TORCH);
    let body = f.get(&url, Some(pypi::ACCEPT))?;
    let malformed = |url: &str| {
        let url = url.to_string();
        move |problem| RefreshError::Malformed { url, problem }
    };
    let newest = base.pytorch.releases.iter().map(|r| &r.version).max();
    let files = pypi::page_files(&url, &body).map_err(malformed(&url))?;
    let plans = pypi::torch_plan(&files, newest).map_err(malformed(&url))?;
    let mut items = Vec::new();
    for mut plan in plans {
        let version = plan
            .live
            .patches
            .last()
            .expect("a planned line has a patch")
            .clone();
        for (os, wheel) in [
            (crate::compat::Os::Linux, plan.linux_wheel.take()),
            (crate::compat::Os::Windows, plan.windows_wheel.take()),
        ] {
            let Some(wheel) = wheel else { continue };
            let murl = wheel.metadata_url();
            let text = match f.get_limited(&murl, None, fetch::MAX_METADATA_BYTES) {
                Ok(t) => t,
                Err(e) if e.is_transport() => {
                    notes.push(e.to_string());
                    continue;
                }
                Err(e) => return Err(e),
            };
            if let Some(Some(want)) = &wheel.metadata {
                let got = sha256_hex(text.as_bytes());
                if *want != got {
                    return Err(RefreshError::Malformed {
                        url: murl,
                        problem: format!("its SHA-256 is {got}, the index page says {want}"),
                    });
                }
            }
            let (requires_python, requires) =
                pypi::parse_metadata(&text, &version).map_err(malformed(&murl))?;
            let meta = pypi::WheelMetadata::from_requires(&murl, &requires, os);
            // The metadata's Requires-Python is the wheel's own; the page's a copy.
            if let Some(rp) = requires_python {
                plan.live.requires_python = Some(rp);
            }
            match os {
                crate::compat::Os::Linux => plan.live.linux = Some(meta),
                crate::compat::Os::Windows => plan.live.windows = Some(meta),
            }
        }
        // Requires-Python may have changed with the metadata: the Pythons again.
        let wheels: Vec<crate::compat::Wheel> = files
            .iter()
            .filter(|f| !f.yanked)
            .filter_map(|f| torch_index::wheel(&f.filename, ""))
            .filter(|w| w.version == version)
            .collect();
        pypi::settle_pythons(&mut plan.live, wheels.iter());
        if plan.live.pythons.is_empty() {
            notes.push(format!(
                "{url}: torch {version} has no CPython x86-64 wheel its Requires-Python allows; not learned"
            ));
            continue;
        }
        items.push(plan.live);
    }
    Ok((items, url))
}

/// Releases of the GPU packages besides torch (`gpu_packages::PROJECTS`) newer than the
/// table, each with what its Linux and Windows wheels' core metadata states. A project
/// the index does not have is skipped (a mirror need not carry it); a metadata file that
/// cannot be read is a note (that OS's facts stay unknown); one that is not what it
/// claims refuses the whole refresh, as a malformed page does.
fn fetch_gpu_packages(
    f: &fetch::Fetcher,
    base: &Tables,
    s: &Sources,
    notes: &mut Vec<String>,
) -> Result<(Vec<LiveGpuRelease>, String), RefreshError> {
    let malformed = |url: &str| {
        let url = url.to_string();
        move |problem| RefreshError::Malformed { url, problem }
    };
    let mut items = Vec::new();
    let mut reached = false;
    for (i, project) in gpu_packages::PROJECTS.iter().enumerate() {
        // A row without an upper bound: no release is newer than the table.
        let Some(from) = gpu_packages::table_bound(&base.gpu_packages, project) else {
            continue;
        };
        let url = s.pypi_page(project);
        let body = match f.get(&url, Some(pypi::ACCEPT)) {
            Ok(b) => b,
            Err(RefreshError::NotFound { .. }) => continue,
            Err(e) if e.is_transport() && i > 0 => {
                notes.push(e.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        reached = true;
        let files = pypi::page_files(&url, &body).map_err(malformed(&url))?;
        let plans = gpu_packages::plan(project, &files, from.as_ref()).map_err(malformed(&url))?;
        for plan in plans {
            let mut live = LiveGpuRelease {
                package: project.to_string(),
                version: plan.version.clone(),
                linux: None,
                windows: None,
            };
            for (os, wheel) in [
                (crate::compat::Os::Linux, &plan.linux_wheel),
                (crate::compat::Os::Windows, &plan.windows_wheel),
            ] {
                let Some(wheel) = wheel else { continue };
                let Some((murl, text)) = read_metadata(f, wheel, notes)? else {
                    continue;
                };
                let (_, requires) = pypi::parse_metadata_of(&text, project, &plan.version)
                    .map_err(malformed(&murl))?;
                let needs = GpuWheelNeeds::from_requires(&murl, &requires, os);
                match os {
                    crate::compat::Os::Linux => live.linux = Some(needs),
                    crate::compat::Os::Windows => live.windows = Some(needs),
                }
            }
            items.push(live);
        }
    }
    if !reached {
        return Err(RefreshError::NotFound {
            url: s.pypi_page("<gpu package>"),
        });
    }
    Ok((items, s.pypi.clone()))
}

/// A wheel's core metadata (PEP 658), bounded, checked against the hash the page gives:
/// None (noted) when it cannot be fetched; a wrong hash is a malformed source.
fn read_metadata(
    f: &fetch::Fetcher,
    wheel: &crate::pypi::index::DistFile,
    notes: &mut Vec<String>,
) -> Result<Option<(String, String)>, RefreshError> {
    let murl = wheel.metadata_url();
    let text = match f.get_limited(&murl, None, fetch::MAX_METADATA_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_transport() => {
            notes.push(e.to_string());
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    if let Some(Some(want)) = &wheel.metadata {
        let got = sha256_hex(text.as_bytes());
        if *want != got {
            return Err(RefreshError::Malformed {
                url: murl,
                problem: format!("its SHA-256 is {got}, the index page says {want}"),
            });
        }
    }
    Ok(Some((murl, text)))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The host of a source URL (`https://pypi.org/simple/torch/` → `pypi.org`).
fn host(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| {
            let h = u.host_str()?.to_string();
            Some(match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h,
            })
        })
        .unwrap_or_else(|| url.to_string())
}

/// `win_amd64`, `manylinux_2_28_x86_64` → `Windows, Linux`.
fn platform_words(platforms: &[String]) -> String {
    let mut words = Vec::new();
    for p in platforms {
        let w = if p == "win_amd64" {
            "Windows"
        } else if p.contains("linux") {
            "Linux"
        } else {
            continue;
        };
        if !words.contains(&w) {
            words.push(w);
        }
    }
    words.sort_by_key(|w| *w != "Windows");
    words.join(", ")
}

/// What PyPI taught about each torch line the tables lacked, fact by fact, each with
/// its source (`tables --refresh`).
pub fn torch_pypi_messages(t: &Tables) -> Vec<crate::message::Message> {
    let mut out = Vec::new();
    for p in &t.live.torch_pypi {
        let torch = p.patches.last().unwrap_or(&p.version).to_string();
        let (file, at) = match &p.source {
            crate::compat::Origin::Fetched {
                file, fetched_at, ..
            } => (file.as_str(), crate::compat::utc(*fetched_at)),
            crate::compat::Origin::Table => ("", String::new()),
        };
        let source = host(file);
        let pythons = if p.python_min == p.python_max {
            p.python_min.to_string()
        } else {
            format!("{}–{}", p.python_min, p.python_max)
        };
        let patches: Vec<String> = p.patches.iter().map(ToString::to_string).collect();
        out.push(crate::msg!(
            "refresh_torch_pypi",
            torch = &torch,
            patches = patches.join(", "),
            pythons = pythons,
            platforms = platform_words(&p.platforms),
            source = &source,
            at = at
        ));
        out.push(match (&p.linux_metadata, &p.linux_cuda) {
            (None, _) => crate::msg!("refresh_torch_pypi_linux_unknown", torch = &torch),
            (Some(_), Some(cuda)) => crate::msg!(
                "refresh_torch_pypi_linux_cuda",
                torch = &torch,
                cuda = cuda,
                source = &source
            ),
            (Some(_), None) if p.linux_requires.is_empty() => {
                crate::msg!("refresh_torch_pypi_linux_cpu", torch = &torch)
            }
            (Some(_), None) => crate::msg!("refresh_torch_pypi_linux_unpinned", torch = &torch),
        });
        if p.platforms.iter().any(|x| x == "win_amd64") {
            out.push(match p.windows_cpu {
                None => crate::msg!("refresh_torch_pypi_windows_unknown", torch = &torch),
                Some(true) => crate::msg!("refresh_torch_pypi_windows_cpu", torch = &torch),
                Some(false) => crate::msg!(
                    "refresh_torch_pypi_windows_cuda",
                    torch = &torch,
                    cuda = cuda_of(&p.windows_requires)
                ),
            });
        }
        out.push(crate::compat::notes::variants_message(t, p));
    }
    out
}

/// What PyPI's wheel metadata taught about the GPU packages besides torch, one line per
/// learned row with its source (`tables --refresh`).
pub fn gpu_packages_messages(t: &Tables) -> Vec<crate::message::Message> {
    t.gpu_packages
        .needs
        .iter()
        .filter(|n| n.fetched())
        .map(|n| {
            let at = match &n.origin {
                crate::compat::Origin::Fetched { fetched_at, .. } => {
                    crate::compat::utc(*fetched_at)
                }
                crate::compat::Origin::Table => String::new(),
            };
            let os = match n.os {
                None => "Linux, Windows",
                Some(crate::compat::Os::Linux) => "Linux",
                Some(crate::compat::Os::Windows) => "Windows",
            };
            crate::msg!(
                "refresh_gpu_package",
                package = &n.package,
                version = n
                    .versions
                    .lower
                    .as_ref()
                    .map_or(String::new(), ToString::to_string),
                cuda = n.cuda,
                cudnn = n.cudnn.map_or("?".to_string(), |c| c.to_string()),
                os = os,
                source = host(&n.source),
                at = at
            )
        })
        .collect()
}

/// The CUDA a list of requirements pins (for a message), `?` when none.
fn cuda_of(requires: &[String]) -> String {
    let m = pypi::WheelMetadata::from_requires("", requires, crate::compat::Os::Windows);
    m.cuda.map_or("?".to_string(), |v| v.to_string())
}

/// One line on what the tables in use rest on (the GUI's detail view, `tables`).
pub fn tables_message(t: &Tables) -> crate::message::Message {
    match Using::of(t) {
        Using::Tables => crate::msg!("tables_status_tables"),
        Using::Live { at, .. } => crate::msg!("tables_status_live", at = at),
        Using::Cache { at, .. } => crate::msg!("tables_status_cache", at = at),
    }
}

/// How a refresh went, as one line.
pub fn outcome_message(o: &Outcome) -> crate::message::Message {
    match (o.status, &o.using) {
        (Status::Offline, Using::Cache { at, .. } | Using::Live { at, .. }) => {
            crate::msg!("refresh_offline_cache", at = at)
        }
        (Status::Offline, Using::Tables) => crate::msg!("refresh_offline_tables"),
        (Status::Partial, _) => crate::msg!("refresh_partial"),
        (Status::Rejected, _) => crate::msg!("refresh_rejected", error = o.errors.join("; ")),
        (Status::Refreshed, _) => tables_message(&o.tables),
    }
}
