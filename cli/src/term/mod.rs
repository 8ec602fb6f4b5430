//! The terminal around every command: text made safe to show, colours, and signals.

pub(crate) mod safe_text;
pub(crate) mod signals;
pub(crate) mod style;
