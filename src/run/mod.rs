//! The executor: runs a plan's steps on a worker thread, sends events over a channel
//! (the GUI draws from them, the CLI prints them), honours cancel, journals each
//! finished step so a rerun after a kill skips it, and writes a log file per run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::download::Cancel;
use crate::plan::Plan;
use crate::steps::{self, Ctx, StepEvent, StepOutcome};
use crate::target::Target;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    Started {
        index: usize,
        name: &'static str,
    },
    Step {
        index: usize,
        event: StepEvent,
    },
    Finished {
        index: usize,
        name: &'static str,
        outcome: StepOutcome,
        skipped: bool,
    },
    Failed {
        index: usize,
        name: &'static str,
        kind: &'static str,
        error: String,
        hint: String,
    },
    Done(Box<RunReport>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Done,
    /// Done in an earlier, interrupted run (the journal says so).
    DoneBefore,
    Failed,
    Cancelled,
    NotRun,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    pub name: &'static str,
    pub status: StepStatus,
    pub changed: bool,
    pub detail: String,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub plan: Plan,
    pub steps: Vec<StepReport>,
    /// Something on the machine changed (Ansible's "changed").
    pub changed: bool,
    pub reboot_required: bool,
    pub cancelled: bool,
    pub failure: Option<Failure>,
    pub log_file: Option<PathBuf>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub step: &'static str,
    /// `StepError::kind`: what went wrong, as a stable word.
    pub kind: &'static str,
    pub error: String,
    pub hint: String,
    /// `busy`: what the other cuda-setup is working on, and its process id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy: Option<crate::lock::Busy>,
}

impl RunReport {
    pub fn ok(&self) -> bool {
        self.failure.is_none() && !self.cancelled
    }
}

/// Which steps of which plan are done (a plan is identified by its JSON).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Journal {
    plan: String,
    done: Vec<usize>,
}

fn journal_path(target: &Target) -> PathBuf {
    target.state_dir().join("install-journal.json")
}

/// The plan of an install that a kill interrupted, if its journal is still there.
pub fn interrupted_plan(target: &Target) -> Option<Plan> {
    let j: Journal = serde_json::from_slice(&std::fs::read(journal_path(target)).ok()?).ok()?;
    serde_json::from_str(&j.plan).ok()
}

fn load_journal(target: &Target, plan_json: &str) -> Vec<usize> {
    std::fs::read(journal_path(target))
        .ok()
        .and_then(|b| serde_json::from_slice::<Journal>(&b).ok())
        .filter(|j| j.plan == plan_json)
        .map(|j| j.done)
        .unwrap_or_default()
}

fn save_journal(target: &Target, plan_json: &str, done: &[usize]) {
    let path = journal_path(target);
    let tmp = path.with_extension("json.tmp");
    let j = Journal {
        plan: plan_json.to_string(),
        done: done.to_vec(),
    };
    if std::fs::write(&tmp, serde_json::to_vec(&j).unwrap_or_default()).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}

/// A log file per run, named in every error.
struct Log(Mutex<Option<std::fs::File>>);

impl Log {
    fn open(dir: &Path) -> (Log, Option<PathBuf>) {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let path = dir.join(format!("install-{secs}-{}.log", std::process::id()));
        let file = std::fs::create_dir_all(dir)
            .ok()
            .and_then(|_| std::fs::File::create(&path).ok());
        let ok = file.is_some();
        (Log(Mutex::new(file)), ok.then_some(path))
    }

    fn line(&self, text: &str) {
        if let Some(f) = self.0.lock().unwrap().as_mut() {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let _ = writeln!(f, "[{secs:.3}] {text}");
        }
    }
}

/// Runs `plan` on a worker thread; events arrive on the returned channel, the last one
/// being `Done`.
pub fn spawn(plan: Plan, target: Target, cancel: Cancel) -> Receiver<RunEvent> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let report = execute(&plan, &target, &cancel, &tx);
        let _ = tx.send(RunEvent::Done(Box::new(report)));
    });
    rx
}

/// Runs `plan` here, calling `on_event` for each event; returns the report.
pub fn run_blocking(
    plan: &Plan,
    target: &Target,
    cancel: &Cancel,
    on_event: &mut dyn FnMut(RunEvent),
) -> RunReport {
    let rx = spawn(plan.clone(), target.clone(), cancel.clone());
    let mut report = None;
    for e in rx {
        if let RunEvent::Done(r) = &e {
            report = Some((**r).clone());
        }
        on_event(e);
    }
    report.expect("the worker always ends with Done")
}

/// The target's lock, held for the whole run (install, repair's fixes, the wizard's
/// install): one writer per target. Taken before the journal is read, so a run never
/// takes another's live journal for an interrupted one.
fn lock(target: &Target) -> Result<crate::lock::Lock, steps::StepError> {
    let state = target.state_dir();
    let folder = target.root.clone().unwrap_or_else(|| state.clone());
    let file = state.join(crate::lock::FILE);
    crate::lock::acquire(&folder, &file).map_err(|e| match e {
        crate::lock::LockError::Busy(b) => steps::StepError::Busy(b),
        crate::lock::LockError::Io { path, detail } => steps::StepError::Io { path, detail },
        crate::lock::LockError::Cancelled => steps::StepError::Cancelled,
    })
}

fn execute(plan: &Plan, target: &Target, cancel: &Cancel, tx: &Sender<RunEvent>) -> RunReport {
    let start = Instant::now();
    let plan_json = serde_json::to_string(plan).expect("serialisable");
    let held = lock(target);
    let mut done = match &held {
        Ok(_) => load_journal(target, &plan_json),
        Err(_) => Vec::new(),
    };
    let (log, log_file) = Log::open(&target.logs_dir());
    log.line(&format!("plan: {plan_json}"));
    if !done.is_empty() {
        log.line(&format!(
            "resuming an interrupted run; steps already done: {done:?}"
        ));
    }
    let mut report = RunReport {
        plan: plan.clone(),
        steps: plan
            .steps
            .iter()
            .map(|s| StepReport {
                name: s.name(),
                status: StepStatus::NotRun,
                changed: false,
                detail: String::new(),
                elapsed_ms: 0,
            })
            .collect(),
        changed: false,
        reboot_required: false,
        cancelled: false,
        failure: None,
        log_file: log_file.clone(),
        elapsed_ms: 0,
    };
    if let Err(e) = &held {
        // Nothing ran: the failure is the first step's, which could not start.
        let name = plan.steps.first().map_or("preflight", |s| s.name());
        log.line(&format!("not started: {e}"));
        if let Some(r) = report.steps.first_mut() {
            r.status = StepStatus::Failed;
            r.detail = e.to_string();
        }
        report.failure = Some(Failure {
            step: name,
            kind: e.kind(),
            error: e.to_string(),
            hint: e.hint(),
            busy: e.busy().cloned(),
        });
        let _ = tx.send(RunEvent::Failed {
            index: 0,
            name,
            kind: e.kind(),
            error: e.to_string(),
            hint: e.hint(),
        });
    }
    let steps_to_run = if held.is_ok() { plan.steps.len() } else { 0 };
    for (index, step) in plan.steps.iter().enumerate().take(steps_to_run) {
        let name = step.name();
        // Verification always runs; other finished steps of an interrupted run do not.
        if done.contains(&index) && !matches!(step, steps::Step::Verify { .. }) {
            report.steps[index].status = StepStatus::DoneBefore;
            let _ = tx.send(RunEvent::Finished {
                index,
                name,
                outcome: StepOutcome {
                    changed: false,
                    detail: "done in an earlier run".into(),
                    reboot_required: false,
                },
                skipped: true,
            });
            continue;
        }
        if cancel.is_cancelled() {
            report.cancelled = true;
            report.steps[index].status = StepStatus::Cancelled;
            break;
        }
        let _ = tx.send(RunEvent::Started { index, name });
        log.line(&format!("step {index} {name}: started"));
        let t0 = Instant::now();
        let emit = |e: StepEvent| {
            if let StepEvent::Log { line } = &e {
                log.line(&format!("step {index} {name}: {line}"));
            }
            let _ = tx.send(RunEvent::Step { index, event: e });
        };
        let ctx = Ctx {
            target,
            cancel,
            emit: &emit,
        };
        let result = steps::run(step, &ctx);
        let r = &mut report.steps[index];
        r.elapsed_ms = t0.elapsed().as_millis() as u64;
        match result {
            Ok(outcome) => {
                log.line(&format!(
                    "step {index} {name}: done (changed: {}) {}",
                    outcome.changed, outcome.detail
                ));
                r.status = StepStatus::Done;
                r.changed = outcome.changed;
                r.detail = outcome.detail.clone();
                report.changed |= outcome.changed;
                report.reboot_required |= outcome.reboot_required;
                done.push(index);
                save_journal(target, &plan_json, &done);
                let _ = tx.send(RunEvent::Finished {
                    index,
                    name,
                    outcome,
                    skipped: false,
                });
            }
            Err(steps::StepError::Cancelled) => {
                log.line(&format!("step {index} {name}: cancelled"));
                r.status = StepStatus::Cancelled;
                report.cancelled = true;
                break;
            }
            Err(e) => {
                let (error, hint) = (e.to_string(), e.hint());
                log.line(&format!(
                    "step {index} {name}: FAILED: {error} (hint: {hint})"
                ));
                r.status = StepStatus::Failed;
                r.detail = error.clone();
                report.failure = Some(Failure {
                    step: name,
                    kind: e.kind(),
                    error: error.clone(),
                    hint: hint.clone(),
                    busy: e.busy().cloned(),
                });
                let _ = tx.send(RunEvent::Failed {
                    index,
                    name,
                    kind: e.kind(),
                    error,
                    hint,
                });
                break;
            }
        }
    }
    crate::lock::test_pause("run_end");
    if report.ok() {
        // Complete: the next run starts afresh (and finds everything in place).
        let _ = std::fs::remove_file(journal_path(target));
    }
    report.elapsed_ms = start.elapsed().as_millis() as u64;
    log.line(&format!(
        "finished: ok={} changed={} reboot={}",
        report.ok(),
        report.changed,
        report.reboot_required
    ));
    report
}
