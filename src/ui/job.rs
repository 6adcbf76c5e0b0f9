//! One background job's state, the same for every job the wizard tracks (detection, the
//! plan, a run, cuDNN's check, the doctor …): not started, running (with its cancel, where
//! the user can stop it), or done with its result. A job whose worker thread died (a bug of
//! ours) ends `Done` with an error made from the panic's message ([`Outcome::crashed`]), so
//! no page waits for an answer that never comes.

use cuda_setup_core::download::Cancel;
use cuda_setup_core::run::Failure;

#[derive(Debug, Default)]
pub enum Job<T> {
    #[default]
    Idle,
    Running {
        /// The job's cancel, for the jobs the user can stop.
        cancel: Option<Cancel>,
    },
    Done(T),
}

/// Where a job is, without its result: what tests and the app's busy checks ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Idle,
    Running,
    Done,
    /// Done, with an error (a crash among them).
    Failed,
}

/// A job's result: how a crash ends it, and whether it says the job failed.
pub trait Outcome {
    /// The result of a job whose worker thread panicked with `message`.
    fn crashed(message: &str) -> Self;
    fn failed(&self) -> bool;
}

impl<T, E: Outcome> Outcome for Result<T, E> {
    fn crashed(message: &str) -> Self {
        Err(E::crashed(message))
    }
    fn failed(&self) -> bool {
        self.is_err()
    }
}

/// Raw text, shown under "Details".
impl Outcome for String {
    fn crashed(message: &str) -> Self {
        message.to_string()
    }
    fn failed(&self) -> bool {
        true
    }
}

/// A step's failure, of kind `internal` (plain words: a bug of ours, please report it).
impl Outcome for Box<Failure> {
    fn crashed(message: &str) -> Self {
        Box::new(Failure::internal(message))
    }
    fn failed(&self) -> bool {
        true
    }
}

impl<T> Job<T> {
    /// Running, with nothing to cancel.
    pub fn started() -> Job<T> {
        Job::Running { cancel: None }
    }

    /// Running; `cancel` stops it.
    pub fn cancellable(cancel: Cancel) -> Job<T> {
        Job::Running {
            cancel: Some(cancel),
        }
    }

    pub fn is_running(&self) -> bool {
        matches!(self, Job::Running { .. })
    }

    pub fn is_idle(&self) -> bool {
        matches!(self, Job::Idle)
    }

    /// The result, once done.
    pub fn done(&self) -> Option<&T> {
        match self {
            Job::Done(t) => Some(t),
            _ => None,
        }
    }

    /// The running job's cancel (None when it has none, or does not run).
    pub fn cancel_token(&self) -> Option<&Cancel> {
        match self {
            Job::Running { cancel } => cancel.as_ref(),
            _ => None,
        }
    }

    /// Asks the running job to stop (it ends with its own result, saying so).
    pub fn cancel(&self) {
        if let Some(c) = self.cancel_token() {
            c.cancel();
        }
    }

    pub fn finish(&mut self, result: T) {
        *self = Job::Done(result);
    }
}

impl<T: Outcome> Job<T> {
    /// The worker thread running this job died: a running job ends with the crash as its
    /// error; one already done (a run's worker sends its failed report first) keeps its
    /// result. Whether it was running.
    pub fn crash(&mut self, message: &str) -> bool {
        let running = self.is_running();
        if running {
            *self = Job::Done(T::crashed(message));
        }
        running
    }

    pub fn status(&self) -> Status {
        match self {
            Job::Idle => Status::Idle,
            Job::Running { .. } => Status::Running,
            Job::Done(t) if t.failed() => Status::Failed,
            Job::Done(_) => Status::Done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_ends_a_running_job_with_its_error_and_leaves_a_done_one() {
        let mut j: Job<Result<u8, String>> = Job::cancellable(Cancel::default());
        assert_eq!(j.status(), Status::Running);
        j.cancel();
        assert!(j.cancel_token().unwrap().is_cancelled());
        assert!(j.crash("boom"));
        assert_eq!(j.done(), Some(&Err("boom".to_string())));
        assert_eq!(j.status(), Status::Failed);

        let mut done: Job<Result<u8, String>> = Job::Done(Ok(1));
        assert!(!done.crash("late"), "a result already given stays");
        assert_eq!(done.status(), Status::Done);
        let mut idle: Job<Result<u8, String>> = Job::Idle;
        assert!(!idle.crash("x") && idle.is_idle());
    }
}
