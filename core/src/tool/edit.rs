//! The exact-match replacement behind `edit_file`.
//!
//! The model names the text to replace by quoting it. Matching is exact — no fuzzy matching —
//! because a fuzzy match can silently edit the wrong place; instead, every way the quote can
//! fail is an error that tells the model how to fix its next attempt.

use std::fmt::Write as _;

/// How many match line numbers an [`EditError::Ambiguous`] lists.
const MAX_LISTED_LINES: usize = 5;

/// The result of a successful edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new content of the file.
    pub content: String,
    /// How many occurrences were replaced (1 unless `replace_all` was set).
    pub replacements: usize,
}

/// Why an edit was refused; the `Display` text is written for the model.
///
/// Every variant is the model's mistake (the file is left alone).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// `old_string` was empty, which would match everywhere.
    #[error(
        "old_string is empty; give the exact text to replace (to create a file or replace all \
         of it, use write_file)"
    )]
    EmptyOldString,
    /// `old_string` and `new_string` are the same, so the edit would do nothing.
    #[error("old_string and new_string are identical, so the edit would change nothing")]
    NoChange,
    /// `old_string` does not occur in the file.
    #[error("old_string was not found in the file; {}", not_found_hint(*.near_miss))]
    NotFound {
        /// A looser comparison that does match, to point at the likely cause.
        near_miss: Option<NearMiss>,
    },
    /// `old_string` occurs several times and `replace_all` was not set.
    #[error(
        "old_string was found {count} times (at lines {}); include more surrounding lines to \
         make it unique, or set replace_all to true to replace every occurrence",
        list_lines(lines, *count)
    )]
    Ambiguous {
        /// How many non-overlapping matches there are.
        count: usize,
        /// The 1-based line numbers where the first few matches start.
        lines: Vec<usize>,
    },
}

/// A looser comparison under which a missing `old_string` would have matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NearMiss {
    /// It matches when `\r\n` and `\n` are treated alike.
    LineEndings,
    /// It matches when runs of whitespace are treated alike.
    Whitespace,
}

/// Replaces the exact text `old` in `content` with `new`.
///
/// `old` must occur exactly once, or at least once when `replace_all` is set (occurrences are
/// counted without overlap, left to right). On failure the error says why: an empty `old`,
/// `old == new`, no match (with a hint when the text matches up to line endings or
/// whitespace), or several matches (with their line numbers). Runs in time linear in the
/// sizes of the inputs and the result.
pub fn apply_edit(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Edited, EditError> {
    if old.is_empty() {
        return Err(EditError::EmptyOldString);
    }
    if old == new {
        return Err(EditError::NoChange);
    }
    let mut count = 0;
    let mut lines = Vec::new();
    // Line numbers are counted incrementally, so the scan stays linear.
    let (mut line, mut scanned) = (1, 0);
    for (at, _) in content.match_indices(old) {
        count += 1;
        if lines.len() < MAX_LISTED_LINES {
            line += content.as_bytes()[scanned..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            scanned = at;
            lines.push(line);
        }
    }
    match count {
        0 => {
            return Err(EditError::NotFound {
                near_miss: near_miss(content, old),
            });
        }
        1 => {}
        _ if replace_all => {}
        _ => return Err(EditError::Ambiguous { count, lines }),
    }
    let mut out = String::with_capacity(content.len() - count * old.len() + count * new.len());
    let mut last = 0;
    for (at, _) in content.match_indices(old) {
        out.push_str(&content[last..at]);
        out.push_str(new);
        last = at + old.len();
    }
    out.push_str(&content[last..]);
    Ok(Edited {
        content: out,
        replacements: count,
    })
}

/// Looks for a looser match of a missing `old`, to give the model a hint.
fn near_miss(content: &str, old: &str) -> Option<NearMiss> {
    if (content.contains('\r') || old.contains('\r'))
        && content
            .replace("\r\n", "\n")
            .contains(&old.replace("\r\n", "\n"))
    {
        return Some(NearMiss::LineEndings);
    }
    let squashed_old = squash_whitespace(old);
    if !squashed_old.is_empty() && squash_whitespace(content).contains(&squashed_old) {
        return Some(NearMiss::Whitespace);
    }
    None
}

/// Collapses every run of whitespace to one space and trims the ends.
fn squash_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn not_found_hint(near_miss: Option<NearMiss>) -> &'static str {
    match near_miss {
        None => {
            "re-read the file with read_file and copy the text exactly, including whitespace \
             and indentation (without the line-number prefixes)"
        }
        Some(NearMiss::LineEndings) => {
            "it would match if line endings were ignored (the file and old_string differ in \
             \\r\\n versus \\n); use the file's line endings in old_string"
        }
        Some(NearMiss::Whitespace) => {
            "it would match if whitespace were ignored; check indentation (tabs versus spaces) \
             and trailing spaces, re-read the file and copy the text exactly"
        }
    }
}

fn list_lines(lines: &[usize], count: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{line}");
    }
    if count > lines.len() {
        out.push_str(", ...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn edited(content: &str, replacements: usize) -> Result<Edited, EditError> {
        Ok(Edited {
            content: content.into(),
            replacements,
        })
    }

    #[test]
    fn replaces_a_unique_match() {
        assert_eq!(
            apply_edit("fn a() {}\nfn b() {}\n", "fn b", "fn c", false),
            edited("fn a() {}\nfn c() {}\n", 1)
        );
        assert_eq!(apply_edit("abc", "abc", "", false), edited("", 1));
        assert_eq!(apply_edit("日本語", "本", "x", false), edited("日x語", 1));
    }

    #[test]
    fn replace_all_replaces_every_match() {
        assert_eq!(apply_edit("a.a.a", "a", "bb", true), edited("bb.bb.bb", 3));
        // Matches do not overlap.
        assert_eq!(apply_edit("aaaa", "aa", "b", true), edited("bb", 2));
        assert_eq!(apply_edit("x1y", "1", "2", true), edited("x2y", 1));
    }

    #[test]
    fn refuses_empty_and_identical_strings() {
        assert_eq!(
            apply_edit("abc", "", "x", false),
            Err(EditError::EmptyOldString)
        );
        assert_eq!(apply_edit("", "", "", true), Err(EditError::EmptyOldString));
        assert_eq!(apply_edit("abc", "b", "b", false), Err(EditError::NoChange));
    }

    #[test]
    fn ambiguous_matches_list_their_lines() {
        let content = "x\nfoo\nfoo\ny\nfoo\n";
        let err = apply_edit(content, "foo", "bar", false).unwrap_err();
        assert_eq!(
            err,
            EditError::Ambiguous {
                count: 3,
                lines: vec![2, 3, 5]
            }
        );
        let text = err.to_string();
        assert!(text.contains("found 3 times (at lines 2, 3, 5)"), "{text}");
        assert!(text.contains("replace_all"));

        let many = "z\n".repeat(10);
        let err = apply_edit(&many, "z", "y", false).unwrap_err();
        assert!(
            err.to_string().contains("at lines 1, 2, 3, 4, 5, ...)"),
            "{err}"
        );
    }

    #[test]
    fn not_found_gives_hints() {
        let err = apply_edit("abc", "xyz", "q", false).unwrap_err();
        assert_eq!(err, EditError::NotFound { near_miss: None });
        assert!(err.to_string().contains("re-read the file"));

        let crlf = "line one\r\nline two\r\n";
        assert_eq!(
            apply_edit(crlf, "one\nline", "1\nline", false),
            Err(EditError::NotFound {
                near_miss: Some(NearMiss::LineEndings)
            })
        );
        assert_eq!(
            apply_edit("a\nb\n", "a\r\nb", "c", false),
            Err(EditError::NotFound {
                near_miss: Some(NearMiss::LineEndings)
            })
        );
        let tabs = "fn f() {\n\tlet x = 1;\n}\n";
        let err = apply_edit(tabs, "{\n    let x = 1;", "{", false).unwrap_err();
        assert_eq!(
            err,
            EditError::NotFound {
                near_miss: Some(NearMiss::Whitespace)
            }
        );
        assert!(err.to_string().contains("indentation"));
        // Whitespace-only text is no hint.
        assert_eq!(
            apply_edit("ab", "   ", "x", false),
            Err(EditError::NotFound { near_miss: None })
        );
    }

    #[test]
    fn large_inputs_stay_linear() {
        // A quadratic implementation would take minutes here.
        let content = "ab".repeat(500_000);
        let out = apply_edit(&content, "b", "c", true).unwrap();
        assert_eq!(out.replacements, 500_000);
        assert_eq!(out.content.len(), 1_000_000);
        let err = apply_edit(&content, "ab", "x", false).unwrap_err();
        assert!(
            matches!(err, EditError::Ambiguous { count: 500_000, ref lines } if lines == &[1; 5])
        );
        let needle = "a".repeat(1000) + "c";
        let hay = "a".repeat(1_000_000);
        assert!(matches!(
            apply_edit(&hay, &needle, "", false),
            Err(EditError::NotFound { .. })
        ));
    }

    proptest! {
        #![proptest_config(crate::proptest_seeds::config())]
        #[test]
        fn unique_match_is_a_splice(
            content in "[ab\n]{0,40}",
            old in "[ab]{1,4}",
            new in "[abc]{0,4}",
        ) {
            let count = content.matches(old.as_str()).count();
            let result = apply_edit(&content, &old, &new, false);
            if old == new {
                prop_assert_eq!(result, Err(EditError::NoChange));
            } else if count == 1 {
                let at = content.find(old.as_str()).unwrap();
                let spliced = format!("{}{}{}", &content[..at], new, &content[at + old.len()..]);
                prop_assert_eq!(result, edited(&spliced, 1));
            } else if count == 0 {
                let is_not_found = matches!(result, Err(EditError::NotFound { .. }));
                prop_assert!(is_not_found);
            } else {
                let is_ambiguous = matches!(result, Err(EditError::Ambiguous { count: c, .. }) if c == count);
                prop_assert!(is_ambiguous);
            }
        }

        #[test]
        fn replace_all_equals_str_replace(
            content in "[ab\n]{0,40}",
            old in "[ab]{1,3}",
            new in "[abc]{0,3}",
        ) {
            prop_assume!(old != new);
            let count = content.matches(old.as_str()).count();
            let result = apply_edit(&content, &old, &new, true);
            if count == 0 {
                let is_not_found = matches!(result, Err(EditError::NotFound { .. }));
                prop_assert!(is_not_found);
            } else {
                prop_assert_eq!(result, edited(&content.replace(old.as_str(), &new), count));
            }
        }
    }
}
