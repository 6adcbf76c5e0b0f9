//! Every string the wizard shows goes through here: its key is in `cuda_setup_core::i18n::CATALOG`
//! (English and Simplified Chinese), rendered at the edge like the CLI's messages.

use std::fmt::Display;

use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::message::Message;

/// The text of `key` in `lang`.
pub fn t(lang: Lang, key: &'static str) -> String {
    render(&Message::new(key), lang)
}

/// The text of `key` with its `{name}` parameters filled in.
pub fn tf(lang: Lang, key: &'static str, params: &[(&'static str, &dyn Display)]) -> String {
    let mut m = Message::new(key);
    for (name, value) in params {
        m = m.with(name, value);
    }
    render(&m, lang)
}

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

    /// Every `"ui_…"` key the wizard's source names exists in the catalog, so no screen
    /// shows a raw key in either language.
    #[test]
    fn every_ui_key_is_in_the_catalog() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
        let mut files = vec![];
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
        let mut missing = vec![];
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for piece in text.split("\"ui_").skip(1) {
                let key: String = piece
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !key.is_empty() && piece[key.len()..].starts_with('"') {
                    let key = format!("ui_{key}");
                    if !cuda_setup_core::i18n::CATALOG
                        .iter()
                        .any(|(k, _, _)| *k == key)
                    {
                        missing.push(format!("{}: {key}", f.display()));
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "keys missing from i18n::CATALOG: {missing:#?}"
        );
    }
}
