//! The catalogue files, `locales/<lang>.toml`: flat `key = "text"` tables,
//! embedded at build time (a missing file does not compile) and parsed once. The tests
//! parse them and check what a translator can get wrong (`Catalogue::problems`), so a
//! broken file fails `cargo test` rather than a user's run.

use std::collections::BTreeMap;
#[cfg(test)]
use std::collections::BTreeSet;

use super::Lang;

const EN: &str = include_str!("../../../../locales/en.toml");
const ZH: &str = include_str!("../../../../locales/zh.toml");

#[derive(Debug, thiserror::Error)]
#[error("locales/{file}: {source}")]
pub(super) struct CatalogueError {
    file: &'static str,
    #[source]
    source: toml::de::Error,
}

/// Every language's texts by key.
#[derive(Debug, Default)]
pub(super) struct Catalogue {
    en: BTreeMap<String, String>,
    zh: BTreeMap<String, String>,
}

const FILES: [(Lang, &str); 2] = [(Lang::En, "en.toml"), (Lang::Zh, "zh.toml")];

fn file_name(lang: Lang) -> &'static str {
    match lang {
        Lang::En => FILES[0].1,
        Lang::Zh => FILES[1].1,
    }
}

/// One file: a table of strings (TOML itself refuses a key given twice).
fn parse_file(lang: Lang, text: &str) -> Result<BTreeMap<String, String>, CatalogueError> {
    toml::from_str(text).map_err(|source| CatalogueError {
        file: file_name(lang),
        source,
    })
}

impl Catalogue {
    #[cfg(test)]
    pub(super) fn parse(en: &str, zh: &str) -> Result<Catalogue, CatalogueError> {
        Ok(Catalogue {
            en: parse_file(Lang::En, en)?,
            zh: parse_file(Lang::Zh, zh)?,
        })
    }

    /// The embedded files, or the error the tests report.
    #[cfg(test)]
    pub(super) fn embedded() -> Result<Catalogue, CatalogueError> {
        Catalogue::parse(EN, ZH)
    }

    /// What the program runs with: a language whose file did not parse (which the tests
    /// rule out) is empty, so its messages render as their keys instead of panicking.
    pub(super) fn embedded_or_empty() -> Catalogue {
        Catalogue {
            en: parse_file(Lang::En, EN).unwrap_or_default(),
            zh: parse_file(Lang::Zh, ZH).unwrap_or_default(),
        }
    }

    fn texts(&self, lang: Lang) -> &BTreeMap<String, String> {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }

    pub(super) fn text(&self, key: &str, lang: Lang) -> Option<&str> {
        self.texts(lang).get(key).map(String::as_str)
    }

    /// The keys, English being the language every other is translated from.
    pub(super) fn keys(&self) -> impl Iterator<Item = &str> {
        self.en.keys().map(String::as_str)
    }

    pub(super) fn all_texts(&self, lang: Lang) -> impl Iterator<Item = &str> {
        self.texts(lang).values().map(String::as_str)
    }

    /// What a translator can get wrong, one line each naming the key: a key missing from
    /// a language, placeholders that differ between languages, a malformed placeholder,
    /// an empty text, a key the source could not name as a plain literal.
    #[cfg(test)]
    pub(super) fn problems(&self) -> Vec<String> {
        let mut out = vec![];
        let all: BTreeSet<&str> = FILES
            .iter()
            .flat_map(|(lang, _)| self.texts(*lang).keys().map(String::as_str))
            .collect();
        for key in all {
            if !key
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                out.push(format!("`{key}`: a key is lowercase letters, digits and _"));
            }
            let mut first: Option<(&str, BTreeSet<&str>)> = None;
            for (lang, file) in FILES {
                let Some(text) = self.text(key, lang) else {
                    out.push(format!("`{key}` is missing from {file}"));
                    continue;
                };
                if text.trim().is_empty() {
                    out.push(format!("`{key}` is empty in {file}"));
                }
                let names = match placeholders(text) {
                    Ok(names) => names,
                    Err(why) => {
                        out.push(format!("`{key}` in {file}: {why}"));
                        continue;
                    }
                };
                match &first {
                    None => first = Some((file, names)),
                    Some((other, theirs)) if *theirs != names => out.push(format!(
                        "`{key}`: placeholders differ: {other} has {theirs:?}, {file} has {names:?}"
                    )),
                    Some(_) => {}
                }
            }
        }
        out
    }
}

/// The `{name}` placeholders of a text; a brace that does not make one is an error (the
/// renderer would show it as it is).
#[cfg(test)]
pub(super) fn placeholders(text: &str) -> Result<BTreeSet<&str>, String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err("a `}` closes no placeholder".into());
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err("a `{` is never closed".into());
        };
        let name = &after[..close];
        let ident = name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !ident {
            return Err(format!("`{{{name}}}` is not a placeholder name"));
        }
        names.insert(name);
        rest = &after[close + 1..];
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(en: &str, zh: &str) -> Vec<String> {
        Catalogue::parse(en, zh).unwrap().problems()
    }

    #[test]
    fn the_catalogues_parse_and_agree() {
        let c = Catalogue::embedded().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.problems(), Vec::<String>::new());
        assert!(c.keys().count() > 400, "{}", c.keys().count());
    }

    #[test]
    fn a_key_in_one_language_only_is_named() {
        let en = "both = \"x\"\nonly_en = \"y\"\n";
        let zh = "both = \"甲\"\nonly_zh = \"乙\"\n";
        assert_eq!(
            problems(en, zh),
            [
                "`only_en` is missing from zh.toml",
                "`only_zh` is missing from en.toml"
            ]
        );
    }

    #[test]
    fn placeholders_must_match_between_languages() {
        let p = problems("k = \"{a} and {b}\"\n", "k = \"{a}{a}\"\n");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("`k`: placeholders differ"), "{p:?}");
        // The same names in another order, or repeated, are fine.
        assert!(problems("k = \"{a} {b}\"", "k = \"{b}，{a}{b}\"").is_empty());
    }

    #[test]
    fn malformed_texts_and_keys_are_named() {
        let p = problems(
            "a = \"{ a}\"\nb = \"x {b\"\nc = \" \"\nD = \"d\"\n",
            "a = \"{ a}\"\nb = \"x {b\"\nc = \"丙\"\nD = \"丁\"\n",
        );
        assert!(p.iter().any(|l| l.starts_with("`D`: a key is")), "{p:?}");
        assert!(p.iter().any(|l| l.starts_with("`a` in en.toml")), "{p:?}");
        assert!(p.iter().any(|l| l.starts_with("`b` in zh.toml")), "{p:?}");
        assert!(p.iter().any(|l| l == "`c` is empty in en.toml"), "{p:?}");
    }

    #[test]
    fn a_malformed_file_is_an_error_not_a_panic() {
        for (en, zh, file) in [
            ("a = ", "a = \"甲\"", "en.toml"),
            ("a = \"x\"", "a = 3", "zh.toml"),
            ("a = \"x\"", "[t]\na = \"甲\"", "zh.toml"),
            ("a = \"x\"\na = \"y\"", "a = \"甲\"", "en.toml"),
        ] {
            let e = Catalogue::parse(en, zh).unwrap_err().to_string();
            assert!(e.starts_with(&format!("locales/{file}: ")), "{e}");
        }
    }

    #[test]
    fn placeholder_names() {
        let names = placeholders("{driver} runs {cuda} ({driver})").unwrap();
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["cuda", "driver"]);
        assert!(placeholders("a } b").is_err());
        assert!(placeholders("{Name}").is_err());
    }
}
