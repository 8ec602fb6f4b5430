//! Everything a run is set up from: the config file, the provider, agents, skills, tools and the
//! system prompt. Shared by `exec`, `replay` and the TUI.

pub(crate) mod approvals;
pub(crate) mod custom_commands;
pub(crate) mod guard;
pub(crate) mod hooks;
pub(crate) mod instructions;
pub(crate) mod learned;
pub(crate) mod mcp;
pub(crate) mod mentions;
pub(crate) mod onboarding;
pub(crate) mod paths;

use crate::args::{ApprovalArg, Global};
use hrns_blocking::{SafeReadError, Toolbox, tools};
use hrns_core::agent::{self, Agent};
use hrns_core::config::{Config, ContextSettings, ResolvedProvider, Selection};
use hrns_core::file_refusal::{CONFIG_CAP, DEFINITION_CAP};
use hrns_core::instructions::{InstructionFile, InstructionSettings};
use hrns_core::prompt::{PromptContext, compose_system_prompt};
use hrns_core::session::{ApprovalPolicy, SessionConfig};
use hrns_core::skill::{self, Skill};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A failure of the command line itself, with the exit code it ends in.
#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) message: String,
    pub(crate) code: u8,
}

impl CliError {
    /// A usage or config error (exit 2).
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: crate::exit::USAGE,
        }
    }

    /// A failure of the work itself (exit 1).
    pub(crate) fn failure(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: crate::exit::FAILURE,
        }
    }
}

/// The config file as loaded.
#[derive(Debug)]
pub(crate) struct ConfigFile {
    pub(crate) path: PathBuf,
    pub(crate) config: Config,
}

impl ConfigFile {
    /// Loads the config from `--config` or the default place. A missing default file is an
    /// empty config, but a missing `--config` file is an error (a typo in the path must not
    /// silently run with no config); an unreadable or corrupt one is an error naming the file
    /// and line, and the file is left alone.
    pub(crate) fn load(explicit: Option<&Path>) -> Result<ConfigFile, CliError> {
        let path = match explicit {
            Some(p) => p.to_owned(),
            None => paths::config_file().map_err(CliError::usage)?,
        };
        match hrns_blocking::read_text(&path, CONFIG_CAP) {
            Ok(text) => {
                let config = Config::parse(&text).map_err(|e| {
                    // `path:line:column:` in front, as compilers write it; the error's own
                    // text says the position too, so it is taken off once here.
                    let text = e.to_string();
                    let position = format!("line {}, column {}: ", e.line(), e.column());
                    CliError::usage(format!(
                        "{}:{}:{}: the config file is not valid: {}",
                        path.display(),
                        e.line(),
                        e.column(),
                        text.strip_prefix(&position).unwrap_or(&text)
                    ))
                })?;
                Ok(ConfigFile { path, config })
            }
            Err(SafeReadError::Missing { .. }) if explicit.is_some() => {
                Err(CliError::usage(format!(
                    "the config file {} (from --config or HRNS_CONFIG) does not exist; check the \
                     path, or leave the option out to use the default config file",
                    path.display()
                )))
            }
            Err(SafeReadError::Missing { .. }) => Ok(ConfigFile {
                path,
                config: Config::default(),
            }),
            // A config that is a FIFO, a device or huge is an error, never skipped: running
            // without the user's config (keys, providers, policies) would be a surprise.
            Err(
                e @ (SafeReadError::Refused { .. }
                | SafeReadError::NotText { .. }
                | SafeReadError::Io { .. }),
            ) => Err(CliError::usage(format!(
                "cannot read the config file {e}; replace it with a regular JSON file"
            ))),
        }
    }

    /// `message` with this file's path in front when `about_the_file` and the file exists
    /// (the defaults of a missing file are no file's fault).
    pub(crate) fn name_in(&self, message: &impl std::fmt::Display, about_the_file: bool) -> String {
        if about_the_file && self.path.exists() {
            format!("{}: {message}", self.path.display())
        } else {
            message.to_string()
        }
    }

    /// Saves the config atomically (a temporary file renamed over it) with mode 0600, keeping
    /// keys hrns does not know.
    pub(crate) fn save(&self) -> Result<(), CliError> {
        let fail = |e: &dyn std::fmt::Display| {
            CliError::failure(format!(
                "cannot save the config to {}: {e}",
                self.path.display()
            ))
        };
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| fail(&e))?;
        }
        tmp.write_all(self.config.to_json_pretty().as_bytes())
            .map_err(|e| fail(&e))?;
        tmp.write_all(b"\n").map_err(|e| fail(&e))?;
        tmp.as_file().sync_all().map_err(|e| fail(&e))?;
        tmp.persist(&self.path).map_err(|e| fail(&e.error))?;
        Ok(())
    }
}

/// Reads an environment variable the way config resolution wants it.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Agents and skills found on disk, with the problems met (reported, never fatal).
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    pub(crate) agents: Vec<Agent>,
    pub(crate) skills: Vec<Skill>,
    /// The project instruction files (`AGENTS.md`), outermost first.
    pub(crate) instructions: Vec<InstructionFile>,
    /// The custom slash commands (`.hrns/commands/*.md`).
    pub(crate) commands: Vec<hrns_core::command::CustomCommand>,
    pub(crate) warnings: Vec<String>,
}

impl Discovered {
    /// Looks for `AGENT.md` in `./.hrns/agents/*/` and `~/.hrns/agents/*/`, and `SKILL.md` in
    /// `./.agents/skills/*/` and `~/.agents/skills/*/`.
    pub(crate) fn scan(cwd: &Path, home: Option<&Path>) -> Discovered {
        let mut d = Discovered::default();
        let project_agents =
            d.read_all(&cwd.join(".hrns/agents"), "AGENT.md", agent::parse_agent_md);
        let user_agents = home
            .map(|h| d.read_all(&h.join(".hrns/agents"), "AGENT.md", agent::parse_agent_md))
            .unwrap_or_default();
        let (agents, shadowed) =
            agent::resolve_agents(agent::builtin_agents(), project_agents, user_agents);
        d.agents = agents;
        d.warnings.extend(shadowed);
        let project_skills = d.read_all(
            &cwd.join(".agents/skills"),
            "SKILL.md",
            skill::parse_skill_md,
        );
        let user_skills = home
            .map(|h| d.read_all(&h.join(".agents/skills"), "SKILL.md", skill::parse_skill_md))
            .unwrap_or_default();
        d.skills = skill::resolve_skills(project_skills, user_skills);
        let (commands, warnings) = crate::setup::custom_commands::discover(cwd, home);
        d.commands = commands;
        d.warnings.extend(warnings);
        d
    }

    /// Finds the project instruction files for `cwd` with the settings of the config `file`.
    pub(crate) fn load_instructions(&mut self, cwd: &Path, file: &ConfigFile) {
        let settings = InstructionSettings::from_config(&file.config).unwrap_or_else(|e| {
            self.warnings.push(format!("{}: {e}", file.path.display()));
            InstructionSettings::default()
        });
        let global = paths::config_dir().ok();
        let found = crate::setup::instructions::discover(cwd, global.as_deref(), &settings);
        self.instructions = found.files;
        self.warnings.extend(found.warnings);
    }

    fn read_all<T, E: std::fmt::Display>(
        &mut self,
        dir: &Path,
        file: &str,
        parse: impl Fn(&str, &str) -> Result<T, E>,
    ) -> Vec<T> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut candidates: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path().join(file))
            .collect();
        candidates.sort();
        // Read safely (no FIFO blocks, no device is endless, at most `DEFINITION_CAP`);
        // anything else named like the file is reported with its path, never silently dropped.
        let mut out = Vec::new();
        for path in candidates {
            let shown = path.display().to_string();
            match hrns_blocking::read_text(&path, DEFINITION_CAP) {
                Ok(text) => match parse(&text, &shown) {
                    Ok(v) => out.push(v),
                    Err(e) => self.warnings.push(format!("skipped {e}")),
                },
                Err(SafeReadError::Missing { .. }) => {
                    if std::fs::symlink_metadata(&path).is_ok() {
                        self.warnings
                            .push(format!("{shown}: skipped, a symbolic link to nothing"));
                    }
                }
                Err(
                    e @ (SafeReadError::Refused { .. }
                    | SafeReadError::NotText { .. }
                    | SafeReadError::Io { .. }),
                ) => self.warnings.push(e.skipped()),
            }
        }
        out
    }
}

/// Remembers every key and secret header value written in the config, whichever provider is
/// used: none of them may be printed or saved. What counts as secret is
/// [`hrns_core::secrets::definition`]'s: a dummy key or `Accept-Language` adds nothing.
pub(crate) fn remember_config_secrets(config: &hrns_core::config::Config) {
    let mut secrets = hrns_core::secrets::Secrets::new();
    for entry in config.providers.values() {
        if let Some(key) = &entry.key {
            secrets.add(key);
        }
        for (name, value) in &entry.headers {
            secrets.add_named(name, value);
        }
        for value in hrns_core::url_secrets::url_secrets(&entry.url) {
            secrets.add(&value);
        }
    }
    crate::host::redact::remember(&secrets);
}

/// The agent used when neither `--agent` nor the config names one.
pub(crate) const DEFAULT_AGENT: &str = "Builder";

/// A fully resolved run: provider, agent, skills, tools and prompt.
#[derive(Debug)]
pub(crate) struct Setup {
    /// The config file, kept for commands that change it (the TUI's `/connect`, `/provider`).
    pub(crate) file: ConfigFile,
    pub(crate) provider: ResolvedProvider,
    pub(crate) discovered: Discovered,
    pub(crate) agent: Agent,
    pub(crate) workspace: PathBuf,
    /// How commands are confined (`--sandbox`, the config, `workspace-write`).
    pub(crate) sandbox: hrns_blocking::Sandbox,
    /// The workspace is `$HOME` or `/`: what was decided about it (warned about; maybe held
    /// back to read-only until the user confirms in the TUI).
    pub(crate) workspace_check: Option<hrns_core::sandbox::WorkspaceCheck>,
    /// `--context-window`.
    pub(crate) context_window_flag: Option<u64>,
    /// The window the provider's `/models` gave for a model, once looked up.
    pub(crate) listed_window: Option<(String, u64)>,
}

impl Setup {
    /// The prices the config gives for the provider's model; `None` when it gives none (the
    /// config was checked when read, so a mistake there was reported already).
    pub(crate) fn pricing(&self) -> Option<hrns_core::pricing::Pricing> {
        hrns_core::pricing::pricing_for(
            &self.file.config,
            &self.provider.name,
            &self.provider.model,
        )
        .ok()
        .flatten()
    }

    /// Resolves the provider and agent for `global` from an already loaded config.
    ///
    /// A saved `currentProvider` or `currentAgent` that names nothing (and that this run would
    /// use) is replaced by the default, with a warning, and the config is saved.
    pub(crate) fn resolve(global: &Global, file: ConfigFile) -> Result<Setup, CliError> {
        Setup::resolve_in(global, file, None)
    }

    /// [`Setup::resolve`] for the workspace `cwd` (an editor's session directory) instead of
    /// the current directory.
    pub(crate) fn resolve_in(
        global: &Global,
        mut file: ConfigFile,
        cwd: Option<&Path>,
    ) -> Result<Setup, CliError> {
        let mut repaired = Vec::new();
        if global.provider.is_none() {
            repaired.extend(file.config.repair_current_provider());
        }
        let selection = Selection {
            provider: global.provider.as_deref(),
            model: global.model.as_deref(),
        };
        remember_config_secrets(&file.config);
        let provider = file
            .config
            .resolve(&selection, &env_var)
            .map_err(|e| CliError::usage(file.name_in(&e, e.concerns_config_file())))?;
        crate::host::redact::remember(&hrns_core::secrets::Secrets::of_provider(
            &provider.to_provider(),
        ));
        let workspace = match cwd {
            Some(cwd) => cwd.canonicalize().map_err(|e| {
                CliError::usage(format!("cannot use the directory {}: {e}", cwd.display()))
            })?,
            None => std::env::current_dir()
                .and_then(|d| d.canonicalize())
                .map_err(|e| CliError::usage(format!("cannot use the current directory: {e}")))?,
        };
        let mut discovered = Discovered::scan(&workspace, paths::home().as_deref());
        discovered.load_instructions(&workspace, &file);
        if global.agent.is_none() {
            let names: Vec<String> = discovered.agents.iter().map(|a| a.name.clone()).collect();
            repaired.extend(file.config.repair_current_agent(&names, DEFAULT_AGENT));
        }
        if !repaired.is_empty() {
            let s = crate::term::style::Style::stderr();
            for r in &repaired {
                eprintln!("{} {}", s.harness("hrns: warning:"), file.name_in(r, true));
            }
            if let Err(e) = file.save() {
                eprintln!("{} {}", s.harness("hrns: warning:"), e.message);
            }
        }
        let wanted = global
            .agent
            .clone()
            .or_else(|| file.config.current_agent.clone())
            .unwrap_or_else(|| DEFAULT_AGENT.to_owned());
        let agent = agent::find_agent(&discovered.agents, &wanted)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = discovered.agents.iter().map(|a| a.name.as_str()).collect();
                CliError::usage(format!(
                    "there is no agent `{wanted}`; pick one of: {}",
                    names.join(", ")
                ))
            })?;
        let key_env = file
            .config
            .providers
            .get(&provider.name)
            .and_then(|entry| entry.key_env.clone());
        for dir in hrns_core::sandbox::relative_project_dirs(&file.config.extra) {
            eprintln!(
                "{} {}: the projects key `{}` is not an absolute path, so it never applies; write the directory's absolute path (`~` is not expanded)",
                crate::term::style::Style::stderr().harness("hrns: warning:"),
                file.path.display(),
                crate::term::safe_text::safe(&dir)
            );
        }
        let sandbox = crate::sandbox::for_run(
            global.sandbox,
            &file.path,
            &file.config,
            &workspace,
            key_env.as_deref(),
        )?;
        file.config
            .context_settings(&provider.name, &provider.model)
            .map_err(|e| CliError::usage(format!("{}: {e}", file.path.display())))?;
        file.config
            .max_answer_bytes()
            .map_err(|e| CliError::usage(format!("{}: {e}", file.path.display())))?;
        file.config
            .retry_policy()
            .map_err(|e| CliError::usage(format!("{}: {e}", file.path.display())))?;
        file.config
            .stream_idle_timeout()
            .map_err(|e| CliError::usage(format!("{}: {e}", file.path.display())))?;
        file.config
            .checkpoint_settings()
            .map_err(|e| CliError::usage(format!("{}: {e}", file.path.display())))?;
        file.config
            .image_inputs(&provider.name, &provider.model)
            .map_err(|e| CliError::usage(format!("{}: {e}", file.path.display())))?;
        hrns_core::pricing::check(&file.config)
            .map_err(|e| CliError::usage(format!("{}: {e}", file.path.display())))?;
        let workspace_check = guard::workspace_check_of(global.sandbox, &file.config, &workspace);
        Ok(Setup {
            file,
            provider,
            discovered,
            agent,
            workspace,
            sandbox,
            workspace_check,
            context_window_flag: global.context_window,
            listed_window: None,
        })
    }

    /// The user said yes to `workspace-write` in a workspace at `$HOME` or `/` (the TUI's
    /// question): the sandbox is made again as with `--sandbox workspace-write`.
    pub(crate) fn confirm_workspace_write(&mut self) -> Result<(), CliError> {
        let key_env = self
            .file
            .config
            .providers
            .get(&self.provider.name)
            .and_then(|entry| entry.key_env.clone());
        let flag = Some(hrns_core::sandbox::SandboxMode::WorkspaceWrite);
        self.sandbox = crate::sandbox::for_run(
            flag,
            &self.file.path,
            &self.file.config,
            &self.workspace,
            key_env.as_deref(),
        )?;
        self.workspace_check = self.workspace_check.map(|check| check.confirmed());
        Ok(())
    }

    /// The tools of this run: the built-ins the agent allows (`load_skill` is among them only
    /// when there are skills).
    pub(crate) fn toolbox(&self) -> Toolbox {
        let mut toolbox = tools::builtin_toolbox(self.discovered.skills.clone());
        let offered = crate::host::plan::offered(&self.agent, toolbox.specs());
        toolbox.retain(|name| offered.iter().any(|o| o == name));
        toolbox
    }

    /// The session configuration for tools with these specs (either driver's toolbox).
    pub(crate) fn session_config_for(
        &self,
        specs: Vec<hrns_core::tool::ToolSpec>,
        approval: ApprovalPolicy,
    ) -> SessionConfig {
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let cwd = self.workspace.display().to_string();
        let today = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let prompt = compose_system_prompt(&PromptContext {
            agent: &self.agent,
            skills: &self.discovered.skills,
            cwd: &cwd,
            os: std::env::consts::OS,
            date: Some(&today[..10]),
            tools: &names,
            instructions: &self.discovered.instructions,
        });
        let mut config =
            SessionConfig::new(self.provider.to_provider(), self.provider.model.clone());
        config.system_prompt = Some(prompt);
        config.tools = specs;
        config.approval = approval;
        config.seed = std::process::id().into();
        let settings = self.context_settings();
        config.context.window = self.context_window();
        if let Some(percent) = settings.threshold_percent {
            config.context.threshold_percent = percent;
        }
        // Checked when resolved, like the context settings.
        if let Ok(Some(cap)) = self.file.config.max_answer_bytes() {
            config.max_answer_bytes = cap;
        }
        if let Ok(retry) = self.file.config.retry_policy() {
            config.retry = retry;
        }
        if let Ok(Some(idle)) = self.file.config.stream_idle_timeout() {
            config.stream_idle_timeout = Some(idle);
        }
        config.images = self.image_inputs();
        config.web_fetch = self.sandbox.fetch_policy.clone();
        config
    }

    /// Whether the current model takes images: `images` in the config (the model's, else the
    /// provider's), else what hrns knows of the model's family.
    pub(crate) fn image_inputs(&self) -> hrns_core::session::ImageInputs {
        // Checked when resolved, like the context settings.
        self.file
            .config
            .image_inputs(&self.provider.name, &self.provider.model)
            .ok()
            .flatten()
            .unwrap_or_else(|| hrns_core::session::ImageInputs::known_for(&self.provider.model))
    }

    /// What the config file states about a model of the current provider taking images
    /// (`None` when it says nothing), for subagents whose agent names another model.
    pub(crate) fn stated_images(&self) -> hrns_core::task::StatedImagesFn {
        let config = self.file.config.clone();
        let provider = self.provider.name.clone();
        // Checked when resolved for the current model; another model's bad value is ignored
        // like a changed file's, and the known families decide.
        std::sync::Arc::new(move |model| config.image_inputs(&provider, model).ok().flatten())
    }

    fn context_settings(&self) -> ContextSettings {
        // Checked when resolved; a file changed since by `/connect` falls back to defaults.
        self.file
            .config
            .context_settings(&self.provider.name, &self.provider.model)
            .unwrap_or_default()
    }

    /// The context window of the current model: `--context-window`, else the config, else
    /// what the provider's `/models` said.
    pub(crate) fn context_window(&self) -> Option<u64> {
        self.context_window_flag
            .or(self.context_settings().window)
            .or(self
                .listed_window
                .as_ref()
                .filter(|(model, _)| *model == self.provider.model)
                .map(|(_, w)| *w))
    }

    /// Whether the window is unknown, so the provider's `/models` is worth asking.
    pub(crate) fn needs_window_lookup(&self) -> bool {
        self.context_window().is_none()
    }

    /// Takes the current model's window from a `/models` answer, when it states one.
    pub(crate) fn learn_window(&mut self, models: &[hrns_core::wire::ModelInfo]) {
        if let Some(w) = hrns_core::context::window_from_models(models, &self.provider.model) {
            self.listed_window = Some((self.provider.model.clone(), w));
        }
    }

    /// Prints the problems met while discovering agents and skills.
    pub(crate) fn print_warnings(&self) {
        let s = crate::term::style::Style::stderr();
        for w in &self.discovered.warnings {
            eprintln!(
                "{} {}",
                s.harness("hrns: warning:"),
                crate::term::safe_text::safe(w)
            );
        }
    }
}

/// The approval policy from the flag, with a default.
pub(crate) fn approval(arg: Option<ApprovalArg>, default: ApprovalPolicy) -> ApprovalPolicy {
    match arg {
        Some(ApprovalArg::ReadOnly) => ApprovalPolicy::ReadOnly,
        Some(ApprovalArg::Ask) => ApprovalPolicy::Ask,
        Some(ApprovalArg::Auto) => ApprovalPolicy::Auto,
        None => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn save_keeps_unknown_keys_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/config.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"providers":{"a":{"url":"http://x/v1","key":"k","model":"m","skipVerify":false,"color":"red"}},"currentProvider":"a","theme":"dark"}"#,
        )
        .unwrap();
        let mut file = ConfigFile::load(Some(&path)).unwrap();
        file.config.set_current_agent("Planner");
        file.save().unwrap();
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(saved["theme"], "dark");
        assert_eq!(saved["providers"]["a"]["color"], "red");
        assert_eq!(saved["currentAgent"], "Planner");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn a_corrupt_config_is_an_error_with_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, "{\n  \"providers\": [\n").unwrap();
        let err = ConfigFile::load(Some(&path)).unwrap_err();
        assert_eq!(err.code, crate::exit::USAGE);
        assert!(
            err.message.contains(&format!("{}:", path.display())),
            "{}",
            err.message
        );
        let missing = ConfigFile::load(Some(&dir.path().join("none.json"))).unwrap_err();
        assert_eq!(missing.code, crate::exit::USAGE);
        assert!(missing.message.contains("none.json"), "{}", missing.message);
    }
}
