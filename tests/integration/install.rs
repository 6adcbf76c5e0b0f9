//! `install` end to end in a temp root: a loopback server serves a stand-in NVIDIA
//! installer (a real program with its real hash, honouring `-s` and the sub-package
//! names, laying out a realistic CUDA tree), NVIDIA's md5sum.txt, and a real-layout
//! cuDNN zip is given; then the tree, the environment record, the report and the exit
//! codes are checked; a second run changes nothing; a killed run completes when rerun.

#![cfg(unix)]

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;
use support::cudnn_tar::LinuxSpec;
use support::cudnn_zip::Spec;
use support::server::{Body, Server};
use support::standin::{linux_runfile, md5_of, serve_installer, sha256_of, windows_installer};

struct Machine {
    server: Server,
    work: tempfile::TempDir,
}

impl Machine {
    fn new(installer: Vec<u8>) -> Machine {
        let server = Server::start();
        serve_installer(
            &server,
            "11.8.0",
            "cuda_11.8.0_522.06_windows.exe",
            installer,
        );
        serve_installer(
            &server,
            "11.4.4",
            "cuda_11.4.4_470.82.01_linux.run",
            linux_runfile(),
        );
        Machine {
            server,
            work: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> PathBuf {
        self.work.path().join("root")
    }

    /// `install` of CUDA 11.4 for Linux (Ampere, driver 470.82.01) from the mirror into
    /// the root, unattended, with the JSON report.
    fn linux_args(&self) -> Vec<String> {
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
            "--mirror",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            format!("http://{}", self.server.addr),
            "--root".into(),
            self.root().display().to_string(),
        ])
        .collect()
    }

    fn cudnn_zip(&self) -> PathBuf {
        let z = self
            .work
            .path()
            .join("cudnn-windows-x86_64-9.10.2.21_cuda11-archive.zip");
        if !z.exists() {
            Spec {
                version: "9.10.2.21",
                cuda_major: 11,
                dll_size: 100_000,
            }
            .write(&z);
        }
        z
    }

    fn windows_args(&self) -> Vec<String> {
        let mut a: Vec<String> = [
            "install",
            "--goal",
            "developer",
            "--unattended",
            "--json",
            "--os",
            "windows",
            "--cuda",
            "11.8",
            "--gpu-cc",
            "8.6",
            "--driver",
            "522.06",
            "--mirror",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.push(format!("http://{}", self.server.addr));
        a.extend([
            "--root".into(),
            self.root().display().to_string(),
            "--cudnn-archive".into(),
            self.cudnn_zip().display().to_string(),
        ]);
        a.extend([
            "--report".into(),
            self.root().join("report.json").display().to_string(),
        ]);
        a
    }

    fn toolkit(&self) -> PathBuf {
        self.root()
            .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8")
    }
}

fn cli(args: &[String], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args).env("LANG", "C");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn statuses(r: &Value) -> Vec<(String, String, bool)> {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["status"].as_str().unwrap().into(),
                s["changed"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn windows_install_in_a_root_then_again_changes_nothing() {
    let m = Machine::new(windows_installer(0, 0));
    let out = cli(&m.windows_args(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    assert_eq!(r["changed"], true);
    let names: Vec<String> = statuses(&r).into_iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        [
            "preflight",
            "download_toolkit",
            "install_toolkit",
            "install_cudnn",
            "configure_env",
            "verify"
        ]
    );
    assert!(statuses(&r).iter().all(|s| s.1 == "done"), "{r}");
    // The report file says the same.
    let file: Value =
        serde_json::from_slice(&std::fs::read(m.root().join("report.json")).unwrap()).unwrap();
    assert_eq!(file["changed"], true);

    // The tree: the installer's parts and cuDNN beside the runtime DLLs.
    let tk = m.toolkit();
    for f in [
        "bin/nvcc.exe",
        "bin/cudart64_110.dll",
        "include/cuda_runtime.h",
        "bin/cudnn64_9.dll",
        "include/cudnn_version.h",
        "lib/x64/cudnn.lib",
    ] {
        assert!(tk.join(f).is_file(), "{f}");
    }
    // The installer was silent and got the developer's sub-packages, without VS integration or the driver.
    let args = std::fs::read_to_string(m.root().join("installer-args.log")).unwrap();
    assert!(args.starts_with("-s nvcc_11.8 cudart_11.8"), "{args}");
    assert!(
        args.contains("cublas_dev_11.8")
            && !args.contains("visual_studio_integration")
            && !args.contains("Display.Driver"),
        "{args}"
    );
    // The environment (a Windows-style record in the root): machine level, PATH with bin and libnvvp.
    let env: Value = serde_json::from_slice(
        &std::fs::read(m.root().join(".cuda-setup/windows-env.json")).unwrap(),
    )
    .unwrap();
    let dir = tk.display().to_string();
    assert_eq!(env["machine"]["CUDA_PATH"], dir.as_str());
    assert_eq!(env["machine"]["CUDA_PATH_V11_8"], dir.as_str());
    let path = env["machine"]["Path"].as_str().unwrap();
    assert!(
        path.starts_with(&format!("{}", tk.join("bin").display())) && path.contains("libnvvp"),
        "{path}"
    );

    // Again: nothing downloaded, nothing changed.
    let requests = m.server.requests();
    let before = std::fs::read(m.root().join(".cuda-setup/windows-env.json")).unwrap();
    let out = cli(&m.windows_args(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    assert_eq!(r["changed"], false, "{r}");
    assert_eq!(
        m.server.requests(),
        requests,
        "the second run downloaded something"
    );
    assert_eq!(
        std::fs::read(m.root().join(".cuda-setup/windows-env.json")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_to_string(m.root().join("installer-args.log"))
            .unwrap()
            .lines()
            .count(),
        1,
        "the installer ran twice"
    );
}

#[test]
fn a_killed_install_completes_when_run_again() {
    let m = Machine::new(windows_installer(0, 0));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(m.windows_args())
        .env("STANDIN_SLEEP", "2")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it while the installer runs.
    let log = m.root().join("installer-args.log");
    let t0 = std::time::Instant::now();
    while !log.exists() && t0.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(log.exists(), "the installer never started");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        m.root().join(".cuda-setup/install-journal.json").exists(),
        "no journal after the kill"
    );

    let out = cli(&m.windows_args(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    let st = statuses(&r);
    assert_eq!(
        st[1].1, "done_before",
        "the download is not repeated: {st:?}"
    );
    assert!(st[2..].iter().all(|s| s.1 == "done"), "{st:?}");
    assert!(m.toolkit().join("bin/cudnn64_9.dll").is_file());
    assert!(!m.root().join(".cuda-setup/install-journal.json").exists());
}

#[test]
fn a_failing_installer_exits_1603_and_names_what_is_missing() {
    let m = Machine::new(windows_installer(1, 0));
    let out = cli(&m.windows_args(), &[]);
    assert_eq!(
        out.status.code(),
        Some(1603 % 256),
        "1603, as a Unix shell sees it"
    );
    let r = report(&out);
    assert_eq!(r["failure"]["step"], "install_toolkit");
    assert_eq!(r["failure"]["kind"], "installer_failed");
    let e = r["failure"]["error"].as_str().unwrap();
    assert!(
        e.contains("nvcc.exe") && e.contains("cudart64_110.dll") && e.contains("code 1"),
        "{e}"
    );
    assert!(
        r["log_file"]
            .as_str()
            .is_some_and(|l| Path::new(l).is_file())
    );
}

/// A bug of ours inside a step (a panic, injected by the debug-only hook) is a failed
/// step of kind `internal` with its message: exit 1603, the JSON report, the log file
/// names where it happened, and no backtrace reaches the user. Rerun without the hook,
/// the install completes from there.
#[test]
fn a_panic_in_a_step_is_an_internal_failure_then_a_rerun_completes() {
    let m = Machine::new(windows_installer(0, 0));
    let mut args = m.linux_args();
    args.push("--no-cudnn".into());
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(&args)
        .env("LANG", "C")
        .env_remove("RUST_BACKTRACE")
        .env("CUDA_SETUP_TEST_PANIC_IN", "download_toolkit")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1603 % 256), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("internal error: test panic in download_toolkit"),
        "{err}"
    );
    let r = report(&out);
    assert_eq!(r["failure"]["step"], "download_toolkit");
    assert_eq!(r["failure"]["kind"], "internal");
    assert!(
        r["failure"]["hint"]
            .as_str()
            .unwrap()
            .contains("please report it"),
        "{r}"
    );
    let st = statuses(&r);
    assert_eq!((st[0].0.as_str(), st[0].1.as_str()), ("preflight", "done"));
    assert_eq!(st[1].1, "failed");
    let log = std::fs::read_to_string(r["log_file"].as_str().unwrap()).unwrap();
    assert!(
        log.contains("download_toolkit: panicked at crates/"),
        "{log}"
    );
    // The machine is as a failed download leaves it: a plain rerun completes.
    let again = cli(&args, &[]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn linux_runfile_and_profile_script() {
    let m = Machine::new(windows_installer(0, 0));
    let root = m.root();
    let mut args = m.linux_args();
    args.push("--no-cudnn".into());
    let out = cli(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tk = root.join("usr/local/cuda-11.4");
    assert!(tk.join("bin/nvcc").is_file() && tk.join("lib64/libcudart.so.11.0").is_file());
    let profile = std::fs::read_to_string(root.join("etc/profile.d/cuda-setup.sh")).unwrap();
    assert!(
        profile.contains(&format!("export CUDA_HOME=\"{}\"", tk.display())),
        "{profile}"
    );
    // The script works in a real shell.
    let sh = Command::new("sh")
        .arg("-c")
        .arg(format!(
            ". '{}' && echo $PATH && echo $LD_LIBRARY_PATH",
            root.join("etc/profile.d/cuda-setup.sh").display()
        ))
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&sh.stdout);
    assert!(
        text.starts_with(&format!("{}/bin:/usr/bin", tk.display()))
            && text.contains(&format!("{}/lib64", tk.display())),
        "{text}"
    );
}

/// The Linux developer plan downloads NVIDIA's cuDNN tarball from the mirror, checks it
/// against the hash in NVIDIA's redist manifest, and installs it into the toolkit with
/// its links; a second run fetches nothing and changes nothing.
#[test]
fn linux_developer_install_brings_the_cudnn_tarball() {
    let m = Machine::new(windows_installer(0, 0));
    // What the tables recommend for CUDA 11.4 on Linux: cuDNN 9.1.0.70's cuda11 archive.
    let spec = LinuxSpec {
        version: "9.1.0.70",
        cuda_major: 11,
        lib_size: 40_000,
    };
    let tarball = m.work.path().join(spec.file_name());
    spec.write(&tarball);
    let bytes = std::fs::read(&tarball).unwrap();
    let manifest = format!(
        r#"{{"release_label":"9.1.0","cudnn":{{"name":"NVIDIA CUDA Deep Neural Network library","version":"9.1.0.70",
          "linux-x86_64":{{"cuda11":{{"relative_path":"cudnn/linux-x86_64/{file}","sha256":"{sha}","md5":"{md5}","size":"{size}"}}}}}}}}"#,
        file = spec.file_name(),
        sha = sha256_of(&bytes),
        md5 = md5_of(&bytes),
        size = bytes.len()
    );
    m.server.add(
        &format!(
            "/compute/cudnn/redist/cudnn/linux-x86_64/{}",
            spec.file_name()
        ),
        Body::Bytes(Arc::new(bytes)),
    );
    m.server.add(
        "/compute/cudnn/redist/redistrib_9.1.0.json",
        Body::Bytes(Arc::new(manifest.into_bytes())),
    );
    let root = m.root();
    let args = m.linux_args();
    let out = cli(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    let names: Vec<String> = statuses(&r).into_iter().map(|s| s.0).collect();
    assert!(
        names.contains(&"download_cudnn".to_string())
            && names.contains(&"install_cudnn".to_string()),
        "{names:?}"
    );
    assert!(statuses(&r).iter().all(|s| s.1 == "done"), "{r}");
    let tk = root.join("usr/local/cuda-11.4");
    assert!(tk.join("include/cudnn_version.h").is_file());
    assert!(tk.join("lib64/libcudnn.so.9.1.0").is_file());
    assert_eq!(
        std::fs::read_link(tk.join("lib64/libcudnn.so")).unwrap(),
        Path::new("libcudnn.so.9")
    );
    assert_eq!(
        std::fs::read_link(tk.join("lib64/libcudnn_ops.so.9")).unwrap(),
        Path::new("libcudnn_ops.so.9.1.0")
    );
    assert!(tk.join("lib64/libcudart.so.11.0").is_file());

    // Again: nothing downloaded, nothing changed.
    let requests = m.server.requests();
    let out = cli(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report(&out)["changed"], false);
    assert_eq!(m.server.requests(), requests, "the second run downloaded");
}

#[test]
fn dry_run_prints_a_plan_that_runs_later() {
    let m = Machine::new(windows_installer(0, 0));
    let mut args = m.windows_args();
    args.push("--dry-run".into());
    let out = cli(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["toolkit"], "11.8.0");
    assert_eq!(plan["steps"][1]["step"], "download");
    // The tables give no size: the server told it, so the disk check needs 2.5 × that,
    // not a 3.5 GB guess (which would fail on a nearly full test machine).
    let pre = &plan["steps"][0];
    assert_eq!(pre["step"], "preflight", "{pre}");
    let size = windows_installer(0, 0).len() as f64;
    assert_eq!(pre["needed_bytes"], (size * 2.5) as u64, "{pre}");
    assert_eq!(pre["needed_is_estimate"], false, "{pre}");
    assert!(!m.toolkit().exists(), "a dry run changed the machine");
    let out = cli(&run_saved_plan(&m, &out.stdout, &[]), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(m.toolkit().join("bin/nvcc.exe").is_file());
}

/// `install --unattended --plan FILE` into `m`'s root, `plan` saved as FILE, and `extra`.
fn run_saved_plan(m: &Machine, plan: &[u8], extra: &[&str]) -> Vec<String> {
    let file = m.work.path().join("plan.json");
    std::fs::write(&file, plan).unwrap();
    let mut args: Vec<String> = ["install", "--unattended", "--plan"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(file.display().to_string());
    args.extend(["--root".into(), m.root().display().to_string()]);
    args.extend(
        ["--os", "windows"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string()),
    );
    args
}

/// A saved plan with a what-if flag that makes no sense (`--driver 12.4` is a CUDA
/// version): refused before anything runs, not after the install (which lost its report).
#[test]
fn a_saved_plan_with_a_bad_what_if_flag_is_refused_before_it_runs() {
    let m = Machine::new(windows_installer(0, 0));
    let mut args = m.windows_args();
    args.push("--dry-run".into());
    let out = cli(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::support::cli::text(&out)
    );
    let out = cli(&run_saved_plan(&m, &out.stdout, &["--driver", "12.4"]), &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        crate::support::cli::text(&out)
    );
    assert!(
        !m.toolkit().exists(),
        "the plan ran before the flag was refused"
    );
}

#[test]
fn pytorch_goal_runs_pip_in_the_chosen_python() {
    let m = Machine::new(windows_installer(0, 0));
    let py = m.work.path().join("python3");
    let log = m.work.path().join("pip-args.log");
    std::fs::write(
        &py,
        format!(
            // pip's arguments only (the doctor runs this Python after the install too).
            "#!/bin/sh\ncase \"$1 $2\" in \"-m pip\") echo \"$@\" > '{}' ;; esac\necho Successfully installed torch\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args: Vec<String> = [
        "install",
        "--goal",
        "pytorch",
        "--unattended",
        "--os",
        "windows",
        "--gpu-cc",
        "8.6",
        "--driver",
        "551.78",
        "--python-exe",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        py.display().to_string(),
        "--root".into(),
        m.root().display().to_string(),
    ])
    .collect();
    let out = cli(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pip = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        pip.trim(),
        format!(
            "-m pip install torch=={}+cu126 torchvision --index-url https://download.pytorch.org/whl/cu126",
            support::newest_torch()
        )
    );
}

/// The stand-in Python 3.11 without torch (its `pip debug` lists manylinux tags), whose
/// `pip install` logs its arguments: the interpreter and that log.
fn python_with_tags(dir: &Path) -> (PathBuf, PathBuf) {
    let py = support::python::interpreter(dir, None);
    (py, support::python::pip_install_log(dir))
}

/// The stand-in's CPython tag (`cp311`).
fn cpython_tag() -> String {
    support::python::CPYTHON_TAG.to_string()
}

/// PyTorch's index layout on loopback: `/whl/cu126/torch/` lists the newest torch for several
/// Pythons and platforms (each file distinct), with `#sha256=` fragments; `lie` lists a
/// wrong hash for this machine's wheel.
fn torch_index(server: &Server, lie: bool) -> (String, Vec<u8>) {
    let here = cpython_tag();
    let torch = support::newest_torch();
    let mut links = String::new();
    let mut mine = (String::new(), Vec::new());
    let mut pythons: Vec<String> = ["cp310", "cp311", "cp312", "cp313", "cp314"]
        .map(String::from)
        .to_vec();
    if !pythons.contains(&here) {
        pythons.push(here.clone());
    }
    for py in &pythons {
        let py = py.as_str();
        for plat in ["win_amd64", "manylinux_2_28_x86_64"] {
            let name = format!("torch-{torch}+cu126-{py}-{py}-{plat}.whl");
            let bytes: Vec<u8> = (0..3_000_000u32)
                .map(|i| {
                    (i.wrapping_mul(2_654_435_761) >> 24) as u8
                        ^ name.len() as u8
                        ^ py.as_bytes()[3]
                })
                .collect();
            let mut sha = sha256_of(&bytes);
            if py == here && plat.starts_with("manylinux") {
                if lie {
                    sha = "0".repeat(64);
                }
                mine = (name.clone(), bytes.clone());
            }
            links += &format!("<a href=\"/whl/cu126/{name}#sha256={sha}\">{name}</a><br>\n");
            server.add(&format!("/whl/cu126/{name}"), Body::Bytes(Arc::new(bytes)));
        }
    }
    server.add(
        "/whl/cu126/torch/",
        Body::Bytes(Arc::new(
            format!("<!DOCTYPE html><html><body>\n{links}</body></html>\n").into_bytes(),
        )),
    );
    assert!(!mine.0.is_empty(), "no wheel for {here}");
    mine
}

fn pytorch_args(m: &Machine, py: &Path) -> Vec<String> {
    [
        "install",
        "--goal",
        "pytorch",
        "--unattended",
        "--os",
        "linux",
        "--gpu-cc",
        "8.6",
        "--driver",
        "551.78",
        "--json",
        "--torch-index",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        m.server.url("/whl"),
        "--python-exe".into(),
        py.display().to_string(),
        "--root".into(),
        m.root().display().to_string(),
    ])
    .collect()
}

#[test]
fn the_torch_wheel_comes_through_the_engine_verified_then_pip_installs_the_file() {
    let m = Machine::new(windows_installer(0, 0));
    let (name, bytes) = torch_index(&m.server, false);
    let (py, log) = python_with_tags(m.work.path());
    let out = cli(&pytorch_args(&m, &py), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The wheel this machine's pip accepts, byte for byte, where downloads go.
    let file = m.root().join(".cuda-setup/downloads").join(&name);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // pip got the file in place of `torch==<newest>`; the rest still comes from the index.
    let pip = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        pip.trim(),
        format!(
            "-m pip install {} torchvision --index-url {}/cu126",
            file.display(),
            m.server.url("/whl")
        )
    );
    let r = report(&out);
    assert_eq!(
        r["plan"]["torch_command"],
        format!(
            "pip install torch=={}+cu126 torchvision --index-url {}/cu126",
            support::newest_torch(),
            m.server.url("/whl")
        )
    );
}

#[test]
fn a_torch_wheel_with_the_wrong_hash_is_deleted_and_pip_never_runs() {
    let m = Machine::new(windows_installer(0, 0));
    let (name, _) = torch_index(&m.server, true);
    let (py, log) = python_with_tags(m.work.path());
    let out = cli(&pytorch_args(&m, &py), &[]);
    assert_eq!(out.status.code(), Some(1603 % 256));
    let r = report(&out);
    assert_eq!(r["failure"]["step"], "install_torch", "{r}");
    assert_eq!(r["failure"]["kind"], "download_corrupt", "{r}");
    assert!(!log.exists(), "pip ran with a wheel that failed its hash");
    let dl = m.root().join(".cuda-setup/downloads");
    assert!(!dl.join(&name).exists() && !dl.join(format!("{name}.part")).exists());
}

#[test]
fn a_torch_wheel_name_that_climbs_out_of_downloads_is_refused_and_pip_never_runs() {
    let m = Machine::new(windows_installer(0, 0));
    let py_tag = cpython_tag();
    // From <root>/.cuda-setup/downloads/<first part>, four `..` reach the folder above the
    // root: the file would land beside it.
    let landing = "evil.manylinux_2_28_x86_64.whl";
    let torch = support::newest_torch();
    let name = format!("torch-{torch}+cu126-{py_tag}-{py_tag}-x/../../../../{landing}");
    let bytes = b"a file that must not be written".to_vec();
    let sha = sha256_of(&bytes);
    m.server
        .add("/whl/cu126/evil.whl", Body::Bytes(Arc::new(bytes)));
    m.server.add(
        "/whl/cu126/torch/",
        Body::Bytes(Arc::new(
            format!(
                "<!DOCTYPE html><html><body>\n<a href=\"/whl/cu126/evil.whl#sha256={sha}\">{name}</a><br>\n</body></html>\n"
            )
            .into_bytes(),
        )),
    );
    let (py, log) = python_with_tags(m.work.path());
    let out = cli(&pytorch_args(&m, &py), &[]);
    assert!(
        !m.work.path().join(landing).exists(),
        "a file was written outside --root"
    );
    assert_eq!(out.status.code(), Some(1603 % 256));
    let r = report(&out);
    assert_eq!(r["failure"]["step"], "install_torch", "{r}");
    assert_eq!(r["failure"]["kind"], "wheels", "{r}");
    assert!(
        r["failure"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("names a file that cannot be used")),
        "{r}"
    );
    assert!(!log.exists(), "pip ran with an index that lists a path");
}

/// The verify step of the developer goal, by its report entry.
fn verify_step(r: &Value) -> &Value {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "verify")
        .unwrap_or_else(|| panic!("no verify step: {r}"))
}

/// NVIDIA's installer lays down the import libraries a developer links (`cudart_11.8`:
/// cudart.lib, cuda.lib; `cublas_dev_11.8`: cublas.lib, cublasLt.lib): the install's
/// verify step finds them all, and with no Visual C++ here it passes saying the build
/// check was skipped and why. An installer that left `cublas_dev` out fails the step,
/// naming the missing file and the sub-package.
#[test]
fn windows_install_verifies_the_link_names_and_names_a_missing_sub_package() {
    let m = Machine::new(windows_installer(0, 0));
    let out = cli(&m.windows_args(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    let v = verify_step(&r);
    assert_eq!(v["status"], "done", "{v}");
    assert_eq!(
        v["message"]["key"], "step_verified_build_skipped_windows",
        "{v}"
    );
    let detail = v["detail"].as_str().unwrap();
    assert!(
        detail.contains("build check was skipped") && detail.contains("Visual Studio Build Tools"),
        "{detail}"
    );
    for f in [
        "cudart.lib",
        "cuda.lib",
        "cublas.lib",
        "cublasLt.lib",
        "cudnn.lib",
    ] {
        assert!(m.toolkit().join("lib/x64").join(f).is_file(), "{f}");
    }
    // The plan says the verify step builds.
    let step = r["plan"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "verify")
        .unwrap();
    assert_eq!(step["build"], true, "{step}");

    // Without cublas_dev: the step fails, naming the file and its sub-package.
    let m = Machine::new(windows_installer(0, 0));
    let out = cli(&m.windows_args(), &[("STANDIN_OMIT", "cublas_dev_11.8")]);
    assert_ne!(out.status.code(), Some(0));
    let r = report(&out);
    assert_eq!(r["failure"]["step"], "verify", "{r}");
    assert_eq!(r["failure"]["kind"], "build");
    // What to act on, for scripts and for the plain-words sentence (either language).
    assert_eq!(
        r["failure"]["params"]["problem"], "lib/x64/cublas.lib, lib/x64/cublasLt.lib",
        "{r}"
    );
    let e = r["failure"]["error"].as_str().unwrap();
    assert!(
        e.contains("lib/x64/cublas.lib (cublas_dev_11.8)")
            && e.contains("lib/x64/cublasLt.lib")
            && e.contains("sub-packages cublas_dev_11.8")
            && !e.contains("cudart.lib"),
        "{e}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cublas_dev_11.8"), "{err}");
    // A Chinese user reads the sentence in Chinese, the files named in it.
    let mut zh = m.windows_args();
    zh.extend(["--lang".into(), "zh".into()]);
    let out = cli(&zh, &[("STANDIN_OMIT", "cublas_dev_11.8")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("用刚安装的工具包无法编译程序：lib/x64/cublas.lib"),
        "{err}"
    );
}

/// A folder with only the programs the runfile stand-in needs: no g++.
fn bin_without_a_compiler(dir: &Path) -> PathBuf {
    let bin = dir.join("bin-no-gxx");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["mkdir", "cat", "chmod", "ln", "sh", "rm", "mv", "cp"] {
        let real = ["/bin", "/usr/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no {tool}"));
        std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
    }
    bin
}

/// The Linux runfile lays down libcudart.so, libcublas.so, libcublasLt.so and
/// stubs/libcuda.so: with a host compiler the verify step builds and links a program
/// against the toolkit (a stand-in g++; the runfile's stand-in nvcc links like a real
/// one); with none it passes saying so; without cuBLAS's link names it fails naming them.
#[test]
fn linux_install_builds_and_links_in_its_verify_step() {
    let m = Machine::new(windows_installer(0, 0));
    let gxx = m.work.path().join("gcc-bin");
    std::fs::create_dir_all(&gxx).unwrap();
    std::fs::write(gxx.join("g++"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(gxx.join("g++"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", gxx.display());
    let mut args = m.linux_args();
    args.push("--no-cudnn".into());
    let out = cli(&args, &[("PATH", &path)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    let v = verify_step(&r);
    assert_eq!(v["message"]["key"], "step_verified_build", "{v}");
    let tk = m.root().join("usr/local/cuda-11.4");
    let nvcc_args = std::fs::read_to_string(tk.join("bin/last-args")).unwrap();
    assert!(
        nvcc_args
            .contains("-cudart shared -DCUDA_SETUP_CUBLAS -lcudart -lcublas -lcublasLt -lcuda"),
        "{nvcc_args}"
    );

    // No host compiler: done, and the step says the build check was skipped and why.
    let m = Machine::new(windows_installer(0, 0));
    let bin = bin_without_a_compiler(m.work.path());
    let mut args = m.linux_args();
    args.push("--no-cudnn".into());
    let out = cli(&args, &[("PATH", &bin.display().to_string())]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = verify_step(&report(&out)).clone();
    assert_eq!(
        v["message"]["key"], "step_verified_build_skipped_linux",
        "{v}"
    );
    assert!(v["detail"].as_str().unwrap().contains("g++"), "{v}");

    // The runfile left cuBLAS's link names out: the step fails naming them.
    let m = Machine::new(windows_installer(0, 0));
    let mut args = m.linux_args();
    args.push("--no-cudnn".into());
    let out = cli(&args, &[("PATH", &path), ("STANDIN_OMIT", "cublas")]);
    assert_ne!(out.status.code(), Some(0));
    let r = report(&out);
    assert_eq!(r["failure"]["step"], "verify", "{r}");
    let e = r["failure"]["error"].as_str().unwrap();
    assert!(
        e.contains("lib64/libcublas.so, lib64/libcublasLt.so") && !e.contains("libcudart.so"),
        "{e}"
    );
}

/// A stand-in Python in a folder whose name has a space (as `C:\Program Files\Python312`).
fn python_in_a_spaced_folder(m: &Machine) -> PathBuf {
    let dir = m.work.path().join("my python");
    std::fs::create_dir_all(&dir).unwrap();
    let py = dir.join("python3");
    std::fs::write(&py, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    py
}

/// One default goal (#31): `install` with no `--goal` plans what `recommend` recommends
/// and the wizard starts on — PyTorch.
#[test]
fn install_with_no_goal_plans_the_pytorch_goal_as_recommend_and_the_wizard_do() {
    let m = Machine::new(windows_installer(0, 0));
    let root = m.root().display().to_string();
    let py = python_in_a_spaced_folder(&m).display().to_string();
    let common = |cmd: &str| -> Vec<String> {
        [
            cmd, "--json", "--os", "windows", "--gpu-cc", "8.6", "--driver", "522.06", "--root",
            &root,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut install = common("install");
    install.extend(["--dry-run".into(), "--python-exe".into(), py]);
    let plan = report(&cli(&install, &[]));
    let rec = report(&cli(&common("recommend"), &[]));
    let tables = cuda_setup_core::compat::Tables::embedded().unwrap();
    let o =
        cuda_setup::ui::Options::sandbox(tables, cuda_setup_core::compat::Os::Windows, &m.root());
    let wizard = serde_json::to_value(cuda_setup::ui::App::new(o).session.goal).unwrap();
    assert_eq!(rec["goal"], "pytorch", "{rec}");
    assert_eq!(plan["goal"], rec["goal"], "{plan}");
    assert_eq!(wizard, rec["goal"]);
    assert!(
        plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["step"] == "install_torch"),
        "{plan}"
    );
}

/// pip's arguments are a list from the recommendation to pip, never a command line cut
/// at spaces again: an index address with a space and a Python in a folder with one
/// stay one argument each.
#[test]
fn pip_arguments_keep_a_space_in_the_index_and_the_python() {
    let m = Machine::new(windows_installer(0, 0));
    let py = python_in_a_spaced_folder(&m);
    let index = "http://127.0.0.1:9/torch whl";
    let args: Vec<String> = [
        "install",
        "--dry-run",
        "--json",
        "--goal",
        "pytorch",
        "--os",
        "windows",
        "--gpu-cc",
        "8.6",
        "--driver",
        "522.06",
        "--torch-index",
        index,
        "--root",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        m.root().display().to_string(),
        "--python-exe".into(),
        py.display().to_string(),
    ])
    .collect();
    let plan = report(&cli(&args, &[]));
    let step = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "install_torch")
        .unwrap_or_else(|| panic!("no pip step: {plan}"));
    assert_eq!(step["python"], py.display().to_string());
    let pip: Vec<&str> = step["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = pip
        .iter()
        .position(|a| *a == "--index-url")
        .expect("--index-url");
    assert!(pip[at + 1].starts_with(&format!("{index}/cu")), "{pip:?}");
    assert_eq!(pip.len(), at + 2, "{pip:?}");
}

/// `--proxy` (#34) carries the PyTorch step's requests: the index page and the wheel come
/// through it (the index's host is reachable only through the loopback proxy), and pip is
/// given the same proxy.
#[test]
fn the_proxy_carries_the_torch_index_the_wheel_and_pip() {
    let m = Machine::new(windows_installer(0, 0));
    let (name, bytes) = torch_index(&m.server, false);
    let (py, log) = python_with_tags(m.work.path());
    let proxy = support::proxy::Proxy::start(m.server.addr);
    let index = "http://torch.proxy.test/whl".to_string();
    let mut args: Vec<String> = pytorch_args(&m, &py)
        .into_iter()
        .map(|a| {
            if a == m.server.url("/whl") {
                index.clone()
            } else {
                a
            }
        })
        .collect();
    args.extend(["--proxy".to_string(), proxy.url()]);
    let out = cli(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The page and the wheel's ranges: all through the proxy.
    assert!(proxy.requests() >= 2, "{}", proxy.requests());
    let file = m.root().join(".cuda-setup/downloads").join(&name);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let pip = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        pip.trim(),
        format!(
            "-m pip install --proxy {} {} torchvision --index-url {index}/cu126",
            proxy.url(),
            file.display(),
        )
    );
}
