//! cuda-setup's UI-free core: from "the GPU idles" to a verified NVIDIA GPU stack.
//!
//! Detection, tables, recommendation, plans, steps and their executor, cuDNN, downloads,
//! the wheels method, repair, verify and the message catalogues. Nothing here draws a
//! window or writes to a terminal: the front ends (the `cuda-setup` package's CLI and
//! wizard) render what this crate returns, and the compiler keeps it that way — this
//! crate does not depend on clap, eframe or egui.

// Nothing here writes to a terminal: the front ends render what the core returns.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod bundle;
pub mod compat;
pub mod cudnn;
pub mod detect;
pub mod devlayout;
pub mod download;
pub mod error;
pub mod exit;
pub mod http;
pub mod i18n;
pub mod linux_driver;
pub mod locale;
pub mod lock;
pub mod log;
pub mod message;
pub mod monitor;
pub mod panics;
pub mod place;
pub mod plan;
pub mod platform;
pub mod recommend;
pub mod refresh;
pub mod repair;
pub mod run;
pub mod safe_path;
pub mod shown;
pub mod stamp;
pub mod state_file;
pub mod steps;
pub mod target;
pub mod units;
pub mod url;
pub mod verify;
pub mod version;
pub mod whatif;
pub mod wheels;

/// The boundary this crate keeps, checked where the compiler cannot check it alone.
#[cfg(test)]
mod boundary {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// The core's manifest names no front-end crate, so the compiler refuses a core type
    /// that derives `clap::ValueEnum` or a module that draws with egui.
    #[test]
    fn the_core_depends_on_no_front_end_crate() {
        let manifest =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
                .unwrap();
        let doc: toml::Table = manifest.parse().unwrap();
        let mut names = BTreeSet::new();
        for (k, v) in &doc {
            if k.ends_with("dependencies") {
                names.extend(v.as_table().unwrap().keys().cloned());
            }
            if k == "target" {
                for t in v.as_table().unwrap().values() {
                    for (k2, v2) in t.as_table().unwrap() {
                        if k2.ends_with("dependencies") {
                            names.extend(v2.as_table().unwrap().keys().cloned());
                        }
                    }
                }
            }
        }
        assert!(
            names.contains("serde"),
            "the manifest was not read: {names:?}"
        );
        for front in [
            "clap",
            "eframe",
            "egui",
            "egui_plot",
            "rfd",
            "indicatif",
            "egui_kittest",
        ] {
            assert!(!names.contains(front), "crates/core depends on {front}");
        }
    }

    /// No two top-level modules of the core import each other: the layers read one way
    /// (detect → recommend → plan → steps → run → verify/repair), so a change to one never
    /// needs a change to its caller's caller.
    #[test]
    fn no_two_core_modules_import_each_other() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&root, &mut files);
        let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in &files {
            let rel = f.strip_prefix(&root).unwrap();
            let top = rel
                .iter()
                .next()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            if top == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(f).unwrap();
            // Unit tests may reach anywhere.
            let code = text.split("#[cfg(test)]").next().unwrap();
            let mut add = |m: &str| {
                if m != top && !m.is_empty() {
                    uses.entry(top.clone()).or_default().insert(m.to_string());
                }
            };
            for part in code.split("crate::").skip(1) {
                if let Some(rest) = part.strip_prefix('{') {
                    for item in rest.split('}').next().unwrap().split(',') {
                        add(item.trim().split("::").next().unwrap().trim());
                    }
                } else {
                    add(part
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .next()
                        .unwrap());
                }
            }
        }
        assert!(
            uses.contains_key("plan") && uses["plan"].contains("steps"),
            "the scan found nothing: {uses:?}"
        );
        let mut both = Vec::new();
        for (a, bs) in &uses {
            for b in bs {
                if a < b && uses.get(b).is_some_and(|x| x.contains(a)) {
                    both.push(format!("{a} <-> {b}"));
                }
            }
        }
        assert!(both.is_empty(), "modules that import each other: {both:?}");
    }
}
