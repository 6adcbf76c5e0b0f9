//! The Windows driver as the plan's first step, end to end in a temp root: a loopback
//! mirror serves a stand-in driver installer (a real program that insists on `-s
//! -noreboot`, writes the driver's INF that detection reads, exits with a chosen code,
//! signed or not by its last line) beside the CUDA installer stand-in. Also the table
//! behind it (`drivers.toml`) read from a `--compat-dir`.

#![cfg(unix)]

use crate::support::cli::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use cuda_setup_core::compat::{DriverPackage, FILES, Tables};
use cuda_setup_core::version::Version;
use serde_json::Value;

use crate::support;
use support::server::{Body, Server};
use support::standin::{Driver, driver_installer, serve_installer, windows_installer};

/// The driver the plan picks for a GeForce desktop card with no driver: the newest known.
pub(crate) fn newest_desktop() -> Version {
    let t = Tables::embedded().unwrap();
    let row = t.driver_package(DriverPackage::GeforceDesktop).unwrap();
    row.versions.last().unwrap().version.clone()
}

struct Machine {
    server: Server,
    work: tempfile::TempDir,
}

impl Machine {
    fn new(exit_code: i32, signer: Option<&str>) -> Machine {
        let server = Server::start();
        serve_installer(
            &server,
            "11.8.0",
            "cuda_11.8.0_522.06_windows.exe",
            windows_installer(0, 0),
        );
        let v = newest_desktop().to_string();
        let bytes = driver_installer(&Driver {
            version: &v,
            exit_code,
            signer,
        });
        server.add(
            &format!("/Windows/{v}/{v}-desktop-win10-win11-64bit-international-dch-whql.exe"),
            Body::Bytes(Arc::new(bytes)),
        );
        Machine {
            server,
            work: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> PathBuf {
        self.work.path().join("root")
    }

    /// `install` of CUDA 11.8 for Windows (Ampere, no driver) from the mirror into the root.
    fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = [
            "install",
            "--goal",
            "developer",
            "--unattended",
            "--json",
            "--os",
            "windows",
            "--cuda",
            "11.8",
            "--gpu-cc",
            "8.6",
            "--no-cudnn",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend([
            "--mirror".into(),
            format!("http://{}", self.server.addr),
            "--root".into(),
            self.root().display().to_string(),
        ]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    }

    fn driver_log(&self) -> PathBuf {
        self.root().join("driver-args.log")
    }
}

fn cli(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .env("LANG", "C")
        .output()
        .unwrap()
}

fn steps(r: &Value) -> Vec<(String, String, bool)> {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["status"].as_str().unwrap().into(),
                s["changed"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn plan_steps(plan: &Value) -> Vec<String> {
    plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap().to_string())
        .collect()
}

/// What detection reads in the root as the installed driver.
fn detected(root: &Path) -> Option<Version> {
    let host = cuda_setup_core::platform::Host::sandbox(
        cuda_setup_core::compat::Os::Windows,
        root,
        Default::default(),
    );
    cuda_setup_core::detect::gpu::installed_driver(&host)
}

#[test]
fn no_driver_plans_the_driver_first_and_the_run_installs_it_once() {
    let m = Machine::new(0, Some("NVIDIA Corporation"));
    let out = cli(&m.args(&["--dry-run"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = json(&out);
    assert_eq!(
        plan_steps(&plan)[..3],
        ["preflight", "download", "install_driver"],
        "{plan}"
    );
    let dl = &plan["steps"][1];
    assert_eq!(dl["what"], "driver_installer");
    assert!(dl["sha256"].is_null() && dl["md5"].is_null(), "{dl}");
    // The user's mirror first, then NVIDIA's other hosts, then the canonical URL.
    let mirrors: Vec<&str> = dl["mirrors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(mirrors[0], format!("http://{}", m.server.addr));
    assert!(
        mirrors.contains(&"https://cn.download.nvidia.com"),
        "{mirrors:?}"
    );
    assert!(
        dl["url"]
            .as_str()
            .unwrap()
            .starts_with("https://us.download.nvidia.com/Windows/"),
        "{dl}"
    );
    assert_eq!(
        plan["steps"][2]["args"],
        serde_json::json!(["-s", "-noreboot"])
    );
    assert_eq!(
        plan["steps"][0]["driver"], true,
        "the pre-flight asks for admin rights"
    );
    // The human dry run names the steps too.
    let mut human = m.args(&["--dry-run"]);
    human.retain(|a| a != "--json");
    let text = String::from_utf8_lossy(&cli(&human).stdout).to_string();
    assert!(
        text.contains("2. Download the NVIDIA driver")
            && text.contains("3. Install the NVIDIA driver"),
        "{text}"
    );

    assert_eq!(detected(&m.root()), None);
    let out = cli(&m.args(&[]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out);
    let st = steps(&r);
    assert_eq!(
        st[1],
        ("download_driver".into(), "done".into(), true),
        "{st:?}"
    );
    assert_eq!(
        st[2],
        ("install_driver".into(), "done".into(), true),
        "{st:?}"
    );
    assert!(st.iter().all(|s| s.1 == "done"), "{st:?}");
    assert_eq!(r["restart_pending"], false);
    let args = std::fs::read_to_string(m.driver_log()).unwrap();
    assert_eq!(args.trim(), "-s -noreboot");
    assert_eq!(detected(&m.root()), Some(newest_desktop()));

    // Again: the driver is there, so its step changes nothing and the installer never runs.
    let out = cli(&m.args(&[]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st = steps(&json(&out));
    assert_eq!(
        st[2],
        ("install_driver".into(), "done".into(), false),
        "{st:?}"
    );
    assert_eq!(
        std::fs::read_to_string(m.driver_log())
            .unwrap()
            .lines()
            .count(),
        1,
        "the driver installer ran twice"
    );
}

#[test]
fn an_unsigned_or_foreign_driver_is_never_run() {
    for signer in [None, Some("Someone Else Ltd")] {
        let m = Machine::new(0, signer);
        let out = cli(&m.args(&[]));
        assert_eq!(out.status.code(), Some(1603 % 256), "{signer:?}");
        let r = json(&out);
        assert_eq!(r["failure"]["step"], "install_driver", "{r}");
        assert_eq!(r["failure"]["kind"], "driver_signature", "{r}");
        let e = r["failure"]["error"].as_str().unwrap();
        let why = if signer.is_some() {
            "signed by Someone Else Ltd, not by NVIDIA Corporation"
        } else {
            "not signed"
        };
        assert!(e.contains("not run") && e.contains(why), "{e}");
        assert!(!m.driver_log().exists(), "the unsigned installer ran");
        assert_eq!(detected(&m.root()), None);
        // The refused file is set aside, so a second try downloads it anew.
        let installer = std::path::PathBuf::from(
            r["plan"]["steps"][2]["installer"]
                .as_str()
                .expect("the installer's path"),
        );
        assert!(!installer.exists(), "{}", installer.display());
        let mut aside = installer.clone().into_os_string();
        aside.push(".rejected");
        assert!(std::path::Path::new(&aside).exists());
        // Nothing after it ran either.
        assert!(steps(&r)[3..].iter().all(|s| s.1 == "not_run"), "{r}");
        // The plain words, in both languages.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not run"), "{stderr}");
        let kind = cuda_setup_core::steps::FailureKind::DriverSignature;
        for lang in [
            cuda_setup_core::i18n::Lang::En,
            cuda_setup_core::i18n::Lang::Zh,
        ] {
            let fail = cuda_setup_core::i18n::t(lang, kind.fail_key());
            assert!(!fail.is_empty() && fail != kind.fail_key());
        }
        assert_eq!(
            cuda_setup_core::i18n::t(cuda_setup_core::i18n::Lang::En, kind.fail_key()),
            "The driver file is not signed by NVIDIA; it was not run."
        );
    }
}

#[test]
fn a_driver_that_needs_a_restart_stops_the_run_and_the_rerun_finishes_the_rest() {
    let m = Machine::new(3010, Some("NVIDIA Corporation"));
    let target =
        cuda_setup_core::target::Target::rooted(cuda_setup_core::compat::Os::Windows, &m.root());
    let out = cli(&m.args(&[]));
    assert_eq!(
        out.status.code(),
        Some(3010 % 256),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out);
    assert_eq!(r["restart_pending"], true, "{r}");
    assert_eq!(r["reboot_required"], true);
    assert!(r["failure"].is_null());
    // The verdict waits for the restart: never "the driver is not installed" (#31).
    assert_eq!(r["verdict"]["cause"], "restart_needed", "{r}");
    assert_eq!(r["verdict"]["fix"]["kind"], "restart");
    let st = steps(&r);
    assert_eq!(st[2].0, "install_driver");
    assert_eq!(st[2].1, "done");
    assert!(st[3..].iter().all(|s| s.1 == "not_run"), "{st:?}");
    // The plan waits for the restart; it is not an interrupted run.
    let waiting = cuda_setup_core::run::awaiting_restart(&target).expect("a plan awaiting restart");
    assert_eq!(waiting.steps.len(), st.len());
    assert!(cuda_setup_core::run::interrupted_plan(&target).is_none());
    // After the restart, the same command resumes after the driver.
    let out = cli(&m.args(&[]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st = steps(&json(&out));
    assert!(st[..3].iter().all(|s| s.1 == "done_before"), "{st:?}");
    assert!(st[3..].iter().all(|s| s.1 == "done"), "{st:?}");
    assert_eq!(
        std::fs::read_to_string(m.driver_log())
            .unwrap()
            .lines()
            .count(),
        1,
        "the driver installer ran again"
    );
    assert!(cuda_setup_core::run::awaiting_restart(&target).is_none());
    assert!(
        m.root()
            .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/bin/nvcc.exe")
            .is_file()
    );
}

#[test]
fn the_restart_words_and_exit_code_of_a_human_run() {
    let m = Machine::new(3010, Some("NVIDIA Corporation"));
    let mut human = m.args(&[]);
    human.retain(|a| a != "--json");
    let out = cli(&human);
    assert_eq!(out.status.code(), Some(3010 % 256));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Restart the computer, then run the same command again"),
        "{text}"
    );
    // Said once, as the verdict: the restart, not a missing driver (#31).
    assert!(
        text.contains("Not usable yet: the NVIDIA graphics driver was just installed")
            && !text.contains("not installed."),
        "{text}"
    );
    assert_eq!(text.matches("Restart the computer").count(), 1, "{text}");
}

#[test]
fn skip_driver_plans_no_driver_step_and_says_so() {
    let m = Machine::new(0, Some("NVIDIA Corporation"));
    let out = cli(&m.args(&["--dry-run", "--skip-driver"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = json(&out);
    let names = plan_steps(&plan);
    assert!(!names.contains(&"install_driver".to_string()), "{names:?}");
    assert!(
        plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["what"] != "driver_installer")
    );
    let notes = plan["notes"].to_string();
    assert!(notes.contains("install it yourself"), "{notes}");
}

/// The PyTorch goal needs the driver too: the same two steps first.
#[test]
fn the_pytorch_goal_also_starts_with_the_driver() {
    let m = Machine::new(0, Some("NVIDIA Corporation"));
    let py = m.work.path().join("python.exe");
    std::fs::write(&py, "").unwrap();
    let args: Vec<String> = [
        "install",
        "--json",
        "--dry-run",
        "--goal",
        "pytorch",
        "--os",
        "windows",
        "--gpu-cc",
        "8.6",
        "--python-exe",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        py.display().to_string(),
        "--root".into(),
        m.root().display().to_string(),
    ])
    .collect();
    let out = cli(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = json(&out);
    assert_eq!(
        plan_steps(&plan),
        ["preflight", "download", "install_driver", "install_torch"],
        "{plan}"
    );
}

/// Linux never gets a driver step of ours, even with the driver too old: a note.
#[test]
fn a_linux_target_never_gets_a_driver_step() {
    let work = tempfile::tempdir().unwrap();
    let server = Server::start();
    let args: Vec<String> = [
        "install",
        "--goal",
        "developer",
        "--json",
        "--dry-run",
        "--os",
        "linux",
        "--cuda",
        "11.4",
        "--gpu-cc",
        "8.6",
        "--driver",
        "400.0",
        "--no-cudnn",
        "--mirror",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("http://{}", server.addr),
        "--root".into(),
        work.path().display().to_string(),
    ])
    .collect();
    serve_installer(
        &server,
        "11.4.4",
        "cuda_11.4.4_470.82.01_linux.run",
        support::standin::linux_runfile(),
    );
    let out = cli(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = json(&out);
    let names = plan_steps(&plan);
    assert!(!names.contains(&"install_driver".to_string()), "{names:?}");
    assert!(
        plan["notes"].to_string().contains("must be updated"),
        "{plan}"
    );
}

/// A `--compat-dir` made before drivers.toml existed still loads (the built-in driver
/// table is used); one that has it uses its own, checked like the others.
#[test]
fn a_compat_dir_may_leave_out_drivers_toml_but_not_break_it() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-tables");
    let copy = || {
        let dir = tempfile::tempdir().unwrap();
        for f in FILES {
            std::fs::copy(shipped.join(f), dir.path().join(f)).unwrap();
        }
        dir
    };
    let dir = copy();
    let t = Tables::from_dir(dir.path()).unwrap();
    assert_eq!(
        t.drivers.packages.len(),
        Tables::embedded().unwrap().drivers.packages.len()
    );

    let text = std::fs::read_to_string(shipped.join("drivers.toml")).unwrap();
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "version = \"537.58\"",
            "version = \"617.99\"",
            &["drivers.toml", "geforce_desktop", "out of order"],
        ),
        (
            "version = \"512.59\"",
            "version = \"474.64\"",
            &["drivers.toml", "474.64", "twice"],
        ),
        (
            "url = \"https://us.download.nvidia.com/Windows/{v}/{v}-notebook",
            "url = \"https://us.download.nvidia.com/Windows/581.57/581.57-notebook",
            &["drivers.toml", "geforce_notebook", "{v}"],
        ),
        (
            "canonical = \"https://us.download.nvidia.com\"",
            "canonical = \"http://us.download.nvidia.com\"",
            &["drivers.toml", "hosts.canonical", "https"],
        ),
        (
            "name = \"data_center\"",
            "name = \"tesla_cards\"",
            &["drivers.toml", "TOML"],
        ),
        (
            "words = [\"laptop\", \"gpu\"]",
            "words = [\"Laptop GPU\"]",
            &["drivers.toml", "choose.rule", "words"],
        ),
        (
            "version = \"572.13\"",
            "version = \"572.13.1\"",
            &["drivers.toml", "572.13.1"],
        ),
    ];
    for (from, to, want) in cases {
        let dir = copy();
        assert!(text.contains(from), "drivers.toml has no {from:?}");
        std::fs::write(dir.path().join("drivers.toml"), text.replacen(from, to, 1)).unwrap();
        let err = Tables::from_dir(dir.path())
            .expect_err(&format!("{from} → {to} was accepted"))
            .to_string();
        for w in *want {
            assert!(err.contains(w), "{from} → {to}: {err:?} lacks {w:?}");
        }
    }
    // A folder in its place is not a table.
    let dir = copy();
    std::fs::create_dir(dir.path().join("drivers.toml")).unwrap();
    let err = Tables::from_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("drivers.toml"), "{err}");
}

/// #36 review 3: a lab profile's `[driver] min` above what CUDA needs reaches the plan.
/// The PC's 581.15 runs CUDA 11.8, so `install` alone keeps it; `state set` with
/// `min = "591.86"` plans and runs the driver step (the newest known, from the mirror).
/// (`--driver 581.15` is a what-if flag, so the state read afterwards still says 581.15;
/// the root's DriverStore shows what was installed.)
#[test]
fn state_set_installs_the_driver_a_profiles_min_asks_for() {
    let m = Machine::new(0, Some("NVIDIA Corporation"));
    let profile = m.work.path().join("lab.toml");
    let write = |min: &str| {
        std::fs::write(
            &profile,
            format!(
                "schema = 1\n[driver]\nmin = \"{min}\"\n[toolkit]\nversion = \"11.8\"\n\
                 method = \"installer\"\n[sources]\nmirrors = [\"http://{}\"]\n",
                m.server.addr
            ),
        )
        .unwrap()
    };
    let set = || {
        let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
            .args([
                "state", "set", "--json", "--os", "windows", "--gpu-cc", "8.6",
            ])
            .args(["--driver", "581.15", "--profile"])
            .arg(&profile)
            .arg("--root")
            .arg(m.root())
            .env("LANG", "C")
            .env_remove("CUDA_SETUP_TEST_NOT_ELEVATED")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        json(&out)
    };
    // A floor the driver meets: the toolkit's run, no driver step.
    write("560.94");
    let v = set();
    let st = steps(&v["runs"][0]);
    assert!(st.iter().all(|s| !s.0.contains("driver")), "{st:?}");
    assert!(st.iter().any(|s| s.0 == "install_toolkit"), "{st:?}");
    assert_eq!(detected(&m.root()), None);
    // Above it: the driver is installed by the same run.
    write("591.86");
    let v = set();
    assert_eq!(v["drift"][0]["fix_step"], "install_driver", "{v:#}");
    let st = steps(&v["runs"][0]);
    assert!(
        st.contains(&("install_driver".into(), "done".into(), true)),
        "{st:?}"
    );
    assert_eq!(detected(&m.root()), Some(newest_desktop()));
}
