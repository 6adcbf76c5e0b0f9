//! `tables --refresh`: NVIDIA's redist manifests, the PyTorch wheel index and PyPI served
//! by a loopback server in their recorded formats (tests/fixtures/refresh); the real CLI
//! as a child process, with its cache in a temp folder.

use crate::support;
use crate::support::cli::cache_file;
use crate::support::cli::json;

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use serde_json::Value;
use support::server::{Body, Server};

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/refresh")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn bytes(b: impl Into<Vec<u8>>) -> Body {
    Body::Bytes(Arc::new(b.into()))
}

const PYPI_CUDNN13: &str = r#"{"meta":{"api-version":"1.1"},"name":"nvidia-cudnn-cu13","versions":["9.26.0.51","9.27.0.42"],
"files":[{"filename":"nvidia_cudnn_cu13-9.27.0.42-py3-none-win_amd64.whl","url":"x","hashes":{}}]}"#;
const PYPI_CUDNN12: &str = r#"<!DOCTYPE html><html><body>
<a href="x/nvidia_cudnn_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl#sha256=00">nvidia_cudnn_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl</a>
</body></html>"#;
const PYPI_NVCC: &str =
    r#"{"meta":{"api-version":"1.1"},"name":"nvidia-cuda-nvcc","versions":["13.5.37"],"files":[]}"#;

/// PyPI's torch page with nothing newer than the tables (refresh_pypi_torch.rs has one
/// that is).
const PYPI_TORCH: &str = r#"{"meta":{"api-version":"1.1"},"name":"torch","files":[
{"filename":"torch-2.13.0-cp312-cp312-win_amd64.whl","url":"x/torch-2.13.0-cp312-cp312-win_amd64.whl","hashes":{},"requires-python":">=3.10"}]}"#;

/// Every source, as NVIDIA, PyTorch and PyPI lay them out.
fn sources() -> Server {
    let s = Server::start();
    s.add(
        "/compute/cuda/redist/",
        bytes(fixture("cuda-redist-index.html")),
    );
    for v in ["12.4.1", "13.4.2", "13.6.0"] {
        let name = format!("redistrib_{v}.json");
        s.add(
            &format!("/compute/cuda/redist/{name}"),
            bytes(fixture(&name)),
        );
    }
    s.add(
        "/compute/cuda/13.6.0/docs/sidebar/md5sum.txt",
        bytes(fixture("md5sum-13.6.0.txt")),
    );
    s.add(
        "/compute/cudnn/redist/",
        bytes(fixture("cudnn-redist-index.html")),
    );
    for v in ["9.27.0", "9.28.0"] {
        s.add(
            &format!("/compute/cudnn/redist/redistrib_{v}.json"),
            bytes(fixture(&format!("cudnn-redistrib_{v}.json"))),
        );
    }
    for variant in ["cu126", "cu130", "cu132"] {
        s.add(
            &format!("/whl/{variant}/torch/"),
            bytes(fixture(&format!("torch-{variant}.html"))),
        );
    }
    s.add("/simple/nvidia-cudnn-cu12/", bytes(PYPI_CUDNN12));
    s.add("/simple/nvidia-cudnn-cu13/", bytes(PYPI_CUDNN13));
    s.add("/simple/nvidia-cuda-nvcc/", bytes(PYPI_NVCC));
    s.add("/simple/torch/", bytes(PYPI_TORCH));
    s
}

/// The CLI with its cache under `home` and the sources at `base` (None: unset).
fn run(home: &Path, base: Option<&str>, args: &[&str]) -> Output {
    let mut c = support::cli::with_cache(home, args);
    match base {
        Some(b) => support::cli::sources(&mut c, b, b),
        None => {
            for k in [
                "CUDA_SETUP_NVIDIA_BASE",
                "CUDA_SETUP_TORCH_INDEX",
                "CUDA_SETUP_PYPI",
            ] {
                c.env_remove(k);
            }
        }
    }
    c.output().unwrap()
}

fn keys(j: &Value) -> Vec<String> {
    j["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect()
}

fn reason<'a>(j: &'a Value, key: &str) -> &'a Value {
    j["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {:?}", keys(j)))
}

/// A loopback address nothing listens on.
fn dead_base() -> String {
    crate::support::server::dead_base()
}

fn refreshed(home: &Path, server: &Server) -> Value {
    let out = run(
        home,
        Some(&server.url("")),
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

#[test]
fn a_new_cuda_release_is_learned_cached_and_recommended_when_it_fits() {
    let server = sources();
    let home = tempfile::tempdir().unwrap();
    let j = refreshed(home.path(), &server);
    assert_eq!(j["refresh"]["status"], "refreshed", "{j:#}");
    assert_eq!(j["using"]["kind"], "live");
    let new: Vec<&str> = j["refresh"]["new"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(new.contains(&"CUDA 13.6.0"), "{new:?}");
    assert!(new.contains(&"cuDNN 9.28.0.1"), "{new:?}");
    // 12.4.1 and 13.4.2 are in the tables already: not new, not refetched.
    assert!(
        !new.iter()
            .any(|n| n.contains("13.4.2") || n.contains("12.4.1"))
    );
    assert_eq!(j["newest"]["toolkit"], "13.6.0");
    assert_eq!(j["pypi"]["nvidia-cudnn-cu13"], "9.27.0.42");
    assert_eq!(j["pypi"]["nvidia-cuda-nvcc"], "13.5.37");

    // The cache holds it, with the time fetched.
    let cache: Value =
        serde_json::from_slice(&std::fs::read(cache_file(home.path())).unwrap()).unwrap();
    assert!(cache["fetched_at"].as_u64().unwrap() > 1_700_000_000);
    assert_eq!(cache["cuda"]["items"][0]["version"], "13.6.0");

    // Later, offline: the recommender uses it. NVML says the driver runs CUDA 13.6.
    let args = [
        "recommend",
        "--json",
        "--goal",
        "developer",
        "--os",
        "linux",
        "--gpu-cc",
        "8.6",
        "--driver",
        "620.00",
        "--python",
        "3.12",
    ];
    let mut with_nvml = args.to_vec();
    with_nvml.extend(["--driver-cuda", "13.6"]);
    let out = run(home.path(), None, &with_nvml);
    assert_eq!(out.status.code(), Some(0));
    let r = json(&out);
    assert_eq!(r["toolkit"]["version"], "13.6.0", "{:?}", keys(&r));
    assert_eq!(r["toolkit"]["installer"]["file"], "cuda_13.6.0_linux.run");
    // Name and hash from NVIDIA's md5sum.txt for the release.
    assert_eq!(
        r["toolkit"]["installer"]["md5"],
        "6a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d"
    );
    // On Windows: the local installer and the network one, both listed with hashes.
    let mut windows = with_nvml.clone();
    let os = windows.iter().position(|a| *a == "linux").unwrap();
    windows[os] = "windows";
    let w = json(&run(home.path(), None, &windows));
    assert_eq!(w["toolkit"]["version"], "13.6.0");
    assert_eq!(
        w["toolkit"]["installer"]["file"],
        "cuda_13.6.0_windows_x86_64.exe"
    );
    assert_eq!(
        w["toolkit"]["installer"]["md5"],
        "8c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f"
    );
    assert_eq!(
        w["toolkit"]["network_installer"]["url"],
        "https://developer.download.nvidia.com/compute/cuda/13.6.0/network_installers/cuda_13.6.0_windows_x86_64_network.exe"
    );
    assert_eq!(r["cudnn"]["version"], "9.28.0.1");
    assert_eq!(r["refreshed"]["live"], false);
    // Its minimum driver is unknown, and the reasons say so and where it came from.
    assert!(keys(&r).contains(&"toolkit_minimum_unknown".to_string()));
    let src = reason(&r, "fact_from_cache");
    assert!(
        src["text"].as_str().unwrap().contains("CUDA 13.6.0")
            && src["text"]
                .as_str()
                .unwrap()
                .contains("redistrib_13.6.0.json"),
        "{src}"
    );
    assert!(
        r["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["key"] == "fact_from_cache" && m["params"]["what"] == "cuDNN 9.28.0.1")
    );

    // Without NVML's figure the driver's reach comes from published minimums: a release
    // whose minimum is known is preferred, and the unknown one is named.
    let out = run(home.path(), None, &args);
    let r = json(&out);
    assert_ne!(r["toolkit"]["version"], "13.6.0");
    let skipped = reason(&r, "toolkit_newer_minimum_unknown");
    assert_eq!(skipped["params"]["version"], "13.6.0");
    assert!(keys(&r).contains(&"fact_from_tables".to_string()));
}

/// An Ampere card on Windows with a new driver and Python 3.14.
const RECOMMEND_WINDOWS_PY314: [&str; 10] = [
    "recommend",
    "--json",
    "--os",
    "windows",
    "--gpu-cc",
    "8.6",
    "--driver",
    "600.00",
    "--python",
    "3.14",
];

#[test]
fn a_torch_variant_without_a_wheel_for_this_python_on_windows_is_not_recommended() {
    let home = tempfile::tempdir().unwrap();
    let args = RECOMMEND_WINDOWS_PY314;
    // The tables alone: cu132 (the newest CUDA of the newest torch, 2.13 when written).
    let before = json(&run(home.path(), None, &args));
    assert_eq!(before["torch"]["variant"], "cu132");

    let server = sources();
    refreshed(home.path(), &server);
    let after = json(&run(home.path(), None, &args));
    assert_eq!(after["torch"]["version"], support::newest_torch().as_str());
    assert_eq!(after["torch"]["variant"], "cu130", "{:?}", keys(&after));
    let why = reason(&after, "torch_no_wheel_in_index");
    assert_eq!(why["params"]["variant"], "cu132");
    assert_eq!(why["params"]["python"], "3.14");
    let ok = reason(&after, "torch_wheel_in_index");
    assert_eq!(ok["params"]["variant"], "cu130");

    // On Linux the cu132 wheel for 3.14 exists: still recommended.
    let linux: Vec<&str> = args
        .iter()
        .map(|a| if *a == "windows" { "linux" } else { a })
        .collect();
    let l = json(&run(home.path(), None, &linux));
    assert_eq!(l["torch"]["variant"], "cu132");
}

#[test]
fn a_malformed_manifest_is_rejected_with_a_clear_error_and_the_old_data_stays() {
    let server = sources();
    let home = tempfile::tempdir().unwrap();
    refreshed(home.path(), &server);
    let before = std::fs::read(cache_file(home.path())).unwrap();

    let bad = String::from_utf8(fixture("redistrib_13.6.0.json"))
        .unwrap()
        .replacen("\"size\": \"1000000\"", "\"size\": \"one megabyte\"", 1);
    server.add("/compute/cuda/redist/redistrib_13.6.0.json", bytes(bad));
    let out = run(
        home.path(),
        Some(&server.url("")),
        &["tables", "--refresh", "--json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("redistrib_13.6.0.json"), "{err}");
    assert!(err.contains("malformed") && err.contains("size"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    // stdout still says what is used instead: the cache of the first refresh.
    let j = json(&out);
    assert_eq!(j["refresh"]["status"], "rejected");
    assert!(
        j["refresh"]["errors"][0]
            .as_str()
            .unwrap()
            .contains("redistrib_13.6.0.json")
    );
    assert_eq!(j["using"]["kind"], "cache");
    assert_eq!(j["newest"]["toolkit"], "13.6.0");
    assert_eq!(std::fs::read(cache_file(home.path())).unwrap(), before);

    // Not JSON at all: the same.
    server.add(
        "/compute/cuda/redist/redistrib_13.6.0.json",
        bytes("<html>503 Service Unavailable</html>"),
    );
    let out = run(home.path(), Some(&server.url("")), &["tables", "--refresh"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not JSON"));
    assert_eq!(std::fs::read(cache_file(home.path())).unwrap(), before);

    // The old data is still what the tables use.
    let j = json(&run(home.path(), None, &["tables", "--json"]));
    assert_eq!(j["using"]["kind"], "cache");
    assert_eq!(j["newest"]["toolkit"], "13.6.0");
}

#[test]
fn offline_falls_back_to_the_cache_or_the_built_in_tables_and_says_so() {
    let dead = dead_base();
    // No cache: the built-in tables.
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), Some(&dead), &["tables", "--refresh", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    assert_eq!(j["refresh"]["status"], "offline");
    assert_eq!(j["using"]["kind"], "tables");
    assert!(!j["refresh"]["errors"].as_array().unwrap().is_empty());
    assert!(
        j["refresh"]["text"]
            .as_str()
            .unwrap()
            .contains("built-in tables")
    );
    assert!(!cache_file(home.path()).exists());

    // With a cache from an earlier refresh: the cache, with its date.
    let server = sources();
    let first = refreshed(home.path(), &server);
    let at = first["using"]["at"].as_str().unwrap().to_string();
    let out = run(home.path(), Some(&dead), &["tables", "--refresh", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    assert_eq!(j["refresh"]["status"], "offline");
    assert_eq!(j["using"]["kind"], "cache");
    assert_eq!(j["using"]["at"], at.as_str());
    assert!(j["refresh"]["text"].as_str().unwrap().contains(&at));
    assert_eq!(j["newest"]["toolkit"], "13.6.0");

    // Human output says it too, in Chinese as well.
    let out = run(
        home.path(),
        Some(&dead),
        &["tables", "--refresh", "--lang", "zh"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("离线"));
}

#[test]
fn a_partial_refresh_keeps_the_cached_parts_of_the_sources_that_failed() {
    let home = tempfile::tempdir().unwrap();
    let full = sources();
    refreshed(home.path(), &full);

    // Now only NVIDIA answers: the wheel lists come from the cache.
    let nvidia_only = Server::start();
    nvidia_only.add(
        "/compute/cuda/redist/",
        bytes(fixture("cuda-redist-index.html")),
    );
    nvidia_only.add(
        "/compute/cuda/redist/redistrib_13.6.0.json",
        bytes(fixture("redistrib_13.6.0.json")),
    );
    nvidia_only.add(
        "/compute/cudnn/redist/",
        bytes(fixture("cudnn-redist-index.html")),
    );
    let out = run(
        home.path(),
        Some(&nvidia_only.url("")),
        &["tables", "--refresh", "--json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    assert_eq!(j["refresh"]["status"], "partial");
    assert_eq!(j["using"]["kind"], "live");
    assert_eq!(
        j["pypi"]["nvidia-cudnn-cu13"], "9.27.0.42",
        "PyPI part from the cache"
    );
    let cache: Value =
        serde_json::from_slice(&std::fs::read(cache_file(home.path())).unwrap()).unwrap();
    assert_eq!(cache["torch"]["items"].as_array().unwrap().len(), 3);
    // The cuDNN 9.28 manifest was not served this time: what was read of it stays.
    assert_eq!(cache["cudnn"]["items"][0]["version"], "9.28.0.1");

    let after = json(&run(home.path(), None, &RECOMMEND_WINDOWS_PY314));
    assert_eq!(after["torch"]["variant"], "cu130");
}
