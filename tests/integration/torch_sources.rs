//! The torch wheel from the fastest trustworthy source (#34): with the automatic choice,
//! PyTorch's index (a loopback server, `CUDA_SETUP_TORCH_INDEX`) and a mirror of it
//! (https on loopback, named in a `--compat-dir`'s pytorch.toml as NJU) are read at once
//! and the wheel gets both as sources; the hash is PyTorch's whenever its index answers,
//! a mirror listing another is left out, and when only the mirror answers the trust
//! moving to it is said. An explicit index wins. And the PyPI race picks the faster of
//! two loopback indexes.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::support;
use support::server::{Body, Fault, Server};
use support::standin::sha256_of;

/// The wheel this machine's pip (the stand-in Python 3.11) takes.
fn wheel_name() -> String {
    let py = support::python::CPYTHON_TAG;
    format!(
        "torch-{}+cu126-{py}-{py}-manylinux_2_28_x86_64.whl",
        support::newest_torch()
    )
}

/// `/whl/cu126/torch/` on `server`, listing the wheel with `sha` (its bytes served too).
fn index(server: &Server, bytes: &[u8], sha: &str) {
    let name = wheel_name();
    server.add(
        &format!("/whl/cu126/{name}"),
        Body::Bytes(Arc::new(bytes.to_vec())),
    );
    server.add(
        "/whl/cu126/torch/",
        Body::Bytes(Arc::new(
            format!(
                "<!DOCTYPE html><html><body>\n<a href=\"/whl/cu126/{name}#sha256={sha}\">{name}</a><br>\n</body></html>\n"
            )
            .into_bytes(),
        )),
    );
}

/// The shipped tables with the mirrors pointed at `nju` (and SJTU at nothing listening).
fn compat_dir(dir: &Path, nju: &str) -> PathBuf {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-tables");
    let out = dir.join("compat");
    std::fs::create_dir_all(&out).unwrap();
    for e in std::fs::read_dir(&shipped).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), out.join(e.file_name())).unwrap();
        }
    }
    let p = out.join("pytorch.toml");
    let t = std::fs::read_to_string(&p)
        .unwrap()
        .replace(
            "base = \"https://mirror.nju.edu.cn/pytorch/whl\"",
            &format!("base = \"{nju}/whl\""),
        )
        .replace(
            "base = \"https://mirror.sjtu.edu.cn/pytorch-wheels\"",
            "base = \"https://127.0.0.1:1/whl\"",
        );
    assert!(t.contains(nju), "the shipped mirror moved");
    std::fs::write(&p, t).unwrap();
    out
}

struct Case {
    work: tempfile::TempDir,
    official: Server,
    mirror: Server,
    front: support::tls::Redirector,
    bytes: Vec<u8>,
}

impl Case {
    fn new() -> Case {
        let bytes = support::server::pattern(2_000_000, 34);
        let mirror = Server::start();
        let front = support::tls::front(mirror.addr);
        Case {
            work: tempfile::tempdir().unwrap(),
            official: Server::start(),
            mirror,
            front,
            bytes,
        }
    }

    /// `install --goal pytorch` in a root, PyTorch's index at `official`, the tables'
    /// mirrors at ours; `extra` arguments last.
    fn install(&self, official: &str, extra: &[&str]) -> (Output, PathBuf) {
        let py = support::python::interpreter(self.work.path(), None);
        let log = support::python::pip_install_log(self.work.path());
        let compat = compat_dir(self.work.path(), &self.front.base());
        let ca = support::tls::ca_file(self.work.path());
        let root = self.work.path().join("root");
        let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
        c.args(["--compat-dir", compat.to_str().unwrap()])
            .args([
                "install",
                "--goal",
                "pytorch",
                "--unattended",
                "--os",
                "linux",
                "--gpu-cc",
                "8.6",
                "--driver",
                "551.78",
                "--python-exe",
                py.to_str().unwrap(),
                "--root",
                root.to_str().unwrap(),
            ])
            .args(extra)
            .env("LANG", "C")
            .env("CUDA_SETUP_TORCH_INDEX", format!("{official}/whl"))
            .env("CUDA_SETUP_TEST_ROOT_CA", &ca)
            .env_remove("HTTPS_PROXY")
            .env_remove("HTTP_PROXY")
            .env_remove("ALL_PROXY");
        (c.output().unwrap(), log)
    }

    fn wheel(&self) -> PathBuf {
        self.work
            .path()
            .join("root/.cuda-setup/downloads")
            .join(wheel_name())
    }
}

fn json(out: &Output) -> Value {
    support::cli::json(out)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The install_torch step's report.
fn torch_step(r: &Value) -> Value {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "install_torch")
        .cloned()
        .unwrap_or_else(|| panic!("{r:#}"))
}

#[test]
fn automatic_reads_pytorch_and_the_mirror_and_downloads_from_both() {
    let c = Case::new();
    let sha = sha256_of(&c.bytes);
    index(&c.official, &c.bytes, &sha);
    index(&c.mirror, &c.bytes, &sha);
    let official = format!("http://{}", c.official.addr);
    let (out, log) = c.install(&official, &["--torch-index", "auto", "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let name = wheel_name();
    assert!(
        err.contains(&format!(
            "The torch wheel downloads from the fastest of: {official}/whl/cu126/{name}, {}/whl/cu126/{name}",
            c.front.base()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(c.wheel()).unwrap(), c.bytes);
    // The mirror's listing was read (and, as a source, perhaps its bytes).
    assert!(c.mirror.requests() >= 1);
    // PyTorch's index answered: its hash, and no word of a mirror's.
    assert_eq!(
        torch_step(&json(&out))["message"]["key"],
        "step_torch_installed"
    );
    assert!(!err.contains("checksum comes from"), "{err}");
    // pip got the file; the rest still comes from PyTorch's index.
    let pip = std::fs::read_to_string(&log).unwrap();
    assert!(pip.contains(&c.wheel().display().to_string()), "{pip}");
    assert!(
        pip.contains(&format!("--index-url {official}/whl/cu126")),
        "{pip}"
    );
}

#[test]
fn pytorch_unreachable_the_mirrors_hash_is_used_and_said_in_both_languages() {
    for (lang, said) in [
        (
            "en",
            "could not be reached, so the wheel's checksum comes from the Nanjing University mirror",
        ),
        (
            "zh",
            "PyTorch 官方服务器（download.pytorch.org）连不上，文件的校验值来自南京大学镜像",
        ),
    ] {
        let c = Case::new();
        index(&c.mirror, &c.bytes, &sha256_of(&c.bytes));
        // Chinese needs no flag: measured is its default.
        let extra: &[&str] = match lang {
            "zh" => &["--lang", "zh", "--json"],
            _ => &["--torch-index", "auto", "--json"],
        };
        let (out, log) = c.install(&support::server::dead_base(), extra);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{lang}: {err}");
        assert!(err.contains(said), "{lang}: the log\n{err}");
        assert_eq!(std::fs::read(c.wheel()).unwrap(), c.bytes);
        // pip takes torchvision and the rest from the mirror too, not from the index that
        // did not answer; said in the log.
        let mirror_index = format!("{}/whl/cu126", c.front.base());
        let pip = std::fs::read_to_string(&log).unwrap();
        assert!(
            pip.contains(&format!("--index-url {mirror_index}")),
            "{lang}: {pip}"
        );
        assert!(
            !pip.contains(&support::server::dead_base()),
            "{lang}: {pip}"
        );
        let told = match lang {
            "zh" => "也从同一个镜像下载",
            _ => "from the same mirror",
        };
        assert!(
            err.contains(&format!("{told}：{mirror_index}"))
                || err.contains(&format!("{told}: {mirror_index}")),
            "{lang}: {err}"
        );
        // What the step did says it too, not only its log.
        let step = torch_step(&json(&out));
        assert_eq!(
            step["message"]["key"], "step_torch_hash_from_nju",
            "{step:#}"
        );
        assert_eq!(
            step["message"]["params"]["base"],
            format!("{}/whl", c.front.base())
        );
    }
}

#[test]
fn a_mirror_listing_another_hash_is_not_a_source() {
    let c = Case::new();
    index(&c.official, &c.bytes, &sha256_of(&c.bytes));
    // The mirror serves other bytes under the same name, with their own hash.
    let other = support::server::pattern(2_000_000, 36);
    index(&c.mirror, &other, &sha256_of(&other));
    let official = format!("http://{}", c.official.addr);
    let (out, _) = c.install(&official, &["--torch-index", "auto", "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "{}/whl/cu126/torch/ lists another checksum for {} than PyTorch's own server",
            c.front.base(),
            wheel_name()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "downloads from the fastest of: {official}/whl/cu126/{}\n",
            wheel_name()
        )),
        "only PyTorch's: {err}"
    );
    assert_eq!(std::fs::read(c.wheel()).unwrap(), c.bytes);
    // Only the listing was asked of the mirror, never the file.
    assert_eq!(c.mirror.requests(), 1);
}

#[test]
fn an_explicit_index_is_the_only_one_read_even_in_chinese() {
    let c = Case::new();
    let sha = sha256_of(&c.bytes);
    index(&c.official, &c.bytes, &sha);
    index(&c.mirror, &c.bytes, &sha);
    let official = format!("http://{}", c.official.addr);
    let chosen = format!("{official}/whl");
    let (out, _) = c.install(
        &support::server::dead_base(),
        &["--lang", "zh", "--torch-index", &chosen, "--json"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read(c.wheel()).unwrap(), c.bytes);
    assert_eq!(c.mirror.requests(), 0, "the mirror was never asked");
    assert_eq!(
        torch_step(&json(&out))["message"]["key"],
        "step_torch_installed"
    );
}

#[test]
fn the_pypi_race_picks_the_faster_of_two_indexes() {
    let page = |server: &Server, fault: Fault| {
        let mut links = String::new();
        for i in 0..40 {
            links += &format!(
                "<a href=\"/files/pip-{i}.0-py3-none-any.whl#sha256={}\">pip-{i}.0-py3-none-any.whl</a><br>\n",
                "ab".repeat(32)
            );
        }
        server.add_with(
            "/simple/pip/",
            Body::Bytes(Arc::new(
                format!("<!DOCTYPE html><html><body>\n{links}</body></html>\n").into_bytes(),
            )),
            fault,
        );
    };
    let slow = Server::start();
    let fast = Server::start();
    // About 4 KB at 1 KB/s: seconds behind the other.
    page(
        &slow,
        Fault {
            throttle: Some(1024),
            ..Default::default()
        },
    );
    page(&fast, Fault::default());
    use cuda_setup_core::steps::pypi_race::{Candidate, race};
    let candidates = [
        Candidate {
            name: "pypi".into(),
            url: slow.url("/simple"),
        },
        Candidate {
            name: "tsinghua".into(),
            url: fast.url("/simple"),
        },
    ];
    let won = race(&candidates, Duration::from_secs(10)).unwrap();
    assert_eq!(won.url, fast.url("/simple"));
    // Nothing that answers: none wins, within the budget.
    let dead = [Candidate {
        name: "pypi".into(),
        url: format!("{}/simple", support::server::dead_base()),
    }];
    assert!(race(&dead, Duration::from_secs(3)).is_none());
}
