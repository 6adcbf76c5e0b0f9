//! Transfer progress on stderr, one style for every command. On a terminal (and not
//! under `--json`) an indicatif bar redrawn in place; otherwise a plain line every so
//! often, so a log, a pipe or a test reads whole lines. Sizes, rates and times go through
//! the core's one formatter (`cuda_setup_core::units`), as in the wizard.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cuda_setup_core::i18n::{Lang, tf};
use cuda_setup_core::units;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    /// Drawn only on a terminal; None means plain lines.
    bar: Option<ProgressBar>,
    indent: &'static str,
    /// Plain mode: at most one line per this long.
    every: Duration,
    last: Mutex<Option<Instant>>,
    /// The language of the words around the figures ("3:20 left").
    lang: Lang,
}

/// One update: what the progress line says.
pub struct Update<'a> {
    pub done: u64,
    pub total: Option<u64>,
    pub bytes_per_sec: f64,
    pub eta_secs: Option<f64>,
    /// Said after the figures, like `(4 connections)`.
    pub note: &'a str,
}

impl Progress {
    /// `indent` starts every line; `every` spaces the plain lines.
    pub fn new(json: bool, indent: &'static str, every: Duration, lang: Lang) -> Progress {
        let draw = !json && std::io::stderr().is_terminal();
        let bar = draw.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(style(indent, false));
            bar
        });
        Progress {
            bar,
            indent,
            every,
            last: Mutex::new(None),
            lang,
        }
    }

    pub fn update(&self, u: &Update) {
        let total = u
            .total
            .map(|t| format!(" / {}", units::bytes(t)))
            .unwrap_or_default();
        let eta = u
            .eta_secs
            .map(|s| {
                let left = tf(
                    self.lang,
                    "cli_progress_left",
                    &[("time", &units::clock(s))],
                );
                format!("  {left}")
            })
            .unwrap_or_default();
        let note = if u.note.is_empty() {
            String::new()
        } else {
            format!("  {}", u.note)
        };
        let figures = format!(
            "{}{total}  {}{eta}{note}",
            units::bytes(u.done),
            units::rate(u.bytes_per_sec)
        );
        match &self.bar {
            Some(bar) => {
                if let Some(t) = u.total.filter(|t| *t > 0) {
                    if bar.length() != Some(t) {
                        bar.set_style(style(self.indent, true));
                        bar.set_length(t);
                    }
                    bar.set_position(u.done.min(t));
                } else {
                    bar.tick();
                }
                bar.set_message(figures);
            }
            None => {
                let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
                if last.is_some_and(|t| t.elapsed() < self.every) {
                    return;
                }
                *last = Some(Instant::now());
                eprintln!("{}{figures}", self.indent);
            }
        }
    }

    /// A line of its own, above the bar when one is drawn.
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Takes the bar away (the final lines follow); a new transfer may start after it.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
            bar.reset();
            bar.unset_length();
            bar.set_style(style(self.indent, false));
        }
    }
}

impl Drop for Progress {
    /// A command that fails mid-transfer leaves no half-drawn bar above its error.
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A bar with a percentage when the total is known, a spinner otherwise.
fn style(indent: &str, sized: bool) -> ProgressStyle {
    let template = if sized {
        format!("{indent}[{{bar:30}}] {{percent:>3}}%  {{msg}}")
    } else {
        format!("{indent}{{spinner}} {{msg}}")
    };
    ProgressStyle::with_template(&template)
        .expect("a valid template")
        .progress_chars("=> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_bar_under_json_nor_off_a_terminal() {
        assert!(
            Progress::new(true, "", Duration::ZERO, Lang::En)
                .bar
                .is_none()
        );
        let plain = Progress::new(false, "  ", Duration::ZERO, Lang::En);
        assert_eq!(plain.bar.is_some(), std::io::stderr().is_terminal());
    }
}
