//! cuda-setup's two front ends over the UI-free core (`cuda_setup_core`): the CLI
//! (`cli`) and the wizard (`ui`). Neither decides anything the core can decide.

pub mod cli;
pub mod ui;
/// Clap value parsers for the core's enums, shared by the CLI and the wizard's flags.
pub(crate) mod values;
