//! `hrns debug sse`: a raw SSE body through `ChatStream`, printed as one JSON object.

use hrns_core::accumulate::{Choice, Completion};
use hrns_core::stream::{ChatStream, StreamFailure};
use serde_json::{Value, json};
use std::io::Read;

/// Decodes `input` completely and returns the JSON summary and whether it decoded cleanly.
pub(crate) fn summarize(mut input: impl Read) -> std::io::Result<(Value, bool)> {
    let mut stream = ChatStream::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        stream.feed(&buf[..n]);
        // Drain as we go so memory stays bounded by the answer, not the input.
        while let Ok(Some(_)) = stream.poll_event() {}
    }
    Ok(match stream.finish() {
        Ok(c) => (render(&c, None), true),
        Err(StreamFailure { error, partial }) => (render(&partial, Some(error.to_string())), false),
    })
}

fn render(c: &Completion, error: Option<String>) -> Value {
    json!({
        "choices": c.choices.iter().map(choice).collect::<Vec<_>>(),
        "usage": c.usage,
        "done": c.done,
        "error": error,
    })
}

fn choice(c: &Choice) -> Value {
    json!({
        "index": c.index,
        "role": c.role,
        "content": c.content,
        "reasoning": c.reasoning,
        "refusal": c.refusal,
        "tool_calls": c.tool_calls.iter().map(|t| json!({
            "index": t.index,
            "id": t.id,
            "type": t.kind,
            "name": t.name,
            "arguments": t.arguments,
            "extra": t.extra,
        })).collect::<Vec<_>>(),
        "function_call": c.function_call.as_ref().map(|f| json!({"name": f.name, "arguments": f.arguments})),
        "finish_reason": c.finish_reason,
        "extra": c.extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_shape() {
        let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\",\"x\":1},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        let (v, ok) = summarize(body.as_bytes()).unwrap();
        assert!(ok);
        assert_eq!(
            v,
            json!({"choices": [{"index": 0, "role": "assistant", "content": "Hi", "reasoning": null, "refusal": null,
                "tool_calls": [], "function_call": null, "finish_reason": "stop", "extra": {"x": 1}}],
                "usage": null, "done": true, "error": null})
        );
    }

    #[test]
    fn errors_keep_partial_choices() {
        let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"part\"}}]}\n\ndata: {\"error\":{\"message\":\"boom\"}}\n\n";
        let (v, ok) = summarize(body.as_bytes()).unwrap();
        assert!(!ok);
        assert_eq!(v["choices"][0]["content"], "part");
        assert!(v["error"].as_str().unwrap().contains("boom"));
        let (v, ok) = summarize(&b""[..]).unwrap();
        assert!(!ok);
        assert_eq!(v["choices"], json!([]));
    }
}
