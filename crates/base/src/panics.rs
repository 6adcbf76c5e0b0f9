//! A panic never reaches the user as a backtrace: where one can happen on our threads
//! (a step, the wizard's worker, the command line itself) it is caught and becomes a
//! failure of kind `internal` with its message; where it happened goes to the run's log.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

/// A caught panic: its message, and where in our code it happened (for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic {
    pub message: String,
    pub location: Option<String>,
}

thread_local! {
    /// The location the hook saw for this thread's last panic (the payload lacks it).
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installed once at the edge (command line, wizard): the default hook would print
/// "thread '…' panicked at …" and a backtrace note to the user's terminal. Ours keeps
/// the location for [`catch`], which reports the panic in words; `RUST_BACKTRACE` set
/// (a developer) keeps the default output as well.
pub fn install_hook() {
    let default = panic::take_hook();
    let verbose = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    panic::set_hook(Box::new(move |info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        LAST.with(|l| *l.borrow_mut() = at);
        if verbose {
            default(info);
        }
    }));
}

/// Runs `f`, turning a panic into [`Panic`].
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    LAST.with(|l| l.borrow_mut().take());
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| Panic {
        message: message(payload.as_ref()),
        location: LAST.with(|l| l.borrow_mut().take()),
    })
}

/// The text of a panic's payload (`panic!("…")` gives a `&str` or a `String`).
pub fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Debug builds only: panics when `CUDA_SETUP_TEST_PANIC_IN` names `point`, so tests can
/// prove a panic there is reported. Points: a step's name (`download_toolkit`), the
/// wizard's worker commands (`worker_prepare`, `worker_audit`, …), the command line (`cli`).
pub fn test_hook(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("CUDA_SETUP_TEST_PANIC_IN").is_ok_and(|v| v == point) {
        panic!("test panic in {point} (CUDA_SETUP_TEST_PANIC_IN)");
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message() {
        assert_eq!(catch(|| 7), Ok(7));
        let p = catch(|| -> u8 { panic!("index {} out of range", 3) }).unwrap_err();
        assert_eq!(p.message, "index 3 out of range");
        let p = catch(|| -> u8 { std::panic::panic_any(5u8) }).unwrap_err();
        assert_eq!(p.message, "a panic without a message");
    }
}
