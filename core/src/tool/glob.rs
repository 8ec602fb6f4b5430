//! The glob patterns of `list_files` and `grep`, matched against `/`-separated relative paths.
//!
//! Matching is ripgrep's own [`globset`] (the walker and matcher the tools run on come from the
//! same project), with separators kept literal, so a pattern means here what it means in
//! ripgrep's `--glob`. The rules, as the tools' descriptions tell the model:
//!
//! - `*` matches any characters within one path segment, `?` exactly one character;
//! - `**` as a whole segment matches any number of segments, none included (`**/*.rs` matches
//!   `a.rs` and `src/x/a.rs`); elsewhere it is the same as `*`;
//! - `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`) match one character of (not of) a set;
//! - `{rs,toml}` matches any of its comma-separated alternatives, which may contain patterns
//!   and nest;
//! - `\` makes the next character literal;
//! - a pattern is anchored at both ends: `*.rs` matches `a.rs` but not `src/a.rs`; a leading
//!   `./` or `/` is ignored, and a trailing `/` matches everything below (`src/` is `src/**`,
//!   and `src/**` matches `src` itself too).
//!
//! Matching is case-sensitive, `*` and `?` match a leading dot, and no character matches `/`.
//! Matching is on bytes, as paths need not be UTF-8: `?` and a `[..]` class take one byte, so
//! outside ASCII a single character may need `*` (`?` does not match `é`, two bytes).
//! The pattern is compiled to one automaton, so matching a path takes time linear in the path
//! and `{..}` groups cost no expansion.

/// The longest pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 1000;

/// Why a glob pattern was refused; the `Display` text is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GlobError {
    /// A `[` has no closing `]`.
    #[error(
        "invalid glob pattern '{pattern}': a '[' has no closing ']' (write \\[ for a literal '[')"
    )]
    UnclosedClass {
        /// The pattern as sent.
        pattern: String,
    },
    /// A `{` has no closing `}`.
    #[error(
        "invalid glob pattern '{pattern}': a '{{' has no closing '}}' (write \\{{ for a literal '{{')"
    )]
    UnclosedBrace {
        /// The pattern as sent.
        pattern: String,
    },
    /// A `}` closes no `{`.
    #[error(
        "invalid glob pattern '{pattern}': a '}}' has no opening '{{' (write \\}} for a literal '}}')"
    )]
    UnopenedBrace {
        /// The pattern as sent.
        pattern: String,
    },
    /// The pattern ends in a lone `\`.
    #[error(
        "invalid glob pattern '{pattern}': it ends in a lone '\\' (write \\\\ for a literal '\\')"
    )]
    DanglingEscape {
        /// The pattern as sent.
        pattern: String,
    },
    /// A range such as `[z-a]` runs backwards.
    #[error("invalid glob pattern '{pattern}': the range {start}-{end} runs backwards")]
    BackwardRange {
        /// The pattern as sent.
        pattern: String,
        /// The first character of the range.
        start: char,
        /// The last character of the range.
        end: char,
    },
    /// The pattern is longer than [`MAX_PATTERN_CHARS`].
    #[error("the glob pattern is {chars} characters long; at most {MAX_PATTERN_CHARS} are allowed")]
    TooLong {
        /// The pattern's length in characters.
        chars: usize,
    },
    /// Anything else the matcher refused (a pattern too complex to compile, for one).
    #[error("invalid glob pattern '{pattern}': {reason}; use a simpler pattern")]
    Invalid {
        /// The pattern as sent.
        pattern: String,
        /// The matcher's reason.
        reason: String,
    },
}

/// A compiled glob pattern; see the module docs for its rules.
#[derive(Clone)]
pub struct Glob {
    /// The pattern as the matcher takes it (see [`normalize`]).
    normal: String,
    matcher: globset::GlobMatcher,
    /// For a pattern ending in `/**`, the pattern of the directory it names, which it matches
    /// too.
    dir: Option<globset::GlobMatcher>,
}

impl std::fmt::Debug for Glob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Glob").field(&self.normal).finish()
    }
}

impl PartialEq for Glob {
    fn eq(&self, other: &Self) -> bool {
        self.normal == other.normal
    }
}

impl Eq for Glob {}

impl Glob {
    /// Compiles `pattern`, or says what is wrong with it.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let chars = pattern.chars().count();
        if chars > MAX_PATTERN_CHARS {
            return Err(GlobError::TooLong { chars });
        }
        let normal = normalize(pattern);
        let compile = |glob: &str| {
            globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .backslash_escape(true)
                .empty_alternates(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| refusal(pattern, e))
        };
        let matcher = compile(&normal)?;
        // `dir/**` needs something below `dir`; the rules say it names `dir` too.
        let mut dir = normal.as_str();
        while let Some(parent) = dir.strip_suffix("/**") {
            dir = parent;
        }
        let dir = if dir.len() < normal.len() && !dir.is_empty() {
            Some(compile(dir)?)
        } else {
            None
        };
        Ok(Glob {
            normal,
            matcher,
            dir,
        })
    }

    /// Returns whether a relative path, with `/` between its segments, matches.
    ///
    /// Empty segments (`a//b`, a leading or trailing `/`) are ignored.
    pub fn matches(&self, path: &str) -> bool {
        let clean = !path.starts_with('/') && !path.ends_with('/') && !path.contains("//");
        if clean {
            return self.is_match(path);
        }
        let joined: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        self.is_match(&joined.join("/"))
    }

    fn is_match(&self, path: &str) -> bool {
        self.matcher.is_match(path) || self.dir.as_ref().is_some_and(|d| d.is_match(path))
    }
}

/// The pattern in the form the matcher takes: no leading `./` or `/`, no empty or `.`
/// segments, and a trailing `/` as `/**`.
fn normalize(pattern: &str) -> String {
    let below = pattern.ends_with('/') && !pattern.trim_matches('/').is_empty();
    let segments: Vec<&str> = pattern
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let mut normal = segments.join("/");
    if below {
        normal.push_str("/**");
    }
    normal
}

fn refusal(pattern: &str, e: globset::Error) -> GlobError {
    let pattern = pattern.to_owned();
    match e.kind() {
        globset::ErrorKind::UnclosedClass => GlobError::UnclosedClass { pattern },
        globset::ErrorKind::UnclosedAlternates => GlobError::UnclosedBrace { pattern },
        globset::ErrorKind::UnopenedAlternates => GlobError::UnopenedBrace { pattern },
        globset::ErrorKind::DanglingEscape => GlobError::DanglingEscape { pattern },
        globset::ErrorKind::InvalidRange(start, end) => GlobError::BackwardRange {
            pattern,
            start: *start,
            end: *end,
        },
        other => GlobError::Invalid {
            pattern,
            reason: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        Glob::new(pattern).unwrap().matches(path)
    }

    #[test]
    fn table() {
        let table: &[(&str, &str, bool)] = &[
            ("*", "a.rs", true),
            ("*", "src/a.rs", false),
            ("*.rs", "a.rs", true),
            ("*.rs", ".rs", true),
            ("*.rs", "a.rsx", false),
            ("*.rs", "src/a.rs", false),
            ("**/*.rs", "a.rs", true),
            ("**/*.rs", "src/a.rs", true),
            ("**/*.rs", "src/x/y/a.rs", true),
            ("**/*.rs", "src/x/y/a.txt", false),
            ("**", "a", true),
            ("**", "a/b/c", true),
            ("src/**", "src/a/b", true),
            ("src/**", "lib/a", false),
            ("src/**/mod.rs", "src/mod.rs", true),
            ("src/**/mod.rs", "src/a/b/mod.rs", true),
            ("src/**/mod.rs", "src/a/b/mod.rsx", false),
            ("src/*.toml", "src/Cargo.toml", true),
            ("src/*.toml", "src/a/Cargo.toml", false),
            ("a**b", "axxb", true),
            ("a**b", "a/b", false),
            ("?.md", "a.md", true),
            ("?.md", "ab.md", false),
            // globset matches bytes: `?` and classes take one byte, `*` any run of them.
            ("?", "é", false),
            ("??", "é", true),
            ("*", "é", true),
            ("[abc].rs", "b.rs", true),
            ("[abc].rs", "d.rs", false),
            ("[a-c]x", "bx", true),
            ("[!a-c]x", "bx", false),
            ("[^a-c]x", "dx", true),
            ("[]]", "]", true),
            ("[!]]", "a", true),
            ("[a-]", "-", true),
            ("\\*", "*", true),
            ("\\*", "a", false),
            // Inside a class `\` is literal; `[]]` is the class of `]`.
            ("[\\]]", "\\]", true),
            ("*.{rs,toml}", "Cargo.toml", true),
            ("*.{rs,toml}", "main.rs", true),
            ("*.{rs,toml}", "main.md", false),
            ("{src,tests}/**/*.rs", "tests/a.rs", true),
            ("{src,tests}/**/*.rs", "benches/a.rs", false),
            ("a{b,c{d,e}}f", "acef", true),
            ("a{b,c{d,e}}f", "acf", false),
            ("a{,b}", "a", true),
            ("[{]", "{", true),
            ("\\{a,b\\}", "{a,b}", true),
            ("./src/*.rs", "src/a.rs", true),
            ("/src/*.rs", "src/a.rs", true),
            ("src/", "src/a/b.rs", true),
            ("src/", "srcx/a", false),
            ("a//b", "a/b", true),
            ("a/./b", "a/b", true),
            ("*", "", true),
            ("**", "", true),
            ("", "", true),
            ("A.rs", "a.rs", false),
            ("日本/*", "日本/語", true),
            ("*a*a*a*a*a*b", &"a".repeat(60), false),
        ];
        for &(pattern, path, expected) in table {
            assert_eq!(matches(pattern, path), expected, "{pattern:?} vs {path:?}");
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let err = Glob::new("src/[ab.rs").unwrap_err();
        assert_eq!(
            err,
            GlobError::UnclosedClass {
                pattern: "src/[ab.rs".into()
            }
        );
        assert!(err.to_string().contains("no closing ']'"), "{err}");
        let err = Glob::new("*.{rs,toml").unwrap_err();
        assert!(matches!(err, GlobError::UnclosedBrace { .. }));
        assert!(err.to_string().contains("no closing '}'"), "{err}");
        let err = Glob::new(&"{}".repeat(50_000)).unwrap_err();
        assert_eq!(err, GlobError::TooLong { chars: 100_000 });
        // Alternatives compile to one automaton, so nothing expands.
        let many = "{a,b}".repeat(100);
        assert!(matches(&many, &"ab".repeat(50)));
        // Stray closers and trailing backslashes are refused with what to write instead.
        let err = Glob::new("a}").unwrap_err();
        assert!(matches!(err, GlobError::UnopenedBrace { .. }), "{err}");
        assert!(err.to_string().contains("write \\} for a literal"), "{err}");
        let err = Glob::new("a\\").unwrap_err();
        assert!(matches!(err, GlobError::DanglingEscape { .. }), "{err}");
        let err = Glob::new("[z-a]").unwrap_err();
        assert!(err.to_string().contains("z-a runs backwards"), "{err}");
        assert!(matches("a]", "a]"));
    }

    /// A reference matcher for patterns over `a`, `b`, `?`, `*` and `/`: the obvious
    /// recursion over segments (`**` alone in a segment is any number of segments) and, within
    /// one, over characters.
    fn reference(pattern: &str, path: &str) -> bool {
        fn chars(p: &[char], s: &[char]) -> bool {
            match p.split_first() {
                None => s.is_empty(),
                Some(('*', rest)) => (0..=s.len()).any(|k| chars(rest, &s[k..])),
                Some((c, rest)) => {
                    !s.is_empty() && (*c == '?' || *c == s[0]) && chars(rest, &s[1..])
                }
            }
        }
        fn segments(p: &[&str], s: &[&str]) -> bool {
            match p.split_first() {
                None => s.is_empty(),
                Some((&"**", rest)) => (0..=s.len()).any(|k| segments(rest, &s[k..])),
                Some((seg, rest)) => {
                    !s.is_empty()
                        && {
                            let p: Vec<char> = seg.chars().collect();
                            let n: Vec<char> = s[0].chars().collect();
                            chars(&p, &n)
                        }
                        && segments(rest, &s[1..])
                }
            }
        }
        let split = |x: &str| -> Vec<String> {
            x.split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let (p, s) = (split(pattern), split(path));
        let mut p: Vec<&str> = p.iter().map(String::as_str).collect();
        if pattern.ends_with('/') && !p.is_empty() {
            p.push("**");
        }
        let s: Vec<&str> = s.iter().map(String::as_str).collect();
        segments(&p, &s)
    }

    proptest::proptest! {
        #![proptest_config(crate::proptest_seeds::config())]
        #[test]
        fn the_matcher_agrees_with_a_reference(
            pattern in "[ab?*/]{0,10}",
            path in "/?[ab]{1,3}(/{1,2}[ab]{1,3}){0,3}/?",
        ) {
            let glob = Glob::new(&pattern).unwrap();
            proptest::prop_assert_eq!(glob.matches(&path), reference(&pattern, &path));
        }
    }

    #[test]
    fn hostile_patterns_stay_fast() {
        let pattern = "*a".repeat(200) + "b";
        let path = "a".repeat(5000);
        assert!(!matches(&pattern, &path));
        let deep = "**/".repeat(200) + "x";
        let path = "a/".repeat(2000) + "y";
        assert!(!matches(&deep, &path));
    }
}
