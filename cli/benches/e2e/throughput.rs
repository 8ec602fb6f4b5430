//! Streaming throughput over loopback: the lines-only baseline, each driver's client and
//! each driver's whole session turn on one generated body.

use super::*;

pub(crate) fn request() -> ChatRequest {
    serde_json::from_value(
        serde_json::json!({"model": "m", "messages": [Message::user("go")], "stream": true}),
    )
    .unwrap()
}

pub(crate) fn baseline(url: &str) -> u64 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let resp = agent
        .post(&format!("{url}/chat/completions"))
        .send(&br#"{"model":"m","messages":[]}"#[..])
        .unwrap();
    let mut reader = BufReader::with_capacity(64 * 1024, resp.into_body().into_reader());
    let mut lines = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).unwrap() == 0 {
            break;
        }
        lines += 1;
    }
    lines
}

pub(crate) fn blocking_client(url: &str) -> usize {
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let mut events = client.stream_chat(&request()).unwrap();
    let n = events.by_ref().count();
    events.finish().unwrap();
    n
}

pub(crate) fn session_config(url: &str) -> SessionConfig {
    let mut c = SessionConfig::new(Provider::new(url, None), "m");
    c.approval = ApprovalPolicy::Auto;
    c
}

pub(crate) fn blocking_session(url: &str) {
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let tools = hrns_blocking::Toolbox::new();
    let ctx = hrns_blocking::ToolContext::new(std::env::temp_dir()).unwrap();
    let mut runner = hrns_blocking::Runner::new(Arc::new(client), &tools, ctx);
    let mut session = Session::new(session_config(url));
    let outcome = runner.run(&mut session, "go", |_| {}).unwrap();
    assert_eq!(outcome, hrns_blocking::TurnOutcome::Finished, "{outcome:?}");
}

pub(crate) fn tokio_client(rt: &tokio::runtime::Runtime, url: &str) -> usize {
    rt.block_on(async {
        let client = hrns_tokio::Client::new(Provider::new(url, None), &Default::default());
        let mut events = client.stream_chat(&request()).await.unwrap();
        let mut n = 0;
        while let Some(ev) = events.next().await {
            ev.unwrap();
            n += 1;
        }
        events.finish().await.unwrap();
        n
    })
}

pub(crate) fn tokio_session(rt: &tokio::runtime::Runtime, url: &str) {
    rt.block_on(async {
        let client = hrns_tokio::Client::new(Provider::new(url, None), &Default::default());
        let ctx = hrns_tokio::ToolContext::new(std::env::temp_dir()).unwrap();
        let mut runner = hrns_tokio::Runner::new(client, hrns_tokio::Toolbox::new(), ctx);
        let mut session = Session::new(session_config(url));
        let outcome = runner.run(&mut session, "go", |_| {}).await.unwrap();
        assert_eq!(
            outcome,
            hrns_core::session::TurnOutcome::Finished,
            "{outcome:?}"
        );
    });
}

pub(crate) fn throughput(mb: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The runtime the TUI runs on: hyper's connection task reads the socket on a worker while
    // the caller decodes, as the blocking client's read-ahead thread does.
    let workers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("\n## Streaming over loopback, {mb} MB body (median of {RUNS})\n");
    println!("| variant | path | time | MB/s | events/s | vs baseline |");
    println!("|---|---|---|---|---|---|");
    for variant in [streams::Variant::Content, streams::Variant::Mix] {
        let stream = streams::generate(variant, mb * 1_000_000);
        let bytes = stream.body.len() as f64;
        let events = stream.events as f64;
        let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
        mock.set_recording(false);
        let url = mock.base_url();
        let base = time(RUNS, || {
            baseline(&url);
        });
        let mut rows: Vec<(&str, Duration)> = vec![("lines only (ureq, no JSON)", base)];
        rows.push((
            "hrns-blocking Client::stream_chat",
            time(RUNS, || {
                std::hint::black_box(blocking_client(&url));
            }),
        ));
        rows.push((
            "hrns-tokio Client::stream_chat",
            time(RUNS, || {
                std::hint::black_box(tokio_client(&rt, &url));
            }),
        ));
        rows.push((
            "hrns-tokio Client::stream_chat, 2 workers",
            time(RUNS, || {
                std::hint::black_box(tokio_client(&workers, &url));
            }),
        ));
        // A whole turn needs an answer without tool calls (the mix calls one).
        if variant == streams::Variant::Content {
            rows.push((
                "hrns-blocking Runner + Session",
                time(RUNS, || blocking_session(&url)),
            ));
            rows.push((
                "hrns-tokio Runner + Session",
                time(RUNS, || tokio_session(&rt, &url)),
            ));
            rows.push((
                "hrns-tokio Runner + Session, 2 workers",
                time(RUNS, || tokio_session(&workers, &url)),
            ));
        }
        for (name, t) in rows {
            let s = t.as_secs_f64();
            println!(
                "| {} | {name} | {:.1} ms | {:.0} | {:.0} | {:.0} % |",
                variant.name(),
                s * 1e3,
                bytes / s / 1e6,
                events / s,
                100.0 * base.as_secs_f64() / s
            );
        }
    }
}
