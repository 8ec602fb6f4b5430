//! The approval questions of subagents, kept by the parent session: a child's question is
//! one more call state of the parent's `task` call, keyed by (parent call id, child call id).
//! It comes out of the parent's poll (as the child's [`Event::ApprovalRequested`] inside an
//! [`Event::Child`]), the owner answers it on the path it answers the parent's own questions
//! ([`Question`], [`Session::handle_answer`]), and the answer leaves the session as
//! [`Action::AnswerChild`], which the driver hands to the waiting child. A question whose
//! parent call no longer runs (it was stopped, or the turn was cancelled) is answered with a
//! denial by the session itself, so no child waits for an answer that cannot come.

use super::{Action, Approval, Event, Session, SessionError, ToolRun};

/// A call that waits for the owner's answer: one of the session's own, or one of a subagent
/// that a running `task` call drives. A front end has one approval path for both: it shows
/// the call ([`Question::name`], [`Question::arguments`], and who asks: [`Question::agent`])
/// and hands the answer to [`Session::handle_answer`] (or its driver's `handle_answer`).
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// The session's own call ([`Event::ApprovalRequested`], [`Session::asked`]).
    Call(ToolRun),
    /// A subagent's call ([`Session::child_questions`]).
    Child(ChildQuestion),
}

/// A subagent's call waiting for the owner's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildQuestion {
    /// The id of the parent's `task` call whose child asks.
    pub parent_call_id: String,
    /// The child's agent, so the question can say who asks.
    pub agent: String,
    /// The child's call id.
    pub call_id: String,
    /// The tool the child calls.
    pub name: String,
    /// The arguments text the child's model wrote.
    pub arguments: String,
}

impl Question {
    /// The call id, in the asking session.
    pub fn call_id(&self) -> &str {
        match self {
            Question::Call(run) => &run.call_id,
            Question::Child(q) => &q.call_id,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        match self {
            Question::Call(run) => &run.name,
            Question::Child(q) => &q.name,
        }
    }

    /// The arguments text.
    pub fn arguments(&self) -> &str {
        match self {
            Question::Call(run) => &run.arguments,
            Question::Child(q) => &q.arguments,
        }
    }

    /// The subagent that asks, or `None` for the session's own call.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Question::Call(_) => None,
            Question::Child(q) => Some(&q.agent),
        }
    }

    /// The question a [`Event::ApprovalRequested`] or a child's (inside [`Event::Child`])
    /// asks, if the session still waits for its answer: a question cancelled meanwhile is not
    /// asked any more.
    pub fn pending_in(session: &Session, event: &Event) -> Option<Question> {
        if let Event::ApprovalRequested { id, .. } = event {
            return session
                .asked()
                .filter(|run| &run.call_id == id)
                .cloned()
                .map(Question::Call);
        }
        let Event::Child(child) = event else {
            return None;
        };
        let Event::ApprovalRequested { id, .. } = &child.event else {
            return None;
        };
        session
            .child_questions()
            .iter()
            .find(|q| q.parent_call_id == child.parent_call_id && &q.call_id == id)
            .cloned()
            .map(Question::Child)
    }

    /// Whether `event` asks a question (the parent's or a child's): a front end that shows a
    /// step's events and asks after them ends a batch there.
    pub fn asked_by(event: &Event) -> bool {
        if let Event::Child(child) = event {
            return matches!(child.event, Event::ApprovalRequested { .. });
        }
        matches!(event, Event::ApprovalRequested { .. })
    }
}

/// The pending child questions of one session, in the order they were asked.
#[derive(Debug, Default)]
pub(super) struct ChildQuestions(Vec<ChildQuestion>);

impl ChildQuestions {
    pub(super) fn all(&self) -> &[ChildQuestion] {
        &self.0
    }

    pub(super) fn push(&mut self, question: ChildQuestion) {
        self.0.push(question);
    }

    /// Takes the question (parent, call), if it is pending.
    pub(super) fn take(&mut self, parent_call_id: &str, call_id: &str) -> Option<ChildQuestion> {
        let i = self
            .0
            .iter()
            .position(|q| q.parent_call_id == parent_call_id && q.call_id == call_id)?;
        Some(self.0.remove(i))
    }

    /// Answers with a denial, and forgets, every question whose parent call does not run any
    /// more (`runs` says which do): its child is being stopped, and must not wait.
    pub(super) fn settle(&mut self, runs: impl Fn(&str) -> bool, answers: impl FnMut(Action)) {
        if self.0.is_empty() {
            return;
        }
        let mut answers = answers;
        self.0.retain(|q| {
            let keep = runs(&q.parent_call_id);
            if !keep {
                answers(Action::AnswerChild {
                    parent_call_id: q.parent_call_id.clone(),
                    call_id: q.call_id.clone(),
                    approval: Approval::Deny {
                        reason: Some(PARENT_STOPPED.to_owned()),
                    },
                });
            }
            keep
        });
    }
}

/// Why a child's question is denied when its parent call stopped before it was answered.
pub const PARENT_STOPPED: &str =
    "the task that ran this subagent was stopped before anyone answered";

impl SessionError {
    pub(super) fn child_question(parent_call_id: &str, call_id: &str) -> Self {
        SessionError::UnknownChildQuestion {
            parent_call_id: parent_call_id.to_owned(),
            call_id: call_id.to_owned(),
        }
    }
}
