//! Each command's `--help` lists the flags it honours and no others (issue 19, item 14), and the
//! older spelling with the flags before the command's name keeps working.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};

const PROVIDER: &[&str] = &["--provider", "--model"];
const AGENT: &[&str] = &["--agent"];
const POLICY: &[&str] = &["--approval", "--sandbox"];
const CONTEXT: &[&str] = &["--context-window"];
const CONFIG: &[&str] = &["--config"];
const UI: &[&str] = &["--continue", "--resume"];

/// Every flag that some command takes and others must not list.
const ALL: [&[&str]; 6] = [PROVIDER, AGENT, POLICY, CONTEXT, CONFIG, UI];

#[test]
fn each_help_lists_only_the_flags_its_command_honours() {
    let env = Env::new();
    let table: [(&[&str], &[&[&str]]); 15] = [
        (&[], &[PROVIDER, AGENT, POLICY, CONTEXT, CONFIG, UI]),
        (&["exec"], &[PROVIDER, AGENT, POLICY, CONTEXT, CONFIG, UI]),
        (&["replay"], &[POLICY, CONFIG]),
        (&["doctor"], &[PROVIDER, CONFIG]),
        (&["models"], &[PROVIDER, CONFIG]),
        (&["providers"], &[CONFIG]),
        (&["agents"], &[AGENT, CONFIG]),
        (&["skills"], &[]),
        (&["sessions"], &[]),
        (&["sessions", "export"], &[]),
        (&["mcp", "list"], &[CONFIG]),
        (&["mcp", "approve"], &[]),
        (&["completions"], &[]),
        (&["sandbox"], &[]),
        (&["debug", "sse"], &[]),
    ];
    for (command, honoured) in table {
        let args: Vec<&str> = command.iter().copied().chain(["--help"]).collect();
        let out = env.run(None, &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let help = stdout(&out);
        for group in ALL {
            let expected = honoured.contains(&group);
            for flag in group {
                // A flag's own line: `  --flag`, `  -x, --flag`, not a mention in prose.
                let listed = help.lines().any(|l| {
                    let l = l.trim_start();
                    l.starts_with(&format!("{flag} "))
                        || l == *flag
                        || (l.starts_with('-') && l.contains(&format!(", {flag} ")))
                        || l.ends_with(&format!(", {flag}"))
                });
                assert_eq!(
                    listed, expected,
                    "{flag} in `hrns {command:?} --help`:\n{help}"
                );
            }
        }
    }
}

#[test]
fn flags_before_the_command_name_still_apply_and_unhonoured_ones_are_refused() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("hello")]).unwrap();
    env.config_with(&mock, "");
    let out = env.run(
        None,
        &["--sandbox", "read-only", "-m", "mock-model", "exec", "x"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hello");

    let out = env.run(None, &["--sandbox", "read-only", "sessions"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--sandbox does not apply to `hrns sessions`"),
        "{err}"
    );
    let out = env.run(None, &["sessions", "--sandbox", "read-only"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // HRNS_CONFIG set in the shell is no error for a command that reads no config.
    let out = env
        .cmd(None)
        .env("HRNS_CONFIG", env.config_file())
        .arg("sessions")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
