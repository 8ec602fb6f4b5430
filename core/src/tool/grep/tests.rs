use super::*;

fn args(glob: Option<&str>, context: Option<u64>) -> GrepArgs {
    GrepArgs {
        pattern: "x".into(),
        path: None,
        glob: glob.map(str::to_owned),
        case_insensitive: None,
        context,
    }
}

fn results(glob: Option<&str>, context: Option<u64>) -> GrepResults {
    GrepResults::new(Path::new("/w"), Path::new("/w"), &args(glob, context)).unwrap()
}

#[test]
fn lines_as_path_line_text() {
    let mut r = results(None, None);
    r.add(
        Path::new("/w/src/a.rs"),
        3,
        b"fn main() {}\n",
        LineKind::Match,
    );
    r.add(Path::new("/w/src/a.rs"), 9, b"main();\r\n", LineKind::Match);
    r.add(Path::new("/w/b.rs"), 1, b"main", LineKind::Match);
    assert_eq!(
        r.finish(),
        ToolOutput::ok("src/a.rs:3: fn main() {}\nsrc/a.rs:9: main();\nb.rs:1: main\n")
    );
    assert_eq!(results(None, None).finish(), ToolOutput::ok("no matches\n"));
}

#[test]
fn context_lines_and_group_separators() {
    let mut r = results(None, Some(1));
    let a = Path::new("/w/a.txt");
    r.add(a, 1, b"before", LineKind::Context);
    r.add(a, 2, b"hit", LineKind::Match);
    r.add(a, 3, b"after", LineKind::Context);
    r.add(a, 7, b"hit again", LineKind::Match);
    r.add(Path::new("/w/b.txt"), 8, b"other file", LineKind::Match);
    assert_eq!(
        r.finish(),
        ToolOutput::ok(
            "a.txt-1- before\na.txt:2: hit\na.txt-3- after\n--\na.txt:7: hit again\n--\n\
             b.txt:8: other file\n"
        )
    );
}

#[test]
fn capped_with_a_count_of_the_rest() {
    let mut r = results(None, Some(2));
    let a = Path::new("/w/a");
    for n in 1..=(GREP_MAX_MATCHES as u64 + 5) {
        r.add(a, n, b"m", LineKind::Match);
    }
    r.add(a, 999, b"ctx", LineKind::Context);
    r.skip_binary();
    let ToolOutput {
        content, is_error, ..
    } = r.finish();
    assert!(!is_error);
    assert_eq!(
        content.lines().filter(|l| l.starts_with("a:")).count(),
        GREP_MAX_MATCHES
    );
    assert!(content.contains("… and 5 more matching lines"), "{content}");
    assert!(!content.contains("ctx"));
    assert!(content.ends_with("(1 binary files skipped)\n"), "{content}");
}

#[test]
fn long_lines_are_cut_and_invalid_utf8_replaced() {
    let mut r = results(None, None);
    let long = "é".repeat(GREP_MAX_LINE_CHARS + 7);
    r.add(Path::new("/w/a"), 1, long.as_bytes(), LineKind::Match);
    r.add(Path::new("/w/a"), 2, b"bad \xff byte", LineKind::Match);
    let content = r.finish().content;
    let first = content.lines().next().unwrap();
    assert!(first.ends_with(" … (7 more characters)"), "{first}");
    assert_eq!(first.matches('é').count(), GREP_MAX_LINE_CHARS);
    assert!(content.contains("a:2: bad \u{fffd} byte"));
}

#[test]
fn globs_match_the_relative_path_or_the_name() {
    let r = results(Some("*.rs"), None);
    assert!(r.wants(Path::new("/w/deep/down/x.rs")));
    assert!(!r.wants(Path::new("/w/x.rs.bak")));
    let r = results(Some("src/**/*.rs"), None);
    assert!(r.wants(Path::new("/w/src/a/b.rs")));
    assert!(!r.wants(Path::new("/w/tests/b.rs")));
    assert!(results(None, None).wants(Path::new("/anything")));
    let bad = GrepResults::new(Path::new("/w"), Path::new("/w"), &args(Some("[a"), None));
    assert!(bad.unwrap_err().is_error);
}

#[test]
fn context_is_bounded_and_bad_patterns_explained() {
    assert_eq!(args(None, None).context_lines(), 0);
    assert_eq!(args(None, Some(3)).context_lines(), 3);
    assert_eq!(args(None, Some(u64::MAX)).context_lines(), GREP_MAX_CONTEXT);
    let out = invalid_pattern("(", "unclosed group");
    assert!(out.is_error);
    assert!(out.content.contains("\"(\": unclosed group"));
}
