//! From a recommendation and the user's choices to a `Plan`: an ordered list of steps,
//! serialisable so `--dry-run` can show it and `--plan FILE` can run a saved one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bundle::Manifest as BundleManifest;
use crate::compat::Os;
use crate::download::{self, published};
use crate::recommend::{CudnnPick, Goal, Recommendation};
use crate::steps::{Artifact, DownloadSpec, Step, preflight, toolkit};
use crate::target::Target;
use crate::version::Version;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    pub goal: Goal,
    pub os: Os,
    pub root: Option<PathBuf>,
    pub toolkit: Option<Version>,
    pub cudnn: Option<Version>,
    pub torch_command: Option<String>,
    /// Things the user should know (a driver to install, a part left out). Serialised
    /// as `{key, params}`; a plan saved by an older version (English sentences here)
    /// still loads, without those sentences.
    #[serde(deserialize_with = "notes::current_only")]
    pub notes: Vec<Note>,
    pub steps: Vec<Step>,
}

/// Something the user should know about a plan. In JSON it is its message,
/// `{"key": "plan_note_…", "params": {…}}` (the catalogue's key, so a script renders it
/// as the front ends do); front ends say it in the user's language through
/// [`Note::message`].
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// Windows: the plan's first step installs the driver.
    DriverFirst {
        version: String,
    },
    /// The driver must be installed or updated, and the plan does not do it itself.
    DriverNeeded {
        update: bool,
        minimum: String,
        how: DriverHow,
    },
    NoCudnn,
    /// The wheels index gave no cuDNN: left out (`error`: the resolver's own words).
    CudnnNotOnIndex {
        error: String,
    },
    NoPython {
        min: String,
        max: String,
        command: String,
    },
    /// A plan `repair --fix` made of its fixes.
    Repair,
}

/// Who puts the driver in place when the plan has no driver step of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverHow {
    /// The CUDA installer's Display.Driver (`--with-driver`).
    CudaInstaller,
    /// The user said they will (`--skip-driver`, "I will install it myself").
    Yourself,
    /// Nobody yet: the link, or `--with-driver`.
    NotChosen,
    /// `--with-driver` was asked for, but the CUDA installer carries no driver new enough
    /// (13.x on Windows carries none, #20 class 6): nvidia.com/drivers.
    NotCarried,
}

impl Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.message().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Note {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Saved {
            key: String,
            #[serde(default)]
            params: std::collections::BTreeMap<String, String>,
        }
        let Saved { key, params } = Saved::deserialize(d)?;
        let get = |name: &str| params.get(name).cloned().unwrap_or_default();
        let driver = |update, how| Note::DriverNeeded {
            update,
            minimum: get("minimum"),
            how,
        };
        Ok(match key.as_str() {
            "plan_note_driver_first" => Note::DriverFirst {
                version: get("version"),
            },
            "plan_note_driver_install_cuda_installer" => driver(false, DriverHow::CudaInstaller),
            "plan_note_driver_install_yourself" => driver(false, DriverHow::Yourself),
            "plan_note_driver_install_link" => driver(false, DriverHow::NotChosen),
            "plan_note_driver_update_cuda_installer" => driver(true, DriverHow::CudaInstaller),
            "plan_note_driver_update_yourself" => driver(true, DriverHow::Yourself),
            "plan_note_driver_update_link" => driver(true, DriverHow::NotChosen),
            "plan_note_driver_install_not_carried" => driver(false, DriverHow::NotCarried),
            "plan_note_driver_update_not_carried" => driver(true, DriverHow::NotCarried),
            "plan_note_no_cudnn" => Note::NoCudnn,
            "plan_note_cudnn_not_on_index" => Note::CudnnNotOnIndex {
                error: get("error"),
            },
            "plan_note_no_python" => Note::NoPython {
                min: get("min"),
                max: get("max"),
                command: get("command"),
            },
            "plan_note_repair" => Note::Repair,
            other => {
                return Err(serde::de::Error::custom(format!(
                    "a note this version does not know: {other}"
                )));
            }
        })
    }
}

impl Note {
    /// The note as a message to render in the user's language.
    pub fn message(&self) -> crate::message::Message {
        use crate::msg;
        match self {
            Note::DriverFirst { version } => msg!("plan_note_driver_first", version = version),
            Note::DriverNeeded {
                update,
                minimum,
                how,
            } => match (update, how) {
                (false, DriverHow::CudaInstaller) => {
                    msg!("plan_note_driver_install_cuda_installer", minimum = minimum)
                }
                (false, DriverHow::Yourself) => {
                    msg!("plan_note_driver_install_yourself", minimum = minimum)
                }
                (false, DriverHow::NotChosen) => {
                    msg!("plan_note_driver_install_link", minimum = minimum)
                }
                (true, DriverHow::CudaInstaller) => {
                    msg!("plan_note_driver_update_cuda_installer", minimum = minimum)
                }
                (true, DriverHow::Yourself) => {
                    msg!("plan_note_driver_update_yourself", minimum = minimum)
                }
                (true, DriverHow::NotChosen) => {
                    msg!("plan_note_driver_update_link", minimum = minimum)
                }
                (false, DriverHow::NotCarried) => {
                    msg!("plan_note_driver_install_not_carried", minimum = minimum)
                }
                (true, DriverHow::NotCarried) => {
                    msg!("plan_note_driver_update_not_carried", minimum = minimum)
                }
            },
            Note::NoCudnn => msg!("plan_note_no_cudnn"),
            Note::CudnnNotOnIndex { error } => {
                msg!("plan_note_cudnn_not_on_index").with("error", error)
            }
            Note::NoPython { min, max, command } => {
                msg!(
                    "plan_note_no_python",
                    min = min,
                    max = max,
                    command = command
                )
            }
            Note::Repair => msg!("plan_note_repair"),
        }
    }
}

mod notes {
    use serde::{Deserialize, Deserializer};

    use super::Note;

    /// Notes as this version writes them; an older plan's English sentences are dropped
    /// (they only described it), so a plan file a user saved still runs. A note of a kind
    /// this version does not know is an error: the plan is from a newer cuda-setup.
    pub fn current_only<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Note>, D::Error> {
        // A sentence (an older version's note) or a note: told apart by their JSON type,
        // so a note's own error (one this version does not know) is the one reported.
        let mut out = Vec::new();
        for v in Vec::<serde_json::Value>::deserialize(d)? {
            if !v.is_string() {
                out.push(Note::deserialize(v).map_err(serde::de::Error::custom)?);
            }
        }
        Ok(out)
    }
}

/// Where cuDNN comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CudnnChoice {
    Recommended,
    Archive(PathBuf),
    Skip,
}

pub use crate::recommend::Method;

#[derive(Debug, Clone)]
pub struct Choices {
    pub method: Method,
    /// The PyPI simple index for `Method::Wheels` (None: pypi.org).
    pub pypi_index: Option<String>,
    /// `cuda-toolkit` extras for `Method::Wheels` (None: the developer set).
    pub components: Option<Vec<String>>,
    pub cudnn: CudnnChoice,
    pub mirrors: Vec<String>,
    pub bundle: Option<PathBuf>,
    pub with_driver: bool,
    /// "I will install the driver myself": no driver step even when one is needed.
    pub skip_driver: bool,
    pub python: Option<PathBuf>,
    pub connections: usize,
    pub visual_studio: bool,
}

impl Choices {
    /// What both front ends start from: `method`, the recommended cuDNN, no mirror and
    /// no bundle, the driver left alone, no Python, 8 connections, no Visual Studio.
    /// Set the rest with struct update syntax (`Choices { mirrors, ..Choices::new(m) }`).
    pub fn new(method: Method) -> Choices {
        Choices {
            method,
            pypi_index: None,
            components: None,
            cudnn: CudnnChoice::Recommended,
            mirrors: Vec::new(),
            bundle: None,
            with_driver: false,
            skip_driver: false,
            python: None,
            connections: 8,
            visual_studio: false,
        }
    }

    /// `n` connections per download, kept to 1–16.
    pub fn with_connections(self, n: usize) -> Choices {
        Choices {
            connections: n.clamp(1, 16),
            ..self
        }
    }

    /// What the machine decides rather than the user: whether Visual Studio is installed
    /// (Windows' vswhere; never for a `--root` sandbox, never on Linux), which decides
    /// the installer's Visual Studio integration. Runs a process: not on a UI thread.
    pub fn for_machine(self, target: &Target) -> Choices {
        #[cfg(windows)]
        let visual_studio =
            target.root.is_none() && crate::platform::windows::visual_studio().is_some();
        #[cfg(not(windows))]
        let visual_studio = {
            let _ = target;
            false
        };
        Choices {
            visual_studio,
            ..self
        }
    }
}

/// The interpreter PyTorch goes into when none is named: the first `python3`, else
/// `python`, on the target's PATH.
pub fn default_python(target: &Target) -> Option<PathBuf> {
    target
        .host
        .which("python3")
        .or_else(|| target.host.which("python"))
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    #[error("nothing to install: {0}")]
    Blocked(String),
    /// The source: why the published checksums could not be had, or did not name it.
    #[error("no published hash for {file}")]
    NoHash {
        file: String,
        #[source]
        source: crate::error::Cause,
    },
    #[error("{0}")]
    Wheels(#[source] crate::wheels::WheelError),
    /// A file name from the tables (or what refresh merged into them) that is not one
    /// plain file-name component.
    #[error("the tables name the {what} file in a way that cannot be used: {why}")]
    UnsafeName {
        what: &'static str,
        why: crate::safe_path::Unsafe,
    },
    #[error("{0}")]
    Other(String),
}

impl PlanError {
    pub fn hint(&self) -> &'static str {
        match self {
            PlanError::Wheels(e) => e.hint(),
            PlanError::UnsafeName { .. } => {
                "nothing was written; check the tables given with --compat-dir, or run `cuda-setup tables --refresh` again"
            }
            _ => "check the network or use --bundle; `--dry-run` shows the plan",
        }
    }
}

/// The installer is this much smaller than what it needs on disk (download + unpacked + installed).
const SPACE_FACTOR: f64 = 2.5;
const UNKNOWN_INSTALLER_BYTES: u64 = 3_500_000_000;
const SIZE_PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// [`crate::bundle::lookup_expected`] for a plan, where a file with no hash is an error.
fn expected_for(
    file: &str,
    e: download::Expected,
    bundle: Option<&BundleManifest>,
    published: impl FnOnce() -> Result<Option<download::Expected>, download::DownloadError>,
) -> Result<download::Expected, PlanError> {
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

/// Whether the recommended toolkit's installer carries a driver that meets the
/// recommendation's minimum: only then can `--with-driver` put the driver in place.
fn installer_carries_driver(rec: &Recommendation) -> bool {
    rec.toolkit.as_ref().is_some_and(|tk| {
        tk.carried_driver
            .as_ref()
            .is_some_and(|c| rec.driver.minimum.as_ref().is_none_or(|m| c >= m))
    })
}

pub fn build(target: &Target, rec: &Recommendation, choices: &Choices) -> Result<Plan, PlanError> {
    if !rec.fits() {
        let b: Vec<String> = rec.blockers.iter().map(crate::recommend::english).collect();
        return Err(PlanError::Blocked(b.join("; ")));
    }
    let mut notes = Vec::new();
    // Windows: the driver is the plan's first step (after the pre-flight checks).
    let driver = rec
        .driver
        .install
        .as_ref()
        .filter(|_| target.os == Os::Windows && !choices.skip_driver);
    match (rec.driver.action, driver) {
        (crate::recommend::DriverAction::None, _) => {}
        (_, Some(d)) => notes.push(Note::DriverFirst {
            version: d.version.to_string(),
        }),
        (action, None) => notes.push(Note::DriverNeeded {
            update: action != crate::recommend::DriverAction::Install,
            minimum: rec
                .driver
                .minimum
                .as_ref()
                .map_or("-".into(), ToString::to_string),
            how: if choices.with_driver && installer_carries_driver(rec) {
                DriverHow::CudaInstaller
            } else if choices.with_driver {
                DriverHow::NotCarried
            } else if choices.skip_driver {
                DriverHow::Yourself
            } else {
                DriverHow::NotChosen
            },
        }),
    }
    let bundle = match &choices.bundle {
        Some(dir) => Some(read_bundle(dir)?),
        None => None,
    };
    let bundle_dirs: Vec<PathBuf> = choices.bundle.iter().cloned().collect();
    let downloads = target.downloads_dir();
    let mut steps = Vec::new();
    let mut plan = Plan {
        format: 1,
        goal: rec.goal,
        os: target.os,
        root: target.root.clone(),
        toolkit: None,
        cudnn: None,
        torch_command: None,
        notes: Vec::new(),
        steps: Vec::new(),
    };

    match rec.goal {
        Goal::Developer => {
            let tk = rec
                .toolkit
                .as_ref()
                .ok_or_else(|| PlanError::Other("no toolkit in the recommendation".into()))?;
            let (dir, cudnn_wheel) = if choices.method == Method::Wheels {
                wheel_steps(target, rec, choices, &mut steps, &mut notes, &bundle_dirs)?
            } else {
                let inst = tk.installer.as_ref().ok_or_else(|| {
                    PlanError::Other(format!(
                        "the tables know no installer for CUDA {}: use --method wheels",
                        tk.version
                    ))
                })?;
                let dir = target.toolkit_dir(&tk.version);
                let file = crate::safe_path::file_name(&inst.file)
                    .map_err(|why| PlanError::UnsafeName {
                        what: "installer",
                        why,
                    })?
                    .to_string();
                let expected = expected_for(
                    &file,
                    download::Expected {
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
                            Some(&downloads),
                        )
                        .map(|m| {
                            m.map(|md5| download::Expected {
                                md5: Some(md5),
                                ..Default::default()
                            })
                        })
                    },
                )?;
                let installer = downloads.join(&file);
                // The tables rarely give the installer's size: take it from a copy already
                // here, else ask the server the download will use first (not when the
                // toolkit is installed: then nothing is fetched). Only when neither tells
                // is the need a guess.
                let installed = crate::steps::toolkit_missing(target, &dir, &tk.version).is_empty();
                let size = expected
                    .size
                    .or_else(|| std::fs::metadata(&installer).ok().map(|m| m.len()))
                    .or_else(|| {
                        let first = download::source_urls(&inst.url, &choices.mirrors);
                        (!installed)
                            .then(|| download::remote_size(&first[0], SIZE_PROBE_TIMEOUT))
                            .flatten()
                    });
                steps.push(Step::Preflight(preflight::Inputs {
                    toolkit_dir: Some(dir.clone()),
                    toolkit_version: Some(tk.version.clone()),
                    needed_bytes: (size.unwrap_or(UNKNOWN_INSTALLER_BYTES) as f64 * SPACE_FACTOR)
                        as u64,
                    needed_is_estimate: size.is_none(),
                    work_dir: downloads.clone(),
                    needs_admin: true,
                    developer: true,
                    from_wheels: false,
                    driver: false,
                }));
                steps.push(Step::Download(DownloadSpec {
                    what: Artifact::ToolkitInstaller,
                    url: inst.url.clone(),
                    mirrors: choices.mirrors.clone(),
                    sha256: expected.sha256,
                    md5: expected.md5,
                    size: expected.size,
                    dest: installer.clone(),
                    bundle_dirs: bundle_dirs.clone(),
                    cache_dir: crate::platform::cache_dir(&target.host)
                        .filter(|_| target.root.is_none()),
                    connections: choices.connections,
                }));
                steps.push(Step::InstallToolkit(toolkit::InstallSpec {
                    version: tk.version.clone(),
                    installer,
                    dir: dir.clone(),
                    subpackages: if target.os == Os::Windows {
                        toolkit::subpackages(
                            &tk.version,
                            choices.visual_studio,
                            // A driver step of its own already installs the driver.
                            choices.with_driver
                                && driver.is_none()
                                && installer_carries_driver(rec),
                        )
                    } else {
                        Vec::new()
                    },
                    timeout_minutes: 60,
                }));
                (dir, None)
            };
            plan.toolkit = Some(tk.version.clone());
            let cudnn_archive = match (&choices.cudnn, &rec.cudnn) {
                (CudnnChoice::Skip, _) => None,
                (CudnnChoice::Archive(zip), _) => Some(zip.clone()),
                (CudnnChoice::Recommended, Some(c)) if cudnn_wheel.is_some() => {
                    plan.cudnn = Some(c.version.clone());
                    cudnn_wheel
                }
                (CudnnChoice::Recommended, None) => {
                    notes.push(Note::NoCudnn);
                    None
                }
                // The wheels method on Linux takes cuDNN from the index only (the resolver's
                // note says why it is left out), as before the tarball was handled.
                (CudnnChoice::Recommended, _)
                    if choices.method == Method::Wheels && target.os == Os::Linux =>
                {
                    None
                }
                // NVIDIA's redist archive for this OS (Windows zip, Linux tar.xz), its
                // hash from the tables or NVIDIA's redist manifest.
                (CudnnChoice::Recommended, Some(c)) => {
                    let (step, dest) =
                        cudnn_download_step(target, c, choices, bundle.as_ref(), &bundle_dirs)?;
                    steps.push(step);
                    plan.cudnn = Some(c.version.clone());
                    Some(dest)
                }
            };
            if let Some(archive) = &cudnn_archive {
                steps.push(Step::InstallCudnn {
                    archive: archive.clone(),
                    cuda_dir: dir.clone(),
                });
            }
            steps.push(Step::ConfigureEnv {
                cuda_dir: dir.clone(),
                version: tk.version.clone(),
            });
            steps.push(Step::Verify {
                cuda_dir: dir,
                version: tk.version.clone(),
                cudnn: cudnn_archive.is_some(),
                // The developer goal: a toolkit a developer can build with.
                build: true,
            });
        }
        Goal::Pytorch => {
            let torch = rec
                .torch
                .as_ref()
                .ok_or_else(|| PlanError::Other("no PyTorch build in the recommendation".into()))?;
            plan.torch_command = Some(torch.command.clone());
            steps.push(Step::Preflight(preflight::Inputs {
                toolkit_dir: None,
                toolkit_version: None,
                needed_bytes: 6_000_000_000,
                needed_is_estimate: true,
                work_dir: target.state_dir(),
                needs_admin: false,
                developer: false,
                from_wheels: false,
                driver: false,
            }));
            match &choices.python {
                Some(py) => {
                    steps.push(Step::InstallTorch {
                        python: py.clone(),
                        args: torch.run_args(&[], None),
                    });
                }
                None => notes.push(Note::NoPython {
                    min: torch.python_min.to_string(),
                    max: torch.python_max.to_string(),
                    command: torch.command.clone(),
                }),
            }
        }
    }
    if let Some(d) = driver {
        let file = crate::safe_path::file_name(&d.download.file)
            .map_err(|why| PlanError::UnsafeName {
                what: "driver installer",
                why,
            })?
            .to_string();
        let installer = downloads.join(&file);
        let mut mirrors = choices.mirrors.clone();
        mirrors.extend(d.mirrors.iter().cloned());
        let at = match steps.first_mut() {
            Some(Step::Preflight(inputs)) => {
                inputs.driver = true;
                inputs.needed_is_estimate |= d.download.size.is_none();
                inputs.needed_bytes = inputs
                    .needed_bytes
                    .saturating_add(d.download.size.unwrap_or(DRIVER_BYTES));
                1
            }
            _ => 0,
        };
        let driver_steps = [
            Step::Download(DownloadSpec {
                what: Artifact::DriverInstaller,
                url: d.download.url.clone(),
                mirrors,
                // NVIDIA publishes none: the signature is checked before it runs.
                sha256: None,
                md5: None,
                size: d.download.size,
                dest: installer.clone(),
                // A driver put in the bundle folder by hand is found by its name (its
                // signature is checked all the same).
                bundle_dirs: bundle_dirs.clone(),
                cache_dir: None,
                connections: choices.connections,
            }),
            Step::InstallDriver(crate::steps::driver::InstallSpec {
                version: d.version.clone(),
                package: d.package,
                installer,
                args: d.silent_args.clone(),
                timeout_minutes: 30,
            }),
        ];
        steps.splice(at..at, driver_steps);
    }
    plan.notes = notes;
    plan.steps = steps;
    Ok(plan)
}

/// NVIDIA's redist cuDNN archive for this OS (Windows zip, Linux tar.xz) as one download
/// step into our downloads folder: its hash from the tables, the bundle's manifest or
/// NVIDIA's redist manifest (a network read, through the mirrors).
fn cudnn_download_step(
    target: &Target,
    c: &CudnnPick,
    choices: &Choices,
    bundle: Option<&BundleManifest>,
    bundle_dirs: &[PathBuf],
) -> Result<(Step, PathBuf), PlanError> {
    let downloads = target.downloads_dir();
    let file = crate::safe_path::file_name(&c.archive.file)
        .map_err(|why| PlanError::UnsafeName {
            what: "cuDNN archive",
            why,
        })?
        .to_string();
    let e = expected_for(
        &file,
        download::Expected {
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
                Some(&downloads),
            )
        },
    )?;
    let dest = downloads.join(&file);
    let step = Step::Download(DownloadSpec {
        what: Artifact::CudnnArchive,
        url: c.archive_url.clone(),
        mirrors: choices.mirrors.clone(),
        sha256: e.sha256,
        md5: e.md5,
        size: e.size,
        dest: dest.clone(),
        bundle_dirs: bundle_dirs.to_vec(),
        cache_dir: crate::platform::cache_dir(&target.host).filter(|_| target.root.is_none()),
        connections: choices.connections,
    });
    Ok((step, dest))
}

/// A plan of cuDNN steps alone (the wizard's cuDNN page): the developer goal's.
fn cudnn_plan(target: &Target, cudnn: Option<Version>, steps: Vec<Step>) -> Plan {
    Plan {
        format: 1,
        goal: Goal::Developer,
        os: target.os,
        root: target.root.clone(),
        toolkit: None,
        cudnn,
        torch_command: None,
        notes: Vec::new(),
        steps,
    }
}

/// The wizard's "Download from NVIDIA": `pick`'s archive as a one-step plan, with the
/// user's mirrors, connections and offline bundle, for the executor (its lock, run log
/// and cancel) like any other plan. Finding the hash may read NVIDIA's redist manifest:
/// not on a UI thread.
pub fn cudnn_download(
    target: &Target,
    pick: &CudnnPick,
    choices: &Choices,
) -> Result<Plan, PlanError> {
    let bundle = match &choices.bundle {
        Some(dir) => Some(read_bundle(dir)?),
        None => None,
    };
    let bundle_dirs: Vec<PathBuf> = choices.bundle.iter().cloned().collect();
    let (step, _) = cudnn_download_step(target, pick, choices, bundle.as_ref(), &bundle_dirs)?;
    Ok(cudnn_plan(target, Some(pick.version.clone()), vec![step]))
}

/// The archive a plan downloads for cuDNN (what [`cudnn_download`] fetched).
pub fn cudnn_archive_of(plan: &Plan) -> Option<&Path> {
    plan.steps.iter().find_map(|s| match s {
        Step::Download(d) if d.what == Artifact::CudnnArchive => Some(d.dest.as_path()),
        _ => None,
    })
}

/// The wizard's "Install cuDNN": `archive` (checked on the page) into the toolkit at
/// `cuda_dir`, one step, for the executor.
pub fn cudnn_install(target: &Target, archive: &Path, cuda_dir: &Path) -> Plan {
    cudnn_plan(
        target,
        None,
        vec![Step::InstallCudnn {
            archive: archive.to_path_buf(),
            cuda_dir: cuda_dir.to_path_buf(),
        }],
    )
}

/// Room for a driver whose size is not recorded: an estimate, about twice the ≈ 0.9 GB
/// download (dossier section 12: 591.86 desktop ≈ 918 MB), as it unpacks beside itself.
const DRIVER_BYTES: u64 = 2_000_000_000;

/// The `wheels` method: resolve the component wheels on the index, then one download per
/// wheel and the assembly. Returns the toolkit folder and the cuDNN wheel's path, if any.
fn wheel_steps(
    target: &Target,
    rec: &Recommendation,
    choices: &Choices,
    steps: &mut Vec<Step>,
    notes: &mut Vec<Note>,
    bundle_dirs: &[PathBuf],
) -> Result<(PathBuf, Option<PathBuf>), PlanError> {
    let tk = rec
        .toolkit
        .as_ref()
        .ok_or_else(|| PlanError::Other("no toolkit in the recommendation".into()))?;
    let downloads = target.downloads_dir();
    let req = crate::wheels::Request {
        index: choices
            .pypi_index
            .clone()
            .unwrap_or_else(|| crate::wheels::index::PYPI.into()),
        toolkit: tk.version.clone(),
        os: target.os,
        components: choices.components.clone(),
        cudnn: match (&choices.cudnn, &rec.cudnn) {
            (CudnnChoice::Recommended, Some(c)) => Some(c.version.clone()),
            _ => None,
        },
    };
    // An offline bundle carries the resolution it was made with: use it as is, no index.
    let saved = bundle_dirs.iter().find_map(|d| {
        crate::wheels::read_resolution(d, &tk.version, target.os).map(|r| {
            let file = d.join(crate::wheels::resolution_file(&tk.version, target.os));
            (r, file.display().to_string())
        })
    });
    // Where the wheels' names came from, for an error about one of them.
    let (resolved, origin) = match saved {
        Some(r) => r,
        None => {
            let r = crate::wheels::resolve(&req, &download::Options::default(), &downloads)
                .map_err(PlanError::Wheels)?;
            let index = r.index.clone();
            (r, index)
        }
    };
    notes.extend(resolved.notes.iter().map(|error| Note::CudnnNotOnIndex {
        error: error.clone(),
    }));
    let dir = target.user_toolkit_dir(&tk.version);
    let total: u64 = resolved
        .wheels
        .iter()
        .chain(&resolved.cudnn)
        .map(|w| w.size.unwrap_or(50_000_000))
        .sum();
    steps.push(Step::Preflight(preflight::Inputs {
        toolkit_dir: Some(dir.clone()),
        toolkit_version: Some(tk.version.clone()),
        // Wheels, the unpacked tree and its staging copy.
        needed_bytes: total.saturating_mul(4),
        needed_is_estimate: false,
        work_dir: downloads.clone(),
        needs_admin: false,
        developer: true,
        from_wheels: true,
        driver: false,
    }));
    let fetch = |w: &crate::wheels::Wheel, what: Artifact| -> Result<(Step, PathBuf), PlanError> {
        let dest = downloads.join(w.file_name(&origin).map_err(PlanError::Wheels)?);
        let step = Step::Download(DownloadSpec {
            what,
            url: w.url.clone(),
            mirrors: Vec::new(),
            sha256: Some(w.sha256.clone()),
            md5: None,
            size: w.size,
            dest: dest.clone(),
            bundle_dirs: bundle_dirs.to_vec(),
            cache_dir: crate::platform::cache_dir(&target.host).filter(|_| target.root.is_none()),
            connections: choices.connections,
        });
        Ok((step, dest))
    };
    let mut paths = Vec::new();
    for w in &resolved.wheels {
        let (step, dest) = fetch(w, Artifact::ToolkitWheel)?;
        steps.push(step);
        paths.push(dest);
    }
    steps.push(Step::AssembleToolkit(crate::wheels::AssembleSpec {
        version: tk.version.clone(),
        wheels: paths,
        dir: dir.clone(),
    }));
    let cudnn = match &resolved.cudnn {
        Some(w) => {
            let (step, dest) = fetch(w, Artifact::CudnnArchive)?;
            steps.push(step);
            Some(dest)
        }
        None => None,
    };
    Ok((dir, cudnn))
}

fn read_bundle(dir: &Path) -> Result<BundleManifest, PlanError> {
    crate::bundle::read(dir).map_err(PlanError::Other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::lookup_expected;

    /// Every kind of note, each way the driver can be put in place.
    fn every_note() -> Vec<Note> {
        let mut all = vec![
            Note::DriverFirst {
                version: "581.57".into(),
            },
            Note::NoCudnn,
            Note::CudnnNotOnIndex {
                error: "cuDNN is left out: HTTP 404".into(),
            },
            Note::NoPython {
                min: "3.9".into(),
                max: "3.13".into(),
                command: "pip install torch".into(),
            },
            Note::Repair,
        ];
        for update in [false, true] {
            for how in [
                DriverHow::CudaInstaller,
                DriverHow::Yourself,
                DriverHow::NotChosen,
                DriverHow::NotCarried,
            ] {
                all.push(Note::DriverNeeded {
                    update,
                    minimum: "580.88".into(),
                    how,
                });
            }
        }
        all
    }

    /// Each note is a catalogue sentence in both languages, every placeholder filled, the
    /// raw error only in the details; in JSON it is its message and reads back the same.
    #[test]
    fn every_note_says_a_sentence_in_both_languages_and_reads_back() {
        use crate::i18n::{self, Lang};
        let mut keys = std::collections::BTreeSet::new();
        for n in every_note() {
            let m = n.message();
            assert!(i18n::has_key(m.key), "{m:?}");
            keys.insert(m.key);
            let (en, zh) = (i18n::render(&m, Lang::En), i18n::render(&m, Lang::Zh));
            assert!(!en.contains('{') && !zh.contains('{'), "{en} / {zh}");
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{zh}"
            );
            assert!(!zh.contains("HTTP 404"), "{zh}");
            let json = serde_json::to_value(&n).unwrap();
            assert_eq!(json["key"], m.key, "{json}");
            assert_eq!(serde_json::from_value::<Note>(json).unwrap(), n);
        }
        assert_eq!(keys.len(), every_note().len(), "one key per note");
        let m = every_note()[2].message();
        assert_eq!(
            i18n::details(&m, Lang::Zh).as_deref(),
            Some("cuDNN is left out: HTTP 404")
        );
    }

    /// A plan saved by an older version (English sentences as notes) still loads, without
    /// them; a note this version does not know is an error that names it.
    #[test]
    fn an_older_plans_sentences_are_dropped_and_an_unknown_note_is_refused() {
        let plan = |notes: serde_json::Value| {
            serde_json::json!({
                "format": 1, "goal": "pytorch", "os": "windows", "root": null,
                "toolkit": null, "cudnn": null, "torch_command": null,
                "notes": notes, "steps": [],
            })
        };
        let old = plan(serde_json::json!([
            "the NVIDIA driver must be updated to 580.88 or newer",
            {"key": "plan_note_no_cudnn", "params": {}, "text": "no cuDNN release fits"}
        ]));
        let p: Plan = serde_json::from_value(old).unwrap();
        assert_eq!(p.notes, vec![Note::NoCudnn]);
        let newer = plan(serde_json::json!([{"key": "plan_note_from_the_future"}]));
        let e = serde_json::from_value::<Plan>(newer)
            .unwrap_err()
            .to_string();
        assert!(e.contains("plan_note_from_the_future"), "{e}");
    }

    #[test]
    fn choices_start_from_the_same_defaults_and_keep_connections_in_range() {
        let c = Choices::new(Method::Wheels);
        assert_eq!(c.method, Method::Wheels);
        assert_eq!(c.cudnn, CudnnChoice::Recommended);
        assert_eq!(c.connections, 8);
        assert!(c.mirrors.is_empty() && c.bundle.is_none() && c.python.is_none());
        assert!(!c.with_driver && !c.visual_studio);
        assert_eq!(c.clone().with_connections(0).connections, 1);
        assert_eq!(c.clone().with_connections(99).connections, 16);
        assert_eq!(c.with_connections(4).connections, 4);
    }

    #[test]
    fn a_sandbox_root_never_integrates_visual_studio() {
        let root = std::env::temp_dir().join("cuda-setup-plan-choices");
        let target = Target::rooted(Os::Windows, &root);
        let c = Choices {
            visual_studio: true,
            ..Choices::new(Method::Installer)
        }
        .for_machine(&target);
        assert!(!c.visual_studio);
        assert_eq!(c.method, Method::Installer);
    }

    /// #20 class 6: `--with-driver` only leans on the CUDA installer when it carries a
    /// driver new enough. CUDA 13.x's Windows installer carries none: the note says so and
    /// the installer is not asked for a Display.Driver it does not have; 12.x's does.
    #[test]
    fn with_driver_leans_on_the_cuda_installer_only_when_it_carries_one() {
        use crate::recommend::{self, Facts, Goal, GpuFact, Request};
        let tables = crate::compat::Tables::embedded().unwrap();
        let root = std::env::temp_dir().join("cuda-setup-plan-with-driver");
        let target = Target::rooted(Os::Windows, &root);
        let plan_for = |cuda: &str| {
            let facts = Facts {
                os: Os::Windows,
                gpus: vec![GpuFact {
                    name: None,
                    compute_capability: "8.9".parse().unwrap(),
                }],
                driver: Some("511.65".parse().unwrap()),
                driver_cuda: None,
                python: Some("3.12".parse().unwrap()),
                installed_toolkits: vec![],
                unidentified_gpus: vec![],
                notes: vec![],
            };
            let mut rec = recommend::recommend(
                &tables,
                &facts,
                &Request {
                    goal: Goal::Developer,
                    cuda: Some(cuda.parse().unwrap()),
                    method: Method::Installer,
                },
            );
            // No driver package of its own, as when none is known for this GPU; a known
            // hash, so the plan asks no server for one.
            rec.driver.install = None;
            if let Some(i) = rec.toolkit.as_mut().and_then(|t| t.installer.as_mut()) {
                i.sha256 = Some("a".repeat(64));
            }
            let choices = Choices {
                with_driver: true,
                cudnn: CudnnChoice::Skip,
                ..Choices::new(Method::Installer)
            };
            (rec.clone(), build(&target, &rec, &choices).unwrap())
        };
        let driver_note = |plan: &Plan| {
            plan.notes
                .iter()
                .find_map(|n| match n {
                    Note::DriverNeeded { how, .. } => Some(*how),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("a driver note in {:?}", plan.notes))
        };
        let display_driver = |plan: &Plan| {
            plan.steps.iter().any(|s| {
                matches!(s, Step::InstallToolkit(spec)
                    if spec.subpackages.iter().any(|p| p == "Display.Driver"))
            })
        };
        let (rec, plan) = plan_for("13");
        assert_eq!(rec.toolkit.as_ref().unwrap().carried_driver, None);
        assert_eq!(driver_note(&plan), DriverHow::NotCarried);
        assert!(!display_driver(&plan));
        let text = crate::i18n::render(
            &Note::DriverNeeded {
                update: true,
                minimum: "580.88".into(),
                how: DriverHow::NotCarried,
            }
            .message(),
            crate::i18n::Lang::En,
        );
        assert!(text.contains("carries no driver"), "{text}");
        let (rec, plan) = plan_for("12.8");
        assert!(rec.toolkit.as_ref().unwrap().carried_driver.is_some());
        assert_eq!(driver_note(&plan), DriverHow::CudaInstaller);
        assert!(display_driver(&plan));
    }

    fn no_publisher() -> Result<Option<download::Expected>, download::DownloadError> {
        panic!("the published hash was asked for although one was known")
    }

    #[test]
    fn a_known_hash_is_used_before_the_bundle_and_the_published_one() {
        let given = download::Expected {
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
        let known = download::Expected {
            size: Some(42),
            ..Default::default()
        };
        let got = lookup_expected("f.run", known.clone(), None, || {
            Ok(Some(download::Expected {
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
