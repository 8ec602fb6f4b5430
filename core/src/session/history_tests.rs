//! The JSON [`History`] keeps beside its messages stays what serialising them anew gives,
//! after every kind of change, and requests built from it are byte-identical to the
//! straightforward ones.

use super::history::History;
use super::request::{check_turn_body, turn_request};
use super::{Provider, SessionConfig};
use crate::context::prune_tool_outputs;
use crate::http::RequestId;
use crate::quirks::ProviderQuirks;
use crate::wire::{Content, FunctionCall, Message, ToolCall};
use proptest::prelude::*;
use serde_json::json;

fn config() -> SessionConfig {
    let mut c = SessionConfig::new(Provider::new("http://127.0.0.1:1/v1/", None), "m");
    c.system_prompt = Some("You are \"hrns\".".into());
    c.tools = crate::tool::builtin::builtin_specs();
    c
}

/// Every cached message against its serialisation now, and a request against the
/// straightforward one.
fn check(history: &mut History) {
    let mut total = 0;
    let json = history.json();
    let kept: Vec<Box<[u8]>> = json.messages.to_vec();
    let bytes = json.bytes;
    assert_eq!(kept.len(), history.len());
    for (json, message) in kept.iter().zip(history.iter()) {
        assert_eq!(&json[..], &serde_json::to_vec(message).unwrap()[..]);
        total += json.len();
    }
    assert_eq!(bytes, total);
    let c = config();
    let quirks = ProviderQuirks::default();
    let req = turn_request(RequestId(0), &c, history.json(), &quirks);
    check_turn_body(&req.body, &c, history, &quirks);
}

fn call(id: &str, arguments: &str) -> Message {
    let mut m = Message::assistant("");
    m.content = None;
    m.reasoning_content = Some("why \"not\"".into());
    m.tool_calls = vec![ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_file".into(),
            arguments: arguments.into(),
            extra: Default::default(),
        },
        extra: Default::default(),
    }];
    m
}

/// Text JSON must escape: quotes, backslashes, control characters, non-ASCII.
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z \"\\\\\n\t\u{0}\u{1F980}é]{0,40}").unwrap()
}

/// A step: a tool call and its result (sometimes long enough to be pruned), or a user or
/// assistant message.
fn messages() -> impl Strategy<Value = Vec<Message>> {
    (0usize..3, text(), 0usize..3000, any::<u16>()).prop_map(|(kind, t, size, n)| match kind {
        0 => vec![Message::user(t)],
        1 => {
            let mut m = Message::assistant(t);
            m.extra.insert("signature".into(), json!({"n": n}));
            vec![m]
        }
        _ => {
            let id = format!("call_{n}");
            vec![
                call(&id, &format!("{{\"path\":\"{n}\"}}")),
                Message::tool(&id, format!("{t}{}", "x".repeat(size))),
            ]
        }
    })
}

#[derive(Debug, Clone)]
enum Change {
    Push(Vec<Message>),
    Prune(usize),
    /// A rewrite that changes one message's text (when there is one).
    Edit(usize, String),
    /// A rewrite that changes nothing.
    Untouched,
    /// A compaction: the history replaced by a new one.
    Replace(Vec<Message>),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        4 => messages().prop_map(Change::Push),
        1 => (0usize..4).prop_map(Change::Prune),
        1 => (any::<usize>(), text()).prop_map(|(i, t)| Change::Edit(i, t)),
        1 => Just(Change::Untouched),
        1 => proptest::collection::vec(messages(), 0..4)
            .prop_map(|v| Change::Replace(v.into_iter().flatten().collect())),
    ]
}

fn apply(history: &mut History, change: Change) {
    match change {
        Change::Push(messages) => messages.into_iter().for_each(|m| history.push(m)),
        Change::Prune(keep) => {
            history.rewrite(|m| prune_tool_outputs(m, keep));
        }
        Change::Edit(i, t) => history.rewrite(|m| {
            let len = m.len();
            if let Some(m) = m.get_mut(i % len.max(1)) {
                m.content = Some(Content::Text(t));
            }
        }),
        Change::Untouched => history.rewrite(|_| ()),
        Change::Replace(messages) => history.replace(messages),
    }
}

#[test]
fn an_empty_history_and_a_resumed_one_are_kept_exactly() {
    check(&mut History::default());
    let mut resumed = vec![Message::user("a \"b\"\n")];
    resumed.extend([call("c1", "{}"), Message::tool("c1", "x".repeat(2000))]);
    check(&mut History::from_messages(resumed));
}

#[test]
fn pruning_changes_the_kept_json_of_what_it_pruned() {
    let mut history = History::default();
    for n in 0..3 {
        let id = format!("c{n}");
        history.push(call(&id, "{}"));
        history.push(Message::tool(&id, "y".repeat(5000)));
    }
    let before = history.json().bytes;
    let pruned = history.rewrite(|m| prune_tool_outputs(m, 1));
    assert_eq!(pruned.len(), 2);
    assert!(history.json().bytes < before - 9000);
    check(&mut history);
}

proptest! {
    #[test]
    fn the_kept_json_is_the_history_serialised_after_any_changes(
        changes in proptest::collection::vec(change(), 1..12),
    ) {
        let mut history = History::default();
        for (n, c) in changes.into_iter().enumerate() {
            apply(&mut history, c);
            // Some changes with no request in between, as when a turn adds several messages.
            if n % 3 != 1 {
                check(&mut history);
            }
        }
        check(&mut history);
    }
}
