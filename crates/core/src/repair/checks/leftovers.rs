//! What an interrupted run left: its journal, a wheels staging folder.

use super::*;

pub(super) fn interrupted(i: &Input, out: &mut Vec<Finding>) {
    for t in &i.report.toolkits {
        if crate::cudnn::txn::meta(&t.path)
            .join("cudnn-journal.json")
            .is_file()
        {
            out.push(finding(
                Layer::Cudnn,
                "repair_cudnn_interrupted",
                Severity::Error,
                msg!("repair_cudnn_interrupted", dir = show(&t.path)),
                steps(vec![Step::RecoverCudnn {
                    cuda_dir: t.path.clone(),
                }]),
            ));
        }
    }
    wheels_leftovers(i, out);
    match crate::run::check_interrupted(i.target) {
        Ok(Some(_)) => out.push(finding(
            Layer::Toolkit,
            "repair_install_interrupted",
            Severity::Error,
            msg!("repair_install_interrupted"),
            Fix::ResumeInstall,
        )),
        Ok(None) => {}
        Err(r) => out.push(finding(
            Layer::Toolkit,
            "repair_install_journal_rejected",
            Severity::Warning,
            msg!(
                "repair_install_journal_rejected",
                file = show(&r.file),
                why = &r.why,
                moved = r.moved_to.as_deref().map_or_else(|| "-".into(), show)
            ),
            manual("repair_fix_rerun_install"),
        )),
    }
}

/// Copies a killed wheels build left beside a toolkit folder (`.D.staging-*`, `.D.old-*`,
/// each a full toolkit): in the folders toolkits go to and beside every toolkit found.
pub(super) fn wheels_leftovers(i: &Input, out: &mut Vec<Finding>) {
    // The folders `existing` looks in (the user's own too, even when elevated), and
    // beside every toolkit detection found.
    let mut parents: Vec<PathBuf> = crate::repair::existing::parents(i.target)
        .into_iter()
        .map(|(p, _)| p)
        .chain(
            i.report
                .toolkits
                .iter()
                .filter_map(|t| t.path.parent().map(Path::to_path_buf)),
        )
        .collect();
    parents.sort();
    parents.dedup();
    let mut by_dest: BTreeMap<PathBuf, Vec<crate::wheels::swap::Leftover>> = BTreeMap::new();
    for p in &parents {
        for l in crate::wheels::swap::scan(p) {
            by_dest.entry(l.dest.clone()).or_default().push(l);
        }
    }
    for (dest, found) in by_dest {
        let missing = std::fs::symlink_metadata(&dest).is_err();
        let restorable = found
            .iter()
            .any(|l| l.kind == crate::wheels::swap::Kind::Old);
        let names: Vec<String> = found.iter().map(|l| show(&l.path)).collect();
        out.push(finding(
            Layer::Toolkit,
            "repair_wheels_leftover",
            if missing && restorable {
                Severity::Error
            } else {
                Severity::Warning
            },
            msg!(
                "repair_wheels_leftover",
                dir = show(&dest),
                leftovers = names.join(", ")
            ),
            steps(vec![Step::RecoverToolkit { dir: dest }]),
        ));
    }
}
