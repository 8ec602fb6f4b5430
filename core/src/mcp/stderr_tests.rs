use super::*;

fn secrets() -> Secrets {
    let mut secrets = Secrets::new();
    secrets.add("tok-a7Kq9xZ2mB4n-secret");
    secrets
}

/// Every line of `input` fed in pieces of `size` bytes, then the end.
fn lines(input: &[u8], size: usize) -> Vec<String> {
    let mut splitter = StderrLines::new(secrets());
    let mut out = Vec::new();
    for piece in input.chunks(size.max(1)) {
        splitter.feed(piece, |l| out.push(l));
    }
    out.extend(splitter.finish());
    out
}

#[test]
fn lines_come_out_redacted_however_the_bytes_are_split() {
    let input = b"starting\r\nkey is tok-a7Kq9xZ2mB4n-secret, ok\n\nlast words";
    let want = ["starting", "key is [redacted], ok", "", "last words"];
    for size in [1, 2, 3, 7, 64] {
        assert_eq!(lines(input, size), want, "pieces of {size}");
    }
}

#[test]
fn a_long_line_is_cut_and_the_rest_counted_not_kept() {
    let mut input = vec![b'x'; MAX_LINE + 100];
    input.extend_from_slice(b"\nnext\n");
    for size in [1, 1000, 10_000] {
        let out = lines(&input, size);
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0],
            format!("{}… (100 more bytes)", "x".repeat(MAX_LINE)),
            "pieces of {size}"
        );
        assert_eq!(out[1], "next");
    }
    // A line that never ends is bounded too, and still reported at the end.
    let mut splitter = StderrLines::new(Secrets::new());
    for _ in 0..1000 {
        splitter.feed(&[b'y'; 1024], |_| panic!("no line ended"));
        assert!(splitter.line.len() <= MAX_LINE);
    }
    let last = splitter.finish().unwrap();
    assert!(last.ends_with(&format!("… ({} more bytes)", 1000 * 1024 - MAX_LINE)));
    assert_eq!(splitter.finish(), None);
}

#[test]
fn a_secret_cut_by_the_limit_is_still_hidden() {
    let mut input = vec![b'a'; MAX_LINE - 12];
    input.extend_from_slice(b"tok-a7Kq9xZ2mB4n-secret and more\n");
    let out = lines(&input, 5);
    assert!(!out[0].contains("tok-a7Kq"), "{}", &out[0][MAX_LINE - 20..]);
    assert!(out[0].contains("[redacted]"));
}

#[test]
fn bytes_that_are_not_utf8_do_not_stop_the_lines() {
    assert_eq!(
        lines(b"bad \xff\xfe byte\nok\n", 3),
        ["bad \u{fffd}\u{fffd} byte", "ok"]
    );
}

/// A log rotates before the line that would take it past its limit; a log already full from
/// an earlier run rotates at once; a line larger than the limit goes alone to a fresh log.
#[test]
fn the_log_budget_rotates_before_the_limit() {
    use super::{LogBudget, LogWrite::*};
    let mut budget = LogBudget::new(100, 0);
    assert_eq!(budget.admit(60), Append);
    assert_eq!(budget.admit(40), Append);
    assert_eq!(budget.admit(1), RotateFirst);
    assert_eq!(budget.admit(99), Append);
    assert_eq!(budget.admit(500), RotateFirst);
    assert_eq!(budget.admit(1), RotateFirst);
    let mut full = LogBudget::new(100, 100);
    assert_eq!(full.admit(1), RotateFirst);
    let mut empty = LogBudget::new(10, 0);
    assert_eq!(empty.admit(50), Append, "nothing to rotate away");
}
