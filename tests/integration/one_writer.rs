//! One writer per target: two runs that change the same folder never interleave. Real
//! processes (the built binary), paused at a named point by the debug-only hook
//! `CUDA_SETUP_TEST_PAUSE_AT`, so every race here is deterministic; kill -9 leaves no
//! stale lock; NVIDIA's installer dies with us, and a rerun waits for one still running.

#![cfg(unix)]

use crate::support;

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use support::cudnn_zip::{Spec, toolkit};
use support::server::{Body, Server};
use support::standin::{serve_installer, windows_installer};

const BUSY: i32 = 6;
/// install's MSI-style 1618 (ERROR_INSTALL_ALREADY_RUNNING), as a Unix shell sees it.
const INSTALL_BUSY: i32 = 1618 % 256;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.env("LANG", "C");
    c
}

fn output(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// A run that stops at `point` (holding its locks) until the test lets it go.
struct Paused {
    child: Child,
    flag: PathBuf,
}

impl Paused {
    fn start(mut cmd: Command, point: &str, dir: &Path) -> Paused {
        let flag = dir.join(format!("{point}.paused"));
        let mut child = cmd
            .env("CUDA_SETUP_TEST_PAUSE_AT", point)
            .env("CUDA_SETUP_TEST_PAUSE_DIR", dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !flag.exists() {
            if let Some(s) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                panic!(
                    "ended ({s}) before {point}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "never reached {point}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Paused { child, flag }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn resume(self) -> Output {
        std::fs::remove_file(&self.flag).unwrap();
        self.child.wait_with_output().unwrap()
    }
}

/// A run whose stderr lines arrive on a channel (to see it start waiting).
fn spawn_watched(mut cmd: Command) -> (Child, Receiver<String>) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    (child, rx)
}

/// Reads lines until one contains `needle` (all lines read so far, for messages).
fn wait_for_line(rx: &Receiver<String>, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
            let hit = l.contains(needle);
            seen.push(l);
            if hit {
                return seen;
            }
        }
    }
    panic!("no line with {needle:?}: {seen:#?}")
}

fn ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` (our `.cuda-setup` records too): path → bytes.
fn everything(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    support::tree::files(dir, &|_| false)
}

const SPEC: Spec = Spec {
    version: "9.10.2.21",
    cuda_major: 12,
    dll_size: 150_000,
};

/// A toolkit whose cuDNN someone copied in by hand (our install backs it up), and a zip.
fn toolkit_and_zip(w: &Path) -> (PathBuf, PathBuf) {
    let dir = toolkit(w, "12.4.1");
    std::fs::write(dir.join("bin/cudnn64_9.dll"), b"old hand-copied dll").unwrap();
    let zip = w.join("c.zip");
    SPEC.write(&zip);
    (dir, zip)
}

fn cudnn(action: &str, dir: &Path, zip: Option<&Path>, extra: &[&str]) -> Command {
    let mut c = bin();
    c.args(["cudnn", action, "--cuda-dir"]).arg(dir).args(extra);
    if let Some(z) = zip {
        c.arg("--archive").arg(z);
    }
    c
}

#[test]
fn a_second_cudnn_install_into_the_same_toolkit_is_refused_or_waits_its_turn() {
    let w = tempfile::tempdir().unwrap();
    let (dir, zip) = toolkit_and_zip(w.path());
    // Run 1 stops in the middle of its transaction (files half moved, journal live).
    let first = Paused::start(
        cudnn("install", &dir, Some(&zip), &[]),
        "cudnn_move",
        w.path(),
    );
    let during = everything(&dir);

    // Run 2 must not take run 1's live journal for a killed run's: it stops, says who is
    // at work, and touches nothing.
    let second = cudnn("install", &dir, Some(&zip), &[]).output().unwrap();
    assert_eq!(second.status.code(), Some(BUSY));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains(&format!(
            "Another cuda-setup (process {}) is working on this folder",
            first.pid()
        )) && err.contains("--wait"),
        "{err}"
    );
    assert_eq!(everything(&dir), during, "the second run changed something");
    // verify and uninstall are held off the same way.
    for action in ["verify", "uninstall"] {
        let out = cudnn(action, &dir, None, &[]).output().unwrap();
        assert_eq!(out.status.code(), Some(BUSY), "{action}");
    }
    assert_eq!(everything(&dir), during);

    // In Chinese too.
    let zh = cudnn("install", &dir, Some(&zip), &["--lang", "zh"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&zh.stderr).contains(&format!(
            "另一个 cuda-setup（进程 {}）正在处理这个文件夹",
            first.pid()
        )),
        "{}",
        String::from_utf8_lossy(&zh.stderr)
    );

    // With --wait it waits, then runs after run 1 has finished.
    let (waiter, lines) = spawn_watched(cudnn("install", &dir, Some(&zip), &["--wait"]));
    wait_for_line(&lines, "waiting for it to finish");
    assert_eq!(
        everything(&dir),
        during,
        "the waiting run changed something"
    );
    ok(&first.resume());
    ok(&waiter.wait_with_output().unwrap());

    ok(&cudnn("verify", &dir, None, &[]).output().unwrap());
    // And the toolkit's own file comes back on uninstall.
    ok(&cudnn("uninstall", &dir, None, &[]).output().unwrap());
    assert_eq!(
        std::fs::read(dir.join("bin/cudnn64_9.dll")).unwrap(),
        b"old hand-copied dll"
    );
}

#[test]
fn kill_9_of_the_holder_leaves_no_stale_lock_and_the_next_run_recovers() {
    let w = tempfile::tempdir().unwrap();
    let (dir, zip) = toolkit_and_zip(w.path());
    let before = support::tree::files(&dir, &|n| n == ".cuda-setup");
    let mut first = Paused::start(
        cudnn("install", &dir, Some(&zip), &[]),
        "cudnn_move",
        w.path(),
    );
    first.child.kill().unwrap(); // SIGKILL, mid-transaction, holding the lock
    first.child.wait().unwrap();

    // At once: no --wait, no stale lock; the killed run is rolled back, then installed.
    let t0 = Instant::now();
    let out = cudnn("install", &dir, Some(&zip), &[]).output().unwrap();
    ok(&out);
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("RolledBack"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(&cudnn("verify", &dir, None, &[]).output().unwrap());
    ok(&cudnn("uninstall", &dir, None, &[]).output().unwrap());
    assert_eq!(support::tree::files(&dir, &|n| n == ".cuda-setup"), before);
}

#[test]
fn verify_of_a_toolkit_never_installed_into_leaves_no_trace() {
    let w = tempfile::tempdir().unwrap();
    let (dir, _) = toolkit_and_zip(w.path());
    let out = cudnn("verify", &dir, None, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(!dir.join(".cuda-setup").exists(), "the lock left a folder");
}

/// A loopback NVIDIA with the Windows installer stand-in, and a root to install into.
struct Machine {
    server: Server,
    work: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        let server = Server::start();
        serve_installer(
            &server,
            "11.8.0",
            "cuda_11.8.0_522.06_windows.exe",
            windows_installer(0, 0),
        );
        Machine {
            server,
            work: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> PathBuf {
        self.work.path().join("root")
    }

    fn install(&self, extra: &[&str]) -> Command {
        let mut c = bin();
        c.args([
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
            "--driver",
            "522.06",
            "--no-cudnn",
            "--mirror",
        ])
        .arg(format!("http://{}", self.server.addr))
        .arg("--root")
        .arg(self.root())
        .args(extra);
        c
    }

    fn installer_runs(&self) -> usize {
        std::fs::read_to_string(self.root().join("installer-args.log"))
            .map_or(0, |s| s.lines().count())
    }
}

#[test]
fn a_second_install_on_the_same_target_exits_1618_or_waits() {
    let m = Machine::new();
    // Run 1 has done every step and still holds the target.
    let first = Paused::start(m.install(&[]), "run_end", m.work.path());
    assert_eq!(m.installer_runs(), 1);

    let second = m.install(&[]).output().unwrap();
    assert_eq!(second.status.code(), Some(INSTALL_BUSY));
    let r: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(r["failure"]["kind"], "busy");
    assert_eq!(r["failure"]["params"]["pid"], first.pid().to_string());
    assert_eq!(r["failure"]["params"]["folder"], m.root().to_str().unwrap());
    assert!(
        String::from_utf8_lossy(&second.stderr).contains(&format!(
            "Another cuda-setup (process {}) is working on this folder",
            first.pid()
        )),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(m.installer_runs(), 1, "the second run started an installer");

    let (waiter, lines) = spawn_watched(m.install(&["--wait"]));
    wait_for_line(&lines, "waiting for it to finish");
    ok(&first.resume());
    let out = waiter.wait_with_output().unwrap();
    ok(&out);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["changed"], false, "everything was in place by then");
    assert_eq!(m.installer_runs(), 1);
}

/// Processes still alive (not zombies) in the process group `pgid` (Linux /proc).
#[cfg(target_os = "linux")]
fn alive_in_group(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        if f[0] != "Z" && f[2].parse::<u32>() == Ok(pgid) {
            out.push(pid);
        }
    }
    out
}

fn installer_record(m: &Machine) -> Option<u32> {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.root().join(".cuda-setup/installer.json")).ok()?)
            .ok()?;
    v["pid"].as_u64().map(|p| p as u32)
}

#[cfg(target_os = "linux")]
#[test]
fn nvidias_installer_dies_with_a_killed_cuda_setup() {
    let m = Machine::new();
    let mut run = m
        .install(&[])
        .env("STANDIN_SLEEP", "60")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let pid = loop {
        if let Some(p) = installer_record(&m).filter(|_| m.installer_runs() == 1) {
            break p;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the installer never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!alive_in_group(pid).is_empty());
    run.kill().unwrap(); // SIGKILL: no chance to clean up
    run.wait().unwrap();
    // The installer and what it started (its `sleep`) go too, well before their minute.
    let t0 = Instant::now();
    while !alive_in_group(pid).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the installer outlived us: {:?}",
            alive_in_group(pid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_rerun_waits_for_an_installer_an_earlier_run_left_running() {
    let m = Machine::new();
    // An installer an earlier run started, still at work (it ends when `flag` goes).
    let flag = m.work.path().join("installer-busy");
    std::fs::write(&flag, b"").unwrap();
    let mut earlier = Command::new("sh")
        .arg("-c")
        .arg("while [ -e \"$0\" ]; do sleep 0.02; done")
        .arg(&flag)
        .spawn()
        .unwrap();
    let state = m.root().join(".cuda-setup");
    cuda_setup_core::steps::installer_process::record(&state, earlier.id(), Path::new("x.exe"));

    let (run, lines) = spawn_watched(m.install(&[]));
    wait_for_line(
        &lines,
        &format!("(process {}) is still running; waiting", earlier.id()),
    );
    assert_eq!(
        m.installer_runs(),
        0,
        "a second installer started beside it"
    );
    std::fs::remove_file(&flag).unwrap();
    earlier.wait().unwrap();
    let out = run.wait_with_output().unwrap();
    ok(&out);
    assert_eq!(m.installer_runs(), 1);
    assert!(installer_record(&m).is_none(), "the record is kept");
}

#[test]
fn two_downloads_of_the_same_file_take_turns_and_the_second_reuses_the_first() {
    let server = Server::start();
    let bytes = support::server::pattern(3 << 20, 7);
    let sha = support::standin::sha256_of(&bytes);
    server.add("/f.bin", Body::Bytes(Arc::new(bytes.clone())));
    let w = tempfile::tempdir().unwrap();
    let out = w.path().join("dl/f.bin");
    let cache = w.path().join("cache");
    let download = |dest: &Path| {
        let mut c = bin();
        c.args(["download", "--json", "--url", &server.url("/f.bin")])
            .args(["--sha256", &sha, "--cache"])
            .arg(&cache)
            .arg("--out")
            .arg(dest);
        c
    };
    let first = Paused::start(download(&out), "download_locked", w.path());
    let (second, lines) = spawn_watched(download(&out));
    let seen = wait_for_line(&lines, "is downloading this file");
    assert!(
        seen.iter()
            .any(|l| l.contains(&format!("(process {})", first.pid()))),
        "{seen:?}"
    );
    // The same cache entry for another destination waits as well.
    let other = w.path().join("elsewhere/f.bin");
    let (third, lines3) = spawn_watched(download(&other));
    wait_for_line(&lines3, "is downloading this file");
    assert_eq!(server.requests(), 0, "a waiting download fetched something");

    let a = first.resume();
    ok(&a);
    let b = second.wait_with_output().unwrap();
    ok(&b);
    let c = third.wait_with_output().unwrap();
    ok(&c);
    let source = |o: &Output| {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["source"]["kind"].as_str().unwrap().to_string()
    };
    assert_eq!(source(&a), "network");
    assert_eq!(source(&b), "existing");
    assert_eq!(source(&c), "cache");
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
    assert_eq!(std::fs::read(&other).unwrap(), bytes);
    // No lock files are left beside the file: only its verified record (#21).
    let mut names: Vec<String> = std::fs::read_dir(w.path().join("dl"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".f.bin.verified", "f.bin"]);
}

#[test]
fn wait_is_offered_where_runs_change_things() {
    for cmd in [
        &["install", "--help"][..],
        &["repair", "--help"],
        &["cudnn", "install", "--help"],
        &["cudnn", "uninstall", "--help"],
    ] {
        let out = output(cmd);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("--wait"),
            "{cmd:?}"
        );
    }
}

/// The wizard's install on a target another cuda-setup holds: the same words, with its
/// process, in English and in Chinese; nothing is started.
#[test]
fn the_wizard_says_which_cuda_setup_holds_the_target() {
    use cuda_setup::ui::fonts::FontSource;
    use cuda_setup::ui::{App, Options};
    use cuda_setup_core::compat::{Os, Tables};
    use cuda_setup_core::i18n::Lang;
    use cuda_setup_core::platform::Host;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    let m = Machine::new();
    let bin = m.work.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, &m.root());
    let env = [("PATH".to_string(), bin.display().to_string())]
        .into_iter()
        .collect();
    o.host = Host::sandbox(Os::Windows, &m.root(), env);
    o.lang = Some(Lang::En);
    o.overrides = crate::support::machine::rtx_3060(Some("522.06"), "3.11");
    o.mirrors = vec![format!("http://{}", m.server.addr)];
    o.cuda = Some("11.8".parse().unwrap());
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    // Another cuda-setup (here: this process, through a lock of its own) holds the target.
    let _held = cuda_setup_core::lock::acquire_with(
        &m.root(),
        &m.root()
            .join(".cuda-setup")
            .join(cuda_setup_core::lock::FILE),
        None,
    )
    .unwrap();

    let mut h = Harness::builder()
        .with_size([1000.0, 1400.0])
        .with_context_setup(|ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), App::new(o));
    let wait = |h: &mut Harness<'_, App>, what: &str, done: &dyn Fn(&App) -> bool| {
        let t0 = Instant::now();
        while !done(h.state()) {
            h.step();
            assert!(t0.elapsed() < Duration::from_secs(90), "timed out: {what}");
            std::thread::sleep(Duration::from_millis(15));
        }
        h.step();
        h.step();
    };
    let click = |h: &mut Harness<'_, App>, label: &str| {
        h.get_by_label(label).click();
        h.step();
        h.step();
    };
    let has =
        |h: &Harness<'_, App>, text: &str| h.query_all_by_label_contains(text).next().is_some();
    h.step();
    click(&mut h, "Next");
    wait(&mut h, "detection", &|a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "Next");
    click(&mut h, "Developer");
    click(&mut h, "Next");
    wait(&mut h, "prepare", &|a| !a.session.prepare().running());
    let asked = m.server.requests();
    click(&mut h, "Start installing");
    wait(&mut h, "install", &|a| !a.session.install().run().running());
    let r = h.state().session.install().run().report().cloned().unwrap();
    let f = r.failure.unwrap();
    assert_eq!(f.kind, cuda_setup_core::steps::FailureKind::Busy);
    let pid = std::process::id();
    assert!(has(
        &h,
        &format!("Another cuda-setup (process {pid}) is working on this folder.")
    ));
    assert!(has(&h, "wait for it to finish, or close it"));
    click(&mut h, "中文");
    assert!(has(
        &h,
        &format!("另一个 cuda-setup（进程 {pid}）正在处理这个文件夹。")
    ));
    assert_eq!(m.installer_runs(), 0);
    assert_eq!(m.server.requests(), asked, "nothing was downloaded");
}

#[test]
fn repair_fix_on_a_target_another_run_holds_exits_6_or_waits() {
    let w = tempfile::tempdir().unwrap();
    let root = w.path().join("root");
    // A toolkit whose environment was never set: `repair --fix` has a fix to run.
    toolkit(
        &root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA"),
        "12.4.1",
    );
    let env_record = root.join(".cuda-setup/windows-env.json");
    let repair = |extra: &[&str]| {
        let mut c = bin();
        c.args(["repair", "--fix", "--os", "windows", "--root"])
            .arg(&root)
            .args(extra);
        c
    };
    // Another cuda-setup (here: this process, through a lock of its own) holds the target.
    let held = cuda_setup_core::lock::acquire_with(
        &root,
        &root.join(".cuda-setup").join(cuda_setup_core::lock::FILE),
        None,
    )
    .unwrap();
    let out = repair(&[]).output().unwrap();
    assert_eq!(out.status.code(), Some(BUSY));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "Another cuda-setup (process {}) is working on this folder",
            std::process::id()
        )),
        "{err}"
    );
    assert!(
        !env_record.exists(),
        "the busy repair changed the environment"
    );

    let (waiter, lines) = spawn_watched(repair(&["--wait"]));
    wait_for_line(&lines, "waiting for it to finish");
    assert!(!env_record.exists());
    drop(held);
    let out = waiter.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(BUSY));
    assert!(env_record.is_file(), "the fix ran once the target was free");
}
