//! `cuda-setup bundle`: download what an install needs into a folder, with a manifest of
//! hashes, so `install --bundle DIR` works with no network at all.

use std::path::{Path, PathBuf};

use super::download::StatusLine;
use super::{CliError, exit, recommend};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::download::{
    self, Cancel, DownloadError, Expected, Options, Request, published,
};
use cuda_setup_core::i18n::{self, Lang};
use cuda_setup_core::platform::{self, Host};
use cuda_setup_core::recommend::{Goal, Method, Request as RecRequest};
use cuda_setup_core::version::{ComputeCapability, Version};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bundle folder (created if needed)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Only `developer` (toolkit + cuDNN) has files to bundle
    #[arg(long, value_parser = crate::cli::values::goal(), default_value = "developer")]
    pub goal: Goal,
    /// The OS the bundle is for (default: this one)
    #[arg(long, value_parser = crate::cli::values::os())]
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
    #[arg(long, value_name = "URL", value_parser = super::http_url)]
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

pub use cuda_setup_core::bundle::{BundleFile, MANIFEST, Manifest};

struct Item {
    kind: &'static str,
    version: Version,
    url: String,
    expected: Expected,
    published: Published,
}

enum Published {
    /// The package index gave the SHA-256 (wheels).
    Index,
    ToolkitMd5,
    CudnnManifest(Os, u32),
}

pub fn run(tables: &Tables, args: &Args, lang: Lang) -> Result<i32, CliError> {
    if args.goal == Goal::Pytorch {
        return Err(CliError::Usage {
            message: "a bundle holds the CUDA toolkit and cuDNN; PyTorch wheels bring their own".into(),
            hint: "for PyTorch use `pip download torch --index-url https://download.pytorch.org/whl/cuXXX -d DIR` (see `cuda-setup recommend`)".into(),
        });
    }
    let os = args.os.unwrap_or_else(Os::current);
    let rec_args = recommend::Args {
        goal: Some(Goal::Developer),
        os: Some(os),
        driver: args.driver.clone(),
        gpu_cc: args.gpu_cc.clone(),
        gpu: args.gpu.clone(),
        cuda: args.cuda.clone(),
        ..Default::default()
    };
    let facts = recommend::facts(tables, &rec_args)?;
    let rec = cuda_setup_core::recommend::recommend(
        tables,
        &facts,
        &RecRequest {
            goal: Goal::Developer,
            cuda: args.cuda.clone(),
            method: args.how.method,
        },
    );
    if !rec.fits() {
        for b in &rec.blockers {
            eprintln!("{}", i18n::render(b, lang));
        }
        return Ok(exit::BLOCKED);
    }
    let tk = rec
        .toolkit
        .as_ref()
        .expect("a fitting developer recommendation has a toolkit");
    let items = if args.how.method == Method::Wheels {
        wheel_items(tables, args, os, tk, rec.cudnn.as_ref())?
    } else {
        let inst = tk
            .installer
            .as_ref()
            .expect("the installer method's recommendation has an installer");
        let mut items = vec![Item {
            kind: "toolkit_installer",
            version: tk.version.clone(),
            url: inst.url.clone(),
            expected: Expected {
                sha256: inst.sha256.clone(),
                md5: inst.md5.clone(),
                size: inst.size,
            },
            published: Published::ToolkitMd5,
        }];
        if !args.no_cudnn {
            let major = tk.version.major();
            let pick = match &args.cudnn {
                Some(v) => Some(super::install::cudnn_by_version(tables, os, major, v)?),
                None => rec.cudnn.clone(),
            }
            .map(|c| {
                let e = Expected {
                    sha256: c.archive.sha256.clone(),
                    md5: c.archive.md5.clone(),
                    size: c.archive.size,
                };
                (c.version, c.archive_url, e)
            });
            if let Some((version, url, expected)) = pick {
                items.push(Item {
                    kind: "cudnn_archive",
                    version,
                    url,
                    expected,
                    published: Published::CudnnManifest(os, major),
                });
            }
        }
        items
    };

    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Download(DownloadError::io(&args.out, e)))?;
    let host = Host::real();
    let opts = Options::default();
    let reporter = StatusLine::new();
    let mut files = Vec::new();
    for mut item in items {
        // The bundle keeps each file under its address's last segment (as an install
        // from the bundle looks it up): one plain name, or nothing is written.
        let file = cuda_setup_core::safe_path::file_name(download::file_name_of(&item.url))
            .map_err(|why| CliError::Failed {
                message: format!("{}: this address names a file that cannot be used: {why}", item.url),
                hint: "nothing was written for it; the address comes from the tables or the package index: check --compat-dir, or use another mirror".into(),
                code: exit::ERROR,
            })?
            .to_string();
        if item.expected.sha256.is_none() && item.expected.md5.is_none() {
            // Not in the tables: take the hash NVIDIA publishes beside the file.
            match item.published {
                Published::Index => {}
                Published::ToolkitMd5 => {
                    item.expected.md5 =
                        published::toolkit_md5(&item.version, &file, &args.mirror, &opts, None)?
                }
                Published::CudnnManifest(os, major) => {
                    if let Some(e) = published::cudnn_expected(
                        &item.version,
                        os,
                        major,
                        &args.mirror,
                        &opts,
                        None,
                    )? {
                        item.expected = Expected {
                            size: e.size.or(item.expected.size),
                            ..e
                        };
                    }
                }
            }
        }
        let req = Request {
            url: item.url.clone(),
            mirrors: args.mirror.clone(),
            expected: item.expected.clone(),
            dest: args.out.join(&file),
            connections: args.connections as usize,
            cache_dir: platform::cache_dir(&host),
            bundle_dirs: vec![],
            allow_http: true,
        };
        let o = download::download(&req, &opts, &reporter, &Cancel::default())?;
        reporter.finish();
        files.push(BundleFile {
            kind: item.kind.into(),
            version: item.version.to_string(),
            file,
            url: item.url,
            sha256: o.sha256,
            md5: o.md5,
            size: o.size,
        });
    }
    let manifest = Manifest {
        format: 1,
        created_by: concat!("cuda-setup ", env!("CARGO_PKG_VERSION")).into(),
        os,
        files,
    };
    write_manifest(&args.out, &manifest)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&manifest).expect("serialisable")
        );
    } else {
        for f in &manifest.files {
            println!("{}: {} ({} bytes)", f.kind, f.file, f.size);
        }
        println!("bundle ready: {}", args.out.join(MANIFEST).display());
    }
    Ok(exit::OK)
}

/// The wheels an install with `--method wheels` takes, resolved on the index now; the
/// resolution is saved in the bundle so the install needs no index.
fn wheel_items(
    tables: &Tables,
    args: &Args,
    os: Os,
    tk: &cuda_setup_core::recommend::ToolkitPick,
    cudnn: Option<&cuda_setup_core::recommend::CudnnPick>,
) -> Result<Vec<Item>, CliError> {
    let cudnn = match (&args.cudnn, args.no_cudnn) {
        (_, true) => None,
        (Some(v), _) => Some(
            super::install::cudnn_by_version(tables, os, tk.version.major(), v)?
                .version
                .clone(),
        ),
        (None, _) => cudnn.map(|c| c.version.clone()),
    };
    let req = cuda_setup_core::wheels::Request {
        index: args
            .how
            .index()
            .unwrap_or_else(|| cuda_setup_core::wheels::index::PYPI.to_string()),
        toolkit: tk.version.clone(),
        os,
        components: args.how.components(),
        cudnn,
    };
    let wheels_err = |e: cuda_setup_core::wheels::WheelError| CliError::Failed {
        hint: e.hint().into(),
        message: cuda_setup_core::error::chain(&e),
        code: exit::ERROR,
    };
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Download(DownloadError::io(&args.out, e)))?;
    let resolved = cuda_setup_core::wheels::resolve(&req, &Options::default(), &args.out)
        .map_err(wheels_err)?;
    cuda_setup_core::wheels::save_resolution(&args.out, &resolved, os).map_err(wheels_err)?;
    let item = |w: &cuda_setup_core::wheels::Wheel, kind: &'static str| Item {
        kind,
        version: tk.version.clone(),
        url: w.url.clone(),
        expected: Expected {
            sha256: Some(w.sha256.clone()),
            md5: None,
            size: w.size,
        },
        published: Published::Index,
    };
    Ok(resolved
        .wheels
        .iter()
        .map(|w| item(w, "toolkit_wheel"))
        .chain(resolved.cudnn.iter().map(|w| item(w, "cudnn_wheel")))
        .collect())
}

fn write_manifest(dir: &Path, m: &Manifest) -> Result<(), CliError> {
    cuda_setup_core::bundle::write(dir, m)
        .map_err(|e| CliError::Download(DownloadError::io(&dir.join(MANIFEST), e)))
}
