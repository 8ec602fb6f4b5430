//! Building the HTTP request for one model call.

use super::config::{Provider, SessionConfig};
use crate::http::{HeaderValue, HttpRequest, RequestId, Secret, is_sensitive_header};
use crate::quirks::ProviderQuirks;
use crate::wire::{ChatRequest, Message, StreamOptions};

/// Builds the streaming chat request for `history`.
pub(crate) fn chat_request(
    id: RequestId,
    config: &SessionConfig,
    history: &[Message],
    quirks: &ProviderQuirks,
) -> HttpRequest {
    let mut messages = Vec::with_capacity(history.len() + 1);
    if let Some(system) = config.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        messages.push(Message::system(system));
    }
    messages.extend(history.iter().cloned());
    let opts = &config.options;
    let request = ChatRequest {
        model: config.model.clone(),
        messages,
        tools: config.tools.iter().map(|t| t.to_wire()).collect(),
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        temperature: opts.temperature,
        max_tokens: opts.max_tokens,
        reasoning_effort: opts.reasoning_effort.clone(),
        extra: Default::default(),
    };
    let mut body = serde_json::to_value(&request).expect("a chat request always serializes");
    if let Some(obj) = body.as_object_mut() {
        for (k, v) in &opts.extra {
            obj.insert(k.clone(), v.clone());
        }
        quirks.apply_to_body(obj);
    }
    let body = serde_json::to_vec(&body).expect("a JSON value always serializes");
    config.provider.chat_request(id, body)
}

/// Builds the summary request of a compaction: the same model and options, no tools.
pub(crate) fn summary_request(
    id: RequestId,
    config: &SessionConfig,
    messages: Vec<Message>,
    quirks: &ProviderQuirks,
) -> HttpRequest {
    let opts = &config.options;
    let request = ChatRequest {
        model: config.model.clone(),
        messages,
        tools: Vec::new(),
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        temperature: opts.temperature,
        max_tokens: opts.max_tokens,
        reasoning_effort: opts.reasoning_effort.clone(),
        extra: Default::default(),
    };
    let mut body = serde_json::to_value(&request).expect("a chat request always serializes");
    if let Some(obj) = body.as_object_mut() {
        quirks.apply_to_body(obj);
    }
    let body = serde_json::to_vec(&body).expect("a JSON value always serializes");
    config.provider.chat_request(id, body)
}

/// `base_url` joined with `path`, with exactly one slash between them.
pub fn endpoint(base_url: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base_url.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// The headers of every request to `provider`: JSON content type (when there is a body), the
/// key as a bearer token, and the provider's extra headers.
pub(crate) fn headers(provider: &Provider, json_body: bool) -> Vec<(String, HeaderValue)> {
    let plain = |n: &str, v: &str| (n.to_owned(), HeaderValue::Plain(v.to_owned()));
    let mut headers = if json_body {
        vec![
            plain("content-type", "application/json"),
            plain("accept", "text/event-stream, application/json"),
        ]
    } else {
        vec![plain("accept", "application/json")]
    };
    if let Some(key) = provider.api_key.as_ref().filter(|k| !k.is_empty()) {
        headers.push((
            "authorization".to_owned(),
            HeaderValue::Secret(Secret::new(format!("Bearer {}", key.expose()))),
        ));
    }
    for (name, value) in &provider.headers {
        let value = if is_sensitive_header(name) {
            HeaderValue::Secret(Secret::new(value.clone()))
        } else {
            HeaderValue::Plain(value.clone())
        };
        headers.push((name.clone(), value));
    }
    headers
}
