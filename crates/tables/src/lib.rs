//! The compatibility tables (`compat-tables/*.toml`, embedded at build time, replaced by
//! a refresh's live copy when one is valid): which driver runs which CUDA, which cuDNN
//! and PyTorch builds exist for it, which GPU has which architecture. Pure data and its
//! validation; reading a live table is the only I/O (through `place`).

#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

// The base crate's modules, under the names the code has always used.
use cuda_setup_base::{message, msg, place, shown, version};

pub mod compat;
