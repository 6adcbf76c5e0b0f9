//! `cuda-setup guard status|on|off|restore --python PATH`: the verified PyTorch build's
//! record and its pin (#33). The core decides (`cuda_setup_core::guard`); this prints.

use std::io::IsTerminal;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{CliError, exit};
use cuda_setup_core::compat::Os;
use cuda_setup_core::guard::{self, GuardError, OnOutcome, Restore};
use cuda_setup_core::i18n::{self, Lang, t, tf};
use cuda_setup_core::target::Target;

/// `status`: the installed torch is no longer the verified build. `on`, `restore`: refused
/// (nothing verified, or another build installed).
pub const SWAPPED: i32 = 3;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// The verified build, whether the pin is in place, whether torch is still that build (exit 3: replaced)
    Status(Common),
    /// Pin the verified build: pip in that environment keeps it
    On(OnArgs),
    /// Lift the pin (your own pip settings are kept)
    Off(Common),
    /// Put the verified build back (from the saved wheel when it is still intact)
    Restore(Common),
}

#[derive(Debug, clap::Args)]
pub struct Common {
    /// The interpreter (its venv or conda environment is where the pin goes)
    #[arg(long, value_name = "PATH")]
    pub python: PathBuf,
    /// Print one JSON object (fields in docs/cli.md)
    #[arg(long)]
    pub json: bool,
    /// Keep the record in a sandbox root's state folder instead of this machine's
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct OnArgs {
    #[command(flatten)]
    pub common: Common,
    /// Agree to write into a system Python's prefix without being asked
    #[arg(long)]
    pub yes: bool,
}

fn target(c: &Common) -> Target {
    match &c.root {
        Some(r) => Target::rooted(Os::current(), r),
        None => Target::real(),
    }
}

fn failed(e: &GuardError, python: &std::path::Path, lang: Lang) -> CliError {
    let code = match e {
        GuardError::NotVerified { .. } | GuardError::Differs { .. } => SWAPPED,
        // How it was run, like a system Python without `--yes`: run it again as the user.
        GuardError::Elevated => exit::USAGE,
        _ => exit::ERROR,
    };
    CliError::Failed {
        message: i18n::render(&e.message(), lang),
        hint: i18n::render(&e.hint(python), lang),
        details: Some(cuda_setup_core::error::chain(e)),
        code,
    }
}

fn out(json: bool, value: Value, lines: &[String]) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("serialisable")
        );
    } else {
        for l in lines {
            println!("{l}");
        }
    }
}

pub fn run(args: &Args, lang: Lang) -> Result<i32, CliError> {
    let c = match &args.action {
        Action::Status(c) | Action::Off(c) | Action::Restore(c) => c,
        Action::On(a) => &a.common,
    };
    if !c.python.is_file() {
        return Err(CliError::Usage {
            message: tf(
                lang,
                "cli_err_python_file",
                &[("path", &c.python.display())],
            ),
            hint: t(lang, "cli_hint_python_file"),
        });
    }
    let target = target(c);
    let py = c.python.as_path();
    let fail = |e: GuardError| failed(&e, py, lang);
    match &args.action {
        Action::Status(_) => {
            let s = guard::status(&target, py).map_err(fail)?;
            let lines: Vec<String> = s.lines.iter().map(|m| i18n::render(m, lang)).collect();
            let mut v = serde_json::to_value(&s).expect("serialisable");
            v["text"] = json!(lines);
            out(c.json, v, &lines);
            Ok(if s.swap.is_some() { SWAPPED } else { exit::OK })
        }
        Action::On(a) => {
            let mut outcome = guard::on(&target, py, a.yes).map_err(fail)?;
            if let OnOutcome::NeedsConfirmation { prefix, .. } = &outcome {
                let said = i18n::render(&outcome.message(), lang);
                if c.json || !std::io::stdin().is_terminal() {
                    return Err(CliError::Failed {
                        message: said,
                        hint: tf(
                            lang,
                            "cli_guard_hint_yes",
                            &[("python", &cuda_setup_core::verify::doctor::shell_quote(py))],
                        ),
                        details: None,
                        code: exit::USAGE,
                    });
                }
                eprintln!("{said}");
                eprint!(
                    "{}",
                    tf(lang, "cli_guard_confirm", &[("prefix", &prefix.display())])
                );
                let mut answer = String::new();
                let _ = std::io::stdin().read_line(&mut answer);
                if !matches!(answer.trim(), "y" | "Y" | "yes") {
                    eprintln!("{}", t(lang, "cli_nothing_changed"));
                    return Ok(super::install::CANCELLED);
                }
                outcome = guard::on(&target, py, true).map_err(fail)?;
            }
            let line = i18n::render(&outcome.message(), lang);
            let mut v = serde_json::to_value(&outcome).expect("serialisable");
            v["text"] = json!(line);
            out(c.json, v, &[line]);
            Ok(exit::OK)
        }
        Action::Off(_) => {
            let outcome = guard::off(&target, py).map_err(fail)?;
            let line = i18n::render(&outcome.message(), lang);
            let mut v = serde_json::to_value(&outcome).expect("serialisable");
            v["text"] = json!(line);
            out(c.json, v, &[line]);
            Ok(exit::OK)
        }
        Action::Restore(_) => {
            let (rec, plan) = guard::restore_plan(&target, py).map_err(fail)?;
            let mut lines = Vec::new();
            match &plan {
                Restore::NothingToDo => lines.push(tf(
                    lang,
                    "cli_guard_restore_nothing",
                    &[("torch", &rec.torch)],
                )),
                Restore::Cache {
                    wheel, companions, ..
                } => {
                    lines.push(tf(
                        lang,
                        "cli_guard_restore_cache",
                        &[("file", &wheel.display())],
                    ));
                    if !companions.is_empty() {
                        lines.push(tf(
                            lang,
                            "cli_guard_restore_companions",
                            &[("packages", &companions.join(" "))],
                        ));
                    }
                }
                Restore::Index { args, cache } => {
                    if let guard::CacheState::Mismatch { file, .. } = cache {
                        lines.push(tf(
                            lang,
                            "cli_guard_restore_mismatch",
                            &[("file", &file.display())],
                        ));
                    }
                    let command = format!(
                        "{} -m pip install {}",
                        cuda_setup_core::verify::doctor::shell_quote(py),
                        args.join(" ")
                    );
                    lines.push(tf(
                        lang,
                        "cli_guard_restore_index",
                        &[("command", &command)],
                    ));
                }
            }
            if !c.json {
                for l in &lines {
                    eprintln!("{l}");
                }
            }
            let quiet = c.json;
            guard::restore(&target, py, &rec, &plan, &mut |l| {
                if !quiet {
                    eprintln!("  {l}");
                }
            })
            .map_err(fail)?;
            if plan != Restore::NothingToDo {
                lines.push(tf(lang, "cli_guard_restore_done", &[("torch", &rec.torch)]));
                if !c.json {
                    println!("{}", lines.last().expect("pushed"));
                }
            }
            if c.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "record": rec,
                        "restore": plan,
                        "text": lines,
                    }))
                    .expect("serialisable")
                );
            }
            Ok(exit::OK)
        }
    }
}
