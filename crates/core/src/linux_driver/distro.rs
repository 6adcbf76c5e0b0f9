//! `/etc/os-release` (or `/usr/lib/os-release`), read under the host's root as input:
//! bounded, a regular file, lines that do not parse skipped.

use std::collections::BTreeMap;
use std::io::Read;

use crate::platform::Host;

/// More than any real os-release (a few hundred bytes): a bigger file is not one.
const MAX_BYTES: u64 = 64 * 1024;

/// What the advice needs of os-release.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OsRelease {
    pub id: Option<String>,
    pub id_like: Vec<String>,
    pub version_id: Option<String>,
    pub pretty_name: Option<String>,
}

/// The host's os-release; None when there is none, or it is not a small regular file.
pub fn read(host: &Host) -> Option<OsRelease> {
    ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|p| read_bounded(&host.system_path(p)))
        .map(|text| parse(&text))
}

fn read_bounded(path: &std::path::Path) -> Option<String> {
    let f = std::fs::File::open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(MAX_BYTES + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= MAX_BYTES).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// `KEY=value` lines, values optionally quoted (os-release(5)); the rest is ignored.
pub fn parse(text: &str) -> OsRelease {
    let mut vars = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if k.is_empty()
            || !k
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            continue;
        }
        vars.insert(k, unquote(v));
    }
    let word = |v: &String| -> Option<String> {
        let v = v.trim();
        // An ID is a short lowercase word; anything else is not one we can match.
        (!v.is_empty()
            && v.len() <= 64
            && v.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)))
        .then(|| v.to_string())
    };
    let text_value = |v: &String| -> Option<String> {
        let v: String = v.chars().filter(|c| !c.is_control()).take(128).collect();
        (!v.trim().is_empty()).then(|| v.trim().to_string())
    };
    OsRelease {
        id: vars.get("ID").and_then(word),
        id_like: vars
            .get("ID_LIKE")
            .map(|v| {
                v.split_whitespace()
                    .filter_map(|w| word(&w.to_string()))
                    .collect()
            })
            .unwrap_or_default(),
        version_id: vars.get("VERSION_ID").and_then(word),
        pretty_name: vars.get("PRETTY_NAME").and_then(text_value),
    }
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1]
                .replace("\\\"", "\"")
                .replace("\\\\", "\\");
        }
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_lines_are_read_as_the_spec_says() {
        let r = parse(
            "# comment\nNAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\nPRETTY_NAME='Rocky Linux 9.4 (Blue Onyx)'\nnot a line\n=x\nlower=case\n",
        );
        assert_eq!(r.id.as_deref(), Some("rocky"));
        assert_eq!(r.id_like, ["rhel", "centos", "fedora"]);
        assert_eq!(r.version_id.as_deref(), Some("9.4"));
        assert_eq!(
            r.pretty_name.as_deref(),
            Some("Rocky Linux 9.4 (Blue Onyx)")
        );
    }

    #[test]
    fn values_that_are_not_ids_are_dropped() {
        let r = parse(
            "ID=Ubuntu Linux\nVERSION_ID=\"24.04; rm -rf /\"\nPRETTY_NAME=\"\x1b[31mred\x1b[0m\"\n",
        );
        assert_eq!(r.id, None);
        assert_eq!(r.version_id, None);
        assert_eq!(r.pretty_name.as_deref(), Some("[31mred[0m"));
    }
}
