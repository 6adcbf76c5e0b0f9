//! Completes a toolkit tree the wheels method assembled so developers can build with it.
//! OWNER: #19 helper "layout" (H1).
//!
//! What NVIDIA's installer lays down and the wheels lack:
//!
//! | Linux                                   | Windows                                  |
//! |-----------------------------------------|------------------------------------------|
//! | `lib64/libX.so → libX.so.N`             | `lib\x64\X.lib` from `bin\x64\X64_N.dll` |
//! | `lib64/stubs/libcuda.so` (from cuda.h)  | (`cuda.lib` is in the runtime wheel)     |
//! | `pkgconfig/cudart-X.Y.pc`, …            | —                                        |
//! | `bin/nvcc.profile` when there is none   | `bin\nvcc.profile` when there is none    |
//!
//! `lib64/stubs/libnvidia-ml.so` is never made: no wheel carries it or a header to make it
//! from; it is listed in [`Completion::no_stub`]. CCCL's CMake files are already where
//! `find_package` looks (`lib64/cmake/cccl/`, `lib\cmake\cccl\`, the layout of
//! `wheels::assemble`). Nothing is written through a symbolic link or outside `dir`; what
//! is already there is kept.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Completion, DevError};
use crate::compat::Os;
use crate::version::Version;

/// The driver stub, relative to the toolkit folder (Linux).
pub const DRIVER_STUB: &str = "lib64/stubs/libcuda.so";
/// The management library's stub NVIDIA's runfile lays down and no wheel carries.
pub const NVML_STUB: &str = "lib64/stubs/libnvidia-ml.so";
/// Its Windows counterpart, which no wheel carries either.
pub const NVML_IMPORT_LIB: &str = "lib/x64/nvml.lib";
/// `cuda.h` is about 1.2 MB; anything far larger is not NVIDIA's header.
const MAX_HEADER: u64 = 32 << 20;

/// The libraries NVIDIA's runfile writes a pkg-config file for (`pkgconfig/<name>-X.Y.pc`),
/// with its description, written when `lib64/lib<name>.so*` is in the tree.
const PKGCONFIG: &[(&str, &str)] = &[
    ("cublas", "CUBLAS Library"),
    ("cudart", "CUDA Runtime Library"),
    ("cufft", "CUFFT Library"),
    ("cufftw", "CUFFTW Library"),
    ("curand", "CURAND Library"),
    (
        "cusolver",
        "A LAPACK-like library on dense and sparse linear algebra",
    ),
    ("cusparse", "CUSPARSE Library"),
    ("nppc", "NPP Core Library"),
    ("nppial", "NPP Arithmetic and Logic Library"),
    ("nppicc", "NPP Color Conversion Library"),
    ("nppidei", "NPP Data Exchange and Initialization Library"),
    ("nppif", "NPP Filtering Library"),
    ("nppig", "NPP Geometry Library"),
    ("nppim", "NPP Morphological Library"),
    ("nppist", "NPP Statistics Library"),
    ("nppisu", "NPP Support Library"),
    ("nppitc", "NPP Threshold and Compare Library"),
    ("npps", "NPP Signal Processing Library"),
    ("nvjpeg", "NVJPEG Library"),
    ("nvrtc", "A runtime compilation library for CUDA C++"),
];

/// NVIDIA's Linux `nvcc.profile`, for this layout (`lib64/`, no `targets/`).
const LINUX_PROFILE: &str = r#"
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
SYSTEM_INCLUDES +=  "-isystem" "$(TOP)/include/cccl" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"#;

/// NVIDIA's Windows `nvcc.profile` (the wheels' own).
const WINDOWS_PROFILE: &str = r#"
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

PATH            += $(CICC_PATH);$(_HERE_);$(TOP)/lib;

INCLUDES        += "-I$(TOP)/include" "-I$(TOP)/include/cccl" $(_SPACE_)
SYSTEM_INCLUDES +=  $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "/LIBPATH:$(TOP)/lib/$(_WIN_PLATFORM_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"#;

/// Adds to the tree at `dir` (a staging folder or a finished tree of ours) what NVIDIA's
/// installer has and the wheels lack. Idempotent: what is already there is kept.
pub fn complete(os: Os, dir: &Path, version: &Version) -> Result<Completion, DevError> {
    complete_except(os, dir, version, &[])
}

/// [`complete`], leaving alone the files in `others` (paths relative to `dir`): cuDNN's,
/// whose own transaction links them and whose manifest the caller reads (this module
/// does not know cuDNN's records; `cudnn` uses this one).
pub fn complete_except(
    os: Os,
    dir: &Path,
    version: &Version,
    others: &[String],
) -> Result<Completion, DevError> {
    let mut c = Completion::default();
    match os {
        Os::Linux => linux(dir, version, others, &mut c)?,
        Os::Windows => {
            let made = super::implib::add_import_libs_except(dir, others)?;
            c.import_libs = made.made;
            c.unreadable = made.unreadable;
            // NVIDIA's installer lays down the management library's import library; no
            // wheel carries it or the DLL (the driver's) to make it from.
            if !dir.join(NVML_IMPORT_LIB).exists() {
                c.no_stub.push(NVML_IMPORT_LIB.into());
            }
        }
    }
    profile(os, dir, &mut c)?;
    for v in [
        &mut c.links,
        &mut c.import_libs,
        &mut c.stubs,
        &mut c.files,
        &mut c.no_stub,
        &mut c.unreadable,
    ] {
        v.sort();
    }
    Ok(c)
}

fn linux(
    dir: &Path,
    version: &Version,
    others: &[String],
    c: &mut Completion,
) -> Result<(), DevError> {
    let Some(lib64) = real_dir(dir, "lib64")? else {
        // No libraries at all: nothing to link, no stub to put anywhere.
        c.no_stub.push(DRIVER_STUB.into());
        c.no_stub.push(NVML_STUB.into());
        return Ok(());
    };
    // cuDNN's files belong to its own transaction, which links them itself.
    let skip = |name: &str| others.iter().any(|p| p == &format!("lib64/{name}"));
    c.links = super::links::add_links_except(&lib64, &skip)?
        .into_iter()
        .map(|l| format!("lib64/{l}"))
        .collect();

    // The driver stub, from the toolkit's own cuda.h.
    let stub = dir.join(DRIVER_STUB);
    if std::fs::symlink_metadata(&stub).is_err() {
        let symbols = match header(dir, "include/cuda.h")? {
            Some(h) => super::stub::symbols_from_header(&h),
            None => vec![],
        };
        if symbols.is_empty() {
            c.no_stub.push(DRIVER_STUB.into());
        } else {
            let stubs = make_dir(dir, "lib64/stubs")?;
            super::stub::write_stub(&stubs.join("libcuda.so"), "libcuda.so.1", &symbols)?;
            c.stubs.push(DRIVER_STUB.into());
        }
    }
    if std::fs::symlink_metadata(dir.join(NVML_STUB)).is_err() {
        c.no_stub.push(NVML_STUB.into());
    }

    // pkg-config files, as the runfile writes them, for the libraries the tree has.
    let mm = format!("{}.{}", version.major(), version.minor());
    let has_lib = |name: &str| {
        let prefix = format!("lib{name}.so");
        std::fs::read_dir(&lib64).is_ok_and(|d| {
            d.flatten().any(|e| {
                let f = e.file_name().to_string_lossy().into_owned();
                f == prefix || f.strip_prefix(&prefix).is_some_and(|r| r.starts_with('.'))
            })
        })
    };
    let mut pcs: Vec<(String, String, &str)> = PKGCONFIG
        .iter()
        .filter(|(name, _)| has_lib(name))
        .map(|(name, what)| (name.to_string(), "lib64".to_string(), *what))
        .collect();
    if std::fs::symlink_metadata(&stub).is_ok() {
        pcs.push(("cuda".into(), "lib64/stubs".into(), "CUDA Driver Library"));
    }
    if !pcs.is_empty() {
        let folder = make_dir(dir, "pkgconfig")?;
        for (name, libdir, what) in pcs {
            let file = format!("{name}-{mm}.pc");
            let at = folder.join(&file);
            if std::fs::symlink_metadata(&at).is_ok() {
                continue;
            }
            write(&at, pkgconfig(&name, &libdir, what, &mm).as_bytes())?;
            c.files.push(format!("pkgconfig/{file}"));
        }
    }
    Ok(())
}

/// A pkg-config file as NVIDIA's runfile writes it, with the prefix found from the
/// file's own place (`${pcfiledir}/..`), so the tree can be renamed into place or moved.
fn pkgconfig(name: &str, libdir: &str, what: &str, mm: &str) -> String {
    format!(
        "cudaroot=${{pcfiledir}}/..\nlibdir=${{cudaroot}}/{libdir}\n\
         includedir=${{cudaroot}}/include\n\nName: {name}\nDescription: {what}\n\
         Version: {mm}\nLibs: -L${{libdir}} -l{name}\nCflags: -I${{includedir}}\n"
    )
}

/// `bin/nvcc.profile` when the tree has nvcc's folder and no profile. The wheels' own
/// profile is kept: on Linux it names `$(TOP)/lib` and `$(TOP)/lib/stubs`, which the
/// `lib → lib64` link of the assembled tree makes right.
fn profile(os: Os, dir: &Path, c: &mut Completion) -> Result<(), DevError> {
    let Some(bin) = real_dir(dir, "bin")? else {
        return Ok(());
    };
    let at = bin.join("nvcc.profile");
    if std::fs::symlink_metadata(&at).is_ok() {
        return Ok(());
    }
    let text = match os {
        Os::Linux => LINUX_PROFILE,
        Os::Windows => WINDOWS_PROFILE,
    };
    write(&at, text.as_bytes())?;
    c.files.push("bin/nvcc.profile".into());
    Ok(())
}

/// `dir/rel` when it is a real folder reached without a symbolic link; None when it is
/// not there; an error when something else stands in its place.
fn real_dir(dir: &Path, rel: &str) -> Result<Option<PathBuf>, DevError> {
    let p = crate::safe_path::inside_str(dir, rel).map_err(|e| DevError::Malformed {
        path: dir.join(rel),
        detail: e.to_string(),
    })?;
    match std::fs::symlink_metadata(&p) {
        Ok(m) if m.is_dir() => Ok(Some(p)),
        Ok(_) => Err(DevError::Malformed {
            path: p,
            detail: "is not a folder".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DevError::io(&p, e)),
    }
}

/// [`real_dir`], made when missing.
fn make_dir(dir: &Path, rel: &str) -> Result<PathBuf, DevError> {
    if let Some(p) = real_dir(dir, rel)? {
        return Ok(p);
    }
    let p = dir.join(rel);
    std::fs::create_dir_all(&p).map_err(|e| DevError::io(&p, e))?;
    Ok(p)
}

/// A header's text (bounded), None when it is not there as a plain file.
fn header(dir: &Path, rel: &str) -> Result<Option<String>, DevError> {
    let Ok(p) = crate::safe_path::inside_str(dir, rel) else {
        return Ok(None);
    };
    if !std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let f = std::fs::File::open(&p).map_err(|e| DevError::io(&p, e))?;
    let mut b = Vec::new();
    f.take(MAX_HEADER)
        .read_to_end(&mut b)
        .map_err(|e| DevError::io(&p, e))?;
    Ok(Some(String::from_utf8_lossy(&b).into_owned()))
}

fn write(at: &Path, bytes: &[u8]) -> Result<(), DevError> {
    std::fs::write(at, bytes).map_err(|e| DevError::io(at, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v() -> Version {
        "13.5.0".parse().unwrap()
    }

    /// A tree as the wheels lay it out on Linux: versioned names only, no stubs.
    #[cfg(unix)]
    fn wheel_tree(d: &Path, cuda_h: bool) {
        for f in [
            "bin/nvcc",
            "lib64/libcudart.so.13",
            "lib64/libcudart_static.a",
            "lib64/libcublas.so.13",
            "lib64/libcublasLt.so.13",
            "lib64/libnvvm.so.4",
            "lib64/cmake/cccl/cccl-config.cmake",
        ] {
            std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
            std::fs::write(d.join(f), f).unwrap();
        }
        if cuda_h {
            std::fs::create_dir_all(d.join("include")).unwrap();
            std::fs::write(
                d.join("include/cuda.h"),
                "#define cuMemAlloc cuMemAlloc_v2\nCUresult CUDAAPI cuInit(unsigned int Flags);\n",
            )
            .unwrap();
        }
    }

    #[cfg(unix)]
    #[test]
    fn linux_tree_gets_links_the_driver_stub_pkgconfig_and_a_profile_once() {
        let d = tempfile::tempdir().unwrap();
        wheel_tree(d.path(), true);
        let c = complete(Os::Linux, d.path(), &v()).unwrap();
        assert_eq!(
            c.links,
            [
                "lib64/libcublas.so",
                "lib64/libcublasLt.so",
                "lib64/libcudart.so",
                "lib64/libnvvm.so"
            ]
        );
        assert_eq!(c.stubs, [DRIVER_STUB]);
        assert_eq!(c.no_stub, [NVML_STUB]);
        assert_eq!(
            c.files,
            [
                "bin/nvcc.profile",
                "pkgconfig/cublas-13.5.pc",
                "pkgconfig/cuda-13.5.pc",
                "pkgconfig/cudart-13.5.pc"
            ]
        );
        let pc = std::fs::read_to_string(d.path().join("pkgconfig/cuda-13.5.pc")).unwrap();
        assert!(pc.contains("libdir=${cudaroot}/lib64/stubs\n"), "{pc}");
        assert!(pc.contains("Libs: -L${libdir} -lcuda\n"), "{pc}");
        let profile = std::fs::read_to_string(d.path().join("bin/nvcc.profile")).unwrap();
        assert!(profile.contains("\"-L$(TOP)/lib64/stubs\" \"-L$(TOP)/lib64\""));
        let stub = std::fs::read(d.path().join(DRIVER_STUB)).unwrap();
        assert_eq!(&stub[..4], b"\x7fELF");

        // Again: nothing new, nothing changed.
        let again = complete(Os::Linux, d.path(), &v()).unwrap();
        assert!(again.links.is_empty() && again.stubs.is_empty() && again.files.is_empty());
        assert_eq!(again.no_stub, [NVML_STUB]);
        assert_eq!(std::fs::read(d.path().join(DRIVER_STUB)).unwrap(), stub);
    }

    #[cfg(unix)]
    #[test]
    fn no_cuda_h_means_no_driver_stub_and_it_is_said() {
        let d = tempfile::tempdir().unwrap();
        wheel_tree(d.path(), false);
        let c = complete(Os::Linux, d.path(), &v()).unwrap();
        assert!(c.stubs.is_empty());
        assert_eq!(c.no_stub, [DRIVER_STUB, NVML_STUB]);
        assert!(!d.path().join("lib64/stubs").exists());
        assert!(!c.files.iter().any(|f| f.contains("cuda-13.5")));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_a_folder_is_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        wheel_tree(d.path(), true);
        std::os::unix::fs::symlink(outside.path(), d.path().join("pkgconfig")).unwrap();
        assert!(complete(Os::Linux, d.path(), &v()).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn files_of_another_transaction_are_left_to_it() {
        let d = tempfile::tempdir().unwrap();
        wheel_tree(d.path(), true);
        std::fs::write(d.path().join("lib64/libcudnn.so.9"), "x").unwrap();
        let c =
            complete_except(Os::Linux, d.path(), &v(), &["lib64/libcudnn.so.9".into()]).unwrap();
        assert!(
            !c.links.iter().any(|l| l.contains("cudnn")),
            "{:?}",
            c.links
        );
    }

    #[test]
    fn windows_tree_gets_a_profile_and_what_import_libraries_were_made() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("bin/x64")).unwrap();
        let c = complete(Os::Windows, d.path(), &v()).unwrap();
        assert_eq!(c.files, ["bin/nvcc.profile"]);
        assert!(c.links.is_empty() && c.stubs.is_empty());
        assert_eq!(c.no_stub, [NVML_IMPORT_LIB], "no wheel carries it: said");
        let p = std::fs::read_to_string(d.path().join("bin/nvcc.profile")).unwrap();
        assert!(p.contains("/LIBPATH:$(TOP)/lib/$(_WIN_PLATFORM_)"));
    }
}
