//! `tables --refresh` learning what a GPU package besides torch needs (#33): a loopback
//! PyPI serves the `onnxruntime-gpu` page (PEP 691 JSON) listing releases newer than
//! `gpu-packages.toml`, and each wheel's core metadata (PEP 658) from
//! `tests/fixtures/refresh/`. What the metadata states (the nvidia-* wheels of its
//! `cuda`/`cudnn` extras) becomes a row marked as learned; a release naming no nvidia-*
//! wheel gets none. The doctor then judges an installed release by it and says where the
//! fact came from. Hostile pages and metadata refuse the refresh and write nothing.
#![cfg(unix)]

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::cli::{cache_file, json};
use crate::support::python::{self, Packages};
use crate::support::server::{Body, Fault, Server, dead_base};

const META_126: &str = include_str!("../fixtures/refresh/onnxruntime_gpu-1.26.0.metadata");
const META_127: &str = include_str!("../fixtures/refresh/onnxruntime_gpu-1.27.0.metadata");

fn sha256(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn bytes(b: impl Into<Vec<u8>>) -> Body {
    Body::Bytes(Arc::new(b.into()))
}

fn wheel(version: &str, platform: &str) -> String {
    format!("onnxruntime_gpu-{version}-cp312-cp312-{platform}.whl")
}

const LINUX: &str = "manylinux_2_27_x86_64.manylinux_2_28_x86_64";

/// The page as PyPI's JSON API lays it out: 1.24.3 (the table has it), 1.26.0 and the
/// made-up 1.27.0 for Linux and Windows with core metadata and its hash.
fn page(meta_126: &str, meta_127: &str) -> String {
    let mut files = vec![
        r#"{"filename":"onnxruntime_gpu-1.24.3-cp312-cp312-win_amd64.whl","url":"../../packages/o/onnxruntime_gpu-1.24.3-cp312-cp312-win_amd64.whl","hashes":{"sha256":"00"},"core-metadata":true}"#.to_string(),
    ];
    for (v, meta) in [("1.26.0", meta_126), ("1.27.0", meta_127)] {
        for platform in ["win_amd64", LINUX] {
            files.push(format!(
                r#"{{"filename":"{name}","url":"../../packages/o/{name}","hashes":{{"sha256":"00"}},"requires-python":">=3.10","core-metadata":{{"sha256":"{hash}"}},"size":300000000,"yanked":false}}"#,
                name = wheel(v, platform),
                hash = sha256(meta.as_bytes()),
            ));
        }
    }
    format!(
        r#"{{"meta":{{"api-version":"1.1"}},"name":"onnxruntime-gpu","versions":["1.24.3","1.26.0","1.27.0"],"files":[{}]}}"#,
        files.join(",\n")
    )
}

fn metadata_path(version: &str, platform: &str) -> String {
    format!("/packages/o/{}.metadata", wheel(version, platform))
}

fn pypi() -> Server {
    let s = Server::start();
    s.add_typed(
        "/simple/onnxruntime-gpu/",
        bytes(page(META_126, META_127)),
        "application/vnd.pypi.simple.v1+json",
    );
    for platform in ["win_amd64", LINUX] {
        s.add(&metadata_path("1.26.0", platform), bytes(META_126));
        s.add(&metadata_path("1.27.0", platform), bytes(META_127));
    }
    s
}

fn run(home: &Path, elsewhere: &str, pypi: &str, args: &[&str]) -> Output {
    let mut c = crate::support::cli::with_cache(home, args);
    crate::support::cli::sources(&mut c, elsewhere, pypi);
    c.output().unwrap()
}

fn texts(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

fn refresh(home: &Path, server: &Server) -> Output {
    run(
        home,
        &dead_base(),
        &server.url(""),
        &["tables", "--refresh", "--json"],
    )
}

/// The doctor on a stand-in Python with onnxruntime-gpu 1.26.0 whose CUDA provider does
/// not load, no CUDA anywhere, the refresh cache under `home`.
fn doctor(home: &Path, lang: &str) -> String {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("py");
    let py = python::interpreter(&dir, None);
    python::set_packages(
        &dir,
        &Packages::default().with("onnxruntime-gpu", "1.26.0", &[]).check(
            "onnxruntime",
            serde_json::json!({"ok": false, "error": "OSError: libcublasLt.so.12: cannot open shared object file: No such file or directory"}),
        ),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["doctor", "--python"])
        .arg(&py)
        .arg("--root")
        .arg(root.path())
        .args([
            "--gpu-cc",
            "8.6",
            "--driver-cuda",
            "12.4",
            "--os",
            "linux",
            "--lang",
            lang,
        ])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C")
        .env("XDG_CACHE_HOME", home)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        crate::support::cli::text(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_newer_onnxruntime_gpu_is_learned_from_its_wheel_metadata_and_the_doctor_says_so() {
    let server = pypi();
    let home = tempfile::tempdir().unwrap();
    // Before any refresh the tables know nothing of 1.26.0: no rule, said so.
    let en = doctor(home.path(), "en");
    assert!(
        en.contains("onnxruntime-gpu 1.26.0") && !en.contains("needs CUDA 12"),
        "{en}"
    );

    let out = refresh(home.path(), &server);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::support::cli::text(&out)
    );
    let j = json(&out);
    let new = texts(&j["refresh"]["new"]);
    assert!(
        new.contains(&"onnxruntime-gpu 1.26.0".to_string()),
        "{new:?}"
    );
    // 1.27.0's metadata names no nvidia-* wheel: nothing is learned of it.
    assert!(!new.iter().any(|n| n.contains("1.27")), "{new:?}");
    let facts = texts(&j["facts"]);
    let host = server.url("").trim_start_matches("http://").to_string();
    assert!(
        facts.iter().any(|f| f.starts_with(
            "onnxruntime-gpu 1.26.0: needs CUDA 12 and cuDNN 9 (Linux, Windows) — as its wheels' metadata on PyPI states ("
        ) && f.contains(&host)),
        "{facts:#?}"
    );
    // Cached with what each wheel's metadata said, and the file read.
    let cache: Value =
        serde_json::from_slice(&std::fs::read(cache_file(home.path())).unwrap()).unwrap();
    let items = cache["gpu_packages"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{items:#?}");
    let ort = &items[0];
    assert_eq!(ort["version"], "1.26.0");
    assert_eq!(
        (&ort["linux"]["cuda"], &ort["linux"]["cudnn"]),
        (&12.into(), &9.into())
    );
    assert!(
        texts(&ort["windows"]["requires"])
            .contains(&"nvidia-cudnn-cu12~=9.0; extra == \"cudnn\"".to_string()),
        "{ort:#}"
    );
    assert!(
        ort["windows"]["metadata"]
            .as_str()
            .unwrap()
            .ends_with("cp312-cp312-win_amd64.whl.metadata")
    );
    assert_eq!(items[1]["linux"]["cuda"], Value::Null);

    // The doctor judges 1.26.0 by it (CUDA 12, which this machine lacks) and says where
    // the fact came from, in both languages.
    let en = doctor(home.path(), "en");
    for line in [
        "[problem] onnxruntime-gpu 1.26.0 needs CUDA 12",
        "[note]    What onnxruntime-gpu 1.26.0 needs (CUDA 12, cuDNN 9) comes from its wheel's metadata on PyPI, read ",
        "no table row checked by a person covers this version yet.",
        "manylinux_2_28_x86_64.whl.metadata",
    ] {
        assert!(en.contains(line), "missing {line:?} in:\n{en}");
    }
    let zh = doctor(home.path(), "zh");
    assert!(
        zh.contains(
            "onnxruntime-gpu 1.26.0 需要 CUDA 12 和 cuDNN 9，这一点来自它在 PyPI 上的安装包信息"
        ),
        "{zh}"
    );
}

/// A first good refresh, then `break_it` spoils PyPI: the refresh is refused naming
/// `expect`, and the cache stays as it was; a fresh user gets nothing written.
fn refused(break_it: impl Fn(&Server), expect: &str) {
    let server = pypi();
    let home = tempfile::tempdir().unwrap();
    assert_eq!(refresh(home.path(), &server).status.code(), Some(0));
    let before = std::fs::read(cache_file(home.path())).unwrap();

    break_it(&server);
    let out = refresh(home.path(), &server);
    assert_eq!(out.status.code(), Some(1), "{expect}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(expect), "{expect}: {err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(json(&out)["refresh"]["status"], "rejected");
    assert_eq!(std::fs::read(cache_file(home.path())).unwrap(), before);

    let fresh = tempfile::tempdir().unwrap();
    let out = refresh(fresh.path(), &server);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !texts(&json(&out)["facts"])
            .iter()
            .any(|f| f.contains("onnxruntime-gpu")),
    );
    assert!(!cache_file(fresh.path()).exists());
}

#[test]
fn a_huge_onnxruntime_gpu_page_is_refused() {
    refused(
        |s| s.add("/simple/onnxruntime-gpu/", Body::Zeros(40 << 20)),
        "too large",
    );
}

#[test]
fn bad_onnxruntime_gpu_metadata_is_refused() {
    let linux = metadata_path("1.26.0", LINUX);
    // Never ends, no length: cut off at the metadata limit.
    let endless = linux.clone();
    refused(
        move |s| {
            s.add_with(
                &endless,
                Body::Endless,
                Fault {
                    no_length: true,
                    ..Fault::default()
                },
            )
        },
        "too large",
    );
    // Not the bytes the page hashed.
    let changed = linux.clone();
    refused(
        move |s| s.add(&changed, bytes(META_126.replace("cu12~=9.0", "cu12~=8.0"))),
        "SHA-256",
    );
    // Another project's metadata, with the hash the page gives for it.
    let other = linux.clone();
    refused(
        move |s| {
            let text = META_126.replace("Name: onnxruntime-gpu", "Name: onnxruntime");
            s.add_typed(
                "/simple/onnxruntime-gpu/",
                bytes(page(&text, META_127)),
                "application/json",
            );
            s.add(&other, bytes(text.clone()));
            s.add(&metadata_path("1.26.0", "win_amd64"), bytes(text));
        },
        "not onnxruntime-gpu",
    );
    // A page that is not the project's.
    refused(
        |s| {
            s.add(
                "/simple/onnxruntime-gpu/",
                bytes(r#"{"files":[{"filename":"numpy-2.0-cp312-cp312-win_amd64.whl","url":"https://x/numpy.whl"}]}"#),
            )
        },
        "lists no onnxruntime-gpu wheels",
    );
}
