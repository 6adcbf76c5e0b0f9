//! Download throughput on loopback against curl and aria2c, in the same run.
//!
//! 1. Unthrottled, a 2 GiB file: cuda-setup (1 and 8 connections, with and without
//!    hashing) vs `curl -o`. Goal: ≥ 0.95× curl; hashing adds ≤ 5 % wall time.
//! 2. Each connection throttled to 20 MB/s (a CDN that limits per connection), 400 MB:
//!    cuda-setup with 8 connections vs curl vs `aria2c -x8 -s8`. Goal: ≥ 5× curl,
//!    ≥ 0.9× aria2c.
//!
//! 3. A torch wheel on a PyTorch-style index, throttled the same way: the PyTorch
//!    goal's own path (tags from `pip debug`, index, engine, verified) vs `pip download`.
//!
//! Run: `cargo bench --bench download` (aria2c: `apt-get install aria2`); only the third:
//! `BENCH_ONLY=torch cargo bench --bench download`.
//! Sizes can be changed with BENCH_BIG_MB, BENCH_THROTTLED_MB and BENCH_TORCH_MB.

#[path = "../tests/support/server.rs"]
mod server;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cuda_setup_core::download::{self, Cancel, Expected, Options, Request};
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
    row_vs(name, bytes, d, base, "curl")
}

fn row_vs(name: &str, bytes: u64, d: Option<Duration>, base: Option<Duration>, base_name: &str) {
    match d {
        Some(d) => {
            let rel = base
                .map(|b| format!("   {:.2}× {base_name}", b.as_secs_f64() / d.as_secs_f64()))
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
    if std::env::var("BENCH_ONLY").as_deref() == Ok("torch") {
        torch_wheel(&server, dir.path());
        return;
    }

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
    torch_wheel(&server, dir.path());
}

/// A wheel pip accepts (pip opens the zip and reads its metadata): one stored, `mb` MiB
/// member plus the dist-info.
fn make_wheel(path: &Path, py: &str, mb: u64) -> (u64, String) {
    use std::io::Write;
    use zip::write::SimpleFileOptions;
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let stored = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    z.start_file("torch/blob.bin", stored).unwrap();
    let block = pattern(1 << 20, 5);
    for i in 0..mb {
        let mut b = block.clone();
        b[..8].copy_from_slice(&i.to_le_bytes());
        z.write_all(&b).unwrap();
    }
    let info = "torch-2.13.0+cu126.dist-info";
    for (file, text) in [
        (
            "METADATA",
            "Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0+cu126\n".to_string(),
        ),
        (
            "WHEEL",
            format!(
                "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\nTag: {py}-{py}-manylinux_2_28_x86_64\n"
            ),
        ),
        ("RECORD", String::new()),
    ] {
        z.start_file(format!("{info}/{file}"), stored).unwrap();
        z.write_all(text.as_bytes()).unwrap();
    }
    z.finish().unwrap();
    let (d, n) = download::hash_file(path).unwrap();
    (n, d.sha256)
}

/// Part 3, the PyTorch goal's big file: a torch wheel on a PyTorch-style index, each
/// connection throttled to 20 MB/s. `pip download torch==V --no-deps` (what `pip install`
/// does for it) vs the install step's own path: this interpreter's tags from `pip debug`,
/// the index page read, the wheel picked and fetched by the engine, verified.
fn torch_wheel(server: &Server, dir: &Path) {
    let py = Command::new("python3")
        .args([
            "-c",
            "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')",
        ])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|t| t.starts_with("cp"));
    let Some(py) = py else {
        println!(
            "
torch wheel: no python3 here, skipped"
        );
        return;
    };
    let mb = env_mb("BENCH_TORCH_MB", 400);
    let name = format!("torch-2.13.0+cu126-{py}-{py}-manylinux_2_28_x86_64.whl");
    let src = dir.join(&name);
    let (size, sha) = make_wheel(&src, &py, mb);
    // pip asks for `%2B` where the name has `+`; this server does not decode paths.
    for path in [name.clone(), name.replace('+', "%2B")] {
        server.add_with(
            &format!("/whl/cu126/{path}"),
            Body::File(src.clone(), size),
            Fault {
                throttle: Some(20_000_000),
                ..Fault::default()
            },
        );
    }
    server.add_typed(
        "/whl/cu126/torch/",
        Body::Bytes(std::sync::Arc::new(
            format!(
                "<html><body><a href=\"/whl/cu126/{name}#sha256={sha}\">{name}</a></body></html>"
            )
            .into_bytes(),
        )),
        "text/html",
    );
    let index = server.url("/whl/cu126");
    println!(
        "
torch wheel ({py}), each connection throttled to 20 MB/s, {mb} MiB"
    );
    let out = dir.join("pip-out");
    let pip = tool(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-cache-dir",
                "-d",
            ])
            .arg(&out)
            .args(["torch==2.13.0", "--index-url", &index]),
        &out.join(&name),
    );
    let dest = dir.join("ours").join(&name);
    let t = Instant::now();
    let debug = Command::new("python3")
        .args(["-m", "pip", "debug", "--verbose"])
        .output()
        .expect("pip debug");
    let tags =
        cuda_setup_core::steps::torch_wheel::parse_tags(&String::from_utf8_lossy(&debug.stdout));
    let files = cuda_setup_core::wheels::index::fetch_project(&index, "torch", &Options::default())
        .unwrap();
    let f = cuda_setup_core::steps::torch_wheel::pick(&files, "2.13.0", &tags).expect("a wheel");
    let _ = std::fs::remove_file(&dest);
    let req = Request {
        url: f.url.clone(),
        mirrors: vec![],
        expected: Expected {
            sha256: f.sha256.clone(),
            md5: None,
            size: f.size,
        },
        dest: dest.clone(),
        connections: 8,
        cache_dir: None,
        bundle_dirs: vec![],
        allow_http: true,
    };
    download::download(&req, &Options::default(), &(), &Cancel::default()).expect("download");
    let ours = t.elapsed();
    row_vs("pip download --no-deps", size, pip, pip, "pip");
    row_vs(
        "cuda-setup (tags + index + 8 conn.)",
        size,
        Some(ours),
        pip,
        "pip",
    );
    std::fs::remove_file(&src).ok();
    std::fs::remove_dir_all(&out).ok();
    std::fs::remove_file(&dest).ok();
}
