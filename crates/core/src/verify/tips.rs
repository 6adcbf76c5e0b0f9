//! The first tips Done shows, chosen for this machine (the guide's, where they pay):
//! mixed precision only on cards with tensor cores (compute capability 7.0 and newer; a
//! Pascal card gains nothing), DataLoader workers with Windows' `__main__` guard and
//! Jupyter's caveat, and a small-memory tip for cards of 4 GB or less.

use serde::Serialize;

use crate::compat::Os;
use crate::detect::Gpu;
use crate::recommend::GpuFact;
use crate::version::ComputeCapability;

/// Cards at or below this much memory get the small-memory tip ("4 GB" cards report a
/// little under 4 GiB).
pub const SMALL_VRAM_BYTES: u64 = 4 << 30;

/// Tensor cores, which mixed precision needs to pay off, came with Volta (7.0).
pub const TENSOR_CORES_FROM: ComputeCapability = ComputeCapability { major: 7, minor: 0 };

/// One tip; the front ends word it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tip {
    /// "CUDA out of memory": a smaller batch.
    OutOfMemory,
    /// A card with little memory: small batches, mixed precision or smaller models.
    SmallMemory,
    /// DataLoader workers; on Windows with the `if __name__ == "__main__":` guard and
    /// `num_workers=0` in Jupyter.
    Loader { windows: bool },
    /// `torch.autocast`: on tensor-core cards only.
    MixedPrecision,
}

/// The tips for the GPUs the facts name (their compute capabilities) and the cards
/// detection measured (their memory), on `os`.
pub fn tips(os: Os, gpus: &[GpuFact], detected: &[Gpu]) -> Vec<Tip> {
    let small = detected
        .iter()
        .filter(|g| g.cuda_capable)
        .filter_map(|g| g.memory_total_bytes)
        .any(|m| m > 0 && m <= SMALL_VRAM_BYTES);
    let tensor_cores = gpus
        .iter()
        .any(|g| g.compute_capability >= TENSOR_CORES_FROM);
    let mut out = vec![Tip::OutOfMemory];
    if small {
        out.push(Tip::SmallMemory);
    }
    out.push(Tip::Loader {
        windows: os == Os::Windows,
    });
    if tensor_cores {
        out.push(Tip::MixedPrecision);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(cc: &str) -> GpuFact {
        GpuFact {
            name: None,
            compute_capability: cc.parse().unwrap(),
        }
    }

    #[test]
    fn mixed_precision_needs_tensor_cores_and_small_cards_get_their_tip() {
        let pascal = tips(Os::Linux, &[fact("6.1")], &[]);
        assert!(!pascal.contains(&Tip::MixedPrecision));
        assert!(pascal.contains(&Tip::Loader { windows: false }));
        let volta = tips(Os::Windows, &[fact("7.0")], &[]);
        assert!(volta.contains(&Tip::MixedPrecision));
        assert!(volta.contains(&Tip::Loader { windows: true }));
        assert!(!volta.contains(&Tip::SmallMemory), "memory unknown: no tip");
        let card = |bytes: u64| Gpu {
            name: "NVIDIA GeForce GTX 1050 Ti".into(),
            vendor: crate::detect::gpu::Vendor::Nvidia,
            source: crate::detect::gpu::GpuSource::Nvml,
            cuda_capable: true,
            compute_capability: Some("6.1".parse().unwrap()),
            architecture: None,
            uuid: None,
            memory_total_bytes: Some(bytes),
            memory_used_bytes: None,
            pci_bus_id: None,
            pci_device_id: None,
            kernel_driver: None,
            problem: None,
        };
        let four = tips(Os::Windows, &[fact("6.1")], &[card(4_294_639_616)]);
        assert!(four.contains(&Tip::SmallMemory));
        let twelve = tips(Os::Windows, &[fact("8.6")], &[card(12 << 30)]);
        assert!(!twelve.contains(&Tip::SmallMemory));
    }
}
