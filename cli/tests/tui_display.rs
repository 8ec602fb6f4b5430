//! What the interactive UI shows, in a real pseudo-terminal: Markdown tables drawn as grids,
//! code coloured by its language (plain under `NO_COLOR`), and the model's plan.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply, chunk};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// An answer streamed in pieces of `size` characters.
fn answer_in_pieces(text: &str, size: usize) -> Reply {
    let chars: Vec<char> = text.chars().collect();
    let mut events = vec![chunk::role_chunk()];
    events.extend(
        chars
            .chunks(size)
            .map(|piece| chunk::text_chunk(&piece.iter().collect::<String>())),
    );
    events.push(chunk::finish_chunk("stop"));
    events.push(chunk::usage_chunk(8, 40));
    Reply::sse(events)
}

/// Starts the UI against `mock` with `extra` variables in its environment.
fn start(
    root: &tempfile::TempDir,
    mock: &MockProvider,
    extra: &[(&'static str, &str)],
) -> pty::Pty {
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let mut env = vec![
        ("HOME", root.path().join("home").display().to_string()),
        (
            "XDG_CONFIG_HOME",
            root.path().join("config").display().to_string(),
        ),
        (
            "XDG_STATE_HOME",
            root.path().join("state").display().to_string(),
        ),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    let p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &[],
        &root.path().join("work"),
        &env,
        30,
        100,
    );
    p.expect("mock-model", T);
    p
}

/// Whether `raw` sets a colour or style: an `ESC [ … m` sequence.
fn has_sgr(raw: &str) -> bool {
    raw.split("\x1b[").skip(1).any(|rest| {
        let params = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b';')
            .count();
        rest.as_bytes().get(params) == Some(&b'm')
    })
}

fn quit(mut p: pty::Pty) {
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
}

#[test]
fn a_table_answer_is_a_grid_without_raw_delimiter_rows() {
    let answer = "Sizes:\n\n| File | Bytes | 説明 |\n|:---|---:|---|\n| main.rs | 1200 | entry 🚀 |\n\
                  | lib.rs | 80 | 本体 |\n\nThat is all.";
    let mock = MockProvider::start([answer_in_pieces(answer, 1)]).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut p = start(&root, &mock, &[]);
    p.send("sizes?\r");
    p.expect("That is all.", T);
    p.expect_screen("the table's last border", T, |s| s.contains("└"));
    let screen = p.screen();
    assert!(
        screen.contains("│ File    │ Bytes │ 説明     │"),
        "{screen}"
    );
    assert!(
        screen.contains("│ main.rs │  1200 │ entry 🚀 │"),
        "{screen}"
    );
    // Neither the screen nor anything written on the way (the table was streamed one
    // character at a time) shows the delimiter row as text.
    for text in [screen, p.output()] {
        assert!(!text.contains("|---"), "{text}");
        assert!(!text.contains("| File"), "{text}");
    }
    quit(p);
}

const RUST: &str = "Here:\n\n```rust\nfn main() {\n    let answer = 42;\n}\n```\n\nDone.";

#[test]
fn a_rust_code_block_is_coloured() {
    let mock = MockProvider::start([answer_in_pieces(RUST, 3)]).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut p = start(&root, &mock, &[("COLORTERM", "truecolor")]);
    p.send("code?\r");
    p.expect("Done.", T);
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    // The keyword `fn` and the number are drawn in 24-bit theme colours.
    let coloured = |word: &str| {
        raw.match_indices(word).any(|(at, _)| {
            let before = &raw[..at];
            before.ends_with('m')
                && before[before.len().saturating_sub(24)..].contains("\x1b[38;2;")
        })
    };
    assert!(coloured("fn"), "{raw:?}");
    assert!(coloured("42"), "{raw:?}");
    assert!(has_sgr(&raw));
    quit(p);
}

#[test]
fn no_color_leaves_code_plain() {
    let mock = MockProvider::start([answer_in_pieces(RUST, 3)]).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut p = start(
        &root,
        &mock,
        &[("NO_COLOR", "1"), ("COLORTERM", "truecolor")],
    );
    p.send("code?\r");
    p.expect("Done.", T);
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    assert!(raw.contains("fn main() {"), "{raw:?}");
    assert!(!raw.contains("\x1b[38;"), "{raw:?}");
    assert!(!has_sgr(&raw), "no colour or style at all: {raw:?}");
    quit(p);
}

#[test]
fn a_plan_shows_as_a_checklist_and_changes() {
    let first = r#"{"plan":[{"step":"write the parser","status":"in_progress"},{"step":"test it","status":"pending"}]}"#;
    let second = r#"{"plan":[{"step":"write the parser","status":"completed"},{"step":"test it","status":"in_progress"}]}"#;
    let mock = MockProvider::start([
        Reply::tool_calls(&[("p1", "update_plan", first)]),
        Reply::tool_calls(&[("p2", "update_plan", second)]),
        Reply::text_answer("Parser written and tested."),
    ])
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut p = start(&root, &mock, &[]);
    p.send("build a parser\r");
    p.expect("Parser written and tested.", T);
    let out = p.output();
    let first_at = out.find("◐ write the parser").expect(&out);
    let changed_at = out.find("☑ write the parser").expect(&out);
    assert!(first_at < changed_at, "{out}");
    assert!(out[first_at..].contains("☐ test it"), "{out}");
    assert!(out[changed_at..].contains("◐ test it"), "{out}");
    // The updates went to the scrollback: the last one is on the screen after the turn.
    let screen = p.screen();
    assert!(screen.contains("☑ write the parser"), "{screen}");
    assert_eq!(
        mock.chat_requests()[1].json()["messages"][3]["content"],
        "Plan updated."
    );
    quit(p);
}

#[test]
fn the_plan_stays_above_the_prompt_while_the_turn_runs() {
    let first = r#"{"plan":[{"step":"write the parser","status":"in_progress"},{"step":"test it","status":"pending"}]}"#;
    let second = r#"{"plan":[{"step":"write the parser","status":"completed"},{"step":"test it","status":"in_progress"}]}"#;
    let mock = MockProvider::start([
        Reply::tool_calls(&[("p1", "update_plan", first)]),
        Reply::tool_calls(&[("p2", "update_plan", second)]),
        // The model thinks for ever: the turn stays running until Esc.
        Reply::hang(),
    ])
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut p = start(&root, &mock, &[]);
    p.send("build a parser\r");
    // The live area, bottom up: status line, prompt, spinner, then the checklist.
    let live_plan = |screen: &str| -> Option<Vec<String>> {
        let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
        let spinner = rows.iter().rposition(|r| r.contains("Esc to interrupt"))?;
        let plan = rows[..spinner].iter().rposition(|r| r.trim() == "Plan")?;
        Some(rows[plan..spinner].iter().map(|r| r.to_string()).collect())
    };
    p.expect_screen("the second plan above the prompt", T, |s| {
        live_plan(s).is_some_and(|rows| rows.iter().any(|r| r.contains("◐ test it")))
    });
    let screen = p.screen();
    assert_eq!(
        live_plan(&screen).unwrap(),
        ["Plan", "  ☑ write the parser", "  ◐ test it"],
        "{screen}"
    );
    let rows: Vec<&str> = screen.lines().collect();
    let spinner = rows
        .iter()
        .rposition(|r| r.contains("Esc to interrupt"))
        .unwrap();
    assert!(rows[spinner + 1].starts_with("› "), "{screen}");
    // The update also went to the scrollback, once.
    assert_eq!(screen.matches("◐ test it").count(), 2, "{screen}");
    // Interrupted, the turn is over: the checklist leaves the live area, its copy in the
    // scrollback stays.
    p.send("\x1b");
    p.expect_screen("the turn's end", T, |s| !s.contains("Esc to interrupt"));
    let screen = p.screen();
    assert_eq!(screen.matches("◐ test it").count(), 1, "{screen}");
    quit(p);
}

#[test]
fn status_shows_the_cost_of_a_priced_model() {
    let usage = r#"{"id":"c","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[],"usage":{"prompt_tokens":10000,"completion_tokens":500,"total_tokens":10500,"prompt_tokens_details":{"cached_tokens":2000}}}"#;
    let reply = Reply::sse(vec![
        chunk::role_chunk(),
        chunk::text_chunk("Counted."),
        chunk::finish_chunk("stop"),
        usage.to_owned(),
    ]);
    let mock = MockProvider::start([reply]).unwrap();
    let root = tempfile::tempdir().unwrap();
    let config = root.path().join("config/hrns");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.json"),
        r#"{"pricing": {"mock-model": {"input": 2.5, "output": 10, "cachedInput": 1.25}}}"#,
    )
    .unwrap();
    let mut p = start(&root, &mock, &[]);
    p.send("count\r");
    p.expect("Counted.", T);
    // 8 000 × 2.5 + 2 000 × 1.25 + 500 × 10, per million tokens; on the status line too.
    p.expect_screen("the cost on the status line", T, |s| {
        s.lines().last().is_some_and(|l| l.contains("$0.0275"))
    });
    p.send("/status\r");
    p.expect_screen("the status report", T, |s| s.contains("cost "));
    let screen = p.screen();
    for row in [
        "model     mock-model",
        "approval  ask",
        "tokens    10.0k prompt (2.0k cached) · 500 completion",
        "cost      $0.0275 (at 2.5 in · 10 out · 1.25 cached per million tokens)",
    ] {
        assert!(screen.contains(row), "{row}\n{screen}");
    }
    assert!(!screen.contains("sk-tui-SECRET"), "{screen}");
    quit(p);
}

#[test]
fn status_says_when_the_cost_is_unknown() {
    let mock = MockProvider::start([answer_in_pieces("Counted.", 4)]).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut p = start(&root, &mock, &[]);
    p.send("count\r");
    p.expect("Counted.", T);
    p.send("/status\r");
    p.expect_screen("the status report", T, |s| s.contains("cost "));
    let screen = p.screen();
    assert!(
        screen.contains("cost      unknown: the config gives no \"pricing\" for mock-model"),
        "{screen}"
    );
    // No made-up figure anywhere, the status line included.
    assert!(!screen.contains('$'), "{screen}");
    quit(p);
}

#[test]
fn read_file_results_are_coloured_by_the_files_extension() {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("r1", "read_file", r#"{"path":"lib.rs"}"#)]),
        Reply::text_answer("Read it."),
    ])
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("work")).unwrap();
    std::fs::write(
        root.path().join("work/lib.rs"),
        "pub fn answer() -> u32 {\n    42\n}\n",
    )
    .unwrap();
    let mut p = start(&root, &mock, &[("COLORTERM", "truecolor")]);
    p.send("read lib.rs\r");
    p.expect("Read it.", T);
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    // The file's first line, under the call, each word in a theme colour: `fn` as a span
    // of its own in 24-bit colour.
    let at = raw.find("         1  ").expect(&raw);
    let line = &raw[at..raw[at..].find('\n').map_or(raw.len(), |end| at + end)];
    assert!(line.contains("m\x1b[38;2;"), "{line:?}");
    assert!(line.contains("mfn\x1b[0m"), "{line:?}");
    assert!(line.contains("answer"), "{line:?}");
    quit(p);
}
