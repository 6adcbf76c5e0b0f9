//! The Linux driver advice as the CLI prints it: what to run, then Secure Boot and the
//! restart (the core decides; this only lays it out).

use std::fmt::Write as _;

use cuda_setup_core::i18n::{self, Lang};
use cuda_setup_core::linux_driver::LinuxDriverAdvice;

/// The advice under a recommendation: its intro, the commands indented, then the notes.
pub fn human(a: &LinuxDriverAdvice, lang: Lang) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", i18n::render(&a.intro(), lang));
    for c in &a.commands {
        let _ = writeln!(out, "    {c}");
    }
    for n in a.notes() {
        let _ = writeln!(out, "  {}", i18n::render(&n, lang));
    }
    out
}

/// The advice as JSON: its fields, plus the lines rendered in `--lang`.
pub fn json(a: &LinuxDriverAdvice, lang: Lang) -> serde_json::Value {
    let mut v = serde_json::to_value(a).expect("serialisable");
    v["intro"] = i18n::render(&a.intro(), lang).into();
    v["notes"] = a
        .notes()
        .iter()
        .map(|m| {
            let mut n = serde_json::to_value(m).expect("serialisable");
            n["text"] = i18n::render(m, lang).into();
            n
        })
        .collect::<Vec<_>>()
        .into();
    v
}
