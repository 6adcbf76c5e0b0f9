//! `cuda-setup detect`: what this machine has.

use std::fmt::Write as _;

use super::{CliError, exit};
use cuda_setup_core::compat::Tables;
use cuda_setup_core::detect::{self, Deadlines, SystemReport};
use cuda_setup_core::i18n::{Lang, t};
use cuda_setup_core::platform::Host;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object (fields in docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

pub fn run(tables: &Tables, args: &Args, lang: Lang) -> Result<i32, CliError> {
    let report = detect::detect(&Host::real(), tables, Deadlines::default());
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serialisable")
        );
    } else {
        print!("{}", human(&report, lang));
    }
    Ok(exit::OK)
}

pub fn human(r: &SystemReport, lang: Lang) -> String {
    let mut o = String::new();
    if let Some(s) = &r.system {
        let _ = writeln!(
            o,
            "{} {} ({}), {} x{}, RAM {}",
            t(lang, "cli_system"),
            s.os_name,
            s.arch,
            s.cpu,
            s.cpu_cores,
            cuda_setup_core::units::bytes(s.ram_total_bytes)
        );
        if let Some(free) = s.install_location_free_bytes {
            let _ = writeln!(
                o,
                "  {} {} ({})",
                t(lang, "cli_free_space"),
                cuda_setup_core::units::bytes(free),
                s.install_location.display()
            );
        }
        let _ = writeln!(
            o,
            "  {} {}",
            t(lang, "cli_administrator"),
            if s.elevated {
                t(lang, "cli_yes")
            } else {
                t(lang, "cli_no")
            }
        );
    }
    match (&r.driver, &r.driver_error) {
        (Some(d), _) => {
            let cuda = d
                .cuda_version
                .as_ref()
                .map(|c| format!(", CUDA {c}"))
                .unwrap_or_default();
            let _ = writeln!(o, "{} {}{cuda}", t(lang, "cli_nvidia_driver"), d.version);
        }
        (None, Some(e)) => {
            let _ = writeln!(
                o,
                "{} {} ({e})",
                t(lang, "cli_nvidia_driver"),
                t(lang, "cli_none")
            );
        }
        (None, None) => {
            let _ = writeln!(
                o,
                "{} {}",
                t(lang, "cli_nvidia_driver"),
                t(lang, "cli_none")
            );
        }
    }
    if r.gpus.is_empty() {
        let _ = writeln!(o, "{} {}", t(lang, "cli_gpus"), t(lang, "cli_none_found"));
    }
    for g in &r.gpus {
        let cc = g
            .compute_capability
            .map(|c| format!(" sm_{}{}", c.major, c.minor))
            .unwrap_or_default();
        let kind = if g.cuda_capable {
            String::new()
        } else {
            t(lang, "cli_not_cuda_capable")
        };
        let problem = g
            .problem
            .as_ref()
            .map(|p| format!(" [{}]", p.key))
            .unwrap_or_default();
        let _ = writeln!(o, "{} {}{cc}{kind}{problem}", t(lang, "cli_gpu"), g.name);
    }
    for tk in &r.toolkits {
        let v = tk
            .version
            .as_ref()
            .map_or("?".to_string(), ToString::to_string);
        let active = if tk.active {
            t(lang, "cli_toolkit_active")
        } else {
            String::new()
        };
        let _ = writeln!(o, "CUDA {v}: {}{active}", tk.path.display());
    }
    for c in &r.cudnn {
        let v = c
            .version
            .as_ref()
            .map_or("?".to_string(), ToString::to_string);
        let _ = writeln!(o, "cuDNN {v}: {}", c.location.display());
    }
    for p in &r.pythons {
        let v = p.version_label();
        let torch = match (&p.torch, p.torch_cpu_build) {
            (Some(tc), true) => {
                format!(", torch {} ({})", tc.version, t(lang, "cli_cpu_only_build"))
            }
            (Some(tc), false) => format!(
                ", torch {} (CUDA {})",
                tc.version,
                tc.cuda.as_deref().unwrap_or("?")
            ),
            (None, _) => t(lang, "cli_no_torch"),
        };
        let _ = writeln!(o, "Python {v}: {}{torch}", p.path.display());
    }
    for n in detect::wsl::notes(r) {
        let _ = writeln!(o, "{}", cuda_setup_core::i18n::render(&n, lang));
    }
    let _ = writeln!(o, "({} ms)", r.elapsed_ms);
    o
}
