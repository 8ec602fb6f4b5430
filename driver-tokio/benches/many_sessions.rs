//! 1 000 concurrent streaming sessions against the mock provider in one process, on a
//! two-worker runtime: prints the wall time and the peak resident memory.
//!
//! `cargo bench -p hrns-tokio --bench many_sessions`; `HRNS_BENCH_SESSIONS=N` changes the
//! count. The mock provider (one thread per connection) runs in a child process — this
//! program again, with `HRNS_BENCH_SERVE` set — so the peak memory is the driver's alone.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::session::{Event, Provider, Session, SessionConfig};
use hrns_tokio::{Client, ClientConfig, Runner, ToolContext, Toolbox, TurnOutcome};
use rustix::process::{Resource, getrlimit, setrlimit};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The answer every session streams: 900 bytes, written in 128-byte pieces.
fn answer() -> String {
    "The quick brown fox jumps over the lazy dog. "
        .repeat(20)
        .trim_end()
        .to_owned()
}

/// The child process: serves the answer until its stdin closes.
fn serve() {
    let mock = MockProvider::start_repeating(Reply::text_answer(&answer()).split_every(128))
        .expect("the mock provider starts");
    mock.set_recording(false);
    println!("{}", mock.base_url());
    std::io::stdout().flush().expect("stdout");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// Peak resident set size of this process so far, in KiB (`VmHWM`).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Two sockets per session (client and mock): make sure the descriptor limit allows it.
fn raise_fd_limit() {
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

fn main() {
    let sessions: usize = std::env::var("HRNS_BENCH_SESSIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    raise_fd_limit();
    if std::env::var_os("HRNS_BENCH_SERVE").is_some() {
        return serve();
    }
    let mut server = Command::new(std::env::current_exe().expect("this program"))
        .env("HRNS_BENCH_SERVE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the mock provider process starts");
    let mut base_url = String::new();
    BufReader::new(server.stdout.take().expect("piped"))
        .read_line(&mut base_url)
        .expect("the mock provider's address");
    let base_url = base_url.trim().to_owned();
    let answer = answer();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let before = peak_rss_kib();
    let (took, finished, bytes) = runtime.block_on(async {
        let provider = Provider::new(base_url, None);
        let client = Client::new(provider.clone(), &ClientConfig::default());
        let start = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..sessions {
            let mut session = Session::new(SessionConfig::new(provider.clone(), "mock-model"));
            let mut runner = Runner::new(
                client.clone(),
                Toolbox::new(),
                ToolContext::new("/").unwrap(),
            );
            tasks.spawn(async move {
                let mut streamed = 0usize;
                let outcome = runner
                    .run(&mut session, "hello", |e| {
                        if let Event::TextDelta { text } = e {
                            streamed += text.len();
                        }
                    })
                    .await
                    .unwrap();
                (outcome, streamed)
            });
        }
        let (mut finished, mut bytes) = (0usize, 0usize);
        while let Some(done) = tasks.join_next().await {
            let (outcome, streamed) = done.expect("a session task");
            if outcome == TurnOutcome::Finished && streamed == answer.len() {
                finished += 1;
            }
            bytes += streamed;
        }
        (start.elapsed(), finished, bytes)
    });
    let peak = peak_rss_kib();
    let per = took / u32::try_from(sessions.max(1)).unwrap_or(u32::MAX);
    println!(
        "many_sessions: {sessions} concurrent streaming sessions, {finished} finished with the \
         full answer ({} KiB streamed) in {:.0} ms ({:.2} ms each on average); peak RSS {:.1} \
         MiB (before the sessions {:.1} MiB)",
        bytes / 1024,
        took.as_secs_f64() * 1000.0,
        per.as_secs_f64() * 1000.0,
        peak as f64 / 1024.0,
        before as f64 / 1024.0,
    );
    drop(runtime);
    drop(server.stdin.take()); // the server exits when its stdin closes
    let _ = server.wait();
    assert_eq!(finished, sessions, "every session finished");
}
