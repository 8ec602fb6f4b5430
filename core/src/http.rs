//! What a driver sends: an HTTP request description, with the API key kept out of every
//! `Debug` and `Display`.

use std::fmt;

/// Identifies one request the session asked for; responses are handed back with it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "request #{}", self.0)
    }
}

/// The HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
}

impl Method {
    /// The method name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// A secret string (an API key): shown as `[redacted]` by `Debug` and `Display`.
///
/// The only way to read it is [`Secret::expose`], which drivers call when they put it on the wire.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret itself, for the wire only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A header value, secret or not.
#[derive(Clone, PartialEq, Eq)]
pub enum HeaderValue {
    /// Shown as is.
    Plain(String),
    /// Redacted in `Debug` (authorization, API keys).
    Secret(Secret),
}

impl HeaderValue {
    /// The value for the wire.
    pub fn expose(&self) -> &str {
        match self {
            HeaderValue::Plain(s) => s,
            HeaderValue::Secret(s) => s.expose(),
        }
    }
}

impl fmt::Debug for HeaderValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderValue::Plain(s) => fmt::Debug::fmt(s, f),
            HeaderValue::Secret(_) => f.write_str("[redacted]"),
        }
    }
}

/// Header names whose values are treated as secrets even when given as plain extra headers.
pub fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "authorization"
        || n == "proxy-authorization"
        || n == "cookie"
        || n.contains("api-key")
        || n.contains("apikey")
        || n.contains("token")
        || n.contains("secret")
}

/// One request to send. Its `Debug` shows the headers with secrets redacted and the body as
/// text.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// Which request this is; hand it back with the response.
    pub id: RequestId,
    /// The method.
    pub method: Method,
    /// The full URL.
    pub url: String,
    /// Headers in order; secret values are wrapped.
    pub headers: Vec<(String, HeaderValue)>,
    /// The body (JSON for chat requests). It never contains the API key.
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The headers as name/value pairs ready for the wire.
    pub fn wire_headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers.iter().map(|(n, v)| (n.as_str(), v.expose()))
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequest")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &self.headers)
            .field("body", &String::from_utf8_lossy(&self.body))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_secrets() {
        let req = HttpRequest {
            id: RequestId(1),
            method: Method::Post,
            url: "http://x/v1/chat/completions".into(),
            headers: vec![
                (
                    "authorization".into(),
                    HeaderValue::Secret(Secret::new("Bearer sk-SECRET")),
                ),
                ("x-trace".into(), HeaderValue::Plain("t".into())),
            ],
            body: b"{}".to_vec(),
        };
        let shown = format!(
            "{req:?} {:?} {}",
            Secret::new("sk-SECRET"),
            Secret::new("sk-SECRET")
        );
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("[redacted]") && shown.contains("x-trace"));
        let wire: Vec<_> = req.wire_headers().collect();
        assert_eq!(wire[0], ("authorization", "Bearer sk-SECRET"));
    }

    #[test]
    fn sensitive_header_names() {
        for n in [
            "Authorization",
            "api-key",
            "X-Api-Key",
            "x-goog-api-key",
            "X-Auth-Token",
            "cookie",
        ] {
            assert!(is_sensitive_header(n), "{n}");
        }
        for n in ["content-type", "x-title", "http-referer"] {
            assert!(!is_sensitive_header(n), "{n}");
        }
    }
}
