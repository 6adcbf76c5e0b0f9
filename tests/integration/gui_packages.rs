//! The wizard's PyTorch page lists the doctor's findings on the other GPU packages (#33)
//! under their own heading, open when one of them has a problem, in English and Chinese.
#![cfg(unix)]

use cuda_setup::ui::Page;
use cuda_setup::ui::session::Action;
use cuda_setup::ui::worker::Event;
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::verify::packages::{self, Offer, PackagesProbe};

use crate::gui_verdict::{doctor, event, has, settle, wizard};

#[test]
fn the_pytorch_page_lists_the_other_gpu_packages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut h = wizard(root, Lang::En, Goal::Pytorch, Page::Pytorch);
    let probe: PackagesProbe = serde_json::from_value(serde_json::json!({
        "python": "3.11.9",
        "packages": [{"name": "onnxruntime-gpu", "version": "1.20.1", "requires": []}],
        "nvidia": [{"name": "nvidia-cublas-cu12", "version": "12.4.5.8"}],
        "checks": {"onnxruntime": {"ok": false,
                   "error": "OSError: libcudnn.so.9: cannot open shared object file"}},
    }))
    .unwrap();
    let offer = Offer::gather(&Default::default(), &probe.nvidia, None);
    let table = Tables::embedded().unwrap().gpu_packages;
    let found = packages::findings(&packages::Context {
        os: Os::Windows,
        python: &root.join("bin/python3"),
        probe: &probe,
        offer: &offer,
        table: &table,
        driver_cuda: Some(&"12.6".parse().unwrap()),
        has_gpu: true,
    });
    let mut d = doctor(root, true);
    d.packages = Some(packages::PackagesReport {
        probe: Some(probe),
        error: None,
        offer,
        findings: found,
    });
    event(&mut h, Event::Doctor(Box::new(d)));
    assert!(has(&h, "Other GPU packages in this Python"));
    assert!(has(
        &h,
        "onnxruntime-gpu 1.20.1 needs cuDNN 9 for CUDA 12, but this Python finds no cuDNN."
    ));
    h.state_mut().apply(Action::SetLang(Lang::Zh));
    settle(&mut h);
    assert!(has(&h, "这个 Python 里的其他显卡相关包"));
    assert!(has(
        &h,
        "onnxruntime-gpu 1.20.1 需要适配 CUDA 12 的 cuDNN 9，但这个 Python 找不到 cuDNN。"
    ));
}
