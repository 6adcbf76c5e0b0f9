//! `gpu-packages.toml` (#33): the CUDA and cuDNN majors the GPU packages people run
//! besides PyTorch need per version (onnxruntime-gpu, ctranslate2, TensorFlow on Windows),
//! and where a package has no GPU at all (TensorFlow ≥ 2.11 and JAX on native Windows).
//! Schema, validation and look-ups; the doctor decides with them (`verify::packages`).
//! A version no row covers has no rule: nothing is inferred between rows.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::TableError;
use super::schema::Meta;
use super::schema::Os;
use crate::version::Version;

/// The file's name, in a `--compat-dir` (optional there: the built-in one is used).
pub const GPU_PACKAGES_FILE: &str = "gpu-packages.toml";
pub(super) const EMBEDDED_GPU_PACKAGES: &str =
    include_str!("../../../../compat-tables/gpu-packages.toml");

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GpuPackagesFile {
    pub meta: Meta,
    #[serde(default)]
    pub needs: Vec<PackageNeeds>,
    #[serde(default)]
    pub no_gpu: Vec<NoGpu>,
}

/// The CUDA and cuDNN majors a version range of a package's PyPI wheels is built for.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PackageNeeds {
    /// The distribution's name as PyPI normalises it (`onnxruntime-gpu`).
    pub package: String,
    /// Only on this OS (None: every OS).
    #[serde(default)]
    pub os: Option<Os>,
    pub versions: VersionRange,
    pub cuda: u32,
    pub cudnn: Option<u32>,
    pub confirmed: bool,
    pub source: String,
    #[serde(default)]
    pub note: Option<String>,
    /// Not in the file: set for rows learned by `refresh` from a release's wheel metadata
    /// on PyPI (then `source` is that `.metadata` file and `confirmed` is false).
    #[serde(skip)]
    pub origin: super::Origin,
}

impl PackageNeeds {
    /// Learned by `refresh` (from PyPI's metadata), not a row of the file.
    pub fn fetched(&self) -> bool {
        matches!(self.origin, super::Origin::Fetched { .. })
    }
}

/// A package that has no GPU on an OS from some version on.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoGpu {
    pub package: String,
    pub os: Os,
    pub versions: VersionRange,
    pub source: String,
    #[serde(default)]
    pub note: Option<String>,
}

/// `>=A, <B` (either side may be left out): the only two operators the table needs, so
/// a range is always one interval. Versions compare numerically (`4.10` > `4.9`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    pub lower: Option<Version>,
    pub upper: Option<Version>,
}

impl VersionRange {
    pub fn contains(&self, v: &Version) -> bool {
        self.lower.as_ref().is_none_or(|l| v >= l) && self.upper.as_ref().is_none_or(|u| v < u)
    }

    fn overlaps(&self, other: &VersionRange) -> bool {
        let below = |upper: &Option<Version>, lower: &Option<Version>| match (upper, lower) {
            (Some(u), Some(l)) => u <= l,
            _ => false,
        };
        !below(&self.upper, &other.lower) && !below(&other.upper, &self.lower)
    }

    /// As pip's specifier (`>=4.0,<4.5`).
    pub fn pip_spec(&self) -> String {
        let mut parts = Vec::new();
        if let Some(l) = &self.lower {
            parts.push(format!(">={l}"));
        }
        if let Some(u) = &self.upper {
            parts.push(format!("<{u}"));
        }
        parts.join(",")
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pip_spec())
    }
}

impl FromStr for VersionRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (mut lower, mut upper) = (None, None);
        for part in s.split(',').map(str::trim) {
            let (slot, text) = if let Some(v) = part.strip_prefix(">=") {
                (&mut lower, v)
            } else if let Some(v) = part.strip_prefix('<').filter(|v| !v.starts_with('=')) {
                (&mut upper, v)
            } else {
                return Err(format!(
                    "`{part}`: a range is `>=A, <B` (either may be left out)"
                ));
            };
            if slot.is_some() {
                return Err(format!("`{part}`: that bound is given twice"));
            }
            *slot = Some(
                text.trim()
                    .parse::<Version>()
                    .map_err(|_| format!("`{}` is not a version", text.trim()))?,
            );
        }
        if let (Some(l), Some(u)) = (&lower, &upper)
            && l >= u
        {
            return Err(format!("empty: {l} is not below {u}"));
        }
        if lower.is_none() && upper.is_none() {
            return Err("names no bound".into());
        }
        Ok(VersionRange { lower, upper })
    }
}

impl<'de> Deserialize<'de> for VersionRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl Serialize for VersionRange {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.pip_spec())
    }
}

/// A package version as pip shows it (`1.20.0rc1`, `2.6.2.post112`, `4.5.0+cu124`): its
/// leading release numbers, at most four. None when it starts with none.
pub fn release_of(version: &str) -> Option<Version> {
    let head: String = version
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let parts: Vec<&str> = head
        .trim_end_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
        .take(4)
        .collect();
    parts.join(".").parse().ok()
}

impl GpuPackagesFile {
    /// The row for `package` at `version` on `os`, if the table knows it.
    pub fn needs(&self, package: &str, version: &Version, os: Os) -> Option<&PackageNeeds> {
        self.needs.iter().find(|n| {
            n.package == package && n.os.is_none_or(|o| o == os) && n.versions.contains(version)
        })
    }

    /// The newest confirmed row of `package` for these CUDA and cuDNN majors on `os`
    /// (cuDNN None: any): what to install for what the machine has. A row learned from a
    /// release's own metadata counts: the wheel states what it requires.
    pub fn for_cuda(
        &self,
        package: &str,
        os: Os,
        cuda: u32,
        cudnn: Option<u32>,
    ) -> Option<&PackageNeeds> {
        self.needs
            .iter()
            .filter(|n| {
                n.package == package
                    && (n.confirmed || n.fetched())
                    && n.os.is_none_or(|o| o == os)
                    && n.cuda == cuda
                    && cudnn.is_none_or(|c| n.cudnn == Some(c))
            })
            .max_by(|a, b| a.versions.lower.cmp(&b.versions.lower))
    }

    /// The row saying `package` at `version` has no GPU on `os`, if any.
    pub fn no_gpu(&self, package: &str, version: &Version, os: Os) -> Option<&NoGpu> {
        self.no_gpu
            .iter()
            .find(|n| n.package == package && n.os == os && n.versions.contains(version))
    }
}

/// What loading checks beyond the schema: names as PyPI normalises them, sources that are
/// links, plausible majors, and no two rows claiming one version.
pub(super) fn validate(t: &GpuPackagesFile) -> Result<(), TableError> {
    let bad = |key: String, problem: &str| TableError::Invalid {
        file: GPU_PACKAGES_FILE.into(),
        key,
        problem: problem.into(),
    };
    let name_ok = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    for (i, n) in t.needs.iter().enumerate() {
        let key = |field: &str| format!("needs[{i}] ({} {}).{field}", n.package, n.versions);
        if !name_ok(&n.package) {
            return Err(bad(
                key("package"),
                "not a normalised PyPI name (lowercase, digits, '-')",
            ));
        }
        if !(9..=20).contains(&n.cuda) {
            return Err(bad(key("cuda"), "not a CUDA major (9 to 20)"));
        }
        if n.cudnn.is_some_and(|c| !(5..=20).contains(&c)) {
            return Err(bad(key("cudnn"), "not a cuDNN major (5 to 20)"));
        }
        // A learned row's source is the metadata file read (a mirror's may be http).
        if !n.fetched() && !n.source.starts_with("https://") {
            return Err(bad(key("source"), "must be an https:// link"));
        }
        if let Some((j, _)) = t.needs.iter().enumerate().take(i).find(|(_, m)| {
            m.package == n.package
                && (m.os.is_none() || n.os.is_none() || m.os == n.os)
                && m.versions.overlaps(&n.versions)
        }) {
            return Err(bad(
                key("versions"),
                &format!("overlaps needs[{j}]: one version has one rule"),
            ));
        }
    }
    for (i, n) in t.no_gpu.iter().enumerate() {
        let key = |field: &str| format!("no_gpu[{i}] ({} {}).{field}", n.package, n.versions);
        if !name_ok(&n.package) {
            return Err(bad(
                key("package"),
                "not a normalised PyPI name (lowercase, digits, '-')",
            ));
        }
        if !n.source.starts_with("https://") {
            return Err(bad(key("source"), "must be an https:// link"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn ranges_parse_and_hold_what_they_say() {
        let r: VersionRange = ">=4.0, <4.5".parse().unwrap();
        assert!(r.contains(&v("4.0")) && r.contains(&v("4.4.0")));
        assert!(!r.contains(&v("4.5.0")) && !r.contains(&v("3.24")));
        assert_eq!(r.pip_spec(), ">=4.0,<4.5");
        let open: VersionRange = ">=2.11".parse().unwrap();
        assert!(open.contains(&v("2.20.0")));
        for bad in ["<=4.5", ">=4.5, <4.0", ">=4.0, >=4.1", "", "4.0", ">=x"] {
            assert!(bad.parse::<VersionRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn release_numbers_of_pip_versions() {
        assert_eq!(release_of("1.20.0rc1"), Some(v("1.20.0")));
        assert_eq!(release_of("2.6.2.post112"), Some(v("2.6.2")));
        assert_eq!(release_of("4.5.0+cu124"), Some(v("4.5.0")));
        assert_eq!(release_of("dev"), None);
    }

    #[test]
    fn the_embedded_table_answers_the_known_cases() {
        let t: GpuPackagesFile = toml::from_str(EMBEDDED_GPU_PACKAGES).unwrap();
        validate(&t).unwrap();
        let n = t
            .needs("onnxruntime-gpu", &v("1.20.1"), Os::Windows)
            .unwrap();
        assert_eq!((n.cuda, n.cudnn), (12, Some(9)));
        assert!(
            t.needs("onnxruntime-gpu", &v("1.30.0"), Os::Linux)
                .is_none()
        );
        let old = t.for_cuda("onnxruntime-gpu", Os::Linux, 11, None).unwrap();
        assert_eq!(old.versions.pip_spec(), ">=1.7,<1.19");
        let ct2 = t.for_cuda("ctranslate2", Os::Linux, 12, Some(8)).unwrap();
        assert_eq!(ct2.versions.pip_spec(), ">=4.0,<4.5");
        assert!(t.no_gpu("tensorflow", &v("2.15.0"), Os::Windows).is_some());
        assert!(t.no_gpu("tensorflow", &v("2.10.1"), Os::Windows).is_none());
        assert!(t.no_gpu("tensorflow", &v("2.15.0"), Os::Linux).is_none());
    }
}
