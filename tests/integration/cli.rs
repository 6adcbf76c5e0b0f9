//! The CLI contract (docs/cli.md), run as a real child process.

use crate::support::cli::json;
use std::process::{Command, Output};

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn recommend_json_has_the_documented_fields() {
    let out = run(&[
        "recommend",
        "--json",
        "--os",
        "windows",
        "--gpu",
        "RTX 4090",
        "--driver",
        "551.78",
        "--python",
        "3.11",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["toolkit"], Value::Null);
    assert_eq!(j["cudnn"], Value::Null);
    assert_eq!(
        j["torch"]["version"],
        crate::support::newest_torch().as_str()
    );
    assert_eq!(j["torch"]["variant"], "cu126");
    assert_eq!(
        j["torch"]["index_url"],
        "https://download.pytorch.org/whl/cu126"
    );
    assert!(
        j["torch"]["command"]
            .as_str()
            .unwrap()
            .contains("--index-url https://download.pytorch.org/whl/cu126")
    );
    assert_eq!(j["driver"]["current"], "551.78");
    assert_eq!(j["driver"]["action"], "none");
    assert_eq!(j["gpus"][0]["compute_capability"], "8.9");
    let reasons = j["reasons"].as_array().unwrap();
    assert!(
        reasons
            .iter()
            .all(|r| r["key"].is_string() && r["text"].is_string())
    );
    assert!(j["blockers"].as_array().unwrap().is_empty());
}

#[test]
fn developer_goal_names_installer_and_cudnn_archive() {
    let out = run(&[
        "recommend",
        "--json",
        "--goal",
        "developer",
        "--os",
        "linux",
        "--gpu-cc",
        "8.6",
        "--driver",
        "550.54.15",
        // What runs on this driver; the update (#32) would bring CUDA 13.
        "--keep-driver",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["toolkit"]["version"], "12.4.1");
    assert_eq!(
        j["toolkit"]["installer"]["url"],
        "https://developer.download.nvidia.com/compute/cuda/12.4.1/local_installers/cuda_12.4.1_550.54.15_linux.run"
    );
    let cudnn = j["cudnn"]["archive_url"].as_str().unwrap();
    assert!(
        cudnn.starts_with(
            "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/"
        ),
        "{cudnn}"
    );
    assert!(cudnn.ends_with("_cuda12-archive.tar.xz"), "{cudnn}");
    assert!(j["torch"]["variant"].as_str().unwrap().starts_with("cu12"));
}

#[test]
fn blocked_exits_3_with_a_blocker() {
    let out = run(&["recommend", "--json", "--no-gpu"]);
    assert_eq!(out.status.code(), Some(3));
    let j = json(&out);
    assert_eq!(j["blockers"][0]["key"], "no_nvidia_gpu");
    assert!(
        j["blockers"][0]["text"]
            .as_str()
            .unwrap()
            .contains("whl/cpu")
    );
}

#[test]
fn bad_input_is_a_clear_message_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["recommend", "--gpu-cc", "8.6", "--driver", "abc"], "abc"),
        (&["recommend", "--gpu-cc", "99.9"], "99.9"),
        (
            &["recommend", "--gpu", "RTX 9999"],
            "unknown GPU \"RTX 9999\"",
        ),
        (
            &["recommend", "--gpu-cc", "8.6", "--driver", "12.4"],
            "looks like a CUDA version",
        ),
        (
            &["recommend", "--gpu-cc", "8.6", "--python", "2.7"],
            "not a Python 3",
        ),
        (&["recommend", "--goal", "tensorflow"], "tensorflow"),
    ];
    for (args, want) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
    // Our own usage errors carry a hint line.
    assert!(stderr(&run(&["recommend", "--gpu", "RTX 9999"])).contains("hint: "));
}

#[test]
fn chinese_output() {
    let out = run(&[
        "--lang",
        "zh",
        "recommend",
        "--gpu-cc",
        "8.6",
        "--no-driver",
        "--os",
        "windows",
        "--python",
        "3.12",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("请先安装 NVIDIA 驱动"), "{text}");
    assert!(text.contains("pip install torch=="), "{text}");
}

#[test]
fn a_broken_compat_dir_exits_1_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for f in cuda_setup_core::compat::FILES {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("compat-tables")
            .join(f);
        std::fs::copy(src, dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join("pytorch.toml"), "[meta]\nsubject = \"x\"\n").unwrap();
    let out = run(&["--compat-dir", dir.path().to_str().unwrap(), "tables"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("pytorch.toml") && err.contains("hint:"),
        "{err}"
    );
}

#[test]
fn tables_json_summarises() {
    let out = run(&["tables", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    // The newest cuDNN in the tables, whatever its number.
    let tables = cuda_setup_core::compat::Tables::embedded().unwrap();
    let newest = tables.newest().1.unwrap().version.to_string();
    assert_eq!(j["newest"]["cudnn"], newest.as_str());
    assert!(j["counts"]["toolkits"].as_u64().unwrap() >= 60);
    assert!(j["counts"]["gpus"].as_u64().unwrap() >= 80);
    // The four tables, then the two driver tables the driver step and the Linux advice
    // read, each with its sources.
    let files: Vec<&str> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "toolkits.toml",
            "cudnn.toml",
            "pytorch.toml",
            "gpus.toml",
            "drivers.toml",
            "drivers-linux.toml"
        ]
    );
    assert!(
        j["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| !f["sources"].as_array().unwrap().is_empty())
    );
}

/// `cuda-setup … | head -1`: the reader is gone before we write. The pipe is made here
/// and its reading end closed before the child starts, so every write fails for real
/// (EPIPE; Windows: ERROR_NO_DATA) — no race with the child's output.
fn run_with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .env("LANG", "C")
        .env_remove("RUST_BACKTRACE")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    for args in [
        &["tables", "--json"][..],
        &["tables"],
        &[
            "recommend",
            "--gpu-cc",
            "8.6",
            "--driver",
            "550.54.15",
            "--os",
            "linux",
        ],
        &[
            "install",
            "--goal",
            "developer",
            "--dry-run",
            "--os",
            "linux",
            "--root",
            root,
            "--gpu-cc",
            "8.6",
            "--driver",
            "550.54.15",
            "--no-cudnn",
        ],
    ] {
        let out = run_with_closed_stdout(args);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

/// Output that cannot be written for another reason is an error, not a silent success.
#[cfg(target_os = "linux")]
#[test]
fn output_to_a_full_device_is_an_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["tables", "--json"])
        .env_remove("RUST_BACKTRACE")
        .stdout(full)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("could not be written") && !err.contains("panicked"),
        "{err}"
    );
}

/// Options that cannot mean anything are refused before anything runs (exit 2), naming
/// the option and the value.
#[test]
fn nonsense_options_are_usage_errors() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    let install = |extra: &[&'static str]| -> Vec<String> {
        [
            "install",
            "--goal",
            "developer",
            "--dry-run",
            "--os",
            "linux",
            "--root",
            root,
            "--gpu-cc",
            "8.6",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (install(&["--connections", "0"]), "--connections"),
        (install(&["--connections", "99"]), "--connections"),
        (
            install(&["--mirror", "mirror.example.com"]),
            "not an http(s) URL",
        ),
        (
            install(&["--mirror", "ftp://mirror.example.com"]),
            "not an http(s) URL",
        ),
        (install(&["--mirror", "http://"]), "not an http(s) URL"),
        (
            install(&["--torch-index", "download.pytorch.org/whl"]),
            "--torch-index",
        ),
        (
            ["tables", "--refresh", "--nvidia-base", "file:///etc"]
                .map(String::from)
                .to_vec(),
            "--nvidia-base",
        ),
        (
            ["tables", "--refresh", "--torch-index", "nonsense"]
                .map(String::from)
                .to_vec(),
            "not an http(s) URL",
        ),
        (
            ["bundle", "--out", root, "--mirror", "c:\\mirror"]
                .map(String::from)
                .to_vec(),
            "--mirror",
        ),
        (
            [
                "download",
                "--url",
                "https://h/f",
                "--md5",
                "0123456789abcdef0123456789abcdef",
                "--out",
                "f",
                "--connections",
                "0",
            ]
            .map(String::from)
            .to_vec(),
            "--connections",
        ),
    ];
    for (args, want) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
    // A good URL still passes.
    let out = run(
        &install(&["--mirror", "http://127.0.0.1:9/m", "--connections", "16"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn chinese_covers_the_cli_own_lines() {
    // `tables` printed these lines in English whatever --lang said; they come from the
    // catalogue now, like every other line.
    let zh = run(&["--lang", "zh", "tables"]);
    assert_eq!(zh.status.code(), Some(0), "{}", stderr(&zh));
    let text = String::from_utf8(zh.stdout).unwrap();
    assert!(text.contains("兼容性表（"), "{text}");
    assert!(text.contains("最新版本："), "{text}");
    assert!(
        !text.contains("Compat tables") && !text.contains("newest"),
        "{text}"
    );
    let en = run(&["tables"]);
    let text = String::from_utf8(en.stdout).unwrap();
    assert!(text.contains("Compat tables ("), "{text}");
    assert!(text.contains("  newest:            CUDA "), "{text}");
}

#[test]
fn usage_errors_speak_the_users_language() {
    // A usage error was English whatever --lang said; its words come from the catalogue
    // now, and the `error:`/`hint:` prefixes stay as docs/cli.md fixes them.
    let out = std::env::temp_dir().join("cuda-setup-never-written.run");
    let args = [
        "download",
        "--url",
        "https://example.com/f.run",
        "--out",
        out.to_str().unwrap(),
        "--sha256",
        "xyz",
    ];
    let zh = run(&[&["--lang", "zh"][..], &args[..]].concat());
    assert_eq!(zh.status.code(), Some(2), "{}", stderr(&zh));
    let err = stderr(&zh);
    assert!(
        err.contains("error: --sha256 xyz 不是 64 位十六进制数"),
        "{err}"
    );
    assert!(err.contains("hint: 请原样复制 SHA-256 值"), "{err}");
    let en = run(&args);
    assert_eq!(en.status.code(), Some(2));
    let err = stderr(&en);
    assert!(
        err.contains("error: --sha256 xyz is not 64 hex digits"),
        "{err}"
    );
    assert!(err.contains("hint: copy the SHA-256 exactly"), "{err}");
}

/// A download that fails, in Chinese: the `error:` and `hint:` lines are the catalogue's
/// plain words; the raw error (the server's 404) comes only on the `details:` line.
#[test]
fn a_failed_download_in_chinese_says_why_in_words_and_keeps_the_raw_error_in_details() {
    let server = crate::support::server::Server::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.zip");
    let url = server.url("/nowhere/f.zip");
    let sha = "0".repeat(64);
    let o = run(&[
        "--lang",
        "zh",
        "download",
        "--url",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--sha256",
        &sha,
        "--no-cache",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let line = |prefix: &str| {
        err.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line: {err}"))
            .to_string()
    };
    let han = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let (error, hint, details) = (line("error: "), line("hint: "), line("details: "));
    assert_eq!(error, "error: 服务器上没有这个文件。", "{err}");
    assert!(han(&hint) && hint.contains("--mirror"), "{hint}");
    // The raw text (the chain may run over several lines) comes last, after details:.
    let (before, after) = err.split_once("details: ").unwrap();
    assert!(details.starts_with("details: download failed"), "{details}");
    assert!(after.contains("404") && after.contains(&url), "{after}");
    assert!(
        !before.contains("404") && !before.contains("HTTP"),
        "raw text before details: {before}"
    );
    assert!(!out.exists());
}
