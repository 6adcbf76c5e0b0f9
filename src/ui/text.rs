//! Every string the wizard shows goes through here: its key is in the core's catalogue
//! files (`crates/core/locales/{en,zh}.toml`), rendered by `i18n::render` like the CLI's
//! messages. The core's `i18n` tests check that every key named here exists.

use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::message::Message;

/// The text of a key, plain or with its `{name}` parameters: the CLI's helpers too.
pub use cuda_setup_core::i18n::{t, tf};

/// A core message (recommendation reasons, smoke and doctor results).
pub fn msg(lang: Lang, m: &Message) -> String {
    render(m, lang)
}

/// `1.4 GB`, `512.0 KB`: units read the same in both languages, and as the CLI prints them.
pub fn bytes(n: u64) -> String {
    cuda_setup_core::units::bytes(n)
}

/// `12.5 MB/s`.
pub fn rate(bytes_per_sec: f64) -> String {
    cuda_setup_core::units::rate(bytes_per_sec)
}

/// `1:05`, `1:02:03`.
pub fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_clock() {
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_500_000), "1.4 MB");
        assert_eq!(bytes(3_200_000_000), "3.0 GB");
        assert_eq!(rate(2_097_152.0), "2.0 MB/s");
        assert_eq!(clock(65.2), "1:05");
        assert_eq!(clock(3723.0), "1:02:03");
    }
}
