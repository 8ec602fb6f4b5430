use super::*;
use crate::http::{Method, Secret};
use serde_json::Value;
use std::time::Duration;

/// A base instant for simulated time; nothing reads the clock after.
#[allow(clippy::disallowed_methods)]
fn t0() -> Instant {
    Instant::now()
}

/// A canned answer: status, content type, body.
type Answer = (u16, &'static str, String);

fn sse(chunks: &[Value], done: bool) -> String {
    let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    if done {
        s.push_str("data: [DONE]\n\n");
    }
    s
}

fn delta(d: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]})
}

fn text_stream(usage: bool) -> String {
    let mut c = vec![delta(json!({"role": "assistant", "content": ""}))];
    for w in ["1", " 2", " 3"] {
        c.push(delta(json!({"content": w})));
    }
    c.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    if usage {
        c.push(json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}}));
    }
    sse(&c, true)
}

fn call_stream(n: usize) -> String {
    let mut c = vec![];
    for (i, city) in ["Paris", "Tokyo"].iter().take(n).enumerate() {
        c.push(delta(json!({"tool_calls": [{"index": i, "id": format!("c{i}"), "type": "function", "function": {"name": "get_time", "arguments": ""}}]})));
        c.push(delta(json!({"tool_calls": [{"index": i, "function": {"arguments": format!("{{\"city\":\"{city}\"}}")}}]})));
    }
    c.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    sse(&c, true)
}

fn chat_json(text: &str) -> String {
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}).to_string()
}

fn call_json() -> String {
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "get_time", "arguments": "{\"city\":\"Paris\"}"}}]},
        "finish_reason": "tool_calls"}]}).to_string()
}

fn models() -> String {
    json!({"object": "list", "data": [{"id": "m", "context_length": 8192}, {"id": "other"}]})
        .to_string()
}

fn error(status: u16, message: &str) -> Answer {
    (
        status,
        "application/json",
        json!({"error": {"message": message}}).to_string(),
    )
}

/// A well-behaved provider's answer to `body` (None for GET /models).
fn good(req: &HttpRequest) -> Answer {
    if req.method == Method::Get {
        return (200, "application/json", models());
    }
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let stream = body["stream"] == true;
    let tools = body.get("tools").is_some();
    let text = body["messages"][0]["content"].as_str().unwrap().to_owned();
    match (stream, tools) {
        (false, false) if body.get("response_format").is_some() => {
            (200, "application/json", chat_json("{\"city\": \"Paris\"}"))
        }
        (false, false) => (200, "application/json", chat_json("pong")),
        (true, false) => (
            200,
            "text/event-stream",
            text_stream(body.get("stream_options").is_some()),
        ),
        (false, true) => (200, "application/json", call_json()),
        (true, true) => (
            200,
            "text/event-stream",
            call_stream(if text.contains("Tokyo") { 2 } else { 1 }),
        ),
    }
}

/// Runs a probe against `server`, delivering each body in two pieces 10 ms apart.
fn run(server: impl Fn(&HttpRequest) -> Result<Answer, TransportError>) -> (Report, Vec<Value>) {
    let provider = Provider::new(
        "http://127.0.0.1:9/v1",
        Some(Secret::new("sk-probe-secret")),
    );
    let mut probe = Probe::new(provider, "m", ProbeOptions::default());
    let mut now = t0();
    let mut sent = Vec::new();
    while let Some(req) = probe.next_request(now) {
        assert!(!format!("{req:?}").contains("sk-probe-secret"));
        sent.push(if req.body.is_empty() {
            json!({"GET": req.url})
        } else {
            serde_json::from_slice(&req.body).unwrap()
        });
        assert!(probe.next_request(now).is_none(), "one request at a time");
        now += Duration::from_millis(50);
        match server(&req) {
            Err(e) => probe.handle_transport_error(now, req.id, e),
            Ok((status, ct, body)) => {
                probe.handle_response_head(now, req.id, status, [("content-type", ct.as_bytes())]);
                let (a, b) = body.as_bytes().split_at(body.len() / 2);
                probe.handle_response_data(now, req.id, a);
                now += Duration::from_millis(10);
                probe.handle_response_data(now, req.id, b);
                probe.handle_response_end(now, req.id);
            }
        }
        assert!(sent.len() < 20, "the probe ends");
    }
    (probe.report(), sent)
}

fn verdicts(report: &Report) -> Vec<(Check, Verdict)> {
    report
        .findings
        .iter()
        .map(|f| (f.check, f.verdict))
        .collect()
}

#[test]
fn a_well_behaved_provider_is_ok_everywhere_and_learns_nothing() {
    let (report, sent) = run(|r| Ok(good(r)));
    for f in &report.findings {
        assert_eq!(f.verdict, Verdict::Ok, "{f:?}");
    }
    assert!(report.chat_works);
    assert!(report.quirks.is_default());
    assert_eq!(report.finding(Check::Models).detail, "2 models");
    assert_eq!(report.finding(Check::ContextWindow).detail, "8192 tokens");
    assert!(
        report
            .finding(Check::Streaming)
            .detail
            .contains("first token after 50 ms")
    );
    assert_eq!(sent.len(), 8);
    assert_eq!(sent[7]["response_format"]["type"], "json_schema");
    assert_eq!(sent[1]["max_tokens"], TOKEN_LIMIT);
    assert_eq!(sent[2]["stream_options"]["include_usage"], true);
    assert_eq!(sent[3]["tool_choice"], "auto");
    assert_eq!(sent[4]["tool_choice"], "auto");
    assert!(sent[5].get("tool_choice").is_none());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["findings"][0]["check"], "reachable");
    assert_eq!(json["findings"][0]["verdict"], "ok");
    assert_eq!(json["quirks"], json!({}));
}

#[test]
fn refused_stream_options_and_max_tokens_are_learned() {
    let (report, sent) = run(|r| {
        if r.method == Method::Post {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            if body.get("stream_options").is_some() {
                return Ok((422, "application/json",
                    r#"{"detail":[{"loc":["body","stream_options"],"msg":"extra fields not permitted"}]}"#.into()));
            }
            if body.get("max_tokens").is_some() {
                return Ok(error(
                    400,
                    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                ));
            }
        }
        Ok(good(r))
    });
    assert_eq!(report.quirks.stream_options, StreamOptions::Omit);
    assert_eq!(
        report.quirks.max_tokens_field,
        MaxTokensField::MaxCompletionTokens
    );
    assert_eq!(
        report.finding(Check::StreamUsage).verdict,
        Verdict::Unsupported
    );
    assert!(report.finding(Check::StreamUsage).action.contains("saved"));
    assert_eq!(report.finding(Check::TokenLimitField).verdict, Verdict::Ok);
    assert!(
        report
            .finding(Check::TokenLimitField)
            .detail
            .contains("max_completion_tokens accepted")
    );
    assert_eq!(report.finding(Check::Streaming).verdict, Verdict::Ok);
    assert_eq!(report.finding(Check::Tools).verdict, Verdict::Ok);
    assert!(report.chat_works);
    // Every request after the lessons obeys them.
    for body in &sent[4..] {
        assert!(body.get("stream_options").is_none(), "{body}");
        assert!(body.get("max_tokens").is_none(), "{body}");
    }
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        json["quirks"],
        json!({"streamOptions": false, "maxTokensField": "max_completion_tokens"})
    );
}

#[test]
fn unreachable_servers_stop_the_probe() {
    let (report, sent) = run(|_| {
        Err(TransportError::new(
            TransportErrorKind::Tls,
            "invalid peer certificate",
        ))
    });
    assert_eq!(sent.len(), 1);
    assert_eq!(report.finding(Check::Reachable).verdict, Verdict::Failed);
    assert!(
        report
            .finding(Check::Reachable)
            .action
            .contains("skipVerify")
    );
    assert!(!report.chat_works);
    for f in &report.findings[1..] {
        assert_eq!(f.verdict, Verdict::Skipped, "{f:?}");
        assert!(f.detail.contains("not reachable"));
    }
}

#[test]
fn a_refused_key_fails_authentication_and_stops() {
    let (report, sent) = run(|_| Ok(error(401, "Incorrect API key provided")));
    assert_eq!(sent.len(), 2, "models and one chat");
    let auth = report.finding(Check::Authentication);
    assert_eq!(auth.verdict, Verdict::Failed);
    assert!(auth.detail.contains("Incorrect API key"), "{auth:?}");
    assert!(auth.action.contains("key is refused"));
    assert_eq!(report.finding(Check::Streaming).verdict, Verdict::Skipped);
    assert!(!report.chat_works);
}

#[test]
fn a_provider_without_tools_or_models_list() {
    let (report, _) = run(|r| {
        if r.method == Method::Get {
            return Ok(error(404, "Not Found"));
        }
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        if body.get("tools").is_some() {
            return Ok(error(400, "this model does not support tools"));
        }
        Ok(good(r))
    });
    assert_eq!(
        verdicts(&report)[2..5],
        [
            (Check::Models, Verdict::Unsupported),
            (Check::ModelListed, Verdict::Skipped),
            (Check::ContextWindow, Verdict::Skipped)
        ]
    );
    assert_eq!(report.finding(Check::Authentication).verdict, Verdict::Ok);
    for c in [
        Check::Tools,
        Check::ToolsStreamedAuto,
        Check::ToolsStreamed,
        Check::ParallelToolCalls,
    ] {
        assert_eq!(report.finding(c).verdict, Verdict::Unsupported, "{c:?}");
    }
    assert!(report.chat_works, "chat works without tools");
}

#[test]
fn tool_calls_only_with_tool_choice_auto_teach_the_quirk() {
    let (report, _) = run(|r| {
        if r.method == Method::Post {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            if body.get("tools").is_some() && body.get("tool_choice").is_none() {
                return Ok((
                    200,
                    "text/event-stream",
                    sse(&[delta(json!({"content": "It is noon."}))], true),
                ));
            }
        }
        Ok(good(r))
    });
    assert_eq!(report.quirks.tool_choice, ToolChoice::Auto);
    let f = report.finding(Check::ToolsStreamed);
    assert_eq!(f.verdict, Verdict::Degraded);
    assert!(f.action.contains("tool_choice: auto"), "{f:?}");
    // The parallel request then carries it, and gets both calls.
    assert_eq!(
        report.finding(Check::ParallelToolCalls).verdict,
        Verdict::Ok
    );
}

#[test]
fn stream_quirks_are_listed_and_absorbed() {
    let odd_calls = {
        let c = [
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "get_time", "arguments": "{\"city\":"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "get_time", "arguments": "\"Paris\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls", "usage": {"completion_tokens": 4}}]}),
        ];
        sse(&c, false)
    };
    let (report, _) = run(move |r| {
        if r.method == Method::Post {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            if body["stream"] == true && body.get("tool_choice").is_some() {
                let whole = delta(
                    json!({"tool_calls": [{"id": "w", "function": {"name": "get_time", "arguments": "{\"city\":\"Paris\"}"}}]}),
                );
                return Ok((200, "text/event-stream", sse(&[whole], true)));
            }
            if body["stream"] == true && body.get("tools").is_some() {
                return Ok((200, "text/event-stream", odd_calls.replace("\n", "\r\n")));
            }
            if body["stream"] == true {
                let c = [
                    delta(json!({"reasoning_content": "hmm"})),
                    delta(json!({"content": "1 2 3"})),
                ];
                return Ok((
                    200,
                    "text/event-stream",
                    format!(": keep-alive\n\n{}", sse(&c, true)),
                ));
            }
        }
        Ok(good(r))
    });
    let f = report.finding(Check::StreamQuirks);
    assert_eq!(f.verdict, Verdict::Ok);
    for q in [
        "CRLF line ends",
        "choice without index",
        "tool call without index",
        "tool name repeated in every chunk",
        "usage inside a choice",
        "no [DONE] at the end",
        "keep-alive comment lines",
        "whole tool call in one chunk",
    ] {
        assert!(f.detail.contains(q), "{q} missing in {}", f.detail);
    }
    assert_eq!(f.action, "absorbed by the stream accumulator");
    assert_eq!(
        report.finding(Check::ToolsStreamed).verdict,
        Verdict::Ok,
        "the call was rebuilt"
    );
    assert_eq!(
        report.finding(Check::ToolsStreamedAuto).verdict,
        Verdict::Ok
    );
    assert_eq!(
        report.finding(Check::ParallelToolCalls).verdict,
        Verdict::Degraded
    );
    assert_eq!(report.finding(Check::Reasoning).detail, "reasoning_content");
    assert_eq!(
        report.finding(Check::StreamUsage).verdict,
        Verdict::Degraded
    );
}

#[test]
fn a_server_that_ignores_stream_true_is_degraded_but_works() {
    let (report, _) = run(|r| {
        if r.method == Method::Post {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            if body.get("tools").is_none() {
                return Ok((200, "application/json", chat_json("1 2 3")));
            }
            return Ok((200, "application/json", call_json()));
        }
        Ok(good(r))
    });
    let f = report.finding(Check::Streaming);
    assert_eq!(f.verdict, Verdict::Degraded);
    assert!(f.detail.contains("stream: true ignored"));
    assert!(report.chat_works);
    assert_eq!(report.finding(Check::ToolsStreamed).verdict, Verdict::Ok);
}

#[test]
fn broken_streams_and_garbage_fail_without_panicking() {
    let bodies: [Answer; 4] = [
        (
            200,
            "text/event-stream",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"1".into(),
        ),
        (200, "text/event-stream", "data: not json\n\n".into()),
        (200, "text/html", "<html>hello</html>".into()),
        (500, "text/plain", String::new()),
    ];
    for answer in bodies {
        let a = answer.clone();
        let (report, _) = run(move |r| {
            if r.method == Method::Post {
                let body: Value = serde_json::from_slice(&r.body).unwrap();
                if body["stream"] == true {
                    return Ok(a.clone());
                }
            }
            Ok(good(r))
        });
        assert!(!report.chat_works, "{answer:?}");
        assert_eq!(
            report.finding(Check::Streaming).verdict,
            Verdict::Failed,
            "{answer:?}"
        );
        // The plain chat worked, so tools were still tried.
        assert_ne!(
            report.finding(Check::Tools).verdict,
            Verdict::Skipped,
            "{answer:?}"
        );
    }
}

#[test]
fn local_addresses() {
    for (url, local) in [
        ("http://127.0.0.1:8080/v1", true),
        ("http://localhost:11434/v1", true),
        ("http://[::1]:8000/v1", true),
        ("http://192.168.1.5/v1", true),
        ("http://user@10.0.0.2:80/v1", true),
        ("http://example.com/v1", false),
        ("http://8.8.8.8/v1", false),
        ("garbage", false),
    ] {
        assert_eq!(judge::is_local(url), local, "{url}");
    }
}

#[test]
fn responses_to_unknown_requests_are_ignored() {
    let mut probe = Probe::new(
        Provider::new("https://x/v1", None),
        "m",
        ProbeOptions { skip_verify: true },
    );
    let now = t0();
    let req = probe.next_request(now).unwrap();
    probe.handle_response_head(now, RequestId(99), 200, []);
    probe.handle_response_end(now, RequestId(99));
    assert!(
        probe.next_request(now).is_none(),
        "still waiting for {:?}",
        req.id
    );
    probe.handle_response_head(
        now,
        req.id,
        200,
        [("content-type", &b"application/json"[..])],
    );
    probe.handle_response_data(now, req.id, models().as_bytes());
    probe.handle_response_end(now, req.id);
    let report = probe.report();
    assert_eq!(report.finding(Check::Reachable).verdict, Verdict::Degraded);
    assert!(
        report
            .finding(Check::Reachable)
            .detail
            .contains("skipVerify")
    );
    assert_eq!(report.finding(Check::ModelListed).verdict, Verdict::Ok);
    assert!(probe.next_request(now).is_some(), "the chat comes next");
}

#[test]
fn a_refused_response_format_is_learned_and_an_ignored_one_is_degraded() {
    let with_format = |r: &HttpRequest| {
        r.method == Method::Post
            && serde_json::from_slice::<Value>(&r.body)
                .unwrap()
                .get("response_format")
                .is_some()
    };
    let (report, _) = run(|r| {
        if with_format(r) {
            return Ok(error(
                400,
                "'response_format' of type 'json_schema' is not supported",
            ));
        }
        Ok(good(r))
    });
    let f = report.finding(Check::StructuredOutput);
    assert_eq!(f.verdict, Verdict::Unsupported, "{f:?}");
    assert!(f.action.contains("saved"), "{f:?}");
    assert_eq!(
        report.quirks.response_format,
        crate::quirks::ResponseFormat::Omit
    );
    let (report, _) = run(|r| {
        if with_format(r) {
            return Ok((200, "application/json", chat_json("Paris")));
        }
        Ok(good(r))
    });
    let f = report.finding(Check::StructuredOutput);
    assert_eq!(f.verdict, Verdict::Degraded, "{f:?}");
    assert!(report.quirks.is_default(), "accepted: nothing to save");
    // Another 400 teaches nothing.
    let (report, _) = run(|r| {
        if with_format(r) {
            return Ok(error(400, "model overloaded"));
        }
        Ok(good(r))
    });
    assert_eq!(
        report.finding(Check::StructuredOutput).verdict,
        Verdict::Failed
    );
    assert!(report.quirks.is_default());
}
