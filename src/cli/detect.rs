//! `cuda-setup detect`: what this machine has.

use std::fmt::Write as _;

use super::{CliError, exit};
use cuda_setup_core::compat::Tables;
use cuda_setup_core::detect::{self, Deadlines, SystemReport};
use cuda_setup_core::i18n::Lang;
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
    let zh = lang == Lang::Zh;
    let t = |en: &'static str, cn: &'static str| if zh { cn } else { en };
    let mut o = String::new();
    if let Some(s) = &r.system {
        let _ = writeln!(
            o,
            "{} {} ({}), {} x{}, RAM {}",
            t("System:", "系统："),
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
                t("free space:", "可用空间："),
                cuda_setup_core::units::bytes(free),
                s.install_location.display()
            );
        }
        let _ = writeln!(
            o,
            "  {} {}",
            t("administrator:", "管理员权限："),
            if s.elevated {
                t("yes", "是")
            } else {
                t("no", "否")
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
            let _ = writeln!(
                o,
                "{} {}{cuda}",
                t("NVIDIA driver:", "NVIDIA 驱动："),
                d.version
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(
                o,
                "{} {} ({e})",
                t("NVIDIA driver:", "NVIDIA 驱动："),
                t("none", "未安装")
            );
        }
        (None, None) => {
            let _ = writeln!(
                o,
                "{} {}",
                t("NVIDIA driver:", "NVIDIA 驱动："),
                t("none", "未安装")
            );
        }
    }
    if r.gpus.is_empty() {
        let _ = writeln!(o, "{} {}", t("GPUs:", "显卡："), t("none found", "未找到"));
    }
    for g in &r.gpus {
        let cc = g
            .compute_capability
            .map(|c| format!(" sm_{}{}", c.major, c.minor))
            .unwrap_or_default();
        let kind = if g.cuda_capable {
            ""
        } else {
            t(" (not CUDA-capable)", "（不支持 CUDA）")
        };
        let problem = g
            .problem
            .as_ref()
            .map(|p| format!(" [{}]", p.key))
            .unwrap_or_default();
        let _ = writeln!(o, "{} {}{cc}{kind}{problem}", t("GPU:", "显卡："), g.name);
    }
    for tk in &r.toolkits {
        let v = tk
            .version
            .as_ref()
            .map_or("?".to_string(), ToString::to_string);
        let active = if tk.active {
            t(" (active: nvcc on PATH)", "（当前：PATH 中的 nvcc）")
        } else {
            ""
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
        let v = p
            .version
            .as_ref()
            .map_or("?".to_string(), ToString::to_string);
        let torch = match (&p.torch, p.torch_cpu_build) {
            (Some(tc), true) => format!(
                ", torch {} ({})",
                tc.version,
                t("CPU-only build", "仅 CPU 版本")
            ),
            (Some(tc), false) => format!(
                ", torch {} (CUDA {})",
                tc.version,
                tc.cuda.as_deref().unwrap_or("?")
            ),
            (None, _) => t(", no torch", "，未安装 torch").to_string(),
        };
        let _ = writeln!(o, "Python {v}: {}{torch}", p.path.display());
    }
    let _ = writeln!(o, "({} ms)", r.elapsed_ms);
    o
}
