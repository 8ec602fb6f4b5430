//! What every front end shares around a conversation: how it is put together, the session it
//! writes, the secrets it redacts, the diffs it shows, its subagents and its recordings.
//!
//! In `../shared/DESIGN.md`'s terms: decisions live in the sans-IO core (`hrns-core`), IO in
//! the two drivers, presentation in the front ends (`exec`'s printers, the TUI, `hrns acp`).
//! This layer sits between the drivers and the front ends. `exec` runs on the blocking driver
//! (`hrns-blocking`), the TUI and `hrns acp` on the tokio driver (`hrns-tokio`), so a
//! conversation is put together in one driver-neutral part and a thin glue per driver:
//! - [`plan`], driver-neutral: what is decided from config and flags before anything starts.
//!   The tools the agent is offered ([`plan::offered`], by name and by effect), the MCP
//!   servers and hooks configured for the workspace and their secrets ([`plan::Found`]), the
//!   session's configuration (system prompt with instructions and skills, tool specs with
//!   `task` and `update_plan`, policy, the provider's and the MCP servers' secrets:
//!   [`plan::session_config`]), and where learned quirks are saved ([`plan::quirk_store`],
//!   nowhere under `--ephemeral`).
//! - [`opening`], driver-neutral: the session a conversation writes. A new session file
//!   ([`opening::open_new`], none under `--ephemeral`) or a saved one continued
//!   ([`opening::open_saved`]), with the same header for every front end
//!   ([`opening::header`]); its checkpoints, named after the session; and what its hooks are
//!   told of it ([`opening::Saved::hooks`]). What a front end should say of the opening comes
//!   back as [`opening::Note`]s, for it to show in its own way.
//! - Thin glue per driver that starts what the plan names on that driver: the tokio one is
//!   [`conversation::build`] (client, toolbox, MCP tools, the diffs of writes, the `task`
//!   tool, the session, the runner); the blocking one is [`blocking::prepare`] and
//!   [`blocking::Prepared::build`] (the same parts; two steps, so `exec` can add
//!   `--max-steps`, `--output-schema` and `--record` in between). Both hand the model the same
//!   tools and instructions for the same config (`cli/tests/acp.rs` compares the first
//!   request of `exec` and `hrns acp`), and both open the same session file, take the same
//!   checkpoints and tell the hooks the same facts (`cli/tests/acp_hooks.rs`).
//!
//! The three walkthroughs below say what a change touches. Each step names the one place
//! for it; the compiler points at the rest (no front end matches the workspace's own enums
//! with a wildcard arm).
//!
//! # A new tool with effects
//!
//! 1. **Its spec and its decisions, in the core.** A [`ToolSpec`](hrns_core::tool::ToolSpec)
//!    with its [`Effect`](hrns_core::tool::Effect) joins
//!    [`builtin_specs`](hrns_core::tool::builtin::builtin_specs); its pure parts (decoding
//!    the arguments, the text the model reads, path confinement) live beside the other
//!    tools' in [`hrns_core::tool`].
//! 2. **Its IO, once, in the blocking driver.** A [`Tool`](hrns_blocking::Tool) on std in
//!    [`hrns_blocking::tools`], added to
//!    [`builtin_toolbox_with`](hrns_blocking::tools::builtin_toolbox_with), the one list of
//!    built-ins. The tokio driver runs it on blocking threads through the same list
//!    ([`hrns_tokio::tools::builtin_toolbox`]): nothing to write there.
//! 3. **Nothing else: its effect decides.** Read-only agents (Explorer, Planner, Pirate) are
//!    not offered it ([`plan::offered`] through the agent's
//!    [`ToolFilter`](hrns_core::agent::ToolFilter)); the approval policy asks or refuses by
//!    effect ([`ApprovalPolicy::decide`](hrns_core::session::ApprovalPolicy::decide)); the
//!    session runs it after every earlier call and before any later one, and takes
//!    checkpoints around it when it may change files
//!    ([`changes_files`](hrns_core::checkpoint::changes_files)). Both glues offer it through
//!    [`plan::session_config`], and every front end shows its
//!    [`ToolCall`](hrns_core::session::Event::ToolCall) and
//!    [`ToolResult`](hrns_core::session::Event::ToolResult) as any tool's. The
//!    `behaviour_tests!` suite runs it on both drivers.
//!
//! # A hook point before a tool runs
//!
//! `PreToolUse` is one; another point (say, after an approval) goes the same way.
//! 1. **The event and its decisions, in the core.** A variant of
//!    [`HookEvent`](hrns_core::hooks::HookEvent); which hooks are due
//!    ([`Hooks::due`](hrns_core::hooks::Hooks::due)), their input
//!    ([`hrns_core::hooks::input`]) and what their answers mean
//!    ([`hrns_core::hooks::outcome`]). The call waits for them as one more call state in
//!    the session's tool-call path (`core/src/session/calls.rs`): the session asks with
//!    [`Action::RunHooks`](hrns_core::session::Action::RunHooks) and goes on when
//!    [`Session::handle_hooks`](hrns_core::session::Session::handle_hooks) brings the
//!    results, as a call waiting on an approval or a checkpoint does.
//! 2. **The drivers only carry it out.** Each runner's [`Ledger`](hrns_core::session::Ledger)
//!    hands the wait out as [`Wait::Hooks`](hrns_core::session::Wait::Hooks), and both run
//!    the processes with [`hrns_blocking::hooks::run_hooks`]: no driver code per hook point.
//! 3. **The host and the front ends.** The hooks are read once per run
//!    ([`plan::Found`]) and told of the session by [`opening::Saved::hooks`] for every front
//!    end; what a hook did reaches each front end as
//!    [`Event::Hook`](hrns_core::session::Event::Hook), which every front end's match
//!    already handles. A point a front end runs itself, outside a turn (`SessionEnd`, the
//!    idle `Notification`), goes through [`hooks`].
//!
//! # A new front end: what an editor server implements
//!
//! `hrns acp` (`crate::acp`) is the worked example; a third front end (another editor
//! protocol, a web socket) follows the same steps and copies nothing:
//!
//! 1. **The protocol's decisions in the core.** Framing, message sorting, the mapping of
//!    [`Event`](hrns_core::session::Event)s to the protocol's updates and the reading of
//!    approval answers are pure functions and state machines in `hrns-core` (for ACP,
//!    [`hrns_core::acp`]), tested with vectors fed whole and byte by byte and fuzzed. The
//!    redaction is not the front end's: the event stream has one encoding,
//!    [`hrns_core::event_json`]. A front end that writes JSON lines (`exec --json`,
//!    `crate::exec::json_lines`) hands each event to its `JsonLines` and ends each batch; one
//!    with messages of its own feeds the deltas to its `Deltas` and builds its messages from
//!    the clean pieces that come out (ACP joins a batch's pieces into one chunk), and redacts
//!    its other messages with the same secrets. The match on `Event` there has no wildcard arm, so a new event fails
//!    to compile until the front end says what it shows for it.
//! 2. **The setup from config and flags.** [`Setup::resolve_in`](crate::setup::Setup::resolve_in)
//!    (provider, agent, skills, instructions, sandbox for a workspace), [`plan::Found::read`]
//!    (the MCP servers and hooks; the editor's own servers join `found.mcp` like config
//!    entries), then [`crate::setup::mcp::start`].
//! 3. **The session.** [`opening::open_new`], or [`opening::open_saved`] after
//!    [`sessions::claim`] (one writer per session): the log, the history, the checkpoints
//!    and the hooks' facts ([`opening::Saved`], kept for rebuilds). The files are the same
//!    for every front end, so a session moves between them (`hrns --resume`).
//! 4. **The conversation.** [`conversation::build`] on tokio (or [`blocking::prepare`] and
//!    [`blocking::Prepared::build`] on the blocking driver): client, toolbox, MCP tools,
//!    diffs, `update_plan`, subagents and the session ([`plan::session_config`]) over the
//!    opened history. Subagents' events and approval questions come out of the session's
//!    poll as [`Event::Child`](hrns_core::session::Event::Child): the front end needs
//!    nothing of its own for them. Build again, with the same
//!    [`opening::Saved`], for another agent, model or policy.
//! 5. **The run loop.** Own the `Session` and the runner; after any input, await
//!    [`Runner::complete_io`](hrns_tokio::Runner::complete_io) while the session is busy
//!    and hand each event to the mapping of step 1 and to
//!    [`SessionLog::record`](sessions::SessionLog::record); answer every question, the
//!    session's `ApprovalRequested` and a subagent's inside `Event::Child` alike
//!    ([`Question::pending_in`](hrns_core::session::Question::pending_in) finds it), with
//!    [`Runner::handle_answer`](hrns_tokio::Runner::handle_answer): one approval path, one
//!    place to show a question ([`Question::agent`](hrns_core::session::Question::agent)
//!    says whether a subagent asks); cancel with
//!    [`Session::cancel`](hrns_core::session::Session::cancel); learn quirks from
//!    `OptionDropped` through [`plan::quirk_store`]; close the log with
//!    [`SessionLog::keep_if_answered`](sessions::SessionLog::keep_if_answered) and run
//!    `SessionEnd` with [`hooks::end`]. [`diff::WriteDiffs::on_event_whole`] gives a write's
//!    old and new text with its result.
//! 6. **The net.** Everything written goes through [`redact::redact`] last.

pub(crate) mod blocking;
pub(crate) mod checkpoints;
pub(crate) mod conversation;
pub(crate) mod diff;
pub(crate) mod hooks;
pub(crate) mod opening;
pub(crate) mod plan;
pub(crate) mod record;
pub(crate) mod redact;
pub(crate) mod sessions;
pub(crate) mod subagents;
