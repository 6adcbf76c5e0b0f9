//! Time to first frame of the wizard (goal: ≤ 0.3 s warm, ≤ 0.5 s cold, under Xvfb).
//!
//! Starts the release binary with `CUDA_SETUP_FIRST_FRAME=1`, which makes the window print
//! `first_frame_ms=N` (from the wizard's launch to the start of the second frame, i.e.
//! once the first is on screen) and close. Also measured from outside: process spawn to
//! that line, which adds exec, dynamic linking, argument parsing and the tables; that is
//! the figure held against the goal. Without a display, an Xvfb of its own is started
//! (apt-get install xvfb).
//!
//! Warm: the files are in the page cache (one unmeasured start first). Cold: before each
//! start, the pages of the binary and of the machine's fonts (the font folders and
//! fontconfig's cache) are evicted with `posix_fadvise(POSIX_FADV_DONTNEED)`; the GL
//! driver's libraries stay cached (they are not ours, and every GL program shares them).
//! Both languages are measured: English, and Chinese (every string in the CJK font).
//!
//!     cargo bench --bench first_frame
//!     BENCH_BASELINE=/work/base-bin/cuda-setup cargo bench --bench first_frame
//!
//! With `BENCH_BASELINE` (an older cuda-setup binary) each start of ours alternates with
//! one of the baseline, so both see the same machine load; the figures are side by side.
//! `BENCH_RUNS` sets the starts per row (default 10).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const WARM_GOAL_MS: f64 = 300.0;
const COLD_GOAL_MS: f64 = 500.0;

/// An Xvfb of our own on a free display number, killed on drop.
struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM, so Xvfb removes its lock file and socket; SIGKILL if it lingers.
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_xvfb() -> Option<(Xvfb, String)> {
    for n in 90..110 {
        if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            || Path::new(&format!("/tmp/.X{n}-lock")).exists()
        {
            continue;
        }
        let child = Command::new("Xvfb")
            .args([
                &format!(":{n}"),
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let x = Xvfb(child);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
                return Some((x, format!(":{n}")));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        return None;
    }
    None
}

/// Every regular file under `dir` (not following links).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            files_under(&e.path(), out);
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
}

/// What a cold start reads that a warm one finds cached: the binary and the fonts.
fn cold_files(bin: &Path) -> Vec<PathBuf> {
    let mut files = vec![bin.to_path_buf()];
    for dir in [
        "/usr/share/fonts",
        "/usr/local/share/fonts",
        "/var/cache/fontconfig",
    ] {
        files_under(Path::new(dir), &mut files);
    }
    files
}

/// Drops the cached pages of `files` (clean pages only; nothing here is being written).
#[cfg(unix)]
fn evict(files: &[PathBuf]) {
    use std::os::unix::io::AsRawFd;
    for f in files {
        if let Ok(file) = std::fs::File::open(f) {
            // SAFETY: a valid descriptor, offset 0 and length 0 (to the end).
            unsafe {
                libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

#[cfg(not(unix))]
fn evict(_: &[PathBuf]) {}

/// One start's figures, in ms.
struct Start {
    /// Process spawn to the first frame on screen.
    outer: f64,
    /// The wizard's launch to the same moment (its own clock).
    inner: f64,
    /// CPU time the process's threads had used by then (Linux: /proc): the work done
    /// before the first frame, which the load of other programs does not inflate.
    cpu: Option<f64>,
    /// This build's parts: window + GL, ours (fonts, App), the first ui, the painting.
    phases: Option<[f64; 4]>,
}

/// CPU time of all threads of `pid` so far, and of its children it has waited for.
fn cpu_ms(pid: u32) -> Option<f64> {
    let mut ns: u64 = 0;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let s = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
        ns += s.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    // Field 16 and 17 of stat: cutime, cstime (clock ticks; 100 per second on Linux).
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
    Some(ns as f64 / 1e6 + ticks as f64 * 10.0)
}

fn phases(line: &str) -> Option<[f64; 4]> {
    let mut out = [0.0; 4];
    let parts: Vec<&str> = line.split(',').collect();
    for (i, name) in ["window", "app", "ui", "paint"].iter().enumerate() {
        let v = parts
            .iter()
            .find_map(|p| p.strip_prefix(&format!("{name}:")))?;
        out[i] = v.parse().ok()?;
    }
    Some(out)
}

fn once(bin: &Path, lang: &str, display: &str, runtime_dir: &Path) -> Option<Start> {
    let t0 = Instant::now();
    let mut child = Command::new(bin)
        .args(["--lang", lang])
        .env("DISPLAY", display)
        .env_remove("WAYLAND_DISPLAY")
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .env("CUDA_SETUP_FIRST_FRAME", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    let (mut inner, mut parts, mut cpu) = (None, None, None);
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if let Some(p) = line.strip_prefix("first_frame_phases_ms=") {
            parts = phases(p);
        } else if let Some(ms) = line.strip_prefix("first_frame_ms=") {
            cpu = cpu_ms(child.id());
            inner = ms.trim().parse::<f64>().ok();
            break;
        }
    }
    let outer = t0.elapsed().as_secs_f64() * 1000.0;
    let _ = child.wait();
    Some(Start {
        outer,
        inner: inner?,
        cpu,
        phases: parts,
    })
}

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("first_frame: bench");
        return;
    }
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|r| *r > 0)
        .unwrap_or(10);
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_cuda-setup"));
    let baseline = std::env::var_os("BENCH_BASELINE").map(PathBuf::from);
    if let Some(b) = &baseline
        && !b.is_file()
    {
        eprintln!("first_frame: BENCH_BASELINE {} is not a file", b.display());
        std::process::exit(2);
    }
    let mut bins = vec![("this build", ours)];
    if let Some(b) = baseline {
        bins.push(("baseline", b));
    }
    let _xvfb;
    let display = match std::env::var("DISPLAY").ok().filter(|d| !d.is_empty()) {
        Some(d) => d,
        None => match start_xvfb() {
            Some((x, d)) => {
                _xvfb = x;
                d
            }
            None => {
                eprintln!("first_frame: no DISPLAY and no Xvfb (apt-get install xvfb); skipped");
                return;
            }
        },
    };
    let runtime = tempfile::tempdir().expect("temp dir");
    println!(
        "time to first frame on DISPLAY {display}, {runs} starts per row, ms (min / median / max)"
    );
    println!("  spawn→frame: process spawn to the first frame on screen (the goal's figure)");
    println!("  launch→frame: the wizard's launch to the same moment (the window's own clock)");
    for cold in [false, true] {
        for lang in ["en", "zh"] {
            // The first start of each warms the page cache (fonts, GL drivers); not counted.
            for (_, bin) in &bins {
                let _ = once(bin, lang, &display, runtime.path());
            }
            let mut samples: Vec<Vec<Start>> = bins.iter().map(|_| Vec::new()).collect();
            for _ in 0..runs {
                // Alternating, so a burst of load elsewhere hits both alike.
                for ((_, bin), s) in bins.iter().zip(&mut samples) {
                    if cold {
                        evict(&cold_files(bin));
                    }
                    let Some(start) = once(bin, lang, &display, runtime.path()) else {
                        eprintln!(
                            "first_frame: {} did not report a first frame",
                            bin.display()
                        );
                        std::process::exit(1);
                    };
                    s.push(start);
                }
            }
            let (kind, goal) = if cold {
                ("cold", COLD_GOAL_MS)
            } else {
                ("warm", WARM_GOAL_MS)
            };
            println!("{kind}, --lang {lang} (goal ≤ {goal:.0} ms median, spawn→frame):");
            for ((name, _), s) in bins.iter().zip(samples) {
                let (omin, omed, omax) = stats(s.iter().map(|x| x.outer).collect());
                let (imin, imed, imax) = stats(s.iter().map(|x| x.inner).collect());
                let verdict = if omed <= goal { "meets" } else { "MISSES" };
                println!(
                    "  {name:<10}  spawn→frame {omin:5.0} / {omed:5.0} / {omax:5.0}   \
                     launch→frame {imin:5.0} / {imed:5.0} / {imax:5.0}   {verdict}"
                );
                let cpu: Vec<f64> = s.iter().filter_map(|x| x.cpu).collect();
                if !cpu.is_empty() {
                    let (cmin, cmed, _) = stats(cpu);
                    println!(
                        "  {:<10}  CPU used before the frame {cmin:5.0} min, {cmed:5.0} median",
                        ""
                    );
                }
                let parts: Vec<[f64; 4]> = s.iter().filter_map(|x| x.phases).collect();
                if !parts.is_empty() {
                    let med = |i: usize| stats(parts.iter().map(|p| p[i]).collect()).1;
                    println!(
                        "  {:<10}  medians: window+GL {:.0}, fonts+App {:.1}, first ui {:.1}, paint {:.0}",
                        "",
                        med(0),
                        med(1),
                        med(2),
                        med(3)
                    );
                }
            }
        }
    }
}
