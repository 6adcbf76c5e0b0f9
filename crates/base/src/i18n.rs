//! English and Simplified Chinese text for every message key. The core emits
//! [`Message`]s; front ends render them here, once, in the user's language. The texts
//! live in one catalogue file per language, `locales/<lang>.toml`
//! (`key = "text"`, `{name}` for a parameter), which a translator edits without
//! touching code; the tests check that the languages agree and that the code names
//! exactly the keys the files hold.

mod catalogue;
#[cfg(test)]
mod source_keys;

use std::sync::LazyLock;

use crate::message::Message;
use catalogue::Catalogue;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    /// zh for a Chinese system locale (`zh-CN`, `zh_CN.UTF-8`, `zh-Hans`), else English.
    pub fn from_locale(locale: &str) -> Lang {
        if locale.to_ascii_lowercase().starts_with("zh") {
            Lang::Zh
        } else {
            Lang::En
        }
    }
}

/// Parsed on first use. The files are embedded at build time and checked by the tests;
/// were a broken one to slip through, its messages render as their keys, not a panic.
static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(Catalogue::embedded_or_empty);

/// Renders `m` in `lang`. An unknown key renders as the key and its parameters, so a
/// missing translation is visible rather than silent (the tests guard against it).
pub fn render(m: &Message, lang: Lang) -> String {
    let params = m.params.iter().map(|(name, value)| (*name, value.as_str()));
    render_key(m.key, params, lang).unwrap_or_else(|| {
        let params: Vec<String> = m.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{} {}", m.key, params.join(" "))
    })
}

/// The text of `key` in `lang` with each `{name}` replaced by the parameter of that
/// name, or `None` for a key the catalogue lacks. For a message that arrives as data
/// (a report's `{key, params}` in JSON); code holding a [`Message`] calls [`render`].
pub fn render_key<N: AsRef<str>, V: AsRef<str>>(
    key: &str,
    params: impl IntoIterator<Item = (N, V)>,
    lang: Lang,
) -> Option<String> {
    let mut text = CATALOGUE.text(key, lang)?.to_string();
    for (name, value) in params {
        text = text.replace(&format!("{{{}}}", name.as_ref()), value.as_ref());
    }
    Some(text)
}

/// The raw text behind a message: its parameters that the sentence does not show (a
/// library's or a tool's own error, kept in the report's params for scripts and
/// support). Front ends fold it under "details" (`details:` on the command line);
/// None when the sentence shows every parameter.
pub fn details(m: &Message, lang: Lang) -> Option<String> {
    let text = CATALOGUE.text(m.key, lang)?;
    let raw: Vec<&str> = m
        .params
        .iter()
        .filter(|(name, value)| !value.is_empty() && !text.contains(&format!("{{{name}}}")))
        .map(|(_, value)| value.as_str())
        .collect();
    (!raw.is_empty()).then(|| raw.join("\n"))
}

/// The text of `key` in `lang`: the front ends' words (labels, status lines).
pub fn t(lang: Lang, key: &'static str) -> String {
    render(&Message::new(key), lang)
}

/// The text of `key` in `lang` with its `{name}` parameters filled in.
pub fn tf(
    lang: Lang,
    key: &'static str,
    params: &[(&'static str, &dyn std::fmt::Display)],
) -> String {
    let mut m = Message::new(key);
    for (name, value) in params {
        m = m.with(name, value);
    }
    render(&m, lang)
}

/// Whether the catalogue has `key`.
pub fn has_key(key: &str) -> bool {
    CATALOGUE.text(key, Lang::En).is_some()
}

/// Every key of the catalogue.
pub fn keys() -> impl Iterator<Item = &'static str> {
    CATALOGUE.keys()
}

/// Every text of one language (the wizard's font test checks it has each character).
pub fn texts(lang: Lang) -> impl Iterator<Item = &'static str> {
    CATALOGUE.all_texts(lang)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_parameters() {
        let m = Message::new("driver_runs_cuda")
            .with("driver", "551.78")
            .with("cuda", "12.4");
        assert_eq!(
            render(&m, Lang::En),
            "Driver 551.78 supports CUDA up to 12.4."
        );
        assert_eq!(render(&m, Lang::Zh), "驱动 551.78 最高支持 CUDA 12.4。");
        let params = [("driver", "551.78"), ("cuda", "12.4")];
        assert_eq!(
            render_key("driver_runs_cuda", params, Lang::Zh).as_deref(),
            Some("驱动 551.78 最高支持 CUDA 12.4。")
        );
    }

    /// The raw texts, as the core produces them: the sentence in Chinese shows
    /// none of them, `details` keeps them; and "at least" reads "up to" (最高).
    #[test]
    fn raw_errors_stay_out_of_the_sentence_and_in_the_details() {
        let libloading =
            "a libloading error occurred: libnvidia-ml.so.1: cannot open shared object file";
        let cases = [
            crate::msg!("smoke_no_driver", library = "libnvidia-ml.so.1")
                .with("detail", libloading),
            crate::msg!("library_load_failed", library = "cudnn64_9.dll")
                .with("detail", libloading),
            crate::msg!("smoke_cuda_call_failed", call = "cublasGemmEx")
                .with("error", "CUBLAS_STATUS_NOT_SUPPORTED"),
            crate::msg!("doctor_cuda_unavailable")
                .with("detail", "Found no NVIDIA driver on your system."),
        ];
        for m in &cases {
            let zh = render(m, Lang::Zh);
            let raw = details(m, Lang::Zh).unwrap_or_else(|| panic!("{m:?}: no details"));
            assert!(!raw.is_empty() && !zh.contains(&raw), "{zh}");
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{zh}"
            );
            assert!(!zh.contains('{') && !zh.contains('`'), "{zh}");
        }
        // A sentence that shows every parameter has no details.
        let m = crate::msg!("driver_runs_cuda", driver = "522.06", cuda = "11.8");
        assert_eq!(details(&m, Lang::Zh), None);
        let m = crate::msg!(
            "driver_runs_cuda_at_least",
            driver = "522.06",
            cuda = "11.8"
        );
        let zh = render(&m, Lang::Zh);
        assert!(
            zh.contains("最高支持 CUDA 11.8") && !zh.contains("至少"),
            "{zh}"
        );
        assert!(render(&m, Lang::En).contains("up to 11.8"));
    }

    #[test]
    fn an_unknown_key_renders_as_itself() {
        let m = Message::new("no_such_key").with("b", 2).with("a", 1);
        assert_eq!(render(&m, Lang::Zh), "no_such_key a=1 b=2");
        assert_eq!(render_key("no_such_key", [("a", "1")], Lang::En), None);
        assert!(!has_key("no_such_key") && has_key("driver_runs_cuda"));
        assert!(keys().any(|k| k == "ui_next"));
        assert!(texts(Lang::Zh).any(|t| t == "下一步"));
    }

    #[test]
    fn locale_picks_language() {
        assert_eq!(Lang::from_locale("zh-CN"), Lang::Zh);
        assert_eq!(Lang::from_locale("zh_TW.UTF-8"), Lang::Zh);
        assert_eq!(Lang::from_locale("en-US"), Lang::En);
    }
}
