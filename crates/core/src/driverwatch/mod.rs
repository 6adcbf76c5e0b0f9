//! Watch the driver (#33): the driver that passed the GPU check is recorded in our state
//! folder; on the next run (repair's audit, `doctor`, the wizard's first page) a driver
//! older than the record (Windows Update's classic), none at all, or — on Linux — a module
//! not rebuilt for a new kernel (DKMS, akmods) is a finding. [`policy`] is Windows' own
//! switch that keeps Windows Update from replacing drivers, off by default and undone
//! exactly.
//!
//! Reading the machine ([`observe`]) and judging it ([`judge`]) are apart, so the wizard
//! reads on its worker and judges against the facts its what-if overrides changed.

mod linux;
pub mod policy;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::linux_driver::RebuildAdvice;
use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::records::{Origin, Use};
use crate::target::Target;
use crate::version::Version;

/// The record's file in the state folder.
pub const FILE: &str = "driver-record.json";

/// The driver that passed the GPU check last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverRecord {
    pub format: u32,
    pub driver: Version,
    /// The GPU it passed on (name, PCI device id, UUID: what the check knew).
    pub gpu: GpuId,
    pub os: Os,
    /// Linux: the kernel release it ran on (`uname -r`).
    pub kernel: Option<String>,
    /// Seconds since the Unix epoch.
    pub at: u64,
    /// Our driver step installed this driver.
    pub installed_by_us: bool,
    /// Which check passed: `doctor` or `smoke`.
    pub check: PassedCheck,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuId {
    pub name: Option<String>,
    pub pci_device_id: Option<String>,
    pub uuid: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassedCheck {
    Doctor,
    Smoke,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The date of `secs` in the computer's time zone (`2025-12-04`).
fn day(secs: u64) -> String {
    crate::units::local_time(secs)
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_string()
}

pub fn record_path(target: &Target) -> PathBuf {
    target.state_dir().join(FILE)
}

/// The record, read as every state file of ours: bounded, never through a link, judged
/// whole. A bad one (a link, not JSON, another format) is set aside and counts as none.
/// From this run's folder and, read-only, the other run's (`crate::records`: the
/// machine's when not elevated; the user's when elevated, only for [`Use::Report`]); the
/// newer wins. The folder it came from beside it.
pub fn read_for(target: &Target, use_: Use) -> Option<(DriverRecord, Origin)> {
    let found = match crate::records::read(target, FILE, use_) {
        Ok(f) => f,
        Err(r) => {
            tracing::warn!(error = %r, "driver record rejected");
            Vec::new()
        }
    };
    let valid =
        found
            .into_iter()
            .filter_map(|f| match serde_json::from_slice::<DriverRecord>(&f.bytes) {
                Ok(r) if r.format == 1 => Some((r, f.origin)),
                other => {
                    f.reject(format!("not a driver record: {other:?}"));
                    None
                }
            });
    crate::records::newest(valid, |(r, _)| r.at)
}

/// The record this run may act on ([`read_for`] with [`Use::Act`]).
pub fn read(target: &Target) -> Option<DriverRecord> {
    read_for(target, Use::Act).map(|(r, _)| r)
}

/// What a passing check knew of the driver and the GPU.
#[derive(Debug, Clone)]
pub struct Passed {
    pub driver: Version,
    pub gpu: GpuId,
    pub installed_by_us: bool,
    pub check: PassedCheck,
}

/// What [`record_pass`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Written,
    /// The record names a newer driver than the one that passed: it is kept, so the
    /// replacement stays a finding until our driver is back.
    KeptNewer,
}

/// Writes the record after a passing GPU check. A driver older than the record does not
/// overwrite it; the same driver keeps "installed by us" from the record.
pub fn record_pass(target: &Target, p: &Passed) -> std::io::Result<Recorded> {
    let old = read(target);
    if let Some(o) = &old
        && o.os == target.os
        && o.driver > p.driver
    {
        return Ok(Recorded::KeptNewer);
    }
    let ours = p.installed_by_us
        || old
            .as_ref()
            .is_some_and(|o| o.driver == p.driver && o.installed_by_us);
    let record = DriverRecord {
        format: 1,
        driver: p.driver.clone(),
        gpu: p.gpu.clone(),
        os: target.os,
        kernel: (target.os == Os::Linux)
            .then(|| linux::kernel(&host_of(target)))
            .flatten(),
        at: now(),
        installed_by_us: ours,
        check: p.check,
    };
    let bytes = serde_json::to_vec_pretty(&record).expect("serialisable");
    target.state()?.write_atomic(FILE, &bytes, true)?;
    tracing::info!(driver = %record.driver, check = ?record.check, "driver record written");
    Ok(Recorded::Written)
}

/// The host whose files describe the target (its root for a sandbox).
fn host_of(target: &Target) -> Host {
    match &target.root {
        None => target.host.clone(),
        Some(root) => Host::sandbox(target.os, root, Default::default()),
    }
}

/// What the machine shows beside detection: the record, and on Linux the kernel, the
/// module and the driver package (a few bounded reads; no child process).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    pub record: Option<DriverRecord>,
    /// The folder the record came from (`crate::records`): one from the user's folder,
    /// read by an elevated run, is only reported — no driver is installed on its word.
    #[serde(default)]
    pub origin: Option<Origin>,
    pub kernel: Option<String>,
    /// `/proc/driver/nvidia/version` exists: the kernel module is loaded.
    pub module_loaded: bool,
    /// A driver package is still installed (its DKMS or akmods sources, or nvidia-smi).
    pub package_installed: bool,
    /// A built NVIDIA module for `kernel` is under `/lib/modules/<kernel>`.
    pub module_for_kernel: bool,
    /// The distribution's rebuild commands for `kernel`.
    pub rebuild: Option<RebuildAdvice>,
    /// When this was observed (seconds since the epoch).
    pub at: u64,
}

/// Reads what [`judge`] needs.
pub fn observe(target: &Target) -> Observed {
    let (record, origin) = read_for(target, Use::Report).unzip();
    let mut o = Observed {
        record,
        origin,
        at: now(),
        ..Default::default()
    };
    if target.os == Os::Linux && o.record.is_some() {
        let host = host_of(target);
        o.kernel = linux::kernel(&host);
        o.module_loaded = linux::module_loaded(&host);
        o.package_installed = linux::package_installed(&host);
        if let Some(k) = &o.kernel {
            o.module_for_kernel = linux::module_for(&host, k);
            o.rebuild = crate::linux_driver::rebuild(&host, k);
        }
    }
    o
}

impl Observed {
    /// Whether a run may act on the record (plan its driver): not one from the user's
    /// folder read by an elevated run.
    pub fn acts(&self) -> bool {
        self.origin.is_none_or(Origin::acts)
    }
}

/// What changed since the driver passed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Drift {
    /// An older driver than the one that passed (Windows Update's classic).
    Older {
        os: Os,
        recorded: Version,
        found: Version,
        recorded_at: u64,
        found_at: u64,
        installed_by_us: bool,
    },
    /// Windows: no driver while the record says one passed.
    Gone {
        recorded: Version,
        recorded_at: u64,
        found_at: u64,
        /// Device Manager's problem code, when detection read one.
        code: Option<u32>,
    },
    /// Linux: the kernel changed, the module was not built for it (DKMS, akmods).
    NotRebuilt {
        recorded: Version,
        recorded_at: u64,
        old_kernel: String,
        kernel: String,
        rebuild: Option<RebuildAdvice>,
    },
}

/// Judges the detected `driver` (None: none loads) against the record. `code`: Device
/// Manager's problem code for the NVIDIA GPU, when there is one. A newer driver, or the
/// same, is no finding.
pub fn judge(os: Os, o: &Observed, driver: Option<&Version>, code: Option<u32>) -> Option<Drift> {
    let r = o.record.as_ref().filter(|r| r.os == os)?;
    match driver {
        Some(d) if *d < r.driver => Some(Drift::Older {
            os,
            recorded: r.driver.clone(),
            found: d.clone(),
            recorded_at: r.at,
            found_at: o.at,
            installed_by_us: r.installed_by_us,
        }),
        Some(_) => None,
        None => match os {
            Os::Windows => Some(Drift::Gone {
                recorded: r.driver.clone(),
                recorded_at: r.at,
                found_at: o.at,
                code,
            }),
            Os::Linux => {
                let (old, new) = (r.kernel.as_ref()?, o.kernel.as_ref()?);
                (old != new && !o.module_loaded && o.package_installed && !o.module_for_kernel)
                    .then(|| Drift::NotRebuilt {
                        recorded: r.driver.clone(),
                        recorded_at: r.at,
                        old_kernel: old.clone(),
                        kernel: new.clone(),
                        rebuild: o.rebuild.clone(),
                    })
            }
        },
    }
}

impl Drift {
    /// The finding's stable id (also its message key).
    pub fn id(&self) -> &'static str {
        match self {
            Drift::Older {
                os: Os::Windows, ..
            } => "driverwatch_replaced_windows",
            Drift::Older { .. } => "driverwatch_replaced_linux",
            Drift::Gone { code: Some(_), .. } => "driverwatch_gone_code",
            Drift::Gone { .. } => "driverwatch_gone",
            Drift::NotRebuilt { .. } => "driverwatch_not_rebuilt",
        }
    }

    /// What happened, in plain words.
    pub fn message(&self) -> Message {
        match self {
            Drift::Older {
                os,
                recorded,
                found,
                recorded_at,
                found_at,
                ..
            } => {
                let (found_on, recorded_on) = (day(*found_at), day(*recorded_at));
                if *os == Os::Windows {
                    msg!(
                        "driverwatch_replaced_windows",
                        recorded = recorded,
                        found = found,
                        found_on = found_on,
                        recorded_on = recorded_on
                    )
                } else {
                    msg!(
                        "driverwatch_replaced_linux",
                        recorded = recorded,
                        found = found,
                        found_on = found_on,
                        recorded_on = recorded_on
                    )
                }
            }
            Drift::Gone {
                recorded,
                recorded_at,
                found_at,
                code,
            } => {
                let (found_on, recorded_on) = (day(*found_at), day(*recorded_at));
                match code {
                    Some(c) => msg!(
                        "driverwatch_gone_code",
                        recorded = recorded,
                        recorded_on = recorded_on,
                        code = c,
                        found_on = found_on
                    ),
                    None => msg!(
                        "driverwatch_gone",
                        recorded = recorded,
                        recorded_on = recorded_on,
                        found_on = found_on
                    ),
                }
            }
            Drift::NotRebuilt {
                recorded,
                recorded_at,
                old_kernel,
                kernel,
                ..
            } => msg!(
                "driverwatch_not_rebuilt",
                kernel = kernel,
                old_kernel = old_kernel,
                recorded = recorded,
                recorded_on = day(*recorded_at)
            ),
        }
    }

    /// The driver to put back on Windows (the plan's driver step installs it).
    pub fn reinstall(&self) -> Option<&Version> {
        match self {
            Drift::Older {
                os: Os::Windows,
                recorded,
                ..
            }
            | Drift::Gone { recorded, .. } => Some(recorded),
            _ => None,
        }
    }

    /// What the user does where nothing of ours can: Linux's commands, in words.
    pub fn manual(&self) -> Option<Message> {
        match self {
            Drift::NotRebuilt {
                kernel, rebuild, ..
            } => Some(rebuild_how(kernel, rebuild.as_ref())),
            Drift::Older { os: Os::Linux, .. } => Some(msg!("repair_fix_driver")),
            _ => None,
        }
    }
}

/// Whether the finding `id` is one Windows' driver policy ([`policy`]) would prevent: the
/// front ends offer it there.
pub fn offers_policy(id: &str) -> bool {
    id == "driverwatch_replaced_windows"
}

/// What the user does about `drift` when seen outside repair (the doctor): Windows' is
/// `repair --fix`, which plans the driver step.
pub fn how(drift: &Drift) -> Message {
    match (drift.reinstall(), drift.manual()) {
        (Some(v), _) => msg!("driverwatch_fix_repair", version = v),
        (None, Some(m)) => m,
        (None, None) => msg!("repair_fix_driver"),
    }
}

fn rebuild_how(kernel: &str, a: Option<&RebuildAdvice>) -> Message {
    let distro = a
        .and_then(|a| a.distro.clone())
        .unwrap_or_else(|| "Linux".into());
    let Some(a) = a.filter(|a| !a.commands.is_empty()) else {
        return msg!(
            "driverwatch_fix_rebuild_unknown",
            distro = distro,
            kernel = kernel
        );
    };
    let commands = a.commands.join(" && ");
    let m = match (a.secure_boot, &a.mok_command) {
        (Some(true), Some(mok)) => {
            msg!(
                "driverwatch_fix_rebuild_secure_boot_command",
                commands = commands,
                command = mok
            )
        }
        (Some(true), None) => msg!("driverwatch_fix_rebuild_secure_boot", commands = commands),
        _ => msg!("driverwatch_fix_rebuild", commands = commands),
    };
    if a.confirmed {
        m
    } else {
        m.with(
            "unconfirmed",
            "the commands for this distribution are not confirmed",
        )
    }
}

/// After `doctor`: records the driver when its GPU check passed (torch ran on the GPU and
/// the check's result was right), then judges the machine against the record as it was.
/// `driver` is detection's; `installed_by_us`: the run before it installed the driver.
pub fn after_doctor(
    target: &Target,
    report: &crate::verify::doctor::DoctorReport,
    installed_by_us: bool,
) -> Option<Drift> {
    let drift = judge_doctor(target, report);
    let passed = report.status == crate::verify::Status::Passed
        && report.torch.as_ref().is_some_and(|t| t.cuda_available)
        && report.check.as_ref().is_some_and(|c| c.ok);
    if passed && let Some(d) = &report.driver {
        let p = Passed {
            driver: d.clone(),
            gpu: GpuId {
                name: report.gpus.first().map(|g| g.name.clone()),
                ..Default::default()
            },
            installed_by_us,
            check: PassedCheck::Doctor,
        };
        if let Err(e) = record_pass(target, &p) {
            tracing::warn!(error = %e, "driver record not written");
        }
    }
    drift
}

/// The doctor's detected driver judged against the record, nothing written (a what-if
/// driver is never recorded).
pub fn judge_doctor(
    target: &Target,
    report: &crate::verify::doctor::DoctorReport,
) -> Option<Drift> {
    judge(target.os, &observe(target), report.driver.as_ref(), None)
}

/// After the smoke test: records the driver it ran on when it passed.
pub fn after_smoke(target: &Target, report: &crate::verify::SmokeReport, installed_by_us: bool) {
    if report.outcome != crate::verify::SmokeOutcome::Passed {
        return;
    }
    let Some(driver) = crate::steps::driver::installed(target) else {
        return;
    };
    let p = Passed {
        driver,
        gpu: GpuId {
            name: report.device.as_ref().map(|d| d.name.clone()),
            ..Default::default()
        },
        installed_by_us,
        check: PassedCheck::Smoke,
    };
    if let Err(e) = record_pass(target, &p) {
        tracing::warn!(error = %e, "driver record not written");
    }
}

#[cfg(test)]
mod tests;
