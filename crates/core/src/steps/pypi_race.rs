//! "Automatic (fastest measured)" for the PyPI index (#34): the listed indexes (pypi.org,
//! Tsinghua, Aliyun, USTC) are asked for one small project page at once, and the first
//! that answers with a valid page is used. A user's named mirror or address is never
//! second-guessed: this runs only for the automatic choice.

use std::str::FromStr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::message::Message;
use crate::verify::doctor::PypiMirror;

/// The whole race: an index that has not answered by then has lost.
pub const BUDGET: Duration = Duration::from_secs(6);

/// The project page asked of each index: small, and on every mirror.
const PROBE_PROJECT: &str = "pip";

/// One index in the race: its name (`pypi`, `tsinghua`, `aliyun`, `ustc`) and address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub url: String,
}

impl Candidate {
    /// Whether this is the official PyPI (pip's own default: nothing to add).
    pub fn is_official(&self) -> bool {
        self.name == "pypi"
    }
}

/// The indexes the dropdowns list, in their order. Debug builds take another list from
/// `CUDA_SETUP_TEST_PYPI_INDEXES` (`name=url,name=url`), so tests race loopback servers.
pub fn candidates() -> Vec<Candidate> {
    #[cfg(debug_assertions)]
    if let Ok(list) = std::env::var("CUDA_SETUP_TEST_PYPI_INDEXES") {
        return list
            .split(',')
            .filter_map(|e| e.split_once('='))
            .map(|(n, u)| Candidate {
                name: n.trim().to_string(),
                url: u.trim().to_string(),
            })
            .collect();
    }
    let mut out = vec![Candidate {
        name: "pypi".into(),
        url: crate::wheels::index::PYPI.into(),
    }];
    out.extend(["tsinghua", "aliyun", "ustc"].iter().filter_map(|n| {
        let m = PypiMirror::from_str(n).ok()?;
        Some(Candidate {
            name: m.name,
            url: m.url,
        })
    }));
    out
}

/// Asks every candidate for its `pip` page at once; the first valid answer within
/// `budget` wins (None: none answered in time).
pub fn race(candidates: &[Candidate], budget: Duration) -> Option<Candidate> {
    let (tx, rx) = mpsc::channel();
    for (i, c) in candidates.iter().enumerate() {
        let (tx, url) = (tx.clone(), c.url.clone());
        let opts = crate::download::Options {
            retries: 1,
            connect_timeout: budget,
            stall_timeout: budget,
            ..Default::default()
        };
        // A loser still running is left to end by its own timeouts.
        std::thread::spawn(move || {
            let ok = crate::wheels::index::fetch_project(&url, PROBE_PROJECT, &opts)
                .is_ok_and(|files| !files.is_empty());
            let _ = tx.send((i, ok));
        });
    }
    drop(tx);
    let deadline = Instant::now() + budget;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, true)) => return Some(candidates[i].clone()),
            Ok((_, false)) => continue,
            Err(_) => return None,
        }
    }
}

/// What the log says of the race's result, the index by the name users know.
pub fn picked_message(picked: Option<&Candidate>) -> Message {
    let Some(c) = picked else {
        return crate::msg!("pypi_auto_none");
    };
    match c.name.as_str() {
        "pypi" => crate::msg!("pypi_auto_picked_official"),
        "tsinghua" => crate::msg!("pypi_auto_picked_tsinghua"),
        "aliyun" => crate::msg!("pypi_auto_picked_aliyun"),
        "ustc" => crate::msg!("pypi_auto_picked_ustc"),
        _ => crate::msg!("pypi_auto_picked", url = &c.url),
    }
    .with("address", &c.url)
}

/// The candidate's name back from its message's key (a saved plan's note).
pub fn name_of_key(key: &str) -> &str {
    match key {
        "pypi_auto_picked_official" => "pypi",
        "pypi_auto_picked_tsinghua" => "tsinghua",
        "pypi_auto_picked_aliyun" => "aliyun",
        "pypi_auto_picked_ustc" => "ustc",
        "pypi_auto_picked" => "custom",
        _ => "",
    }
}

/// The race over [`candidates`], as the plan and the pip step run it: the index to use
/// (None: the official PyPI — it won, or nothing answered) and the sentence for the log.
pub fn choose() -> (Option<String>, Message) {
    let picked = race(&candidates(), BUDGET);
    let message = picked_message(picked.as_ref());
    (picked.filter(|c| !c.is_official()).map(|c| c.url), message)
}

/// The user's PyPI choice on the command line (`--pypi-mirror`): a mirror, or `auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PypiPick {
    Auto,
    Mirror(PypiMirror),
}

impl FromStr for PypiPick {
    type Err = String;

    fn from_str(s: &str) -> Result<PypiPick, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            Ok(PypiPick::Auto)
        } else {
            s.parse().map(PypiPick::Mirror)
        }
    }
}

/// As `--pypi-mirror` takes it back: `auto`, the mirror's name, or its address.
impl std::fmt::Display for PypiPick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PypiPick::Auto => f.write_str("auto"),
            PypiPick::Mirror(m) if m.name == "custom" => f.write_str(&m.url),
            PypiPick::Mirror(m) => f.write_str(&m.name),
        }
    }
}

impl PypiPick {
    /// The named index (None: automatic).
    pub fn mirror(&self) -> Option<&PypiMirror> {
        match self {
            PypiPick::Mirror(m) => Some(m),
            PypiPick::Auto => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listed_indexes_race_and_the_winner_is_named_plainly() {
        let names: Vec<String> = candidates().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["pypi", "tsinghua", "aliyun", "ustc"]);
        let c = |n: &str| Candidate {
            name: n.into(),
            url: format!("https://{n}/simple"),
        };
        assert_eq!(
            picked_message(Some(&c("tsinghua"))).key,
            "pypi_auto_picked_tsinghua"
        );
        assert_eq!(picked_message(Some(&c("lan"))).key, "pypi_auto_picked");
        assert_eq!(picked_message(None).key, "pypi_auto_none");
        assert_eq!("Auto".parse::<PypiPick>(), Ok(PypiPick::Auto));
        assert!(matches!("ustc".parse::<PypiPick>(), Ok(PypiPick::Mirror(m)) if m.name == "ustc"));
    }
}
