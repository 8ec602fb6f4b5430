//! The answers to `session/request_permission`, as approvals the session understands.
//!
//! `allow_always` is the session's own [`Approval::AlwaysThisTool`] and `reject_always` its
//! [`Approval::NeverThisTool`]; when the editor server builds a new session from the history
//! (the model or agent changes), it carries both over with
//! [`Session::approvals`](crate::session::Session::approvals). `reject_always` is also kept
//! here, per ACP session, so that the client is not asked about a call the session would deny
//! anyway. A subagent's answers stand in its own session. A cancelled
//! request, an error answer or an option hrns did not offer denies the call.

use super::rpc::RpcError;
use super::update::{ALLOW_ALWAYS, ALLOW_ONCE, REJECT_ALWAYS, REJECT_ONCE};
use crate::session::Approval;
use serde_json::Value;
use std::collections::BTreeSet;

/// One session's standing answers.
#[derive(Debug, Default, Clone)]
pub struct Permissions {
    rejected: BTreeSet<String>,
}

impl Permissions {
    /// No standing answers yet.
    pub fn new() -> Self {
        Permissions::default()
    }

    /// The answer already given for every call of `tool` (`reject_always`), if any: then the
    /// client is not asked.
    pub fn standing(&self, tool: &str) -> Option<Approval> {
        self.rejected
            .contains(tool)
            .then_some(Approval::NeverThisTool)
    }

    /// The approval for the client's answer about a call of `tool`.
    pub fn answer(&mut self, tool: &str, answer: Result<&Value, &RpcError>) -> Approval {
        let outcome = match answer {
            Ok(result) => result.get("outcome"),
            Err(e) => {
                return Approval::Deny {
                    reason: Some(format!("the editor could not ask the user: {}", e.message)),
                };
            }
        };
        let kind = outcome
            .and_then(|o| o.get("outcome"))
            .and_then(Value::as_str);
        let option = outcome
            .and_then(|o| o.get("optionId"))
            .and_then(Value::as_str);
        match (kind, option) {
            (Some("selected"), Some(ALLOW_ONCE)) => Approval::Once,
            (Some("selected"), Some(ALLOW_ALWAYS)) => Approval::AlwaysThisTool,
            (Some("selected"), Some(REJECT_ONCE)) => Approval::Deny { reason: None },
            (Some("selected"), Some(REJECT_ALWAYS)) => {
                self.rejected.insert(tool.to_owned());
                Approval::NeverThisTool
            }
            (Some("cancelled"), _) => Approval::Deny {
                reason: Some("the permission request was cancelled".into()),
            },
            _ => Approval::Deny {
                reason: Some(
                    "the editor's answer to the permission request was not understood".into(),
                ),
            },
        }
    }
}
