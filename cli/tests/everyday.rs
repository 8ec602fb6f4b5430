//! The everyday features end to end through `hrns exec` against the mock provider: project
//! instructions, @-mentions, custom commands and diffs, checked in what the requests carry.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::Value;
use std::process::Output;

fn first_body(mock: &MockProvider) -> Value {
    mock.requests()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .expect("a chat request")
        .json()
}

fn system_prompt(body: &Value) -> String {
    assert_eq!(body["messages"][0]["role"], "system");
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
}

#[test]
fn agents_md_files_reach_the_system_prompt_in_order() {
    let env = Env::repo();
    env.write("config/hrns/AGENTS.md", "GLOBAL-RULE");
    env.write("AGENTS.md", "OUTSIDE-THE-REPOSITORY");
    env.write("work/AGENTS.md", "ROOT-RULE");
    env.write("work/sub/CLAUDE.md", "CLAUDE-RULE");
    env.write("work/sub/deep/AGENTS.md", &"D".repeat(40_000));
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let out = env.run_in("work/sub/deep", Some(&mock), &["exec", "hi"]);
    ok(&out);
    let prompt = system_prompt(&first_body(&mock));
    let at = |needle: &str| prompt.find(needle);
    let global = at("GLOBAL-RULE").expect("global file");
    let root = at("ROOT-RULE").expect("root file");
    let deep = at("DDDD").expect("deep file");
    assert!(global < root && root < deep, "{prompt}");
    assert!(prompt.contains(&format!("## {}", env.path("work/AGENTS.md").display())));
    assert!(!prompt.contains("OUTSIDE-THE-REPOSITORY"));
    assert!(
        !prompt.contains("CLAUDE-RULE"),
        "no fallback names configured"
    );
    assert!(prompt.len() < 40_000, "the large file is capped");
    assert!(
        stderr(&out).contains("larger than 32768 bytes"),
        "{}",
        stderr(&out)
    );

    // With a fallback name configured, CLAUDE.md counts where there is no AGENTS.md.
    env.write(
        "config/hrns/config.json",
        r#"{"instructions": {"fallbackNames": ["CLAUDE.md"], "maxBytes": 100000}}"#,
    );
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let out = env.run_in("work/sub/deep", Some(&mock), &["exec", "hi"]);
    ok(&out);
    let prompt = system_prompt(&first_body(&mock));
    assert!(prompt.contains("CLAUDE-RULE"));
    assert!(!stderr(&out).contains("larger than"));

    let list = env.run_in("work/sub/deep", Some(&mock), &["agents", "--verbose"]);
    ok(&list);
    let text = stdout(&list);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(".md")).collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].contains("config/hrns/AGENTS.md"), "{text}");
    assert!(lines[2].contains("sub/CLAUDE.md"), "{text}");
    assert!(lines[3].contains("(40000 bytes)"), "{text}");
}

#[test]
fn a_bad_instructions_setting_is_a_warning_not_a_failure() {
    let env = Env::repo();
    env.write("work/AGENTS.md", "ROOT-RULE");
    env.write(
        "config/hrns/config.json",
        r#"{"instructions": {"fallbackNames": "CLAUDE.md"}}"#,
    );
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "hi"]);
    ok(&out);
    assert!(stderr(&out).contains("`instructions` is not valid"));
    assert!(system_prompt(&first_body(&mock)).contains("ROOT-RULE"));
}

#[test]
fn mentions_attach_files_images_and_notes() {
    let env = Env::repo();
    env.write("work/src/a.rs", "fn answer() -> u32 { 42 }\n");
    env.write_bytes("work/pic.png", b"\x89PNG\r\n\x1a\nDATA");
    env.write_bytes("work/blob.bin", b"\x00\x01binary");
    let mut huge = b"\x89PNG\r\n\x1a\n".to_vec();
    huge.resize(6 * 1024 * 1024, 0);
    env.write_bytes("work/huge.png", &huge);
    env.write("outside.txt", "NOT-FOR-THE-MODEL");
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let prompt = "explain @src/a.rs, mail me@example.com, look at @pic.png, \
                  @blob.bin @huge.png @missing.rs @../outside.txt";
    let out = env.run(Some(&mock), &["exec", prompt]);
    ok(&out);
    let err = stderr(&out);
    assert!(err.contains("attached src/a.rs (26 bytes)"), "{err}");
    assert!(err.contains("attached pic.png as an image"), "{err}");
    assert!(
        err.contains("not attached: blob.bin: a binary file"),
        "{err}"
    );
    assert!(
        err.contains("not attached: huge.png: an image larger than 5 MiB"),
        "{err}"
    );
    let body = first_body(&mock);
    let parts = body["messages"][1]["content"].as_array().expect("parts");
    assert_eq!(parts.len(), 2);
    let text = parts[0]["text"].as_str().unwrap();
    assert!(text.starts_with(prompt), "the prompt as typed comes first");
    assert!(
        text.contains("src/a.rs:\n```\nfn answer() -> u32 { 42 }\n```"),
        "{text}"
    );
    assert!(
        text.contains("blob.bin: not attached (a binary file"),
        "{text}"
    );
    assert!(!text.contains("NOT-FOR-THE-MODEL"));
    assert!(!text.contains("missing.rs:"));
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(
        parts[1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgpEQVRB"
    );

    // Without mentions the prompt is sent as plain text, exactly as typed.
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "write to me@example.com"]);
    ok(&out);
    assert_eq!(
        first_body(&mock)["messages"][1]["content"],
        "write to me@example.com"
    );
}

#[test]
fn explorer_greps_the_workspace() {
    let env = Env::repo();
    env.write("work/src/a.rs", "fn needle() {}\n");
    env.write("work/.gitignore", "build/\n");
    env.write("work/build/b.rs", "fn needle() {}\n");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "grep", r#"{"pattern":"needle","glob":"*.rs"}"#)]),
        Reply::text_answer("found it"),
    ])
    .unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--agent", "Explorer", "find the needle"],
    );
    ok(&out);
    let bodies: Vec<Value> = mock.requests().iter().map(|r| r.json()).collect();
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"grep"), "{tools:?}");
    assert!(!tools.contains(&"write_file"));
    let result = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(result, "src/a.rs:1: fn needle() {}\n");
}

#[test]
fn an_exec_prompt_can_run_a_custom_command() {
    let env = Env::repo();
    env.write(
        "work/.hrns/commands/review.md",
        "---\ndescription: Review a file\nagent: Explorer\nmodel: review-model\n---\n\
         Review $1 for $2. All of it: $ARGUMENTS",
    );
    env.write("home/.hrns/commands/review.md", "the user's, shadowed");
    env.write("home/.hrns/commands/greet.md", "Say hello.");
    env.write("home/.hrns/commands/help.md", "clashes with /help");
    let mock = MockProvider::start([Reply::text_answer("ok"), Reply::text_answer("ok")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "/review src/a.rs \"dead code\""]);
    ok(&out);
    assert!(
        stderr(&out).contains("help.md: the built-in /help wins"),
        "{}",
        stderr(&out)
    );
    let body = first_body(&mock);
    assert_eq!(
        body["messages"][1]["content"],
        "Review src/a.rs for dead code. All of it: src/a.rs \"dead code\""
    );
    assert_eq!(body["model"], "review-model");
    let tools = body["tools"].to_string();
    assert!(
        !tools.contains("write_file"),
        "the command's agent is Explorer"
    );

    let out = env.run(Some(&mock), &["exec", "/greet in French"]);
    ok(&out);
    let second = mock.requests()[1].json();
    assert_eq!(second["messages"][1]["content"], "Say hello.\n\nin French");
    assert_eq!(second["model"], "mock-model");
}

#[test]
fn an_unknown_command_or_a_path_is_a_plain_prompt() {
    let env = Env::repo();
    let mock = MockProvider::start([Reply::text_answer("ok"), Reply::text_answer("ok")]).unwrap();
    ok(&env.run(Some(&mock), &["exec", "/nosuch thing"]));
    ok(&env.run(Some(&mock), &["exec", "/usr/bin/env is where?"]));
    let reqs = mock.requests();
    assert_eq!(reqs[0].json()["messages"][1]["content"], "/nosuch thing");
    assert_eq!(
        reqs[1].json()["messages"][1]["content"],
        "/usr/bin/env is where?"
    );
}

#[test]
fn edits_show_a_diff_on_stderr_and_in_json() {
    let env = Env::repo();
    env.write("work/a.txt", "one\ntwo\nthree\n");
    let edit = r#"{"path":"a.txt","old_string":"two","new_string":"TWO"}"#;
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "edit_file", edit)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "shout two"]);
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("work/a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );

    let write = r#"{"path":"new.txt","content":"hello\n"}"#;
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "write_file", write)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "write it"]);
    ok(&out);
    let calls: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(calls.len(), 1, "{}", stdout(&out));
    assert_eq!(
        calls[0]["diff"],
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,1 @@\n+hello\n"
    );
}
