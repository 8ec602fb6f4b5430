//! One ACP session: a task owning its conversation (built by [`crate::host::conversation`]),
//! its session log, and the mapping of its events to `session/update`s.
//!
//! The task takes [`Command`]s from the reader and drives the runner while a prompt runs. An
//! approval question becomes a `session/request_permission` sent from a task of its own, whose
//! answer comes back as a command, so a cancel is taken while the editor still asks.

use super::{Outbound, Server, unknown_session};
use crate::host::conversation::{self, Built, Shared};
use crate::host::opening::{Note, Opened, Saved};
use crate::host::plan::Keep;
use crate::host::sessions::{self, Claim, SessionLog};
use crate::setup::{CliError, ConfigFile, Setup};
use hrns_core::acp::methods::{
    ClientCall, HttpKind, ListSessionsParams, McpServer, NewSessionParams, OpenSessionParams,
};
use hrns_core::acp::permission::Permissions;
use hrns_core::acp::rpc::{self, RpcError};
use hrns_core::acp::update::{self, Updates};
use hrns_core::secrets::Secrets;
use hrns_core::session::{Approval, ApprovalPolicy, Event, Question, Session};
use hrns_core::wire::Message;
use hrns_tokio::Runner;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// What the reader (or the session's own tasks) tell a session.
#[derive(Debug)]
pub(crate) enum Command {
    /// A request about this session, answered by it.
    Call { id: Value, call: ClientCall },
    /// `session/cancel`.
    Cancel,
    /// The editor's answer about call `call_id` of `tool`.
    Permission {
        question: Question,
        answer: Result<Value, RpcError>,
    },
    /// The client is gone: close the log and end.
    Close { done: Option<oneshot::Sender<()>> },
    /// `session/load` (`Replay::History`) or `session/resume` of this session, which is open
    /// already: answered by the open session, as a new opening would be.
    Reopen { id: Value, replay: Replay },
    /// The models the provider's `/models` lists, for the model option.
    Models(Vec<String>),
}

/// The most models of the provider's list offered in the model option (a router's list runs
/// to hundreds; the current and configured ones always come first).
const MAX_LISTED_MODELS: usize = 500;

/// How long the background `/models` lookup may take before the option keeps the configured
/// models only.
const MODELS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether an opening replays the history.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Replay {
    History,
    Nothing,
}

/// How a session is opened.
#[derive(Debug)]
pub(crate) enum Open {
    New(NewSessionParams),
    Load(OpenSessionParams),
    Resume(OpenSessionParams),
}

/// Opens a session on a blocking thread (the config, discovery and MCP servers are blocking
/// work) and answers `id`: for `load`, after the history's replay.
pub(crate) fn open(server: &Arc<Server>, id: Value, how: Open) {
    // A session open in this process already (an editor that loads it again, say after its
    // own restart of the panel): the open session answers, instead of a second claim on its
    // file that would find it busy.
    let again = match &how {
        Open::New(_) => None,
        Open::Load(p) => Some((&p.session_id, Replay::History)),
        Open::Resume(p) => Some((&p.session_id, Replay::Nothing)),
    };
    if let Some((sid, replay)) = again {
        if let Some(tx) = super::session_of(server, sid) {
            let reopen = Command::Reopen {
                id: id.clone(),
                replay,
            };
            if tx.send(reopen).is_ok() {
                return;
            }
        }
    }
    let server = Arc::clone(server);
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let _entered = handle.enter();
        match start(&server, &how) {
            Ok(started) => {
                let sid = started.id;
                if let Ok(mut s) = server.sessions.lock() {
                    s.insert(sid.clone(), started.tx);
                }
                let notify = |update: Value| {
                    server.out.notify(
                        "session/update",
                        json!({"sessionId": sid, "update": update}),
                    );
                };
                started.replay.into_iter().for_each(notify);
                let mut result = started.state;
                if let Open::New(_) = how {
                    result["sessionId"] = json!(sid);
                }
                server.out.result(&id, result);
                notify(started.commands);
                (started.look_up_models)();
            }
            Err(e) => server.out.error(&id, &e),
        }
    });
}

/// The state of one session task.
struct Acp {
    id: String,
    out: Outbound,
    setup: Setup,
    policy: ApprovalPolicy,
    shared: Shared,
    session: Session,
    runner: Runner,
    diffs: crate::host::diff::WriteDiffs,
    log: Option<SessionLog>,
    updates: Updates,
    permissions: Permissions,
    /// The session's secrets with the run's, for the mapping.
    secrets: Secrets,
    /// The prompt running, by its request id.
    prompt: Option<Value>,
    /// Where the session's checkpoints go, and what its hooks are told of it.
    saved: Saved,
    /// The models the provider listed (empty until `/models` answers, or when it cannot).
    listed: Vec<String>,
    tx: mpsc::UnboundedSender<Command>,
}

/// A session just started.
struct Started {
    id: String,
    tx: mpsc::UnboundedSender<Command>,
    /// For `load`: the history as updates.
    replay: Vec<Value>,
    /// Its modes and config options, for the answer.
    state: Value,
    /// The `available_commands_update`.
    commands: Value,
    /// Starts the background `/models` lookup; called once the answer is sent.
    look_up_models: Box<dyn FnOnce() + Send>,
}

/// Builds the session and starts its task; returns its id, its sender, and for `load` the
/// updates that replay its history.
fn start(server: &Arc<Server>, how: &Open) -> Result<Started, RpcError> {
    let (cwd, mcp_servers) = match how {
        Open::New(p) => (&p.cwd, &p.mcp_servers),
        Open::Load(p) | Open::Resume(p) => (&p.cwd, &p.mcp_servers),
    };
    if !cwd.starts_with('/') {
        return Err(invalid(format!(
            "cwd must be an absolute path, not `{cwd}`"
        )));
    }
    let file = ConfigFile::load(server.global.config.as_deref()).map_err(cli_error)?;
    let setup = Setup::resolve_in(&server.global, file, Some(Path::new(cwd))).map_err(cli_error)?;
    let policy = crate::setup::approval(server.global.approval, ApprovalPolicy::Ask);
    // What the conversation is made of, decided as for every front end (`host::plan`); the
    // editor's own MCP servers are read like config entries.
    let mut found = crate::host::plan::Found::read(&setup);
    let (extra, warnings) = client_servers(mcp_servers);
    found
        .mcp
        .servers
        .retain(|s| !extra.iter().any(|e| e.name == s.name));
    found.mcp.servers.extend(extra);
    let (mcp, failures) = crate::setup::mcp::start(
        &found.mcp,
        &setup.workspace,
        &setup.sandbox,
        crate::setup::mcp::Logs::Kept,
    );
    for w in found.mcp.warnings.iter().chain(&warnings).chain(&failures) {
        eprintln!("hrns acp: {}", crate::host::redact::redact(w));
    }
    let mcp_secrets = found.mcp_secrets();
    crate::host::redact::remember(&mcp_secrets);
    let mut shared = Shared {
        mcp: Arc::new(mcp),
        mcp_secrets,
        mcp_told: Default::default(),
        files: hrns_tokio::Files::Local,
    };
    // The session is opened as every front end opens it (`host::opening`); an editor's
    // session that cannot be saved is refused (it could not be loaded again).
    let (opened, replay_of) = match how {
        Open::New(_) => (crate::host::opening::open_new(&setup, Keep::Session), false),
        Open::Load(p) | Open::Resume(p) => {
            let state = crate::setup::paths::state_dir()
                .map_err(|e| RpcError::new(rpc::INTERNAL_ERROR, e))?
                .join("sessions");
            let path = sessions::find(&state, &p.session_id)
                .map_err(|e| RpcError::new(rpc::RESOURCE_NOT_FOUND, e))?;
            let claimed = match sessions::claim(&path, sessions::FORK_GRACE, || {}) {
                Ok(Claim::Claimed(c)) => c,
                Ok(Claim::Busy) => {
                    return Err(RpcError::new(
                        rpc::INTERNAL_ERROR,
                        format!("session {} is open in another hrns", p.session_id),
                    ));
                }
                Ok(Claim::Removed) | Err(_) => return Err(unknown_session(&p.session_id)),
            };
            let opened = crate::host::opening::open_saved(&setup, claimed)
                .map_err(|e| RpcError::new(rpc::INTERNAL_ERROR, e.to_string()))?;
            (opened, matches!(how, Open::Load(_)))
        }
    };
    let Opened {
        log,
        saved,
        history,
        start,
        notes,
    } = opened;
    let mut not_saved = None;
    for note in notes {
        match note {
            Note::History(w) => eprintln!("hrns acp: warning: {w}"),
            // Checkpoints as in the UI (`hrns undo` takes an editor's session's changes back
            // too); without `git`, said once.
            Note::CheckpointsOff(w) => eprintln!("hrns acp: warning: {w}"),
            Note::NotSaved(why) => not_saved = Some(why),
        }
    }
    let Some(log) = log else {
        let why = not_saved.map(|w| w.to_string()).unwrap_or_default();
        return Err(RpcError::new(
            rpc::INTERNAL_ERROR,
            format!("cannot save the session: {why}"),
        ));
    };
    let delegates = server
        .client
        .lock()
        .is_ok_and(|c| hrns_core::acp::client_fs::delegates_files(&c));
    if delegates {
        shared.files = hrns_tokio::Files::Editor(Arc::new(super::files::EditorFiles {
            out: server.out.clone(),
            session_id: log.id().to_owned(),
            runtime: tokio::runtime::Handle::current(),
        }));
    }
    let (tx, rx) = mpsc::unbounded_channel();
    // Hooks as in the UI; an unapproved project file is skipped with its warning (an editor
    // has no terminal to ask in).
    for warning in &found.hooks.warnings {
        eprintln!("hrns acp: {warning}");
    }
    let hooks = saved.hooks(&found.hooks, &setup, start);
    let built = conversation::build(
        &setup,
        policy,
        &shared,
        saved.checkpointer.clone(),
        hooks,
        history,
    );
    if let Some(why) = &built.history_refused {
        eprintln!("hrns acp: {why}");
    }
    let Built {
        client,
        session,
        runner,
        diffs,
        ..
    } = built;
    let secrets = secrets_of(&session);
    let replay = if replay_of {
        update::replay(
            &secrets,
            &setup.workspace.display().to_string(),
            session.messages(),
        )
    } else {
        Vec::new()
    };
    let id = log.id().to_owned();
    let acp = Acp {
        id: id.clone(),
        out: server.out.clone(),
        updates: Updates::new(setup.workspace.display().to_string()),
        setup,
        policy,
        shared,
        session,
        runner,
        diffs,
        log: Some(log),
        permissions: Permissions::new(),
        secrets,
        prompt: None,
        saved,
        listed: Vec::new(),
        tx: tx.clone(),
    };
    let state = acp.state();
    let commands = acp.commands();
    tokio::spawn(acp.run(rx));
    // What the provider offers, in the background: the session opens at once, and the model
    // option grows by a `config_option_update` when `/models` answers (a provider without it
    // keeps the configured models). Started only once the session's answer is sent, so that
    // the client never hears of a session before it knows its id.
    let told = tx.clone();
    let look_up_models: Box<dyn FnOnce() + Send> = Box::new(move || {
        tokio::spawn(async move {
            let listed = tokio::time::timeout(MODELS_TIMEOUT, client.list_models()).await;
            if let Ok(Ok(models)) = listed {
                let ids = models.into_iter().map(|m| m.id).collect();
                let _ = told.send(Command::Models(ids));
            }
        });
    });
    Ok(Started {
        id,
        tx,
        replay,
        state,
        commands,
        look_up_models,
    })
}

fn invalid(message: String) -> RpcError {
    RpcError::new(rpc::INVALID_PARAMS, message)
}

fn cli_error(e: CliError) -> RpcError {
    RpcError::new(rpc::INTERNAL_ERROR, e.message)
}

/// The session's secrets with the run's (config keys, MCP values), for the mapping.
fn secrets_of(session: &Session) -> Secrets {
    let mut secrets = session.secrets().clone();
    crate::host::redact::with_secrets(|run| secrets.extend(run));
    secrets
}

/// The client's MCP servers as config entries, read like `mcpServers` in config.json, so they
/// start and are checked exactly as configured ones.
fn client_servers(
    servers: &[McpServer],
) -> (Vec<hrns_core::mcp::config::ServerConfig>, Vec<String>) {
    let mut entries = serde_json::Map::new();
    for server in servers {
        let pairs =
            |list: &[hrns_core::acp::methods::NameValue]| -> serde_json::Map<String, Value> {
                list.iter()
                    .map(|nv| (nv.name.clone(), Value::String(nv.value.clone())))
                    .collect()
            };
        let (name, entry) = match server {
            McpServer::Stdio {
                name,
                command,
                args,
                env,
            } => (
                name,
                json!({"command": command, "args": args, "env": pairs(env)}),
            ),
            McpServer::Http {
                kind,
                name,
                url,
                headers,
            } => {
                let mut entry = json!({"url": url, "headers": pairs(headers)});
                if let HttpKind::Sse = kind {
                    // The HTTP transport falls back to HTTP+SSE by itself.
                    entry["type"] = json!("http");
                }
                (name, entry)
            }
        };
        entries.insert(name.clone(), entry);
    }
    let (found, errors) = hrns_core::mcp::config::parse_servers(&Value::Object(entries));
    let warnings = errors
        .iter()
        .map(|e| format!("the editor's MCP server: {e}"))
        .collect();
    (found, warnings)
}

/// `session/list`: the saved sessions, newest first, of `cwd` when given.
pub(crate) fn list(p: &ListSessionsParams) -> Result<Value, RpcError> {
    const PAGE: usize = 50;
    let dir = crate::setup::paths::state_dir()
        .map_err(|e| RpcError::new(rpc::INTERNAL_ERROR, e))?
        .join("sessions");
    let skip = match &p.cursor {
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| invalid(format!("the cursor `{c}` is not one hrns gave")))?,
        None => 0,
    };
    let mut all = sessions::files(&dir)
        .into_iter()
        .filter_map(|path| sessions::summarize(&path))
        .filter(|s| p.cwd.as_ref().is_none_or(|cwd| *cwd == s.header.cwd));
    let page: Vec<Value> = all
        .by_ref()
        .skip(skip)
        .take(PAGE)
        .map(|s| {
            let mut info = json!({
                "sessionId": s.header.id,
                "cwd": s.header.cwd,
                "updatedAt": s.header.started,
            });
            if let Some(title) = s.first_user_message {
                let title: String = title
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(100)
                    .collect();
                info["title"] = json!(title);
            }
            info
        })
        .collect();
    let mut result = json!({"sessions": page});
    if all.next().is_some() {
        result["nextCursor"] = json!((skip + PAGE).to_string());
    }
    Ok(result)
}

/// One step of the session's IO for [`Acp::run`]'s `select!`: the turn's next events while
/// `busy`; otherwise a stopped subagent's late ones (it never resolves when none runs).
async fn session_io(runner: &mut Runner, session: &mut Session, busy: bool) -> Vec<Event> {
    if busy {
        runner.complete_io(session).await
    } else {
        runner.next_late(session).await
    }
}

impl Acp {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        loop {
            let busy = !self.session.is_idle();
            tokio::select! {
                command = rx.recv() => match command {
                    Some(Command::Close { done }) => {
                        self.close();
                        if let Some(done) = done {
                            let _ = done.send(());
                        }
                        return;
                    }
                    Some(command) => {
                        if self.on_command(command) {
                            return;
                        }
                    }
                    None => {
                        self.close();
                        return;
                    }
                },
                events = session_io(&mut self.runner, &mut self.session, busy) => {
                    if busy {
                        self.on_events(events);
                    } else {
                        // A subagent stopped by a cancel ends a moment after its parent's turn.
                        self.on_late(&events);
                    }
                }
            }
        }
    }

    /// Acts on a command; `true` when the session ends.
    fn on_command(&mut self, command: Command) -> bool {
        match command {
            Command::Cancel => {
                if !self.session.is_idle() {
                    self.session.cancel();
                    self.dispatch();
                }
            }
            Command::Permission { question, answer } => {
                // Not asked any more (cancelled meanwhile): nothing to answer or remember.
                let pending = match &question {
                    Question::Call(run) => self
                        .session
                        .asked()
                        .is_some_and(|asked| asked.call_id == run.call_id),
                    Question::Child(q) => self.session.child_questions().contains(q),
                };
                if !pending {
                    return false;
                }
                let approval = match &question {
                    Question::Call(run) => self.permissions.answer(&run.name, answer.as_ref()),
                    // "Reject always" stands in the child's own session, as "allow always"
                    // does: the parent's standing answers are the parent's.
                    Question::Child(q) => Permissions::new().answer(&q.name, answer.as_ref()),
                };
                self.answer(&question, approval);
            }
            Command::Close { .. } => {
                self.close();
                return true;
            }
            Command::Reopen { id, replay } => self.reopen(&id, replay),
            Command::Models(mut ids) => {
                ids.truncate(MAX_LISTED_MODELS);
                self.listed = ids;
                let update = json!({"sessionUpdate": "config_option_update",
                    "configOptions": self.config_options()});
                self.send(&mut vec![update]);
            }
            Command::Call { id, call } => return self.on_call(id, call),
        }
        false
    }

    /// Answers a load or resume of this open session: its history replayed (for a load), its
    /// modes and options, then its commands, as for a fresh opening.
    fn reopen(&mut self, id: &Value, replay: Replay) {
        if let Err(e) = self.idle() {
            self.out.error(id, &e);
            return;
        }
        let mut updates = match replay {
            Replay::History => update::replay(
                &self.secrets,
                &self.setup.workspace.display().to_string(),
                self.session.messages(),
            ),
            Replay::Nothing => Vec::new(),
        };
        self.send(&mut updates);
        self.out.result(id, self.state());
        self.send(&mut vec![self.commands()]);
    }

    fn on_call(&mut self, id: Value, call: ClientCall) -> bool {
        match call {
            ClientCall::Prompt(p) => self.start_prompt(id, &p.prompt),
            ClientCall::SetMode(p) => match self.set_agent(&p.mode_id) {
                Ok(()) => self.out.result(&id, json!({})),
                Err(e) => self.out.error(&id, &e),
            },
            ClientCall::SetConfigOption(p) => {
                let value = match &p.value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let done = match p.config_id.as_str() {
                    "mode" => self.set_agent(&value),
                    "model" => self.set_model(&value),
                    "approval" => self.set_approval(&value),
                    other => Err(invalid(format!(
                        "hrns has no config option `{other}`; it has mode, model and approval"
                    ))),
                };
                match done {
                    Ok(()) => self
                        .out
                        .result(&id, json!({"configOptions": self.config_options()})),
                    Err(e) => self.out.error(&id, &e),
                }
            }
            ClientCall::CloseSession(_) => {
                if !self.session.is_idle() {
                    self.session.cancel();
                    self.dispatch();
                }
                self.close();
                self.out.result(&id, json!({}));
                return true;
            }
            ClientCall::Initialize(_)
            | ClientCall::Authenticate
            | ClientCall::NewSession(_)
            | ClientCall::LoadSession(_)
            | ClientCall::ResumeSession(_)
            | ClientCall::ListSessions(_)
            | ClientCall::Cancel(_) => {
                self.out.error(
                    &id,
                    &RpcError::new(rpc::INTERNAL_ERROR, "not a call about one session"),
                );
            }
        }
        false
    }

    fn start_prompt(&mut self, id: Value, blocks: &[hrns_core::acp::methods::ContentBlock]) {
        if self.prompt.is_some() || !self.session.is_idle() {
            self.out.error(
                &id,
                &RpcError::new(
                    rpc::INVALID_REQUEST,
                    "a prompt is already running in this session; cancel it first",
                ),
            );
            return;
        }
        let (text, mut message) = super::prompt::message(blocks, &self.setup);
        // A custom command (`/name args`) is expanded as in the UI.
        let before = (
            self.setup.agent.name.clone(),
            self.setup.provider.model.clone(),
        );
        match crate::setup::custom_commands::invoke(&text, &mut self.setup) {
            Ok(Some(expanded)) => {
                message = Message::user(expanded);
                if before
                    != (
                        self.setup.agent.name.clone(),
                        self.setup.provider.model.clone(),
                    )
                {
                    self.rebuild();
                }
            }
            Ok(None) => {}
            Err(e) => {
                self.out.error(&id, &cli_error(e));
                return;
            }
        }
        self.runner.update_tools(&mut self.session);
        if let Err(e) = self.session.submit_message(message) {
            self.out.error(
                &id,
                &RpcError::new(
                    rpc::INTERNAL_ERROR,
                    format!("the message could not be sent: {e}"),
                ),
            );
            return;
        }
        self.prompt = Some(id);
        self.dispatch();
    }

    /// Starts the IO the session asked for after input of our own, and maps its events.
    fn dispatch(&mut self) {
        let events = self.runner.dispatch(&mut self.session);
        self.on_events(events);
    }

    fn on_events(&mut self, events: Vec<Event>) {
        let mut out = Vec::new();
        let mut asks = Vec::new();
        for event in &events {
            if !event.is_delta() {
                if let Some(log) = self.log.as_mut() {
                    let _ = log.record(event);
                }
            }
            let change = self.diffs.on_event_whole(event).map(|t| t.change);
            self.updates
                .on_event(&self.secrets, event, change.as_ref(), &mut out);
            // The session's own questions and its subagents' take one path.
            if let Some(question) = Question::pending_in(&self.session, event) {
                asks.push(question);
            }
            if let Event::Usage { .. } = event {
                let usage = self.session.context_usage();
                out.extend(update::usage_update(usage.tokens, usage.window));
            }
            if let Event::OptionDropped { .. } = event {
                self.learn_quirk(event);
            }
            if let Some(stop) = self.updates.stop(event) {
                self.send(&mut out);
                self.finish(stop);
            }
        }
        self.updates.end_batch(&self.secrets, &mut out);
        self.send(&mut out);
        for question in asks {
            self.ask(question);
        }
    }

    /// Events that come after the turn ended: a stopped subagent's last ones (how it ended,
    /// its tokens). They belong in the session file, as under `hrns exec` and the UI; the
    /// editor was already told the turn was cancelled, so they are not shown to it.
    fn on_late(&mut self, events: &[Event]) {
        if let Some(log) = self.log.as_mut() {
            for event in events {
                let _ = log.record(event);
            }
        }
    }

    fn send(&self, out: &mut Vec<Value>) {
        for update in out.drain(..) {
            self.out.notify(
                "session/update",
                json!({"sessionId": self.id, "update": update}),
            );
        }
    }

    /// Answers the running prompt.
    fn finish(&mut self, stop: Result<update::StopReason, hrns_core::session::TurnError>) {
        let Some(id) = self.prompt.take() else {
            return;
        };
        match stop {
            Ok(reason) => self.out.result(&id, json!({"stopReason": reason.as_str()})),
            Err(e) => self.out.error(
                &id,
                &RpcError::new(
                    rpc::INTERNAL_ERROR,
                    crate::host::redact::redact(&e.to_string()).into_owned(),
                ),
            ),
        }
    }

    /// Asks the editor about a call, the session's own or a subagent's, from a task of its
    /// own; a standing answer about the session's own tools is given at once.
    fn ask(&mut self, question: Question) {
        let standing = match &question {
            Question::Call(run) => self.permissions.standing(&run.name),
            Question::Child(_) => None,
        };
        if let Some(approval) = standing {
            self.answer(&question, approval);
            return;
        }
        let params = update::question_request(
            &self.secrets,
            &self.setup.workspace.display().to_string(),
            &self.id,
            &question,
        );
        let (out, tx) = (self.out.clone(), self.tx.clone());
        tokio::spawn(async move {
            let answer = out.request("session/request_permission", params).await;
            let _ = tx.send(Command::Permission { question, answer });
        });
    }

    /// The one path of answers: a question that is no longer pending (the turn was
    /// cancelled, the subagent's task stopped) is dropped.
    fn answer(&mut self, question: &Question, approval: Approval) {
        if let (Question::Call(run), Approval::Once | Approval::AlwaysThisTool) =
            (question, &approval)
        {
            let mut out = Vec::new();
            self.updates.allowed(&run.call_id, &mut out);
            self.send(&mut out);
        }
        if self
            .runner
            .handle_answer(&mut self.session, question, approval)
            .is_ok()
        {
            self.dispatch();
        }
    }

    fn learn_quirk(&self, event: &Event) {
        let store = crate::host::plan::quirk_store(&self.setup, crate::host::plan::Keep::Session);
        if let Some(Err(e)) = store.and_then(|store| store.observe(event)) {
            eprintln!("hrns acp: {}", e.message);
        }
    }

    /// Builds the conversation again (another agent, model or policy), keeping its history.
    fn rebuild(&mut self) {
        let history = self.session.messages().to_vec();
        // The same conversation goes on: its `SessionStart` hooks do not run again.
        let hooks = self.saved.hooks(
            &crate::setup::hooks::configured(&self.setup.file, &self.setup.workspace),
            &self.setup,
            hrns_core::hooks::StartSource::Continued,
        );
        let built = conversation::build(
            &self.setup,
            self.policy,
            &self.shared,
            self.saved.checkpointer.clone(),
            hooks,
            history,
        );
        if let Some(why) = &built.history_refused {
            eprintln!("hrns acp: {why}");
        }
        let mut session = built.session;
        // The user's "always allow" and "never" outlast the rebuild, like the conversation.
        session.keep_approvals(self.session.approvals());
        self.session = session;
        self.runner = built.runner;
        self.diffs = built.diffs;
        self.secrets = secrets_of(&self.session);
    }

    fn idle(&self) -> Result<(), RpcError> {
        if self.session.is_idle() {
            Ok(())
        } else {
            Err(RpcError::new(
                rpc::INVALID_REQUEST,
                "a prompt is running in this session; wait for it or cancel it first",
            ))
        }
    }

    fn set_agent(&mut self, name: &str) -> Result<(), RpcError> {
        self.idle()?;
        let agent = hrns_core::agent::find_agent(&self.setup.discovered.agents, name)
            .cloned()
            .ok_or_else(|| {
                invalid(format!(
                    "there is no mode (agent) `{name}`; pick one of: {}",
                    self.agent_names().join(", ")
                ))
            })?;
        self.setup.agent = agent;
        self.rebuild();
        let update =
            json!({"sessionUpdate": "current_mode_update", "currentModeId": self.setup.agent.name});
        self.send(&mut vec![update]);
        Ok(())
    }

    fn set_model(&mut self, model: &str) -> Result<(), RpcError> {
        self.idle()?;
        if model.trim().is_empty() {
            return Err(invalid("the model name is empty".into()));
        }
        self.setup.provider.model = model.trim().to_owned();
        self.rebuild();
        Ok(())
    }

    fn set_approval(&mut self, value: &str) -> Result<(), RpcError> {
        self.idle()?;
        self.policy = match value {
            "read-only" => ApprovalPolicy::ReadOnly,
            "ask" => ApprovalPolicy::Ask,
            "auto" => ApprovalPolicy::Auto,
            other => {
                return Err(invalid(format!(
                    "the approval policy `{other}` is not one of read-only, ask, auto"
                )));
            }
        };
        self.rebuild();
        Ok(())
    }

    fn agent_names(&self) -> Vec<String> {
        self.setup
            .discovered
            .agents
            .iter()
            .map(|a| a.name.clone())
            .collect()
    }

    /// The modes (the agents) and config options, for the answer to new, load and resume.
    fn state(&self) -> Value {
        json!({"modes": self.modes(), "configOptions": self.config_options()})
    }

    fn modes(&self) -> Value {
        let available: Vec<Value> = self
            .setup
            .discovered
            .agents
            .iter()
            .map(|a| json!({"id": a.name, "name": a.name, "description": a.description}))
            .collect();
        json!({"currentModeId": self.setup.agent.name, "availableModes": available})
    }

    fn config_options(&self) -> Value {
        let policy = match self.policy {
            ApprovalPolicy::ReadOnly => "read-only",
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::Auto => "auto",
        };
        let model = &self.setup.provider.model;
        // The current model, the configured ones, then what the provider lists, each once.
        let configured = self
            .setup
            .file
            .config
            .providers
            .values()
            .filter_map(|entry| entry.model.as_ref());
        let mut seen = std::collections::HashSet::new();
        let models: Vec<Value> = std::iter::once(model)
            .chain(configured)
            .chain(&self.listed)
            .filter(|m| seen.insert(m.as_str()))
            .map(|m| json!({"value": m, "name": m}))
            .collect();
        let modes: Vec<Value> = self
            .agent_names()
            .iter()
            .map(|m| json!({"value": m, "name": m}))
            .collect();
        json!([
            {"id": "mode", "name": "Agent", "category": "mode", "type": "select",
             "currentValue": self.setup.agent.name, "options": modes},
            {"id": "model", "name": "Model", "category": "model", "type": "select",
             "currentValue": model, "options": models},
            {"id": "approval", "name": "Approval", "type": "select", "currentValue": policy,
             "description": "Which tool calls run without asking",
             "options": [
                {"value": "read-only", "name": "Read-only", "description": "only read-only tools run"},
                {"value": "ask", "name": "Ask", "description": "calls with effects ask first"},
                {"value": "auto", "name": "Auto", "description": "every call runs"},
             ]},
        ])
    }

    /// The `available_commands_update` with the custom commands.
    fn commands(&self) -> Value {
        let commands: Vec<Value> = self
            .setup
            .discovered
            .commands
            .iter()
            .map(|c| {
                let mut command = json!({"name": c.name, "description": c.description});
                if c.body.contains('$') {
                    command["input"] = json!({"hint": "arguments"});
                }
                command
            })
            .collect();
        json!({"sessionUpdate": "available_commands_update", "availableCommands": commands})
    }

    /// Ends the session: its `SessionEnd` hooks run (`reason: other`, whether the editor
    /// closed it or went away), then the log closes (a session that never got an answer is
    /// not kept).
    fn close(&mut self) {
        let (workspace, env) = (&self.setup.workspace, &self.setup.sandbox.env);
        let session = &mut self.session;
        // The agent's runtime has worker threads: other sessions go on meanwhile.
        let ran = tokio::task::block_in_place(|| {
            crate::host::hooks::end(session, workspace, env, hrns_core::hooks::EndReason::Other)
        });
        if ran {
            self.dispatch();
        }
        // What a stopped subagent handed in and nothing read yet is saved before the log closes.
        if self.session.is_idle() {
            let late = self.runner.take_late(&mut self.session);
            self.on_late(&late);
        }
        let history = self.session.messages().to_vec();
        if let Some(log) = self.log.take() {
            let _ = log.keep_if_answered(&history);
        }
    }
}
