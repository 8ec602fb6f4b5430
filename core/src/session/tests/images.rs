//! Images in tool results: sent as `image_url` parts of one `user` message after the step's
//! tool messages when the model takes them, named by a placeholder otherwise.

use super::*;
use crate::tool::ToolImage;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn with_image(text: &str) -> ToolOutput {
    let mut output = ToolOutput::ok(text);
    output.images.push(ToolImage {
        mime_type: "image/png".into(),
        data: PNG.into(),
    });
    output
}

/// Two read-only calls answered at once: the first with an image, the second without;
/// returns the body of the request that follows.
fn step(images: ImageInputs) -> (H, Value) {
    let mut c = config(ApprovalPolicy::Auto);
    c.images = images;
    let mut h = H::new(c);
    h.submit("look");
    h.sse(&tool_answer(&[
        ("c1", "read_file", r#"{"path":"a.png"}"#),
        ("c2", "read_file", r#"{"path":"b.txt"}"#),
    ]));
    h.s.handle_tool_output(h.now, "c1", with_image("[image 1: image/png, 70 bytes]"))
        .unwrap();
    h.drain();
    h.output("c2", "plain text");
    let body: Value = serde_json::from_slice(&h.sent[1].body).unwrap();
    (h, body)
}

#[test]
fn a_model_that_takes_images_gets_them_in_a_user_message_after_the_tool_results() {
    let (h, body) = step(ImageInputs::Parts);
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool", "user"]
    );
    assert_eq!(
        messages[3]["content"],
        format!(
            "[image 1: image/png, 70 bytes]\n\n{}",
            crate::session::images::ATTACHED_NOTE
        )
    );
    assert_eq!(messages[4]["content"], "plain text");
    assert_eq!(
        messages[5]["content"],
        json!([
            {"type": "text", "text": "The images returned by the call c1 (`read_file`), in order:"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}
        ])
    );
    // The UI's result shows the placeholder, and the message event carries the parts once.
    assert!(h.results().iter().all(|(_, _, text)| !text.contains(PNG)));
    let carried = h
        .events
        .iter()
        .filter(|e| serde_json::to_string(e).unwrap().contains(PNG))
        .count();
    assert_eq!(carried, 1);
}

#[test]
fn a_model_without_images_gets_the_placeholder_only() {
    let (h, body) = step(ImageInputs::Placeholder);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "no user message is added: {body}");
    assert_eq!(
        messages[3]["content"],
        format!(
            "[image 1: image/png, 70 bytes]\n\n{}",
            crate::session::images::NOT_SHOWN_NOTE
        )
    );
    assert!(!body.to_string().contains(PNG));
    assert!(
        !h.events
            .iter()
            .any(|e| serde_json::to_string(e).unwrap().contains(PNG))
    );
}

#[test]
fn images_stay_in_the_history_for_later_requests() {
    let (mut h, _) = step(ImageInputs::Parts);
    h.sse(&text_answer("A red dot."));
    h.submit("and now?");
    let later: Value = serde_json::from_slice(&h.sent.last().unwrap().body).unwrap();
    assert!(later.to_string().contains(PNG));
}

#[test]
fn known_models_take_images_by_default() {
    for model in [
        "gpt-4o-mini",
        "openai/gpt-4.1",
        "claude-sonnet-4-5",
        "google/gemini-2.5-pro",
        "GPT-5",
    ] {
        assert_eq!(ImageInputs::known_for(model), ImageInputs::Parts, "{model}");
    }
    for model in ["mock-model", "llama3", "deepseek-chat", "gpt-3.5-turbo", ""] {
        assert_eq!(
            ImageInputs::known_for(model),
            ImageInputs::Placeholder,
            "{model}"
        );
    }
}

#[test]
fn the_image_message_is_recognised_as_the_tools_and_nothing_else_is() {
    let (h, _) = step(ImageInputs::Parts);
    let image_message = h.s.messages().last().unwrap().clone();
    assert_eq!(
        crate::session::tool_images(&image_message),
        Some(vec![crate::session::ToolImages {
            call_id: "c1".into(),
            tool: "read_file".into(),
            count: 1,
            bytes: format!("data:image/png;base64,{PNG}").len(),
        }])
    );
    // Everything else in the history, and what a user may send with images of their own.
    for m in &h.s.messages()[..h.s.messages().len() - 1] {
        assert_eq!(crate::session::tool_images(m), None, "{m:?}");
    }
    let user_with_image = |parts: Value| {
        let mut m = Message::user("");
        m.content = Some(crate::wire::Content::Parts(
            parts.as_array().unwrap().clone(),
        ));
        m
    };
    let image = json!({"type": "image_url", "image_url": {"url": "data:,"}});
    let header =
        json!({"type": "text", "text": "The images returned by the call c1 (`t`), in order:"});
    for parts in [
        json!([{"type": "text", "text": "what is in this picture?"}, image]),
        json!([image]),
        json!([header]),
        json!([header, header, image]),
        json!([header, image, {"type": "text", "text": "and this?"}]),
    ] {
        assert_eq!(
            crate::session::tool_images(&user_with_image(parts.clone())),
            None,
            "{parts}"
        );
    }
    let mut assistant = user_with_image(json!([header, image]));
    assistant.role = crate::wire::Role::Assistant;
    assert_eq!(crate::session::tool_images(&assistant), None);
}

/// Pruning reaches the images of an old step: the message carrying them becomes a stub, so
/// they are not sent with every later request.
#[test]
fn pruning_turns_an_old_steps_image_message_into_a_stub() {
    let big = "A".repeat(40_000);
    let mut c = config(ApprovalPolicy::Auto);
    c.images = ImageInputs::Parts;
    c.context.keep_steps = 1;
    let mut h = H::new(c);
    h.submit("look");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a.png"}"#)]));
    let mut output = ToolOutput::ok("[image 1: image/png, 30000 bytes]");
    output.images.push(ToolImage {
        mime_type: "image/png".into(),
        data: big.clone(),
    });
    h.s.handle_tool_output(h.now, "c1", output).unwrap();
    h.drain();
    assert!(String::from_utf8_lossy(&h.sent[1].body).contains(&big));
    h.sse(&tool_answer(&[("c2", "read_file", r#"{"path":"b.txt"}"#)]));
    // The next request would pass the threshold with the image, and not without it.
    let tokens = h.s.context_usage().tokens;
    h.s.set_context_window(Some(tokens));
    h.output("c2", "plain text");
    let body = String::from_utf8_lossy(&h.sent[2].body).into_owned();
    assert!(!body.contains(&big), "the old image is sent again");
    let request: Value = serde_json::from_str(&body).unwrap();
    let stub = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user" && m["content"] != "look")
        .unwrap();
    assert_eq!(
        stub["content"],
        r#"[output pruned to save context: 1 image returned by `read_file` {"path":"a.png"}, cut from the history. Run the call again if you need them.]"#
    );
    let pruned = h
        .events
        .iter()
        .find_map(|e| match e {
            Event::ContextCompacted {
                method: CompactMethod::Pruned,
                pruned,
                ..
            } => Some(pruned.clone()),
            _ => None,
        })
        .expect("a pruning");
    assert_eq!(pruned.len(), 1);
    assert_eq!(pruned[0].call_id, "c1");
    assert!(pruned[0].bytes > big.len());
    crate::history::validate(h.s.messages()).unwrap();
    assert!(h.s.context_usage().tokens < tokens);
}
