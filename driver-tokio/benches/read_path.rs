//! Where `Client::stream_chat` spends its time on one fast stream: decoding alone, reading
//! alone, and the client on a current-thread and on a two-worker runtime, with how long the
//! decoding side waited for body frames (the part of reading that did not overlap decoding).
//!
//! `cargo bench -p hrns-tokio --bench read_path`: the generated 50 MB `content` stream of the
//! e2e bench (`HRNS_BENCH_MB` for another size), median and range of `HRNS_BENCH_RUNS` runs
//! (default 7) after a warm-up, wall time and this process's CPU time (all its threads). The
//! mock provider runs in a child process — this program again, with `HRNS_BENCH_SERVE` set —
//! so the CPU time is the client's alone.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::client::{self as pure, Next, StreamedChat};
use hrns_core::session::Provider;
use hrns_core::wire::{ChatRequest, Message};
use hrns_tokio::{Client, ClientConfig, IncomingResponse};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

#[path = "../../core/benches/streams/mod.rs"]
mod streams;

/// The decoder is fed pieces of this size when it runs alone (as a socket read would).
const PIECE: usize = 64 * 1024;

fn request() -> ChatRequest {
    serde_json::from_value(
        serde_json::json!({"model": "m", "messages": [Message::user("go")], "stream": true}),
    )
    .expect("a chat request")
}

/// The child process: serves the stream until its stdin closes.
fn serve(body: Vec<u8>) {
    let mock = MockProvider::start_repeating(Reply::sse_raw(body)).expect("the mock starts");
    mock.set_recording(false);
    println!("{}", mock.base_url());
    std::io::stdout().flush().expect("stdout");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// CPU time of this process so far, every thread that still runs counted (Linux's per-thread
/// `schedstat`); zero where it cannot be read.
fn cpu_time() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let nanos = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(nanos)
}

/// One measured run: its wall and CPU time, and how long the decoding side waited for frames
/// (where the path times its waits).
#[derive(Debug, Clone, Copy)]
struct Run {
    wall: Duration,
    cpu: Duration,
    waited: Option<Duration>,
}

/// The client: events drained through `Client::stream_chat`, as a caller does.
async fn client(url: &str) -> Option<Duration> {
    let client = Client::new(Provider::new(url, None), &ClientConfig::default());
    let mut events = client
        .stream_chat(&request())
        .await
        .expect("the stream opens");
    while let Some(event) = events.next().await {
        std::hint::black_box(event.expect("an event"));
    }
    events.finish().await.expect("a complete answer");
    None
}

async fn open(url: &str) -> IncomingResponse {
    let client = Client::new(Provider::new(url, None), &ClientConfig::default());
    let req = pure::chat_request(client.provider(), &request(), true);
    client.send(req).await.expect("the response head")
}

/// Reading alone: every body frame received, nothing decoded.
async fn reading(url: &str) -> Option<Duration> {
    let mut response = open(url).await;
    while let Some(frame) = response.chunk().await {
        std::hint::black_box(frame.expect("a frame"));
    }
    None
}

/// The client's loop written out, timing each wait for the next frame.
async fn client_timing_waits(url: &str) -> Option<Duration> {
    let mut response = open(url).await;
    let headers = response
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_slice()));
    let mut answer = StreamedChat::new(response.status, headers);
    let mut waited = Duration::ZERO;
    loop {
        match answer.poll_next() {
            Next::Event(event) => {
                std::hint::black_box(event);
            }
            Next::Failed(error) => panic!("{error}"),
            Next::End => break,
            Next::NeedsBody => {
                let start = Instant::now();
                let frame = response.chunk().await;
                waited += start.elapsed();
                match frame {
                    Some(bytes) => answer.handle_data(&bytes.expect("a frame")),
                    None => answer.handle_end(),
                }
            }
        }
    }
    answer.finish().expect("a complete answer");
    Some(waited)
}

/// Decoding alone: the body fed from memory in socket-sized pieces.
fn decoding(body: &[u8]) -> Option<Duration> {
    let mut answer = StreamedChat::new(200, [("content-type", &b"text/event-stream"[..])]);
    let mut pieces = body.chunks(PIECE);
    loop {
        match answer.poll_next() {
            Next::Event(event) => {
                std::hint::black_box(event);
            }
            Next::Failed(error) => panic!("{error}"),
            Next::End => break,
            Next::NeedsBody => match pieces.next() {
                Some(piece) => answer.handle_data(piece),
                None => answer.handle_end(),
            },
        }
    }
    answer.finish().expect("a complete answer");
    None
}

/// `runs` measured runs of `f` after one warm-up.
fn measure(runs: usize, mut f: impl FnMut() -> Option<Duration>) -> Vec<Run> {
    f();
    (0..runs)
        .map(|_| {
            let (wall, cpu) = (Instant::now(), cpu_time());
            let waited = f();
            Run {
                wall: wall.elapsed(),
                cpu: cpu_time().saturating_sub(cpu),
                waited,
            }
        })
        .collect()
}

/// "median (min–max)" in milliseconds.
fn spread(mut values: Vec<Duration>) -> String {
    values.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "{:.1} ({:.1}–{:.1})",
        ms(values[values.len() / 2]),
        ms(values[0]),
        ms(values[values.len() - 1])
    )
}

fn row(name: &str, runs: &[Run]) {
    let waits: Option<Vec<Duration>> = runs.iter().map(|r| r.waited).collect();
    let waited = waits.map(spread).unwrap_or_default();
    println!(
        "| {name} | {} | {} | {waited} |",
        spread(runs.iter().map(|r| r.wall).collect()),
        spread(runs.iter().map(|r| r.cpu).collect()),
    );
}

fn runtime(workers: Option<usize>) -> Runtime {
    let mut builder = match workers {
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
        None => tokio::runtime::Builder::new_current_thread(),
    };
    builder.enable_all().build().expect("a runtime")
}

fn main() {
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let mb = env("HRNS_BENCH_MB", 50);
    let runs = env("HRNS_BENCH_RUNS", 7).max(1);
    let stream = streams::generate(streams::Variant::Content, mb * 1_000_000);
    if std::env::var_os("HRNS_BENCH_SERVE").is_some() {
        return serve(stream.body);
    }
    let mut server = Command::new(std::env::current_exe().expect("this program"))
        .env("HRNS_BENCH_SERVE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the mock provider process starts");
    let mut url = String::new();
    BufReader::new(server.stdout.take().expect("piped"))
        .read_line(&mut url)
        .expect("the mock provider's address");
    let url = url.trim().to_owned();
    let one = runtime(None);
    let two = runtime(Some(2));

    println!(
        "\n## hrns-tokio's read path, {mb} MB `content` stream, ms: median (range) of {runs}\n"
    );
    println!("| path | wall | CPU (all threads) | waited for frames |");
    println!("|---|---|---|---|");
    row(
        "decoding alone (64 KiB pieces from memory)",
        &measure(runs, || decoding(&stream.body)),
    );
    row(
        "reading alone, current thread",
        &measure(runs, || one.block_on(reading(&url))),
    );
    row(
        "`stream_chat`, current thread",
        &measure(runs, || one.block_on(client(&url))),
    );
    row(
        "`stream_chat`, 2 workers",
        &measure(runs, || two.block_on(client(&url))),
    );
    row(
        "the same loop timing its waits, current thread",
        &measure(runs, || one.block_on(client_timing_waits(&url))),
    );
    row(
        "the same loop timing its waits, 2 workers",
        &measure(runs, || two.block_on(client_timing_waits(&url))),
    );
    drop(server.stdin.take()); // the server exits when its stdin closes
    let _ = server.wait();
}
