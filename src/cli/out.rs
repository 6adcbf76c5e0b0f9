//! Output that never panics. std's `println!` panics when stdout is a pipe whose reader
//! has gone (`cuda-setup tables --json | head -1`: exit 101 and a backtrace); these
//! macros shadow std's for everything under `cli/` (they are declared before its
//! modules), so every command writes through here. A closed stdout drops the rest of
//! the output and the command finishes as it would have (an install is not abandoned
//! half-way because a pager quit); any other write error (a full disk under `>`) is
//! reported at the end. A closed stderr is ignored: there is nowhere left to tell.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;

/// The first error writing stdout; output stops after it.
static LOST: Mutex<Option<io::Error>> = Mutex::new(None);

pub fn stdout(args: fmt::Arguments) {
    let mut lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
    if lost.is_none()
        && let Err(e) = io::stdout().lock().write_fmt(args)
    {
        *lost = Some(e);
    }
}

pub fn stderr(args: fmt::Arguments) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// At the end: flushes stdout; the error that lost output, unless the reader simply left
/// (a closed pipe is how `head` says "enough", not a failure).
pub fn finish() -> Option<io::Error> {
    let mut lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
    if lost.is_none()
        && let Err(e) = io::stdout().lock().flush()
    {
        *lost = Some(e);
    }
    lost.take()
        .filter(|e| e.kind() != io::ErrorKind::BrokenPipe)
}

macro_rules! println {
    () => { $crate::cli::out::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::out::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

macro_rules! print {
    ($($arg:tt)*) => { $crate::cli::out::stdout(format_args!($($arg)*)) };
}

macro_rules! eprintln {
    () => { $crate::cli::out::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::out::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

macro_rules! eprint {
    ($($arg:tt)*) => { $crate::cli::out::stderr(format_args!($($arg)*)) };
}
