//! Issue 19 and 13 behaviour in a real pseudo-terminal: control sequences from files and answers
//! never reach the terminal, and `/model` is saved.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);
const EVIL: &str = "\x1b]0;pwned-title\x07\x1b[2J";

fn dirs() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    root
}

fn env_of(root: &Path, mock: Option<&MockProvider>) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("HOME", root.join("home").display().to_string()),
        ("XDG_CONFIG_HOME", root.join("config").display().to_string()),
        ("XDG_STATE_HOME", root.join("state").display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
    ];
    if let Some(mock) = mock {
        env.extend([
            ("OPENAI_BASE_URL", mock.base_url()),
            ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
            ("HRNS_MODEL", "mock-model".to_owned()),
        ]);
    }
    env
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn assert_no_evil(raw: &[u8]) {
    assert!(
        !contains(raw, b"\x1b]0;pwned"),
        "the title sequence reached the terminal"
    );
    assert!(
        !contains(raw, b"pwned-title\x07"),
        "BEL reached the terminal"
    );
}

#[test]
fn exec_on_a_terminal_strips_sequences_from_stdout_and_stderr() {
    let root = dirs();
    std::fs::write(
        root.path().join("work/evil.txt"),
        format!("{EVIL}file text\n"),
    )
    .unwrap();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":"evil.txt"}"#)]),
        Reply::text_answer(&format!("Answer {EVIL}done.")),
    ])
    .unwrap();
    let env = env_of(root.path(), Some(&mock));
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["exec", "x"],
        &work,
        &env,
        30,
        100,
    );
    assert_eq!(p.wait(T), 0, "{}", p.output());
    p.expect("done.", T);
    p.expect("file text", T);
    assert_no_evil(&p.raw());
}

#[test]
fn the_tui_never_draws_sequences_from_files_or_answers() {
    let root = dirs();
    std::fs::write(
        root.path().join("work/evil.txt"),
        format!("{EVIL}file text\n"),
    )
    .unwrap();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":"evil.txt"}"#)]),
        Reply::text_answer(&format!("Answer {EVIL}done.")),
    ])
    .unwrap();
    let env = env_of(root.path(), Some(&mock));
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 100);
    p.expect("mock-model", T);
    p.send("read evil.txt\r");
    p.expect("done.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert_no_evil(&p.raw());
}

#[test]
fn model_is_saved_in_the_provider_entry() {
    let root = dirs();
    let mock = MockProvider::start([])
        .unwrap()
        .with_models(["alpha", "beta"]);
    let config = root.path().join("config/hrns/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            r#"{{"providers": {{"local": {{"url": "{}", "model": "mock-model", "skipVerify": false}}}}, "currentProvider": "local"}}"#,
            mock.base_url()
        ),
    )
    .unwrap();
    let env = env_of(root.path(), None);
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 100);
    p.expect("mock-model", T);
    p.send("/model beta\r");
    p.expect("saved", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(saved["providers"]["local"]["model"], "beta");
    // The next start uses it.
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 100);
    p.expect("beta", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
}

#[test]
fn enter_on_an_empty_line_answers_prompts_that_allow_it() {
    let root = dirs();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "write_file", r#"{"path":"x.txt","content":"x"}"#)]),
        Reply::text_answer("Understood without a reason."),
    ])
    .unwrap();
    let env = env_of(root.path(), Some(&mock));
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 100);
    p.expect("mock-model", T);
    p.send("write a file\r");
    // What the screen shows is the state the next key meets: no need to wait longer.
    p.expect("[y]es", T);
    p.send("n");
    p.expect("reason", T);
    p.send("\r");
    p.expect("Understood without a reason.", T);
    assert!(!work.join("x.txt").exists());
    assert!(!p.output().contains("error: denied"), "denied is said once");
    // /connect's key prompt takes an empty key.
    p.send("/connect\r");
    p.expect("name", T);
    p.send("local\r");
    p.expect("URL", T);
    p.send(&format!("{}\r", mock.base_url()));
    p.expect("API key", T);
    p.send("\r");
    p.expect("[1]: ", T);
    p.send("m1\r");
    p.expect("provider: local", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
}

#[test]
fn slash_commands_are_echoed_help_lists_ctrl_t_and_quitting_says_how_to_resume() {
    let root = dirs();
    let mock = MockProvider::start([Reply::text_answer("first answer")]).unwrap();
    let env = env_of(root.path(), Some(&mock));
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 40, 120);
    p.expect("mock-model", T);
    p.send("hello\r");
    p.expect("first answer", T);
    p.send("/help\r");
    p.expect("› /help", T);
    p.expect("Ctrl-T", T);
    p.send("/sessions\r");
    p.expect("* ", T);
    p.expect("2 messages", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    p.expect("hrns --continue", T);
}

#[test]
fn model_picker_unknown_model_warning_and_tab_candidates_in_place() {
    let root = dirs();
    let mock = MockProvider::start([])
        .unwrap()
        .with_models(["alpha", "beta"]);
    let env = env_of(root.path(), Some(&mock));
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 100);
    p.expect("mock-model", T);
    p.send("/model\r");
    p.expect("pick one", T);
    p.expect("2. beta", T);
    p.send("/model 2\r");
    p.expect("model: beta", T);
    p.send("/model gamma\r");
    p.expect("not in the provider's model list", T);
    p.expect("model: gamma", T);
    p.send("/mo\t");
    p.expect_screen("Tab's candidates", T, |s| s.contains("/model  /models"));
    p.send("x");
    p.expect_screen("the candidates gone", T, |s| !s.contains("/model  /models"));
    p.send("\x15/quit\r");
    assert_eq!(p.wait(T), 0);
}

#[test]
fn connect_offers_the_providers_models_and_asks_about_tls_for_https() {
    let root = dirs();
    let mock = MockProvider::start([Reply::text_answer("beta answers")])
        .unwrap()
        .with_models(["alpha", "beta"]);
    let env = env_of(root.path(), Some(&mock));
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 40, 120);
    p.expect("mock-model", T);
    // Plain http: no TLS question; the models listed, picked by number.
    p.send("/connect\r");
    p.expect("provider name", T);
    p.send("listed\r");
    p.expect("base URL", T);
    p.send(&format!("{}\r", mock.base_url()));
    p.expect("API key", T);
    p.send("\r");
    p.expect("2. beta", T);
    p.expect("[1]: ", T);
    p.send("2\r");
    p.expect("provider: listed (beta)", T);
    assert!(!p.output().contains("Skip TLS"), "asked for an http URL");
    p.send("hello\r");
    p.expect("beta answers", T);
    assert_eq!(mock.chat_requests()[0].json()["model"], "beta");

    // https: the TLS question, then a server that cannot be reached: the model is typed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    p.send("/connect\r");
    p.expect_screen("the name prompt", T, |s| s.contains("provider name"));
    p.send("selfsigned\r");
    p.expect_screen("the URL prompt", T, |s| s.contains("base URL"));
    p.send(&format!("https://127.0.0.1:{port}/v1\r"));
    p.expect_screen("the key prompt", T, |s| s.contains("API key"));
    p.send("\r");
    p.expect("Skip TLS certificate checks", T);
    p.send("maybe\r");
    p.expect("answer y or n", T);
    p.send("y\r");
    p.expect("could not list the models", T);
    p.expect("model name: ", T);
    p.send("typed-model\r");
    p.expect("provider: selfsigned (typed-model)", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);

    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.path().join("config/hrns/config.json")).unwrap(),
    )
    .unwrap();
    let providers = &config["providers"];
    assert_eq!(providers["listed"]["model"], "beta");
    assert_eq!(providers["listed"]["skipVerify"], false);
    assert_eq!(providers["selfsigned"]["model"], "typed-model");
    assert_eq!(providers["selfsigned"]["skipVerify"], true);
    assert_eq!(config["currentProvider"], "selfsigned");
}

/// The session files saved under `root`'s state directory.
fn saved_sessions(root: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(root.join("state/hrns/sessions"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_failed_first_message_is_not_saved_and_sessions_shows_local_times() {
    let root = dirs();
    let mock = MockProvider::start([
        Reply::error(401, "bad key"),
        Reply::text_answer("now it works"),
    ])
    .unwrap();
    let mut env = env_of(root.path(), Some(&mock));
    // Three hours east of UTC, without DST, whatever the machine's zone.
    env.push(("TZ", "XYZ-3".to_owned()));
    let work = root.path().join("work");

    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 40, 120);
    p.expect("mock-model", T);
    p.send("hello\r");
    p.expect("bad key", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert!(
        !p.output().contains("hrns --continue"),
        "nothing to continue: {}",
        p.output()
    );
    assert_eq!(
        saved_sessions(root.path()),
        Vec::<std::path::PathBuf>::new()
    );

    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 40, 120);
    p.expect("mock-model", T);
    p.send("hello again\r");
    p.expect("now it works", T);
    let saved = saved_sessions(root.path());
    assert_eq!(saved.len(), 1, "{saved:?}");
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&saved[0])
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let started: jiff::Timestamp = header["started"].as_str().unwrap().parse().unwrap();
    let local = started
        .to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(3)))
        .strftime("%Y-%m-%d %H:%M")
        .to_string();
    p.send("/sessions\r");
    p.expect(
        &format!("{}  {local}  2 messages", header["id"].as_str().unwrap()),
        T,
    );
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    p.expect("hrns --continue", T);
}

#[test]
fn a_retry_after_past_the_budget_names_the_key_that_raises_it() {
    let root = dirs();
    let mock =
        MockProvider::start([Reply::rate_limited("3600"), Reply::text_answer("never")]).unwrap();
    let env = env_of(root.path(), Some(&mock));
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 40, 200);
    p.expect("mock-model", T);
    p.send("hello\r");
    p.expect("more than the retry budget of 300 s", T);
    p.expect("raise `retryMaxWait` in config.json", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
}
