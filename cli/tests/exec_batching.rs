//! `exec` writes the events of one read in one write: the bytes must not change, and a delta
//! must be on stdout as soon as it was read, not when the stream ends.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply, chunk};
use serde_json::Value;
use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

/// `n` tiny deltas, some with line breaks and multi-byte characters.
fn pieces(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 7 {
            0 => format!("é{i}"),
            3 => "\n".to_owned(),
            _ => format!(" {i}"),
        })
        .collect()
}

fn stream_of(pieces: &[String]) -> Reply {
    let mut events = vec![chunk::role_chunk()];
    events.extend(pieces.iter().map(|p| chunk::text_chunk(p)));
    events.push(chunk::finish_chunk("stop"));
    Reply::sse(events)
}

#[test]
fn many_small_deltas_come_out_byte_for_byte() {
    let env = Env::new();
    let pieces = pieces(3001); // ends without a line break: exec adds one
    let answer: String = pieces.concat();
    // Cut on the wire at odd places, so reads end mid-event and mid-character.
    let mock = MockProvider::start([
        stream_of(&pieces).split_every(1000),
        stream_of(&pieces).split_every(7),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "talk"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{answer}\n"));

    let out = env.run(Some(&mock), &["exec", "--json", "talk"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let deltas: Vec<String> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    // The deltas of one read come as one line: each line is whole deltas of the stream, in
    // order, and together they are all of them.
    let mut rest = &pieces[..];
    for (n, line) in deltas.iter().enumerate() {
        let mut joined = String::new();
        while joined.len() < line.len() && !rest.is_empty() {
            joined.push_str(&rest[0]);
            rest = &rest[1..];
        }
        assert_eq!(&joined, line, "line {n} is not whole deltas in order");
    }
    assert!(rest.is_empty(), "{} deltas missing", rest.len());
}

#[test]
fn a_delta_is_on_stdout_before_the_stream_ends() {
    for json in [false, true] {
        let env = Env::new();
        let first = stream_of(&["early bird".to_owned(), " late".to_owned()]);
        let body = first.body().to_vec();
        // Stall for a long time right after the first text chunk.
        let cut = body
            .windows(b"early bird".len())
            .position(|w| w == b"early bird")
            .unwrap();
        let cut = cut + body[cut..].windows(2).position(|w| w == b"\n\n").unwrap() + 2;
        let mock =
            MockProvider::start([first.split_at(&[cut]).delay(Duration::from_secs(60))]).unwrap();
        let mut cmd = env.cmd(Some(&mock));
        cmd.arg("exec");
        if json {
            cmd.arg("--json");
        }
        let mut child = cmd
            .arg("go")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&seen).contains("early bird") {
                    break;
                }
            }
            tx.send(seen).ok();
        });
        let seen = rx.recv_timeout(Duration::from_secs(30));
        child.kill().unwrap();
        child.wait().unwrap();
        let seen = String::from_utf8(seen.expect("no delta within 30 s of a 60 s stall")).unwrap();
        assert!(seen.contains("early bird"), "{seen}");
        assert!(!seen.contains("late"), "{seen}");
    }
}

/// Reasoning, text and refusal deltas of one read (exec prints deltas on a path of their own):
/// reasoning on stderr after `thinking:`, answer and refusal text on stdout in order; under
/// `--json`, one line per run of a kind from one read, the runs in their order.
#[test]
fn reasoning_text_and_refusal_deltas_of_one_read_keep_their_order() {
    let env = Env::new();
    let reply = || {
        Reply::sse(vec![
            chunk::role_chunk(),
            chunk::reasoning_chunk("pondering"),
            chunk::reasoning_chunk(" more"),
            chunk::text_chunk("yes"),
            chunk::text_chunk(", "),
            chunk::delta_chunk(&serde_json::json!({"refusal": "but no"}), None),
            chunk::text_chunk(" end\n"),
            chunk::finish_chunk("stop"),
        ])
    };
    let mock = MockProvider::start([reply(), reply()]).unwrap();
    let out = env.run(Some(&mock), &["exec", "talk"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "yes, but no end\n");
    assert!(
        stderr(&out).contains("thinking: pondering more\n"),
        "{}",
        stderr(&out)
    );

    let out = env.run(Some(&mock), &["exec", "--json", "talk"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let deltas: Vec<(String, String)> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"].as_str().unwrap().ends_with("_delta"))
        .map(|e| {
            let kind = e["type"].as_str().unwrap().to_owned();
            (kind, e["text"].as_str().unwrap().to_owned())
        })
        .fold(
            Vec::new(),
            |mut runs: Vec<(String, String)>, (kind, text)| {
                // Deltas of one read are one line; lines of one kind in a row are one run
                // however the reads fell.
                match runs.last_mut() {
                    Some((last, joined)) if *last == kind => joined.push_str(&text),
                    _ => runs.push((kind, text)),
                }
                runs
            },
        );
    let expected = [
        ("reasoning_delta", "pondering more"),
        ("text_delta", "yes, "),
        ("refusal_delta", "but no"),
        ("text_delta", " end\n"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, t)| ((*k).to_owned(), (*t).to_owned()))
        .collect();
    assert_eq!(deltas, expected);
}
