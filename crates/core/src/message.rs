//! Messages as stable keys with parameters, so every front end can render them in the
//! user's language (see `i18n`). The core never builds user-facing sentences itself.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub key: &'static str,
    pub params: BTreeMap<&'static str, String>,
}

impl Message {
    pub fn new(key: &'static str) -> Self {
        Message {
            key,
            params: BTreeMap::new(),
        }
    }

    /// Adds a parameter (builder style).
    pub fn with(mut self, name: &'static str, value: impl ToString) -> Self {
        self.params.insert(name, value.to_string());
        self
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// Attaches the raw text behind the message (a library's or a tool's own error, in
    /// English): kept in the report's params as `details`, never part of the sentence.
    /// Front ends show it folded ("details", `--verbose`), not in the plain words.
    pub fn with_details(self, raw: impl ToString) -> Self {
        self.with(DETAILS, raw)
    }

    /// The raw text [`Message::with_details`] attached, if any.
    pub fn details(&self) -> Option<&str> {
        self.param(DETAILS).filter(|d| !d.is_empty())
    }
}

/// The parameter that carries a message's raw text; no catalogue text names it.
pub const DETAILS: &str = "details";

/// `msg!("key", a = x, b = y)` builds a [`Message`].
#[macro_export]
macro_rules! msg {
    ($key:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::message::Message::new($key) $(.with(stringify!($name), $value))*
    };
}
