//! `cuda-setup repair [--fix]`: audit every layer; fix through the install executor.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{CliError, exit};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::{self, Lang, t, tf};
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::repair::{self, Existing, Finding, Fix, Overrides, Severity};
use cuda_setup_core::run::{RunEvent, RunReport};
use cuda_setup_core::steps::FailureKind;
use cuda_setup_core::target::Target;
use cuda_setup_core::verify::verdict::Verdict;
use cuda_setup_core::version::{ComputeCapability, Version};
use cuda_setup_core::whatif::Flags;

/// Problems were found (or are left after `--fix`).
pub const PROBLEMS: i32 = 3;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Apply the fixes, then audit again
    #[arg(long)]
    pub fix: bool,
    /// Audit (and fix) a sandbox root instead of the machine
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The OS layout of the root (only with --root)
    #[arg(long, value_parser = crate::values::os(), requires = "root")]
    pub os: Option<Os>,
    #[arg(long)]
    pub json: bool,
    /// GPUs by compute capability (instead of NVML)
    #[arg(long = "gpu-cc", value_name = "X.Y")]
    pub gpu_cc: Vec<ComputeCapability>,
    /// The driver version (instead of NVML)
    #[arg(long, value_name = "VER")]
    pub driver: Option<Version>,
    /// With --fix: if another cuda-setup is working on this machine (or root), wait for
    /// it (default: exit 6)
    #[arg(long)]
    pub wait: bool,
    /// Hash every installed cuDNN file, not only those whose size or modification time
    /// changed (finds a change made with both put back)
    #[arg(long)]
    pub deep: bool,
    /// What the closing verdict judges the card for (default: pytorch)
    #[arg(long, value_parser = crate::values::goal())]
    pub goal: Option<Goal>,
}

fn finding_json(f: &Finding, lang: Lang) -> Value {
    let mut v = serde_json::to_value(f).expect("serialisable");
    v["text"] = i18n::render(&f.message, lang).into();
    if let Fix::Manual { how } = &f.fix {
        v["fix"]["text"] = i18n::render(how, lang).into();
    }
    v
}

fn print_findings(findings: &[Finding], lang: Lang) {
    if repair::problems(findings) == 0 {
        println!(
            "{}",
            i18n::render(
                &cuda_setup_core::message::Message::new("repair_healthy"),
                lang
            )
        );
    }
    for f in findings {
        let mark = match f.severity {
            Severity::Error => t(lang, "cli_severity_error"),
            Severity::Warning => t(lang, "cli_severity_warning"),
            Severity::Info => t(lang, "cli_severity_info"),
        };
        println!("[{mark}] {}", i18n::render(&f.message, lang));
        match &f.fix {
            Fix::Steps { steps } => println!(
                "        {}",
                tf(
                    lang,
                    "cli_repair_fix",
                    &[(
                        "fix",
                        &steps
                            .iter()
                            // In words, as the wizard names the steps.
                            .map(|s| super::plain::step_title(lang, s.kind()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )]
                )
            ),
            Fix::ResumeInstall => println!("        {}", t(lang, "cli_repair_fix_resume")),
            Fix::Manual { how } => println!(
                "        {}",
                tf(
                    lang,
                    "cli_repair_what_to_do",
                    &[("how", &i18n::render(how, lang))]
                )
            ),
        }
    }
}

/// One line: what is installed here (technical tokens inside the catalogue's sentence).
fn print_existing(e: &Existing, lang: Lang) {
    if e.toolkits.is_empty() && e.cudnn.is_empty() {
        println!("{}", t(lang, "cli_repair_existing_none"));
    } else {
        println!(
            "{}",
            tf(lang, "cli_repair_existing", &[("what", &e.describe())])
        );
    }
    if e.interrupted {
        println!("{}", t(lang, "cli_repair_existing_interrupted"));
    }
}

pub fn run(tables: &Tables, args: &Args, lang: Lang) -> Result<i32, CliError> {
    let target = match &args.root {
        Some(root) => Target::rooted(args.os.unwrap_or_else(Os::current), root),
        None => Target::real(),
    };
    // The same checks as every what-if flag (a CUDA version given as the driver, …).
    let flags = Flags {
        gpu_cc: args.gpu_cc.clone(),
        driver: args.driver.clone(),
        ..Default::default()
    };
    cuda_setup_core::whatif::WhatIf::parse(tables, &flags)?;
    let overrides = Overrides {
        gpu_cc: args.gpu_cc.clone(),
        driver: args.driver.clone(),
    };
    let depth = if args.deep {
        cuda_setup_core::cudnn::Depth::Deep
    } else {
        cuda_setup_core::cudnn::Depth::Quick
    };
    // What the audit is of: the same look the wizard's first page takes.
    let existing = repair::existing(&target);
    if !args.json {
        print_existing(&existing, lang);
    }
    let (findings, report) = repair::audit_report(&target, tables, &overrides, depth);
    // The checks that end a repair (setup's, for the goal) and their verdict: the same
    // sentence as `install`, `smoke`, `doctor` and the wizard, from the detection the
    // audit made (not a second one, nor one outside the `--root`).
    let verdict_after =
        |runs: &[RunReport], report: &cuda_setup_core::detect::SystemReport| -> Verdict {
            repair::after_run(&repair::AfterRun {
                target: &target,
                tables,
                goal: args.goal.unwrap_or_default(),
                runs,
                facts: &report.facts(target.os),
                python: repair::with_torch(&report.pythons),
            })
        };
    if !args.fix {
        let v = verdict_after(&[], &report);
        if args.json {
            let v = json!({ "existing": existing, "findings": findings.iter().map(|f| finding_json(f, lang)).collect::<Vec<_>>(), "problems": repair::problems(&findings), "verdict": super::verify::verdict_json(&v, lang) });
            println!(
                "{}",
                serde_json::to_string_pretty(&v).expect("serialisable")
            );
        } else {
            print_findings(&findings, lang);
            if findings.iter().any(Finding::fixable) {
                eprintln!("hint: {}", t(lang, "cli_repair_hint_fix"));
            }
            if findings
                .iter()
                .any(|f| cuda_setup_core::driverwatch::offers_policy(f.id))
            {
                eprintln!(
                    "hint: {}",
                    i18n::render(&cuda_setup_core::driverwatch::policy::explanation(), lang)
                );
            }
            print!("{}", super::verify::verdict_text(&v, lang));
        }
        return Ok(if repair::problems(&findings) == 0 {
            exit::OK
        } else {
            PROBLEMS
        });
    }
    super::wait_for_others(args.wait, lang);
    let result = repair::fix(&target, tables, &overrides, &findings, &mut |e| match e {
        RunEvent::Started { name, .. } if !args.json => {
            eprintln!(
                "{}",
                tf(
                    lang,
                    "cli_repair_fixing",
                    &[("name", &super::plain::step_title(lang, name))]
                )
            );
        }
        // A fix that failed is said below, from its run's report.
        _ => {}
    });
    let verdict = verdict_after(&result.runs, result.report.as_deref().unwrap_or(&report));
    if args.json {
        let v = json!({
            "existing": existing,
            "findings": findings.iter().map(|f| finding_json(f, lang)).collect::<Vec<_>>(),
            "runs": result.runs,
            "after": result.after.iter().map(|f| finding_json(f, lang)).collect::<Vec<_>>(),
            "problems": repair::problems(&result.after),
            "verdict": super::verify::verdict_json(&verdict, lang),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
    } else {
        println!("{}", t(lang, "cli_after_repair"));
        print_findings(&result.after, lang);
    }
    if !args.json {
        print!("{}", super::verify::verdict_text(&verdict, lang));
    }
    let busy = result
        .runs
        .iter()
        .find_map(|r| r.failure.as_ref().filter(|f| f.kind == FailureKind::Busy));
    if let Some(f) = busy {
        super::print_busy(f, lang);
    }
    for f in result
        .runs
        .iter()
        .filter_map(|r| r.failure.as_ref())
        .filter(|f| f.kind != FailureKind::Busy && !args.json)
    {
        super::plain::failure(f, lang).print();
    }
    Ok(if busy.is_some() {
        exit::BUSY
    } else if repair::problems(&result.after) == 0 {
        exit::OK
    } else {
        PROBLEMS
    })
}
