//! Chunk envelopes: the fast path for the chunks that make up almost all of a stream.
//!
//! Providers wrap each token in the same JSON around it: an id, a model, a timestamp, one
//! choice, and a delta with one string field. Once a chunk of that shape has been parsed in
//! full, its bytes before and after the varying string (the envelope) are remembered; a later
//! chunk with the same envelope byte for byte differs only in that string, so it can be applied
//! without parsing the rest again. The string is still validated as a JSON string (no
//! unescaped quote or control character; escapes decoded as serde_json would), and anything that
//! does not fit goes the full way. The result is identical to a full parse by construction.

use crate::chunk::{ArgumentsView, ChunkView, ContentView, Str};
use std::borrow::Cow;

/// Where the varying string of an envelope goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Appended to the choice's content.
    Content,
    /// Appended to the choice's reasoning.
    Reasoning,
    /// Appended to the arguments of the choice's tool call with this provider index.
    Arguments(u32),
}

/// One remembered envelope.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    prefix: String,
    suffix: String,
    choice: u32,
    slot: Slot,
    /// A second varying string at the chunk's end, such as OpenAI's per-chunk `obfuscation`
    /// padding: `prefix`, the token, `tail.mid`, the tail's text, `suffix`.
    tail: Option<Tail>,
    /// The chunk's unknown fields with scalar values (`service_tier`, `provider`, …): a full
    /// parse sets them again on every chunk, so the fast path does too.
    constants: Vec<(String, serde_json::Value)>,
}

/// The last field of a chunk whose string value varies from chunk to chunk.
#[derive(Debug, Clone, PartialEq)]
struct Tail {
    /// The field's name.
    key: String,
    /// The bytes from the token's closing quote to the tail's opening quote.
    mid: String,
}

/// How many envelopes are remembered (content, reasoning, arguments, a second choice).
const CAPACITY: usize = 4;

/// The envelopes of the stream so far.
#[derive(Debug, Default)]
pub(crate) struct Envelopes {
    list: Vec<Envelope>,
    next: usize,
    /// The position of the envelope that matched last.
    hint: usize,
}

/// What varies in a chunk recognised by its envelope (`'a` the chunk's bytes).
#[derive(Debug)]
pub(crate) struct Token<'a> {
    /// The decoded string.
    pub(crate) text: Cow<'a, str>,
    /// The tail field's new text, when the envelope has a tail.
    pub(crate) tail: Option<&'a str>,
    /// The chunk's length in bytes.
    pub(crate) len: usize,
}

impl Envelopes {
    /// The envelope of `json` and its token when `json` has a known envelope and its middle
    /// is one valid JSON string; `None` sends the chunk the full way.
    ///
    /// `json` is raw bytes: the envelope was valid UTF-8 when it was learned and is compared
    /// byte for byte, and its ends are ASCII quotes, so the chunk is valid UTF-8 exactly when
    /// its middle is; only the middle is checked. A middle that is not valid UTF-8 goes the
    /// full way (which decodes it lossily).
    #[inline]
    pub(crate) fn recognise<'a>(&mut self, json: &'a [u8]) -> Option<(&Envelope, Token<'a>)> {
        match self.find_at(json)? {
            (env, token) if token.len == json.len() => Some((env, token)),
            _ => None,
        }
    }

    /// [`recognise`](Self::recognise) for a chunk at the start of `bytes`, whose end is not
    /// known yet (SSE framing follows it). The token ends at its first unescaped quote, so a
    /// chunk whose middle is one JSON string is found exactly.
    #[inline]
    pub(crate) fn find_at<'a>(&mut self, bytes: &'a [u8]) -> Option<(&Envelope, Token<'a>)> {
        // The envelope that matched last is the likely one (the others fail at the first
        // differing byte). Kept by `&mut self`, not a `Cell`, so that the stream stays `Sync`.
        let hint = self.hint;
        if let Some(env) = self.list.get(hint) {
            if let Some(token) = env.token_at(bytes) {
                return Some((env, token));
            }
        }
        for (i, env) in self.list.iter().enumerate() {
            if i != hint {
                if let Some(token) = env.token_at(bytes) {
                    self.hint = i;
                    return Some((env, token));
                }
            }
        }
        None
    }

    /// Remembers the envelope of a fully parsed chunk when it has the one-string shape: one
    /// choice, no finish reason or other choice fields, and a delta with only content, only
    /// reasoning, or only one tool call's argument fragment (with its index), nothing unknown in
    /// the choice or the delta, unknown chunk fields only with scalar values, and the string
    /// borrowed from `json` (so its place is known).
    pub(crate) fn learn(&mut self, json: &str, view: &ChunkView<'_>) {
        if let Some((prefix_end, suffix_start, choice, slot)) = shape(json, view) {
            let Some((tail, suffix_start, constants)) = chunk_fields(json, view, suffix_start)
            else {
                return;
            };
            let env = Envelope {
                prefix: json[..prefix_end].to_owned(),
                suffix: json[suffix_start..].to_owned(),
                choice,
                slot,
                tail,
                constants,
            };
            // An envelope with a line end in its JSON whitespace could only have come from
            // data of several lines; it is not kept, so that an envelope found in raw SSE
            // input is always inside one `data` line.
            let line_end = |s: &str| s.contains(['\n', '\r']);
            if line_end(&env.prefix)
                || line_end(&env.suffix)
                || env.tail.as_ref().is_some_and(|t| line_end(&t.mid))
            {
                return;
            }
            if self
                .list
                .iter()
                .any(|e| e.prefix == env.prefix && e.suffix == env.suffix && e.tail == env.tail)
            {
                return;
            }
            if self.list.len() < CAPACITY {
                self.list.push(env);
            } else {
                self.list[self.next] = env;
                self.next = (self.next + 1) % CAPACITY;
            }
        }
    }
}

impl Envelope {
    /// The choice index of its chunks.
    pub(crate) fn choice(&self) -> u32 {
        self.choice
    }

    /// Where its chunks' string goes.
    pub(crate) fn slot(&self) -> Slot {
        self.slot
    }

    /// The chunk-level fields a full parse sets on each of its chunks, with their values.
    pub(crate) fn constants(&self) -> &[(String, serde_json::Value)] {
        &self.constants
    }

    /// The name of its tail field, if it has one.
    pub(crate) fn tail_key(&self) -> Option<&str> {
        self.tail.as_ref().map(|t| t.key.as_str())
    }

    /// The token of the chunk at the start of `bytes` when the chunk is in this envelope.
    #[inline]
    pub(crate) fn token_at<'a>(&self, bytes: &'a [u8]) -> Option<Token<'a>> {
        let body = bytes.strip_prefix(self.prefix.as_bytes())?;
        let token = JsonString::scan(body)?;
        let mut at = token.end;
        let mut tail = None;
        if let Some(t) = &self.tail {
            // `mid`, then the tail's text, which must need no decoding.
            let rest = body[at..].strip_prefix(t.mid.as_bytes())?;
            let text = JsonString::scan(rest)?;
            if text.escaped {
                return None;
            }
            tail = Some(std::str::from_utf8(&rest[..text.end]).ok()?);
            at += t.mid.len() + text.end;
        }
        if !body[at..].starts_with(self.suffix.as_bytes()) {
            return None;
        }
        let text = if token.escaped {
            match unescape(&body[..token.end]) {
                Some(text) => Cow::Owned(text),
                None => {
                    // Decode the token with its quotes; invalid UTF-8 fails to parse.
                    let quoted = &bytes[self.prefix.len() - 1..self.prefix.len() + token.end + 1];
                    Cow::Owned(serde_json::from_slice::<String>(quoted).ok()?)
                }
            }
        } else {
            Cow::Borrowed(std::str::from_utf8(&body[..token.end]).ok()?)
        };
        Some(Token {
            text,
            tail,
            len: self.prefix.len() + at + self.suffix.len(),
        })
    }
}

/// The body of a JSON string up to its closing quote, scanned once.
struct JsonString {
    /// The index of the first unescaped quote.
    end: usize,
    /// It holds a backslash escape (to be decoded).
    escaped: bool,
}

impl JsonString {
    /// Scans the string that `bytes` starts inside (after its opening quote); `None` when it
    /// does not end in `bytes` or holds a control character (not valid JSON).
    ///
    /// Eight bytes at a time (tokens are short; a call to `memchr` would cost more than the
    /// token): [`special`] marks the quotes, backslashes and control characters of a word.
    #[inline]
    fn scan(bytes: &[u8]) -> Option<JsonString> {
        let mut escaped = false;
        let mut at = 0;
        loop {
            let found = match bytes.get(at..at + 8) {
                Some(word) => {
                    let word = u64::from_le_bytes(word.try_into().ok()?);
                    match special(word) {
                        0 => {
                            at += 8;
                            continue;
                        }
                        marks => at + (marks.trailing_zeros() / 8) as usize,
                    }
                }
                // The last few bytes, one at a time.
                None => {
                    at + bytes
                        .get(at..)?
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?
                }
            };
            match bytes[found] {
                b'"' => {
                    return Some(JsonString {
                        end: found,
                        escaped,
                    });
                }
                b'\\' => {
                    escaped = true;
                    at = found + 2;
                }
                _ => return None,
            }
        }
    }
}

/// Decodes the body of a JSON string with escapes as serde_json does, for the escapes tokens
/// carry (`\n`, `\"`, `\u00e9`, …); `None` leaves the rest to serde_json (a surrogate pair,
/// anything invalid), which costs several times as much.
fn unescape(body: &[u8]) -> Option<String> {
    let mut rest = std::str::from_utf8(body).ok()?;
    let mut out = String::with_capacity(rest.len());
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let (c, len) = match *rest.as_bytes().get(at + 1)? {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'/' => ('/', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let hex = rest.get(at + 2..at + 6)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                // A surrogate is no `char`: serde_json pairs it.
                (char::from_u32(u32::from_str_radix(hex, 16).ok()?)?, 6)
            }
            _ => return None,
        };
        out.push(c);
        rest = &rest[at + len..];
    }
    out.push_str(rest);
    Some(out)
}

/// The high bit of each byte of `word` (little-endian) that is a quote, a backslash or a
/// control character, and perhaps of some bytes after the first such one: the lowest set bit
/// is always exact (a borrow only runs towards higher bytes).
#[inline]
fn special(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (zero(quote) | zero(backslash) | control) & HIGH
}

/// The span of the one varying string and where it goes, if the chunk has the shape.
fn shape(json: &str, view: &ChunkView<'_>) -> Option<(usize, usize, u32, Slot)> {
    if view.error.is_some() || view.usage.is_some() || view.message.is_some() {
        return None;
    }
    if view.object.as_deref() == Some("error") {
        return None;
    }
    let [choice] = view.choices.as_deref()? else {
        return None;
    };
    if choice.message.is_some()
        || choice.logprobs.is_some()
        || choice.usage.is_some()
        || !choice.extra.is_empty()
        || choice
            .finish_reason
            .as_deref()
            .is_some_and(|f| !f.is_empty())
    {
        return None;
    }
    let d = choice.delta.as_ref()?;
    if d.role.is_some() || d.refusal.is_some() || d.function_call.is_some() || !d.extra.is_empty() {
        return None;
    }
    let (s, slot): (&Str<'_>, Slot) = match (
        &d.content,
        &d.reasoning_content,
        &d.reasoning,
        &d.tool_calls,
    ) {
        (Some(ContentView::Text(s)), None, None, None) => (s, Slot::Content),
        (None, Some(s), None, None) | (None, None, Some(s), None) => (s, Slot::Reasoning),
        (None, None, None, Some(calls)) => {
            let [call] = calls.as_slice() else {
                return None;
            };
            let f = call.function.as_ref()?;
            if call.id.is_some()
                || call.kind.is_some()
                || !call.extra.is_empty()
                || f.name.is_some()
                || !f.extra.is_empty()
            {
                return None;
            }
            match (&f.arguments, call.index) {
                (Some(ArgumentsView::Text(s)), Some(ix)) => (s, Slot::Arguments(ix)),
                _ => return None,
            }
        }
        _ => return None,
    };
    let Cow::Borrowed(text) = &s.0 else {
        return None;
    };
    // The string lies inside `json`; find its place from the pointers.
    let start = (text.as_ptr() as usize).checked_sub(json.as_ptr() as usize)?;
    let end = start + text.len();
    let bytes = json.as_bytes();
    if end >= bytes.len() || start == 0 || bytes[start - 1] != b'"' || bytes[end] != b'"' {
        return None;
    }
    Some((start, end, choice.index.unwrap_or(0), slot))
}

/// The chunk's unknown fields, when every one has a scalar value: the last one, when it is a
/// string after the token that ends the chunk, becomes the tail (`suffix_start` then moves to
/// its closing quote); the others are constants. `None` when a value is an array or object (a
/// full parse appends or merges those, which a fast path cannot repeat).
#[allow(clippy::type_complexity)]
fn chunk_fields(
    json: &str,
    view: &ChunkView<'_>,
    suffix_start: usize,
) -> Option<(Option<Tail>, usize, Vec<(String, serde_json::Value)>)> {
    let mut constants = Vec::with_capacity(view.extra.len());
    let mut tail = None;
    let mut suffix_start = suffix_start;
    for (i, (key, raw)) in view.extra.iter().enumerate() {
        let text = raw.get();
        if text.starts_with(['[', '{']) {
            return None;
        }
        let start = (text.as_ptr() as usize).checked_sub(json.as_ptr() as usize)?;
        let end = start + text.len();
        let last = i + 1 == view.extra.len();
        if last
            && text.len() >= 2
            && text.starts_with('"')
            && start > suffix_start
            && json[end..].trim_end() == "}"
            && !text[1..text.len() - 1].contains(['\\', '"'])
        {
            tail = Some(Tail {
                key: key.to_string(),
                mid: json[suffix_start..start + 1].to_owned(),
            });
            suffix_start = end - 1;
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        if !value.is_null() {
            constants.push((key.to_string(), value));
        }
    }
    Some((tail, suffix_start, constants))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk;

    fn learned(json: &str) -> Envelopes {
        let mut e = Envelopes::default();
        e.learn(json, &chunk::parse(json).unwrap());
        e
    }

    const C: &str = r#"{"id":"x","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"created":1}"#;

    #[test]
    fn a_learned_envelope_recognises_the_same_shape() {
        let mut e = learned(C);
        let world = C.replace("Hello", " world");
        let (env, token) = e.recognise(world.as_bytes()).unwrap();
        assert_eq!(
            (env.choice(), env.slot(), &*token.text),
            (0, Slot::Content, " world")
        );
        let escaped = C.replace("Hello", r#"a\"b\u00e9\n"#);
        let (_, token) = e.recognise(escaped.as_bytes()).unwrap();
        assert_eq!(&*token.text, "a\"bé\n");
        assert_eq!(
            &*e.recognise(C.replace("Hello", "").as_bytes())
                .unwrap()
                .1
                .text,
            ""
        );
    }

    #[test]
    fn anything_else_goes_the_full_way() {
        let mut e = learned(C);
        for other in [
            C.replace("Hello", r#"a","role":"x"#),
            C.replace("Hello", r#"a\"#),
            C.replace("Hello", "a\nb"),
            C.replace("Hello", r#"a\\"b"#),
            C.replace("\"created\":1", "\"created\":2"),
            C.replace("null", "\"stop\""),
        ] {
            assert!(e.recognise(other.as_bytes()).is_none(), "{other}");
        }
    }

    /// OpenAI's chunks end in a per-chunk random `obfuscation` string and carry a constant
    /// `service_tier`: the envelope takes the first as its tail and the second as a constant.
    const O: &str = r#"{"id":"x","service_tier":"default","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"obfuscation":"Ab3"}"#;

    #[test]
    fn a_varying_last_string_and_scalar_fields_are_learned() {
        let mut e = learned(O);
        let env = &e.list[0];
        assert_eq!(env.tail.as_ref().unwrap().key, "obfuscation");
        assert_eq!(
            env.constants,
            vec![("service_tier".to_owned(), serde_json::json!("default"))]
        );
        for (token, pad) in [(" world", "zZ9q"), ("", ""), (r#"a\"b\\"#, "x"), ("é", "P")] {
            let json = O.replace("Hello", token).replace("Ab3", pad);
            let (env, found) = e.recognise(json.as_bytes()).expect(&json);
            let want: String = serde_json::from_str(&format!("\"{token}\"")).unwrap();
            assert_eq!(&*found.text, want);
            assert_eq!(
                (env.tail_key(), found.tail),
                (Some("obfuscation"), Some(pad))
            );
        }
        for other in [
            O.replace("Ab3", r#"a\nb"#),
            O.replace("Ab3", r#"a","x":"b"#),
            O.replace("Hello", r#"a","role":"x"#),
            O.replace("Hello", r#"a\"#),
            O.replace("default", "flex"),
            O.replace("}],\"obf", "},{\"index\":1}],\"obf"),
        ] {
            assert!(e.recognise(other.as_bytes()).is_none(), "{other}");
        }
    }

    #[test]
    fn only_one_string_shapes_are_learned() {
        for json in [
            r#"{"choices":[{"index":0,"delta":{"content":"a","role":"assistant"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a\n"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"total_tokens":1}}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"x":{"y":1}}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"x":[1]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a","x":1}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}"#,
        ] {
            assert!(learned(json).list.is_empty(), "{json}");
        }
        let r = learned(r#"{"choices":[{"index":1,"delta":{"reasoning":"hm"}}]}"#);
        assert_eq!((r.list[0].choice, r.list[0].slot), (1, Slot::Reasoning));
        let a = learned(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\"a"}}]}}]}"#,
        );
        assert!(
            a.list.is_empty(),
            "an escaped (owned) string has no known place"
        );
        let a = learned(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"x"}}]}}]}"#,
        );
        assert_eq!(a.list[0].slot, Slot::Arguments(2));
    }

    /// A byte at a time, as the JSON grammar reads it.
    fn scan_reference(bytes: &[u8]) -> Option<(usize, bool)> {
        let mut escaped = false;
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'"' => return Some((at, escaped)),
                b'\\' => {
                    escaped = true;
                    at += 2;
                }
                0..0x20 => return None,
                _ => at += 1,
            }
        }
        None
    }

    proptest::proptest! {
        #![proptest_config(crate::proptest_seeds::with_cases(2048))]
        #[test]
        fn the_word_scanner_equals_a_byte_at_a_time(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => 0x20u8..0x7F,
                    1 => proptest::prelude::Just(b'"'),
                    1 => proptest::prelude::Just(b'\\'),
                    1 => 0u8..0x20,
                    1 => 0x7Fu8..=0xFF,
                ],
                0..40,
            )
        ) {
            let got = JsonString::scan(&bytes).map(|s| (s.end, s.escaped));
            proptest::prop_assert_eq!(got, scan_reference(&bytes));
        }
    }

    #[test]
    fn every_byte_value_at_every_place_of_a_word() {
        for b in 0..=255u8 {
            for at in 0..17 {
                let mut bytes = vec![b'a'; 20];
                bytes[at] = b;
                let got = JsonString::scan(&bytes).map(|s| (s.end, s.escaped));
                assert_eq!(got, scan_reference(&bytes), "byte {b:#x} at {at}");
            }
        }
    }

    #[test]
    fn an_envelope_with_a_line_end_in_it_is_not_kept() {
        // Such JSON can only have come from data of several lines; raw input is matched
        // against envelopes inside one `data` line.
        for json in [
            "{\"id\":\"x\",\n\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}",
            "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]\r}",
            "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],\n\"o\":\"p\"}",
        ] {
            assert!(learned(json).list.is_empty(), "{json:?}");
        }
        assert_eq!(learned(&C.replace(',', ", ")).list.len(), 1);
    }

    proptest::proptest! {
        #![proptest_config(crate::proptest_seeds::with_cases(1024))]
        #[test]
        fn unescaping_equals_serde_json(
            text in "[a-z\"\\\\/\u{0}-\u{1f}é😀\u{7f}\u{2028}]{0,12}",
            soup in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::Just(&b"\\"[..]),
                    proptest::prelude::Just(&b"u"[..]),
                    proptest::prelude::Just(&b"d83d"[..]),
                    proptest::prelude::Just(&b"DE00"[..]),
                    proptest::prelude::Just(&b"00e9"[..]),
                    proptest::prelude::Just(&b"+0e9"[..]),
                    proptest::prelude::Just(&b"n"[..]),
                    proptest::prelude::Just(&b"x"[..]),
                    proptest::prelude::Just(&b"\xC3\xA9"[..]),
                    proptest::prelude::Just(&b"\xFF"[..]),
                ],
                0..10,
            ),
        ) {
            // Every string serde_json writes comes back, through one or the other.
            let json = serde_json::to_string(&text).unwrap();
            let body = &json.as_bytes()[1..json.len() - 1];
            if let Some(got) = unescape(body) {
                proptest::prop_assert_eq!(got, text);
            }
            // Whatever `unescape` decodes, serde_json decodes alike.
            let body = soup.concat();
            if let Some(got) = unescape(&body) {
                let quoted = [&b"\""[..], &body, b"\""].concat();
                proptest::prop_assert_eq!(Some(got), serde_json::from_slice::<String>(&quoted).ok());
            }
        }
    }

    #[test]
    fn common_escapes_are_decoded_without_serde_json() {
        for (body, want) in [
            (r#"a\nb"#, "a\nb"),
            (r#"\"q\" \\ \/ \t\r\b\f"#, "\"q\" \\ / \t\r\u{8}\u{c}"),
            (r#"caf\u00e9 \u00E9"#, "café é"),
        ] {
            assert_eq!(unescape(body.as_bytes()).as_deref(), Some(want), "{body}");
        }
        for left in [r#"\ud83d\ude00"#, r#"\u+0e9"#, r#"\x"#, r#"a\"#, "\\u00"] {
            assert_eq!(unescape(left.as_bytes()), None, "{left}");
        }
    }
}
