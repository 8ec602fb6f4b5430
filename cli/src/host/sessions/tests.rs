use super::*;
use hrns_core::tool::ToolOutput;
use hrns_core::wire::{FunctionCall, ToolCall};

fn header() -> SessionHeader {
    SessionHeader {
        hrns_session: SESSION_VERSION,
        id: String::new(),
        started: String::new(),
        cwd: "/w".into(),
        provider: "p".into(),
        model: "m".into(),
        agent: "Builder".into(),
    }
}

fn tool_turn() -> Vec<Event> {
    let mut call = Message::assistant("");
    call.content = None;
    call.tool_calls = vec![ToolCall {
        id: "c1".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_file".into(),
            arguments: "{\"path\":\"a\"}".into(),
            extra: Default::default(),
        },
        extra: Default::default(),
    }];
    vec![
        Event::TurnStarted { turn: 1 },
        Event::Message {
            message: Box::new(Message::user("read a")),
        },
        Event::TextDelta { text: "x".into() },
        Event::Message {
            message: Box::new(call),
        },
        Event::ToolResult {
            id: "c1".into(),
            name: "read_file".into(),
            status: hrns_core::session::ToolStatus::Ok,
            output: ToolOutput::ok("A"),
        },
        Event::Message {
            message: Box::new(Message::tool("c1", "A")),
        },
        Event::Message {
            message: Box::new(Message::assistant("a says A")),
        },
        Event::TurnFinished {
            finish_reason: None,
            usage: Default::default(),
            output: None,
        },
    ]
}

#[test]
fn round_trip_of_a_tool_using_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), header()).unwrap();
    for e in tool_turn() {
        log.record(&e).unwrap();
    }
    let loaded = load(log.path()).unwrap();
    assert_eq!(loaded.header.id, log.id());
    assert_eq!(loaded.messages.len(), 4);
    assert!(loaded.warnings.is_empty());
    assert_eq!(loaded.events.len(), 7, "deltas are not saved");
    let s = summarize(log.path()).unwrap();
    assert_eq!(s.first_user_message.as_deref(), Some("read a"));
    assert_eq!(s.messages, 4);
    let md = to_markdown(&loaded);
    assert!(
        md.contains("## User\n\nread a") && md.contains("`read_file`") && md.contains("a says A"),
        "{md}"
    );
    assert_eq!(to_json(&loaded)["messages"].as_array().unwrap().len(), 4);
    assert_eq!(find(dir.path(), &log.id()[..3]).unwrap(), log.path());
    assert_eq!(latest_in(dir.path(), "/w").unwrap(), log.path());
    assert!(latest_in(dir.path(), "/elsewhere").is_none());
}

#[test]
fn a_summarising_compaction_replaces_the_resumed_history_and_shows_in_exports() {
    use hrns_core::context::PrunedOutput;
    use hrns_core::session::CompactReason;
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), header()).unwrap();
    let msg = |m: Message| Event::Message {
        message: Box::new(m),
    };
    let events = vec![
        msg(Message::user("old task")),
        msg(Message::assistant("old answer")),
        Event::TurnFinished {
            finish_reason: None,
            usage: Default::default(),
            output: None,
        },
        msg(Message::user("new task")),
        Event::RequestStarted {
            step: 1,
            attempt: 1,
        },
        Event::ContextCompacted {
            reason: CompactReason::Threshold,
            method: CompactMethod::Summarized,
            tokens_before: 900,
            tokens_after: 100,
            window: Some(1000),
            pruned: vec![PrunedOutput {
                call_id: "c".into(),
                tool: "read_file".into(),
                arguments: "{}".into(),
                bytes: 5000,
            }],
            summarized_messages: 2,
        },
        msg(Message::user("[Context compacted: …] SUMMARY")),
        msg(Message::user("new task")),
        Event::RequestStarted {
            step: 1,
            attempt: 1,
        },
        msg(Message::assistant("new answer")),
    ];
    for e in &events {
        log.record(e).unwrap();
    }
    let loaded = load(log.path()).unwrap();
    let texts: Vec<String> = loaded.messages.iter().map(Message::text).collect();
    assert_eq!(
        texts,
        ["[Context compacted: …] SUMMARY", "new task", "new answer"]
    );
    let md = to_markdown(&loaded);
    assert_eq!(
        md.matches("new task").count(),
        1,
        "re-stated messages are not repeated: {md}"
    );
    let at = md.find("context compacted (the context was nearly full): pruned 1 old tool output (5 KiB), summarised 2 messages; ~900 → ~100 tokens of 1000").expect(&md);
    assert!(md.find("new task").unwrap() < at && at < md.find("SUMMARY").unwrap());
    let json = to_json(&loaded);
    assert_eq!(json["messages"].as_array().unwrap().len(), 5);
    assert_eq!(json["compactions"][0]["before_message"], 3);
    assert_eq!(json["compactions"][0]["event"]["type"], "context_compacted");
}

#[test]
fn every_truncation_of_the_last_line_loads_the_complete_events() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), header()).unwrap();
    for e in tool_turn() {
        log.record(&e).unwrap();
    }
    let full = std::fs::read(log.path()).unwrap();
    let last_start = full[..full.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap()
        + 1;
    let complete = load(log.path()).unwrap().events.len();
    // Every cut inside the last line (its newline aside: without it the line is complete).
    for cut in last_start..full.len() - 1 {
        let p = dir.path().join("cut.jsonl");
        std::fs::write(&p, &full[..cut]).unwrap();
        let loaded = load(&p).unwrap();
        assert_eq!(loaded.events.len(), complete - 1, "cut at {cut}");
        assert_eq!(
            loaded.warnings.len(),
            usize::from(cut > last_start),
            "cut at {cut}"
        );
        history::validate(&loaded.messages).unwrap();
    }
}

#[test]
fn a_session_saved_mid_turn_is_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), header()).unwrap();
    for e in tool_turn().into_iter().take(5) {
        log.record(&e).unwrap();
    }
    let loaded = load(log.path()).unwrap();
    assert_eq!(loaded.messages.len(), 3);
    assert_eq!(loaded.messages[2].tool_call_id.as_deref(), Some("c1"));
    history::validate(&loaded.messages).unwrap();
}

#[test]
fn bad_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.jsonl");
    std::fs::write(&p, "").unwrap();
    assert!(load(&p).unwrap_err().to_string().contains("empty"));
    std::fs::write(&p, "{\"nope\":1}\n").unwrap();
    assert!(
        load(&p)
            .unwrap_err()
            .to_string()
            .contains("not an hrns session")
    );
    assert!(find(dir.path(), "zzz").unwrap_err().contains("no session"));
    assert!(summarize(&p).is_none());
}

#[test]
fn concurrent_logs_get_separate_files() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    SessionLog::create(dir.path(), header())
                        .unwrap()
                        .path()
                        .to_owned()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let unique: std::collections::HashSet<_> = paths.iter().collect();
    assert_eq!(unique.len(), 8);
}

#[test]
fn a_session_has_one_writer_and_a_dead_one_leaves_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let log = SessionLog::create(dir.path(), header()).unwrap();
    let path = log.path().to_owned();
    // The creating run holds it: another writer (another open file, as another process has)
    // is refused once the wait is over, and told to wait first when there is one.
    assert!(matches!(
        claim(&path, Duration::ZERO, || panic!("no wait asked")),
        Ok(Claim::Busy)
    ));
    let mut told = false;
    assert!(matches!(
        claim(&path, Duration::from_millis(1), || told = true),
        Ok(Claim::Busy)
    ));
    assert!(told);
    drop(log);
    // With the grace a test beside this one that starts a process at this moment needs (its
    // copy of the file holds the lock until its `exec`).
    let Ok(Claim::Claimed(claimed)) = claim(&path, FORK_GRACE, || {}) else {
        panic!("a closed log leaves the session free");
    };
    assert!(claimed.unlocked.is_none());
    assert!(matches!(
        claim(&path, Duration::ZERO, || {}),
        Ok(Claim::Busy)
    ));
    // A resumed log keeps the claim's lock.
    let log = SessionLog::append_to(claimed, "x").unwrap();
    assert!(matches!(
        claim(&path, Duration::ZERO, || {}),
        Ok(Claim::Busy)
    ));
    drop(log);
    assert!(matches!(
        claim(&path, FORK_GRACE, || {}),
        Ok(Claim::Claimed(_))
    ));
}

#[test]
fn a_session_deleted_by_the_writer_waited_for_is_not_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let log = SessionLog::create(dir.path(), header()).unwrap();
    let path = log.path().to_owned();
    let (waiting, told) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        claim(&path, Duration::from_secs(600), move || {
            waiting.send(()).unwrap();
        })
    });
    told.recv().unwrap();
    // The writer got no answer: its session is deleted as it closes, lock and all.
    assert!(log.keep_if_answered(&[]).is_none());
    assert!(matches!(waiter.join().unwrap(), Ok(Claim::Removed)));
}

#[test]
fn short_ids_come_from_the_file_name() {
    assert_eq!(
        short_id(Path::new("/s/2026-01-02T03-04-05_1a2b3c.jsonl")),
        "1a2b3c"
    );
    assert_eq!(short_id(Path::new("plain.jsonl")), "plain");
}

/// A turn of a user message and an answer.
fn text_turn(user: &str, answer: &str) -> Vec<Event> {
    vec![
        Event::TurnStarted { turn: 1 },
        Event::Message {
            message: Box::new(Message::user(user)),
        },
        Event::Message {
            message: Box::new(Message::assistant(answer)),
        },
        Event::TurnFinished {
            finish_reason: None,
            usage: Default::default(),
            output: None,
        },
    ]
}

fn user_texts(s: &LoadedSession) -> Vec<String> {
    s.messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(Message::text)
        .collect()
}

#[test]
fn a_rewind_line_takes_the_history_back_to_before_its_turn_and_later_turns_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), header()).unwrap();
    for (u, a) in [("one", "1"), ("two", "2"), ("three", "3")] {
        for e in text_turn(u, a) {
            log.record(&e).unwrap();
        }
    }
    log.record_rewind(2).unwrap();
    let loaded = load(log.path()).unwrap();
    assert_eq!(user_texts(&loaded), ["one"]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    // The conversation goes on from there; a second rewind counts turns as the file has them
    // (turn 4 is "four", even though the history holds two turns).
    for e in text_turn("four", "4") {
        log.record(&e).unwrap();
    }
    assert_eq!(user_texts(&load(log.path()).unwrap()), ["one", "four"]);
    log.record_rewind(4).unwrap();
    assert_eq!(user_texts(&load(log.path()).unwrap()), ["one"]);
    log.record_rewind(1).unwrap();
    assert!(load(log.path()).unwrap().messages.is_empty());
}

#[test]
fn hostile_rewind_and_restore_lines_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), header()).unwrap();
    for e in text_turn("one", "1") {
        log.record(&e).unwrap();
    }
    let path = log.path().to_owned();
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    // A rewind to a turn that is not there (0, later, enormous) changes nothing.
    for line in [
        r#"{"rewind":{"turn":0}}"#,
        r#"{"rewind":{"turn":2}}"#,
        r#"{"rewind":{"turn":18446744073709551615}}"#,
        r#"{"rewind":{"turn":-1}}"#,
        r#"{"restore":{"kind":"sideways"}}"#,
        r#"{"restore":{"kind":"undo","to":"a","latest":"b","before":"c","turns":[1]}}"#,
    ] {
        writeln!(f, "{line}").unwrap();
    }
    let loaded = load(&path).unwrap();
    assert_eq!(user_texts(&loaded), ["one"]);
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert_eq!(
        loaded.marks.len(),
        4,
        "three rewinds and one restore were read"
    );
    // A rewind line written before its turn started cannot rewind to it.
    for e in text_turn("two", "2") {
        log.record(&e).unwrap();
    }
    assert_eq!(user_texts(&load(&path).unwrap()), ["one", "two"]);
}

/// `load_history` (what `exec --continue` reads) gives the history and warnings `load` gives,
/// at every cut of a file with tool turns, compactions, rewinds, restores, subagents' lines,
/// hostile lines, malformed `tool_result` and `message` events, and lines written with
/// another key order (which take its general path).
#[test]
fn load_history_reads_what_load_reads_at_every_cut() {
    use hrns_core::session::CompactReason;
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::create(dir.path(), header()).unwrap();
    let path = log.path().to_owned();
    let append = |line: &str| {
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        writeln!(f, "{line}").unwrap();
    };
    for e in text_turn("one", "1") {
        log.record(&e).unwrap();
    }
    for e in tool_turn() {
        log.record(&e).unwrap();
    }
    for e in text_turn("three", "3") {
        log.record(&e).unwrap();
    }
    log.record_rewind(2).unwrap();
    for e in text_turn("four", "4") {
        log.record(&e).unwrap();
    }
    log.record(&Event::ContextCompacted {
        reason: CompactReason::Threshold,
        method: CompactMethod::Summarized,
        tokens_before: 900,
        tokens_after: 100,
        window: None,
        pruned: vec![],
        summarized_messages: 2,
    })
    .unwrap();
    log.record(&Event::Message {
        message: Box::new(Message::user("SUMMARY")),
    })
    .unwrap();
    for line in [
        // Malformed events of the two kinds read without `Event`: warned about.
        r#"{"event":{"type":"tool_result","id":"c","name":"n","status":"sideways","output":{}}}"#,
        r#"{"event":{"type":"tool_result","id":"c","name":"n","output":"x"}}"#,
        r#"{"event":{"type":"tool_result","id":"c","name":"n","status":"ok","output":"x}}"#,
        r#"{"event":{"type":"message","message":{"role":"nobody","content":"x"}}}"#,
        r#"{"event":{"type":"message","message":{"role":"user","content":"torn"#,
        // Well-formed events with the tag elsewhere: read by the general path.
        r#"{"event":{"message":{"role":"user","content":"late tag"},"type":"message"}}"#,
        r#"{"event":{"id":"c9","name":"n","status":"ok","output":{"content":"x","is_error":false},"type":"tool_result"}}"#,
        r#"{"rewind":{"turn":99}}"#,
        r#"{"restore":{"kind":"sideways"}}"#,
        r#"{"child":{"parent_call_id":"c1","agent":"a","event":{"type":"message","message":{"role":"user","content":"child"}}}}"#,
    ] {
        append(line);
    }
    for e in text_turn("five", "5") {
        log.record(&e).unwrap();
    }
    // Turns are counted through the file: "five" is its fifth; the rewind drops it and keeps
    // the compaction before it.
    log.record_rewind(5).unwrap();
    for e in tool_turn().into_iter().take(5) {
        log.record(&e).unwrap();
    }
    let full = std::fs::read(&path).unwrap();
    let ends: Vec<usize> = full
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let whole = load_history(&path).unwrap();
    assert_eq!(whole.warnings.len(), 6, "{:?}", whole.warnings);
    assert!(
        whole.messages.iter().any(|m| m.text() == "SUMMARY")
            && !whole
                .messages
                .iter()
                .any(|m| ["one", "three", "five"].contains(&m.text().as_str())),
        "the compaction and the rewinds were followed: {:?}",
        whole.messages
    );
    // Every line end, and a cut in the middle of every line.
    let cuts = ends
        .iter()
        .flat_map(|&end| [end, end.saturating_sub(7)])
        .filter(|&c| c > ends[0]);
    let p = dir.path().join("cut.jsonl");
    for cut in cuts {
        std::fs::write(&p, &full[..cut]).unwrap();
        let (all, history) = (load(&p).unwrap(), load_history(&p).unwrap());
        assert_eq!(history.messages, all.messages, "cut at {cut}");
        assert_eq!(history.warnings, all.warnings, "cut at {cut}");
        assert_eq!(history.header, all.header);
        history::validate(&history.messages).unwrap();
    }
}

/// Two runs started within the same second: the one started last is the latest (what
/// `--continue` and `hrns undo` pick), whatever the random ids in their names say; a run
/// of a later second still comes before both.
#[test]
fn sessions_started_in_the_same_second_are_ordered_by_when_they_were_made() {
    let dir = tempfile::tempdir().unwrap();
    let make = |name: &str| {
        let log = SessionLog::create(dir.path(), header()).unwrap();
        let to = dir.path().join(name);
        std::fs::rename(log.path(), &to).unwrap();
        // Far enough apart for the coarsest file-system clock to tell them apart.
        std::thread::sleep(Duration::from_millis(30));
        to
    };
    let later_second = make("2026-01-01T00-00-01_aaaaaa.jsonl");
    let first = make("2026-01-01T00-00-00_ffffff.jsonl");
    let second = make("2026-01-01T00-00-00_888888.jsonl");
    let third = make("2026-01-01T00-00-00_000000.jsonl");
    assert_eq!(
        files(dir.path()),
        [later_second, third.clone(), second, first]
    );
    std::fs::remove_file(dir.path().join("2026-01-01T00-00-01_aaaaaa.jsonl")).unwrap();
    assert_eq!(latest_in(dir.path(), "/w"), Some(third));
}
