//! The settings the plan is built from (the Choose page's), the PyPI mirrors, the
//! language, the goal, and the tables' background refresh: each change gives a new
//! recommendation and drops the plan made for the old one.

use cuda_setup_core::i18n::Lang;
use cuda_setup_core::plan::Method;
use cuda_setup_core::recommend::{DriverPath, DriverPref, Goal};
use cuda_setup_core::verify::doctor::PypiMirror;
use cuda_setup_core::version::Version;

use super::Session;
use crate::ui::options::Options;
use crate::ui::worker::{Command, Refresh};

/// The PyPI mirrors offered for torch's dependencies (the wheels come from PyTorch's own
/// index, which no PyPI mirror carries): (name, label key).
pub const PIP_MIRRORS: [(&str, &str); 4] = [
    ("", "ui_mirror_none"),
    ("tsinghua", "ui_mirror_tsinghua"),
    ("aliyun", "ui_mirror_aliyun"),
    ("ustc", "ui_mirror_ustc"),
];

/// The PyPI mirror a language starts with: Tsinghua's for Chinese (pypi.org is slow from
/// China; the user's guide uses https://pypi.tuna.tsinghua.edu.cn/simple, and TUNA's help
/// page https://mirrors.tuna.tsinghua.edu.cn/help/pypi/ gives that address), none otherwise.
pub fn default_pip_mirror(lang: Lang) -> usize {
    match lang {
        Lang::Zh => 1,
        _ => 0,
    }
}

/// The wheels method's PyPI index a language starts with, as the Choose page's dropdown
/// holds it: [`default_pip_mirror`]'s entry (Tsinghua's in Chinese, the official PyPI
/// otherwise). One source of truth for both pages.
pub fn default_pypi(lang: Lang) -> PypiChoice {
    PypiChoice::Listed(default_pip_mirror(lang))
}

/// A PyPI index as the dropdown holds it (#34): the fastest measured (the first entry),
/// an entry of [`PIP_MIRRORS`] (0: the official PyPI), or "another address…" with the
/// address as typed — an empty one is shown as empty and said on the page, never read
/// as a hidden choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PypiChoice {
    /// Measured when the plan is made (`Choices::pypi_auto`).
    Auto,
    Listed(usize),
    Address(String),
}

impl PypiChoice {
    /// From the command line's `--pypi-mirror` text: a listed name is its entry, anything
    /// else an address (shown, and refused on the page when it is none).
    pub fn from_cli(text: &str) -> PypiChoice {
        if text.trim().eq_ignore_ascii_case("auto") {
            return PypiChoice::Auto;
        }
        let name = text.parse::<PypiMirror>().ok().map(|m| m.name);
        match PIP_MIRRORS
            .iter()
            .position(|(n, _)| !n.is_empty() && Some(*n) == name.as_deref())
        {
            Some(i) => PypiChoice::Listed(i),
            None => PypiChoice::Address(text.trim().to_string()),
        }
    }

    /// The index URL (None: pypi.org — the official entry, or an address not yet one —
    /// or measured).
    pub fn index(&self) -> Option<String> {
        match self {
            PypiChoice::Auto => None,
            PypiChoice::Listed(i) => pip_mirror(*i).map(|m| m.url),
            PypiChoice::Address(a) => {
                let a = a.trim();
                (a.starts_with("https://") || a.starts_with("http://"))
                    .then(|| a.parse::<PypiMirror>().ok().map(|m| m.url))
                    .flatten()
            }
        }
    }

    /// A mirror was picked (not the official PyPI, not an address still to be typed).
    pub fn is_mirror(&self) -> bool {
        self.index().is_some()
    }
}

/// The PyPI mirror at `index` of [`PIP_MIRRORS`] (None: pypi.org).
pub fn pip_mirror(index: usize) -> Option<PypiMirror> {
    let (name, _) = PIP_MIRRORS[index.min(PIP_MIRRORS.len() - 1)];
    (!name.is_empty()).then(|| name.parse().ok()).flatten()
}

/// Whether PyTorch's wheels start as measured in `lang` (the core's default,
/// [`cuda_setup_core::steps::torch_sources::TorchSource::default_for`]).
pub fn torch_auto_default(lang: Lang) -> bool {
    cuda_setup_core::steps::torch_sources::TorchSource::default_for(lang)
        == cuda_setup_core::steps::torch_sources::TorchSource::Auto
}

/// What the plan is built from, as the Choose page shows it (text as typed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Toolkit version prefix (`12.4`), empty for the recommended one.
    pub cuda: String,
    /// Mirror base URLs, one a line.
    pub mirrors: String,
    pub with_driver: bool,
    /// "I will install the driver myself": the plan has no driver step.
    pub skip_driver: bool,
    pub connections: usize,
    /// Installer or wheels; `method_advice` chose the default.
    pub method: Method,
    /// The PyPI index for wheels.
    pub pypi: PypiChoice,
    /// An old driver that works: update it, keep it, or the recommendation's default.
    pub driver: DriverPref,
    /// The proxy field (#34): empty is the system's proxy; a valid address is applied to
    /// the whole process ([`cuda_setup_core::proxy::set`]) as it is typed.
    pub proxy: String,
}

impl Settings {
    /// From the command line; in the Chinese UI the wheels' PyPI index starts as the
    /// same Chinese mirror the PyPI page uses ([`default_pypi`]), unless one was given.
    pub fn new(opts: &Options, lang: Lang) -> Settings {
        Settings {
            cuda: opts
                .cuda
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            mirrors: opts.mirrors.join("\n"),
            with_driver: false,
            skip_driver: false,
            connections: 8,
            method: opts.method,
            pypi: opts
                .pypi_mirror
                .as_deref()
                .map_or_else(|| default_pypi(lang), PypiChoice::from_cli),
            driver: opts.driver,
            // `--proxy` was applied at start; the field shows it.
            proxy: cuda_setup_core::proxy::current()
                .map(|p| p.to_string())
                .unwrap_or_default(),
        }
    }

    /// The toolkit asked for (None: the recommended one; text that is no version too).
    pub fn cuda_version(&self) -> Option<Version> {
        self.cuda.trim().parse().ok()
    }

    /// The index URL for the wheels method (None: pypi.org; an address that is none
    /// too — the page says so).
    pub fn pypi_index(&self) -> Option<String> {
        self.pypi.index()
    }

    pub fn mirror_list(&self) -> Vec<String> {
        self.mirrors
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }
}

impl Session {
    pub(super) fn set_lang(&mut self, l: Lang) {
        let before = self.lang;
        self.lang = l;
        if !self.torch.mirror_chosen {
            self.torch.mirror = default_pip_mirror(l);
        }
        if !self.torch.torch_auto_chosen {
            self.torch.torch_auto = torch_auto_default(l);
        }
        // The wheels' index follows the language until the user (or the command line) set
        // one, and until a plan was made with it (the recommendation does not depend on it).
        if !self.pypi_chosen
            && self.settings.pypi == default_pypi(before)
            && self.prepare.job.is_idle()
        {
            self.settings.pypi = default_pypi(l);
        }
    }

    /// The driver row's choice (#32): another recommendation, and no plan made for the old.
    #[must_use]
    pub(super) fn choose_driver(&mut self, p: DriverPath) -> Vec<Command> {
        let mut s = self.settings.clone();
        s.driver = match p {
            DriverPath::Update => DriverPref::Update,
            DriverPath::Keep => DriverPref::Keep,
        };
        self.set_settings(s)
    }

    #[must_use]
    pub(super) fn choose_goal(&mut self, g: Goal) -> Vec<Command> {
        if g == self.goal {
            return Vec::new();
        }
        self.goal = g;
        self.drop_plan();
        self.recompute()
    }

    #[must_use]
    pub(super) fn set_settings(&mut self, s: Settings) -> Vec<Command> {
        if s == self.settings {
            return Vec::new();
        }
        self.pypi_chosen |= s.pypi != self.settings.pypi;
        // Another toolkit or method is another recommendation (wheels know more
        // releases), and any setting another plan.
        self.settings = s;
        self.drop_plan();
        self.recompute()
    }

    /// The background refresh of the tables, started (at start-up; nothing waits for it).
    pub fn refresh(&mut self, r: Refresh) -> Command {
        self.refresh = crate::ui::job::Job::started();
        Command::Refresh(Box::new(r))
    }

    /// The refresh's answer: new tables (and a new recommendation from them), or why a
    /// source's data was refused.
    #[must_use]
    pub(super) fn refreshed(
        &mut self,
        r: Result<Box<cuda_setup_core::refresh::Outcome>, String>,
    ) -> Vec<Command> {
        match r {
            Ok(o) => {
                self.refresh.finish(Ok(()));
                self.tables_line = cuda_setup_core::refresh::outcome_message(&o);
                self.opts.tables = o.tables;
                // The recommendation comes from the new tables.
                self.recompute()
            }
            Err(e) => {
                self.tables_line = cuda_setup_core::msg!("refresh_rejected", error = e.clone());
                self.refresh.finish(Err(e));
                Vec::new()
            }
        }
    }
}

/// A mirror of PyTorch's index (compat-tables/pytorch.toml `[[mirror]]`) as users know it
/// (#34): the catalogue's name for the table's `name`; a mirror the catalogue does not
/// know (a `--compat-dir` of the user's) keeps the table's spelling.
pub fn torch_mirror_key(name: &str) -> Option<&'static str> {
    match name {
        "NJU" => Some("ui_mirror_nju"),
        "SJTU" => Some("ui_mirror_sjtu"),
        _ => None,
    }
}
