//! `hrns doctor` without the IO: which requests probe a provider, how each answer is judged,
//! and which [quirks](crate::quirks) follow.
//!
//! A [`Probe`] hands out one request at a time; the driver sends it and feeds the response
//! back, with the time each piece arrived (the probe measures time to first token and tokens
//! per second from those `now` arguments, and reads no clock):
//!
//! ```
//! use hrns_core::probe::{Probe, ProbeOptions};
//! use hrns_core::session::Provider;
//! use std::time::Instant;
//!
//! let provider = Provider::new("http://127.0.0.1:1/v1", None);
//! let mut probe = Probe::new(provider, "m", ProbeOptions::default());
//! while let Some(req) = probe.next_request(Instant::now()) {
//!     // A real driver sends `req` and feeds the answer; here nothing is listening.
//!     let err = hrns_core::session::TransportError::new(
//!         hrns_core::session::TransportErrorKind::Connect, "connection refused");
//!     probe.handle_transport_error(Instant::now(), req.id, err);
//! }
//! let report = probe.report();
//! assert!(!report.chat_works);
//! ```
//!
//! The requests, in order: `GET /models`; a plain chat with a token limit (`max_tokens`, then
//! `max_completion_tokens` if that is refused); a streamed chat with
//! `stream_options.include_usage` (again without it if refused); a tool call not streamed with
//! `tool_choice: "auto"`, streamed with it, and streamed without it (as sessions send it); and
//! a request for two tool calls in one answer. A failed authentication or an unreachable
//! server ends the probe early; later checks are reported as skipped.

mod judge;
#[cfg(test)]
mod tests;

use crate::http::{HttpRequest, RequestId};
use crate::quirks::{MaxTokensField, ProviderQuirks, StreamOptions, ToolChoice};
use crate::session::{Provider, TransportError, TransportErrorKind};
use crate::stream::{ChatStream, StreamEvent};
use judge::{Exchange, ToolJudgement};
use serde::Serialize;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

/// Most of a response body the probe keeps.
const MAX_BODY: usize = 4 * 1024 * 1024;
/// The token limit of every probe request: enough for a short answer or a tool call, with
/// room for a reasoning model's thoughts.
const TOKEN_LIMIT: u64 = 512;
/// The tool the probe offers.
pub const PROBE_TOOL: &str = "get_time";

/// What the probe checks, in the order of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The server answers HTTP, and how (TLS verified, TLS unverified, plain HTTP).
    Reachable,
    /// The key is accepted (or none is needed).
    Authentication,
    /// `GET /models` answers a list.
    Models,
    /// The chosen model is in that list.
    ModelListed,
    /// The list reports the model's context window.
    ContextWindow,
    /// A non-streamed chat completion.
    Chat,
    /// A streamed chat completion, with time to first token and tokens per second.
    Streaming,
    /// `stream_options.include_usage` accepted, and a usage chunk sent.
    StreamUsage,
    /// A tool call in a non-streamed answer, with `tool_choice: "auto"`.
    Tools,
    /// A tool call in a streamed answer, with `tool_choice: "auto"`.
    ToolsStreamedAuto,
    /// A tool call in a streamed answer without `tool_choice` (as sessions ask).
    ToolsStreamed,
    /// Two tool calls in one answer.
    ParallelToolCalls,
    /// The names of the fields reasoning arrived in.
    Reasoning,
    /// `max_tokens` or `max_completion_tokens`.
    TokenLimitField,
    /// Deviations in the stream that the accumulator absorbed.
    StreamQuirks,
}

impl Check {
    /// Every check, in report order.
    pub const ALL: [Check; 15] = [
        Check::Reachable,
        Check::Authentication,
        Check::Models,
        Check::ModelListed,
        Check::ContextWindow,
        Check::Chat,
        Check::Streaming,
        Check::StreamUsage,
        Check::Tools,
        Check::ToolsStreamedAuto,
        Check::ToolsStreamed,
        Check::ParallelToolCalls,
        Check::Reasoning,
        Check::TokenLimitField,
        Check::StreamQuirks,
    ];

    /// A short title for the table.
    pub fn title(self) -> &'static str {
        match self {
            Check::Reachable => "reachable, TLS",
            Check::Authentication => "authentication",
            Check::Models => "/models",
            Check::ModelListed => "model listed",
            Check::ContextWindow => "context window",
            Check::Chat => "chat",
            Check::Streaming => "streaming chat",
            Check::StreamUsage => "stream usage",
            Check::Tools => "tools",
            Check::ToolsStreamedAuto => "tools streamed, auto",
            Check::ToolsStreamed => "tools streamed",
            Check::ParallelToolCalls => "parallel tool calls",
            Check::Reasoning => "reasoning fields",
            Check::TokenLimitField => "token limit field",
            Check::StreamQuirks => "stream quirks",
        }
    }
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Works as hrns expects.
    Ok,
    /// Works with a limitation hrns works around.
    Degraded,
    /// The provider does not offer it.
    Unsupported,
    /// It failed.
    Failed,
    /// Not tried, because an earlier check failed.
    Skipped,
}

impl Verdict {
    /// The word in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Degraded => "degraded",
            Verdict::Unsupported => "unsupported",
            Verdict::Failed => "failed",
            Verdict::Skipped => "skipped",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What was checked.
    pub check: Check,
    /// How it came out.
    pub verdict: Verdict,
    /// What was seen.
    pub detail: String,
    /// What hrns does about it (empty when nothing needs doing).
    pub action: String,
}

/// The outcome of a probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// One finding per [`Check`], in [`Check::ALL`] order.
    pub findings: Vec<Finding>,
    /// The quirks learned; sessions obey them once saved.
    #[serde(serialize_with = "serialize_quirks")]
    pub quirks: ProviderQuirks,
    /// Whether a session can chat with the provider (the streamed request worked).
    pub chat_works: bool,
}

fn serialize_quirks<S: serde::Serializer>(q: &ProviderQuirks, s: S) -> Result<S::Ok, S::Error> {
    q.serialize(s)
}

impl Report {
    /// The finding of `check`.
    pub fn finding(&self, check: Check) -> &Finding {
        self.findings
            .iter()
            .find(|f| f.check == check)
            .expect("a report has every check")
    }
}

/// Settings of a probe that are not in the [`Provider`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeOptions {
    /// Whether the driver skips TLS certificate checks (`skipVerify`).
    pub skip_verify: bool,
}

/// The probe's requests, each a step of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Models,
    Chat(MaxTokensField),
    Stream(StreamOptions),
    Tools,
    ToolsStreamedAuto,
    ToolsStreamed,
    Parallel,
}

/// A request handed out and not yet answered.
#[derive(Debug)]
struct InFlight {
    id: RequestId,
    step: Step,
    exchange: Exchange,
}

/// The provider probe; see the module docs.
#[derive(Debug)]
pub struct Probe {
    provider: Provider,
    model: String,
    options: ProbeOptions,
    plan: VecDeque<Step>,
    in_flight: Option<InFlight>,
    next_id: u64,
    quirks: ProviderQuirks,
    findings: BTreeMap<Check, Finding>,
    /// Why the remaining checks were not run, once the probe stopped early.
    stopped: Option<String>,
    reasoning_fields: BTreeSet<String>,
    think_tags: bool,
    stream_quirks: BTreeSet<&'static str>,
    /// Tool judgements of the streamed steps, for the `tool_choice` quirk.
    streamed_auto: Option<ToolJudgement>,
}

impl Probe {
    /// A probe of `model` at `provider`. The provider's saved quirks are ignored: the probe
    /// finds them out again.
    pub fn new(provider: Provider, model: impl Into<String>, options: ProbeOptions) -> Self {
        Probe {
            provider,
            model: model.into(),
            options,
            plan: VecDeque::from([Step::Models, Step::Chat(MaxTokensField::MaxTokens)]),
            in_flight: None,
            next_id: 0,
            quirks: ProviderQuirks::default(),
            findings: BTreeMap::new(),
            stopped: None,
            reasoning_fields: BTreeSet::new(),
            think_tags: false,
            stream_quirks: BTreeSet::new(),
            streamed_auto: None,
        }
    }

    /// The next request to send, or `None` when the probe is done (then read
    /// [`Probe::report`]). Call again only after the previous request's end or error.
    pub fn next_request(&mut self, now: Instant) -> Option<HttpRequest> {
        if self.in_flight.is_some() || self.stopped.is_some() {
            return None;
        }
        let step = self.plan.pop_front()?;
        let id = RequestId(self.next_id);
        self.next_id += 1;
        let req = match step {
            Step::Models => self.provider.models_request(id),
            _ => self.provider.chat_request(id, self.body(step)),
        };
        self.in_flight = Some(InFlight {
            id,
            step,
            exchange: Exchange::new(now, step_streams(step)),
        });
        Some(req)
    }

    /// The status and headers of the answer to `req` arrived.
    pub fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        req: RequestId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) {
        if let Some(f) = self.in_flight.as_mut().filter(|f| f.id == req) {
            f.exchange.head(now, status, headers);
        }
    }

    /// Body bytes of the answer to `req` arrived.
    pub fn handle_response_data(&mut self, now: Instant, req: RequestId, bytes: &[u8]) {
        if let Some(f) = self.in_flight.as_mut().filter(|f| f.id == req) {
            f.exchange.data(now, bytes);
        }
    }

    /// The answer to `req` ended; the probe judges it.
    pub fn handle_response_end(&mut self, now: Instant, req: RequestId) {
        if self.in_flight.as_ref().is_some_and(|f| f.id == req) {
            let f = self.in_flight.take().expect("checked");
            let mut exchange = f.exchange;
            exchange.end(now);
            self.judge(f.step, exchange);
        }
    }

    /// The request `req` failed in transport.
    pub fn handle_transport_error(&mut self, now: Instant, req: RequestId, error: TransportError) {
        if self.in_flight.as_ref().is_some_and(|f| f.id == req) {
            let f = self.in_flight.take().expect("checked");
            let mut exchange = f.exchange;
            exchange.end(now);
            exchange.error = Some(error);
            self.judge(f.step, exchange);
        }
    }

    /// The findings so far; checks not run are reported as skipped.
    pub fn report(&self) -> Report {
        let why = self
            .stopped
            .clone()
            .unwrap_or_else(|| "an earlier check failed".to_owned());
        let findings = Check::ALL
            .iter()
            .map(|&check| {
                self.findings.get(&check).cloned().unwrap_or(Finding {
                    check,
                    verdict: Verdict::Skipped,
                    detail: format!("not tried: {why}"),
                    action: String::new(),
                })
            })
            .collect();
        let chat_works = self
            .findings
            .get(&Check::Streaming)
            .is_some_and(|f| matches!(f.verdict, Verdict::Ok | Verdict::Degraded));
        Report {
            findings,
            quirks: self.quirks,
            chat_works,
        }
    }

    // ----- requests -----

    fn body(&self, step: Step) -> Vec<u8> {
        let ask = |text: &str| json!([{"role": "user", "content": text}]);
        let tool = json!([{
            "type": "function",
            "function": {
                "name": PROBE_TOOL,
                "description": "Returns the current local time in a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "The city's name."}},
                    "required": ["city"]
                }
            }
        }]);
        let one_call = "What time is it in Paris? Use the get_time tool.";
        let (messages, stream, tools, choice) = match step {
            Step::Models => unreachable!("GET has no body"),
            Step::Chat(_) => (ask("Reply with the single word: pong"), false, None, None),
            Step::Stream(_) => (
                ask("Count from 1 to 20, separated by spaces, and nothing else."),
                true,
                None,
                None,
            ),
            Step::Tools => (ask(one_call), false, Some(tool), Some("auto")),
            Step::ToolsStreamedAuto => (ask(one_call), true, Some(tool), Some("auto")),
            Step::ToolsStreamed => (ask(one_call), true, Some(tool), None),
            Step::Parallel => (
                ask(
                    "What time is it in Paris and in Tokyo? Call get_time once for each city, both calls in this one answer.",
                ),
                true,
                Some(tool),
                None,
            ),
        };
        let mut body = json!({"model": self.model, "messages": messages, "stream": stream});
        let obj = body.as_object_mut().expect("a JSON object");
        let field = match step {
            Step::Chat(field) => field,
            _ => self.quirks.max_tokens_field,
        };
        obj.insert(field.as_str().to_owned(), json!(TOKEN_LIMIT));
        let options = match step {
            Step::Stream(options) => options,
            _ => self.quirks.stream_options,
        };
        if stream && options == StreamOptions::Send {
            obj.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if let Some(tools) = tools {
            obj.insert("tools".into(), tools);
        }
        if let Some(choice) = choice {
            obj.insert("tool_choice".into(), json!(choice));
        } else if step == Step::Parallel {
            self.quirks.apply_to_body(obj);
        }
        serde_json::to_vec(&body).expect("a JSON value always serializes")
    }

    // ----- judging -----

    fn set(&mut self, check: Check, verdict: Verdict, detail: impl Into<String>, action: &str) {
        self.findings.insert(
            check,
            Finding {
                check,
                verdict,
                detail: detail.into(),
                action: action.to_owned(),
            },
        );
    }

    fn stop(&mut self, why: &str) {
        self.stopped = Some(why.to_owned());
        self.plan.clear();
    }

    fn judge(&mut self, step: Step, ex: Exchange) {
        if let Some(error) = &ex.error {
            if step == Step::Models {
                self.unreachable(error);
                return;
            }
        }
        if ex.status.is_some() && !self.findings.contains_key(&Check::Reachable) {
            self.reachable();
        }
        if step_streams(step) && ex.is_stream() {
            let analysis = judge::analyse_stream(&ex.body, &ex.content_type);
            self.stream_quirks.extend(analysis.quirks);
            self.reasoning_fields.extend(analysis.reasoning_fields);
            self.think_tags |= analysis.think_tags;
        }
        match step {
            Step::Models => self.judge_models(&ex),
            Step::Chat(field) => self.judge_chat(field, &ex),
            Step::Stream(options) => self.judge_stream(options, &ex),
            Step::Tools | Step::ToolsStreamedAuto | Step::ToolsStreamed | Step::Parallel => {
                self.judge_tools(step, &ex)
            }
        }
        if self.plan.is_empty() && self.stopped.is_none() {
            self.conclude();
        }
    }

    fn unreachable(&mut self, error: &TransportError) {
        let action = match error.kind {
            TransportErrorKind::Tls => {
                "check the certificate; for a self-signed local server only, set skipVerify"
            }
            TransportErrorKind::InvalidRequest => "fix the provider's url in the config",
            _ => "check the url and that the server is running",
        };
        self.set(
            Check::Reachable,
            Verdict::Failed,
            format!("{}: {}", error.kind, error.message),
            action,
        );
        self.stop("the server is not reachable");
    }

    fn reachable(&mut self) {
        let url = self.provider.base_url.to_ascii_lowercase();
        let (verdict, detail, action) = if url.starts_with("https://") {
            if self.options.skip_verify {
                (
                    Verdict::Degraded,
                    "TLS, certificate not checked (skipVerify)",
                    "keep skipVerify for self-signed local servers only",
                )
            } else {
                (Verdict::Ok, "TLS, certificate verified", "")
            }
        } else if judge::is_local(&url) {
            (Verdict::Ok, "plain HTTP to a local address", "")
        } else {
            (
                Verdict::Degraded,
                "plain HTTP to a remote address: the key and the conversation travel unencrypted",
                "use an https:// url if the server offers one",
            )
        };
        self.set(Check::Reachable, verdict, detail, action);
    }

    fn auth_failed(&mut self, status: u16, message: &str) {
        let action = if self.provider.api_key.is_some() {
            "the key is refused: check key or keyEnv in the config"
        } else {
            "the provider wants a key: set key or keyEnv in the config"
        };
        self.set(
            Check::Authentication,
            Verdict::Failed,
            format!("{status}: {message}"),
            action,
        );
    }

    fn auth_ok(&mut self) {
        if !self.findings.contains_key(&Check::Authentication) {
            let detail = if self.provider.api_key.is_some() {
                "key accepted"
            } else {
                "no key sent, none needed"
            };
            self.set(Check::Authentication, Verdict::Ok, detail, "");
        }
    }

    fn judge_models(&mut self, ex: &Exchange) {
        let status = ex.status.unwrap_or(0);
        let skip_listed = |p: &mut Probe, why: &str| {
            p.set(Check::ModelListed, Verdict::Skipped, why, "");
            p.set(Check::ContextWindow, Verdict::Skipped, why, "");
        };
        if matches!(status, 401 | 403) {
            let message = judge::error_message(&ex.body);
            self.auth_failed(status, &message);
            self.set(Check::Models, Verdict::Failed, format!("{status}"), "");
            skip_listed(self, "no model list");
            return;
        }
        if !(200..300).contains(&status) {
            let (verdict, action) = if matches!(status, 404 | 405 | 501) {
                (
                    Verdict::Unsupported,
                    "no model list to pick from: give the model by name",
                )
            } else {
                (
                    Verdict::Failed,
                    "hrns models and onboarding cannot list models",
                )
            };
            let message = judge::error_message(&ex.body);
            self.set(
                Check::Models,
                verdict,
                format!("{status}: {message}"),
                action,
            );
            skip_listed(self, "no model list");
            return;
        }
        let Some(models) = judge::model_list(&ex.body) else {
            self.set(
                Check::Models,
                Verdict::Degraded,
                format!("not a model list: {}", judge::quote(&ex.body)),
                "no model list to pick from: give the model by name",
            );
            skip_listed(self, "no model list");
            return;
        };
        self.auth_ok();
        self.set(
            Check::Models,
            Verdict::Ok,
            format!("{} model{}", models.len(), plural(models.len())),
            "",
        );
        match models.iter().find(|m| m.id == self.model) {
            Some(entry) => {
                self.set(
                    Check::ModelListed,
                    Verdict::Ok,
                    format!("{} listed", self.model),
                    "",
                );
                match crate::context::window_from_model(entry) {
                    Some(tokens) => self.set(
                        Check::ContextWindow,
                        Verdict::Ok,
                        format!("{tokens} tokens"),
                        "",
                    ),
                    None => self.set(
                        Check::ContextWindow,
                        Verdict::Unsupported,
                        "not reported by /models",
                        "hrns cannot tell how full the context is from the list",
                    ),
                }
            }
            None => {
                let some: Vec<&str> = models.iter().take(5).map(|m| m.id.as_str()).collect();
                self.set(
                    Check::ModelListed,
                    Verdict::Degraded,
                    format!("{} is not listed (listed: {})", self.model, some.join(", ")),
                    "the server may still accept it as an alias; if chat fails, pick a listed one",
                );
                self.set(
                    Check::ContextWindow,
                    Verdict::Skipped,
                    "the model is not listed",
                    "",
                );
            }
        }
    }

    fn judge_chat(&mut self, field: MaxTokensField, ex: &Exchange) {
        if let Some(error) = &ex.error {
            self.set(Check::Chat, Verdict::Failed, judge::transport(error), "");
            self.plan.push_back(Step::Stream(StreamOptions::Send));
            return;
        }
        let status = ex.status.unwrap_or(0);
        if matches!(status, 400 | 422) && field == MaxTokensField::MaxTokens {
            let message = judge::error_message(&ex.body);
            let raw = String::from_utf8_lossy(&ex.body);
            if let Some(("max_tokens", learned)) = self.quirks.learn_rejection(&[&message, &raw]) {
                self.quirks = learned;
                self.plan
                    .push_front(Step::Chat(MaxTokensField::MaxCompletionTokens));
                return;
            }
        }
        if matches!(status, 401 | 403) {
            let message = judge::error_message(&ex.body);
            self.auth_failed(status, &message);
            self.set(
                Check::Chat,
                Verdict::Failed,
                format!("{status}: {message}"),
                "",
            );
            self.stop("authentication failed");
            return;
        }
        if !(200..300).contains(&status) {
            let message = judge::error_message(&ex.body);
            let action = if status == 404 {
                "check the model name (hrns models lists them)"
            } else {
                ""
            };
            self.set(
                Check::Chat,
                Verdict::Failed,
                format!("{status}: {message}"),
                action,
            );
            if status == 404 {
                self.stop("the model was not found");
                return;
            }
            self.plan.push_back(Step::Stream(StreamOptions::Send));
            return;
        }
        self.auth_ok();
        match judge::chat_response(&ex.body) {
            Ok(answer) => {
                self.reasoning_fields
                    .extend(answer.reasoning_fields.clone());
                self.think_tags |= answer.text.contains("<think>");
                if answer.text.trim().is_empty() && answer.tool_calls.is_empty() {
                    self.set(
                        Check::Chat,
                        Verdict::Degraded,
                        format!(
                            "empty answer (finish_reason {})",
                            answer.finish_reason.as_deref().unwrap_or("none")
                        ),
                        "",
                    );
                } else if answer.text.trim().is_empty() {
                    self.set(Check::Chat, Verdict::Ok, "answered with a tool call", "");
                } else {
                    self.set(
                        Check::Chat,
                        Verdict::Ok,
                        format!(
                            "answered {:?}",
                            crate::text::shorten(answer.text.trim(), 40)
                        ),
                        "",
                    );
                }
                let (detail, action) = match field {
                    MaxTokensField::MaxTokens => ("max_tokens accepted", ""),
                    MaxTokensField::MaxCompletionTokens => (
                        "max_tokens refused, max_completion_tokens accepted",
                        "sessions send max_completion_tokens (saved)",
                    ),
                };
                self.set(Check::TokenLimitField, Verdict::Ok, detail, action);
            }
            Err(e) => self.set(Check::Chat, Verdict::Failed, e, ""),
        }
        self.plan.push_back(Step::Stream(StreamOptions::Send));
    }

    fn judge_stream(&mut self, options: StreamOptions, ex: &Exchange) {
        if let Some(error) = &ex.error {
            self.set(
                Check::Streaming,
                Verdict::Failed,
                judge::transport(error),
                "",
            );
            self.after_stream();
            return;
        }
        let status = ex.status.unwrap_or(0);
        if matches!(status, 400 | 422) && options == StreamOptions::Send {
            let message = judge::error_message(&ex.body);
            let raw = String::from_utf8_lossy(&ex.body);
            if let Some(("stream_options", learned)) =
                self.quirks.learn_rejection(&[&message, &raw])
            {
                self.quirks = learned;
                self.set(
                    Check::StreamUsage,
                    Verdict::Unsupported,
                    format!("stream_options refused: {message}"),
                    "sessions leave stream_options out (saved); token counts only if sent anyway",
                );
                self.plan.push_front(Step::Stream(StreamOptions::Omit));
                return;
            }
        }
        if !(200..300).contains(&status) {
            let message = judge::error_message(&ex.body);
            self.set(
                Check::Streaming,
                Verdict::Failed,
                format!("{status}: {message}"),
                "",
            );
            self.after_stream();
            return;
        }
        self.auth_ok();
        if !ex.is_stream() {
            let verdict = match judge::chat_response(&ex.body) {
                Ok(_) => Verdict::Degraded,
                Err(_) => Verdict::Failed,
            };
            self.set(
                Check::Streaming,
                verdict,
                format!("stream: true ignored, answered whole ({})", ex.content_type),
                "hrns shows the answer when it is complete",
            );
            self.after_stream();
            return;
        }
        match &ex.stream_result {
            Some(Ok(completion)) => {
                let text = completion
                    .choices
                    .first()
                    .map(|c| c.content.clone())
                    .unwrap_or_default();
                let timing = judge::timing(ex, completion.usage.as_ref(), &text);
                let verdict = if text.trim().is_empty() {
                    Verdict::Degraded
                } else {
                    Verdict::Ok
                };
                self.set(Check::Streaming, verdict, timing, "");
                if options == StreamOptions::Send {
                    if completion.usage.is_some() {
                        self.set(
                            Check::StreamUsage,
                            Verdict::Ok,
                            "include_usage accepted and honoured",
                            "",
                        );
                    } else {
                        self.set(
                            Check::StreamUsage,
                            Verdict::Degraded,
                            "include_usage accepted, but no usage was sent",
                            "token counts are not shown for this provider",
                        );
                    }
                }
            }
            Some(Err(error)) => {
                self.set(Check::Streaming, Verdict::Failed, error.clone(), "");
            }
            None => {
                self.set(
                    Check::Streaming,
                    Verdict::Failed,
                    "the stream did not end",
                    "",
                );
            }
        }
        self.after_stream();
    }

    /// After the streamed chat: tools, unless neither chat worked.
    fn after_stream(&mut self) {
        let works = |p: &Probe, c: Check| {
            p.findings
                .get(&c)
                .is_some_and(|f| matches!(f.verdict, Verdict::Ok | Verdict::Degraded))
        };
        if !works(self, Check::Chat) && !works(self, Check::Streaming) {
            self.stop("chat does not work");
            return;
        }
        if !self.findings.contains_key(&Check::TokenLimitField) {
            self.set(
                Check::TokenLimitField,
                Verdict::Skipped,
                "not tried: the plain chat failed",
                "",
            );
        }
        self.plan.extend([
            Step::Tools,
            Step::ToolsStreamedAuto,
            Step::ToolsStreamed,
            Step::Parallel,
        ]);
    }

    fn judge_tools(&mut self, step: Step, ex: &Exchange) {
        let check = match step {
            Step::Tools => Check::Tools,
            Step::ToolsStreamedAuto => Check::ToolsStreamedAuto,
            Step::ToolsStreamed => Check::ToolsStreamed,
            _ => Check::ParallelToolCalls,
        };
        let judgement = judge::tool_answer(ex);
        if step == Step::ToolsStreamedAuto {
            self.streamed_auto = Some(judgement.clone());
        }
        let (verdict, detail, action) = match (&judgement, step) {
            (ToolJudgement::Calls(calls), Step::Parallel) if calls.len() >= 2 => (
                Verdict::Ok,
                format!("{} calls in one answer", calls.len()),
                String::new(),
            ),
            (ToolJudgement::Calls(calls), Step::Parallel) => (
                Verdict::Degraded,
                format!("{} call in the answer", calls.len()),
                "hrns runs one call per step: slower, same result".to_owned(),
            ),
            (ToolJudgement::Calls(calls), _) => judge::judge_calls(calls),
            (ToolJudgement::NoCall(text), _) => (
                Verdict::Degraded,
                format!(
                    "answered in text without a call: {:?}",
                    crate::text::shorten(text.trim(), 60)
                ),
                "the model may not use tools well; agents need them".to_owned(),
            ),
            (ToolJudgement::Rejected(message), _) => (
                Verdict::Unsupported,
                format!("tools refused: {message}"),
                "only plain chat works; pick a model with tool support".to_owned(),
            ),
            (ToolJudgement::Failed(message), _) => {
                (Verdict::Failed, message.clone(), String::new())
            }
        };
        self.findings.insert(
            check,
            Finding {
                check,
                verdict,
                detail,
                action,
            },
        );
        if step == Step::ToolsStreamed {
            self.learn_tool_choice(&judgement);
        }
    }

    /// Sessions send no `tool_choice`; when only `auto` gets tool calls, they send it.
    fn learn_tool_choice(&mut self, without: &ToolJudgement) {
        let auto_works =
            matches!(&self.streamed_auto, Some(ToolJudgement::Calls(c)) if !c.is_empty());
        let without_works = matches!(without, ToolJudgement::Calls(c) if !c.is_empty());
        if auto_works && !without_works {
            self.quirks.tool_choice = ToolChoice::Auto;
            if let Some(f) = self.findings.get_mut(&Check::ToolsStreamed) {
                f.action = "sessions send tool_choice: auto (saved)".to_owned();
            }
        }
    }

    /// The findings that sum up several requests.
    fn conclude(&mut self) {
        let fields: Vec<String> = self.reasoning_fields.iter().cloned().collect();
        let (verdict, detail, action) = match (fields.is_empty(), self.think_tags) {
            (_, true) => (
                Verdict::Degraded,
                "reasoning inside <think> tags in the answer text".to_owned(),
                "shown as part of the answer",
            ),
            (true, false) => (Verdict::Ok, "none seen".to_owned(), ""),
            (false, false) => (
                Verdict::Ok,
                fields.join(", "),
                "shown as reasoning and sent back with tool calls",
            ),
        };
        self.set(Check::Reasoning, verdict, detail, action);
        let quirks: Vec<&str> = self.stream_quirks.iter().copied().collect();
        if self
            .findings
            .get(&Check::Streaming)
            .is_some_and(|f| matches!(f.verdict, Verdict::Ok | Verdict::Degraded))
        {
            if quirks.is_empty() {
                self.set(Check::StreamQuirks, Verdict::Ok, "none", "");
            } else {
                self.set(
                    Check::StreamQuirks,
                    Verdict::Ok,
                    quirks.join("; "),
                    "absorbed by the stream accumulator",
                );
            }
        }
    }
}

fn step_streams(step: Step) -> bool {
    matches!(
        step,
        Step::Stream(_) | Step::ToolsStreamedAuto | Step::ToolsStreamed | Step::Parallel
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The events a stream exchange feeds through; kept apart so `judge` stays free of the plan.
pub(crate) fn is_token_event(ev: &StreamEvent) -> bool {
    matches!(
        ev,
        StreamEvent::ContentDelta { .. }
            | StreamEvent::ReasoningDelta { .. }
            | StreamEvent::RefusalDelta { .. }
            | StreamEvent::ToolCallBegin { .. }
            | StreamEvent::ToolCallArgumentsDelta { .. }
    )
}

/// A fresh [`ChatStream`] with the probe's body limit.
pub(crate) fn new_stream() -> ChatStream {
    ChatStream::with_max_event_size(MAX_BODY)
}

/// Most of a body kept.
pub(crate) const fn max_body() -> usize {
    MAX_BODY
}
