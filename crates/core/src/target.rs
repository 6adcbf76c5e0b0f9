//! Where an install goes: this machine, or a sandbox root (`--root DIR`, like DESTDIR)
//! that holds the same layout, so tests and dry runs use the user's code path.

use std::path::{Path, PathBuf};

use crate::compat::Os;
use crate::platform::{self, Host};
use crate::version::Version;

#[derive(Debug, Clone)]
pub struct Target {
    pub os: Os,
    /// Some: everything (toolkit, environment, state) lives under this folder.
    pub root: Option<PathBuf>,
    /// The host whose environment child processes get.
    pub host: Host,
    /// Administrator / root rights (a sandbox root counts as writable).
    pub elevated: bool,
}

impl Target {
    pub fn real() -> Target {
        Target {
            os: Os::current(),
            root: None,
            host: Host::real(),
            elevated: platform::is_elevated(),
        }
    }

    /// A sandbox root: elevated (writable, as the installer's machine), except in debug
    /// builds when `CUDA_SETUP_TEST_NOT_ELEVATED` is set, so tests can play the run
    /// without administrator rights — its state then goes to `<root>/.cuda-setup-user`
    /// (see [`Target::state_dir`]). Release builds ignore it.
    pub fn rooted(os: Os, root: &Path) -> Target {
        let as_user =
            cfg!(debug_assertions) && std::env::var_os("CUDA_SETUP_TEST_NOT_ELEVATED").is_some();
        Target {
            os,
            root: Some(root.to_path_buf()),
            host: Host::real(),
            elevated: !as_user,
        }
    }

    /// A system path (`/usr/local`, `C:\Program Files`) on this target.
    pub fn system_path(&self, p: &str) -> PathBuf {
        match &self.root {
            Some(r) => {
                let rel = p.replace('\\', "/");
                let rel = match rel.split_once(':') {
                    Some((drive, rest)) if drive.len() == 1 => {
                        format!("{drive}/{}", rest.trim_start_matches('/'))
                    }
                    _ => rel.trim_start_matches('/').to_string(),
                };
                r.join(rel)
            }
            None => PathBuf::from(p),
        }
    }

    /// `C:\Program Files` (from %ProgramFiles% on the real machine).
    pub fn program_files(&self) -> PathBuf {
        match (&self.root, self.host.var("ProgramFiles")) {
            (None, Some(p)) if self.os == Os::Windows => PathBuf::from(p),
            _ => self.system_path(r"C:\Program Files"),
        }
    }

    /// Where NVIDIA's installer puts a toolkit of this version.
    pub fn toolkit_dir(&self, version: &Version) -> PathBuf {
        let mm = version.major_minor();
        match self.os {
            Os::Windows => self
                .program_files()
                .join("NVIDIA GPU Computing Toolkit")
                .join("CUDA")
                .join(format!("v{mm}")),
            Os::Linux => self.system_path(&format!("/usr/local/cuda-{mm}")),
        }
    }

    /// Where a toolkit built from wheels goes: the installer's folder when elevated (and
    /// in a sandbox), else a folder the user owns — no administrator rights needed.
    pub fn user_toolkit_dir(&self, version: &Version) -> PathBuf {
        if self.elevated || self.root.is_some() {
            return self.toolkit_dir(version);
        }
        let mm = version.major_minor();
        let h = &self.host;
        match self.os {
            Os::Windows => PathBuf::from(h.var("LOCALAPPDATA").unwrap_or("."))
                .join("Programs")
                .join("NVIDIA GPU Computing Toolkit")
                .join("CUDA")
                .join(format!("v{mm}")),
            Os::Linux => h
                .home()
                .unwrap_or_else(|| PathBuf::from("."))
                .join(".local")
                .join(format!("cuda-{mm}")),
        }
    }

    /// Our state: journals, logs, downloads, the record of environment changes. Elevated:
    /// the machine's (`%ProgramData%\cuda-setup`, `/var/lib/cuda-setup`); otherwise the
    /// user's (`%LOCALAPPDATA%\cuda-setup`, `~/.local/state/cuda-setup`). A sandbox root
    /// has both: `<root>/.cuda-setup` (elevated, as every sandbox run is by default) and
    /// `<root>/.cuda-setup-user`.
    pub fn state_dir(&self) -> PathBuf {
        self.state_dir_for(self.elevated)
    }

    /// The state folder the other kind of run keeps (the machine's when this one is not
    /// elevated, the user's when it is): read, never written (the records module).
    pub fn other_state_dir(&self) -> PathBuf {
        self.state_dir_for(!self.elevated)
    }

    fn state_dir_for(&self, elevated: bool) -> PathBuf {
        if let Some(r) = &self.root {
            return r.join(if elevated {
                ".cuda-setup"
            } else {
                ".cuda-setup-user"
            });
        }
        let h = &self.host;
        match self.os {
            Os::Windows if elevated => {
                PathBuf::from(h.var("ProgramData").unwrap_or(r"C:\ProgramData")).join("cuda-setup")
            }
            Os::Windows => PathBuf::from(h.var("LOCALAPPDATA").unwrap_or(".")).join("cuda-setup"),
            Os::Linux if elevated => PathBuf::from("/var/lib/cuda-setup"),
            Os::Linux => h
                .var("XDG_STATE_HOME")
                .map(PathBuf::from)
                .or_else(|| h.home().map(|p| p.join(".local/state")))
                .unwrap_or_else(|| PathBuf::from("."))
                .join("cuda-setup"),
        }
    }

    /// Our state folder, opened as a handle and created when missing. When this process
    /// is elevated, the folder must be ours: one that is a link, or that another account
    /// owns or can write, is set aside and made anew (`place::trusted_dir`), and so is
    /// every folder reached below it with [`crate::place::Dir::sub`].
    pub fn state(&self) -> std::io::Result<crate::place::Dir> {
        crate::place::trusted_dir(&self.state_dir(), platform::is_elevated())
    }

    pub fn downloads_dir(&self) -> PathBuf {
        self.state_dir().join("downloads")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir().join("logs")
    }
}
