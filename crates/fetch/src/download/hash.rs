//! SHA-256 and MD5 together in one pass (NVIDIA publishes MD5 lists; we key on SHA-256).

use std::io::Read;
use std::path::Path;

use md5::Md5;
use serde::Serialize;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Digests {
    pub sha256: String,
    pub md5: String,
}

/// Both hashes, updated together. MD5 only when asked for (it costs as much again).
#[derive(Clone)]
pub struct Hasher {
    sha256: Sha256,
    md5: Option<Md5>,
}

impl Hasher {
    pub fn new(with_md5: bool) -> Self {
        Hasher {
            sha256: Sha256::new(),
            md5: with_md5.then(Md5::new),
        }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.sha256.update(bytes);
        if let Some(m) = &mut self.md5 {
            m.update(bytes);
        }
    }

    pub fn finish(self) -> Digests {
        Digests {
            sha256: hex(&self.sha256.finalize()),
            md5: self.md5.map(|m| hex(&m.finalize())).unwrap_or_default(),
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Hashes a whole file (SHA-256 and MD5). Opened without blocking and judged on the
/// handle: a FIFO or a device planted at the name is an error, never read for ever.
pub fn hash_file(path: &Path) -> std::io::Result<(Digests, u64)> {
    match crate::place::open_regular_with(path, u64::MAX, true) {
        Ok(Some((f, _))) => hash_reader(f),
        Ok(None) => Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: not found", path.display()),
        )),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// Hashes everything `f` reads (an open handle: what was checked is what is hashed).
pub fn hash_reader(mut f: impl Read) -> std::io::Result<(Digests, u64)> {
    let mut h = Hasher::new(true);
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((h.finish(), n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        let mut h = Hasher::new(true);
        h.update(b"abc");
        let d = h.finish();
        assert_eq!(
            d.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.md5, "900150983cd24fb0d6963f7d28e17f72");
    }
}
