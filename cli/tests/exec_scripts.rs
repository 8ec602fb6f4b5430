//! `hrns exec` for scripts and CI, end to end against the mock provider: `--output-schema`,
//! `-o`, `--ephemeral`, `-i`, `--print-event-schema` and the exit code table.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

const SCHEMA: &str = r#"{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}"#;

fn events(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The text of the last message of a request body.
fn last_message(body: &Value) -> String {
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_schema_met_at_once_is_printed_alone_and_response_format_was_sent() {
    let env = Env::new();
    let schema = env.write("work/schema.json", SCHEMA);
    let mock = MockProvider::start([Reply::text_answer("{\n  \"n\": 3\n}")]).unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--output-schema", schema.to_str().unwrap(), "count"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"n\":3}\n", "compact, alone");
    let sent = mock.chat_requests();
    assert_eq!(sent.len(), 1);
    let format = &sent[0].json()["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "final_answer");
    let schema_sent = &format["json_schema"]["schema"];
    assert_eq!(schema_sent, &serde_json::from_str::<Value>(SCHEMA).unwrap());

    // With --json: the value is turn_finished's `output`.
    let mock = MockProvider::start([Reply::text_answer("{\"n\": 4}")]).unwrap();
    let out = env.run(
        Some(&mock),
        &[
            "exec",
            "--json",
            "--output-schema",
            schema.to_str().unwrap(),
            "count",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last = events(&out).pop().unwrap();
    assert_eq!(last["type"], "turn_finished");
    assert_eq!(last["output"], json!({"n": 4}));
    // Without a schema, neither `response_format` nor `output`.
    let mock = MockProvider::start([Reply::text_answer("{\"n\": 4}")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "count"]);
    assert!(events(&out).pop().unwrap().get("output").is_none());
    assert!(
        mock.chat_requests()[0]
            .json()
            .get("response_format")
            .is_none()
    );
}

#[test]
fn a_schema_missed_once_is_asked_for_again_with_the_errors() {
    let env = Env::new();
    let schema = env.write("work/schema.json", SCHEMA);
    let mock = MockProvider::start([
        Reply::text_answer("{\"n\": \"three\"}"),
        Reply::text_answer("{\"n\": 3}"),
    ])
    .unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--output-schema", schema.to_str().unwrap(), "count"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"n\":3}\n", "only the answer that matched");
    let sent = mock.chat_requests();
    assert_eq!(sent.len(), 2);
    let second = sent[1].json();
    let told = last_message(&second);
    assert!(told.contains("does not match the JSON Schema"), "{told}");
    assert!(
        told.contains("/n: \"three\" is not of type \"integer\""),
        "{told}"
    );
    assert!(
        second["response_format"].is_object(),
        "the retry carries it too"
    );

    // Prose first, then JSON.
    let mock = MockProvider::start([
        Reply::text_answer("The answer is three."),
        Reply::text_answer("{\"n\": 3}"),
    ])
    .unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--output-schema", schema.to_str().unwrap(), "count"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let told = last_message(&mock.chat_requests()[1].json());
    assert!(told.contains("the answer is not JSON"), "{told}");
}

#[test]
fn a_schema_never_met_exits_4_naming_the_errors_and_writes_no_file() {
    let env = Env::new();
    let schema = env.write("work/schema.json", SCHEMA);
    let answer = env.path("work/answer.json");
    for json in [false, true] {
        let mock = MockProvider::start([
            Reply::text_answer("{\"n\": \"three\"}"),
            Reply::text_answer("{\"n\": 3, \"extra\": true}"),
        ])
        .unwrap();
        let mut args = vec![
            "exec",
            "--output-schema",
            schema.to_str().unwrap(),
            "-o",
            answer.to_str().unwrap(),
            "count",
        ];
        if json {
            args.insert(1, "--json");
        }
        let out = env.run(Some(&mock), &args);
        assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
        assert_eq!(mock.chat_requests().len(), 2, "asked once more, not twice");
        assert!(!answer.exists(), "no answer file for an unmet schema");
        if json {
            let last = events(&out).pop().unwrap();
            assert_eq!(last["error"]["code"], "output_schema_unmet");
            let errors = last["error"]["errors"].as_array().unwrap();
            assert!(errors[0].as_str().unwrap().contains("extra"), "{errors:?}");
        } else {
            assert_eq!(stdout(&out), "", "no answer on stdout");
            let err = stderr(&out);
            assert!(
                err.contains("does not match the output schema") && err.contains("extra"),
                "{err}"
            );
        }
    }
}

#[test]
fn an_invalid_schema_file_is_a_usage_error_before_anything_is_sent() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    let cases = [
        (
            "work/bad-type.json",
            r#"{"type": "integer-ish"}"#,
            "not a valid JSON Schema",
        ),
        ("work/not-json.json", "{\"type\": ", "not JSON"),
        ("work/string.json", "\"object\"", "not a valid JSON Schema"),
        (
            "work/remote.json",
            r#"{"$ref": "https://example.com/s.json"}"#,
            "not a valid JSON Schema",
        ),
    ];
    for (path, text, said) in cases {
        let file = env.write(path, text);
        let out = env.run(
            Some(&mock),
            &["exec", "--output-schema", file.to_str().unwrap(), "count"],
        );
        assert_eq!(out.status.code(), Some(2), "{path}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(said) && err.contains(path), "{path}: {err}");
    }
    let out = env.run(
        Some(&mock),
        &["exec", "--json", "--output-schema", "missing.json", "count"],
    );
    assert_eq!(out.status.code(), Some(2));
    let line = events(&out).pop().unwrap();
    assert_eq!(line["type"], "error");
    assert!(line["message"].as_str().unwrap().contains("missing.json"));
    assert!(mock.requests().is_empty(), "nothing was sent");
}

#[test]
fn the_last_message_goes_to_a_private_file_with_plain_and_json_output() {
    let env = Env::new();
    let file = env.path("work/last.txt");
    // A file that was there before, readable by others: replaced, and private.
    std::fs::write(&file, "old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mock = MockProvider::start([Reply::text_answer("Hello from the mock.")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "-o", file.to_str().unwrap(), "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello from the mock.\n");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "Hello from the mock.\n"
    );
    assert_eq!(mode(&file), 0o600);

    let file = env.path("work/last-json.txt");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "list_files", "{}")]),
        Reply::text_answer("Two files."),
    ])
    .unwrap();
    let out = env.run(
        Some(&mock),
        &[
            "exec",
            "--json",
            "--output-last-message",
            file.to_str().unwrap(),
            "hi",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(events(&out)[0]["type"], "session_started");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "Two files.\n");
    assert_eq!(mode(&file), 0o600);

    // With a schema, the matching JSON.
    let schema = env.write("work/schema.json", SCHEMA);
    let file = env.path("work/out.json");
    let mock = MockProvider::start([Reply::text_answer("```json\n{\"n\": 7}\n```")]).unwrap();
    let out = env.run(
        Some(&mock),
        &[
            "exec",
            "--output-schema",
            schema.to_str().unwrap(),
            "-o",
            file.to_str().unwrap(),
            "count",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"n\":7}\n");

    // A directory that does not exist: refused before anything is sent.
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "-o", "no/such/dir/x.txt", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert!(mock.requests().is_empty());
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn ephemeral_runs_leave_no_file_in_the_state_directory() {
    let env = Env::new();
    let state = env.path("state");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "list_files", "{}")]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "--ephemeral", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(events(&out)[0]["session_id"], Value::Null);
    assert_eq!(files_under(&state), Vec::<std::path::PathBuf>::new());

    // The same run without it saves a session: the check above can fail.
    let mock = MockProvider::start([Reply::text_answer("done")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "hi"]);
    assert!(events(&out)[0]["session_id"].is_string());
    // The session file, beside the workspace's checkpoint store that such a run opens.
    let saved: Vec<_> = files_under(&state)
        .into_iter()
        .filter(|p| !p.starts_with(state.join("hrns/checkpoints")))
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");

    // Nothing to continue from, and nothing to continue into.
    let out = env.run(Some(&mock), &["exec", "--ephemeral", "--continue", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

#[test]
fn images_are_attached_with_i() {
    let env = Env::new();
    // Outside the workspace too: the user named it.
    let image = env.write_bytes("home/shot.png", PNG);
    let other = env.write_bytes("work/two.bin", PNG);
    let mock = MockProvider::start([Reply::text_answer("A dot.")]).unwrap();
    let out = env.run(
        Some(&mock),
        &[
            "exec",
            "-i",
            image.to_str().unwrap(),
            "--image",
            other.to_str().unwrap(),
            "what is this?",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = mock.chat_requests()[0].json();
    let parts = body["messages"][1]["content"].as_array().unwrap().clone();
    assert_eq!(parts[0]["type"], "text");
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("what is this?")
    );
    let urls: Vec<&str> = parts[1..]
        .iter()
        .map(|p| p["image_url"]["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls.len(), 2, "{parts:?}");
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    assert_eq!(urls[0], format!("data:image/png;base64,{data}"));

    // Not an image, or no file: refused before anything is sent.
    let text = env.write("work/notes.png", "not really a png");
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    for path in [text.to_str().unwrap(), "missing.png"] {
        let out = env.run(Some(&mock), &["exec", "-i", path, "what?"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(path), "{}", stderr(&out));
    }
    assert!(mock.requests().is_empty());
}

#[test]
fn the_event_schema_is_printed_and_is_draft_2020_12() {
    let env = Env::new();
    let out = env.run(None, &["exec", "--print-event-schema"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let schema: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    for kind in [
        "session_started",
        "tool_result",
        "usage",
        "turn_finished",
        "turn_failed",
        "error",
    ] {
        assert!(schema["$defs"][kind].is_object(), "{kind}");
    }
    // Alone: with a prompt it is a usage error.
    let out = env.run(None, &["exec", "--print-event-schema", "hi"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn exit_codes_of_the_table() {
    let env = Env::new();
    // 0: finished.
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    assert_eq!(env.run(Some(&mock), &["exec", "hi"]).status.code(), Some(0));
    // 1: the model failed.
    let mock = MockProvider::start([Reply::error(400, "bad request")]).unwrap();
    assert_eq!(env.run(Some(&mock), &["exec", "hi"]).status.code(), Some(1));
    // 2: usage.
    assert_eq!(
        env.run(Some(&mock), &["exec", "--nope"]).status.code(),
        Some(2)
    );
    // 3: the step limit, apart from a provider error now.
    for json in [false, true] {
        let mock = MockProvider::start([Reply::tool_calls(&[("c1", "list_files", "{}")])]).unwrap();
        let mut args = vec!["exec", "--max-steps", "1", "list"];
        if json {
            args.insert(1, "--json");
        }
        let out = env.run(Some(&mock), &args);
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        if json {
            assert_eq!(events(&out).pop().unwrap()["error"]["code"], "step_limit");
        } else {
            assert!(stderr(&out).contains("step limit"), "{}", stderr(&out));
        }
    }
    // 4: the output schema: in a_schema_never_met_exits_4_naming_the_errors_and_writes_no_file.
    // 5: a call denied, and no answer after it.
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "write_file", r#"{"path":"a.txt","content":"x"}"#)]),
        Reply::text_answer(""),
    ])
    .unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--json", "--approval", "read-only", "write a.txt"],
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("without an answer after 1 denied call"),
        "{}",
        stderr(&out)
    );
    assert_eq!(events(&out).pop().unwrap()["type"], "turn_finished");
    assert!(!env.path("work/a.txt").exists());
    // Denied, but the model answered: finished.
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "write_file", r#"{"path":"a.txt","content":"x"}"#)]),
        Reply::text_answer("I may not write files here."),
    ])
    .unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--approval", "read-only", "write a.txt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // No answer text and nothing denied: 0, but said on stderr.
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "list_files", "{}")]),
        Reply::text_answer(""),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("without an answer"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn signals_exit_with_128_plus_the_signal() {
    let env = Env::new();
    for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-HUP", 129)] {
        let reply = Reply::text_answer("Some text, then the provider stalls for a long time.");
        let mid = reply.body().len() / 2;
        let mock =
            MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_secs(30))]).unwrap();
        let mut child = env
            .cmd(Some(&mock))
            .args(["exec", "--json", "go"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = common::Lines::read(child.stdout.take().unwrap());
        lines.wait_for("first delta", Duration::from_secs(10), |l| {
            l.contains(r#""type":"text_delta""#)
        });
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{signal}: {}", stderr(&out));
        let printed = lines.finish();
        common::check_event_lines(&printed);
        assert!(
            printed.ends_with("{\"type\":\"turn_cancelled\"}\n"),
            "{printed}"
        );
    }
}

#[test]
fn the_exit_codes_are_in_exec_help_and_the_readme() {
    let env = Env::new();
    let help = stdout(&env.run(None, &["exec", "--help"]));
    let readme = include_str!("../../README.md");
    for code in ["0", "1", "2", "3", "4", "5", "130"] {
        assert!(help.contains(&format!("\n  {code} ")), "{code} in\n{help}");
    }
    for row in ["0", "1", "2", "3", "4", "5", "130, 143, 129"] {
        assert!(
            readme.contains(&format!("\n| {row} |")),
            "{row} in the README table"
        );
    }
    assert!(help.contains("143 on SIGTERM; 129 on SIGHUP"), "{help}");
    assert!(readme.contains("--print-event-schema"));
}
