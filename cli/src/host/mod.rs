//! What every front end shares around a conversation: the secrets it redacts, the session log it
//! writes, the diffs it shows, its subagents and its recordings.

pub(crate) mod checkpoints;
pub(crate) mod conversation;
pub(crate) mod diff;
pub(crate) mod record;
pub(crate) mod redact;
pub(crate) mod sessions;
pub(crate) mod subagents;
