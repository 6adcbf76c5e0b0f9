//! Places are input (#30): what another account plants in a folder an elevated run
//! writes or reads — a symbolic link, a FIFO, a link to a device, a folder it owns or can
//! write — steers nothing. Each test plants the thing as an attacker would, runs the real
//! command, and checks that nothing outside changed and nothing blocked.

#![cfg(unix)]

use crate::support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::cudnn_zip::{Spec, toolkit};
use support::server::Server;
use support::standin::{linux_runfile, serve_installer};

/// Runs `c`, killing it and failing the test if it has not ended after `limit`: a
/// planted FIFO must never make us wait for ever.
fn bounded(mut c: Command, limit: Duration) -> Output {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?} (blocked?)\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args).env("LANG", "C");
    c
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o666) },
        0,
        "mkfifo {p:?}"
    );
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loopback mirror with NVIDIA's Linux runfile for CUDA 11.4 (a stand-in program that
/// lays out a toolkit), and the `install` arguments for it into `root`.
fn linux_install(server: &Server, root: &Path) -> Vec<String> {
    serve_installer(
        server,
        "11.4.4",
        "cuda_11.4.4_470.82.01_linux.run",
        linux_runfile(),
    );
    [
        "install",
        "--goal",
        "developer",
        "--unattended",
        "--json",
        "--os",
        "linux",
        "--cuda",
        "11.4",
        "--gpu-cc",
        "8.6",
        "--driver",
        "470.82.01",
        "--no-cudnn",
        "--mirror",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("http://{}", server.addr),
        "--root".into(),
        root.display().to_string(),
    ])
    .collect()
}

fn run_install(args: &[String]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args).env("LANG", "C");
    bounded(c, Duration::from_secs(120))
}

/// Every entry under `dir` (names only, links not followed).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Links planted at `logs/`, `downloads/` and `env-changes.json` in the state folder: the
/// install's log, its download and its record of environment changes are never written
/// through them (the links are set aside, kept, and our own folders made).
#[test]
fn links_planted_in_the_state_folder_receive_none_of_our_writes() {
    let server = Server::start();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let state = root.join(".cuda-setup");
    std::fs::create_dir_all(&state).unwrap();
    let outside = work.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let victim = work.path().join("victim.json");
    std::fs::write(&victim, b"the victim's own bytes").unwrap();
    std::os::unix::fs::symlink(&outside, state.join("logs")).unwrap();
    std::os::unix::fs::symlink(&outside, state.join("downloads")).unwrap();
    std::os::unix::fs::symlink(&victim, state.join("env-changes.json")).unwrap();

    let out = run_install(&linux_install(&server, &root));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        names(&outside),
        Vec::<String>::new(),
        "a log went through the link"
    );
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        b"the victim's own bytes",
        "env-changes.json was written through the link"
    );
    // Our record is a real file of ours now, and it holds the change just made.
    let rec = state.join("env-changes.json");
    let m = std::fs::symlink_metadata(&rec).unwrap();
    assert!(m.file_type().is_file(), "{m:?}");
    assert!(std::fs::read_to_string(&rec).unwrap().contains("CUDA_HOME"));
}

/// The state folder world-writable (another account could plant anything in it): an
/// elevated run sets it aside (kept, as evidence) and makes its own, 0755. The same for a
/// folder owned by another account, and for a world-writable folder below it.
#[test]
fn a_state_folder_another_account_can_write_is_set_aside_when_elevated() {
    if !is_root() {
        eprintln!("skipped: needs root (an elevated run, and chown to another uid)");
        return;
    }
    for how in ["world-writable", "another owner", "logs world-writable"] {
        let server = Server::start();
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("root");
        let state = root.join(".cuda-setup");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("planted.txt"), b"x").unwrap();
        match how {
            "world-writable" => {
                std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap()
            }
            "another owner" => std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap(),
            _ => {
                std::fs::create_dir(state.join("logs")).unwrap();
                std::fs::set_permissions(
                    state.join("logs"),
                    std::fs::Permissions::from_mode(0o777),
                )
                .unwrap();
            }
        }
        let out = run_install(&linux_install(&server, &root));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{how}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let m = std::fs::symlink_metadata(&state).unwrap();
        assert!(m.is_dir());
        assert_eq!(m.uid(), 0, "{how}");
        assert_eq!(m.mode() & 0o022, 0, "{how}: mode {:o}", m.mode());
        let logs = std::fs::symlink_metadata(state.join("logs")).unwrap();
        assert_eq!(logs.mode() & 0o022, 0, "{how}: logs mode {:o}", logs.mode());
        let set_aside = |dir: &Path, prefix: &str| -> Vec<PathBuf> {
            names(dir)
                .into_iter()
                .filter(|n| n.starts_with(prefix))
                .map(|n| dir.join(n))
                .collect()
        };
        if how == "logs world-writable" {
            assert_eq!(set_aside(&state, "logs.untrusted-").len(), 1, "{how}");
            assert!(
                state.join("planted.txt").exists(),
                "our own folder was kept"
            );
        } else {
            let aside = set_aside(&root, ".cuda-setup.untrusted-");
            assert_eq!(aside.len(), 1, "{how}: {:?}", names(&root));
            assert!(
                aside[0].join("planted.txt").exists(),
                "the evidence is kept"
            );
            assert!(!state.join("planted.txt").exists(), "{how}: used as it was");
        }
    }
}

/// A FIFO, or a link to /dev/zero, where the toolkit's `version.json` should be: read
/// without blocking, judged on the handle, and not taken for a version.
#[test]
fn a_fifo_or_a_device_at_the_toolkits_version_json_blocks_nothing() {
    for planted in ["fifo", "/dev/zero"] {
        let work = tempfile::tempdir().unwrap();
        let dir = toolkit(work.path(), "12.4.1");
        let spec = Spec {
            version: "9.10.2.21",
            cuda_major: 12,
            dll_size: 20_000,
        };
        let zip = work.path().join(format!("{}.zip", spec.top()));
        spec.write(&zip);
        std::fs::remove_file(dir.join("version.json")).unwrap();
        if planted == "fifo" {
            mkfifo(&dir.join("version.json"));
        } else {
            std::os::unix::fs::symlink(planted, dir.join("version.json")).unwrap();
        }
        let out = bounded(
            cmd(&[
                "cudnn",
                "install",
                "--archive",
                zip.to_str().unwrap(),
                "--cuda-dir",
                dir.to_str().unwrap(),
            ]),
            Duration::from_secs(30),
        );
        // The version comes from elsewhere (the folder's name) or the folder is refused as
        // no toolkit; either way the command ended and said so.
        assert!(
            out.status.code().is_some(),
            "{planted}: killed by a signal: {out:?}"
        );
        let detect = bounded(
            cmd(&["verify", "--cuda-dir", dir.to_str().unwrap(), "--json"]),
            Duration::from_secs(60),
        );
        assert!(detect.status.code().is_some(), "{planted}: {detect:?}");
    }
}

/// A FIFO at a bundle's `manifest.json` (bundle folders are often shared): the plan
/// refuses it at once, naming the file, instead of waiting for a writer for ever.
#[test]
fn a_fifo_at_a_bundles_manifest_is_refused_at_once() {
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("bundle");
    std::fs::create_dir(&bundle).unwrap();
    mkfifo(&bundle.join("manifest.json"));
    let root = work.path().join("root");
    let out = bounded(
        cmd(&[
            "install",
            "--goal",
            "developer",
            "--dry-run",
            "--os",
            "linux",
            "--cuda",
            "11.4",
            "--gpu-cc",
            "8.6",
            "--driver",
            "470.82.01",
            "--no-cudnn",
            "--bundle",
            bundle.to_str().unwrap(),
            "--root",
            root.to_str().unwrap(),
        ]),
        Duration::from_secs(30),
    );
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("manifest.json") && err.contains("FIFO"),
        "the message names the file and what it is: {err}"
    );
}

/// NVIDIA's md5sum list, kept in the downloads folder between runs, chooses the hash the
/// installer is checked against: one planted there by another account (the folder is
/// world-writable) is not believed when run as root — the list comes from the mirror, and
/// the install goes on with the right hash.
#[test]
fn a_hash_list_planted_in_a_folder_others_can_write_is_not_believed() {
    if !is_root() {
        eprintln!("skipped: needs root (an elevated run)");
        return;
    }
    let server = Server::start();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let downloads = root.join(".cuda-setup/downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    std::fs::write(
        downloads.join("md5sum-cuda-11.4.4.txt"),
        "00000000000000000000000000000000  local_installers/cuda_11.4.4_470.82.01_linux.run\n",
    )
    .unwrap();
    std::fs::set_permissions(&downloads, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = run_install(&linux_install(&server, &root));
    assert_eq!(
        out.status.code(),
        Some(0),
        "the planted hash was used: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(root.join("usr/local/cuda-11.4/bin/nvcc").is_file());
}
