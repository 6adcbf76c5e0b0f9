//! `cuda-setup smoke` (the GPU works: GEMM, bandwidth, cuDNN, nvcc) and `cuda-setup
//! doctor` (PyTorch in a Python works on the GPU, or the exact commands that fix it).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::CliError;
use cuda_setup_core::compat::Tables;
use cuda_setup_core::i18n::{self, CATALOG, Lang};
use cuda_setup_core::platform::Host;
use cuda_setup_core::verify::doctor::{
    self, DoctorOptions, DoctorReport, GpuFacts, PypiMirror, Severity,
};
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
            format!("--cuda-dir {}: no such folder", d.display()),
            "give the toolkit's folder, e.g. /usr/local/cuda-12.4 or \"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\"",
        ));
    }
    if let Some(bad) = args.sizes.iter().find(|n| !(16..=32768).contains(*n)) {
        return Err(usage(
            format!("--sizes: {bad} is out of range"),
            "give sizes from 16 to 32768, e.g. --sizes 1024,4096",
        ));
    }
    if args.timeout == 0 {
        return Err(usage(
            "--timeout 0".into(),
            "give a number of seconds, e.g. 300",
        ));
    }
    let opts = SmokeOptions {
        cuda_dir: args.cuda_dir.clone(),
        device: args.device,
        sizes: args.sizes.clone(),
        timeout: Duration::from_secs(args.timeout),
        nvcc: !args.no_nvcc,
        ..SmokeOptions::default()
    };
    let report = verify::smoke(&Host::real(), tables, &opts);
    if args.json {
        println!("{}", to_json(&report, lang));
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
            format!("--python {}: no such file", p.display()),
            "give the interpreter itself, e.g. C:\\Python312\\python.exe or ~/venv/bin/python",
        ));
    }
    if !(16..=16384).contains(&args.size) {
        return Err(usage(
            format!("--size {} is out of range", args.size),
            "give a size from 16 to 16384",
        ));
    }
    let host = Host::real();
    let gpu = GpuFacts::detect(&host, tables);
    let opts = DoctorOptions {
        python: args.python.clone(),
        mirror: args.pypi_mirror.clone(),
        timeout: Duration::from_secs(args.timeout.max(1)),
        size: args.size,
    };
    let report = doctor::examine(&host, tables, &opts, &gpu);
    if args.json {
        println!("{}", to_json(&report, lang));
    } else {
        print!("{}", human_doctor(&report, lang));
    }
    Ok(report.exit_code)
}

/// The report as pretty JSON, each message (`{key, params}`) also rendered as `text`.
pub fn to_json(report: &impl serde::Serialize, lang: Lang) -> String {
    let mut v = serde_json::to_value(report).expect("serialisable");
    add_texts(&mut v, lang);
    serde_json::to_string_pretty(&v).expect("serialisable")
}

fn add_texts(v: &mut Value, lang: Lang) {
    match v {
        Value::Object(map) => {
            let rendered = match (map.get("key"), map.get("params")) {
                (Some(Value::String(k)), Some(Value::Object(params))) => {
                    CATALOG.iter().find(|c| c.0 == k).map(|&(_, en, cn)| {
                        let mut text = if lang == Lang::Zh { cn } else { en }.to_string();
                        for (name, value) in params {
                            let value = value.as_str().map_or(value.to_string(), str::to_string);
                            text = text.replace(&format!("{{{name}}}"), &value);
                        }
                        text
                    })
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

fn status_word(s: Status, lang: Lang) -> &'static str {
    match (s, lang) {
        (Status::Passed, Lang::En) => "passed",
        (Status::Skipped, Lang::En) => "skipped",
        (Status::Failed, Lang::En) => "FAILED",
        (Status::Passed, Lang::Zh) => "通过",
        (Status::Skipped, Lang::Zh) => "跳过",
        (Status::Failed, Lang::Zh) => "失败",
    }
}

/// A check's reason, or "as above" when the previous check said the same.
fn reason_line<T>(o: &mut String, c: &Check<T>, lang: Lang, last: &mut Option<String>) {
    if let Some(r) = &c.reason {
        let text = i18n::render(r, lang);
        if last.as_deref() == Some(text.as_str()) {
            let _ = writeln!(
                o,
                "    {}",
                if lang == Lang::Zh {
                    "（原因同上）"
                } else {
                    "(as above)"
                }
            );
        } else {
            let _ = writeln!(o, "    {text}");
        }
        *last = Some(text);
    }
}

pub fn human_smoke(r: &SmokeReport, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let t = |en: &'static str, cn: &'static str| if zh { cn } else { en };
    let mut o = String::new();
    let d = &r.driver;
    match (&d.cuda_version, &d.error) {
        (Some(v), _) => {
            let _ = writeln!(o, "{} {} (CUDA {v})", t("Driver: ", "驱动："), d.library);
        }
        (None, Some(e)) => {
            let _ = writeln!(o, "{} {} — {e}", t("Driver: ", "驱动："), d.library);
        }
        (None, None) => {
            let _ = writeln!(o, "{} {}", t("Driver: ", "驱动："), d.library);
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
                t("Toolkit:", "工具包："),
                tk.path.display()
            );
        }
        None => {
            let _ = writeln!(
                o,
                "{} {}",
                t("Toolkit:", "工具包："),
                t("none found", "未找到")
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
        t("GPU matrix multiply", "GPU 矩阵乘法")
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
            t("error", "误差"),
            a.max_error,
            t("tolerance", "容差"),
            a.tolerance,
            if a.passed {
                ""
            } else {
                t("  WRONG", "  错误")
            }
        );
    }
    for n in &g.detail.not_run {
        let _ = writeln!(o, "    {} {n}", t("not run:", "未运行："));
    }

    let b = &r.checks.bandwidth;
    let _ = writeln!(
        o,
        "\n[{}] {}",
        status_word(b.status, lang),
        t("Host↔GPU copies", "主机与显卡之间的拷贝")
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
            let label = match (mem, zh) {
                ("pinned", false) => "pinned  ",
                ("pinned", true) => "锁页内存",
                (_, false) => "pageable",
                (_, true) => "普通内存",
            };
            let _ = writeln!(
                o,
                "    {label}  {} {up:>11}   {} {down:>11}",
                t("host→GPU", "主机→显卡"),
                t("GPU→host", "显卡→主机")
            );
        }
    }
    if let Some(s) = b.detail.pinned_speedup {
        let _ = writeln!(
            o,
            "    {}",
            if zh {
                format!(
                    "在这台机器上，锁页内存（DataLoader 的 pin_memory=True）让主机到显卡的拷贝快 {s:.1} 倍。"
                )
            } else {
                format!(
                    "Pinned memory (DataLoader's pin_memory=True) makes host→GPU copies {s:.1}× faster here."
                )
            }
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
            t("convolution", "卷积"),
            s.n,
            s.c,
            s.h,
            s.w,
            s.k,
            s.c,
            s.r,
            s.s,
            t("error", "误差"),
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
        let _ = writeln!(
            o,
            "    {} {device}",
            t(
                "test kernel compiled and ran on",
                "测试核函数已编译并运行于"
            )
        );
    }

    let _ = writeln!(
        o,
        "\n{} {} (exit {}, {} ms)",
        t("Result:", "结果："),
        status_word(r.status, lang),
        r.exit_code,
        r.elapsed_ms
    );
    o
}

pub fn human_doctor(r: &DoctorReport, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let t = |en: &'static str, cn: &'static str| if zh { cn } else { en };
    let mut o = String::new();
    for f in &r.findings {
        let tag = match f.severity {
            Severity::Ok => t("[ok]     ", "[正常]   "),
            Severity::Info => t("[note]   ", "[提示]   "),
            Severity::Problem => t("[problem]", "[问题]   "),
        };
        let _ = writeln!(o, "{tag} {}", i18n::render(&f.message, lang));
        if let Some(fix) = &f.fix {
            let _ = writeln!(
                o,
                "          {} {}",
                t("fix:", "解决："),
                i18n::render(&fix.message, lang)
            );
            for c in &fix.commands {
                let _ = writeln!(o, "            {c}");
            }
        }
    }
    let _ = writeln!(
        o,
        "\n{} {} (exit {}, {} ms)",
        t("Result:", "结果："),
        status_word(r.status, lang),
        r.exit_code,
        r.elapsed_ms
    );
    o
}
