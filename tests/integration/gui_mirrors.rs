//! Mirrors in plain names and one control (#34): the Choose page's PyPI index is the
//! PyTorch page's dropdown (official PyPI, 清华大学, 阿里云, 中国科大, another address…),
//! defaulting by language; an empty address is said, never read as a hidden choice; the
//! PyTorch page names the mirrors of its wheels as users know them.

#![cfg(unix)]

use cuda_setup::ui::Page;
use cuda_setup::ui::session::PypiChoice;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::{Goal, Method};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use super::gui::click;
use super::gui_verdict::{has, options, settle, wizard, wizard_with};
use cuda_setup::ui::App;

/// The developer goal with the wheels method, on Choose.
fn choose(root: &std::path::Path, lang: Lang) -> Harness<'static, App> {
    let mut o = options(root, lang, Goal::Developer);
    o.method = Method::Wheels;
    wizard_with(o, Page::Choose)
}

/// What a dropdown shows as chosen (its button's text).
fn shown(h: &Harness<'_, App>, label: &str) -> String {
    let n = h.get_by_label(label);
    let n = n.accesskit_node();
    n.value().or_else(|| n.label()).unwrap_or_default()
}

#[test]
fn the_chinese_choose_page_picks_the_pypi_mirror_by_name_in_a_dropdown() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = choose(dir.path(), Lang::Zh);
    assert_eq!(h.state().session.settings.pypi, PypiChoice::Listed(1));
    assert!(
        shown(&h, "PyPI 镜像").contains("清华大学"),
        "{}",
        shown(&h, "PyPI 镜像")
    );
    assert_eq!(
        h.state().session.choices().pypi_index.as_deref(),
        Some("https://pypi.tuna.tsinghua.edu.cn/simple")
    );
    assert!(has(&h, "中文界面默认从清华大学镜像下载这些安装包"));
    // No name a beginner must type, no placeholder that looks like a value.
    assert!(!has(&h, "tsinghua"));

    click(&mut h, "PyPI 镜像");
    settle(&mut h);
    for entry in ["PyPI 官方（pypi.org）", "阿里云", "中国科大", "其他地址…"] {
        assert!(has(&h, entry), "{entry}");
    }
    click(&mut h, "阿里云");
    settle(&mut h);
    assert_eq!(h.state().session.settings.pypi, PypiChoice::Listed(2));
    assert_eq!(
        h.state().session.choices().pypi_index.as_deref(),
        Some("https://mirrors.aliyun.com/pypi/simple/"),
        "the plan is made with Aliyun's index"
    );
    assert!(!has(&h, "中文界面默认"), "the user's own choice now");

    // Another address: a field opens, empty, and the page says what is used meanwhile.
    click(&mut h, "PyPI 镜像");
    settle(&mut h);
    click(&mut h, "其他地址…");
    settle(&mut h);
    assert_eq!(
        h.state().session.settings.pypi,
        PypiChoice::Address(String::new())
    );
    assert_eq!(h.state().session.choices().pypi_index, None);
    assert!(has(&h, "请填写镜像网址"), "the empty field is said");
    h.get_by_label("镜像网址").focus();
    h.get_by_label("镜像网址")
        .type_text("https://mirror.example/pypi/simple");
    settle(&mut h);
    assert!(!has(&h, "请填写镜像网址"));
    assert_eq!(
        h.state().session.choices().pypi_index.as_deref(),
        Some("https://mirror.example/pypi/simple")
    );
}

#[test]
fn the_english_choose_page_starts_with_the_official_pypi() {
    let dir = tempfile::tempdir().unwrap();
    let h = choose(dir.path(), Lang::En);
    assert_eq!(h.state().session.settings.pypi, PypiChoice::Listed(0));
    assert!(shown(&h, "PyPI mirror").contains("PyPI (official, pypi.org)"));
    assert_eq!(h.state().session.choices().pypi_index, None);
    assert!(!has(&h, "Tsinghua University mirror"));
}

#[test]
fn a_mirror_named_on_the_command_line_is_its_dropdown_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path(), Lang::En, Goal::Developer);
    o.method = Method::Wheels;
    o.pypi_mirror = Some("ustc".into());
    let h = wizard_with(o, Page::Choose);
    assert_eq!(h.state().session.settings.pypi, PypiChoice::Listed(3));
    assert!(shown(&h, "PyPI mirror").contains("USTC"));
}

#[test]
fn the_pytorch_page_names_its_wheel_mirrors_in_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = wizard(dir.path(), Lang::Zh, Goal::Pytorch, Page::Pytorch);
    assert!(shown(&h, "其他依赖包的 PyPI 镜像").contains("清华大学"));
    click(&mut h, "PyTorch 的下载来源");
    settle(&mut h);
    assert!(has(
        &h,
        "南京大学镜像 — https://mirror.nju.edu.cn/pytorch/whl"
    ));
    assert!(has(
        &h,
        "上海交通大学镜像 — https://mirror.sjtu.edu.cn/pytorch-wheels"
    ));
    assert!(!has(&h, "NJU") && !has(&h, "SJTU"), "no abbreviations");
    click(
        &mut h,
        "上海交通大学镜像 — https://mirror.sjtu.edu.cn/pytorch-wheels",
    );
    settle(&mut h);
    assert_eq!(
        h.state().pages.torch.torch_index,
        "https://mirror.sjtu.edu.cn/pytorch-wheels"
    );
    assert!(shown(&h, "PyTorch 的下载来源").contains("上海交通大学镜像"));
}

/// The new states measured (WCAG AA, `ui::contrast`) in both themes: the dropdown open,
/// and "another address…" with its empty field and the note under it.
#[test]
fn the_dropdown_and_the_address_note_reach_wcag_aa_in_both_themes() {
    use cuda_setup::ui::contrast;
    use cuda_setup::ui::fonts::FontSource;
    for theme in [egui::Theme::Light, egui::Theme::Dark] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(dir.path(), Lang::Zh, Goal::Developer);
        o.method = Method::Wheels;
        let mut h = Harness::builder()
            .with_size([1000.0, 1600.0])
            .with_theme(theme)
            .with_context_setup(|ctx| {
                cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
            })
            .build_ui_state(|ui, app: &mut App| app.show(ui), App::new(o));
        let t0 = std::time::Instant::now();
        while h.state().session.system().report().is_none() {
            h.step();
            assert!(t0.elapsed().as_secs() < 60, "detection");
            std::thread::sleep(std::time::Duration::from_millis(15));
        }
        h.state_mut().page = Page::Choose;
        settle(&mut h);
        let measure = |h: &Harness<'_, App>, what: &str| {
            let base = h.ctx.style_of(theme).visuals.panel_fill;
            let bad = contrast::failing(&h.output().shapes, base);
            assert!(bad.is_empty(), "{theme:?} {what}: {bad:?}");
        };
        click(&mut h, "PyPI 镜像");
        settle(&mut h);
        assert!(has(&h, "其他地址…"));
        measure(&h, "the dropdown open");
        click(&mut h, "其他地址…");
        settle(&mut h);
        assert!(has(&h, "请填写镜像网址"));
        measure(&h, "the empty address and its note");
    }
}

/// #34: in Chinese PyTorch's wheels start measured ("自动（测速选择）", no address to
/// type), while the other packages' PyPI stays 清华 with "自动（测速选择）" first in its
/// list; English starts at PyTorch's own server. Picking a mirror is an explicit choice.
#[test]
fn chinese_starts_with_measured_torch_sources_and_tsinghua_with_auto_listed_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = wizard(dir.path(), Lang::Zh, Goal::Pytorch, Page::Pytorch);
    assert!(h.state().session.torch().torch_auto());
    assert!(!h.state().session.torch().pypi_auto());
    assert!(shown(&h, "PyTorch 的下载来源").contains("自动（测速选择）"));
    assert!(has(&h, "安装时会测量 PyTorch 官方服务器和各个镜像的速度"));
    assert!(shown(&h, "其他依赖包的 PyPI 镜像").contains("清华大学"));

    click(&mut h, "其他依赖包的 PyPI 镜像");
    settle(&mut h);
    assert!(has(&h, "自动（测速选择）"));
    click(&mut h, "自动（测速选择）");
    settle(&mut h);
    assert!(h.state().session.torch().pypi_auto());
    assert!(shown(&h, "其他依赖包的 PyPI 镜像").contains("自动（测速选择）"));

    click(&mut h, "PyTorch 的下载来源");
    settle(&mut h);
    click(
        &mut h,
        "南京大学镜像 — https://mirror.nju.edu.cn/pytorch/whl",
    );
    settle(&mut h);
    assert!(
        !h.state().session.torch().torch_auto(),
        "a mirror picked wins"
    );
    assert_eq!(
        h.state().pages.torch.torch_index,
        "https://mirror.nju.edu.cn/pytorch/whl"
    );

    let dir = tempfile::tempdir().unwrap();
    let h = wizard(dir.path(), Lang::En, Goal::Pytorch, Page::Pytorch);
    assert!(!h.state().session.torch().torch_auto());
    assert!(
        shown(&h, "Where PyTorch downloads from").contains("PyTorch's own server"),
        "{}",
        shown(&h, "Where PyTorch downloads from")
    );
}

/// The Choose page's PyPI dropdown is the same list: measured first, then the indexes.
#[test]
fn the_choose_page_offers_the_measured_pypi_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = choose(dir.path(), Lang::Zh);
    click(&mut h, "PyPI 镜像");
    settle(&mut h);
    click(&mut h, "自动（测速选择）");
    settle(&mut h);
    assert_eq!(h.state().session.settings.pypi, PypiChoice::Auto);
    let c = h.state().session.choices();
    assert!(c.pypi_auto && c.pypi_index.is_none());
}
