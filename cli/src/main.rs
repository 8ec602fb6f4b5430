//! The `hrns` binary: the interactive terminal UI, one-shot `exec`, and the commands around them.

mod acp;
mod args;
mod commands;
mod exec;
mod host;
mod sandbox;
mod setup;
mod term;
mod tui;

use args::{Cli, Command, DebugCommand, compat};
use clap::{CommandFactory, Parser};
use commands::{debug_sse, doctor};
use exec::output;
use host::{redact, sessions};
use setup::{mcp, onboarding, paths};
use std::process::ExitCode;
use term::{safe_text, signals, style};

/// Exit codes: 0 done, 1 model or tool failure, 2 usage or config error, and for `exec` the
/// codes of [`args::EXEC_EXIT_CODES`]; 130 interrupted.
pub(crate) mod exit {
    pub(crate) const FAILURE: u8 = 1;
    pub(crate) const USAGE: u8 = 2;
    /// `exec`: the step limit stopped the turn.
    pub(crate) const STEP_LIMIT: u8 = 3;
    /// `exec`: the answer did not match `--output-schema`, even when asked once more.
    pub(crate) const OUTPUT_SCHEMA_UNMET: u8 = 4;
    /// `exec`: a call was denied and the turn ended without an answer.
    pub(crate) const DENIED: u8 = 5;
    pub(crate) const INTERRUPTED: u8 = 130;
    /// Stdout was closed by its reader (`hrns sessions | head`): 128 + SIGPIPE, what a program
    /// killed by the signal reports.
    pub(crate) const BROKEN_PIPE: i32 = 141;
}

/// Exits quietly when printing to a closed stdout or stderr.
///
/// Rust ignores SIGPIPE, so `println!` to a pipe whose reader is gone panics with "failed
/// printing to stdout: Broken pipe". Every command prints with `println!`, so the hook is the
/// one place that covers them all; any other panic keeps the default report.
fn exit_quietly_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if payload.starts_with("failed printing to std") && payload.contains("Broken pipe") {
            std::process::exit(exit::BROKEN_PIPE);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    exit_quietly_on_closed_pipe();
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The sandbox launcher and its probe: before anything else reads the environment or the
    // config, and without the command line parser.
    match raw.get(1).and_then(|a| a.to_str()) {
        Some(sandbox::LAUNCHER_COMMAND) => return ExitCode::from(sandbox::launch::main(&raw[2..])),
        Some(sandbox::PROBE_COMMAND) => return ExitCode::from(sandbox::probe(&raw[2..])),
        _ => {}
    }
    // Known before parsing, so that a usage error is reported as JSON too.
    let wants_json = raw.iter().take_while(|a| *a != "--").any(|a| a == "--json");
    let fail = |code: u8, message: &str| {
        // Messages can quote providers and files: no control sequences on the terminal.
        let message = redact::redact(message);
        let shown = safe_text::safe(&message);
        eprintln!("{} {shown}", style::Style::stderr().error("hrns:"));
        if wants_json {
            output::print_json_error(code, &message, &mut std::io::stdout().lock());
        }
        ExitCode::from(code)
    };
    let args = match compat::normalize(raw) {
        Ok(args) => args,
        Err(message) => return fail(exit::USAGE, &message),
    };
    signals::become_subreaper();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if wants_json && e.use_stderr() => {
            // clap's own report, without colours, in the one JSON error event.
            let message = e.render().to_string();
            eprint!("{message}");
            output::print_json_error(exit::USAGE, message.trim(), &mut std::io::stdout().lock());
            return ExitCode::from(exit::USAGE);
        }
        Err(e) => e.exit(),
    };
    let g = &match cli.resolve_flags(|name| std::env::var_os(name)) {
        Ok(g) => g,
        Err(message) => return fail(exit::USAGE, &message),
    };
    let result = match &cli.command {
        Some(Command::Debug {
            command: DebugCommand::Sse { file },
        }) => return debug_sse(file.clone()),
        Some(Command::Completions { shell }) => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "hrns", &mut script);
            match std::io::Write::write_all(&mut std::io::stdout().lock(), &script) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    std::process::exit(exit::BROKEN_PIPE)
                }
                Err(e) => Err(setup::CliError::failure(format!(
                    "cannot write the script: {e}"
                ))),
                Ok(()) => Ok(0),
            }
        }
        Some(Command::Exec(args)) => exec::run(g, args),
        Some(Command::Acp(_)) => acp::run(g),
        Some(Command::Replay(args)) => commands::replay(g, args),
        Some(Command::Doctor(args)) => doctor::run(g, args),
        Some(Command::Models { .. }) => commands::models(g),
        Some(Command::Providers { .. }) => commands::providers(g),
        Some(Command::Agents { verbose, .. }) => commands::agents(g, *verbose),
        Some(Command::Sandbox { check }) => {
            if *check {
                sandbox::check()
            } else {
                Err(setup::CliError::usage(
                    "say what to do: hrns sandbox --check",
                ))
            }
        }
        Some(Command::Skills) => commands::skills(),
        Some(Command::Mcp { command }) => mcp::command(g, command),
        Some(Command::Hooks { command }) => setup::hooks::command(g, command),
        Some(Command::Sessions { command }) => commands::sessions(command.as_ref()),
        Some(Command::Checkpoints(args)) => commands::checkpoints::list(g, args),
        Some(Command::Undo(args)) => commands::checkpoints::undo(g, args),
        Some(Command::Rewind(args)) => commands::checkpoints::rewind(g, args),
        None => tui(g, &cli),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => fail(e.code, &e.message),
    }
}

/// `hrns` with no command: the interactive UI (needs a terminal).
fn tui(global: &args::Global, cli: &Cli) -> Result<u8, setup::CliError> {
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Err(setup::CliError::usage(
            "the interactive UI needs a terminal; use `hrns exec PROMPT` in scripts (see `hrns --help`)",
        ));
    }
    let file = setup::ConfigFile::load(global.config.as_deref())?;
    let mut setup = onboarding::resolve_or_onboard(global, file)?;
    confirm_broad_workspace(&mut setup)?;
    setup::hooks::ask_on_terminal(&setup.workspace)?;
    let sessions_dir = paths::state_dir().map(|s| s.join("sessions"));
    let resume = match (&cli.resume, cli.continue_, sessions_dir) {
        (Some(id), _, Ok(dir)) => Some(sessions::find(&dir, id).map_err(setup::CliError::usage)?),
        (None, true, Ok(dir)) => Some(
            sessions::latest_in(&dir, &setup.workspace.display().to_string()).ok_or_else(|| {
                setup::CliError::usage("no saved session in this directory to continue")
            })?,
        ),
        (Some(_), _, Err(e)) | (None, true, Err(e)) => return Err(setup::CliError::usage(e)),
        (None, false, _) => None,
    };
    // One writer per session: decided here, before the UI takes the terminal, so what happens
    // is said on stderr like `exec` says it.
    let resume = match resume {
        Some(path) => sessions::claim_on_stderr(&path).map_err(setup::CliError::usage)?,
        None => None,
    };
    let options = tui::Options {
        approval: global
            .approval
            .map(|a| setup::approval(Some(a), hrns_core::session::ApprovalPolicy::Ask)),
        resume,
    };
    tui::run(setup, options)
}

/// A workspace at `$HOME` or `/` held back to read-only: the one-line question, on the
/// terminal before the screen is taken. A yes makes the sandbox workspace-write as with
/// `--sandbox workspace-write`; anything else (an empty line, end of input) keeps read-only.
fn confirm_broad_workspace(setup: &mut setup::Setup) -> Result<(), setup::CliError> {
    use std::io::Write as _;
    let Some(check) = setup.workspace_check else {
        return Ok(());
    };
    if check.hold != hrns_core::sandbox::Hold::HeldBack {
        return Ok(());
    }
    let s = term::style::Style::stderr();
    eprint!(
        "{} {}",
        s.harness("hrns:"),
        check.question(&setup.workspace)
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    // A terminal that cannot be read counts as a no: read-only stays.
    let _ = std::io::stdin().read_line(&mut answer);
    if hrns_core::sandbox::is_yes(&answer) {
        setup.confirm_workspace_write()?;
    }
    Ok(())
}

fn debug_sse(file: Option<std::path::PathBuf>) -> ExitCode {
    let result = match file.as_deref() {
        None => debug_sse::summarize(std::io::stdin().lock()),
        Some(p) if p.as_os_str() == "-" => debug_sse::summarize(std::io::stdin().lock()),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => debug_sse::summarize(f),
            Err(e) => {
                eprintln!("hrns: cannot read {}: {e}", p.display());
                return ExitCode::from(exit::USAGE);
            }
        },
    };
    match result {
        Ok((json, ok)) => {
            println!("{json}");
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(exit::FAILURE)
            }
        }
        Err(e) => {
            eprintln!("hrns: reading the stream failed: {e}");
            ExitCode::from(exit::FAILURE)
        }
    }
}
