//! Issue #30, class 8: a rebuild of a toolkit we built from wheels (another component
//! set, another release) never deletes what the user put in it. Their files and folders
//! are carried to the new tree (a link as the link itself), cuDNN that `cudnn install`
//! put there is carried with its manifest and still verifies and uninstalls, a place the
//! new toolkit takes stops the rebuild with nothing changed, kill -9 at any point of the
//! swap loses nothing, and `repair` names the user's files. Stand-in wheels served on
//! loopback (`support::wheels`), the real CLI, real links.

#![cfg(all(unix, target_arch = "x86_64"))]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::wheels::{TOOLKIT, files, serve, standin, write_wheel};

fn cli<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &str)]) -> Output {
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

/// A loopback index of stand-in CUDA 13.5 wheels whose runtime is `runtime`, with an
/// `nvtx` component (a header under `include/nvtx3/`) besides nvcc and cudart.
fn index(dir: &Path, runtime: &str) -> support::server::Server {
    standin(dir, runtime, true);
    let tag = "py3-none-manylinux_2_17_x86_64.whl";
    write_wheel(
        &dir.join(format!("cuda_toolkit-{TOOLKIT}-py3-none-any.whl")),
        &format!(
            "Metadata-Version: 2.4\nName: cuda-toolkit\nVersion: {TOOLKIT}\n\
             Provides-Extra: nvcc\nProvides-Extra: cudart\nProvides-Extra: nvtx\n\
             Requires-Dist: nvidia-cuda-nvcc==13.5.*; extra == 'nvcc'\n\
             Requires-Dist: nvidia-cuda-runtime==13.5.*; extra == 'cudart'\n\
             Requires-Dist: nvidia-nvtx==13.5.*; extra == 'nvtx'\n"
        ),
        &[],
    );
    write_wheel(
        &dir.join(format!("nvidia_nvtx-13.5.20-{tag}")),
        "Metadata-Version: 2.4\nName: nvidia-nvtx\nVersion: 13.5.20\n",
        &[(
            "nvidia/cu13/include/nvtx3/nvToolsExt.h",
            b"/* nvtx 13.5.20 */\n",
            false,
        )],
    );
    serve(&files(&[dir]))
}

/// `install --method wheels` of CUDA 13.5 for Linux into `root` with `components`.
fn install(index: &str, root: &Path, components: &str, env: &[(&str, &str)]) -> Output {
    cli(&install_args(index, root, components), env)
}

fn install_args(index: &str, root: &Path, components: &str) -> Vec<String> {
    [
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
        components,
        "--driver",
        "600.00",
        "--gpu-cc",
        "8.6",
        "--os",
        "linux",
        "--root",
        root.to_str().unwrap(),
        "--connections",
        "2",
        "--no-cudnn",
    ]
    .map(String::from)
    .to_vec()
}

fn toolkit(root: &Path) -> PathBuf {
    root.join("usr/local/cuda-13.5")
}

fn built(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", text(out));
}

/// What the user puts in the toolkit folder: a source file in a folder of theirs, a tool
/// in our `bin/`, an empty folder, and a link to a folder outside (which must stay a link
/// and whose target must stay as it is).
fn plant(dir: &Path, outside: &Path) {
    std::fs::create_dir_all(dir.join("samples/mine")).unwrap();
    std::fs::write(
        dir.join("samples/mine/kernel.cu"),
        "__global__ void k() {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("bin/mytool"), "#!/bin/sh\necho mine\n").unwrap();
    std::fs::create_dir_all(dir.join("samples/empty")).unwrap();
    std::fs::create_dir_all(outside).unwrap();
    std::fs::write(outside.join("data.txt"), "outside, not ours").unwrap();
    std::os::unix::fs::symlink(outside, dir.join("samples/outside")).unwrap();
}

/// The planted entries are in `dir`, as planted.
fn planted_intact(dir: &Path, outside: &Path, when: &str) {
    assert_eq!(
        std::fs::read_to_string(dir.join("samples/mine/kernel.cu"))
            .ok()
            .as_deref(),
        Some("__global__ void k() {}\n"),
        "{when}: the user's kernel.cu"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("bin/mytool"))
            .ok()
            .as_deref(),
        Some("#!/bin/sh\necho mine\n"),
        "{when}: the user's bin/mytool"
    );
    assert!(
        dir.join("samples/empty").is_dir(),
        "{when}: the empty folder"
    );
    let link = dir.join("samples/outside");
    assert!(
        std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()),
        "{when}: the user's link is carried as a link"
    );
    assert_eq!(std::fs::read_link(&link).unwrap(), outside, "{when}");
    assert_eq!(
        std::fs::read_to_string(outside.join("data.txt")).unwrap(),
        "outside, not ours",
        "{when}: the link's target is untouched"
    );
    assert_eq!(
        std::fs::read_dir(outside).unwrap().count(),
        1,
        "{when}: nothing was written through the link"
    );
}

#[test]
fn the_users_files_survive_a_rebuild_to_other_components_and_another_release() {
    let tmp = tempfile::tempdir().unwrap();
    let a = index(&tmp.path().join("a"), "13.5.37");
    let root = tmp.path().join("root");
    let dir = toolkit(&root);
    built(&install(&a.url("/simple"), &root, "nvcc,cudart", &[]));
    let outside = tmp.path().join("outside");
    plant(&dir, &outside);

    // Another component set: nvtx added.
    let out = install(&a.url("/simple"), &root, "nvcc,cudart,nvtx", &[]);
    built(&out);
    assert!(
        dir.join("include/nvtx3/nvToolsExt.h").is_file(),
        "rebuilt with nvtx"
    );
    planted_intact(&dir, &outside, "other components");
    assert!(text(&out).contains("Kept what you had"), "{}", text(&out));

    // Another release of the same CUDA (the runtime 13.5.38), back to two components.
    let b = index(&tmp.path().join("b"), "13.5.38");
    built(&install(&b.url("/simple"), &root, "nvcc,cudart", &[]));
    assert_eq!(
        std::fs::read_to_string(dir.join("lib64/libcudart.so.13")).unwrap(),
        "libcudart 13.5.38\n",
        "rebuilt from the other release"
    );
    assert!(
        !dir.join("include/nvtx3").exists(),
        "ours goes with the old tree"
    );
    planted_intact(&dir, &outside, "another release");
    let beside: Vec<String> = std::fs::read_dir(root.join("usr/local"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["cuda-13.5"], "no copy left beside it");
}

#[test]
fn a_user_file_where_the_new_toolkit_has_one_stops_the_rebuild_with_nothing_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let a = index(&tmp.path().join("a"), "13.5.37");
    let root = tmp.path().join("root");
    let dir = toolkit(&root);
    built(&install(&a.url("/simple"), &root, "nvcc,cudart", &[]));
    // The user's own nvToolsExt.h, where the nvtx component puts NVIDIA's.
    std::fs::create_dir_all(dir.join("include/nvtx3")).unwrap();
    std::fs::write(dir.join("include/nvtx3/nvToolsExt.h"), "my own").unwrap();
    let before = snapshot(&dir);
    let mut args = install_args(&a.url("/simple"), &root, "nvcc,cudart,nvtx");
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cli(&args, &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    let report = support::cli::json(&out);
    assert_eq!(report["failure"]["kind"], "user_files", "{t}");
    assert!(
        report["failure"]["params"]["files"]
            .as_str()
            .is_some_and(|f| f.contains("include/nvtx3/nvToolsExt.h")),
        "{t}"
    );
    assert_eq!(snapshot(&dir), before, "nothing changed");

    // In words, with what to do.
    let out = install(&a.url("/simple"), &root, "nvcc,cudart,nvtx", &[]);
    let t = text(&out);
    assert!(
        t.contains("holds files that cuda-setup did not put there")
            && t.contains("include/nvtx3/nvToolsExt.h")
            && t.contains("move or rename those files"),
        "{t}"
    );
    assert_eq!(snapshot(&dir), before, "nothing changed");
}

#[test]
fn cudnn_installed_into_a_wheels_tree_survives_a_rebuild_and_still_verifies_and_uninstalls() {
    use support::cudnn_tar::LinuxSpec;
    let tmp = tempfile::tempdir().unwrap();
    let a = index(&tmp.path().join("a"), "13.5.37");
    let root = tmp.path().join("root");
    let dir = toolkit(&root);
    let d = dir.to_str().unwrap();
    built(&install(&a.url("/simple"), &root, "nvcc,cudart", &[]));
    let spec = LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 13,
        lib_size: 10_000,
    };
    let tarball = tmp.path().join(spec.file_name());
    spec.write(&tarball);
    let out = cli(
        &[
            "cudnn",
            "install",
            "--archive",
            tarball.to_str().unwrap(),
            "--cuda-dir",
            d,
        ],
        &[],
    );
    built(&out);
    let header = std::fs::read(dir.join("include/cudnn_version.h")).unwrap();

    let b = index(&tmp.path().join("b"), "13.5.38");
    let out = install(&b.url("/simple"), &root, "nvcc,cudart,nvtx", &[]);
    built(&out);
    assert_eq!(
        std::fs::read_to_string(dir.join("lib64/libcudart.so.13")).unwrap(),
        "libcudart 13.5.38\n"
    );
    assert_eq!(
        std::fs::read(dir.join("include/cudnn_version.h")).unwrap(),
        header
    );
    assert!(
        std::fs::symlink_metadata(dir.join("lib64/libcudnn.so")).is_ok_and(|m| m.is_symlink()),
        "cuDNN's links stay links"
    );
    let out = cli(&["cudnn", "verify", "--deep", "--cuda-dir", d], &[]);
    assert_eq!(out.status.code(), Some(0), "verify: {}", text(&out));
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join(".cuda-setup/cudnn-manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["toolkit_version"], "13.5.0", "{m}");

    // Its uninstall takes exactly cuDNN out and leaves the new toolkit whole.
    let out = cli(&["cudnn", "uninstall", "--cuda-dir", d], &[]);
    assert_eq!(out.status.code(), Some(0), "uninstall: {}", text(&out));
    assert!(!dir.join("include/cudnn_version.h").exists());
    assert!(std::fs::symlink_metadata(dir.join("lib64/libcudnn.so")).is_err());
    assert!(dir.join("include/nvtx3/nvToolsExt.h").is_file());
    assert!(dir.join("lib64/libcudart.so.13").is_file());
}

#[test]
fn kill_9_at_each_point_of_a_rebuild_with_user_files_loses_none_of_them() {
    let tmp = tempfile::tempdir().unwrap();
    let a = index(&tmp.path().join("a"), "13.5.37");
    let b = index(&tmp.path().join("b"), "13.5.38");
    let template = tmp.path().join("template");
    built(&install(&a.url("/simple"), &template, "nvcc,cudart", &[]));
    let outside = tmp.path().join("outside");
    plant(&toolkit(&template), &outside);
    let index = b.url("/simple");
    std::thread::scope(|s| {
        for point in [
            "wheels_carrying",
            "wheels_staged",
            "wheels_old_out",
            "wheels_new_in",
            "wheels_committed",
        ] {
            let (tmp, template, outside, index) = (tmp.path(), &template, &outside, &index);
            s.spawn(move || kill_at(tmp, template, outside, index, point));
        }
    });
}

fn kill_at(tmp: &Path, template: &Path, outside: &Path, index: &str, point: &str) {
    let root = tmp.join(point);
    let cp = Command::new("cp")
        .arg("-a")
        .arg(template)
        .arg(&root)
        .status()
        .unwrap();
    assert!(cp.success());
    let (local, dir) = (root.join("usr/local"), toolkit(&root));
    let flag = tmp.join(format!("{point}.paused"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(install_args(index, &root, "nvcc,cudart"))
        .env("LANG", "C")
        .env("CUDA_SETUP_TEST_PAUSE_AT", point)
        .env("CUDA_SETUP_TEST_PAUSE_DIR", tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !flag.exists() {
        if start.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("never reached {point}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // The tree in place, or the old one aside that the next run puts back: either holds
    // every file of the user's.
    let old: Vec<PathBuf> = std::fs::read_dir(&local)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".old-"))
        .map(|e| e.path())
        .collect();
    let holder = if dir.exists() {
        dir.clone()
    } else {
        old[0].clone()
    };
    planted_intact(&holder, outside, point);

    // The next run restores or cleans, then rebuilds: the user's files are in the tree.
    built(&install(index, &root, "nvcc,cudart", &[]));
    planted_intact(&dir, outside, &format!("{point}, then a rerun"));
    assert_eq!(
        std::fs::read_to_string(dir.join("lib64/libcudart.so.13")).unwrap(),
        "libcudart 13.5.38\n",
        "{point}"
    );
    let beside: Vec<String> = std::fs::read_dir(&local)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["cuda-13.5"], "{point}");
}

#[test]
fn repair_names_the_users_files_in_a_wheels_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let a = index(&tmp.path().join("a"), "13.5.37");
    let root = tmp.path().join("root");
    built(&install(&a.url("/simple"), &root, "nvcc,cudart", &[]));
    let r = root.to_str().unwrap();
    // The stand-in nvcc's note of its arguments (the build check ran it) is no user's.
    let _ = std::fs::remove_file(toolkit(&root).join("bin/last-args"));
    let rep = cli(&["repair", "--root", r, "--os", "linux", "--json"], &[]);
    assert!(
        !text(&rep).contains("repair_wheels_foreign"),
        "a tree with nothing of the user's: {}",
        text(&rep)
    );
    plant(&toolkit(&root), &tmp.path().join("outside"));
    let rep = cli(&["repair", "--root", r, "--os", "linux", "--json"], &[]);
    let report = support::cli::json(&rep);
    let found = report["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["id"] == "repair_wheels_foreign"))
        .unwrap_or_else(|| panic!("no finding: {}", text(&rep)))
        .clone();
    assert_eq!(found["severity"], "info", "{found}");
    let files = found["message"]["params"]["files"]
        .as_str()
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(files, "bin/mytool, samples", "{found}");
    // In words too.
    let rep = cli(&["repair", "--root", r, "--os", "linux"], &[]);
    assert!(
        text(&rep).contains("holds files cuda-setup did not put there: bin/mytool, samples"),
        "{}",
        text(&rep)
    );
}

#[test]
fn a_tree_whose_record_lists_no_files_is_kept_whole_inside_the_rebuilt_one() {
    let tmp = tempfile::tempdir().unwrap();
    let a = index(&tmp.path().join("a"), "13.5.37");
    let root = tmp.path().join("root");
    let dir = toolkit(&root);
    built(&install(&a.url("/simple"), &root, "nvcc,cudart", &[]));
    // As an older cuda-setup wrote it: no list of the tree's files.
    let rec = dir.join(".cuda-setup/toolkit-wheels.json");
    let mut r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rec).unwrap()).unwrap();
    r.as_object_mut().unwrap().remove("paths");
    std::fs::write(&rec, serde_json::to_vec(&r).unwrap()).unwrap();
    std::fs::create_dir_all(dir.join("samples/mine")).unwrap();
    std::fs::write(dir.join("samples/mine/kernel.cu"), "mine").unwrap();
    let b = index(&tmp.path().join("b"), "13.5.38");
    let out = install(&b.url("/simple"), &root, "nvcc,cudart", &[]);
    built(&out);
    let previous = dir.join("previous-toolkit");
    assert_eq!(
        std::fs::read_to_string(previous.join("samples/mine/kernel.cu")).unwrap(),
        "mine"
    );
    assert!(
        text(&out).contains("cuda-13.5/previous-toolkit"),
        "{}",
        text(&out)
    );
    let beside: Vec<String> = std::fs::read_dir(root.join("usr/local"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["cuda-13.5"], "nothing beside the toolkit folder");
    assert_eq!(
        std::fs::read_to_string(dir.join("lib64/libcudart.so.13")).unwrap(),
        "libcudart 13.5.38\n"
    );
}

/// Every entry under `dir` with its bytes (links as `-> target`), but the stand-in nvcc's
/// note of its last arguments.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if rel == "bin/last-args" {
                continue;
            }
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", to.display()).into_bytes());
            } else if t.is_dir() {
                out.insert(rel.clone(), b"/".to_vec());
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}
