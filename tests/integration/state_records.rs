//! The records of this machine (#33), whichever kind of run asks: the install runs
//! elevated and records into the machine's state folder (`%ProgramData%\cuda-setup`);
//! the next day's `doctor`, `guard status` or wizard run as the user and must see it.
//! The reverse too: a record a run without rights wrote is *reported* by an elevated
//! run, never acted on. A machine folder others can write, or a link, is passed over and
//! left as it is. Windows' real layout (no `--root`: every folder from the variables, here
//! inside a temp dir) through the core, and a sandbox root through the real binary
//! (`CUDA_SETUP_TEST_NOT_ELEVATED`: the run without rights, state in `.cuda-setup-user`).

#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_setup_core::compat::Os;
use cuda_setup_core::driverwatch::{self, Drift, GpuId, Passed, PassedCheck};
use cuda_setup_core::guard::{self, EnvKind, GuardError, Record, Restore, VerifiedBy, Wheel};
use cuda_setup_core::platform::Host;
use cuda_setup_core::records::Origin;
use cuda_setup_core::target::Target;
use cuda_setup_core::version::Version;

use crate::support::python::{self as standin, Torch};

/// Windows on the machine itself: `%ProgramData%` and `%LOCALAPPDATA%` inside `home`.
fn windows(home: &Path, elevated: bool) -> Target {
    let env: BTreeMap<String, String> = [
        ("ProgramFiles", "Program Files"),
        ("ProgramData", "ProgramData"),
        ("LOCALAPPDATA", "AppData/Local"),
        ("USERPROFILE", ""),
    ]
    .into_iter()
    .map(|(k, sub)| (k.to_string(), home.join(sub).display().to_string()))
    .collect();
    Target {
        os: Os::Windows,
        root: None,
        host: Host::sandbox(Os::Windows, home, env),
        elevated,
    }
}

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

/// A folder only its owner can write (what an elevated run makes: 0755).
fn admin_only(dir: &Path) {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn passed(driver: &str) -> Passed {
    Passed {
        driver: v(driver),
        gpu: GpuId {
            name: Some("NVIDIA GeForce RTX 3060".into()),
            ..Default::default()
        },
        installed_by_us: true,
        check: PassedCheck::Smoke,
    }
}

/// A venv stand-in under `d/venv` with torch `version`.
fn venv(d: &Path, version: &str) -> (PathBuf, PathBuf) {
    let prefix = d.join("venv");
    let bin = prefix.join("bin");
    let py = standin::interpreter(&bin, Some(&Torch::new(version, Some("11.8"), "sm_86")));
    standin::set_env(&bin, &prefix, "venv");
    (py, prefix)
}

fn record(py: &Path, prefix: &Path, wheel: Option<Wheel>) -> Record {
    Record {
        python: py.to_path_buf(),
        prefix: prefix.to_path_buf(),
        env: EnvKind::Venv,
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

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn lines(s: &guard::Status) -> Vec<String> {
    s.lines
        .iter()
        .map(|m| cuda_setup_core::i18n::render(m, cuda_setup_core::i18n::Lang::En))
        .collect()
}

/// The typical Windows day: the install (elevated) recorded the driver, the torch build
/// and its wheel in `%ProgramData%`; the user's run reads `%LOCALAPPDATA%` — and now
/// sees all three: Windows Update's older driver is a finding, the swapped torch is told
/// and put back from the machine's wheel, copied into the user's folder and hashed.
#[test]
fn the_users_run_sees_what_the_elevated_install_recorded() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("home");
    let (admin, user) = (windows(&home, true), windows(&home, false));
    let machine = home.join("ProgramData/cuda-setup");
    assert_eq!(admin.state_dir(), machine);
    assert_eq!(user.state_dir(), home.join("AppData/Local/cuda-setup"));

    // The install, elevated: the driver that passed, the verified build, its wheel.
    driverwatch::record_pass(&admin, &passed("617.14")).unwrap();
    let (py, prefix) = venv(d.path(), "2.8.0+cpu");
    let name = "torch-2.7.1+cu118-cp311-cp311-win_amd64.whl";
    let bytes = b"the wheel our download engine verified";
    std::fs::create_dir_all(machine.join("downloads")).unwrap();
    std::fs::write(machine.join("downloads").join(name), bytes).unwrap();
    let w = Wheel {
        file: name.into(),
        sha256: sha256(bytes),
    };
    guard::record::put(&admin, record(&py, &prefix, Some(w))).unwrap();
    for f in ["", "guard", "downloads"] {
        admin_only(&machine.join(f));
    }

    // The next day, as the user: the driver Windows Update put back is older.
    let o = driverwatch::observe(&user);
    assert_eq!(o.origin, Some(Origin::Machine), "{o:?}");
    assert!(o.acts());
    let drift = driverwatch::judge(Os::Windows, &o, Some(&v("566.36")), None);
    assert!(
        matches!(&drift, Some(Drift::Older { recorded, .. }) if recorded.to_string() == "617.14"),
        "{drift:?}"
    );
    // A pass on the older driver does not hide the machine's record.
    assert_eq!(
        driverwatch::record_pass(&user, &passed("566.36")).unwrap(),
        driverwatch::Recorded::KeptNewer
    );

    // guard status: the machine's record, said where it came from; the swap; restore
    // planned from the machine's wheel, copied into the user's own downloads.
    let s = guard::status(&user, &py).unwrap();
    assert_eq!(s.origin, Some(Origin::Machine));
    let text = lines(&s).join("\n");
    assert!(
        text.contains(&format!(
            "(Recorded by cuda-setup running as administrator, in {}.)",
            machine.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("torch 2.7.1+cu118 was replaced by 2.8.0+cpu"),
        "{text}"
    );
    let copied = user.state_dir().join("downloads").join(name);
    match &s.restore {
        Some(Restore::Cache { wheel, .. }) => assert_eq!(wheel, &copied),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&copied).unwrap(), bytes);
    assert_eq!(
        std::fs::read(machine.join("downloads").join(name)).unwrap(),
        bytes,
        "the machine's file is left in place"
    );
    // repair's audit as the user finds the same swap.
    assert_eq!(guard::audit(&user).len(), 1);

    // The machine's wheel changed since: not copied, not used.
    std::fs::remove_file(&copied).unwrap();
    std::fs::write(machine.join("downloads").join(name), b"something else").unwrap();
    let (_, plan) = guard::restore_plan(&user, &py).unwrap();
    assert!(
        matches!(
            &plan,
            Restore::Index {
                cache: guard::CacheState::Mismatch { .. },
                ..
            }
        ),
        "{plan:?}"
    );
    assert!(!copied.exists());
}

/// The reverse: the user's doctor recorded the driver and the torch build in
/// `%LOCALAPPDATA%`. An elevated run reports both — but acts on neither: no restore is
/// planned, the interpreter is not run by its audit, `on`/`restore` refuse.
#[test]
fn an_elevated_run_reports_the_users_records_but_never_acts_on_them() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("home");
    let (admin, user) = (windows(&home, true), windows(&home, false));
    driverwatch::record_pass(&user, &passed("617.14")).unwrap();
    let (py, prefix) = venv(d.path(), "2.8.0+cpu");
    guard::record::put(&user, record(&py, &prefix, None)).unwrap();

    let o = driverwatch::observe(&admin);
    assert_eq!(o.origin, Some(Origin::User));
    assert!(!o.acts(), "told, not acted on");
    assert!(driverwatch::judge(Os::Windows, &o, Some(&v("566.36")), None).is_some());
    // Nothing the user wrote holds the elevated record back.
    assert_eq!(driverwatch::read(&admin), None);

    let s = guard::status(&admin, &py).unwrap();
    assert_eq!(s.origin, Some(Origin::User));
    assert!(s.swap.is_some() && s.restore.is_none(), "{s:?}");
    let text = lines(&s).join("\n");
    assert!(
        text.contains("so cuda-setup running as administrator only reports it. To put the verified build back, run without administrator rights: cuda-setup guard restore --python "),
        "{text}"
    );
    // The audit runs no interpreter a user's record names (asked, this one would tell a
    // swap).
    assert!(guard::audit(&admin).is_empty());
    assert_eq!(guard::audit(&user).len(), 1);
    // An elevated run changes no guard and runs no pip in the user's environment at all.
    assert!(matches!(
        guard::restore_plan(&admin, &py),
        Err(GuardError::Elevated)
    ));
    assert!(matches!(
        guard::on(&admin, &py, true),
        Err(GuardError::Elevated)
    ));
    assert!(!prefix.join("pip.ini").exists());
    // The user's records are where they were.
    assert!(user.state_dir().join("guard/verified-torch.json").is_file());
    assert!(user.state_dir().join("driver-record.json").is_file());
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("PIP_CONSTRAINT")
        .env_remove("CUDA_SETUP_TEST_NOT_ELEVATED")
        .stdin(std::process::Stdio::null());
    c
}

/// As the user: the sandbox's run without administrator rights.
fn as_user(mut c: Command) -> Command {
    c.env("CUDA_SETUP_TEST_NOT_ELEVATED", "1");
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn driver_record(root: &Path, folder: &str) {
    write(
        root,
        &format!("{folder}/driver-record.json"),
        r#"{"format":1,"driver":"617.14","gpu":{"name":"NVIDIA GeForce RTX 3060","pci_device_id":null,"uuid":null},"os":"windows","kernel":null,"at":1764849600,"installed_by_us":true,"check":"smoke"}"#,
    );
}

/// Every path below `p`.
fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap().flatten() {
        out.push(e.path());
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

/// Entries beside the machine's folder whose names say something was set aside.
fn set_aside(root: &Path) -> Vec<String> {
    std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".untrusted-") || n.contains(".rejected-"))
        .collect()
}

/// The real binary, a sandbox root: the user's `doctor` and `guard status` (en, zh) see
/// the elevated run's records in `<root>/.cuda-setup`; the elevated `repair` tells the
/// user's driver record with words instead of the driver step.
#[test]
fn the_binary_reads_the_other_runs_records_by_the_rule() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    driver_record(&root, ".cuda-setup");
    let (py, prefix) = venv(d.path(), "2.7.1+cu118");
    let admin = Target::rooted(Os::Linux, &root);
    guard::record::put(&admin, record(&py, &prefix, None)).unwrap();
    admin_only(&root.join(".cuda-setup"));
    admin_only(&root.join(".cuda-setup/guard"));
    let entries = |p: &Path| {
        let mut v: Vec<_> = walk(p);
        v.sort();
        v
    };
    let before = entries(&root.join(".cuda-setup"));

    let mut c = as_user(bin());
    c.args([
        "doctor",
        "--python",
        "/bin/false",
        "--driver",
        "566.36",
        "--root",
    ])
    .arg(&root)
    .args(["--os", "windows"]);
    let t = text(&c.output().unwrap());
    assert!(
        t.contains("Windows Update has likely replaced NVIDIA driver 617.14 with the older 566.36"),
        "{t}"
    );
    for (lang, want) in [
        (
            "en",
            format!(
                "(Recorded by cuda-setup running as administrator, in {}.)",
                root.join(".cuda-setup").display()
            ),
        ),
        (
            "zh",
            format!(
                "（这条记录是以管理员身份运行的 cuda-setup 写的，在 {}。）",
                root.join(".cuda-setup").display()
            ),
        ),
    ] {
        let mut c = as_user(bin());
        c.args(["--lang", lang, "guard", "status", "--python"])
            .arg(&py)
            .arg("--root")
            .arg(&root);
        let o = c.output().unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{t}");
        assert!(t.contains(&want), "{t}");
    }
    // The user's runs wrote nothing into the machine's folder, and their own record
    // went to theirs.
    assert_eq!(entries(&root.join(".cuda-setup")), before);
    assert!(set_aside(&root).is_empty());

    // The reverse: only the user's folder holds the driver record. The elevated repair
    // tells it, with words instead of installing the driver on that file's word.
    let r2 = d.path().join("root2");
    driver_record(&r2, ".cuda-setup-user");
    for (lang, want) in [
        ("en", "install NVIDIA driver 617.14 again yourself"),
        ("zh", "请自己重新安装 NVIDIA 驱动 617.14"),
    ] {
        let mut c = bin();
        c.args(["--lang", lang, "repair", "--root"])
            .arg(&r2)
            .args(["--os", "windows", "--gpu-cc", "8.6", "--driver", "566.36"]);
        let t = text(&c.output().unwrap());
        assert!(
            t.contains("617.14 with the older 566.36") || t.contains("617.14 换成了更旧的 566.36"),
            "{t}"
        );
        assert!(t.contains(want), "{t}");
    }
    let mut c = bin();
    c.args(["repair", "--json", "--root"])
        .arg(&r2)
        .args(["--os", "windows", "--gpu-cc", "8.6", "--driver", "566.36"]);
    let j = crate::support::cli::json(&c.output().unwrap());
    let f = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "driverwatch_replaced_windows")
        .unwrap_or_else(|| panic!("{j:#}"));
    assert!(f["fix"]["steps"].is_null(), "no driver step: {f:#}");
}

/// A machine folder another account can write (or a link in its place) is not read by
/// the user's run — and not set aside or changed either: it is not the user's to touch.
#[test]
fn a_machine_folder_others_can_write_or_a_link_is_ignored_and_left_alone() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    let (py, prefix) = venv(d.path(), "2.7.1+cu118");
    let admin = Target::rooted(Os::Linux, &root);
    guard::record::put(&admin, record(&py, &prefix, None)).unwrap();
    driver_record(&root, ".cuda-setup");
    let machine = root.join(".cuda-setup");
    admin_only(&machine.join("guard"));

    let status = || {
        let mut c = as_user(bin());
        c.args(["guard", "status", "--python"])
            .arg(&py)
            .arg("--root")
            .arg(&root);
        text(&c.output().unwrap())
    };
    let doctor = || {
        let mut c = as_user(bin());
        c.args([
            "doctor",
            "--python",
            "/bin/false",
            "--driver",
            "566.36",
            "--root",
        ])
        .arg(&root)
        .args(["--os", "windows"]);
        text(&c.output().unwrap())
    };
    for mode in [0o777, 0o775] {
        std::fs::set_permissions(&machine, std::fs::Permissions::from_mode(mode)).unwrap();
        let t = status();
        assert!(
            t.starts_with("No PyTorch build has been verified on the GPU for"),
            "{mode:o}: {t}"
        );
        assert!(!doctor().contains("617.14"), "{mode:o}");
        let now = std::fs::metadata(&machine).unwrap().permissions().mode() & 0o777;
        assert_eq!(now, mode, "left as it was");
        assert!(set_aside(&root).is_empty(), "{:?}", set_aside(&root));
        assert!(machine.join("guard/verified-torch.json").is_file());
    }
    // A link where the machine's folder should be.
    admin_only(&machine);
    std::fs::rename(&machine, d.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(d.path().join("elsewhere"), &machine).unwrap();
    let t = status();
    assert!(
        t.starts_with("No PyTorch build has been verified on the GPU for"),
        "{t}"
    );
    assert!(!doctor().contains("617.14"));
    assert!(
        std::fs::symlink_metadata(&machine)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(set_aside(&root).is_empty());
}
