//! cuda-setup: from "the GPU idles" to a verified NVIDIA GPU stack.
//!
//! This library is the UI-free core: tables, recommendation, and (in later modules)
//! detection, planning and execution. The CLI (`cli`) and the GUI are thin front ends.

pub mod bundle;
pub mod cli;
pub mod compat;
pub mod cudnn;
pub mod detect;
pub mod download;
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
pub mod ui;
pub mod verify;
pub mod version;
pub mod wheels;
