//! What a step is given (`Ctx`) and what it reports as it runs and when done.

use serde::Serialize;

use crate::download::Cancel;
use crate::message::Message;
use crate::msg;
use crate::target::Target;

/// What a step reports as it runs.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepEvent {
    Progress {
        done: u64,
        total: Option<u64>,
        bytes_per_sec: f64,
        eta_secs: Option<f64>,
        /// The host serving a download's bytes (`host[:port]`).
        #[serde(skip_serializing_if = "Option::is_none")]
        source: Option<String>,
    },
    /// A line for the log and the progress view: a step's own words, or a program's
    /// output quoted as it is (`step_output`).
    Log { line: Message },
}

impl StepEvent {
    /// A program's output line, quoted as it is.
    pub fn output(line: String) -> StepEvent {
        StepEvent::Log {
            line: msg!("step_output", line = line),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct StepOutcome {
    pub changed: bool,
    /// What the step did, in words front ends render in the user's language.
    pub detail: Message,
    pub reboot_required: bool,
}

/// What every step gets.
pub struct Ctx<'a> {
    pub target: &'a Target,
    pub cancel: &'a Cancel,
    pub emit: &'a (dyn Fn(StepEvent) + Sync),
}
