//! Long sessions (issue 36, item 5): `hrns exec --continue` on a generated session file of
//! many steps, and `hrns sessions` over many saved sessions of growing size. Everything is
//! generated here, in a temporary directory; each figure comes with a size sweep, so that
//! growth faster than the input shows.

use super::*;
use std::path::Path;

/// One step of a generated session: an assistant message calling a tool and the tool's
/// result, about `step_bytes` bytes of JSON on disk (the result's text is most of it: source
/// lines with quotes, backslashes and newlines, the worst case for JSON escaping).
fn step_lines(step: usize, step_bytes: usize) -> String {
    let call = format!("call_{step:06}");
    let args = format!("{{\"path\":\"src/module_{step}.rs\"}}");
    let mut output = String::with_capacity(step_bytes);
    let mut line = 0;
    while output.len() + 200 < step_bytes {
        output.push_str(&format!(
            "{line:5}\tlet s{line} = format!(\"step {step} \\\"{{}}\\\" line {line}\", path); // tab\there\n"
        ));
        line += 1;
    }
    let assistant = serde_json::json!({"event": {"type": "message", "message": {
        "role": "assistant",
        "content": format!("Reading module {step}."),
        "tool_calls": [{"id": call, "type": "function",
            "function": {"name": "read_file", "arguments": args}}],
    }}});
    let call_event = serde_json::json!({"event": {"type": "tool_call",
        "id": call, "name": "read_file", "arguments": args}});
    let result_event = serde_json::json!({"event": {"type": "tool_result",
        "id": call, "name": "read_file", "status": "ok", "output": output}});
    let tool = serde_json::json!({"event": {"type": "message", "message": {
        "role": "tool", "tool_call_id": call, "content": output,
    }}});
    format!("{assistant}\n{call_event}\n{result_event}\n{tool}\n")
}

/// Writes a session of `steps` steps (about `step_bytes` each) started in `cwd` into `dir`;
/// returns its path and size.
pub(crate) fn write_session(
    dir: &Path,
    id: &str,
    cwd: &str,
    steps: usize,
    step_bytes: usize,
) -> (std::path::PathBuf, u64) {
    let path = dir.join(format!("2026-01-01T00-00-00_{id}.jsonl"));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let header = serde_json::json!({"hrns_session": 1, "id": id,
        "started": "2026-01-01T00:00:00Z", "cwd": cwd, "provider": "p", "model": "m",
        "agent": "Builder"});
    writeln!(file, "{header}").unwrap();
    let user = serde_json::json!({"event": {"type": "message",
        "message": {"role": "user", "content": format!("Review every module ({id}).")}}});
    writeln!(file, "{user}").unwrap();
    for step in 0..steps {
        file.write_all(step_lines(step, step_bytes).as_bytes())
            .unwrap();
    }
    let last = serde_json::json!({"event": {"type": "message",
        "message": {"role": "assistant", "content": "All modules read."}}});
    writeln!(file, "{last}").unwrap();
    file.flush().unwrap();
    drop(file);
    let len = std::fs::metadata(&path).unwrap().len();
    (path, len)
}

/// The environment of an `hrns` run with its state under `home`, talking to `url`.
fn env_for<'a>(home: &'a str, url: &'a str) -> [(&'a str, &'a str); 6] {
    [
        ("HOME", home),
        ("XDG_STATE_HOME", home),
        ("XDG_CONFIG_HOME", home),
        ("OPENAI_BASE_URL", url),
        (
            "OPENAI_API_KEY",
            "sk-bench-4f9a8c2e7b1d6053a9e8f7c6b5d4e3f2a1",
        ),
        ("HRNS_MODEL", "m"),
    ]
}

/// Time from the start of `hrns exec --continue` to the first byte and to the last byte of
/// its first request, read by a bare listener (no answer is given: the run is killed).
fn time_to_request(cwd: &Path, home: &str) -> (Duration, Duration) {
    let bin = hrns_bin();
    let bin = bin.as_str();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let start = Instant::now();
    let mut child = std::process::Command::new(bin)
        .args(["exec", "--continue", "go on"])
        .current_dir(cwd)
        .env_clear()
        .envs(env_for(home, &url))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Other requests first (the model list, for the context window) get a 404.
    loop {
        let (conn, _) = listener.accept().unwrap();
        let mut conn = BufReader::with_capacity(1 << 20, conn);
        assert!(!conn.fill_buf().unwrap().is_empty(), "no request");
        let first_byte = start.elapsed();
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            conn.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push(line.to_ascii_lowercase());
        }
        if !head.first().is_some_and(|l| l.starts_with("post ")) {
            let _ = conn.get_mut().write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            continue;
        }
        let length = head
            .iter()
            .find_map(|l| {
                l.strip_prefix("content-length:")?
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .expect("a request body with a length");
        std::io::copy(&mut (&mut conn).take(length), &mut std::io::sink()).unwrap();
        let last_byte = start.elapsed();
        let _ = child.kill();
        let _ = child.wait();
        return (first_byte, last_byte);
    }
}

/// The figures of `hrns exec --continue` on one session size, for issue 36's summary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LongFigures {
    pub(crate) steps: usize,
    /// The file's size in bytes.
    pub(crate) file: u64,
    /// Median time to the first byte of the first chat request.
    pub(crate) first_request: Duration,
    /// Median peak RSS over the file's size.
    pub(crate) rss_ratio: f64,
    /// Median CPU time of the whole run.
    pub(crate) cpu: Duration,
}

/// `hrns exec --continue` on sessions of 250 to 2 000 steps (about 25 KB each: 2 000 steps is
/// about 50 MB): time to its first request and the whole run's peak RSS against a mock that
/// answers a short text, beside the file's size.
pub(crate) fn long_sessions() -> Vec<LongFigures> {
    let step_bytes: usize = std::env::var("HRNS_BENCH_STEP_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25_000);
    let bin = hrns_bin();
    let bin = bin.as_str();
    let mock = MockProvider::start_repeating(Reply::text_answer("Done.")).unwrap();
    mock.set_recording(false);
    let url = mock.base_url();
    println!("\n## `hrns exec --continue` on a long session (median of {RUNS}, range)\n");
    println!(
        "| steps | file | first request byte | whole request sent | run wall | run CPU | peak RSS | RSS / file |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut figures = Vec::new();
    for steps in [250, 500, 1000, 2000] {
        let home = tempfile::tempdir().unwrap();
        let home_s = home.path().to_str().unwrap().to_owned();
        let cwd = tempfile::tempdir().unwrap();
        let cwd_path = cwd.path().canonicalize().unwrap();
        let dir = home.path().join("hrns/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let (path, len) = write_session(
            &dir,
            &format!("{steps:06x}"),
            cwd_path.to_str().unwrap(),
            steps,
            step_bytes,
        );
        let pristine = std::fs::read(&path).unwrap();
        let (mut first, mut whole, mut wall, mut cpu, mut rss) =
            (vec![], vec![], vec![], vec![], vec![]);
        for round in 0..=RUNS {
            // Each run appends its turn: start every run from the same file.
            std::fs::write(&path, &pristine).unwrap();
            let (f, w) = time_to_request(&cwd_path, &home_s);
            std::fs::write(&path, &pristine).unwrap();
            let run = measure_in(
                &cwd_path,
                &[bin, "exec", "--continue", "go on"],
                &env_for(&home_s, &url),
            );
            if round > 0 {
                first.push(f);
                whole.push(w);
                wall.push(run.wall);
                cpu.push(run.cpu);
                rss.push(run.rss);
            }
        }
        let ms = |v: &[Duration]| {
            let lo = v.iter().min().unwrap().as_secs_f64() * 1e3;
            let hi = v.iter().max().unwrap().as_secs_f64() * 1e3;
            format!(
                "{:.0} ms ({lo:.0}–{hi:.0})",
                median(v.to_vec()).as_secs_f64() * 1e3
            )
        };
        rss.sort_unstable();
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        let peak = rss[rss.len() / 2];
        println!(
            "| {steps} | {:.1} MiB | {} | {} | {} | {} | {:.1} MiB ({:.1}–{:.1}) | {:.2}× |",
            mib(len),
            ms(&first),
            ms(&whole),
            ms(&wall),
            ms(&cpu),
            mib(peak),
            mib(rss[0]),
            mib(rss[rss.len() - 1]),
            peak as f64 / len as f64,
        );
        figures.push(LongFigures {
            steps,
            file: len,
            first_request: median(first),
            rss_ratio: peak as f64 / len as f64,
            cpu: median(cpu),
        });
    }
    figures
}

/// `hrns sessions` over 1 000 saved sessions, the 50 newest (the ones it lists, so the ones it
/// reads) of growing size, beside their size; the 950 older ones hold one step each.
pub(crate) fn sessions_sweep() {
    let bin = hrns_bin();
    let bin = bin.as_str();
    println!(
        "\n## `hrns sessions` over 1 000 sessions, the 50 newest of growing size (median of {RUNS}, range)\n"
    );
    println!("| steps per listed session | its size | listing |");
    println!("|---|---|---|");
    for steps in [1, 10, 100, 1000, 2000] {
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().join("hrns/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let (small, _) = write_session(&dir, "small", "/w", 1, 25_000);
        let (large, len) = write_session(&dir, "large", "/w", steps, 25_000);
        // Hard links: the listing reads each file by its name; 50 copies of 50 MB need no
        // disk of their own.
        for i in 0..1000 {
            let from = if i < 950 { &small } else { &large };
            let name = format!("2026-01-01T00-00-00_{i:06x}.jsonl");
            std::fs::hard_link(from, dir.join(name)).unwrap();
        }
        std::fs::remove_file(small).unwrap();
        std::fs::remove_file(large).unwrap();
        let mut times = Vec::new();
        for round in 0..=RUNS {
            let t = Instant::now();
            let out = std::process::Command::new(bin)
                .arg("sessions")
                .env("XDG_STATE_HOME", state.path())
                .env("HOME", state.path())
                .output()
                .unwrap();
            assert!(out.status.success());
            if round > 0 {
                times.push(t.elapsed());
            }
        }
        let lo = times.iter().min().unwrap().as_secs_f64() * 1e3;
        let hi = times.iter().max().unwrap().as_secs_f64() * 1e3;
        println!(
            "| {steps} | {:.2} MiB | {:.1} ms ({lo:.1}–{hi:.1}) |",
            len as f64 / (1024.0 * 1024.0),
            median(times).as_secs_f64() * 1e3,
        );
    }
}
