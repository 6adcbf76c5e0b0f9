//! `cuda-setup uninstall` (#35) on a sandbox root, after a real install by the wheels
//! method with cuDNN and the environment (stand-in wheels on a loopback index): the
//! records and the Apps & features entry exist; `--dry-run` lists exactly our actions and
//! changes nothing; `--yes` leaves no file of ours, puts back the variables that existed
//! before, removes the entry; `detect` and `repair` then find nothing; a second run has
//! nothing to do. A cuDNN file changed since is left and named; links planted at recorded
//! places are never followed; a kill mid-uninstall is finished by the next run.

#![cfg(all(unix, target_arch = "x86_64"))]

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::wheels::{COMPONENTS, Platform, files, serve, toolkit_standins};

fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args).env("LANG", "C");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The stand-in toolkit wheels and a real-layout cuDNN wheel, served as an index.
fn index(p: Platform, tmp: &Path) -> support::server::Server {
    let cudnn = tmp.join("cudnn");
    std::fs::create_dir_all(&cudnn).unwrap();
    support::cudnn_zip::write_cudnn_wheel(&cudnn, "9.27.0.42", 13, p == Platform::Windows);
    let tk = toolkit_standins(&tmp.join("toolkit"), p);
    serve(&files(&[&tk, &cudnn]))
}

fn install(index: &str, root: &Path, os: &str) -> Output {
    cli(
        &[
            "install",
            "--unattended",
            "--goal",
            "developer",
            "--cuda",
            "13.5",
            "--method",
            "wheels",
            "--pypi-mirror",
            index,
            "--components",
            COMPONENTS,
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--os",
            os,
            "--root",
            root.to_str().unwrap(),
            "--connections",
            "2",
        ],
        &[],
    )
}

fn uninstall(root: &Path, os: &str, extra: &[&str]) -> Output {
    let mut a = vec!["uninstall", "--root", root.to_str().unwrap(), "--os", os];
    a.extend_from_slice(extra);
    cli(&a, &[])
}

/// Every file and link under `dir` (links as their target text), logs aside (each
/// command writes its own).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if rel.contains("/logs") || rel.ends_with("logs") {
                continue;
            }
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(rel, to.to_string_lossy().as_bytes().to_vec());
            } else if t.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

const ENTRY: &str =
    r"HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall\cuda-setup-cuda-13.5";

/// The whole story on a Windows layout: install, entry, dry run, uninstall, clean.
#[test]
fn a_windows_wheels_install_is_undone_to_the_last_file_and_variable() {
    let tmp = tempfile::tempdir().unwrap();
    let server = index(Platform::Windows, tmp.path());
    let root = tmp.path().join("root");
    // What the machine held before: a PATH and a CUDA_PATH of someone else's.
    let state = root.join(".cuda-setup");
    std::fs::create_dir_all(&state).unwrap();
    let before = serde_json::json!({
        "machine": {"Path": r"C:\Windows;C:\Tools", "CUDA_PATH": r"D:\old\cuda"},
        "user": {}
    });
    std::fs::write(state.join("windows-env.json"), before.to_string()).unwrap();
    let pristine = snapshot(&root);

    let out = install(&server.url("/simple"), &root, "windows");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.5");
    assert!(dir.join("bin/x64/cudnn64_9.dll").is_file());

    // The records and the entry.
    let rec: Value =
        serde_json::from_slice(&std::fs::read(state.join("installs/cuda-13.5.json")).unwrap())
            .unwrap();
    assert_eq!(rec["method"], "wheels", "{rec}");
    assert_eq!(rec["entry"], ENTRY, "{rec}");
    let reg: Value =
        serde_json::from_slice(&std::fs::read(state.join("windows-uninstall.json")).unwrap())
            .unwrap();
    let e = &reg[ENTRY];
    let exe = root.join("C/Program Files/cuda-setup/cuda-setup.exe");
    assert!(exe.is_file(), "the program's stable copy");
    assert_eq!(e["DisplayVersion"], "13.5.0", "{e}");
    assert_eq!(e["DisplayName"], "CUDA 13.5 (cuda-setup)", "{e}");
    assert_eq!(e["Publisher"], "cuda-setup");
    assert_eq!(e["NoModify"], 1);
    assert_eq!(e["NoRepair"], 1);
    assert!(e["EstimatedSize"].as_u64().unwrap() > 0, "{e}");
    assert_eq!(e["InstallDate"].as_str().unwrap().len(), 8, "{e}");
    let cmd = format!("\"{}\" uninstall --install-id cuda-13.5", exe.display());
    assert_eq!(e["UninstallString"], cmd.as_str());
    assert_eq!(e["QuietUninstallString"], format!("{cmd} --yes").as_str());

    // The dry run lists exactly our actions, and changes nothing.
    let installed = snapshot(&root);
    let dry = uninstall(&root, "windows", &["--dry-run", "--json"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
    let kinds: Vec<String> = json(&dry)["plan"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "restore_cudnn",
            "remove_toolkit",
            "restore_var",
            "restore_var",
            "remove_path_entries",
            "remove_entry",
            "forget_records"
        ],
        "{}",
        text(&dry)
    );
    let words = uninstall(&root, "windows", &["--dry-run"]);
    assert!(
        text(&words).contains(r"Set CUDA_PATH back to D:\old\cuda"),
        "{}",
        text(&words)
    );
    // In Chinese, for the beginner it is written for.
    let zh = uninstall(&root, "windows", &["--dry-run", "--lang", "zh"]);
    let zt = text(&zh);
    assert!(zt.contains("cuda-setup 将撤销以下更改："), "{zt}");
    assert!(
        zt.contains(r"把 CUDA_PATH 改回 cuda-setup 改动之前的值：D:\old\cuda"),
        "{zt}"
    );
    assert!(zt.contains("cuda-setup uninstall --yes"), "{zt}");
    assert_eq!(snapshot(&root), installed, "the dry run changed something");

    // Without --yes and no console: nothing changes, exit 2.
    let asked = uninstall(&root, "windows", &[]);
    assert_eq!(asked.status.code(), Some(2), "{}", text(&asked));
    assert_eq!(snapshot(&root), installed);

    // The entry's own command, unattended: as it was before, to the byte.
    let done = cli(
        &[
            "uninstall",
            "--install-id",
            "cuda-13.5",
            "--yes",
            "--root",
            root.to_str().unwrap(),
            "--os",
            "windows",
        ],
        &[],
    );
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    assert!(!dir.exists(), "{:?}", snapshot(&dir));
    assert!(!exe.exists());
    let now = snapshot(&root);
    let env: Value =
        serde_json::from_slice(&std::fs::read(state.join("windows-env.json")).unwrap()).unwrap();
    assert_eq!(env, before, "the environment as it was");
    let extra: Vec<&String> = now
        .keys()
        .filter(|k| !pristine.contains_key(*k) && !k.starts_with(".cuda-setup/downloads"))
        .filter(|k| *k != ".cuda-setup/logs/" && *k != ".cuda-setup/lock")
        .collect();
    // The toolkit's parents stay (Program Files and NVIDIA's folder are not ours to remove).
    let extra: Vec<&&String> = extra
        .iter()
        .filter(|k| {
            !matches!(
                k.as_str(),
                "C/" | "C/Program Files/"
                    | "C/Program Files/NVIDIA GPU Computing Toolkit/"
                    | "C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/"
                    | ".cuda-setup/downloads/"
            )
        })
        .collect();
    assert!(extra.is_empty(), "left behind: {extra:?}");

    // Detect and repair find nothing of ours; a second uninstall has nothing to do.
    let rep = cli(
        &[
            "repair",
            "--root",
            root.to_str().unwrap(),
            "--os",
            "windows",
            "--json",
        ],
        &[],
    );
    let rt = text(&rep);
    assert!(!rt.contains("v13.5"), "{rt}");
    let again = uninstall(&root, "windows", &["--yes"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        text(&again).contains("Nothing of cuda-setup's to undo"),
        "{}",
        text(&again)
    );
}

fn victim(tmp: &Path) -> PathBuf {
    let v = tmp.join("victim");
    std::fs::create_dir_all(v.join("bin")).unwrap();
    std::fs::write(v.join("precious"), b"not cuda-setup's").unwrap();
    std::fs::write(v.join("bin/cicc"), b"not cuda-setup's either").unwrap();
    v
}

/// On Linux: a cuDNN file changed since is left and named; a link planted at a recorded
/// file, and one planted where our folder was, are removed as links or left, never
/// followed; a kill mid-uninstall is finished by the next run; the profile script goes.
#[test]
fn changed_files_stay_links_are_not_followed_and_a_killed_uninstall_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let server = index(Platform::Linux, tmp.path());
    let root = tmp.path().join("root");
    let out = install(&server.url("/simple"), &root, "linux");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = root.join("usr/local/cuda-13.5");
    let profile = root.join("etc/profile.d/cuda-setup.sh");
    assert!(profile.is_file());
    assert!(dir.join("lib64/libcudnn_ops.so.9").exists());

    // The user edits a cuDNN header; someone plants links at places we recorded.
    let changed = dir.join("include/cudnn_version.h");
    std::fs::write(&changed, b"// my own edit\n").unwrap();
    let v = victim(tmp.path());
    std::fs::remove_file(dir.join("lib64/libcudnn_ops.so.9")).unwrap();
    std::os::unix::fs::symlink(v.join("precious"), dir.join("lib64/libcudnn_ops.so.9")).unwrap();
    std::fs::remove_file(dir.join("bin/nvcc")).unwrap();
    std::os::unix::fs::symlink(v.join("precious"), dir.join("bin/nvcc")).unwrap();
    std::fs::rename(dir.join("nvvm"), tmp.path().join("nvvm-moved")).unwrap();
    std::os::unix::fs::symlink(&v, dir.join("nvvm")).unwrap();

    let dry = uninstall(&root, "linux", &["--dry-run"]);
    let dt = text(&dry);
    assert_eq!(dry.status.code(), Some(0), "{dt}");
    assert!(dt.contains("include/cudnn_version.h was changed"), "{dt}");
    assert!(dt.contains("lib64/libcudnn_ops.so.9 was changed"), "{dt}");

    // Killed after its first action, then run again.
    let flags = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args([
            "uninstall",
            "--yes",
            "--root",
            root.to_str().unwrap(),
            "--os",
            "linux",
        ])
        .env("LANG", "C")
        .env("CUDA_SETUP_TEST_PAUSE_AT", "uninstall_1")
        .env("CUDA_SETUP_TEST_PAUSE_DIR", flags.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let flag = flags.path().join("uninstall_1.paused");
    let start = std::time::Instant::now();
    while !flag.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "never paused"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        dir.join("bin").exists(),
        "the toolkit's removal had not begun"
    );
    let resumed = uninstall(&root, "linux", &["--yes"]);
    let rt = text(&resumed);
    assert_eq!(resumed.status.code(), Some(0), "{rt}");
    assert!(rt.contains("interrupted"), "{rt}");

    // What changed stays, named; what links led to is untouched.
    assert_eq!(std::fs::read(&changed).unwrap(), b"// my own edit\n");
    assert_eq!(
        std::fs::read(v.join("precious")).unwrap(),
        b"not cuda-setup's"
    );
    assert_eq!(
        std::fs::read(v.join("bin/cicc")).unwrap(),
        b"not cuda-setup's either"
    );
    assert!(
        std::fs::symlink_metadata(dir.join("lib64/libcudnn_ops.so.9"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "a link at a cuDNN place counts as changed: left"
    );
    assert!(
        std::fs::symlink_metadata(dir.join("bin/nvcc")).is_err(),
        "the link at our nvcc went as a link"
    );
    assert!(!dir.join("lib64/libcudart.so.13").exists());
    assert!(!dir.join("lib64/libcudnn.so.9").exists());
    assert!(!profile.exists(), "the profile script was ours alone");
    assert!(!root.join(".cuda-setup/installs").exists());
    assert!(!root.join(".cuda-setup/env-changes.json").exists());

    let again = uninstall(&root, "linux", &["--yes"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}
