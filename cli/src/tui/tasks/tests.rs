use super::*;
use hrns_core::session::ToolStatus;
use hrns_core::tool::ToolOutput;

fn ev(call: &str, event: Event) -> ChildEvent {
    ChildEvent {
        parent_call_id: call.into(),
        agent: "Explorer".into(),
        event,
    }
}

fn plain(lines: &[Line]) -> Vec<String> {
    lines.iter().map(Line::plain_text).collect()
}

#[test]
fn one_line_per_child_with_its_latest_call_and_time_then_an_end_line() {
    let t0 = Instant::now();
    let mut tasks = Tasks::default();
    assert!(tasks.lines(t0, 80).is_empty());
    tasks.on_event(&ev("a", Event::TurnStarted { turn: 1 }), t0, 80);
    tasks.on_event(&ev("b", Event::TurnStarted { turn: 1 }), t0, 80);
    let call = Event::ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: r#"{"path":"src/lib.rs"}"#.into(),
    };
    tasks.on_event(&ev("a", call), t0, 80);
    let shown = plain(&tasks.lines(t0 + Duration::from_millis(3200), 80));
    assert_eq!(shown.len(), 3, "{shown:?}");
    assert_eq!(shown[0], "  ▸ Explorer · read_file src/lib.rs · 3.2s");
    assert_eq!(shown[1], "  ▸ Explorer · thinking · 3.2s");
    assert!(shown[2].contains("Ctrl-O"));

    let result = Event::ToolResult {
        id: "c1".into(),
        name: "read_file".into(),
        status: ToolStatus::Ok,
        output: ToolOutput::ok("fn main() {}"),
    };
    tasks.on_event(&ev("a", result), t0, 80);
    tasks.on_event(
        &ev(
            "a",
            Event::TextDelta {
                text: "It has\na main.".into(),
            },
        ),
        t0,
        80,
    );
    assert_eq!(tasks.toggle(), Detail::Expanded);
    let shown = plain(&tasks.lines(t0, 80));
    assert!(
        shown.contains(&"    ● read_file src/lib.rs ✓".to_owned()),
        "{shown:?}"
    );
    assert!(shown.contains(&"    │ a main.".to_owned()), "{shown:?}");

    let end = tasks.on_event(
        &ev(
            "a",
            Event::TurnFinished {
                finish_reason: None,
                usage: None,
                output: None,
            },
        ),
        t0 + Duration::from_secs(4),
        80,
    );
    let end = plain(&end);
    assert_eq!(
        end.last().unwrap(),
        "  └ Explorer answered · 1 tool call · 4.0s"
    );
    assert!(end.len() > 1, "expanded: the details come first: {end:?}");
    let shown = plain(&tasks.lines(t0, 80));
    assert_eq!(shown[0], "  ▸ Explorer · thinking · 0.0s", "only b is left");

    let end = plain(&tasks.on_event(&ev("b", Event::TurnCancelled), t0, 80));
    assert_eq!(end, ["  └ Explorer cancelled · 0 tool calls · 0.0s"]);
    assert!(tasks.is_empty());
    // A late final event of a child that is gone starts nothing.
    assert!(
        tasks
            .on_event(&ev("b", Event::TurnCancelled), t0, 80)
            .is_empty()
    );
    assert!(tasks.is_empty());
}

#[test]
fn hostile_text_from_a_child_is_cleaned_and_cut_to_the_width() {
    let t0 = Instant::now();
    let mut tasks = Tasks::default();
    let call = Event::ToolCall {
        id: "c1".into(),
        name: "read\u{1b}[2Jfile".into(),
        arguments: format!(r#"{{"path":"{}"}}"#, "x".repeat(300)),
    };
    tasks.on_event(&ev("a", call), t0, 40);
    for line in tasks.lines(t0, 40) {
        assert!(line.width() <= 40, "{}", line.plain_text());
        assert!(!line.plain_text().contains('\u{1b}'));
    }
}

#[test]
fn children_left_when_the_turn_ends_end_as_cancelled() {
    let t0 = Instant::now();
    let mut tasks = Tasks::default();
    tasks.on_event(&ev("a", Event::TurnStarted { turn: 1 }), t0, 80);
    let end = plain(&tasks.end_all(t0, 80));
    assert_eq!(end, ["  └ Explorer cancelled · 0 tool calls · 0.0s"]);
    assert!(tasks.is_empty());
    assert!(
        tasks
            .on_event(&ev("a", Event::TurnCancelled), t0, 80)
            .is_empty()
    );
}

#[test]
fn parallel_results_mark_the_call_they_name_not_the_last_one() {
    let t0 = Instant::now();
    let mut tasks = Tasks::default();
    for (id, path) in [("c1", "a.rs"), ("c2", "b.rs"), ("c3", "c.rs")] {
        let call = Event::ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path":"{path}"}}"#),
        };
        tasks.on_event(&ev("a", call), t0, 80);
    }
    // The child's read-only calls ran in parallel: the first one failed and came back first,
    // the last one has not come back yet.
    let results = [
        ("c1", ToolOutput::error("no such file")),
        ("c2", ToolOutput::ok("fn b() {}")),
    ];
    for (id, output) in results {
        let result = Event::ToolResult {
            id: id.into(),
            name: "read_file".into(),
            status: ToolStatus::Ok,
            output,
        };
        tasks.on_event(&ev("a", result), t0, 80);
    }
    // A result naming no call of this child marks nothing.
    let stray = Event::ToolResult {
        id: "other".into(),
        name: "read_file".into(),
        status: ToolStatus::Ok,
        output: ToolOutput::ok(""),
    };
    tasks.on_event(&ev("a", stray), t0, 80);
    tasks.toggle();
    let shown = plain(&tasks.lines(t0, 80));
    assert_eq!(
        shown[1..4],
        [
            "    ● read_file a.rs ✗",
            "    ● read_file b.rs ✓",
            "    ● read_file c.rs",
        ],
        "{shown:?}"
    );
}
