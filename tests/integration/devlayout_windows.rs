//! #19, Windows: the import libraries NVIDIA's wheels ship without (`cublas64_13.dll` and
//! no `cublas.lib`) are made from the DLLs' export tables. The DLLs here are real PE32+
//! files (`support::pe`), so the export tables read are real ones; the trees are plain
//! files, assembled on any OS (`--os windows`).

use crate::support;

use std::path::Path;

use cuda_setup_core::devlayout::implib::{self, ImportLibs};
use support::pe::Dll;

use support::wheels::CUBLAS_EXPORTS as CUBLAS;

fn names(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Every import library in `dir/lib/x64` names its DLL and lists exactly its exports.
fn assert_libs_match_dlls(dir: &Path) {
    for (dll, exports) in CUBLAS {
        let lib = implib::lib_name_for_dll(dll).unwrap();
        let (from, listed) = implib::read_import_lib(&dir.join("lib/x64").join(&lib))
            .unwrap_or_else(|e| panic!("lib/x64/{lib}: {e}"));
        assert_eq!(from, *dll, "{lib}");
        assert_eq!(listed, names(exports), "{lib}");
    }
}

#[test]
fn a_windows_toolkit_tree_gets_the_import_libraries_it_lacks() {
    let d = tempfile::tempdir().unwrap();
    let tk = d.path().join("v13.5");
    for (dll, exports) in CUBLAS {
        Dll::new(dll, exports).write(&tk.join("bin/x64").join(dll));
    }
    // The runtime wheel's own cudart.lib stays as it is; nvrtc-builtins gets none; a
    // damaged DLL is named, not fatal; a 12.x DLL in bin\ is looked at too.
    Dll::new("cudart64_13.dll", &["cudaMalloc"]).write(&tk.join("bin/x64/cudart64_13.dll"));
    Dll::new("nvrtc-builtins64_135.dll", &["x"])
        .write(&tk.join("bin/x64/nvrtc-builtins64_135.dll"));
    Dll::new("curand64_10.dll", &["curandCreateGenerator"]).write(&tk.join("bin/curand64_10.dll"));
    std::fs::write(tk.join("bin/x64/nvvm64_40_0.dll"), b"stand-in, no PE").unwrap();
    std::fs::create_dir_all(tk.join("lib/x64")).unwrap();
    std::fs::write(tk.join("lib/x64/cudart.lib"), b"the runtime wheel's").unwrap();

    let made = implib::add_import_libs(&tk).unwrap();
    assert_eq!(
        made,
        ImportLibs {
            made: [
                "lib/x64/cublas.lib",
                "lib/x64/cublasLt.lib",
                "lib/x64/curand.lib",
                "lib/x64/nvblas.lib",
            ]
            .map(String::from)
            .to_vec(),
            unreadable: vec!["bin/x64/nvvm64_40_0.dll".to_string()],
        }
    );
    assert_libs_match_dlls(&tk);
    assert_eq!(
        implib::read_import_lib(&tk.join("lib/x64/curand.lib"))
            .unwrap()
            .0,
        "curand64_10.dll"
    );
    assert_eq!(
        std::fs::read(tk.join("lib/x64/cudart.lib")).unwrap(),
        b"the runtime wheel's"
    );
    assert!(!tk.join("lib/x64/nvrtc-builtins.lib").exists());
    // Run again: the tree is complete, nothing is written.
    let snapshot = support::tree::files(&tk, &|_| false);
    let again = implib::add_import_libs(&tk).unwrap();
    assert!(again.made.is_empty(), "{again:?}");
    assert_eq!(support::tree::files(&tk, &|_| false), snapshot);
}

/// `install --method wheels --os windows` with a cuBLAS wheel like NVIDIA's (DLLs, no
/// `.lib`): the assembled tree has `lib\x64\cublas.lib` and its siblings, made from the
/// DLLs. (The tree is completed by `devlayout::complete`, which calls `add_import_libs`.)
#[cfg(all(unix, target_arch = "x86_64"))]
#[test]
fn install_with_wheels_for_windows_makes_cublas_lib_from_the_dll() {
    use std::process::Command;
    use support::wheels::{Platform, files, serve, toolkit_standins};

    let wheels = tempfile::tempdir().unwrap();
    let toolkit = toolkit_standins(&wheels.path().join("toolkit"), Platform::Windows);
    // Its cuBLAS wheel is NVIDIA's layout: three DLLs in bin/x86_64, headers, no .lib.
    let server = serve(&files(&[&toolkit]));
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .env("LANG", "C")
        .args([
            "install",
            "--unattended",
            "--goal",
            "developer",
            "--cuda",
            "13.5",
            "--method",
            "wheels",
            "--pypi-mirror",
            &server.url("/simple"),
            "--components",
            "nvcc,cudart,cccl,cublas",
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--os",
            "windows",
            "--root",
            root.path().to_str().unwrap(),
            "--connections",
            "2",
            "--no-cudnn",
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    let dir = root
        .path()
        .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.5");
    for (dll, _) in CUBLAS {
        assert!(dir.join("bin/x64").join(dll).is_file(), "{dll}: {text}");
    }
    assert_libs_match_dlls(&dir);
    // The runtime wheel's own import libraries are kept as NVIDIA made them.
    assert_eq!(
        std::fs::read(dir.join("lib/x64/cudart.lib")).unwrap(),
        b"stand-in for lib/x64/cudart.lib\n"
    );
}
