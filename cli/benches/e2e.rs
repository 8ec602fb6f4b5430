//! End-to-end throughput and latency, each figure beside its baseline measured in the same run.
//!
//! `cargo bench -p hrns --bench e2e` prints:
//! - streaming throughput over loopback against the mock provider serving one generated body
//!   (10 MB; `HRNS_BENCH_MB=100` for more): a lines-only baseline (ureq, the body read and split
//!   into lines, no JSON: the ceiling of any SSE client), then each driver's client
//!   (`stream_chat` drained) and a whole session turn on each driver's runner, in MB/s and
//!   events/s, with the ratio to the baseline;
//! - `hrns exec` from process start to the first byte of its request;
//! - `hrns sessions` over 1 000 saved sessions.
//!
//! Medians of several runs; the machine is noisy, so compare ratios within one run.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::session::{ApprovalPolicy, Provider, Session, SessionConfig};
use hrns_core::wire::{ChatRequest, Message};
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "../../core/benches/streams/mod.rs"]
mod streams;

const RUNS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm-up
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn request() -> ChatRequest {
    serde_json::from_value(
        serde_json::json!({"model": "m", "messages": [Message::user("go")], "stream": true}),
    )
    .unwrap()
}

fn baseline(url: &str) -> u64 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let resp = agent
        .post(&format!("{url}/chat/completions"))
        .send(&br#"{"model":"m","messages":[]}"#[..])
        .unwrap();
    let mut reader = BufReader::with_capacity(64 * 1024, resp.into_body().into_reader());
    let mut lines = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).unwrap() == 0 {
            break;
        }
        lines += 1;
    }
    lines
}

fn blocking_client(url: &str) -> usize {
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let mut events = client.stream_chat(&request()).unwrap();
    let n = events.by_ref().count();
    events.finish().unwrap();
    n
}

fn session_config(url: &str) -> SessionConfig {
    let mut c = SessionConfig::new(Provider::new(url, None), "m");
    c.approval = ApprovalPolicy::Auto;
    c
}

fn blocking_session(url: &str) {
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let tools = hrns_blocking::Toolbox::new();
    let ctx = hrns_blocking::ToolContext::new(std::env::temp_dir()).unwrap();
    let mut runner = hrns_blocking::Runner::new(Arc::new(client), &tools, ctx);
    let mut session = Session::new(session_config(url));
    let outcome = runner.run(&mut session, "go", |_| {}).unwrap();
    assert_eq!(outcome, hrns_blocking::TurnOutcome::Finished, "{outcome:?}");
}

fn tokio_client(rt: &tokio::runtime::Runtime, url: &str) -> usize {
    rt.block_on(async {
        let client = hrns_tokio::Client::new(Provider::new(url, None), &Default::default());
        let mut events = client.stream_chat(&request()).await.unwrap();
        let mut n = 0;
        while let Some(ev) = events.next().await {
            ev.unwrap();
            n += 1;
        }
        events.finish().await.unwrap();
        n
    })
}

fn tokio_session(rt: &tokio::runtime::Runtime, url: &str) {
    rt.block_on(async {
        let client = hrns_tokio::Client::new(Provider::new(url, None), &Default::default());
        let ctx = hrns_tokio::ToolContext::new(std::env::temp_dir()).unwrap();
        let mut runner = hrns_tokio::Runner::new(client, hrns_tokio::Toolbox::new(), ctx);
        let mut session = Session::new(session_config(url));
        let outcome = runner.run(&mut session, "go", |_| {}).await.unwrap();
        assert_eq!(
            outcome,
            hrns_core::session::TurnOutcome::Finished,
            "{outcome:?}"
        );
    });
}

fn throughput(mb: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("\n## Streaming over loopback, {mb} MB body (median of {RUNS})\n");
    println!("| variant | path | time | MB/s | events/s | vs baseline |");
    println!("|---|---|---|---|---|---|");
    for variant in [streams::Variant::Content, streams::Variant::Mix] {
        let stream = streams::generate(variant, mb * 1_000_000);
        let bytes = stream.body.len() as f64;
        let events = stream.events as f64;
        let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
        mock.set_recording(false);
        let url = mock.base_url();
        let base = time(RUNS, || {
            baseline(&url);
        });
        let mut rows: Vec<(&str, Duration)> = vec![("lines only (ureq, no JSON)", base)];
        rows.push((
            "hrns-blocking Client::stream_chat",
            time(RUNS, || {
                std::hint::black_box(blocking_client(&url));
            }),
        ));
        rows.push((
            "hrns-tokio Client::stream_chat",
            time(RUNS, || {
                std::hint::black_box(tokio_client(&rt, &url));
            }),
        ));
        // A whole turn needs an answer without tool calls (the mix calls one).
        if variant == streams::Variant::Content {
            rows.push((
                "hrns-blocking Runner + Session",
                time(RUNS, || blocking_session(&url)),
            ));
            rows.push((
                "hrns-tokio Runner + Session",
                time(RUNS, || tokio_session(&rt, &url)),
            ));
        }
        for (name, t) in rows {
            let s = t.as_secs_f64();
            println!(
                "| {} | {name} | {:.1} ms | {:.0} | {:.0} | {:.0} % |",
                variant.name(),
                s * 1e3,
                bytes / s / 1e6,
                events / s,
                100.0 * base.as_secs_f64() / s
            );
        }
    }
}

fn exec_startup() {
    let bin = env!("CARGO_BIN_EXE_hrns");
    let home = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        let mut child = std::process::Command::new(bin)
            .args(["exec", "hi"])
            .env_clear()
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("OPENAI_BASE_URL", &url)
            .env("OPENAI_API_KEY", "k")
            .env("HRNS_MODEL", "m")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (mut conn, _) = listener.accept().unwrap();
        let mut byte = [0u8; 1];
        conn.read_exact(&mut byte).unwrap();
        times.push(start.elapsed());
        let _ = conn.write_all(b"HTTP/1.1 500 x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        drop(conn);
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut sorted = times.clone();
    sorted.sort();
    println!("\n## `hrns exec` start to first request byte (20 runs)\n");
    println!(
        "median {:.1} ms, min {:.1} ms, max {:.1} ms",
        sorted[10].as_secs_f64() * 1e3,
        sorted[0].as_secs_f64() * 1e3,
        sorted[19].as_secs_f64() * 1e3
    );
}

fn sessions_listing() {
    let bin = env!("CARGO_BIN_EXE_hrns");
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("hrns/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..1000 {
        let mut text = format!(
            "{{\"hrns_session\":1,\"id\":\"{i:06x}\",\"started\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/w\",\"provider\":\"p\",\"model\":\"m\",\"agent\":\"Builder\"}}\n"
        );
        for t in 0..10 {
            text.push_str(&format!(
                "{{\"event\":{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"question {t} of session {i}\"}}}}}}\n{{\"event\":{{\"type\":\"message\",\"message\":{{\"role\":\"assistant\",\"content\":\"{}\"}}}}}}\n",
                "answer text ".repeat(40)
            ));
        }
        std::fs::write(dir.join(format!("2026-01-01T00-00-00_{i:06x}.jsonl")), text).unwrap();
    }
    let t = time(5, || {
        let out = std::process::Command::new(bin)
            .arg("sessions")
            .env("XDG_STATE_HOME", state.path())
            .env("HOME", state.path())
            .output()
            .unwrap();
        assert!(out.status.success());
    });
    println!("\n## `hrns sessions` over 1 000 saved sessions (median of 5)\n");
    println!("{:.1} ms", t.as_secs_f64() * 1e3);
}

/// Peak resident memory of this process (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// In a child process (so the mock's copy of the body is not counted): stream the body at
/// `url` through the blocking client and print the accumulated text size and the peak RSS.
fn memory_child(url: &str) {
    let before = peak_rss();
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let mut events = client.stream_chat(&request()).unwrap();
    for ev in events.by_ref() {
        drop(ev.unwrap());
    }
    let c = events.finish().unwrap();
    let text: usize = c
        .choices
        .iter()
        .map(|ch| {
            ch.content.len()
                + ch.reasoning.as_ref().map_or(0, String::len)
                + ch.tool_calls
                    .iter()
                    .map(|t| t.arguments.len())
                    .sum::<usize>()
        })
        .sum();
    println!("{text} {before} {}", peak_rss());
}

fn memory(mb: usize) {
    println!("\n## Peak memory streaming {mb} MB through hrns-blocking (child process)\n");
    println!("| variant | accumulated text | peak RSS | RSS before | target (2 × text + 16 MiB) |");
    println!("|---|---|---|---|---|");
    for variant in [streams::Variant::Content, streams::Variant::Mix] {
        let stream = streams::generate(variant, mb * 1_000_000);
        let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
        mock.set_recording(false);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["memory-child", &mock.base_url()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let nums: Vec<u64> = text
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        let [text, before, peak] = nums[..] else {
            panic!(
                "memory child failed: {text} {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        println!(
            "| {} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
            variant.name(),
            mib(text),
            mib(peak),
            mib(before),
            mib(2 * text + 16 * 1024 * 1024)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "memory-child") {
        memory_child(&args[pos + 1]);
        return;
    }
    let mb: usize = std::env::var("HRNS_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let want = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    if want("throughput") {
        throughput(mb);
    }
    if want("startup") {
        exec_startup();
    }
    if want("sessions") {
        sessions_listing();
    }
    if want("memory") {
        memory(100);
    }
}
