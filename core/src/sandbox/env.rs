//! Which environment variables a command or an MCP server never sees.
//!
//! Three rules withhold a variable, each for its own reason:
//! - its name looks like a secret's ([`is_secret_name`]): keys, tokens, passwords;
//! - its value is a URL with a password in it ([`has_url_password`]), whatever the name
//!   (`DATABASE_URL=postgres://u:pw@h/db`);
//! - it is a handle to a service outside the sandbox ([`SERVICE_HANDLES`]): a terminal
//!   multiplexer, the session bus, an agent holding keys, a display, a container daemon.
//!   Each such service runs what it is asked to with the user's full rights, so a command
//!   that reaches it is out of the sandbox (`tmux new-window 'echo x >> ~/.bashrc'`).
//!   Withholding the variable is not the whole defence (the socket can be guessed; the
//!   launcher refuses connections to sockets made outside the sandbox), but it removes the
//!   signpost, and under `danger-full-access`, which has no launcher, it is all there is.
//!
//! The user passes any of them with `envAllow`.

/// Parts of a variable name that mark it as a secret wherever they appear in the name,
/// compared without regard to case (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `PGPASSWORD`,
/// `SLACK_WEBHOOK_URL`, `NPM_AUTH`…). `AUTH` as part of the word `AUTHOR`
/// (`GIT_AUTHOR_NAME`) does not count; `AUTHORIZATION` does.
pub const SECRET_NAME_PARTS: [&str; 8] = [
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "WEBHOOK",
];

/// Endings of a variable name that mark it as a secret, compared without regard to case:
/// `MYSQL_PWD` (a password), `GH_PAT` (a personal access token), `SENTRY_DSN` (a data
/// source name, which carries its key). Only as endings: `PWD` alone is the working
/// directory, and `PATH` merely starts like `PAT`.
pub const SECRET_NAME_ENDINGS: [&str; 3] = ["_PWD", "_PAT", "_DSN"];

/// Variables that lead to a service outside the sandbox, withheld unless allowed (exact
/// names). The services run what a client asks with the user's rights, so each is a way out:
///
/// | variables | service |
/// | --- | --- |
/// | `TMUX`, `TMUX_PANE`, `STY`, `ZELLIJ`, `ZELLIJ_SESSION_NAME` | terminal multiplexers (tmux, screen, zellij): new windows run commands |
/// | `KITTY_LISTEN_ON`, `WEZTERM_UNIX_SOCKET`, `NVIM`, `NVIM_LISTEN_ADDRESS`, `EMACS_SOCKET_NAME`, `VSCODE_IPC_HOOK_CLI`, `VSCODE_GIT_IPC_HANDLE` | terminals and editors that take remote commands |
/// | `DBUS_SESSION_BUS_ADDRESS`, `DBUS_SYSTEM_BUS_ADDRESS` | the D-Bus buses (systemd user units run anything) |
/// | `SSH_AUTH_SOCK`, `SSH_AGENT_PID`, `GPG_AGENT_INFO`, `KRB5CCNAME` | agents and caches holding keys and tickets |
/// | `DISPLAY`, `WAYLAND_DISPLAY`, `XAUTHORITY`, `SWAYSOCK`, `I3SOCK`, `HYPRLAND_INSTANCE_SIGNATURE`, `NIRI_SOCKET` | the display and window managers (typing into any window, `swaymsg exec`) |
/// | `DOCKER_HOST`, `CONTAINER_HOST` | container daemons (a container with `/` mounted is root) |
pub const SERVICE_HANDLES: [&str; 27] = [
    "TMUX",
    "TMUX_PANE",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "EMACS_SOCKET_NAME",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "KRB5CCNAME",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "SWAYSOCK",
    "I3SOCK",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "NIRI_SOCKET",
    "DOCKER_HOST",
    "CONTAINER_HOST",
];

/// Whether a variable name looks like it holds a secret: it contains one of
/// [`SECRET_NAME_PARTS`] or ends with one of [`SECRET_NAME_ENDINGS`], any case.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_ENDINGS.iter().any(|end| upper.ends_with(end))
        || SECRET_NAME_PARTS
            .iter()
            .any(|part| contains_part(&upper, part))
}

/// Whether `upper` contains `part`; `AUTH` counts only where it is not the start of the
/// word `AUTHOR` standing alone (followed by the end of the name or `_`).
fn contains_part(upper: &str, part: &str) -> bool {
    if part != "AUTH" {
        return upper.contains(part);
    }
    upper.match_indices(part).any(|(at, _)| {
        let after = &upper[at + part.len()..];
        !(after == "OR" || after.starts_with("OR_"))
    })
}

/// Whether `name` is one of [`SERVICE_HANDLES`] (exact, as the environment compares).
pub fn is_service_handle(name: &str) -> bool {
    SERVICE_HANDLES.contains(&name)
}

/// Whether `value` holds a URL with a password in it (`postgres://user:pw@host/db`,
/// `https://u:p@proxy:3128`), anywhere in it: a list of URLs counts too. A user without a
/// password (`ssh://git@host`) and an `@` in a path or query do not count.
pub fn has_url_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, sep)| {
        let rest = &value[at + sep.len()..];
        let end = rest
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(rest.len());
        rest[..end]
            .rsplit_once('@')
            .and_then(|(userinfo, _host)| userinfo.split_once(':'))
            .is_some_and(|(_user, password)| !password.is_empty())
    })
}

/// Why a variable is withheld ([`EnvPolicy::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvVerdict {
    /// Passed on.
    Passes,
    /// The provider's `keyEnv`, or another variable the caller withholds by name.
    WithheldByName,
    /// Its name looks like a secret's ([`is_secret_name`]).
    SecretName,
    /// Its value is a URL with a password ([`has_url_password`]).
    UrlWithPassword,
    /// A handle to a service outside the sandbox ([`SERVICE_HANDLES`]).
    ServiceHandle,
}

/// The rules for the environment of commands and MCP servers: secret-looking names, values
/// that are URLs with passwords, handles to outside services and the provider's `keyEnv`
/// are withheld; names on the allow-list pass anyway.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Variables withheld whatever their names (the provider's `keyEnv`).
    pub withheld: Vec<String>,
    /// Variables passed even though their names look secret (`envAllow` in the config).
    pub allowed: Vec<String>,
}

impl EnvPolicy {
    /// Whether the variable `name` with `value` is passed on ([`EnvPolicy::verdict`]).
    pub fn passes(&self, name: &str, value: &str) -> bool {
        self.verdict(name, value) == EnvVerdict::Passes
    }

    /// What happens to the variable `name` with `value`. The allow-list wins over
    /// everything, then `withheld`, [`is_secret_name`], [`is_service_handle`] and
    /// [`has_url_password`] keep a variable back. Names compare exactly.
    pub fn verdict(&self, name: &str, value: &str) -> EnvVerdict {
        if self.allowed.iter().any(|a| a == name) {
            EnvVerdict::Passes
        } else if self.withheld.iter().any(|w| w == name) {
            EnvVerdict::WithheldByName
        } else if is_secret_name(name) {
            EnvVerdict::SecretName
        } else if is_service_handle(name) {
            EnvVerdict::ServiceHandle
        } else if has_url_password(value) {
            EnvVerdict::UrlWithPassword
        } else {
            EnvVerdict::Passes
        }
    }
}
