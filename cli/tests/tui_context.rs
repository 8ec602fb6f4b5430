//! Long sessions in the interactive UI, in a real pseudo-terminal, against a mock provider
//! with a small context window that answers summary requests wherever they come.

mod pty;

use hrns_blocking::mock::{MOCK_BYTES_PER_TOKEN, MockProvider, Reply};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

#[test]
fn a_long_session_compacts_shows_ctx_and_compact_works_on_demand() {
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work/src"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    for i in 0..40 {
        let body: String = (0..60)
            .map(|l| format!("fn parse_{i}_{l}(input: &str) -> usize {{ input.len() }}\n"))
            .collect();
        std::fs::write(root.path().join(format!("work/src/m{i}.rs")), body).unwrap();
    }
    let mut script: Vec<Reply> = (0..40)
        .map(|i| {
            Reply::tool_calls(&[(
                &format!("call_{i}"),
                "read_file",
                &format!(r#"{{"path":"src/m{i}.rs"}}"#),
            )])
        })
        .collect();
    script.push(Reply::text_answer("All modules read."));
    let window = 9_000;
    let mock = MockProvider::start(script)
        .unwrap()
        .with_context_window(window)
        .with_summary_reply(Reply::text_answer("Goal: read the modules. Done: all."));
    let env = vec![
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
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 120);
    p.expect("mock-model", T);
    // The window comes from /models in the background; the status bar then shows ctx.
    p.expect("· ctx ", T);
    p.send("read every module under src\r");
    p.expect("All modules read.", T);
    let out = p.output();
    assert!(
        out.contains("context compacted (the context was nearly full)"),
        "{out}"
    );
    assert!(out.contains("pruned"), "{out}");
    assert!(out.contains("summarised"), "{out}");
    assert!(
        !out.contains("Goal: read the modules"),
        "the summary is not shown as an answer"
    );
    for r in mock.chat_requests() {
        assert!(
            r.body.len() as u64 / MOCK_BYTES_PER_TOKEN <= window,
            "a request passed the window"
        );
    }

    let before = mock.chat_requests().len();
    p.send("/compact keep the file names\r");
    p.expect("(as asked)", T);
    let sent = mock.chat_requests();
    assert_eq!(sent.len(), before + 1, "one summary request");
    let summary = sent[before].json();
    assert!(
        summary.get("tools").is_none(),
        "no tools in the summary request"
    );
    assert!(
        summary["messages"]
            .to_string()
            .contains("keep the file names")
    );
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert!(!p.output().contains("sk-tui-SECRET"));
}

#[test]
fn compact_of_a_short_chat_says_there_is_nothing_worth_compacting() {
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let mock = MockProvider::start([Reply::text_answer("Hello! How can I help?")])
        .unwrap()
        .with_context_window(100_000)
        .with_summary_reply(Reply::text_answer("Goal: greet."));
    let var = |d: &str| root.path().join(d).display().to_string();
    let env = vec![
        ("HOME", var("home")),
        ("XDG_CONFIG_HOME", var("config")),
        ("XDG_STATE_HOME", var("state")),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 120);
    p.expect("mock-model", T);
    p.send("hi\r");
    p.expect("How can I help?", T);
    p.send("/compact\r");
    p.expect("nothing worth compacting", T);
    assert!(!p.output().contains("context window"), "{}", p.output());
    assert_eq!(mock.chat_requests().len(), 1, "no summary request went out");
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
}
