use super::*;
use crate::session::ToolStatus;
use crate::tool::ToolOutput;

const KEY: &str = "sk-evtjson-7Qm2Xa9Lp4Zr8Wk3";

fn secrets() -> Secrets {
    let mut s = Secrets::new();
    s.add(KEY);
    let forms = s.json_forms();
    s.extend(&forms);
    s
}

fn text(t: &str) -> Event {
    Event::TextDelta { text: t.into() }
}

fn finished() -> Event {
    Event::TurnFinished {
        finish_reason: None,
        usage: None,
        output: None,
    }
}

/// The lines of `batches` of events, each batch ended as a driver ends it, then the text.
fn encode(secrets: &Secrets, batches: &[Vec<Event>]) -> String {
    let mut lines = JsonLines::new();
    let mut out = Vec::new();
    for batch in batches {
        for event in batch {
            lines.event(secrets, event, Extra::default(), &mut out);
        }
        lines.end_batch(secrets, &mut out);
    }
    lines.finish(secrets, &mut out);
    String::from_utf8(out).unwrap()
}

/// The text the lines of `out` carry, joined, and their count.
fn joined(out: &str) -> (String, usize) {
    let mut all = String::new();
    let mut n = 0;
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect(line);
        if v["type"] == "text_delta" {
            all.push_str(v["text"].as_str().unwrap());
            n += 1;
        }
    }
    (all, n)
}

#[test]
fn a_secret_split_anywhere_over_deltas_and_batches_is_one_redaction_and_each_delta_one_line() {
    let s = secrets();
    let answer = format!("the key is {KEY}, and again {KEY}. done");
    for cut in 1..answer.len() {
        for batch_cut in [false, true] {
            let (a, b) = answer.split_at(cut);
            let batches = if batch_cut {
                vec![vec![text(a)], vec![text(b)]]
            } else {
                vec![vec![text(a), text(b)]]
            };
            let out = encode(&s, &batches);
            assert!(!out.contains("evtjson"), "cut {cut}: {out}");
            let (shown, n) = joined(&out);
            assert_eq!(n, 2, "one line per delta, cut {cut}: {out}");
            assert_eq!(
                shown, "the key is [redacted], and again [redacted]. done",
                "cut {cut}"
            );
        }
    }
}

#[test]
fn byte_by_byte_deltas_of_a_secret_lose_no_other_byte() {
    let s = secrets();
    let answer = format!("αβ {KEY}\n\"quoted\" \u{0} end");
    let batches: Vec<Vec<Event>> = answer
        .char_indices()
        .map(|(i, c)| vec![text(&answer[i..i + c.len_utf8()])])
        .collect();
    let out = encode(&s, &batches);
    assert!(!out.contains("evtjson"), "{out}");
    let (shown, n) = joined(&out);
    // A line per character but the key's, which are one: the bytes after its first lie
    // wholly inside it and say nothing.
    assert_eq!(n, answer.chars().count() - (KEY.len() - 1));
    assert_eq!(shown, "αβ [redacted]\n\"quoted\" \u{0} end");
}

#[test]
fn delta_lines_are_what_serde_writes_for_hostile_text() {
    let none = Secrets::new();
    let hostile = [
        "",
        "\"",
        "\\",
        "\u{0}\u{1f}\u{7f}",
        "\u{2028}\u{2029}",
        "😀é",
        "}\n{\"type\":\"x\"}",
        "\\u0000",
        "\r\t\u{8}\u{c}",
    ];
    for t in hostile {
        for event in [
            text(t),
            Event::ReasoningDelta { text: t.into() },
            Event::RefusalDelta { text: t.into() },
        ] {
            let out = encode(&none, &[vec![event.clone()]]);
            let mut serde = serde_json::to_string(&event).unwrap();
            serde.push('\n');
            if t.is_empty() {
                // An empty delta says nothing: no line.
                assert_eq!(out, "");
            } else {
                assert_eq!(out, serde, "{t:?}");
            }
        }
    }
}

#[test]
fn a_change_of_kind_ends_the_text_and_each_kind_keeps_its_line() {
    let s = secrets();
    let (a, b) = (&KEY[..20], &KEY[8..]);
    let out = encode(
        &s,
        &[vec![
            Event::ReasoningDelta { text: a.into() },
            text(b),
            finished(),
        ]],
    );
    // Each part holds fragments of the key long enough to be hidden on their own.
    assert!(!out.contains(a) && !out.contains(b), "{out}");
    assert!(!out.contains(&KEY[8..16]), "{out}");
    let kinds: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(
        kinds,
        ["\"reasoning_delta\"", "\"text_delta\"", "\"turn_finished\""]
    );
}

#[test]
fn other_events_are_redacted_lines_with_their_extra_fields() {
    let s = secrets();
    let result = Event::ToolResult {
        id: "c1".into(),
        name: "write_file".into(),
        status: ToolStatus::Ok,
        output: ToolOutput::ok(format!("wrote \"{KEY}\"")),
    };
    let mut lines = JsonLines::new();
    let mut out = Vec::new();
    lines.event(&s, &text("before "), Extra::default(), &mut out);
    let diff = format!("+KEY={KEY}\n");
    let extra = Extra {
        diff: Some(&diff),
        cost: None,
    };
    lines.event(&s, &result, extra, &mut out);
    let extra = Extra {
        diff: None,
        cost: Some(0.25),
    };
    lines.event(&s, &finished(), extra, &mut out);
    let out = String::from_utf8(out).unwrap();
    assert!(!out.contains("evtjson"), "{out}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["text"], "before ");
    assert_eq!(lines[1]["diff"], "+KEY=[redacted]\n");
    assert_eq!(lines[1]["output"]["content"], "wrote \"[redacted]\"");
    assert_eq!(lines[2]["cost"], 0.25);
}

#[test]
fn a_subagents_events_are_tagged_lines_and_its_deltas_are_left_out() {
    let s = secrets();
    let child = |event: Event| {
        Event::Child(Box::new(ChildEvent {
            parent_call_id: "t1".into(),
            agent: "explorer".into(),
            event,
        }))
    };
    let mut lines = JsonLines::new();
    let mut out = Vec::new();
    lines.event(&s, &text("parent "), Extra::default(), &mut out);
    lines.event(&s, &child(text(KEY)), Extra::default(), &mut out);
    lines.event(&s, &text("text"), Extra::default(), &mut out);
    let call = Event::ToolCall {
        id: "k".into(),
        name: "grep".into(),
        arguments: format!("{{\"pattern\":\"{KEY}\"}}"),
    };
    lines.event(&s, &child(call), Extra::default(), &mut out);
    lines.finish(&s, &mut out);
    let out = String::from_utf8(out).unwrap();
    assert!(!out.contains("evtjson"), "{out}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The child's delta neither shows nor cuts the parent's text.
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["text"], "parent ");
    assert_eq!(lines[1]["text"], "text");
    assert_eq!(lines[2]["parent_call_id"], "t1");
    assert_eq!(lines[2]["agent"], "explorer");
    assert_eq!(lines[2]["type"], "tool_call");
}

#[test]
fn deltas_hand_out_each_delta_once_in_order_for_any_batching() {
    // The pieces an editor server joins: whatever the batching, every byte once, in order.
    let s = secrets();
    let answer = format!("one {KEY} two {KEY} three");
    for size in [1, 3, 7, 16, answer.len()] {
        let mut deltas = Deltas::new();
        let mut seen = String::new();
        let mut each = |kind: DeltaKind, clean: &str| {
            assert_eq!(kind, DeltaKind::Text);
            seen.push_str(clean);
        };
        let bytes = answer.as_bytes();
        for (i, piece) in bytes.chunks(size).enumerate() {
            let piece = std::str::from_utf8(piece).unwrap();
            deltas.push(&s, DeltaKind::Text, piece, &mut each);
            if i % 2 == 1 {
                deltas.drain(&s, Ending::More, &mut each);
            }
        }
        deltas.drain(&s, Ending::Last, &mut each);
        assert!(deltas.is_empty());
        assert_eq!(seen, "one [redacted] two [redacted] three", "size {size}");
    }
}

#[test]
fn a_call_with_malformed_arguments_is_still_one_valid_redacted_line() {
    let s = secrets();
    let call = Event::ToolCall {
        id: "c\"1\n".into(),
        name: "run_command\u{0}".into(),
        // Not JSON: cut off, with a raw quote and the key inside.
        arguments: format!("{{\"command\": \"echo \"{KEY}\\"),
    };
    let out = encode(&s, &[vec![text("a"), call]]);
    assert!(!out.contains("evtjson"), "{out}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[1]["type"], "tool_call");
    assert_eq!(lines[1]["id"], "c\"1\n");
    assert!(
        lines[1]["arguments"]
            .as_str()
            .unwrap()
            .contains("[redacted]")
    );
}

proptest::proptest! {
    #![proptest_config(crate::proptest_seeds::config())]
    /// Any text with the key in it, cut into any deltas and any batches: one line per delta
    /// but those that lie wholly inside the key after its start (and empty ones), each what
    /// serde writes for its part, and together the text redacted whole.
    #[test]
    fn any_split_into_deltas_and_batches_is_the_whole_text_redacted(
        before in "[a-z \"\\\\\n\u{0}é😀]{0,20}",
        after in "[a-z \"\\\\\n\u{1f}é]{0,20}",
        cuts in proptest::collection::vec((0usize..64, proptest::bool::ANY), 0..12),
    ) {
        let s = secrets();
        let answer = format!("{before}{KEY}{after}");
        let key = before.len()..before.len() + KEY.len();
        let mut points: Vec<(usize, bool)> = cuts
            .into_iter()
            .map(|(at, batch)| (at % (answer.len() + 1), batch))
            .filter(|(at, _)| answer.is_char_boundary(*at))
            .collect();
        points.sort_unstable();
        points.dedup_by_key(|(at, _)| *at);
        let mut batches: Vec<Vec<Event>> = vec![Vec::new()];
        let mut start = 0;
        let mut n = 0;
        for (at, new_batch) in points.into_iter().chain([(answer.len(), false)]) {
            if at > start || at == answer.len() {
                batches.last_mut().unwrap().push(text(&answer[start..at]));
                let inside_key = start > key.start && at <= key.end;
                if at > start && !inside_key {
                    n += 1;
                }
                start = at;
            }
            if new_batch {
                batches.push(Vec::new());
            }
        }
        let out = encode(&s, &batches);
        proptest::prop_assert!(!out.contains("evtjson"));
        for line in out.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let event = text(v["text"].as_str().unwrap());
            proptest::prop_assert_eq!(serde_json::to_string(&event).unwrap(), line);
        }
        let (shown, lines) = joined(&out);
        proptest::prop_assert_eq!(lines, n);
        proptest::prop_assert_eq!(shown, format!("{before}[redacted]{after}"));
    }
}
