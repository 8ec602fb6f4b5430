//! End-to-end throughput and latency, each figure beside its baseline measured in the same run.
//!
//! `cargo bench -p hrns --bench e2e` prints:
//! - streaming throughput over loopback against the mock provider serving one generated body
//!   (50 MB, as issue 20 measures; `HRNS_BENCH_MB` for another size): a lines-only baseline
//!   (ureq, the body read and split into lines, no JSON: the ceiling of any SSE client), then
//!   each driver's client (`stream_chat` drained) and a whole session turn on each driver's
//!   runner, in MB/s and events/s, with the ratio to the baseline;
//! - `hrns exec` (text and `--json`) against a minimal program around `hrns-blocking`'s
//!   `Client::stream_chat`, whole processes on the same stream (50 MB; `HRNS_BENCH_EXEC_MB`):
//!   wall time, CPU time and peak RSS, medians and ranges;
//! - a turn of 100 instant tool calls with 10 KB, 1 MB and 10 MB of history (`roundtrip`):
//!   hrns's own wall and CPU time per round trip, beside a plain client sending the same
//!   request bodies in the same run (the mock provider runs in a child process);
//! - the TUI (in a pseudo-terminal) rendering a 400 KB Markdown answer of about 61 000 deltas
//!   (`tui`): its whole-process CPU time, beside the same TUI started and quit without a
//!   prompt in the same run;
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

#[path = "../tests/pty/mod.rs"]
mod pty;

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
    // The runtime the TUI runs on: hyper's connection task reads the socket on a worker while
    // the caller decodes, as the blocking client's read-ahead thread does.
    let workers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
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
        rows.push((
            "hrns-tokio Client::stream_chat, 2 workers",
            time(RUNS, || {
                std::hint::black_box(tokio_client(&workers, &url));
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
            rows.push((
                "hrns-tokio Runner + Session, 2 workers",
                time(RUNS, || tokio_session(&workers, &url)),
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

/// The library baseline of `exec_vs_client`: the smallest useful program around
/// `hrns-blocking`'s client, printing the answer text to stdout as it streams.
fn client_child(url: &str) {
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let mut events = client.stream_chat(&request()).unwrap();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for ev in events.by_ref() {
        if let hrns_core::stream::StreamEvent::ContentDelta { text, .. } = ev.unwrap() {
            out.write_all(text.as_bytes()).unwrap();
        }
    }
    out.flush().unwrap();
    events.finish().unwrap();
}

/// Runs the command `argv` (stdout to /dev/null) as this process's only child and prints its
/// whole-process figures: wall time (ns), user and system CPU time (µs), peak RSS (KiB).
fn measure_child(argv: &[String]) {
    use nix::sys::resource::{UsageWho, getrusage};
    let start = Instant::now();
    let status = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    let wall = start.elapsed();
    assert!(status.success(), "{argv:?}: {status}");
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
    let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
    println!(
        "{} {} {} {}",
        wall.as_nanos(),
        us(usage.user_time()),
        us(usage.system_time()),
        usage.max_rss()
    );
}

/// Whole-process figures of one run.
#[derive(Debug, Clone, Copy)]
struct ProcessRun {
    wall: Duration,
    cpu: Duration,
    /// Peak resident set, in bytes.
    rss: u64,
}

/// One run of `args` (a program and its arguments, with `envs`) measured by a helper process
/// of which it is the only child.
fn measure(args: &[&str], envs: &[(&str, &str)]) -> ProcessRun {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("measure-child")
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let nums: Vec<u64> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    let [wall, user, sys, rss_kib] = nums[..] else {
        panic!(
            "measuring {args:?} failed: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ProcessRun {
        wall: Duration::from_nanos(wall),
        cpu: Duration::from_micros(user + sys),
        rss: rss_kib * 1024,
    }
}

/// `hrns exec` (text and `--json`) against the library client, whole processes streaming the
/// same `mb` MB text-only answer from the mock provider; runs interleaved so that the
/// machine's noise falls on all of them alike.
fn exec_vs_client(mb: usize) {
    let bin = env!("CARGO_BIN_EXE_hrns");
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    let stream = streams::generate(streams::Variant::Content, mb * 1_000_000);
    let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
    mock.set_recording(false);
    let url = mock.base_url();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    let envs = [
        ("HOME", home.as_str()),
        ("XDG_STATE_HOME", home.as_str()),
        ("XDG_CONFIG_HOME", home.as_str()),
        ("OPENAI_BASE_URL", url.as_str()),
        // A key of a real key's length: exec redacts it (and its fragments) from all output.
        (
            "OPENAI_API_KEY",
            "sk-bench-4f9a8c2e7b1d6053a9e8f7c6b5d4e3f2a1",
        ),
        ("HRNS_MODEL", "m"),
    ];
    let paths: [(&str, Vec<&str>); 3] = [
        (
            "library client (hrns-blocking)",
            vec![me, "client-child", &url],
        ),
        ("hrns exec", vec![bin, "exec", "go"]),
        ("hrns exec --json", vec![bin, "exec", "--json", "go"]),
    ];
    let mut runs: Vec<Vec<ProcessRun>> = vec![Vec::new(); paths.len()];
    for round in 0..=RUNS {
        for ((_, args), runs) in paths.iter().zip(&mut runs) {
            let run = measure(args, &envs);
            if round > 0 {
                runs.push(run); // round 0 warms caches up
            }
        }
    }
    println!("\n## Whole processes on a {mb} MB text-only stream (median of {RUNS}, range)\n");
    println!("| path | wall | CPU | peak RSS | wall vs client | RSS vs client |");
    println!("|---|---|---|---|---|---|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let stats = |runs: &[ProcessRun]| {
        let wall = runs.iter().map(|r| r.wall).collect::<Vec<_>>();
        let cpu = runs.iter().map(|r| r.cpu).collect::<Vec<_>>();
        let mut rss = runs.iter().map(|r| r.rss).collect::<Vec<_>>();
        rss.sort_unstable();
        (wall, cpu, rss)
    };
    let (client_wall, _, client_rss) = stats(&runs[0]);
    let client_wall = median(client_wall);
    let client_rss = client_rss[client_rss.len() / 2];
    for ((name, _), runs) in paths.iter().zip(&runs) {
        let (wall, cpu, rss) = stats(runs);
        let range = |v: &[Duration]| {
            let (lo, hi) = (v.iter().min().unwrap(), v.iter().max().unwrap());
            format!("{:.0}–{:.0}", ms(*lo), ms(*hi))
        };
        let (wall_range, cpu_range) = (range(&wall), range(&cpu));
        let (wall, cpu) = (median(wall), median(cpu));
        let peak = rss[rss.len() / 2];
        println!(
            "| {name} | {:.0} ms ({wall_range}) | {:.0} ms ({cpu_range}) | {:.1} MiB ({:.1}–{:.1}) | {:.2}× | {:.2}× |",
            ms(wall),
            ms(cpu),
            mib(peak),
            mib(rss[0]),
            mib(rss[rss.len() - 1]),
            wall.as_secs_f64() / client_wall.as_secs_f64(),
            peak as f64 / client_rss as f64,
        );
    }
}

/// Tool calls per turn in `round_trips`.
const CALLS: usize = 100;

/// The mock provider of `round_trips`, in a child process (so that its work is not counted
/// as the client's): request n of every `CALLS + 1` asks for one `instant` call with
/// arguments that differ each time, the last one answers in text. Serves until stdin closes.
fn tool_mock_child() {
    let n = std::sync::atomic::AtomicUsize::new(0);
    let mock = MockProvider::start_with(move |_| {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % (CALLS + 1);
        Some(if i == CALLS {
            Reply::text_answer("done")
        } else {
            Reply::tool_calls(&[(&format!("call_{i}"), "instant", &format!("{{\"n\":{i}}}"))])
        })
    })
    .unwrap();
    mock.set_recording(false);
    println!("{}", mock.base_url());
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// A tool that answers at once.
struct InstantTool;

impl hrns_blocking::Tool for InstantTool {
    fn spec(&self) -> hrns_core::tool::ToolSpec {
        hrns_core::tool::ToolSpec {
            name: "instant".into(),
            description: "Answers at once.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            effect: hrns_core::tool::Effect::ReadOnly,
        }
    }

    fn run(&self, arguments: &str, _: &hrns_blocking::ToolContext) -> hrns_core::tool::ToolOutput {
        hrns_core::tool::ToolOutput::ok(format!("result of {arguments}"))
    }
}

/// A transport that keeps a copy of each request body it sends when `keep` says so (the
/// warm-up; in timed runs the copy would be counted as hrns's work).
struct Keeping {
    client: hrns_blocking::Client,
    keep: bool,
    bodies: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl hrns_blocking::Transport for Keeping {
    fn send(
        &self,
        req: &hrns_core::http::HttpRequest,
    ) -> Result<hrns_blocking::HttpResponse, hrns_core::session::TransportError> {
        if self.keep {
            self.bodies.lock().unwrap().push(req.body.clone());
        }
        self.client.send(req)
    }
}

/// A saved conversation of about `bytes` bytes: user and assistant messages of 4 KB with
/// the quotes, backslashes and newlines that JSON must escape.
fn history(bytes: usize) -> Vec<Message> {
    let piece = "Some \"quoted\" text, a path C:\\dir\\file and a line end.\n";
    let text = piece.repeat(4096 / piece.len());
    (0..bytes.div_ceil(text.len()).max(2).next_multiple_of(2))
        .map(|i| {
            if i % 2 == 0 {
                Message::user(text.clone())
            } else {
                Message::assistant(text.clone())
            }
        })
        .collect()
}

/// This process's CPU time so far (user + system).
fn cpu_time() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let u = getrusage(UsageWho::RUSAGE_SELF).unwrap();
    let d = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
    };
    d(u.user_time()) + d(u.system_time())
}

/// Wall and CPU time of `f`.
fn timed(f: impl FnOnce()) -> (Duration, Duration) {
    let (t, c) = (Instant::now(), cpu_time());
    f();
    (t.elapsed(), cpu_time() - c)
}

/// A turn of `CALLS` instant tool calls on the blocking runner, with 10 KB, 1 MB and 10 MB
/// of history, against a plain ureq client that sends the same request bodies (recorded
/// from hrns in the warm-up) and reads the same answers: the difference is hrns's own time.
fn round_trips() {
    let mut server = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("tool-mock-child")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    let mut tools = hrns_blocking::Toolbox::new();
    tools.add(InstantTool);
    let turn = |history: &[Message], keep: bool| -> Vec<Vec<u8>> {
        let transport = Arc::new(Keeping {
            client: hrns_blocking::Client::new(Provider::new(&url, None), &Default::default()),
            keep,
            bodies: Default::default(),
        });
        let ctx = hrns_blocking::ToolContext::new(std::env::temp_dir()).unwrap();
        let mut runner = hrns_blocking::Runner::new(Arc::clone(&transport) as _, &tools, ctx);
        let mut config = session_config(&url);
        config.tools = tools.specs();
        config.max_steps = CALLS as u32 + 1;
        let mut session = Session::with_history(config, history.to_vec()).unwrap();
        let outcome = runner.run(&mut session, "go", |_| {}).unwrap();
        assert_eq!(outcome, hrns_blocking::TurnOutcome::Finished, "{outcome:?}");
        drop(runner);
        std::mem::take(&mut *transport.bodies.lock().unwrap())
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let plain = |bodies: &[Vec<u8>]| {
        for body in bodies {
            let resp = agent
                .post(&format!("{url}/chat/completions"))
                .header("content-type", "application/json")
                .send(&body[..])
                .unwrap();
            std::io::copy(&mut resp.into_body().into_reader(), &mut std::io::sink()).unwrap();
        }
    };
    println!(
        "\n## A turn of {CALLS} instant tool calls (mock in a child process; median of {RUNS}, range)\n"
    );
    println!(
        "| history | requests | hrns turn wall | plain client wall | hrns turn CPU | plain client CPU | hrns's own per round trip: wall | CPU |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, bytes) in [
        ("10 KB", 10_000),
        ("1 MB", 1_000_000),
        ("10 MB", 10_000_000),
    ] {
        let history = history(bytes);
        let bodies = turn(&history, true);
        assert_eq!(bodies.len(), CALLS + 1);
        plain(&bodies); // warm-up
        let (mut hw, mut hc, mut pw, mut pc) = (vec![], vec![], vec![], vec![]);
        for _ in 0..RUNS {
            // The history is copied outside the timed part, as a caller would own it.
            let h = history.clone();
            let (w, c) = timed(|| {
                turn(&h, false);
            });
            hw.push(w);
            hc.push(c);
            let (w, c) = timed(|| plain(&bodies));
            pw.push(w);
            pc.push(c);
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let show = |v: &[Duration]| {
            let mut v = v.to_vec();
            v.sort();
            format!(
                "{:.1} ms ({:.1}–{:.1})",
                ms(v[v.len() / 2]),
                ms(v[0]),
                ms(v[v.len() - 1])
            )
        };
        let own = |h: &[Duration], p: &[Duration]| {
            let mut d: Vec<f64> = h.iter().zip(p).map(|(h, p)| ms(*h) - ms(*p)).collect();
            d.sort_by(f64::total_cmp);
            let per = |x: f64| x / CALLS as f64;
            format!(
                "{:.3} ms ({:.3}–{:.3})",
                per(d[d.len() / 2]),
                per(d[0]),
                per(d[d.len() - 1])
            )
        };
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            bodies.len(),
            show(&hw),
            show(&pw),
            show(&hc),
            show(&pc),
            own(&hw, &pw),
            own(&hc, &pc)
        );
    }
    drop(server.stdin.take());
    let _ = server.wait();
}

/// The last words of the TUI benchmark's answer.
const ANSWER_END: &str = "End of the benchmark answer.";

/// A Markdown answer of about 400 KB (headings, emphasis, code, links, lists, quotes and
/// fenced code) in deltas of 6 and 7 bytes alternately (about 61 000), as a fast provider
/// streams it.
fn markdown_deltas() -> Vec<String> {
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 400_000 {
        n += 1;
        text.push_str(&format!(
            "## Section {n}\n\nSome **bold** words, some *italic* ones, a `code span` and a \
             [link](https://example.com/page/{n}) in a paragraph long enough to wrap on an \
             ordinary terminal of one hundred columns, café included.\n\n\
             - a bullet with **emphasis**\n- a second bullet\n  - a nested one\n\
             1. first step\n2. second step\n\n> a quoted line of text\n\n\
             ```rust\nfn section_{n}() {{\n    println!(\"{n}\");\n}}\n```\n\n"
        ));
    }
    text.push_str(ANSWER_END);
    let mut deltas = Vec::new();
    let mut rest = text.as_str();
    let mut step = 6;
    while !rest.is_empty() {
        let mut cut = step.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        deltas.push(rest[..cut].to_owned());
        rest = &rest[cut..];
        step = 13 - step;
    }
    deltas
}

/// Runs the TUI in a pseudo-terminal against the mock at `url`; with `prompt` other than
/// `-`, sends it and waits for the whole answer; then quits and prints the TUI process's CPU
/// time in microseconds (it is this process's only child).
fn tui_child(url: &str, prompt: &str) {
    use nix::sys::resource::{UsageWho, getrusage};
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let dir = |d: &str| root.path().join(d).display().to_string();
    let env = [
        ("HOME", dir("home")),
        ("XDG_CONFIG_HOME", dir("config")),
        ("XDG_STATE_HOME", dir("state")),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", url.to_owned()),
        ("OPENAI_API_KEY", "k".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    let t = Duration::from_secs(120);
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 100);
    p.expect("mock-model", t);
    if prompt != "-" {
        p.send(&format!("{prompt}\r"));
        p.expect(ANSWER_END, t);
    }
    p.send("/quit\r");
    assert_eq!(p.wait(t), 0);
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
    let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
    println!("{}", us(u.user_time()) + us(u.system_time()));
}

/// The TUI's CPU time for a 400 KB Markdown answer of about 61 000 deltas, and for starting
/// and quitting alone (its baseline), interleaved, each in a fresh pseudo-terminal.
fn tui_render() {
    use hrns_blocking::mock::chunk;
    let deltas = markdown_deltas();
    let bytes: usize = deltas.iter().map(String::len).sum();
    let mut events = vec![chunk::role_chunk()];
    events.extend(deltas.iter().map(|d| chunk::text_chunk(d)));
    events.push(chunk::finish_chunk("stop"));
    let mock = MockProvider::start_repeating(Reply::sse(events)).unwrap();
    mock.set_recording(false);
    let url = mock.base_url();
    let cpu = |prompt: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["tui-child", &url, prompt])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let us: u64 = text.trim().parse().unwrap_or_else(|_| {
            panic!(
                "the TUI run failed: {text} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        Duration::from_micros(us)
    };
    let (mut idle, mut answer) = (Vec::new(), Vec::new());
    for round in 0..=RUNS {
        let (i, a) = (cpu("-"), cpu("write the benchmark answer"));
        if round > 0 {
            idle.push(i);
            answer.push(a);
        }
    }
    let show = |v: &mut Vec<Duration>| {
        v.sort();
        format!(
            "{:.3} s ({:.3}–{:.3})",
            v[v.len() / 2].as_secs_f64(),
            v[0].as_secs_f64(),
            v[v.len() - 1].as_secs_f64()
        )
    };
    let render = median(answer.clone()).saturating_sub(median(idle.clone()));
    println!(
        "\n## TUI rendering a Markdown answer (CPU time of the process; median of {RUNS}, range)\n"
    );
    println!(
        "{} KB in {} deltas: {}; started and quit alone: {}; the answer's share: {:.3} s",
        bytes / 1000,
        deltas.len(),
        show(&mut answer),
        show(&mut idle),
        render.as_secs_f64()
    );
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
    // First: the command it measures may be this program in another mode.
    if let Some(pos) = args.iter().position(|a| a == "measure-child") {
        measure_child(&args[pos + 1..]);
        return;
    }
    if let Some(pos) = args.iter().position(|a| a == "memory-child") {
        memory_child(&args[pos + 1]);
        return;
    }
    if let Some(pos) = args.iter().position(|a| a == "client-child") {
        client_child(&args[pos + 1]);
        return;
    }
    if args.iter().any(|a| a == "tool-mock-child") {
        tool_mock_child();
        return;
    }
    if let Some(pos) = args.iter().position(|a| a == "tui-child") {
        tui_child(&args[pos + 1], &args[pos + 2]);
        return;
    }
    let mb: usize = std::env::var("HRNS_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let want = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    if want("throughput") {
        throughput(mb);
    }
    if want("exec") {
        let mb = std::env::var("HRNS_BENCH_EXEC_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(50);
        exec_vs_client(mb);
    }
    if want("roundtrip") {
        round_trips();
    }
    if want("tui") {
        tui_render();
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
