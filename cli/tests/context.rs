//! Long sessions end to end: `hrns exec` against a mock provider with a small context window
//! that answers summary requests wherever they come.

mod common;

use common::{Env, stderr};
use hrns_blocking::mock::{MOCK_BYTES_PER_TOKEN, MockProvider, Reply};
use serde_json::Value;
use std::path::Path;

const TASK: &str = "Read every module under src/ and list the functions that parse input.";

/// `n` source files of about 2.5 KB each under `work/src`.
fn write_sources(dir: &Path, n: usize) {
    for i in 0..n {
        let body: String = (0..60)
            .map(|l| format!("fn parse_{i}_{l}(input: &str) -> usize {{ input.len() }}\n"))
            .collect();
        std::fs::write(dir.join(format!("m{i}.rs")), body).unwrap();
    }
}

/// A script of `n` `read_file` calls, one per step, then the answer.
fn reads(n: usize) -> Vec<Reply> {
    let mut script: Vec<Reply> = (0..n)
        .map(|i| {
            Reply::tool_calls(&[(
                &format!("call_{i}"),
                "read_file",
                &format!(r#"{{"path":"src/m{i}.rs"}}"#),
            )])
        })
        .collect();
    script.push(Reply::text_answer("Every module parses input."));
    script
}

fn summary() -> Reply {
    Reply::text_answer("Goal: list the parsing functions. Files read: src/m*.rs. Next: answer.")
}

fn tokens(body: &[u8]) -> u64 {
    body.len() as u64 / MOCK_BYTES_PER_TOKEN
}

#[test]
fn a_long_tool_heavy_exec_run_stays_under_a_small_window() {
    let env = Env::with_dirs(&["work/src"]);
    write_sources(&env.path("work/src"), 40);
    let window = 9_000;
    let mock = MockProvider::start(reads(40))
        .unwrap()
        .with_context_window(window)
        .with_summary_reply(summary());
    let out = env.run(Some(&mock), &["exec", TASK]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Every module parses input."));
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("context compacted"))
        .collect();
    assert!(!lines.is_empty(), "one stderr line per compaction:\n{err}");
    assert!(lines.iter().any(|l| l.contains("summarised")), "{err}");
    assert!(lines.iter().any(|l| l.contains("pruned")), "{err}");
    assert!(
        lines[0].contains(&format!("of {window}")),
        "the window came from /models: {err}"
    );
    let chats = mock.chat_requests();
    let mut summaries = 0;
    for r in &chats {
        let body = r.json();
        assert!(tokens(&r.body) <= window, "a request passed the window");
        let texts = body["messages"].to_string();
        if body.get("tools").is_none() {
            summaries += 1;
        } else {
            assert!(texts.contains(TASK), "the task is in every request");
        }
    }
    assert!(summaries >= 1);
    assert_eq!(mock.remaining(), 0, "the whole script was used");

    // The session file recorded the compaction: export shows it, --continue resumes from it.
    let sessions = env.path("state/hrns/sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let id = file
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .rsplit('_')
        .next()
        .unwrap()
        .to_owned();
    let md = env.run(Some(&mock), &["sessions", "export", &id]);
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    assert!(md.contains("context compacted"), "{md}");
    assert!(
        md.contains("[Context compacted"),
        "the summary is shown: {md}"
    );
    let json = env.run(
        Some(&mock),
        &["sessions", "export", &id, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(!v["compactions"].as_array().unwrap().is_empty());

    mock.push(Reply::text_answer("Still here."));
    let before = mock.chat_requests().len();
    let out = env.run(Some(&mock), &["exec", "--continue", "and now?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let resumed = mock.chat_requests()[before].json();
    let msgs = resumed["messages"].as_array().unwrap();
    assert!(
        msgs[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("[Context compacted"),
        "resumed from the compacted history: {}",
        msgs[1]
    );
    assert!(tokens(&mock.chat_requests()[before].body) < window);
}

#[test]
fn json_mode_reports_context_compacted_events() {
    let env = Env::with_dirs(&["work/src"]);
    write_sources(&env.path("work/src"), 20);
    let mock = MockProvider::start(reads(20))
        .unwrap()
        .with_summary_reply(summary());
    // Room for the built-in tools' specs (the task tool's included) and a pruning step.
    let out = env.run(
        Some(&mock),
        &["exec", "--json", "--context-window", "8000", TASK],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let compacted: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "context_compacted")
        .collect();
    assert!(!compacted.is_empty());
    for e in &compacted {
        assert!(
            e["tokens_after"].as_u64() < e["tokens_before"].as_u64(),
            "{e}"
        );
        assert_eq!(e["window"], 8000);
    }
    assert!(
        compacted
            .iter()
            .any(|e| !e["pruned"].as_array().unwrap().is_empty())
    );
    for r in mock.chat_requests() {
        assert!(tokens(&r.body) <= 8000);
    }
}

#[test]
fn an_overflow_without_a_known_window_is_recovered_once() {
    let env = Env::with_dirs(&["work/src"]);
    write_sources(&env.path("work/src"), 6);
    // The mock enforces a window but /models does not list it: only the error teaches it.
    // (7 000 tokens: room for the system prompt and the tools, update_plan included.)
    let mock = MockProvider::start(reads(6))
        .unwrap()
        .with_context_window(7_000)
        .with_summary_reply(summary())
        .with_models(Vec::<String>::new());
    let out = env.run(Some(&mock), &["exec", TASK]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("the provider said the request was too long"),
        "{err}"
    );
    let over = mock
        .chat_requests()
        .iter()
        .filter(|r| tokens(&r.body) > 7_000)
        .count();
    assert_eq!(
        over, 1,
        "one overflow, then the learnt window keeps requests under it"
    );
}

#[test]
fn a_message_larger_than_the_window_fails_cleanly() {
    let env = Env::with_dirs(&["work/src"]);
    let mock = MockProvider::start([Reply::text_answer("never")])
        .unwrap()
        .with_summary_reply(summary());
    let huge = "word ".repeat(20_000);
    let out = env.run(Some(&mock), &["exec", "--context-window", "4000", &huge]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("could not compact the conversation"), "{err}");
    assert_eq!(mock.remaining(), 1, "no step request went out");
}
