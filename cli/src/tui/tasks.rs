//! Subagents in the interactive UI: one live line per running child (its agent, its job, its
//! latest tool call and the time it has run), and on Ctrl-O each child's tool calls and answer
//! so far. Pure: it is fed the children's events and the time, and returns lines.

use super::text::{self, Line, SpanStyle};
use super::view;
use hrns_core::session::Event;
use hrns_core::task::ChildEvent;
use std::time::{Duration, Instant};

/// How many of a child's tool calls the expanded view shows (the latest ones).
const SHOWN_CALLS: usize = 8;
/// How many lines of a child's answer the expanded view shows (the last ones).
const SHOWN_ANSWER_LINES: usize = 6;

/// Whether the children's details are shown under their lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Detail {
    /// One line per child.
    #[default]
    Collapsed,
    /// Each child's tool calls and answer too.
    Expanded,
}

/// One running child.
#[derive(Debug)]
struct Child {
    /// The parent's `task` call that runs it.
    call_id: String,
    agent: String,
    started: Instant,
    /// Its tool calls so far, in the order the child made them.
    calls: Vec<Call>,
    /// Its answer so far (the current request's text).
    answer: String,
}

/// One tool call of a child, shown as a `name arguments` one-liner.
#[derive(Debug)]
struct Call {
    /// The child's call id, which its result names: a child's read-only calls run in
    /// parallel, so results can come in any order.
    id: String,
    name: String,
    arguments: String,
    /// What its result said, once it came.
    outcome: Option<Outcome>,
}

/// How a child's tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Succeeded,
    Failed,
}

/// The children of the running turn.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    children: Vec<Child>,
    detail: Detail,
}

impl Tasks {
    /// Whether any child runs.
    pub(crate) fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Switches between one line per child and the children's details (Ctrl-O).
    pub(crate) fn toggle(&mut self) -> Detail {
        self.detail = match self.detail {
            Detail::Collapsed => Detail::Expanded,
            Detail::Expanded => Detail::Collapsed,
        };
        self.detail
    }

    /// Takes one child event. Returns the line to print in the scrollback when the child
    /// ended (and its details first, when they are shown).
    pub(crate) fn on_event(&mut self, child: &ChildEvent, now: Instant, width: usize) -> Vec<Line> {
        let index = match self
            .children
            .iter()
            .position(|c| c.call_id == child.parent_call_id)
        {
            Some(i) => i,
            None => {
                if child.event.is_final() {
                    return Vec::new(); // one we never saw start: nothing to end
                }
                self.children.push(Child {
                    call_id: child.parent_call_id.clone(),
                    agent: text::clean(&child.agent).into_owned(),
                    started: now,
                    calls: Vec::new(),
                    answer: String::new(),
                });
                self.children.len() - 1
            }
        };
        let c = &mut self.children[index];
        match &child.event {
            Event::RequestStarted { .. } => c.answer.clear(),
            Event::TextDelta { text } => c.answer.push_str(text),
            Event::ToolCall {
                id,
                name,
                arguments,
            } => c.calls.push(Call {
                id: id.clone(),
                name: text::clean(name).into_owned(),
                arguments: text::clean(&view::short_arguments(arguments)).into_owned(),
                outcome: None,
            }),
            Event::ToolResult {
                id, status, output, ..
            } => {
                // The latest call with this id still waiting: ids are unique within a request,
                // and a result comes after its call, so searching from the end is short.
                let call = c
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|call| call.id == *id && call.outcome.is_none());
                if let Some(call) = call {
                    let ok = *status == hrns_core::session::ToolStatus::Ok && !output.is_error;
                    call.outcome = Some(if ok {
                        Outcome::Succeeded
                    } else {
                        Outcome::Failed
                    });
                }
            }
            Event::TurnStarted { .. }
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
            | Event::Child(_) => {}
        }
        let ended = match &child.event {
            Event::TurnFinished { .. } => "answered".to_owned(),
            Event::TurnFailed { error } => format!("failed: {error}"),
            Event::TurnCancelled => "cancelled".to_owned(),
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
            | Event::Child(_) => return Vec::new(),
        };
        let c = self.children.remove(index);
        let mut lines = Vec::new();
        if self.detail == Detail::Expanded {
            lines.extend(details(&c, width));
        }
        let took = now.saturating_duration_since(c.started);
        let style = if matches!(child.event, Event::TurnFinished { .. }) {
            SpanStyle::PLAIN.dim()
        } else {
            SpanStyle::PLAIN.with_fg(text::Color::Red)
        };
        let mut line = Line::styled("  └ ", SpanStyle::PLAIN.dim());
        line.push(
            format!(
                "{} {} · {} · {}",
                c.agent,
                text::clean(&ended),
                crate::exec::output::count(c.calls.len(), "tool call"),
                seconds(took)
            ),
            style,
        );
        lines.push(text::truncate(&line, width));
        lines
    }

    /// The live lines: one per running child (`▸ Explorer · read_file src/lib.rs · 3.2s`),
    /// each followed by its tool calls and answer when expanded, and how to switch.
    pub(crate) fn lines(&self, now: Instant, width: usize) -> Vec<Line> {
        let mut lines = Vec::new();
        for c in &self.children {
            let mut line = Line::styled("  ▸ ", SpanStyle::PLAIN.dim());
            line.push(c.agent.clone(), SpanStyle::PLAIN.with_fg(text::Color::Blue));
            let latest = match c.calls.last() {
                Some(call) if call.arguments.is_empty() => call.name.clone(),
                Some(call) => format!("{} {}", call.name, call.arguments),
                None => "thinking".to_owned(),
            };
            line.push(format!(" · {latest}"), SpanStyle::PLAIN);
            line.push(
                format!(" · {}", seconds(now.saturating_duration_since(c.started))),
                SpanStyle::PLAIN.dim(),
            );
            lines.push(text::truncate(&line, width));
            if self.detail == Detail::Expanded {
                lines.extend(details(c, width));
            }
        }
        if !lines.is_empty() {
            let hint = match self.detail {
                Detail::Collapsed => "  Ctrl-O to show the subagents' work",
                Detail::Expanded => "  Ctrl-O to hide the subagents' work",
            };
            lines.push(Line::styled(hint, SpanStyle::PLAIN.dim()));
        }
        lines
    }

    /// Ends every child still shown, as cancelled (the turn ended without waiting for them:
    /// it was interrupted or failed), and returns their end lines. A late event of one of them
    /// starts nothing.
    pub(crate) fn end_all(&mut self, now: Instant, width: usize) -> Vec<Line> {
        let ids: Vec<String> = self.children.iter().map(|c| c.call_id.clone()).collect();
        let mut lines = Vec::new();
        for id in ids {
            let end = ChildEvent {
                parent_call_id: id,
                agent: String::new(),
                event: Event::TurnCancelled,
            };
            lines.extend(self.on_event(&end, now, width));
        }
        lines
    }
}

/// A child's latest tool calls and the end of its answer, indented.
fn details(c: &Child, width: usize) -> Vec<Line> {
    let mut lines = Vec::new();
    let skipped = c.calls.len().saturating_sub(SHOWN_CALLS);
    if skipped > 0 {
        lines.push(Line::styled(
            format!(
                "    … {} earlier",
                crate::exec::output::count(skipped, "tool call")
            ),
            SpanStyle::PLAIN.dim(),
        ));
    }
    for call in &c.calls[skipped..] {
        let mut line = Line::styled("    ● ", SpanStyle::PLAIN.dim());
        line.push(call.name.clone(), SpanStyle::PLAIN.bold());
        if !call.arguments.is_empty() {
            line.push(format!(" {}", call.arguments), SpanStyle::PLAIN.dim());
        }
        match call.outcome {
            Some(Outcome::Failed) => line.push(" ✗", SpanStyle::PLAIN.with_fg(text::Color::Red)),
            Some(Outcome::Succeeded) => {
                line.push(" ✓", SpanStyle::PLAIN.with_fg(text::Color::Green))
            }
            None => {}
        }
        lines.push(text::truncate(&line, width));
    }
    let answer_lines: Vec<&str> = c.answer.trim().lines().collect();
    let from = answer_lines.len().saturating_sub(SHOWN_ANSWER_LINES);
    for l in &answer_lines[from..] {
        lines.push(text::truncate(
            &Line::styled(format!("    │ {}", text::clean(l)), SpanStyle::PLAIN),
            width,
        ));
    }
    lines
}

fn seconds(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m {:02}s", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests;
