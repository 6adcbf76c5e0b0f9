//! The development layout: what a developer's build needs in a toolkit folder besides the
//! runtime — the unversioned link names (`libcublas.so`, `cublas.lib`), the driver stub
//! (`lib64/stubs/libcuda.so`), import libraries for DLLs NVIDIA's wheels ship without one,
//! pkg-config files, `nvcc.profile`'s folders — laid down the way NVIDIA's own installer
//! lays them, and the table of link names `verify`'s build check and `repair` look for.
//!
//! | part          | owner module  | what                                                     |
//! |---------------|---------------|----------------------------------------------------------|
//! | [`complete`]  | `complete.rs` | completes a tree the wheels method assembled (staging)    |
//! | [`links`]     | `links.rs`    | Linux: `libX.so → libX.so.N`                              |
//! | [`stub`]      | `stub.rs`     | Linux: `libcuda.so` stub (SONAME libcuda.so.1) from cuda.h|
//! | [`implib`]    | `implib.rs`   | Windows: `.lib` from a DLL's export table, and read back  |
//! | [`names`]     | `names.rs`    | the link names a developer needs, present or missing      |

pub mod complete;
pub mod implib;
pub mod links;
pub mod names;
pub mod stub;

use std::path::PathBuf;

use serde::Serialize;

use crate::error::Cause;

pub use complete::complete;
pub use names::{LinkName, link_names};

/// What [`complete`] added to a tree (paths relative to the toolkit folder, `/`-separated).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Completion {
    /// Linux: `lib64/libcublas.so` (a link to `libcublas.so.13`).
    pub links: Vec<String>,
    /// Windows: `lib/x64/cublas.lib` (from `bin/x64/cublas64_13.dll`).
    pub import_libs: Vec<String>,
    /// `lib64/stubs/libcuda.so`.
    pub stubs: Vec<String>,
    /// Other files written: `pkgconfig/cublas-13.5.pc`, …
    pub files: Vec<String>,
    /// Stubs NVIDIA's installer lays down that no wheel carries and we could not make
    /// (`lib64/stubs/libnvidia-ml.so`): said in the report and in docs.
    pub no_stub: Vec<String>,
    /// DLLs whose export table could not be read, so no import library was made.
    pub unreadable: Vec<String>,
}

/// Why a development layout could not be completed or read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DevError {
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: Cause,
    },
    /// A DLL or import library that is not what it should be (not a PE/COFF file, no
    /// export table, an archive we cannot read).
    #[error("{}: {detail}", .path.display())]
    Malformed { path: PathBuf, detail: String },
}

impl DevError {
    pub fn io(path: &std::path::Path, e: std::io::Error) -> Self {
        DevError::Io {
            path: path.to_path_buf(),
            source: crate::error::cause(e),
        }
    }
}
