//! The wizard's cuDNN page through the core (issue #31): the archive check is the core's
//! (a Linux mismatch names NVIDIA's Linux tarball, not the Windows zip), and the download
//! is a plan the executor runs like every other — the connection setting, the offline
//! bundle, the run log and the target's lock all apply. Driven as a user would: the
//! session's actions, the real worker, a loopback mirror, a `--root` sandbox.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_setup::ui::session::Action;
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::compat::Os;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{CudnnPick, Goal};
use cuda_setup_core::steps::FailureKind;
use egui_kittest::Harness;

use super::gui::{Dropped, Machine, harness, settle, wait};
use crate::support;
use support::server::Body;
use support::standin::{md5_of, sha256_of, windows_installer};

/// NVIDIA's archive page, as the mirror serves it.
const NVIDIA: &str = "https://developer.download.nvidia.com";

/// The developer goal on the Windows machine of `gui::Machine`, detection done, the
/// toolkit the recommendation names in place (as its installer left it), on the cuDNN page.
pub(crate) fn on_cudnn_page(
    m: &Machine,
    edit: impl FnOnce(&mut Options),
) -> (Harness<'static, App>, CudnnPick) {
    let mut o = m.options(Lang::En);
    o.goal = Some(Goal::Developer);
    edit(&mut o);
    let mut h = harness(App::new(o));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    let dir = h
        .state()
        .toolkit_dir()
        .expect("a toolkit in the recommendation");
    let tk = support::cudnn_zip::toolkit(dir.parent().unwrap(), "11.8.0");
    assert_eq!(tk, dir);
    std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
    let pick = h
        .state()
        .session
        .recommendation()
        .and_then(|r| r.cudnn.clone())
        .expect("a cuDNN in the recommendation");
    h.state_mut().go(Page::Cudnn);
    settle(&mut h);
    (h, pick)
}

/// The pick's archive as a real-layout zip, and NVIDIA's redist manifest naming its hash.
pub(crate) fn archive_for(pick: &CudnnPick, dir: &Path) -> (PathBuf, Vec<u8>, String) {
    let file = &pick.archive.file;
    let full = file
        .strip_prefix("cudnn-windows-x86_64-")
        .and_then(|r| r.split_once("_cuda"))
        .map(|(v, _)| v.to_string())
        .expect("NVIDIA's name");
    let zip = dir.join(file);
    support::cudnn_zip::Spec {
        version: Box::leak(full.clone().into_boxed_str()),
        cuda_major: pick.cuda_major,
        dll_size: 50_000,
    }
    .write(&zip);
    let bytes = std::fs::read(&zip).unwrap();
    let label: Vec<&str> = full.split('.').take(3).collect();
    let manifest = format!(
        r#"{{"release_label":"{label}","cudnn":{{"name":"NVIDIA CUDA Deep Neural Network library","version":"{full}",
          "windows-x86_64":{{"cuda{major}":{{"relative_path":"cudnn/windows-x86_64/{file}","sha256":"{sha}","md5":"{md5}","size":"{size}"}}}}}}}}"#,
        label = label.join("."),
        major = pick.cuda_major,
        sha = sha256_of(&bytes),
        md5 = md5_of(&bytes),
        size = bytes.len()
    );
    (zip, bytes, manifest)
}

/// Serves the pick's archive and its manifest on the machine's mirror.
pub(crate) fn serve(m: &Machine, pick: &CudnnPick) -> PathBuf {
    let (zip, bytes, manifest) = archive_for(pick, m.work.path());
    let label: Vec<String> = pick
        .version
        .to_string()
        .split('.')
        .take(3)
        .map(String::from)
        .collect();
    let mut label = label;
    while label.len() < 3 {
        label.push("0".into());
    }
    m.server.add(
        pick.archive_url.strip_prefix(NVIDIA).unwrap(),
        Body::Bytes(Arc::new(bytes)),
    );
    m.server.add(
        &format!("/compute/cudnn/redist/redistrib_{}.json", label.join(".")),
        Body::Bytes(Arc::new(manifest.into_bytes())),
    );
    zip
}

/// The run logs the executor wrote in the sandbox's state folder.
fn run_logs(h: &Harness<'_, App>) -> Vec<String> {
    let dir = h.state().session.opts.target.state_dir().join("logs");
    let mut logs: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    logs
}

/// Linux: a cuDNN for another CUDA major is refused, and the advice names NVIDIA's
/// Linux tarball for the toolkit's major (the wizard's own copy named the Windows zip).
#[test]
fn on_linux_a_mismatched_tarball_names_the_linux_tarball() {
    use support::cudnn_tar::{LinuxSpec, linux_toolkit};
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(Lang::En);
    let linux = Options::sandbox(o.tables.clone(), Os::Linux, &m.root());
    o.target = linux.target;
    o.host = Host::sandbox(Os::Linux, &m.root(), Default::default());
    o.overrides.driver = Some(Some("580.65.06".parse().unwrap()));
    o.cuda = Some("12.9".parse().unwrap());
    o.goal = Some(Goal::Developer);
    let spec = LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 11,
        lib_size: 4096,
    };
    let tarball = m.work.path().join(spec.file_name());
    spec.write(&tarball);
    let mut h = harness(App::new(o));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    let dir = h.state().toolkit_dir().expect("a toolkit");
    linux_toolkit(dir.parent().unwrap(), "12.9.1");
    h.state_mut().go(Page::Cudnn);
    settle(&mut h);
    h.input_mut().dropped_files.push(Arc::new(Dropped(tarball)));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    let refused = match h.state().session.cudnn().check().unwrap() {
        Ok(_) => panic!("a CUDA 11 cuDNN was accepted for CUDA 12.9"),
        Err(r) => r.clone(),
    };
    let detail = refused.detail();
    assert!(
        detail.contains("cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz"),
        "{detail}"
    );
    assert!(!detail.contains(".zip"), "{detail}");
    assert!(!dir.join("include/cudnn_version.h").exists(), "copied");
}

/// The download is the executor's: the plan in the run log carries the connection
/// setting from the Choose page, the archive arrives verified and is checked.
#[test]
fn the_cudnn_download_takes_the_connection_setting_and_writes_a_run_log() {
    let m = Machine::new(windows_installer(0, 0));
    let (mut h, pick) = on_cudnn_page(&m, |_| {});
    serve(&m, &pick);
    let mut s = h.state().session.settings.clone();
    s.connections = 3;
    h.state_mut().apply(Action::SetSettings(s));
    h.state_mut().apply(Action::DownloadCudnn);
    wait(&mut h, "download and check", |a| {
        a.session.cudnn().check().is_some() || a.session.cudnn().download_error().is_some()
    });
    let c = &h.state().session.cudnn();
    assert!(c.download_error().is_none(), "{:?}", c.download_error());
    assert!(
        matches!(c.check(), Some(Ok(_))),
        "{:?}",
        c.check().map(|r| r.is_ok())
    );
    let logs = run_logs(&h);
    let log = logs
        .iter()
        .find(|l| l.contains("download_cudnn"))
        .unwrap_or_else(|| panic!("no run log of the cuDNN download: {logs:?}"));
    assert!(log.contains(r#""connections":3"#), "{log}");
    assert!(log.contains(&pick.archive.file), "{log}");
}

/// A second cuda-setup at work on the same target: the wizard's download is refused
/// with the executor's `busy` failure, and the archive is not fetched.
#[test]
fn the_cudnn_download_waits_its_turn_behind_another_cuda_setup() {
    let m = Machine::new(windows_installer(0, 0));
    let (mut h, pick) = on_cudnn_page(&m, |_| {});
    serve(&m, &pick);
    let target = h.state().session.opts.target.clone();
    let state = target.state_dir();
    std::fs::create_dir_all(&state).unwrap();
    let _other = cuda_setup_core::lock::acquire(
        target.root.as_deref().unwrap(),
        &state.join(cuda_setup_core::lock::FILE),
    )
    .unwrap();
    h.state_mut().apply(Action::DownloadCudnn);
    wait(&mut h, "the refusal", |a| {
        a.session.cudnn().download_error().is_some() || a.session.cudnn().check().is_some()
    });
    let f = h
        .state()
        .session
        .cudnn()
        .download_error()
        .cloned()
        .expect("refused");
    assert_eq!(f.kind, FailureKind::Busy, "{f:?}");
    // (Planning read NVIDIA's manifest for the hash; the archive itself was not fetched.)
    assert!(
        !target.downloads_dir().join(&pick.archive.file).exists(),
        "downloaded while another held the lock"
    );
}

/// Offline: the archive and its hash come from the bundle folder (`--bundle`), the
/// mirror is never asked.
#[test]
fn the_cudnn_download_finds_the_archive_in_the_offline_bundle() {
    let m = Machine::new(windows_installer(0, 0));
    let bundle = m.work.path().join("bundle");
    std::fs::create_dir_all(&bundle).unwrap();
    let b = bundle.clone();
    let (mut h, pick) = on_cudnn_page(&m, move |o| o.bundle = Some(b));
    let (_, bytes, _) = archive_for(&pick, &bundle);
    let manifest = serde_json::json!({
        "format": 1,
        "created_by": "cuda-setup test",
        "os": "windows",
        "files": [{
            "kind": "cudnn_archive",
            "version": pick.version.to_string(),
            "file": pick.archive.file,
            "url": pick.archive_url,
            "sha256": sha256_of(&bytes),
            "md5": md5_of(&bytes),
            "size": bytes.len(),
        }]
    });
    std::fs::write(bundle.join("manifest.json"), manifest.to_string()).unwrap();
    let before = m.server.requests();
    h.state_mut().apply(Action::DownloadCudnn);
    wait(&mut h, "the archive from the bundle", |a| {
        a.session.cudnn().check().is_some() || a.session.cudnn().download_error().is_some()
    });
    let c = &h.state().session.cudnn();
    assert!(c.download_error().is_none(), "{:?}", c.download_error());
    assert!(matches!(c.check(), Some(Ok(_))));
    assert_eq!(m.server.requests(), before, "the mirror was asked");
}
