//! The interactive UI's event loop: terminal keys, the turn's events and approvals, and the
//! slash commands, over the building blocks in the sibling modules and the tokio driver.
//!
//! The [`App`] and its loop live here; its methods are split by concern into the child
//! modules: what it prints and draws (`draw`), keys and submitted lines (`input`), a turn's
//! events (`turn`), the session and its log (`conversation`), the slash commands (`slash`)
//! and `/connect` (`connect`).

use super::editor::Editor;
use super::history::History;
use super::markdown::MarkdownRenderer;
use super::markdown::highlight::Highlight;
use super::screen::Screen;
use super::view;
use crate::host::sessions::SessionLog;
use crate::setup::{CliError, Setup};
use hrns_core::session::{ApprovalPolicy, ChildQuestion, Event, Question, Session};
use hrns_tokio::{Client, Runner};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

mod connect;
mod conversation;
mod draw;
mod frames;
mod hooks;
mod input;
mod questions;
mod slash;
mod turn;
mod undo;

use connect::Connect;
use frames::Frames;

/// What reaches the loop from other tasks.
enum Msg {
    /// SIGTERM or SIGHUP arrived: cancel, save, restore the terminal, exit 128 + the signal.
    Terminate(i32),
    /// A `/models` answer.
    Models(Result<Vec<String>, String>),
    /// The model list looked up at the start for the context window.
    Window(Vec<hrns_core::wire::ModelInfo>),
    /// The `/models` answer of the provider `/connect` is adding, at `url`.
    ConnectModels {
        url: String,
        result: Result<Vec<String>, String>,
    },
    /// An MCP server stopped or changed its tools.
    McpChanged,
    /// The results of hooks the UI ran itself, for the session built `built`-th.
    HookRuns {
        built: u64,
        id: u64,
        runs: Vec<hrns_core::hooks::HookRun>,
    },
}

/// A pending approval question, the session's own or a subagent's ([`Question::agent`] says
/// which); the answer goes to the session either way ([`hrns_tokio::Runner::handle_answer`]).
struct Asking {
    question: Question,
    /// Whether `u` (once, without the sandbox) is one of the answers.
    unsandboxed: crate::sandbox::escalate::Unsandboxed,
    /// The user pressed `n` and is typing a reason.
    reason: bool,
}

/// Options the UI was started with.
#[derive(Debug, Default)]
pub(crate) struct Options {
    /// The approval policy (the UI asks by default).
    pub(crate) approval: Option<ApprovalPolicy>,
    /// A saved session to continue, already locked for this run.
    pub(crate) resume: Option<crate::host::sessions::Claimed>,
}

/// The UI.
pub(crate) struct App {
    setup: Setup,
    policy: ApprovalPolicy,
    screen: Screen,
    editor: Editor,
    md: MarkdownRenderer,
    /// How code in answers is coloured (off under `NO_COLOR`).
    highlight: Highlight,
    /// How links in answers are shown (OSC 8 hyperlinks where the terminal opens them).
    links: crate::tui::text::Links,
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
    /// Tokens and cost of the sessions this conversation ran in before the current one (a
    /// `/model` switch starts a new session on the same history); the rest is
    /// `Session::usage` at `pricing`.
    spent_before: super::status::Spent,
    /// The current model's prices from the config, if it gives them.
    pricing: Option<hrns_core::pricing::Pricing>,
    ctrl_c_at: Option<Instant>,
    quit: bool,
    /// The exit status: 0, or 128 + the signal that ended the UI.
    exit_status: u8,
    models: Vec<String>,
    /// The model whose window was last asked of `/models`.
    window_looked_up: Option<String>,
    /// Tab's candidates, shown in place under the input until the next key.
    candidates: Option<String>,
    /// `/model` without a name asked for the list: number it and say how to pick.
    picking_model: bool,
    log: Option<SessionLog>,
    /// The checkpoints of the session `log` writes, and what its hooks are told of it
    /// ([`crate::host::opening`]).
    saved: crate::host::opening::Saved,
    /// A `/rewind` or `/undo` question waiting for its answer.
    checkpoint_ask: Option<undo::CheckpointAsk>,
    /// Whether the user was told that checkpoints are off (once a run).
    checkpoints_warned: bool,
    /// The MCP servers of this run and the `run_command` calls let out of the sandbox once,
    /// kept across rebuilds (`/model`, `/connect`, a resume).
    shared: crate::host::conversation::Shared,
    /// The hooks of this workspace ([`crate::setup::hooks`]).
    hooks: crate::setup::hooks::Found,
    /// How the next session [`App::rebuild`] makes starts, for `SessionStart` hooks (taken by
    /// it: later rebuilds continue the same conversation).
    hook_start: hrns_core::hooks::StartSource,
    /// When the prompt, idle since a turn ended, is told to `Notification` hooks.
    idle_notify_at: Option<tokio::time::Instant>,
    /// How many sessions [`App::rebuild`] made: hook results of an earlier one are dropped.
    sessions_built: u64,
    /// The diffs the write tools take just before they run, shown with results that were not
    /// asked about (an asked call's diff is shown in its approval).
    diffs: crate::host::diff::WriteDiffs,
    /// The `read_file` calls waiting for their results, with their files' languages.
    reads: Vec<(String, String)>,
    /// The subagents of the running turn, shown live under the answer.
    tasks: super::tasks::Tasks,
    /// Subagents' approval questions waiting for the one on screen to be answered.
    child_asks: std::collections::VecDeque<ChildQuestion>,
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

/// Tells the UI when an MCP server stops or changes its tools, so that it says so at once,
/// also while no turn runs (a turn's runner applies the change itself before its next input).
/// The thread ends within a second of the UI.
fn watch_mcp(watch: hrns_blocking::mcp::ChangeWatch, tx: mpsc::UnboundedSender<Msg>) {
    let _ = std::thread::Builder::new()
        .name("mcp-watch".into())
        .spawn(move || {
            let mut seen = watch.generation();
            while !tx.is_closed() {
                let now = watch.wait_past(seen, Duration::from_secs(1));
                if now != seen {
                    seen = now;
                    if tx.send(Msg::McpChanged).is_err() {
                        return;
                    }
                }
            }
        });
}

fn colors() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

impl App {
    fn new(setup: Setup, options: Options) -> Result<App, CliError> {
        let policy = options.approval.unwrap_or(ApprovalPolicy::Ask);
        // Started before the screen is taken, so a slow server delays only the first paint.
        // What the conversation is made of, decided as for every front end (`host::plan`).
        let found = crate::host::plan::Found::read(&setup);
        let (mcp, mcp_failures) = crate::setup::mcp::start(
            &found.mcp,
            &setup.workspace,
            &setup.sandbox,
            crate::setup::mcp::Logs::Kept,
        );
        let (tx, rx) = mpsc::unbounded_channel();
        // Watched before the screen is taken, so that no signal finds raw mode unguarded.
        let signals = tx.clone();
        crate::term::signals::watch_termination(
            move |signal| {
                let _ = signals.send(Msg::Terminate(signal));
            },
            crate::tui::screen::restore_terminal,
        );
        let screen = Screen::enter(colors())
            .map_err(|e| CliError::failure(format!("cannot use the terminal: {e}")))?;
        let history = History::default_path()
            .map(History::load)
            .unwrap_or_else(History::in_memory);
        let client = crate::host::conversation::client_for(&setup);
        let width = screen.wrap_width();
        let highlight = Highlight::detect(
            setup
                .file
                .config
                .extra
                .get("theme")
                .and_then(|t| t.as_str()),
            // The screen is in raw mode and nothing reads the terminal yet.
            crate::tui::background::ask,
        );
        let pricing = setup.pricing();
        let links = crate::tui::text::Links::detect(
            setup
                .file
                .config
                .extra
                .get("hyperlinks")
                .and_then(serde_json::Value::as_bool),
            colors(),
        );
        let mut app = App {
            policy,
            screen,
            editor: Editor::new(history),
            md: MarkdownRenderer::new(width, highlight).with_links(links),
            links,
            highlight,
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
            spent_before: Default::default(),
            pricing,
            ctrl_c_at: None,
            quit: false,
            exit_status: 0,
            models: Vec::new(),
            window_looked_up: None,
            candidates: None,
            reads: Vec::new(),
            picking_model: false,
            log: None,
            saved: Default::default(),
            checkpoint_ask: None,
            checkpoints_warned: false,
            shared: crate::host::conversation::Shared {
                files: hrns_tokio::Files::Local,
                mcp: std::sync::Arc::new(mcp),
                mcp_secrets: found.mcp_secrets(),
                mcp_told: Default::default(),
            },
            hooks: found.hooks,
            hook_start: hrns_core::hooks::StartSource::Startup,
            idle_notify_at: None,
            sessions_built: 0,
            diffs: Default::default(),
            tasks: Default::default(),
            child_asks: Default::default(),
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
        if let Some(check) = app.setup.workspace_check {
            app.error(&format!("warning: {}", check.warning(&app.setup.workspace)));
        }
        for line in found.mcp.warnings.iter().chain(&mcp_failures) {
            app.error(line);
        }
        for line in app.hooks.warnings.clone() {
            app.error(&line);
        }
        for w in app.setup.discovered.warnings.clone() {
            app.print(&[view::error_line(&w)]);
        }
        if app
            .shared
            .mcp
            .servers()
            .iter()
            .any(|s| !s.config().disabled)
        {
            watch_mcp(app.shared.mcp.watch(), app.tx.clone());
        }
        // The log first: the session's checkpoints are named after it, and its hooks read
        // its id and path.
        match options.resume {
            Some(claimed) => app.resume(claimed),
            None => {
                app.new_log();
                app.rebuild(Vec::new(), conversation::Answers::Forgotten);
            }
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
        let mut frames = Frames::default();
        while !self.quit {
            if frames.due(tokio::time::Instant::now()) {
                self.draw();
            }
            let next_frame = frames.next();
            let idle_notify_at = self.idle_notify_at;
            let busy = self.busy();
            tokio::select! {
                Some(ev) = keys.recv() => {
                    self.on_terminal(ev);
                    frames.now();
                }
                Some(msg) = self.rx.recv() => {
                    self.on_msg(msg);
                    frames.now();
                }
                // While idle: a stopped child's last events, after its parent's turn (logged).
                events = complete_io(&mut self.runner, &mut self.session, busy) => {
                    self.on_events(events);
                    frames.soon();
                }
                _ = tokio::time::sleep_until(next_frame.unwrap_or_else(tokio::time::Instant::now)),
                    if next_frame.is_some() => {}
                _ = tick.tick(), if self.waiting_since.is_some() || !self.tasks.is_empty() => {
                    frames.now();
                }
                _ = tokio::time::sleep_until(idle_notify_at.unwrap_or_else(tokio::time::Instant::now)),
                    if idle_notify_at.is_some() && !busy => {
                    self.notify_idle();
                    frames.soon();
                }
            }
        }
        if self.busy() {
            // Leaving mid-turn: the runner's token stops the tools with their processes.
            if let Some(runner) = &self.runner {
                runner.cancel_token().cancel();
            }
            self.interrupt();
        }
        // Every way out ends the session: at the prompt (`/quit`, Ctrl-D, Ctrl-C twice), or
        // by a signal.
        self.end_session(match self.exit_status {
            0 => hrns_core::hooks::EndReason::PromptInputExit,
            _ => hrns_core::hooks::EndReason::Other,
        });
        self.draw();
        let _ = self.screen.finish();
        // How to come back (on stderr, after the UI has left the screen), when there is
        // something to come back to.
        if self.close_log() {
            eprintln!("to continue this conversation: hrns --continue");
        }
        // Running commands end with their process groups as the runtime shuts down: each
        // call's cancel flag is set when its task is dropped, and the runtime waits for the
        // blocking threads that kill and reap them.
        Ok(self.exit_status)
    }
}

/// One step of the session's IO, for the UI's `select!`: the future only borrows the runner
/// and the session, and may be dropped whenever a key arrives first.
/// The turn's next events while `busy`; otherwise a stopped child's late ones.
async fn complete_io(
    runner: &mut Option<Runner>,
    session: &mut Option<Session>,
    busy: bool,
) -> Vec<Event> {
    match (runner.as_mut(), session.as_mut()) {
        (Some(runner), Some(session)) if busy => runner.complete_io(session).await,
        (Some(runner), Some(session)) => runner.next_late(session).await,
        _ => std::future::pending().await,
    }
}
