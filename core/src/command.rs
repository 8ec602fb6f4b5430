//! Custom slash commands: prompts kept in Markdown files and run as `/NAME args`.
//!
//! The CLI reads `./.hrns/commands/NAME.md` (this project) and `~/.hrns/commands/NAME.md`
//! (everywhere) and hands each text to [`parse_command_md`]:
//!
//! ```text
//! ---
//! description: Reviews the staged change
//! agent: Explorer
//! model: gpt-4o
//! ---
//! Review the staged change for $ARGUMENTS. Focus on $1 first.
//! ```
//!
//! The frontmatter is optional (`description`, `agent` and `model` are all optional). The body
//! is the prompt: [`expand`] puts in the arguments. A built-in command of the same name wins
//! ([`resolve_commands`] says so in a warning).

use crate::frontmatter::{self, FrontmatterError};
use serde::Deserialize;

/// A custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// The name typed after the slash: the file name without `.md`.
    pub name: String,
    /// One line for `/help`; may be empty.
    pub description: String,
    /// The agent to run the prompt with, if the command names one.
    pub agent: Option<String>,
    /// The model to run the prompt with, if the command names one.
    pub model: Option<String>,
    /// The prompt template.
    pub body: String,
    /// The file it came from.
    pub path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandMeta {
    description: Option<String>,
    agent: Option<String>,
    model: Option<String>,
}

/// Whether `name` can be a command name: ASCII letters, digits, `-` and `_`, at most 64.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Parses a command file named `name` (its file name without `.md`) at `path`. A file without
/// frontmatter is all body.
pub fn parse_command_md(
    name: &str,
    text: &str,
    path: &str,
) -> Result<CustomCommand, FrontmatterError> {
    let (meta, body) = match frontmatter::parse::<CommandMeta>(text, path) {
        Ok(parsed) => (parsed.meta, parsed.body),
        Err(FrontmatterError::Missing { .. }) => (
            CommandMeta {
                description: None,
                agent: None,
                model: None,
            },
            text.trim_start_matches('\u{feff}')
                .replace("\r\n", "\n")
                .trim()
                .to_owned(),
        ),
        Err(e) => return Err(e),
    };
    let one_line = |v: Option<String>| {
        v.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|s| !s.is_empty())
    };
    Ok(CustomCommand {
        name: name.to_owned(),
        description: one_line(meta.description).unwrap_or_default(),
        agent: one_line(meta.agent),
        model: one_line(meta.model),
        body,
        path: path.to_owned(),
    })
}

/// Splits `/NAME args` into the name and the argument text; `None` when `input` does not start
/// with a slash followed by a valid name (a path such as `/usr/bin` is not a command).
pub fn split_invocation(input: &str) -> Option<(&str, &str)> {
    let rest = input.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    is_valid_name(name).then(|| (name, rest[end..].trim()))
}

/// The arguments as words: split at whitespace, with `"…"` or `'…'` keeping spaces inside one
/// word (an unclosed quote runs to the end).
pub fn split_arguments(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The prompt of `body` for the argument text `args`: `$ARGUMENTS` is all of it, `$1`…`$9` the
/// words (empty when missing). A body with no placeholder gets non-empty arguments appended
/// after a blank line, so they are never lost.
pub fn expand(body: &str, args: &str) -> String {
    let words = split_arguments(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(d) = after.bytes().next().filter(|b| (b'1'..=b'9').contains(b)) {
            let n = usize::from(d - b'1');
            out.push_str(words.get(n).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out = format!("{}\n\n{args}", out.trim_end());
    }
    out
}

/// Merges the project's and the user's commands: a project command replaces a user command of
/// the same name; a command named like a built-in (`builtins`, compared ignoring case) is
/// dropped with a warning. The result is sorted by name.
pub fn resolve_commands(
    project: Vec<CustomCommand>,
    user: Vec<CustomCommand>,
    builtins: &[&str],
) -> (Vec<CustomCommand>, Vec<String>) {
    let mut out: Vec<CustomCommand> = Vec::new();
    let mut warnings = Vec::new();
    for c in project.into_iter().chain(user) {
        if builtins.iter().any(|b| b.eq_ignore_ascii_case(&c.name)) {
            warnings.push(format!(
                "{}: the built-in /{} wins; rename the file to use it",
                c.path, c.name
            ));
            continue;
        }
        if !out.iter().any(|o| o.name.eq_ignore_ascii_case(&c.name)) {
            out.push(c);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    (out, warnings)
}

/// The command called `name` (ignoring case).
pub fn find_command<'a>(commands: &'a [CustomCommand], name: &str) -> Option<&'a CustomCommand> {
    commands.iter().find(|c| c.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests;
