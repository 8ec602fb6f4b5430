//! Which flags a command honours, and how the ones it was given become one [`Global`].
//!
//! Each subcommand declares only the flag groups it uses, so its `--help` lists only those. The
//! interactive UI (no subcommand) takes every group; written before a subcommand's name, its flags
//! apply to the subcommand as well (`hrns --sandbox read-only exec …`, the older spelling), but
//! only where the subcommand honours them: a flag that would be silently ignored is refused.

use crate::args::{
    AgentFlag, Cli, Command, ConfigFlag, ContextFlag, DebugCommand, Global, HooksCommand,
    McpCommand, PolicyFlags, ProviderFlags, RunFlags, SessionsCommand,
};
use std::ffi::OsString;

/// Names the provider when neither `--provider` is given.
pub(crate) const ENV_PROVIDER: &str = "HRNS_PROVIDER";
/// Names the config file when `--config` is not given.
pub(crate) const ENV_CONFIG: &str = "HRNS_CONFIG";

/// A group of flags that commands take together.
trait Group: Clone + Default {
    /// The spelling of the first flag of the group that was given, if any.
    fn given(&self) -> Option<&'static str>;
    /// This group's flags, each falling back to `under`'s.
    fn over(&self, under: &Self) -> Self;
}

impl Group for ProviderFlags {
    fn given(&self) -> Option<&'static str> {
        first([
            (self.provider.is_some(), "--provider"),
            (self.model.is_some(), "--model"),
        ])
    }
    fn over(&self, under: &Self) -> Self {
        ProviderFlags {
            provider: self.provider.clone().or_else(|| under.provider.clone()),
            model: self.model.clone().or_else(|| under.model.clone()),
        }
    }
}

impl Group for AgentFlag {
    fn given(&self) -> Option<&'static str> {
        first([(self.agent.is_some(), "--agent")])
    }
    fn over(&self, under: &Self) -> Self {
        AgentFlag {
            agent: self.agent.clone().or_else(|| under.agent.clone()),
        }
    }
}

impl Group for PolicyFlags {
    fn given(&self) -> Option<&'static str> {
        first([
            (self.approval.is_some(), "--approval"),
            (self.sandbox.is_some(), "--sandbox"),
        ])
    }
    fn over(&self, under: &Self) -> Self {
        PolicyFlags {
            approval: self.approval.or(under.approval),
            sandbox: self.sandbox.or(under.sandbox),
        }
    }
}

impl Group for ContextFlag {
    fn given(&self) -> Option<&'static str> {
        first([(self.context_window.is_some(), "--context-window")])
    }
    fn over(&self, under: &Self) -> Self {
        ContextFlag {
            context_window: self.context_window.or(under.context_window),
        }
    }
}

impl Group for ConfigFlag {
    fn given(&self) -> Option<&'static str> {
        first([(self.config.is_some(), "--config")])
    }
    fn over(&self, under: &Self) -> Self {
        ConfigFlag {
            config: self.config.clone().or_else(|| under.config.clone()),
        }
    }
}

fn first<const N: usize>(flags: [(bool, &'static str); N]) -> Option<&'static str> {
    flags.into_iter().find(|(given, _)| *given).map(|(_, f)| f)
}

/// The groups a command honours, as written after its name (`None`: not honoured).
#[derive(Default)]
struct Honoured<'a> {
    provider: Option<&'a ProviderFlags>,
    agent: Option<&'a AgentFlag>,
    policy: Option<&'a PolicyFlags>,
    context: Option<&'a ContextFlag>,
    config: Option<&'a ConfigFlag>,
}

impl<'a> Honoured<'a> {
    fn all(flags: &'a RunFlags) -> Self {
        Honoured {
            provider: Some(&flags.provider),
            agent: Some(&flags.agent),
            policy: Some(&flags.policy),
            context: Some(&flags.context),
            config: Some(&flags.config),
        }
    }
}

/// The command line's name of the command (`hrns mcp list`) and the flag groups it honours.
fn honoured<'a>(command: Option<&'a Command>, none: &'a RunFlags) -> (&'static str, Honoured<'a>) {
    let Some(command) = command else {
        return ("hrns", Honoured::all(none));
    };
    let nothing = Honoured::default();
    match command {
        Command::Exec(args) => ("hrns exec", Honoured::all(&args.flags)),
        Command::Acp(flags) => ("hrns acp", Honoured::all(flags)),
        Command::Replay(args) => (
            "hrns replay",
            Honoured {
                policy: Some(&args.policy),
                config: Some(&args.config),
                ..nothing
            },
        ),
        Command::Doctor(args) => (
            "hrns doctor",
            Honoured {
                provider: Some(&args.provider),
                config: Some(&args.config),
                ..nothing
            },
        ),
        Command::Models { provider, config } => (
            "hrns models",
            Honoured {
                provider: Some(provider),
                config: Some(config),
                ..nothing
            },
        ),
        Command::Providers { config } => (
            "hrns providers",
            Honoured {
                config: Some(config),
                ..nothing
            },
        ),
        Command::Agents { agent, config, .. } => (
            "hrns agents",
            Honoured {
                agent: Some(agent),
                config: Some(config),
                ..nothing
            },
        ),
        Command::Mcp {
            command: McpCommand::List { config, .. },
        } => (
            "hrns mcp list",
            Honoured {
                config: Some(config),
                ..nothing
            },
        ),
        Command::Mcp {
            command: McpCommand::Approve,
        } => ("hrns mcp approve", nothing),
        Command::Checkpoints(args) => (
            "hrns checkpoints",
            Honoured {
                config: Some(&args.config),
                ..nothing
            },
        ),
        Command::Undo(args) => (
            "hrns undo",
            Honoured {
                config: Some(&args.config),
                ..nothing
            },
        ),
        Command::Rewind(args) => (
            "hrns rewind",
            Honoured {
                config: Some(&args.config),
                ..nothing
            },
        ),
        Command::Hooks {
            command: HooksCommand::List { config, .. },
        } => (
            "hrns hooks list",
            Honoured {
                config: Some(config),
                ..nothing
            },
        ),
        Command::Hooks {
            command: HooksCommand::Approve,
        } => ("hrns hooks approve", nothing),
        Command::Skills => ("hrns skills", nothing),
        Command::Sessions { command: None } => ("hrns sessions", nothing),
        Command::Sessions {
            command: Some(SessionsCommand::Export { .. }),
        } => ("hrns sessions export", nothing),
        Command::Completions { .. } => ("hrns completions", nothing),
        Command::Sandbox { .. } => ("hrns sandbox", nothing),
        Command::Debug {
            command: DebugCommand::Sse { .. },
        } => ("hrns debug sse", nothing),
    }
}

/// One group: the command's own flags over those written before its name; an error naming a
/// flag written before the name of a command that does not honour it.
fn pick<G: Group>(own: Option<&G>, before: &G, command: &str) -> Result<G, String> {
    match (own, before.given()) {
        (Some(own), _) => Ok(own.over(before)),
        (None, None) => Ok(G::default()),
        (None, Some(flag)) => Err(format!(
            "{flag} does not apply to `{command}` (see `{command} --help` for its options)"
        )),
    }
}

impl Cli {
    /// The flags of the command being run, resolved (see the module doc); `env` reads an
    /// environment variable. Errors are usage errors that name the flag and the command.
    pub(crate) fn resolve_flags(
        &self,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Global, String> {
        let none = RunFlags::default();
        let (name, own) = honoured(self.command.as_ref(), &none);
        if self.command.is_some() {
            let ui_only = first([
                (self.continue_, "--continue"),
                (self.resume.is_some(), "--resume"),
            ]);
            if let Some(flag) = ui_only {
                return Err(format!(
                    "{flag} opens the interactive UI and does not apply to `{name}` (see \
                     `{name} --help` for its options)"
                ));
            }
        }
        let before = &self.flags;
        let provider = pick(own.provider, &before.provider, name)?;
        let agent = pick(own.agent, &before.agent, name)?;
        let policy = pick(own.policy, &before.policy, name)?;
        let context = pick(own.context, &before.context, name)?;
        let config = pick(own.config, &before.config, name)?;
        let from_env = |name: &str| env(name).filter(|v| !v.is_empty());
        let provider_env = || {
            own.provider
                .and_then(|_| from_env(ENV_PROVIDER))
                .map(|v| v.to_string_lossy().into_owned())
        };
        Ok(Global {
            provider: provider.provider.or_else(provider_env),
            model: provider.model,
            agent: agent.agent,
            approval: policy.approval,
            sandbox: policy.sandbox,
            context_window: context.context_window,
            config: config.config.or_else(|| {
                own.config
                    .and_then(|_| from_env(ENV_CONFIG))
                    .map(Into::into)
            }),
        })
    }
}

#[cfg(test)]
#[path = "flags/tests.rs"]
mod tests;
