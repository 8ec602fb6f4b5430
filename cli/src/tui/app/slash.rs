//! The built-in slash commands and the provider switch and config save they share.

use super::connect::Connect;
use super::conversation::Answers;
use super::{App, Msg};
use crate::host::sessions::{self, SessionLog};
use crate::tui::commands::{self, CommandId};
use crate::tui::text::Line;
use hrns_core::agent;
use hrns_core::config::Selection;
use hrns_core::wire::Role;
use std::time::{Duration, Instant};

impl App {
    pub(super) fn command(&mut self, id: CommandId, arg: Option<String>) {
        match id {
            CommandId::Help => {
                let lines = match arg.as_deref().and_then(commands::lookup) {
                    Some(c) => vec![commands::command_help(c)],
                    None => {
                        let mut lines = commands::help_text();
                        lines.extend(commands::custom_help(&self.setup.discovered.commands));
                        lines
                    }
                };
                self.print(&lines);
            }
            CommandId::New => {
                self.end_session(hrns_core::hooks::EndReason::Clear);
                self.close_log();
                self.new_log();
                self.hook_start = hrns_core::hooks::StartSource::Clear;
                self.rebuild(Vec::new(), Answers::Forgotten);
                self.spent_before = Default::default();
                self.info("new conversation");
            }
            CommandId::Retry => {
                let history = self.history();
                let Some(pos) = history
                    .iter()
                    .rposition(|m| m.role == Role::User && !hrns_core::session::is_tool_images(m))
                else {
                    self.info("nothing to retry yet");
                    return;
                };
                let text = history[pos].text();
                self.rebuild(history[..pos].to_vec(), Answers::Kept);
                self.start_turn(text);
            }
            CommandId::Compact => {
                let Some(session) = self.session.as_mut() else {
                    return;
                };
                match session.compact(arg) {
                    Ok(()) => {
                        self.info("compacting the conversation…");
                        self.waiting_since = Some(Instant::now());
                        self.dispatch();
                    }
                    Err(hrns_core::session::SessionError::NothingToCompact) => {
                        self.info("nothing to compact yet");
                    }
                    Err(e @ hrns_core::session::SessionError::NothingWorthCompacting { .. }) => {
                        self.info(&e.to_string());
                    }
                    Err(e) => self.error(&format!("cannot compact now: {e}")),
                }
            }
            CommandId::Init => {
                self.start_turn(hrns_core::instructions::INIT_PROMPT.to_owned());
            }
            CommandId::Models => {
                let client = self.client.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result =
                        tokio::time::timeout(Duration::from_secs(20), client.list_models()).await;
                    let msg = match result {
                        Ok(Ok(models)) => Ok(models.into_iter().map(|m| m.id).collect()),
                        Ok(Err(e)) => Err(format!("cannot list the models: {e}")),
                        Err(_) => {
                            Err("the provider did not list its models within 20 s".to_owned())
                        }
                    };
                    let _ = tx.send(Msg::Models(msg));
                });
            }
            CommandId::Model => {
                let Some(model) = arg else {
                    // A numbered picker: the list, then `/model N`.
                    self.picking_model = true;
                    self.command(CommandId::Models, None);
                    return;
                };
                // `/model 2`: the second model of the last list shown.
                let model = match model.parse::<usize>() {
                    Ok(n) if n >= 1 && n <= self.models.len() && !self.models.contains(&model) => {
                        self.models[n - 1].clone()
                    }
                    _ => model,
                };
                if !self.models.is_empty() && !self.models.contains(&model) {
                    self.error(&format!(
                        "`{model}` is not in the provider's model list (/models); switching anyway"
                    ));
                }
                self.setup.provider.model = model.clone();
                let history = self.history();
                self.rebuild(history, Answers::Kept);
                let name = self.setup.provider.name.clone();
                if self.setup.file.config.set_provider_model(&name, &model) {
                    self.save_config();
                    self.info(&format!(
                        "model: {model} (saved as provider {name}'s default)"
                    ));
                } else {
                    self.info(&format!(
                        "model: {model} (for this session; set HRNS_MODEL to keep it)"
                    ));
                }
            }
            CommandId::Providers => {
                let current = self.setup.provider.name.clone();
                let lines: Vec<Line> = self
                    .setup
                    .file
                    .config
                    .providers
                    .iter()
                    .map(|(name, e)| {
                        let mark = if *name == current { "* " } else { "  " };
                        Line::plain(format!(
                            "{mark}{name}  {}  {}",
                            hrns_core::url_secrets::hide_url_secrets(&e.url),
                            e.model.as_deref().unwrap_or("-")
                        ))
                    })
                    .collect();
                let env = &self.setup.provider;
                if lines.is_empty() && env.name == hrns_core::config::ENV_PROVIDER_NAME {
                    self.print(&[Line::plain(format!(
                        "* {}  {}  {}  (from {} and {}; /connect adds one to the config)",
                        env.name,
                        hrns_core::url_secrets::hide_url_secrets(&env.base_url),
                        env.model,
                        hrns_core::config::ENV_BASE_URL,
                        hrns_core::config::ENV_API_KEY
                    ))]);
                    return;
                }
                if lines.is_empty() {
                    self.info("no providers in the config file; /connect adds one");
                }
                self.print(&lines);
            }
            CommandId::Provider => {
                let Some(name) = arg else { return };
                self.switch_provider(&name, None);
            }
            CommandId::Mcp => {
                let lines = crate::setup::mcp::status_lines(&self.shared.mcp);
                if lines.is_empty() {
                    self.info("no MCP servers configured (mcpServers in config.json or an approved ./.mcp.json)");
                }
                let lines: Vec<Line> = lines.into_iter().map(Line::plain).collect();
                self.print(&lines);
            }
            CommandId::Agents => {
                let current = self.setup.agent.name.clone();
                let lines: Vec<Line> = self
                    .setup
                    .discovered
                    .agents
                    .iter()
                    .map(|a| {
                        let mark = if a.name == current { "* " } else { "  " };
                        Line::plain(format!("{mark}{}  {}", a.name, a.description))
                    })
                    .collect();
                self.print(&lines);
            }
            CommandId::Agent => {
                let Some(name) = arg else { return };
                let Some(found) = agent::find_agent(&self.setup.discovered.agents, &name).cloned()
                else {
                    let names: Vec<String> = self
                        .setup
                        .discovered
                        .agents
                        .iter()
                        .map(|a| a.name.clone())
                        .collect();
                    self.error(&format!(
                        "no agent `{name}`; try one of: {}",
                        names.join(", ")
                    ));
                    return;
                };
                self.setup.agent = found;
                self.setup
                    .file
                    .config
                    .set_current_agent(self.setup.agent.name.clone());
                self.save_config();
                let history = self.history();
                self.rebuild(history, Answers::Kept);
                self.info(&format!("agent: {}", self.setup.agent.name));
            }
            CommandId::Connect => {
                self.connect = Some(Connect::new());
                self.info("add a provider (Esc cancels)");
            }
            CommandId::Sessions => {
                let Ok(state) = crate::setup::paths::state_dir() else {
                    return;
                };
                let lines: Vec<Line> = sessions::files(&state.join("sessions"))
                    .iter()
                    .take(20)
                    .filter_map(|p| sessions::summarize(p))
                    .map(|s| {
                        let first = s
                            .first_user_message
                            .as_deref()
                            .map(|m| {
                                crate::exec::output::one_line(&crate::term::safe_text::safe(m), 50)
                            })
                            .unwrap_or_default();
                        let current = self.log.as_ref().map(SessionLog::id);
                        let mark = if current == Some(s.header.id.as_str()) {
                            "* "
                        } else {
                            "  "
                        };
                        Line::plain(format!(
                            "{mark}{}  {}  {}  {first}",
                            s.header.id,
                            crate::exec::output::local_time(&s.header.started),
                            crate::exec::output::count(s.messages, "message")
                        ))
                    })
                    .collect();
                if lines.is_empty() {
                    self.info("no saved sessions yet");
                }
                self.print(&lines);
            }
            CommandId::Resume => {
                let Some(id) = arg else { return };
                let Ok(state) = crate::setup::paths::state_dir() else {
                    return;
                };
                let path = match sessions::find(&state.join("sessions"), &id) {
                    Ok(path) => path,
                    Err(e) => return self.error(&e),
                };
                // The UI does not wait for another hrns (only the brief grace for a process
                // of this one still holding a just-closed session): its session is left to it.
                match sessions::claim(&path, sessions::FORK_GRACE, || {}) {
                    Ok(sessions::Claim::Claimed(claimed)) => self.resume(claimed),
                    Ok(sessions::Claim::Busy) => self.error(&format!(
                        "session {} is being written by another hrns; resume it when that one ends",
                        sessions::short_id(&path)
                    )),
                    Ok(sessions::Claim::Removed) => self.error(&format!(
                        "session {} was removed by the hrns that wrote it",
                        sessions::short_id(&path)
                    )),
                    Err(e) => self.error(&format!("cannot open {}: {e}", path.display())),
                }
            }
            CommandId::Undo => self.undo(),
            CommandId::Redo => self.redo(),
            CommandId::Rewind => self.rewind(arg),
            CommandId::Status => {
                let lines = self.status_report();
                self.print(&lines);
            }
            CommandId::Quit => self.quit = true,
        }
    }

    pub(super) fn switch_provider(&mut self, name: &str, model: Option<&str>) {
        let selection = Selection {
            provider: Some(name),
            model,
        };
        match self
            .setup
            .file
            .config
            .resolve(&selection, &crate::setup::env_var)
        {
            Ok(provider) => {
                self.setup.provider = provider;
                if self
                    .setup
                    .file
                    .config
                    .set_current_provider(&self.setup.provider.name)
                    .is_ok()
                {
                    self.save_config();
                }
                let history = self.history();
                self.rebuild(history, Answers::Kept);
                self.models.clear();
                self.info(&format!(
                    "provider: {} ({})",
                    self.setup.provider.name, self.setup.provider.model
                ));
            }
            Err(e) => self.error(&e.to_string()),
        }
    }

    pub(super) fn save_config(&mut self) {
        if let Err(e) = self.setup.file.save() {
            self.error(&e.message);
        }
    }

    /// The `/status` lines.
    fn status_report(&self) -> Vec<Line> {
        let approval = match self.policy {
            hrns_core::session::ApprovalPolicy::ReadOnly => "read-only",
            hrns_core::session::ApprovalPolicy::Ask => "ask",
            hrns_core::session::ApprovalPolicy::Auto => "auto",
        };
        let policy = &self.setup.sandbox.policy;
        let sandbox = match policy.mode() {
            hrns_core::sandbox::SandboxMode::WorkspaceWrite => {
                format!("workspace-write (network {})", policy.network().as_str())
            }
            mode @ (hrns_core::sandbox::SandboxMode::ReadOnly
            | hrns_core::sandbox::SandboxMode::DangerFullAccess) => mode.as_str().to_owned(),
        };
        let report = crate::tui::status::Report {
            provider: &self.setup.provider.name,
            url: &hrns_core::url_secrets::hide_url_secrets(&self.setup.provider.base_url),
            model: &self.setup.provider.model,
            agent: &self.setup.agent.name,
            approval,
            sandbox: &sandbox,
            context: self
                .session
                .as_ref()
                .map(hrns_core::session::Session::context_usage)
                .unwrap_or(hrns_core::session::ContextUsage {
                    tokens: 0,
                    window: None,
                }),
            spent: self.spent(),
            pricing: self.pricing,
        };
        crate::tui::status::report_lines(&report, self.screen.wrap_width())
    }
}
