//! Our own state files are input too: a cuDNN manifest or journal, or an install
//! journal, that names a path outside its folder (`..`, an absolute path, a symbolic
//! link leading out) is rejected whole and set aside; nothing is deleted, restored or
//! run on its strength.

#![cfg(unix)]

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::cudnn;
use cuda_setup_core::repair::{self, Overrides};
use cuda_setup_core::target::Target;
use serde_json::{Value, json};
use support::cudnn_zip::{Spec, toolkit};

const SPEC: Spec = Spec {
    version: "9.10.2.21",
    cuda_major: 12,
    dll_size: 20_000,
};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .output()
        .unwrap()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every file under `dir` (path → bytes), links not followed.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    support::tree::files(dir, &|_| false)
}

/// Names in `dir` starting with `prefix`.
fn named(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// A toolkit at `root/v12.4` with our cuDNN installed; returns it.
fn installed(root: &Path) -> PathBuf {
    let dir = toolkit(root, "12.4.1");
    let zip = root.join(format!("{}.zip", SPEC.top()));
    SPEC.write(&zip);
    cudnn::install(&zip, &dir, &|_| {}).unwrap();
    dir
}

fn meta(dir: &Path) -> PathBuf {
    dir.join(".cuda-setup")
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

fn entry(path: &str, replaced: bool) -> Value {
    json!({ "path": path, "sha256": "00", "size": 1, "replaced": replaced })
}

/// Asserts the command was refused (exit 3), saying which record and that nothing was
/// done on its strength.
fn refused_saying(out: &Output, what: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("rejected") && err.contains("no longer tracks"),
        "{err}"
    );
    assert!(err.contains("hint: install cuDNN again"), "{err}");
    for w in what {
        assert!(err.contains(w), "{w:?} not in {err}");
    }
}

#[test]
fn a_manifest_entry_outside_the_toolkit_deletes_nothing() {
    let w = tempfile::tempdir().unwrap();
    let outside = w.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x"), b"not the toolkit's").unwrap();
    let abs = w.path().join("abs-victim.txt");
    let cases: Vec<(&str, Value)> = vec![
        ("dot-dot", entry("../victim.txt", false)),
        ("dot-dot replaced", entry("../victim.txt", true)),
        ("absolute", entry(p(&abs), false)),
        ("link leading out", entry("evil/x", false)),
        ("backslashes", entry("..\\victim.txt", false)),
    ];
    for (i, (name, bad)) in cases.into_iter().enumerate() {
        std::fs::write(&abs, b"victim").unwrap();
        let root = w.path().join(format!("case{i}"));
        let dir = installed(&root);
        // `../victim.txt` from the toolkit folder.
        let victim = root.join("victim.txt");
        std::fs::write(&victim, b"victim").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("evil")).unwrap();
        let manifest = meta(&dir).join("cudnn-manifest.json");
        edit_json(&manifest, |m| {
            m["files"].as_array_mut().unwrap().push(bad.clone())
        });
        let before = tree(&dir);
        for cmd in ["uninstall", "verify"] {
            let out = cli(&["cudnn", cmd, "--cuda-dir", p(&dir)]);
            if cmd == "uninstall" {
                refused_saying(
                    &out,
                    &["cudnn-manifest.json", bad["path"].as_str().unwrap()],
                );
            } else {
                // Set aside by the first command: no longer ours to verify.
                assert_eq!(out.status.code(), Some(4), "{name}");
            }
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"victim", "{name}");
        assert_eq!(std::fs::read(&abs).unwrap(), b"victim", "{name}");
        assert_eq!(
            std::fs::read(outside.join("x")).unwrap(),
            b"not the toolkit's"
        );
        // The toolkit as it was (cuDNN in place, untracked); the record set aside.
        let mut now = tree(&dir);
        let moved: Vec<String> = now
            .keys()
            .filter(|k| k.contains("cudnn-manifest.json.rejected-"))
            .cloned()
            .collect();
        assert_eq!(moved.len(), 1, "{name}: {:?}", now.keys());
        now.remove(&moved[0]);
        let mut was = before.clone();
        was.remove(".cuda-setup/cudnn-manifest.json");
        assert_eq!(now, was, "{name}");
        assert!(cudnn::txn::read_manifest(&dir).unwrap().is_none());
    }
}

#[test]
fn verify_reports_a_bad_manifest_without_reading_outside() {
    let w = tempfile::tempdir().unwrap();
    let dir = installed(w.path());
    let manifest = meta(&dir).join("cudnn-manifest.json");
    edit_json(&manifest, |m| {
        m["files"][0]["path"] = json!("/etc/passwd");
    });
    // A record read by something that only looks (the wizard, repair's audit) is
    // rejected but left where it is.
    assert!(matches!(
        cudnn::txn::read_manifest(&dir),
        Err(cudnn::CudnnError::BadState(_))
    ));
    assert!(manifest.is_file());
    let out = cli(&["cudnn", "verify", "--cuda-dir", p(&dir)]);
    refused_saying(&out, &["/etc/passwd", "is absolute"]);
    assert!(!manifest.exists());
    assert_eq!(named(&meta(&dir), "cudnn-manifest.json.rejected-").len(), 1);
}

#[test]
fn a_journal_pointing_outside_deletes_nothing() {
    let w = tempfile::tempdir().unwrap();
    // Beside every case's toolkit folder: `../victim-dir`, `../victim.txt`.
    let keep = |root: &Path| root.join("victim-dir");
    let manifest = |files: Vec<Value>| {
        json!({"format":1,"cudnn_version":"9.10.2","cuda_major":12,"toolkit_version":"12.4.1",
               "archive":"a.zip","files":files})
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "staging ..",
            json!({"op":"install","state":"committed","staging":"../victim-dir","manifest":manifest(vec![])}),
            "verify",
        ),
        (
            "staging absolute",
            json!({"op":"install","state":"applying","staging":p(&keep(&w.path().join("case1"))),"manifest":manifest(vec![])}),
            "verify",
        ),
        (
            "staging elsewhere in the toolkit",
            json!({"op":"install","state":"committed","staging":"bin","manifest":manifest(vec![])}),
            "verify",
        ),
        (
            "rollback deletes ..",
            json!({"op":"install","state":"applying","staging":null,
                   "manifest":manifest(vec![entry("../victim.txt", false)])}),
            "uninstall",
        ),
        (
            "half an uninstall",
            json!({"op":"uninstall","state":"applying","staging":null,
                   "manifest":manifest(vec![entry("../victim.txt", false)])}),
            "install",
        ),
        (
            "one path twice",
            json!({"op":"install","state":"applying","staging":null,
                   "manifest":manifest(vec![entry("bin/cudnn64_9.dll", true), entry("bin/CUDNN64_9.dll", false)])}),
            "uninstall",
        ),
        ("torn", json!("{\"op\":\"install\",\"sta"), "verify"),
    ];
    for (i, (name, journal, cmd)) in cases.into_iter().enumerate() {
        let root = w.path().join(format!("case{i}"));
        let dir = toolkit(&root, "12.4.1");
        let keep = keep(&root);
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::write(keep.join("keep.txt"), b"keep").unwrap();
        let victim = root.join("victim.txt");
        std::fs::write(&victim, b"victim").unwrap();
        std::fs::write(dir.join("bin/cudnn64_9.dll"), b"MZ toolkit's own").unwrap();
        std::fs::create_dir_all(meta(&dir)).unwrap();
        let text = match &journal {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        std::fs::write(meta(&dir).join("cudnn-journal.json"), text).unwrap();
        let before = tree(&dir);
        let zip = root.join("c.zip");
        SPEC.write(&zip);
        let args: Vec<&str> = match cmd {
            "install" => vec![
                "cudnn",
                "install",
                "--archive",
                p(&zip),
                "--cuda-dir",
                p(&dir),
            ],
            _ => vec!["cudnn", cmd, "--cuda-dir", p(&dir)],
        };
        let out = cli(&args);
        refused_saying(&out, &["cudnn-journal.json"]);
        assert!(
            keep.join("keep.txt").is_file(),
            "{name} deleted a folder outside"
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"victim", "{name}");
        assert_eq!(
            std::fs::read(dir.join("bin/cudnn64_9.dll")).unwrap(),
            b"MZ toolkit's own",
            "{name}"
        );
        let now = tree(&dir);
        assert_eq!(
            now.keys().filter(|k| !k.starts_with(".cuda-setup")).count(),
            before
                .keys()
                .filter(|k| !k.starts_with(".cuda-setup"))
                .count(),
            "{name}"
        );
        assert_eq!(named(&meta(&dir), "cudnn-journal.json.rejected-").len(), 1);
        // Set aside: the next command starts clean.
        let out = cli(&["cudnn", "verify", "--cuda-dir", p(&dir)]);
        assert_eq!(out.status.code(), Some(4), "{name}");
    }
}

#[test]
fn a_backup_folder_leading_out_is_not_restored_from() {
    let w = tempfile::tempdir().unwrap();
    let dir = installed(w.path());
    // Another folder that happens to hold a file by a backed-up name.
    let elsewhere = w.path().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("include")).unwrap();
    std::fs::write(elsewhere.join("include/cudnn.h"), b"someone else's").unwrap();
    edit_json(&meta(&dir).join("cudnn-manifest.json"), |m| {
        for f in m["files"].as_array_mut().unwrap() {
            f["replaced"] = json!(true);
        }
    });
    let backup = meta(&dir).join("cudnn-backup");
    let _ = std::fs::remove_dir_all(&backup);
    std::os::unix::fs::symlink(&elsewhere, &backup).unwrap();
    let out = cli(&["cudnn", "uninstall", "--cuda-dir", p(&dir)]);
    refused_saying(&out, &["cudnn-backup", "not a folder"]);
    assert_eq!(
        std::fs::read(elsewhere.join("include/cudnn.h")).unwrap(),
        b"someone else's"
    );
}

#[test]
fn a_state_file_over_the_limit_or_a_link_is_not_read() {
    let w = tempfile::tempdir().unwrap();
    let dir = installed(w.path());
    let manifest = meta(&dir).join("cudnn-manifest.json");
    let real = w.path().join("real.json");
    std::fs::rename(&manifest, &real).unwrap();
    std::os::unix::fs::symlink(&real, &manifest).unwrap();
    refused_saying(
        &cli(&["cudnn", "verify", "--cuda-dir", p(&dir)]),
        &["symbolic link"],
    );
    assert!(real.is_file(), "the link's target stays");
    std::fs::File::create(&manifest)
        .unwrap()
        .set_len(cuda_setup_core::state_file::MAX_BYTES + 1)
        .unwrap();
    refused_saying(
        &cli(&["cudnn", "uninstall", "--cuda-dir", p(&dir)]),
        &["limit"],
    );
}

/// NVIDIA's Linux toolkit keeps `lib64` and `include` as links into `targets/`: links
/// that stay inside the toolkit are followed for install, verify and uninstall.
#[test]
fn links_that_stay_inside_the_toolkit_are_fine() {
    use support::cudnn_tar::{LinuxSpec, linux_toolkit};
    let w = tempfile::tempdir().unwrap();
    let dir = linux_toolkit(w.path(), "12.4.1");
    let targets = dir.join("targets/x86_64-linux");
    std::fs::create_dir_all(&targets).unwrap();
    for d in ["lib64", "include"] {
        let real = targets.join(if d == "lib64" { "lib" } else { d });
        std::fs::rename(dir.join(d), &real).unwrap();
        let rel = Path::new("targets/x86_64-linux").join(real.file_name().unwrap());
        std::os::unix::fs::symlink(rel, dir.join(d)).unwrap();
    }
    let before = tree(&dir);
    let spec = LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 12,
        lib_size: 10_000,
    };
    let file = w.path().join(spec.file_name());
    spec.write(&file);
    cudnn::install(&file, &dir, &|_| {}).unwrap();
    assert!(targets.join("lib/libcudnn.so.9.10.2").is_file());
    assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    cudnn::uninstall(&dir).unwrap();
    let after: BTreeMap<_, _> = tree(&dir)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".cuda-setup"))
        .collect();
    assert_eq!(after, before);
}

// The install journal (`<state>/install-journal.json`): repair resumes the plan in it.

fn write_install_journal(t: &Target, text: &str) -> PathBuf {
    let path = t.state_dir().join("install-journal.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_install_journal_aimed_outside_the_root_runs_nothing() {
    let w = tempfile::tempdir().unwrap();
    let root = w.path().join("root");
    let target = Target::rooted(Os::Windows, &root);
    std::fs::create_dir_all(&root).unwrap();
    // A toolkit outside the sandbox, and an archive for it.
    let outside = toolkit(&w.path().join("outside"), "12.4.1");
    let zip = w.path().join(format!("{}.zip", SPEC.top()));
    SPEC.write(&zip);
    let before = tree(w.path());
    use cuda_setup_core::steps::{DownloadSpec, Step};
    let plan = |root: Option<PathBuf>, steps: Vec<Step>| {
        serde_json::to_string(&cuda_setup_core::plan::Plan {
            format: 1,
            goal: cuda_setup_core::recommend::Goal::Developer,
            os: Os::Windows,
            root,
            toolkit: Some("12.4.1".parse().unwrap()),
            cudnn: None,
            torch_command: None,
            notes: vec![],
            steps,
        })
        .unwrap()
    };
    let journal = |plan: String, done: Value| json!({"plan": plan, "done": done}).to_string();
    let ours = Some(root.clone());
    let cases = [
        (
            "cuDNN into a toolkit outside",
            journal(
                plan(
                    ours.clone(),
                    vec![Step::InstallCudnn {
                        archive: zip.clone(),
                        cuda_dir: outside.clone(),
                    }],
                ),
                json!([]),
            ),
            "outside",
        ),
        (
            "a download outside",
            journal(
                plan(
                    ours.clone(),
                    vec![Step::Download(DownloadSpec {
                        what: cuda_setup_core::steps::Artifact::CudnnArchive,
                        url: "http://127.0.0.1:9/x".into(),
                        mirrors: vec![],
                        sha256: None,
                        md5: Some("00".into()),
                        size: None,
                        dest: w.path().join("victim.bin"),
                        bundle_dirs: vec![],
                        cache_dir: None,
                        connections: 1,
                    })],
                ),
                json!([]),
            ),
            "victim.bin",
        ),
        (
            "another root",
            journal(plan(Some("/elsewhere".into()), vec![]), json!([])),
            "another machine",
        ),
        (
            "done out of range",
            journal(plan(ours.clone(), vec![]), json!([7])),
            "step 7",
        ),
        ("torn", "{\"plan\": \"{\\\"for".to_string(), "not a record"),
    ];
    let tables = Tables::embedded().unwrap();
    for (name, text, why) in cases {
        let journal = write_install_journal(&target, &text);
        let findings = repair::audit(&target, &tables, &Overrides::default());
        let f = findings
            .iter()
            .find(|f| f.id == "repair_install_journal_rejected")
            .unwrap_or_else(|| {
                panic!(
                    "{name}: {:?}",
                    findings.iter().map(|f| f.id).collect::<Vec<_>>()
                )
            });
        let shown = cuda_setup_core::i18n::render(&f.message, cuda_setup_core::i18n::Lang::En);
        assert!(
            shown.contains(why) && shown.contains("Nothing in it was run"),
            "{name}: {shown}"
        );
        assert!(
            !findings
                .iter()
                .any(|f| f.id == "repair_install_interrupted"),
            "{name}"
        );
        repair::fix(
            &target,
            &tables,
            &Overrides::default(),
            &findings,
            &mut |_| {},
        );
        assert!(!journal.exists(), "{name}");
        assert_eq!(
            named(&target.state_dir(), "install-journal.json.rejected-").len(),
            1,
            "{name}"
        );
        for e in std::fs::read_dir(target.state_dir()).unwrap().flatten() {
            if e.file_name().to_string_lossy().contains(".rejected-") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
        let now: BTreeMap<_, _> = tree(w.path())
            .into_iter()
            .filter(|(k, _)| !k.starts_with("root/"))
            .collect();
        let was: BTreeMap<_, _> = before
            .clone()
            .into_iter()
            .filter(|(k, _)| !k.starts_with("root/"))
            .collect();
        assert_eq!(now, was, "{name} touched a file outside the root");
    }
}

/// Resuming a journal runs its steps (pip in the Python it names) with our rights, so a
/// journal another account wrote is never resumed — even one that is otherwise well
/// formed — while the same journal written by us is.
#[cfg(unix)]
#[test]
fn an_install_journal_another_account_wrote_is_never_resumed() {
    use std::os::unix::fs::PermissionsExt;
    let w = tempfile::tempdir().unwrap();
    let root = w.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let target = Target::rooted(Os::Linux, &root);
    // The "Python" the planted plan names: it would leave a mark if it ever ran.
    let mark = w.path().join("ran");
    let python = w.path().join("python3");
    std::fs::write(&python, format!("#!/bin/sh\ntouch '{}'\n", mark.display())).unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plan = serde_json::to_string(&cuda_setup_core::plan::Plan {
        format: 1,
        goal: cuda_setup_core::recommend::Goal::Pytorch,
        os: Os::Linux,
        root: Some(root.clone()),
        toolkit: None,
        cudnn: None,
        torch_command: None,
        notes: vec![],
        steps: vec![cuda_setup_core::steps::Step::InstallTorch {
            python: python.clone(),
            args: vec!["torch".into()],
            auto: Default::default(),
        }],
    })
    .unwrap();
    let text = json!({"plan": plan, "done": []}).to_string();
    let tables = Tables::embedded().unwrap();
    let ids = |t: &Target| -> Vec<&'static str> {
        repair::audit(t, &tables, &Overrides::default())
            .iter()
            .map(|f| f.id)
            .collect()
    };

    // Ours: taken as an interrupted install.
    let journal = write_install_journal(&target, &text);
    assert!(ids(&target).contains(&"repair_install_interrupted"));

    // Another account's (uid 65534, "nobody"): set aside, nothing run.
    if let Err(e) = std::os::unix::fs::chown(&journal, Some(65534), Some(65534)) {
        // Changing a file's owner needs root (CI and this project's machines run as root).
        eprintln!("not checked here, chown needs root: {e}");
        return;
    }
    let findings = repair::audit(&target, &tables, &Overrides::default());
    let f = findings
        .iter()
        .find(|f| f.id == "repair_install_journal_rejected")
        .expect("a journal another account wrote is rejected");
    let shown = cuda_setup_core::i18n::render(&f.message, cuda_setup_core::i18n::Lang::En);
    assert!(shown.contains("another user account"), "{shown}");
    repair::fix(
        &target,
        &tables,
        &Overrides::default(),
        &findings,
        &mut |_| {},
    );
    assert!(!mark.exists(), "the planted plan's program ran");
    assert!(!journal.exists());
    assert_eq!(
        named(&target.state_dir(), "install-journal.json.rejected-").len(),
        1
    );
}

#[test]
fn repair_says_when_it_sets_a_cudnn_record_aside() {
    let w = tempfile::tempdir().unwrap();
    let root = w.path().join("root");
    let target = Target::rooted(Os::Windows, &root);
    let base = root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let dir = installed(&base);
    let victim = base.join("victim.txt");
    std::fs::write(&victim, b"victim").unwrap();
    edit_json(&meta(&dir).join("cudnn-manifest.json"), |m| {
        m["files"]
            .as_array_mut()
            .unwrap()
            .push(entry("../victim.txt", false))
    });
    let tables = Tables::embedded().unwrap();
    let findings = repair::audit(&target, &tables, &Overrides::default());
    let f = findings
        .iter()
        .find(|f| f.id == "repair_cudnn_record_rejected")
        .unwrap_or_else(|| panic!("{:?}", findings.iter().map(|f| f.id).collect::<Vec<_>>()));
    let zh = cuda_setup_core::i18n::render(&f.message, cuda_setup_core::i18n::Lang::Zh);
    assert!(
        zh.contains("../victim.txt") && zh.contains("不再跟踪"),
        "{zh}"
    );
    repair::fix(
        &target,
        &tables,
        &Overrides::default(),
        &findings,
        &mut |_| {},
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
    assert_eq!(named(&meta(&dir), "cudnn-manifest.json.rejected-").len(), 1);
}
