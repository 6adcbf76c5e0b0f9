//! What earlier downloads learnt about each source host: its speed and when it was
//! measured (`<state>/sources.json`). Recent speeds order the next download's sources
//! without a probe; old ones are ignored. The file is input like any state file: read
//! bounded and never through a link (`state_file::read`); a damaged one is ignored and
//! replaced; written whole (`state_file::write`: a temporary file, then a rename).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Measured, Measurement};

/// Speeds younger than this order the sources at once.
pub(super) const FRESH: Duration = Duration::from_secs(24 * 3600);
/// Hosts kept (the least recently measured go first): the file stays small.
const MAX_HOSTS: usize = 64;

#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Memory {
    hosts: BTreeMap<String, Record>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Record {
    bytes_per_sec: u64,
    /// Unix seconds.
    at: u64,
}

pub(super) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Memory {
    /// The file's speeds; nothing when there is none, it is not a plain file (a link), it
    /// is too big or it does not parse.
    pub(super) fn load(path: &Path) -> Memory {
        match crate::state_file::read(path) {
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::info!(file = %path.display(), error = %e, "sources: memory ignored");
                Memory::default()
            }),
            Ok(None) => Memory::default(),
            Err(e) => {
                tracing::info!(error = %e, "sources: memory ignored");
                Memory::default()
            }
        }
    }

    /// `host`'s speed and its age in seconds, when measured within [`FRESH`] (a time in
    /// the future is not believed).
    pub(super) fn fresh(&self, host: &str, now: u64) -> Option<(u64, u64)> {
        let r = self.hosts.get(host)?;
        let age = now.checked_sub(r.at)?;
        (age < FRESH.as_secs() && r.bytes_per_sec > 0).then_some((r.bytes_per_sec, age))
    }

    pub(super) fn note(&mut self, host: &str, bytes_per_sec: u64, now: u64) {
        if bytes_per_sec == 0 || host.is_empty() {
            return;
        }
        self.hosts.insert(
            host.to_string(),
            Record {
                bytes_per_sec,
                at: now,
            },
        );
        while self.hosts.len() > MAX_HOSTS {
            let oldest = self
                .hosts
                .iter()
                .min_by_key(|(_, r)| r.at)
                .map(|(h, _)| h.clone());
            match oldest {
                Some(h) => self.hosts.remove(&h),
                None => break,
            };
        }
    }

    fn save(&self, path: &Path) {
        let bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        if let Err(e) = crate::state_file::write(path, &bytes) {
            tracing::info!(file = %path.display(), error = %e, "sources: memory not written");
        }
    }
}

/// Adds `speeds` (host, bytes/s) to the file at `path`, read again just before, so a
/// download running beside this one loses little.
pub(super) fn remember(path: &Path, speeds: &[(String, u64)]) {
    if speeds.is_empty() {
        return;
    }
    let mut m = Memory::load(path);
    let now = now();
    for (host, rate) in speeds {
        m.note(host, *rate, now);
    }
    m.save(path);
}

/// The line that says what was measured: the speeds, fastest first, and the source
/// tried first. None when nothing was measured.
pub(super) fn measured_line(
    results: &[Measurement],
    pinned: bool,
) -> Option<crate::message::Message> {
    let speeds: Vec<String> = results
        .iter()
        .filter_map(|m| {
            m.result
                .rate()
                .map(|r| format!("{} {}", m.host, crate::units::rate(r as f64)))
        })
        .collect();
    let first = results.first()?;
    if speeds.is_empty() {
        return None;
    }
    let failed: Vec<&str> = results
        .iter()
        .filter(|m| matches!(m.result, Measured::Failed { .. }))
        .map(|m| m.host.as_str())
        .collect();
    let remembered = results
        .iter()
        .any(|m| matches!(m.result, Measured::Remembered { .. }));
    let key = match (pinned, remembered, failed.is_empty()) {
        (_, true, _) => "download_measured_remembered",
        (true, false, true) => "download_measured_pinned",
        (true, false, false) => "download_measured_pinned_unanswered",
        (false, false, true) => "download_measured",
        (false, false, false) => "download_measured_unanswered",
    };
    Some(
        crate::message::Message::new(key)
            .with("speeds", speeds.join(", "))
            .with("first", &first.host)
            .with("hosts", failed.join(", ")),
    )
}
