//! `hrns exec` against a provider that only sends keep-alives: with `"streamIdleTimeout"` in
//! the config, each attempt is given up after that many seconds without data, retried like a
//! transport error, and the run fails saying why, instead of waiting forever.

mod common;

use common::{Env, stderr};
use hrns_blocking::mock::{MockProvider, Reply};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_keep_alive_only_provider_fails_after_the_retries() {
    let env = Env::new();
    let keep_alives = || Reply::keep_alives_forever().delay(Duration::from_millis(50));
    let mock = MockProvider::start([keep_alives(), keep_alives()]).unwrap();
    let config = env.config_with(
        &mock,
        r#", "currentProvider": "mock", "streamIdleTimeout": 1, "retryAttempts": 2"#,
    );
    let mut child = env
        .cmd(None)
        .args(["--config", config.to_str().unwrap(), "exec", "hello"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A generous outer limit: without the timeout the run never ends.
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(90) {
            child.kill().unwrap();
            panic!("hrns exec still waits on keep-alives");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no data for 1 s") && err.contains("streamIdleTimeout"),
        "says why and which key: {err}"
    );
    assert!(err.contains("retrying (attempt 2)"), "retried: {err}");
    assert_eq!(mock.chat_requests().len(), 2);
}

#[test]
fn a_bad_stream_idle_timeout_is_refused_naming_the_key_and_file() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    let config = env.config_with(
        &mock,
        r#", "currentProvider": "mock", "streamIdleTimeout": 0"#,
    );
    let out = env
        .cmd(None)
        .args(["--config", config.to_str().unwrap(), "exec", "hello"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`streamIdleTimeout`") && err.contains("config.json"),
        "{err}"
    );
    assert_eq!(mock.chat_requests().len(), 0);
}
