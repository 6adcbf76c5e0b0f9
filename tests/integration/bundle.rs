//! `bundle` end to end: NVIDIA's paths served from a loopback mirror, hashes taken from
//! the md5sum.txt and cuDNN manifest NVIDIA publishes; then the bundle used with the
//! network unreachable.

use crate::support;

use std::process::Command;
use std::sync::Arc;

use serde_json::Value;
use support::server::{Body, Server, pattern};

fn md5_sha(bytes: &[u8], dir: &std::path::Path) -> (String, String) {
    let p = dir.join("h.bin");
    std::fs::write(&p, bytes).unwrap();
    let (d, _) = cuda_setup_core::download::hash_file(&p).unwrap();
    std::fs::remove_file(&p).unwrap();
    (d.md5, d.sha256)
}

#[test]
fn bundle_then_offline_download() {
    let work = tempfile::tempdir().unwrap();
    let server = Server::start();
    // A stand-in runfile (its real bytes are NVIDIA's; ours need only a published hash).
    let runfile = Arc::new(pattern(700_000, 11));
    let (run_md5, run_sha) = md5_sha(&runfile, work.path());
    server.add(
        "/compute/cuda/11.4.4/local_installers/cuda_11.4.4_470.82.01_linux.run",
        Body::Bytes(runfile.clone()),
    );
    server.add(
        "/compute/cuda/11.4.4/docs/sidebar/md5sum.txt",
        Body::Bytes(Arc::new(
            format!("0123456789abcdef0123456789abcdef  local_installers/cuda_11.4.4_472.50_windows.exe\n{run_md5}  local_installers/cuda_11.4.4_470.82.01_linux.run\n").into_bytes(),
        )),
    );
    let archive = Arc::new(pattern(300_000, 12));
    let (ar_md5, ar_sha) = md5_sha(&archive, work.path());
    server.add("/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz", Body::Bytes(archive.clone()));
    server.add(
        "/compute/cudnn/redist/redistrib_8.9.7.json",
        Body::Bytes(Arc::new(
            format!(
                r#"{{"release_date":"2024-03-15","release_label":"8.9.7","release_product":"cudnn","cudnn":{{"version":"8.9.7.29","cuda_variant":["11","12"],
                "linux-x86_64":{{"cuda11":{{"relative_path":"cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz","sha256":"{ar_sha}","md5":"{ar_md5}","size":"{}"}}}}}}}}"#,
                archive.len()
            )
            .into_bytes(),
        )),
    );

    let bundle = work.path().join("bundle");
    let cache = work.path().join("cache");
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args([
            "bundle",
            "--json",
            "--os",
            "linux",
            "--cuda",
            "11.4.4",
            "--cudnn",
            "8.9.7",
            "--gpu-cc",
            "8.6",
            "--driver",
            "470.82.01",
        ])
        .args(["--mirror", &format!("http://{}", server.addr), "--out"])
        .arg(&bundle)
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value =
        serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    let files = m["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["kind"], "toolkit_installer");
    assert_eq!(files[0]["sha256"], run_sha.as_str());
    assert_eq!(files[1]["kind"], "cudnn_archive");
    assert_eq!(files[1]["sha256"], ar_sha.as_str());
    assert_eq!(
        std::fs::read(bundle.join("cuda_11.4.4_470.82.01_linux.run")).unwrap(),
        *runfile
    );

    // Offline: the network is gone, the bundle is enough.
    drop(server);
    let dest = work.path().join("machine/installer.run");
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["download", "--no-cache", "--url", "https://developer.download.nvidia.com/compute/cuda/11.4.4/local_installers/cuda_11.4.4_470.82.01_linux.run"])
        .args(["--sha256", &run_sha, "--bundle"])
        .arg(&bundle)
        .arg("--out")
        .arg(&dest)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["source"]["kind"], "bundle");
    assert_eq!(std::fs::read(&dest).unwrap(), *runfile);
}

#[test]
fn a_pytorch_bundle_is_explained() {
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["bundle", "--goal", "pytorch", "--out", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pip download"));
}
