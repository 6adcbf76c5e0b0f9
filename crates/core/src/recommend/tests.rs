//! Table-driven tests over real configurations, checked against facts from the compat
//! dossier (not against whatever the engine happens to say). Every case also runs the
//! invariant checks in `check_invariants`, which hold for any configuration.

use super::*;
use crate::compat::Os::{self, Linux, Windows};
use crate::i18n::{self, Lang};

use Expect::*;

/// In `Torch(NEWEST, …)`: the newest torch the tables vouch for (release and variants
/// confirmed; its newest patch), whatever its number, so a table update that adds a
/// release does not break the cases.
const NEWEST: &str = "newest";

#[derive(Debug)]
enum Expect {
    /// torch version ([`NEWEST`] or a number) and variant.
    Torch(&'static str, &'static str),
    NoTorch,
    /// Exact toolkit version.
    Toolkit(&'static str),
    NoToolkit,
    /// cuDNN version prefix (`9.10`).
    Cudnn(&'static str),
    Driver(DriverAction),
    DriverMinimum(&'static str),
    /// A blocker with this key.
    Blocked(&'static str),
    /// A reason with this key.
    Reason(&'static str),
    /// The torch (pytorch goal) or toolkit (developer goal) pick is confirmed or not.
    Confirmed(bool),
    /// With action none: a newer driver would unlock something.
    Unlocks(&'static str),
}

struct Case {
    name: &'static str,
    os: Os,
    goal: Goal,
    driver: Option<&'static str>,
    driver_cuda: Option<&'static str>,
    gpus: &'static [&'static str],
    python: Option<&'static str>,
    cuda: Option<&'static str>,
    expect: &'static [Expect],
}

const P: Goal = Goal::Pytorch;
const D: Goal = Goal::Developer;

fn case(
    name: &'static str,
    os: Os,
    goal: Goal,
    driver: Option<&'static str>,
    gpus: &'static [&'static str],
    python: Option<&'static str>,
    expect: &'static [Expect],
) -> Case {
    Case {
        name,
        os,
        goal,
        driver,
        driver_cuda: None,
        gpus,
        python,
        cuda: None,
        expect,
    }
}

fn cases() -> Vec<Case> {
    vec![
        // ---- PyTorch goal ----
        // cu12x needs >= 527.41 on Windows, cu13x >= 580.88 (dossier §1.1, §6.3).
        case(
            "ada, windows, 12.4 driver, py3.11",
            Windows,
            P,
            Some("551.78"),
            &["8.9"],
            Some("3.11"),
            &[
                Torch(NEWEST, "cu126"),
                Driver(DriverAction::None),
                Unlocks("580.88"),
                Reason("windows_pypi_is_cpu"),
                Confirmed(true),
            ],
        ),
        case(
            "ada, windows, 13.x driver",
            Windows,
            P,
            Some("581.42"),
            &["8.9"],
            Some("3.12"),
            &[
                Torch(NEWEST, "cu132"),
                Driver(DriverAction::None),
                Confirmed(true),
            ],
        ),
        case(
            "ampere, linux, 550 driver, py3.12",
            Linux,
            P,
            Some("550.54.15"),
            &["8.6"],
            Some("3.12"),
            &[Torch(NEWEST, "cu126"), Driver(DriverAction::None)],
        ),
        case(
            "ampere, linux, exactly the 12.x floor",
            Linux,
            P,
            Some("525.60.13"),
            &["8.6"],
            Some("3.11"),
            &[Torch(NEWEST, "cu126"), Driver(DriverAction::None)],
        ),
        case(
            "ampere, linux, just below the 12.x floor",
            Linux,
            P,
            Some("525.60.12"),
            &["8.6"],
            Some("3.11"),
            &[Reason("torch_variant")],
        ),
        // cu13x wheels start at sm_75: Pascal stays on cu126 (§6.4).
        case(
            "pascal gtx 1080, windows, new driver",
            Windows,
            P,
            Some("581.42"),
            &["6.1"],
            Some("3.12"),
            &[Torch(NEWEST, "cu126"), Driver(DriverAction::None)],
        ),
        case(
            "maxwell gtx 970, windows",
            Windows,
            P,
            Some("560.94"),
            &["5.2"],
            Some("3.10"),
            &[Torch(NEWEST, "cu126")],
        ),
        case(
            "volta v100, linux, 13.x driver",
            Linux,
            P,
            Some("580.95.05"),
            &["7.0"],
            Some("3.12"),
            &[Torch(NEWEST, "cu126")],
        ),
        case(
            "turing t4, linux, 13.x driver",
            Linux,
            P,
            Some("580.95.05"),
            &["7.5"],
            Some("3.12"),
            &[Torch(NEWEST, "cu132")],
        ),
        case(
            "hopper h100, linux, 535 driver",
            Linux,
            P,
            Some("535.104.05"),
            &["9.0"],
            Some("3.10"),
            &[Torch(NEWEST, "cu126"), Driver(DriverAction::None)],
        ),
        // Blackwell: cu126 has no sm_120; cu128 exists up to 2.11; cu13x needs 580.88.
        case(
            "blackwell rtx 5090, windows 576 driver",
            Windows,
            P,
            Some("576.02"),
            &["12.0"],
            Some("3.12"),
            &[
                Torch("2.11.0", "cu128"),
                Driver(DriverAction::None),
                Unlocks("580.88"),
            ],
        ),
        case(
            "blackwell rtx 5090, no driver",
            Windows,
            P,
            None,
            &["12.0"],
            Some("3.12"),
            &[
                Torch(NEWEST, "cu132"),
                Driver(DriverAction::Install),
                DriverMinimum("580.88"),
            ],
        ),
        case(
            "blackwell, driver older than the architecture",
            Windows,
            P,
            Some("560.94"),
            &["12.0"],
            Some("3.12"),
            &[
                Driver(DriverAction::Update),
                Reason("gpu_needs_driver_unconfirmed"),
            ],
        ),
        case(
            "blackwell b200, linux 570 driver",
            Linux,
            P,
            Some("570.124.06"),
            &["10.0"],
            Some("3.12"),
            &[Torch("2.11.0", "cu128"), Driver(DriverAction::None)],
        ),
        case(
            "no gpu",
            Windows,
            P,
            Some("551.78"),
            &[],
            Some("3.11"),
            &[Blocked("no_nvidia_gpu"), NoTorch, NoToolkit],
        ),
        case(
            "no gpu, no driver, linux",
            Linux,
            P,
            None,
            &[],
            None,
            &[Blocked("no_nvidia_gpu")],
        ),
        case(
            "no driver, ampere, linux",
            Linux,
            P,
            None,
            &["8.6"],
            Some("3.12"),
            &[
                Torch(NEWEST, "cu132"),
                Driver(DriverAction::Install),
                DriverMinimum("580.65.06"),
            ],
        ),
        // Python ranges (§6.1).
        case(
            "python 3.8 keeps torch at 2.4",
            Windows,
            P,
            Some("551.78"),
            &["8.6"],
            Some("3.8"),
            &[Torch("2.4.1", "cu124"), Reason("newer_torch_needs_python")],
        ),
        case(
            "python 3.9 keeps torch at 2.8",
            Linux,
            P,
            Some("550.54.15"),
            &["8.6"],
            Some("3.9"),
            &[Torch("2.8.0", "cu129")],
        ),
        case(
            "python 3.13",
            Linux,
            P,
            Some("570.124.06"),
            &["8.9"],
            Some("3.13"),
            &[Torch(NEWEST, "cu126")],
        ),
        case(
            "python 3.14",
            Linux,
            P,
            Some("580.95.05"),
            &["8.9"],
            Some("3.14"),
            &[Torch(NEWEST, "cu132")],
        ),
        case(
            "python 3.7 is the 1.13 era",
            Linux,
            P,
            Some("520.61.05"),
            &["8.6"],
            Some("3.7"),
            &[Reason("newer_torch_needs_python")],
        ),
        case(
            "python 3.6 has no torch",
            Linux,
            P,
            Some("550.54.15"),
            &["8.6"],
            Some("3.6"),
            // #20 class 2: the blocker names the Python and the versions that would work.
            &[Blocked("torch_blocked_by_python"), NoTorch],
        ),
        case(
            "python unknown",
            Windows,
            P,
            Some("551.78"),
            &["8.6"],
            None,
            &[Torch(NEWEST, "cu126"), Reason("python_unknown")],
        ),
        // Kepler: no known PyTorch wheel builds sm_35/37.
        case(
            "kepler k80, pytorch",
            Linux,
            P,
            Some("470.82.01"),
            &["3.7"],
            Some("3.9"),
            &[Blocked("no_torch_for_gpus")],
        ),
        // Several GPUs: what fits all.
        case(
            "pascal + ada, windows",
            Windows,
            P,
            Some("581.42"),
            &["6.1", "8.9"],
            Some("3.12"),
            &[Torch(NEWEST, "cu126")],
        ),
        case(
            "ampere + blackwell, 13.x driver",
            Linux,
            P,
            Some("580.95.05"),
            &["8.6", "12.0"],
            Some("3.12"),
            &[Torch(NEWEST, "cu132")],
        ),
        case(
            "ada + hopper, 12.x driver",
            Linux,
            P,
            Some("550.54.15"),
            &["8.9", "9.0"],
            Some("3.11"),
            &[Torch(NEWEST, "cu126")],
        ),
        // ---- developer goal ----
        // Toolkit per-release driver minimums, Table 3 (§1.2).
        Case {
            cuda: None,
            driver_cuda: None,
            ..case(
                "dev: ada, windows 551.78 runs 12.4 fully",
                Windows,
                D,
                Some("551.78"),
                &["8.9"],
                Some("3.11"),
                &[
                    Toolkit("12.4.1"),
                    Driver(DriverAction::None),
                    Reason("torch_matches_toolkit_major"),
                ],
            )
        },
        case(
            "dev: ada, windows 551.61 runs 12.4.0",
            Windows,
            D,
            Some("551.61"),
            &["8.9"],
            Some("3.11"),
            &[Toolkit("12.4.0")],
        ),
        // Maxwell-Volta are gone from 13.0 (§4.1): the last 12.x with a confirmed driver.
        case(
            "dev: pascal on 13.x driver stays on 12.9",
            Windows,
            D,
            Some("581.42"),
            &["6.1"],
            Some("3.12"),
            &[
                Toolkit("12.9.1"),
                Cudnn("9.10"),
                Reason("newer_toolkit_drops_gpu"),
            ],
        ),
        case(
            "dev: linux 595.71.05 runs 13.2.2",
            Linux,
            D,
            Some("595.71.05"),
            &["8.9"],
            Some("3.12"),
            &[
                Toolkit("13.2.2"),
                Driver(DriverAction::None),
                Unlocks("610.43.02"),
            ],
        ),
        Case {
            driver_cuda: Some("13.2"),
            ..case(
                "dev: windows, NVML says 13.2",
                Windows,
                D,
                Some("595.97"),
                &["8.9"],
                Some("3.12"),
                &[
                    Toolkit("13.2.2"),
                    Confirmed(true),
                    Driver(DriverAction::None),
                ],
            )
        },
        case(
            "dev: windows 13.x driver without NVML figure",
            Windows,
            D,
            Some("600.10"),
            &["8.9"],
            Some("3.12"),
            &[Toolkit("12.9.1"), Driver(DriverAction::None)],
        ),
        case(
            "dev: hopper, linux 535.104.05",
            Linux,
            D,
            Some("535.104.05"),
            &["9.0"],
            Some("3.10"),
            &[Toolkit("12.2.2")],
        ),
        // sm_100 needs 12.8+ (§4.1).
        case(
            "dev: b200, linux 570.124.06",
            Linux,
            D,
            Some("570.124.06"),
            &["10.0"],
            Some("3.12"),
            &[Toolkit("12.8.1")],
        ),
        case(
            "dev: kepler + ampere stay on 11.x",
            Linux,
            D,
            Some("470.82.01"),
            &["3.7", "8.6"],
            None,
            &[Toolkit("11.4.4"), Cudnn("8.9")],
        ),
        case(
            "dev: kepler gk104 (3.0) is too old",
            Linux,
            D,
            Some("470.82.01"),
            &["3.0"],
            None,
            &[Blocked("no_toolkit_for_gpu"), NoToolkit],
        ),
        // No toolkit builds for both (#20 class 1): the newer card is served and the
        // Kepler one is left out, with CUDA_VISIBLE_DEVICES for the one kept.
        case(
            "dev: kepler + blackwell share nothing",
            Linux,
            D,
            Some("580.95.05"),
            &["3.5", "12.0"],
            None,
            &[Toolkit("13.0.2"), Reason("gpu_left_out")],
        ),
        case(
            "dev: no driver, linux, ampere",
            Linux,
            D,
            None,
            &["8.6"],
            Some("3.12"),
            // The 13.4.1 runfile carries no driver (#20 class 6).
            &[
                Driver(DriverAction::Install),
                Reason("toolkit_needs_driver_linux"),
            ],
        ),
        case(
            "dev: old driver must be updated",
            Windows,
            D,
            Some("400.00"),
            &["5.0"],
            None,
            &[
                Toolkit("12.9.2"),
                Driver(DriverAction::Update),
                // 12.9.2 has no published minimum: 12.9.1's (#20 class 3).
                DriverMinimum("576.57"),
                Reason("toolkit_minimum_inherited"),
                // Its installer carries 576.57.
                Reason("toolkit_needs_driver"),
            ],
        ),
        Case {
            cuda: Some("12.4"),
            ..case(
                "dev: pinned to 12.4",
                Linux,
                D,
                Some("580.95.05"),
                &["8.6"],
                Some("3.12"),
                &[Toolkit("12.4.1")],
            )
        },
        Case {
            cuda: Some("10.2"),
            ..case(
                "dev: pinned to a version that does not exist",
                Linux,
                D,
                Some("580.95.05"),
                &["8.6"],
                None,
                &[Blocked("no_toolkit_matches_request")],
            )
        },
        case(
            "dev: no gpu",
            Linux,
            D,
            Some("550.54.15"),
            &[],
            None,
            &[Blocked("no_nvidia_gpu")],
        ),
        // ---- #20 (toolkit) ----
        // Class 3: the driver a runfile carries is no minimum. 12.8.2 and 13.0.3 are not
        // in Table 3; their runfiles carry 570.211.01 and 580.126.20, above these
        // drivers, which run them (NVML says so).
        Case {
            driver_cuda: Some("12.8"),
            ..case(
                "#20 c3: linux 570.172.08 (nvml 12.8) needs no 570.211.01",
                Linux,
                D,
                Some("570.172.08"),
                &["9.0"],
                Some("3.12"),
                &[
                    Toolkit("12.8.2"),
                    Driver(DriverAction::None),
                    DriverMinimum("570.124.06"),
                    Reason("toolkit_minimum_inherited"),
                ],
            )
        },
        Case {
            driver_cuda: Some("13.0"),
            ..case(
                "#20 c3: linux 580.95.05 (nvml 13.0) needs no 580.126.20",
                Linux,
                D,
                Some("580.95.05"),
                &["9.0"],
                Some("3.12"),
                &[
                    Toolkit("13.0.3"),
                    Driver(DriverAction::None),
                    DriverMinimum("580.95.05"),
                ],
            )
        },
        // Class 4: Blackwell on a 56x driver must update anyway: ask for the driver of
        // the newest toolkit, not 570 and 12.8.
        case(
            "#20 c4: blackwell on 560 (linux) updates to the 13.x line",
            Linux,
            D,
            Some("560.35.03"),
            &["12.0"],
            Some("3.12"),
            &[
                Toolkit("13.4.1"),
                Driver(DriverAction::Update),
                DriverMinimum("580.65.06"),
            ],
        ),
        case(
            "#20 c4: blackwell on 560.94 (windows) updates to the 13.x line",
            Windows,
            D,
            Some("560.94"),
            &["12.0"],
            Some("3.12"),
            &[
                Toolkit("13.4.1"),
                Driver(DriverAction::Update),
                DriverMinimum("580.88"),
            ],
        ),
        // Kepler's last branch is R470: nothing that needs a newer driver.
        case(
            "#20 c4: kepler without a driver stays within R470 (windows)",
            Windows,
            D,
            None,
            &["3.5"],
            None,
            &[
                Toolkit("11.4.4"),
                Driver(DriverAction::Install),
                DriverMinimum("472.50"),
                Reason("driver_last_branch"),
            ],
        ),
        case(
            "#20 c4: kepler on 470 (linux) is told its branch is the last",
            Linux,
            D,
            Some("470.82.01"),
            &["3.7"],
            None,
            &[
                Toolkit("11.4.4"),
                Driver(DriverAction::None),
                Reason("driver_last_branch"),
            ],
        ),
        // Class 5: sm_103 (B300) is first in 12.9; 12.8 builds 10.0, 10.1 and 12.0 only.
        Case {
            cuda: Some("12.8"),
            ..case(
                "#20 c5: b300 gets no 12.8",
                Linux,
                D,
                Some("580.95.05"),
                &["10.3"],
                None,
                &[Blocked("toolkit_request_misses_gpu"), NoToolkit],
            )
        },
        // Class 6: CUDA 13.x Windows installers carry no driver.
        case(
            "#20 c6: windows 13.x installer carries no driver",
            Windows,
            D,
            None,
            &["8.9"],
            Some("3.12"),
            &[
                Driver(DriverAction::Install),
                Reason("toolkit_needs_driver_windows"),
            ],
        ),
        // Class 1: a toolkit for the newer card when none builds for both; cuDNN says
        // which newer release leaves a GPU out.
        case(
            "#20 c1: kepler k80 + rtx 5090, no driver (windows)",
            Windows,
            D,
            None,
            &["3.7", "12.0"],
            None,
            &[Toolkit("13.4.1"), Reason("gpu_left_out")],
        ),
        case(
            "#20 c1: maxwell + ampere keep cuDNN 9.10 and say why",
            Linux,
            D,
            Some("580.95.05"),
            &["5.2", "8.6"],
            None,
            &[
                Toolkit("12.9.1"),
                Cudnn("9.10"),
                Reason("cudnn_newer_misses_gpu"),
            ],
        ),
        // ---- #20 torch ----
        // Class 1: no cu13x (or cu128) wheel carries sm_6x and cu126 has no sm_120: the
        // wheel is for the RTX 5090 (the newest GPU) and the GTX 1080 Ti is left out.
        case(
            "#20 rtx 5090 + gtx 1080 ti, windows 581 driver",
            Windows,
            P,
            Some("581.42"),
            &["12.0", "6.1"],
            Some("3.12"),
            &[
                Torch(NEWEST, "cu132"),
                Reason("gpu_left_out"),
                Reason("torch_other_gpu_wheel"),
                Driver(DriverAction::None),
            ],
        ),
        case(
            "#20 gtx 1080 ti + rtx 5090, linux 570 driver",
            Linux,
            P,
            Some("570.124.06"),
            &["6.1", "12.0"],
            Some("3.12"),
            &[
                Torch("2.11.0", "cu128"),
                Reason("gpu_left_out"),
                Driver(DriverAction::None),
            ],
        ),
        case(
            "#20 volta v100 + rtx 4090: cu128's list has no 7.0 for sure",
            Linux,
            P,
            Some("570.124.06"),
            &["7.0", "8.9"],
            Some("3.12"),
            &[Torch(NEWEST, "cu126")],
        ),
        // Class 2: the Python is the cause, and the blocker says which Pythons work.
        case(
            "#20 python 3.8 on an rtx 5090",
            Linux,
            P,
            Some("580.95.05"),
            &["12.0"],
            Some("3.8"),
            &[Blocked("torch_blocked_by_python"), NoTorch],
        ),
        case(
            "#20 python 3.8 on rtx 5090 + gtx 1080",
            Windows,
            P,
            Some("581.42"),
            &["12.0", "6.1"],
            Some("3.8"),
            &[Blocked("torch_blocked_by_python"), NoTorch],
        ),
        case(
            "#20 python 3.16 on an rtx 4090",
            Linux,
            P,
            Some("580.95.05"),
            &["8.9"],
            Some("3.16"),
            &[Blocked("torch_blocked_by_python"), NoTorch],
        ),
        // Class 7: 2.15 (PyPI-confirmed, variants not) only where it is needed, and said.
        case(
            "#20 python 3.15 needs torch 2.15, unconfirmed",
            Linux,
            P,
            Some("595.71.05"),
            &["8.9"],
            Some("3.15"),
            &[
                Torch("2.15.0", "cu132"),
                Confirmed(false),
                Reason("torch_unconfirmed"),
            ],
        ),
        case(
            "#20 python 3.14: the confirmed release, not 2.14/2.15",
            Windows,
            P,
            Some("595.97"),
            &["8.9"],
            Some("3.14"),
            &[Torch(NEWEST, "cu132"), Confirmed(true)],
        ),
        case(
            "#20 python 3.12, rtx 4090, windows 551: confirmed cu126",
            Windows,
            P,
            Some("551.78"),
            &["8.9"],
            Some("3.12"),
            &[Torch(NEWEST, "cu126"), Confirmed(true), Unlocks("580.88")],
        ),
        // Class 4: the driver must be updated anyway (Blackwell on 560.94): the newest
        // build after that update, with its minimum, not 2.11 cu128 on 570.
        case(
            "#20 rtx 5090 on 560.94 gets the newest build after the update",
            Windows,
            P,
            Some("560.94"),
            &["12.0"],
            Some("3.12"),
            &[
                Torch(NEWEST, "cu132"),
                Driver(DriverAction::Update),
                DriverMinimum("580.88"),
            ],
        ),
        case(
            "#20 rtx 5090 on linux 560.35.03",
            Linux,
            P,
            Some("560.35.03"),
            &["12.0"],
            Some("3.11"),
            &[
                Torch(NEWEST, "cu132"),
                Driver(DriverAction::Update),
                DriverMinimum("580.65.06"),
            ],
        ),
        // The cu13x floor exactly, and one below it (dossier §1.1, §6.3).
        case(
            "#20 ada, windows exactly 580.88",
            Windows,
            P,
            Some("580.88"),
            &["8.9"],
            Some("3.12"),
            &[Torch(NEWEST, "cu132"), Driver(DriverAction::None)],
        ),
        case(
            "#20 ada, windows 580.87",
            Windows,
            P,
            Some("580.87"),
            &["8.9"],
            Some("3.12"),
            &[
                Torch(NEWEST, "cu126"),
                Driver(DriverAction::None),
                Unlocks("580.88"),
            ],
        ),
        case(
            "#20 ampere, linux exactly 580.65.06",
            Linux,
            P,
            Some("580.65.06"),
            &["8.6"],
            Some("3.13"),
            &[Torch(NEWEST, "cu132"), Driver(DriverAction::None)],
        ),
        case(
            "#20 ampere, linux 580.65.05",
            Linux,
            P,
            Some("580.65.05"),
            &["8.6"],
            Some("3.13"),
            &[Torch(NEWEST, "cu126"), Unlocks("580.65.06")],
        ),
    ]
}

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

fn facts_of(c: &Case) -> Facts {
    Facts {
        os: c.os,
        gpus: c
            .gpus
            .iter()
            .map(|cc| GpuFact {
                name: None,
                compute_capability: cc.parse().unwrap(),
            })
            .collect(),
        driver: c.driver.map(v),
        driver_cuda: c.driver_cuda.map(v),
        python: c.python.map(v),
        installed_toolkits: Vec::new(),
        unidentified_gpus: Vec::new(),
        notes: Vec::new(),
        host_kind: Default::default(),
        free_threaded: false,
    }
}

fn has(msgs: &[Message], key: &str) -> bool {
    msgs.iter().any(|m| m.key == key)
}

fn check_expect(tables: &Tables, c: &Case, rec: &Recommendation) -> Result<(), String> {
    let newest = tables
        .pytorch
        .releases
        .iter()
        .rfind(|r| r.confirmed && r.variants_confirmed)
        .and_then(|r| r.patches.last().cloned());
    for e in c.expect {
        let ok = match e {
            Torch(ver, var) => rec.torch.as_ref().is_some_and(|t| {
                let want = if *ver == NEWEST {
                    newest.clone()
                } else {
                    Some(v(ver))
                };
                Some(&t.version) == want.as_ref() && t.variant == *var
            }),
            NoTorch => rec.torch.is_none(),
            Toolkit(ver) => rec.toolkit.as_ref().is_some_and(|t| t.version == v(ver)),
            NoToolkit => rec.toolkit.is_none(),
            Cudnn(prefix) => rec
                .cudnn
                .as_ref()
                .is_some_and(|d| d.version.to_string().starts_with(prefix)),
            Driver(a) => rec.driver.action == *a,
            DriverMinimum(m) => rec.driver.minimum == Some(v(m)),
            Blocked(k) => has(&rec.blockers, k),
            Reason(k) => has(&rec.reasons, k),
            Confirmed(want) => match c.goal {
                Goal::Pytorch => rec.torch.as_ref().is_some_and(|t| t.confirmed == *want),
                Goal::Developer => rec.toolkit.as_ref().is_some_and(|t| t.confirmed == *want),
            },
            Unlocks(m) => rec.driver.upgrade_minimum == Some(v(m)),
        };
        if !ok {
            return Err(format!("expected {e:?}"));
        }
    }
    Ok(())
}

/// What must hold for any recommendation, whatever the configuration.
fn check_invariants(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    // A GPU only Jetson modules have: JetPack's answer, nothing picked, no driver step (#32).
    if f.gpus.iter().any(|g| t.jetson_only(g.compute_capability)) {
        return match rec.jetson {
            Some(_)
                if rec.toolkit.is_none()
                    && rec.torch.is_none()
                    && rec.cudnn.is_none()
                    && rec.driver.action == DriverAction::None
                    && rec.blockers.is_empty() =>
            {
                Ok(())
            }
            _ => Err("a Jetson GPU without JetPack's answer".into()),
        };
    }
    let driver_now = rec.driver.action == DriverAction::None;
    if !rec.blockers.is_empty() {
        if rec.toolkit.is_some() || rec.torch.is_some() && rec.goal == Goal::Pytorch {
            return Err("blocked but still recommends something".into());
        }
    } else {
        match rec.goal {
            Goal::Pytorch if rec.torch.is_none() => return Err("pytorch goal without torch".into()),
            Goal::Developer if rec.toolkit.is_none() => {
                return Err("developer goal without toolkit".into());
            }
            _ => {}
        }
    }
    if f.driver.is_none() && rec.blockers.is_empty() && rec.driver.action != DriverAction::Install {
        return Err("no driver, but no install advised".into());
    }
    if let Some(p) = &rec.torch {
        let release = t
            .pytorch
            .releases
            .iter()
            .find(|r| r.patches.contains(&p.version))
            .ok_or("unknown torch")?;
        if !release.variants.contains(&p.variant) {
            return Err(format!("{} has no {}", p.version, p.variant));
        }
        if let Some(py) = &f.python
            && !(release.python_min <= *py && *py <= release.python_max)
        {
            return Err(format!("torch {} does not support Python {py}", p.version));
        }
        let variant = t.variant(&p.variant).unwrap();
        // Every GPU, except those the recommendation says it leaves out (#20 class 1):
        // each of those has its reason, and CUDA_VISIBLE_DEVICES hides it.
        let left_out: Vec<usize> = rec
            .left_out
            .iter()
            .filter(|l| l.part == Part::Torch)
            .map(|l| l.index)
            .collect();
        if let Some(arch) = variant.arch_for(&p.version)
            && !f
                .gpus
                .iter()
                .enumerate()
                .all(|(i, g)| left_out.contains(&i) || arch.runs_on(g.compute_capability))
        {
            return Err(format!("{} does not run on every GPU", p.variant));
        }
        if !left_out.is_empty() {
            let visible = rec.visible_devices.as_deref().ok_or("no visible_devices")?;
            let shown: Vec<usize> = visible.split(',').filter_map(|i| i.parse().ok()).collect();
            if shown.is_empty() || left_out.iter().any(|i| shown.contains(i)) {
                return Err(format!("visible_devices {visible} shows a GPU left out"));
            }
            let reasons = rec.reasons.iter().filter(|m| m.key == "gpu_left_out");
            if reasons.count() < left_out.len() {
                return Err("a GPU left out without its gpu_left_out reason".into());
            }
        }
        let floor = t
            .toolkit_line(variant.cuda.major())
            .unwrap()
            .driver_floor(f.os);
        if driver_now && f.driver.as_ref().is_none_or(|d| d < floor) {
            return Err(format!(
                "driver below the {} floor {floor} but no update advised",
                p.variant
            ));
        }
        if rec.driver.minimum.as_ref().is_none_or(|m| m < floor) {
            return Err("driver minimum below the wheel's floor".into());
        }
        if rec.goal == Goal::Developer
            && let Some(tk) = &rec.toolkit
            && variant.cuda.major() != tk.version.major()
        {
            return Err("torch CUDA major differs from the toolkit's".into());
        }
    }
    // #20 class 1: a GPU the toolkit leaves out is said so, and hidden from programs.
    let toolkit_keeps = |i: usize| {
        !rec.left_out
            .iter()
            .any(|l| l.index == i && l.part == Part::Toolkit)
    };
    if !rec.left_out.is_empty() {
        let visible = rec
            .visible_devices
            .as_deref()
            .ok_or("left out, no visible_devices")?;
        for l in &rec.left_out {
            if visible.split(',').any(|i| i == l.index.to_string()) {
                return Err(format!("GPU {} is left out but visible", l.index));
            }
        }
        if rec
            .reasons
            .iter()
            .filter(|m| m.key == "gpu_left_out")
            .count()
            < rec.left_out.len()
        {
            return Err("a left-out GPU without its gpu_left_out reason".into());
        }
    }
    if let Some(tk) = &rec.toolkit {
        let r = t.toolkit(&tk.version).ok_or("unknown toolkit")?;
        let kept = f.gpus.iter().enumerate().filter(|(i, _)| toolkit_keeps(*i));
        if r.preview
            || !kept
                .clone()
                .all(|(_, g)| r.builds_for(g.compute_capability))
        {
            return Err(format!(
                "toolkit {} is a preview or misses a GPU",
                tk.version
            ));
        }
        let floor = t
            .toolkit_line(r.version.major())
            .unwrap()
            .driver_floor(f.os);
        if driver_now && f.driver.as_ref().is_none_or(|d| d < floor) {
            return Err("toolkit beyond the driver without an update".into());
        }
        let inst = tk.installer.as_ref().ok_or("no installer")?;
        if !inst
            .url
            .starts_with("https://developer.download.nvidia.com/compute/cuda/")
        {
            return Err(format!("odd installer url {}", inst.url));
        }
    }
    if let Some(c) = &rec.cudnn {
        let tk = rec.toolkit.as_ref().ok_or("cudnn without toolkit")?;
        if c.cuda_major != tk.version.major()
            || !c
                .archive_url
                .contains(&format!("_cuda{}-archive", c.cuda_major))
        {
            return Err("cudnn for another CUDA major".into());
        }
        let r = t
            .cudnn
            .releases
            .iter()
            .find(|r| r.version == c.version)
            .unwrap();
        if let (Some(lo), Some(hi)) = (r.sm_min, r.sm_max)
            && !f
                .gpus
                .iter()
                .enumerate()
                .filter(|(i, _)| toolkit_keeps(*i))
                .all(|(_, g)| lo <= g.compute_capability && g.compute_capability <= hi)
        {
            return Err("cudnn does not support every GPU".into());
        }
        let want = if f.os == Os::Windows {
            ".zip"
        } else {
            ".tar.xz"
        };
        if !c.archive_url.ends_with(want) {
            return Err("cudnn archive for the wrong OS".into());
        }
    }
    for m in rec.reasons.iter().chain(&rec.blockers) {
        if !i18n::has_key(m.key) {
            return Err(format!("message {} has no translation", m.key));
        }
        for lang in [Lang::En, Lang::Zh] {
            let text = i18n::render(m, lang);
            if text.contains('{') {
                return Err(format!("{}: unfilled parameter in {text:?}", m.key));
            }
        }
    }
    Ok(())
}

#[test]
fn configurations_from_the_dossier() {
    let tables = Tables::embedded().unwrap();
    let cases = cases();
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for c in &cases {
        let facts = facts_of(c);
        let request = Request {
            goal: c.goal,
            cuda: c.cuda.map(v),
            method: Method::Installer,
            // The cases pin what runs on the driver as it is; an old driver's default
            // (update it first, #32) is tested in `choice::tests`.
            driver: super::DriverPref::Keep,
            distro: None,
            ..Default::default()
        };
        let rec = recommend(&tables, &facts, &request);
        if let Err(e) =
            check_expect(&tables, c, &rec).and_then(|_| check_invariants(&tables, &facts, &rec))
        {
            let torch = rec
                .torch
                .as_ref()
                .map(|t| format!("{} {}", t.version, t.variant));
            let tk = rec.toolkit.as_ref().map(|t| t.version.to_string());
            let cudnn = rec.cudnn.as_ref().map(|t| t.version.to_string());
            let keys: Vec<&str> = rec
                .reasons
                .iter()
                .chain(&rec.blockers)
                .map(|m| m.key)
                .collect();
            failures.push(format!(
                "{}: {e}\n    got torch={torch:?} toolkit={tk:?} cudnn={cudnn:?} driver={:?} min={:?} unlock={:?}\n    keys={keys:?}",
                c.name, rec.driver.action, rec.driver.minimum, rec.driver.upgrade_minimum
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A sweep over every GPU in the tables × drivers × OS × Python × goal: the invariants
/// hold everywhere, and nothing panics.
#[test]
fn invariants_hold_across_the_whole_table() {
    let tables = Tables::embedded().unwrap();
    let drivers = [
        None,
        Some("418.96"),
        Some("527.41"),
        Some("551.78"),
        Some("576.57"),
        Some("581.42"),
        Some("610.43.02"),
    ];
    let pythons = [None, Some("3.8"), Some("3.10"), Some("3.12"), Some("3.14")];
    let mut ccs: Vec<_> = tables.gpus.gpus.iter().map(|g| g.cc).collect();
    ccs.dedup();
    let mut n = 0;
    for cc in &ccs {
        for os in [Windows, Linux] {
            for d in drivers {
                for py in pythons {
                    for goal in [P, D] {
                        let facts = Facts {
                            os,
                            gpus: vec![GpuFact {
                                name: None,
                                compute_capability: *cc,
                            }],
                            driver: d.map(v),
                            driver_cuda: None,
                            python: py.map(v),
                            installed_toolkits: vec![],
                            unidentified_gpus: vec![],
                            notes: vec![],
                            host_kind: Default::default(),
                            free_threaded: false,
                        };
                        let rec = recommend(
                            &tables,
                            &facts,
                            &Request {
                                goal,
                                cuda: None,
                                method: Method::Installer,
                                driver: Default::default(),
                                distro: None,
                                ..Default::default()
                            },
                        );
                        if let Err(e) = check_invariants(&tables, &facts, &rec) {
                            panic!("cc {cc} {os:?} driver {d:?} python {py:?} {goal:?}: {e}");
                        }
                        n += 1;
                    }
                }
            }
        }
    }
    assert!(n > 500, "swept {n}");
}

#[test]
fn method_advice_prefers_the_installer_unless_it_cannot_work() {
    let advice = |elevated, pypi_mirror, installer_download_failed| {
        let (m, why) = method_advice(&MethodFacts {
            elevated,
            pypi_mirror,
            installer_download_failed,
        });
        (m, why.key)
    };
    assert_eq!(
        advice(true, false, false),
        (Method::Installer, "method_installer_default")
    );
    assert_eq!(
        advice(false, false, false),
        (Method::Wheels, "method_wheels_no_admin")
    );
    assert_eq!(
        advice(true, true, false),
        (Method::Wheels, "method_wheels_mirror")
    );
    assert_eq!(
        advice(true, false, true),
        (Method::Wheels, "method_wheels_download_failed")
    );
}

#[test]
fn the_wheels_method_may_pick_a_release_the_tables_know_no_installer_for() {
    let tables = Tables::embedded().unwrap();
    let facts = Facts {
        os: Linux,
        gpus: vec![GpuFact {
            name: Some("RTX 3090".into()),
            compute_capability: "8.6".parse().unwrap(),
        }],
        driver: Some("600.00".parse().unwrap()),
        driver_cuda: None,
        python: None,
        installed_toolkits: vec![],
        unidentified_gpus: vec![],
        notes: vec![],
        host_kind: Default::default(),
        free_threaded: false,
    };
    let req = |method| Request {
        goal: Goal::Developer,
        cuda: Some("13.5".parse().unwrap()),
        method,
        driver: Default::default(),
        distro: None,
        ..Default::default()
    };
    // 13.5.0's installers are not in the tables (UNCONFIRMED): only the wheels can give it.
    assert!(
        recommend(&tables, &facts, &req(Method::Installer))
            .toolkit
            .is_none()
    );
    let w = recommend(&tables, &facts, &req(Method::Wheels));
    let tk = w.toolkit.expect("13.5 through the wheels");
    assert_eq!(tk.version.to_string(), "13.5.0");
    assert!(tk.installer.is_none());
}

#[test]
fn the_driver_headline_names_the_minimum_and_the_current_driver() {
    let tables = Tables::embedded().unwrap();
    let req = Request {
        goal: Goal::Pytorch,
        cuda: None,
        method: Method::Installer,
        driver: Default::default(),
        distro: None,
        ..Default::default()
    };
    let rec_for = |driver: Option<&str>| {
        let f = Facts {
            os: Os::Windows,
            gpus: vec![GpuFact {
                name: Some("NVIDIA GeForce RTX 3060".into()),
                compute_capability: "8.6".parse().unwrap(),
            }],
            driver: driver.map(v),
            driver_cuda: None,
            python: Some(v("3.12")),
            installed_toolkits: Vec::new(),
            unidentified_gpus: Vec::new(),
            notes: Vec::new(),
            host_kind: Default::default(),
            free_threaded: false,
        };
        recommend(&tables, &f, &req)
    };
    let none = rec_for(None);
    let h = none.driver_headline().expect("no driver: a headline");
    assert_eq!(h.key, "driver_headline_install");
    let old = rec_for(Some("418.96"));
    let h = old.driver_headline().expect("an old driver: a headline");
    assert_eq!(h.key, "driver_headline_update");
    let text = crate::i18n::render(&h, crate::i18n::Lang::En);
    assert!(text.contains("418.96"), "{text}");
    assert!(
        text.contains(&old.driver.minimum.unwrap().to_string()),
        "{text}"
    );
    assert!(rec_for(Some("610.74")).driver_headline().is_none());
}
