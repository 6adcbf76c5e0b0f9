//! `-v`/`-vv` and `RUST_LOG` (issue #31): what cuda-setup does, on standard error, for a
//! user reporting a problem; nothing of it without them. A sandbox root, so the real
//! machine's GPU, toolkits and Pythons take no part.

use std::path::Path;
use std::process::Output;

/// `cuda-setup ARGS repair --os linux --root <root> --json`: detection and the audit in
/// the sandbox, with only `env` in the environment.
fn repair(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.env_clear()
        .env("LANG", "C")
        .env("HOME", root)
        .env("PATH", root.join("bin"))
        .args(args)
        .args(["repair", "--os", "linux", "--json", "--root"])
        .arg(root);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn dash_vv_shows_detect_and_repair_at_debug_and_nothing_is_shown_without_it() {
    let w = tempfile::tempdir().unwrap();
    let vv = stderr(&repair(w.path(), &["-vv"], &[]));
    for line in [
        "DEBUG cuda_setup_core::detect: detect: probes started",
        "DEBUG cuda_setup_core::detect: detect: probe finished probe=\"toolkit\" ok=true",
        "INFO cuda_setup_core::detect: detect: done gpus=0",
        "DEBUG cuda_setup_core::repair: repair: audit started",
        "INFO cuda_setup_core::repair: repair: audit done findings=0 problems=0",
    ] {
        assert!(vv.contains(line), "no `{line}` in:\n{vv}");
    }
    // -v: the steps only.
    let v = stderr(&repair(w.path(), &["-v"], &[]));
    assert!(
        v.contains("INFO cuda_setup_core::detect: detect: done"),
        "{v}"
    );
    assert!(!v.contains("DEBUG"), "{v}");
    // Neither: standard error holds none of it (the JSON on stdout is the same).
    let quiet = repair(w.path(), &[], &[]);
    let q = stderr(&quiet);
    assert!(!q.contains("cuda_setup"), "{q}");
    assert!(q.trim().is_empty(), "{q}");
}

#[test]
fn rust_log_picks_the_targets_and_a_bad_one_is_named() {
    let w = tempfile::tempdir().unwrap();
    let only_repair = stderr(&repair(
        w.path(),
        &[],
        &[("RUST_LOG", "cuda_setup_core::repair=debug")],
    ));
    assert!(
        only_repair.contains("repair: audit started"),
        "{only_repair}"
    );
    assert!(!only_repair.contains("detect:"), "{only_repair}");
    let bad = stderr(&repair(w.path(), &["-v"], &[("RUST_LOG", "a=b=c")]));
    assert!(
        bad.starts_with("warning: RUST_LOG=a=b=c is not a filter cuda-setup can read"),
        "{bad}"
    );
    assert!(bad.contains("\ndetails: "), "{bad}");
    // -v still holds.
    assert!(
        bad.contains("INFO cuda_setup_core::detect: detect: done"),
        "{bad}"
    );
}
