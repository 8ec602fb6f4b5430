//! A response body written to a record with its secrets taken out, so that no secret can be
//! put together again from the record, while the record still reads back as the same answer.
//!
//! A streamed answer cannot be redacted as the bytes it arrived in: a provider streams a key
//! the model repeats in small deltas (`"content":"sk-"`, `"content":"a7K"`…), each in a JSON
//! string of its own, so the key is never whole in the bytes, yet decoding the deltas gives it
//! back. [`BodyRedactor`] decodes an event stream (the same [`Decoder`] the answer is read
//! with) and treats every string a reader concatenates across deltas as one text per choice:
//! the content, the reasoning, the refusal, each tool call's arguments and the legacy
//! `function_call` arguments. Each such text is redacted with [`Pieces`], as `exec` prints
//! it: the tail of a delta that the next one could complete into a secret moves to the start
//! of that next delta, and is written, at the latest, in the chunk that finishes the choice,
//! before a new call that would take later arguments, or in a chunk of its own before `[DONE]`,
//! an error or the end of the body. Every other string is redacted on its own. The chunks are
//! written again as events, so accumulating the record's stream gives exactly the redacted
//! accumulation of the original one.
//!
//! Any other body (an error status, a JSON answer, a listing) is one text, redacted with
//! [`Pieces`] as it is read.
//!
//! What is lost on the way, none of which a reader of the answer uses: comments, keep-alives,
//! `id` and `retry` fields, anything after `[DONE]` or an error, how the JSON was spaced, and
//! an event over the decoder's limit (the answer fails there, and the record ends there).

use super::{Ending, Pieces, Secrets};
use crate::answer::{Kind, kind_of};
use crate::sse::{Decoder, SseEvent};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One response body on its way into a record: [`feed`](Self::feed) each read, then
/// [`finish`](Self::finish); each returns the text to write now. The texts, concatenated, are
/// the body with every secret replaced.
#[derive(Debug)]
pub struct BodyRedactor {
    body: Body,
}

#[derive(Debug)]
enum Body {
    /// Redacted as one text.
    Text {
        /// Bytes read but not yet written: a tail the next read could complete into a secret,
        /// then an incomplete UTF-8 sequence.
        pending: Vec<u8>,
        pieces: Pieces,
    },
    /// Decoded and written again event by event.
    Stream(Box<EventStream>),
}

#[derive(Debug)]
struct EventStream {
    decoder: Decoder,
    /// The texts concatenated across deltas, by choice index and kind.
    texts: BTreeMap<(u64, Text), Held>,
    /// `[DONE]`, an error or an event too large was met: a reader reads nothing after it.
    over: bool,
}

/// A text a reader concatenates across the deltas of one choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Text {
    Content,
    Reasoning,
    Refusal,
    /// The legacy `function_call`'s arguments.
    FunctionArguments,
    /// A tool call's arguments, by the call's `index` (`None`: fragments without one, which
    /// continue the last call).
    Call(Option<u64>),
}

/// What one text has left for its next delta.
#[derive(Debug, Default)]
struct Held {
    pieces: Pieces,
    /// The tail held back: it starts the text of the next delta.
    tail: String,
    /// The field the text was last read from (`reasoning_content` or `reasoning`), where a
    /// held tail is written when no later delta takes it.
    field: &'static str,
    /// The tool call's id, from its first fragment that had one: a fragment with another id
    /// starts a new call.
    id: Option<String>,
}

impl Held {
    /// The next delta of the text: what to write in its place.
    fn next(&mut self, secrets: &Secrets, text: &str) -> String {
        let mut whole = std::mem::take(&mut self.tail);
        whole.push_str(text);
        let (clean, held) = self.pieces.redact(secrets, &whole, Ending::More);
        let clean = clean.into_owned();
        self.tail = whole[whole.len() - held..].to_owned();
        clean
    }

    /// The text ends: the held tail, redacted.
    fn end(mut self, secrets: &Secrets) -> String {
        let tail = std::mem::take(&mut self.tail);
        self.pieces
            .redact(secrets, &tail, Ending::Last)
            .0
            .into_owned()
    }
}

impl BodyRedactor {
    /// A body with the status and `content-type` of its response: a 2xx event stream (or a
    /// 2xx without a content type, as the answer reader takes it) is decoded, anything else
    /// is one text.
    pub fn new(status: u16, content_type: Option<&str>) -> Self {
        let stream = (200..300).contains(&status)
            && match content_type.map(|t| kind_of(&t.to_ascii_lowercase())) {
                None | Some(Kind::Stream) => true,
                Some(Kind::Json) | Some(Kind::Other) => false,
            };
        let body = if stream {
            Body::Stream(Box::new(EventStream {
                decoder: Decoder::new(),
                texts: BTreeMap::new(),
                over: false,
            }))
        } else {
            Body::Text {
                pending: Vec::new(),
                pieces: Pieces::new(),
            }
        };
        BodyRedactor { body }
    }

    /// The next bytes read: returns what can be written now.
    pub fn feed(&mut self, secrets: &Secrets, bytes: &[u8]) -> String {
        match &mut self.body {
            Body::Text { pending, pieces } => {
                pending.extend_from_slice(bytes);
                text_piece(secrets, pending, pieces, Ending::More)
            }
            Body::Stream(stream) => {
                stream.decoder.feed(bytes);
                let mut out = String::new();
                stream.drain(secrets, &mut out);
                out
            }
        }
    }

    /// The body ended (or broke): returns the rest to write.
    pub fn finish(&mut self, secrets: &Secrets) -> String {
        match &mut self.body {
            Body::Text { pending, pieces } => text_piece(secrets, pending, pieces, Ending::Last),
            Body::Stream(stream) => {
                stream.decoder.feed_eof();
                let mut out = String::new();
                stream.drain(secrets, &mut out);
                if !stream.over {
                    stream.end_texts(secrets, &mut out);
                    if stream.decoder.is_truncated() {
                        // The body ended inside an event; so does the record (the event's
                        // own bytes are not kept: they were never redacted as a whole).
                        out.push_str("data:\n");
                    }
                    stream.over = true;
                }
                out
            }
        }
    }
}

/// What of `pending` can be written as one text: all of it for the [`Ending::Last`] piece,
/// else all but an incomplete character and a tail that could start a secret.
fn text_piece(
    secrets: &Secrets,
    pending: &mut Vec<u8>,
    pieces: &mut Pieces,
    ending: Ending,
) -> String {
    let valid = match (ending, std::str::from_utf8(pending)) {
        (_, Ok(_)) | (Ending::Last, Err(_)) => pending.len(),
        (Ending::More, Err(e)) if e.error_len().is_none() => e.valid_up_to(),
        (Ending::More, Err(_)) => pending.len(),
    };
    let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
    let (clean, held) = pieces.redact(secrets, &text, ending);
    let clean = clean.into_owned();
    let mut rest = text.as_bytes()[text.len() - held..].to_vec();
    rest.extend_from_slice(&pending[valid..]);
    *pending = rest;
    clean
}

impl EventStream {
    /// Writes every event decoded so far.
    fn drain(&mut self, secrets: &Secrets, out: &mut String) {
        loop {
            match self.decoder.poll_event() {
                Ok(Some(event)) if !self.over => self.event(secrets, event, out),
                Ok(Some(_)) => {}
                Ok(None) => return,
                // The answer fails here the same way; nothing after it is read.
                Err(_) => {
                    self.over = true;
                    return;
                }
            }
        }
    }

    /// One event, as a reader takes it (DESIGN.md's rule 2).
    fn event(&mut self, secrets: &Secrets, event: SseEvent, out: &mut String) {
        let name = event
            .event
            .as_deref()
            .map(|e| secrets.redact(e).into_owned());
        if event.event_type() == "error" {
            self.end_texts(secrets, out);
            write_event(out, name.as_deref(), &secrets.redact(&event.data));
            self.over = true;
            return;
        }
        let data = event.data.trim_ascii();
        if data.is_empty() {
            return; // a keep-alive
        }
        if data == "[DONE]" {
            self.end_texts(secrets, out);
            write_event(out, name.as_deref(), data);
            self.over = true;
            return;
        }
        let Ok(Value::Object(mut chunk)) = serde_json::from_str::<Value>(data) else {
            // Not a chunk: the answer fails on it.
            write_event(out, name.as_deref(), &secrets.redact(&event.data));
            return;
        };
        let error = chunk.get("error").is_some_and(|e| !e.is_null())
            || chunk.get("object").and_then(Value::as_str) == Some("error");
        if error {
            self.end_texts(secrets, out);
        }
        let choices = chunk.remove("choices");
        redact_map(secrets, &mut chunk);
        if let Some(mut choices) = choices {
            match &mut choices {
                Value::Array(list) => {
                    for choice in list {
                        match choice {
                            Value::Object(choice) => self.choice(secrets, choice),
                            other => secrets.redact_json(other),
                        }
                    }
                }
                other => secrets.redact_json(other),
            }
            chunk.insert("choices".into(), choices);
        }
        let text = serde_json::to_string(&chunk).unwrap_or_default();
        write_event(out, name.as_deref(), &text);
    }

    fn choice(&mut self, secrets: &Secrets, choice: &mut Map<String, Value>) {
        // Gemini sends `index: null`, some servers no index at all: that is choice 0.
        let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
        // Rule 4: a non-empty finish reason finishes the choice (null or "" does not).
        let finished = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .is_some_and(|r| !r.is_empty());
        let delta = choice.remove("delta");
        redact_map(secrets, choice);
        let mut delta = match delta {
            Some(Value::Object(delta)) => delta,
            Some(mut other) => {
                secrets.redact_json(&mut other);
                choice.insert("delta".into(), other);
                return;
            }
            None if finished && self.texts.keys().any(|(c, _)| *c == index) => Map::new(),
            None => return,
        };
        self.delta(secrets, index, &mut delta);
        if finished {
            // Nothing of this choice is read after its finish: what it holds goes here.
            let keys: Vec<(u64, Text)> = self
                .texts
                .keys()
                .filter(|(c, _)| *c == index)
                .copied()
                .collect();
            for key in keys {
                if let Some(held) = self.texts.remove(&key) {
                    let field = held.field;
                    let tail = held.end(secrets);
                    put_tail(&mut delta, key.1, field, tail);
                }
            }
        }
        choice.insert("delta".into(), Value::Object(delta));
    }

    /// The strings of a delta that continue a text, redacted as parts of it; every other
    /// string on its own.
    fn delta(&mut self, secrets: &Secrets, choice: u64, delta: &mut Map<String, Value>) {
        let content = delta.remove("content");
        let reasoning_content = delta.remove("reasoning_content");
        let reasoning = delta.remove("reasoning");
        let refusal = delta.remove("refusal");
        let calls = delta.remove("tool_calls");
        let function_call = delta.remove("function_call");
        redact_map(secrets, delta);
        match content {
            Some(Value::String(text)) => {
                let text = self.next(secrets, (choice, Text::Content), "content", &text);
                delta.insert("content".into(), Value::String(text));
            }
            Some(Value::Array(mut parts)) => {
                for part in &mut parts {
                    self.content_part(secrets, choice, part);
                }
                delta.insert("content".into(), Value::Array(parts));
            }
            Some(mut other) => {
                secrets.redact_json(&mut other);
                delta.insert("content".into(), other);
            }
            None => {}
        }
        self.reasoning(secrets, choice, delta, reasoning_content, reasoning);
        match refusal {
            Some(Value::String(text)) => {
                let text = self.next(secrets, (choice, Text::Refusal), "refusal", &text);
                delta.insert("refusal".into(), Value::String(text));
            }
            Some(mut other) => {
                secrets.redact_json(&mut other);
                delta.insert("refusal".into(), other);
            }
            None => {}
        }
        if let Some(mut calls) = calls {
            match &mut calls {
                Value::Array(list) => {
                    *list = self.tool_calls(secrets, choice, std::mem::take(list))
                }
                other => secrets.redact_json(other),
            }
            delta.insert("tool_calls".into(), calls);
        }
        if let Some(mut function_call) = function_call {
            match &mut function_call {
                Value::Object(f) => {
                    let arguments = f.remove("arguments");
                    redact_map(secrets, f);
                    let key = (choice, Text::FunctionArguments);
                    f.insert("arguments".into(), self.arguments(secrets, key, arguments));
                }
                other => secrets.redact_json(other),
            }
            delta.insert("function_call".into(), function_call);
        }
    }

    /// A part of a content array: its text continues the content, or the reasoning for a
    /// `thinking` or `reasoning` part.
    fn content_part(&mut self, secrets: &Secrets, choice: u64, part: &mut Value) {
        let Value::Object(part) = part else {
            return secrets.redact_json(part);
        };
        let thinking = matches!(
            part.get("type").and_then(Value::as_str),
            Some("thinking") | Some("reasoning")
        );
        let (key, field) = match thinking {
            true => ((choice, Text::Reasoning), "reasoning_content"),
            false => ((choice, Text::Content), "content"),
        };
        let text = part.remove("text");
        let thought = match thinking {
            true => part.remove("thinking"),
            false => None,
        };
        redact_map(secrets, part);
        if let Some(Value::String(text)) = thought {
            let text = self.next(secrets, key, field, &text);
            part.insert("thinking".into(), Value::String(text));
        } else if let Some(mut other) = thought {
            if let Value::Array(parts) = &mut other {
                for p in parts {
                    self.content_part_text(secrets, key, field, p);
                }
            } else {
                secrets.redact_json(&mut other);
            }
            part.insert("thinking".into(), other);
        }
        match text {
            Some(Value::String(text)) => {
                let text = self.next(secrets, key, field, &text);
                part.insert("text".into(), Value::String(text));
            }
            Some(mut other) => {
                secrets.redact_json(&mut other);
                part.insert("text".into(), other);
            }
            None => {}
        }
    }

    /// A `{ "text": … }` inside a thinking part's list.
    fn content_part_text(
        &mut self,
        secrets: &Secrets,
        key: (u64, Text),
        field: &'static str,
        part: &mut Value,
    ) {
        let Value::Object(part) = part else {
            return secrets.redact_json(part);
        };
        let text = part.remove("text");
        redact_map(secrets, part);
        match text {
            Some(Value::String(text)) => {
                let text = self.next(secrets, key, field, &text);
                part.insert("text".into(), Value::String(text));
            }
            Some(mut other) => {
                secrets.redact_json(&mut other);
                part.insert("text".into(), other);
            }
            None => {}
        }
    }

    /// Rule 4: the reasoning comes from `reasoning_content` when it is a non-empty string,
    /// else from `reasoning`, never both from one delta. The one a reader takes continues the
    /// reasoning; the other is redacted on its own, and emptied when the one taken is emptied
    /// (its tail held back), so that a reader does not take it instead.
    fn reasoning(
        &mut self,
        secrets: &Secrets,
        choice: u64,
        delta: &mut Map<String, Value>,
        reasoning_content: Option<Value>,
        reasoning: Option<Value>,
    ) {
        let text_of = |v: &Option<Value>| {
            v.as_ref()
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let key = (choice, Text::Reasoning);
        let (taken, other) = match (text_of(&reasoning_content), text_of(&reasoning)) {
            (Some(text), _) => (Some(("reasoning_content", text)), ("reasoning", reasoning)),
            (None, Some(text)) => (
                Some(("reasoning", text)),
                ("reasoning_content", reasoning_content),
            ),
            (None, None) => {
                for (field, value) in [
                    ("reasoning_content", reasoning_content),
                    ("reasoning", reasoning),
                ] {
                    if let Some(mut value) = value {
                        secrets.redact_json(&mut value);
                        delta.insert(field.into(), value);
                    }
                }
                return;
            }
        };
        let emptied = match taken {
            Some((field, text)) => {
                let text = self.next(secrets, key, field, &text);
                let emptied = text.is_empty();
                delta.insert(field.into(), Value::String(text));
                emptied
            }
            None => false,
        };
        let (field, value) = other;
        if let Some(mut value) = value {
            match (&value, emptied) {
                (Value::String(s), true) if !s.is_empty() => value = Value::String(String::new()),
                _ => secrets.redact_json(&mut value),
            }
            delta.insert(field.into(), value);
        }
    }

    /// Rule 5: a tool call's arguments continue its text. Before a fragment that starts a new
    /// call (another id at the same index; without an index, a name or another id), the old
    /// call's held tail is written in a fragment of its own, which a reader adds to the old
    /// call.
    fn tool_calls(&mut self, secrets: &Secrets, choice: u64, list: Vec<Value>) -> Vec<Value> {
        let mut out = Vec::with_capacity(list.len());
        for call in list {
            let Value::Object(mut call) = call else {
                let mut other = call;
                secrets.redact_json(&mut other);
                out.push(other);
                continue;
            };
            let index = call.get("index").and_then(Value::as_u64);
            let key = (choice, Text::Call(index));
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            let named = call
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            if let Some(held) = self.texts.get(&key) {
                let new_call = match (index, &id) {
                    (Some(_), Some(id)) => held.id.as_deref().is_some_and(|have| have != id),
                    (Some(_), None) => false,
                    (None, Some(id)) => held.id.as_deref() != Some(id.as_str()),
                    (None, None) => named,
                };
                if new_call {
                    if let Some(held) = self.texts.remove(&key) {
                        let tail = held.end(secrets);
                        if !tail.is_empty() {
                            out.push(call_fragment(index, tail));
                        }
                    }
                }
            }
            let held = self.texts.entry(key).or_default();
            if held.id.is_none() {
                held.id = id;
            }
            let arguments = match call.get_mut("function") {
                Some(Value::Object(f)) => f.remove("arguments"),
                _ => None,
            };
            redact_map(secrets, &mut call);
            if let Some(arguments) = arguments {
                let arguments = self.arguments(secrets, key, Some(arguments));
                if let Some(Value::Object(f)) = call.get_mut("function") {
                    f.insert("arguments".into(), arguments);
                }
            }
            out.push(Value::Object(call));
        }
        out
    }

    /// Arguments that continue the text `key` when they are a string; redacted on their own
    /// otherwise (a provider that sends them as a JSON object, whole).
    fn arguments(
        &mut self,
        secrets: &Secrets,
        key: (u64, Text),
        arguments: Option<Value>,
    ) -> Value {
        match arguments {
            Some(Value::String(text)) => Value::String(self.next(secrets, key, "arguments", &text)),
            Some(mut other) => {
                secrets.redact_json(&mut other);
                other
            }
            None => Value::Null,
        }
    }

    /// The next delta of the text `key`, read from `field`.
    fn next(
        &mut self,
        secrets: &Secrets,
        key: (u64, Text),
        field: &'static str,
        text: &str,
    ) -> String {
        let held = self.texts.entry(key).or_default();
        held.field = field;
        held.next(secrets, text)
    }

    /// Ends every text: what they hold goes into a chunk of its own.
    fn end_texts(&mut self, secrets: &Secrets, out: &mut String) {
        let mut deltas: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
        for ((choice, text), held) in std::mem::take(&mut self.texts) {
            let field = held.field;
            let tail = held.end(secrets);
            if !tail.is_empty() {
                put_tail(deltas.entry(choice).or_default(), text, field, tail);
            }
        }
        if deltas.is_empty() {
            return;
        }
        let choices: Vec<Value> = deltas
            .into_iter()
            .map(|(index, delta)| serde_json::json!({ "index": index, "delta": delta }))
            .collect();
        let chunk = serde_json::json!({ "choices": choices });
        write_event(out, None, &chunk.to_string());
    }
}

/// Adds the held tail of a text to `delta`, after what the delta has of it.
fn put_tail(delta: &mut Map<String, Value>, text: Text, field: &'static str, tail: String) {
    if tail.is_empty() {
        return;
    }
    let field = match text {
        Text::Content => "content",
        Text::Refusal => "refusal",
        // A tail of reasoning read from a content part goes where a delta's reasoning goes.
        Text::Reasoning if field == "reasoning" => "reasoning",
        Text::Reasoning => "reasoning_content",
        Text::FunctionArguments => {
            let function = delta
                .entry("function_call")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(f) = function {
                append(f, "arguments", tail);
            }
            return;
        }
        Text::Call(index) => {
            let calls = delta
                .entry("tool_calls")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(calls) = calls {
                calls.push(call_fragment(index, tail));
            }
            return;
        }
    };
    match delta.get_mut(field) {
        Some(Value::Array(parts)) => {
            parts.push(serde_json::json!({ "type": "text", "text": tail }));
        }
        _ => append(delta, field, tail),
    }
}

/// Appends `tail` to the string at `field`, or sets it.
fn append(map: &mut Map<String, Value>, field: &str, tail: String) {
    match map.get_mut(field) {
        Some(Value::String(s)) => s.push_str(&tail),
        _ => {
            map.insert(field.to_owned(), Value::String(tail));
        }
    }
}

/// A fragment that only adds `arguments` to a call: at `index`, or without one (the last
/// call).
fn call_fragment(index: Option<u64>, arguments: String) -> Value {
    match index {
        Some(index) => {
            serde_json::json!({ "index": index, "function": { "arguments": arguments } })
        }
        None => serde_json::json!({ "function": { "arguments": arguments } }),
    }
}

/// Redacts every key and value of `map`.
fn redact_map(secrets: &Secrets, map: &mut Map<String, Value>) {
    let mut value = Value::Object(std::mem::take(map));
    secrets.redact_json(&mut value);
    if let Value::Object(redacted) = value {
        *map = redacted;
    }
}

/// Writes an event: its type when it had one, then its data, one `data:` line per line.
fn write_event(out: &mut String, event: Option<&str>, data: &str) {
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}
