//! A stand-in Python 3.11 interpreter (or, told so, a free-threaded one of another
//! version), so that `cargo test` needs no Python: a shell
//! program (absolute paths and built-ins only) that answers what our Rust asks a Python —
//! detection's probe (`assets/python_probe.py`, recognised by its `CUDA_SETUP_PROBE`
//! marker), the installed torch's version, `pip debug --verbose`'s tags — from the torch
//! the test gives, and plays `pip install`: it records its arguments in `pip-install.log`
//! beside itself and, given PyTorch's index (`…/whl/cuXYZ`), becomes that CUDA build
//! (given a torch wheel file, the build its name says).
//! What the Python scripts themselves do is checked on a real interpreter by the
//! `real_python_*` tests (`scripts/real-artifacts.sh`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The torch the stand-in has, as detection's probe reports it.
#[derive(Clone, Debug)]
pub struct Torch {
    pub version: String,
    /// `torch.version.cuda`; None: a CPU build.
    pub cuda: Option<String>,
    pub cuda_available: bool,
    /// `torch.backends.cudnn.version()` (`91002`).
    pub cudnn: Option<u64>,
    /// `torch.cuda.get_arch_list()`.
    pub arch: Vec<String>,
}

impl Torch {
    /// `arch` as a comma-separated list (`sm_80,sm_86`; empty: none).
    pub fn new(version: &str, cuda: Option<&str>, arch: &str) -> Torch {
        Torch {
            version: version.into(),
            cuda: cuda.map(Into::into),
            cuda_available: false,
            cudnn: None,
            arch: arch
                .split(',')
                .map(|s| s.trim().trim_matches('\'').to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        }
    }

    fn json(&self) -> String {
        serde_json::json!({
            "version": self.version,
            "cuda": self.cuda,
            "cuda_available": self.cuda_available,
            "cudnn": self.cudnn,
            "arch_list": self.arch,
        })
        .to_string()
    }
}

/// The CPython tag of the stand-in (`pip debug` lists it first).
pub const CPYTHON_TAG: &str = "cp311";

/// Writes the stand-in as `dir/python3` with `torch` installed (None: no torch) and
/// returns its path.
pub fn interpreter(dir: &Path, torch: Option<&Torch>) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    set_torch(dir, torch);
    let py = dir.join("python3");
    std::fs::write(&py, SCRIPT).unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    py
}

/// Makes the stand-in in `dir` a free-threaded CPython `version` (`3.13.1`: a
/// `python3.13t`), as detection's probe reports it (`Py_GIL_DISABLED`).
pub fn set_free_threaded(dir: &Path, version: &str) {
    std::fs::write(dir.join("free-threaded"), format!("{version}\n")).unwrap();
}

/// Installs `torch` (None: removes it) in the stand-in in `dir`.
pub fn set_torch(dir: &Path, torch: Option<&Torch>) {
    let (json, version) = (dir.join("torch.json"), dir.join("torch.version"));
    match torch {
        Some(t) => {
            std::fs::write(json, t.json() + "\n").unwrap();
            std::fs::write(version, format!("{}\n", t.version)).unwrap();
        }
        None => {
            let _ = std::fs::remove_file(json);
            let _ = std::fs::remove_file(version);
        }
    }
}

/// How the stand-in in `dir` describes its environment to the guard's probe: its
/// `sys.prefix` and `venv`, `conda` or `system` (default: a venv whose prefix is `dir`).
/// The prefix holds what a real one of that kind does (the guard checks it): a venv's
/// `pyvenv.cfg`, a conda env's `conda-meta`.
pub fn set_env(dir: &Path, prefix: &Path, kind: &str) {
    std::fs::write(dir.join("prefix"), format!("{}\n", prefix.display())).unwrap();
    std::fs::write(dir.join("env-kind"), format!("{kind}\n")).unwrap();
    std::fs::create_dir_all(prefix).unwrap();
    match kind {
        "venv" => std::fs::write(prefix.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap(),
        "conda" => std::fs::create_dir_all(prefix.join("conda-meta")).unwrap(),
        _ => {}
    }
}

/// torchvision / torchaudio as installed in the stand-in in `dir` (the guard's probe
/// reports them; its `pip install name==V` changes them).
pub fn set_companions(dir: &Path, companions: &[(&str, &str)]) {
    let text: String = companions
        .iter()
        .map(|(n, v)| format!("{n}={v}\n"))
        .collect();
    std::fs::write(dir.join("companions"), text).unwrap();
}

/// When the stand-in's torch was installed (its dist-info folder's time, Unix seconds).
pub fn set_torch_installed_at(dir: &Path, secs: u64) {
    std::fs::write(dir.join("torch.installed_at"), format!("{secs}\n")).unwrap();
}

/// The `PIP_CONSTRAINT` the stand-in's last `pip install` was given (empty: none).
pub fn pip_constraint_log(dir: &Path) -> PathBuf {
    dir.join("pip-constraint.log")
}

/// What the stand-in in `dir` has as torch now (its probe's JSON), if any.
pub fn torch_json(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("torch.json")).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

/// The GPU packages besides torch the stand-in has (#33), as the packages probe reports
/// them: what is installed, the nvidia-* wheels, and what each GPU check answers.
#[derive(Clone, Debug, Default)]
pub struct Packages {
    installed: Vec<serde_json::Value>,
    nvidia: Vec<serde_json::Value>,
    checks: serde_json::Map<String, serde_json::Value>,
    /// `platform`, `executable`, `exec_prefix`, `base_exec_prefix` (`interpreter`).
    interpreter: serde_json::Map<String, serde_json::Value>,
    /// What CTranslate2's check answers when the probe also loads its libraries by name
    /// (`--load-ctranslate2 NAME…`); None: the first answer again.
    ct2_loads: Option<serde_json::Value>,
}

impl Packages {
    /// `name` `version` installed, its `Requires-Dist` naming these nvidia-* wheels.
    pub fn with(mut self, name: &str, version: &str, requires: &[&str]) -> Packages {
        self.installed.push(serde_json::json!({
            "name": name, "version": version, "requires": requires, "build": null,
        }));
        self
    }

    /// The module folder of the package added last (`…/site-packages/onnxruntime`):
    /// where a failed load's native files are walked.
    pub fn at(mut self, dir: &Path) -> Packages {
        let last = self.installed.last_mut().expect("a package added first");
        last["dir"] = serde_json::json!(dir);
        self
    }

    /// The interpreter's facts as the probe reports them (`sys.platform`,
    /// `sys.executable`, `sys.exec_prefix`, `sys.base_exec_prefix`).
    pub fn interpreter(
        mut self,
        platform: &str,
        executable: &Path,
        exec_prefix: &Path,
        base_exec_prefix: &Path,
    ) -> Packages {
        for (k, v) in [
            ("platform", serde_json::json!(platform)),
            ("executable", serde_json::json!(executable)),
            ("exec_prefix", serde_json::json!(exec_prefix)),
            ("base_exec_prefix", serde_json::json!(base_exec_prefix)),
        ] {
            self.interpreter.insert(k.into(), v);
        }
        self
    }

    /// An nvidia-* wheel installed (`nvidia-cudnn-cu12`, `9.1.0.70`).
    pub fn nvidia(mut self, name: &str, version: &str) -> Packages {
        self.nvidia
            .push(serde_json::json!({"name": name, "version": version}));
        self
    }

    /// The GPU check `check` (`onnxruntime`, `ctranslate2`, `paddle`, `tensorflow`, `jax`)
    /// answers this (`{"ok": true, "devices": 1}`, `{"ok": false, "error": "…"}`).
    pub fn check(mut self, check: &str, answer: serde_json::Value) -> Packages {
        self.checks.insert(check.into(), answer);
        self
    }

    /// What CTranslate2's check answers on the probe's second run, which loads the
    /// libraries the core names (`{"ok": false, "error": "RuntimeError: Library
    /// cublas64_12.dll is not found or cannot be loaded"}`).
    pub fn ct2_loads(mut self, answer: serde_json::Value) -> Packages {
        self.ct2_loads = Some(answer);
        self
    }

    fn json(&self) -> String {
        let mut v = serde_json::json!({
            "python": "3.11.9",
            "packages": self.installed,
            "nvidia": self.nvidia,
            "checks": self.checks,
            "error": null,
        });
        for (k, x) in &self.interpreter {
            v[k] = x.clone();
        }
        v.to_string()
    }
}

/// Gives the stand-in in `dir` these packages; it then also answers the doctor's probe
/// (torch from `set_torch`, no GPU check of its own).
pub fn set_packages(dir: &Path, packages: &Packages) {
    std::fs::write(dir.join("packages.json"), packages.json() + "\n").unwrap();
    let loads = dir.join("packages-load.json");
    match &packages.ct2_loads {
        Some(answer) => {
            let mut v: serde_json::Value = serde_json::from_str(&packages.json()).unwrap();
            v["packages"] = serde_json::json!([]);
            v["nvidia"] = serde_json::json!([]);
            v["checks"] = serde_json::json!({ "ctranslate2": answer });
            std::fs::write(&loads, v.to_string() + "\n").unwrap();
        }
        None => {
            let _ = std::fs::remove_file(&loads);
        }
    }
}

/// The library names the probe's last `--load-ctranslate2` run was given (one line,
/// space-separated), if it ran.
pub fn ct2_loads_asked(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join("packages-load.log"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// What the stand-in in `dir` answers the doctor's probe (its JSON, one line): a test's
/// working CUDA build, say.
pub fn set_doctor(dir: &Path, json: &str) {
    std::fs::write(dir.join("doctor.json"), format!("{json}\n")).unwrap();
}

/// The stand-in's `pip install` prints `output` (pip's own words, on stderr) and exits 1;
/// its `pip debug` fails, so the torch wheel is left to pip.
pub fn set_pip_fails(dir: &Path, output: &str) {
    std::fs::write(dir.join("pip-fails"), output).unwrap();
}

/// The arguments of the last `pip install` the stand-in in `dir` ran (`-m pip install …`).
pub fn pip_install_log(dir: &Path) -> PathBuf {
    dir.join("pip-install.log")
}

const SCRIPT: &str = r#"#!/bin/sh
# A stand-in Python 3.11 (tests/support/python.rs).
here="${0%/*}"
v=3.11.9; ft=false
if [ -f "$here/free-threaded" ]; then read -r v < "$here/free-threaded"; ft=true; fi
case "$1" in
--version|-V) echo "Python $v"; exit 0;;
-c)
  case "$2" in
  *CUDA_SETUP_PROBE*)
    if [ -f "$here/torch.json" ]; then read -r t < "$here/torch.json"; e=null
    else t=null; e='"not installed: No module named '"'"'torch'"'"'"'; fi
    echo "CUDA_SETUP_PROBE {\"version\": \"$v\", \"executable\": \"$0\", \"bits\": 64, \"free_threaded\": $ft, \"torch\": $t, \"torch_error\": $e}"
    exit 0;;
  *CUDA_SETUP_DOCTOR*)
    # The doctor's probe: the answer a test gave (set_doctor), else, only where a test
    # gave packages (set_packages), torch as above.
    if [ -f "$here/doctor.json" ]; then read -r d < "$here/doctor.json"; echo "CUDA_SETUP_DOCTOR $d"; exit 0; fi
    [ -f "$here/packages.json" ] || { echo "stand-in python: no answer for this script" >&2; exit 1; }
    if [ -f "$here/torch.json" ]; then read -r t < "$here/torch.json"; e=null
    else t=null; e='{"kind": "not_installed", "detail": "ModuleNotFoundError: No module named torch"}'; fi
    echo "CUDA_SETUP_DOCTOR {\"python\": \"$v\", \"executable\": \"$0\", \"torch\": $t, \"torch_error\": $e, \"check\": null}"
    exit 0;;
  *CUDA_SETUP_PACKAGES*)
    [ -f "$here/packages.json" ] || { echo "stand-in python: no answer for this script" >&2; exit 1; }
    if [ "$4" = --load-ctranslate2 ]; then
      shift 4; echo "$*" > "$here/packages-load.log"
      if [ -f "$here/packages-load.json" ]; then read -r p < "$here/packages-load.json"; printf 'CUDA_SETUP_PACKAGES %s\n' "$p"; exit 0; fi
    fi
    read -r p < "$here/packages.json"; printf 'CUDA_SETUP_PACKAGES %s\n' "$p"; exit 0;;

  *CUDA_SETUP_GUARD*)
    prefix="$here"; [ -f "$here/prefix" ] && read -r prefix < "$here/prefix"
    kind=venv; [ -f "$here/env-kind" ] && read -r kind < "$here/env-kind"
    base=/usr; conda=false
    case "$kind" in system) base="$prefix";; conda) base="$prefix"; conda=true;; esac
    pk=''; at=null
    if [ -f "$here/torch.version" ]; then read -r t < "$here/torch.version"; pk="\"torch\": \"$t\""; at=0
      [ -f "$here/torch.installed_at" ] && read -r at < "$here/torch.installed_at"; fi
    if [ -f "$here/companions" ]; then while IFS='=' read -r cn cv; do
      [ -n "$cn" ] && pk="$pk${pk:+, }\"$cn\": \"$cv\""; done < "$here/companions"; fi
    pk="{$pk}"
    echo "CUDA_SETUP_GUARD {\"executable\": \"$0\", \"prefix\": \"$prefix\", \"base_prefix\": \"$base\", \"conda\": $conda, \"packages\": $pk, \"torch_installed_at\": $at, \"error\": null}"
    exit 0;;
  *CUDA_SETUP_TORCH*)
    if [ -f "$here/torch.version" ]; then read -r t < "$here/torch.version"; echo "CUDA_SETUP_TORCH $t"; exit 0; fi
    echo "importlib.metadata.PackageNotFoundError: No package metadata was found for torch" >&2
    exit 1;;
  esac
  echo "stand-in python: no answer for this script" >&2; exit 1;;
-m)
  [ "$2" = pip ] || { echo "stand-in python: no module $2" >&2; exit 1; }
  case "$3" in
  debug)
    # A pip that fails (set_pip_fails) lists no tags: it fetches torch itself.
    [ -f "$here/pip-fails" ] && exit 1
    echo "pip 24.0 from $here/pip (python 3.11)"
    echo "sys.version: 3.11.9"
    echo "Compatible tags: 6"
    for t in cp311-cp311-manylinux_2_28_x86_64 cp311-cp311-manylinux_2_17_x86_64 cp311-cp311-linux_x86_64 cp311-abi3-manylinux_2_28_x86_64 py3-none-manylinux_2_28_x86_64 py3-none-any; do echo "  $t"; done
    exit 0;;
  install)
    echo "$@" > "$here/pip-install.log"
    echo "${PIP_CONSTRAINT-}" > "$here/pip-constraint.log"
    if [ -f "$here/pip-fails" ]; then cat "$here/pip-fails" >&2; exit 1; fi
    # torchvision==V / torchaudio==V: installed as asked (set_companions' file).
    only=true
    for a in "$@"; do case "$a" in
      torchvision==*|torchaudio==*)
        n="${a%%==*}"; keep=""
        if [ -f "$here/companions" ]; then while IFS='=' read -r cn cv; do
          [ "$cn" = "$n" ] || keep="$keep$cn=$cv
"; done < "$here/companions"; fi
        printf '%s%s=%s\n' "$keep" "$n" "${a#*==}" > "$here/companions";;
      -*|http*|pip|install) ;;
      *) only=false;;
    esac; done
    v=""
    for a in "$@"; do case "$a" in *download.pytorch.org/whl/cu*|http://127.0.0.1:*/whl/cu*) v="${a##*/cu}";; esac; done
    for a in "$@"; do case "${a##*/}" in torch-*.whl)
      # A torch wheel file (our cached one): that build, as its name says.
      t="${a##*/}"; t="${t#torch-}"; t="${t%%-*}"; echo "$t" > "$here/torch.version"
      echo "{\"version\": \"$t\", \"cuda\": null, \"cuda_available\": false, \"cudnn\": null, \"arch_list\": []}" > "$here/torch.json";;
    esac; done
    # Only companions asked for: torch stays as it is.
    if [ -n "$v" ] && [ "$only" = false ]; then
      cuda="${v%?}.${v#??}"
      case "$v" in 126) arch='"sm_50","sm_60","sm_70","sm_75","sm_80","sm_86","sm_90"';; *) arch='"sm_75","sm_80","sm_86","sm_90","sm_100","sm_120"';; esac
      echo "2.13.0+cu$v" > "$here/torch.version"
      echo "{\"version\": \"2.13.0+cu$v\", \"cuda\": \"$cuda\", \"cuda_available\": true, \"cudnn\": 91002, \"arch_list\": [$arch]}" > "$here/torch.json"
    fi
    echo "Successfully installed torch"; exit 0;;
  esac;;
esac
echo "stand-in python: unexpected arguments: $*" >&2
exit 2
"#;

/// A real Python 3 for the `real_python_*` tests (`scripts/real-artifacts.sh`): a venv of
/// this machine's `python3`, made once, so no package installed on this machine (a
/// torch) takes part; the tests bring theirs on `PYTHONPATH`. Fails the test, saying
/// why, without a `python3`.
pub fn real_sandboxed() -> PathBuf {
    static VENV: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    VENV.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("real-python");
        let py = dir.join("bin/python3");
        let out = std::process::Command::new("python3")
            .args(["-m", "venv", "--clear", "--without-pip"])
            .arg(&dir)
            .output()
            .expect("the real_python_* tests need python3 on PATH");
        assert!(
            out.status.success() && py.is_file(),
            "python3 -m venv {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        py
    })
    .clone()
}
