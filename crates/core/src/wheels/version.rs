//! The part of PEP 440 NVIDIA's wheels need: final releases with any number of numeric
//! components (`13.3.5.0.6`), and the specifiers `cuda-toolkit` pins them with
//! (`==13.5.37.*`, `<14,>=13.5.37`). Pre-, post- and dev releases are not parsed, so they
//! are never chosen.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Eq)]
pub struct WheelVersion(Vec<u64>);

impl WheelVersion {
    fn at(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }
}

impl FromStr for WheelVersion {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        let s = s.trim().trim_start_matches('v');
        let parts: Option<Vec<u64>> = s
            .split('.')
            .map(|p| {
                (!p.is_empty() && p.len() <= 12 && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse().ok())
                    .flatten()
            })
            .collect();
        parts.filter(|p| !p.is_empty()).map(WheelVersion).ok_or(())
    }
}

impl fmt::Display for WheelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&t.join("."))
    }
}

impl Ord for WheelVersion {
    fn cmp(&self, o: &Self) -> Ordering {
        let n = self.0.len().max(o.0.len());
        (0..n)
            .map(|i| self.at(i).cmp(&o.at(i)))
            .find(|c| c.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}
impl PartialOrd for WheelVersion {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for WheelVersion {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}

/// One clause: `==13.5.37.*`, `>=13.5.37`, `<14`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Clause {
    op: String,
    version: WheelVersion,
    /// `.*`: a prefix match (only with `==` / `!=`).
    prefix: bool,
}

/// A comma-separated specifier set; empty matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Specifier {
    clauses: Vec<Clause>,
    text: String,
}

impl fmt::Display for Specifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.text.is_empty() {
            "(any)"
        } else {
            &self.text
        })
    }
}

impl FromStr for Specifier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let text = s
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        let mut clauses = Vec::new();
        for c in text.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let op_len = c
                .find(|ch: char| ch.is_ascii_digit() || ch.is_whitespace())
                .unwrap_or(c.len());
            let (op, rest) = c.split_at(op_len);
            let op = op.trim();
            if !["==", "!=", ">=", "<=", ">", "<", "~="].contains(&op) {
                return Err(format!("unsupported version specifier `{c}`"));
            }
            let rest = rest.trim();
            let (v, prefix) = match rest.strip_suffix(".*") {
                Some(v) => (v, true),
                None => (rest, false),
            };
            let version = v
                .parse()
                .map_err(|()| format!("not a version in specifier `{c}`"))?;
            clauses.push(Clause {
                op: op.to_string(),
                version,
                prefix,
            });
        }
        Ok(Specifier {
            clauses,
            text: text.to_string(),
        })
    }
}

impl Specifier {
    pub fn matches(&self, v: &WheelVersion) -> bool {
        self.clauses.iter().all(|c| {
            let prefix_eq = || c.version.0.iter().enumerate().all(|(i, p)| v.at(i) == *p);
            match (c.op.as_str(), c.prefix) {
                ("==", true) => prefix_eq(),
                ("!=", true) => !prefix_eq(),
                ("==", false) => v == &c.version,
                ("!=", false) => v != &c.version,
                (">=", _) => v >= &c.version,
                ("<=", _) => v <= &c.version,
                (">", _) => v > &c.version,
                ("<", _) => v < &c.version,
                // ~=X.Y.Z: >= X.Y.Z and == X.Y.*
                ("~=", _) => {
                    let n = c.version.0.len().saturating_sub(1).max(1);
                    v >= &c.version && (0..n).all(|i| v.at(i) == c.version.at(i))
                }
                _ => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> WheelVersion {
        s.parse().unwrap()
    }

    #[test]
    fn order_and_parse() {
        assert!(v("13.3.5.0.6") > v("13.3.5.0.5"));
        assert!(v("13.10") > v("13.9.99"));
        assert_eq!(v("12.4"), v("12.4.0"));
        assert!("13.4.46rc1".parse::<WheelVersion>().is_err());
        assert!("9.28.0.38.dev75998618".parse::<WheelVersion>().is_err());
    }

    #[test]
    fn specifiers() {
        let s: Specifier = "==13.5.37.*".parse().unwrap();
        assert!(s.matches(&v("13.5.37")) && s.matches(&v("13.5.37.1")));
        assert!(!s.matches(&v("13.5.38")));
        let r: Specifier = "<14,>=13.5.37".parse().unwrap();
        assert!(r.matches(&v("13.6.1")) && !r.matches(&v("14.0")) && !r.matches(&v("13.5.36")));
        let t: Specifier = "~=9.27.0".parse().unwrap();
        assert!(t.matches(&v("9.27.3")) && !t.matches(&v("9.28.0")));
        assert!(Specifier::default().matches(&v("1")));
        assert!("=>1".parse::<Specifier>().is_err());
    }
}
