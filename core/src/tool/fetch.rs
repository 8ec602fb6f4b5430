//! The pure parts of `web_fetch`: which URLs may be fetched, where a redirect leads, and the
//! texts of failed fetches.
//!
//! The model writes URLs, so they may be relative, of another scheme (`file:///etc/passwd`,
//! `javascript:`), or malformed. [`check_url`] accepts only absolute `http` and `https` URLs
//! with a host, before any network IO. Drivers do not let their HTTP client follow redirects:
//! after each response they call [`redirect_target`], which resolves a `Location` against the
//! URL that answered (RFC 3986 section 5.2) and checks the result the same way, so a redirect
//! cannot lead to another scheme, and stops after [`WEB_FETCH_MAX_REDIRECTS`]. Everything here
//! is syntactic: no DNS, no sockets.
//!
//! A driver's fetch, in outline (the whole exchange bounded by
//! [`WEB_FETCH_TIMEOUT_SECS`](super::builtin::WEB_FETCH_TIMEOUT_SECS)):
//!
//! ```text
//! url = check_url(&args.url)?
//! for hop in 0.. {
//!     response = GET url with `accept: ACCEPT`        (fetch_failed / fetch_timed_out on error)
//!     match redirect_target(&url, hop, status, location)? {
//!         Some(next) => url = next,
//!         None => return render_fetch(status, content type, first WEB_FETCH_MAX_BYTES of body)
//!     }
//! }
//! ```

use super::ToolOutput;
use std::net::IpAddr;

/// How many redirects `web_fetch` follows before giving up.
pub const WEB_FETCH_MAX_REDIRECTS: usize = 5;

/// The `accept` header of `web_fetch`'s requests: text first.
pub const ACCEPT: &str = "text/html, text/plain, text/markdown, application/json;q=0.9, */*;q=0.5";

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
    /// The URL does not start with a scheme, so it is not absolute.
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

/// Whether a response with this status is a redirect to follow (with its `Location`).
pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Reports that `web_fetch` failed before a complete response arrived (DNS, connection, TLS,
/// a broken body); `detail` is the HTTP client's description.
pub fn fetch_failed(url: &str, detail: &str) -> ToolOutput {
    ToolOutput::error(format!("fetching {url} failed: {detail}"))
}

/// Reports that `web_fetch` got no complete response within its timeout of `secs` seconds
/// (normally [`WEB_FETCH_TIMEOUT_SECS`](super::builtin::WEB_FETCH_TIMEOUT_SECS)).
pub fn fetch_timed_out(url: &str, secs: u64) -> ToolOutput {
    fetch_failed(url, &format!("no complete response within {secs} s"))
}

/// Decides what to do after a response: `Ok(Some(next))` to follow a redirect to `next`,
/// `Ok(None)` to return this response, or the refusal to return.
///
/// `url` answered with `status` and `location` (its `Location` header, if any); `hop` counts
/// the redirects followed so far. A redirect status without a `Location` is returned as it is;
/// a redirect to a URL that [`check_url`] refuses, or one more than
/// [`WEB_FETCH_MAX_REDIRECTS`], is an error.
pub fn redirect_target(
    url: &str,
    hop: usize,
    status: u16,
    location: Option<&str>,
) -> Result<Option<String>, ToolOutput> {
    let Some(location) = location.filter(|_| is_redirect(status)) else {
        return Ok(None);
    };
    if hop >= WEB_FETCH_MAX_REDIRECTS {
        return Err(ToolOutput::error(format!(
            "fetching {url} failed: gave up after {WEB_FETCH_MAX_REDIRECTS} redirects; the \
             server may redirect in a loop"
        )));
    }
    match resolve_redirect(url, location) {
        Ok(next) => Ok(Some(next)),
        Err(e) => Err(ToolOutput::error(format!(
            "fetching {url} failed: it redirects to '{}', which web_fetch does not follow: {e}",
            location.trim().escape_debug()
        ))),
    }
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

/// Checks that `url` is an http or https URL with a host, and returns it without the
/// whitespace around it.
///
/// The scheme is matched without regard to case (`HTTPS://` is fine); it must be followed by
/// `//` and a host, which may carry user information and a port (`http://u@[::1]:8080/`).
/// Whitespace and control characters inside the URL are refused rather than guessed at.
/// Everything else about the URL is left to the HTTP client.
pub fn check_url(url: &str) -> Result<&str, UrlError> {
    let url = url.trim();
    split(url)?;
    Ok(url)
}

/// Whether `web_fetch` may reach loopback, private and link-local addresses (the machine
/// itself, the local network, cloud metadata services). Refused unless the user allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrivateAddresses {
    /// Only public addresses.
    #[default]
    Refused,
    /// Any address (`"webFetchAllowPrivate": true`).
    Allowed,
}

/// The host (without brackets) and port (from the scheme when absent) of an URL
/// [`check_url`] accepted, for the driver to resolve.
pub fn host_and_port(url: &str) -> Result<(String, u16), UrlError> {
    let parts = split(url.trim())?;
    let host_port = parts
        .authority
        .rsplit_once('@')
        .map_or(parts.authority, |(_, h)| h);
    let (host, port) = if let Some(rest) = host_port.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        (host, after.strip_prefix(':'))
    } else {
        match host_port.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    let default = if parts.scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    };
    let port = port
        .filter(|p| !p.is_empty())
        .and_then(|p| p.parse().ok())
        .unwrap_or(default);
    Ok((host.to_owned(), port))
}

/// What kind of non-public address `ip` is: `loopback`, `private`, `link-local`,
/// `unspecified`, … or `None` for a public one. IPv4 addresses inside IPv6 count as IPv4.
pub fn non_public_kind(ip: IpAddr) -> Option<&'static str> {
    let v4 = match ip {
        IpAddr::V4(v4) => v4,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4,
            None => {
                let first = v6.segments()[0];
                return if v6.is_loopback() {
                    Some("loopback")
                } else if v6.is_unspecified() {
                    Some("unspecified")
                } else if first & 0xffc0 == 0xfe80 {
                    Some("link-local")
                } else if first & 0xfe00 == 0xfc00 {
                    Some("private")
                } else if v6.is_multicast() {
                    Some("multicast")
                } else {
                    None
                };
            }
        },
    };
    let [a, b, ..] = v4.octets();
    if v4.is_loopback() {
        Some("loopback")
    } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("private")
    } else if v4.is_link_local() {
        Some("link-local")
    } else if v4.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if v4.is_broadcast() || v4.is_multicast() {
        Some("multicast")
    } else {
        None
    }
}

/// Checks an address `url`'s host resolved to: a non-public one is refused (with a text that
/// says how to allow it) unless `policy` allows it.
pub fn check_address(url: &str, ip: IpAddr, policy: PrivateAddresses) -> Result<(), ToolOutput> {
    match (non_public_kind(ip), policy) {
        (None, _) | (_, PrivateAddresses::Allowed) => Ok(()),
        (Some(kind), PrivateAddresses::Refused) => Err(ToolOutput::error(format!(
            "web_fetch: refused {url}: it leads to {ip}, a {kind} address; web_fetch reaches \
             public addresses only, unless the user sets \"webFetchAllowPrivate\": true in the \
             hrns config"
        ))),
    }
}

/// What a driver does about `url`'s host before it fetches: nothing more ([`HostCheck::Done`])
/// or resolve a name and check each address ([`HostCheck::Resolve`], [`check_addresses`]).
#[derive(Debug, Clone, PartialEq)]
pub enum HostCheck {
    /// The check is decided: private addresses are allowed, the host is an address literal,
    /// or the URL has no host to resolve (the request reports that).
    Done(Result<(), ToolOutput>),
    /// The host is a name: resolve it (to `port`, for the resolver) and hand the addresses
    /// to [`check_addresses`]. A name that does not resolve is left to the request to report.
    Resolve {
        /// The name to resolve.
        host: String,
        /// The port the URL leads to.
        port: u16,
    },
}

/// The first step of the check that `url` leads to no non-public address `policy` refuses;
/// the same in both drivers, which differ only in how they resolve a name. The connection
/// resolves again; a name that changes its answer in between is not caught here.
///
/// `client` is the host (an IPv6 address with or without brackets) and port as the driver's
/// HTTP client parses `url` (its `http::Uri`), so that the address checked is the one the
/// request goes to; `None` when the client cannot parse it (the request then fails with its
/// own error). hrns's own reading of the host ([`host_and_port`], which the session's
/// `webFetchAllow` and redirects use) must agree with the client's, or the URL is refused: a
/// URL two parsers read differently is a way to fetch one host while another is checked.
pub fn host_check(url: &str, client: Option<(&str, u16)>, policy: PrivateAddresses) -> HostCheck {
    let Some((host, port)) = client else {
        return HostCheck::Done(Ok(()));
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match host_and_port(url) {
        Ok((ours, _)) if ours.eq_ignore_ascii_case(host) => {}
        Ok((ours, _)) => {
            return HostCheck::Done(Err(ToolOutput::error(format!(
                "web_fetch: refused {url}: its host reads as {ours} to hrns but as {host} to the \
                 HTTP client; write the URL plainly (no `@`, `\\` or `#` before the path)"
            ))));
        }
        Err(e) => return HostCheck::Done(Err(ToolOutput::error(format!("web_fetch: {e}")))),
    }
    if policy == PrivateAddresses::Allowed {
        return HostCheck::Done(Ok(()));
    }
    match host.parse() {
        Ok(ip) => HostCheck::Done(check_address(url, ip, policy)),
        Err(_) => HostCheck::Resolve {
            host: host.to_owned(),
            port,
        },
    }
}

/// Checks every address `url`'s host resolved to ([`check_address`]); the first refused one
/// is the result.
pub fn check_addresses(
    url: &str,
    addresses: impl IntoIterator<Item = IpAddr>,
    policy: PrivateAddresses,
) -> Result<(), ToolOutput> {
    addresses
        .into_iter()
        .try_for_each(|ip| check_address(url, ip, policy))
}

/// Resolves the `Location` of a redirect answered by `base` (an URL [`check_url`] accepted)
/// and checks the result with [`check_url`]. A fragment is dropped, as it is not sent.
pub fn resolve_redirect(base: &str, location: &str) -> Result<String, UrlError> {
    let location = location.trim();
    let location = location.split_once('#').map_or(location, |(l, _)| l);
    let target = if has_scheme(location) {
        location.to_owned()
    } else {
        let b = split(base.trim())?;
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

fn split(url: &str) -> Result<Parts<'_>, UrlError> {
    if url.is_empty() {
        return Err(UrlError::Empty);
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlError::InvalidCharacters {
            url: url.to_owned(),
        });
    }
    let Some(colon) = scheme_end(url) else {
        return Err(UrlError::NoScheme {
            url: url.to_owned(),
        });
    };
    let scheme = &url[..colon];
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(UrlError::UnsupportedScheme {
            scheme: scheme.to_owned(),
        });
    }
    let no_host = || UrlError::NoHost {
        url: url.to_owned(),
    };
    let rest = url[colon + 1..].strip_prefix("//").ok_or_else(no_host)?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_once(']').map_or("", |(h, _)| &h[1..])
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err(no_host());
    }
    let rest = &rest[end..];
    let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    let (path, query) = match rest.find('?') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    Ok(Parts {
        scheme,
        authority,
        path,
        query,
    })
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
            assert_eq!(check_url(url), Ok(expected), "{url}");
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
            let err = check_url(url).unwrap_err();
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
        assert_eq!(check_url(" "), Err(UrlError::Empty));
        assert_eq!(check_url(""), Err(UrlError::Empty));
        for url in [
            "example.com",
            "/relative/path",
            "//example.com/x",
            ":x",
            "1http://x",
        ] {
            let err = check_url(url).unwrap_err();
            assert!(matches!(err, UrlError::NoScheme { .. }), "{url}: {err:?}");
            assert!(err.to_string().contains("has no scheme"), "{err}");
        }
        for url in [
            "http:example.com",
            "https:example.com",
            "http://",
            "http:///etc/passwd",
            "https://:443/",
            "http://:80/",
            "http://user@/",
            "http://[]/",
            "http://?q",
        ] {
            let err = check_url(url).unwrap_err();
            assert!(matches!(err, UrlError::NoHost { .. }), "{url}: {err:?}");
            assert!(err.to_string().contains("has no host"), "{err}");
        }
        for url in ["ht tp://x", "https://exa mple.com", "http://a b/\0"] {
            let err = check_url(url).unwrap_err();
            assert!(matches!(err, UrlError::InvalidCharacters { .. }), "{url}");
        }
        let err = check_url("http://a/\0").unwrap_err();
        assert!(err.to_string().contains("\\0"), "{err}");
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
        assert_eq!(
            resolve_redirect("http://[::1]:8080/a/b", "c").as_deref(),
            Ok("http://[::1]:8080/a/c")
        );
    }

    #[test]
    fn redirects_to_other_schemes_are_refused() {
        for location in ["file:///etc/passwd", "ftp://h/x", "gopher://h"] {
            assert!(
                matches!(
                    resolve_redirect("https://h/a", location),
                    Err(UrlError::UnsupportedScheme { .. })
                ),
                "{location}"
            );
        }
    }

    #[test]
    fn after_a_response_redirects_are_followed_checked_and_counted() {
        for s in [301, 302, 303, 307, 308] {
            assert!(is_redirect(s));
        }
        for s in [200, 300, 304, 305, 404] {
            assert!(!is_redirect(s));
        }
        let url = "https://h/a/b";
        assert_eq!(redirect_target(url, 0, 200, None), Ok(None));
        assert_eq!(redirect_target(url, 0, 200, Some("/x")), Ok(None));
        assert_eq!(redirect_target(url, 0, 302, None), Ok(None), "no Location");
        assert_eq!(
            redirect_target(url, 0, 301, Some("c")),
            Ok(Some("https://h/a/c".into()))
        );
        assert_eq!(
            redirect_target(url, WEB_FETCH_MAX_REDIRECTS - 1, 308, Some("/z")),
            Ok(Some("https://h/z".into()))
        );
        let looped = redirect_target(url, WEB_FETCH_MAX_REDIRECTS, 302, Some("/a/b")).unwrap_err();
        assert_eq!(
            looped,
            ToolOutput::error(
                "fetching https://h/a/b failed: gave up after 5 redirects; the server may \
                 redirect in a loop"
            )
        );
        let out = redirect_target(url, 0, 302, Some("file:///etc/passwd")).unwrap_err();
        assert!(out.is_error);
        assert!(
            out.content.contains("redirects to 'file:///etc/passwd'")
                && out.content.contains("scheme 'file' is not supported"),
            "{}",
            out.content
        );
    }

    #[test]
    fn failure_texts() {
        assert_eq!(
            fetch_failed("http://x", "connection refused"),
            ToolOutput::error("fetching http://x failed: connection refused")
        );
        assert_eq!(
            fetch_timed_out("http://x", 30).content,
            "fetching http://x failed: no complete response within 30 s"
        );
    }

    #[test]
    fn hosts_and_ports() {
        for (url, host, port) in [
            ("http://example.com/x", "example.com", 80),
            ("https://example.com", "example.com", 443),
            ("http://u:p@host:8080/a?b", "host", 8080),
            ("http://[::1]:9/", "::1", 9),
            ("https://[fe80::1]/", "fe80::1", 443),
            ("http://h:/", "h", 80),
        ] {
            assert_eq!(
                host_and_port(url).unwrap(),
                (host.to_owned(), port),
                "{url}"
            );
        }
        assert!(host_and_port("ftp://x/").is_err());
    }

    #[test]
    fn non_public_addresses() {
        for (ip, kind) in [
            ("127.0.0.1", Some("loopback")),
            ("127.8.9.10", Some("loopback")),
            ("10.1.2.3", Some("private")),
            ("172.16.0.1", Some("private")),
            ("172.32.0.1", None),
            ("192.168.1.1", Some("private")),
            ("100.64.0.1", Some("private")),
            ("169.254.169.254", Some("link-local")),
            ("0.0.0.0", Some("unspecified")),
            ("8.8.8.8", None),
            ("::1", Some("loopback")),
            ("::", Some("unspecified")),
            ("fe80::1", Some("link-local")),
            ("fd00::1", Some("private")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("::ffff:10.0.0.1", Some("private")),
            ("2606:4700::1111", None),
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(non_public_kind(ip), kind, "{ip}");
        }
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let refused =
            check_address("http://localhost/", ip, PrivateAddresses::Refused).unwrap_err();
        assert!(refused.is_error);
        assert!(refused.content.contains("loopback"), "{}", refused.content);
        assert!(
            refused.content.contains("webFetchAllowPrivate"),
            "{}",
            refused.content
        );
        assert!(check_address("http://localhost/", ip, PrivateAddresses::Allowed).is_ok());
        let public: IpAddr = "8.8.8.8".parse().unwrap();
        assert!(check_address("http://x/", public, PrivateAddresses::Refused).is_ok());
    }

    #[test]
    fn host_check_resolves_only_names_and_only_when_private_addresses_are_refused() {
        let refused = PrivateAddresses::Refused;
        assert_eq!(
            host_check(
                "http://10.0.0.1/",
                Some(("10.0.0.1", 80)),
                PrivateAddresses::Allowed
            ),
            HostCheck::Done(Ok(()))
        );
        let HostCheck::Done(Err(literal)) =
            host_check("http://[::1]:8080/x", Some(("[::1]", 8080)), refused)
        else {
            panic!("an address literal is checked without a lookup");
        };
        assert!(literal.content.contains("loopback"), "{}", literal.content);
        assert_eq!(
            host_check("https://example.org/a", Some(("example.org", 443)), refused),
            HostCheck::Resolve {
                host: "example.org".into(),
                port: 443
            }
        );
        assert_eq!(
            host_check("not a url", None, refused),
            HostCheck::Done(Ok(()))
        );
        // The client reads another host than hrns does: refused, whatever the policy.
        for policy in [refused, PrivateAddresses::Allowed] {
            let HostCheck::Done(Err(two)) = host_check(
                "http://docs.rs#@127.0.0.1/",
                Some(("127.0.0.1", 80)),
                policy,
            ) else {
                panic!("two readings of one URL");
            };
            assert!(
                two.content.contains("write the URL plainly"),
                "{}",
                two.content
            );
        }
        assert_eq!(
            host_check("http://EXAMPLE.org/", Some(("example.org", 80)), refused),
            HostCheck::Resolve {
                host: "example.org".into(),
                port: 80
            }
        );

        let url = "http://example.org/";
        let public: IpAddr = "93.184.215.14".parse().unwrap();
        let private: IpAddr = "192.168.1.2".parse().unwrap();
        assert!(check_addresses(url, [public], refused).is_ok());
        assert!(check_addresses(url, [], refused).is_ok());
        let err = check_addresses(url, [public, private], refused).unwrap_err();
        assert!(err.content.contains("192.168.1.2"), "{}", err.content);
    }
}
