//! Every look-up a plan depends on beyond the tables and the user's choices: the offline
//! bundle's manifest, NVIDIA's published checksums, the installer's size, the wheels on
//! the index, Visual Studio on this machine. Done here, once, into a [`Resolved`], so
//! [`super::build`] is a pure function (and a test can hand it one made by hand).

use std::path::Path;

use crate::bundle::Manifest as BundleManifest;
use crate::compat::Os;
use crate::download::{self, Expected, published};
use crate::recommend::{CudnnPick, Goal, Method, Recommendation, ToolkitPick};
use crate::target::Target;

use super::{Choices, CudnnChoice, PlanError};

/// What [`resolve`] found out for one recommendation and set of choices.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// The CUDA installer (the installer method).
    pub installer: Option<Installer>,
    /// NVIDIA's cuDNN archive, when the plan downloads it ([`nvidia_cudnn`]): its hashes.
    pub cudnn_archive: Option<Expected>,
    /// The component wheels (the wheels method).
    pub wheels: Option<Wheels>,
    /// Visual Studio is installed (Windows' vswhere; never for a `--root` sandbox, never
    /// on Linux): the installer then integrates with it.
    pub visual_studio: bool,
    /// The installer method's toolkit is already complete in its folder: the plan keeps
    /// it (no download, no installer run) and only sets the environment and verifies.
    pub toolkit_present: bool,
}

/// The CUDA installer's hashes and its size, as far as anything tells.
#[derive(Debug, Clone, Default)]
pub struct Installer {
    /// From the tables, else the bundle's manifest, else NVIDIA's `md5sum.txt`.
    pub expected: Expected,
    /// The size for the pre-flight need: the hashes' size, else a copy already here, else
    /// what the first server says (not asked when the toolkit is installed). None: a guess.
    pub size: Option<u64>,
}

/// The wheels method's resolution, and where its wheels' names came from (the bundle's
/// resolution file or the index), for an error about one of them.
#[derive(Debug, Clone)]
pub struct Wheels {
    pub resolved: crate::wheels::Resolved,
    pub origin: String,
    /// The index the automatic PyPI choice measured, as a note (#34).
    pub measured: Option<super::Note>,
}

const SIZE_PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The look-ups for [`super::build`]: reads the bundle's manifest and, where the tables
/// leave them out, asks NVIDIA's servers for checksums and the installer's size, and the
/// index for wheels. Network and disk: not on a UI thread. A plan that cannot be made
/// (blocked, no toolkit) looks nothing up: `build` says why.
pub fn resolve(
    target: &Target,
    rec: &Recommendation,
    choices: &Choices,
) -> Result<Resolved, PlanError> {
    let mut r = Resolved::default();
    let tk = match (&rec.toolkit, rec.goal) {
        (Some(tk), Goal::Developer) if rec.fits() => tk,
        _ => return Ok(r),
    };
    let bundle = read_bundle(choices)?;
    if choices.method == Method::Wheels {
        r.wheels = Some(wheels(target, tk, rec, choices)?);
    } else if let Some(inst) = &tk.installer {
        let file = super::safe_name(&inst.file, "installer")?;
        let expected = expected_for(
            &file,
            Expected {
                sha256: inst.sha256.clone(),
                md5: inst.md5.clone(),
                size: inst.size,
            },
            bundle.as_ref(),
            || {
                published::toolkit_md5(
                    &tk.version,
                    &file,
                    &choices.mirrors,
                    &download::Options::default(),
                    Some(&target.downloads_dir()),
                )
                .map(|m| {
                    m.map(|md5| Expected {
                        md5: Some(md5),
                        ..Default::default()
                    })
                })
            },
        )?;
        // The tables rarely give the installer's size: take it from a copy already here,
        // else ask the server the download will use first (not when the toolkit is
        // installed: then nothing is fetched).
        let installed =
            crate::steps::toolkit_missing(target, &target.toolkit_dir(&tk.version), &tk.version)
                .is_empty();
        let size = expected
            .size
            .or_else(|| {
                std::fs::metadata(target.downloads_dir().join(&file))
                    .ok()
                    .map(|m| m.len())
            })
            .or_else(|| {
                let first = download::source_urls(&inst.url, &choices.mirrors);
                (!installed)
                    .then(|| download::remote_size(&first[0], SIZE_PROBE_TIMEOUT))
                    .flatten()
            });
        r.installer = Some(Installer { expected, size });
        r.toolkit_present = installed;
        r.visual_studio = visual_studio(target);
    }
    if let Some(c) = super::build::nvidia_cudnn(target, rec, choices, r.wheels.as_ref()) {
        r.cudnn_archive = Some(cudnn_expected(target, c, choices, bundle.as_ref())?);
    }
    Ok(r)
}

/// The look-up for [`super::build_cudnn_download`]: the hashes of `pick`'s archive.
pub fn resolve_cudnn(
    target: &Target,
    pick: &CudnnPick,
    choices: &Choices,
) -> Result<Expected, PlanError> {
    let bundle = read_bundle(choices)?;
    cudnn_expected(target, pick, choices, bundle.as_ref())
}

/// Whether Visual Studio is installed where the installer would integrate with it
/// (vswhere runs: a process).
fn visual_studio(target: &Target) -> bool {
    #[cfg(windows)]
    {
        target.os == Os::Windows
            && target.root.is_none()
            && crate::platform::windows::visual_studio().is_some()
    }
    #[cfg(not(windows))]
    {
        let _ = target;
        false
    }
}

fn read_bundle(choices: &Choices) -> Result<Option<BundleManifest>, PlanError> {
    choices
        .bundle
        .as_deref()
        .map(|dir| crate::bundle::read(dir).map_err(PlanError::Other))
        .transpose()
}

/// NVIDIA's redist cuDNN archive's hashes: the tables', the bundle's manifest's, or
/// NVIDIA's redist manifest's (a network read, through the mirrors).
fn cudnn_expected(
    target: &Target,
    c: &CudnnPick,
    choices: &Choices,
    bundle: Option<&BundleManifest>,
) -> Result<Expected, PlanError> {
    let file = super::safe_name(&c.archive.file, "cuDNN archive")?;
    expected_for(
        &file,
        Expected {
            sha256: c.archive.sha256.clone(),
            md5: c.archive.md5.clone(),
            size: c.archive.size,
        },
        bundle,
        || {
            published::cudnn_expected(
                &c.version,
                target.os,
                c.cuda_major,
                &choices.mirrors,
                &download::Options::default(),
                Some(&target.downloads_dir()),
            )
        },
    )
}

/// The wheels for the recommended toolkit (and cuDNN): an offline bundle's saved
/// resolution as it is, else the index's.
fn wheels(
    target: &Target,
    tk: &ToolkitPick,
    rec: &Recommendation,
    choices: &Choices,
) -> Result<Wheels, PlanError> {
    let saved = choices
        .bundle
        .as_deref()
        .and_then(|d| saved_resolution(d, tk, target.os));
    if let Some(w) = saved {
        return Ok(w);
    }
    // Automatic: the fastest listed index answers the resolution and serves the wheels.
    let (index, measured) = if choices.pypi_auto {
        let picked = crate::steps::pypi_race::race(
            &crate::steps::pypi_race::candidates(),
            crate::steps::pypi_race::BUDGET,
        );
        let note = super::Note::PypiMeasured {
            name: picked.as_ref().map(|c| c.name.clone()).unwrap_or_default(),
            url: picked.as_ref().map(|c| c.url.clone()).unwrap_or_default(),
        };
        (picked.map(|c| c.url), Some(note))
    } else {
        (choices.pypi_index.clone(), None)
    };
    let req = crate::wheels::Request {
        index: index.unwrap_or_else(|| crate::wheels::index::PYPI.into()),
        toolkit: tk.version.clone(),
        os: target.os,
        components: choices.components.clone(),
        cudnn: match (&choices.cudnn, &rec.cudnn) {
            (CudnnChoice::Recommended, Some(c)) => Some(c.version.clone()),
            _ => None,
        },
    };
    let resolved =
        crate::wheels::resolve(&req, &download::Options::default(), &target.downloads_dir())
            .map_err(PlanError::Wheels)?;
    let origin = resolved.index.clone();
    Ok(Wheels {
        resolved,
        origin,
        measured,
    })
}

fn saved_resolution(dir: &Path, tk: &ToolkitPick, os: Os) -> Option<Wheels> {
    crate::wheels::read_resolution(dir, &tk.version, os).map(|resolved| Wheels {
        resolved,
        measured: None,
        origin: dir
            .join(crate::wheels::resolution_file(&tk.version, os))
            .display()
            .to_string(),
    })
}

/// [`crate::bundle::lookup_expected`] for a plan, where a file with no hash is an error.
fn expected_for(
    file: &str,
    e: Expected,
    bundle: Option<&BundleManifest>,
    published: impl FnOnce() -> Result<Option<Expected>, download::DownloadError>,
) -> Result<Expected, PlanError> {
    match crate::bundle::lookup_expected(file, e, bundle, published) {
        Ok(Some(e)) => Ok(e),
        Ok(None) => Err(PlanError::NoHash {
            file: file.into(),
            source: crate::error::text("NVIDIA's checksum list does not name it"),
        }),
        Err(err) => Err(PlanError::NoHash {
            file: file.into(),
            source: crate::error::cause(err),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::lookup_expected;

    #[test]
    fn a_sandbox_root_never_integrates_visual_studio() {
        let root = std::env::temp_dir().join("cuda-setup-plan-choices");
        assert!(!visual_studio(&Target::rooted(Os::Windows, &root)));
        assert!(!visual_studio(&Target::rooted(Os::Linux, &root)));
    }

    /// A plan that cannot be made looks nothing up: `build` says why.
    #[test]
    fn nothing_is_looked_up_for_a_plan_without_a_toolkit() {
        let root = std::env::temp_dir().join("cuda-setup-plan-resolve-none");
        let target = Target::rooted(Os::Windows, &root);
        let rec = Recommendation {
            goal: Goal::Pytorch,
            ..crate::recommend::recommend(
                &crate::compat::Tables::embedded().unwrap(),
                &crate::recommend::Facts {
                    os: Os::Windows,
                    gpus: vec![],
                    driver: None,
                    driver_cuda: None,
                    python: None,
                    installed_toolkits: vec![],
                    unidentified_gpus: vec![],
                    notes: vec![],
                    host_kind: Default::default(),
                    free_threaded: false,
                },
                &crate::recommend::Request {
                    goal: Goal::Pytorch,
                    cuda: None,
                    method: Method::Installer,
                    driver: Default::default(),
                    distro: None,
                    ..Default::default()
                },
            )
        };
        let choices = Choices {
            // A bundle that is not there: read only when a plan needs it.
            bundle: Some(root.join("no-such-bundle")),
            ..Choices::new(Method::Installer)
        };
        let r = resolve(&target, &rec, &choices).unwrap();
        assert!(r.installer.is_none() && r.cudnn_archive.is_none() && r.wheels.is_none());
    }

    fn no_publisher() -> Result<Option<Expected>, download::DownloadError> {
        panic!("the published hash was asked for although one was known")
    }

    #[test]
    fn a_known_hash_is_used_before_the_bundle_and_the_published_one() {
        let given = Expected {
            sha256: Some("aa".into()),
            md5: None,
            size: Some(3),
        };
        let got = lookup_expected("f.run", given, None, no_publisher)
            .unwrap()
            .unwrap();
        assert_eq!((got.sha256.as_deref(), got.size), (Some("aa"), Some(3)));
        let bundle = BundleManifest {
            format: 1,
            created_by: "test".into(),
            os: Os::Linux,
            files: vec![crate::bundle::BundleFile {
                kind: "toolkit_installer".into(),
                version: "12.4".into(),
                file: "f.run".into(),
                url: "https://example.com/f.run".into(),
                sha256: "bb".into(),
                md5: "cc".into(),
                size: 7,
            }],
        };
        let got = lookup_expected("f.run", Default::default(), Some(&bundle), no_publisher)
            .unwrap()
            .unwrap();
        assert_eq!((got.sha256.as_deref(), got.size), (Some("bb"), Some(7)));
    }

    #[test]
    fn the_published_hash_keeps_the_known_size_and_none_is_an_error_for_a_plan() {
        let known = Expected {
            size: Some(42),
            ..Default::default()
        };
        let got = lookup_expected("f.run", known.clone(), None, || {
            Ok(Some(Expected {
                md5: Some("dd".into()),
                ..Default::default()
            }))
        })
        .unwrap()
        .unwrap();
        assert_eq!((got.md5.as_deref(), got.size), (Some("dd"), Some(42)));
        assert!(
            lookup_expected("f.run", known.clone(), None, || Ok(None))
                .unwrap()
                .is_none()
        );
        match expected_for("f.run", known, None, || Ok(None)) {
            Err(PlanError::NoHash { file, .. }) => assert_eq!(file, "f.run"),
            other => panic!("{other:?}"),
        }
    }
}
