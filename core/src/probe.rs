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
//! a request for two tool calls in one answer; and a plain chat with
//! `response_format: {"type": "json_schema"}`. A failed authentication or an unreachable
//! server ends the probe early; later checks are reported as skipped.

mod findings;
mod judge;
mod report;
#[cfg(test)]
mod tests;

use crate::http::{HttpRequest, RequestId};
use crate::quirks::{MaxTokensField, ProviderQuirks, StreamOptions, ToolChoice};
use crate::session::{Provider, TransportError, TransportErrorKind};
use crate::stream::{ChatStream, StreamEvent};
use judge::{Exchange, ToolJudgement};
pub use report::{Check, Finding, Report, Verdict};
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
    StructuredOutput,
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
            Step::Models => self.provider.get_models(id),
            _ => self.provider.post_chat(id, self.body(step)),
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
            Step::StructuredOutput => (
                ask("Which city is the capital of France? Answer in JSON."),
                false,
                None,
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
        if step == Step::StructuredOutput {
            obj.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {
                    "name": crate::session::SCHEMA_NAME,
                    "schema": structured_schema(),
                }}),
            );
        }
        serde_json::to_vec(&body).expect("a JSON value always serializes")
    }
}

/// The schema of the structured-output check: `{"city": "…"}`.
fn structured_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": false,
    })
}

fn step_streams(step: Step) -> bool {
    matches!(
        step,
        Step::Stream(_) | Step::ToolsStreamedAuto | Step::ToolsStreamed | Step::Parallel
    )
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
