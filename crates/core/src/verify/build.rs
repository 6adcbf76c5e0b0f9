//! The build check: can a developer compile *and link* against this toolkit? First the
//! link names (`devlayout::link_names`) must be there — a missing one is named; then,
//! when a host compiler exists (g++ on Linux; cl.exe on Windows, found as the nvcc check
//! finds it), nvcc builds a small program against the shared cudart, cuBLAS, cuDNN (when
//! installed) and the driver (`-lcuda`, through the stubs on Linux). Nothing runs on a GPU.
//! OWNER: #19 helper "build check" (H4a).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::nvcc::{HostCompiler, build_script, find_host_compiler, scratch_root};
use super::{Check, Status};
use crate::compat::Os;
use crate::devlayout::{LinkName, link_names};
use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::version::Version;

pub struct BuildOptions<'a> {
    pub host: &'a Host,
    pub toolkit: &'a Path,
    pub version: Option<&'a Version>,
    /// Link cuDNN too (it is installed in the toolkit).
    pub cudnn: bool,
    pub timeout: Duration,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct BuildReport {
    pub link_names: Vec<LinkName>,
    /// The missing link names' paths (relative to the toolkit), for messages.
    pub missing: Vec<String>,
    pub host_compiler: Option<HostCompiler>,
    /// The `-l` names the program was linked with: `cudart`, `cublas`, `cudnn`, `cuda`.
    pub libraries: Vec<String>,
    pub compiled: bool,
    pub linked: bool,
}

/// The program: every call reaches a library the developer links; it is built, never run
/// (`main` returns before any call unless given an argument).
pub const BUILD_SOURCE: &str = r#"// cuda-setup's build check: compiled and linked, never run.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime_api.h>
#ifdef CUDA_SETUP_CUBLAS
#include <cublas_v2.h>
#include <cublasLt.h>
#endif
#ifdef CUDA_SETUP_CUDNN
#include <cudnn.h>
#endif

int main(int argc, char** argv) {
    (void)argv;
    if (argc < 2) return 0;
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cuDriverGetVersion(&driver);
#ifdef CUDA_SETUP_CUBLAS
    cublasHandle_t h = 0;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) cublasDestroy(h);
    size_t lt = cublasLtGetVersion();
#else
    size_t lt = 0;
#endif
#ifdef CUDA_SETUP_CUDNN
    size_t dnn = cudnnGetVersion();
#else
    size_t dnn = 0;
#endif
    printf("%d %d %zu %zu\n", runtime, driver, lt, dnn);
    return 0;
}
"#;

/// The libraries linked, in order (`cublasLt` only as the toolkit has it).
fn libraries(link: &[LinkName]) -> Vec<String> {
    link.iter().map(|l| l.lib.clone()).collect()
}

/// `lib/x64/cublas.lib (cublas_dev_13.5)` on Windows, where a sub-package lays it down;
/// else the path.
pub fn describe_missing(link: &[LinkName]) -> Vec<String> {
    link.iter()
        .filter(|l| !l.present)
        .map(|l| match &l.package {
            Some(p) => format!("{} ({p})", l.rel),
            None => l.rel.clone(),
        })
        .collect()
}

/// The installer sub-packages that would lay the missing names down (Windows), once each.
pub fn missing_packages(link: &[LinkName]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in link
        .iter()
        .filter(|l| !l.present)
        .filter_map(|l| l.package.clone())
    {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The message for missing link names: each one named (with its sub-package on Windows),
/// and the fix.
pub fn missing_message(toolkit: &Path, link: &[LinkName]) -> Message {
    let packages = missing_packages(link);
    let missing = describe_missing(link).join(", ");
    if packages.is_empty() {
        msg!(
            "build_missing_link_names",
            dir = toolkit.display(),
            missing = missing
        )
    } else {
        msg!(
            "build_missing_link_names_packages",
            dir = toolkit.display(),
            missing = missing,
            packages = packages.join(" ")
        )
    }
}

/// The compiler's or the linker's first error line (`/usr/bin/ld: cannot find -lcublas:
/// No such file or directory`, `LINK : fatal error LNK1181: …`), else the last line.
pub fn first_error_line(output: &str) -> String {
    // One reading of compiler output for both checks (doctor's extension build too).
    super::doctor::extension::first_error_line(output).unwrap_or_default()
}

/// Whether the output says the linker failed (the source compiled).
pub fn is_link_error(output: &str) -> bool {
    let l = output.to_ascii_lowercase();
    l.contains("cannot find -l")
        || l.contains("undefined reference")
        || l.contains("ld returned")
        || l.contains("/ld:")
        || l.contains("lnk1")
        || l.contains("lnk2")
}

/// Why the build was skipped for want of a host compiler, with the fix for this system.
pub fn no_host_compiler(os: Os) -> Message {
    match os {
        Os::Windows => msg!("build_no_host_compiler_windows"),
        Os::Linux => msg!("build_no_host_compiler_linux"),
    }
}

/// Runs the build check. Failed (missing link names, or the compiler's first error line),
/// Skipped (no toolkit version, no host compiler — with the fix), or Passed.
pub fn check(o: &BuildOptions) -> Check<BuildReport> {
    let mut r = BuildReport::default();
    let host = o.host;
    let Some(version) = o.version else {
        return Check::new(
            Status::Skipped,
            Some(msg!("build_no_version", dir = o.toolkit.display())),
            r,
        );
    };
    r.link_names = link_names(host.os, o.toolkit, version, o.cudnn);
    // A tree built from wheels: no installer sub-package would help; repair completes it.
    if crate::wheels::assemble::is_ours(o.toolkit) {
        for l in &mut r.link_names {
            l.package = None;
        }
    }
    r.missing = r
        .link_names
        .iter()
        .filter(|l| !l.present)
        .map(|l| l.rel.clone())
        .collect();
    if !r.missing.is_empty() {
        let m = missing_message(o.toolkit, &r.link_names);
        return Check::new(Status::Failed, Some(m), r);
    }
    let nvcc = o.toolkit.join("bin").join(host.exe("nvcc"));
    if !nvcc.is_file() {
        return Check::new(
            Status::Skipped,
            Some(msg!("nvcc_not_found", path = nvcc.display())),
            r,
        );
    }
    let Some(compiler) = find_host_compiler(host, Duration::from_secs(30)) else {
        return Check::new(Status::Skipped, Some(no_host_compiler(host.os)), r);
    };
    r.host_compiler = Some(compiler.clone());
    r.libraries = libraries(&r.link_names);

    let root = scratch_root(host, &std::env::temp_dir());
    let dir = root.join(format!(
        "cuda-setup-build-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    let result = build(o, &mut r, &nvcc, &compiler, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(()) => Check::new(Status::Passed, None, r),
        Err(m) => Check::new(Status::Failed, Some(m), r),
    }
}

/// Creates the folder `dir` new (its parent must exist): 0700 on Unix, so no other
/// account can add or swap a file in it between our write and the compiler's read.
fn new_private_dir(dir: &Path) -> std::io::Result<crate::place::Dir> {
    if let Some(p) = dir.parent() {
        std::fs::create_dir_all(p)?;
    }
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.recursive(false).create(dir)?;
    crate::place::Dir::open(dir)
}

/// The arguments after the output and source: shared cudart, the libraries as a developer
/// types them (nvcc.profile supplies the folders).
pub fn link_args(os: Os, libs: &[String], cudnn: bool) -> Vec<String> {
    let mut a: Vec<String> = vec!["-cudart".into(), "shared".into()];
    // cuBLAS only where the toolkit carries it (`devlayout::link_names`).
    if libs.iter().any(|l| l == "cublas") {
        a.push("-DCUDA_SETUP_CUBLAS".into());
    }
    if cudnn {
        a.push("-DCUDA_SETUP_CUDNN".into());
    }
    for l in libs {
        a.push(match os {
            Os::Linux => format!("-l{l}"),
            Os::Windows => format!("{l}.lib"),
        });
    }
    a
}

fn build(
    o: &BuildOptions,
    r: &mut BuildReport,
    nvcc: &Path,
    compiler: &HostCompiler,
    dir: &Path,
) -> Result<(), Message> {
    let host = o.host;
    let io = |e: std::io::Error| {
        msg!(
            "build_compile_failed",
            detail = format!("{}: {e}", dir.display())
        )
    };
    // A scratch folder in a temporary directory others can write: made new (an existing
    // one, or a link planted at its name, is an error), private, and its files created new.
    let scratch = new_private_dir(dir).map_err(io)?;
    let put = |name: &str, bytes: &[u8]| {
        let mut f = scratch.create_new(name)?;
        std::io::Write::write_all(&mut f, bytes)
    };
    put("build_check.cu", BUILD_SOURCE.as_bytes()).map_err(io)?;
    let exe_name = host.exe("build_check");
    let exe = dir.join(&exe_name);
    let extra = link_args(host.os, &r.libraries, o.cudnn);
    let out = match host.os {
        Os::Windows => {
            let vcvars = match compiler {
                HostCompiler::Vcvars { vcvars } => Some(vcvars.as_path()),
                HostCompiler::OnPath { .. } => None,
            };
            let mut args: Vec<String> =
                vec!["-o".into(), exe_name.clone(), "build_check.cu".into()];
            args.extend(extra);
            let bat = dir.join("build.bat");
            put(
                "build.bat",
                build_script(dir, vcvars, nvcc, &args).as_bytes(),
            )
            .map_err(io)?;
            host.run(&bat, &[], o.timeout)
        }
        Os::Linux => {
            let out_path = exe.display().to_string();
            let src = dir.join("build_check.cu").display().to_string();
            let mut a: Vec<&str> = vec!["-o", &out_path, &src];
            a.extend(extra.iter().map(String::as_str));
            host.run(nvcc, &a, o.timeout)
        }
    };
    let out = out.map_err(|e| msg!("build_compile_failed", detail = e.to_string()))?;
    let text = format!("{}\n{}", out.stdout, out.stderr);
    if out.status == Some(0) && exe.is_file() {
        r.compiled = true;
        r.linked = true;
        return Ok(());
    }
    let detail = first_error_line(&text);
    if host.os == Os::Windows && out.status == Some(90) {
        return Err(msg!("vcvars_failed", detail = detail));
    }
    if is_link_error(&text) {
        r.compiled = true;
        Err(msg!("build_link_failed", detail = detail).with("dir", o.toolkit.display()))
    } else {
        Err(msg!("build_compile_failed", detail = detail))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linker_line_is_the_one_shown() {
        let gcc = "/usr/bin/ld: cannot find -lcublas: No such file or directory\ncollect2: error: ld returned 1 exit status\n";
        assert_eq!(
            first_error_line(gcc),
            "/usr/bin/ld: cannot find -lcublas: No such file or directory"
        );
        assert!(is_link_error(gcc));
        let msvc = "build_check.cu\r\n   Creating library build_check.lib\r\nLINK : fatal error LNK1181: cannot open input file 'cublas.lib'\r\n";
        assert_eq!(
            first_error_line(msvc),
            "LINK : fatal error LNK1181: cannot open input file 'cublas.lib'"
        );
        assert!(is_link_error(msvc));
        let cc = "build_check.cu:4:10: fatal error: cublas_v2.h: No such file or directory\n";
        assert!(first_error_line(cc).contains("cublas_v2.h"));
        assert!(!is_link_error(cc));
        assert_eq!(first_error_line("a\nb\n"), "b");
        assert_eq!(first_error_line(""), "");
    }

    #[test]
    fn without_cublas_in_the_toolkit_the_program_leaves_it_out() {
        let libs: Vec<String> = ["cudart", "cuda"].map(String::from).to_vec();
        let a = link_args(Os::Linux, &libs, false);
        assert_eq!(a, ["-cudart", "shared", "-lcudart", "-lcuda"]);
        assert!(BUILD_SOURCE.contains("#ifdef CUDA_SETUP_CUBLAS\n#include <cublas_v2.h>"));
    }

    #[test]
    fn libraries_as_a_developer_types_them() {
        let libs: Vec<String> = ["cudart", "cublas", "cuda"].map(String::from).to_vec();
        assert_eq!(
            link_args(Os::Linux, &libs, false),
            [
                "-cudart",
                "shared",
                "-DCUDA_SETUP_CUBLAS",
                "-lcudart",
                "-lcublas",
                "-lcuda"
            ]
        );
        assert_eq!(
            link_args(Os::Windows, &libs, true),
            [
                "-cudart",
                "shared",
                "-DCUDA_SETUP_CUBLAS",
                "-DCUDA_SETUP_CUDNN",
                "cudart.lib",
                "cublas.lib",
                "cuda.lib"
            ]
        );
    }

    #[test]
    fn missing_names_say_which_sub_package_lays_them_down() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("lib/x64")).unwrap();
        for f in ["cudart.lib", "cuda.lib"] {
            std::fs::write(d.path().join("lib/x64").join(f), b"!<arch>\n").unwrap();
        }
        // cuBLAS itself is installed (12.x: DLLs in bin), its import libraries not.
        std::fs::create_dir_all(d.path().join("bin")).unwrap();
        std::fs::write(d.path().join("bin/cublas64_12.dll"), b"MZ").unwrap();
        std::fs::write(d.path().join("bin/cublasLt64_12.dll"), b"MZ").unwrap();
        let host = Host::sandbox(Os::Windows, d.path(), Default::default());
        let v: Version = "12.4.1".parse().unwrap();
        let c = check(&BuildOptions {
            host: &host,
            toolkit: d.path(),
            version: Some(&v),
            cudnn: true,
            timeout: Duration::from_secs(5),
        });
        assert_eq!(c.status, Status::Failed);
        assert_eq!(
            c.detail.missing,
            [
                "lib/x64/cublas.lib",
                "lib/x64/cublasLt.lib",
                "lib/x64/cudnn.lib"
            ]
        );
        let m = c.reason.unwrap();
        assert_eq!(m.key, "build_missing_link_names_packages");
        assert_eq!(m.param("packages"), Some("cublas_dev_12.4"));
        let text = crate::i18n::render(&m, crate::i18n::Lang::En);
        assert!(
            text.contains("lib/x64/cublas.lib (cublas_dev_12.4)")
                && text.contains("lib/x64/cudnn.lib")
                && text.contains("cuda-setup repair"),
            "{text}"
        );

        // No version: nothing to look for.
        let c = check(&BuildOptions {
            host: &host,
            toolkit: d.path(),
            version: None,
            cudnn: false,
            timeout: Duration::from_secs(5),
        });
        assert_eq!(c.status, Status::Skipped);
        assert_eq!(c.reason.unwrap().key, "build_no_version");
    }
}
