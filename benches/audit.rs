//! `repair`'s audit of a real wheels install (CUDA 13.2 developer components + cuDNN
//! 9.27, NVIDIA's real wheels), warm and with a cold file cache. Goal: ≤ 0.5 s warm,
//! ≤ 2 s cold, the same findings as before.
//!
//! The tree is installed once, by the build under test, from a loopback index this bench
//! serves over the wheels in `BENCH_WHEELS` (a folder; default: `pip download` of the set
//! below into `target/bench-wheels/linux`, once). Cold: every file under the root is
//! written back (`sync`) and its pages dropped with `posix_fadvise(POSIX_FADV_DONTNEED)`
//! before each run — the tree's pages only, not the binary's or Python's; drop_caches
//! needs privileges a container rarely has.
//!
//! `BENCH_BASELINE=/path/to/an/older/cuda-setup` measures that binary too, on the same
//! tree in the same run (interleaved), and compares the two audits' findings.
//! `BENCH_DIR` is the scratch folder (the tree takes ~3.5 GB), `BENCH_RUNS` the warm runs
//! per binary (default 7), `BENCH_COLD_RUNS` the cold ones (default 3).
//!
//! Run: `cargo bench --bench audit`

#[path = "support/real_wheels.rs"]
mod real_wheels;

#[path = "../tests/support/server.rs"]
mod server;

#[path = "../tests/support/wheels.rs"]
mod wheels;

// What wheels.rs's stand-in wheels use (this bench serves only real ones).
#[path = "../tests/support/standin.rs"]
mod standin;

#[path = "../tests/support/pe.rs"]
mod pe;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Writes back, then drops from the page cache, every file under `dir`.
#[cfg(unix)]
fn evict(dir: &Path) -> usize {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file()
                && let Ok(f) = std::fs::File::open(e.path())
            {
                use std::os::unix::io::AsRawFd;
                // SAFETY: a valid open descriptor; offset 0, length 0 means the whole file.
                unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
                n += 1;
            }
        }
    }
    n
}

/// No page-cache eviction outside Unix: "cold" runs there are warm, and report 0 files.
#[cfg(not(unix))]
fn evict(_: &Path) -> usize {
    0
}

/// One audit: its wall time and its JSON (the findings).
fn audit(bin: &Path, root: &Path) -> (Duration, serde_json::Value) {
    let t = Instant::now();
    let out = Command::new(bin)
        .args(["repair", "--root"])
        .arg(root)
        .args(["--os", "linux", "--json"])
        .env("LANG", "C")
        .output()
        .expect("run cuda-setup repair");
    let took = t.elapsed();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{} repair gave no JSON ({e}): {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (took, json)
}

fn stats(mut d: Vec<Duration>) -> String {
    d.sort();
    let s = |x: Duration| x.as_secs_f64();
    format!(
        "median {:6.3} s  min {:6.3} s  max {:6.3} s",
        s(d[d.len() / 2]),
        s(d[0]),
        s(d[d.len() - 1])
    )
}

fn main() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_cuda-setup"));
    let baseline = std::env::var_os("BENCH_BASELINE").map(PathBuf::from);
    let runs = env_usize("BENCH_RUNS", 7).max(1);
    let cold_runs = env_usize("BENCH_COLD_RUNS", 3).max(1);
    let base =
        std::env::var("BENCH_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let work = tempfile::tempdir_in(base).unwrap();
    let root = work.path().join("root");

    let files = wheels::files(&[&real_wheels::dir()]);
    let server = wheels::serve(&files);
    let t = Instant::now();
    let out = Command::new(&ours)
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
            &server.url("/simple"),
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--os",
            "linux",
            "--connections",
            "4",
            "--json",
            "--root",
        ])
        .arg(&root)
        .env("LANG", "C")
        .output()
        .expect("run cuda-setup install");
    assert!(
        out.status.success(),
        "install failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "tree: CUDA 13.2 + cuDNN 9.27 from {} wheels, installed in {:.1} s at {}",
        files.len(),
        t.elapsed().as_secs_f64(),
        root.display()
    );

    let mut bins: Vec<(&str, PathBuf)> = vec![("this build", ours)];
    if let Some(b) = baseline {
        bins.push(("baseline", b));
    }
    // Warm-up (and the findings each binary reports).
    let findings: Vec<serde_json::Value> = bins.iter().map(|(_, b)| audit(b, &root).1).collect();
    let mut warm: Vec<Vec<Duration>> = vec![Vec::new(); bins.len()];
    for _ in 0..runs {
        for (k, (_, b)) in bins.iter().enumerate() {
            warm[k].push(audit(b, &root).0);
        }
    }
    let mut cold: Vec<Vec<Duration>> = vec![Vec::new(); bins.len()];
    let mut evicted = 0;
    for _ in 0..cold_runs {
        for (k, (_, b)) in bins.iter().enumerate() {
            evicted = evict(&root);
            cold[k].push(audit(b, &root).0);
        }
    }

    println!("repair --root R --os linux --json   (goal: warm ≤ 0.5 s, cold ≤ 2 s)");
    for (k, (name, b)) in bins.iter().enumerate() {
        println!("{name:>10}: {}", b.display());
        println!("      warm ({runs:2}): {}", stats(warm[k].clone()));
        println!("      cold ({cold_runs:2}): {}", stats(cold[k].clone()));
    }
    println!(
        "cold = {evicted} files under the root dropped from the page cache (posix_fadvise DONTNEED) before each run"
    );
    let problems = &findings[0]["problems"];
    match findings.get(1) {
        Some(b) if *b == findings[0] => {
            println!("findings: identical ({problems} problems)")
        }
        Some(b) => println!(
            "findings DIFFER\n  this build: {}\n  baseline:   {b}",
            findings[0]
        ),
        None => println!("findings: {problems} problems"),
    }
    drop(server);
}
