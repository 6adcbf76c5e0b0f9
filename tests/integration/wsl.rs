//! WSL2 (#32, dossier §13.2): a fake WSL2 root under `--root`, through the real binary.
//! The driver is the Windows host's: its numbers are Windows ones, the advice is to update
//! it on Windows, and nothing offers, plans or runs a Linux driver; repair knows WSL's
//! classic breakages.

#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output};

use crate::support::cli::{json, text};
use crate::support::machine::wsl2;

fn cuda_setup(root: &Path, args: &[&str], lang: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .args(["--os", "linux", "--lang", lang, "--root"])
        .arg(root)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .unwrap()
}

/// Driver 512.95 (Windows' number, read from the Windows driver's `nvidia-smi` in
/// `/usr/lib/wsl/lib`), developer goal, CUDA 12.4: update to 12.4.1's *Windows* minimum
/// (551.78; Linux's is 550.54.15) on Windows, with the Windows driver's download; the
/// toolkit from `wsl-ubuntu`; no Linux driver anywhere.
#[test]
fn recommend_in_wsl2_says_update_the_windows_driver_and_never_a_linux_one() {
    let root = tempfile::tempdir().unwrap();
    wsl2(root.path(), Some("512.95"));
    let args = [
        "recommend",
        "--goal",
        "developer",
        "--cuda",
        "12.4",
        "--python",
        "3.12",
    ];
    let out = cuda_setup(root.path(), &args, "en");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("512.95 -> update to >= 551.78"), "{t}");
    assert!(
        t.contains("This is Linux inside WSL2") && t.contains("Update the driver on Windows"),
        "{t}"
    );
    assert!(
        t.contains("(install it on Windows, not inside WSL2):\n    https://")
            && t.contains("-desktop-win10-win11-64bit-international-dch-whql.exe"),
        "{t}"
    );
    assert!(
        t.contains("    sudo apt-get -y install cuda-toolkit-12-4\n"),
        "{t}"
    );
    assert!(t.contains("/repos/wsl-ubuntu/x86_64/cuda-keyring"), "{t}");
    for never in [
        "apt install nvidia-driver",
        "nvidia-driver-5",
        "cuda-drivers\n",
        "The first step installs the NVIDIA driver",
        "distribution's",
    ] {
        assert!(!t.contains(never), "{never:?} in:\n{t}");
    }

    let out = cuda_setup(root.path(), &[&args[..], &["--json"]].concat(), "en");
    let v = json(&out);
    assert!(v["linux_driver"].is_null(), "{}", v["linux_driver"]);
    assert!(
        v["driver"]["install"].is_null(),
        "nothing the plan could run"
    );
    assert_eq!(v["driver"]["current"], "512.95");
    assert_eq!(v["driver"]["minimum"], "551.78");
    assert!(v["toolkit"]["carried_driver"].is_null());
    let w = &v["wsl"];
    assert_eq!(w["toolkit"]["package"], "cuda-toolkit-12-4");
    let d = w["windows_driver"]["version"].as_str().unwrap();
    assert!(d.parse::<f64>().unwrap() >= 551.78, "{d}");

    // In Chinese: the same commands, the catalogue's words.
    let t = text(&cuda_setup(root.path(), &args, "zh"));
    assert!(t.contains("请在 Windows 上更新驱动"), "{t}");
    assert!(
        t.contains("    sudo apt-get -y install cuda-toolkit-12-4\n"),
        "{t}"
    );
}

/// No driver at all inside WSL2: "install it on Windows", never the distribution's
/// `apt install nvidia-driver-…` that the same Ubuntu root gets outside WSL2.
#[test]
fn no_driver_in_wsl2_is_installed_on_windows_not_with_apt() {
    let root = tempfile::tempdir().unwrap();
    wsl2(root.path(), None);
    let args = [
        "recommend",
        "--gpu-cc",
        "8.6",
        "--python",
        "3.12",
        "--no-driver",
    ];
    let t = text(&cuda_setup(root.path(), &args, "en"));
    assert!(
        t.contains("Install the NVIDIA driver on Windows (not inside WSL2)"),
        "{t}"
    );
    assert!(!t.contains("apt install nvidia-driver"), "{t}");
    // The same root without its WSL2 signs is a plain Ubuntu PC: the apt command.
    for rel in ["proc", "dev", "usr/lib/wsl"] {
        std::fs::remove_dir_all(root.path().join(rel)).unwrap();
    }
    let t = text(&cuda_setup(root.path(), &args, "en"));
    assert!(t.contains("sudo apt install nvidia-driver-"), "{t}");
    assert!(!t.contains("WSL2"), "{t}");
}

/// The plan has no driver step and says the driver is updated on Windows; the toolkit
/// step is the runfile toolkit-only; `--with-driver` is refused with the reason.
#[test]
fn install_in_wsl2_plans_no_driver_and_refuses_with_driver() {
    let root = tempfile::tempdir().unwrap();
    wsl2(root.path(), Some("512.95"));
    let args = [
        "install",
        "--dry-run",
        "--goal",
        "developer",
        "--cuda",
        "12.4",
        "--gpu-cc",
        "8.6",
        "--driver",
        "512.95",
        "--no-cudnn",
    ];
    let out = cuda_setup(root.path(), &[&args[..], &["--json"]].concat(), "en");
    let v = json(&out);
    let kinds: Vec<&str> = v["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{v:#}"))
        .iter()
        .map(|s| s["step"].as_str().unwrap_or("?"))
        .collect();
    assert!(
        kinds.iter().all(|k| !k.contains("driver")),
        "a driver step inside WSL2: {kinds:?}"
    );
    assert!(kinds.contains(&"install_toolkit"), "{kinds:?}");
    assert!(v["linux_driver"].is_null(), "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("plan_note_driver_update_on_windows"),
        "{notes}"
    );

    let t = text(&cuda_setup(root.path(), &args, "en"));
    assert!(
        t.contains("must be updated on Windows to 551.78 or newer"),
        "{t}"
    );

    let out = cuda_setup(root.path(), &[&args[..], &["--with-driver"]].concat(), "en");
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("hint: inside WSL2 the driver is the Windows one")
            && t.contains("without --with-driver"),
        "{t}"
    );
}

/// Repair: ldconfig's "not a symbolic link" explained as harmless (nothing to fix), a
/// missing `ld.wsl.conf` with the exact command, a Linux driver inside WSL2 with the
/// exact removal command — never run.
#[test]
fn repair_knows_wsl2s_classic_breakages() {
    let root = tempfile::tempdir().unwrap();
    wsl2(root.path(), None);
    let repair = |lang| cuda_setup(root.path(), &["repair", "--json"], lang);
    let findings = |out: &Output| -> Vec<(String, String, String)> {
        json(out)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["id"].as_str().unwrap().to_string(),
                    f["severity"].as_str().unwrap().to_string(),
                    f["fix"].to_string(),
                )
            })
            .collect()
    };
    // A healthy WSL2: only the explanation of ldconfig's warning, an info.
    let out = repair("en");
    let f = findings(&out);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, "repair_wsl_stub_not_a_link");
    assert_eq!(f[0].1, "info");
    assert!(f[0].2.contains("\"manual\""), "{f:?}");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // The loader entry gone, and a Linux driver installed by hand.
    std::fs::remove_file(root.path().join("etc/ld.so.conf.d/ld.wsl.conf")).unwrap();
    let lib = root.path().join("usr/lib/x86_64-linux-gnu");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("libcuda.so.1"), b"\x7fELF").unwrap();
    let before = std::fs::read_dir(root.path().join("etc/ld.so.conf.d"))
        .unwrap()
        .count();
    let out = repair("en");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let f = findings(&out);
    let ids: Vec<&str> = f.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "repair_wsl_stub_not_a_link",
            "repair_wsl_ld_conf_missing",
            "repair_wsl_linux_driver"
        ],
        "{f:?}"
    );
    let text_of = |id: &str| {
        json(&out)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == id)
            .map(|x| x.to_string())
            .unwrap()
    };
    assert!(
        text_of("repair_wsl_ld_conf_missing").contains(
            "echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig"
        ),
        "{}",
        text_of("repair_wsl_ld_conf_missing")
    );
    let driver = text_of("repair_wsl_linux_driver");
    assert!(
        driver.contains("sudo apt remove --purge 'libnvidia-compute-*'")
            && driver.contains("usr/lib/x86_64-linux-gnu/libcuda.so.1"),
        "{driver}"
    );
    // `--fix` runs nothing for them: the commands are the user's.
    let out = cuda_setup(root.path(), &["repair", "--fix", "--json"], "en");
    assert!(
        json(&out)["runs"].as_array().unwrap().is_empty(),
        "{}",
        text(&out)
    );
    assert!(lib.join("libcuda.so.1").is_file());
    assert_eq!(
        std::fs::read_dir(root.path().join("etc/ld.so.conf.d"))
            .unwrap()
            .count(),
        before
    );
    // A kernel module alone is found too.
    std::fs::remove_file(lib.join("libcuda.so.1")).unwrap();
    let ko = root
        .path()
        .join("lib/modules/5.15.167.4-microsoft-standard-WSL2/updates/dkms");
    std::fs::create_dir_all(&ko).unwrap();
    std::fs::write(ko.join("nvidia.ko"), b"").unwrap();
    let ids: Vec<String> = findings(&repair("zh")).into_iter().map(|x| x.0).collect();
    assert!(
        ids.contains(&"repair_wsl_linux_driver".to_string()),
        "{ids:?}"
    );
}

/// `--goal tensorflow` is not a goal of ours (exit 2), and says where TensorFlow gets a
/// GPU on Windows: WSL2 (dossier §9).
#[test]
fn tensorflow_users_are_told_wsl2_is_its_way_to_a_gpu() {
    let out = crate::support::cli::run(&["recommend", "--goal", "tensorflow"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'tensorflow'")
            && err.contains("hint: ")
            && err.contains("TensorFlow 2.11 and newer use the GPU only inside WSL2"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
