//! `compat-tables/drivers-linux.toml`: per distribution family, the commands that install
//! an NVIDIA driver. Embedded, and validated as input all the same (a bad row is refused
//! with its key, never acted on).

use serde::Deserialize;

/// The table as shipped.
pub const EMBEDDED: &str = include_str!("../../../../compat-tables/drivers-linux.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub meta: Meta,
    #[serde(rename = "family")]
    pub families: Vec<Family>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub subject: String,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub name: String,
    /// os-release `ID` values that select this family.
    pub ids: Vec<String>,
    /// The driver lives in Debian's non-free components, which must be enabled first.
    #[serde(default)]
    pub non_free: bool,
    /// What the user runs to enrol the module-signing key (absent: the install asks).
    pub mok_command: Option<String>,
    #[serde(default = "yes")]
    pub mok_confirmed: bool,
    pub generic: Route,
    /// The commands when a release ships a known branch that is new enough.
    pub branch: Option<Route>,
    /// The commands that rebuild the driver's kernel module for kernel `{kernel}` after
    /// a kernel change (DKMS, akmods); absent: none sourced for this family (#33).
    pub rebuild: Option<Route>,
    #[serde(default, rename = "release")]
    pub releases: Vec<Release>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    pub commands: Vec<String>,
    pub package: Option<String>,
    pub confirmed: bool,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// os-release `VERSION_ID` (`24.04`, `12`); a dot-less one also matches its point
    /// releases (`9` matches `9.4`).
    pub version_id: String,
    /// Driver branches the release's own archive ships, ascending.
    #[serde(default)]
    pub branches: Vec<u32>,
    pub confirmed: bool,
    pub source: String,
    /// Where a newer branch comes from when `branches` are all too old (or none known).
    pub newer: Option<Route>,
}

fn yes() -> bool {
    true
}

/// Why the table was refused: the key, and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("compat table drivers-linux.toml: {0}")]
    Parse(String),
    #[error("compat table drivers-linux.toml: {key}: {problem}")]
    Invalid { key: String, problem: String },
}

fn invalid(key: impl Into<String>, problem: impl Into<String>) -> TableError {
    TableError::Invalid {
        key: key.into(),
        problem: problem.into(),
    }
}

/// Parses and validates a table.
pub fn parse(text: &str) -> Result<Table, TableError> {
    let table: Table = toml::from_str(text).map_err(|e| TableError::Parse(e.to_string()))?;
    validate(&table)?;
    Ok(table)
}

fn validate(t: &Table) -> Result<(), TableError> {
    if t.meta.subject.trim().is_empty() || t.meta.sources.is_empty() {
        return Err(invalid("meta", "needs a subject and at least one source"));
    }
    let mut names = std::collections::BTreeSet::new();
    let mut ids = std::collections::BTreeSet::new();
    for f in &t.families {
        let key = format!("family \"{}\"", f.name);
        if f.name.trim().is_empty() || !names.insert(f.name.as_str()) {
            return Err(invalid(key, "a family needs a name of its own"));
        }
        if f.ids.is_empty() {
            return Err(invalid(key, "names no os-release ID"));
        }
        for id in &f.ids {
            if id.is_empty()
                || !id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
            {
                return Err(invalid(
                    &key,
                    format!("ID \"{id}\" is not an os-release ID"),
                ));
            }
            if !ids.insert(id.as_str()) {
                return Err(invalid(
                    &key,
                    format!("ID \"{id}\" belongs to two families"),
                ));
            }
        }
        if let Some(c) = &f.mok_command {
            command(&key, "mok_command", c, false)?;
        }
        route(&key, "generic", &f.generic, false)?;
        if let Some(b) = &f.branch {
            route(&key, "branch", b, true)?;
        }
        if let Some(r) = &f.rebuild {
            rebuild(&key, r)?;
        }
        let mut versions = std::collections::BTreeSet::new();
        for r in &f.releases {
            let rkey = format!("{key}, release \"{}\"", r.version_id);
            if r.version_id.is_empty()
                || !r
                    .version_id
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.')
            {
                return Err(invalid(rkey, "version_id must be digits and dots"));
            }
            if !versions.insert(r.version_id.as_str()) {
                return Err(invalid(rkey, "appears twice"));
            }
            if r.source.trim().is_empty() {
                return Err(invalid(rkey, "needs a source"));
            }
            if r.branches.contains(&0) || !r.branches.windows(2).all(|w| w[0] < w[1]) {
                return Err(invalid(
                    rkey,
                    "branches must be ascending, unique and non-zero",
                ));
            }
            if !r.branches.is_empty() && f.branch.is_none() {
                return Err(invalid(
                    rkey,
                    "names branches, but the family has no branch route",
                ));
            }
            if let Some(n) = &r.newer {
                route(&rkey, "newer", n, false)?;
            }
        }
    }
    Ok(())
}

fn route(key: &str, name: &str, r: &Route, branch: bool) -> Result<(), TableError> {
    if r.commands.is_empty() {
        return Err(invalid(format!("{key}, {name}"), "has no commands"));
    }
    for c in &r.commands {
        command(key, name, c, branch)?;
    }
    if let Some(p) = &r.package {
        command(key, name, p, branch)?;
    }
    if branch && !r.commands.iter().any(|c| c.contains("{branch}")) && r.package.is_none() {
        return Err(invalid(format!("{key}, {name}"), "names no package"));
    }
    Ok(())
}

/// The rebuild route: commands, and `{kernel}` (the new kernel release) its only
/// placeholder.
fn rebuild(key: &str, r: &Route) -> Result<(), TableError> {
    if r.commands.is_empty() {
        return Err(invalid(format!("{key}, rebuild"), "has no commands"));
    }
    for c in &r.commands {
        command(key, "rebuild", &c.replace("{kernel}", ""), false)?;
    }
    Ok(())
}

/// One command line: one line, printable, and `{branch}` the only placeholder (and only
/// in the branch route).
fn command(key: &str, name: &str, c: &str, branch: bool) -> Result<(), TableError> {
    let k = || format!("{key}, {name}");
    if c.trim().is_empty() || c.chars().any(char::is_control) {
        return Err(invalid(k(), format!("\"{c}\" is not one printable line")));
    }
    let rest = if branch {
        c.replace("{branch}", "")
    } else {
        c.to_string()
    };
    if rest.contains('{') || rest.contains('}') {
        return Err(invalid(
            k(),
            format!("\"{c}\": the only placeholder is {{branch}}, in the branch route"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_is_valid() {
        let t = parse(EMBEDDED).unwrap();
        assert!(t.families.iter().any(|f| f.name == "ubuntu"));
        assert!(t.families.iter().any(|f| f.name == "debian"));
    }

    fn with(replace: &str, by: &str) -> Result<Table, TableError> {
        assert!(EMBEDDED.contains(replace), "{replace}");
        parse(&EMBEDDED.replacen(replace, by, 1))
    }

    #[test]
    fn bad_rows_are_refused_with_their_key() {
        let e = with("branches = [580]", "branches = [580, 535]").unwrap_err();
        assert!(
            e.to_string()
                .contains("family \"ubuntu\", release \"22.04\""),
            "{e}"
        );
        let e = with("version_id = \"13\"", "version_id = \"12\"").unwrap_err();
        assert!(e.to_string().contains("appears twice"), "{e}");
        let e = with("sudo ubuntu-drivers install", "sudo apt install {version}").unwrap_err();
        assert!(e.to_string().contains("only placeholder"), "{e}");
        let e = with("ids = [\"fedora\"]", "ids = [\"debian\"]").unwrap_err();
        assert!(e.to_string().contains("two families"), "{e}");
        let e = with(
            "sudo apt update\", \"sudo apt install nvidia-driver-{branch}",
            "sudo apt update\nrm -rf /\", \"x",
        )
        .unwrap_err();
        assert!(
            matches!(e, TableError::Parse(_) | TableError::Invalid { .. }),
            "{e}"
        );
        let e = with(
            "confirmed = true\nsource = \"packages.ubuntu.com noble",
            "confirmed = true\nsource = \"\"\nx = \"packages.ubuntu.com noble",
        )
        .unwrap_err();
        assert!(matches!(e, TableError::Parse(_)), "unknown field: {e}");
        assert!(parse("[meta]\nsubject = \"x\"\nsources = []\nfamily = []\n").is_err());
    }
}
