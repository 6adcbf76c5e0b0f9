//! Can this Python build a PyTorch CUDA extension? The toolkit `torch.utils.cpp_extension`
//! would use (CUDA_HOME, else CUDA_PATH, else nvcc on PATH, else the default folder),
//! its CUDA major against torch's, and a host compiler whose version that toolkit's own
//! `include/crt/host_config.h` accepts; on request, a minimal CUDAExtension really built
//! (`setup.py build_ext --inplace`: no ninja, no network needed) and imported.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Finding, FindingKind, Fix, Severity, TorchState, finding, shell_quote};
use crate::compat::Os;
use crate::detect::toolkit;
use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::verify::Status;
use crate::verify::nvcc::{self, HostCompiler};
use crate::version::Version;

/// What the probe saw of `torch.utils.cpp_extension` and the variables it reads.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExtensionProbe {
    /// `torch.utils.cpp_extension.CUDA_HOME` (or the same rules applied by the probe when
    /// that module does not import).
    pub cuda_home: Option<String>,
    /// `cpp_extension` or `probe` (the module did not import; `error` says why).
    #[serde(default)]
    pub source: Option<String>,
    pub cuda_home_env: Option<String>,
    pub cuda_path_env: Option<String>,
    pub nvcc_on_path: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
}

impl ExtensionProbe {
    /// Which rule of cpp_extension's found the toolkit.
    pub fn via(&self) -> &'static str {
        if self.cuda_home_env.is_some() {
            "CUDA_HOME"
        } else if self.cuda_path_env.is_some() {
            "CUDA_PATH"
        } else if self.nvcc_on_path.is_some() {
            "PATH"
        } else {
            "default"
        }
    }
}

/// The host compiler versions a toolkit accepts, as its `host_config.h` checks them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostConfigRange {
    /// The newest g++ accepted: `(16, None)` for `__GNUC__ > 16`, `(12, Some(2))` for
    /// `__GNUC__ > 12 || (__GNUC__ == 12 && __GNUC_MINOR__ > 2)`.
    pub gcc_max: Option<(u32, Option<u32>)>,
    /// The oldest g++ accepted (`__GNUC__ < N`).
    pub gcc_min: Option<u32>,
    /// `_MSC_VER` accepted: at least `msc_min`, below `msc_below`.
    pub msc_min: Option<u32>,
    pub msc_below: Option<u32>,
}

/// A comparison `name op number` (`__GNUC__ > 16`).
fn comparison(term: &str) -> Option<(&str, &str, u32)> {
    let t = term.trim().trim_matches(|c| c == '(' || c == ')').trim();
    for op in [">=", "<=", "==", ">", "<"] {
        if let Some((l, r)) = t.split_once(op) {
            let n = r.trim().trim_matches(|c| c == '(' || c == ')').trim();
            return Some((l.trim(), op, n.parse().ok()?));
        }
    }
    None
}

/// Parses the compiler-version checks of `include/crt/host_config.h`: a `#if` whose next
/// directive is an `#error` ("unsupported GNU version", "unsupported Microsoft Visual
/// Studio version"). Nothing is guessed: a check not found stays None.
pub fn parse_host_config(text: &str) -> HostConfigRange {
    let mut r = HostConfigRange::default();
    let directives: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('#'))
        .collect();
    for pair in directives.windows(2) {
        let (cond, next) = (pair[0], pair[1]);
        let Some(cond) = cond
            .strip_prefix("#if")
            .or_else(|| cond.strip_prefix("#elif"))
        else {
            continue;
        };
        if !next.starts_with("#error") {
            continue;
        }
        let cond = cond.split("/*").next().unwrap_or("");
        let next = next.to_ascii_lowercase();
        if next.contains("gnu version") {
            for alt in cond.split("||") {
                let terms: Vec<_> = alt.split("&&").filter_map(comparison).collect();
                match terms.as_slice() {
                    [("__GNUC__", ">", n)] => {
                        r.gcc_max.get_or_insert((*n, None));
                    }
                    [("__GNUC__", ">=", n)] if *n > 0 => {
                        r.gcc_max.get_or_insert((n - 1, None));
                    }
                    [("__GNUC__", "<", n)] => r.gcc_min = Some(*n),
                    [("__GNUC__", "==", n), ("__GNUC_MINOR__", ">", m)] => {
                        r.gcc_max = Some((*n, Some(*m)));
                    }
                    _ => {}
                }
            }
        } else if next.contains("visual studio version") {
            for alt in cond.split("||") {
                match comparison(alt) {
                    Some(("_MSC_VER", "<", n)) => r.msc_min = Some(n),
                    Some(("_MSC_VER", ">=", n)) => r.msc_below = Some(n),
                    Some(("_MSC_VER", ">", n)) => r.msc_below = Some(n + 1),
                    _ => {}
                }
            }
        }
    }
    r
}

/// The host compiler and its version.
#[derive(Debug, Clone, Serialize)]
pub struct CompilerFacts {
    #[serde(flatten)]
    pub compiler: HostCompiler,
    /// `g++ -dumpfullversion` (13.2.0); on Windows cl.exe's version (19.44.35211).
    pub version: Option<Version>,
    /// `_MSC_VER` (1944), Windows only.
    pub msc_ver: Option<u32>,
}

/// Everything the extension findings are computed from.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtensionFacts {
    pub probe: ExtensionProbe,
    /// The toolkit cpp_extension would use.
    pub toolkit: Option<PathBuf>,
    /// Which rule found it: `CUDA_HOME`, `CUDA_PATH`, `PATH` (nvcc), `default`.
    pub found_by: Option<String>,
    pub toolkit_version: Option<Version>,
    /// The toolkit has `bin/nvcc`.
    pub toolkit_has_nvcc: bool,
    pub host_config: Option<PathBuf>,
    /// What host_config.h accepts (None: no header found).
    pub accepts: Option<HostConfigRange>,
    pub compiler: Option<CompilerFacts>,
    /// Toolkits detection found on this machine, for the fixes.
    pub installed: Vec<(PathBuf, Option<Version>)>,
}

/// A toolkit's version: version.json, version.txt, else `bin/nvcc --version`.
pub fn toolkit_version(host: &Host, dir: &Path) -> Option<Version> {
    let read = |name: &str| toolkit::read_small(&dir.join(name));
    read("version.json")
        .and_then(|t| toolkit::parse_version_json(&t))
        .or_else(|| read("version.txt").and_then(|t| toolkit::parse_version_txt(&t)))
        .or_else(|| {
            let nvcc = dir.join("bin").join(host.exe("nvcc"));
            let out = host
                .run(&nvcc, &["--version"], Duration::from_secs(30))
                .ok()?;
            toolkit::parse_nvcc_version(&out.stdout)
        })
}

/// The toolkit's `host_config.h` (CUDA 9 and newer keep it in `include/crt`).
pub fn host_config_path(dir: &Path) -> Option<PathBuf> {
    [
        "include/crt/host_config.h",
        "targets/x86_64-linux/include/crt/host_config.h",
        "include/host_config.h",
    ]
    .iter()
    .map(|p| dir.join(p))
    .find(|p| p.is_file())
}

/// cl.exe's banner → its version: `Microsoft (R) C/C++ Optimizing Compiler Version
/// 19.44.35211 for x64`, or localised (`用于 x64 的 Microsoft (R) C/C++ 优化编译器
/// 19.44.35211 版`): the first word of three or more dotted numbers.
pub fn parse_cl_banner(text: &str) -> Option<Version> {
    text.split_whitespace().find_map(|w| {
        let dotted = w.split('.').count() >= 3
            && w.split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        dotted.then(|| w.parse().ok()).flatten()
    })
}

/// cl.exe 19.44 → `_MSC_VER` 1944.
pub fn msc_ver(cl: &Version) -> Option<u32> {
    let p = cl.parts();
    Some(p.first()? * 100 + p.get(1).copied().unwrap_or(0))
}

fn compiler_facts(host: &Host, compiler: HostCompiler) -> CompilerFacts {
    let t = Duration::from_secs(30);
    let version = match (&host.os, &compiler) {
        (Os::Linux, HostCompiler::OnPath { path }) => ["-dumpfullversion", "-dumpversion"]
            .iter()
            .find_map(|a| host.run(path, &[a], t).ok()?.stdout.trim().parse().ok()),
        (Os::Windows, HostCompiler::OnPath { path }) => host
            .run(path, &[], t)
            .ok()
            .and_then(|o| parse_cl_banner(&format!("{}\n{}", o.stderr, o.stdout))),
        // The toolset vcvars64.bat sets up: 14.44.35207 is cl.exe 19.44.
        (_, HostCompiler::Vcvars { vcvars }) => vcvars
            .parent()
            .map(|d| d.join("Microsoft.VCToolsVersion.default.txt"))
            .and_then(|p| read_small(&p))
            .and_then(|s| s.trim().parse::<Version>().ok())
            .and_then(|v| {
                let p = v.parts();
                (p.first() == Some(&14))
                    .then(|| format!("19.{}", p.get(1)?).parse().ok())
                    .flatten()
            }),
    };
    CompilerFacts {
        msc_ver: (host.os == Os::Windows)
            .then(|| version.as_ref().and_then(msc_ver))
            .flatten(),
        compiler,
        version,
    }
}

impl ExtensionFacts {
    /// Looks at the toolkit the probe named, its header and the host compiler.
    pub fn gather(host: &Host, probe: &ExtensionProbe) -> ExtensionFacts {
        let mut f = ExtensionFacts {
            probe: probe.clone(),
            installed: toolkit::probe(host, Duration::from_secs(10))
                .into_iter()
                .map(|t| (t.path, t.version))
                .collect(),
            ..ExtensionFacts::default()
        };
        if let Some(home) = &probe.cuda_home {
            let dir = PathBuf::from(home);
            f.found_by = Some(probe.via().to_string());
            f.toolkit_has_nvcc = dir.join("bin").join(host.exe("nvcc")).is_file();
            f.toolkit_version = toolkit_version(host, &dir);
            f.host_config = host_config_path(&dir);
            f.accepts = f.host_config.as_ref().and_then(|p| {
                let len = std::fs::metadata(p).ok()?.len();
                (len < 4 << 20)
                    .then(|| std::fs::read_to_string(p).ok())
                    .flatten()
                    .map(|t| parse_host_config(&t))
            });
            f.toolkit = Some(dir);
        }
        f.compiler = nvcc::find_host_compiler(host, Duration::from_secs(30))
            .map(|c| compiler_facts(host, c));
        f
    }

    /// An installed toolkit of this CUDA major (not the one already used).
    fn matching_installed(&self, major: u32) -> Option<&PathBuf> {
        let used = self.toolkit.as_deref().map(crate::platform::canonical);
        self.installed
            .iter()
            .filter(|(p, _)| Some(crate::platform::canonical(p)) != used)
            .find(|(_, v)| v.as_ref().is_some_and(|v| v.major() == major))
            .map(|(p, _)| p)
    }
}

/// Commands that set CUDA_HOME to `dir` (for this console and for new ones).
pub fn set_cuda_home_commands(os: Os, dir: &Path) -> Vec<String> {
    match os {
        Os::Linux => {
            let d = shell_quote(dir);
            vec![
                format!("export CUDA_HOME={d}"),
                format!("echo 'export CUDA_HOME={d}' >> ~/.bashrc"),
            ]
        }
        Os::Windows => {
            let d = format!("\"{}\"", dir.display());
            vec![
                format!("set CUDA_HOME={}", dir.display()),
                format!("setx CUDA_HOME {d}"),
            ]
        }
    }
}

fn toolkit_fix(os: Os, facts: &ExtensionFacts, cuda: &Version) -> Fix {
    match facts.matching_installed(cuda.major()) {
        Some(dir) => Fix {
            message: msg!("fix_ext_set_cuda_home", path = dir.display()),
            commands: set_cuda_home_commands(os, dir),
        },
        None => Fix {
            message: msg!("fix_ext_install_toolkit", cuda = cuda.major_minor()),
            commands: vec![format!("cuda-setup install --cuda {}", cuda.major_minor())],
        },
    }
}

/// The extension findings for a CUDA build of torch.
pub fn findings(os: Os, t: &TorchState, facts: &ExtensionFacts) -> Vec<Finding> {
    use Severity::*;
    let mut out = Vec::new();
    let Some(cuda) = t.cuda.as_deref().and_then(|c| c.parse::<Version>().ok()) else {
        return out;
    };
    let Some(dir) = &facts.toolkit else {
        out.push(finding(
            FindingKind::ExtNoToolkit,
            Info,
            msg!("doctor_ext_no_toolkit", cuda = cuda.major_minor()),
            Some(toolkit_fix(os, facts, &cuda)),
        ));
        return out;
    };
    // CUDA_HOME, CUDA_PATH, PATH (its nvcc), or the default folder itself.
    let via = match facts.found_by.as_deref() {
        Some("default") | None => dir.display().to_string(),
        Some(v) => v.to_string(),
    };
    if !facts.toolkit_has_nvcc {
        out.push(finding(
            FindingKind::ExtToolkitBroken,
            Problem,
            msg!(
                "doctor_ext_toolkit_broken",
                path = dir.display(),
                via = &via
            ),
            Some(toolkit_fix(os, facts, &cuda)),
        ));
        return out;
    }
    match &facts.toolkit_version {
        None => out.push(finding(
            FindingKind::ExtToolkitVersionUnknown,
            Info,
            msg!("doctor_ext_toolkit_version_unknown", path = dir.display()),
            None,
        )),
        Some(tv) if tv.major() != cuda.major() => out.push(finding(
            FindingKind::ExtMajorMismatch,
            Problem,
            msg!(
                "doctor_ext_major_mismatch",
                torch = &t.version,
                cuda = cuda.major_minor(),
                toolkit = tv.major_minor(),
                path = dir.display(),
                via = &via
            ),
            Some(toolkit_fix(os, facts, &cuda)),
        )),
        Some(tv) => {
            out.push(finding(
                FindingKind::ExtToolkitOk,
                Ok,
                msg!(
                    "doctor_ext_toolkit_ok",
                    cuda = cuda.major_minor(),
                    toolkit = tv.major_minor(),
                    path = dir.display()
                ),
                None,
            ));
            if facts.probe.cuda_home_env.is_none() {
                out.push(finding(
                    FindingKind::ExtCudaHomeUnset,
                    Info,
                    msg!(
                        "doctor_ext_cuda_home_unset",
                        path = dir.display(),
                        via = &via
                    ),
                    Some(Fix {
                        message: msg!("fix_ext_set_cuda_home", path = dir.display()),
                        commands: set_cuda_home_commands(os, dir),
                    }),
                ));
            }
        }
    }
    out.extend(compiler_findings(os, facts));
    out
}

fn compiler_findings(os: Os, facts: &ExtensionFacts) -> Option<Finding> {
    use Severity::*;
    let toolkit = facts
        .toolkit_version
        .as_ref()
        .map_or("?".to_string(), |v| v.major_minor().to_string());
    let Some(c) = &facts.compiler else {
        let (key, commands) = match os {
            Os::Linux => (
                "fix_ext_install_gcc",
                vec!["sudo apt install build-essential".to_string()],
            ),
            Os::Windows => (
                "fix_ext_install_msvc",
                vec![
                    "winget install Microsoft.VisualStudio.2022.BuildTools --override \"--wait --passive --add Microsoft.VisualStudio.Workload.VCTools --includeRecommended\"".to_string(),
                ],
            ),
        };
        return Some(finding(
            FindingKind::ExtNoCompiler,
            Problem,
            msg!("doctor_ext_no_compiler"),
            Some(Fix {
                message: Message::new(key),
                commands,
            }),
        ));
    };
    let name = if os == Os::Windows { "cl.exe" } else { "g++" };
    let Some(version) = &c.version else {
        return Some(finding(
            FindingKind::ExtCompilerVersionUnknown,
            Info,
            msg!("doctor_ext_compiler_version_unknown", compiler = name),
            None,
        ));
    };
    let unknown = || {
        finding(
            FindingKind::ExtCompilerRangeUnknown,
            Info,
            msg!(
                "doctor_ext_compiler_range_unknown",
                compiler = name,
                version = version,
                toolkit = &toolkit
            )
            .with(
                "detail",
                facts
                    .host_config
                    .as_ref()
                    .map_or("include/crt/host_config.h".into(), |p| {
                        p.display().to_string()
                    }),
            ),
            None,
        )
    };
    let Some(range) = &facts.accepts else {
        return Some(unknown());
    };
    match os {
        Os::Linux => {
            let Some((max, max_minor)) = range.gcc_max else {
                return Some(unknown());
            };
            let (major, minor) = (version.major(), version.minor());
            let too_new = major > max || (major == max && max_minor.is_some_and(|m| minor > m));
            let max_text = match max_minor {
                Some(m) => format!("{max}.{m}"),
                None => max.to_string(),
            };
            if too_new {
                return Some(finding(
                    FindingKind::ExtCompilerTooNew,
                    Problem,
                    msg!(
                        "doctor_ext_gcc_too_new",
                        version = version,
                        toolkit = &toolkit,
                        max = &max_text
                    ),
                    Some(Fix {
                        message: msg!("fix_ext_older_gcc", max = max),
                        commands: vec![
                            format!("sudo apt install g++-{max}"),
                            format!("export CC=gcc-{max} CXX=g++-{max} NVCC_CCBIN=g++-{max}"),
                        ],
                    }),
                ));
            }
            if let Some(min) = range.gcc_min
                && major < min
            {
                return Some(finding(
                    FindingKind::ExtCompilerTooOld,
                    Problem,
                    msg!(
                        "doctor_ext_gcc_too_old",
                        version = version,
                        toolkit = &toolkit,
                        min = min
                    ),
                    Some(Fix {
                        message: msg!("fix_ext_newer_gcc", min = min),
                        commands: vec![format!("sudo apt install g++-{min}")],
                    }),
                ));
            }
            Some(finding(
                FindingKind::ExtCompilerOk,
                Ok,
                msg!(
                    "doctor_ext_gcc_ok",
                    version = version,
                    toolkit = &toolkit,
                    max = &max_text
                ),
                None,
            ))
        }
        Os::Windows => {
            let (Some(msc), Some(min), Some(below)) = (c.msc_ver, range.msc_min, range.msc_below)
            else {
                return Some(unknown());
            };
            let range_text = format!("{min}–{}", below - 1);
            if msc < min || msc >= below {
                Some(finding(
                    FindingKind::ExtCompilerUnsupported,
                    Problem,
                    msg!(
                        "doctor_ext_msvc_unsupported",
                        version = version,
                        msc = msc,
                        toolkit = &toolkit,
                        range = &range_text
                    ),
                    Some(Fix {
                        message: msg!("fix_ext_msvc_version", range = &range_text),
                        commands: Vec::new(),
                    }),
                ))
            } else {
                Some(finding(
                    FindingKind::ExtCompilerOk,
                    Ok,
                    msg!(
                        "doctor_ext_msvc_ok",
                        version = version,
                        msc = msc,
                        toolkit = &toolkit,
                        range = &range_text
                    ),
                    None,
                ))
            }
        }
    }
}

// ---- `doctor --build-extension` ----

pub const BUILD_SCRIPT: &str = include_str!("../../../../../assets/doctor_build_extension.py");
const BUILD_MARKER: &str = "CUDA_SETUP_EXTENSION ";

/// What the build script printed.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BuildScriptOutput {
    /// `built`, `build_failed`, `import_failed`, `no_setuptools`, `error`.
    pub outcome: String,
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The import's or the script's own error.
    #[serde(default)]
    pub error: Option<String>,
    /// `ran`, `wrong`, `no_gpu`, or the launch's error.
    #[serde(default)]
    pub kernel: Option<String>,
    #[serde(default)]
    pub arch_list: Option<String>,
}

/// The result of `doctor --build-extension`.
#[derive(Debug, Clone, Serialize)]
pub struct BuildExtensionReport {
    pub status: Status,
    #[serde(flatten)]
    pub message: Message,
    /// The compiler's (or linker's, or Python's) first error line.
    pub first_error: Option<String>,
    /// `ran` (x + 1 came back right on the GPU), `no_gpu`, `wrong`, or the launch error.
    pub kernel: Option<String>,
    /// TORCH_CUDA_ARCH_LIST the build used when none was set and no GPU was visible.
    pub arch_list: Option<String>,
    /// The last lines of the build's output.
    pub log_tail: Option<String>,
    pub elapsed_ms: u64,
}

impl BuildExtensionReport {
    pub fn skipped(message: Message) -> Self {
        BuildExtensionReport {
            status: Status::Skipped,
            message,
            first_error: None,
            kernel: None,
            arch_list: None,
            log_tail: None,
            elapsed_ms: 0,
        }
    }

    /// The finding doctor lists for it.
    pub fn finding(&self) -> Finding {
        let severity = match self.status {
            Status::Passed => Severity::Ok,
            Status::Skipped => Severity::Info,
            Status::Failed => Severity::Problem,
        };
        let fix = match self.message.key {
            "doctor_build_no_setuptools" => Some(Fix {
                message: msg!("fix_ext_setuptools"),
                commands: self
                    .message
                    .param("python")
                    .map(|p| vec![format!("{p} -m pip install setuptools")])
                    .unwrap_or_default(),
            }),
            "doctor_build_failed" | "doctor_build_import_failed" => Some(Fix {
                message: msg!("fix_ext_build_failed"),
                commands: Vec::new(),
            }),
            "doctor_build_timeout" => Some(Fix {
                message: msg!("fix_ext_build_timeout"),
                commands: Vec::new(),
            }),
            _ => None,
        };
        finding(FindingKind::ExtBuild, severity, self.message.clone(), fix)
    }
}

/// Whether a line is a compiler's, linker's or nvcc's error (not a command line echoed
/// by setuptools, not a warning).
fn is_error_line(l: &str) -> bool {
    if is_exception_line(l) {
        return false;
    }
    let lower = l.to_ascii_lowercase();
    // setuptools and ninja echo each command: many flags, an -o.
    if l.matches(" -").count() >= 6
        || lower.starts_with("[") && lower.contains("] ") && lower.contains(" -c ")
    {
        return false;
    }
    lower.contains("error:")
        || lower.contains("error c")
            && lower
                .split("error c")
                .nth(1)
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        || lower.contains("error lnk")
        || lower.contains("fatal error")
        || lower.contains("nvcc fatal")
        || lower.contains("cannot find -l")
        || lower.contains("undefined reference to")
        || lower.contains("#error")
}

/// A Python exception's last line (`OSError: CUDA_HOME environment variable is not set.`).
fn is_exception_line(l: &str) -> bool {
    let Some((name, _)) = l
        .split_once(": ")
        .or_else(|| Some((l.strip_suffix(':')?, "")))
    else {
        return false;
    };
    let name = name.rsplit('.').next().unwrap_or(name);
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (name.ends_with("Error") || name.ends_with("Exception"))
}

/// The first error line of a build's output: the compiler's or linker's first, else the
/// Python exception that ended it, else the last line; cut to 400 characters.
pub fn first_error_line(log: &str) -> Option<String> {
    let lines: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let pick = match lines.iter().position(|l| is_error_line(l)) {
        Some(i) => lines[i].to_string(),
        None => match lines.iter().rposition(|l| is_exception_line(l)) {
            // `RuntimeError:` with its message on the lines below (torch's CUDA mismatch).
            Some(i) if lines[i].ends_with(':') => lines[i..].join(" "),
            Some(i) => lines[i].to_string(),
            None => lines.last()?.to_string(),
        },
    };
    let s: String = pick.chars().take(400).collect();
    Some(s)
}

fn tail(log: &str, n: usize) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A small text file (a version file): at most 4 KiB of it.
fn read_small(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(p)
        .ok()?
        .take(4 << 10)
        .read_to_end(&mut buf)
        .ok()?;
    String::from_utf8(buf).ok()
}

/// Reads at most 4 MiB of the build log.
fn read_log(p: &Path) -> String {
    use std::io::Read;
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(p) {
        let _ = f.take(4 << 20).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Why the build would not be tried, if it would not.
pub fn build_skip_reason(
    os: Os,
    torch: Option<&TorchState>,
    facts: Option<&ExtensionFacts>,
) -> Option<Message> {
    let Some(t) = torch.filter(|t| !t.is_cpu_build()) else {
        return Some(msg!("doctor_build_skipped_no_cuda_torch"));
    };
    let _ = t;
    let Some(f) = facts else {
        return Some(msg!("doctor_build_skipped_no_toolkit"));
    };
    if f.toolkit.is_none() || !f.toolkit_has_nvcc {
        return Some(msg!("doctor_build_skipped_no_toolkit"));
    }
    if f.compiler.is_none() {
        return Some(match os {
            Os::Windows => msg!("doctor_build_skipped_no_msvc"),
            Os::Linux => msg!("doctor_build_skipped_no_gcc"),
        });
    }
    None
}

/// Builds and imports the minimal extension with `python`, in a fresh folder under the
/// temp folder (removed afterwards); everything it starts is stopped after `timeout`.
pub fn build_extension(host: &Host, python: &Path, timeout: Duration) -> BuildExtensionReport {
    let start = Instant::now();
    let root = nvcc::scratch_root(host, &std::env::temp_dir());
    let dir = root.join(format!(
        "cuda-setup-ext-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    let mut r = run_build(host, python, &dir, timeout);
    let _ = std::fs::remove_dir_all(&dir);
    r.elapsed_ms = start.elapsed().as_millis() as u64;
    r
}

fn run_build(host: &Host, python: &Path, dir: &Path, timeout: Duration) -> BuildExtensionReport {
    let failed = |message: Message| BuildExtensionReport {
        status: Status::Failed,
        ..BuildExtensionReport::skipped(message)
    };
    if let Err(e) = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(dir.join("doctor_build_extension.py"), BUILD_SCRIPT))
    {
        return failed(
            msg!("doctor_build_failed").with("detail", format!("{}: {e}", dir.display())),
        );
    }
    let mut cmd = std::process::Command::new(python);
    cmd.arg("doctor_build_extension.py")
        .current_dir(dir)
        .env_clear()
        .envs(host.vars());
    let mut stdout = Vec::new();
    let finished = crate::platform::run_long(cmd, timeout, &|| false, &mut |l| {
        if stdout.len() < 10_000 {
            stdout.push(l)
        }
    });
    let log = read_log(&dir.join("build.log"));
    let log_tail = (!log.trim().is_empty()).then(|| tail(&log, 40));
    let out: Option<BuildScriptOutput> = stdout
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix(BUILD_MARKER))
        .and_then(|j| serde_json::from_str(j).ok());
    let mut r = match (&finished, out) {
        (Err(e), _) => failed(msg!("doctor_build_failed").with("detail", e.to_string())),
        (Ok(crate::platform::Finished::TimedOut), _) => {
            let mut r = failed(msg!("doctor_build_timeout", seconds = timeout.as_secs()));
            r.first_error = first_error_line(&log);
            r
        }
        (Ok(_), None) => {
            let all = stdout.join("\n");
            let first = first_error_line(&all);
            let mut r = failed(
                msg!("doctor_build_failed").with("detail", first.clone().unwrap_or_default()),
            );
            r.first_error = first;
            r
        }
        (Ok(_), Some(o)) => {
            let mut r = match o.outcome.as_str() {
                "built" => BuildExtensionReport {
                    status: Status::Passed,
                    ..BuildExtensionReport::skipped(match o.kernel.as_deref() {
                        Some("ran") => msg!("doctor_build_passed_ran"),
                        Some("no_gpu") | None => msg!("doctor_build_passed"),
                        Some(k) => msg!("doctor_build_kernel_failed").with("detail", k),
                    })
                },
                "no_setuptools" => failed(
                    msg!("doctor_build_no_setuptools")
                        .with("python", shell_quote(python))
                        .with("detail", o.error.clone().unwrap_or_default()),
                ),
                "import_failed" => {
                    let e = o.error.clone().unwrap_or_default();
                    let mut r = failed(msg!("doctor_build_import_failed").with("detail", &e));
                    r.first_error = first_error_line(&e);
                    r
                }
                _ => {
                    let first = first_error_line(&log)
                        .or_else(|| o.error.as_deref().and_then(first_error_line));
                    let mut r = failed(
                        msg!("doctor_build_failed")
                            .with("detail", first.clone().unwrap_or_default()),
                    );
                    r.first_error = first;
                    r
                }
            };
            if r.status == Status::Passed
                && o.kernel
                    .as_deref()
                    .is_some_and(|k| k != "ran" && k != "no_gpu")
            {
                r.status = Status::Failed;
            }
            r.kernel = o.kernel;
            r.arch_list = o.arch_list;
            r
        }
    };
    r.log_tail = log_tail;
    r
}

#[cfg(test)]
mod tests;
