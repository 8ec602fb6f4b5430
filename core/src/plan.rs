//! The `update_plan` tool: the model keeps its plan of a long task there, as Codex's tool of
//! the same name takes it, and the user watches it. The session answers the call itself
//! (no driver runs it): it checks the arguments, keeps the plan, tells the UI with
//! [`Event::PlanUpdated`](crate::session::Event::PlanUpdated), and carries the plan across a
//! compaction.

use crate::tool::{Effect, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The tool's name.
pub const UPDATE_PLAN: &str = "update_plan";
/// Steps a plan may have; a longer one is refused with what to do.
pub const MAX_STEPS: usize = 50;
/// Characters of one step, and of the explanation, at most.
pub const MAX_TEXT_CHARS: usize = 500;
/// What the model is told when its plan was taken.
pub const PLAN_UPDATED: &str = "Plan updated.";

/// Introduces the plan in the summary that replaces a compacted history.
pub const PLAN_KEPT: &str = "The current plan (from update_plan; send the whole plan again with update_plan when it changes):\n";

/// The plan as the model last sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Why the plan is as it is, or what changed (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// The steps in order.
    pub plan: Vec<PlanStep>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// What the step is, in a few words.
    pub step: String,
    /// Where it stands.
    pub status: StepStatus,
}

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on (one step at a time).
    InProgress,
    /// Done.
    Completed,
}

impl StepStatus {
    /// The checkbox of a step in a plan shown as text: `[ ]`, `[~]` or `[x]`.
    pub fn checkbox(self) -> &'static str {
        match self {
            StepStatus::Pending => "[ ]",
            StepStatus::InProgress => "[~]",
            StepStatus::Completed => "[x]",
        }
    }
}

impl Plan {
    /// The plan from a call's arguments (a JSON object), or the text that tells the model what
    /// is wrong with them.
    pub fn from_arguments(arguments: &Value) -> Result<Plan, String> {
        let plan: Plan = serde_json::from_value(arguments.clone()).map_err(|e| {
            format!(
                "The arguments of `{UPDATE_PLAN}` do not match its schema ({e}). Send \
                 {{\"explanation\": \"…\" (optional), \"plan\": [{{\"step\": \"…\", \"status\": \
                 \"pending\" | \"in_progress\" | \"completed\"}}]}}."
            )
        })?;
        if plan.plan.len() > MAX_STEPS {
            return Err(format!(
                "The plan has {} steps; at most {MAX_STEPS} are kept. Group small steps into larger ones.",
                plan.plan.len()
            ));
        }
        if let Some(n) = plan.plan.iter().position(|s| s.step.trim().is_empty()) {
            return Err(format!(
                "Step {} of the plan is empty. Say what each step is.",
                n + 1
            ));
        }
        let long = plan
            .plan
            .iter()
            .map(|s| s.step.as_str())
            .chain(plan.explanation.as_deref())
            .any(|t| t.chars().count() > MAX_TEXT_CHARS);
        if long {
            return Err(format!(
                "A step or the explanation is longer than {MAX_TEXT_CHARS} characters. Keep each to a short sentence."
            ));
        }
        let doing = plan
            .plan
            .iter()
            .filter(|s| s.status == StepStatus::InProgress)
            .count();
        if doing > 1 {
            return Err(format!(
                "{doing} steps are in_progress; at most one step is in progress at a time. Mark the others pending or completed."
            ));
        }
        Ok(plan)
    }

    /// The plan as text for the model (in a compacted history): one `[x] step` line each.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        if let Some(e) = &self.explanation {
            s.push_str(e.trim());
            s.push('\n');
        }
        for step in &self.plan {
            s.push_str(&format!(
                "{} {}\n",
                step.status.checkbox(),
                step.step.trim()
            ));
        }
        s
    }
}

/// The spec of `update_plan`.
pub fn update_plan_spec() -> ToolSpec {
    ToolSpec {
        name: UPDATE_PLAN.to_owned(),
        description: "Keep the plan of a task of several steps, and show it to the user. Send \
                      the whole plan each time: every step with its status. At most one step \
                      is in_progress at a time; mark a step completed when it is done and the \
                      next one in_progress. Not needed for a simple question or a one-step \
                      change."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "explanation": {
                    "type": "string",
                    "description": "Optional: why the plan is so, or what changed in it.",
                },
                "plan": {
                    "type": "array",
                    "description": "The steps, in order.",
                    "maxItems": MAX_STEPS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string", "description": "The step, in a few words."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false,
                    },
                },
            },
            "required": ["plan"],
            "additionalProperties": false,
        }),
        effect: Effect::ReadOnly,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: Value) -> Result<Plan, String> {
        Plan::from_arguments(&v)
    }

    #[test]
    fn a_plan_as_codex_sends_it() {
        let plan = parse(json!({
            "explanation": "two parts",
            "plan": [
                {"step": "read the code", "status": "completed"},
                {"step": "fix the bug", "status": "in_progress"},
                {"step": "run the tests", "status": "pending"},
            ]
        }))
        .unwrap();
        assert_eq!(plan.plan.len(), 3);
        assert_eq!(
            plan.to_text(),
            "two parts\n[x] read the code\n[~] fix the bug\n[ ] run the tests\n"
        );
        assert_eq!(parse(json!({"plan": []})).unwrap().explanation, None);
    }

    #[test]
    fn bad_plans_are_refused_with_what_to_do() {
        let cases = [
            (json!({}), "missing field `plan`"),
            (json!({"plan": "do it"}), "do not match its schema"),
            (
                json!({"plan": [{"step": "x", "status": "done"}]}),
                "unknown variant `done`",
            ),
            (json!({"plan": [{"step": "x"}]}), "missing field `status`"),
            (
                json!({"plan": [{"step": " ", "status": "pending"}]}),
                "Step 1 of the plan is empty",
            ),
            (
                json!({"plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}),
                "at most one step is in progress",
            ),
            (
                json!({"plan": [{"step": "a".repeat(MAX_TEXT_CHARS + 1), "status": "pending"}]}),
                "longer than 500",
            ),
            (
                json!({"plan": vec![json!({"step": "a", "status": "pending"}); MAX_STEPS + 1]}),
                "at most 50 are kept",
            ),
        ];
        for (args, want) in cases {
            let err = parse(args.clone()).unwrap_err();
            assert!(err.contains(want), "{args}: {err}");
        }
    }

    #[test]
    fn the_spec_is_read_only_and_names_the_statuses() {
        let spec = update_plan_spec();
        assert_eq!(spec.name, UPDATE_PLAN);
        assert_eq!(spec.effect, Effect::ReadOnly);
        assert_eq!(
            spec.parameters["properties"]["plan"]["items"]["properties"]["status"]["enum"],
            json!(["pending", "in_progress", "completed"])
        );
    }
}
