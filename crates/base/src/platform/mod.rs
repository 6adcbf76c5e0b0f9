//! The one door to the operating system for probes: well-known system paths (under a
//! root that tests point at a temp dir), environment variables (a snapshot tests
//! replace), and child processes with a timeout.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::os::Os;

pub mod child;
pub mod signature;
#[cfg(windows)]
pub mod windows;

/// The machine as probes see it.
#[derive(Debug, Clone)]
pub struct Host {
    pub os: Os,
    /// Where well-known system paths (`/sys`, `/usr/local/cuda`, `C:\Program Files`) live.
    /// `/` (or nothing, on Windows) for the real machine.
    root: PathBuf,
    env: BTreeMap<String, String>,
    /// Reads the Windows registry and WMI (only on the real Windows machine).
    pub windows_apis: bool,
}

/// Why a child process gave no usable output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunError {
    #[error("could not start {program}: {reason}")]
    Spawn { program: String, reason: String },
    #[error("{program} did not finish within {seconds} s and was stopped")]
    Timeout { program: String, seconds: u64 },
}

/// A finished child process.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Host {
    /// This machine, as it is.
    pub fn real() -> Host {
        Host {
            os: Os::current(),
            root: if cfg!(windows) {
                PathBuf::new()
            } else {
                PathBuf::from("/")
            },
            env: std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect(),
            windows_apis: cfg!(windows),
        }
    }

    /// This machine, with `env` instead of the process's environment (repair audits the
    /// persistent environment a new console would get, not the one we started with).
    pub fn real_with_env(env: BTreeMap<String, String>) -> Host {
        Host {
            env,
            ..Host::real()
        }
    }

    /// A machine whose system paths live under `root`, with exactly `env`.
    pub fn sandbox(os: Os, root: &Path, env: BTreeMap<String, String>) -> Host {
        Host {
            os,
            root: root.to_path_buf(),
            env,
            windows_apis: false,
        }
    }

    /// Whether system paths are the machine's own (not a sandbox root). Probes that
    /// cannot be redirected (NVML, the registry) run only then.
    pub fn root_is_real(&self) -> bool {
        self.root.as_os_str().is_empty() || self.root == Path::new("/")
    }

    /// A well-known system path (`/usr/local/cuda`, `C:\Program Files`) under the root.
    pub fn system_path(&self, p: &str) -> PathBuf {
        if self.root.as_os_str().is_empty() {
            return PathBuf::from(p);
        }
        // Drop a drive letter and leading separators: `C:\Program Files` → `C/Program Files`.
        let rel = p.replace('\\', "/");
        let rel = match rel.split_once(':') {
            Some((drive, rest)) if drive.len() == 1 => {
                format!("{drive}/{}", rest.trim_start_matches('/'))
            }
            _ => rel.trim_start_matches('/').to_string(),
        };
        self.root.join(rel)
    }

    /// An environment variable (case-insensitive on Windows, as Windows is).
    pub fn var(&self, name: &str) -> Option<&str> {
        let hit = match self.os {
            Os::Windows => self
                .env
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v),
            Os::Linux => self.env.get(name),
        };
        hit.map(String::as_str).filter(|v| !v.is_empty())
    }

    /// All variables, for probes that scan (`CUDA_PATH_V12_4`, …).
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The directories of a PATH-like variable, in order.
    pub fn path_list(&self, name: &str) -> Vec<PathBuf> {
        let sep = if self.os == Os::Windows { ';' } else { ':' };
        self.var(name)
            .map(|v| {
                v.split(sep)
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| PathBuf::from(s.trim().trim_matches('"')))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The executable name as this OS spells it (`nvcc` → `nvcc.exe` on Windows).
    pub fn exe(&self, name: &str) -> String {
        match self.os {
            Os::Windows if !name.ends_with(".exe") => format!("{name}.exe"),
            _ => name.to_string(),
        }
    }

    /// The first `name` on PATH.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        let exe = self.exe(name);
        self.path_list("PATH")
            .into_iter()
            .map(|d| d.join(&exe))
            .find(|p| p.is_file())
    }

    /// The user's home folder.
    pub fn home(&self) -> Option<PathBuf> {
        let var = if self.os == Os::Windows {
            "USERPROFILE"
        } else {
            "HOME"
        };
        self.var(var).map(PathBuf::from)
    }

    /// Runs `program` with this host's environment; stops it after `timeout`.
    pub fn run(
        &self,
        program: &Path,
        args: &[&str],
        timeout: Duration,
    ) -> Result<RunOutput, RunError> {
        let name = program.display().to_string();
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .envs(&self.env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        hide_console(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| RunError::Spawn {
            program: name.clone(),
            reason: e.to_string(),
        })?;
        // Drain both pipes on threads so a chatty child cannot block on a full pipe.
        let drain = |r: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut buf);
                }
                String::from_utf8_lossy(&buf).into_owned()
            })
        };
        let out = drain(
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let err = drain(
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if start.elapsed() >= timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(RunError::Timeout {
                        program: name,
                        seconds: timeout.as_secs().max(1),
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => {
                    return Err(RunError::Spawn {
                        program: name,
                        reason: e.to_string(),
                    });
                }
            }
        };
        Ok(RunOutput {
            status: status.code(),
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        })
    }
}

/// How a long-running child process (an installer) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finished {
    Exited(Option<i32>),
    Cancelled,
    TimedOut,
}

/// Runs `cmd`, forwarding each output line to `on_line`; stops the child and everything
/// it started when `cancelled()` turns true or `timeout` passes.
pub fn run_long(
    cmd: Command,
    timeout: Duration,
    cancelled: &dyn Fn() -> bool,
    on_line: &mut dyn FnMut(String),
) -> Result<Finished, RunError> {
    run_long_with(cmd, timeout, cancelled, on_line, &mut |_| {})
}

/// [`run_long`], with `on_spawn` called as soon as the child exists (the installer step
/// records it and ties its lifetime to ours).
pub fn run_long_with(
    mut cmd: Command,
    timeout: Duration,
    cancelled: &dyn Fn() -> bool,
    on_line: &mut dyn FnMut(String),
    on_spawn: &mut dyn FnMut(&std::process::Child),
) -> Result<Finished, RunError> {
    use std::io::BufRead;
    let name = format!("{:?}", cmd.get_program());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    hide_console(&mut cmd);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| RunError::Spawn {
        program: name.clone(),
        reason: e.to_string(),
    })?;
    on_spawn(&child);
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let mut readers = Vec::new();
    for r in [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for line in std::io::BufReader::new(r).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        }));
    }
    drop(tx);
    let start = Instant::now();
    let outcome = loop {
        while let Ok(line) = rx.try_recv() {
            on_line(line);
        }
        match child.try_wait() {
            Ok(Some(status)) => break Finished::Exited(status.code()),
            Ok(None) => {}
            Err(e) => {
                return Err(RunError::Spawn {
                    program: name,
                    reason: e.to_string(),
                });
            }
        }
        if cancelled() || start.elapsed() >= timeout {
            kill_tree(&mut child);
            break if cancelled() {
                Finished::Cancelled
            } else {
                Finished::TimedOut
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    for r in readers {
        let _ = r.join();
    }
    while let Ok(line) = rx.try_recv() {
        on_line(line);
    }
    Ok(outcome)
}

/// Stops a child and all its descendants (installers spawn helpers of their own).
fn kill_tree(child: &mut std::process::Child) {
    #[cfg(unix)]
    // SAFETY: kill(2) on the process group the child leads (process_group(0) above).
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    #[cfg(windows)]
    {
        let _ = Command::new("taskkill")
            .args(["/T", "/F", "/PID", &child.id().to_string()])
            .output();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `p` with symlinks resolved (so `/usr/local/cuda` and `/usr/local/cuda-12.4` compare
/// equal); `p` itself when it does not exist.
pub fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Child processes of the GUI must not flash a console window on Windows.
#[cfg(windows)]
fn hide_console(cmd: &mut Command) {
    use std::os::windows::process::CommandExt;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    cmd.creation_flags(CREATE_NO_WINDOW);
}

#[cfg(not(windows))]
fn hide_console(_: &mut Command) {}

/// The per-user cache folder for downloads: `%LOCALAPPDATA%\cuda-setup\cache` on
/// Windows, `$XDG_CACHE_HOME/cuda-setup` or `~/.cache/cuda-setup` elsewhere.
pub fn cache_dir(host: &Host) -> Option<PathBuf> {
    match host.os {
        Os::Windows => host
            .var("LOCALAPPDATA")
            .map(|d| Path::new(d).join("cuda-setup").join("cache")),
        Os::Linux => host
            .var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| host.home().map(|h| h.join(".cache")))
            .map(|d| d.join("cuda-setup")),
    }
}

/// Free bytes (available to this user) on the file system that really holds `path`, or
/// its nearest existing ancestor: asked of that file system itself (`statvfs`,
/// `GetDiskFreeSpaceExW`), so a bind mount, a tmpfs, a mounted folder or a network share
/// gives its own figure, not that of a disk in a list whose mount point looks closest.
pub fn free_space(path: &Path) -> std::io::Result<u64> {
    let dir = path
        .ancestors()
        .find(|a| a.is_dir())
        .filter(|a| !a.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    volume_free(dir)
}

#[cfg(unix)]
fn volume_free(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `statvfs` is plain data: all zeroes is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path; `st` is plain data the call fills in.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(windows)]
fn volume_free(dir: &Path) -> std::io::Result<u64> {
    use std::os::windows::ffi::OsStrExt;
    // A share's root needs its trailing backslash; any directory on a volume will do.
    let mut wide: Vec<u16> = dir.as_os_str().encode_wide().collect();
    if wide.last() != Some(&(b'\\' as u16)) {
        wide.push(b'\\' as u16);
    }
    wide.push(0);
    let mut avail = 0u64;
    // SAFETY: `wide` is NUL-terminated; the out-pointers may be null except the one read.
    let ok = unsafe {
        windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW(
            wide.as_ptr(),
            &mut avail,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(avail)
}

/// The local time zone's offset from UTC, in seconds east, at `secs` since the Unix
/// epoch (with daylight saving as the system has it then: `localtime_r`); None when the
/// system cannot say. The wizard shows times in it (`units::local_time`).
#[cfg(unix)]
pub fn utc_offset(secs: u64) -> Option<i64> {
    let t = libc::time_t::try_from(secs).ok()?;
    // SAFETY: `tm` is plain data: all zeroes is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: `t` and `tm` are valid for the call, which reads `t` and fills `tm`;
    // `localtime_r` (unlike `localtime`) keeps no shared buffer. It also runs `tzset`,
    // which reads `TZ` from the environment: sound because no thread of this program
    // changes the environment (nothing calls `set_var`).
    let r = unsafe { libc::localtime_r(&t, &mut tm) };
    // `c_long`: `i64` here, `i32` on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    (!r.is_null()).then_some(i64::from(tm.tm_gmtoff))
}

/// The local time zone's offset from UTC, in seconds east (Windows' current bias, daylight
/// saving as it is now: `FileTimeToLocalFileTime`); None when the system cannot say.
#[cfg(windows)]
pub fn utc_offset(secs: u64) -> Option<i64> {
    use windows_sys::Win32::Foundation::FILETIME;
    // FILETIME counts 100 ns from 1601-01-01.
    let ticks = secs.checked_add(11_644_473_600)?.checked_mul(10_000_000)?;
    let utc = FILETIME {
        dwLowDateTime: ticks as u32,
        dwHighDateTime: (ticks >> 32) as u32,
    };
    let mut local = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    // SAFETY: both pointers are to valid FILETIMEs; the call reads one and fills the other.
    let ok = unsafe {
        windows_sys::Win32::Storage::FileSystem::FileTimeToLocalFileTime(&utc, &mut local)
    };
    if ok == 0 {
        return None;
    }
    let local = (u64::from(local.dwHighDateTime) << 32) | u64::from(local.dwLowDateTime);
    Some((local as i64 - ticks as i64) / 10_000_000)
}

/// Whether `path` was written by this account or by the machine's administrators: on Unix
/// its owner is root or our effective uid; on Windows, where an elevated process's files
/// are owned by the Administrators group, its owner is Administrators or SYSTEM (checked
/// only when `elevated`: a non-elevated state folder lies in the user's own profile).
/// A state file that can make us run programs is trusted only then — anyone may create
/// files in `C:\ProgramData`.
pub fn written_by_us(path: &Path, elevated: bool) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = elevated;
        let uid = std::fs::symlink_metadata(path)?.uid();
        // SAFETY: geteuid has no preconditions.
        Ok(uid == 0 || uid == unsafe { libc::geteuid() })
    }
    #[cfg(windows)]
    {
        if !elevated {
            return Ok(true);
        }
        windows::owned_by_administrators(path)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (path, elevated);
        Ok(true)
    }
}

/// Whether an I/O error means the drive (or the user's quota) is full: ENOSPC/EDQUOT,
/// Windows' ERROR_DISK_FULL (112) and ERROR_HANDLE_DISK_FULL (39).
pub fn is_disk_full(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    if matches!(e.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded) {
        return true;
    }
    #[cfg(windows)]
    {
        matches!(e.raw_os_error(), Some(112) | Some(39))
    }
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
    }
    #[cfg(not(any(unix, windows)))]
    {
        false
    }
}

/// Whether this process runs with administrator (Windows) or root (Linux) rights.
pub fn is_elevated() -> bool {
    #[cfg(windows)]
    {
        windows::is_elevated()
    }
    #[cfg(not(windows))]
    {
        // The effective uid, from the kernel's own status file (no libc needed).
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
            })
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `df`'s figure for the file system holding `p` (bytes available).
    #[cfg(target_os = "linux")]
    fn df_avail(p: &Path) -> u64 {
        let out = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(p)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Free space is the file system's own figure, for a folder not made yet too; and a
    /// tmpfs mounted below a disk (where we may mount) reports its own size, not the
    /// disk's whose mount point is the longest prefix in a list.
    #[cfg(target_os = "linux")]
    #[test]
    fn free_space_is_that_of_the_file_system_holding_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let margin = 512 << 20; // other processes write meanwhile
        let ours = free_space(&dir.path().join("not/yet/made")).unwrap();
        assert!(ours.abs_diff(df_avail(dir.path())) < margin, "{ours}");
        let mnt = dir.path().join("small");
        std::fs::create_dir(&mnt).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(&mnt)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if mounted {
            let got = free_space(&mnt.join("cuda-12.4/bin"));
            let _ = Command::new("umount").arg(&mnt).status();
            assert_eq!(got.unwrap(), 1 << 20);
        } else {
            eprintln!("(no tmpfs: mount is not allowed here)");
        }
        // /dev/shm, where it is a file system of its own.
        let shm = Path::new("/dev/shm");
        if shm.is_dir() && df_avail(shm).abs_diff(df_avail(dir.path())) > 2 * margin {
            let got = free_space(&shm.join("nothing/here")).unwrap();
            assert!(got.abs_diff(df_avail(shm)) < margin, "{got}");
        }
    }

    #[test]
    fn system_paths_map_under_the_root() {
        let h = Host::sandbox(Os::Windows, Path::new("/tmp/r"), BTreeMap::new());
        assert_eq!(
            h.system_path(r"C:\Program Files\NVIDIA"),
            Path::new("/tmp/r/C/Program Files/NVIDIA")
        );
        let h = Host::sandbox(Os::Linux, Path::new("/tmp/r"), BTreeMap::new());
        assert_eq!(
            h.system_path("/usr/local/cuda"),
            Path::new("/tmp/r/usr/local/cuda")
        );
    }

    #[test]
    fn windows_variables_ignore_case() {
        let env = BTreeMap::from([("Path".to_string(), "a;b".to_string())]);
        let h = Host::sandbox(Os::Windows, Path::new("/"), env);
        assert_eq!(
            h.path_list("PATH"),
            vec![PathBuf::from("a"), PathBuf::from("b")]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_hanging_child_is_stopped() {
        let h = Host::real();
        let err = h
            .run(Path::new("sleep"), &["5"], Duration::from_millis(200))
            .unwrap_err();
        assert!(matches!(err, RunError::Timeout { .. }));
        let ok = h
            .run(Path::new("echo"), &["hi"], Duration::from_secs(5))
            .unwrap();
        assert_eq!(ok.stdout.trim(), "hi");
    }
}
