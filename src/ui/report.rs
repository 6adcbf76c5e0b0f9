//! What the Done page saves and copies: a JSON report of everything the wizard found and
//! did, and a plain-text summary to paste into a forum post.

use std::fmt::Write as _;

use cuda_setup_core::verify::Status;

use super::session::Session;
use super::text::{msg, t};

/// Everything, as JSON (the CLI's own structures).
pub fn json(session: &Session) -> String {
    let rec = session.recommendation();
    let prepared = session.prepare().plan();
    let cudnn = match session.cudnn().installed() {
        Some(Ok(m)) => Some(m.as_ref()),
        _ => None,
    };
    let v = serde_json::json!({
        "format": 1,
        "created_by": format!("cuda-setup {}", env!("CARGO_PKG_VERSION")),
        "goal": session.goal,
        "system": session.system().report(),
        "recommendation": rec,
        "plan": prepared,
        "install": session.install().run().report(),
        "cudnn": cudnn,
        "smoke": session.verify().report(),
        "pip": session.torch().run().report(),
        "doctor": session.torch().doctor(),
        "repair": session.repair().findings(),
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// A message for a forum post: the sentence, then the raw text behind it (what helpers
/// search for).
fn with_details(
    lang: cuda_setup_core::i18n::Lang,
    m: &cuda_setup_core::message::Message,
) -> String {
    match cuda_setup_core::i18n::details(m, lang) {
        Some(d) => format!("{} [{d}]", msg(lang, m)),
        None => msg(lang, m),
    }
}

fn status_word(session: &Session, s: Status) -> String {
    t(
        session.lang,
        match s {
            Status::Passed => "ui_passed",
            Status::Skipped => "ui_skipped",
            Status::Failed => "ui_failed",
        },
    )
}

/// A short text for a forum post: the machine, what was recommended, what happened.
pub fn diagnostics(session: &Session) -> String {
    let lang = session.lang;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} (cuda-setup {})",
        t(lang, "ui_diag_title"),
        env!("CARGO_PKG_VERSION")
    );
    if let Some(r) = session.system().report() {
        if let Some(sys) = &r.system {
            let _ = writeln!(
                s,
                "{}: {} {} ({}), {}, {} {}",
                t(lang, "ui_os"),
                sys.os_name,
                sys.os_version,
                sys.arch,
                super::text::tf(
                    lang,
                    "ui_cpu_cores",
                    &[("cpu", &sys.cpu), ("cores", &sys.cpu_cores)]
                ),
                t(lang, "ui_memory"),
                super::text::bytes(sys.ram_total_bytes)
            );
        }
        for g in &r.gpus {
            let _ = writeln!(
                s,
                "{}: {} {} {}{}",
                t(lang, "ui_gpus"),
                g.name,
                g.compute_capability.map(|c| c.sm()).unwrap_or_default(),
                g.architecture.clone().unwrap_or_default(),
                g.problem
                    .as_ref()
                    .map(|p| {
                        // The sentence names the Device Manager code where there is one.
                        let m = cuda_setup_core::message::Message::new(p.key.message_key())
                            .with("gpu", &g.name)
                            .with("code", p.code.unwrap_or_default());
                        format!(" [{}]", msg(lang, &m))
                    })
                    .unwrap_or_default()
            );
        }
        match &r.driver {
            Some(d) => {
                let _ = writeln!(
                    s,
                    "{}: {} (CUDA {})",
                    t(lang, "ui_driver"),
                    d.version,
                    d.cuda_version
                        .as_ref()
                        .map_or("?".into(), ToString::to_string)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "{}: {} ({})",
                    t(lang, "ui_driver"),
                    t(lang, "ui_no_driver"),
                    r.driver_error
                        .as_ref()
                        .map_or(String::new(), ToString::to_string)
                );
            }
        }
        for tk in &r.toolkits {
            let _ = writeln!(
                s,
                "{}: {} {}{}",
                t(lang, "ui_toolkit"),
                tk.version.as_ref().map_or("?".into(), ToString::to_string),
                tk.path.display(),
                if tk.active {
                    format!(" ({})", t(lang, "ui_on_path"))
                } else {
                    String::new()
                }
            );
        }
        for c in &r.cudnn {
            let _ = writeln!(
                s,
                "cuDNN: {} at {}",
                c.version.as_ref().map_or("?".into(), ToString::to_string),
                c.location.display()
            );
        }
        for p in &r.pythons {
            let torch = match &p.torch {
                Some(tch) => format!(
                    ", torch {} (CUDA {}, available: {})",
                    tch.version,
                    tch.cuda.as_deref().unwrap_or("-"),
                    tch.cuda_available
                ),
                None => String::new(),
            };
            let _ = writeln!(
                s,
                "Python: {} at {}{torch}",
                p.version.as_ref().map_or("?".into(), ToString::to_string),
                p.path.display()
            );
        }
    }
    if session.opts.overrides.any() {
        let _ = writeln!(s, "({})", t(lang, "ui_diag_given"));
    }
    if let Some(rec) = session.recommendation() {
        let mut picks = Vec::new();
        if let Some(tk) = &rec.toolkit {
            picks.push(format!("CUDA {}", tk.version));
        }
        if let Some(c) = &rec.cudnn {
            picks.push(format!("cuDNN {}", c.version));
        }
        if let Some(p) = &rec.torch {
            picks.push(format!("torch {} ({})", p.version, p.variant));
        }
        let _ = writeln!(
            s,
            "{}: {}: {}",
            t(lang, "ui_recommended"),
            t(
                lang,
                match rec.goal {
                    cuda_setup_core::recommend::Goal::Pytorch => "ui_goal_pytorch",
                    cuda_setup_core::recommend::Goal::Developer => "ui_goal_developer",
                }
            ),
            picks.join(", ")
        );
        for b in &rec.blockers {
            let _ = writeln!(s, "  ! {}", msg(lang, b));
        }
    }
    if let Some(r) = &session.install().run().report() {
        let outcome = match &r.failure {
            Some(f) => format!("{} {}: {}", t(lang, "ui_failed"), f.step_name(), f.error),
            None if r.cancelled => t(lang, "ui_state_cancelled"),
            None => t(lang, "ui_state_done"),
        };
        let _ = writeln!(s, "{}: {outcome}", t(lang, "ui_page_install"));
        if let Some(l) = &r.log_file {
            let _ = writeln!(s, "  {}: {}", t(lang, "ui_live_log"), l.display());
        }
    }
    if let Some(Ok(m)) = &session.cudnn().installed() {
        let _ = writeln!(s, "cuDNN: {} ({} files)", m.cudnn_version, m.files.len());
    }
    if let Some(r) = session.verify().report() {
        let _ = writeln!(
            s,
            "{}: {}",
            t(lang, "ui_page_verify"),
            status_word(session, r.status)
        );
        if let Some(m) = &r.reason {
            let _ = writeln!(s, "  {}", with_details(lang, m));
        }
        for g in &r.checks.gemm.detail.results {
            let _ = writeln!(
                s,
                "  GEMM {} {}: {:.0} GFLOP/s",
                g.precision.name(),
                g.size,
                g.gflops
            );
        }
    }
    if let Some(f) = session.repair().findings() {
        for x in f {
            let _ = writeln!(
                s,
                "{}: [{}] {}",
                t(lang, "ui_page_repair"),
                t(
                    lang,
                    match x.severity {
                        cuda_setup_core::repair::Severity::Error => "ui_problem",
                        cuda_setup_core::repair::Severity::Warning => "ui_warn",
                        cuda_setup_core::repair::Severity::Info => "ui_ok",
                    }
                ),
                with_details(lang, &x.message)
            );
        }
    }
    if let Some(d) = session.torch().doctor() {
        let _ = writeln!(
            s,
            "{}: {}",
            t(lang, "ui_doctor"),
            status_word(session, d.status)
        );
        for f in &d.findings {
            let _ = writeln!(s, "  - {}", with_details(lang, &f.message));
        }
        for f in d.packages.iter().flat_map(|p| &p.findings) {
            let _ = writeln!(s, "  - {}", with_details(lang, &f.message));
        }
    }
    s
}
