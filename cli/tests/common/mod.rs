//! A sandbox for running the built `hrns` binary: its own HOME, XDG dirs and working directory.
#![allow(dead_code, unreachable_pub)]

use hrns_blocking::mock::MockProvider;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub const KEY: &str = "sk-parity-NEVERSHOWN-4242";

pub struct Env {
    pub root: tempfile::TempDir,
    /// The root's canonical path, which the paths `hrns` prints and records start with.
    base: PathBuf,
}

impl Env {
    pub fn new() -> Self {
        Env::in_root(tempfile::tempdir().unwrap())
    }

    /// An environment outside the system temporary directory (which the command sandbox lets
    /// commands write): in `/var/tmp`, else in cargo's target directory.
    pub fn outside_tmp() -> Self {
        let root = tempfile::tempdir_in("/var/tmp")
            .or_else(|_| tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")))
            .unwrap();
        assert!(
            !root.path().starts_with("/tmp"),
            "the sandbox tests need a directory outside /tmp"
        );
        Env::in_root(root)
    }

    /// An environment whose working directory is a git repository (an empty `.git`), where
    /// `hrns` finds a project root.
    pub fn repo() -> Self {
        Env::with_dirs(&["work/.git"])
    }

    /// An environment with the directories `dirs` (relative to the root) made as well.
    pub fn with_dirs(dirs: &[&str]) -> Self {
        let env = Env::new();
        for d in dirs {
            std::fs::create_dir_all(env.path(d)).unwrap();
        }
        env
    }

    fn in_root(root: tempfile::TempDir) -> Self {
        for d in ["home", "config", "state", "work"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        let base = root.path().canonicalize().unwrap();
        Env { root, base }
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.base.join(p)
    }

    pub fn work(&self) -> PathBuf {
        self.path("work")
    }

    pub fn config_file(&self) -> PathBuf {
        self.path("config/hrns/config.json")
    }

    pub fn write(&self, p: &str, text: &str) -> PathBuf {
        self.write_bytes(p, text.as_bytes())
    }

    pub fn write_bytes(&self, p: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// A config with one provider `mock` at `mock`, plus `extra` top-level JSON fields.
    pub fn config_with(&self, mock: &MockProvider, extra: &str) -> PathBuf {
        let text = format!(
            r#"{{"providers": {{"mock": {{"url": "{}", "key": "{KEY}", "model": "mock-model", "skipVerify": false}}}}{extra}}}"#,
            mock.base_url()
        );
        self.write("config/hrns/config.json", &text)
    }

    /// The environment of `hrns` in a pseudo-terminal: this sandbox's HOME and XDG dirs, the
    /// caller's PATH, nothing else.
    pub fn pty_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("HOME", self.path("home").display().to_string()),
            ("XDG_CONFIG_HOME", self.path("config").display().to_string()),
            ("XDG_STATE_HOME", self.path("state").display().to_string()),
            ("PATH", std::env::var("PATH").unwrap_or_default()),
        ]
    }

    pub fn config_json(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.config_file()).unwrap()).unwrap()
    }

    /// The command with a clean environment; with `mock`, the env variables point at it.
    pub fn cmd(&self, mock: Option<&MockProvider>) -> Command {
        self.cmd_in("work", mock)
    }

    /// [`Env::cmd`] run in the directory `dir` (relative to the root) instead of `work`.
    pub fn cmd_in(&self, dir: &str, mock: Option<&MockProvider>) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hrns"));
        c.current_dir(self.path(dir))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_STATE_HOME", self.path("state"))
            .stdin(Stdio::null());
        if let Some(m) = mock {
            c.env("OPENAI_BASE_URL", m.base_url())
                .env("OPENAI_API_KEY", KEY)
                .env("HRNS_MODEL", "mock-model");
        }
        c
    }

    /// Runs `hrns args`; the lines of an `exec --json` or `replay --json` run are checked
    /// against the published event schema ([`check_event_lines`]).
    pub fn run(&self, mock: Option<&MockProvider>, args: &[&str]) -> Output {
        checked(args, self.cmd(mock).args(args).output().unwrap())
    }

    /// [`Env::run`] in the directory `dir` (relative to the root).
    pub fn run_in(&self, dir: &str, mock: Option<&MockProvider>, args: &[&str]) -> Output {
        checked(args, self.cmd_in(dir, mock).args(args).output().unwrap())
    }

    pub fn run_stdin(&self, mock: Option<&MockProvider>, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = self
            .cmd(mock)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        checked(args, child.wait_with_output().unwrap())
    }
}

/// `output` after [`check_event_lines`] when `args` ran `exec --json` or `replay --json`.
fn checked(args: &[&str], output: Output) -> Output {
    let command = args.iter().find(|a| !a.starts_with('-'));
    let json = args
        .iter()
        .take_while(|a| **a != "--")
        .any(|a| *a == "--json");
    if json && matches!(command, Some(&"exec" | &"replay")) {
        check_event_lines(&stdout(&output));
    }
    output
}

/// The schema `hrns exec --print-event-schema` publishes, compiled once per test binary.
fn event_schema() -> &'static (serde_json::Value, jsonschema::Validator) {
    static SCHEMA: std::sync::OnceLock<(serde_json::Value, jsonschema::Validator)> =
        std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let out = Command::new(env!("CARGO_BIN_EXE_hrns"))
            .args(["exec", "--print-event-schema"])
            .env_clear()
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let validator =
            jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema");
        (schema, validator)
    })
}

/// Checks every line of an `exec --json` run against the published event schema, and what the
/// schema cannot say: each field is one the schema names for its event (so an event that grew
/// a field fails here until the schema says it), `tool_result.output` is always the documented
/// object, the last line is the final event of the turn (or the one `error`), and the turn's
/// usage in `turn_finished` is the sum of its per-request `usage` events (its subagents'
/// included).
pub fn check_event_lines(stdout: &str) {
    use serde_json::Value;
    let (schema, validator) = event_schema();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    for line in &lines {
        let errors: Vec<String> = validator
            .iter_errors(line)
            .map(|e| format!("{}: {e}", e.instance_path().as_str()))
            .collect();
        assert!(
            errors.is_empty(),
            "{line}\ndoes not match the event schema: {errors:?}"
        );
        let kind = line["type"].as_str().unwrap();
        let def = &schema["$defs"][kind];
        assert!(
            def.is_object(),
            "an event type the schema does not name: {line}"
        );
        for key in line.as_object().unwrap().keys() {
            let child_tag = matches!(key.as_str(), "parent_call_id" | "agent");
            assert!(
                def["properties"].get(key).is_some() || child_tag,
                "`{kind}.{key}` is not in the event schema: {line}"
            );
        }
        if kind == "tool_result" {
            let output = line["output"].as_object().unwrap();
            let mut keys: Vec<&str> = output.keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(keys, ["content", "is_error"], "{line}");
        }
    }
    let parent: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("parent_call_id").is_none())
        .collect();
    let Some(last) = lines.last() else {
        return;
    };
    let finals = ["turn_finished", "turn_failed", "turn_cancelled"];
    let last_kind = last["type"].as_str().unwrap();
    assert!(
        last.get("parent_call_id").is_none()
            && (finals.contains(&last_kind) || (last_kind == "error" && lines.len() == 1)),
        "the last line is not the turn's final event: {last}"
    );
    let ends = parent
        .iter()
        .filter(|l| finals.contains(&l["type"].as_str().unwrap()))
        .count();
    let starts = parent
        .iter()
        .filter(|l| l["type"] == "turn_started")
        .count();
    assert_eq!(ends, starts, "one final event per turn");
    // Usage: per request in `usage`, the turn's sum in `turn_finished`.
    let mut sum = [0u64; 2];
    let mut reported = false;
    for line in &lines {
        match line["type"].as_str().unwrap() {
            "turn_started" if line.get("parent_call_id").is_none() => {
                (sum, reported) = ([0, 0], false)
            }
            "usage" => {
                reported = true;
                for (i, field) in ["prompt_tokens", "completion_tokens"].iter().enumerate() {
                    sum[i] += line["usage"][field].as_u64().unwrap_or(0);
                }
            }
            "turn_finished" if line.get("parent_call_id").is_none() => {
                let usage = &line["usage"];
                if !reported {
                    assert!(usage.is_null(), "usage without any usage event: {line}");
                    continue;
                }
                for (i, field) in ["prompt_tokens", "completion_tokens"].iter().enumerate() {
                    assert_eq!(
                        usage[field].as_u64(),
                        Some(sum[i]),
                        "turn_finished.usage.{field} is not the sum of the turn's usage events:\n{stdout}"
                    );
                }
            }
            _ => {}
        }
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A child's output read line by line on a thread of its own, so that a test can wait for an
/// observable moment (a line printed) before it acts, and still get the whole output at the end.
pub struct Lines {
    rx: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
    reader: std::thread::JoinHandle<()>,
}

impl Lines {
    /// Starts reading `from` (a child's piped stdout or stderr).
    pub fn read(from: impl std::io::Read + Send + 'static) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(from).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
            reader,
        }
    }

    /// Waits until a line `ready` says yes to was printed; panics with the lines so far when
    /// none came within `timeout` or the output ended first.
    pub fn wait_for(
        &mut self,
        what: &str,
        timeout: std::time::Duration,
        ready: impl Fn(&str) -> bool,
    ) {
        let deadline = std::time::Instant::now() + timeout;
        if self.seen.iter().any(|l| ready(l)) {
            return;
        }
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    let found = ready(&line);
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(e) => panic!(
                    "no {what} ({e:?}); the output so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// All the output, once it ended (the child exited or closed it).
    pub fn finish(mut self) -> String {
        self.reader.join().unwrap();
        self.seen.extend(self.rx.try_iter());
        let mut text = self.seen.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        text
    }
}

/// The path of the Python stdio MCP server of the tests (`common/mcp_server.py`; its tools
/// are described at its top).
pub fn mcp_test_server() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/mcp_server.py").to_owned()
}

/// [`Env::pty_vars`] with the env variables that point `hrns` at `mock` (key [`KEY`]).
pub fn pty_vars_for(env: &Env, mock: &MockProvider) -> Vec<(&'static str, String)> {
    let mut vars = env.pty_vars();
    vars.extend([
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", KEY.to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ]);
    vars
}

/// The first piece of 8 bytes or more of `secret` found in `text` (what redaction must hide),
/// or `None`.
pub fn secret_piece<'a>(text: &str, secret: &'a str) -> Option<&'a str> {
    secret
        .as_bytes()
        .windows(8)
        .map(|w| std::str::from_utf8(w).unwrap())
        .find(|w| text.contains(w))
}
