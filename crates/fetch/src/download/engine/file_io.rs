//! The file writer: positioned writes and reads on the part file, and the free space
//! a download needs.

use super::*;

/// Free bytes where `dest` goes. Debug builds let a test pretend the disk is small
/// (`CUDA_SETUP_TEST_FREE_SPACE`, in bytes); release builds ignore it.
pub(super) fn free_space(dest: &Path) -> Option<u64> {
    #[cfg(debug_assertions)]
    if let Some(n) = std::env::var("CUDA_SETUP_TEST_FREE_SPACE")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Some(n);
    }
    crate::platform::free_space(dest.parent().unwrap_or(Path::new("."))).ok()
}

/// Refuses early when the target volume cannot hold the file.
pub(super) fn check_space(dest: &Path, needed: u64) -> Result<(), DownloadError> {
    match free_space(dest) {
        Some(free) if free < needed => Err(DownloadError::DiskFull {
            path: dest.to_path_buf(),
            needed,
            free,
        }),
        _ => Ok(()),
    }
}

pub(in crate::download) fn disk_err(path: &Path, e: std::io::Error, needed: u64) -> DownloadError {
    if crate::platform::is_disk_full(&e) {
        DownloadError::DiskFull {
            path: path.to_path_buf(),
            needed,
            free: 0,
        }
    } else {
        io_err(path, e)
    }
}

#[cfg(unix)]
pub(super) fn write_at(f: &File, buf: &[u8], off: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, buf, off)
}

#[cfg(windows)]
pub(super) fn write_at(f: &File, mut buf: &[u8], mut off: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(f, buf, off)?;
        buf = &buf[n..];
        off += n as u64;
    }
    Ok(())
}

#[cfg(unix)]
pub(super) fn read_at(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, off)
}

#[cfg(windows)]
pub(super) fn read_at(f: &File, mut buf: &mut [u8], mut off: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(f, buf, off)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        off += n as u64;
    }
    Ok(())
}
