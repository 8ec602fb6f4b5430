//! The built-in tools on tokio: thin IO around the pure parts in [`hrns_core::tool`].
//!
//! Each tool decodes its arguments, resolves paths and renders its result with hrns-core's
//! helpers, so it behaves and reads exactly like the blocking driver's tool of the same name;
//! only the file system, process and network calls are here. The behaviour they share is
//! described in [`hrns_core::tool`]'s module docs.
//!
//! | tool | IO |
//! | --- | --- |
//! | [`ReadFile`], [`ListFiles`] | `tokio::fs`; the `.gitignore`-aware walk on a blocking thread |
//! | [`WriteFile`], [`EditFile`] | `tokio::fs`, confined to the workspace, replaced atomically |
//! | [`RunCommand`] | `tokio::process`, `sh -c` in its own process group, killed with it |
//! | [`WebFetch`] | the hyper client, redirects followed one by one |
//! | [`LoadSkill`] | none: the skills are given |

/// Implements [`Tool`](crate::Tool) for a built-in tool: its spec comes from hrns-core, its
/// arguments are decoded with hrns-core's decoder, and its body — an async fn that returns the
/// result, or with `?` a refusal — runs them.
macro_rules! builtin_tool {
    ($tool:ty: $name:expr, $args:ty => $body:ident) => {
        impl $crate::tool::Tool for $tool {
            fn spec(&self) -> hrns_core::tool::ToolSpec {
                hrns_core::tool::builtin::builtin_spec($name)
            }

            fn run<'a>(
                &'a self,
                arguments: &'a str,
                ctx: &'a $crate::tool::ToolContext,
            ) -> $crate::tool::ToolFuture<'a> {
                Box::pin(async move {
                    let decoded = hrns_core::tool::args::decode_args::<$args>($name, arguments);
                    let result = match decoded {
                        Ok(args) => $body(self, args, ctx).await,
                        Err(refusal) => Err(refusal.into()),
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
mod skill;

pub use command::RunCommand;
pub use fetch::WebFetch;
pub use files::{EditFile, ListFiles, ReadFile, WriteFile};
pub use hrns_core::skill::Skill;
pub use skill::LoadSkill;

use crate::client::HttpClient;
use crate::tool::Toolbox;

/// Returns a toolbox with every built-in tool: `web_fetch` on `http` (a client that verifies
/// certificates, e.g. `HttpClient::new(&ClientConfig::default())`), and `load_skill` over
/// `skills`, included only when there are skills to load (as in the blocking driver).
///
/// Filter it with [`Registry::retain`](hrns_core::tool::Registry::retain) for an agent's tool map, and add your own tools with
/// [`Toolbox::add`].
pub fn builtin_toolbox(http: HttpClient, skills: Vec<Skill>) -> Toolbox {
    let mut toolbox = Toolbox::new();
    toolbox
        .add(ReadFile)
        .add(ListFiles)
        .add(WriteFile)
        .add(EditFile)
        .add(RunCommand)
        .add(WebFetch::new(http));
    if !skills.is_empty() {
        toolbox.add(LoadSkill::new(skills));
    }
    toolbox
}
