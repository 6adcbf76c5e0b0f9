//! `doctor` for developers, for real: a real Python runs the probe and the extension
//! build script against stand-in torch packages (`torch.version.cuda` "13.0", with or
//! without a `torch.utils.cpp_extension`), stand-in toolkit folders laid out like a real
//! one (`version.json`, `bin/nvcc`, `include/crt/host_config.h`), a stand-in g++ and a
//! stand-in setuptools whose `setup()` prints what a failing compiler prints. They test
//! the Python scripts themselves, so they need a real Python: `real_python_*`, ignored by
//! `cargo test` and run by `scripts/real-artifacts.sh`.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::platform::Host;
use cuda_setup_core::verify::Status;
use cuda_setup_core::verify::doctor::{
    self, DoctorOptions, DoctorReport, ExtensionOptions, GpuFacts, Severity,
};
use serde_json::Value;

/// The compiler checks of CUDA 13.5.37's `include/crt/host_config.h`, as there (the
/// #error texts cut after their first sentence).
const HOST_CONFIG_13_5: &str = "#if !__NV_NO_HOST_COMPILER_CHECK\n\
#if defined(__GNUC__)\n\n#if __GNUC__ > 16\n\n\
#error -- unsupported GNU version! gcc versions later than 16 are not supported!\n\n\
#endif /* __GNUC__ > 16 */\n\n#endif /* __GNUC__ */\n\n#if defined(_WIN32)\n\n\
#if _MSC_VER < 1920 || _MSC_VER >= 1960\n\n\
#error -- unsupported Microsoft Visual Studio version! Only the versions between 2019 and 2026 (inclusive) are supported!\n\n\
#endif /* (_MSC_VER < 1910 || _MSC_VER >= 1960) */\n\n#endif /* _WIN32 */\n\
#endif  /* !__NV_NO_HOST_COMPILER_CHECK */\n";

/// What a build against a wheel toolkit without `libcudart.so` prints.
const LINK_FAILURE: &str = "running build_ext\n\
building 'cuda_setup_doctor_ext' extension\n\
x86_64-linux-gnu-g++ -shared build/temp/binding.o build/temp/kernel.o -L/opt/tk/lib64 -lc10 -ltorch -ltorch_cpu -ltorch_python -lcudart -lc10_cuda -ltorch_cuda -o cuda_setup_doctor_ext.so\n\
/usr/bin/ld: cannot find -lcudart: No such file or directory\n\
collect2: error: ld returned 1 exit status\n\
error: command '/usr/bin/x86_64-linux-gnu-g++' failed with exit code 1\n";

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn script(p: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(p, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A real interpreter with nothing of this machine's site-packages (a venv).
fn real_python() -> PathBuf {
    crate::support::python::real_sandboxed()
}

/// A toolkit folder as NVIDIA's installer (or our wheels method) lays it out.
fn toolkit(dir: &Path, version: &str) -> PathBuf {
    write(
        &dir.join("version.json"),
        &format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{version}"}}}}"#),
    );
    script(
        &dir.join("bin/nvcc"),
        &format!("echo 'Cuda compilation tools, release {version}, V{version}'"),
    );
    write(&dir.join("include/crt/host_config.h"), HOST_CONFIG_13_5);
    dir.to_path_buf()
}

/// A CUDA 13.0 build of torch on a machine without a GPU: `torch.version.cuda` and no
/// more; with `cpp_extension`, a stand-in of torch's module (its CUDA_HOME rule, and the
/// two names setup.py imports).
fn cuda_torch(dir: &Path, cpp_extension: bool) {
    write(
        &dir.join("torch/__init__.py"),
        "__version__ = '2.10.0+cu130'\nclass version:\n    cuda = '13.0'\n\
         class cuda:\n    @staticmethod\n    def is_available(): return False\n    \
         @staticmethod\n    def device_count(): return 0\n    \
         @staticmethod\n    def init(): raise RuntimeError('Found no NVIDIA driver on your system.')\n",
    );
    if cpp_extension {
        write(&dir.join("torch/utils/__init__.py"), "");
        write(
            &dir.join("torch/utils/cpp_extension.py"),
            "import os\nCUDA_HOME = os.environ.get('CUDA_HOME') or os.environ.get('CUDA_PATH')\n\
             class BuildExtension:\n    pass\n\
             def CUDAExtension(name, sources, **kw):\n    return (name, sources)\n",
        );
    }
}

/// A setuptools whose `setup()` runs `body` (the compiler's part of a build).
fn setuptools(dir: &Path, body: &str) {
    write(
        &dir.join("setuptools/__init__.py"),
        &format!("import os, sys, time\ndef setup(**kw):\n{body}\n"),
    );
}

/// A g++ that says its version.
fn gxx(bin: &Path, version: &str) {
    script(
        &bin.join("g++"),
        &format!("[ \"$1\" = -dumpfullversion ] && echo {version} && exit 0\nexit 1"),
    );
}

fn host(env: &[(&str, &str)]) -> Host {
    let mut vars = BTreeMap::from([
        ("PYTHONNOUSERSITE".to_string(), "1".to_string()),
        ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
    ]);
    for (k, v) in env {
        vars.insert(k.to_string(), v.to_string());
    }
    Host::sandbox(Os::Linux, Path::new("/"), vars)
}

fn examine(host: &Host, ext: &ExtensionOptions) -> DoctorReport {
    let opts = DoctorOptions {
        python: Some(real_python()),
        mirror: None,
        timeout: Duration::from_secs(60),
        size: 16,
    };
    doctor::examine_with(
        host,
        &Tables::embedded().unwrap(),
        &opts,
        &GpuFacts::default(),
        ext,
    )
}

fn key<'a>(r: &'a DoctorReport, k: &str) -> &'a doctor::Finding {
    r.findings
        .iter()
        .find(|f| f.message.key == k)
        .unwrap_or_else(|| panic!("no {k}: {:#?}", r.findings))
}

fn no_key(r: &DoctorReport, k: &str) {
    assert!(
        r.findings.iter().all(|f| f.message.key != k),
        "{k}: {:#?}",
        r.findings
    );
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_torch_13_with_a_12_8_toolkit_in_cuda_home() {
    let d = tempfile::tempdir().unwrap();
    let pkgs = d.path().join("pkgs");
    let bin = d.path().join("bin");
    let tk128 = toolkit(&d.path().join("cuda-12.8"), "12.8.93");
    gxx(&bin, "13.3.0");
    for with_module in [false, true] {
        let _ = std::fs::remove_dir_all(&pkgs);
        cuda_torch(&pkgs, with_module);
        let h = host(&[
            ("PYTHONPATH", s(&pkgs)),
            ("PATH", s(&bin)),
            ("CUDA_HOME", s(&tk128)),
        ]);
        let r = examine(&h, &ExtensionOptions::default());
        let e = r.extension.as_ref().expect("facts for a CUDA build");
        // torch's module when it imports, else the probe's own copy of its rules.
        let source = if with_module {
            "cpp_extension"
        } else {
            "probe"
        };
        assert_eq!(e.probe.source.as_deref(), Some(source));
        assert_eq!(e.toolkit.as_deref(), Some(tk128.as_path()));
        assert_eq!(e.toolkit_version.as_ref().unwrap().to_string(), "12.8.93");
        let m = key(&r, "doctor_ext_major_mismatch");
        assert_eq!(m.severity, Severity::Problem);
        assert_eq!(m.message.param("via"), Some("CUDA_HOME"));
        assert_eq!(m.message.param("toolkit"), Some("12.8"));
        let fix = m.fix.as_ref().unwrap();
        assert_eq!(fix.message.key, "fix_ext_install_toolkit");
        assert_eq!(fix.commands, ["cuda-setup install --cuda 13.0"]);
        // The g++ is one the toolkit's header accepts.
        assert_eq!(
            key(&r, "doctor_ext_gcc_ok").message.param("max"),
            Some("16")
        );
        assert_eq!(r.status, Status::Failed);
        assert_eq!(r.exit_code, 5);
        assert!(r.build_extension.is_none(), "not asked for");
    }

    // A CUDA 13 toolkit is there too (CUDA_PATH): CUDA_HOME points elsewhere, and the
    // fix points it at the 13.
    let tk130 = toolkit(&d.path().join("cuda-13.0"), "13.0.88");
    let h = host(&[
        ("PYTHONPATH", s(&pkgs)),
        ("PATH", s(&bin)),
        ("CUDA_HOME", s(&tk128)),
        ("CUDA_PATH", s(&tk130)),
    ]);
    let r = examine(&h, &ExtensionOptions::default());
    let fix = key(&r, "doctor_ext_major_mismatch").fix.clone().unwrap();
    assert_eq!(fix.message.key, "fix_ext_set_cuda_home");
    assert_eq!(
        fix.commands[0],
        format!("export CUDA_HOME={}", tk130.display())
    );
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_cuda_home_unset_and_the_toolkit_found_through_nvcc_on_path() {
    let d = tempfile::tempdir().unwrap();
    let pkgs = d.path().join("pkgs");
    let bin = d.path().join("bin");
    let tk = toolkit(&d.path().join("cuda-13.0"), "13.0.88");
    cuda_torch(&pkgs, false);
    gxx(&bin, "17.1.0");
    let path = format!("{}:{}", tk.join("bin").display(), bin.display());
    let r = examine(
        &host(&[("PYTHONPATH", s(&pkgs)), ("PATH", &path)]),
        &ExtensionOptions::default(),
    );
    let ok = key(&r, "doctor_ext_toolkit_ok");
    assert_eq!(ok.message.param("toolkit"), Some("13.0"));
    let unset = key(&r, "doctor_ext_cuda_home_unset");
    assert_eq!(unset.severity, Severity::Info);
    assert_eq!(unset.message.param("via"), Some("PATH"));
    assert_eq!(
        unset.fix.as_ref().unwrap().commands[0],
        format!("export CUDA_HOME={}", tk.display())
    );
    no_key(&r, "doctor_ext_major_mismatch");
    // g++ 17 against "#if __GNUC__ > 16": too new, with the g++ to install.
    let p = key(&r, "doctor_ext_gcc_too_new");
    assert_eq!(p.message.param("version"), Some("17.1.0"));
    let cmds = &p.fix.as_ref().unwrap().commands;
    assert_eq!(cmds[0], "sudo apt install g++-16");

    // No g++ at all; and a CUDA_HOME that names a folder without nvcc.
    let empty = d.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let r = examine(
        &host(&[
            ("PYTHONPATH", s(&pkgs)),
            ("PATH", s(&tk.join("bin"))),
            ("CUDA_HOME", s(&tk)),
        ]),
        &ExtensionOptions {
            build: true,
            ..ExtensionOptions::default()
        },
    );
    key(&r, "doctor_ext_no_compiler");
    no_key(&r, "doctor_ext_cuda_home_unset");
    let b = r.build_extension.as_ref().unwrap();
    assert_eq!(b.status, Status::Skipped);
    assert_eq!(b.message.key, "doctor_build_skipped_no_gcc");
    let r = examine(
        &host(&[
            ("PYTHONPATH", s(&pkgs)),
            ("PATH", s(&bin)),
            ("CUDA_HOME", s(&empty)),
        ]),
        &ExtensionOptions::default(),
    );
    assert_eq!(
        key(&r, "doctor_ext_toolkit_broken").severity,
        Severity::Problem
    );
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_build_extension_reports_the_compilers_first_error_line() {
    let d = tempfile::tempdir().unwrap();
    let pkgs = d.path().join("pkgs");
    let bin = d.path().join("bin");
    let tk = toolkit(&d.path().join("cuda-13.0"), "13.0.88");
    cuda_torch(&pkgs, true);
    gxx(&bin, "13.3.0");
    let env = [
        ("PYTHONPATH", s(&pkgs)),
        ("PATH", s(&bin)),
        ("CUDA_HOME", s(&tk)),
    ];
    let build = ExtensionOptions {
        build: true,
        build_timeout: Duration::from_secs(120),
    };

    // The link fails the way a wheel toolkit without libcudart.so fails.
    setuptools(
        &pkgs,
        &format!("    sys.stdout.write({LINK_FAILURE:?})\n    sys.exit(1)",),
    );
    let r = examine(&host(&env), &build);
    let b = r.build_extension.as_ref().unwrap();
    assert_eq!(b.status, Status::Failed, "{b:#?}");
    assert_eq!(
        b.first_error.as_deref(),
        Some("/usr/bin/ld: cannot find -lcudart: No such file or directory")
    );
    assert!(b.log_tail.as_deref().unwrap().contains("collect2"));
    let f = key(&r, "doctor_build_failed");
    assert_eq!(f.severity, Severity::Problem);
    assert_eq!(
        f.message.param("detail"),
        Some("/usr/bin/ld: cannot find -lcudart: No such file or directory")
    );
    assert_eq!(r.exit_code, 5);

    // It builds (the module appears next to setup.py) and imports; no GPU, so the
    // build had an architecture set for it, and the kernel is not run.
    setuptools(
        &pkgs,
        "    assert kw['cmdclass']['build_ext'].__name__ == 'BuildExtension'\n    \
         assert kw['ext_modules'][0][1] == ['binding.cpp', 'kernel.cu'], kw\n    \
         assert os.path.isfile('kernel.cu') and os.path.isfile('binding.cpp')\n    \
         assert sys.argv[1:] == ['build_ext', '--inplace'], sys.argv\n    \
         open('cuda_setup_doctor_ext.py', 'w').write('ARCH = %r\\n' % os.environ['TORCH_CUDA_ARCH_LIST'])",
    );
    let r = examine(&host(&env), &build);
    let b = r.build_extension.as_ref().unwrap();
    assert_eq!(b.status, Status::Passed, "{b:#?}");
    assert_eq!(b.message.key, "doctor_build_passed");
    assert_eq!(b.kernel.as_deref(), Some("no_gpu"));
    assert_eq!(b.arch_list.as_deref(), Some("8.0"));
    assert_eq!(key(&r, "doctor_build_passed").severity, Severity::Ok);

    // Built but not importable.
    setuptools(
        &pkgs,
        "    open('cuda_setup_doctor_ext.py', 'w').write('raise ImportError(\"libcudart.so.13: cannot open shared object file: No such file or directory\")\\n')",
    );
    let r = examine(&host(&env), &build);
    let b = r.build_extension.as_ref().unwrap();
    assert_eq!(b.message.key, "doctor_build_import_failed");
    assert_eq!(
        b.first_error.as_deref(),
        Some(
            "ImportError: libcudart.so.13: cannot open shared object file: No such file or directory"
        )
    );

    // A build that hangs is stopped at the timeout, the compiler it started included.
    let pidfile = d.path().join("pid");
    setuptools(
        &pkgs,
        &format!(
            "    import subprocess\n    p = subprocess.Popen(['sleep', '120'])\n    \
             open({:?}, 'w').write(str(p.pid))\n    print('compiling kernel.cu', flush=True)\n    p.wait()",
            pidfile.display().to_string()
        ),
    );
    let mut env_sleep = env.to_vec();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    env_sleep[1] = ("PATH", &path);
    let t = Instant::now();
    let r = examine(
        &host(&env_sleep),
        &ExtensionOptions {
            build: true,
            build_timeout: Duration::from_secs(3),
        },
    );
    assert!(t.elapsed() < Duration::from_secs(30));
    let b = r.build_extension.as_ref().unwrap();
    assert_eq!(b.message.key, "doctor_build_timeout", "{b:#?}");
    assert_eq!(b.status, Status::Failed);
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
    let gone = (0..100).any(|_| {
        let alive = std::fs::read_to_string(proc.join("stat")).is_ok_and(|st| !st.contains(") Z "));
        if alive {
            std::thread::sleep(Duration::from_millis(50));
        }
        !alive
    });
    assert!(gone, "the compiler the build started is still running");

    // No setuptools in this Python: the fix installs it.
    setuptools(&pkgs, "    pass");
    write(
        &pkgs.join("setuptools/__init__.py"),
        "raise ImportError(\"No module named 'setuptools'\")\n",
    );
    let r = examine(&host(&env), &build);
    let f = key(&r, "doctor_build_no_setuptools");
    let fix = f.fix.as_ref().unwrap();
    assert!(
        fix.commands[0].ends_with(" -m pip install setuptools"),
        "{fix:?}"
    );
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_build_extension_is_skipped_for_a_cpu_build_and_without_a_toolkit() {
    let d = tempfile::tempdir().unwrap();
    let cpu = d.path().join("cpu");
    write(
        &cpu.join("torch/__init__.py"),
        "__version__ = '2.10.0+cpu'\nclass version:\n    cuda = None\nclass cuda:\n    @staticmethod\n    def is_available(): return False\n",
    );
    let build = ExtensionOptions {
        build: true,
        ..ExtensionOptions::default()
    };
    let r = examine(
        &host(&[("PYTHONPATH", s(&cpu)), ("PATH", "/nonexistent")]),
        &build,
    );
    assert!(r.extension.is_none());
    let b = r.build_extension.as_ref().unwrap();
    assert_eq!(b.message.key, "doctor_build_skipped_no_cuda_torch");
    assert_eq!(b.status, Status::Skipped);
    assert_eq!(r.status, Status::Skipped, "{:#?}", r.findings);

    let gpu = d.path().join("gpu");
    cuda_torch(&gpu, false);
    let r = examine(
        &host(&[("PYTHONPATH", s(&gpu)), ("PATH", "/nonexistent")]),
        &build,
    );
    let e = r.extension.as_ref().unwrap();
    if e.toolkit.is_some() {
        eprintln!(
            "this machine has a toolkit in the default folder; the no-toolkit case does not apply"
        );
        return;
    }
    assert_eq!(key(&r, "doctor_ext_no_toolkit").severity, Severity::Info);
    assert_eq!(
        r.build_extension.as_ref().unwrap().message.key,
        "doctor_build_skipped_no_toolkit"
    );
}

fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_doctor_build_extension_json() {
    let d = tempfile::tempdir().unwrap();
    let pkgs = d.path().join("pkgs");
    let bin = d.path().join("bin");
    let tk = toolkit(&d.path().join("cuda-12.8"), "12.8.93");
    cuda_torch(&pkgs, true);
    gxx(&bin, "13.3.0");
    setuptools(
        &pkgs,
        &format!("    sys.stdout.write({LINK_FAILURE:?})\n    sys.exit(1)"),
    );
    let py = real_python();
    let out = cli(
        &[
            "doctor",
            "--json",
            "--python",
            s(&py),
            "--build-extension",
            "--build-timeout",
            "120",
        ],
        &[
            ("PYTHONPATH", s(&pkgs)),
            ("PATH", s(&bin)),
            ("CUDA_HOME", s(&tk)),
        ],
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(5), "{j:#}");
    let e = &j["extension"];
    assert_eq!(e["toolkit"], s(&tk));
    assert_eq!(e["found_by"], "CUDA_HOME");
    assert_eq!(e["toolkit_version"], "12.8.93");
    assert_eq!(e["accepts"]["gcc_max"][0], 16);
    assert_eq!(e["compiler"]["version"], "13.3.0");
    assert_eq!(e["probe"]["cuda_home_env"], s(&tk));
    let b = &j["build_extension"];
    assert_eq!(b["status"], "failed");
    assert_eq!(b["key"], "doctor_build_failed");
    assert_eq!(
        b["first_error"],
        "/usr/bin/ld: cannot find -lcudart: No such file or directory"
    );
    let keys: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"doctor_ext_major_mismatch"), "{keys:?}");
    assert!(keys.contains(&"doctor_build_failed"), "{keys:?}");

    // The human report in Chinese: the first error line is shown as it is.
    let out = cli(
        &[
            "--lang",
            "zh",
            "doctor",
            "--python",
            s(&py),
            "--build-extension",
        ],
        &[
            ("PYTHONPATH", s(&pkgs)),
            ("PATH", s(&bin)),
            ("CUDA_HOME", s(&tk)),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("主版本不同"), "{text}");
    assert!(
        text.contains("/usr/bin/ld: cannot find -lcudart: No such file or directory"),
        "{text}"
    );

    // --build-timeout belongs to --build-extension.
    let out = cli(&["doctor", "--build-timeout", "10"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// A real PyTorch (CUDA build) and a real toolkit: the extension builds and imports (and
/// runs, on a GPU). CUDA_SETUP_TEST_TORCH_PYTHON: a Python with torch; CUDA_SETUP_TEST_CUDA_DIR:
/// the toolkit (e.g. one `install --method wheels` assembled). Minutes of compiling.
#[test]
#[ignore = "real artifacts: needs a CUDA build of torch and a toolkit (see the doc comment)"]
fn real_torch_builds_an_extension_with_the_toolkit() {
    let (Ok(py), Ok(tk)) = (
        std::env::var("CUDA_SETUP_TEST_TORCH_PYTHON"),
        std::env::var("CUDA_SETUP_TEST_CUDA_DIR"),
    ) else {
        panic!("set CUDA_SETUP_TEST_TORCH_PYTHON and CUDA_SETUP_TEST_CUDA_DIR");
    };
    let path = std::env::var("PATH").unwrap_or_default();
    let h = host(&[("PATH", &path), ("CUDA_HOME", &tk)]);
    let opts = DoctorOptions {
        python: Some(PathBuf::from(py)),
        mirror: None,
        timeout: Duration::from_secs(300),
        size: 256,
    };
    let gpu = GpuFacts::detect(&h, &Tables::embedded().unwrap());
    let r = doctor::examine_with(
        &h,
        &Tables::embedded().unwrap(),
        &opts,
        &gpu,
        &ExtensionOptions {
            build: true,
            build_timeout: Duration::from_secs(1200),
        },
    );
    key(&r, "doctor_ext_toolkit_ok");
    let b = r.build_extension.as_ref().unwrap();
    assert_eq!(b.status, Status::Passed, "{b:#?}");
    if !gpu.gpus.is_empty() {
        assert_eq!(b.kernel.as_deref(), Some("ran"), "{b:#?}");
    }
}
