//! What a secret is: the one definition every part of hrns redacts by (README, "Safety",
//! says the same in words).
//!
//! - A **provider key**, unless it is a known dummy ([`DUMMY_KEYS`]: `EMPTY`, `ollama`,
//!   `sk-no-key-required`…) or too short or plain to be a credential ([`too_plain`]).
//! - The value of a configured **header or env var whose name says it is secret**
//!   ([`name_says_secret`]: key, token, secret, password, auth, credential, cookie, session
//!   and the like), **or whose value looks like a credential** ([`looks_like_credential`]),
//!   again unless it is too plain; and the secrets a URL in such a value carries.
//! - A **URL's userinfo password**, and its **query values whose names say they are secret**
//!   or that look like a credential ([`url_secrets`](crate::url_secrets::url_secrets)).
//!
//! Everything else is not a secret and is never rewritten: `NODE_ENV=production`,
//! `LOG_LEVEL=info`, `TZ=Europe/Paris`, `PATH`, `Accept-Language: en-US,en;q=0.9`.
//!
//! A secret is hidden whole wherever it appears, in any ASCII case. Its fragments
//! ([`FRAGMENT`](super::FRAGMENT)-byte windows, what a truncation leaves of it) are hidden
//! only where the fragment itself cannot be ordinary text ([`ordinary_fragment`]): a window of
//! `sk-proj-a7Kq…` that mixes letters and digits is hidden, the `-secret-` of
//! `my-secret-key-for-vllm` is not. A value too plain to be matched safely (`DB_PASSWORD=info`)
//! is not used for rewriting text; the sandbox still withholds it from commands by its name
//! ([`is_secret_name`](crate::sandbox::is_secret_name)), which is a separate, broader rule.

/// The shortest value that is used for rewriting text, in bytes.
pub const MIN_SECRET: usize = 12;

/// Keys that local servers and their documentation use as placeholders (compared without
/// regard to case): a provider configured with one of them has no secret to hide, and hiding
/// `EMPTY` would hide every "empty".
pub const DUMMY_KEYS: [&str; 24] = [
    "empty",
    "ollama",
    "none",
    "null",
    "sk-no-key-required",
    "lm-studio",
    "lmstudio",
    "llama.cpp",
    "vllm",
    "not-needed",
    "not-required",
    "no-key",
    "nokey",
    "no-api-key",
    "dummy",
    "sk-dummy",
    "placeholder",
    "changeme",
    "sk-xxx",
    "sk-1234",
    "your-api-key",
    "your_api_key",
    "your-api-key-here",
    "your_api_key_here",
];

/// Name parts (lower case) that say a value is secret when a part of the name ends with one
/// of them: `OPENAI_API_KEY`, `apiKey`, `X-Auth-Token`, `PGPASSWORD`, `oauth`, `GITHUB_PAT`.
const SECRET_ENDINGS: [&str; 19] = [
    "key",
    "token",
    "secret",
    "secrets",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "auth",
    "credential",
    "credentials",
    "cookie",
    "cookies",
    "session",
    "jwt",
    "dsn",
    "webhook",
    "pat",
    "signature",
];

/// Name parts (lower case) that say a value is secret only when they are the whole part
/// (`pass` but not `bypass`, `sig` but not `config`).
const SECRET_PARTS: [&str; 8] = [
    "pass",
    "cred",
    "creds",
    "sig",
    "authorization",
    "apikey",
    "bearer",
    "sid",
];

/// Token prefixes of well-known services: a value that starts with one and is long enough
/// looks like a credential whatever its name.
const TOKEN_PREFIXES: [&str; 11] = [
    "sk-",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "akia",
    "aiza",
    "eyj",
];

/// Whether a header, env var or query parameter name says its value is secret: a part of it
/// (split at non-alphanumerics and where a lower-case letter meets an upper-case one, any
/// case) ends with one of key, token, secret, password, passwd, passphrase, pwd, auth,
/// credential, cookie, session, jwt, dsn, webhook, pat, signature, or is pass, cred, sig,
/// authorization, apikey, bearer or sid. `keyword`, `author`, `bypass`, `NODE_ENV` and
/// `Accept-Language` do not; `monkey` does (the value decides then: see [`too_plain`]).
pub fn name_says_secret(name: &str) -> bool {
    name_parts(name).any(|part| {
        SECRET_ENDINGS.iter().any(|e| part.ends_with(e)) || SECRET_PARTS.contains(&part.as_str())
    })
}

/// The parts of a name, in lower case.
fn name_parts(name: &str) -> impl Iterator<Item = String> + '_ {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            parts.push(std::mem::take(&mut part));
            last_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && last_lower {
            parts.push(std::mem::take(&mut part));
        }
        last_lower = c.is_ascii_lowercase();
        part.push(c.to_ascii_lowercase());
    }
    parts.push(part);
    parts.into_iter().filter(|p| !p.is_empty())
}

/// Whether `value` (trimmed) is too short or plain to be a credential, so that hiding it would
/// hide ordinary text: a known dummy ([`DUMMY_KEYS`]), under [`MIN_SECRET`] bytes, one
/// character class (only lower-case letters, only upper-case, only digits, or only other
/// characters), one word (letters in one case or capitalised, with at most non-letters
/// around it: `Production`, `password123!`), or a file path (`/…`, `~/…`, `./…`, `../…`).
pub fn too_plain(value: &str) -> bool {
    let value = value.trim();
    value.len() < MIN_SECRET
        || DUMMY_KEYS.iter().any(|d| d.eq_ignore_ascii_case(value))
        || one_class(value)
        || one_word(value)
        || ["/", "~/", "./", "../"]
            .iter()
            .any(|p| value.starts_with(p))
}

/// The class of a byte: lower-case letter, upper-case letter, digit, anything else.
fn class(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    }
}

fn one_class(value: &str) -> bool {
    let mut bytes = value.bytes().map(class);
    let first = bytes.next();
    bytes.all(|c| Some(c) == first)
}

/// One word in word case with only non-letters around it.
fn one_word(value: &str) -> bool {
    let word = value.trim_matches(|c: char| !c.is_ascii_alphabetic());
    let mut rest = word.chars();
    let Some(first) = rest.next() else {
        return true;
    };
    let rest: Vec<char> = rest.collect();
    word.chars().all(|c| c.is_ascii_alphabetic())
        && (rest.iter().all(char::is_ascii_lowercase)
            || (first.is_ascii_uppercase() && rest.iter().all(char::is_ascii_uppercase)))
}

/// Whether `value` looks like a credential whatever its name: not [`too_plain`], at least 16
/// bytes with no whitespace, and either it starts with a well-known token prefix (`sk-`,
/// `ghp_`, `github_pat_`, `glpat-`, `xoxb-`, `AKIA`, `AIza`, `eyJ`…) or letters and digits, or
/// lower and upper case, meet inside it at least once every four bytes (`a7`, `7K`, `aB`),
/// as they do in random tokens and not in words, versions or language lists.
pub fn looks_like_credential(value: &str) -> bool {
    let value = value.trim();
    if too_plain(value) || value.len() < 16 || value.contains(char::is_whitespace) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if TOKEN_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    mixes(value.as_bytes()) * 4 >= value.len()
}

/// How many neighbouring byte pairs of `bytes` mix letters and digits or lower and upper
/// case (`a7`, `7K`, `aB`).
fn mixes(bytes: &[u8]) -> usize {
    bytes
        .windows(2)
        .filter(|p| {
            let (a, b) = (p[0], p[1]);
            (a.is_ascii_alphabetic() && b.is_ascii_digit())
                || (a.is_ascii_digit() && b.is_ascii_alphabetic())
                || (a.is_ascii_lowercase() && b.is_ascii_uppercase())
        })
        .count()
}

/// Whether a fragment of a secret could be ordinary text, so that it is not hidden on its
/// own: nowhere in it do letters and digits, or lower and upper case, meet (`producti`,
/// `-secret-`, `01234567`, `NEVERSHO` are ordinary; `a7Kq-x9Z` is not).
pub fn ordinary_fragment(fragment: &[u8]) -> bool {
    mixes(fragment) == 0
}

/// The token of an `Authorization`-style value (`Bearer TOKEN`, `token TOKEN`): what follows
/// the first space, when there is one.
pub(crate) fn scheme_token(value: &str) -> Option<&str> {
    value.trim().split_once(' ').map(|(_, token)| token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_say_secret() {
        for name in [
            "OPENAI_API_KEY",
            "apiKey",
            "X-Api-Key",
            "api-key",
            "Authorization",
            "Proxy-Authorization",
            "Cookie",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "DB_PWD",
            "GITHUB_PAT",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "OAUTH_CLIENT",
            "x-auth-token",
            "session",
            "AUTH",
            "client.secret",
            "Signature",
            "pass",
        ] {
            assert!(name_says_secret(name), "{name}");
        }
        for name in [
            "NODE_ENV",
            "LOG_LEVEL",
            "DEBUG",
            "TZ",
            "PATH",
            "Accept-Language",
            "Content-Type",
            "keyword",
            "author",
            "design",
            "bypass",
            "config",
            "HOME",
            "X-Title",
        ] {
            assert!(!name_says_secret(name), "{name}");
        }
    }

    #[test]
    fn plain_values_are_not_credentials() {
        for value in [
            "EMPTY",
            "ollama",
            "sk-no-key-required",
            "SK-NO-KEY-REQUIRED",
            "lm-studio",
            "production",
            "Production",
            "PRODUCTION",
            "info",
            "true",
            "password123!",
            "0123456789012345",
            "abcdefghijklmnop",
            "/home/me/.ssh/id_ed25519",
            "~/creds.json",
            "hunter2",
        ] {
            assert!(too_plain(value), "{value} is plain");
            assert!(!looks_like_credential(value), "{value}");
        }
        for value in [
            "en-US,en;q=0.9",
            "application/json",
            "Europe/Paris",
            "v1.2.3-beta4+build567",
            "2025-06-18",
            "my-secret-key-for-vllm",
        ] {
            assert!(!looks_like_credential(value), "{value}");
        }
        assert!(!too_plain("my-secret-key-for-vllm"));
        assert!(!too_plain("sk-parity-NEVERSHOWN-4242"));
    }

    #[test]
    fn random_tokens_look_like_credentials() {
        for value in [
            "sk-proj-0123456789abcdefXYZ",
            "ghp_0123456789abcdefXYZ",
            "a7Kq9xZ2mB4nW8pL3vR6",
            "3f9a1c7e2b8d4f6a0c5e9b1d",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        ] {
            assert!(looks_like_credential(value), "{value}");
        }
    }

    #[test]
    fn ordinary_fragments() {
        for f in ["producti", "-secret-", "01234567", "NEVERSHO", "parity-N"] {
            assert!(ordinary_fragment(f.as_bytes()), "{f}");
        }
        for f in ["a7Kq-x9Z", "bcdefXYZ", "3456789a"] {
            assert!(!ordinary_fragment(f.as_bytes()), "{f}");
        }
    }
}
