//! Building the HTTP request for one model call.

use super::config::SessionConfig;
use super::history::HistoryJson;
use crate::http::{HttpRequest, RequestId};
use crate::quirks::{ProviderQuirks, ResponseFormat};
use crate::wire::{ChatRequest, Message, StreamOptions};

/// Room for the rest of a request body (system prompt, tools, options) before it grows.
const HEAD_CAPACITY: usize = 16 * 1024;

/// Builds the streaming chat request of a turn: the system prompt, `history` and the tools.
///
/// The history's messages go into the body as the JSON the session's history keeps beside
/// them: a tool round trip with a long history must not serialise it again, or turn it into
/// a JSON tree first (see BENCHMARKS.md, round trips).
pub(crate) fn turn_request(
    id: RequestId,
    config: &SessionConfig,
    history: HistoryJson<'_>,
    quirks: &ProviderQuirks,
) -> HttpRequest {
    let system = system_message(config, quirks);
    let tools = config.tools.iter().map(|t| t.to_wire()).collect();
    let messages = Messages {
        size: history.bytes + history.messages.len(),
        write: |body: &mut Vec<u8>| {
            let mut first = true;
            if let Some(system) = &system {
                write_message(body, system);
                first = false;
            }
            for json in history.messages {
                if !first {
                    body.push(b',');
                }
                body.extend_from_slice(json);
                first = false;
            }
        },
    };
    let body = chat_body(config, messages, tools, Extras::Options, quirks);
    config.provider.post_chat(id, body)
}

/// The system message of a turn request: the system prompt, and the output schema's
/// instruction when the provider does not take it as `response_format`.
fn system_message(config: &SessionConfig, quirks: &ProviderQuirks) -> Option<Message> {
    let prompt = config.system_prompt.as_deref().unwrap_or_default();
    let instruction = match (&config.output, quirks.response_format) {
        (Some(output), ResponseFormat::Omit) => Some(output.instruction()),
        (Some(_), ResponseFormat::Send) | (None, _) => None,
    };
    match instruction {
        Some(i) if prompt.is_empty() => Some(Message::system(i)),
        Some(i) => Some(Message::system(format!("{prompt}\n\n{i}"))),
        None => (!prompt.is_empty()).then(|| Message::system(prompt)),
    }
}

/// Builds the summary request of a compaction: the same model and options, no tools.
pub(crate) fn summary_request(
    id: RequestId,
    config: &SessionConfig,
    messages: Vec<Message>,
    quirks: &ProviderQuirks,
) -> HttpRequest {
    let messages = Messages {
        size: 0,
        write: |body: &mut Vec<u8>| {
            for (i, message) in messages.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                write_message(body, message);
            }
        },
    };
    let body = chat_body(config, messages, Vec::new(), Extras::None, quirks);
    config.provider.post_chat(id, body)
}

/// The messages of a request body: how to write them (without the brackets) and about how
/// many bytes that takes.
struct Messages<W> {
    size: usize,
    write: W,
}

fn write_message(body: &mut Vec<u8>, message: &Message) {
    serde_json::to_writer(body, message).expect("a message always serializes");
}

/// Whether the configured extra body keys go into a request.
#[derive(Clone, Copy)]
enum Extras {
    Options,
    None,
}

/// The JSON body of a streaming chat request. Everything but the messages is small and goes
/// through a JSON object (so extra keys and provider quirks apply to it); the messages are
/// written in place, in the order given.
fn chat_body(
    config: &SessionConfig,
    messages: Messages<impl FnOnce(&mut Vec<u8>)>,
    tools: Vec<serde_json::Value>,
    extras: Extras,
    quirks: &ProviderQuirks,
) -> Vec<u8> {
    let opts = &config.options;
    let head = ChatRequest {
        model: config.model.clone(),
        messages: Vec::new(),
        tools,
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        temperature: opts.temperature,
        max_tokens: opts.max_tokens,
        reasoning_effort: opts.reasoning_effort.clone(),
        extra: Default::default(),
    };
    let value = serde_json::to_value(&head).expect("a chat request always serializes");
    let serde_json::Value::Object(mut obj) = value else {
        unreachable!("a chat request serializes to a JSON object")
    };
    obj.remove("messages");
    if let Extras::Options = extras {
        if let Some(output) = &config.output {
            obj.insert("response_format".into(), output.response_format());
        }
        for (k, v) in &opts.extra {
            obj.insert(k.clone(), v.clone());
        }
    }
    quirks.apply_to_body(&mut obj);
    let mut body = Vec::with_capacity(messages.size + HEAD_CAPACITY);
    body.push(b'{');
    if !obj.contains_key("messages") {
        // An extra key named `messages` replaces the history, as it always has.
        body.extend_from_slice(b"\"messages\":[");
        (messages.write)(&mut body);
        body.push(b']');
    }
    for (key, value) in &obj {
        if body.len() > 1 {
            body.push(b',');
        }
        serde_json::to_writer(&mut body, key).expect("a key always serializes");
        body.push(b':');
        serde_json::to_writer(&mut body, value).expect("a JSON value always serializes");
    }
    body.push(b'}');
    body
}

/// Checks a turn request's body against the straightforward one, each message serialised
/// anew: byte for byte, or the JSON the session's history keeps went stale. The session's tests and
/// fuzz targets run it on every request they send.
#[cfg(any(test, feature = "fuzzing"))]
pub(super) fn check_turn_body(
    body: &[u8],
    config: &SessionConfig,
    history: &[Message],
    quirks: &ProviderQuirks,
) {
    let system = system_message(config, quirks);
    let messages = Messages {
        size: 0,
        write: |body: &mut Vec<u8>| {
            for (i, message) in system.iter().chain(history).enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                write_message(body, message);
            }
        },
    };
    let tools = config.tools.iter().map(|t| t.to_wire()).collect();
    let expected = chat_body(config, messages, tools, Extras::Options, quirks);
    assert!(
        body == expected,
        "a request body differs from its history serialised anew:\n{}\n{}",
        String::from_utf8_lossy(body),
        String::from_utf8_lossy(&expected)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quirks::{MaxTokensField, ToolChoice};
    use crate::session::config::Provider;
    use crate::session::history::History;
    use serde_json::{Value, json};

    fn config() -> SessionConfig {
        let mut c = SessionConfig::new(Provider::new("http://127.0.0.1:1/v1/", None), "m1");
        c.system_prompt = Some("You are \"hrns\".\n".into());
        c.tools = crate::tool::builtin::builtin_specs();
        c.options.max_tokens = Some(64);
        c.options.extra.insert("top_p".into(), json!(0.5));
        c
    }

    fn history() -> Vec<Message> {
        vec![
            Message::user("read \u{1F980} \\ \"quoted\""),
            Message::assistant("on it"),
            Message::tool("call_1", "line\n\tnext \u{0}"),
        ]
    }

    /// The body as a JSON tree built the straightforward way: the whole request as a value,
    /// then extras and quirks on top.
    fn reference(config: &SessionConfig, history: &[Message], quirks: &ProviderQuirks) -> Value {
        let mut messages = Vec::new();
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
        let mut body = serde_json::to_value(&request).unwrap();
        let obj = body.as_object_mut().unwrap();
        for (k, v) in &opts.extra {
            obj.insert(k.clone(), v.clone());
        }
        quirks.apply_to_body(obj);
        body
    }

    fn sent(config: &SessionConfig, history: &[Message], quirks: &ProviderQuirks) -> Value {
        let mut kept = History::from_messages(history.to_vec());
        let request = turn_request(RequestId(1), config, kept.json(), quirks);
        check_turn_body(&request.body, config, history, quirks);
        serde_json::from_slice(&request.body).expect("the body is JSON")
    }

    #[test]
    fn the_body_is_the_request_with_extras_and_quirks() {
        let mut quirks = ProviderQuirks::default();
        let c = config();
        assert_eq!(
            sent(&c, &history(), &quirks),
            reference(&c, &history(), &quirks)
        );
        quirks.max_tokens_field = MaxTokensField::MaxCompletionTokens;
        quirks.tool_choice = ToolChoice::Auto;
        let body = sent(&c, &history(), &quirks);
        assert_eq!(body, reference(&c, &history(), &quirks));
        assert_eq!(body["max_completion_tokens"], 64);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn an_empty_history_and_no_system_prompt_give_an_empty_message_list() {
        let mut c = config();
        c.system_prompt = Some(String::new());
        let quirks = ProviderQuirks::default();
        let body = sent(&c, &[], &quirks);
        assert_eq!(body["messages"], json!([]));
        assert_eq!(body, reference(&c, &[], &quirks));
    }

    #[test]
    fn an_extra_messages_key_replaces_the_history_as_before() {
        let mut c = config();
        c.options
            .extra
            .insert("messages".into(), json!([{"role": "user", "content": "x"}]));
        let quirks = ProviderQuirks::default();
        let mut kept = History::from_messages(history());
        let request = turn_request(RequestId(1), &c, kept.json(), &quirks);
        let text = String::from_utf8(request.body.clone()).unwrap();
        assert_eq!(text.matches("\"messages\"").count(), 1, "{text}");
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(body, reference(&c, &history(), &quirks));
    }
}
