//! host_config.h parsing, first error lines, and the extension findings.

// (Marks the file as test code for i18n::source_keys: it holds a Chinese cl.exe banner.)
#[cfg(test)]
use super::*;

/// The compiler checks of CUDA 13.5.37's `include/crt/host_config.h` (nvidia-cuda-crt
/// wheel), as they stand there (long #error texts cut after their first sentence).
const HOST_CONFIG_13_5: &str = r#"
/* check host compiler version  */
#if !__NV_NO_HOST_COMPILER_CHECK

#if defined(__GRCO_CLANG_COMPILER__)
#if (__GRCO_CLANG_COMPILER__ == 1) && ((__clang_major__ < 16) || (__clang_major__ > 22))
#error -- unsupported Grace clang version! The version must be 16.x to 22.x.
#endif  /* (__GRCO_CLANG_COMPILER__ == 1) && ((__clang_major__ < 16) || (__clang_major__ > 22)) */

#endif /* __GRCO_CLANG_COMPILER__  */

#if defined(__INTEL_CLANG_COMPILER)
#error -- unsupported Intel ICX compiler! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check
#endif /* __INTEL_CLANG_COMPILER */

#if defined(__GNUC__)

#if __GNUC__ > 16

#error -- unsupported GNU version! gcc versions later than 16 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check

#endif /* __GNUC__ > 16 */


#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__) && !defined(__GRCO_CLANG_COMPILER__)

#if (__clang_major__ >= 23) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))
#error -- unsupported clang version! clang version must be less than 23 and greater than 3.2 .

#endif  /* (__clang_major__ >=  23) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3)) */

#endif /* defined(__clang__) && ... */


#endif /* __GNUC__ */

#if defined(_WIN32)

#if _MSC_VER < 1920 || _MSC_VER >= 1960

#error -- unsupported Microsoft Visual Studio version! Only the versions between 2019 and 2026 (inclusive) are supported!

#endif /* (_MSC_VER < 1910 || _MSC_VER >= 1960) */

#endif /* _WIN32 */
#endif  /* !__NV_NO_HOST_COMPILER_CHECK */
"#;

#[test]
fn the_real_13_5_header_accepts_gcc_up_to_16_and_msvc_2019_to_2026() {
    let r = parse_host_config(HOST_CONFIG_13_5);
    assert_eq!(r.gcc_max, Some((16, None)));
    assert_eq!(r.gcc_min, None, "13.5 names no oldest g++");
    assert_eq!(r.msc_min, Some(1920));
    assert_eq!(r.msc_below, Some(1960));
}

#[test]
fn other_shapes_of_the_gnu_check() {
    // A minor inside the major, and a lower bound, in the same #if.
    let h = "#if defined(__GNUC__)\n#if __GNUC__ < 6 || __GNUC__ > 12 || (__GNUC__ == 12 && __GNUC_MINOR__ > 2)\n\n#error -- unsupported GNU version! gcc versions later than 12.2 are not supported!\n#endif\n#endif\n";
    let r = parse_host_config(h);
    assert_eq!(r.gcc_max, Some((12, Some(2))));
    assert_eq!(r.gcc_min, Some(6));
    assert_eq!(r.msc_min, None);
    // `>=` is one below; a check on the clang version alone says nothing about g++.
    let r = parse_host_config(
        "#if __GNUC__ >= 14\n#error -- unsupported GNU version!\n#endif\n#if (__clang_major__ >= 23)\n#error -- unsupported clang version!\n#endif\n",
    );
    assert_eq!(r.gcc_max, Some((13, None)));
}

#[test]
fn a_header_without_the_checks_gives_no_numbers() {
    // No #error after the condition: not a version check.
    let r = parse_host_config("#if __GNUC__ > 16\n#define X 1\n#endif\n");
    assert_eq!(r, HostConfigRange::default());
    assert_eq!(parse_host_config(""), HostConfigRange::default());
    // A comparison that is not a number.
    let r = parse_host_config("#if __GNUC__ > MAX_GCC\n#error -- unsupported GNU version!\n");
    assert_eq!(r.gcc_max, None);
}

#[test]
fn cl_banners_in_english_and_chinese() {
    let v = parse_cl_banner(
        "Microsoft (R) C/C++ Optimizing Compiler Version 19.44.35211 for x64\nCopyright (C) Microsoft Corporation.  All rights reserved.\n\nusage: cl [ option... ] filename... [ /link linkoption... ]\n",
    )
    .unwrap();
    assert_eq!(v.to_string(), "19.44.35211");
    assert_eq!(msc_ver(&v), Some(1944));
    let v = parse_cl_banner("用于 x64 的 Microsoft (R) C/C++ 优化编译器 19.29.30159 版\n版权所有(C) Microsoft Corporation。保留所有权利。\n").unwrap();
    assert_eq!(msc_ver(&v), Some(1929));
    assert!(parse_cl_banner("'cl' is not recognized as an internal or external command").is_none());
}

#[test]
fn the_first_error_line_of_real_build_outputs() {
    // A toolkit from wheels without the unversioned libcudart.so: the link fails.
    let ld = "running build_ext\n\
        building 'cuda_setup_doctor_ext' extension\n\
        /home/li/.local/cuda/bin/nvcc -I/home/li/venv/lib/python3.12/site-packages/torch/include -I/home/li/.local/cuda/include -c kernel.cu -o build/temp/kernel.o -D__CUDA_NO_HALF_OPERATORS__ -DTORCH_API_INCLUDE_EXTENSION_H -Werror=return-type --compiler-options '-fPIC' -gencode=arch=compute_80,code=sm_80 -std=c++17\n\
        x86_64-linux-gnu-g++ -shared build/temp/binding.o build/temp/kernel.o -L/home/li/venv/lib/python3.12/site-packages/torch/lib -L/home/li/.local/cuda/lib64 -lc10 -ltorch -ltorch_cpu -ltorch_python -lcudart -lc10_cuda -ltorch_cuda -o build/lib/cuda_setup_doctor_ext.so\n\
        /usr/bin/ld: cannot find -lcudart: No such file or directory\n\
        collect2: error: ld returned 1 exit status\n\
        error: command '/usr/bin/x86_64-linux-gnu-g++' failed with exit code 1\n";
    assert_eq!(
        first_error_line(ld).as_deref(),
        Some("/usr/bin/ld: cannot find -lcudart: No such file or directory")
    );
    // nvcc with a g++ newer than the toolkit accepts.
    let gnu = "/usr/local/cuda-12.4/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 13 are not supported!\n  143 | #error -- unsupported GNU version!\n";
    assert!(
        first_error_line(gnu)
            .unwrap()
            .contains("unsupported GNU version")
    );
    // MSVC's linker.
    let lnk = "cl.exe /c binding.cpp\nLINK : fatal error LNK1181: cannot open input file 'cublas.lib'\nerror: command 'link.exe' failed with exit code 1181\n";
    assert_eq!(
        first_error_line(lnk).as_deref(),
        Some("LINK : fatal error LNK1181: cannot open input file 'cublas.lib'")
    );
    // torch refusing before any compiler runs: the exception's line.
    let torch = "Traceback (most recent call last):\n  File \"setup.py\", line 6, in <module>\n    setup(\n  File \".../torch/utils/cpp_extension.py\", line 519, in _check_cuda_version\n    raise RuntimeError(CUDA_MISMATCH_MESSAGE.format(cuda_str_version, torch.version.cuda))\nRuntimeError: \nThe detected CUDA version (12.8) mismatches the version that was used to compile\nPyTorch (13.0). Please make sure to use the same CUDA versions.\n";
    assert_eq!(
        first_error_line(torch).as_deref(),
        Some(
            "RuntimeError: The detected CUDA version (12.8) mismatches the version that was used to compile PyTorch (13.0). Please make sure to use the same CUDA versions."
        )
    );
    let home = "Traceback (most recent call last):\n  File \"setup.py\", line 3\nOSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n";
    assert_eq!(
        first_error_line(home).as_deref(),
        Some(
            "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."
        )
    );
    assert_eq!(first_error_line(" \n\n"), None);
}

fn torch(cuda: &str) -> TorchState {
    TorchState {
        version: format!("2.10.0+cu{}", cuda.replace('.', "")),
        cuda: Some(cuda.into()),
        ..TorchState::default()
    }
}

fn facts(version: &str, cuda_home_env: bool) -> ExtensionFacts {
    let dir = PathBuf::from("/opt/cuda-12.8");
    ExtensionFacts {
        probe: ExtensionProbe {
            cuda_home: Some(dir.display().to_string()),
            source: Some("cpp_extension".into()),
            cuda_home_env: cuda_home_env.then(|| dir.display().to_string()),
            cuda_path_env: None,
            nvcc_on_path: Some("/opt/cuda-12.8/bin/nvcc".into()),
            error: None,
        },
        toolkit: Some(dir),
        found_by: Some(if cuda_home_env { "CUDA_HOME" } else { "PATH" }.into()),
        toolkit_version: version.parse().ok(),
        toolkit_has_nvcc: true,
        host_config: Some("/opt/cuda-12.8/include/crt/host_config.h".into()),
        accepts: Some(parse_host_config(HOST_CONFIG_13_5)),
        compiler: Some(CompilerFacts {
            compiler: HostCompiler::OnPath {
                path: "/usr/bin/g++".into(),
            },
            version: "13.3.0".parse().ok(),
            msc_ver: None,
        }),
        installed: vec![("/opt/cuda-12.8".into(), version.parse().ok())],
    }
}

fn key<'a>(f: &'a [Finding], k: &str) -> &'a Finding {
    f.iter()
        .find(|x| x.message.key == k)
        .unwrap_or_else(|| panic!("no {k} in {f:#?}"))
}

#[test]
fn torch_13_against_a_12_8_toolkit_is_a_problem_with_a_fix() {
    let f = findings(Os::Linux, &torch("13.0"), &facts("12.8", true));
    let m = key(&f, "doctor_ext_major_mismatch");
    assert_eq!(m.severity, Severity::Problem);
    assert_eq!(m.message.param("toolkit"), Some("12.8"));
    assert_eq!(m.message.param("cuda"), Some("13.0"));
    assert_eq!(m.message.param("via"), Some("CUDA_HOME"));
    // No CUDA 13 toolkit on this machine: install one.
    let fix = m.fix.as_ref().unwrap();
    assert_eq!(fix.message.key, "fix_ext_install_toolkit");
    assert_eq!(fix.commands, ["cuda-setup install --cuda 13.0"]);
    assert!(f.iter().all(|x| x.message.key != "doctor_ext_toolkit_ok"));

    // A CUDA 13 toolkit installed elsewhere: point CUDA_HOME at it.
    let mut fx = facts("12.8", true);
    fx.installed
        .push(("/opt/cuda-13.0".into(), "13.0.2".parse().ok()));
    let f = findings(Os::Linux, &torch("13.0"), &fx);
    let fix = key(&f, "doctor_ext_major_mismatch").fix.clone().unwrap();
    assert_eq!(fix.message.key, "fix_ext_set_cuda_home");
    assert_eq!(fix.commands[0], "export CUDA_HOME=/opt/cuda-13.0");
    let f = findings(Os::Windows, &torch("13.0"), &fx);
    let fix = key(&f, "doctor_ext_major_mismatch").fix.clone().unwrap();
    assert_eq!(fix.commands[1], "setx CUDA_HOME \"/opt/cuda-13.0\"");
}

#[test]
fn the_same_major_passes_and_an_unset_cuda_home_is_noted() {
    let f = findings(Os::Linux, &torch("12.6"), &facts("12.8.1", true));
    assert_eq!(key(&f, "doctor_ext_toolkit_ok").severity, Severity::Ok);
    assert!(f.iter().all(|x| x.severity != Severity::Problem), "{f:#?}");
    assert!(
        f.iter()
            .all(|x| x.message.key != "doctor_ext_cuda_home_unset")
    );
    let ok = key(&f, "doctor_ext_gcc_ok");
    assert_eq!(ok.message.param("max"), Some("16"));

    // Found through nvcc on PATH, CUDA_HOME unset: a note, with the commands.
    let f = findings(Os::Linux, &torch("12.6"), &facts("12.8.1", false));
    let n = key(&f, "doctor_ext_cuda_home_unset");
    assert_eq!(n.severity, Severity::Info);
    assert_eq!(n.message.param("via"), Some("PATH"));
    assert_eq!(
        n.fix.as_ref().unwrap().commands,
        [
            "export CUDA_HOME=/opt/cuda-12.8",
            "echo 'export CUDA_HOME=/opt/cuda-12.8' >> ~/.bashrc"
        ]
    );
}

#[test]
fn no_toolkit_is_a_note_and_a_broken_one_a_problem() {
    let mut fx = facts("12.8", false);
    fx.toolkit = None;
    fx.installed.clear();
    let f = findings(Os::Linux, &torch("12.8"), &fx);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].message.key, "doctor_ext_no_toolkit");
    assert_eq!(f[0].severity, Severity::Info);

    let mut fx = facts("12.8", true);
    fx.toolkit_has_nvcc = false;
    let f = findings(Os::Linux, &torch("12.8"), &fx);
    assert_eq!(
        key(&f, "doctor_ext_toolkit_broken").severity,
        Severity::Problem
    );
    // A CPU build has nothing to build extensions with: no findings at all.
    let cpu = TorchState {
        version: "2.10.0+cpu".into(),
        ..TorchState::default()
    };
    assert!(findings(Os::Linux, &cpu, &facts("12.8", true)).is_empty());
}

#[test]
fn host_compilers_against_the_header() {
    let with = |version: &str, accepts: Option<HostConfigRange>| {
        let mut fx = facts("13.5", true);
        fx.compiler.as_mut().unwrap().version = version.parse().ok();
        fx.accepts = accepts;
        findings(Os::Linux, &torch("13.0"), &fx)
    };
    let real = Some(parse_host_config(HOST_CONFIG_13_5));
    let f = with("17.1.0", real.clone());
    let p = key(&f, "doctor_ext_gcc_too_new");
    assert_eq!(p.severity, Severity::Problem);
    assert_eq!(p.message.param("max"), Some("16"));
    assert_eq!(
        p.fix.as_ref().unwrap().commands[0],
        "sudo apt install g++-16"
    );
    key(&with("16.9.1", real.clone()), "doctor_ext_gcc_ok");
    // 12.3 against "up to 12.2".
    let minor = Some(HostConfigRange {
        gcc_max: Some((12, Some(2))),
        gcc_min: Some(6),
        ..HostConfigRange::default()
    });
    key(&with("12.3.0", minor.clone()), "doctor_ext_gcc_too_new");
    key(&with("12.2.0", minor.clone()), "doctor_ext_gcc_ok");
    key(&with("5.4.0", minor), "doctor_ext_gcc_too_old");
    // No header, or one with no GNU check: unknown, never a guessed number.
    let u = with("13.3.0", None);
    let u = key(&u, "doctor_ext_compiler_range_unknown");
    assert_eq!(u.severity, Severity::Info);
    key(
        &with("13.3.0", Some(HostConfigRange::default())),
        "doctor_ext_compiler_range_unknown",
    );

    // No g++ at all.
    let mut fx = facts("13.5", true);
    fx.compiler = None;
    let f = findings(Os::Linux, &torch("13.0"), &fx);
    let n = key(&f, "doctor_ext_no_compiler");
    assert_eq!(
        n.fix.as_ref().unwrap().commands,
        ["sudo apt install build-essential"]
    );
    assert_eq!(
        build_skip_reason(Os::Linux, Some(&torch("13.0")), Some(&fx))
            .unwrap()
            .key,
        "doctor_build_skipped_no_gcc"
    );
}

#[test]
fn visual_cpp_against_the_header() {
    let with = |msc: u32| {
        let mut fx = facts("13.5", true);
        fx.compiler = Some(CompilerFacts {
            compiler: HostCompiler::Vcvars {
                vcvars: r"C:\BuildTools\VC\Auxiliary\Build\vcvars64.bat".into(),
            },
            version: format!("19.{}", msc - 1900).parse().ok(),
            msc_ver: Some(msc),
        });
        findings(Os::Windows, &torch("13.0"), &fx)
    };
    let f = with(1944);
    assert_eq!(
        key(&f, "doctor_ext_msvc_ok").message.param("range"),
        Some("1920–1959")
    );
    let f = with(1916);
    let p = key(&f, "doctor_ext_msvc_unsupported");
    assert_eq!(p.message.param("msc"), Some("1916"));
    key(&with(1960), "doctor_ext_msvc_unsupported");
}

#[test]
fn the_build_is_skipped_with_the_reason() {
    let cpu = TorchState {
        version: "2.10.0+cpu".into(),
        ..TorchState::default()
    };
    assert_eq!(
        build_skip_reason(Os::Linux, Some(&cpu), None).unwrap().key,
        "doctor_build_skipped_no_cuda_torch"
    );
    assert_eq!(
        build_skip_reason(Os::Linux, None, None).unwrap().key,
        "doctor_build_skipped_no_cuda_torch"
    );
    let mut fx = facts("13.0", true);
    fx.toolkit = None;
    assert_eq!(
        build_skip_reason(Os::Linux, Some(&torch("13.0")), Some(&fx))
            .unwrap()
            .key,
        "doctor_build_skipped_no_toolkit"
    );
    assert!(
        build_skip_reason(Os::Linux, Some(&torch("13.0")), Some(&facts("13.0", true))).is_none()
    );
    let s = BuildExtensionReport::skipped(msg!("doctor_build_skipped_no_toolkit"));
    assert_eq!(s.finding().severity, Severity::Info);
}
