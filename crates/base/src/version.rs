//! Dotted numeric versions (`12.4.1`, `551.78`, `9.10.2.21`) and compute capabilities.
//!
//! Versions compare component by component as numbers, so `9.10` > `9.9` and a missing
//! component counts as zero (`12.4` == `12.4.0`).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A dotted numeric version with 1 to 4 components. It prints as it was written
/// (driver `470.82.01` keeps its zero; it is part of file names and URLs).
/// No allocation unless written unlike its numbers: the recommender builds and compares
/// versions in its inner loops.
#[derive(Clone, Debug, Eq)]
pub struct Version {
    /// The components; the first `len` are written.
    parts: [u32; 4],
    len: u8,
    /// The text as written where it is not the numbers joined by dots (`470.82.01`).
    text: Option<Box<str>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{}` is not a version (expected numbers separated by dots, like 12.4 or 551.78)",
    crate::shown::value(.0)
)]
pub struct VersionParseError(pub String);

impl Version {
    /// A version of 1 to 4 components (more is a bug in the caller).
    pub fn new(parts: &[u32]) -> Self {
        assert!(
            (1..=4).contains(&parts.len()),
            "a version has 1 to 4 components: {parts:?}"
        );
        let mut all = [0; 4];
        all[..parts.len()].copy_from_slice(parts);
        Version {
            parts: all,
            len: parts.len() as u8,
            text: None,
        }
    }

    /// The numeric components as written (`12.4` → `[12, 4]`).
    pub fn parts(&self) -> &[u32] {
        &self.parts[..usize::from(self.len)]
    }

    pub fn major(&self) -> u32 {
        self.parts[0]
    }

    pub fn minor(&self) -> u32 {
        self.part(1)
    }

    /// `MAJOR.MINOR` of this version (`12.4.1` → `12.4`).
    pub fn major_minor(&self) -> Version {
        Version {
            parts: [self.major(), self.minor(), 0, 0],
            len: 2,
            text: None,
        }
    }

    fn part(&self, i: usize) -> u32 {
        self.parts().get(i).copied().unwrap_or(0)
    }
}

impl FromStr for Version {
    type Err = VersionParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let parts: Option<Vec<u32>> = t
            .split('.')
            .map(|p| {
                if p.is_empty() || p.len() > 9 || !p.bytes().all(|b| b.is_ascii_digit()) {
                    None
                } else {
                    p.parse().ok()
                }
            })
            .collect();
        match parts {
            Some(parts) if (1..=4).contains(&parts.len()) => {
                let mut v = Version::new(&parts);
                if v.to_string() != t {
                    v.text = Some(t.into());
                }
                Ok(v)
            }
            _ => Err(VersionParseError(s.to_string())),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(text) = &self.text {
            return f.write_str(text);
        }
        for (i, p) in self.parts().iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        // Unwritten components are zeros in the array: `12.4` == `12.4.0`.
        self.parts.cmp(&other.parts)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl std::hash::Hash for Version {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Equal versions have equal arrays (trailing zeros included), as `eq` compares.
        self.parts.hash(state);
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A Python version as users type it: `3.13`, or `3.13t` for the free-threaded build
/// (PEP 703), whose wheels carry their own ABI (`cp313t`, not `cp313`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonVersion {
    pub version: Version,
    pub free_threaded: bool,
}

impl PythonVersion {
    /// `3.13` with `free_threaded` → `3.13t`.
    pub fn label(version: &Version, free_threaded: bool) -> String {
        if free_threaded {
            format!("{version}t")
        } else {
            version.to_string()
        }
    }
}

impl FromStr for PythonVersion {
    type Err = VersionParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let (v, free_threaded) = match t.strip_suffix(['t', 'T']) {
            Some(v) => (v, true),
            None => (t, false),
        };
        Ok(PythonVersion {
            version: v.parse().map_err(|_| VersionParseError(s.to_string()))?,
            free_threaded,
        })
    }
}

impl fmt::Display for PythonVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&PythonVersion::label(&self.version, self.free_threaded))
    }
}

/// A CUDA compute capability (`8.6` → sm_86).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a compute capability (expected MAJOR.MINOR between 1.0 and 15.9, like 8.6)")]
pub struct CcParseError(pub String);

impl ComputeCapability {
    pub const fn new(major: u32, minor: u32) -> Self {
        ComputeCapability { major, minor }
    }

    /// The `sm_XY` spelling nvcc and PyTorch use.
    pub fn sm(&self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }

    /// Whether machine code built for `self` runs on a GPU of capability `gpu`:
    /// same major, and `self.minor <= gpu.minor` (CUDA's binary compatibility rule).
    pub fn binary_runs_on(&self, gpu: ComputeCapability) -> bool {
        self.major == gpu.major && self.minor <= gpu.minor
    }
}

impl FromStr for ComputeCapability {
    type Err = CcParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let t = t.strip_prefix("sm_").map_or(t.to_string(), |digits| {
            // sm_86 → 8.6, sm_120 → 12.0
            if digits.len() >= 2 {
                format!(
                    "{}.{}",
                    &digits[..digits.len() - 1],
                    &digits[digits.len() - 1..]
                )
            } else {
                digits.to_string()
            }
        });
        let err = || CcParseError(s.to_string());
        let (maj, min) = t.split_once('.').ok_or_else(err)?;
        let ok = |p: &str| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit());
        if !ok(maj) || !ok(min) || min.len() != 1 {
            return Err(err());
        }
        let cc = ComputeCapability::new(
            maj.parse().map_err(|_| err())?,
            min.parse().map_err(|_| err())?,
        );
        // Real GPUs span 1.0 (Tesla, 2006) to 12.x (Blackwell); leave headroom, refuse nonsense.
        if !(1..=15).contains(&cc.major) {
            return Err(err());
        }
        Ok(cc)
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for ComputeCapability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ComputeCapability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(v("9.10.2.21") > v("9.5.1.17"));
        assert!(v("12.10") > v("12.9"));
        assert_eq!(v("12.4"), v("12.4.0"));
        assert!(v("551.78") > v("551.61"));
        assert!(v("580.65.06") < v("580.88"));
        assert_eq!(v("470.82.01").to_string(), "470.82.01");
        assert_eq!(v("470.82.01"), v("470.82.1"));
    }

    #[test]
    fn bad_versions_are_refused() {
        for bad in [
            "",
            "abc",
            "12..4",
            "12.4.",
            "-1",
            "1.2.3.4.5",
            "12.4a",
            " . ",
        ] {
            assert!(bad.parse::<Version>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn compute_capability_parses_both_spellings() {
        assert_eq!(
            "8.6".parse::<ComputeCapability>().unwrap(),
            ComputeCapability::new(8, 6)
        );
        assert_eq!(
            "sm_120".parse::<ComputeCapability>().unwrap(),
            ComputeCapability::new(12, 0)
        );
        assert_eq!(ComputeCapability::new(12, 0).sm(), "sm_120");
        for bad in ["99.9", "8", "8.66", "0.5", "x.y", "8.", ".6"] {
            assert!(bad.parse::<ComputeCapability>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn binary_compatibility_is_within_a_major() {
        let sm86 = ComputeCapability::new(8, 6);
        assert!(sm86.binary_runs_on(ComputeCapability::new(8, 9)));
        assert!(!sm86.binary_runs_on(ComputeCapability::new(8, 0)));
        assert!(!sm86.binary_runs_on(ComputeCapability::new(9, 0)));
    }
}
