//! The answer on a Jetson (Tegra) board (#32, dossier §13.3): JetPack provides the driver,
//! CUDA and cuDNN, and PyTorch comes from NVIDIA's builds for that JetPack. Nothing of a
//! PC's is offered — no driver, no toolkit installer, no pytorch.org wheel: they carry no
//! code for these GPUs (sm_72, sm_87) and would replace JetPack's own parts.

use serde::Serialize;

use super::{DriverAction, Facts, HostKind, Recommendation};
use crate::compat::Tables;
use crate::message::Message;
use crate::msg;
use crate::version::Version;

/// NVIDIA's "PyTorch for Jetson" page: its wheels, listed per JetPack release (dossier §13.3).
pub const TORCH_FOR_JETSON: &str = "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048";
/// Where NVIDIA keeps those wheels, one folder per JetPack release.
pub const JETSON_WHEEL_INDEX: &str = "https://developer.download.nvidia.com/compute/redist/jp/";

/// What a Jetson board has and where its PyTorch comes from.
#[derive(Debug, Clone, Serialize)]
pub struct JetsonAdvice {
    /// The device tree's board name ("NVIDIA Jetson AGX Orin Developer Kit").
    pub model: Option<String>,
    /// The Jetson Linux (L4T) release from `/etc/nv_tegra_release` ("36.4.0").
    pub l4t: Option<String>,
    /// Its JetPack release, when the tables know it ("6.1").
    pub jetpack: Option<String>,
    /// False when the tables' L4T → JetPack pairing is UNCONFIRMED.
    pub jetpack_confirmed: bool,
    /// NVIDIA's PyTorch builds for Jetson: the page that lists them per JetPack release,
    /// and the folder that holds the files.
    pub torch_page: String,
    pub torch_index: String,
    /// The line both front ends show first.
    pub headline: Message,
}

/// Whether the facts are a Jetson board's: detection said so, or a GPU has a compute
/// capability only Jetson modules have (8.7 is Orin's alone). The board's name and L4T
/// release when known.
pub fn host(tables: &Tables, facts: &Facts) -> Option<(Option<String>, Option<String>)> {
    match &facts.host_kind {
        HostKind::Jetson { model, l4t } => Some((model.clone(), l4t.clone())),
        _ if implied(tables, facts) => Some((None, None)),
        _ => None,
    }
}

/// A GPU only a Jetson module has.
fn implied(tables: &Tables, facts: &Facts) -> bool {
    facts
        .gpus
        .iter()
        .any(|g| tables.jetson_only(g.compute_capability))
}

/// Marks `facts` as a Jetson board's when its GPUs say so (`--gpu-cc 8.7` alone, without
/// the board's files), keeping what detection read.
pub fn mark(tables: &Tables, facts: &mut Facts) {
    if !matches!(facts.host_kind, HostKind::Jetson { .. }) && implied(tables, facts) {
        facts.host_kind = HostKind::Jetson {
            model: None,
            l4t: None,
        };
    }
}

/// The Jetson answer: no pick, no driver action, the release found and where PyTorch
/// comes from. Never a blocker: nothing is wrong, there is only nothing for us to install.
pub(super) fn advise(
    tables: &Tables,
    facts: &Facts,
    model: Option<String>,
    l4t: Option<String>,
    rec: &mut Recommendation,
) {
    let row = l4t
        .as_deref()
        .and_then(|v| v.parse::<Version>().ok())
        .and_then(|v| tables.jetpack_for(&v));
    // The board's own name, else the GPU's, else the Jetson modules of its compute
    // capability ("Jetson AGX Xavier / Jetson Xavier NX").
    let board = model
        .clone()
        .or_else(|| facts.gpus.iter().find_map(|g| g.name.clone()))
        .or_else(|| {
            let cc = facts.gpus.first()?.compute_capability;
            let names: Vec<&str> = tables
                .gpus
                .gpus
                .iter()
                .filter(|g| g.cc == cc && g.segment.as_deref() == Some("embedded"))
                .map(|g| g.name.as_str())
                .collect();
            (!names.is_empty()).then(|| names.join(" / "))
        })
        .unwrap_or_else(|| "Jetson".to_string());
    let headline = msg!("jetson_headline", board = board);
    rec.reasons.push(headline.clone());
    rec.reasons.push(match (&l4t, row) {
        (Some(l), Some(r)) if r.confirmed => msg!("jetson_release", jetpack = &r.jetpack, l4t = l),
        (Some(l), Some(r)) => msg!("jetson_release_unconfirmed", jetpack = &r.jetpack, l4t = l),
        (Some(l), None) => msg!("jetson_release_l4t_only", l4t = l),
        (None, _) => msg!("jetson_release_unknown"),
    });
    for gpu in &facts.gpus {
        if let Some(a) = tables.architecture_of(gpu.compute_capability) {
            rec.reasons.push(msg!(
                "gpu_architecture",
                gpu = gpu.label(),
                architecture = &a.name
            ));
        }
    }
    rec.reasons.push(msg!(
        "jetson_torch",
        page = TORCH_FOR_JETSON,
        index = JETSON_WHEEL_INDEX
    ));
    rec.reasons.push(msg!("jetson_cuda"));
    rec.driver.action = DriverAction::None;
    rec.jetson = Some(JetsonAdvice {
        model,
        l4t,
        jetpack: row.map(|r| r.jetpack.clone()),
        jetpack_confirmed: row.is_some_and(|r| r.confirmed),
        torch_page: TORCH_FOR_JETSON.to_string(),
        torch_index: JETSON_WHEEL_INDEX.to_string(),
        headline,
    });
}
