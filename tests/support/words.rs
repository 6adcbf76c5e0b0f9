//! The rule every visible text is judged by, in the wizard's walk and the CLI's output:
//! anything that is not the catalogue's words fails — an English sentence among Chinese,
//! `Some(`, `None`, backticks, a raw snake_case identifier, a `{placeholder}` left
//! unfilled. Paths, URLs, versions, commands and package names pass: they are
//! placeholder values, the same in every language.

use cuda_setup_core::i18n::Lang;

/// Names written as their owners write them: PyTorch's arguments, the CPU architecture.
pub const IDENTIFIERS: &[&str] = &["batch_size", "num_workers", "pin_memory", "x86_64"];

pub fn has_han(s: &str) -> bool {
    s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// A word of a sentence: lower-case letters (names and acronyms are capitalised).
pub fn sentence_words(s: &str) -> usize {
    s.split_whitespace()
        .map(|w| w.trim_matches(|c: char| ",.;:!?()\"'“”".contains(c)))
        .filter(|w| w.len() >= 2 && w.chars().all(|c| c.is_ascii_lowercase()))
        .count()
}

/// A command line, a path or a URL: technical text every language shows as it is.
pub fn technical(s: &str) -> bool {
    let first = s.split_whitespace().next().unwrap_or("");
    ["python", "pip", "cuda-setup", "nvcc", "sudo", "conda", "py"].contains(&first)
        || s.contains("://")
        || s.contains(" --")
        || s.starts_with('/')
        || s.starts_with('-')
}

/// A raw identifier: a token of lower-case words joined by `_` (set_env, download_toolkit).
pub fn snake_case(s: &str) -> Option<&str> {
    s.split(|c: char| {
        !(c.is_ascii_alphanumeric()
            || c == '_'
            || c == '.'
            || c == '/'
            || c == '\\'
            || c == '-'
            || c == '=')
    })
    .find(|tok| {
        tok.contains('_')
                && !tok.starts_with('_')
                && !tok.ends_with('_')
                && tok.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && tok.chars().any(|c| c.is_ascii_lowercase())
                && !IDENTIFIERS.contains(tok)
                // sm_86 is jargon, judged by its own rule.
                && !tok.starts_with("sm_")
    })
}

/// Jargon a beginner cannot read, outside a command or an address: a PyTorch build tag
/// (cu118), an architecture code (sm_86), NVIDIA's release tag ("GA"), PTX, 核函数.
pub fn jargon(s: &str) -> Option<String> {
    if technical(s) {
        return None;
    }
    if s.contains("核函数") {
        return Some("jargon (核函数)".into());
    }
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|tok| {
            let digits = |t: &str| t.len() >= 2 && t.chars().all(|c| c.is_ascii_digit());
            *tok == "GA"
                || *tok == "PTX"
                || tok.strip_prefix("cu").is_some_and(digits)
                || tok.strip_prefix("sm_").is_some_and(digits)
        })
        .map(|tok| format!("jargon ({tok})"))
}

/// What is wrong with one visible text, if anything.
pub fn problem(s: &str, lang: Lang) -> Option<String> {
    if let Some(j) = jargon(s) {
        return Some(j);
    }
    if s.contains("Some(") {
        return Some("Some(".into());
    }
    // Rust's None: any lone "None" among Chinese words; in English, where the word
    // itself is English, only where a value stands ("(None", ": None", "= None").
    let rust_none = if lang == Lang::Zh {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == "None")
    } else {
        s == "None"
            || ["(None", ": None", "= None", "None)"]
                .iter()
                .any(|p| s.contains(p))
    };
    if rust_none {
        return Some("None".into());
    }
    if s.contains('`') {
        return Some("a backtick".into());
    }
    if let Some(i) = s.find('{')
        && s[i + 1..]
            .split('}')
            .next()
            .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
    {
        return Some("a placeholder left unfilled".into());
    }
    if let Some(tok) = snake_case(s) {
        return Some(format!("a raw identifier ({tok})"));
    }
    // An enum's serde word where a name belongs ("按 windows 系统处理").
    if let Some(w) = s
        .split(|c: char| c.is_whitespace() || !c.is_ascii())
        .map(|w| w.trim_matches(|c: char| c.is_ascii_punctuation()))
        .find(|w| ["windows", "linux"].contains(w))
    {
        return Some(format!("a raw identifier ({w})"));
    }
    // In Chinese: no English sentence, alone or inside Chinese words ("详细信息：every
    // source failed…"); each run of ASCII between Chinese characters is judged. A text
    // in “quotes” is what a program prints, quoted so the user recognises it
    // (“CUDA out of memory”): not judged.
    let unquoted: String = s
        .split('“')
        .enumerate()
        .map(|(i, part)| match (i, part.split_once('”')) {
            (0, _) | (_, None) => part,
            (_, Some((_, rest))) => rest,
        })
        .collect::<Vec<_>>()
        .join("“”");
    if lang == Lang::Zh
        && unquoted
            .split(|c: char| !c.is_ascii())
            .map(str::trim)
            .any(|seg| !technical(seg) && sentence_words(seg) >= 3)
    {
        return Some("an English sentence".into());
    }
    None
}
