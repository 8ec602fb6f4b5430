//! MCP servers as tools: start the configured servers, offer their tools as
//! `mcp__SERVER__TOOL`, run calls, shut the servers down.
//!
//! ```no_run
//! use hrns_blocking::mcp::{McpServers, StartOptions};
//! use hrns_blocking::Toolbox;
//! use hrns_core::mcp::config::parse_servers;
//!
//! let (configs, _errors) = parse_servers(&serde_json::json!({
//!     "time": {"command": "mcp-server-time"}
//! }));
//! let servers = McpServers::start(&configs, &StartOptions::new("/work", "/tmp/hrns-mcp-logs"));
//! let mut toolbox = Toolbox::new();
//! for tool in servers.tools(toolbox.names()) {
//!     toolbox.add(tool);
//! }
//! ```
//!
//! Servers with `command` run as child processes (stdio); servers with `url` are reached over
//! streamable HTTP, or the older HTTP+SSE transport when they refuse it (with the `http`
//! feature).

mod connection;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod legacy;
mod log;
mod stdio;

use crate::sandbox::Sandbox;
use crate::tool::{Tool, ToolContext};
use connection::{Changes, Connection};
use hrns_core::mcp::config::{ServerConfig, Transport};
use hrns_core::mcp::naming::{assign_names, tool_spec};
use hrns_core::mcp::refusal;
use hrns_core::mcp::{Client, ClientConfig, McpTool, Phase, Root, file_uri};
use hrns_core::tool::{ToolOutput, ToolSpec};
use log::ServerLog;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How servers are started.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// The workspace: the roots offered, and the working directory of servers without `cwd`.
    pub workspace: PathBuf,
    /// Where each server's stderr and hrns's notes about it go (`NAME.log`, owner-only);
    /// `None` keeps no logs (`hrns exec --ephemeral`): the stderr is read and dropped.
    pub log_dir: Option<PathBuf>,
    /// How long each server may take to become ready (all start at once), unless its
    /// `startTimeout` says otherwise.
    pub deadline: Duration,
    /// The sandbox stdio servers run under, as commands do: its policy (unless a server's
    /// `"sandbox"` names another), its launcher, and its environment rules (which of this
    /// process's variables servers never see; each server's own `env` is added after).
    pub sandbox: Sandbox,
}

impl StartOptions {
    /// Options with a 30-second start-up deadline and [`Sandbox::unconfined`] (the library's
    /// default, as for [`ToolContext`]; the `hrns` program passes its `--sandbox`).
    pub fn new(workspace: impl Into<PathBuf>, log_dir: impl Into<PathBuf>) -> Self {
        StartOptions {
            workspace: workspace.into(),
            log_dir: Some(log_dir.into()),
            deadline: Duration::from_secs(30),
            sandbox: Sandbox::unconfined(),
        }
    }
}

/// How a configured server is doing.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerStatus {
    /// `"disabled": true` in the configuration.
    Disabled,
    /// Ready; these are its tools.
    Ready,
    /// It could not be started or it failed; why.
    Failed(String),
}

/// One configured server and, when it started, its connection.
#[derive(Debug)]
pub struct McpServer {
    config: ServerConfig,
    /// How the start went; [`McpServer::status`] adds a failure since.
    status: ServerStatus,
    connection: Option<Arc<Connection>>,
    process: Mutex<Option<stdio::ChildProcess>>,
}

impl McpServer {
    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// How it is doing now (a server that died since the start reports it here).
    pub fn status(&self) -> ServerStatus {
        match (
            &self.status,
            self.connection.as_ref().and_then(|c| c.failure()),
        ) {
            (ServerStatus::Ready, Some(failure)) => {
                ServerStatus::Failed(self.config.redact(&failure.to_string()))
            }
            (status, _) => status.clone(),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Its tools as it last listed them: none once it failed (or when it never started).
    pub fn tools(&self) -> Vec<McpTool> {
        let Some(connection) = &self.connection else {
            return Vec::new();
        };
        let state = connection.lock();
        match state.client.phase() {
            Phase::Ready => state.client.tools().to_vec(),
            Phase::New | Phase::Initializing | Phase::Listing | Phase::Failed(_) => Vec::new(),
        }
    }

    /// A warning naming the server when its last listing left tools out (past its `maxTools`
    /// or `maxToolBytes`, or malformed); `None` when it left none out.
    pub fn tools_warning(&self) -> Option<String> {
        let connection = self.connection.as_ref()?;
        let left_out = *connection.lock().client.tools_left_out();
        left_out.warning(&self.config.name, &self.config.limits)
    }

    /// The protocol version agreed with it.
    pub fn protocol_version(&self) -> Option<String> {
        let connection = self.connection.as_ref()?;
        connection
            .lock()
            .client
            .protocol_version()
            .map(str::to_owned)
    }

    /// Closes the connection and stops the process (stdin closed, then the group killed).
    pub fn shut_down(&self) {
        if let Some(connection) = &self.connection {
            connection.close();
        }
        if let Some(mut process) = self
            .process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            process.shut_down(Duration::from_millis(300));
        }
    }

    fn start(config: &ServerConfig, options: &StartOptions, changes: Arc<Changes>) -> McpServer {
        let mut server = McpServer {
            config: config.clone(),
            status: ServerStatus::Disabled,
            connection: None,
            process: Mutex::new(None),
        };
        if config.disabled {
            return server;
        }
        server.status = match server.connect(options, changes) {
            Ok(()) => ServerStatus::Ready,
            Err(why) => ServerStatus::Failed(config.redact(&why)),
        };
        if matches!(server.status, ServerStatus::Failed(_)) {
            server.shut_down();
        }
        server
    }

    fn connect(&mut self, options: &StartOptions, changes: Arc<Changes>) -> Result<(), String> {
        let server_log = match &options.log_dir {
            Some(dir) => {
                log::create_dir(dir).map_err(|e| {
                    format!("cannot create the log directory {}: {e}", dir.display())
                })?;
                let log_path = log_path(dir, &self.config.name);
                ServerLog::open(&log_path, self.config.limits.max_log_bytes)?
            }
            None => ServerLog::discard(),
        };
        let mut client_config = ClientConfig::new(&self.config.name);
        client_config.limits = self.config.limits;
        client_config.roots = vec![Root {
            uri: file_uri(&options.workspace.to_string_lossy()),
            name: Some("workspace".into()),
        }];
        if let Some(timeout) = self.config.timeout {
            client_config.call_timeout = timeout;
        }
        if let Some(timeout) = self.config.start_timeout {
            client_config.request_timeout = timeout;
        }
        let start_wait = self.config.start_timeout.unwrap_or(options.deadline);
        let client = Client::new(client_config);
        let connection = match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let cwd = cwd
                    .as_ref()
                    .map_or_else(|| options.workspace.clone(), PathBuf::from);
                let sandbox = match self.config.sandbox {
                    Some(mode) => Sandbox {
                        policy: options.sandbox.policy.for_mode(mode)?,
                        ..options.sandbox.clone()
                    },
                    None => options.sandbox.clone(),
                };
                let spawned = stdio::spawn(
                    command,
                    args,
                    &sandbox,
                    env,
                    &cwd,
                    server_log.clone(),
                    self.config.secret_set(),
                )?;
                let connection = Connection::new(
                    client,
                    Box::new(stdio::StdinWriter(Some(spawned.stdin))),
                    server_log.clone(),
                    self.config.secret_set(),
                    changes,
                );
                let watcher = spawned.process.watcher();
                *self.process.lock().unwrap_or_else(|p| p.into_inner()) = Some(spawned.process);
                let reader = Arc::clone(&connection);
                let stdout = spawned.stdout;
                std::thread::Builder::new()
                    .name(format!("mcp-{}", self.config.name))
                    .spawn(move || {
                        reader.read_from(stdout, || {
                            watcher.wait_for_stderr();
                            // Give the exit status a moment to be collectable.
                            for _ in 0..20 {
                                if let Some(exit) = watcher.exit_description() {
                                    return exit;
                                }
                                std::thread::sleep(Duration::from_millis(10));
                            }
                            "the server closed its output".into()
                        })
                    })
                    .map_err(|e| format!("cannot start its reader thread: {e}"))?;
                connection
            }
            #[cfg(feature = "http")]
            Transport::Http { url, headers } => {
                let slot = http::Slot::default();
                // No answer to `initialize` is awaited past the client's request timeout, nor
                // past the start-up time.
                let limits = http::Limits {
                    initialize: client.config().request_timeout.min(start_wait),
                    call: client.config().call_timeout,
                    call_total: client.config().limits.total_timeout,
                    request: client.config().request_timeout,
                };
                let out = http::start(
                    url.clone(),
                    headers.clone(),
                    self.config.secret_set(),
                    Arc::clone(&slot),
                    limits,
                )
                .map_err(|e| format!("cannot start its HTTP thread: {e}"))?;
                let connection = Connection::new(
                    client,
                    Box::new(out),
                    server_log.clone(),
                    self.config.secret_set(),
                    changes,
                );
                let _ = slot.set(Arc::downgrade(&connection));
                connection
            }
            #[cfg(not(feature = "http"))]
            Transport::Http { .. } => {
                let _ = (client, changes, start_wait);
                return Err("HTTP servers need hrns-blocking's `http` feature".into());
            }
        };
        self.connection = Some(Arc::clone(&connection));
        match connection.start(start_wait) {
            Phase::Ready => Ok(()),
            Phase::Failed(failure) => Err(failure.to_string()),
            Phase::New | Phase::Initializing | Phase::Listing => {
                Err("it did not become ready".into())
            }
        }
    }
}

/// The configured servers of a session. Dropping it shuts them all down.
#[derive(Debug, Default)]
pub struct McpServers {
    servers: Vec<Arc<McpServer>>,
    /// Changes of any server's tools since the start (see [`McpServers::generation`]).
    changes: Arc<Changes>,
}

impl McpServers {
    /// Starts every enabled server at once and waits until each is ready or has failed, each
    /// at most `options.deadline` (or its `startTimeout`). Never fails as a whole: a server
    /// that cannot start is kept with [`ServerStatus::Failed`] and no tools.
    pub fn start(configs: &[ServerConfig], options: &StartOptions) -> McpServers {
        let changes = Arc::new(Changes::default());
        let servers = std::thread::scope(|scope| {
            let handles: Vec<_> = configs
                .iter()
                .map(|config| {
                    let changes = Arc::clone(&changes);
                    scope.spawn(move || McpServer::start(config, options, changes))
                })
                .collect();
            handles
                .into_iter()
                .zip(configs)
                .map(|(handle, config)| {
                    handle.join().unwrap_or_else(|_| McpServer {
                        config: config.clone(),
                        status: ServerStatus::Failed("its start-up panicked".into()),
                        connection: None,
                        process: Mutex::new(None),
                    })
                })
                .map(Arc::new)
                .collect()
        });
        McpServers { servers, changes }
    }

    /// The servers, in configuration order.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// A number that changes whenever a server's tools change: it listed them again (after
    /// `notifications/tools/list_changed`) or it failed (its tools are gone). Compare it with
    /// an earlier value to know whether to ask for [`McpServers::tools`] again; one atomic
    /// load, cheap enough for every input of a session.
    pub fn generation(&self) -> u64 {
        self.changes.count()
    }

    /// A handle to wait for the next change with, on a thread of its own (a front end that
    /// tells of a change while no turn runs). It does not keep the servers running.
    pub fn watch(&self) -> ChangeWatch {
        ChangeWatch(Arc::clone(&self.changes))
    }

    /// The tools of the servers that are ready now, named `mcp__SERVER__TOOL` without
    /// clashing with each other or with `taken` (the names already in the toolbox).
    pub fn tools<'a>(&self, taken: impl IntoIterator<Item = &'a str>) -> Vec<McpToolHandle> {
        let listed: Vec<(&Arc<McpServer>, Vec<McpTool>)> = self
            .servers
            .iter()
            .filter(|s| s.status == ServerStatus::Ready)
            .map(|s| (s, s.tools()))
            .collect();
        let ready: Vec<(&Arc<McpServer>, &McpTool)> = listed
            .iter()
            .flat_map(|(s, tools)| tools.iter().map(move |t| (*s, t)))
            .collect();
        let names = assign_names(
            ready.iter().map(|(s, t)| (s.name(), t.name.as_str())),
            taken,
        );
        ready
            .into_iter()
            .zip(names)
            .map(|((server, tool), name)| McpToolHandle {
                spec: tool_spec(&name, server.name(), tool),
                tool_name: tool.name.clone(),
                server: Arc::clone(server),
            })
            .collect()
    }
}

/// Waits for changes of the servers' tools; see [`McpServers::watch`].
#[derive(Debug, Clone)]
pub struct ChangeWatch(Arc<Changes>);

impl ChangeWatch {
    /// [`McpServers::generation`].
    pub fn generation(&self) -> u64 {
        self.0.count()
    }

    /// Waits until the generation is no longer `since`, at most `timeout`; returns it.
    pub fn wait_past(&self, since: u64, timeout: Duration) -> u64 {
        self.0.wait_past(since, timeout)
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        for server in &self.servers {
            server.shut_down();
        }
    }
}

/// One MCP tool in the toolbox.
#[derive(Debug, Clone)]
pub struct McpToolHandle {
    spec: ToolSpec,
    tool_name: String,
    server: Arc<McpServer>,
}

impl McpToolHandle {
    /// The server's name.
    pub fn server(&self) -> &str {
        self.server.name()
    }
}

impl Tool for McpToolHandle {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn run(&self, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        let arguments = match refusal::call_arguments(&self.spec.name, arguments) {
            Ok(arguments) => arguments,
            Err(refused) => return refused,
        };
        let Some(connection) = &self.server.connection else {
            return refusal::server_not_running(self.server.name());
        };
        let mut output = connection.call(&self.tool_name, arguments, &ctx.cancel);
        // The server may echo what it was given (its env, its headers): never to the model.
        output.content = self.server.config.redact(&output.content);
        output
    }
}

/// The path of a server's log in `log_dir`.
pub fn log_path(log_dir: &Path, server: &str) -> PathBuf {
    log_dir.join(format!("{}.log", hrns_core::mcp::naming::sanitise(server)))
}
