//! The glob patterns of `list_files`, matched against `/`-separated relative paths.
//!
//! The rules, as the tool's description tells the model:
//!
//! - `*` matches any characters within one path segment, `?` exactly one character;
//! - `**` as a whole segment matches any number of segments, none included (`**/*.rs` matches
//!   `a.rs` and `src/x/a.rs`); elsewhere it is the same as `*`;
//! - `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`) match one character of (not of) a set;
//! - `{rs,toml}` matches any of its comma-separated alternatives, which may contain patterns
//!   and nest;
//! - `\` makes the next character literal;
//! - a pattern is anchored at both ends: `*.rs` matches `a.rs` but not `src/a.rs`; a leading
//!   `./` or `/` is ignored, and a trailing `/` matches everything below (`src/` is `src/**`).
//!
//! Matching is case-sensitive, `*` and `?` match a leading dot, and no character matches `/`.
//! Matching a path takes time proportional to the product of the pattern and path lengths at
//! worst, never exponential.

/// The most alternatives that `{..}` groups may expand to, together.
pub const MAX_ALTERNATIVES: usize = 256;
/// The longest pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 1000;

/// Why a glob pattern was refused; the `Display` text is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GlobError {
    /// A `[` has no closing `]` in its segment.
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
    /// The pattern is longer than [`MAX_PATTERN_CHARS`].
    #[error("the glob pattern is {chars} characters long; at most {MAX_PATTERN_CHARS} are allowed")]
    TooLong {
        /// The pattern's length in characters.
        chars: usize,
    },
    /// The `{..}` groups expand to more than [`MAX_ALTERNATIVES`] patterns.
    #[error(
        "invalid glob pattern '{pattern}': its {{..}} groups expand to more than \
         {MAX_ALTERNATIVES} alternatives; use a simpler pattern"
    )]
    TooManyAlternatives {
        /// The pattern as sent.
        pattern: String,
    },
}

/// A compiled glob pattern; see the module docs for its rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    /// One list of segments per alternative of the `{..}` groups.
    alternatives: Vec<Vec<Segment>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of whole segments.
    AnyPath,
    /// A pattern for exactly one segment.
    One(Vec<Token>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `?`
    AnyChar,
    /// `*`
    AnyRun,
    /// `[..]`: inclusive ranges (a single character is a range of one).
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Glob {
    /// Compiles `pattern`, or says what is wrong with it.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let chars: Vec<char> = pattern.chars().collect();
        if chars.len() > MAX_PATTERN_CHARS {
            return Err(GlobError::TooLong { chars: chars.len() });
        }
        let mut expanded = Vec::new();
        expand_braces(&chars, pattern, &mut expanded)?;
        let alternatives = expanded
            .iter()
            .map(|alt| parse_segments(alt, pattern))
            .collect::<Result<_, _>>()?;
        Ok(Glob { alternatives })
    }

    /// Returns whether a relative path, with `/` between its segments, matches.
    ///
    /// Empty segments (`a//b`, a leading or trailing `/`) are ignored.
    pub fn matches(&self, path: &str) -> bool {
        let names: Vec<Vec<char>> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| s.chars().collect())
            .collect();
        let names: Vec<&[char]> = names.iter().map(Vec::as_slice).collect();
        self.alternatives
            .iter()
            .any(|segments| match_sequence(segments, &names, segment_matches))
    }
}

fn segment_matches(segment: &Segment, name: &&[char]) -> bool {
    match segment {
        Segment::AnyPath => true,
        Segment::One(tokens) => match_sequence(tokens, name, token_matches),
    }
}

fn token_matches(token: &Token, c: &char) -> bool {
    match token {
        Token::Literal(l) => l == c,
        Token::AnyChar | Token::AnyRun => true,
        Token::Class { negated, ranges } => {
            ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(c)) != *negated
        }
    }
}

/// A pattern element that matches any run of items (`*` among characters, `**` among
/// segments); every other element matches exactly one item.
trait Wildcard {
    fn is_run(&self) -> bool;
}

impl Wildcard for Segment {
    fn is_run(&self) -> bool {
        matches!(self, Segment::AnyPath)
    }
}

impl Wildcard for Token {
    fn is_run(&self) -> bool {
        matches!(self, Token::AnyRun)
    }
}

/// Matches `items` against `pattern`, where runs match any number of items and every other
/// element exactly one item accepted by `one`.
///
/// The classic wildcard algorithm: on a mismatch, retry from the last run, letting it take
/// one more item. Going back only to the last run is enough because each other element takes
/// exactly one item, so the time is O(pattern × items).
fn match_sequence<P: Wildcard, I>(pattern: &[P], items: &[I], one: fn(&P, &I) -> bool) -> bool {
    let (mut p, mut i) = (0, 0);
    let mut retry: Option<(usize, usize)> = None;
    while i < items.len() {
        if p < pattern.len() && pattern[p].is_run() {
            retry = Some((p, i));
            p += 1;
        } else if p < pattern.len() && one(&pattern[p], &items[i]) {
            p += 1;
            i += 1;
        } else if let Some((run, taken)) = retry {
            p = run + 1;
            i = taken + 1;
            retry = Some((run, taken + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(Wildcard::is_run)
}

/// Expands the `{..}` groups of `chars` into plain patterns, appended to `out`.
fn expand_braces(chars: &[char], pattern: &str, out: &mut Vec<Vec<char>>) -> Result<(), GlobError> {
    let Some(open) = find_top_level(chars, 0, |c| c == '{') else {
        if out.len() == MAX_ALTERNATIVES {
            return Err(GlobError::TooManyAlternatives {
                pattern: pattern.to_owned(),
            });
        }
        out.push(chars.to_vec());
        return Ok(());
    };
    let close = matching_brace(chars, open).ok_or_else(|| GlobError::UnclosedBrace {
        pattern: pattern.to_owned(),
    })?;
    let (prefix, inner, suffix) = (&chars[..open], &chars[open + 1..close], &chars[close + 1..]);
    let mut start = 0;
    loop {
        let comma = find_top_level(inner, start, |c| c == ',').unwrap_or(inner.len());
        let mut alternative = prefix.to_vec();
        alternative.extend_from_slice(&inner[start..comma]);
        alternative.extend_from_slice(suffix);
        expand_braces(&alternative, pattern, out)?;
        if comma == inner.len() {
            return Ok(());
        }
        start = comma + 1;
    }
}

/// Finds the first character from `from` that `wanted` accepts, outside escapes, classes and
/// nested braces.
fn find_top_level(chars: &[char], from: usize, wanted: impl Fn(char) -> bool) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i < chars.len() {
        let c = chars[i];
        if depth == 0 && wanted(c) {
            return Some(i);
        }
        match c {
            '\\' => i += 1,
            '[' => i = class_end(chars, i).unwrap_or(i),
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Returns the index of the `}` that closes the `{` at `open`.
fn matching_brace(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => i = class_end(chars, i).unwrap_or(i),
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Returns the index of the `]` closing the class that starts at `open`, if any. A `]` right
/// after `[`, `[!` or `[^` is a member, not the end; a `/` ends the search, as classes do not
/// span segments.
fn class_end(chars: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            ']' => return Some(i),
            '/' => return None,
            '\\' => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// Splits a brace-free pattern into segments and parses each.
fn parse_segments(chars: &[char], pattern: &str) -> Result<Vec<Segment>, GlobError> {
    let mut rest = chars;
    while let ['.', '/', tail @ ..] | ['/', tail @ ..] = rest {
        rest = tail;
    }
    let mut segments = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i <= rest.len() {
        if i == rest.len() || rest[i] == '/' {
            let part = &rest[start..i];
            match part {
                [] | ['.'] => {}
                ['*', '*'] => segments.push(Segment::AnyPath),
                _ => segments.push(Segment::One(parse_tokens(part, pattern)?)),
            }
            start = i + 1;
        } else if rest[i] == '\\' && i + 1 < rest.len() {
            i += 1;
        }
        i += 1;
    }
    if rest.last() == Some(&'/') {
        segments.push(Segment::AnyPath);
    }
    Ok(segments)
}

/// Parses one segment's pattern into tokens.
fn parse_tokens(chars: &[char], pattern: &str) -> Result<Vec<Token>, GlobError> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let token = match chars[i] {
            '\\' => {
                i += 1;
                // A trailing backslash stands for itself.
                Token::Literal(chars.get(i).copied().unwrap_or('\\'))
            }
            '?' => Token::AnyChar,
            '*' => {
                // `a**b` is `a*b`; consecutive runs add nothing.
                if tokens.last() == Some(&Token::AnyRun) {
                    i += 1;
                    continue;
                }
                Token::AnyRun
            }
            '[' => {
                let end = class_end(chars, i).ok_or_else(|| GlobError::UnclosedClass {
                    pattern: pattern.to_owned(),
                })?;
                let token = parse_class(&chars[i + 1..end]);
                i = end;
                token
            }
            c => Token::Literal(c),
        };
        tokens.push(token);
        i += 1;
    }
    Ok(tokens)
}

/// Parses the inside of `[..]`.
fn parse_class(inner: &[char]) -> Token {
    let (negated, mut rest) = match inner {
        ['!' | '^', tail @ ..] => (true, tail),
        _ => (false, inner),
    };
    let mut ranges = Vec::new();
    loop {
        let (lo, after) = match rest {
            [] => break,
            ['\\', c, tail @ ..] => (*c, tail),
            [c, tail @ ..] => (*c, tail),
        };
        match after {
            ['-', hi, tail @ ..] if *hi != '\\' || tail.is_empty() => {
                ranges.push((lo, *hi));
                rest = tail;
            }
            ['-', '\\', hi, tail @ ..] => {
                ranges.push((lo, *hi));
                rest = tail;
            }
            _ => {
                ranges.push((lo, lo));
                rest = after;
            }
        }
    }
    Token::Class { negated, ranges }
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
            ("?", "é", true),
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
            ("[\\]]", "]", true),
            ("*.{rs,toml}", "Cargo.toml", true),
            ("*.{rs,toml}", "main.rs", true),
            ("*.{rs,toml}", "main.md", false),
            ("{src,tests}/**/*.rs", "tests/a.rs", true),
            ("{src,tests}/**/*.rs", "benches/a.rs", false),
            ("a{b,c{d,e}}f", "acef", true),
            ("a{b,c{d,e}}f", "acf", false),
            ("a{,b}", "a", true),
            ("[{]", "{", true),
            ("\\{a,b}", "{a,b}", true),
            ("./src/*.rs", "src/a.rs", true),
            ("/src/*.rs", "src/a.rs", true),
            ("src/", "src/a/b.rs", true),
            ("src/", "srcx/a", false),
            ("a//b", "a/b", true),
            ("a/./b", "a/b", true),
            ("*", "", false),
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
        let err = Glob::new("[a/b]").unwrap_err();
        assert!(matches!(err, GlobError::UnclosedClass { .. }));
        let err = Glob::new("*.{rs,toml").unwrap_err();
        assert!(matches!(err, GlobError::UnclosedBrace { .. }));
        assert!(err.to_string().contains("no closing '}'"), "{err}");
        let err = Glob::new(&"{}".repeat(50_000)).unwrap_err();
        assert_eq!(err, GlobError::TooLong { chars: 100_000 });
        let bomb = "{a,b}".repeat(9);
        let err = Glob::new(&bomb).unwrap_err();
        assert!(matches!(err, GlobError::TooManyAlternatives { .. }));
        assert!(Glob::new(&"{a,b}".repeat(8)).is_ok());
        // Stray closers and trailing backslashes are literal.
        assert!(matches("a}", "a}"));
        assert!(matches("a]", "a]"));
        assert!(matches("a\\", "a\\"));
    }

    /// The obvious exponential recursion, as the reference for `match_sequence`.
    fn naive<P: Wildcard, I>(pattern: &[P], items: &[I], one: fn(&P, &I) -> bool) -> bool {
        match pattern.split_first() {
            None => items.is_empty(),
            Some((first, rest)) if first.is_run() => {
                (0..=items.len()).any(|skip| naive(rest, &items[skip..], one))
            }
            Some((first, rest)) => {
                !items.is_empty() && one(first, &items[0]) && naive(rest, &items[1..], one)
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(crate::proptest_seeds::config())]
        #[test]
        fn the_backtracking_matcher_agrees_with_naive_recursion(
            pattern in "[ab?*/]{0,10}",
            path in "[ab/]{0,10}",
        ) {
            let glob = Glob::new(&pattern).unwrap();
            let names: Vec<Vec<char>> = path
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| s.chars().collect())
                .collect();
            let names: Vec<&[char]> = names.iter().map(Vec::as_slice).collect();
            let segments = &glob.alternatives[0];
            let expected = naive(segments, &names, |segment, name| match segment {
                Segment::AnyPath => true,
                Segment::One(tokens) => naive(tokens, name, token_matches),
            });
            proptest::prop_assert_eq!(glob.matches(&path), expected);
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
