//! Slash commands: the registry that `/help` is rendered from, parsing with one-line hints,
//! and Tab completion of command names and their arguments.

use super::text::{Color, Line, SpanStyle};
use std::ops::Range;

/// Which command was typed; the event loop matches on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandId {
    Help,
    New,
    Retry,
    Compact,
    Init,
    Model,
    Models,
    Provider,
    Providers,
    Agent,
    Agents,
    Connect,
    Mcp,
    Sessions,
    Resume,
    Undo,
    Redo,
    Rewind,
    Status,
    Quit,
}

/// Whether a command takes an argument; the text is its placeholder in help and hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgKind {
    None,
    Required(&'static str),
    Optional(&'static str),
}

/// What an argument is completed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgValues {
    Nothing,
    Providers,
    Models,
    Agents,
    Commands,
}

/// One slash command.
#[derive(Debug)]
pub(crate) struct SlashCommand {
    pub(crate) id: CommandId,
    /// The name without the slash.
    pub(crate) name: &'static str,
    /// Other names that run it.
    pub(crate) aliases: &'static [&'static str],
    pub(crate) args: ArgKind,
    pub(crate) values: ArgValues,
    /// One line for `/help`.
    pub(crate) help: &'static str,
}

const fn cmd(
    id: CommandId,
    name: &'static str,
    args: ArgKind,
    values: ArgValues,
    help: &'static str,
) -> SlashCommand {
    SlashCommand {
        id,
        name,
        aliases: &[],
        args,
        values,
        help,
    }
}

/// Every slash command, in the order `/help` lists them.
pub(crate) static REGISTRY: &[SlashCommand] = &[
    cmd(
        CommandId::Help,
        "help",
        ArgKind::Optional("command"),
        ArgValues::Commands,
        "show the commands, or one command's help",
    ),
    cmd(
        CommandId::New,
        "new",
        ArgKind::None,
        ArgValues::Nothing,
        "start a new conversation",
    ),
    cmd(
        CommandId::Retry,
        "retry",
        ArgKind::None,
        ArgValues::Nothing,
        "send your last message again",
    ),
    cmd(
        CommandId::Compact,
        "compact",
        ArgKind::Optional("instructions"),
        ArgValues::Nothing,
        "summarise the conversation so far to free the context (what to keep, optionally)",
    ),
    cmd(
        CommandId::Init,
        "init",
        ArgKind::None,
        ArgValues::Nothing,
        "ask the model to write an AGENTS.md for this project",
    ),
    cmd(
        CommandId::Model,
        "model",
        ArgKind::Optional("model"),
        ArgValues::Models,
        "switch to another model (without one: a numbered list to pick from)",
    ),
    cmd(
        CommandId::Models,
        "models",
        ArgKind::None,
        ArgValues::Nothing,
        "list the provider's models",
    ),
    cmd(
        CommandId::Provider,
        "provider",
        ArgKind::Required("name"),
        ArgValues::Providers,
        "switch to another configured provider",
    ),
    cmd(
        CommandId::Providers,
        "providers",
        ArgKind::None,
        ArgValues::Nothing,
        "list the configured providers",
    ),
    cmd(
        CommandId::Agent,
        "agent",
        ArgKind::Required("name"),
        ArgValues::Agents,
        "switch to another agent",
    ),
    cmd(
        CommandId::Agents,
        "agents",
        ArgKind::None,
        ArgValues::Nothing,
        "list the agents",
    ),
    cmd(
        CommandId::Connect,
        "connect",
        ArgKind::None,
        ArgValues::Nothing,
        "add a provider and switch to it",
    ),
    cmd(
        CommandId::Mcp,
        "mcp",
        ArgKind::None,
        ArgValues::Nothing,
        "list the MCP servers, their status and tools",
    ),
    cmd(
        CommandId::Sessions,
        "sessions",
        ArgKind::None,
        ArgValues::Nothing,
        "list saved sessions",
    ),
    cmd(
        CommandId::Resume,
        "resume",
        ArgKind::Required("id"),
        ArgValues::Nothing,
        "continue a saved session",
    ),
    cmd(
        CommandId::Undo,
        "undo",
        ArgKind::None,
        ArgValues::Nothing,
        "take back the file changes of the last turn that changed files",
    ),
    cmd(
        CommandId::Redo,
        "redo",
        ArgKind::None,
        ArgValues::Nothing,
        "take the last /undo back",
    ),
    cmd(
        CommandId::Rewind,
        "rewind",
        ArgKind::Optional("turn"),
        ArgValues::Nothing,
        "list the turns; with one, go back to just before it (code, conversation or both)",
    ),
    cmd(
        CommandId::Status,
        "status",
        ArgKind::None,
        ArgValues::Nothing,
        "show the provider, model, modes, context, tokens and cost",
    ),
    SlashCommand {
        aliases: &["exit"],
        ..cmd(
            CommandId::Quit,
            "quit",
            ArgKind::None,
            ArgValues::Nothing,
            "leave hrns (Ctrl-D does too)",
        )
    },
];

/// The names of the built-in commands and their aliases; a custom command may not take one.
pub(crate) fn builtin_names() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
        .collect()
}

/// The `/help` lines of the custom commands.
pub(crate) fn custom_help(commands: &[hrns_core::command::CustomCommand]) -> Vec<Line> {
    if commands.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![Line::styled("Custom commands", SpanStyle::PLAIN.bold())];
    for c in commands {
        let mut line = Line::plain("  ");
        line.push(format!("/{}", c.name), SpanStyle::fg(Color::Blue));
        line.push(" [args]  ", SpanStyle::fg(Color::Yellow));
        line.push(c.description.clone(), SpanStyle::PLAIN);
        line.push(format!(" ({})", c.path), SpanStyle::PLAIN.dim());
        lines.push(line);
    }
    lines
}

/// A command with its argument, ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub(crate) command: &'static SlashCommand,
    /// The argument, trimmed; `None` when there is none.
    pub(crate) arg: Option<String>,
}

impl PartialEq for SlashCommand {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for SlashCommand {}

/// A one-line message for input that is not a runnable command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hint(pub(crate) String);

impl Hint {
    /// The hint as a line in the harness's colour.
    pub(crate) fn to_line(&self) -> Line {
        Line::styled(self.0.clone(), SpanStyle::fg(Color::Blue))
    }
}

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `input` is meant as a slash command: it starts with `/` and its first word holds no
/// other `/` (so a message starting with a path like `/usr/bin/env` is sent as a message).
pub(crate) fn is_command(input: &str) -> bool {
    match input.trim_start().strip_prefix('/') {
        Some(rest) => !rest.split_whitespace().next().unwrap_or("").contains('/'),
        None => false,
    }
}

/// The command named `name` (without the slash, any case, aliases too).
pub(crate) fn lookup(name: &str) -> Option<&'static SlashCommand> {
    let name = name.to_lowercase();
    REGISTRY
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name.as_str()))
}

/// Parses `/name [argument]`. Unknown commands (with a "did you mean" when one is close),
/// missing arguments and arguments to commands that take none give a [`Hint`].
pub(crate) fn parse(input: &str) -> Result<Parsed, Hint> {
    let Some(rest) = input.trim().strip_prefix('/') else {
        return Err(Hint("commands start with /; /help lists them".into()));
    };
    let (name, arg) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let arg = (!arg.is_empty()).then(|| arg.to_owned());
    let Some(command) = lookup(name) else {
        return Err(unknown(name));
    };
    match (command.args, &arg) {
        (ArgKind::Required(what), None) => Err(Hint(format!(
            "/{} needs a {what}: /{} <{what}>",
            command.name, command.name
        ))),
        (ArgKind::None, Some(_)) => Err(Hint(format!(
            "/{} takes no argument: {}",
            command.name, command.help
        ))),
        _ => Ok(Parsed { command, arg }),
    }
}

/// The hint for an unknown command name.
fn unknown(name: &str) -> Hint {
    if name.is_empty() {
        return Hint("type a command after the /; /help lists them".into());
    }
    let typed = name.to_lowercase();
    let close: Vec<&str> = REGISTRY
        .iter()
        .filter(|c| {
            std::iter::once(c.name)
                .chain(c.aliases.iter().copied())
                .any(|n| n.starts_with(&typed) || is_close(&typed, n))
        })
        .map(|c| c.name)
        .take(3)
        .collect();
    let suggestion = match close.as_slice() {
        [] => String::new(),
        [one] => format!(" Did you mean /{one}?"),
        [init @ .., last] => format!(
            " Did you mean /{} or /{last}?",
            init.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", /")
        ),
    };
    Hint(format!(
        "unknown command /{name}.{suggestion} /help lists the commands."
    ))
}

/// Whether `a` is a likely typo of `b`: an edit distance of 1, or 2 for longer names.
fn is_close(a: &str, b: &str) -> bool {
    let limit = if a.chars().count() >= 4 { 2 } else { 1 };
    edit_distance(a, b) <= limit
}

/// The Levenshtein distance between `a` and `b` in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = (prev + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = here;
        }
    }
    row[b.len()]
}

/// How a command is written in help: `/name <arg>` or `/name [arg]`.
fn usage(c: &SlashCommand) -> (String, String) {
    let arg = match c.args {
        ArgKind::None => String::new(),
        ArgKind::Required(a) => format!(" <{a}>"),
        ArgKind::Optional(a) => format!(" [{a}]"),
    };
    (format!("/{}", c.name), arg)
}

/// One command's help line, its usage padded to `pad` columns.
fn help_line(c: &SlashCommand, pad: usize) -> Line {
    let (name, arg) = usage(c);
    let mut line = Line::plain("  ");
    let used = name.chars().count() + arg.chars().count();
    line.push(name, SpanStyle::fg(Color::Blue));
    line.push(arg, SpanStyle::fg(Color::Yellow));
    line.push(" ".repeat(pad.saturating_sub(used) + 2), SpanStyle::PLAIN);
    line.push(c.help, SpanStyle::PLAIN);
    if !c.aliases.is_empty() {
        let aliases: Vec<String> = c.aliases.iter().map(|a| format!("/{a}")).collect();
        line.push(
            format!(" (also {})", aliases.join(", ")),
            SpanStyle::PLAIN.dim(),
        );
    }
    line
}

/// What `/help` shows: every command of the registry with its help, then the keys.
pub(crate) fn help_text() -> Vec<Line> {
    let pad = REGISTRY
        .iter()
        .map(|c| {
            let (n, a) = usage(c);
            n.chars().count() + a.chars().count()
        })
        .max()
        .unwrap_or(0);
    let mut lines = vec![Line::styled("Commands", SpanStyle::PLAIN.bold())];
    lines.extend(REGISTRY.iter().map(|c| help_line(c, pad)));
    lines.push(Line::styled("Keys", SpanStyle::PLAIN.bold()));
    for keys in [
        "Enter sends · Alt+Enter, Shift+Enter or a trailing \\ starts a new line",
        "↑/↓ walk the history · Tab completes commands and names · Esc interrupts · Ctrl-D quits",
        "Ctrl-T shows the reasoning in full (or collapses it again)",
        "Ctrl-O shows the subagents' tool calls and answers (or hides them again)",
    ] {
        lines.push(Line::styled(format!("  {keys}"), SpanStyle::PLAIN.dim()));
    }
    lines
}

/// The help line of one command (for `/help <command>`).
pub(crate) fn command_help(c: &SlashCommand) -> Line {
    let (n, a) = usage(c);
    help_line(c, n.chars().count() + a.chars().count())
}

/// The names an argument can be completed from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Candidates {
    pub(crate) providers: Vec<String>,
    pub(crate) models: Vec<String>,
    pub(crate) agents: Vec<String>,
    /// The names of the custom commands.
    pub(crate) custom: Vec<String>,
}

/// What Tab does: replace `range` of the input with `insert`; when there are several
/// `options`, `insert` is their longest common prefix and the options are shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Completion {
    pub(crate) range: Range<usize>,
    pub(crate) insert: String,
    pub(crate) options: Vec<String>,
}

/// Completes the command name or its argument that ends at `cursor` (a byte offset). `None`
/// when the input is not a command, the cursor is inside a word or past the first argument,
/// the argument completes from nothing, or nothing matches. Names match case-insensitively.
pub(crate) fn complete(input: &str, cursor: usize, cands: &Candidates) -> Option<Completion> {
    let head = input.get(..cursor)?;
    if input[cursor..].starts_with(|c: char| !c.is_whitespace()) {
        return None;
    }
    let start = head.len() - head.trim_start().len();
    let rest = head[start..].strip_prefix('/')?;
    let Some(space) = rest.find(char::is_whitespace) else {
        // The command name.
        let typed = rest.to_lowercase();
        let options: Vec<String> = REGISTRY
            .iter()
            .map(|c| c.name)
            .chain(cands.custom.iter().map(String::as_str))
            .filter(|name| name.to_lowercase().starts_with(&typed))
            .map(|name| format!("/{name}"))
            .collect();
        let insert = match options.as_slice() {
            [] => return None,
            [one] => {
                let takes_arg = lookup(&one[1..]).is_some_and(|c| c.args != ArgKind::None);
                if takes_arg && input[cursor..].is_empty() {
                    format!("{one} ")
                } else {
                    one.clone()
                }
            }
            many => common_prefix(many),
        };
        return Some(Completion {
            range: start..cursor,
            insert,
            options,
        });
    };
    let command = lookup(&rest[..space])?;
    let after = &rest[space..];
    let arg_start = start + 1 + space + (after.len() - after.trim_start().len());
    let typed = &input[arg_start..cursor];
    if typed.contains(char::is_whitespace) {
        return None;
    }
    let command_names: Vec<String>;
    let values: &[String] = match command.values {
        ArgValues::Nothing => return None,
        ArgValues::Providers => &cands.providers,
        ArgValues::Models => &cands.models,
        ArgValues::Agents => &cands.agents,
        ArgValues::Commands => {
            command_names = REGISTRY.iter().map(|c| c.name.to_owned()).collect();
            &command_names
        }
    };
    let lower = typed.to_lowercase();
    let mut options: Vec<String> = Vec::new();
    for v in values {
        if v.to_lowercase().starts_with(&lower) && !options.contains(v) {
            options.push(v.clone());
        }
    }
    let insert = match options.as_slice() {
        [] => return None,
        [one] => one.clone(),
        many => {
            let prefix = common_prefix(many);
            if prefix.chars().count() >= typed.chars().count() {
                prefix
            } else {
                typed.to_owned()
            }
        }
    };
    Some(Completion {
        range: arg_start..cursor,
        insert,
        options,
    })
}

/// The longest common prefix of `items`, by characters.
fn common_prefix(items: &[String]) -> String {
    let Some((first, rest)) = items.split_first() else {
        return String::new();
    };
    let mut len = first.len();
    for item in rest {
        let common = first
            .char_indices()
            .zip(item.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8());
        len = len.min(common);
    }
    first[..len].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(input: &str) -> (CommandId, Option<String>) {
        let p = parse(input).unwrap();
        (p.command.id, p.arg)
    }

    fn hint(input: &str) -> String {
        parse(input).unwrap_err().0
    }

    #[test]
    fn parses_commands_and_arguments() {
        assert_eq!(ok("/new"), (CommandId::New, None));
        assert_eq!(
            ok("  /model  gpt-4o  "),
            (CommandId::Model, Some("gpt-4o".into()))
        );
        assert_eq!(ok("/help"), (CommandId::Help, None));
        assert_eq!(ok("/help model"), (CommandId::Help, Some("model".into())));
        assert_eq!(ok("/EXIT"), (CommandId::Quit, None));
        assert_eq!(
            ok("/agent Explorer"),
            (CommandId::Agent, Some("Explorer".into()))
        );
    }

    #[test]
    fn hints_instead_of_errors() {
        assert_eq!(
            hint("/provider"),
            "/provider needs a name: /provider <name>"
        );
        assert_eq!(
            hint("/provider "),
            "/provider needs a name: /provider <name>"
        );
        assert!(hint("/new now").starts_with("/new takes no argument"));
        assert_eq!(
            hint("/mdoel x"),
            "unknown command /mdoel. Did you mean /model? /help lists the commands."
        );
        assert!(hint("/prov").contains("Did you mean /provider or /providers?"));
        assert!(hint("/a").contains("Did you mean /agent or /agents?"));
        assert!(hint("/mod").contains("Did you mean /model or /models?"));
        assert_eq!(
            hint("/zzzzzz"),
            "unknown command /zzzzzz. /help lists the commands."
        );
        assert!(hint("/").starts_with("type a command"));
        assert!(hint("hello").starts_with("commands start with /"));
        assert_eq!(ok("/model"), (CommandId::Model, None), "opens the picker");
        for h in ["/provider", "/mdoel", "/zz"] {
            assert!(!hint(h).contains('\n'));
        }
    }

    #[test]
    fn paths_are_messages_not_commands() {
        assert!(is_command("/help"));
        assert!(is_command("  /model x/y"));
        assert!(!is_command("/usr/bin/env is missing"));
        assert!(!is_command("hello /new"));
    }

    #[test]
    fn help_lists_every_command() {
        let text: Vec<String> = help_text().iter().map(Line::plain_text).collect();
        for c in REGISTRY {
            assert!(
                text.iter()
                    .any(|l| l.trim_start().starts_with(&format!("/{}", c.name))),
                "{}",
                c.name
            );
        }
        assert!(text.iter().any(|l| l.contains("/model [model]")));
        assert!(text.iter().any(|l| l.contains("/help [command]")));
        assert!(text.iter().any(|l| l.contains("(also /exit)")));
        // Help texts line up.
        let col = |l: &String, h: &str| l.find(h).unwrap();
        assert_eq!(
            col(&text[1], REGISTRY[0].help),
            col(&text[2], REGISTRY[1].help)
        );
        assert!(
            command_help(lookup("model").unwrap())
                .plain_text()
                .contains("switch")
        );
    }

    fn cands() -> Candidates {
        Candidates {
            providers: vec!["openai".into(), "ollama".into(), "groq".into()],
            models: vec!["gpt-4o".into(), "gpt-4o-mini".into(), "o3".into()],
            agents: vec![
                "Builder".into(),
                "Explorer".into(),
                "Planner".into(),
                "Pirate".into(),
            ],
            custom: vec!["review-pr".into()],
        }
    }

    #[test]
    fn completes_custom_command_names() {
        assert_eq!(
            tab("/rev"),
            Some(("/review-pr".into(), vec!["/review-pr".into()]))
        );
        let (_, options) = tab("/re").unwrap();
        assert_eq!(
            options,
            ["/retry", "/resume", "/redo", "/rewind", "/review-pr"]
        );
        assert!(builtin_names().contains(&"exit"));
    }

    fn tab(input: &str) -> Option<(String, Vec<String>)> {
        let c = complete(input, input.len(), &cands())?;
        let mut out = input.to_owned();
        out.replace_range(c.range, &c.insert);
        Some((out, c.options))
    }

    #[test]
    fn completes_command_names() {
        assert_eq!(tab("/he").unwrap().0, "/help ");
        assert_eq!(tab("/ne").unwrap().0, "/new");
        let (text, options) = tab("/mo").unwrap();
        assert_eq!(text, "/model");
        assert_eq!(options, ["/model", "/models"]);
        assert_eq!(
            tab("/").unwrap().1.len(),
            REGISTRY.len() + 1,
            "the built-ins and the custom one"
        );
        assert_eq!(tab("/x"), None);
        assert_eq!(tab("hello"), None);
    }

    #[test]
    fn completes_arguments() {
        let (text, options) = tab("/model gp").unwrap();
        assert_eq!(text, "/model gpt-4o");
        assert_eq!(options, ["gpt-4o", "gpt-4o-mini"]);
        assert_eq!(tab("/model o").unwrap().0, "/model o3");
        assert_eq!(tab("/agent ex").unwrap().0, "/agent Explorer");
        assert_eq!(tab("/provider o").unwrap().1, ["openai", "ollama"]);
        assert_eq!(tab("/provider o").unwrap().0, "/provider o");
        assert_eq!(tab("/help mod").unwrap().0, "/help model");
        assert_eq!(tab("/model ").unwrap().1.len(), 3);
        assert_eq!(tab("/new x"), None);
        assert_eq!(tab("/model a b"), None);
        assert_eq!(tab("/nope x"), None);
    }

    #[test]
    fn completes_only_at_a_word_end() {
        let cands = cands();
        assert_eq!(complete("/mo del", 3, &cands).unwrap().insert, "/model");
        assert_eq!(complete("/model", 3, &cands), None);
        assert_eq!(complete("/model", 99, &cands), None);
        // A unique name with text after it gets no extra space.
        assert_eq!(complete("/he x", 3, &cands).unwrap().insert, "/help");
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("model", "model"), 0);
        assert_eq!(edit_distance("mdoel", "model"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("日本", "日"), 1);
    }
}
