//! The beginner's journey through the wizard (issue #18), driven by egui_kittest against
//! the real detection, recommendation and plan in a `--root` sandbox: the driver as step
//! one (System's badge and reason, Choose's headline and driver card, Prepare never
//! "ready" while the driver blocks), one primary button per page that Enter presses, whole
//! cards clickable, the restart the driver asks for, and the wizard opening where it
//! stopped after that restart. Most run in English and Chinese (the Chinese run also
//! proves every new glyph is in the embedded font: the harness fails on a missing one).

#![cfg(unix)]

use std::path::Path;
use std::time::{Duration, Instant};

use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::session::Action;
use cuda_setup::ui::worker::{Event, JobId};
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::{Lang, t};
use cuda_setup_core::plan::{self, Choices, Method, Plan};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{self, Facts, Goal, Request};
use cuda_setup_core::run::{RunEvent, RunReport};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

const LANGS: [Lang; 2] = [Lang::En, Lang::Zh];

/// A Windows machine (or `os`) in `root` with an RTX 3060 and `driver` given (None: no
/// driver), Python 3.12 given for the recommendation but none found on the machine.
fn options(root: &Path, os: Os, lang: Lang, driver: Option<&str>) -> Options {
    let mut o = Options::sandbox(Tables::embedded().unwrap(), os, root);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let env = [("PATH".to_string(), bin.display().to_string())]
        .into_iter()
        .collect();
    o.host = Host::sandbox(os, root, env);
    o.lang = Some(lang);
    o.overrides = crate::support::machine::rtx_3060(driver, "3.12");
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    o.deadlines = Deadlines {
        quick: Duration::from_secs(10),
        python: Duration::from_secs(10),
    };
    o
}

fn harness(app: App) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1000.0, 1400.0])
        .with_context_setup(|ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), app)
}

/// Steps frames until `done` holds (the worker answers on its own threads).
fn wait(h: &mut Harness<'_, App>, what: &str, done: impl Fn(&App) -> bool) {
    let t0 = Instant::now();
    loop {
        h.step();
        if done(h.state()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "timed out waiting: {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    h.step();
    h.step();
}

fn settle(h: &mut Harness<'_, App>) {
    crate::gui::settle(h);
}

fn has(h: &Harness<'_, App>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

fn click(h: &mut Harness<'_, App>, label: &str) {
    h.get_by_label(label).click();
    h.step();
    h.step();
}

pub(crate) fn enter(h: &mut Harness<'_, App>) {
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
}

/// Opens the wizard on `page` once detection is done.
fn on_page(o: Options, page: Page) -> Harness<'static, App> {
    let mut h = harness(App::new(o));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().go(page);
    settle(&mut h);
    h
}

#[test]
fn no_driver_puts_the_driver_first_on_every_page() {
    for lang in LANGS {
        let dir = tempfile::tempdir().unwrap();
        let tr = |k: &'static str| t(lang, k);
        let mut h = on_page(options(dir.path(), Os::Windows, lang, None), Page::System);

        // System: red, with the reason in plain words; never a green word beside it.
        assert!(has(&h, &tr("ui_missing")) && has(&h, &tr("ui_driver_none_why")));
        assert!(!has(&h, &tr("ui_driver_runs_it")));
        // The card by its plain name and generation; the jargon waits behind "why".
        assert!(has(&h, "NVIDIA GeForce RTX 3060 (Ampere)"));
        assert!(!has(&h, "sm_86"));
        click(&mut h, &tr("ui_why_this"));
        assert!(has(&h, "sm_86"), "the compute capability, behind why");
        // No Python found: how to get one, before the PyTorch page.
        assert!(has(&h, &tr("ui_python_missing")));

        // Choose: the headline at the top, above the goals, then the driver card.
        h.state_mut().go(Page::Choose);
        settle(&mut h);
        let headline = t(lang, "driver_headline_install")
            .split('{')
            .next()
            .unwrap()
            .to_string();
        let top = h.get_by_label_contains(&headline).rect().top();
        assert!(top < h.get_by_label(&tr("ui_goal_pytorch")).rect().top());
        assert!(has(&h, &tr("ui_driver_card_title")));
        assert!(has(&h, "winget install Python.Python.3.12"));
        // The download sizes before anything is downloaded.
        assert!(has(
            &h,
            &cuda_setup_core::i18n::tf(lang, "ui_download_about", &[("size", &"2.5 GB")])
        ));
        let rec = h.state().session.recommendation().unwrap().clone();
        let planned = rec.driver.install.is_some();
        if planned {
            // drvcore's package: what is installed, and the way out.
            assert!(has(&h, &tr("ui_driver_myself")));
        } else {
            assert!(has(&h, &tr("ui_driver_link")));
        }

        // Prepare: the driver step first when ours to install; never "ready" otherwise.
        h.state_mut().go(Page::Prepare);
        wait(&mut h, "prepare", |a| !a.session.prepare().running());
        settle(&mut h);
        assert!(h.state().session.prepare().ready());
        if planned {
            let first = cuda_setup::ui::progress::step_title(
                lang,
                cuda_setup_core::steps::StepKind::DownloadDriver,
            );
            // Right after the pre-flight checks, as the run does it.
            assert!(has(&h, &format!("2. {first}")), "the driver's step first");
            assert!(h.state().session.steps().contains(&Page::Install));
            assert!(has(&h, &tr("ui_start_install")));
        } else {
            assert!(!has(&h, &tr("ui_checks_passed")));
            assert!(has(&h, tr("ui_driver_first").split('{').next().unwrap()));
        }
    }
}

#[test]
fn prepare_is_not_ready_while_the_driver_is_left_to_the_user() {
    for lang in LANGS {
        let dir = tempfile::tempdir().unwrap();
        let mut h = on_page(options(dir.path(), Os::Windows, lang, None), Page::Choose);
        // "I will install the driver myself".
        if has(&h, &t(lang, "ui_driver_myself")) {
            click(&mut h, &t(lang, "ui_driver_myself"));
        } else {
            let settings = cuda_setup::ui::session::Settings {
                skip_driver: true,
                ..h.state().session.settings.clone()
            };
            h.state_mut().apply(Action::SetSettings(settings));
        }
        assert!(h.state().session.settings.skip_driver);
        h.state_mut().go(Page::Prepare);
        wait(&mut h, "prepare", |a| !a.session.prepare().running());
        settle(&mut h);
        assert!(!has(&h, &t(lang, "ui_checks_passed")), "not ready");
        assert!(has(
            &h,
            t(lang, "ui_driver_first").split('{').next().unwrap()
        ));
        let plan = h.state().session.prepare().plan().unwrap().clone();
        assert!(
            !cuda_setup::ui::session::installs_driver(&plan),
            "no driver step when the user installs it"
        );
        assert!(!h.state().session.steps().contains(&Page::Install));
    }
}

#[test]
fn an_old_driver_is_named_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let lang = Lang::En;
    // Runs the recommended build, but a newer driver would allow a newer one: amber.
    let mut h = on_page(
        options(dir.path(), Os::Windows, lang, Some("551.78")),
        Page::System,
    );
    assert!(has(&h, "Update advised"));
    assert!(has(&h, "Driver 551.78 runs it. A driver 580.88 or newer"));
    assert!(!has(&h, "Runs it"));
    h.state_mut().go(Page::Choose);
    settle(&mut h);
    assert!(
        !has(&h, "Update the NVIDIA driver"),
        "nothing must happen first"
    );

    // Too old for anything recommended: red, and "update to X (you have Y)" on Choose.
    let mut h = on_page(
        options(dir.path(), Os::Windows, lang, Some("418.96")),
        Page::System,
    );
    assert!(has(&h, "Too old") && has(&h, "Driver 418.96 cannot run what is recommended."));
    let minimum = h
        .state()
        .session
        .recommendation()
        .and_then(|r| r.driver.minimum.clone())
        .unwrap();
    h.state_mut().go(Page::Choose);
    settle(&mut h);
    assert!(has(
        &h,
        &format!("Update the NVIDIA driver to {minimum} or newer (you have 418.96).")
    ));

    // New enough: green, said in words.
    let mut h = on_page(
        options(dir.path(), Os::Windows, Lang::Zh, Some("610.74")),
        Page::System,
    );
    assert!(has(&h, "可以运行") && has(&h, "驱动 610.74 可以运行推荐的 "));
    h.state_mut().go(Page::Choose);
    settle(&mut h);
    assert!(!has(&h, "请把 NVIDIA 显卡驱动更新"));
}

/// Linux has no driver installer of ours: the advice is worked out on the worker, for
/// the recommendation's minimum, and shown on the driver card.
#[test]
fn on_linux_the_driver_card_says_how_to_get_the_driver() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = on_page(options(dir.path(), Os::Linux, Lang::En, None), Page::Choose);
    wait(&mut h, "the driver advice", |a| {
        !a.session.linux_driver().running()
    });
    settle(&mut h);
    let ld = &h.state().session.linux_driver();
    let minimum = h
        .state()
        .session
        .recommendation()
        .unwrap()
        .driver
        .minimum
        .clone();
    assert_eq!(
        ld.asked_for(),
        Some(&minimum),
        "asked for the recommendation's minimum"
    );
    assert!(has(&h, "Step 1: the NVIDIA driver"));
    match ld.advice().cloned() {
        // drvlinux's advice: the exact commands, each with a copy button.
        Some(a) => {
            for c in &a.commands {
                assert!(has(&h, c), "{c}");
            }
        }
        None => assert!(has(&h, "with your distribution's package manager")),
    }
}

#[test]
fn enter_presses_the_primary_button_and_only_it() {
    for lang in LANGS {
        let dir = tempfile::tempdir().unwrap();
        let mut h = harness(App::new(options(
            dir.path(),
            Os::Windows,
            lang,
            Some("610.74"),
        )));
        h.step();
        settle(&mut h);
        assert_eq!(h.state().page, Page::Welcome);
        enter(&mut h);
        assert_eq!(h.state().page, Page::System, "Enter is Next here");
        wait(&mut h, "detection", |a| {
            a.session.system().report().is_some()
        });
        settle(&mut h);
        enter(&mut h);
        assert_eq!(h.state().page, Page::Choose);
        // A card chosen with the mouse leaves Enter to the primary button.
        click(&mut h, &t(lang, "ui_goal_developer"));
        assert_eq!(h.state().session.goal, Goal::Developer);
        settle(&mut h);
        enter(&mut h);
        assert_eq!(h.state().page, Page::Prepare);
        wait(&mut h, "prepare", |a| !a.session.prepare().running());
        // Back is secondary: Enter never goes back.
        assert_eq!(h.state().page, Page::Prepare);
    }
}

/// A plan for the PyTorch goal on this sandbox (a pre-flight check; nothing to download).
fn pytorch_plan(o: &Options) -> Plan {
    let facts = Facts {
        os: o.target.os,
        gpus: o.overrides.gpus.clone(),
        driver: Some("610.74".parse().unwrap()),
        driver_cuda: None,
        python: Some("3.12".parse().unwrap()),
        installed_toolkits: Vec::new(),
        unidentified_gpus: Vec::new(),
        notes: Vec::new(),
        host_kind: Default::default(),
        free_threaded: false,
    };
    let rec = recommend::recommend(
        &o.tables,
        &facts,
        &Request {
            goal: Goal::Pytorch,
            cuda: None,
            method: Method::Installer,
            driver: Default::default(),
            distro: None,
            ..Default::default()
        },
    );
    plan::make(&o.target, &rec, &Choices::new(Method::Installer)).unwrap()
}

#[test]
fn after_the_restart_the_wizard_continues_on_the_install_page() {
    for lang in LANGS {
        let dir = tempfile::tempdir().unwrap();
        let o = options(dir.path(), Os::Windows, lang, Some("610.74"));
        let plan = pytorch_plan(&o);
        // What `run::awaiting_restart` finds on disk after the restart.
        let mut h = harness(App::with_awaiting(o, Some(plan)));
        h.step();
        settle(&mut h);
        assert_eq!(h.state().page, Page::Install, "opens where it stopped");
        assert!(has(&h, &t(lang, "ui_resume_intro")));
        assert!(has(&h, &t(lang, "ui_continue_install")));
        assert!(!h.state_mut().can_next(), "Next waits for the rest");
        // Enter is "Continue the installation": the rest runs, the page stays.
        enter(&mut h);
        assert!(h.state().session.install().run().started());
        assert_eq!(h.state().page, Page::Install);
        wait(&mut h, "the rest of the plan", |a| {
            !a.session.install().run().running()
        });
        settle(&mut h);
        assert!(h.state().session.install().finished());
        assert!(h.state_mut().can_next());
    }
}

#[test]
fn a_run_that_needs_a_restart_offers_restart_now_or_later() {
    for lang in LANGS {
        let dir = tempfile::tempdir().unwrap();
        let o = options(dir.path(), Os::Windows, lang, Some("610.74"));
        let plan = pytorch_plan(&o);
        let mut h = on_page(o, Page::Install);
        // The run as drvcore's driver step ends it: done so far, the rest after a restart.
        let mut report = RunReport::crashed(&plan, "");
        report.failure = None;
        report.restart_pending = true;
        {
            let s = &mut h.state_mut().session;
            s.on_event(Event::Run(JobId::Install, RunEvent::Done(Box::new(report))));
        }
        settle(&mut h);
        assert!(has(&h, &t(lang, "ui_restart_title")));
        assert!(has(&h, &t(lang, "ui_restart_body")));
        assert!(has(&h, &t(lang, "ui_restart_now")) && has(&h, &t(lang, "ui_restart_later")));
        assert!(
            !h.state_mut().can_next(),
            "nothing goes on before the restart"
        );
        // Later: cuda-setup is registered to open again (in a sandbox, as if it were).
        click(&mut h, &t(lang, "ui_restart_later"));
        wait(&mut h, "the restart arranged", |a| {
            a.session.install().restart().done().is_some()
        });
        settle(&mut h);
        assert_eq!(
            h.state().session.install().restart().done(),
            Some(&Ok(false))
        );
        assert!(has(&h, &t(lang, "ui_restart_later_done")));
        assert!(
            has(&h, &t(lang, "ui_restart_now")),
            "still offered after \"later\""
        );
    }
}

#[test]
fn a_click_on_the_card_body_selects_the_card() {
    let dir = tempfile::tempdir().unwrap();
    let lang = Lang::En;
    let mut h = on_page(
        options(dir.path(), Os::Windows, lang, Some("610.74")),
        Page::Choose,
    );
    assert_eq!(h.state().session.goal, Goal::Pytorch);
    // The explanation under the title, not the radio button.
    click(&mut h, &t(lang, "ui_goal_developer_body"));
    assert_eq!(h.state().session.goal, Goal::Developer);
    click(&mut h, &t(lang, "ui_goal_pytorch_body"));
    assert_eq!(h.state().session.goal, Goal::Pytorch);
    // On Welcome too.
    h.state_mut().go(Page::Welcome);
    settle(&mut h);
    click(&mut h, &t(lang, "ui_mode_repair_body"));
    assert_eq!(h.state().session.mode, cuda_setup::ui::Mode::Repair);
}
