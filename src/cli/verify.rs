//! `cuda-setup smoke` (the GPU works: GEMM, bandwidth, cuDNN, nvcc; a program builds
//! against the toolkit) and `cuda-setup
//! doctor` (PyTorch in a Python works on the GPU, or the exact commands that fix it).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::CliError;
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::{self, Lang, t, tf};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::target::Target;
use cuda_setup_core::verify::doctor::{
    self, DoctorOptions, DoctorReport, GpuFacts, PypiMirror, Severity,
};
use cuda_setup_core::verify::verdict::{self, Inputs, Scope, Surface, Verdict};
use cuda_setup_core::verify::{self, Check, SmokeOptions, SmokeReport, Status};

#[derive(Debug, clap::Args)]
pub struct SmokeArgs {
    /// Print one JSON object (fields in docs/cli.md)
    #[arg(long)]
    pub json: bool,
    /// The CUDA toolkit folder to test (default: the one nvcc on PATH belongs to, else
    /// CUDA_PATH, else the newest installed)
    #[arg(long, value_name = "DIR")]
    pub cuda_dir: Option<PathBuf>,
    /// Which GPU (as the driver numbers them)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,
    /// GEMM sizes, comma-separated (m = n = k)
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [1024usize, 2048, 4096, 8192],
        value_name = "N,N,…"
    )]
    pub sizes: Vec<usize>,
    /// Do not compile and run the nvcc test kernel
    #[arg(long)]
    pub no_nvcc: bool,
    /// Do not build (compile and link) a program against the toolkit's libraries
    #[arg(long)]
    pub no_build: bool,
    /// Seconds the GPU part may take before it is abandoned
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub timeout: u64,
}

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print one JSON object (fields in docs/cli.md)
    #[arg(long)]
    pub json: bool,
    /// The Python to examine (default: the first python3/python on PATH)
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// A PyPI mirror for the fix commands: tsinghua, aliyun, ustc, or a URL
    #[arg(long, value_name = "NAME|URL")]
    pub pypi_mirror: Option<PypiMirror>,
    /// The size of the check's matmul
    #[arg(long, default_value_t = 2048, value_name = "N")]
    pub size: usize,
    /// Seconds the Python probe may take (importing torch can be slow)
    #[arg(long, default_value_t = 180, value_name = "SECS")]
    pub timeout: u64,
    /// Also build a minimal CUDA extension with this Python's PyTorch, import it, and run
    /// it on the GPU if there is one (in a temp folder, removed afterwards)
    #[arg(long)]
    pub build_extension: bool,
    /// The driver version, as a what-if (instead of NVML; never recorded)
    #[arg(long, value_name = "VER", hide = true)]
    pub driver: Option<cuda_setup_core::version::Version>,
    /// Seconds the extension build may take (compilers included)
    #[arg(
        long,
        default_value_t = 900,
        value_name = "SECS",
        requires = "build_extension"
    )]
    pub build_timeout: u64,
    /// Tests: a sandbox root for detection (toolkits, cuDNN) and the state folder (the
    /// driver record, the guard's record) instead of the machine
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<PathBuf>,
    /// Tests: the OS the sandbox root stands for (only with --root)
    #[arg(long, value_parser = crate::values::os(), requires = "root", hide = true)]
    pub os: Option<cuda_setup_core::compat::Os>,
    /// Tests: GPUs by compute capability instead of NVML (only with --root)
    #[arg(long = "gpu-cc", value_name = "X.Y", requires = "root", hide = true)]
    pub gpu_cc: Vec<cuda_setup_core::version::ComputeCapability>,
    /// Tests: the highest CUDA the driver runs (only with --root)
    #[arg(long, value_name = "X.Y", requires = "root", hide = true)]
    pub driver_cuda: Option<cuda_setup_core::version::Version>,
}

fn usage(message: String, hint: &str) -> CliError {
    CliError::Usage {
        message,
        hint: hint.into(),
    }
}

pub fn run_smoke(tables: &Tables, args: &SmokeArgs, lang: Lang) -> Result<i32, CliError> {
    if let Some(d) = &args.cuda_dir
        && !d.is_dir()
    {
        return Err(usage(
            tf(lang, "cli_err_cuda_dir", &[("path", &d.display())]),
            &t(lang, "cli_hint_cuda_dir"),
        ));
    }
    if let Some(bad) = args.sizes.iter().find(|n| !(16..=32768).contains(*n)) {
        return Err(usage(
            tf(lang, "cli_err_sizes", &[("value", bad)]),
            &t(lang, "cli_hint_sizes"),
        ));
    }
    if args.timeout == 0 {
        return Err(usage(
            t(lang, "cli_err_timeout_zero"),
            &t(lang, "cli_hint_timeout"),
        ));
    }
    let opts = SmokeOptions {
        cuda_dir: args.cuda_dir.clone(),
        device: args.device,
        sizes: args.sizes.clone(),
        timeout: Duration::from_secs(args.timeout),
        nvcc: !args.no_nvcc,
        build: !args.no_build,
        ..SmokeOptions::default()
    };
    let report = verify::smoke(&Host::real(), tables, &opts);
    // A pass records the driver it ran on (#33).
    cuda_setup_core::driverwatch::after_smoke(&Target::real(), &report, false);
    // The last GPU check, for a lab's table (#36).
    cuda_setup_core::last_check::record(&Target::real(), &smoke_verdict(&report));
    if args.json {
        println!("{}", with_verdict(&report, &smoke_verdict(&report), lang));
    } else {
        print!("{}", human_smoke(&report, lang));
    }
    Ok(report.exit_code)
}

pub fn run_doctor(tables: &Tables, args: &DoctorArgs, lang: Lang) -> Result<i32, CliError> {
    if let Some(p) = &args.python
        && !p.is_file()
    {
        return Err(usage(
            tf(lang, "cli_err_python_file", &[("path", &p.display())]),
            &t(lang, "cli_hint_python_file"),
        ));
    }
    if !(16..=16384).contains(&args.size) {
        return Err(usage(
            tf(lang, "cli_err_size", &[("value", &args.size)]),
            &t(lang, "cli_hint_size"),
        ));
    }
    let (host, mut gpu) = match &args.root {
        // A sandbox: detection under the root, the GPU facts given (tests).
        Some(root) => {
            let env = std::env::vars().collect();
            let host = Host::sandbox(args.os.unwrap_or_else(Os::current), root, env);
            let gpu = GpuFacts {
                driver: None,
                driver_cuda: args.driver_cuda.clone(),
                gpus: args
                    .gpu_cc
                    .iter()
                    .map(|cc| doctor::GpuSummary {
                        name: format!("GPU ({})", cc.sm()),
                        compute_capability: Some(*cc),
                    })
                    .collect(),
            };
            (host, gpu)
        }
        None => {
            let host = Host::real();
            let gpu = GpuFacts::detect(&host, tables);
            (host, gpu)
        }
    };
    if let Some(d) = &args.driver {
        gpu.driver = Some(d.clone());
    }
    let opts = DoctorOptions {
        python: args.python.clone(),
        mirror: args.pypi_mirror.clone(),
        timeout: Duration::from_secs(args.timeout.max(1)),
        size: args.size,
    };
    let ext = doctor::ExtensionOptions {
        build: args.build_extension,
        build_timeout: Duration::from_secs(args.build_timeout.max(1)),
    };
    let mut report = doctor::examine_with(&host, tables, &opts, &gpu, &ext);
    let target = match &args.root {
        Some(root) => Target::rooted(
            args.os.unwrap_or_else(cuda_setup_core::compat::Os::current),
            root,
        ),
        None => Target::real(),
    };
    // A build verified on the GPU is recorded; a recorded one replaced is told (#33).
    cuda_setup_core::guard::after_doctor(&target, &mut report);
    // The driver watched (#33): judged against the record, then a pass recorded.
    let drift = if args.driver.is_some() {
        cuda_setup_core::driverwatch::judge_doctor(&target, &report)
    } else {
        cuda_setup_core::driverwatch::after_doctor(&target, &report, false)
    };
    // The last GPU check, for a lab's table (#36).
    cuda_setup_core::last_check::record(&target, &doctor_verdict(&report));
    if args.json {
        let mut v: serde_json::Value =
            serde_json::from_str(&with_verdict(&report, &doctor_verdict(&report), lang))
                .expect("our own JSON");
        v["driver_watch"] = match &drift {
            Some(d) => serde_json::json!({
                "id": d.id(),
                "drift": d,
                "text": i18n::render(&d.message(), lang),
                "fix": i18n::render(&cuda_setup_core::driverwatch::how(d), lang),
            }),
            None => serde_json::Value::Null,
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
    } else {
        print!("{}", human_doctor(&report, lang));
        if let Some(d) = &drift {
            print!("{}", drift_text(d, lang));
        }
    }
    Ok(report.exit_code)
}

/// The watched driver's finding, as `repair` prints one.
fn drift_text(d: &cuda_setup_core::driverwatch::Drift, lang: Lang) -> String {
    let mut o = format!(
        "\n[{}] {}\n        {}\n",
        t(lang, "cli_severity_warning"),
        i18n::render(&d.message(), lang),
        tf(
            lang,
            "cli_repair_what_to_do",
            &[(
                "how",
                &i18n::render(&cuda_setup_core::driverwatch::how(d), lang)
            )]
        )
    );
    if cuda_setup_core::driverwatch::offers_policy(d.id()) {
        let _ = writeln!(
            o,
            "hint: {}",
            i18n::render(&cuda_setup_core::driverwatch::policy::explanation(), lang)
        );
    }
    o
}

/// The smoke test's verdict: the toolkit, judged for a developer (what smoke tests).
pub fn smoke_verdict(r: &SmokeReport) -> Verdict {
    verdict::decide(&Inputs {
        scope: Scope::Cuda,
        goal: Goal::Developer,
        torch_expected: false,
        facts: None,
        smoke: Some(r),
        doctor: None,
        run: Default::default(),
    })
}

/// The doctor's verdict: PyTorch in that Python.
pub fn doctor_verdict(r: &DoctorReport) -> Verdict {
    verdict::decide(&Inputs {
        scope: Scope::Torch,
        goal: Goal::Pytorch,
        torch_expected: true,
        facts: None,
        smoke: None,
        doctor: Some(r),
        run: Default::default(),
    })
}

/// The verdict as the terminal says it: the headline, what to do next, the amber lines
/// (the wizard's banner says the same headline).
pub fn verdict_text(v: &Verdict, lang: Lang) -> String {
    let Some(s) = verdict::render(v, lang, Surface::Cli) else {
        return String::new();
    };
    let mut o = format!("\n{}\n", s.headline);
    for line in s.next.iter().chain(&s.secondary) {
        let _ = writeln!(o, "  {line}");
    }
    o
}

/// The report as pretty JSON with its verdict (`verdict`: the typed value, with its
/// `headline`, `next` and `secondary` lines in `--lang`).
fn with_verdict(report: &impl serde::Serialize, v: &Verdict, lang: Lang) -> String {
    let mut json = serde_json::to_value(report).expect("serialisable");
    json["verdict"] = verdict_json(v, lang);
    add_texts(&mut json, lang);
    serde_json::to_string_pretty(&json).expect("serialisable")
}

/// The verdict as JSON: the typed value, with its `headline`, `next` and
/// `secondary_text` lines in `--lang` (none while nothing was checked).
pub fn verdict_json(v: &Verdict, lang: Lang) -> Value {
    let mut verdict = serde_json::to_value(v).expect("serialisable");
    if let Some(s) = verdict::render(v, lang, Surface::Cli) {
        verdict["headline"] = s.headline.into();
        verdict["next"] = s.next.into();
        verdict["secondary_text"] = s.secondary.into();
    }
    verdict
}

fn add_texts(v: &mut Value, lang: Lang) {
    match v {
        Value::Object(map) => {
            let rendered = match (map.get("key"), map.get("params")) {
                (Some(Value::String(k)), Some(Value::Object(params))) => {
                    let params = params.iter().map(|(name, value)| {
                        (
                            name,
                            value.as_str().map_or(value.to_string(), str::to_string),
                        )
                    });
                    i18n::render_key(k, params, lang)
                }
                _ => None,
            };
            for (_, child) in map.iter_mut() {
                add_texts(child, lang);
            }
            if let Some(t) = rendered {
                map.insert("text".into(), Value::String(t));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| add_texts(i, lang)),
        _ => {}
    }
}

fn status_word(s: Status, lang: Lang) -> String {
    match s {
        Status::Passed => t(lang, "cli_status_passed"),
        Status::Skipped => t(lang, "cli_status_skipped"),
        Status::Failed => t(lang, "cli_status_failed"),
    }
}

/// A check's reason, or "as above" when the previous check said the same.
fn reason_line<T>(o: &mut String, c: &Check<T>, lang: Lang, last: &mut Option<String>) {
    if let Some(r) = &c.reason {
        let text = i18n::render(r, lang);
        if last.as_deref() == Some(text.as_str()) {
            let _ = writeln!(o, "    {}", t(lang, "cli_as_above"));
        } else {
            let _ = writeln!(o, "    {text}");
            // The library's or the driver's own words, for searching and support.
            if let Some(d) = i18n::details(r, lang) {
                let _ = writeln!(o, "    details: {}", d.replace('\n', "\n      "));
            }
        }
        *last = Some(text);
    }
}

pub fn human_smoke(r: &SmokeReport, lang: Lang) -> String {
    let mut o = String::new();
    let d = &r.driver;
    match (&d.cuda_version, &d.error) {
        (Some(v), _) => {
            let _ = writeln!(
                o,
                "{} {} (CUDA {v})",
                t(lang, "cli_smoke_driver"),
                d.library
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(o, "{} {} — {e}", t(lang, "cli_smoke_driver"), d.library);
        }
        (None, None) => {
            let _ = writeln!(o, "{} {}", t(lang, "cli_smoke_driver"), d.library);
        }
    }
    if let Some(g) = &r.device {
        let _ = writeln!(
            o,
            "GPU {}:   {} ({}, {}, {} SMs, PCI {})",
            g.index,
            g.name,
            g.compute_capability.sm(),
            cuda_setup_core::units::bytes(g.memory_total_bytes),
            g.multiprocessors,
            g.pci_bus_id
        );
    }
    match &r.toolkit {
        Some(tk) => {
            let v = tk
                .version
                .as_ref()
                .map_or("?".to_string(), ToString::to_string);
            let _ = writeln!(
                o,
                "{} {} (CUDA {v})",
                t(lang, "cli_toolkit"),
                tk.path.display()
            );
        }
        None => {
            let _ = writeln!(
                o,
                "{} {}",
                t(lang, "cli_toolkit"),
                t(lang, "cli_none_found")
            );
        }
    }

    let mut last = None;
    let g = &r.checks.gemm;
    let lib = g
        .detail
        .cublas_version
        .as_ref()
        .map(|v| format!(" (cuBLAS {v})"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "\n[{}] {}{lib}",
        status_word(g.status, lang),
        t(lang, "cli_check_gemm")
    );
    reason_line(&mut o, g, lang, &mut last);
    for res in &g.detail.results {
        let a = &res.accuracy;
        let _ = writeln!(
            o,
            "    {:<5} {:>5}³  {:>10.1} GFLOP/s  {:>9.3} ms  {} {:.1e} ({} {:.0e}){}",
            res.precision.name(),
            res.size,
            res.gflops,
            res.ms,
            t(lang, "cli_numeric_error"),
            a.max_error,
            t(lang, "cli_tolerance"),
            a.tolerance,
            if a.passed {
                String::new()
            } else {
                t(lang, "cli_wrong")
            }
        );
    }
    for n in &g.detail.not_run {
        let _ = writeln!(o, "    {} {n}", t(lang, "cli_not_run"));
    }

    let b = &r.checks.bandwidth;
    let _ = writeln!(
        o,
        "\n[{}] {}",
        status_word(b.status, lang),
        t(lang, "cli_check_bandwidth")
    );
    reason_line(&mut o, b, lang, &mut last);
    for mem in ["pageable", "pinned"] {
        let get = |dir: &str| {
            b.detail
                .results
                .iter()
                .find(|x| x.memory == mem && x.direction == dir)
                .map(|x| format!("{:.1} GB/s", x.gb_per_s))
        };
        if let (Some(up), Some(down)) = (get("host_to_device"), get("device_to_host")) {
            let label = match mem {
                "pinned" => t(lang, "cli_pinned"),
                _ => t(lang, "cli_pageable"),
            };
            let _ = writeln!(
                o,
                "    {label}  {} {up:>11}   {} {down:>11}",
                t(lang, "cli_host_to_gpu"),
                t(lang, "cli_gpu_to_host")
            );
        }
    }
    if let Some(s) = b.detail.pinned_speedup {
        let _ = writeln!(
            o,
            "    {}",
            tf(
                lang,
                "cli_pinned_speedup",
                &[("speedup", &format!("{s:.1}"))]
            )
        );
    }

    let c = &r.checks.cudnn;
    let v = c
        .detail
        .version
        .as_ref()
        .or(c.detail.header_version.as_ref())
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let _ = writeln!(o, "\n[{}] cuDNN{v}", status_word(c.status, lang));
    if let Some(l) = &c.detail.library {
        let _ = writeln!(o, "    {}", l.display());
    }
    reason_line(&mut o, c, lang, &mut last);
    if let Some(conv) = &c.detail.convolution {
        let s = conv.shape;
        let _ = writeln!(
            o,
            "    {} {}×{}×{}×{} * {}×{}×{}×{}: {} {:.1e}",
            t(lang, "cli_convolution"),
            s.n,
            s.c,
            s.h,
            s.w,
            s.k,
            s.c,
            s.r,
            s.s,
            t(lang, "cli_numeric_error"),
            conv.accuracy.max_error
        );
    }

    let n = &r.checks.nvcc;
    let v = n
        .detail
        .version
        .as_ref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let _ = writeln!(o, "\n[{}] nvcc{v}", status_word(n.status, lang));
    reason_line(&mut o, n, lang, &mut last);
    if let Some(verify::nvcc::KernelOutcome::Ok { device }) = &n.detail.kernel {
        let _ = writeln!(o, "    {} {device}", t(lang, "cli_kernel_ran_on"));
    }

    let b = &r.checks.build;
    let _ = writeln!(
        o,
        "\n[{}] {}",
        status_word(b.status, lang),
        t(lang, "cli_check_build")
    );
    reason_line(&mut o, b, lang, &mut last);
    if b.detail.linked {
        let _ = writeln!(
            o,
            "    {} {}",
            t(lang, "cli_build_linked"),
            b.detail.libraries.join(", ")
        );
    }

    let _ = writeln!(
        o,
        "\n{} {} (exit {}, {} ms)",
        t(lang, "cli_result"),
        status_word(r.status, lang),
        r.exit_code,
        r.elapsed_ms
    );
    o.push_str(&verdict_text(&smoke_verdict(r), lang));
    o
}

/// One finding: its tag and sentence, the details, the fix and its commands.
fn doctor_finding(
    o: &mut String,
    severity: Severity,
    message: &cuda_setup_core::message::Message,
    fix: Option<&doctor::Fix>,
    lang: Lang,
) {
    let tag = match severity {
        Severity::Ok => t(lang, "cli_doctor_ok"),
        Severity::Info => t(lang, "cli_doctor_note"),
        Severity::Problem => t(lang, "cli_doctor_problem"),
    };
    let _ = writeln!(o, "{tag} {}", i18n::render(message, lang));
    if let Some(d) = i18n::details(message, lang) {
        let _ = writeln!(
            o,
            "          details: {}",
            d.replace('\n', "\n            ")
        );
    }
    if let Some(fix) = fix {
        let _ = writeln!(
            o,
            "          {} {}",
            t(lang, "cli_fix"),
            i18n::render(&fix.message, lang)
        );
        for c in &fix.commands {
            let _ = writeln!(o, "            {c}");
        }
    }
}

pub fn human_doctor(r: &DoctorReport, lang: Lang) -> String {
    let mut o = String::new();
    for f in &r.findings {
        doctor_finding(&mut o, f.severity, &f.message, f.fix.as_ref(), lang);
    }
    // The other GPU packages (#33), under their own heading when there are any.
    let packages = r.packages.iter().flat_map(|p| &p.findings);
    if packages.clone().next().is_some() {
        let _ = writeln!(o, "\n{}", t(lang, "cli_doctor_packages"));
        for f in packages {
            doctor_finding(&mut o, f.severity, &f.message, f.fix.as_ref(), lang);
        }
    }
    let _ = writeln!(
        o,
        "\n{} {} (exit {}, {} ms)",
        t(lang, "cli_result"),
        status_word(r.status, lang),
        r.exit_code,
        r.elapsed_ms
    );
    o.push_str(&verdict_text(&doctor_verdict(r), lang));
    o
}
