//! `cuda-setup state get|test|set` (#36): the machine in a lab profile's terms, its drift
//! from the profile (exit 1, changing nothing: Intune's detection, Ansible's check mode,
//! DSC's test), and making it so through `install`'s plan and executor. The core takes
//! the state (`fleet::state::take`), judges the drift (`fleet::drift::diff`) and, for
//! `set`, runs the profile's install runs that fix it, the guard, and the outcome
//! (`fleet::apply::apply`); this file parses, renders and maps the outcome to its number.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{CliError, exit, install};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::fleet::apply;
use cuda_setup_core::fleet::drift::{self, Drift, DriftEntry};
use cuda_setup_core::fleet::profile::{self, Profile, Wanted};
use cuda_setup_core::fleet::report::{self, Report};
use cuda_setup_core::fleet::state::{self, Given, State};
use cuda_setup_core::i18n::{Lang, render, t, tf};
use cuda_setup_core::repair::Overrides;
use cuda_setup_core::target::Target;
use cuda_setup_core::version::{ComputeCapability, Version};
use cuda_setup_core::whatif::Flags;

/// The test found drift (`state test`).
pub const DRIFT: i32 = 1;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// The machine's state in the lab profile's terms: GPUs, driver, toolkits, cuDNN,
    /// PyTorch and its guard, the last GPU check
    Get(GetArgs),
    /// Compare the machine with a lab profile, changing nothing (exit 0: as the profile
    /// says, 1: drift, 2: a bad profile)
    Test(WithProfile),
    /// Make the machine as the profile says through the installer (exit 0 / 3010 / 1602 /
    /// 1603 / 1618, as `install`); nothing runs when nothing drifts
    Set(SetArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// Print JSON
    #[arg(long)]
    pub json: bool,
    /// Write the report a lab collects (`fleet collect`) to FILE; %VAR% is expanded
    /// (\\server\share\%COMPUTERNAME%.json). Default: the profile's [report] path
    #[arg(long, value_name = "FILE")]
    pub report: Option<String>,
    /// A sandbox root instead of the machine
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The OS layout of the root (only with --root)
    #[arg(long, value_parser = crate::values::os(), requires = "root")]
    pub os: Option<Os>,
    /// GPUs by compute capability (default: detected)
    #[arg(long = "gpu-cc", value_name = "X.Y")]
    pub gpu_cc: Vec<ComputeCapability>,
    /// The driver version (default: detected)
    #[arg(long, value_name = "VER")]
    pub driver: Option<Version>,
    /// The Python whose PyTorch is looked at (default: the profile's, else the one the
    /// guard recorded, else the first with torch)
    #[arg(long, value_name = "PATH")]
    pub python_exe: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// A lab profile, read only for the Python it names (so `get` looks at the Python
    /// `test` and `set` look at); nothing is judged
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, clap::Args)]
pub struct WithProfile {
    /// The lab profile (lab.toml)
    #[arg(long, value_name = "FILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, clap::Args)]
pub struct SetArgs {
    #[command(flatten)]
    pub with: WithProfile,
    /// If another cuda-setup is installing on this machine (or root), wait for it
    /// (default: exit 1618)
    #[arg(long)]
    pub wait: bool,
}

pub fn run(tables: &Tables, args: &Args, lang: Lang, lang_given: bool) -> Result<i32, CliError> {
    match &args.command {
        Command::Get(g) => get(tables, g, lang),
        Command::Test(w) => test(tables, w, lang, lang_given),
        Command::Set(s) => set(tables, s, lang, lang_given),
    }
}

fn target(c: &Common) -> Target {
    match &c.root {
        Some(root) => Target::rooted(c.os.unwrap_or_else(Os::current), root),
        None => Target::real(),
    }
}

/// The what-if flags, checked as every command checks them, and the Python to look at.
fn given(tables: &Tables, c: &Common, python: Option<PathBuf>) -> Result<Given, CliError> {
    cuda_setup_core::whatif::WhatIf::parse(
        tables,
        &Flags {
            gpu_cc: c.gpu_cc.clone(),
            driver: c.driver.clone(),
            ..Default::default()
        },
    )?;
    Ok(Given {
        overrides: Overrides {
            gpu_cc: c.gpu_cc.clone(),
            driver: c.driver.clone(),
        },
        python: c.python_exe.clone().or(python),
    })
}

fn get(tables: &Tables, g: &GetArgs, lang: Lang) -> Result<i32, CliError> {
    let c = &g.common;
    let target = target(c);
    let python = match &g.profile {
        Some(path) => python_of(&load(tables, path, target.os)?, target.os),
        None => None,
    };
    let state = state::take(&target, tables, &given(tables, c, python)?);
    if c.json {
        println!(
            "{}",
            pretty(&serde_json::to_value(&state).expect("serialisable"))
        );
    } else {
        print!("{}", human_state(&state, lang));
    }
    if let Some(path) = &c.report {
        write_report(path, Report::new(state, None, None), lang);
    }
    Ok(exit::OK)
}

/// The profile for the target's OS; a bad one is exit 2, naming file and key.
fn load(tables: &Tables, path: &std::path::Path, os: Os) -> Result<Profile, CliError> {
    Ok(profile::load(path, tables, os)?)
}

/// The profile's language, unless `--lang` was given.
fn lang_of(p: &Profile, lang: Lang, lang_given: bool) -> Lang {
    if lang_given {
        lang
    } else {
        p.lang.unwrap_or(lang)
    }
}

/// The Python the profile names (its venv's interpreter).
fn python_of(p: &Profile, os: Os) -> Option<PathBuf> {
    p.pytorch.as_ref().and_then(|t| t.python.interpreter(os))
}

/// `--report`, else the profile's `[report] path`.
fn report_path(c: &Common, p: &Profile) -> Option<String> {
    c.report
        .clone()
        .or_else(|| p.report.as_ref().map(|r| r.path.clone()))
}

fn test(tables: &Tables, w: &WithProfile, lang: Lang, lang_given: bool) -> Result<i32, CliError> {
    let c = &w.common;
    let target = target(c);
    let p = load(tables, &w.profile, target.os)?;
    let lang = lang_of(&p, lang, lang_given);
    let state = state::take(
        &target,
        tables,
        &given(tables, c, python_of(&p, target.os))?,
    );
    let found = drift::diff(&p, &state, tables);
    let entries: Vec<DriftEntry> = found.iter().map(|d| d.entry(lang)).collect();
    let shown = w.profile.display().to_string();
    if c.json {
        println!("{}", pretty(&tested(&state, &entries, &shown)));
    } else {
        print!("{}", human_drift(&found, &shown, lang));
    }
    if let Some(path) = report_path(c, &p) {
        write_report(&path, Report::new(state, Some(entries), Some(shown)), lang);
    }
    Ok(if found.is_empty() { exit::OK } else { DRIFT })
}

/// `state test --json`: the state and its drift.
fn tested(state: &State, entries: &[DriftEntry], profile: &str) -> Value {
    json!({
        "schema": "cuda-setup/test",
        "schema_version": 1,
        "in_desired_state": entries.is_empty(),
        "profile": profile,
        "state": state,
        "drift": entries,
    })
}

/// `install`'s flags for one of the profile's install runs.
fn install_args(w: &Wanted, c: &Common, os: Os, wait: bool) -> install::Args {
    let s = &w.sources;
    let mut a = install::Args {
        goal: Some(w.goal),
        cuda: w.cuda.clone(),
        cudnn: w.cudnn_version().cloned(),
        mirror: s.mirrors.clone(),
        bundle: s.bundle.clone(),
        root: c.root.clone(),
        os: c.os,
        yes: true,
        unattended: true,
        json: true,
        with_driver: w.with_driver(),
        skip_driver: w.skip_driver(),
        gpu_cc: c.gpu_cc.clone(),
        driver: c.driver.clone(),
        python_exe: c.python_exe.clone().or_else(|| w.python.interpreter(os)),
        torch_index: s.torch_source(),
        torch_version: w.torch_version.clone(),
        torch_variant: w.torch_variant.clone(),
        driver_floor: w.driver_floor(),
        connections: 8,
        wait,
        ..Default::default()
    };
    match w.cudnn_choice() {
        cuda_setup_core::plan::CudnnChoice::Skip => a.no_cudnn = true,
        cuda_setup_core::plan::CudnnChoice::Archive(z) => a.cudnn_archive = Some(z),
        _ => {}
    }
    let pref = w.driver_pref();
    a.driver_path.update_driver = pref == cuda_setup_core::recommend::DriverPref::Update;
    a.driver_path.keep_driver = pref == cuda_setup_core::recommend::DriverPref::Keep;
    a.how.method = w.method;
    a.how.components = w.components.clone();
    a.how.pypi_mirror = s.pypi_pick();
    a
}

fn set(tables: &Tables, s: &SetArgs, lang: Lang, lang_given: bool) -> Result<i32, CliError> {
    let w = &s.with;
    let c = &w.common;
    let target = target(c);
    let p = load(tables, &w.profile, target.os)?;
    let lang = lang_of(&p, lang, lang_given);
    let given = given(tables, c, python_of(&p, target.os))?;
    // A venv PyTorch should go into must exist first (#36 review 4): with none, torch
    // is missing, so a PyTorch run would come and fail on an interpreter that is not there.
    if let Err(e) = cuda_setup_core::fleet::venv::check(&p, target.os) {
        return Err(CliError::Failed {
            message: render(&e.message(), lang),
            hint: render(&e.hint(target.os), lang),
            details: Some(e.to_string()),
            code: install::FAILED,
        });
    }
    // The core picks the runs, when to stop, the guard and the outcome; a run here is
    // `install`'s plan and executor, its JSON kept for `runs`.
    let done = apply::apply(&target, tables, &p, &given, |w| {
        let args = install_args(w, c, target.os, s.wait);
        let (plan, _linux, facts) = install::make_plan(tables, &args, &target, lang)?;
        let facts = facts.expect("a plan made here has its facts");
        let (report, _verdict, json) =
            install::execute(tables, &args, &target, &plan, &facts, lang)?;
        Ok::<_, CliError>((report, json))
    })?;
    if let apply::GuardStep::Failed(e) = &done.guard {
        eprintln!("{}", render(&e.message(), lang));
    }
    let code = install::exit_code(done.outcome);
    let entries: Vec<DriftEntry> = done.left.iter().map(|d| d.entry(lang)).collect();
    let shown = w.profile.display().to_string();
    if c.json {
        let mut v = tested(&done.after, &entries, &shown);
        v["changed"] = done.changed.into();
        v["reboot_required"] = done.reboot.into();
        v["exit_code"] = code.into();
        v["runs"] = done.runs.into();
        println!("{}", pretty(&v));
    } else {
        if !done.changed {
            println!("{}", t(lang, "cli_state_set_unchanged"));
        }
        print!("{}", human_drift(&done.left, &shown, lang));
        if done.reboot {
            println!("{}", t(lang, "cli_reboot_required"));
        }
    }
    if let Some(path) = report_path(c, &p) {
        write_report(
            &path,
            Report::new(done.after, Some(entries), Some(shown)),
            lang,
        );
    }
    Ok(code)
}

/// Writes the report a lab collects, after the result is printed: one that cannot be
/// written is a warning, never the command's exit code (a fleet tool reads that).
fn write_report(path: &str, r: Report, lang: Lang) {
    if let Err(e) = report::write(path, &r) {
        eprintln!(
            "{}",
            tf(
                lang,
                "cli_warn_report_write",
                &[("path", &e.path.display())]
            )
        );
        eprintln!("details: {}", cuda_setup_core::error::chain(&e));
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("serialisable")
}

/// `state get` in words: one line per layer (versions and paths are technical tokens).
fn human_state(s: &State, lang: Lang) -> String {
    let none = t(lang, "cli_state_none");
    let mut o = String::new();
    let mut line = |key: &'static str, value: String| {
        o.push_str(&tf(lang, key, &[("value", &value)]));
        o.push('\n');
    };
    line("cli_state_computer", s.computer.clone());
    let gpus: Vec<String> = s
        .gpus
        .iter()
        .map(|g| match &g.compute_capability {
            Some(cc) => format!("{} ({cc})", g.name),
            None => g.name.clone(),
        })
        .collect();
    line(
        "cli_state_gpus",
        if gpus.is_empty() {
            none.clone()
        } else {
            gpus.join(", ")
        },
    );
    line(
        "cli_state_driver",
        s.driver
            .as_ref()
            .map_or(none.clone(), |d| d.version.to_string()),
    );
    let tks: Vec<String> = s
        .toolkits
        .iter()
        .map(|tk| {
            format!(
                "{}{} ({})",
                tk.version.as_ref().map_or("?".into(), |v| v.to_string()),
                if tk.active { " *" } else { "" },
                tk.path.display()
            )
        })
        .collect();
    line(
        "cli_state_toolkits",
        if tks.is_empty() {
            none.clone()
        } else {
            tks.join(", ")
        },
    );
    let cudnn: Vec<String> = s
        .cudnn
        .iter()
        .map(|c| c.version.as_ref().map_or("?".into(), |v| v.to_string()))
        .collect();
    line(
        "cli_state_cudnn",
        if cudnn.is_empty() {
            none.clone()
        } else {
            cudnn.join(", ")
        },
    );
    line(
        "cli_state_pytorch",
        s.pytorch.as_ref().map_or(none.clone(), |p| {
            format!("{} {} ({})", p.version, p.variant, p.python.display())
        }),
    );
    line(
        "cli_state_guard",
        s.guard.as_ref().map_or(none.clone(), |g| {
            t(
                lang,
                if g.on {
                    "cli_state_guard_on"
                } else {
                    "cli_state_guard_off"
                },
            )
        }),
    );
    line(
        "cli_state_last_check",
        s.last_check.as_ref().map_or(none.clone(), |c| {
            let when = cuda_setup_core::units::local_time(c.at);
            match (c.works, c.speedup) {
                (true, Some(x)) => tf(
                    lang,
                    "cli_state_check_works_speedup",
                    &[("when", &when), ("speedup", &format!("{x:.1}"))],
                ),
                (true, None) => tf(lang, "cli_state_check_works", &[("when", &when)]),
                (false, _) => tf(lang, "cli_state_check_failed", &[("when", &when)]),
            }
        }),
    );
    o
}

/// `state test` in words: in the desired state, or each drifting layer with its fix.
fn human_drift(found: &[Drift], profile: &str, lang: Lang) -> String {
    if found.is_empty() {
        return format!(
            "{}\n",
            tf(lang, "cli_state_in_desired", &[("profile", &profile)])
        );
    }
    let mut o = format!(
        "{}\n",
        tf(
            lang,
            "cli_state_drift",
            &[("profile", &profile), ("count", &found.len())]
        )
    );
    for d in found {
        let e = d.entry(lang);
        o.push_str(&format!(
            "  [{}] {} -> {}\n        {}\n",
            render(&d.layer.name(), lang),
            e.is.as_deref().unwrap_or("-"),
            e.should,
            e.fix
        ));
    }
    o
}
