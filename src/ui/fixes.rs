//! What the wizard tells the user to do about a failure, on the page that shows it: its
//! own words for the failure's kind (`ui_fix_*`) — never the command line's hint, which
//! names flags and commands — then the button of that page that runs the work again. A
//! name in quotes is a button drawn on that page or a page in the step bar; a sentence
//! that leads to another page is said only where that page is on the way back.

use cuda_setup_core::i18n::Lang;
use cuda_setup_core::message::Message;
use cuda_setup_core::run::Failure;
use cuda_setup_core::steps::FailureKind;
use cuda_setup_core::steps::unreachable::{self, Source, Unreachable};

use super::flow::Page;
use super::text::{msg, t, tf};

/// A failure's plain-words parameters (`Failure::params`).
type Params = std::collections::BTreeMap<&'static str, String>;

/// Where a failure is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Here {
    /// The page that shows it.
    pub page: Page,
    /// The label, as drawn, of that page's button that runs the failed work again (None:
    /// no such button is shown).
    pub again: Option<String>,
    /// The mirrors of PyTorch's index the page's source dropdown offers: (name as drawn,
    /// base address), to name when PyTorch's server cannot be reached (#34).
    pub torch_mirrors: Vec<(String, String)>,
}

impl Here {
    pub fn new(page: Page, again: Option<String>) -> Here {
        Here {
            page,
            again,
            torch_mirrors: Vec::new(),
        }
    }

    /// With the mirrors the page's PyTorch source dropdown offers.
    pub fn with_torch_mirrors(mut self, mirrors: Vec<(String, String)>) -> Here {
        self.torch_mirrors = mirrors;
        self
    }
}

/// The controls a page draws that its what-to-do may name (catalogue keys of their
/// labels): the PyTorch page's two source dropdowns, Choose's "I will install the driver
/// myself".
pub fn controls(page: Page) -> &'static [&'static str] {
    match page {
        Page::Pytorch => &["ui_torch_source", "ui_pypi_mirror"],
        Page::Choose => &["ui_driver_myself"],
        _ => &[],
    }
}

/// The wizard's words for a kind; written out, so the catalogue's checks see each key.
/// `params` decides between a text with a figure and one without.
fn kind_key(kind: FailureKind, page: Page, params: &Params) -> &'static str {
    match kind {
        // The checks are on the page before Install; elsewhere the details name them.
        FailureKind::Preflight if page == Page::Install => "ui_fix_preflight",
        FailureKind::Preflight => "ui_fix_preflight_details",
        FailureKind::DownloadNetwork => "ui_fix_download_network",
        FailureKind::DownloadMissing => "ui_fix_download_missing",
        FailureKind::DownloadCorrupt => "ui_fix_download_corrupt",
        FailureKind::DownloadOther => "ui_fix_download_other",
        FailureKind::DiskFull if params.contains_key("needed") => "ui_fix_disk_full",
        FailureKind::DiskFull => "ui_fix_disk_full_some",
        FailureKind::InstallerFailed => "ui_fix_installer_failed",
        FailureKind::InstallerTimeout => "ui_fix_installer_timeout",
        FailureKind::DriverSignature => "ui_fix_driver_signature",
        FailureKind::DriverFailed => "ui_fix_driver_failed",
        FailureKind::NeedsAdmin => "ui_fix_needs_admin",
        FailureKind::FileInUse => "ui_fix_file_in_use",
        FailureKind::Cudnn => "ui_fix_cudnn",
        FailureKind::Wheels => "ui_fix_wheels",
        FailureKind::Env => "ui_fix_env",
        FailureKind::Pip => "ui_fix_pip",
        FailureKind::Verify => "ui_fix_verify",
        FailureKind::Build => "ui_fix_build",
        FailureKind::Io => "ui_fix_io",
        FailureKind::Internal => "ui_fix_internal",
        FailureKind::Cancelled => "ui_fix_cancelled",
        FailureKind::Busy => "ui_fix_busy",
        FailureKind::UserFiles => "ui_fix_user_files",
    }
}

/// A sentence about the Choose page (mirrors, the wheels method): said on Install only,
/// the one page that shows a failure with Choose on the way back.
fn choose_page_key(kind: FailureKind, page: Page) -> Option<&'static str> {
    if page != Page::Install {
        return None;
    }
    match kind {
        FailureKind::DownloadNetwork
        | FailureKind::DownloadMissing
        | FailureKind::DownloadCorrupt
        | FailureKind::Wheels => Some("ui_fix_mirror"),
        FailureKind::NeedsAdmin => Some("ui_fix_needs_admin_wheels"),
        _ => None,
    }
}

/// Whether doing the same again helps once the words are followed (not after a restart,
/// a report, or a change on another page).
fn again_helps(kind: FailureKind) -> bool {
    !matches!(
        kind,
        FailureKind::Preflight
            | FailureKind::DownloadOther
            | FailureKind::InstallerFailed
            | FailureKind::DriverFailed
            | FailureKind::NeedsAdmin
            | FailureKind::Env
            | FailureKind::Verify
            | FailureKind::Build
    )
}

/// What to do about a failure of `kind` (with its plain words' parameters) where `here`
/// shows it, in the user's language.
pub fn kind_text(lang: Lang, kind: FailureKind, params: &Params, here: &Here) -> String {
    let mut parts = vec![msg(
        lang,
        &Message {
            key: kind_key(kind, here.page, params),
            params: params.clone(),
        },
    )];
    if let Some(key) = choose_page_key(kind, here.page) {
        parts.push(msg(lang, &Message::new(key)));
    }
    if let Some(button) = here.again.as_deref().filter(|_| again_helps(kind)) {
        parts.push(tf(lang, "ui_fix_then_click", &[("button", &button)]));
    }
    // Chinese sentences follow each other with no space.
    parts.join(if lang == Lang::Zh { "" } else { " " })
}

/// What to do about a step's failure where `here` shows it.
pub fn what_to_do(lang: Lang, f: &Failure, here: &Here) -> String {
    match &f.unreachable {
        Some(u) => unreachable_text(lang, f.kind, u, here),
        None => kind_text(lang, f.kind, &f.params, here),
    }
}

/// A source that did not answer (#34): its name, and the control of this page that
/// changes it — PyTorch's source or PyPI mirror on the PyTorch page; for the driver,
/// installing it oneself and Choose's checkbox (on Install, with Choose on the way back).
fn unreachable_text(lang: Lang, kind: FailureKind, u: &Unreachable, here: &Here) -> String {
    let host = u.host.as_str();
    let on_torch_page = here.page == Page::Pytorch;
    let control = |key| t(lang, key);
    let first = match u.source {
        Source::TorchOfficial if on_torch_page => {
            let names: Vec<&str> = here
                .torch_mirrors
                .iter()
                .filter(|(_, base)| {
                    unreachable::host_of(base).is_some_and(|h| !h.eq_ignore_ascii_case(host))
                })
                .map(|(name, _)| name.as_str())
                .collect();
            if names.is_empty() {
                tf(lang, "ui_fix_unreachable", &[("host", &host)])
            } else {
                tf(
                    lang,
                    "ui_fix_torch_official",
                    &[
                        ("host", &host),
                        ("control", &control("ui_torch_source")),
                        ("mirrors", &names.join("/")),
                    ],
                )
            }
        }
        Source::TorchMirror if on_torch_page => tf(
            lang,
            "ui_fix_torch_mirror",
            &[("host", &host), ("control", &control("ui_torch_source"))],
        ),
        Source::Pypi if on_torch_page => tf(
            lang,
            "ui_fix_pypi",
            &[("host", &host), ("control", &control("ui_pypi_mirror"))],
        ),
        Source::NvidiaDriver => tf(lang, "ui_fix_driver_download", &[("hosts", &host)]),
        // Every source was tried: no other to suggest; the network or the proxy.
        Source::TorchAll => tf(lang, "ui_fix_torch_all", &[("hosts", &host)]),
        _ => tf(lang, "ui_fix_unreachable", &[("host", &host)]),
    };
    let mut parts = vec![first];
    // The proxy is Choose's setting: said where Choose is on the way back.
    if u.source == Source::TorchAll && matches!(here.page, Page::Pytorch | Page::Install) {
        parts.push(tf(
            lang,
            "ui_fix_proxy_choose",
            &[("page", &t(lang, Page::Choose.title_key()))],
        ));
    }
    if let Some(button) = here.again.as_deref().filter(|_| again_helps(kind)) {
        parts.push(tf(lang, "ui_fix_then_click", &[("button", &button)]));
    }
    if u.source == Source::NvidiaDriver {
        parts.push(if here.page == Page::Install {
            tf(
                lang,
                "ui_fix_driver_yourself_choose",
                &[
                    ("checkbox", &t(lang, "ui_driver_myself")),
                    ("page", &t(lang, Page::Choose.title_key())),
                ],
            )
        } else {
            t(lang, "ui_fix_driver_yourself")
        });
    }
    parts.join(if lang == Lang::Zh { "" } else { " " })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::flow::{Mode, flow};
    use crate::ui::text::t;
    use cuda_setup_core::recommend::Goal;
    use std::collections::BTreeMap;

    /// The names in “…” (or "…") quotes.
    fn quoted(s: &str) -> Vec<String> {
        let mut out = vec![];
        for (open, close) in [('“', '”'), ('"', '"')] {
            let mut rest = s;
            while let Some(i) = rest.find(open) {
                let after = &rest[i + open.len_utf8()..];
                let Some(j) = after.find(close) else { break };
                out.push(after[..j].to_string());
                rest = &after[j + close.len_utf8()..];
            }
        }
        out
    }

    /// Every page that shows a failure, with the button its page draws to run the work
    /// again (install.rs, pytorch.rs, repair.rs, cudnn.rs), in each mode's pages.
    fn places(lang: Lang) -> Vec<(Here, &'static [Page])> {
        let setup = flow(Mode::Setup, Goal::Developer, true);
        let torch = flow(Mode::Setup, Goal::Pytorch, false);
        let repair = flow(Mode::Repair, Goal::Developer, false);
        let b = |k| Some(t(lang, k));
        vec![
            (Here::new(Page::Install, b("ui_try_again")), setup),
            (
                Here::new(Page::Install, b("ui_try_again")),
                flow(Mode::Setup, Goal::Pytorch, true),
            ),
            (Here::new(Page::Pytorch, b("ui_install_pytorch")), torch),
            (Here::new(Page::Pytorch, b("ui_fix_reinstall_torch")), setup),
            (Here::new(Page::Repair, b("ui_check_again")), repair),
            (Here::new(Page::Repair, None), repair),
            (
                Here::new(
                    Page::Cudnn,
                    Some(crate::ui::text::tf(
                        lang,
                        "ui_cudnn_download_install",
                        &[("version", &"9.10.2"), ("size", &"675.6 MB")],
                    )),
                ),
                setup,
            ),
            (Here::new(Page::Cudnn, b("ui_choose_file")), setup),
            (Here::new(Page::Cudnn, b("ui_cudnn_undo")), setup),
        ]
    }

    fn params(kind: FailureKind) -> Vec<BTreeMap<&'static str, String>> {
        let mut with = BTreeMap::new();
        with.insert("needed", "3 GB".to_string());
        match kind {
            FailureKind::DiskFull => vec![with, BTreeMap::new()],
            _ => vec![BTreeMap::new()],
        }
    }

    /// Every name the wizard's what-to-do puts in quotes is a button of the page that
    /// shows it (the one that runs the work again) or a page of the step bar there.
    #[test]
    fn a_quoted_name_is_a_button_of_that_page_or_a_page_on_the_way() {
        for lang in [Lang::En, Lang::Zh] {
            for (here, pages) in places(lang) {
                let titles: Vec<String> = pages.iter().map(|p| t(lang, p.title_key())).collect();
                for kind in FailureKind::ALL {
                    for p in params(kind) {
                        let s = kind_text(lang, kind, &p, &here);
                        for name in quoted(&s) {
                            assert!(
                                here.again.as_deref() == Some(name.as_str())
                                    || titles.contains(&name),
                                "{lang:?} {kind:?} on {:?}: “{name}” is not there: {s}",
                                here.page
                            );
                        }
                        assert!(!s.contains('{'), "{s}");
                    }
                    // A source that did not answer may also name a control of this page,
                    // or of a page on the way back (Choose's checkbox from Install).
                    for u in unreachables() {
                        let s = unreachable_text(lang, kind, &u, &here);
                        let mut allowed: Vec<String> =
                            controls(here.page).iter().map(|k| t(lang, k)).collect();
                        for p in pages.iter().filter(|p| **p != here.page) {
                            allowed.extend(controls(*p).iter().map(|k| t(lang, k)));
                        }
                        for name in quoted(&s) {
                            assert!(
                                here.again.as_deref() == Some(name.as_str())
                                    || titles.contains(&name)
                                    || allowed.contains(&name),
                                "{lang:?} {u:?} on {:?}: “{name}” is not there: {s}",
                                here.page
                            );
                        }
                        assert!(!s.contains('{'), "{s}");
                        assert!(!s.contains(" --") && !s.contains('`'), "{s}");
                    }
                }
            }
        }
    }

    fn unreachables() -> Vec<Unreachable> {
        [
            (Source::TorchOfficial, "download.pytorch.org"),
            (Source::TorchMirror, "mirror.nju.edu.cn"),
            (Source::Pypi, "pypi.tuna.tsinghua.edu.cn"),
            (
                Source::NvidiaDriver,
                "us.download.nvidia.com, cn.download.nvidia.com",
            ),
            (
                Source::TorchAll,
                "download.pytorch.org, mirror.nju.edu.cn, mirror.sjtu.edu.cn",
            ),
        ]
        .into_iter()
        .map(|(source, host)| Unreachable {
            source,
            host: host.into(),
        })
        .collect()
    }

    fn torch_page(lang: Lang) -> Here {
        let t_ = |k| t(lang, k);
        Here::new(Page::Pytorch, Some(t_("ui_install_pytorch"))).with_torch_mirrors(vec![
            (
                t_("ui_mirror_nju"),
                "https://mirror.nju.edu.cn/pytorch/whl".into(),
            ),
            (
                t_("ui_mirror_sjtu"),
                "https://mirror.sjtu.edu.cn/pytorch-wheels".into(),
            ),
        ])
    }

    /// pip could not reach PyTorch's server: the words name it, the page's dropdown by its
    /// label and its mirrors by their names, then the page's own button — each the
    /// catalogue's text of that control, so they cannot drift apart.
    #[test]
    fn pytorchs_server_unreachable_names_the_dropdown_and_the_button() {
        let u = &unreachables()[0];
        let zh = unreachable_text(Lang::Zh, FailureKind::Pip, u, &torch_page(Lang::Zh));
        assert_eq!(
            zh,
            "连不上 PyTorch 官方服务器（download.pytorch.org）。请检查网络，或把“PyTorch 的下载来源”换成南京大学/上海交通大学镜像。然后点击“安装 PyTorch”。"
        );
        assert_eq!(t(Lang::Zh, "ui_torch_source"), "PyTorch 的下载来源");
        assert_eq!(t(Lang::Zh, "ui_install_pytorch"), "安装 PyTorch");
        let en = unreachable_text(Lang::En, FailureKind::Pip, u, &torch_page(Lang::En));
        assert_eq!(
            en,
            "PyTorch's server (download.pytorch.org) cannot be reached. Check the network, or set “Where PyTorch downloads from” to the Nanjing University/Shanghai Jiao Tong University mirror. Then click “Install PyTorch”."
        );
        // A mirror that did not answer is not suggested again.
        let nju = Unreachable {
            source: Source::TorchMirror,
            host: "mirror.nju.edu.cn".into(),
        };
        let zh = unreachable_text(Lang::Zh, FailureKind::Pip, &nju, &torch_page(Lang::Zh));
        assert!(
            zh.starts_with("连不上 PyTorch 镜像（mirror.nju.edu.cn）"),
            "{zh}"
        );
        // No PyPI words for PyTorch's source, and no pip output to read.
        for s in [&zh, &en] {
            assert!(!s.contains("PyPI") && !s.contains("pip"), "{s}");
        }
    }

    /// The automatic choice tried PyTorch's server and every mirror: no mirror is
    /// suggested (each was tried), only the network and the proxy, where Choose sets it.
    #[test]
    fn all_of_pytorchs_sources_unreachable_suggests_no_mirror_but_the_proxy() {
        let u = &unreachables()[4];
        let zh = unreachable_text(
            Lang::Zh,
            FailureKind::DownloadNetwork,
            u,
            &torch_page(Lang::Zh),
        );
        assert_eq!(
            zh,
            "PyTorch 的下载来源（download.pytorch.org, mirror.nju.edu.cn, mirror.sjtu.edu.cn）都连不上。请检查网络连接，或者检查代理服务器。代理服务器在“选择方案”页的高级选项里设置。然后点击“安装 PyTorch”。"
        );
        let en = unreachable_text(
            Lang::En,
            FailureKind::DownloadNetwork,
            u,
            &torch_page(Lang::En),
        );
        assert!(
            en.starts_with("None of PyTorch's sources (download.pytorch.org, mirror.nju.edu.cn, mirror.sjtu.edu.cn) could be reached.")
                && en.contains("under Advanced on the “Choose” page"),
            "{en}"
        );
        // Neither the source dropdown nor a mirror is suggested.
        for (lang, s) in [(Lang::Zh, &zh), (Lang::En, &en)] {
            let dropdown = format!("“{}”", t(lang, "ui_torch_source"));
            assert!(!s.contains(&dropdown), "{s}");
            assert!(!s.contains(&t(lang, "ui_mirror_nju")), "{s}");
        }
    }

    /// A driver that could not be downloaded: NVIDIA's hosts, installing it oneself and
    /// Choose's checkbox — never a PyPI mirror.
    #[test]
    fn a_driver_download_names_nvidia_and_the_checkbox_never_pypi() {
        let u = &unreachables()[3];
        let here = Here::new(Page::Install, Some(t(Lang::Zh, "ui_try_again")));
        let zh = unreachable_text(Lang::Zh, FailureKind::DownloadNetwork, u, &here);
        assert_eq!(
            zh,
            "没能从 NVIDIA 的服务器（us.download.nvidia.com, cn.download.nvidia.com）下载驱动。请检查网络连接；下载会从中断处继续。然后点击“重试”。也可以自己到 nvidia.cn/drivers 下载并安装驱动，再到“选择方案”页勾选“我自己安装驱动”。"
        );
        assert!(zh.contains(&format!("“{}”", t(Lang::Zh, "ui_driver_myself"))));
        assert!(zh.contains(&format!("“{}”", t(Lang::Zh, Page::Choose.title_key()))));
        for lang in [Lang::En, Lang::Zh] {
            let here = Here::new(Page::Install, Some(t(lang, "ui_try_again")));
            let s = unreachable_text(lang, FailureKind::DownloadMissing, u, &here);
            assert!(
                !s.contains("PyPI") && !s.contains(&t(lang, "ui_fix_mirror")),
                "{s}"
            );
        }
    }

    /// The wizard's words name no command line: no flag, no `cuda-setup <command>`.
    #[test]
    fn the_wizard_names_no_flag_or_command() {
        let commands = [
            "repair",
            "install",
            "cudnn",
            "smoke",
            "doctor",
            "tables",
            "recommend",
        ];
        for lang in [Lang::En, Lang::Zh] {
            for (here, _) in places(lang) {
                for kind in FailureKind::ALL {
                    for p in params(kind) {
                        let s = kind_text(lang, kind, &p, &here);
                        assert!(!s.contains(" --") && !s.contains('`'), "{s}");
                        for c in commands {
                            assert!(!s.contains(&format!("cuda-setup {c}")), "{s}");
                        }
                    }
                }
            }
        }
    }

    /// A page with no button to run the work again names none.
    #[test]
    fn no_button_no_click() {
        let here = Here::new(Page::Repair, None);
        for kind in FailureKind::ALL {
            let s = kind_text(Lang::Zh, kind, &BTreeMap::new(), &here);
            assert!(!s.contains("点击“"), "{kind:?}: {s}");
            let s = kind_text(Lang::En, kind, &BTreeMap::new(), &here);
            assert!(!s.contains("click “"), "{kind:?}: {s}");
        }
    }
}
