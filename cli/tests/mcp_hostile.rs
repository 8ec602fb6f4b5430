//! MCP servers that misbehave on purpose (`common/hostile_mcp_server.py`): progress for ever,
//! a 15 MB result, 5 000 tools, a flood of stderr. Each bound holds, says so, and keeps memory
//! and disk bounded; memory is sampled from /proc while `hrns exec` runs, never timed.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};
use std::process::{Child, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The path of the hostile server.
fn hostile_server() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/common/hostile_mcp_server.py"
    )
    .to_owned()
}

/// `config.json`'s `mcpServers` with the one server `hostile`, its entry extended by `extra`.
fn servers(extra: Value, args: &[&str]) -> String {
    let mut entry = json!({"command": "python3", "args": [hostile_server()]});
    entry["args"]
        .as_array_mut()
        .unwrap()
        .extend(args.iter().map(|a| json!(a)));
    for (k, v) in extra.as_object().unwrap() {
        entry[k] = v.clone();
    }
    let text = json!({"mcpServers": {"hostile": entry}}).to_string();
    format!(", {}", &text[1..text.len() - 1])
}

/// The resident set of `pid` in KiB (from /proc), `None` once it is gone.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Waits for `child`, sampling its resident set; returns its output and the largest resident
/// set seen, in KiB. A run that is not over after `limit` is killed and fails the test: the
/// bound under test did not hold.
fn wait_sampling(mut child: Child, limit: Duration) -> (Output, u64) {
    let started = Instant::now();
    let mut peak = 0;
    let status: ExitStatus = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak = peak.max(rss_kib(child.id()).unwrap_or(0));
        if started.elapsed() > limit {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("hrns did not finish within {limit:?}: a bound did not hold");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = Output {
        status,
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    use std::io::Read;
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut out.stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut out.stderr)
        .unwrap();
    (out, peak)
}

/// Runs `hrns exec PROMPT` (against the provider of the config), sampling its memory.
fn exec_sampled(env: &Env, prompt: &str) -> (Output, u64) {
    let child = env
        .cmd(None)
        .args(["exec", prompt])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_sampling(child, Duration::from_secs(120))
}

/// The content of the tool message answering call `call_id` in the request `body`.
fn tool_result(body: &Value, call_id: &str) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {call_id}: {body}"))
        .to_owned()
}

fn calling(tool: &str) -> MockProvider {
    MockProvider::start([
        Reply::tool_calls(&[("c1", &format!("mcp__hostile__{tool}"), "{}")]),
        Reply::text_answer("Done."),
    ])
    .unwrap()
}

/// Progress every 50 ms restarts the per-call `timeout` (1 s) for ever; the total limit
/// (`totalTimeout`, 3 s) ends the call anyway, and the model is told which limit it was.
#[test]
fn a_call_with_progress_for_ever_ends_at_the_total_limit() {
    let env = Env::new();
    let mock = calling("forever");
    env.config_with(
        &mock,
        &servers(json!({"timeout": 1000, "totalTimeout": 3000}), &[]),
    );
    let (out, _) = exec_sampled(&env, "wait for it");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.\n");
    let result = tool_result(&mock.requests()[1].json(), "c1");
    assert!(
        result.contains("did not finish the call within 3 s in all")
            && result.contains("\"totalTimeout\""),
        "{result}"
    );
}

/// A 15 MB result reaches the model cut to the default 30 000 characters, head and tail kept,
/// with the cut said; memory stays well below what keeping it several times over would take.
#[test]
fn a_huge_result_is_capped_and_the_cut_is_said() {
    let env = Env::new();
    let mock = calling("huge");
    env.config_with(&mock, &servers(json!({}), &[]));
    let (out, peak_kib) = exec_sampled(&env, "get it all");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = mock.requests();
    let body = requests[1].body_str();
    assert!(
        body.len() < 100_000,
        "the request carries {} bytes",
        body.len()
    );
    let result = tool_result(&requests[1].json(), "c1");
    assert!(result.starts_with("STARTxxx"), "{}", &result[..40]);
    assert!(
        result.contains("characters omitted"),
        "the marker of the cut"
    );
    assert!(
        result.contains("The result of the MCP server hostile had 15000008 characters")
            && result.contains("\"maxResultChars\""),
        "{}",
        &result[result.len() - 400..]
    );
    assert!(
        peak_kib < 400 * 1024,
        "hrns reached {peak_kib} KiB for a 15 MB result"
    );
}

/// 5 000 tools are cut to the default 128, with one warning naming the server and the key; the
/// tool descriptions the model gets hold no terminal escapes.
#[test]
fn five_thousand_tools_are_cut_with_a_warning_naming_the_server() {
    let env = Env::new();
    let mock = calling("evil");
    env.config_with(&mock, &servers(json!({}), &["--tools", "5000"]));
    let (out, _) = exec_sampled(&env, "use the tools");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("MCP server hostile lists 5004 tools; 128 are used")
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("\"maxTools\""), "{err}");
    let first = mock.requests()[0].json();
    let offered: Vec<&Value> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["function"]["name"]
                .as_str()
                .unwrap()
                .starts_with("mcp__hostile__")
        })
        .collect();
    assert_eq!(offered.len(), 128);
    let evil = offered
        .iter()
        .find(|t| t["function"]["name"] == "mcp__hostile__evil")
        .unwrap();
    let description = evil["function"]["description"].as_str().unwrap();
    assert!(
        description.starts_with("Evil: Paints red and rings.\nSecond line."),
        "{description:?}"
    );
    assert!(
        !first.to_string().contains("\\u001b") && !first.to_string().contains("\\u0007"),
        "an escape reached the model"
    );
}

/// 50 MB of stderr leave a log of at most `maxLogBytes` and one rotated copy of at most as
/// much; memory stays bounded while it pours in.
#[test]
fn a_flood_of_stderr_leaves_a_bounded_rotated_log() {
    let env = Env::new();
    let mock = calling("flood");
    env.config_with(&mock, &servers(json!({"maxLogBytes": 1_000_000}), &[]));
    let (out, peak_kib) = exec_sampled(&env, "flood it");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tool_result(&mock.requests()[1].json(), "c1"), "flooded");
    let size = |name: &str| {
        std::fs::metadata(env.path(&format!("state/hrns/mcp-logs/{name}")))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let (log, rotated) = (size("hostile.log"), size("hostile.log.1"));
    assert!(log <= 1_000_000, "hostile.log holds {log} bytes");
    assert!(
        rotated > 900_000 && rotated <= 1_000_000,
        "hostile.log.1 holds {rotated} bytes"
    );
    assert!(
        peak_kib < 200 * 1024,
        "hrns reached {peak_kib} KiB during the flood"
    );
}
