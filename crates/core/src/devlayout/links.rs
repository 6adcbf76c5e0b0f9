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

/// In folder `lib`, a relative link `libX.so → libX.so.N` for every versioned library
/// that has no unversioned name yet. Returns the link names made, sorted.
pub fn add_links(lib: &Path) -> Result<Vec<String>, DevError> {
    let _ = lib;
    unimplemented!("#19 H1")
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
}
