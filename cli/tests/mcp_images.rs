//! Images from MCP tools in `exec`: `common/mcp_server.py`'s `picture` tool answers with a
//! text block and a 1x1 PNG. A model set up to take images gets it as an `image_url` part of
//! a user message after the tool results (and again after `--continue`, from the session
//! file); any other model gets the placeholder. The terminal never shows the base64.

mod common;

use common::{Env, KEY, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};

/// The start of the PNG's base64, as the script server sends it.
const PNG_HEAD: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB";

/// A config with the provider `mock` (with `images` set as given, when given) and the script
/// server as `box`.
fn config(env: &Env, mock: &MockProvider, images: Option<bool>) {
    let mut provider = json!({"url": mock.base_url(), "key": KEY, "model": "mock-model"});
    if let Some(images) = images {
        provider["images"] = json!(images);
    }
    let config = json!({
        "providers": {"mock": provider},
        "mcpServers": {"box": {"command": "python3", "args": [common::mcp_test_server()]}},
    });
    env.write("config/hrns/config.json", &config.to_string());
}

/// One `exec` turn in which the model calls `box`'s `picture`; returns the request after it
/// and the run's stderr.
fn picture_run(env: &Env, images: Option<bool>) -> (Value, String) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("p1", "mcp__box__picture", "{}")]),
        Reply::text_answer("A dot."),
    ])
    .unwrap();
    config(env, &mock, images);
    let out = env.run(None, &["exec", "show me"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "A dot.\n");
    let err = stderr(&out);
    assert!(!err.contains(PNG_HEAD), "the terminal shows base64: {err}");
    assert!(err.contains("ok: a picture: (+2 lines, 1 image)"), "{err}");
    (mock.requests()[1].json(), err)
}

fn messages_of(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().unwrap()
}

#[test]
fn a_model_set_up_for_images_gets_the_picture_as_an_image_part() {
    let env = Env::new();
    let (body, _) = picture_run(&env, Some(true));
    let messages = messages_of(&body);
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    let text = messages[tool]["content"].as_str().unwrap();
    assert!(
        text.starts_with("a picture:\n\n[image 1: image/png, 70 bytes]"),
        "{text}"
    );
    assert!(text.contains("next user message"), "{text}");
    let user = &messages[tool + 1];
    assert_eq!(user["role"], "user");
    let url = user["content"][1]["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("data:image/png;base64,{PNG_HEAD}")),
        "{url}"
    );

    // The session file keeps the part: a continued session sends it again.
    let mock = MockProvider::start([Reply::text_answer("Still a dot.")]).unwrap();
    config(&env, &mock, Some(true));
    let out = env.run(None, &["exec", "--continue", "and now?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(PNG_HEAD));
    let again = mock.requests()[0].json();
    let parts: Vec<&Value> = messages_of(&again)
        .iter()
        .filter(|m| m["content"].is_array())
        .collect();
    assert_eq!(parts.len(), 1, "{again}");
    assert_eq!(parts[0]["content"][1]["image_url"]["url"], url);
}

/// The image message is saved as a `user` message (the only role that takes images), but
/// the session's export and list show it as the tool's images, not as the user's words.
#[test]
fn a_saved_image_message_is_shown_as_the_tools_images_not_as_the_user() {
    let env = Env::new();
    picture_run(&env, Some(true));
    let list = env.run(None, &["sessions"]);
    let listed = stdout(&list);
    assert!(listed.contains("show me"), "{listed}");
    let id = listed.split_whitespace().next().unwrap().to_owned();
    let out = env.run(None, &["sessions", "export", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.contains("*[1 image from box › picture]*"), "{md}");
    assert!(!md.contains("The images returned"), "{md}");
    assert_eq!(md.matches("## User").count(), 1, "{md}");
    assert!(!md.contains(PNG_HEAD), "{md}");
}

#[test]
fn other_models_get_the_placeholder_only() {
    for images in [None, Some(false)] {
        let env = Env::new();
        let (body, _) = picture_run(&env, images);
        assert!(!body.to_string().contains(PNG_HEAD), "{images:?}: {body}");
        let messages = messages_of(&body);
        let last = messages.last().unwrap();
        assert_eq!(last["role"], "tool", "{images:?}: no user message follows");
        let text = last["content"].as_str().unwrap();
        assert!(
            text.contains("[image 1: image/png, 70 bytes]") && text.contains("not shown"),
            "{text}"
        );
    }
}

#[test]
fn a_wrong_images_value_is_an_error_naming_the_key() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    let config = json!({"providers": {"mock": {"url": mock.base_url(), "key": KEY,
        "model": "mock-model", "models": {"mock-model": {"images": "yes"}}}}});
    env.write("config/hrns/config.json", &config.to_string());
    let out = env.run(None, &["exec", "hi"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("providers.mock.models.mock-model.images"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_subagent_on_a_model_set_up_for_images_gets_the_picture_though_the_parents_does_not() {
    let env = Env::new();
    env.write(
        "work/.hrns/agents/looker/AGENT.md",
        "---\nname: Looker\ndescription: Looks at pictures.\nmodel: vision-x\n---\nYou look.",
    );
    let task = json!({"description": "look", "prompt": "Look at the picture.", "agent": "Looker"})
        .to_string();
    let mock = MockProvider::start_with(move |req: &hrns_blocking::mock::RecordedRequest| {
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        let parent = body["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "task"));
        let started = messages_of(&body).iter().any(|m| m["role"] == "tool");
        Some(match (parent, started) {
            (true, false) => Reply::tool_calls(&[("t1", "task", &task)]),
            (false, false) => Reply::tool_calls(&[("p1", "mcp__box__picture", "{}")]),
            (false, true) => Reply::text_answer("A dot."),
            (true, true) => Reply::text_answer("It saw a dot."),
        })
    })
    .unwrap();
    // The provider's models take no images, except the subagent's.
    let config = json!({
        "providers": {"mock": {"url": mock.base_url(), "key": KEY, "model": "mock-model",
                               "images": false, "models": {"vision-x": {"images": true}}}},
        "mcpServers": {"box": {"command": "python3", "args": [common::mcp_test_server()]}},
    });
    env.write("config/hrns/config.json", &config.to_string());
    let out = env.run(None, &["exec", "--approval", "auto", "delegate"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It saw a dot.\n");
    let child = mock
        .chat_requests()
        .iter()
        .map(|r| r.json())
        .find(|b| b["model"] == "vision-x" && b.to_string().contains("next user message"))
        .unwrap_or_else(|| {
            panic!(
                "the child was not sent the image: {:?}",
                mock.chat_requests()
                    .iter()
                    .map(|r| r.json())
                    .collect::<Vec<_>>()
            )
        });
    let messages = messages_of(&child);
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    let url = messages[tool + 1]["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap();
    assert!(
        url.starts_with(&format!("data:image/png;base64,{PNG_HEAD}")),
        "{url}"
    );
}
