//! `install --method wheels` run again on a finished install (nothing to do): wall time
//! and where it goes (the downloads' check, cuDNN's check, the verify step). Goal: ≤ 1 s.
//! The first install is timed too (it builds the tree the no-op runs look at).
//!
//! NVIDIA's real Linux wheels for CUDA 13.2 + cuDNN 9.27 (1.7 GB) are served from a
//! loopback index started here: from `BENCH_WHEELS` (a folder of .whl), by default
//! `target/bench-wheels/linux`, pip-downloaded there the first time.
//!
//! Run: `cargo bench --bench second_run`. `BENCH_BASELINE=/path/to/an/older/cuda-setup`
//! measures that binary too, on its own tree, in the same run. `BENCH_RUNS` no-op runs
//! each (default 5; the median is shown). `BENCH_DIR` the scratch folder.

#[path = "support/real_wheels.rs"]
mod real_wheels;

#[path = "../tests/support/server.rs"]
mod server;

#[path = "../tests/support/wheels.rs"]
mod wheels;

// What `wheels` builds its stand-ins with (unused here, needed to compile it).
#[path = "../tests/support/standin.rs"]
mod standin;

#[path = "../tests/support/pe.rs"]
mod pe;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One run: wall seconds, and the JSON's (step name → summed ms).
struct Run {
    wall: f64,
    steps: Vec<(String, u64)>,
}

fn install(bin: &Path, index: &str, root: &Path) -> Run {
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
            "--root",
            root.to_str().unwrap(),
            "--connections",
            "4",
            "--json",
        ])
        .env("LANG", "C")
        .output()
        .expect("run cuda-setup");
    let wall = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{} install failed:\n{}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json output");
    let mut steps: Vec<(String, u64)> = Vec::new();
    for s in j["steps"].as_array().into_iter().flatten() {
        let name = s["name"].as_str().unwrap_or("?").to_string();
        let ms = s["elapsed_ms"].as_u64().unwrap_or(0);
        match steps.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => *t += ms,
            None => steps.push((name, ms)),
        }
    }
    Run { wall, steps }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// First install, then `runs` no-op runs: (first, median no-op wall, last no-op's steps).
fn measure(bin: &Path, index: &str, scratch: &Path, runs: usize) -> (Run, f64, Run) {
    let root = scratch.join("root");
    let first = install(bin, index, &root);
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let r = install(bin, index, &root);
        walls.push(r.wall);
        last = Some(r);
    }
    (first, median(walls), last.expect("one run at least"))
}

fn show(label: &str, first: &Run, noop: f64, last: &Run) {
    let steps = |r: &Run| {
        r.steps
            .iter()
            .filter(|(_, ms)| *ms >= 5)
            .map(|(n, ms)| format!("{n} {:.2}", *ms as f64 / 1000.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("{label}:");
    println!("  first install   {:6.2} s  ({})", first.wall, steps(first));
    println!(
        "  no-op (median)  {:6.2} s  (last: {})  goal ≤ 1 s: {}",
        noop,
        steps(last),
        if noop <= 1.0 { "met" } else { "NOT met" }
    );
    // Start-up, detection and resolving the index happen before the first step.
    let in_steps: u64 = last.steps.iter().map(|(_, ms)| ms).sum();
    println!(
        "  last no-op: {:.2} s in its steps, {:.2} s before and between them",
        in_steps as f64 / 1000.0,
        last.wall - in_steps as f64 / 1000.0
    );
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let base =
        std::env::var("BENCH_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let dir = real_wheels::dir();
    let files = wheels::files(&[&dir]);
    let total: u64 = files.iter().map(|f| f.size).sum();
    println!(
        "{} wheels, {:.2} GB, from {}",
        files.len(),
        total as f64 / 1e9,
        dir.display()
    );
    let server = wheels::serve(&files);
    let index = server.url("/html");

    let ours = PathBuf::from(env!("CARGO_BIN_EXE_cuda-setup"));
    let mut bins = vec![("this build", ours)];
    if let Ok(b) = std::env::var("BENCH_BASELINE") {
        bins.push(("baseline", PathBuf::from(b)));
    }
    for (label, bin) in bins {
        let scratch = tempfile::tempdir_in(&base).unwrap();
        let (first, noop, last) = measure(&bin, &index, scratch.path(), runs);
        show(&format!("{label} ({})", bin.display()), &first, noop, &last);
    }
}
