//! The built-in tools on tokio: thin IO around the pure parts in [`hrns_core::tool`].
//!
//! Each tool decodes its arguments, resolves paths and renders its result with hrns-core's
//! helpers, so it behaves and reads exactly like the blocking driver's tool of the same name;
//! only the file system, process and network calls are here. See the table in the project's
//! design notes for each tool's limits.
//!
//! | tool | IO |
//! | --- | --- |
//! | [`ReadFile`], [`ListFiles`] | `tokio::fs`; the `.gitignore`-aware walk on a blocking thread |
//! | [`WriteFile`], [`EditFile`] | `tokio::fs`, confined to the workspace, replaced atomically |
//! | [`RunCommand`] | `tokio::process`, `sh -c` in its own process group, killed with it |
//! | [`WebFetch`] | the hyper client |
//! | [`LoadSkill`] | `tokio::fs` |

/// Implements [`Tool`](crate::Tool) for a built-in tool: its spec comes from hrns-core, its
/// arguments are decoded with hrns-core's decoder, and its body — an async fn that returns the
/// result, or with `?` a refusal — runs them.
macro_rules! builtin_tool {
    ($tool:ty: $name:expr, $args:ty => $body:ident) => {
        impl $crate::tool::Tool for $tool {
            fn spec(&self) -> hrns_core::tool::ToolSpec {
                super::spec($name)
            }

            fn run<'a>(
                &'a self,
                arguments: &'a str,
                ctx: &'a $crate::tool::ToolContext,
            ) -> $crate::tool::ToolFuture<'a> {
                Box::pin(async move {
                    let result = match super::args::<$args>($name, arguments) {
                        Ok(args) => $body(self, args, ctx).await,
                        Err(refusal) => Err(refusal),
                    };
                    result.unwrap_or_else(|refusal| refusal)
                })
            }
        }
    };
}

mod command;
mod fetch;
mod files;
mod paths;
mod skill;

pub use command::RunCommand;
pub use fetch::WebFetch;
pub use files::{EditFile, ListFiles, ReadFile, WriteFile};
pub use skill::LoadSkill;

use crate::client::HttpClient;
use crate::tool::Toolbox;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::ToolSpec;
use hrns_core::tool::args::decode_args;
use hrns_core::tool::builtin::builtin_specs;
use serde::de::DeserializeOwned;
use std::path::PathBuf;

/// A toolbox with every built-in tool: `web_fetch` on `http` (a client that verifies
/// certificates, e.g. `HttpClient::new(&ClientConfig::default())`), `load_skill` over `skills`
/// (each a name and the path of its SKILL.md).
pub fn builtin_toolbox(http: HttpClient, skills: Vec<(String, PathBuf)>) -> Toolbox {
    let mut toolbox = Toolbox::new();
    toolbox
        .add(ReadFile)
        .add(ListFiles)
        .add(WriteFile)
        .add(EditFile)
        .add(RunCommand)
        .add(WebFetch::new(http))
        .add(LoadSkill::new(skills));
    toolbox
}

/// The built-in spec called `name`.
fn spec(name: &str) -> ToolSpec {
    builtin_specs()
        .into_iter()
        .find(|s| s.name == name)
        .expect("every built-in tool has a spec in hrns-core")
}

/// Decodes a call's arguments; a mistake becomes the result the model sees.
fn args<T: DeserializeOwned>(tool: &str, raw: &str) -> Result<T, ToolOutput> {
    decode_args(tool, raw).map_err(|e| ToolOutput::error(e.to_string()))
}
