//! The individual checks, one module per layer (driver, toolkit, environment, cuDNN,
//! PyTorch, what an interrupted run left). Each returns findings with their fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Finding, Fix, Layer, Severity, show};
use crate::compat::{Os, Tables};
use crate::detect::{SystemReport, Toolkit};
use crate::devlayout::LinkName;
use crate::message::Message;
use crate::msg;
use crate::steps::{Step, env, toolkit_missing};
use crate::target::Target;
use crate::version::{ComputeCapability, Version};

mod cudnn;
mod driver;
mod driverwatch;
mod environment;
mod guard;
mod leftovers;
mod python;
mod toolkit;
mod wsl;

// Each layer's helpers, for the others and for the tests below.
use cudnn::*;
use driver::*;
use driverwatch::*;
use environment::*;
pub use guard::{guarded, restore_plan};
use leftovers::*;
#[cfg(test)]
use python::arch_covers;
pub use python::{python, wants_python};
use toolkit::*;
use wsl::*;

pub struct Input<'a> {
    pub target: &'a Target,
    pub tables: &'a Tables,
    pub report: &'a SystemReport,
    pub env: &'a BTreeMap<String, String>,
    /// How far the cuDNN check reads our files.
    pub depth: crate::cudnn::Depth,
}

impl Input<'_> {
    fn var(&self, name: &str) -> Option<&str> {
        let hit = match self.target.os {
            Os::Windows => self
                .env
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v),
            Os::Linux => self.env.get(name),
        };
        hit.map(String::as_str).filter(|v| !v.is_empty())
    }

    fn path_list(&self, name: &str) -> Vec<String> {
        let sep = if self.target.os == Os::Windows {
            ';'
        } else {
            ':'
        };
        self.var(name)
            .map(|v| {
                v.split(sep)
                    .filter(|s| !s.trim().is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Toolkits whose nvcc and runtime are present.
    fn intact(&self) -> impl Iterator<Item = &Toolkit> {
        self.report.toolkits.iter().filter(|t| {
            t.version
                .as_ref()
                .is_some_and(|v| toolkit_missing(self.target, &t.path, v).is_empty())
        })
    }

    /// The toolkit the environment points to (CUDA_PATH / CUDA_HOME), else the newest intact.
    fn active(&self) -> Option<&Toolkit> {
        let want = self
            .var("CUDA_PATH")
            .or_else(|| self.var("CUDA_HOME"))
            .map(|p| crate::platform::canonical(Path::new(p)));
        want.and_then(|w| {
            self.intact()
                .find(|t| crate::platform::canonical(&t.path) == w)
        })
        .or_else(|| self.intact().next())
    }
}

pub(super) fn finding(
    layer: Layer,
    id: &'static str,
    severity: Severity,
    message: Message,
    fix: Fix,
) -> Finding {
    Finding {
        id,
        layer,
        severity,
        message,
        fix,
    }
}

pub(super) fn manual(key: &'static str) -> Fix {
    Fix::Manual {
        how: Message::new(key),
    }
}

pub(super) fn steps(s: Vec<Step>) -> Fix {
    Fix::Steps { steps: s }
}

/// Every layer but Python's (see [`python`]; its findings come after these).
pub fn layers(i: &Input) -> Vec<Finding> {
    let mut out = Vec::new();
    driver(i, &mut out);
    driverwatch(i, &mut out);
    wsl(i, &mut out);
    toolkits(i, &mut out);
    cannot_link(i, &mut out);
    environment(i, &mut out);
    cudnn(i, &mut out);
    wheels_foreign(i, &mut out);
    interrupted(i, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_arch_lists() {
        let list: Vec<String> = [
            "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(
            arch_covers(&list, ComputeCapability::new(8, 9)),
            "sm_86 code runs on sm_89"
        );
        assert!(!arch_covers(&list, ComputeCapability::new(12, 0)));
        let ptx: Vec<String> = vec!["sm_90".into(), "compute_90".into()];
        assert!(arch_covers(&ptx, ComputeCapability::new(12, 0)), "PTX JIT");
        assert!(!arch_covers(&ptx, ComputeCapability::new(8, 6)));
    }

    /// Every Device Manager code (and Linux's unbound device) gets one key: the repair
    /// finding's id and message are detect's note, word for word.
    #[test]
    fn gpu_problems_read_the_same_in_detect_and_repair() {
        use crate::detect::{DeviceProblem, Gpu, GpuProblem, GpuSource, gpu::Vendor};
        let problems: Vec<DeviceProblem> = [10, 22, 28, 31, 43, 52, 45, 1]
            .into_iter()
            .map(|c| DeviceProblem {
                code: Some(c),
                key: GpuProblem::from_code(c),
            })
            .chain([
                DeviceProblem {
                    code: None,
                    key: GpuProblem::NoDriver,
                },
                DeviceProblem {
                    code: Some(0),
                    key: GpuProblem::BasicDisplayAdapter,
                },
            ])
            .collect();
        let report = crate::detect::SystemReport {
            gpus: problems
                .iter()
                .enumerate()
                .map(|(i, p)| Gpu {
                    name: format!("GPU {i}"),
                    vendor: Vendor::Nvidia,
                    source: GpuSource::Pci,
                    cuda_capable: true,
                    compute_capability: None,
                    architecture: None,
                    uuid: None,
                    memory_total_bytes: None,
                    memory_used_bytes: None,
                    pci_bus_id: None,
                    pci_device_id: None,
                    kernel_driver: None,
                    problem: Some(p.clone()),
                })
                .collect(),
            ..Default::default()
        };
        let root = std::env::temp_dir();
        let target = Target::rooted(Os::Windows, &root);
        let tables = Tables::embedded().unwrap();
        let env = BTreeMap::new();
        let mut found = Vec::new();
        driver(
            &Input {
                target: &target,
                tables: &tables,
                report: &report,
                env: &env,
                depth: crate::cudnn::Depth::Quick,
            },
            &mut found,
        );
        let notes = report.facts(Os::Windows).notes;
        assert_eq!(found.len(), problems.len());
        assert_eq!(notes.len(), problems.len());
        for ((f, n), p) in found.iter().zip(&notes).zip(&problems) {
            assert_eq!(f.id, n.key, "{p:?}");
            assert_eq!(f.message, *n, "{p:?}");
            assert_eq!(n.key, p.key.message_key());
            let text = crate::i18n::render(n, crate::i18n::Lang::En);
            assert!(!text.starts_with(n.key), "{} has no text", n.key);
        }
        let keys: Vec<&str> = problems.iter().map(|p| p.key.message_key()).collect();
        assert_eq!(
            keys,
            [
                "gpu_failed_start",
                "gpu_disabled",
                "gpu_no_driver",
                "gpu_failed_add",
                "gpu_driver_failed",
                "gpu_unsigned_driver",
                "gpu_device_problem",
                "gpu_device_problem",
                "gpu_no_driver",
                "gpu_basic_display_adapter",
            ]
        );
    }

    /// The link check reads files and nothing else: a toolkit whose nvcc leaves a mark
    /// when run gets its finding, the mark never appears, and the check takes no time to
    /// speak of (repair's audit must stay well under half a second). Then our wheels
    /// record turns the manual fix into completing the tree in place.
    #[cfg(unix)]
    #[test]
    fn the_link_check_is_static_and_a_tree_of_ours_is_completed_in_place() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let tk = root.path().join("usr/local/cuda-13.5");
        std::fs::create_dir_all(tk.join("bin")).unwrap();
        std::fs::create_dir_all(tk.join("lib64")).unwrap();
        let mark = root.path().join("nvcc-ran");
        let nvcc = tk.join("bin/nvcc");
        std::fs::write(&nvcc, format!("#!/bin/sh\ntouch '{}'\n", mark.display())).unwrap();
        std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
        for f in ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13"] {
            std::fs::write(tk.join("lib64").join(f), b"ELF").unwrap();
        }
        let version: Version = "13.5.0".parse().unwrap();
        let report = SystemReport {
            toolkits: vec![Toolkit {
                path: tk.clone(),
                version: Some(version.clone()),
                version_source: Some(crate::detect::toolkit::VersionSource::VersionJson),
                found_by: vec![],
                env_vars: vec![],
                nvcc: Some(nvcc.clone()),
                runtime_dir: tk.join("lib64"),
                path_rank: None,
                active: true,
            }],
            ..Default::default()
        };
        let target = Target::rooted(Os::Linux, root.path());
        let tables = Tables::embedded().unwrap();
        let env = BTreeMap::new();
        let input = Input {
            target: &target,
            tables: &tables,
            report: &report,
            env: &env,
            depth: crate::cudnn::Depth::Quick,
        };
        let run = || {
            let mut found = Vec::new();
            cannot_link(&input, &mut found);
            found
        };
        let found = run();
        assert!(!mark.exists(), "the link check ran nvcc");
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.id, "repair_toolkit_cannot_link");
        assert_eq!(f.severity, Severity::Error, "the active toolkit");
        assert_eq!(
            f.message.param("files"),
            Some(
                "lib64/libcudart.so, lib64/libcublas.so, lib64/libcublasLt.so, \
                 lib64/stubs/libcuda.so"
            )
        );
        assert_eq!(
            f.message.param("libs"),
            Some("cudart, cuBLAS, cuBLASLt, libcuda")
        );
        // NVIDIA's runfile made it, as far as we know: run it again.
        match &f.fix {
            Fix::Manual { how } => {
                assert_eq!(how.key, "repair_fix_toolkit_runfile");
                let cmd = how.param("command").unwrap();
                assert!(
                    cmd.starts_with("sudo sh cuda_13.5.0_linux.run --silent --toolkit")
                        && cmd.ends_with(&format!("--toolkitpath={}", tk.display())),
                    "{cmd}"
                );
            }
            other => panic!("{other:?}"),
        }
        // Ours (the wheels method's record): completed in place.
        let meta = tk.join(crate::cudnn::txn::META);
        std::fs::create_dir_all(&meta).unwrap();
        std::fs::write(
            meta.join(crate::wheels::assemble::RECORD),
            r#"{"version":"13.5.0","wheels":["nvidia_cuda_runtime-13.5.38-py3-none-manylinux_2_27_x86_64.whl"],"files":3}"#,
        )
        .unwrap();
        let found = run();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].fix,
            Fix::Steps {
                steps: vec![Step::CompleteToolkit {
                    dir: tk.clone(),
                    version: version.clone(),
                }]
            }
        );
        // Every link name there: nothing to say.
        std::fs::create_dir_all(tk.join("lib64/stubs")).unwrap();
        for f in [
            "libcudart.so",
            "libcublas.so",
            "libcublasLt.so",
            "stubs/libcuda.so",
        ] {
            std::fs::write(tk.join("lib64").join(f), b"ELF").unwrap();
        }
        assert!(run().is_empty());
        assert!(!mark.exists());
    }

    #[test]
    fn cuda_path_entries() {
        assert!(cuda_entry(
            r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8\bin"
        ));
        assert!(cuda_entry("/usr/local/cuda-12.4/bin"));
        assert!(!cuda_entry(r"C:\Windows\System32"));
    }
}
