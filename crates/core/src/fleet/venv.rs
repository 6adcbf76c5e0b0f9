//! A profile's `[pytorch] venv` that does not exist yet (#36 review 4). `state set` does
//! not create it: which Python a lab's venv is built from (its version, its place) is the
//! admin's choice, made once per PC; without it pip has nothing to start.

use std::path::PathBuf;

use super::profile::{Profile, PythonAt};
use crate::compat::Os;
use crate::message::Message;
use crate::msg;
use crate::shown;

/// The venv and the interpreter it lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: no {}", venv.display(), python.display())]
pub struct VenvMissing {
    pub venv: PathBuf,
    pub python: PathBuf,
}

impl VenvMissing {
    pub fn message(&self) -> Message {
        msg!(
            "fleet_err_venv_missing",
            venv = shown::path(&self.venv),
            python = shown::path(&self.python)
        )
    }

    /// How to make it, in the words of the PC's OS.
    pub fn hint(&self, os: Os) -> Message {
        let venv = shown::path(&self.venv);
        match os {
            Os::Windows => msg!("hint_fleet_venv_missing_windows", venv = venv),
            Os::Linux => msg!("hint_fleet_venv_missing_linux", venv = venv),
        }
    }
}

/// Err when `profile` puts PyTorch into a venv whose interpreter is not there on `os`.
/// (A venv's interpreter is usually a link to the Python it was made from: followed.)
pub fn check(profile: &Profile, os: Os) -> Result<(), VenvMissing> {
    let Some(t) = &profile.pytorch else {
        return Ok(());
    };
    let PythonAt::Venv(venv) = &t.python else {
        return Ok(());
    };
    match t.python.interpreter(os) {
        Some(python) if !python.exists() => Err(VenvMissing {
            venv: venv.clone(),
            python,
        }),
        _ => Ok(()),
    }
}
