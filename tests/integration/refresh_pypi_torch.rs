//! `tables --refresh` learning a torch release from PyPI alone: the PyTorch index is
//! unreachable (as from many networks in China), PyPI (or its mirror) serves the `torch`
//! page (PEP 691 JSON) and each wheel's core metadata (PEP 658). A made-up torch 2.16.0,
//! newer than any row of the tables, with dossier §11's 2.15.0 pins. Loopback servers,
//! the real CLI as a child process, its cache in a temp folder.

use crate::support::cli::cache_file;
use crate::support::cli::json;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::server::{Body, Fault, Server, dead_base};
use crate::support::words;
use cuda_setup_core::i18n::Lang;

const PYTHONS: [&str; 5] = ["311", "312", "313", "314", "315"];

const LINUX_METADATA: &str = "Metadata-Version: 2.4
Name: torch
Version: 2.16.0
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
License-Expression: BSD-3-Clause
Requires-Python: >=3.11
Requires-Dist: filelock
Requires-Dist: typing-extensions>=4.10.0
Requires-Dist: sympy>=1.13.3
Requires-Dist: cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2; platform_system == \"Linux\"
Requires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == \"Linux\"
Requires-Dist: nvidia-nccl-cu13==2.29.3; platform_system == \"Linux\"
Requires-Dist: triton==3.7.0; platform_system == \"Linux\"
Provides-Extra: optree
Requires-Dist: optree>=0.13.0; extra == \"optree\"
Description-Content-Type: text/markdown

# PyTorch
";

const WINDOWS_METADATA: &str = "Metadata-Version: 2.4
Name: torch
Version: 2.16.0
Requires-Python: >=3.11
Requires-Dist: filelock
Requires-Dist: typing-extensions>=4.10.0
Requires-Dist: sympy>=1.13.3

# PyTorch
";

fn sha256(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn bytes(b: impl Into<Vec<u8>>) -> Body {
    Body::Bytes(Arc::new(b.into()))
}

fn wheel(py: &str, platform: &str) -> String {
    format!("torch-2.16.0-cp{py}-cp{py}-{platform}.whl")
}

/// The `torch` page as PyPI's JSON API lays it out: an old release (which the tables
/// have), and 2.16.0 for Windows and Linux with core metadata and its hash.
fn torch_page(linux_meta: &str, windows_meta: &str) -> String {
    let mut files = vec![
        r#"{"filename":"torch-2.13.0-cp312-cp312-win_amd64.whl","url":"https://files.example/torch-2.13.0-cp312-cp312-win_amd64.whl","hashes":{"sha256":"00"},"requires-python":">=3.10","core-metadata":true}"#.to_string(),
        r#"{"filename":"torch-2.16.0.tar.gz","url":"../../packages/torch-2.16.0.tar.gz","hashes":{"sha256":"00"}}"#.to_string(),
    ];
    for py in PYTHONS {
        for (platform, meta) in [
            ("win_amd64", windows_meta),
            ("manylinux_2_28_x86_64", linux_meta),
            ("manylinux_2_28_aarch64", linux_meta),
        ] {
            files.push(format!(
                r#"{{"filename":"{name}","url":"../../packages/t/{name}","hashes":{{"sha256":"00"}},"requires-python":">=3.11","core-metadata":{{"sha256":"{hash}"}},"data-dist-info-metadata":{{"sha256":"{hash}"}},"size":900000000,"yanked":false}}"#,
                name = wheel(py, platform),
                hash = sha256(meta.as_bytes()),
            ));
        }
    }
    format!(
        r#"{{"meta":{{"api-version":"1.1"}},"name":"torch","versions":["2.13.0","2.16.0"],"files":[{}]}}"#,
        files.join(",\n")
    )
}

/// PyPI with torch 2.16.0 and the nvidia-* pages; the newest wheels' metadata where
/// pip looks for it.
fn pypi() -> Server {
    let s = Server::start();
    s.add_typed(
        "/simple/torch/",
        bytes(torch_page(LINUX_METADATA, WINDOWS_METADATA)),
        "application/vnd.pypi.simple.v1+json",
    );
    s.add(
        &format!(
            "/packages/t/{}.metadata",
            wheel("315", "manylinux_2_28_x86_64")
        ),
        bytes(LINUX_METADATA),
    );
    s.add(
        &format!("/packages/t/{}.metadata", wheel("315", "win_amd64")),
        bytes(WINDOWS_METADATA),
    );
    for (name, v) in [
        ("nvidia-cudnn-cu12", "9.27.0.42"),
        ("nvidia-cudnn-cu13", "9.27.0.42"),
        ("nvidia-cuda-nvcc", "13.5.37"),
    ] {
        s.add(
            &format!("/simple/{name}/"),
            bytes(format!(
                r#"{{"meta":{{"api-version":"1.1"}},"name":"{name}","versions":["{v}"],"files":[]}}"#
            )),
        );
    }
    s
}

/// The CLI with its cache under `home`; NVIDIA and the PyTorch index at `elsewhere`
/// (nothing listening, or a server without their pages), PyPI at `pypi`.
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

fn learned(home: &Path, elsewhere: &str, server: &Server) -> Value {
    let out = run(
        home,
        elsewhere,
        &server.url(""),
        &["tables", "--refresh", "--json"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

/// What a refresh that learned 2.16.0 from PyPI alone says, whatever the index's failure.
fn check_learned(j: &Value, pypi: &Server) {
    assert_eq!(j["refresh"]["status"], "partial", "{j:#}");
    let new = texts(&j["refresh"]["new"]);
    assert!(new.contains(&"torch 2.16".to_string()), "{new:?}");
    assert_eq!(j["newest"]["torch"], "2.16.0");
    // Not confirmed: the newest confirmed torch stays what the tables say.
    assert_ne!(j["newest_confirmed"]["torch"], "2.16.0");

    let t = &j["torch_from_pypi"][0];
    assert_eq!(t["version"], "2.16", "{t:#}");
    assert_eq!(t["patches"][0], "2.16.0");
    assert_eq!(
        (&t["python_min"], &t["python_max"]),
        (&"3.11".into(), &"3.15".into())
    );
    assert_eq!(t["requires_python"], ">=3.11");
    assert_eq!(
        texts(&t["platforms"]),
        ["manylinux_2_28_x86_64", "win_amd64"]
    );
    assert_eq!(t["linux_cuda"], "13.2");
    assert!(
        texts(&t["linux_requires"]).contains(&"nvidia-cudnn-cu13==9.26.0.51".to_string()),
        "{t:#}"
    );
    assert_eq!(t["windows_cpu"], true);
    assert_eq!(t["source"]["kind"], "fetched");
    assert_eq!(t["source"]["file"], pypi.url("/simple/torch/").as_str());
    assert!(
        t["linux_metadata"]
            .as_str()
            .unwrap()
            .ends_with("cp315-manylinux_2_28_x86_64.whl.metadata")
    );
    assert_eq!(t["variants_confirmed"], false);
    assert_eq!(t["index"]["kind"], "unreachable");
    // Assumed from the newest earlier release naming variants, and PyPI's Linux build.
    assert!(
        texts(&t["variants"]).contains(&"cu132".to_string()),
        "{t:#}"
    );
    assert!(t["variants_from"].is_string());

    // Each fact says where it came from: PyPI (the host read), and the variants not.
    let facts = texts(&j["facts"]);
    let host = pypi.url("").trim_start_matches("http://").to_string();
    assert!(
        facts[0].starts_with("torch 2.16.0: exists")
            && facts[0].contains("Python 3.11–3.15")
            && facts[0].contains(&format!("from PyPI ({host}, fetched")),
        "{facts:#?}"
    );
    assert!(
        facts
            .iter()
            .any(|f| f.contains("Linux wheel is built for CUDA 13.2")),
        "{facts:#?}"
    );
    assert!(
        facts
            .iter()
            .any(|f| f.contains("Windows wheel") && f.contains("CPU build")),
        "{facts:#?}"
    );
    assert!(
        facts
            .iter()
            .any(|f| f.contains("not confirmed") && f.contains("could not be reached")),
        "{facts:#?}"
    );
}

#[test]
fn with_the_pytorch_index_unreachable_a_new_torch_is_learned_from_pypi_and_says_from_where() {
    let server = pypi();
    let home = tempfile::tempdir().unwrap();
    // Connection refused for NVIDIA and the PyTorch index.
    let j = learned(home.path(), &dead_base(), &server);
    check_learned(&j, &server);
    let errors = texts(&j["refresh"]["errors"]);
    assert!(
        errors.iter().any(|e| e.contains("/whl/")),
        "the index's failure is named: {errors:?}"
    );

    // The cache holds it; a later offline start knows it and says where it came from.
    let cache: Value =
        serde_json::from_slice(&std::fs::read(cache_file(home.path())).unwrap()).unwrap();
    assert_eq!(cache["pypi_torch"]["items"][0]["version"], "2.16");
    let out = run(home.path(), &dead_base(), &dead_base(), &["tables"]);
    assert_eq!(out.status.code(), Some(0));
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(human.contains("torch 2.16.0: exists"), "{human}");
    assert!(human.contains("from PyPI"), "{human}");
    assert!(human.contains("not confirmed"), "{human}");
    // In Chinese too.
    let out = run(
        home.path(),
        &dead_base(),
        &dead_base(),
        &["tables", "--lang", "zh"],
    );
    let zh = String::from_utf8_lossy(&out.stdout);
    assert!(zh.contains("来自 PyPI") && zh.contains("尚未确认"), "{zh}");
    // Each fact in plain words, in both languages (the catalogue's rules).
    for (lang, code) in [(Lang::En, "en"), (Lang::Zh, "zh")] {
        let out = run(
            home.path(),
            &dead_base(),
            &dead_base(),
            &["tables", "--json", "--lang", code],
        );
        let facts = texts(&json(&out)["facts"]);
        assert_eq!(facts.len(), 4, "{facts:#?}");
        for f in &facts {
            assert_eq!(words::problem(f, lang), None, "{f}");
        }
    }

    // The recommendation for Python 3.15 (only 2.15 and 2.16 have it): torch 2.16, its
    // facts from the cached PyPI page, its variants not confirmed, and why.
    let out = run(
        home.path(),
        &dead_base(),
        &dead_base(),
        &[
            "recommend",
            "--json",
            "--goal",
            "pytorch",
            "--os",
            "linux",
            "--gpu-cc",
            "8.6",
            "--driver",
            "600.00",
            "--python",
            "3.15",
        ],
    );
    let r = json(&out);
    assert_eq!(r["torch"]["version"], "2.16.0", "{r:#}");
    let reasons = r["reasons"].as_array().unwrap();
    assert!(
        reasons.iter().any(|m| m["key"] == "fact_from_cache"
            && m["params"]["what"] == "PyTorch 2.16.0"
            && m["params"]["file"]
                .as_str()
                .unwrap()
                .ends_with("/simple/torch/")),
        "{reasons:#?}"
    );
    let why = reasons
        .iter()
        .find(|m| m["key"] == "refresh_torch_variants_unreachable")
        .unwrap_or_else(|| panic!("{reasons:#?}"));
    assert_eq!(why["params"]["torch"], "2.16.0");
}

#[test]
fn with_the_pytorch_index_answering_404_the_same_is_learned() {
    let server = pypi();
    // A host that answers, but has none of NVIDIA's or PyTorch's pages.
    let empty = Server::start();
    let home = tempfile::tempdir().unwrap();
    let j = learned(home.path(), &empty.url(""), &server);
    check_learned(&j, &server);
}

/// A first good refresh, then `break_it` spoils PyPI: the refresh is refused with a
/// clear error naming `expect`, and the tables and cache stay as they were.
fn refused(break_it: impl Fn(&Server), expect: &str) {
    let server = pypi();
    let home = tempfile::tempdir().unwrap();
    let dead = dead_base();
    learned(home.path(), &dead, &server);
    let before = std::fs::read(cache_file(home.path())).unwrap();

    break_it(&server);
    let out = run(
        home.path(),
        &dead,
        &server.url(""),
        &["tables", "--refresh", "--json"],
    );
    assert_eq!(out.status.code(), Some(1), "{expect}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(expect), "{expect}: {err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let j = json(&out);
    assert_eq!(j["refresh"]["status"], "rejected");
    assert_eq!(std::fs::read(cache_file(home.path())).unwrap(), before);

    // A fresh user with no cache: nothing learned, nothing written.
    let fresh = tempfile::tempdir().unwrap();
    let out = run(
        fresh.path(),
        &dead,
        &server.url(""),
        &["tables", "--refresh", "--json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let j = json(&out);
    assert_ne!(j["newest"]["torch"], "2.16.0");
    assert!(j["torch_from_pypi"].as_array().unwrap().is_empty());
    assert!(!cache_file(fresh.path()).exists());
}

#[test]
fn a_huge_torch_page_is_refused() {
    refused(
        |s| s.add("/simple/torch/", Body::Zeros(40 << 20)),
        "too large",
    );
}

#[test]
fn a_malformed_torch_page_is_refused() {
    refused(
        |s| {
            s.add(
                "/simple/torch/",
                bytes(r#"{"meta":{"api-version":"1.1"},"files":[{"filename":3}]}"#),
            )
        },
        "not a PEP 691 JSON page",
    );
    refused(
        |s| {
            s.add(
                "/simple/torch/",
                bytes(
                    r#"{"files":[{"filename":"numpy-2.0-cp312-cp312-win_amd64.whl","url":"x"}]}"#,
                ),
            )
        },
        "lists no torch wheels",
    );
}

#[test]
fn a_metadata_file_lying_about_its_size_or_content_is_refused() {
    let linux = format!(
        "/packages/t/{}.metadata",
        wheel("315", "manylinux_2_28_x86_64")
    );
    // No length announced, and it never ends: cut off at the metadata limit.
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
    // The announced bytes are not the metadata the page hashed.
    let changed = linux.clone();
    refused(
        move |s| s.add(&changed, bytes(LINUX_METADATA.replace("13.2.2", "13.9.9"))),
        "SHA-256",
    );
    // Another file's metadata.
    let other = linux.clone();
    refused(
        move |s| {
            let text = LINUX_METADATA.replace("Version: 2.16.0", "Version: 2.99.0");
            // With the hash the page lists for it, so only the content is wrong.
            s.add_typed(
                "/simple/torch/",
                bytes(torch_page(&text, WINDOWS_METADATA)),
                "application/json",
            );
            s.add(&other, bytes(text));
        },
        "not 2.16.0",
    );
}

/// #32: the `cpXYt` wheels on PyPI's page (`torch-2.16.0-cp315-cp315t-…`) teach which
/// free-threaded Pythons the new line has wheels for: 3.15t, blocked with the tables
/// alone, gets 2.16.0 run by `python3.15t`; 3.14t hears of 2.16.0 (its cp314t wheels) as
/// the newer, unconfirmed release; a `cp310t` name (no free-threaded build has it) adds
/// nothing, and 3.13t keeps the tables' range.
#[test]
fn the_free_threaded_wheels_on_pypi_teach_the_new_lines_abis() {
    let server = pypi();
    let mut page = torch_page(LINUX_METADATA, WINDOWS_METADATA);
    let mut extra = Vec::new();
    for (py, platform) in [
        ("314", "manylinux_2_28_x86_64"),
        ("314", "win_amd64"),
        ("315", "manylinux_2_28_x86_64"),
        ("310", "manylinux_2_28_x86_64"),
    ] {
        let name = format!("torch-2.16.0-cp{py}-cp{py}t-{platform}.whl");
        extra.push(format!(
            r#"{{"filename":"{name}","url":"../../packages/t/{name}","hashes":{{"sha256":"00"}},"requires-python":">=3.11"}}"#
        ));
    }
    page = page.replacen(
        r#""files":["#,
        &format!(r#""files":[{},"#, extra.join(",")),
        1,
    );
    server.add_typed(
        "/simple/torch/",
        bytes(page),
        "application/vnd.pypi.simple.v1+json",
    );
    let home = tempfile::tempdir().unwrap();
    let recommend = |py: &str| {
        json(&run(
            home.path(),
            &dead_base(),
            &dead_base(),
            &[
                "recommend",
                "--json",
                "--os",
                "linux",
                "--python",
                py,
                "--gpu",
                "RTX 4090",
                "--driver",
                "595.71.05",
            ],
        ))
    };
    // The tables alone: no release has cp315t wheels.
    let before = recommend("3.15t");
    assert_eq!(before["torch"], Value::Null);
    assert_eq!(before["blockers"][0]["key"], "torch_no_free_threaded");

    let j = learned(home.path(), &dead_base(), &server);
    assert_eq!(j["newest"]["torch"], "2.16.0", "{j:#}");

    let after = recommend("3.15t");
    let torch = &after["torch"];
    assert_eq!(torch["version"], "2.16.0", "{after:#}");
    assert!(
        torch["command"]
            .as_str()
            .unwrap()
            .starts_with("python3.15t -m pip install torch==2.16.0+"),
        "{torch}"
    );
    let reasons: Vec<String> = after["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_string())
        .collect();
    assert!(
        reasons.iter().any(|r| r
            .starts_with("PyTorch 2.16 is the newest with wheels for free-threaded Python 3.15t")),
        "{reasons:#?}"
    );

    let p314 = recommend("3.14t");
    assert!(
        p314["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["key"] == "torch_newer_unconfirmed" && r["params"]["torch"] == "2.16.0"),
        "{p314:#}"
    );
    // 3.13t: the tables' cp313t range stands (2.16 has no cp313t wheel).
    assert_eq!(recommend("3.13t")["torch"]["version"], "2.12.0");
}
