//! Tool round trips with 10 KB, 1 MB and 10 MB of history, against a plain client sending the
//! same request bodies.

use super::*;

/// Tool calls per turn in `round_trips`.
pub(crate) const CALLS: usize = 100;

/// The mock provider of `round_trips`, in a child process (so that its work is not counted
/// as the client's): request n of every `CALLS + 1` asks for one `instant` call with
/// arguments that differ each time, the last one answers in text. Serves until stdin closes.
pub(crate) fn tool_mock_child() {
    let n = std::sync::atomic::AtomicUsize::new(0);
    let mock = MockProvider::start_with(move |_| {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % (CALLS + 1);
        Some(if i == CALLS {
            Reply::text_answer("done")
        } else {
            Reply::tool_calls(&[(&format!("call_{i}"), "instant", &format!("{{\"n\":{i}}}"))])
        })
    })
    .unwrap();
    mock.set_recording(false);
    println!("{}", mock.base_url());
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// A tool that answers at once.
pub(crate) struct InstantTool;

impl hrns_blocking::Tool for InstantTool {
    fn spec(&self) -> hrns_core::tool::ToolSpec {
        hrns_core::tool::ToolSpec {
            name: "instant".into(),
            description: "Answers at once.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            effect: hrns_core::tool::Effect::ReadOnly,
        }
    }

    fn run(&self, arguments: &str, _: &hrns_blocking::ToolContext) -> hrns_core::tool::ToolOutput {
        hrns_core::tool::ToolOutput::ok(format!("result of {arguments}"))
    }
}

/// A transport that keeps a copy of each request body it sends when `keep` says so (the
/// warm-up; in timed runs the copy would be counted as hrns's work).
pub(crate) struct Keeping {
    client: hrns_blocking::Client,
    keep: bool,
    bodies: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl hrns_blocking::Transport for Keeping {
    fn send(
        &self,
        req: &hrns_core::http::HttpRequest,
    ) -> Result<hrns_blocking::HttpResponse, hrns_core::session::TransportError> {
        if self.keep {
            self.bodies.lock().unwrap().push(req.body.clone());
        }
        self.client.send(req)
    }
}

/// A saved conversation of about `bytes` bytes: user and assistant messages of 4 KB with
/// the quotes, backslashes and newlines that JSON must escape.
pub(crate) fn history(bytes: usize) -> Vec<Message> {
    let piece = "Some \"quoted\" text, a path C:\\dir\\file and a line end.\n";
    let text = piece.repeat(4096 / piece.len());
    (0..bytes.div_ceil(text.len()).max(2).next_multiple_of(2))
        .map(|i| {
            if i % 2 == 0 {
                Message::user(text.clone())
            } else {
                Message::assistant(text.clone())
            }
        })
        .collect()
}

/// This process's CPU time so far (user + system).
pub(crate) fn cpu_time() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let u = getrusage(UsageWho::RUSAGE_SELF).unwrap();
    let d = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
    };
    d(u.user_time()) + d(u.system_time())
}

/// Wall and CPU time of `f`.
pub(crate) fn timed(f: impl FnOnce()) -> (Duration, Duration) {
    let (t, c) = (Instant::now(), cpu_time());
    f();
    (t.elapsed(), cpu_time() - c)
}

/// A turn of `CALLS` instant tool calls on the blocking runner, with 10 KB, 1 MB and 10 MB
/// of history, against a plain ureq client that sends the same request bodies (recorded
/// from hrns in the warm-up) and reads the same answers: the difference is hrns's own time.
pub(crate) fn round_trips() {
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
    let turn = |history: &[Message], keep: bool| -> Vec<Vec<u8>> {
        let transport = Arc::new(Keeping {
            client: hrns_blocking::Client::new(Provider::new(&url, None), &Default::default()),
            keep,
            bodies: Default::default(),
        });
        let ctx = hrns_blocking::ToolContext::new(std::env::temp_dir()).unwrap();
        let mut runner = hrns_blocking::Runner::new(Arc::clone(&transport) as _, &tools, ctx);
        let mut config = session_config(&url);
        config.tools = tools.specs();
        config.max_steps = CALLS as u32 + 1;
        let mut session = Session::with_history(config, history.to_vec()).unwrap();
        let outcome = runner.run(&mut session, "go", |_| {}).unwrap();
        assert_eq!(outcome, hrns_blocking::TurnOutcome::Finished, "{outcome:?}");
        drop(runner);
        std::mem::take(&mut *transport.bodies.lock().unwrap())
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let plain = |bodies: &[Vec<u8>]| {
        for body in bodies {
            let resp = agent
                .post(&format!("{url}/chat/completions"))
                .header("content-type", "application/json")
                .send(&body[..])
                .unwrap();
            std::io::copy(&mut resp.into_body().into_reader(), &mut std::io::sink()).unwrap();
        }
    };
    println!(
        "\n## A turn of {CALLS} instant tool calls (mock in a child process; median of {RUNS}, range)\n"
    );
    println!(
        "| history | requests | hrns turn wall | plain client wall | hrns turn CPU | plain client CPU | hrns's own per round trip: wall | CPU |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, bytes) in [
        ("10 KB", 10_000),
        ("1 MB", 1_000_000),
        ("10 MB", 10_000_000),
    ] {
        let history = history(bytes);
        let bodies = turn(&history, true);
        assert_eq!(bodies.len(), CALLS + 1);
        plain(&bodies); // warm-up
        let (mut hw, mut hc, mut pw, mut pc) = (vec![], vec![], vec![], vec![]);
        for _ in 0..RUNS {
            // The history is copied outside the timed part, as a caller would own it.
            let h = history.clone();
            let (w, c) = timed(|| {
                turn(&h, false);
            });
            hw.push(w);
            hc.push(c);
            let (w, c) = timed(|| plain(&bodies));
            pw.push(w);
            pc.push(c);
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let show = |v: &[Duration]| {
            let mut v = v.to_vec();
            v.sort();
            format!(
                "{:.1} ms ({:.1}–{:.1})",
                ms(v[v.len() / 2]),
                ms(v[0]),
                ms(v[v.len() - 1])
            )
        };
        let own = |h: &[Duration], p: &[Duration]| {
            let mut d: Vec<f64> = h.iter().zip(p).map(|(h, p)| ms(*h) - ms(*p)).collect();
            d.sort_by(f64::total_cmp);
            let per = |x: f64| x / CALLS as f64;
            format!(
                "{:.3} ms ({:.3}–{:.3})",
                per(d[d.len() / 2]),
                per(d[0]),
                per(d[d.len() - 1])
            )
        };
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            bodies.len(),
            show(&hw),
            show(&pw),
            show(&hc),
            show(&pc),
            own(&hw, &pw),
            own(&hc, &pc)
        );
    }
    drop(server.stdin.take());
    let _ = server.wait();
}
