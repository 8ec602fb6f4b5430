//! `hrns exec` against providers that do not stop or ask to wait: an endless answer fails at
//! the answer-size cap with bounded memory, Ctrl-C during a fast stream ends the run at once,
//! and a `Retry-After` past the retry budget fails at once saying how long.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply, chunk};
use serde_json::Value;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// An answer that starts a `write_file` call and then sends argument fragments of 1 KiB
/// forever.
fn endless_tool_arguments() -> Reply {
    Reply::endless_sse(
        [
            chunk::role_chunk(),
            chunk::tool_call_chunk(
                0,
                Some("c1"),
                Some("write_file"),
                r#"{"path":"big.txt","content":""#,
            ),
        ],
        chunk::tool_call_chunk(0, None, None, &"x".repeat(1024)),
    )
}

/// The resident set of `pid` in KiB (from /proc), `None` once it is gone.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Waits for `child` (at most `limit`), sampling its resident set; returns its status and the
/// largest resident set seen, in KiB.
fn wait_sampling(child: &mut Child, limit: Duration) -> (ExitStatus, u64) {
    let started = Instant::now();
    let mut peak = 0;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        peak = peak.max(rss_kib(child.id()).unwrap_or(0));
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("hrns did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_endless_answer_fails_at_the_default_cap_with_bounded_memory() {
    let env = Env::new();
    let mock = MockProvider::start([endless_tool_arguments()]).unwrap();
    let mut child = env
        .cmd(Some(&mock))
        .args(["exec", "--approval", "auto", "write a big file"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, peak_kib) = wait_sampling(&mut child, Duration::from_secs(120));
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("33554432 bytes"), "names the cap: {err}");
    assert!(err.contains("maxAnswerBytes"), "names the key: {err}");
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
    assert!(
        !env.work().join("big.txt").exists(),
        "the partial call never ran"
    );
    // 32 MiB of arguments are held once (the events are handed on as they come); a run that
    // kept growing would pass this by far.
    assert!(peak_kib < 400 * 1024, "peak resident set {peak_kib} KiB");
}

#[test]
fn max_answer_bytes_in_the_config_sets_the_cap() {
    let env = Env::new();
    let mock = MockProvider::start([endless_tool_arguments()]).unwrap();
    env.config_with(&mock, r#", "maxAnswerBytes": 100000"#);
    let out = env
        .cmd(None)
        .args(["exec", "--json", "--approval", "auto", "write a big file"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let last: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_failed", "{last}");
    assert_eq!(
        last["error"]["error"]["reason"], "answer_too_large",
        "{last}"
    );
    assert_eq!(last["error"]["error"]["limit"], 100000, "{last}");
    // The history saved for the session holds the question, not the partial answer.
    assert!(
        !stdout(&out).contains(r#""role":"assistant""#),
        "no partial answer entered the history"
    );
}

#[test]
fn a_wrong_max_answer_bytes_is_a_usage_error_naming_the_key() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    env.config_with(&mock, r#", "maxAnswerBytes": "lots""#);
    let out = env.cmd(None).args(["exec", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`maxAnswerBytes`"),
        "{}",
        stderr(&out)
    );
    assert!(mock.chat_requests().is_empty());
}

/// Sends `signal` to `child` with kill(1).
fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn ctrl_c_during_a_fast_stream_exits_130_at_once() {
    let env = Env::new();
    // A token every millisecond, for as long as anyone listens.
    let reply = Reply::endless_sse([chunk::role_chunk()], chunk::text_chunk("tok "))
        .delay(Duration::from_millis(1));
    let mock = MockProvider::start([reply]).unwrap();
    let mut child = env
        .cmd(Some(&mock))
        .args(["exec", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(mock.wait_for_requests(1, Duration::from_secs(10)));
    // The signal goes once the stream is seen on stdout (not after a fixed sleep, which a
    // loaded machine can outlast before hrns has read a token).
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut pipe = child.stdout.take().unwrap();
    let reader = {
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut pipe, &mut buf) {
                shown.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let seen = |text: &[u8]| text.windows(7).any(|w| w == b"tok tok");
    let start = Instant::now();
    while !seen(&shown.lock().unwrap()) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the stream was never shown"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(child.try_wait().unwrap().is_none(), "still streaming");
    let sent = Instant::now();
    signal(&child, "-INT");
    let (status, _) = wait_sampling(&mut child, Duration::from_secs(30));
    let waited = sent.elapsed();
    reader.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(130), "{}", stderr(&out));
    // A generous bound: the stream itself never ends, so any exit at all shows the cancel
    // was seen between feeds.
    assert!(waited < Duration::from_secs(2), "exited after {waited:?}");
}

#[test]
fn a_long_retry_after_fails_at_once_saying_how_long() {
    let env = Env::new();
    let in_an_hour =
        httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3600));
    for (retry_after, waits) in [
        ("3600", &["3600"][..]),
        (in_an_hour.as_str(), &["3599", "3600"][..]),
    ] {
        let mock =
            MockProvider::start([Reply::rate_limited(retry_after), Reply::text_answer("no")])
                .unwrap();
        let started = Instant::now();
        let out = env.run(Some(&mock), &["exec", "go"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            waits
                .iter()
                .any(|w| err.contains(&format!("the provider asked to wait {w} s before retrying"))),
            "{retry_after}: {err}"
        );
        assert!(err.contains("more than the retry budget of 300 s"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(30), "did not wait");
        assert_eq!(mock.chat_requests().len(), 1, "not retried");
    }
}

#[test]
fn the_retry_budget_is_set_in_the_config() {
    let env = Env::new();
    // One attempt in all: a 500 is not retried.
    let mock = MockProvider::start([Reply::error(500, "boom"), Reply::text_answer("no")]).unwrap();
    env.config_with(&mock, r#", "retryAttempts": 1"#);
    let out = env.cmd(None).args(["exec", "go"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("boom"), "{}", stderr(&out));
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
    // A shorter longest wait: a minute is already too long.
    let mock = MockProvider::start([Reply::rate_limited("60"), Reply::text_answer("no")]).unwrap();
    env.config_with(&mock, r#", "retryMaxWait": 5"#);
    let out = env.cmd(None).args(["exec", "go"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("more than the retry budget of 5 s"), "{err}");
    assert!(
        err.contains("raise `retryMaxWait` in config.json"),
        "names the key: {err}"
    );
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
    // Two attempts: one retry, then the answer.
    let mock =
        MockProvider::start([Reply::error(500, "boom"), Reply::text_answer("second try")]).unwrap();
    env.config_with(&mock, r#", "retryAttempts": 2, "retryMaxWait": 600"#);
    let out = env.cmd(None).args(["exec", "go"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "second try\n");
    assert_eq!(mock.chat_requests().len(), 2);
}

#[test]
fn a_wrong_retry_key_is_a_usage_error_naming_it() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    for (extra, key) in [
        (r#", "retryAttempts": 0"#, "`retryAttempts`"),
        (r#", "retryAttempts": "many""#, "`retryAttempts`"),
        (r#", "retryMaxWait": -5"#, "`retryMaxWait`"),
        (r#", "retryMaxWait": 1e12"#, "`retryMaxWait`"),
    ] {
        env.config_with(&mock, extra);
        let out = env.cmd(None).args(["exec", "hi"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra}: {}", stderr(&out));
        assert!(stderr(&out).contains(key), "{extra}: {}", stderr(&out));
    }
    assert!(mock.chat_requests().is_empty());
}
