//! The records of this machine (#33): one answer to "what did cuda-setup record here",
//! whichever kind of run asks. A run keeps its state in its own folder
//! ([`Target::state_dir`]): the machine's when elevated (`%ProgramData%\cuda-setup`,
//! `/var/lib/cuda-setup`), the user's otherwise (`%LOCALAPPDATA%`, `~/.local/state`). The
//! install runs elevated and records there; the next day's wizard, `doctor` or
//! `guard status` run as the user — so each also reads the other folder, read-only.
//!
//! The rule (ARCHITECTURE.md, "Places"):
//! - our own folder: read as every state file (a bad one set aside), reported and acted on;
//! - not elevated, the machine's folder: read only when no other account can write it
//!   (`place::trusted_dir_readonly`: not a link, owned by administrators/root, no write
//!   for others) — then only an administrator wrote it, which is more than the user's own
//!   folder is trusted with, so its records are reported *and* acted on as the user's own;
//!   one that fails is passed over and left exactly as it is (never set aside: it is not
//!   ours to change, and we could not);
//! - elevated, the user's folder: every program the user runs can write it, so its
//!   records are only *reported* (a finding shown), never acted on: no interpreter it
//!   names is run, no driver it names is installed, no pin is written or removed and no
//!   restore is planned on its word ([`Use::Act`] never reads it).
//!
//! Where both folders hold a record of the same thing, the newer (its own recorded time)
//! wins. Writers keep writing to their own folder only.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::place::Dir;
use crate::state_file::{self, Rejected};
use crate::target::Target;

/// Which folder a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// This run's own state folder.
    Own,
    /// The machine's folder, read by a run without administrator rights.
    Machine,
    /// The user's folder, read by an elevated run: reported, never acted on.
    User,
}

impl Origin {
    /// Whether a run may act on a record from here (run a program, install, write a pin).
    pub fn acts(self) -> bool {
        self != Origin::User
    }
}

/// What a record is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Only to tell the user (a finding, a status line).
    Report,
    /// To decide something that runs a program, installs, writes or deletes.
    Act,
}

/// One copy of a state file.
#[derive(Debug)]
pub struct Found {
    pub origin: Origin,
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

impl Found {
    /// This copy is not a valid record: ours is set aside (as every bad state file of
    /// ours); the other folder's only logged, left where it is.
    pub fn reject(&self, why: impl Into<String>) -> Rejected {
        let r = Rejected::new(&self.path, why);
        let r = if self.origin == Origin::Own {
            r.set_aside()
        } else {
            r
        };
        tracing::warn!(error = %r, origin = ?self.origin, "record rejected");
        r
    }
}

/// The other run's state folder for `use_`, opened only to read: the machine's when this
/// run is not elevated (only when no other account can write it), the user's when it is
/// (only to report). None when there is none, or it may not be read.
pub fn other_dir(target: &Target, use_: Use) -> Option<(Origin, Dir)> {
    let path = target.other_state_dir();
    let opened = if target.elevated {
        if use_ == Use::Act {
            return None;
        }
        crate::place::readonly_dir(&path).map(|d| d.map(|d| (Origin::User, d)))
    } else {
        crate::place::trusted_dir_readonly(&path).map(|d| d.map(|d| (Origin::Machine, d)))
    };
    match opened {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(folder = %path.display(), error = %e, "the other state folder is not read");
            None
        }
    }
}

/// The other run's downloads folder, opened only to read, whichever way this run is
/// elevated: only ever a source to *copy* a file from, whose bytes are checked against
/// the SHA-256 of a record this run acts on (so where the bytes sat does not matter).
pub fn other_downloads(target: &Target) -> Option<Dir> {
    other_dir(target, Use::Report)?
        .1
        .sub("downloads", false)
        .ok()
}

/// The state file `rel` (`driver-record.json`, `guard/verified-torch.json`) from this
/// run's own folder, then, read-only, from the other one where `use_` allows. Own: a bad
/// file is an error (set aside, as today); the other's: logged and passed over.
pub fn read(target: &Target, rel: &str, use_: Use) -> Result<Vec<Found>, Rejected> {
    let mut out = Vec::new();
    let own = target.state_dir().join(rel);
    match state_file::read(&own) {
        Ok(Some(bytes)) => out.push(Found {
            origin: Origin::Own,
            path: own,
            bytes,
        }),
        Ok(None) => {}
        Err(r) => return Err(r.set_aside()),
    }
    if let Some((origin, dir)) = other_dir(target, use_) {
        match dir.read(Path::new(rel), state_file::MAX_BYTES) {
            Ok(Some(bytes)) => out.push(Found {
                origin,
                path: dir.display(rel),
                bytes,
            }),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "a record in the other state folder is not read"),
        }
    }
    Ok(out)
}

/// The newest of `items` by `at` (a tie keeps the first: our own folder's).
pub fn newest<T>(items: impl IntoIterator<Item = T>, at: impl Fn(&T) -> u64) -> Option<T> {
    let mut best: Option<T> = None;
    for i in items {
        if best.as_ref().is_none_or(|b| at(&i) > at(b)) {
            best = Some(i);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Os;

    fn target(root: &Path, elevated: bool) -> Target {
        let mut t = Target::rooted(Os::Linux, root);
        t.elevated = elevated;
        t
    }

    #[test]
    fn the_other_folder_is_read_only_and_acted_on_by_the_rule() {
        let d = tempfile::tempdir().unwrap();
        let (admin, user) = (target(d.path(), true), target(d.path(), false));
        assert_eq!(admin.state_dir(), d.path().join(".cuda-setup"));
        assert_eq!(user.state_dir(), d.path().join(".cuda-setup-user"));
        assert_eq!(admin.other_state_dir(), user.state_dir());
        admin
            .state()
            .unwrap()
            .write_atomic("r.json", b"machine", false)
            .unwrap();
        user.state()
            .unwrap()
            .write_atomic("r.json", b"user", false)
            .unwrap();
        let got = |t: &Target, u| {
            read(t, "r.json", u)
                .unwrap()
                .into_iter()
                .map(|f| (f.origin, String::from_utf8(f.bytes).unwrap()))
                .collect::<Vec<_>>()
        };
        // The user reads the machine's record, to report and to act.
        for u in [Use::Report, Use::Act] {
            assert_eq!(
                got(&user, u),
                [
                    (Origin::Own, "user".into()),
                    (Origin::Machine, "machine".into())
                ]
            );
        }
        // The administrator reads the user's only to report.
        assert_eq!(
            got(&admin, Use::Report),
            [
                (Origin::Own, "machine".into()),
                (Origin::User, "user".into())
            ]
        );
        assert_eq!(got(&admin, Use::Act), [(Origin::Own, "machine".into())]);
        assert!(!Origin::User.acts() && Origin::Machine.acts());
        // A bad copy in the other folder is only logged, never moved.
        let f = &read(&user, "r.json", Use::Act).unwrap()[1];
        f.reject("test");
        assert!(admin.state_dir().join("r.json").is_file());
        assert_eq!(
            newest([(1, 'a'), (3, 'b'), (3, 'c')], |x| x.0),
            Some((3, 'b'))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_machine_folder_others_can_write_is_passed_over_and_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (admin, user) = (target(d.path(), true), target(d.path(), false));
        admin
            .state()
            .unwrap()
            .write_atomic("r.json", b"machine", false)
            .unwrap();
        let machine = admin.state_dir();
        std::fs::set_permissions(&machine, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(read(&user, "r.json", Use::Report).unwrap().is_empty());
        assert!(other_downloads(&user).is_none());
        let mode = std::fs::metadata(&machine).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o777, "not changed");
        assert!(machine.join("r.json").is_file(), "not set aside");
        // A link where the machine's folder should be: not followed.
        std::fs::rename(&machine, d.path().join("real")).unwrap();
        std::fs::set_permissions(
            d.path().join("real"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::os::unix::fs::symlink(d.path().join("real"), &machine).unwrap();
        assert!(read(&user, "r.json", Use::Act).unwrap().is_empty());
        assert!(
            std::fs::symlink_metadata(&machine)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
