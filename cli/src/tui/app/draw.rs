//! What the UI prints into the scrollback and draws in the live area under it.

use super::App;
use super::connect::ConnectStep;
use crate::tui::markdown::MarkdownRenderer;
use crate::tui::text::{self, Line, SpanStyle};
use crate::tui::view;

impl App {
    pub(super) fn print(&mut self, lines: &[Line]) {
        let _ = self.screen.print(lines);
    }

    pub(super) fn info(&mut self, message: &str) {
        self.print(&[view::info_line(message)]);
    }

    pub(super) fn error(&mut self, message: &str) {
        self.print(&[view::error_line(message)]);
    }

    /// Prints the answer lines that are complete.
    pub(super) fn flush_markdown(&mut self, finish: bool) {
        if finish {
            self.md.finish();
        }
        let lines: Vec<Line> = self.md.lines_committed()[self.printed..].to_vec();
        self.printed += lines.len();
        self.print(&lines);
        if finish {
            self.md = MarkdownRenderer::new(self.screen.wrap_width(), self.highlight)
                .with_links(self.links);
            self.printed = 0;
        }
    }

    /// Prints the reasoning so far, collapsed to a line unless Ctrl-T asked for all of it.
    pub(super) fn flush_reasoning(&mut self) {
        if self.reasoning.trim().is_empty() {
            self.reasoning.clear();
            return;
        }
        let width = self.screen.wrap_width();
        let lines = if self.show_reasoning {
            view::reasoning_lines(&self.reasoning, width)
        } else {
            vec![view::reasoning_summary(&self.reasoning, width)]
        };
        self.reasoning.clear();
        self.print(&lines);
    }

    pub(super) fn draw(&mut self) {
        let width = self.screen.wrap_width();
        let mut lines: Vec<Line> = Vec::new();
        for l in self.md.lines_pending() {
            lines.extend(text::wrap(&l, width));
        }
        if !self.reasoning.is_empty() {
            lines.push(view::reasoning_summary(&self.reasoning, width));
        }
        lines.extend(self.tasks.lines(std::time::Instant::now(), width));
        // The plan stays in sight while the turn works on it.
        if self.busy() {
            if let Some(plan) = self.session.as_ref().and_then(|s| s.plan()) {
                lines.extend(view::plan_lines(None, &plan.plan, width));
            }
        }
        if let Some(since) = self.waiting_since {
            let mut l = Line::new();
            l.push(
                view::spinner_frame(since.elapsed()),
                SpanStyle::PLAIN.with_fg(text::Color::Blue),
            );
            l.push("  Esc to interrupt", SpanStyle::PLAIN.dim());
            lines.push(l);
        }
        if let Some(ask) = &self.asking {
            if let Some(agent) = ask.question.agent() {
                let who = format!("subagent {agent} asks:");
                lines.push(text::truncate(&view::info_line(&who), width));
            }
            for l in view::approval_prompt(
                ask.question.name(),
                ask.question.arguments(),
                ask.unsandboxed,
                width,
            ) {
                lines.extend(text::wrap(&l, width));
            }
        }
        lines.extend(self.queue.lines(width));
        let prompt = self.prompt_line();
        let (editor_lines, (row, col)) = if self
            .connect
            .as_ref()
            .is_some_and(|c| c.step == ConnectStep::Key)
        {
            let masked = "•".repeat(self.editor.text().chars().count());
            let mut l = prompt.clone();
            l.push(masked, SpanStyle::PLAIN);
            let w = l.width();
            (vec![l], (0, w))
        } else {
            self.editor.render(width, &prompt)
        };
        let base = lines.len();
        lines.extend(editor_lines);
        if let Some(c) = &self.candidates {
            lines.push(text::truncate(
                &Line::styled(c.clone(), SpanStyle::PLAIN.dim()),
                width,
            ));
        }
        let spent = self.spent();
        lines.push(view::status_line(
            &self.setup.provider.name,
            &self.setup.provider.model,
            &self.setup.agent.name,
            spent.total_tokens(),
            self.session
                .as_ref()
                .and_then(|s| s.context_usage().percent()),
            crate::tui::status::status_line_cost(&spent, self.pricing.is_some()).as_deref(),
            width,
        ));
        let _ = self.screen.draw(&lines, (base + row, col));
    }

    pub(super) fn prompt_line(&self) -> Line {
        let label = match (&self.connect, &self.asking) {
            (Some(c), _) => c.prompt(),
            (None, Some(a)) if a.reason => "reason for the model (Enter to skip): ",
            _ => return view::prompt(),
        };
        Line::styled(label, SpanStyle::PLAIN.with_fg(text::Color::Blue))
    }
}
