//! The cuDNN layer: the cuDNN we installed, checked against its manifest.

use super::*;

pub(super) fn cudnn(i: &Input, out: &mut Vec<Finding>) {
    let os = i.target.os;
    for t in &i.report.toolkits {
        // A record of ours that is rejected is set aside by `verify` (which says why);
        // the user hears it here, since nothing tracks that cuDNN any more.
        let m = match crate::cudnn::txn::read_manifest(&t.path) {
            Ok(Some(m)) => Some(m),
            Ok(None) => continue,
            Err(_) => None,
        };
        let verified = crate::cudnn::verify_at(&t.path, i.depth);
        if let Err(crate::cudnn::CudnnError::BadState(r)) = &verified {
            out.push(finding(
                Layer::Cudnn,
                "repair_cudnn_record_rejected",
                Severity::Warning,
                msg!(
                    "repair_cudnn_record_rejected",
                    dir = show(&t.path),
                    file = show(&r.file),
                    why = &r.why,
                    moved = r.moved_to.as_deref().map_or_else(|| "-".into(), show)
                ),
                manual("repair_fix_cudnn_archive"),
            ));
            continue;
        }
        let Some(m) = m else { continue };
        if let Ok(r) = verified
            && !r.problems.is_empty()
        {
            // Missing and changed files, each in the sentence's own words (the archive
            // crate's `missing`/`altered` are its data, not text for the user).
            let (missing, altered): (Vec<_>, Vec<_>) =
                r.problems.iter().partition(|p| p.problem == "missing");
            let list = |ps: Vec<&crate::cudnn::Problem>| {
                ps.iter()
                    .map(|p| p.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let (missing, altered) = (list(missing), list(altered));
            let dir = show(&t.path);
            let message = match (missing.is_empty(), altered.is_empty()) {
                (false, true) => msg!("repair_cudnn_files_missing", dir = dir, missing = missing),
                (true, _) => msg!("repair_cudnn_files_altered", dir = dir, altered = altered),
                (false, false) => msg!(
                    "repair_cudnn_files_missing_altered",
                    dir = dir,
                    missing = missing,
                    altered = altered
                ),
            };
            let fix = match m.archive_path.as_ref().filter(|p| p.is_file()) {
                Some(a) => steps(vec![Step::InstallCudnn {
                    archive: a.clone(),
                    cuda_dir: t.path.clone(),
                }]),
                None => manual("repair_fix_cudnn_archive"),
            };
            out.push(finding(
                Layer::Cudnn,
                "repair_cudnn_damaged",
                Severity::Error,
                message,
                fix,
            ));
        }
        if let (Some(c), Some(v)) = (m.cuda_major, &t.version)
            && c != v.major()
        {
            out.push(finding(
                Layer::Cudnn,
                "repair_cudnn_cuda_major",
                Severity::Error,
                msg!(
                    "repair_cudnn_cuda_major",
                    cudnn = &m.cudnn_version,
                    cuda = c,
                    toolkit = v.major_minor()
                ),
                manual("repair_fix_cudnn_archive"),
            ));
        }
    }
    for c in &i.report.cudnn {
        if let (Some(v), Some(lib)) = (&c.version, c.library_major)
            && v.major() != lib
        {
            out.push(finding(
                Layer::Cudnn,
                "repair_cudnn_header_library",
                Severity::Warning,
                msg!(
                    "repair_cudnn_header_library",
                    dir = show(&c.location),
                    header = v,
                    library = lib
                ),
                manual("repair_fix_cudnn_archive"),
            ));
        }
        if os == Os::Windows && c.library_major == Some(8) {
            let here = c
                .libraries
                .first()
                .and_then(|l| l.parent())
                .is_some_and(|d| d.join("zlibwapi.dll").is_file());
            let on_path = i
                .path_list("PATH")
                .iter()
                .any(|d| Path::new(d.trim()).join("zlibwapi.dll").is_file());
            if !here && !on_path {
                out.push(finding(
                    Layer::Cudnn,
                    "repair_cudnn8_zlib",
                    Severity::Warning,
                    msg!("repair_cudnn8_zlib", dir = show(&c.location)),
                    manual("repair_fix_zlib"),
                ));
            }
        }
    }
}
