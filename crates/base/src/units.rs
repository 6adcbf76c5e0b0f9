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

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM UTC`: what the command line, the
/// reports and JSON show (technical, the same on every machine).
pub fn utc(secs: u64) -> String {
    format!("{} UTC", at_offset(secs, 0))
}

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM` in the computer's own time zone, no
/// zone named: what the wizard shows a beginner. UTC when the system cannot say.
pub fn local_time(secs: u64) -> String {
    at_offset(secs, crate::platform::utc_offset(secs).unwrap_or(0))
}

/// A [`utc`] text as the wizard shows it ([`local_time`]); None for any other text. Times
/// travel in messages as [`utc`] texts, so the command line and JSON keep them as they are.
pub fn utc_to_local(text: &str) -> Option<String> {
    parse_utc(text).map(local_time)
}

/// `secs` as `YYYY-MM-DD HH:MM` at `offset` seconds east of UTC.
pub fn at_offset(secs: u64, offset: i64) -> String {
    let t = secs as i64 + offset;
    let (days, rem) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60
    )
}

/// Howard Hinnant's civil-from-days: (year, month, day) of a day since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Hinnant's days-from-civil, the inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The seconds a [`utc`] text stands for (whole minutes); None for any other text.
pub fn parse_utc(text: &str) -> Option<u64> {
    let s = text.strip_suffix(" UTC")?.as_bytes();
    // Exactly `YYYY-MM-DD HH:MM`, digits where digits belong.
    let shape = b"0000-00-00 00:00";
    if s.len() != shape.len()
        || !s.iter().zip(shape).all(|(c, p)| {
            if *p == b'0' {
                c.is_ascii_digit()
            } else {
                c == p
            }
        })
    {
        return None;
    }
    let n = |a: usize, b: usize| -> i64 {
        s[a..b]
            .iter()
            .fold(0, |acc, c| acc * 10 + i64::from(c - b'0'))
    };
    let (y, m, d, h, min) = (n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16));
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    u64::try_from(days * 86_400 + h * 3600 + min * 60).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_and_fixed_offsets() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_220_180), "2026-12-02 14:03 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        // China (UTC+8) is a day ahead late in the UTC evening; New York a day behind.
        assert_eq!(at_offset(1_796_220_180, 8 * 3600), "2026-12-02 22:03");
        assert_eq!(
            at_offset(1_796_220_180 + 10 * 3600, 8 * 3600),
            "2026-12-03 08:03"
        );
        assert_eq!(at_offset(951_782_400, -5 * 3600), "2000-02-28 19:00");
        assert_eq!(at_offset(0, 5 * 3600 + 1800), "1970-01-01 05:30");
        assert!(!local_time(1_796_220_180).contains("UTC"));
    }

    #[test]
    fn a_utc_text_reads_back() {
        for secs in [0, 951_782_400, 1_796_220_180, 4_102_444_800] {
            assert_eq!(parse_utc(&utc(secs)), Some(secs));
        }
        for other in [
            "2026-12-02 14:03",
            "2026-12-02 14:03 UTC+1",
            "2026-13-02 14:03 UTC",
            "2026-12-02T14:03 UTC",
            "x2026-12-02 14:03 UTC",
            "12.4",
        ] {
            assert_eq!(parse_utc(other), None, "{other}");
        }
        assert_eq!(utc_to_local("PyTorch 2.7.1"), None);
    }

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
