//! `cuda-setup tables`: what the tables know.

use serde::Serialize;

use super::{CliError, exit};
use crate::compat::{Meta, TableSource, Tables};
use crate::version::Version;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Summary<'t> {
    source: &'t TableSource,
    newest: Newest,
    newest_confirmed: Newest,
    counts: Counts,
    files: Vec<FileSummary<'t>>,
}

#[derive(Serialize)]
struct Newest {
    toolkit: Option<Version>,
    cudnn: Option<Version>,
    torch: Option<Version>,
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

fn summary(t: &Tables) -> Summary<'_> {
    let (tk, cudnn, torch) = t.newest();
    let metas: [&Meta; 4] = [
        &t.toolkits.meta,
        &t.cudnn.meta,
        &t.pytorch.meta,
        &t.gpus.meta,
    ];
    Summary {
        source: &t.source,
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
        counts: Counts {
            toolkits: t.toolkits.releases.len(),
            cudnn: t.cudnn.releases.len(),
            torch: t.pytorch.releases.len(),
            torch_variants: t.pytorch.variants.len(),
            gpus: t.gpus.gpus.len(),
            gpu_pci_ids: t.gpus.gpus.iter().map(|g| g.pci_ids.len()).sum(),
        },
        files: crate::compat::FILES
            .iter()
            .zip(metas)
            .map(|(file, m)| FileSummary {
                file,
                subject: &m.subject,
                sources: &m.sources,
            })
            .collect(),
    }
}

pub fn run(tables: &Tables, args: &Args) -> Result<i32, CliError> {
    let s = summary(tables);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&s).expect("serialisable")
        );
        return Ok(exit::OK);
    }
    let show = |v: &Option<Version>| v.as_ref().map_or("-".to_string(), ToString::to_string);
    let src = match &s.source {
        TableSource::Embedded => "built in".to_string(),
        TableSource::Dir(d) => d.display().to_string(),
    };
    println!("Compat tables ({src})");
    println!(
        "  newest:            CUDA {}, cuDNN {}, PyTorch {}",
        show(&s.newest.toolkit),
        show(&s.newest.cudnn),
        show(&s.newest.torch)
    );
    println!(
        "  newest confirmed:  CUDA {}, cuDNN {}, PyTorch {}",
        show(&s.newest_confirmed.toolkit),
        show(&s.newest_confirmed.cudnn),
        show(&s.newest_confirmed.torch)
    );
    let c = &s.counts;
    println!(
        "  {} toolkit releases, {} cuDNN releases, {} PyTorch lines ({} CUDA variants), {} GPUs ({} PCI ids)",
        c.toolkits, c.cudnn, c.torch, c.torch_variants, c.gpus, c.gpu_pci_ids
    );
    for f in &s.files {
        println!("\n  {} — {}", f.file, f.subject);
        for src in f.sources {
            println!("    source: {src}");
        }
    }
    Ok(exit::OK)
}
