//! Failure advice that names the real cause (#34): pip that could not reach PyTorch's
//! server says so — the command line naming `--torch-index` and a mirror from the tables,
//! the Chinese wizard its own dropdown, mirrors and button — and a driver download that
//! fails suggests what applies to a driver, never a PyPI mirror.

#![cfg(unix)]

use std::path::Path;

use cuda_setup::ui::Page;
use cuda_setup::ui::fixes::{Here, what_to_do};
use cuda_setup::ui::text::t;
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::steps::unreachable::Source;
use cuda_setup_core::steps::{Artifact, DownloadSpec, FailureKind, Step};

use super::gui::{click, settle, wait};
use crate::support;
use support::server::Server;

/// pip 24's words when download.pytorch.org's name does not resolve, as users posted them
/// (https://github.com/vladmandic/sdnext/issues/683, for cu118), for cu126.
const PIP_DNS: &str = "Looking in indexes: https://download.pytorch.org/whl/cu126
WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x000001B235707610>: Failed to establish a new connection: [Errno 11001] getaddrinfo failed')': /whl/cu126/torch/
WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x000001B235707CA0>: Failed to establish a new connection: [Errno 11001] getaddrinfo failed')': /whl/cu126/torch/
ERROR: Could not find a version that satisfies the requirement torch (from versions: none)
ERROR: No matching distribution found for torch
";

/// pip 23's connect timeout, which names the host (https://github.com/bmaltais/kohya_ss/issues/249).
const PIP_TIMEOUT: &str = "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ConnectTimeoutError(<pip._vendor.urllib3.connection.HTTPSConnection object at 0x00000242086F6FB0>, 'Connection to download.pytorch.org timed out. (connect timeout=15)')': /whl/cu126/torch/
ERROR: Could not find a version that satisfies the requirement torch (from versions: none)
ERROR: No matching distribution found for torch
";

fn install_pytorch(py: &Path, root: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<String> = [
        "install",
        "--goal",
        "pytorch",
        "--unattended",
        "--os",
        "windows",
        "--gpu-cc",
        "8.6",
        "--driver",
        "551.78",
        "--python-exe",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend([
        py.display().to_string(),
        "--root".into(),
        root.display().to_string(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(&args)
        .env("LANG", "C")
        .output()
        .unwrap()
}

/// The first mirror of PyTorch's index the tables list.
fn first_mirror() -> String {
    Tables::embedded().unwrap().pytorch.mirrors[0].base.clone()
}

/// `install --goal pytorch` whose pip cannot reach download.pytorch.org: the hint names
/// the host and `--torch-index` with the tables' mirror, not "read pip's output, choose a
/// PyPI mirror"; `--json` says which source, for scripts.
#[test]
fn cli_pip_that_cannot_reach_pytorchs_server_names_it_and_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let py = support::python::interpreter(dir.path(), None);
    support::python::set_pip_fails(dir.path(), PIP_DNS);
    let root = dir.path().join("root");

    let out = install_pytorch(&py, &root, &[]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let hint = err
        .lines()
        .find(|l| l.starts_with("hint:"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(hint.contains("download.pytorch.org"), "{hint}");
    assert!(
        hint.contains(&format!("--torch-index {}", first_mirror())),
        "{hint}"
    );
    assert!(
        !hint.contains("PyPI") && !hint.contains("--pypi-mirror"),
        "{hint}"
    );

    let out = install_pytorch(&py, &root, &["--lang", "zh"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pip 连不上 PyTorch 官方服务器（download.pytorch.org）")
            && err.contains(&format!("--torch-index {}", first_mirror())),
        "{err}"
    );

    let out = install_pytorch(&py, &root, &["--json"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let f = &r["failure"];
    assert_eq!(f["kind"], "pip", "{f}");
    assert_eq!(f["unreachable"]["source"], "torch_official", "{f}");
    assert_eq!(f["unreachable"]["host"], "download.pytorch.org", "{f}");
}

/// The Chinese wizard's PyTorch page after the same pip: the words name PyTorch's server,
/// the page's own source dropdown and mirrors by their labels, and its install button.
#[test]
fn the_chinese_pytorch_page_names_the_source_dropdown_and_its_button() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = super::gui_verdict::options(dir.path(), Lang::Zh, Goal::Pytorch);
    let standin = dir.path().join("standin");
    std::fs::create_dir_all(&standin).unwrap();
    let py = support::python::interpreter(&standin, None);
    support::python::set_pip_fails(&standin, PIP_TIMEOUT);
    o.python = Some(py);
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
    assert_eq!(f.kind, FailureKind::Pip);
    assert_eq!(
        f.unreachable.as_ref().map(|u| u.source),
        Some(Source::TorchOfficial)
    );

    let line = super::gui_hints::what_to_do(&h, Lang::Zh);
    let expected = format!(
        "连不上 PyTorch 官方服务器（download.pytorch.org）。请检查网络，或把“{}”换成{}/{}镜像。然后点击“{}”。",
        t(Lang::Zh, "ui_torch_source"),
        t(Lang::Zh, "ui_mirror_nju"),
        t(Lang::Zh, "ui_mirror_sjtu"),
        install
    );
    assert!(line.ends_with(&expected), "{line}");
    assert!(!line.contains("PyPI") && !line.contains("pip"), "{line}");
    super::gui_hints::quoted_names_are_on_screen(&h, &line);
}

/// A driver download that every source answers 404: its failure names NVIDIA's hosts, the
/// command line nvidia.cn and `--skip-driver`, the wizard's Install page Choose's "I will
/// install the driver myself" — no PyPI mirror, no wheels method (that is the toolkit's).
#[test]
fn a_driver_download_that_fails_gives_driver_advice_never_pypi() {
    let nvidia = Server::start();
    let mirror = Server::start();
    let root = tempfile::tempdir().unwrap();
    let target = cuda_setup_core::target::Target::rooted(Os::Windows, root.path());
    let plan = cuda_setup_core::plan::Plan {
        format: 1,
        goal: Goal::Developer,
        os: Os::Windows,
        root: Some(root.path().to_path_buf()),
        toolkit: None,
        cudnn: None,
        torch_command: None,
        notes: vec![],
        steps: vec![Step::Download(DownloadSpec {
            what: Artifact::DriverInstaller,
            url: format!("http://{}/Windows/591.86/591.86-desktop.exe", nvidia.addr),
            mirrors: vec![format!("http://{}", mirror.addr)],
            sha256: None,
            md5: None,
            size: None,
            dest: target.downloads_dir().join("591.86-desktop.exe"),
            bundle_dirs: vec![],
            cache_dir: None,
            connections: 2,
        })],
    };
    let r = cuda_setup_core::run::run_blocking(
        &plan,
        &target,
        &cuda_setup_core::download::Cancel::default(),
        &mut |_| {},
    );
    let f = r.failure.expect("the download fails");
    assert_eq!(f.kind, FailureKind::DownloadMissing, "{}", f.error);
    let u = f.unreachable.clone().expect("the hosts are named");
    assert_eq!(u.source, Source::NvidiaDriver);
    assert_eq!(
        u.host,
        format!("{}, {}", mirror.addr, nvidia.addr),
        "each host tried, in order"
    );

    let en = render(&f.hint, Lang::En);
    let zh = render(&f.hint, Lang::Zh);
    assert!(
        en.contains("nvidia.cn/drivers") && en.contains("--skip-driver"),
        "{en}"
    );
    assert!(
        zh.contains("nvidia.cn/drivers") && zh.contains("--skip-driver"),
        "{zh}"
    );
    for lang in [Lang::En, Lang::Zh] {
        let here = Here::new(Page::Install, Some(t(lang, "ui_try_again")));
        let words = what_to_do(lang, &f, &here);
        assert!(
            words.contains(&format!("“{}”", t(lang, "ui_driver_myself"))),
            "{words}"
        );
        let wheels = render(
            &cuda_setup_core::message::Message::new("method_wheels_download_failed"),
            lang,
        );
        for s in [&words, &render(&f.hint, lang)] {
            assert!(!s.contains("PyPI") && !s.contains("pip"), "{s}");
            assert!(
                !s.contains(&t(lang, "ui_fix_mirror")) && !s.contains(&wheels),
                "{s}"
            );
        }
    }
}
