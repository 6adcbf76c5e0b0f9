//! Verify (`smoke`, `doctor`) on this machine, for real: no driver and no GPU here, so the
//! loading-failure paths run against the real loader; stand-in NVIDIA libraries are real
//! shared objects written here (`support::elf`: no C compiler needed); doctor runs a real
//! Python with no torch and with stand-in torch packages. The GPU tests at the end need an NVIDIA GPU and are
//! ignored here (see docs/cli.md, "Verify on a GPU machine").
#![cfg(unix)]

use crate::support;
use crate::support::cli::json;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::platform::Host;
use cuda_setup_core::verify::doctor::{self, DoctorOptions, GpuFacts, GpuSummary, Severity};
use cuda_setup_core::verify::{self, Status, loader, nvcc};
use cuda_setup_core::version::ComputeCapability;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn script(p: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(p, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Whether this machine has a CUDA driver (then the no-driver tests do not apply).
fn driver_present() -> bool {
    loader::open_system("libcuda.so.1").is_ok()
}

/// A real shared library (written by `support::elf`, no C compiler needed) with the
/// given soname, needing `needed` (other libraries made here), exporting `functions`
/// that each return 0.
fn build_so(dir: &Path, file: &str, functions: &[&str], needed: &[&str]) {
    let f: Vec<(&str, u64)> = functions.iter().map(|n| (*n, 0)).collect();
    support::elf::write_library(dir, file, needed, &f);
}

const CUBLAS_FUNCTIONS: &[&str] = &[
    "cublasCreate_v2",
    "cublasDestroy_v2",
    "cublasGetVersion_v2",
    "cublasSgemm_v2",
    "cublasGemmEx",
];

/// A toolkit folder (version.json, lib64) with stand-in cuBLAS libraries.
fn toolkit_with_cublas(root: &Path, keep_lt: bool) -> PathBuf {
    let tk = root.join("cuda-12.4");
    write(
        &tk.join("version.json"),
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#,
    );
    let lib = tk.join("lib64");
    build_so(&lib, "libcublasLt.so.12", &["cublasLtCreate"], &[]);
    build_so(
        &lib,
        "libcublas.so.12",
        CUBLAS_FUNCTIONS,
        &["libcublasLt.so.12"],
    );
    if !keep_lt {
        std::fs::remove_file(lib.join("libcublasLt.so.12")).unwrap();
    }
    tk
}

#[test]
fn smoke_without_a_driver_is_skipped_with_exit_4() {
    if driver_present() {
        eprintln!("this machine has a CUDA driver: the no-driver path does not apply");
        return;
    }
    let out = cli(&["smoke", "--json"], &[]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = json(&out);
    assert_eq!(j["status"], "skipped");
    assert_eq!(j["exit_code"], 4);
    assert_eq!(j["driver"]["loaded"], false);
    assert_eq!(j["driver"]["library"], "libcuda.so.1");
    assert_eq!(j["reason"]["key"], "smoke_no_driver");
    let text = j["reason"]["text"].as_str().unwrap();
    assert!(
        text.contains("libcuda.so.1") && text.contains("Install the NVIDIA driver"),
        "{text}"
    );
    assert_eq!(j["checks"]["gemm"]["status"], "skipped");
    assert_eq!(j["checks"]["bandwidth"]["status"], "skipped");
    assert_eq!(j["device"], Value::Null);

    // In words, and in Chinese.
    let out = cli(&["smoke", "--lang", "zh"], &[]);
    assert_eq!(out.status.code(), Some(4));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("没有 NVIDIA 驱动") && s.contains("exit 4"),
        "{s}"
    );
}

#[test]
fn smoke_names_the_library_cublas_cannot_find() {
    if driver_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), false);
    let out = cli(
        &[
            "smoke",
            "--json",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
        ],
        &[],
    );
    // A broken toolkit is a failure even with no driver to run it on.
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let j = json(&out);
    assert_eq!(j["status"], "failed");
    assert_eq!(j["toolkit"]["chosen_by"], "cuda_dir");
    assert_eq!(j["toolkit"]["version"], "12.4.1");
    let g = &j["checks"]["gemm"];
    assert_eq!(g["status"], "failed");
    assert_eq!(g["reason"]["key"], "library_missing_dependency");
    let text = g["reason"]["text"].as_str().unwrap();
    assert!(
        text.contains("libcublasLt.so.12 (needed by libcublas.so.12)"),
        "{text}"
    );
    assert_eq!(j["reason"]["key"], "library_missing_dependency");
}

#[test]
fn cublas_loads_from_the_toolkit_folder_alone() {
    // The toolkit folder is on no search path: cuBLASLt is found because it is loaded from
    // there first.
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), true);
    let host = Host::real();
    let dirs = verify::gemm::library_dirs(Os::Linux, &tk, &tk.join("lib64"));
    let c = verify::gemm::load_cublas(&host, &dirs).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(c.major, 12);
    assert_eq!(c.library, tk.join("lib64/libcublas.so.12"));
    if driver_present() {
        return;
    }
    // With no driver the GEMM is skipped (exit 4), not failed: the toolkit itself is fine.
    let out = cli(
        &[
            "smoke",
            "--json",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
            "--no-build",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        json(&out)["checks"]["gemm"]["reason"]["key"],
        "smoke_no_driver"
    );
}

const CUDNN_FUNCTIONS: &[&str] = &[
    "cudnnGetErrorString",
    "cudnnCreate",
    "cudnnDestroy",
    "cudnnCreateTensorDescriptor",
    "cudnnSetTensor4dDescriptor",
    "cudnnDestroyTensorDescriptor",
    "cudnnCreateFilterDescriptor",
    "cudnnSetFilter4dDescriptor",
    "cudnnDestroyFilterDescriptor",
    "cudnnCreateConvolutionDescriptor",
    "cudnnSetConvolution2dDescriptor",
    "cudnnDestroyConvolutionDescriptor",
    "cudnnGetConvolution2dForwardOutputDim",
    "cudnnConvolutionForward",
];

const CUDNN9_COMPANIONS: &[&str] = &[
    "libcudnn_graph.so.9",
    "libcudnn_ops.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn_adv.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_heuristic.so.9",
];

/// cuDNN 9.1.0 in a toolkit's lib64, built for CUDA `cudart` (12040 = 12.4), with the
/// companions listed.
fn cudnn_into(tk: &Path, cudart: u32, companions: &[&str]) {
    let lib = tk.join("lib64");
    let mut functions: Vec<(&str, u64)> = CUDNN_FUNCTIONS.iter().map(|n| (*n, 0)).collect();
    functions.push(("cudnnGetVersion", 90100));
    functions.push(("cudnnGetCudartVersion", u64::from(cudart)));
    support::elf::write_library(&lib, "libcudnn.so.9", &[], &functions);
    for c in companions {
        build_so(&lib, c, &["cudnnCompanion"], &[]);
    }
    write(
        &tk.join("include/cudnn_version.h"),
        "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n",
    );
}

/// `smoke --json` of the toolkit, its cuDNN in view (the build check is another test's).
fn smoke_json(tk: &Path) -> Value {
    let out = cli(
        &[
            "smoke",
            "--json",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
            "--no-build",
        ],
        &[],
    );
    json(&out)
}

#[test]
fn cudnn_missing_sub_libraries_are_named() {
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), true);
    // Only the shim and two companions: the classic half-copied cuDNN.
    cudnn_into(&tk, 12040, &["libcudnn_graph.so.9", "libcudnn_adv.so.9"]);
    let j = smoke_json(&tk);
    let c = &j["checks"]["cudnn"];
    assert_eq!(c["status"], "failed", "{c:#}");
    assert_eq!(c["reason"]["key"], "cudnn_missing_libraries");
    let missing: Vec<&str> = c["missing_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(missing.contains(&"libcudnn_ops.so.9"), "{missing:?}");
    assert!(missing.contains(&"libcudnn_cnn.so.9"));
    assert!(!missing.contains(&"libcudnn_graph.so.9"));
    assert!(
        c["reason"]["text"]
            .as_str()
            .unwrap()
            .contains("libcudnn_ops.so.9")
    );
    assert_eq!(j["status"], "failed");
    assert_eq!(j["exit_code"], 5);
}

#[test]
fn cudnn_sub_library_with_a_missing_dependency() {
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), true);
    let others: Vec<&str> = CUDNN9_COMPANIONS
        .iter()
        .copied()
        .filter(|c| *c != "libcudnn_cnn.so.9")
        .collect();
    cudnn_into(&tk, 12040, &others);
    // libcudnn_cnn.so.9 needs a library that is not there.
    let lib = tk.join("lib64");
    build_so(&lib, "libnvgone.so.1", &["gone"], &[]);
    build_so(
        &lib,
        "libcudnn_cnn.so.9",
        &["cudnnCompanion"],
        &["libnvgone.so.1"],
    );
    std::fs::remove_file(lib.join("libnvgone.so.1")).unwrap();
    let j = smoke_json(&tk);
    let c = &j["checks"]["cudnn"];
    assert_eq!(c["status"], "failed", "{c:#}");
    assert_eq!(c["reason"]["key"], "library_missing_dependency");
    assert_eq!(c["missing"][0]["name"], "libnvgone.so.1");
    assert_eq!(c["missing"][0]["needed_by"], "libcudnn_cnn.so.9");
}

#[test]
fn cudnn_loads_reads_its_version_and_checks_the_cuda_major() {
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), true);
    cudnn_into(&tk, 12040, CUDNN9_COMPANIONS);
    let j = smoke_json(&tk);
    let c = &j["checks"]["cudnn"];
    assert_eq!(c["version"], "9.1.0", "{c:#}");
    assert_eq!(c["header_version"], "9.1.0");
    assert_eq!(c["built_for_cuda"], "12.4");
    if !driver_present() {
        // Loaded and read; the convolution needs a GPU.
        assert_eq!(c["status"], "skipped");
        assert_eq!(c["reason"]["key"], "cudnn_loads_conv_skipped");
        assert!(
            c["reason"]["text"]
                .as_str()
                .unwrap()
                .contains("cuDNN 9.1.0 loads")
        );
        // Why there is no GPU is the report's reason.
        assert_eq!(j["reason"]["key"], "smoke_no_driver");
    }

    // The cuda11 build of cuDNN in a CUDA 12 toolkit.
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), true);
    cudnn_into(&tk, 11080, CUDNN9_COMPANIONS);
    let j = smoke_json(&tk);
    let c = &j["checks"]["cudnn"];
    assert_eq!(c["status"], "failed");
    assert_eq!(c["reason"]["key"], "cudnn_wrong_cuda_major");
    assert!(c["reason"]["text"].as_str().unwrap().contains("CUDA 11.x"));
}

#[test]
fn a_windows_dll_names_the_dll_it_cannot_find() {
    // A real PE file (see tests/fixtures/verify/README.md) standing in for cudnn64_9.dll.
    let bytes = std::fs::read(fixture("verify/cudnn64_9.dll")).unwrap();
    let imports = loader::pe_imports(&bytes).unwrap();
    assert_eq!(imports, ["cudnn_ops64_9.dll", "KERNEL32.dll", "msvcrt.dll"]);

    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("CUDA/v12.4/bin");
    let system32 = d.path().join("Windows/System32");
    std::fs::create_dir_all(&bin).unwrap();
    // Windows compares names ignoring case.
    write(&system32.join("kernel32.dll"), "");
    write(&system32.join("MSVCRT.DLL"), "");
    let dll = bin.join("cudnn64_9.dll");
    std::fs::write(&dll, &bytes).unwrap();
    let search = vec![
        system32.clone(),
        d.path().join("Windows/System"),
        d.path().join("Windows"),
    ];
    let missing = loader::missing_dlls(&dll, &search);
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0].name, "cudnn_ops64_9.dll");
    assert_eq!(missing[0].needed_by, "cudnn64_9.dll");
    // In a folder on PATH it is found.
    let other = d.path().join("cudnn/bin");
    write(
        &other.join("cudnn_ops64_9.dll"),
        "not a PE file, but present",
    );
    let mut with_path = search.clone();
    with_path.push(other);
    assert!(loader::missing_dlls(&dll, &with_path).is_empty());
    // Next to the DLL as well.
    write(&bin.join("CUDNN_OPS64_9.DLL"), "");
    assert!(loader::missing_dlls(&dll, &search).is_empty());
}

/// A host whose PATH holds `dirs` only.
fn host_with_path(dirs: &[&Path]) -> Host {
    let path = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    Host::sandbox(
        Os::Linux,
        Path::new("/"),
        BTreeMap::from([("PATH".to_string(), path)]),
    )
}

/// A stand-in nvcc: prints a real `nvcc --version` transcript; "compiles" by writing, at
/// the `-o` path, a program that prints what `kernel_line` says (a real cudart program
/// with no driver prints error 35).
fn fake_nvcc(tk: &Path, compile: &str) {
    let version = fixture("detect/nvcc-version-12.4.txt");
    script(
        &tk.join("bin/nvcc"),
        &format!(
            // Shell built-ins and absolute paths only: tests run it with a bare PATH.
            "if [ \"$1\" = --version ]; then /bin/cat '{}'; exit 0; fi\n\
             echo \"$@\" > \"${{0%/*}}/last-args\"\n{compile}",
            version.display()
        ),
    );
}

const WRITE_PROGRAM: &str = r#"out=""; while [ $# -gt 0 ]; do if [ "$1" = -o ]; then out="$2"; fi; shift; done
printf '#!/bin/sh\necho "CUDA_SETUP_KERNEL error 35 cudaErrorInsufficientDriver cudaMalloc: CUDA driver version is insufficient for CUDA runtime version"\nexit 1\n' > "$out"; /bin/chmod +x "$out""#;

#[test]
fn nvcc_check_compiles_runs_and_classifies() {
    let d = tempfile::tempdir().unwrap();
    let tk = d.path().join("cuda");
    fake_nvcc(&tk, WRITE_PROGRAM);
    let gxx_dir = d.path().join("gcc-bin");
    script(&gxx_dir.join("g++"), "exit 0");
    let host = host_with_path(&[&gxx_dir, Path::new("/bin"), Path::new("/usr/bin")]);
    let opts = |gpu: Option<ComputeCapability>, driver_present: bool| nvcc::Options {
        host: &host,
        toolkit: Some(&tk),
        gpu,
        driver_present,
        compile_timeout: Duration::from_secs(30),
    };

    // No driver: compiled, and the run says a driver is needed: skipped.
    let c = nvcc::check(&opts(None, false));
    assert_eq!(c.status, Status::Skipped, "{c:#?}");
    assert_eq!(c.reason.as_ref().unwrap().key, "kernel_needs_gpu");
    assert!(c.detail.compiled);
    assert_eq!(c.detail.version.as_ref().unwrap().to_string(), "12.4.131");
    // A driver that loaded but is older than the toolkit: failed.
    let c = nvcc::check(&opts(Some(ComputeCapability::new(8, 6)), true));
    assert_eq!(c.status, Status::Failed);
    assert_eq!(c.reason.as_ref().unwrap().key, "kernel_driver_too_old");
    // The GPU's own architecture is compiled for.
    let args = std::fs::read_to_string(tk.join("bin/last-args")).unwrap();
    assert!(args.contains("-arch=sm_86"), "{args}");
    assert!(args.contains("check.cu"), "{args}");

    // A GPU newer than the toolkit: nvcc's own words, and what to do.
    fake_nvcc(
        &tk,
        "echo \"nvcc fatal   : Unsupported gpu architecture 'compute_120'\" >&2; exit 1",
    );
    let c = nvcc::check(&opts(Some(ComputeCapability::new(12, 0)), true));
    assert_eq!(c.status, Status::Failed);
    let m = c.reason.unwrap();
    assert_eq!(m.key, "nvcc_unsupported_arch");
    assert!(m.param("detail").unwrap().contains("compute_120"));

    // No host compiler: says what is missing.
    let bare = host_with_path(&[d.path()]);
    let c = nvcc::check(&nvcc::Options {
        host: &bare,
        ..opts(None, false)
    });
    assert_eq!(c.status, Status::Skipped);
    assert_eq!(c.reason.unwrap().key, "no_host_compiler_linux");
    assert!(!c.detail.compiled);

    // No nvcc in the toolkit.
    let c = nvcc::check(&nvcc::Options {
        toolkit: Some(d.path()),
        ..opts(None, false)
    });
    assert_eq!(c.reason.unwrap().key, "nvcc_not_found");
}

/// A toolkit laid out as NVIDIA's Linux installer lays it out for a developer: the
/// versioned libraries, their link names, the driver stub, headers, and a stand-in nvcc
/// that links like a real one (`support::standin::nvcc_script`).
fn linux_dev_toolkit(root: &Path) -> PathBuf {
    let tk = root.join("cuda-12.4");
    write(
        &tk.join("version.json"),
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#,
    );
    let lib = tk.join("lib64");
    for (file, link) in [
        ("libcudart.so.12", "libcudart.so"),
        ("libcublas.so.12", "libcublas.so"),
        ("libcublasLt.so.12", "libcublasLt.so"),
    ] {
        build_so(&lib, file, &["f"], &[]);
        std::os::unix::fs::symlink(file, lib.join(link)).unwrap();
    }
    build_so(
        &lib.join("stubs"),
        "libcuda.so",
        &["cuDriverGetVersion"],
        &[],
    );
    for h in ["cuda.h", "cuda_runtime_api.h", "cublas_v2.h", "cublasLt.h"] {
        write(&tk.join("include").join(h), "/* header */\n");
    }
    let version = std::fs::read_to_string(fixture("detect/nvcc-version-12.4.txt")).unwrap();
    script(
        &tk.join("bin/nvcc"),
        support::standin::nvcc_script(&version).trim_start_matches("#!/bin/sh\n"),
    );
    tk
}

fn build_opts<'a>(
    host: &'a Host,
    tk: &'a Path,
    v: &'a cuda_setup_core::version::Version,
) -> verify::build::BuildOptions<'a> {
    verify::build::BuildOptions {
        host,
        toolkit: tk,
        version: Some(v),
        cudnn: false,
        timeout: Duration::from_secs(30),
    }
}

/// A stand-in g++ (nvcc only needs it to exist here: the stand-in nvcc links).
fn gxx(dir: &Path) -> PathBuf {
    let d = dir.join("gcc-bin");
    script(&d.join("g++"), "exit 0");
    d
}

#[test]
fn build_check_compiles_and_links_against_the_toolkit() {
    let d = tempfile::tempdir().unwrap();
    let tk = linux_dev_toolkit(d.path());
    let gxx_dir = gxx(d.path());
    let host = host_with_path(&[&gxx_dir, Path::new("/bin"), Path::new("/usr/bin")]);
    let v = "12.4.1".parse().unwrap();
    let c = verify::build::check(&build_opts(&host, &tk, &v));
    assert_eq!(c.status, Status::Passed, "{c:#?}");
    assert!(c.detail.compiled && c.detail.linked);
    assert!(c.detail.missing.is_empty());
    assert_eq!(c.detail.libraries, ["cudart", "cublas", "cublasLt", "cuda"]);
    // Linked as a developer types it: shared cudart, plain -l flags.
    let args = std::fs::read_to_string(tk.join("bin/last-args")).unwrap();
    assert!(
        args.contains("-cudart shared")
            && args.contains("-lcublas")
            && args.contains("-lcuda")
            && args.contains("build_check.cu"),
        "{args}"
    );
    // The scratch folder is gone.
    let src = args
        .split_whitespace()
        .find(|a| a.ends_with("build_check.cu"))
        .unwrap();
    assert!(!Path::new(src).parent().unwrap().exists(), "{src}");

    // cuDNN in the toolkit: linked too, and its link name is needed.
    let c = verify::build::check(&verify::build::BuildOptions {
        cudnn: true,
        ..build_opts(&host, &tk, &v)
    });
    assert_eq!(c.status, Status::Failed);
    assert_eq!(c.detail.missing, ["lib64/libcudnn.so"]);
    build_so(
        &tk.join("lib64"),
        "libcudnn.so.9",
        &["cudnnGetVersion"],
        &[],
    );
    std::os::unix::fs::symlink("libcudnn.so.9", tk.join("lib64/libcudnn.so")).unwrap();
    let c = verify::build::check(&verify::build::BuildOptions {
        cudnn: true,
        ..build_opts(&host, &tk, &v)
    });
    assert_eq!(c.status, Status::Passed, "{c:#?}");
    let args = std::fs::read_to_string(tk.join("bin/last-args")).unwrap();
    assert!(
        args.contains("-lcudnn") && args.contains("-DCUDA_SETUP_CUDNN"),
        "{args}"
    );

    // No host compiler: skipped, with how to get one.
    let bare = host_with_path(&[d.path()]);
    let c = verify::build::check(&build_opts(&bare, &tk, &v));
    assert_eq!(c.status, Status::Skipped);
    let m = c.reason.unwrap();
    assert_eq!(m.key, "build_no_host_compiler_linux");
    let text = cuda_setup_core::i18n::render(&m, cuda_setup_core::i18n::Lang::En);
    assert!(
        text.contains("g++") && text.contains("apt install"),
        "{text}"
    );
    assert!(!c.detail.compiled);
}

#[test]
fn build_check_fails_with_the_linkers_first_error_line() {
    let d = tempfile::tempdir().unwrap();
    let tk = linux_dev_toolkit(d.path());
    let gxx_dir = gxx(d.path());
    let host = host_with_path(&[&gxx_dir, Path::new("/bin"), Path::new("/usr/bin")]);
    let v = "12.4.1".parse().unwrap();
    // The link names are there, but the linker is not given the folder that holds them
    // (as with a tree whose nvcc.profile lacks lib64/stubs): a stand-in nvcc that looks
    // only in lib64.
    let nvcc = std::fs::read_to_string(tk.join("bin/nvcc")).unwrap();
    std::fs::write(
        tk.join("bin/nvcc"),
        nvcc.replace(" && [ ! -e \"$top/lib64/stubs/lib$l.so\" ]", ""),
    )
    .unwrap();
    let c = verify::build::check(&build_opts(&host, &tk, &v));
    assert_eq!(c.status, Status::Failed, "{c:#?}");
    let m = c.reason.unwrap();
    assert_eq!(m.key, "build_link_failed");
    assert_eq!(
        m.param("detail"),
        Some("/usr/bin/ld: cannot find -lcuda: No such file or directory")
    );
    assert!(c.detail.compiled && !c.detail.linked);

    // A compile error: the compiler's own line.
    script(
        &tk.join("bin/nvcc"),
        "echo 'build_check.cu:5:10: fatal error: cublas_v2.h: No such file or directory' >&2; exit 1",
    );
    let c = verify::build::check(&build_opts(&host, &tk, &v));
    assert_eq!(c.status, Status::Failed);
    let m = c.reason.unwrap();
    assert_eq!(m.key, "build_compile_failed");
    assert!(m.param("detail").unwrap().contains("cublas_v2.h"));
    assert!(!c.detail.compiled);

    // A compiler that hangs is stopped.
    script(&tk.join("bin/nvcc"), "exec /bin/sleep 30");
    let start = std::time::Instant::now();
    let c = verify::build::check(&verify::build::BuildOptions {
        timeout: Duration::from_secs(1),
        ..build_opts(&host, &tk, &v)
    });
    assert_eq!(c.status, Status::Failed);
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[test]
fn smoke_build_names_the_missing_link_names() {
    // Linux: what the wheels method left before #19 — versioned names only, no stub.
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), true);
    let gxx_dir = gxx(d.path());
    let path = format!("{}:/usr/bin:/bin", gxx_dir.display());
    let out = cli(
        &[
            "smoke",
            "--json",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
        ],
        &[("PATH", &path)],
    );
    // A toolkit a developer cannot link against fails, even with no driver or GPU.
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let j = json(&out);
    let b = &j["checks"]["build"];
    assert_eq!(b["status"], "failed", "{b:#}");
    assert_eq!(b["reason"]["key"], "build_missing_link_names");
    let missing: Vec<&str> = b["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        missing,
        [
            "lib64/libcudart.so",
            "lib64/libcublas.so",
            "lib64/libcublasLt.so",
            "lib64/stubs/libcuda.so"
        ]
    );
    let text = b["reason"]["text"].as_str().unwrap();
    assert!(
        text.contains("lib64/libcublas.so, ")
            && text.contains("lib64/stubs/libcuda.so")
            && text.contains("cuda-setup repair"),
        "{text}"
    );
    if !driver_present() {
        assert_eq!(j["reason"]["key"], "build_missing_link_names");
    }
    assert_eq!(b["link_names"][1]["lib"], "cublas");
    assert_eq!(b["link_names"][1]["present"], false);

    // In words, in both languages.
    let out = cli(
        &["smoke", "--cuda-dir", tk.to_str().unwrap(), "--no-nvcc"],
        &[("PATH", &path)],
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("[FAILED] Build and link a program"), "{s}");
    let out = cli(
        &[
            "smoke",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
            "--lang",
            "zh",
        ],
        &[("PATH", &path)],
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("编译并链接程序") && s.contains("lib64/stubs/libcuda.so"),
        "{s}"
    );

    // Windows: the missing import library, the sub-package that lays it down, the fix.
    let w = d.path().join("v12.4");
    for f in ["cudart.lib", "cuda.lib"] {
        write(&w.join("lib/x64").join(f), "!<arch>\n");
    }
    // cuBLAS itself is installed (12.x keeps its DLLs in bin), its import libraries not.
    for f in ["cublas64_12.dll", "cublasLt64_12.dll"] {
        write(&w.join("bin").join(f), "MZ");
    }
    let host = Host::sandbox(Os::Windows, d.path(), BTreeMap::new());
    let v = "12.4.1".parse().unwrap();
    let c = verify::build::check(&build_opts(&host, &w, &v));
    assert_eq!(c.status, Status::Failed);
    assert_eq!(
        c.detail.missing,
        ["lib/x64/cublas.lib", "lib/x64/cublasLt.lib"]
    );
    let m = c.reason.unwrap();
    assert_eq!(m.key, "build_missing_link_names_packages");
    let text = cuda_setup_core::i18n::render(&m, cuda_setup_core::i18n::Lang::En);
    assert!(
        text.contains("lib/x64/cublas.lib (cublas_dev_12.4)")
            && text.contains("sub-packages cublas_dev_12.4")
            && text.contains("cuda-setup repair"),
        "{text}"
    );
    // Complete, but no Visual C++ here: skipped, with the Build Tools to install.
    for f in ["cublas.lib", "cublasLt.lib"] {
        write(&w.join("lib/x64").join(f), "!<arch>\n");
    }
    write(&w.join("bin/nvcc.exe"), "");
    let c = verify::build::check(&build_opts(&host, &w, &v));
    assert_eq!(c.status, Status::Skipped, "{c:#?}");
    let m = c.reason.unwrap();
    assert_eq!(m.key, "build_no_host_compiler_windows");
    let text = cuda_setup_core::i18n::render(&m, cuda_setup_core::i18n::Lang::En);
    assert!(text.contains("Desktop development with C++"), "{text}");
}

/// `smoke` ends with the verdict the wizard shows (#31), in words and as `verdict` in
/// JSON: a toolkit programs cannot be linked against is what repair's audit finds, so the
/// next step is `cuda-setup repair --fix`; a library that will not load is not, so the
/// user is told what to do instead.
#[test]
fn smoke_prints_the_verdict_and_its_json_carries_it() {
    if driver_present() {
        eprintln!("this machine has a CUDA driver: the GPU checks decide first");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), true);
    let gxx_dir = gxx(d.path());
    let path = format!("{}:/usr/bin:/bin", gxx_dir.display());
    let args = ["smoke", "--cuda-dir", tk.to_str().unwrap(), "--no-nvcc"];
    let out = cli(&[&args[..], &["--json"]].concat(), &[("PATH", &path)]);
    let j = json(&out);
    assert_eq!(j["outcome"], "cannot_link");
    let v = &j["verdict"];
    assert_eq!(v["state"], "not_yet", "{v:#}");
    assert_eq!(v["cause"], "cannot_link");
    assert_eq!(v["layer"], "toolkit");
    assert_eq!(v["fix"]["kind"], "repair");
    let headline = "Not usable yet: programs cannot be built with the CUDA toolkit: files a build links against are missing.";
    assert_eq!(v["headline"], headline);
    assert!(
        v["next"]
            .as_str()
            .unwrap()
            .contains("cuda-setup repair --fix"),
        "{v:#}"
    );
    // The same sentence in words, last.
    let out = cli(&args, &[("PATH", &path)]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains(&format!("\n{headline}\n")), "{s}");
    let out = cli(&[&args[..], &["--lang", "zh"]].concat(), &[("PATH", &path)]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("还不能用：无法用 CUDA 工具包编译程序") && s.contains("cuda-setup repair --fix"),
        "{s}"
    );

    // cuBLAS that will not load: repair's audit does not look there; said honestly.
    let d = tempfile::tempdir().unwrap();
    let tk = toolkit_with_cublas(d.path(), false);
    let out = cli(
        &[
            "smoke",
            "--json",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
        ],
        &[],
    );
    let j = json(&out);
    assert_eq!(j["outcome"], "library_missing");
    let v = &j["verdict"];
    assert_eq!(v["cause"], "toolkit_incomplete", "{v:#}");
    assert_eq!(v["fix"]["kind"], "manual");
    assert!(
        v["next"]
            .as_str()
            .unwrap()
            .starts_with("This cannot be fixed automatically."),
        "{v:#}"
    );
}

#[test]
fn smoke_build_passes_on_a_complete_toolkit_with_no_gpu() {
    let d = tempfile::tempdir().unwrap();
    let tk = linux_dev_toolkit(d.path());
    let gxx_dir = gxx(d.path());
    let path = format!("{}:/usr/bin:/bin", gxx_dir.display());
    let out = cli(
        &[
            "smoke",
            "--json",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
        ],
        &[("PATH", &path)],
    );
    let j = json(&out);
    let b = &j["checks"]["build"];
    assert_eq!(b["status"], "passed", "{b:#}");
    assert_eq!(b["linked"], true);
    assert_eq!(b["host_compiler"]["kind"], "on_path");
    let out = cli(
        &["smoke", "--cuda-dir", tk.to_str().unwrap(), "--no-nvcc"],
        &[("PATH", &path)],
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("[passed] Build and link a program")
            && s.contains("compiled and linked with: cudart, cublas, cublasLt, cuda"),
        "{s}"
    );
    // Turned off: skipped, saying how.
    let out = cli(
        &[
            "smoke",
            "--json",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--no-nvcc",
            "--no-build",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(
        json(&out)["checks"]["build"]["reason"]["key"],
        "build_not_requested"
    );
}

fn rtx3060() -> GpuFacts {
    GpuFacts {
        driver: Some("551.78".parse().unwrap()),
        driver_cuda: Some("12.4".parse().unwrap()),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: Some(ComputeCapability::new(8, 6)),
        }],
    }
}

/// Runs doctor on a real interpreter (a venv: nothing of this machine's site-packages)
/// with `pythonpath` first on its module path.
fn doctor_with(pythonpath: &Path, gpu: &GpuFacts, timeout: Duration) -> doctor::DoctorReport {
    let py = support::python::real_sandboxed();
    let host = Host::sandbox(
        Os::Linux,
        Path::new("/"),
        BTreeMap::from([
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            ("PYTHONPATH".to_string(), pythonpath.display().to_string()),
            ("PYTHONNOUSERSITE".to_string(), "1".to_string()),
            // No __pycache__ next to the stand-in packages in the source tree.
            ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
        ]),
    );
    let tables = Tables::embedded().unwrap();
    let opts = DoctorOptions {
        python: Some(py),
        mirror: Some("aliyun".parse().unwrap()),
        timeout,
        size: 16,
    };
    doctor::examine(&host, &tables, &opts, gpu)
}

fn fake_torch(dir: &Path, body: &str) {
    write(&dir.join("torch/__init__.py"), body);
}

fn key<'a>(r: &'a doctor::DoctorReport, k: &str) -> &'a doctor::Finding {
    r.findings
        .iter()
        .find(|f| f.message.key == k)
        .unwrap_or_else(|| panic!("no {k}: {:#?}", r.findings))
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_doctor_without_torch() {
    let d = tempfile::tempdir().unwrap();
    // The venv has no torch, whatever this machine has installed.
    let r = doctor_with(d.path(), &rtx3060(), Duration::from_secs(60));
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.exit_code, 5);
    assert_eq!(r.torch_error.as_ref().unwrap().kind, "not_installed");
    let f = key(&r, "doctor_torch_missing");
    let fix = f.fix.as_ref().unwrap();
    assert_eq!(fix.commands.len(), 1);
    let c = &fix.commands[0];
    assert!(c.contains(" -m pip install torch=="), "{c}");
    assert!(
        c.contains("--index-url https://download.pytorch.org/whl/cu12"),
        "{c}"
    );
    assert!(
        c.ends_with("--extra-index-url https://mirrors.aliyun.com/pypi/simple/"),
        "{c}"
    );
    // The recommendation is for this interpreter's Python version.
    assert!(r.recommended.is_some());
    assert!(r.python_version.as_deref().unwrap().starts_with("3."));
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_doctor_on_stand_in_torch_builds() {
    let d = tempfile::tempdir().unwrap();

    // The CPU build pip gives on Windows.
    let cpu = d.path().join("cpu");
    fake_torch(
        &cpu,
        "__version__ = '2.5.1+cpu'\nclass version:\n    cuda = None\nclass cuda:\n    @staticmethod\n    def is_available(): return False\n",
    );
    let r = doctor_with(&cpu, &rtx3060(), Duration::from_secs(60));
    let f = key(&r, "doctor_torch_cpu_build");
    assert_eq!(f.severity, Severity::Problem);
    let cmds = &f.fix.as_ref().unwrap().commands;
    assert!(cmds[0].ends_with("-m pip uninstall -y torch torchvision torchaudio"));
    assert!(cmds[1].contains("/whl/cu12"));
    assert_eq!(r.exit_code, 5);

    // A CUDA build on a machine whose driver is missing: torch's own reason is kept.
    let nodrv = d.path().join("nodriver");
    fake_torch(
        &nodrv,
        "__version__ = '2.5.1+cu124'\nclass version:\n    cuda = '12.4'\n\
         class cuda:\n    @staticmethod\n    def is_available(): return False\n    \
         @staticmethod\n    def init(): raise RuntimeError('Found no NVIDIA driver on your system.')\n",
    );
    let gpu_no_driver = GpuFacts {
        driver: None,
        driver_cuda: None,
        gpus: rtx3060().gpus,
    };
    let r = doctor_with(&nodrv, &gpu_no_driver, Duration::from_secs(60));
    assert!(
        r.torch
            .as_ref()
            .unwrap()
            .cuda_error
            .as_deref()
            .unwrap()
            .contains("Found no NVIDIA driver")
    );
    assert_eq!(
        key(&r, "doctor_no_driver")
            .fix
            .as_ref()
            .unwrap()
            .message
            .key,
        "fix_install_driver"
    );
    assert_eq!(r.exit_code, 5);

    // A torch whose import breaks (a DLL missing on Windows looks like this).
    let broken = d.path().join("broken");
    fake_torch(
        &broken,
        "raise OSError('[WinError 126] The specified module could not be found. Error loading \"c10.dll\" or one of its dependencies.')\n",
    );
    let r = doctor_with(&broken, &rtx3060(), Duration::from_secs(60));
    assert_eq!(r.torch_error.as_ref().unwrap().kind, "import_failed");
    assert!(key(&r, "doctor_torch_import_failed").fix.is_some());

    // A torch whose import hangs is stopped at the timeout.
    let hang = d.path().join("hang");
    fake_torch(&hang, "import time\ntime.sleep(60)\n");
    let t = std::time::Instant::now();
    let r = doctor_with(&hang, &rtx3060(), Duration::from_secs(2));
    assert!(t.elapsed() < Duration::from_secs(20));
    assert_eq!(r.status, Status::Failed);
    assert!(
        r.probe_error.as_deref().unwrap().contains("did not finish"),
        "{r:?}"
    );
    key(&r, "doctor_python_failed");
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_doctor_runs_the_whole_gpu_check_on_a_stand_in_gpu_torch() {
    // A plain-Python torch that "has" a GPU: the probe's whole check runs and is read back.
    let r = doctor_with(
        &fixture("verify/fake_torch_gpu"),
        &rtx3060(),
        Duration::from_secs(60),
    );
    assert_eq!(r.status, Status::Passed, "{:#?}", r.findings);
    assert_eq!(r.exit_code, 0);
    let check = r.check.as_ref().unwrap();
    assert!(check.ok && check.tensor_ok);
    assert_eq!(check.moved_to.as_deref(), Some("cuda:0"));
    assert_eq!(check.size, 16);
    assert!(check.speedup.unwrap() > 1.0);
    key(&r, "doctor_torch_cuda_ok");
    key(&r, "doctor_arch_ok");
    assert_eq!(
        key(&r, "doctor_cudnn_ok").message.param("cudnn"),
        Some("9.1.0")
    );
    key(&r, "doctor_gpu_check_ok");
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_doctor_cli_json() {
    let d = tempfile::tempdir().unwrap();
    let py = support::python::real_sandboxed();
    let out = cli(
        &[
            "doctor",
            "--json",
            "--python",
            py.to_str().unwrap(),
            "--pypi-mirror",
            "ustc",
        ],
        &[
            ("PYTHONPATH", d.path().to_str().unwrap()),
            ("PYTHONNOUSERSITE", "1"),
        ],
    );
    let j = json(&out);
    assert!(matches!(out.status.code(), Some(4) | Some(5)), "{j:#}");
    assert_eq!(
        j["pypi_mirror"]["url"],
        "https://mirrors.ustc.edu.cn/pypi/simple"
    );
    let f = &j["findings"];
    assert!(f.as_array().unwrap().iter().all(|x| x["text"].is_string()));
    assert_eq!(f[0]["key"], "doctor_python");
}

#[test]
fn doctor_and_smoke_usage_errors() {
    let out = cli(&["doctor", "--python", "/no/such/python"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hint:"));
    let out = cli(&["doctor", "--pypi-mirror", "douban"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = cli(&["smoke", "--cuda-dir", "/no/such/dir"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = cli(&["smoke", "--sizes", "8,1024"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// Every message key the verify code uses has English and Chinese text.
#[test]
fn every_verify_message_has_both_languages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("crates/core/src/verify");
    let mut files = vec![dir.join("doctor.rs")];
    // The GPU calls the smoke test makes live in their own crate.
    for d in [dir, root.join("crates/gpu/src")] {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            files.push(e.path());
        }
    }
    let mut keys = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        for pat in [
            "msg!(\"",
            "Message::new(\"",
            "install_fix(\"",
            "=> \"",
            "key = \"",
        ] {
            for part in text.split(pat).skip(1) {
                let k: String = part.chars().take_while(|c| *c != '"').collect();
                let looks_like_key = k.contains('_')
                    && k.chars()
                        .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit());
                if looks_like_key
                    && (pat != "=> \""
                        || k.contains("compiler")
                        || k.starts_with("nvcc_")
                        || k.starts_with("vcvars"))
                {
                    keys.push(k);
                }
            }
        }
    }
    keys.sort();
    keys.dedup();
    assert!(keys.len() > 40, "{keys:?}");
    for k in &keys {
        assert!(
            cuda_setup_core::i18n::has_key(k),
            "message key {k} has no text in locales"
        );
    }
}

// ---------------------------------------------------------------------------------------
// On a machine with an NVIDIA GPU (docs/cli.md, "Verify on a GPU machine"). The toolkit is
// the detected one, or CUDA_SETUP_TEST_CUDA_DIR (a toolkit, or a folder holding cuBLAS such
// as site-packages/nvidia/cublas); torch comes from CUDA_SETUP_TEST_PYTHON or PATH.

fn gpu_smoke(sizes: Vec<usize>, nvcc: bool) -> verify::SmokeReport {
    let opts = verify::SmokeOptions {
        cuda_dir: std::env::var_os("CUDA_SETUP_TEST_CUDA_DIR").map(PathBuf::from),
        sizes,
        nvcc,
        ..Default::default()
    };
    let r = verify::smoke(&Host::real(), &Tables::embedded().unwrap(), &opts);
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    r
}

/// CUDA_SETUP_TEST_PYTHON, else the `python3` on PATH (the machine's torch is the point).
fn test_python() -> PathBuf {
    std::env::var_os("CUDA_SETUP_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let out = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .expect("the GPU tests need a Python with torch");
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        })
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and a CUDA toolkit"]
fn gpu_smoke_gemm_bandwidth_and_cudnn_pass() {
    let r = gpu_smoke(vec![1024, 2048, 4096, 8192], false);
    let g = &r.checks.gemm;
    assert_eq!(g.status, Status::Passed, "{:?}", g.reason);
    assert!(r.device.is_some());
    let cc = r.device.as_ref().unwrap().compute_capability;
    for res in &g.detail.results {
        assert!(res.accuracy.passed, "{res:?}");
        assert!(res.gflops > 0.0);
        assert!(res.accuracy.samples >= 256);
    }
    assert!(
        g.detail.results.iter().any(|x| x.size == 8192),
        "{:?}",
        g.detail.not_run
    );
    if cc.major >= 8 {
        assert!(
            g.detail
                .results
                .iter()
                .any(|x| x.precision == verify::reference::Precision::Tf32)
        );
    }
    let b = &r.checks.bandwidth;
    assert_eq!(b.status, Status::Passed, "{:?}", b.reason);
    assert!(b.detail.round_trip_ok);
    assert_eq!(b.detail.results.len(), 4);
    // cuDNN: passes when the toolkit has one.
    let c = &r.checks.cudnn;
    assert_ne!(c.status, Status::Failed, "{:?}", c.reason);
    if c.status == Status::Passed {
        assert!(c.detail.convolution.as_ref().unwrap().accuracy.passed);
    }
    assert_eq!(r.exit_code, 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver, a CUDA toolkit with nvcc and a host compiler"]
fn gpu_nvcc_kernel_runs() {
    let r = gpu_smoke(vec![1024], true);
    let n = &r.checks.nvcc;
    assert_eq!(n.status, Status::Passed, "{:?}", n.reason);
    assert!(matches!(
        n.detail.kernel,
        Some(nvcc::KernelOutcome::Ok { .. })
    ));
}

/// torch.mm timed the way smoke times cuBLAS: warm-up, then the best of three runs of N
/// back-to-back products between CUDA events. Prints "fp32 MS" and "fp16 MS".
const TORCH_MM_BENCH: &str = r#"
import torch
torch.backends.cuda.matmul.allow_tf32 = False  # plain SGEMM, as smoke's fp32
n = 8192
for name, dt in (("fp32", torch.float32), ("fp16", torch.float16)):
    a = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
    b = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
    torch.mm(a, b); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.mm(a, b); e.record(); e.synchronize()
    it = max(3, min(200, int(200 / max(s.elapsed_time(e), 1e-3)) + 1))
    best = None
    for _ in range(3):
        s.record()
        for _ in range(it):
            torch.mm(a, b)
        e.record(); e.synchronize()
        ms = s.elapsed_time(e) / it
        best = ms if best is None else min(best, ms)
    print(name, best)
"#;

#[test]
#[ignore = "needs an NVIDIA GPU, a CUDA toolkit and a CUDA build of torch"]
fn gpu_gemm_is_at_least_0_9x_torch_mm() {
    let out = Command::new(test_python())
        .args(["-c", TORCH_MM_BENCH])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let torch_ms = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap()
    };
    let r = gpu_smoke(vec![8192], false);
    for (p, name) in [
        (verify::reference::Precision::Fp32, "fp32"),
        (verify::reference::Precision::Fp16, "fp16"),
    ] {
        let Some(ours) = r
            .checks
            .gemm
            .detail
            .results
            .iter()
            .find(|x| x.precision == p)
        else {
            continue;
        };
        let theirs = verify::reference::gflops(8192, 8192, 8192, torch_ms(name));
        eprintln!(
            "{name}: ours {:.0} GFLOP/s, torch.mm {theirs:.0} GFLOP/s",
            ours.gflops
        );
        assert!(
            ours.gflops >= 0.9 * theirs,
            "{name}: {:.0} GFLOP/s is below 0.9 × torch.mm's {theirs:.0}",
            ours.gflops
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and a CUDA build of torch"]
fn gpu_doctor_passes_with_real_torch() {
    let host = Host::real();
    let tables = Tables::embedded().unwrap();
    let gpu = GpuFacts::detect(&host, &tables);
    let r = doctor::examine(
        &host,
        &tables,
        &DoctorOptions {
            python: Some(test_python()),
            ..Default::default()
        },
        &gpu,
    );
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert_eq!(r.status, Status::Passed, "{:#?}", r.findings);
    let c = r.check.unwrap();
    assert!(c.ok && c.speedup.unwrap() > 1.0, "{c:?}");
}

// ---- #21: what the fast path trusts (the stamps recorded at install) and what `--deep` reads ----

/// A Windows-layout machine in a temp root with cuDNN 9.10 installed by our transaction
/// (its manifest holds each file's stamp) and the environment set, as repair sees one.
fn cudnn_machine() -> (tempfile::TempDir, cuda_setup_core::target::Target, PathBuf) {
    use cuda_setup_core::steps::env;
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let target = cuda_setup_core::target::Target::rooted(Os::Windows, &root);
    let tk = support::cudnn_zip::toolkit(
        &root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA"),
        "12.4.1",
    );
    let zip = work
        .path()
        .join("cudnn-windows-x86_64-9.10.2.21_cuda12-archive.zip");
    support::cudnn_zip::Spec {
        version: "9.10.2.21",
        cuda_major: 12,
        dll_size: 50_000,
    }
    .write(&zip);
    cuda_setup_core::cudnn::install(&zip, &tk, &|_| {}).unwrap();
    let rec = env::WindowsEnvRecord {
        machine: BTreeMap::from([("Path".into(), r"C:\Windows\system32;C:\Windows".into())]),
        user: BTreeMap::new(),
    };
    let rec_path = env::windows_record_path(&target);
    std::fs::create_dir_all(rec_path.parent().unwrap()).unwrap();
    std::fs::write(&rec_path, serde_json::to_vec_pretty(&rec).unwrap()).unwrap();
    env::configure(&target, &tk, &"12.4.1".parse().unwrap()).unwrap();
    (work, target, tk)
}

/// Same length, other bytes: what the stamp alone cannot tell from the original.
fn flip_first_byte(p: &Path) {
    let mut b = std::fs::read(p).unwrap();
    b[0] ^= 0xff;
    std::fs::write(p, &b).unwrap();
}

fn set_mtime(p: &Path, t: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn cudnn_damaged(t: &cuda_setup_core::target::Target) -> bool {
    let tables = Tables::embedded().unwrap();
    cuda_setup_core::repair::audit(t, &tables, &Default::default())
        .iter()
        .any(|f| f.id == "repair_cudnn_damaged")
}

#[test]
fn repair_finds_an_installed_cudnn_file_whose_size_or_mtime_changed() {
    let (_w, t, tk) = cudnn_machine();
    assert!(!cudnn_damaged(&t), "a fresh install is intact");
    // Only the time changed, the bytes are ours: re-hashed and found intact.
    let dll = tk.join("bin/cudnn_ops64_9.dll");
    set_mtime(&dll, std::time::UNIX_EPOCH + Duration::from_secs(1_000_000));
    assert!(!cudnn_damaged(&t), "same bytes at another time are intact");
    // Other bytes of the same length (a new time): found.
    flip_first_byte(&dll);
    assert!(cudnn_damaged(&t), "same size, other bytes, new time");

    let (_w, t, tk) = cudnn_machine();
    // One byte more, the time put back: the size alone tells.
    let h = tk.join("include/cudnn_cnn.h");
    let was = std::fs::metadata(&h).unwrap().modified().unwrap();
    let mut b = std::fs::read(&h).unwrap();
    b.push(b'\n');
    std::fs::write(&h, &b).unwrap();
    set_mtime(&h, was);
    assert!(cudnn_damaged(&t), "another size, the time put back");
}

#[test]
fn deep_finds_a_change_with_its_size_and_mtime_put_back_that_the_quick_check_trusts() {
    let (_w, _t, tk) = cudnn_machine();
    let dll = tk.join("bin/cudnn_ops64_9.dll");
    let was = std::fs::metadata(&dll).unwrap().modified().unwrap();
    flip_first_byte(&dll);
    set_mtime(&dll, was);
    let run = |deep: bool| {
        let mut a = vec![
            "cudnn",
            "verify",
            "--cuda-dir",
            tk.to_str().unwrap(),
            "--json",
        ];
        if deep {
            a.push("--deep");
        }
        Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
            .args(&a)
            .env("LANG", "C")
            .output()
            .unwrap()
    };
    // The quick check trusts the recorded stamp (docs/cli.md says so).
    let quick = run(false);
    assert_eq!(quick.status.code(), Some(0), "{quick:?}");
    let deep = run(true);
    assert_eq!(deep.status.code(), Some(4), "{deep:?}");
    let j: Value = serde_json::from_slice(&deep.stdout).unwrap();
    let problems = j["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{j}");
    assert_eq!(problems[0]["path"], "bin/cudnn_ops64_9.dll");
    assert_eq!(problems[0]["problem"], "altered");
}
