//! #32 through the real binary: the driver a toolkit is installed with is of its branch,
//! and an old driver that works gets both paths, the default, and a flag to pick one.

use std::process::Command;

use serde_json::Value;

fn recommend(args: &[&str]) -> (Value, String) {
    let run = |json: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
        c.arg("recommend");
        if json {
            c.arg("--json");
        }
        c.args(args)
            .env("LANG", "C")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .output()
            .unwrap()
    };
    let out = run(true);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = serde_json::from_slice(&out.stdout).unwrap();
    let text = String::from_utf8(run(false).stdout).unwrap();
    (j, text)
}

const OLD_3060: [&str; 8] = [
    "--os", "windows", "--gpu", "RTX 3060", "--driver", "512.95", "--python", "3.12",
];

#[test]
fn an_old_driver_gets_both_paths_and_updates_by_default() {
    let (j, text) = recommend(&OLD_3060);
    let c = &j["choice"];
    assert_eq!(c["default"], "update", "{c}");
    assert_eq!(c["chosen"], "update");
    assert_eq!(c["ours"], true);
    assert_eq!(c["keep"]["torch"], "2.7.1");
    assert_eq!(c["keep"]["driver"], "512.95");
    assert_eq!(c["update"]["restart"], true);
    assert_eq!(j["driver"]["action"], "update");
    assert_eq!(j["torch"]["version"], c["update"]["torch"]);
    assert_ne!(j["torch"]["version"], "2.7.1");
    assert_eq!(
        c["update"]["driver"], j["driver"]["install"]["version"],
        "the path names the driver installed"
    );
    let keep = c["keep"]["text"].as_str().unwrap();
    assert_eq!(keep, "Keep the current driver (512.95) → PyTorch 2.7.1");
    let update = c["update"]["text"].as_str().unwrap();
    assert!(update.starts_with("Update the driver first ("), "{update}");
    // The text prints both, the default marked, and the driver's CUDA.
    assert!(text.contains(&format!("* {update} (default)")), "{text}");
    assert!(text.contains(&format!("  {keep}")), "{text}");
    assert!(
        text.contains("Driver 512.95 · supports CUDA up to 11.6"),
        "{text}"
    );
}

#[test]
fn keep_driver_keeps_what_runs_now() {
    let mut args = OLD_3060.to_vec();
    args.push("--keep-driver");
    let (j, text) = recommend(&args);
    assert_eq!(j["choice"]["chosen"], "keep");
    assert_eq!(j["choice"]["default"], "update");
    assert_eq!(j["torch"]["version"], "2.7.1");
    assert_eq!(j["driver"]["action"], "none");
    assert!(j["driver"]["install"].is_null());
    // cu118 above the 11.6 the driver lists: why that is fine, once.
    assert_eq!(
        text.matches("minor-version compatibility lets").count(),
        1,
        "{text}"
    );
    // And back again.
    let mut args = OLD_3060.to_vec();
    args.push("--update-driver");
    let (j, _) = recommend(&args);
    assert_eq!(j["choice"]["chosen"], "update");
    assert_eq!(j["driver"]["action"], "update");
}

/// No driver, developer: CUDA 13.4 and an R615 driver (dossier §13.1), named in the
/// headline's place; on Linux the branch asked for.
#[test]
fn the_driver_installed_for_cuda_13_4_is_r615() {
    let (j, text) = recommend(&[
        "--os",
        "windows",
        "--gpu",
        "RTX 3060",
        "--no-driver",
        "--python",
        "3.12",
        "--goal",
        "developer",
    ]);
    assert!(
        j["toolkit"]["version"]
            .as_str()
            .unwrap()
            .starts_with("13.4."),
        "{}",
        j["toolkit"]
    );
    assert_eq!(j["driver"]["branch"], 615);
    let v: f64 = j["driver"]["install"]["version"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(v >= 615.0, "{v}");
    assert!(
        text.contains(&format!(
            "install >= {}",
            j["driver"]["install"]["version"].as_str().unwrap()
        )),
        "{text}"
    );
    assert!(!text.contains("Install the newest driver"), "{text}");
    let (j, text) = recommend(&[
        "--os",
        "linux",
        "--gpu",
        "RTX 3060",
        "--no-driver",
        "--python",
        "3.12",
        "--goal",
        "developer",
    ]);
    assert_eq!(j["driver"]["branch"], 615);
    assert!(text.contains("install >= R615"), "{text}");
}

/// `install --keep-driver` / `--update-driver` (a dry run's plan): keep plans no driver
/// step and torch 2.7.1; update puts the driver's download and install first, the
/// driver `recommend --update-driver` names, then the torch it unlocks.
#[cfg(unix)]
#[test]
fn install_plans_the_driver_path_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let py = crate::support::python::interpreter(&dir.path().join("py"), None);
    let plan = |path: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
            .args([
                "install",
                "--dry-run",
                "--json",
                "--os",
                "windows",
                "--gpu-cc",
                "8.6",
                "--driver",
                "512.95",
                path,
                "--root",
            ])
            .arg(dir.path().join("root"))
            .arg("--python-exe")
            .arg(&py)
            .env("LANG", "C")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
        let steps: Vec<String> = plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["step"].as_str().unwrap().to_string())
            .collect();
        (plan, steps)
    };
    let torch_pin = |plan: &Value| {
        let step = plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "install_torch")
            .unwrap_or_else(|| panic!("no pip step: {plan:#}"));
        step["args"][0].as_str().unwrap().to_string()
    };

    let (keep, steps) = plan("--keep-driver");
    assert_eq!(steps, ["preflight", "install_torch"], "{keep:#}");
    assert_eq!(torch_pin(&keep), "torch==2.7.1+cu118");
    assert_eq!(keep["steps"][0]["driver"], false);

    let (update, steps) = plan("--update-driver");
    assert_eq!(
        steps,
        ["preflight", "download", "install_driver", "install_torch"],
        "{update:#}"
    );
    assert_eq!(update["steps"][0]["driver"], true);
    assert_eq!(update["steps"][1]["what"], "driver_installer");
    let driver = &update["steps"][2];
    assert_eq!(driver["version"], "617.14", "{driver}");
    assert_eq!(driver["package"], "geforce_desktop");
    assert!(
        update["steps"][1]["url"]
            .as_str()
            .unwrap()
            .ends_with("/617.14-desktop-win10-win11-64bit-international-dch-whql.exe"),
        "{}",
        update["steps"][1]
    );
    assert_eq!(update["notes"][0]["key"], "plan_note_driver_first");

    // The plan runs what `recommend --update-driver` recommends for this Python.
    let (rec, _) = recommend(&[
        "--os",
        "windows",
        "--gpu",
        "RTX 3060",
        "--driver",
        "512.95",
        "--python",
        "3.11",
        "--update-driver",
    ]);
    assert_eq!(rec["choice"]["chosen"], "update");
    assert_eq!(rec["choice"]["update"]["driver"], driver["version"]);
    let torch = rec["torch"]["version"].as_str().unwrap();
    assert_ne!(torch, "2.7.1");
    assert!(
        torch_pin(&update).starts_with(&format!("torch=={torch}+cu")),
        "{} vs {torch}",
        torch_pin(&update)
    );
}
