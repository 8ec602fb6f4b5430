//! The interactive UI in a real pseudo-terminal against the mock provider.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

struct Ui {
    _root: tempfile::TempDir,
    work: PathBuf,
    p: pty::Pty,
}

fn start(mock: &MockProvider, args: &[&str]) -> Ui {
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    start_in(root, mock, args)
}

fn env_of(root: &std::path::Path, mock: &MockProvider) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", root.join("home").display().to_string()),
        ("XDG_CONFIG_HOME", root.join("config").display().to_string()),
        ("XDG_STATE_HOME", root.join("state").display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ]
}

fn start_in(root: tempfile::TempDir, mock: &MockProvider, args: &[&str]) -> Ui {
    let work = root.path().join("work");
    let env = env_of(root.path(), mock);
    let p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), args, &work, &env, 30, 100);
    p.expect("mock-model", T);
    Ui {
        _root: root,
        work,
        p,
    }
}

impl Ui {
    fn quit(mut self) {
        self.p.send("/quit\r");
        assert_eq!(self.p.wait(T), 0);
        assert!(
            self.p.cursor_visible(),
            "the cursor is shown again after exit"
        );
        assert!(!self.p.output().contains("sk-tui-SECRET"));
    }
}

#[test]
fn streamed_answer_appears_before_the_stream_ends() {
    let reply = Reply::text_answer("Early words arrive first. Later words arrive after a pause.");
    let mid = reply.body().len() / 2;
    let mock = MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_secs(2))]).unwrap();
    let mut ui = start(&mock, &[]);
    ui.p.send("hello\r");
    let start = Instant::now();
    ui.p.expect("Early words", T);
    assert!(
        start.elapsed() < Duration::from_millis(1800),
        "text shown while the stream was open"
    );
    ui.p.expect("after a pause.", T);
    ui.quit();
}

#[test]
fn approvals_yes_and_no_with_a_reason() {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"echo approved-run"}"#)]),
        Reply::text_answer("Ran it."),
        Reply::tool_calls(&[("c2", "write_file", r#"{"path":"x.txt","content":"x"}"#)]),
        Reply::text_answer("Understood."),
    ])
    .unwrap();
    let mut ui = start(&mock, &[]);
    ui.p.send("run something\r");
    ui.p.expect("[y]es", T);
    ui.p.send("y");
    ui.p.expect("Ran it.", T);
    ui.p.send("write a file\r");
    // The prompt on screen (the first one has gone from it) means the UI is asking: `n`
    // answers it rather than being typed into the editor.
    ui.p.expect_screen("the approval prompt", T, |s| s.contains("[y]es"));
    ui.p.send("n");
    ui.p.expect("reason", T);
    ui.p.send("not in this repo\r");
    ui.p.expect("Understood.", T);
    assert!(
        !ui.work.join("x.txt").exists(),
        "denied write did not happen"
    );
    let reqs = mock.chat_requests();
    let first_result = &reqs[1].json()["messages"];
    assert!(first_result.to_string().contains("approved-run"));
    let denied = reqs[3].json()["messages"].to_string();
    assert!(denied.contains("not in this repo"), "{denied}");
    ui.quit();
}

/// A model switch builds a new session from the history: the user's "always" for a tool goes
/// with it, so the next call of that tool runs without a question.
#[test]
fn always_allow_outlasts_a_model_switch() {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"echo first-run"}"#)]),
        Reply::text_answer("Ran one."),
        Reply::tool_calls(&[("c2", "run_command", r#"{"command":"echo second-run"}"#)]),
        Reply::text_answer("Ran two."),
    ])
    .unwrap()
    .with_models(["alpha", "beta"]);
    let mut ui = start(&mock, &[]);
    ui.p.send("run one\r");
    ui.p.expect("[a]lways", T);
    ui.p.send("a");
    ui.p.expect("Ran one.", T);
    ui.p.send("/model beta\r");
    ui.p.expect("model: beta", T);
    ui.p.send("run two\r");
    ui.p.expect("Ran two.", T);
    assert_eq!(
        ui.p.output().matches("[a]lways").count(),
        1,
        "asked only once"
    );
    let chats: Vec<_> = mock
        .chat_requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    assert_eq!(chats[3].json()["model"], "beta");
    assert!(
        chats[3].json()["messages"]
            .to_string()
            .contains("second-run")
    );
    ui.quit();
}

#[test]
fn escape_cancels_mid_stream_and_the_next_message_works() {
    let reply = Reply::text_answer("Partial answer then a very long wait");
    let mid = reply.body().len() / 2;
    let mock = MockProvider::start([
        reply.split_at(&[mid]).delay(Duration::from_secs(30)),
        Reply::text_answer("Second answer."),
    ])
    .unwrap();
    let mut ui = start(&mock, &[]);
    ui.p.send("first\r");
    ui.p.expect("Partial", T);
    ui.p.send("\x1b");
    ui.p.expect("interrupted", T);
    ui.p.send("second\r");
    ui.p.expect("Second answer.", T);
    let msgs = mock.chat_requests()[1].json()["messages"].to_string();
    assert!(msgs.contains("interrupted by the user"), "{msgs}");
    ui.quit();
}

#[test]
fn slash_commands() {
    let mock = MockProvider::start([
        Reply::text_answer("ANSWER-ONE"),
        Reply::text_answer("ANSWER-TWO"),
    ])
    .unwrap()
    .with_models(["alpha", "beta"]);
    let mut ui = start(&mock, &[]);
    ui.p.send("/help\r");
    ui.p.expect("/connect", T);
    ui.p.send("/frobnicate\r");
    ui.p.expect("unknown command", T);
    ui.p.send("/model\r");
    ui.p.expect("pick one", T);
    ui.p.send("/models\r");
    ui.p.expect("beta", T);
    ui.p.send("/model beta\r");
    ui.p.expect("model: beta", T);
    ui.p.send("/agents\r");
    ui.p.expect("Planner", T);
    ui.p.send("/agent explorer\r");
    ui.p.expect("agent: Explorer", T);
    ui.p.send("/providers\r");
    ui.p.send("/provider nosuch\r");
    ui.p.expect("nosuch", T);
    ui.p.send("hi\r");
    ui.p.expect("ANSWER-ONE", T);
    // Typed before the turn has quite ended, `/retry` waits in the queue and runs after it.
    ui.p.send("/retry\r");
    ui.p.expect("ANSWER-TWO", T);
    let reqs = mock.chat_requests();
    let chats: Vec<_> = reqs
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    assert_eq!(chats[0].json()["model"], "beta");
    let tools = chats[0].json()["tools"].to_string();
    assert!(!tools.contains("write_file"), "Explorer has no write_file");
    assert_eq!(
        chats[1].json()["messages"].as_array().unwrap().len(),
        2,
        "retry resends, not duplicates"
    );
    ui.p.send("/new\r");
    ui.p.expect("new conversation", T);
    ui.quit();
}

#[test]
fn history_recall_and_multi_line_input() {
    let mock = MockProvider::start([Reply::text_answer("A1"), Reply::text_answer("A2")]).unwrap();
    let mut ui = start(&mock, &[]);
    ui.p.send("line one\\\r");
    ui.p.send("line two\r");
    ui.p.expect("A1", T);
    ui.p.send("\x1b[A");
    // Once in the transcript's echo, once more in the editor.
    ui.p.expect_screen("the recalled message in the editor", T, |s| {
        s.matches("line two").count() == 2
    });
    ui.p.send("\r");
    ui.p.expect("A2", T);
    let first = mock.chat_requests()[0].json();
    assert_eq!(first["messages"][1]["content"], "line one\nline two");
    ui.quit();
}

#[test]
fn resize_redraws_and_ctrl_d_exits_restored() {
    let mock = MockProvider::start([Reply::text_answer("sized")]).unwrap();
    let mut ui = start(&mock, &[]);
    // A long line in the editor shows when the UI has taken the resize in: it wraps it to the
    // new width itself, continuing under the prompt's indent (the terminal's own wrap would not
    // indent).
    let long = "0123456789".repeat(7);
    ui.p.send(&long);
    ui.p.expect(&long, T);
    ui.p.resize(20, 50);
    // 50 columns, one kept free, two for the prompt: 47 characters a row.
    let rest = format!("  {}", &long[47..]);
    ui.p.expect_screen("the input wrapped to 50 columns", T, |s| {
        s.lines().any(|l| l == rest)
    });
    ui.p.send("\x15hello\r");
    ui.p.expect("sized", T);
    // The status line is drawn after the answer's text: wait for the banner and exactly one
    // status line (a status line drawn twice after the resize never settles to two).
    ui.p.expect_screen("the banner and one status line", T, |s| {
        s.matches("mock-model").count() == 2
    });
    ui.p.send("\x04");
    assert_eq!(ui.p.wait(T), 0);
    assert!(ui.p.cursor_visible());
}

#[test]
fn an_error_is_shown_and_the_terminal_restored() {
    let mock = MockProvider::start([Reply::error(401, "invalid key here")]).unwrap();
    let mut ui = start(&mock, &[]);
    ui.p.send("hello\r");
    ui.p.expect("invalid key here", T);
    ui.p.send("\x03");
    ui.p.send("\x03");
    assert_eq!(ui.p.wait(T), 0);
    assert!(ui.p.cursor_visible());
}

#[test]
fn continue_opens_the_saved_conversation() {
    let mock = MockProvider::start([
        Reply::text_answer("Paris is the capital."),
        Reply::text_answer("About 2 million."),
    ])
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrns"))
        .current_dir(root.path().join("work"))
        .env_clear()
        .envs(env_of(root.path(), &mock))
        .args(["exec", "capital of France?"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut ui = start_in(root, &mock, &["--continue"]);
    ui.p.expect("Paris is the capital.", T);
    ui.p.expect("resumed session", T);
    ui.p.send("/sessions\r");
    ui.p.expect("2 messages", T);
    ui.p.send("how many people live there?\r");
    ui.p.expect("About 2 million.", T);
    let msgs = mock.chat_requests()[1].json()["messages"].clone();
    let texts: Vec<&str> = msgs.as_array().unwrap()[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "capital of France?",
            "Paris is the capital.",
            "how many people live there?"
        ]
    );
    ui.quit();
}

#[test]
fn connect_adds_a_provider_and_switches_the_live_client() {
    let first = MockProvider::start([]).unwrap();
    let second = MockProvider::start([Reply::text_answer("from the second provider")]).unwrap();
    let mut ui = start(&first, &[]);
    ui.p.send("/connect\r");
    ui.p.expect("provider name", T);
    ui.p.send("second\r");
    ui.p.expect("base URL", T);
    ui.p.send(&format!("{}\r", second.base_url()));
    ui.p.expect("API key", T);
    ui.p.send("sk-second-HIDDEN\r");
    // The second provider's /models, numbered; a name can be typed instead.
    ui.p.expect("1. mock-model", T);
    ui.p.expect("[1]: ", T);
    ui.p.send("model-two\r");
    ui.p.expect("provider: second (model-two)", T);
    ui.p.send("hello\r");
    ui.p.expect("from the second provider", T);
    assert!(first.requests().is_empty());
    let req = &second.chat_requests()[0];
    assert_eq!(req.json()["model"], "model-two");
    assert_eq!(req.header("authorization"), Some("Bearer sk-second-HIDDEN"));
    assert!(
        !ui.p.output().contains("sk-second-HIDDEN"),
        "the key was shown"
    );
    let config =
        std::fs::read_to_string(ui.work.parent().unwrap().join("config/hrns/config.json")).unwrap();
    assert!(
        config.contains("\"currentProvider\": \"second\""),
        "{config}"
    );
    ui.quit();
}

/// Whether a request is the parent's (it offers `task`), and the text of its last message.
fn parent_and_last(req: &hrns_blocking::mock::RecordedRequest) -> (bool, serde_json::Value) {
    let body = req.json();
    let parent = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["function"]["name"] == "task");
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    (parent, last)
}

#[test]
fn subagents_show_one_line_each_expand_with_ctrl_o_and_stop_on_escape() {
    let mock = MockProvider::start_with(|req| {
        if req.method != "POST" {
            return None;
        }
        let (parent, last) = parent_and_last(req);
        let text = last["content"].as_str().unwrap_or_default().to_owned();
        let task = |prompt: &str| {
            let a = serde_json::json!({"description": "read", "prompt": prompt}).to_string();
            let b =
                serde_json::json!({"description": "plan", "prompt": prompt, "agent": "Planner"})
                    .to_string();
            Reply::tool_calls(&[("task_1", "task", &a), ("task_2", "task", &b)])
        };
        Some(match (parent, last["role"].as_str()) {
            (true, Some("user")) if text.contains("slowly") => task("Read notes.txt."),
            (true, Some("user")) => task("Wait forever."),
            (true, _) => Reply::text_answer("Both subagents answered."),
            (false, Some("user")) if text.contains("forever") => Reply::hang(),
            (false, Some("user")) => {
                Reply::tool_calls(&[("r1", "read_file", r#"{"path":"notes.txt"}"#)])
            }
            // The children take their time to answer, so their lines can be seen.
            (false, _) => {
                Reply::text_answer("The notes say hello.").delay_head(Duration::from_secs(3))
            }
        })
    })
    .unwrap();
    let mut ui = start(&mock, &[]);
    std::fs::write(ui.work.join("notes.txt"), "hello\n").unwrap();
    ui.p.send("delegate slowly\r");
    // One line per child with its agent and its latest tool call.
    ui.p.expect_screen("both children's lines", T, |s| {
        s.contains("▸ Explorer · read_file notes.txt") && s.contains("▸ Planner · read_file")
    });
    ui.p.send("\x0f"); // Ctrl-O
    ui.p.expect_screen("the children's tool calls", T, |s| {
        s.contains("● read_file notes.txt ✓") && s.contains("Ctrl-O to hide")
    });
    ui.p.expect("Both subagents answered.", T);
    let screen = ui.p.output();
    assert!(
        screen.contains("Explorer answered · 1 tool call"),
        "{screen}"
    );
    assert!(
        screen.contains("Planner answered · 1 tool call"),
        "{screen}"
    );

    // Escape while both children wait for the provider stops them and the turn.
    let before = mock.chat_requests().len();
    ui.p.send("delegate and wait\r");
    ui.p.expect_screen("both waiting children", T, |s| {
        s.contains("▸ Explorer · thinking") && s.contains("▸ Planner · thinking")
    });
    assert!(mock.wait_for_requests(before + 3, T));
    ui.p.send("\x1b");
    ui.p.expect("interrupted", T);
    ui.p.expect_screen("the children's ends", T, |s| {
        s.contains("Explorer cancelled") && s.contains("Planner cancelled")
    });
    // Each child really stopped: its own cancel reached the session file (children's lines
    // are `{"child": {"parent_call_id", "agent", "event"}}`).
    let sessions = ui.work.parent().unwrap().join("state/hrns/sessions");
    let cancelled = |text: &str, call: &str| {
        text.lines().any(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
            v["child"]["parent_call_id"] == call && v["child"]["event"]["type"] == "turn_cancelled"
        })
    };
    let deadline = Instant::now() + T;
    loop {
        let text: String = std::fs::read_dir(&sessions)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
            .collect();
        // Two turns, two children each: the first two answered, the last two cancelled.
        if cancelled(&text, "task_1") && cancelled(&text, "task_2") {
            break;
        }
        assert!(Instant::now() < deadline, "the children's cancels: {text}");
        std::thread::sleep(Duration::from_millis(50));
    }
    ui.quit();
}

#[test]
fn a_subagents_call_that_needs_approval_is_asked_about_in_the_ui() {
    let mock = MockProvider::start_with(|req| {
        if req.method != "POST" {
            return None;
        }
        let (parent, last) = parent_and_last(req);
        let args = serde_json::json!({"description": "write", "prompt": "Write out.txt.", "agent": "Builder"});
        Some(match (parent, last["role"].as_str()) {
            (true, Some("user")) => Reply::tool_calls(&[("task_1", "task", &args.to_string())]),
            (true, _) => Reply::text_answer("The builder is done."),
            (false, Some("user")) => Reply::tool_calls(&[(
                "w1",
                "write_file",
                r#"{"path":"out.txt","content":"from the child\n"}"#,
            )]),
            (false, _) => Reply::text_answer("Wrote it."),
        })
    })
    .unwrap();
    let mut ui = start(&mock, &[]);
    ui.p.send("delegate a write\r");
    ui.p.expect_screen("the child's question", T, |s| {
        s.contains("subagent Builder asks:") && s.contains("[y]es")
    });
    assert!(
        !ui.work.join("out.txt").exists(),
        "nothing written before the answer"
    );
    ui.p.send("y");
    ui.p.expect("The builder is done.", T);
    assert_eq!(
        std::fs::read_to_string(ui.work.join("out.txt")).unwrap(),
        "from the child\n"
    );
    ui.quit();
}

/// Whether the session file under `root` has the child's approval request for `call`.
fn child_asked(root: &std::path::Path, call: &str) -> bool {
    std::fs::read_dir(root.join("state/hrns/sessions"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .flat_map(|text| {
            text.lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap_or_default())
                .collect::<Vec<_>>()
        })
        .any(|v| {
            v["child"]["event"]["type"] == "approval_requested" && v["child"]["event"]["id"] == call
        })
}

/// A subagent asks while the session's question is on screen; answering that one makes the
/// session ask its next at once. The child's question waits behind it and is asked after
/// it, not dropped (a dropped question denies the child's call without asking).
#[test]
fn a_subagents_question_survives_the_sessions_next_question() {
    let mock = MockProvider::start_with(|req| {
        if req.method != "POST" {
            return None;
        }
        let (parent, last) = parent_and_last(req);
        let args = serde_json::json!({"description": "write", "prompt": "Write out.txt.", "agent": "Builder"});
        Some(match (parent, last["role"].as_str()) {
            (true, Some("user")) => Reply::tool_calls(&[
                ("task_1", "task", &args.to_string()),
                ("wa", "write_file", r#"{"path":"a.txt","content":"a\n"}"#),
                ("wb", "write_file", r#"{"path":"b.txt","content":"b\n"}"#),
            ]),
            (true, _) => Reply::text_answer("All three are done."),
            (false, Some("user")) => Reply::tool_calls(&[(
                "w1",
                "write_file",
                r#"{"path":"out.txt","content":"from the child\n"}"#,
            )]),
            (false, _) => Reply::text_answer("Wrote it."),
        })
    })
    .unwrap();
    let mut ui = start(&mock, &[]);
    ui.p.send("delegate and write\r");
    // The session asks about a.txt (the child runs first, and asks too).
    ui.p.expect_screen("the session's first question", T, |s| {
        s.contains("a.txt") && s.contains("[y]es") && !s.contains("subagent Builder asks:")
    });
    let root = ui.work.parent().unwrap().to_owned();
    let deadline = Instant::now() + T;
    while !child_asked(&root, "w1") {
        assert!(Instant::now() < deadline, "the child never asked");
        std::thread::sleep(Duration::from_millis(20));
    }
    ui.p.send("y");
    // The session's next question comes first; the child's is still to come.
    ui.p.expect_screen("the session's second question", T, |s| {
        s.contains("b.txt") && s.contains("[y]es") && !s.contains("subagent Builder asks:")
    });
    ui.p.send("y");
    ui.p.expect_screen("the child's question", T, |s| {
        s.contains("subagent Builder asks:") && s.contains("out.txt")
    });
    ui.p.send("y");
    ui.p.expect("All three are done.", T);
    for (file, text) in [
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("out.txt", "from the child\n"),
    ] {
        assert_eq!(
            std::fs::read_to_string(ui.work.join(file)).unwrap(),
            text,
            "{file}"
        );
    }
    ui.quit();
}
