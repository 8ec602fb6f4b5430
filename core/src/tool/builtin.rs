//! Names, JSON Schemas, argument types and limits of the built-in tools.
//!
//! The specs here are what the model reads, so their descriptions state behaviour and limits
//! plainly; the limits are constants that the drivers use too, so the description and the
//! behaviour cannot drift apart. Each tool's argument struct mirrors its schema (a test checks
//! that they agree) and is decoded with [`decode_args`](super::args::decode_args).

use super::{Effect, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;

/// Name of the tool that reads a text file.
pub const READ_FILE: &str = "read_file";
/// Name of the tool that lists files.
pub const LIST_FILES: &str = "list_files";
/// Name of the tool that creates or overwrites a file.
pub const WRITE_FILE: &str = "write_file";
/// Name of the tool that replaces exact text in a file.
pub const EDIT_FILE: &str = "edit_file";
/// Name of the tool that runs a shell command.
pub const RUN_COMMAND: &str = "run_command";
/// Name of the tool that fetches a URL.
pub const WEB_FETCH: &str = "web_fetch";
/// Name of the tool that loads a skill's instructions.
pub const LOAD_SKILL: &str = "load_skill";
/// Name of the tool that searches file contents.
pub const GREP: &str = "grep";

/// Seconds `run_command` waits before killing the command, unless told otherwise.
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 120;
/// The largest `timeout_secs` `run_command` honours; larger values are lowered to it.
pub const MAX_COMMAND_TIMEOUT_SECS: u64 = 3600;
/// Characters of stdout, and separately of stderr, that `run_command` returns (head+tail).
pub const DEFAULT_OUTPUT_CHARS: usize = 30_000;
/// How long `run_command` waits, after the shell has exited, for its output pipes to close
/// before it kills the rest of the shell's process group: background processes that still
/// hold the pipes. A background process with its output redirected closes them and is left
/// running.
pub const COMMAND_PIPE_GRACE: Duration = Duration::from_millis(500);
/// How long `run_command` still reads the pipes after killing the process group; a process
/// that left the group (`setsid`) may hold them open for ever, and its output is given up on.
pub const COMMAND_KILL_GRACE: Duration = Duration::from_secs(2);
/// Lines `read_file` returns when no `limit` is given.
pub const READ_FILE_DEFAULT_LINES: u64 = 2000;
/// Characters of one line `read_file` shows; the rest of a longer line is cut.
pub const READ_FILE_MAX_LINE_CHARS: usize = 2000;
/// Characters `read_file` returns at most in one call; paging continues after that.
pub const READ_FILE_MAX_CHARS: usize = 100_000;
/// Paths `list_files` returns at most.
pub const LIST_FILES_CAP: usize = 1000;
/// Bytes of a response body `web_fetch` reads at most.
pub const WEB_FETCH_MAX_BYTES: usize = 5 * 1024 * 1024;
/// Characters of a fetched body `web_fetch` returns at most (head+tail).
pub const WEB_FETCH_MAX_CHARS: usize = 100_000;
/// Seconds `web_fetch` waits for a response before giving up.
pub const WEB_FETCH_TIMEOUT_SECS: u64 = 30;

/// Arguments of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file, relative to the workspace root or absolute.
    pub path: String,
    /// The first line to return, 1-based; default 1.
    pub offset: Option<u64>,
    /// How many lines to return; default [`READ_FILE_DEFAULT_LINES`].
    pub limit: Option<u64>,
}

/// Arguments of `list_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// The directory to list, relative to the workspace root; default the root.
    pub dir: Option<String>,
    /// A glob the paths (relative to `dir`) must match; default all files.
    pub pattern: Option<String>,
}

/// Arguments of `write_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The file to create or overwrite.
    pub path: String,
    /// The complete new content.
    pub content: String,
}

/// Arguments of `edit_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// The file to edit.
    pub path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Whether to replace every occurrence; default `false` (exactly one must exist).
    pub replace_all: Option<bool>,
}

/// Arguments of `run_command`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCommandArgs {
    /// The command line, run with `sh -c`.
    pub command: String,
    /// Seconds before the command is killed; see [`RunCommandArgs::effective_timeout_secs`].
    pub timeout_secs: Option<u64>,
}

impl RunCommandArgs {
    /// Returns the timeout to apply: the requested one, or the default, kept within
    /// 1..=[`MAX_COMMAND_TIMEOUT_SECS`].
    ///
    /// A zero timeout would kill every command at once and a huge one would hang the session,
    /// so out-of-range requests are clamped rather than refused.
    pub fn effective_timeout_secs(&self) -> u64 {
        self.timeout_secs
            .unwrap_or(DEFAULT_COMMAND_TIMEOUT_SECS)
            .clamp(1, MAX_COMMAND_TIMEOUT_SECS)
    }
}

/// Arguments of `web_fetch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFetchArgs {
    /// The http or https URL to GET.
    pub url: String,
}

/// Arguments of `grep`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// The regular expression (Rust regex syntax, as ripgrep).
    pub pattern: String,
    /// A file or directory to search, relative to the workspace root; default the root.
    pub path: Option<String>,
    /// A glob the searched files' paths (or names) must match, such as `*.rs`.
    pub glob: Option<String>,
    /// Match letters regardless of case.
    pub case_insensitive: Option<bool>,
    /// Lines of context before and after each match; see [`GrepArgs::context_lines`].
    pub context: Option<u64>,
}

impl GrepArgs {
    /// The context lines to show: the requested number, at most
    /// [`GREP_MAX_CONTEXT`](super::grep::GREP_MAX_CONTEXT).
    pub fn context_lines(&self) -> usize {
        let max = super::grep::GREP_MAX_CONTEXT;
        self.context
            .map_or(0, |c| usize::try_from(c).unwrap_or(max).min(max))
    }
}

/// Arguments of `load_skill`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSkillArgs {
    /// The skill's name, as listed in the system prompt.
    pub name: String,
}

/// Returns the specs of all built-in tools, in a fixed order.
///
/// The agent's `tools` map filters this list; the drivers implement the behaviour the
/// descriptions promise, using the limits defined in this module.
pub fn builtin_specs() -> Vec<ToolSpec> {
    SPECS.clone()
}

/// The specs, built once: a toolbox asks for each of its tools' spec, and every front end
/// for the list (building them, descriptions and schemas, was a tenth of a short
/// `hrns exec`'s start-up, once per tool).
static SPECS: std::sync::LazyLock<Vec<ToolSpec>> = std::sync::LazyLock::new(|| {
    vec![
        read_file(),
        list_files(),
        grep(),
        write_file(),
        edit_file(),
        run_command(),
        web_fetch(),
        load_skill(),
    ]
});

/// Returns the spec of the built-in tool called `name` (one of this module's name constants),
/// for a driver's implementation of that tool.
///
/// # Panics
///
/// When `name` is not the name of a built-in tool: a bug in the driver, not a mistake of the
/// model.
pub fn builtin_spec(name: &str) -> ToolSpec {
    SPECS
        .iter()
        .find(|spec| spec.name == name)
        .cloned()
        .unwrap_or_else(|| panic!("there is no built-in tool named {name}"))
}

/// Builds an object schema that takes exactly `properties`, of which `required` must be given.
fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn spec(name: &str, effect: Effect, description: String, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description,
        parameters,
        effect,
    }
}

fn read_file() -> ToolSpec {
    let description = format!(
        "Read a text file. Returns its lines prefixed with their 1-based line numbers \
         (`     12\\tcode`; the prefixes are not part of the file). Returns up to \
         {READ_FILE_DEFAULT_LINES} lines, or {READ_FILE_MAX_CHARS} characters, per call: for \
         longer files a note at the end gives the `offset` to continue from. Lines longer than \
         {READ_FILE_MAX_LINE_CHARS} characters are cut. Binary files are refused."
    );
    let parameters = object_schema(
        json!({
            "path": {
                "type": "string",
                "description": "The file to read, relative to the workspace root (or absolute).",
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "The 1-based line number to start from. Default 1.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": format!(
                    "The number of lines to return. Default {READ_FILE_DEFAULT_LINES}."
                ),
            },
        }),
        &["path"],
    );
    spec(READ_FILE, Effect::ReadOnly, description, parameters)
}

fn list_files() -> ToolSpec {
    let description = format!(
        "List the files under a directory, recursively, as sorted paths relative to the \
         workspace root. Files ignored by .gitignore are left out; hidden files are listed, \
         but not the insides of .git. At most {LIST_FILES_CAP} \
         paths are returned; when the list is cut, a note says so: narrow it with `dir` or \
         `pattern`."
    );
    let parameters = object_schema(
        json!({
            "dir": {
                "type": "string",
                "description": "The directory to list, relative to the workspace root. \
                                Default: the workspace root.",
            },
            "pattern": {
                "type": "string",
                "description": "A glob that paths relative to `dir` must match: `*` matches \
                                within one path segment, `**` across segments, `?` one \
                                character, `{rs,toml}` either alternative; e.g. `**/*.rs` or \
                                `src/*.toml`. Default: all files.",
            },
        }),
        &[],
    );
    spec(LIST_FILES, Effect::ReadOnly, description, parameters)
}

fn write_file() -> ToolSpec {
    let description = "Create a file, or overwrite it entirely, with the given content. Missing \
                       parent directories are created, and the file is replaced atomically. The \
                       path must be inside the workspace. To change part of an existing file, \
                       prefer edit_file."
        .to_owned();
    let parameters = object_schema(
        json!({
            "path": {
                "type": "string",
                "description": "The file to write, relative to the workspace root.",
            },
            "content": {
                "type": "string",
                "description": "The complete new content of the file.",
            },
        }),
        &["path", "content"],
    );
    spec(WRITE_FILE, Effect::Write, description, parameters)
}

fn edit_file() -> ToolSpec {
    let description = "Replace exact text in a file. `old_string` must match the file's current \
                       text exactly, including whitespace, indentation and line endings (without \
                       the line-number prefixes read_file shows), and must occur exactly once \
                       unless `replace_all` is true. If it occurs several times, include more \
                       surrounding lines to make it unique. Read the file before editing it. The \
                       path must be inside the workspace."
        .to_owned();
    let parameters = object_schema(
        json!({
            "path": {
                "type": "string",
                "description": "The file to edit, relative to the workspace root.",
            },
            "old_string": {
                "type": "string",
                "description": "The exact text to replace; must not be empty.",
            },
            "new_string": {
                "type": "string",
                "description": "The text to put in its place; must differ from old_string.",
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence instead of exactly one. Default false.",
            },
        }),
        &["path", "old_string", "new_string"],
    );
    spec(EDIT_FILE, Effect::Write, description, parameters)
}

fn run_command() -> ToolSpec {
    let description = format!(
        "Run a shell command with `sh -c COMMAND` in the workspace root and return its exit \
         code, stdout and stderr. The command gets no input (stdin is empty), so do not start \
         interactive programs. It is killed, with everything it started, after \
         {DEFAULT_COMMAND_TIMEOUT_SECS} s unless `timeout_secs` says otherwise (at most \
         {MAX_COMMAND_TIMEOUT_SECS}). stdout and stderr are each truncated to \
         {DEFAULT_OUTPUT_CHARS} characters, keeping the head and the tail. Background processes \
         (`cmd &`) that still write to stdout or stderr when the shell exits are killed; \
         redirect their output (`cmd > log 2>&1 &`) to keep them running."
    );
    let parameters = object_schema(
        json!({
            "command": {
                "type": "string",
                "description": "The command line, as you would type it in a POSIX shell.",
            },
            "timeout_secs": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_COMMAND_TIMEOUT_SECS,
                "description": format!(
                    "Seconds before the command is killed. Default \
                     {DEFAULT_COMMAND_TIMEOUT_SECS}."
                ),
            },
        }),
        &["command"],
    );
    spec(RUN_COMMAND, Effect::Exec, description, parameters)
}

fn web_fetch() -> ToolSpec {
    let description = format!(
        "Fetch a URL with an HTTP GET and return the status, content type and body as text. \
         Only http and https URLs. The body is read up to {} MiB and returned up to \
         {WEB_FETCH_MAX_CHARS} characters (head and tail); binary content such as images, PDFs \
         or archives is refused. Gives up after {WEB_FETCH_TIMEOUT_SECS} s.",
        WEB_FETCH_MAX_BYTES / (1024 * 1024)
    );
    let parameters = object_schema(
        json!({
            "url": {
                "type": "string",
                "description": "The absolute http:// or https:// URL to fetch.",
            },
        }),
        &["url"],
    );
    spec(WEB_FETCH, Effect::Network, description, parameters)
}

fn grep() -> ToolSpec {
    let max = super::grep::GREP_MAX_MATCHES;
    let max_context = super::grep::GREP_MAX_CONTEXT;
    let line_chars = super::grep::GREP_MAX_LINE_CHARS;
    let description = format!(
        "Search file contents with a regular expression (ripgrep's engine and syntax). Files \
         ignored by .gitignore, the insides of .git and binary files are skipped. Results are \
         `path:line: text` for matching lines and `path-line- text` for context lines, at most \
         {max} matching lines (a note says how many more matched) and {line_chars} characters \
         of each line. Use it to find definitions, uses and strings before reading files."
    );
    let parameters = object_schema(
        json!({
            "pattern": {
                "type": "string",
                "description": "The regular expression, e.g. `fn\\s+main` or `TODO|FIXME`. \
                                Escape ( [ . * + ? with a backslash to match them literally.",
            },
            "path": {
                "type": "string",
                "description": "A file or directory to search, relative to the workspace \
                                root. Default: the workspace root.",
            },
            "glob": {
                "type": "string",
                "description": "Only search files whose path (relative to `path`) or name \
                                matches this glob, e.g. `*.rs` or `src/**/*.{ts,tsx}`.",
            },
            "case_insensitive": {
                "type": "boolean",
                "description": "Match regardless of letter case. Default false.",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "description": format!("Lines of context to show before and after each \
                                match, at most {max_context}. Default 0."),
            },
        }),
        &["pattern"],
    );
    spec(GREP, Effect::ReadOnly, description, parameters)
}

fn load_skill() -> ToolSpec {
    let description = "Load the full instructions of one of the skills listed in the system \
                       prompt (the body of its SKILL.md). Load a skill when a task matches its \
                       description, before starting the task."
        .to_owned();
    let parameters = object_schema(
        json!({
            "name": {
                "type": "string",
                "description": "The skill's name, exactly as listed.",
            },
        }),
        &["name"],
    );
    spec(LOAD_SKILL, Effect::ReadOnly, description, parameters)
}

#[cfg(test)]
mod tests {
    use super::super::args::{ArgsError, decode_args};
    use super::*;
    use serde::de::DeserializeOwned;
    use std::collections::HashSet;

    /// Decodes `raw` with the argument type of the tool `name`.
    fn decode_for(name: &str, raw: &str) -> Result<(), ArgsError> {
        fn check<T: DeserializeOwned>(name: &str, raw: &str) -> Result<(), ArgsError> {
            decode_args::<T>(name, raw).map(|_| ())
        }
        match name {
            READ_FILE => check::<ReadFileArgs>(name, raw),
            LIST_FILES => check::<ListFilesArgs>(name, raw),
            WRITE_FILE => check::<WriteFileArgs>(name, raw),
            EDIT_FILE => check::<EditFileArgs>(name, raw),
            RUN_COMMAND => check::<RunCommandArgs>(name, raw),
            WEB_FETCH => check::<WebFetchArgs>(name, raw),
            LOAD_SKILL => check::<LoadSkillArgs>(name, raw),
            GREP => check::<GrepArgs>(name, raw),
            other => panic!("no argument type for {other}"),
        }
    }

    fn sample(schema: &Value) -> Value {
        match schema["type"].as_str().unwrap() {
            "string" => json!("x"),
            "integer" => json!(schema["minimum"].as_u64().unwrap_or(0)),
            "boolean" => json!(true),
            other => panic!("unexpected type {other}"),
        }
    }

    #[test]
    fn specs_have_the_documented_names_and_effects() {
        let specs = builtin_specs();
        let table: Vec<(&str, Effect)> =
            specs.iter().map(|s| (s.name.as_str(), s.effect)).collect();
        assert_eq!(
            table,
            [
                (READ_FILE, Effect::ReadOnly),
                (LIST_FILES, Effect::ReadOnly),
                (GREP, Effect::ReadOnly),
                (WRITE_FILE, Effect::Write),
                (EDIT_FILE, Effect::Write),
                (RUN_COMMAND, Effect::Exec),
                (WEB_FETCH, Effect::Network),
                (LOAD_SKILL, Effect::ReadOnly),
            ]
        );
        let names: HashSet<_> = specs.iter().map(|s| &s.name).collect();
        assert_eq!(names.len(), specs.len());
    }

    #[test]
    fn schemas_are_complete_objects() {
        for spec in builtin_specs() {
            let p = &spec.parameters;
            assert_eq!(p["type"], "object", "{}", spec.name);
            assert_eq!(p["additionalProperties"], false, "{}", spec.name);
            let properties = p["properties"].as_object().unwrap();
            for (field, schema) in properties {
                let described = schema["description"].as_str().unwrap_or("");
                assert!(
                    described.len() > 10,
                    "{}.{field} lacks a description",
                    spec.name
                );
                if schema["type"] == "integer" {
                    assert!(
                        schema["minimum"].is_u64(),
                        "{}.{field} lacks a minimum",
                        spec.name
                    );
                }
            }
            for required in p["required"].as_array().unwrap() {
                assert!(properties.contains_key(required.as_str().unwrap()));
            }
            assert!(
                spec.description.len() > 40,
                "{} lacks a description",
                spec.name
            );
            assert_eq!(spec.to_wire()["function"]["name"], spec.name.as_str());
        }
    }

    #[test]
    fn schemas_agree_with_the_argument_types() {
        for spec in builtin_specs() {
            let properties = spec.parameters["properties"].as_object().unwrap();
            let required: Vec<&str> = spec.parameters["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            let full: serde_json::Map<String, Value> = properties
                .iter()
                .map(|(k, v)| (k.clone(), sample(v)))
                .collect();
            decode_for(&spec.name, &Value::Object(full.clone()).to_string())
                .unwrap_or_else(|e| panic!("{e}"));
            for field in properties.keys() {
                let mut without = full.clone();
                without.remove(field);
                let result = decode_for(&spec.name, &Value::Object(without).to_string());
                if required.contains(&field.as_str()) {
                    assert!(
                        matches!(result, Err(ArgsError::MissingField { field: f, .. }) if f == field),
                        "{}.{field} should be required",
                        spec.name
                    );
                } else {
                    assert_eq!(result, Ok(()), "{}.{field} should be optional", spec.name);
                }
            }
            let mut extra = full.clone();
            extra.insert("bogus".into(), json!(1));
            assert!(matches!(
                decode_for(&spec.name, &Value::Object(extra).to_string()),
                Err(ArgsError::UnknownField { .. })
            ));
        }
    }

    #[test]
    fn descriptions_state_the_limits() {
        let specs = builtin_specs();
        let run = &builtin_spec(RUN_COMMAND).description;
        assert!(
            run.contains("sh -c") && run.contains("120 s") && run.contains("30000"),
            "{run}"
        );
        assert!(specs[0].description.contains("2000 lines"));
        assert!(builtin_spec(WEB_FETCH).description.contains("5 MiB"));
        let grep = builtin_spec(GREP).description;
        assert!(grep.contains("at most 200 matching lines") && grep.contains("300 characters"));
    }

    #[test]
    fn timeout_is_clamped() {
        let args = |t| RunCommandArgs {
            command: "true".into(),
            timeout_secs: t,
        };
        assert_eq!(
            args(None).effective_timeout_secs(),
            DEFAULT_COMMAND_TIMEOUT_SECS
        );
        assert_eq!(args(Some(0)).effective_timeout_secs(), 1);
        assert_eq!(args(Some(30)).effective_timeout_secs(), 30);
        assert_eq!(
            args(Some(u64::MAX)).effective_timeout_secs(),
            MAX_COMMAND_TIMEOUT_SECS
        );
    }
}
