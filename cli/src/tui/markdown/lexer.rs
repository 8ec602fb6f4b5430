//! A small lexer for the languages models write most, far cheaper per line than syntect's
//! Sublime grammars on Oniguruma (about 27 µs a line, see BENCHMARKS.md "tuihl"). One lexer
//! serves every language; each has its keyword tables and its comment and string rules. It
//! only tells keywords, constants, strings, comments and numbers apart, which is what the eye
//! uses in a code block; other languages keep syntect.
//!
//! The lexer works on bytes and cuts only next to ASCII bytes, so every piece is valid UTF-8,
//! and every byte of the line lands in exactly one piece: the text is never changed. Each
//! byte is looked at a bounded number of times, so a line costs time linear in its length.

/// What a piece of code is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Plain,
    Keyword,
    /// `true`, `None`, `null`…
    Constant,
    String,
    Comment,
    Number,
}

/// The languages the lexer knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Rust,
    Python,
    JavaScript,
    Shell,
    Json,
    C,
    Go,
    Java,
}

impl Lang {
    /// The language a fence's info word or a file extension names, if the lexer knows it.
    pub(crate) fn from_token(token: &str) -> Option<Lang> {
        let lang = match token.to_ascii_lowercase().as_str() {
            "rust" | "rs" => Lang::Rust,
            "python" | "py" | "python3" | "py3" | "pyi" => Lang::Python,
            "javascript" | "js" | "jsx" | "mjs" | "cjs" | "typescript" | "ts" | "tsx" | "mts"
            | "cts" => Lang::JavaScript,
            "sh" | "bash" | "shell" | "zsh" | "ksh" => Lang::Shell,
            "json" | "jsonc" | "json5" => Lang::Json,
            "c" | "h" | "cpp" | "c++" | "cc" | "cxx" | "hpp" | "hh" | "hxx" => Lang::C,
            "go" | "golang" => Lang::Go,
            "java" => Lang::Java,
            _ => return None,
        };
        Some(lang)
    }

    fn rules(self) -> &'static Rules {
        match self {
            Lang::Rust => &RUST,
            Lang::Python => &PYTHON,
            Lang::JavaScript => &JAVASCRIPT,
            Lang::Shell => &SHELL,
            Lang::Json => &JSON,
            Lang::C => &C,
            Lang::Go => &GO,
            Lang::Java => &JAVA,
        }
    }
}

/// Whether a language's block comments nest (Rust's do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nesting {
    Flat,
    Nested,
}

/// Whether a quoted string may run on to the next line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    OneLine,
    MultiLine,
}

/// One language's rules. The keyword and constant tables are sorted (a test checks it), so
/// a lookup is a binary search.
struct Rules {
    keywords: &'static [&'static str],
    constants: &'static [&'static str],
    line_comment: &'static str,
    block_comment: Option<(&'static str, &'static str, Nesting)>,
    /// The quotes of strings, with whether such a string may span lines.
    quotes: &'static [(u8, Span)],
    /// Python's `"""` and `'''`.
    triple_quotes: bool,
    /// Rust's `r#"…"#`.
    raw_strings: bool,
    /// Rust's `'a'` against the lifetime `'a`.
    rust_chars: bool,
    /// Shell's `<<EOF` here-documents, and `#` starting a comment only at a word's start.
    shell: bool,
    /// C's `#include` and the like.
    preprocessor: bool,
}

const RUST: Rules = Rules {
    keywords: &[
        "Self", "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else",
        "enum", "extern", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "type",
        "unsafe", "use", "where", "while", "yield",
    ],
    constants: &["None", "Some", "false", "true"],
    line_comment: "//",
    block_comment: Some(("/*", "*/", Nesting::Nested)),
    quotes: &[(b'"', Span::MultiLine)],
    triple_quotes: false,
    raw_strings: true,
    rust_chars: true,
    shell: false,
    preprocessor: false,
};

const PYTHON: Rules = Rules {
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
        "lambda", "match", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
        "with", "yield",
    ],
    constants: &["False", "None", "True", "self"],
    line_comment: "#",
    block_comment: None,
    quotes: &[(b'"', Span::OneLine), (b'\'', Span::OneLine)],
    triple_quotes: true,
    raw_strings: false,
    rust_chars: false,
    shell: false,
    preprocessor: false,
};

const JAVASCRIPT: Rules = Rules {
    keywords: &[
        "abstract",
        "as",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "declare",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "finally",
        "for",
        "from",
        "function",
        "get",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "of",
        "private",
        "protected",
        "public",
        "readonly",
        "return",
        "set",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "try",
        "type",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ],
    constants: &["NaN", "false", "null", "true", "undefined"],
    line_comment: "//",
    block_comment: Some(("/*", "*/", Nesting::Flat)),
    quotes: &[
        (b'"', Span::OneLine),
        (b'\'', Span::OneLine),
        (b'`', Span::MultiLine),
    ],
    triple_quotes: false,
    raw_strings: false,
    rust_chars: false,
    shell: false,
    preprocessor: false,
};

const SHELL: Rules = Rules {
    keywords: &[
        "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if",
        "in", "local", "readonly", "return", "select", "then", "until", "while",
    ],
    constants: &["false", "true"],
    line_comment: "#",
    block_comment: None,
    quotes: &[(b'"', Span::MultiLine), (b'\'', Span::MultiLine)],
    triple_quotes: false,
    raw_strings: false,
    rust_chars: false,
    shell: true,
    preprocessor: false,
};

const JSON: Rules = Rules {
    keywords: &[],
    constants: &["false", "null", "true"],
    // JSONC's comments; plain JSON has none, so they cost nothing there.
    line_comment: "//",
    block_comment: Some(("/*", "*/", Nesting::Flat)),
    quotes: &[(b'"', Span::OneLine)],
    triple_quotes: false,
    raw_strings: false,
    rust_chars: false,
    shell: false,
    preprocessor: false,
};

const C: Rules = Rules {
    keywords: &[
        "auto",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "constexpr",
        "continue",
        "default",
        "delete",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "namespace",
        "new",
        "noexcept",
        "operator",
        "private",
        "protected",
        "public",
        "register",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "try",
        "typedef",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "while",
    ],
    constants: &["NULL", "false", "nullptr", "true"],
    line_comment: "//",
    block_comment: Some(("/*", "*/", Nesting::Flat)),
    quotes: &[(b'"', Span::OneLine), (b'\'', Span::OneLine)],
    triple_quotes: false,
    raw_strings: false,
    rust_chars: false,
    shell: false,
    preprocessor: true,
};

const GO: Rules = Rules {
    keywords: &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
    ],
    constants: &["false", "iota", "nil", "true"],
    line_comment: "//",
    block_comment: Some(("/*", "*/", Nesting::Flat)),
    quotes: &[
        (b'"', Span::OneLine),
        (b'\'', Span::OneLine),
        (b'`', Span::MultiLine),
    ],
    triple_quotes: false,
    raw_strings: false,
    rust_chars: false,
    shell: false,
    preprocessor: false,
};

const JAVA: Rules = Rules {
    keywords: &[
        "abstract",
        "assert",
        "boolean",
        "break",
        "byte",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extends",
        "final",
        "finally",
        "float",
        "for",
        "if",
        "implements",
        "import",
        "instanceof",
        "int",
        "interface",
        "long",
        "new",
        "package",
        "private",
        "protected",
        "public",
        "record",
        "return",
        "short",
        "static",
        "super",
        "switch",
        "synchronized",
        "this",
        "throw",
        "throws",
        "try",
        "var",
        "void",
        "volatile",
        "while",
    ],
    constants: &["false", "null", "true"],
    line_comment: "//",
    block_comment: Some(("/*", "*/", Nesting::Flat)),
    quotes: &[(b'"', Span::OneLine), (b'\'', Span::OneLine)],
    triple_quotes: false,
    raw_strings: false,
    rust_chars: false,
    shell: false,
    preprocessor: false,
};

/// What is still open at the end of a line and colours the start of the next.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Carry {
    #[default]
    Nothing,
    /// A block comment, `depth` deep (Rust's nest).
    Comment { depth: u32 },
    /// A quoted string opened by `quote`, three of them for Python's triple quotes.
    Quoted { quote: u8, triple: bool },
    /// A Rust raw string closed by `"` and `hashes` `#`.
    Raw { hashes: usize },
    /// A shell here-document, ended by a line that is `end` (after tabs with `<<-`).
    HereDoc { end: String },
}

/// Lexes the lines of one block in order, carrying open comments and strings across lines.
#[derive(Debug, Clone)]
pub(crate) struct Lexer {
    lang: Lang,
    carry: Carry,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Lexer {
    pub(crate) fn new(lang: Lang) -> Lexer {
        Lexer {
            lang,
            carry: Carry::Nothing,
        }
    }

    /// Lexes one line (without its line end), handing each piece and its class to `out` in
    /// order; the pieces concatenate to `line`.
    pub(crate) fn line<'a>(&mut self, line: &'a str, mut out: impl FnMut(&'a str, Class)) {
        let rules = self.lang.rules();
        let bytes = line.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        // The start of the plain run not yet handed out.
        let mut plain = 0;
        let mut pending_heredoc: Option<String> = None;
        let mut emit = |from: &mut usize, start: usize, end: usize, class: Class| {
            if *from < start {
                out(&line[*from..start], Class::Plain);
            }
            if start < end {
                out(&line[start..end], class);
            }
            *from = end;
        };
        loop {
            // Finish what the previous line left open.
            match std::mem::take(&mut self.carry) {
                Carry::Nothing => {}
                Carry::Comment { depth } => {
                    let (end, depth) = close_comment(bytes, i, depth, rules);
                    emit(&mut plain, i, end, Class::Comment);
                    i = end;
                    if depth > 0 {
                        self.carry = Carry::Comment { depth };
                    }
                }
                Carry::Quoted { quote, triple } => {
                    let (end, closed) = close_quoted(bytes, i, quote, triple);
                    emit(&mut plain, i, end, Class::String);
                    i = end;
                    if !closed {
                        self.carry = Carry::Quoted { quote, triple };
                    }
                }
                Carry::Raw { hashes } => {
                    let (end, closed) = close_raw(bytes, i, hashes);
                    emit(&mut plain, i, end, Class::String);
                    i = end;
                    if !closed {
                        self.carry = Carry::Raw { hashes };
                    }
                }
                Carry::HereDoc { end } => {
                    let done = line.trim_start_matches('\t') == end;
                    emit(&mut plain, 0, n, Class::String);
                    if !done {
                        self.carry = Carry::HereDoc { end };
                    }
                    return;
                }
            }
            if i >= n || self.carry != Carry::Nothing {
                break;
            }
            let b = bytes[i];
            let rest = &bytes[i..];
            let word_start = i == 0 || !is_ident(bytes[i - 1]);
            if rest.starts_with(rules.line_comment.as_bytes())
                && (!rules.shell || i == 0 || bytes[i - 1].is_ascii_whitespace())
            {
                emit(&mut plain, i, n, Class::Comment);
                i = n;
            } else if let Some((open, _, _)) = rules
                .block_comment
                .filter(|(open, _, _)| rest.starts_with(open.as_bytes()))
            {
                i += open.len();
                let (end, depth) = close_comment(bytes, i, 1, rules);
                let start = i - open.len();
                emit(&mut plain, start, end, Class::Comment);
                i = end;
                if depth > 0 {
                    self.carry = Carry::Comment { depth };
                }
            } else if rules.triple_quotes
                && (rest.starts_with(b"\"\"\"") || rest.starts_with(b"'''"))
            {
                let (end, closed) = close_quoted(bytes, i + 3, b, true);
                emit(&mut plain, i, end, Class::String);
                i = end;
                if !closed {
                    self.carry = Carry::Quoted {
                        quote: b,
                        triple: true,
                    };
                }
            } else if let Some(&(quote, span)) = rules.quotes.iter().find(|(q, _)| *q == b) {
                let (end, closed) = close_quoted(bytes, i + 1, quote, false);
                emit(&mut plain, i, end, Class::String);
                i = end;
                if !closed && span == Span::MultiLine {
                    self.carry = Carry::Quoted {
                        quote,
                        triple: false,
                    };
                }
            } else if rules.rust_chars && b == b'\'' {
                // `'x'`, `'\n'`, `'\u{1F600}'` are characters; `'a` alone is a lifetime.
                let end = rust_char(line, i);
                match end {
                    Some(end) => {
                        emit(&mut plain, i, end, Class::String);
                        i = end;
                    }
                    None => i += 1,
                }
            } else if rules.preprocessor && b == b'#' && line[..i].trim().is_empty() {
                let mut end = i + 1;
                while end < n && is_ident(bytes[end]) {
                    end += 1;
                }
                emit(&mut plain, i, end, Class::Keyword);
                i = end;
            } else if rules.shell && rest.starts_with(b"<<") && !rest.starts_with(b"<<<") {
                let (end, word) = heredoc_word(bytes, i + 2);
                if let Some(word) = word {
                    pending_heredoc = Some(word);
                }
                i = end.max(i + 2);
            } else if b.is_ascii_digit() && word_start {
                let mut end = i + 1;
                while end < n
                    && (is_ident(bytes[end])
                        || (bytes[end] == b'.'
                            && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)))
                {
                    end += 1;
                }
                emit(&mut plain, i, end, Class::Number);
                i = end;
            } else if is_ident_start(b) && word_start {
                let mut end = i + 1;
                while end < n && is_ident(bytes[end]) {
                    end += 1;
                }
                let word = &line[i..end];
                let after = bytes.get(end).copied();
                if rules.raw_strings
                    && (word == "r" || word == "br")
                    && matches!(after, Some(b'"' | b'#'))
                {
                    let mut q = end;
                    while q < n && bytes[q] == b'#' {
                        q += 1;
                    }
                    if q < n && bytes[q] == b'"' {
                        let hashes = q - end;
                        let (close, closed) = close_raw(bytes, q + 1, hashes);
                        emit(&mut plain, i, close, Class::String);
                        i = close;
                        if !closed {
                            self.carry = Carry::Raw { hashes };
                        }
                        continue;
                    }
                }
                let class = if rules.keywords.binary_search(&word).is_ok() {
                    Class::Keyword
                } else if rules.constants.binary_search(&word).is_ok() {
                    Class::Constant
                } else {
                    Class::Plain
                };
                if class != Class::Plain {
                    emit(&mut plain, i, end, class);
                }
                i = end;
            } else {
                i += 1;
                while i < n && !bytes[i].is_ascii() {
                    i += 1;
                }
            }
        }
        emit(&mut plain, n, n, Class::Plain);
        match (pending_heredoc, &self.carry) {
            (Some(end), Carry::Nothing) => self.carry = Carry::HereDoc { end },
            // A string still open wins: the here-document starts after it, if ever.
            (None, _)
            | (
                Some(_),
                Carry::Comment { .. }
                | Carry::Quoted { .. }
                | Carry::Raw { .. }
                | Carry::HereDoc { .. },
            ) => {}
        }
    }
}

/// Scans a block comment from `i`, `depth` deep; returns where it ends (after its close, or
/// the line's end) and the depth still open.
fn close_comment(bytes: &[u8], mut i: usize, mut depth: u32, rules: &Rules) -> (usize, u32) {
    let Some((open, close, nesting)) = rules.block_comment else {
        return (bytes.len(), 0);
    };
    let (open, close) = (open.as_bytes(), close.as_bytes());
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(close) {
            i += close.len();
            depth -= 1;
            if depth == 0 {
                return (i, 0);
            }
        } else if nesting == Nesting::Nested && rest.starts_with(open) {
            i += open.len();
            depth = depth.saturating_add(1);
        } else {
            i += 1;
        }
    }
    (bytes.len(), depth)
}

/// Scans a string from `i` (after its opening quote) to its closing `quote` (three of them
/// when `triple`), skipping escapes; returns where it ends and whether it closed on this line.
fn close_quoted(bytes: &[u8], mut i: usize, quote: u8, triple: bool) -> (usize, bool) {
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' {
            i += 2;
        } else if b == quote {
            if !triple {
                return (i + 1, true);
            }
            if bytes[i..].starts_with(&[quote, quote, quote]) {
                return (i + 3, true);
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    // An escape at the very end may have stepped past it.
    (bytes.len(), false)
}

/// Scans a Rust raw string from `i` (after its `"`) to `"` and `hashes` `#`.
fn close_raw(bytes: &[u8], mut i: usize, hashes: usize) -> (usize, bool) {
    while i < bytes.len() {
        if bytes[i] == b'"' {
            let after = &bytes[i + 1..];
            let run = after
                .iter()
                .take(hashes)
                .take_while(|&&b| b == b'#')
                .count();
            if run == hashes {
                return (i + 1 + hashes, true);
            }
        }
        i += 1;
    }
    (bytes.len(), false)
}

/// The end of a Rust character literal starting at `i` (`'`), or `None` for a lifetime.
fn rust_char(line: &str, i: usize) -> Option<usize> {
    let rest = &line[i + 1..];
    if let Some(esc) = rest.strip_prefix('\\') {
        // An escape: up to the next `'`, within a few characters (`'\u{10FFFF}'`).
        let close = esc.bytes().take(10).position(|b| b == b'\'')?;
        return Some(i + 2 + close + 1);
    }
    let c = rest.chars().next()?;
    let after = i + 1 + c.len_utf8();
    (line.as_bytes().get(after) == Some(&b'\'')).then_some(after + 1)
}

/// The word after a shell `<<` (`EOF`, `-EOF`, `'EOF'`, `"EOF"`): where it ends and the
/// word that will end the here-document.
fn heredoc_word(bytes: &[u8], mut i: usize) -> (usize, Option<String>) {
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    let quote = match bytes.get(i) {
        Some(&q @ (b'\'' | b'"')) => {
            i += 1;
            Some(q)
        }
        _ => None,
    };
    let start = i;
    if !bytes.get(i).copied().is_some_and(is_ident_start) {
        return (start, None);
    }
    while i < bytes.len() && is_ident(bytes[i]) {
        i += 1;
    }
    if i == start {
        return (start, None);
    }
    let word = String::from_utf8_lossy(&bytes[start..i]).into_owned();
    if quote.is_some_and(|q| bytes.get(i) == Some(&q)) {
        i += 1;
    }
    (i, Some(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces of each line, with their classes.
    fn lex(lang: Lang, text: &str) -> Vec<Vec<(String, Class)>> {
        let mut lexer = Lexer::new(lang);
        text.split('\n')
            .map(|l| {
                let mut pieces = Vec::new();
                lexer.line(l, |s, c| pieces.push((s.to_owned(), c)));
                pieces
            })
            .collect()
    }

    /// The class of the first piece that is `piece` exactly.
    fn class_of(lang: Lang, text: &str, piece: &str) -> Class {
        lex(lang, text)
            .into_iter()
            .flatten()
            .find(|(s, _)| s == piece)
            .map(|(_, c)| c)
            .unwrap_or_else(|| panic!("{piece:?} is not one piece of {text:?}"))
    }

    #[test]
    fn tables_are_sorted_for_the_binary_search() {
        for lang in [
            Lang::Rust,
            Lang::Python,
            Lang::JavaScript,
            Lang::Shell,
            Lang::Json,
            Lang::C,
            Lang::Go,
            Lang::Java,
        ] {
            let r = lang.rules();
            assert!(r.keywords.is_sorted(), "{lang:?} keywords");
            assert!(r.constants.is_sorted(), "{lang:?} constants");
        }
    }

    #[test]
    fn rust() {
        let l = Lang::Rust;
        let src = "pub fn f<'a>(x: &'a str) -> u8 { let c = '\\n'; 0x1F // end";
        assert_eq!(class_of(l, src, "fn"), Class::Keyword);
        assert_eq!(class_of(l, src, "let"), Class::Keyword);
        assert_eq!(class_of(l, src, "'\\n'"), Class::String);
        assert_eq!(class_of(l, src, "0x1F"), Class::Number);
        assert_eq!(class_of(l, src, "// end"), Class::Comment);
        assert_eq!(class_of(l, "x = true;", "true"), Class::Constant);
        assert_eq!(class_of(l, "s = \"a\\\"b\";", "\"a\\\"b\""), Class::String);
        // A lifetime is not a character.
        assert!(lex(l, src)[0].iter().all(|(s, _)| !s.starts_with("'a>")));
        // Raw strings span lines and end only at their own hashes.
        let lines = lex(l, "let s = r#\"a \"quote\"\nstill\"# + 1;");
        assert_eq!(
            lines[0].last().unwrap(),
            &("r#\"a \"quote\"".into(), Class::String)
        );
        assert_eq!(lines[1][0], ("still\"#".into(), Class::String));
        assert!(lines[1].contains(&("1".into(), Class::Number)));
        // Block comments nest.
        let lines = lex(l, "/* a /* b */\nc */ fn");
        assert_eq!(lines[1][0], ("c */".into(), Class::Comment));
        assert_eq!(lines[1].last().unwrap(), &("fn".into(), Class::Keyword));
        // A keyword inside a word is not one.
        assert!(
            lex(l, "format_fn")[0]
                .iter()
                .all(|(_, c)| *c == Class::Plain)
        );
        assert_eq!(class_of(l, "x1 = 1.5e3;", "1.5e3"), Class::Number);
    }

    #[test]
    fn python() {
        let l = Lang::Python;
        let src = "def f(x): return None  # done";
        assert_eq!(class_of(l, src, "def"), Class::Keyword);
        assert_eq!(class_of(l, src, "None"), Class::Constant);
        assert_eq!(class_of(l, src, "# done"), Class::Comment);
        assert_eq!(class_of(l, "x = 'a#b'", "'a#b'"), Class::String);
        assert_eq!(class_of(l, "x = 42", "42"), Class::Number);
        let lines = lex(l, "s = \"\"\"doc\nif 'x' \"\nend\"\"\" if");
        assert_eq!(lines[1], [("if 'x' \"".into(), Class::String)]);
        assert_eq!(lines[2][0], ("end\"\"\"".into(), Class::String));
        assert_eq!(lines[2].last().unwrap(), &("if".into(), Class::Keyword));
        // An unclosed one-line string does not run on.
        let lines = lex(l, "x = 'open\nif");
        assert_eq!(lines[1], [("if".into(), Class::Keyword)]);
    }

    #[test]
    fn javascript() {
        let l = Lang::JavaScript;
        let src = "const x = await f(null, 3); /* c */ // d";
        assert_eq!(class_of(l, src, "const"), Class::Keyword);
        assert_eq!(class_of(l, src, "await"), Class::Keyword);
        assert_eq!(class_of(l, src, "null"), Class::Constant);
        assert_eq!(class_of(l, src, "3"), Class::Number);
        assert_eq!(class_of(l, src, "/* c */"), Class::Comment);
        assert_eq!(class_of(l, src, "// d"), Class::Comment);
        let lines = lex(l, "s = `a\n${b} if\n` + 1");
        assert_eq!(lines[1], [("${b} if".into(), Class::String)]);
        assert_eq!(lines[2][0], ("`".into(), Class::String));
    }

    #[test]
    fn shell() {
        let l = Lang::Shell;
        let src = "if [ -f a#b ]; then echo \"$x\" 'y' # c";
        assert_eq!(class_of(l, src, "if"), Class::Keyword);
        assert_eq!(class_of(l, src, "then"), Class::Keyword);
        assert_eq!(class_of(l, src, "\"$x\""), Class::String);
        assert_eq!(class_of(l, src, "'y'"), Class::String);
        assert_eq!(class_of(l, src, "# c"), Class::Comment);
        // `#` inside a word is not a comment.
        assert!(lex(l, "a#b")[0].iter().all(|(_, c)| *c == Class::Plain));
        let lines = lex(l, "cat <<-'EOF' > f\nif 'x' then\n\tEOF\nfi");
        assert_eq!(lines[1], [("if 'x' then".into(), Class::String)]);
        assert_eq!(lines[2], [("\tEOF".into(), Class::String)]);
        assert_eq!(lines[3], [("fi".into(), Class::Keyword)]);
    }

    #[test]
    fn json() {
        let l = Lang::Json;
        let src = "{\"a\": [1.5, -2e3, true, null, \"x\\\"y\"]}";
        assert_eq!(class_of(l, src, "\"a\""), Class::String);
        assert_eq!(class_of(l, src, "1.5"), Class::Number);
        assert_eq!(class_of(l, src, "2e3"), Class::Number);
        assert_eq!(class_of(l, src, "true"), Class::Constant);
        assert_eq!(class_of(l, src, "null"), Class::Constant);
        assert_eq!(class_of(l, src, "\"x\\\"y\""), Class::String);
    }

    #[test]
    fn c_go_java() {
        assert_eq!(
            class_of(Lang::C, "#include <stdio.h>", "#include"),
            Class::Keyword
        );
        assert_eq!(class_of(Lang::C, "int x = 'a';", "int"), Class::Keyword);
        assert_eq!(class_of(Lang::C, "int x = 'a';", "'a'"), Class::String);
        assert_eq!(
            class_of(Lang::Go, "func f() { return nil }", "func"),
            Class::Keyword
        );
        assert_eq!(
            class_of(Lang::Go, "func f() { return nil }", "nil"),
            Class::Constant
        );
        let lines = lex(Lang::Go, "s := `a\nif`");
        assert_eq!(lines[1], [("if`".into(), Class::String)]);
        assert_eq!(
            class_of(Lang::Java, "public class A {}", "class"),
            Class::Keyword
        );
        let lines = lex(Lang::Java, "/* a\nb */ int");
        assert_eq!(lines[1][0], ("b */".into(), Class::Comment));
    }

    #[test]
    fn hostile_input_ends_and_keeps_the_text() {
        let huge = "\"\\".repeat(500_000);
        let cases = [
            huge.as_str(),
            "\\",
            "\"unterminated",
            "/* open",
            "r#####\"",
            "'",
            "'\\",
            "<<",
            "<<'",
            "\u{0}\u{1b}[31m\u{7f}",
            "é'ü'ñ\"ç",
        ];
        for lang in [
            Lang::Rust,
            Lang::Python,
            Lang::Shell,
            Lang::C,
            Lang::JavaScript,
        ] {
            for case in cases {
                let mut lexer = Lexer::new(lang);
                for _ in 0..2 {
                    let mut out = String::new();
                    lexer.line(case, |s, _| out.push_str(s));
                    assert_eq!(out, case, "{lang:?}");
                }
            }
        }
        let deep = "/*".repeat(300_000);
        let mut lexer = Lexer::new(Lang::Rust);
        let mut out = String::new();
        lexer.line(&deep, |s, _| out.push_str(s));
        assert_eq!(out, deep);
        assert_eq!(lexer.carry, Carry::Comment { depth: 300_000 });
    }

    proptest::proptest! {
        #[test]
        fn pieces_concatenate_to_the_line(
            lines in proptest::collection::vec("[ -~\\t\u{e9}\u{1F600}\\\\\"'`#/*<r]{0,60}", 1..6),
            lang in 0usize..8,
        ) {
            let lang = [
                Lang::Rust, Lang::Python, Lang::JavaScript, Lang::Shell,
                Lang::Json, Lang::C, Lang::Go, Lang::Java,
            ][lang];
            let mut lexer = Lexer::new(lang);
            for line in &lines {
                let mut out = String::new();
                lexer.line(line, |s, _| {
                    assert!(!s.is_empty());
                    out.push_str(s);
                });
                proptest::prop_assert_eq!(&out, line);
            }
        }
    }
}
