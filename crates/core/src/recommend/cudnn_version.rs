//! A cuDNN release the user names (`--cudnn 9.1`) instead of the recommended one.

use crate::compat::{Os, Tables};
use crate::version::Version;

use super::CudnnPick;

/// A named cuDNN release the tables cannot give.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CudnnVersionError {
    #[error("no cuDNN {0} in the tables")]
    Unknown(Version),
    #[error("cuDNN {version} has no {} archive for CUDA {cuda_major}", os.as_str())]
    NoArchive {
        version: Version,
        os: Os,
        cuda_major: u32,
    },
}

impl CudnnVersionError {
    /// What to do about it, for the command line's `hint:` line.
    pub fn hint(&self) -> crate::message::Message {
        match self {
            CudnnVersionError::Unknown(_) => crate::msg!("hint_cudnn_version_unknown"),
            CudnnVersionError::NoArchive { .. } => crate::msg!("hint_cudnn_version_no_archive"),
        }
    }
}

/// The newest cuDNN release matching `v` (a prefix: `9`, `9.1`, `9.1.0`) with an archive
/// for `os` and CUDA `cuda_major`, as a pick.
pub fn cudnn_by_version(
    tables: &Tables,
    os: Os,
    cuda_major: u32,
    v: &Version,
) -> Result<CudnnPick, CudnnVersionError> {
    let r = tables
        .cudnn
        .releases
        .iter()
        .rfind(|r| r.version.parts().starts_with(v.parts()))
        .ok_or_else(|| CudnnVersionError::Unknown(v.clone()))?;
    let a = r
        .archive(os, cuda_major)
        .ok_or_else(|| CudnnVersionError::NoArchive {
            version: r.version.clone(),
            os,
            cuda_major,
        })?;
    Ok(CudnnPick::new(r, a, r.confirmed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_picks_the_last_matching_release_for_that_cuda_major() {
        let t = Tables::embedded().unwrap();
        let last = t
            .cudnn
            .releases
            .iter()
            .rfind(|r| r.archive(Os::Linux, 12).is_some())
            .expect("a cuDNN for CUDA 12 in the tables");
        let major: Version = last.version.parts()[0].to_string().parse().unwrap();
        let pick = cudnn_by_version(&t, Os::Linux, 12, &major).unwrap();
        assert!(pick.version.parts().starts_with(major.parts()));
        assert_eq!(pick.cuda_major, 12);
        let again = cudnn_by_version(&t, Os::Linux, 12, &pick.version).unwrap();
        assert_eq!(
            (again.version, again.archive_url),
            (pick.version, pick.archive_url)
        );
    }

    #[test]
    fn an_unknown_release_or_a_missing_archive_is_refused() {
        let t = Tables::embedded().unwrap();
        let v: Version = "1.2".parse().unwrap();
        assert_eq!(
            cudnn_by_version(&t, Os::Linux, 12, &v).unwrap_err(),
            CudnnVersionError::Unknown(v.clone())
        );
        let r = &t.cudnn.releases[0];
        let e = cudnn_by_version(&t, Os::Windows, 99, &r.version).unwrap_err();
        assert!(
            matches!(&e, CudnnVersionError::NoArchive { cuda_major: 99, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("archive for CUDA 99"), "{e}");
        assert_eq!(e.hint().key, "hint_cudnn_version_no_archive");
    }
}
