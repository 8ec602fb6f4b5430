//! The built-in tools on std: thin IO around `hrns_core::tool`.
//!
//! Each tool decodes its arguments with [`decode_args`](hrns_core::tool::args::decode_args), does its file-system, process or
//! network IO here, and leaves every decision and every text to `hrns_core::tool`: paths are
//! confined by [`hrns_core::tool::path`], pages rendered by [`hrns_core::tool::page`], output
//! captured by [`hrns_core::tool::truncate::HeadTail`], and so on. The async driver runs these
//! very tools on blocking threads (it depends on this crate without the `http` feature) and
//! has only its own `web_fetch`; [`builtin_toolbox_with`] is the one list of built-ins.
//!
//! | tool | here | effect |
//! | --- | --- | --- |
//! | `read_file` | [`ReadFile`] | reads any file the user can read, paged, streamed |
//! | `list_files` | [`ListFiles`] | walks a directory honouring .gitignore, filters by glob |
//! | `grep` | [`Grep`] | ripgrep's searcher over the same walk, binary files skipped |
//! | `write_file` | [`WriteFile`] | atomic write inside the workspace |
//! | `edit_file` | [`EditFile`] | exact-match edit inside the workspace, written atomically |
//! | `run_command` | [`RunCommand`] | `sh -c` in its own process group, with a timeout |
//! | `web_fetch` | `WebFetch` (feature `http`) | http(s) GET with a timeout and a size cap |
//! | `load_skill` | [`LoadSkill`] | the body of a skill the CLI discovered |
//! | `task` | `TaskTool` (feature `http`) | a child session (subagent) on the parent's transport |
//!
//! Relative paths are taken from [`ToolContext::workspace`](crate::tool::ToolContext), which
//! must be canonical ([`ToolContext::new`](crate::tool::ToolContext::new) makes it so).

use crate::tool::Tool;
#[cfg(feature = "http")]
use crate::tool::Toolbox;
use hrns_core::tool::{Registry, ToolObject};
use std::sync::Arc;

/// Implements [`Tool`](crate::Tool) for a built-in tool: its spec comes from hrns-core, its
/// arguments are decoded with hrns-core's decoder, and its body — a fn that returns the
/// result, or with `?` a refusal — runs them.
macro_rules! builtin_tool {
    ($tool:ty: $name:expr, $args:ty => $body:ident) => {
        impl $crate::tool::Tool for $tool {
            fn spec(&self) -> hrns_core::tool::ToolSpec {
                hrns_core::tool::builtin::builtin_spec($name)
            }

            fn run(
                &self,
                arguments: &str,
                ctx: &$crate::tool::ToolContext,
            ) -> hrns_core::tool::ToolOutput {
                hrns_core::tool::args::decode_args::<$args>($name, arguments)
                    .map_err(hrns_core::tool::ToolOutput::from)
                    .and_then(|args| $body(self, args, ctx))
                    .unwrap_or_else(|refusal| refusal)
            }
        }
    };
}

mod edit_file;
mod escaped;
mod grep;
mod list_files;
mod load_skill;
mod read_file;
mod run_command;
#[cfg(feature = "http")]
mod task;
mod walk;
#[cfg(feature = "http")]
mod web_fetch;
mod write_file;

pub use edit_file::EditFile;
pub use escaped::end_all_commands;
pub use grep::Grep;
pub use list_files::ListFiles;
pub use load_skill::{LoadSkill, Skill};
pub use read_file::ReadFile;
pub use run_command::RunCommand;
#[cfg(feature = "http")]
pub use task::{CurrentTools, Running, TaskTool};
#[cfg(feature = "http")]
pub use web_fetch::WebFetch;
pub use write_file::WriteFile;

/// Returns a toolbox with all built-in tools; `load_skill` is included only when there are
/// skills to load.
///
/// Filter it with [`Registry::retain`] for an agent's tool map, and add your own tools with
/// [`Registry::add`].
#[cfg(feature = "http")]
pub fn builtin_toolbox(skills: Vec<Skill>) -> Toolbox {
    builtin_toolbox_with(skills, Arc::new(WebFetch::new()), |tool| tool)
}

/// Returns the built-in tools as the tools of any driver, in the order of
/// [`builtin_specs`](hrns_core::tool::builtin::builtin_specs): the std tools of this crate,
/// each turned into the driver's tool by `wrap` (the async driver runs them on blocking
/// threads), and the driver's own `web_fetch` (it needs an HTTP client). `load_skill` is
/// included only when there are skills to load.
///
/// This is the one list of built-in tools; [`builtin_toolbox`] and the async driver's
/// constructor call it.
pub fn builtin_toolbox_with<T: ?Sized + ToolObject>(
    skills: Vec<Skill>,
    web_fetch: Arc<T>,
    wrap: impl Fn(Arc<dyn Tool>) -> Arc<T>,
) -> Registry<T> {
    let mut toolbox = Registry::new();
    toolbox
        .add_arc(wrap(Arc::new(ReadFile)))
        .add_arc(wrap(Arc::new(ListFiles)))
        .add_arc(wrap(Arc::new(Grep)))
        .add_arc(wrap(Arc::new(WriteFile)))
        .add_arc(wrap(Arc::new(EditFile)))
        .add_arc(wrap(Arc::new(RunCommand)))
        .add_arc(web_fetch);
    if !skills.is_empty() {
        toolbox.add_arc(wrap(Arc::new(LoadSkill::new(skills))));
    }
    toolbox
}

#[cfg(test)]
mod test_util {
    use crate::tool::{Tool, ToolContext};
    use hrns_core::tool::ToolOutput;
    use tempfile::TempDir;

    /// A fresh workspace in a temporary directory, and a context for it.
    pub(super) fn workspace() -> (TempDir, ToolContext) {
        let dir = tempfile::tempdir().expect("temp dir");
        let ctx = ToolContext::new(dir.path()).expect("canonical temp dir");
        (dir, ctx)
    }

    /// Calls `tool` with JSON arguments.
    pub(super) fn call(tool: &dyn Tool, ctx: &ToolContext, args: serde_json::Value) -> ToolOutput {
        tool.run(&args.to_string(), ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrns_core::tool::builtin::{LOAD_SKILL, READ_FILE, builtin_specs};

    #[test]
    fn the_toolbox_has_every_builtin_in_order() {
        let names: Vec<String> = builtin_toolbox(Vec::new())
            .specs()
            .into_iter()
            .map(|s| s.name)
            .collect();
        let mut expected: Vec<String> = builtin_specs().into_iter().map(|s| s.name).collect();
        expected.retain(|n| n != LOAD_SKILL);
        assert_eq!(names, expected);

        let skill = Skill::new("s", "does s", "body");
        let toolbox = builtin_toolbox(vec![skill]);
        assert_eq!(toolbox.specs(), builtin_specs());
        assert_eq!(toolbox.get(READ_FILE).unwrap().spec(), builtin_specs()[0]);
    }

    #[test]
    fn bad_arguments_are_results() {
        let (_dir, ctx) = test_util::workspace();
        let toolbox = builtin_toolbox(vec![Skill::new("s", "", "")]);
        for spec in toolbox.specs() {
            let tool = toolbox.get(&spec.name).unwrap();
            for raw in ["[]", "{\"nope\": 1}", "{", "\"x\""] {
                let out = tool.run(raw, &ctx);
                assert!(out.is_error, "{} {raw}: {}", spec.name, out.content);
                assert!(out.content.starts_with(&spec.name), "{}", out.content);
            }
        }
    }
}
