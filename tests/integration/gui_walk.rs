//! The wizard walked page by page in Chinese, as a beginner would, reading every text on
//! screen (labels, buttons and their values from egui's accessibility tree): anything that
//! is not the catalogue's words fails — an English sentence, `Some(`, `None`, backticks, a
//! raw snake_case identifier, a `{placeholder}` left unfilled. Paths, URLs, versions,
//! commands and package names pass: they are placeholder values, the same in every
//! language. The same walk in English checks the markup rules. Jargon (cu118, sm_86,
//! "GA", PTX, 核函数) fails too, in any language, outside commands and addresses: it
//! belongs behind "Why this recommendation?" and "Details", which the walk leaves closed
//! (their default), so what it reads is the front line.
//!
//! Every frame the walk reads has exactly one primary button, and Enter presses it: the
//! walk moves on with Enter wherever the primary is the way forward (Welcome, System,
//! Choose, Prepare, Install, cuDNN with a checked archive, PyTorch, Repair with findings).
//! Both goals are walked, and repair. Also: the cuDNN page's Undo button (click, confirm,
//! the toolkit folder back as it was).

#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_setup::ui::widgets::primaries_drawn;
use cuda_setup::ui::{App, Page};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::Goal;
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};

use super::gui::{Dropped, INSTALLER, Machine, click, harness, has, settle, wait};
use crate::support::server::Fault;
use crate::support::standin::windows_installer;
use crate::support::words::{has_han, problem};

/// Every text on screen in the order it is laid out: each node's label and value.
pub(crate) fn visible(h: &Harness<'_, App>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in h.query_all(By::new()) {
        let node = n.accesskit_node();
        // A label's text is its value too (accesskit): once per node.
        let (label, value) = (node.label(), node.value());
        let value = value.filter(|v| Some(v) != label.as_ref());
        for s in [label, value].into_iter().flatten() {
            let s = s.trim().to_string();
            if !s.is_empty() {
                out.push(s);
            }
        }
    }
    out
}

/// A word said twice in a row across two texts: a label ("驱动") and a value that
/// names it again ("驱动 522.06"), or a control's caption repeated beside it.
fn doubled(texts: &[String]) -> Vec<String> {
    texts
        .windows(2)
        .filter(|w| {
            let (a, b) = (&w[0], &w[1]);
            has_han(a) && a.chars().count() <= 8 && b.starts_with(&format!("{a} "))
        })
        .map(|w| format!("{:?} then {:?}: a doubled word", w[0], w[1]))
        .collect()
}

/// The run logs' lines: the raw details a user unfolds on purpose ("Log", "pip output").
fn log_lines(app: &App) -> Vec<String> {
    let s = &app.session;
    s.install()
        .run()
        .log()
        .iter()
        .chain(s.torch().run().log())
        .chain(s.repair().log())
        .map(|l| l.trim().to_string())
        .collect()
}

/// What one page shows that breaks the rules, said as `page: "text" (why)`. Other gui
/// tests walk their own journeys with it: `Walk::new(lang)`, `read` on each page
/// (catalogue words, no jargon in front, one primary button), `verdict` at the end.
#[derive(Default)]
pub(crate) struct Walk {
    lang: Option<Lang>,
    found: BTreeMap<String, Vec<String>>,
    pages: Vec<Page>,
}

impl Walk {
    pub(crate) fn new(lang: Lang) -> Walk {
        Walk {
            lang: Some(lang),
            ..Walk::default()
        }
    }

    pub(crate) fn read(&mut self, h: &mut Harness<'_, App>, what: &str) {
        settle(h);
        let lang = self.lang.expect("a language");
        let page = h.state().page;
        if !self.pages.contains(&page) {
            self.pages.push(page);
        }
        let logs = log_lines(h.state());
        let page_name = format!("{page:?}");
        let primaries = primaries_drawn(&h.ctx);
        if primaries != 1 {
            self.found
                .entry(format!("{page_name} ({what})"))
                .or_default()
                .push(format!("{primaries} primary buttons, not one"));
        }
        let texts = visible(h);
        // The walk reads what is there: every page says something in the user's language.
        assert!(
            lang != Lang::Zh || texts.iter().any(|t| has_han(t)),
            "{page_name}: no Chinese text at all: {texts:?}"
        );
        for d in doubled(&texts) {
            self.found
                .entry(format!("{page_name} ({what})"))
                .or_default()
                .push(d);
        }
        let mut seen: Vec<&String> = Vec::new();
        for s in &texts {
            if seen.contains(&s) {
                continue;
            }
            seen.push(s);
            let s = s.clone();
            if logs.iter().any(|l| *l == s || l.ends_with(&s)) {
                continue;
            }
            if let Some(why) = problem(&s, lang) {
                self.found
                    .entry(format!("{page_name} ({what})"))
                    .or_default()
                    .push(format!("{s:?}: {why}"));
            }
        }
    }

    pub(crate) fn verdict(&self) {
        assert!(
            self.found.is_empty(),
            "texts that are not the catalogue's plain words:\n{:#?}",
            self.found
        );
    }
}

/// Enter, as a user presses it with no text field in focus: the page's primary button.
pub(crate) fn enter(h: &mut Harness<'_, App>) {
    let focused = h.ctx.memory(|m| m.focused());
    assert!(focused.is_none(), "a widget has the keyboard: {focused:?}");
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
}

/// Every page of a first-time developer setup, through to Done; then a failed run and
/// Repair with findings.
fn walk(lang: Lang) {
    let mut w = Walk::new(lang);
    let zh = lang == Lang::Zh;
    let next = if zh { "下一步" } else { "Next" };
    let start = if zh {
        "开始安装"
    } else {
        "Start installing"
    };
    let install_cudnn = if zh { "安装 cuDNN" } else { "Install cuDNN" };
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(lang);
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o));
    h.step();
    w.read(&mut h, "start");
    enter(&mut h);
    assert_eq!(h.state().page, Page::System, "Enter is Next on Welcome");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    w.read(&mut h, "detected");
    enter(&mut h);
    assert_eq!(h.state().page, Page::Choose);
    w.read(&mut h, "recommendation");
    click(&mut h, if zh { "高级选项" } else { "Advanced" });
    w.read(&mut h, "advanced options");
    click(&mut h, next);
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    w.read(&mut h, "checks");
    assert!(h.state().session.prepare().ready());
    assert!(has(&h, start), "the primary says what it starts");
    enter(&mut h);
    assert_eq!(h.state().page, Page::Install, "Enter starts the install");
    wait(&mut h, "install", |a| !a.session.install().run().running());
    assert!(h.state().session.install().run().succeeded());
    w.read(&mut h, "finished run");
    enter(&mut h);
    assert_eq!(h.state().page, Page::Cudnn);
    w.read(&mut h, "before an archive");
    let not_zip = m
        .work
        .path()
        .join("cudnn-windows-x86_64-9.10.2.21_cuda11-archive.zip.txt");
    std::fs::write(&not_zip, b"not a zip at all").unwrap();
    h.input_mut().dropped_files.push(Arc::new(Dropped(not_zip)));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    assert!(matches!(h.state().session.cudnn().check(), Some(Err(_))));
    w.read(&mut h, "archive refused");
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(m.cudnn_zip())));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    w.read(&mut h, "archive checked");
    // The primary is "Install cuDNN" now (Next waits for it), and Enter presses it.
    h.get_by_label(install_cudnn);
    enter(&mut h);
    wait(&mut h, "cuDNN install", |a| {
        a.session.cudnn().installed().is_some()
    });
    assert!(matches!(h.state().session.cudnn().installed(), Some(Ok(_))));
    w.read(&mut h, "installed");
    click(&mut h, next);
    wait(&mut h, "smoke", |a| a.session.verify().report().is_some());
    w.read(&mut h, "GPU test");
    click(&mut h, next);
    w.read(&mut h, "before pip");
    // Next never skips the PyTorch install silently: it says so.
    click(
        &mut h,
        if zh {
            "先不装 PyTorch，继续"
        } else {
            "Go on without PyTorch"
        },
    );
    w.read(&mut h, "summary");

    // A run that fails: the mirror has no installer.
    let m = Machine::new(windows_installer(0, 0));
    m.server.set_fault(
        INSTALLER,
        Fault {
            status: Some((404, 1000)),
            ..Fault::default()
        },
    );
    let mut o = m.options(lang);
    let dead = crate::support::server::dead_base();
    for r in &mut o.tables.toolkits.releases {
        if let Some(i) = r.windows_local.as_mut() {
            i.url = Some(format!("{dead}{INSTALLER}"));
        }
    }
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, next);
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, next);
    click(&mut h, next);
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    click(&mut h, start);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    assert!(
        h.state()
            .session
            .install()
            .run()
            .report()
            .unwrap()
            .failure
            .is_some()
    );
    w.read(&mut h, "failed run");

    // Repair with findings: a toolkit whose environment was never set.
    let m = Machine::new(windows_installer(0, 0));
    let parent = m
        .root()
        .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let tk = crate::support::cudnn_zip::toolkit(&parent, "11.8.0");
    std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
    let mut h = harness(App::new(m.options(lang)));
    h.step();
    click(&mut h, next);
    assert_eq!(h.state().page, Page::Repair);
    wait(&mut h, "audit", |a| a.session.repair().findings().is_some());
    assert!(cuda_setup_core::repair::problems(h.state().session.repair().findings().unwrap()) > 0);
    w.read(&mut h, "findings");
    // "Fix N problems" is the primary: Enter fixes, then the audit runs again.
    enter(&mut h);
    assert!(h.state().session.repair().fixing() || h.state().session.repair().fixed().is_some());
    wait(&mut h, "fix and audit", |a| {
        a.session.repair().fixed().is_some() && !a.session.repair().busy()
    });
    w.read(&mut h, "fixed");

    for p in [
        Page::Welcome,
        Page::System,
        Page::Choose,
        Page::Prepare,
        Page::Install,
        Page::Cudnn,
        Page::Verify,
        Page::Pytorch,
        Page::Done,
        Page::Repair,
    ] {
        assert!(w.pages.contains(&p), "the walk missed {p:?}: {:?}", w.pages);
    }
    w.verdict();
}

/// The PyTorch goal, Enter all the way: the driver checked, the wheel installed into the
/// stand-in Python by Enter on the PyTorch page, the doctor's verdict, Done.
fn walk_pytorch(w: &mut Walk, lang: Lang) {
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(lang)));
    h.step();
    enter(&mut h);
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    enter(&mut h);
    assert_eq!(h.state().page, Page::Choose);
    w.read(&mut h, "PyTorch goal");
    enter(&mut h);
    if h.state().page == Page::Prepare {
        wait(&mut h, "prepare", |a| !a.session.prepare().running());
        w.read(&mut h, "PyTorch goal checks");
        enter(&mut h);
    }
    if h.state().page == Page::Install {
        wait(&mut h, "install", |a| !a.session.install().run().running());
        w.read(&mut h, "PyTorch goal run");
        enter(&mut h);
    }
    assert_eq!(h.state().page, Page::Pytorch);
    w.read(&mut h, "PyTorch goal, before pip");
    // Enter is "Install PyTorch", not Next: pip runs, then the doctor.
    enter(&mut h);
    assert_eq!(h.state().page, Page::Pytorch);
    assert!(h.state().session.torch().run().started(), "Enter ran pip");
    wait(&mut h, "pip and the doctor", |a| {
        !a.session.torch().busy() && a.session.torch().doctor().is_some()
    });
    w.read(&mut h, "PyTorch works");
    // Working now: Next is the primary.
    enter(&mut h);
    assert_eq!(h.state().page, Page::Done);
    w.read(&mut h, "PyTorch goal summary");
}

#[test]
fn every_page_in_chinese_shows_only_the_catalogues_words() {
    walk(Lang::Zh);
}

#[test]
fn every_page_in_english_has_no_raw_markup() {
    walk(Lang::En);
}

/// The PyTorch goal's walk, a test of its own so that it runs beside the others.
#[test]
fn the_pytorch_goal_in_chinese_and_english_goes_on_with_enter() {
    for lang in [Lang::Zh, Lang::En] {
        let mut w = Walk::new(lang);
        walk_pytorch(&mut w, lang);
        for p in [Page::Choose, Page::Pytorch, Page::Done] {
            assert!(w.pages.contains(&p), "the walk missed {p:?}: {:?}", w.pages);
        }
        w.verdict();
    }
}

/// The checks themselves: each rule catches what it names and lets technical values by.
#[test]
fn the_rules_catch_raw_text_and_pass_technical_values() {
    for (s, bad) in [
        ("installer exit Some(0)", true),
        ("修复方法：set_env", true),
        ("a libloading error occurred: libnvidia-ml.so.1", true),
        ("every source failed: HTTP 404", true),
        ("详细信息：every source failed: HTTP 404 (dns error)", true),
        ("请运行：cuda-setup install --cuda <版本>。", false),
        ("驱动 {driver}", true),
        ("请运行 `cuda-setup repair`", true),
        ("torch.version.cuda 为 None", true),
        ("NVIDIA GeForce RTX 3060", false),
        (
            "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8",
            false,
        ),
        (
            "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118",
            false,
        ),
        ("驱动 522.06 最高支持 CUDA 11.8", false),
        ("DataLoader 的 num_workers", false),
        ("按 windows 系统处理", true),
        ("按 Windows 系统处理", false),
        ("出现“CUDA out of memory”（显存不足）", false),
        ("出现“CUDA out of memory”，then make it smaller", true),
        // Jargon stays behind "why" and "Details"; plain words in front.
        ("CUDA 11.8 GA", true),
        ("PyTorch 2.7.1 (cu118)", true),
        ("torch 2.7.1+cu118", true),
        ("NVIDIA GeForce RTX 3060 (sm_86)", true),
        ("内置 PTX 代码", true),
        ("编译核函数", true),
        ("NVIDIA GeForce RTX 3060 (Ampere)", false),
        ("PyTorch 2.7.1 (for CUDA 11.8)", false),
        ("CUDA 12.4 Update 1", false),
        (
            "https://download.pytorch.org/whl/cu118/torch-2.7.1-cp311-cp311-linux_x86_64.whl",
            false,
        ),
    ] {
        assert_eq!(
            problem(s, Lang::Zh).is_some(),
            bad,
            "{s}: {:?}",
            problem(s, Lang::Zh)
        );
    }
}

/// Every file under `dir` but our own state, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".cuda-setup") {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

#[test]
fn the_cudnn_undo_button_puts_the_toolkit_folder_back() {
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(Lang::Zh);
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, "下一步");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "下一步");
    settle(&mut h);
    let dir = h
        .state()
        .toolkit_dir()
        .expect("a toolkit in the recommendation");
    let tk = crate::support::cudnn_zip::toolkit(dir.parent().unwrap(), "11.8.0");
    assert_eq!(tk, dir);
    // A header of the user's own that cuDNN's archive also brings.
    std::fs::write(tk.join("include/cudnn_version.h"), b"/* the user's own */").unwrap();
    let before = snapshot(&tk);

    h.state_mut().go(Page::Cudnn);
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(m.cudnn_zip())));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    click(&mut h, "安装 cuDNN");
    wait(&mut h, "cuDNN install", |a| {
        matches!(a.session.cudnn().installed(), Some(Ok(_)))
    });
    assert!(tk.join("bin/cudnn64_9.dll").is_file());
    assert_ne!(snapshot(&tk), before);

    // Undo asks first; Cancel changes nothing.
    click(&mut h, "撤销：卸载 cuDNN");
    settle(&mut h);
    assert!(
        h.query_all(By::new().label_contains("要从"))
            .next()
            .is_some()
    );
    click(&mut h, "取消");
    assert!(tk.join("bin/cudnn64_9.dll").is_file());
    click(&mut h, "撤销：卸载 cuDNN");
    click(&mut h, "确定卸载");
    wait(&mut h, "cuDNN undo", |a| {
        a.session.cudnn().undone().is_some()
    });
    settle(&mut h);
    assert!(
        matches!(h.state().session.cudnn().undone(), Some(Ok(_))),
        "{:?}",
        h.state().session.cudnn().undone().map(|r| r.as_ref().err())
    );
    assert!(
        h.query_all(By::new().label_contains("已恢复原样"))
            .next()
            .is_some()
    );
    assert_eq!(snapshot(&tk), before, "the folder is as it was");
    // Nothing installed now: Next waits for an install or a skip, and Install is offered.
    assert!(!h.state_mut().can_next());
    assert!(h.query_all(By::new().label("安装 cuDNN")).next().is_some());
}

/// Choose, wheels method: in Chinese the wheels' PyPI index starts as the Tsinghua mirror
/// (the PyTorch page's default, one source of truth), said on the page with how to turn it
/// off; emptied, it stays off; English starts with pypi.org. The Advanced panel names
/// "连接数" once (the slider has no caption of its own beside the grid's).
#[test]
fn chinese_wheels_default_to_the_mirror_and_the_connections_slider_is_named_once() {
    use cuda_setup::ui::session::{Action, PypiChoice};
    use cuda_setup_core::recommend::Method;
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(Lang::Zh);
    o.goal = Some(Goal::Developer);
    o.method = Method::Wheels;
    let mut h = harness(App::new(o));
    h.step();
    enter(&mut h);
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    enter(&mut h);
    assert_eq!(h.state().page, Page::Choose);
    settle(&mut h);
    let s = &h.state().session;
    assert_eq!(s.settings.pypi, PypiChoice::Listed(1));
    assert_eq!(
        s.choices().pypi_index.as_deref(),
        Some("https://pypi.tuna.tsinghua.edu.cn/simple")
    );
    let note = "中文界面默认从清华大学镜像下载这些安装包";
    assert!(
        has(&h, note),
        "the default is said, with how to turn it off"
    );

    click(&mut h, "高级选项");
    let named: Vec<_> = h
        .query_all_by_label("连接数")
        .filter(|n| n.accesskit_node().role() != egui::accesskit::Role::Slider)
        .collect();
    assert_eq!(named.len(), 1, "连接数 once");
    let slider = h.get_by_role(egui::accesskit::Role::Slider);
    assert_eq!(slider.accesskit_node().label().as_deref(), Some("连接数"));

    // Turned off (the official PyPI chosen), it stays off, in either language.
    let off = cuda_setup::ui::session::Settings {
        pypi: PypiChoice::Listed(0),
        ..h.state().session.settings.clone()
    };
    h.state_mut().apply(Action::SetSettings(off));
    settle(&mut h);
    assert!(!has(&h, note));
    assert_eq!(h.state().session.choices().pypi_index, None);
    h.state_mut().apply(Action::SetLang(Lang::En));
    h.state_mut().apply(Action::SetLang(Lang::Zh));
    assert_eq!(h.state().session.settings.pypi, PypiChoice::Listed(0));

    // English: pypi.org, as before; switching language before a plan follows it.
    let m = Machine::new(windows_installer(0, 0));
    let mut app = App::new(m.options(Lang::En));
    assert_eq!(app.session.settings.pypi, PypiChoice::Listed(0));
    app.apply(Action::SetLang(Lang::Zh));
    assert_eq!(app.session.settings.pypi, PypiChoice::Listed(1));
    app.apply(Action::SetLang(Lang::En));
    assert_eq!(app.session.settings.pypi, PypiChoice::Listed(0));
}
