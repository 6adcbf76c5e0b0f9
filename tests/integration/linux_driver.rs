//! `recommend` on a Linux machine whose driver is missing or too old: the distribution's
//! commands and the Secure Boot step, read from a `--root` sandbox (a real os-release and a
//! real efivars file), through the real binary.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn recommend(root: &Path, lang: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args([
            "recommend",
            "--os",
            "linux",
            "--gpu-cc",
            "8.6",
            "--python",
            "3.12",
            "--root",
        ])
        .arg(root)
        .args(["--lang", lang])
        .args(extra)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .unwrap()
}

fn sandbox(os_release: &str, secure_boot: Option<u8>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("etc")).unwrap();
    std::fs::write(d.path().join("etc/os-release"), os_release).unwrap();
    if let Some(on) = secure_boot {
        let vars = d.path().join("sys/firmware/efi/efivars");
        std::fs::create_dir_all(&vars).unwrap();
        std::fs::write(
            vars.join("SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"),
            [6, 0, 0, 0, on],
        )
        .unwrap();
    }
    d
}

const UBUNTU: &str =
    "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n";

#[test]
fn no_driver_on_ubuntu_with_secure_boot_prints_the_apt_command_and_the_key_step() {
    let root = sandbox(UBUNTU, Some(1));
    let out = recommend(root.path(), "en", &["--no-driver"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("Ubuntu 24.04.1 LTS (package nvidia-driver-580)"),
        "{text}"
    );
    assert!(
        text.contains("\n    sudo apt install nvidia-driver-580\n"),
        "{text}"
    );
    assert!(
        text.contains("Secure Boot is on") && text.contains("Enroll MOK"),
        "{text}"
    );

    // The same in Chinese: the commands stay as they are, the words are the catalogue's.
    let out = recommend(root.path(), "zh", &["--no-driver"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("安全启动"), "{text}");
    assert!(
        text.contains("\n    sudo apt install nvidia-driver-580\n"),
        "{text}"
    );
}

#[test]
fn json_carries_the_linux_driver_advice_and_keeps_the_other_fields() {
    let root = sandbox(
        "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\nPRETTY_NAME=\"Rocky Linux 9.4 (Blue Onyx)\"\n",
        Some(0),
    );
    let out = recommend(
        root.path(),
        "en",
        &[
            "--driver",
            "470.57.02",
            "--goal",
            "developer",
            "--cuda",
            "12.4",
            "--json",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["driver"]["action"], "update", "{v}");
    assert!(v["reasons"].is_array() && v["toolkit"].is_object(), "{v}");
    let a = &v["linux_driver"];
    assert_eq!(a["family"], "rhel", "{a}");
    assert_eq!(a["secure_boot"], false);
    assert_eq!(
        a["commands"][1],
        "sudo dnf config-manager --add-repo https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo"
    );
    assert!(
        a["intro"].as_str().unwrap().contains("Rocky Linux 9.4"),
        "{a}"
    );
    let keys: Vec<&str> = a["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["linux_driver_secure_boot_off", "linux_driver_restart"]
    );
}

#[test]
fn a_good_driver_or_windows_gets_no_linux_advice() {
    let root = sandbox(UBUNTU, None);
    let out = recommend(root.path(), "en", &["--driver", "580.65.06", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["driver"]["action"], "none", "{v}");
    assert!(v["linux_driver"].is_null(), "{v}");

    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args([
            "recommend",
            "--os",
            "windows",
            "--gpu-cc",
            "8.6",
            "--no-driver",
            "--json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["linux_driver"].is_null(), "{v}");
}

#[test]
fn an_unknown_distribution_is_told_so_without_commands() {
    let root = sandbox("ID=arch\nPRETTY_NAME=\"Arch Linux\"\n", None);
    let out = recommend(root.path(), "en", &["--no-driver"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("We do not know the driver packages of Arch Linux"),
        "{text}"
    );
    assert!(!text.contains("sudo "), "{text}");
}

/// The hidden diagnostic the Wine check uses: off Windows a sandbox reads a stand-in's
/// trailer; without `--sandbox` nothing can be checked.
#[test]
fn debug_signature_reports_what_the_driver_step_sees() {
    let d = tempfile::tempdir().unwrap();
    let signed = d.path().join("signed.exe");
    std::fs::write(
        &signed,
        "MZ stand-in\n# stand-in signature: NVIDIA Corporation\n",
    )
    .unwrap();
    let other = d.path().join("other.exe");
    std::fs::write(&other, "MZ stand-in\n# stand-in signature: Someone Else\n").unwrap();
    let sig = |file: &Path, sandbox: bool| -> Value {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
        c.args(["debug", "signature"]).arg(file);
        if sandbox {
            c.arg("--sandbox");
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = sig(&signed, true);
    assert_eq!(
        (
            v["state"].as_str(),
            v["signer"].as_str(),
            v["nvidia"].as_bool()
        ),
        (Some("trusted"), Some("NVIDIA Corporation"), Some(true)),
        "{v}"
    );
    let v = sig(&other, true);
    assert_eq!(
        (v["state"].as_str(), v["nvidia"].as_bool()),
        (Some("trusted"), Some(false)),
        "{v}"
    );
    if cfg!(not(windows)) {
        assert_eq!(sig(&signed, false)["state"], "unavailable");
    }
}
