//! What every front end shares around a conversation: how it is put together, the secrets it
//! redacts, the session log it writes, the diffs it shows, its subagents and its recordings.
//!
//! A conversation is put together in two halves, because `exec` runs on the blocking driver
//! (`hrns-blocking`) and the TUI and `hrns acp` on the tokio driver (`hrns-tokio`):
//! - [`plan`], driver-neutral: what is decided from config and flags before anything starts.
//!   The tools the agent is offered ([`plan::offered`], by name and by effect), the MCP
//!   servers and hooks configured for the workspace and their secrets ([`plan::Found`]), the
//!   session's configuration (system prompt with instructions and skills, tool specs with
//!   `task` and `update_plan`, policy, the provider's and the MCP servers' secrets:
//!   [`plan::session_config`]), and where learned quirks are saved ([`plan::quirk_store`],
//!   nowhere under `--ephemeral`).
//! - Thin glue per driver that starts what the plan names on that driver: the tokio one is
//!   [`conversation::build`] (client, toolbox, MCP tools, the diffs of writes, the `task`
//!   tool, the runner); the blocking one is `exec::run` with `Setup::toolbox` and
//!   `subagents::task_tool`. Both hand the model the same tools and instructions for the same
//!   config (`cli/tests/acp.rs` compares the first request of `exec` and `hrns acp`).
//!
//! # A new front end: what an editor server implements
//!
//! `hrns acp` (`crate::acp`) is the worked example; a third front end (another editor
//! protocol, a web socket) follows the same steps and copies nothing:
//!
//! 1. **The protocol's decisions in the core.** Framing, message sorting, the mapping of
//!    [`Event`](hrns_core::session::Event)s to the protocol's updates (redaction across deltas
//!    included) and the reading of approval answers are pure functions and state machines in
//!    `hrns-core` (for ACP, `hrns_core::acp`), tested with vectors fed whole and byte by byte
//!    and fuzzed. The match on `Event` there has no wildcard arm, so a new event fails to
//!    compile until the front end says what it shows for it.
//! 2. **The setup from config and flags.** `Setup::resolve_in` (provider, agent, skills,
//!    instructions, sandbox for a workspace), [`plan::Found::read`] (the MCP servers and
//!    hooks; the editor's own servers join `found.mcp` like config entries), then
//!    `setup::mcp::start` and [`conversation::build`]: client, toolbox, MCP tools, diffs,
//!    `update_plan`, subagents and the session ([`plan::session_config`]), over a history to
//!    continue. The front end only says where subagents' questions go
//!    ([`conversation::Subagents`]); their events come out of the session's poll as
//!    `Event::Child`.
//! 3. **The session log.** [`sessions::SessionLog::create`] or `append_to` after
//!    [`sessions::claim`] (one writer per session); `record` every event;
//!    `keep_if_answered` when it closes. The files are the same for every front end, so a
//!    session moves between them (`hrns --resume`).
//! 4. **The run loop.** Own the `Session` and the tokio `Runner`; after any input, await
//!    `Runner::complete_io` while the session is busy and hand each event to the mapping of
//!    step 1; answer `ApprovalRequested` with `Runner::handle_approval`; cancel with
//!    `Session::cancel`; learn quirks from `OptionDropped` through [`plan::quirk_store`].
//!    [`diff::WriteDiffs::on_event_whole`] gives a write's old and new text with its result.
//! 5. **The net.** Everything written goes through [`redact::redact`] last.

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
