//! The driver-neutral half of putting a conversation together: everything decided from config
//! and flags before a driver starts anything. `exec` (blocking driver) and the TUI and
//! `hrns acp` (tokio driver, [`super::conversation`]) all take these decisions here, so the
//! model is offered the same tools and instructions whichever front end runs the turn; each
//! driver's glue only starts the client, the toolbox, the MCP servers and the runner.
//!
//! What is decided here: which built-in tools the agent is offered ([`offered`]), the MCP
//! servers and hooks configured for the workspace and the secrets in them ([`Found`]), the
//! session's configuration (system prompt with the instructions and skills, tool specs,
//! `task` and `update_plan`, policy, secrets: [`session_config`]), and where learned quirks
//! are saved ([`quirk_store`]).

use crate::setup::Setup;
use crate::setup::learned::QuirkStore;
use hrns_core::agent::Agent;
use hrns_core::secrets::Secrets;
use hrns_core::session::{ApprovalPolicy, SessionConfig};
use hrns_core::tool::ToolSpec;

/// Whether a run keeps what it learns on disk: its session file and the provider quirks it
/// learns (`exec --ephemeral` keeps nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    Session,
    Nothing,
}

/// The names of the tools among `specs` that the agent is offered: by name and by the effect
/// each tool declares, so a read-only agent gets no tool that writes or runs something,
/// whatever its name. Both drivers' toolboxes are cut down to these.
pub(crate) fn offered(agent: &Agent, specs: Vec<ToolSpec>) -> Vec<String> {
    agent
        .tools
        .filter(specs)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// The MCP servers and hooks configured for the setup's workspace, read once per run.
#[derive(Debug)]
pub(crate) struct Found {
    /// The MCP servers to start (a front end may add its own, as an editor's are).
    pub(crate) mcp: crate::setup::mcp::Configured,
    /// The hooks to run, and those skipped.
    pub(crate) hooks: crate::setup::hooks::Found,
}

impl Found {
    /// Reads the config's and the workspace's MCP servers and hooks; their secrets are
    /// remembered for redaction as they are read.
    pub(crate) fn read(setup: &Setup) -> Found {
        Found {
            mcp: crate::setup::mcp::configured(&setup.file, &setup.workspace),
            hooks: crate::setup::hooks::configured(&setup.file, &setup.workspace),
        }
    }

    /// The MCP servers' env and header values: redacted from the session's events and
    /// records.
    pub(crate) fn mcp_secrets(&self) -> Secrets {
        crate::setup::mcp::secrets(&self.mcp)
    }
}

/// The session's configuration for a toolbox offering `specs` (built-ins the agent allows and
/// MCP tools; either driver's): `task` and `update_plan` join them when the agent allows
/// them, the system prompt names what is offered, and the MCP servers' secrets join the
/// provider's.
pub(crate) fn session_config(
    setup: &Setup,
    specs: Vec<ToolSpec>,
    policy: ApprovalPolicy,
    mcp_secrets: &Secrets,
) -> SessionConfig {
    let mut config = setup.session_config_for(parent_specs(setup, specs), policy);
    config.secrets.extend(mcp_secrets);
    config
}

/// The parent's tool specs: `specs`, then `task` and `update_plan` when the agent allows them.
fn parent_specs(setup: &Setup, mut specs: Vec<ToolSpec>) -> Vec<ToolSpec> {
    if crate::host::subagents::enabled(setup) {
        specs.push(hrns_core::task::task_spec(&setup.discovered.agents));
    }
    specs.extend(crate::host::subagents::plan_spec(setup));
    specs
}

/// Where the provider quirks a run learns are saved; none when the run keeps nothing
/// (`--ephemeral` leaves the config as it was).
pub(crate) fn quirk_store(setup: &Setup, keep: Keep) -> Option<QuirkStore> {
    match keep {
        Keep::Session => Some(QuirkStore {
            path: setup.file.path.clone(),
            provider: setup.provider.name.clone(),
        }),
        Keep::Nothing => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::args::Global;
    use crate::setup::ConfigFile;
    use hrns_core::tool::Effect;

    fn spec(name: &str, effect: Effect) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
            effect,
        }
    }

    /// A setup resolved from `config` for a workspace of its own, as every front end resolves
    /// it, with `agent` chosen by flag.
    pub(crate) fn setup(config: &serde_json::Value, agent: &str) -> (tempfile::TempDir, Setup) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let global = Global {
            config: Some(path.clone()),
            agent: Some(agent.into()),
            ..Global::default()
        };
        let file = ConfigFile::load(Some(&path)).unwrap();
        let setup = Setup::resolve_in(&global, file, Some(&work)).unwrap();
        (dir, setup)
    }

    fn config_with_mcp() -> serde_json::Value {
        serde_json::json!({
            "providers": {"p": {"url": "http://127.0.0.1:1/v1", "key": "sk-provider-NEVERSHOWN-1234", "model": "m"}},
            "currentProvider": "p",
            "mcpServers": {"box": {"command": "/nonexistent/server", "env": {"BOX_TOKEN": "tok-mcp-NEVERSHOWN-5678"}}}
        })
    }

    #[test]
    fn a_read_only_agent_is_offered_no_tool_with_effects_whatever_its_name() {
        let specs = || {
            vec![
                spec("read_file", Effect::ReadOnly),
                spec("write_file", Effect::Write),
                // A tool nobody listed anywhere: kept from read-only agents by its effect.
                spec("brand_new_writer", Effect::Write),
                spec("brand_new_fetch", Effect::Network),
                spec("grep", Effect::ReadOnly),
            ]
        };
        let agents = hrns_core::agent::builtin_agents();
        let agent = |name| hrns_core::agent::find_agent(&agents, name).unwrap();
        // Reading the network (as `web_fetch` does) changes nothing here: a read-only agent
        // may; writing may not.
        for read_only in ["Explorer", "Planner", "Pirate"] {
            assert_eq!(
                offered(agent(read_only), specs()),
                ["read_file", "brand_new_fetch", "grep"],
                "{read_only}"
            );
        }
        assert_eq!(
            offered(agent("Builder"), specs()),
            [
                "read_file",
                "write_file",
                "brand_new_writer",
                "brand_new_fetch",
                "grep"
            ]
        );
    }

    #[test]
    fn the_session_redacts_the_providers_key_and_the_mcp_servers_secrets() {
        let (_dir, setup) = setup(&config_with_mcp(), "Builder");
        let found = Found::read(&setup);
        assert_eq!(found.mcp.servers.len(), 1);
        let config = session_config(
            &setup,
            setup.toolbox().specs(),
            ApprovalPolicy::Auto,
            &found.mcp_secrets(),
        );
        let text = "a sk-provider-NEVERSHOWN-1234 b tok-mcp-NEVERSHOWN-5678 c";
        // As the session redacts its events and records.
        let session = hrns_core::session::Session::new(config);
        let shown = session.secrets().redact(text);
        assert!(!shown.contains("NEVERSHOWN"), "{shown}");
        assert!(shown.starts_with("a ") && shown.ends_with(" c"), "{shown}");
    }

    #[test]
    fn task_and_update_plan_follow_the_toolbox_when_the_agent_allows_them() {
        let names = |agent: &str| {
            let (_dir, setup) = setup(&config_with_mcp(), agent);
            let specs = setup.toolbox().specs();
            let config =
                session_config(&setup, specs.clone(), ApprovalPolicy::Auto, &Secrets::new());
            let names: Vec<String> = config.tools.iter().map(|t| t.name.clone()).collect();
            // The toolbox's own tools come first, in its order.
            let own: Vec<String> = specs.into_iter().map(|s| s.name).collect();
            assert_eq!(names[..own.len()], own[..], "{agent}");
            (
                names[own.len()..].to_vec(),
                config.system_prompt.unwrap_or_default(),
            )
        };
        let (extra, prompt) = names("Builder");
        assert_eq!(extra, ["task", "update_plan"]);
        // The prompt is told of the plan tool it is offered.
        assert!(prompt.contains("update_plan"), "{prompt}");
        let (extra, _) = names("Explorer");
        assert!(
            extra.iter().all(|n| n == "task" || n == "update_plan"),
            "{extra:?}"
        );
    }

    #[test]
    fn an_ephemeral_run_saves_no_quirks() {
        let (_dir, setup) = setup(&config_with_mcp(), "Builder");
        assert!(quirk_store(&setup, Keep::Nothing).is_none());
        let store = quirk_store(&setup, Keep::Session).unwrap();
        assert_eq!(store.provider, "p");
        assert_eq!(store.path, setup.file.path);
    }
}
