//! Building the HTTP request for one model call.

use super::config::SessionConfig;
use crate::http::{HttpRequest, RequestId};
use crate::quirks::ProviderQuirks;
use crate::wire::{ChatRequest, Message, StreamOptions};

/// Builds the streaming chat request of a turn: the system prompt, `history` and the tools.
pub(crate) fn turn_request(
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
    config.provider.post_chat(id, body)
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
    config.provider.post_chat(id, body)
}
