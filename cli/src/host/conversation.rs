//! A conversation put together once, for every front end on the tokio driver: the client, the
//! toolbox (built-ins the agent allows, the MCP servers' tools, the sandbox escape of
//! `run_command` under `ask`, the diffs of writes), `update_plan`, subagents, and the session
//! with its secrets, over a history to continue.
//!
//! This is the tokio driver's glue over [`super::plan`], where what the conversation is made
//! of is decided for every front end (`exec` has the blocking driver's glue). The TUI and
//! `hrns acp` both build their runner and session here. Subagents' events and approval
//! questions come out of the session's poll ([`hrns_core::session::Event::Child`]): a front
//! end answers a child's question ([`hrns_core::session::Question::Child`]) on the path it
//! answers the session's own ([`hrns_tokio::Runner::handle_answer`]).

use crate::host::diff::WriteDiffs;
use crate::setup::Setup;
use crate::setup::mcp::{LiveTools, ServersTold};
use hrns_blocking::mcp::McpServers;
use hrns_core::secrets::Secrets;
use hrns_core::session::{ApprovalPolicy, Session, SessionConfig};
use hrns_core::wire::Message;
use hrns_tokio::{Client, ClientConfig, HttpClient, Runner, ToolContext, Toolbox};
use std::sync::{Arc, Mutex};

/// What lives as long as the front end's run, across rebuilds (`/model`, a resume).
#[derive(Debug)]
pub(crate) struct Shared {
    /// The MCP servers of this run, started once; their tools join every rebuilt toolbox.
    pub(crate) mcp: Arc<McpServers>,
    /// Their env and header values, redacted from the session's events and records.
    pub(crate) mcp_secrets: Secrets,
    /// What the session was last told of the MCP servers, kept across rebuilds.
    pub(crate) mcp_told: Arc<Mutex<ServersTold>>,
    /// Where the file tools move their text: the disk, or an ACP editor's buffers.
    pub(crate) files: hrns_tokio::Files,
}

/// A conversation ready to run.
pub(crate) struct Built {
    pub(crate) client: Client,
    pub(crate) session: Session,
    pub(crate) runner: Runner,
    /// The diffs the write tools take just before they run.
    pub(crate) diffs: WriteDiffs,
    /// Why `history` could not be kept (the session then starts empty).
    pub(crate) history_refused: Option<String>,
}

/// The async client for the run's provider.
pub(crate) fn client_for(setup: &Setup) -> Client {
    Client::new(
        setup.provider.to_provider(),
        &ClientConfig {
            skip_verify: setup.provider.skip_verify,
            ..ClientConfig::default()
        },
    )
}

/// The built-in tools the agent allows. `web_fetch` gets a client of its own with default
/// settings: it never inherits the provider's TLS settings (a `skipVerify` provider must not
/// switch off certificate checks for every page the model fetches).
pub(crate) fn toolbox_for(setup: &Setup) -> Toolbox {
    let http = HttpClient::new(&ClientConfig::default());
    let mut toolbox = hrns_tokio::tools::builtin_toolbox(http, setup.discovered.skills.clone());
    let offered = crate::host::plan::offered(&setup.agent, toolbox.specs());
    toolbox.retain(|name| offered.iter().any(|o| o == name));
    toolbox
}

/// Builds the runner and a session for `setup`'s provider and agent under `policy`,
/// continuing `history`; with a `checkpointer`, the session takes checkpoints of the workspace.
pub(crate) fn build(
    setup: &Setup,
    policy: ApprovalPolicy,
    shared: &Shared,
    checkpointer: Option<Arc<hrns_blocking::Checkpointer>>,
    hooks: hrns_core::hooks::SessionHooks,
    history: Vec<Message>,
) -> Built {
    let client = client_for(setup);
    let mut toolbox = toolbox_for(setup);
    let mut live_tools = LiveTools::add(
        &shared.mcp,
        &mut toolbox,
        &setup.agent,
        policy,
        &shared.mcp_told,
    );
    let diffs = WriteDiffs::new(crate::host::diff::wrap_async_writes(&mut toolbox));
    let plan = crate::host::subagents::plan_spec(setup);
    let mut config: SessionConfig =
        crate::host::plan::session_config(setup, toolbox.specs(), policy, &shared.mcp_secrets);
    // Before the subagents' tool is made: children inherit the hooks.
    config.hooks = hooks;
    if crate::host::subagents::enabled(setup) {
        let task = crate::host::subagents::tokio_task_tool(
            &setup.discovered,
            &setup.workspace,
            &setup.agent,
            &config,
            setup.stated_images(),
            &shared.mcp,
            client.clone(),
        );
        config.subagents = Some(task.subagents());
        toolbox.add(task);
        config.tools = toolbox.specs().into_iter().chain(plan).collect();
    }
    if checkpointer.is_some() {
        config.checkpoints = hrns_core::checkpoint::Checkpoints::On;
    }
    let (session, history_refused) = match Session::with_history(config.clone(), history) {
        Ok(s) => (s, None),
        Err(e) => (
            Session::new(config),
            Some(format!("the conversation could not be kept: {e}")),
        ),
    };
    let ctx = ToolContext {
        workspace: setup.workspace.clone(),
        cancel: Default::default(),
        sandbox: setup.sandbox.clone(),
        files: shared.files.clone(),
        children: Default::default(),
    };
    // A server that stops or changes its tools: the next request offers them as they are.
    let mut runner = Runner::new(client.clone(), toolbox, ctx)
        .update_tools_with(move |toolbox| live_tools.update(toolbox));
    if let Some(checkpointer) = checkpointer {
        runner = runner.checkpoints(checkpointer);
    }
    Built {
        client,
        session,
        runner,
        diffs,
        history_refused,
    }
}
