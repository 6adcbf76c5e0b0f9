//! The shipped tables load; broken copies are refused with the file and key named.

use std::path::{Path, PathBuf};

use cuda_setup_core::compat::{FILES, TableError, TableSource, Tables};
use cuda_setup_core::version::Version;

fn shipped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-tables")
}

/// A writable copy of the shipped tables.
fn copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in FILES {
        std::fs::copy(shipped_dir().join(f), dir.path().join(f)).unwrap();
    }
    dir
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let p = dir.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

#[test]
fn every_shipped_table_loads() {
    let t = Tables::embedded().unwrap();
    assert_eq!(t.source, TableSource::Embedded);
    // Toolkits 11.0 → 13.5, every line with a floor.
    assert_eq!(
        t.toolkits.releases.first().unwrap().version.major_minor(),
        v("11.0")
    );
    assert_eq!(
        t.toolkits.releases.last().unwrap().version.major_minor(),
        v("13.5")
    );
    for mm in [
        "11.8", "12.0", "12.4", "12.6", "12.8", "12.9", "13.0", "13.2", "13.4",
    ] {
        assert!(
            t.toolkits
                .releases
                .iter()
                .any(|r| r.version.major_minor() == v(mm)),
            "no {mm}"
        );
    }
    assert!(
        t.toolkits
            .releases
            .iter()
            .all(|r| r.version.major() != 12 || r.version.minor() != 7),
        "there is no 12.7"
    );
    // The dossier's UNCONFIRMED rows stay unconfirmed.
    let r135 = t
        .toolkits
        .releases
        .iter()
        .find(|r| r.version == v("13.5.0"))
        .unwrap();
    assert!(!r135.confirmed && r135.driver_linux.is_none());
    assert!(
        t.toolkits
            .releases
            .iter()
            .filter(|r| r.version.major() == 13)
            .all(|r| r.driver_windows.is_none())
    );
    // cuDNN 8.9 → 9.27 with the DLL move at 9.18.
    assert_eq!(t.cudnn.releases.first().unwrap().version, v("8.9.7.29"));
    // Oldest first, so the last is the newest; at least what was out when this was written.
    assert!(t.cudnn.releases.is_sorted_by_key(|r| r.version.clone()));
    assert!(t.cudnn.releases.last().unwrap().version >= v("9.27.0.42"));
    for r in &t.cudnn.releases {
        let want = if r.version >= v("9.18") {
            "bin/x64"
        } else {
            "bin"
        };
        assert_eq!(r.windows_dll_dir, want, "{}", r.version);
    }
    // PyTorch 1.13 → newest, with the cu118 … cu132 variants.
    assert_eq!(t.pytorch.releases.first().unwrap().version, v("1.13"));
    for name in [
        "cu118", "cu121", "cu124", "cu126", "cu128", "cu129", "cu130", "cu132",
    ] {
        assert!(t.variant(name).is_some(), "{name}");
    }
    // GPUs Kepler → Blackwell, by name and by PCI id.
    for arch in [
        "Kepler",
        "Maxwell",
        "Pascal",
        "Volta",
        "Turing",
        "Ampere",
        "Ada",
        "Hopper",
        "Blackwell",
    ] {
        let a = t
            .gpus
            .architectures
            .iter()
            .find(|a| a.name.starts_with(arch))
            .unwrap_or_else(|| panic!("{arch}"));
        let n = t
            .gpus
            .gpus
            .iter()
            .filter(|g| a.compute_capabilities.contains(&g.cc))
            .count();
        assert!(n >= 3, "{arch}: only {n} GPUs");
    }
    let rtx4090 = t.gpu_by_pci_id("2684").unwrap();
    assert_eq!(
        (rtx4090.name.as_str(), rtx4090.cc.to_string().as_str()),
        ("GeForce RTX 4090", "8.9")
    );
    assert_eq!(
        t.gpus_by_name("NVIDIA GeForce RTX 3060")
            .first()
            .unwrap()
            .cc
            .to_string(),
        "8.6"
    );
}

#[test]
fn a_directory_copy_loads_the_same_facts() {
    let dir = copy();
    let t = Tables::from_dir(dir.path()).unwrap();
    let e = Tables::embedded().unwrap();
    assert_eq!(t.source, TableSource::Dir(dir.path().to_path_buf()));
    assert_eq!(t.toolkits.releases.len(), e.toolkits.releases.len());
    assert_eq!(t.gpus.gpus.len(), e.gpus.gpus.len());
}

/// Each corruption must be refused, naming the file and (where there is one) the key.
#[test]
fn broken_tables_are_refused_with_file_and_key() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "pytorch.toml",
            "base = \"https://mirror.nju.edu.cn/pytorch/whl\"",
            "base = \"http://mirror.nju.edu.cn/pytorch/whl/\"",
            &["pytorch.toml", "mirror \"NJU\"", "https://"],
        ),
        (
            "toolkits.toml",
            "version = \"12.4.1\"",
            "version = \"12.4.0\"",
            &["toolkits.toml", "12.4.0", "twice"],
        ),
        (
            "toolkits.toml",
            "version = \"12.4.1\"",
            "version = \"12.9.9\"",
            &["toolkits.toml", "out of order"],
        ),
        (
            "toolkits.toml",
            "label = \"12.4 Update 1\"",
            "labl = \"x\"",
            &["toolkits.toml", "labl"],
        ),
        (
            "toolkits.toml",
            "sm_max = \"9.0\"",
            "sm_max = \"99.9\"",
            &["toolkits.toml", "99.9"],
        ),
        (
            "toolkits.toml",
            "sm_min = \"3.5\"\nsm_max = \"8.0\"",
            "sm_min = \"9.0\"\nsm_max = \"8.0\"",
            &["toolkits.toml", "release \"11.0.", "sm_min", "above sm_max"],
        ),
        (
            "cudnn.toml",
            "sm_min = \"5.0\"\nsm_max = \"9.0\"",
            "sm_min = \"9.0\"\nsm_max = \"5.0\"",
            &[
                "cudnn.toml",
                "release \"9.1.0.70\"",
                "sm_min",
                "above sm_max",
            ],
        ),
        (
            "toolkits.toml",
            "driver_linux = \"550.54.15\"",
            "driver_linux = \"abc\"",
            &["toolkits.toml", "abc"],
        ),
        (
            "toolkits.toml",
            "[meta]",
            "[meta\n",
            &["toolkits.toml", "TOML"],
        ),
        (
            "cudnn.toml",
            "windows_dll_dir = \"bin\"",
            "windows_dll_dir = \"lib\"",
            &["cudnn.toml", "windows_dll_dir"],
        ),
        (
            "cudnn.toml",
            "major = 13",
            "major = 14",
            &["cudnn.toml", "no line"],
        ),
        (
            "pytorch.toml",
            "variants = [\"cu126\", \"cu130\", \"cu132\"]",
            "variants = [\"cu126\", \"cu999\"]",
            &["pytorch.toml", "cu999"],
        ),
        (
            "pytorch.toml",
            "python_min = \"3.10\"",
            "python_min = \"3.99\"",
            &["pytorch.toml", "python_min"],
        ),
        (
            "gpus.toml",
            "cc = \"8.9\"",
            "cc = \"9.9\"",
            &["gpus.toml", "9.9"],
        ),
        (
            "gpus.toml",
            "pci_ids = [\"0x2684\"",
            "pci_ids = [\"0x2684\", \"0x2684\"",
            &["gpus.toml", "0x2684"],
        ),
    ];
    for (file, from, to, want) in cases {
        let dir = copy();
        edit(dir.path(), file, from, to);
        let err =
            Tables::from_dir(dir.path()).expect_err(&format!("{file}: {from} → {to} was accepted"));
        let text = err.to_string();
        for w in *want {
            assert!(
                text.contains(w),
                "{file}: {from} → {to}: {text:?} lacks {w:?}"
            );
        }
    }
}

#[test]
fn a_missing_file_is_named() {
    let dir = copy();
    std::fs::remove_file(dir.path().join("gpus.toml")).unwrap();
    let err = Tables::from_dir(dir.path()).unwrap_err();
    assert!(matches!(err, TableError::Read { .. }));
    assert!(err.to_string().contains("gpus.toml"));
}

/// A FIFO or a device in place of a table file is refused at once: read, a FIFO would
/// block for ever (nobody writes to it) and /dev/zero would never end. Under a deadline,
/// so a hang fails the test instead of stalling the suite.
#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_is_not_a_table() {
    let load = |dir: PathBuf| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(
                Tables::from_dir(&dir)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            );
        });
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("loading the tables hung")
    };
    let dir = copy();
    let fifo = dir.path().join("toolkits.toml");
    std::fs::remove_file(&fifo).unwrap();
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let err = load(dir.path().to_path_buf()).unwrap_err();
    assert!(
        err.contains("toolkits.toml") && err.contains("not a regular file"),
        "{err}"
    );

    let dir = copy();
    std::fs::remove_file(dir.path().join("gpus.toml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("gpus.toml")).unwrap();
    let err = load(dir.path().to_path_buf()).unwrap_err();
    assert!(
        err.contains("gpus.toml") && err.contains("not a regular file"),
        "{err}"
    );

    // A table file larger than any table is refused without reading it all.
    let dir = copy();
    let big = std::fs::File::create(dir.path().join("cudnn.toml")).unwrap();
    big.set_len(cuda_setup_core::compat::MAX_TABLE_BYTES + 1)
        .unwrap();
    let err = load(dir.path().to_path_buf()).unwrap_err();
    assert!(
        err.contains("cudnn.toml") && err.contains("more than a table"),
        "{err}"
    );
}
