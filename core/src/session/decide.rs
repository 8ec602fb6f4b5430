//! What to do with one tool call of an answer: the checks in order are unknown tool,
//! arguments not a JSON object, the same call repeated, then the approval policy.

use super::calls::{CallState, done};
use super::event::{Event, ToolStatus, TurnError};
use super::shared::Shared;
use super::{PolicyDecision, ToolRun};
use crate::sandbox::WebFetchVerdict;
use crate::tool::Effect;
use crate::tool::builtin::WEB_FETCH;

pub(super) fn decide(s: &mut Shared, id: &str, name: &str, arguments: &str) -> CallState {
    let Some(spec) = s.config.tools.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = s.config.tools.iter().map(|t| t.name.as_str()).collect();
        let available = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        };
        return done(
            ToolStatus::UnknownTool,
            format!(
                "There is no tool named `{name}`. Available tools: {available}. Call one of these by its exact name."
            ),
        );
    };
    let effect = spec.effect;
    let trimmed = arguments.trim();
    let parsed = if trimmed.is_empty() {
        Ok(serde_json::Value::Object(Default::default()))
    } else {
        serde_json::from_str::<serde_json::Value>(trimmed)
    };
    let (canonical, url) = match parsed {
        Ok(v @ serde_json::Value::Object(_)) => {
            let url = v.get("url").and_then(|u| u.as_str()).map(str::to_owned);
            (v.to_string(), url)
        }
        Ok(other) => {
            return done(
                ToolStatus::InvalidArguments,
                format!(
                    "The arguments of `{name}` must be a JSON object matching its parameters schema, but they were {}: {}",
                    json_kind(&other),
                    crate::text::shorten(trimmed, 200)
                ),
            );
        }
        Err(e) => {
            return done(
                ToolStatus::InvalidArguments,
                format!(
                    "The arguments of `{name}` are not valid JSON ({e}): {}. Send them again as one JSON object.",
                    crate::text::shorten(trimmed, 200)
                ),
            );
        }
    };
    let signature = format!("{name}\u{0}{canonical}");
    let count = match &s.last_call {
        Some((sig, n)) if *sig == signature => n + 1,
        _ => 1,
    };
    s.last_call = Some((signature, count));
    if count > s.config.max_repeated_calls.saturating_add(1) {
        // The model was told, and made the call again: the turn ends after this answer.
        s.stuck = Some(TurnError::RepeatedCall {
            name: name.to_owned(),
            times: count,
        });
    }
    if count > s.config.max_repeated_calls {
        return done(
            ToolStatus::Repeated,
            format!(
                "Not run: this exact `{name}` call was already made {} times in a row with the same arguments, so its result will not change. Try a different approach or answer the user.",
                count - 1
            ),
        );
    }
    // `update_plan` is answered here: the session keeps the plan and tells the UI.
    if name == crate::plan::UPDATE_PLAN {
        let args: serde_json::Value = serde_json::from_str(&canonical).unwrap_or_default();
        return match crate::plan::Plan::from_arguments(&args) {
            Ok(plan) => {
                s.emit(Event::PlanUpdated {
                    explanation: plan.explanation.clone(),
                    plan: plan.plan.clone(),
                });
                s.plan = Some(plan);
                CallState::Done {
                    status: ToolStatus::Ok,
                    output: crate::tool::ToolOutput::ok(crate::plan::PLAN_UPDATED),
                }
            }
            Err(text) => done(ToolStatus::InvalidArguments, text),
        };
    }
    // A `task` call is approved as the read-only call it is (its child's calls are asked about
    // one by one) but ordered by what its child may do.
    let order = match &s.config.subagents {
        Some(sub) if name == crate::task::TASK_TOOL => {
            crate::task::call_effect(trimmed, sub, s.config.approval)
        }
        _ => effect,
    };
    let run = ToolRun {
        call_id: id.to_owned(),
        name: name.to_owned(),
        arguments: if trimmed.is_empty() {
            "{}".to_owned()
        } else {
            arguments.to_owned()
        },
        effect: order,
        confinement: super::Confinement::Sandboxed,
    };
    if s.denied_tools.contains(name) {
        return done(
            ToolStatus::Denied,
            format!(
                "The user denied every `{name}` call for the rest of this session. Do not call it again; ask the user how to proceed if it is needed."
            ),
        );
    }
    let decision = if s.approved_tools.contains(name) {
        PolicyDecision::Run
    } else if name == WEB_FETCH {
        // A URL is a way out: the sandbox's network rule and `webFetchAllow` decide first.
        match (
            s.config.web_fetch.verdict(url.as_deref()),
            s.config.approval.decide(effect),
        ) {
            (_, PolicyDecision::Deny) => PolicyDecision::Deny,
            (WebFetchVerdict::Listed, _) => PolicyDecision::Run,
            (WebFetchVerdict::Open, decision) => decision,
            (WebFetchVerdict::Closed(_), PolicyDecision::Ask) => PolicyDecision::Ask,
            (WebFetchVerdict::Closed(refusal), PolicyDecision::Run) => {
                return done(ToolStatus::DeniedByPolicy, refusal);
            }
        }
    } else {
        s.config.approval.decide(effect)
    };
    match decision {
        PolicyDecision::Run => CallState::Ready(run),
        PolicyDecision::Ask => CallState::AwaitingApproval {
            run,
            asked: super::calls::Asked::No,
        },
        PolicyDecision::Deny => done(
            ToolStatus::DeniedByPolicy,
            format!(
                "Denied by policy: the session is read-only, so `{name}` (which can {}) may not run. Use read-only tools, or ask the user to allow it.",
                effect_text(effect)
            ),
        ),
    }
}

fn effect_text(effect: Effect) -> &'static str {
    match effect {
        Effect::ReadOnly => "only read",
        Effect::Write => "change files",
        Effect::Exec => "run commands",
        Effect::Network => "reach the network",
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
