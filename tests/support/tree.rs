//! A folder's files as path → bytes, for "nothing else changed" assertions.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `dir` except those (or folders) whose name `skip` returns true for.
pub fn files(dir: &Path, skip: &dyn Fn(&str) -> bool) -> BTreeMap<String, Vec<u8>> {
    fn walk(
        base: &Path,
        d: &Path,
        skip: &dyn Fn(&str) -> bool,
        out: &mut BTreeMap<String, Vec<u8>>,
    ) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if skip(&p.file_name().unwrap().to_string_lossy()) {
                continue;
            }
            if p.is_dir() {
                walk(base, &p, skip, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, skip, &mut out);
    out
}
