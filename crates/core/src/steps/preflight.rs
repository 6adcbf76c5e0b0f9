//! Pre-flight: everything that can be known to fail before a 3 GB download starts.
//! Each check says what, why, and what to do.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Ctx, StepError, StepEvent, StepOutcome};
use crate::compat::Os;
use crate::i18n::{self, Lang};
use crate::message::Message;
use crate::msg;
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

/// One check's result. `message`, `reason` and `remedy` are its words (what was found,
/// why it matters, what to do) for front ends to render in the user's language; `what`,
/// `why` and `fix` are the same in English, for the log, the JSON report and scripts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub id: String,
    pub status: Status,
    pub what: String,
    pub why: String,
    pub fix: String,
    pub message: Message,
    pub reason: Option<Message>,
    pub remedy: Option<Message>,
}

fn check(
    id: &str,
    status: Status,
    message: Message,
    reason: Option<Message>,
    remedy: Option<Message>,
) -> Check {
    let en = |m: &Option<Message>| {
        m.as_ref()
            .map_or_else(String::new, |m| i18n::render(m, Lang::En))
    };
    Check {
        id: id.into(),
        status,
        what: i18n::render(&message, Lang::En),
        why: en(&reason),
        fix: en(&remedy),
        message,
        reason,
        remedy,
    }
}

impl Check {
    /// The lines a front end shows for this check, in the order read: what was found;
    /// when it did not pass, first whether it stops the install, then why and what to do.
    pub fn lines(&self) -> Vec<Message> {
        let lead = match self.status {
            Status::Pass => None,
            Status::Warn => Some(msg!("preflight_warning")),
            Status::Fail => Some(msg!("preflight_not_passed")),
        };
        lead.into_iter()
            .chain([self.message.clone()])
            .chain(self.reason.clone())
            .chain(self.remedy.clone())
            .collect()
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

/// What a front end shows before a plan runs: its pre-flight inputs, their checks run
/// now (nothing changes), and the free space where the toolkit and the downloads go
/// (`disk_toolkit`, `disk_work`). Asks the file system: not on a UI thread.
#[derive(Debug, Clone, Default)]
pub struct Ahead {
    pub inputs: Option<Inputs>,
    pub checks: Vec<Check>,
    pub free: Vec<(&'static str, Option<u64>)>,
}

pub fn ahead(target: &crate::target::Target, steps: &[super::Step]) -> Ahead {
    let Some(inputs) = steps.iter().find_map(|s| match s {
        super::Step::Preflight(i) => Some(i.clone()),
        _ => None,
    }) else {
        return Ahead::default();
    };
    let cancel = crate::download::Cancel::default();
    let ctx = Ctx {
        target,
        cancel: &cancel,
        emit: &|_| {},
    };
    let free = |d: &Path| crate::platform::free_space(d).ok();
    Ahead {
        checks: checks(&inputs, &ctx),
        free: vec![
            ("disk_toolkit", inputs.toolkit_dir.as_deref().and_then(free)),
            ("disk_work", free(&inputs.work_dir)),
        ],
        inputs: Some(inputs),
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
        let Ok(bytes_free) = crate::platform::free_space(&dir) else {
            continue;
        };
        let (free, needed, dir) = (
            units::bytes(bytes_free),
            units::bytes(inputs.needed_bytes),
            dir.display().to_string(),
        );
        out.push(if bytes_free >= inputs.needed_bytes {
            check(
                id,
                Status::Pass,
                msg!("check_disk_ok", free = free, dir = dir),
                None,
                None,
            )
        } else if inputs.needed_is_estimate {
            check(
                id,
                Status::Warn,
                msg!(
                    "check_disk_estimate",
                    free = free,
                    dir = dir,
                    needed = needed
                ),
                Some(msg!("check_disk_estimate_why")),
                Some(msg!("check_disk_fix")),
            )
        } else {
            check(
                id,
                Status::Fail,
                msg!("check_disk_short", free = free, dir = dir, needed = needed),
                Some(msg!("check_disk_why")),
                Some(msg!("check_disk_fix")),
            )
        });
    }
    if inputs.needs_admin || inputs.driver {
        out.push(if t.elevated {
            check("admin", Status::Pass, msg!("check_admin_ok"), None, None)
        } else {
            let (why, fix) = match (inputs.needs_admin, t.os) {
                // Only the driver needs the rights (the PyTorch goal).
                (false, _) => (
                    msg!("check_admin_driver_why"),
                    msg!("check_admin_driver_fix"),
                ),
                (true, Os::Windows) => (
                    msg!("check_admin_windows_why"),
                    msg!("check_admin_windows_fix"),
                ),
                (true, Os::Linux) => (msg!("check_admin_linux_why"), msg!("check_admin_linux_fix")),
            };
            check(
                "admin",
                Status::Fail,
                msg!("check_admin_missing"),
                Some(why),
                Some(fix),
            )
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
                msg!("check_path_non_ascii", path = p.display()),
                Some(msg!("check_path_non_ascii_why")),
                Some(msg!("check_path_non_ascii_fix")),
            )),
            Some(_) => out.push(check(
                id,
                Status::Warn,
                msg!("check_path_long", path = p.display()),
                Some(msg!("check_path_long_why")),
                Some(msg!("check_path_long_fix")),
            )),
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
            Some(p) => check(
                "visual_studio",
                Status::Pass,
                msg!("check_vs_found", path = p.display()),
                None,
                None,
            ),
            None => check(
                "visual_studio",
                Status::Warn,
                msg!("check_vs_missing"),
                Some(msg!("check_vs_missing_why")),
                Some(msg!("check_vs_missing_fix")),
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
        msg!(
            "check_already_installed",
            version = v.major_minor(),
            dir = dir.display()
        ),
        None,
        None,
    )
}

/// What the wheels method will do with the folder already at its destination (what
/// `wheels::assemble` does: ours is rebuilt safely, a complete foreign toolkit is kept,
/// anything else is refused).
fn wheels_destination(t: &crate::target::Target, dir: &Path, v: &Version) -> Check {
    let not_ours = |message| {
        check(
            "install_path_not_ours",
            Status::Fail,
            message,
            Some(msg!("check_not_ours_why")),
            Some(msg!("check_not_ours_fix")),
        )
    };
    match crate::wheels::assemble::read_record(dir) {
        Ok(Some(_)) => check(
            "wheels_ours",
            Status::Pass,
            msg!(
                "check_wheels_ours",
                version = v.major_minor(),
                dir = dir.display()
            ),
            None,
            None,
        ),
        Err(e) => not_ours(msg!("check_not_ours_record", dir = dir.display()).with("error", e)),
        Ok(None) if super::toolkit_missing(t, dir, v).is_empty() => already_installed(dir, v),
        Ok(None) => not_ours(msg!(
            "check_not_ours",
            dir = dir.display(),
            version = v.major_minor()
        )),
    }
}

pub fn run(inputs: &Inputs, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let all = checks(inputs, ctx);
    for line in all.iter().flat_map(Check::lines) {
        (ctx.emit)(StepEvent::Log { line });
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
        detail: msg!("preflight_done", checks = all.len(), warnings = warns),
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

    /// Every check a sandbox can produce (room short, a guess, enough; the rights for
    /// each reason; a non-ASCII and an over-long path; no Visual Studio) says its
    /// finding, reason and remedy in both languages; the English fields read as before.
    #[test]
    fn every_check_says_its_words_in_both_languages() {
        use crate::i18n::{self, Lang};
        let root = tempfile::tempdir().unwrap();
        let long = root.path().join("x".repeat(210));
        let mut all = Vec::new();
        for os in [Os::Windows, Os::Linux] {
            for (needs_admin, driver) in [(true, false), (false, true)] {
                for (needed_bytes, needed_is_estimate) in
                    [(u64::MAX / 2, false), (u64::MAX / 2, true), (1, false)]
                {
                    let mut target = Target::rooted(os, root.path());
                    target.elevated = false;
                    target.host = crate::platform::Host::sandbox(
                        os,
                        root.path(),
                        [(
                            "TEMP".to_string(),
                            "C:\\Users\\\u{5f20}\u{4e09}\\Temp".to_string(),
                        )]
                        .into(),
                    );
                    let ctx = Ctx {
                        target: &target,
                        cancel: &Cancel::default(),
                        emit: &|_| {},
                    };
                    all.extend(checks(
                        &Inputs {
                            toolkit_dir: Some(long.clone()),
                            toolkit_version: Some("12.4".parse().unwrap()),
                            needed_bytes,
                            needed_is_estimate,
                            work_dir: root.path().to_path_buf(),
                            needs_admin,
                            developer: true,
                            from_wheels: false,
                            driver,
                        },
                        &ctx,
                    ));
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for c in &all {
            for m in c.lines() {
                seen.insert(m.key);
                let zh = i18n::render(&m, Lang::Zh);
                assert!(
                    zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) && !zh.contains('{'),
                    "{}: {zh}",
                    c.id
                );
            }
            assert_eq!(c.what, i18n::render(&c.message, Lang::En));
            assert_eq!(c.status == Status::Pass, c.reason.is_none(), "{c:?}");
        }
        for key in [
            "check_disk_short",
            "check_disk_estimate",
            "check_disk_ok",
            "check_admin_missing",
            "check_admin_driver_why",
            "check_admin_windows_why",
            "check_admin_linux_why",
            "check_path_long",
            "check_vs_missing",
            "preflight_warning",
            "preflight_not_passed",
        ] {
            assert!(seen.contains(key), "{key} not produced: {seen:?}");
        }
        // The wizard reads the path off the English finding.
        let ascii = all.iter().find(|c| c.message.key == "check_path_non_ascii");
        let ascii = ascii.expect("the non-ASCII TEMP is found");
        assert!(
            ascii.what.ends_with(" contains non-ASCII characters"),
            "{ascii:?}"
        );
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
