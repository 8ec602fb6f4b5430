//! Colours for the terminal, following the original hrns scheme: the harness in blue, errors
//! in red, tool names in red with their arguments in yellow, reasoning in grey. Off when the
//! stream is not a terminal or `NO_COLOR` is set.

use std::io::IsTerminal;

/// A palette that is either real ANSI colours or nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    on: bool,
}

impl Style {
    /// Colours for stderr, when it is a terminal and `NO_COLOR` is not set.
    pub(crate) fn stderr() -> Self {
        Style {
            on: colors_allowed() && std::io::stderr().is_terminal(),
        }
    }

    /// Colours for stdout, when it is a terminal and `NO_COLOR` is not set.
    pub(crate) fn stdout() -> Self {
        Style {
            on: colors_allowed() && std::io::stdout().is_terminal(),
        }
    }

    /// No colours at all.
    #[cfg(test)]
    pub(crate) fn plain() -> Self {
        Style { on: false }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// The harness's own messages.
    pub(crate) fn harness(self, t: &str) -> String {
        self.paint("34", t)
    }
    /// Errors.
    pub(crate) fn error(self, t: &str) -> String {
        self.paint("31", t)
    }
    /// Tool names.
    pub(crate) fn tool(self, t: &str) -> String {
        self.paint("31", t)
    }
    /// Tool arguments.
    pub(crate) fn args(self, t: &str) -> String {
        self.paint("33", t)
    }
    /// Reasoning and other quiet text.
    pub(crate) fn dim(self, t: &str) -> String {
        self.paint("90", t)
    }
    /// Success marks.
    pub(crate) fn ok(self, t: &str) -> String {
        self.paint("32", t)
    }
}

fn colors_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
