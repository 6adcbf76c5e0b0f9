//! The check a cuDNN archive gets before anything is copied (the wizard shows it on the
//! cuDNN page): the install's own validation, then its CUDA major against the toolkit's.
//! One function, so the page and the install refuse the same archives with the same
//! advice — for the OS the toolkit is on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::archive::{self, Kind, Refusal, RefusalRule};
use super::{CudnnError, mismatch};
use crate::compat::Os;
use crate::platform::Host;
use crate::version::Version;

/// NVIDIA's redist archive of cuDNN `version` for CUDA `cuda_major` on `os`, by NVIDIA's
/// naming (`cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz`, the Windows `.zip`).
pub fn archive_name(os: Os, version: &Version, cuda_major: u32) -> String {
    match os {
        Os::Linux => format!("cudnn-linux-x86_64-{version}_cuda{cuda_major}-archive.tar.xz"),
        Os::Windows => format!("cudnn-windows-x86_64-{version}_cuda{cuda_major}-archive.zip"),
    }
}

/// An archive that passed: what the page shows before "Install cuDNN".
#[derive(Debug, Clone)]
pub struct Checked {
    pub archive: PathBuf,
    pub version: Version,
    pub cuda_major: Option<u32>,
    /// The toolkit's version (None: not readable, the major is not compared).
    pub toolkit: Option<Version>,
    pub entries: usize,
    /// Libraries: DLLs on Windows, shared libraries on Linux.
    pub libraries: usize,
    pub headers: usize,
    pub total_bytes: u64,
}

/// An archive that did not pass, and why.
#[derive(Debug, Clone)]
pub struct Refused {
    pub archive: PathBuf,
    pub refusal: Refusal,
}

impl Refused {
    pub fn rule(&self) -> RefusalRule {
        self.refusal.rule()
    }

    /// What was found and expected (English, for Details).
    pub fn detail(&self) -> String {
        self.refusal.to_string()
    }
}

/// Validates `archive` as the install will, and against the CUDA major of the toolkit at
/// `toolkit_dir` on `os` (read through `host`), changing nothing.
pub fn check(host: &Host, os: Os, archive: &Path, toolkit_dir: &Path) -> Result<Checked, Refused> {
    let refused = |refusal| Refused {
        archive: archive.to_path_buf(),
        refusal,
    };
    let plan = archive::open(archive).map_err(refused)?;
    let toolkit = crate::toolkit_version::version_of(host, toolkit_dir, Duration::from_secs(20));
    if let Some(tk) = &toolkit
        && let Some(CudnnError::Refused { refusal, .. }) =
            mismatch(archive, toolkit_dir, &plan, tk, os)
    {
        return Err(refused(refusal));
    }
    let count = |kinds: &[Kind]| {
        plan.entries
            .iter()
            .filter(|e| kinds.contains(&e.kind))
            .count()
    };
    Ok(Checked {
        archive: archive.to_path_buf(),
        libraries: count(&[Kind::Dll, Kind::SharedLib]),
        headers: count(&[Kind::Header]),
        entries: plan.entries.len(),
        total_bytes: plan.total_bytes,
        version: plan.version,
        cuda_major: plan.cuda_major,
        toolkit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_names_its_archives_by_os() {
        let v: Version = "9.10.2.21".parse().unwrap();
        assert_eq!(
            archive_name(Os::Linux, &v, 12),
            "cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz"
        );
        assert_eq!(
            archive_name(Os::Windows, &v, 11),
            "cudnn-windows-x86_64-9.10.2.21_cuda11-archive.zip"
        );
    }
}
