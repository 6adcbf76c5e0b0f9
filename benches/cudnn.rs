//! `cudnn install` against what a user does by hand (`unzip -q` then `cp -r` of bin,
//! include and lib into the toolkit), in the same run: wall time and peak RSS.
//! Goal: ≤ 0.5× their time, peak RSS ≤ 64 MiB.
//!
//! The same for NVIDIA's Linux .tar.xz against `tar -xJf` + `cp -a`.
//!
//! Run: `cargo bench --bench cudnn` (BENCH_CUDNN_MB sets the zip's unpacked size,
//! default 1024, BENCH_CUDNN_TAR_MB the tarball's, default 512; BENCH_DIR the scratch
//! folder).

#[path = "../tests/support/server.rs"]
mod server;

#[path = "../tests/support/cudnn_zip.rs"]
mod cudnn_zip;

#[path = "../tests/support/cudnn_tar.rs"]
mod cudnn_tar;

use std::path::Path;
use std::process::Command;

/// (seconds, peak RSS KiB) of a command, from GNU time.
fn measure(cmd: &mut Command) -> (f64, u64) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "TIME %e %M"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .output()
        .expect("GNU time (apt-get install time)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .rfind(|l| l.starts_with("TIME "))
        .expect("time output");
    let mut w = line.split_whitespace().skip(1);
    (
        w.next().unwrap().parse().unwrap(),
        w.next().unwrap().parse().unwrap(),
    )
}

fn main() {
    let mb: usize = std::env::var("BENCH_CUDNN_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let base =
        std::env::var("BENCH_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let dir = tempfile::tempdir_in(base).unwrap();
    // 8 DLLs sharing the size, as in cuDNN 9.27 (where two engines DLLs dominate).
    let spec = cudnn_zip::Spec {
        version: "9.27.0.42",
        cuda_major: 12,
        dll_size: (mb << 20) / 8,
    };
    let zip = dir.path().join(format!("{}.zip", spec.top()));
    let t = std::time::Instant::now();
    spec.write(&zip);
    let packed = std::fs::metadata(&zip).unwrap().len();
    println!(
        "archive: {} MiB unpacked, {} MiB packed ({} entries), built in {:.1} s",
        mb,
        packed >> 20,
        spec.files().len(),
        t.elapsed().as_secs_f64()
    );

    let by_hand = |d: &Path| {
        let tk = cudnn_zip::toolkit(d, "12.9.1");
        let tmp = d.join("unzipped");
        let top = tmp.join(spec.top());
        let script = format!(
            "unzip -q '{z}' -d '{t}' && cp -r '{top}/bin/x64/.' '{tk}/bin/' && cp -r '{top}/include/.' '{tk}/include/' && cp -r '{top}/lib/x64/.' '{tk}/lib/x64/'",
            z = zip.display(),
            t = tmp.display(),
            top = top.display(),
            tk = tk.display()
        );
        measure(Command::new("sh").args(["-c", &script]))
    };
    let ours = |d: &Path| {
        let tk = cudnn_zip::toolkit(d, "12.9.1");
        measure(
            Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
                .args(["cudnn", "install", "--archive"])
                .arg(&zip)
                .arg("--cuda-dir")
                .arg(&tk),
        )
    };
    compare(dir.path(), "unzip -q + cp -r", &by_hand, &ours);
    linux_tarball(dir.path());
}

/// Alternates the two, twice each, keeping the best (the page cache warms on the first
/// run), and prints wall time and peak RSS.
fn compare(
    dir: &Path,
    hand_name: &str,
    by_hand: &dyn Fn(&Path) -> (f64, u64),
    ours: &dyn Fn(&Path) -> (f64, u64),
) {
    let mut hand = (f64::MAX, 0);
    let mut us = (f64::MAX, 0);
    for i in 0..2 {
        let h = by_hand(&dir.join(format!("hand{i}")));
        let o = ours(&dir.join(format!("ours{i}")));
        if h.0 < hand.0 {
            hand = h;
        }
        if o.0 < us.0 {
            us = o;
        }
        let _ = std::fs::remove_dir_all(dir.join(format!("hand{i}")));
        let _ = std::fs::remove_dir_all(dir.join(format!("ours{i}")));
    }
    println!(
        "  {hand_name:<28} {:6.2} s   peak RSS {:6.1} MiB",
        hand.0,
        hand.1 as f64 / 1024.0
    );
    println!(
        "  cuda-setup cudnn install     {:6.2} s   peak RSS {:6.1} MiB   ({:.2}× their time; validates, hashes, journals)",
        us.0,
        us.1 as f64 / 1024.0,
        us.0 / hand.0
    );
}

/// NVIDIA's Linux .tar.xz (BENCH_CUDNN_TAR_MB unpacked, default 512) against `tar -xJf`
/// then `cp -a` of include and lib into the toolkit (links kept), as users do by hand.
/// Ours checks and extracts in one pass of the stream, as `tar` does.
fn linux_tarball(dir: &Path) {
    let mb: usize = std::env::var("BENCH_CUDNN_TAR_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let spec = cudnn_tar::LinuxSpec {
        version: "9.27.0.42",
        cuda_major: 12,
        lib_size: (mb << 20) / 8,
    };
    let tarball = dir.join(spec.file_name());
    let t = std::time::Instant::now();
    spec.write(&tarball);
    println!(
        "\nLinux tarball: {} MiB unpacked, {} MiB packed, built in {:.1} s",
        mb,
        std::fs::metadata(&tarball).unwrap().len() >> 20,
        t.elapsed().as_secs_f64()
    );
    let by_hand = |d: &Path| {
        let tk = cudnn_tar::linux_toolkit(d, "12.9.1");
        let tmp = d.join("untarred");
        std::fs::create_dir_all(&tmp).unwrap();
        let top = tmp.join(spec.top());
        let script = format!(
            "tar -xJf '{a}' -C '{t}' && cp -a '{top}/include/.' '{tk}/include/' && cp -a '{top}/lib/.' '{tk}/lib64/'",
            a = tarball.display(),
            t = tmp.display(),
            top = top.display(),
            tk = tk.display()
        );
        measure(Command::new("sh").args(["-c", &script]))
    };
    let ours = |d: &Path| {
        let tk = cudnn_tar::linux_toolkit(d, "12.9.1");
        measure(
            Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
                .args(["cudnn", "install", "--archive"])
                .arg(&tarball)
                .arg("--cuda-dir")
                .arg(&tk),
        )
    };
    compare(dir, "tar -xJf + cp -a", &by_hand, &ours);
}
