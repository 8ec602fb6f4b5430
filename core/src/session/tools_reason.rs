//! Why the tools offered to the model are being replaced ([`super::Session::handle_tools_changed`]), and
//! whether that is news to people even when the offered set stays the same.

/// What [`super::Session::handle_tools_changed`] does when the new set equals the one offered before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenUnchanged {
    /// Nothing: a replacement that changes nothing is not news (the model's tools and the
    /// requests stay as they were).
    #[default]
    Quiet,
    /// Still emits [`super::Event::ToolsChanged`], with empty lists: the reason is news to
    /// people although the model's tools did not change — an MCP server stopped whose tools
    /// were all filtered out (a read-only agent, an agent's tool map), so the user is still
    /// told once which server stopped and why.
    Report,
}

/// Why the tools are replaced, for people (redacted like all output), and whether it is
/// reported when the set does not change. Made from a `&str` or `String` it is
/// [`WhenUnchanged::Quiet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsReason {
    /// Why, for people (`MCP server github stopped (…)`).
    pub text: String,
    /// What happens when the offered set stays the same.
    pub when_unchanged: WhenUnchanged,
}

impl ToolsReason {
    /// A reason that is reported even when the offered set stays the same.
    pub fn news(text: impl Into<String>) -> Self {
        ToolsReason {
            text: text.into(),
            when_unchanged: WhenUnchanged::Report,
        }
    }
}

impl From<String> for ToolsReason {
    fn from(text: String) -> Self {
        ToolsReason {
            text,
            when_unchanged: WhenUnchanged::Quiet,
        }
    }
}

impl From<&String> for ToolsReason {
    fn from(text: &String) -> Self {
        text.clone().into()
    }
}

impl From<&str> for ToolsReason {
    fn from(text: &str) -> Self {
        text.to_owned().into()
    }
}
