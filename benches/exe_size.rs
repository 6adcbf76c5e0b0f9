//! The size of what we ship: the Windows .exe (x86_64-pc-windows-gnu, profile `dist`: the one
//! CI builds, signs and runs under Wine) against the 20 MB goal, and the Linux release binary.
//!
//! Run: `cargo bench --bench exe_size`
//!
//! The .exe is built first (`cargo build --profile dist --target x86_64-pc-windows-gnu`, after
//! `.ci/windows-toolchain.sh`): when it is up to date that is a no-op of a second or two, and
//! otherwise the figure would be of an .exe built from other sources or another profile.
//! Where the Windows toolchain cannot be set up (no rustup target, no MinGW) an existing .exe
//! is measured and the bench says it may be stale. `BENCH_EXE_NO_BUILD=1` skips the build.
//!
//! `BENCH_BASELINE=/path/to/an/older/cuda-setup` (a Linux binary) and
//! `BENCH_BASELINE_EXE=/path/to/an/older/cuda-setup.exe` print the older sizes beside the new.
//!
//! Goal: 20 MB = 20,000,000 bytes (also under 20 MiB, which tests/windows/run.sh enforces).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const GOAL: u64 = 20_000_000;

fn mb(bytes: u64) -> String {
    format!("{:6.2} MB ({bytes} bytes)", bytes as f64 / 1e6)
}

fn size(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

/// Builds the .exe the way CI does; false (with the reason printed) where it could not.
fn build_exe(root: &Path) -> bool {
    let toolchain = Command::new("bash")
        .arg(".ci/windows-toolchain.sh")
        .current_dir(root)
        .status();
    if !matches!(toolchain, Ok(s) if s.success()) {
        println!("windows toolchain: .ci/windows-toolchain.sh failed ({toolchain:?})");
        return false;
    }
    let t = Instant::now();
    // The env file may switch rustc (Debian's Rust with -Zbuild-std): source it as CI does.
    let build = Command::new("bash")
        .arg("-c")
        .arg(
            "source .ci/windows-env.sh && \
             cargo $WINDOWS_CARGO_FLAGS build --profile dist --target x86_64-pc-windows-gnu",
        )
        .current_dir(root)
        .status();
    let ok = matches!(build, Ok(s) if s.success());
    println!(
        "windows dist build: {:.0} s ({})",
        t.elapsed().as_secs_f64(),
        if ok { "ok" } else { "FAILED" }
    );
    ok
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // Where the build above put it: CARGO_TARGET_DIR when set, as cargo does.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let exe = target.join("x86_64-pc-windows-gnu/dist/cuda-setup.exe");

    let built = std::env::var_os("BENCH_EXE_NO_BUILD").is_none() && build_exe(&root);
    match size(&exe) {
        Some(n) => {
            let verdict = if n <= GOAL {
                format!("within the goal, {} to spare", mb(GOAL - n))
            } else {
                format!("OVER the goal by {}", mb(n - GOAL))
            };
            println!("windows .exe   {}   goal {}: {verdict}", mb(n), mb(GOAL));
            if !built {
                println!("  (not rebuilt here: it may be older than the sources)");
            }
        }
        None => println!("windows .exe: {} absent", exe.display()),
    }
    if let Some(base) = std::env::var_os("BENCH_BASELINE_EXE") {
        match size(Path::new(&base)) {
            Some(n) => println!("  baseline     {}   {}", mb(n), Path::new(&base).display()),
            None => println!("  baseline .exe {}: unreadable", Path::new(&base).display()),
        }
    }

    // Built by this very `cargo bench` (the bench profile inherits release, not dist: this
    // is the quick build's size, for comparison).
    let linux = Path::new(env!("CARGO_BIN_EXE_cuda-setup"));
    match size(linux) {
        Some(n) => println!("linux binary   {}   {}", mb(n), linux.display()),
        None => println!("linux binary: {} absent", linux.display()),
    }
    if let Some(base) = std::env::var_os("BENCH_BASELINE") {
        match size(Path::new(&base)) {
            Some(n) => println!("  baseline     {}   {}", mb(n), Path::new(&base).display()),
            None => println!("  baseline {}: unreadable", Path::new(&base).display()),
        }
    }
}
