//! Linux: no silent driver installer of ours. Which package gives the needed driver
//! branch on the detected distribution, the exact command, and whether Secure Boot will
//! ask to enrol a key.
//!
//! Contract for #18 (filled in by the Linux-driver work).

use crate::platform::Host;
use crate::version::Version;

/// What to tell a Linux user whose driver is missing or too old.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinuxDriverAdvice {
    /// The distribution as `/etc/os-release` names it (`PRETTY_NAME`), when known.
    pub distro: Option<String>,
    /// The package that provides the branch (`nvidia-driver-550`), when known.
    pub package: Option<String>,
    /// The exact commands, in order.
    pub commands: Vec<String>,
    /// Some(true): Secure Boot is on, and the new kernel module needs a key enrolled
    /// (MOK) at the next boot.
    pub secure_boot: Option<bool>,
    /// False when the package facts for this distribution are UNCONFIRMED.
    pub confirmed: bool,
}

/// The advice for a driver of at least `minimum` (None: any current one) on the host.
pub fn advice(host: &Host, minimum: Option<&Version>) -> Option<LinuxDriverAdvice> {
    let _ = (host, minimum);
    None
}
