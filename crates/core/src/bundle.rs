//! An offline bundle: installers and archives in one folder with `manifest.json` naming
//! each file's hashes, so an install needs no network at all.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compat::{Os, Tables};
use crate::download::{self, Cancel, DownloadError, Expected, Options, Reporter, published};
use crate::message::Message;
use crate::recommend::{CudnnPick, CudnnVersionError, Facts, Goal, Method, ToolkitPick};
use crate::version::Version;

pub const MANIFEST: &str = "manifest.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub created_by: String,
    pub os: Os,
    pub files: Vec<BundleFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BundleFile {
    /// `toolkit_installer` or `cudnn_archive`.
    pub kind: String,
    pub version: String,
    pub file: String,
    pub url: String,
    pub sha256: String,
    pub md5: String,
    pub size: u64,
}

/// A manifest lists a few dozen files; anything near this is not one.
pub const MANIFEST_MAX_BYTES: u64 = 4 << 20;

/// The bundle's manifest. A bundle folder is often shared, so the file is input: a
/// regular file (a FIFO would block us for ever, a link could lead anywhere), bounded
/// before it is read (`place::read_regular`).
pub fn read(dir: &Path) -> Result<Manifest, String> {
    let path = dir.join(MANIFEST);
    let missing = || {
        format!(
            "{}: not found (make the bundle with `cuda-setup bundle --out {}`)",
            path.display(),
            dir.display()
        )
    };
    let bytes = crate::place::read_regular(&path, MANIFEST_MAX_BYTES)
        .map_err(|e| e.to_string())?
        .ok_or_else(missing)?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes the manifest (a temporary file created new, then renamed: never a torn file,
/// never written through a link planted at either name).
pub fn write(dir: &Path, m: &Manifest) -> std::io::Result<()> {
    crate::state_file::write(
        &dir.join(MANIFEST),
        &serde_json::to_vec_pretty(m).expect("serialisable"),
    )
}

/// What to bundle (`cuda-setup bundle`'s choices).
#[derive(Debug, Clone)]
pub struct Request {
    /// The bundle folder (created if needed).
    pub out: PathBuf,
    /// The OS the bundle is for.
    pub os: Os,
    /// Toolkit version prefix (None: the recommended one).
    pub cuda: Option<Version>,
    /// A cuDNN release (prefix) instead of the recommended one.
    pub cudnn: Option<Version>,
    /// Leave cuDNN out.
    pub no_cudnn: bool,
    /// Mirror base URLs tried before NVIDIA.
    pub mirrors: Vec<String>,
    /// Parallel connections per download.
    pub connections: usize,
    /// NVIDIA's installer, or the component wheels (resolved now, saved in the bundle).
    pub method: Method,
    /// The PyPI simple index for `Method::Wheels` (None: pypi.org).
    pub pypi_index: Option<String>,
    /// `cuda-toolkit` components for `Method::Wheels` (None: the developer set).
    pub components: Option<Vec<String>>,
}

/// Why no bundle was made.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Nothing fits the target machines (the recommendation's blockers say why).
    #[error("nothing fits the target machines")]
    Blocked(Vec<Message>),
    #[error(transparent)]
    Cudnn(#[from] CudnnVersionError),
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error("{0}")]
    Wheels(#[from] crate::wheels::WheelError),
    /// The last segment of a file's address is not one plain file name.
    #[error("{url}: this address names a file that cannot be used: {why}")]
    UnsafeName {
        url: String,
        why: crate::safe_path::Unsafe,
    },
}

impl BundleError {
    /// What to do about it, for the command line's `hint:` line.
    pub fn hint(&self) -> Message {
        match self {
            BundleError::Blocked(_) => crate::msg!("hint_bundle_blocked"),
            BundleError::Cudnn(e) => e.hint(),
            BundleError::Download(e) => e.hint(),
            BundleError::Wheels(e) => e.hint(),
            BundleError::UnsafeName { .. } => crate::msg!("hint_bundle_unsafe_name"),
        }
    }
}

/// One file to fetch into the bundle.
struct Item {
    kind: &'static str,
    version: Version,
    url: String,
    expected: Expected,
    published: Published,
}

/// Where a file's hash comes from when the tables give none.
enum Published {
    /// The package index gave the SHA-256 (wheels).
    Index,
    ToolkitMd5,
    CudnnManifest(Os, u32),
}

/// Makes a bundle for machines with `facts`: recommends the developer goal (toolkit and
/// cuDNN), downloads each file into `req.out` (hashes from the tables, else the ones
/// NVIDIA publishes), and writes the manifest last. `progress` sees each download;
/// `done` is called after each file.
pub fn make(
    tables: &Tables,
    facts: &Facts,
    req: &Request,
    progress: &dyn Reporter,
    done: &mut dyn FnMut(&BundleFile),
) -> Result<Manifest, BundleError> {
    let rec = crate::recommend::recommend(
        tables,
        facts,
        &crate::recommend::Request {
            goal: Goal::Developer,
            cuda: req.cuda.clone(),
            method: req.method,
            driver: Default::default(),
            distro: None,
            ..Default::default()
        },
    );
    if !rec.fits() {
        return Err(BundleError::Blocked(rec.blockers));
    }
    // A Jetson board takes nothing of a PC's: JetPack provides it (#32).
    if let Some(j) = rec.jetson {
        return Err(BundleError::Blocked(vec![j.headline]));
    }
    let tk = rec
        .toolkit
        .as_ref()
        .expect("a fitting developer recommendation has a toolkit");
    let items = if req.method == Method::Wheels {
        wheel_items(tables, req, tk, rec.cudnn.as_ref())?
    } else {
        installer_items(tables, req, tk, rec.cudnn.as_ref())?
    };
    create_dir(&req.out)?;
    let host = crate::platform::Host::real();
    let opts = Options::default();
    let mut files = Vec::new();
    for mut item in items {
        // The bundle keeps each file under its address's last segment (as an install
        // from the bundle looks it up): one plain name, or nothing is written.
        let file = crate::safe_path::file_name(download::file_name_of(&item.url))
            .map_err(|why| BundleError::UnsafeName {
                url: item.url.clone(),
                why,
            })?
            .to_string();
        // Not in the tables: the hash NVIDIA publishes beside the file (none: the
        // manifest records what was downloaded).
        let published = || match item.published {
            Published::Index => Ok(None),
            Published::ToolkitMd5 => {
                published::toolkit_md5(&item.version, &file, &req.mirrors, &opts, None).map(|m| {
                    m.map(|md5| Expected {
                        md5: Some(md5),
                        ..Default::default()
                    })
                })
            }
            Published::CudnnManifest(os, major) => {
                published::cudnn_expected(&item.version, os, major, &req.mirrors, &opts, None)
            }
        };
        if let Some(e) = lookup_expected(&file, item.expected.clone(), None, published)? {
            item.expected = e;
        }
        let dl = download::Request {
            url: item.url.clone(),
            mirrors: req.mirrors.clone(),
            expected: item.expected.clone(),
            dest: req.out.join(&file),
            connections: req.connections,
            cache_dir: crate::platform::cache_dir(&host),
            bundle_dirs: vec![],
            allow_http: true,
        };
        let o = download::download(&dl, &opts, progress, &Cancel::default())?;
        let f = BundleFile {
            kind: item.kind.into(),
            version: item.version.to_string(),
            file,
            url: item.url,
            sha256: o.sha256,
            md5: o.md5,
            size: o.size,
        };
        done(&f);
        files.push(f);
    }
    let manifest = Manifest {
        format: 1,
        created_by: concat!("cuda-setup ", env!("CARGO_PKG_VERSION")).into(),
        os: req.os,
        files,
    };
    write(&req.out, &manifest).map_err(|e| DownloadError::io(&req.out.join(MANIFEST), e))?;
    Ok(manifest)
}

fn create_dir(dir: &Path) -> Result<(), DownloadError> {
    std::fs::create_dir_all(dir).map_err(|e| DownloadError::io(dir, e))
}

/// The cuDNN the bundle takes: none, the one named, or the recommended one.
fn cudnn_pick(
    tables: &Tables,
    req: &Request,
    tk: &ToolkitPick,
    recommended: Option<&CudnnPick>,
) -> Result<Option<CudnnPick>, CudnnVersionError> {
    match (&req.cudnn, req.no_cudnn) {
        (_, true) => Ok(None),
        (Some(v), _) => {
            crate::recommend::cudnn_by_version(tables, req.os, tk.version.major(), v).map(Some)
        }
        (None, _) => Ok(recommended.cloned()),
    }
}

/// NVIDIA's installer and, unless left out, cuDNN's archive.
fn installer_items(
    tables: &Tables,
    req: &Request,
    tk: &ToolkitPick,
    cudnn: Option<&CudnnPick>,
) -> Result<Vec<Item>, BundleError> {
    let inst = tk
        .installer
        .as_ref()
        .expect("the installer method's recommendation has an installer");
    let mut items = vec![Item {
        kind: "toolkit_installer",
        version: tk.version.clone(),
        url: inst.url.clone(),
        expected: Expected {
            sha256: inst.sha256.clone(),
            md5: inst.md5.clone(),
            size: inst.size,
        },
        published: Published::ToolkitMd5,
    }];
    if let Some(c) = cudnn_pick(tables, req, tk, cudnn)? {
        items.push(Item {
            kind: "cudnn_archive",
            expected: Expected {
                sha256: c.archive.sha256.clone(),
                md5: c.archive.md5.clone(),
                size: c.archive.size,
            },
            version: c.version,
            url: c.archive_url,
            published: Published::CudnnManifest(req.os, tk.version.major()),
        });
    }
    Ok(items)
}

/// The wheels an install with `--method wheels` takes, resolved on the index now; the
/// resolution is saved in the bundle so the install needs no index.
fn wheel_items(
    tables: &Tables,
    req: &Request,
    tk: &ToolkitPick,
    cudnn: Option<&CudnnPick>,
) -> Result<Vec<Item>, BundleError> {
    let cudnn = cudnn_pick(tables, req, tk, cudnn)?.map(|c| c.version);
    let wreq = crate::wheels::Request {
        index: req
            .pypi_index
            .clone()
            .unwrap_or_else(|| crate::wheels::index::PYPI.to_string()),
        toolkit: tk.version.clone(),
        os: req.os,
        components: req.components.clone(),
        cudnn,
    };
    create_dir(&req.out)?;
    let resolved = crate::wheels::resolve(&wreq, &Options::default(), &req.out)?;
    crate::wheels::save_resolution(&req.out, &resolved, req.os)?;
    let item = |w: &crate::wheels::Wheel, kind: &'static str| Item {
        kind,
        version: tk.version.clone(),
        url: w.url.clone(),
        expected: Expected {
            sha256: Some(w.sha256.clone()),
            md5: None,
            size: w.size,
        },
        published: Published::Index,
    };
    Ok(resolved
        .wheels
        .iter()
        .map(|w| item(w, "toolkit_wheel"))
        .chain(resolved.cudnn.iter().map(|w| item(w, "cudnn_wheel")))
        .collect())
}

/// The hash to check `file` against: `e` when it has one (the tables'), else the bundle
/// manifest's, else the one NVIDIA publishes beside the file (`published` is asked only
/// then). `Ok(None)`: no hash anywhere. Plans and bundles both look hashes up here.
pub fn lookup_expected(
    file: &str,
    mut e: crate::download::Expected,
    bundle: Option<&Manifest>,
    published: impl FnOnce()
        -> Result<Option<crate::download::Expected>, crate::download::DownloadError>,
) -> Result<Option<crate::download::Expected>, crate::download::DownloadError> {
    if e.sha256.is_some() || e.md5.is_some() {
        return Ok(Some(e));
    }
    if let Some(f) = bundle.and_then(|m| m.files.iter().find(|f| f.file == file)) {
        e.sha256 = Some(f.sha256.clone());
        e.size = Some(f.size);
        return Ok(Some(e));
    }
    Ok(published()?.map(|p| crate::download::Expected {
        size: p.size.or(e.size),
        ..p
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::GpuFact;

    fn facts(gpus: Vec<GpuFact>) -> Facts {
        Facts {
            os: Os::Linux,
            gpus,
            driver: Some("551.78".parse().unwrap()),
            driver_cuda: None,
            python: None,
            installed_toolkits: Vec::new(),
            unidentified_gpus: Vec::new(),
            notes: Vec::new(),
            host_kind: Default::default(),
            free_threaded: false,
        }
    }

    fn request(out: PathBuf) -> Request {
        Request {
            out,
            os: Os::Linux,
            cuda: None,
            cudnn: None,
            no_cudnn: false,
            mirrors: Vec::new(),
            connections: 1,
            method: Method::Installer,
            pypi_index: None,
            components: None,
        }
    }

    fn never(_: &BundleFile) {
        panic!("nothing should have been downloaded")
    }

    #[test]
    fn nothing_fitting_is_blocked_with_the_reasons_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bundle");
        let t = Tables::embedded().unwrap();
        match make(
            &t,
            &facts(Vec::new()),
            &request(out.clone()),
            &(),
            &mut never,
        ) {
            Err(BundleError::Blocked(b)) => assert!(!b.is_empty()),
            other => panic!("{other:?}"),
        }
        assert!(!out.exists());
    }

    #[test]
    fn a_cudnn_the_tables_lack_is_refused_before_any_download() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bundle");
        let t = Tables::embedded().unwrap();
        let gpu = GpuFact {
            name: None,
            compute_capability: "8.6".parse().unwrap(),
        };
        let req = Request {
            cudnn: Some("1.2".parse().unwrap()),
            ..request(out.clone())
        };
        match make(&t, &facts(vec![gpu]), &req, &(), &mut never) {
            Err(e @ BundleError::Cudnn(CudnnVersionError::Unknown(_))) => {
                assert_eq!(e.hint().key, "hint_cudnn_version_unknown")
            }
            other => panic!("{other:?}"),
        }
        assert!(!out.exists());
    }
}
