//! MCP servers that change during a session, in `exec` against the mock provider: a server
//! that dies in the middle of a call (the call ends with an error naming it and why, its tools
//! leave the next request, the user is told once) and a server whose tools change
//! (`notifications/tools/list_changed`: the next request offers the new tool). The server is
//! the Python script server of `common/mcp_server.py`.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The config's extra keys: the script server as `box`.
fn with_box() -> String {
    let servers =
        json!({"mcpServers": {"box": {"command": "python3", "args": [common::mcp_test_server()]}}})
            .to_string();
    format!(", {}", &servers[1..servers.len() - 1])
}

/// The content of the tool message answering `call_id` in a request body.
fn tool_result(body: &Value, call_id: &str) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {call_id} in {body}"))
        .to_owned()
}

fn box_tools(names: &[String]) -> Vec<&String> {
    names
        .iter()
        .filter(|n| n.starts_with("mcp__box__"))
        .collect()
}

#[test]
fn a_server_that_dies_mid_call_ends_the_call_and_leaves_the_next_requests() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "mcp__box__die", "{}")]),
        // The model tries the server's tool again: it is unknown now, and nothing hangs.
        Reply::tool_calls(&[("c2", "mcp__box__look", "{}")]),
        Reply::text_answer("The box is gone."),
    ])
    .unwrap();
    env.config_with(&mock, &with_box());
    let out = env
        .cmd(None)
        .args(["exec", "break the box"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "The box is gone.\n");
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 3, "{err}");
    let first = tool_names(&requests[0].json());
    assert!(box_tools(&first).len() >= 4, "{first:?}");
    let second = requests[1].json();
    let died = tool_result(&second, "c1");
    assert!(
        died.contains("box") && died.contains("exited with status 3"),
        "the model is told which server failed and why: {died}"
    );
    for request in &requests[1..] {
        let names = tool_names(&request.json());
        assert!(box_tools(&names).is_empty(), "{names:?}");
        assert!(names.contains(&"read_file".to_owned()), "{names:?}");
    }
    let unknown = tool_result(&requests[2].json(), "c2");
    assert!(
        unknown.contains("There is no tool named `mcp__box__look`"),
        "{unknown}"
    );
    assert_eq!(
        err.matches("MCP server box stopped").count(),
        1,
        "told once: {err}"
    );
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(err.contains("no longer offered: mcp__box__"), "{err}");
}

#[test]
fn a_dead_server_is_one_json_event() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "mcp__box__die", "{}")]),
        Reply::text_answer("Gone."),
    ])
    .unwrap();
    env.config_with(&mock, &with_box());
    let out = env
        .cmd(None)
        .args(["exec", "--json", "break the box"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let changed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tools_changed")
        .collect();
    assert_eq!(changed.len(), 1, "{events:?}");
    let reason = changed[0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("MCP server box stopped"), "{reason}");
    assert!(reason.contains("exited with status 3"), "{reason}");
    let removed: Vec<&str> = changed[0]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(removed.contains(&"mcp__box__die"), "{removed:?}");
    assert_eq!(changed[0]["added"], json!([]));
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == "c1")
        .unwrap();
    assert_eq!(result["status"], "error");
}

#[test]
fn a_tool_the_server_adds_mid_session_is_offered_in_the_next_request() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("g1", "mcp__box__grow", "{}")]),
        Reply::tool_calls(&[("e1", "mcp__box__extra", "{}")]),
        Reply::text_answer("Grown."),
    ])
    .unwrap();
    env.config_with(&mock, &with_box());
    let out = env
        .cmd(None)
        .args(["exec", "grow the box"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "Grown.\n");
    let requests = mock.chat_requests();
    let first = tool_names(&requests[0].json());
    assert!(!first.contains(&"mcp__box__extra".to_owned()), "{first:?}");
    let second = tool_names(&requests[1].json());
    assert!(second.contains(&"mcp__box__extra".to_owned()), "{second:?}");
    assert!(
        second.contains(&"mcp__box__grow".to_owned()),
        "the others stay: {second:?}"
    );
    assert_eq!(tool_result(&requests[1].json(), "g1"), "grown");
    assert_eq!(tool_result(&requests[2].json(), "e1"), "extra ran");
    assert_eq!(
        err.matches("MCP server box changed its tools; now offered: mcp__box__extra")
            .count(),
        1,
        "{err}"
    );
}

/// Runs `exec` (with `flags`) as the agent `boxless`, whose tool map filters out every tool
/// of the server `box`, beside a server `ctl` whose `stop_other` kills `box` mid-session.
/// Returns the output and the requests the model got.
fn stop_an_unoffered_server(flags: &[&str]) -> (std::process::Output, Vec<Value>) {
    let env = Env::new();
    let pidfile = env.path("box.pid").display().to_string();
    let server = common::mcp_test_server();
    let servers = json!({"mcpServers": {
        "box": {"command": "python3", "args": [&server, "--pidfile", &pidfile]},
        // Unconfined: the sandbox keeps a server's signals among its own processes.
        "ctl": {"command": "python3", "args": [&server, "--other", &pidfile],
                "sandbox": "danger-full-access"},
    }})
    .to_string();
    env.write(
        "work/.hrns/agents/boxless/AGENT.md",
        "---\nname: Boxless\ndescription: no box\ntools:\n  \"mcp__box__*\": false\n---\nYou work without the box.\n",
    );
    let mock = MockProvider::start([
        Reply::tool_calls(&[("s1", "mcp__ctl__stop_other", "{}")]),
        // One more step: each input the session gets is a moment to notice the stop.
        Reply::tool_calls(&[("l1", "mcp__ctl__look", "{}")]),
        Reply::text_answer("Done."),
    ])
    .unwrap();
    env.config_with(&mock, &format!(", {}", &servers[1..servers.len() - 1]));
    let out = env
        .cmd(None)
        .args(["exec", "--agent", "boxless"])
        .args(flags)
        .arg("stop the box")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests: Vec<Value> = mock.chat_requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 3, "{}", stderr(&out));
    assert_eq!(tool_result(&requests[1], "s1"), "stopped");
    let first = tool_names(&requests[0]);
    assert!(
        first.contains(&"mcp__ctl__stop_other".to_owned()),
        "{first:?}"
    );
    for request in &requests {
        let names = tool_names(request);
        assert_eq!(names, first, "the model's tools stay as they were");
        assert!(box_tools(&names).is_empty(), "{names:?}");
        let text = request["messages"].to_string();
        assert!(
            !text.contains("MCP server box"),
            "nothing new for the model: {text}"
        );
    }
    (out, requests)
}

#[test]
fn a_server_whose_tools_were_not_offered_is_still_reported_once_when_it_stops() {
    let (out, _) = stop_an_unoffered_server(&[]);
    let err = stderr(&out);
    assert_eq!(stdout(&out), "Done.\n");
    assert_eq!(
        err.matches("MCP server box stopped").count(),
        1,
        "told once: {err}"
    );
    assert!(err.contains("killed by signal 15"), "and why: {err}");
    assert!(!err.contains("no longer offered"), "{err}");
}

#[test]
fn a_server_whose_tools_were_not_offered_stops_as_one_json_event_with_empty_lists() {
    let (out, _) = stop_an_unoffered_server(&["--json"]);
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let changed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tools_changed")
        .collect();
    assert_eq!(changed.len(), 1, "{events:?}");
    let reason = changed[0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("MCP server box stopped"), "{reason}");
    assert!(reason.contains("killed by signal 15"), "{reason}");
    for list in ["added", "removed", "updated"] {
        assert_eq!(changed[0][list], json!([]), "{list}");
    }
}

/// The parent changes the box (`first`), then starts a Builder child with `task` (all tools,
/// effects too); the child makes one call (`child_call`) and answers. Returns the output and
/// the requests, the child's third and fourth.
fn child_after(first: &str, child_call: &str) -> (std::process::Output, Vec<Value>) {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("p1", first, "{}")]),
        Reply::tool_calls(&[(
            "t1",
            "task",
            r#"{"description":"use the box","prompt":"Use the box.","agent":"Builder"}"#,
        )]),
        Reply::tool_calls(&[("k1", child_call, "{}")]),
        Reply::text_answer("Child done."),
        Reply::text_answer("Parent done."),
    ])
    .unwrap();
    env.config_with(&mock, &with_box());
    let out = env
        .cmd(None)
        .args(["exec", "--approval", "auto", "delegate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Parent done.\n");
    let requests: Vec<Value> = mock.chat_requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 5, "{}", stderr(&out));
    let child = tool_names(&requests[2]);
    assert!(
        !child.contains(&"task".to_owned()),
        "the child's: {child:?}"
    );
    (out, requests)
}

#[test]
fn a_child_started_after_a_server_added_a_tool_is_offered_it() {
    let (_, requests) = child_after("mcp__box__grow", "mcp__box__extra");
    let child = tool_names(&requests[2]);
    assert!(child.contains(&"mcp__box__extra".to_owned()), "{child:?}");
    assert!(child.contains(&"mcp__box__grow".to_owned()), "{child:?}");
    assert_eq!(tool_result(&requests[3], "k1"), "extra ran");
}

#[test]
fn a_child_started_after_a_server_died_is_not_offered_its_tools() {
    let (_, requests) = child_after("mcp__box__die", "mcp__box__look");
    let child = tool_names(&requests[2]);
    assert!(box_tools(&child).is_empty(), "{child:?}");
    assert!(child.contains(&"read_file".to_owned()), "{child:?}");
    let unknown = tool_result(&requests[3], "k1");
    assert!(
        unknown.contains("There is no tool named `mcp__box__look`"),
        "{unknown}"
    );
}
