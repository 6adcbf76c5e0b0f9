//! What a failure says on the command line, in the user's language: one plain sentence
//! (`error:`), what to do (`hint:`), and the raw English chain for searching and support
//! (`details:`). Typed errors map to catalogue keys with a `match`, never by assembling
//! a key at run time.

use cuda_setup_core::cudnn::CudnnError;
use cuda_setup_core::i18n::{Lang, render, t, tf};
use cuda_setup_core::message::Message;
use cuda_setup_core::run::Failure;
use cuda_setup_core::steps::{FailureKind, StepError, StepKind};

/// The three lines of a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub error: String,
    pub hint: String,
    /// The raw error (and the core's own hint), English; None when the sentence says it all.
    pub details: Option<String>,
}

impl Said {
    /// On stderr. Values from outside in it (a flag's value, a URL, an entry's name, a
    /// server's words) are shortened: a megabyte of `--compat-dir` is not echoed whole.
    pub fn print(&self) {
        use cuda_setup_core::shown::text;
        eprintln!("error: {}", text(&self.error));
        eprintln!("hint: {}", text(&self.hint));
        if let Some(d) = &self.details {
            eprintln!("details: {}", text(d));
        }
    }
}

/// The command line's "what to do" for a failure kind: the wizard's `fix_*` words name
/// its buttons, these name commands and flags.
pub fn fix_key(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Preflight => "cli_fix_preflight",
        FailureKind::DownloadNetwork => "cli_fix_download_network",
        FailureKind::DownloadMissing => "cli_fix_download_missing",
        FailureKind::DownloadCorrupt => "cli_fix_download_corrupt",
        FailureKind::DownloadOther => "cli_fix_download_other",
        FailureKind::DiskFull => "cli_fix_disk_full",
        FailureKind::InstallerFailed => "cli_fix_installer_failed",
        FailureKind::InstallerTimeout => "cli_fix_installer_timeout",
        FailureKind::NeedsAdmin => "cli_fix_needs_admin",
        FailureKind::FileInUse => "cli_fix_file_in_use",
        FailureKind::Cudnn => "cli_fix_cudnn",
        FailureKind::Wheels => "cli_fix_wheels",
        FailureKind::Env => "cli_fix_env",
        FailureKind::Pip => "cli_fix_pip",
        FailureKind::Verify => "cli_fix_verify",
        FailureKind::Build => "cli_fix_build",
        FailureKind::Io => "cli_fix_io",
        FailureKind::Internal => "cli_fix_internal",
        FailureKind::Cancelled => "cli_fix_cancelled",
        FailureKind::Busy => "cli_fix_busy",
        FailureKind::UserFiles => "cli_fix_user_files",
        FailureKind::DriverSignature => "cli_fix_driver_signature",
        FailureKind::DriverFailed => "cli_fix_driver_failed",
    }
}

/// A step's name in words, as the wizard names it (never the raw `set_env`).
pub fn step_title(lang: Lang, kind: StepKind) -> String {
    t(lang, cuda_setup_core::steps::title_key(kind))
}

/// A step's (or a download's) failure: the kind's sentence with its parameters.
pub fn failure(f: &Failure, lang: Lang) -> Said {
    let (what, _) = f.plain_words();
    let fix = Message {
        key: fix_key(f.kind),
        params: f.params.clone(),
    };
    Said {
        error: render(&what, lang),
        hint: render(&fix, lang),
        details: Some(details(&f.error, &f.hint)),
    }
}

/// The raw chain, with the core's own (English) hint when it adds to it.
pub fn details(error: &str, hint: &str) -> String {
    if hint.is_empty() {
        error.to_string()
    } else {
        format!("{error} ({hint})")
    }
}

/// A sentence and hint from the catalogue over a raw error.
pub fn keyed(lang: Lang, error: String, hint: &'static str, raw: String) -> Said {
    Said {
        error,
        hint: t(lang, hint),
        details: Some(raw),
    }
}

/// A cuDNN command's failure.
pub fn cudnn(e: &CudnnError, lang: Lang) -> Said {
    let raw = details(&cuda_setup_core::error::chain(e), e.hint());
    match e {
        CudnnError::NotAToolkit { dir, .. } => keyed(
            lang,
            tf(lang, "cli_err_not_toolkit", &[("dir", &dir.display())]),
            "cli_hint_not_toolkit",
            raw,
        ),
        CudnnError::NotInstalled { dir } => keyed(
            lang,
            tf(
                lang,
                "cli_err_cudnn_not_installed",
                &[("dir", &dir.display())],
            ),
            "cli_hint_cudnn_not_installed",
            raw,
        ),
        CudnnError::BadState(_) => keyed(
            lang,
            t(lang, "cli_err_cudnn_record"),
            "cli_hint_cudnn_record",
            raw,
        ),
        CudnnError::LinkOut { path } => keyed(
            lang,
            tf(lang, "cli_err_cudnn_link_out", &[("path", &path.display())]),
            "cli_hint_cudnn_link_out",
            raw,
        ),
        // The install's classes: refused archive, file in use, full drive, I/O, busy.
        CudnnError::Refused { .. }
        | CudnnError::InUse { .. }
        | CudnnError::DiskFull { .. }
        | CudnnError::Io { .. }
        | CudnnError::Busy(_) => failure(&Failure::command(&StepError::Cudnn(e.clone())), lang),
    }
}

/// A download's failure (the `download` command).
pub fn download(e: &cuda_setup_core::download::DownloadError, lang: Lang) -> Said {
    use cuda_setup_core::download::DownloadError;
    if let DownloadError::UnsafePlace { path, .. } = e {
        return keyed(
            lang,
            tf(lang, "cli_err_download_place", &[("path", &path.display())]),
            "cli_hint_download_place",
            details(&cuda_setup_core::error::chain(e), e.hint()),
        );
    }
    failure(&Failure::command(&StepError::Download(e.clone())), lang)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuda_setup_core::i18n::render_key;

    fn text(key: &str, lang: Lang) -> Option<String> {
        render_key(key, std::iter::empty::<(&str, &str)>(), lang)
    }
    use cuda_setup_core::download::DownloadError;
    use std::path::PathBuf;

    fn has_han(s: &str) -> bool {
        s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    }

    /// Every kind has a CLI hint in both languages, with no placeholder left unfilled
    /// but the ones its failure fills.
    #[test]
    fn every_kind_has_a_command_line_hint() {
        for kind in FailureKind::ALL {
            for lang in [Lang::En, Lang::Zh] {
                let s = text(fix_key(kind), lang).unwrap_or_else(|| panic!("{kind:?}"));
                assert!(!s.contains('`'), "{s}");
                // The wizard's button names do not belong on a command line.
                assert!(!s.contains("重试") && !s.contains("Try again"), "{s}");
            }
        }
    }

    #[test]
    fn cudnn_errors_say_a_chinese_sentence_and_keep_the_raw_text_in_details() {
        let dir = PathBuf::from("/opt/cuda");
        let errors = [
            CudnnError::NotAToolkit {
                dir: dir.clone(),
                detail: "no include folder".into(),
            },
            CudnnError::NotInstalled { dir: dir.clone() },
            CudnnError::DiskFull {
                dir: dir.clone(),
                needed: 10,
                free: 1,
            },
            CudnnError::Io {
                path: dir.join("bin"),
                source: cuda_setup_core::error::cause(std::io::Error::other("denied")),
            },
            CudnnError::LinkOut {
                path: dir.join("include"),
            },
        ];
        for e in &errors {
            let said = cudnn(e, Lang::Zh);
            assert!(has_han(&said.error) && has_han(&said.hint), "{said:?}");
            assert!(
                !said.error.contains('{') && !said.hint.contains('{'),
                "{said:?}"
            );
            let raw = cuda_setup_core::error::chain(e);
            assert!(!said.error.contains(&raw), "{said:?}");
            assert!(said.details.as_deref().unwrap().contains(&raw), "{said:?}");
        }
    }

    /// A representative failure of each kind a step can end with: the Chinese sentence
    /// and hint carry no raw text and no unfilled placeholder; the raw chain is in details.
    #[test]
    fn step_failures_say_a_chinese_sentence_with_the_raw_chain_in_details() {
        let io = || cuda_setup_core::error::cause(std::io::Error::other("access denied"));
        let errors = [
            StepError::Installer {
                code: Some(1),
                missing: vec!["bin/nvcc.exe".into()],
                log: None,
            },
            StepError::InstallerTimeout { minutes: 60 },
            StepError::NeedsAdmin {
                what: "the CUDA installer".into(),
            },
            StepError::Pip { code: None },
            StepError::Verify {
                detail: "missing bin/nvcc.exe".into(),
            },
            StepError::Io {
                path: PathBuf::from("/opt/x"),
                source: io(),
            },
            StepError::DiskFull {
                path: PathBuf::from("/"),
                needed: Some(3 << 30),
                free: Some(1 << 20),
            },
            StepError::Internal {
                message: "index out of bounds".into(),
            },
            StepError::Cancelled,
            StepError::env("cannot set CUDA_PATH", std::io::Error::other("registry")),
        ];
        for e in &errors {
            let said = failure(&Failure::of(StepKind::InstallToolkit, e), Lang::Zh);
            assert!(has_han(&said.error) && has_han(&said.hint), "{said:?}");
            for s in [&said.error, &said.hint] {
                assert!(
                    !s.contains('{') && !s.contains("Some(") && !s.contains('`'),
                    "{s}"
                );
            }
            let raw = cuda_setup_core::error::chain(e);
            assert!(said.details.as_deref().unwrap().contains(&raw), "{said:?}");
            assert!(!said.error.contains(&raw), "{said:?}");
        }
    }

    #[test]
    fn a_download_that_found_nothing_says_so_in_chinese() {
        let e = DownloadError::AllSourcesFailed(vec![DownloadError::Http {
            url: "http://127.0.0.1:1/x.zip".into(),
            status: 404,
        }]);
        let said = download(&e, Lang::Zh);
        assert_eq!(said.error, text("fail_download_missing", Lang::Zh).unwrap());
        assert!(has_han(&said.hint));
        assert!(said.details.unwrap().contains("404"));
        assert!(!said.error.is_ascii());
    }
}
