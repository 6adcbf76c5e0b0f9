//! Authenticode: who signed a Windows executable. NVIDIA publishes no hash for its driver
//! installers, so the signature is what is checked before one runs (signer "NVIDIA
//! Corporation", chain trusted by Windows).
//!
//! Contract for #18 (the driver step calls `check` then `require_nvidia`); the real
//! WinVerifyTrust call is Windows-only.

use std::path::Path;

/// The signer NVIDIA's installers carry.
pub const NVIDIA: &str = "NVIDIA Corporation";

/// What the OS says of a file's signature.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Signature {
    /// Signed, and the chain is trusted; `signer` is the signing certificate's subject name.
    Trusted { signer: String },
    /// No signature at all.
    Unsigned,
    /// Signed, but the OS does not trust it (tampered, expired, revoked, unknown root):
    /// the OS's code.
    Untrusted { code: i64 },
    /// This OS cannot check Authenticode (only Windows can).
    Unavailable,
}

/// Why a file is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the file is not signed")]
    Unsigned,
    #[error("the file's signature is not valid (code {code:#x})")]
    Untrusted { code: i64 },
    #[error("the file is signed by {signer}, not by NVIDIA Corporation")]
    WrongSigner { signer: String },
    #[error("signatures can only be checked on Windows")]
    Unavailable,
}

/// Only a trusted signature by NVIDIA Corporation passes.
pub fn require_nvidia(sig: &Signature) -> Result<(), SignatureError> {
    match sig {
        Signature::Trusted { signer } if signer == NVIDIA => Ok(()),
        Signature::Trusted { signer } => Err(SignatureError::WrongSigner {
            signer: signer.clone(),
        }),
        Signature::Unsigned => Err(SignatureError::Unsigned),
        Signature::Untrusted { code } => Err(SignatureError::Untrusted { code: *code }),
        Signature::Unavailable => Err(SignatureError::Unavailable),
    }
}

/// The signature of `path`. `sandbox`: a `--root` target on a host that is not Windows,
/// where the driver stand-ins of the tests say who "signed" them in a last line
/// `# stand-in signature: <signer>` (a Windows host always asks Windows).
pub fn check(path: &Path, sandbox: bool) -> Signature {
    #[cfg(windows)]
    {
        let _ = (path, sandbox);
        // TODO(#18): WinVerifyTrust.
        Signature::Unavailable
    }
    #[cfg(not(windows))]
    {
        if sandbox {
            standin(path)
        } else {
            Signature::Unavailable
        }
    }
}

/// The test stand-ins' "signature": a last line `# stand-in signature: <signer>` (read from
/// the file's last 4 KiB; a signed stand-in is a trusted one). No such line: unsigned.
#[cfg(not(windows))]
fn standin(path: &Path) -> Signature {
    use std::io::{Read, Seek, SeekFrom};
    const PREFIX: &str = "# stand-in signature: ";
    let Ok(mut f) = std::fs::File::open(path) else {
        return Signature::Unsigned;
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let mut tail = Vec::new();
    if f.seek(SeekFrom::Start(len.saturating_sub(4096))).is_err()
        || f.read_to_end(&mut tail).is_err()
    {
        return Signature::Unsigned;
    }
    let text = String::from_utf8_lossy(&tail);
    match text
        .trim_end()
        .lines()
        .last()
        .and_then(|l| l.strip_prefix(PREFIX))
    {
        Some(signer) if !signer.trim().is_empty() => Signature::Trusted {
            signer: signer.trim().to_string(),
        },
        _ => Signature::Unsigned,
    }
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn a_stand_in_is_signed_by_its_last_line_only_in_a_sandbox() {
        let d = tempfile::tempdir().unwrap();
        let signed = d.path().join("signed.exe");
        std::fs::write(
            &signed,
            "#!/bin/sh\nexit 0\n# stand-in signature: NVIDIA Corporation\n",
        )
        .unwrap();
        let sig = check(&signed, true);
        assert_eq!(
            sig,
            Signature::Trusted {
                signer: NVIDIA.into()
            }
        );
        assert_eq!(require_nvidia(&sig), Ok(()));
        // Off a sandbox, no file is trusted on its own word.
        assert_eq!(check(&signed, false), Signature::Unavailable);
        let other = d.path().join("other.exe");
        std::fs::write(&other, "#!/bin/sh\n# stand-in signature: Someone Else\n").unwrap();
        assert!(matches!(
            require_nvidia(&check(&other, true)),
            Err(SignatureError::WrongSigner { .. })
        ));
        // The line must be the last one.
        let early = d.path().join("early.exe");
        std::fs::write(&early, "# stand-in signature: NVIDIA Corporation\nexit 0\n").unwrap();
        assert_eq!(check(&early, true), Signature::Unsigned);
        assert_eq!(
            check(&d.path().join("missing.exe"), true),
            Signature::Unsigned
        );
    }
}
