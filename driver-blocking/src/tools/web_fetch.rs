//! `web_fetch`: an http(s) GET on ureq with a timeout and a size cap.

use crate::tool::ToolContext;
use hrns_core::sandbox::WebFetchPolicy;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{
    WEB_FETCH, WEB_FETCH_MAX_BYTES, WEB_FETCH_TIMEOUT_SECS, WebFetchArgs,
};
use hrns_core::tool::fetch::{
    ACCEPT, HostCheck, PrivateAddresses, check_addresses, check_url, fetch_failed, fetch_timed_out,
    host_check, redirect_target,
};
use hrns_core::tool::render::render_fetch;
use std::io::{ErrorKind, Read as _};
use std::net::ToSocketAddrs as _;
use std::time::{Duration, Instant};

/// The `web_fetch` tool.
///
/// Checks the URL with [`check_url`] before any IO (http and https with a host only), then
/// GETs it with one timeout for the whole exchange (default [`WEB_FETCH_TIMEOUT_SECS`]),
/// following redirects as [`redirect_target`] decides (ureq follows none itself). At most
/// [`WEB_FETCH_MAX_BYTES`] of the (decompressed) body are read; the rest is left unread and a
/// note says the body was cut. Every status is a result, rendered by [`render_fetch`]: 2xx as
/// text, others as errors that show the start of the body. The call cannot be cancelled; the
/// timeout bounds it.
#[derive(Clone)]
pub struct WebFetch {
    agent: ureq::Agent,
    timeout: Duration,
}

impl std::fmt::Debug for WebFetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetch")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for WebFetch {
    fn default() -> Self {
        Self::new()
    }
}

impl WebFetch {
    /// Returns the tool with the default timeout of [`WEB_FETCH_TIMEOUT_SECS`].
    pub fn new() -> Self {
        Self::with_timeout(Duration::from_secs(WEB_FETCH_TIMEOUT_SECS))
    }

    /// Returns the tool with another timeout for the whole exchange (connect to last byte).
    pub fn with_timeout(timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .max_redirects(0)
            .http_status_as_error(false)
            .user_agent(concat!("hrns/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
            .build();
        WebFetch {
            agent: ureq::Agent::new_with_config(config),
            timeout,
        }
    }

    fn fetch(&self, url: &str, private: PrivateAddresses, hosts: &WebFetchPolicy) -> ToolOutput {
        let deadline = Instant::now() + self.timeout;
        // A timeout is reported for the URL asked for, whichever redirect it happened on.
        let timed_out = || fetch_timed_out(url, self.timeout.as_secs().max(1));
        let mut url = url.to_owned();
        let mut hop = 0;
        let response = loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return timed_out();
            }
            if let Err(refusal) = check_host(&url, private) {
                return refusal;
            }
            let request = self.agent.get(&url).header("accept", ACCEPT);
            let sent = request
                .config()
                .timeout_global(Some(remaining))
                .build()
                .call();
            let response = match sent {
                Ok(response) => response,
                Err(ureq::Error::Timeout(_)) => return timed_out(),
                Err(e) => return fetch_failed(&url, &e.to_string()),
            };
            let status = response.status().as_u16();
            let location = header(&response, "location");
            match redirect_target(&url, hop, status, location.as_deref()) {
                Ok(Some(next)) => {
                    if let Err(refusal) = hosts.check_redirect(&url, &next) {
                        return refusal;
                    }
                    url = next;
                }
                Ok(None) => break response,
                Err(refusal) => return refusal,
            }
            hop += 1;
        };
        let status = response.status().as_u16();
        let content_type = header(&response, "content-type");
        let mut body = Vec::new();
        let limit = WEB_FETCH_MAX_BYTES as u64 + 1;
        let read = response
            .into_body()
            .into_reader()
            .take(limit)
            .read_to_end(&mut body);
        if let Err(e) = read {
            return if is_timeout(&e) {
                timed_out()
            } else {
                fetch_failed(&url, &e.to_string())
            };
        }
        let truncated_at = (body.len() > WEB_FETCH_MAX_BYTES).then(|| {
            body.truncate(WEB_FETCH_MAX_BYTES);
            WEB_FETCH_MAX_BYTES
        });
        render_fetch(status, content_type.as_deref(), &body, truncated_at)
    }
}

/// The value of the response header `name`, if it is text.
fn header(response: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Whether a body read failed because the exchange ran out of time.
fn is_timeout(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::TimedOut
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ureq::Error>())
            .is_some_and(|inner| matches!(inner, ureq::Error::Timeout(_)))
}

builtin_tool!(WebFetch: WEB_FETCH, WebFetchArgs => web_fetch);

fn web_fetch(
    tool: &WebFetch,
    args: WebFetchArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    Ok(tool.fetch(
        check_url(&args.url)?,
        ctx.sandbox.web_fetch,
        &ctx.sandbox.fetch_policy,
    ))
}

/// Refuses `url` when its host is, or resolves to, a non-public address that `private` does
/// not allow: the core decides ([`host_check`]); this resolves the name.
fn check_host(url: &str, private: PrivateAddresses) -> Result<(), ToolOutput> {
    let client = client_host(url);
    let client = client.as_ref().map(|(host, port)| (host.as_str(), *port));
    match host_check(url, client, private) {
        HostCheck::Done(result) => result,
        HostCheck::Resolve { host, port } => {
            let found: Vec<std::net::IpAddr> = (host.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.map(|a| a.ip()).collect())
                .unwrap_or_default();
            check_addresses(url, found, private)
        }
    }
}

/// The host and port of `url` as the HTTP client reads it (the same `http::Uri` parser the
/// request goes through), for the address check; `None` when it cannot parse the URL.
fn client_host(url: &str) -> Option<(String, u16)> {
    let uri: ureq::http::Uri = url.parse().ok()?;
    let host = uri.host()?.to_owned();
    let https = uri
        .scheme_str()
        .is_some_and(|s| s.eq_ignore_ascii_case("https"));
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    Some((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_check_reads_the_host_as_the_client_does() {
        let table = [
            ("http://a.example#@127.0.0.1/", Some(("a.example", 80))),
            ("http://a.example?@127.0.0.1/", Some(("a.example", 80))),
            ("http://u@a.example@127.0.0.1/", Some(("127.0.0.1", 80))),
            ("https://a.example:8443/x", Some(("a.example", 8443))),
            ("HTTPS://[::1]/x", Some(("[::1]", 443))),
            ("http://a.example\\@127.0.0.1/", None),
        ];
        for (url, expected) in table {
            let got = client_host(url);
            let got = got.as_ref().map(|(h, p)| (h.as_str(), *p));
            assert_eq!(got, expected, "{url}");
            if let Some((host, _)) = expected {
                // hrns's own reading (the allow-list's, the redirects') is the same.
                let (ours, _) = hrns_core::tool::fetch::host_and_port(url).unwrap();
                assert_eq!(ours, host.trim_matches(['[', ']']), "{url}");
            }
        }
        // The loopback literal behind a fragment is never what is checked, nor fetched.
        let url = "http://a.example#@127.0.0.1/";
        assert!(matches!(
            host_check(url, Some(("a.example", 80)), PrivateAddresses::Refused),
            HostCheck::Resolve { ref host, .. } if host == "a.example"
        ));
    }
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::net::TcpListener;
    use std::sync::mpsc;
    use std::thread::JoinHandle;
    use std::time::Instant;

    /// Serves one connection on 127.0.0.1 with `response` (head and body), and hands back the
    /// request line it got.
    fn serve_once(response: Vec<u8>) -> (String, JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap() > 2 {
                line.clear();
            }
            // The client may stop reading a large body; a failed write is expected then.
            let _ = reader.get_mut().write_all(&response);
            request_line
        });
        (url, server)
    }

    fn response(status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body);
        out
    }

    /// A workspace whose `web_fetch` may reach the test servers on loopback.
    fn loopback_workspace() -> (tempfile::TempDir, ToolContext) {
        let (dir, mut ctx) = workspace();
        ctx.sandbox.web_fetch = PrivateAddresses::Allowed;
        (dir, ctx)
    }

    #[test]
    fn loopback_private_and_link_local_are_refused_by_default() {
        let (_dir, ctx) = workspace();
        for url in [
            "http://127.0.0.1:9/",
            "http://localhost:9/",
            "http://[::1]:9/",
            "http://10.0.0.1/",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let out = call(&WebFetch::new(), &ctx, json!({ "url": url }));
            assert!(out.is_error, "{url}: {}", out.content);
            assert!(
                out.content.contains("webFetchAllowPrivate"),
                "{url}: {}",
                out.content
            );
        }
    }

    #[test]
    fn fetches_a_page() {
        let (_dir, ctx) = loopback_workspace();
        let (url, server) = serve_once(response("200 OK", "text/plain; charset=utf-8", b"hi!"));
        let out = call(
            &WebFetch::new(),
            &ctx,
            json!({"url": format!("{url}/page?q=1")}),
        );
        assert_eq!(
            out,
            ToolOutput::ok("HTTP 200, text/plain; charset=utf-8, 3 bytes\n\nhi!")
        );
        assert_eq!(server.join().unwrap(), "GET /page?q=1 HTTP/1.1\r\n");
    }

    #[test]
    fn non_2xx_statuses_are_error_results() {
        let (_dir, ctx) = loopback_workspace();
        let (url, server) = serve_once(response("404 Not Found", "text/html", b"no such page"));
        let out = call(&WebFetch::new(), &ctx, json!({ "url": url }));
        assert_eq!(
            out,
            ToolOutput::error("HTTP 404, text/html, 12 bytes\n\nno such page")
        );
        server.join().unwrap();
    }

    #[test]
    fn oversize_bodies_are_cut() {
        let (_dir, ctx) = loopback_workspace();
        let body = vec![b'a'; WEB_FETCH_MAX_BYTES + 100_000];
        let (url, server) = serve_once(response("200 OK", "text/plain", &body));
        let out = call(&WebFetch::new(), &ctx, json!({ "url": url }));
        assert!(!out.is_error);
        assert!(
            out.content.starts_with(&format!(
                "HTTP 200, text/plain, {WEB_FETCH_MAX_BYTES} bytes (body cut)"
            )),
            "{}",
            &out.content[..100]
        );
        assert!(out.content.ends_with(&format!(
            "[the body was cut at {WEB_FETCH_MAX_BYTES} bytes]"
        )));
        assert!(out.content.len() < 110_000);
        server.join().unwrap();
    }

    #[test]
    fn refuses_other_schemes_before_any_io() {
        let (_dir, ctx) = loopback_workspace();
        let cases = [
            ("file:///etc/passwd", "scheme 'file' is not supported"),
            ("ftp://example.com/x", "scheme 'ftp' is not supported"),
            (
                "javascript:alert(1)",
                "scheme 'javascript' is not supported",
            ),
            ("http:///etc/passwd", "has no host"),
            ("example.com", "has no scheme"),
            ("", "the url is empty"),
        ];
        for (url, expected) in cases {
            let out = call(&WebFetch::new(), &ctx, json!({ "url": url }));
            assert!(out.is_error, "{url}");
            assert!(out.content.contains(expected), "{url}: {}", out.content);
            assert!(!out.content.contains("root:"), "nothing was read");
        }
    }

    #[test]
    fn connection_failures_and_timeouts_are_results() {
        let (_dir, ctx) = loopback_workspace();
        // A port nobody listens on: bind, note it, close.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let out = call(
            &WebFetch::new(),
            &ctx,
            json!({"url": format!("http://127.0.0.1:{port}/")}),
        );
        assert!(out.is_error);
        assert!(
            out.content.starts_with("fetching http://127.0.0.1:"),
            "{}",
            out.content
        );

        // A server that accepts and never answers.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/slow", listener.local_addr().unwrap());
        let (done, wait_done) = mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (_stream, _) = listener.accept().unwrap();
            let _ = wait_done.recv_timeout(Duration::from_secs(10));
        });
        let started = Instant::now();
        let out = call(
            &WebFetch::with_timeout(Duration::from_millis(500)),
            &ctx,
            json!({ "url": url }),
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            out,
            ToolOutput::error(format!(
                "fetching {url} failed: no complete response within 1 s"
            ))
        );
        done.send(()).unwrap();
        server.join().unwrap();
    }
}
