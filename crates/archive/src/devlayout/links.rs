//! Linux link names: `libX.so → libX.so.N`, as NVIDIA's runfile and tarballs have them.
//! OWNER: #19 helper "layout" (H1).

use std::path::Path;

use super::DevError;

/// The unversioned link name of a versioned library file name: `libcublas.so.13` →
/// `libcublas.so`; None for anything else (`libcudart_static.a`, `libcublas.so`).
pub fn unversioned(file: &str) -> Option<String> {
    let (stem, version) = file.split_once(".so.")?;
    let numeric = !version.is_empty()
        && version
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (numeric && stem.starts_with("lib") && stem.len() > 3 && !stem.contains('/'))
        .then(|| format!("{stem}.so"))
}

/// Link name → the versioned file it goes to, for versioned library file names: the
/// shortest when there are several (`libcudnn.so.9` before `libcudnn.so.9.28.1`, the
/// SONAME's, as NVIDIA's tarballs link it), ties by name. Other names are left out.
pub fn link_targets<'a>(
    files: impl IntoIterator<Item = &'a str>,
) -> std::collections::BTreeMap<String, String> {
    let mut wanted: std::collections::BTreeMap<String, String> = Default::default();
    for name in files {
        let Some(link) = unversioned(name) else {
            continue;
        };
        let shorter = |old: &String| (name.len(), name) < (old.len(), old.as_str());
        if wanted.get(&link).is_none_or(shorter) {
            wanted.insert(link, name.to_string());
        }
    }
    wanted
}

/// In folder `lib`, a relative link `libX.so → libX.so.N` for every versioned library
/// that has no unversioned name yet. Returns the link names made, sorted.
///
/// When a library has more than one versioned name (`libcudnn.so.9` and
/// `libcudnn.so.9.28.1`), the link goes to the shortest (the SONAME's, as NVIDIA's
/// tarballs link it). A name already there (a file, a link, even a broken link) is kept.
/// Only regular files and links are considered; on Windows nothing is made.
pub fn add_links(lib: &Path) -> Result<Vec<String>, DevError> {
    add_links_except(lib, &|_| false)
}

/// [`add_links`], leaving out the libraries `skip` says belong to someone else (by the
/// versioned file name: cuDNN's, which its own transaction installs and links).
pub fn add_links_except(lib: &Path, skip: &dyn Fn(&str) -> bool) -> Result<Vec<String>, DevError> {
    let entries = match std::fs::read_dir(lib) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(DevError::io(lib, e)),
    };
    let mut names = Vec::new();
    for e in entries {
        let e = e.map_err(|err| DevError::io(lib, err))?;
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        if unversioned(&name).is_none() || skip(&name) {
            continue;
        }
        let kind = e.file_type().map_err(|err| DevError::io(&e.path(), err))?;
        if kind.is_file() || kind.is_symlink() {
            names.push(name);
        }
    }
    let wanted = link_targets(names.iter().map(String::as_str));
    let mut made = Vec::new();
    for (link, target) in wanted {
        let at = lib.join(&link);
        if std::fs::symlink_metadata(&at).is_ok() {
            continue;
        }
        if symlink(&target, &at)? {
            made.push(link);
        }
    }
    Ok(made)
}

/// A relative link at `at` to `target`; false where the system has none (Windows).
#[cfg(unix)]
fn symlink(target: &str, at: &Path) -> Result<bool, DevError> {
    std::os::unix::fs::symlink(target, at).map_err(|e| DevError::io(at, e))?;
    Ok(true)
}

#[cfg(not(unix))]
fn symlink(_target: &str, _at: &Path) -> Result<bool, DevError> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_names_have_a_link_name_and_others_none() {
        assert_eq!(
            unversioned("libcublas.so.13").as_deref(),
            Some("libcublas.so")
        );
        assert_eq!(
            unversioned("libcudnn.so.9.28.1").as_deref(),
            Some("libcudnn.so")
        );
        assert_eq!(unversioned("libcublas.so"), None);
        assert_eq!(unversioned("libcudart_static.a"), None);
        assert_eq!(unversioned("libfoo.so.1a"), None);
        assert_eq!(unversioned("lib.so.1"), None);
    }

    #[cfg(unix)]
    #[test]
    fn links_go_to_the_shortest_versioned_name_once_and_keep_what_is_there() {
        let d = tempfile::tempdir().unwrap();
        let lib = d.path();
        for f in [
            "libcublas.so.13",
            "libcudnn.so.9",
            "libcudnn.so.9.28.1",
            "libcudart_static.a",
            "libnvvm.so.4",
        ] {
            std::fs::write(lib.join(f), f).unwrap();
        }
        // Already there: kept as it is.
        std::fs::write(lib.join("libnvvm.so"), "mine").unwrap();
        // A folder that looks like a library is not one.
        std::fs::create_dir(lib.join("libodd.so.1")).unwrap();
        let made = add_links(lib).unwrap();
        assert_eq!(made, ["libcublas.so", "libcudnn.so"]);
        assert_eq!(
            std::fs::read_link(lib.join("libcublas.so")).unwrap(),
            Path::new("libcublas.so.13"),
            "relative, so the tree can move"
        );
        assert_eq!(
            std::fs::read_link(lib.join("libcudnn.so")).unwrap(),
            Path::new("libcudnn.so.9")
        );
        assert_eq!(
            std::fs::read(lib.join("libcudnn.so")).unwrap(),
            b"libcudnn.so.9"
        );
        assert_eq!(std::fs::read(lib.join("libnvvm.so")).unwrap(), b"mine");
        assert!(!lib.join("libodd.so").exists());
        assert!(add_links(lib).unwrap().is_empty(), "idempotent");
        assert!(add_links(&lib.join("missing")).unwrap().is_empty());
    }
}
