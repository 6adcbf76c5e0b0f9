//! Download throughput on loopback against curl and aria2c, in the same run.
//!
//! 1. Unthrottled, a 2 GiB file: cuda-setup (1 and 8 connections, with and without
//!    hashing) vs `curl -o`. Goal: ≥ 0.95× curl; hashing adds ≤ 5 % wall time.
//! 2. Each connection throttled to 20 MB/s (a CDN that limits per connection), 400 MB:
//!    cuda-setup with 8 connections vs curl vs `aria2c -x8 -s8`. Goal: ≥ 5× curl,
//!    ≥ 0.9× aria2c.
//!
//! Run: `cargo bench --bench download` (aria2c: `apt-get install aria2`).
//! Sizes can be changed with BENCH_BIG_MB and BENCH_THROTTLED_MB.

#[path = "../tests/support/server.rs"]
mod server;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cuda_setup::download::{self, Cancel, Expected, Options, Request};
use server::{Body, Fault, Server, pattern};

fn env_mb(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn make_file(path: &Path, mb: u64) -> (u64, String) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let block = pattern(1 << 20, 3);
    for i in 0..mb {
        let mut b = block.clone();
        b[..8].copy_from_slice(&i.to_le_bytes()); // every MiB differs
        f.write_all(&b).unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let (d, n) = download::hash_file(path).unwrap();
    (n, d.sha256)
}

fn ours(
    url: &str,
    sha: &str,
    size: u64,
    dest: &Path,
    connections: usize,
    verify: bool,
) -> Duration {
    let _ = std::fs::remove_file(dest);
    let req = Request {
        url: url.into(),
        mirrors: vec![],
        expected: Expected {
            sha256: Some(sha.into()),
            md5: None,
            size: Some(size),
        },
        dest: dest.into(),
        connections,
        cache_dir: None,
        bundle_dirs: vec![],
        allow_http: true,
    };
    let opts = Options {
        verify,
        ..Options::default()
    };
    let t = Instant::now();
    download::download(&req, &opts, &(), &Cancel::default()).expect("download");
    t.elapsed()
}

fn tool(cmd: &mut Command, dest: &Path) -> Option<Duration> {
    let _ = std::fs::remove_file(dest);
    let t = Instant::now();
    let ok = cmd.status().ok()?.success();
    ok.then(|| t.elapsed())
}

fn mbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn row(name: &str, bytes: u64, d: Option<Duration>, base: Option<Duration>) {
    match d {
        Some(d) => {
            let rel = base
                .map(|b| format!("   {:.2}× curl", b.as_secs_f64() / d.as_secs_f64()))
                .unwrap_or_default();
            println!(
                "  {name:<34} {:7.2} s  {:8.1} MB/s{rel}",
                d.as_secs_f64(),
                mbps(bytes, d)
            );
        }
        None => println!("  {name:<34} not available"),
    }
}

fn main() {
    let dir = tempfile::tempdir_in(
        std::env::var("BENCH_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string()),
    )
    .unwrap();
    let server = Server::start();

    // ---- 1. unthrottled ----
    let big_mb = env_mb("BENCH_BIG_MB", 2048);
    let src = dir.path().join("big.bin");
    let (size, sha) = make_file(&src, big_mb);
    server.add("/big.bin", Body::File(src.clone(), size));
    let url = server.url("/big.bin");
    let dest = dir.path().join("out.bin");
    println!("unthrottled, {} MiB on loopback", big_mb);
    let curl = tool(
        Command::new("curl").args(["-s", "-o"]).arg(&dest).arg(&url),
        &dest,
    );
    // Each measured twice, the better kept: the page cache makes the first run noisy.
    let best = |f: &dyn Fn() -> Duration| f().min(f());
    let o1 = best(&|| ours(&url, &sha, size, &dest, 1, true));
    let o8 = best(&|| ours(&url, &sha, size, &dest, 8, true));
    let o8n = best(&|| ours(&url, &sha, size, &dest, 8, false));
    let curl = curl.min(tool(
        Command::new("curl").args(["-s", "-o"]).arg(&dest).arg(&url),
        &dest,
    ));
    row("curl -o", size, curl, curl);
    row("cuda-setup, 1 connection", size, Some(o1), curl);
    row("cuda-setup, 8 connections", size, Some(o8), curl);
    row("cuda-setup, 8 conn., no hashing", size, Some(o8n), curl);
    println!(
        "  hashing adds {:+.1} % wall time (8 connections)",
        (o8.as_secs_f64() / o8n.as_secs_f64() - 1.0) * 100.0
    );
    std::fs::remove_file(&src).ok();
    std::fs::remove_file(&dest).ok();

    // ---- 2. throttled per connection ----
    let t_mb = env_mb("BENCH_THROTTLED_MB", 400);
    let src = dir.path().join("t.bin");
    let (size, sha) = make_file(&src, t_mb);
    server.add_with(
        "/t.bin",
        Body::File(src.clone(), size),
        Fault {
            throttle: Some(20_000_000),
            ..Fault::default()
        },
    );
    let url = server.url("/t.bin");
    println!("\neach connection throttled to 20 MB/s, {} MiB", t_mb);
    let curl = tool(
        Command::new("curl").args(["-s", "-o"]).arg(&dest).arg(&url),
        &dest,
    );
    let aria = tool(
        Command::new("aria2c")
            .args([
                "-q",
                "-x8",
                "-s8",
                "-k1M",
                "--allow-overwrite=true",
                "--file-allocation=none",
                "-d",
            ])
            .arg(dir.path())
            .args(["-o", "out.bin"])
            .arg(&url),
        &dest,
    );
    let o8 = ours(&url, &sha, size, &dest, 8, true);
    let o8n = ours(&url, &sha, size, &dest, 8, false);
    row("curl -o", size, curl, curl);
    row("aria2c -x8 -s8", size, aria, curl);
    row("cuda-setup, 8 connections", size, Some(o8), curl);
    row("cuda-setup, 8 conn., no hashing", size, Some(o8n), curl);
    println!(
        "  hashing adds {:+.1} % wall time (8 connections)",
        (o8.as_secs_f64() / o8n.as_secs_f64() - 1.0) * 100.0
    );
    if let Some(a) = aria {
        println!(
            "  cuda-setup / aria2c: {:.2}×",
            a.as_secs_f64() / o8.as_secs_f64()
        );
    }
}
