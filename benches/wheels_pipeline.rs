//! The wheels method's first install against NVIDIA's real wheels (CUDA 13.2's developer
//! components and cuDNN 9.27 for Linux, 1.7 GB) on a loopback index: the install's wall
//! time and, in the same run, the time to download the same wheels alone with our
//! downloader (one after another, 4 connections each, as the install fetches them).
//! Goal (issue #21): wall − download ≤ 3 s on a fast link — each wheel unpacked as soon as
//! it is verified, the cuDNN wheel fetched while the tree is unpacked. The steps' own
//! times are printed too (they overlap now, so they add up to more than the wall).
//!
//! Run: `cargo bench --bench wheels_pipeline`.
//! - `BENCH_WHEELS=DIR`: the wheels (default: `pip download` them once into
//!   `target/bench-wheels/linux`, which needs PyPI).
//! - `BENCH_BASELINE=/path/to/an/older/cuda-setup`: that binary too, side by side.
//! - `BENCH_RUNS=N` (default 1): installs per binary, alternated; the best is printed.
//! - `BENCH_KEEP=1`: the last install's root stays in `target/bench-wheels-pipeline/root`
//!   (its run log has each step's start and end).
//! - `BENCH_LINK_MBPS=N`: the index serves each connection at N/4 MB/s (about N MB/s for a
//!   wheel fetched over 4 connections), a link instead of loopback. On loopback the
//!   download itself keeps a core busy, so on 2 cores it competes with the unpacking it
//!   should hide behind; on a link it waits, and the unpacking fills those waits.

#[path = "support/real_wheels.rs"]
mod real_wheels;

#[path = "../tests/support/server.rs"]
mod server;

#[path = "../tests/support/wheels.rs"]
mod wheels;

// What the stand-in wheels in `wheels` are made with (unused here, needed to build it).
#[path = "../tests/support/standin.rs"]
mod standin;

#[path = "../tests/support/pe.rs"]
mod pe;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cuda_setup_core::download::{self, Cancel, Expected, Options, Request};

const CONNECTIONS: usize = 4;

/// One install: its wall time and each step's (name, ms), summed by name.
type Run = (Duration, Vec<(String, u64)>);

/// Every wheel fetched with our downloader, one after another, as the install does.
fn download_alone(server: &server::Server, files: &[wheels::IndexFile], dir: &Path) -> Duration {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let t = Instant::now();
    for f in files {
        let req = Request {
            url: server.url(&format!("/files/{}", f.filename)),
            mirrors: vec![],
            expected: Expected {
                sha256: Some(f.sha256.clone()),
                md5: None,
                size: Some(f.size),
            },
            dest: dir.join(&f.filename),
            connections: CONNECTIONS,
            cache_dir: None,
            bundle_dirs: vec![],
            allow_http: true,
        };
        download::download(&req, &Options::default(), &(), &Cancel::default()).expect("download");
    }
    let d = t.elapsed();
    let _ = std::fs::remove_dir_all(dir);
    d
}

/// One first install into a fresh root: its wall time and the steps' (name, ms), summed
/// by name.
fn install(bin: &Path, index: &str, root: &Path) -> Run {
    let _ = std::fs::remove_dir_all(root);
    let t = Instant::now();
    let out = Command::new(bin)
        .args([
            "install",
            "--unattended",
            "--goal",
            "developer",
            "--cuda",
            "13.2",
            "--method",
            "wheels",
            "--pypi-mirror",
            index,
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--os",
            "linux",
            "--connections",
            &CONNECTIONS.to_string(),
            "--json",
            "--root",
        ])
        .arg(root)
        .env("LANG", "C")
        .output()
        .expect("run cuda-setup");
    let wall = t.elapsed();
    assert!(
        out.status.success(),
        "{} install failed:\n{}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the JSON report");
    let mut steps: Vec<(String, u64)> = Vec::new();
    for s in report["steps"].as_array().into_iter().flatten() {
        let name = s["name"].as_str().unwrap_or("?").to_string();
        let ms = s["elapsed_ms"].as_u64().unwrap_or(0);
        match steps.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => *t += ms,
            None => steps.push((name, ms)),
        }
    }
    if std::env::var_os("BENCH_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(root);
    }
    (wall, steps)
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn main() {
    let dir = real_wheels::dir();
    let files = wheels::files(&[&dir]);
    assert!(
        files.iter().any(|f| f.project == "nvidia-cudnn-cu13"),
        "{} lacks the cuDNN wheel",
        dir.display()
    );
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let server = wheels::serve(&files);
    let index = server.url("/simple");
    let link_mbps: Option<f64> = std::env::var("BENCH_LINK_MBPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|r: &f64| *r > 0.0);
    if let Some(mbps) = link_mbps {
        for f in &files {
            server.set_fault(
                &format!("/files/{}", f.filename),
                server::Fault {
                    throttle: Some((mbps * 1e6 / CONNECTIONS as f64) as u64),
                    ..Default::default()
                },
            );
        }
    }
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let work = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-wheels-pipeline");
    let mut bins = vec![(
        "this build",
        PathBuf::from(env!("CARGO_BIN_EXE_cuda-setup")),
    )];
    if let Some(b) = std::env::var_os("BENCH_BASELINE") {
        bins.push(("baseline", PathBuf::from(b)));
    }
    let link = link_mbps.map_or("loopback, unthrottled".to_string(), |r| {
        format!(
            "{r} MB/s link ({:.0} MB/s per connection)",
            r / CONNECTIONS as f64
        )
    });
    println!(
        "wheels_pipeline: {} wheels, {:.2} GB, index on {link}, {CONNECTIONS} connections",
        files.len(),
        bytes as f64 / 1e9
    );
    let mut download = Duration::MAX;
    let mut best: Vec<Option<Run>> = vec![None; bins.len()];
    for _ in 0..runs {
        download = download.min(download_alone(&server, &files, &work.join("download")));
        for (i, (_, bin)) in bins.iter().enumerate() {
            let r = install(bin, &index, &work.join("root"));
            if best[i].as_ref().is_none_or(|(w, _)| r.0 < *w) {
                best[i] = Some(r);
            }
        }
    }
    println!(
        "  download alone (ours, one wheel after another): {}",
        secs(download)
    );
    for ((label, bin), r) in bins.iter().zip(&best) {
        let (wall, steps) = r.as_ref().expect("ran");
        let over = wall.as_secs_f64() - download.as_secs_f64();
        println!(
            "  {label} ({}): install wall {}, wall − download {:.2} s (goal ≤ 3 s)",
            bin.display(),
            secs(*wall),
            over
        );
        let parts: Vec<String> = steps
            .iter()
            .filter(|(_, ms)| *ms >= 50)
            .map(|(n, ms)| format!("{n} {:.2} s", *ms as f64 / 1000.0))
            .collect();
        println!("      steps: {}", parts.join(", "));
    }
}
