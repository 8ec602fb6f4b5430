//! The safety keys of the config file, global and per project.
//!
//! ```json
//! {
//!   "sandbox": "workspace-write",
//!   "sandboxWritableRoots": ["/home/me/.cache/cargo"],
//!   "sandboxNetwork": false,
//!   "envAllow": ["GITHUB_TOKEN"],
//!   "webFetchAllowPrivate": false,
//!   "sandboxUnixSockets": ["/run/user/1000/pulse/native"],
//!   "webFetchAllow": ["docs.rs", "crates.io"],
//!   "sandboxWritableGit": false,
//!   "projects": { "/home/me/src/site": { "sandbox": "danger-full-access" } }
//! }
//! ```
//!
//! A `projects` entry applies to its directory and everything below it (the longest matching
//! path wins); its keys replace the global ones. Projects live in the user's own config, never
//! in a repository, so a cloned project cannot loosen its own sandbox.

use super::{NetworkAccess, SandboxMode};
use crate::tool::protect::GitWrites;
use crate::wire::Extra;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The config keys above, resolved for one workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SafetySettings {
    /// `sandbox`: the policy, when the config sets one.
    pub sandbox: Option<SandboxMode>,
    /// `sandboxWritableRoots`: extra writable roots of `workspace-write`.
    pub writable_roots: Vec<PathBuf>,
    /// `sandboxNetwork`: network for `workspace-write` (default denied).
    pub network: NetworkAccess,
    /// `envAllow`: variables passed to commands although their names look secret.
    pub env_allow: Vec<String>,
    /// `webFetchAllowPrivate`: whether `web_fetch` may fetch loopback, private and link-local
    /// addresses.
    pub web_fetch_private: bool,
    /// `sandboxUnixSockets`: Unix sockets made outside the sandbox that commands may connect
    /// to (absolute paths). Each one is a door out: `docker.sock` there means no sandbox.
    pub unix_sockets: Vec<PathBuf>,
    /// `webFetchAllow`: hosts `web_fetch` may fetch without asking, also when the sandbox
    /// keeps commands off the network (lower case; see [`super::WebFetchPolicy`]).
    pub web_fetch_allow: Vec<String>,
    /// `sandboxWritableGit`: whether the file tools may write inside `.git` (and commands,
    /// where the launcher protects it). Risky: git runs hooks and obeys its config as the
    /// user, outside the sandbox.
    pub writable_git: GitWrites,
}

impl SafetySettings {
    /// Reads the keys from the config's top level (`extra`, the keys the config model does
    /// not name) for `workspace`. A key of the wrong type is an error naming it.
    pub fn from_config(extra: &Extra, workspace: &Path) -> Result<SafetySettings, String> {
        let mut settings = SafetySettings::default();
        settings.apply(extra, "")?;
        if let Some(projects) = extra.get("projects") {
            let projects = projects
                .as_object()
                .ok_or("the config's projects must be an object of directories")?;
            let best = projects
                .iter()
                .filter(|(dir, _)| workspace.starts_with(dir.as_str()))
                .max_by_key(|(dir, _)| dir.len());
            if let Some((dir, entry)) = best {
                let entry = entry
                    .as_object()
                    .ok_or_else(|| format!("projects.{dir} in the config must be an object"))?;
                settings.apply(entry, &format!("projects.{dir}."))?;
            }
        }
        Ok(settings)
    }

    fn apply(&mut self, keys: &Extra, prefix: &str) -> Result<(), String> {
        let wrong = |key: &str, what: &str| format!("{prefix}{key} in the config must be {what}");
        if let Some(v) = keys.get("sandbox") {
            let name = v.as_str().ok_or_else(|| wrong("sandbox", "a string"))?;
            self.sandbox = Some(name.parse().map_err(|e| format!("{prefix}sandbox: {e}"))?);
        }
        if let Some(v) = keys.get("sandboxWritableRoots") {
            self.writable_roots = strings(v)
                .ok_or_else(|| wrong("sandboxWritableRoots", "a list of absolute paths"))?
                .into_iter()
                .map(PathBuf::from)
                .collect();
            if let Some(bad) = self.writable_roots.iter().find(|r| !r.is_absolute()) {
                return Err(format!(
                    "{prefix}sandboxWritableRoots: `{}` is not an absolute path",
                    bad.display()
                ));
            }
        }
        if let Some(v) = keys.get("sandboxNetwork") {
            let on = v
                .as_bool()
                .ok_or_else(|| wrong("sandboxNetwork", "true or false"))?;
            self.network = if on {
                NetworkAccess::Allowed
            } else {
                NetworkAccess::Denied
            };
        }
        if let Some(v) = keys.get("envAllow") {
            self.env_allow =
                strings(v).ok_or_else(|| wrong("envAllow", "a list of variable names"))?;
        }
        if let Some(v) = keys.get("webFetchAllowPrivate") {
            self.web_fetch_private = v
                .as_bool()
                .ok_or_else(|| wrong("webFetchAllowPrivate", "true or false"))?;
        }
        if let Some(v) = keys.get("sandboxUnixSockets") {
            self.unix_sockets = strings(v)
                .ok_or_else(|| wrong("sandboxUnixSockets", "a list of absolute paths"))?
                .into_iter()
                .map(PathBuf::from)
                .collect();
            if let Some(bad) = self.unix_sockets.iter().find(|r| !r.is_absolute()) {
                return Err(format!(
                    "{prefix}sandboxUnixSockets: `{}` is not an absolute path",
                    bad.display()
                ));
            }
        }
        if let Some(v) = keys.get("webFetchAllow") {
            let hosts = strings(v).ok_or_else(|| wrong("webFetchAllow", "a list of host names"))?;
            if let Some(bad) = hosts.iter().find(|h| !is_host_name(h)) {
                return Err(format!(
                    "{prefix}webFetchAllow: `{bad}` is not a host name (write `docs.rs`, not a \
                     URL; no port, path or wildcard)"
                ));
            }
            self.web_fetch_allow = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
        }
        if let Some(v) = keys.get("sandboxWritableGit") {
            let on = v
                .as_bool()
                .ok_or_else(|| wrong("sandboxWritableGit", "true or false"))?;
            self.writable_git = if on {
                GitWrites::Allowed
            } else {
                GitWrites::Refused
            };
        }
        Ok(())
    }
}

/// Whether `host` is a plain host name or IP address as `webFetchAllow` takes it: letters,
/// digits, `-` and `.`, or an IPv6 address in brackets (`[::1]`).
fn is_host_name(host: &str) -> bool {
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => !v6.is_empty() && v6.chars().all(|c| c.is_ascii_hexdigit() || c == ':'),
        None => {
            !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        }
    }
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// The keys of the config's `projects` that are not absolute paths (`src/site`, `~/site`):
/// a workspace is always an absolute path, so such an entry never applies. The caller warns,
/// naming the key and the file; `~` is not expanded.
pub fn relative_project_dirs(extra: &Extra) -> Vec<String> {
    extra
        .get("projects")
        .and_then(Value::as_object)
        .map(|projects| {
            projects
                .keys()
                .filter(|dir| !Path::new(dir).is_absolute())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}
