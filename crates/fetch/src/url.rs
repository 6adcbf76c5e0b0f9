//! Addresses the user gives (`--mirror`, `--torch-index`, `--nvidia-base`), checked once
//! for both front ends.

/// A base URL: http(s) with a host, refused up front (the CLI: at parse time, exit 2)
/// rather than failing later as "no such file". Returns the text as given.
pub fn http_url(s: &str) -> Result<String, String> {
    match reqwest::Url::parse(s) {
        Ok(u)
            if matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some_and(|h| !h.is_empty()) =>
        {
            Ok(s.to_string())
        }
        _ => Err(format!(
            "`{}` is not an http(s) URL: give a full address, like https://mirror.example.com/path",
            crate::shown::value(s)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::http_url;

    #[test]
    fn http_and_https_with_a_host_pass_as_given() {
        for ok in ["https://mirror.example.com/path", "http://127.0.0.1:8080"] {
            assert_eq!(http_url(ok).as_deref(), Ok(ok));
        }
    }

    #[test]
    fn other_schemes_and_bare_names_are_refused() {
        for bad in [
            "ftp://example.com/x",
            "mirror.example.com",
            "file:///tmp",
            "",
        ] {
            let e = http_url(bad).unwrap_err();
            assert!(e.contains("is not an http(s) URL"), "{bad}: {e}");
        }
    }
}
