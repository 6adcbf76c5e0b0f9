//! Naming the missing library (#33): `doctor` with a stand-in Python whose `import torch`
//! fails to load a DLL, over a Windows-layout folder of real PE files (`_C.pyd →
//! torch_python.dll → torch_cuda.dll → cudnn_ops64_9.dll`), names the DLL and its fix in
//! English and Chinese; an ELF tree the same through `DT_NEEDED` and `$ORIGIN`.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{elf, pe_imports::dll};
use cuda_setup_core::compat::Os;
use cuda_setup_core::platform::Host;
use cuda_setup_core::verify::missing_library::{self, Interpreter, Provider};

fn write(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// A Windows machine's files under `root`: Python 3.11 in `Python311`, a venv with a
/// CUDA torch whose `cudnn_ops64_9.dll` is gone, System32 with the VC++ runtime.
struct Win {
    root: PathBuf,
    torch: PathBuf,
    python: PathBuf,
}

fn windows_layout(root: &Path) -> Win {
    let base = root.join("Python311");
    let venv = root.join("venv");
    let torch = venv.join("Lib/site-packages/torch");
    let lib = torch.join("lib");
    write(
        &torch.join("_C.cp311-win_amd64.pyd"),
        &dll(&["torch_python.dll", "python311.dll", "KERNEL32.dll"]),
    );
    write(
        &lib.join("torch_python.dll"),
        &dll(&[
            "torch_cuda.dll",
            "c10.dll",
            "api-ms-win-crt-heap-l1-1-0.dll",
        ]),
    );
    write(
        &lib.join("torch_cuda.dll"),
        &dll(&[
            "cudnn_ops64_9.dll",
            "cublas64_12.dll",
            "VCRUNTIME140.dll",
            "VCRUNTIME140_1.dll",
        ]),
    );
    write(&lib.join("c10.dll"), &dll(&["KERNEL32.dll"]));
    write(&lib.join("cublas64_12.dll"), &dll(&["cudart64_12.dll"]));
    write(&lib.join("cudart64_12.dll"), &dll(&[]));
    write(&torch.join("version.py"), b"cuda: Optional[str] = '12.6'\n");
    write(&base.join("python311.dll"), &dll(&[]));
    write(&base.join("vcruntime140.dll"), &dll(&[]));
    let sys32 = root.join("Windows/System32");
    write(&sys32.join("vcruntime140_1.dll"), b"Windows' own");
    // The stand-in interpreter: answers the doctor's probe as a Windows Python would.
    let python = venv.join("Scripts/python");
    let probe = serde_json::json!({
        "python": "3.11.9",
        "executable": venv.join("Scripts/python.exe"),
        "platform": "win32",
        "exec_prefix": venv,
        "base_exec_prefix": base,
        "torch": null,
        "torch_error": {
            "kind": "import_failed",
            "detail": "ImportError: DLL load failed while importing _C: The specified module could not be found."
        },
        "check": null,
        "extension": null,
        "torch_dir": torch,
    });
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n*CUDA_SETUP_DOCTOR*) echo 'CUDA_SETUP_DOCTOR {probe}' ;;\n*) echo 'stand-in: no answer' >&2; exit 1 ;;\nesac\n"
    );
    write(&python, script.as_bytes());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    Win {
        root: root.to_path_buf(),
        torch,
        python,
    }
}

fn doctor(w: &Win, lang: &str, path: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["--lang", lang, "doctor", "--python"])
        .arg(&w.python)
        .env("SystemRoot", w.root.join("Windows"))
        .env("PATH", path)
        .env("LANG", "C")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn doctor_names_the_missing_cudnn_dll_in_english_and_chinese() {
    let d = tempfile::tempdir().unwrap();
    let w = windows_layout(d.path());
    // Before #33 the doctor said only "cannot be imported" and offered the VC++ runtime.
    let en = doctor(&w, "en", "/usr/bin:/bin");
    assert!(
        en.contains("PyTorch cannot start: the file cudnn_ops64_9.dll it needs is missing."),
        "{en}"
    );
    assert!(
        en.contains(
            "_C.cp311-win_amd64.pyd → torch_python.dll → torch_cuda.dll → cudnn_ops64_9.dll"
        ),
        "{en}"
    );
    // torch's Windows CUDA wheel brings cuDNN itself (cudart64_12.dll is in torch\lib):
    // its copy is gone, and reinstalling PyTorch is the fix.
    assert!(
        en.contains("PyTorch brings its own cudnn_ops64_9.dll, and it is missing from"),
        "{en}"
    );
    assert!(en.contains("-m pip uninstall -y torch"), "{en}");
    // The present DLLs are not named: the VC++ runtime in python.exe's folder and in
    // System32, cuBLAS and its cudart in torch\lib.
    for present in ["VCRUNTIME140", "cublas64_12.dll is", "cudart64_12.dll is"] {
        assert!(!en.contains(present), "{present}: {en}");
    }
    let zh = doctor(&w, "zh", "/usr/bin:/bin");
    assert!(
        zh.contains("PyTorch 无法启动：缺少它需要的文件 cudnn_ops64_9.dll。"),
        "{zh}"
    );
    assert!(zh.contains("PyTorch 自带 cudnn_ops64_9.dll"), "{zh}");
    println!("---- en ----\n{en}\n---- zh ----\n{zh}");
}

#[test]
fn a_dll_only_on_path_is_missing_and_the_doctor_says_path_does_not_count() {
    let d = tempfile::tempdir().unwrap();
    let w = windows_layout(d.path());
    // A torch whose wheel does not bring CUDA (its cudart is gone too), with cuDNN only
    // in a toolkit folder on PATH.
    std::fs::remove_file(w.torch.join("lib/cudart64_12.dll")).unwrap();
    std::fs::remove_file(w.torch.join("lib/cublas64_12.dll")).unwrap();
    let tk = d.path().join("CUDA/v12.6/bin");
    write(&tk.join("cudnn_ops64_9.dll"), &dll(&[]));
    write(&tk.join("cublas64_12.dll"), &dll(&[]));
    let path = format!("{}:/usr/bin:/bin", tk.display());
    let en = doctor(&w, "en", &path);
    assert!(
        en.contains(&format!(
            "the file cudnn_ops64_9.dll it needs is not where Python looks. A copy is in {}, which is on PATH, but since Python 3.8 PATH is no longer searched",
            tk.display()
        )),
        "{en}"
    );
    // torch on Windows looks in the toolkit torch was built for, never in the nvidia-*
    // wheels' folders: no pip wheel is offered.
    assert!(
        en.contains("Install cuDNN 9 for CUDA 12 on cuda-setup's cuDNN page"),
        "{en}"
    );
    assert!(!en.contains("nvidia-cudnn-cu12"), "{en}");
    let zh = doctor(&w, "zh", &path);
    assert!(
        zh.contains("从 Python 3.8 起，模块需要的文件不再从 PATH 查找"),
        "{zh}"
    );
    assert!(zh.contains("安装适用于 CUDA 12 的 cuDNN 9"), "{zh}");
    println!("---- en ----\n{en}\n---- zh ----\n{zh}");
}

#[test]
fn an_elf_tree_names_the_missing_needed_library() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("venv/lib/python3.11/site-packages");
    let torch = site.join("torch");
    // Real shared objects (support::elf): libtorch_global_deps.so needs libcudart.so.12,
    // found in the nvidia-* wheel torch preloads; libcudnn.so.9 is in no folder.
    elf::write_library(
        &torch.join("lib"),
        "libtorch_global_deps.so",
        &["libcudart.so.12", "libcudnn.so.9"],
        &[],
    );
    elf::write_library(
        &site.join("nvidia/cuda_runtime/lib"),
        "libcudart.so.12",
        &[],
        &[],
    );
    let host = Host::sandbox(Os::Linux, d.path(), BTreeMap::new());
    let py = Interpreter {
        os: Os::Linux,
        version: Some("3.11.9".parse().unwrap()),
        executable: d.path().join("venv/bin/python3"),
        exec_prefix: None,
        base_exec_prefix: None,
    };
    let pkg = missing_library::torch_package(&host, &py, &torch);
    let error = "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory";
    let m = missing_library::explain(&host, &py, &pkg, error).unwrap();
    assert_eq!(m.name, "libcudnn.so.9");
    assert_eq!(m.chain, "libtorch_global_deps.so → libcudnn.so.9");
    assert_eq!(m.provider, Provider::Cudnn { major: 9 });
    assert!(
        m.also.is_empty(),
        "libcudart.so.12 is preloaded: {:?}",
        m.also
    );
    // In the default folders under the root, it is found: only the error's name is left.
    elf::write_library(&d.path().join("usr/lib"), "libcudnn.so.9", &[], &[]);
    let m = missing_library::explain(&host, &py, &pkg, error).unwrap();
    assert_eq!(m.chain, "libcudnn.so.9", "named by the error alone");
}
