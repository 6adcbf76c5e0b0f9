//! cuda-setup's UI-free core: from "the GPU idles" to a verified NVIDIA GPU stack.
//!
//! Detection, tables, recommendation, plans, steps and their executor, cuDNN, downloads,
//! the wheels method, repair, verify and the message catalogues. Nothing here draws a
//! window or writes to a terminal: the front ends (the `cuda-setup` package's CLI and
//! wizard) render what this crate returns, and the compiler keeps it that way — this
//! crate does not depend on clap, eframe or egui.

// Nothing here writes to a terminal: the front ends render what the core returns.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
// Every FFI call is a lower crate's (the GPU's in `cuda-setup-gpu`, the OS's in
// `cuda-setup-base::platform`): the engine decides, and calls only safe code.
#![forbid(unsafe_code)]

// The lower layers, each its own crate (ARCHITECTURE.md, "Crates"): the compiler keeps
// them from calling up into the engine. Re-exported under the module names the front ends
// and the tests have always used.
pub use cuda_setup_archive::{cudnn, devlayout, toolkit_version, wheels};
pub use cuda_setup_base::{
    error, exit, i18n, locale, lock, log, message, msg, os, panics, place, platform, safe_path,
    shown, stamp, state_file, units, version,
};
pub use cuda_setup_fetch::{download, http, proxy, pypi, refresh, url};
pub use cuda_setup_gpu::monitor;
pub use cuda_setup_tables::compat;

// The engine: what the machine has, what it should get, the plan, its steps and their
// executor, verify and repair.
pub mod bundle;
pub mod detect;
pub mod driverwatch;
pub mod fleet;
pub mod guard;
pub mod last_check;
pub mod linux_driver;
pub mod plan;
pub mod recommend;
pub mod records;
pub mod repair;
pub mod run;
pub mod steps;
pub mod target;
pub mod uninstall;
pub mod verify;
pub mod whatif;

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

    /// The workspace's manifests: (package name, the dependencies it names).
    fn manifests() -> Vec<(String, BTreeSet<String>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = vec![root.join("Cargo.toml")];
        for e in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
            files.push(e.path().join("Cargo.toml"));
        }
        let mut out = Vec::new();
        for f in files {
            let doc: toml::Table = std::fs::read_to_string(&f).unwrap().parse().unwrap();
            let name = doc["package"]["name"].as_str().unwrap().to_string();
            let mut names = BTreeSet::new();
            let mut add = |t: &toml::Table| {
                for (k, v) in t {
                    if k.ends_with("dependencies") {
                        names.extend(v.as_table().unwrap().keys().cloned());
                    }
                }
            };
            add(&doc);
            if let Some(t) = doc.get("target").and_then(|t| t.as_table()) {
                for t in t.values() {
                    add(t.as_table().unwrap());
                }
            }
            out.push((name, names));
        }
        out
    }

    /// No crate of the workspace but the front ends' names a front-end crate, so the
    /// compiler refuses a core type that derives `clap::ValueEnum` or a module that draws
    /// with egui.
    #[test]
    fn no_lower_crate_depends_on_a_front_end_crate() {
        let all = manifests();
        assert!(all.len() >= 7, "the manifests were not read: {all:?}");
        for (name, names) in all.iter().filter(|(n, _)| n != "cuda-setup") {
            assert!(
                names.contains("serde") || names.contains("cuda-setup-base"),
                "{name}: {names:?}"
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
                assert!(!names.contains(front), "{name} depends on {front}");
            }
        }
    }

    /// ARCHITECTURE.md's crate graph is the one the manifests make (so the layers a
    /// newcomer reads are the ones the compiler keeps).
    #[test]
    fn the_crate_graph_is_the_documented_one() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md"),
        )
        .unwrap();
        let block = doc
            .split("```crate-graph\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .expect("ARCHITECTURE.md has a crate-graph block");
        let documented: BTreeMap<String, BTreeSet<String>> = block
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (from, to) = l.split_once("->").unwrap();
                (
                    from.trim().to_string(),
                    to.split_whitespace().map(str::to_string).collect(),
                )
            })
            .collect();
        let actual: BTreeMap<String, BTreeSet<String>> = manifests()
            .into_iter()
            .map(|(name, deps)| {
                let ours = deps
                    .into_iter()
                    .filter(|d| d.starts_with("cuda-setup"))
                    .collect();
                (name, ours)
            })
            .collect();
        assert_eq!(documented, actual);
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
