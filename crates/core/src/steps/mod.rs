//! The steps a plan is made of, each idempotent: run on a machine where it is already
//! done, it changes nothing and says so (`changed: false`).

mod assemble;
mod build_record;
mod cudnn_step;
mod download_step;
pub mod driver;
pub mod env;
mod error;
mod event;
mod failure;
pub mod installer_process;
mod pip;
pub mod preflight;
pub mod pypi_race;
mod run_step;
mod step;
pub mod toolkit;
pub mod torch_sources;
pub mod torch_wheel;
pub mod unreachable;
mod verify_step;

pub use assemble::{WheelStream, assemble_toolkit_streamed};
pub use cudnn_step::install_cudnn_ahead;
pub use error::StepError;
pub use event::{Ctx, StepEvent, StepOutcome};
pub use failure::FailureKind;
pub use run_step::run;
pub use step::{Artifact, DownloadSpec, Step, StepKind, title_key};
pub use verify_step::toolkit_missing;

use download_step::download_reporter;
