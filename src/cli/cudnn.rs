//! `cuda-setup cudnn install|verify|uninstall`.

use std::path::PathBuf;
use std::sync::Mutex;

use super::{CliError, exit};
use cuda_setup_core::cudnn::{self, CudnnError, Event};
use cuda_setup_core::i18n::{Lang, t, tf};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Validate a cuDNN archive and copy bin/include/lib into a CUDA toolkit, as a transaction
    Install {
        /// NVIDIA's cuDNN zip (cudnn-windows-x86_64-<version>_cuda<major>-archive.zip),
        /// NVIDIA's Linux tarball (cudnn-linux-x86_64-<version>_cuda<major>-archive.tar.xz) or
        /// NVIDIA's wheel (nvidia_cudnn_cu<major>-<version>-py3-none-<platform>.whl)
        #[arg(long)]
        archive: PathBuf,
        /// The CUDA toolkit folder
        #[arg(long)]
        cuda_dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// If another cuda-setup is working on that folder, wait for it (default: exit 6)
        #[arg(long)]
        wait: bool,
    },
    /// Check that what we installed is intact
    Verify {
        #[arg(long)]
        cuda_dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// Re-read and hash every file (default: a file whose size and modification time
        /// are still those recorded at install is taken as intact)
        #[arg(long)]
        deep: bool,
        /// If another cuda-setup is working on that folder, wait for it (default: exit 6)
        #[arg(long)]
        wait: bool,
    },
    /// Restore the toolkit folder to what it was before the install
    Uninstall {
        #[arg(long)]
        cuda_dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// If another cuda-setup is working on that folder, wait for it (default: exit 6)
        #[arg(long)]
        wait: bool,
    },
}

/// Exit codes of `cudnn` (docs/cli.md).
pub const REFUSED: i32 = 3;
pub const PROBLEMS: i32 = 4;

fn print<T: serde::Serialize>(json: bool, value: &T, text: impl FnOnce()) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(value).expect("serialisable")
        );
    } else {
        text();
    }
}

pub fn run(args: &Args, lang: Lang) -> Result<i32, CliError> {
    let (Action::Install { wait, .. }
    | Action::Verify { wait, .. }
    | Action::Uninstall { wait, .. }) = &args.action;
    super::wait_for_others(*wait, lang);
    match &args.action {
        Action::Install {
            archive,
            cuda_dir,
            json,
            ..
        } => {
            let last = Mutex::new(0usize);
            let report = |e: Event| match e {
                Event::Recovered(r) => eprintln!(
                    "{}",
                    tf(lang, "cli_cudnn_recovered", &[("what", &format!("{r:?}"))])
                ),
                Event::Validated {
                    version,
                    entries,
                    total_bytes,
                } => {
                    let size = cuda_setup_core::units::bytes(total_bytes);
                    let params: [(&str, &dyn std::fmt::Display); 3] =
                        [("version", &version), ("files", &entries), ("size", &size)];
                    eprintln!("{}", tf(lang, "cli_cudnn_checked", &params))
                }
                Event::Extracted {
                    entries,
                    bytes,
                    total_bytes,
                    ..
                } => {
                    let mut l = last.lock().unwrap();
                    // A line per quarter of the bytes is enough on a console (a tarball's
                    // entry count is known only at its end).
                    let quarter = (bytes * 4 / total_bytes.max(1)) as usize;
                    if quarter > *l {
                        *l = quarter;
                        let percent = quarter * 25;
                        let params: [(&str, &dyn std::fmt::Display); 2] =
                            [("files", &entries), ("percent", &percent)];
                        eprintln!("  {}", tf(lang, "cli_cudnn_extracted", &params));
                    }
                }
                Event::Applying => eprintln!(
                    "  {}",
                    tf(lang, "cli_cudnn_copying", &[("dir", &cuda_dir.display())])
                ),
            };
            let m = cudnn::install(archive, cuda_dir, &report)?;
            print(*json, &m, || {
                let replaced = m.files.iter().filter(|f| f.replaced).count();
                let params: [(&str, &dyn std::fmt::Display); 4] = [
                    ("version", &m.cudnn_version),
                    ("dir", &cuda_dir.display()),
                    ("files", &m.files.len()),
                    ("replaced", &replaced),
                ];
                println!("{}", tf(lang, "cli_cudnn_installed", &params));
            });
            Ok(exit::OK)
        }
        Action::Verify {
            cuda_dir,
            json,
            deep,
            ..
        } => {
            let depth = if *deep {
                cudnn::Depth::Deep
            } else {
                cudnn::Depth::Quick
            };
            let r = cudnn::verify_at(cuda_dir, depth)?;
            print(*json, &r, || {
                if r.problems.is_empty() {
                    let params: [(&str, &dyn std::fmt::Display); 2] =
                        [("version", &r.cudnn_version), ("files", &r.files)];
                    println!("{}", tf(lang, "cli_cudnn_intact", &params));
                }
                for p in &r.problems {
                    println!("{}: {}", p.path, p.problem);
                }
            });
            if !r.problems.is_empty() && !*json {
                eprintln!("hint: {}", t(lang, "cli_cudnn_hint_reinstall"));
            }
            Ok(if r.problems.is_empty() {
                exit::OK
            } else {
                PROBLEMS
            })
        }
        Action::Uninstall { cuda_dir, json, .. } => {
            let m = cudnn::uninstall(cuda_dir)?;
            print(*json, &m, || {
                let params: [(&str, &dyn std::fmt::Display); 2] =
                    [("version", &m.cudnn_version), ("dir", &cuda_dir.display())];
                println!("{}", tf(lang, "cli_cudnn_removed", &params))
            });
            Ok(exit::OK)
        }
    }
}

/// The exit code for a cuDNN error.
pub fn code(e: &CudnnError) -> i32 {
    match e {
        CudnnError::Refused { .. }
        | CudnnError::NotAToolkit { .. }
        | CudnnError::BadState(_)
        | CudnnError::LinkOut { .. } => REFUSED,
        CudnnError::NotInstalled { .. } => PROBLEMS,
        CudnnError::Busy(_) => exit::BUSY,
        _ => exit::ERROR,
    }
}
