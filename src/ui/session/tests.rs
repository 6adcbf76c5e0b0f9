//! The session driven directly, as the app would: actions in, worker events back.

use super::*;
use crate::ui::options::Overrides;
use crate::ui::worker::Prepared;
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::download::Cancel;
use cuda_setup_core::plan::Plan;
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::GpuFact;
use cuda_setup_core::repair::FixResult;
use cuda_setup_core::run::RunEvent;

/// A session for a Windows machine in `root` (an RTX 3060 and driver 522.06 given,
/// CUDA 11.8 asked for), after a real detection of that (empty) root.
fn detected(root: &std::path::Path) -> Session {
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, root);
    o.host = Host::sandbox(Os::Windows, root, Default::default());
    o.overrides = Overrides {
        gpus: vec![GpuFact {
            name: Some("NVIDIA GeForce RTX 3060".into()),
            compute_capability: "8.6".parse().unwrap(),
        }],
        driver: Some(Some("522.06".parse().unwrap())),
        driver_cuda: None,
        python: Some("3.11".parse().unwrap()),
        free_threaded: false,
        no_gpu: false,
    };
    o.cuda = Some("11.8".parse().unwrap());
    let report = cuda_setup_core::detect::detect(&o.host, &o.tables, o.deadlines);
    let mut s = Session::new(o, Lang::En, Existing::default());
    assert!(s.recommendation().is_none(), "nothing to recommend for yet");
    assert!(
        s.on_event(Event::Detected(Box::new(report), None))
            .is_empty()
    );
    s
}

/// Asks for the plan, builds it as the worker would, and reports it back.
fn prepared(s: &mut Session) {
    let cmds = s.apply(Action::Prepare);
    let [Command::Prepare { rec, choices }] = cmds.as_slice() else {
        panic!("one Prepare command");
    };
    assert!(s.prepare().running());
    let plan = cuda_setup_core::plan::make(&s.opts.target, rec, choices).unwrap();
    s.on_event(Event::Prepared(Ok(Box::new(Prepared {
        plan,
        ahead: Default::default(),
    }))));
    assert!(s.prepare().ready());
}

fn rec_json(s: &Session) -> serde_json::Value {
    serde_json::to_value(s.recommendation()).unwrap()
}

#[test]
fn a_new_goal_recomputes_the_recommendation_and_drops_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = detected(dir.path());
    assert_eq!(s.goal, Goal::Pytorch);
    assert_eq!(s.recommendation().unwrap().goal, Goal::Pytorch);
    assert!(s.recommendation().unwrap().toolkit.is_none());
    prepared(&mut s);

    // The goal it already has: nothing is dropped.
    assert!(s.apply(Action::ChooseGoal(Goal::Pytorch)).is_empty());
    assert!(s.prepare().plan().is_some());

    assert!(s.apply(Action::ChooseGoal(Goal::Developer)).is_empty());
    let rec = s.recommendation().unwrap();
    assert_eq!(rec.goal, Goal::Developer);
    let tk = rec.toolkit.as_ref().expect("a toolkit for developers");
    assert_eq!(tk.version.major_minor().to_string(), "11.8");
    assert!(s.prepare().result().is_none() && !s.prepare().running());
    assert!(!s.install().run().started());
    // Without a plan, the toolkit folder is the recommended toolkit's.
    assert!(
        s.toolkit_dir()
            .is_some_and(|d| d.ends_with("NVIDIA GPU Computing Toolkit/CUDA/v11.8"))
    );
}

#[test]
fn new_settings_recompute_and_drop_the_plan_unchanged_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = detected(dir.path());
    prepared(&mut s);
    let same = s.settings.clone();
    assert!(s.apply(Action::SetSettings(same)).is_empty());
    assert!(
        s.prepare().plan().is_some(),
        "the same settings keep the plan"
    );

    s.apply(Action::ChooseGoal(Goal::Developer));
    let before = rec_json(&s);
    let other = Settings {
        cuda: "12".into(),
        ..s.settings.clone()
    };
    s.apply(Action::SetSettings(other));
    assert_eq!(s.settings.cuda_version(), Some("12".parse().unwrap()));
    assert_ne!(rec_json(&s), before, "another toolkit asked for");
    assert_ne!(
        s.recommendation()
            .and_then(|r| r.toolkit.as_ref())
            .map(|t| t.version.major()),
        Some(11)
    );
    assert!(s.prepare().result().is_none());
}

#[test]
fn a_language_switch_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = detected(dir.path());
    prepared(&mut s);
    let started = s.apply(Action::StartInstall);
    assert!(matches!(
        started.as_slice(),
        [Command::Run {
            job: JobId::Install,
            ..
        }]
    ));
    assert!(s.install().run().running());
    let rec = rec_json(&s);

    assert!(s.apply(Action::SetLang(Lang::Zh)).is_empty());
    assert_eq!(s.lang, Lang::Zh);
    assert_eq!(rec_json(&s), rec);
    assert!(s.prepare().plan().is_some());
    assert!(s.install().run().running(), "the run goes on");
    assert!(s.system().report().is_some() && s.facts().is_some());
}

#[test]
fn on_linux_a_driver_to_install_asks_the_worker_for_the_advice_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Linux, dir.path());
    o.host = Host::sandbox(Os::Linux, dir.path(), Default::default());
    o.overrides = Overrides {
        gpus: vec![GpuFact {
            name: Some("NVIDIA GeForce RTX 3060".into()),
            compute_capability: "8.6".parse().unwrap(),
        }],
        driver: Some(None),
        driver_cuda: None,
        python: Some("3.12".parse().unwrap()),
        free_threaded: false,
        no_gpu: false,
    };
    let report = cuda_setup_core::detect::detect(&o.host, &o.tables, o.deadlines);
    let mut s = Session::new(o, Lang::En, Existing::default());
    let cmds = s.on_event(Event::Detected(Box::new(report), None));
    let minimum = s.recommendation().unwrap().driver.minimum.clone();
    let branch = s.recommendation().unwrap().driver.branch;
    assert!(minimum.is_some());
    assert!(matches!(
        cmds.as_slice(),
        [Command::LinuxDriverAdvice { minimum: m, .. }] if *m == minimum
    ));
    assert!(s.linux_driver().running());
    assert_eq!(
        s.driver_plan(),
        DriverPlan::Yours,
        "no installer of ours on Linux"
    );
    // An answer for another minimum is stale and changes nothing.
    s.on_event(Event::LinuxDriverAdvice {
        minimum: Some("1.0".parse().unwrap()),
        branch,
        advice: None,
    });
    assert!(s.linux_driver().running());
    s.on_event(Event::LinuxDriverAdvice {
        minimum: minimum.clone(),
        branch,
        advice: None,
    });
    assert!(!s.linux_driver().running());
    // The same minimum again (another language, the same goal): not asked twice.
    let same = s.settings.clone();
    assert!(s.apply(Action::SetSettings(same)).is_empty());
    let mirrors = Settings {
        mirrors: "http://127.0.0.1:1".into(),
        ..s.settings.clone()
    };
    assert!(
        s.apply(Action::SetSettings(mirrors)).is_empty(),
        "the minimum did not change"
    );
}

/// Anything installed — an install run, cuDNN, pip, repair's fixes — asks the worker
/// to detect again; an answer from a detection that started before the change is
/// dropped for a new one, so pages never show what was there before.
#[test]
fn every_change_detects_again_and_an_older_answer_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = detected(dir.path());
    let report = || {
        let o = &s_opts(dir.path());
        Box::new(cuda_setup_core::detect::detect(
            &o.host,
            &o.tables,
            o.deadlines,
        ))
    };
    prepared(&mut s);
    let plan = s.prepare().plan().cloned().unwrap();
    s.apply(Action::StartInstall);
    let done = cuda_setup_core::run::RunReport::crashed(&plan, "test");
    let cmds = s.on_event(Event::Run(JobId::Install, RunEvent::Done(Box::new(done))));
    assert!(
        matches!(cmds.as_slice(), [Command::Detect]),
        "install: {} commands",
        cmds.len()
    );
    assert!(s.system().running());

    // cuDNN lands while that detection runs (its install run ends well): the
    // detection's answer is already old.
    s.cudnn.install = Job::started();
    let cudnn_plan = Plan {
        steps: Vec::new(),
        ..plan.clone()
    };
    let mut landed = cuda_setup_core::run::RunReport::crashed(&cudnn_plan, "t");
    landed.failure = None;
    assert!(
        s.on_event(Event::Run(
            JobId::CudnnInstall,
            RunEvent::Done(Box::new(landed))
        ))
        .is_empty()
    );
    let old = s.system().report().unwrap().elapsed_ms;
    let mut stale = report();
    stale.elapsed_ms = old + 1_000_000;
    let cmds = s.on_event(Event::Detected(stale, None));
    assert!(
        matches!(cmds.as_slice(), [Command::Detect]),
        "again: {} commands",
        cmds.len()
    );
    assert!(s.system().running());
    assert_eq!(s.system().report().unwrap().elapsed_ms, old, "dropped");
    s.on_event(Event::Detected(report(), None));
    assert!(!s.system().running() && s.system().report().unwrap().elapsed_ms != old + 1_000_000);

    // pip, then repair's fixes.
    let pip = Plan {
        steps: Vec::new(),
        ..plan.clone()
    };
    let cmds = s.on_event(Event::Run(
        JobId::Pip,
        RunEvent::Done(Box::new(cuda_setup_core::run::RunReport::crashed(
            &pip, "t",
        ))),
    ));
    assert!(
        matches!(cmds.as_slice(), [Command::Detect]),
        "pip: {} commands",
        cmds.len()
    );
    s.on_event(Event::Detected(report(), None));
    let fixed = FixResult {
        runs: vec![cuda_setup_core::run::RunReport::crashed(&plan, "t")],
        after: Vec::new(),
        report: None,
    };
    let cmds = s.on_event(Event::Fixed(Box::new(fixed)));
    assert!(
        matches!(cmds.as_slice(), [Command::Detect]),
        "fix: {} commands",
        cmds.len()
    );
}

/// The options [`detected`] makes, for another detection of the same root.
fn s_opts(root: &std::path::Path) -> Options {
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, root);
    o.host = Host::sandbox(Os::Windows, root, Default::default());
    o
}

#[test]
fn events_update_results_and_start_what_follows() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = detected(dir.path());
    // A picked Python is the one pip and the doctor use.
    s.on_event(Event::Picked(
        Pick::Python,
        Some("/opt/py/bin/python3".into()),
    ));
    assert_eq!(s.torch().python(), "/opt/py/bin/python3");
    let torch = s.recommendation().unwrap().torch.clone().unwrap();
    let cmds = s.apply(Action::RunPip(Box::new(torch)));
    let [Command::Run { plan, .. }] = cmds.as_slice() else {
        panic!("one Run command");
    };
    assert!(matches!(
        &plan.steps[..],
        [Step::InstallTorch { python, .. }] if python.ends_with("python3")
    ));
    // pip ends (here: its thread died), so no doctor, only detection again (a failed
    // pip may have installed some packages); the page stops waiting.
    let failed = cuda_setup_core::run::RunReport::crashed(plan, "test");
    assert!(matches!(
        s.on_event(Event::Run(JobId::Pip, RunEvent::Done(Box::new(failed))))
            .as_slice(),
        [Command::Detect]
    ));
    assert!(!s.torch().busy());
    // A worker that died says so until the user moves on.
    s.on_event(Event::Crashed {
        job: Some(JobId::Doctor),
        message: "boom".into(),
    });
    assert_eq!(s.crash.as_deref(), Some("boom"));
    assert!(!s.torch().doctor_running());
}

/// A session in which every job runs at once (set here directly: no page starts them
/// all together), and a plan for the jobs that run one.
fn all_running(root: &std::path::Path) -> (Session, Plan) {
    let mut s = detected(root);
    prepared(&mut s);
    let plan = s.prepare.plan().cloned().unwrap();
    let run = || crate::ui::progress::RunView::start(&plan, Cancel::default());
    s.system.job = Job::started();
    s.linux_driver.job = Job::started();
    s.refresh = Job::started();
    s.prepare.job = Job::started();
    s.install.run = run();
    s.install.restart = Job::started();
    s.driver_policy = Job::started();
    s.uninstall.plan = Job::started();
    s.uninstall.run = Job::started();
    s.cudnn.check = Job::started();
    s.cudnn.download = Job::cancellable(Cancel::default());
    s.cudnn.install = Job::started();
    s.cudnn.undo = Job::started();
    s.verify.job = Job::started();
    s.torch.doctor = Job::started();
    s.torch.run = run();
    s.repair.audit = Job::started();
    s.repair.fix = Job::started();
    s.saved = Job::started();
    s.guard.status = Job::started();
    s.guard.restore = run();
    for id in JobId::ALL {
        assert_eq!(s.status(id), Status::Running, "{id:?}");
    }
    (s, plan)
}

/// A worker thread that panics ends exactly its own job, done with the error (the
/// crash's message, or a run's failed report), whichever job it was; every other job
/// goes on running, and the crash is said until the user moves on.
#[test]
fn a_panic_in_each_job_ends_that_job_with_its_error_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    for id in JobId::ALL {
        let (mut s, plan) = all_running(dir.path());
        // What the worker sends when the thread for `id`'s command panics (a run's
        // command carries its plan).
        let runs = matches!(
            id,
            JobId::Install
                | JobId::Pip
                | JobId::CudnnDownload
                | JobId::CudnnInstall
                | JobId::Restore
        );
        let events =
            crate::ui::worker::crash_events(Some(id), runs.then_some(&plan), "boom in a job");
        for e in events {
            // No job starts from a crash (an ended run asks for detection, which runs).
            for c in s.on_event(e) {
                assert!(matches!(c, Command::Detect), "{id:?}");
            }
        }
        assert_eq!(s.status(id), Status::Failed, "{id:?}");
        for other in JobId::ALL.into_iter().filter(|o| *o != id) {
            assert_eq!(
                s.status(other),
                Status::Running,
                "{id:?} crashed: {other:?}"
            );
        }
        assert_eq!(s.crash(), Some("boom in a job"), "{id:?}");
    }
    // What the pages read of a crashed job: its error, not an answer.
    let (mut s, _) = all_running(dir.path());
    for id in [
        JobId::Detect,
        JobId::Smoke,
        JobId::Doctor,
        JobId::CudnnCheck,
    ] {
        s.on_event(Event::Crashed {
            job: Some(id),
            message: "boom".into(),
        });
    }
    assert_eq!(s.system().error(), Some("boom"));
    assert!(s.verify().report().is_none() && !s.verify().running());
    assert!(s.torch().doctor().is_none() && !s.torch().doctor_running());
    assert!(s.cudnn().check().is_none() && !s.cudnn().validating());
}

/// Repair mode's end runs the checks the core picks for a run's end
/// (`repair::checks_at_end`), as `cuda-setup install` and `repair` do: the doctor for the
/// PyTorch goal; for a developer the smoke test, which a `--root` sandbox cannot run
/// (the driver is this machine's), so nothing there.
#[test]
fn repair_modes_end_runs_the_checks_the_core_picks() {
    let dir = tempfile::tempdir().unwrap();
    for (goal, doctor) in [(Goal::Pytorch, true), (Goal::Developer, false)] {
        let mut s = detected(dir.path());
        s.apply(Action::SetMode(Mode::Repair));
        s.apply(Action::ChooseGoal(goal));
        let want = cuda_setup_core::repair::checks_at_end(goal, &[], false);
        assert_eq!((want.doctor, want.smoke), (doctor, false), "{goal:?}");
        let cmds = s.apply(Action::CheckInstalled);
        assert_eq!(
            matches!(cmds.as_slice(), [Command::Doctor { .. }]),
            doctor,
            "{goal:?}: {} commands",
            cmds.len()
        );
        assert!(
            !cmds.iter().any(|c| matches!(c, Command::Smoke { .. })),
            "{goal:?}"
        );
    }
}
