//! Real-layout cuDNN zips, built by the tests with NVIDIA's file names (compat dossier
//! §5.3), real-format cudnn_version.h, and DLL bytes that mix code-like incompressible
//! data with compressible runs, as real DLLs do.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

use zip::write::SimpleFileOptions;

// (Its own copy: the benchmarks include this file alone, by path.)
#[allow(clippy::duplicate_mod)]
#[path = "pe.rs"]
mod pe;

pub const DLLS_9: &[&str] = &[
    "cudnn64_9.dll",
    "cudnn_graph64_9.dll",
    "cudnn_ops64_9.dll",
    "cudnn_cnn64_9.dll",
    "cudnn_adv64_9.dll",
    "cudnn_heuristic64_9.dll",
    "cudnn_engines_precompiled64_9.dll",
    "cudnn_engines_runtime_compiled64_9.dll",
];
pub const HEADERS_9: &[&str] = &[
    "cudnn.h",
    "cudnn_adv.h",
    "cudnn_backend.h",
    "cudnn_cnn.h",
    "cudnn_graph.h",
    "cudnn_ops.h",
];
pub const DLLS_8: &[&str] = &[
    "cudnn64_8.dll",
    "cudnn_ops_infer64_8.dll",
    "cudnn_ops_train64_8.dll",
    "cudnn_cnn_infer64_8.dll",
    "cudnn_cnn_train64_8.dll",
    "cudnn_adv_infer64_8.dll",
    "cudnn_adv_train64_8.dll",
];
pub const HEADERS_8: &[&str] = &[
    "cudnn.h",
    "cudnn_adv_infer.h",
    "cudnn_adv_train.h",
    "cudnn_backend.h",
    "cudnn_cnn_infer.h",
    "cudnn_cnn_train.h",
    "cudnn_ops_infer.h",
    "cudnn_ops_train.h",
];

/// A cudnn_version.h in NVIDIA's format (the 9.27 fixture with its numbers replaced).
pub fn version_header(major: u32, minor: u32, patch: u32) -> String {
    let real = include_str!("../fixtures/detect/cudnn_version-9.27.h");
    real.replace(
        "#define CUDNN_MAJOR 9",
        &format!("#define CUDNN_MAJOR {major}"),
    )
    .replace(
        "#define CUDNN_MINOR 27",
        &format!("#define CUDNN_MINOR {minor}"),
    )
    .replace(
        "#define CUDNN_PATCHLEVEL 0",
        &format!("#define CUDNN_PATCHLEVEL {patch}"),
    )
}

/// DLL-like bytes: 3/4 incompressible, 1/4 zero runs.
pub fn dll_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut out = super::server::pattern(len, seed);
    for (i, chunk) in out.chunks_mut(4096).enumerate() {
        if i % 4 == 3 {
            chunk.fill(0);
        }
    }
    out
}

pub struct Spec {
    /// 4-part version, e.g. "9.27.0.42".
    pub version: &'static str,
    pub cuda_major: u32,
    /// DLL bytes per file.
    pub dll_size: usize,
}

impl Spec {
    pub fn top(&self) -> String {
        format!(
            "cudnn-windows-x86_64-{}_cuda{}-archive",
            self.version, self.cuda_major
        )
    }

    fn parts(&self) -> (u32, u32, u32) {
        let p: Vec<u32> = self
            .version
            .split('.')
            .map(|s| s.parse().unwrap())
            .collect();
        (p[0], p[1], p[2])
    }

    /// The archive's files: (path inside the archive, bytes).
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let top = self.top();
        let (major, minor, patch) = self.parts();
        // DLLs move from bin/ to bin/x64/ at 9.18 (dossier §5.3).
        let bin = if (major, minor) >= (9, 18) {
            "bin/x64"
        } else {
            "bin"
        };
        let (dlls, headers) = if major >= 9 {
            (DLLS_9, HEADERS_9)
        } else {
            (DLLS_8, HEADERS_8)
        };
        let mut files = Vec::new();
        for (i, d) in dlls.iter().enumerate() {
            files.push((
                format!("{top}/{bin}/{d}"),
                dll_bytes(self.dll_size, (major * 100 + minor) as u64 * 31 + i as u64),
            ));
            let lib = d.replace(".dll", ".lib");
            files.push((
                format!("{top}/lib/x64/{lib}"),
                format!("import library {lib} {}", self.version).into_bytes(),
            ));
        }
        files.push((
            format!("{top}/lib/x64/cudnn.lib"),
            b"import library cudnn.lib".to_vec(),
        ));
        for h in headers {
            files.push((
                format!("{top}/include/{h}"),
                format!("/* {h} {} */\n#pragma once\n", self.version).into_bytes(),
            ));
        }
        files.push((
            format!("{top}/include/cudnn_version.h"),
            version_header(major, minor, patch).into_bytes(),
        ));
        files.push((
            format!("{top}/LICENSE"),
            b"NVIDIA Software License Agreement (stand-in text)\n".to_vec(),
        ));
        files
    }

    pub fn write(&self, path: &Path) {
        write_zip(path, &self.files(), true);
    }
}

/// Writes `files` as a zip (with directory entries, as NVIDIA's zips have).
pub fn write_zip(path: &Path, files: &[(String, Vec<u8>)], dir_entries: bool) {
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(6))
        .large_file(false);
    let mut dirs = std::collections::BTreeSet::new();
    for (name, bytes) in files {
        if dir_entries {
            let mut d = String::new();
            for comp in name.split('/').collect::<Vec<_>>().split_last().unwrap().1 {
                d.push_str(comp);
                d.push('/');
                if dirs.insert(d.clone()) {
                    z.add_directory(d.clone(), opts).unwrap();
                }
            }
        }
        z.start_file(name.clone(), opts).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap();
}

/// A Windows-layout CUDA toolkit folder (`vX.Y`): version.json, nvcc.exe, the runtime DLL
/// where that major keeps it, an include and lib/x64.
pub fn toolkit(root: &Path, version: &str) -> std::path::PathBuf {
    let mm: Vec<&str> = version.split('.').collect();
    let dir = root.join(format!("v{}.{}", mm[0], mm[1]));
    let major: u32 = mm[0].parse().unwrap();
    let rt = if major >= 13 {
        dir.join("bin/x64")
    } else {
        dir.join("bin")
    };
    std::fs::create_dir_all(&rt).unwrap();
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::fs::create_dir_all(dir.join("lib/x64")).unwrap();
    std::fs::write(
        dir.join("version.json"),
        format!(r#"{{"cuda":{{"name":"CUDA SDK","version":"{version}"}}}}"#),
    )
    .unwrap();
    std::fs::write(dir.join("bin/nvcc.exe"), b"MZ stand-in nvcc").unwrap();
    std::fs::write(
        rt.join(format!("cudart64_{major}.dll")),
        b"MZ stand-in cudart",
    )
    .unwrap();
    std::fs::write(dir.join("include/cuda_runtime.h"), b"/* cuda_runtime.h */").unwrap();
    std::fs::write(dir.join("lib/x64/cudart.lib"), b"cudart.lib").unwrap();
    dir
}

/// The libraries of NVIDIA's `nvidia-cudnn-cu13` 9.27.0.42 wheels (read from PyPI's files).
pub const WHEEL_DLLS: &[&str] = &[
    "cudnn64_9.dll",
    "cudnn_adv64_9.dll",
    "cudnn_cnn64_9.dll",
    "cudnn_engines_precompiled64_9.dll",
    "cudnn_engines_runtime_compiled64_9.dll",
    "cudnn_engines_tensor_ir64_9.dll",
    "cudnn_ext64_9.dll",
    "cudnn_graph64_9.dll",
    "cudnn_heuristic64_9.dll",
    "cudnn_ops64_9.dll",
];
pub const WHEEL_SOS: &[&str] = &[
    "libcudnn.so.9",
    "libcudnn_adv.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_engines_tensor_ir.so.9",
    "libcudnn_ext.so.9",
    "libcudnn_graph.so.9",
    "libcudnn_heuristic.so.9",
    "libcudnn_ops.so.9",
];

/// What a stand-in wheel DLL exports: the main library its API, each sub-library its
/// version check (`cudnn_adv64_9.dll` → `cudnnAdvVersionCheck`), as NVIDIA's do.
pub fn wheel_dll_exports(dll: &str) -> Vec<String> {
    let stem = dll.split("64_").next().unwrap_or(dll);
    if stem == "cudnn" {
        return [
            "cudnnCreate",
            "cudnnDestroy",
            "cudnnGetErrorString",
            "cudnnGetVersion",
        ]
        .map(String::from)
        .to_vec();
    }
    let camel: String = stem
        .split('_')
        .skip(1)
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    vec![format!("cudnn{camel}VersionCheck")]
}

/// A real x64 DLL (`pe.rs`) exporting [`wheel_dll_exports`], followed by DLL-like bytes
/// to 64 KiB (a zip of it keeps a real DLL's ratio).
pub fn wheel_dll(dll: &str, seed: u64) -> Vec<u8> {
    let names = wheel_dll_exports(dll);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut bytes = pe::dll(dll, &names);
    let rest = (64usize << 10).saturating_sub(bytes.len());
    bytes.extend(dll_bytes(rest, seed));
    bytes
}

/// A `nvidia-cudnn-cuNN` wheel with NVIDIA's layout: `nvidia/cudnn/bin/*.dll` (Windows)
/// or `nvidia/cudnn/lib/*.so.9` (Linux), `nvidia/cudnn/include/`, and the dist-info.
/// Returns the file name pip would give it.
pub fn write_cudnn_wheel(dir: &Path, version: &str, cuda_major: u32, windows: bool) -> String {
    let p: Vec<u32> = version.split('.').map(|s| s.parse().unwrap()).collect();
    let dist = format!("nvidia_cudnn_cu{cuda_major}-{version}");
    let tag = if windows {
        "win_amd64"
    } else {
        "manylinux_2_27_x86_64"
    };
    let name = format!("{dist}-py3-none-{tag}.whl");
    let mut files = Vec::new();
    if windows {
        for (i, d) in WHEEL_DLLS.iter().enumerate() {
            files.push((format!("nvidia/cudnn/bin/{d}"), wheel_dll(d, i as u64)));
        }
    } else {
        for (i, so) in WHEEL_SOS.iter().enumerate() {
            files.push((
                format!("nvidia/cudnn/lib/{so}"),
                dll_bytes(64 << 10, 50 + i as u64),
            ));
        }
    }
    for h in HEADERS_9 {
        files.push((
            format!("nvidia/cudnn/include/{h}"),
            format!("/* {h} {version} */\n#pragma once\n").into_bytes(),
        ));
    }
    files.push((
        "nvidia/cudnn/include/cudnn_version.h".into(),
        version_header(p[0], p[1], p[2]).into_bytes(),
    ));
    let info = format!("{dist}.dist-info");
    files.push((
        format!("{info}/licenses/License.txt"),
        b"NVIDIA Software License Agreement (stand-in text)\n".to_vec(),
    ));
    files.push((
        format!("{info}/METADATA"),
        format!("Metadata-Version: 2.4\nName: nvidia-cudnn-cu{cuda_major}\nVersion: {version}\n")
            .into_bytes(),
    ));
    files.push((
        format!("{info}/WHEEL"),
        b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\n".to_vec(),
    ));
    files.push((format!("{info}/top_level.txt"), b"nvidia\n".to_vec()));
    files.push((format!("{info}/RECORD"), b"".to_vec()));
    write_zip(&dir.join(&name), &files, false);
    name
}
