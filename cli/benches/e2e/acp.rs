//! `hrns acp` against `hrns exec --json` (issue 36, item 4): the same generated text stream,
//! whole processes, interleaved; the ACP side is a small client (`acp-child`) that starts
//! `hrns acp`, opens a session, sends the prompt and parses every line it reads (each
//! `session/update` included) until the prompt's answer. A size sweep shows the growth.

use super::*;

/// The ACP client measured: starts `BIN acp` in the current directory, runs one prompt to its
/// end reading every message, and checks it ended with `end_turn`.
pub(crate) fn acp_child(bin: &str) {
    let mut child = std::process::Command::new(bin)
        .arg("acp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
    let cwd = std::env::current_dir().unwrap();
    let mut send = |id: u64, method: &str, params: serde_json::Value| {
        let line =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    };
    let mut line = String::new();
    let mut updates = 0u64;
    let mut text = 0usize;
    let mut answer = |id: u64, updates: &mut u64, text: &mut usize| -> serde_json::Value {
        loop {
            line.clear();
            assert!(
                lines.read_line(&mut line).unwrap() > 0,
                "hrns acp ended early"
            );
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "session/update" {
                *updates += 1;
                let update = &message["params"]["update"];
                if update["sessionUpdate"] == "agent_message_chunk" {
                    *text += update["content"]["text"].as_str().map_or(0, str::len);
                }
            } else if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    };
    send(
        1,
        "initialize",
        serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    answer(1, &mut updates, &mut text);
    send(
        2,
        "session/new",
        serde_json::json!({"cwd": cwd, "mcpServers": []}),
    );
    let opened = answer(2, &mut updates, &mut text);
    let sid = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    send(
        3,
        "session/prompt",
        serde_json::json!({"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
    );
    let done = answer(3, &mut updates, &mut text);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(updates > 0 && text > 0);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `exec --json` and `acp` on `mb` MB streams: medians and ranges of [`RUNS`] interleaved runs
/// each, and the ratio of the medians.
pub(crate) fn acp_vs_exec(sizes: &[usize]) {
    let bin = hrns_bin();
    let bin = bin.as_str();
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let work = std::fs::canonicalize(work.path()).unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    println!("\n## `hrns acp` against `hrns exec --json` (median of {RUNS}, range)\n");
    println!(
        "| stream | exec --json wall | acp wall | acp / exec | exec CPU | acp CPU (client included) |"
    );
    println!("|---|---|---|---|---|---|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut acp_medians = Vec::new();
    for &mb in sizes {
        let stream = streams::generate(streams::Variant::Content, mb * 1_000_000);
        let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
        mock.set_recording(false);
        let url = mock.base_url();
        let envs = [
            ("HOME", home.as_str()),
            ("XDG_STATE_HOME", home.as_str()),
            ("XDG_CONFIG_HOME", home.as_str()),
            ("OPENAI_BASE_URL", url.as_str()),
            (
                "OPENAI_API_KEY",
                "sk-bench-4f9a8c2e7b1d6053a9e8f7c6b5d4e3f2a1",
            ),
            ("HRNS_MODEL", "m"),
        ];
        let paths: [Vec<&str>; 2] = [
            vec![bin, "exec", "--json", "go"],
            vec![me, "acp-child", bin],
        ];
        let mut runs: Vec<Vec<ProcessRun>> = vec![Vec::new(); 2];
        for round in 0..=RUNS {
            for (args, runs) in paths.iter().zip(&mut runs) {
                let run = measure_in(&work, args, &envs);
                if round > 0 {
                    runs.push(run); // round 0 warms caches up
                }
            }
        }
        let summary = |runs: &[ProcessRun]| {
            let wall: Vec<Duration> = runs.iter().map(|r| r.wall).collect();
            let cpu: Vec<Duration> = runs.iter().map(|r| r.cpu).collect();
            let (lo, hi) = (wall.iter().min().unwrap(), wall.iter().max().unwrap());
            let range = format!("{:.0}–{:.0}", ms(*lo), ms(*hi));
            (median(wall), range, median(cpu))
        };
        let (exec_wall, exec_range, exec_cpu) = summary(&runs[0]);
        let (acp_wall, acp_range, acp_cpu) = summary(&runs[1]);
        acp_medians.push((mb, acp_wall));
        println!(
            "| {mb} MB | {:.0} ms ({exec_range}) | {:.0} ms ({acp_range}) | {:.2}× | {:.0} ms | {:.0} ms |",
            ms(exec_wall),
            ms(acp_wall),
            acp_wall.as_secs_f64() / exec_wall.as_secs_f64(),
            ms(exec_cpu),
            ms(acp_cpu),
        );
    }
    for pair in acp_medians.windows(2) {
        let ((a_mb, a), (b_mb, b)) = (pair[0], pair[1]);
        println!(
            "\nacp growth {a_mb} → {b_mb} MB: ×{:.2} the time for ×{:.0} the size",
            b.as_secs_f64() / a.as_secs_f64(),
            b_mb as f64 / a_mb as f64
        );
    }
}
