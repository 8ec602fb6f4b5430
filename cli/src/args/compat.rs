//! Command-line spellings of the original Go hrns, and a guard against short-flag clusters.
//!
//! Go's `flag` package takes one-dash long flags (`-message="…"`, `-model x`), which clap would
//! read as a cluster of short flags: `-message=…` became `-m essage=…`, a request for the model
//! `essage=…`. The original's `-message`, `-provider`, `-model` and `-agent` are rewritten to
//! their `--` forms before clap sees them, and any other one-dash word in which a flag that takes
//! a value (`-p`, `-m`, `-a`) is followed by more letters is refused.

use std::ffi::OsString;

/// The original hrns's one-dash long flags.
const GO_FLAGS: [&str; 4] = ["message", "provider", "model", "agent"];

/// The short flags that take a value, with their long names.
const VALUE_SHORTS: [(char, &str); 3] = [('p', "provider"), ('m', "model"), ('a', "agent")];

/// Rewrites the original's spellings and refuses value-swallowing clusters; arguments after `--`
/// are left alone. The error says what to write instead.
pub(crate) fn normalize(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = args.into_iter();
    if let Some(program) = rest.next() {
        out.push(program);
    }
    while let Some(arg) = rest.next() {
        if arg == "--" {
            out.push(arg);
            out.extend(rest.by_ref());
            break;
        }
        let Some(text) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        let Some(word) = text.strip_prefix('-').filter(|w| !w.starts_with('-')) else {
            out.push(arg);
            continue;
        };
        let (name, value) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (word, None),
        };
        if GO_FLAGS.contains(&name) {
            out.push(match value {
                Some(value) => format!("--{name}={value}").into(),
                None => format!("--{name}").into(),
            });
            continue;
        }
        check_cluster(word)?;
        out.push(arg);
    }
    Ok(out)
}

/// Fails when a short flag that takes a value is followed by more characters (`-mfoo`, `-am`),
/// unless they start with `=`.
fn check_cluster(word: &str) -> Result<(), String> {
    for (i, c) in word.char_indices() {
        let Some((_, long)) = VALUE_SHORTS.iter().find(|(s, _)| *s == c) else {
            continue;
        };
        let value = &word[i + c.len_utf8()..];
        if value.is_empty() || value.starts_with('=') {
            return Ok(());
        }
        return Err(format!(
            "`-{word}` would read `{value}` as the value of -{c}; write `-{c} {value}` or \
             `--{long} {value}` (or `--{w}` if you meant a long option)",
            w = word
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Vec<String>, String> {
        let args = std::iter::once("hrns")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        normalize(args).map(|v| {
            v.into_iter()
                .skip(1)
                .map(|a| a.into_string().unwrap())
                .collect()
        })
    }

    #[test]
    fn the_originals_spellings_become_long_flags() {
        assert_eq!(
            run(&[
                "exec",
                "-message=hi there",
                "-model",
                "m1",
                "-provider=p",
                "-agent",
                "Pirate"
            ])
            .unwrap(),
            [
                "exec",
                "--message=hi there",
                "--model",
                "m1",
                "--provider=p",
                "--agent",
                "Pirate"
            ]
        );
    }

    #[test]
    fn short_flags_that_swallow_a_value_are_refused() {
        for bad in ["-messages=x", "-mfoo", "-cmx", "-axe"] {
            let err = run(&["exec", bad]).unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
        for fine in [
            vec!["exec", "-m", "x", "-c", "hi"],
            vec!["exec", "-m=x", "-cm", "y"],
            vec!["exec", "--model", "x", "--", "-mfoo"],
            vec!["-h"],
            vec!["exec", "-"],
        ] {
            assert_eq!(run(&fine).unwrap(), fine);
        }
    }
}
