//! A wheel's METADATA: `Requires-Dist` lines (PEP 508, parsed by `pep508_rs`) and
//! `Provides-Extra`, and the target whose environment markers decide which pins apply
//! (`(sys_platform == 'win32' and platform_machine == 'AMD64' or …) and extra == 'nvcc'`).

use std::str::FromStr;

use pep508_rs::{ExtraName, MarkerEnvironment, MarkerEnvironmentBuilder, MarkerTree, VersionOrUrl};

use super::version::Specifier;
use crate::compat::Os;
use crate::version::Version;

#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// PEP 503-normalised (`nvidia-cuda-nvcc`).
    pub name: String,
    pub spec: Specifier,
    /// Always true when the line has no `;` part.
    pub marker: MarkerTree,
}

impl Requirement {
    /// Whether the pin applies on `env`.
    pub fn applies(&self, env: &Env) -> bool {
        env.holds(&self.marker)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Metadata {
    pub requires: Vec<Requirement>,
    pub extras: Vec<String>,
}

pub fn parse(text: &str) -> Result<Metadata, String> {
    let mut m = Metadata::default();
    // Headers end at the first blank line; the description follows.
    for line in text.lines().take_while(|l| !l.trim().is_empty()) {
        if let Some(v) = line.strip_prefix("Requires-Dist:") {
            m.requires.push(parse_requirement(v.trim())?);
        } else if let Some(v) = line.strip_prefix("Provides-Extra:") {
            m.extras.push(v.trim().to_string());
        }
    }
    Ok(m)
}

fn parse_requirement(text: &str) -> Result<Requirement, String> {
    let r = pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(text)
        .map_err(|e| format!("Requires-Dist `{text}`: {e}"))?;
    let spec = match r.version_or_url {
        None => Specifier::default(),
        Some(VersionOrUrl::VersionSpecifier(set)) => set.to_string().parse()?,
        // An index install takes wheels by name and version, never from a URL.
        Some(VersionOrUrl::Url(_)) => {
            return Err(format!("Requires-Dist `{text}` names a URL, not a version"));
        }
    };
    Ok(Requirement {
        name: r.name.to_string(),
        spec,
        marker: r.marker,
    })
}

/// The target the markers are evaluated for. Only x86-64 wheels are ever taken (see
/// `platform_ok`), so the OS decides the platform variables.
#[derive(Debug, Clone)]
pub struct Env {
    pub os: Os,
    /// `MAJOR.MINOR[.PATCH]` of the interpreter the wheels are for. None: no one
    /// interpreter (a toolkit tree unpacked from wheels serves any), and a `python_*`
    /// marker holds when it holds for some CPython 3 in [`ANY_PYTHON`].
    pub python: Option<Version>,
    pub extras: Vec<String>,
}

/// The CPython 3 minors tried when no interpreter is given.
pub const ANY_PYTHON: std::ops::RangeInclusive<u32> = 8..=20;

impl Env {
    pub fn new(os: Os, python: Option<Version>, extras: Vec<String>) -> Env {
        Env { os, python, extras }
    }

    /// Evaluates `marker` against this target.
    pub fn holds(&self, marker: &MarkerTree) -> bool {
        let extras: Vec<ExtraName> = self
            .extras
            .iter()
            .filter_map(|e| ExtraName::from_str(e).ok())
            .collect();
        let pythons: Vec<Vec<u32>> = match &self.python {
            Some(v) => vec![v.parts().to_vec()],
            None => ANY_PYTHON.map(|minor| vec![3, minor]).collect(),
        };
        pythons.iter().any(|parts| match self.environment(parts) {
            Some(env) => marker.evaluate(&env, &extras),
            None => false,
        })
    }

    fn environment(&self, python: &[u32]) -> Option<MarkerEnvironment> {
        let at = |i: usize| python.get(i).copied().unwrap_or(0);
        let short = format!("{}.{}", at(0), at(1));
        let full = format!("{short}.{}", at(2));
        let win = self.os == Os::Windows;
        MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
            implementation_name: "cpython",
            implementation_version: &full,
            os_name: if win { "nt" } else { "posix" },
            platform_machine: if win { "AMD64" } else { "x86_64" },
            platform_python_implementation: "CPython",
            // The kernel's release and build string: not known for a target, and no
            // NVIDIA pin reads them.
            platform_release: "",
            platform_system: if win { "Windows" } else { "Linux" },
            platform_version: "",
            python_full_version: &full,
            python_version: &short,
            sys_platform: if win { "win32" } else { "linux" },
        })
        .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "Requires-Dist: nvidia-cuda-nvcc==13.5.37.*; (sys_platform == 'linux' and platform_machine == 'aarch64' or sys_platform == 'linux' and platform_machine == 'x86_64' or sys_platform == 'win32' and platform_machine == 'AMD64') and extra == 'nvcc'";

    /// Parses and evaluates one marker expression (the part after `;`).
    fn eval(marker: &str, env: &Env) -> Result<bool, String> {
        let tree = MarkerTree::from_str(marker).map_err(|e| format!("marker `{marker}`: {e}"))?;
        Ok(env.holds(&tree))
    }

    fn env(os: Os, python: Option<&str>, extras: &[&str]) -> Env {
        Env::new(
            os,
            python.map(|p| p.parse().unwrap()),
            extras.iter().map(|s| s.to_string()).collect(),
        )
    }

    #[test]
    fn nvidia_pins() {
        let m = parse(&format!(
            "Metadata-Version: 2.4\nName: cuda-toolkit\nProvides-Extra: nvcc\n{LINE}\nRequires-Dist: nvidia-cudla==13.5.25.*; (sys_platform == 'linux' and platform_machine == 'aarch64') and extra == 'cudla'\n\nRequires-Dist: not-a-header\n"
        ))
        .unwrap();
        assert_eq!(m.requires.len(), 2);
        assert_eq!(m.extras, ["nvcc"]);
        let r = &m.requires[0];
        assert_eq!(r.name, "nvidia-cuda-nvcc");
        assert_eq!(r.spec.to_string(), "==13.5.37.*");
        assert!(r.applies(&env(Os::Windows, None, &["nvcc"])));
        assert!(r.applies(&env(Os::Linux, Some("3.12"), &["nvcc"])));
        assert!(!r.applies(&env(Os::Linux, None, &["cublas"])));
        assert!(!m.requires[1].applies(&env(Os::Linux, None, &["cudla"])));
    }

    #[test]
    fn forms() {
        let r = parse_requirement("nvidia-nvjitlink<14,>=13.5.37; extra == \"cufft\"").unwrap();
        assert_eq!(r.name, "nvidia-nvjitlink");
        assert!(r.spec.matches(&"13.6".parse().unwrap()));
        assert!(!r.spec.matches(&"14.0".parse().unwrap()));
        let r = parse_requirement("Foo_Bar[x] (>=1.0)").unwrap();
        assert_eq!(r.name, "foo-bar");
        assert!(r.marker.is_true() && r.applies(&env(Os::Linux, None, &[])));
        assert!(parse_requirement("x @ https://example.invalid/x.whl").is_err());
        assert!(parse_requirement("x >= ; extra == 'a'").is_err());
        let linux = env(Os::Linux, None, &[]);
        assert!(eval("python_version >= '3.9' and os_name == 'posix'", &linux).unwrap());
        assert!(eval("'linux' in sys_platform", &linux).unwrap());
        assert!(eval("sys_platform == 'linux' and (", &linux).is_err());
        assert!(eval("sys_platform = 'linux'", &linux).is_err());
    }

    #[test]
    fn python_markers_are_evaluated() {
        let py312 = env(Os::Linux, Some("3.12"), &[]);
        assert!(!eval("python_version < '3.10'", &py312).unwrap());
        assert!(eval("python_version >= '3.10'", &py312).unwrap());
        assert!(eval("python_full_version >= '3.12.0'", &py312).unwrap());
        assert!(
            !eval(
                "python_version < '3.10'",
                &env(Os::Linux, Some("3.12.4"), &[])
            )
            .unwrap()
        );
        assert!(eval("python_version < '3.10'", &env(Os::Linux, Some("3.9"), &[])).unwrap());
        // No interpreter: some CPython 3 must satisfy it; none is below 3.
        let any = env(Os::Linux, None, &[]);
        assert!(eval("python_version < '3.10'", &any).unwrap());
        assert!(!eval("python_version < '3'", &any).unwrap());
        assert!(!eval("python_version < '3.10' and python_version > '3.11'", &any).unwrap());
        assert!(eval("implementation_name == 'cpython'", &any).unwrap());
    }

    #[test]
    fn platform_markers_follow_the_target() {
        let linux = env(Os::Linux, Some("3.12"), &[]);
        let windows = env(Os::Windows, Some("3.12"), &[]);
        assert!(!eval("sys_platform == \"win32\"", &linux).unwrap());
        assert!(eval("sys_platform == \"win32\"", &windows).unwrap());
        assert!(
            eval(
                "platform_system == 'Linux' and platform_machine == 'x86_64'",
                &linux
            )
            .unwrap()
        );
        assert!(
            eval(
                "platform_system == 'Windows' and platform_machine == 'AMD64'",
                &windows
            )
            .unwrap()
        );
        assert!(!eval("os_name == 'nt'", &linux).unwrap());
        // Extras compare normalised.
        assert!(eval("extra == 'Cu_Blas'", &env(Os::Linux, None, &["cu-blas"])).unwrap());
    }
}
