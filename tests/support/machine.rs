//! The machine most wizard tests stand in for: one RTX 3060 (compute capability 8.6), a
//! driver (or none) and a Python, as the wizard's what-if overrides give them.

use cuda_setup::ui::Overrides;
use cuda_setup_core::recommend::GpuFact;

/// An RTX 3060 with `driver` (None: no driver installed) and Python `python`.
pub fn rtx_3060(driver: Option<&str>, python: &str) -> Overrides {
    Overrides {
        gpus: vec![GpuFact {
            name: Some("NVIDIA GeForce RTX 3060".into()),
            compute_capability: "8.6".parse().unwrap(),
        }],
        driver: Some(driver.map(|d| d.parse().unwrap())),
        driver_cuda: None,
        python: Some(python.parse().unwrap()),
        free_threaded: false,
        no_gpu: false,
    }
}
