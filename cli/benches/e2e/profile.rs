//! Child modes for profiling one path at a time (`perf record`, `valgrind --tool=callgrind`),
//! each in its own process so that a profile holds nothing else:
//!
//! - `serve-child MB`: the mock provider streaming the `content` body of `MB` MB; prints its
//!   base URL, serves until stdin closes;
//! - `turn-child URL PATH N`: `N` streams from `URL` by `PATH`: `client` (hrns-blocking's
//!   `Client::stream_chat`), `blocking` (its `Runner` + `Session`), `tokio` and `tokio2`
//!   (hrns-tokio's `Runner` + `Session` on a current-thread and a 2-worker runtime),
//!   `tokio-client` (hrns-tokio's `Client::stream_chat` on a current-thread runtime);
//! - `core-child MB PATH`: no IO at all: the generated body fed in 64 KiB pieces to an
//!   `AnswerReader` (`PATH` `answer`) or a `Session` (`session`), every event drained; the
//!   difference is the session's own cost per delta, deterministic under callgrind.

use super::*;
use hrns_core::answer::AnswerReader;
use hrns_core::session::Action;

pub(crate) fn serve_child(mb: &str) {
    let mb: usize = mb.parse().unwrap();
    let stream = streams::generate(streams::Variant::Content, mb * 1_000_000);
    let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
    mock.set_recording(false);
    println!("{}", mock.base_url());
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

pub(crate) fn turn_child(url: &str, path: &str, n: &str) {
    let n: usize = n.parse().unwrap();
    let rt = || match path {
        "tokio2" => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    };
    let rt = rt();
    for _ in 0..n {
        match path {
            "client" => {
                std::hint::black_box(blocking_client(url));
            }
            "blocking" => blocking_session(url),
            "tokio" | "tokio2" => tokio_session(&rt, url),
            "tokio-client" => {
                std::hint::black_box(tokio_client(&rt, url));
            }
            other => panic!("unknown path {other}"),
        }
    }
}

pub(crate) fn core_child(mb: &str, path: &str) {
    let mb: usize = mb.parse().unwrap();
    let stream = streams::generate(streams::Variant::Content, mb * 1_000_000);
    let headers = [("content-type", &b"text/event-stream"[..])];
    let mut deltas = 0usize;
    match path {
        "answer" => {
            let mut answer = AnswerReader::new(16 << 20);
            answer.handle_head(200, headers);
            for piece in stream.body.chunks(64 * 1024) {
                answer.handle_data(piece);
                while let Some(ev) = answer.poll_event() {
                    deltas += 1;
                    drop(std::hint::black_box(ev));
                }
            }
            answer.handle_end();
            while let Some(ev) = answer.poll_event() {
                deltas += 1;
                drop(std::hint::black_box(ev));
            }
            assert!(answer.finish().is_ok());
        }
        "session" => {
            let mut session = Session::new(session_config("http://127.0.0.1:1/v1"));
            session.submit("go").unwrap();
            // As the runners take them: everything at once, into lists kept between reads.
            let (mut events, mut actions) = (Vec::new(), Vec::new());
            let mut drain = |session: &mut Session, deltas: &mut usize, req: &mut Option<_>| {
                session.poll_into(&mut events, &mut actions);
                for action in actions.drain(..) {
                    match action {
                        Action::SendRequest(r) => *req = Some(r.id),
                        other => panic!("{other:?}"),
                    }
                }
                *deltas += events.len();
                events.clear();
            };
            let mut sent = None;
            drain(&mut session, &mut deltas, &mut sent);
            let req = sent.unwrap();
            let now = Instant::now();
            session
                .handle_response_head(now, req, 200, headers)
                .unwrap();
            for piece in stream.body.chunks(64 * 1024) {
                session.handle_response_data(now, req, piece).unwrap();
                drain(&mut session, &mut deltas, &mut sent);
            }
            session.handle_response_end(now, req).unwrap();
            drain(&mut session, &mut deltas, &mut sent);
            assert!(session.is_idle());
        }
        other => panic!("unknown path {other}"),
    }
    eprintln!("{deltas} events");
}
