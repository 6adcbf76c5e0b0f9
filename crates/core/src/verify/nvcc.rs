//! nvcc: `nvcc --version`, then — when a host compiler exists (cl.exe through vswhere on
//! Windows, g++ on Linux) — compile and run a tiny kernel that checks its own result.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::{Check, Status};
use crate::compat::Os;
use crate::detect::toolkit::parse_nvcc_version;
use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::version::{ComputeCapability, Version};

/// The test program: SAXPY on 2²⁰ floats, checked on the host, one result line.
pub const KERNEL_SOURCE: &str = r#"// cuda-setup's nvcc check: prints one line "CUDA_SETUP_KERNEL ...".
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

static int fail(const char* what, cudaError_t e) {
    printf("CUDA_SETUP_KERNEL error %d %s %s: %s\n", (int)e, cudaGetErrorName(e), what,
           cudaGetErrorString(e));
    return 1;
}

int main() {
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    float* hx = (float*)malloc(bytes);
    float* hy = (float*)malloc(bytes);
    for (int i = 0; i < n; ++i) { hx[i] = (float)(i % 1000); hy[i] = 1.0f; }
    float *dx = 0, *dy = 0;
    cudaError_t e = cudaMalloc((void**)&dx, bytes);
    if (e != cudaSuccess) return fail("cudaMalloc", e);
    if ((e = cudaMalloc((void**)&dy, bytes)) != cudaSuccess) return fail("cudaMalloc", e);
    if ((e = cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice)) != cudaSuccess) return fail("cudaMemcpy", e);
    if ((e = cudaMemcpy(dy, hy, bytes, cudaMemcpyHostToDevice)) != cudaSuccess) return fail("cudaMemcpy", e);
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, dx, dy);
    if ((e = cudaGetLastError()) != cudaSuccess) return fail("kernel launch", e);
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) return fail("cudaDeviceSynchronize", e);
    if ((e = cudaMemcpy(hy, dy, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) return fail("cudaMemcpy", e);
    int bad = 0;
    for (int i = 0; i < n; ++i) if (hy[i] != 2.0f * (float)(i % 1000) + 1.0f) ++bad;
    cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess) return fail("cudaGetDeviceProperties", e);
    if (bad) { printf("CUDA_SETUP_KERNEL wrong %d of %d sm_%d%d %s\n", bad, n, p.major, p.minor, p.name); return 2; }
    printf("CUDA_SETUP_KERNEL ok sm_%d%d %s\n", p.major, p.minor, p.name);
    return 0;
}
"#;

const MARKER: &str = "CUDA_SETUP_KERNEL ";

/// What the test program said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KernelOutcome {
    /// It ran and its result was right: `sm_86 NVIDIA GeForce RTX 3060`.
    Ok { device: String },
    /// It ran and some results were wrong.
    Wrong { detail: String },
    /// A CUDA runtime call failed: `cudaErrorNoDevice`, and its text.
    Error {
        code: i32,
        name: String,
        text: String,
    },
}

pub fn parse_kernel_output(stdout: &str) -> Option<KernelOutcome> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix(MARKER))?;
    let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
    match kind {
        "ok" => Some(KernelOutcome::Ok {
            device: rest.trim().to_string(),
        }),
        "wrong" => Some(KernelOutcome::Wrong {
            detail: rest.trim().to_string(),
        }),
        "error" => {
            let mut w = rest.splitn(3, ' ');
            let code = w.next()?.parse().ok()?;
            let name = w.next()?.to_string();
            Some(KernelOutcome::Error {
                code,
                name,
                text: w.next().unwrap_or("").trim().to_string(),
            })
        }
        _ => None,
    }
}

/// cudaErrorInsufficientDriver: no driver, or one older than the toolkit's runtime.
pub const CUDA_ERROR_INSUFFICIENT_DRIVER: i32 = 35;
/// cudaErrorNoDevice.
pub const CUDA_ERROR_NO_DEVICE: i32 = 100;
/// cudaErrorNoKernelImageForDevice: compiled code that does not run on this GPU.
pub const CUDA_ERROR_NO_KERNEL_IMAGE: i32 = 209;

/// The useful lines of a failed nvcc run: those that say error or fatal, else the tail.
pub fn compile_error_summary(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("fatal")
        })
        .take(3)
        .collect();
    let picked = if errors.is_empty() {
        lines[lines.len().saturating_sub(3)..].to_vec()
    } else {
        errors
    };
    let text = picked.join(" | ");
    if text.chars().count() > 600 {
        text.chars().take(600).collect::<String>() + "…"
    } else {
        text
    }
}

/// Where vswhere.exe is (Visual Studio 2017 and newer put it there).
pub fn vswhere_path(host: &Host) -> PathBuf {
    host.var("ProgramFiles(x86)")
        .map(PathBuf::from)
        .unwrap_or_else(|| host.system_path(r"C:\Program Files (x86)"))
        .join("Microsoft Visual Studio")
        .join("Installer")
        .join("vswhere.exe")
}

/// The arguments that ask vswhere for the newest install with the x64 C++ tools (Build
/// Tools included).
pub const VSWHERE_ARGS: &[&str] = &[
    "-latest",
    "-products",
    "*",
    "-requires",
    "Microsoft.VisualStudio.Component.VC.Tools.x86.x64",
    "-property",
    "installationPath",
];

/// vswhere's answer (an install folder) → its `vcvars64.bat`.
pub fn vcvars_from_vswhere(stdout: &str) -> Option<PathBuf> {
    let dir = stdout.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(
        Path::new(dir)
            .join("VC")
            .join("Auxiliary")
            .join("Build")
            .join("vcvars64.bat"),
    )
}

/// A batch file that sets up the compiler's environment and runs nvcc in `dir` with
/// relative file names (nvcc mishandles non-ASCII paths on Windows).
pub fn build_script(dir: &Path, vcvars: Option<&Path>, nvcc: &Path, args: &[String]) -> String {
    let mut s = String::from("@echo off\r\n");
    s += &format!("cd /d \"{}\"\r\n", dir.display());
    if let Some(v) = vcvars {
        s += &format!("call \"{}\" >nul\r\n", v.display());
        s += "if errorlevel 1 exit /b 90\r\n";
    }
    s += &format!("\"{}\"", nvcc.display());
    for a in args {
        s += &format!(" {a}");
    }
    s += " 2>&1\r\n";
    s
}

/// A scratch folder whose path is plain ASCII (nvcc and cmd.exe mishandle others, and a
/// Windows user name is often not ASCII): the temp folder if it is, else ProgramData.
pub fn scratch_root(host: &Host, temp: &Path) -> PathBuf {
    if temp.to_string_lossy().is_ascii() || host.os == Os::Linux {
        return temp.to_path_buf();
    }
    host.var("ProgramData")
        .map(PathBuf::from)
        .unwrap_or_else(|| host.system_path(r"C:\ProgramData"))
        .join("cuda-setup")
}

/// The host compiler nvcc will use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostCompiler {
    /// g++ (Linux) or cl.exe (Windows) already on PATH.
    OnPath { path: PathBuf },
    /// Visual C++ found by vswhere; its environment comes from this vcvars64.bat.
    Vcvars { vcvars: PathBuf },
}

pub fn find_host_compiler(host: &Host, timeout: Duration) -> Option<HostCompiler> {
    match host.os {
        Os::Linux => host.which("g++").map(|path| HostCompiler::OnPath { path }),
        Os::Windows => {
            if let Some(path) = host.which("cl") {
                return Some(HostCompiler::OnPath { path });
            }
            let vswhere = vswhere_path(host);
            if !vswhere.is_file() {
                return None;
            }
            let out = host.run(&vswhere, VSWHERE_ARGS, timeout).ok()?;
            vcvars_from_vswhere(&out.stdout)
                .filter(|v| v.is_file())
                .map(|vcvars| HostCompiler::Vcvars { vcvars })
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NvccReport {
    pub nvcc: Option<PathBuf>,
    pub version: Option<Version>,
    pub host_compiler: Option<HostCompiler>,
    /// `-arch` passed (the GPU's own, when the driver told us).
    pub arch: Option<String>,
    pub compiled: bool,
    pub kernel: Option<KernelOutcome>,
}

pub struct Options<'a> {
    pub host: &'a Host,
    pub toolkit: Option<&'a Path>,
    /// The GPU the driver reported (its sm is compiled for), if any.
    pub gpu: Option<ComputeCapability>,
    /// Whether the driver loaded (a kernel then failing for want of a driver means the
    /// toolkit is too new for it, not that there is none).
    pub driver_present: bool,
    pub compile_timeout: Duration,
}

pub fn check(o: &Options) -> Check<NvccReport> {
    let mut r = NvccReport::default();
    let host = o.host;
    let Some(tk) = o.toolkit else {
        return Check::new(Status::Skipped, Some(msg!("smoke_no_toolkit")), r);
    };
    let nvcc = tk.join("bin").join(host.exe("nvcc"));
    if !nvcc.is_file() {
        return Check::new(
            Status::Skipped,
            Some(msg!("nvcc_not_found", path = nvcc.display())),
            r,
        );
    }
    r.nvcc = Some(nvcc.clone());
    match host.run(&nvcc, &["--version"], Duration::from_secs(30)) {
        Ok(out) => match parse_nvcc_version(&out.stdout) {
            Some(v) => r.version = Some(v),
            None => {
                let detail = compile_error_summary(&format!("{}\n{}", out.stdout, out.stderr));
                return Check::new(
                    Status::Failed,
                    Some(msg!("nvcc_failed", detail = detail)),
                    r,
                );
            }
        },
        Err(e) => {
            return Check::new(Status::Failed, Some(msg!("nvcc_failed", detail = e)), r);
        }
    }
    let Some(compiler) = find_host_compiler(host, Duration::from_secs(30)) else {
        let key = match host.os {
            Os::Windows => "no_host_compiler_windows",
            Os::Linux => "no_host_compiler_linux",
        };
        return Check::new(Status::Skipped, Some(Message::new(key)), r);
    };
    r.host_compiler = Some(compiler.clone());
    r.arch = o.gpu.map(|cc| cc.sm());

    let root = scratch_root(host, &std::env::temp_dir());
    let dir = root.join(format!(
        "cuda-setup-nvcc-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    let result = compile_and_run(o, &mut r, &nvcc, &compiler, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(()) => Check::new(Status::Passed, None, r),
        Err((status, m)) => Check::new(status, Some(m), r),
    }
}

fn compile_and_run(
    o: &Options,
    r: &mut NvccReport,
    nvcc: &Path,
    compiler: &HostCompiler,
    dir: &Path,
) -> Result<(), (Status, Message)> {
    let host = o.host;
    let io = |e: std::io::Error| {
        (
            Status::Failed,
            msg!(
                "nvcc_compile_failed",
                detail = format!("{}: {e}", dir.display())
            ),
        )
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    std::fs::write(dir.join("check.cu"), KERNEL_SOURCE).map_err(io)?;
    let exe = dir.join(host.exe("check"));
    let mut args: Vec<String> = vec!["-o".into(), host.exe("check"), "check.cu".into()];
    if let Some(a) = &r.arch {
        args.push(format!("-arch={a}"));
    }
    let out = match (host.os, compiler) {
        (Os::Windows, c) => {
            let vcvars = match c {
                HostCompiler::Vcvars { vcvars } => Some(vcvars.as_path()),
                HostCompiler::OnPath { .. } => None,
            };
            let bat = dir.join("build.bat");
            std::fs::write(&bat, build_script(dir, vcvars, nvcc, &args)).map_err(io)?;
            host.run(&bat, &[], o.compile_timeout)
        }
        (Os::Linux, _) => {
            // Absolute paths: the child's working folder is not `dir`.
            let out_path = exe.display().to_string();
            let src = dir.join("check.cu").display().to_string();
            let arch_flag = r.arch.as_ref().map(|s| format!("-arch={s}"));
            let mut a: Vec<&str> = vec!["-o", &out_path, &src];
            if let Some(f) = &arch_flag {
                a.push(f);
            }
            host.run(nvcc, &a, o.compile_timeout)
        }
    };
    let out = out.map_err(|e| {
        (
            Status::Failed,
            msg!("nvcc_compile_failed", detail = e.to_string()),
        )
    })?;
    if out.status != Some(0) || !exe.is_file() {
        let text = format!("{}\n{}", out.stdout, out.stderr);
        let detail = compile_error_summary(&text);
        let key = if text.contains("Unsupported gpu architecture") {
            "nvcc_unsupported_arch"
        } else if out.status == Some(90) {
            "vcvars_failed"
        } else {
            "nvcc_compile_failed"
        };
        return Err((
            Status::Failed,
            Message::new(key)
                .with("detail", detail)
                .with("sm", r.arch.clone().unwrap_or_default())
                .with(
                    "version",
                    r.version.clone().map(|v| v.to_string()).unwrap_or_default(),
                ),
        ));
    }
    r.compiled = true;
    let run = host.run(&exe, &[], Duration::from_secs(60)).map_err(|e| {
        (
            Status::Failed,
            msg!("kernel_failed", detail = e.to_string()),
        )
    })?;
    let outcome = parse_kernel_output(&run.stdout);
    r.kernel = outcome.clone();
    match outcome {
        Some(KernelOutcome::Ok { .. }) => Ok(()),
        Some(KernelOutcome::Wrong { detail }) => {
            Err((Status::Failed, msg!("kernel_wrong", detail = detail)))
        }
        Some(KernelOutcome::Error { code, name, text }) => {
            let detail = format!("{name}: {text}");
            let no_gpu = code == CUDA_ERROR_NO_DEVICE
                || (code == CUDA_ERROR_INSUFFICIENT_DRIVER && !o.driver_present);
            if no_gpu {
                Err((Status::Skipped, msg!("kernel_needs_gpu", detail = detail)))
            } else if code == CUDA_ERROR_INSUFFICIENT_DRIVER {
                Err((
                    Status::Failed,
                    msg!(
                        "kernel_driver_too_old",
                        version = r.version.clone().map(|v| v.to_string()).unwrap_or_default(),
                        detail = detail
                    ),
                ))
            } else {
                Err((Status::Failed, msg!("kernel_failed", detail = detail)))
            }
        }
        None => Err((
            Status::Failed,
            msg!(
                "kernel_failed",
                detail = format!(
                    "exit {:?}: {}",
                    run.status,
                    compile_error_summary(&format!("{}\n{}", run.stdout, run.stderr))
                )
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_lines() {
        assert_eq!(
            parse_kernel_output("noise\nCUDA_SETUP_KERNEL ok sm_86 NVIDIA GeForce RTX 3060\n"),
            Some(KernelOutcome::Ok {
                device: "sm_86 NVIDIA GeForce RTX 3060".into()
            })
        );
        assert_eq!(
            parse_kernel_output(
                "CUDA_SETUP_KERNEL error 35 cudaErrorInsufficientDriver cudaMalloc: CUDA driver version is insufficient for CUDA runtime version\n"
            ),
            Some(KernelOutcome::Error {
                code: 35,
                name: "cudaErrorInsufficientDriver".into(),
                text: "cudaMalloc: CUDA driver version is insufficient for CUDA runtime version"
                    .into()
            })
        );
        assert!(matches!(
            parse_kernel_output("CUDA_SETUP_KERNEL wrong 5 of 1048576 sm_86 X"),
            Some(KernelOutcome::Wrong { .. })
        ));
        assert_eq!(parse_kernel_output("Segmentation fault"), None);
    }

    #[test]
    fn nvcc_errors_are_summarised() {
        let out = "check.cu\nnvcc fatal   : Unsupported gpu architecture 'compute_120'\n";
        assert_eq!(
            compile_error_summary(out),
            "nvcc fatal   : Unsupported gpu architecture 'compute_120'"
        );
        let gcc = "In file included from x.h:1,\n/usr/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 12 are not supported!\n  143 | #error\n";
        assert!(compile_error_summary(gcc).contains("unsupported GNU version"));
        assert_eq!(compile_error_summary("a\nb\nc\nd\n"), "b | c | d");
    }

    #[test]
    fn visual_studio_through_vswhere() {
        let out = "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools\r\n";
        let v = vcvars_from_vswhere(out).unwrap();
        assert!(v.to_string_lossy().ends_with("vcvars64.bat"));
        assert!(v.to_string_lossy().starts_with("C:\\Program Files (x86)"));
        assert_eq!(vcvars_from_vswhere("\n"), None);
        let s = build_script(
            Path::new("C:\\ProgramData\\cuda-setup\\x"),
            Some(&v),
            Path::new("C:\\CUDA\\v12.4\\bin\\nvcc.exe"),
            &["-o".into(), "check.exe".into(), "check.cu".into()],
        );
        assert!(s.starts_with("@echo off\r\ncd /d \"C:\\ProgramData\\cuda-setup\\x\"\r\n"));
        assert!(s.contains("call \""));
        assert!(s.contains("\"C:\\CUDA\\v12.4\\bin\\nvcc.exe\" -o check.exe check.cu 2>&1"));
    }

    #[test]
    fn scratch_folder_is_ascii_on_windows() {
        let env = std::collections::BTreeMap::from([(
            "ProgramData".to_string(),
            "C:\\ProgramData".to_string(),
        )]);
        let h = Host::sandbox(Os::Windows, Path::new(""), env);
        assert_eq!(
            scratch_root(&h, Path::new("C:\\Users\\李雷\\AppData\\Local\\Temp")),
            Path::new("C:\\ProgramData").join("cuda-setup")
        );
        assert_eq!(
            scratch_root(&h, Path::new("C:\\Temp")),
            Path::new("C:\\Temp")
        );
    }
}
