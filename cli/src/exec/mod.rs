//! `hrns exec`: one turn, the prompt from the argument or stdin, the answer streamed to stdout.

pub(crate) mod batch;
pub(crate) mod json_lines;
pub(crate) mod output;
pub(crate) mod schema;

use crate::args::{ExecArgs, Global};
use crate::exec::json_lines::JsonPrinter;
use crate::exec::output::HumanPrinter;
use crate::host::blocking::{self, BuildError};
use crate::host::opening::{self, NotSaved, Note};
use crate::host::plan::{self, Found, Keep};
use crate::host::record::{Header, Recorder};
use crate::host::sessions::{self, SessionLog};
use crate::setup::learned::{QuirkStore, Saved};
use crate::setup::{CliError, ConfigFile, approval};
use hrns_blocking::{CancelFlag, Client, Runner, Transport, TurnOutcome};
use hrns_core::session::{
    Approval, ApprovalPolicy, Event, Question, Session, ToolRun, ToolStatus, TurnError,
};
use hrns_core::wire::{Message, Role};
use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

/// How an exec run ended, as a process exit code.
pub(crate) fn run(global: &Global, args: &ExecArgs) -> Result<u8, CliError> {
    if args.print_event_schema {
        print!("{}", schema::EVENT_SCHEMA);
        return Ok(0);
    }
    // What the run needs from files the user named, before anything is sent.
    let output_schema = args
        .output_schema
        .as_deref()
        .map(schema::output_schema)
        .transpose()?;
    if let Some(path) = &args.output_last_message {
        check_writable(path)?;
    }
    let prompt = read_prompt(args.message.as_deref().or(args.prompt.as_deref()))?;
    let file = ConfigFile::load(global.config.as_deref())?;
    // Whether the sandbox's namespace can be made here is learnt while exec starts up; its
    // warning is said before the first command can run (an MCP server, a tool call).
    crate::sandbox::early::start_in_background();
    let mut setup = crate::setup::onboarding::resolve_or_onboard(global, file)?;
    setup.print_warnings();
    let policy = approval(global.approval, ApprovalPolicy::Auto);
    if policy == ApprovalPolicy::Ask && !std::io::stdin().is_terminal() {
        return Err(CliError::usage(
            "--approval ask needs a terminal to ask on, and stdin is not one; use --approval read-only or auto",
        ));
    }
    let prompt = crate::setup::custom_commands::invoke(&prompt, &mut setup)?.unwrap_or(prompt);
    // The run's client, made once: a `/models` lookup leaves its connection to the run.
    let client = blocking::client_for(&setup);
    if setup.needs_window_lookup() {
        // Best effort: a provider without /models (or without a window in it) leaves the
        // window unknown, and an overflow answer teaches it.
        // A short timeout: a slow /models must not hold the run up.
        if let Ok(models) = client.list_models_within(Some(std::time::Duration::from_secs(5))) {
            setup.learn_window(&models);
        }
    }
    // What the conversation is made of, decided as for every front end (`host::plan`).
    let found = Found::read(&setup);
    // `--ephemeral` leaves nothing behind, the servers' logs included.
    let mcp_logs = match args.ephemeral {
        true => crate::setup::mcp::Logs::Discarded,
        false => crate::setup::mcp::Logs::Kept,
    };
    if found.mcp.servers.iter().any(|s| !s.disabled) {
        crate::sandbox::early::say_found();
    }
    let (mcp_servers, mcp_failures) =
        crate::setup::mcp::start(&found.mcp, &setup.workspace, &setup.sandbox, mcp_logs);
    for line in found.mcp.warnings.iter().chain(&mcp_failures) {
        eprintln!("hrns: warning: {}", crate::term::safe_text::safe(line));
    }
    for line in &found.hooks.warnings {
        eprintln!("hrns: warning: {}", crate::term::safe_text::safe(line));
    }
    let shared = blocking::Shared {
        mcp: Arc::new(mcp_servers),
        mcp_secrets: found.mcp_secrets(),
    };
    let mut prepared = blocking::prepare(&setup, policy, &shared, client);
    crate::host::redact::remember(&hrns_core::secrets::Secrets::of_provider(
        &prepared.config.provider,
    ));
    prepared.config.max_steps = args.max_steps.max(1);
    prepared.config.output = output_schema;
    let structured = match prepared.config.output {
        Some(_) => Answer::Structured,
        None => Answer::Text,
    };
    // Attached now, so that an image that cannot be read is a usage error before anything
    // is saved or sent.
    let message = with_attachments(
        &prompt,
        &setup.workspace,
        &setup.sandbox.protected,
        &args.image,
    )?;

    let keep = match args.ephemeral {
        true => Keep::Nothing,
        false => Keep::Session,
    };
    let cwd = setup.workspace.display().to_string();
    let resumed = match (&args.resume, args.continue_) {
        (None, false) => None,
        (resume, _) => {
            let dir = crate::setup::paths::state_dir()
                .map_err(|_| {
                    CliError::usage(
                        "cannot find the state directory for saved sessions; set HOME or XDG_STATE_HOME",
                    )
                })?
                .join("sessions");
            Some(match resume {
                Some(id) => sessions::find(&dir, id).map_err(CliError::usage)?,
                None => sessions::latest_in(&dir, &cwd).ok_or_else(|| {
                    CliError::usage(format!(
                        "no saved session in {cwd} to continue; start one without --continue"
                    ))
                })?,
            })
        }
    };
    // One writer per session: a session another hrns is writing is waited for, then left to it.
    let claimed = match resumed {
        Some(path) => sessions::claim_on_stderr(&path).map_err(CliError::usage)?,
        None => None,
    };
    let resumed_path = claimed.as_ref().map(|c| c.path().to_owned());
    let opened = match claimed {
        Some(claimed) => {
            opening::open_saved(&setup, claimed).map_err(|e| CliError::usage(e.to_string()))?
        }
        None => opening::open_new(&setup, keep),
    };
    for note in &opened.notes {
        show_note(note);
    }
    let hooks = opened.saved.hooks(&found.hooks, &setup, opened.start);
    let mut log = opened.log;

    let record = |config: &hrns_core::session::SessionConfig, client: Client| {
        let Some(path) = &args.record else {
            return Ok(Arc::new(client) as Arc<dyn Transport>);
        };
        let header = Header {
            hrns_record: crate::host::record::RECORD_VERSION,
            prompt: prompt.clone(),
            model: config.model.clone(),
            system_prompt: config.system_prompt.clone(),
            tools: config.tools.iter().map(|t| t.name.clone()).collect(),
            approval: policy_name(policy).to_owned(),
            agent: setup.agent.name.clone(),
            secrets: crate::host::record::SecretSources::of(&setup.file.config, &setup.provider),
        };
        Recorder::create(path, &header, Arc::new(client))
            .map(|r| Arc::new(r) as Arc<dyn Transport>)
            .map_err(|e| {
                CliError::usage(format!(
                    "cannot create the recording {}: {e}",
                    path.display()
                ))
            })
    };
    let cancel = CancelFlag::new();
    let built = prepared
        .build(
            record,
            opened.saved.checkpointer.clone(),
            hooks,
            opened.history,
            cancel.clone(),
        )
        .map_err(|e| match e {
            BuildError::History(e) => CliError::usage(format!(
                "cannot resume {}: {e}",
                resumed_path
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
                    .display()
            )),
            BuildError::Transport(e) => e,
        })?;
    let blocking::Built {
        mut session,
        runner,
        diffs,
        children,
    } = built;

    if args.json {
        crate::exec::output::SessionStarted::new(
            log.as_ref().map(SessionLog::id),
            &setup.provider.name,
            &setup.provider.model,
            &setup.agent.name,
            &cwd,
        )
        .print(&mut std::io::stdout().lock());
    }
    crate::term::signals::install(&cancel);
    crate::sandbox::early::say_found();
    let ended = run_turn(
        runner,
        diffs,
        &setup.sandbox.policy,
        &mut session,
        message,
        args.json,
        policy,
        log.as_mut(),
        plan::quirk_store(&setup, keep).as_ref(),
        children,
        structured,
        setup.pricing(),
    );
    session_end(&mut session, &setup, args.json);
    let mut ended = ended;
    ended.write_final();
    let outcome = &ended.outcome;
    if matches!(outcome, TurnOutcome::Cancelled) {
        // Tool threads may still be killing their commands when hrns is about to exit.
        hrns_blocking::tools::end_all_commands();
    }
    // A new conversation that failed before any answer is not worth a saved session of one
    // message (it would crowd `hrns sessions` and `--continue`).
    let log = log.and_then(|log| log.keep_if_answered(session.messages()));
    if let (Some(log), false) = (&log, args.json) {
        if std::io::stderr().is_terminal() {
            let s = crate::term::style::Style::stderr();
            eprintln!(
                "{}",
                s.dim(&format!(
                    "session {} (hrns exec --resume {} to continue)",
                    log.id(),
                    log.id()
                ))
            );
        }
    }
    let code = finish_run(&ended, args, session.messages())?;
    Ok(code)
}

/// Says on stderr what opening the session found: a line of a continued session that could
/// not be read, a session that is not saved (nothing to say when there is no state directory:
/// the run keeps nothing, as with `--ephemeral`), checkpoints that cannot be taken.
fn show_note(note: &Note) {
    match note {
        Note::History(w) => eprintln!("hrns: warning: {w}"),
        Note::NotSaved(NotSaved::File(e)) => {
            eprintln!("hrns: warning: the session is not saved: {e}");
        }
        Note::NotSaved(NotSaved::NoStateDir(_)) => {}
        Note::CheckpointsOff(warning) => eprintln!(
            "{} {}",
            crate::term::style::Style::stderr().harness("hrns: warning:"),
            crate::term::safe_text::safe(warning)
        ),
    }
}

/// Runs the `SessionEnd` hooks (`reason: other`), if any, and shows what became of them as
/// the turn's hooks are shown (before the final event's line, held until then).
fn session_end(session: &mut Session, setup: &crate::setup::Setup, json: bool) {
    let ran = crate::host::hooks::end(
        session,
        &setup.workspace,
        &setup.sandbox.env,
        hrns_core::hooks::EndReason::Other,
    );
    if !ran {
        return;
    }
    while let Some(action) = session.poll() {
        let hrns_core::session::Action::Emit(event) = action else {
            continue;
        };
        if json {
            let mut line = Vec::new();
            crate::exec::output::print_json(&event, &mut line);
            let line = String::from_utf8_lossy(&line);
            print!("{}", crate::host::redact::redact(&line));
        } else if let Some(text) = crate::exec::output::hook_text(&event) {
            let s = crate::term::style::Style::stderr();
            eprintln!("{}", s.harness(&crate::term::safe_text::safe(&text)));
        }
    }
}

/// What the final answer of a turn is for `exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Free text, streamed to stdout as it arrives.
    Text,
    /// JSON matching `--output-schema`: printed alone once it matched, nothing streamed.
    Structured,
}

/// How a turn ended, with what `exec` makes of it beyond the outcome.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) outcome: TurnOutcome,
    /// The answer that matched the output schema.
    output: Option<serde_json::Value>,
    /// Calls of the turn that were denied (by the policy or by the user).
    denied: usize,
    /// `--json`'s line of the final event, held back so that it is the run's last line:
    /// whatever runs after the turn (`SessionEnd` hooks) prints before it
    /// ([`Ended::write_final`]).
    final_line: Vec<u8>,
}

impl Ended {
    /// Writes the held final event's line to stdout.
    pub(crate) fn write_final(&mut self) {
        if self.final_line.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&std::mem::take(&mut self.final_line));
        let _ = out.flush();
    }
}

/// The end of an `exec` run after its turn: the structured answer on stdout, `-o`'s file, a
/// word on stderr when there is no answer, and the exit code. The answer's text is read from
/// the session's history (`messages`), where a finished turn's last message is the model's
/// answer: not copied while the turn ran, since it can be as long as the whole stream.
fn finish_run(ended: &Ended, args: &ExecArgs, messages: &[Message]) -> Result<u8, CliError> {
    let code = exit_code(&ended.outcome);
    if !matches!(ended.outcome, TurnOutcome::Finished) {
        return Ok(code);
    }
    let answer = match &ended.output {
        Some(value) => std::borrow::Cow::Owned(value.to_string()),
        None => last_answer(messages),
    };
    let answer = answer.trim_end();
    if answer.trim().is_empty() {
        let s = crate::term::style::Style::stderr();
        if ended.denied > 0 {
            eprintln!(
                "{} the turn ended without an answer after {}; allow it with --approval auto, or ask for less",
                s.error("hrns:"),
                crate::exec::output::count(ended.denied, "denied call")
            );
            return Ok(crate::exit::DENIED);
        }
        eprintln!(
            "{} the model ended the turn without an answer (no text); its tool calls ran",
            s.harness("hrns:")
        );
        return Ok(code);
    }
    if let (Some(_), false) = (&ended.output, args.json) {
        // Redacted like every other line: the model may have put a key into the JSON.
        let line = crate::host::redact::redact(answer).into_owned();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
    if let Some(path) = &args.output_last_message {
        let text = crate::host::redact::redact(answer).into_owned() + "\n";
        write_private(path, text.as_bytes()).map_err(|e| {
            CliError::failure(format!(
                "cannot write the answer to {}: {e}",
                path.display()
            ))
        })?;
    }
    Ok(code)
}

/// The text of the model's last message in `messages` (empty when there is none), borrowed
/// when it is one string.
fn last_answer(messages: &[Message]) -> std::borrow::Cow<'_, str> {
    let last = messages.iter().rev().find(|m| m.role == Role::Assistant);
    match last.and_then(|m| m.content.as_ref()) {
        Some(hrns_core::wire::Content::Text(text)) => std::borrow::Cow::Borrowed(text),
        Some(parts) => std::borrow::Cow::Owned(parts.text()),
        None => std::borrow::Cow::Borrowed(""),
    }
}

/// Refuses an `-o FILE` that cannot be written (no such directory, a directory), before
/// anything is sent.
fn check_writable(path: &std::path::Path) -> Result<(), CliError> {
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(CliError::usage(format!(
            "-o {}: the directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(CliError::usage(format!(
            "-o {}: a directory, not a file",
            path.display()
        )));
    }
    Ok(())
}

fn parent_dir(path: &std::path::Path) -> &std::path::Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        Some(_) | None => std::path::Path::new("."),
    }
}

/// Writes `bytes` to `path` whole or not at all (a temporary file beside it, renamed), with
/// mode 0600 whatever the file had before.
pub(crate) fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = tempfile::NamedTempFile::new_in(parent_dir(path))?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    // NamedTempFile is created 0600; said again, so the file never depends on it.
    std::fs::set_permissions(
        file.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Runs one turn with the printers of `exec` on `runner` (made by [`crate::host::blocking`]),
/// whose writes take `diffs`, in a workspace confined by `sandbox`; shared with `replay`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_turn(
    mut runner: Runner<'_>,
    diffs: crate::host::diff::WriteDiffs,
    sandbox: &hrns_core::sandbox::SandboxPolicy,
    session: &mut Session,
    message: Message,
    json: bool,
    policy: ApprovalPolicy,
    log: Option<&mut SessionLog>,
    learn: Option<&QuirkStore>,
    children: Option<hrns_blocking::tools::Running>,
    answer: Answer,
    pricing: Option<hrns_core::pricing::Pricing>,
) -> Ended {
    // Under ask, a confined run_command may be let out of the sandbox once (`u`).
    let can_escalate = crate::sandbox::escalate::possible(policy, sandbox);
    runner.update_tools(session);
    session
        .submit_message(message)
        .expect("exec runs one turn on an idle session");
    let mut front = ExecFront {
        printer: HumanPrinter::new(),
        json_printer: JsonPrinter::new(),
        to: crate::exec::batch::std_streams(),
        json,
        policy,
        log,
        learn,
        diffs,
        can_escalate,
        answer,
        pricing,
        ended: Ended {
            outcome: TurnOutcome::Cancelled,
            output: None,
            denied: 0,
            final_line: Vec::new(),
        },
    };
    let outcome = runner.drive_batches(session, &mut front);
    // A cancelled turn does not wait for its tools; a child ends a moment later, and its
    // final event belongs in the output and the session file (and its tokens in the usage).
    if let Some(children) = children {
        let mut waited = std::time::Duration::ZERO;
        let step = std::time::Duration::from_millis(50);
        loop {
            let idle = children.wait_idle(step);
            let late = runner.take_late(session);
            hrns_blocking::TurnFront::events(&mut front, &late);
            waited += step;
            if idle || waited >= std::time::Duration::from_secs(3) {
                break;
            }
        }
    }
    front.finish();
    Ended {
        outcome,
        ..front.ended
    }
}

/// `exec`'s front end for one turn: the printers, the session file, the subagents' events,
/// the diffs of writes, and the questions asked on the terminal.
struct ExecFront<'x> {
    printer: HumanPrinter,
    json_printer: JsonPrinter,
    /// One batch per step of the turn (one read, one tool output): printed into one buffer
    /// and written at its end, so a delta is on the screen as soon as it was read.
    to: crate::exec::batch::Batch<Box<dyn Write>, Box<dyn Write>>,
    json: bool,
    policy: ApprovalPolicy,
    log: Option<&'x mut SessionLog>,
    learn: Option<&'x QuirkStore>,
    diffs: crate::host::diff::WriteDiffs,
    can_escalate: bool,
    /// Whether answer text is streamed to stdout.
    answer: Answer,
    /// The model's prices from the config, for `turn_finished`'s `cost`.
    pricing: Option<hrns_core::pricing::Pricing>,
    /// What the turn's events told of its end (the outcome is the runner's).
    ended: Ended,
}

impl hrns_blocking::TurnFront for ExecFront<'_> {
    fn events(&mut self, events: &[Event]) {
        let to = &mut self.to;
        for event in events {
            // Most events of a stream are deltas: nothing saves them (the message carries the
            // text), learns from them or diffs them, so they go straight to the printer.
            if event.is_delta() {
                if self.json {
                    self.json_printer.print(event, None, to.out_clean());
                    continue;
                }
                match event {
                    // A structured answer is printed whole once it matched the schema.
                    Event::TextDelta { .. } | Event::RefusalDelta { .. }
                        if self.answer == Answer::Structured => {}
                    Event::TextDelta { text } | Event::RefusalDelta { text } => {
                        self.printer.print_text(text, to);
                    }
                    Event::TurnStarted { .. }
                    | Event::RequestStarted { .. }
                    | Event::ReasoningDelta { .. }
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
                    | Event::TurnFinished { .. }
                    | Event::TurnFailed { .. }
                    | Event::TurnCancelled
                    | Event::Child(_) => self.printer.print(event, to),
                }
                continue;
            }
            note(&mut self.ended, event);
            if let Some(log) = self.log.as_deref_mut() {
                if let Err(e) = log.record(event) {
                    if self.json {
                        self.json_printer.finish(to.out_clean());
                    }
                    to.finish();
                    eprintln!("hrns: warning: saving the session failed: {e}");
                }
            }
            if let Some(saved) = self.learn.and_then(|store| store.observe(event)) {
                if self.json {
                    self.json_printer.finish(to.out_clean());
                }
                to.finish();
                note_saved(saved, self.learn);
            }
            // The diff a write or edit took just before it ran, shown with its result.
            let diff = self.diffs.on_event(event);
            if self.json && event.is_final() {
                // Held for the end of the run: the final event is the last line.
                self.json_printer.finish(to.out_clean());
                let held = &mut self.ended.final_line;
                match (event, self.pricing) {
                    (
                        Event::TurnFinished {
                            usage: Some(usage), ..
                        },
                        Some(pricing),
                    ) => self
                        .json_printer
                        .print_with_cost(event, pricing.cost_of(usage), held),
                    _ => self.json_printer.print(event, diff.as_deref(), held),
                }
            } else if self.json {
                match (event, self.pricing) {
                    // The cost is known only with prices and the provider's token counts.
                    (
                        Event::TurnFinished {
                            usage: Some(usage), ..
                        },
                        Some(pricing),
                    ) => {
                        self.json_printer.print_with_cost(
                            event,
                            pricing.cost_of(usage),
                            to.out_clean(),
                        );
                    }
                    _ => self
                        .json_printer
                        .print(event, diff.as_deref(), to.out_clean()),
                }
            } else {
                self.printer.print(event, to);
                if let Some(lines) = &diff {
                    let text = crate::host::diff::to_text(lines);
                    let _ = write!(to.err(), "{}", crate::term::safe_text::safe(&text));
                }
            }
        }
        // The end of the batch: what was printed is out, but for a tail the next batch
        // could make part of a secret, which only streamed text can be followed by.
        let text_goes_on = matches!(
            events.last(),
            Some(
                Event::TextDelta { .. } | Event::RefusalDelta { .. } | Event::ReasoningDelta { .. }
            )
        );
        if text_goes_on {
            if self.json {
                self.json_printer.end_batch(to.out_clean());
            }
            // Held while the next read is already waiting (`idle` writes it when none is),
            // up to a bound: one write per few reads of a fast stream instead of one each.
            if to.pending_len() >= HELD_OUTPUT {
                to.flush();
            }
        } else {
            self.finish();
        }
    }

    /// The one approval path: the session's own calls and its subagents' (whose question
    /// says which agent asks) are asked alike.
    fn idle(&mut self) {
        self.to.flush();
    }

    fn approve(&mut self, question: &Question) -> Approval {
        if self.policy != ApprovalPolicy::Ask {
            return Approval::Unattended;
        }
        // The question is written straight to stderr: everything before it goes first.
        self.finish();
        let offer = match question {
            Question::Call(run) => {
                // The call waits for the answer, so the file is still as it was.
                if show_proposed_diff(run) {
                    // Shown with the question: the result comes without it.
                    self.diffs.shown(&run.call_id);
                }
                self.can_escalate && run.name == hrns_core::tool::builtin::RUN_COMMAND
            }
            // A subagent's writes are not diffed, and it is not offered the way out of the
            // sandbox.
            Question::Child(_) => false,
        };
        ask_on_terminal(question, offer)
    }
}

/// Keeps what the end of the run needs: the matched output, and how many calls were denied.
fn note(ended: &mut Ended, event: &Event) {
    match event {
        Event::ToolResult {
            status: ToolStatus::Denied | ToolStatus::DeniedByPolicy,
            ..
        } => ended.denied += 1,
        Event::TurnFinished { output, .. } => ended.output = output.as_deref().cloned(),
        Event::TurnStarted { .. }
        | Event::ToolResult { .. }
        | Event::Message { .. }
        | Event::RequestStarted { .. }
        | Event::TextDelta { .. }
        | Event::ReasoningDelta { .. }
        | Event::RefusalDelta { .. }
        | Event::ToolCallStreaming { .. }
        | Event::ToolCall { .. }
        | Event::ApprovalRequested { .. }
        | Event::Usage { .. }
        | Event::Retry { .. }
        | Event::OptionDropped { .. }
        | Event::ToolsChanged { .. }
        | Event::ContextCompacted { .. }
        | Event::PlanUpdated { .. }
        | Event::Checkpoint { .. }
        | Event::CheckpointFailed { .. }
        | Event::Hook { .. }
        | Event::TurnFailed { .. }
        | Event::TurnCancelled
        | Event::Child(_) => {}
    }
}

/// Most streamed output held back while more input is already waiting.
const HELD_OUTPUT: usize = 32 * 1024;

impl ExecFront<'_> {
    /// The end of the text: everything held back is written.
    fn finish(&mut self) {
        if self.json {
            self.json_printer.finish(self.to.out_clean());
        }
        self.to.finish();
    }
}

/// Tells on stderr that a learned quirk was saved, or why it was not.
fn note_saved(saved: Result<Saved, CliError>, store: Option<&QuirkStore>) {
    let s = crate::term::style::Style::stderr();
    let provider = store.map(|s| s.provider.as_str()).unwrap_or_default();
    match saved {
        Ok(Saved::Written(keys)) => eprintln!(
            "{}",
            s.harness(&format!(
                "saved for provider `{provider}`: {} (later sessions obey it)",
                keys.join(", ")
            ))
        ),
        Ok(Saved::Unchanged | Saved::NoEntry) => {}
        Err(e) => eprintln!("hrns: warning: {}", e.message),
    }
}

/// The user message for `prompt` with the files it `@`-mentions (never hrns's own files,
/// `protected`) and the `images` (`-i`) attached; says on stderr what was attached. An image
/// that cannot be attached is a usage error.
pub(crate) fn with_attachments(
    prompt: &str,
    workspace: &std::path::Path,
    protected: &hrns_core::tool::protect::ProtectedPaths,
    images: &[std::path::PathBuf],
) -> Result<Message, CliError> {
    let (message, attached) =
        crate::setup::mentions::expand_with_images(prompt, workspace, protected, images)
            .map_err(CliError::usage)?;
    let s = crate::term::style::Style::stderr();
    for a in &attached {
        eprintln!("{}", s.dim(&crate::term::safe_text::safe(&a.summary())));
    }
    Ok(message)
}

/// The exit code of a turn's outcome.
pub(crate) fn exit_code(outcome: &TurnOutcome) -> u8 {
    match outcome {
        TurnOutcome::Finished => 0,
        TurnOutcome::Failed(TurnError::StepLimit { .. }) => crate::exit::STEP_LIMIT,
        TurnOutcome::Failed(TurnError::OutputSchemaUnmet { .. }) => {
            crate::exit::OUTPUT_SCHEMA_UNMET
        }
        TurnOutcome::Failed(_) => crate::exit::FAILURE,
        TurnOutcome::Cancelled => crate::term::signals::cancelled_status(),
    }
}

fn policy_name(p: ApprovalPolicy) -> &'static str {
    match p {
        ApprovalPolicy::ReadOnly => "read-only",
        ApprovalPolicy::Ask => "ask",
        ApprovalPolicy::Auto => "auto",
    }
}

/// The largest prompt read from stdin; a bigger one is refused rather than cut.
const MAX_PROMPT_BYTES: u64 = 16 * 1024 * 1024;

/// The prompt from the argument, or stdin when it is absent or `-`.
fn read_prompt(arg: Option<&str>) -> Result<String, CliError> {
    let text = match arg {
        Some(p) if p != "-" => p.to_owned(),
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                return Err(CliError::usage(
                    "give a prompt: `hrns exec \"…\"`, or pipe one in: `echo … | hrns exec`",
                ));
            }
            hint_when_stdin_waits(&stdin);
            let mut text = String::new();
            stdin
                .lock()
                .take(MAX_PROMPT_BYTES + 1)
                .read_to_string(&mut text)
                .map_err(|e| CliError::usage(format!("cannot read the prompt from stdin: {e}")))?;
            if text.len() as u64 > MAX_PROMPT_BYTES {
                return Err(CliError::usage(format!(
                    "the prompt on stdin is larger than {} MiB; put the material in a file and ask hrns to read it",
                    MAX_PROMPT_BYTES / (1024 * 1024)
                )));
            }
            text
        }
    };
    if text.trim().is_empty() {
        return Err(CliError::usage("the prompt is empty"));
    }
    Ok(text)
}

/// Says on a terminal's stderr that the prompt is read from stdin, when stdin is not a terminal
/// and has nothing to read yet (a pipe nobody writes to, an inherited descriptor): without
/// it, `exec` would wait in silence. A pipe that brings its prompt at once (`echo … | hrns
/// exec`) gets no hint: stdin is given a moment to become readable first.
fn hint_when_stdin_waits(stdin: &std::io::Stdin) {
    use rustix::event::{PollFd, PollFlags, Timespec};
    if !std::io::stderr().is_terminal() {
        return;
    }
    let grace = Timespec {
        tv_sec: 0,
        tv_nsec: 250_000_000,
    };
    let mut fds = [PollFd::new(stdin, PollFlags::IN)];
    // Readable, at its end, or in error: reading will not wait, so no hint.
    if let Ok(0) = rustix::event::poll(&mut fds, Some(&grace)) {
        eprintln!(
            "hrns: reading the prompt from stdin… (nothing came yet; it ends when stdin closes, or give the prompt as an argument: hrns exec \"…\")"
        );
    }
}

/// Prints on stderr the diff a write or edit waiting for approval would make, reading the
/// file as it is now; whether there was one to show.
fn show_proposed_diff(run: &ToolRun) -> bool {
    let Some(diff) = std::env::current_dir()
        .ok()
        .and_then(|cwd| crate::host::diff::proposed(&cwd, &run.name, &run.arguments))
    else {
        return false;
    };
    let mut err = std::io::stderr();
    let _ = write!(err, "{}", shown(&crate::host::diff::to_text(&diff)));
    true
}

/// Untrusted text as the questions on the terminal show it: without control sequences, then
/// without secrets (a key the model wrote into a call's arguments, or into a file it wants to
/// write). Redacted before any shortening, so a cut key is not shown in part either; and after
/// the control characters go, so a key spliced with them is recognised as it will look.
fn shown(text: &str) -> String {
    crate::host::redact::redact(&crate::term::safe_text::safe(text)).into_owned()
}

/// Asks on the terminal: `y` once, `a` always for this tool, `n` (with an optional reason),
/// and when `offer_unsandboxed`, `u`: once without the sandbox. A subagent's call names its
/// `agent`.
fn ask_on_terminal(question: &Question, offer_unsandboxed: bool) -> Approval {
    let s = crate::term::style::Style::stderr();
    let mut err = std::io::stderr();
    // A subagent's call says whose it is, as the interactive UI's question does.
    let asker = question
        .agent()
        .map(|agent| {
            let name = crate::exec::output::one_line(&shown(agent), 60);
            format!(" {}", s.harness(&format!("(agent {name})")))
        })
        .unwrap_or_default();
    // One write: stderr is unbuffered, and a `write!` of the parts would reach the terminal
    // in pieces, between which a subagent's lines on stdout could land.
    let question =
        format!(
        "{} {} {}{}\n{} ",
        s.harness("allow"),
        s.tool(&shown(&crate::exec::output::tool_label(question.name()))),
        s.args(&crate::exec::output::one_line(&shown(question.arguments()), 200)),
        asker,
        s.harness(if offer_unsandboxed {
            "[y]es / [a]lways for this tool / [u]nsandboxed, once / [n]o (optionally: n <reason>):"
        } else {
            "[y]es / [a]lways for this tool / [n]o (optionally: n <reason>):"
        })
    );
    let _ = err.write_all(question.as_bytes());
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().read_line(&mut line).unwrap_or(0) == 0 {
        let reason = Some("no answer (end of input)".into());
        return Approval::Deny { reason };
    }
    let answer = line.trim();
    match answer.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('y') => Approval::Once,
        Some('a') => Approval::AlwaysThisTool,
        Some('u') if offer_unsandboxed => Approval::OnceUnsandboxed,
        _ => {
            let reason = answer
                .trim_start_matches(['n', 'N'])
                .trim_start_matches(|c: char| c.is_alphabetic())
                .trim();
            Approval::Deny {
                reason: (!reason.is_empty()).then(|| reason.to_owned()),
            }
        }
    }
}
