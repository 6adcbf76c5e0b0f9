//! Watch the driver (#33): the driver that passed the GPU check is recorded; a later run
//! that finds an older one (Windows Update), none, or a Linux module not rebuilt for a new
//! kernel says so — `repair` (with the fix planned through the signed driver step),
//! `doctor`, the wizard's first page — in English and Chinese; Windows' driver policy is
//! switched on and back exactly. Sandbox roots, the real binary, stand-in Pythons.

use std::path::Path;
use std::process::Command;

use crate::support::cli::json;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES");
    c
}

fn text(o: &std::process::Output) -> String {
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

/// A record as a passing check leaves it (2025-12-04 at noon UTC).
fn record(root: &Path, os: &str, driver: &str, kernel: Option<&str>) {
    let kernel = kernel.map_or("null".to_string(), |k| format!("\"{k}\""));
    write(
        root,
        ".cuda-setup/driver-record.json",
        &format!(
            r#"{{"format":1,"driver":"{driver}","gpu":{{"name":"NVIDIA GeForce RTX 3060","pci_device_id":null,"uuid":null}},"os":"{os}","kernel":{kernel},"at":1764849600,"installed_by_us":true,"check":"doctor"}}"#
        ),
    );
}

fn repair(
    root: &Path,
    os: &str,
    driver: Option<&str>,
    lang: &str,
    json_out: bool,
) -> std::process::Output {
    let mut c = bin();
    c.args(["--lang", lang, "repair", "--root"])
        .arg(root)
        .args(["--os", os, "--gpu-cc", "8.6"]);
    if let Some(d) = driver {
        c.args(["--driver", d]);
    }
    if json_out {
        c.arg("--json");
    }
    c.output().unwrap()
}

/// Windows Update put 566.36 over the 617.14 that passed: repair says so in both
/// languages, plans the driver step for 617.14 (the GeForce package's signed installer),
/// and offers the policy; the same or a newer driver says nothing.
#[test]
fn an_older_driver_than_the_record_is_a_repair_finding_with_the_driver_step() {
    let d = tempfile::tempdir().unwrap();
    record(d.path(), "windows", "617.14", None);
    let en = repair(d.path(), "windows", Some("566.36"), "en", false);
    assert_eq!(en.status.code(), Some(3), "{}", text(&en));
    let t = text(&en);
    assert!(
        t.contains("[warning] Windows Update has likely replaced NVIDIA driver 617.14 with the older 566.36 (found "),
        "{t}"
    );
    assert!(t.contains("; the record is from 2025-12-0"), "{t}");
    assert!(
        t.contains("fix: Download the NVIDIA driver, Install the NVIDIA driver"),
        "{t}"
    );
    assert!(
        t.contains("\"Do not include drivers with Windows Updates\" (cuda-setup driver-policy on)"),
        "{t}"
    );
    let zh = repair(d.path(), "windows", Some("566.36"), "zh", false);
    let t = text(&zh);
    assert!(
        t.contains("Windows 更新很可能把 NVIDIA 驱动 617.14 换成了更旧的 566.36（"),
        "{t}"
    );
    assert!(t.contains("Windows 更新不包括驱动程序"), "{t}");

    let j = json(&repair(d.path(), "windows", Some("566.36"), "en", true));
    let f = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "driverwatch_replaced_windows")
        .unwrap_or_else(|| panic!("{j:#}"));
    assert_eq!(f["layer"], "driver");
    assert_eq!(f["severity"], "warning");
    let steps = f["fix"]["steps"].as_array().unwrap();
    assert_eq!(steps[0]["step"], "download");
    assert_eq!(steps[0]["what"], "driver_installer");
    assert!(
        steps[0]["url"]
            .as_str()
            .unwrap()
            .ends_with("/617.14/617.14-desktop-win10-win11-64bit-international-dch-whql.exe"),
        "{f:#}"
    );
    assert_eq!(steps[1]["step"], "install_driver");
    assert_eq!(steps[1]["version"], "617.14");

    for same_or_newer in ["617.14", "620.01"] {
        let j = json(&repair(
            d.path(),
            "windows",
            Some(same_or_newer),
            "en",
            true,
        ));
        assert!(
            !j["findings"].to_string().contains("driverwatch_"),
            "{same_or_newer}: {j:#}"
        );
    }
}

/// No driver at all while the record says one passed (Windows): the finding names the
/// driver and plans it back, instead of the generic "no driver".
#[test]
fn no_driver_after_a_pass_is_a_finding_too() {
    let d = tempfile::tempdir().unwrap();
    record(d.path(), "windows", "617.14", None);
    let j = json(&repair(d.path(), "windows", None, "en", true));
    let ids: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"driverwatch_gone"), "{j:#}");
    assert!(!ids.contains(&"repair_driver_missing"), "{ids:?}");
}

/// Linux, DKMS: the record ran on 6.8.0-45, the machine now boots 6.8.0-50, the module is
/// not loaded, the DKMS tree is there and no module was built for the new kernel: the
/// finding names the kernel and Ubuntu's commands, with the Secure Boot step when on.
#[test]
fn a_kernel_without_the_rebuilt_module_is_a_finding_with_the_command() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    record(r, "linux", "580.95.05", Some("6.8.0-45-generic"));
    write(r, "proc/sys/kernel/osrelease", "6.8.0-50-generic\n");
    write(
        r,
        "etc/os-release",
        "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n",
    );
    write(r, "var/lib/dkms/nvidia/580.95.05/source/dkms.conf", "");
    write(
        r,
        "lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst",
        "",
    );
    let out = repair(r, "linux", None, "en", false);
    let t = text(&out);
    assert!(
        t.contains("[error] The NVIDIA driver was not rebuilt for the new kernel 6.8.0-50-generic: driver 580.95.05 worked on kernel 6.8.0-45-generic"),
        "{t}"
    );
    assert!(
        t.contains("what to do: run sudo apt install linux-headers-6.8.0-50-generic && sudo dkms autoinstall -k 6.8.0-50-generic, then restart."),
        "{t}"
    );
    assert!(!t.contains("no NVIDIA driver works"), "said once: {t}");
    let t = text(&repair(r, "linux", None, "zh", false));
    assert!(
        t.contains("NVIDIA 驱动没有为新内核 6.8.0-50-generic 重新编译"),
        "{t}"
    );
    assert!(
        t.contains("运行 sudo apt install linux-headers-6.8.0-50-generic"),
        "{t}"
    );
    // Secure Boot on (the EFI variable's value byte 1): the key step is said.
    write(
        r,
        "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        "\x06\0\0\0\x01",
    );
    let t = text(&repair(r, "linux", None, "en", false));
    assert!(t.contains("Secure Boot is on"), "{t}");
    // The module built for the new kernel: nothing to say.
    write(
        r,
        "lib/modules/6.8.0-50-generic/updates/dkms/nvidia.ko.zst",
        "",
    );
    let t = text(&repair(r, "linux", None, "en", false));
    assert!(!t.contains("not rebuilt"), "{t}");
}

/// The doctor says the same, judged against the record in its state folder.
#[test]
fn doctor_says_the_driver_was_replaced() {
    let d = tempfile::tempdir().unwrap();
    record(d.path(), "windows", "617.14", None);
    for (lang, want) in [
        (
            "en",
            "Windows Update has likely replaced NVIDIA driver 617.14 with the older 566.36",
        ),
        (
            "zh",
            "Windows 更新很可能把 NVIDIA 驱动 617.14 换成了更旧的 566.36",
        ),
    ] {
        let out = bin()
            .args([
                "--lang",
                lang,
                "doctor",
                "--python",
                "/bin/false",
                "--driver",
                "566.36",
                "--root",
            ])
            .arg(d.path())
            .args(["--os", "windows"])
            .output()
            .unwrap();
        let t = text(&out);
        assert!(t.contains(want), "{t}");
        assert!(t.contains("cuda-setup repair --fix"), "{t}");
    }
    let out = bin()
        .args([
            "doctor",
            "--json",
            "--python",
            "/bin/false",
            "--driver",
            "566.36",
            "--root",
        ])
        .arg(d.path())
        .args(["--os", "windows"])
        .output()
        .unwrap();
    let j = json(&out);
    assert_eq!(j["driver_watch"]["id"], "driverwatch_replaced_windows");
    assert_eq!(j["driver_watch"]["drift"]["recorded"], "617.14");
    // A what-if driver is never recorded.
    let rec: serde_json::Value = serde_json::from_slice(
        &std::fs::read(d.path().join(".cuda-setup/driver-record.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rec["driver"], "617.14");
}

/// A doctor whose GPU check passed (a stand-in Python printing the probe of a working
/// CUDA torch) records the driver detection saw; the next audit with an older driver
/// finds the replacement.
#[cfg(unix)]
#[test]
fn a_passing_doctor_records_the_driver_and_the_next_run_judges_against_it() {
    use cuda_setup_core::compat::{Os, Tables};
    use cuda_setup_core::driverwatch;
    use cuda_setup_core::platform::Host;
    use cuda_setup_core::target::Target;
    use cuda_setup_core::verify::doctor::{self, DoctorOptions, GpuFacts, GpuSummary};
    use std::os::unix::fs::PermissionsExt;
    const PROBE: &str = r#"{"python": "3.11.9", "executable": "/opt/py/bin/python3", "torch": {"version": "2.7.1+cu118", "cuda": "11.8", "cuda_available": true, "cuda_error": null, "cudnn": 90100, "cudnn_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_count": 1, "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "driver_version": 11080}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 80.0, "gpu_ms": 2.0, "speedup": 40.0, "max_error": 0.0001, "tolerance": 0.01, "ok": true, "error": null}}"#;
    let d = tempfile::tempdir().unwrap();
    let py = d.path().join("python3");
    std::fs::write(
        &py,
        format!("#!/bin/sh\necho 'CUDA_SETUP_DOCTOR {PROBE}'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = d.path().join("root");
    let target = Target::rooted(Os::Windows, &root);
    let tables = Tables::embedded().unwrap();
    let gpu = GpuFacts {
        driver: Some("617.14".parse().unwrap()),
        driver_cuda: Some("13.0".parse().unwrap()),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: Some("8.6".parse().unwrap()),
        }],
    };
    let opts = DoctorOptions {
        python: Some(py),
        ..Default::default()
    };
    let report = doctor::examine(
        &Host::sandbox(Os::Windows, &root, Default::default()),
        &tables,
        &opts,
        &gpu,
    );
    assert_eq!(
        report.status,
        cuda_setup_core::verify::Status::Passed,
        "{:#?}",
        report.findings
    );
    assert!(driverwatch::read(&target).is_none());
    assert_eq!(driverwatch::after_doctor(&target, &report, true), None);
    let r = driverwatch::read(&target).unwrap();
    assert_eq!(r.driver.to_string(), "617.14");
    assert_eq!(r.gpu.name.as_deref(), Some("NVIDIA GeForce RTX 3060"));
    assert!(r.installed_by_us);
    // Windows Update, later.
    let j = json(&repair(&root, "windows", Some("566.36"), "en", true));
    assert!(
        j["findings"]
            .to_string()
            .contains("driverwatch_replaced_windows"),
        "{j:#}"
    );
}

/// `driver-policy` in a sandbox: on records the value before and sets 1; off puts back
/// exactly that (here: none); a link planted at the record is refused, not followed.
#[test]
fn driver_policy_on_off_status_in_a_sandbox() {
    let d = tempfile::tempdir().unwrap();
    let run = |action: &str, lang: &str| {
        bin()
            .args(["--lang", lang, "driver-policy", action, "--root"])
            .arg(d.path())
            .args(["--os", "windows"])
            .output()
            .unwrap()
    };
    let s = run("status", "en");
    assert_eq!(s.status.code(), Some(0));
    assert!(
        text(&s).contains("Off: Windows Update may replace drivers (the policy is not set)."),
        "{}",
        text(&s)
    );
    let on = run("on", "en");
    assert_eq!(on.status.code(), Some(0), "{}", text(&on));
    assert!(
        text(&on).contains(
            "Turned on: Windows Update will no longer replace drivers. The value before was -"
        ),
        "{}",
        text(&on)
    );
    let reg = d.path().join(".cuda-setup/windows-policy.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&reg).unwrap()).unwrap();
    assert_eq!(
        v[r"HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate"]["ExcludeWUDriversInQualityUpdate"],
        1
    );
    let zh = run("status", "zh");
    assert!(
        text(&zh).contains("已打开：Windows 更新不会替换驱动（由 cuda-setup 设置"),
        "{}",
        text(&zh)
    );
    let off = run("off", "en");
    assert!(
        text(&off).contains("Turned off: the policy is removed, as it was before."),
        "{}",
        text(&off)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&reg).unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({}), "absent again");
    // Linux has no such policy: a usage error.
    let l = bin()
        .args(["driver-policy", "status", "--root"])
        .arg(d.path())
        .args(["--os", "linux"])
        .output()
        .unwrap();
    assert_eq!(l.status.code(), Some(2), "{}", text(&l));
    #[cfg(unix)]
    {
        let elsewhere = d.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "{}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, d.path().join(".cuda-setup/driver-policy.json"))
            .unwrap();
        let on = run("on", "en");
        assert_eq!(on.status.code(), Some(1), "{}", text(&on));
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "{}");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&reg).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({}), "nothing switched");
    }
}

/// The wizard's first page says it, in both languages: a Windows root whose record says
/// 617.14 passed, and 566.36 given as the driver (the RTX 3060 machine).
#[cfg(unix)]
#[test]
fn the_wizard_first_page_shows_the_replaced_driver() {
    use crate::gui::{harness, has, settle, wait};
    use cuda_setup::ui::fonts::FontSource;
    use cuda_setup::ui::{App, Options, Page};
    use cuda_setup_core::compat::{Os, Tables};
    use cuda_setup_core::i18n::{Lang, t};
    use egui_kittest::kittest::{By, NodeT, Queryable};
    for (lang, want) in [
        (
            Lang::En,
            "Windows Update has likely replaced NVIDIA driver 617.14 with the older 566.36",
        ),
        (
            Lang::Zh,
            "Windows 更新很可能把 NVIDIA 驱动 617.14 换成了更旧的 566.36",
        ),
    ] {
        let d = tempfile::tempdir().unwrap();
        record(d.path(), "windows", "617.14", None);
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, d.path());
        o.lang = Some(lang);
        o.overrides = crate::support::machine::rtx_3060(Some("566.36"), "3.12");
        o.fonts = FontSource::EmbeddedOnly;
        o.file_dialogs = false;
        let mut h = harness(App::new(o));
        h.step();
        assert_eq!(h.state().page, Page::Welcome);
        wait(&mut h, "detection", |a| a.session.driver_drift().is_some());
        settle(&mut h);
        let found: Vec<String> = h
            .query_all(By::new())
            .filter_map(|n| {
                let n = n.accesskit_node();
                n.label().or_else(|| n.value())
            })
            .collect();
        assert!(
            found.iter().any(|s| s.starts_with(want)),
            "{lang:?}: {found:?}"
        );
        assert!(has(&h, &t(lang, "ui_driverwatch_title")), "{lang:?}");
        assert!(has(&h, &t(lang, "ui_driverwatch_repair")), "{lang:?}");
    }
}

/// Repair mode on that machine: the finding, the policy explained, ticked on (the
/// sandbox's registry record holds 1) and unticked back to nothing.
#[cfg(unix)]
#[test]
fn the_wizard_repair_page_switches_the_policy_and_back() {
    use crate::gui::{click, harness, settle, wait};
    use cuda_setup::ui::fonts::FontSource;
    use cuda_setup::ui::{App, Mode, Options, Page};
    use cuda_setup_core::compat::{Os, Tables};
    use cuda_setup_core::i18n::{Lang, t};
    let lang = Lang::En;
    let d = tempfile::tempdir().unwrap();
    record(d.path(), "windows", "617.14", None);
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, d.path());
    o.lang = Some(lang);
    o.overrides = crate::support::machine::rtx_3060(Some("566.36"), "3.12");
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    let mut h = harness(App::new(o));
    h.step();
    // The mode switch takes effect once detection has answered (on a loaded machine,
    // later than the first frames).
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some() && !a.session.system().running()
    });
    settle(&mut h);
    click(&mut h, &t(lang, "ui_mode_repair"));
    assert_eq!(h.state().session.mode, Mode::Repair);
    click(&mut h, &t(lang, "ui_next"));
    assert_eq!(h.state().page, Page::Repair);
    wait(&mut h, "audit", |a| a.session.repair().findings().is_some());
    settle(&mut h);
    assert!(crate::gui::has(&h, &t(lang, "ui_driver_policy_explain")));
    let reg = d.path().join(".cuda-setup/windows-policy.json");
    let value = || -> Option<u64> {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&reg).ok()?).ok()?;
        v[r"HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate"]["ExcludeWUDriversInQualityUpdate"].as_u64()
    };
    assert_eq!(value(), None, "off by default");
    click(&mut h, &t(lang, "ui_driver_policy_checkbox"));
    wait(
        &mut h,
        "policy on",
        |a| matches!(a.session.driver_policy().done(), Some(Ok(s)) if s.on),
    );
    assert_eq!(value(), Some(1));
    settle(&mut h);
    click(&mut h, &t(lang, "ui_driver_policy_checkbox"));
    wait(
        &mut h,
        "policy off",
        |a| matches!(a.session.driver_policy().done(), Some(Ok(s)) if !s.on),
    );
    assert_eq!(value(), None, "put back: absent");
}
