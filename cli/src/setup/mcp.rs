//! MCP servers in the CLI: which are configured (`mcpServers` in config.json and an approved
//! `./.mcp.json`), starting them for a session, and `hrns mcp list` / `hrns mcp approve`.
//!
//! A project's `.mcp.json` runs programs named by whoever wrote the repository, so it is used
//! only after the user approved that file with that exact content (`hrns mcp approve`); a
//! changed file needs approving again. Approvals live in the state directory
//! (`mcp-approved.json`, 0600, see [`approvals`]), keyed by the file's absolute path.

mod live;

pub(crate) use live::{LiveTools, ServersTold};

use crate::args::{Global, McpCommand};
use crate::setup::approvals;
use crate::setup::paths;
use crate::setup::{CliError, ConfigFile};
use crate::term::safe_text::safe;
use hrns_blocking::mcp::{McpServer, McpServers, ServerStatus, StartOptions};
use hrns_core::file_refusal::MCP_CONFIG_CAP;
use hrns_core::mcp::config::{ServerConfig, Transport, parse_servers};
use hrns_core::sandbox::SandboxMode;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The project file name.
const PROJECT_FILE: &str = ".mcp.json";

/// Where the project file stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProjectApproval {
    /// Approved with this content: its servers are used.
    Approved,
    /// Not approved (or changed since): its servers are not used.
    NotApproved,
}

/// The configured servers and what was wrong with the configuration.
#[derive(Debug, Default)]
pub(crate) struct Configured {
    pub(crate) servers: Vec<ServerConfig>,
    pub(crate) warnings: Vec<String>,
    /// `./.mcp.json`, when there is one.
    pub(crate) project: Option<(PathBuf, ProjectApproval)>,
}

/// Reads `mcpServers` from the config file and from an approved `workspace/.mcp.json`. A
/// project entry replaces a user entry of the same name. Warnings name the file they are
/// about (the `--config` file when one is given).
pub(crate) fn configured(file: &ConfigFile, workspace: &Path) -> Configured {
    let mut found = Configured::default();
    let mut by_name: BTreeMap<String, ServerConfig> = BTreeMap::new();
    if let Some(value) = file.config.extra.get("mcpServers") {
        let (servers, errors) = parse_servers(value);
        found.warnings.extend(
            errors
                .iter()
                .map(|e| format!("{}: {e}", file.path.display())),
        );
        by_name.extend(servers.into_iter().map(|s| (s.name.clone(), s)));
    }
    let path = workspace.join(PROJECT_FILE);
    let text = match hrns_blocking::read_text(&path, MCP_CONFIG_CAP) {
        Ok(text) => Some(text),
        Err(e) if e.is_missing() => None,
        Err(e) => {
            found
                .warnings
                .push(format!("{}; its MCP servers are not started", e.skipped()));
            None
        }
    };
    if let Some(text) = text {
        let approval = if approvals::MCP.approves(&path, &text) {
            ProjectApproval::Approved
        } else {
            ProjectApproval::NotApproved
        };
        if approval == ProjectApproval::Approved {
            match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(value) => {
                    let servers = value.get("mcpServers").cloned().unwrap_or_default();
                    let (mut servers, errors) = parse_servers(&servers);
                    found
                        .warnings
                        .extend(errors.iter().map(|e| format!("{}: {e}", path.display())));
                    for server in &mut servers {
                        if let Some(why) = project_may_not_loosen(server) {
                            found.warnings.push(format!("{}: {why}", path.display()));
                        }
                    }
                    by_name.extend(servers.into_iter().map(|s| (s.name.clone(), s)));
                }
                Err(e) => found
                    .warnings
                    .push(format!("{}: not valid JSON: {e}", path.display())),
            }
        } else {
            found.warnings.push(format!(
                "{} is not approved, so its MCP servers are not started; review it and run `hrns mcp approve`",
                path.display()
            ));
        }
        found.project = Some((path, approval));
    }
    found.servers = by_name.into_values().collect();
    // Env and header values are secrets: never printed, logged or saved from here on.
    crate::host::redact::remember(&secrets(&found));
    found
}

/// A repository cannot loosen its own sandbox: a `"sandbox"` in `.mcp.json` other than
/// `read-only` is dropped (the server runs under the session's policy), with the warning
/// returned. The user's config.json may name any policy.
fn project_may_not_loosen(server: &mut ServerConfig) -> Option<String> {
    let mode = server.sandbox?;
    if mode == SandboxMode::ReadOnly {
        return None;
    }
    server.sandbox = None;
    Some(format!(
        "MCP server {}: \"sandbox\": \"{mode}\" is honoured only in your config.json (a \
         project file cannot loosen its own sandbox); it runs under the session's sandbox",
        server.name
    ))
}

/// The secrets of every configured server, for the session's redaction.
pub(crate) fn secrets(found: &Configured) -> hrns_core::secrets::Secrets {
    let mut all = hrns_core::secrets::Secrets::new();
    for server in &found.servers {
        all.extend(&server.secret_set());
    }
    all
}

/// The directory of the servers' logs.
fn log_dir() -> PathBuf {
    paths::state_dir()
        .map(|d| d.join("mcp-logs"))
        .unwrap_or_else(|_| std::env::temp_dir().join("hrns-mcp-logs"))
}

/// Whether the servers' logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Logs {
    /// In the state directory's `mcp-logs` (owner-only).
    Kept,
    /// Nowhere (`hrns exec --ephemeral` leaves nothing behind): a server's stderr is dropped.
    Discarded,
}

/// Starts the enabled servers for a session (concurrently, with a deadline). Returns them
/// with one line per server that failed (its name and why) or whose tools were cut to its
/// `maxTools` or `maxToolBytes`, for the caller to report once.
/// Stdio servers run under `sandbox`, as commands do.
pub(crate) fn start(
    found: &Configured,
    workspace: &Path,
    sandbox: &hrns_blocking::Sandbox,
    logs: Logs,
) -> (McpServers, Vec<String>) {
    let dir = match logs {
        Logs::Kept => Some(log_dir()),
        Logs::Discarded => None,
    };
    if let Some(dir) = &dir {
        if found.servers.iter().any(|s| !s.disabled) {
            let _ = paths::private_dir(dir);
        }
    }
    let mut options = StartOptions::new(workspace, PathBuf::new());
    options.log_dir = dir.clone();
    options.sandbox = sandbox.clone();
    let servers = McpServers::start(&found.servers, &options);
    let failures = servers
        .servers()
        .iter()
        .filter_map(|server| match server.status() {
            ServerStatus::Failed(why) => Some(match &dir {
                Some(dir) => format!(
                    "MCP server {} failed: {why} (its tools are left out; log: {})",
                    server.name(),
                    hrns_blocking::mcp::log_path(dir, server.name()).display()
                ),
                None => format!(
                    "MCP server {} failed: {why} (its tools are left out; no log is kept)",
                    server.name()
                ),
            }),
            ServerStatus::Ready => server.tools_warning(),
            ServerStatus::Disabled => None,
        })
        .collect();
    (servers, failures)
}

/// One line per server: name, status, transport, reason, then its tools indented.
pub(crate) fn status_lines(servers: &McpServers) -> Vec<String> {
    let mut lines = Vec::new();
    for server in servers.servers() {
        let (word, reason) = status_of(server);
        let tools = server.tools();
        let mut line = format!("{}  {word}  {}", server.name(), transport_of(server));
        if word == "ready" {
            line.push_str(&format!(
                "  {}",
                crate::exec::output::count(tools.len(), "tool")
            ));
        }
        if let Some(why) = reason {
            line.push_str(&format!("  {why}"));
        }
        lines.push(line);
        lines.extend(tools.iter().map(|t| format!("    {}", t.name)));
    }
    // Names and reasons come from the servers: no control sequences on the terminal. URLs
    // may carry secrets (a password, a key in the query), as may reasons.
    lines
        .into_iter()
        // Control sequences go first: a key split by them would be joined once they go.
        .map(|l| crate::host::redact::redact(&safe(&l)).into_owned())
        .collect()
}

fn status_of(server: &McpServer) -> (&'static str, Option<String>) {
    match server.status() {
        ServerStatus::Disabled => ("disabled", None),
        ServerStatus::Ready => ("ready", None),
        ServerStatus::Failed(why) => ("failed", Some(why)),
    }
}

fn transport_of(server: &McpServer) -> String {
    match &server.config().transport {
        Transport::Stdio { command, .. } => format!("stdio {command}"),
        Transport::Http { url, .. } => {
            format!("http {}", hrns_core::url_secrets::hide_url_secrets(url))
        }
    }
}

/// `hrns mcp …`.
pub(crate) fn command(global: &Global, command: &McpCommand) -> Result<u8, CliError> {
    let workspace = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| CliError::usage(format!("cannot use the current directory: {e}")))?;
    match command {
        McpCommand::List { json, .. } => {
            let file = ConfigFile::load(global.config.as_deref())?;
            list(&file, &workspace, *json)
        }
        McpCommand::Approve => approve(&workspace),
    }
}

fn approve(workspace: &Path) -> Result<u8, CliError> {
    let path = workspace.join(PROJECT_FILE);
    let text = hrns_blocking::read_text(&path, MCP_CONFIG_CAP)
        .map_err(|e| CliError::usage(format!("cannot read {e}")))?;
    let value = serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| CliError::usage(format!("{} is not valid JSON: {e}", path.display())))?;
    // What is approved, said before it is: the servers and what each one runs or reaches.
    for line in approval_lines(&path, &value) {
        println!("{line}");
    }
    approvals::MCP.save(&path, &text)?;
    println!(
        "approved {} (approve again after it changes)",
        path.display()
    );
    Ok(0)
}

/// What `hrns mcp approve` approves in the project file at `path` holding `value`: each server
/// with the command line it runs (or the URL it reaches), the names of the variables and
/// headers it sets (never their values), its working directory and sandbox, and the entries
/// that are not valid. Redacted and stripped of control sequences.
fn approval_lines(path: &Path, value: &serde_json::Value) -> Vec<String> {
    let servers = value.get("mcpServers").cloned().unwrap_or_default();
    let (servers, errors) = parse_servers(&servers);
    for server in &servers {
        crate::host::redact::remember(&server.secret_set());
    }
    let mut lines = vec![match servers.len() {
        0 => format!("{} names no MCP servers", path.display()),
        n => format!(
            "{} starts {}:",
            path.display(),
            crate::exec::output::count(n, "MCP server")
        ),
    }];
    for server in &servers {
        let names = |map: &BTreeMap<String, String>| {
            map.keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut line = match &server.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut line = format!(
                    "  {}: runs {}",
                    server.name,
                    shell_words::join(std::iter::once(command).chain(args))
                );
                if !env.is_empty() {
                    line.push_str(&format!(" (sets {})", names(env)));
                }
                if let Some(cwd) = cwd {
                    line.push_str(&format!(" in {cwd}"));
                }
                line
            }
            Transport::Http { url, headers } => {
                let mut line = format!(
                    "  {}: connects to {}",
                    server.name,
                    hrns_core::url_secrets::hide_url_secrets(url)
                );
                if !headers.is_empty() {
                    line.push_str(&format!(" (headers {})", names(headers)));
                }
                line
            }
        };
        match server.sandbox {
            Some(SandboxMode::ReadOnly) => line.push_str(", sandbox read-only"),
            Some(mode) => line.push_str(&format!(
                ", sandbox {mode} ignored (a project file cannot loosen its sandbox)"
            )),
            None => {}
        }
        if server.disabled {
            line.push_str(", disabled");
        }
        lines.push(line);
    }
    lines.extend(
        errors
            .iter()
            .map(|e| format!("  not valid, so never started: {e}")),
    );
    lines
        .into_iter()
        .map(|l| crate::host::redact::redact(&safe(&l)).into_owned())
        .collect()
}

fn list(file: &ConfigFile, workspace: &Path, json: bool) -> Result<u8, CliError> {
    let config = &file.config;
    let found = configured(file, workspace);
    for w in &found.warnings {
        eprintln!("hrns: warning: {}", safe(w));
    }
    if found.servers.is_empty() {
        eprintln!(
            "no MCP servers configured (mcpServers in {} or an approved ./.mcp.json)",
            file.path.display()
        );
    }
    // The servers run as in a session: under the config's sandbox of commands, with its
    // environment rules (secret-looking names withheld, `envAllow` passed).
    let sandbox = crate::sandbox::for_run(None, &file.path, config, workspace, None)?;
    let (servers, _) = start(&found, workspace, &sandbox, Logs::Kept);
    let mut out = std::io::stdout().lock();
    if !json {
        for line in status_lines(&servers) {
            let _ = writeln!(out, "{}", safe(&line));
        }
        return Ok(0);
    }
    for server in servers.servers() {
        let (status, error) = status_of(server);
        let listed = server.tools();
        let tools: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
        let line = serde_json::json!({
            "name": server.name(),
            "transport": transport_of(server),
            "status": status,
            "error": error,
            "protocol_version": server.protocol_version(),
            "tools": tools,
        });
        // A failure's reason may quote a URL or a header value, as the human listing does.
        let _ = writeln!(out, "{}", crate::host::redact::redact(&line.to_string()));
    }
    Ok(0)
}
