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

/// The wheels method's PyPI index a language starts with, as the Choose page's field
/// holds it: the name of [`default_pip_mirror`]'s mirror ("tsinghua" in Chinese, "" —
/// pypi.org — otherwise). One source of truth for both pages.
pub fn default_pypi(lang: Lang) -> &'static str {
    PIP_MIRRORS[default_pip_mirror(lang)].0
}

/// The PyPI mirror at `index` of [`PIP_MIRRORS`] (None: pypi.org).
pub fn pip_mirror(index: usize) -> Option<PypiMirror> {
    let (name, _) = PIP_MIRRORS[index.min(PIP_MIRRORS.len() - 1)];
    (!name.is_empty()).then(|| name.parse().ok()).flatten()
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
    /// The PyPI index for wheels: a mirror name or URL, empty for pypi.org.
    pub pypi: String,
    /// An old driver that works: update it, keep it, or the recommendation's default.
    pub driver: DriverPref,
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
                .clone()
                .unwrap_or_else(|| default_pypi(lang).to_string()),
            driver: opts.driver,
        }
    }

    /// The toolkit asked for (None: the recommended one; text that is no version too).
    pub fn cuda_version(&self) -> Option<Version> {
        self.cuda.trim().parse().ok()
    }

    /// The index URL for the wheels method (None: pypi.org; an unknown name too — the
    /// field shows why).
    pub fn pypi_index(&self) -> Option<String> {
        let t = self.pypi.trim();
        (!t.is_empty())
            .then(|| t.parse::<PypiMirror>().ok().map(|m| m.url))
            .flatten()
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
        // The wheels' index follows the language until the user (or the command line) set
        // one, and until a plan was made with it (the recommendation does not depend on it).
        if !self.pypi_chosen
            && self.settings.pypi == default_pypi(before)
            && self.prepare.job.is_idle()
        {
            self.settings.pypi = default_pypi(l).to_string();
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
