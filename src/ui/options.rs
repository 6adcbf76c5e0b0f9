//! How the wizard starts: the CLI's sandbox knobs and what-if facts, so tests run the
//! real pipeline in a sandbox.

use std::path::PathBuf;

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::target::Target;
use cuda_setup_core::verify::SmokeOptions;
use cuda_setup_core::version::Version;

use super::flow::Page;
use super::fonts::FontSource;

/// Facts given instead of detected (the CLI's what-if flags), checked by the core.
pub use cuda_setup_core::whatif::WhatIf as Overrides;

/// How the wizard starts: the same knobs as the CLI, so tests run the real pipeline in a
/// sandbox.
#[derive(Clone)]
pub struct Options {
    /// None: from the system locale.
    pub lang: Option<Lang>,
    pub tables: Tables,
    /// Where installs go.
    pub target: Target,
    /// What detection probes.
    pub host: Host,
    pub overrides: Overrides,
    pub mirrors: Vec<String>,
    /// An offline bundle folder (`cuda-setup bundle`): installers and archives found
    /// there are not downloaded (every plan's, the cuDNN page's too).
    pub bundle: Option<PathBuf>,
    pub goal: Option<Goal>,
    /// Toolkit version prefix (`11.8`).
    pub cuda: Option<Version>,
    /// The interpreter PyTorch goes into.
    pub python: Option<PathBuf>,
    /// A cuDNN zip to use (the autopilot validates and installs it).
    pub cudnn_archive: Option<PathBuf>,
    pub smoke: SmokeOptions,
    pub deadlines: Deadlines,
    pub fonts: FontSource,
    /// Native file dialogs (off in tests: they would wait for a person).
    pub file_dialogs: bool,
    /// Walk through the pages by itself up to this one (screenshots).
    pub autopilot: Option<Page>,
    /// Installer or wheels (default: what `recommend::method_advice` says).
    pub method: cuda_setup_core::recommend::Method,
    /// The PyPI mirror for the wheels method.
    pub pypi_mirror: Option<String>,
    /// The wheels method's components (None: the developer set).
    pub components: Option<Vec<String>>,
    /// Look for new releases in the background at start (None: never; tests and
    /// sandboxes leave it off so they touch no network).
    pub refresh: Option<super::worker::Refresh>,
    /// An old driver that works: update it, keep it, or the recommendation's default
    /// (#32); the Choose page's driver row changes it.
    pub driver: cuda_setup_core::recommend::DriverPref,
}

impl Options {
    /// This machine, as it is.
    pub fn machine(tables: Tables) -> Options {
        let target = Target::real();
        let (method, _) =
            cuda_setup_core::recommend::method_advice(&cuda_setup_core::recommend::MethodFacts {
                // On Windows the wizard can relaunch itself elevated.
                elevated: target.elevated || cfg!(windows),
                ..Default::default()
            });
        Options {
            method,
            pypi_mirror: None,
            components: None,
            lang: None,
            tables,
            target,
            host: Host::real(),
            overrides: Overrides::default(),
            mirrors: Vec::new(),
            bundle: None,
            goal: None,
            cuda: None,
            python: None,
            cudnn_archive: None,
            smoke: SmokeOptions::default(),
            deadlines: Deadlines::default(),
            fonts: FontSource::SystemThenEmbedded,
            file_dialogs: true,
            autopilot: None,
            refresh: None,
            driver: Default::default(),
        }
    }

    /// Everything under `root`, as `install --root` does; detection sees only the root.
    pub fn sandbox(tables: Tables, os: Os, root: &std::path::Path) -> Options {
        let env = std::env::vars().filter(|(k, _)| k == "PATH").collect();
        Options {
            target: Target::rooted(os, root),
            host: Host::sandbox(os, root, env),
            // A sandbox root is writable: the installer, as on an elevated machine.
            method: cuda_setup_core::recommend::Method::Installer,
            ..Options::machine(tables)
        }
    }
}
