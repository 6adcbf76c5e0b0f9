//! The link names a developer's build needs from a toolkit, where NVIDIA's installer puts
//! them, and which of its sub-packages lays each one down.

use std::path::Path;

use serde::Serialize;

use crate::compat::Os;
use crate::version::Version;

/// One library a developer links: `-lcublas` / `cublas.lib`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkName {
    /// The name after `-l`: `cudart`, `cublas`, `cudnn`, `cuda`.
    pub lib: String,
    /// Where it must be, relative to the toolkit folder: `lib64/libcublas.so`,
    /// `lib64/stubs/libcuda.so`, `lib/x64/cublas.lib`.
    pub rel: String,
    pub present: bool,
    /// The Windows installer sub-package that lays it down (`cublas_dev_13.5`), where the
    /// dossier names one (§3.2); None on Linux (the runfile has no such names) and for
    /// cuDNN (not part of the installer).
    pub package: Option<String>,
}

/// The libraries the build check links, in link order, with the Windows installer
/// sub-package (without its `_X.Y`) that carries each import library, and whether the
/// library is always part of a toolkit. `cuda.lib`'s sub-package is not in the dossier:
/// None.
const LIBS: &[(&str, Option<&str>, Always)] = &[
    ("cudart", Some("cudart"), Always::Yes),
    ("cublas", Some("cublas_dev"), Always::IfInstalled),
    ("cublasLt", Some("cublas_dev"), Always::IfInstalled),
    ("cuda", None, Always::Yes),
];

#[derive(PartialEq)]
enum Always {
    Yes,
    /// Only when the toolkit carries the library itself (`libcublas.so.13`,
    /// `cublas64_13.dll`): a toolkit installed without cuBLAS (`--components
    /// nvcc,cudart`) has nothing to link, so no link name is missing; one with the
    /// library but not its link name (the installer's `cublas_13.5` without
    /// `cublas_dev_13.5`, a wheel) is what the check is for.
    IfInstalled,
}

/// The link names the build check needs for the toolkit at `dir`: cudart, the driver
/// (`cuda`, through the stubs on Linux), cuBLAS(Lt) when the toolkit carries cuBLAS and,
/// when `cudnn`, cuDNN.
pub fn link_names(os: Os, dir: &Path, version: &Version, cudnn: bool) -> Vec<LinkName> {
    let mm = format!("{}.{}", version.major(), version.minor());
    let mut out: Vec<LinkName> = LIBS
        .iter()
        .filter(|(lib, _, always)| *always == Always::Yes || carries(os, dir, lib))
        .map(|(lib, package, _)| {
            let rel = rel_of(os, lib);
            LinkName {
                lib: lib.to_string(),
                present: dir.join(&rel).exists(),
                rel,
                package: match os {
                    Os::Windows => package.map(|p| format!("{p}_{mm}")),
                    Os::Linux => None,
                },
            }
        })
        .collect();
    if cudnn {
        let rel = rel_of(os, "cudnn");
        out.push(LinkName {
            lib: "cudnn".into(),
            present: dir.join(&rel).exists(),
            rel,
            package: None,
        });
    }
    out
}

/// Whether the toolkit at `dir` carries library `lib` itself: a versioned `libX.so.N` in
/// `lib64/` (Linux), an `X64_N.dll` in `bin/x64/` (13.x) or `bin/` (Windows).
fn carries(os: Os, dir: &Path, lib: &str) -> bool {
    let (folders, prefix, suffix): (&[&str], String, &str) = match os {
        Os::Linux => (&["lib64"], format!("lib{lib}.so."), ""),
        Os::Windows => (
            &super::implib::DLL_DIRS,
            format!("{}64_", lib.to_ascii_lowercase()),
            ".dll",
        ),
    };
    folders.iter().any(|f| {
        std::fs::read_dir(dir.join(f)).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let name = match os {
                    Os::Windows => name.to_ascii_lowercase(),
                    Os::Linux => name,
                };
                name.starts_with(&prefix) && name.ends_with(suffix)
            })
        })
    })
}

/// Where the installer puts `lib`'s link name.
fn rel_of(os: Os, lib: &str) -> String {
    match (os, lib) {
        (Os::Linux, "cuda") => super::complete::DRIVER_STUB.into(),
        (Os::Linux, l) => format!("lib64/lib{l}.so"),
        (Os::Windows, l) => format!("lib/x64/{l}.lib"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_where_the_installer_puts_them_and_say_what_is_missing() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("lib64/stubs")).unwrap();
        std::fs::write(d.path().join("lib64/libcudart.so"), b"x").unwrap();
        std::fs::write(d.path().join("lib64/stubs/libcuda.so"), b"x").unwrap();
        let v: Version = "13.5.0".parse().unwrap();
        // No cuBLAS in the toolkit: nothing of it to link, nothing missing.
        let n = link_names(Os::Linux, d.path(), &v, false);
        assert!(n.iter().all(|n| n.present), "{n:?}");
        std::fs::write(d.path().join("lib64/libcublas.so.13"), b"x").unwrap();
        std::fs::write(d.path().join("lib64/libcublasLt.so.13"), b"x").unwrap();
        std::fs::create_dir_all(d.path().join("bin/x64")).unwrap();
        std::fs::write(d.path().join("bin/x64/cublas64_13.dll"), b"x").unwrap();
        let v: Version = "13.5.0".parse().unwrap();
        let n = link_names(Os::Linux, d.path(), &v, true);
        let missing: Vec<&str> = n
            .iter()
            .filter(|n| !n.present)
            .map(|n| n.rel.as_str())
            .collect();
        assert_eq!(
            missing,
            [
                "lib64/libcublas.so",
                "lib64/libcublasLt.so",
                "lib64/libcudnn.so"
            ]
        );
        let w = link_names(Os::Windows, d.path(), &v, false);
        assert_eq!(w[1].rel, "lib/x64/cublas.lib");
        assert_eq!(w[1].package.as_deref(), Some("cublas_dev_13.5"));
        assert!(w.iter().all(|n| n.lib != "cudnn"));
    }
}
