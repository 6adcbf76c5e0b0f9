//! The command line: a thin front end over the core. Errors are typed inside and
//! rendered once here, with a `hint:` line saying what to do next.

// First: its print macros replace std's in every module below (see out.rs).
#[macro_use]
mod out;

mod bundle;
mod cudnn;
mod debug;
mod detect;
mod download;
mod driver_policy;
mod dsc;
mod fleet;
mod guard;
mod install;
mod linux_driver;
mod plain;
mod progress;
mod recommend;
mod repair;
mod state;
mod tables;
mod uninstall;
mod verbosity;
/// Public for the test that holds the CLI's verdict sentence beside the wizard's.
pub mod verify;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use cuda_setup_core::compat::{TableError, Tables};
use cuda_setup_core::i18n::{Lang, t, tf};

/// Exit codes (documented in docs/cli.md), the core's list.
pub use cuda_setup_core::exit;

/// `--wait`: wait for another cuda-setup working on the same folder instead of stopping.
fn wait_for_others(wait: bool, lang: Lang) {
    if wait {
        cuda_setup_core::lock::wait_when_busy(move |b| {
            eprintln!(
                "{}",
                cuda_setup_core::i18n::render(&b.message("busy_waiting"), lang)
            )
        });
    }
}

/// Clap's own answer to the arguments (an error, or `--help`/`--version`). An error
/// echoes the value it refused, whole: one longer than a value is shown
/// (`shown::MAX_CHARS`) is printed shortened, with clap's exit code (2).
fn refused_arguments(e: clap::Error) -> i32 {
    use cuda_setup_core::shown;
    let plain = e.render().to_string();
    let too_long = plain.chars().count() > shown::MAX_TEXT
        || plain
            .split_whitespace()
            .any(|w| w.chars().count() > shown::MAX_CHARS);
    // `--goal tensorflow`: not ours, but where TensorFlow gets a GPU on Windows is (#32).
    let tensorflow = e.kind() == clap::error::ErrorKind::InvalidValue
        && e.get(clap::error::ContextKind::InvalidValue)
            .is_some_and(|v| v.to_string().to_ascii_lowercase().contains("tensorflow"));
    if !e.use_stderr() || (!too_long && !tensorflow) {
        e.exit();
    }
    eprint!("{}", shown::text(&plain));
    if tensorflow {
        let lang = cuda_setup_core::locale::system_lang(None);
        eprintln!("hint: {}", t(lang, "hint_goal_tensorflow"));
    }
    e.exit_code()
}

/// A run that found another cuda-setup at work on its target.
fn print_busy(f: &cuda_setup_core::run::Failure, lang: Lang) {
    let mut m = cuda_setup_core::message::Message::new("busy");
    for k in ["pid", "folder"] {
        m = m.with(k, f.params.get(k).map_or("?", String::as_str));
    }
    eprintln!(
        "error: {}\nhint: {}",
        cuda_setup_core::shown::text(&cuda_setup_core::i18n::render(&m, lang)),
        cuda_setup_core::i18n::render(&cuda_setup_core::message::Message::new("busy_hint"), lang)
    );
}

#[derive(Debug, Parser)]
#[command(
    name = "cuda-setup",
    version,
    about = "Set up an NVIDIA GPU for deep learning: driver, CUDA, cuDNN, PyTorch"
)]
pub struct Cli {
    /// Use the compat tables in DIR instead of the built-in ones
    #[arg(long, global = true, value_name = "DIR")]
    pub compat_dir: Option<PathBuf>,
    /// Language of human-readable output (default: from the system locale)
    #[arg(long, global = true, value_parser = crate::values::lang())]
    pub lang: Option<Lang>,
    /// Say what it does on standard error: -v the steps, -vv the details (RUST_LOG, when
    /// set, decides instead: RUST_LOG=cuda_setup=debug)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Send every request (downloads, refresh, pip) through this proxy:
    /// http://HOST:PORT, https://…, socks5://… or socks5h://… (default: the system's proxy)
    #[arg(long, global = true, value_name = "URL", value_parser = crate::values::proxy)]
    pub proxy: Option<cuda_setup_core::proxy::Proxy>,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The wizard's flags (no subcommand: the GUI opens).
    #[command(flatten)]
    pub gui: crate::ui::Args,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find the GPUs, driver, CUDA toolkits, cuDNN and Python/PyTorch on this machine
    Detect(detect::Args),
    /// Download what an install needs into a folder, for machines with no network
    Bundle(bundle::Args),
    /// Install, verify or uninstall cuDNN in a CUDA toolkit folder
    Cudnn(cudnn::Args),
    /// Install the recommended CUDA toolkit, cuDNN and environment (or PyTorch)
    Install(Box<install::Args>),
    /// Audit every layer and fix what is broken
    Repair(repair::Args),
    /// Download a file, resumably, verified against its hash
    Download(download::Args),
    /// Recommend a CUDA toolkit, cuDNN and PyTorch build for this machine (or a what-if)
    Recommend(Box<recommend::Args>),
    /// Show what the tables know (built-in or --compat-dir, plus what --refresh learned)
    Tables(tables::Args),
    /// Test the GPU: cuBLAS matmul vs the CPU, copy bandwidth, cuDNN, nvcc (exit 4: skipped, 5: failed)
    Smoke(verify::SmokeArgs),
    /// Check PyTorch in a Python: CPU build, CUDA vs driver, GPU arch, cuDNN, a GPU matmul; with fixes
    Doctor(verify::DoctorArgs),
    /// Keep the PyTorch build verified on the GPU: its record, pip's pin, putting it back
    Guard(guard::Args),
    /// Keep Windows Update from replacing drivers (Windows' policy; off by default): status, on, off
    DriverPolicy(driver_policy::Args),
    /// Undo what cuda-setup changed, from its own records (--dry-run lists it first)
    Uninstall(uninstall::Args),
    /// For DSC v3 and WinGet Configuration: the CudaSetup/LabProfile resource (its JSON on
    /// standard input, `state get|test|set` answered in DSC's terms)
    Dsc(dsc::Args),
    /// A lab's desired state (#36): this PC in a lab profile's terms (get), its drift
    /// from lab.toml (test: exit 1), made so (set)
    State(state::Args),
    /// Many PCs: one table of every PC from the reports they wrote
    Fleet(fleet::Args),
    /// Diagnostics (the Wine check, support): a file's signature, the language picked
    #[command(hide = true)]
    Debug(debug::Args),
}

/// An error rendered at the edge: what happened, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Tables(#[from] TableError),
    #[error("{message}")]
    Usage { message: String, hint: String },
    /// A what-if flag that cannot be right (exit 2).
    #[error(transparent)]
    WhatIf(#[from] cuda_setup_core::whatif::WhatIfError),
    /// A lab profile that cannot be right (exit 2): the file and the key named.
    #[error(transparent)]
    Profile(#[from] cuda_setup_core::fleet::profile::ProfileError),
    /// A `--cudnn` release the tables cannot give (exit 2).
    #[error(transparent)]
    CudnnVersion(#[from] cuda_setup_core::recommend::CudnnVersionError),
    #[error("download failed: {0}")]
    Download(#[from] cuda_setup_core::download::DownloadError),
    #[error("cuDNN: {0}")]
    Cudnn(#[from] cuda_setup_core::cudnn::CudnnError),
    #[error("refresh: {0}")]
    Refresh(#[from] cuda_setup_core::refresh::RefreshError),
    /// A command's own failure with its own exit code (install: 1603): `message` and
    /// `hint` in the user's language, `details` the raw English chain.
    #[error("{message}")]
    Failed {
        message: String,
        hint: String,
        details: Option<String>,
        code: i32,
    },
}

impl CliError {
    /// What it says: a plain sentence and hint in the user's language, the raw chain
    /// behind `details:`.
    fn said(&self, lang: Lang) -> plain::Said {
        use cuda_setup_core::error::chain;
        let raw = |hint: &str| Some(format!("{} ({hint})", chain(self)));
        match self {
            CliError::Tables(e) => plain::Said {
                error: t(lang, "cli_err_tables"),
                hint: t(lang, "cli_hint_tables"),
                details: raw(match e {
                    TableError::Read { .. } => {
                        "--compat-dir must hold toolkits.toml, cudnn.toml, pytorch.toml and gpus.toml"
                    }
                    _ => {
                        "fix that entry (see compat-tables/README.md for the format), or drop --compat-dir to use the built-in tables"
                    }
                }),
            },
            CliError::Usage { message, hint } => plain::Said {
                error: message.clone(),
                hint: hint.clone(),
                details: None,
            },
            CliError::WhatIf(e) => {
                plain::keyed(lang, t(lang, "cli_err_whatif"), &e.hint(), chain(self))
            }
            CliError::Profile(e) => {
                let message = cuda_setup_core::i18n::render(&e.message(), lang);
                plain::keyed(lang, message, &e.hint(), chain(self))
            }
            CliError::CudnnVersion(e) => plain::keyed(
                lang,
                t(lang, "cli_err_cudnn_version"),
                &e.hint(),
                chain(self),
            ),
            CliError::Download(e) => plain::download(e, lang),
            CliError::Cudnn(e) => plain::cudnn(e, lang),
            CliError::Refresh(e) => {
                plain::keyed(lang, t(lang, "cli_err_refresh"), &e.hint(), chain(self))
            }
            CliError::Failed {
                message,
                hint,
                details,
                ..
            } => plain::Said {
                error: message.clone(),
                hint: hint.clone(),
                details: details.clone(),
            },
        }
    }

    /// Another cuda-setup holds the lock: said in the user's language.
    fn busy(&self) -> Option<&cuda_setup_core::lock::Busy> {
        match self {
            CliError::Cudnn(cuda_setup_core::cudnn::CudnnError::Busy(b)) => Some(b),
            _ => None,
        }
    }

    fn code(&self) -> i32 {
        match self {
            CliError::Tables(_) | CliError::Download(_) | CliError::Refresh(_) => exit::ERROR,
            CliError::Usage { .. }
            | CliError::WhatIf(_)
            | CliError::CudnnVersion(_)
            | CliError::Profile(_) => exit::USAGE,
            CliError::Cudnn(e) => cudnn::code(e),
            CliError::Failed { code, .. } => *code,
        }
    }
}

/// Parses the process arguments, runs the command, returns the exit code. A panic
/// anywhere in it is reported in words (exit 1), never as a backtrace; output lost to a
/// closed stdout ends the command quietly.
pub fn main() -> i32 {
    cuda_setup_core::panics::install_hook();
    let code = cuda_setup_core::panics::catch(|| {
        cuda_setup_core::panics::test_hook("cli");
        run()
    })
    .unwrap_or_else(|p| {
        // Before (or instead of) the arguments: the language from the system alone.
        let lang = cuda_setup_core::locale::system_lang(None);
        eprintln!(
            "error: {}",
            tf(lang, "cli_err_internal", &[("message", &p.message)])
        );
        if let Some(at) = p.location {
            eprintln!("  (at {at})");
        }
        eprintln!("hint: {}", t(lang, "cli_hint_internal"));
        exit::ERROR
    });
    match out::finish() {
        Some(e) if code == exit::OK => {
            let lang = cuda_setup_core::locale::system_lang(None);
            eprintln!("error: {}", tf(lang, "cli_err_output", &[("error", &e)]));
            eprintln!("hint: {}", t(lang, "cli_hint_output"));
            exit::ERROR
        }
        _ => code,
    }
}

fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return refused_arguments(e),
    };
    let lang = cuda_setup_core::locale::system_lang(cli.lang);
    // Our events and other crates' warnings (reqwest, eframe) go into the run log from here
    // on; with -v/-vv or RUST_LOG, to standard error too.
    verbosity::install(cli.verbose, lang);
    cuda_setup_core::proxy::set(cli.proxy.clone());
    // What an earlier `tables --refresh` learned is merged in, so an offline start knows it.
    let cache_file = cuda_setup_core::refresh::default_cache_file();
    let result = Tables::load(cli.compat_dir.as_deref())
        .map_err(CliError::from)
        .map(|base| {
            let tables = cuda_setup_core::refresh::with_cache(base.clone(), cache_file.as_deref());
            (base, tables)
        })
        .and_then(|(base, tables)| match cli.command {
            Some(_) if cli.gui.any() => Err(CliError::Usage {
                message: t(lang, "cli_err_wizard_flags"),
                hint: t(lang, "cli_hint_wizard_flags"),
            }),
            Some(Command::Detect(args)) => detect::run(&tables, &args, lang),
            Some(Command::Download(args)) => download::run(&args, lang),
            Some(Command::Repair(args)) => repair::run(&tables, &args, lang),
            Some(Command::Install(args)) => match &args.write_profile {
                Some(file) => install::write_profile(&tables, &args, file, cli.lang, lang),
                None => install::run(&tables, &args, lang),
            },
            Some(Command::Cudnn(args)) => cudnn::run(&args, lang),
            Some(Command::Bundle(args)) => bundle::run(&tables, &args, lang),
            Some(Command::Recommend(args)) => recommend::run(&tables, &args, lang),
            Some(Command::Tables(args)) => tables::run(&base, &tables, cache_file, &args, lang),
            Some(Command::Smoke(args)) => verify::run_smoke(&tables, &args, lang),
            Some(Command::Doctor(args)) => verify::run_doctor(&tables, &args, lang),
            Some(Command::Guard(args)) => guard::run(&args, lang),
            Some(Command::DriverPolicy(args)) => driver_policy::run(&args, lang),
            Some(Command::Uninstall(args)) => uninstall::run(&args, lang),
            Some(Command::Dsc(args)) => dsc::run(&args, cli.lang, cli.compat_dir.as_deref(), lang),
            Some(Command::State(args)) => state::run(&tables, &args, lang, cli.lang.is_some()),
            Some(Command::Fleet(args)) => fleet::run(&tables, &args, lang, cli.lang.is_some()),
            Some(Command::Debug(args)) => debug::run(&args),
            // No subcommand: the wizard (or, with no display, a pointer to the CLI).
            None => Ok(crate::ui::launch(&base, &tables, &cli.gui, cli.lang)),
        });
    match result {
        Ok(code) => code,
        Err(e) if e.busy().is_some() => {
            let b = e.busy().expect("busy");
            eprintln!(
                "error: {}",
                cuda_setup_core::shown::text(&cuda_setup_core::i18n::render(
                    &b.message("busy"),
                    lang
                ))
            );
            eprintln!(
                "hint: {}",
                cuda_setup_core::i18n::render(
                    &cuda_setup_core::message::Message::new("busy_hint"),
                    lang
                )
            );
            e.code()
        }
        Err(e) => {
            // In plain words, then the error with its causes, once.
            e.said(lang).print();
            e.code()
        }
    }
}
