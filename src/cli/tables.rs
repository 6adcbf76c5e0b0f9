//! `cuda-setup tables`: what the tables know; `--refresh` first reads the sources of
//! truth (NVIDIA's manifests, the PyTorch index, PyPI) and caches what is new.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{CliError, exit};
use cuda_setup_core::compat::{Meta, PypiTorch, TableSource, Tables};
use cuda_setup_core::i18n::{self, Lang, render};
use cuda_setup_core::refresh::{self, Sources, Status, Using};
use cuda_setup_core::verify::doctor::PypiMirror;
use cuda_setup_core::version::Version;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Read NVIDIA's redist manifests, the PyTorch wheel index and PyPI now, and cache
    /// what is new (offline: the cached or built-in tables are used, and said so)
    #[arg(long)]
    pub refresh: bool,
    /// Base URL holding cuda/redist/ and cudnn/redist/ (default NVIDIA's; env CUDA_SETUP_NVIDIA_BASE)
    #[arg(long, value_name = "URL", requires = "refresh", value_parser = cuda_setup_core::url::http_url)]
    pub nvidia_base: Option<String>,
    /// Base URL of the PyTorch wheel index (default https://download.pytorch.org/whl; env CUDA_SETUP_TORCH_INDEX)
    #[arg(long, value_name = "URL", requires = "refresh", value_parser = cuda_setup_core::url::http_url)]
    pub torch_index: Option<String>,
    /// A PyPI mirror for the nvidia-* packages: tsinghua, aliyun, ustc, or a simple-index URL (env CUDA_SETUP_PYPI)
    #[arg(long, value_name = "NAME|URL", requires = "refresh")]
    pub pypi_mirror: Option<PypiMirror>,
}

#[derive(Serialize)]
struct Summary<'t> {
    source: &'t TableSource,
    /// What the tables in use rest on: the tables alone, a cache of date X, or live data.
    using: Using,
    newest: Newest,
    newest_confirmed: Newest,
    counts: Counts,
    /// The PCI id database (pci.ids, NVIDIA's section) that names GPUs without a driver.
    pci_database: PciDatabase,
    files: Vec<FileSummary<'t>>,
    /// Newest release per PyPI project read by the last refresh.
    pypi: &'t BTreeMap<String, Version>,
    /// Torch lines learned from PyPI (the PyTorch index unread or not listing them):
    /// each fact with its source, and whether the CUDA variants are confirmed.
    torch_from_pypi: &'t [PypiTorch],
    /// The same as sentences in --lang, one per fact with where it came from.
    facts: Vec<String>,
    cache_file: Option<&'t Path>,
    /// Present with --refresh.
    #[serde(skip_serializing_if = "Option::is_none")]
    refresh: Option<RefreshSummary>,
}

#[derive(Serialize)]
struct RefreshSummary {
    status: Status,
    /// What could not be read (`url: why`).
    errors: Vec<String>,
    /// Releases the sources know that the built-in tables do not.
    new: Vec<String>,
    /// The status as a sentence in --lang.
    text: String,
}

#[derive(Serialize)]
struct Newest {
    toolkit: Option<Version>,
    cudnn: Option<Version>,
    torch: Option<Version>,
}

#[derive(Serialize)]
struct PciDatabase {
    /// pci.ids' `Version:` (`2026.05.24`).
    version: Option<String>,
    /// `embedded`, a file, or the URL a refresh read.
    origin: String,
    /// NVIDIA device ids listed.
    devices: usize,
    /// Of them, GPUs placed with a compute capability.
    gpus: usize,
}

#[derive(Serialize)]
struct Counts {
    toolkits: usize,
    cudnn: usize,
    torch: usize,
    torch_variants: usize,
    gpus: usize,
    gpu_pci_ids: usize,
}

#[derive(Serialize)]
struct FileSummary<'t> {
    file: &'static str,
    subject: &'t str,
    sources: &'t [String],
}

fn summary<'t>(t: &'t Tables, cache_file: Option<&'t Path>, lang: Lang) -> Summary<'t> {
    let (tk, cudnn, torch) = t.newest();
    let metas: [&Meta; 4] = [
        &t.toolkits.meta,
        &t.cudnn.meta,
        &t.pytorch.meta,
        &t.gpus.meta,
    ];
    Summary {
        source: &t.source,
        using: Using::of(t),
        pypi: &t.live.packages,
        torch_from_pypi: &t.live.torch_pypi,
        facts: refresh::torch_pypi_messages(t)
            .iter()
            .chain(refresh::gpu_packages_messages(t).iter())
            .map(|m| render(m, lang))
            .collect(),
        cache_file,
        refresh: None,
        newest: Newest {
            toolkit: tk.map(|r| r.version.clone()),
            cudnn: cudnn.map(|r| r.version.clone()),
            torch: torch.and_then(|r| r.patches.last().cloned()),
        },
        newest_confirmed: Newest {
            toolkit: t
                .toolkits
                .releases
                .iter()
                .rfind(|r| r.confirmed && !r.preview)
                .map(|r| r.version.clone()),
            cudnn: t
                .cudnn
                .releases
                .iter()
                .rfind(|r| r.confirmed)
                .map(|r| r.version.clone()),
            torch: t
                .pytorch
                .releases
                .iter()
                .rfind(|r| r.confirmed && r.variants_confirmed)
                .and_then(|r| r.patches.last().cloned()),
        },
        pci_database: PciDatabase {
            version: t.pci.ids.version.clone(),
            origin: t.pci.origin.clone(),
            devices: t.pci.ids.devices.len(),
            gpus: t
                .pci
                .ids
                .devices
                .keys()
                .filter(|id| t.identify_pci(id).is_some())
                .count(),
        },
        counts: Counts {
            toolkits: t.toolkits.releases.len(),
            cudnn: t.cudnn.releases.len(),
            torch: t.pytorch.releases.len(),
            torch_variants: t.pytorch.variants.len(),
            gpus: t.gpus.gpus.len(),
            gpu_pci_ids: t.gpus.gpus.iter().map(|g| g.pci_ids.len()).sum(),
        },
        files: cuda_setup_core::compat::FILES
            .iter()
            .zip(metas)
            .map(|(file, m)| FileSummary {
                file,
                subject: &m.subject,
                sources: &m.sources,
            })
            // The driver tables: where the driver step's packages and the Linux
            // commands come from.
            .chain([FileSummary {
                file: "drivers.toml",
                subject: &t.drivers.meta.subject,
                sources: &t.drivers.meta.sources,
            }])
            .chain(
                cuda_setup_core::linux_driver::embedded().map(|l| FileSummary {
                    file: "drivers-linux.toml",
                    subject: &l.meta.subject,
                    sources: &l.meta.sources,
                }),
            )
            .collect(),
    }
}

/// `tables`: the tables in use (built-in or --compat-dir, plus the refresh cache);
/// `base`: the same without the cache, which a refresh merges onto.
pub fn run(
    base: &Tables,
    tables: &Tables,
    cache_file: Option<PathBuf>,
    args: &Args,
    lang: Lang,
) -> Result<i32, CliError> {
    let mut outcome = None;
    let mut rejected = None;
    if args.refresh {
        let mut sources = Sources::from_env();
        if let Some(u) = &args.nvidia_base {
            sources.nvidia = u.clone();
        }
        if let Some(u) = &args.torch_index {
            sources.torch_index = u.clone();
        }
        if let Some(m) = &args.pypi_mirror {
            sources.pypi = m.url.clone();
        }
        match refresh::refresh(
            base,
            &sources,
            cache_file.as_deref(),
            &refresh::Options::default(),
        ) {
            Ok(o) => outcome = Some(o),
            // Refused data: the summary still shows what is used instead, then the error.
            Err(e) => rejected = Some(e),
        }
    }
    let t = outcome.as_ref().map_or(tables, |o| &o.tables);
    let mut s = summary(t, cache_file.as_deref(), lang);
    if let Some(o) = &outcome {
        s.refresh = Some(RefreshSummary {
            status: o.status,
            errors: o.errors.clone(),
            new: o.new.clone(),
            text: render(&refresh::outcome_message(o), lang),
        });
    }
    if let Some(e) = &rejected {
        s.refresh = Some(RefreshSummary {
            status: Status::Rejected,
            errors: vec![e.to_string()],
            new: Vec::new(),
            text: render(
                &cuda_setup_core::msg!("refresh_rejected", error = e.to_string()),
                lang,
            ),
        });
    }
    let done = |rejected: Option<refresh::RefreshError>| match rejected {
        Some(e) => Err(CliError::Refresh(e)),
        None => Ok(exit::OK),
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&s).expect("serialisable")
        );
        return done(rejected);
    }
    if let Some(r) = &s.refresh {
        println!("{}", r.text);
        for e in &r.errors {
            println!("  {}", i18n::tf(lang, "cli_not_read", &[("error", e)]));
        }
        if !r.new.is_empty() {
            println!(
                "{}",
                render(
                    &cuda_setup_core::msg!("refresh_new", releases = r.new.join(", ")),
                    lang
                )
            );
        }
    } else {
        println!("{}", render(&refresh::tables_message(t), lang));
    }
    for f in &s.facts {
        println!("  {f}");
    }
    if s.refresh.is_some() {
        println!();
    }
    let show = |v: &Option<Version>| v.as_ref().map_or("-".to_string(), ToString::to_string);
    let src = match &s.source {
        TableSource::Embedded => i18n::t(lang, "cli_tables_built_in"),
        TableSource::Dir(d) => d.display().to_string(),
    };
    println!(
        "{}",
        i18n::tf(lang, "cli_tables_title", &[("source", &src)])
    );
    for (key, n) in [
        ("cli_tables_newest", &s.newest),
        ("cli_tables_newest_confirmed", &s.newest_confirmed),
    ] {
        let (cuda, cudnn, torch) = (show(&n.toolkit), show(&n.cudnn), show(&n.torch));
        let params: [(&str, &dyn std::fmt::Display); 3] =
            [("cuda", &cuda), ("cudnn", &cudnn), ("torch", &torch)];
        println!("  {}", i18n::tf(lang, key, &params));
    }
    let c = &s.counts;
    let counts: [(&str, &dyn std::fmt::Display); 6] = [
        ("toolkits", &c.toolkits),
        ("cudnn", &c.cudnn),
        ("torch", &c.torch),
        ("variants", &c.torch_variants),
        ("gpus", &c.gpus),
        ("pci_ids", &c.gpu_pci_ids),
    ];
    println!("  {}", i18n::tf(lang, "cli_tables_counts", &counts));
    let p = &s.pci_database;
    let version = p.version.clone().unwrap_or_else(|| "-".into());
    let pci: [(&str, &dyn std::fmt::Display); 4] = [
        ("version", &version),
        ("origin", &p.origin),
        ("ids", &p.devices),
        ("gpus", &p.gpus),
    ];
    println!("  {}", i18n::tf(lang, "cli_tables_pci_database", &pci));
    for (name, v) in s.pypi {
        println!("  PyPI: {name} {v}");
    }
    for f in &s.files {
        println!("\n  {} — {}", f.file, f.subject);
        for src in f.sources {
            println!(
                "    {}",
                i18n::tf(lang, "cli_tables_source", &[("source", src)])
            );
        }
    }
    done(rejected)
}
