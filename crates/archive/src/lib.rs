//! cuda-setup's archives and transactions: what it unpacks and copies into a toolkit,
//! journaled so that an interrupted run rolls back or forward and an uninstall puts every
//! file back — the cuDNN archive (checked entry by entry before a byte is copied), the
//! wheels method (a toolkit assembled from NVIDIA's pip wheels in the user's folder), and
//! the developer layout (import libraries, headers). Downloads come from the fetch
//! crate; which archive to install is the engine's decision.

#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
#![deny(clippy::undocumented_unsafe_blocks)]

// The lower crates' modules, under the names the code has always used.
use cuda_setup_base::{
    error, lock, message, msg, place, platform, safe_path, shown, stamp, state_file, version,
};
use cuda_setup_fetch::download;
use cuda_setup_tables::compat;

pub mod cudnn;
pub mod devlayout;
pub mod toolkit_version;
pub mod wheels;
