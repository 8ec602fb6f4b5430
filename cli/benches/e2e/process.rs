//! Whole processes: `hrns exec` against the library client (wall, CPU, peak RSS), start-up
//! latency, and `hrns sessions` over many saved sessions; with the child modes that measure them.

use super::*;

pub(crate) fn exec_startup() {
    let bin = hrns_bin();
    let bin = bin.as_str();
    let home = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        let mut child = std::process::Command::new(bin)
            .args(["exec", "hi"])
            .env_clear()
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("OPENAI_BASE_URL", &url)
            .env("OPENAI_API_KEY", "k")
            .env("HRNS_MODEL", "m")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (mut conn, _) = listener.accept().unwrap();
        let mut byte = [0u8; 1];
        conn.read_exact(&mut byte).unwrap();
        times.push(start.elapsed());
        let _ = conn.write_all(b"HTTP/1.1 500 x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        drop(conn);
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut sorted = times.clone();
    sorted.sort();
    println!("\n## `hrns exec` start to first request byte (20 runs)\n");
    println!(
        "median {:.1} ms, min {:.1} ms, max {:.1} ms",
        sorted[10].as_secs_f64() * 1e3,
        sorted[0].as_secs_f64() * 1e3,
        sorted[19].as_secs_f64() * 1e3
    );
}

pub(crate) fn sessions_listing() -> Duration {
    let bin = hrns_bin();
    let bin = bin.as_str();
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("hrns/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..1000 {
        let mut text = format!(
            "{{\"hrns_session\":1,\"id\":\"{i:06x}\",\"started\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/w\",\"provider\":\"p\",\"model\":\"m\",\"agent\":\"Builder\"}}\n"
        );
        for t in 0..10 {
            text.push_str(&format!(
                "{{\"event\":{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"question {t} of session {i}\"}}}}}}\n{{\"event\":{{\"type\":\"message\",\"message\":{{\"role\":\"assistant\",\"content\":\"{}\"}}}}}}\n",
                "answer text ".repeat(40)
            ));
        }
        std::fs::write(dir.join(format!("2026-01-01T00-00-00_{i:06x}.jsonl")), text).unwrap();
    }
    let t = time(5, || {
        let out = std::process::Command::new(bin)
            .arg("sessions")
            .env("XDG_STATE_HOME", state.path())
            .env("HOME", state.path())
            .output()
            .unwrap();
        assert!(out.status.success());
    });
    println!("\n## `hrns sessions` over 1 000 saved sessions (median of 5)\n");
    println!("{:.1} ms", t.as_secs_f64() * 1e3);
    t
}

/// The library baseline of `exec_vs_client`: the smallest useful program around
/// `hrns-blocking`'s client, printing the answer text to stdout as it streams.
pub(crate) fn client_child(url: &str) {
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let mut events = client.stream_chat(&request()).unwrap();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for ev in events.by_ref() {
        if let hrns_core::stream::StreamEvent::ContentDelta { text, .. } = ev.unwrap() {
            out.write_all(text.as_bytes()).unwrap();
        }
    }
    out.flush().unwrap();
    events.finish().unwrap();
}

/// Runs the command `argv` as this process's only child and prints its whole-process figures:
/// wall time (ns), user and system CPU time (µs), peak RSS (KiB). Its stdout goes to the file
/// `HRNS_BENCH_STDOUT` names (made anew), or to /dev/null.
pub(crate) fn measure_child(argv: &[String]) {
    use nix::sys::resource::{UsageWho, getrusage};
    let stdout = match std::env::var_os("HRNS_BENCH_STDOUT") {
        Some(path) => std::fs::File::create(path).unwrap().into(),
        None => std::process::Stdio::null(),
    };
    let start = Instant::now();
    let status = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .status()
        .unwrap();
    let wall = start.elapsed();
    assert!(status.success(), "{argv:?}: {status}");
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
    let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
    println!(
        "{} {} {} {}",
        wall.as_nanos(),
        us(usage.user_time()),
        us(usage.system_time()),
        usage.max_rss()
    );
}

/// Whole-process figures of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProcessRun {
    pub(crate) wall: Duration,
    pub(crate) cpu: Duration,
    /// Peak resident set, in bytes.
    pub(crate) rss: u64,
}

/// One run of `args` (a program and its arguments, with `envs`) measured by a helper process
/// of which it is the only child.
pub(crate) fn measure(args: &[&str], envs: &[(&str, &str)]) -> ProcessRun {
    measure_in(&std::env::current_dir().unwrap(), args, envs)
}

/// [`measure`] with `cwd` as the working directory of the command.
pub(crate) fn measure_in(
    cwd: &std::path::Path,
    args: &[&str],
    envs: &[(&str, &str)],
) -> ProcessRun {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .current_dir(cwd)
        .arg("measure-child")
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let nums: Vec<u64> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    let [wall, user, sys, rss_kib] = nums[..] else {
        panic!(
            "measuring {args:?} failed: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ProcessRun {
        wall: Duration::from_nanos(wall),
        cpu: Duration::from_micros(user + sys),
        rss: rss_kib * 1024,
    }
}

/// `hrns exec` (text and `--json`) against the library client, whole processes streaming the
/// same `mb` MB text-only answer from the mock provider; runs interleaved so that the
/// machine's noise falls on all of them alike.
/// The figures of `hrns exec` (text) against the library client, for issue 36's summary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExecFigures {
    pub(crate) mb: usize,
    /// Medians: `hrns exec`'s wall time over the client's.
    pub(crate) wall_ratio: f64,
    /// Medians: `hrns exec`'s CPU time over the client's.
    pub(crate) cpu_ratio: f64,
    /// Medians: `hrns exec`'s peak RSS over the client's.
    pub(crate) rss_ratio: f64,
    /// Median wall time of `hrns exec`.
    pub(crate) wall: Duration,
    /// Median CPU time of `hrns exec`.
    pub(crate) cpu: Duration,
}

/// How many runs of each path [`exec_vs_client`] takes: `HRNS_BENCH_RUNS`, or 5. These runs
/// are short (~50 ms), so their median moves with the machine's noise more than longer ones.
pub(crate) fn exec_runs() -> usize {
    std::env::var("HRNS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS)
}

pub(crate) fn exec_vs_client(mb: usize) -> ExecFigures {
    let bin = hrns_bin();
    let bin = bin.as_str();
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    let stream = streams::generate(streams::Variant::Content, mb * 1_000_000);
    let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
    mock.set_recording(false);
    let url = mock.base_url();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    // As the issue measures it: stdout to a file (on the disk the home directory is on).
    let output = format!("{home}/stdout");
    let envs = [
        ("HRNS_BENCH_STDOUT", output.as_str()),
        ("HOME", home.as_str()),
        ("XDG_STATE_HOME", home.as_str()),
        ("XDG_CONFIG_HOME", home.as_str()),
        ("OPENAI_BASE_URL", url.as_str()),
        // A key of a real key's length: exec redacts it (and its fragments) from all output.
        (
            "OPENAI_API_KEY",
            "sk-bench-4f9a8c2e7b1d6053a9e8f7c6b5d4e3f2a1",
        ),
        ("HRNS_MODEL", "m"),
    ];
    let paths: [(&str, Vec<&str>); 3] = [
        (
            "library client (hrns-blocking)",
            vec![me, "client-child", &url],
        ),
        ("hrns exec", vec![bin, "exec", "go"]),
        ("hrns exec --json", vec![bin, "exec", "--json", "go"]),
    ];
    let rounds = exec_runs();
    let mut runs: Vec<Vec<ProcessRun>> = vec![Vec::new(); paths.len()];
    for round in 0..=rounds {
        for ((_, args), runs) in paths.iter().zip(&mut runs) {
            let run = measure(args, &envs);
            if round > 0 {
                runs.push(run); // round 0 warms caches up
            }
        }
    }
    println!("\n## Whole processes on a {mb} MB text-only stream (median of {rounds}, range)\n");
    println!("| path | wall | CPU | peak RSS | wall vs client | RSS vs client |");
    println!("|---|---|---|---|---|---|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let stats = |runs: &[ProcessRun]| {
        let wall = runs.iter().map(|r| r.wall).collect::<Vec<_>>();
        let cpu = runs.iter().map(|r| r.cpu).collect::<Vec<_>>();
        let mut rss = runs.iter().map(|r| r.rss).collect::<Vec<_>>();
        rss.sort_unstable();
        (wall, cpu, rss)
    };
    let (client_wall, client_cpu, client_rss) = stats(&runs[0]);
    let client_wall = median(client_wall);
    let client_cpu = median(client_cpu);
    let client_rss = client_rss[client_rss.len() / 2];
    let mut figures = None;
    for ((name, _), runs) in paths.iter().zip(&runs) {
        let (wall, cpu, rss) = stats(runs);
        let range = |v: &[Duration]| {
            let (lo, hi) = (v.iter().min().unwrap(), v.iter().max().unwrap());
            format!("{:.0}–{:.0}", ms(*lo), ms(*hi))
        };
        let (wall_range, cpu_range) = (range(&wall), range(&cpu));
        let (wall, cpu) = (median(wall), median(cpu));
        let peak = rss[rss.len() / 2];
        println!(
            "| {name} | {:.0} ms ({wall_range}) | {:.0} ms ({cpu_range}) | {:.1} MiB ({:.1}–{:.1}) | {:.2}× | {:.2}× |",
            ms(wall),
            ms(cpu),
            mib(peak),
            mib(rss[0]),
            mib(rss[rss.len() - 1]),
            wall.as_secs_f64() / client_wall.as_secs_f64(),
            peak as f64 / client_rss as f64,
        );
        if *name == "hrns exec" {
            figures = Some(ExecFigures {
                mb,
                wall_ratio: wall.as_secs_f64() / client_wall.as_secs_f64(),
                cpu_ratio: cpu.as_secs_f64() / client_cpu.as_secs_f64(),
                rss_ratio: peak as f64 / client_rss as f64,
                wall,
                cpu,
            });
        }
    }
    figures.expect("the exec row")
}
