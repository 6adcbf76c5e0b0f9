//! Whether UEFI Secure Boot is on: then a kernel module built on the machine (DKMS,
//! akmods) loads only when signed with a key enrolled at boot (MOK).

use std::io::Read;

use crate::platform::Host;

/// The EFI global variable `SecureBoot`: 4 attribute bytes, then 1 value byte (1 = on).
const VARIABLE: &str = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

/// Some(true): on. Some(false): off, or a legacy BIOS (no `/sys/firmware/efi`), or UEFI
/// firmware without the variable. None: it cannot be told (efivarfs not mounted, the
/// variable unreadable or malformed).
pub fn state(host: &Host) -> Option<bool> {
    let var = host.system_path(VARIABLE);
    match std::fs::File::open(&var) {
        Ok(f) => {
            let mut bytes = Vec::new();
            // Read one byte more than the variable has, to tell a malformed one.
            f.take(6).read_to_end(&mut bytes).ok()?;
            match bytes.as_slice() {
                [_, _, _, _, value] => Some(*value == 1),
                _ => None,
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !host.system_path("/sys/firmware/efi").is_dir() {
                return Some(false);
            }
            // UEFI: an empty or missing efivars folder means efivarfs is not mounted.
            let vars = host.system_path("/sys/firmware/efi/efivars");
            let mounted = std::fs::read_dir(vars).is_ok_and(|mut d| d.next().is_some());
            mounted.then_some(false)
        }
        Err(_) => None,
    }
}
