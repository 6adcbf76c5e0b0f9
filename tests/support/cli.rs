//! Running the real binary: its JSON output, and the command line the refresh tests share
//! (the cache under a temp home, no proxy, plain English).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// stdout as JSON; on failure the panic shows stdout and stderr.
pub fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `cuda-setup ARGS` in English, with its cache (and home) under `home` and no proxy, so
/// every source is whatever the test sets (`CUDA_SETUP_*`).
pub fn with_cache(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("XDG_CACHE_HOME", home)
        .env("HOME", home)
        .env_remove("HTTPS_PROXY")
        .env_remove("HTTP_PROXY")
        .env_remove("ALL_PROXY");
    c
}

/// Points the refresh's sources: NVIDIA and PyTorch's index at `nvidia_and_torch`, PyPI
/// at `pypi` (each a base URL without a trailing slash).
pub fn sources(c: &mut Command, nvidia_and_torch: &str, pypi: &str) {
    c.env(
        "CUDA_SETUP_NVIDIA_BASE",
        format!("{nvidia_and_torch}/compute"),
    )
    .env("CUDA_SETUP_TORCH_INDEX", format!("{nvidia_and_torch}/whl"))
    .env("CUDA_SETUP_PYPI", format!("{pypi}/simple"));
}

/// Where the refresh keeps what it learned, under a `home` given to [`with_cache`].
pub fn cache_file(home: &Path) -> PathBuf {
    home.join("cuda-setup").join("refresh.json")
}

/// `cuda-setup ARGS` in English, run to its end.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .env("LANG", "C")
        .output()
        .unwrap()
}

/// stdout then stderr, as text (what a user would read).
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
