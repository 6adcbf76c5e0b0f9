//! The lab profile (`lab.toml`, #36): one TOML file stating what every PC of a lab must
//! have — the driver, the CUDA toolkit and cuDNN, PyTorch and its guard, where downloads
//! come from, where reports go. A section left out is a layer not managed (not tested,
//! not set). `docs/lab.example.toml` shows every key.
//!
//! A profile is input from outside (a share, an admin's editor): read bounded, only from
//! a regular file, never through a link; each key is checked against the tables for the
//! PCs' OS, and a bad one is refused naming the file and the key, as the compat tables'
//! errors do. The messages are the catalogue's (`profile_err_*`), rendered at the edge.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::compat::{InstallerKind, Os, Tables, TorchRelease};
use crate::i18n::Lang;
use crate::message::Message;
use crate::msg;
use crate::place::ReadError;
use crate::plan::CudnnChoice;
use crate::recommend::{self, CudnnVersionError, DriverFloor, DriverPref, Goal, Method, Request};
use crate::shown;
use crate::steps::pypi_race::PypiPick;
use crate::steps::torch_sources::TorchSource;
use crate::version::Version;

/// The one schema this cuda-setup reads (`schema = 1`).
pub const SCHEMA: i64 = 1;

/// A profile is a page of settings: a file larger than this is not one.
pub const MAX_BYTES: u64 = 64 * 1024;

/// The desired state of every PC of a lab, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The language of reports and messages (None: each PC's own).
    pub lang: Option<Lang>,
    pub driver: Option<DriverWant>,
    pub toolkit: Option<ToolkitWant>,
    /// Only with a toolkit: cuDNN goes into one.
    pub cudnn: Option<CudnnWant>,
    pub pytorch: Option<TorchWant>,
    /// Where downloads come from (all empty: the defaults).
    pub sources: SourcesWant,
    pub report: Option<ReportWant>,
}

/// Which driver versions are in the desired state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverRule {
    /// `min = "550.54"`: this version or newer.
    AtLeast(Version),
    /// `exact = "566.36"`: this version only.
    Exact(Version),
    /// Neither `min` nor `exact`: at least what the toolkit and PyTorch of the profile
    /// need (the recommendation's minimum on each PC).
    Needed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverWant {
    pub rule: DriverRule,
    /// `state set` may install or update the driver (`install = false` is
    /// `--skip-driver`). Default: true on Windows, false on Linux (where the
    /// distribution's packages provide it).
    pub install: bool,
    /// `when_old = "update" | "keep"`: a driver that works but is old (`--update-driver`,
    /// `--keep-driver`; absent: cuda-setup's default).
    pub when_old: DriverPref,
    /// `cuda_installer = true`: let the CUDA installer update the driver (`--with-driver`).
    pub cuda_installer: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitWant {
    /// A prefix of a release in the tables (`12`, `12.4`, `12.4.1`), as `--cuda`.
    pub version: Version,
    pub method: Method,
    /// `cuda-toolkit` extras for the wheels method (empty: the default set).
    pub components: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudnnWant {
    /// `version = "recommended"`: the one the recommender picks for the toolkit.
    Recommended,
    /// A prefix of a release (`9`, `9.1`), as `--cudnn`.
    Version(Version),
    /// `archive = '…'`: an archive the lab already has, as `--cudnn-archive`.
    Archive(PathBuf),
    /// `version = "none"`: no cuDNN is wanted; nothing is installed (`--no-cudnn`).
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchWant {
    /// A prefix of a PyTorch release in the tables (None: the recommended one).
    pub version: Option<Version>,
    /// A variant (`cu124`; None: the recommended one).
    pub variant: Option<String>,
    pub python: PythonAt,
    /// The verified build is guarded (pip's pin). Default true.
    pub guard: bool,
}

/// Which Python PyTorch goes into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PythonAt {
    /// The PC's default Python (the first on PATH).
    Default,
    /// `python = '…'`: this interpreter.
    Interpreter(PathBuf),
    /// `venv = '…'`: the interpreter of this virtual environment.
    Venv(PathBuf),
}

impl PythonAt {
    /// The interpreter to give `install --python-exe` on `os` (None: the default one).
    pub fn interpreter(&self, os: Os) -> Option<PathBuf> {
        match self {
            PythonAt::Default => None,
            PythonAt::Interpreter(p) => Some(p.clone()),
            PythonAt::Venv(v) => Some(match os {
                Os::Windows => v.join("Scripts").join("python.exe"),
                Os::Linux => v.join("bin").join("python"),
            }),
        }
    }
}

/// Where downloads come from: the install flags of the same names. The PyPI and torch
/// choices are kept as written, checked by the parsers the command line uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourcesWant {
    /// `--mirror` (http or https URLs).
    pub mirrors: Vec<String>,
    /// `--bundle`.
    pub bundle: Option<PathBuf>,
    /// `--pypi-mirror`: tsinghua, aliyun, ustc, auto, or an index URL.
    pub pypi_mirror: Option<String>,
    /// `--torch-index`: auto, official, or a URL of PyTorch's index layout.
    pub torch_index: Option<String>,
}

impl SourcesWant {
    /// `pypi_mirror` as `--pypi-mirror` takes it (validated when the profile was read).
    pub fn pypi_pick(&self) -> Option<PypiPick> {
        self.pypi_mirror.as_deref().and_then(|s| s.parse().ok())
    }

    /// `torch_index` as `--torch-index` takes it (validated when the profile was read).
    pub fn torch_source(&self) -> Option<TorchSource> {
        self.torch_index.as_deref().and_then(|s| s.parse().ok())
    }

    fn is_empty(&self) -> bool {
        *self == SourcesWant::default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportWant {
    /// Where `state get/test/set` write their report; `%VAR%` is expanded by the writer.
    pub path: String,
}

/// One `install` run a profile asks for, in the terms of `install`'s flags: the
/// developer goal for `[toolkit]` (with `[cudnn]`), the PyTorch goal for `[pytorch]`
/// ([`Profile::plans`]). Fields another goal does not read are left at their defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// `--goal`.
    pub goal: Goal,
    /// `--cuda` (developer).
    pub cuda: Option<Version>,
    /// `--method` (developer).
    pub method: Method,
    /// `--components` (developer, wheels).
    pub components: Vec<String>,
    /// `--cudnn` / `--cudnn-archive` / `--no-cudnn` (developer; None: cuDNN is not
    /// managed, so none is installed).
    pub cudnn: Option<CudnnWant>,
    /// The PyTorch release and variant (PyTorch goal; None: the recommended one).
    pub torch_version: Option<Version>,
    pub torch_variant: Option<String>,
    /// `--python-exe` (PyTorch goal), see [`PythonAt::interpreter`].
    pub python: PythonAt,
    /// The verified build is guarded afterwards (PyTorch goal).
    pub guard: bool,
    /// None: the driver is not managed (`--skip-driver`).
    pub driver: Option<DriverWant>,
    pub sources: SourcesWant,
}

impl Wanted {
    /// The recommender's request for this run (`distro`: the PC's,
    /// `linux_driver::os_release`).
    pub fn request(&self, distro: Option<crate::linux_driver::OsRelease>) -> Request {
        Request {
            goal: self.goal,
            cuda: self.cuda.clone(),
            method: self.method,
            driver: self.driver_pref(),
            distro,
            torch_version: self.torch_version.clone(),
            torch_variant: self.torch_variant.clone(),
            driver_floor: self.driver_floor(),
        }
    }

    /// The profile's `[driver] min`/`exact` as the recommender's floor (#36), when the
    /// driver is ours to install; None with neither (the picks' own need).
    pub fn driver_floor(&self) -> Option<DriverFloor> {
        let d = self.driver.as_ref().filter(|d| d.install)?;
        match &d.rule {
            DriverRule::AtLeast(v) => Some(DriverFloor::AtLeast(v.clone())),
            DriverRule::Exact(v) => Some(DriverFloor::Exact(v.clone())),
            DriverRule::Needed => None,
        }
    }

    /// `--skip-driver`: no driver step (the driver is not managed, or not ours to install).
    pub fn skip_driver(&self) -> bool {
        self.driver.as_ref().is_none_or(|d| !d.install)
    }

    /// `--with-driver`.
    pub fn with_driver(&self) -> bool {
        self.driver
            .as_ref()
            .is_some_and(|d| d.install && d.cuda_installer)
    }

    /// `--update-driver` / `--keep-driver`.
    pub fn driver_pref(&self) -> DriverPref {
        self.driver
            .as_ref()
            .map_or(DriverPref::Auto, |d| d.when_old)
    }

    /// The plan's cuDNN choice (a named version: [`Wanted::cudnn_version`] on top of the
    /// recommended one, as `install --cudnn` does).
    pub fn cudnn_choice(&self) -> CudnnChoice {
        match &self.cudnn {
            Some(CudnnWant::Recommended) | Some(CudnnWant::Version(_)) => CudnnChoice::Recommended,
            Some(CudnnWant::Archive(p)) => CudnnChoice::Archive(p.clone()),
            Some(CudnnWant::None) | None => CudnnChoice::Skip,
        }
    }

    /// `--cudnn VER`.
    pub fn cudnn_version(&self) -> Option<&Version> {
        match &self.cudnn {
            Some(CudnnWant::Version(v)) => Some(v),
            _ => None,
        }
    }

    fn empty(goal: Goal, driver: Option<DriverWant>, sources: SourcesWant) -> Wanted {
        Wanted {
            goal,
            cuda: None,
            method: Method::Installer,
            components: Vec::new(),
            cudnn: None,
            torch_version: None,
            torch_variant: None,
            python: PythonAt::Default,
            guard: false,
            driver,
            sources,
        }
    }
}

/// Why install's flags make no profile (`install --write-profile`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnwritableError {
    /// A profile names the toolkit every PC gets; "the recommended one" differs per PC.
    #[error("--goal developer needs --cuda for a lab profile")]
    NoToolkitVersion,
}

impl UnwritableError {
    pub fn message(&self) -> Message {
        match self {
            UnwritableError::NoToolkitVersion => msg!("profile_needs_cuda"),
        }
    }

    pub fn hint(&self) -> Message {
        match self {
            UnwritableError::NoToolkitVersion => msg!("hint_profile_needs_cuda"),
        }
    }
}

impl Profile {
    /// The install runs this profile asks for, in order: the toolkit (developer goal,
    /// with cuDNN) first, then PyTorch. The driver and the sources are the same in each.
    /// A profile with neither asks for none (its driver, if any, is a layer alone).
    pub fn plans(&self) -> Vec<Wanted> {
        let base = |goal| Wanted::empty(goal, self.driver.clone(), self.sources.clone());
        let mut out = Vec::new();
        if let Some(tk) = &self.toolkit {
            out.push(Wanted {
                cuda: Some(tk.version.clone()),
                method: tk.method,
                components: tk.components.clone(),
                cudnn: self.cudnn.clone(),
                ..base(Goal::Developer)
            });
        }
        if let Some(t) = &self.pytorch {
            out.push(Wanted {
                torch_version: t.version.clone(),
                torch_variant: t.variant.clone(),
                python: t.python.clone(),
                guard: t.guard,
                ..base(Goal::Pytorch)
            });
        }
        out
    }

    /// The profile of one install run (`install --write-profile`): what [`Profile::plans`]
    /// gives back, with the language and report path given.
    pub fn from_wanted(
        w: &Wanted,
        lang: Option<Lang>,
        report: Option<String>,
    ) -> Result<Profile, UnwritableError> {
        let (toolkit, cudnn, pytorch) = match w.goal {
            Goal::Developer => {
                let version = w.cuda.clone().ok_or(UnwritableError::NoToolkitVersion)?;
                let toolkit = ToolkitWant {
                    version,
                    method: w.method,
                    components: w.components.clone(),
                };
                (Some(toolkit), w.cudnn.clone(), None)
            }
            Goal::Pytorch => {
                let torch = TorchWant {
                    version: w.torch_version.clone(),
                    variant: w.torch_variant.clone(),
                    python: w.python.clone(),
                    guard: w.guard,
                };
                (None, None, Some(torch))
            }
        };
        Ok(Profile {
            lang,
            driver: w.driver.clone(),
            toolkit,
            cudnn,
            pytorch,
            sources: w.sources.clone(),
            report: report.map(|path| ReportWant { path }),
        })
    }

    /// The profile as a `lab.toml` ([`parse`] reads it back as the same profile): every
    /// value written out, defaults included, so a reader sees what each PC gets.
    pub fn to_toml(&self) -> String {
        let mut s = String::from(
            "# cuda-setup lab profile: what every PC must have (docs/lab.example.toml explains each key).\n",
        );
        s.push_str(&format!("schema = {SCHEMA}\n"));
        if let Some(l) = self.lang {
            line(&mut s, "lang", lang_name(l));
        }
        if let Some(d) = &self.driver {
            s.push_str("\n[driver]\n");
            match &d.rule {
                DriverRule::AtLeast(v) => line(&mut s, "min", &v.to_string()),
                DriverRule::Exact(v) => line(&mut s, "exact", &v.to_string()),
                DriverRule::Needed => s.push_str(
                    "# no min or exact: at least what the toolkit and PyTorch below need\n",
                ),
            }
            s.push_str(&format!("install = {}\n", d.install));
            match d.when_old {
                DriverPref::Auto => {}
                DriverPref::Update => line(&mut s, "when_old", "update"),
                DriverPref::Keep => line(&mut s, "when_old", "keep"),
            }
            s.push_str(&format!("cuda_installer = {}\n", d.cuda_installer));
        }
        if let Some(t) = &self.toolkit {
            s.push_str("\n[toolkit]\n");
            line(&mut s, "version", &t.version.to_string());
            line(&mut s, "method", method_name(t.method));
            if !t.components.is_empty() {
                list(&mut s, "components", &t.components);
            }
        }
        if let Some(c) = &self.cudnn {
            s.push_str("\n[cudnn]\n");
            match c {
                CudnnWant::Recommended => line(&mut s, "version", "recommended"),
                CudnnWant::None => line(&mut s, "version", "none"),
                CudnnWant::Version(v) => line(&mut s, "version", &v.to_string()),
                CudnnWant::Archive(p) => line(&mut s, "archive", &p.to_string_lossy()),
            }
        }
        if let Some(t) = &self.pytorch {
            s.push_str("\n[pytorch]\n");
            if let Some(v) = &t.version {
                line(&mut s, "version", &v.to_string());
            }
            if let Some(v) = &t.variant {
                line(&mut s, "variant", v);
            }
            match &t.python {
                PythonAt::Default => {}
                PythonAt::Interpreter(p) => line(&mut s, "python", &p.to_string_lossy()),
                PythonAt::Venv(p) => line(&mut s, "venv", &p.to_string_lossy()),
            }
            s.push_str(&format!("guard = {}\n", t.guard));
        }
        let src = &self.sources;
        if !src.is_empty() {
            s.push_str("\n[sources]\n");
            if !src.mirrors.is_empty() {
                list(&mut s, "mirrors", &src.mirrors);
            }
            if let Some(b) = &src.bundle {
                line(&mut s, "bundle", &b.to_string_lossy());
            }
            if let Some(p) = &src.pypi_mirror {
                line(&mut s, "pypi_mirror", p);
            }
            if let Some(t) = &src.torch_index {
                line(&mut s, "torch_index", t);
            }
        }
        if let Some(r) = &self.report {
            s.push_str("\n[report]\n");
            line(&mut s, "path", &r.path);
        }
        s
    }
}

fn line(s: &mut String, key: &str, value: &str) {
    s.push_str(&format!("{key} = {}\n", quoted(value)));
}

fn list(s: &mut String, key: &str, values: &[String]) {
    let items: Vec<String> = values.iter().map(|v| quoted(v)).collect();
    s.push_str(&format!("{key} = [{}]\n", items.join(", ")));
}

/// `value` as a TOML basic string: quotes, backslashes and control characters escaped
/// (a Windows path keeps its backslashes as `\\`).
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn lang_name(l: Lang) -> &'static str {
    match l {
        Lang::En => "en",
        Lang::Zh => "zh",
    }
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Installer => "installer",
        Method::Wheels => "wheels",
    }
}

// ---------- errors ----------

/// A profile refused: the file, the key (`[toolkit] version`; empty for the whole file)
/// and what is wrong. `Display` is the English detail; [`ProfileError::message`] the
/// sentence in the catalogue, [`ProfileError::hint`] what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError {
    pub file: PathBuf,
    pub key: String,
    pub problem: Box<Problem>,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", shown::path(&self.file))?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{}", self.problem)
    }
}

impl std::error::Error for ProfileError {}

/// What is wrong with a profile (the English detail; the catalogue says it in words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("there is no such file")]
    NotFound,
    #[error("it is a symbolic link or junction; a profile is read only from a regular file")]
    Link,
    #[error("it is not a regular file ({0})")]
    NotRegular(&'static str),
    #[error("{size} bytes, over the {max}-byte limit of a profile")]
    TooBig { size: u64, max: u64 },
    #[error("cannot read it: {0}")]
    Io(String),
    #[error("it is not UTF-8 text")]
    NotText,
    /// Not TOML at all.
    #[error("line {line}: not valid TOML: {}", shown::text(.detail))]
    Syntax { line: usize, detail: String },
    /// TOML, but a value of the wrong kind (a number where text goes).
    #[error("line {line}: {}", shown::text(.detail))]
    WrongType { line: usize, detail: String },
    #[error("missing: a profile says schema = 1")]
    SchemaMissing,
    #[error("{}: written for another cuda-setup (this one reads schema 1)", shown::value(.0))]
    SchemaOther(String),
    #[error("unknown key (the keys here: {known})")]
    UnknownKey { known: String },
    #[error("missing")]
    Missing,
    #[error("cannot be given together with {other}")]
    Both { other: String },
    #[error("\"{}\" is not a version (numbers separated by dots, like 12.4)", shown::value(.0))]
    BadVersion(String),
    #[error("\"{}\" must be one of {allowed}", shown::value(.value))]
    BadChoice {
        value: String,
        allowed: &'static str,
    },
    #[error("is empty")]
    Empty,
    #[error("\"{0}\" looks like a CUDA version, not a driver version")]
    DriverLooksLikeCuda(Version),
    #[error("\"{0}\" is no CUDA release the tables know")]
    UnknownToolkit(Version),
    #[error("CUDA \"{version}\" has no NVIDIA installer for {} in the tables (method = \"wheels\" may install it)", .os.as_str())]
    NoInstaller { version: Version, os: Os },
    #[error("\"{0}\" is no cuDNN release the tables know")]
    UnknownCudnn(Version),
    #[error("cuDNN \"{version}\" has no {} archive for CUDA {cuda_major}", .os.as_str())]
    CudnnNoArchive {
        version: Version,
        os: Os,
        cuda_major: u32,
    },
    #[error("\"{0}\" is no PyTorch release the tables know")]
    UnknownTorch(Version),
    #[error("\"{}\" is no PyTorch variant the tables know", shown::value(.0))]
    UnknownVariant(String),
    #[error("\"{}\": PyTorch {version} has no such build in the tables", shown::value(.variant))]
    VariantNotInRelease { variant: String, version: Version },
    #[error("\"{variant}\" (CUDA {cuda}) needs driver {needs} or newer on {}, above [driver] exact = \"{driver}\"", .os.as_str())]
    VariantNeedsDriver {
        variant: String,
        cuda: Version,
        needs: Version,
        driver: Version,
        os: Os,
    },
    #[error("only applies to method = \"wheels\"")]
    ComponentsNeedWheels,
    #[error("needs a [toolkit] section: cuDNN is installed into a CUDA toolkit")]
    CudnnWithoutToolkit,
    #[error("{}", shown::text(.reason))]
    BadUrl { value: String, reason: String },
    #[error("{}", shown::text(.reason))]
    BadPypiMirror { value: String, reason: String },
    #[error("{}", shown::text(.reason))]
    BadTorchIndex { value: String, reason: String },
    #[error("\"{}\" is a PyPI index, which has no CUDA builds of PyTorch", shown::value(.0))]
    TorchIndexIsPypi(String),
}

impl ProfileError {
    /// The sentence in the catalogue, naming the file and the key.
    pub fn message(&self) -> Message {
        let file = shown::path(&self.file);
        let key = self.key.as_str();
        match self.problem.as_ref() {
            Problem::NotFound => msg!("profile_err_not_found", file = file),
            Problem::Link => msg!("profile_err_link", file = file),
            Problem::NotRegular(_) => msg!("profile_err_not_regular", file = file),
            Problem::TooBig { size, max } => {
                msg!("profile_err_too_big", file = file, size = size, max = max)
            }
            Problem::Io(e) => msg!("profile_err_io", file = file, error = shown::text(e)),
            Problem::NotText => msg!("profile_err_not_text", file = file),
            Problem::Syntax { line, detail } => msg!(
                "profile_err_syntax",
                file = file,
                line = line,
                detail = shown::text(detail)
            ),
            Problem::WrongType { line, detail } => msg!(
                "profile_err_wrong_type",
                file = file,
                key = key,
                line = line,
                detail = shown::text(detail)
            ),
            Problem::SchemaMissing => msg!("profile_err_schema_missing", file = file),
            Problem::SchemaOther(v) => {
                msg!(
                    "profile_err_schema_other",
                    file = file,
                    schema = shown::value(v)
                )
            }
            Problem::UnknownKey { known } => {
                msg!(
                    "profile_err_unknown_key",
                    file = file,
                    key = key,
                    known = known
                )
            }
            Problem::Missing => msg!("profile_err_missing", file = file, key = key),
            Problem::Both { other } => {
                msg!("profile_err_both", file = file, key = key, other = other)
            }
            Problem::BadVersion(v) => msg!(
                "profile_err_version",
                file = file,
                key = key,
                value = shown::value(v)
            ),
            Problem::BadChoice { value, allowed } => msg!(
                "profile_err_choice",
                file = file,
                key = key,
                value = shown::value(value),
                allowed = allowed
            ),
            Problem::Empty => msg!("profile_err_empty", file = file, key = key),
            Problem::DriverLooksLikeCuda(v) => {
                msg!(
                    "profile_err_driver_is_cuda",
                    file = file,
                    key = key,
                    value = v
                )
            }
            Problem::UnknownToolkit(v) => {
                msg!(
                    "profile_err_toolkit_unknown",
                    file = file,
                    key = key,
                    value = v
                )
            }
            Problem::NoInstaller { version, os } => msg!(
                "profile_err_toolkit_no_installer",
                file = file,
                key = key,
                value = version,
                os = os_name(*os)
            ),
            Problem::UnknownCudnn(v) => {
                msg!(
                    "profile_err_cudnn_unknown",
                    file = file,
                    key = key,
                    value = v
                )
            }
            Problem::CudnnNoArchive {
                version,
                os,
                cuda_major,
            } => msg!(
                "profile_err_cudnn_no_archive",
                file = file,
                key = key,
                value = version,
                os = os_name(*os),
                cuda_major = cuda_major
            ),
            Problem::UnknownTorch(v) => {
                msg!(
                    "profile_err_torch_unknown",
                    file = file,
                    key = key,
                    value = v
                )
            }
            Problem::UnknownVariant(v) => msg!(
                "profile_err_variant_unknown",
                file = file,
                key = key,
                value = shown::value(v)
            ),
            Problem::VariantNotInRelease { variant, version } => msg!(
                "profile_err_variant_not_in_release",
                file = file,
                key = key,
                value = shown::value(variant),
                torch = version
            ),
            Problem::VariantNeedsDriver {
                variant,
                cuda,
                needs,
                driver,
                os,
            } => msg!(
                "profile_err_variant_driver",
                file = file,
                key = key,
                value = shown::value(variant),
                cuda = cuda,
                needs = needs,
                driver = driver,
                os = os_name(*os)
            ),
            Problem::ComponentsNeedWheels => {
                msg!("profile_err_components", file = file, key = key)
            }
            Problem::CudnnWithoutToolkit => {
                msg!("profile_err_cudnn_no_toolkit", file = file, key = key)
            }
            Problem::BadUrl { value, .. } => msg!(
                "profile_err_url",
                file = file,
                key = key,
                value = shown::value(value)
            ),
            Problem::BadPypiMirror { value, .. } => msg!(
                "profile_err_pypi",
                file = file,
                key = key,
                value = shown::value(value)
            ),
            Problem::BadTorchIndex { value, .. } => msg!(
                "profile_err_torch_index",
                file = file,
                key = key,
                value = shown::value(value)
            ),
            Problem::TorchIndexIsPypi(v) => msg!(
                "profile_err_torch_index_pypi",
                file = file,
                key = key,
                value = shown::value(v)
            ),
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> Message {
        match self.problem.as_ref() {
            Problem::NotFound
            | Problem::Link
            | Problem::NotRegular(_)
            | Problem::TooBig { .. }
            | Problem::Io(_)
            | Problem::NotText => msg!("hint_profile_read"),
            Problem::SchemaOther(_) => msg!("hint_profile_schema"),
            Problem::UnknownToolkit(_)
            | Problem::NoInstaller { .. }
            | Problem::UnknownCudnn(_)
            | Problem::CudnnNoArchive { .. }
            | Problem::UnknownTorch(_)
            | Problem::UnknownVariant(_)
            | Problem::VariantNotInRelease { .. } => msg!("hint_profile_tables"),
            _ => msg!("hint_profile_fix"),
        }
    }
}

/// The OS as the messages name it (a product name: the same in every language).
fn os_name(os: Os) -> &'static str {
    match os {
        Os::Windows => "Windows",
        Os::Linux => "Linux",
    }
}

// ---------- reading ----------

/// The keys a profile may hold: the top level, then each section's. The raw structs
/// below have the same fields (`deny_unknown_fields` is the backstop); this list names
/// the section in the error and says which keys are allowed there.
const TOP_KEYS: &[&str] = &[
    "schema", "lang", "driver", "toolkit", "cudnn", "pytorch", "sources", "report",
];
const SECTION_KEYS: &[(&str, &[&str])] = &[
    (
        "driver",
        &["min", "exact", "install", "when_old", "cuda_installer"],
    ),
    ("toolkit", &["version", "method", "components"]),
    ("cudnn", &["version", "archive"]),
    (
        "pytorch",
        &["version", "variant", "python", "venv", "guard"],
    ),
    (
        "sources",
        &["mirrors", "bundle", "pypi_mirror", "torch_index"],
    ),
    ("report", &["path"]),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    // Checked before the rest, from the table.
    #[serde(rename = "schema")]
    _schema: i64,
    lang: Option<String>,
    driver: Option<RawDriver>,
    toolkit: Option<RawToolkit>,
    cudnn: Option<RawCudnn>,
    pytorch: Option<RawTorch>,
    sources: Option<RawSources>,
    report: Option<RawReport>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDriver {
    min: Option<String>,
    exact: Option<String>,
    install: Option<bool>,
    when_old: Option<String>,
    cuda_installer: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolkit {
    version: Option<String>,
    method: Option<String>,
    components: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCudnn {
    version: Option<String>,
    archive: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTorch {
    version: Option<String>,
    variant: Option<String>,
    python: Option<String>,
    venv: Option<String>,
    guard: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSources {
    mirrors: Option<Vec<String>>,
    bundle: Option<String>,
    pypi_mirror: Option<String>,
    torch_index: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReport {
    path: Option<String>,
}

/// Reads the profile at `path` for PCs running `os`: at most [`MAX_BYTES`], a regular
/// file, never through a link at its last component.
pub fn load(path: &Path, tables: &Tables, os: Os) -> Result<Profile, ProfileError> {
    let err = |problem| ProfileError {
        file: path.to_path_buf(),
        key: String::new(),
        problem: Box::new(problem),
    };
    let bytes = match crate::place::read_regular(path, MAX_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return Err(err(Problem::NotFound)),
        Err(ReadError::Link { .. }) => return Err(err(Problem::Link)),
        Err(ReadError::NotRegular { what, .. }) => return Err(err(Problem::NotRegular(what))),
        Err(ReadError::TooBig { size, max, .. }) => return Err(err(Problem::TooBig { size, max })),
        Err(ReadError::Io { source, .. }) => return Err(err(Problem::Io(source.to_string()))),
    };
    let text = String::from_utf8(bytes).map_err(|_| err(Problem::NotText))?;
    parse(&text, path, tables, os)
}

/// Reads the profile for a lab whose PCs' OS is not known yet (`fleet collect`: a Linux
/// server may collect a Windows lab): for `here`, else for the other OS; the error is
/// `here`'s. Each PC's OS is checked again when its report is judged.
pub fn load_any_os(path: &Path, tables: &Tables, here: Os) -> Result<Profile, ProfileError> {
    let other = match here {
        Os::Windows => Os::Linux,
        Os::Linux => Os::Windows,
    };
    load(path, tables, here).or_else(|e| load(path, tables, other).map_err(|_| e))
}

/// Parses and validates a profile's text; `file` names it in errors, `os` is the PCs'
/// (the tables' installers and archives are per OS).
pub fn parse(text: &str, file: &Path, tables: &Tables, os: Os) -> Result<Profile, ProfileError> {
    let check = Check { file, tables, os };
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        check.err(
            "",
            Problem::Syntax {
                line: line_of(text, &e),
                detail: e.message().to_string(),
            },
        )
    })?;
    // The schema first: a profile for another cuda-setup may hold keys this one lacks.
    match doc.get("schema") {
        None => return Err(check.err("schema", Problem::SchemaMissing)),
        Some(toml::Value::Integer(n)) if *n == SCHEMA => {}
        Some(toml::Value::Integer(n)) => {
            return Err(check.err("schema", Problem::SchemaOther(n.to_string())));
        }
        Some(toml::Value::String(s)) => {
            return Err(check.err("schema", Problem::SchemaOther(s.clone())));
        }
        Some(other) => {
            return Err(check.err("schema", Problem::SchemaOther(other.type_str().into())));
        }
    }
    if let Some((key, known)) = unknown_key(&doc) {
        return Err(check.err(&key, Problem::UnknownKey { known }));
    }
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let line = line_of(text, &e);
        check.err(
            &key_at(text, line),
            Problem::WrongType {
                line,
                detail: e.message().to_string(),
            },
        )
    })?;
    check.profile(raw)
}

/// The first key the profile may not hold, as `[section] key`, with the keys allowed there.
fn unknown_key(doc: &toml::Table) -> Option<(String, String)> {
    for (name, value) in doc {
        match SECTION_KEYS.iter().find(|(s, _)| s == name) {
            Some((_, keys)) => {
                // Not a table: serde's type error names it.
                if let toml::Value::Table(t) = value
                    && let Some(k) = t.keys().find(|k| !keys.contains(&k.as_str()))
                {
                    return Some((format!("[{name}] {k}"), keys.join(", ")));
                }
            }
            None if !TOP_KEYS.contains(&name.as_str()) => {
                return Some((name.clone(), TOP_KEYS.join(", ")));
            }
            None => {}
        }
    }
    None
}

/// The 1-based line of a TOML error (0: unknown).
fn line_of(text: &str, e: &toml::de::Error) -> usize {
    e.span().map_or(0, |s| {
        let end = s.start.min(text.len());
        text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    })
}

/// The key written on `line` as `[section] key` (its section: the last header above it).
fn key_at(text: &str, line: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(here) = line.checked_sub(1).and_then(|i| lines.get(i)) else {
        return String::new();
    };
    let section = lines[..line - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let key = match here.split_once('=') {
        Some((k, _)) => k.trim().to_string(),
        None => here.trim().to_string(),
    };
    match section {
        Some(s) if !here.trim().starts_with('[') => format!("[{s}] {key}"),
        _ => key,
    }
}

/// A PyTorch release a prefix names: `2` and `2.5` by its line, `2.5.1` by a patch.
fn torch_matches(r: &TorchRelease, prefix: &Version) -> bool {
    r.version.parts().starts_with(prefix.parts())
        || r.patches
            .iter()
            .any(|p| p.parts().starts_with(prefix.parts()))
}

struct Check<'a> {
    file: &'a Path,
    tables: &'a Tables,
    os: Os,
}

type Checked<T> = Result<T, ProfileError>;

impl Check<'_> {
    fn err(&self, key: &str, problem: Problem) -> ProfileError {
        ProfileError {
            file: self.file.to_path_buf(),
            key: key.to_string(),
            problem: Box::new(problem),
        }
    }

    fn version(&self, key: &str, text: &str) -> Checked<Version> {
        text.parse()
            .map_err(|_| self.err(key, Problem::BadVersion(text.to_string())))
    }

    fn driver_version(&self, key: &str, text: &str) -> Checked<Version> {
        let v = self.version(key, text)?;
        if v.major() < 100 {
            return Err(self.err(key, Problem::DriverLooksLikeCuda(v)));
        }
        Ok(v)
    }

    /// `text` trimmed; an empty one refused.
    fn text(&self, key: &str, text: &str) -> Checked<String> {
        let t = text.trim();
        if t.is_empty() {
            return Err(self.err(key, Problem::Empty));
        }
        Ok(t.to_string())
    }

    fn choice<T: Copy>(
        &self,
        key: &str,
        value: &str,
        allowed: &'static str,
        names: &[(&str, T)],
    ) -> Checked<T> {
        let lower = value.trim().to_ascii_lowercase();
        names
            .iter()
            .find(|(n, _)| *n == lower)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                self.err(
                    key,
                    Problem::BadChoice {
                        value: value.to_string(),
                        allowed,
                    },
                )
            })
    }

    fn profile(&self, raw: Raw) -> Checked<Profile> {
        let lang = match &raw.lang {
            None => None,
            Some(l) => Some(self.choice(
                "lang",
                l,
                "\"zh\", \"en\"",
                &[("zh", Lang::Zh), ("en", Lang::En)],
            )?),
        };
        let driver = raw.driver.map(|d| self.driver(d)).transpose()?;
        let toolkit = raw.toolkit.map(|t| self.toolkit(t)).transpose()?;
        let cudnn = match raw.cudnn {
            None => None,
            Some(c) => {
                let Some(tk) = &toolkit else {
                    return Err(self.err("[cudnn]", Problem::CudnnWithoutToolkit));
                };
                Some(self.cudnn(c, tk)?)
            }
        };
        let pytorch = raw
            .pytorch
            .map(|t| self.torch(t, driver.as_ref()))
            .transpose()?;
        let sources = self.sources(raw.sources.unwrap_or_default())?;
        let report = match raw.report {
            None => None,
            Some(r) => {
                let path = r
                    .path
                    .ok_or_else(|| self.err("[report] path", Problem::Missing))?;
                Some(ReportWant {
                    path: self.text("[report] path", &path)?,
                })
            }
        };
        Ok(Profile {
            lang,
            driver,
            toolkit,
            cudnn,
            pytorch,
            sources,
            report,
        })
    }

    fn driver(&self, d: RawDriver) -> Checked<DriverWant> {
        let rule = match (&d.min, &d.exact) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "[driver] min",
                    Problem::Both {
                        other: "[driver] exact".into(),
                    },
                ));
            }
            (Some(m), None) => DriverRule::AtLeast(self.driver_version("[driver] min", m)?),
            (None, Some(x)) => DriverRule::Exact(self.driver_version("[driver] exact", x)?),
            (None, None) => DriverRule::Needed,
        };
        let when_old = match &d.when_old {
            None => DriverPref::Auto,
            Some(w) => self.choice(
                "[driver] when_old",
                w,
                "\"update\", \"keep\", \"auto\"",
                &[
                    ("update", DriverPref::Update),
                    ("keep", DriverPref::Keep),
                    ("auto", DriverPref::Auto),
                ],
            )?,
        };
        Ok(DriverWant {
            rule,
            install: d.install.unwrap_or(self.os == Os::Windows),
            when_old,
            cuda_installer: d.cuda_installer.unwrap_or(false),
        })
    }

    fn toolkit(&self, t: RawToolkit) -> Checked<ToolkitWant> {
        let key = "[toolkit] version";
        let text = t.version.ok_or_else(|| self.err(key, Problem::Missing))?;
        let version = self.version(key, &text)?;
        let method = match &t.method {
            None => Method::Installer,
            Some(m) => self.choice(
                "[toolkit] method",
                m,
                "\"installer\", \"wheels\"",
                &[("installer", Method::Installer), ("wheels", Method::Wheels)],
            )?,
        };
        let mut components = Vec::new();
        for c in t.components.unwrap_or_default() {
            components.push(self.text("[toolkit] components", &c)?);
        }
        if !components.is_empty() && method == Method::Installer {
            return Err(self.err("[toolkit] components", Problem::ComponentsNeedWheels));
        }
        let releases: Vec<_> = self
            .tables
            .toolkits
            .releases
            .iter()
            .filter(|r| r.version.parts().starts_with(version.parts()))
            .collect();
        if releases.is_empty() {
            return Err(self.err(key, Problem::UnknownToolkit(version)));
        }
        let kind = match self.os {
            Os::Windows => InstallerKind::WindowsLocal,
            Os::Linux => InstallerKind::LinuxRunfile,
        };
        if method == Method::Installer && releases.iter().all(|r| r.installer(kind).is_none()) {
            return Err(self.err(
                key,
                Problem::NoInstaller {
                    version,
                    os: self.os,
                },
            ));
        }
        Ok(ToolkitWant {
            version,
            method,
            components,
        })
    }

    fn cudnn(&self, c: RawCudnn, tk: &ToolkitWant) -> Checked<CudnnWant> {
        let key = "[cudnn] version";
        match (c.version, c.archive) {
            (Some(_), Some(_)) => Err(self.err(
                key,
                Problem::Both {
                    other: "[cudnn] archive".into(),
                },
            )),
            (None, None) => Err(self.err(key, Problem::Missing)),
            (None, Some(a)) => Ok(CudnnWant::Archive(PathBuf::from(
                self.text("[cudnn] archive", &a)?,
            ))),
            (Some(v), None) => match v.trim().to_ascii_lowercase().as_str() {
                "recommended" => Ok(CudnnWant::Recommended),
                "none" => Ok(CudnnWant::None),
                _ => {
                    let version = self.version(key, &v)?;
                    recommend::cudnn_by_version(self.tables, self.os, tk.version.major(), &version)
                        .map_err(|e| {
                            self.err(
                                key,
                                match e {
                                    CudnnVersionError::Unknown(v) => Problem::UnknownCudnn(v),
                                    CudnnVersionError::NoArchive {
                                        version,
                                        os,
                                        cuda_major,
                                    } => Problem::CudnnNoArchive {
                                        version,
                                        os,
                                        cuda_major,
                                    },
                                },
                            )
                        })?;
                    Ok(CudnnWant::Version(version))
                }
            },
        }
    }

    fn torch(&self, t: RawTorch, driver: Option<&DriverWant>) -> Checked<TorchWant> {
        let releases = &self.tables.pytorch.releases;
        let version = match &t.version {
            None => None,
            Some(v) => {
                let v = self.version("[pytorch] version", v)?;
                if !releases.iter().any(|r| torch_matches(r, &v)) {
                    return Err(self.err("[pytorch] version", Problem::UnknownTorch(v)));
                }
                Some(v)
            }
        };
        let variant = match &t.variant {
            None => None,
            Some(name) => {
                let key = "[pytorch] variant";
                let name = self.text(key, name)?;
                let known = self
                    .tables
                    .variant(&name)
                    .filter(|_| releases.iter().any(|r| r.variants.contains(&name)));
                let Some(row) = known else {
                    return Err(self.err(key, Problem::UnknownVariant(name)));
                };
                if let Some(v) = &version
                    && !releases
                        .iter()
                        .any(|r| torch_matches(r, v) && r.variants.contains(&name))
                {
                    return Err(self.err(
                        key,
                        Problem::VariantNotInRelease {
                            variant: name,
                            version: v.clone(),
                        },
                    ));
                }
                if let Some(DriverWant {
                    rule: DriverRule::Exact(exact),
                    ..
                }) = driver
                    && let Some(needs) =
                        recommend::wheel_driver_floor(self.tables, self.os, &row.cuda)
                    && *exact < needs
                {
                    return Err(self.err(
                        key,
                        Problem::VariantNeedsDriver {
                            variant: name,
                            cuda: row.cuda.clone(),
                            needs,
                            driver: exact.clone(),
                            os: self.os,
                        },
                    ));
                }
                Some(name)
            }
        };
        let python = match (&t.python, &t.venv) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "[pytorch] python",
                    Problem::Both {
                        other: "[pytorch] venv".into(),
                    },
                ));
            }
            (Some(p), None) => {
                PythonAt::Interpreter(PathBuf::from(self.text("[pytorch] python", p)?))
            }
            (None, Some(v)) => PythonAt::Venv(PathBuf::from(self.text("[pytorch] venv", v)?)),
            (None, None) => PythonAt::Default,
        };
        Ok(TorchWant {
            version,
            variant,
            python,
            guard: t.guard.unwrap_or(true),
        })
    }

    fn sources(&self, s: RawSources) -> Checked<SourcesWant> {
        let mut mirrors = Vec::new();
        for m in s.mirrors.unwrap_or_default() {
            let url = crate::url::http_url(m.trim()).map_err(|reason| {
                self.err(
                    "[sources] mirrors",
                    Problem::BadUrl {
                        value: m.clone(),
                        reason,
                    },
                )
            })?;
            mirrors.push(url);
        }
        let bundle = match &s.bundle {
            None => None,
            Some(b) => Some(PathBuf::from(self.text("[sources] bundle", b)?)),
        };
        let pypi_mirror = match &s.pypi_mirror {
            None => None,
            Some(p) => {
                let key = "[sources] pypi_mirror";
                let p = self.text(key, p)?;
                p.parse::<PypiPick>().map_err(|reason| {
                    self.err(
                        key,
                        Problem::BadPypiMirror {
                            value: p.clone(),
                            reason,
                        },
                    )
                })?;
                Some(p)
            }
        };
        let torch_index = match &s.torch_index {
            None => None,
            Some(t) => {
                let key = "[sources] torch_index";
                let t = self.text(key, t)?;
                let source = t.parse::<TorchSource>().map_err(|reason| {
                    self.err(
                        key,
                        Problem::BadTorchIndex {
                            value: t.clone(),
                            reason,
                        },
                    )
                })?;
                if let TorchSource::Index(url) = &source
                    && recommend::is_pypi_index(url)
                {
                    return Err(self.err(key, Problem::TorchIndexIsPypi(t)));
                }
                Some(t)
            }
        };
        Ok(SourcesWant {
            mirrors,
            bundle,
            pypi_mirror,
            torch_index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::render;

    const EXAMPLE: &str = include_str!("../../../../docs/lab.example.toml");

    fn tables() -> Tables {
        Tables::embedded().unwrap()
    }

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn read(text: &str, os: Os) -> Result<Profile, ProfileError> {
        parse(text, Path::new("lab.toml"), &tables(), os)
    }

    #[test]
    fn the_documented_example_parses_for_both_oses_and_says_what_it_shows() {
        for os in [Os::Windows, Os::Linux] {
            let p = read(EXAMPLE, os).unwrap_or_else(|e| panic!("{os:?}: {e}"));
            assert_eq!(p.lang, Some(Lang::Zh));
            let d = p.driver.as_ref().unwrap();
            assert_eq!(d.rule, DriverRule::AtLeast(v("550.54")));
            assert!(d.install && !d.cuda_installer);
            assert_eq!(d.when_old, DriverPref::Update);
            let tk = p.toolkit.as_ref().unwrap();
            assert_eq!(
                (tk.version.to_string(), tk.method),
                ("12.4".into(), Method::Installer)
            );
            assert_eq!(p.cudnn, Some(CudnnWant::Version(v("9"))));
            let t = p.pytorch.as_ref().unwrap();
            assert_eq!(t.version, Some(v("2.5")));
            assert_eq!(t.variant.as_deref(), Some("cu124"));
            assert_eq!(
                t.python,
                PythonAt::Interpreter(PathBuf::from(r"C:\Python312\python.exe"))
            );
            assert!(t.guard);
            assert_eq!(p.sources.mirrors, ["https://mirror.lab.example/nvidia"]);
            assert_eq!(
                p.sources.bundle,
                Some(PathBuf::from(r"\\fileserver\cuda-bundle"))
            );
            assert_eq!(
                p.sources.pypi_pick(),
                Some(PypiPick::Auto)
                    .filter(|_| false)
                    .or("tsinghua".parse().ok())
            );
            assert_eq!(p.sources.torch_source(), Some(TorchSource::Auto));
            assert_eq!(
                p.report.as_ref().unwrap().path,
                r"\\server\share\%COMPUTERNAME%.json"
            );
        }
    }

    /// The example names every key a profile may hold (so it documents all of them).
    #[test]
    fn the_example_shows_every_key() {
        for key in TOP_KEYS {
            assert!(
                EXAMPLE.contains(&format!("\n{key} = ")) || EXAMPLE.contains(&format!("[{key}]")),
                "{key}"
            );
        }
        for (section, keys) in SECTION_KEYS {
            assert!(EXAMPLE.contains(&format!("[{section}]")), "{section}");
            for key in *keys {
                assert!(
                    EXAMPLE.contains(&format!("{key} = ")),
                    "[{section}] {key} is not in docs/lab.example.toml"
                );
            }
        }
    }

    #[test]
    fn what_to_toml_writes_parses_back_as_the_same_profile() {
        let p = read(EXAMPLE, Os::Windows).unwrap();
        assert_eq!(read(&p.to_toml(), Os::Windows).unwrap(), p);
        // Text that needs escaping: quotes, backslashes, control characters, non-ASCII.
        let odd = Profile {
            lang: None,
            driver: Some(DriverWant {
                rule: DriverRule::Needed,
                install: false,
                when_old: DriverPref::Keep,
                cuda_installer: true,
            }),
            toolkit: Some(ToolkitWant {
                version: v("12.4.1"),
                method: Method::Wheels,
                components: vec!["nvcc".into(), "cudart".into()],
            }),
            cudnn: Some(CudnnWant::Archive(PathBuf::from(
                "\\\\srv\\\"q\"\\cudnn 9 ✓.zip",
            ))),
            pytorch: Some(TorchWant {
                version: None,
                variant: None,
                python: PythonAt::Venv(PathBuf::from("C:\\lab\\venv\t\u{7f}\n#not a comment")),
                guard: false,
            }),
            sources: SourcesWant {
                mirrors: vec![],
                bundle: None,
                pypi_mirror: Some("https://pypi.lab.example/simple".into()),
                torch_index: Some("official".into()),
            },
            report: Some(ReportWant {
                path: "C:\\报告\\%COMPUTERNAME%.json".into(),
            }),
        };
        let text = odd.to_toml();
        assert_eq!(read(&text, Os::Linux).unwrap(), odd, "{text}");
        // Nothing but the header: no layer managed.
        let none = read("schema = 1\n", Os::Windows).unwrap();
        assert_eq!(read(&none.to_toml(), Os::Windows).unwrap(), none);
        assert!(none.plans().is_empty());
    }

    #[test]
    fn plans_are_the_install_runs_and_from_wanted_gives_each_back() {
        let p = read(EXAMPLE, Os::Windows).unwrap();
        let plans = p.plans();
        assert_eq!(plans.len(), 2);
        let dev = &plans[0];
        assert_eq!(dev.goal, Goal::Developer);
        assert_eq!(dev.cuda, Some(v("12.4")));
        assert_eq!(dev.cudnn_version(), Some(&v("9")));
        assert_eq!(dev.cudnn_choice(), CudnnChoice::Recommended);
        assert!(!dev.skip_driver() && !dev.with_driver());
        assert_eq!(dev.driver_pref(), DriverPref::Update);
        let torch = &plans[1];
        assert_eq!(torch.goal, Goal::Pytorch);
        let req = torch.request(None);
        assert_eq!(
            (req.torch_version, req.torch_variant.as_deref()),
            (Some(v("2.5")), Some("cu124"))
        );
        assert_eq!(req.driver, DriverPref::Update);
        assert_eq!(
            torch.python.interpreter(Os::Windows),
            Some(PathBuf::from(r"C:\Python312\python.exe"))
        );
        for w in &plans {
            let back = Profile::from_wanted(w, None, None).unwrap();
            assert_eq!(back.plans(), vec![w.clone()]);
            assert_eq!(read(&back.to_toml(), Os::Windows).unwrap(), back);
        }
        // No driver section: the driver is not managed, so no driver step.
        let p = read("schema = 1\n[pytorch]\nvenv = '/lab/venv'\n", Os::Linux).unwrap();
        let w = &p.plans()[0];
        assert!(w.skip_driver());
        assert_eq!(w.cudnn_choice(), CudnnChoice::Skip);
        assert_eq!(
            w.python.interpreter(Os::Linux),
            Some(PathBuf::from("/lab/venv/bin/python"))
        );
        let developer_without_cuda = Wanted {
            cuda: None,
            ..plans[0].clone()
        };
        assert_eq!(
            Profile::from_wanted(&developer_without_cuda, None, None),
            Err(UnwritableError::NoToolkitVersion)
        );
    }

    /// Each bad profile is refused naming its key, in the catalogue's words as well.
    #[test]
    fn a_bad_key_version_or_contradiction_is_refused_naming_the_key() {
        const TK: &str = "[toolkit]\nversion = \"12.4\"\n";
        type Is = fn(&Problem) -> bool;
        let cases: Vec<(String, &str, Is)> = vec![
            (
                "[toolkit]\nverison = \"12.4\"\n".into(),
                "[toolkit] verison",
                (|p: &Problem| matches!(p, Problem::UnknownKey { known } if known.contains("version")))
                    as Is,
            ),
            (
                "colour = \"green\"\n".into(),
                "colour",
                (|p: &Problem| matches!(p, Problem::UnknownKey { .. })) as Is,
            ),
            (
                "[toolkit]\nversion = \"12.x\"\n".into(),
                "[toolkit] version",
                (|p: &Problem| matches!(p, Problem::BadVersion(s) if s == "12.x")) as Is,
            ),
            (
                "[toolkit]\nversion = 12.4\n".into(),
                "[toolkit] version",
                (|p: &Problem| matches!(p, Problem::WrongType { line: 3, .. })) as Is,
            ),
            (
                "[toolkit]\nmethod = \"wheels\"\n".into(),
                "[toolkit] version",
                (|p: &Problem| *p == Problem::Missing) as Is,
            ),
            (
                "[toolkit]\nversion = \"12.99\"\n".into(),
                "[toolkit] version",
                (|p: &Problem| matches!(p, Problem::UnknownToolkit(_))) as Is,
            ),
            (
                "[toolkit]\nversion = \"12.4\"\nmethod = \"msi\"\n".into(),
                "[toolkit] method",
                (|p: &Problem| matches!(p, Problem::BadChoice { value, .. } if value == "msi"))
                    as Is,
            ),
            (
                format!("{TK}components = [\"nvcc\"]\n"),
                "[toolkit] components",
                (|p: &Problem| *p == Problem::ComponentsNeedWheels) as Is,
            ),
            (
                "[driver]\nmin = \"550.54\"\nexact = \"566.36\"\n".into(),
                "[driver] min",
                (|p: &Problem| matches!(p, Problem::Both { other } if other == "[driver] exact"))
                    as Is,
            ),
            (
                "[driver]\nexact = \"12.4\"\n".into(),
                "[driver] exact",
                (|p: &Problem| matches!(p, Problem::DriverLooksLikeCuda(_))) as Is,
            ),
            (
                "[driver]\nmin = \"5x\"\n".into(),
                "[driver] min",
                (|p: &Problem| matches!(p, Problem::BadVersion(_))) as Is,
            ),
            (
                "[driver]\nwhen_old = \"never\"\n".into(),
                "[driver] when_old",
                (|p: &Problem| matches!(p, Problem::BadChoice { .. })) as Is,
            ),
            (
                "[cudnn]\nversion = \"9\"\n".into(),
                "[cudnn]",
                (|p: &Problem| *p == Problem::CudnnWithoutToolkit) as Is,
            ),
            (
                format!("{TK}[cudnn]\nversion = \"9\"\narchive = 'c.zip'\n"),
                "[cudnn] version",
                (|p: &Problem| matches!(p, Problem::Both { other } if other == "[cudnn] archive"))
                    as Is,
            ),
            (
                format!("{TK}[cudnn]\nversion = \"1.2\"\n"),
                "[cudnn] version",
                (|p: &Problem| matches!(p, Problem::UnknownCudnn(_))) as Is,
            ),
            (
                format!("{TK}[cudnn]\n"),
                "[cudnn] version",
                (|p: &Problem| *p == Problem::Missing) as Is,
            ),
            (
                "[pytorch]\nversion = \"0.1\"\n".into(),
                "[pytorch] version",
                (|p: &Problem| matches!(p, Problem::UnknownTorch(_))) as Is,
            ),
            (
                "[pytorch]\nvariant = \"cu999\"\n".into(),
                "[pytorch] variant",
                (|p: &Problem| matches!(p, Problem::UnknownVariant(_))) as Is,
            ),
            (
                "[pytorch]\nversion = \"2.5\"\nvariant = \"cu128\"\n".into(),
                "[pytorch] variant",
                (|p: &Problem| matches!(p, Problem::VariantNotInRelease { .. })) as Is,
            ),
            (
                "[pytorch]\npython = 'C:\\py\\python.exe'\nvenv = 'C:\\venv'\n".into(),
                "[pytorch] python",
                (|p: &Problem| matches!(p, Problem::Both { other } if other == "[pytorch] venv"))
                    as Is,
            ),
            (
                "[pytorch]\npython = ''\n".into(),
                "[pytorch] python",
                (|p: &Problem| *p == Problem::Empty) as Is,
            ),
            (
                "[sources]\nmirrors = [\"ftp://mirror.lab.example/nvidia\"]\n".into(),
                "[sources] mirrors",
                (|p: &Problem| matches!(p, Problem::BadUrl { .. })) as Is,
            ),
            (
                "[sources]\npypi_mirror = \"nowhere\"\n".into(),
                "[sources] pypi_mirror",
                (|p: &Problem| matches!(p, Problem::BadPypiMirror { .. })) as Is,
            ),
            (
                "[sources]\ntorch_index = \"ftp://x\"\n".into(),
                "[sources] torch_index",
                (|p: &Problem| matches!(p, Problem::BadTorchIndex { .. })) as Is,
            ),
            (
                "[sources]\ntorch_index = \"https://pypi.tuna.tsinghua.edu.cn/simple\"\n".into(),
                "[sources] torch_index",
                (|p: &Problem| matches!(p, Problem::TorchIndexIsPypi(_))) as Is,
            ),
            (
                "lang = \"fr\"\n".into(),
                "lang",
                (|p: &Problem| matches!(p, Problem::BadChoice { .. })) as Is,
            ),
            (
                "[report]\n".into(),
                "[report] path",
                (|p: &Problem| *p == Problem::Missing) as Is,
            ),
            (
                "[toolkit\n".into(),
                "",
                (|p: &Problem| matches!(p, Problem::Syntax { line: 2, .. })) as Is,
            ),
        ];
        for (body, key, is) in cases {
            let text = format!("schema = 1\n{body}");
            let e = read(&text, Os::Windows).expect_err(&text);
            assert_eq!(e.key, key, "{text}\n{e}");
            assert!(is(&e.problem), "{text}\n{e:?}");
            assert!(e.to_string().starts_with("lab.toml: "), "{e}");
            for lang in [Lang::En, Lang::Zh] {
                let said = render(&e.message(), lang);
                assert!(said.contains("lab.toml"), "{said}");
                assert!(said.contains(key), "{said}");
                assert!(!said.contains("profile_err"), "{said}");
                assert!(!render(&e.hint(), lang).starts_with("hint_"));
            }
        }
    }

    #[test]
    fn the_schema_comes_first_and_another_one_is_named() {
        let e = read("lang = \"zh\"\n", Os::Windows).unwrap_err();
        assert_eq!(
            (e.key.as_str(), &*e.problem),
            ("schema", &Problem::SchemaMissing)
        );
        // A newer profile may hold keys this one does not know: the schema is said first.
        let e = read("schema = 2\n[gpu_clock]\nmhz = 1\n", Os::Windows).unwrap_err();
        assert_eq!(*e.problem, Problem::SchemaOther("2".into()));
        assert_eq!(e.hint().key, "hint_profile_schema");
        let e = read("schema = \"1\"\n", Os::Windows).unwrap_err();
        assert_eq!(*e.problem, Problem::SchemaOther("1".into()));
    }

    #[test]
    fn what_the_tables_say_for_the_os_and_the_driver_is_checked() {
        // 13.5.0's installers are not in the tables (UNCONFIRMED): the wheels may give it.
        let tk = "schema = 1\n[toolkit]\nversion = \"13.5\"\n";
        let e = read(tk, Os::Windows).unwrap_err();
        assert!(
            matches!(
                *e.problem,
                Problem::NoInstaller {
                    os: Os::Windows,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(e.hint().key, "hint_profile_tables");
        assert!(read(&format!("{tk}method = \"wheels\"\n"), Os::Windows).is_ok());
        // A CUDA 13 build needs a newer driver than an exact R560 one.
        let cu13 = tables()
            .pytorch
            .variants
            .iter()
            .find(|v| v.cuda.major() == 13)
            .unwrap()
            .name
            .clone();
        let text =
            format!("schema = 1\n[driver]\nexact = \"560.94\"\n[pytorch]\nvariant = \"{cu13}\"\n");
        let e = read(&text, Os::Windows).unwrap_err();
        assert_eq!(e.key, "[pytorch] variant");
        let Problem::VariantNeedsDriver { needs, driver, .. } = &*e.problem else {
            panic!("{e:?}")
        };
        assert_eq!(
            (needs.to_string(), driver.to_string()),
            ("580.88".into(), "560.94".into())
        );
        // The same build with a minimum is fine: the driver is updated to what it needs.
        assert!(read(&text.replace("exact", "min"), Os::Windows).is_ok());
    }

    #[test]
    fn load_reads_only_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let t = tables();
        let file = dir.path().join("lab.toml");
        let e = load(&file, &t, Os::Windows).unwrap_err();
        assert_eq!(*e.problem, Problem::NotFound);
        std::fs::write(&file, EXAMPLE).unwrap();
        assert!(load(&file, &t, Os::Windows).is_ok());
        let big = dir.path().join("big.toml");
        let mut text = String::from("schema = 1\n");
        while text.len() as u64 <= MAX_BYTES {
            text.push_str("# padding padding padding padding padding padding padding\n");
        }
        std::fs::write(&big, &text).unwrap();
        let e = load(&big, &t, Os::Windows).unwrap_err();
        assert!(matches!(*e.problem, Problem::TooBig { .. }), "{e}");
        let bin = dir.path().join("bin.toml");
        std::fs::write(&bin, b"schema = 1\n\xff\xfe").unwrap();
        assert_eq!(
            *load(&bin, &t, Os::Windows).unwrap_err().problem,
            Problem::NotText
        );
        #[cfg(unix)]
        {
            let link = dir.path().join("link.toml");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            let e = load(&link, &t, Os::Windows).unwrap_err();
            assert_eq!(*e.problem, Problem::Link);
            assert_eq!(e.hint().key, "hint_profile_read");
        }
    }
}
