use super::*;
use crate::stream::{StreamError, Truncation};
use crate::{ChatStream, Completion, StreamFailure};
use proptest::strategy::Strategy;
use serde_json::json;

const KEY: &str = "sk-proj-a7Kq9xZ2mB4nW8pL3vR6";

fn secrets_of(values: &[&str]) -> Secrets {
    let mut s = Secrets::new();
    for v in values {
        s.add(v);
    }
    s
}

/// `body` through a [`BodyRedactor`] for a 200 event stream, fed in the pieces `cuts` makes.
fn rewrite(secrets: &Secrets, body: &[u8], cuts: &[usize]) -> String {
    rewrite_as(secrets, 200, Some("text/event-stream"), body, cuts)
}

fn rewrite_as(
    secrets: &Secrets,
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
    cuts: &[usize],
) -> String {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    cuts.sort_unstable();
    let mut redactor = BodyRedactor::new(status, content_type);
    let mut out = String::new();
    let mut from = 0;
    for cut in cuts.into_iter().chain([body.len()]) {
        out.push_str(&redactor.feed(secrets, &body[from..cut]));
        from = cut;
    }
    out.push_str(&redactor.finish(secrets));
    out
}

/// What a reader accumulates from `body`.
fn read(body: &[u8]) -> Result<Completion, StreamFailure> {
    let mut stream = ChatStream::new();
    stream.feed(body);
    stream.finish()
}

fn event(chunk: serde_json::Value) -> String {
    format!("data: {chunk}\n\n")
}

fn content(text: &str) -> String {
    event(json!({"choices": [{"index": 0, "delta": {"content": text}}]}))
}

fn arguments(index: u64, id: Option<&str>, text: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": text}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
        call["function"]["name"] = json!("run_command");
    }
    event(json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}))
}

fn finish(reason: &str) -> String {
    event(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}))
}

/// Whether `text` shows `secret` or any of its 8-byte pieces that is not ordinary text.
fn shows(text: &str, secret: &str) -> bool {
    let text = text.to_ascii_lowercase();
    let secret = secret.to_ascii_lowercase();
    text.contains(&secret)
        || secret
            .as_bytes()
            .windows(FRAGMENT)
            .filter(|w| !ordinary_fragment(w))
            .any(|w| text.as_bytes().windows(FRAGMENT).any(|t| t == w))
}

/// Every string of every chunk of an event stream, each stream's deltas joined: the deltas as
/// someone who decodes the record would put them together.
fn joined_strings(body: &str) -> String {
    fn walk(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => out.push_str(s),
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            serde_json::Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    for line in body.lines() {
        if let Some(data) = line.strip_prefix("data: ") {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(data) {
                walk(&v, &mut out);
            }
        }
    }
    out
}

/// The issue's case: a key streamed 3 bytes a delta, in the answer and in a call's arguments.
fn key_in_3_byte_deltas() -> String {
    let mut body = event(json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}));
    let text = format!("your key is {KEY}.");
    for piece in text.as_bytes().chunks(3) {
        body.push_str(&content(std::str::from_utf8(piece).unwrap()));
    }
    body.push_str(&arguments(0, Some("c1"), ""));
    let args = json!({"command": format!("echo {KEY}")}).to_string();
    for piece in args.as_bytes().chunks(3) {
        body.push_str(&arguments(0, None, std::str::from_utf8(piece).unwrap()));
    }
    body.push_str(&finish("tool_calls"));
    body.push_str("data: [DONE]\n\n");
    body
}

#[test]
fn a_key_streamed_in_3_byte_deltas_cannot_be_put_together_again() {
    let s = secrets_of(&[KEY]);
    let body = key_in_3_byte_deltas();
    // The raw bytes never hold the key whole: only decoding the deltas gives it back.
    assert!(!body.contains(KEY));
    assert!(shows(&joined_strings(&body), KEY));
    let whole = rewrite(&s, body.as_bytes(), &[]);
    let bytewise: Vec<usize> = (0..body.len()).collect();
    assert_eq!(rewrite(&s, body.as_bytes(), &bytewise), whole);
    assert!(!shows(&whole, KEY), "{whole}");
    assert!(!shows(&joined_strings(&whole), KEY), "{whole}");
    // And it reads back as the redacted answer.
    let choice = &read(whole.as_bytes()).unwrap().choices[0];
    assert_eq!(choice.content, "your key is [redacted].");
    assert_eq!(
        choice.tool_calls[0].arguments,
        r#"{"command":"echo [redacted]"}"#
    );
    assert_eq!(choice.tool_calls[0].id.as_deref(), Some("c1"));
    assert_eq!(choice.tool_calls[0].name, "run_command");
}

#[test]
fn a_stream_without_secrets_reads_back_the_same() {
    let s = secrets_of(&[KEY]);
    let mut body = event(json!({"id": "x1", "model": "m", "choices": [{"index": 0,
        "delta": {"role": "assistant", "reasoning_content": "think", "reasoning": "think"}}]}));
    body.push_str(&event(
        json!({"choices": [{"index": 0, "delta": {"reasoning": "ing"}}]}),
    ));
    body.push_str(&content("Hello, "));
    body.push_str(": a comment\n\n");
    body.push_str("data:   \n\n");
    body.push_str(&content("sk-proj- is a prefix"));
    body.push_str(&event(
        json!({"choices": [{"index": 0, "delta": {"refusal": "no"}}]}),
    ));
    body.push_str(&arguments(0, Some("c1"), "{\"a\":"));
    body.push_str(&arguments(0, None, "1}"));
    body.push_str(&event(
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"id": "c2", "function": {"name": "grep", "arguments": "{}"}}]}}]}),
    ));
    body.push_str(&event(
        json!({"choices": [{"index": 1, "delta": {"content": "second"},
        "finish_reason": "stop"}]}),
    ));
    body.push_str(&finish("tool_calls"));
    body.push_str(&event(json!({"choices": [], "usage": {"prompt_tokens": 3,
        "completion_tokens": 4, "total_tokens": 7}})));
    body.push_str("data: [DONE]\n\ndata: ignored\n\n");
    let original = read(body.as_bytes()).unwrap();
    for secrets in [Secrets::new(), s] {
        let out = rewrite(&secrets, body.as_bytes(), &[7, 100, 101, 300]);
        assert_eq!(read(out.as_bytes()).unwrap(), original, "{out}");
    }
}

#[test]
fn a_held_tail_goes_to_the_old_call_before_a_new_one_starts() {
    let s = secrets_of(&[KEY]);
    let cut = 12;
    // Without an index: a named fragment starts the next call.
    let mut body = event(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"id": "a", "function": {"name": "f", "arguments": format!("x {}", &KEY[..cut])}}]}}]}));
    body.push_str(&event(
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"function": {"arguments": &KEY[cut..]}},
        {"id": "b", "function": {"name": "g", "arguments": "sk-proj-"}}]}}]}),
    ));
    body.push_str(&finish("tool_calls"));
    let out = rewrite(&s, body.as_bytes(), &[]);
    let calls = &read(out.as_bytes()).unwrap().choices[0].tool_calls;
    assert_eq!(calls[0].arguments, s.redact(&format!("x {KEY}")), "{out}");
    assert_eq!(calls[1].arguments, "sk-proj-");
    // The same index with another id is another call too.
    let mut body = arguments(0, Some("a"), &format!("x {}", &KEY[..cut]));
    body.push_str(&arguments(0, Some("b"), "y"));
    body.push_str(&finish("tool_calls"));
    let out = rewrite(&s, body.as_bytes(), &[]);
    let calls = &read(out.as_bytes()).unwrap().choices[0].tool_calls;
    assert_eq!(calls[0].arguments, "x sk[redacted]");
    assert_eq!(calls[1].arguments, "y");
}

#[test]
fn a_tail_held_at_the_end_is_written_before_done_an_error_or_the_end() {
    let s = secrets_of(&[KEY]);
    let start = format!("key {}", &KEY[..12]);
    for end in [
        "data: [DONE]\n\n".to_owned(),
        "event: error\ndata: {\"message\":\"overloaded\"}\n\n".to_owned(),
        event(json!({"error": {"message": "overloaded"}})),
        String::new(),
    ] {
        let body = format!("{}{end}", content(&start));
        let out = rewrite(&s, body.as_bytes(), &[]);
        assert!(!shows(&joined_strings(&out), KEY), "{out}");
        let content = match read(out.as_bytes()) {
            Ok(c) => c.choices[0].content.clone(),
            Err(failure) => failure.partial.choices[0].content.clone(),
        };
        assert_eq!(content, "key sk[redacted]", "{out}");
    }
}

#[test]
fn a_body_cut_inside_an_event_stays_cut() {
    let s = secrets_of(&[KEY]);
    let body = format!(
        "{}data: {{\"choices\":[{{\"delta\":{{\"content\":\"{KEY}",
        content("a")
    );
    let out = rewrite(&s, body.as_bytes(), &[]);
    assert!(!shows(&out, KEY), "{out}");
    let failure = read(out.as_bytes()).unwrap_err();
    assert_eq!(
        failure.error,
        StreamError::Truncated {
            truncation: Truncation::MidEvent
        }
    );
}

#[test]
fn other_bodies_are_one_text() {
    let s = secrets_of(&[KEY]);
    let body = format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#);
    let bytewise: Vec<usize> = (0..body.len()).collect();
    for (status, content_type) in [
        (401, Some("application/json")),
        (200, Some("application/json")),
        (500, Some("text/event-stream")),
        (200, Some("text/html")),
    ] {
        let out = rewrite_as(&s, status, content_type, body.as_bytes(), &bytewise);
        assert_eq!(
            out,
            r#"{"error":{"message":"Incorrect API key provided: [redacted]"}}"#
        );
    }
    // Multi-byte text cut inside a character.
    let out = rewrite_as(&s, 400, None, "é é".as_bytes(), &[1, 2, 3]);
    assert_eq!(out, "é é");
}

proptest::proptest! {
    #![proptest_config(crate::proptest_seeds::config())]

    /// For a random strong secret and random answers made of words and pieces of it, cut into
    /// random deltas of the content, the reasoning and a call's arguments, and the body fed in
    /// random reads: the record never shows the secret or a piece of it, neither in its bytes
    /// nor with each text's deltas joined, and it reads back as the redacted answer (as the
    /// same answer when it held no secret).
    #[test]
    fn a_recorded_stream_reads_back_redacted_and_shows_no_secret(
        secret in super::tests::strong_secret(),
        parts in proptest::collection::vec(
            (0usize..3, proptest::prop_oneof![
                proptest::sample::select(vec!["Hello ", "empty ", "sk-", "\"q\" ", "é"])
                    .prop_map(String::from),
                "[a-z0-9 ]{0,6}",
                proptest::strategy::Just(String::new()),
            ], 0usize..40, 1usize..40),
            0..12,
        ),
        deltas in proptest::collection::vec(1usize..6, 1..8),
        cuts in proptest::collection::vec(0usize..2000, 0..10),
        with_secrets in proptest::bool::ANY,
    ) {
        // Three texts (content, reasoning, arguments), each of words and pieces of the secret.
        let mut texts = [String::new(), String::new(), String::new()];
        for (which, word, from, len) in &parts {
            let piece = if word.is_empty() {
                let start = from % secret.len();
                secret[start..(start + len).min(secret.len())].to_owned()
            } else {
                word.clone()
            };
            texts[*which].push_str(&piece);
        }
        // Each text cut into deltas (the sizes in turn), interleaved.
        let mut body = event(json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}));
        body.push_str(&arguments(0, Some("c1"), ""));
        let mut at = [0usize; 3];
        let mut n = 0;
        while at.iter().zip(&texts).any(|(a, t)| a < &t.len()) {
            let which = n % 3;
            let text = &texts[which];
            let mut end = (at[which] + deltas[n % deltas.len()]).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let piece = &text[at[which]..end];
            at[which] = end;
            n += 1;
            body.push_str(&match which {
                0 => content(piece),
                1 => event(json!({"choices": [{"index": 0, "delta": {"reasoning_content": piece}}]})),
                _ => arguments(0, None, piece),
            });
        }
        body.push_str(&finish("tool_calls"));
        body.push_str("data: [DONE]\n\n");
        let s = if with_secrets { secrets_of(&[&secret]) } else { Secrets::new() };
        let out = rewrite(&s, body.as_bytes(), &cuts);
        let original = read(body.as_bytes()).unwrap();
        let back = read(out.as_bytes()).unwrap();
        let choice = &back.choices[0];
        let reasoning = choice.reasoning.clone().unwrap_or_default();
        let arguments = choice.tool_calls.first().map(|c| c.arguments.clone()).unwrap_or_default();
        proptest::prop_assert_eq!(&choice.content, &s.redact(&texts[0]));
        proptest::prop_assert_eq!(&reasoning, &s.redact(&texts[1]));
        proptest::prop_assert_eq!(&arguments, &s.redact(&texts[2]));
        let has_secret = texts.iter().any(|t| shows(t, &secret));
        if !with_secrets || !has_secret {
            proptest::prop_assert_eq!(&back, &original);
        }
        if with_secrets {
            proptest::prop_assert!(!shows(&out, &secret), "{}", out);
            for text in [&choice.content, &reasoning, &arguments] {
                proptest::prop_assert!(!shows(text, &secret), "{}", text);
            }
        }
    }
}
