//! The secrets of this run, for everything the CLI prints, logs, records and saves.
//!
//! The session redacts what comes from outside (provider errors, tool outputs) with the same
//! [`Secrets`]; this is the net for everything else on its way out: streamed answer text, JSON
//! events, session and record files, error messages. A process-wide set, because the places
//! that write are many and a secret once known stays secret (a `/connect` adds to it).

use hrns_core::secrets::Secrets;
use std::borrow::Cow;
use std::sync::RwLock;

static SECRETS: RwLock<Option<Secrets>> = RwLock::new(None);

/// Adds `secrets` to the set used by [`redact`], each also as a JSON string holds it: much
/// of what is redacted here is JSON already (`--json` lines, session and record files), where
/// a secret with a `"` or `\` in it is written escaped.
pub(crate) fn remember(secrets: &Secrets) {
    if secrets.is_empty() {
        return;
    }
    if let Ok(mut set) = SECRETS.write() {
        let set = set.get_or_insert_with(Secrets::new);
        set.extend(secrets);
        set.extend(&secrets.json_forms());
    }
}

/// `text` without any known secret (or fragment of one).
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    match SECRETS.read() {
        Ok(set) => match set.as_ref() {
            Some(secrets) => match secrets.redact(text) {
                Cow::Borrowed(_) => Cow::Borrowed(text),
                Cow::Owned(s) => Cow::Owned(s),
            },
            None => Cow::Borrowed(text),
        },
        Err(_) => Cow::Borrowed(text),
    }
}

/// Runs `f` with the known secrets (an empty set before any is known).
pub(crate) fn with_secrets<R>(f: impl FnOnce(&Secrets) -> R) -> R {
    static NONE: std::sync::LazyLock<Secrets> = std::sync::LazyLock::new(Secrets::new);
    match SECRETS.read() {
        Ok(set) => f(set.as_ref().unwrap_or(&NONE)),
        Err(_) => f(&NONE),
    }
}
