//! What a session is set up with: the provider, the model, the tools and the policies.

use crate::http::{HeaderValue, HttpRequest, Method, RequestId, Secret, is_sensitive_header};
use crate::quirks::ProviderQuirks;
use crate::tool::{Effect, ToolSpec};
use crate::wire::Extra;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// An OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// The base URL, such as `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// The API key, sent as `Authorization: Bearer …`; `None` for local servers without one.
    pub api_key: Option<Secret>,
    /// Extra headers sent with every request (`HTTP-Referer`, `api-key` for Azure, …). Values
    /// of sensitive names (see [`crate::http::is_sensitive_header`]) are redacted like the key.
    pub headers: Vec<(String, String)>,
    /// What this provider deviates in (`stream_options` rejected, `max_completion_tokens`, …).
    /// A provider that rejects an optional field is retried without it once, and the session
    /// reports it with [`Event::OptionDropped`](super::Event::OptionDropped) so the quirk can be
    /// saved.
    pub quirks: ProviderQuirks,
}

impl Provider {
    /// A provider at `base_url` with an optional key and default settings.
    pub fn new(base_url: impl Into<String>, api_key: Option<Secret>) -> Self {
        Provider {
            base_url: base_url.into(),
            api_key,
            headers: Vec::new(),
            quirks: ProviderQuirks::default(),
        }
    }

    /// A `POST {base_url}/chat/completions` request carrying `body` (a JSON chat request),
    /// with the key and extra headers. For drivers' own non-session calls (`chat`,
    /// `stream_chat`).
    pub fn post_chat(&self, id: RequestId, body: Vec<u8>) -> HttpRequest {
        HttpRequest {
            id,
            method: Method::Post,
            url: endpoint(&self.base_url, "chat/completions"),
            headers: headers(self, true),
            body,
        }
    }

    /// A `GET {base_url}/models` request.
    pub fn get_models(&self, id: RequestId) -> HttpRequest {
        HttpRequest {
            id,
            method: Method::Get,
            url: endpoint(&self.base_url, "models"),
            headers: headers(self, false),
            body: Vec::new(),
        }
    }
}

/// Pass-through request options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestOptions {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Limit on generated tokens per request.
    pub max_tokens: Option<u64>,
    /// Reasoning effort (`low`, `medium`, `high`) for reasoning models.
    pub reasoning_effort: Option<String>,
    /// Any other fields merged into every request body (they win over hrns's own).
    pub extra: Extra,
}

/// Which tool calls run without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Only read-only tools run; every other call is answered "denied by policy".
    ReadOnly,
    /// Read-only tools run; every other call waits for the user's decision.
    Ask,
    /// Every call runs.
    Auto,
}

impl ApprovalPolicy {
    /// What to do with a call of this effect, before any per-session approval.
    pub fn decide(self, effect: Effect) -> PolicyDecision {
        match (self, effect) {
            (_, Effect::ReadOnly) | (ApprovalPolicy::Auto, _) => PolicyDecision::Run,
            (ApprovalPolicy::Ask, _) => PolicyDecision::Ask,
            (ApprovalPolicy::ReadOnly, _) => PolicyDecision::Deny,
        }
    }
}

/// The outcome of [`ApprovalPolicy::decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyDecision {
    /// Run it.
    Run,
    /// Ask the user.
    Ask,
    /// Do not run it.
    Deny,
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Approval {
    /// Run this call.
    Once,
    /// Run this call once outside the sandbox ([`Confinement::Unsandboxed`](super::Confinement::Unsandboxed)): the user lets
    /// a command that the sandbox would stop do what it needs, this time. Only a call with
    /// the [`Effect::Exec`] effect (a command) leaves the sandbox; for any other call this is
    /// [`Approval::Once`].
    OnceUnsandboxed,
    /// Run this call and every later call of the same tool in this session.
    AlwaysThisTool,
    /// Do not run this call, nor any later call of the same tool in this session: those are
    /// denied without asking (and without a `permission_prompt` notification).
    NeverThisTool,
    /// Do not run it; the optional reason is passed to the model.
    Deny {
        /// Why, in the user's words.
        reason: Option<String>,
    },
    /// Nobody can be asked (no terminal, no approver set): the call is denied, and the
    /// session tells the model why.
    Unattended,
}

/// What the user decided about whole tools for the rest of a session: the tools answered with
/// [`Approval::AlwaysThisTool`] and those answered with [`Approval::NeverThisTool`].
///
/// A host that builds a new [`Session`](super::Session) for the same conversation (another
/// model, agent or policy) takes them out of the old one with
/// [`Session::approvals`](super::Session::approvals) and hands them to the new one with
/// [`Session::keep_approvals`](super::Session::keep_approvals), so that the user is neither
/// asked again about a tool they always allowed nor sees a tool they never allowed run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionApprovals {
    pub(super) always: std::collections::BTreeSet<String>,
    pub(super) never: std::collections::BTreeSet<String>,
}

impl SessionApprovals {
    /// The tools the user allowed for the rest of the session, by name.
    pub fn always(&self) -> impl Iterator<Item = &str> {
        self.always.iter().map(String::as_str)
    }

    /// The tools the user denied for the rest of the session, by name.
    pub fn never(&self) -> impl Iterator<Item = &str> {
        self.never.iter().map(String::as_str)
    }

    /// True when the user decided nothing for whole tools.
    pub fn is_empty(&self) -> bool {
        self.always.is_empty() && self.never.is_empty()
    }
}

/// How failed requests are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per model request in all, the first included (default 4).
    pub max_attempts: u32,
    /// Delay before the first retry; doubled for each further one (default 1 s).
    pub base_delay: Duration,
    /// Longest computed delay (default 30 s).
    pub max_delay: Duration,
    /// Longest `Retry-After` the session honours; a provider asking for more fails the turn
    /// with its message instead of hanging (default 5 min).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(300),
        }
    }
}

/// Whether the model is sent the images tools return.
///
/// Most OpenAI-compatible servers accept images only in `user` messages (a `tool` message
/// with an `image_url` part is refused or silently flattened), so images travel the way
/// that works broadly: each tool message keeps its text, which names the image, and one
/// `user` message after the step's tool messages carries the images as `image_url` parts
/// with `data:` URLs. Models that take no images (or servers that refuse parts) get the text
/// placeholder only, which is why this is off unless the configuration or
/// [`ImageInputs::known_for`] says otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ImageInputs {
    /// Images are named by a placeholder in the tool's text, never sent (the default).
    #[default]
    Placeholder,
    /// Images are sent as `image_url` parts of a `user` message after the tool results.
    Parts,
}

impl ImageInputs {
    /// What hrns assumes when the configuration does not say: parts for model families
    /// whose OpenAI-compatible endpoints are documented to take images in user messages
    /// (`gpt-4o`, `gpt-4.1`, `gpt-5`, `claude-`, `gemini-`; a `vendor/` prefix as
    /// OpenRouter writes it is ignored), the placeholder for every other model.
    pub fn known_for(model: &str) -> ImageInputs {
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let known = ["gpt-4o", "gpt-4.1", "gpt-5", "claude-", "gemini-"];
        if known.iter().any(|prefix| name.starts_with(prefix)) {
            ImageInputs::Parts
        } else {
            ImageInputs::Placeholder
        }
    }
}

/// Everything a [`Session`](super::Session) is set up with.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The endpoint.
    pub provider: Provider,
    /// The model name.
    pub model: String,
    /// The system prompt, sent first in every request.
    pub system_prompt: Option<String>,
    /// The tools offered to the model.
    pub tools: Vec<ToolSpec>,
    /// Pass-through request options.
    pub options: RequestOptions,
    /// Which calls run without asking.
    pub approval: ApprovalPolicy,
    /// Retries of failed requests.
    pub retry: RetryPolicy,
    /// Model requests allowed in one turn before it is stopped (default 100).
    pub max_steps: u32,
    /// The same call (name and arguments) made this many times in a row is not run again;
    /// the model is told so (default 3).
    pub max_repeated_calls: u32,
    /// Seed for retry jitter, so the same inputs give the same delays.
    pub seed: u64,
    /// Largest single streamed event accepted.
    pub max_event_size: usize,
    /// Most bytes of text, reasoning, refusal and tool arguments one answer may have
    /// together (default [`DEFAULT_MAX_ANSWER_BYTES`](crate::stream::DEFAULT_MAX_ANSWER_BYTES),
    /// `maxAnswerBytes` in the config file): past it the turn fails at once, without a
    /// retry, and the partial answer stays out of the history. An endless stream then costs
    /// seconds and bounded memory, not all of it.
    pub max_answer_bytes: usize,
    /// The context window and when to prune and compact.
    pub context: crate::context::ContextConfig,
    /// Secrets to redact besides the provider's key and secret headers (which are always
    /// redacted): MCP servers' env and header secrets, for instance.
    pub secrets: crate::secrets::Secrets,
    /// How long one tool call may run before the session stops it ([`Action::AbortTool`])
    /// and tells the model it timed out; `None` for no limit. The default is the longest
    /// `run_command` timeout plus a minute, so a command's own timeout always fires first.
    ///
    /// [`Action::AbortTool`]: super::Action::AbortTool
    pub tool_timeout: Option<Duration>,
    /// What `task` calls may run: the agents they may name and the tools a child may get.
    /// `None` when the session offers no `task` tool. The session orders a task call by what
    /// its child may do ([`crate::task::call_effect`]).
    pub subagents: Option<crate::task::Subagents>,
    /// Whether images from tools reach the model as image parts (default: the placeholder).
    pub images: ImageInputs,
    /// Whether the session asks for snapshots around the calls that may change files
    /// (default off: the owner needs a checkpoint store).
    pub checkpoints: crate::checkpoint::Checkpoints,
    /// Where `web_fetch` may go without asking, and whether the sandbox's network rule holds
    /// it back ([`crate::sandbox::WebFetchPolicy`]; default: open, no hosts listed, so the
    /// approval policy alone decides). Children of `task` calls inherit it.
    pub web_fetch: crate::sandbox::WebFetchPolicy,
    /// How long a response may go without data, from its head on, before it counts as a
    /// transport error ([`TransportErrorKind::Timeout`](super::TransportErrorKind::Timeout),
    /// retried before any output like any other); `None` for no limit. Only data moves the
    /// deadline: SSE comments, empty keep-alive events and chunks that carry nothing do not,
    /// so a provider that only keeps the connection alive cannot hold a turn forever.
    /// Default [`DEFAULT_STREAM_IDLE_TIMEOUT`] (`streamIdleTimeout` in the config file).
    pub stream_idle_timeout: Option<Duration>,
    /// A JSON Schema the final answer of every turn must match (`exec --output-schema`):
    /// sent as `response_format` where the provider takes it, else described in the system
    /// prompt; an answer that misses it is asked for once more with the errors, and a second
    /// miss fails the turn ([`TurnError::OutputSchemaUnmet`](super::TurnError)). `None`
    /// (the default) for free text.
    pub output: Option<super::output::OutputSchema>,
    /// The user's hooks ([`crate::hooks`]); none by default.
    pub hooks: crate::hooks::SessionHooks,
}

/// The default of [`SessionConfig::stream_idle_timeout`]: five minutes, longer than any
/// model thinks before its first token.
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

impl SessionConfig {
    /// A configuration with defaults for everything but the provider and the model.
    pub fn new(provider: Provider, model: impl Into<String>) -> Self {
        SessionConfig {
            secrets: crate::secrets::Secrets::new(),
            provider,
            model: model.into(),
            system_prompt: None,
            tools: Vec::new(),
            options: RequestOptions::default(),
            approval: ApprovalPolicy::Ask,
            retry: RetryPolicy::default(),
            max_steps: 100,
            max_repeated_calls: 3,
            seed: 0,
            hooks: crate::hooks::SessionHooks::default(),
            max_event_size: crate::sse::DEFAULT_MAX_EVENT_SIZE,
            max_answer_bytes: crate::stream::DEFAULT_MAX_ANSWER_BYTES,
            context: crate::context::ContextConfig::default(),
            tool_timeout: Some(Duration::from_secs(
                crate::tool::builtin::MAX_COMMAND_TIMEOUT_SECS + 60,
            )),
            subagents: None,
            images: ImageInputs::Placeholder,
            checkpoints: crate::checkpoint::Checkpoints::Off,
            web_fetch: crate::sandbox::WebFetchPolicy::default(),
            stream_idle_timeout: Some(DEFAULT_STREAM_IDLE_TIMEOUT),
            output: None,
        }
    }
}

/// `base_url` joined with `path`, with exactly one slash between them. A query string (Azure's
/// `?api-version=…`) or fragment in the base URL stays at the end, after the joined path:
/// `https://x/openai/deployments/d?api-version=1` gives
/// `https://x/openai/deployments/d/chat/completions?api-version=1`.
pub fn endpoint(base_url: &str, path: &str) -> String {
    let (base, tail) = base_url.split_at(base_url.find(['?', '#']).unwrap_or(base_url.len()));
    format!(
        "{}/{}{tail}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// The headers of every request to `provider`: JSON content type (when there is a body), the
/// key as a bearer token, and the provider's extra headers.
pub(crate) fn headers(provider: &Provider, json_body: bool) -> Vec<(String, HeaderValue)> {
    let plain = |n: &str, v: &str| (n.to_owned(), HeaderValue::Plain(v.to_owned()));
    let mut headers = if json_body {
        vec![
            plain("content-type", "application/json"),
            plain("accept", "text/event-stream, application/json"),
        ]
    } else {
        vec![plain("accept", "application/json")]
    };
    if let Some(key) = provider.api_key.as_ref().filter(|k| !k.is_empty()) {
        headers.push((
            "authorization".to_owned(),
            HeaderValue::Secret(Secret::new(format!("Bearer {}", key.expose()))),
        ));
    }
    for (name, value) in &provider.headers {
        let value = if is_sensitive_header(name) {
            HeaderValue::Secret(Secret::new(value.clone()))
        } else {
            HeaderValue::Plain(value.clone())
        };
        headers.push((name.clone(), value));
    }
    headers
}

#[cfg(test)]
mod endpoint_tests {
    use super::endpoint;

    #[test]
    fn the_path_goes_before_the_query_string() {
        let vectors = [
            (
                "https://a/v1",
                "chat/completions",
                "https://a/v1/chat/completions",
            ),
            ("https://a/v1/", "/models", "https://a/v1/models"),
            (
                "https://x.openai.azure.com/openai/deployments/d?api-version=2024-06-01",
                "chat/completions",
                "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-06-01",
            ),
            (
                "https://x/openai/deployments/d/?api-version=1&b=2",
                "models",
                "https://x/openai/deployments/d/models?api-version=1&b=2",
            ),
            ("https://a/v1?", "models", "https://a/v1/models?"),
            ("https://a/v1#frag", "models", "https://a/v1/models#frag"),
            // A `?` or `#` in the query itself is not a second split point.
            (
                "https://a/v1?x=1?2#3",
                "models",
                "https://a/v1/models?x=1?2#3",
            ),
        ];
        for (base, path, want) in vectors {
            assert_eq!(endpoint(base, path), want, "{base} + {path}");
        }
    }
}
