//! An offline bundle: installers and archives in one folder with `manifest.json` naming
//! each file's hashes, so an install needs no network at all.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::compat::Os;

pub const MANIFEST: &str = "manifest.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub created_by: String,
    pub os: Os,
    pub files: Vec<BundleFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BundleFile {
    /// `toolkit_installer` or `cudnn_archive`.
    pub kind: String,
    pub version: String,
    pub file: String,
    pub url: String,
    pub sha256: String,
    pub md5: String,
    pub size: u64,
}

pub fn read(dir: &Path) -> Result<Manifest, String> {
    let path = dir.join(MANIFEST);
    let bytes = std::fs::read(&path).map_err(|e| {
        format!(
            "{}: {e} (make the bundle with `cuda-setup bundle --out {}`)",
            path.display(),
            dir.display()
        )
    })?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes the manifest (write, then rename: never a torn file).
pub fn write(dir: &Path, m: &Manifest) -> std::io::Result<()> {
    let tmp = dir.join("manifest.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(m).expect("serialisable"))?;
    std::fs::rename(&tmp, dir.join(MANIFEST))
}
