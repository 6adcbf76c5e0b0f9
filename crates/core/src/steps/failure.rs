//! What kind of failure ended a run: a stable word for scripts (`failure.kind` in the
//! report, docs/cli.md lists them) and the catalogue key of its plain-words sentence.
//! What to do is not here: the command line says the error's own hint
//! (`StepError::hint`), the wizard its own words for the kind (`src/ui/fixes.rs`),
//! naming the buttons of the page that shows it.

use serde::{Deserialize, Serialize};

/// The class of a step's failure, by what the user can do about it. Serialised as the
/// words docs/cli.md documents (`download_network`, `disk_full`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    Preflight,
    DownloadNetwork,
    DownloadMissing,
    DownloadCorrupt,
    DownloadOther,
    DiskFull,
    InstallerFailed,
    InstallerTimeout,
    /// The driver installer is not signed by NVIDIA Corporation: not run.
    DriverSignature,
    /// NVIDIA's driver installer reported an error.
    DriverFailed,
    NeedsAdmin,
    FileInUse,
    Cudnn,
    Wheels,
    Env,
    Pip,
    Verify,
    /// The developer goal's build check: a program would not compile or link against the
    /// toolkit just installed (`failure.params.problem` says what).
    Build,
    Io,
    Internal,
    Cancelled,
    /// A rebuild of a toolkit from wheels would put the new toolkit's files where the
    /// user keeps files of their own (`failure.params`: `folder`, `files`); nothing changed.
    UserFiles,
    /// Another cuda-setup holds the target's (or the toolkit folder's) lock.
    Busy,
}

impl FailureKind {
    /// Every kind, in the order docs/cli.md lists them.
    pub const ALL: [FailureKind; 23] = [
        FailureKind::Preflight,
        FailureKind::DownloadNetwork,
        FailureKind::DownloadMissing,
        FailureKind::DownloadCorrupt,
        FailureKind::DownloadOther,
        FailureKind::DiskFull,
        FailureKind::InstallerFailed,
        FailureKind::InstallerTimeout,
        FailureKind::DriverSignature,
        FailureKind::DriverFailed,
        FailureKind::NeedsAdmin,
        FailureKind::FileInUse,
        FailureKind::Cudnn,
        FailureKind::Wheels,
        FailureKind::Env,
        FailureKind::Pip,
        FailureKind::Verify,
        FailureKind::Build,
        FailureKind::Io,
        FailureKind::Internal,
        FailureKind::Cancelled,
        FailureKind::UserFiles,
        FailureKind::Busy,
    ];

    /// The catalogue key of the plain-words sentence (params: see `Failure::params`).
    /// Written out, not assembled, so every key is visible to a search and to the
    /// catalogue's dead-key check.
    pub fn fail_key(self) -> &'static str {
        match self {
            FailureKind::Preflight => "fail_preflight",
            FailureKind::DownloadNetwork => "fail_download_network",
            FailureKind::DownloadMissing => "fail_download_missing",
            FailureKind::DownloadCorrupt => "fail_download_corrupt",
            FailureKind::DownloadOther => "fail_download_other",
            FailureKind::DiskFull => "fail_disk_full",
            FailureKind::InstallerFailed => "fail_installer_failed",
            FailureKind::InstallerTimeout => "fail_installer_timeout",
            FailureKind::DriverSignature => "fail_driver_signature",
            FailureKind::DriverFailed => "fail_driver_failed",
            FailureKind::NeedsAdmin => "fail_needs_admin",
            FailureKind::FileInUse => "fail_file_in_use",
            FailureKind::Cudnn => "fail_cudnn",
            FailureKind::Wheels => "fail_wheels",
            FailureKind::Env => "fail_env",
            FailureKind::Pip => "fail_pip",
            FailureKind::Verify => "fail_verify",
            FailureKind::Build => "fail_build",
            FailureKind::Io => "fail_io",
            FailureKind::Internal => "fail_internal",
            FailureKind::Cancelled => "fail_cancelled",
            FailureKind::Busy => "fail_busy",
            FailureKind::UserFiles => "fail_user_files",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words a script sees, written out: serialising must give exactly these.
    const WORDS: [&str; 23] = [
        "preflight",
        "download_network",
        "download_missing",
        "download_corrupt",
        "download_other",
        "disk_full",
        "installer_failed",
        "installer_timeout",
        "driver_signature",
        "driver_failed",
        "needs_admin",
        "file_in_use",
        "cudnn",
        "wheels",
        "env",
        "pip",
        "verify",
        "build",
        "io",
        "internal",
        "cancelled",
        "user_files",
        "busy",
    ];

    #[test]
    fn kinds_serialise_to_the_words_scripts_branch_on() {
        for (kind, word) in FailureKind::ALL.iter().zip(WORDS) {
            assert_eq!(serde_json::to_value(kind).unwrap(), word);
            let back: FailureKind = serde_json::from_value(word.into()).unwrap();
            assert_eq!(back, *kind);
        }
    }

    /// ALL lists each variant once (a new variant fails here until it is added).
    #[test]
    fn all_lists_every_kind_once() {
        let set: std::collections::HashSet<_> = FailureKind::ALL.iter().collect();
        assert_eq!(set.len(), FailureKind::ALL.len());
        for (i, k) in FailureKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?}: ALL follows the declaration order");
        }
    }

    /// docs/cli.md's list of `failure.kind` words is exactly the enum's.
    #[test]
    fn docs_list_exactly_these_kinds() {
        let doc = include_str!("../../../../docs/cli.md");
        let start = doc
            .find("`kind` is a stable word a script can branch on")
            .expect("docs/cli.md documents failure.kind");
        let list = &doc[start..];
        let list = &list[list.find("):").expect("the list follows") + 2..];
        let list = &list[..list
            .find(" (another")
            .expect("the list ends at busy's note")];
        let words: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
        assert_eq!(words, WORDS);
    }

    #[test]
    fn every_kind_has_plain_words_in_both_languages() {
        for kind in FailureKind::ALL {
            // The catalogue's own tests hold every key to both languages.
            assert!(crate::i18n::has_key(kind.fail_key()), "{kind:?}");
        }
    }
}
