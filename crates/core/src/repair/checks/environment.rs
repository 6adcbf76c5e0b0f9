//! The environment layer: CUDA_PATH and PATH as the persistent environment has them
//! (registry or sandbox record, profile script).

use super::*;

/// A PATH entry that looks like a CUDA toolkit's.
pub(super) fn cuda_entry(e: &str) -> bool {
    let l = e.replace('\\', "/").to_ascii_lowercase();
    (l.contains("nvidia gpu computing toolkit/cuda/") || l.contains("/cuda"))
        && (l.ends_with("/bin")
            || l.ends_with("/bin/x64")
            || l.ends_with("/libnvvp")
            || l.ends_with("/bin/"))
}

pub(super) fn same_dir(a: &str, b: &Path) -> bool {
    let n = |s: &str| {
        s.trim()
            .trim_end_matches(['\\', '/'])
            .replace('\\', "/")
            .to_ascii_lowercase()
    };
    n(a) == n(&b.display().to_string())
}

pub(super) fn environment(i: &Input, out: &mut Vec<Finding>) {
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
                Layer::Env,
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
                Layer::Env,
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
                    Layer::Env,
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
                Layer::Env,
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
            Layer::Env,
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
                out.push(finding(
                    Layer::Env,
                    "repair_path_shadowed",
                    Severity::Warning,
                    m,
                    fix,
                ));
                break;
            }
        }
    }
}

pub(super) fn runtime_lib(os: Os, name: &str) -> bool {
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
pub(super) fn scope_path_without(target: &Target, remove: &[String]) -> Option<String> {
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
pub(super) fn scope_path_front(target: &Target, entries: &[PathBuf]) -> Option<String> {
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

pub(super) fn scope_path(target: &Target) -> String {
    env::windows_var(target, "Path").unwrap_or_default()
}
