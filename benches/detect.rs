//! `detect` wall time on this machine, against what a user would otherwise run by hand:
//! the guide's own check (`python -c "import torch; print(torch.cuda.is_available())"`)
//! and `nvidia-smi` where it exists. Goal: detect ≤ 1 s on a machine without a GPU.
//!
//! Run: `cargo bench --bench detect`

use std::process::Command;
use std::time::{Duration, Instant};

use cuda_setup_core::compat::Tables;
use cuda_setup_core::detect::{self, Deadlines};
use cuda_setup_core::platform::Host;

const RUNS: usize = 15;

fn stats(mut d: Vec<Duration>) -> String {
    d.sort();
    let ms = |x: Duration| x.as_secs_f64() * 1000.0;
    format!(
        "median {:7.1} ms   min {:7.1} ms   max {:7.1} ms",
        ms(d[d.len() / 2]),
        ms(d[0]),
        ms(d[d.len() - 1])
    )
}

fn time_command(program: &str, args: &[&str]) -> Option<Vec<Duration>> {
    Command::new(program).args(args).output().ok()?;
    Some(
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                let _ = Command::new(program).args(args).output();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let tables = Tables::embedded().expect("tables");
    let host = Host::real();
    let report = detect::detect(&host, &tables, Deadlines::default());
    println!(
        "machine: {} NVIDIA GPU(s), driver {}, {} toolkit(s), {} Python(s)",
        report.nvidia_gpus().count(),
        report
            .driver
            .as_ref()
            .map_or("none".into(), |d| d.version.to_string()),
        report.toolkits.len(),
        report.pythons.len()
    );

    let in_process: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let _ = detect::detect(&host, &tables, Deadlines::default());
            t.elapsed()
        })
        .collect();
    println!("cuda-setup detect (library)      {}", stats(in_process));

    let exe = env!("CARGO_BIN_EXE_cuda-setup");
    if let Some(d) = time_command(exe, &["detect", "--json"]) {
        println!("cuda-setup detect --json (CLI)   {}", stats(d));
    }
    let guide = "import torch; print(torch.cuda.is_available())";
    match time_command("python3", &["-c", guide]) {
        Some(d) => println!("python3 -c '{guide}'  {}", stats(d)),
        None => println!("python3: not found"),
    }
    match time_command("nvidia-smi", &[]) {
        Some(d) => println!("nvidia-smi                       {}", stats(d)),
        None => println!("nvidia-smi: not installed here (no driver)"),
    }
}
