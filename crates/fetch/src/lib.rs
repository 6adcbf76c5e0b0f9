//! cuda-setup's network layer: the one HTTP client and its transport rules (https never
//! becomes http, pages stay on their host), resumable downloads that are verified
//! against a hash and fail over between mirrors, PyPI's index pages and wheel versions,
//! and the fetchers that refresh the compatibility tables from NVIDIA's and PyTorch's
//! servers. Nothing here decides what to install: the engine (`cuda-setup-core`) does.

#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

// The lower crates' modules, under the names the code has always used.
#[cfg(test)]
use cuda_setup_base::i18n;
use cuda_setup_base::{
    error, lock, message, msg, place, platform, safe_path, shown, stamp, state_file, units, version,
};
use cuda_setup_tables::compat;

pub mod download;
pub mod http;
pub mod proxy;
pub mod pypi;
pub mod refresh;
pub mod url;
