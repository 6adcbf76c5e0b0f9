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

#[cfg(not(windows))]
fn standin(path: &Path) -> Signature {
    let _ = path;
    // TODO(#18): read the stand-in's last line.
    Signature::Unavailable
}
