//! Reading one probe answer: what arrived, when, and what it says about the provider.

use super::{PROBE_TOOL, Verdict, is_token_event, max_body, new_stream};
use crate::accumulate::Completion;
use crate::session::TransportError;
use crate::sse::Decoder;
use crate::stream::ChatStream;
use crate::wire::{ApiError, ChatResponse, ModelInfo, ModelList, Usage};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

/// Delta and message fields that carry reasoning, by provider.
const REASONING_FIELDS: [&str; 5] = [
    "reasoning_content",
    "reasoning",
    "reasoning_details",
    "thinking",
    "reasoning_text",
];

/// One request's answer as it arrived.
#[derive(Debug)]
pub(super) struct Exchange {
    sent: Instant,
    wants_stream: bool,
    pub(super) status: Option<u16>,
    pub(super) content_type: String,
    pub(super) body: Vec<u8>,
    stream: Option<ChatStream>,
    /// The accumulated answer of a stream, or why it failed; set at the end.
    pub(super) stream_result: Option<Result<Completion, String>>,
    first_token: Option<Instant>,
    last_token: Option<Instant>,
    pub(super) error: Option<TransportError>,
}

impl Exchange {
    pub(super) fn new(sent: Instant, wants_stream: bool) -> Self {
        Exchange {
            sent,
            wants_stream,
            status: None,
            content_type: String::new(),
            body: Vec::new(),
            stream: None,
            stream_result: None,
            first_token: None,
            last_token: None,
            error: None,
        }
    }

    pub(super) fn head<'a>(
        &mut self,
        _now: Instant,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) {
        self.status = Some(status);
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("content-type") {
                self.content_type = String::from_utf8_lossy(value).trim().to_owned();
            }
        }
        let json =
            self.content_type.contains("json") && !self.content_type.contains("event-stream");
        if self.wants_stream && (200..300).contains(&status) && !json {
            self.stream = Some(new_stream());
        }
    }

    pub(super) fn data(&mut self, now: Instant, bytes: &[u8]) {
        let room = max_body().saturating_sub(self.body.len());
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if let Some(stream) = self.stream.as_mut() {
            stream.feed(bytes);
            while let Ok(Some(ev)) = stream.poll_event() {
                if is_token_event(&ev) {
                    self.first_token.get_or_insert(now);
                    self.last_token = Some(now);
                }
            }
        }
    }

    pub(super) fn end(&mut self, _now: Instant) {
        if let Some(mut stream) = self.stream.take() {
            stream.feed_eof();
            while let Ok(Some(_)) = stream.poll_event() {}
            self.stream_result = Some(stream.finish().map_err(|f| f.error.to_string()));
        }
    }

    /// Whether the answer was an event stream (a 2xx that is not JSON, to a streamed request).
    pub(super) fn is_stream(&self) -> bool {
        self.stream.is_some() || self.stream_result.is_some()
    }
}

/// What the raw bytes of a stream show beyond its content.
#[derive(Debug, Default)]
pub(super) struct StreamAnalysis {
    pub(super) quirks: Vec<&'static str>,
    pub(super) reasoning_fields: Vec<String>,
    pub(super) think_tags: bool,
}

/// Looks through a stream body for the deviations the accumulator absorbs.
pub(super) fn analyse_stream(body: &[u8], content_type: &str) -> StreamAnalysis {
    let mut quirks = BTreeSet::new();
    let mut fields = BTreeSet::new();
    let mut think = false;
    if !content_type.contains("text/event-stream") {
        quirks.insert("content-type is not text/event-stream");
    }
    if body.windows(2).any(|w| w == b"\r\n") {
        quirks.insert("CRLF line ends");
    }
    if body
        .split(|&b| b == b'\n')
        .any(|l| l.first() == Some(&b':'))
    {
        quirks.insert("keep-alive comment lines");
    }
    let mut decoder = Decoder::with_max_event_size(max_body());
    decoder.feed(body);
    decoder.feed_eof();
    let mut done = false;
    let mut usage_chunks = 0;
    let mut names: HashMap<(u64, u64), u32> = HashMap::new();
    while let Ok(Some(event)) = decoder.poll_event() {
        let data = event.data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if chunk.get("usage").is_some_and(|u| u.is_object()) {
            usage_chunks += 1;
        }
        if chunk.pointer("/x_groq/usage").is_some_and(Value::is_object) {
            quirks.insert("usage nested under x_groq");
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let choice_index = match choice.get("index") {
                Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
                _ => {
                    quirks.insert("choice without index");
                    0
                }
            };
            if choice.get("usage").is_some_and(Value::is_object) {
                quirks.insert("usage inside a choice");
            }
            let delta = match (choice.get("delta"), choice.get("message")) {
                (Some(d), _) if d.is_object() => d,
                (_, Some(m)) if m.is_object() => {
                    quirks.insert("whole message instead of a delta");
                    m
                }
                _ => continue,
            };
            for key in REASONING_FIELDS {
                let present = match delta.get(key) {
                    Some(Value::String(s)) => !s.is_empty(),
                    Some(Value::Array(a)) => !a.is_empty(),
                    Some(Value::Object(o)) => !o.is_empty(),
                    _ => false,
                };
                if present {
                    fields.insert(key.to_owned());
                }
            }
            if delta["content"]
                .as_str()
                .is_some_and(|c| c.contains("<think>"))
            {
                think = true;
            }
            for (pos, call) in delta["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let index = match call.get("index") {
                    Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
                    _ => {
                        quirks.insert("tool call without index");
                        pos as u64
                    }
                };
                let name = call.pointer("/function/name").and_then(Value::as_str);
                if name.is_some_and(|n| !n.is_empty()) {
                    let seen = names.entry((choice_index, index)).or_insert(0);
                    *seen += 1;
                    if *seen == 2 {
                        quirks.insert("tool name repeated in every chunk");
                    }
                    let args = call.pointer("/function/arguments").and_then(Value::as_str);
                    if args.is_some_and(|a| {
                        serde_json::from_str::<Value>(a).is_ok_and(|v| v.is_object())
                            && a.trim() != "{}"
                    }) && *seen == 1
                    {
                        quirks.insert("whole tool call in one chunk");
                    }
                }
            }
        }
    }
    if !done {
        quirks.insert("no [DONE] at the end");
    }
    if usage_chunks > 1 {
        quirks.insert("usage in several chunks");
    }
    StreamAnalysis {
        quirks: quirks.into_iter().collect(),
        reasoning_fields: fields.into_iter().collect(),
        think_tags: think,
    }
}

/// Whether `url` points at this machine or a private network.
pub(super) fn is_local(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => false,
    }
}

/// The provider's message in an error body.
pub(super) fn error_message(body: &[u8]) -> String {
    let api = ApiError::from_body(body);
    let message = if api.message.trim().is_empty() {
        quote(body)
    } else {
        api.message
    };
    crate::text::shorten(message.trim(), 200).into_owned()
}

/// The start of a body, for a message.
pub(super) fn quote(body: &[u8]) -> String {
    if body.is_empty() {
        return "(empty body)".to_owned();
    }
    crate::text::shorten(String::from_utf8_lossy(body).trim(), 120).into_owned()
}

/// A transport error as a line.
pub(super) fn transport(error: &TransportError) -> String {
    format!("{}: {}", error.kind, error.message)
}

/// The models of a `/models` answer; `None` unless it is an object with a `data` list.
pub(super) fn model_list(body: &[u8]) -> Option<Vec<ModelInfo>> {
    let value: Value = serde_json::from_slice(body).ok()?;
    if !value.get("data").is_some_and(Value::is_array) {
        return None;
    }
    serde_json::from_value::<ModelList>(value)
        .ok()
        .map(|l| l.data)
}

/// A non-streamed answer, as far as the probe cares.
#[derive(Debug, Default)]
pub(super) struct Answer {
    pub(super) text: String,
    pub(super) reasoning_fields: Vec<String>,
    pub(super) tool_calls: Vec<(String, String)>,
    pub(super) finish_reason: Option<String>,
}

/// Reads a non-streamed chat answer.
pub(super) fn chat_response(body: &[u8]) -> Result<Answer, String> {
    let resp: ChatResponse = serde_json::from_slice(body)
        .map_err(|e| format!("not a chat completion ({e}): {}", quote(body)))?;
    let choice = resp
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| format!("an answer without choices: {}", quote(body)))?;
    let m = choice.message;
    let mut fields = Vec::new();
    if m.reasoning_content
        .as_deref()
        .is_some_and(|r| !r.is_empty())
    {
        fields.push("reasoning_content".to_owned());
    }
    for key in &REASONING_FIELDS[1..] {
        if m.extra.get(*key).is_some_and(|v| !v.is_null() && v != "") {
            fields.push((*key).to_owned());
        }
    }
    Ok(Answer {
        text: m.text(),
        reasoning_fields: fields,
        tool_calls: m
            .tool_calls
            .into_iter()
            .map(|c| (c.function.name, c.function.arguments))
            .collect(),
        finish_reason: choice.finish_reason,
    })
}

/// Time to first token and tokens per second of a stream.
pub(super) fn timing(ex: &Exchange, usage: Option<&Usage>, text: &str) -> String {
    let (tokens, estimated) = match usage.and_then(|u| u.completion_tokens) {
        Some(t) => (t, false),
        None => ((text.chars().count() as u64).div_ceil(4), true),
    };
    let Some(first) = ex.first_token else {
        return "no tokens arrived".to_owned();
    };
    let ttft = first.saturating_duration_since(ex.sent).as_millis();
    let span = ex
        .last_token
        .unwrap_or(first)
        .saturating_duration_since(first);
    let approx = if estimated { "~" } else { "" };
    if span.as_millis() < 1 || tokens < 2 {
        let s = if tokens == 1 { "" } else { "s" };
        return format!("first token after {ttft} ms; {approx}{tokens} token{s} in one burst");
    }
    let rate = tokens as f64 / span.as_secs_f64();
    format!("first token after {ttft} ms, {approx}{rate:.0} tokens/s ({approx}{tokens} tokens)")
}

/// What an answer to a tool request holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ToolJudgement {
    /// The calls made, as (name, arguments).
    Calls(Vec<(String, String)>),
    /// No call; the answer text.
    NoCall(String),
    /// The request was refused for its tools.
    Rejected(String),
    /// Anything else that went wrong.
    Failed(String),
}

/// Reads the answer to a tool request, streamed or not.
pub(super) fn tool_answer(ex: &Exchange) -> ToolJudgement {
    if let Some(error) = &ex.error {
        return ToolJudgement::Failed(transport(error));
    }
    let status = ex.status.unwrap_or(0);
    if !(200..300).contains(&status) {
        let message = error_message(&ex.body);
        let about_tools = message.to_ascii_lowercase().contains("tool");
        if matches!(status, 400 | 422 | 501) && about_tools {
            return ToolJudgement::Rejected(message);
        }
        return ToolJudgement::Failed(format!("{status}: {message}"));
    }
    let (text, calls) = match &ex.stream_result {
        Some(Ok(completion)) => match completion.choices.first() {
            Some(c) => (
                c.content.clone(),
                c.tool_calls
                    .iter()
                    .map(|t| (t.name.clone(), t.arguments.clone()))
                    .collect(),
            ),
            None => return ToolJudgement::Failed("an answer without choices".to_owned()),
        },
        Some(Err(e)) => return ToolJudgement::Failed(e.clone()),
        None => match chat_response(&ex.body) {
            Ok(answer) => (answer.text, answer.tool_calls),
            Err(e) => return ToolJudgement::Failed(e),
        },
    };
    if calls.is_empty() {
        ToolJudgement::NoCall(text)
    } else {
        ToolJudgement::Calls(calls)
    }
}

/// The verdict on the first call of an answer.
pub(super) fn judge_calls(calls: &[(String, String)]) -> (Verdict, String, String) {
    let (name, args) = &calls[0];
    let args_ok = serde_json::from_str::<Value>(args).is_ok_and(|v| v.is_object());
    let shown = crate::text::shorten(args, 60);
    if name != PROBE_TOOL {
        (
            Verdict::Degraded,
            format!("called `{name}` instead of `{PROBE_TOOL}`"),
            "hrns tells the model the tool does not exist, and it may correct itself".to_owned(),
        )
    } else if !args_ok {
        (
            Verdict::Degraded,
            format!("called {name} with arguments that are not a JSON object: {shown}"),
            "hrns answers with an error result the model can correct".to_owned(),
        )
    } else {
        (
            Verdict::Ok,
            format!("called {name}({shown})"),
            String::new(),
        )
    }
}
