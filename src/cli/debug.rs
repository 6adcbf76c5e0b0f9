//! `cuda-setup debug …`: hidden diagnostics for the Wine check and for support. Each
//! prints one JSON value and changes nothing.

use std::path::PathBuf;

use super::{CliError, exit};
use cuda_setup_core::platform::signature;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// The Authenticode signature of FILE, as the driver step sees it
    Signature {
        file: PathBuf,
        /// Off Windows: read a test stand-in's `# stand-in signature:` line
        #[arg(long)]
        sandbox: bool,
    },
    /// The language the CLI picks with no --lang (from the locale variables, then the
    /// system's locale)
    Lang,
}

pub fn run(args: &Args) -> Result<i32, CliError> {
    let value = match &args.what {
        What::Signature { file, sandbox } => {
            let sig = signature::check(file, *sandbox);
            let mut v = serde_json::to_value(&sig).expect("serialisable");
            v["nvidia"] = signature::require_nvidia(&sig).is_ok().into();
            v
        }
        What::Lang => {
            let var = |n: &str| std::env::var(n).ok();
            serde_json::json!({
                "lang": cuda_setup_core::locale::system_lang(None),
                "LC_ALL": var("LC_ALL"),
                "LC_MESSAGES": var("LC_MESSAGES"),
                "LANG": var("LANG"),
            })
        }
    };
    println!("{value}");
    Ok(exit::OK)
}
