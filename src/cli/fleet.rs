//! `cuda-setup fleet collect DIR`: one table of every PC from the reports they wrote
//! (#36). The core reads and judges (`fleet::collect`); this prints it and writes the
//! files. Exit 0: every report read, no PC drifted; 1: a drift or an unreadable report
//! (a scheduled task alerts on it); 2: the command line or the folder.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{CliError, exit};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::fleet::collect::{self, Judge};
use cuda_setup_core::fleet::profile;
use cuda_setup_core::i18n::{self, Lang, tf};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Read the reports PCs wrote to a folder (`--report`) into one table of every PC
    Collect(CollectArgs),
}

#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    /// The folder of reports (every *.json directly in it)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write the table as CSV (UTF-8 with BOM, for Excel)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the table as one HTML page (sortable; opens in any browser, no server)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Judge every PC's drift against this lab profile instead of each report's own test
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Print the table as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(tables: &Tables, args: &Args, lang: Lang, lang_given: bool) -> Result<i32, CliError> {
    match &args.command {
        Command::Collect(a) => run_collect(tables, a, lang, lang_given),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The folder (exit 2, with the OS's words in details) or the profile (the file and key).
fn refused(e: collect::CollectError, lang: Lang) -> CliError {
    match e {
        collect::CollectError::Profile(p) => CliError::Profile(*p),
        e => CliError::Failed {
            message: i18n::render(&e.message(), lang),
            hint: i18n::render(&e.hint(), lang),
            details: Some(cuda_setup_core::error::chain(&e)),
            code: exit::USAGE,
        },
    }
}

fn run_collect(
    tables: &Tables,
    args: &CollectArgs,
    lang: Lang,
    lang_given: bool,
) -> Result<i32, CliError> {
    // The profile is checked before any report is read (a wrong one is exit 2, whatever
    // the folder holds). Its language is the table's unless --lang says otherwise.
    let mut lang = lang;
    if let Some(path) = &args.profile {
        let p = profile::load_any_os(path, tables, Os::current())?;
        if !lang_given {
            lang = p.lang.unwrap_or(lang);
        }
    }
    let judge = match &args.profile {
        Some(path) => Judge::Profile { path, tables, lang },
        None => Judge::Reports,
    };
    let table = collect::collect(&args.dir, now(), &judge).map_err(|e| refused(e, lang))?;
    if let Some(f) = &args.csv {
        write(f, collect::csv(&table, lang).as_bytes(), lang)?;
    }
    if let Some(f) = &args.html {
        write(f, collect::html(&table, lang).as_bytes(), lang)?;
    }
    let lines = collect::lines(&table, lang);
    if args.json {
        let v = json!({
            "schema": "cuda-setup/fleet",
            "schema_version": 1,
            "table": table,
            "summary": table.summary(),
            "text": lines,
            "exit_code": table.exit_code(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
    } else {
        for l in &lines {
            println!("{l}");
        }
    }
    Ok(table.exit_code())
}

/// Writes a file the admin asked for, whole or not at all (a browser open on the old page
/// never reads half a new one), never through a link planted at its name.
fn write(file: &Path, bytes: &[u8], lang: Lang) -> Result<(), CliError> {
    let failed = |e: std::io::Error| CliError::Failed {
        message: tf(
            lang,
            "cli_err_fleet_write",
            &[("path", &cuda_setup_core::shown::path(file))],
        ),
        hint: i18n::t(lang, "cli_hint_fleet_write"),
        details: Some(e.to_string()),
        code: exit::ERROR,
    };
    let name = file
        .file_name()
        .ok_or_else(|| failed(std::io::Error::other("no file name")))?;
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = cuda_setup_core::place::Dir::open(&parent).map_err(failed)?;
    dir.write_atomic(name, bytes, true).map_err(failed)
}
