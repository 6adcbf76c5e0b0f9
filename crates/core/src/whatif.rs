//! What-if facts: what the user says about a machine (`--gpu`, `--gpu-cc`, `--no-gpu`,
//! `--driver`, `--no-driver`, `--driver-cuda`, `--python`) in place of what detection
//! finds. Checked here once, for the CLI's commands and the wizard's hidden flags alike.

use crate::compat::{Os, Tables};
use crate::detect::Deadlines;
use crate::platform::Host;
use crate::recommend::{Facts, GpuFact};
use crate::version::{ComputeCapability, PythonVersion, Version};

/// The what-if flags as given, unchecked.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub gpu_cc: Vec<ComputeCapability>,
    /// GPUs by model name, looked up in the tables.
    pub gpu: Vec<String>,
    pub no_gpu: bool,
    pub driver: Option<Version>,
    pub no_driver: bool,
    pub driver_cuda: Option<Version>,
    /// `3.12`, or `3.13t` for a free-threaded build.
    pub python: Option<PythonVersion>,
}

/// Checked what-if facts: each one given replaces what detection found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WhatIf {
    /// The GPUs given (by compute capability, then by name).
    pub gpus: Vec<GpuFact>,
    /// The machine has no NVIDIA GPU (`gpus` is then empty).
    pub no_gpu: bool,
    /// `Some(None)`: no driver; `Some(Some(v))`: driver `v`.
    pub driver: Option<Option<Version>>,
    /// The highest CUDA the given driver supports (only with a driver).
    pub driver_cuda: Option<Version>,
    /// `MAJOR.MINOR` of the Python that will run PyTorch.
    pub python: Option<Version>,
    /// That Python is a free-threaded build (`--python 3.13t`).
    pub free_threaded: bool,
}

/// A what-if flag that cannot be right; shown with [`WhatIfError::hint`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WhatIfError {
    #[error("--driver {0} looks like a CUDA version, not a driver version")]
    DriverLooksLikeCuda(Version),
    #[error("--driver-cuda {0} is not a CUDA version")]
    NotCudaVersion(Version),
    #[error("--driver-cuda needs --driver")]
    DriverCudaWithoutDriver,
    #[error("--python {0} is not a Python 3 version")]
    NotPython3(Version),
    #[error("unknown GPU \"{}\"", crate::shown::value(.0))]
    UnknownGpu(String),
    /// Names matching GPUs of different compute capabilities (the first few, quoted).
    #[error("GPU \"{}\" is ambiguous: {matches}", crate::shown::value(.name))]
    AmbiguousGpu { name: String, matches: String },
}

impl WhatIfError {
    /// What to do about it, for the command line's `hint:` line (it names the flags).
    pub fn hint(&self) -> crate::message::Message {
        use crate::msg;
        match self {
            WhatIfError::DriverLooksLikeCuda(_) => msg!("hint_whatif_driver_looks_like_cuda"),
            WhatIfError::NotCudaVersion(_) => msg!("hint_whatif_not_cuda"),
            WhatIfError::DriverCudaWithoutDriver => msg!("hint_whatif_cuda_without_driver"),
            WhatIfError::NotPython3(_) => msg!("hint_whatif_not_python3"),
            WhatIfError::UnknownGpu(_) => msg!("hint_whatif_unknown_gpu"),
            WhatIfError::AmbiguousGpu { .. } => msg!("hint_whatif_ambiguous_gpu"),
        }
    }
}

impl WhatIf {
    /// Checks the flags (a driver version that is really a CUDA version, a CUDA version
    /// out of range, `--driver-cuda` without a driver, a Python that is not 3.x, a GPU
    /// name the tables do not know or that names GPUs of different architectures).
    pub fn parse(tables: &Tables, f: &Flags) -> Result<WhatIf, WhatIfError> {
        if let Some(d) = &f.driver
            && d.major() < 100
        {
            return Err(WhatIfError::DriverLooksLikeCuda(d.clone()));
        }
        if let Some(c) = &f.driver_cuda
            && !(10..=20).contains(&c.major())
        {
            return Err(WhatIfError::NotCudaVersion(c.clone()));
        }
        if f.driver_cuda.is_some() && (f.driver.is_none() || f.no_driver) {
            return Err(WhatIfError::DriverCudaWithoutDriver);
        }
        let python = match &f.python {
            Some(p) if p.version.major() != 3 => {
                return Err(WhatIfError::NotPython3(p.version.clone()));
            }
            Some(p) => Some(p.version.major_minor()),
            None => None,
        };
        let mut gpus: Vec<GpuFact> = f
            .gpu_cc
            .iter()
            .map(|cc| GpuFact {
                name: None,
                compute_capability: *cc,
            })
            .collect();
        for name in &f.gpu {
            gpus.push(gpu_by_name(tables, name)?);
        }
        Ok(WhatIf {
            gpus,
            no_gpu: f.no_gpu,
            driver: if f.no_driver {
                Some(None)
            } else {
                f.driver.clone().map(Some)
            },
            driver_cuda: f.driver_cuda.clone(),
            python,
            free_threaded: f.python.as_ref().is_some_and(|p| p.free_threaded),
        })
    }

    /// Whether any fact is given.
    pub fn any(&self) -> bool {
        self.gpus_given()
            || self.driver.is_some()
            || self.driver_cuda.is_some()
            || self.python.is_some()
    }

    fn gpus_given(&self) -> bool {
        self.no_gpu || !self.gpus.is_empty()
    }

    /// Puts the given facts in place of the detected ones.
    pub fn apply(&self, facts: &mut Facts) {
        if self.gpus_given() {
            facts.gpus = self.gpus.clone();
            facts.unidentified_gpus.clear();
            facts.notes.clear();
        }
        if let Some(d) = &self.driver {
            facts.driver = d.clone();
            facts.driver_cuda = self.driver_cuda.clone();
        }
        if let Some(p) = &self.python {
            facts.python = Some(p.major_minor());
            facts.free_threaded = self.free_threaded;
        }
    }

    /// Whether detecting `os` would tell anything the flags do not: never for another OS
    /// (this machine says nothing about it), nor when GPUs, driver and Python are given.
    pub fn needs_detection(&self, os: Os) -> bool {
        os == Os::current()
            && !(self.gpus_given() && self.driver.is_some() && self.python.is_some())
    }

    /// The facts to recommend for on `os`: detection on `host` where needed, then
    /// the given facts in its place.
    pub fn facts(&self, os: Os, tables: &Tables, host: &Host) -> Facts {
        let mut facts = if self.needs_detection(os) {
            crate::detect::detect(host, tables, Deadlines::default()).facts(os)
        } else {
            Facts {
                os,
                gpus: Vec::new(),
                driver: None,
                driver_cuda: None,
                python: None,
                installed_toolkits: Vec::new(),
                unidentified_gpus: Vec::new(),
                notes: Vec::new(),
                // A few of the host's files: where it runs changes who provides the
                // driver even when every fact is given (#32).
                host_kind: if host.os == os {
                    crate::detect::host_kind(host)
                } else {
                    Default::default()
                },
                free_threaded: false,
            }
        };
        self.apply(&mut facts);
        // A GPU only Jetson modules have (`--gpu-cc 8.7`) makes the machine a Jetson board.
        crate::recommend::jetson::mark(tables, &mut facts);
        facts
    }
}

/// A GPU by its model name: one model, or several of one compute capability.
fn gpu_by_name(tables: &Tables, name: &str) -> Result<GpuFact, WhatIfError> {
    let hits = tables.gpus_by_name(name);
    match hits.as_slice() {
        [] => Err(WhatIfError::UnknownGpu(name.to_string())),
        [one] => Ok(GpuFact {
            name: Some(one.name.clone()),
            compute_capability: one.cc,
        }),
        many if many.iter().all(|g| g.cc == many[0].cc) => Ok(GpuFact {
            name: Some(name.trim().to_string()),
            compute_capability: many[0].cc,
        }),
        many => {
            let names: Vec<String> = many
                .iter()
                .take(8)
                .map(|g| format!("\"{}\" ({})", g.name, g.cc))
                .collect();
            Err(WhatIfError::AmbiguousGpu {
                name: name.to_string(),
                matches: names.join(", "),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> Tables {
        Tables::embedded().unwrap()
    }

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn py(s: &str) -> PythonVersion {
        s.parse().unwrap()
    }

    fn parse(f: Flags) -> Result<WhatIf, WhatIfError> {
        WhatIf::parse(&tables(), &f)
    }

    #[test]
    fn a_cuda_version_given_as_the_driver_is_refused() {
        let e = parse(Flags {
            driver: Some(v("12.4")),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e, WhatIfError::DriverLooksLikeCuda(v("12.4")));
        let hint = crate::i18n::render(&e.hint(), crate::i18n::Lang::En);
        assert!(hint.contains("--driver-cuda"), "{hint}");
    }

    #[test]
    fn a_driver_cuda_out_of_range_is_refused() {
        let e = parse(Flags {
            driver: Some(v("551.78")),
            driver_cuda: Some(v("551")),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e, WhatIfError::NotCudaVersion(v("551")));
    }

    #[test]
    fn driver_cuda_without_a_driver_is_refused() {
        for f in [
            Flags {
                driver_cuda: Some(v("12.4")),
                ..Default::default()
            },
            Flags {
                driver_cuda: Some(v("12.4")),
                no_driver: true,
                ..Default::default()
            },
        ] {
            assert_eq!(parse(f), Err(WhatIfError::DriverCudaWithoutDriver));
        }
    }

    #[test]
    fn a_python_that_is_not_3_is_refused_and_3_keeps_major_minor() {
        assert_eq!(
            parse(Flags {
                python: Some(py("2.7")),
                ..Default::default()
            }),
            Err(WhatIfError::NotPython3(v("2.7")))
        );
        let w = parse(Flags {
            python: Some(py("3.12.4")),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(w.python, Some(v("3.12")));
        assert!(!w.free_threaded);
    }

    /// #32: `--python 3.13t` is a free-threaded 3.13 (it was refused as no version).
    #[test]
    fn a_free_threaded_python_is_taken_as_such() {
        let p = py("3.13t");
        assert_eq!((p.version.clone(), p.free_threaded), (v("3.13"), true));
        assert_eq!(p.to_string(), "3.13t");
        assert!("3.13x".parse::<PythonVersion>().is_err());
        assert!("t".parse::<PythonVersion>().is_err());
        let w = parse(Flags {
            python: Some(p),
            driver: Some(v("595.71.05")),
            gpu: vec!["RTX 4090".into()],
            ..Default::default()
        })
        .unwrap();
        assert!(w.free_threaded);
        let facts = w.facts(Os::Linux, &tables(), &Host::real());
        assert_eq!(facts.python, Some(v("3.13")));
        assert!(facts.free_threaded);
    }

    #[test]
    fn an_unknown_gpu_name_is_refused() {
        let e = parse(Flags {
            gpu: vec!["Voodoo 5 6000".into()],
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e, WhatIfError::UnknownGpu("Voodoo 5 6000".into()));
    }

    /// `--gpu` takes names as NVML, nvidia-smi and Windows write them (the data-centre
    /// names and the MX series were refused on the base commit).
    #[test]
    fn gpu_names_as_tools_write_them_are_accepted() {
        for (name, cc) in [
            ("NVIDIA GeForce RTX 4060 Laptop GPU", "8.9"),
            ("NVIDIA A100-SXM4-80GB", "8.0"),
            ("NVIDIA H100 80GB HBM3", "9.0"),
            ("Tesla V100-SXM2-32GB", "7.0"),
            ("Quadro RTX 5000", "7.5"),
            ("NVIDIA RTX A4000", "8.6"),
            ("NVIDIA GeForce MX450", "7.5"),
            ("NVIDIA H100 PCIe", "9.0"),
            ("NVIDIA L40S", "8.9"),
            ("NVIDIA GeForce RTX 3060 Ti", "8.6"),
            ("GeForce GTX 1080 Ti", "6.1"),
            ("NVIDIA TITAN RTX", "7.5"),
            ("NVIDIA RTX 6000 Ada Generation", "8.9"),
            ("NVIDIA GeForce RTX 5090 D", "12.0"),
            ("NVIDIA GeForce MX130", "5.0"),
            ("NVIDIA GeForce MX250", "6.1"),
            ("NVIDIA GeForce MX570", "8.6"),
        ] {
            let w = parse(Flags {
                gpu: vec![name.into()],
                ..Default::default()
            })
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(w.gpus[0].compute_capability.to_string(), cc, "{name}");
        }
    }

    #[test]
    fn a_name_matching_gpus_of_different_architectures_is_refused() {
        // Find a query naming models of two compute capabilities in the tables.
        let t = tables();
        let query = ["RTX", "GeForce", "Tesla", "Quadro", "A"]
            .into_iter()
            .find(|q| {
                let hits = t.gpus_by_name(q);
                hits.len() > 1 && hits.iter().any(|g| g.cc != hits[0].cc)
            })
            .expect("an ambiguous name in the tables");
        match WhatIf::parse(
            &t,
            &Flags {
                gpu: vec![query.into()],
                ..Default::default()
            },
        ) {
            Err(WhatIfError::AmbiguousGpu { name, matches }) => {
                assert_eq!(name, query);
                assert!(matches.contains('('), "{matches}");
            }
            other => panic!("{query}: {other:?}"),
        }
    }

    #[test]
    fn given_facts_replace_the_detected_ones() {
        let w = parse(Flags {
            gpu_cc: vec!["8.6".parse().unwrap()],
            gpu: vec!["RTX 4090".into()],
            driver: Some(v("551.78")),
            driver_cuda: Some(v("12.4")),
            python: Some(py("3.11")),
            ..Default::default()
        })
        .unwrap();
        assert!(w.any());
        assert_eq!(w.gpus.len(), 2);
        assert_eq!(w.gpus[1].compute_capability, "8.9".parse().unwrap());
        // Everything given: nothing to detect.
        assert!(!w.needs_detection(Os::current()));
        let mut facts = w.facts(Os::current(), &tables(), &Host::real());
        assert_eq!(facts.driver, Some(v("551.78")));
        assert_eq!(facts.driver_cuda, Some(v("12.4")));
        assert_eq!(facts.python, Some(v("3.11")));
        facts.unidentified_gpus = vec!["mystery".into()];
        WhatIf {
            no_gpu: true,
            driver: Some(None),
            ..Default::default()
        }
        .apply(&mut facts);
        assert!(facts.gpus.is_empty() && facts.unidentified_gpus.is_empty());
        assert_eq!(facts.driver, None);
        assert_eq!(facts.python, Some(v("3.11")));
    }

    #[test]
    fn another_os_is_never_detected() {
        let other = if Os::current() == Os::Linux {
            Os::Windows
        } else {
            Os::Linux
        };
        let w = WhatIf::default();
        assert!(!w.any());
        assert!(!w.needs_detection(other));
        assert!(w.needs_detection(Os::current()));
    }
}
