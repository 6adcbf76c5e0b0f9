//! GPUs by PCI id through the pci.ids database, kept current by `tables --refresh` like the
//! other tables: a newer pci.ids served by a loopback server is fetched, cached beside
//! `refresh.json`, used at the next start, and names a card no table row knows.

use crate::support;
use crate::support::cli::json;

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use support::server::{Body, Server};

const NEWER: &str = "#\n#\tVersion: 2099.01.01\n#\n\
    1002  Advanced Micro Devices, Inc. [AMD/ATI]\n\t744c  Navi 31\n\
    10de  NVIDIA Corporation\n\
    \t2b85  GB202 [GeForce RTX 5090]\n\
    \t3001  GB203 [GeForce RTX 6090 Test]\n\
    \t\t10de 0001  a subsystem line\n\
    10df  Emulex Corporation\n";

/// The CLI with its cache under `home`, the other sources at a dead address and pci.ids
/// at `pci` (None: unset).
fn run(home: &Path, pci: Option<&str>, args: &[&str]) -> Output {
    let dead = support::server::dead_base();
    let mut c = support::cli::with_cache(home, args);
    support::cli::sources(&mut c, &dead, &dead);
    match pci {
        Some(u) => c.env("CUDA_SETUP_PCI_IDS", u),
        None => c.env_remove("CUDA_SETUP_PCI_IDS"),
    };
    c.output().unwrap()
}

#[test]
fn tables_refresh_fetches_a_newer_pci_ids_and_keeps_it() {
    let home = tempfile::tempdir().unwrap();
    let s = Server::start();
    s.add("/pci.ids", Body::Bytes(Arc::new(NEWER.as_bytes().to_vec())));
    // Built in first.
    let j = json(&run(home.path(), None, &["tables", "--json"]));
    assert_eq!(j["pci_database"]["version"], "2026.05.24", "{j}");
    assert_eq!(j["pci_database"]["origin"], "embedded");
    // The first URL is missing, the second (a mirror) answers.
    let urls = format!("{0}/missing {0}/pci.ids", s.url(""));
    let out = run(home.path(), Some(&urls), &["tables", "--refresh", "--json"]);
    let j = json(&out);
    assert_eq!(j["pci_database"]["version"], "2099.01.01", "{j}");
    assert_eq!(j["pci_database"]["devices"], 2);
    assert_eq!(j["pci_database"]["gpus"], 2);
    let cached = home.path().join("cuda-setup").join("pci-ids-nvidia.txt");
    let text = std::fs::read_to_string(&cached).unwrap();
    assert!(
        text.contains("\t3001  GB203 [GeForce RTX 6090 Test]"),
        "{text}"
    );
    assert!(
        !text.contains("Navi") && !text.contains("subsystem"),
        "{text}"
    );
    // The next start, offline, uses the cached database.
    let j = json(&run(home.path(), None, &["tables", "--json"]));
    assert_eq!(j["pci_database"]["version"], "2099.01.01", "{j}");
    assert_eq!(j["pci_database"]["origin"], cached.display().to_string());
}
