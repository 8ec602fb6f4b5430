//! The tool set replaced mid-session (`Session::handle_tools_changed`): what the next request offers,
//! how later calls are checked, and the one event that says what changed.

use super::*;
use crate::tool::{Effect, ToolSpec};

fn mcp(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({"type": "object"}),
        effect: Effect::Exec,
    }
}

fn offered(h: &H, n: usize) -> Vec<String> {
    h.body(n)
        .tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

fn with(extra: &[ToolSpec]) -> Vec<ToolSpec> {
    let mut tools = builtin_specs();
    tools.extend(extra.iter().cloned());
    tools
}

fn changes(h: &H) -> Vec<&Event> {
    h.events
        .iter()
        .filter(|e| matches!(e, Event::ToolsChanged { .. }))
        .collect()
}

#[test]
fn the_request_after_the_last_result_offers_the_new_set_and_says_what_changed() {
    let mut c = config(ApprovalPolicy::Auto);
    c.tools = with(&[
        mcp("mcp__s__grow", "grows"),
        mcp("mcp__s__die", "dies"),
        mcp("mcp__s__look", "looks"),
    ]);
    let mut h = H::new(c);
    h.submit("x");
    h.sse(&tool_answer(&[("g1", "mcp__s__grow", "{}")]));
    assert_eq!(h.runs.len(), 1);
    // Before the result is fed: the driver learnt that the server's tools changed.
    let reason = format!("MCP server s changed its tools ({KEY})");
    h.s.handle_tools_changed(
        with(&[
            mcp("mcp__s__grow", "grows"),
            mcp("mcp__s__look", "looks more"),
            mcp("mcp__s__extra", "new"),
        ]),
        &reason,
    );
    h.drain();
    h.output("g1", "grown");
    assert_eq!(h.sent.len(), 2);
    let names = offered(&h, 1);
    assert!(names.contains(&"mcp__s__extra".to_owned()), "{names:?}");
    assert!(!names.contains(&"mcp__s__die".to_owned()), "{names:?}");
    let look = h
        .body(1)
        .tools
        .into_iter()
        .find(|t| t["function"]["name"] == "mcp__s__look")
        .unwrap();
    assert_eq!(look["function"]["description"], "looks more");
    assert_eq!(
        changes(&h),
        [&Event::ToolsChanged {
            reason: "MCP server s changed its tools ([redacted])".into(),
            added: vec!["mcp__s__extra".into()],
            removed: vec!["mcp__s__die".into()],
            updated: vec!["mcp__s__look".into()],
        }]
    );
    // The event comes before the result it was learnt with.
    let at = |f: &dyn Fn(&Event) -> bool| h.events.iter().position(f).unwrap();
    assert!(
        at(&|e| matches!(e, Event::ToolsChanged { .. }))
            < at(&|e| matches!(e, Event::ToolResult { .. }))
    );
}

#[test]
fn a_later_call_to_a_tool_that_is_gone_is_an_unknown_tool() {
    let mut c = config(ApprovalPolicy::Auto);
    c.tools = with(&[mcp("mcp__s__die", "dies")]);
    let mut h = H::new(c);
    h.submit("x");
    h.sse(&tool_answer(&[("d1", "mcp__s__die", "{}")]));
    h.s.handle_tools_changed(builtin_specs(), "MCP server s stopped");
    h.s.handle_tool_output(h.now, "d1", ToolOutput::error("The MCP server s failed"))
        .unwrap();
    h.drain();
    assert!(!offered(&h, 1).iter().any(|n| n.starts_with("mcp__")));
    h.sse(&tool_answer(&[("d2", "mcp__s__die", "{}")]));
    let results = h.results();
    assert_eq!(results[1].1, ToolStatus::UnknownTool, "{results:?}");
    assert!(
        results[1].2.contains("read_file"),
        "it names the tools there are: {results:?}"
    );
    assert_eq!(h.runs.len(), 1, "the gone tool is not run");
    h.sse(&text_answer("ok"));
    assert_eq!(h.finals().len(), 1);
}

#[test]
fn the_same_set_changes_nothing_and_a_set_while_idle_reaches_the_first_request() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.s.handle_tools_changed(builtin_specs(), "nothing new");
    h.drain();
    assert!(changes(&h).is_empty());
    h.s.handle_tools_changed(
        with(&[mcp("mcp__s__extra", "new")]),
        "MCP server s changed its tools",
    );
    h.submit("x");
    assert_eq!(changes(&h).len(), 1);
    assert!(offered(&h, 0).contains(&"mcp__s__extra".to_owned()));
    h.sse(&text_answer("ok"));
    assert_eq!(h.finals().len(), 1);
}

#[test]
fn the_same_set_is_reported_only_when_the_reason_is_news() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.s.handle_tools_changed(
        builtin_specs(),
        ToolsReason::news(format!("MCP server s stopped ({KEY})")),
    );
    h.s.handle_tools_changed(builtin_specs(), "MCP server s changed its tools");
    h.drain();
    match changes(&h)[..] {
        [
            Event::ToolsChanged {
                reason,
                added,
                removed,
                updated,
            },
        ] => {
            assert!(reason.starts_with("MCP server s stopped"), "{reason}");
            assert!(!reason.contains(KEY), "redacted: {reason}");
            assert!(added.is_empty() && removed.is_empty() && updated.is_empty());
        }
        ref other => panic!("{other:?}"),
    }
    h.submit("x");
    assert_eq!(offered(&h, 0).len(), builtin_specs().len());
    h.sse(&text_answer("ok"));
    assert_eq!(h.finals().len(), 1);
}

#[test]
fn the_event_round_trips_as_json() {
    let event = Event::ToolsChanged {
        reason: "r".into(),
        added: vec!["a".into()],
        removed: vec![],
        updated: vec!["u".into()],
    };
    let text = serde_json::to_string(&event).unwrap();
    assert_eq!(
        text,
        r#"{"type":"tools_changed","reason":"r","added":["a"],"removed":[],"updated":["u"]}"#
    );
    assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);
}
