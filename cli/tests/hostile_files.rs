//! A hostile repository cannot hang or exhaust `hrns exec`: `.mcp.json`, `AGENTS.md`,
//! `.gitignore` and `.ignore` as links to `/dev/zero` or as FIFOs are skipped with a warning
//! naming them, and `grep` on `/proc` is refused. Each run is the real binary against the
//! mock provider, waited for with a generous outer limit (a hang fails the test instead of
//! blocking the suite), its memory sampled from /proc.

mod common;

use common::{Env, stderr};
use hrns_blocking::mock::{MockProvider, Reply};
use std::path::Path;
use std::process::{Child, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// How hostile files are made.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    /// A symbolic link to `/dev/zero`: endless bytes.
    LinkToDevZero,
    /// A FIFO nobody writes to: opening it for reading blocks.
    Fifo,
}

impl Hostile {
    fn make(self, path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        match self {
            Hostile::LinkToDevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
            Hostile::Fifo => rustix::fs::mkfifoat(
                rustix::fs::CWD,
                path,
                rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            )
            .unwrap(),
        }
    }

    /// What the warning says the file is.
    fn word(self) -> &'static str {
        match self {
            Hostile::LinkToDevZero => "character device",
            Hostile::Fifo => "FIFO",
        }
    }
}

/// The peak resident set of `pid` in KiB (VmHWM, else VmRSS), `None` once it is gone.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    ["VmHWM:", "VmRSS:"].iter().find_map(|key| {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    })
}

/// Waits for `child`, sampling its memory; kills it and fails when it has not finished after
/// a generous limit (the fixes make it finish at once; without them it hangs or grows).
fn wait_bounded(mut child: Child) -> (ExitStatus, Output, u64) {
    let limit = Duration::from_secs(90);
    let started = Instant::now();
    let mut peak = 0;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (status, out, peak);
        }
        peak = peak.max(peak_kib(child.id()).unwrap_or(0));
        assert!(
            peak < 512 * 1024,
            "hrns grew to {peak} KiB reading a hostile file"
        );
        if started.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "hrns did not finish within {limit:?} (blocked on a hostile file?): {}",
                stderr(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn exec(env: &Env, mock: &MockProvider, args: &[&str]) -> (ExitStatus, Output, u64) {
    let child = env
        .cmd(Some(mock))
        .arg("exec")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_bounded(child)
}

#[test]
fn a_hostile_mcp_json_is_skipped_with_a_warning() {
    for hostile in [Hostile::LinkToDevZero, Hostile::Fifo] {
        let env = Env::new();
        hostile.make(&env.work().join(".mcp.json"));
        let mock = MockProvider::start([Reply::text_answer("done")]).unwrap();
        let (status, out, peak) = exec(&env, &mock, &["hello"]);
        let err = stderr(&out);
        assert!(status.success(), "{hostile:?}: {err}");
        assert!(
            err.contains(".mcp.json") && err.contains(hostile.word()),
            "{hostile:?}: the warning names the file and why: {err}"
        );
        assert_eq!(
            err.matches(".mcp.json").count(),
            1,
            "{hostile:?}: one warning: {err}"
        );
        assert_eq!(
            mock.chat_requests().len(),
            1,
            "{hostile:?}: the run went on"
        );
        assert!(peak < 512 * 1024, "{hostile:?}: {peak} KiB");
    }
}

#[test]
fn a_hostile_agents_md_is_reported_not_silently_skipped() {
    for hostile in [Hostile::LinkToDevZero, Hostile::Fifo] {
        let env = Env::repo();
        hostile.make(&env.work().join("AGENTS.md"));
        let mock = MockProvider::start([Reply::text_answer("done")]).unwrap();
        let (status, out, _) = exec(&env, &mock, &["hello"]);
        let err = stderr(&out);
        assert!(status.success(), "{hostile:?}: {err}");
        assert!(
            err.contains("AGENTS.md") && err.contains(hostile.word()),
            "{hostile:?}: the warning names the file and why: {err}"
        );
        assert_eq!(
            mock.chat_requests().len(),
            1,
            "{hostile:?}: the run went on"
        );
    }
}

#[test]
fn hostile_ignore_files_do_not_hang_or_exhaust_list_files_and_grep() {
    for name in [".gitignore", ".ignore"] {
        for hostile in [Hostile::LinkToDevZero, Hostile::Fifo] {
            let env = Env::new();
            env.write("work/src/a.txt", "needle\n");
            hostile.make(&env.work().join("src").join(name));
            hostile.make(&env.work().join(name));
            let mock = MockProvider::start([
                Reply::tool_calls(&[
                    ("c1", "list_files", "{}"),
                    ("c2", "grep", r#"{"pattern":"needle"}"#),
                ]),
                Reply::text_answer("done"),
            ])
            .unwrap();
            let (status, out, _) = exec(&env, &mock, &["--approval", "read-only", "look around"]);
            let err = stderr(&out);
            assert!(status.success(), "{name} {hostile:?}: {err}");
            let second = mock.chat_requests()[1].json();
            let results: Vec<String> = second["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(results.len(), 2, "{name} {hostile:?}: {second}");
            for result in &results {
                assert!(
                    result.contains(&format!("ignore file src/{name} not read"))
                        && result.contains(&format!("ignore file {name} not read"))
                        && result.contains(hostile.word()),
                    "{name} {hostile:?}: the model is told which file and why: {result}"
                );
            }
            assert!(results[0].contains("src/a.txt"), "{}", results[0]);
            if let Hostile::Fifo = hostile {
                assert!(
                    !results[0]
                        .lines()
                        .any(|l| l == name || l.ends_with(&format!("/{name}"))),
                    "special files are not listed: {}",
                    results[0]
                );
            }
            assert!(results[1].contains("src/a.txt:1: needle"), "{}", results[1]);
        }
    }
}

#[test]
fn grep_on_proc_finishes_with_a_refusal() {
    let env = Env::new();
    std::os::unix::fs::symlink("/proc", env.work().join("kernel")).unwrap();
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("c1", "grep", r#"{"pattern":"x","path":"/proc"}"#),
            ("c2", "grep", r#"{"pattern":"x","path":"kernel"}"#),
            ("c3", "list_files", r#"{"dir":"/proc/self"}"#),
        ]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let (status, out, _) = exec(&env, &mock, &["--approval", "read-only", "search"]);
    let err = stderr(&out);
    assert!(status.success(), "{err}");
    let second = mock.chat_requests()[1].json();
    let results: Vec<&serde_json::Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 3, "{second}");
    for result in results {
        let text = result["content"].as_str().unwrap();
        assert!(
            text.contains("/proc, /sys and /dev hold kernel objects"),
            "{text}"
        );
    }
}
