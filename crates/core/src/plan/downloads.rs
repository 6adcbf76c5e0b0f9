//! What a setup downloads in all, and about how long that takes: the plan's own
//! downloads (driver, toolkit) and those the wizard's later pages fetch (cuDNN, PyTorch),
//! so Prepare can say the total before a byte is fetched.

use serde::Serialize;

use super::Plan;
use crate::recommend::Recommendation;
use crate::steps::{Artifact, Step};

/// The rate the time is estimated from when nothing was measured: 5 MB/s (about a
/// 40 Mbit/s line). Said in the text, so the user can scale it to their own line.
pub const ASSUMED_BYTES_PER_SEC: u64 = 5 << 20;

/// A CUDA build of torch with the NVIDIA libraries pip pulls in: the estimate the
/// PyTorch page has always stated ("about 2.5 GB"); pip shows the real figure.
pub const TORCH_CUDA_ESTIMATE_BYTES: u64 = 5 << 29;

/// One thing fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Item {
    Driver,
    Toolkit,
    Cudnn,
    Torch,
}

/// One download and its size (None: no source states it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Download {
    pub item: Item,
    pub bytes: Option<u64>,
    /// The size is an estimate, not a published figure (PyTorch).
    pub estimate: bool,
}

/// Where the rate behind the time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Rate {
    /// [`ASSUMED_BYTES_PER_SEC`]: nothing measured on this machine yet.
    Assumed { bytes_per_sec: u64 },
}

impl Rate {
    pub fn bytes_per_sec(self) -> u64 {
        match self {
            Rate::Assumed { bytes_per_sec } => bytes_per_sec,
        }
    }
}

/// The downloads of a setup, their total and the time it takes at `rate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Downloads {
    pub items: Vec<Download>,
    /// The sum of the sizes known.
    pub total_bytes: u64,
    /// Some size is unknown: the total is at least this much.
    pub partial: bool,
    pub seconds: u64,
    pub rate: Rate,
}

/// What else the wizard fetches after the plan's run: cuDNN on its page (the developer
/// goal), PyTorch on its page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Later {
    pub cudnn: bool,
    pub torch: bool,
}

/// The plan's downloads (the toolkit's wheels summed as one), then `later`'s from the
/// recommendation. A kept toolkit has no download step, so it adds nothing.
pub fn downloads(plan: &Plan, rec: &Recommendation, later: Later) -> Downloads {
    let mut items: Vec<Download> = Vec::new();
    let mut add = |item: Item, bytes: Option<u64>, estimate: bool| match items
        .iter_mut()
        .find(|d| d.item == item)
    {
        Some(d) => d.bytes = d.bytes.zip(bytes).map(|(a, b)| a.saturating_add(b)),
        None => items.push(Download {
            item,
            bytes,
            estimate,
        }),
    };
    for s in &plan.steps {
        if let Step::Download(d) = s {
            let item = match d.what {
                Artifact::DriverInstaller => Item::Driver,
                Artifact::ToolkitInstaller | Artifact::ToolkitWheel => Item::Toolkit,
                Artifact::CudnnArchive => Item::Cudnn,
            };
            add(item, d.size, false);
        }
    }
    if later.cudnn
        && let Some(c) = &rec.cudnn
    {
        add(Item::Cudnn, c.archive.size, false);
    }
    if later.torch && rec.torch.is_some() {
        add(Item::Torch, Some(TORCH_CUDA_ESTIMATE_BYTES), true);
    }
    let total_bytes: u64 = items
        .iter()
        .filter_map(|d| d.bytes)
        .fold(0, u64::saturating_add);
    let rate = Rate::Assumed {
        bytes_per_sec: ASSUMED_BYTES_PER_SEC,
    };
    Downloads {
        partial: items.iter().any(|d| d.bytes.is_none()),
        seconds: total_bytes.div_ceil(rate.bytes_per_sec()),
        total_bytes,
        items,
        rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::DownloadSpec;

    fn dl(what: Artifact, size: Option<u64>) -> Step {
        Step::Download(DownloadSpec {
            what,
            url: "https://example.invalid/f".into(),
            mirrors: vec![],
            sha256: None,
            md5: None,
            size,
            dest: "f".into(),
            bundle_dirs: vec![],
            cache_dir: None,
            connections: 1,
        })
    }

    #[test]
    fn the_total_sums_the_plan_and_the_later_pages_and_says_what_it_assumed() {
        let tables = crate::compat::Tables::embedded().unwrap();
        let facts = crate::recommend::Facts {
            os: crate::compat::Os::Windows,
            gpus: vec![crate::recommend::GpuFact {
                name: Some("NVIDIA GeForce RTX 3060".into()),
                compute_capability: "8.6".parse().unwrap(),
            }],
            driver: Some("560.94".parse().unwrap()),
            driver_cuda: None,
            python: Some("3.11".parse().unwrap()),
            installed_toolkits: vec![],
            unidentified_gpus: vec![],
            notes: vec![],
            host_kind: Default::default(),
            free_threaded: false,
        };
        let rec = crate::recommend::recommend(
            &tables,
            &facts,
            &crate::recommend::Request {
                goal: crate::recommend::Goal::Developer,
                cuda: None,
                method: crate::recommend::Method::Installer,
                driver: Default::default(),
                distro: None,
                ..Default::default()
            },
        );
        assert!(rec.torch.is_some(), "{:?}", rec.blockers);
        let cudnn = rec.cudnn.as_ref().and_then(|c| c.archive.size);
        let plan = Plan {
            format: 1,
            goal: rec.goal,
            os: crate::compat::Os::Windows,
            root: None,
            toolkit: None,
            cudnn: None,
            torch_command: None,
            notes: vec![],
            steps: vec![
                dl(Artifact::DriverInstaller, Some(700)),
                dl(Artifact::ToolkitWheel, Some(100)),
                dl(Artifact::ToolkitWheel, Some(200)),
            ],
        };
        let d = downloads(
            &plan,
            &rec,
            Later {
                cudnn: true,
                torch: true,
            },
        );
        let kinds: Vec<Item> = d.items.iter().map(|i| i.item).collect();
        assert_eq!(
            kinds,
            [Item::Driver, Item::Toolkit, Item::Cudnn, Item::Torch]
        );
        assert_eq!(d.items[1].bytes, Some(300), "the wheels as one toolkit");
        assert_eq!(
            d.total_bytes,
            1000 + cudnn.unwrap_or(0) + TORCH_CUDA_ESTIMATE_BYTES
        );
        assert_eq!(d.partial, cudnn.is_none());
        assert!(d.items[3].estimate);
        assert_eq!(d.seconds, d.total_bytes.div_ceil(ASSUMED_BYTES_PER_SEC));
        let none = downloads(&plan, &rec, Later::default());
        assert_eq!(none.total_bytes, 1000);
    }
}
