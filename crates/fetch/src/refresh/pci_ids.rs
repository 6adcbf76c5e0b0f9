//! The pci.ids database (NVIDIA's PCI device ids), kept current like the other tables:
//! `tables --refresh` reads pci.ids from the PCI ID Project (or its GitHub mirror), keeps
//! NVIDIA's section in the refresh cache beside `refresh.json`, and the tables use it when
//! it is newer (by its `Version:` line) than the one they carry.

use std::path::{Path, PathBuf};

use super::Sources;
use super::fetch::Fetcher;
use crate::compat::{MAX_PCI_IDS_BYTES, PciIds, Tables};

/// Where pci.ids is read, in order: the PCI ID Project's site, then its GitHub mirror.
pub const URLS: [&str; 2] = [
    "https://pci-ids.ucw.cz/v2.2/pci.ids",
    "https://raw.githubusercontent.com/pciutils/pciids/master/pci.ids",
];
/// Overrides [`URLS`]: one or more URLs, separated by spaces or commas.
pub const ENV: &str = "CUDA_SETUP_PCI_IDS";
/// The cached NVIDIA section's file name, beside `refresh.json`.
pub const CACHE_FILE: &str = "pci-ids-nvidia.txt";

/// The URLs to read: `CUDA_SETUP_PCI_IDS` when set; else [`URLS`] when the other sources
/// are the defaults; else none — a refresh pointed at mirrors (or a test's loopback
/// server) is not sent to the internet for this one file.
pub fn urls(sources: &Sources) -> Vec<String> {
    if let Ok(v) = std::env::var(ENV) {
        let list: Vec<String> = v
            .split([' ', ','])
            .filter(|u| !u.trim().is_empty())
            .map(|u| u.trim().to_string())
            .collect();
        if !list.is_empty() {
            return list;
        }
    }
    if *sources == Sources::default() {
        URLS.iter().map(|u| u.to_string()).collect()
    } else {
        Vec::new()
    }
}

/// The cache file for the refresh cache `refresh_json`.
pub fn cache_file(refresh_json: &Path) -> PathBuf {
    refresh_json.with_file_name(CACHE_FILE)
}

/// Reads pci.ids (the first of [`urls`] that answers with NVIDIA device lines), caches
/// NVIDIA's section when it is newer than the cached one, and returns `tables` with the
/// newest of theirs, the fetched and the cached. What could not be read is a note.
pub(super) fn refresh(
    f: &Fetcher,
    tables: Tables,
    sources: &Sources,
    cache: Option<&Path>,
    notes: &mut Vec<String>,
) -> Tables {
    refresh_from(f, tables, &urls(sources), cache, notes)
}

fn refresh_from(
    f: &Fetcher,
    tables: Tables,
    urls: &[String],
    cache: Option<&Path>,
    notes: &mut Vec<String>,
) -> Tables {
    let cache = cache.map(cache_file);
    for url in urls {
        let ids = match f.get(url, None) {
            Ok(text) => PciIds::parse(&text),
            Err(e) => {
                notes.push(e.to_string());
                continue;
            }
        };
        if ids.devices.is_empty() {
            notes.push(format!("{url}: malformed: no NVIDIA (10de) device lines"));
            continue;
        }
        if let Some(file) = &cache {
            let cached = load(file);
            if cached.as_ref().is_none_or(|c| !c.newer_than(&ids))
                && let Err(e) = save(file, &ids.to_text(url))
            {
                notes.push(format!(
                    "{}: cannot write the refresh cache: {e}",
                    file.display()
                ));
            }
        }
        let tables = newer(tables, ids, url.clone());
        return match &cache {
            Some(file) => from_file(tables, file),
            None => tables,
        };
    }
    match &cache {
        Some(file) => from_file(tables, file),
        None => tables,
    }
}

/// `tables` with the cached pci.ids (beside the refresh cache `refresh_json`) when it is
/// newer than theirs.
pub fn with_cache(tables: Tables, refresh_json: Option<&Path>) -> Tables {
    match refresh_json {
        Some(f) => from_file(tables, &cache_file(f)),
        None => tables,
    }
}

fn from_file(tables: Tables, file: &Path) -> Tables {
    match load(file) {
        Some(ids) => newer(tables, ids, file.display().to_string()),
        None => tables,
    }
}

fn newer(tables: Tables, ids: PciIds, origin: String) -> Tables {
    if ids.newer_than(&tables.pci.ids) {
        tables.with_pci_ids(ids, origin)
    } else {
        tables
    }
}

/// The cached section: a regular file of at most [`MAX_PCI_IDS_BYTES`], parsed.
fn load(file: &Path) -> Option<PciIds> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.is_file() || meta.len() > MAX_PCI_IDS_BYTES as u64 {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(MAX_PCI_IDS_BYTES as u64)
        .read_to_string(&mut text)
        .ok()?;
    let ids = PciIds::parse(&text);
    (!ids.devices.is_empty()).then_some(ids)
}

/// Writes atomically: a temporary file, then a rename.
fn save(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = file.with_extension(format!("txt.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Duration;

    /// A loopback HTTP server answering every request for `path` with `body` (404
    /// otherwise), until the listener is dropped with the test.
    fn serve(path: &'static str, body: String) -> String {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { continue };
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]);
                let want = format!("GET {path} ");
                let (status, body) = if req.starts_with(&want) {
                    ("200 OK", body.as_str())
                } else {
                    ("404 Not Found", "")
                };
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        format!("http://{addr}")
    }

    const NEWER: &str = "#\n#\tVersion: 2099.01.01\n#\n\
        1002  Advanced Micro Devices, Inc. [AMD/ATI]\n\t744c  Navi 31\n\
        10de  NVIDIA Corporation\n\
        \t2b85  GB202 [GeForce RTX 5090]\n\
        \t3001  GB203 [GeForce RTX 6090 Test]\n\
        \t\t10de 0001  sub\n\
        10df  Emulex Corporation\n";

    #[test]
    fn a_newer_pci_ids_is_fetched_cached_and_used() {
        let base = Tables::embedded().unwrap();
        assert!(base.identify_pci("0x3001").is_none());
        let dir = tempfile::tempdir().unwrap();
        let refresh_json = dir.path().join("refresh.json");
        let f = Fetcher::new(Duration::from_secs(5)).unwrap();
        let good = serve("/pci.ids", NEWER.to_string());
        // The first URL is down (404), the mirror answers.
        let urls = [format!("{good}/missing"), format!("{good}/pci.ids")];
        let mut notes = Vec::new();
        let t = refresh_from(&f, base.clone(), &urls, Some(&refresh_json), &mut notes);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("404"), "{notes:?}");
        let g = t
            .identify_pci("0x3001")
            .expect("the new id, through its chip");
        assert_eq!(
            (g.name.as_str(), g.cc.to_string().as_str()),
            ("GeForce RTX 6090 Test", "12.0")
        );
        assert_eq!(t.pci.ids.version.as_deref(), Some("2099.01.01"));
        assert_eq!(t.pci.origin, urls[1]);
        // Cached: an offline start (no URL answers) still knows it, from the cache.
        let cached = std::fs::read_to_string(cache_file(&refresh_json)).unwrap();
        assert!(cached.contains("Version: 2099.01.01") && cached.contains("\t3001  GB203"));
        assert!(!cached.contains("Navi") && !cached.contains("sub"));
        let t = with_cache(base.clone(), Some(&refresh_json));
        assert!(t.identify_pci("0x3001").is_some());
        let mut notes = Vec::new();
        let t = refresh_from(&f, base.clone(), &[], Some(&refresh_json), &mut notes);
        assert!(t.identify_pci("0x3001").is_some() && notes.is_empty());
    }

    #[test]
    fn an_older_or_broken_pci_ids_is_not_used() {
        let base = Tables::embedded().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let refresh_json = dir.path().join("refresh.json");
        let f = Fetcher::new(Duration::from_secs(5)).unwrap();
        let old = serve(
            "/pci.ids",
            "#\tVersion: 2020.01.01\n10de  NVIDIA Corporation\n\t3001  GB203 [Old]\n".into(),
        );
        let mut notes = Vec::new();
        let t = refresh_from(
            &f,
            base.clone(),
            &[format!("{old}/pci.ids")],
            Some(&refresh_json),
            &mut notes,
        );
        assert!(
            t.identify_pci("0x3001").is_none(),
            "an older database is not used"
        );
        assert_eq!(t.pci.ids, base.pci.ids);
        let broken = serve("/pci.ids", "<html>captive portal</html>".into());
        let mut notes = Vec::new();
        let t = refresh_from(
            &f,
            base.clone(),
            &[format!("{broken}/pci.ids")],
            None,
            &mut notes,
        );
        assert_eq!(t.pci.ids, base.pci.ids);
        assert!(notes[0].contains("no NVIDIA"), "{notes:?}");
        // A cache that is not a regular file is ignored.
        std::fs::create_dir_all(cache_file(&dir.path().join("x/refresh.json"))).unwrap();
        let t = with_cache(base.clone(), Some(&dir.path().join("x/refresh.json")));
        assert_eq!(t.pci.ids, base.pci.ids);
    }

    #[test]
    fn public_urls_only_with_the_default_sources() {
        if std::env::var_os(ENV).is_some() {
            return;
        }
        assert_eq!(urls(&Sources::default()).len(), 2);
        let mirror = Sources {
            pypi: "http://127.0.0.1:1/simple".into(),
            ..Sources::default()
        };
        assert!(urls(&mirror).is_empty());
    }
}
