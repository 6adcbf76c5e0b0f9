//! What `install` prints, read as a Chinese-speaking beginner reads it: the real binary
//! as a child process, in Chinese by `--lang zh` and by the locale alone (no LANG,
//! LC_ALL=zh_CN.UTF-8). Every line is judged by the walk's rule (tests/support/words.rs):
//! no English sentence, no raw identifier; the raw text only after `details:`.

use std::path::Path;
use std::process::{Command, Output};

use cuda_setup_core::i18n::Lang;
use serde_json::Value;

use crate::support::server::{Body, Fault, Server, pattern};
use crate::support::words::{has_han, problem};

/// How the child is told to speak Chinese.
#[derive(Clone, Copy, Debug)]
enum Zh {
    Flag,
    Locale,
}

const BOTH: [Zh; 2] = [Zh::Flag, Zh::Locale];

fn cli(args: &[String], zh: Zh) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.env_remove("LC_MESSAGES").env_remove("RUST_BACKTRACE");
    match zh {
        Zh::Flag => c
            .args(["--lang", "zh"])
            .env("LANG", "C")
            .env_remove("LC_ALL"),
        Zh::Locale => c.env_remove("LANG").env("LC_ALL", "zh_CN.UTF-8"),
    };
    c.args(args).output().unwrap()
}

fn args(list: &[&str], root: &Path) -> Vec<String> {
    list.iter()
        .map(|s| s.to_string())
        .chain(["--root".into(), root.display().to_string()])
        .collect()
}

/// Each printed line that breaks the rule, with why; `details:` lines hold the raw text
/// on purpose and the `error:`/`hint:`/`details:` prefixes are the command line's own.
fn problems(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("details:"))
        .map(|l| {
            l.strip_prefix("error: ")
                .or_else(|| l.strip_prefix("hint: "))
                .unwrap_or(l)
        })
        .filter_map(|l| problem(l, Lang::Zh).map(|why| format!("{l:?} ({why})")))
        .collect()
}

fn out_text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A Windows sandbox with no driver, the PyTorch goal: the plan's steps and notes in
/// Chinese, the driver first; with --skip-driver the note says to install it oneself.
#[test]
fn a_windows_dry_run_without_a_driver_is_all_chinese() {
    let root = tempfile::tempdir().unwrap();
    let py = root.path().join("python.exe");
    std::fs::write(&py, "").unwrap();
    let base = [
        "install",
        "--dry-run",
        "--goal",
        "pytorch",
        "--os",
        "windows",
        "--gpu-cc",
        "8.6",
        "--python-exe",
        py.to_str().unwrap(),
    ];
    for zh in BOTH {
        let out = cli(&args(&base, root.path()), zh);
        let (text, err) = out_text(&out);
        assert_eq!(out.status.code(), Some(0), "{zh:?}: {err}");
        assert!(
            text.contains("2. 下载 NVIDIA 显卡驱动") && text.contains("3. 安装 NVIDIA 显卡驱动"),
            "{zh:?}: {text}"
        );
        let note = text
            .lines()
            .find(|l| l.contains("注意"))
            .unwrap_or_default();
        assert!(note.contains("会先安装 NVIDIA 驱动"), "{zh:?}: {text}");
        assert_eq!(problems(&text), Vec::<String>::new(), "{zh:?}: {text}");

        let skip = [&base[..], &["--skip-driver"]].concat();
        let (text, _) = out_text(&cli(&args(&skip, root.path()), zh));
        assert!(text.contains("你选了自己安装"), "{zh:?}: {text}");
        assert!(!text.contains("显卡驱动\n"), "no driver step: {text}");
        assert_eq!(problems(&text), Vec::<String>::new(), "{zh:?}: {text}");
    }
    // JSON: each note is its message (the catalogue's key), with the text in --lang.
    let json = [&base[..], &["--json"]].concat();
    let out = cli(&args(&json, root.path()), Zh::Flag);
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let note = &plan["notes"][0];
    assert_eq!(note["key"], "plan_note_driver_first", "{plan}");
    assert!(note["params"]["version"].is_string(), "{note}");
    assert!(has_han(note["text"].as_str().unwrap()), "{note}");
    assert!(plan["linux_driver"].is_null(), "{plan}");
}

/// The dry run's plan as JSON, then the same plan with a pre-flight that needs more room
/// than any drive has: the run stops before anything, and says so in Chinese.
#[test]
fn a_failed_pre_flight_says_why_and_what_to_do_in_chinese() {
    let root = tempfile::tempdir().unwrap();
    let py = root.path().join("python.exe");
    std::fs::write(&py, "").unwrap();
    let dry = [
        "install",
        "--dry-run",
        "--json",
        "--goal",
        "pytorch",
        "--os",
        "windows",
        "--gpu-cc",
        "8.6",
        "--skip-driver",
        "--python-exe",
        py.to_str().unwrap(),
    ];
    let out = cli(&args(&dry, root.path()), Zh::Flag);
    let mut plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["steps"][0]["step"], "preflight", "{plan}");
    plan["steps"][0]["needed_bytes"] = (u64::MAX / 4).into();
    plan["steps"][0]["needed_is_estimate"] = false.into();
    let file = root.path().join("plan.json");
    std::fs::write(&file, serde_json::to_vec(&plan).unwrap()).unwrap();
    for zh in BOTH {
        let run = [
            "install",
            "--goal",
            "developer",
            "--yes",
            "--os",
            "windows",
            "--plan",
            file.to_str().unwrap(),
        ];
        let out = cli(&args(&run, root.path()), zh);
        let (text, err) = out_text(&out);
        assert_eq!(out.status.code(), Some(1603 % 256), "{zh:?}: {err}");
        for said in [
            "这项检查没有通过：",
            "所在的磁盘只有",
            "腾出一些空间",
            "安装前的检查没有通过",
        ] {
            assert!(err.contains(said), "{zh:?}: {said} missing in\n{err}");
        }
        assert!(err.contains("details: "), "{err}");
        assert_eq!(problems(&text), Vec::<String>::new(), "{zh:?}: {text}");
        assert_eq!(problems(&err), Vec::<String>::new(), "{zh:?}: {err}");
    }
}

/// A download that fails once (HTTP 503) and then succeeds: the retry line and the
/// step's outcome in Chinese, the server's own words after `details:`.
#[test]
fn a_download_retry_is_said_in_chinese_with_the_raw_error_after_details() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    let body = pattern(200_000, 7);
    let sha = {
        use sha2::Digest;
        sha2::Sha256::digest(&body)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    server.add_with(
        "/f.zip",
        Body::Bytes(std::sync::Arc::new(body)),
        Fault {
            status: Some((503, 1)),
            ..Fault::default()
        },
    );
    let plan = serde_json::json!({
        "format": 1, "goal": "developer", "os": "linux",
        "root": root.path(), "toolkit": null, "cudnn": null, "torch_command": null,
        "notes": [],
        "steps": [{
            "step": "download", "what": "cudnn_archive", "url": server.url("/f.zip"),
            "mirrors": [], "sha256": sha, "md5": null, "size": 200_000,
            "dest": root.path().join("downloads/f.zip"), "bundle_dirs": [],
            "cache_dir": null, "connections": 1,
        }],
    });
    let file = root.path().join("plan.json");
    std::fs::write(&file, serde_json::to_vec(&plan).unwrap()).unwrap();
    let run = [
        "install",
        "--goal",
        "developer",
        "--yes",
        "--os",
        "linux",
        "--plan",
        file.to_str().unwrap(),
    ];
    let out = cli(&args(&run, root.path()), Zh::Locale);
    let (text, err) = out_text(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let retry = err.lines().position(|l| l.contains("次重试"));
    let retry = retry.unwrap_or_else(|| panic!("no retry line:\n{err}"));
    let next = err.lines().nth(retry + 1).unwrap_or_default().trim();
    assert!(
        next.starts_with("details: ") && next.contains("503"),
        "{next:?} in\n{err}"
    );
    assert!(err.contains("校验通过"), "{err}");
    assert_eq!(problems(&err), Vec::<String>::new(), "{err}");
    assert_eq!(problems(&text), Vec::<String>::new(), "{text}");
}

/// A Linux sandbox (Ubuntu, no driver): the dry run prints the distribution's commands
/// as `recommend` does, in Chinese, and `--json` carries them as `linux_driver`.
#[test]
fn a_linux_dry_run_without_a_driver_prints_the_distributions_commands() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("etc")).unwrap();
    std::fs::write(
        root.path().join("etc/os-release"),
        "NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n",
    )
    .unwrap();
    let py = root.path().join("python3");
    std::fs::write(&py, "").unwrap();
    let base = [
        "install",
        "--dry-run",
        "--goal",
        "pytorch",
        "--os",
        "linux",
        "--gpu-cc",
        "8.6",
        "--python-exe",
        py.to_str().unwrap(),
    ];
    for zh in BOTH {
        let out = cli(&args(&base, root.path()), zh);
        let (text, err) = out_text(&out);
        assert_eq!(out.status.code(), Some(0), "{zh:?}: {err}");
        assert!(text.contains("Ubuntu 24.04.1 LTS"), "{zh:?}: {text}");
        assert!(
            text.contains("\n    sudo apt install nvidia-driver-"),
            "{zh:?}: {text}"
        );
        assert!(text.contains("需要安装 NVIDIA 驱动"), "{zh:?}: {text}");
        assert_eq!(problems(&text), Vec::<String>::new(), "{zh:?}: {text}");
    }
    let json = [&base[..], &["--json"]].concat();
    let out = cli(&args(&json, root.path()), Zh::Flag);
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &plan["linux_driver"];
    assert_eq!(a["family"], "ubuntu", "{a}");
    assert!(
        a["commands"].as_array().unwrap().iter().any(|c| c
            .as_str()
            .unwrap()
            .starts_with("sudo apt install nvidia-driver-")),
        "{a}"
    );
    assert!(has_han(a["intro"].as_str().unwrap()), "{a}");
    // The plan with its notes and advice still runs as `--plan FILE` reads it.
    let file = root.path().join("plan.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let again = [
        "install",
        "--goal",
        "developer",
        "--dry-run",
        "--os",
        "linux",
        "--plan",
        file.to_str().unwrap(),
    ];
    let out = cli(&args(&again, root.path()), Zh::Flag);
    let (text, err) = out_text(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(text.contains("需要安装 NVIDIA 驱动"), "{text}");
}

/// A what-if flag that cannot be right, in Chinese: the `hint:` line is the error's own
/// (it names the flag to use) in Chinese, and `details:` holds the raw error alone — not
/// the English hint beside it. The same for the wizard's flags, refused before a window.
#[test]
fn a_refused_flag_says_its_own_hint_in_chinese() {
    let root = tempfile::tempdir().unwrap();
    let english = "NVIDIA driver versions look like";
    for zh in BOTH {
        let out = cli(
            &args(
                &["recommend", "--gpu-cc", "8.6", "--driver", "12.4"],
                root.path(),
            ),
            zh,
        );
        let (_, err) = out_text(&out);
        assert_eq!(out.status.code(), Some(2), "{zh:?}: {err}");
        let hint = err
            .lines()
            .find(|l| l.starts_with("hint: "))
            .unwrap_or_default();
        assert!(
            has_han(hint) && hint.contains("--driver-cuda"),
            "{zh:?}: {err}"
        );
        assert!(!err.contains(english), "{zh:?}: {err}");
        assert_eq!(problems(&err), Vec::<String>::new(), "{zh:?}: {err}");

        // No subcommand: the wizard's flags, checked before a window opens.
        let out = cli(&args(&["--driver", "12.4"], root.path()), zh);
        let (_, err) = out_text(&out);
        let hint = err
            .lines()
            .find(|l| l.starts_with("hint: "))
            .unwrap_or_default();
        assert!(
            has_han(hint) && hint.contains("--driver-cuda"),
            "{zh:?}: {err}"
        );
        assert!(!err.contains(english), "{zh:?}: {err}");
    }
}
