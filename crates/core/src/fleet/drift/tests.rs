//! `diff` against hand-made states (#36 review 3, 5, 11).

use std::path::Path;

use super::*;
use crate::fleet::profile;
use crate::recommend::DriverFloor;

fn tables() -> Tables {
    Tables::embedded().unwrap()
}

fn profile(text: &str, os: Os) -> Profile {
    profile::parse(text, Path::new("lab.toml"), &tables(), os).unwrap()
}

/// A PC with an RTX 3060, `driver` (None: none) and PyTorch 2.5.1 cu124, guard on.
fn state(os: Os, driver: Option<&str>) -> State {
    let mut s: State = serde_json::from_value(serde_json::json!({
        "schema": "cuda-setup/state", "schema_version": 1, "cuda_setup_version": "0.1.0",
        "computer": "LAB-PC-07", "taken_at": 1796550000u64, "os": os, "root": null,
        "gpus": [{"name": "NVIDIA GeForce RTX 3060", "compute_capability": "8.6"}],
        "driver": null, "toolkits": [], "cudnn": [],
        "pytorch": {"python": "C:\\Python312\\python.exe", "version": "2.5.1",
                    "variant": "cu124", "cuda": "12.4"},
        "guard": {"on": true, "verified_at": 1796540000u64},
        "last_check": null
    }))
    .unwrap();
    s.driver = driver.map(|v| super::super::state::DriverState {
        version: v.parse().unwrap(),
        cuda: None,
    });
    s
}

const TORCH: &str = "[pytorch]\nversion = \"2.5\"\nvariant = \"cu124\"\nguard = true\n";

fn driver_drift(p: &Profile, s: &State) -> Option<Drift> {
    diff(p, s, &tables())
        .into_iter()
        .find(|d| d.layer == Layer::Driver)
}

/// The docs' example: 552.22 installed, `min = "560.94"`. The fix is a step of ours, and
/// the run `state set` makes carries the floor, so its plan installs the driver.
#[test]
fn a_min_above_the_installed_driver_is_a_step_whose_plan_carries_the_floor() {
    let p = profile(
        &format!("schema = 1\n[driver]\nmin = \"560.94\"\n{TORCH}"),
        Os::Windows,
    );
    let d = driver_drift(&p, &state(Os::Windows, Some("552.22"))).expect("drift");
    assert_eq!(d.fix_step, Some(StepKind::InstallDriver));
    let e = d.entry(Lang::En);
    assert_eq!(e.should, ">= 560.94");
    assert!(e.fix.contains("560.94"), "{}", e.fix);
    let runs = plans_for(&p, &[d]);
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0].request(None).driver_floor,
        Some(DriverFloor::AtLeast("560.94".parse().unwrap()))
    );
}

/// `exact` below the installed driver: no step takes a driver down, so none is named and
/// the fix says what to do by hand.
#[test]
fn an_exact_below_the_installed_driver_is_by_hand() {
    let p = profile(
        &format!("schema = 1\n[driver]\nexact = \"560.94\"\n{TORCH}"),
        Os::Windows,
    );
    let d = driver_drift(&p, &state(Os::Windows, Some("581.15"))).expect("drift");
    assert_eq!(d.fix_step, None);
    let e = d.entry(Lang::En);
    assert!(e.fix.contains("never takes a driver down"), "{}", e.fix);
    assert!(
        e.fix.contains("581.15") && e.fix.contains("560.94"),
        "{}",
        e.fix
    );
    assert!(plans_for(&p, &[d]).is_empty());
    // Above it: the plan installs exactly that one.
    let d = driver_drift(&p, &state(Os::Windows, Some("552.22"))).expect("drift");
    assert_eq!(d.fix_step, Some(StepKind::InstallDriver));
}

/// Linux: the distribution's packages, never a step of ours; the fix says where the
/// commands are.
#[test]
fn a_linux_driver_below_min_is_the_distributions() {
    let p = profile(
        &format!("schema = 1\n[driver]\nmin = \"560.94\"\n{TORCH}"),
        Os::Linux,
    );
    let d = driver_drift(&p, &state(Os::Linux, Some("550.54"))).expect("drift");
    assert_eq!(d.fix_step, None);
    assert!(
        d.entry(Lang::En).fix.contains("distribution's packages"),
        "{:?}",
        d.fix
    );
    // With the report's os-release: the distribution's own commands, as `recommend`'s.
    let mut s = state(Os::Linux, Some("550.54"));
    s.distro = Some(super::super::state::Distro {
        id: Some("ubuntu".into()),
        id_like: vec!["debian".into()],
        version_id: Some("24.04".into()),
        pretty_name: Some("Ubuntu 24.04.1 LTS".into()),
    });
    let d = driver_drift(&p, &s).expect("drift");
    assert_eq!(d.fix_step, None);
    let fix = d.entry(Lang::En).fix;
    assert!(
        fix.contains("Ubuntu 24.04.1 LTS") && fix.contains("sudo apt"),
        "{fix}"
    );
}

/// A profile of the driver alone has no install run to bring it: by hand.
#[test]
fn a_driver_only_profile_names_no_step() {
    let p = profile("schema = 1\n[driver]\nmin = \"560.94\"\n", Os::Windows);
    let d = driver_drift(&p, &state(Os::Windows, Some("552.22"))).expect("drift");
    assert_eq!(d.fix_step, None);
}

/// #36 review 5: `[driver]` with no floor and nothing that needs one still wants a driver.
#[test]
fn a_driver_section_without_a_floor_wants_a_driver() {
    let p = profile("schema = 1\n[driver]\n", Os::Windows);
    let d = driver_drift(&p, &state(Os::Windows, None)).expect("no driver is drift");
    assert_eq!(d.is, None);
    assert_eq!(d.entry(Lang::En).should, "any NVIDIA driver");
    assert!(driver_drift(&p, &state(Os::Windows, Some("552.22"))).is_none());
}

/// #36 review 11: what a Chinese report says is and should be is Chinese, versions aside.
#[test]
fn is_and_should_are_in_the_reports_language() {
    let p = profile(&format!("schema = 1\n{TORCH}"), Os::Windows);
    let mut s = state(Os::Windows, Some("566.36"));
    s.guard.as_mut().unwrap().on = false;
    let found = diff(&p, &s, &tables());
    let g = found
        .iter()
        .find(|d| d.layer == Layer::Guard)
        .expect("guard");
    let zh = g.entry(Lang::Zh);
    let zh_word = |k| i18n::t(Lang::Zh, k);
    assert_eq!(zh.is, Some(zh_word("fleet_guard_is_off")));
    assert_eq!(zh.should, zh_word("fleet_guard_should_on"));
    assert_eq!(g.entry(Lang::En).is.as_deref(), Some("off"));
    // PyTorch recommended, a CPU build there.
    let p = profile("schema = 1\n[pytorch]\nguard = false\n", Os::Windows);
    s.pytorch.as_mut().unwrap().variant = "cpu".into();
    let t = diff(&p, &s, &tables());
    let t = t.iter().find(|d| d.layer == Layer::Pytorch).expect("torch");
    let zh = t.entry(Lang::Zh);
    assert!(!zh.should.contains("recommended"), "{}", zh.should);
    assert_eq!(zh.is.as_deref(), Some("2.5.1 cpu"));
    assert_eq!(
        i18n::render(&Layer::Guard.name(), Lang::Zh),
        zh_word("fleet_layer_guard")
    );
    assert_ne!(zh_word("fleet_guard_is_off"), "off");
}
