//! `hrns exec`'s peak memory on a large answer (40 MiB of text): bounded by the copies of it
//! a run holds today, so that one more whole copy at the peak fails.
//!
//! This file holds a single test on purpose: the peak is read with
//! `getrusage(RUSAGE_CHILDREN)`, which is the largest peak of any child this test process has
//! waited for, so no other test may run children beside it.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply, chunk};
use nix::sys::resource::{UsageWho, getrusage};

/// The answer's size: larger than the default answer cap (32 MiB), which the test raises.
const ANSWER_BYTES: usize = 40 * 1024 * 1024;
/// The size of each streamed text delta.
const PIECE_BYTES: usize = 64 * 1024;

/// A streamed answer of `ANSWER_BYTES` of text in `PIECE_BYTES` deltas (a line of words, so
/// that the printer has ordinary text to print).
fn large_answer() -> Reply {
    let line = "the quick brown fox jumps over the lazy dog again and again\n";
    let piece: String = line.repeat(PIECE_BYTES / line.len() + 1)[..PIECE_BYTES].to_owned();
    let mut events = vec![chunk::role_chunk()];
    events.extend((0..ANSWER_BYTES / PIECE_BYTES).map(|_| chunk::text_chunk(&piece)));
    events.push(chunk::finish_chunk("stop"));
    events.push(chunk::usage_chunk(8, 1));
    Reply::sse(events)
}

#[test]
fn a_large_answer_adds_no_copy_at_the_peak() {
    let env = Env::new();
    let mock = MockProvider::start([large_answer()]).unwrap();
    env.config_with(&mock, r#", "maxAnswerBytes": 134217728"#);
    let out = env
        .cmd(None)
        .args(["exec", "--approval", "auto", "write a long text"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The whole answer reached the user (printed as it streamed).
    let printed = stdout(&out);
    assert!(
        printed.len() >= ANSWER_BYTES,
        "printed {} bytes of {ANSWER_BYTES}",
        printed.len()
    );
    assert!(
        printed.contains("lazy dog"),
        "the answer's text was printed"
    );
    assert_eq!(mock.chat_requests().len(), 1, "one request");
    // `hrns` is the only child waited for, so this is its peak resident set (in KiB).
    let peak_kib = u64::try_from(getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss()).unwrap();
    let answer_kib = u64::try_from(ANSWER_BYTES / 1024).unwrap();
    // Measured on a debug build (December 2026): 190 MiB, about 4.7 copies of the answer,
    // while exec kept its own copy of the last message's text for the end of the run; 152 MiB
    // (3.7 copies) once it read that text from the session's history; 108 MiB (2.7 copies)
    // since the session file's line is redacted and written in pieces as it is serialised,
    // not made whole first. The bound sits between the last two, with room for the
    // allocator's slack: a change that holds one more whole copy at the peak fails it.
    let bound_kib = answer_kib * 3 + 16 * 1024;
    assert!(
        peak_kib < bound_kib,
        "peak resident set {peak_kib} KiB for an answer of {answer_kib} KiB (bound {bound_kib} KiB)"
    );
}
