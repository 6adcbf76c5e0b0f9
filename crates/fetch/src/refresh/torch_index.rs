//! The PyTorch wheel index (`<base>/<variant>/torch/`, a PEP 503 page): which torch
//! versions exist per variant, CPython tag and platform. Anchors look like
//! `torch-2.9.1%2Bcu130-cp313-cp313-win_amd64.whl#sha256=…` (dossier §6.2).

use serde::{Deserialize, Serialize};

use crate::compat::Wheel;
use crate::version::Version;

/// One variant's wheels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveVariant {
    pub name: String,
    pub wheels: Vec<Wheel>,
}

/// The torch wheels for `variant` on an index page. Wheels of other builds (another
/// local version, pre-releases, other CPU architectures) are skipped; a page that lists
/// none at all is not an index page.
pub fn parse(html: &str, variant: &str) -> Result<Vec<Wheel>, String> {
    const NOT_AN_INDEX: &str = "lists no torch wheels (not a PEP 503 index page?)";
    // The wheels method's PEP 503 reader: entities and `%2B` decoded, comments skipped.
    // Only names are read here (nothing is downloaded), so the base is a placeholder.
    let files = crate::pypi::index::parse_html("http://index.invalid/", html)
        .map_err(|_| NOT_AN_INDEX.to_string())?;
    let names: Vec<&str> = files
        .iter()
        .map(|f| f.filename.as_str())
        .filter(|n| n.starts_with("torch-") && n.ends_with(".whl"))
        .collect();
    if names.is_empty() {
        return Err(NOT_AN_INDEX.into());
    }
    let mut wheels: Vec<Wheel> = names.iter().filter_map(|n| wheel(n, variant)).collect();
    wheels.sort();
    wheels.dedup();
    Ok(wheels)
}

/// `torch-2.15.0+cu130-cp312-cp312-win_amd64.whl` → a wheel, if it is one of ours
/// (`variant` "": a wheel without a local version, as on PyPI).
pub(super) fn wheel(name: &str, variant: &str) -> Option<Wheel> {
    let stem = name.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    // name-version[-build]-python-abi-platform
    if !(5..=6).contains(&parts.len()) {
        return None;
    }
    let n = parts.len();
    let (ver, py, abi, platform) = (parts[1], parts[n - 3], parts[n - 2], parts[n - 1]);
    let (ver, local) = match ver.split_once('+') {
        Some((v, l)) => (v, Some(l)),
        None => (ver, None),
    };
    if local.is_some_and(|l| l != variant) {
        return None;
    }
    let version: Version = ver.parse().ok()?;
    let digits = py.strip_prefix("cp")?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let python = Version::new(&[digits[..1].parse().ok()?, digits[1..].parse().ok()?]);
    let x86 = platform == "win_amd64" || platform.ends_with("x86_64");
    x86.then(|| Wheel {
        version,
        python,
        freethreaded: abi.ends_with('t'),
        platform: platform.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Os;

    #[test]
    fn anchors_become_wheels() {
        let html = r#"<!DOCTYPE html><html><body><h1>Links for torch</h1>
<a href="/whl/cu130/torch-2.9.1%2Bcu130-cp313-cp313-win_amd64.whl#sha256=00ab">torch-2.9.1+cu130-cp313-cp313-win_amd64.whl</a><br/>
<a href="/whl/cu130/torch-2.9.1%2Bcu130-cp313-cp313t-manylinux_2_28_x86_64.whl#sha256=00cd">torch-2.9.1+cu130-cp313-cp313t-manylinux_2_28_x86_64.whl</a><br/>
<a href="/whl/cu130/torch-2.9.1%2Bcu130-cp313-cp313-manylinux_2_28_aarch64.whl">x</a><br/>
<a href="/whl/cu130/torch-2.10.0.dev20250101%2Bcu130-cp313-cp313-win_amd64.whl">x</a><br/>
<a href="/whl/cu130/torch-2.9.1%2Bcu128-cp313-cp313-win_amd64.whl">x</a><br/>
</body></html>"#;
        let w = parse(html, "cu130").unwrap();
        assert_eq!(w.len(), 2, "{w:?}");
        let win = w.iter().find(|w| w.for_os(Os::Windows)).unwrap();
        assert_eq!(win.version.to_string(), "2.9.1");
        assert_eq!(win.python.to_string(), "3.13");
        assert!(!win.freethreaded);
        let lin = w.iter().find(|w| w.for_os(Os::Linux)).unwrap();
        assert!(lin.freethreaded);
        assert!(parse("<html>Not Found</html>", "cu130").is_err());
    }

    #[test]
    fn names_come_from_the_tokenizer() {
        let html = r#"<!DOCTYPE html><html><body>
<!-- <a href="/whl/cu130/torch-9.9.9%2Bcu130-cp313-cp313-win_amd64.whl">old</a> -->
<a href='/whl/cu130/torch-2.15.0%2Bcu130-cp312-cp312-win_amd64.whl#sha256=00'>x</a>
<a href=/whl/cu130/torch-2.15.0%2bcu130-cp312-cp312-manylinux_2_28_x86_64.whl>torch-2.15.0&#43;cu130-cp312-cp312-manylinux_2_28_x86_64.whl</a>
</body></html>"#;
        let w = parse(html, "cu130").unwrap();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().all(|w| w.version.to_string() == "2.15.0"));
        assert!(w.iter().all(|w| w.python.to_string() == "3.12"));
    }
}
