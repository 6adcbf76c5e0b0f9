//! Wheel versions and the specifiers `cuda-toolkit` pins them with (`==13.5.37.*`,
//! `<14,>=13.5.37`): PEP 440 in full through `pep440_rs` — epochs, pre-, post- and dev
//! releases, local versions (`2.15.0+cu130`). Pre- and dev releases are parsed but, as pip
//! does, only matched by a specifier that names one itself.

use std::fmt;
use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WheelVersion(Version);

impl WheelVersion {
    /// An alpha, beta, release candidate or dev release.
    pub fn is_prerelease(&self) -> bool {
        self.0.any_prerelease()
    }
}

impl FromStr for WheelVersion {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Version::from_str(s.trim())
            .map(WheelVersion)
            .map_err(|_| ())
    }
}

/// The normalised form (`1.0-post1` → `1.0.post1`, `v2` → `2`).
impl fmt::Display for WheelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A comma-separated specifier set; empty matches everything. Shown as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Specifier {
    set: VersionSpecifiers,
    text: String,
}

impl Default for Specifier {
    fn default() -> Self {
        Specifier {
            set: VersionSpecifiers::empty(),
            text: String::new(),
        }
    }
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
        // The old `Requires-Dist: name (>=1.0)` form keeps its parentheses.
        let text = s
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        let set = if text.is_empty() {
            VersionSpecifiers::empty()
        } else {
            text.parse::<VersionSpecifiers>()
                .map_err(|e| format!("unsupported version specifier `{text}`: {e}"))?
        };
        Ok(Specifier {
            set,
            text: text.to_string(),
        })
    }
}

impl Specifier {
    pub fn matches(&self, v: &WheelVersion) -> bool {
        (!v.is_prerelease() || self.names_prerelease()) && self.set.contains(&v.0)
    }

    /// PEP 440: pre-releases are excluded unless a clause names one (`>=2.0rc1`).
    fn names_prerelease(&self) -> bool {
        self.set.iter().any(|c| c.any_prerelease())
    }

    /// Several specifier sets that must all hold, as one.
    pub fn all_of(specs: &[Specifier]) -> Specifier {
        let texts: Vec<&str> = specs
            .iter()
            .map(|s| s.text.as_str())
            .filter(|t| !t.is_empty())
            .collect();
        Specifier {
            set: specs.iter().flat_map(|s| s.set.iter().cloned()).collect(),
            text: texts.join(","),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> WheelVersion {
        s.parse().unwrap()
    }

    fn spec(s: &str) -> Specifier {
        s.parse().unwrap()
    }

    #[test]
    fn order_and_parse() {
        assert!(v("13.3.5.0.6") > v("13.3.5.0.5"));
        assert!(v("13.10") > v("13.9.99"));
        assert_eq!(v("12.4"), v("12.4.0"));
        assert!(v("13.4.46rc1").is_prerelease() && v("13.4.46rc1") < v("13.4.46"));
        assert!("not.a.version".parse::<WheelVersion>().is_err());
        assert!("".parse::<WheelVersion>().is_err());
    }

    #[test]
    fn post_releases_are_releases() {
        let post = v("9.1.0.70.post1");
        assert!(!post.is_prerelease());
        assert!(post > v("9.1.0.70") && post < v("9.1.0.71"));
        assert_eq!(v("9.1.0.70-post1").to_string(), "9.1.0.70.post1");
        // A pin on the release takes its post release; the old parser refused the name.
        assert!(spec("==9.1.0.70.*").matches(&post));
        assert!(spec(">=9.1.0.70,<10").matches(&post));
    }

    #[test]
    fn dev_releases_only_when_asked_for() {
        let dev = v("9.28.0.38.dev75998618");
        assert!(dev.is_prerelease() && dev < v("9.28.0.38"));
        assert!(!spec(">=9.27").matches(&dev));
        assert!(!Specifier::default().matches(&dev));
        assert!(spec(">=9.28.0.38.dev1").matches(&dev));
    }

    #[test]
    fn epochs_order_first() {
        let e = v("1!1.0");
        assert!(e > v("2024.10"));
        assert_eq!(e.to_string(), "1!1.0");
        assert!(!spec("<3000").matches(&e));
        assert!(spec(">=1!0").matches(&e));
    }

    #[test]
    fn local_versions() {
        let t = v("2.15.0+cu130");
        assert_eq!(t.to_string(), "2.15.0+cu130");
        assert!(t > v("2.15.0") && t < v("2.15.1"));
        // A specifier without a local label ignores the candidate's (PEP 440).
        assert!(spec("==2.15.0").matches(&t));
        assert!(spec("==2.15.0+cu130").matches(&t));
        assert!(!spec("==2.15.0+cu128").matches(&t));
    }

    #[test]
    fn specifiers() {
        let s = spec("==13.5.37.*");
        assert!(s.matches(&v("13.5.37")) && s.matches(&v("13.5.37.1")));
        assert!(!s.matches(&v("13.5.38")));
        let r = spec("<14,>=13.5.37");
        assert!(r.matches(&v("13.6.1")) && !r.matches(&v("14.0")) && !r.matches(&v("13.5.36")));
        assert_eq!(r.to_string(), "<14,>=13.5.37");
        let t = spec("~=9.27.0");
        assert!(t.matches(&v("9.27.3")) && !t.matches(&v("9.28.0")));
        assert!(Specifier::default().matches(&v("1")));
        assert_eq!(Specifier::default().to_string(), "(any)");
        assert!(spec("(>=1.0)").matches(&v("1.0")));
        assert!("=>1".parse::<Specifier>().is_err());
        let both = Specifier::all_of(&[spec("==13.*"), Specifier::default(), spec("<13.5")]);
        assert_eq!(both.to_string(), "==13.*,<13.5");
        assert!(both.matches(&v("13.4")) && !both.matches(&v("13.5")));
    }
}
