//! A turn: sending the prompt, driving the runner, and showing its events as they arrive.

use super::{App, Asking, Msg, questions};
use crate::tui::markdown::highlight::CodeHighlighter;
use crate::tui::text::{Line, SpanStyle};
use crate::tui::view;
use hrns_core::session::{Event, Question, Session};
use std::time::Instant;

impl App {
    pub(super) fn interrupt(&mut self) {
        if let Some(session) = self.session.as_mut() {
            session.cancel();
        }
        self.asking = None;
        self.dispatch();
    }

    /// Whether a turn is running.
    pub(super) fn busy(&self) -> bool {
        self.session.as_ref().is_some_and(|s| !s.is_idle())
    }

    /// Tokens used in this conversation, from the session's own count.
    /// The conversation's tokens and their cost so far.
    pub(super) fn spent(&self) -> crate::tui::status::Spent {
        let usage = self
            .session
            .as_ref()
            .map(Session::usage)
            .unwrap_or_default();
        self.spent_before
            .plus(crate::tui::status::Spent::of(usage, self.pricing))
    }

    /// Starts the IO the session asked for after input of our own, and shows its events.
    pub(super) fn dispatch(&mut self) {
        if let (Some(runner), Some(session)) = (self.runner.as_mut(), self.session.as_mut()) {
            let events = runner.dispatch(session);
            self.on_events(events);
        }
    }
    pub(super) fn start_turn(&mut self, prompt: String) {
        if self.session.is_none() {
            self.error("no session is ready");
            return;
        }
        let width = self.screen.wrap_width();
        let echo = view::user_message(&prompt, width);
        self.print(&echo);
        let (message, attached) = crate::setup::mentions::expand(
            &prompt,
            &self.setup.workspace,
            &self.setup.sandbox.protected,
        );
        for a in &attached {
            self.info(&a.summary());
        }
        if let (Some(runner), Some(session)) = (self.runner.as_mut(), self.session.as_mut()) {
            // A server that stopped or changed its tools while idle: the first request of the
            // turn offers them as they are.
            runner.update_tools(session);
        }
        if let Some(session) = self.session.as_mut() {
            if let Err(e) = session.submit_message(message) {
                self.error(&format!("the message could not be sent: {e}"));
                return;
            }
        }
        self.waiting_since = Some(Instant::now());
        self.dispatch();
    }

    pub(super) fn on_events(&mut self, events: Vec<Event>) {
        let mut ended = false;
        for event in events {
            // The session's own question, or a subagent's: one path.
            let asked = self
                .session
                .as_ref()
                .and_then(|session| Question::pending_in(session, &event));
            let last = event.is_final();
            ended |= last;
            if last {
                // Children the turn no longer waits for end with it.
                let width = self.screen.wrap_width();
                let ended = self.tasks.end_all(Instant::now(), width);
                self.print(&ended);
            }
            self.on_event(event);
            match asked {
                None => {}
                Some(Question::Child(q)) => {
                    self.child_asks.push_back(q);
                    self.ask_child();
                }
                Some(Question::Call(run)) => {
                    // The call waits for the answer, so the file is still as it was.
                    let workspace = &self.setup.workspace;
                    if let Some(diff) =
                        crate::host::diff::proposed(workspace, &run.name, &run.arguments)
                    {
                        self.print(&crate::tui::diff_view::diff_lines(&diff, self.highlight));
                        self.diffs.shown(&run.call_id);
                    }
                    self.waiting_since = None;
                    let unsandboxed = crate::sandbox::escalate::offer(
                        self.policy,
                        &self.setup.sandbox.policy,
                        &run.name,
                    );
                    let ask = Asking {
                        question: Question::Call(run),
                        unsandboxed,
                        reason: false,
                    };
                    questions::show_sessions(&mut self.asking, &mut self.child_asks, ask);
                }
            }
            if last {
                self.waiting_since = None;
                self.asking = None;
                self.child_asks.clear(); // their children are gone: unanswered is denied
            }
        }
        if !self.busy() {
            if let Some(next) = self.queue.next() {
                self.on_submit(next);
            }
        }
        if ended && !self.busy() {
            self.start_idle_wait();
        }
    }

    pub(super) fn on_msg(&mut self, msg: Msg) {
        match msg {
            Msg::Terminate(signal) => {
                // Leaving mid-turn cancels it (the loop's end does that), as Ctrl-C would.
                self.exit_status = crate::term::signals::status_of(signal);
                self.quit = true;
            }
            Msg::Models(Ok(models)) => {
                let current = self.setup.provider.model.clone();
                let lines: Vec<Line> = models
                    .iter()
                    .enumerate()
                    .map(|(i, m)| {
                        let mark = if *m == current { "* " } else { "  " };
                        Line::plain(format!("{mark}{:>2}. {m}", i + 1))
                    })
                    .collect();
                if std::mem::take(&mut self.picking_model) && !models.is_empty() {
                    self.info("pick one with /model N (its number) or /model NAME");
                }
                self.models = models;
                if lines.is_empty() {
                    self.info("the provider lists no models");
                }
                self.print(&lines);
            }
            Msg::Models(Err(e)) => self.error(&e),
            Msg::ConnectModels { url, result } => self.connect_models(&url, result),
            Msg::HookRuns { built, id, runs } => self.on_hook_runs(built, id, runs),
            Msg::McpChanged => {
                // Said at once, also while idle; the next request offers the tools as they are.
                if let (Some(runner), Some(session)) = (self.runner.as_mut(), self.session.as_mut())
                {
                    runner.update_tools(session);
                }
                self.dispatch();
            }
            Msg::Window(models) => {
                self.setup.learn_window(&models);
                let window = self.setup.context_window();
                if let Some(session) = self.session.as_mut() {
                    session.set_context_window(window);
                }
            }
        }
    }

    /// Shows the next subagent's question when no other question is on screen (a question
    /// of a turn that has ended is dropped, which denies it).
    pub(super) fn ask_child(&mut self) {
        // The session's next question, queued by the answer just given, comes first.
        let session_asks = self.session.as_ref().and_then(Session::asked).is_some();
        let pending = self
            .session
            .as_ref()
            .map_or(&[][..], Session::child_questions);
        if questions::show_next_child(
            &mut self.asking,
            &mut self.child_asks,
            session_asks,
            pending,
        ) {
            self.waiting_since = None;
        }
    }

    pub(super) fn on_event(&mut self, event: Event) {
        if let Some(log) = self.log.as_mut() {
            let _ = log.record(&event);
        }
        let width = self.screen.wrap_width();
        match &event {
            Event::TextDelta { text } | Event::RefusalDelta { text } => {
                self.waiting_since = None;
                if !self.reasoning.is_empty() {
                    self.flush_reasoning();
                }
                self.md.push(text);
                self.flush_markdown(false);
            }
            Event::ReasoningDelta { text } => {
                self.reasoning.push_str(text);
            }
            // A subagent's activity, under its `task` call. Only a running turn has children
            // to show; a late event (after a cancel) is only logged.
            Event::Child(child) => {
                if self.busy() {
                    let ended = self.tasks.on_event(child, Instant::now(), width);
                    self.print(&ended);
                }
            }
            Event::ToolCall {
                id,
                name,
                arguments,
            } => {
                let _ = self.diffs.on_event(&event);
                if name == hrns_core::tool::builtin::READ_FILE {
                    // Its result is shown in the colours of the file's language.
                    self.reads.push((id.clone(), read_file_language(arguments)));
                }
                self.flush_reasoning();
                self.flush_markdown(true);
                self.print(&[view::tool_call_line(name, arguments, width)]);
            }
            Event::ToolResult {
                id, status, output, ..
            } => {
                let code = self.reads.iter().position(|(i, _)| i == id).map(|at| {
                    let (_, language) = self.reads.swap_remove(at);
                    CodeHighlighter::new(&language, self.highlight)
                });
                let lines = view::tool_result_lines_as(*status, &output.content, 3, width, code);
                self.print(&lines);
                // What a write that ran without asking changed (taken just before it ran).
                if let Some(diff) = self.diffs.on_event(&event) {
                    self.print(&crate::tui::diff_view::diff_lines(&diff, self.highlight));
                }
                self.waiting_since = Some(Instant::now());
            }
            Event::RequestStarted { .. } if self.waiting_since.is_none() => {
                self.waiting_since = Some(Instant::now());
            }
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => {
                let line = view::retry_line(*attempt, *delay_ms, reason);
                self.print(&[line]);
            }
            Event::ContextCompacted { .. } => {
                if let Some(line) = crate::exec::output::compaction_text(&event) {
                    self.print(&[Line::styled(line, SpanStyle::PLAIN.dim())]);
                }
            }
            Event::ToolsChanged { .. } => {
                if let Some(line) = crate::exec::output::tools_changed_text(&event) {
                    self.info(&line);
                }
            }
            Event::Hook { .. } => {
                if let Some(line) = crate::exec::output::hook_text(&event) {
                    self.info(&line);
                }
            }
            Event::PlanUpdated { explanation, plan } => {
                self.flush_reasoning();
                self.flush_markdown(true);
                let width = self.screen.wrap_width();
                let lines = view::plan_lines(explanation.as_deref(), plan, width);
                self.print(&lines);
            }
            Event::Checkpoint { skipped, .. } if !skipped.is_empty() => {
                self.info(&format!(
                    "checkpoint: left out (undo cannot restore them): {}",
                    skipped.join(", ")
                ));
            }
            Event::CheckpointFailed { reason, .. } => {
                self.error(&format!(
                    "warning: no checkpoint for this step, so /undo cannot take it back: {reason}"
                ));
            }
            Event::OptionDropped { field, .. } => {
                self.info(&format!(
                    "the provider rejected `{field}`; sent again without it"
                ));
                let store =
                    crate::host::plan::quirk_store(&self.setup, crate::host::plan::Keep::Session);
                match store.as_ref().and_then(|store| store.observe(&event)) {
                    Some(Ok(crate::setup::learned::Saved::Written(keys))) => self.info(&format!(
                        "saved for provider `{}`: {}",
                        self.setup.provider.name,
                        keys.join(", ")
                    )),
                    Some(Err(e)) => self.error(&e.message),
                    Some(Ok(
                        crate::setup::learned::Saved::Unchanged
                        | crate::setup::learned::Saved::NoEntry,
                    ))
                    | None => {}
                }
            }
            Event::TurnFinished { finish_reason, .. } => {
                self.flush_reasoning();
                self.flush_markdown(true);
                match finish_reason.as_ref().map(|r| r.as_str()) {
                    Some("length") => self.error("the answer was cut off by the token limit"),
                    Some("content_filter") => {
                        self.error("the provider's content filter stopped the answer")
                    }
                    _ => {}
                }
                self.print(&[Line::new()]);
            }
            Event::TurnFailed { error } => {
                self.flush_reasoning();
                self.flush_markdown(true);
                self.error(&error.to_string());
                self.print(&[Line::new()]);
            }
            Event::TurnCancelled => {
                self.flush_reasoning();
                self.flush_markdown(true);
                self.info("interrupted");
                self.print(&[Line::new()]);
            }
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ApprovalRequested { .. }
            | Event::Usage { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. } => {}
        }
    }
}

/// The language of the file a `read_file` call reads: its path's extension (`rs`), or its
/// name for files known by name (`Makefile`); empty when the arguments name no path.
fn read_file_language(arguments: &str) -> String {
    let path = serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| v.get("path").and_then(|p| p.as_str()).map(str::to_owned))
        .unwrap_or_default();
    let path = std::path::Path::new(&path);
    path.extension()
        .or_else(|| path.file_name())
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_owned()
}
