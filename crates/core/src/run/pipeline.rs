//! The wheels install as a pipeline. A plan made by `plan::build` for the wheels method
//! has one download step per toolkit wheel, the assembly, then the cuDNN wheel's
//! download. Run one after another, the assembly waits for the last download; here the
//! downloads run in plan order on this thread while the assembly, on its own thread,
//! unpacks each wheel into its staging folder as soon as that wheel's download is
//! verified, and the cuDNN wheel downloads while the tree is still being unpacked. The
//! cuDNN install that follows starts once its wheel is verified: it checks and extracts
//! the wheel beside the toolkit's folder while the tree is still unpacked
//! ([`crate::cudnn::stage`]), waits for the toolkit to be in place, then moves its files
//! in with cuDNN's own transaction ([`crate::cudnn::install_prestaged`]); the assembly
//! failing, it deletes what it staged and does not run. A cuDNN refused does not stop the
//! assembly: the toolkit goes in, and the run fails with the refusal.
//!
//! Nothing about a step changes for the rest of the run: each keeps its own events
//! (progress per wheel), its report entry and its place in the journal, so a plan or
//! journal written before this parses and resumes the same way. The tree is still
//! swapped in only once every wheel is in it ([`crate::wheels::assemble::Build::finish`]
//! refuses otherwise); a download that fails stops the assembly, whose staging folder
//! goes, so the destination is as it was. A kill leaves the staging folder, which the
//! next run's recovery deletes before it unpacks again.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::time::Duration;

use super::{Feed, Flow, RunReport, Runner, StepStatus};
use crate::download::Cancel;
use crate::plan::Plan;
use crate::steps::{self, Step};

/// Steps that run as one pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Group {
    /// The toolkit wheels' downloads, in plan order, with the file each leaves.
    downloads: Vec<(usize, PathBuf)>,
    assemble: usize,
    /// The download right after the assembly (the cuDNN wheel), fetched while the tree
    /// is unpacked.
    after: Option<usize>,
    /// The install of that download into the assembled toolkit, staged while the tree is
    /// still unpacked and applied once it is in place.
    install: Option<usize>,
}

impl Group {
    /// The first step after the group.
    pub(super) fn end(&self) -> usize {
        self.install.or(self.after).unwrap_or(self.assemble) + 1
    }
}

/// The pipeline that starts at step `start`, if one does: toolkit wheel downloads right
/// before an assembly (not yet done) of exactly the files they leave, in that order.
/// Anything else — another plan's shape, a hand-edited `--plan` — runs step by step.
pub(super) fn group(plan: &Plan, start: usize, done: &[usize]) -> Option<Group> {
    let mut downloads = Vec::new();
    let mut k = start;
    while let Some(Step::Download(d)) = plan.steps.get(k)
        && d.what == steps::Artifact::ToolkitWheel
    {
        downloads.push((k, d.dest.clone()));
        k += 1;
    }
    let Some(Step::AssembleToolkit(spec)) = plan.steps.get(k) else {
        return None;
    };
    let fed: Vec<&PathBuf> = downloads.iter().map(|(_, p)| p).collect();
    if downloads.is_empty() || done.contains(&k) || spec.wheels.iter().collect::<Vec<_>>() != fed {
        return None;
    }
    let after = match plan.steps.get(k + 1) {
        Some(Step::Download(d)) if !d.what.may_lack_hash() => Some(k + 1),
        _ => None,
    };
    let install = after.and_then(|a| match (&plan.steps[a], plan.steps.get(a + 1)) {
        (Step::Download(d), Some(Step::InstallCudnn { archive, cuda_dir }))
            if *archive == d.dest
                && *cuda_dir == spec.dir
                && !done.contains(&(a + 1))
                // Ours already, from this archive: the step's own check will most likely
                // find nothing to do, so nothing is extracted ahead (it runs after).
                && !crate::cudnn::installed_from(cuda_dir, archive) =>
        {
            Some(a + 1)
        }
        _ => None,
    });
    Some(Group {
        downloads,
        assemble: k,
        after,
        install,
    })
}

/// Runs `group`: see the module's words. Returns whether the run goes on after it.
pub(super) fn run(
    runner: &Runner,
    group: &Group,
    cancel: &Cancel,
    report: &mut RunReport,
    done: &mut Vec<usize>,
) -> Flow {
    let plan = runner.plan;
    // What the pipeline's steps poll: the user's cancel, or the pipeline stopping (a
    // failed download stops the assembly; a failed assembly stops the downloads).
    let inner = Cancel::default();
    let assembly_failed = AtomicBool::new(false);
    let over = AtomicBool::new(false);
    let total: u64 = group
        .downloads
        .iter()
        .map(|(i, dest)| match &plan.steps[*i] {
            Step::Download(d) => d
                .size
                .or_else(|| std::fs::metadata(dest).ok().map(|m| m.len()))
                .unwrap_or(0),
            _ => 0,
        })
        .sum();
    let mut flow = Flow::Next;
    // Whether the assembly put the toolkit in place, for the cuDNN install waiting on it.
    let (toolkit_tx, toolkit_rx) = channel::<bool>();
    let toolkit_rx = Mutex::new(toolkit_rx);
    let ready = || {
        let rx = toolkit_rx.lock().unwrap_or_else(|p| p.into_inner());
        rx.recv().unwrap_or(false)
    };
    let ready: &(dyn Fn() -> bool + Sync) = &ready;
    std::thread::scope(|s| {
        let (wheels, arrived) = channel::<PathBuf>();
        s.spawn(|| {
            while !over.load(Ordering::SeqCst) {
                if cancel.is_cancelled() {
                    inner.cancel();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let (inner, assembly_failed) = (&inner, &assembly_failed);
        let assembly = s.spawn(move || {
            // Started with the first verified wheel, so the steps are shown in the order
            // they begin; none (a first download failed): never started.
            let first = arrived.recv().ok()?;
            let stream = std::iter::once(first).chain(arrived);
            let r = runner.run_step(
                group.assemble,
                inner,
                Feed::Wheels((Box::new(stream), total)),
            );
            // A cancel (the user's, or the downloads stopping) is no failure of its own.
            if r.0
                .as_ref()
                .is_err_and(|e| !matches!(e, steps::StepError::Cancelled))
            {
                assembly_failed.store(true, Ordering::SeqCst);
                inner.cancel();
            }
            Some(r)
        });
        let mut stopped = false;
        let mut fed = 0;
        // The cuDNN install, started once its archive is verified (see `Group::install`).
        let mut cudnn = None;
        let mut start_cudnn = |index: usize| {
            if Some(index) == group.after
                && let Some(i) = group.install
            {
                cudnn = Some(s.spawn(move || runner.run_step(i, inner, Feed::ToolkitReady(ready))));
            }
        };
        let toolkit = group.downloads.iter().map(|(i, p)| (*i, Some(p)));
        let cudnn_wheel = group.after.map(|i| (i, None));
        // With its install staged ahead, the cuDNN wheel (the largest) is fetched first:
        // its extraction then runs while the toolkit's wheels download and unpack, not
        // after the last of them.
        let order: Vec<(usize, Option<&PathBuf>)> = if group.install.is_some() {
            cudnn_wheel.into_iter().chain(toolkit).collect()
        } else {
            toolkit.chain(cudnn_wheel).collect()
        };
        for (index, wheel) in order {
            if done.contains(&index) {
                runner.done_before(report, index);
                if let Some(p) = wheel {
                    let _ = wheels.send(p.clone());
                    fed += 1;
                }
                start_cudnn(index);
                continue;
            }
            if assembly_failed.load(Ordering::SeqCst) {
                stopped = true;
                break;
            }
            if cancel.is_cancelled() {
                report.cancelled = true;
                report.steps[index].status = StepStatus::Cancelled;
                stopped = true;
                break;
            }
            let (result, ms) = runner.run_step(index, inner, Feed::None);
            // Stopped because the assembly failed: not this step's doing, and not run.
            if assembly_failed.load(Ordering::SeqCst)
                && matches!(result, Err(steps::StepError::Cancelled))
                && !cancel.is_cancelled()
            {
                stopped = true;
                break;
            }
            let ok = result.is_ok();
            if runner.record(report, done, index, result, ms) == Flow::Stop {
                flow = Flow::Stop;
                // The cuDNN wheel, fetched first, failed: the toolkit still goes in (as
                // when it is fetched last), and the run stops after it.
                if wheel.is_none() && !cancel.is_cancelled() {
                    continue;
                }
                stopped = true;
                break;
            }
            if ok && let Some(p) = wheel {
                let _ = wheels.send(p.clone());
                fed += 1;
            }
            if ok {
                start_cudnn(index);
            }
        }
        // Stopped before every wheel arrived: the assembly stops too, before the channel
        // closes (the tree is never finished without them). With every wheel in it (the
        // cuDNN download failed), it finishes: the next run need not unpack it again.
        if stopped && fed < group.downloads.len() {
            inner.cancel();
        }
        drop(wheels);
        let result = assembly.join();
        let i = group.assemble;
        match result {
            Ok(None) => {}
            // A download failed or was cancelled: the assembly stopped with it, its
            // staging folder gone; the download's failure is the run's.
            Ok(Some((Err(steps::StepError::Cancelled), ms)))
                if stopped && !cancel.is_cancelled() =>
            {
                report.steps[i].status = StepStatus::Cancelled;
                report.steps[i].elapsed_ms = ms;
                runner.log.line(&format!(
                    "step {i} {}: stopped with the downloads",
                    plan.steps[i].kind()
                ));
            }
            Ok(Some((r, ms))) => {
                if report.failure.is_none() || r.is_ok() {
                    if runner.record(report, done, i, r, ms) == Flow::Stop {
                        flow = Flow::Stop;
                    }
                } else {
                    report.steps[i].status = StepStatus::Failed;
                    report.steps[i].elapsed_ms = ms;
                }
            }
            Err(_) => {
                // `run_step` catches the step's panics; this is the thread's own.
                report.steps[i].status = StepStatus::Failed;
                report.failure.get_or_insert(super::Failure::internal(
                    "the toolkit assembly's worker stopped without a result",
                ));
                flow = Flow::Stop;
            }
        }
        // The toolkit is in place (or will not be): the cuDNN install applies what it
        // staged, or stops and deletes it.
        let placed = report.steps[i].status == StepStatus::Done;
        let _ = toolkit_tx.send(placed && !cancel.is_cancelled());
        if let (Some(t), Some(c)) = (cudnn, group.install) {
            match t.join() {
                Ok((Err(steps::StepError::Cancelled), ms)) if !placed && !cancel.is_cancelled() => {
                    report.steps[c].status = StepStatus::Cancelled;
                    report.steps[c].elapsed_ms = ms;
                    runner.log.line(&format!(
                        "step {c} {}: stopped with the toolkit assembly",
                        plan.steps[c].kind()
                    ));
                }
                // Its own failure (a refused archive) is the run's unless the assembly's
                // came first.
                Ok((r, ms)) => {
                    if report.failure.is_none() || r.is_ok() {
                        if runner.record(report, done, c, r, ms) == Flow::Stop {
                            flow = Flow::Stop;
                        }
                    } else {
                        report.steps[c].status = StepStatus::Failed;
                        report.steps[c].elapsed_ms = ms;
                    }
                }
                Err(_) => {
                    report.steps[c].status = StepStatus::Failed;
                    report.failure.get_or_insert(super::Failure::internal(
                        "the cuDNN install's worker stopped without a result",
                    ));
                    flow = Flow::Stop;
                }
            }
        }
        over.store(true, Ordering::SeqCst);
        if stopped {
            flow = Flow::Stop;
        }
    });
    flow
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Os;
    use crate::steps::DownloadSpec;
    use crate::target::Target;
    use std::path::Path;

    fn download(dir: &Path, what: steps::Artifact, file: &str) -> Step {
        Step::Download(DownloadSpec {
            what,
            url: format!("https://pypi.org/{file}"),
            mirrors: vec![],
            sha256: Some("ab".repeat(32)),
            md5: None,
            size: Some(10),
            dest: dir.join(file),
            bundle_dirs: vec![],
            cache_dir: None,
            connections: 1,
        })
    }

    fn plan(target: &Target, steps: Vec<Step>) -> Plan {
        Plan {
            format: 1,
            goal: crate::recommend::Goal::Developer,
            os: target.os,
            root: target.root.clone(),
            toolkit: None,
            cudnn: None,
            torch_command: None,
            notes: vec![],
            steps,
        }
    }

    /// The plan's own shape (wheel downloads, the assembly of exactly those files, the
    /// cuDNN download) is one pipeline; any other shape, or an assembly an interrupted
    /// run finished, runs step by step as before.
    #[test]
    fn only_the_wheels_plan_shape_is_pipelined() {
        let root = tempfile::tempdir().unwrap();
        let target = Target::rooted(Os::Linux, root.path());
        let dl = target.downloads_dir();
        let assemble = |files: &[&str]| {
            Step::AssembleToolkit(crate::wheels::AssembleSpec {
                version: "13.5.0".parse().unwrap(),
                wheels: files.iter().map(|f| dl.join(f)).collect(),
                dir: root.path().join("usr/local/cuda-13.5"),
            })
        };
        let steps = vec![
            Step::SetEnv {
                name: "X".into(),
                value: None,
            },
            download(&dl, steps::Artifact::ToolkitWheel, "a.whl"),
            download(&dl, steps::Artifact::ToolkitWheel, "b.whl"),
            assemble(&["a.whl", "b.whl"]),
            download(&dl, steps::Artifact::CudnnArchive, "c.whl"),
        ];
        let p = plan(&target, steps.clone());
        assert_eq!(group(&p, 0, &[]), None, "not a download");
        let g = group(&p, 1, &[]).expect("the wheels' shape");
        assert_eq!(
            g.downloads.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!((g.assemble, g.after, g.end()), (3, Some(4), 5));
        // Downloads done before still feed the assembly; a done assembly is not redone.
        assert!(group(&p, 1, &[1, 2]).is_some());
        assert_eq!(group(&p, 1, &[3]), None);
        // An assembly of other files (a hand-edited plan): step by step.
        let mut other = steps.clone();
        other[3] = assemble(&["b.whl", "a.whl"]);
        assert_eq!(group(&plan(&target, other), 1, &[]), None);
        // No cuDNN download after it: the group ends with the assembly.
        let g = group(&plan(&target, steps[..4].to_vec()), 1, &[]).unwrap();
        assert_eq!((g.after, g.end()), (None, 4));
        // The install of that download into the assembled toolkit joins the group (it is
        // staged while the tree is unpacked) — not one into another folder, not one an
        // interrupted run finished, not one whose cuDNN is ours already.
        let toolkit = root.path().join("usr/local/cuda-13.5");
        let install = |archive: &str, dir: &Path| Step::InstallCudnn {
            archive: dl.join(archive),
            cuda_dir: dir.to_path_buf(),
        };
        let mut with = steps.clone();
        with.push(install("c.whl", &toolkit));
        let g = group(&plan(&target, with.clone()), 1, &[]).unwrap();
        assert_eq!((g.after, g.install, g.end()), (Some(4), Some(5), 6));
        assert_eq!(
            group(&plan(&target, with.clone()), 1, &[5]).unwrap().end(),
            5
        );
        let mut elsewhere = steps.clone();
        elsewhere.push(install("c.whl", &root.path().join("other")));
        assert_eq!(
            group(&plan(&target, elsewhere), 1, &[]).unwrap().install,
            None
        );
        let meta = toolkit.join(".cuda-setup");
        std::fs::create_dir_all(&meta).unwrap();
        std::fs::write(
            meta.join("cudnn-manifest.json"),
            r#"{"format":1,"cudnn_version":"9.27.0","cuda_major":13,"toolkit_version":"13.5.0","archive":"c.whl","files":[]}"#,
        )
        .unwrap();
        assert_eq!(group(&plan(&target, with), 1, &[]).unwrap().install, None);
    }
}
