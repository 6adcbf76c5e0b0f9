//! Pre-flight: everything that can be known to fail before a 3 GB download starts.
//! Each check says what, why, and what to do.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Ctx, StepError, StepEvent, StepOutcome};
use crate::compat::Os;
use crate::units;
use crate::version::Version;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// The folder the toolkit goes to (its volume must have room).
    pub toolkit_dir: Option<PathBuf>,
    pub toolkit_version: Option<Version>,
    /// Installer size × 2.5 (download, unpacking, installed files).
    pub needed_bytes: u64,
    /// `needed_bytes` is a guess (the download's size is not known): too little room then
    /// warns instead of failing, since the download itself stops cleanly on a full disk.
    #[serde(default)]
    pub needed_is_estimate: bool,
    /// Where downloads and staging go.
    pub work_dir: PathBuf,
    /// The install needs administrator rights (NVIDIA's installer, /usr/local).
    pub needs_admin: bool,
    pub developer: bool,
    /// The toolkit is built from wheels: a folder at `toolkit_dir` that we did not build
    /// is kept when it is a complete toolkit and refused otherwise, never replaced.
    #[serde(default)]
    pub from_wheels: bool,
    /// The plan installs the NVIDIA driver (Windows): administrator rights are needed.
    #[serde(default)]
    pub driver: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Warn,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub id: String,
    pub status: Status,
    pub what: String,
    pub why: String,
    pub fix: String,
}

fn check(id: &str, status: Status, what: String, why: &str, fix: &str) -> Check {
    Check {
        id: id.into(),
        status,
        what,
        why: why.into(),
        fix: fix.into(),
    }
}

/// Non-ASCII characters (a Chinese user name) or very long paths break NVIDIA's installer.
pub fn path_trouble(p: &Path) -> Option<&'static str> {
    let s = p.display().to_string();
    if !s.is_ascii() {
        Some("non_ascii")
    } else if s.len() > 200 {
        Some("too_long")
    } else {
        None
    }
}

pub fn checks(inputs: &Inputs, ctx: &Ctx) -> Vec<Check> {
    let t = ctx.target;
    let mut out = Vec::new();
    // Disk space where the toolkit goes and where downloads go.
    for (id, dir) in [
        ("disk_toolkit", inputs.toolkit_dir.clone()),
        ("disk_work", Some(inputs.work_dir.clone())),
    ] {
        let Some(dir) = dir else { continue };
        match crate::platform::free_space(&dir).ok() {
            Some(free) if free < inputs.needed_bytes && inputs.needed_is_estimate => {
                out.push(check(
                    id,
                    Status::Warn,
                    format!(
                        "{} free on the drive of {}; about {} may be needed",
                        units::bytes(free),
                        dir.display(),
                        units::bytes(inputs.needed_bytes)
                    ),
                    "the download's size is not known yet, so this is an estimate; the download stops cleanly if the drive fills",
                    "free some space (Disk Cleanup, empty the recycle bin), or choose another drive",
                ))
            }
            Some(free) if free < inputs.needed_bytes => out.push(check(
                id,
                Status::Fail,
                format!(
                    "{} free on the drive of {}, {} needed",
                    units::bytes(free),
                    dir.display(),
                    units::bytes(inputs.needed_bytes)
                ),
                "the installer, its unpacked files and the installed toolkit all need room at once",
                "free some space (Disk Cleanup, empty the recycle bin), or choose another drive",
            )),
            Some(free) => out.push(check(
                id,
                Status::Pass,
                format!(
                    "{} free on the drive of {}",
                    units::bytes(free),
                    dir.display()
                ),
                "",
                "",
            )),
            None => {}
        }
    }
    if inputs.needs_admin || inputs.driver {
        out.push(if t.elevated {
            check("admin", Status::Pass, "running with administrator rights".into(), "", "")
        } else {
            let (why, fix) = match (inputs.needs_admin, t.os) {
                // Only the driver needs the rights (the PyTorch goal).
                (false, _) => (
                    "installing the NVIDIA driver needs administrator rights",
                    "right-click cuda-setup and choose \"Run as administrator\", or install the driver yourself and choose --skip-driver",
                ),
                (true, Os::Windows) => (
                    "NVIDIA's installer writes to Program Files",
                    "right-click cuda-setup and choose \"Run as administrator\", or install with --method wheels into your own folder",
                ),
                (true, Os::Linux) => (
                    "NVIDIA's installer writes to /usr/local",
                    "run with sudo, or install with --method wheels into a folder you own",
                ),
            };
            check("admin", Status::Fail, "not running as administrator".into(), why, fix)
        });
    }
    let temp = t
        .host
        .var(if t.os == Os::Windows {
            "TEMP"
        } else {
            "TMPDIR"
        })
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    for (id, p) in [
        ("temp_path", Some(temp)),
        ("install_path", inputs.toolkit_dir.clone()),
    ] {
        let Some(p) = p else { continue };
        match path_trouble(&p) {
            Some("non_ascii") => out.push(check(
                id,
                Status::Warn,
                format!("{} contains non-ASCII characters", p.display()),
                "NVIDIA's installer is known to fail when its temporary or target folder has characters outside ASCII (a Chinese user name, for example)",
                "set TEMP and TMP to a plain folder such as C:\\Temp before installing (System Properties → Environment Variables)",
            )),
            Some(_) => out.push(check(id, Status::Warn, format!("{} is over 200 characters", p.display()), "long paths break older tools", "use a shorter folder")),
            None => {}
        }
    }
    if t.os == Os::Windows && inputs.developer {
        #[cfg(windows)]
        let vs = if t.root.is_none() {
            crate::platform::windows::visual_studio()
        } else {
            None
        };
        #[cfg(not(windows))]
        let vs: Option<PathBuf> = None;
        out.push(match vs {
            Some(p) => check("visual_studio", Status::Pass, format!("Visual Studio at {}", p.display()), "", ""),
            None => check(
                "visual_studio",
                Status::Warn,
                "no Visual Studio found".into(),
                "nvcc needs Microsoft's C++ compiler (cl.exe) to compile; the toolkit installs without it and its Visual Studio integration is left out",
                "install \"Visual Studio Build Tools\" with the \"Desktop development with C++\" workload if you will compile CUDA code",
            ),
        });
    }
    if let (Some(dir), Some(v)) = (&inputs.toolkit_dir, &inputs.toolkit_version)
        && inputs.from_wheels
        && std::fs::symlink_metadata(dir).is_ok()
    {
        out.push(wheels_destination(t, dir, v));
    } else if let (Some(dir), Some(v)) = (&inputs.toolkit_dir, &inputs.toolkit_version)
        && super::toolkit_missing(t, dir, v).is_empty()
    {
        out.push(already_installed(dir, v));
    }
    out
}

fn already_installed(dir: &Path, v: &Version) -> Check {
    check(
        "already_installed",
        Status::Pass,
        format!(
            "CUDA {} is already installed at {}; it will be kept",
            v.major_minor(),
            dir.display()
        ),
        "",
        "",
    )
}

/// What the wheels method will do with the folder already at its destination (what
/// `wheels::assemble` does: ours is rebuilt safely, a complete foreign toolkit is kept,
/// anything else is refused).
fn wheels_destination(t: &crate::target::Target, dir: &Path, v: &Version) -> Check {
    const WHY: &str = "cuda-setup never replaces or deletes a folder it did not build";
    const FIX: &str = "move that folder elsewhere yourself (or finish it with NVIDIA's installer), then run again";
    match crate::wheels::assemble::read_record(dir) {
        Ok(Some(_)) => check(
            "wheels_ours",
            Status::Pass,
            format!(
                "CUDA {} at {} was built by cuda-setup from wheels: it is rebuilt only if the wheels differ, and put back if the new one fails its check",
                v.major_minor(),
                dir.display()
            ),
            "",
            "",
        ),
        Err(e) => check(
            "install_path_not_ours",
            Status::Fail,
            e.to_string(),
            WHY,
            FIX,
        ),
        Ok(None) if super::toolkit_missing(t, dir, v).is_empty() => already_installed(dir, v),
        Ok(None) => check(
            "install_path_not_ours",
            Status::Fail,
            format!(
                "{} holds files cuda-setup did not build and is not a complete CUDA {}",
                dir.display(),
                v.major_minor()
            ),
            WHY,
            FIX,
        ),
    }
}

pub fn run(inputs: &Inputs, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let all = checks(inputs, ctx);
    for c in &all {
        let mark = match c.status {
            Status::Pass => "ok",
            Status::Warn => "warning",
            Status::Fail => "FAILED",
        };
        let tail = if c.status == Status::Pass {
            String::new()
        } else {
            format!(" — {} — {}", c.why, c.fix)
        };
        (ctx.emit)(StepEvent::Log {
            line: format!("[{mark}] {}{tail}", c.what),
        });
    }
    let failed: Vec<Check> = all
        .iter()
        .filter(|c| c.status == Status::Fail)
        .cloned()
        .collect();
    if !failed.is_empty() {
        return Err(StepError::Preflight { failed });
    }
    let warns = all.iter().filter(|c| c.status == Status::Warn).count();
    Ok(StepOutcome {
        changed: false,
        detail: format!("{} checks, {warns} warnings", all.len()),
        reboot_required: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::download::Cancel;
    use crate::target::Target;

    fn disk_checks(needed_bytes: u64, needed_is_estimate: bool) -> Vec<Check> {
        let root = tempfile::tempdir().unwrap();
        let target = Target::rooted(Os::Linux, root.path());
        let ctx = Ctx {
            target: &target,
            cancel: &Cancel::default(),
            emit: &|_| {},
        };
        let inputs = Inputs {
            toolkit_dir: None,
            toolkit_version: None,
            needed_bytes,
            needed_is_estimate,
            work_dir: root.path().to_path_buf(),
            needs_admin: false,
            developer: false,
            from_wheels: false,
            driver: false,
        };
        checks(&inputs, &ctx)
            .into_iter()
            .filter(|c| c.id.starts_with("disk_"))
            .collect()
    }

    #[test]
    fn too_little_room_fails_when_the_size_is_known_and_warns_when_it_is_a_guess() {
        // No drive here has an exabyte free.
        let known = disk_checks(u64::MAX / 2, false);
        assert_eq!(known.len(), 1);
        assert_eq!(known[0].status, Status::Fail, "{known:?}");
        let guess = disk_checks(u64::MAX / 2, true);
        assert_eq!(guess[0].status, Status::Warn, "{guess:?}");
        assert!(guess[0].what.contains("may be needed"));
        assert_eq!(disk_checks(1, false)[0].status, Status::Pass);
    }

    /// The PyTorch goal on Windows with a driver to install: the rights are asked for,
    /// and the way out without them is to install the driver yourself.
    #[test]
    fn a_driver_step_needs_administrator_rights() {
        let root = tempfile::tempdir().unwrap();
        let mut target = Target::rooted(Os::Windows, root.path());
        let inputs = |driver| Inputs {
            toolkit_dir: None,
            toolkit_version: None,
            needed_bytes: 1,
            needed_is_estimate: true,
            work_dir: root.path().to_path_buf(),
            needs_admin: false,
            developer: false,
            from_wheels: false,
            driver,
        };
        let admin = |target: &Target, driver| {
            let ctx = Ctx {
                target,
                cancel: &Cancel::default(),
                emit: &|_| {},
            };
            checks(&inputs(driver), &ctx)
                .into_iter()
                .find(|c| c.id == "admin")
        };
        assert_eq!(admin(&target, true).unwrap().status, Status::Pass);
        target.elevated = false;
        let c = admin(&target, true).unwrap();
        assert_eq!(c.status, Status::Fail);
        assert!(
            c.why.contains("NVIDIA driver") && c.fix.contains("--skip-driver"),
            "{c:?}"
        );
        assert!(
            admin(&target, false).is_none(),
            "no driver, no rights needed"
        );
    }
}
