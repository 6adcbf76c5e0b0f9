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
}

/// `msg!("key", a = x, b = y)` builds a [`Message`].
#[macro_export]
macro_rules! msg {
    ($key:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::message::Message::new($key) $(.with(stringify!($name), $value))*
    };
}
