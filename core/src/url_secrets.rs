//! The secrets a URL can carry in itself: a password in its userinfo
//! (`https://user:pass@host`) and credentials in its query (`https://host/mcp?api_key=…`).
//! Whatever prints such a URL (an error naming it, a listing of servers) must hide them, so
//! they join the redaction set of the server or provider configured with that URL.
//!
//! Which values count ([`crate::secrets::definition`]): the userinfo password; every query
//! value whose name says it is secret
//! ([`name_says_secret`]: `api_key`, `apikey`,
//! `access_token`, `sig`, `password`…; `keyword`, `author` and `design` do not); and a
//! username or query value of any name that looks like a credential
//! ([`looks_like_credential`]: a bare `?k=a7Kq…`
//! token, `https://TOKEN@host`). Other values stay visible: `?format=json` or a long search
//! phrase would otherwise hide ordinary text everywhere. Values are taken as written and, when
//! that differs, percent-decoded too (a server may echo either). Whether a value is used for
//! rewriting text is then decided like any secret's
//! ([`too_plain`](crate::secrets::too_plain)).

use crate::secrets::{looks_like_credential, name_says_secret};

/// The secrets in `url`: its userinfo password and its secret query values, as written and
/// percent-decoded. Empty for a URL without them (or that is not a URL at all).
pub fn url_secrets(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.split('#').next().unwrap_or_default();
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if let Some((userinfo, _host)) = authority.rsplit_once('@') {
        match userinfo.split_once(':') {
            Some((_user, password)) => push(&mut found, password),
            None if looks_like_credential(&decode(userinfo)) => push(&mut found, userinfo),
            None => {}
        }
    }
    if let Some((_, query)) = tail.split_once('?') {
        for pair in query.split('&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if name_says_secret(&decode(name)) || looks_like_credential(&decode(value)) {
                push(&mut found, value);
            }
        }
    }
    found
}

/// `url` with the secrets it carries ([`url_secrets`]) replaced by
/// [`REDACTED`](crate::secrets::REDACTED), for listings that show a configured URL.
pub fn hide_url_secrets(url: &str) -> String {
    let mut secrets = crate::secrets::Secrets::new();
    for value in url_secrets(url) {
        secrets.add(&value);
    }
    secrets.redact(url).into_owned()
}

/// Adds `value` and its percent-decoded form (when different); empty values are left out.
fn push(found: &mut Vec<String>, value: &str) {
    if value.is_empty() {
        return;
    }
    found.push(value.to_owned());
    let decoded = decode(value);
    if decoded != value && !decoded.is_empty() {
        found.push(decoded);
    }
}

/// Percent-decoding (`+` as a space, as forms write it); bytes that do not make UTF-8 become
/// U+FFFD, and a `%` not followed by two hex digits stays as it is.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_passwords_and_secret_query_values_and_nothing_else() {
        let cases: &[(&str, &[&str])] = &[
            ("https://example.com/mcp", &[]),
            ("https://user:hunter2@example.com/mcp", &["hunter2"]),
            ("https://user:p%40ss@h/x?y=1", &["p%40ss", "p@ss"]),
            (
                "https://ghp_0123456789abcdefXYZ@h/mcp",
                &["ghp_0123456789abcdefXYZ"],
            ),
            ("https://someone@h/mcp", &[]),
            ("https://h/mcp?api_key=abc123&format=json", &["abc123"]),
            ("https://h/mcp?Access_Token=t0k3n#frag", &["t0k3n"]),
            ("https://h/mcp?k=a7Kq9xZ2mB4nW8pL", &["a7Kq9xZ2mB4nW8pL"]),
            // A long value of another name that is no credential stays.
            ("https://h/mcp?q=what-is-the-weather-today", &[]),
            ("https://h/mcp?sig=a%2Bb%3D&x", &["a%2Bb%3D", "a+b="]),
            ("https://h/mcp?token=", &[]),
            ("https://h/mcp?version=2025-06-18", &[]),
            // An `@` in the path or the query is not userinfo.
            ("https://h/a@b?key=v@w", &["v@w"]),
            ("not a url", &[]),
            ("https://h/mcp?key=%zz%4", &["%zz%4"]),
            // Names that only contain a secret name say nothing about their values.
            (
                "https://h/s?keyword=rust&author=anon&design=flat&sessions_count=3",
                &[],
            ),
            (
                "https://h/s?apikey=k1&x-auth-token=t2&password=p3&client.secret=s4&Signature=g5",
                &["k1", "t2", "p3", "s4", "g5"],
            ),
        ];
        for (url, want) in cases {
            assert_eq!(url_secrets(url), *want, "{url}");
        }
    }

    #[test]
    fn a_listed_url_hides_its_secrets() {
        assert_eq!(
            hide_url_secrets("https://u:hunter22-Long-pw@h/mcp?token=t0k3n-a7Kq9xZ2&format=json"),
            "https://u:[redacted]@h/mcp?token=[redacted]&format=json"
        );
        assert_eq!(hide_url_secrets("https://h/mcp"), "https://h/mcp");
    }

    #[test]
    fn a_providers_url_secrets_are_among_its_secrets() {
        let provider = crate::session::Provider::new(
            "https://me:pa55word-Long1@llm.example/v1?key=a7Kq9xZ2mB4n",
            None,
        );
        let secrets = crate::secrets::Secrets::of_provider(&provider);
        assert_eq!(
            secrets.redact(
                "POST https://me:pa55word-Long1@llm.example/v1?key=a7Kq9xZ2mB4n/chat/completions"
            ),
            "POST https://me:[redacted]@llm.example/v1?key=[redacted]/chat/completions"
        );
    }
}
