//! Errors keep their causes (`#[source]`); this renders a whole chain as one line, once,
//! at the edge (the report's `error`, the CLI's `error:` line, the wizard's details).

use std::error::Error;
use std::sync::Arc;

/// `outer: inner: cause`: each error of the chain, skipping one whose text its outer
/// error already shows (a wrapper such as `cuDNN: {0}` prints its inner error itself).
pub fn chain(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let said = cause.to_string();
        if !said.is_empty() && !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        next = cause.source();
    }
    text
}

/// The kind of the first I/O error in `e`'s chain (shared or not).
pub fn io_kind(e: &(dyn Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut next = Some(e);
    while let Some(cause) = next {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        if let Some(io) = cause.downcast_ref::<IoCause>() {
            return Some(io.kind());
        }
        if let Some(io) = cause
            .downcast_ref::<Cause>()
            .and_then(|c| c.downcast_ref::<std::io::Error>())
        {
            return Some(io.kind());
        }
        next = cause.source();
    }
    None
}

/// An I/O error as the cause of one of ours: shared, because errors are cloned into
/// events and reports that cross threads and `io::Error` is not `Clone`.
pub type IoCause = Arc<std::io::Error>;

/// Any other cause (an HTTP client's, an archive reader's), shared for the same reason.
pub type Cause = Arc<dyn Error + Send + Sync + 'static>;

/// A cause we can only say in words (what a server did, what a check found).
pub fn text(words: impl Into<String>) -> Cause {
    Arc::from(Box::<dyn Error + Send + Sync>::from(words.into()))
}

/// A library's error as a shared cause.
pub fn cause(e: impl Error + Send + Sync + 'static) -> Cause {
    Arc::new(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading {path}")]
    struct Inner {
        path: &'static str,
        #[source]
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("cuDNN")]
        Plain(#[source] Inner),
        /// A wrapper that already prints its inner error.
        #[error("cuDNN: {0}")]
        Shows(#[source] Inner),
    }

    fn inner() -> Inner {
        Inner {
            path: "/x/lib",
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "access denied"),
        }
    }

    #[test]
    fn renders_each_cause_once() {
        assert_eq!(
            chain(&Outer::Plain(inner())),
            "cuDNN: reading /x/lib: access denied"
        );
        assert_eq!(
            chain(&Outer::Shows(inner())),
            "cuDNN: reading /x/lib: access denied"
        );
        let io = std::io::Error::other("disk on fire");
        assert_eq!(chain(&io), "disk on fire");
    }

    #[test]
    fn shared_causes_are_still_causes() {
        #[derive(Debug, Clone, thiserror::Error)]
        #[error("writing {0}")]
        struct W(&'static str, #[source] IoCause);
        let e = W("/f", Arc::new(std::io::Error::other("no space")));
        let c = e.clone();
        assert_eq!(chain(&c), "writing /f: no space");
        fn send_sync<T: Send + Sync>(_: &T) {}
        send_sync(&e);
    }
}
