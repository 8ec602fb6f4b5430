//! The interactive UI's event loop: terminal keys, the turn's events and approvals, and the
//! slash commands, over the building blocks in the sibling modules and the tokio driver.

use super::commands::{self, Candidates, CommandId};
use super::editor::{Editor, EditorAction};
use super::history::History;
use super::markdown::MarkdownRenderer;
use super::screen::Screen;
use super::text::{self, Line, SpanStyle};
use super::view;
use crate::sessions::{self, SessionHeader, SessionLog};
use crate::setup::{CliError, Setup};
use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use hrns_core::agent;
use hrns_core::config::Selection;
use hrns_core::session::{Approval, ApprovalPolicy, Event, Session, SessionConfig, ToolRun};
use hrns_core::wire::{Message, Role};
use hrns_tokio::{Client, ClientConfig, HttpClient, Runner, ToolContext, Toolbox};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What reaches the loop from other tasks.
enum Msg {
    /// A `/models` answer.
    Models(Result<Vec<String>, String>),
    /// The model list looked up at the start for the context window.
    Window(Vec<hrns_core::wire::ModelInfo>),
}

/// A pending approval question; the answer goes straight to the session.
struct Asking {
    run: ToolRun,
    /// The user pressed `n` and is typing a reason.
    reason: bool,
}

/// Steps of `/connect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConnectStep {
    Name,
    Url,
    Key,
    Model,
}

struct Connect {
    step: ConnectStep,
    name: String,
    url: String,
    key: String,
}

/// Options the UI was started with.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// The approval policy (the UI asks by default).
    pub(crate) approval: Option<ApprovalPolicy>,
    /// A saved session to continue.
    pub(crate) resume: Option<std::path::PathBuf>,
}

/// The UI.
pub(crate) struct App {
    setup: Setup,
    policy: ApprovalPolicy,
    screen: Screen,
    editor: Editor,
    md: MarkdownRenderer,
    printed: usize,
    reasoning: String,
    show_reasoning: bool,
    /// The conversation; the UI owns it, the runner borrows it for each step of IO.
    session: Option<Session>,
    runner: Option<Runner>,
    client: Client,
    waiting_since: Option<Instant>,
    asking: Option<Asking>,
    /// Messages typed while a turn runs, sent when it ends.
    queue: super::queue::Queue,
    connect: Option<Connect>,
    /// Tokens of the sessions this conversation ran in before the current one (a `/model`
    /// switch starts a new session on the same history); the rest is `Session::usage`.
    tokens_before: u64,
    ctrl_c_at: Option<Instant>,
    quit: bool,
    models: Vec<String>,
    /// The model whose window was last asked of `/models`.
    window_looked_up: Option<String>,
    /// Tab's candidates, shown in place under the input until the next key.
    candidates: Option<String>,
    /// `/model` without a name asked for the list: number it and say how to pick.
    picking_model: bool,
    log: Option<SessionLog>,
    /// The MCP servers of this run, started once; their tools join every rebuilt toolbox.
    mcp: hrns_blocking::mcp::McpServers,
    /// Their env and header values, redacted from the session's events and records.
    mcp_secrets: hrns_core::secrets::Secrets,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
}

/// Runs the UI until the user leaves. Returns the exit code.
pub(crate) fn run(setup: Setup, options: Options) -> Result<u8, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
        let mut app = App::new(setup, options)?;
        app.run().await
    })
}

fn colors() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

impl App {
    fn new(setup: Setup, options: Options) -> Result<App, CliError> {
        let policy = options.approval.unwrap_or(ApprovalPolicy::Ask);
        // Started before the screen is taken, so a slow server delays only the first paint.
        let mcp_found = crate::mcp::configured(&setup.file.config, &setup.workspace);
        let (mcp, mcp_failures) =
            crate::mcp::start(&mcp_found, &setup.workspace, setup.sandbox.env.clone());
        let screen = Screen::enter(colors())
            .map_err(|e| CliError::failure(format!("cannot use the terminal: {e}")))?;
        let history = History::default_path()
            .map(History::load)
            .unwrap_or_else(History::in_memory);
        let (tx, rx) = mpsc::unbounded_channel();
        let client = client_for(&setup);
        let width = screen.wrap_width();
        let mut app = App {
            policy,
            screen,
            editor: Editor::new(history),
            md: MarkdownRenderer::new(width),
            printed: 0,
            reasoning: String::new(),
            show_reasoning: false,
            session: None,
            runner: None,
            client,
            waiting_since: None,
            asking: None,
            queue: Default::default(),
            connect: None,
            tokens_before: 0,
            ctrl_c_at: None,
            quit: false,
            models: Vec::new(),
            window_looked_up: None,
            candidates: None,
            picking_model: false,
            log: None,
            mcp,
            mcp_secrets: crate::mcp::secrets(&mcp_found),
            tx,
            rx,
            setup,
        };
        let banner = view::banner(
            &app.setup.provider.name,
            &app.setup.provider.model,
            &app.setup.agent.name,
            env!("CARGO_PKG_VERSION"),
        );
        app.print(&banner);
        let loaded = view::instructions_line(&app.setup.discovered.instructions);
        app.print(&[loaded]);
        for line in mcp_found.warnings.iter().chain(&mcp_failures) {
            app.error(line);
        }
        for w in app.setup.discovered.warnings.clone() {
            app.print(&[view::error_line(&w)]);
        }
        app.rebuild(Vec::new());
        match options.resume {
            Some(path) => app.resume(&path),
            None => app.new_log(),
        }
        Ok(app)
    }

    async fn run(&mut self) -> Result<u8, CliError> {
        let (key_tx, mut keys) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            while let Ok(ev) = crossterm::event::read() {
                if key_tx.send(ev).is_err() {
                    break;
                }
            }
        });
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        while !self.quit {
            self.draw();
            tokio::select! {
                Some(ev) = keys.recv() => self.on_terminal(ev),
                Some(msg) = self.rx.recv() => self.on_msg(msg),
                events = complete_io(&mut self.runner, &mut self.session), if self.busy() => {
                    self.on_events(events);
                }
                _ = tick.tick(), if self.waiting_since.is_some() => {}
            }
        }
        if self.busy() {
            // Leaving mid-turn: the runner's token stops the tools with their processes.
            if let Some(runner) = &self.runner {
                runner.cancel_token().cancel();
            }
            self.interrupt();
        }
        let _ = self.screen.finish();
        // How to come back (on stderr, after the UI has left the screen).
        if self.log.is_some() {
            eprintln!("to continue this conversation: hrns --continue");
        }
        Ok(0)
    }

    // ----- output -----

    fn print(&mut self, lines: &[Line]) {
        let _ = self.screen.print(lines);
    }

    fn info(&mut self, message: &str) {
        self.print(&[view::info_line(message)]);
    }

    fn error(&mut self, message: &str) {
        self.print(&[view::error_line(message)]);
    }

    /// Prints the answer lines that are complete.
    fn flush_markdown(&mut self, finish: bool) {
        if finish {
            self.md.finish();
        }
        let lines: Vec<Line> = self.md.lines_committed()[self.printed..].to_vec();
        self.printed += lines.len();
        self.print(&lines);
        if finish {
            self.md = MarkdownRenderer::new(self.screen.wrap_width());
            self.printed = 0;
        }
    }

    /// Prints the reasoning so far, collapsed to a line unless Ctrl-T asked for all of it.
    fn flush_reasoning(&mut self) {
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

    fn draw(&mut self) {
        let width = self.screen.wrap_width();
        let mut lines: Vec<Line> = Vec::new();
        for l in self.md.lines_pending() {
            lines.extend(text::wrap(&l, width));
        }
        if !self.reasoning.is_empty() {
            lines.push(view::reasoning_summary(&self.reasoning, width));
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
            for l in view::approval_prompt(&ask.run.name, &ask.run.arguments, width) {
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
        lines.push(view::status_line(
            &self.setup.provider.name,
            &self.setup.provider.model,
            &self.setup.agent.name,
            self.tokens(),
            self.session
                .as_ref()
                .and_then(|s| s.context_usage().percent()),
            width,
        ));
        let _ = self.screen.draw(&lines, (base + row, col));
    }

    fn prompt_line(&self) -> Line {
        let label = match (&self.connect, &self.asking) {
            (Some(c), _) => match c.step {
                ConnectStep::Name => "provider name: ",
                ConnectStep::Url => "base URL: ",
                ConnectStep::Key => "API key (hidden, empty for none): ",
                ConnectStep::Model => "model: ",
            },
            (None, Some(a)) if a.reason => "reason for the model (Enter to skip): ",
            _ => return view::prompt(),
        };
        Line::styled(label, SpanStyle::PLAIN.with_fg(text::Color::Blue))
    }

    // ----- input -----

    fn on_terminal(&mut self, ev: TermEvent) {
        match ev {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
            TermEvent::Paste(text) => {
                let _ = self.editor.handle_paste(&text);
            }
            TermEvent::Resize(w, _) => {
                self.screen.width = w.max(10);
                self.md.set_width(self.screen.wrap_width());
            }
            _ => {}
        }
    }

    fn on_key(&mut self, key: KeyEvent) {
        // Tab's candidate line lasts until the next key.
        self.candidates = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('t') {
            self.show_reasoning = !self.show_reasoning;
            self.info(if self.show_reasoning {
                "reasoning: shown in full"
            } else {
                "reasoning: one-line summaries"
            });
            return;
        }
        // A pending approval takes y / a / n before anything else.
        if let Some(ask) = &self.asking {
            if !ask.reason {
                if let KeyCode::Char(c) = key.code {
                    if !ctrl {
                        match view::approval_answer(c) {
                            Some(Approval::Deny { .. }) => {
                                if let Some(a) = self.asking.as_mut() {
                                    a.reason = true;
                                }
                                return;
                            }
                            Some(answer) => {
                                self.answer(answer);
                                return;
                            }
                            None => return,
                        }
                    }
                }
            }
        }
        // The editor ignores Enter on blank text; a prompt that takes an empty answer (the
        // reason after a denial, /connect's API key) gets it.
        if key.code == KeyCode::Enter
            && key.modifiers.is_empty()
            && self.editor.text().trim().is_empty()
            && self.takes_empty_answer()
        {
            self.editor.clear();
            self.on_submit(String::new());
            return;
        }
        // ↑ on an empty line takes the last queued message back for editing.
        if key.code == KeyCode::Up && self.editor.is_empty() && !self.queue.is_empty() {
            if let Some(text) = self.queue.take_last() {
                self.editor.set_text(&text);
            }
            return;
        }
        match self.editor.handle_key(key) {
            EditorAction::Submit(text) => self.on_submit(text),
            EditorAction::Cancel => self.on_cancel(),
            EditorAction::Exit => {
                if self.busy() {
                    self.interrupt();
                } else {
                    self.quit = true;
                }
            }
            EditorAction::Complete => self.complete(),
            EditorAction::None | EditorAction::Redraw => {}
        }
    }

    /// Whether the prompt shown now accepts an empty answer.
    fn takes_empty_answer(&self) -> bool {
        self.asking.as_ref().is_some_and(|a| a.reason)
            || self
                .connect
                .as_ref()
                .is_some_and(|c| matches!(c.step, ConnectStep::Key))
    }

    fn answer(&mut self, approval: Approval) {
        if let Some(ask) = self.asking.take() {
            let line = match &approval {
                Approval::Once => Some(view::info_line("allowed once")),
                Approval::AlwaysThisTool => Some(view::info_line(&format!(
                    "allowed {} for this session",
                    ask.run.name
                ))),
                // The result line that follows says "denied"; once is enough.
                Approval::Deny { .. } | Approval::Unattended => None,
            };
            if let Some(line) = line {
                self.print(&[line]);
            }
            if let Some(session) = self.session.as_mut() {
                session
                    .handle_approval(Instant::now(), &ask.run.call_id, approval)
                    .expect("the session asked about this call");
            }
            self.dispatch();
        }
    }

    fn on_cancel(&mut self) {
        if self.connect.take().is_some() {
            self.editor.clear();
            self.info("/connect cancelled");
            return;
        }
        if self.busy() {
            self.interrupt();
            return;
        }
        if !self.editor.is_empty() {
            self.editor.clear();
            self.ctrl_c_at = None;
            return;
        }
        match self.ctrl_c_at {
            Some(t) if t.elapsed() < Duration::from_secs(3) => self.quit = true,
            _ => {
                self.ctrl_c_at = Some(Instant::now());
                self.info("press Ctrl-C again (or Ctrl-D) to quit");
            }
        }
    }

    fn interrupt(&mut self) {
        if let Some(session) = self.session.as_mut() {
            session.cancel();
        }
        self.asking = None;
        self.dispatch();
    }

    /// Whether a turn is running.
    fn busy(&self) -> bool {
        self.session.as_ref().is_some_and(|s| !s.is_idle())
    }

    /// Tokens used in this conversation, from the session's own count.
    fn tokens(&self) -> u64 {
        let usage = self
            .session
            .as_ref()
            .map(Session::usage)
            .unwrap_or_default();
        self.tokens_before + usage.prompt + usage.completion
    }

    /// Starts the IO the session asked for after input of our own, and shows its events.
    fn dispatch(&mut self) {
        if let (Some(runner), Some(session)) = (self.runner.as_mut(), self.session.as_mut()) {
            let events = runner.dispatch(session);
            self.on_events(events);
        }
    }

    fn complete(&mut self) {
        let cands = Candidates {
            providers: self.setup.file.config.provider_names(),
            models: self.models.clone(),
            agents: self
                .setup
                .discovered
                .agents
                .iter()
                .map(|a| a.name.clone())
                .collect(),
            custom: self
                .setup
                .discovered
                .commands
                .iter()
                .map(|c| c.name.clone())
                .collect(),
        };
        let (text, cursor) = (self.editor.text(), self.editor.cursor());
        let workspace = &self.setup.workspace;
        let completion = commands::complete(text, cursor, &cands).or_else(|| {
            super::mention_complete::complete(text, cursor, |dir| {
                super::mention_complete::list_dir(workspace, dir, 2000)
            })
        });
        if let Some(c) = completion {
            self.editor.replace_range(c.range.clone(), &c.insert);
            if c.options.len() > 1 {
                // In place under the input, not into the scrollback.
                self.candidates = Some(c.options.join("  "));
            }
        }
    }

    fn on_submit(&mut self, text: String) {
        self.ctrl_c_at = None;
        if let Some(ask) = &self.asking {
            if ask.reason {
                let reason = text.trim();
                self.answer(Approval::Deny {
                    reason: (!reason.is_empty()).then(|| reason.to_owned()),
                });
                return;
            }
        }
        if self.connect.is_some() {
            self.connect_step(text);
            return;
        }
        if text.trim().is_empty() {
            return;
        }
        if self.busy() {
            self.queue.push(text);
            return;
        }
        if let Err(e) = self.editor.history_mut().add(&text) {
            self.error(&format!("the prompt history could not be saved: {e}"));
        }
        if let Some(prompt) = self.custom_command(&text) {
            self.start_turn(prompt);
            return;
        }
        if commands::is_command(&text) {
            // The command goes into the transcript, so its output is not orphaned.
            self.print(&[Line::styled(
                format!("› {}", text.trim()),
                crate::tui::text::SpanStyle::PLAIN.dim(),
            )]);
            match commands::parse(&text) {
                Ok(parsed) => self.command(parsed.command.id, parsed.arg),
                Err(hint) => self.print(&[hint.to_line()]),
            }
            return;
        }
        self.start_turn(text);
    }

    /// When `text` runs a custom command (and no built-in of its name): its prompt, after
    /// switching to the command's agent and model.
    fn custom_command(&mut self, text: &str) -> Option<String> {
        let (name, args) = hrns_core::command::split_invocation(text)?;
        if commands::lookup(name).is_some() {
            return None;
        }
        let c = hrns_core::command::find_command(&self.setup.discovered.commands, name)?.clone();
        if let Some(agent) = c.agent {
            self.command(CommandId::Agent, Some(agent));
        }
        if let Some(model) = c.model {
            self.command(CommandId::Model, Some(model));
        }
        Some(hrns_core::command::expand(&c.body, args))
    }

    // ----- turns -----

    fn start_turn(&mut self, prompt: String) {
        if self.session.is_none() {
            self.error("no session is ready");
            return;
        }
        let width = self.screen.wrap_width();
        let echo = view::user_message(&prompt, width);
        self.print(&echo);
        let (message, attached) = crate::mentions::expand(&prompt, &self.setup.workspace);
        for a in &attached {
            self.info(&a.summary());
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

    fn on_events(&mut self, events: Vec<Event>) {
        for event in events {
            let asked = match &event {
                Event::ApprovalRequested { id, .. } => self
                    .session
                    .as_ref()
                    .and_then(Session::asked)
                    .filter(|run| &run.call_id == id)
                    .cloned(),
                _ => None,
            };
            let last = event.is_final();
            self.on_event(event);
            if let Some(run) = asked {
                // The call waits for the answer, so the file is still as it was.
                let workspace = &self.setup.workspace;
                if let Some(diff) = crate::diff::proposed(workspace, &run.name, &run.arguments) {
                    self.print(&super::diff_view::diff_lines(&diff));
                }
                self.waiting_since = None;
                self.asking = Some(Asking { run, reason: false });
            }
            if last {
                self.waiting_since = None;
                self.asking = None;
            }
        }
        if !self.busy() {
            if let Some(next) = self.queue.next() {
                self.on_submit(next);
            }
        }
    }

    fn on_msg(&mut self, msg: Msg) {
        match msg {
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
            Msg::Window(models) => {
                self.setup.learn_window(&models);
                let window = self.setup.context_window();
                if let Some(session) = self.session.as_mut() {
                    session.set_context_window(window);
                }
            }
        }
    }

    fn on_event(&mut self, event: Event) {
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
            Event::ToolCall {
                name, arguments, ..
            } => {
                self.flush_reasoning();
                self.flush_markdown(true);
                self.print(&[view::tool_call_line(name, arguments, width)]);
            }
            Event::ToolResult { status, output, .. } => {
                let lines = view::tool_result_lines(*status, &output.content, 3, width);
                self.print(&lines);
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
                if let Some(line) = crate::output::compaction_text(&event) {
                    self.print(&[Line::styled(line, SpanStyle::PLAIN.dim())]);
                }
            }
            Event::OptionDropped { field, .. } => {
                self.info(&format!(
                    "the provider rejected `{field}`; sent again without it"
                ));
                let store = crate::learned::QuirkStore {
                    path: self.setup.file.path.clone(),
                    provider: self.setup.provider.name.clone(),
                };
                match store.observe(&event) {
                    Some(Ok(crate::learned::Saved::Written(keys))) => self.info(&format!(
                        "saved for provider `{}`: {}",
                        store.provider,
                        keys.join(", ")
                    )),
                    Some(Err(e)) => self.error(&e.message),
                    _ => {}
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
            _ => {}
        }
    }

    // ----- session setup -----

    /// Builds the runner and a session for the current provider and agent, continuing
    /// `history`.
    fn rebuild(&mut self, history: Vec<Message>) {
        self.client = client_for(&self.setup);
        let mut toolbox = toolbox_for(&self.setup);
        crate::mcp::add_tokio_tools(&self.mcp, &mut toolbox, &self.setup.agent);
        let mut config: SessionConfig = self.setup.session_config_for(toolbox.specs(), self.policy);
        config.secrets.extend(&self.mcp_secrets);
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
        };
        let runner = Runner::new(self.client.clone(), toolbox, ctx);
        self.tokens_before = self.tokens();
        self.session = Some(session);
        self.runner = Some(runner);
        self.look_up_window();
    }

    /// Asks the provider's `/models` for the window in the background when nothing else
    /// gave it, once per model; the answer arrives as [`Msg::Window`].
    fn look_up_window(&mut self) {
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

    fn history(&self) -> Vec<Message> {
        self.session
            .as_ref()
            .map(|s| s.messages().to_vec())
            .unwrap_or_default()
    }

    fn new_log(&mut self) {
        let Ok(state) = crate::paths::state_dir() else {
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

    fn resume(&mut self, path: &std::path::Path) {
        let loaded = match sessions::load(path) {
            Ok(l) => l,
            Err(e) => {
                self.error(&e.to_string());
                self.new_log();
                return;
            }
        };
        for w in &loaded.warnings {
            self.error(w);
        }
        let width = self.screen.wrap_width();
        for m in &loaded.messages {
            let lines = match m.role {
                Role::User => view::user_message(&m.text(), width),
                Role::Assistant => {
                    let mut lines = MarkdownRenderer::render(&m.text(), width);
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
            crate::output::count(loaded.messages.len(), "message")
        ));
        self.rebuild(loaded.messages);
        self.log = SessionLog::append_to(path, &loaded.header.id).ok();
    }

    // ----- slash commands -----

    fn command(&mut self, id: CommandId, arg: Option<String>) {
        match id {
            CommandId::Help => {
                let lines = match arg.as_deref().and_then(commands::lookup) {
                    Some(c) => vec![commands::command_help(c)],
                    None => {
                        let mut lines = commands::help_text();
                        lines.extend(commands::custom_help(&self.setup.discovered.commands));
                        lines
                    }
                };
                self.print(&lines);
            }
            CommandId::New => {
                self.rebuild(Vec::new());
                self.new_log();
                self.tokens_before = 0;
                self.info("new conversation");
            }
            CommandId::Retry => {
                let history = self.history();
                let Some(pos) = history.iter().rposition(|m| m.role == Role::User) else {
                    self.info("nothing to retry yet");
                    return;
                };
                let text = history[pos].text();
                self.rebuild(history[..pos].to_vec());
                self.start_turn(text);
            }
            CommandId::Compact => {
                let Some(session) = self.session.as_mut() else {
                    return;
                };
                match session.compact(arg) {
                    Ok(()) => {
                        self.info("compacting the conversation…");
                        self.waiting_since = Some(Instant::now());
                        self.dispatch();
                    }
                    Err(hrns_core::session::SessionError::NothingToCompact) => {
                        self.info("nothing to compact yet");
                    }
                    Err(e) => self.error(&format!("cannot compact now: {e}")),
                }
            }
            CommandId::Init => {
                self.start_turn(hrns_core::instructions::INIT_PROMPT.to_owned());
            }
            CommandId::Models => {
                let client = self.client.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result =
                        tokio::time::timeout(Duration::from_secs(20), client.list_models()).await;
                    let msg = match result {
                        Ok(Ok(models)) => Ok(models.into_iter().map(|m| m.id).collect()),
                        Ok(Err(e)) => Err(format!("cannot list the models: {e}")),
                        Err(_) => {
                            Err("the provider did not list its models within 20 s".to_owned())
                        }
                    };
                    let _ = tx.send(Msg::Models(msg));
                });
            }
            CommandId::Model => {
                let Some(model) = arg else {
                    // A numbered picker: the list, then `/model N`.
                    self.picking_model = true;
                    self.command(CommandId::Models, None);
                    return;
                };
                // `/model 2`: the second model of the last list shown.
                let model = match model.parse::<usize>() {
                    Ok(n) if n >= 1 && n <= self.models.len() && !self.models.contains(&model) => {
                        self.models[n - 1].clone()
                    }
                    _ => model,
                };
                if !self.models.is_empty() && !self.models.contains(&model) {
                    self.error(&format!(
                        "`{model}` is not in the provider's model list (/models); switching anyway"
                    ));
                }
                self.setup.provider.model = model.clone();
                let history = self.history();
                self.rebuild(history);
                let name = self.setup.provider.name.clone();
                if self.setup.file.config.set_provider_model(&name, &model) {
                    self.save_config();
                    self.info(&format!(
                        "model: {model} (saved as provider {name}'s default)"
                    ));
                } else {
                    self.info(&format!(
                        "model: {model} (for this session; set HRNS_MODEL to keep it)"
                    ));
                }
            }
            CommandId::Providers => {
                let current = self.setup.provider.name.clone();
                let lines: Vec<Line> = self
                    .setup
                    .file
                    .config
                    .providers
                    .iter()
                    .map(|(name, e)| {
                        let mark = if *name == current { "* " } else { "  " };
                        Line::plain(format!(
                            "{mark}{name}  {}  {}",
                            e.url,
                            e.model.as_deref().unwrap_or("-")
                        ))
                    })
                    .collect();
                let env = &self.setup.provider;
                if lines.is_empty() && env.name == hrns_core::config::ENV_PROVIDER_NAME {
                    self.print(&[Line::plain(format!(
                        "* {}  {}  {}  (from {} and {}; /connect adds one to the config)",
                        env.name,
                        env.base_url,
                        env.model,
                        hrns_core::config::ENV_BASE_URL,
                        hrns_core::config::ENV_API_KEY
                    ))]);
                    return;
                }
                if lines.is_empty() {
                    self.info("no providers in the config file; /connect adds one");
                }
                self.print(&lines);
            }
            CommandId::Provider => {
                let Some(name) = arg else { return };
                self.switch_provider(&name, None);
            }
            CommandId::Mcp => {
                let lines = crate::mcp::status_lines(&self.mcp);
                if lines.is_empty() {
                    self.info("no MCP servers configured (mcpServers in config.json or an approved ./.mcp.json)");
                }
                let lines: Vec<Line> = lines.into_iter().map(Line::plain).collect();
                self.print(&lines);
            }
            CommandId::Agents => {
                let current = self.setup.agent.name.clone();
                let lines: Vec<Line> = self
                    .setup
                    .discovered
                    .agents
                    .iter()
                    .map(|a| {
                        let mark = if a.name == current { "* " } else { "  " };
                        Line::plain(format!("{mark}{}  {}", a.name, a.description))
                    })
                    .collect();
                self.print(&lines);
            }
            CommandId::Agent => {
                let Some(name) = arg else { return };
                let Some(found) = agent::find_agent(&self.setup.discovered.agents, &name).cloned()
                else {
                    let names: Vec<String> = self
                        .setup
                        .discovered
                        .agents
                        .iter()
                        .map(|a| a.name.clone())
                        .collect();
                    self.error(&format!(
                        "no agent `{name}`; try one of: {}",
                        names.join(", ")
                    ));
                    return;
                };
                self.setup.agent = found;
                self.setup
                    .file
                    .config
                    .set_current_agent(self.setup.agent.name.clone());
                self.save_config();
                let history = self.history();
                self.rebuild(history);
                self.info(&format!("agent: {}", self.setup.agent.name));
            }
            CommandId::Connect => {
                self.connect = Some(Connect {
                    step: ConnectStep::Name,
                    name: String::new(),
                    url: String::new(),
                    key: String::new(),
                });
                self.info("add a provider (Esc cancels)");
            }
            CommandId::Sessions => {
                let Ok(state) = crate::paths::state_dir() else {
                    return;
                };
                let lines: Vec<Line> = sessions::files(&state.join("sessions"))
                    .iter()
                    .take(20)
                    .filter_map(|p| sessions::summarize(p))
                    .map(|s| {
                        let first = s
                            .first_user_message
                            .as_deref()
                            .map(|m| crate::output::one_line(m, 50))
                            .unwrap_or_default();
                        let current = self.log.as_ref().map(SessionLog::id);
                        let mark = if current == Some(s.header.id.as_str()) {
                            "* "
                        } else {
                            "  "
                        };
                        Line::plain(format!(
                            "{mark}{}  {}  {}  {first}",
                            s.header.id,
                            s.header.started,
                            crate::output::count(s.messages, "message")
                        ))
                    })
                    .collect();
                if lines.is_empty() {
                    self.info("no saved sessions yet");
                }
                self.print(&lines);
            }
            CommandId::Resume => {
                let Some(id) = arg else { return };
                let Ok(state) = crate::paths::state_dir() else {
                    return;
                };
                match sessions::find(&state.join("sessions"), &id) {
                    Ok(path) => self.resume(&path),
                    Err(e) => self.error(&e),
                }
            }
            CommandId::Quit => self.quit = true,
        }
    }

    fn switch_provider(&mut self, name: &str, model: Option<&str>) {
        let selection = Selection {
            provider: Some(name),
            model,
        };
        match self
            .setup
            .file
            .config
            .resolve(&selection, &crate::setup::env_var)
        {
            Ok(provider) => {
                self.setup.provider = provider;
                if self
                    .setup
                    .file
                    .config
                    .set_current_provider(&self.setup.provider.name)
                    .is_ok()
                {
                    self.save_config();
                }
                let history = self.history();
                self.rebuild(history);
                self.models.clear();
                self.info(&format!(
                    "provider: {} ({})",
                    self.setup.provider.name, self.setup.provider.model
                ));
            }
            Err(e) => self.error(&e.to_string()),
        }
    }

    fn save_config(&mut self) {
        if let Err(e) = self.setup.file.save() {
            self.error(&e.message);
        }
    }

    fn connect_step(&mut self, text: String) {
        let Some(mut c) = self.connect.take() else {
            return;
        };
        let value = text.trim().to_owned();
        match c.step {
            ConnectStep::Name if value.is_empty() => {}
            ConnectStep::Name => {
                c.name = value;
                c.step = ConnectStep::Url;
            }
            ConnectStep::Url
                if !(value.starts_with("http://") || value.starts_with("https://")) =>
            {
                self.error("the base URL must start with http:// or https://");
            }
            ConnectStep::Url => {
                c.url = value;
                c.step = ConnectStep::Key;
            }
            ConnectStep::Key => {
                let mut typed = hrns_core::secrets::Secrets::new();
                typed.add(&value);
                crate::redact::remember(&typed);
                c.key = value;
                c.step = ConnectStep::Model;
            }
            ConnectStep::Model if value.is_empty() => {}
            ConnectStep::Model => {
                let mut entry = hrns_core::config::ProviderEntry::new(c.url.clone());
                entry.key = (!c.key.is_empty()).then(|| c.key.clone());
                entry.model = Some(value.clone());
                self.setup
                    .file
                    .config
                    .upsert_provider(c.name.clone(), entry);
                self.switch_provider(&c.name.clone(), Some(&value));
                return;
            }
        }
        self.connect = Some(c);
    }
}

/// The async client for the run's provider.
fn client_for(setup: &Setup) -> Client {
    Client::new(
        setup.provider.to_provider(),
        &ClientConfig {
            skip_verify: setup.provider.skip_verify,
            ..ClientConfig::default()
        },
    )
}

/// The built-in tools the agent allows.
/// The tools of a turn. `web_fetch` gets a client of its own with default settings: it never
/// inherits the provider's TLS settings (a `skipVerify` provider must not switch off
/// certificate checks for every page the model fetches).
fn toolbox_for(setup: &Setup) -> Toolbox {
    let http = HttpClient::new(&ClientConfig::default());
    let mut toolbox = hrns_tokio::tools::builtin_toolbox(http, setup.discovered.skills.clone());
    toolbox.retain(|name| setup.agent.tools.allows(name));
    toolbox
}

/// One step of the session's IO, for the UI's `select!`: the future only borrows the runner
/// and the session, and may be dropped whenever a key arrives first.
async fn complete_io(runner: &mut Option<Runner>, session: &mut Option<Session>) -> Vec<Event> {
    match (runner.as_mut(), session.as_mut()) {
        (Some(runner), Some(session)) => runner.complete_io(session).await,
        _ => std::future::pending().await,
    }
}
