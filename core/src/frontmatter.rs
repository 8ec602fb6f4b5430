//! The YAML frontmatter of `AGENT.md` and `SKILL.md` files, shared by [`agent`](crate::agent)
//! and [`skill`](crate::skill).
//!
//! A file with frontmatter starts with a line `---` (after an optional byte-order mark), then
//! YAML, then another line `---`; everything after that line is the body:
//!
//! ```text
//! ---
//! name: reviewer
//! description: Reviews a change for bugs.
//! ---
//! You review code. …
//! ```
//!
//! CRLF line ends are read as LF, in the YAML and in the body alike. The YAML is parsed by a
//! real YAML parser into a typed struct, so quoting, block scalars and comments work as users
//! expect; its errors carry the line in the file. Hostile input is bounded: the YAML may be at
//! most [`MAX_FRONTMATTER_BYTES`], nesting is limited, and the parser refuses documents whose
//! aliases expand to more than a small multiple of their size (the "billion laughs" attack).

use serde::de::DeserializeOwned;
use std::borrow::Cow;

/// The largest frontmatter (the YAML between the `---` lines) accepted, in bytes: 64 KiB.
///
/// A name, a description and a tool map fit in far less; the limit keeps a hostile file from
/// costing much to parse. The body has no limit here.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Why an `AGENT.md` or `SKILL.md` file could not be read. Each message starts with the path.
///
/// The CLI reports such a file and skips it; a bad file is never fatal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The file does not start with a `---` line.
    #[error(
        "{path}: no frontmatter: start the file with a line `---`, then YAML such as \
         `name: …` and `description: …`, then another line `---`"
    )]
    Missing {
        /// The file, as given by the caller.
        path: String,
    },
    /// The opening `---` line has no closing `---` line after it.
    #[error(
        "{path}: the frontmatter opened on line 1 never closes: add a line `---` after the YAML"
    )]
    Unclosed {
        /// The file, as given by the caller.
        path: String,
    },
    /// The YAML between the `---` lines is longer than [`MAX_FRONTMATTER_BYTES`].
    #[error(
        "{path}: the frontmatter is {size} bytes, more than the {limit} allowed: keep the YAML \
         short and put long text in the body"
    )]
    TooLarge {
        /// The file, as given by the caller.
        path: String,
        /// The size of the YAML, in bytes.
        size: usize,
        /// The limit, [`MAX_FRONTMATTER_BYTES`].
        limit: usize,
    },
    /// The YAML is malformed, a field has the wrong type, or the document is too deep or
    /// expands too much through aliases.
    #[error("{path}: invalid frontmatter: {message}")]
    Yaml {
        /// The file, as given by the caller.
        path: String,
        /// The line in the file, when the parser knows it.
        line: Option<usize>,
        /// The parser's message, with the line and column in the file where known.
        message: String,
    },
    /// A required field is absent or empty.
    #[error(
        "{path}: the frontmatter has no `{field}`: add a line `{field}: …` between the `---` lines"
    )]
    MissingField {
        /// The file, as given by the caller.
        path: String,
        /// The field's name.
        field: &'static str,
    },
    /// A field that must be one line (a name) has a line break.
    #[error("{path}: `{field}` must be a single line")]
    MultiLine {
        /// The file, as given by the caller.
        path: String,
        /// The field's name.
        field: &'static str,
    },
}

/// A file split into its frontmatter and its body.
#[derive(Debug)]
pub(crate) struct Parsed<T> {
    /// The frontmatter, decoded.
    pub(crate) meta: T,
    /// Everything after the closing `---` line, without leading blank lines and trailing
    /// whitespace, with LF line ends.
    pub(crate) body: String,
}

/// Splits `text` into frontmatter and body and decodes the frontmatter as `T`.
///
/// `path` is used in error messages only. Empty frontmatter decodes like `{}`.
pub(crate) fn parse<T: DeserializeOwned>(
    text: &str,
    path: &str,
) -> Result<Parsed<T>, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text: Cow<'_, str> = if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    };
    let (yaml, body) = split(&text).map_err(|e| e.at(path))?;
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(FrontmatterError::TooLarge {
            path: path.to_owned(),
            size: yaml.len(),
            limit: MAX_FRONTMATTER_BYTES,
        });
    }
    let meta = decode(yaml, path)?;
    let body = body.trim_start_matches('\n').trim_end().to_owned();
    Ok(Parsed { meta, body })
}

/// Where the split failed, before the path is attached.
enum SplitError {
    Missing,
    Unclosed,
}

impl SplitError {
    fn at(self, path: &str) -> FrontmatterError {
        let path = path.to_owned();
        match self {
            SplitError::Missing => FrontmatterError::Missing { path },
            SplitError::Unclosed => FrontmatterError::Unclosed { path },
        }
    }
}

/// Whether `line` (without its `\n`) is a `---` delimiter; trailing blanks are allowed.
fn is_delimiter(line: &str) -> bool {
    line.trim_end_matches([' ', '\t']) == "---"
}

/// Returns the YAML (the lines between the delimiters) and the rest after the closing line.
fn split(text: &str) -> Result<(&str, &str), SplitError> {
    let (first, rest) = match text.split_once('\n') {
        Some(parts) => parts,
        None if is_delimiter(text) => return Err(SplitError::Unclosed),
        None => return Err(SplitError::Missing),
    };
    if !is_delimiter(first) {
        return Err(SplitError::Missing);
    }
    let mut start = 0;
    loop {
        let (line, next) = match memchr::memchr(b'\n', &rest.as_bytes()[start..]) {
            Some(i) => (&rest[start..start + i], Some(start + i + 1)),
            None => (&rest[start..], None),
        };
        if is_delimiter(line) {
            return Ok((&rest[..start], next.map_or("", |n| &rest[n..])));
        }
        match next {
            Some(n) => start = n,
            None => return Err(SplitError::Unclosed),
        }
    }
}

/// Decodes the YAML, with error lines counted in the file (the YAML starts on line 2).
fn decode<T: DeserializeOwned>(yaml: &str, path: &str) -> Result<T, FrontmatterError> {
    let document = if yaml.trim().is_empty() {
        "{}".to_owned()
    } else {
        // One blank line stands in for the opening `---`, so the parser's line numbers are the
        // file's.
        format!("\n{yaml}")
    };
    serde_norway::from_str(&document).map_err(|err| FrontmatterError::Yaml {
        path: path.to_owned(),
        line: err.location().map(|l| l.line()),
        message: with_hint(err.to_string()),
    })
}

/// Adds advice to the parser's messages that do not say what to do.
fn with_hint(message: String) -> String {
    let hint = if message.contains("while scanning an alias") {
        r#" (a bare `*` starts a YAML alias: quote it, as in `"*": true`)"#
    } else if message.contains("repetition limit exceeded") {
        " (the aliases expand to too much data: write the values out)"
    } else if message.contains("recursion limit exceeded") {
        " (the YAML is nested too deeply)"
    } else {
        ""
    };
    message + hint
}

/// Returns the trimmed value of a required single-line field.
pub(crate) fn required_line(
    value: Option<String>,
    field: &'static str,
    path: &str,
) -> Result<String, FrontmatterError> {
    let value = required(value, field, path)?;
    if value.contains(['\n', '\r']) {
        return Err(FrontmatterError::MultiLine {
            path: path.to_owned(),
            field,
        });
    }
    Ok(value)
}

/// Returns the trimmed value of a required field.
pub(crate) fn required(
    value: Option<String>,
    field: &'static str,
    path: &str,
) -> Result<String, FrontmatterError> {
    match value.as_deref().map(str::trim) {
        Some(v) if !v.is_empty() => Ok(v.to_owned()),
        _ => Err(FrontmatterError::MissingField {
            path: path.to_owned(),
            field,
        }),
    }
}

#[cfg(test)]
mod tests;
