//! The keys the source names, checked against the catalogue: a key the code uses that is
//! missing would show as a raw key; a key no code names is dead text a translator keeps
//! up for nothing. Keys are string literals (`msg!("key", …)`, `t(lang, "key")`), never
//! assembled at run time, so reading the source finds them all.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A string literal of the source and the code just before it.
#[derive(Debug)]
struct Literal {
    value: String,
    line: usize,
    /// The last hundred-odd characters of code before the literal, without whitespace or
    /// comments, other literals shown as `""`.
    before: String,
    /// The code after the literal up to the end of the call it stands in (the `)`,
    /// `]` or `}` that closes what is open before it), whitespace kept as one space.
    rest: String,
    /// The code just after that end.
    then: String,
}

/// The string literals of Rust source (plain, raw and byte strings), skipping comments
/// and char literals.
fn literals(src: &str) -> Vec<Literal> {
    let b: Vec<char> = src.chars().collect();
    let mut code: Vec<char> = vec![];
    let mut out = vec![];
    // Where each literal stands in `code`, to read what follows it once all is read.
    let mut ends = vec![];
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| b.get(i).copied().unwrap_or('\0');
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < b.len() {
        let c = b[i];
        if c == '/' && at(i + 1) == '/' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            i += 2;
            while i < b.len() && !(b[i] == '*' && at(i + 1) == '/') {
                line += usize::from(b[i] == '\n');
                i += 1;
            }
            i += 2;
        } else if c == '"' || (c == 'r' && matches!(at(i + 1), '"' | '#')) {
            let raw = c == 'r';
            let start = i;
            i += usize::from(raw);
            let hashes = b[i..].iter().take_while(|&&c| c == '#').count();
            i += hashes;
            // `br"…"` is raw too; `r#ident` and a name ending in r are not.
            let prev = |n: usize| code.len().checked_sub(n).map_or(' ', |k| code[k]);
            let after_name = ident(prev(1)) && (prev(1) != 'b' || ident(prev(2)));
            if at(i) != '"' || (raw && after_name) {
                code.extend(&b[start..i]);
                continue;
            }
            i += 1;
            let first_line = line;
            let mut value = String::new();
            while let Some(&c) = b.get(i) {
                if c == '"' && (0..hashes).all(|k| at(i + 1 + k) == '#') {
                    i += 1 + hashes;
                    break;
                }
                if c == '\\' && !raw {
                    value.push(c);
                    i += 1;
                }
                if let Some(&c) = b.get(i) {
                    line += usize::from(c == '\n');
                    value.push(c);
                }
                i += 1;
            }
            let before: String = code[code.len().saturating_sub(120)..]
                .iter()
                .filter(|&&c| c != ' ')
                .collect();
            out.push(Literal {
                value,
                line: first_line,
                before,
                rest: String::new(),
                then: String::new(),
            });
            ends.push(code.len());
            code.extend(['"', '"']);
        } else if c == '\'' {
            // A char literal ('"', '\''), or a lifetime ('a).
            let len = if at(i + 1) == '\\' {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map_or(1, |p| p + 3)
            } else if at(i + 2) == '\'' {
                3
            } else {
                1
            };
            code.push('\'');
            i += len;
        } else {
            line += usize::from(c == '\n');
            if !c.is_whitespace() {
                code.push(c);
            } else if code.last() != Some(&' ') {
                code.push(' ');
            }
            i += 1;
        }
    }
    for (l, at) in out.iter_mut().zip(ends) {
        let from = at + 2;
        let mut depth = 0usize;
        let end = code[from..]
            .iter()
            .position(|&c| match c {
                '(' | '[' | '{' => {
                    depth += 1;
                    false
                }
                ')' | ']' | '}' if depth == 0 => true,
                ')' | ']' | '}' => {
                    depth -= 1;
                    false
                }
                _ => false,
            })
            .map_or(code.len(), |p| from + p);
        l.rest = code[from..end].iter().collect();
        l.then = code[(end + 1).min(code.len())..]
            .iter()
            .take(12)
            .filter(|&&c| c != ' ')
            .collect();
    }
    out
}

/// The parameter names of a `msg!("key", a = x, b = y)` call, from the code after its
/// key.
fn msg_params(rest: &str) -> Vec<&str> {
    let mut depth = 0usize;
    let mut names = vec![];
    let mut start = 0;
    for (i, c) in rest.char_indices().chain([(rest.len(), ',')]) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let arg = rest[start..i].trim();
                start = i + 1;
                if let Some((name, value)) = arg.split_once('=') {
                    let name = name.trim();
                    let ident =
                        !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
                    if ident && !value.starts_with(['=', '>']) {
                        names.push(name);
                    }
                }
            }
            _ => {}
        }
    }
    names
}

/// Whether the literal stands where a message key goes: `msg!("key"`,
/// `Message::new("key"`, `.message("key"` (a lock's busy message), `t(lang, "key"`,
/// `tf(lang, "key"`.
fn in_key_position(before: &str) -> bool {
    if ["msg!(", "Message::new(", ".message("]
        .iter()
        .any(|p| before.ends_with(p))
    {
        return true;
    }
    let Some(call) = before.strip_suffix(',') else {
        return false;
    };
    let Some((callee, arg)) = call.rsplit_once('(') else {
        return false;
    };
    let lang_arg = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    let name = callee
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    lang_arg && (name == "t" || name == "tf")
}

/// Every `.rs` file of the workspace's crates and of the front ends, but the catalogue's
/// own module.
fn sources() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let skip = [base.join("src/i18n.rs"), base.join("src/i18n")];
    let mut files = vec![];
    let crates = base.parent().unwrap();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(crates)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    assert!(dirs.len() >= 6, "the workspace's crates: {dirs:?}");
    dirs.push(crates.parent().unwrap().join("src"));
    for d in &dirs {
        assert!(d.is_dir(), "{} is not a folder", d.display());
    }
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if skip.contains(&p) {
                continue;
            }
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 50, "only {} source files found", files.len());
    files
}

fn source_literals() -> Vec<(PathBuf, Literal)> {
    sources()
        .into_iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            literals(&text).into_iter().map(move |l| (p.clone(), l))
        })
        .collect()
}

/// The literals the source uses as keys that the catalogue lacks: those in a key
/// position, and in the wizard every `"ui_…"` literal (its keys pass through helpers).
fn missing_keys(found: &[(PathBuf, Literal)], has_key: impl Fn(&str) -> bool) -> Vec<String> {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../src/ui")
        .canonicalize()
        .unwrap();
    found
        .iter()
        .filter(|(path, l)| {
            let keyish = !l.value.is_empty()
                && l.value
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            keyish
                && (in_key_position(&l.before)
                    || (path.starts_with(&ui) && l.value.starts_with("ui_")))
                && !has_key(&l.value)
        })
        .map(|(path, l)| format!("{}:{}: {}", path.display(), l.line, l.value))
        .collect()
}

/// Catalogue keys that no literal names.
fn dead_keys<'a>(
    keys: impl Iterator<Item = &'a str>,
    found: &[(PathBuf, Literal)],
) -> Vec<&'a str> {
    let named: BTreeSet<&str> = found.iter().map(|(_, l)| l.value.as_str()).collect();
    keys.filter(|k| !named.contains(k)).collect()
}

/// Chinese (CJK) text written into the code instead of the catalogue, e.g. a hand-made
/// `t("none", "未安装")` pair: such a line bypasses the translator's file and shows
/// English-only (or Chinese-only) wherever the pair was forgotten. Test modules (from
/// the `#[cfg(test)]` line on) may hold Chinese sample data, and a language's own name
/// in the language picker is not translated.
fn hand_translations(files: &[(PathBuf, String)]) -> Vec<String> {
    const AUTONYMS: [&str; 2] = ["中文", "简体中文"];
    let cjk = |c: char| matches!(c, '\u{3000}'..='\u{303f}' | '\u{3400}'..='\u{9fff}' | '\u{ff00}'..='\u{ffef}');
    let mut out = vec![];
    for (path, text) in files {
        let tests_from = text
            .lines()
            .position(|l| l.trim() == "#[cfg(test)]")
            .map_or(usize::MAX, |i| i + 1);
        for l in literals(text) {
            if l.line < tests_from
                && l.value.chars().any(cjk)
                && !AUTONYMS.contains(&l.value.as_str())
            {
                out.push(format!("{}:{}: {}", path.display(), l.line, l.value));
            }
        }
    }
    out
}

#[test]
fn no_text_is_translated_outside_the_catalogue() {
    let files: Vec<(PathBuf, String)> = sources()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    let found = hand_translations(&files);
    assert!(
        found.is_empty(),
        "Chinese text in the code: give it a key in locales/{{en,zh}}.toml and render it with i18n::t / tf / msg!: {found:#?}"
    );
}

#[test]
fn every_key_the_source_names_is_in_the_catalogue() {
    let found = source_literals();
    // Not vacuous: the scanner sees the hundreds of keys the code names.
    let keyed = found.iter().filter(|(_, l)| in_key_position(&l.before));
    let keyed = keyed.count();
    assert!(keyed > 300, "only {keyed} literals in key positions");
    let missing = missing_keys(&found, super::has_key);
    assert!(
        missing.is_empty(),
        "keys missing from locales/*.toml: {missing:#?}"
    );
}

#[test]
fn every_catalogue_key_is_named_in_the_source() {
    let dead = dead_keys(super::keys(), &source_literals());
    assert!(
        dead.is_empty(),
        "keys no source file names as a literal (delete them, or name the key as a literal): {dead:#?}"
    );
}

/// `msg!("key", a = x, …)` calls whose parameters are not the `{a}`s of the key's text:
/// one the text does not use, or a placeholder left unfilled (unless `.with(…)` follows).
fn wrong_params<'a>(
    found: &[(PathBuf, Literal)],
    text: impl Fn(&str) -> Option<&'a str>,
) -> Vec<String> {
    let mut out = vec![];
    for (path, l) in found {
        if !l.before.ends_with("msg!(") {
            continue;
        }
        // A missing key or a malformed text: the other tests name those.
        let Some(Ok(wanted)) = text(&l.value).map(super::catalogue::placeholders) else {
            continue;
        };
        let given: BTreeSet<&str> = msg_params(&l.rest).into_iter().collect();
        let at = format!("{}:{}: {}", path.display(), l.line, l.value);
        for name in given.difference(&wanted) {
            out.push(format!(
                "{at} is given `{name}`, which its text does not use"
            ));
        }
        if !l.then.starts_with(".with(") {
            for name in wanted.difference(&given) {
                out.push(format!("{at} leaves {{{name}}} unfilled"));
            }
        }
    }
    out
}

#[test]
fn msg_parameters_are_the_placeholders_of_the_text() {
    let text = |key: &str| super::CATALOGUE.text(key, super::Lang::En);
    let found = source_literals();
    let calls = found.iter().filter(|(_, l)| l.before.ends_with("msg!("));
    let calls = calls.count();
    assert!(calls > 100, "only {calls} msg! calls found");
    let wrong = wrong_params(&found, text);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_scanner_finds_keys_where_they_stand() {
    let src = r####"
        // msg!("in_a_comment") and t(lang, "also_not")
        let url = "https://x//y"; let q = '"'; let e = '\''; fn f<'a>(x: &'a str) {}
        out.push(msg!("a_key", x = 1));
        /* Message::new("blocked") */ let m = crate::message::Message::new("b_key");
        ui.label(t(lang, "c_key")); ui.label(text::tf(
            app.lang,
            "d_key",
            &[("n", &1)],
        ));
        let s = r#"raw "e_key" inside"#; let n = b.message("f_key"); let g = format!("{}", "g");
        let r = t("none", "未安装");
    "####;
    let found = literals(src);
    let keyed: Vec<&str> = found
        .iter()
        .filter(|l| in_key_position(&l.before))
        .map(|l| l.value.as_str())
        .collect();
    assert_eq!(keyed, ["a_key", "b_key", "c_key", "d_key", "f_key"]);
    let all: Vec<&str> = found.iter().map(|l| l.value.as_str()).collect();
    assert!(
        !all.iter().any(|v| v.contains("comment") || *v == "blocked"),
        "{all:?}"
    );
    assert!(all.contains(&"raw \"e_key\" inside"), "{all:?}");
    assert_eq!(found.iter().find(|l| l.value == "d_key").unwrap().line, 8);

    let with = |src: &str| vec![(PathBuf::from("x.rs"), literals(src).remove(0))];
    let text = |key: &str| (key == "k").then_some("{a} {b}");
    let wrong = |src: &str| wrong_params(&with(src), text);
    assert!(wrong("msg!(\"k\", b = f(x, y), a = a == 1,)").is_empty());
    assert!(wrong("msg!(\"k\", a = 1).with(\"b\", 2)").is_empty());
    assert_eq!(
        wrong("m.push(msg!(\"k\",\n a = [1, 2], c = 3));"),
        [
            "x.rs:1: k is given `c`, which its text does not use",
            "x.rs:1: k leaves {b} unfilled"
        ]
    );
    let file = |src: &str| vec![(PathBuf::from("x.rs"), src.to_string())];
    assert_eq!(
        hand_translations(&file(src)),
        ["x.rs:12: 未安装"],
        "a hand-made pair is found"
    );
    let picker = "ui.radio_value(&mut lang, Lang::Zh, \"简体中文\");\n";
    let tests = "#[cfg(test)]\nmod tests { const S: &str = \"张三.txt\"; }\n";
    assert!(hand_translations(&file(&format!("{picker}{tests}"))).is_empty());
    assert_eq!(
        hand_translations(&file("let a = \"（原因同上）\";\n#[cfg(test)]\n")),
        ["x.rs:1: （原因同上）"]
    );
    let missing = missing_keys(&with("msg!(\"no_such_key\")"), |k| k == "a_key");
    assert_eq!(missing, ["x.rs:1: no_such_key"]);
    assert!(missing_keys(&with("msg!(\"a_key\")"), |k| k == "a_key").is_empty());
    assert_eq!(
        dead_keys(
            ["a_key", "b_key", "fail_disk_full", "fail_nonsense"].into_iter(),
            &with("\"a_key\"")
        ),
        ["b_key", "fail_disk_full", "fail_nonsense"],
        "failure kinds name their keys literally too (FailureKind::fail_key)"
    );
}
