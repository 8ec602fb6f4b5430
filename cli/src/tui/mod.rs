//! The interactive terminal UI's building blocks: styled text and wrapping, the Markdown
//! renderer, the line editor and its history, slash commands, and the lines the UI shows.
//! Each part is pure (no terminal IO) so it can be tested on its own; the event loop draws.

mod app;
mod background;
pub(crate) mod commands;
pub(crate) mod diff_view;
pub(crate) mod editor;
pub(crate) mod history;
pub(crate) mod markdown;
pub(crate) mod mention_complete;
pub(crate) mod queue;
mod screen;
pub(crate) mod status;
pub(crate) mod tasks;
pub(crate) mod text;
pub(crate) mod view;

pub(crate) use app::{Options, run};
