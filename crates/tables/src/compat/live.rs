//! Facts learned at run time (`refresh`), carried beside the tables: where a release came
//! from, and which PyTorch wheels the index lists. Empty for tables read from files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::version::Version;

/// Where one release row came from. Rows of the table files are `Table`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    #[default]
    Table,
    /// Read from a source of truth (`file`: the manifest or index page) at `fetched_at`
    /// (Unix seconds); `live`: in this run, else from the refresh cache.
    Fetched {
        file: String,
        fetched_at: u64,
        live: bool,
    },
}

/// One wheel the PyTorch index lists (`torch-2.13.0+cu130-cp312-cp312-win_amd64.whl`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Wheel {
    pub version: Version,
    /// `MAJOR.MINOR` of CPython (`cp312` → 3.12).
    pub python: Version,
    /// A free-threaded build (`cp313t`).
    #[serde(default)]
    pub freethreaded: bool,
    /// The platform tag (`win_amd64`, `manylinux_2_28_x86_64`).
    pub platform: String,
}

impl Wheel {
    /// Whether this wheel installs on `os` x86-64.
    pub fn for_os(&self, os: super::Os) -> bool {
        match os {
            super::Os::Windows => self.platform == "win_amd64",
            super::Os::Linux => {
                (self.platform.starts_with("manylinux") || self.platform.starts_with("linux"))
                    && self.platform.ends_with("x86_64")
            }
        }
    }
}

/// The refresh data merged into a set of tables.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Live {
    /// When the data was fetched and whether in this run; None: tables only.
    pub refreshed: Option<Refreshed>,
    /// Per PyTorch variant (`cu130`), the wheels its index lists; a variant absent here
    /// was not read, so nothing is known about its wheels.
    #[serde(skip)]
    pub wheels: BTreeMap<String, Vec<Wheel>>,
    /// Where the wheel lists came from.
    #[serde(skip)]
    pub wheels_origin: Origin,
    /// The newest release of each PyPI project read (`nvidia-cudnn-cu13` → 9.27.0.42).
    pub packages: BTreeMap<String, Version>,
    /// Torch lines learned from PyPI (the PyTorch index unread, or not listing them),
    /// each fact with its source.
    pub torch_pypi: Vec<PypiTorch>,
}

/// A torch line PyPI told of, and where each of its facts came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PypiTorch {
    /// The line (`2.16`) and its releases on PyPI.
    pub version: Version,
    pub patches: Vec<Version>,
    /// CPython versions with an x86-64 wheel, and the platforms (`win_amd64`, …).
    pub python_min: Version,
    pub python_max: Version,
    pub platforms: Vec<String>,
    pub requires_python: Option<String>,
    /// The `torch` page read.
    pub source: Origin,
    /// The CUDA PyPI's Linux wheel is built for (its metadata's pin) and the CUDA
    /// requirements it states; `linux_metadata`: the file read (None: none offered).
    pub linux_cuda: Option<Version>,
    pub linux_requires: Vec<String>,
    pub linux_metadata: Option<String>,
    /// Some(true): PyPI's Windows wheel requires no CUDA package (a CPU build);
    /// None: its metadata was not offered.
    pub windows_cpu: Option<bool>,
    pub windows_requires: Vec<String>,
    pub windows_metadata: Option<String>,
    /// The CUDA variants in the tables' row and whether PyTorch's index confirmed them.
    pub variants: Vec<String>,
    pub variants_confirmed: bool,
    /// The release whose variant list was assumed (unconfirmed only).
    pub variants_from: Option<Version>,
    /// What PyTorch's index said.
    pub index: IndexSeen,
}

/// Whether PyTorch's index confirmed a line learned from PyPI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IndexSeen {
    /// The index lists its wheels: the variants are the index's.
    Lists,
    /// The index was not read since PyPI was (unreachable, or refused).
    Unreachable,
    /// The index was read (at `at`) and lists no wheel of it in the variants read.
    NotListed { at: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refreshed {
    /// Unix seconds.
    pub fetched_at: u64,
    /// The same, as `2026-12-02 14:03 UTC`.
    pub at: String,
    /// Fetched by this run (false: read from the cache).
    pub live: bool,
}

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM UTC` (the base's one formatter).
pub use cuda_setup_base::units::utc;
