//! The cost of hooks per tool call (issue 36, item 3): a turn of `CALLS` instant tool calls
//! on the blocking runner (`exec`'s) with no hooks, with a no-op command hook (`true`) on
//! both `PreToolUse` and `PostToolUse`, and with hooks configured whose matcher never
//! matches; beside it, the cost of starting `true` itself. Interleaved runs, medians.

use super::*;

/// A session's hooks from Claude Code's `hooks` setting.
fn session_hooks(setting: serde_json::Value) -> hrns_core::hooks::SessionHooks {
    let (hooks, errors) = hrns_core::hooks::Hooks::parse(
        &setting,
        &hrns_core::hooks::HookSource::User("config.json".into()),
    );
    assert!(errors.is_empty(), "{errors:?}");
    hrns_core::hooks::SessionHooks {
        hooks: Arc::new(hooks),
        context: hrns_core::hooks::HookContext {
            session_id: "bench".into(),
            transcript_path: String::new(),
            cwd: std::env::temp_dir().display().to_string(),
        },
        ..Default::default()
    }
}

fn pre_and_post(matcher: &str, command: &str) -> serde_json::Value {
    let entry = serde_json::json!([{"matcher": matcher,
        "hooks": [{"type": "command", "command": command}]}]);
    serde_json::json!({"PreToolUse": entry, "PostToolUse": entry})
}

pub(crate) fn hooks_overhead() {
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
    let counted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let turn = |hooks: &hrns_core::hooks::SessionHooks| {
        let client = hrns_blocking::Client::new(Provider::new(&url, None), &Default::default());
        let ctx = hrns_blocking::ToolContext::new(std::env::temp_dir()).unwrap();
        let mut runner = hrns_blocking::Runner::new(Arc::new(client), &tools, ctx);
        let mut config = session_config(&url);
        config.tools = tools.specs();
        config.max_steps = CALLS as u32 + 1;
        config.hooks = hooks.clone();
        let mut session = Session::new(config);
        let counted = Arc::clone(&counted);
        let outcome = runner
            .run(&mut session, "go", move |e| {
                if let hrns_core::session::Event::Hook { outcome, .. } = e {
                    assert_eq!(*outcome, hrns_core::hooks::HookOutcome::Success, "{e:?}");
                    counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            })
            .unwrap();
        assert_eq!(outcome, hrns_blocking::TurnOutcome::Finished, "{outcome:?}");
    };
    let none = hrns_core::hooks::SessionHooks::default();
    let no_op = session_hooks(pre_and_post("", "true"));
    let unmatched = session_hooks(pre_and_post("never_a_tool", "true"));
    // What the hooks' own run costs: `true` started and waited for, as many times as the
    // turn runs hooks (one before and one after each call), with and without a shell.
    let alone = |program: &[&str]| {
        for _ in 0..2 * CALLS {
            let status = std::process::Command::new(program[0])
                .args(&program[1..])
                .stdin(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        }
    };
    // Warm-up, and a check that the no-op hooks run twice per call.
    turn(&none);
    counted.store(0, std::sync::atomic::Ordering::Relaxed);
    turn(&no_op);
    assert_eq!(
        counted.load(std::sync::atomic::Ordering::Relaxed),
        2 * CALLS
    );
    turn(&unmatched);
    alone(&["true"]);
    let runs: usize = std::env::var("HRNS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS);
    let names = [
        "no hooks",
        "hooks that never match",
        "no-op hooks (`true`) on PreToolUse and PostToolUse",
        "`true` alone, 2 per call",
        "`sh -c true` alone, 2 per call",
    ];
    let mut wall: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for _ in 0..runs {
        for (i, w) in wall.iter_mut().enumerate() {
            let (t, c) = timed(|| match i {
                0 => turn(&none),
                1 => turn(&unmatched),
                2 => turn(&no_op),
                3 => alone(&["true"]),
                _ => alone(&["sh", "-c", "true"]),
            });
            w.push(t);
            cpu[i].push(c);
        }
    }
    let per_call = |d: Duration| d.as_secs_f64() * 1e3 / CALLS as f64;
    let show = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        format!(
            "{:.3} ms ({:.3}–{:.3})",
            per_call(v[v.len() / 2]),
            per_call(v[0]),
            per_call(v[v.len() - 1])
        )
    };
    println!(
        "\n## Hooks: a turn of {CALLS} instant tool calls (blocking runner, mock in a child process; per call, median of {runs} interleaved runs, range)\n"
    );
    println!("| what | wall per call | CPU per call (this process) |");
    println!("|---|---|---|");
    for (i, name) in names.iter().enumerate() {
        println!("| {name} | {} | {} |", show(&wall[i]), show(&cpu[i]));
    }
    // The overhead: per run, the no-op turn less the no-hooks turn less `true`'s own cost.
    let mut overhead: Vec<f64> = (0..runs)
        .map(|r| per_call(wall[2][r]) - per_call(wall[0][r]) - per_call(wall[3][r]))
        .collect();
    overhead.sort_by(f64::total_cmp);
    let mut unmatched_cost: Vec<f64> = (0..runs)
        .map(|r| per_call(wall[1][r]) - per_call(wall[0][r]))
        .collect();
    unmatched_cost.sort_by(f64::total_cmp);
    println!(
        "\nhrns's own cost of the two no-op hooks per call (no-op turn − no-hooks turn − `true` alone): {:.3} ms (range {:.3}–{:.3}; target ≤ 5 ms)",
        overhead[runs / 2],
        overhead[0],
        overhead[runs - 1]
    );
    println!(
        "hooks configured that never match, per call (against no hooks): {:.3} ms (range {:.3}–{:.3})",
        unmatched_cost[runs / 2],
        unmatched_cost[0],
        unmatched_cost[runs - 1]
    );
    drop(server.stdin.take());
    let _ = server.wait();
}
