//! `session/update`s made from the session's [`Event`]s: the same values `exec --json` and the
//! TUI consume, one mapping for every editor.
//!
//! [`Updates`] follows one session's events: answer and reasoning text become message and
//! thought chunks, built from the redacted deltas of the event stream's one encoding
//! ([`crate::event_json::Deltas`]: a secret split over two deltas is hidden exactly as
//! `exec --json` hides it). The deltas of one batch (what the driver read at once) are
//! coalesced into one chunk per run of a kind: every byte, in order, in fewer updates, which
//! is what keeps a fast stream cheap for the editor and for us. A complete tool call becomes a `tool_call` (`pending`),
//! then `in_progress` when it runs and `completed` or `failed` with its output, and for a write
//! its diff; a plan becomes a `plan`. [`Updates::stop`] reads the final event as the prompt's
//! stop reason.

use crate::event_json::{DeltaKind, Deltas};
use crate::plan::{PlanStep, StepStatus};
use crate::secrets::{Ending, Secrets};
use crate::session::{Event, Question, ToolStatus, TurnError};
use crate::task::ChildEvent;
use crate::tool::builtin::{
    EDIT_FILE, GREP, LIST_FILES, LOAD_SKILL, READ_FILE, RUN_COMMAND, WEB_FETCH, WRITE_FILE,
};
use crate::wire::{Message, Role};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Why a prompt ended, as ACP names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model answered.
    EndTurn,
    /// The answer was cut off by the token limit.
    MaxTokens,
    /// The step limit stopped the turn.
    MaxTurnRequests,
    /// The model or the provider's filter refused.
    Refusal,
    /// The client cancelled.
    Cancelled,
}

impl StopReason {
    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// What a write changed, for the `diff` content of its `tool_call_update`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file's absolute path.
    pub path: String,
    /// Its text before (`None` for a new file).
    pub old_text: Option<String>,
    /// Its text after.
    pub new_text: String,
}

/// The kind ACP shows a tool call with: `read`, `edit`, `execute`, `fetch`, `search`, or
/// `other` (MCP tools, subagents, the plan).
pub fn tool_kind(name: &str) -> &'static str {
    match name {
        READ_FILE | LOAD_SKILL => "read",
        WRITE_FILE | EDIT_FILE => "edit",
        RUN_COMMAND => "execute",
        WEB_FETCH => "fetch",
        GREP | LIST_FILES => "search",
        _ => "other",
    }
}

/// Which stream a chunk belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Message,
    Thought,
}

impl Chunk {
    fn update(self) -> &'static str {
        match self {
            Chunk::Message => "agent_message_chunk",
            Chunk::Thought => "agent_thought_chunk",
        }
    }
}

/// Where a tool call stands, as the client was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallState {
    /// Announced (`pending`); runs unless it is asked about.
    Announced,
    /// Waiting for the user's permission.
    Asked,
    /// `in_progress` was sent.
    Running,
}

/// One session's mapping from events to updates.
#[derive(Debug)]
pub struct Updates {
    /// The session's working directory, for absolute paths in locations.
    cwd: String,
    /// The deltas not yet redacted to the end (a tail that may start a secret waits).
    deltas: Deltas,
    /// Clean text of the current batch not yet sent, coalesced, with its stream.
    pending: Option<(Chunk, String)>,
    calls: HashMap<String, CallState>,
    /// Calls in the order announced, for `in_progress` in order.
    order: Vec<String>,
    /// Refusal text came in this turn.
    refused: bool,
}

impl Updates {
    /// A mapping for a session in `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        Updates {
            cwd: cwd.into(),
            deltas: Deltas::new(),
            pending: None,
            calls: HashMap::new(),
            order: Vec::new(),
            refused: false,
        }
    }

    /// The updates for `event`, appended to `out`, with `secrets` taken out. `change` is what
    /// a write's result changed, when the caller knows it.
    pub fn on_event(
        &mut self,
        secrets: &Secrets,
        event: &Event,
        change: Option<&FileChange>,
        out: &mut Vec<Value>,
    ) {
        let (kind, text) = match event {
            Event::TextDelta { text } => (DeltaKind::Text, text.as_str()),
            Event::RefusalDelta { text } => {
                self.refused = true;
                (DeltaKind::Refusal, text.as_str())
            }
            Event::ReasoningDelta { text } => (DeltaKind::Reasoning, text.as_str()),
            Event::ToolCall {
                id,
                name,
                arguments,
            } => {
                self.flush(secrets, out);
                self.calls.insert(id.clone(), CallState::Announced);
                self.order.push(id.clone());
                let mut update = self.tool_call(id, name, arguments);
                secrets.redact_json(&mut update);
                out.push(update);
                return;
            }
            Event::ApprovalRequested { id, .. } => {
                self.flush(secrets, out);
                self.calls.insert(id.clone(), CallState::Asked);
                return;
            }
            Event::ToolResult {
                id,
                name,
                status,
                output,
            } => {
                self.flush(secrets, out);
                self.calls.remove(id);
                self.order.retain(|c| c != id);
                let mut update = tool_result(id, name, *status, &output.content, change);
                secrets.redact_json(&mut update);
                out.push(update);
                return;
            }
            Event::PlanUpdated { plan, .. } => {
                self.flush(secrets, out);
                let mut update = plan_update(plan);
                secrets.redact_json(&mut update);
                out.push(update);
                return;
            }
            Event::Child(child) => {
                if let Some(mut update) = self.child_update(child) {
                    self.flush(secrets, out);
                    secrets.redact_json(&mut update);
                    out.push(update);
                }
                return;
            }
            Event::TurnFinished { .. } | Event::TurnFailed { .. } | Event::TurnCancelled => {
                self.flush(secrets, out);
                self.calls.clear();
                self.order.clear();
                return;
            }
            // Told by other means (the prompt's answer, usage_update) or not for editors.
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::ToolCallStreaming { .. }
            | Event::Usage { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. } => return,
        };
        let pending = &mut self.pending;
        self.deltas.push(secrets, kind, text, &mut |kind, clean| {
            coalesce(pending, kind, clean, out);
        });
    }

    /// The end of a batch of events: the batch's text goes out (coalesced, but for a tail the
    /// next batch could complete into a secret), and calls announced and not asked about are
    /// running now (the driver starts them with the batch).
    pub fn end_batch(&mut self, secrets: &Secrets, out: &mut Vec<Value>) {
        let pending = &mut self.pending;
        self.deltas
            .drain(secrets, Ending::More, &mut |kind, clean| {
                coalesce(pending, kind, clean, out);
            });
        send_pending(&mut self.pending, out);
        for id in &self.order {
            if let Some(state @ CallState::Announced) = self.calls.get_mut(id) {
                *state = CallState::Running;
                out.push(status_update(id, "in_progress"));
            }
        }
    }

    /// The user allowed the call `id`: it runs now.
    pub fn allowed(&mut self, id: &str, out: &mut Vec<Value>) {
        if let Some(state) = self.calls.get_mut(id) {
            *state = CallState::Running;
            out.push(status_update(id, "in_progress"));
        }
    }

    /// The stop reason when `event` ends the turn, or the error a failed turn answers with.
    pub fn stop(&mut self, event: &Event) -> Option<Result<StopReason, TurnError>> {
        let refused = std::mem::take(&mut self.refused);
        match event {
            Event::TurnFinished { finish_reason, .. } => {
                let reason = finish_reason.as_ref().map(|r| r.as_str());
                Some(Ok(match reason {
                    Some("content_filter") => StopReason::Refusal,
                    Some("length") => StopReason::MaxTokens,
                    _ if refused => StopReason::Refusal,
                    _ => StopReason::EndTurn,
                }))
            }
            Event::TurnFailed {
                error: TurnError::StepLimit { .. },
            } => Some(Ok(StopReason::MaxTurnRequests)),
            Event::TurnFailed { error } => Some(Err(error.clone())),
            Event::TurnCancelled => Some(Ok(StopReason::Cancelled)),
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ToolCall { .. }
            | Event::ApprovalRequested { .. }
            | Event::ToolResult { .. }
            | Event::Usage { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::PlanUpdated { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. }
            | Event::Child(_) => {
                self.refused = refused;
                None
            }
        }
    }

    /// Writes all the text so far: the chunk stream ends here.
    fn flush(&mut self, secrets: &Secrets, out: &mut Vec<Value>) {
        let pending = &mut self.pending;
        self.deltas
            .drain(secrets, Ending::Last, &mut |kind, clean| {
                coalesce(pending, kind, clean, out);
            });
        send_pending(&mut self.pending, out);
    }

    /// The `tool_call` update announcing a call.
    fn tool_call(&self, id: &str, name: &str, arguments: &str) -> Value {
        let input: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let mut update = json!({
            "sessionUpdate": "tool_call",
            "toolCallId": id,
            "title": title(name, &input),
            "kind": tool_kind(name),
            "status": "pending",
            "rawInput": input,
        });
        if let Some(path) = input.get("path").and_then(Value::as_str) {
            update["locations"] = json!([{"path": self.absolute(path)}]);
        }
        update
    }

    /// A subagent's call as a `tool_call` of its own, shown under the parent's `task` call:
    /// its id is the parent call's id and the child's joined by `/` (children's ids are
    /// their models' and may repeat the parent's), its title names the child's agent, and
    /// `_meta.hrns` names the parent call and the agent. It runs as the child decides, so it
    /// starts `in_progress`; its result completes or fails it. Nothing else of a child is
    /// shown: its answer is the `task` call's result.
    fn child_update(&self, child: &ChildEvent) -> Option<Value> {
        let id = |call: &str| format!("{}/{call}", child.parent_call_id);
        let meta =
            json!({"hrns": {"parentToolCallId": child.parent_call_id, "agent": child.agent}});
        let mut update = match &child.event {
            Event::ToolCall {
                id: call,
                name,
                arguments,
            } => {
                let mut update = self.tool_call(&id(call), name, arguments);
                let title = update["title"].as_str().unwrap_or(name).to_owned();
                update["title"] = Value::String(format!("{}: {title}", child.agent));
                update["status"] = Value::String("in_progress".into());
                update
            }
            Event::ToolResult {
                id: call,
                name,
                status,
                output,
            } => tool_result(&id(call), name, *status, &output.content, None),
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ApprovalRequested { .. }
            | Event::Usage { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::PlanUpdated { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. }
            | Event::TurnFinished { .. }
            | Event::TurnFailed { .. }
            | Event::TurnCancelled
            // A child has no children.
            | Event::Child(_) => return None,
        };
        update["_meta"] = meta;
        Some(update)
    }

    fn absolute(&self, path: &str) -> String {
        if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("{}/{}", self.cwd.trim_end_matches('/'), path)
        }
    }
}

/// A short title for a call: what it does to what.
fn title(name: &str, input: &Value) -> String {
    let arg = |key: &str| input.get(key).and_then(Value::as_str);
    let title = match name {
        READ_FILE => arg("path").map(|p| format!("Read {p}")),
        WRITE_FILE => arg("path").map(|p| format!("Write {p}")),
        EDIT_FILE => arg("path").map(|p| format!("Edit {p}")),
        RUN_COMMAND => arg("command").map(|c| format!("Run {c}")),
        WEB_FETCH => arg("url").map(|u| format!("Fetch {u}")),
        GREP => arg("pattern").map(|p| format!("Search for {p}")),
        LIST_FILES => Some(format!("List {}", arg("dir").unwrap_or("."))),
        _ => None,
    };
    let mut title = title.unwrap_or_else(|| name.to_owned());
    // One line, and not a page: a title is shown in a list.
    if let Some(i) = title.find('\n') {
        title.truncate(i);
        title.push('…');
    }
    if title.chars().count() > 200 {
        title = title.chars().take(200).collect::<String>() + "…";
    }
    title
}

/// Adds a delta's clean text to the batch's chunk of its stream; text of the other stream
/// sends the chunk so far first.
fn coalesce(
    pending: &mut Option<(Chunk, String)>,
    kind: DeltaKind,
    clean: &str,
    out: &mut Vec<Value>,
) {
    let chunk = match kind {
        DeltaKind::Text | DeltaKind::Refusal => Chunk::Message,
        DeltaKind::Reasoning => Chunk::Thought,
    };
    match pending {
        Some((current, text)) if *current == chunk => text.push_str(clean),
        Some(_) | None => {
            send_pending(pending, out);
            *pending = Some((chunk, clean.to_owned()));
        }
    }
}

/// Sends the batch's chunk, if it has text.
fn send_pending(pending: &mut Option<(Chunk, String)>, out: &mut Vec<Value>) {
    if let Some((chunk, text)) = pending.take() {
        if !text.is_empty() {
            out.push(chunk_update(chunk, &text));
        }
    }
}

fn chunk_update(chunk: Chunk, text: &str) -> Value {
    json!({"sessionUpdate": chunk.update(), "content": {"type": "text", "text": text}})
}

fn status_update(id: &str, status: &str) -> Value {
    json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status})
}

/// The `tool_call_update` with a call's result.
fn tool_result(
    id: &str,
    name: &str,
    status: ToolStatus,
    output: &str,
    change: Option<&FileChange>,
) -> Value {
    let done = match status {
        ToolStatus::Ok => "completed",
        ToolStatus::Error
        | ToolStatus::UnknownTool
        | ToolStatus::InvalidArguments
        | ToolStatus::DeniedByPolicy
        | ToolStatus::Denied
        | ToolStatus::Repeated
        | ToolStatus::NotRun
        | ToolStatus::Cancelled
        | ToolStatus::BlockedByHook => "failed",
    };
    let mut content = vec![json!({"type": "content", "content": {"type": "text", "text": output}})];
    if let (ToolStatus::Ok, Some(change), WRITE_FILE | EDIT_FILE) = (status, change, name) {
        content.push(json!({
            "type": "diff",
            "path": change.path,
            "oldText": change.old_text,
            "newText": change.new_text,
        }));
    }
    json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": id,
        "status": done,
        "content": content,
    })
}

fn plan_update(plan: &[PlanStep]) -> Value {
    let entries: Vec<Value> = plan
        .iter()
        .map(|s| {
            let status = match s.status {
                StepStatus::Pending => "pending",
                StepStatus::InProgress => "in_progress",
                StepStatus::Completed => "completed",
            };
            json!({"content": s.step, "priority": "medium", "status": status})
        })
        .collect();
    json!({"sessionUpdate": "plan", "entries": entries})
}

/// The `usage_update` for `used` tokens of a window of `size`; `None` while the window is
/// unknown (the protocol needs both).
pub fn usage_update(used: u64, size: Option<u64>) -> Option<Value> {
    size.map(|size| json!({"sessionUpdate": "usage_update", "used": used, "size": size}))
}

/// The updates that show a saved history again (`session/load`): the user's messages, the
/// answers, and each tool call with its result.
pub fn replay(secrets: &Secrets, cwd: &str, messages: &[Message]) -> Vec<Value> {
    let mapper = Updates::new(cwd);
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut out = Vec::new();
    for m in messages {
        match m.role {
            Role::User => {
                let text = m.text();
                if !text.is_empty() {
                    out.push(json!({
                        "sessionUpdate": "user_message_chunk",
                        "content": {"type": "text", "text": text},
                    }));
                }
            }
            Role::Assistant => {
                let text = m.text();
                if !text.is_empty() {
                    out.push(chunk_update(Chunk::Message, &text));
                }
                for c in &m.tool_calls {
                    names.insert(&c.id, &c.function.name);
                    out.push(mapper.tool_call(&c.id, &c.function.name, &c.function.arguments));
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                let name = names.get(id).copied().unwrap_or_default();
                out.push(tool_result(id, name, ToolStatus::Ok, &m.text(), None));
            }
            Role::System | Role::Developer | Role::Function => {}
        }
    }
    for update in &mut out {
        secrets.redact_json(update);
    }
    out
}

/// The option ids (and kinds) of a permission request.
pub const ALLOW_ONCE: &str = "allow_once";
/// Allow this tool for the rest of the session.
pub const ALLOW_ALWAYS: &str = "allow_always";
/// Deny this call.
pub const REJECT_ONCE: &str = "reject_once";
/// Deny this tool for the rest of the session.
pub const REJECT_ALWAYS: &str = "reject_always";

/// The options offered with every permission request.
pub fn permission_options(tool: &str) -> Value {
    json!([
        {"optionId": ALLOW_ONCE, "name": "Allow once", "kind": ALLOW_ONCE},
        {"optionId": ALLOW_ALWAYS, "name": format!("Always allow {tool} in this session"), "kind": ALLOW_ALWAYS},
        {"optionId": REJECT_ONCE, "name": "Reject", "kind": REJECT_ONCE},
        {"optionId": REJECT_ALWAYS, "name": format!("Always reject {tool} in this session"), "kind": REJECT_ALWAYS},
    ])
}

/// The `session/request_permission` parameters for `question`, the session's own call or a
/// subagent's. A subagent's call is named as its `tool_call` was (see [`Updates`]): the parent
/// `task` call's id and the child's joined by `/`, its title after the child's agent and
/// `_meta.hrns` naming both, so that the editor attaches the question to the call it shows
/// (the child's own id may be one of the parent's calls, or nothing the editor knows).
pub fn question_request(
    secrets: &Secrets,
    cwd: &str,
    session_id: &str,
    question: &Question,
) -> Value {
    let q = match question {
        Question::Call(run) => {
            return permission_request(
                secrets,
                cwd,
                session_id,
                &run.call_id,
                &run.name,
                &run.arguments,
            );
        }
        Question::Child(q) => q,
    };
    let id = format!("{}/{}", q.parent_call_id, q.call_id);
    let mut params = permission_request(secrets, cwd, session_id, &id, &q.name, &q.arguments);
    let call = &mut params["toolCall"];
    let title = call["title"].as_str().unwrap_or(&q.name).to_owned();
    call["title"] = Value::String(format!("{}: {title}", q.agent));
    call["_meta"] = json!({"hrns": {"parentToolCallId": q.parent_call_id, "agent": q.agent}});
    // The agent's name and the parent's id came from outside the secrets' reach too.
    secrets.redact_json(&mut params);
    params
}

/// The `session/request_permission` parameters for the call `id` of `name(arguments)`.
pub fn permission_request(
    secrets: &Secrets,
    cwd: &str,
    session_id: &str,
    id: &str,
    name: &str,
    arguments: &str,
) -> Value {
    let mut call = Updates::new(cwd).tool_call(id, name, arguments);
    if let Some(object) = call.as_object_mut() {
        object.remove("sessionUpdate");
    }
    let mut params = json!({
        "sessionId": session_id,
        "toolCall": call,
        "options": permission_options(name),
    });
    secrets.redact_json(&mut params);
    params
}
