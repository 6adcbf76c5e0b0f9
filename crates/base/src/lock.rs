//! One writer per target: an OS advisory lock (std's `File::try_lock`: `flock` on Unix,
//! `LockFileEx` on Windows) held for a whole run. The kernel drops it when the process
//! ends, however it ends, so a kill -9 never leaves a stale lock.
//!
//! The owner's process id goes in a file beside the lock (`lock.pid`): Windows' locks also
//! bar reading the locked file, and the loser must be able to say who holds it. On Unix
//! both files are removed at release (a waiter that then gets the unlinked file sees it is
//! no longer the one at that path and tries again); on Windows they stay.
//!
//! Locks are always taken in one order — the target's state folder, then a toolkit folder,
//! then a download's destination, then its cache entry — so two runs never deadlock.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::Serialize;

/// The lock file's name in a folder we keep state in (`.cuda-setup/lock`, `<state>/lock`).
pub const FILE: &str = "lock";

/// Another cuda-setup holds the lock on `folder`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("another cuda-setup (process {}) is working on {}", pid_text(*.pid), .folder.display())]
pub struct Busy {
    /// What the other run is working on (a toolkit folder, the install's state folder, a
    /// download's destination).
    pub folder: PathBuf,
    /// The other process, as its pid file says (None: it had not written it yet).
    pub pid: Option<u32>,
}

impl Busy {
    /// As a message for the catalogue: `key` is `busy`, `busy_waiting`, `download_waiting`
    /// or `fail_busy` (params `pid`, `folder`).
    pub fn message(&self, key: &'static str) -> crate::message::Message {
        crate::message::Message::new(key)
            .with("pid", pid_text(self.pid))
            .with("folder", self.folder.display())
    }
}

/// The pid as the messages show it.
pub fn pid_text(pid: Option<u32>) -> String {
    pid.map_or_else(|| "?".into(), |p| p.to_string())
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum LockError {
    #[error(transparent)]
    Busy(Busy),
    #[error("{}: {detail}", .path.display())]
    Io { path: PathBuf, detail: String },
    #[error("cancelled while waiting for another cuda-setup")]
    Cancelled,
}

/// How to wait for a lock another process holds.
pub struct Waiting<'a> {
    pub cancelled: &'a dyn Fn() -> bool,
    /// Told once, when the wait begins.
    pub notice: &'a dyn Fn(&Busy),
}

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct Lock {
    file: Option<File>,
    path: PathBuf,
    /// The folder the lock file lives in, when this lock created it (removed again at
    /// release if empty, so a lock leaves no trace in a folder that had none).
    created_dir: Option<PathBuf>,
}

/// The companion beside a lock file that names its owner (`lock.pid`).
pub fn pid_path(lock_file: &Path) -> PathBuf {
    let mut s = lock_file.as_os_str().to_owned();
    s.push(".pid");
    PathBuf::from(s)
}

fn io(path: &Path, e: std::io::Error) -> LockError {
    LockError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Tells the user a wait begins.
type Notice = Box<dyn Fn(&Busy) + Send + Sync>;

static POLICY: OnceLock<Notice> = OnceLock::new();

/// The user asked (`--wait`) to wait for another cuda-setup rather than stop: every lock
/// this process takes with [`acquire`] then waits, calling `notice` when it starts to.
pub fn wait_when_busy(notice: impl Fn(&Busy) + Send + Sync + 'static) {
    let _ = POLICY.set(Box::new(notice));
}

/// Takes the lock `lock_file` for work on `folder`: at once, or — when the user asked to
/// wait ([`wait_when_busy`]) — once the other process lets go.
pub fn acquire(folder: &Path, lock_file: &Path) -> Result<Lock, LockError> {
    match POLICY.get() {
        Some(notice) => acquire_with(
            folder,
            lock_file,
            Some(&Waiting {
                cancelled: &|| false,
                notice: &**notice,
            }),
        ),
        None => acquire_with(folder, lock_file, None),
    }
}

/// Takes the lock; with `waiting` None a held lock is [`LockError::Busy`].
pub fn acquire_with(
    folder: &Path,
    lock_file: &Path,
    waiting: Option<&Waiting>,
) -> Result<Lock, LockError> {
    let dir = lock_file.parent().unwrap_or(Path::new("."));
    let mut created_dir = None;
    let (mut told, mut tries) = (false, 0);
    loop {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
            created_dir = Some(dir.to_path_buf());
        }
        let file = match open(lock_file, true) {
            Ok(f) => f,
            // The previous holder removed the folder it had created as it let go.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 100 => {
                tries += 1;
                continue;
            }
            // A folder we may only read (Program Files without administrator rights): a
            // read-only handle locks as well, if the file is there.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                open(lock_file, false).map_err(|_| io(lock_file, e))?
            }
            Err(e) => return Err(io(lock_file, e)),
        };
        match file.try_lock() {
            Ok(()) => {
                if !still_at(&file, lock_file) {
                    // Its owner removed it as it let go; take the file now at that path.
                    continue;
                }
                let lock = Lock {
                    file: Some(file),
                    path: lock_file.to_path_buf(),
                    created_dir,
                };
                write_pid(&lock.path);
                return Ok(lock);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let busy = Busy {
                    folder: folder.to_path_buf(),
                    pid: read_pid(lock_file),
                };
                let Some(w) = waiting else {
                    return Err(LockError::Busy(busy));
                };
                if !told {
                    (w.notice)(&busy);
                    told = true;
                }
                if (w.cancelled)() {
                    return Err(LockError::Cancelled);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(lock_file, e)),
        }
    }
}

/// The open file is still the one named `path` (Unix: its owner may have removed it).
fn still_at(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// Opens the lock file (read-write, created if missing; or only for reading), never
/// through a symbolic link: the folder may be hostile, and a link planted at its name — or
/// in place of the folder itself — must not make us create a file elsewhere. The folder
/// is opened as a handle first (`place::Dir`: not a link), the file relative to it.
fn open(lock_file: &Path, write: bool) -> std::io::Result<File> {
    let dir = lock_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = lock_file.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "a lock file with no name")
    })?;
    crate::place::Dir::open(dir)?.open_lock(name, write)
}

fn write_pid(lock_file: &Path) {
    let _ = crate::state_file::write(
        &pid_path(lock_file),
        std::process::id().to_string().as_bytes(),
    );
}

/// The holder's pid; it writes it just after locking, so a loser that looks in that
/// instant gives it a moment.
fn read_pid(lock_file: &Path) -> Option<u32> {
    let p = pid_path(lock_file);
    for _ in 0..10 {
        if let Some(pid) = crate::state_file::read(&p)
            .ok()
            .flatten()
            .and_then(|b| String::from_utf8(b).ok()?.trim().parse().ok())
        {
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

impl Lock {
    /// The lock made the folder it lives in (it was not there before).
    pub fn created_dir(&self) -> bool {
        self.created_dir.is_some()
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Unix: remove the files while still holding the lock, so whoever comes next
        // creates a fresh one (and a waiter on this one sees it is gone and retries).
        if cfg!(unix) {
            let _ = std::fs::remove_file(pid_path(&self.path));
            let _ = std::fs::remove_file(&self.path);
        }
        drop(self.file.take());
        if let Some(d) = &self.created_dir {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Debug builds only: a race test sets `CUDA_SETUP_TEST_PAUSE_AT=<point>` and
/// `CUDA_SETUP_TEST_PAUSE_DIR=<dir>`; reaching `point` the first time, the process creates
/// `<dir>/<point>.paused` and waits until the test removes it. Release builds ignore it.
pub fn test_pause(point: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    static DONE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    if std::env::var("CUDA_SETUP_TEST_PAUSE_AT").ok().as_deref() != Some(point) {
        return;
    }
    let Some(dir) = std::env::var_os("CUDA_SETUP_TEST_PAUSE_DIR") else {
        return;
    };
    {
        let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
        if done.iter().any(|p| p == point) {
            return;
        }
        done.push(point.to_string());
    }
    let flag = Path::new(&dir).join(format!("{point}.paused"));
    if std::fs::write(&flag, std::process::id().to_string()).is_err() {
        return;
    }
    while flag.exists() {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_file_is_busy_and_names_the_holder() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("state").join(FILE);
        let held = acquire_with(d.path(), &f, None).unwrap();
        match acquire_with(d.path(), &f, None) {
            Err(LockError::Busy(b)) => {
                assert_eq!(b.pid, Some(std::process::id()));
                assert_eq!(b.folder, d.path());
            }
            other => panic!("{other:?}"),
        }
        drop(held);
        // Released: the folder the lock created is gone again, and the lock is free.
        assert!(!d.path().join("state").exists() || cfg!(windows));
        acquire_with(d.path(), &f, None).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_lock_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        let f = d.path().join(FILE);
        std::os::unix::fs::symlink(&outside, &f).unwrap();
        assert!(matches!(
            acquire_with(d.path(), &f, None),
            Err(LockError::Io { .. })
        ));
        assert!(!outside.exists(), "a file was created through the link");
        // Nor is the pid file written through one.
        std::fs::remove_file(&f).unwrap();
        let tmp = d.path().join(format!("{FILE}.pid.tmp"));
        std::os::unix::fs::symlink(&outside, &tmp).unwrap();
        let held = acquire_with(d.path(), &f, None).unwrap();
        assert!(!outside.exists());
        assert_eq!(read_pid(&f), Some(std::process::id()));
        drop(held);
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_holder_lets_go() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(FILE);
        let held = acquire_with(d.path(), &f, None).unwrap();
        let told = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                acquire_with(
                    d.path(),
                    &f,
                    Some(&Waiting {
                        cancelled: &|| false,
                        notice: &|_| told.store(true, std::sync::atomic::Ordering::SeqCst),
                    }),
                )
            });
            while !told.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            drop(held);
            let got = waiter.join().unwrap().unwrap();
            // The waiter holds the file now at the path, not the one removed under it.
            assert!(still_at(got.file.as_ref().unwrap(), &f));
            assert!(matches!(
                acquire_with(d.path(), &f, None),
                Err(LockError::Busy(_))
            ));
        });
    }
}
