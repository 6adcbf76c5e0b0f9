//! cuda-setup's lowest layer, which every other crate of the workspace builds on:
//! typed messages and the English and Chinese catalogue that renders them, versions,
//! the operating system and platform calls, and safe file access — places reached
//! through directory handles, bounded paths, state files, the single-instance lock and
//! the run log. It knows nothing of tables, the network, archives or the GPU: the
//! compiler keeps those above it (ARCHITECTURE.md, "Crates").

#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod error;
pub mod exit;
pub mod i18n;
pub mod locale;
pub mod lock;
pub mod log;
pub mod message;
pub mod os;
pub mod panics;
pub mod place;
pub mod platform;
pub mod safe_path;
pub mod shown;
pub mod stamp;
pub mod state_file;
pub mod units;
pub mod version;
