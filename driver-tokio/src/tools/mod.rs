//! The built-in tools of the async driver.
//!
//! The file, command and skill tools are the blocking driver's, run on tokio's blocking
//! threads (every [`hrns_blocking::Tool`] is a [`Tool`] here; see the impl on
//! [`Tool`]), so each built-in exists once and both drivers behave alike by
//! construction. Only `web_fetch` is this crate's own, on the hyper client.
//!
//! | tool | IO |
//! | --- | --- |
//! | [`ReadFile`], [`ListFiles`], [`WriteFile`], [`EditFile`] | `std::fs` on a blocking thread |
//! | [`RunCommand`] | `std::process` on a blocking thread; killed with its group on cancel or drop |
//! | [`WebFetch`] | the hyper client, redirects followed one by one |
//! | [`LoadSkill`] | none: the skills are given |
//! | [`TaskTool`] | a child session on the parent's [`Client`](crate::Client), as a future |

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

mod task;
mod web_fetch;

pub use hrns_blocking::tools::{
    EditFile, ListFiles, LoadSkill, ReadFile, RunCommand, Skill, WriteFile,
};
pub use task::{CurrentTools, TaskTool};
pub use web_fetch::WebFetch;

use crate::client::HttpClient;
use crate::tool::{Tool, Toolbox};
use std::sync::Arc;

/// Returns a toolbox with every built-in tool: `web_fetch` on `http` (a client that verifies
/// certificates, e.g. `HttpClient::new(&ClientConfig::default())`), and `load_skill` over
/// `skills`, included only when there are skills to load — the blocking driver's list
/// ([`hrns_blocking::tools::builtin_toolbox_with`]).
///
/// Filter it with [`Registry::retain`](hrns_core::tool::Registry::retain) for an agent's tool
/// map, and add your own tools with [`Registry::add`](hrns_core::tool::Registry::add).
pub fn builtin_toolbox(http: HttpClient, skills: Vec<Skill>) -> Toolbox {
    hrns_blocking::tools::builtin_toolbox_with(skills, Arc::new(WebFetch::new(http)), |tool| {
        Arc::new(tool) as Arc<dyn Tool>
    })
}
