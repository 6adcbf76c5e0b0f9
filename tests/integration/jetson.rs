//! Jetson boards (#32, dossier §13.3), through the real binary: a fake Jetson root (Jetson
//! Linux's release file, the device tree's board name), the name NVML prints on JetPack 6
//! ("Orin (nvgpu)"), and the compute capabilities only Jetson modules have. JetPack
//! provides the driver, CUDA and cuDNN: no desktop driver, installer or pytorch.org wheel.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn cuda_setup(args: &[&str], root: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args);
    if let Some(r) = root {
        c.arg("--root").arg(r);
    }
    c.env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A Jetson AGX Orin on JetPack 6.1's Jetson Linux (36.4.0), as its files say.
fn orin_root() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("etc")).unwrap();
    std::fs::write(
        d.path().join("etc/nv_tegra_release"),
        "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, DATE: Fri Sep 13 04:36:44 UTC 2024\n# KERNEL_VARIANT: oot\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.path().join("proc/device-tree")).unwrap();
    std::fs::write(
        d.path().join("proc/device-tree/model"),
        b"NVIDIA Jetson AGX Orin Developer Kit\0",
    )
    .unwrap();
    d
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

fn keys(v: &Value, field: &str) -> Vec<String> {
    v[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap().to_string())
        .collect()
}

/// JetPack's answer: nothing picked, no driver step, no blocker, NVIDIA's Jetson wheels
/// named, and nothing of a PC's anywhere in it.
fn assert_jetpack_answer(v: &Value, what: &str) {
    let all = v.to_string();
    assert!(v["jetson"].is_object(), "{what}: no jetson answer: {all}");
    for pick in ["torch", "toolkit", "cudnn"] {
        assert!(
            v[pick].is_null(),
            "{what}: a desktop {pick} was picked: {all}"
        );
    }
    assert_eq!(v["driver"]["action"], "none", "{what}: {all}");
    assert!(v["driver"]["install"].is_null(), "{what}: {all}");
    assert!(v["driver"]["last_branch"].is_null(), "{what}: {all}");
    assert!(v["linux_driver"].is_null(), "{what}: {all}");
    assert!(keys(v, "blockers").is_empty(), "{what}: {all}");
    assert!(
        keys(v, "reasons").contains(&"jetson_torch".to_string()),
        "{what}"
    );
    assert_eq!(
        v["jetson"]["torch_page"],
        "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"
    );
    for pc in [
        "download.pytorch.org",
        "nvidia-driver-",
        ".run",
        "R580",
        "driver_last_branch",
    ] {
        assert!(
            !all.contains(pc),
            "{what}: \"{pc}\" offered on a Jetson: {all}"
        );
    }
}

#[test]
fn a_jetson_root_gets_jetpacks_answer_with_its_release() {
    let root = orin_root();
    for goal in ["pytorch", "developer"] {
        let out = cuda_setup(
            &["recommend", "--os", "linux", "--goal", goal, "--json"],
            Some(root.path()),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let v = json(&out);
        assert_jetpack_answer(&v, goal);
        let j = &v["jetson"];
        assert_eq!(j["model"], "NVIDIA Jetson AGX Orin Developer Kit");
        assert_eq!(j["l4t"], "36.4.0");
        assert_eq!(j["jetpack"], "6.1");
        // The 36.x pairings are not read first-hand from NVIDIA: said so.
        assert_eq!(j["jetpack_confirmed"], false);
        assert!(keys(&v, "reasons").contains(&"jetson_release_unconfirmed".to_string()));
    }

    // The text a person reads: the headline, the release, where PyTorch comes from.
    let out = cuda_setup(
        &["recommend", "--os", "linux", "--lang", "en"],
        Some(root.path()),
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("This is a Jetson board (NVIDIA Jetson AGX Orin Developer Kit). JetPack provides its driver, CUDA and cuDNN"),
        "{t}"
    );
    assert!(
        t.contains("Jetson Linux 36.4.0") && t.contains("JetPack 6.1"),
        "{t}"
    );
    assert!(t.contains("PyTorch for Jetson"), "{t}");
    assert!(!t.contains("Driver:") && !t.contains("pip install"), "{t}");
    let out = cuda_setup(
        &["recommend", "--os", "linux", "--lang", "zh"],
        Some(root.path()),
    );
    let t = text(&out);
    assert!(
        t.contains("都由 JetPack 提供") && t.contains("JetPack 6.1"),
        "{t}"
    );
}

#[test]
fn a_confirmed_release_and_an_unknown_one_are_told_apart() {
    let root = orin_root();
    // JetPack 5.1.2's Jetson Linux (NVIDIA's PyTorch for Jetson page pairs them).
    std::fs::write(
        root.path().join("etc/nv_tegra_release"),
        "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64\n",
    )
    .unwrap();
    let v = json(&cuda_setup(
        &["recommend", "--os", "linux", "--json"],
        Some(root.path()),
    ));
    assert_eq!(v["jetson"]["jetpack"], "5.1.2");
    assert_eq!(v["jetson"]["jetpack_confirmed"], true);
    assert!(keys(&v, "reasons").contains(&"jetson_release".to_string()));
    // A release the tables do not know: the L4T alone, never a guessed JetPack.
    std::fs::write(
        root.path().join("etc/nv_tegra_release"),
        "# R99 (release), REVISION: 1.0\n",
    )
    .unwrap();
    let v = json(&cuda_setup(
        &["recommend", "--os", "linux", "--json"],
        Some(root.path()),
    ));
    assert_eq!(v["jetson"]["l4t"], "99.1.0");
    assert!(v["jetson"]["jetpack"].is_null());
    assert!(keys(&v, "reasons").contains(&"jetson_release_l4t_only".to_string()));
    assert_jetpack_answer(&v, "unknown release");
}

#[test]
fn the_name_nvml_prints_on_jetpack_6_is_a_jetson_orin() {
    // nvidia-smi on JetPack 6: "Orin (nvgpu)", driver 540.4.0, CUDA 12.6 (dossier §13.3).
    let out = cuda_setup(
        &[
            "recommend",
            "--os",
            "linux",
            "--gpu",
            "Orin (nvgpu)",
            "--driver",
            "540.4.0",
            "--driver-cuda",
            "12.6",
            "--python",
            "3.10",
            "--json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json(&out);
    assert_eq!(v["gpus"][0]["compute_capability"], "8.7");
    assert_eq!(v["gpus"][0]["name"], "Orin (nvgpu)");
    assert_jetpack_answer(&v, "Orin (nvgpu)");
    assert!(v["jetson"]["l4t"].is_null() && v["jetson"]["jetpack"].is_null());
    assert!(keys(&v, "reasons").contains(&"jetson_release_unknown".to_string()));
}

#[test]
fn compute_capability_8_7_alone_means_jetson_orin_and_7_2_xavier() {
    for (flags, board) in [
        (vec!["--gpu-cc", "8.7", "--no-driver"], "Jetson AGX Orin"),
        (
            vec!["--gpu-cc", "8.7", "--driver", "540.4.0"],
            "Jetson AGX Orin",
        ),
        (vec!["--gpu-cc", "7.2", "--no-driver"], "Jetson AGX Xavier"),
        (
            vec!["--gpu", "Jetson Xavier NX", "--driver", "520.0"],
            "Jetson Xavier NX",
        ),
    ] {
        let mut args = vec!["recommend", "--os", "linux", "--python", "3.8", "--json"];
        args.extend(&flags);
        let out = cuda_setup(&args, None);
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", text(&out));
        let v = json(&out);
        assert_jetpack_answer(&v, &format!("{flags:?}"));
        assert!(
            v["jetson"]["headline"]["params"]["board"]
                .as_str()
                .unwrap()
                .contains(board),
            "{flags:?}: {v}"
        );
    }
    // A desktop Ampere (8.6) is still a PC.
    let v = json(&cuda_setup(
        &[
            "recommend",
            "--os",
            "linux",
            "--gpu-cc",
            "8.6",
            "--no-driver",
            "--python",
            "3.12",
            "--json",
        ],
        None,
    ));
    assert!(v["jetson"].is_null() && v["torch"].is_object(), "{v}");
}

#[test]
fn install_and_bundle_refuse_on_a_jetson() {
    let root = orin_root();
    // The board's files alone, and a Jetson GPU alone: the same refusal, in plain words.
    for flags in [vec![], vec!["--gpu-cc", "8.7"]] {
        let mut args = vec!["install", "--os", "linux", "--dry-run", "--lang", "en"];
        args.extend(&flags);
        let out = cuda_setup(&args, Some(root.path()));
        let t = text(&out);
        assert_eq!(
            out.status.code(),
            Some(1633 % 256),
            "MSI's ERROR_INSTALL_PLATFORM_UNSUPPORTED, as a Unix shell sees it: {t}"
        );
        assert!(
            t.contains("error: Nothing to install: this is a Jetson board"),
            "{t}"
        );
        assert!(
            t.contains("hint: nothing needs installing on a Jetson board"),
            "{t}"
        );
        assert!(!t.contains("panicked"), "{t}");
    }
    let out_dir = tempfile::tempdir().unwrap();
    let out = cuda_setup(
        &[
            "bundle",
            "--os",
            "linux",
            "--gpu-cc",
            "8.7",
            "--out",
            out_dir.path().to_str().unwrap(),
            "--lang",
            "en",
        ],
        None,
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(
        t.contains("This is a Jetson board") && !t.contains("panicked"),
        "{t}"
    );
}

/// The wizard shows the same answer: on Choose, JetPack's headline and the Jetson wheels,
/// no picks, and no way on to an install (the core's `installable`).
#[cfg(unix)]
#[test]
fn the_wizard_shows_jetpacks_answer_and_no_install() {
    use cuda_setup::ui::fonts::FontSource;
    use cuda_setup::ui::{App, Options, Page};
    use cuda_setup_core::compat::{Os, Tables};
    use cuda_setup_core::i18n::Lang;
    use cuda_setup_core::platform::Host;
    use cuda_setup_core::recommend::GpuFact;

    use crate::gui::{harness, has, settle, wait};

    let root = orin_root();
    for lang in [Lang::En, Lang::Zh] {
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Linux, root.path());
        o.host = Host::sandbox(Os::Linux, root.path(), Default::default());
        o.lang = Some(lang);
        o.fonts = FontSource::EmbeddedOnly;
        o.file_dialogs = false;
        // What NVML says on JetPack 6 (the sandbox loads no NVML).
        o.overrides.gpus = vec![GpuFact {
            name: Some("Orin (nvgpu)".into()),
            compute_capability: "8.7".parse().unwrap(),
        }];
        o.overrides.driver = Some(Some("540.4.0".parse().unwrap()));
        o.overrides.python = Some("3.10".parse().unwrap());
        let mut h = harness(App::new(o));
        h.step();
        wait(&mut h, "detection", |a| {
            a.session.recommendation().is_some()
        });
        h.state_mut().go(Page::Choose);
        settle(&mut h);
        let rec = h.state().session.recommendation().unwrap().clone();
        let j = rec.jetson.as_ref().expect("the Jetson answer");
        assert_eq!(j.jetpack.as_deref(), Some("6.1"));
        let headline = cuda_setup::ui::text::msg(lang, &j.headline);
        assert!(has(&h, &headline), "{lang:?}: {headline}");
        assert!(has(
            &h,
            "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"
        ));
        assert!(rec.torch.is_none() && rec.toolkit.is_none());
        assert!(!h.state().can_next(), "{lang:?}: no way on to an install");
    }
}
