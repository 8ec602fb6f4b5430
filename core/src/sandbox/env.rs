//! Which environment variables a command or an MCP server never sees.

/// Parts of a variable name that mark it as a secret, compared without regard to case
/// (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`…).
pub const SECRET_NAME_PARTS: [&str; 6] =
    ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Whether a variable name looks like it holds a secret (contains one of
/// [`SECRET_NAME_PARTS`], any case).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}

/// The rules for the environment of commands and MCP servers: secret-looking names and the
/// provider's `keyEnv` are withheld; names on the allow-list pass anyway.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Variables withheld whatever their names (the provider's `keyEnv`).
    pub withheld: Vec<String>,
    /// Variables passed even though their names look secret (`envAllow` in the config).
    pub allowed: Vec<String>,
}

impl EnvPolicy {
    /// Whether the variable `name` is passed on. The allow-list wins over everything, then
    /// `withheld` and [`is_secret_name`] keep a variable back. Names compare exactly.
    pub fn passes(&self, name: &str) -> bool {
        if self.allowed.iter().any(|a| a == name) {
            return true;
        }
        !(self.withheld.iter().any(|w| w == name) || is_secret_name(name))
    }
}
