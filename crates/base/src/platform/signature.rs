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
        let _ = sandbox;
        wintrust::check(path)
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

impl SignatureError {
    /// What happened and what to do next, in plain words, for the front ends (the
    /// `Display` text above stays English, for logs).
    pub fn message(&self) -> crate::message::Message {
        match self {
            SignatureError::Unsigned => crate::msg!("driver_signature_unsigned"),
            SignatureError::Untrusted { code } => {
                crate::msg!("driver_signature_untrusted", code = format!("{code:#x}"))
            }
            SignatureError::WrongSigner { signer } => {
                crate::msg!("driver_signature_wrong_signer", signer = signer)
            }
            SignatureError::Unavailable => crate::msg!("driver_signature_unavailable"),
        }
    }
}

/// The marker a stand-in installer carries on its last line.
#[cfg(any(not(windows), test))]
const STANDIN_MARK: &str = "# stand-in signature:";

/// How much of a stand-in's end is read: the file is input, and may be huge.
#[cfg(any(not(windows), test))]
const STANDIN_TAIL: u64 = 4096;

/// A stand-in's "signature": its last line, read from at most its last 4 KiB.
#[cfg(any(not(windows), test))]
fn standin(path: &Path) -> Signature {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return Signature::Unsigned;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(STANDIN_TAIL);
    let mut tail = Vec::new();
    if f.seek(SeekFrom::Start(from)).is_err()
        || f.take(STANDIN_TAIL).read_to_end(&mut tail).is_err()
    {
        return Signature::Unsigned;
    }
    let text = String::from_utf8_lossy(&tail);
    let last = text
        .trim_end_matches(['\n', '\r'])
        .rsplit('\n')
        .next()
        .unwrap_or("");
    match last.trim_end_matches('\r').strip_prefix(STANDIN_MARK) {
        Some(signer) if !signer.trim().is_empty() => Signature::Trusted {
            signer: signer.trim().to_string(),
        },
        _ => Signature::Unsigned,
    }
}

/// The real check: WinVerifyTrust, then the signer's name from the same state data.
#[cfg(windows)]
mod wintrust {
    use std::os::windows::ffi::OsStrExt;
    use std::path::Path;

    use windows_sys::Win32::Foundation::{
        INVALID_HANDLE_VALUE, TRUST_E_NOSIGNATURE, TRUST_E_PROVIDER_UNKNOWN,
        TRUST_E_SUBJECT_FORM_UNKNOWN,
    };
    use windows_sys::Win32::Security::Cryptography::{
        CERT_NAME_SIMPLE_DISPLAY_TYPE, CertGetNameStringW,
    };
    use windows_sys::Win32::Security::WinTrust::{
        WINTRUST_ACTION_GENERIC_VERIFY_V2, WINTRUST_DATA, WINTRUST_FILE_INFO, WTD_CHOICE_FILE,
        WTD_REVOKE_NONE, WTD_STATEACTION_CLOSE, WTD_STATEACTION_VERIFY, WTD_UI_NONE,
        WTHelperGetProvSignerFromChain, WTHelperProvDataFromStateData, WinVerifyTrust,
    };

    use super::Signature;

    pub fn check(path: &Path) -> Signature {
        let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
        let mut file = WINTRUST_FILE_INFO {
            cbStruct: size_of::<WINTRUST_FILE_INFO>() as u32,
            pcwszFilePath: wide.as_ptr(),
            ..Default::default()
        };
        let mut data = WINTRUST_DATA {
            cbStruct: size_of::<WINTRUST_DATA>() as u32,
            dwUIChoice: WTD_UI_NONE,
            // No revocation look-up: it needs the network (CRL / OCSP), and our users are
            // often offline or behind a firewall that drops those requests, where
            // Windows would wait and then fail an installer that is fine. The chain to
            // a trusted root, the digest and the signer are still checked.
            fdwRevocationChecks: WTD_REVOKE_NONE,
            dwUnionChoice: WTD_CHOICE_FILE,
            dwStateAction: WTD_STATEACTION_VERIFY,
            ..Default::default()
        };
        data.Anonymous.pFile = &mut file;
        let mut action = WINTRUST_ACTION_GENERIC_VERIFY_V2;
        // SAFETY: `data` and `file` point at live locals (the path's UTF-16 with its NUL)
        // for the whole call; the state data it opens is closed below on every path.
        let status = unsafe {
            WinVerifyTrust(
                INVALID_HANDLE_VALUE, // no interactive user: never any UI
                &mut action,
                (&mut data as *mut WINTRUST_DATA).cast(),
            )
        };
        let sig = match status {
            0 => match signer(&data) {
                Some(signer) => Signature::Trusted { signer },
                // Trusted, yet no readable signer: not what the driver step can accept.
                None => Signature::Untrusted { code: 0 },
            },
            // No signature, or a file type Authenticode has no reader for (not a PE file).
            TRUST_E_NOSIGNATURE | TRUST_E_SUBJECT_FORM_UNKNOWN | TRUST_E_PROVIDER_UNKNOWN => {
                Signature::Unsigned
            }
            other => Signature::Untrusted {
                code: i64::from(other as u32),
            },
        };
        data.dwStateAction = WTD_STATEACTION_CLOSE;
        // SAFETY: closes the state data the call above opened (a no-op when it opened none).
        unsafe {
            WinVerifyTrust(
                INVALID_HANDLE_VALUE,
                &mut action,
                (&mut data as *mut WINTRUST_DATA).cast(),
            )
        };
        sig
    }

    /// The signing certificate's subject ("NVIDIA Corporation"), from the verified state.
    fn signer(data: &WINTRUST_DATA) -> Option<String> {
        // SAFETY: the state data is open (WinVerifyTrust succeeded and it is not yet
        // closed); every pointer read is checked for null before it is followed.
        unsafe {
            let prov = WTHelperProvDataFromStateData(data.hWVTStateData);
            if prov.is_null() {
                return None;
            }
            let sgnr = WTHelperGetProvSignerFromChain(prov, 0, 0, 0);
            if sgnr.is_null() || (*sgnr).csCertChain == 0 || (*sgnr).pasCertChain.is_null() {
                return None;
            }
            let cert = (*(*sgnr).pasCertChain).pCert;
            if cert.is_null() {
                return None;
            }
            let mut buf = [0u16; 256];
            let n = CertGetNameStringW(
                cert,
                CERT_NAME_SIMPLE_DISPLAY_TYPE,
                0,
                std::ptr::null(),
                buf.as_mut_ptr(),
                buf.len() as u32,
            ) as usize;
            // n counts the terminating NUL; 1 means an empty name.
            (n > 1).then(|| String::from_utf16_lossy(&buf[..n - 1]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_trusted_nvidia_signature_passes() {
        assert_eq!(
            require_nvidia(&Signature::Trusted {
                signer: NVIDIA.into()
            }),
            Ok(())
        );
        assert_eq!(
            require_nvidia(&Signature::Trusted {
                signer: "Nvidia Corp".into()
            }),
            Err(SignatureError::WrongSigner {
                signer: "Nvidia Corp".into()
            })
        );
        assert_eq!(
            require_nvidia(&Signature::Unsigned),
            Err(SignatureError::Unsigned)
        );
        assert_eq!(
            require_nvidia(&Signature::Untrusted { code: 0x800b0109 }),
            Err(SignatureError::Untrusted { code: 0x800b0109 })
        );
        assert_eq!(
            require_nvidia(&Signature::Unavailable),
            Err(SignatureError::Unavailable)
        );
    }

    #[test]
    fn errors_have_plain_words_and_english_logs() {
        let e = SignatureError::Untrusted { code: 0x800b0109 };
        assert_eq!(
            e.to_string(),
            "the file's signature is not valid (code 0x800b0109)"
        );
        let m = e.message();
        assert_eq!(m.key, "driver_signature_untrusted");
        assert_eq!(m.params.get("code").map(String::as_str), Some("0x800b0109"));
        let m = SignatureError::WrongSigner {
            signer: "Someone".into(),
        }
        .message();
        assert_eq!(m.params.get("signer").map(String::as_str), Some("Someone"));
        assert_eq!(
            SignatureError::Unsigned.message().key,
            "driver_signature_unsigned"
        );
        assert_eq!(
            SignatureError::Unavailable.message().key,
            "driver_signature_unavailable"
        );
    }

    fn file(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("driver.exe");
        std::fs::write(&p, bytes).unwrap();
        (d, p)
    }

    #[test]
    fn a_standin_says_who_signed_it_on_its_last_line() {
        let (_d, p) = file(b"MZ fake installer\n# stand-in signature: NVIDIA Corporation\n");
        assert_eq!(
            standin(&p),
            Signature::Trusted {
                signer: NVIDIA.into()
            }
        );
        let (_d, p) = file(b"MZ\r\n# stand-in signature: Evil Ltd\r\n");
        assert_eq!(
            standin(&p),
            Signature::Trusted {
                signer: "Evil Ltd".into()
            }
        );
        assert!(require_nvidia(&standin(&p)).is_err());
    }

    #[test]
    fn a_standin_without_its_trailer_is_unsigned() {
        // The marker, but not on the last line.
        let (_d, p) = file(b"# stand-in signature: NVIDIA Corporation\nMZ more bytes\n");
        assert_eq!(standin(&p), Signature::Unsigned);
        let (_d, p) = file(b"MZ plain installer");
        assert_eq!(standin(&p), Signature::Unsigned);
        let (_d, p) = file(b"# stand-in signature:   \n");
        assert_eq!(standin(&p), Signature::Unsigned);
        let (_d, p) = file(b"");
        assert_eq!(standin(&p), Signature::Unsigned);
        let missing = std::env::temp_dir().join("cuda-setup-no-such-installer.exe");
        assert_eq!(standin(&missing), Signature::Unsigned);
    }

    #[test]
    fn a_huge_standin_is_read_only_at_its_end() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.exe");
        // 64 MiB of zeros, sparse on disk, then the trailer: only the tail is read.
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(64 << 20).unwrap();
        drop(f);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, b"\n# stand-in signature: NVIDIA Corporation\n").unwrap();
        drop(f);
        assert_eq!(
            standin(&p),
            Signature::Trusted {
                signer: NVIDIA.into()
            }
        );
        // The marker must start the last line; a last line longer than the tail loses
        // its start, so it cannot name a signer either.
        let mut long = vec![b'x'; 8192];
        long.extend_from_slice(b"# stand-in signature: NVIDIA Corporation");
        let (_d, p) = file(&long);
        assert_eq!(standin(&p), Signature::Unsigned);
        let mut long = b"# stand-in signature: ".to_vec();
        long.extend(vec![b'x'; 8192]);
        let (_d, p) = file(&long);
        assert_eq!(standin(&p), Signature::Unsigned);
    }

    #[cfg(not(windows))]
    #[test]
    fn off_windows_only_a_sandbox_reads_standins() {
        let (_d, p) = file(b"MZ\n# stand-in signature: NVIDIA Corporation\n");
        assert_eq!(check(&p, false), Signature::Unavailable);
        assert_eq!(
            check(&p, true),
            Signature::Trusted {
                signer: NVIDIA.into()
            }
        );
    }
}
