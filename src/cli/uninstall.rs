//! `cuda-setup uninstall`: undoes what cuda-setup did, from its own records (#35). The
//! core plans and runs it; this prints the plan, asks (unless `--yes`), and prints the
//! progress. `--dry-run` lists and changes nothing. Exit codes: 0 done or nothing to do,
//! 1 an action failed (a rerun goes on where it stopped), 2 no console to ask in and no
//! `--yes`, 6 another cuda-setup is working, 1602 the user said no (as `install`).

use std::io::IsTerminal;
use std::path::PathBuf;

use super::{CliError, exit};
use cuda_setup_core::compat::Os;
use cuda_setup_core::i18n::{self, Lang, t, tf};
use cuda_setup_core::target::Target;
use cuda_setup_core::uninstall::{self, Options, UninstallError, UninstallPlan};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// List what would be undone; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Also delete cuda-setup's state folder (logs, downloads, records) and download cache
    #[arg(long)]
    pub purge: bool,
    /// Do not ask for confirmation
    #[arg(long, short)]
    pub yes: bool,
    #[arg(long)]
    pub json: bool,
    /// Only this install (as its Apps & features entry names it)
    #[arg(long, value_name = "ID")]
    pub install_id: Option<String>,
    /// A sandbox root instead of the machine
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The OS layout of the root (only with --root)
    #[arg(long, value_parser = crate::values::os(), requires = "root")]
    pub os: Option<Os>,
}

fn failed(e: &UninstallError, lang: Lang) -> CliError {
    CliError::Failed {
        message: match e {
            UninstallError::Busy(b) => i18n::render(&b.message("busy"), lang),
            _ => t(lang, "cli_err_uninstall"),
        },
        hint: i18n::render(&e.hint(), lang),
        details: Some(cuda_setup_core::error::chain(e)),
        code: match e {
            UninstallError::Busy(_) => exit::BUSY,
            _ => exit::ERROR,
        },
    }
}

/// The plan in words: what is undone, what is left, what is someone else's.
fn describe(plan: &UninstallPlan, os: Os, lang: Lang) -> String {
    let mut s = String::new();
    let r = |m: &cuda_setup_core::message::Message| i18n::render(m, lang);
    if plan.resumed() {
        s.push_str(&format!("{}\n", t(lang, "cli_uninstall_resuming")));
    }
    let todo: Vec<_> = plan
        .actions
        .iter()
        .enumerate()
        .filter(|(i, _)| !plan.done.contains(i))
        .collect();
    if !todo.is_empty() {
        s.push_str(&format!("{}\n", t(lang, "cli_uninstall_header")));
        for (_, a) in todo {
            s.push_str(&format!("  - {}\n", r(&a.message())));
        }
    }
    if !plan.left.is_empty() {
        s.push_str(&format!("{}\n", t(lang, "cli_uninstall_left_header")));
        for l in &plan.left {
            s.push_str(&format!("  - {}\n", r(&l.message())));
        }
    }
    if !plan.manual.is_empty() {
        s.push_str(&format!("{}\n", t(lang, "cli_uninstall_manual_header")));
        for m in &plan.manual {
            s.push_str(&format!("  - {}\n", r(&m.message(os))));
        }
    }
    s
}

pub fn run(args: &Args, lang: Lang) -> Result<i32, CliError> {
    let target = match &args.root {
        Some(root) => Target::rooted(args.os.unwrap_or_else(Os::current), root),
        None => Target::real(),
    };
    let opts = Options {
        purge: args.purge,
        install_id: args.install_id.clone(),
    };
    let plan = uninstall::plan(&target, &opts).map_err(|e| failed(&e, lang))?;
    let text = describe(&plan, target.os, lang);
    if args.json && args.dry_run {
        let v = serde_json::json!({ "dry_run": true, "plan": plan, "text": text });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
        return Ok(exit::OK);
    }
    if !args.json {
        print!("{text}");
    }
    if plan.nothing_to_do() {
        if !args.json {
            println!("{}", t(lang, "cli_uninstall_nothing"));
        } else {
            let v = serde_json::json!({ "plan": plan, "done": 0, "text": text });
            println!(
                "{}",
                serde_json::to_string_pretty(&v).expect("serialisable")
            );
        }
        // A rerun after a kill at the very end: the journal goes.
        uninstall::execute(&target, &plan, &mut |_| {}).map_err(|e| failed(&e, lang))?;
        return Ok(exit::OK);
    }
    if args.dry_run {
        println!("{}", t(lang, "cli_uninstall_dry_run"));
        return Ok(exit::OK);
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::Usage {
                message: t(lang, "cli_err_uninstall_confirm"),
                hint: t(lang, "cli_hint_uninstall_confirm"),
            });
        }
        eprint!("{}", t(lang, "cli_uninstall_confirm"));
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("{}", t(lang, "cli_uninstall_declined"));
            return Ok(super::install::CANCELLED);
        }
    }
    let json = args.json;
    let report = uninstall::execute(&target, &plan, &mut |e| {
        if let uninstall::Event::Started { index, total } = e
            && !json
        {
            let action = i18n::render(&plan.actions[index].message(), lang);
            eprintln!(
                "{}",
                tf(
                    lang,
                    "cli_uninstall_step",
                    &[
                        ("index", &(index + 1).to_string()),
                        ("total", &total.to_string()),
                        ("action", &action)
                    ]
                )
            );
        }
    })
    .map_err(|e| failed(&e, lang))?;
    if json {
        let v = serde_json::json!({ "plan": plan, "done": report.done, "left": report.left, "text": text });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
    } else {
        for l in &report.left {
            if !plan.left.contains(l) {
                println!("  - {}", i18n::render(&l.message(), lang));
            }
        }
        println!(
            "{}",
            tf(
                lang,
                "cli_uninstall_done",
                &[("count", &report.done.to_string())]
            )
        );
    }
    Ok(exit::OK)
}
