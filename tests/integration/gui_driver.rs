//! The Windows driver journey end to end in the wizard (issue #18, part 1): kittest drives
//! the real `App` in a `--root` sandbox (a Windows PC with an RTX 3060 and no driver), the
//! real executor runs the plan, and a loopback mirror serves the stand-in driver installer
//! (a real program that insists on `-s -noreboot`, logs its arguments, writes the driver's
//! INF into the root and exits with a chosen code; signed by its last line or not) at
//! NVIDIA's path, beside the CUDA installer stand-in. System → Choose → Prepare → Install
//! → Done for both goals; the restart the driver asks for and the new window after it; an
//! unsigned file refused in Chinese; "I will install the driver myself".

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_setup::ui::progress::{StepState, step_title};
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::compat::Os;
use cuda_setup_core::i18n::{Lang, t, tf};
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::steps::{FailureKind, StepKind};
use cuda_setup_core::target::Target;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::driver::newest_desktop;
use crate::gui::{Machine, click, harness, has, settle, wait};
use crate::gui_journey::enter;
use crate::support::server::Body;
use crate::support::standin::{Driver, driver_installer, windows_installer};

/// The exit code NVIDIA's installer gives when Windows must restart.
const REBOOT: i32 = 3010;

/// The mirror serves the CUDA 11.8 installer stand-in and the driver stand-in (exiting
/// with `exit_code`, signed by `signer`) where NVIDIA keeps the newest desktop driver.
fn machine(exit_code: i32, signer: Option<&str>) -> Machine {
    let m = Machine::new(windows_installer(0, 0));
    let v = newest_desktop().to_string();
    m.server.add(
        &format!("/Windows/{v}/{v}-desktop-win10-win11-64bit-international-dch-whql.exe"),
        Body::Bytes(Arc::new(driver_installer(&Driver {
            version: &v,
            exit_code,
            signer,
        }))),
    );
    m
}

/// `gui::Machine`'s Windows PC, with no driver installed and `goal` preselected.
fn options(m: &Machine, lang: Lang, goal: Goal) -> Options {
    let mut o = m.options(lang);
    o.overrides.driver = Some(None);
    o.goal = Some(goal);
    o
}

/// The stand-in driver installer's argument log: one line per run, none if it never ran.
fn driver_log(m: &Machine) -> PathBuf {
    m.root().join("driver-args.log")
}

fn driver_runs(m: &Machine) -> Vec<String> {
    std::fs::read_to_string(driver_log(m))
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Every file under `dir`, relative, sorted: what a step changed shows as a difference.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() { walk(&p) } else { vec![p] }
        })
        .collect()
}

fn top(h: &Harness<'_, App>, label: &str) -> f32 {
    h.get_by_label_contains(label).rect().top()
}

/// Welcome → System → Choose (choosing `goal`) → Prepare, checking the driver on each: red
/// with its reason on System, the headline and the driver card first on Choose. Leaves
/// the harness on a prepared, ready Prepare page.
fn walk_to_prepare(
    m: &Machine,
    lang: Lang,
    goal: Goal,
    skip_driver: bool,
) -> Harness<'static, App> {
    let tr = |k: &'static str| t(lang, k);
    let mut h = harness(App::new(options(m, lang, goal)));
    h.step();
    settle(&mut h);
    assert_eq!(h.state().page, Page::Welcome);
    enter(&mut h);

    // System: the driver is red, with why.
    assert_eq!(h.state().page, Page::System);
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    settle(&mut h);
    assert!(has(&h, &format!("× {}", tr("ui_missing"))), "a red badge");
    assert!(has(&h, &tr("ui_driver_none_why")));
    // The plan installs it: the page says so, and sends no one to NVIDIA's site.
    assert!(has(&h, &tr("ui_driver_we_install")));
    assert!(!has(&h, &tr("ui_fix_driver_steps")));
    enter(&mut h);

    // Choose: "install the driver first" at the very top, then the driver card, then the
    // goals; the card names the version the plan installs.
    assert_eq!(h.state().page, Page::Choose);
    settle(&mut h);
    let rec = h.state().session.recommendation().unwrap().clone();
    let install = rec
        .driver
        .install
        .clone()
        .expect("a driver of ours to install");
    assert_eq!(install.version, newest_desktop());
    let headline = cuda_setup::ui::text::msg(lang, &rec.driver_headline().unwrap());
    let card = tr("ui_driver_card_title");
    assert!(top(&h, &headline) < top(&h, &card), "the headline first");
    assert!(
        top(&h, &card) < top(&h, &tr("ui_goal_pytorch")),
        "the card before the goals"
    );
    let version = install.version.to_string();
    assert!(has(&h, &version), "the card names driver {version}");
    let goal_card = match goal {
        Goal::Pytorch => "ui_goal_pytorch",
        Goal::Developer => "ui_goal_developer",
    };
    click(&mut h, &tr(goal_card));
    assert_eq!(h.state().session.goal, goal);
    if skip_driver {
        click(&mut h, &tr("ui_driver_myself"));
        assert!(h.state().session.settings.skip_driver);
    }
    settle(&mut h);
    enter(&mut h);

    assert_eq!(h.state().page, Page::Prepare);
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);
    assert!(
        h.state().session.prepare().ready(),
        "{:?}",
        h.state()
            .session
            .prepare()
            .result()
            .as_ref()
            .map(|r| r.as_ref().err())
    );
    h
}

/// The names of the prepared plan's steps.
fn plan_steps(h: &Harness<'_, App>) -> Vec<StepKind> {
    h.state()
        .session
        .prepare()
        .plan()
        .unwrap()
        .steps
        .iter()
        .map(|s| s.kind())
        .collect()
}

/// Prepare lists the driver's two steps first and is ready (green, "the driver first");
/// "Start installing" (Enter) opens Install, which runs the plan.
fn start_install(h: &mut Harness<'_, App>, lang: Lang) {
    let steps = plan_steps(h);
    assert_eq!(
        steps[..3],
        [
            StepKind::Preflight,
            StepKind::DownloadDriver,
            StepKind::InstallDriver
        ]
    );
    // Listed in the plan's order, numbered as Install numbers them: the driver right
    // after the pre-flight checks.
    assert!(has(
        h,
        &format!("1. {}", step_title(lang, StepKind::Preflight))
    ));
    assert!(has(
        h,
        &format!("2. {}", step_title(lang, StepKind::DownloadDriver))
    ));
    assert!(has(
        h,
        &format!("3. {}", step_title(lang, StepKind::InstallDriver))
    ));
    assert!(has(h, &t(lang, "ui_checks_passed_driver_first")));
    assert!(!has(
        h,
        t(lang, "ui_driver_first").split('{').next().unwrap()
    ));
    assert!(h.state().session.steps().contains(&Page::Install));
    assert!(has(h, &t(lang, "ui_start_install")));
    enter(h);
    assert_eq!(h.state().page, Page::Install);
    assert!(h.state().session.install().run().started());
}

/// A line of the run's live log ends with `end`.
fn log_has(h: &Harness<'_, App>, end: &str) -> bool {
    h.state()
        .session
        .install()
        .run()
        .log()
        .iter()
        .any(|l| l.ends_with(end))
}

fn state_of(h: &Harness<'_, App>, name: StepKind) -> StepState {
    h.state()
        .session
        .install()
        .run()
        .steps()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}"))
        .state
}

/// No driver, either goal: the driver installed first, silently, then the rest; Done's
/// driver layer is ✓. The PyTorch goal visits Install because of the driver alone.
#[test]
fn no_driver_the_wizard_installs_it_first_for_either_goal() {
    for (goal, lang) in [(Goal::Developer, Lang::En), (Goal::Pytorch, Lang::Zh)] {
        let m = machine(0, Some("NVIDIA Corporation"));
        let mut h = walk_to_prepare(&m, lang, goal, false);
        let steps = plan_steps(&h);
        start_install(&mut h, lang);
        wait(&mut h, "install", |a| !a.session.install().run().running());
        settle(&mut h);

        let r = h.state().session.install().run().report().cloned().unwrap();
        assert!(r.ok() && !r.restart_pending, "{goal:?}: {:?}", r.failure);
        let rows: Vec<StepKind> = h
            .state()
            .session
            .install()
            .run()
            .steps()
            .iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(rows, steps, "a progress row per step, in the plan's order");
        for name in [StepKind::DownloadDriver, StepKind::InstallDriver] {
            assert_eq!(
                state_of(&h, name),
                StepState::Done { changed: true },
                "{name}"
            );
            assert!(
                has(&h, &step_title(lang, name)),
                "{name}'s row by its title"
            );
        }
        assert_eq!(
            driver_runs(&m),
            ["-s -noreboot"],
            "silent, and Windows is not restarted"
        );
        assert!(
            log_has(&h, &tf(lang, "step_driver_signed", &[("file", &"")])),
            "the signature check, in the user's words"
        );
        // The rest of the plan ran after the driver.
        for row in h.state().session.install().run().steps() {
            assert!(
                matches!(row.state, StepState::Done { .. }),
                "{}: {:?}",
                row.name,
                row.state
            );
        }
        match goal {
            Goal::Developer => {
                assert!(m.toolkit().join("bin/nvcc.exe").is_file());
                assert!(has(&h, &t(lang, "ui_install_done")));
            }
            Goal::Pytorch => {
                assert_eq!(
                    steps.len(),
                    3,
                    "PyTorch needs nothing system-wide but the driver"
                );
                assert!(!m.toolkit().exists());
                assert!(has(&h, &t(lang, "ui_install_done_driver")));
            }
        }
        assert!(h.state_mut().can_next());
        enter(&mut h);
        let after = match goal {
            Goal::Developer => Page::Cudnn,
            Goal::Pytorch => Page::Pytorch,
        };
        assert_eq!(h.state().page, after);

        h.state_mut().go(Page::Done);
        settle(&mut h);
        let driver_layer = h
            .get_by_label(&format!("✓ {}", t(lang, "ui_layer_driver")))
            .rect()
            .top();
        // Installed, and no restart waits (this one needed none): its version, no
        // restart line.
        let version = h
            .state()
            .session
            .prepare()
            .plan()
            .and_then(|p| {
                p.steps.iter().find_map(|s| match s {
                    cuda_setup_core::steps::Step::InstallDriver(d) => Some(d.version.to_string()),
                    _ => None,
                })
            })
            .expect("the plan's driver");
        let installed = h
            .get_by_label(&tf(lang, "ui_layer_version", &[("version", &version)]))
            .rect();
        assert!(
            (installed.top() - driver_layer).abs() < 12.0,
            "✓ and \"installed, version …\" on one line"
        );
        assert!(!has(&h, &t(lang, "ui_layer_driver_installed")));
    }
}

/// The driver asks for a restart: the run stops after it, the page offers restart now or
/// later (a sandbox restarts and registers nothing), and a new window on the same root —
/// as after the restart — continues where it stopped without running the driver again.
#[test]
fn a_restart_pauses_the_wizard_and_a_new_window_continues_after_the_driver() {
    let lang = Lang::En;
    let m = machine(REBOOT, Some("NVIDIA Corporation"));
    let mut h = walk_to_prepare(&m, lang, Goal::Developer, false);
    let steps = plan_steps(&h);
    start_install(&mut h, lang);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);

    let r = h.state().session.install().run().report().cloned().unwrap();
    assert!(
        r.restart_pending && r.reboot_required && r.failure.is_none(),
        "{r:?}"
    );
    let driver_at = steps
        .iter()
        .position(|n| *n == StepKind::InstallDriver)
        .unwrap();
    assert_eq!(
        state_of(&h, StepKind::InstallDriver),
        StepState::Done { changed: true }
    );
    for name in &steps[driver_at + 1..] {
        assert_eq!(
            state_of(&h, *name),
            StepState::Waiting,
            "{name} ran before the restart"
        );
    }
    assert!(!m.toolkit().exists(), "the toolkit waits for the restart");
    assert_eq!(driver_runs(&m), ["-s -noreboot"]);
    let target = Target::rooted(Os::Windows, &m.root());
    assert!(cuda_setup_core::run::awaiting_restart(&target).is_some());

    assert!(has(&h, "Restart needed") && has(&h, "Restart now") && has(&h, "Restart later"));
    assert!(
        !h.state_mut().can_next(),
        "nothing goes on before the restart"
    );
    // "Later": in a sandbox nothing is registered to run at the next sign-in (RunOnce)
    // and nothing restarts. The sandbox answer is Ok; on this Linux host the real path
    // answers Err ("only Windows restarts"), so Ok proves it was never taken; and the
    // root is left as it was.
    let before = files(&m.root());
    click(&mut h, "Restart later");
    wait(&mut h, "the restart arranged", |a| {
        a.session.install().restart().done().is_some()
    });
    settle(&mut h);
    assert_eq!(
        h.state().session.install().restart().done(),
        Some(&Ok(false))
    );
    assert!(has(&h, &t(lang, "ui_restart_later_done")));
    assert!(has(&h, "Restart now"), "still offered after \"later\"");
    assert_eq!(files(&m.root()), before, "the restart wrote nothing");
    drop(h);

    // After the restart: a new window, on the same root, opens on Install.
    let mut h = harness(App::new(options(&m, lang, Goal::Developer)));
    h.step();
    settle(&mut h);
    assert_eq!(h.state().page, Page::Install);
    assert!(has(&h, &t(lang, "ui_resume_intro")));
    assert!(has(&h, "Continue the installation"));
    // What ran before the restart shows done; the rest waits.
    let done = h
        .query_all_by_label(&format!("✓ {}", t(lang, "ui_step_done")))
        .count();
    let todo = h
        .query_all_by_label(&format!("○ {}", t(lang, "ui_step_next")))
        .count();
    assert_eq!((done, todo), (driver_at + 1, steps.len() - driver_at - 1));
    let tick = h
        .query_all_by_label(&format!("✓ {}", t(lang, "ui_step_done")))
        .map(|n| n.rect().top())
        .fold(f32::INFINITY, f32::min);
    assert!(
        (top(&h, &step_title(lang, StepKind::Preflight)) - tick).abs() < 12.0,
        "the first done row is the pre-flight"
    );
    for name in [StepKind::DownloadDriver, StepKind::InstallDriver] {
        assert!(has(&h, &step_title(lang, name)));
    }
    assert!(!h.state_mut().can_next(), "Next waits for the rest");

    // Enter = "Continue the installation": the rest runs; the driver does not again.
    enter(&mut h);
    assert!(h.state().session.install().run().started());
    wait(&mut h, "the rest of the plan", |a| {
        !a.session.install().run().running()
    });
    settle(&mut h);
    assert!(h.state().session.install().finished());
    for name in &steps[..=driver_at] {
        assert_eq!(state_of(&h, *name), StepState::DoneBefore, "{name}");
    }
    for name in &steps[driver_at + 1..] {
        assert!(
            matches!(state_of(&h, *name), StepState::Done { .. }),
            "{name}"
        );
    }
    assert_eq!(driver_runs(&m).len(), 1, "the driver installer ran again");
    assert!(m.toolkit().join("bin/nvcc.exe").is_file());
    assert!(cuda_setup_core::run::awaiting_restart(&target).is_none());
    assert!(h.state_mut().can_next());
    h.state_mut().go(Page::Done);
    settle(&mut h);
    assert!(has(&h, &format!("✓ {}", t(lang, "ui_layer_driver"))));
    // Restarted (the journal's driver step is done before): no restart line any more.
    assert!(
        !has(&h, &t(lang, "ui_layer_driver_installed")),
        "the restart line after the restart"
    );
}

/// An unsigned file on the mirror: the run fails at the driver's install with the plain
/// Chinese sentence, nothing was executed, and the raw reason waits under Details.
#[test]
fn an_unsigned_driver_is_refused_in_plain_chinese_and_never_run() {
    let lang = Lang::Zh;
    let m = machine(0, None);
    let mut h = walk_to_prepare(&m, lang, Goal::Pytorch, false);
    start_install(&mut h, lang);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);

    let r = h.state().session.install().run().report().cloned().unwrap();
    let f = r.failure.clone().expect("the run failed");
    assert_eq!(
        (f.step, f.kind),
        (Some(StepKind::InstallDriver), FailureKind::DriverSignature)
    );
    assert_eq!(
        state_of(&h, StepKind::DownloadDriver),
        StepState::Done { changed: true }
    );
    assert_eq!(state_of(&h, StepKind::InstallDriver), StepState::Failed);
    assert!(!driver_log(&m).exists(), "the unsigned installer ran");

    let title = tf(
        lang,
        "ui_step_failed",
        &[("step", &step_title(lang, StepKind::InstallDriver))],
    );
    assert!(has(&h, &title), "{title}");
    assert_eq!(
        t(lang, "fail_driver_signature"),
        "这个驱动文件不是 NVIDIA 签名的，所以没有运行它。"
    );
    assert!(has(&h, &t(lang, "fail_driver_signature")));
    // The raw reason (English, for support) only behind Details.
    assert!(f.error.contains("not signed"), "{}", f.error);
    assert!(!has(&h, &f.error));
    click(&mut h, &t(lang, "ui_details"));
    assert!(has(&h, &f.error), "the raw reason under Details");
    assert!(!h.state_mut().can_next());
    assert!(has(&h, &t(lang, "ui_try_again")), "the way forward");
}

/// "I will install the driver myself": no driver steps; Prepare says the driver comes
/// first in amber instead of "ready"; the PyTorch goal then has nothing to install.
#[test]
fn installing_the_driver_myself_leaves_it_out_and_prepare_amber() {
    for goal in [Goal::Pytorch, Goal::Developer] {
        let lang = Lang::En;
        let m = machine(0, Some("NVIDIA Corporation"));
        let mut h = walk_to_prepare(&m, lang, goal, true);
        let steps = plan_steps(&h);
        assert!(
            !steps.contains(&StepKind::DownloadDriver) && !steps.contains(&StepKind::InstallDriver),
            "{steps:?}"
        );
        assert!(
            !has(&h, &t(lang, "ui_checks_passed"))
                && !has(&h, &t(lang, "ui_checks_passed_driver_first"))
        );
        let headline = cuda_setup::ui::text::msg(
            lang,
            &h.state()
                .session
                .recommendation()
                .unwrap()
                .driver_headline()
                .unwrap(),
        );
        let amber = tf(lang, "ui_driver_first", &[("what", &headline)]);
        assert!(has(&h, &amber), "{amber}");
        match goal {
            Goal::Pytorch => {
                assert!(!h.state().session.steps().contains(&Page::Install));
                assert!(!has(&h, &t(lang, "ui_start_install")));
                enter(&mut h);
                assert_eq!(h.state().page, Page::Pytorch, "Install is skipped");
            }
            Goal::Developer => {
                assert!(h.state().session.steps().contains(&Page::Install));
                enter(&mut h);
                assert_eq!(h.state().page, Page::Install);
                wait(&mut h, "install", |a| !a.session.install().run().running());
                assert!(h.state().session.install().run().succeeded());
            }
        }
        assert!(driver_runs(&m).is_empty(), "the driver installer ran");
    }
}

/// The PyTorch goal: the driver is the plan's last step, and the PyTorch page still
/// follows it in the wizard. It too waits for the restart ("Restart now" here), and the
/// window after the restart continues to the PyTorch page.
#[test]
fn the_pytorch_goal_also_waits_for_the_restart_then_goes_on_to_pytorch() {
    let lang = Lang::En;
    let m = machine(REBOOT, Some("NVIDIA Corporation"));
    let mut h = walk_to_prepare(&m, lang, Goal::Pytorch, false);
    let steps = plan_steps(&h);
    assert_eq!(steps.last(), Some(&StepKind::InstallDriver), "{steps:?}");
    start_install(&mut h, lang);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);
    let r = h.state().session.install().run().report().cloned().unwrap();
    assert!(r.restart_pending && r.failure.is_none(), "{r:?}");
    assert!(has(&h, "Restart needed") && has(&h, "Restart later"));
    assert!(
        !h.state_mut().can_next(),
        "the PyTorch page waits for the restart"
    );
    // Enter is "Restart now" (a sandbox restarts nothing).
    enter(&mut h);
    wait(&mut h, "the restart", |a| {
        a.session.install().restart().done().is_some()
    });
    settle(&mut h);
    assert_eq!(
        h.state().session.install().restart().done(),
        Some(&Ok(true))
    );
    assert!(has(&h, &t(lang, "ui_restart_under_way")));
    drop(h);

    let mut h = harness(App::new(options(&m, lang, Goal::Pytorch)));
    h.step();
    settle(&mut h);
    assert_eq!(h.state().page, Page::Install);
    assert_eq!(h.state().session.goal, Goal::Pytorch);
    let done = h
        .query_all_by_label(&format!("✓ {}", t(lang, "ui_step_done")))
        .count();
    assert_eq!(done, steps.len(), "everything ran before the restart");
    enter(&mut h);
    wait(&mut h, "the rest (nothing)", |a| {
        !a.session.install().run().running()
    });
    settle(&mut h);
    assert!(h.state().session.install().finished());
    enter(&mut h);
    assert_eq!(h.state().page, Page::Pytorch);
    assert_eq!(driver_runs(&m).len(), 1, "the driver installer ran again");
}

/// Right after the run installs the driver, before the restart, detection cannot see
/// it: Done's headline says a restart is needed (the run's report says so), never that
/// the driver is not installed; the driver row says this setup installed it.
#[test]
fn before_the_restart_done_says_restart_not_driver_missing() {
    for lang in [Lang::En, Lang::Zh] {
        let m = machine(REBOOT, Some("NVIDIA Corporation"));
        let mut h = walk_to_prepare(&m, lang, Goal::Pytorch, false);
        start_install(&mut h, lang);
        wait(&mut h, "install", |a| !a.session.install().run().running());
        settle(&mut h);
        assert!(h.state().session.install().restart_pending());
        h.state_mut().go(Page::Done);
        settle(&mut h);
        let not_yet = |key| tf(lang, "verdict_not_yet", &[("cause", &t(lang, key))]);
        assert!(
            has(&h, &not_yet("verdict_cause_restart_needed")),
            "{lang:?}: the headline says the restart"
        );
        assert!(has(&h, &t(lang, "verdict_restart")), "{lang:?}: what to do");
        assert!(
            !has(&h, &not_yet("verdict_cause_no_driver")),
            "{lang:?}: never \"driver not installed\""
        );
        assert!(has(&h, &t(lang, "ui_layer_driver_installed")), "{lang:?}");
    }
}
