//! Exit codes, one list for both front ends (documented in docs/cli.md). `install`'s
//! MSI codes (0 / 3010 / 1602 / 1603 / 1618) are its own and stay with it.

/// Success: something fits.
pub const OK: i32 = 0;
/// An error at run time (tables could not be loaded, I/O, no display for the wizard).
pub const ERROR: i32 = 1;
/// Bad command line or input values.
pub const USAGE: i32 = 2;
/// Blocked: nothing fits this machine (the blockers say why).
pub const BLOCKED: i32 = 3;
/// Another cuda-setup is working on the same folder (`install`: MSI's 1618).
pub const BUSY: i32 = 6;
