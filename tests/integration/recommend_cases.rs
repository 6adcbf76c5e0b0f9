//! #20's named examples through the real binary: `recommend --json` with the GPUs by
//! the names users and tools report, as a fleet script would run it. What is right comes
//! from the issue and the compat dossier (§1, §4, §6), not from today's engine.

use std::process::{Command, Output};

use cuda_setup_core::version::Version;
use serde_json::Value;

fn recommend(args: &[&str]) -> (Option<i32>, Value) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .arg("recommend")
        .arg("--json")
        .args(args)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .unwrap();
    let j = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), j)
}

fn ver(j: &Value) -> Version {
    j.as_str()
        .unwrap_or_else(|| panic!("not a version: {j}"))
        .parse()
        .unwrap()
}

fn keys(j: &Value, field: &str) -> Vec<String> {
    j[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap().to_string())
        .collect()
}

/// Class 3: a data-centre driver that runs CUDA 12.8 (NVML says so) gets nothing to
/// change, and a minimum no higher than itself.
#[test]
fn a100_on_570_172_08_keeps_its_driver_and_its_minimum_is_not_above_it() {
    for (driver, cuda) in [("570.172.08", "12.8"), ("580.95.05", "13.0")] {
        let (code, j) = recommend(&[
            "--os",
            "linux",
            "--goal",
            "developer",
            "--gpu",
            "NVIDIA A100-SXM4-80GB",
            "--driver",
            driver,
            "--driver-cuda",
            cuda,
            // The driver as it is: an update to CUDA 13 is offered beside it (#32), and
            // its default depends on the distribution this runs on.
            "--keep-driver",
        ]);
        assert_eq!(code, Some(0), "{j}");
        assert_eq!(j["driver"]["action"], "none", "{driver}: {j}");
        let minimum = ver(&j["driver"]["minimum"]);
        assert!(
            minimum <= ver(&Value::from(driver)),
            "{driver}: minimum {minimum}"
        );
        assert_eq!(
            ver(&j["toolkit"]["version"]).major_minor(),
            cuda.parse::<Version>().unwrap(),
            "{driver}: {j}"
        );
    }
}

/// Class 1: no wheel carries both sm_120 and sm_61 (dossier §6.4): one GPU is left out,
/// said, and the CUDA_VISIBLE_DEVICES value shows the other; the Windows command pins
/// the CUDA build (class 7).
#[test]
fn rtx_5090_and_gtx_1080_ti_leave_one_out_and_say_which() {
    let (code, j) = recommend(&[
        "--os",
        "windows",
        "--gpu",
        "NVIDIA GeForce RTX 5090",
        "--gpu",
        "NVIDIA GeForce GTX 1080 Ti",
        "--driver",
        "581.42",
        "--python",
        "3.12",
    ]);
    assert_eq!(code, Some(0), "{j}");
    let left = j["left_out"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{j}");
    assert_eq!(left[0]["part"], "torch");
    let kept = if left[0]["index"] == 0 { "1" } else { "0" };
    assert_eq!(j["visible_devices"], kept, "{j}");
    assert!(
        keys(&j, "reasons").iter().any(|k| k == "gpu_left_out"),
        "{j}"
    );
    let variant = j["torch"]["variant"].as_str().unwrap();
    let version = j["torch"]["version"].as_str().unwrap();
    let command = j["torch"]["command"].as_str().unwrap();
    assert!(
        command.contains(&format!("torch=={version}+{variant}")),
        "{command}"
    );
}

/// Class 2: Python 3.15 and 3.8 are the cause, not the GPU; another Python is named.
#[test]
fn python_not_the_gpu_is_blamed() {
    for (gpu, python) in [
        ("NVIDIA GeForce RTX 4090", "3.15"),
        ("NVIDIA GeForce RTX 5090", "3.8"),
    ] {
        let (code, j) = recommend(&[
            "--os", "windows", "--gpu", gpu, "--driver", "581.42", "--python", python,
        ]);
        if code == Some(0) {
            // A torch for this Python (a table update added one): it must support it.
            let lo = ver(&j["torch"]["python_min"]);
            let hi = ver(&j["torch"]["python_max"]);
            let py: Version = python.parse().unwrap();
            assert!(lo <= py && py <= hi, "{gpu} {python}: {j}");
            continue;
        }
        assert_eq!(code, Some(3), "{gpu} {python}: {j}");
        let b = &j["blockers"][0];
        assert_eq!(b["key"], "torch_blocked_by_python", "{gpu} {python}: {j}");
        let pythons = b["params"]["pythons"].as_str().unwrap_or("");
        assert!(
            pythons.contains("3.1"),
            "{gpu} {python}: pythons={pythons:?}"
        );
        assert!(
            !keys(&j, "blockers")
                .iter()
                .any(|k| k == "no_torch_for_gpus"),
            "{j}"
        );
    }
}

/// Class 4: an RTX 5090 on a 56x driver: update to the 58x branch and get the newest
/// torch, not 570 and cu128.
#[test]
fn rtx_5090_on_560_updates_to_the_58x_branch() {
    let (code, j) = recommend(&[
        "--os",
        "windows",
        "--gpu",
        "NVIDIA GeForce RTX 5090",
        "--driver",
        "560.94",
        "--python",
        "3.12",
    ]);
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(j["driver"]["action"], "update", "{j}");
    assert!(
        ver(&j["driver"]["minimum"]) >= "580.88".parse().unwrap(),
        "{j}"
    );
    assert_ne!(j["torch"]["variant"], "cu128", "{j}");
    assert_eq!(
        j["torch"]["version"],
        crate::support::newest_torch().as_str(),
        "{j}"
    );
}

/// Class 4: Kepler's last branch is R470: the update asked for stays on it and says so.
#[test]
fn tesla_k80_stays_on_r470() {
    let (code, j) = recommend(&[
        "--os",
        "linux",
        "--goal",
        "developer",
        "--gpu",
        "Tesla K80",
        "--driver",
        "390.157",
    ]);
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(j["driver"]["action"], "update", "{j}");
    assert_eq!(j["driver"]["last_branch"], 470, "{j}");
    assert!(ver(&j["driver"]["minimum"]).major() <= 470, "{j}");
    if !j["driver"]["upgrade_minimum"].is_null() {
        assert!(ver(&j["driver"]["upgrade_minimum"]).major() <= 470, "{j}");
    }
    assert!(
        keys(&j, "reasons")
            .iter()
            .any(|k| k == "driver_last_branch"),
        "{j}"
    );
    assert_eq!(ver(&j["toolkit"]["version"]).major(), 11, "{j}");
}

/// Class 5: CUDA 12.8 builds no sm_103 (B300); 12.9 is the first (dossier §4.1).
#[test]
fn b300_never_gets_cuda_12_8() {
    let (code, j) = recommend(&[
        "--os",
        "linux",
        "--goal",
        "developer",
        "--gpu-cc",
        "10.3",
        "--driver",
        "570.172.08",
        "--driver-cuda",
        "12.8",
    ]);
    assert_eq!(code, Some(0), "{j}");
    let tk = ver(&j["toolkit"]["version"]);
    assert!(
        tk.major_minor() >= "12.9".parse().unwrap(),
        "CUDA {tk} for sm_103"
    );
}
