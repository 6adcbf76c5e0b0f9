//! NVIDIA's real component wheels, fetched once with pip (cached under the target
//! folder), served on loopback as a PyPI simple index: PEP 691 JSON under `/simple/`,
//! PEP 503 HTML under `/html/`, files under `/files/`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::server::{Body, Server};

/// The release the tests assemble and the pins its `cuda-toolkit` metapackage names for
/// the `nvcc`, `cudart` and `cccl` components.
pub const TOOLKIT: &str = "13.5.0";
pub const PINS: &[&str] = &[
    "cuda-toolkit==13.5.0",
    "nvidia-cuda-nvcc==13.5.37",
    "nvidia-nvvm==13.5.37",
    "nvidia-cuda-crt==13.5.37",
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-cuda-cccl==13.3.5.0.6",
];
pub const COMPONENTS: &str = "nvcc,cudart,cccl";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Platform {
    Linux,
    Windows,
}

static FETCH: Mutex<()> = Mutex::new(());

/// The folder holding the wheels for `p`, downloading them with pip the first time.
pub fn cached(p: Platform) -> PathBuf {
    let _guard = FETCH.lock().unwrap_or_else(|e| e.into_inner());
    let (name, tags): (&str, &[&str]) = match p {
        Platform::Linux => (
            "linux",
            &[
                "manylinux_2_17_x86_64",
                "manylinux2014_x86_64",
                "manylinux_2_12_x86_64",
                "manylinux2010_x86_64",
            ],
        ),
        Platform::Windows => ("win", &["win_amd64"]),
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("wheels")
        .join(name);
    if std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0) >= PINS.len() {
        return dir;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .expect("these tests fetch NVIDIA's wheels with pip: install Python 3 with pip");
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.11",
    ]);
    for t in tags {
        cmd.args(["--platform", t]);
    }
    cmd.arg("-d").arg(&dir).args(PINS);
    let out = cmd.output().expect("run pip");
    assert!(
        out.status.success(),
        "pip download failed (these tests need PyPI):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// One file the index lists.
#[derive(Clone, Debug)]
pub struct IndexFile {
    pub project: String,
    pub filename: String,
    pub path: PathBuf,
    pub sha256: String,
    pub size: u64,
}

pub fn sha256_file(p: &Path) -> String {
    let mut h = Sha256::new();
    let mut f = std::fs::File::open(p).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = std::io::Read::read(&mut f, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The index entries for every wheel in `dirs`.
pub fn files(dirs: &[&Path]) -> Vec<IndexFile> {
    let mut out = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let filename = e.file_name().to_string_lossy().into_owned();
            if !filename.ends_with(".whl") {
                continue;
            }
            let path = e.path();
            out.push(IndexFile {
                project: cuda_setup_core::wheels::index::normalize(
                    filename.split('-').next().unwrap(),
                ),
                sha256: sha256_file(&path),
                size: std::fs::metadata(&path).unwrap().len(),
                filename,
                path,
            });
        }
    }
    out.sort_by(|a, b| a.filename.cmp(&b.filename));
    out
}

/// Serves `files` as an index: `/simple/<project>/` (PEP 691 JSON, relative file URLs)
/// and `/html/<project>/` (PEP 503 HTML, with `#sha256=` fragments).
pub fn serve(files: &[IndexFile]) -> Server {
    let server = Server::start();
    let mut projects: Vec<&str> = files.iter().map(|f| f.project.as_str()).collect();
    projects.sort();
    projects.dedup();
    for p in projects {
        let mine: Vec<&IndexFile> = files.iter().filter(|f| f.project == p).collect();
        let json = serde_json::json!({
            "meta": {"api-version": "1.1"},
            "name": p,
            "files": mine.iter().map(|f| serde_json::json!({
                "filename": f.filename,
                "url": format!("../../files/{}", f.filename),
                "hashes": {"sha256": f.sha256},
                "size": f.size,
                "yanked": false,
            })).collect::<Vec<_>>(),
        });
        server.add_typed(
            &format!("/simple/{p}/"),
            Body::Bytes(Arc::new(serde_json::to_vec(&json).unwrap())),
            "application/vnd.pypi.simple.v1+json",
        );
        let links: String = mine
            .iter()
            .map(|f| {
                format!(
                    "    <a href=\"/files/{0}#sha256={1}\">{0}</a><br/>\n",
                    f.filename, f.sha256
                )
            })
            .collect();
        let html =
            format!("<!DOCTYPE html>\n<html><body><h1>Links for {p}</h1>\n{links}</body></html>\n");
        server.add_typed(
            &format!("/html/{p}/"),
            Body::Bytes(Arc::new(html.into_bytes())),
            "text/html",
        );
    }
    for f in files {
        server.add(
            &format!("/files/{}", f.filename),
            Body::File(f.path.clone(), f.size),
        );
    }
    server
}

/// A small wheel: `files` as (name, bytes, executable), plus a dist-info METADATA.
pub fn write_wheel(path: &Path, metadata: &str, files: &[(&str, &[u8], bool)]) {
    use std::io::Write;
    use zip::write::SimpleFileOptions;
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stem = path.file_name().unwrap().to_string_lossy();
    let mut parts = stem.split('-');
    let info = format!(
        "{}-{}.dist-info",
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    for (name, bytes, exec) in files {
        z.start_file(
            *name,
            opts.unix_permissions(if *exec { 0o755 } else { 0o644 }),
        )
        .unwrap();
        z.write_all(bytes).unwrap();
    }
    z.start_file(format!("{info}/METADATA"), opts).unwrap();
    z.write_all(metadata.as_bytes()).unwrap();
    z.finish().unwrap();
}

/// Stand-ins for NVIDIA's 13.5 wheels, small and built here (no network): the
/// `cuda-toolkit` metapackage pinning nvcc and the runtime for Linux, an nvcc wheel, and
/// a runtime wheel of version `runtime` (without `libcudart.so.13` unless `cudart`).
/// `nvcc` names the build in its output, so a test can tell one tree from another.
pub fn standin(dir: &Path, runtime: &str, cudart: bool) -> Vec<IndexFile> {
    std::fs::create_dir_all(dir).unwrap();
    let tag = "py3-none-manylinux_2_17_x86_64.whl";
    write_wheel(
        &dir.join(format!("cuda_toolkit-{TOOLKIT}-py3-none-any.whl")),
        &format!(
            "Metadata-Version: 2.4\nName: cuda-toolkit\nVersion: {TOOLKIT}\n\
             Provides-Extra: nvcc\nProvides-Extra: cudart\n\
             Requires-Dist: nvidia-cuda-nvcc==13.5.*; extra == 'nvcc'\n\
             Requires-Dist: nvidia-cuda-runtime==13.5.*; extra == 'cudart'\n"
        ),
        &[],
    );
    write_wheel(
        &dir.join(format!("nvidia_cuda_nvcc-13.5.37-{tag}")),
        "Metadata-Version: 2.4\nName: nvidia-cuda-nvcc\nVersion: 13.5.37\n",
        &[(
            "nvidia/cu13/bin/nvcc",
            format!("#!/bin/sh\necho 'Cuda compilation tools, release 13.5, V13.5.37 (runtime {runtime})'\n")
                .as_bytes(),
            true,
        )],
    );
    let lib = format!("libcudart {runtime}\n");
    let mut files: Vec<(&str, &[u8], bool)> = vec![(
        "nvidia/cu13/include/cuda_runtime.h",
        b"#pragma once\n",
        false,
    )];
    if cudart {
        files.push(("nvidia/cu13/lib/libcudart.so.13", lib.as_bytes(), false));
    }
    write_wheel(
        &dir.join(format!("nvidia_cuda_runtime-{runtime}-{tag}")),
        &format!("Metadata-Version: 2.4\nName: nvidia-cuda-runtime\nVersion: {runtime}\n"),
        &files,
    );
    self::files(&[dir])
}
