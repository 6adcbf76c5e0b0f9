//! The executor: runs a plan's steps on a worker thread, sends events over a channel
//! (the GUI draws from them, the CLI prints them), honours cancel, journals each
//! finished step so a rerun after a kill skips it, and writes a log file per run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use serde::{Deserialize, Serialize};

mod pipeline;

use crate::download::Cancel;
use crate::error::chain;
use crate::log::RunLog;
use crate::plan::Plan;
use crate::state_file::{self, Rejected};
use crate::steps::{self, Ctx, FailureKind, StepEvent, StepKind, StepOutcome};
use crate::target::Target;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    Started {
        index: usize,
        name: StepKind,
    },
    Step {
        index: usize,
        event: StepEvent,
    },
    Finished {
        index: usize,
        name: StepKind,
        outcome: StepOutcome,
        skipped: bool,
    },
    Failed {
        index: usize,
        name: StepKind,
        kind: FailureKind,
        /// The error with its causes ([`chain`]).
        error: String,
        /// What to do, for the command line (the wizard says its own words for `kind`);
        /// serialised as English text.
        #[serde(serialize_with = "english_text")]
        hint: crate::message::Message,
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
    pub name: StepKind,
    pub status: StepStatus,
    pub changed: bool,
    /// What the step did (English), or the error that stopped it.
    pub detail: String,
    /// What the step did as `{key, params}`, for a front end to say in its language
    /// (None for a step that did not finish).
    pub message: Option<crate::message::Message>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub plan: Plan,
    pub steps: Vec<StepReport>,
    /// Something on the machine changed (Ansible's "changed").
    pub changed: bool,
    pub reboot_required: bool,
    /// The run stopped after a step that needs a restart before the rest (the driver):
    /// the journal keeps the plan, and the next start resumes it ([`awaiting_restart`]).
    pub restart_pending: bool,
    pub cancelled: bool,
    pub failure: Option<Failure>,
    pub log_file: Option<PathBuf>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// The step that failed; None: no step of a plan — the executor itself (in JSON
    /// `"run"`, as before), or a command's own work (`download`, `cudnn`).
    #[serde(serialize_with = "step_or_run")]
    pub step: Option<StepKind>,
    /// `StepError::kind`: what went wrong, as a stable word.
    pub kind: FailureKind,
    /// The error with its causes, in English ([`chain`]).
    pub error: String,
    /// What to do about it, for the command line's `hint:` line in the user's language
    /// (it may name commands and flags; the wizard says its own words for `kind`). The
    /// JSON report holds it as English text, beside `error`.
    #[serde(serialize_with = "english_text")]
    pub hint: crate::message::Message,
    /// The parameters of the kind's plain words (`disk_full`: `folder`, `free`, `needed`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<&'static str, String>,
    /// The source that did not answer, when that stopped the step (#34): the wizard's
    /// words name it and the control that changes it; `hint` says the same for the
    /// command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<steps::unreachable::Unreachable>,
}

impl Failure {
    /// A failure of the executor itself (a panic outside any step, a worker gone).
    pub fn internal(message: &str) -> Failure {
        let e = steps::StepError::Internal {
            message: message.to_string(),
        };
        Failure::command(&e)
    }

    /// A failure outside a plan's run (the wizard's cuDNN page) in the step it stands for:
    /// the same kind, words and parameters as a step's.
    pub fn of(step: StepKind, e: &steps::StepError) -> Failure {
        Failure {
            step: Some(step),
            ..Failure::command(e)
        }
    }

    /// A command's own failure, no step of a plan (the CLI's `download` and `cudnn`): the
    /// same kind, words and parameters as a step's.
    pub fn command(e: &steps::StepError) -> Failure {
        Failure::in_plan(None, e, None)
    }

    /// A step's failure; the plan gives what a full drive needs when the step does not
    /// know.
    fn in_plan(step: Option<StepKind>, e: &steps::StepError, plan: Option<&Plan>) -> Failure {
        let params = failure_params(plan, e);
        // A full drive: how much to free, where it is known, says more than the error's own.
        let hint = match params.get("needed") {
            Some(needed) if e.kind() == FailureKind::DiskFull => {
                crate::msg!("hint_disk_full_needed", needed = needed)
            }
            _ => e.hint(),
        };
        Failure {
            step,
            kind: e.kind(),
            error: chain(e),
            hint,
            params,
            unreachable: e.unreachable().cloned(),
        }
    }

    /// A plan that could not be made for `step` (no hash for its file, a bad name in the
    /// tables, an unreadable bundle): the download failure it stands for.
    pub fn of_plan(step: StepKind, e: &crate::plan::PlanError) -> Failure {
        let kind = match e {
            crate::plan::PlanError::Wheels(w) => steps::StepError::Wheels(w.clone()).kind(),
            _ => FailureKind::DownloadOther,
        };
        Failure {
            step: Some(step),
            kind,
            error: chain(e),
            hint: e.hint(),
            params: BTreeMap::new(),
            unreachable: None,
        }
    }

    /// The catalogue key of the failed step's title (the executor's own failure: "a
    /// further step").
    pub fn step_title_key(&self) -> &'static str {
        self.step.map_or("ui_step_other", steps::title_key)
    }

    /// The stable word for where it failed: the step's name, or `run`.
    pub fn step_name(&self) -> &'static str {
        self.step.map_or("run", StepKind::as_str)
    }

    /// The plain-words sentence of what happened (`fail_<kind>`, with its parameters),
    /// for the front ends; what to do is [`Failure::hint`] on the command line, and the
    /// wizard's own words for the kind on its pages.
    pub fn sentence(&self) -> crate::message::Message {
        crate::message::Message {
            key: self.kind.fail_key(),
            params: self.params.clone(),
        }
    }
}

impl RunReport {
    pub fn ok(&self) -> bool {
        self.failure.is_none() && !self.cancelled
    }

    /// A report of `plan` with no step run yet.
    fn not_run(plan: &Plan, log_file: Option<PathBuf>) -> RunReport {
        RunReport {
            plan: plan.clone(),
            steps: plan
                .steps
                .iter()
                .map(|s| StepReport {
                    name: s.kind(),
                    status: StepStatus::NotRun,
                    changed: false,
                    detail: String::new(),
                    message: None,
                    elapsed_ms: 0,
                })
                .collect(),
            changed: false,
            reboot_required: false,
            restart_pending: false,
            cancelled: false,
            failure: None,
            log_file,
            elapsed_ms: 0,
        }
    }

    /// The report of a run whose executor died (`message` says how): nothing known done.
    pub fn crashed(plan: &Plan, message: &str) -> RunReport {
        RunReport {
            failure: Some(Failure::internal(message)),
            ..RunReport::not_run(plan, None)
        }
    }
}

/// Which steps of which plan are done (a plan is identified by its JSON).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Journal {
    plan: String,
    done: Vec<usize>,
    /// The run stopped after the driver for a restart; the rest of the plan waits.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    awaiting_restart: bool,
}

/// Where an install's journal lies: its presence means a run was interrupted.
pub fn journal_path(target: &Target) -> PathBuf {
    target.state_dir().join("install-journal.json")
}

/// The plan of an install that stopped for a restart (after the driver) and resumes now:
/// what the wizard opens on after the restart, and what `install` reruns.
/// The journal is judged as [`check_interrupted`] judges it (a rejected one is set aside).
pub fn awaiting_restart(target: &Target) -> Option<Plan> {
    match read_journal(target) {
        Ok(Some((j, plan))) if j.awaiting_restart => Some(plan),
        _ => None,
    }
}

/// The plan of an install that a kill interrupted, if its journal is still there and
/// passes [`check_interrupted`] (a rejected one is set aside). A plan waiting for a
/// restart is not interrupted: [`awaiting_restart`] gives it.
pub fn interrupted_plan(target: &Target) -> Option<Plan> {
    match read_journal(target) {
        Ok(Some((j, plan))) if !j.awaiting_restart => Some(plan),
        _ => None,
    }
}

/// The journal of an interrupted install, judged whole before a step of it is resumed:
/// bounded, parsed, and the plan in it one this target's `plan::build` could have made.
/// A rejected journal is set aside (`install-journal.json.rejected-<time>`), and nothing
/// of it runs.
pub fn check_interrupted(target: &Target) -> Result<Option<Plan>, Rejected> {
    read_journal(target).map(|j| j.map(|(_, plan)| plan))
}

fn read_journal(target: &Target) -> Result<Option<(Journal, Plan)>, Rejected> {
    let path = journal_path(target);
    let judge = || -> Result<Option<(Journal, Plan)>, Rejected> {
        let Some(bytes) = state_file::read(&path)? else {
            return Ok(None);
        };
        let bad = |why: String| Rejected::new(&path, why);
        // Resuming runs its steps (pip in a Python it names) with our rights: only a
        // journal this account or the administrators wrote is taken.
        if !crate::platform::written_by_us(&path, target.elevated).unwrap_or(false) {
            return Err(bad(
                "it was written by another user account, not by cuda-setup".into(),
            ));
        }
        let j: Journal = serde_json::from_slice(&bytes)
            .map_err(|e| bad(format!("not a record cuda-setup wrote: {e}")))?;
        let plan: Plan = serde_json::from_str(&j.plan)
            .map_err(|e| bad(format!("its plan is not one cuda-setup wrote: {e}")))?;
        check_plan(target, &plan, &j.done).map_err(bad)?;
        Ok(Some((j, plan)))
    };
    judge().map_err(Rejected::set_aside)
}

/// What holds for every plan `plan::build` (and repair) makes for `target`, so a journal
/// that breaks it was not written by us: the same target; downloads only into our
/// downloads folder (and the download cache); an installer or wheel run only if the plan
/// downloads (and so verifies) it; in a `--root` sandbox every folder written under the
/// root; elsewhere absolute, with no `..`.
fn check_plan(target: &Target, plan: &Plan, done: &[usize]) -> Result<(), String> {
    use crate::safe_path::under;
    use crate::steps::Step;
    if plan.root != target.root || plan.os != target.os {
        return Err("its plan is for another machine or --root".into());
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(i) = done
        .iter()
        .find(|&&i| i >= plan.steps.len() || !seen.insert(i))
    {
        return Err(format!(
            "step {i} is not a step of its plan, or listed twice"
        ));
    }
    // (file, hashed): only the driver's download has no hash, and only the driver step,
    // which checks the file's signature, may run it.
    let downloads: Vec<(&Path, bool)> = plan
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Download(d) => Some((d.dest.as_path(), !d.what.may_lack_hash())),
            _ => None,
        })
        .collect();
    let folder = |p: &Path| -> Result<(), String> {
        let ok = match &target.root {
            Some(root) => under(root, p).map(|_| ()).map_err(|e| e.to_string()),
            None if !p.is_absolute() => Err(format!("{} is not absolute", p.display())),
            None if p.components().any(|c| c == std::path::Component::ParentDir) => {
                Err(format!("{} climbs with ..", p.display()))
            }
            None => Ok(()),
        };
        ok.map_err(|why| format!("{}: {why}", p.display()))
    };
    let downloaded = |p: &Path| {
        if downloads.contains(&(p, true)) {
            Ok(())
        } else {
            Err(format!(
                "{} would run without being downloaded and verified",
                p.display()
            ))
        }
    };
    for (i, step) in plan.steps.iter().enumerate() {
        let r = match step {
            Step::Download(d) => under(&target.downloads_dir(), &d.dest)
                .map(|_| ())
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    let cache =
                        crate::platform::cache_dir(&target.host).filter(|_| target.root.is_none());
                    match &d.cache_dir {
                        Some(c) if Some(c) != cache.as_ref() => {
                            Err(format!("{} is not the download cache", c.display()))
                        }
                        _ => Ok(()),
                    }
                }),
            Step::InstallToolkit(t) => downloaded(&t.installer).and_then(|()| folder(&t.dir)),
            Step::InstallDriver(d) => {
                if downloads.iter().any(|(f, _)| *f == d.installer.as_path()) {
                    Ok(())
                } else {
                    Err(format!(
                        "{} would run without being downloaded",
                        d.installer.display()
                    ))
                }
            }
            Step::AssembleToolkit(a) => a
                .wheels
                .iter()
                .try_for_each(|w| downloaded(w))
                .and_then(|()| folder(&a.dir)),
            Step::InstallCudnn { cuda_dir, .. }
            | Step::ConfigureEnv { cuda_dir, .. }
            | Step::RecoverCudnn { cuda_dir }
            | Step::Verify { cuda_dir, .. } => folder(cuda_dir),
            Step::RecoverToolkit { dir } | Step::CompleteToolkit { dir, .. } => folder(dir),
            Step::Preflight(_) | Step::InstallTorch { .. } | Step::SetEnv { .. } => Ok(()),
        };
        r.map_err(|why| format!("step {i} ({}): {why}", step.kind()))?;
    }
    Ok(())
}

/// The steps of `plan_json` a killed run finished; none when the journal is another
/// plan's, or was rejected (then set aside, and the run starts from the first step —
/// steps are idempotent, so that only costs time).
/// The steps an interrupted run of this same plan finished. Plans are compared as plans,
/// not as text: a journal an older version wrote (notes as English sentences, which no
/// longer load) still resumes the plan it holds.
fn load_journal(target: &Target, plan: &Plan) -> (Vec<usize>, Option<Rejected>) {
    match read_journal(target) {
        Ok(Some((j, saved))) if saved == *plan => (j.done, None),
        Ok(_) => (Vec::new(), None),
        Err(r) => (Vec::new(), Some(r)),
    }
}

fn save_journal(target: &Target, plan_json: &str, done: &[usize], awaiting_restart: bool) {
    let j = Journal {
        plan: plan_json.to_string(),
        done: done.to_vec(),
        awaiting_restart,
    };
    let _ = state_file::write(
        &journal_path(target),
        &serde_json::to_vec(&j).unwrap_or_default(),
    );
}

/// Runs `plan` on a worker thread; events arrive on the returned channel, the last one
/// being `Done`.
pub fn spawn(plan: Plan, target: Target, cancel: Cancel) -> Events {
    let (tx, rx) = channel();
    let for_thread = plan.clone();
    std::thread::spawn(move || {
        let plan = for_thread;
        // Steps are caught one by one; this catches the executor's own bookkeeping.
        let report = crate::panics::catch(|| execute(&plan, &target, &cancel, &tx))
            .unwrap_or_else(|p| RunReport::crashed(&plan, &p.message));
        let _ = tx.send(RunEvent::Done(Box::new(report)));
    });
    Events {
        rx,
        plan: Some(plan),
    }
}

/// A run's events; the last is always `Done` — a failed report of its own when the
/// executor's thread ended without one — so no front end waits for ever.
pub struct Events {
    rx: Receiver<RunEvent>,
    /// Until `Done` is seen: the plan, for the report of a run that ended without one.
    plan: Option<Plan>,
}

impl Iterator for Events {
    type Item = RunEvent;

    fn next(&mut self) -> Option<RunEvent> {
        match self.rx.recv() {
            Ok(e) => {
                if matches!(e, RunEvent::Done(_)) {
                    self.plan = None;
                }
                Some(e)
            }
            Err(_) => self.plan.take().map(|plan| {
                RunEvent::Done(Box::new(RunReport::crashed(
                    &plan,
                    "the install worker stopped without a report",
                )))
            }),
        }
    }
}

/// Runs `plan` here, calling `on_event` for each event; returns the report.
pub fn run_blocking(
    plan: &Plan,
    target: &Target,
    cancel: &Cancel,
    on_event: &mut dyn FnMut(RunEvent),
) -> RunReport {
    let mut report = None;
    for e in spawn(plan.clone(), target.clone(), cancel.clone()) {
        if let RunEvent::Done(r) = &e {
            report = Some((**r).clone());
        }
        on_event(e);
    }
    report.unwrap_or_else(|| RunReport::crashed(plan, "the install worker sent no report"))
}

/// The target's lock, held for the whole run (install, repair's fixes, the wizard's
/// install): one writer per target. Taken before the journal is read, so a run never
/// takes another's live journal for an interrupted one.
fn lock(target: &Target) -> Result<crate::lock::Lock, steps::StepError> {
    // The state folder first: ours (not a link, no other account can write it), before
    // anything of ours is read from it or written into it.
    let held = target
        .state()
        .map_err(|e| steps::StepError::io(&target.state_dir(), e))?;
    // Our downloads folder too: a link or a foreign folder planted at its name is set
    // aside now, so the downloads go into a folder of ours (the download itself refuses
    // a linked folder, as it would any `--out`).
    held.sub("downloads", true)
        .map_err(|e| steps::StepError::io(&target.downloads_dir(), e))?;
    let state = held.path().to_path_buf();
    let folder = target.root.clone().unwrap_or_else(|| state.clone());
    let file = state.join(crate::lock::FILE);
    crate::lock::acquire(&folder, &file).map_err(|e| match e {
        crate::lock::LockError::Busy(b) => steps::StepError::Busy(b),
        // The lock keeps its I/O error as text; it becomes the cause here.
        crate::lock::LockError::Io { path, detail } => steps::StepError::Io {
            path,
            source: crate::error::cause(std::io::Error::other(detail)),
        },
        crate::lock::LockError::Cancelled => steps::StepError::Cancelled,
    })
}

/// What the pipeline hands a step besides the plan's words ([`pipeline`]).
pub(super) enum Feed<'a> {
    None,
    /// The assembly's wheels, as their downloads are verified.
    Wheels(steps::WheelStream<'a>),
    /// The cuDNN install, started before its toolkit is in place: waits for it, and
    /// says whether it came.
    ToolkitReady(&'a (dyn Fn() -> bool + Sync)),
}

fn execute(plan: &Plan, target: &Target, cancel: &Cancel, tx: &Sender<RunEvent>) -> RunReport {
    let start = Instant::now();
    let plan_json = serde_json::to_string(plan).expect("serialisable");
    let held = lock(target);
    let (mut done, rejected) = match &held {
        Ok(_) => load_journal(target, plan),
        Err(_) => (Vec::new(), None),
    };
    let (log, log_file) = RunLog::open_in(target.state().and_then(|s| s.sub("logs", true)));
    log.line(&format!("plan: {plan_json}"));
    if let Some(r) = rejected {
        log.line(&format!(
            "the journal of an interrupted run was not used: {r}; starting from the first step"
        ));
    }
    if !done.is_empty() {
        log.line(&format!(
            "resuming an interrupted run; steps already done: {done:?}"
        ));
    }
    let mut report = RunReport::not_run(plan, log_file.clone());
    if let Err(e) = &held {
        // Nothing ran: the failure is the first step's, which could not start.
        let name = plan.steps.first().map_or(StepKind::Preflight, |s| s.kind());
        let error = chain(e);
        log.line(&format!("not started: {error}"));
        if let Some(r) = report.steps.first_mut() {
            r.status = StepStatus::Failed;
            r.detail = error.clone();
        }
        let failure = Failure::in_plan(Some(name), e, Some(plan));
        let _ = tx.send(RunEvent::Failed {
            index: 0,
            name,
            kind: e.kind(),
            error,
            hint: failure.hint.clone(),
        });
        report.failure = Some(failure);
    }
    let steps_to_run = if held.is_ok() { plan.steps.len() } else { 0 };
    let runner = Runner {
        plan,
        plan_json: &plan_json,
        target,
        tx,
        log: &log,
    };
    let mut index = 0;
    while index < steps_to_run {
        if let Some(group) = pipeline::group(plan, index, &done) {
            let flow = pipeline::run(&runner, &group, cancel, &mut report, &mut done);
            index = group.end();
            if flow == Flow::Stop {
                break;
            }
            continue;
        }
        let step = &plan.steps[index];
        // Verification always runs; other finished steps of an interrupted run do not.
        if done.contains(&index) && !matches!(step, steps::Step::Verify { .. }) {
            runner.done_before(&mut report, index);
            index += 1;
            continue;
        }
        if cancel.is_cancelled() {
            report.cancelled = true;
            report.steps[index].status = StepStatus::Cancelled;
            break;
        }
        let (result, elapsed) = runner.run_step(index, cancel, Feed::None);
        if runner.record(&mut report, &mut done, index, result, elapsed) == Flow::Stop {
            break;
        }
        index += 1;
    }
    crate::lock::test_pause("run_end");
    if report.ok() && !report.restart_pending {
        // Complete: the next run starts afresh (and finds everything in place).
        let _ = std::fs::remove_file(journal_path(target));
        // The install's record, and on Windows its Apps & features entry (#35).
        match crate::uninstall::installs::after_run(target, plan) {
            Ok(Some(r)) => log.line(&format!(
                "recorded install {} ({}), entry: {:?}",
                r.id,
                r.toolkit.display(),
                r.entry
            )),
            Ok(None) => {}
            Err(e) => log.line(&format!("the install's record was not written: {e}")),
        }
    }
    report.elapsed_ms = start.elapsed().as_millis() as u64;
    log.line(&format!(
        "finished: ok={} changed={} reboot={} restart_pending={}",
        report.ok(),
        report.changed,
        report.reboot_required,
        report.restart_pending
    ));
    report
}

/// Whether the run goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Next,
    Stop,
}

/// What every step of one run shares: the plan, where events and log lines go.
struct Runner<'a> {
    plan: &'a Plan,
    plan_json: &'a str,
    target: &'a Target,
    tx: &'a Sender<RunEvent>,
    log: &'a RunLog,
}

impl Runner<'_> {
    /// A step an interrupted run of this plan finished: said, not run again.
    fn done_before(&self, report: &mut RunReport, index: usize) {
        report.steps[index].status = StepStatus::DoneBefore;
        let _ = self.tx.send(RunEvent::Finished {
            index,
            name: self.plan.steps[index].kind(),
            outcome: StepOutcome {
                changed: false,
                detail: crate::msg!("step_done_earlier"),
                reboot_required: false,
            },
            skipped: true,
        });
    }

    /// Runs step `index` (its panics caught), sending its events; `stream` feeds an
    /// assembly its wheels as they arrive ([`pipeline`]). Returns the result and the
    /// milliseconds it took.
    fn run_step(
        &self,
        index: usize,
        cancel: &Cancel,
        feed: Feed,
    ) -> (Result<StepOutcome, steps::StepError>, u64) {
        let step = &self.plan.steps[index];
        let name = step.kind();
        let log = self.log;
        let _ = self.tx.send(RunEvent::Started { index, name });
        log.line(&format!("step {index} {name}: started"));
        let t0 = Instant::now();
        let emit = |e: StepEvent| {
            if let StepEvent::Log { line } = &e {
                log.line(&format!("step {index} {name}: {}", english(line)));
            }
            let _ = self.tx.send(RunEvent::Step { index, event: e });
        };
        let ctx = Ctx {
            target: self.target,
            cancel,
            emit: &emit,
        };
        let result = crate::panics::catch(|| {
            crate::panics::test_hook(name.as_str());
            match (step, feed) {
                (steps::Step::AssembleToolkit(spec), Feed::Wheels(s)) => {
                    steps::assemble_toolkit_streamed(spec, &ctx, Some(s))
                }
                (steps::Step::InstallCudnn { archive, cuda_dir }, Feed::ToolkitReady(ready)) => {
                    steps::install_cudnn_ahead(archive, cuda_dir, &ctx, ready)
                }
                _ => steps::run(step, &ctx),
            }
        })
        .unwrap_or_else(|p| {
            log.line(&format!(
                "step {index} {name}: panicked at {}: {}",
                p.location.as_deref().unwrap_or("?"),
                p.message
            ));
            Err(steps::StepError::Internal { message: p.message })
        });
        (result, t0.elapsed().as_millis() as u64)
    }

    /// Puts a step's result in the report, the journal (when done) and the log, and says
    /// whether the run goes on.
    fn record(
        &self,
        report: &mut RunReport,
        done: &mut Vec<usize>,
        index: usize,
        result: Result<StepOutcome, steps::StepError>,
        elapsed_ms: u64,
    ) -> Flow {
        let (plan, target, log) = (self.plan, self.target, self.log);
        let step = &plan.steps[index];
        let name = step.kind();
        let r = &mut report.steps[index];
        r.elapsed_ms = elapsed_ms;
        match result {
            Ok(outcome) => {
                let detail = english(&outcome.detail);
                log.line(&format!(
                    "step {index} {name}: done (changed: {}) {detail}",
                    outcome.changed
                ));
                r.status = StepStatus::Done;
                r.changed = outcome.changed;
                r.detail = detail;
                r.message = Some(outcome.detail.clone());
                report.changed |= outcome.changed;
                report.reboot_required |= outcome.reboot_required;
                done.push(index);
                // A new driver is not in use before a restart: what follows (a toolkit
                // that checks the driver, the GPU test) waits for it, even when the plan
                // ends here: the wizard's PyTorch page and GPU check follow the plan.
                let restart =
                    outcome.reboot_required && matches!(step, steps::Step::InstallDriver(_));
                save_journal(target, self.plan_json, done, restart);
                let _ = self.tx.send(RunEvent::Finished {
                    index,
                    name,
                    outcome,
                    skipped: false,
                });
                if restart {
                    log.line(&format!(
                        "step {index} {name}: the computer must restart before the rest of the plan; the plan waits in the journal"
                    ));
                    report.restart_pending = true;
                    return Flow::Stop;
                }
                Flow::Next
            }
            Err(steps::StepError::Cancelled) => {
                log.line(&format!("step {index} {name}: cancelled"));
                r.status = StepStatus::Cancelled;
                report.cancelled = true;
                Flow::Stop
            }
            Err(e) => {
                let failure = Failure::in_plan(Some(name), &e, Some(plan));
                let error = failure.error.clone();
                log.line(&format!(
                    "step {index} {name}: FAILED: {error} (hint: {})",
                    crate::i18n::render(&failure.hint, crate::i18n::Lang::En)
                ));
                r.status = StepStatus::Failed;
                r.detail = error.clone();
                let _ = self.tx.send(RunEvent::Failed {
                    index,
                    name,
                    kind: e.kind(),
                    error,
                    hint: failure.hint.clone(),
                });
                report.failure = Some(failure);
                Flow::Stop
            }
        }
    }
}

/// A message as English text: the JSON report's `hint`, beside the English `error`.
fn english_text<S: serde::Serializer>(
    m: &crate::message::Message,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::i18n::render(m, crate::i18n::Lang::En))
}

/// The plain words' parameters of a failure: for a full drive the folder, what is free
/// and what to free (when the step does not know, the plan's pre-flight figure).
/// A message in English, with its raw parameters, for the log file (read by support).
fn english(m: &crate::message::Message) -> String {
    let text = crate::i18n::render(m, crate::i18n::Lang::En);
    match crate::i18n::details(m, crate::i18n::Lang::En) {
        Some(raw) => format!("{text} ({})", raw.replace('\n', "; ")),
        None => text,
    }
}

/// `Failure::step` in JSON: the step's name, or `run` for the executor's own failure.
fn step_or_run<S: serde::Serializer>(step: &Option<StepKind>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(step.map_or("run", StepKind::as_str))
}

fn failure_params(plan: Option<&Plan>, e: &steps::StepError) -> BTreeMap<&'static str, String> {
    let mut p = BTreeMap::new();
    // `build`: what would not link or compile.
    if let steps::StepError::Build { problem, .. } = e {
        p.insert("problem", problem.clone());
    }
    // `busy`: which cuda-setup holds what.
    if let Some(b) = e.busy() {
        p.insert("pid", crate::lock::pid_text(b.pid));
        p.insert("folder", b.folder.display().to_string());
    }
    // `user_files`: the toolkit folder and the places the new toolkit would take.
    if let steps::StepError::Wheels(crate::wheels::WheelError::UserFiles { dir, files }) = e {
        p.insert("folder", dir.clone());
        p.insert("files", files.join(", "));
    }
    if let Some((path, needed, free)) = e.params() {
        let folder = path
            .ancestors()
            .find(|a| a.is_dir())
            .unwrap_or(&path)
            .display()
            .to_string();
        let needed = needed.or_else(|| {
            plan?.steps.iter().find_map(|s| match s {
                steps::Step::Preflight(i) => Some(i.needed_bytes),
                _ => None,
            })
        });
        let gb = crate::units::bytes;
        // What to free: the shortfall, at least 1 GB (files grow while they are written).
        let free_now = free.unwrap_or(0);
        let to_free = needed.map_or(crate::units::GB, |n| {
            n.saturating_sub(free_now).max(crate::units::GB)
        });
        p.insert("folder", folder);
        p.insert("free", gb(free_now));
        p.insert("needed", gb(to_free));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Os;
    use crate::steps::{Artifact, DownloadSpec, Step, driver, toolkit};

    fn download(target: &Target, what: Artifact, file: &str) -> Step {
        Step::Download(DownloadSpec {
            what,
            url: format!("https://us.download.nvidia.com/{file}"),
            mirrors: vec![],
            sha256: (!what.may_lack_hash()).then(|| "ab".repeat(32)),
            md5: None,
            size: None,
            dest: target.downloads_dir().join(file),
            bundle_dirs: vec![],
            cache_dir: None,
            connections: 1,
        })
    }

    fn plan(target: &Target, steps: Vec<Step>) -> Plan {
        Plan {
            format: 1,
            goal: crate::recommend::Goal::Developer,
            os: target.os,
            root: target.root.clone(),
            toolkit: None,
            cudnn: None,
            torch_command: None,
            notes: vec![],
            steps,
        }
    }

    fn journal(target: &Target, plan: &Plan, done: &[usize], awaiting: bool) {
        std::fs::create_dir_all(target.state_dir()).unwrap();
        save_journal(
            target,
            &serde_json::to_string(plan).unwrap(),
            done,
            awaiting,
        );
    }

    /// Step kinds are typed inside, and the report, its failure and the events keep the
    /// JSON words scripts read (docs/cli.md): a step's name, and `run` for the executor's
    /// own failure.
    #[test]
    fn reports_and_events_keep_the_step_names_in_json() {
        let root = tempfile::tempdir().unwrap();
        let target = Target::rooted(Os::Windows, root.path());
        let p = plan(
            &target,
            vec![Step::SetEnv {
                name: "CUDA_SETUP_A".into(),
                value: None,
            }],
        );
        let r = RunReport::crashed(&p, "gone");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["steps"][0]["name"], "set_env", "{json}");
        assert_eq!(json["failure"]["step"], "run", "{json}");
        assert_eq!(r.failure.as_ref().unwrap().step, None);
        let f = Failure::of(StepKind::DownloadCudnn, &steps::StepError::Cancelled);
        assert_eq!(serde_json::to_value(&f).unwrap()["step"], "download_cudnn");
        assert_eq!(f.step_title_key(), "ui_step_download_cudnn");
        let e = RunEvent::Started {
            index: 0,
            name: StepKind::InstallTorch,
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"type": "started", "index": 0, "name": "install_torch"})
        );
    }

    /// A journal written before notes were messages (English sentences) still gives its
    /// plan after the restart, and the run resumes after the steps it had done.
    #[test]
    fn a_journal_with_the_older_notes_still_resumes() {
        let root = tempfile::tempdir().unwrap();
        let target = Target::rooted(Os::Windows, root.path());
        let p = plan(
            &target,
            vec![
                Step::SetEnv {
                    name: "CUDA_SETUP_A".into(),
                    value: Some("1".into()),
                },
                Step::SetEnv {
                    name: "CUDA_SETUP_B".into(),
                    value: Some("2".into()),
                },
            ],
        );
        let mut old = serde_json::to_value(&p).unwrap();
        old["notes"] = serde_json::json!(["the NVIDIA driver 617.14 is installed first"]);
        std::fs::create_dir_all(target.state_dir()).unwrap();
        save_journal(&target, &old.to_string(), &[0], true);
        let resumed = awaiting_restart(&target).expect("the older journal loads");
        assert_eq!(resumed, p);
        let report = run_blocking(&resumed, &target, &Cancel::default(), &mut |_| {});
        assert!(report.ok(), "{:?}", report.failure);
        let status: Vec<_> = report.steps.iter().map(|s| s.status).collect();
        assert_eq!(status, [StepStatus::DoneBefore, StepStatus::Done]);
        let done = report.steps[1].message.as_ref().unwrap();
        assert_eq!(done.key, "step_set_env_value");
    }

    /// A plan waiting for a restart is given by `awaiting_restart` only; a killed run's
    /// by `interrupted_plan` only.
    #[test]
    fn a_restart_and_a_kill_are_told_apart() {
        let root = tempfile::tempdir().unwrap();
        let target = Target::rooted(Os::Windows, root.path());
        let installer = target.downloads_dir().join("617.14-desktop.exe");
        let p = plan(
            &target,
            vec![
                download(&target, Artifact::DriverInstaller, "617.14-desktop.exe"),
                Step::InstallDriver(driver::InstallSpec {
                    version: "617.14".parse().unwrap(),
                    package: crate::recommend::DriverPackage::GeforceDesktop,
                    installer,
                    args: vec!["-s".into(), "-noreboot".into()],
                    timeout_minutes: 30,
                }),
            ],
        );
        journal(&target, &p, &[0, 1], true);
        assert_eq!(awaiting_restart(&target), Some(p.clone()));
        assert_eq!(interrupted_plan(&target), None);
        journal(&target, &p, &[0], false);
        assert_eq!(awaiting_restart(&target), None);
        assert_eq!(interrupted_plan(&target), Some(p));
    }

    /// The hashless driver download may feed only the driver step (which checks the
    /// signature): a journal that runs it as the CUDA installer is refused, and set aside.
    #[test]
    fn an_unhashed_download_never_runs_as_the_toolkit_installer() {
        let root = tempfile::tempdir().unwrap();
        let target = Target::rooted(Os::Windows, root.path());
        let p = plan(
            &target,
            vec![
                download(&target, Artifact::DriverInstaller, "cuda.exe"),
                Step::InstallToolkit(toolkit::InstallSpec {
                    version: "12.4.1".parse().unwrap(),
                    installer: target.downloads_dir().join("cuda.exe"),
                    dir: root.path().join("C/Program Files/CUDA"),
                    subpackages: vec![],
                    timeout_minutes: 60,
                }),
            ],
        );
        journal(&target, &p, &[0], true);
        let err = check_interrupted(&target).unwrap_err().to_string();
        assert!(
            err.contains("without being downloaded and verified"),
            "{err}"
        );
        assert_eq!(awaiting_restart(&target), None);
        assert!(
            !journal_path(&target).exists(),
            "the journal was not set aside"
        );
    }
}
