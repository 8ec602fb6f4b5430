use super::*;

fn run(body: &[u8]) -> (Vec<StreamEvent>, Result<Completion, StreamFailure>) {
    let mut s = ChatStream::new();
    s.feed(body);
    s.feed_eof();
    let mut events = Vec::new();
    while let Ok(Some(e)) = s.poll_event() {
        events.push(e);
    }
    (events, s.finish())
}

#[test]
fn smoke_text_and_tool_call() {
    let body = concat!(
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"path\\\":\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"a\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\n",
        "data: [DONE]\n\n",
    );
    let (events, done) = run(body.as_bytes());
    let c = done.unwrap();
    assert!(c.done);
    assert_eq!(c.choices[0].content, "Hi");
    assert_eq!(c.choices[0].tool_calls[0].arguments, "{\"path\":\"a\"}");
    assert_eq!(c.choices[0].tool_calls[0].id.as_deref(), Some("call_1"));
    assert_eq!(c.usage.unwrap().total_tokens, Some(3));
    assert_eq!(events.last(), Some(&StreamEvent::Done));
}
