//! Generated `/chat/completions` SSE bodies of a chosen size, for benchmarks.
//!
//! Each body is what an OpenAI-compatible server streams: one `chat.completion.chunk` per SSE
//! event, one small token per chunk, a finish chunk, a usage chunk and `data: [DONE]`. The
//! output is deterministic, so runs compare. Shared by path (`#[path = "streams/mod.rs"]`) with
//! any benchmark that needs realistic streams.
#![allow(dead_code)] // Each benchmark uses a different part.

use std::fmt::Write as _;

/// What the streamed tokens carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// `delta.content` tokens.
    Content,
    /// `delta.reasoning_content` tokens (DeepSeek-style, with `content: null`).
    Reasoning,
    /// One tool call whose arguments arrive in small fragments, one per chunk.
    ToolCall,
    /// Content tokens for choices 0 and 1, alternating.
    TwoChoices,
    /// A third each of reasoning, content and tool-call fragments, in that order.
    Mix,
}

impl Variant {
    /// Every variant, in report order.
    pub(crate) const ALL: [Variant; 5] = [
        Variant::Content,
        Variant::Reasoning,
        Variant::ToolCall,
        Variant::TwoChoices,
        Variant::Mix,
    ];

    /// A short name for benchmark ids.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Variant::Content => "content",
            Variant::Reasoning => "reasoning",
            Variant::ToolCall => "tool_call",
            Variant::TwoChoices => "two_choices",
            Variant::Mix => "mix",
        }
    }
}

/// A generated body.
#[derive(Debug)]
pub(crate) struct Stream {
    /// The SSE bytes.
    pub(crate) body: Vec<u8>,
    /// Number of SSE events in `body`, `[DONE]` included.
    pub(crate) events: u64,
    /// Content text per choice index, as it should accumulate.
    pub(crate) content: Vec<String>,
    /// Reasoning text of choice 0.
    pub(crate) reasoning: String,
    /// Arguments of the tool call of choice 0, if the variant has one.
    pub(crate) arguments: String,
}

/// Small tokens as a tokenizer emits them: words with their leading space, word pieces,
/// punctuation, a non-ASCII word and a newline.
const TOKENS: [&str; 16] = [
    "The", " stream", "ing", " answer", " is", " built", ",", " one", " token", " at", " a",
    " time", ".", "\n", " café", " ok",
];

/// Pieces of tool-call arguments text, as models emit them: a few characters each.
const ARGUMENT_PIECES: [&str; 12] = [
    "fn", " main", "()", " {", "\n", "    ", "print", "ln!(", "\"", "hi", "\");", "}\n",
];

const ID: &str = "chatcmpl-9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const MODEL: &str = "gpt-4o-mini-2024-07-18";
const CREATED: u64 = 1_718_000_000;

/// Builds a body of `variant` that is `target` bytes long, give or take one event.
pub(crate) fn generate(variant: Variant, target: usize) -> Stream {
    let mut out = Generator {
        body: String::with_capacity(target + 4096),
        events: 0,
        content: Vec::new(),
        reasoning: String::new(),
        arguments: String::new(),
        tool_started: false,
    };
    // The last chunks (finish, usage, [DONE]) take about 600 bytes.
    let end = target.saturating_sub(600);
    out.chunk(0, r#"{"role":"assistant","content":""}"#);
    let mut n = 0usize;
    while out.body.len() < end {
        let phase = match variant {
            Variant::Mix => match out.body.len() * 3 / end.max(1) {
                0 => Variant::Reasoning,
                1 => Variant::Content,
                _ => Variant::ToolCall,
            },
            other => other,
        };
        match phase {
            Variant::Content | Variant::Mix => out.content_token(0, TOKENS[n % TOKENS.len()]),
            Variant::Reasoning => out.reasoning_token(TOKENS[n % TOKENS.len()]),
            Variant::ToolCall => out.argument_piece(ARGUMENT_PIECES[n % ARGUMENT_PIECES.len()]),
            Variant::TwoChoices => {
                out.content_token((n % 2) as u32, TOKENS[(n / 2) % TOKENS.len()]);
            }
        }
        n += 1;
    }
    let reason = if out.tool_started {
        "tool_calls"
    } else {
        "stop"
    };
    let choices = if variant == Variant::TwoChoices { 2 } else { 1 };
    for index in 0..choices {
        out.finish(index, reason);
    }
    out.event(&format!(
        r#"{{"id":"{ID}","object":"chat.completion.chunk","created":{CREATED},"model":"{MODEL}","choices":[],"usage":{{"prompt_tokens":1200,"completion_tokens":{n},"total_tokens":{}}}}}"#,
        n + 1200
    ));
    out.event("[DONE]");
    Stream {
        body: out.body.into_bytes(),
        events: out.events,
        content: out.content,
        reasoning: out.reasoning,
        arguments: out.arguments,
    }
}

#[derive(Debug)]
struct Generator {
    body: String,
    events: u64,
    content: Vec<String>,
    reasoning: String,
    arguments: String,
    tool_started: bool,
}

impl Generator {
    fn event(&mut self, data: &str) {
        self.body.push_str("data: ");
        self.body.push_str(data);
        self.body.push_str("\n\n");
        self.events += 1;
    }

    /// One chunk with `delta` (a JSON object) for choice `index`.
    fn chunk(&mut self, index: u32, delta: &str) {
        self.body.push_str("data: ");
        write!(
            self.body,
            r#"{{"id":"{ID}","object":"chat.completion.chunk","created":{CREATED},"model":"{MODEL}","choices":[{{"index":{index},"delta":{delta},"finish_reason":null}}]}}"#
        )
        .expect("writing to a String");
        self.body.push_str("\n\n");
        self.events += 1;
    }

    fn content_token(&mut self, index: u32, token: &str) {
        let slot = index as usize;
        if self.content.len() <= slot {
            self.content.resize(slot + 1, String::new());
        }
        self.content[slot].push_str(token);
        self.chunk(index, &format!(r#"{{"content":{}}}"#, json_string(token)));
    }

    fn reasoning_token(&mut self, token: &str) {
        self.reasoning.push_str(token);
        self.chunk(
            0,
            &format!(
                r#"{{"content":null,"reasoning_content":{}}}"#,
                json_string(token)
            ),
        );
    }

    fn argument_piece(&mut self, piece: &str) {
        if !self.tool_started {
            self.tool_started = true;
            self.arguments
                .push_str(r#"{"path":"src/main.rs","content":""#);
            let first = json_string(&self.arguments);
            self.chunk(
                0,
                &format!(
                    r#"{{"tool_calls":[{{"index":0,"id":"call_Qx7uVwB2mZ","type":"function","function":{{"name":"write_file","arguments":{first}}}}}]}}"#
                ),
            );
        }
        // The piece is text inside the `content` string of the arguments JSON, so it is escaped
        // once for the arguments and once more for the chunk.
        let inner = json_string(piece);
        let fragment = &inner[1..inner.len() - 1];
        self.arguments.push_str(fragment);
        self.chunk(
            0,
            &format!(
                r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}"#,
                json_string(fragment)
            ),
        );
    }

    fn finish(&mut self, index: u32, reason: &str) {
        if self.tool_started && index == 0 {
            // Close the arguments object.
            self.arguments.push_str("\"}");
            self.chunk(
                0,
                &format!(
                    r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}"#,
                    json_string("\"}")
                ),
            );
        }
        self.body.push_str("data: ");
        write!(
            self.body,
            r#"{{"id":"{ID}","object":"chat.completion.chunk","created":{CREATED},"model":"{MODEL}","choices":[{{"index":{index},"delta":{{}},"finish_reason":"{reason}"}}]}}"#
        )
        .expect("writing to a String");
        self.body.push_str("\n\n");
        self.events += 1;
    }
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if u32::from(c) < 0x20 => {
                write!(out, "\\u{:04x}", u32::from(c)).expect("writing to a String");
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
