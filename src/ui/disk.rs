//! What is on disk before anything runs (a few directory reads, fast enough for the UI
//! thread at start-up): toolkits in the default folders, a cuDNN we installed, an
//! interrupted install. It decides the first page's mode.

use std::path::PathBuf;

use cuda_setup_core::compat::Os;
use cuda_setup_core::target::Target;
use cuda_setup_core::version::Version;

#[derive(Debug, Clone, Default)]
pub struct Existing {
    /// Toolkit folders with a `bin` folder, and the version their folder names.
    pub toolkits: Vec<(PathBuf, Option<Version>)>,
    /// cuDNN installed by cuda-setup: (toolkit folder, cuDNN version).
    pub cudnn: Vec<(PathBuf, Version)>,
    /// An install journal: a run was interrupted.
    pub interrupted: bool,
}

impl Existing {
    /// Something to repair (an install, or a half-finished one).
    pub fn found(&self) -> bool {
        !self.toolkits.is_empty() || !self.cudnn.is_empty() || self.interrupted
    }
}

/// The folders NVIDIA's installers use on `target`.
fn toolkit_parent(target: &Target) -> (PathBuf, &'static str) {
    match target.os {
        Os::Windows => (
            target
                .program_files()
                .join("NVIDIA GPU Computing Toolkit")
                .join("CUDA"),
            "v",
        ),
        Os::Linux => (target.system_path("/usr/local"), "cuda-"),
    }
}

fn version_in_name(name: &str, prefix: &str) -> Option<Version> {
    name.strip_prefix(prefix)?.parse().ok()
}

pub fn scan(target: &Target) -> Existing {
    let (parent, prefix) = toolkit_parent(target);
    let mut found = Existing::default();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&parent)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
                && p.join("bin").is_dir()
                && !p.is_symlink()
        })
        .collect();
    dirs.sort();
    for d in dirs {
        let name = d.file_name().map(|n| n.to_string_lossy().into_owned());
        let version = name.as_deref().and_then(|n| version_in_name(n, prefix));
        if let Ok(Some(m)) = cuda_setup_core::cudnn::txn::read_manifest(&d) {
            found.cudnn.push((d.clone(), m.cudnn_version));
        }
        found.toolkits.push((d, version));
    }
    found.interrupted = target.state_dir().join("install-journal.json").is_file();
    found
}

/// A one-line description: `CUDA 12.4 (C:\…\v12.4), cuDNN 9.10.2`.
pub fn describe(e: &Existing) -> String {
    let mut parts: Vec<String> = e
        .toolkits
        .iter()
        .map(|(p, v)| match v {
            Some(v) => format!("CUDA {v} ({})", p.display()),
            None => p.display().to_string(),
        })
        .collect();
    parts.extend(e.cudnn.iter().map(|(_, v)| format!("cuDNN {v}")));
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_toolkit_and_an_interrupted_run() {
        let dir = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Windows, dir.path());
        assert!(!scan(&t).found());
        let tk = t.toolkit_dir(&"12.4".parse().unwrap());
        std::fs::create_dir_all(tk.join("bin")).unwrap();
        let e = scan(&t);
        assert_eq!(e.toolkits.len(), 1);
        assert_eq!(e.toolkits[0].1, Some("12.4".parse().unwrap()));
        assert!(e.found() && !e.interrupted);
        std::fs::create_dir_all(t.state_dir()).unwrap();
        std::fs::write(t.state_dir().join("install-journal.json"), "{}").unwrap();
        assert!(scan(&t).interrupted);

        let t = Target::rooted(Os::Linux, dir.path());
        std::fs::create_dir_all(dir.path().join("usr/local/cuda-11.8/bin")).unwrap();
        assert_eq!(scan(&t).toolkits[0].1, Some("11.8".parse().unwrap()));
    }
}
