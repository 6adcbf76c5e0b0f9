//! The last GPU check's outcome (#36): when the closing verdict of `install`, `repair`,
//! `smoke` or `doctor` (and the wizard's checks) judged the card, whether it works, and
//! its speed-up over the CPU. `<state>/last-check.json`, a state file (written
//! atomically, read bounded, never through a link); `state get` reports it, so a lab
//! admin sees each PC's last check in `fleet collect`'s table.

use serde::{Deserialize, Serialize};

use crate::records::Use;
use crate::target::Target;
use crate::verify::verdict::Verdict;

/// The file in this run's state folder.
pub const FILE: &str = "last-check.json";
const FORMAT: u32 = 1;

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastCheck {
    /// Unix seconds.
    pub at: u64,
    /// The card works for the goal it was checked for.
    pub works: bool,
    /// Times faster than the CPU, when measured.
    pub speedup: Option<f64>,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    format: u32,
    #[serde(flatten)]
    check: LastCheck,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What `verdict` says of the card; None while nothing was checked.
pub fn of(verdict: &Verdict, at: u64) -> Option<LastCheck> {
    match verdict {
        Verdict::Pending => None,
        Verdict::Ready { speedup, .. } => Some(LastCheck {
            at,
            works: true,
            speedup: speedup.filter(|s| s.is_finite()),
        }),
        Verdict::NotYet { .. } => Some(LastCheck {
            at,
            works: false,
            speedup: None,
        }),
    }
}

/// Records `verdict` (nothing when it checked nothing). A failure to write is logged:
/// the check itself is what the user asked for.
pub fn record(target: &Target, verdict: &Verdict) {
    let Some(check) = of(verdict, now()) else {
        return;
    };
    let bytes = serde_json::to_vec_pretty(&Stored {
        format: FORMAT,
        check,
    })
    .expect("serialisable");
    if let Err(e) = target
        .state()
        .and_then(|d| d.write_atomic(FILE, &bytes, true))
    {
        tracing::warn!(error = %e, "the last check is not recorded");
    }
}

/// The newest check recorded in this run's state folder or, read-only, the other run's
/// (`crate::records`; only reported). A bad copy is passed over (ours set aside).
pub fn read(target: &Target) -> Option<LastCheck> {
    let found = crate::records::read(target, FILE, Use::Report).ok()?;
    let checks =
        found
            .into_iter()
            .filter_map(|f| match serde_json::from_slice::<Stored>(&f.bytes) {
                Ok(s) if s.format == FORMAT => Some(s.check),
                Ok(_) => {
                    f.reject("an unknown format");
                    None
                }
                Err(e) => {
                    f.reject(e.to_string());
                    None
                }
            });
    crate::records::newest(checks, |c| c.at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Os;

    #[test]
    fn a_verdict_is_recorded_and_read_back_pending_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Linux, dir.path());
        record(&t, &Verdict::Pending);
        assert_eq!(read(&t), None);
        let c = of(&Verdict::Pending, 5);
        assert_eq!(c, None);
        let bytes = serde_json::to_vec(&Stored {
            format: FORMAT,
            check: LastCheck {
                at: 7,
                works: true,
                speedup: Some(23.4),
            },
        })
        .unwrap();
        std::fs::create_dir_all(t.state_dir()).unwrap();
        std::fs::write(t.state_dir().join(FILE), bytes).unwrap();
        assert_eq!(
            read(&t),
            Some(LastCheck {
                at: 7,
                works: true,
                speedup: Some(23.4)
            })
        );
        // Another format is not read as this one.
        std::fs::write(
            t.state_dir().join(FILE),
            br#"{"format":2,"at":1,"works":true}"#,
        )
        .unwrap();
        assert_eq!(read(&t), None);
    }
}
