//! The secrets hrns knows (provider keys, secret header and env values, the secrets URLs
//! carry) and the one function that takes them out of any text before it leaves: printed,
//! logged, recorded, saved, or sent to the model.
//!
//! What counts as a secret is defined once, in [`definition`] (and in README's "Safety"):
//! a provider key unless it is a known dummy or too plain, a configured header or env value
//! whose name says it is secret or that looks like a credential, a URL's password and secret
//! query values. Nothing else is ever rewritten, so `NODE_ENV=production` leaves every
//! "production" alone and a key `EMPTY` every "empty".
//!
//! [`Secrets::redact`] replaces a whole secret, in any ASCII case, and also any
//! [`FRAGMENT`]-byte piece of one that cannot be ordinary text
//! ([`ordinary_fragment`]), so a key cut by a truncation (`sk-proj-a7Kq…`) is still hidden
//! whichever happened first; callers should still redact before they truncate.
//!
//! Matching ignores ASCII case. Keys are case-sensitive tokens, but a server may echo one
//! case-folded (an error body that lower-cases what it quotes), and a key in lower case still
//! gives away nearly all of it; a random key's 8-byte piece in another case is no more likely
//! to turn up in ordinary text than in its own.
//!
//! # Every output path
//!
//! Every way text leaves hrns, the function that takes the secrets out of it, and the test
//! that proves it. A new output path without a row here is a review failure.
//!
//! | output | redacted by | proved by |
//! | --- | --- | --- |
//! | what secrets are | [`definition`], [`Secrets::add`], [`Secrets::add_named`] | `secrets::tests::exact_redaction` (property: random strong, named and dummy secrets, random texts, any split), `secrets::definition::tests`, `cli/tests/redaction.rs` `a_dummy_key_hides_no_word`, `only_the_secret_headers_and_url_parts_of_an_mcp_server_are_hidden` |
//! | what the model reads: tool outputs, provider errors | `Session` with [`Secrets::redact`] (`session::calls`, `session::turn`, `session::response`) | `cli/tests/parity.rs` `secrets_are_redacted_everywhere_hrns_writes`, `cli/tests/redaction.rs` `an_ordinary_mcp_env_value_is_never_redacted`, `a_read_modify_write_keeps_ordinary_words` |
//! | stdout of `exec` | `exec::batch::Batch` with [`Pieces`] | `cli/tests/redaction.rs` `a_key_cut_across_reads_is_not_shown_in_pieces`, `a_dummy_key_hides_no_word` |
//! | stderr of `exec` (tool lines, questions, errors) | `host::redact::redact` (`exec::output`, `exec::shown`, `host::subagents`, `main`) | `cli/tests/redaction.rs` `exec_asks_about_a_call_without_showing_the_key`, `a_key_echoed_in_another_case_is_not_shown` |
//! | `exec --json` | `exec::json_lines` with [`Pieces`], `exec::output::redacted_event` | `cli/tests/redaction.rs` `a_key_cut_across_reads_is_not_shown_in_pieces`, `a_secret_that_json_escapes_is_not_shown_escaped` |
//! | `exec -o FILE` (the last answer) | `exec::finish_run` with `host::redact::redact` | `cli/tests/redaction.rs` `the_answer_file_of_exec_o_hides_the_key` |
//! | the TUI | `tui::text::clean`, every span | `cli/tests/redaction.rs` `the_tui_asks_about_a_call_without_showing_the_key`, `tui::text` `a_secret_spliced_with_control_characters_is_redacted_as_shown` |
//! | session files | `host::sessions::SessionLog::record` and `record_child` | `cli/tests/redaction.rs` `a_secret_that_json_escapes_is_not_shown_escaped`, `an_ordinary_mcp_env_value_is_never_redacted`, `the_session_keeps_the_users_words_and_hides_a_key_in_them` |
//! | the TUI's prompt history (`$XDG_STATE_HOME/hrns/history`) | `tui::history::History::add` with `host::redact::redact` (and each entry again when the file is rewritten) | `cli/tests/redaction.rs` `the_prompt_history_keeps_the_words_and_hides_a_key` |
//! | records (`exec --record`) | [`BodyRedactor`] (an event stream's texts each one text across its deltas; other bodies one text), used by `host::record::Tee`; `host::record::write_line` (every line) | `secrets::body_tests` `a_recorded_stream_reads_back_redacted_and_shows_no_secret` (property), `cli/tests/redaction.rs` `a_key_streamed_in_3_byte_deltas_cannot_be_read_back_from_the_record`, `a_key_streamed_in_3_byte_reads_cannot_be_read_back_from_the_record`, `an_mcp_secret_streamed_in_pieces_is_neither_recorded_nor_replayed` |
//! | exports (`hrns sessions export`) | the session file, redacted as it was written | `cli/tests/parity.rs` `secrets_are_redacted_everywhere_hrns_writes` |
//! | `hrns replay`: stdout, stderr, `--json`, `differs:` lines, the recorded prompt | `commands::replay_secrets` (registers the config's secrets and the recorded run's, resolved from the names in its header: `host::record::SecretSources`), `host::record::Replayer` (differences), then as `exec` | `cli/tests/redaction.rs` `replay_of_a_run_that_read_the_key_prints_no_key`, `replay_knows_the_recorded_runs_key_by_where_it_came_from`, `an_mcp_secret_streamed_in_pieces_is_neither_recorded_nor_replayed` |
//! | MCP logs (a server's stderr, hrns's lines) | `mcp::stderr::StderrLines`, `mcp::config::ServerConfig::redact` | `mcp::stderr_tests` `a_secret_cut_by_the_limit_is_still_hidden`, `cli/tests/mcp.rs` `a_stdio_servers_stderr_reaches_its_log_redacted_cut_and_whole`; the files owner-only (0600 in 0700), none with `exec --ephemeral`: `mcp::log::tests` `logs_are_owner_only`, `cli/tests/small_fixes.rs` `mcp_logs_are_owner_only`, `exec_ephemeral_writes_no_mcp_logs` |
//! | MCP tool results and failures | `mcp::config::ServerConfig::redact` | `mcp::config` `reads_stdio_and_http_entries_and_reports_bad_ones`, `cli/tests/mcp.rs` `secrets_in_a_configured_url_are_never_shown` |
//! | listings (`hrns providers`, `hrns mcp list`, `hrns doctor`) | [`crate::url_secrets::hide_url_secrets`], `host::redact::redact` | `url_secrets` `a_listed_url_hides_its_secrets`, `cli/tests/mcp.rs` `secrets_in_a_configured_url_are_never_shown` |
//! | hook input (the JSON on a hook's stdin) | [`crate::hooks::input::Input::finish`] ([`Secrets::redact_json`] with the session's secrets), built by `session::hooks` | `hooks::tests` `input_is_redacted`, `cli/tests/hooks.rs` `the_provider_key_is_absent_from_a_hooks_environment_and_input` |
//! | hook output (what a hook says back: reasons, messages, added context) | `hooks::outcome` ([`Secrets::redact_string`], [`Secrets::redact_json`]) | `hooks::tests` `secrets_in_answers_are_redacted` |
//! | ACP updates (`hrns acp`) | [`crate::acp::update::Updates::on_event`] ([`Pieces`] across a message's or a thought's chunks, [`Secrets::redact_json`] for every other update), [`crate::acp::update::replay`] (`session/load`), [`crate::acp::update::permission_request`]; `acp::serve` redacts every line again | `acp::tests` `a_secret_split_over_deltas_is_hidden`, `every_other_update_hides_secrets_and_keeps_ordinary_words`, `kinds_usage_and_replay`, `cli/tests/acp.rs` `a_text_turn_streams_chunks_and_ends_the_turn_without_the_key` (and every line any ACP test reads) |

use crate::http::Secret;
use crate::session::Provider;
use aho_corasick::AhoCorasick;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

mod body;
pub mod definition;
mod pieces;
pub use body::BodyRedactor;
pub use definition::{
    MIN_SECRET, looks_like_credential, name_says_secret, ordinary_fragment, too_plain,
};
pub use pieces::{Ending, Pieces};

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The length of a fragment of a secret that is hidden on its own, in bytes.
pub const FRAGMENT: usize = 8;

/// A set of secret values. Its `Debug` shows only how many there are.
#[derive(Clone, Default)]
pub struct Secrets {
    /// The values, longest first.
    values: Vec<String>,
    /// The values (in lower case) that some ordinary fragment keeps from being covered by
    /// their windows alone: searched for whole, by `whole`.
    whole_values: Vec<Vec<u8>>,
    /// Finds `whole_values` in any ASCII case, overlapping matches included.
    whole: Option<AhoCorasick>,
    /// Every [`FRAGMENT`]-byte window of every value that is not ordinary text
    /// ([`ordinary_fragment`]), in lower case.
    windows: HashSet<[u8; FRAGMENT]>,
    /// The first two bytes of every window, one bit per pair: redaction runs on everything
    /// printed, and this rules out nearly every position of ordinary text before the window
    /// is hashed.
    pairs: PairSet,
    /// Every two consecutive bytes of every window: where the last two bytes of a window are
    /// not such a pair, no window containing them can match, and the search skips past them
    /// (seven positions at once) instead of looking at each.
    inner: PairSet,
    /// Every proper prefix of every window: the tails of a piece of text that the next piece
    /// could complete into something hidden ([`Pieces`]); proper prefixes of `whole_values`
    /// are looked for by [`Secrets::hold_from`] itself.
    starts: HashSet<Vec<u8>>,
}

impl PartialEq for Secrets {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl Eq for Secrets {}

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

    /// The provider's key (unless it is a dummy or too plain: see [`definition`]), its
    /// configured headers' secrets ([`add_named`](Self::add_named)), and the secrets its base
    /// URL carries ([`url_secrets`](crate::url_secrets::url_secrets)).
    pub fn of_provider(provider: &Provider) -> Self {
        let mut secrets = Secrets::new();
        secrets.add_secret(provider.api_key.as_ref());
        for (name, value) in &provider.headers {
            secrets.add_named(name, value);
        }
        // A password or credentials written into the URL itself.
        for value in crate::url_secrets::url_secrets(&provider.base_url) {
            secrets.add(&value);
        }
        secrets
    }

    /// Adds a value given as a secret (a key, a password), surrounding whitespace trimmed,
    /// unless it is too plain to be matched safely ([`too_plain`]).
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        if !too_plain(value) {
            self.insert(value);
        }
    }

    /// Adds the value of a configured header or env var `name` when the name says it is
    /// secret ([`name_says_secret`]) or the value looks like a credential
    /// ([`looks_like_credential`]), with the token of `Bearer TOKEN` on its own; and, whatever
    /// the name, the secrets of a URL in the value (`DATABASE_URL=postgres://u:pw@h/db`).
    /// `NODE_ENV=production` adds nothing.
    pub fn add_named(&mut self, name: &str, value: &str) {
        if name_says_secret(name) || looks_like_credential(value) {
            self.add(value);
            if let Some(token) = definition::scheme_token(value) {
                self.add(token);
            }
        }
        for url_secret in crate::url_secrets::url_secrets(value.trim()) {
            self.add(&url_secret);
        }
    }

    /// Adds `value` as it is: it is known to be a secret.
    fn insert(&mut self, value: &str) {
        if value.is_empty() || self.values.iter().any(|v| v == value) {
            return;
        }
        let mut covered = value.len() >= FRAGMENT;
        for window in value.as_bytes().windows(FRAGMENT) {
            if ordinary_fragment(window) {
                covered = false;
                continue;
            }
            // Windows and starts are kept in lower case: matching ignores ASCII case.
            let mut w = [0u8; FRAGMENT];
            w.copy_from_slice(window);
            w.make_ascii_lowercase();
            for len in 1..FRAGMENT {
                self.starts.insert(w[..len].to_vec());
            }
            self.windows.insert(w);
            self.pairs.insert(w[0], w[1]);
            for pair in w.windows(2) {
                self.inner.insert(pair[0], pair[1]);
            }
        }
        if !covered {
            self.whole_values
                .push(value.to_ascii_lowercase().into_bytes());
            self.whole = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&self.whole_values)
                .ok();
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
            self.insert(v);
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
                    forms.insert(escaped);
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
        // A value whose windows are all hidden on their own is covered by them below, which
        // mark the same bytes; only the others are searched for whole.
        if let Some(whole) = &self.whole {
            for found in whole.find_overlapping_iter(bytes) {
                mark(found.start(), found.len());
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
    /// prefix of a window, so at most `FRAGMENT - 1` bytes, or of a value searched for whole,
    /// moved back to a character boundary); `text.len()` when there is none.
    fn hold_from(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        // The longest such tail: a shorter one inside it is held with it. Starts are kept in
        // lower case.
        let mut at = bytes.len();
        if !self.starts.is_empty() {
            let first = bytes.len().saturating_sub(FRAGMENT - 1);
            let mut tail = [0u8; FRAGMENT - 1];
            let tail = &mut tail[..bytes.len() - first];
            tail.copy_from_slice(&bytes[first..]);
            tail.make_ascii_lowercase();
            if let Some(found) =
                (first..bytes.len()).find(|&i| self.starts.contains(&tail[i - first..]))
            {
                at = found;
            }
        }
        for value in &self.whole_values {
            // Only a tail shorter than the value can be a proper prefix of it; only where its
            // first byte is can one start.
            let first = bytes.len().saturating_sub(value.len() - 1).min(at);
            let (lower, upper) = (value[0], value[0].to_ascii_uppercase());
            let mut from = first;
            while let Some(i) = memchr::memchr2(lower, upper, &bytes[from..at]) {
                let start = from + i;
                if value[..bytes.len() - start].eq_ignore_ascii_case(&bytes[start..]) {
                    at = start;
                    break;
                }
                from = start + 1;
            }
        }
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
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
mod body_tests;
#[cfg(test)]
mod tests;
