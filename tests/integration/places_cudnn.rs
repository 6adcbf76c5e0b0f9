//! Issue #30, class 1 for cuDNN destinations and wheels staging: nothing is created,
//! renamed or removed through a link someone else planted — in the toolkit folder, in
//! our `.cuda-setup`, in a backup folder, at a staging folder's name — before a run or
//! swapped in during one (made deterministic with the pause hook). Real zip archives in
//! NVIDIA's layout, real symbolic links, the real program.
#![cfg(unix)]

use crate::support;

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_setup_core::cudnn::{self, CudnnError};
use support::cudnn_tar::{self, linux_toolkit};
use support::cudnn_zip::{Spec, toolkit};

const SPEC: Spec = Spec {
    version: "9.10.2.21",
    cuda_major: 12,
    dll_size: 50_000,
};

/// Everything under `dir`, links recorded as links (never followed): path → bytes, or
/// `-> target` for a link.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", t.display()).into_bytes());
            } else if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(base, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The toolkit's own files, without our `.cuda-setup` records.
fn toolkit_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    snapshot(dir)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".cuda-setup"))
        .collect()
}

fn cuda_setup(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args);
    c
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` until it pauses at `point` (`lock::test_pause`), does `meanwhile` (the
/// other account's move), lets it go on and returns how it ended.
fn paused_at(mut cmd: Command, point: &str, meanwhile: impl FnOnce()) -> Output {
    let flags = tempfile::tempdir().unwrap();
    let flag = flags.path().join(format!("{point}.paused"));
    let child = cmd
        .env("CUDA_SETUP_TEST_PAUSE_AT", point)
        .env("CUDA_SETUP_TEST_PAUSE_DIR", flags.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !flag.exists() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "never reached {point}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    meanwhile();
    std::fs::remove_file(&flag).unwrap();
    child.wait_with_output().unwrap()
}

/// A Windows-layout toolkit with a header cuDNN replaces, its zip, and an outside folder
/// another account controls (holding one file of its own).
struct Scene {
    _w: tempfile::TempDir,
    dir: PathBuf,
    zip: PathBuf,
    outside: PathBuf,
}

fn scene() -> Scene {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.4.1");
    std::fs::write(
        dir.join("include/cudnn.h"),
        b"/* the toolkit's own cudnn.h */",
    )
    .unwrap();
    let zip = w.path().join(format!("{}.zip", SPEC.top()));
    SPEC.write(&zip);
    let outside = w.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("theirs.txt"), b"another account's file").unwrap();
    Scene {
        _w: w,
        dir,
        zip,
        outside,
    }
}

fn install_cmd(s: &Scene) -> Command {
    cuda_setup(&[
        "cudnn",
        "install",
        "--archive",
        p(&s.zip),
        "--cuda-dir",
        p(&s.dir),
    ])
}

/// `include/` a link out of the toolkit before the install: refused before anything is
/// written, the toolkit as it was, nothing outside.
#[test]
fn an_include_folder_linked_out_is_refused_and_nothing_is_written_outside() {
    let s = scene();
    // The other account moved the real include/ into its folder and linked it back.
    std::fs::rename(s.dir.join("include"), s.outside.join("include")).unwrap();
    symlink(s.outside.join("include"), s.dir.join("include")).unwrap();
    let outside_before = snapshot(&s.outside);
    let toolkit_before = toolkit_files(&s.dir);

    let out = install_cmd(&s).output().unwrap();
    assert_eq!(snapshot(&s.outside), outside_before, "written outside");
    assert_eq!(toolkit_files(&s.dir), toolkit_before, "the toolkit changed");
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(p(&s.dir.join("include"))), "{err}");
    assert!(err.contains("link"), "{err}");
    let meta = s.dir.join(".cuda-setup");
    assert!(
        !meta.join("cudnn-journal.json").exists() && !meta.join("cudnn-manifest.json").exists()
    );
    // The library says it as its own kind.
    match cudnn::install(&s.zip, &s.dir, &|_| {}) {
        Err(CudnnError::LinkOut { path }) => assert_eq!(path, s.dir.join("include")),
        other => panic!("{other:?}"),
    }
    assert_eq!(snapshot(&s.outside), outside_before);
}

/// `include/` swapped for a link out in the middle of the install (after the folders were
/// looked at, before the first file moves): the install goes on in the folder it had
/// opened — never through the link.
#[test]
fn an_include_folder_swapped_for_a_link_mid_install_gets_nothing_written_outside() {
    let s = scene();
    // The other account copies include/ into its folder, so that every name resolves
    // there once the link is in place.
    for e in std::fs::read_dir(s.dir.join("include")).unwrap().flatten() {
        std::fs::copy(e.path(), s.outside.join(e.file_name())).unwrap();
    }
    let outside_before = snapshot(&s.outside);
    let moved = s.dir.join("include.moved");
    let out = paused_at(install_cmd(&s), "cudnn_move", || {
        std::fs::rename(s.dir.join("include"), &moved).unwrap();
        symlink(&s.outside, s.dir.join("include")).unwrap();
    });
    assert_eq!(snapshot(&s.outside), outside_before, "written outside");
    // Completed inside, in the very folder it had resolved (now include.moved).
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let header = std::fs::read_to_string(moved.join("cudnn.h")).unwrap();
    assert!(header.contains(SPEC.version), "{header}");
    let backup = s.dir.join(".cuda-setup/cudnn-backup/include/cudnn.h");
    assert_eq!(
        std::fs::read(backup).unwrap(),
        b"/* the toolkit's own cudnn.h */"
    );
}

/// A planted `.cuda-setup` link: no lock, journal, staging or manifest written through
/// it; it is set aside (the link itself) and the next install works in a real folder.
#[test]
fn a_planted_records_folder_link_is_never_written_through() {
    let s = scene();
    symlink(&s.outside, s.dir.join(".cuda-setup")).unwrap();
    let outside_before = snapshot(&s.outside);
    let toolkit_before = toolkit_files(&s.dir);

    for cmd in [
        cuda_setup(&["cudnn", "uninstall", "--cuda-dir", p(&s.dir)]),
        install_cmd(&s),
    ] {
        let _ = std::fs::remove_file(s.dir.join(".cuda-setup"));
        symlink(&s.outside, s.dir.join(".cuda-setup")).unwrap();
        let mut cmd = cmd;
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", said(&out));
        assert_eq!(snapshot(&s.outside), outside_before, "written outside");
        assert_eq!(toolkit_files(&s.dir), toolkit_before, "the toolkit changed");
        let aside = std::fs::read_dir(&s.dir)
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".cuda-setup.rejected-")
            })
            .count();
        assert!(aside >= 1, "set aside as evidence");
    }
    // Once set aside, the next install makes its own folder.
    let out = install_cmd(&s).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let m = std::fs::symlink_metadata(s.dir.join(".cuda-setup")).unwrap();
    assert!(m.is_dir() && !m.file_type().is_symlink());
    assert_eq!(snapshot(&s.outside), outside_before, "written outside");
}

/// The backup folder swapped for a link out mid-install: the toolkit's own file is not
/// moved outside; the link is set aside and the backup made in a real folder (or the
/// install is refused and rolled back).
#[test]
fn a_backup_folder_linked_out_mid_install_rolls_back_and_sends_nothing_outside() {
    let s = scene();
    let outside_before = snapshot(&s.outside);
    let toolkit_before = toolkit_files(&s.dir);
    let out = paused_at(install_cmd(&s), "cudnn_move", || {
        let backup = s.dir.join(".cuda-setup/cudnn-backup");
        let _ = std::fs::remove_dir_all(&backup);
        symlink(&s.outside, &backup).unwrap();
    });
    assert_eq!(snapshot(&s.outside), outside_before, "written outside");
    assert!(!s.dir.join(".cuda-setup/cudnn-journal.json").exists());
    if out.status.success() {
        // The link was set aside (kept as evidence) and the backup made in a real folder.
        let backup = s.dir.join(".cuda-setup/cudnn-backup");
        let m = std::fs::symlink_metadata(&backup).unwrap();
        assert!(m.is_dir() && !m.file_type().is_symlink());
        assert_eq!(
            std::fs::read(backup.join("include/cudnn.h")).unwrap(),
            b"/* the toolkit's own cudnn.h */"
        );
    } else {
        // Or refused: rolled back, the toolkit as it was.
        assert_eq!(toolkit_files(&s.dir), toolkit_before, "not rolled back");
    }
    // The outside folder is still theirs, untouched, behind a link we never followed.
    assert_eq!(
        std::fs::read(s.outside.join("theirs.txt")).unwrap(),
        b"another account's file"
    );
}

/// The backup folder swapped for a link mid-uninstall (after the manifest was checked):
/// nothing is taken from outside into the toolkit, nothing outside is touched.
#[test]
fn a_backup_folder_linked_out_mid_uninstall_touches_nothing_outside() {
    let s = scene();
    let out = install_cmd(&s).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    std::fs::create_dir(s.outside.join("include")).unwrap();
    std::fs::write(s.outside.join("include/cudnn.h"), b"/* planted */").unwrap();
    let outside_before = snapshot(&s.outside);
    let out = paused_at(
        cuda_setup(&["cudnn", "uninstall", "--cuda-dir", p(&s.dir)]),
        "cudnn_move",
        || {
            let meta = s.dir.join(".cuda-setup");
            std::fs::rename(meta.join("cudnn-backup"), meta.join("moved-away")).unwrap();
            symlink(&s.outside, meta.join("cudnn-backup")).unwrap();
        },
    );
    assert_eq!(snapshot(&s.outside), outside_before, "outside touched");
    assert_ne!(
        std::fs::read(s.dir.join("include/cudnn.h")).unwrap(),
        b"/* planted */",
        "a file from outside was taken into the toolkit"
    );
    // Our own files are gone all the same; the link was removed as a link.
    assert!(
        !s.dir.join("include/cudnn_version.h").exists(),
        "{}",
        said(&out)
    );
    assert!(s.outside.join("include/cudnn.h").exists());
}

/// NVIDIA's own in-tree link (`lib64 -> targets/x86_64-linux/lib`) is still used: a link
/// that stays inside the toolkit is followed, inside. (A guard: main follows it too.)
#[test]
fn the_toolkits_own_lib64_link_inside_still_works() {
    let w = tempfile::tempdir().unwrap();
    let dir = linux_toolkit(w.path(), "12.4.1");
    let real = dir.join("targets/x86_64-linux/lib");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::rename(dir.join("lib64"), &real).unwrap();
    symlink("targets/x86_64-linux/lib", dir.join("lib64")).unwrap();
    let before = snapshot(&dir);
    let spec = cudnn_tar::LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 12,
        lib_size: 20_000,
    };
    let tarball = w.path().join(spec.file_name());
    spec.write(&tarball);
    let m = cudnn::install(&tarball, &dir, &|_| {}).unwrap();
    assert!(real.join("libcudnn.so.9").exists());
    let m2 = std::fs::symlink_metadata(dir.join("lib64")).unwrap();
    assert!(m2.file_type().is_symlink(), "the link stays a link");
    assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    cudnn::uninstall(&dir).unwrap();
    let after: BTreeMap<_, _> = snapshot(&dir)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".cuda-setup"))
        .collect();
    let before: BTreeMap<_, _> = before
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".cuda-setup"))
        .collect();
    assert_eq!(after, before, "{} files", m.files.len());
}

/// The cuDNN pre-stage beside the toolkit is created new: a link planted at its name is
/// removed as a link, never written through.
#[test]
fn a_link_planted_at_the_prestage_name_is_not_followed() {
    let s = scene();
    let pre = cudnn::prestage_path(&s.dir);
    symlink(&s.outside, &pre).unwrap();
    let outside_before = snapshot(&s.outside);
    let staged = cudnn::stage(&s.zip, &s.dir, &|_| {}).unwrap();
    let m = std::fs::symlink_metadata(&pre).unwrap();
    assert!(m.is_dir() && !m.file_type().is_symlink());
    assert_eq!(snapshot(&s.outside), outside_before, "written outside");
    drop(staged);
    assert!(std::fs::symlink_metadata(&pre).is_err());
}

/// The wheels' staging folder swapped for a link while the wheels are unpacked: the
/// entries still go into the folder we made, and the tree is refused, never finished
/// or put in place through the link.
#[test]
fn a_wheels_staging_folder_swapped_for_a_link_gets_nothing_written_outside() {
    use cuda_setup_core::compat::schema::Os;
    use cuda_setup_core::wheels::assemble::{AssembleSpec, Begin, Build};
    use cuda_setup_core::wheels::swap;

    let d = tempfile::tempdir().unwrap();
    let outside = d.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    let (a, b) = (
        d.path().join("a-1-py3-none-any.whl"),
        d.path().join("b-1-py3-none-any.whl"),
    );
    let write = |path: &Path, files: &[&str]| {
        let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for f in files {
            z.start_file(*f, opts).unwrap();
            std::io::Write::write_all(&mut z, f.as_bytes()).unwrap();
        }
        z.finish().unwrap();
    };
    write(&a, &["nvidia/cu13/bin/nvcc", "nvidia/cu13/include/a.h"]);
    write(
        &b,
        &["nvidia/cu13/lib/libcudart.so.13", "nvidia/cu13/include/b.h"],
    );
    let spec = AssembleSpec {
        version: "13.5.0".parse().unwrap(),
        wheels: vec![a.clone(), b.clone()],
        dir: d.path().join("cuda-13.5"),
    };
    // A link already at the staging name is removed, not followed.
    let staging = swap::staging_path(&spec.dir);
    symlink(&outside, &staging).unwrap();
    let Begin::Build(build) = Build::begin(&spec, Os::Linux, &|_| Ok(())).unwrap() else {
        panic!("nothing was there: a build begins");
    };
    let m = std::fs::symlink_metadata(&staging).unwrap();
    assert!(m.is_dir() && !m.file_type().is_symlink());

    // The second wheel arrives after the other account swapped the folder for a link.
    let moved = d.path().join("moved");
    let mut fed = 0;
    let wheels = std::iter::from_fn(|| {
        fed += 1;
        match fed {
            1 => Some(a.clone()),
            2 => {
                let t0 = std::time::Instant::now();
                while !staging.join("include/a.h").exists() {
                    assert!(t0.elapsed() < std::time::Duration::from_secs(20));
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
                std::fs::rename(&staging, &moved).unwrap();
                symlink(&outside, &staging).unwrap();
                Some(b.clone())
            }
            _ => None,
        }
    });
    let extracted = build.extract(wheels, 0, &|_, _| {}, &|| false);
    let finished = extracted.and_then(|()| build.finish(&|_| Ok(())));
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written outside: {:?}",
        std::fs::read_dir(&outside)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    );
    assert!(
        finished.is_err(),
        "a swapped staging folder is never finished"
    );
    assert!(
        !std::fs::symlink_metadata(&spec.dir).is_ok_and(|m| m.file_type().is_symlink()),
        "the link was put in place as the toolkit"
    );
}
