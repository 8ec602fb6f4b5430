//! The URL checks behind `web_fetch`: which URLs may be fetched, and where a redirect leads.
//!
//! The model writes URLs, so they may be relative, of another scheme (`file:///etc/passwd`),
//! or malformed. [`check_url`] accepts only absolute `http` and `https` URLs with a host, and
//! [`resolve_redirect`] resolves a `Location` header against the URL that answered it (RFC 3986
//! section 5.2) and checks the result the same way, so a redirect cannot lead to another
//! scheme either. Both are syntactic: no DNS, no sockets.

use super::ToolOutput;

/// How many redirects `web_fetch` follows before giving up.
pub const WEB_FETCH_MAX_REDIRECTS: usize = 5;

/// Why a URL was refused; the `Display` text is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// The URL has no scheme (`example.com/x`), so it is not absolute.
    #[error("'{url}' is not an absolute URL; give the full http:// or https:// URL")]
    NotAbsolute {
        /// The URL as given.
        url: String,
    },
    /// The scheme is not `http` or `https`.
    #[error("'{url}' uses the scheme '{scheme}'; web_fetch only fetches http:// and https:// URLs")]
    Scheme {
        /// The URL as given.
        url: String,
        /// Its scheme, lower-cased.
        scheme: String,
    },
    /// There is no host after the scheme (`http:///x`, `https:x`).
    #[error("'{url}' has no host; give a URL such as https://example.com/page")]
    NoHost {
        /// The URL as given.
        url: String,
    },
    /// The URL contains whitespace or a control character.
    #[error("'{}' contains whitespace or a control character; percent-encode it", .url.escape_debug())]
    BadCharacter {
        /// The URL as given.
        url: String,
    },
}

/// Whether a response with this status is a redirect to follow (with its `Location`).
pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The result of a fetch that got no answer (DNS, connection, TLS, timeout).
pub fn fetch_failed(url: &str, reason: &str) -> ToolOutput {
    ToolOutput::error(format!("could not fetch {url}: {reason}"))
}

/// The result of a fetch that was redirected more than [`WEB_FETCH_MAX_REDIRECTS`] times.
pub fn too_many_redirects(url: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "gave up on {url} after {WEB_FETCH_MAX_REDIRECTS} redirects; the server may redirect in \
         a loop"
    ))
}

/// The parts of an absolute URL that redirect resolution needs.
struct Parts<'a> {
    /// `http` or `https`, as written.
    scheme: &'a str,
    /// The authority (`host:port`, maybe with user info).
    authority: &'a str,
    /// The path, possibly empty.
    path: &'a str,
    /// The query with its `?`, possibly empty.
    query: &'a str,
}

/// Checks that `url` is an absolute http(s) URL with a host; returns its scheme lower-cased
/// (`"http"` or `"https"`).
///
/// Leading and trailing whitespace is an error like any other whitespace: the model should
/// send the URL itself.
pub fn check_url(url: &str) -> Result<&'static str, UrlError> {
    split(url).map(|(scheme, _)| scheme)
}

/// Resolves the `Location` of a redirect answered by `base` (an URL [`check_url`] accepted)
/// and checks the result with [`check_url`]. A fragment is dropped, as it is not sent.
pub fn resolve_redirect(base: &str, location: &str) -> Result<String, UrlError> {
    let location = location.trim();
    let location = location.split_once('#').map_or(location, |(l, _)| l);
    let target = if has_scheme(location) {
        location.to_owned()
    } else {
        let (_, b) = split(base)?;
        if let Some(rest) = location.strip_prefix("//") {
            format!("{}://{rest}", b.scheme)
        } else if location.is_empty() {
            format!("{}://{}{}{}", b.scheme, b.authority, b.path, b.query)
        } else if location.starts_with('?') {
            format!("{}://{}{}{location}", b.scheme, b.authority, b.path)
        } else {
            let (path, query) = match location.find('?') {
                Some(i) => location.split_at(i),
                None => (location, ""),
            };
            let merged = if path.starts_with('/') {
                path.to_owned()
            } else {
                // RFC 3986 5.2.3: "all but the last segment of the base URI's path" + reference.
                let dir = match b.path.rfind('/') {
                    Some(i) => &b.path[..=i],
                    None => "/",
                };
                format!("{dir}{path}")
            };
            let path = remove_dot_segments(&merged);
            format!("{}://{}{path}{query}", b.scheme, b.authority)
        }
    };
    check_url(&target)?;
    Ok(target)
}

/// Whether `s` starts with `scheme:` (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
fn has_scheme(s: &str) -> bool {
    scheme_end(s).is_some()
}

fn scheme_end(s: &str) -> Option<usize> {
    let colon = s.find(':')?;
    let scheme = &s[..colon];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(colon)
}

fn split(url: &str) -> Result<(&'static str, Parts<'_>), UrlError> {
    let refuse = |f: fn(String) -> UrlError| Err(f(url.to_owned()));
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return refuse(|url| UrlError::BadCharacter { url });
    }
    let Some(colon) = scheme_end(url) else {
        return refuse(|url| UrlError::NotAbsolute { url });
    };
    let scheme = match url[..colon].to_ascii_lowercase().as_str() {
        "http" => "http",
        "https" => "https",
        other => {
            return Err(UrlError::Scheme {
                url: url.to_owned(),
                scheme: other.to_owned(),
            });
        }
    };
    let Some(rest) = url[colon + 1..].strip_prefix("//") else {
        return refuse(|url| UrlError::NoHost { url });
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() || host.starts_with(':') {
        return refuse(|url| UrlError::NoHost { url });
    }
    let rest = &rest[end..];
    let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    let (path, query) = match rest.find('?') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let parts = Parts {
        scheme: &url[..colon],
        authority,
        path,
        query,
    };
    Ok((scheme, parts))
}

/// RFC 3986 5.2.4 for an absolute path: `.` segments dropped, `..` removes the one before it
/// (never the root), and a path ending in `.` or `..` keeps its trailing slash.
fn remove_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').collect();
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => {}
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
            }
            s => {
                out.push(s);
                continue;
            }
        }
        if last {
            out.push("");
        }
    }
    let joined = out.join("/");
    if joined.starts_with('/') {
        joined
    } else {
        format!("/{joined}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_urls() {
        for (url, scheme) in [
            ("http://example.com", "http"),
            ("https://example.com/a/b?q=1#frag", "https"),
            ("HTTPS://EXAMPLE.com:8443/", "https"),
            ("http://user:pw@127.0.0.1:8080/x", "http"),
            ("http://[::1]:80/", "http"),
        ] {
            assert_eq!(check_url(url), Ok(scheme), "{url}");
        }
    }

    #[test]
    fn refused_urls_say_why() {
        let cases: &[(&str, &str)] = &[
            ("file:///etc/passwd", "scheme 'file'"),
            ("ftp://example.com/x", "scheme 'ftp'"),
            ("javascript:alert(1)", "scheme 'javascript'"),
            ("data:text/plain,hi", "scheme 'data'"),
            ("example.com/page", "not an absolute URL"),
            ("/relative/path", "not an absolute URL"),
            ("", "not an absolute URL"),
            ("http:///path", "no host"),
            ("https:example.com", "no host"),
            ("http://:80/", "no host"),
            ("http://user@/", "no host"),
            (" https://example.com", "whitespace"),
            ("https://exa mple.com", "whitespace"),
            ("https://example.com/\u{0}", "control"),
        ];
        for (url, says) in cases {
            let err = check_url(url).unwrap_err().to_string();
            assert!(err.contains(says), "{url:?}: {err}");
        }
    }

    #[test]
    fn redirects_resolve_like_rfc_3986() {
        let base = "http://a/b/c/d;p?q";
        // RFC 3986 5.4.1, the normal examples that apply to http(s).
        let table = [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"),
            ("g#s", "http://a/b/c/g"),
            (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            // 5.4.2, abnormal examples.
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
            ("https://other.example/x", "https://other.example/x"),
        ];
        for (location, want) in table {
            assert_eq!(
                resolve_redirect(base, location).as_deref(),
                Ok(want),
                "{location:?}"
            );
        }
        assert_eq!(
            resolve_redirect("https://h", "next").as_deref(),
            Ok("https://h/next")
        );
    }

    #[test]
    fn redirect_statuses_and_messages() {
        for s in [301, 302, 303, 307, 308] {
            assert!(is_redirect(s));
        }
        for s in [200, 300, 304, 305, 404] {
            assert!(!is_redirect(s));
        }
        let out = fetch_failed("https://h/", "timed out");
        assert!(out.is_error && out.content == "could not fetch https://h/: timed out");
        assert!(
            too_many_redirects("https://h/")
                .content
                .contains("5 redirects")
        );
    }

    #[test]
    fn redirects_to_other_schemes_are_refused() {
        for location in ["file:///etc/passwd", "ftp://h/x", "gopher://h"] {
            assert!(
                matches!(
                    resolve_redirect("https://h/a", location),
                    Err(UrlError::Scheme { .. })
                ),
                "{location}"
            );
        }
    }
}
