//! A session's MCP tools kept current: when a server stops or lists other tools, the runner's
//! toolbox gets the tools as they are now (`Runner::update_tools_with` in both drivers), and
//! the session says so once ([`hrns_core::session::Event::ToolsChanged`]), naming the server
//! and why. A server that stops is reported once even when none of its tools were offered
//! (all filtered out by the agent or the policy): the model's tools stay as they were, but
//! the user learns which server stopped and why.
//!
//! What the user was last told is kept apart from each toolbox ([`ServersTold`]), because
//! the TUI builds a new toolbox and runner on `/model`, `/connect` or a resume: a server that
//! stopped just before is then told of by the new one, not missed between the two, and told
//! once. What each toolbox holds is its own: a toolbox kept past a rebuild (a runner still
//! finishing its turn) is still brought up to date, quietly when the change was told already.

use hrns_blocking::mcp::{McpServers, McpToolHandle, ServerStatus};
use hrns_core::agent::Agent;
use hrns_core::mcp::McpTool;
use hrns_core::mcp::naming::offered;
use hrns_core::session::{ApprovalPolicy, ToolsReason};
use hrns_core::tool::{Registry, ToolObject};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

/// The MCP tools of one toolbox.
#[derive(Debug)]
pub(crate) struct LiveTools {
    servers: Arc<McpServers>,
    agent: Agent,
    policy: ApprovalPolicy,
    /// The names the MCP tools have in the toolbox.
    names: HashSet<String>,
    /// [`McpServers::generation`] when this toolbox's tools were last put in.
    generation: u64,
    /// What the servers were when the session was last told, shared with the toolboxes
    /// built before and after this one.
    told: Arc<Mutex<ServersTold>>,
}

/// What the MCP servers were when a session was last told of them. One value is shared by
/// the toolboxes a UI builds one after another, so a change is told once, by whichever
/// toolbox sees it first, and none is lost when one toolbox replaces another.
#[derive(Debug, Default)]
pub(crate) struct ServersTold {
    /// [`McpServers::generation`] when last looked at; `None` before the first toolbox.
    generation: Option<u64>,
    /// Each server as last seen, in the servers' order.
    seen: Vec<Seen>,
    /// The last reason told, for a toolbox that catches up with it later.
    last: String,
}

/// A server as last seen: whether it had failed, and the tools it had listed.
#[derive(Debug)]
struct Seen {
    failed: bool,
    tools: Vec<McpTool>,
}

impl LiveTools {
    /// Adds the tools of the ready servers that `agent` and `policy` allow ([`offered`]: a
    /// read-only agent or policy gets only the tools marked read-only) to `toolbox`, either
    /// driver's, and returns what keeps them current.
    ///
    /// `told` is what the session was last told of the servers: a fresh value for the first
    /// toolbox, the one before's for its replacement. A change since then (a server that
    /// stopped in between) is told by the first [`LiveTools::update`].
    pub(crate) fn add<T>(
        servers: &Arc<McpServers>,
        toolbox: &mut Registry<T>,
        agent: &Agent,
        policy: ApprovalPolicy,
        told: &Arc<Mutex<ServersTold>>,
    ) -> LiveTools
    where
        T: ?Sized + ToolObject,
        McpToolHandle: Into<Box<T>>,
    {
        // Read before the tools: a change while they are read is seen next time.
        let generation = servers.generation();
        let mut live = LiveTools {
            servers: Arc::clone(servers),
            agent: agent.clone(),
            policy,
            names: HashSet::new(),
            generation,
            told: Arc::clone(told),
        };
        {
            let mut told = live.told.lock().unwrap_or_else(PoisonError::into_inner);
            if told.generation.is_none() {
                told.generation = Some(generation);
                told.what_changed(servers);
            }
        }
        live.put_in(toolbox);
        live
    }

    /// Brings `toolbox` up to date when a server's tools changed since this toolbox's last
    /// look (it stopped, or listed other tools): its MCP tools are replaced by the current
    /// ones, the others stay. Returns why, for people, when it changed anything; a server
    /// that stopped is news even when the offered tools stay the same, unless another
    /// toolbox told it already (then the reason is the one told, and quiet).
    pub(crate) fn update<T>(&mut self, toolbox: &mut Registry<T>) -> Option<ToolsReason>
    where
        T: ?Sized + ToolObject,
        McpToolHandle: Into<Box<T>>,
    {
        // Read before the tools: a change while they are read is seen next time.
        let generation = self.servers.generation();
        let reason = {
            let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
            if told.generation != Some(generation) {
                told.generation = Some(generation);
                let reason = told.what_changed(&self.servers);
                told.last.clone_from(&reason.text);
                reason
            } else if self.generation != generation {
                // Told by a toolbox built since; this one catches up without telling again.
                ToolsReason::from(&told.last)
            } else {
                return None;
            }
        };
        self.generation = generation;
        toolbox.retain(|name| !self.names.contains(name));
        self.put_in(toolbox);
        Some(reason)
    }

    /// Adds the current tools, named so as not to clash with what is in the toolbox.
    fn put_in<T>(&mut self, toolbox: &mut Registry<T>)
    where
        T: ?Sized + ToolObject,
        McpToolHandle: Into<Box<T>>,
    {
        let taken: Vec<String> = toolbox.names().map(str::to_owned).collect();
        self.names.clear();
        for tool in self.servers.tools(taken.iter().map(String::as_str)) {
            let spec = hrns_blocking::Tool::spec(&tool);
            if offered(&spec, &self.agent, self.policy) {
                self.names.insert(spec.name);
                toolbox.add(tool);
            }
        }
    }
}

impl ServersTold {
    /// Notes each server as it is now; returns what changed since the last look, one clause
    /// per server: `MCP server NAME stopped (why)` or `MCP server NAME changed its tools`,
    /// as news when a server stopped.
    fn what_changed(&mut self, servers: &McpServers) -> ToolsReason {
        let servers = servers.servers();
        self.seen.resize_with(servers.len(), || Seen {
            failed: false,
            tools: Vec::new(),
        });
        let mut clauses = Vec::new();
        let mut stopped = false;
        for (server, seen) in servers.iter().zip(&mut self.seen) {
            let status = server.status();
            let tools = server.tools();
            match &status {
                ServerStatus::Failed(why) if !seen.failed => {
                    clauses.push(format!("MCP server {} stopped ({why})", server.name()));
                    stopped = true;
                }
                ServerStatus::Failed(_) | ServerStatus::Ready | ServerStatus::Disabled => {
                    if tools != seen.tools {
                        clauses.push(format!("MCP server {} changed its tools", server.name()));
                    }
                }
            }
            seen.failed = matches!(status, ServerStatus::Failed(_));
            seen.tools = tools;
        }
        if clauses.is_empty() {
            "the MCP servers' tools changed".into()
        } else if stopped {
            ToolsReason::news(clauses.join("; "))
        } else {
            clauses.join("; ").into()
        }
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
