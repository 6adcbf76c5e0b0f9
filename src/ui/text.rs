//! Every string the wizard shows goes through here: its key is in the core's catalogue
//! files (`locales/{en,zh}.toml`), rendered by `i18n::render` like the CLI's
//! messages. The core's `i18n` tests check that every key named here exists.

use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::message::Message;

/// The text of a key, plain or with its `{name}` parameters: the CLI's helpers too.
pub use cuda_setup_core::i18n::{t, tf};

/// A core message (recommendation reasons, smoke and doctor results).
pub fn msg(lang: Lang, m: &Message) -> String {
    render(m, lang)
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
