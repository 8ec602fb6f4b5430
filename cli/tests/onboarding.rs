//! First-run onboarding in a real pseudo-terminal: the answers are saved (mode 0600) and the
//! run goes on with the new provider; the key is never echoed.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

const KEY: &str = "sk-onboard-HIDDEN-9";

#[test]
fn onboarding_asks_saves_and_continues() {
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let mock = MockProvider::start([Reply::text_answer("Welcome aboard.")])
        .unwrap()
        .with_models(["tiny", "large"]);
    let env = vec![
        ("HOME", root.path().join("home").display().to_string()),
        (
            "XDG_CONFIG_HOME",
            root.path().join("config").display().to_string(),
        ),
        (
            "XDG_STATE_HOME",
            root.path().join("state").display().to_string(),
        ),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("NO_COLOR", "1".to_owned()),
    ];
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["exec", "hello"],
        &root.path().join("work"),
        &env,
        30,
        100,
    );
    let t = Duration::from_secs(15);
    p.expect("Name for this provider", t);
    p.send("mock\r");
    p.expect("Base URL", t);
    p.send(&format!("{}\r", mock.base_url()));
    p.expect("API key", t);
    p.send(&format!("{KEY}\r"));
    p.expect("2. large", t);
    p.send("2\r");
    p.expect("Welcome aboard.", t);
    assert_eq!(p.wait(t), 0);
    assert!(
        !p.output().contains(KEY),
        "the key was echoed:\n{}",
        p.output()
    );

    let path = root.path().join("config/hrns/config.json");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved["currentProvider"], "mock");
    assert_eq!(saved["providers"]["mock"]["url"], mock.base_url());
    assert_eq!(saved["providers"]["mock"]["model"], "large");
    assert_eq!(saved["providers"]["mock"]["key"], KEY);
    let chat = mock
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .unwrap();
    assert_eq!(chat.json()["model"], "large");
    assert_eq!(
        chat.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}
