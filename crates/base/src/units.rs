//! Sizes, rates and durations as every front end shows them.
//!
//! One convention: binary multiples (1 KB = 1024 bytes) labelled KB/MB/GB/TB, as Windows
//! Explorer labels them. Most of our users are Windows beginners comparing our "47.6 GB
//! free" with Explorer's drive properties (and Linux's `df -h` counts in 1024s too), and
//! "GiB" is a word they do not know. The CLI and the wizard both print through here.

/// One gigabyte as shown: 1024³ bytes.
pub const GB: u64 = 1 << 30;

/// `999 B`, `1.5 KB`, `12.3 MB`, `3.2 GB`, `1.1 TB`: one decimal from KB up.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    // 1023.96 KB would print as "1024.0 KB": move up before rounding does.
    while v >= 1023.95 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// `12.5 MB/s`; a negative or non-finite rate reads as 0.
pub fn rate(bytes_per_sec: f64) -> String {
    let r = if bytes_per_sec.is_finite() {
        bytes_per_sec.max(0.0)
    } else {
        0.0
    };
    format!("{}/s", bytes(r as u64))
}

/// `0:07`, `1:05`, `1:02:03`: a time left or taken.
pub fn clock(secs: f64) -> String {
    let s = if secs.is_finite() {
        secs.max(0.0).round() as u64
    } else {
        0
    };
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_multiples_labelled_as_windows_does() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1024), "1.0 KB");
        assert_eq!(bytes(1536), "1.5 KB");
        assert_eq!(bytes(1_500_000), "1.4 MB");
        assert_eq!(bytes(GB), "1.0 GB");
        assert_eq!(bytes(3_200_000_000), "3.0 GB");
        // A 512 GB drive's 51_100_000_000 free bytes, as Explorer shows them.
        assert_eq!(bytes(51_100_000_000), "47.6 GB");
        assert_eq!(bytes(3 << 40), "3.0 TB");
        assert_eq!(bytes(u64::MAX), "16777216.0 TB");
    }

    #[test]
    fn no_value_rounds_up_to_1024_of_a_unit() {
        assert_eq!(bytes(1024 * 1024 - 1), "1.0 MB");
        assert_eq!(bytes(GB - 1), "1.0 GB");
        assert_eq!(bytes(1023 * 1024 + 900), "1023.9 KB");
    }

    #[test]
    fn rates_and_clocks() {
        assert_eq!(rate(2.0 * 1024.0 * 1024.0), "2.0 MB/s");
        assert_eq!(rate(-5.0), "0 B/s");
        assert_eq!(rate(f64::NAN), "0 B/s");
        assert_eq!(clock(7.4), "0:07");
        assert_eq!(clock(65.2), "1:05");
        assert_eq!(clock(3723.0), "1:02:03");
        assert_eq!(clock(f64::INFINITY), "0:00");
    }
}
