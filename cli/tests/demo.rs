//! The shipped demo (`examples/demo.record`, the README's first command): how it is recorded,
//! and that it replays without differences on a fresh clone. The demo reads only the fixture
//! `examples/demo/`, which does not change, so the comparison stays meaningful: a real
//! difference is still reported.
//!
//! `HRNS_WRITE_DEMO=1 cargo test -p hrns --test demo` writes the fresh recording over the
//! shipped one (see `examples/demo/RECORDING.md`).

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use std::path::{Path, PathBuf};

const PROMPT: &str = "What is this project? Look around first.";

const ANSWER: &str = "This is **hrns**, a terminal coding agent and a Rust library for OpenAI-compatible endpoints. The workspace has four crates:

- `core/` (hrns-core): the sans-IO state machine: SSE decoding, chunk accumulation and the agent loop;
- `driver-blocking/` and `driver-tokio/`: the IO around it, on ureq and on tokio;
- `cli/`: the `hrns` binary with `exec`, the interactive UI, config, agents, skills and MCP.

What you just ran is the README's first command: a replay of a recorded turn, no provider needed.";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Records the demo turn into `to`, from the repository's root, as the shipped one was made.
fn record(env: &Env, to: &Path) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("call_list", "list_files", r#"{"dir":"examples/demo"}"#),
            (
                "call_read",
                "read_file",
                r#"{"path":"examples/demo/ABOUT.md"}"#,
            ),
        ]),
        Reply::text_answer(ANSWER),
    ])
    .unwrap();
    let out = env
        .cmd(Some(&mock))
        .current_dir(repo())
        .env("HRNS_MODEL", "demo-model")
        .args(["exec", "--approval", "read-only", "--record"])
        .arg(to)
        .arg(PROMPT)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mock.remaining(), 0, "the demo turn took both answers");
}

/// Replays `record` from the repository's root, as the README's first command does.
fn replay(env: &Env, record: &Path) -> std::process::Output {
    env.cmd(None)
        .current_dir(repo())
        .arg("replay")
        .arg(record)
        .output()
        .unwrap()
}

#[test]
fn the_demo_recipe_records_a_turn_that_replays_clean() {
    let env = Env::new();
    let fresh = env.path("demo.record");
    record(&env, &fresh);
    let out = replay(&env, &fresh);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("differs"), "{err}");
    assert!(
        err.contains("list_files") && err.contains("read_file"),
        "{err}"
    );
    assert!(stdout(&out).contains("four crates"), "{}", stdout(&out));
    if std::env::var_os("HRNS_WRITE_DEMO").is_some() {
        std::fs::copy(&fresh, repo().join("examples/demo.record")).unwrap();
    }
}

#[test]
fn the_shipped_demo_replays_clean_on_a_fresh_clone() {
    let env = Env::new();
    let out = replay(&env, &repo().join("examples/demo.record"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("differs"), "{err}");
    assert!(stdout(&out).contains("four crates"), "{}", stdout(&out));
}

#[test]
fn a_real_difference_in_the_demo_is_still_reported() {
    let env = Env::new();
    // The shipped recording, with the file the model read saying something else then.
    let shipped = std::fs::read_to_string(repo().join("examples/demo.record")).unwrap();
    assert!(
        shipped.contains("hrns, in brief"),
        "the demo reads ABOUT.md"
    );
    let changed = env.write(
        "changed.record",
        &shipped.replace("hrns, in brief", "hrns, at length"),
    );
    let out = replay(&env, &changed);
    let err = stderr(&out);
    assert!(err.contains("differs: request 2: messages["), "{err}");
}
