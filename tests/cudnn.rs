//! cuDNN install as a transaction: real-layout archives, a hostile corpus, kill -9 at
//! random points, uninstall and verify.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use cuda_setup::cudnn::{self, CudnnError, Refusal, archive};
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
    assert!(
        err.contains("include/cudnn.h")
            && err.contains("in use")
            && err.contains("close the program"),
        "{err}"
    );
    assert_eq!(tree(&dir), before);
    no_staging(&dir);
    assert!(!dir.join(".cuda-setup/cudnn-journal.json").exists());
}

/// Kill -9 at random points, 20 times: after recovery the folder is exactly the old
/// state or exactly the new one; a rerun always completes.
#[test]
fn kill_9_at_random_points_never_leaves_a_mix() {
    let w = tempfile::tempdir().unwrap();
    let zip = w.path().join("c.zip");
    SPEC_927_13.write(&zip);
    let reference = toolkit(&w.path().join("ref"), "13.0.2");
    cudnn::install(&zip, &reference, &|_| {}).unwrap();
    let new_state = tree(&reference);

    // How long one slowed-down install takes here: kills are spread over that span.
    let spawn = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
            .args([
                "cudnn",
                "install",
                "--archive",
                p(&zip),
                "--cuda-dir",
                p(dir),
            ])
            .env("CUDA_SETUP_TEST_SLOW_MS", "8")
            .stderr(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let timing = toolkit(&w.path().join("timing"), "13.0.2");
    let t0 = std::time::Instant::now();
    assert!(spawn(&timing).wait().unwrap().success());
    let span = t0.elapsed().as_millis() as u64;

    let mut seen = BTreeMap::from([("old", 0), ("new", 0), ("rolled back mid-transaction", 0)]);
    let mut seed = 0x2545F4914F6CDD1Du64;
    for i in 0..20 {
        let dir = toolkit(&w.path().join(format!("t{i}")), "13.0.2");
        std::fs::write(dir.join("bin/x64/cudnn64_9.dll"), b"old").unwrap();
        let old_state = tree(&dir);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = std::time::Duration::from_millis(seed % (span + 1));
        let mut child = spawn(&dir);
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();

        if cudnn::recover(&dir).unwrap() == Some(cudnn::Recovered::RolledBack) {
            *seen.get_mut("rolled back mid-transaction").unwrap() += 1;
        }
        let now = tree(&dir);
        let mut expect_new = old_state.clone();
        expect_new.extend(new_state.clone());
        if now == old_state {
            *seen.get_mut("old").unwrap() += 1;
        } else {
            assert_eq!(
                now, expect_new,
                "try {i} (killed after {delay:?}) left a mix"
            );
            *seen.get_mut("new").unwrap() += 1;
        }
        no_staging(&dir);
        // A rerun completes.
        cudnn::install(&zip, &dir, &|_| {}).unwrap();
        assert_eq!(tree(&dir), expect_new, "try {i}: rerun");
        assert!(cudnn::verify(&dir).unwrap().problems.is_empty());
    }
    eprintln!("after kill -9 (install takes {span} ms): {seen:?}");
    assert!(
        seen["rolled back mid-transaction"] >= 1,
        "no kill landed inside the transaction: {seen:?}"
    );
}
