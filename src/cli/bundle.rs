//! `cuda-setup bundle`: download what an install needs into a folder, with a manifest of
//! hashes, so `install --bundle DIR` works with no network at all. The core makes it
//! (`cuda_setup_core::bundle::make`); this reads the flags and prints.

use std::path::PathBuf;

use super::download::StatusLine;
use super::{CliError, exit, recommend};
use cuda_setup_core::bundle::{self, BundleError, MANIFEST, Request};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::{self, Lang, t};
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::version::{ComputeCapability, Version};
use cuda_setup_core::whatif::Flags;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bundle folder (created if needed)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Only `developer` (toolkit + cuDNN) has files to bundle
    #[arg(long, value_parser = crate::values::goal(), default_value = "developer")]
    pub goal: Goal,
    /// The OS the bundle is for (default: this one)
    #[arg(long, value_parser = crate::values::os())]
    pub os: Option<Os>,
    /// CUDA toolkit version (prefix: 12, 12.4 or 12.4.1)
    #[arg(long, value_name = "VER")]
    pub cuda: Option<Version>,
    /// cuDNN version (default: the recommended one)
    #[arg(long, value_name = "VER", conflicts_with = "no_cudnn")]
    pub cudnn: Option<Version>,
    /// Leave cuDNN out
    #[arg(long)]
    pub no_cudnn: bool,
    /// The target machines' GPUs, by compute capability (default: this machine's)
    #[arg(long = "gpu-cc", value_name = "X.Y")]
    pub gpu_cc: Vec<ComputeCapability>,
    /// The target machines' GPUs, by name
    #[arg(long = "gpu", value_name = "NAME")]
    pub gpu: Vec<String>,
    /// The target machines' driver version
    #[arg(long, value_name = "VER")]
    pub driver: Option<Version>,
    /// A mirror base URL tried before NVIDIA (repeatable)
    #[arg(long, value_name = "URL", value_parser = cuda_setup_core::url::http_url)]
    pub mirror: Vec<String>,
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub connections: u16,
    /// Print the manifest as JSON
    #[arg(long)]
    pub json: bool,
    /// The installer or the wheels go into the bundle (for `install --method wheels
    /// --bundle DIR`)
    #[command(flatten)]
    pub how: super::install::MethodArgs,
}

pub fn run(tables: &Tables, args: &Args, lang: Lang) -> Result<i32, CliError> {
    if args.goal == Goal::Pytorch {
        return Err(CliError::Usage {
            message: t(lang, "cli_err_bundle_pytorch"),
            hint: t(lang, "cli_hint_bundle_pytorch"),
        });
    }
    let os = args.os.unwrap_or_else(Os::current);
    let flags = Flags {
        gpu_cc: args.gpu_cc.clone(),
        gpu: args.gpu.clone(),
        driver: args.driver.clone(),
        ..Default::default()
    };
    let facts = recommend::facts(tables, os, &flags, None)?;
    // `--pypi-mirror auto`: the core measures the listed indexes; the line names the winner.
    let pypi_index = if args.how.auto() {
        let (index, said) = cuda_setup_core::steps::pypi_race::choose();
        eprintln!("{}", i18n::render(&said, lang));
        index
    } else {
        args.how.index()
    };
    let req = Request {
        out: args.out.clone(),
        os,
        cuda: args.cuda.clone(),
        cudnn: args.cudnn.clone(),
        no_cudnn: args.no_cudnn,
        mirrors: args.mirror.clone(),
        connections: args.connections as usize,
        method: args.how.method,
        pypi_index,
        components: args.how.components(),
    };
    let reporter = StatusLine::new(args.json, lang);
    let made = bundle::make(tables, &facts, &req, &reporter, &mut |_| reporter.finish());
    let manifest = match made {
        Ok(m) => m,
        Err(BundleError::Blocked(blockers)) => {
            for b in &blockers {
                eprintln!("{}", i18n::render(b, lang));
            }
            return Ok(exit::BLOCKED);
        }
        Err(e) => return Err(error(e, lang)),
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&manifest).expect("serialisable")
        );
    } else {
        for f in &manifest.files {
            let params: [(&str, &dyn std::fmt::Display); 3] =
                [("kind", &f.kind), ("file", &f.file), ("size", &f.size)];
            println!("{}", i18n::tf(lang, "cli_bundle_file", &params));
        }
        let path = args.out.join(MANIFEST);
        println!(
            "{}",
            i18n::tf(lang, "cli_bundle_ready", &[("path", &path.display())])
        );
    }
    Ok(exit::OK)
}

/// The core's error as the CLI says it (the exit codes and words as before).
fn error(e: BundleError, lang: Lang) -> CliError {
    match e {
        BundleError::Cudnn(e) => e.into(),
        BundleError::Download(e) => e.into(),
        e => CliError::Failed {
            message: i18n::t(lang, "cli_err_bundle"),
            hint: i18n::render(&e.hint(), lang),
            details: Some(cuda_setup_core::error::chain(&e)),
            code: exit::ERROR,
        },
    }
}
