//! cuda-setup's two front ends over the UI-free core (`cuda_setup_core`): the CLI
//! (`cli`) and the wizard (`ui`). Neither decides anything the core can decide.

pub mod cli;
pub mod ui;
/// Clap value parsers for the core's enums, shared by the CLI and the wizard's flags.
pub(crate) mod values;

/// The direction of the front ends' imports, which the compiler does not keep by itself.
#[cfg(test)]
mod boundary {
    use std::path::{Path, PathBuf};

    fn code(dir: &Path) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(code(&p));
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                // Unit tests may reach anywhere.
                let code = text.split("#[cfg(test)]").next().unwrap().to_string();
                out.push((p, code));
            }
        }
        out
    }

    fn src(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(rel)
    }

    /// `cli` may open the wizard (`ui::launch`); the wizard never reaches into the CLI.
    #[test]
    fn the_wizard_never_imports_the_cli() {
        let files = code(&src("ui"));
        assert!(files.len() > 10, "the scan found nothing");
        for (p, text) in files {
            assert!(
                !text.contains("crate::cli"),
                "{} imports the CLI",
                p.display()
            );
        }
    }

    /// Pages read the session and emit actions: none imports another page, and the
    /// session imports no page, so adding a page edits no other.
    #[test]
    fn pages_import_no_other_page_and_the_session_no_page() {
        let pages = code(&src("ui/pages"));
        let names: Vec<String> = pages
            .iter()
            .map(|(p, _)| p.file_stem().unwrap().to_string_lossy().into_owned())
            .filter(|n| n != "mod")
            .collect();
        assert!(names.len() >= 8, "{names:?}");
        for (p, text) in &pages {
            let me = p.file_stem().unwrap().to_string_lossy();
            for other in names.iter().filter(|n| **n != me && me != "mod") {
                for path in [format!("pages::{other}"), format!("super::{other}")] {
                    assert!(!text.contains(&path), "{me} imports the {other} page");
                }
            }
        }
        let session = code(&src("ui/session"));
        assert!(
            session.len() >= 5,
            "the session's modules: {}",
            session.len()
        );
        for (p, text) in &session {
            assert!(!text.contains("pages::"), "{} imports a page", p.display());
        }
    }

    /// The wizard's worker runs commands and sends events: every rule about CUDA, cuDNN,
    /// drivers or pip it applies is a core function's (#31: it had its own cuDNN check,
    /// archive names and download). A rule would show as an OS test, a version or a file
    /// name of NVIDIA's, or a pip argument.
    #[test]
    fn the_worker_holds_no_rule_about_cuda_cudnn_drivers_or_pip() {
        let (_, text) = &code(&src("ui"))
            .into_iter()
            .find(|(p, _)| p.ends_with("worker.rs"))
            .unwrap();
        assert!(text.contains("fn execute"), "the scan found no worker");
        for rule in [
            "Os::",
            "_cuda",
            "cudnn-",
            ".whl",
            "archive.zip",
            "--index-url",
            "version_of",
            "major()",
            "split_whitespace",
            "nvidia.com",
            "Refusal::",
        ] {
            assert!(!text.contains(rule), "worker.rs decides something: {rule}");
        }
        let versions = text
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|lit| {
                let mut parts = lit.split('.');
                parts.clone().count() >= 2
                    && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect::<Vec<_>>();
        assert!(versions.is_empty(), "versions in worker.rs: {versions:?}");
    }
}
