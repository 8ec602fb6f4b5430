//! A conversation put together once on the blocking driver (`hrns exec`): the client, the
//! toolbox (built-ins the agent allows, the MCP servers' tools, the diffs of writes), the
//! `task` tool, the session with its secrets, hooks and checkpoints over a history to
//! continue, and the runner.
//!
//! This is the blocking driver's glue over [`super::plan`], the twin of the tokio driver's
//! [`super::conversation::build`]: what the conversation is made of is decided there for every
//! front end, and the session it runs on is opened by [`super::opening`]. It comes in two
//! steps because `exec` adds its own settings to the session's configuration
//! ([`Prepared::config`]: `--max-steps`, `--output-schema`) before the children's
//! configuration is taken from it, and records the run (`--record`) with a transport made
//! from that configuration ([`Prepared::build`]).

use crate::host::diff::WriteDiffs;
use crate::setup::Setup;
use crate::setup::mcp::LiveTools;
use hrns_blocking::mcp::McpServers;
use hrns_blocking::tools::Running;
use hrns_blocking::{CancelFlag, Client, ClientConfig, Runner, ToolContext, Toolbox, Transport};
use hrns_core::hooks::SessionHooks;
use hrns_core::secrets::Secrets;
use hrns_core::session::{ApprovalPolicy, Session, SessionConfig, SessionError};
use hrns_core::wire::Message;
use std::sync::Arc;

/// The run's MCP servers, started once, and their secrets.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The MCP servers of this run; their tools join the toolbox and the children's.
    pub(crate) mcp: Arc<McpServers>,
    /// Their env and header values, redacted from the session's events and records.
    pub(crate) mcp_secrets: Secrets,
}

/// A conversation's parts before its session and runner are made: the front end may add its
/// own settings to [`Prepared::config`].
pub(crate) struct Prepared<'s> {
    /// The session's configuration as [`super::plan::session_config`] decides it.
    pub(crate) config: SessionConfig,
    setup: &'s Setup,
    toolbox: Toolbox,
    live_tools: LiveTools,
    client: Client,
    task: Task,
    mcp: Arc<McpServers>,
}

/// Whether the conversation gets the `task` tool (its agent allows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Task {
    Offered,
    Withheld,
}

/// A conversation ready to run one turn after another.
pub(crate) struct Built {
    pub(crate) session: Session,
    pub(crate) runner: Runner<'static>,
    /// The diffs the write tools take just before they run.
    pub(crate) diffs: WriteDiffs,
    /// The subagents running, to wait for after a cancel; `None` without the `task` tool.
    pub(crate) children: Option<Running>,
}

/// Why a conversation could not be built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildError<E> {
    /// The history to continue is not one the session can send (a damaged session file).
    #[error(transparent)]
    History(SessionError),
    /// The front end's transport could not be made (`--record`'s file).
    #[error(transparent)]
    Transport(E),
}

/// The blocking client for the run's provider.
pub(crate) fn client_for(setup: &Setup) -> Client {
    Client::new(
        setup.provider.to_provider(),
        &ClientConfig {
            skip_verify: setup.provider.skip_verify,
            ..ClientConfig::default()
        },
    )
}

/// The first step: the toolbox with the MCP servers' tools and the session's configuration
/// for `setup`'s provider and agent under `policy`, with `client` (from [`client_for`], maybe
/// used already: its connection is reused).
pub(crate) fn prepare<'s>(
    setup: &'s Setup,
    policy: ApprovalPolicy,
    shared: &Shared,
    client: Client,
) -> Prepared<'s> {
    let mut toolbox = setup.toolbox();
    let live_tools = LiveTools::add(
        &shared.mcp,
        &mut toolbox,
        &setup.agent,
        policy,
        &Default::default(),
    );
    let mut config =
        crate::host::plan::session_config(setup, toolbox.specs(), policy, &shared.mcp_secrets);
    config.subagents = crate::host::subagents::subagents(setup, &shared.mcp);
    Prepared {
        config,
        setup,
        toolbox,
        live_tools,
        client,
        task: match crate::host::subagents::enabled(setup) {
            true => Task::Offered,
            false => Task::Withheld,
        },
        mcp: Arc::clone(&shared.mcp),
    }
}

impl Prepared<'_> {
    /// The second step: the session (with `hooks`, and checkpoints when there is a
    /// `checkpointer`) continuing `history`, the transport `transport` makes of the
    /// configuration and the client (the client itself, or a recorder around it), the `task`
    /// tool on that transport, and the runner, whose tools stop when `cancel` is set.
    pub(crate) fn build<E>(
        self,
        transport: impl FnOnce(&SessionConfig, Client) -> Result<Arc<dyn Transport>, E>,
        checkpointer: Option<Arc<hrns_blocking::Checkpointer>>,
        hooks: SessionHooks,
        history: Vec<Message>,
        cancel: CancelFlag,
    ) -> Result<Built, BuildError<E>> {
        let Prepared {
            mut config,
            setup,
            mut toolbox,
            live_tools,
            client,
            task,
            mcp,
        } = self;
        // Before the session and the subagents' tool are made: children inherit them.
        config.hooks = hooks;
        if checkpointer.is_some() {
            config.checkpoints = hrns_core::checkpoint::Checkpoints::On;
        }
        let session =
            Session::with_history(config.clone(), history).map_err(BuildError::History)?;
        let transport = transport(&config, client).map_err(BuildError::Transport)?;
        let mut children = None;
        if task == Task::Offered {
            // Its children's events and approval questions come out of the session's poll.
            let task = crate::host::subagents::task_tool(
                &setup.discovered,
                &setup.workspace,
                Some(&setup.agent),
                &config,
                setup.stated_images(),
                &mcp,
                Arc::clone(&transport),
            );
            children = Some(task.running());
            toolbox.add(task);
        }
        let ctx = ToolContext {
            workspace: setup.workspace.clone(),
            cancel,
            sandbox: setup.sandbox.clone(),
            files: Default::default(),
            children: Default::default(),
        };
        let (runner, diffs) = runner(transport, toolbox, ctx, checkpointer, Some(live_tools));
        Ok(Built {
            session,
            runner,
            diffs,
            children,
        })
    }
}

/// A runner for `toolbox` in `ctx`, its writes wrapped to take their diffs: with checkpoints
/// when there is a `checkpointer`, and the MCP servers' tools brought up to date before each
/// input when there are `live_tools`. `hrns replay` makes its runner here too.
pub(crate) fn runner(
    transport: Arc<dyn Transport>,
    mut toolbox: Toolbox,
    ctx: ToolContext,
    checkpointer: Option<Arc<hrns_blocking::Checkpointer>>,
    live_tools: Option<LiveTools>,
) -> (Runner<'static>, WriteDiffs) {
    let diffs = WriteDiffs::new(crate::host::diff::wrap_writes(&mut toolbox));
    let mut runner = Runner::new(transport, &toolbox, ctx);
    if let Some(checkpointer) = checkpointer {
        runner = runner.checkpoints(checkpointer);
    }
    if let Some(mut live) = live_tools {
        // A server that stopped or changed its tools: the next request offers them as they are.
        runner = runner.update_tools_with(move |toolbox| live.update(toolbox));
    }
    (runner, diffs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn provider_config() -> serde_json::Value {
        serde_json::json!({
            "providers": {"p": {"url": "http://127.0.0.1:1/v1", "key": "sk-x", "model": "m"}},
            "currentProvider": "p",
        })
    }

    fn shared() -> Shared {
        Shared {
            mcp: Arc::new(McpServers::default()),
            mcp_secrets: Secrets::new(),
        }
    }

    fn hooks(setup: &Setup, id: &str) -> SessionHooks {
        crate::setup::hooks::for_session(
            &crate::setup::hooks::Found::default(),
            &setup.workspace,
            Some((id, std::path::Path::new("/s.jsonl"))),
            hrns_core::hooks::StartSource::Resume,
        )
    }

    #[test]
    fn a_history_the_session_refuses_is_an_error_before_the_transport_is_made() {
        let (_dir, setup) = crate::host::plan::tests::setup(&provider_config(), "Builder");
        let made = AtomicBool::new(false);
        let history = vec![Message::user("a"), Message::system("in the middle")];
        let built = prepare(&setup, ApprovalPolicy::Auto, &shared(), client_for(&setup)).build(
            |_: &SessionConfig, client: Client| {
                // `--record` would create its file here.
                made.store(true, Ordering::SeqCst);
                Ok::<_, std::convert::Infallible>(Arc::new(client) as Arc<dyn Transport>)
            },
            None,
            hooks(&setup, "s1"),
            history,
            CancelFlag::new(),
        );
        assert!(matches!(built, Err(BuildError::History(_))));
        assert!(
            !made.load(Ordering::SeqCst),
            "no transport for a refused history"
        );
    }

    #[test]
    fn the_session_gets_the_hooks_the_front_ends_settings_and_the_task_tool() {
        let (_dir, setup) = crate::host::plan::tests::setup(&provider_config(), "Builder");
        let mut prepared = prepare(&setup, ApprovalPolicy::Auto, &shared(), client_for(&setup));
        prepared.config.max_steps = 3;
        let seen = std::sync::Mutex::new(None);
        let built = prepared
            .build(
                |config: &SessionConfig, client: Client| {
                    // The transport sees the configuration the session has.
                    *seen.lock().unwrap() = Some(config.clone());
                    Ok::<_, std::convert::Infallible>(Arc::new(client) as Arc<dyn Transport>)
                },
                None,
                hooks(&setup, "s1"),
                vec![Message::user("a"), Message::assistant("b")],
                CancelFlag::new(),
            )
            .unwrap();
        let config = built.session.config();
        assert_eq!(config.max_steps, 3);
        assert_eq!(config.hooks.context.session_id, "s1");
        assert_eq!(built.session.messages().len(), 2);
        // No checkpointer: the session takes none.
        assert_eq!(config.checkpoints, hrns_core::checkpoint::Checkpoints::Off);
        let names: Vec<&str> = config.tools.iter().map(|t| t.name.as_str()).collect();
        assert!(
            names.contains(&"task") && names.contains(&"update_plan"),
            "{names:?}"
        );
        assert!(built.children.is_some(), "Builder may use task");
        let seen = seen.lock().unwrap().take().unwrap();
        assert_eq!(seen.max_steps, 3);
        assert_eq!(seen.hooks.context.session_id, "s1");
    }
}
