//! The plan itself: from a recommendation, the user's choices and what was looked up
//! ([`Resolved`]) to an ordered list of steps. Pure: no network, no files.

use std::path::{Path, PathBuf};

use crate::compat::Os;
use crate::download::Expected;
use crate::recommend::{CudnnPick, Goal, Method, Recommendation, ToolkitPick};
use crate::steps::{Artifact, DownloadSpec, Step, preflight, toolkit};
use crate::target::Target;
use crate::version::Version;

use super::resolve::{Installer, Resolved, Wheels};
use super::{Choices, CudnnChoice, DriverHow, Note, Plan, PlanError, safe_name};

/// The installer is this much smaller than what it needs on disk (download + unpacked + installed).
const SPACE_FACTOR: f64 = 2.5;
const UNKNOWN_INSTALLER_BYTES: u64 = 3_500_000_000;

/// Whether the recommended toolkit's installer carries a driver that meets the
/// recommendation's minimum: only then can `--with-driver` put the driver in place.
fn installer_carries_driver(rec: &Recommendation) -> bool {
    rec.toolkit.as_ref().is_some_and(|tk| {
        tk.carried_driver
            .as_ref()
            .is_some_and(|c| rec.driver.minimum.as_ref().is_none_or(|m| c >= m))
    })
}

/// WSL2 (#32): nothing inside it may install a driver, the CUDA runfile's included, so
/// `--with-driver` is refused before anything is looked up.
pub(super) fn refuse_driver_in_wsl(
    rec: &Recommendation,
    choices: &Choices,
) -> Result<(), PlanError> {
    if rec.wsl.is_some() && choices.with_driver {
        return Err(PlanError::DriverInWsl);
    }
    Ok(())
}

/// The plan for `rec` with the user's `choices`: a pure function of its inputs, the
/// look-ups ([`super::resolve`]) among them. No network, no files.
pub fn build(
    target: &Target,
    rec: &Recommendation,
    choices: &Choices,
    resolved: &Resolved,
) -> Result<Plan, PlanError> {
    tracing::debug!(
        os = ?target.os,
        root = ?target.root,
        goal = ?rec.goal,
        toolkit = ?rec.toolkit.as_ref().map(|t| &t.version),
        "plan: building"
    );
    if rec.jetson.is_some() {
        tracing::info!("plan: a Jetson board, JetPack provides everything");
        return Err(PlanError::Jetson);
    }
    if !rec.fits() {
        let b: Vec<String> = rec.blockers.iter().map(crate::recommend::english).collect();
        tracing::info!(blockers = %b.join("; "), "plan: blocked");
        return Err(PlanError::Blocked(b.join("; ")));
    }
    refuse_driver_in_wsl(rec, choices)?;
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
            how: if rec.wsl.is_some() {
                DriverHow::OnWindows
            } else if choices.with_driver && installer_carries_driver(rec) {
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
                wheel_steps(target, tk, choices, resolved, &mut steps, &mut notes)?
            } else {
                let inst = tk.installer.as_ref().ok_or_else(|| {
                    PlanError::Other(format!(
                        "the tables know no installer for CUDA {}: use --method wheels",
                        tk.version
                    ))
                })?;
                let dir = target.toolkit_dir(&tk.version);
                let file = safe_name(&inst.file, "installer")?;
                let Installer { expected, size } =
                    resolved.installer.clone().ok_or(PlanError::NotResolved {
                        what: "the CUDA installer's checksum",
                    })?;
                let installer = downloads.join(&file);
                steps.push(Step::Preflight(preflight::Inputs {
                    toolkit_dir: Some(dir.clone()),
                    toolkit_version: Some(tk.version.clone()),
                    needed_bytes: if resolved.toolkit_present {
                        0
                    } else {
                        (size.unwrap_or(UNKNOWN_INSTALLER_BYTES) as f64 * SPACE_FACTOR) as u64
                    },
                    needed_is_estimate: size.is_none() && !resolved.toolkit_present,
                    work_dir: downloads.clone(),
                    needs_admin: true,
                    developer: true,
                    from_wheels: false,
                    driver: false,
                }));
                // A complete toolkit in its folder is kept: nothing to fetch or run.
                if !resolved.toolkit_present {
                    steps.push(Step::Download(DownloadSpec {
                        what: Artifact::ToolkitInstaller,
                        url: inst.url.clone(),
                        mirrors: choices.mirrors.clone(),
                        sha256: expected.sha256,
                        md5: expected.md5,
                        size: expected.size,
                        dest: installer.clone(),
                        bundle_dirs: bundle_dirs.clone(),
                        cache_dir: cache_dir(target),
                        connections: choices.connections,
                    }));
                    steps.push(Step::InstallToolkit(toolkit::InstallSpec {
                        version: tk.version.clone(),
                        installer,
                        dir: dir.clone(),
                        subpackages: if target.os == Os::Windows {
                            toolkit::subpackages(
                                &tk.version,
                                resolved.visual_studio,
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
                }
                (dir, None)
            };
            plan.toolkit = Some(tk.version.clone());
            let cudnn_archive = match (&choices.cudnn, &rec.cudnn) {
                (CudnnChoice::Skip, _) => None,
                (CudnnChoice::Archive(zip), _) => Some(zip.clone()),
                (CudnnChoice::Recommended, None) => {
                    notes.push(Note::NoCudnn);
                    None
                }
                (CudnnChoice::Recommended, Some(c)) => match cudnn_wheel {
                    Some(wheel) => {
                        plan.cudnn = Some(c.version.clone());
                        Some(wheel)
                    }
                    None => match nvidia_cudnn(target, rec, choices, resolved.wheels.as_ref()) {
                        Some(c) => {
                            let (step, dest) = cudnn_download_step(
                                target,
                                c,
                                choices,
                                resolved.cudnn_archive.as_ref(),
                            )?;
                            steps.push(step);
                            plan.cudnn = Some(c.version.clone());
                            Some(dest)
                        }
                        None => None,
                    },
                },
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
                        auto: choices.measured.clone(),
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
        let driver_steps = driver_steps(target, d, choices)?;
        steps.splice(at..at, driver_steps);
    }
    plan.notes = notes;
    plan.steps = steps;
    tracing::info!(
        steps = plan.steps.len(),
        toolkit = ?plan.toolkit,
        cudnn = ?plan.cudnn,
        notes = plan.notes.len(),
        "plan: built"
    );
    Ok(plan)
}

/// The Windows display driver's two steps: its download into our downloads folder (no
/// hash: NVIDIA publishes none; the signature is checked before it runs), then its silent
/// install. Also what repair plans to put back a driver Windows Update replaced (#33).
pub fn driver_steps(
    target: &Target,
    d: &crate::recommend::DriverInstall,
    choices: &Choices,
) -> Result<Vec<Step>, PlanError> {
    let file = safe_name(&d.download.file, "driver installer")?;
    let installer = target.downloads_dir().join(&file);
    let mut mirrors = choices.mirrors.clone();
    mirrors.extend(d.mirrors.iter().cloned());
    Ok(vec![
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
            bundle_dirs: choices.bundle.iter().cloned().collect(),
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
    ])
}

/// NVIDIA's redist cuDNN archive for this OS (Windows zip, Linux tar.xz) as one download
/// step into our downloads folder, with the hashes [`super::resolve`] found for it.
fn cudnn_download_step(
    target: &Target,
    c: &CudnnPick,
    choices: &Choices,
    expected: Option<&Expected>,
) -> Result<(Step, PathBuf), PlanError> {
    let file = safe_name(&c.archive.file, "cuDNN archive")?;
    let e = expected.cloned().ok_or(PlanError::NotResolved {
        what: "the cuDNN archive's checksum",
    })?;
    let dest = target.downloads_dir().join(&file);
    let step = Step::Download(DownloadSpec {
        what: Artifact::CudnnArchive,
        url: c.archive_url.clone(),
        mirrors: choices.mirrors.clone(),
        sha256: e.sha256,
        md5: e.md5,
        size: e.size,
        dest: dest.clone(),
        bundle_dirs: choices.bundle.iter().cloned().collect(),
        cache_dir: cache_dir(target),
        connections: choices.connections,
    });
    Ok((step, dest))
}

/// The cuDNN a developer plan takes from NVIDIA's redist archive (not from a wheel):
/// the recommended one, unless the user chose another or none, or the wheels method
/// gives it (it takes cuDNN from the index: on Linux only from there, the resolver's note
/// says why it is left out). [`super::resolve`] looks its hashes up for the same answer.
pub(super) fn nvidia_cudnn<'a>(
    target: &Target,
    rec: &'a Recommendation,
    choices: &Choices,
    wheels: Option<&Wheels>,
) -> Option<&'a CudnnPick> {
    let wheels_cudnn = wheels.is_some_and(|w| w.resolved.cudnn.is_some());
    match (&choices.cudnn, rec.goal) {
        (CudnnChoice::Recommended, Goal::Developer) if !wheels_cudnn => {}
        _ => return None,
    }
    if choices.method == Method::Wheels && target.os == Os::Linux {
        return None;
    }
    rec.cudnn.as_ref()
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
/// and cancel) like any other plan; `expected` its hashes ([`super::resolve_cudnn`]).
pub fn build_cudnn_download(
    target: &Target,
    pick: &CudnnPick,
    choices: &Choices,
    expected: &Expected,
) -> Result<Plan, PlanError> {
    let (step, _) = cudnn_download_step(target, pick, choices, Some(expected))?;
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

/// The wizard's "Install PyTorch": `torch` into the Python at `python`, from the PyPI
/// mirror `index` when one is chosen, as a one-step plan for the executor; `auto`: the
/// sources its step measures first (#34).
pub fn pip_install(
    target: &Target,
    torch: &crate::recommend::TorchPick,
    python: &Path,
    index: Option<&str>,
    auto: crate::steps::torch_sources::AutoSources,
) -> Plan {
    Plan {
        format: 1,
        goal: Goal::Pytorch,
        os: target.os,
        root: target.root.clone(),
        toolkit: None,
        cudnn: None,
        torch_command: Some(torch.command.clone()),
        notes: Vec::new(),
        steps: vec![Step::InstallTorch {
            python: python.to_path_buf(),
            args: torch.run_args(&[], index),
            auto,
        }],
    }
}

/// Room for a driver whose size is not recorded: an estimate, about twice the ≈ 0.9 GB
/// download (dossier section 12: 591.86 desktop ≈ 918 MB), as it unpacks beside itself.
const DRIVER_BYTES: u64 = 2_000_000_000;

/// The `wheels` method: one download per resolved wheel, and the assembly. Returns the toolkit folder and the cuDNN wheel's path, if any.
fn wheel_steps(
    target: &Target,
    tk: &ToolkitPick,
    choices: &Choices,
    resolved: &Resolved,
    steps: &mut Vec<Step>,
    notes: &mut Vec<Note>,
) -> Result<(PathBuf, Option<PathBuf>), PlanError> {
    let Wheels {
        resolved,
        origin,
        measured,
    } = resolved.wheels.as_ref().ok_or(PlanError::NotResolved {
        what: "the toolkit's wheels",
    })?;
    let downloads = target.downloads_dir();
    notes.extend(measured.clone());
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
        let dest = downloads.join(w.file_name(origin).map_err(PlanError::Wheels)?);
        let step = Step::Download(DownloadSpec {
            what,
            url: w.url.clone(),
            mirrors: Vec::new(),
            sha256: Some(w.sha256.clone()),
            md5: None,
            size: w.size,
            dest: dest.clone(),
            bundle_dirs: choices.bundle.iter().cloned().collect(),
            cache_dir: cache_dir(target),
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

/// The download cache: the user's, never for a `--root` sandbox.
fn cache_dir(target: &Target) -> Option<PathBuf> {
    crate::platform::cache_dir(&target.host).filter(|_| target.root.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::{self, Facts, GpuFact, Request};

    /// What `resolve` would find for the CUDA installer, made by hand: its md5 and size.
    fn installer(size: Option<u64>) -> Resolved {
        Resolved {
            installer: Some(Installer {
                expected: Expected {
                    md5: Some("0123456789abcdef0123456789abcdef".into()),
                    ..Default::default()
                },
                size,
            }),
            ..Default::default()
        }
    }

    fn developer(os: Os, method: Method) -> Recommendation {
        let tables = crate::compat::Tables::embedded().unwrap();
        let facts = Facts {
            os,
            gpus: vec![GpuFact {
                name: None,
                compute_capability: "8.9".parse().unwrap(),
            }],
            driver: Some("580.88".parse().unwrap()),
            driver_cuda: None,
            python: Some("3.12".parse().unwrap()),
            installed_toolkits: vec![],
            unidentified_gpus: vec![],
            notes: vec![],
            host_kind: Default::default(),
            free_threaded: false,
        };
        let rec = recommend::recommend(
            &tables,
            &facts,
            &Request {
                goal: Goal::Developer,
                cuda: Some("12.8".parse().unwrap()),
                method,
                driver: Default::default(),
                distro: None,
                ..Default::default()
            },
        );
        assert!(rec.fits() && rec.cudnn.is_some(), "{:?}", rec.blockers);
        rec
    }

    fn wheel(project: &str, size: u64) -> crate::wheels::Wheel {
        crate::wheels::Wheel {
            project: project.into(),
            version: "1.0".into(),
            filename: format!("{project}-1.0-py3-none-win_amd64.whl"),
            url: format!("https://files.example/{project}.whl"),
            sha256: "cd".repeat(32),
            size: Some(size),
        }
    }

    /// `build` is a function of what it is given: a hand-made `Resolved` makes the plan,
    /// with no server to ask and no file on disk (the root does not exist). The hashes,
    /// the sizes and Visual Studio come from it, not from the tables or the machine.
    #[test]
    fn a_plan_is_built_from_what_was_looked_up_with_no_network_and_no_files() {
        let target = Target::rooted(Os::Windows, Path::new("/nonexistent/cuda-setup-plan"));
        let rec = developer(Os::Windows, Method::Installer);
        let resolved = Resolved {
            cudnn_archive: Some(Expected {
                sha256: Some("ef".repeat(32)),
                md5: None,
                size: Some(7),
            }),
            visual_studio: true,
            ..installer(Some(1_000))
        };
        let choices = Choices::new(Method::Installer);
        let plan = build(&target, &rec, &choices, &resolved).unwrap();
        let kinds: Vec<_> = plan.steps.iter().map(Step::kind).collect();
        use crate::steps::StepKind as K;
        assert_eq!(
            kinds,
            [
                K::Preflight,
                K::DownloadToolkit,
                K::InstallToolkit,
                K::DownloadCudnn,
                K::InstallCudnn,
                K::ConfigureEnv,
                K::Verify
            ]
        );
        let download = |what| {
            plan.steps.iter().find_map(|s| match s {
                Step::Download(d) if d.what == what => Some(d.clone()),
                _ => None,
            })
        };
        let tk = download(Artifact::ToolkitInstaller).unwrap();
        assert_eq!(tk.md5.as_deref(), Some("0123456789abcdef0123456789abcdef"));
        assert_eq!(tk.cache_dir, None, "a sandbox never uses the user's cache");
        let cudnn = download(Artifact::CudnnArchive).unwrap();
        assert_eq!(
            (cudnn.sha256.as_deref(), cudnn.size),
            (Some(&*"ef".repeat(32)), Some(7))
        );
        match &plan.steps[0] {
            Step::Preflight(i) => {
                assert_eq!(i.needed_bytes, 2_500, "the size it was given, times 2.5");
                assert!(!i.needed_is_estimate);
            }
            s => panic!("{s:?}"),
        }
        assert!(
            plan.steps
                .iter()
                .any(|s| matches!(s, Step::InstallToolkit(t)
            if t.subpackages.iter().any(|p| p.starts_with("visual_studio_integration"))))
        );
        // The same plan twice: nothing else feeds it.
        assert_eq!(build(&target, &rec, &choices, &resolved).unwrap(), plan);
        // cuDNN's hashes not looked up: the plan says what it lacks.
        let e = build(&target, &rec, &choices, &installer(None)).unwrap_err();
        assert!(
            matches!(e, PlanError::NotResolved { what } if what.contains("cuDNN")),
            "{e:?}"
        );
        // No size known: the pre-flight need is a guess, and says so.
        let skip = Choices {
            cudnn: CudnnChoice::Skip,
            ..Choices::new(Method::Installer)
        };
        match &build(&target, &rec, &skip, &installer(None)).unwrap().steps[0] {
            Step::Preflight(i) => assert!(i.needed_is_estimate),
            s => panic!("{s:?}"),
        }
        // Nothing looked up: the plan says what it lacks, it does not go and fetch it.
        let e = build(&target, &rec, &skip, &Resolved::default()).unwrap_err();
        assert!(matches!(e, PlanError::NotResolved { .. }), "{e:?}");
    }

    /// The wheels method from a hand-made resolution: one download per wheel, the
    /// assembly, and cuDNN from its wheel (no NVIDIA archive, so none is looked up).
    #[test]
    fn a_wheels_plan_is_built_from_a_resolution_made_by_hand() {
        let target = Target::rooted(Os::Windows, Path::new("/nonexistent/cuda-setup-plan"));
        let rec = developer(Os::Windows, Method::Wheels);
        let version = rec.toolkit.as_ref().unwrap().version.clone();
        let resolved = Resolved {
            wheels: Some(Wheels {
                resolved: crate::wheels::Resolved {
                    toolkit: version.clone(),
                    index: "https://files.example/simple".into(),
                    components: vec!["nvcc".into(), "cudart".into()],
                    wheels: vec![
                        wheel("nvidia-cuda-nvcc", 100),
                        wheel("nvidia-cuda-runtime", 50),
                    ],
                    cudnn: Some(wheel("nvidia-cudnn-cu12", 30)),
                    notes: vec![],
                },
                origin: "https://files.example/simple".into(),
                measured: None,
            }),
            ..Default::default()
        };
        assert!(
            nvidia_cudnn(
                &target,
                &rec,
                &Choices::new(Method::Wheels),
                resolved.wheels.as_ref()
            )
            .is_none()
        );
        let plan = build(&target, &rec, &Choices::new(Method::Wheels), &resolved).unwrap();
        let kinds: Vec<_> = plan.steps.iter().map(Step::kind).collect();
        use crate::steps::StepKind as K;
        assert_eq!(
            kinds,
            [
                K::Preflight,
                K::DownloadToolkit,
                K::DownloadToolkit,
                K::AssembleToolkit,
                K::DownloadCudnn,
                K::InstallCudnn,
                K::ConfigureEnv,
                K::Verify
            ]
        );
        match &plan.steps[0] {
            Step::Preflight(i) => assert_eq!(i.needed_bytes, 180 * 4),
            s => panic!("{s:?}"),
        }
        assert_eq!(plan.cudnn, rec.cudnn.as_ref().map(|c| c.version.clone()));
        let e = build(
            &target,
            &rec,
            &Choices::new(Method::Wheels),
            &Resolved::default(),
        );
        assert!(matches!(e, Err(PlanError::NotResolved { .. })), "{e:?}");
    }

    /// #20 class 6: `--with-driver` only leans on the CUDA installer when it carries a
    /// driver new enough. CUDA 13.x's Windows installer carries none: the note says so and
    /// the installer is not asked for a Display.Driver it does not have; 12.x's does.
    #[test]
    fn with_driver_leans_on_the_cuda_installer_only_when_it_carries_one() {
        use crate::recommend::{self, Facts, GpuFact, Request};
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
                host_kind: Default::default(),
                free_threaded: false,
            };
            let mut rec = recommend::recommend(
                &tables,
                &facts,
                &Request {
                    goal: Goal::Developer,
                    cuda: Some(cuda.parse().unwrap()),
                    method: Method::Installer,
                    driver: Default::default(),
                    distro: None,
                    ..Default::default()
                },
            );
            // No driver package of its own, as when none is known for this GPU.
            rec.driver.install = None;
            let choices = Choices {
                with_driver: true,
                cudnn: CudnnChoice::Skip,
                ..Choices::new(Method::Installer)
            };
            (
                rec.clone(),
                build(&target, &rec, &choices, &installer(None)).unwrap(),
            )
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
}
