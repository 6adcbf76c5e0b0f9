//! #32, free-threaded Python (dossier §13.4): `--python 3.13t` is a what-if fact (it was
//! refused, exit 2), detection reads the build from the interpreter, and either way the
//! pick is a torch with wheels for its ABI (`cp313t`: 2.7.0 – 2.12.0 on PyPI), run by
//! that interpreter. Real child processes of the binary; the stand-in Python of
//! `tests/support/python.rs` for detection.
#![cfg(unix)]

use std::path::Path;
use std::process::Output;

use cuda_setup_core::version::Version;
use serde_json::Value;

use crate::support::cli::{json, text, with_cache};

/// `cuda-setup ARGS` in English with its cache and home under `home` and `PATH` as given.
fn run(home: &Path, path: Option<&Path>, args: &[&str]) -> Output {
    let mut c = with_cache(home, args);
    c.env("CUDA_SETUP_NO_REFRESH", "1");
    if let Some(p) = path {
        c.env("PATH", p).env_remove("CONDA_PREFIX");
    }
    c.output().unwrap()
}

fn ver(j: &Value) -> Version {
    j.as_str().unwrap().parse().unwrap()
}

fn keys(j: &Value, field: &str) -> Vec<String> {
    j[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap().to_string())
        .collect()
}

const RTX_4090: [&str; 4] = ["--gpu", "RTX 4090", "--driver", "595.71.05"];

#[test]
fn recommend_python_313t_gets_torch_2_12_run_by_python3_13t_with_the_reason() {
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["recommend", "--os", "linux", "--python", "3.13t"];
    args.extend(RTX_4090);
    let out = run(home.path(), None, &args);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("python3.13t -m pip install torch==2.12.0+cu"),
        "{said}"
    );
    assert!(
        said.contains("PyTorch 2.12 is the newest with wheels for free-threaded Python 3.13t"),
        "{said}"
    );
    assert!(said.contains("you have 3.13t"), "{said}");

    args.push("--json");
    let j = json(&run(home.path(), None, &args));
    let torch = &j["torch"];
    assert_eq!(torch["version"], "2.12.0", "{torch}");
    assert_eq!(torch["interpreter"], "python3.13t");
    assert!(!torch["command"].as_str().unwrap().contains("torchvision"));
    assert!(keys(&j, "reasons").contains(&"torch_free_threaded".to_string()));

    // Windows: the Python launcher names the build.
    let j = json(&run(
        home.path(),
        None,
        &[
            "recommend",
            "--json",
            "--os",
            "windows",
            "--python",
            "3.13t",
            "--gpu",
            "RTX 4090",
            "--driver",
            "595.97",
        ],
    ));
    let command = j["torch"]["command"].as_str().unwrap();
    assert!(
        command.starts_with("py -3.13t -m pip install torch==2.12.0+cu"),
        "{command}"
    );

    // The regular 3.13 is not held back.
    let j = json(&run(
        home.path(),
        None,
        &[
            "recommend",
            "--json",
            "--os",
            "linux",
            "--python",
            "3.13",
            "--gpu",
            "RTX 4090",
            "--driver",
            "595.71.05",
        ],
    ));
    assert!(
        ver(&j["torch"]["version"]) > "2.12.1".parse().unwrap(),
        "{}",
        j["torch"]
    );
    assert_eq!(j["torch"]["interpreter"], Value::Null);
}

#[test]
fn recommend_python_314t_stays_within_cp314t_and_315t_is_blocked_with_the_way_out() {
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["recommend", "--json", "--os", "linux", "--python", "3.14t"];
    args.extend(RTX_4090);
    let j = json(&run(home.path(), None, &args));
    let v = ver(&j["torch"]["version"]);
    assert!(
        v <= "2.15.0".parse().unwrap() && v >= "2.9.0".parse().unwrap(),
        "{v}"
    );
    assert!(
        j["torch"]["command"]
            .as_str()
            .unwrap()
            .starts_with("python3.14t -m pip install ")
    );

    let mut args = vec!["recommend", "--os", "linux", "--python", "3.15t"];
    args.extend(RTX_4090);
    let out = run(home.path(), None, &args);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "blocked: {said}");
    assert!(
        said.contains("No PyTorch release has wheels for free-threaded Python 3.15t (cp315t)"),
        "{said}"
    );
    assert!(said.contains("regular Python 3.15"), "{said}");
    assert!(said.contains("3.13t, 3.14t"), "{said}");

    // Not a version at all is still refused, as a usage error.
    let out = run(home.path(), None, &["recommend", "--python", "3.13x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// Detection asks the interpreter (`Py_GIL_DISABLED`): `detect` shows `3.13.1t`, its JSON
/// says `free_threaded`, and `recommend` without `--python` picks for that build.
#[test]
fn a_detected_free_threaded_python_is_shown_as_such_and_picked_for() {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    let py = crate::support::python::interpreter(&bin, None);
    crate::support::python::set_free_threaded(&bin, "3.13.1");

    let out = run(home.path(), Some(&bin), &["detect"]);
    let said = text(&out);
    assert!(
        said.contains(&format!("Python 3.13.1t: {}", py.display())),
        "{said}"
    );
    let j = json(&run(home.path(), Some(&bin), &["detect", "--json"]));
    let p = &j["pythons"][0];
    assert_eq!(
        (&p["version"], &p["free_threaded"]),
        (&Value::from("3.13.1"), &Value::from(true)),
        "{p}"
    );

    let mut args = vec!["recommend", "--json", "--os", "linux"];
    args.extend(RTX_4090);
    let j = json(&run(home.path(), Some(&bin), &args));
    assert_eq!(j["torch"]["version"], "2.12.0", "{}", j["torch"]);
    assert_eq!(j["torch"]["interpreter"], "python3.13t");

    // The same stand-in as a regular build: the newest torch, plain pip.
    std::fs::remove_file(bin.join("free-threaded")).unwrap();
    let j = json(&run(home.path(), Some(&bin), &["detect", "--json"]));
    assert_eq!(j["pythons"][0]["free_threaded"], false);
}
