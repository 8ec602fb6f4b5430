//! Custom slash commands: reading `./.hrns/commands/*.md` and `~/.hrns/commands/*.md`, and
//! running one as an `exec` prompt. Parsing and expansion live in [`hrns_core::command`].

use crate::setup::{CliError, Setup};
use hrns_core::command::{self, CustomCommand};
use hrns_core::file_refusal::DEFINITION_CAP;
use std::path::{Path, PathBuf};

/// The commands of the project (`cwd`) and the user (`home`), and the problems met.
pub(crate) fn discover(cwd: &Path, home: Option<&Path>) -> (Vec<CustomCommand>, Vec<String>) {
    let mut warnings = Vec::new();
    let project = read_dir(&cwd.join(".hrns/commands"), &mut warnings);
    let user = home
        .map(|h| read_dir(&h.join(".hrns/commands"), &mut warnings))
        .unwrap_or_default();
    let builtins = crate::tui::commands::builtin_names();
    let (commands, clashes) = command::resolve_commands(project, user, &builtins);
    warnings.extend(clashes);
    (commands, warnings)
}

fn read_dir(dir: &Path, warnings: &mut Vec<String>) -> Vec<CustomCommand> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.is_dir())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let shown = path.display().to_string();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if !command::is_valid_name(name) {
            warnings.push(format!(
                "{shown}: skipped, a command name has only letters, digits, - and _"
            ));
            continue;
        }
        match hrns_blocking::read_text(&path, DEFINITION_CAP) {
            Ok(text) => match command::parse_command_md(name, &text, &shown) {
                Ok(c) => out.push(c),
                Err(e) => warnings.push(format!("skipped {e}")),
            },
            Err(e) => warnings.push(e.skipped()),
        }
    }
    out
}

/// When `prompt` is `/NAME args` for a custom command: its expanded prompt, with `setup`
/// switched to the command's agent and model. `None` for any other prompt.
pub(crate) fn invoke(prompt: &str, setup: &mut Setup) -> Result<Option<String>, CliError> {
    let Some((name, args)) = command::split_invocation(prompt) else {
        return Ok(None);
    };
    let Some(c) = command::find_command(&setup.discovered.commands, name).cloned() else {
        return Ok(None);
    };
    if let Some(agent) = &c.agent {
        setup.agent = hrns_core::agent::find_agent(&setup.discovered.agents, agent)
            .cloned()
            .ok_or_else(|| {
                CliError::usage(format!(
                    "{}: there is no agent `{agent}`; fix the command's `agent`",
                    c.path
                ))
            })?;
    }
    if let Some(model) = &c.model {
        setup.provider.model = model.clone();
    }
    Ok(Some(command::expand(&c.body, args)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_places_and_reports_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let (cwd, home) = (dir.path().join("w"), dir.path().join("h"));
        let put = |p: PathBuf, text: &[u8]| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put(
            cwd.join(".hrns/commands/review.md"),
            b"---\ndescription: project\n---\nP",
        );
        put(home.join(".hrns/commands/review.md"), b"U");
        put(home.join(".hrns/commands/deploy.md"), b"Deploy $1");
        put(home.join(".hrns/commands/help.md"), b"clash");
        put(home.join(".hrns/commands/bad name.md"), b"x");
        put(home.join(".hrns/commands/bin.md"), b"\xff\xfe");
        put(
            home.join(".hrns/commands/broken.md"),
            b"---\ndescription: [\n---\n",
        );
        put(home.join(".hrns/commands/notes.txt"), b"not a command");
        let (commands, warnings) = discover(&cwd, Some(&home));
        let names: Vec<(&str, &str)> = commands
            .iter()
            .map(|c| (c.name.as_str(), c.body.as_str()))
            .collect();
        assert_eq!(names, [("deploy", "Deploy $1"), ("review", "P")]);
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("bad name.md: skipped")));
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("bin.md: skipped, not UTF-8"))
        );
        assert!(warnings.iter().any(|w| w.contains("broken.md")));
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("the built-in /help wins"))
        );
    }
}
