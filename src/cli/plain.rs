//! What a failure says on the command line, in the user's language: one plain sentence
//! (`error:`), what to do (`hint:`, the typed error's own hint from the catalogue), and
//! the raw English chain for searching and support (`details:`). Typed errors map to
//! catalogue keys with a `match`, never by assembling a key at run time.

use cuda_setup_core::cudnn::CudnnError;
use cuda_setup_core::i18n::{Lang, render, t, tf};
use cuda_setup_core::message::Message;
use cuda_setup_core::run::Failure;
use cuda_setup_core::steps::{StepError, StepKind};

/// The three lines of a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub error: String,
    pub hint: String,
    /// The raw error, English; None when the sentence says it all.
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

/// A step's name in words, as the wizard names it (never the raw `set_env`).
pub fn step_title(lang: Lang, kind: StepKind) -> String {
    t(lang, cuda_setup_core::steps::title_key(kind))
}

/// A step's (or a download's) failure: the kind's sentence with its parameters, and the
/// error's own hint, both in the user's language; the raw chain behind `details:`.
pub fn failure(f: &Failure, lang: Lang) -> Said {
    Said {
        error: render(&f.sentence(), lang),
        hint: render(&f.hint, lang),
        details: Some(f.error.clone()),
    }
}

/// A sentence from the catalogue over a raw error, with the error's own hint.
pub fn keyed(lang: Lang, error: String, hint: &Message, raw: String) -> Said {
    Said {
        error,
        hint: render(hint, lang),
        details: Some(raw),
    }
}

/// A cuDNN command's failure.
pub fn cudnn(e: &CudnnError, lang: Lang) -> Said {
    let (raw, hint) = (cuda_setup_core::error::chain(e), e.hint());
    match e {
        CudnnError::NotAToolkit { dir, .. } => keyed(
            lang,
            tf(lang, "cli_err_not_toolkit", &[("dir", &dir.display())]),
            &hint,
            raw,
        ),
        CudnnError::NotInstalled { dir } => keyed(
            lang,
            tf(
                lang,
                "cli_err_cudnn_not_installed",
                &[("dir", &dir.display())],
            ),
            &hint,
            raw,
        ),
        CudnnError::BadState(_) => keyed(lang, t(lang, "cli_err_cudnn_record"), &hint, raw),
        CudnnError::LinkOut { path } => keyed(
            lang,
            tf(lang, "cli_err_cudnn_link_out", &[("path", &path.display())]),
            &hint,
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
            &e.hint(),
            cuda_setup_core::error::chain(e),
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

    /// Every hint the command line prints (`hint_*`) is there in both languages and
    /// names no wizard button: the terminal has none.
    #[test]
    fn command_line_hints_name_no_button() {
        let hints: Vec<&str> = cuda_setup_core::i18n::keys()
            .filter(|k| k.starts_with("hint_"))
            .collect();
        assert!(hints.len() > 50, "{hints:?}");
        for key in hints {
            for lang in [Lang::En, Lang::Zh] {
                let s = text(key, lang).unwrap_or_else(|| panic!("{key}"));
                assert!(!s.contains('`'), "{key}: {s}");
                assert!(
                    !s.contains('“') && !s.contains("点击") && !s.contains("click"),
                    "{key}: {s}"
                );
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
            StepError::Pip {
                code: None,
                unreachable: None,
            },
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
