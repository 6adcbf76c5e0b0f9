//! NVIDIA's installer lives no longer than we do: on Linux it runs under a guard shell
//! that the kernel signals when we die (`PR_SET_PDEATHSIG`) and that then kills the
//! installer's whole process group; on Windows it is put in a job object that closes, and
//! kills it, when our process ends. Its pid (with its start time, so a reused pid is not
//! taken for it) is recorded in our state folder while it runs, and a rerun that finds it
//! still running waits for it instead of starting a second installer into the same folder.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::msg;

/// `<state>/installer.json` while an installer of ours runs.
const RECORD: &str = "installer.json";

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    pid: u32,
    /// The process's start time (Unix seconds), as the OS reports it.
    started: u64,
    installer: PathBuf,
}

/// The process's start time, while it runs (a zombie has ended).
fn start_time(pid: u32) -> Option<u64> {
    let mut sys = sysinfo::System::new().ok()?;
    let p = sysinfo::Pid::from_u32(pid);
    sys.refresh_processes(sysinfo::ProcessesToUpdate::Some(&[p]), true);
    let proc = sys.process(p)?;
    (proc.status() != sysinfo::ProcessStatus::Zombie).then(|| proc.start_time())
}

/// Records `pid`, an installer we just started, in the state folder `state`.
pub fn record(state: &Path, pid: u32, installer: &Path) {
    let r = Record {
        pid,
        started: start_time(pid).unwrap_or(0),
        installer: installer.to_path_buf(),
    };
    let _ = std::fs::create_dir_all(state);
    let _ = crate::state_file::write(
        &state.join(RECORD),
        &serde_json::to_vec(&r).unwrap_or_default(),
    );
}

/// The installer has ended: forget it.
pub fn clear(state: &Path) {
    let _ = std::fs::remove_file(state.join(RECORD));
}

/// The pid of the installer an earlier run recorded, while that very process still runs.
pub fn running(state: &Path) -> Option<u32> {
    // (Read as the input it is: bounded, never through a link.)
    let r: Record =
        serde_json::from_slice(&crate::state_file::read(&state.join(RECORD)).ok()??).ok()?;
    let now = start_time(r.pid)?;
    // The same process: the same start (a second either way: the OS rounds it).
    (r.started == 0 || now.abs_diff(r.started) <= 1).then_some(r.pid)
}

/// Waits while an installer an earlier run started still runs (`notice` is told its pid
/// once). False: cancelled while waiting.
pub fn wait_for_earlier(state: &Path, cancelled: &dyn Fn() -> bool, notice: &dyn Fn(u32)) -> bool {
    let mut told = false;
    while let Some(pid) = running(state) {
        if !told {
            notice(pid);
            told = true;
        }
        if cancelled() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    clear(state);
    true
}

// The guard shell and the job object are platform calls: `platform::child`.
pub use crate::platform::child::{Job, guarded};

/// Runs NVIDIA's installer `cmd` (the installer at `installer`) to its end: guarded, tied
/// to our process, recorded in the state folder `state` while it runs, its output sent as
/// log lines, stopped at `timeout_minutes` or on cancel. Its exit code, when it exited.
pub fn run(
    cmd: Command,
    state: &Path,
    installer: &Path,
    timeout_minutes: u64,
    ctx: &super::Ctx,
) -> Result<Option<i32>, super::StepError> {
    use super::{StepError, StepEvent};
    let cmd = guarded(cmd);
    (ctx.emit)(StepEvent::Log {
        line: running_line(&cmd),
    });
    let emit = ctx.emit;
    let mut job = None;
    let finished = crate::platform::run_long_with(
        cmd,
        Duration::from_secs(timeout_minutes * 60),
        &|| ctx.cancel.is_cancelled(),
        &mut |line| emit(StepEvent::output(line)),
        &mut |child| {
            record(state, child.id(), installer);
            job = Job::tie(child);
        },
    );
    clear(state);
    drop(job);
    match finished.map_err(|e| StepError::Io {
        path: installer.to_path_buf(),
        source: crate::error::cause(e),
    })? {
        crate::platform::Finished::Exited(code) => Ok(code),
        crate::platform::Finished::Cancelled => Err(StepError::Cancelled),
        crate::platform::Finished::TimedOut => Err(StepError::InstallerTimeout {
            minutes: timeout_minutes,
        }),
    }
}

/// Exit codes that mean "installed; restart to finish": MSI's ERROR_SUCCESS_REBOOT_REQUIRED
/// (3010) and ERROR_SUCCESS_REBOOT_INITIATED (1641). UNCONFIRMED for NVIDIA's driver
/// setup.exe: no public NVIDIA source lists its exit codes; these are the codes fleet
/// tools read as "reboot".
pub const REBOOT_CODES: [i32; 2] = [3010, 1641];

/// Whether exit `code` means "installed; restart to finish". A stand-in run off Windows
/// (a sandbox root) reports its status through a Unix wait status, which keeps only the
/// low 8 bits: 3010 arrives as 194 there.
pub fn asks_for_restart(code: i32) -> bool {
    REBOOT_CODES
        .iter()
        .any(|&r| code == r || (cfg!(unix) && code == r % 256))
}

/// "running PROGRAM ARGS" for an installer about to start (its command line quoted as is).
fn running_line(cmd: &std::process::Command) -> Message {
    let mut line = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        line.push(' ');
        line.push_str(&a.to_string_lossy());
    }
    msg!("step_running", command = line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_installer_counts_while_that_very_process_runs() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(running(d.path()), None);
        // This test's own process stands in for a running installer.
        record(d.path(), std::process::id(), Path::new("x"));
        assert_eq!(running(d.path()), Some(std::process::id()));
        // The same pid with another start time: a reused pid, not our installer.
        std::fs::write(
            d.path().join(RECORD),
            format!(
                r#"{{"pid":{},"started":1,"installer":"x"}}"#,
                std::process::id()
            ),
        )
        .unwrap();
        assert_eq!(running(d.path()), None);
        assert!(wait_for_earlier(d.path(), &|| false, &|_| panic!(
            "no wait"
        )));
        assert!(!d.path().join(RECORD).exists());
    }
}
