//! From a recommendation and the user's choices to a `Plan`: an ordered list of steps,
//! serialisable so `--dry-run` can show it and `--plan FILE` can run a saved one.
//! Two halves: [`resolve`] does every look-up (network, disk, the machine), [`build`] is
//! a pure function of what it found; [`make`] is both, for the front ends.

mod build;
mod downloads;
mod resolve;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::recommend::{CudnnPick, Goal, Recommendation};
use crate::steps::Step;
use crate::target::Target;
use crate::version::Version;

pub use build::{
    build, build_cudnn_download, cudnn_archive_of, cudnn_install, driver_steps, pip_install,
};
pub use downloads::{
    ASSUMED_BYTES_PER_SEC, Download, Downloads, Item, Later, Rate, TORCH_CUDA_ESTIMATE_BYTES,
    downloads,
};
pub use resolve::{Installer, Resolved, Wheels, resolve, resolve_cudnn};

/// The plan for `rec` with the user's `choices`: [`resolve`] then [`build`]. Network and
/// disk: not on a UI thread.
pub fn make(target: &Target, rec: &Recommendation, choices: &Choices) -> Result<Plan, PlanError> {
    build::refuse_driver_in_wsl(rec, choices)?;
    build(target, rec, choices, &resolve(target, rec, choices)?)
}

/// The wizard's "Download from NVIDIA" as a one-step plan: [`resolve_cudnn`] then
/// [`build_cudnn_download`]. Finding the hash may read NVIDIA's redist manifest: not on
/// a UI thread.
pub fn cudnn_download(
    target: &Target,
    pick: &CudnnPick,
    choices: &Choices,
) -> Result<Plan, PlanError> {
    build_cudnn_download(
        target,
        pick,
        choices,
        &resolve_cudnn(target, pick, choices)?,
    )
}

/// A file name from the tables as one plain file-name component.
fn safe_name(name: &str, what: &'static str) -> Result<String, PlanError> {
    crate::safe_path::file_name(name)
        .map(str::to_string)
        .map_err(|why| PlanError::UnsafeName { what, why })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    pub goal: Goal,
    pub os: Os,
    pub root: Option<PathBuf>,
    pub toolkit: Option<Version>,
    pub cudnn: Option<Version>,
    pub torch_command: Option<String>,
    /// Things the user should know (a driver to install, a part left out). Serialised
    /// as `{key, params}`; a plan saved by an older version (English sentences here)
    /// still loads, without those sentences.
    #[serde(deserialize_with = "notes::current_only")]
    pub notes: Vec<Note>,
    pub steps: Vec<Step>,
}

/// Something the user should know about a plan. In JSON it is its message,
/// `{"key": "plan_note_…", "params": {…}}` (the catalogue's key, so a script renders it
/// as the front ends do); front ends say it in the user's language through
/// [`Note::message`].
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// Windows: the plan's first step installs the driver.
    DriverFirst {
        version: String,
    },
    /// The driver must be installed or updated, and the plan does not do it itself.
    DriverNeeded {
        update: bool,
        minimum: String,
        how: DriverHow,
    },
    NoCudnn,
    /// The wheels index gave no cuDNN: left out (`error`: the resolver's own words).
    CudnnNotOnIndex {
        error: String,
    },
    NoPython {
        min: String,
        max: String,
        command: String,
    },
    /// A plan `repair --fix` made of its fixes.
    Repair,
    /// The automatic PyPI choice measured the listed indexes (#34): the winner's name
    /// and address (empty: none answered in time, pypi.org is used).
    PypiMeasured {
        name: String,
        url: String,
    },
}

/// Who puts the driver in place when the plan has no driver step of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverHow {
    /// The CUDA installer's Display.Driver (`--with-driver`).
    CudaInstaller,
    /// The user said they will (`--skip-driver`, "I will install it myself").
    Yourself,
    /// Nobody yet: the link, or `--with-driver`.
    NotChosen,
    /// `--with-driver` was asked for, but the CUDA installer carries no driver new enough
    /// (13.x on Windows carries none, #20 class 6): nvidia.com/drivers.
    NotCarried,
    /// WSL2 (#32): the driver is the Windows host's, installed or updated on Windows;
    /// nothing inside WSL2 may do it.
    OnWindows,
}

impl Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.message().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Note {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Saved {
            key: String,
            #[serde(default)]
            params: std::collections::BTreeMap<String, String>,
        }
        let Saved { key, params } = Saved::deserialize(d)?;
        let get = |name: &str| params.get(name).cloned().unwrap_or_default();
        let driver = |update, how| Note::DriverNeeded {
            update,
            minimum: get("minimum"),
            how,
        };
        Ok(match key.as_str() {
            "plan_note_driver_first" => Note::DriverFirst {
                version: get("version"),
            },
            "plan_note_driver_install_cuda_installer" => driver(false, DriverHow::CudaInstaller),
            "plan_note_driver_install_yourself" => driver(false, DriverHow::Yourself),
            "plan_note_driver_install_link" => driver(false, DriverHow::NotChosen),
            "plan_note_driver_update_cuda_installer" => driver(true, DriverHow::CudaInstaller),
            "plan_note_driver_update_yourself" => driver(true, DriverHow::Yourself),
            "plan_note_driver_update_link" => driver(true, DriverHow::NotChosen),
            "plan_note_driver_install_not_carried" => driver(false, DriverHow::NotCarried),
            "plan_note_driver_update_not_carried" => driver(true, DriverHow::NotCarried),
            "plan_note_driver_install_on_windows" => driver(false, DriverHow::OnWindows),
            "plan_note_driver_update_on_windows" => driver(true, DriverHow::OnWindows),
            "plan_note_no_cudnn" => Note::NoCudnn,
            "plan_note_cudnn_not_on_index" => Note::CudnnNotOnIndex {
                error: get("error"),
            },
            "plan_note_no_python" => Note::NoPython {
                min: get("min"),
                max: get("max"),
                command: get("command"),
            },
            "plan_note_repair" => Note::Repair,
            k if k.starts_with("pypi_auto_") => Note::PypiMeasured {
                name: crate::steps::pypi_race::name_of_key(k).to_string(),
                url: get("address"),
            },
            other => {
                return Err(serde::de::Error::custom(format!(
                    "a note this version does not know: {other}"
                )));
            }
        })
    }
}

impl Note {
    /// The note as a message to render in the user's language.
    pub fn message(&self) -> crate::message::Message {
        use crate::msg;
        match self {
            Note::DriverFirst { version } => msg!("plan_note_driver_first", version = version),
            Note::DriverNeeded {
                update,
                minimum,
                how,
            } => match (update, how) {
                (false, DriverHow::CudaInstaller) => {
                    msg!("plan_note_driver_install_cuda_installer", minimum = minimum)
                }
                (false, DriverHow::Yourself) => {
                    msg!("plan_note_driver_install_yourself", minimum = minimum)
                }
                (false, DriverHow::NotChosen) => {
                    msg!("plan_note_driver_install_link", minimum = minimum)
                }
                (true, DriverHow::CudaInstaller) => {
                    msg!("plan_note_driver_update_cuda_installer", minimum = minimum)
                }
                (true, DriverHow::Yourself) => {
                    msg!("plan_note_driver_update_yourself", minimum = minimum)
                }
                (true, DriverHow::NotChosen) => {
                    msg!("plan_note_driver_update_link", minimum = minimum)
                }
                (false, DriverHow::NotCarried) => {
                    msg!("plan_note_driver_install_not_carried", minimum = minimum)
                }
                (true, DriverHow::NotCarried) => {
                    msg!("plan_note_driver_update_not_carried", minimum = minimum)
                }
                (false, DriverHow::OnWindows) => {
                    msg!("plan_note_driver_install_on_windows", minimum = minimum)
                }
                (true, DriverHow::OnWindows) => {
                    msg!("plan_note_driver_update_on_windows", minimum = minimum)
                }
            },
            Note::NoCudnn => msg!("plan_note_no_cudnn"),
            Note::CudnnNotOnIndex { error } => {
                msg!("plan_note_cudnn_not_on_index").with("error", error)
            }
            Note::NoPython { min, max, command } => {
                msg!(
                    "plan_note_no_python",
                    min = min,
                    max = max,
                    command = command
                )
            }
            Note::Repair => msg!("plan_note_repair"),
            Note::PypiMeasured { name, url } => {
                let picked = (!name.is_empty()).then(|| crate::steps::pypi_race::Candidate {
                    name: name.clone(),
                    url: url.clone(),
                });
                crate::steps::pypi_race::picked_message(picked.as_ref())
            }
        }
    }
}

mod notes {
    use serde::{Deserialize, Deserializer};

    use super::Note;

    /// Notes as this version writes them; an older plan's English sentences are dropped
    /// (they only described it), so a plan file a user saved still runs. A note of a kind
    /// this version does not know is an error: the plan is from a newer cuda-setup.
    pub fn current_only<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Note>, D::Error> {
        // A sentence (an older version's note) or a note: told apart by their JSON type,
        // so a note's own error (one this version does not know) is the one reported.
        let mut out = Vec::new();
        for v in Vec::<serde_json::Value>::deserialize(d)? {
            if !v.is_string() {
                out.push(Note::deserialize(v).map_err(serde::de::Error::custom)?);
            }
        }
        Ok(out)
    }
}

/// Where cuDNN comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CudnnChoice {
    Recommended,
    Archive(PathBuf),
    Skip,
}

pub use crate::recommend::Method;

#[derive(Debug, Clone)]
pub struct Choices {
    pub method: Method,
    /// The PyPI simple index for `Method::Wheels` (None: pypi.org).
    pub pypi_index: Option<String>,
    /// `Method::Wheels` from the fastest listed PyPI index, measured when the plan is
    /// made (#34; `pypi_index` is then not read).
    pub pypi_auto: bool,
    /// The PyTorch goal's pip step: the sources it measures first (#34,
    /// `steps::torch_sources::apply`).
    pub measured: crate::steps::torch_sources::AutoSources,
    /// `cuda-toolkit` extras for `Method::Wheels` (None: the developer set).
    pub components: Option<Vec<String>>,
    pub cudnn: CudnnChoice,
    pub mirrors: Vec<String>,
    pub bundle: Option<PathBuf>,
    pub with_driver: bool,
    /// "I will install the driver myself": no driver step even when one is needed.
    pub skip_driver: bool,
    pub python: Option<PathBuf>,
    pub connections: usize,
}

impl Choices {
    /// What both front ends start from: `method`, the recommended cuDNN, no mirror and
    /// no bundle, the driver left alone, no Python, 8 connections.
    /// Set the rest with struct update syntax (`Choices { mirrors, ..Choices::new(m) }`).
    pub fn new(method: Method) -> Choices {
        Choices {
            method,
            pypi_index: None,
            pypi_auto: false,
            measured: Default::default(),
            components: None,
            cudnn: CudnnChoice::Recommended,
            mirrors: Vec::new(),
            bundle: None,
            with_driver: false,
            skip_driver: false,
            python: None,
            connections: 8,
        }
    }

    /// `n` connections per download, kept to 1–16.
    pub fn with_connections(self, n: usize) -> Choices {
        Choices {
            connections: n.clamp(1, 16),
            ..self
        }
    }
}

/// The interpreter PyTorch goes into when none is named: the first `python3`, else
/// `python`, on the target's PATH.
pub fn default_python(target: &Target) -> Option<PathBuf> {
    target
        .host
        .which("python3")
        .or_else(|| target.host.which("python"))
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    #[error("nothing to install: {0}")]
    Blocked(String),
    /// A Jetson board (#32): JetPack provides the driver, CUDA and cuDNN.
    #[error("nothing to install on a Jetson board: JetPack provides the driver, CUDA and cuDNN")]
    Jetson,
    /// The source: why the published checksums could not be had, or did not name it.
    #[error("no published hash for {file}")]
    NoHash {
        file: String,
        #[source]
        source: crate::error::Cause,
    },
    #[error("{0}")]
    Wheels(#[source] crate::wheels::WheelError),
    /// A file name from the tables (or what refresh merged into them) that is not one
    /// plain file-name component.
    #[error("the tables name the {what} file in a way that cannot be used: {why}")]
    UnsafeName {
        what: &'static str,
        why: crate::safe_path::Unsafe,
    },
    /// [`build`] was handed a [`Resolved`] without what the plan needs (a bug of the
    /// caller's: [`make`] resolves first).
    #[error("{what} was not looked up before the plan was built")]
    NotResolved { what: &'static str },
    /// `--with-driver` inside WSL2 (#32): the driver is the Windows host's.
    #[error(
        "--with-driver cannot be used inside WSL2: the GPU driver is the Windows host's, and a Linux driver installed inside WSL2 breaks it"
    )]
    DriverInWsl,
    #[error("{0}")]
    Other(String),
}

impl PlanError {
    /// What to do about it, for the command line's `hint:` line.
    pub fn hint(&self) -> crate::message::Message {
        match self {
            PlanError::Wheels(e) => e.hint(),
            PlanError::UnsafeName { .. } => crate::msg!("hint_plan_unsafe_name"),
            PlanError::DriverInWsl => crate::msg!("hint_plan_driver_in_wsl"),
            PlanError::Jetson => crate::msg!(
                "hint_plan_jetson",
                page = crate::recommend::jetson::TORCH_FOR_JETSON
            ),
            _ => crate::msg!("hint_plan_other"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of note, each way the driver can be put in place.
    fn every_note() -> Vec<Note> {
        let mut all = vec![
            Note::DriverFirst {
                version: "581.57".into(),
            },
            Note::NoCudnn,
            Note::CudnnNotOnIndex {
                error: "cuDNN is left out: HTTP 404".into(),
            },
            Note::NoPython {
                min: "3.9".into(),
                max: "3.13".into(),
                command: "pip install torch".into(),
            },
            Note::Repair,
        ];
        for update in [false, true] {
            for how in [
                DriverHow::CudaInstaller,
                DriverHow::Yourself,
                DriverHow::NotChosen,
                DriverHow::NotCarried,
                DriverHow::OnWindows,
            ] {
                all.push(Note::DriverNeeded {
                    update,
                    minimum: "580.88".into(),
                    how,
                });
            }
        }
        all
    }

    /// Each note is a catalogue sentence in both languages, every placeholder filled, the
    /// raw error only in the details; in JSON it is its message and reads back the same.
    #[test]
    fn every_note_says_a_sentence_in_both_languages_and_reads_back() {
        use crate::i18n::{self, Lang};
        let mut keys = std::collections::BTreeSet::new();
        for n in every_note() {
            let m = n.message();
            assert!(i18n::has_key(m.key), "{m:?}");
            keys.insert(m.key);
            let (en, zh) = (i18n::render(&m, Lang::En), i18n::render(&m, Lang::Zh));
            assert!(!en.contains('{') && !zh.contains('{'), "{en} / {zh}");
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{zh}"
            );
            assert!(!zh.contains("HTTP 404"), "{zh}");
            let json = serde_json::to_value(&n).unwrap();
            assert_eq!(json["key"], m.key, "{json}");
            assert_eq!(serde_json::from_value::<Note>(json).unwrap(), n);
        }
        assert_eq!(keys.len(), every_note().len(), "one key per note");
        let m = every_note()[2].message();
        assert_eq!(
            i18n::details(&m, Lang::Zh).as_deref(),
            Some("cuDNN is left out: HTTP 404")
        );
    }

    /// A plan saved by an older version (English sentences as notes) still loads, without
    /// them; a note this version does not know is an error that names it.
    #[test]
    fn an_older_plans_sentences_are_dropped_and_an_unknown_note_is_refused() {
        let plan = |notes: serde_json::Value| {
            serde_json::json!({
                "format": 1, "goal": "pytorch", "os": "windows", "root": null,
                "toolkit": null, "cudnn": null, "torch_command": null,
                "notes": notes, "steps": [],
            })
        };
        let old = plan(serde_json::json!([
            "the NVIDIA driver must be updated to 580.88 or newer",
            {"key": "plan_note_no_cudnn", "params": {}, "text": "no cuDNN release fits"}
        ]));
        let p: Plan = serde_json::from_value(old).unwrap();
        assert_eq!(p.notes, vec![Note::NoCudnn]);
        let newer = plan(serde_json::json!([{"key": "plan_note_from_the_future"}]));
        let e = serde_json::from_value::<Plan>(newer)
            .unwrap_err()
            .to_string();
        assert!(e.contains("plan_note_from_the_future"), "{e}");
    }

    #[test]
    fn choices_start_from_the_same_defaults_and_keep_connections_in_range() {
        let c = Choices::new(Method::Wheels);
        assert_eq!(c.method, Method::Wheels);
        assert_eq!(c.cudnn, CudnnChoice::Recommended);
        assert_eq!(c.connections, 8);
        assert!(c.mirrors.is_empty() && c.bundle.is_none() && c.python.is_none());
        assert!(!c.with_driver);
        assert_eq!(c.clone().with_connections(0).connections, 1);
        assert_eq!(c.clone().with_connections(99).connections, 16);
        assert_eq!(c.with_connections(4).connections, 4);
    }
}
