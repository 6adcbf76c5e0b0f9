//! A child process that lives no longer than we do. Linux: a guard shell that the kernel
//! signals when we die (`PR_SET_PDEATHSIG`) and that then kills the child's whole process
//! group. Windows: a job object that kills the child, and what it starts, when our last
//! handle to it closes. NVIDIA's installers run this way (the engine's
//! `steps::installer_process`).

use std::process::Command;

/// Linux: `cmd` under a guard shell that runs it in the background and, when the kernel
/// tells it we died (SIGTERM, `PR_SET_PDEATHSIG`), kills its process group — the
/// installer and every helper it started (`run_long` makes the guard the group's leader).
/// The guard's exit status is the installer's.
#[cfg(target_os = "linux")]
pub fn guarded(cmd: Command) -> Command {
    use std::os::unix::process::CommandExt;
    const GUARD: &str = r#"trap 'trap "" TERM; kill -KILL 0' TERM; "$0" "$@" & wait $!"#;
    let mut g = Command::new("sh");
    g.arg("-c")
        .arg(GUARD)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => g.env(k, v),
            None => g.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        g.current_dir(d);
    }
    let parent = std::process::id();
    // SAFETY: only async-signal-safe calls (prctl, getppid) between fork and exec.
    unsafe {
        g.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // We died before the line above: nobody will send the signal.
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    g
}

#[cfg(not(target_os = "linux"))]
pub fn guarded(cmd: Command) -> Command {
    cmd
}

/// Windows: a job object that kills the installer (and what it starts) when its last
/// handle closes — ours, when we exit or are killed. Elsewhere: nothing.
pub struct Job(#[cfg(windows)] windows_sys::Win32::Foundation::HANDLE);

impl Job {
    #[cfg(windows)]
    pub fn tie(child: &std::process::Child) -> Option<Job> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::System::JobObjects::{
            AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
            JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
            SetInformationJobObject,
        };
        // SAFETY: plain Win32 calls on a handle we own and the child's live handle.
        unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if job.is_null() {
                return None;
            }
            let job = Job(job);
            let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            let set = SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                &info as *const _ as *const core::ffi::c_void,
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            );
            (set != 0 && AssignProcessToJobObject(job.0, child.as_raw_handle() as _) != 0)
                .then_some(job)
        }
    }

    #[cfg(not(windows))]
    pub fn tie(_child: &std::process::Child) -> Option<Job> {
        None
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: our own handle, closed once. The installer has ended by now (or is
        // being stopped): closing kills whatever it left behind in the job.
        #[cfg(windows)]
        unsafe {
            windows_sys::Win32::Foundation::CloseHandle(self.0);
        }
    }
}
