//! The environment put back from `env-changes.json`: every variable we set goes back to
//! the value it had before our first change (or away, when it had none), PATH loses only
//! the entries we added, and the profile file loses only our block. A variable changed
//! again after us is the user's now: it is left and named.

use std::path::{Path, PathBuf};

use crate::compat::Os;
use crate::steps::env::{self, EnvChange, Scope};
use crate::target::Target;

use super::{Action, Left};

/// The record of our environment changes, oldest first (none when there is none or it is
/// not one we wrote: nothing is undone on a record we cannot trust).
pub fn recorded(target: &Target) -> Vec<EnvChange> {
    let Ok(Some(bytes)) = crate::state_file::read(&target.state_dir().join(super::ENV_RECORD))
    else {
        return Vec::new();
    };
    serde_json::from_slice(&bytes).unwrap_or_default()
}

fn entries(path: &str) -> Vec<String> {
    path.split(';')
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn same_entry(a: &str, b: &str) -> bool {
    let n = |s: &str| s.trim().trim_end_matches(['\\', '/']).to_ascii_lowercase();
    n(a) == n(b)
}

/// Whether a change is about the toolkit at `dir` (for one install's uninstall).
fn names_dir(c: &EnvChange, dir: &Path) -> bool {
    let d = dir.display().to_string();
    c.value.as_deref().is_some_and(|v| v.contains(&d))
}

/// The actions that undo `changes` (of this run's kind: elevated runs record machine
/// variables, the user's runs the user's), and what is left because it changed since.
pub fn plan(
    target: &Target,
    changes: &[EnvChange],
    only: Option<&Path>,
    actions: &mut Vec<Action>,
    left: &mut Vec<Left>,
) {
    // One entry per variable (names compared as Windows does), in first-seen order.
    let mut seen: Vec<(Scope, String)> = Vec::new();
    for c in changes {
        if !seen
            .iter()
            .any(|(s, n)| *s == c.scope && n.eq_ignore_ascii_case(&c.name))
        {
            seen.push((c.scope, c.name.clone()));
        }
    }
    for (scope, name) in seen {
        // For one install, only the changes that name its toolkit: the value before the
        // first of them is what it goes back to (another install's may stand there).
        let all: Vec<&EnvChange> = changes
            .iter()
            .filter(|c| c.scope == scope && c.name.eq_ignore_ascii_case(&name))
            .filter(|c| only.is_none_or(|d| names_dir(c, d)))
            .collect();
        if all.is_empty() {
            continue;
        }
        let first = all[0];
        let last = all[all.len() - 1];
        match scope {
            Scope::Profile => profile(target, &name, actions),
            _ if target.os != Os::Windows => {}
            // Written at another scope than this run writes: not ours to change now.
            _ if scope != this_scope(target) => {}
            _ if name.eq_ignore_ascii_case("Path") => {
                let before = entries(first.previous.as_deref().unwrap_or(""));
                let ours: Vec<String> = entries(last.value.as_deref().unwrap_or(""))
                    .into_iter()
                    .filter(|e| !before.iter().any(|b| same_entry(b, e)))
                    .collect();
                let now = entries(&env::windows_var(target, &name).unwrap_or_default());
                let present: Vec<String> = ours
                    .into_iter()
                    .filter(|e| now.iter().any(|n| same_entry(n, e)))
                    .collect();
                if !present.is_empty() {
                    actions.push(Action::RemovePathEntries {
                        name,
                        entries: present,
                    });
                }
            }
            _ => {
                let now = env::windows_var(target, &name);
                if now == first.previous {
                    // Already as it was (an earlier uninstall, or the user).
                } else if now == last.value {
                    actions.push(Action::RestoreVar {
                        name,
                        to: first.previous.clone(),
                    });
                } else {
                    left.push(Left::VarChanged {
                        name,
                        now: now.unwrap_or_default(),
                    });
                }
            }
        }
    }
}

fn this_scope(target: &Target) -> Scope {
    if target.elevated {
        Scope::Machine
    } else {
        Scope::User
    }
}

/// The profile file: our block out (the file itself when nothing else is left and we
/// made it).
fn profile(target: &Target, name: &str, actions: &mut Vec<Action>) {
    let file = PathBuf::from(name);
    if file != env::profile_path(target) {
        return;
    }
    if read_profile(target, &file).is_some_and(|t| env::without_block(&t).is_some()) {
        actions.push(Action::RemoveProfileBlock { file });
    }
}

/// The profile file's text. Elevated, it is ours (`/etc/profile.d/cuda-setup.sh`): read
/// as a regular file, never through a link. Not elevated, it is the user's `~/.profile`.
fn read_profile(target: &Target, file: &Path) -> Option<String> {
    if target.elevated {
        crate::place::read_regular(file, crate::state_file::MAX_BYTES)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    } else {
        std::fs::read_to_string(file).ok()
    }
}

/// Removes our block; a file left empty is removed (only our block was in it).
pub fn remove_profile_block(target: &Target, file: &Path) -> std::io::Result<bool> {
    let Some(text) = read_profile(target, file) else {
        return Ok(false);
    };
    let Some(rest) = env::without_block(&text) else {
        return Ok(false);
    };
    if rest.trim().is_empty() && target.elevated {
        // The name itself (a link planted there is removed as a link).
        std::fs::remove_file(file)?;
    } else if target.elevated {
        crate::state_file::write(file, rest.as_bytes())?;
    } else {
        let tmp = file.with_extension("cuda-setup.tmp");
        std::fs::write(&tmp, &rest)?;
        std::fs::rename(&tmp, file)?;
    }
    Ok(true)
}

/// The record without the changes about the toolkit at `dir` (one install undone: a
/// later uninstall of the rest goes back to the values before those).
pub fn forget_dir(target: &Target, dir: &Path) -> std::io::Result<()> {
    let kept: Vec<EnvChange> = recorded(target)
        .into_iter()
        .filter(|c| !names_dir(c, dir))
        .collect();
    let state = target.state()?;
    state.write_atomic(
        super::ENV_RECORD,
        &serde_json::to_vec_pretty(&kept).expect("serialisable"),
        true,
    )
}

/// PATH without `drop` (compared as Windows compares entries), the rest in its order.
pub fn path_without(path: &str, drop: &[String]) -> String {
    entries(path)
        .into_iter()
        .filter(|e| !drop.iter().any(|d| same_entry(d, e)))
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(name: &str, previous: Option<&str>, value: &str) -> EnvChange {
        EnvChange {
            scope: Scope::Machine,
            name: name.into(),
            previous: previous.map(str::to_string),
            value: Some(value.into()),
        }
    }

    /// Two installs set CUDA_PATH in turn: undoing the second puts back the first's
    /// value, not the one before both; undoing everything puts back that one.
    #[test]
    fn one_install_goes_back_to_the_value_before_its_own_change() {
        let tmp = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Windows, tmp.path());
        let (a, b) = (r"C:\CUDA11.8", r"C:\CUDA13.5");
        env::set_windows_var(&t, "CUDA_PATH", Some(b)).unwrap();
        let changes = [
            change("CUDA_PATH", None, a),
            change("CUDA_PATH", Some(a), b),
        ];
        let (mut actions, mut left) = (Vec::new(), Vec::new());
        plan(&t, &changes, Some(Path::new(b)), &mut actions, &mut left);
        assert_eq!(
            actions,
            [Action::RestoreVar {
                name: "CUDA_PATH".into(),
                to: Some(a.into())
            }]
        );
        actions.clear();
        plan(&t, &changes, None, &mut actions, &mut left);
        assert_eq!(
            actions,
            [Action::RestoreVar {
                name: "CUDA_PATH".into(),
                to: None
            }]
        );
        // Set again by the user since: left, named.
        env::set_windows_var(&t, "CUDA_PATH", Some(r"D:\mine")).unwrap();
        actions.clear();
        plan(&t, &changes, None, &mut actions, &mut left);
        assert!(actions.is_empty());
        assert!(matches!(&left[..], [Left::VarChanged { name, .. }] if name == "CUDA_PATH"));
    }

    #[test]
    fn path_loses_only_our_entries() {
        let p = r"C:\CUDA\v13.5\bin\x64;C:\Windows;C:\cuda\v13.5\BIN\;C:\Tools";
        assert_eq!(
            path_without(
                p,
                &[r"C:\CUDA\v13.5\bin\x64".into(), r"C:\CUDA\v13.5\bin".into()]
            ),
            r"C:\Windows;C:\Tools"
        );
    }
}
