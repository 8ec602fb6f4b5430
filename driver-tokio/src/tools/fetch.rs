//! `web_fetch` on the hyper client: http(s) only, redirects checked, size cap and timeout.

use crate::client::{ClientConfig, HttpClient};
use crate::tool::ToolContext;
use hrns_core::http::{HeaderValue, HttpRequest, Method, RequestId};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{
    WEB_FETCH, WEB_FETCH_MAX_BYTES, WEB_FETCH_TIMEOUT_SECS, WebFetchArgs,
};
use hrns_core::tool::fetch::{
    WEB_FETCH_MAX_REDIRECTS, check_url, fetch_failed, is_redirect, resolve_redirect,
    too_many_redirects,
};
use hrns_core::tool::render::render_fetch;
use std::time::Duration;

/// `web_fetch`: an HTTP GET whose body is returned as text.
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
    _: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    check_url(&a.url).map_err(|e| ToolOutput::error(e.to_string()))?;
    let limit = Duration::from_secs(WEB_FETCH_TIMEOUT_SECS);
    tokio::time::timeout(limit, tool.fetch(a.url.clone()))
        .await
        .map_err(|_| {
            let reason = format!("no complete answer within {WEB_FETCH_TIMEOUT_SECS} s");
            fetch_failed(&a.url, &reason)
        })
}

impl WebFetch {
    /// GETs `url`, following up to [`WEB_FETCH_MAX_REDIRECTS`] checked redirects.
    async fn fetch(&self, mut url: String) -> ToolOutput {
        for _ in 0..=WEB_FETCH_MAX_REDIRECTS {
            let request = HttpRequest {
                id: RequestId(0),
                method: Method::Get,
                url: url.clone(),
                headers: vec![(
                    "accept".to_owned(),
                    HeaderValue::Plain("text/html, text/plain;q=0.9, */*;q=0.8".to_owned()),
                )],
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
            if is_redirect(response.status) {
                if let Some(location) = header("location") {
                    url = match resolve_redirect(&url, &location) {
                        Ok(next) => next,
                        Err(e) => return ToolOutput::error(format!("{url} redirects to {e}")),
                    };
                    continue;
                }
            }
            let content_type = header("content-type");
            let (body, cut) = match response.read_all(WEB_FETCH_MAX_BYTES as u64).await {
                Ok(read) => read,
                Err(e) => return fetch_failed(&url, &e.message),
            };
            let cut_at = cut.then_some(body.len());
            return render_fetch(response.status, content_type.as_deref(), &body, cut_at);
        }
        too_many_redirects(&url)
    }
}
