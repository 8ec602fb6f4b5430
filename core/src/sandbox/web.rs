//! `web_fetch` as part of the sandbox: a URL is a way out.
//!
//! A command kept off the network can still read a secret and hand it to the model, and the
//! model can put it in a URL for `web_fetch`, which runs in hrns, outside the sandbox. So
//! when the sandbox keeps commands off the network (`read-only`, or `workspace-write`
//! without `"sandboxNetwork": true`), `web_fetch` is held to the same promise:
//!
//! | approval | host on `webFetchAllow` | other hosts |
//! | --- | --- | --- |
//! | `auto` | fetched | refused, naming `sandboxNetwork` and `webFetchAllow` |
//! | `ask` | fetched without asking | asked |
//! | `read-only` | refused (as every call with effects) | refused |
//!
//! With the network on (or `danger-full-access`), a listed host is still fetched without
//! asking, and other hosts follow the approval policy as before. Under the closed rule a
//! redirect is followed only to a listed host; to any other, the fetch stops and says where
//! it leads, so that the model can ask for that URL, which is then decided like any other.

use super::{NetworkAccess, SandboxMode};
use crate::tool::ToolOutput;
use crate::tool::fetch::host_and_port;

/// Whether `web_fetch` is held to the sandbox's network rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WebFetchNetwork {
    /// Commands may use the network, so `web_fetch` follows the approval policy alone (the
    /// library's default).
    #[default]
    Open,
    /// Commands are kept off the network: `web_fetch` reaches listed hosts only, unless the
    /// user approves a call.
    Closed,
}

impl WebFetchNetwork {
    /// The rule for a sandbox of `mode` with commands' `network`: closed for `read-only`, and
    /// for `workspace-write` without network.
    pub fn for_sandbox(mode: SandboxMode, network: NetworkAccess) -> Self {
        match (mode, network) {
            (SandboxMode::ReadOnly, _) | (SandboxMode::WorkspaceWrite, NetworkAccess::Denied) => {
                WebFetchNetwork::Closed
            }
            (SandboxMode::WorkspaceWrite, NetworkAccess::Allowed)
            | (SandboxMode::DangerFullAccess, _) => WebFetchNetwork::Open,
        }
    }
}

/// Where `web_fetch` may go: the network rule and the hosts listed in `webFetchAllow`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebFetchPolicy {
    /// Whether the sandbox's network rule applies.
    pub network: WebFetchNetwork,
    /// Hosts fetched without asking (`webFetchAllow`), lower case; IPv6 addresses in
    /// brackets (`[::1]`). Exact names: `docs.rs` does not cover `api.docs.rs`.
    pub allow: Vec<String>,
}

/// What the policy says about one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebFetchVerdict {
    /// The host is listed: fetch it without asking.
    Listed,
    /// The network rule does not apply: the approval policy decides.
    Open,
    /// Closed and not listed: asked under `ask`, refused under `auto` with this text.
    Closed(String),
}

impl WebFetchPolicy {
    /// Whether `host` (as [`host_and_port`] gives it: IPv6 without brackets) is listed; case
    /// and one trailing dot do not matter.
    pub fn lists(&self, host: &str) -> bool {
        let host = host.strip_suffix('.').unwrap_or(host);
        self.allow.iter().any(|entry| {
            let entry = entry
                .strip_prefix('[')
                .and_then(|e| e.strip_suffix(']'))
                .unwrap_or(entry);
            entry.eq_ignore_ascii_case(host)
        })
    }

    /// The verdict for a call's `url` (`None` or unparsable: not listed; the tool reports a
    /// bad URL itself when it runs).
    pub fn verdict(&self, url: Option<&str>) -> WebFetchVerdict {
        let host = url.and_then(|u| host_and_port(u).ok()).map(|(h, _)| h);
        if host.as_deref().is_some_and(|h| self.lists(h)) {
            return WebFetchVerdict::Listed;
        }
        match self.network {
            WebFetchNetwork::Open => WebFetchVerdict::Open,
            WebFetchNetwork::Closed => WebFetchVerdict::Closed(format!(
                "Denied by policy: web_fetch of {} is refused because the sandbox keeps commands \
                 off the network (\"sandboxNetwork\" is off, or the sandbox is read-only), and a \
                 URL could carry what they read out of the machine. Work without it, or ask the \
                 user to list the host in \"webFetchAllow\" or to set \"sandboxNetwork\": true \
                 in the hrns config.",
                host.map_or_else(|| "this URL".to_owned(), |h| format!("host {h}"))
            )),
        }
    }

    /// Whether `web_fetch` may follow a redirect from `from` to `to` (both URLs): always when
    /// open; when closed, only to a listed host, else the result that ends the fetch and
    /// names the target, so that the model can ask for it (and the policy decide on it).
    pub fn check_redirect(&self, from: &str, to: &str) -> Result<(), ToolOutput> {
        match self.network {
            WebFetchNetwork::Open => Ok(()),
            WebFetchNetwork::Closed => {
                let listed = host_and_port(to).is_ok_and(|(h, _)| self.lists(&h));
                if listed {
                    Ok(())
                } else {
                    Err(ToolOutput::error(format!(
                        "web_fetch: {from} redirects to {to}, which is not on \"webFetchAllow\"; \
                         not followed, since the sandbox keeps commands off the network. Call \
                         web_fetch with that URL if you need it (it is decided like any other)."
                    )))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(allow: &[&str]) -> WebFetchPolicy {
        WebFetchPolicy {
            network: WebFetchNetwork::Closed,
            allow: allow.iter().map(|h| h.to_string()).collect(),
        }
    }

    #[test]
    fn the_network_rule_follows_the_sandbox() {
        use NetworkAccess::{Allowed, Denied};
        use SandboxMode::{DangerFullAccess, ReadOnly, WorkspaceWrite};
        let table = [
            (ReadOnly, Denied, WebFetchNetwork::Closed),
            (ReadOnly, Allowed, WebFetchNetwork::Closed),
            (WorkspaceWrite, Denied, WebFetchNetwork::Closed),
            (WorkspaceWrite, Allowed, WebFetchNetwork::Open),
            (DangerFullAccess, Denied, WebFetchNetwork::Open),
            (DangerFullAccess, Allowed, WebFetchNetwork::Open),
        ];
        for (mode, network, expected) in table {
            assert_eq!(
                WebFetchNetwork::for_sandbox(mode, network),
                expected,
                "{mode} {network:?}"
            );
        }
        assert_eq!(WebFetchPolicy::default().network, WebFetchNetwork::Open);
    }

    #[test]
    fn listed_hosts_match_exactly_whatever_the_case() {
        let p = closed(&["docs.rs", "127.0.0.1", "[::1]"]);
        for url in [
            "https://docs.rs/serde",
            "https://DOCS.RS./x",
            "http://user:pw@docs.rs:8080/",
            "http://127.0.0.1:9/x",
            "http://[::1]:8/x",
        ] {
            assert_eq!(p.verdict(Some(url)), WebFetchVerdict::Listed, "{url}");
        }
        for url in [
            "https://api.docs.rs/",
            "https://docs.rs.evil.example/",
            "https://evil.example/?h=docs.rs",
            "https://evil.example/docs.rs",
            "https://docs.rs@evil.example/",
            "ftp://docs.rs/",
            "not a url",
        ] {
            assert!(
                matches!(p.verdict(Some(url)), WebFetchVerdict::Closed(_)),
                "{url}"
            );
        }
        assert!(matches!(p.verdict(None), WebFetchVerdict::Closed(_)));
    }

    #[test]
    fn closed_refusals_name_the_keys_and_open_leaves_it_to_approval() {
        let WebFetchVerdict::Closed(text) = closed(&[]).verdict(Some("https://evil.example/k"))
        else {
            panic!("closed");
        };
        assert!(text.contains("host evil.example"), "{text}");
        assert!(text.contains("\"sandboxNetwork\""), "{text}");
        assert!(text.contains("\"webFetchAllow\""), "{text}");
        let open = WebFetchPolicy {
            network: WebFetchNetwork::Open,
            allow: vec!["docs.rs".into()],
        };
        assert_eq!(
            open.verdict(Some("https://evil.example/")),
            WebFetchVerdict::Open
        );
        assert_eq!(
            open.verdict(Some("https://docs.rs/")),
            WebFetchVerdict::Listed
        );
    }

    #[test]
    fn redirects_leave_the_list_only_when_open() {
        let p = closed(&["docs.rs"]);
        assert_eq!(
            p.check_redirect("https://docs.rs/a", "https://docs.rs/b"),
            Ok(())
        );
        let refused = p
            .check_redirect("https://docs.rs/a", "https://evil.example/?k=1")
            .unwrap_err();
        assert!(refused.is_error);
        assert!(
            refused
                .content
                .contains("redirects to https://evil.example/?k=1"),
            "{}",
            refused.content
        );
        let open = WebFetchPolicy::default();
        assert_eq!(
            open.check_redirect("https://a/", "https://evil.example/"),
            Ok(())
        );
    }
}
