//! The command line: every command, flag and its help.

pub(crate) mod compat;
pub(crate) mod flags;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hrns_core::sandbox::SandboxMode;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  hrns                                   Open the interactive terminal UI
  hrns exec \"Add a --verbose flag\"       One turn, answer streamed to stdout
  echo \"Summarise README.md\" | hrns exec  Prompt from stdin
  hrns exec --json \"List the files\"      One JSON event per line
  hrns exec --approval read-only \"Review src/\"
  hrns exec --sandbox read-only \"Run the tests\"   Commands may not write anywhere
  hrns replay examples/demo.record       A recorded tool-using turn, no provider needed
  hrns models                            Models of the current provider
  hrns doctor                            What the provider supports, and its quirks saved
  hrns debug sse response.txt            What hrns makes of a raw SSE body

Without a config file, OPENAI_API_KEY, OPENAI_BASE_URL and HRNS_MODEL are enough.
Config: $XDG_CONFIG_HOME/hrns/config.json (default ~/.config/hrns/config.json).";

/// hrns: a terminal coding agent for any OpenAI-compatible endpoint.
#[derive(Debug, Parser)]
#[command(name = "hrns", version, about, after_help = EXAMPLES, propagate_version = true)]
pub(crate) struct Cli {
    /// The interactive UI's flags; written before a subcommand's name, they apply to it too
    /// where it honours them (`hrns --sandbox read-only exec …`).
    #[command(flatten)]
    pub(crate) flags: RunFlags,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Open the UI on the most recent session started in this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    pub(crate) continue_: bool,
    /// Open the UI on the saved session with this id.
    #[arg(long, value_name = "ID")]
    pub(crate) resume: Option<String>,
}

/// The flags of the command being run, resolved: its own, over those written before its name,
/// over the environment (`HRNS_PROVIDER`, `HRNS_CONFIG`). A flag the command does not honour is
/// `None` here.
#[derive(Debug, Clone, Default)]
pub(crate) struct Global {
    /// Provider to use (a name from the config file).
    pub(crate) provider: Option<String>,
    /// Model to use (overrides the provider's default).
    pub(crate) model: Option<String>,
    /// Agent to use.
    pub(crate) agent: Option<String>,
    /// Which tool calls run without asking.
    pub(crate) approval: Option<ApprovalArg>,
    /// What commands may do.
    pub(crate) sandbox: Option<SandboxMode>,
    /// The model's context window in tokens.
    pub(crate) context_window: Option<u64>,
    /// Config file to read and write instead of the default.
    pub(crate) config: Option<PathBuf>,
}

/// Every flag of a run: the interactive UI's and `exec`'s.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct RunFlags {
    #[command(flatten)]
    pub(crate) provider: ProviderFlags,
    #[command(flatten)]
    pub(crate) agent: AgentFlag,
    #[command(flatten)]
    pub(crate) policy: PolicyFlags,
    #[command(flatten)]
    pub(crate) context: ContextFlag,
    #[command(flatten)]
    pub(crate) config: ConfigFlag,
}

/// Which provider and model.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct ProviderFlags {
    /// Provider to use (a name from the config file) [env: HRNS_PROVIDER].
    #[arg(long, short = 'p')]
    pub(crate) provider: Option<String>,
    /// Model to use (overrides the provider's default).
    #[arg(long, short = 'm')]
    pub(crate) model: Option<String>,
}

/// Which agent.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct AgentFlag {
    /// Agent to use: Builder, Explorer, Planner, Pirate, or one from an AGENT.md.
    #[arg(long, short = 'a')]
    pub(crate) agent: Option<String>,
}

/// What tools may do.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct PolicyFlags {
    /// Which tool calls run without asking.
    #[arg(long, value_enum)]
    pub(crate) approval: Option<ApprovalArg>,
    /// What commands may do: read-only, workspace-write (default: writes only in the
    /// workspace and temporary directories, no network) or danger-full-access (no sandbox).
    #[arg(long, value_name = "POLICY", value_parser = parse_sandbox)]
    pub(crate) sandbox: Option<SandboxMode>,
}

/// The context window.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct ContextFlag {
    /// The model's context window in tokens, over the config's `contextWindow` and the
    /// provider's /models metadata.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(256..))]
    pub(crate) context_window: Option<u64>,
}

/// Which config file.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct ConfigFlag {
    /// Config file to read and write instead of the default [env: HRNS_CONFIG].
    #[arg(long, value_name = "PATH")]
    pub(crate) config: Option<PathBuf>,
}

fn parse_sandbox(s: &str) -> Result<SandboxMode, String> {
    s.parse()
        .map_err(|e: hrns_core::sandbox::UnknownSandboxMode| e.to_string())
}

/// The approval policy on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ApprovalArg {
    /// Only read-only tools run; others are refused.
    ReadOnly,
    /// Read-only tools run; others wait for a yes (needs a terminal).
    Ask,
    /// Every tool runs.
    Auto,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run one turn: the prompt (or stdin) in, the answer out.
    Exec(Box<ExecArgs>),
    /// Serve the Agent Client Protocol (ACP v1) on stdin/stdout, so an editor (Zed, JetBrains,
    /// Neovim, any ACP client) can drive hrns. Started by the editor, not by hand: stdout
    /// carries protocol messages only, diagnostics go to stderr. Approvals default to `ask`
    /// (the editor's permission prompt decides); sessions are saved like the UI's.
    Acp(Box<RunFlags>),
    /// Re-run a recorded turn without a network, running tools for real, and report where
    /// the requests differ from the recording.
    Replay(ReplayArgs),
    /// Probe the provider: what works, what does not, and what hrns does about it. Saves the
    /// quirks it finds with the provider in the config. Exit 0 when chat works, 1 otherwise.
    Doctor(DoctorArgs),
    /// List the models of the current provider.
    Models {
        #[command(flatten)]
        provider: ProviderFlags,
        #[command(flatten)]
        config: ConfigFlag,
    },
    /// List the configured providers.
    Providers {
        #[command(flatten)]
        config: ConfigFlag,
    },
    /// List the agents (built-in and from AGENT.md files).
    Agents {
        /// Also list the project instruction files (AGENTS.md) the system prompt includes.
        #[arg(long, short = 'v')]
        verbose: bool,
        #[command(flatten)]
        agent: AgentFlag,
        #[command(flatten)]
        config: ConfigFlag,
    },
    /// List the skills found in SKILL.md files.
    Skills,
    /// List saved sessions, or export one.
    Sessions {
        #[command(subcommand)]
        command: Option<SessionsCommand>,
    },
    /// List the checkpoints of a session: its turns, their steps and the files each changed.
    #[command(after_help = CHECKPOINTS_HELP)]
    Checkpoints(CheckpointsArgs),
    /// Take back the file changes of the last turn (or the last N) of a session.
    #[command(after_help = UNDO_HELP)]
    Undo(UndoArgs),
    /// Put a session back to just before one of its turns: the code, the conversation, or
    /// both (the default).
    #[command(after_help = REWIND_HELP)]
    Rewind(RewindArgs),
    /// MCP servers: list them with their status and tools, or approve ./.mcp.json.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Hooks (Claude Code's contract): list them with where they come from, or approve
    /// ./.hrns/hooks.json.
    Hooks {
        #[command(subcommand)]
        command: HooksCommand,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// What the command sandbox can do on this machine.
    Sandbox {
        /// Check Landlock and seccomp by running a confined probe.
        #[arg(long)]
        check: bool,
    },
    /// Tools for looking at what hrns does.
    Debug {
        #[command(subcommand)]
        command: DebugCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum DebugCommand {
    /// Run a raw SSE response body (a file, or stdin) through hrns's stream decoder and print
    /// the result as one JSON object. Exit 0 when it decoded, 1 when it did not.
    Sse {
        /// The file; stdin when absent or `-`.
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Start the configured MCP servers and list each with its status and tools.
    List {
        /// One JSON object per server and line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        config: ConfigFlag,
    },
    /// Approve ./.mcp.json as it is now, so hrns starts its servers (again after a change).
    Approve,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// List every configured hook command: its event, matcher and command, where it comes
    /// from, and whether it runs (a project file's only once approved).
    List {
        /// One JSON object per hook command and line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        config: ConfigFlag,
    },
    /// Approve ./.hrns/hooks.json as it is now, so its hooks run (again after a change).
    Approve,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// Write a readable transcript of a session to stdout.
    Export {
        /// The session id (or a unique prefix of it).
        id: String,
        /// The transcript format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Md)]
        format: ExportFormat,
    },
}

/// Transcript formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExportFormat {
    /// Markdown.
    Md,
    /// JSON: the header and the messages.
    Json,
}

const CHECKPOINTS_HELP: &str = "\
hrns snapshots the workspace before the first step of each turn that may change files and
after every such step (writes, edits, commands), in a shadow git repository under
$XDG_STATE_HOME/hrns/checkpoints; your own repository, index, stash and hooks are never
touched. Turns are numbered from 1 as they come in the session file; `hrns rewind --to N`
takes these numbers.

Examples:
  hrns checkpoints                 The latest session started in this directory
  hrns checkpoints --session 1a2b  Another session (see `hrns sessions`)
  hrns checkpoints --prune         Delete the checkpoints of every other session here";

const UNDO_HELP: &str = "\
Only the paths the undone steps changed are put back: files they created are removed, files
they changed or deleted come back with their modes and links. A file that changed after the
agent's last step (your edit, or another program's) is listed and left as it is, unless
--force. The state before the undo is kept: `hrns undo --redo` brings it back.

Examples:
  hrns undo                  Take back the last turn that changed files
  hrns undo --turns 3        The last three such turns
  hrns undo --redo           Take the last undo back
  hrns undo --session 1a2b   Another session (see `hrns sessions`)";

const REWIND_HELP: &str = "\
Turn TURN and every later turn are taken back: their file changes (--code), the
conversation (--conversation), or both. Afterwards `hrns exec --continue` (or `hrns
--continue`) goes on from the rewound conversation. Files changed after the agent's last
step are kept unless --force.

Examples:
  hrns checkpoints                          Find the turn's number
  hrns rewind --session 1a2b --to 2         Code and conversation back to before turn 2
  hrns rewind --session 1a2b --to 2 --code  Only the files";

#[derive(Debug, Args)]
pub(crate) struct CheckpointsArgs {
    /// The session (its id or a unique prefix; default: the latest started in this
    /// directory).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Print one JSON object instead of the listing.
    #[arg(long)]
    pub(crate) json: bool,
    /// Delete the checkpoints of every other session of this workspace and pack what is left.
    #[arg(long)]
    pub(crate) prune: bool,
    #[command(flatten)]
    pub(crate) config: ConfigFlag,
}

#[derive(Debug, Args)]
pub(crate) struct UndoArgs {
    /// The session (its id or a unique prefix; default: the latest started in this
    /// directory).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// How many of the last turns that changed files to take back.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "redo")]
    pub(crate) turns: u32,
    /// Also overwrite files changed after the agent's last step.
    #[arg(long)]
    pub(crate) force: bool,
    /// Take the last undo back instead.
    #[arg(long)]
    pub(crate) redo: bool,
    /// Print one JSON object saying what was restored and kept.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) config: ConfigFlag,
}

#[derive(Debug, Args)]
pub(crate) struct RewindArgs {
    /// The session (its id or a unique prefix, see `hrns sessions`).
    #[arg(long, value_name = "ID")]
    pub(crate) session: String,
    /// The turn to go back to just before (from 1, as `hrns checkpoints` numbers them).
    #[arg(long, value_name = "TURN", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) to: u64,
    /// Only the files: the conversation stays.
    #[arg(long, conflicts_with = "conversation")]
    pub(crate) code: bool,
    /// Only the conversation: the files stay.
    #[arg(long)]
    pub(crate) conversation: bool,
    /// Also overwrite files changed after the agent's last step.
    #[arg(long)]
    pub(crate) force: bool,
    /// Print one JSON object saying what was done.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) config: ConfigFlag,
}

/// `exec --help`'s exit code table (the README has the same table).
pub(crate) const EXEC_EXIT_CODES: &str = "\
Exit codes:
  0    the turn finished (an answer, or tool calls and no answer text: said on stderr)
  1    the model or a tool failed (provider error, broken stream, repeated call, …)
  2    usage or config error: nothing was sent
  3    the step limit (--max-steps) stopped the turn
  4    the answer did not match --output-schema, even when asked once more
  5    a call was denied (read-only policy, or no at an ask) and no answer followed
  130  interrupted (Ctrl-C); 143 on SIGTERM; 129 on SIGHUP";

#[derive(Debug, Args)]
#[command(after_help = EXEC_EXIT_CODES)]
pub(crate) struct ExecArgs {
    /// The prompt; read from stdin when absent or `-`.
    pub(crate) prompt: Option<String>,
    /// The prompt, as the original hrns's `-message` flag gave it.
    #[arg(long, value_name = "TEXT", conflicts_with = "prompt", hide = true)]
    pub(crate) message: Option<String>,
    /// Print one JSON event per line on stdout instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Save every request and response of the run to FILE (the key is never written).
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// Stop after this many model requests in the turn.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub(crate) max_steps: u32,
    /// Continue the most recent session started in this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    pub(crate) continue_: bool,
    /// Continue the session with this id (see `hrns sessions`).
    #[arg(long, value_name = "ID")]
    pub(crate) resume: Option<String>,
    /// The final answer must be JSON matching this JSON Schema: sent as `response_format`
    /// where the provider takes it (else described in the prompt), checked, asked for once
    /// more with the errors when it misses. Stdout gets the matching JSON alone, on one line
    /// (with --json: `turn_finished.output`); a second miss exits with 4.
    #[arg(long, value_name = "FILE")]
    pub(crate) output_schema: Option<PathBuf>,
    /// Also write the final answer to FILE (mode 0600), whatever stdout gets: its text, or the
    /// matching JSON with --output-schema. Written only when the turn finished with an answer.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output_last_message: Option<PathBuf>,
    /// Leave no trace: no session file (`session_started.session_id` is null), nothing saved
    /// to continue from.
    #[arg(long, conflicts_with_all = ["continue_", "resume"])]
    pub(crate) ephemeral: bool,
    /// Attach an image (png, jpeg, gif or webp) to the prompt, as `@file` does; repeatable.
    #[arg(long, short = 'i', value_name = "FILE")]
    pub(crate) image: Vec<PathBuf>,
    /// Print the JSON Schema (draft 2020-12) of every `--json` event line and exit.
    #[arg(long, exclusive = true)]
    pub(crate) print_event_schema: bool,
    #[command(flatten)]
    pub(crate) flags: RunFlags,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Print the report as one JSON object instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) provider: ProviderFlags,
    #[command(flatten)]
    pub(crate) config: ConfigFlag,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The recording made with `hrns exec --record`.
    pub(crate) file: PathBuf,
    /// Print one JSON event per line on stdout instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Exit with 1 when a request differs from the recording.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Run the configured hooks, as a live session would (off by default: the recorded
    /// calls would reach them).
    #[arg(long)]
    pub(crate) hooks: bool,
    #[command(flatten)]
    pub(crate) policy: PolicyFlags,
    #[command(flatten)]
    pub(crate) config: ConfigFlag,
}
