//! `cuda-setup driver-policy status|on|off`: Windows' policy that keeps Windows Update
//! from replacing drivers (#33), off by default; `off` puts back exactly what `on` found.

use std::path::PathBuf;

use serde_json::json;

use super::{CliError, exit};
use cuda_setup_core::compat::Os;
use cuda_setup_core::driverwatch::policy::{self, Change, PolicyError};
use cuda_setup_core::i18n::{self, Lang};
use cuda_setup_core::target::Target;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Action {
    /// Say whether Windows Update may replace drivers
    Status,
    /// Keep Windows Update from replacing drivers (administrator)
    On,
    /// Put back what was there before `on` (administrator)
    Off,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_enum)]
    pub action: Action,
    /// A sandbox root instead of the machine (its state folder stands for the registry)
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The OS layout of the root (only with --root)
    #[arg(long, value_parser = crate::values::os(), requires = "root")]
    pub os: Option<Os>,
    #[arg(long)]
    pub json: bool,
}

fn failed(e: &PolicyError, lang: Lang) -> CliError {
    let (message, hint) = e.said();
    CliError::Failed {
        message: i18n::render(&message, lang),
        hint: i18n::render(&hint, lang),
        details: Some(cuda_setup_core::error::chain(e)),
        code: match e {
            PolicyError::NotWindows => exit::USAGE,
            _ => exit::ERROR,
        },
    }
}

pub fn run(args: &Args, lang: Lang) -> Result<i32, CliError> {
    let target = match &args.root {
        Some(root) => Target::rooted(args.os.unwrap_or_else(Os::current), root),
        None => Target::real(),
    };
    let change: Option<Change> = match args.action {
        Action::Status => None,
        Action::On => Some(policy::on(&target).map_err(|e| failed(&e, lang))?),
        Action::Off => Some(policy::off(&target).map_err(|e| failed(&e, lang))?),
    };
    let status = policy::status(&target).map_err(|e| failed(&e, lang))?;
    if args.json {
        let v = json!({
            "key": format!(r"HKLM\{}", policy::KEY),
            "value_name": policy::VALUE,
            "value": status.value,
            "on": status.on,
            "ours": status.ours,
            "change": change,
            "text": i18n::render(&policy::describe(&status), lang),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
        return Ok(exit::OK);
    }
    if let Some(c) = &change {
        println!("{}", i18n::render(&policy::describe_change(c), lang));
    }
    println!("{}", i18n::render(&policy::describe(&status), lang));
    if !status.on {
        println!("{}", i18n::render(&policy::explanation(), lang));
    }
    Ok(exit::OK)
}
