//! The URL check of `web_fetch`, made before any network IO.
//!
//! `web_fetch` GETs http and https URLs only. The model may send anything — `file:///etc/passwd`,
//! `javascript:`, a bare host name — so the driver calls [`check_fetch_url`] first and refuses
//! the call with its message, without resolving a name or opening a socket.

/// Why a URL was refused; the `Display` text is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// The URL is empty.
    #[error("the url is empty; give an http:// or https:// URL")]
    Empty,
    /// The URL contains whitespace or control characters.
    #[error(
        "the url '{}' contains whitespace or control characters; percent-encode them (a space \
         is %20)",
        .url.escape_debug()
    )]
    InvalidCharacters {
        /// The URL as sent.
        url: String,
    },
    /// The URL does not start with a scheme.
    #[error("the url '{url}' has no scheme; start it with https:// (or http://)")]
    NoScheme {
        /// The URL as sent.
        url: String,
    },
    /// The scheme is not http or https.
    #[error(
        "the url scheme '{scheme}' is not supported; web_fetch only fetches http and https URLs"
    )]
    UnsupportedScheme {
        /// The scheme, as sent.
        scheme: String,
    },
    /// The URL has no host after `//`.
    #[error("the url '{url}' has no host; write it as https://host/path")]
    NoHost {
        /// The URL as sent.
        url: String,
    },
}

/// Checks that `url` is an http or https URL with a host, and returns it without the
/// whitespace around it.
///
/// The scheme is matched without regard to case (`HTTPS://` is fine); it must be followed by
/// `//` and a host, which may carry user information and a port (`http://u@[::1]:8080/`).
/// Whitespace and control characters inside the URL are refused rather than guessed at.
/// Everything else about the URL is left to the HTTP client.
pub fn check_fetch_url(url: &str) -> Result<&str, UrlError> {
    let url = url.trim();
    if url.is_empty() {
        return Err(UrlError::Empty);
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlError::InvalidCharacters {
            url: url.to_owned(),
        });
    }
    let no_scheme = || UrlError::NoScheme {
        url: url.to_owned(),
    };
    let (scheme, rest) = url.split_once(':').ok_or_else(no_scheme)?;
    let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid_scheme {
        return Err(no_scheme());
    }
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(UrlError::UnsupportedScheme {
            scheme: scheme.to_owned(),
        });
    }
    let no_host = || UrlError::NoHost {
        url: url.to_owned(),
    };
    let rest = rest.strip_prefix("//").ok_or_else(no_host)?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_once(']').map_or("", |(h, _)| &h[1..])
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err(no_host());
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_http_and_https() {
        let table = [
            ("https://example.com", "https://example.com"),
            ("http://example.com/a?b=c#d", "http://example.com/a?b=c#d"),
            ("  HTTPS://Example.COM/  \n", "HTTPS://Example.COM/"),
            ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
            ("http://[::1]:8080/", "http://[::1]:8080/"),
            ("http://user:pw@host/", "http://user:pw@host/"),
            ("https://host?q", "https://host?q"),
        ];
        for (url, expected) in table {
            assert_eq!(check_fetch_url(url), Ok(expected), "{url}");
        }
    }

    #[test]
    fn refuses_other_schemes() {
        for (url, scheme) in [
            ("file:///etc/passwd", "file"),
            ("ftp://example.com/x", "ftp"),
            ("javascript:alert(1)", "javascript"),
            ("data:text/plain,hi", "data"),
            ("gopher://x", "gopher"),
            ("localhost:8080/x", "localhost"),
            ("httpx://x", "httpx"),
        ] {
            let err = check_fetch_url(url).unwrap_err();
            assert_eq!(
                err,
                UrlError::UnsupportedScheme {
                    scheme: scheme.into()
                },
                "{url}"
            );
            assert!(err.to_string().contains("only fetches http and https"));
        }
    }

    #[test]
    fn refuses_malformed_urls() {
        assert_eq!(check_fetch_url(" "), Err(UrlError::Empty));
        for url in [
            "example.com",
            "//example.com/x",
            ":x",
            "1http://x",
            "ht tp://x",
        ] {
            let err = check_fetch_url(url).unwrap_err();
            assert!(
                matches!(
                    err,
                    UrlError::NoScheme { .. } | UrlError::InvalidCharacters { .. }
                ),
                "{url}: {err:?}"
            );
        }
        for url in [
            "http:example.com",
            "http://",
            "http:///etc/passwd",
            "https://:443/",
            "http://user@/",
            "http://[]/",
            "http://?q",
        ] {
            assert!(
                matches!(check_fetch_url(url), Err(UrlError::NoHost { .. })),
                "{url}"
            );
        }
        let err = check_fetch_url("http://a b/\0").unwrap_err();
        assert!(matches!(err, UrlError::InvalidCharacters { .. }));
        assert!(err.to_string().contains("\\0"), "{err}");
    }
}
