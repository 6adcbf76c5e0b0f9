//! `cuda-setup state get|test|set` (#36) on sandbox roots: `get` validates against the
//! checked-in JSON Schema; `test` exits 0 on a sandbox in the desired state and 1 with
//! each layer drifting in turn, changing nothing; `set` installs through the plan and
//! executor (a loopback mirror, NVIDIA's Linux runfile stood in), then a second run
//! changes nothing; `--report` writes the envelope `fleet collect` reads.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_setup_core::compat::Os;
use cuda_setup_core::guard::{self, EnvKind, Record, VerifiedBy};
use cuda_setup_core::target::Target;
use serde_json::Value;

use crate::support::python::{self as standin, Torch};
use crate::support::server::Server;
use crate::support::standin::{linux_runfile, serve_installer};
use crate::support::tree;

/// A Windows PC in a sandbox root, as a lab wants it: CUDA 12.4 (NVIDIA's installer, in
/// use), cuDNN 9.1 installed by us, torch 2.5.1+cu124 in a venv, verified and guarded.
/// Run as the user (`CUDA_SETUP_TEST_NOT_ELEVATED`: the guard's pin is the user's).
struct Lab {
    work: tempfile::TempDir,
}

const TORCH: &str = "2.5.1+cu124";

impl Lab {
    fn new() -> Lab {
        let lab = Lab::unrecorded();
        lab.record(&lab.user());
        guard::on(&lab.user(), &lab.python(), true).unwrap();
        lab
    }

    /// The lab with torch installed but no guard record yet.
    fn unrecorded() -> Lab {
        let lab = Lab {
            work: tempfile::tempdir().unwrap(),
        };
        let tk = lab.toolkit();
        std::fs::create_dir_all(tk.join("bin")).unwrap();
        std::fs::write(
            tk.join("version.json"),
            r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
        )
        .unwrap();
        lab.cudnn("9.1.0");
        lab.env(true);
        let bin = lab.venv().join("bin");
        standin::interpreter(&bin, Some(&torch(TORCH, Some("12.4"))));
        standin::set_env(&bin, &lab.venv(), "venv");
        std::fs::write(lab.profile(), lab.profile_text("12.4")).unwrap();
        lab
    }

    /// The verified build recorded in `target`'s state folder (an elevated run's record
    /// is the machine's), not pinned.
    fn record(&self, target: &Target) {
        guard::record::put(
            target,
            Record {
                python: self.python(),
                prefix: self.venv(),
                env: EnvKind::Venv,
                torch: TORCH.into(),
                version: "2.5.1".into(),
                local: Some("cu124".into()),
                variant: "cu124".into(),
                index_url: None,
                wheel: None,
                companions: Default::default(),
                verified_at: 1_796_540_000,
                by: VerifiedBy::Doctor,
                lifted: false,
            },
        )
        .unwrap();
    }

    fn root(&self) -> PathBuf {
        self.work.path().join("root")
    }

    fn toolkit(&self) -> PathBuf {
        self.root()
            .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4")
    }

    fn venv(&self) -> PathBuf {
        self.work.path().join("venv")
    }

    fn python(&self) -> PathBuf {
        self.venv().join("bin/python3")
    }

    fn profile(&self) -> PathBuf {
        self.work.path().join("lab.toml")
    }

    fn user(&self) -> Target {
        let mut t = Target::rooted(Os::Windows, &self.root());
        t.elevated = false;
        t
    }

    fn profile_text(&self, cuda: &str) -> String {
        format!(
            "schema = 1\n\n[driver]\nmin = \"550.54\"\n\n[toolkit]\nversion = \"{cuda}\"\nmethod = \"installer\"\n\n\
             [cudnn]\nversion = \"9\"\n\n[pytorch]\nversion = \"2.5\"\nvariant = \"cu124\"\npython = '{}'\nguard = true\n",
            self.python().display()
        )
    }

    /// Our cuDNN manifest in the toolkit (`None`: removed).
    fn cudnn(&self, version: &str) {
        let meta = self.toolkit().join(".cuda-setup");
        std::fs::create_dir_all(&meta).unwrap();
        let m = cuda_setup_core::cudnn::Manifest {
            format: 1,
            cudnn_version: version.parse().unwrap(),
            cuda_major: Some(12),
            toolkit_version: None,
            archive: "cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip".into(),
            archive_path: None,
            files: Vec::new(),
        };
        std::fs::write(
            meta.join("cudnn-manifest.json"),
            serde_json::to_vec(&m).unwrap(),
        )
        .unwrap();
    }

    /// The user's environment as the registry would hold it: CUDA_PATH names the toolkit
    /// (`active`), or nothing does.
    fn env(&self, active: bool) {
        let dir = self.user().state_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let user = if active {
            serde_json::json!({
                "CUDA_PATH": self.toolkit().display().to_string(),
                "Path": self.toolkit().join("bin").display().to_string(),
            })
        } else {
            serde_json::json!({})
        };
        std::fs::write(
            dir.join("windows-env.json"),
            serde_json::to_vec(&serde_json::json!({"machine": {}, "user": user})).unwrap(),
        )
        .unwrap();
    }

    /// `cuda-setup state ARGS` on the root with an RTX 30-series and `driver`.
    fn state(&self, args: &[&str], driver: &str) -> Output {
        self.state_as(false, args, driver)
    }

    /// The same, `elevated` as a sandbox run is (SYSTEM under Intune, Ansible's become).
    fn state_as(&self, elevated: bool, args: &[&str], driver: &str) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
        if !elevated {
            cmd.env("CUDA_SETUP_TEST_NOT_ELEVATED", "1");
        } else {
            cmd.env_remove("CUDA_SETUP_TEST_NOT_ELEVATED");
        }
        cmd.arg("state")
            .args(args)
            .arg("--root")
            .arg(self.root())
            .args(["--os", "windows", "--gpu-cc", "8.6", "--driver", driver])
            .env("LANG", "C")
            .env_remove("LC_ALL")
            .env("COMPUTERNAME", "LAB-PC-07")
            .env("HOME", self.work.path().join("home"))
            .env_remove("PIP_CONSTRAINT")
            .env_remove("PIP_CONFIG_FILE")
            .env_remove("CUDA_PATH")
            .env_remove("CUDA_HOME")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }

    fn test(&self, driver: &str) -> (Option<i32>, Value) {
        let p = self.profile().display().to_string();
        let out = self.state(&["test", "--profile", &p, "--json"], driver);
        (out.status.code(), json(&out))
    }
}

fn torch(version: &str, cuda: Option<&str>) -> Torch {
    Torch::new(version, cuda, "sm_80,sm_86,sm_90")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn layers(v: &Value) -> Vec<String> {
    v["drift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["layer"].as_str().unwrap().to_string())
        .collect()
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/state-v1.schema.json"),
    )
    .unwrap();
    jsonschema::draft202012::new(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn assert_valid(state: &Value) {
    let errors: Vec<String> = schema().iter_errors(state).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}\n{state:#}");
}

#[test]
fn state_get_is_what_the_schema_says_and_the_report_is_readable() {
    let lab = Lab::new();
    let report = lab.work.path().join("share/%COMPUTERNAME%.json");
    let py = lab.python().display().to_string();
    let out = lab.state(
        &[
            "get",
            "--json",
            "--python-exe",
            &py,
            "--report",
            &report.display().to_string(),
        ],
        "560.94",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = json(&out);
    assert_valid(&s);
    assert_eq!(s["schema"], "cuda-setup/state");
    assert_eq!(s["computer"], "LAB-PC-07");
    assert_eq!(s["driver"]["version"], "560.94");
    assert_eq!(s["gpus"][0]["compute_capability"], "8.6");
    let tk = &s["toolkits"][0];
    assert_eq!(
        (
            tk["version"].as_str(),
            tk["method"].as_str(),
            tk["active"].as_bool()
        ),
        (Some("12.4.1"), Some("installer"), Some(true)),
        "{s:#}"
    );
    assert_eq!(s["cudnn"][0]["version"], "9.1.0");
    assert_eq!(s["pytorch"]["version"], "2.5.1");
    assert_eq!(s["pytorch"]["variant"], "cu124");
    assert_eq!(s["guard"]["on"], true, "{s:#}");
    assert_eq!(s["guard"]["verified_at"], 1_796_540_000u64);
    assert_eq!(s["last_check"], Value::Null);

    // The schema is not a rubber stamp: a state that breaks it is refused.
    let mut bad = s.clone();
    bad["toolkits"][0]["method"] = "conda".into();
    assert!(!schema().is_valid(&bad));
    bad = s.clone();
    bad["schema_version"] = 2.into();
    assert!(!schema().is_valid(&bad));

    // The report: %COMPUTERNAME% expanded, the envelope fleet collect reads.
    let written = lab.work.path().join("share/LAB-PC-07.json");
    let r = cuda_setup_core::fleet::report::read(&std::fs::read(&written).unwrap()).unwrap();
    assert_eq!(r.state.computer, "LAB-PC-07");
    assert_eq!(r.drift, None);
    assert_eq!(serde_json::to_value(&r.state).unwrap(), s);
}

#[test]
fn state_test_in_the_desired_state_exits_0_and_changes_nothing() {
    let lab = Lab::new();
    let before = tree::files(lab.work.path(), &|_| false);
    let (code, v) = lab.test("560.94");
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["in_desired_state"], true);
    assert_eq!(v["drift"], serde_json::json!([]));
    assert_valid(&v["state"]);
    assert_eq!(tree::files(lab.work.path(), &|_| false), before);
}

#[test]
fn each_layer_drifting_in_turn_exits_1_naming_it_and_changes_nothing() {
    let lab = Lab::new();
    let check = |lab: &Lab, driver: &str, want: &[&str]| -> Value {
        let before = tree::files(lab.work.path(), &|_| false);
        let (code, v) = lab.test(driver);
        assert_eq!(code, Some(1), "{v:#}");
        assert_eq!(v["in_desired_state"], false);
        assert_eq!(layers(&v), want, "{v:#}");
        assert_eq!(
            tree::files(lab.work.path(), &|_| false),
            before,
            "test changed something"
        );
        v
    };

    // The driver: older than the floor.
    let v = check(&lab, "470.82.01", &["driver"]);
    let d = &v["drift"][0];
    assert_eq!(
        (d["is"].as_str(), d["should"].as_str()),
        (Some("470.82.01"), Some(">= 550.54"))
    );
    assert_eq!(d["fix_step"], "install_driver");
    assert!(d["fix"].as_str().unwrap().contains("state set"), "{d}");

    // The toolkit: another version wanted (cuDNN must be in that one, so it drifts too).
    std::fs::write(lab.profile(), lab.profile_text("12.6")).unwrap();
    let v = check(&lab, "560.94", &["toolkit", "cudnn"]);
    assert_eq!(v["drift"][0]["is"], "12.4.1 (installer)");
    assert_eq!(v["drift"][0]["fix_step"], "install_toolkit");
    std::fs::write(lab.profile(), lab.profile_text("12.4")).unwrap();

    // The toolkit there, but a new console does not use it.
    lab.env(false);
    let v = check(&lab, "560.94", &["toolkit"]);
    assert_eq!(v["drift"][0]["is"], "12.4.1 (installer) (not active)");
    assert_eq!(v["drift"][0]["fix_step"], "configure_env");
    lab.env(true);

    // cuDNN: another major, then none.
    lab.cudnn("8.9.7");
    let v = check(&lab, "560.94", &["cudnn"]);
    assert_eq!(
        (
            v["drift"][0]["is"].as_str(),
            v["drift"][0]["should"].as_str()
        ),
        (Some("8.9.7"), Some("9"))
    );
    std::fs::remove_file(lab.toolkit().join(".cuda-setup/cudnn-manifest.json")).unwrap();
    let v = check(&lab, "560.94", &["cudnn"]);
    assert_eq!(v["drift"][0]["is"], Value::Null);
    assert_eq!(v["drift"][0]["fix_step"], "install_cudnn");
    lab.cudnn("9.1.0");

    // PyTorch: a CPU build replaced the verified one (so the guard no longer holds it).
    let bin = lab.venv().join("bin");
    standin::set_torch(&bin, Some(&torch("2.5.1+cpu", None)));
    let v = check(&lab, "560.94", &["pytorch", "guard"]);
    assert_eq!(v["drift"][0]["is"], "2.5.1 cpu");
    assert_eq!(v["drift"][0]["should"], "2.5 cu124");
    assert_eq!(v["drift"][1]["is"], "replaced");
    standin::set_torch(&bin, Some(&torch(TORCH, Some("12.4"))));

    // The guard: turned off.
    guard::off(&lab.user(), &lab.python()).unwrap();
    let v = check(&lab, "560.94", &["guard"]);
    assert_eq!(
        (
            v["drift"][0]["is"].as_str(),
            v["drift"][0]["should"].as_str()
        ),
        (Some("off"), Some("on"))
    );
    assert_eq!(v["drift"][0]["fix_step"], Value::Null);

    // A layer the profile leaves out is not judged.
    std::fs::write(
        lab.profile(),
        "schema = 1\n\n[toolkit]\nversion = \"12.4\"\nmethod = \"installer\"\n",
    )
    .unwrap();
    let (code, v) = lab.test("470.82.01");
    assert_eq!(code, Some(0), "{v:#}");
}

#[test]
fn state_test_with_a_bad_profile_exits_2_naming_file_and_key() {
    let lab = Lab::new();
    std::fs::write(
        lab.profile(),
        "schema = 1\n[toolkit]\nversion = \"12.99\"\n",
    )
    .unwrap();
    let p = lab.profile().display().to_string();
    let out = lab.state(&["test", "--profile", &p, "--json"], "560.94");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lab.toml") && err.contains("toolkit"), "{err}");
}

/// `state set` on a Linux sandbox: CUDA 11.4 from a loopback mirror (NVIDIA's runfile
/// stood in), through the same plan and executor as `install`; then nothing drifts and
/// a second run runs nothing.
#[test]
fn state_set_installs_then_a_second_run_changes_nothing() {
    let server = Server::start();
    serve_installer(
        &server,
        "11.4.4",
        "cuda_11.4.4_470.82.01_linux.run",
        linux_runfile(),
    );
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let profile = work.path().join("lab.toml");
    std::fs::write(
        &profile,
        format!(
            "schema = 1\n\n[toolkit]\nversion = \"11.4\"\nmethod = \"installer\"\n\n\
             [sources]\nmirrors = [\"http://{}\"]\n\n[report]\npath = '{}/share/%COMPUTERNAME%.json'\n",
            server.addr,
            work.path().display()
        ),
    )
    .unwrap();
    let set = || {
        let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
            .args(["state", "set", "--json", "--profile"])
            .arg(&profile)
            .arg("--root")
            .arg(&root)
            .args(["--os", "linux", "--gpu-cc", "8.6", "--driver", "470.82.01"])
            .env("LANG", "C")
            .env("COMPUTERNAME", "LAB-PC-08")
            .env_remove("CUDA_HOME")
            .env_remove("CUDA_PATH")
            .env_remove("CUDA_SETUP_TEST_NOT_ELEVATED")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (out.status.code(), json(&out))
    };
    let (code, first) = set();
    assert_eq!(code, Some(0), "{first:#}");
    assert_eq!(first["changed"], true);
    assert_eq!(first["reboot_required"], false);
    assert_eq!(first["in_desired_state"], true, "{first:#}");
    assert_eq!(first["runs"].as_array().unwrap().len(), 1);
    assert!(root.join("usr/local/cuda-11.4/bin/nvcc").is_file());
    let tk = &first["state"]["toolkits"][0];
    assert_eq!(
        (tk["active"].as_bool(), tk["method"].as_str()),
        (Some(true), Some("installer"))
    );

    let (code, again) = set();
    assert_eq!(code, Some(0), "{again:#}");
    assert_eq!(again["changed"], false);
    assert_eq!(again["runs"], serde_json::json!([]));
    assert_eq!(again["drift"], serde_json::json!([]));

    // The profile's report path, expanded: what fleet collect reads.
    let r = cuda_setup_core::fleet::report::read(
        &std::fs::read(work.path().join("share/LAB-PC-08.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(r.drift, Some(Vec::new()));
    assert_eq!(
        r.profile.as_deref(),
        Some(profile.display().to_string().as_str())
    );
}

/// The review's case (#36): Intune or Ansible run `state set` elevated after PyTorch was
/// installed and verified by an elevated run (recorded, never pinned: `guard::on` refuses
/// an elevated run). The guard counts as in state from its record; nothing is pinned with
/// the administrator's rights, and `set` exits 0 instead of 1603 on every run.
#[test]
fn an_elevated_run_judges_the_guard_by_its_record_and_pins_nothing() {
    let lab = Lab::unrecorded();
    let machine = Target::rooted(Os::Windows, &lab.root());
    assert!(machine.elevated);
    // The registry as the elevated run reads it: the toolkit in use.
    std::fs::create_dir_all(machine.state_dir()).unwrap();
    std::fs::copy(
        lab.user().state_dir().join("windows-env.json"),
        machine.state_dir().join("windows-env.json"),
    )
    .unwrap();
    let p = lab.profile().display().to_string();
    let test = |elevated: bool| {
        let out = lab.state_as(elevated, &["test", "--profile", &p, "--json"], "560.94");
        (out.status.code(), json(&out))
    };

    // Never verified: the guard drifts; elevated, the fix is the GPU check that records,
    // not "run it as the user".
    let (code, v) = test(true);
    assert_eq!(code, Some(1), "{v:#}");
    assert_eq!(layers(&v), ["guard"], "{v:#}");
    assert_eq!(v["state"]["elevated"], true);
    assert_valid(&v["state"]);
    let fix = v["drift"][0]["fix"].as_str().unwrap();
    assert!(fix.contains("cuda-setup doctor --python"), "{fix}");
    assert!(!fix.contains("not as administrator"), "{fix}");

    // Recorded by an elevated run, not pinned.
    lab.record(&machine);
    let pins = |lab: &Lab| tree::files(&lab.venv(), &|_| false);
    let before = pins(&lab);
    let (code, v) = test(true);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["drift"], serde_json::json!([]));
    assert_eq!(v["state"]["guard"]["on"], false, "{v:#}");

    let out = lab.state_as(true, &["set", "--profile", &p, "--json"], "560.94");
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{v:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["runs"], serde_json::json!([]));
    assert_eq!(v["changed"], false);
    assert_eq!(pins(&lab), before, "an elevated run wrote into the venv");

    // The user's own run still asks for the pin.
    let (code, v) = test(false);
    assert_eq!(code, Some(1), "{v:#}");
    assert_eq!(layers(&v), ["guard"], "{v:#}");
    assert_eq!(v["state"]["elevated"], false);
}

/// A report that cannot be written (its folder is a file) is a warning on stderr after
/// the JSON; the exit code stays the test's.
#[test]
fn a_report_that_cannot_be_written_warns_and_keeps_the_exit_code() {
    let lab = Lab::new();
    let p = lab.profile().display().to_string();
    let bad = lab.profile().join("LAB-PC-07.json").display().to_string();
    let out = lab.state(
        &["test", "--profile", &p, "--json", "--report", &bad],
        "560.94",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v = json(&out);
    assert_eq!(v["in_desired_state"], true);
    assert!(
        err.contains("warning: the report could not be written") && err.contains(&bad),
        "{err}"
    );

    // Drift stays 1, not turned into another failure.
    let out = lab.state(
        &["test", "--profile", &p, "--json", "--report", &bad],
        "470.82.01",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["in_desired_state"], false);

    // `get` prints its state too.
    let out = lab.state(&["get", "--json", "--report", &bad], "560.94");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["computer"], "LAB-PC-07");
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
}

/// #36 review 4: a profile's venv that does not exist yet is said as such, with how to
/// make it, before anything runs (not pip's "could not start …/bin/python").
#[test]
fn state_set_with_a_venv_not_made_yet_says_so_and_how() {
    let work = tempfile::tempdir().unwrap();
    let venv = work.path().join("lab-venv");
    let profile = work.path().join("lab.toml");
    std::fs::write(
        &profile,
        format!(
            "schema = 1\n[pytorch]\nvenv = '{}'\nguard = false\n",
            venv.display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["state", "set", "--json", "--profile"])
        .arg(&profile)
        .arg("--root")
        .arg(work.path().join("root"))
        .args(["--os", "linux", "--gpu-cc", "8.6", "--driver", "560.94"])
        .env("LANG", "C")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1603 % 256), "{err}");
    assert!(
        err.contains("lab-venv") && err.contains("does not exist"),
        "{err}"
    );
    assert!(err.contains("python3 -m venv"), "{err}");
    assert!(!venv.exists(), "nothing was made");
}
