//! The listing commands (`models`, `providers`, `agents`, `skills`, `sessions`) and `replay`.

pub(crate) mod checkpoints;
pub(crate) mod debug_sse;
pub(crate) mod doctor;

use crate::args::{ExportFormat, Global, ReplayArgs, SessionsCommand};
use crate::exec::{exit_code, run_turn};
use crate::host::record::Recording;
use crate::host::sessions;
use crate::setup::{CliError, ConfigFile, Discovered, approval};
use crate::term::style::Style;
use hrns_blocking::{Client, ClientConfig, ToolContext, Transport};
use hrns_core::session::{ApprovalPolicy, Session};
use std::sync::Arc;

/// `hrns models`: the current provider's models, one per line.
pub(crate) fn models(global: &Global) -> Result<u8, CliError> {
    let file = ConfigFile::load(global.config.as_deref())?;
    let setup = crate::setup::onboarding::resolve_or_onboard(global, file)?;
    let client = Client::new(
        setup.provider.to_provider(),
        &ClientConfig {
            skip_verify: setup.provider.skip_verify,
            ..ClientConfig::default()
        },
    );
    let models = client.list_models().map_err(|e| {
        CliError::failure(format!(
            "cannot list the models of `{}`: {e}",
            setup.provider.name
        ))
    })?;
    for m in models {
        let mark = if m.id == setup.provider.model {
            " *"
        } else {
            ""
        };
        println!("{}{mark}", m.id);
    }
    Ok(0)
}

/// `hrns providers`: the configured providers; `*` marks the current one.
pub(crate) fn providers(global: &Global) -> Result<u8, CliError> {
    let file = ConfigFile::load(global.config.as_deref())?;
    if file.config.providers.is_empty() {
        // The provider made from OPENAI_BASE_URL / OPENAI_API_KEY, when they are set.
        let selection = hrns_core::config::Selection::default();
        match file.config.resolve(&selection, &crate::setup::env_var) {
            Ok(p) => println!(
                "* {}\t{}\t{}\t(from {} and {})",
                p.name,
                hrns_core::url_secrets::hide_url_secrets(&p.base_url),
                p.model,
                hrns_core::config::ENV_BASE_URL,
                hrns_core::config::ENV_API_KEY
            ),
            Err(hrns_core::config::ResolveError::NotConfigured) => eprintln!(
                "no providers in {}; run `hrns` in a terminal to add one",
                file.path.display()
            ),
            Err(e) => return Err(CliError::usage(e.to_string())),
        }
        return Ok(0);
    }
    for (name, entry) in &file.config.providers {
        let current = if file.config.current_provider.as_deref() == Some(name.as_str()) {
            "*"
        } else {
            " "
        };
        let model = entry.model.as_deref().unwrap_or("-");
        // A password or a key written into the URL is not shown.
        let url = hrns_core::url_secrets::hide_url_secrets(&entry.url);
        println!("{current} {name}\t{url}\t{model}");
    }
    Ok(0)
}

/// `hrns agents`; with `verbose`, also the instruction files loaded for this directory.
pub(crate) fn agents(global: &Global, verbose: bool) -> Result<u8, CliError> {
    let file = ConfigFile::load(global.config.as_deref())?;
    let mut found = scan();
    if verbose {
        let cwd = std::env::current_dir()
            .and_then(|d| d.canonicalize())
            .unwrap_or_default();
        found.load_instructions(&cwd, &file);
    }
    let current = global
        .agent
        .clone()
        .or(file.config.current_agent.clone())
        .unwrap_or_else(|| "Builder".into());
    for a in &found.agents {
        let mark = if a.name.eq_ignore_ascii_case(&current) {
            "*"
        } else {
            " "
        };
        let source = match &a.source {
            hrns_core::agent::AgentSource::BuiltIn => "built-in".to_owned(),
            hrns_core::agent::AgentSource::File(p) => p.clone(),
        };
        println!("{mark} {}\t{}\t({source})", a.name, a.description);
    }
    if verbose {
        if found.instructions.is_empty() {
            println!("\nno project instructions (AGENTS.md) found");
        } else {
            println!("\nproject instructions, in the order the system prompt has them:");
            for f in &found.instructions {
                println!("  {}\t({} bytes)", f.path, f.text.len());
            }
        }
    }
    warn(&found);
    Ok(0)
}

/// `hrns skills`.
pub(crate) fn skills() -> Result<u8, CliError> {
    let found = scan();
    if found.skills.is_empty() {
        eprintln!("no skills found (SKILL.md in ./.agents/skills/*/ or ~/.agents/skills/*/)");
    }
    for s in &found.skills {
        println!("{}\t{}\t({})", s.name, s.description, s.path);
    }
    warn(&found);
    Ok(0)
}

fn scan() -> Discovered {
    let cwd = std::env::current_dir().unwrap_or_default();
    Discovered::scan(&cwd, crate::setup::paths::home().as_deref())
}

fn warn(found: &Discovered) {
    for w in &found.warnings {
        eprintln!("hrns: warning: {w}");
    }
}

/// `hrns sessions` and `hrns sessions export`.
pub(crate) fn sessions(command: Option<&SessionsCommand>) -> Result<u8, CliError> {
    let dir = crate::setup::paths::state_dir()
        .map_err(CliError::usage)?
        .join("sessions");
    match command {
        None => {
            let files = sessions::files(&dir);
            if files.is_empty() {
                eprintln!("no saved sessions in {}", dir.display());
            }
            // The current session here: the one `hrns --continue` opens in this directory.
            let current = std::env::current_dir()
                .and_then(|d| d.canonicalize())
                .ok()
                .and_then(|cwd| sessions::latest_in(&dir, &cwd.display().to_string()));
            // Each row remembered from the last listing: only what was appended since is read.
            let mut summaries = sessions::Summaries::open(&dir);
            for path in files.iter().take(50) {
                if let Some(s) = summaries.summarize(path) {
                    let first = s
                        .first_user_message
                        .as_deref()
                        .map(|m| {
                            crate::exec::output::one_line(&crate::term::safe_text::safe(m), 60)
                        })
                        .unwrap_or_default();
                    let mark = if current.as_deref() == Some(path.as_path()) {
                        "  ← hrns --continue"
                    } else {
                        ""
                    };
                    // Every field comes from a file (the directory's name, the user's text):
                    // no control sequence of theirs reaches the terminal, piped or not.
                    let line = format!(
                        "{}  {}  {}  {}  {first}{mark}",
                        s.header.id,
                        crate::exec::output::local_time(&s.header.started),
                        s.header.cwd,
                        crate::exec::output::count(s.messages, "message"),
                    );
                    println!("{}", crate::term::safe_text::safe(&line));
                }
            }
            summaries.save();
            Ok(0)
        }
        Some(SessionsCommand::Export { id, format }) => {
            let path = sessions::find(&dir, id).map_err(CliError::usage)?;
            let loaded = sessions::load(&path).map_err(|e| CliError::usage(e.to_string()))?;
            for w in &loaded.warnings {
                eprintln!("hrns: warning: {w}");
            }
            match format {
                ExportFormat::Md => print!("{}", sessions::to_markdown(&loaded)),
                ExportFormat::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&sessions::to_json(&loaded)).unwrap_or_default()
                ),
            }
            Ok(0)
        }
    }
}

/// `hrns replay FILE`: the recorded turn again, tools run for real, differences reported.
pub(crate) fn replay(global: &Global, args: &ReplayArgs) -> Result<u8, CliError> {
    let recording = Recording::load(&args.file).map_err(|e| CliError::usage(e.to_string()))?;
    let header = recording.header.clone();
    let recorded = recording.len();
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| CliError::usage(format!("cannot use the current directory: {e}")))?;
    let discovered = Discovered::scan(&cwd, crate::setup::paths::home().as_deref());
    let mut toolbox = hrns_blocking::tools::builtin_toolbox(discovered.skills.clone());
    toolbox.retain(|name| header.tools.iter().any(|t| t == name));
    // A recording from elsewhere must not be a script that runs commands: only read-only tools
    // run unless `--approval` says otherwise, whatever the recording's own policy was.
    let policy = approval(global.approval, ApprovalPolicy::ReadOnly);
    let file = crate::setup::ConfigFile::load(global.config.as_deref())?;
    let provider = hrns_core::session::Provider::new("http://replay.invalid/v1", None);
    let mut config = hrns_core::session::SessionConfig::new(provider, header.model.clone());
    // The tools run again, and what they read may hold a key the recording has as
    // `[redacted]`: the session and everything printed redact the secrets known here.
    config.secrets = replay_secrets(global, &file, &cwd, &header.secrets);
    config.system_prompt = header.system_prompt.clone();
    // A recorded run that offered `update_plan` offers it again (the session answers it).
    let plan = header
        .tools
        .iter()
        .any(|t| t == hrns_core::plan::UPDATE_PLAN)
        .then(hrns_core::plan::update_plan_spec);
    config.tools = toolbox.specs().into_iter().chain(plan.clone()).collect();
    config.approval = policy;
    let file = crate::setup::ConfigFile::load(global.config.as_deref())?;
    let sandbox = crate::sandbox::for_run(global.sandbox, &file.path, &file.config, &cwd, None)?;
    config.web_fetch = sandbox.fetch_policy.clone();
    if args.hooks {
        let found = crate::setup::hooks::configured(&file, &cwd);
        for line in &found.warnings {
            eprintln!("hrns: warning: {}", crate::term::safe_text::safe(line));
        }
        config.hooks = crate::setup::hooks::for_session(
            &found,
            &cwd,
            None,
            hrns_core::hooks::StartSource::Startup,
        );
    }
    let replayer = Arc::new(recording.into_replayer());
    let transport: Arc<dyn Transport> = Arc::clone(&replayer) as Arc<dyn Transport>;
    // A recorded run that offered `task` replays its children through the same recording.
    if header.tools.iter().any(|t| t == hrns_core::task::TASK_TOOL) {
        let task = crate::host::subagents::task_tool(
            &discovered,
            &cwd,
            None, // a replay repeats what was recorded
            &config,
            Arc::new(|_: &str| None), // no config file in a replay: the known families decide
            &Arc::new(hrns_blocking::mcp::McpServers::default()), // a replay starts no servers
            Arc::clone(&transport),
        );
        config.subagents = Some(task.subagents());
        toolbox.add(task);
        config.tools = toolbox.specs().into_iter().chain(plan).collect();
    }
    let mut session = Session::new(config);
    let s = Style::stderr();
    eprintln!(
        "{}",
        s.harness(&format!(
            "replaying {} ({})",
            crate::term::safe_text::safe(&args.file.display().to_string()),
            crate::exec::output::count(recorded, "recorded request")
        ))
    );
    // A recording may come from anyone: its prompt is untrusted text, and one written by hand
    // (or by an older hrns) may hold a secret the replay knows.
    eprintln!(
        "{} {}",
        s.harness(">"),
        crate::host::redact::redact(&crate::term::safe_text::safe(&header.prompt))
    );
    if args.json {
        let cwd = cwd.display().to_string();
        crate::exec::output::SessionStarted::new(
            None,
            "replay",
            &header.model,
            &header.agent,
            &cwd,
        )
        .print(&mut std::io::stdout().lock());
    }
    let message = crate::exec::with_attachments(&header.prompt, &cwd, &sandbox.protected, &[])?;
    let policy_of_sandbox = sandbox.policy.clone();
    let ctx = ToolContext {
        workspace: cwd,
        cancel: Default::default(),
        sandbox,
        files: Default::default(),
        children: Default::default(),
    };
    // A replay starts no servers, nor takes checkpoints: it has no session to undo from.
    let (runner, diffs) = crate::host::blocking::runner(transport, toolbox, ctx, None, None);
    let outcome = run_turn(
        runner,
        diffs,
        &policy_of_sandbox,
        &mut session,
        message,
        args.json,
        policy,
        None,
        None,
        None,
        crate::exec::Answer::Text,
        None, // a replay's costs are the recording's, not this config's
    );
    let mut ended = outcome;
    ended.write_final();
    let outcome = ended.outcome;
    let (served, differences, left) = replayer.report();
    if differences.is_empty() && left == 0 {
        eprintln!(
            "{}",
            s.ok(&format!(
                "replay: {}, all as recorded",
                crate::exec::output::count(served, "request")
            ))
        );
    } else {
        eprintln!(
            "{}",
            s.harness(&format!(
                "replay: {} served, {} unused",
                crate::exec::output::count(served, "request"),
                crate::exec::output::count(left, "recorded request")
            ))
        );
        for d in &differences {
            // Made from what the tools read again: redacted when made, and here once more.
            let d = crate::host::redact::redact(&crate::term::safe_text::safe(d)).into_owned();
            eprintln!("  {} {d}", s.error("differs:"));
        }
    }
    let code = exit_code(&outcome);
    if code == 0 && args.strict && (!differences.is_empty() || left > 0) {
        return Ok(crate::exit::FAILURE);
    }
    Ok(code)
}

/// The secrets a replay knows, remembered for everything it prints: every key and secret
/// header of the config, the provider the environment or the config selects (a key given
/// only as `OPENAI_API_KEY`), the configured MCP servers' secrets, and the recorded run's own
/// secrets, resolved again from the names its header keeps (its provider, the variables that
/// held its key: [`SecretSources`](crate::host::record::SecretSources)). A recording holds no
/// secret values itself (they were redacted when it was written), so these are what the
/// tools, run again, may read back.
fn replay_secrets(
    global: &Global,
    file: &ConfigFile,
    cwd: &std::path::Path,
    recorded: &crate::host::record::SecretSources,
) -> hrns_core::secrets::Secrets {
    crate::setup::remember_config_secrets(&file.config);
    let mut known = hrns_core::secrets::Secrets::new();
    let selection = hrns_core::config::Selection {
        provider: global.provider.as_deref(),
        model: None,
    };
    if let Ok(provider) = file.config.resolve(&selection, &crate::setup::env_var) {
        known.extend(&hrns_core::secrets::Secrets::of_provider(
            &provider.to_provider(),
        ));
    }
    known.extend(&recorded.resolve(&file.config, &crate::setup::env_var));
    known.extend(&crate::setup::mcp::secrets(&crate::setup::mcp::configured(
        file, cwd,
    )));
    crate::host::redact::remember(&known);
    crate::host::redact::with_secrets(Clone::clone)
}
