//! The distance between a PC and its lab profile (#36, `state test`): per managed layer —
//! driver, toolkit, cuDNN, PyTorch, the guard — what is, what should be, and the plan
//! step that would fix it, with a plain-words fix from the catalogue. A layer the
//! profile leaves out is not judged. Pure: a function of the profile and the state.

use serde::{Deserialize, Serialize};

use super::profile::{CudnnWant, DriverRule, Profile, ToolkitWant, TorchWant, Wanted};
use super::state::{State, ToolkitState};
use crate::compat::{Os, Tables};
use crate::i18n::{self, Lang};
use crate::message::Message;
use crate::msg;
use crate::recommend::{Goal, Method};
use crate::steps::StepKind;
use crate::version::Version;

/// A layer of the stack, as the profile's sections name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Driver,
    Toolkit,
    Cudnn,
    Pytorch,
    Guard,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Driver => "driver",
            Layer::Toolkit => "toolkit",
            Layer::Cudnn => "cudnn",
            Layer::Pytorch => "pytorch",
            Layer::Guard => "guard",
        }
    }
}

/// One layer out of its desired state. `is` and `should` are messages (versions as
/// they are, words from the catalogue); `fix` is the plain-words next step, rendered
/// with `should` (and `is`) filled in by [`Drift::entry`].
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    pub layer: Layer,
    /// None: nothing there.
    pub is: Option<Message>,
    pub should: Message,
    pub fix: Message,
    /// The plan step that fixes it (`state set` runs it); None: not a step of ours.
    pub fix_step: Option<StepKind>,
}

/// A drift as reports and `--json` carry it: its fix rendered in the report's language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftEntry {
    pub layer: Layer,
    pub is: Option<String>,
    pub should: String,
    pub fix: String,
    pub fix_step: Option<StepKind>,
}

impl Drift {
    pub fn entry(&self, lang: Lang) -> DriftEntry {
        let is = self.is.as_ref().map(|m| i18n::render(m, lang));
        let should = i18n::render(&self.should, lang);
        let fix = self
            .fix
            .clone()
            .with("should", &should)
            .with("is", is.as_deref().unwrap_or("-"));
        DriftEntry {
            layer: self.layer,
            fix: i18n::render(&fix, lang),
            is,
            should,
            fix_step: self.fix_step,
        }
    }
}

impl Layer {
    /// The layer's name in words (`fleet_layer_*`).
    pub fn name(self) -> Message {
        match self {
            Layer::Driver => msg!("fleet_layer_driver"),
            Layer::Toolkit => msg!("fleet_layer_toolkit"),
            Layer::Cudnn => msg!("fleet_layer_cudnn"),
            Layer::Pytorch => msg!("fleet_layer_pytorch"),
            Layer::Guard => msg!("fleet_layer_guard"),
        }
    }
}

/// A technical token (a version, a path): the same in every language.
fn token(v: impl ToString) -> Message {
    msg!("fleet_token", value = v.to_string())
}

/// `want` is a prefix of `have` (`12.4` of `12.4.1`, `9` of `9.1.0`).
pub fn prefix_of(want: &Version, have: &Version) -> bool {
    have.parts().starts_with(want.parts())
}

/// Every managed layer that is not as `profile` says, in the stack's order.
pub fn diff(profile: &Profile, state: &State, tables: &Tables) -> Vec<Drift> {
    let mut out = Vec::new();
    if let Some(d) = &profile.driver {
        driver(profile, d, state, tables, &mut out);
    }
    let wanted_toolkits: Option<Vec<&ToolkitState>> = profile
        .toolkit
        .as_ref()
        .map(|w| matching(w, state).collect());
    if let (Some(w), Some(found)) = (&profile.toolkit, &wanted_toolkits) {
        toolkit(w, state, found, &mut out);
    }
    if let Some(c) = &profile.cudnn {
        cudnn(c, state, wanted_toolkits.as_deref(), &mut out);
    }
    if let Some(t) = &profile.pytorch {
        torch(t, state, &mut out);
    }
    out
}

fn driver(
    profile: &Profile,
    d: &super::profile::DriverWant,
    state: &State,
    tables: &Tables,
    out: &mut Vec<Drift>,
) {
    let rule = match &d.rule {
        DriverRule::Needed => needed(profile, state.os, tables).map(DriverRule::AtLeast),
        r => Some(r.clone()),
    };
    let have = state.driver.as_ref().map(|h| &h.version);
    let (fits, should) = match &rule {
        Some(DriverRule::AtLeast(v)) => (
            have.is_some_and(|h| h >= v),
            msg!("fleet_should_at_least", version = v),
        ),
        Some(DriverRule::Exact(v)) => (have == Some(v), token(v)),
        // Nothing names a floor: at least a driver must be there (#36 review 5).
        Some(DriverRule::Needed) | None => (have.is_some(), msg!("fleet_should_any_driver")),
    };
    if fits {
        return;
    }
    // No plan step takes a driver down: an `exact` below the installed one is by hand.
    let downgrade = matches!((&rule, have), (Some(DriverRule::Exact(v)), Some(h)) if h > v);
    // Only Windows' driver is a step of ours, and only inside a plan the profile asks
    // for ([toolkit] or [pytorch]): the recommender gets the profile's floor
    // (`Wanted::driver_floor`). A Linux driver comes from the distribution's packages.
    let ours = d.install
        && state.os == Os::Windows
        && (profile.toolkit.is_some() || profile.pytorch.is_some())
        && !downgrade;
    let fix = if downgrade {
        Message::new("fleet_fix_driver_downgrade")
    } else if ours {
        Message::new("fleet_fix_driver")
    } else if state.os == Os::Linux {
        let minimum = match &rule {
            Some(DriverRule::AtLeast(v) | DriverRule::Exact(v)) => Some(v),
            _ => None,
        };
        // The distribution's own commands, as `recommend` gives them (the report's
        // os-release read against the embedded table).
        match state
            .distro
            .as_ref()
            .and_then(|d| crate::linux_driver::commands_for(&d.os_release(), minimum))
        {
            Some(a) => Message::new("fleet_fix_driver_linux_commands")
                .with("distro", a.distro.unwrap_or_else(|| "Linux".into()))
                .with("commands", a.commands.join(" && ")),
            None => Message::new("fleet_fix_driver_linux"),
        }
    } else {
        Message::new("fleet_fix_driver_manual")
    };
    out.push(Drift {
        layer: Layer::Driver,
        is: have.map(token),
        should,
        fix,
        fix_step: ours.then_some(StepKind::InstallDriver),
    });
}

/// `[driver]` with neither `min` nor `exact`: at least the floor of the CUDA line the
/// profile's toolkit and PyTorch variant are built with (the tables' `[[line]]`).
fn needed(profile: &Profile, os: Os, tables: &Tables) -> Option<Version> {
    let toolkit = profile.toolkit.as_ref().map(|t| t.version.clone());
    let torch = profile
        .pytorch
        .as_ref()
        .and_then(|t| t.variant.as_deref())
        .and_then(variant_cuda);
    toolkit
        .into_iter()
        .chain(torch)
        .filter_map(|cuda| crate::recommend::wheel_driver_floor(tables, os, &cuda))
        .max()
}

fn method_word(m: Method) -> &'static str {
    match m {
        Method::Installer => "installer",
        Method::Wheels => "wheels",
    }
}

/// The toolkits that are the wanted version, laid down the wanted way.
fn matching<'a>(w: &'a ToolkitWant, s: &'a State) -> impl Iterator<Item = &'a ToolkitState> {
    s.toolkits.iter().filter(move |t| {
        t.method == w.method && t.version.as_ref().is_some_and(|v| prefix_of(&w.version, v))
    })
}

fn versions(ts: &[&ToolkitState]) -> Option<String> {
    let v: Vec<String> = ts
        .iter()
        .map(|t| match &t.version {
            Some(v) => format!("{v} ({})", method_word(t.method)),
            None => format!("? ({})", method_word(t.method)),
        })
        .collect();
    (!v.is_empty()).then(|| v.join(", "))
}

fn toolkit(w: &ToolkitWant, s: &State, found: &[&ToolkitState], out: &mut Vec<Drift>) {
    let should = format!("{} ({})", w.version, method_word(w.method));
    if found.is_empty() {
        out.push(Drift {
            layer: Layer::Toolkit,
            is: versions(&s.toolkits.iter().collect::<Vec<_>>()).map(token),
            fix: Message::new("fleet_fix_toolkit"),
            should: token(should),
            fix_step: Some(match w.method {
                Method::Installer => StepKind::InstallToolkit,
                Method::Wheels => StepKind::AssembleToolkit,
            }),
        });
    } else if !found.iter().any(|t| t.active) {
        // There, but a new console uses another one (or none).
        let active: Vec<&ToolkitState> = s.toolkits.iter().filter(|t| t.active).collect();
        out.push(Drift {
            layer: Layer::Toolkit,
            is: Some(match versions(&active) {
                Some(a) => msg!(
                    "fleet_is_toolkit_other_active",
                    found = versions(found).unwrap_or_default(),
                    active = a
                ),
                None => msg!(
                    "fleet_is_toolkit_not_active",
                    found = versions(found).unwrap_or_default()
                ),
            }),
            fix: msg!("fleet_fix_toolkit_active", toolkit = &should),
            should: msg!("fleet_should_toolkit_active", toolkit = &should),
            fix_step: Some(StepKind::ConfigureEnv),
        });
    }
}

/// cuDNN `have` is what `want` asks for.
fn cudnn_fits(want: &CudnnWant, have: Option<&Version>) -> bool {
    match want {
        CudnnWant::None => true,
        CudnnWant::Recommended => true,
        CudnnWant::Version(v) => have.is_some_and(|h| prefix_of(v, h)),
        // The archive's release, from NVIDIA's file name
        // (`cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip`); a name that says none:
        // any cuDNN counts.
        CudnnWant::Archive(p) => match archive_version(p) {
            Some(v) => have.is_some_and(|h| {
                let n = v.parts().len().min(h.parts().len()).min(3);
                v.parts()[..n] == h.parts()[..n]
            }),
            None => true,
        },
    }
}

/// The cuDNN release an archive's file name states, if it states one.
pub fn archive_version(path: &std::path::Path) -> Option<Version> {
    let name = path.file_name()?.to_str()?;
    name.split(['-', '_'])
        .filter(|p| p.contains('.') && p.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .find_map(|p| p.parse().ok())
}

fn cudnn_should(want: &CudnnWant) -> Message {
    match want {
        // "none" never drifts (`cudnn` returns first).
        CudnnWant::Recommended | CudnnWant::None => msg!("fleet_should_recommended"),
        CudnnWant::Version(v) => token(v),
        CudnnWant::Archive(p) => token(archive_version(p).map_or_else(
            || {
                p.file_name()
                    .map_or("?".into(), |n| n.to_string_lossy().into_owned())
            },
            |v| v.to_string(),
        )),
    }
}

fn cudnn(want: &CudnnWant, s: &State, toolkits: Option<&[&ToolkitState]>, out: &mut Vec<Drift>) {
    // "none": cuDNN is not required; what is there is left alone.
    if *want == CudnnWant::None {
        return;
    }
    // In the wanted toolkit when the profile manages one (with none there, the toolkit's
    // drift comes first and this one follows from it), else anywhere.
    let inside = |p: Option<&std::path::Path>| match toolkits {
        Some(ts) => p.is_some_and(|p| ts.iter().any(|t| t.path.as_path() == p)),
        None => true,
    };
    let here: Vec<_> = s
        .cudnn
        .iter()
        .filter(|c| inside(c.toolkit_path.as_deref()))
        .collect();
    if here.iter().any(|c| cudnn_fits(want, c.version.as_ref())) {
        return;
    }
    let is: Vec<String> = here
        .iter()
        .map(|c| c.version.as_ref().map_or("?".into(), |v| v.to_string()))
        .collect();
    let should = cudnn_should(want);
    out.push(Drift {
        layer: Layer::Cudnn,
        is: (!is.is_empty()).then(|| token(is.join(", "))),
        fix: Message::new("fleet_fix_cudnn"),
        should,
        fix_step: Some(StepKind::InstallCudnn),
    });
}

fn torch(want: &TorchWant, s: &State, out: &mut Vec<Drift>) {
    let should = match (&want.version, &want.variant) {
        (Some(v), Some(x)) => token(format!("{v} {x}")),
        (Some(v), None) => msg!("fleet_should_torch_cuda", version = v),
        (None, Some(x)) => msg!("fleet_should_torch_recommended_variant", variant = x),
        (None, None) => msg!("fleet_should_torch_recommended"),
    };
    let fits = s.pytorch.as_ref().is_some_and(|t| {
        let version = want.version.as_ref().is_none_or(|v| {
            t.version
                .parse::<Version>()
                .is_ok_and(|have| prefix_of(v, &have))
        });
        let variant = match &want.variant {
            Some(x) => t.variant.eq_ignore_ascii_case(x),
            // The recommended build is a CUDA one: a CPU build never is.
            None => t.variant != "cpu",
        };
        version && variant
    });
    if !fits {
        out.push(Drift {
            layer: Layer::Pytorch,
            is: s
                .pytorch
                .as_ref()
                .map(|t| token(format!("{} {}", t.version, t.variant))),
            fix: Message::new("fleet_fix_torch"),
            should,
            fix_step: Some(StepKind::InstallTorch),
        });
    }
    if want.guard {
        let is = match &s.guard {
            None => None,
            Some(g) if g.intact == Some(false) => Some(msg!("fleet_guard_is_replaced")),
            Some(g) if g.on => return,
            // An elevated run only records (`guard::on` refuses it: a pin written as
            // administrator would be the administrator's file in the user's Python): the
            // verified record of the torch installed is all it can ask for; the pin is
            // the user's own run's.
            Some(g) if s.elevated && g.intact == Some(true) => return,
            Some(_) => Some(msg!("fleet_guard_is_off")),
        };
        out.push(Drift {
            layer: Layer::Guard,
            is,
            should: msg!("fleet_guard_should_on"),
            // Elevated: what records the build is a GPU check (the doctor), not the user.
            fix: if s.elevated {
                let python = s
                    .pytorch
                    .as_ref()
                    .map(|t| t.python.clone())
                    .or_else(|| want.python.interpreter(s.os))
                    .map_or_else(|| "python".to_string(), |p| p.display().to_string());
                msg!("fleet_fix_guard_elevated", python = python)
            } else {
                msg!("fleet_fix_guard")
            },
            fix_step: None,
        });
    }
}

/// `cu124` → 12.4, `cu118` → 11.8, `cu130` → 13.0 (PyTorch's variant names).
pub fn variant_cuda(variant: &str) -> Option<Version> {
    let digits = variant.strip_prefix("cu")?;
    if digits.len() < 3 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(Version::new(&[major.parse().ok()?, minor.parse().ok()?]))
}

/// The install runs of `profile` (`Profile::plans`) that fix `drift`, in order: the
/// developer's (driver, toolkit, cuDNN) when one of those drifts, PyTorch's when it
/// does (or, with no toolkit managed, when the driver does: its plan brings the driver).
/// None when nothing a plan can fix drifts (the guard is put on by `guard::on`).
pub fn plans_for(profile: &Profile, drift: &[Drift]) -> Vec<Wanted> {
    let drifts = |l: Layer| drift.iter().any(|d| d.layer == l && d.fix_step.is_some());
    let developer = drifts(Layer::Driver) || drifts(Layer::Toolkit) || drifts(Layer::Cudnn);
    let has_developer = profile.toolkit.is_some();
    profile
        .plans()
        .into_iter()
        .filter(|w| match w.goal {
            Goal::Developer => developer,
            Goal::Pytorch => drifts(Layer::Pytorch) || (!has_developer && drifts(Layer::Driver)),
        })
        .collect()
}

#[cfg(test)]
mod tests;
