//! The toolkit layer: each toolkit complete and readable, the developer's link names there,
//! files of the user's in a toolkit we built from wheels.

use super::*;

/// Files of the user's in a toolkit we built from wheels: a rebuild carries them over
/// (`wheels::keep`), so they are only named. A listing against our record, no hashing.
pub(super) fn wheels_foreign(i: &Input, out: &mut Vec<Finding>) {
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
            Layer::Toolkit,
            id,
            Severity::Info,
            message,
            manual("repair_fix_wheels_foreign"),
        ));
    }
}

pub(super) fn toolkits(i: &Input, out: &mut Vec<Finding>) {
    for t in &i.report.toolkits {
        let Some(v) = &t.version else {
            out.push(finding(
                Layer::Toolkit,
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
            out.push(finding(
                Layer::Toolkit,
                "repair_toolkit_broken",
                Severity::Error,
                m,
                fix,
            ));
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
                Layer::Toolkit,
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
pub(super) fn cannot_link(i: &Input, out: &mut Vec<Finding>) {
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
                Layer::Toolkit,
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
                Layer::Toolkit,
                "repair_toolkit_cannot_link",
                severity,
                message(&cudnn_names),
                fix,
            ));
        }
    }
}

/// A path or argument for a command line, quoted when it has a space.
pub(super) fn quote(s: String) -> String {
    if s.contains(' ') {
        format!("\"{s}\"")
    } else {
        s
    }
}

/// A library's name as users know it (the same in every language).
pub(super) fn lib_words(lib: &str) -> &str {
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
pub(super) fn installer_fix(
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
pub(super) fn installer_for(target: &Target, v: &Version) -> Option<PathBuf> {
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
