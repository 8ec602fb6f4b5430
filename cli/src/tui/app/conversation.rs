//! The conversation's setup: the runner and session for the current provider and agent,
//! the session log, and resuming a saved session.

use super::{App, ChildAsk, Msg, client_for, toolbox_for};
use crate::host::sessions::{self, SessionHeader, SessionLog};
use crate::tui::markdown::MarkdownRenderer;
use crate::tui::text::{Line, SpanStyle};
use crate::tui::view;
use hrns_core::session::Approval;
use hrns_core::session::{Session, SessionConfig};
use hrns_core::wire::{Message, Role};
use hrns_tokio::{Runner, ToolContext};
use std::time::Duration;

impl App {
    /// Builds the runner and a session for the current provider and agent, continuing
    /// `history`.
    pub(super) fn rebuild(&mut self, history: Vec<Message>) {
        self.client = client_for(&self.setup);
        let mut toolbox = toolbox_for(&self.setup);
        let mut live_tools = crate::setup::mcp::LiveTools::add(
            &self.mcp,
            &mut toolbox,
            &self.setup.agent,
            self.policy,
            &self.mcp_told,
        );
        if crate::sandbox::escalate::possible(self.policy, &self.setup.sandbox.policy) {
            crate::sandbox::escalate::make_async_escalatable(&mut toolbox, &self.escalations);
        }
        self.diffs =
            crate::host::diff::WriteDiffs::new(crate::host::diff::wrap_async_writes(&mut toolbox));
        let plan = crate::host::subagents::plan_spec(&self.setup);
        let specs = toolbox.specs().into_iter().chain(plan.clone()).collect();
        let mut config: SessionConfig = self.setup.session_config_for(specs, self.policy);
        config.secrets.extend(&self.mcp_secrets);
        let start = std::mem::replace(
            &mut self.hook_start,
            hrns_core::hooks::StartSource::Continued,
        );
        config.hooks = crate::setup::hooks::for_session(
            &self.hooks,
            &self.setup.workspace,
            self.log.as_ref().map(|l| (l.id(), l.path())),
            start,
        );
        if crate::host::subagents::enabled(&self.setup) {
            let tx = self.tx.clone();
            let asks = self.tx.clone();
            let task = crate::host::subagents::tokio_task_tool(
                &self.setup.discovered,
                &self.setup.workspace,
                &self.setup.agent,
                &config,
                self.setup.stated_images(),
                &self.mcp,
                self.client.clone(),
                move |child| {
                    let _ = tx.send(Msg::Child(Box::new(child.clone())));
                },
            )
            // A child's question is asked here like the parent's; no answer denies it.
            .approve_with(move |agent: String, run| {
                let (reply, answer) = tokio::sync::oneshot::channel();
                let _ = asks.send(Msg::ChildApproval(ChildAsk { agent, run, reply }));
                async move { answer.await.unwrap_or(Approval::Unattended) }
            });
            config.subagents = Some(task.subagents());
            toolbox.add(task);
            config.tools = toolbox.specs().into_iter().chain(plan).collect();
        }
        let checkpointer = self.checkpointer();
        if checkpointer.is_some() {
            config.checkpoints = hrns_core::checkpoint::Checkpoints::On;
        }
        let session = match Session::with_history(config.clone(), history) {
            Ok(s) => s,
            Err(e) => {
                self.error(&format!("the conversation could not be kept: {e}"));
                Session::new(config)
            }
        };
        let ctx = ToolContext {
            workspace: self.setup.workspace.clone(),
            cancel: Default::default(),
            sandbox: self.setup.sandbox.clone(),
            usage: Default::default(),
        };
        // A server that stops or changes its tools: the next request offers them as they are.
        let mut runner = Runner::new(self.client.clone(), toolbox, ctx)
            .update_tools_with(move |toolbox| live_tools.update(toolbox));
        if let Some(checkpointer) = checkpointer {
            runner = runner.checkpoints(checkpointer);
        }
        self.tokens_before = self.tokens();
        self.session = Some(session);
        self.runner = Some(runner);
        self.look_up_window();
    }

    /// The checkpoints of the current session's log (none without a log, with
    /// `"checkpoints": false`, or without `git`: said once).
    fn checkpointer(&mut self) -> Option<std::sync::Arc<hrns_blocking::Checkpointer>> {
        let id = self.log.as_ref()?.id().to_owned();
        let (checkpointer, warning) = crate::host::checkpoints::checkpointer(
            &self.setup.file.config,
            &self.setup.workspace,
            &id,
        );
        if let Some(warning) = warning {
            if !std::mem::replace(&mut self.checkpoints_warned, true) {
                self.error(&format!("warning: {warning}"));
            }
        }
        checkpointer
    }

    /// Asks the provider's `/models` for the window in the background when nothing else
    /// gave it, once per model; the answer arrives as [`Msg::Window`].
    pub(super) fn look_up_window(&mut self) {
        let model = self.setup.provider.model.clone();
        if !self.setup.needs_window_lookup()
            || self.window_looked_up.as_ref() == Some(&model)
            || tokio::runtime::Handle::try_current().is_err()
        {
            return;
        }
        self.window_looked_up = Some(model);
        let client = self.client.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if let Ok(Ok(models)) =
                tokio::time::timeout(Duration::from_secs(10), client.list_models()).await
            {
                let _ = tx.send(Msg::Window(models));
            }
        });
    }

    pub(super) fn history(&self) -> Vec<Message> {
        self.session
            .as_ref()
            .map(|s| s.messages().to_vec())
            .unwrap_or_default()
    }

    pub(super) fn new_log(&mut self) {
        let Ok(state) = crate::setup::paths::state_dir() else {
            return;
        };
        let header = SessionHeader {
            hrns_session: sessions::SESSION_VERSION,
            id: String::new(),
            started: String::new(),
            cwd: self.setup.workspace.display().to_string(),
            provider: self.setup.provider.name.clone(),
            model: self.setup.provider.model.clone(),
            agent: self.setup.agent.name.clone(),
        };
        match SessionLog::create(&state.join("sessions"), header) {
            Ok(log) => self.log = Some(log),
            Err(e) => self.error(&format!("this session is not saved: {e}")),
        }
    }

    /// Closes the current session's log (see [`SessionLog::keep_if_answered`]): a conversation
    /// begun in this run that got no answer is not saved. Returns whether a file stays.
    pub(super) fn close_log(&mut self) -> bool {
        let history = self.history();
        self.log = self
            .log
            .take()
            .and_then(|log| log.keep_if_answered(&history));
        self.log.is_some()
    }

    /// Continues the saved session `claimed` (locked by this run) in place of the current one.
    pub(super) fn resume(&mut self, claimed: sessions::Claimed) {
        self.close_log();
        let path = claimed.path().to_owned();
        let loaded = match sessions::load(&path) {
            Ok(l) => l,
            Err(e) => {
                self.error(&e.to_string());
                self.new_log();
                self.rebuild(Vec::new());
                return;
            }
        };
        for w in &loaded.warnings {
            self.error(w);
        }
        let width = self.screen.wrap_width();
        for m in &loaded.messages {
            let lines = match m.role {
                Role::User => match hrns_core::session::tool_images(m) {
                    Some(calls) => vec![Line::styled(
                        crate::exec::output::tool_images_text(&calls),
                        SpanStyle::PLAIN.dim(),
                    )],
                    // A pruned image message: the stub says what it was.
                    None if hrns_core::session::is_tool_images(m) => {
                        vec![Line::styled(m.text(), SpanStyle::PLAIN.dim())]
                    }
                    None => view::user_message(&m.text(), width),
                },
                Role::Assistant => {
                    let mut lines = MarkdownRenderer::render(&m.text(), width, self.highlight);
                    for c in &m.tool_calls {
                        lines.push(view::tool_call_line(
                            &c.function.name,
                            &c.function.arguments,
                            width,
                        ));
                    }
                    lines
                }
                Role::Tool => vec![Line::styled(
                    view::short_arguments(&m.text()),
                    SpanStyle::PLAIN.dim(),
                )],
                Role::System | Role::Developer | Role::Function => Vec::new(),
            };
            self.print(&lines);
        }
        self.info(&format!(
            "resumed session {} ({})",
            loaded.header.id,
            crate::exec::output::count(loaded.messages.len(), "message")
        ));
        match SessionLog::append_to(claimed, &loaded.header.id) {
            Ok(log) => self.log = Some(log),
            Err(e) => self.error(&format!("this session is not saved: {e}")),
        }
        self.hook_start = hrns_core::hooks::StartSource::Resume;
        self.rebuild(loaded.messages);
    }
}
