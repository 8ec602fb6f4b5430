use super::*;
use crate::history;
use crate::wire::{FunctionCall, ToolCall};
use proptest::prelude::*;

fn step(id: &str, size: usize) -> Vec<Message> {
    let mut m = Message::assistant("");
    m.content = None;
    m.tool_calls = vec![ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_file".into(),
            arguments: format!(r#"{{"path":"{id}.rs"}}"#),
            extra: Default::default(),
        },
        extra: Default::default(),
    }];
    vec![m, Message::tool(id, "y".repeat(size))]
}

#[test]
fn summary_request_has_no_tools_and_the_structured_prompt() {
    let mut h = vec![Message::user("fix the parser")];
    h.extend(step("a", 10_000));
    h.push(Message::assistant("done"));
    let msgs = summary_messages(&h, Some("  focus on the tests "), 1_000_000);
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0].role, Role::System);
    assert_eq!(msgs[0].text(), SUMMARY_SYSTEM);
    let text = msgs[1].text();
    assert!(text.starts_with("<conversation>\n## user\nfix the parser\n\n## assistant\n"));
    assert!(text.contains("[calls read_file (a) with {\"path\":\"a.rs\"}]"));
    assert!(text.contains("## tool (result of a)\n"));
    assert!(
        text.contains("[… 6000 bytes cut …]"),
        "long outputs cut in the middle"
    );
    assert!(text.contains(SUMMARY_PROMPT));
    assert!(text.ends_with("The user adds these instructions for the summary: focus on the tests"));
}

#[test]
fn summary_transcript_fits_its_budget_keeping_the_task() {
    let mut h = vec![Message::user("the task")];
    for n in 0..20 {
        h.extend(step(&format!("c{n}"), 3000));
    }
    let msgs = summary_messages(&h, None, 20_000);
    let text = msgs[1].text();
    assert!(
        text.len() < 20_000 + SUMMARY_PROMPT.len() + 200,
        "{}",
        text.len()
    );
    assert!(text.starts_with("<conversation>\n## user\nthe task\n"));
    assert!(text.contains("earlier messages omitted to fit the context window"));
    assert!(text.contains("(result of c19)"), "the latest step is kept");
}

#[test]
fn compacted_history_is_summary_task_and_recent_steps() {
    let mut h = vec![
        Message::user("old question"),
        Message::assistant("old answer"),
    ];
    h.push(Message::user("the task"));
    for n in 0..10 {
        h.extend(step(&format!("c{n}"), 1000));
    }
    let c = compacted_history(&h, "  SUMMARY  ", 4000).unwrap();
    assert!(c.messages[0].text().starts_with(SUMMARY_HEADER));
    assert!(c.messages[0].text().contains("\n\nSUMMARY\n\n"));
    assert!(c.messages[0].text().ends_with("verbatim:\n- old question"));
    assert_eq!(c.messages[1], Message::user("the task"));
    let kept = &c.messages[2..];
    assert!(!kept.is_empty());
    assert_eq!(kept, &h[h.len() - kept.len()..], "a suffix of whole steps");
    assert_eq!(c.summarized, h.len() - kept.len() - 1);
    assert_eq!(history::validate(&c.messages), Ok(()));
    let bytes: usize = c.messages.iter().map(message_bytes).sum();
    assert!(bytes <= 4000);
}

#[test]
fn quotes_survive_a_second_compaction() {
    let h = vec![Message::user("the original task"), Message::assistant("ok")];
    let mut first = compacted_history(&h, "S1", 10_000).unwrap().messages;
    first.push(Message::assistant("more"));
    first.push(Message::user("continue"));
    let second = compacted_history(&first, "S2", 10_000).unwrap().messages;
    let text = second[0].text();
    assert!(text.contains("S2"));
    assert!(!text.contains("S1"), "an old summary is not nested");
    assert!(text.ends_with("verbatim:\n- the original task"), "{text}");
    assert_eq!(second[1], Message::user("continue"));
}

#[test]
fn cannot_shrink_when_the_latest_message_alone_is_too_big() {
    let h = vec![Message::user("z".repeat(10_000))];
    let err = compacted_history(&h, "s", 5000).unwrap_err();
    assert!(matches!(
        err,
        CompactError::CannotShrink { budget: 5000, .. }
    ));
    assert!(err.to_string().contains("shorten the message"));
}

#[test]
fn cut_middle_respects_char_boundaries() {
    let s = "é".repeat(100);
    let cut = cut_middle(&s, 51);
    assert!(cut.contains("bytes cut"));
    assert_eq!(cut_middle("short", 10), "short");
}

fn arb_history() -> impl Strategy<Value = Vec<Message>> {
    proptest::collection::vec((0usize..4, 0usize..3000), 0..25).prop_map(|ops| {
        let mut h = Vec::new();
        for (n, (kind, size)) in ops.into_iter().enumerate() {
            match kind {
                0 => h.push(Message::user(format!("user {n} {}", "u".repeat(size / 10)))),
                1 => h.push(Message::assistant("a".repeat(size))),
                _ => h.extend(step(&format!("c{n}"), size)),
            }
        }
        h
    })
}

proptest! {
    /// Whatever the history and budget: the result is valid, fits the budget, starts with the
    /// summary, has the latest user message verbatim and keeps a suffix of the old history.
    #[test]
    fn compaction_is_valid_and_fits(h in arb_history(), budget in 0usize..20_000) {
        let Ok(c) = compacted_history(&h, "sum", budget) else {
            return Ok(());
        };
        prop_assert_eq!(history::validate(&c.messages), Ok(()));
        let bytes: usize = c.messages.iter().map(message_bytes).sum();
        prop_assert!(bytes <= budget);
        prop_assert!(c.messages[0].text().starts_with(SUMMARY_HEADER));
        let latest = h.iter().rposition(|m| m.role == Role::User);
        let kept_from = 1 + usize::from(latest.is_some());
        if let Some(i) = latest {
            prop_assert_eq!(&c.messages[1], &h[i]);
        }
        let kept = &c.messages[kept_from..];
        prop_assert_eq!(kept, &h[h.len() - kept.len()..]);
        prop_assert_eq!(c.summarized + kept.len() + usize::from(latest.is_some()), h.len());
        let msgs = summary_messages(&h, None, budget);
        prop_assert_eq!(msgs.len(), 2);
    }
}

/// The `user` message carrying step `id`'s images, as a session writes it.
fn images_of(id: &str) -> Message {
    let mut m = Message::user("");
    m.content = Some(crate::wire::Content::Parts(vec![
        serde_json::json!({"type": "text",
            "text": format!("The images returned by the call {id} (`read_file`), in order:")}),
        serde_json::json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
    ]));
    m
}

#[test]
fn a_message_carrying_images_is_neither_the_users_latest_nor_quoted() {
    let mut h = vec![Message::user("the first task")];
    h.extend(step("a", 100));
    h.push(images_of("a"));
    h.push(Message::assistant("looked"));
    h.push(Message::user("the latest task"));
    for id in ["b", "c"] {
        h.extend(step(id, 2000));
        h.push(images_of(id));
    }
    let whole = compacted_history(&h, "S", 1_000_000).unwrap();
    assert_eq!(whole.messages[1].text(), "the latest task", "kept verbatim");
    let summary = whole.messages[0].text();
    assert!(summary.contains("- the first task"), "{summary}");
    assert!(!summary.contains("The images returned"), "{summary}");
    assert_eq!(
        whole.messages[2..],
        h[6..],
        "both steps kept, with their images"
    );
    // Room for one step: it is kept with its images, and nothing starts with images.
    let one_step: usize = h[9..].iter().map(message_bytes).sum();
    let base = message_bytes(&whole.messages[0]) + message_bytes(&whole.messages[1]);
    let tight = compacted_history(&h, "S", base + one_step + 10).unwrap();
    assert_eq!(tight.messages[2..], h[9..]);
    assert_eq!(history::validate(&tight.messages), Ok(()));
}

#[test]
fn a_pruned_image_message_is_not_the_users_latest_either() {
    // Pruning turns an old step's images into a text stub; it is still the tools' words.
    let mut h = vec![Message::user("the only task")];
    for id in ["a", "b", "c"] {
        h.extend(step(id, 2000));
        h.push(images_of(id));
    }
    let pruned = crate::context::prune_tool_outputs(&mut h, 1);
    assert!(!pruned.is_empty());
    let stub = h
        .iter()
        .find(|m| m.role == Role::User && m.text().starts_with("[output pruned"))
        .unwrap();
    assert!(crate::session::is_tool_images(stub) && !is_users(stub));
    let whole = compacted_history(&h, "S", 1_000_000).unwrap();
    assert_eq!(whole.messages[1].text(), "the only task", "kept verbatim");
    assert!(!whole.messages[0].text().contains("output pruned"));
    assert_eq!(history::validate(&whole.messages), Ok(()));
}

#[test]
fn the_transcript_labels_a_tool_images_message_as_the_tools_output() {
    let mut h = vec![Message::user("look at the screenshots")];
    for id in ["a", "b"] {
        h.extend(step(id, 2000));
        h.push(images_of(id));
    }
    crate::context::prune_tool_outputs(&mut h, 1);
    assert!(crate::context::is_pruned_images(&h[3]), "a's images pruned");
    assert!(
        crate::session::tool_images(&h[6]).is_some(),
        "b's images sent"
    );
    let text = summary_messages(&h, None, 1_000_000)[1].text();
    assert_eq!(
        text.matches("## user\n").count(),
        1,
        "only the user's own message is theirs: {text}"
    );
    assert!(
        text.contains(
            "## tool (images)\n[output pruned to save context: 1 image returned by `read_file`"
        ),
        "{text}"
    );
    assert!(
        text.contains("## tool (images)\n[1 image returned by b (`read_file`), not shown here]"),
        "{text}"
    );
}
