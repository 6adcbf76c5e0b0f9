//! cuda-setup's UI-free core: from "the GPU idles" to a verified NVIDIA GPU stack.
//!
//! Detection, tables, recommendation, plans, steps and their executor, cuDNN, downloads,
//! the wheels method, repair, verify and the message catalogues. Nothing here draws a
//! window or writes to a terminal: the front ends (the `cuda-setup` package's CLI and
//! wizard) render what this crate returns, and the compiler keeps it that way — this
//! crate does not depend on clap, eframe or egui.

pub mod bundle;
pub mod compat;
pub mod cudnn;
pub mod detect;
pub mod download;
pub mod error;
pub mod i18n;
pub mod lock;
pub mod message;
pub mod panics;
pub mod plan;
pub mod platform;
pub mod recommend;
pub mod refresh;
pub mod repair;
pub mod run;
pub mod safe_path;
pub mod state_file;
pub mod steps;
pub mod target;
pub mod verify;
pub mod version;
pub mod wheels;
