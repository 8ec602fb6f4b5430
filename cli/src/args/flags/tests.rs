use super::*;
use clap::Parser;
use hrns_core::sandbox::SandboxMode;

fn resolve(args: &[&str], env: &[(&str, &str)]) -> Result<Global, String> {
    let cli = Cli::try_parse_from(std::iter::once("hrns").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    cli.resolve_flags(|name| {
        env.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| OsString::from(v))
    })
}

#[test]
fn flags_before_the_command_name_apply_and_its_own_win() {
    let g = resolve(
        &["--sandbox", "read-only", "-m", "a", "exec", "-m", "b", "x"],
        &[],
    )
    .unwrap();
    assert_eq!(g.sandbox, Some(SandboxMode::ReadOnly));
    assert_eq!(g.model.as_deref(), Some("b"));
    let g = resolve(&["--config", "c.json", "providers"], &[]).unwrap();
    assert_eq!(g.config.as_deref(), Some(std::path::Path::new("c.json")));
    let g = resolve(
        &[
            "--approval",
            "auto",
            "replay",
            "--sandbox",
            "read-only",
            "f",
        ],
        &[],
    )
    .unwrap();
    assert_eq!(g.approval, Some(crate::args::ApprovalArg::Auto));
    assert_eq!(g.sandbox, Some(SandboxMode::ReadOnly));
}

#[test]
fn a_flag_the_command_does_not_honour_is_refused_wherever_it_is_written() {
    for (args, flag, command) in [
        (
            &["--sandbox", "read-only", "sessions"][..],
            "--sandbox",
            "hrns sessions",
        ),
        (
            &["-p", "x", "mcp", "list"][..],
            "--provider",
            "hrns mcp list",
        ),
        (
            &["--config", "c", "mcp", "approve"][..],
            "--config",
            "hrns mcp approve",
        ),
        (
            &["--agent", "Pirate", "doctor"][..],
            "--agent",
            "hrns doctor",
        ),
        (
            &["--model", "m", "replay", "f"][..],
            "--model",
            "hrns replay",
        ),
        (
            &["--context-window", "1000", "models"][..],
            "--context-window",
            "hrns models",
        ),
        (&["-c", "exec", "x"][..], "--continue", "hrns exec"),
        (
            &["--resume", "id", "sessions"][..],
            "--resume",
            "hrns sessions",
        ),
    ] {
        let err = resolve(args, &[]).unwrap_err();
        assert!(
            err.contains(flag) && err.contains(command),
            "{args:?}: {err}"
        );
    }
    // After the name, clap itself refuses what the command does not declare.
    for args in [
        &["sessions", "--sandbox", "read-only"][..],
        &["mcp", "list", "--provider", "x"][..],
        &["providers", "--model", "m"][..],
        &["doctor", "--approval", "auto"][..],
    ] {
        let err = resolve(args, &[]).unwrap_err();
        assert!(err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

#[test]
fn the_environment_fills_in_only_where_the_command_honours_the_flag() {
    let env = [(ENV_PROVIDER, "envp"), (ENV_CONFIG, "env.json")];
    let g = resolve(&["exec", "x"], &env).unwrap();
    assert_eq!(g.provider.as_deref(), Some("envp"));
    assert_eq!(g.config.as_deref(), Some(std::path::Path::new("env.json")));
    let g = resolve(&["-p", "flag", "exec", "x"], &env).unwrap();
    assert_eq!(g.provider.as_deref(), Some("flag"), "the flag wins");
    let g = resolve(&["providers"], &env).unwrap();
    assert_eq!((g.provider, g.config.is_some()), (None, true));
    // Set in the shell, never an error for commands that do not use them.
    let g = resolve(&["sessions"], &env).unwrap();
    assert_eq!((g.provider, g.config), (None, None));
    let g = resolve(&["exec", "x"], &[(ENV_PROVIDER, "")]).unwrap();
    assert_eq!(g.provider, None, "an empty variable is unset");
}
