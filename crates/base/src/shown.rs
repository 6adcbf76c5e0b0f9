//! Values from outside (a flag's value, a URL, an entry's name, a server's words) shown
//! in a message are shortened: a hostile value of a megabyte must not become a megabyte
//! of error text. The head is kept (it says what the value was), then `…`, then the tail
//! (a path's file name, a URL's last segment); at most [`MAX_CHARS`] characters, cut on
//! character boundaries. The typed errors keep the whole value; only what is shown is cut.

use std::path::Path;

/// The most characters of one value a message shows.
pub const MAX_CHARS: usize = 200;
/// The most characters of a whole free text (a raw error chain) shown at once.
pub const MAX_TEXT: usize = 4000;

const TAIL: usize = 40;

/// `value` as shown in a message: whole when short, else its head, `…` and its tail, at
/// most [`MAX_CHARS`] characters.
pub fn value(value: &str) -> String {
    cut(value, MAX_CHARS)
}

/// A path as shown in a message (see [`value`]).
pub fn path(p: &Path) -> String {
    value(&p.display().to_string())
}

/// Free text that may hold values from outside (an error chain with URLs and names in
/// it): every run of characters without a space longer than [`MAX_CHARS`] shortened as
/// [`value`] shortens it, then the whole cut to [`MAX_TEXT`] characters.
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_TEXT * 4));
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(&value(word));
        word.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
        // A text of spaces and short words is cut below; no need to build it all.
        if out.len() > MAX_TEXT * 4 {
            break;
        }
    }
    flush(&mut word, &mut out);
    cut(&out, MAX_TEXT)
}

fn cut(s: &str, max: usize) -> String {
    // Counted in characters, so a cut never splits one.
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let tail = TAIL.min(max / 4);
    let head = max - tail - 1;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(n - tail));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_whole() {
        for v in [
            "",
            "https://pypi.org/simple",
            "张三.txt",
            &"a".repeat(MAX_CHARS),
        ] {
            assert_eq!(value(v), v);
        }
    }

    #[test]
    fn long_values_keep_head_and_tail_within_the_bound() {
        let v = format!("/tmp/{}/toolkits.toml", "a".repeat(1_200_000));
        let s = value(&v);
        assert_eq!(s.chars().count(), MAX_CHARS);
        assert!(
            s.starts_with("/tmp/aaa") && s.ends_with("/toolkits.toml"),
            "{s}"
        );
        assert!(s.contains('…'));
        // Multi-byte characters are never split.
        let wide = "张".repeat(10_000) + "末";
        let s = value(&wide);
        assert!(s.chars().count() <= MAX_CHARS && s.ends_with('末'));
        let s = value(&"é".repeat(MAX_CHARS + 1));
        assert_eq!(s.chars().count(), MAX_CHARS);
    }

    #[test]
    fn text_shortens_each_long_word_and_caps_the_whole() {
        let long = "x".repeat(500_000);
        let t = text(&format!(
            "compat table /tmp/{long}: cannot read it: too long"
        ));
        assert!(t.starts_with("compat table /tmp/xxx"), "{t}");
        assert!(t.ends_with(": cannot read it: too long"), "{t}");
        assert!(t.chars().count() < MAX_CHARS + 60, "{}", t.len());
        let spaced = "ab ".repeat(1_000_000);
        assert!(text(&spaced).chars().count() <= MAX_TEXT);
        let lines = "line one\n  - second: x y\n";
        assert_eq!(text(lines), lines);
    }
}
