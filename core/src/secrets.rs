//! The secrets hrns knows (provider keys, secret header values, later MCP env and header
//! secrets) and the one function that takes them out of any text before it leaves: printed,
//! logged, recorded, saved, or sent to the model.
//!
//! [`Secrets::redact`] replaces a whole secret and also any fragment of one that is
//! [`FRAGMENT`] bytes or longer, so a key cut in half by a truncation (`sk-proj-abcd…`) is still
//! hidden whichever happened first; callers should still redact before they truncate. Secrets
//! shorter than [`MIN_SECRET`] bytes are ignored: they would hide ordinary words.
//!
//! Matching ignores ASCII case. Keys are case-sensitive tokens, but a server may echo one
//! case-folded (an error body that lower-cases what it quotes), and a key in lower case still
//! gives away nearly all of it; a random key's 8-byte piece in another case is no more likely
//! to turn up in ordinary text than in its own.

use crate::http::{Secret, is_sensitive_header};
use crate::session::Provider;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

mod pieces;
pub use pieces::{Ending, Pieces};

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The shortest secret that is redacted, in bytes.
pub const MIN_SECRET: usize = 4;

/// The shortest fragment of a secret that is redacted on its own, in bytes.
pub const FRAGMENT: usize = 8;

/// A set of secret values. Its `Debug` shows only how many there are.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// The values, longest first (so a secret containing another is replaced whole).
    values: Vec<String>,
    /// Every [`FRAGMENT`]-byte window of every value at least that long.
    windows: HashSet<[u8; FRAGMENT]>,
    /// The first two bytes of every window, one bit per pair: redaction runs on everything
    /// printed, and this rules out nearly every position of ordinary text before the window
    /// is hashed.
    pairs: PairSet,
    /// Every two consecutive bytes of every window: where the last two bytes of a window are
    /// not such a pair, no window containing them can match, and the search skips past them
    /// (seven positions at once) instead of looking at each.
    inner: PairSet,
    /// Every proper prefix of every window and of every value shorter than a window: the
    /// tails of a piece of text that the next piece could complete into something hidden
    /// ([`Pieces`]).
    starts: HashSet<Vec<u8>>,
}

/// A set of byte pairs, one bit each (empty until the first insertion).
#[derive(Clone, Default, PartialEq, Eq)]
struct PairSet(Vec<u64>);

impl PairSet {
    /// Adds the pair, ASCII letters in either case.
    fn insert(&mut self, a: u8, b: u8) {
        if self.0.is_empty() {
            self.0 = vec![0; 65536 / 64];
        }
        let i = usize::from(a.to_ascii_lowercase()) << 8 | usize::from(b.to_ascii_lowercase());
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn contains(&self, a: u8, b: u8) -> bool {
        let i = usize::from(a.to_ascii_lowercase()) << 8 | usize::from(b.to_ascii_lowercase());
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Secrets::default()
    }

    /// The provider's key, the values of its sensitive headers (`authorization`, `api-key`,
    /// anything with `token` or `secret` in its name; see [`is_sensitive_header`]), and the
    /// secrets its base URL carries ([`url_secrets`](crate::url_secrets::url_secrets)).
    pub fn of_provider(provider: &Provider) -> Self {
        let mut secrets = Secrets::new();
        secrets.add_secret(provider.api_key.as_ref());
        for (name, value) in &provider.headers {
            if is_sensitive_header(name) {
                secrets.add(value);
                // `Bearer KEY`: the key alone too.
                if let Some((_, token)) = value.split_once(' ') {
                    secrets.add(token);
                }
            }
        }
        // A password or credentials written into the URL itself.
        for value in crate::url_secrets::url_secrets(&provider.base_url) {
            secrets.add(&value);
        }
        secrets
    }

    /// Adds one value (surrounding whitespace trimmed); too short or empty values are ignored.
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        if value.len() < MIN_SECRET || self.values.iter().any(|v| v == value) {
            return;
        }
        // Windows and starts are kept in lower case: matching ignores ASCII case.
        let lower = value.to_ascii_lowercase();
        if value.len() < FRAGMENT {
            for len in 1..value.len() {
                self.starts.insert(lower.as_bytes()[..len].to_vec());
            }
        }
        for window in lower.as_bytes().windows(FRAGMENT) {
            let mut w = [0u8; FRAGMENT];
            w.copy_from_slice(window);
            for len in 1..FRAGMENT {
                self.starts.insert(w[..len].to_vec());
            }
            self.windows.insert(w);
            self.pairs.insert(w[0], w[1]);
            for pair in w.windows(2) {
                self.inner.insert(pair[0], pair[1]);
            }
        }
        self.values.push(value.to_owned());
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    /// Adds a [`Secret`], if there is one.
    pub fn add_secret(&mut self, secret: Option<&Secret>) {
        if let Some(secret) = secret {
            self.add(secret.expose());
        }
    }

    /// Adds all of `other`.
    pub fn extend(&mut self, other: &Secrets) {
        for v in &other.values {
            self.add(v);
        }
    }

    /// The values as a JSON string holds them (`"` as `\"`, `\` as `\\`, controls
    /// escaped), for those that JSON changes: text redacted after it was encoded as JSON (a
    /// JSON line, a session file) must look for these too.
    pub fn json_forms(&self) -> Secrets {
        let mut forms = Secrets::new();
        for value in &self.values {
            if let Ok(quoted) = serde_json::to_string(value) {
                let escaped = &quoted[1..quoted.len() - 1];
                if escaped != value {
                    forms.add(escaped);
                }
            }
        }
        forms
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret, and every fragment of [`FRAGMENT`] bytes or more of one,
    /// replaced by [`REDACTED`]. Borrowed when there is nothing to replace.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut hidden = Vec::new();
        self.mark(text.as_bytes(), &mut hidden);
        render(text, &mut hidden, &mut false)
    }

    /// Marks in `hidden` every byte of `bytes` covered by a whole secret or a fragment
    /// window. `hidden` is either empty (nothing marked yet; it is sized at the first mark)
    /// or as long as `bytes`.
    fn mark(&self, bytes: &[u8], hidden: &mut Vec<bool>) {
        let mut mark = |start: usize, len: usize| {
            if hidden.is_empty() {
                hidden.resize(bytes.len(), false);
            }
            hidden[start..start + len]
                .iter_mut()
                .for_each(|h| *h = true);
        };
        // A value of `FRAGMENT` bytes or more is covered by its own windows below, which mark
        // the same bytes; only shorter values are searched for whole.
        for value in self.values.iter().filter(|v| v.len() < FRAGMENT) {
            let value = value.as_bytes();
            let (lower, upper) = (value[0].to_ascii_lowercase(), value[0].to_ascii_uppercase());
            let mut from = 0;
            while let Some(at) = memchr::memchr2(lower, upper, &bytes[from..]) {
                let start = from + at;
                if bytes
                    .get(start..start + value.len())
                    .is_some_and(|b| b.eq_ignore_ascii_case(value))
                {
                    mark(start, value.len());
                }
                from = start + 1;
            }
        }
        if !self.windows.is_empty() {
            let mut start = 0;
            while let Some(window) = bytes.get(start..start + FRAGMENT) {
                // Every window starting in `start..=last` contains the bytes at `last` and
                // `last + 1`: when no secret has them side by side, none of those windows
                // can match.
                let last = start + FRAGMENT - 2;
                if !self.inner.contains(bytes[last], bytes[last + 1]) {
                    start = last + 1;
                    continue;
                }
                if self.pairs.contains(window[0], window[1]) {
                    let mut w = [0u8; FRAGMENT];
                    w.copy_from_slice(window);
                    w.make_ascii_lowercase();
                    if self.windows.contains(&w) {
                        mark(start, FRAGMENT);
                    }
                }
                start += 1;
            }
        }
    }

    /// Where the tail of `text` that could be the start of something hidden begins (a proper
    /// prefix of a window or of a short value, so at most `FRAGMENT - 1` bytes, moved back to
    /// a character boundary); `text.len()` when there is none.
    fn hold_from(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        if self.starts.is_empty() {
            return bytes.len();
        }
        // The longest such tail: a shorter one inside it is held with it. Starts are kept in
        // lower case.
        let first = bytes.len().saturating_sub(FRAGMENT - 1);
        let mut tail = [0u8; FRAGMENT - 1];
        let tail = &mut tail[..bytes.len() - first];
        tail.copy_from_slice(&bytes[first..]);
        tail.make_ascii_lowercase();
        match (first..bytes.len()).find(|&at| self.starts.contains(&tail[at - first..])) {
            Some(mut at) => {
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                at
            }
            None => bytes.len(),
        }
    }

    /// [`redact`](Self::redact) for an owned string.
    pub fn redact_string(&self, text: String) -> String {
        match self.redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(redacted) => redacted,
        }
    }

    /// Redacts every string (keys included) in a JSON value.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => *s = self.redact_string(std::mem::take(s)),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (k, mut v) in entries {
                    self.redact_json(&mut v);
                    map.insert(self.redact_string(k), v);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// `text` with each run of `hidden` bytes (empty: none) replaced by one [`REDACTED`]; a run
/// that starts or ends inside a character takes the whole character. `open` says whether
/// the byte before `text` was hidden (a run that goes on is not announced twice) and is left
/// saying whether the last byte of `text` was.
fn render<'a>(text: &'a str, hidden: &mut [bool], open: &mut bool) -> Cow<'a, str> {
    let bytes = text.as_bytes();
    if hidden.is_empty() || !hidden.contains(&true) {
        if !text.is_empty() {
            *open = false;
        }
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if hidden[i] {
            let mut end = i;
            while end < bytes.len() && (hidden[end] || !text.is_char_boundary(end)) {
                end += 1;
            }
            if !(i == 0 && *open) {
                out.push_str(REDACTED);
            }
            i = end;
            *open = true;
        } else {
            let mut end = i;
            while end < bytes.len() && !hidden[end] {
                end += 1;
            }
            // A hidden run starting inside a character swallows the whole character.
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            if end == i {
                // The character at `i` is partly hidden.
                hidden[i] = true;
                continue;
            }
            out.push_str(&text[i..end]);
            i = end;
            *open = false;
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
