//! `cudnn install` against what a user does by hand (`unzip -q` then `cp -r` of bin,
//! include and lib into the toolkit), in the same run: wall time and peak RSS.
//! Goal: ≤ 0.5× their time, peak RSS ≤ 64 MiB.
//!
//! The same for NVIDIA's Linux .tar.xz against `tar -xJf` + `cp -a`.
//!
//! Run: `cargo bench --bench cudnn` (BENCH_CUDNN_MB sets the zip's unpacked size,
//! default 1024, BENCH_CUDNN_TAR_MB the tarball's, default 512; BENCH_DIR the scratch
//! folder).
//!
//! NVIDIA's real files: `BENCH_CUDNN_REAL=1 cargo bench --bench cudnn` pip-downloads the
//! Windows wheel `nvidia-cudnn-cu13==9.27.0.42` once (into `target/bench-wheels/win`;
//! `BENCH_CUDNN_WHEEL=path` names one instead) and lays its members out as NVIDIA's
//! Windows zip (`cudnn-windows-x86_64-9.27.0.42_cuda13-archive/{bin/x64,include}`, the
//! compressed bytes copied as they are), then times `cudnn install` of that zip against
//! `unzip -q` + `cp -r`. Goal: ≤ 0.15× their time (the floor: one core inflating the
//! largest DLL, 231 MB). `BENCH_BASELINE=/path/to/older/cuda-setup` times that binary too.

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
    if std::env::var_os("BENCH_CUDNN_REAL").is_some()
        || std::env::var_os("BENCH_CUDNN_WHEEL").is_some()
    {
        return real();
    }
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

/// The real cuDNN 9.27 for CUDA 13 in NVIDIA's Windows zip layout (see the file's head).
fn real() {
    let base =
        std::env::var("BENCH_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let dir = tempfile::tempdir_in(base).unwrap();
    let wheel = match std::env::var_os("BENCH_CUDNN_WHEEL") {
        Some(w) => std::path::PathBuf::from(w),
        None => {
            let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-wheels/win");
            let name = "nvidia_cudnn_cu13-9.27.0.42-py3-none-win_amd64.whl";
            if !d.join(name).is_file() {
                let ok = Command::new("python3")
                    .args(["-m", "pip", "download", "--quiet", "--no-deps"])
                    .args(["--only-binary=:all:", "--platform", "win_amd64"])
                    .args(["--python-version", "3.11", "-d"])
                    .arg(&d)
                    .arg("nvidia-cudnn-cu13==9.27.0.42")
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(
                    ok,
                    "pip download of the cuDNN wheel failed (needs PyPI, or set BENCH_CUDNN_WHEEL)"
                );
            }
            d.join(name)
        }
    };
    let top = "cudnn-windows-x86_64-9.27.0.42_cuda13-archive";
    // Beside the wheel, made once (its name is the one NVIDIA gives the zip).
    let zip = wheel.with_file_name(format!("{top}.zip"));
    if !zip.is_file() {
        let part = zip.with_extension("part");
        relayout(&wheel, &part, top);
        std::fs::rename(&part, &zip).unwrap();
    }
    let entries = zip::ZipArchive::new(std::fs::File::open(&zip).unwrap())
        .unwrap()
        .len();
    println!(
        "NVIDIA cuDNN 9.27.0.42 (CUDA 13, Windows): {} entries, {} MiB packed, from {}",
        entries,
        std::fs::metadata(&zip).unwrap().len() >> 20,
        wheel.display()
    );
    let by_hand = |d: &Path| {
        let tk = cudnn_zip::toolkit(d, "13.2.0");
        let tmp = d.join("unzipped");
        let t = tmp.join(top);
        let script = format!(
            "unzip -q '{z}' -d '{tmp}' && cp -r '{t}/bin/x64/.' '{tk}/bin/x64/' && cp -r '{t}/include/.' '{tk}/include/'",
            z = zip.display(),
            tmp = tmp.display(),
            t = t.display(),
            tk = tk.display()
        );
        measure(Command::new("sh").args(["-c", &script]))
    };
    let install = |bin: std::path::PathBuf| {
        let zip = zip.clone();
        move |d: &Path| {
            let tk = cudnn_zip::toolkit(d, "13.2.0");
            measure(
                Command::new(&bin)
                    .args(["cudnn", "install", "--archive"])
                    .arg(&zip)
                    .arg("--cuda-dir")
                    .arg(&tk),
            )
        }
    };
    let ours = install(env!("CARGO_BIN_EXE_cuda-setup").into());
    let baseline = std::env::var_os("BENCH_BASELINE").map(|b| install(b.into()));
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // Alternated, best of each (the first run warms the page cache for all).
    let mut best = [(f64::MAX, 0u64); 3];
    for i in 0..runs {
        let mut one = |k: usize, f: &dyn Fn(&Path) -> (f64, u64)| {
            let d = dir.path().join(format!("run{k}-{i}"));
            let r = f(&d);
            if r.0 < best[k].0 {
                best[k] = r;
            }
            let _ = std::fs::remove_dir_all(&d);
        };
        one(0, &by_hand);
        one(1, &ours);
        if let Some(b) = &baseline {
            one(2, b);
        }
    }
    let line = |name: &str, (t, rss): (f64, u64)| {
        println!(
            "  {name:<28} {t:6.2} s   peak RSS {:6.1} MiB   ({:.2}× unzip + cp)",
            rss as f64 / 1024.0,
            t / best[0].0
        )
    };
    line("unzip -q + cp -r", best[0]);
    line("cuda-setup cudnn install", best[1]);
    if baseline.is_some() {
        line("baseline cudnn install", best[2]);
    }
    println!("  goal: ≤ 0.15× unzip + cp");
}

/// Copies the wheel's cuDNN members into `out` under NVIDIA's Windows zip names, their
/// compressed bytes as they are (no re-deflating).
fn relayout(wheel: &Path, out: &Path, top: &str) {
    let mut src = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let mut dst = zip::ZipWriter::new(std::fs::File::create(out).unwrap());
    for i in 0..src.len() {
        let e = src.by_index_raw(i).unwrap();
        let name = e.name().unwrap().to_string();
        let file = name.rsplit('/').next().unwrap_or("").to_string();
        let to = if name.starts_with("nvidia/cudnn/bin/") && file.ends_with(".dll") {
            format!("{top}/bin/x64/{file}")
        } else if name.starts_with("nvidia/cudnn/include/") && file.ends_with(".h") {
            format!("{top}/include/{file}")
        } else if name.starts_with("nvidia/cudnn/lib/") && file.ends_with(".lib") {
            format!("{top}/lib/x64/{file}")
        } else if name.ends_with(".dist-info/licenses/License.txt") {
            format!("{top}/LICENSE")
        } else {
            continue;
        };
        dst.raw_copy_file_rename(e, to).unwrap();
    }
    dst.finish().unwrap();
}
