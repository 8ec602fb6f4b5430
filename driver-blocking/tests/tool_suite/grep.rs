//! The `grep` cases of the suite: a fixture tree with ignored, hidden, binary and linked files.

use super::{ToolHarness, ok, refused, workspace};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::grep::{GREP_MAX_LINE_CHARS, GREP_MAX_MATCHES};
use serde_json::json;
use std::os::unix::fs::symlink;

pub fn grep_searches_the_tree_as_git_sees_it(h: &impl ToolHarness) {
    let ws = workspace(h);
    ws.put(".gitignore", "target/\n*.log\n");
    ws.put("src/main.rs", "fn main() {\n    let todo = 1;\n}\n");
    ws.put("src/lib.rs", "// TODO: tidy\npub fn x() {}\n");
    ws.put("src/gen/.gitignore", "generated.rs\n");
    ws.put("src/gen/generated.rs", "// TODO generated\n");
    ws.put("target/debug/build.rs", "// TODO built\n");
    ws.put("run.log", "TODO in a log\n");
    ws.put(".github/ci.yml", "# TODO hidden but not ignored\n");
    ws.put(".git/HEAD", "TODO in git internals\n");
    ws.put("image.bin", b"TODO\0\x01\x02binary".as_slice());
    ws.put("elsewhere/real.txt", "TODO behind a link\n");
    symlink(ws.root.join("elsewhere"), ws.root.join("link")).unwrap();
    assert_eq!(
        ws.call("grep", json!({"pattern": "TODO"})),
        ToolOutput::ok(
            ".github/ci.yml:1: # TODO hidden but not ignored\n\
             elsewhere/real.txt:1: TODO behind a link\n\
             src/lib.rs:1: // TODO: tidy\n\
             (1 binary files skipped)\n"
        )
    );
    let cases = [
        (
            json!({"pattern": "todo"}),
            "src/main.rs:2:     let todo = 1;\n(1 binary files skipped)\n",
        ),
        (
            json!({"pattern": "todo", "case_insensitive": true, "path": "src"}),
            "src/lib.rs:1: // TODO: tidy\nsrc/main.rs:2:     let todo = 1;\n",
        ),
        (
            json!({"pattern": "TODO", "glob": "*.rs"}),
            "src/lib.rs:1: // TODO: tidy\n",
        ),
        (
            json!({"pattern": "let", "path": "src/main.rs", "context": 1}),
            "src/main.rs-1- fn main() {\nsrc/main.rs:2:     let todo = 1;\nsrc/main.rs-3- }\n",
        ),
        (
            json!({"pattern": "nothing like this"}),
            "no matches\n(1 binary files skipped)\n",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            ws.call("grep", args.clone()),
            ToolOutput::ok(expected),
            "{args}"
        );
    }
}

pub fn grep_caps_results_and_cuts_long_lines(h: &impl ToolHarness) {
    let ws = workspace(h);
    let many: String = (0..GREP_MAX_MATCHES + 25)
        .map(|i| format!("hit {i}\n"))
        .collect();
    ws.put("many.txt", many);
    let out = ws.call("grep", json!({"pattern": "^hit"}));
    let text = ok(&out);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("many.txt:")).count(),
        GREP_MAX_MATCHES
    );
    assert!(text.contains("… and 25 more matching lines"), "{text}");

    let mut long = "y".repeat(2 * 1024 * 1024);
    long.push_str(" needle\n");
    ws.put("min.js", long);
    let out = ws.call("grep", json!({"pattern": "needle"}));
    let text = ok(&out);
    assert!(text.starts_with(&format!("min.js:1: {}", "y".repeat(GREP_MAX_LINE_CHARS))));
    assert!(text.len() < 2 * GREP_MAX_LINE_CHARS, "{}", text.len());
}

pub fn grep_refuses_bad_input(h: &impl ToolHarness) {
    let ws = workspace(h);
    ws.put("a.txt", "x\n");
    refused(
        &ws.call("grep", json!({"pattern": "a(b"})),
        "invalid regular expression \"a(b\"",
    );
    refused(
        &ws.call("grep", json!({"pattern": "x", "glob": "[ab"})),
        "invalid glob pattern",
    );
    refused(
        &ws.call("grep", json!({"pattern": "x", "path": "nope"})),
        "it does not exist",
    );
    refused(&ws.call("grep", json!({"path": "a.txt"})), "pattern");
    refused(
        &ws.call("grep", json!({"pattern": "x", "context": -1})),
        "context",
    );
}
