//! `cuda-setup recommend`: what to install, and why.

use std::fmt::Write as _;

use super::{CliError, exit};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::{self, Lang, t};
use cuda_setup_core::linux_driver;
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{
    self, DriverAction, DriverPath, DriverPref, Facts, Goal, Recommendation, Request,
};
use cuda_setup_core::version::{ComputeCapability, PythonVersion, Version};
use cuda_setup_core::whatif::{Flags, WhatIf};

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Print one JSON object (fields in docs/cli.md)
    #[arg(long)]
    pub json: bool,
    /// pytorch: driver + the right PyTorch wheel; developer: CUDA toolkit + cuDNN
    #[arg(long, value_parser = crate::values::goal())]
    pub goal: Option<Goal>,
    /// Recommend for this OS instead of the one running
    #[arg(long, value_parser = crate::values::os())]
    pub os: Option<Os>,
    /// The installed NVIDIA driver version, e.g. 551.78 (what nvidia-smi shows)
    #[arg(long, value_name = "VER", conflicts_with = "no_driver")]
    pub driver: Option<Version>,
    /// Assume no NVIDIA driver is installed
    #[arg(long)]
    pub no_driver: bool,
    /// The highest CUDA the driver supports, e.g. 12.4 (nvidia-smi's "CUDA Version")
    #[arg(long, value_name = "X.Y")]
    pub driver_cuda: Option<Version>,
    /// A GPU by compute capability, e.g. 8.6 (repeat for several GPUs)
    #[arg(long = "gpu-cc", value_name = "X.Y")]
    pub gpu_cc: Vec<ComputeCapability>,
    /// A GPU by name, e.g. "RTX 4090" (repeat for several GPUs)
    #[arg(long = "gpu", value_name = "NAME")]
    pub gpu: Vec<String>,
    /// Assume the machine has no NVIDIA GPU
    #[arg(long, conflicts_with_all = ["gpu_cc", "gpu"])]
    pub no_gpu: bool,
    /// The Python version that will run PyTorch, e.g. 3.12 (3.13t: a free-threaded build)
    #[arg(long, value_name = "X.Y")]
    pub python: Option<PythonVersion>,
    /// Only consider CUDA toolkits matching this version (12, 12.4 or 12.4.1)
    #[arg(long, value_name = "VER")]
    pub cuda: Option<Version>,
    /// Look at the machine under DIR instead of this one (its /etc/os-release and
    /// Secure Boot state, for the Linux driver commands)
    #[arg(long, value_name = "DIR")]
    pub root: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub driver_path: DriverPathArgs,
}

/// Which way a driver that works but is old goes (#32), for `recommend` and `install`.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct DriverPathArgs {
    /// When the driver works but is old: update it first (the newer PyTorch/CUDA it unlocks)
    #[arg(long, conflicts_with = "keep_driver")]
    pub update_driver: bool,
    /// When the driver works but is old: keep it (what runs on it now)
    #[arg(long)]
    pub keep_driver: bool,
}

impl DriverPathArgs {
    pub fn pref(&self) -> DriverPref {
        match (self.update_driver, self.keep_driver) {
            (true, _) => DriverPref::Update,
            (_, true) => DriverPref::Keep,
            _ => DriverPref::Auto,
        }
    }
}

pub fn run(tables: &Tables, args: &Args, lang: Lang) -> Result<i32, CliError> {
    let os = args.os.unwrap_or_else(Os::current);
    let host = match &args.root {
        Some(root) => Host::sandbox(os, root, Default::default()),
        None => Host::real(),
    };
    let facts = WhatIf::parse(tables, &flags(args))?.facts(os, tables, &host);
    let request = Request {
        goal: args.goal.unwrap_or_default(),
        cuda: args.cuda.clone(),
        method: cuda_setup_core::recommend::Method::Installer,
        driver: args.driver_path.pref(),
        distro: linux_driver::os_release(&host),
        ..Default::default()
    };
    let rec = recommend::recommend(tables, &facts, &request);
    // Linux, a driver to install or update: the distribution's own commands.
    let linux = linux_advice(&host, &rec);
    if args.json {
        let mut value = to_json(&rec, lang);
        if let Some(c) = &rec.choice {
            for (path, key) in [(DriverPath::Update, "update"), (DriverPath::Keep, "keep")] {
                value["choice"][key]["text"] = i18n::render(&c.label(path, rec.os), lang).into();
            }
            value["choice"]["why_default"] = i18n::render(&c.why_default(rec.os), lang).into();
        }
        value["linux_driver"] = linux.as_ref().map_or(serde_json::Value::Null, |a| {
            super::linux_driver::json(a, lang)
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("serialisable")
        );
    } else {
        print!("{}", human(&rec, lang));
        if let Some(w) = &rec.wsl {
            print!("\n{}", wsl_human(w, lang));
        }
        if let Some(a) = &linux {
            print!("\n{}", super::linux_driver::human(a, lang));
        }
        println!(
            "\n{}",
            i18n::render(&cuda_setup_core::refresh::tables_message(tables), lang)
        );
    }
    Ok(if rec.fits() { exit::OK } else { exit::BLOCKED })
}

/// Linux, a driver to install or update: the distribution's own commands for it (of the
/// toolkit's driver branch when one is asked for).
pub(super) fn linux_advice(
    host: &Host,
    rec: &Recommendation,
) -> Option<linux_driver::LinuxDriverAdvice> {
    (rec.os == Os::Linux && rec.driver.action != DriverAction::None)
        .then(|| {
            linux_driver::advice_for(
                host,
                rec.driver.minimum.as_ref(),
                rec.driver.branch,
                rec.driver.last_branch,
            )
        })
        .flatten()
}

/// The what-if flags, for the core to check.
fn flags(args: &Args) -> Flags {
    Flags {
        gpu_cc: args.gpu_cc.clone(),
        gpu: args.gpu.clone(),
        no_gpu: args.no_gpu,
        driver: args.driver.clone(),
        no_driver: args.no_driver,
        driver_cuda: args.driver_cuda.clone(),
        python: args.python.clone(),
    }
}

/// The facts to recommend for on `os`: what the flags say, detection for the rest; where
/// the machine runs (WSL2, #32) read under `root` when one is given, as `recommend --root`
/// reads it.
pub(super) fn facts(
    tables: &Tables,
    os: Os,
    flags: &Flags,
    root: Option<&std::path::Path>,
) -> Result<Facts, CliError> {
    let mut facts = WhatIf::parse(tables, flags)?.facts(os, tables, &Host::real());
    if let Some(root) = root {
        let host = Host::sandbox(os, root, Default::default());
        facts.host_kind = cuda_setup_core::detect::host_kind(&host);
        // A GPU only Jetson modules have still makes the root a Jetson board.
        cuda_setup_core::recommend::jetson::mark(tables, &mut facts);
    }
    Ok(facts)
}

/// The recommendation as JSON, with each reason and blocker also rendered as text.
fn to_json(rec: &Recommendation, lang: Lang) -> serde_json::Value {
    let mut value = serde_json::to_value(rec).expect("serialisable");
    let texts = |msgs: &[cuda_setup_core::message::Message]| -> Vec<serde_json::Value> {
        msgs.iter()
            .map(|m| {
                let mut v = serde_json::to_value(m).expect("serialisable");
                v["text"] = i18n::render(m, lang).into();
                v
            })
            .collect()
    };
    value["reasons"] = texts(&rec.reasons).into();
    value["blockers"] = texts(&rec.blockers).into();
    value
}

/// WSL2 (#32): the Windows driver (to install on Windows: its download, never run from
/// here) and the toolkit from NVIDIA's `wsl-ubuntu` repository.
pub(super) fn wsl_human(w: &recommend::WslAdvice, lang: Lang) -> String {
    let mut out = String::new();
    if let Some(d) = &w.windows_driver {
        let _ = writeln!(
            out,
            "{}",
            i18n::tf(lang, "cli_wsl_windows_driver", &[("version", &d.version)])
        );
        let _ = writeln!(out, "    {}", d.download.url);
    }
    if let Some(tk) = &w.toolkit {
        let _ = writeln!(
            out,
            "{}",
            i18n::tf(lang, "cli_wsl_toolkit", &[("package", &tk.package)])
        );
        for c in &tk.commands {
            let _ = writeln!(out, "    {c}");
        }
    }
    out
}

fn human(rec: &Recommendation, lang: Lang) -> String {
    let mut out = String::new();
    let goal = match rec.goal {
        Goal::Pytorch => String::from("PyTorch"),
        Goal::Developer => t(lang, "cli_goal_developer"),
    };
    let _ = writeln!(
        out,
        "{} {goal}, {}",
        t(lang, "cli_recommendation_for"),
        rec.os.as_str()
    );
    for g in &rec.gpus {
        let _ = writeln!(out, "  GPU:      {}", g.label());
    }
    // A Jetson board: JetPack's answer, and the reasons behind it; no driver or picks.
    if let Some(j) = &rec.jetson {
        let _ = writeln!(out, "\n{}", i18n::render(&j.headline, lang));
        let _ = writeln!(out, "\n{}", t(lang, "cli_why"));
        for r in rec.reasons.iter().filter(|r| **r != j.headline) {
            let _ = writeln!(out, "  - {}", i18n::render(r, lang));
        }
        return out;
    }
    if !rec.fits() {
        let _ = writeln!(out, "\n{}", t(lang, "cli_nothing_fits"));
        for b in &rec.blockers {
            let _ = writeln!(out, "  - {}", i18n::render(b, lang));
        }
        return out;
    }
    let d = &rec.driver;
    let current = d
        .current
        .as_ref()
        .map_or(t(lang, "cli_none"), ToString::to_string);
    // A driver installed for a toolkit's branch (#32): the version installed, or the branch.
    let minimum = rec.driver_target().unwrap_or_default();
    let action = match d.action {
        DriverAction::None => t(lang, "cli_driver_keep"),
        DriverAction::Install => format!("{} >= {minimum}", t(lang, "cli_driver_install")),
        DriverAction::Update => format!("{} >= {minimum}", t(lang, "cli_driver_update_to")),
    };
    let _ = writeln!(
        out,
        "  {}  {current} -> {action}",
        t(lang, "cli_recommend_driver")
    );
    if let Some(s) = rec.driver_supports() {
        let _ = writeln!(out, "            {}", i18n::render(&s, lang));
    }
    if let Some(c) = &rec.choice {
        let _ = writeln!(out, "\n  {}", t(lang, "cli_driver_choice"));
        for path in [DriverPath::Update, DriverPath::Keep] {
            let mark = if c.chosen == path { "*" } else { " " };
            let default = if c.default == path {
                format!(" {}", t(lang, "cli_driver_path_default"))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {mark} {}{default}",
                i18n::render(&c.label(path, rec.os), lang)
            );
        }
        let _ = writeln!(out, "    {}\n", i18n::render(&c.why_default(rec.os), lang));
    }
    if let Some(m) = rec.wheel_above_driver() {
        let _ = writeln!(out, "  {}", i18n::render(&m, lang));
    }
    if let Some(tk) = &rec.toolkit {
        let _ = writeln!(
            out,
            "  CUDA:     {} ({})\n            {}",
            tk.version,
            tk.label,
            tk.installer
                .as_ref()
                .map_or(t(lang, "cli_no_installer_known"), |i| i.url.clone())
        );
    }
    if let Some(c) = &rec.cudnn {
        let _ = writeln!(
            out,
            "  cuDNN:    {}\n            {}",
            c.version, c.archive_url
        );
    }
    if let Some(p) = &rec.torch {
        let _ = writeln!(
            out,
            "  PyTorch:  {} ({})\n            {}",
            p.version, p.variant, p.command
        );
    }
    let _ = writeln!(out, "\n{}", t(lang, "cli_why"));
    for r in &rec.reasons {
        let _ = writeln!(out, "  - {}", i18n::render(r, lang));
    }
    out
}
