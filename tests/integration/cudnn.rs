//! cuDNN install as a transaction: real-layout archives, a hostile corpus, kill -9 at
//! every point of the transaction, uninstall and verify.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use cuda_setup_core::cudnn::{self, CudnnError, Refusal, archive};
use support::cudnn_zip::{Spec, toolkit, write_zip};

/// Every file under `dir` but our `.cuda-setup` records: path → bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    support::tree::files(dir, &|n| n == ".cuda-setup")
}

fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs `cmd` with the pause point `point` set (`lock::test_pause`, flag in `flags`):
/// kills it there (SIGKILL) and returns true, or returns false when it ended on its own
/// without reaching it.
fn killed_at(mut cmd: Command, point: &str, flags: &Path) -> bool {
    std::fs::create_dir_all(flags).unwrap();
    let flag = flags.join(format!("{point}.paused"));
    let mut child = cmd
        .env("CUDA_SETUP_TEST_PAUSE_AT", point)
        .env("CUDA_SETUP_TEST_PAUSE_DIR", flags)
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !flag.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "ended with {status} before {point}");
            return false;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "neither reached {point} nor ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    true
}

fn no_staging(dir: &Path) {
    let meta = dir.join(".cuda-setup");
    if let Ok(rd) = std::fs::read_dir(&meta) {
        for e in rd.flatten() {
            assert!(
                !e.file_name().to_string_lossy().starts_with("staging-"),
                "staging left behind"
            );
        }
    }
}

const SPEC_927_13: Spec = Spec {
    version: "9.27.0.42",
    cuda_major: 13,
    dll_size: 200_000,
};
const SPEC_910_12: Spec = Spec {
    version: "9.10.2.21",
    cuda_major: 12,
    dll_size: 150_000,
};
const SPEC_897_12: Spec = Spec {
    version: "8.9.7.29",
    cuda_major: 12,
    dll_size: 100_000,
};

#[test]
fn the_three_layouts_land_where_the_toolkit_keeps_its_dlls() {
    let w = tempfile::tempdir().unwrap();
    for (spec, tk, dll_dir) in [
        (&SPEC_927_13, "13.0.2", "bin/x64"),
        (&SPEC_910_12, "12.4.1", "bin"),
        (&SPEC_897_12, "12.9.1", "bin"),
    ] {
        let root = w.path().join(spec.version);
        let dir = toolkit(&root, tk);
        let zip = root.join(format!("{}.zip", spec.top()));
        spec.write(&zip);
        let before = tree(&dir);
        let m = cudnn::install(&zip, &dir, &|_| {}).unwrap();
        assert_eq!(
            m.cudnn_version.to_string(),
            spec.version[..spec.version.rfind('.').unwrap()].to_string()
        );
        let after = tree(&dir);
        // Every archive file is in place with its bytes; nothing of the toolkit was lost.
        for (name, bytes) in spec.files() {
            let inner = name.split_once('/').unwrap().1;
            let file = inner.rsplit('/').next().unwrap();
            let dest = match inner.split('/').next().unwrap() {
                "bin" => format!("{dll_dir}/{file}"),
                "include" => format!("include/{file}"),
                "lib" => format!("lib/x64/{file}"),
                _ => continue, // LICENSE goes with our records
            };
            assert_eq!(after.get(&dest), Some(&bytes), "{dest}");
        }
        for (k, v) in &before {
            assert_eq!(after.get(k), Some(v), "{k} changed");
        }
        no_staging(&dir);
        let r = cudnn::verify(&dir).unwrap();
        assert!(r.problems.is_empty() && r.files == m.files.len());
    }
}

#[test]
fn a_cuda_mismatch_is_refused_naming_the_right_archive() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.0.2");
    let zip = w.path().join("a.zip");
    SPEC_910_12.write(&zip);
    let before = tree(&dir);
    let out = cli(
        &[
            "cudnn",
            "install",
            "--archive",
            p(&zip),
            "--cuda-dir",
            p(&dir),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cudnn-windows-x86_64-9.10.2.21_cuda13-archive.zip"),
        "{err}"
    );
    assert!(err.contains("CUDA 12") && err.contains("13.0.2"), "{err}");
    assert_eq!(tree(&dir), before);
}

/// One archive per rule; each refused, nothing written outside staging, staging removed.
#[test]
fn the_hostile_corpus_is_refused() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.4.1");
    let top = SPEC_910_12.top();
    let good = SPEC_910_12.files();
    let with = |extra: (&str, &[u8])| {
        let mut f = good.clone();
        f.push((extra.0.to_string(), extra.1.to_vec()));
        f
    };
    let case_twin = format!("{top}/include/CUDNN.H");
    type Case = (&'static str, Vec<(String, Vec<u8>)>, fn(&Refusal) -> bool);
    let cases: Vec<Case> = vec![
        (
            "traversal",
            with((&format!("{top}/include/../../../evil.dll"), b"x")),
            |r| matches!(r, Refusal::Traversal { .. }),
        ),
        ("absolute", with(("/tmp/evil.dll", b"x")), |r| {
            matches!(r, Refusal::Absolute { .. })
        }),
        (
            "drive letter",
            with(("C:/Windows/System32/evil.dll", b"x")),
            |r| matches!(r, Refusal::Absolute { .. }),
        ),
        (
            "backslash",
            with((&format!("{top}\\bin\\..\\..\\evil.dll"), b"x")),
            |r| matches!(r, Refusal::Backslash { .. }),
        ),
        ("case collision", with((&case_twin, b"x")), |r| {
            matches!(r, Refusal::CaseCollision { .. })
        }),
        (
            "bomb ratio",
            with((
                &format!("{top}/bin/cudnn_bomb64_9.dll"),
                &vec![0u8; 20 << 20],
            )),
            |r| matches!(r, Refusal::Ratio { .. }),
        ),
        (
            "unknown file",
            with((&format!("{top}/bin/setup.exe"), b"MZ")),
            |r| matches!(r, Refusal::Layout { .. }),
        ),
        ("two top folders", with(("other-folder/x.dll", b"x")), |r| {
            matches!(r, Refusal::Layout { .. })
        }),
        (
            "no version header",
            good.iter()
                .filter(|(n, _)| !n.ends_with("cudnn_version.h") && !n.ends_with("/cudnn.h"))
                .cloned()
                .collect(),
            |r| matches!(r, Refusal::NoVersion),
        ),
    ];
    let before = tree(&dir);
    let outside = w.path().join("evil.dll");
    for (name, files, want) in cases {
        let zip = w.path().join(format!("{name}.zip"));
        write_zip(&zip, &files, false);
        match cudnn::install(&zip, &dir, &|_| {}) {
            Err(CudnnError::Refused { refusal, .. }) => {
                assert!(want(&refusal), "{name}: {refusal}")
            }
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(tree(&dir), before, "{name} changed the toolkit");
        assert!(
            !outside.exists() && !Path::new("/tmp/evil.dll").exists(),
            "{name} wrote outside"
        );
        no_staging(&dir);
    }

    // A symlink entry.
    let zip = w.path().join("symlink.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zip).unwrap());
        let o = zip::write::SimpleFileOptions::default();
        for (n, b) in &good {
            z.start_file(n.clone(), o).unwrap();
            std::io::Write::write_all(&mut z, b).unwrap();
        }
        z.add_symlink(format!("{top}/bin/cudnn_link64_9.dll"), "/etc/passwd", o)
            .unwrap();
        z.finish().unwrap();
    }
    assert!(matches!(
        cudnn::install(&zip, &dir, &|_| {}),
        Err(CudnnError::Refused {
            refusal: Refusal::Symlink { .. },
            ..
        })
    ));

    // Limits on count and total size (lowered: real bounds need gigabytes to trip).
    let zip = w.path().join("ok.zip");
    SPEC_910_12.write(&zip);
    let small = archive::Limits {
        entries: 10,
        ..Default::default()
    };
    assert!(matches!(
        archive::open_with(&zip, &small),
        Err(Refusal::TooManyEntries { .. })
    ));
    let small = archive::Limits {
        total_bytes: 1000,
        ..Default::default()
    };
    assert!(matches!(
        archive::open_with(&zip, &small),
        Err(Refusal::TooLarge { .. })
    ));

    // Bad CRC: one byte of a DLL's compressed data flipped.
    let mut bytes = std::fs::read(&zip).unwrap();
    let at = find(&bytes, b"cudnn64_9.dll").unwrap() + 200; // inside the first DLL's data
    bytes[at] ^= 0xff;
    let bad = w.path().join("crc.zip");
    std::fs::write(&bad, &bytes).unwrap();
    match cudnn::install(&bad, &dir, &|_| {}) {
        Err(CudnnError::Refused {
            refusal: Refusal::Corrupt { .. },
            ..
        }) => {}
        other => panic!("bad crc: {other:?}"),
    }
    // Truncated: the central directory is gone.
    let cut = w.path().join("cut.zip");
    std::fs::write(&cut, &std::fs::read(&zip).unwrap()[..200_000]).unwrap();
    assert!(matches!(
        cudnn::install(&cut, &dir, &|_| {}),
        Err(CudnnError::Refused {
            refusal: Refusal::NotZip { .. },
            ..
        })
    ));
    assert_eq!(tree(&dir), before);
    no_staging(&dir);
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn uninstall_restores_the_previous_bytes_and_verify_spots_changes() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.4.1");
    // A cuDNN someone copied in by hand earlier: our install replaces and backs it up.
    std::fs::write(dir.join("bin/cudnn64_9.dll"), b"old hand-copied dll").unwrap();
    std::fs::write(dir.join("include/cudnn.h"), b"/* old header */").unwrap();
    let before = tree(&dir);
    let zip = w.path().join("c.zip");
    SPEC_910_12.write(&zip);
    let out = cli(
        &[
            "cudnn",
            "install",
            "--json",
            "--archive",
            p(&zip),
            "--cuda-dir",
            p(&dir),
        ],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        m["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["replaced"] == true)
            .count(),
        2
    );

    assert_eq!(
        cli(&["cudnn", "verify", "--cuda-dir", p(&dir)], &[])
            .status
            .code(),
        Some(0)
    );
    std::fs::remove_file(dir.join("bin/cudnn_ops64_9.dll")).unwrap();
    std::fs::write(dir.join("include/cudnn_cnn.h"), b"edited").unwrap();
    let out = cli(&["cudnn", "verify", "--json", "--cuda-dir", p(&dir)], &[]);
    assert_eq!(out.status.code(), Some(4));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems: Vec<(String, String)> = r["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["path"].as_str().unwrap().into(),
                x["problem"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        problems,
        [
            ("bin/cudnn_ops64_9.dll".to_string(), "missing".to_string()),
            ("include/cudnn_cnn.h".into(), "altered".into())
        ]
    );

    let out = cli(&["cudnn", "uninstall", "--cuda-dir", p(&dir)], &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        tree(&dir),
        before,
        "uninstall must restore the pre-install bytes"
    );
    assert_eq!(
        cli(&["cudnn", "verify", "--cuda-dir", p(&dir)], &[])
            .status
            .code(),
        Some(4),
        "nothing installed now"
    );
}

#[test]
fn an_upgrade_then_uninstall_returns_to_the_original() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.9.1");
    let before = tree(&dir);
    let (a, b) = (w.path().join("a.zip"), w.path().join("b.zip"));
    SPEC_897_12.write(&a);
    Spec {
        version: "9.27.0.42",
        cuda_major: 12,
        dll_size: 50_000,
    }
    .write(&b);
    cudnn::install(&a, &dir, &|_| {}).unwrap();
    let m = cudnn::install(&b, &dir, &|_| {}).unwrap();
    assert!(
        m.files.iter().all(|f| !f.replaced),
        "the old cuDNN was uninstalled first"
    );
    assert!(!dir.join("bin/cudnn64_8.dll").exists() && dir.join("bin/cudnn64_9.dll").exists());
    cudnn::uninstall(&dir).unwrap();
    assert_eq!(tree(&dir), before);
}

#[test]
fn a_file_in_use_rolls_everything_back() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.4.1");
    std::fs::write(dir.join("bin/cudnn64_9.dll"), b"old").unwrap();
    let before = tree(&dir);
    let zip = w.path().join("c.zip");
    SPEC_910_12.write(&zip);
    // Fail half way through the moves, as Windows does for a DLL a Python holds open.
    let out = cli(
        &[
            "cudnn",
            "install",
            "--archive",
            p(&zip),
            "--cuda-dir",
            p(&dir),
        ],
        &[("CUDA_SETUP_TEST_IN_USE", "include/cudnn.h")],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // What to do is said once, on the hint: line (#31: no longer a second English hint
    // under details).
    assert!(
        err.contains("include/cudnn.h")
            && err.contains("in use")
            && err.contains("hint: close Python, Jupyter"),
        "{err}"
    );
    assert_eq!(tree(&dir), before);
    no_staging(&dir);
    assert!(!dir.join(".cuda-setup/cudnn-journal.json").exists());
}

/// Kill -9 before each move of the transaction in turn: after recovery the folder is
/// exactly the old state (the transaction rolled back); a rerun always completes; the run
/// that reaches no more moves leaves exactly the new state.
#[test]
fn kill_9_at_every_move_never_leaves_a_mix() {
    let w = tempfile::tempdir().unwrap();
    let zip = w.path().join("c.zip");
    SPEC_927_13.write(&zip);
    let reference = toolkit(&w.path().join("ref"), "13.0.2");
    let bare = tree(&reference);
    cudnn::install(&zip, &reference, &|_| {}).unwrap();
    let new_state = tree(&reference);

    let install = |dir: &Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
        c.args([
            "cudnn",
            "install",
            "--archive",
            p(&zip),
            "--cuda-dir",
            p(dir),
        ]);
        c
    };
    let mut kills = 0;
    loop {
        let dir = toolkit(&w.path().join(format!("t{kills}")), "13.0.2");
        std::fs::write(dir.join("bin/x64/cudnn64_9.dll"), b"old").unwrap();
        let old_state = tree(&dir);
        let mut expect_new = old_state.clone();
        expect_new.extend(new_state.clone());
        let point = format!("cudnn_move_{kills}");
        if !killed_at(install(&dir), &point, &w.path().join("flags")) {
            assert_eq!(tree(&dir), expect_new, "the run past every move");
            break;
        }
        kills += 1;
        assert_eq!(
            cudnn::recover(&dir).unwrap(),
            Some(cudnn::Recovered::RolledBack),
            "killed at {point}"
        );
        assert_eq!(tree(&dir), old_state, "killed at {point}: a mix was left");
        no_staging(&dir);
        // A rerun completes.
        cudnn::install(&zip, &dir, &|_| {}).unwrap();
        assert_eq!(tree(&dir), expect_new, "killed at {point}: rerun");
        assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    }
    // At least one kill per file the archive adds (each is a move).
    let added = new_state.keys().filter(|k| !bare.contains_key(*k)).count();
    assert!(kills >= added, "{kills} kills, {added} files added");
}

// NVIDIA's Linux tarball: the same pipeline, with symbolic links.

#[cfg(unix)]
mod linux_tarball {
    use super::*;
    use support::cudnn_tar::{Item, LIBS_9, LinuxSpec, linux_toolkit, write_tar_xz};

    const SPEC: LinuxSpec = LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 12,
        lib_size: 120_000,
    };

    /// Every entry under `dir` but our records, links as `-> target` (never followed).
    fn tree_links(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                let p = e.path();
                if e.file_name() == ".cuda-setup" {
                    continue;
                }
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                let ft = e.file_type().unwrap();
                if ft.is_symlink() {
                    let t = std::fs::read_link(&p).unwrap();
                    out.insert(rel, format!("-> {}", t.display()).into_bytes());
                } else if ft.is_dir() {
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

    /// Where each archive entry lands: include → include, lib → lib64, LICENSE stays out.
    fn dest(name: &str) -> Option<String> {
        let inner = name.split_once('/').unwrap().1;
        let file = inner.rsplit('/').next().unwrap();
        match inner.split('/').next().unwrap() {
            "include" => Some(format!("include/{file}")),
            "lib" => Some(format!("lib64/{file}")),
            _ => None,
        }
    }

    #[test]
    fn the_linux_tarball_lands_with_its_links_and_uninstall_restores_the_old_ones() {
        let w = tempfile::tempdir().unwrap();
        let dir = linux_toolkit(w.path(), "12.4.1");
        // A cuDNN 8 someone copied in by hand: its link is replaced (and backed up as a
        // link), its real file stays.
        std::fs::write(dir.join("lib64/libcudnn.so.8"), b"old cudnn 8").unwrap();
        std::os::unix::fs::symlink("libcudnn.so.8", dir.join("lib64/libcudnn.so")).unwrap();
        std::fs::write(dir.join("include/cudnn.h"), b"/* old header */").unwrap();
        let before = tree_links(&dir);
        let tarball = w.path().join(SPEC.file_name());
        SPEC.write(&tarball);

        let out = cli(
            &[
                "cudnn",
                "install",
                "--json",
                "--archive",
                p(&tarball),
                "--cuda-dir",
                p(&dir),
            ],
            &[],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let m: cudnn::Manifest = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(m.cudnn_version.to_string(), "9.10.2");
        assert_eq!(m.cuda_major, Some(12));

        let after = tree_links(&dir);
        let mut links = 0;
        for item in SPEC.items() {
            match item {
                Item::File(name, bytes) => {
                    if let Some(d) = dest(&name) {
                        assert_eq!(after.get(&d), Some(&bytes), "{d}");
                        assert!(!dir.join(&d).symlink_metadata().unwrap().is_symlink());
                    }
                }
                Item::Symlink(name, target) => {
                    let d = dest(&name).unwrap();
                    assert!(d.starts_with("lib64/"), "{d}");
                    assert_eq!(
                        std::fs::read_link(dir.join(&d)).unwrap(),
                        Path::new(&target),
                        "{d}"
                    );
                    let f = m.files.iter().find(|f| f.path == d).expect("in manifest");
                    assert_eq!(f.link.as_deref(), Some(target.as_str()));
                    links += 1;
                }
                _ => {}
            }
        }
        assert_eq!(links, LIBS_9.len() * 2 + 1);
        // The links resolve: `libcudnn.so` reads the real library's bytes.
        let real = std::fs::read(dir.join("lib64/libcudnn.so.9.10.2")).unwrap();
        assert_eq!(std::fs::read(dir.join("lib64/libcudnn.so")).unwrap(), real);
        let replaced: Vec<&str> = m
            .files
            .iter()
            .filter(|f| f.replaced)
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(replaced, ["include/cudnn.h", "lib64/libcudnn.so"]);
        assert!(dir.join(".cuda-setup/cudnn-LICENSE").is_file());
        for (k, v) in &before {
            if !replaced.contains(&k.as_str()) {
                assert_eq!(after.get(k), Some(v), "{k} changed");
            }
        }
        no_staging(&dir);
        // The manifest on disk records the links; verify is clean.
        let on_disk = cudnn::txn::read_manifest(&dir).unwrap().unwrap();
        assert_eq!(on_disk, m);
        assert_eq!(
            cli(&["cudnn", "verify", "--cuda-dir", p(&dir)], &[])
                .status
                .code(),
            Some(0)
        );

        // A link pointed elsewhere is altered; a link removed is missing; a link turned
        // into a copy of its file is altered too.
        let ops = dir.join("lib64/libcudnn_ops.so");
        std::fs::remove_file(&ops).unwrap();
        std::os::unix::fs::symlink("libcudnn.so.8", &ops).unwrap();
        std::fs::remove_file(dir.join("lib64/libcudnn_cnn.so.9")).unwrap();
        let adv = dir.join("lib64/libcudnn_adv.so");
        let bytes = std::fs::read(&adv).unwrap();
        std::fs::remove_file(&adv).unwrap();
        std::fs::write(&adv, bytes).unwrap();
        let r = cudnn::verify(&dir).unwrap();
        let problems: Vec<(&str, &str)> = r
            .problems
            .iter()
            .map(|x| (x.path.as_str(), x.problem))
            .collect();
        let mut problems = problems;
        problems.sort();
        assert_eq!(
            problems,
            [
                ("lib64/libcudnn_adv.so", "altered"),
                ("lib64/libcudnn_cnn.so.9", "missing"),
                ("lib64/libcudnn_ops.so", "altered"),
            ]
        );

        let out = cli(&["cudnn", "uninstall", "--cuda-dir", p(&dir)], &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            tree_links(&dir),
            before,
            "uninstall must restore the pre-install files and links"
        );
    }

    #[test]
    fn a_reinstall_over_our_own_links_then_uninstall_returns_to_the_original() {
        let w = tempfile::tempdir().unwrap();
        let dir = linux_toolkit(w.path(), "12.9.1");
        let before = tree_links(&dir);
        let tarball = w.path().join(SPEC.file_name());
        SPEC.write(&tarball);
        cudnn::install(&tarball, &dir, &|_| {}).unwrap();
        let first = tree_links(&dir);
        let m = cudnn::install(&tarball, &dir, &|_| {}).unwrap();
        assert!(
            m.files.iter().all(|f| !f.replaced),
            "ours was uninstalled first"
        );
        assert_eq!(tree_links(&dir), first);
        assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
        cudnn::uninstall(&dir).unwrap();
        assert_eq!(tree_links(&dir), before);
    }

    #[test]
    fn a_linux_tarball_for_another_cuda_is_refused_naming_the_right_one() {
        let w = tempfile::tempdir().unwrap();
        let dir = linux_toolkit(w.path(), "13.0.2");
        let tarball = w.path().join(SPEC.file_name());
        SPEC.write(&tarball);
        let before = tree_links(&dir);
        let out = cli(
            &[
                "cudnn",
                "install",
                "--archive",
                p(&tarball),
                "--cuda-dir",
                p(&dir),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(3));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cudnn-linux-x86_64-9.10.2.21_cuda13-archive.tar.xz"),
            "{err}"
        );
        assert!(err.contains("CUDA 12") && err.contains("13.0.2"), "{err}");
        assert_eq!(tree_links(&dir), before);
        no_staging(&dir);
        // The one pass extracted into staging before the mismatch was known: nothing of
        // it (not even our own folder) is left in a toolkit we never installed into.
        assert!(!dir.join(".cuda-setup").exists());
    }

    /// One tarball per rule, refused with a cuDNN of ours already installed: the toolkit
    /// (files, links and the installed cuDNN) is exactly as before, nothing is written
    /// outside, no staging is left.
    #[test]
    fn the_hostile_tarball_corpus_is_refused() {
        let w = tempfile::tempdir().unwrap();
        let dir = linux_toolkit(w.path(), "12.4.1");
        let good_file = w.path().join(SPEC.file_name());
        SPEC.write(&good_file);
        cudnn::install(&good_file, &dir, &|_| {}).unwrap();
        let top = SPEC.top();
        let good = SPEC.items();
        let with = |extra: Item| {
            let mut v = good.clone();
            v.push(extra);
            v
        };
        let lib = |f: &str| format!("{top}/lib/{f}");
        type Case = (&'static str, Vec<Item>, fn(&Refusal) -> bool);
        let cases: Vec<Case> = vec![
            (
                "traversal",
                with(Item::File(
                    format!("{top}/lib/../../../evil.so"),
                    b"x".to_vec(),
                )),
                |r| matches!(r, Refusal::Traversal { .. }),
            ),
            (
                "absolute",
                with(Item::File("/tmp/evil.so".into(), b"x".to_vec())),
                |r| matches!(r, Refusal::Absolute { .. }),
            ),
            (
                "backslash",
                with(Item::File(format!("{top}\\lib\\evil.so"), b"x".to_vec())),
                |r| matches!(r, Refusal::Backslash { .. }),
            ),
            (
                "hard link",
                with(Item::HardLink(lib("libcudnn_h.so"), "/etc/passwd".into())),
                |r| matches!(r, Refusal::HardLink { .. }),
            ),
            ("fifo", with(Item::Fifo(lib("libcudnn_fifo.so"))), |r| {
                matches!(r, Refusal::Special { .. })
            }),
            (
                "character device",
                with(Item::CharDevice(lib("libcudnn_dev.so"))),
                |r| matches!(r, Refusal::Special { .. }),
            ),
            (
                "link outside lib/",
                with(Item::Symlink(
                    format!("{top}/include/cudnn_x.h"),
                    "cudnn.h".into(),
                )),
                |r| matches!(r, Refusal::BadLink { .. }),
            ),
            (
                "link to an absolute path",
                with(Item::Symlink(lib("libcudnn_x.so"), "/etc/passwd".into())),
                |r| matches!(r, Refusal::BadLink { .. }),
            ),
            (
                "link out of its folder",
                with(Item::Symlink(
                    lib("libcudnn_x.so"),
                    "../include/cudnn.h".into(),
                )),
                |r| matches!(r, Refusal::BadLink { .. }),
            ),
            (
                "link to ..",
                with(Item::Symlink(lib("libcudnn_x.so"), "..".into())),
                |r| matches!(r, Refusal::BadLink { .. }),
            ),
            (
                "link to nothing in the archive",
                with(Item::Symlink(
                    lib("libcudnn_x.so"),
                    "libcudnn_x.so.9".into(),
                )),
                |r| matches!(r, Refusal::BadLink { .. }),
            ),
            (
                "link loop",
                with(Item::Symlink(lib("libcudnn_x.so"), "libcudnn_x.so".into())),
                |r| matches!(r, Refusal::BadLink { .. }),
            ),
            (
                "case twin",
                with(Item::File(format!("{top}/include/CUDNN.H"), b"x".to_vec())),
                |r| matches!(r, Refusal::CaseCollision { .. }),
            ),
            (
                "two top folders",
                with(Item::File(
                    "other-folder/lib/libcudnn.so".into(),
                    b"x".to_vec(),
                )),
                |r| matches!(r, Refusal::Layout { .. }),
            ),
            (
                "unknown file",
                with(Item::File(format!("{top}/bin/setup"), b"ELF".to_vec())),
                |r| matches!(r, Refusal::Layout { .. }),
            ),
            (
                "unknown library",
                with(Item::File(lib("libevil.so"), b"ELF".to_vec())),
                |r| matches!(r, Refusal::Layout { .. }),
            ),
            (
                "windows folder name",
                SPEC.items()
                    .into_iter()
                    .map(|i| match i {
                        Item::File(n, b) => {
                            Item::File(n.replace("cudnn-linux-x86_64", "cudnn-windows-x86_64"), b)
                        }
                        Item::Symlink(n, t) => Item::Symlink(
                            n.replace("cudnn-linux-x86_64", "cudnn-windows-x86_64"),
                            t,
                        ),
                        Item::Dir(n) => {
                            Item::Dir(n.replace("cudnn-linux-x86_64", "cudnn-windows-x86_64"))
                        }
                        other => other,
                    })
                    .collect(),
                |r| matches!(r, Refusal::Layout { .. }),
            ),
            (
                "no version header",
                good.iter()
                    .filter(|i| {
                        !i.name().ends_with("cudnn_version.h") && !i.name().ends_with("/cudnn.h")
                    })
                    .cloned()
                    .collect(),
                |r| matches!(r, Refusal::NoVersion),
            ),
        ];
        let before = tree_links(&dir);
        let outside = w.path().join("evil.so");
        let refuse = |name: &str, file: &Path, want: fn(&Refusal) -> bool| {
            match cudnn::install(file, &dir, &|_| {}) {
                Err(CudnnError::Refused { refusal, .. }) => {
                    assert!(want(&refusal), "{name}: {refusal}")
                }
                other => panic!("{name}: {other:?}"),
            }
            assert_eq!(tree_links(&dir), before, "{name} changed the toolkit");
            assert!(
                !outside.exists() && !Path::new("/tmp/evil.so").exists(),
                "{name} wrote outside"
            );
            no_staging(&dir);
        };
        for (name, items, want) in cases {
            let file = w
                .path()
                .join(format!("{}.tar.xz", name.replace(['/', ' '], "_")));
            write_tar_xz(&file, &items);
            refuse(name, &file, want);
        }

        // Damage: a byte flipped in the compressed data, and a file cut short.
        let bytes = std::fs::read(&good_file).unwrap();
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 0xff;
        let bad = w.path().join("flipped.tar.xz");
        std::fs::write(&bad, &flipped).unwrap();
        refuse("flipped byte", &bad, |r| {
            matches!(r, Refusal::Corrupt { .. })
        });
        let cut = w.path().join("cut.tar.xz");
        std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
        refuse("truncated", &cut, |r| matches!(r, Refusal::Corrupt { .. }));

        // A GNU long-name record far longer than any name (the tar crate would read it
        // whole into memory).
        let mut huge = good.clone();
        huge.push(Item::LongNameRecord(4 << 20));
        huge.push(Item::File(lib("libcudnn_x.so"), b"x".to_vec()));
        let file = w.path().join("long-name-record.tar.xz");
        write_tar_xz(&file, &huge);
        refuse("huge long-name record", &file, |r| {
            matches!(r, Refusal::Corrupt { .. })
        });
        // A hostile name hidden in a long-name record is checked like any other.
        let mut hidden = good.clone();
        hidden.push(Item::File(
            format!("{top}/lib/{}/../../../../evil.so", "d".repeat(100)),
            b"x".to_vec(),
        ));
        let file = w.path().join("hidden.tar.xz");
        write_tar_xz(&file, &hidden);
        refuse("traversal in a long name", &file, |r| {
            matches!(r, Refusal::Traversal { .. })
        });

        // The same in a PAX path record, and a PAX link target pointing out.
        let mut pax = good.clone();
        pax.push(Item::Pax("path".into(), "../../evil.so".into()));
        pax.push(Item::File(lib("libcudnn_p.so"), b"x".to_vec()));
        let file = w.path().join("pax.tar.xz");
        write_tar_xz(&file, &pax);
        refuse("traversal in a PAX path", &file, |r| {
            matches!(r, Refusal::Traversal { .. })
        });
        let mut pax = good.clone();
        pax.push(Item::Pax("linkpath".into(), "/etc/passwd".into()));
        pax.push(Item::Symlink(lib("libcudnn_p.so"), "libcudnn.so".into()));
        let file = w.path().join("pax-link.tar.xz");
        write_tar_xz(&file, &pax);
        refuse("absolute PAX link target", &file, |r| {
            matches!(r, Refusal::BadLink { .. })
        });

        // A bomb: 24 MiB of zeros packed into kilobytes. The decoder stops at 200:1
        // without inflating the rest.
        let mut bomb: Vec<Item> = good
            .iter()
            .filter(|i| i.name().contains("/include/") || i.name().ends_with('/'))
            .cloned()
            .collect();
        bomb.push(Item::File(lib("libcudnn.so.9.10.2"), vec![0u8; 24 << 20]));
        let file = w.path().join("bomb.tar.xz");
        write_tar_xz(&file, &bomb);
        assert!(std::fs::metadata(&file).unwrap().len() < 200_000);
        refuse("bomb", &file, |r| matches!(r, Refusal::Ratio { .. }));

        // Limits (lowered: the real bounds need gigabytes to trip).
        for (limits, want) in [
            (
                archive::Limits {
                    entries: 10,
                    ..Default::default()
                },
                (|r: &Refusal| matches!(r, Refusal::TooManyEntries { .. })) as fn(&Refusal) -> bool,
            ),
            (
                archive::Limits {
                    total_bytes: 100_000,
                    ..Default::default()
                },
                |r| matches!(r, Refusal::TooLarge { .. }),
            ),
            (
                archive::Limits {
                    ratio: 0,
                    ..Default::default()
                },
                |r| matches!(r, Refusal::Ratio { .. }),
            ),
        ] {
            let r = archive::open_with(&good_file, &limits).unwrap_err();
            assert!(want(&r), "{limits:?}: {r}");
        }
        // Still the good install, intact.
        assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    }

    /// Kill -9 before each move of a tarball install in turn (links and a replaced link
    /// among the moves): after recovery the folder is exactly the old state, links
    /// included; the rerun and an uninstall after it are exact too.
    #[test]
    fn kill_9_during_a_tarball_install_never_leaves_a_mix_of_links() {
        let w = tempfile::tempdir().unwrap();
        let tarball = w.path().join(SPEC.file_name());
        SPEC.write(&tarball);
        let old_link = |dir: &Path| {
            std::fs::write(dir.join("lib64/libcudnn.so.8"), b"old cudnn 8").unwrap();
            std::os::unix::fs::symlink("libcudnn.so.8", dir.join("lib64/libcudnn.so")).unwrap();
        };
        let reference = linux_toolkit(&w.path().join("ref"), "12.4.1");
        old_link(&reference);
        cudnn::install(&tarball, &reference, &|_| {}).unwrap();
        let new_state = tree_links(&reference);
        let install = |dir: &Path| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
            c.args([
                "cudnn",
                "install",
                "--archive",
                p(&tarball),
                "--cuda-dir",
                p(dir),
            ]);
            c
        };
        let mut kills = 0;
        loop {
            let dir = linux_toolkit(&w.path().join(format!("t{kills}")), "12.4.1");
            old_link(&dir);
            let old_state = tree_links(&dir);
            let point = format!("cudnn_move_{kills}");
            if !killed_at(install(&dir), &point, &w.path().join("flags")) {
                assert_eq!(tree_links(&dir), new_state, "the run past every move");
                break;
            }
            kills += 1;
            assert_eq!(
                cudnn::recover(&dir).unwrap(),
                Some(cudnn::Recovered::RolledBack),
                "killed at {point}"
            );
            assert_eq!(tree_links(&dir), old_state, "killed at {point}: a mix");
            no_staging(&dir);
            cudnn::install(&tarball, &dir, &|_| {}).unwrap();
            assert_eq!(tree_links(&dir), new_state, "killed at {point}: rerun");
            cudnn::uninstall(&dir).unwrap();
            assert_eq!(tree_links(&dir), old_state, "killed at {point}: uninstall");
        }
        assert!(kills >= LIBS_9.len(), "{kills} kills");
    }

    /// Names over 100 bytes come in GNU long-name records, as GNU tar writes them.
    #[test]
    fn a_long_name_from_its_gnu_record_is_installed() {
        let w = tempfile::tempdir().unwrap();
        let dir = linux_toolkit(w.path(), "12.4.1");
        let long = format!("cudnn_{}.h", "x".repeat(90));
        let mut items = SPEC.items();
        items.push(Item::File(
            format!("{}/include/{long}", SPEC.top()),
            b"/* long */".to_vec(),
        ));
        let file = w.path().join(SPEC.file_name());
        write_tar_xz(&file, &items);
        cudnn::install(&file, &dir, &|_| {}).unwrap();
        assert_eq!(
            std::fs::read(dir.join("include").join(&long)).unwrap(),
            b"/* long */"
        );
        assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    }

    /// A record written before links existed (no `link` field) still reads.
    #[test]
    fn an_old_manifest_without_links_still_reads() {
        let text = r#"{"format":1,"cudnn_version":"9.10.2","cuda_major":12,"toolkit_version":"12.4.1",
            "archive":"a.zip","files":[{"path":"bin/cudnn64_9.dll","sha256":"00","size":1,"replaced":false}]}"#;
        let m: cudnn::Manifest = serde_json::from_str(text).unwrap();
        assert_eq!(m.files[0].link, None);
        let back = serde_json::to_string(&m).unwrap();
        assert!(!back.contains("link"), "{back}");
    }
}

// One destination, one source: entries the layout mapping (bin/ and bin/x64/, lib/ and
// lib/x64/) or Windows' case-insensitive names put on one file are refused.

/// The entries of a zip, in order.
fn zip_files(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut e = z.by_index(i).unwrap();
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut e, &mut b).unwrap();
            (e.name().unwrap().to_string(), b)
        })
        .collect()
}

#[test]
fn entries_that_land_on_one_file_are_refused_before_anything_is_written() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.4.1");
    let top = SPEC_910_12.top();
    let good = SPEC_910_12.files();
    let with = |extra: &[(&str, &[u8])]| {
        let mut f = good.clone();
        f.extend(extra.iter().map(|(n, b)| (n.to_string(), b.to_vec())));
        f
    };
    let wheel_name = support::cudnn_zip::write_cudnn_wheel(w.path(), "9.10.2.21", 12, true);
    let wheel = zip_files(&w.path().join(&wheel_name));
    let wheel_with = |extra: &[(&str, &[u8])]| {
        let mut f = wheel.clone();
        f.extend(extra.iter().map(|(n, b)| (n.to_string(), b.to_vec())));
        f
    };
    let same = |r: &Refusal| matches!(r, Refusal::SameDestination { .. });
    let case = |r: &Refusal| matches!(r, Refusal::CaseCollision { .. });
    type Case = (&'static str, Vec<(String, Vec<u8>)>, fn(&Refusal) -> bool);
    let cases: Vec<Case> = vec![
        (
            "lib and lib/x64",
            with(&[(&format!("{top}/lib/cudnn.lib"), b"other cudnn.lib")]),
            same,
        ),
        (
            "bin and bin/x64",
            with(&[(&format!("{top}/bin/x64/cudnn64_9.dll"), b"MZ other")]),
            same,
        ),
        (
            "bin and bin/x64, other case",
            with(&[(&format!("{top}/bin/x64/CUDNN64_9.dll"), b"MZ other")]),
            same,
        ),
        (
            "case twins",
            with(&[(&format!("{top}/bin/CUDNN64_9.dll"), b"MZ other")]),
            case,
        ),
        (
            // NTFS upper-cases the long s to S: one file on Windows.
            "long s",
            with(&[
                (&format!("{top}/bin/cudnn_ſub64_9.dll"), b"MZ a"),
                (&format!("{top}/bin/cudnn_sub64_9.dll"), b"MZ b"),
            ]),
            case,
        ),
        (
            "wheel lib and lib/x64",
            wheel_with(&[
                ("nvidia/cudnn/lib/cudnn.lib", b"a"),
                ("nvidia/cudnn/lib/x64/cudnn.lib", b"b"),
            ]),
            same,
        ),
        (
            "wheel bin and bin/x64",
            wheel_with(&[("nvidia/cudnn/bin/x64/cudnn64_9.dll", b"MZ other")]),
            same,
        ),
        (
            "two wheel licences",
            wheel_with(&[(
                "nvidia_cudnn_cu12-9.10.2.22.dist-info/licenses/License.txt",
                b"another",
            )]),
            same,
        ),
    ];
    let before = tree(&dir);
    for (i, (name, files, want)) in cases.into_iter().enumerate() {
        let zip = w.path().join(format!("case{i}.zip"));
        write_zip(&zip, &files, false);
        match cudnn::install(&zip, &dir, &|_| {}) {
            Err(CudnnError::Refused { refusal, .. }) => {
                assert!(want(&refusal), "{name}: {refusal}")
            }
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(tree(&dir), before, "{name} changed the toolkit");
        assert!(!dir.join(".cuda-setup").exists(), "{name} left records");
    }
}

#[test]
fn a_colliding_archive_no_longer_loses_the_toolkits_own_file() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.4.1");
    // Before: both DLLs went to bin/; the second backed up the first over the toolkit's
    // own file, and uninstall "restored" the archive's copy.
    let original = b"MZ the toolkit's own cudnn64_9.dll".to_vec();
    std::fs::write(dir.join("bin/cudnn64_9.dll"), &original).unwrap();
    let before = tree(&dir);
    let top = SPEC_910_12.top();
    let mut files = SPEC_910_12.files();
    files.push((
        format!("{top}/bin/x64/cudnn64_9.dll"),
        b"MZ second copy".to_vec(),
    ));
    let zip = w.path().join("twice.zip");
    write_zip(&zip, &files, true);
    let out = cli(
        &[
            "cudnn",
            "install",
            "--archive",
            p(&zip),
            "--cuda-dir",
            p(&dir),
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!("{top}/bin/cudnn64_9.dll"))
            && err.contains(&format!("{top}/bin/x64/cudnn64_9.dll"))
            && err.contains("both be installed as bin/x64/cudnn64_9.dll"),
        "{err}"
    );
    assert_eq!(tree(&dir), before);
    let out = cli(&["cudnn", "uninstall", "--cuda-dir", p(&dir)], &[]);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        std::fs::read(dir.join("bin/cudnn64_9.dll")).unwrap(),
        original
    );
    assert_eq!(tree(&dir), before);
}

#[cfg(unix)]
#[test]
fn a_tarball_with_names_one_on_windows_is_refused() {
    use support::cudnn_tar::{Item, LinuxSpec, linux_toolkit, write_tar_xz};
    let spec = LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 12,
        lib_size: 10_000,
    };
    let w = tempfile::tempdir().unwrap();
    let dir = linux_toolkit(w.path(), "12.4.1");
    let before = tree(&dir);
    let top = spec.top();
    for (name, twin) in [
        ("case", "lib/LIBCUDNN_OPS.so.9.10.2"),
        ("long s", "lib/libcudnn_opſ.so.9.10.2"),
    ] {
        let mut items = spec.items();
        items.push(Item::File(format!("{top}/{twin}"), b"twin".to_vec()));
        let file = w.path().join(format!("{}.tar.xz", name.replace(' ', "-")));
        write_tar_xz(&file, &items);
        match cudnn::install(&file, &dir, &|_| {}) {
            Err(CudnnError::Refused {
                refusal: Refusal::CaseCollision { .. },
                ..
            }) => {}
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(tree(&dir), before, "{name}");
        assert!(!dir.join(".cuda-setup").exists(), "{name} left records");
    }
}

// #19: the developer names NVIDIA's cuDNN wheel lacks (`cudnn.lib`, `libcudnn.so`), made
// at install, in the manifest, checked by verify, removed by uninstall.

/// The import libraries a Windows wheel install adds: one per DLL, named as NVIDIA's zip
/// names them (`cudnn_adv64_9.dll` → `cudnn_adv.lib`).
fn wheel_libs() -> Vec<(String, &'static str)> {
    support::cudnn_zip::WHEEL_DLLS
        .iter()
        .map(|d| {
            (
                format!("lib/x64/{}.lib", d.split("64_").next().unwrap()),
                *d,
            )
        })
        .collect()
}

#[test]
fn a_windows_cudnn_wheel_gets_import_libraries_that_uninstall_removes() {
    use cuda_setup_core::devlayout::implib;
    use support::cudnn_zip::{wheel_dll_exports, write_cudnn_wheel};
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.0.2");
    let before = tree(&dir);
    let wheel = w
        .path()
        .join(write_cudnn_wheel(w.path(), "9.27.0.42", 13, true));
    let out = cli(
        &[
            "cudnn",
            "install",
            "--json",
            "--archive",
            p(&wheel),
            "--cuda-dir",
            p(&dir),
        ],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: cudnn::Manifest = serde_json::from_slice(&out.stdout).unwrap();
    for (lib, dll) in wheel_libs() {
        // A real import library for the DLL beside the toolkit's own, listing its exports.
        let (from, names) = implib::read_import_lib(&dir.join(&lib)).unwrap();
        assert_eq!(from, dll, "{lib}");
        assert_eq!(names, wheel_dll_exports(dll), "{lib}");
        assert!(dir.join("bin/x64").join(dll).is_file(), "{dll}");
        let f = m.files.iter().find(|f| f.path == lib).expect("in manifest");
        assert!(!f.replaced && f.link.is_none() && f.size > 0, "{f:?}");
        assert_eq!(
            f.sha256,
            support::wheels::sha256_file(&dir.join(&lib)),
            "{lib}"
        );
    }
    // Nothing but the DLLs' libraries was made, and the toolkit's own cudart.lib is kept.
    let libs: Vec<&str> = m
        .files
        .iter()
        .filter(|f| f.path.ends_with(".lib"))
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(libs.len(), support::cudnn_zip::WHEEL_DLLS.len(), "{libs:?}");
    assert_eq!(
        tree(&dir).get("lib/x64/cudart.lib"),
        before.get("lib/x64/cudart.lib")
    );
    assert_eq!(cudnn::txn::read_manifest(&dir).unwrap().unwrap(), m);
    no_staging(&dir);
    assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    // A library changed after the install is one verify names.
    std::fs::write(dir.join("lib/x64/cudnn_ops.lib"), b"edited").unwrap();
    std::fs::remove_file(dir.join("lib/x64/cudnn.lib")).unwrap();
    let mut problems: Vec<(String, &str)> = cudnn::verify(&dir)
        .unwrap()
        .problems
        .into_iter()
        .map(|x| (x.path, x.problem))
        .collect();
    problems.sort();
    assert_eq!(
        problems,
        [
            ("lib/x64/cudnn.lib".to_string(), "missing"),
            ("lib/x64/cudnn_ops.lib".to_string(), "altered"),
        ]
    );
    let un = cli(&["cudnn", "uninstall", "--cuda-dir", p(&dir)], &[]);
    assert_eq!(
        un.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&un.stderr)
    );
    assert_eq!(tree(&dir), before, "uninstall removes the libraries too");
}

#[test]
fn a_wheel_whose_library_is_in_use_rolls_back_its_import_libraries_too() {
    use support::cudnn_zip::write_cudnn_wheel;
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.0.2");
    let before = tree(&dir);
    let wheel = w
        .path()
        .join(write_cudnn_wheel(w.path(), "9.27.0.42", 13, true));
    // The last import library's move fails: everything before it is undone.
    let last = wheel_libs().pop().unwrap().0;
    let file = last.rsplit('/').next().unwrap();
    let out = cli(
        &[
            "cudnn",
            "install",
            "--archive",
            p(&wheel),
            "--cuda-dir",
            p(&dir),
        ],
        &[("CUDA_SETUP_TEST_IN_USE", file)],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(file),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tree(&dir), before, "rolled back, libraries included");
    no_staging(&dir);
}

#[test]
fn a_wheel_dll_that_is_no_dll_gets_no_library_and_the_install_goes_on() {
    use support::cudnn_zip::write_cudnn_wheel;
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.0.2");
    let good = w
        .path()
        .join(write_cudnn_wheel(w.path(), "9.27.0.42", 13, true));
    // cudnn_ops64_9.dll damaged; and NVIDIA's wheel carrying one .lib already.
    let files: Vec<(String, Vec<u8>)> = zip_files(&good)
        .into_iter()
        .map(|(n, b)| {
            if n.ends_with("cudnn_ops64_9.dll") {
                (n, b"MZ damaged".to_vec())
            } else {
                (n, b)
            }
        })
        .chain([(
            "nvidia/cudnn/lib/x64/cudnn_adv.lib".to_string(),
            b"NVIDIA's cudnn_adv.lib".to_vec(),
        )])
        .collect();
    let wheel = w
        .path()
        .join("nvidia_cudnn_cu13-9.27.0.42-py3-none-win_amd64.whl");
    write_zip(&wheel, &files, false);
    let m = cudnn::install(&wheel, &dir, &|_| {}).unwrap();
    assert!(!dir.join("lib/x64/cudnn_ops.lib").exists());
    assert_eq!(
        std::fs::read(dir.join("lib/x64/cudnn_adv.lib")).unwrap(),
        b"NVIDIA's cudnn_adv.lib",
        "the wheel's own library, not one made over it"
    );
    assert!(dir.join("lib/x64/cudnn.lib").is_file());
    let libs = m.files.iter().filter(|f| f.path.ends_with(".lib")).count();
    assert_eq!(libs, support::cudnn_zip::WHEEL_DLLS.len() - 1);
}

#[test]
fn nvidias_zip_and_tarball_get_nothing_added() {
    // The zip ships its .lib files, the tarball its links: the manifest is the archive.
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.0.2");
    let zip = w.path().join(format!("{}.zip", SPEC_927_13.top()));
    SPEC_927_13.write(&zip);
    let m = cudnn::install(&zip, &dir, &|_| {}).unwrap();
    assert_eq!(m.files.len(), SPEC_927_13.files().len());
    #[cfg(unix)]
    {
        use support::cudnn_tar::{LinuxSpec, linux_toolkit};
        let spec = LinuxSpec {
            version: "9.10.2.21",
            cuda_major: 12,
            lib_size: 10_000,
        };
        let dir = linux_toolkit(w.path(), "12.4.1");
        let tarball = w.path().join(spec.file_name());
        spec.write(&tarball);
        let plan = archive::open(&tarball).unwrap();
        let m = cudnn::install(&tarball, &dir, &|_| {}).unwrap();
        assert_eq!(m.files.len(), plan.entries.len());
    }
}

#[cfg(unix)]
#[test]
fn a_linux_cudnn_wheel_gets_its_link_names_that_uninstall_removes() {
    use support::cudnn_tar::linux_toolkit;
    use support::cudnn_zip::{WHEEL_SOS, write_cudnn_wheel};
    let w = tempfile::tempdir().unwrap();
    let dir = linux_toolkit(w.path(), "13.0.2");
    let listing = |dir: &Path| {
        let mut v: Vec<(String, Option<std::path::PathBuf>)> = Vec::new();
        for e in std::fs::read_dir(dir.join("lib64")).unwrap().flatten() {
            v.push((
                e.file_name().into_string().unwrap(),
                std::fs::read_link(e.path()).ok(),
            ));
        }
        v.sort();
        v
    };
    let before = (tree(&dir), listing(&dir));
    let wheel = w
        .path()
        .join(write_cudnn_wheel(w.path(), "9.27.0.42", 13, false));
    let m = cudnn::install(&wheel, &dir, &|_| {}).unwrap();
    for so in WHEEL_SOS {
        let link = format!("lib64/{}", so.strip_suffix(".9").unwrap());
        assert_eq!(
            std::fs::read_link(dir.join(&link)).unwrap(),
            Path::new(so),
            "{link}"
        );
        // It resolves: a linker's -lcudnn reads the library.
        assert_eq!(
            std::fs::read(dir.join(&link)).unwrap(),
            std::fs::read(dir.join("lib64").join(so)).unwrap()
        );
        let f = m
            .files
            .iter()
            .find(|f| f.path == link)
            .expect("in manifest");
        assert_eq!(f.link.as_deref(), Some(*so));
    }
    assert_eq!(
        m.files.iter().filter(|f| f.link.is_some()).count(),
        WHEEL_SOS.len()
    );
    assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    // A link removed is one verify names.
    std::fs::remove_file(dir.join("lib64/libcudnn_graph.so")).unwrap();
    let r = cudnn::verify(&dir).unwrap();
    assert_eq!(r.problems.len(), 1);
    assert_eq!(
        (r.problems[0].path.as_str(), r.problems[0].problem),
        ("lib64/libcudnn_graph.so", "missing")
    );
    cudnn::uninstall(&dir).unwrap();
    assert_eq!((tree(&dir), listing(&dir)), before, "links removed too");
}

/// DLLs of several of the extractor's blocks (256 KiB) and a tail, so each is inflated
/// and written as a pipeline of blocks, several entries at once.
const SPEC_BLOCKS: Spec = Spec {
    version: "9.27.0.42",
    cuda_major: 13,
    dll_size: 5 * (256 << 10) + 12_345,
};

#[test]
fn entries_of_many_blocks_are_installed_byte_for_byte_with_their_hashes() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.2.0");
    let zip = w.path().join("c.zip");
    SPEC_BLOCKS.write(&zip);
    let m = cudnn::install(&zip, &dir, &|_| {}).unwrap();
    let top = format!("{}/", SPEC_BLOCKS.top());
    for (name, bytes) in SPEC_BLOCKS.files() {
        let inner = name.strip_prefix(&top).unwrap();
        let Some(f) = m.files.iter().find(|f| {
            f.path.rsplit('/').next() == inner.rsplit('/').next() && !inner.starts_with("LICENSE")
        }) else {
            continue;
        };
        assert_eq!(std::fs::read(dir.join(&f.path)).unwrap(), bytes, "{name}");
        assert_eq!(f.size, bytes.len() as u64);
        assert_eq!(f.sha256, support::standin::sha256_of(&bytes), "{name}");
    }
    assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    no_staging(&dir);
}

#[test]
fn a_damaged_block_late_in_one_entry_stops_all_and_changes_nothing() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.2.0");
    // A cuDNN installed before: a refused upgrade must leave it as it is.
    let old = w.path().join("old.zip");
    SPEC_927_13.write(&old);
    cudnn::install(&old, &dir, &|_| {}).unwrap();
    let before = tree(&dir);
    let manifest = std::fs::read(dir.join(".cuda-setup/cudnn-manifest.json")).unwrap();

    let zip = w.path().join("c.zip");
    SPEC_BLOCKS.write(&zip);
    // The last block of one DLL (not the first entry): its other blocks, and other
    // entries, are already written in staging when the CRC fails at its end.
    let (start, len) = {
        let mut z = zip::ZipArchive::new(std::fs::File::open(&zip).unwrap()).unwrap();
        let i = z
            .index_for_name(&format!("{}/bin/x64/cudnn_ops64_9.dll", SPEC_BLOCKS.top()))
            .unwrap();
        let e = z.by_index_raw(i).unwrap();
        (e.data_start().unwrap(), e.compressed_size())
    };
    assert!(len > 256 << 10, "the entry spans several blocks");
    let mut bytes = std::fs::read(&zip).unwrap();
    bytes[(start + len - 64) as usize] ^= 0x55;
    let bad = w.path().join("bad.zip");
    std::fs::write(&bad, &bytes).unwrap();
    match cudnn::install(&bad, &dir, &|_| {}) {
        Err(CudnnError::Refused {
            refusal: Refusal::Corrupt { name, .. },
            ..
        }) => assert!(name.ends_with("cudnn_ops64_9.dll"), "{name}"),
        other => panic!("a damaged entry was not refused: {other:?}"),
    }
    assert_eq!(tree(&dir), before);
    assert_eq!(
        std::fs::read(dir.join(".cuda-setup/cudnn-manifest.json")).unwrap(),
        manifest
    );
    no_staging(&dir);
    assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
}

/// A write that fails part-way (here the file-size limit, `ulimit -f`, standing in for
/// a full drive) stops the inflating thread too: the run ends with the writer's error,
/// nothing installed, no staging left — and it does not hang.
#[cfg(unix)]
#[test]
fn a_write_that_fails_midway_stops_the_extraction_and_changes_nothing() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.2.0");
    let before = tree(&dir);
    let zip = w.path().join("c.zip");
    SPEC_BLOCKS.write(&zip);
    // 1024 blocks of 512 bytes: within the first DLL. SIGXFSZ is ignored, so the write
    // fails with EFBIG instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 1024; exec '{}' cudnn install --archive '{}' --cuda-dir '{}'",
        env!("CARGO_BIN_EXE_cuda-setup"),
        p(&zip),
        p(&dir)
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("staging-"), "the failing file is named: {err}");
    assert_eq!(tree(&dir), before);
    no_staging(&dir);
    assert!(!dir.join(".cuda-setup/cudnn-manifest.json").exists());
}
