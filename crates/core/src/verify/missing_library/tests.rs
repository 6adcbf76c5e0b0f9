use super::*;

#[test]
fn load_errors_are_told_apart() {
    assert_eq!(
        classify(
            "OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\venv\\Lib\\site-packages\\torch\\lib\\c10.dll\" or one of its dependencies."
        ),
        Some(LoadError::PackageDll {
            file: "c10.dll".into()
        })
    );
    assert_eq!(
        classify(
            "ImportError: DLL load failed while importing _C: The specified module could not be found."
        ),
        Some(LoadError::Extension {
            module: Some("_C".into())
        })
    );
    assert_eq!(
        classify("ImportError: DLL load failed while importing onnxruntime_pybind11_state: x"),
        Some(LoadError::Extension {
            module: Some("onnxruntime_pybind11_state".into())
        })
    );
    assert_eq!(
        classify("OSError: [WinError 127] The specified procedure could not be found"),
        Some(LoadError::Extension { module: None })
    );
    assert_eq!(
        classify(
            "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory"
        ),
        Some(LoadError::SharedObject {
            name: "libcudnn.so.9".into()
        })
    );
    assert_eq!(
        classify("ModuleNotFoundError: No module named 'numpy'"),
        None
    );
}

#[test]
fn the_table_names_who_provides_each_library() {
    use Provider::*;
    let w = |n| provider_of(Os::Windows, n);
    let l = |n| provider_of(Os::Linux, n);
    assert_eq!(w("cudnn_ops64_9.dll"), Cudnn { major: 9 });
    assert_eq!(w("cudnn64_8.dll"), Cudnn { major: 8 });
    assert_eq!(w("cudnn_engines_precompiled64_9.dll"), Cudnn { major: 9 });
    assert_eq!(l("libcudnn_graph.so.9"), Cudnn { major: 9 });
    assert_eq!(l("libcudnn.so.9.1.0"), Cudnn { major: 9 });
    assert_eq!(w("cublas64_12.dll"), CudaRuntime { major: 12 });
    assert_eq!(w("cublasLt64_12.dll"), CudaRuntime { major: 12 });
    assert_eq!(w("cudart64_12.dll"), CudaRuntime { major: 12 });
    assert_eq!(w("cudart64_110.dll"), CudaRuntime { major: 11 });
    assert_eq!(l("libcublas.so.12"), CudaRuntime { major: 12 });
    assert_eq!(l("libcudart.so.13"), CudaRuntime { major: 13 });
    assert_eq!(w("zlibwapi.dll"), Zlib);
    assert_eq!(w("VCRUNTIME140_1.dll"), VcRedist);
    assert_eq!(w("MSVCP140.dll"), VcRedist);
    assert_eq!(w("libomp140.x86_64.dll"), OpenMpLlvm);
    assert_eq!(w("nvcuda.dll"), Driver);
    assert_eq!(l("libcuda.so.1"), Driver);
    assert_eq!(w("fbgemm.dll"), Unknown);
    assert_eq!(w("cudnn.dll"), Unknown);
}

fn pkg(cuda: Option<u32>, bundles: bool) -> Package {
    Package {
        label: "PyTorch".into(),
        dir: PathBuf::from("/site/torch"),
        dll_dirs: Vec::new(),
        cuda_major: cuda,
        bundles_cuda: bundles,
        finds_nvidia_wheels: true,
    }
}

fn missing(name: &str) -> MissingLibrary {
    MissingLibrary {
        name: name.into(),
        chain: format!("_C.pyd → torch_cuda.dll → {name}"),
        needed_by: "torch_cuda.dll".into(),
        on_path: None,
        provider: provider_of(Os::Windows, name),
        also: Vec::new(),
    }
}

#[test]
fn each_library_gets_its_own_fix() {
    let m = missing("cudnn_ops64_9.dll");
    let f = m.fix(&pkg(Some(12), false));
    assert_eq!(f.key, "fix_lib_cudnn");
    assert_eq!(f.param("cuda"), Some("12"));
    assert_eq!(m.fix(&pkg(None, false)).key, "fix_lib_cudnn_any");
    // A package that does not look in the nvidia-* wheels' folders (torch on Windows):
    // the toolkit, no pip wheel.
    let no_wheels = Package {
        finds_nvidia_wheels: false,
        ..pkg(Some(12), false)
    };
    assert_eq!(m.fix(&no_wheels).key, "fix_lib_cudnn_toolkit");
    assert_eq!(
        missing("cublas64_12.dll").fix(&no_wheels).key,
        "fix_lib_cuda_toolkit"
    );
    // torch's Windows CUDA wheels bring cuDNN: a missing one is a damaged install.
    assert_eq!(m.fix(&pkg(Some(12), true)).key, "fix_lib_bundled");
    assert!(m.reinstall(&pkg(Some(12), true)));
    assert!(!m.reinstall(&pkg(Some(12), false)));
    assert_eq!(
        missing("zlibwapi.dll").fix(&pkg(None, true)).key,
        "fix_lib_zlib"
    );
    assert_eq!(
        missing("vcruntime140_1.dll").fix(&pkg(None, true)).key,
        "fix_lib_vc_redist"
    );
    assert_eq!(
        missing("libomp140.x86_64.dll").fix(&pkg(None, true)).key,
        "fix_lib_libomp"
    );
    assert_eq!(
        missing("nvcuda.dll").fix(&pkg(None, true)).key,
        "fix_lib_driver"
    );
    let u = missing("fbgemm_helper.dll");
    assert_eq!(u.fix(&pkg(None, false)).key, "fix_lib_unknown");
    assert!(u.reinstall(&pkg(None, false)));
    // The chain and Python's error are details of the finding's sentence.
    let msg = m.message(&pkg(None, false), "ImportError: DLL load failed");
    assert_eq!(msg.key, "doctor_library_missing");
    assert_eq!(
        msg.param("chain"),
        Some("_C.pyd → torch_cuda.dll → cudnn_ops64_9.dll")
    );
}

#[test]
fn torch_version_py_gives_the_cuda_major() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("version.py"),
        "from typing import Optional\n__version__ = '2.7.1+cu126'\ndebug = False\ncuda: Optional[str] = '12.6'\n",
    )
    .unwrap();
    assert_eq!(read_torch_cuda(d.path()).as_deref(), Some("12.6"));
    std::fs::write(d.path().join("version.py"), "cuda = None\n").unwrap();
    assert_eq!(read_torch_cuda(d.path()), None);
}

#[test]
fn loads_of_other_packages_are_classified() {
    // ctypes on Windows (Python >= 3.8): the file it was asked to load.
    assert_eq!(
        classify(
            "FileNotFoundError: Could not find module 'C:\\x\\capi\\onnxruntime_providers_cuda.dll' (or one of its dependencies). Try using the full path with constructor syntax."
        ),
        Some(LoadError::PackageDll {
            file: "onnxruntime_providers_cuda.dll".into()
        })
    );
    // A library the package's own loader asked for by name.
    for (text, name) in [
        (
            "RuntimeError: Library cublas64_12.dll is not found or cannot be loaded",
            "cublas64_12.dll",
        ),
        (
            "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded",
            "libcublas.so.12",
        ),
        (
            "Could not load library cudnn_ops64_9.dll. Error code 126",
            "cudnn_ops64_9.dll",
        ),
        (
            "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
            "zlibwapi.dll",
        ),
    ] {
        assert_eq!(
            classify(text),
            Some(LoadError::Named { name: name.into() }),
            "{text}"
        );
    }
    // Not a library: no class.
    assert_eq!(classify("RuntimeError: Library is busy"), None);
}
