//! What is installed, before anything is audited: toolkits in NVIDIA's default folders and
//! in the user's own folder (the no-admin wheels toolkit), the cuDNN we installed, and an
//! install that was interrupted. A few directory reads, fast enough for the wizard's first
//! frame; it decides whether the wizard opens in Repair, and `repair` names what it audits.
//!
//! Every place is read as input (`place`): folders opened without following a link, only
//! real folders count, state files read bounded and never through a link.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::compat::Os;
use crate::target::Target;
use crate::version::Version;

/// Who laid a toolkit down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// NVIDIA's installer (or any toolkit without our wheels record).
    Installer,
    /// Assembled by cuda-setup from NVIDIA's pip wheels (`toolkit-wheels.json`).
    Wheels,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Toolkit {
    pub dir: PathBuf,
    /// The record's version for a wheels tree, else the one the folder's name gives.
    pub version: Option<Version>,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cudnn {
    /// The toolkit folder it was installed into.
    pub toolkit: PathBuf,
    pub version: Version,
}

/// Every install of ours or NVIDIA's on the target.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Existing {
    pub toolkits: Vec<Toolkit>,
    /// cuDNN installed by cuda-setup (its transaction's manifest).
    pub cudnn: Vec<Cudnn>,
    /// An install journal: a run was interrupted (or waits for a restart).
    pub interrupted: bool,
}

impl Existing {
    /// Something to repair: an install, or a half-finished one.
    pub fn found(&self) -> bool {
        !self.toolkits.is_empty() || !self.cudnn.is_empty() || self.interrupted
    }

    /// Technical tokens only, the same in every language:
    /// `CUDA 12.4 (C:\…\v12.4), cuDNN 9.10.2`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .toolkits
            .iter()
            .map(|t| match &t.version {
                Some(v) => format!("CUDA {v} ({})", t.dir.display()),
                None => t.dir.display().to_string(),
            })
            .collect();
        parts.extend(self.cudnn.iter().map(|c| format!("cuDNN {}", c.version)));
        parts.join(", ")
    }
}

/// The folders toolkits live in on `target`, with the prefix of a toolkit folder's name:
/// NVIDIA's installer's, then the user's own (where the wheels method puts a toolkit
/// without administrator rights — looked at even when elevated: an earlier run may not
/// have been).
pub(super) fn parents(target: &Target) -> Vec<(PathBuf, &'static str)> {
    let prefix = match target.os {
        Os::Windows => "v",
        Os::Linux => "cuda-",
    };
    let any = Version::new(&[0, 0]);
    let user = Target {
        elevated: false,
        ..target.clone()
    };
    let mut out: Vec<(PathBuf, &'static str)> = Vec::new();
    for dir in [target.toolkit_dir(&any), user.user_toolkit_dir(&any)] {
        if let Some(parent) = dir.parent()
            && !out.iter().any(|(p, _)| p == parent)
        {
            out.push((parent.to_path_buf(), prefix));
        }
    }
    out
}

/// A real folder at `path`: not a link, not a junction (`place::Dir::open` refuses both,
/// and opens it without following one swapped in).
fn real_dir(path: &Path) -> bool {
    crate::place::Dir::open(path).is_ok()
}

/// The toolkits in `parent`: folders named `<prefix><version>` holding a real `bin`
/// folder or our wheels record.
fn toolkits_in(parent: &Path, prefix: &str, out: &mut Vec<Toolkit>) {
    // The parent itself must be a real folder: one that is a link is not followed.
    let Ok(dir) = crate::place::Dir::open(parent) else {
        return;
    };
    let Ok(entries) = dir.handle().entries() else {
        return;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() && !t.is_symlink()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    for name in names {
        let path = parent.join(&name);
        if !real_dir(&path) {
            continue;
        }
        let record = crate::wheels::assemble::read_record(&path).ok().flatten();
        if record.is_none() && !real_dir(&path.join("bin")) {
            continue;
        }
        let from_name = name.strip_prefix(prefix).and_then(|v| v.parse().ok());
        let (version, origin) = match record {
            Some(r) => (Some(r.version), Origin::Wheels),
            None => (from_name, Origin::Installer),
        };
        out.push(Toolkit {
            dir: path,
            version,
            origin,
        });
    }
}

/// Every install of ours or NVIDIA's on `target`.
pub fn existing(target: &Target) -> Existing {
    let mut found = Existing::default();
    for (parent, prefix) in parents(target) {
        toolkits_in(&parent, prefix, &mut found.toolkits);
    }
    for t in &found.toolkits {
        if let Ok(Some(m)) = crate::cudnn::txn::read_manifest(&t.dir) {
            found.cudnn.push(Cudnn {
                toolkit: t.dir.clone(),
                version: m.cudnn_version,
            });
        }
    }
    // A regular file, not through a link (its content is judged where it is acted on).
    found.interrupted = matches!(
        crate::place::open_regular(&crate::run::journal_path(target), 16 << 20),
        Ok(Some(_))
    );
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Host;
    use std::collections::BTreeMap;
    use std::fs;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    /// A toolkit as NVIDIA's installer leaves it: a `bin` folder.
    fn installer_tree(dir: &Path) {
        fs::create_dir_all(dir.join("bin")).unwrap();
    }

    /// A tree the wheels method assembled: our record, no `bin` needed (a runtime-only set).
    fn wheels_tree(dir: &Path, version: &str) {
        let meta = dir.join(crate::cudnn::txn::META);
        fs::create_dir_all(&meta).unwrap();
        fs::create_dir_all(dir.join("lib64")).unwrap();
        fs::write(
            meta.join(crate::wheels::assemble::RECORD),
            format!(r#"{{"version":"{version}","wheels":["nvidia_cuda_runtime-13.5.38-py3-none-manylinux_2_27_x86_64.whl"],"files":1}}"#),
        )
        .unwrap();
    }

    /// A cuDNN manifest as our transaction writes it (no files: the version is what counts).
    fn cudnn_manifest(dir: &Path, version: &str) {
        let meta = dir.join(crate::cudnn::txn::META);
        fs::create_dir_all(&meta).unwrap();
        let m = crate::cudnn::Manifest {
            format: 1,
            cudnn_version: v(version),
            cuda_major: Some(12),
            toolkit_version: None,
            archive: "cudnn.zip".into(),
            archive_path: None,
            files: Vec::new(),
        };
        fs::write(
            meta.join(crate::cudnn::txn::MANIFEST),
            serde_json::to_vec(&m).unwrap(),
        )
        .unwrap();
    }

    /// A Windows user without administrator rights, on no root: every folder comes from
    /// the host's variables, all of them inside `home`.
    fn windows_user(home: &Path) -> Target {
        let env: BTreeMap<String, String> = [
            ("ProgramFiles", "Program Files"),
            ("LOCALAPPDATA", "AppData/Local"),
            ("USERPROFILE", ""),
        ]
        .into_iter()
        .map(|(k, sub)| (k.to_string(), home.join(sub).display().to_string()))
        .collect();
        Target {
            os: Os::Windows,
            root: None,
            host: Host::sandbox(Os::Windows, home, env),
            elevated: false,
        }
    }

    #[test]
    fn nothing_installed_is_nothing_found() {
        let dir = tempfile::tempdir().unwrap();
        for os in [Os::Windows, Os::Linux] {
            let e = existing(&Target::rooted(os, dir.path()));
            assert!(!e.found(), "{e:?}");
        }
        assert!(!existing(&windows_user(dir.path())).found());
    }

    #[test]
    fn windows_installer_toolkit_with_our_cudnn_and_an_interrupted_run() {
        let dir = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Windows, dir.path());
        let tk = t.toolkit_dir(&v("12.4"));
        installer_tree(&tk);
        cudnn_manifest(&tk, "9.10.2");
        // A folder that holds nothing of a toolkit is not one.
        fs::create_dir_all(tk.with_file_name("v11.8")).unwrap();
        let e = existing(&t);
        assert_eq!(
            e.toolkits,
            vec![Toolkit {
                dir: tk.clone(),
                version: Some(v("12.4")),
                origin: Origin::Installer
            }]
        );
        assert_eq!(
            e.cudnn,
            vec![Cudnn {
                toolkit: tk,
                version: v("9.10.2")
            }]
        );
        assert!(!e.interrupted);
        assert!(e.describe().starts_with("CUDA 12.4 (") && e.describe().ends_with("cuDNN 9.10.2"));

        fs::create_dir_all(t.state_dir()).unwrap();
        fs::write(crate::run::journal_path(&t), "{}").unwrap();
        assert!(existing(&t).interrupted);
    }

    #[test]
    fn linux_installer_toolkit_and_wheels_tree() {
        let dir = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Linux, dir.path());
        installer_tree(&dir.path().join("usr/local/cuda-11.8"));
        wheels_tree(&dir.path().join("usr/local/cuda-13.5"), "13.5.0");
        let e = existing(&t);
        let got: Vec<_> = e
            .toolkits
            .iter()
            .map(|t| (t.version.clone(), t.origin))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some(v("11.8")), Origin::Installer),
                (Some(v("13.5.0")), Origin::Wheels)
            ]
        );
    }

    /// The no-admin wheels toolkit lives in the user's folder, not NVIDIA's: it is found
    /// there, elevated or not.
    #[test]
    fn the_wheels_toolkit_in_the_users_folder() {
        let home = tempfile::tempdir().unwrap();
        let mut t = windows_user(home.path());
        let tk = t.user_toolkit_dir(&v("13.5"));
        assert!(tk.starts_with(home.path().join("AppData/Local/Programs")));
        wheels_tree(&tk, "13.5.0");
        cudnn_manifest(&tk, "9.13.0");
        for elevated in [false, true] {
            t.elevated = elevated;
            let e = existing(&t);
            assert_eq!(e.toolkits.len(), 1, "elevated: {elevated}: {e:?}");
            assert_eq!(e.toolkits[0].dir, tk);
            assert_eq!(e.toolkits[0].origin, Origin::Wheels);
            assert_eq!(e.cudnn[0].version, v("9.13.0"));
        }

        // Linux: ~/.local/cuda-X.Y.
        let env: BTreeMap<String, String> =
            [("HOME".to_string(), home.path().display().to_string())].into();
        let t = Target {
            os: Os::Linux,
            root: None,
            host: Host::sandbox(Os::Linux, home.path(), env),
            elevated: false,
        };
        let tk = home.path().join(".local/cuda-12.8");
        assert_eq!(t.user_toolkit_dir(&v("12.8")), tk);
        wheels_tree(&tk, "12.8.1");
        let e = existing(&t);
        assert!(
            e.toolkits.iter().any(|x| x.dir == tk
                && x.origin == Origin::Wheels
                && x.version == Some(v("12.8.1"))),
            "{e:?}"
        );
    }

    /// Links planted where a toolkit, its `bin`, its parent or the journal should be are
    /// not followed: nothing is found through them.
    #[cfg(unix)]
    #[test]
    fn links_are_not_followed() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        installer_tree(&elsewhere.join("cuda"));
        wheels_tree(&elsewhere.join("wheels"), "13.5.0");
        fs::write(elsewhere.join("journal.json"), "{}").unwrap();

        let t = Target::rooted(Os::Linux, dir.path());
        let local = dir.path().join("usr/local");
        fs::create_dir_all(&local).unwrap();
        symlink(elsewhere.join("cuda"), local.join("cuda-12.4")).unwrap();
        symlink(elsewhere.join("wheels"), local.join("cuda-13.5")).unwrap();
        fs::create_dir_all(local.join("cuda-11.8")).unwrap();
        symlink(elsewhere.join("cuda/bin"), local.join("cuda-11.8/bin")).unwrap();
        fs::create_dir_all(t.state_dir()).unwrap();
        symlink(elsewhere.join("journal.json"), crate::run::journal_path(&t)).unwrap();
        let e = existing(&t);
        assert!(!e.found(), "{e:?}");

        // The whole CUDA folder a link (Windows' layout in a root).
        let t = Target::rooted(Os::Windows, dir.path());
        let parent = t.toolkit_dir(&v("12.4")).parent().unwrap().to_path_buf();
        fs::create_dir_all(parent.parent().unwrap()).unwrap();
        let real = dir.path().join("real-cuda");
        installer_tree(&real.join("v12.4"));
        symlink(&real, &parent).unwrap();
        assert!(existing(&t).toolkits.is_empty());
    }
}
