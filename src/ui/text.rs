//! Every string the wizard shows goes through here: its key is in the core's catalogue
//! files (`locales/{en,zh}.toml`), rendered by `i18n::render` like the CLI's
//! messages. The core's `i18n` tests check that every key named here exists.

use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::message::Message;

/// The text of a key, plain or with its `{name}` parameters: the CLI's helpers too.
pub use cuda_setup_core::i18n::{t, tf};

/// A core message (recommendation reasons, smoke and doctor results). A time in it (a
/// `… UTC` text, as the command line and JSON keep it) is shown in the computer's own
/// time zone, as a beginner reads a clock (#32).
pub fn msg(lang: Lang, m: &Message) -> String {
    let local: Vec<(&str, String)> = m
        .params
        .iter()
        .filter_map(|(name, value)| Some((*name, cuda_setup_core::units::utc_to_local(value)?)))
        .collect();
    if local.is_empty() {
        return render(m, lang);
    }
    let mut m = m.clone();
    for (name, value) in local {
        m.params.insert(name, value);
    }
    render(&m, lang)
}

/// Sizes, rates and times: the core's one formatter (`1.4 GB`, `12.5 MB/s`, `1:05`), so
/// the wizard and the CLI print the same numbers.
pub use cuda_setup_core::units::{bytes, clock, rate};

/// A toolkit release as a beginner reads it: "11.8 GA" → "11.8" (NVIDIA's "General
/// Availability" tag means nothing to them; "12.4 Update 1" stays).
pub fn plain_release(label: &str) -> &str {
    label.strip_suffix(" GA").unwrap_or(label).trim()
}

/// An installed PyTorch as a beginner reads it: "2.7.1+cu118" → "2.7.1" (the build tag
/// is jargon; "Details" and the report keep it).
pub fn plain_torch_version(version: &str) -> &str {
    version.split('+').next().unwrap_or(version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuda_setup_core::units::{local_time, utc};

    #[test]
    fn times_are_shown_in_local_time() {
        let secs = 1_796_220_180;
        let m = cuda_setup_core::msg!("tables_status_live", at = utc(secs));
        for lang in [Lang::En, Lang::Zh] {
            let shown = msg(lang, &m);
            assert!(!shown.contains("UTC"), "{shown}");
            assert!(shown.contains(&local_time(secs)), "{shown}");
        }
        // The command line keeps UTC.
        assert!(render(&m, Lang::En).contains("2026-12-02 14:03 UTC"));
    }
}
