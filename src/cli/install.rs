//! `cuda-setup install`: detect → recommend → plan → (confirm) → execute → report.
//! Exit codes follow the MSI conventions fleet tools read (docs/fleet.md).

use std::io::IsTerminal;
use std::path::PathBuf;

use super::progress::{Progress, Update};
use super::{CliError, exit, recommend};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::download::Cancel;
use cuda_setup_core::fleet::apply::Outcome;
use cuda_setup_core::fleet::profile::{
    self, CudnnWant, DriverRule, DriverWant, Profile, PythonAt, SourcesWant, Wanted,
};
use cuda_setup_core::i18n::{self, Lang, render, t, tf};
use cuda_setup_core::linux_driver::{self, LinuxDriverAdvice};
use cuda_setup_core::plan::{self, Choices, CudnnChoice, Method, Plan};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{Facts, Goal, Request, cudnn_by_version};
use cuda_setup_core::repair;
use cuda_setup_core::run::{self, RunEvent, RunReport};
use cuda_setup_core::steps::pypi_race::PypiPick;
use cuda_setup_core::steps::torch_sources::{self, TorchSource};
use cuda_setup_core::steps::{FailureKind, StepEvent};
use cuda_setup_core::target::Target;
use cuda_setup_core::version::{ComputeCapability, Version};
use cuda_setup_core::whatif::Flags;

// MSI's codes, which fleet tools read. Unix keeps only the low 8 bits of an exit status,
// so there a shell sees 194, 66 and 67 (the same numbers modulo 256).
pub const SUCCESS: i32 = 0;
pub const REBOOT_REQUIRED: i32 = 3010;
pub const CANCELLED: i32 = 1602;
pub const FAILED: i32 = 1603;
/// ERROR_INSTALL_ALREADY_RUNNING: another cuda-setup is working on this target.
pub const ALREADY_RUNNING: i32 = 1618;
/// ERROR_INSTALL_PLATFORM_UNSUPPORTED: a Jetson board, where JetPack provides everything.
pub const PLATFORM_UNSUPPORTED: i32 = 1633;

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    #[arg(long, value_parser = crate::values::goal())]
    pub goal: Option<Goal>,
    /// CUDA toolkit version (prefix: 12, 12.4 or 12.4.1)
    #[arg(long, value_name = "VER")]
    pub cuda: Option<Version>,
    /// cuDNN version (default: the recommended one)
    #[arg(long, value_name = "VER", conflicts_with_all = ["cudnn_archive", "no_cudnn"])]
    pub cudnn: Option<Version>,
    /// A cuDNN archive you already have (NVIDIA's zip, its Linux .tar.xz, or the nvidia-cudnn wheel)
    #[arg(long, value_name = "ARCHIVE", conflicts_with = "no_cudnn")]
    pub cudnn_archive: Option<PathBuf>,
    #[arg(long)]
    pub no_cudnn: bool,
    /// Mirror base URL tried before NVIDIA (repeatable)
    #[arg(long, value_name = "URL", value_parser = cuda_setup_core::url::http_url)]
    pub mirror: Vec<String>,
    /// Offline bundle folder (from `cuda-setup bundle`)
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
    /// Install under DIR instead of the machine (like DESTDIR)
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The OS to install for (only with --root)
    #[arg(long, value_parser = crate::values::os(), requires = "root")]
    pub os: Option<Os>,
    /// Print the plan and stop
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation
    #[arg(long)]
    pub yes: bool,
    /// No prompts at all; exit 0 / 3010 / 1602 / 1603
    #[arg(long)]
    pub unattended: bool,
    /// Run a plan saved from `--dry-run --json`
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Write a JSON report of what was found, done and verified
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print the plan (with --dry-run) or the report as JSON
    #[arg(long)]
    pub json: bool,
    /// Let the CUDA installer update the display driver when it is too old
    #[arg(long)]
    pub with_driver: bool,
    /// I will install the NVIDIA driver myself (Windows: no driver step in the plan)
    #[arg(long, conflicts_with = "with_driver")]
    pub skip_driver: bool,
    #[command(flatten)]
    pub driver_path: super::recommend::DriverPathArgs,
    /// GPUs by compute capability (default: detected)
    #[arg(long = "gpu-cc", value_name = "X.Y")]
    pub gpu_cc: Vec<ComputeCapability>,
    /// The driver version (default: detected)
    #[arg(long, value_name = "VER")]
    pub driver: Option<Version>,
    /// The Python interpreter PyTorch goes into (default: the first on PATH)
    #[arg(long, value_name = "PATH")]
    pub python_exe: Option<PathBuf>,
    /// Where PyTorch's wheels come from: auto (PyTorch's server and its mirrors in
    /// compat-tables/pytorch.toml are measured and the fastest is used; the checksum comes
    /// from PyTorch's server whenever it answers), official (https://download.pytorch.org/whl),
    /// or a mirror of PyTorch's index with the same layout, whose variant folder (cu126 …)
    /// is appended, used alone. Default: auto with --lang zh, official otherwise
    #[arg(long, value_name = "auto|official|URL")]
    pub torch_index: Option<TorchSource>,
    /// Parallel connections per download (1-16)
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub connections: u16,
    /// If another cuda-setup is installing on this machine (or root), wait for it
    /// (default: exit 1618)
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub how: MethodArgs,
    /// PyTorch release (prefix: 2, 2.5 or 2.5.1; default: the recommended one)
    #[arg(long, value_name = "VER")]
    pub torch_version: Option<Version>,
    /// PyTorch build (cu124, cu128 …; default: the recommended one)
    #[arg(long, value_name = "NAME")]
    pub torch_variant: Option<String>,
    /// Write the lab profile (lab.toml) these flags stand for into FILE, checked against
    /// the tables, and stop: nothing is installed (`state set --profile FILE` applies it)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["plan", "dry_run", "json"])]
    pub write_profile: Option<PathBuf>,
    /// A lab profile's `[driver] min`/`exact` (`state set`, #36); no flag of its own.
    #[arg(skip)]
    pub driver_floor: Option<cuda_setup_core::recommend::DriverFloor>,
}

/// How the toolkit is fetched (`install` and `bundle` share these).
#[derive(Debug, Default, clap::Args)]
pub struct MethodArgs {
    /// How the toolkit is installed: NVIDIA's installer (administrator), or NVIDIA's
    /// component wheels from a PyPI index into a folder you own (no administrator)
    #[arg(long, value_parser = crate::values::method(), default_value = "installer")]
    pub method: Method,
    /// The PyPI index for --method wheels: tsinghua, aliyun, ustc, a URL ending in
    /// /simple, or auto (the fastest of pypi.org, tsinghua, aliyun and ustc, measured)
    /// (default: pypi.org)
    #[arg(long, value_name = "MIRROR")]
    pub pypi_mirror: Option<PypiPick>,
    /// cuda-toolkit components for --method wheels, comma-separated (default: nvcc,
    /// cudart, nvrtc, cublas, cufft, curand, cusolver, cusparse, nvtx, cccl, profiler)
    #[arg(long, value_delimiter = ',', value_name = "NAME,…")]
    pub components: Vec<String>,
}

impl MethodArgs {
    /// The PyPI index URL the user chose (None: pypi.org, or measured: [`Self::auto`]).
    pub fn index(&self) -> Option<String> {
        self.pypi_mirror
            .as_ref()
            .and_then(PypiPick::mirror)
            .map(|m| m.url.clone())
    }

    /// `--pypi-mirror auto`: the fastest listed index, measured by the core.
    pub fn auto(&self) -> bool {
        self.pypi_mirror == Some(PypiPick::Auto)
    }

    /// The components the user named (None: the default set).
    pub fn components(&self) -> Option<Vec<String>> {
        (!self.components.is_empty()).then(|| self.components.clone())
    }
}

/// A failure before anything ran: the sentence and hint in the user's language, the
/// raw text (if any) behind `details:`.
fn failed(message: String, hint: &str, details: Option<String>) -> CliError {
    CliError::Failed {
        message,
        hint: hint.into(),
        details,
        code: FAILED,
    }
}

/// The what-if flags that stand in for detection.
fn flags(args: &Args) -> Flags {
    Flags {
        gpu_cc: args.gpu_cc.clone(),
        driver: args.driver.clone(),
        ..Default::default()
    }
}

/// What `make_plan` gives: the plan, on Linux with a driver to install or update the
/// distribution's own commands for it (as `recommend` prints them), and the facts it
/// was made from (none for a saved plan).
pub(super) type Made = (Plan, Option<LinuxDriverAdvice>, Option<Facts>);

pub(super) fn make_plan(
    tables: &Tables,
    args: &Args,
    target: &Target,
    lang: Lang,
) -> Result<Made, CliError> {
    if let Some(file) = &args.plan {
        let bytes = std::fs::read(file).map_err(|e| {
            failed(
                tf(lang, "cli_err_not_a_plan", &[("path", &file.display())]),
                &t(lang, "cli_hint_plan_file"),
                Some(format!("{}: {e}", file.display())),
            )
        })?;
        return serde_json::from_slice(&bytes)
            .map(|plan| (plan, None, None))
            .map_err(|e| {
                failed(
                    tf(lang, "cli_err_not_a_plan", &[("path", &file.display())]),
                    &t(lang, "cli_hint_plan_file"),
                    Some(e.to_string()),
                )
            });
    }
    let goal = args.goal.unwrap_or_default();
    let facts = recommend::facts(tables, target.os, &flags(args), target.root.as_deref())?;
    // A `--root` sandbox is read as `recommend --root` reads it (its os-release, its
    // Secure Boot variable, what kind of machine it is), not the machine running the command.
    let host = match &target.root {
        Some(root) => Host::sandbox(target.os, root, Default::default()),
        None => Host::real(),
    };
    let mut rec = cuda_setup_core::recommend::recommend(
        tables,
        &facts,
        &Request {
            goal,
            cuda: args.cuda.clone(),
            method: args.how.method,
            driver: args.driver_path.pref(),
            distro: linux_driver::os_release(&host),
            torch_version: args.torch_version.clone(),
            torch_variant: args.torch_variant.clone(),
            driver_floor: args.driver_floor.clone(),
        },
    );
    let linux = recommend::linux_advice(&host, &rec);
    if !rec.fits() {
        // Stopped by the driver on Linux: what to run comes before the error.
        if let Some(a) = &linux {
            eprint!("{}", super::linux_driver::human(a, lang));
        }
        let b: Vec<String> = rec
            .blockers
            .iter()
            .map(|m| cuda_setup_core::i18n::render(m, lang))
            .collect();
        return Err(failed(
            b.join("\n"),
            &t(lang, "cli_hint_see_recommend"),
            None,
        ));
    }
    if let (Some(v), Some(tk)) = (&args.cudnn, &rec.toolkit) {
        rec.cudnn = Some(cudnn_by_version(tables, target.os, tk.version.major(), v)?);
    }
    // Where the wheel comes from: the choice given, else the language's default.
    let source = args
        .torch_index
        .clone()
        .unwrap_or_else(|| TorchSource::default_for(lang));
    let mut measured = torch_sources::AutoSources::default();
    if let Some(pick) = rec.torch.as_mut() {
        match torch_sources::apply(
            pick,
            &source,
            &tables.pytorch.mirrors,
            &cuda_setup_core::refresh::Sources::from_env().torch_index,
        ) {
            Ok(mirrors) => measured.torch_mirrors = mirrors,
            // A PyPI index has no CUDA builds of torch (on Windows only the CPU one).
            Err(torch_sources::NotTorchIndex(base)) => {
                return Err(CliError::Usage {
                    message: cuda_setup_core::i18n::render(
                        &cuda_setup_core::msg!("torch_index_is_pypi", index = base),
                        lang,
                    ),
                    hint: t(lang, "cli_hint_torch_index"),
                });
            }
        }
    }
    let python = args.python_exe.clone().or_else(|| {
        (goal == Goal::Pytorch)
            .then(|| plan::default_python(target))
            .flatten()
    });
    let choices = Choices {
        pypi_index: args.how.index(),
        pypi_auto: args.how.auto(),
        measured,
        components: args.how.components(),
        cudnn: match (&args.cudnn_archive, args.no_cudnn) {
            (_, true) => CudnnChoice::Skip,
            (Some(z), _) => CudnnChoice::Archive(z.clone()),
            (None, false) => CudnnChoice::Recommended,
        },
        mirrors: args.mirror.clone(),
        bundle: args.bundle.clone(),
        with_driver: args.with_driver,
        skip_driver: args.skip_driver,
        python,
        ..Choices::new(args.how.method)
    }
    .with_connections(args.connections as usize);
    plan::make(target, &rec, &choices)
        .map(|plan| (plan, linux, Some(facts)))
        .map_err(|e| match e {
            // Not a failure of ours: nothing here is ours to install (MSI's 1633).
            plan::PlanError::Jetson => CliError::Failed {
                message: t(lang, "cli_err_jetson"),
                hint: render(&e.hint(), lang),
                details: None,
                code: PLATFORM_UNSUPPORTED,
            },
            e => failed(
                t(lang, "cli_err_plan"),
                &cuda_setup_core::i18n::render(&e.hint(), lang),
                Some(cuda_setup_core::error::chain(&e)),
            ),
        })
}

fn describe(plan: &Plan, lang: Lang) -> String {
    let mut s = String::new();
    if let Some(v) = &plan.toolkit {
        s.push_str(&format!("CUDA {v}"));
    }
    if let Some(v) = &plan.cudnn {
        s.push_str(&format!(", cuDNN {v}"));
    }
    if let Some(c) = &plan.torch_command {
        s.push_str(c);
    }
    if let Some(r) = &plan.root {
        s.push_str(&tf(lang, "cli_plan_under", &[("root", &r.display())]));
    }
    s
}

pub fn run(tables: &Tables, args: &Args, lang: Lang) -> Result<i32, CliError> {
    let target = match &args.root {
        Some(root) => Target::rooted(args.os.unwrap_or_else(Os::current), root),
        None => Target::real(),
    };
    let (plan, linux, facts) = make_plan(tables, args, &target, lang)?;
    if args.dry_run {
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&plan_json(&plan, linux.as_ref(), lang))
                    .expect("serialisable")
            );
        } else {
            println!(
                "{}",
                tf(lang, "cli_plan", &[("plan", &describe(&plan, lang))])
            );
            for (i, s) in plan.steps.iter().enumerate() {
                println!("  {}. {}", i + 1, super::plain::step_title(lang, s.kind()));
            }
            for n in &plan.notes {
                println!("  {}", note(n, lang));
            }
            if let Some(a) = &linux {
                print!("\n{}", super::linux_driver::human(a, lang));
            }
        }
        return Ok(exit::OK);
    }
    // The facts the closing verdict reads: a saved plan has none, so they come from here
    // and now — before anything is installed, so that a bad what-if flag stops the run
    // instead of losing its report afterwards (as for a plan made here).
    let facts = match facts {
        Some(f) => f,
        None => recommend::facts(tables, target.os, &flags(args), target.root.as_deref())?,
    };
    for n in &plan.notes {
        eprintln!("{}", note(n, lang));
    }
    if let Some(a) = &linux {
        eprint!("{}", super::linux_driver::human(a, lang));
    }
    if !args.yes && !args.unattended {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::Usage {
                message: t(lang, "cli_err_confirm"),
                hint: t(lang, "cli_hint_confirm"),
            });
        }
        let plan_text = describe(&plan, lang);
        eprint!(
            "{}",
            tf(lang, "cli_install_confirm", &[("plan", &plan_text)])
        );
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("{}", t(lang, "cli_nothing_changed"));
            return Ok(CANCELLED);
        }
    }
    let (report, verdict, json) = execute(tables, args, &target, &plan, &facts, lang)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("serialisable")
        );
    } else if report.ok() && !report.restart_pending {
        println!(
            "{} {}",
            if report.changed {
                t(lang, "cli_installed")
            } else {
                t(lang, "cli_already_in_place")
            },
            describe(&plan, lang)
        );
        if report.reboot_required {
            println!("{}", t(lang, "cli_reboot_required"));
        }
    }
    if !args.json {
        print!("{}", super::verify::verdict_text(&verdict, lang));
    }
    if let Some(log) = &report.log_file {
        eprintln!("{}", tf(lang, "cli_log", &[("path", &log.display())]));
    }
    Ok(code(&report))
}

/// A plan made by [`plan_for`], confirmed: run it (waiting for another cuda-setup with
/// `--wait`), with its progress on standard error, then the checks that end a run; the
/// report, the closing verdict, and the report as JSON (written to `--report`). `install`
/// prints them; `state set` (#36) runs the install requests of a lab profile through
/// here.
pub(super) fn execute(
    tables: &Tables,
    args: &Args,
    target: &Target,
    plan: &Plan,
    facts: &Facts,
    lang: Lang,
) -> Result<
    (
        RunReport,
        cuda_setup_core::verify::verdict::Verdict,
        serde_json::Value,
    ),
    CliError,
> {
    super::wait_for_others(args.wait, lang);
    let total = plan.steps.len();
    let progress = Progress::new(args.json, "      ", std::time::Duration::from_secs(2), lang);
    let report = run::run_blocking(plan, target, &Cancel::default(), &mut |e| match e {
        RunEvent::Started { index, name } => progress.line(&format!(
            "[{}/{total}] {}",
            index + 1,
            super::plain::step_title(lang, name)
        )),
        RunEvent::Step {
            event: StepEvent::Log { line },
            ..
        } => {
            progress.line(&format!("      {}", render(&line, lang)));
            // A source's or a tool's own words (a retry's error), for support.
            if let Some(raw) = i18n::details(&line, lang) {
                progress.line(&format!(
                    "        details: {}",
                    cuda_setup_core::shown::text(&raw.replace('\n', "; "))
                ));
            }
        }
        RunEvent::Step {
            event:
                StepEvent::Progress {
                    done,
                    total: t,
                    bytes_per_sec,
                    eta_secs,
                    source,
                },
            ..
        } => {
            let note = source
                .map(|host| tf(lang, "cli_dl_from", &[("host", &host)]))
                .unwrap_or_default();
            progress.update(&Update {
                done,
                total: t,
                bytes_per_sec,
                eta_secs,
                note: &note,
            })
        }
        RunEvent::Finished {
            name,
            outcome,
            skipped,
            ..
        } => {
            progress.finish();
            let how = if skipped {
                t(lang, "cli_step_done_earlier")
            } else if outcome.changed {
                t(lang, "cli_step_done")
            } else {
                t(lang, "cli_step_nothing_to_do")
            };
            eprintln!(
                "      {}: {how} — {}",
                super::plain::step_title(lang, name),
                render(&outcome.detail, lang)
            );
        }
        // Another cuda-setup at work: said once, below, in the user's language.
        RunEvent::Failed {
            kind: FailureKind::Busy,
            ..
        } => progress.finish(),
        // Said in plain words once the run is over (the report has its parameters).
        RunEvent::Failed { name, .. } => {
            progress.finish();
            eprintln!(
                "      {}",
                tf(
                    lang,
                    "cli_step_failed",
                    &[("name", &super::plain::step_title(lang, name))]
                )
            );
        }
        RunEvent::Done(_) => {}
    });
    if let Some(f) = report
        .failure
        .as_ref()
        .filter(|f| f.kind == FailureKind::Busy)
    {
        super::print_busy(f, lang);
    } else if let Some(f) = &report.failure {
        super::plain::failure(f, lang).print();
    }
    // The checks that end a run, and the verdict from them: the same sentence as
    // `smoke`, `doctor`, `repair` and the wizard.
    let verdict = repair::after_run(&repair::AfterRun {
        target,
        tables,
        goal: plan.goal,
        runs: std::slice::from_ref(&report),
        facts,
        python: args.python_exe.clone(),
    });
    let mut json = serde_json::to_value(&report).expect("serialisable");
    json["verdict"] = super::verify::verdict_json(&verdict, lang);
    if let Some(file) = &args.report {
        write_report(file, &json, lang)?;
    }
    Ok((report, verdict, json))
}

/// What these flags ask of one install run, in the lab profile's terms (the core maps it
/// onto the profile's sections: `Profile::from_wanted`).
pub fn wanted(args: &Args) -> Wanted {
    Wanted {
        goal: args.goal.unwrap_or_default(),
        cuda: args.cuda.clone(),
        method: args.how.method,
        components: args.how.components.clone(),
        cudnn: Some(match (&args.cudnn, &args.cudnn_archive, args.no_cudnn) {
            (_, _, true) => CudnnWant::None,
            (_, Some(z), _) => CudnnWant::Archive(z.clone()),
            (Some(v), _, _) => CudnnWant::Version(v.clone()),
            (None, None, false) => CudnnWant::Recommended,
        }),
        torch_version: args.torch_version.clone(),
        torch_variant: args.torch_variant.clone(),
        python: args
            .python_exe
            .clone()
            .map_or(PythonAt::Default, PythonAt::Interpreter),
        guard: true,
        driver: Some(DriverWant {
            rule: DriverRule::Needed,
            install: !args.skip_driver,
            when_old: args.driver_path.pref(),
            cuda_installer: args.with_driver,
        }),
        sources: SourcesWant {
            mirrors: args.mirror.clone(),
            bundle: args.bundle.clone(),
            pypi_mirror: args.how.pypi_mirror.as_ref().map(ToString::to_string),
            torch_index: args.torch_index.as_ref().map(ToString::to_string),
        },
    }
}

/// `install --write-profile FILE`: the profile of these flags (with `--lang` and
/// `--report` when given), read back as any profile is — so what the tables cannot give
/// is refused here, not on every PC — then written atomically.
pub fn write_profile(
    tables: &Tables,
    args: &Args,
    file: &std::path::Path,
    given_lang: Option<Lang>,
    lang: Lang,
) -> Result<i32, CliError> {
    let os = args.os.unwrap_or_else(Os::current);
    let report = args.report.as_ref().map(|p| p.display().to_string());
    let profile =
        Profile::from_wanted(&wanted(args), given_lang, report).map_err(|e| CliError::Usage {
            message: render(&e.message(), lang),
            hint: render(&e.hint(), lang),
        })?;
    let text = profile.to_toml();
    profile::parse(&text, file, tables, os)?;
    let name = file.file_name().ok_or_else(|| CliError::Usage {
        message: tf(lang, "cli_err_profile_write", &[("path", &file.display())]),
        hint: t(lang, "cli_hint_profile_write"),
    })?;
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    cuda_setup_core::place::Dir::create(dir)
        .and_then(|d| d.write_atomic(name, text.as_bytes(), true))
        .map_err(|e| {
            failed(
                tf(lang, "cli_err_profile_write", &[("path", &file.display())]),
                &t(lang, "cli_hint_profile_write"),
                Some(e.to_string()),
            )
        })?;
    println!(
        "{}",
        tf(lang, "cli_profile_written", &[("path", &file.display())])
    );
    Ok(exit::OK)
}

/// A plan note in the user's language, with the raw text it carries after `details:`.
fn note(n: &plan::Note, lang: Lang) -> String {
    let m = n.message();
    let text = tf(lang, "cli_note", &[("note", &render(&m, lang))]);
    match i18n::details(&m, lang) {
        Some(raw) => format!(
            "{text} (details: {})",
            cuda_setup_core::shown::text(&raw.replace('\n', "; "))
        ),
        None => text,
    }
}

/// `--dry-run --json`: the plan as `--plan FILE` reads it, each note with its `text` in
/// `--lang`, and `linux_driver` as `recommend --json` has it (null when none).
fn plan_json(plan: &Plan, linux: Option<&LinuxDriverAdvice>, lang: Lang) -> serde_json::Value {
    let mut v = serde_json::to_value(plan).expect("serialisable");
    if let Some(notes) = v["notes"].as_array_mut() {
        for (json, n) in notes.iter_mut().zip(&plan.notes) {
            json["text"] = render(&n.message(), lang).into();
        }
    }
    v["linux_driver"] = linux.map_or(serde_json::Value::Null, |a| {
        super::linux_driver::json(a, lang)
    });
    v
}

fn write_report(
    file: &std::path::Path,
    report: &serde_json::Value,
    lang: Lang,
) -> Result<(), CliError> {
    if let Some(d) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(d);
    }
    std::fs::write(
        file,
        serde_json::to_vec_pretty(report).expect("serialisable"),
    )
    .map_err(|e| {
        failed(
            tf(lang, "cli_err_report_write", &[("path", &file.display())]),
            &t(lang, "cli_hint_report_path"),
            Some(e.to_string()),
        )
    })
}

pub fn code(r: &RunReport) -> i32 {
    exit_code(Outcome::of_run(r))
}

/// MSI's number for an install's (or `state set`'s) outcome; drift left that no step of
/// ours fixes is a failure to a fleet tool.
pub fn exit_code(o: Outcome) -> i32 {
    match o {
        Outcome::Success => SUCCESS,
        Outcome::RebootRequired => REBOOT_REQUIRED,
        Outcome::Cancelled => CANCELLED,
        Outcome::Busy => ALREADY_RUNNING,
        Outcome::Failed | Outcome::DriftLeft => FAILED,
    }
}
