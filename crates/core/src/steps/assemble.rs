//! The wheels method's toolkit: assembled from component wheels (also fed as they
//! arrive), and repair's completion of such a tree in place.

use std::path::{Path, PathBuf};

use crate::msg;

use super::{Ctx, StepError, StepEvent, StepOutcome, toolkit_missing};

/// Completes a wheel-built tree in place ([`crate::devlayout::complete`]): what it added
/// is the outcome's detail; what it could not make is said in the log.
pub(super) fn complete_toolkit(dir: &Path, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    // Repair proposes this step only for a tree of ours; its record is marked complete
    // too, so the next install does not complete it again.
    let c = crate::wheels::assemble::complete_in_place(ctx.target.os, dir)
        .map_err(StepError::Wheels)?;
    // The management library's stub and import library are never made (no wheel has
    // them; docs/cli.md says so): only what should have been made is worth a line.
    use crate::devlayout::complete::{NVML_IMPORT_LIB, NVML_STUB};
    let not_made: Vec<&str> = c
        .no_stub
        .iter()
        .chain(&c.unreadable)
        .map(String::as_str)
        .filter(|f| *f != NVML_STUB && *f != NVML_IMPORT_LIB)
        .collect();
    if !not_made.is_empty() {
        (ctx.emit)(StepEvent::Log {
            line: msg!("step_toolkit_not_made", files = not_made.join(", ")),
        });
    }
    let added: Vec<&str> = c
        .links
        .iter()
        .chain(&c.import_libs)
        .chain(&c.stubs)
        .chain(&c.files)
        .map(String::as_str)
        .collect();
    Ok(StepOutcome {
        changed: !added.is_empty(),
        detail: if added.is_empty() {
            msg!("step_toolkit_complete_already", dir = dir.display())
        } else {
            msg!(
                "step_toolkit_completed",
                dir = dir.display(),
                count = added.len(),
                files = added.join(", ")
            )
        },
        reboot_required: false,
    })
}

pub(super) fn assemble_toolkit(
    spec: &crate::wheels::AssembleSpec,
    ctx: &Ctx,
) -> Result<StepOutcome, StepError> {
    assemble_toolkit_streamed(spec, ctx, None)
}

/// Wheels handed to the assembly one by one as their downloads are verified (the
/// pipelined install, `run`), and their bytes in all, for progress.
pub type WheelStream<'a> = (Box<dyn Iterator<Item = PathBuf> + 'a>, u64);

/// The assembly step; with `stream`, each wheel is unpacked as soon as it arrives while
/// the others still download (the tree is still swapped in only once it is whole).
/// Without, the wheels named in `spec` are all on disk.
pub fn assemble_toolkit_streamed(
    spec: &crate::wheels::AssembleSpec,
    ctx: &Ctx,
    stream: Option<WheelStream>,
) -> Result<StepOutcome, StepError> {
    let progress = |done: u64, total: u64| {
        (ctx.emit)(StepEvent::Progress {
            done,
            total: Some(total),
            bytes_per_sec: 0.0,
            eta_secs: None,
            source: None,
        })
    };
    // A usable toolkit: nvcc and the runtime where detection looks for them.
    let check = |dir: &Path| {
        let missing = toolkit_missing(ctx.target, dir, &spec.version);
        if missing.is_empty() {
            Ok(())
        } else {
            Err(crate::wheels::WheelError::Incomplete {
                missing,
                restored: false,
            })
        }
    };
    let cancelled = || ctx.cancel.is_cancelled();
    let o = match stream {
        None => crate::wheels::assemble(spec, ctx.target.os, &progress, &cancelled, &check),
        Some((wheels, total)) => {
            use crate::wheels::assemble::{Begin, Build};
            Build::begin(spec, ctx.target.os, &check).and_then(|b| match b {
                Begin::Done(o) => Ok(o),
                Begin::Build(b) => {
                    b.extract(wheels, total, &progress, &cancelled)?;
                    b.finish(&check)
                }
            })
        }
    }
    .map_err(|e| match e {
        _ if ctx.cancel.is_cancelled() => StepError::Cancelled,
        crate::wheels::WheelError::Incomplete { missing, restored } => StepError::Verify {
            detail: format!(
                "the wheels did not give {} (choose the nvcc and cudart components){}",
                missing.join(", "),
                if restored {
                    "; the previous toolkit was put back as it was"
                } else {
                    ""
                }
            ),
        },
        crate::wheels::WheelError::DiskFull { path, needed, free } => {
            StepError::DiskFull { path, needed, free }
        }
        e => StepError::Wheels(e),
    })?;
    // What the rebuild kept of the tree it replaced (issue 30: the user's files).
    let c = &o.carried;
    if !c.entries.is_empty() || c.cudnn_files > 0 {
        (ctx.emit)(StepEvent::Log {
            line: msg!(
                "step_assembled_carried",
                dir = spec.dir.display(),
                count = c.entries.len(),
                entries = keep_list(&c.entries),
                cudnn = c.cudnn_files
            ),
        });
    }
    if let Some(p) = &o.kept_previous {
        (ctx.emit)(StepEvent::Log {
            line: msg!(
                "step_assembled_kept_previous",
                dir = spec.dir.display(),
                previous = p.display()
            ),
        });
    }
    Ok(StepOutcome {
        changed: o.changed,
        detail: if let Some(m) = crate::wheels::assemble::completion_message(
            &o,
            &spec.version,
            spec.wheels.len(),
            &spec.dir,
        ) {
            // Built (or an older tree of ours completed) and what was added for
            // building programs, in plain words.
            m
        } else if o.changed {
            msg!(
                "step_assembled",
                version = &spec.version,
                wheels = spec.wheels.len(),
                dir = spec.dir.display(),
                files = o.files
            )
        } else if o.kept_foreign {
            msg!(
                "step_assembled_kept",
                version = spec.version.major_minor(),
                dir = spec.dir.display()
            )
        } else {
            msg!("step_assembled_same", version = &spec.version)
        },
        reboot_required: false,
    })
}

/// At most ten names of a list, and how many more: a message stays short.
fn keep_list(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(10)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 10 {
        s.push_str(&format!(" (+{})", names.len() - 10));
    }
    s
}
