//! One hint system, in the Chinese wizard (#31): a failure's "what to do" is the wizard's
//! own words, naming only buttons the page shows (or pages of its step bar); the command
//! line's hint — English, naming flags — never appears, neither in front nor under
//! "Details" (which holds the raw error alone) nor in the log.

#![cfg(unix)]

use std::sync::Arc;

use cuda_setup::ui::text::t;
use cuda_setup::ui::{App, Page};
use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::recommend::Goal;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use super::gui::{Dropped, Machine, click, harness, has, settle, wait};
use super::gui_walk::visible;
use crate::support::standin::windows_installer;
use crate::support::words::problem;

/// The names in “…” quotes.
fn quoted(s: &str) -> Vec<String> {
    s.split('“')
        .skip(1)
        .filter_map(|p| p.split_once('”').map(|(name, _)| name.to_string()))
        .collect()
}

/// The "what to do" line on screen (there is one).
pub(crate) fn what_to_do(h: &Harness<'_, App>, lang: Lang) -> String {
    let prefix = t(lang, "ui_what_to_do").replace("{hint}", "");
    let mut texts: Vec<String> = visible(h)
        .into_iter()
        .filter(|s| s.starts_with(&prefix))
        .collect();
    // A label is listed with its text runs (a wrapped line's first row among them).
    texts.sort_by_key(|s| std::cmp::Reverse(s.len()));
    assert!(
        !texts.is_empty() && texts.iter().all(|s| texts[0].starts_with(s.as_str())),
        "{texts:?}"
    );
    texts[0].clone()
}

/// Each name the line quotes is a button (or a page of the step bar, "3. 选择方案") on
/// this screen: a widget labelled so.
pub(crate) fn quoted_names_are_on_screen(h: &Harness<'_, App>, line: &str) {
    for name in quoted(line) {
        let step = format!(". {name}");
        assert!(
            h.query_all_by_label(&name).next().is_some()
                || visible(h).iter().any(|s| s.ends_with(&step)),
            "“{name}” is not on this page: {line}\n{:?}",
            visible(h)
        );
    }
}

/// Every text on screen but `raw` (the unfolded details) and the log's lines, judged by
/// the walk's rule (no English sentence among the Chinese).
fn no_english_in_front(h: &Harness<'_, App>, raw: &[&str], log: &[String]) {
    for s in visible(h) {
        // (A wrapped text is also listed row by row.)
        if raw.iter().any(|r| r.contains(&s)) || log.iter().any(|l| l.contains(&s)) {
            continue;
        }
        if let Some(why) = problem(&s, Lang::Zh) {
            panic!("{s:?}: {why}");
        }
    }
}

/// The Install page after NVIDIA's download failed (the mirror has no such file, NVIDIA's
/// server cannot be reached), in Chinese.
#[test]
fn a_failed_install_in_chinese_names_its_own_button_and_no_command_line_hint() {
    let m = Machine::new(windows_installer(0, 0));
    let o = m.options_nvidia_unreachable(Lang::Zh);
    let zh = |k| t(Lang::Zh, k);
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, &zh("ui_next"));
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, &zh("ui_next"));
    click(&mut h, &zh("ui_goal_developer"));
    click(&mut h, &zh("ui_next"));
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    click(&mut h, &zh("ui_start_install"));
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);
    let f = h
        .state()
        .session
        .install()
        .run()
        .report()
        .cloned()
        .unwrap()
        .failure
        .unwrap();
    let cli_hint = render(&f.hint, Lang::En);
    assert!(cli_hint.contains("--mirror"), "{cli_hint}");

    let line = what_to_do(&h, Lang::Zh);
    assert!(
        line.contains(&format!("“{}”", zh("ui_try_again"))),
        "{line}"
    );
    quoted_names_are_on_screen(&h, &line);
    click(&mut h, &zh("ui_details"));
    settle(&mut h);
    // Details: the raw error, nothing else; the command line's hint nowhere.
    assert!(has(&h, "HTTP 404"));
    let texts = visible(&h);
    assert!(texts.iter().any(|s| s == f.error.trim()), "{texts:?}");
    for s in &texts {
        assert!(
            !s.contains(&cli_hint) && !s.contains("--mirror") && !s.contains("HTTPS_PROXY"),
            "the command line's hint on screen: {s}"
        );
    }
    let log = h.state().session.install().run().log().to_vec();
    assert!(log.iter().all(|l| !l.contains(&cli_hint)), "{log:?}");
    no_english_in_front(&h, &[&f.error], &log);
}

/// The PyTorch page after pip failed, in Chinese: the page has no "Try again", so the words
/// name its own install button.
#[test]
fn a_failed_pip_in_chinese_names_the_pytorch_pages_own_button() {
    let dir = tempfile::tempdir().unwrap();
    let o = super::gui_verdict::options(dir.path(), Lang::Zh, Goal::Pytorch);
    let mut h = super::gui_verdict::wizard_with(o, Page::Pytorch);
    let install = t(Lang::Zh, "ui_install_pytorch");
    click(&mut h, &install);
    wait(&mut h, "pip", |a| {
        !a.session.torch().run().running() && a.session.torch().run().report().is_some()
    });
    settle(&mut h);
    let f = h
        .state()
        .session
        .torch()
        .run()
        .report()
        .cloned()
        .unwrap()
        .failure
        .unwrap();
    let cli_hint = render(&f.hint, Lang::En);

    let line = what_to_do(&h, Lang::Zh);
    assert!(line.contains(&format!("“{install}”")), "{line}");
    assert!(!line.contains(&t(Lang::Zh, "ui_try_again")), "{line}");
    quoted_names_are_on_screen(&h, &line);
    for d in h
        .query_all_by_label(&t(Lang::Zh, "ui_details"))
        .collect::<Vec<_>>()
    {
        d.click();
    }
    h.step();
    h.step();
    settle(&mut h);
    for s in visible(&h) {
        assert!(
            !s.contains(&cli_hint) && !s.contains("--pypi-mirror"),
            "the command line's hint on screen: {s}"
        );
    }
}

/// A file that is no zip, dropped on the cuDNN page in Chinese: refused, with the page's
/// own "Choose file" named; Details holds the refusal alone.
#[test]
fn a_refused_cudnn_archive_in_chinese_has_no_english_hint_under_details() {
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(Lang::Zh);
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, &t(Lang::Zh, "ui_next"));
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, &t(Lang::Zh, "ui_next"));
    settle(&mut h);
    h.state_mut().go(Page::Cudnn);
    settle(&mut h);
    let bad = m
        .work
        .path()
        .join("cudnn-windows-x86_64-9.10.2.21_cuda11-archive.zip");
    std::fs::write(&bad, b"not a zip at all").unwrap();
    h.input_mut().dropped_files.push(Arc::new(Dropped(bad)));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    settle(&mut h);
    assert!(has(&h, &t(Lang::Zh, "ui_refused_not_zip")));
    let line = what_to_do(&h, Lang::Zh);
    assert!(
        line.contains(&format!("“{}”", t(Lang::Zh, "ui_choose_file"))),
        "{line}"
    );
    quoted_names_are_on_screen(&h, &line);
    click(&mut h, &t(Lang::Zh, "ui_details"));
    settle(&mut h);
    let raw = match &h.state().session.cudnn().check() {
        Some(Err(r)) => r.detail(),
        other => panic!("{other:?}"),
    };
    let texts = visible(&h);
    assert!(texts.iter().any(|s| s == raw.trim()), "{texts:?}");
    for s in &texts {
        assert!(
            !s.contains("repack") && !s.contains("download the archive"),
            "{s}"
        );
    }
    no_english_in_front(&h, &[&raw], &[]);
}
