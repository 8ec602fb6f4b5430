//! `web_fetch` on the hyper client: http(s) only, redirects checked, size cap and timeout.

use crate::client::{ClientConfig, HttpClient};
use crate::tool::ToolContext;
use hrns_core::http::{HeaderValue, HttpRequest, Method, RequestId};
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
use std::time::Duration;

/// `web_fetch`: an HTTP GET whose body is returned as text.
///
/// Checks the URL with [`check_url`] before any IO, follows redirects as
/// [`redirect_target`] decides, reads at most [`WEB_FETCH_MAX_BYTES`] of the body, and bounds
/// the whole exchange by [`WEB_FETCH_TIMEOUT_SECS`]; the result is [`render_fetch`]'s.
#[derive(Debug, Clone)]
pub struct WebFetch {
    http: HttpClient,
}

impl WebFetch {
    /// A fetcher on `http` (share the provider client's pool, or make one that verifies
    /// certificates with `HttpClient::new(&ClientConfig::default())`).
    pub fn new(http: HttpClient) -> Self {
        WebFetch { http }
    }
}

impl Default for WebFetch {
    fn default() -> Self {
        WebFetch::new(HttpClient::new(&ClientConfig {
            read_idle_timeout: Duration::from_secs(WEB_FETCH_TIMEOUT_SECS),
            ..ClientConfig::default()
        }))
    }
}

builtin_tool!(WebFetch: WEB_FETCH, WebFetchArgs => web_fetch);

async fn web_fetch(
    tool: &WebFetch,
    a: WebFetchArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let url = check_url(&a.url)?;
    let limit = Duration::from_secs(WEB_FETCH_TIMEOUT_SECS);
    let hosts = &ctx.sandbox.fetch_policy;
    tokio::time::timeout(
        limit,
        tool.fetch(url.to_owned(), ctx.sandbox.web_fetch, hosts),
    )
    .await
    .map_err(|_| fetch_timed_out(url, WEB_FETCH_TIMEOUT_SECS))
}

impl WebFetch {
    /// GETs `url`, following the redirects [`redirect_target`] allows.
    async fn fetch(
        &self,
        mut url: String,
        private: PrivateAddresses,
        hosts: &WebFetchPolicy,
    ) -> ToolOutput {
        let mut hop = 0;
        loop {
            if let Err(refusal) = check_host(&url, private).await {
                return refusal;
            }
            let request = HttpRequest {
                id: RequestId(0),
                method: Method::Get,
                url: url.clone(),
                headers: vec![("accept".to_owned(), HeaderValue::Plain(ACCEPT.to_owned()))],
                body: Vec::new(),
            };
            let mut response = match self.http.send(request).await {
                Ok(r) => r,
                Err(e) => return fetch_failed(&url, &e.message),
            };
            let header = |name: &str| {
                response
                    .headers
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            };
            let location = header("location");
            match redirect_target(&url, hop, response.status, location.as_deref()) {
                Ok(Some(next)) => {
                    if let Err(refusal) = hosts.check_redirect(&url, &next) {
                        return refusal;
                    }
                    url = next;
                    hop += 1;
                    continue;
                }
                Ok(None) => {}
                Err(refusal) => return refusal,
            }
            let content_type = header("content-type");
            let (body, cut) = match response.read_all(WEB_FETCH_MAX_BYTES as u64).await {
                Ok(read) => read,
                Err(e) => return fetch_failed(&url, &e.message),
            };
            let cut_at = cut.then_some(body.len());
            return render_fetch(response.status, content_type.as_deref(), &body, cut_at);
        }
    }
}

/// Refuses `url` when its host is, or resolves to, a non-public address that `private` does
/// not allow: the core decides ([`host_check`]); this resolves the name without blocking.
async fn check_host(url: &str, private: PrivateAddresses) -> Result<(), ToolOutput> {
    let client = client_host(url);
    let client = client.as_ref().map(|(host, port)| (host.as_str(), *port));
    match host_check(url, client, private) {
        HostCheck::Done(result) => result,
        HostCheck::Resolve { host, port } => {
            let found: Vec<std::net::IpAddr> = tokio::net::lookup_host((host.as_str(), port))
                .await
                .map(|a| a.map(|a| a.ip()).collect())
                .unwrap_or_default();
            check_addresses(url, found, private)
        }
    }
}

/// The host and port of `url` as the HTTP client reads it (the same `http::Uri` parser the
/// request goes through), for the address check; `None` when it cannot parse the URL.
fn client_host(url: &str) -> Option<(String, u16)> {
    let uri: http::Uri = url.parse().ok()?;
    let host = uri.host()?.to_owned();
    let https = uri
        .scheme_str()
        .is_some_and(|s| s.eq_ignore_ascii_case("https"));
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    Some((host, port))
}
