//! The individual checks. Each looks at one layer and returns findings with their fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Finding, Fix, Severity, show};
use crate::compat::{Os, Tables};
use crate::detect::{SystemReport, Toolkit};
use crate::devlayout::LinkName;
use crate::message::Message;
use crate::msg;
use crate::steps::{Step, env, toolkit_missing};
use crate::target::Target;
use crate::version::{ComputeCapability, Version};

pub struct Input<'a> {
    pub target: &'a Target,
    pub tables: &'a Tables,
    pub report: &'a SystemReport,
    pub env: &'a BTreeMap<String, String>,
    /// How far the cuDNN check reads our files.
    pub depth: crate::cudnn::Depth,
}

impl Input<'_> {
    fn var(&self, name: &str) -> Option<&str> {
        let hit = match self.target.os {
            Os::Windows => self
                .env
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v),
            Os::Linux => self.env.get(name),
        };
        hit.map(String::as_str).filter(|v| !v.is_empty())
    }

    fn path_list(&self, name: &str) -> Vec<String> {
        let sep = if self.target.os == Os::Windows {
            ';'
        } else {
            ':'
        };
        self.var(name)
            .map(|v| {
                v.split(sep)
                    .filter(|s| !s.trim().is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Toolkits whose nvcc and runtime are present.
    fn intact(&self) -> impl Iterator<Item = &Toolkit> {
        self.report.toolkits.iter().filter(|t| {
            t.version
                .as_ref()
                .is_some_and(|v| toolkit_missing(self.target, &t.path, v).is_empty())
        })
    }

    /// The toolkit the environment points to (CUDA_PATH / CUDA_HOME), else the newest intact.
    fn active(&self) -> Option<&Toolkit> {
        let want = self
            .var("CUDA_PATH")
            .or_else(|| self.var("CUDA_HOME"))
            .map(|p| crate::platform::canonical(Path::new(p)));
        want.and_then(|w| {
            self.intact()
                .find(|t| crate::platform::canonical(&t.path) == w)
        })
        .or_else(|| self.intact().next())
    }
}

fn finding(id: &'static str, severity: Severity, message: Message, fix: Fix) -> Finding {
    Finding {
        id,
        severity,
        message,
        fix,
    }
}

fn manual(key: &'static str) -> Fix {
    Fix::Manual {
        how: Message::new(key),
    }
}

fn steps(s: Vec<Step>) -> Fix {
    Fix::Steps { steps: s }
}

/// Every layer but Python's (see [`python`]; its findings come after these).
pub fn layers(i: &Input) -> Vec<Finding> {
    let mut out = Vec::new();
    driver(i, &mut out);
    toolkits(i, &mut out);
    cannot_link(i, &mut out);
    environment(i, &mut out);
    cudnn(i, &mut out);
    wheels_foreign(i, &mut out);
    interrupted(i, &mut out);
    out
}

/// Files of the user's in a toolkit we built from wheels: a rebuild carries them over
/// (`wheels::keep`), so they are only named. A listing against our record, no hashing.
fn wheels_foreign(i: &Input, out: &mut Vec<Finding>) {
    for t in &i.report.toolkits {
        let Ok(Some(record)) = crate::wheels::assemble::read_record(&t.path) else {
            continue;
        };
        let cudnn = crate::cudnn::txn::read_manifest(&t.path).ok().flatten();
        let (id, message) = match crate::wheels::keep::foreign(&t.path, &record, cudnn.as_ref()) {
            Some(found) if found.is_empty() => continue,
            Some(found) => {
                let mut files = found
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if found.len() > 10 {
                    files.push_str(&format!(" (+{})", found.len() - 10));
                }
                let m = msg!("repair_wheels_foreign", dir = show(&t.path), files = files);
                ("repair_wheels_foreign", m)
            }
            None => {
                let m = msg!("repair_wheels_foreign_unlisted", dir = show(&t.path));
                ("repair_wheels_foreign_unlisted", m)
            }
        };
        out.push(finding(
            id,
            Severity::Info,
            message,
            manual("repair_fix_wheels_foreign"),
        ));
    }
}

/// NVIDIA GPUs whose compute capability is known: the torch checks judge against them.
fn judged_gpus(report: &SystemReport) -> impl Iterator<Item = &crate::detect::Gpu> {
    report
        .nvidia_gpus()
        .filter(|g| g.compute_capability.is_some())
}

/// Whether [`python`] can find anything with this report: without such a GPU it says
/// nothing, so the interpreters need not be run at all.
pub fn wants_python(report: &SystemReport) -> bool {
    judged_gpus(report).next().is_some()
}

fn driver(i: &Input, out: &mut Vec<Finding>) {
    let r = i.report;
    for g in r.nvidia_gpus() {
        if let Some(p) = &g.problem {
            // The same sentence detect's notes say (`GpuProblem::message_key`).
            out.push(finding(
                p.key.message_key(),
                Severity::Error,
                p.message(&g.name),
                manual(p.key.fix_key()),
            ));
        }
    }
    let Some(driver) = &r.driver else {
        if r.nvidia_gpus().next().is_some() && !r.nvidia_gpus().any(|g| g.problem.is_some()) {
            out.push(finding(
                "repair_driver_missing",
                Severity::Error,
                msg!("repair_driver_missing"),
                manual("repair_fix_driver"),
            ));
        }
        return;
    };
    for t in &r.toolkits {
        let Some(v) = &t.version else { continue };
        let Some(line) = i.tables.toolkit_line(v.major()) else {
            continue;
        };
        let floor = line.driver_floor(i.target.os);
        let releases = &i.tables.toolkits.releases;
        let release = releases.iter().find(|rel| rel.version == *v).or_else(|| {
            releases
                .iter()
                .rfind(|rel| rel.version.major_minor() == v.major_minor())
        });
        let release_min = release.and_then(|rel| rel.driver_min(i.target.os).cloned());
        let beyond = match &driver.cuda_version {
            Some(c) => v.major_minor() > c.major_minor(),
            None => release_min.as_ref().is_some_and(|m| &driver.version < m),
        };
        if driver.version < *floor {
            let m = msg!(
                "repair_driver_too_old",
                driver = &driver.version,
                toolkit = v.major_minor(),
                minimum = release_min.as_ref().unwrap_or(floor)
            );
            out.push(finding(
                "repair_driver_too_old",
                Severity::Error,
                m,
                manual("repair_fix_driver"),
            ));
        } else if beyond {
            let m = msg!(
                "repair_driver_minor_compat",
                driver = &driver.version,
                toolkit = v.major_minor(),
                minimum = release_min.as_ref().unwrap_or(floor)
            );
            out.push(finding(
                "repair_driver_minor_compat",
                Severity::Warning,
                m,
                manual("repair_fix_driver"),
            ));
        }
    }
}

fn toolkits(i: &Input, out: &mut Vec<Finding>) {
    for t in &i.report.toolkits {
        let Some(v) = &t.version else {
            out.push(finding(
                "repair_toolkit_unknown",
                Severity::Warning,
                msg!("repair_toolkit_unknown", path = show(&t.path)),
                manual("repair_fix_reinstall_toolkit"),
            ));
            continue;
        };
        let missing = toolkit_missing(i.target, &t.path, v);
        if !missing.is_empty() {
            let m = msg!(
                "repair_toolkit_broken",
                path = show(&t.path),
                missing = missing.join(", ")
            );
            // The installer we downloaded earlier puts the files back.
            let fix = match installer_for(i.target, v) {
                Some(installer) => steps(vec![Step::InstallToolkit(
                    crate::steps::toolkit::InstallSpec {
                        version: v.clone(),
                        installer,
                        dir: t.path.clone(),
                        subpackages: if i.target.os == Os::Windows {
                            crate::steps::toolkit::subpackages(v, false, false)
                        } else {
                            Vec::new()
                        },
                        timeout_minutes: 60,
                    },
                )]),
                None => manual("repair_fix_reinstall_toolkit"),
            };
            out.push(finding("repair_toolkit_broken", Severity::Error, m, fix));
            continue;
        }
        // version.json and nvcc must tell the same story.
        if t.version_source == Some(crate::detect::toolkit::VersionSource::VersionJson)
            && let Some(nvcc) = &t.nvcc
            && let Ok(o) = i
                .target
                .host
                .run(nvcc, &["--version"], Duration::from_secs(15))
            && let Some(nv) = crate::detect::toolkit::parse_nvcc_version(&o.stdout)
            && nv.major_minor() != v.major_minor()
        {
            let m = msg!(
                "repair_toolkit_versions_disagree",
                path = show(&t.path),
                file_version = v,
                nvcc_version = nv
            );
            out.push(finding(
                "repair_toolkit_versions_disagree",
                Severity::Warning,
                m,
                manual("repair_fix_reinstall_toolkit"),
            ));
        }
    }
}

/// The files a developer's build links (`-lcublas`, `cublas.lib`, the driver stub, cuDNN)
/// that an intact toolkit lacks: the toolkit runs programs, but programs built with it
/// do not link. Static file checks only (a few `exists` per toolkit, our two records):
/// the audit stays fast and runs nothing.
///
/// Severity: an Error for the active toolkit — the one CUDA_PATH / CUDA_HOME point at,
/// which nvcc, CMake's find_package(CUDAToolkit) and PyTorch's cpp_extension build with —
/// because it fails only at link time, after smoke and verify said all was well, and a
/// Warning for the others, which hurt only once someone switches to them.
fn cannot_link(i: &Input, out: &mut Vec<Finding>) {
    let os = i.target.os;
    let active = i.active().map(|t| t.path.clone());
    for t in i.intact() {
        let v = t.version.as_ref().expect("intact toolkits have a version");
        // cuDNN counts when we installed it; a name its record lists and that is gone is
        // `repair_cudnn_damaged`'s to say (and to reinstall).
        let cudnn = crate::cudnn::txn::read_manifest(&t.path).ok().flatten();
        let missing: Vec<LinkName> = crate::devlayout::link_names(os, &t.path, v, cudnn.is_some())
            .into_iter()
            .filter(|n| !n.present)
            .filter(|n| {
                n.lib != "cudnn"
                    || !cudnn
                        .as_ref()
                        .is_some_and(|m| m.files.iter().any(|f| f.path == n.rel))
            })
            .collect();
        if missing.is_empty() {
            continue;
        }
        let severity = if active.as_ref() == Some(&t.path) {
            Severity::Error
        } else {
            Severity::Warning
        };
        let message = |names: &[&LinkName]| {
            msg!(
                "repair_toolkit_cannot_link",
                path = show(&t.path),
                libs = names
                    .iter()
                    .map(|n| lib_words(&n.lib))
                    .collect::<Vec<_>>()
                    .join(", "),
                files = names
                    .iter()
                    .map(|n| n.rel.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let (toolkit, cudnn_names): (Vec<&LinkName>, Vec<&LinkName>) =
            missing.iter().partition(|n| n.lib != "cudnn");
        if !toolkit.is_empty() {
            // A tree we built from wheels is completed in place; NVIDIA's installer's
            // only its installer adds to. cuDNN's names are cuDNN's own (below): its
            // transaction owns its files.
            let fix = if crate::wheels::assemble::is_ours(&t.path) {
                steps(vec![Step::CompleteToolkit {
                    dir: t.path.clone(),
                    version: v.clone(),
                }])
            } else {
                installer_fix(i.target, i.tables, &t.path, v, &toolkit)
            };
            out.push(finding(
                "repair_toolkit_cannot_link",
                severity,
                message(&toolkit),
                fix,
            ));
        }
        // cuDNN we installed (from a wheel: NVIDIA's zip and tarball carry the link name,
        // so their records list it) without its link name: installed again from its
        // archive, which lays the name down. By hand: the install step takes a cuDNN its
        // record finds intact for installed and would change nothing.
        if let (false, Some(m)) = (cudnn_names.is_empty(), &cudnn) {
            let fix = match m.archive_path.as_ref().filter(|p| p.is_file()) {
                Some(a) => Fix::Manual {
                    how: msg!(
                        "repair_fix_cudnn_reinstall",
                        command = format!(
                            "cuda-setup cudnn install --archive {} --cuda-dir {}",
                            quote(show(a)),
                            quote(show(&t.path))
                        )
                    ),
                },
                None => manual("repair_fix_cudnn_archive"),
            };
            out.push(finding(
                "repair_toolkit_cannot_link",
                severity,
                message(&cudnn_names),
                fix,
            ));
        }
    }
}

/// A path or argument for a command line, quoted when it has a space.
fn quote(s: String) -> String {
    if s.contains(' ') {
        format!("\"{s}\"")
    } else {
        s
    }
}

/// A library's name as users know it (the same in every language).
fn lib_words(lib: &str) -> &str {
    match lib {
        "cublas" => "cuBLAS",
        "cublasLt" => "cuBLASLt",
        "cudnn" => "cuDNN",
        "cuda" => "libcuda",
        l => l,
    }
}

/// What to do about a tree NVIDIA's installer made that lacks link names: run that
/// installer again — on Windows with the sub-packages that lay them down (all of its
/// default selection when one of them has no known sub-package), on Linux the runfile
/// with `--toolkit` into the same folder.
fn installer_fix(
    target: &Target,
    tables: &Tables,
    dir: &Path,
    v: &Version,
    missing: &[&LinkName],
) -> Fix {
    let kind = match target.os {
        Os::Windows => crate::compat::InstallerKind::WindowsLocal,
        Os::Linux => crate::compat::InstallerKind::LinuxRunfile,
    };
    // The one we downloaded, else the release's file name, else NVIDIA's pattern.
    let installer = installer_for(target, v)
        .map(|p| show(&p))
        .or_else(|| {
            tables
                .toolkits
                .releases
                .iter()
                .find(|r| r.version == *v)
                .and_then(|r| r.installer(kind))
                .map(|inst| inst.file.clone())
        })
        .unwrap_or_else(|| match target.os {
            Os::Windows => format!("cuda_{v}_windows_x86_64.exe"),
            Os::Linux => format!("cuda_{v}_linux.run"),
        });
    let quoted = quote(installer);
    match target.os {
        Os::Windows => {
            let mut packages: Vec<&str> = Vec::new();
            for n in missing {
                match n.package.as_deref() {
                    Some(p) if !packages.contains(&p) => packages.push(p),
                    Some(_) => {}
                    None => {
                        return Fix::Manual {
                            how: msg!(
                                "repair_fix_toolkit_installer_full",
                                version = v.major_minor(),
                                command = format!("{quoted} -s")
                            ),
                        };
                    }
                }
            }
            Fix::Manual {
                how: msg!(
                    "repair_fix_toolkit_subpackages",
                    version = v.major_minor(),
                    packages = packages.join(", "),
                    command = format!("{quoted} -s {}", packages.join(" "))
                ),
            }
        }
        Os::Linux => Fix::Manual {
            how: msg!(
                "repair_fix_toolkit_runfile",
                version = v.major_minor(),
                command = format!(
                    "sudo sh {quoted} --silent --toolkit {}",
                    quote(format!("--toolkitpath={}", show(dir)))
                )
            ),
        },
    }
}

/// An installer for `v` among our downloads.
fn installer_for(target: &Target, v: &Version) -> Option<PathBuf> {
    let prefix = format!("cuda_{v}_");
    std::fs::read_dir(target.downloads_dir())
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let n = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            n.starts_with(&prefix) && !n.ends_with(".part") && !n.ends_with(".json")
        })
}

/// A PATH entry that looks like a CUDA toolkit's.
fn cuda_entry(e: &str) -> bool {
    let l = e.replace('\\', "/").to_ascii_lowercase();
    (l.contains("nvidia gpu computing toolkit/cuda/") || l.contains("/cuda"))
        && (l.ends_with("/bin")
            || l.ends_with("/bin/x64")
            || l.ends_with("/libnvvp")
            || l.ends_with("/bin/"))
}

fn same_dir(a: &str, b: &Path) -> bool {
    let n = |s: &str| {
        s.trim()
            .trim_end_matches(['\\', '/'])
            .replace('\\', "/")
            .to_ascii_lowercase()
    };
    n(a) == n(&b.display().to_string())
}

fn environment(i: &Input, out: &mut Vec<Finding>) {
    let os = i.target.os;
    let active = i.active();
    let configure = |t: &Toolkit| Step::ConfigureEnv {
        cuda_dir: t.path.clone(),
        version: t.version.clone().expect("intact toolkits have a version"),
    };
    // CUDA_PATH (CUDA_HOME on Linux) points to a folder that is gone.
    for name in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(v) = i.var(name)
            && !Path::new(v).is_dir()
        {
            let fix = match (active, os) {
                (Some(t), Os::Windows) => steps(vec![Step::SetEnv {
                    name: name.into(),
                    value: Some(show(&t.path)),
                }]),
                (Some(t), Os::Linux) => steps(vec![configure(t)]),
                (None, Os::Windows) => steps(vec![Step::SetEnv {
                    name: name.into(),
                    value: None,
                }]),
                (None, Os::Linux) => manual("repair_fix_reinstall_toolkit"),
            };
            out.push(finding(
                "repair_cuda_path_missing",
                Severity::Error,
                msg!("repair_cuda_path_missing", name = name, value = v),
                fix,
            ));
        }
    }
    if os == Os::Windows {
        if i.var("CUDA_PATH").is_none()
            && let Some(t) = active
        {
            out.push(finding(
                "repair_cuda_path_unset",
                Severity::Warning,
                msg!("repair_cuda_path_unset", toolkit = show(&t.path)),
                steps(vec![configure(t)]),
            ));
        }
        for (k, v) in i
            .env
            .iter()
            .filter(|(k, _)| k.to_ascii_uppercase().starts_with("CUDA_PATH_V"))
        {
            if !Path::new(v).is_dir() {
                out.push(finding(
                    "repair_cuda_path_versioned_stale",
                    Severity::Warning,
                    msg!("repair_cuda_path_versioned_stale", name = k, value = v),
                    steps(vec![Step::SetEnv {
                        name: k.clone(),
                        value: None,
                    }]),
                ));
            }
        }
    }
    let path = i.path_list("PATH");
    // PATH has the active toolkit's folders.
    if let Some(t) = active {
        let want = env::path_entries(os, &t.path, t.version.as_ref().expect("intact"));
        let missing: Vec<String> = want
            .iter()
            .filter(|w| !path.iter().any(|p| same_dir(p, w)))
            .map(|w| show(w))
            .collect();
        if !missing.is_empty() {
            out.push(finding(
                "repair_path_missing",
                Severity::Error,
                msg!("repair_path_missing", entries = missing.join(", ")),
                steps(vec![configure(t)]),
            ));
        }
    }
    // Entries for toolkits that are gone.
    let stale: Vec<&String> = path
        .iter()
        .filter(|p| cuda_entry(p) && !Path::new(p.trim()).is_dir())
        .collect();
    if !stale.is_empty() {
        let list: Vec<String> = stale.iter().map(|s| s.to_string()).collect();
        let fix = match os {
            Os::Windows => match scope_path_without(i.target, &list) {
                Some(new) => steps(vec![Step::SetEnv {
                    name: "Path".into(),
                    value: Some(new),
                }]),
                None => manual("repair_fix_path_other_scope"),
            },
            Os::Linux => manual("repair_fix_path_profile"),
        };
        out.push(finding(
            "repair_path_stale",
            Severity::Warning,
            msg!("repair_path_stale", entries = list.join(", ")),
            fix,
        ));
    }
    // Another copy of our runtime libraries earlier on the search path shadows ours.
    if let Some(t) = active {
        let (var, ours) = match os {
            Os::Windows => ("PATH", t.runtime_dir.clone()),
            Os::Linux => ("LD_LIBRARY_PATH", t.runtime_dir.clone()),
        };
        let dirs = i.path_list(var);
        let our_rank = dirs.iter().position(|d| same_dir(d, &ours));
        let names: Vec<String> = std::fs::read_dir(&ours)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| runtime_lib(os, n))
                    .collect()
            })
            .unwrap_or_default();
        for (rank, d) in dirs.iter().enumerate() {
            if our_rank.is_some_and(|r| rank >= r) || same_dir(d, &ours) {
                break;
            }
            if let Some(n) = names.iter().find(|n| Path::new(d.trim()).join(n).is_file()) {
                let m = msg!(
                    "repair_path_shadowed",
                    file = n,
                    dir = d,
                    ours = show(&ours)
                );
                let fix = match (
                    os,
                    scope_path_front(
                        i.target,
                        &env::path_entries(os, &t.path, t.version.as_ref().expect("intact")),
                    ),
                ) {
                    (Os::Windows, Some(new)) => steps(vec![Step::SetEnv {
                        name: "Path".into(),
                        value: Some(new),
                    }]),
                    (Os::Windows, None) => manual("repair_fix_path_other_scope"),
                    (Os::Linux, _) => manual("repair_fix_path_profile"),
                };
                out.push(finding("repair_path_shadowed", Severity::Warning, m, fix));
                break;
            }
        }
    }
}

fn runtime_lib(os: Os, name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    match os {
        Os::Windows => {
            (n.starts_with("cudart64_") || n.starts_with("cublas64_") || n.starts_with("cudnn64_"))
                && n.ends_with(".dll")
        }
        Os::Linux => {
            n.starts_with("libcudart.so.")
                || n.starts_with("libcublas.so.")
                || n.starts_with("libcudnn.so.")
        }
    }
}

/// The Path of the scope we write, without `remove`; None when the entries live in the
/// other scope (machine entries without administrator rights).
fn scope_path_without(target: &Target, remove: &[String]) -> Option<String> {
    let own = scope_path(target);
    let parts: Vec<&str> = own.split(';').filter(|p| !p.trim().is_empty()).collect();
    let kept: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !remove.iter().any(|r| r.trim() == p.trim()))
        .collect();
    (kept.len() < parts.len()).then(|| kept.join(";"))
}

/// The Path of the scope we write, with `entries` moved to the front.
fn scope_path_front(target: &Target, entries: &[PathBuf]) -> Option<String> {
    if !target.elevated {
        return None; // the machine PATH comes first and we may not write it
    }
    let own = scope_path(target);
    let rest: Vec<&str> = own
        .split(';')
        .filter(|p| !p.trim().is_empty() && !entries.iter().any(|e| same_dir(p, e)))
        .collect();
    let mut all: Vec<String> = entries.iter().map(|e| show(e)).collect();
    all.extend(rest.iter().map(|s| s.to_string()));
    Some(all.join(";"))
}

fn scope_path(target: &Target) -> String {
    env::windows_var(target, "Path").unwrap_or_default()
}

fn cudnn(i: &Input, out: &mut Vec<Finding>) {
    let os = i.target.os;
    for t in &i.report.toolkits {
        // A record of ours that is rejected is set aside by `verify` (which says why);
        // the user hears it here, since nothing tracks that cuDNN any more.
        let m = match crate::cudnn::txn::read_manifest(&t.path) {
            Ok(Some(m)) => Some(m),
            Ok(None) => continue,
            Err(_) => None,
        };
        let verified = crate::cudnn::verify_at(&t.path, i.depth);
        if let Err(crate::cudnn::CudnnError::BadState(r)) = &verified {
            out.push(finding(
                "repair_cudnn_record_rejected",
                Severity::Warning,
                msg!(
                    "repair_cudnn_record_rejected",
                    dir = show(&t.path),
                    file = show(&r.file),
                    why = &r.why,
                    moved = r.moved_to.as_deref().map_or_else(|| "-".into(), show)
                ),
                manual("repair_fix_cudnn_archive"),
            ));
            continue;
        }
        let Some(m) = m else { continue };
        if let Ok(r) = verified
            && !r.problems.is_empty()
        {
            let files: Vec<String> = r
                .problems
                .iter()
                .map(|p| format!("{} ({})", p.path, p.problem))
                .collect();
            let fix = match m.archive_path.as_ref().filter(|p| p.is_file()) {
                Some(a) => steps(vec![Step::InstallCudnn {
                    archive: a.clone(),
                    cuda_dir: t.path.clone(),
                }]),
                None => manual("repair_fix_cudnn_archive"),
            };
            out.push(finding(
                "repair_cudnn_damaged",
                Severity::Error,
                msg!(
                    "repair_cudnn_damaged",
                    dir = show(&t.path),
                    files = files.join(", ")
                ),
                fix,
            ));
        }
        if let (Some(c), Some(v)) = (m.cuda_major, &t.version)
            && c != v.major()
        {
            out.push(finding(
                "repair_cudnn_cuda_major",
                Severity::Error,
                msg!(
                    "repair_cudnn_cuda_major",
                    cudnn = &m.cudnn_version,
                    cuda = c,
                    toolkit = v.major_minor()
                ),
                manual("repair_fix_cudnn_archive"),
            ));
        }
    }
    for c in &i.report.cudnn {
        if let (Some(v), Some(lib)) = (&c.version, c.library_major)
            && v.major() != lib
        {
            out.push(finding(
                "repair_cudnn_header_library",
                Severity::Warning,
                msg!(
                    "repair_cudnn_header_library",
                    dir = show(&c.location),
                    header = v,
                    library = lib
                ),
                manual("repair_fix_cudnn_archive"),
            ));
        }
        if os == Os::Windows && c.library_major == Some(8) {
            let here = c
                .libraries
                .first()
                .and_then(|l| l.parent())
                .is_some_and(|d| d.join("zlibwapi.dll").is_file());
            let on_path = i
                .path_list("PATH")
                .iter()
                .any(|d| Path::new(d.trim()).join("zlibwapi.dll").is_file());
            if !here && !on_path {
                out.push(finding(
                    "repair_cudnn8_zlib",
                    Severity::Warning,
                    msg!("repair_cudnn8_zlib", dir = show(&c.location)),
                    manual("repair_fix_zlib"),
                ));
            }
        }
    }
}

fn interrupted(i: &Input, out: &mut Vec<Finding>) {
    for t in &i.report.toolkits {
        if crate::cudnn::txn::meta(&t.path)
            .join("cudnn-journal.json")
            .is_file()
        {
            out.push(finding(
                "repair_cudnn_interrupted",
                Severity::Error,
                msg!("repair_cudnn_interrupted", dir = show(&t.path)),
                steps(vec![Step::RecoverCudnn {
                    cuda_dir: t.path.clone(),
                }]),
            ));
        }
    }
    wheels_leftovers(i, out);
    match crate::run::check_interrupted(i.target) {
        Ok(Some(_)) => out.push(finding(
            "repair_install_interrupted",
            Severity::Error,
            msg!("repair_install_interrupted"),
            Fix::ResumeInstall,
        )),
        Ok(None) => {}
        Err(r) => out.push(finding(
            "repair_install_journal_rejected",
            Severity::Warning,
            msg!(
                "repair_install_journal_rejected",
                file = show(&r.file),
                why = &r.why,
                moved = r.moved_to.as_deref().map_or_else(|| "-".into(), show)
            ),
            manual("repair_fix_rerun_install"),
        )),
    }
}

/// Copies a killed wheels build left beside a toolkit folder (`.D.staging-*`, `.D.old-*`,
/// each a full toolkit): in the folders toolkits go to and beside every toolkit found.
fn wheels_leftovers(i: &Input, out: &mut Vec<Finding>) {
    let any: Version = "13.0".parse().expect("a version");
    let mut parents: Vec<PathBuf> = [i.target.toolkit_dir(&any), i.target.user_toolkit_dir(&any)]
        .into_iter()
        .chain(i.report.toolkits.iter().map(|t| t.path.clone()))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    parents.sort();
    parents.dedup();
    let mut by_dest: BTreeMap<PathBuf, Vec<crate::wheels::swap::Leftover>> = BTreeMap::new();
    for p in &parents {
        for l in crate::wheels::swap::scan(p) {
            by_dest.entry(l.dest.clone()).or_default().push(l);
        }
    }
    for (dest, found) in by_dest {
        let missing = std::fs::symlink_metadata(&dest).is_err();
        let restorable = found
            .iter()
            .any(|l| l.kind == crate::wheels::swap::Kind::Old);
        let names: Vec<String> = found.iter().map(|l| show(&l.path)).collect();
        out.push(finding(
            "repair_wheels_leftover",
            if missing && restorable {
                Severity::Error
            } else {
                Severity::Warning
            },
            msg!(
                "repair_wheels_leftover",
                dir = show(&dest),
                leftovers = names.join(", ")
            ),
            steps(vec![Step::RecoverToolkit { dir: dest }]),
        ));
    }
}

/// `sm_86` / `compute_90` entries of torch's arch list.
fn arch_covers(list: &[String], cc: ComputeCapability) -> bool {
    list.iter().any(|a| {
        let (ptx, digits) = match (a.strip_prefix("sm_"), a.strip_prefix("compute_")) {
            (Some(d), _) => (false, d),
            (_, Some(d)) => (true, d),
            _ => return false,
        };
        let Ok(c) =
            format!("sm_{}", digits.trim_end_matches(['a', 'f'])).parse::<ComputeCapability>()
        else {
            return false;
        };
        c.binary_runs_on(cc) || (ptx && c <= cc)
    })
}

/// Python and torch, from `report.pythons` (asked only when [`wants_python`]).
pub fn python(i: &Input, out: &mut Vec<Finding>) {
    let gpus: Vec<&crate::detect::Gpu> = judged_gpus(i.report).collect();
    if gpus.is_empty() {
        return;
    }
    for py in &i.report.pythons {
        let Some(torch) = &py.torch else { continue };
        // The fix: the recommended wheel for this Python and driver, replacing what is there.
        let fix = || {
            let mut facts = i.report.facts(i.target.os);
            facts.python = py.version.as_ref().map(Version::major_minor);
            let rec = crate::recommend::recommend(
                i.tables,
                &facts,
                &crate::recommend::Request {
                    goal: crate::recommend::Goal::Pytorch,
                    cuda: None,
                    method: crate::recommend::Method::Installer,
                },
            );
            match rec.torch {
                Some(t) => steps(vec![Step::InstallTorch {
                    python: py.path.clone(),
                    args: t.run_args(&["--force-reinstall"], None),
                }]),
                None => manual("repair_fix_torch"),
            }
        };
        let who = show(&py.path);
        if py.torch_cpu_build {
            out.push(finding(
                "repair_torch_cpu",
                Severity::Error,
                msg!("repair_torch_cpu", python = &who, torch = &torch.version),
                fix(),
            ));
            continue;
        }
        if let (Some(cuda), Some(driver)) = (
            torch.cuda.as_ref().and_then(|c| c.parse::<Version>().ok()),
            &i.report.driver,
        ) && let Some(line) = i.tables.toolkit_line(cuda.major())
            && driver.version < *line.driver_floor(i.target.os)
        {
            let m = msg!(
                "repair_torch_driver",
                python = &who,
                torch = &torch.version,
                cuda = &cuda,
                minimum = line.driver_floor(i.target.os)
            );
            out.push(finding("repair_torch_driver", Severity::Error, m, fix()));
            continue;
        }
        if !torch.arch_list.is_empty()
            && let Some(g) = gpus
                .iter()
                .find(|g| !arch_covers(&torch.arch_list, g.compute_capability.expect("filtered")))
        {
            let m = msg!(
                "repair_torch_arch",
                python = &who,
                torch = &torch.version,
                gpu = &g.name,
                sm = g.compute_capability.expect("filtered").sm(),
                archs = torch.arch_list.join(" ")
            );
            out.push(finding("repair_torch_arch", Severity::Error, m, fix()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_arch_lists() {
        let list: Vec<String> = [
            "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(
            arch_covers(&list, ComputeCapability::new(8, 9)),
            "sm_86 code runs on sm_89"
        );
        assert!(!arch_covers(&list, ComputeCapability::new(12, 0)));
        let ptx: Vec<String> = vec!["sm_90".into(), "compute_90".into()];
        assert!(arch_covers(&ptx, ComputeCapability::new(12, 0)), "PTX JIT");
        assert!(!arch_covers(&ptx, ComputeCapability::new(8, 6)));
    }

    /// Every Device Manager code (and Linux's unbound device) gets one key: the repair
    /// finding's id and message are detect's note, word for word.
    #[test]
    fn gpu_problems_read_the_same_in_detect_and_repair() {
        use crate::detect::{DeviceProblem, Gpu, GpuProblem, GpuSource, gpu::Vendor};
        let problems: Vec<DeviceProblem> = [10, 22, 28, 31, 43, 52, 45, 1]
            .into_iter()
            .map(|c| DeviceProblem {
                code: Some(c),
                key: GpuProblem::from_code(c),
            })
            .chain([
                DeviceProblem {
                    code: None,
                    key: GpuProblem::NoDriver,
                },
                DeviceProblem {
                    code: Some(0),
                    key: GpuProblem::BasicDisplayAdapter,
                },
            ])
            .collect();
        let report = crate::detect::SystemReport {
            gpus: problems
                .iter()
                .enumerate()
                .map(|(i, p)| Gpu {
                    name: format!("GPU {i}"),
                    vendor: Vendor::Nvidia,
                    source: GpuSource::Pci,
                    cuda_capable: true,
                    compute_capability: None,
                    architecture: None,
                    uuid: None,
                    memory_total_bytes: None,
                    memory_used_bytes: None,
                    pci_bus_id: None,
                    pci_device_id: None,
                    kernel_driver: None,
                    problem: Some(p.clone()),
                })
                .collect(),
            ..Default::default()
        };
        let root = std::env::temp_dir();
        let target = Target::rooted(Os::Windows, &root);
        let tables = Tables::embedded().unwrap();
        let env = BTreeMap::new();
        let mut found = Vec::new();
        driver(
            &Input {
                target: &target,
                tables: &tables,
                report: &report,
                env: &env,
                depth: crate::cudnn::Depth::Quick,
            },
            &mut found,
        );
        let notes = report.facts(Os::Windows).notes;
        assert_eq!(found.len(), problems.len());
        assert_eq!(notes.len(), problems.len());
        for ((f, n), p) in found.iter().zip(&notes).zip(&problems) {
            assert_eq!(f.id, n.key, "{p:?}");
            assert_eq!(f.message, *n, "{p:?}");
            assert_eq!(n.key, p.key.message_key());
            let text = crate::i18n::render(n, crate::i18n::Lang::En);
            assert!(!text.starts_with(n.key), "{} has no text", n.key);
        }
        let keys: Vec<&str> = problems.iter().map(|p| p.key.message_key()).collect();
        assert_eq!(
            keys,
            [
                "gpu_failed_start",
                "gpu_disabled",
                "gpu_no_driver",
                "gpu_failed_add",
                "gpu_driver_failed",
                "gpu_unsigned_driver",
                "gpu_device_problem",
                "gpu_device_problem",
                "gpu_no_driver",
                "gpu_basic_display_adapter",
            ]
        );
    }

    /// The link check reads files and nothing else: a toolkit whose nvcc leaves a mark
    /// when run gets its finding, the mark never appears, and the check takes no time to
    /// speak of (repair's audit must stay well under half a second). Then our wheels
    /// record turns the manual fix into completing the tree in place.
    #[cfg(unix)]
    #[test]
    fn the_link_check_is_static_and_a_tree_of_ours_is_completed_in_place() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let tk = root.path().join("usr/local/cuda-13.5");
        std::fs::create_dir_all(tk.join("bin")).unwrap();
        std::fs::create_dir_all(tk.join("lib64")).unwrap();
        let mark = root.path().join("nvcc-ran");
        let nvcc = tk.join("bin/nvcc");
        std::fs::write(&nvcc, format!("#!/bin/sh\ntouch '{}'\n", mark.display())).unwrap();
        std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
        for f in ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13"] {
            std::fs::write(tk.join("lib64").join(f), b"ELF").unwrap();
        }
        let version: Version = "13.5.0".parse().unwrap();
        let report = SystemReport {
            toolkits: vec![Toolkit {
                path: tk.clone(),
                version: Some(version.clone()),
                version_source: Some(crate::detect::toolkit::VersionSource::VersionJson),
                found_by: vec![],
                env_vars: vec![],
                nvcc: Some(nvcc.clone()),
                runtime_dir: tk.join("lib64"),
                path_rank: None,
                active: true,
            }],
            ..Default::default()
        };
        let target = Target::rooted(Os::Linux, root.path());
        let tables = Tables::embedded().unwrap();
        let env = BTreeMap::new();
        let input = Input {
            target: &target,
            tables: &tables,
            report: &report,
            env: &env,
            depth: crate::cudnn::Depth::Quick,
        };
        let run = || {
            let mut found = Vec::new();
            cannot_link(&input, &mut found);
            found
        };
        let found = run();
        assert!(!mark.exists(), "the link check ran nvcc");
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.id, "repair_toolkit_cannot_link");
        assert_eq!(f.severity, Severity::Error, "the active toolkit");
        assert_eq!(
            f.message.param("files"),
            Some(
                "lib64/libcudart.so, lib64/libcublas.so, lib64/libcublasLt.so, \
                 lib64/stubs/libcuda.so"
            )
        );
        assert_eq!(
            f.message.param("libs"),
            Some("cudart, cuBLAS, cuBLASLt, libcuda")
        );
        // NVIDIA's runfile made it, as far as we know: run it again.
        match &f.fix {
            Fix::Manual { how } => {
                assert_eq!(how.key, "repair_fix_toolkit_runfile");
                let cmd = how.param("command").unwrap();
                assert!(
                    cmd.starts_with("sudo sh cuda_13.5.0_linux.run --silent --toolkit")
                        && cmd.ends_with(&format!("--toolkitpath={}", tk.display())),
                    "{cmd}"
                );
            }
            other => panic!("{other:?}"),
        }
        // Ours (the wheels method's record): completed in place.
        let meta = tk.join(crate::cudnn::txn::META);
        std::fs::create_dir_all(&meta).unwrap();
        std::fs::write(
            meta.join(crate::wheels::assemble::RECORD),
            r#"{"version":"13.5.0","wheels":["nvidia_cuda_runtime-13.5.38-py3-none-manylinux_2_27_x86_64.whl"],"files":3}"#,
        )
        .unwrap();
        let found = run();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].fix,
            Fix::Steps {
                steps: vec![Step::CompleteToolkit {
                    dir: tk.clone(),
                    version: version.clone(),
                }]
            }
        );
        // Every link name there: nothing to say.
        std::fs::create_dir_all(tk.join("lib64/stubs")).unwrap();
        for f in [
            "libcudart.so",
            "libcublas.so",
            "libcublasLt.so",
            "stubs/libcuda.so",
        ] {
            std::fs::write(tk.join("lib64").join(f), b"ELF").unwrap();
        }
        assert!(run().is_empty());
        assert!(!mark.exists());
    }

    #[test]
    fn cuda_path_entries() {
        assert!(cuda_entry(
            r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8\bin"
        ));
        assert!(cuda_entry("/usr/local/cuda-12.4/bin"));
        assert!(!cuda_entry(r"C:\Windows\System32"));
    }
}
