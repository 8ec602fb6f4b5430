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
    /// A rewrite that changes one message's text (when there is one), sometimes to one long
    /// enough to be pruned.
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
        1 => (any::<usize>(), text(), prop_oneof![Just(0usize), Just(3000)])
            .prop_map(|(i, t, size)| Change::Edit(i, format!("{t}{}", "x".repeat(size)))),
        1 => Just(Change::Untouched),
        1 => proptest::collection::vec(messages(), 0..4)
            .prop_map(|v| Change::Replace(v.into_iter().flatten().collect())),
    ]
}

/// Applies `change` to `history` and to `plain`, a plain vector changed the straightforward
/// way (a prune of the whole of it), which the history's messages must equal.
fn apply(history: &mut History, plain: &mut Vec<Message>, change: Change) {
    match change {
        Change::Push(messages) => {
            plain.extend(messages.iter().cloned());
            messages.into_iter().for_each(|m| history.push(m));
        }
        Change::Prune(keep) => {
            let pruned = history.prune(keep);
            assert_eq!(pruned, prune_tool_outputs(plain, keep));
        }
        Change::Edit(i, t) => {
            let i = i % plain.len().max(1);
            let end = (i + 1).min(plain.len());
            let edit = |m: &mut [Message]| {
                if let Some(m) = m.first_mut() {
                    m.content = Some(Content::Text(t.clone()));
                }
            };
            history.rewrite(i..end, edit);
            edit(&mut plain[i..end]);
        }
        Change::Untouched => history.rewrite(0..plain.len(), |_| ()),
        Change::Replace(messages) => {
            plain.clone_from(&messages);
            history.replace(messages);
        }
    }
    assert_eq!(&history[..], &plain[..]);
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
    let pruned = history.prune(1);
    assert_eq!(pruned.len(), 2);
    assert!(history.json().bytes < before - 9000);
    check(&mut history);
}

/// A prune looks only at the steps that became old since the last one, but a rewrite of a
/// message before them makes the next prune read the whole history again.
#[test]
fn a_prune_after_a_rewrite_of_older_messages_reads_them_again() {
    let mut history = History::default();
    let mut plain = Vec::new();
    for n in 0..4 {
        let id = format!("c{n}");
        let step = vec![call(&id, "{}"), Message::tool(&id, "y".repeat(5000))];
        apply(&mut history, &mut plain, Change::Push(step));
    }
    apply(&mut history, &mut plain, Change::Prune(1));
    assert!(history[1].text().starts_with("[output pruned"));
    apply(&mut history, &mut plain, Change::Edit(1, "z".repeat(5000)));
    apply(&mut history, &mut plain, Change::Prune(1));
    assert!(history[1].text().starts_with("[output pruned"));
    check(&mut history);
}

proptest! {
    #[test]
    fn the_kept_json_is_the_history_serialised_after_any_changes(
        changes in proptest::collection::vec(change(), 1..16),
    ) {
        let mut history = History::default();
        let mut plain = Vec::new();
        for (n, c) in changes.into_iter().enumerate() {
            apply(&mut history, &mut plain, c);
            // Some changes with no request in between, as when a turn adds several messages.
            if n % 3 != 1 {
                check(&mut history);
            }
        }
        check(&mut history);
    }
}
