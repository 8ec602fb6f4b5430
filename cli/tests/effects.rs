//! `hrns exec` runs the calls of one answer as if one by one, in the model's order: several
//! edits of one file all stay, and a read after a write sees the write.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};

fn tool_results(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .collect()
}

#[test]
fn several_edits_of_one_file_in_one_answer_are_all_kept() {
    let env = Env::new();
    let lines: Vec<String> = (1..=8).map(|i| format!("line {i}")).collect();
    env.write("work/notes.txt", &(lines.join("\n") + "\n"));
    let edits: Vec<(String, String)> = (1..=8)
        .map(|i| {
            let args = json!({
                "path": "notes.txt",
                "old_string": format!("line {i}\n"),
                "new_string": format!("LINE {i} edited\n"),
            });
            (format!("e{i}"), args.to_string())
        })
        .collect();
    let calls: Vec<(&str, &str, &str)> = edits
        .iter()
        .map(|(id, args)| (id.as_str(), "edit_file", args.as_str()))
        .collect();
    let mock =
        MockProvider::start([Reply::tool_calls(&calls), Reply::text_answer("done")]).unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--json", "--approval", "auto", "edit every line"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want: String = (1..=8).map(|i| format!("LINE {i} edited\n")).collect();
    assert_eq!(
        std::fs::read_to_string(env.path("work/notes.txt")).unwrap(),
        want,
        "every edit survived"
    );
    let results = tool_results(&out);
    assert_eq!(results.len(), 8);
    for r in &results {
        assert_eq!(r["status"], "ok", "{r}");
    }
    // The model reads the results in its own order.
    let second = mock.chat_requests()[1].json();
    let ids: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"]);
}

#[test]
fn a_read_after_a_write_in_one_answer_sees_the_write() {
    let env = Env::new();
    env.write("work/draft.txt", "old text\n");
    let write = json!({"path": "draft.txt", "content": "new text, written first\n"}).to_string();
    let read = json!({"path": "draft.txt"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write), ("r", "read_file", &read)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(
        Some(&mock),
        &["exec", "--json", "--approval", "auto", "rewrite and check"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&out);
    let read_result = results.iter().find(|r| r["id"] == "r").unwrap();
    let text = read_result["output"]["content"].as_str().unwrap();
    assert!(text.contains("new text, written first"), "{text}");
    assert!(!text.contains("old text"), "{text}");
}
