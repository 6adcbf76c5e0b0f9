//! Guard the verified PyTorch (#33): `cuda-setup guard status|on|off|restore` on a
//! stand-in interpreter (tests/support/python.rs answers the guard's probe and plays pip),
//! the pip step lifting and moving the pin, the doctor's and repair's word on a swap; and,
//! ignored (`scripts/real-artifacts.sh`), pip's real resolver refusing a second torch in a
//! real venv.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_setup_core::compat::Os;
use cuda_setup_core::guard::{self, EnvKind, Record, VerifiedBy, Wheel};
use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::target::Target;

use crate::support::python::{self as standin, Torch};

/// A venv-like stand-in under `d/venv` (the interpreter at `d/venv/bin/python3`, its
/// prefix `d/venv`) with torch `version`.
fn venv(d: &Path, version: &str, kind: &str) -> (PathBuf, PathBuf) {
    let prefix = d.join("venv");
    let bin = prefix.join("bin");
    let py = standin::interpreter(&bin, Some(&Torch::new(version, Some("11.8"), "sm_86")));
    standin::set_env(&bin, &prefix, kind);
    (py, prefix)
}

fn record(py: &Path, prefix: &Path, env: EnvKind, wheel: Option<Wheel>) -> Record {
    Record {
        python: py.to_path_buf(),
        prefix: prefix.to_path_buf(),
        env,
        torch: "2.7.1+cu118".into(),
        version: "2.7.1".into(),
        local: Some("cu118".into()),
        variant: "cu118".into(),
        index_url: Some("https://download.pytorch.org/whl/cu118".into()),
        wheel,
        companions: Default::default(),
        verified_at: 1_764_849_600,
        by: VerifiedBy::Install,
        lifted: false,
    }
}

/// The run without administrator rights (the only one that writes a pin): a sandbox
/// root's state in `.cuda-setup-user`.
fn user(root: &Path, os: Os) -> Target {
    let mut t = Target::rooted(os, root);
    t.elevated = false;
    t
}

/// `cuda-setup guard …` as the user (`elevated`: false), or as administrator, with pip's
/// environment `env`; the user's pip configuration files are looked for under
/// `root/home` (`home()`), never this machine's.
fn guard_cli_as(
    elevated: bool,
    lang: &str,
    args: &[&str],
    py: &Path,
    root: &Path,
    env: &[(&str, &str)],
) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(["--lang", lang, "guard"])
        .args(args)
        .arg("--python")
        .arg(py)
        .arg("--root")
        .arg(root)
        .env_remove("PIP_CONSTRAINT")
        .env_remove("PIP_CONFIG_FILE")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CUDA_SETUP_TEST_NOT_ELEVATED")
        .env("HOME", home(root))
        .env("XDG_CONFIG_DIRS", root.join("xdg"))
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null());
    if !elevated {
        c.env("CUDA_SETUP_TEST_NOT_ELEVATED", "1");
    }
    c.output().unwrap()
}

fn guard_cli(lang: &str, args: &[&str], py: &Path, root: &Path) -> Output {
    guard_cli_as(false, lang, args, py, root, &[])
}

fn guard_cli_env(
    lang: &str,
    args: &[&str],
    py: &Path,
    root: &Path,
    env: &[(&str, &str)],
) -> Output {
    guard_cli_as(false, lang, args, py, root, env)
}

fn home(root: &Path) -> PathBuf {
    root.join("home")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Never pin what we did not verify: `on` refuses, saying to run the doctor first.
#[test]
fn guard_on_refuses_an_unverified_interpreter() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let root = d.path().join("root");
    let o = guard_cli("en", &["on"], &py, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{err}");
    assert!(
        err.contains("error: cuda-setup has not verified PyTorch on the GPU in"),
        "{err}"
    );
    assert!(
        err.contains("hint: Run cuda-setup doctor --python"),
        "{err}"
    );
    assert!(!prefix.join("pip.conf").exists());
    let o = guard_cli("en", &["status"], &py, &root);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.starts_with("No PyTorch build has been verified on the GPU for"),
        "{out}"
    );
}

/// On, status (en and zh), a swap found with its date, on refused while swapped, off back
/// to the user's own pip.conf.
#[test]
fn guard_status_on_swap_and_off() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    guard::record::put(&target, record(&py, &prefix, EnvKind::Venv, None)).unwrap();
    let users = "[global]\nindex-url = https://mirrors.aliyun.com/pypi/simple/\n";
    std::fs::write(prefix.join("pip.conf"), users).unwrap();

    let o = guard_cli("en", &["on"], &py, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("Guard on: "), "{out}");
    let conf = std::fs::read_to_string(prefix.join("pip.conf")).unwrap();
    let constraints = prefix.join("cuda-setup-constraints.txt");
    assert!(conf.starts_with(users), "{conf}");
    assert!(conf.contains("[install]\n# cuda-setup guard: "), "{conf}");
    assert!(
        conf.ends_with(&format!("constraint = {}\n", constraints.display())),
        "{conf}"
    );
    let c = std::fs::read_to_string(&constraints).unwrap();
    assert!(c.ends_with("\ntorch==2.7.1+cu118\n"), "{c}");

    let o = guard_cli("en", &["status"], &py, &root);
    let (en, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{en}");
    let when = cuda_setup_core::units::local_time(1_764_849_600);
    assert!(
        en.starts_with(&format!(
            "Verified on the GPU: torch 2.7.1+cu118 (cu118), installed by cuda-setup, {when}.\nGuard: on. {}/pip.conf tells pip in this environment to keep this build ({}).\nThe installed torch is still the verified build (2.7.1+cu118).\nuv reads no per-environment settings",
            prefix.display(),
            constraints.display()
        )),
        "{en}"
    );
    let (zh, _) = text(&guard_cli("zh", &["status"], &py, &root));
    assert!(zh.contains("锁定：已开启。"), "{zh}");
    assert!(
        zh.contains("现在装的 torch 仍然是验证过的版本（2.7.1+cu118）。"),
        "{zh}"
    );

    // Another install swapped it anyway (the date: its dist-info folder's).
    standin::set_torch(
        py.parent().unwrap(),
        Some(&Torch::new("2.8.0+cpu", None, "")),
    );
    standin::set_torch_installed_at(py.parent().unwrap(), 1_764_849_600);
    let o = guard_cli("en", &["status"], &py, &root);
    let (en, _) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{en}");
    assert!(
        en.contains(
            "torch 2.7.1+cu118 was replaced by 2.8.0+cpu on 2025-12-04 by another install.\nPut the verified build back: cuda-setup guard restore --python "
        ),
        "{en}"
    );
    let (zh, _) = text(&guard_cli("zh", &["status"], &py, &root));
    assert!(
        zh.contains("torch 2.7.1+cu118 在 2025-12-04 被另一次安装换成了 2.8.0+cpu。"),
        "{zh}"
    );
    let json = crate::support::cli::json(&guard_cli("en", &["status", "--json"], &py, &root));
    assert_eq!(json["swap"]["installed"], "2.8.0+cpu");
    assert_eq!(json["pin"], "on");
    assert_eq!(json["restore"]["from"], "index");

    let o = guard_cli("en", &["on"], &py, &root);
    assert_eq!(o.status.code(), Some(3), "{:?}", text(&o));

    let o = guard_cli("en", &["off"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert_eq!(
        std::fs::read_to_string(prefix.join("pip.conf")).unwrap(),
        users
    );
    assert!(!constraints.exists());
    let (out, _) = text(&guard_cli("en", &["off"], &py, &root));
    assert_eq!(out, "The guard was not on: nothing to remove.\n");
}

/// pip's site `[install] constraint` would hide the user's own `constraint` in their
/// pip.conf: `guard on` keeps it beside ours. And status warns, in words, where pip's
/// environment makes it ignore the pin (PIP_CONSTRAINT; PIP_CONFIG_FILE=/dev/null).
#[test]
fn the_users_constraint_is_kept_and_status_says_when_pip_ignores_the_pin() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let root = d.path().join("root");
    let target = Target::rooted(Os::Linux, &root);
    guard::record::put(&target, record(&py, &prefix, EnvKind::Venv, None)).unwrap();
    let users = home(&root).join(".config/pip/pip.conf");
    std::fs::create_dir_all(users.parent().unwrap()).unwrap();
    std::fs::write(&users, "[global]\nconstraint = /home/u/mine.txt\n").unwrap();
    let o = guard_cli("en", &["on"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let conf = std::fs::read_to_string(prefix.join("pip.conf")).unwrap();
    let constraints = prefix.join("cuda-setup-constraints.txt");
    assert!(
        conf.ends_with(&format!(
            "constraint = /home/u/mine.txt {}\n",
            constraints.display()
        )),
        "{conf}"
    );
    let (en, _) = text(&guard_cli("en", &["status"], &py, &root));
    assert!(!en.contains("But "), "{en}");

    let o = guard_cli_env(
        "en",
        &["status"],
        &py,
        &root,
        &[("PIP_CONSTRAINT", "/c.txt")],
    );
    let (en, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{en}");
    assert!(
        en.contains(&format!(
            "Guard: on. {}/pip.conf tells pip in this environment to keep this build ({}).\nBut PIP_CONSTRAINT is set (/c.txt): pip then ignores the guard's setting and will not keep torch 2.7.1+cu118. To be guarded, remove PIP_CONSTRAINT, or add {} to it.\n",
            prefix.display(),
            constraints.display(),
            constraints.display()
        )),
        "{en}"
    );
    let (zh, _) = text(&guard_cli_env(
        "zh",
        &["status"],
        &py,
        &root,
        &[("PIP_CONFIG_FILE", "/dev/null")],
    ));
    assert!(
        zh.contains("但是环境变量 PIP_CONFIG_FILE 被设成了 /dev/null：这时 pip 一个设置文件都不读，锁定保不住 torch 2.7.1+cu118。"),
        "{zh}"
    );
    let json = crate::support::cli::json(&guard_cli_env(
        "en",
        &["status", "--json"],
        &py,
        &root,
        &[("PIP_CONFIG_FILE", "/dev/null")],
    ));
    assert_eq!(json["ignored"]["by"], "config_file_null");
}

/// A system Python's prefix is everyone's: not written without the user's yes, and a run
/// that cannot ask says why and what to do.
#[test]
fn a_system_python_is_not_pinned_without_yes() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "system");
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    guard::record::put(&target, record(&py, &prefix, EnvKind::System, None)).unwrap();
    let o = guard_cli("en", &["on"], &py, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("error: This is the system's own Python: the guard writes into"),
        "{err}"
    );
    assert!(err.contains("--yes"), "{err}");
    assert!(!prefix.join("pip.conf").exists());
    // The core's typed outcome, for the wizard.
    assert!(matches!(
        guard::on(&target, &py, false).unwrap(),
        guard::OnOutcome::NeedsConfirmation { .. }
    ));
    let o = guard_cli("en", &["on", "--yes"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(prefix.join("pip.conf").is_file());
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Restore from our cached wheel: pip gets that very file (offline); a cached file whose
/// bytes changed is refused and the recorded version comes from its index instead.
/// repair's audit finds the same swap and fixes it the same way.
#[test]
fn restore_from_the_cache_hands_pip_the_cached_file() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.8.0+cpu", "venv");
    let bin = py.parent().unwrap().to_path_buf();
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    let name = "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl";
    let bytes = b"the wheel our download engine verified";
    let wheel = root.join(".cuda-setup-user/downloads").join(name);
    std::fs::create_dir_all(wheel.parent().unwrap()).unwrap();
    std::fs::write(&wheel, bytes).unwrap();
    let w = Wheel {
        file: name.into(),
        sha256: sha256(bytes),
    };
    guard::record::put(&target, record(&py, &prefix, EnvKind::Venv, Some(w))).unwrap();

    // repair: a warning on the PyTorch row, fixed by putting the cached file back.
    let tables = cuda_setup_core::compat::Tables::embedded().unwrap();
    let found = cuda_setup_core::repair::audit(&target, &tables, &Default::default());
    let f = found
        .iter()
        .find(|f| f.id == "guard_swapped")
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert_eq!(f.layer, cuda_setup_core::repair::Layer::Torch);
    match &f.fix {
        cuda_setup_core::repair::Fix::Steps { steps } => assert_eq!(
            steps,
            &[cuda_setup_core::steps::Step::InstallTorch {
                python: py.clone(),
                args: vec![
                    "--no-deps".into(),
                    "--force-reinstall".into(),
                    wheel.display().to_string()
                ],
                auto: Default::default(),
            }]
        ),
        other => panic!("{other:?}"),
    }

    let o = guard_cli("en", &["restore"], &py, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("from the saved file"), "{err}");
    assert_eq!(
        std::fs::read_to_string(standin::pip_install_log(&bin)).unwrap(),
        format!(
            "-m pip install --no-deps --force-reinstall {}\n",
            wheel.display()
        )
    );

    // The stand-in's pip installed that build; another install swaps it again.
    assert_eq!(
        std::fs::read_to_string(bin.join("torch.version")).unwrap(),
        "2.7.1+cu118\n"
    );
    standin::set_torch(&bin, Some(&Torch::new("2.8.0+cpu", None, "")));
    // The bytes changed since: not handed to pip.
    std::fs::write(&wheel, b"something else").unwrap();
    std::fs::remove_file(standin::pip_install_log(&bin)).unwrap();
    let o = guard_cli("en", &["restore"], &py, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        err.contains("has changed since it was downloaded: not used"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(standin::pip_install_log(&bin)).unwrap(),
        "-m pip install torch==2.7.1+cu118 --index-url https://download.pytorch.org/whl/cu118\n"
    );
}

/// torchvision recorded with the verified torch and replaced since: `status` tells it
/// (exit 3) although torch is intact, and `restore` puts it back from the recorded index
/// without fetching torch again; with torch replaced too, the cached torch wheel and the
/// companion go back in one pip call, and repair's fix is that same step.
#[test]
fn a_replaced_torchvision_is_told_and_put_back() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let bin = py.parent().unwrap().to_path_buf();
    standin::set_companions(&bin, &[("torchvision", "0.22.1+cu118")]);
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    let mut rec = record(&py, &prefix, EnvKind::Venv, None);
    rec.companions = [("torchvision".to_string(), "0.22.1+cu118".to_string())].into();
    guard::record::put(&target, rec.clone()).unwrap();
    let o = guard_cli("en", &["status"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));

    // Another install replaced torchvision only.
    standin::set_companions(&bin, &[("torchvision", "0.23.0")]);
    let o = guard_cli("en", &["status"], &py, &root);
    let (en, _) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{en}");
    assert!(
        en.contains("torchvision 0.22.1+cu118, installed with the verified torch, was replaced by 0.23.0.\nPut the verified build back: cuda-setup guard restore --python "),
        "{en}"
    );
    assert!(!en.contains("is still the verified build"), "{en}");
    let (zh, _) = text(&guard_cli("zh", &["status"], &py, &root));
    assert!(
        zh.contains("和验证过的 torch 一起装的 torchvision 0.22.1+cu118 被换成了 0.23.0。"),
        "{zh}"
    );
    // The doctor, with torch itself still the verified build on the GPU, tells it too.
    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    match guard::after_doctor(&target, &mut report) {
        guard::AfterDoctor::Swapped(s) => {
            assert_eq!(
                s.companions[0].installed.as_deref(),
                Some("0.23.0"),
                "{s:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    let json = crate::support::cli::json(&guard_cli("en", &["status", "--json"], &py, &root));
    assert_eq!(json["swap"]["companions"][0]["installed"], "0.23.0");
    assert_eq!(json["restore"]["cache"]["kind"], "not_needed");

    let o = guard_cli("en", &["restore"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert_eq!(
        std::fs::read_to_string(standin::pip_install_log(&bin)).unwrap(),
        "-m pip install torchvision==0.22.1+cu118 --index-url https://download.pytorch.org/whl/cu118\n"
    );
    let o = guard_cli("en", &["status"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "put back: {:?}", text(&o));

    // torch and torchvision both replaced, torch's wheel saved: one pip call.
    let name = "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl";
    let bytes = b"the wheel our download engine verified";
    let wheel = target.downloads_dir().join(name);
    std::fs::create_dir_all(wheel.parent().unwrap()).unwrap();
    std::fs::write(&wheel, bytes).unwrap();
    rec.wheel = Some(Wheel {
        file: name.into(),
        sha256: sha256(bytes),
    });
    guard::record::put(&target, rec).unwrap();
    standin::set_torch(&bin, Some(&Torch::new("2.8.0+cpu", None, "")));
    standin::set_companions(&bin, &[("torchvision", "0.23.0+cpu")]);
    let want = vec![
        "--no-deps".to_string(),
        "--force-reinstall".into(),
        wheel.display().to_string(),
        "torchvision==0.22.1+cu118".into(),
        "--index-url".into(),
        "https://download.pytorch.org/whl/cu118".into(),
    ];
    let tables = cuda_setup_core::compat::Tables::embedded().unwrap();
    let found = cuda_setup_core::repair::audit(&target, &tables, &Default::default());
    let f = found
        .iter()
        .find(|f| f.id == "guard_swapped")
        .unwrap_or_else(|| panic!("{found:#?}"));
    match &f.fix {
        cuda_setup_core::repair::Fix::Steps { steps } => assert_eq!(
            steps,
            &[cuda_setup_core::steps::Step::InstallTorch {
                python: py.clone(),
                args: want.clone(),
                auto: Default::default(),
            }]
        ),
        other => panic!("{other:?}"),
    }
    let o = guard_cli("en", &["restore"], &py, &root);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("torchvision==0.22.1+cu118 are downloaded again from the index (cuda-setup saved only torch's file)."),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(standin::pip_install_log(&bin)).unwrap(),
        format!("-m pip install {}\n", want.join(" "))
    );
}

fn doctor_report(
    py: &Path,
    torch: &str,
    on_gpu: bool,
) -> cuda_setup_core::verify::doctor::DoctorReport {
    use cuda_setup_core::verify::doctor::{
        DoctorReport, Finding, FindingKind, Severity, TorchState,
    };
    let finding = |kind, severity, key| Finding {
        kind,
        severity,
        message: cuda_setup_core::message::Message::new(key),
        fix: None,
    };
    let mut findings = vec![finding(FindingKind::Python, Severity::Ok, "doctor_python")];
    if on_gpu {
        findings.push(finding(
            FindingKind::GpuCheckOk,
            Severity::Ok,
            "doctor_gpu_check_ok",
        ));
    }
    DoctorReport {
        status: cuda_setup_core::verify::Status::Passed,
        exit_code: 0,
        python: Some(py.to_path_buf()),
        python_version: Some("3.11.9".into()),
        probe_error: None,
        torch: Some(TorchState {
            version: torch.into(),
            cuda: (!torch.contains("cpu")).then(|| "12.6".into()),
            cuda_available: on_gpu,
            ..Default::default()
        }),
        torch_error: None,
        driver: None,
        driver_cuda: None,
        gpus: Vec::new(),
        check: None,
        findings,
        recommended: None,
        pypi_mirror: None,
        extension: None,
        build_extension: None,
        packages: None,
        elapsed_ms: 0,
    }
}

/// An upgrade made through cuda-setup moves the pin: the pip step lifts our constraint for
/// its own pip call (else pip would refuse it), notes what it installed, and once the
/// doctor verifies it on the GPU the record and the pin move to it. A swap made by someone
/// else is a note in the doctor's findings instead.
#[test]
fn the_pip_step_lifts_and_moves_the_pin() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let bin = py.parent().unwrap().to_path_buf();
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    guard::record::put(&target, record(&py, &prefix, EnvKind::Venv, None)).unwrap();
    guard::on(&target, &py, false).unwrap();
    let constraints = prefix.join("cuda-setup-constraints.txt");

    let step = cuda_setup_core::steps::Step::InstallTorch {
        python: py.clone(),
        // A loopback index that answers nothing: pip fetches the wheel itself.
        args: vec![
            "torch==2.13.0".into(),
            "--index-url".into(),
            "http://127.0.0.1:9/whl/cu126".into(),
        ],
        auto: Default::default(),
    };
    let lines = std::sync::Mutex::new(Vec::new());
    let emit = |e: cuda_setup_core::steps::StepEvent| {
        if let cuda_setup_core::steps::StepEvent::Log { line } = e {
            lines.lock().unwrap().push(line.key);
        }
    };
    let cancel = cuda_setup_core::download::Cancel::default();
    let ctx = cuda_setup_core::steps::Ctx {
        target: &target,
        cancel: &cancel,
        emit: &emit,
    };
    cuda_setup_core::steps::run(&step, &ctx).unwrap();
    assert!(lines.lock().unwrap().contains(&"guard_pip_lifted"));
    let lifted = std::fs::read_to_string(standin::pip_constraint_log(&bin)).unwrap();
    assert_eq!(
        lifted.trim(),
        root.join(".cuda-setup-user/guard/no-constraints.txt")
            .display()
            .to_string(),
        "our pip call gets an empty constraints file instead of ours"
    );
    assert_eq!(
        guard::record::pending(&target, &py).map(|p| p.version),
        Some("2.13.0".to_string())
    );
    // Not yet verified: the pin still names the old build.
    assert!(
        std::fs::read_to_string(&constraints)
            .unwrap()
            .contains("torch==2.7.1+cu118")
    );

    let mut report = doctor_report(&py, "2.13.0+cu126", true);
    match guard::after_doctor(&target, &mut report) {
        guard::AfterDoctor::Pinned { torch, .. } => assert_eq!(torch, "2.13.0+cu126"),
        other => panic!("{other:?}"),
    }
    assert_eq!(report.findings[1].message.key, "guard_doctor_pinned");
    let rec = guard::record::find(&target, &py).unwrap().unwrap();
    assert_eq!(
        (rec.torch.as_str(), rec.by, rec.index_url.as_deref()),
        (
            "2.13.0+cu126",
            VerifiedBy::Install,
            Some("http://127.0.0.1:9/whl/cu126")
        )
    );
    let c = std::fs::read_to_string(&constraints).unwrap();
    assert!(c.ends_with("\ntorch==2.13.0+cu126\n"), "{c}");
    assert_eq!(guard::record::pending(&target, &py), None);

    // Someone else's install, then the doctor: told, and the record kept.
    standin::set_torch(&bin, Some(&Torch::new("2.8.0+cpu", None, "")));
    standin::set_torch_installed_at(&bin, 1_764_849_600);
    let mut report = doctor_report(&py, "2.8.0+cpu", false);
    assert!(matches!(
        guard::after_doctor(&target, &mut report),
        guard::AfterDoctor::Swapped(_)
    ));
    let f = &report.findings[1];
    assert_eq!(
        f.kind,
        cuda_setup_core::verify::doctor::FindingKind::TorchSwapped
    );
    assert_eq!(
        render(&f.message, Lang::En),
        "torch 2.13.0+cu126 was replaced by 2.8.0+cpu on 2025-12-04 by another install."
    );
    assert_eq!(
        f.fix.as_ref().unwrap().commands,
        [format!(
            "cuda-setup guard restore --python {}",
            py.display()
        )]
    );
    assert_eq!(
        guard::record::find(&target, &py).unwrap().unwrap().torch,
        "2.13.0+cu126"
    );
}

/// The "found and verified on the GPU": the doctor pins a build it found working
/// in a venv (its note says how to lift it); `guard off` is kept — the same build, or a
/// new one verified later, is only recorded until `guard on`.
#[test]
fn the_doctor_pins_a_build_it_found_in_a_venv_and_keeps_the_users_off() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let bin = py.parent().unwrap().to_path_buf();
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    let constraints = prefix.join("cuda-setup-constraints.txt");

    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    match guard::after_doctor(&target, &mut report) {
        guard::AfterDoctor::Pinned { torch, .. } => assert_eq!(torch, "2.7.1+cu118"),
        other => panic!("{other:?}"),
    }
    let note = &report.findings[1];
    assert_eq!(note.message.key, "guard_doctor_pinned");
    let en = render(&note.message, Lang::En);
    assert!(
        en.ends_with(&format!(
            "To lift it: cuda-setup guard off --python {}",
            py.display()
        )),
        "{en}"
    );
    assert!(prefix.join("pip.conf").is_file());
    assert!(
        std::fs::read_to_string(&constraints)
            .unwrap()
            .ends_with("\ntorch==2.7.1+cu118\n")
    );
    let rec = guard::record::find(&target, &py).unwrap().unwrap();
    assert_eq!((rec.by, rec.lifted), (VerifiedBy::Doctor, false));

    // The user lifts it: the doctor does not put it back.
    let o = guard_cli("en", &["off"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(guard::record::find(&target, &py).unwrap().unwrap().lifted);
    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    assert!(matches!(
        guard::after_doctor(&target, &mut report),
        guard::AfterDoctor::Nothing
    ));
    assert!(!prefix.join("pip.conf").exists() && !constraints.exists());
    // Another build the user put there, working: recorded, still not pinned.
    standin::set_torch(
        &bin,
        Some(&Torch::new("2.8.0+cu126", Some("12.6"), "sm_86")),
    );
    let mut report = doctor_report(&py, "2.8.0+cu126", true);
    match guard::after_doctor(&target, &mut report) {
        guard::AfterDoctor::Recorded { torch, system } => {
            assert_eq!((torch.as_str(), system), ("2.8.0+cu126", None))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(report.findings[1].message.key, "guard_doctor_recorded");
    assert!(!prefix.join("pip.conf").exists());
    // `guard on` ends the lift.
    let o = guard_cli("en", &["on"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let rec = guard::record::find(&target, &py).unwrap().unwrap();
    assert_eq!((rec.torch.as_str(), rec.lifted), ("2.8.0+cu126", false));
    assert!(
        std::fs::read_to_string(&constraints)
            .unwrap()
            .ends_with("\ntorch==2.8.0+cu126\n")
    );
}

/// A system Python's verified build is recorded, never pinned by the doctor: its note asks
/// (`guard on --yes`), and nothing is written into the shared prefix.
#[test]
fn the_doctor_only_records_a_build_in_a_system_python() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "system");
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    match guard::after_doctor(&target, &mut report) {
        guard::AfterDoctor::Recorded { system, .. } => {
            assert_eq!(system.as_deref(), Some(prefix.as_path()))
        }
        other => panic!("{other:?}"),
    }
    let note = &report.findings[1];
    assert_eq!(note.message.key, "guard_doctor_recorded_system");
    assert!(render(&note.message, Lang::En).ends_with(&format!(
        "cuda-setup guard on --python {} --yes",
        py.display()
    )));
    assert!(render(&note.message, Lang::Zh).contains("系统自带的 Python"));
    assert!(!prefix.join("pip.conf").exists());
    assert!(!prefix.join("cuda-setup-constraints.txt").exists());
    // Checked again: still only recorded, nothing said twice.
    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    assert!(matches!(
        guard::after_doctor(&target, &mut report),
        guard::AfterDoctor::Nothing
    ));
    assert!(!prefix.join("pip.conf").exists());
}

// ---- a real pip in a real venv ----

/// A venv of this machine's python3, with its pip (ensurepip: offline).
fn real_venv(dir: &Path) -> PathBuf {
    let out = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(dir)
        .output()
        .expect("the real_python_* tests need python3 on PATH");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("bin/python3")
}

/// pip, offline and with nothing of this machine's pip settings but the venv's own.
fn pip(py: &Path, args: &[&str]) -> Output {
    Command::new(py)
        .args(["-m", "pip"])
        .args(args)
        .env_remove("PIP_CONSTRAINT")
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_INDEX_URL")
        .env_remove("PIP_CONFIG_FILE")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output()
        .unwrap()
}

fn installed_torch(py: &Path) -> String {
    let o = Command::new(py)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('torch'))",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Wheels for the real-pip tests: `needs-other-torch` (Requires-Dist: torch==`other`), and
/// a fake torch of each of `torches`.
fn local_wheels(dir: &Path, torches: &[&str], other: &str) {
    use crate::support::wheels::write_wheel;
    std::fs::create_dir_all(dir).unwrap();
    for v in torches {
        write_wheel(
            &dir.join(format!("torch-{v}-py3-none-any.whl")),
            &format!("Metadata-Version: 2.1\nName: torch\nVersion: {v}\n"),
            &[(
                "torch/__init__.py",
                format!("__version__ = '{v}'\n").as_bytes(),
                false,
            )],
        );
    }
    write_wheel(
        &dir.join("needs_other_torch-1.0-py3-none-any.whl"),
        &format!(
            "Metadata-Version: 2.1\nName: needs-other-torch\nVersion: 1.0\nRequires-Dist: torch=={other}\n"
        ),
        &[("needs_other_torch/__init__.py", b"", false)],
    );
}

/// Records what is installed as verified (the GPU part is the doctor's, tested apart) and
/// turns the guard on through the command line, with our probe on the real interpreter.
fn guard_real(py: &Path, root: &Path) {
    let target = user(root, Os::current());
    let env = guard::probe::probe(&target.host, py).unwrap();
    assert_eq!(env.kind, EnvKind::Venv);
    let torch = env.torch.clone().expect("torch installed");
    let (version, local) = guard::record::split_version(&torch);
    guard::record::put(
        &target,
        Record {
            python: py.to_path_buf(),
            prefix: env.prefix.clone(),
            env: env.kind,
            variant: local.clone().unwrap_or_else(|| "pypi".into()),
            index_url: guard::record::index_for(local.as_deref()),
            local,
            version,
            torch,
            wheel: None,
            companions: env.companions.clone(),
            verified_at: 1_764_849_600,
            by: VerifiedBy::Doctor,
            lifted: false,
        },
    )
    .unwrap();
    let o = guard_cli("en", &["on"], py, root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

fn refused(o: &Output, torch: &str) {
    // pip says why on stdout, and its errors on stderr.
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!o.status.success(), "pip installed it: {err}");
    assert!(err.contains("ResolutionImpossible"), "{err}");
    assert!(
        err.contains(&format!("The user requested (constraint) torch=={torch}")),
        "{err}"
    );
    println!("pip's refusal:\n{err}");
}

/// The case on pip's real resolver, offline: a guarded venv with a CUDA torch; a
/// package pinning another torch is refused with pip's conflict message and torch stays;
/// after `guard off` the same install goes through. The venv's path has a space and
/// Chinese in it (pip reads its configuration in the locale's encoding).
#[test]
#[ignore = "needs python3 with venv and ensurepip: scripts/real-artifacts.sh"]
fn real_python_guard_refuses_a_second_torch() {
    let d = tempfile::tempdir().unwrap();
    let wheels = d.path().join("wheels");
    local_wheels(&wheels, &["2.7.1+cu118", "2.8.0"], "2.8.0");
    let py = real_venv(&d.path().join("my env 张"));
    let links = wheels.display().to_string();
    let o = pip(
        &py,
        &[
            "install",
            "--no-index",
            "--find-links",
            &links,
            "torch==2.7.1+cu118",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let root = d.path().join("root");
    guard_real(&py, &root);
    let o = pip(
        &py,
        &[
            "install",
            "--no-index",
            "--find-links",
            &links,
            "needs-other-torch",
        ],
    );
    refused(&o, "2.7.1+cu118");
    assert_eq!(installed_torch(&py), "2.7.1+cu118");
    // A plain upgrade of torch is held too.
    let o = pip(
        &py,
        &[
            "install",
            "--no-index",
            "--find-links",
            &links,
            "--upgrade",
            "torch",
        ],
    );
    assert!(o.status.success());
    assert_eq!(installed_torch(&py), "2.7.1+cu118");

    let o = guard_cli("en", &["off"], &py, &root);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = pip(
        &py,
        &[
            "install",
            "--no-index",
            "--find-links",
            &links,
            "needs-other-torch",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(installed_torch(&py), "2.8.0");
    // And the swap is told, dated from the real dist-info folder.
    let o = guard_cli("en", &["status"], &py, &root);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(
        out.contains("torch 2.7.1+cu118 was replaced by 2.8.0 on "),
        "{out}"
    );
}

/// The same with PyTorch's real wheel from PyPI (CI has PyPI; run by
/// scripts/real-artifacts.sh after its PyPI check): the newest torch installed without
/// its dependencies, recorded and guarded, then a package pinning another torch refused.
#[test]
#[ignore = "needs PyPI (a torch wheel, about 1 GB): scripts/real-artifacts.sh"]
fn real_pypi_torch_guard_refuses_another_torch() {
    let d = tempfile::tempdir().unwrap();
    let py = real_venv(&d.path().join("venv"));
    let o = pip(&py, &["install", "--no-deps", "torch"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let torch = installed_torch(&py);
    let root = d.path().join("root");
    guard_real(&py, &root);
    let wheels = d.path().join("wheels");
    // Another torch: a version no release has.
    local_wheels(&wheels, &[], "0.0.1");
    let links = wheels.display().to_string();
    let o = pip(
        &py,
        &["install", "--find-links", &links, "needs-other-torch"],
    );
    refused(&o, &torch);
    assert_eq!(installed_torch(&py), torch);
}

// ---- what an elevated run and the interpreter's own word may do (#33 review) ----

/// An elevated run would write, delete and run pip where the user's interpreter says,
/// with administrator rights, leaving files the user's pip cannot change: it only
/// records. The doctor notes the build without a pin; `guard on`, `off` and `restore`
/// refuse in plain words (en, zh); `status` says why; repair keeps the swap's finding
/// without its fix step.
#[test]
fn an_elevated_run_records_only_and_never_touches_the_environment() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let bin = py.parent().unwrap().to_path_buf();
    let root = d.path().join("root");
    let admin = Target::rooted(Os::Linux, &root);
    assert!(admin.elevated);
    let constraints = prefix.join("cuda-setup-constraints.txt");

    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    match guard::after_doctor(&admin, &mut report) {
        guard::AfterDoctor::RecordedOnly { torch } => assert_eq!(torch, "2.7.1+cu118"),
        other => panic!("{other:?}"),
    }
    let note = &report.findings[1];
    assert_eq!(note.message.key, "guard_doctor_recorded_elevated");
    assert!(
        render(&note.message, Lang::En).ends_with(&format!(
            "run without administrator rights: cuda-setup guard on --python {}",
            py.display()
        )),
        "{:?}",
        render(&note.message, Lang::En)
    );
    assert!(!prefix.join("pip.conf").exists() && !constraints.exists());
    // Checked again: the record is there, still nothing written.
    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    assert!(matches!(
        guard::after_doctor(&admin, &mut report),
        guard::AfterDoctor::Nothing
    ));
    assert!(!prefix.join("pip.conf").exists() && !constraints.exists());

    // The user's own run pinned it; the elevated one neither adds nor removes.
    let me = user(&root, Os::Linux);
    guard::record::put(&me, record(&py, &prefix, EnvKind::Venv, None)).unwrap();
    assert!(matches!(
        guard::on(&me, &py, false).unwrap(),
        guard::OnOutcome::Pinned { written: true, .. }
    ));
    let conf = std::fs::read(prefix.join("pip.conf")).unwrap();
    for args in [&["on"][..], &["on", "--yes"], &["off"], &["restore"]] {
        let o = guard_cli_as(true, "en", args, &py, &root, &[]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(
            err.contains("error: cuda-setup is running as administrator, so it does not turn the guard on or off or put PyTorch back here"),
            "{err}"
        );
        assert!(
            err.contains("hint: Run the same command again without administrator rights"),
            "{err}"
        );
    }
    let (_, zh) = text(&guard_cli_as(true, "zh", &["off"], &py, &root, &[]));
    assert!(
        zh.contains("cuda-setup 现在是以管理员身份运行的，所以不会在这里开关锁定"),
        "{zh}"
    );
    assert_eq!(std::fs::read(prefix.join("pip.conf")).unwrap(), conf);
    assert!(constraints.is_file());
    let (out, _) = text(&guard_cli_as(true, "en", &["status"], &py, &root, &[]));
    assert!(
        out.contains("cuda-setup is running as administrator, so here it only reports the guard."),
        "{out}"
    );

    // Swapped: the finding stays, its fix is the user's to run; no pip ran as root.
    standin::set_torch(&bin, Some(&Torch::new("2.8.0+cpu", None, "")));
    let tables = cuda_setup_core::compat::Tables::embedded().unwrap();
    let found = cuda_setup_core::repair::audit(&admin, &tables, &Default::default());
    let f = found
        .iter()
        .find(|f| f.id.starts_with("guard_swapped"))
        .unwrap_or_else(|| panic!("{found:#?}"));
    match &f.fix {
        cuda_setup_core::repair::Fix::Manual { how } => {
            assert_eq!(how.key, "guard_fix_as_user");
            assert!(
                render(how, Lang::En).starts_with(
                    "Put it back without administrator rights: in a normal terminal run cuda-setup repair, or cuda-setup guard restore --python "
                ),
                "{}",
                render(how, Lang::En)
            );
        }
        other => panic!("{other:?}"),
    }
    let s = guard::status(&admin, &py).unwrap();
    assert!(s.restore.is_none(), "no restore planned: {:?}", s.restore);
    assert!(
        s.lines
            .iter()
            .any(|m| m.key == "guard_status_elevated_restore")
    );
    let o = guard_cli_as(true, "en", &["restore"], &py, &root, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!standin::pip_install_log(&bin).exists(), "pip ran");
    // The user's run still can.
    assert!(guard::restore_plan(&me, &py).is_ok());
}

/// The prefix is the interpreter's own word, and a sitecustomize can print any: before a
/// byte is written, the prefix must hold the interpreter (found from the path we were
/// given, not from the probe) and a venv's `pyvenv.cfg` / a conda env's `conda-meta`. A
/// prefix elsewhere is refused; a kind without its marker asks, as a system Python does.
#[test]
fn the_interpreters_word_on_its_prefix_is_checked_before_writing() {
    let d = tempfile::tempdir().unwrap();
    let (py, prefix) = venv(d.path(), "2.7.1+cu118", "venv");
    let bin = py.parent().unwrap().to_path_buf();
    let root = d.path().join("root");
    let target = user(&root, Os::Linux);
    guard::record::put(&target, record(&py, &prefix, EnvKind::Venv, None)).unwrap();

    // It names a folder that does not hold it (as a planted sitecustomize could name
    // /etc), marker and all.
    let elsewhere = d.path().join("etc");
    standin::set_env(&bin, &elsewhere, "venv");
    let o = guard_cli("en", &["on", "--yes"], &py, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains(&format!(
            "error: The Python at {} says its folder is {}, but it is not in that folder, so cuda-setup writes nothing there.",
            py.display(),
            elsewhere.display()
        )),
        "{err}"
    );
    assert!(err.contains("sitecustomize"), "{err}");
    let (_, zh) = text(&guard_cli("zh", &["on", "--yes"], &py, &root));
    assert!(zh.contains("可它并不在那个文件夹里"), "{zh}");
    // The doctor writes nothing there either (a fresh state: nothing recorded yet).
    let mut report = doctor_report(&py, "2.7.1+cu118", true);
    let fresh = user(&d.path().join("root2"), Os::Linux);
    assert!(matches!(
        guard::after_doctor(&fresh, &mut report),
        guard::AfterDoctor::Failed { .. }
    ));
    for p in [&elsewhere, &prefix] {
        assert!(!p.join("pip.conf").exists() && !p.join("cuda-setup-constraints.txt").exists());
    }

    // A venv without pyvenv.cfg: treated as a system Python — asked first.
    standin::set_env(&bin, &prefix, "venv");
    std::fs::remove_file(prefix.join("pyvenv.cfg")).unwrap();
    let o = guard_cli("en", &["on"], &py, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("This is the system's own Python"), "{err}");
    assert!(!prefix.join("pip.conf").exists());
    // A conda env without conda-meta: the same.
    standin::set_env(&bin, &prefix, "conda");
    std::fs::remove_dir(prefix.join("conda-meta")).unwrap();
    assert!(matches!(
        guard::on(&target, &py, false).unwrap(),
        guard::OnOutcome::NeedsConfirmation { .. }
    ));
    // With its marker, a conda env is pinned without asking.
    std::fs::create_dir(prefix.join("conda-meta")).unwrap();
    assert!(matches!(
        guard::on(&target, &py, false).unwrap(),
        guard::OnOutcome::Pinned { written: true, .. }
    ));

    // The interpreter reached through links: each hop is followed, so a link from
    // elsewhere to the venv's python counts, and so does the venv's own link out to its
    // base interpreter.
    let link = d.path().join("python-link");
    std::os::unix::fs::symlink(&py, &link).unwrap();
    assert_eq!(
        guard::probe::check(&link, &prefix, EnvKind::Conda).unwrap(),
        EnvKind::Conda
    );
    let out_link = bin.join("python-base");
    std::os::unix::fs::symlink("/usr/bin/env", &out_link).unwrap();
    assert!(guard::probe::check(&out_link, &prefix, EnvKind::Conda).is_ok());
    assert!(matches!(
        guard::probe::check(&py, &elsewhere, EnvKind::Venv),
        Err(guard::GuardError::Prefix { .. })
    ));
}

/// Python < 3.8 has no importlib.metadata: the probe finds torch through setuptools'
/// pkg_resources (this python3 with importlib.metadata hidden), its install time from
/// the dist-info folder.
#[test]
#[ignore = "needs python3 with venv and ensurepip: scripts/real-artifacts.sh"]
fn real_python_probe_falls_back_to_pkg_resources() {
    let d = tempfile::tempdir().unwrap();
    let wheels = d.path().join("wheels");
    local_wheels(&wheels, &["2.7.1+cu118"], "2.8.0");
    let py = real_venv(&d.path().join("venv"));
    let links = wheels.display().to_string();
    let o = pip(
        &py,
        &[
            "install",
            "--no-index",
            "--find-links",
            &links,
            "torch==2.7.1+cu118",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let has = Command::new(&py)
        .args(["-c", "import pkg_resources"])
        .output()
        .unwrap();
    if !has.status.success() {
        // Python 3.12+ venvs come without setuptools; 3.4–3.7 had it.
        println!("skipped: this python3's venv has no pkg_resources");
        return;
    }
    let answer = |script: &str| -> serde_json::Value {
        let o = Command::new(&py).args(["-c", script]).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix("CUDA_SETUP_GUARD "))
            .unwrap_or_else(|| panic!("{out}{}", String::from_utf8_lossy(&o.stderr)));
        serde_json::from_str(line).unwrap()
    };
    let hidden = format!(
        "import sys\nsys.modules['importlib.metadata'] = None\n{}",
        guard::probe::PROBE_SCRIPT
    );
    let old = answer(&hidden);
    assert_eq!(old["error"], serde_json::Value::Null, "{old}");
    assert_eq!(old["packages"]["torch"], "2.7.1+cu118", "{old}");
    let new = answer(guard::probe::PROBE_SCRIPT);
    assert_eq!(new["packages"], old["packages"]);
    let at = old["torch_installed_at"].as_u64().expect("a time");
    assert_eq!(Some(at), new["torch_installed_at"].as_u64());
}

/// `pip` as the user of `home` runs it (their pip.conf there), offline.
fn pip_as(py: &Path, home: &Path, env: &[(String, String)], args: &[&str]) -> Output {
    Command::new(py)
        .args(["-m", "pip"])
        .args(args)
        .env_remove("PIP_CONSTRAINT")
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_INDEX_URL")
        .env_remove("PIP_CONFIG_FILE")
        .env_remove("XDG_CONFIG_HOME")
        .env("HOME", home)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

/// The reviewer's case on pip's real resolver: the user's own `constraint` under
/// `[global]` in their pip.conf stays in effect once the guard is on (pip's site
/// `[install]` value would otherwise hide it), the pin still refuses another torch, and
/// our own pip step's PIP_CONSTRAINT keeps the user's file while it lifts ours.
#[test]
#[ignore = "needs python3 with venv and ensurepip: scripts/real-artifacts.sh"]
fn real_python_guard_keeps_the_users_own_constraint() {
    use crate::support::wheels::write_wheel;
    let d = tempfile::tempdir().unwrap();
    let wheels = d.path().join("wheels");
    local_wheels(&wheels, &["2.7.1+cu118", "2.8.0"], "2.8.0");
    for v in ["1.0", "2.0"] {
        write_wheel(
            &wheels.join(format!("other_pkg-{v}-py3-none-any.whl")),
            &format!("Metadata-Version: 2.1\nName: other-pkg\nVersion: {v}\n"),
            &[("other_pkg/__init__.py", b"", false)],
        );
    }
    let py = real_venv(&d.path().join("venv"));
    let root = d.path().join("root");
    let home = home(&root);
    let mine = d.path().join("mine.txt");
    std::fs::write(&mine, "other-pkg==1.0\n").unwrap();
    let user_conf = home.join(".config/pip/pip.conf");
    std::fs::create_dir_all(user_conf.parent().unwrap()).unwrap();
    std::fs::write(
        &user_conf,
        format!("[global]\nconstraint = {}\n", mine.display()),
    )
    .unwrap();
    let links = wheels.display().to_string();
    let offline = ["install", "--no-index", "--find-links", &links];
    let install = |env: &[(String, String)], what: &[&str]| {
        let args: Vec<&str> = offline.iter().chain(what).copied().collect();
        pip_as(&py, &home, env, &args)
    };
    let o = install(&[], &["torch==2.7.1+cu118"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    guard_real(&py, &root);
    let conf = std::fs::read_to_string(d.path().join("venv/pip.conf")).unwrap();
    println!("the venv's pip.conf:\n{conf}");

    // The user's constraint holds: other-pkg 1.0, not the newest.
    let o = install(&[], &["other-pkg"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = pip_as(&py, &home, &[], &["show", "other-pkg"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Version: 1.0"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // And the pin: another torch refused.
    refused(&install(&[], &["needs-other-torch"]), "2.7.1+cu118");

    // Our own pip step's environment: ours lifted, the user's kept.
    let mut target = user(&root, Os::current());
    target.host = cuda_setup_core::platform::Host::real_with_env(
        [("HOME".to_string(), home.display().to_string())].into(),
    );
    let lifted = guard::lift_for_pip(&target, &py);
    assert_eq!(lifted.len(), 1, "{lifted:?}");
    assert!(
        lifted[0].1.starts_with(&mine.display().to_string()),
        "{lifted:?}"
    );
    let o = install(&lifted, &["other-pkg==2.0"]);
    assert!(!o.status.success(), "the user's constraint was dropped");
    let o = install(&lifted, &["torch==2.8.0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(installed_torch(&py), "2.8.0");
}
