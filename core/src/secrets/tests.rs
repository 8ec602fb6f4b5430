use super::*;

/// A key whose pieces mix letters and digits: every 8-byte piece of it after `sk-proj-` is
/// hidden on its own.
const KEY: &str = "sk-proj-a7Kq9xZ2mB4nW8pL3vR6";

fn secrets() -> Secrets {
    let mut s = Secrets::new();
    s.add(KEY);
    s.add("azure-hdr-value-777");
    s
}

#[test]
fn whole_secrets_and_long_fragments_are_redacted() {
    let s = secrets();
    assert_eq!(s.redact(&format!("key={KEY}.")), "key=[redacted].");
    assert_eq!(s.redact("hdr azure-hdr-value-777"), "hdr [redacted]");
    // A key cut by a truncation, at either end: its random part is hidden.
    assert_eq!(
        s.redact("Incorrect key sk-proj-a7Kq9x…"),
        "Incorrect key sk[redacted]…"
    );
    assert_eq!(s.redact("…mB4nW8pL3vR6 tail"), "…[redacted] tail");
    // Ordinary pieces and unrelated text stay: `azure-hdr-value-777` is only hidden whole.
    assert_eq!(s.redact("sk-proj- is a prefix"), "sk-proj- is a prefix");
    assert_eq!(s.redact("azure-hdr-value"), "azure-hdr-value");
    assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
    // Multi-byte text around a secret.
    assert_eq!(s.redact(&format!("ü{KEY}ü")), "ü[redacted]ü");
    assert_eq!(Secrets::new().redact(KEY), KEY);
}

#[test]
fn plain_values_and_dummies_are_ignored_and_debug_hides_values() {
    let mut s = Secrets::new();
    for plain in [
        "abc",
        "   ",
        "EMPTY",
        "ollama",
        "sk-no-key-required",
        "production",
        "lm-studio",
        "password123!",
    ] {
        s.add(plain);
    }
    assert!(s.is_empty(), "{s:?}");
    assert_eq!(
        s.redact("--- stderr (empty) --- production ollama"),
        "--- stderr (empty) --- production ollama"
    );
    s.add("s3cret-value-xy");
    assert_eq!(s.redact("xS3CRET-VALUE-XYx"), "x[redacted]x");
    assert_eq!(format!("{s:?}"), "Secrets(1 values)");
}

#[test]
fn named_values_are_secrets_by_their_name_or_their_look() {
    let mut s = Secrets::new();
    s.add_named("NODE_ENV", "production");
    s.add_named("LOG_LEVEL", "info");
    s.add_named("DEBUG", "true");
    s.add_named("TZ", "Europe/Paris");
    s.add_named("Accept-Language", "en-US,en;q=0.9");
    s.add_named("Accept", "application/json");
    s.add_named("DB_PASSWORD", "info");
    assert!(s.is_empty(), "{s:?}");
    s.add_named("DB_PASSWORD", "correct-horse-battery");
    s.add_named("X_REQUEST_SIGNER", "q8Zr4Lm2Xv7Kp3Nt");
    s.add_named("Authorization", "Bearer tok-abcdefghijkl");
    s.add_named("DATABASE_URL", "postgres://app:pa55-w0rd-xyz@db/app");
    let text = "correct-horse-battery q8Zr4Lm2Xv7Kp3Nt tok-abcdefghijkl pa55-w0rd-xyz production";
    assert_eq!(
        s.redact(text),
        "[redacted] [redacted] [redacted] [redacted] production"
    );
}

#[test]
fn provider_secrets_include_secret_headers_only() {
    let mut p = Provider::new("http://x/v1", Some(Secret::new(KEY)));
    p.headers = vec![
        ("api-key".into(), "azure-secret-123456".into()),
        ("Authorization".into(), "Bearer tok-abcdefghijkl".into()),
        ("X-Title".into(), "hrns-visible-title".into()),
    ];
    let s = Secrets::of_provider(&p);
    let text = format!("{KEY}\nazure-secret-123456\ntok-abcdefghijkl\nhrns-visible-title");
    assert_eq!(
        s.redact(&text),
        "[redacted]\n[redacted]\n[redacted]\nhrns-visible-title"
    );
    // A dummy key is no secret: "empty" survives.
    let p = Provider::new("http://x/v1", Some(Secret::new("EMPTY")));
    assert!(Secrets::of_provider(&p).is_empty());
}

#[test]
fn json_strings_and_keys_are_redacted() {
    let s = secrets();
    let mut v = serde_json::json!({"error": {"message": "m", "type": KEY, "param": [KEY], "code": 1},
        KEY: "k"});
    s.redact_json(&mut v);
    let text = v.to_string();
    assert!(!text.contains("a7Kq9x"), "{text}");
    assert_eq!(v["error"]["type"], REDACTED);
}

use proptest::strategy::Strategy as _;

/// The bytes `redact` must hide, found the slow way: every occurrence of every value, and
/// every window of a value, searched for in full.
fn reference(secrets: &[&str], text: &str) -> Vec<bool> {
    let mut hidden = vec![false; text.len()];
    for value in secrets.iter().filter(|v| !too_plain(v)) {
        let mut parts = vec![*value];
        parts.extend(
            (0..=value.len().saturating_sub(FRAGMENT))
                .filter(|_| value.len() >= FRAGMENT)
                .filter_map(|i| value.as_bytes().get(i..i + FRAGMENT))
                .filter(|w| !ordinary_fragment(w))
                .filter_map(|w| std::str::from_utf8(w).ok()),
        );
        // A window cut inside a character is compared as bytes.
        let bytes: Vec<&[u8]> = (0..=value.len().saturating_sub(FRAGMENT))
            .filter(|_| value.len() >= FRAGMENT)
            .map(|i| &value.as_bytes()[i..i + FRAGMENT])
            .filter(|w| !ordinary_fragment(w) && std::str::from_utf8(w).is_err())
            .collect();
        for part in parts.iter().map(|p| p.as_bytes()).chain(bytes) {
            for start in 0..text.len() {
                let at = &text.as_bytes()[start..];
                if at.len() >= part.len() && at[..part.len()].eq_ignore_ascii_case(part) {
                    hidden[start..start + part.len()].fill(true);
                }
            }
        }
    }
    hidden
}

/// Accepted values of three kinds: a key whose pieces mix letters and digits, a value hidden
/// only whole (its pieces are ordinary), and one with multi-byte characters.
const VALUES: [&str; 3] = [
    "sk-proj-a7Kq9xZ2mB4n",
    "wholly-ordinary-value",
    "k3y-\u{e9}t\u{e9}-long-enough",
];

proptest::proptest! {
    /// The pair filter and the whole-value shortcut hide exactly what a full search hides:
    /// redacting keeps every byte the reference keeps, and only those.
    #[test]
    fn redaction_hides_what_a_full_search_hides(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(VALUES.to_vec()).prop_map(String::from),
                "[a-z0-9 \u{e9}-]{0,12}",
                // Made of the pairs of a secret: the scan's backward search runs on it.
                "[0-9a-zA-Z-]{0,16}",
                "[wholyrdinav-]{0,16}",
                // Secrets in another case.
                proptest::sample::select(vec!["SK-PROJ-A7kQ9Xz2Mb4N", "WHOLLY-ordinary-VALUE", "K3Y-\u{e9}T\u{e9}-LONG-ENOUGH"])
                    .prop_map(String::from),
            ],
            0..12,
        ),
        cut in 0usize..30,
    ) {
        let values = VALUES;
        let mut s = Secrets::new();
        values.iter().for_each(|v| s.add(v));
        // Pieces, some of them cut, so fragments of secrets appear too.
        let text: String = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| if i % 3 == 1 { p.chars().skip(cut % 9).collect() } else { p.to_string() })
            .collect();
        let hidden = reference(&values, &text);
        let kept: String = text
            .char_indices()
            .filter(|(i, c)| !(*i..*i + c.len_utf8()).any(|b| hidden[b]))
            .map(|(_, c)| c)
            .collect();
        let redacted = s.redact(&text);
        let shown: String = redacted.replace(REDACTED, "");
        proptest::prop_assert_eq!(shown, kept);
        proptest::prop_assert_eq!(matches!(redacted, Cow::Borrowed(_)), !hidden.contains(&true));
    }
}

/// `text` written in pieces cut at `cuts` (moved back to character boundaries), each piece
/// what was held back from the last one followed by new text, as a batch writes a stream.
fn in_pieces(secrets: &Secrets, text: &str, cuts: &[usize]) -> String {
    let mut bounds: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            let mut c = c.min(text.len());
            while !text.is_char_boundary(c) {
                c -= 1;
            }
            c
        })
        .collect();
    bounds.sort_unstable();
    bounds.push(text.len());
    let mut pieces = Pieces::new();
    let (mut out, mut held, mut from) = (String::new(), String::new(), 0);
    for (i, &to) in bounds.iter().enumerate() {
        held.push_str(&text[from..to]);
        from = to;
        let ending = if i + 1 == bounds.len() {
            Ending::Last
        } else {
            Ending::More
        };
        let (clean, keep) = pieces.redact(secrets, &held, ending);
        out.push_str(&clean);
        held = held[held.len() - keep..].to_owned();
        assert!(keep < 64, "held {keep} bytes");
    }
    assert!(held.is_empty());
    out
}

#[test]
fn a_secret_cut_between_pieces_is_redacted_as_a_whole() {
    let s = secrets();
    let text = format!("a {KEY} b {KEY}{KEY} c");
    for cut in 0..=text.len() {
        for second in [cut, cut + 3, cut + 9] {
            assert_eq!(
                in_pieces(&s, &text, &[cut, second]),
                "a [redacted] b [redacted] c",
                "cut at {cut}, {second}"
            );
        }
    }
    // Ordinary text is not held back: each piece is written whole when it cannot start a
    // secret.
    let mut pieces = Pieces::new();
    assert_eq!(
        pieces.redact(&s, "nothing to hold.", Ending::More),
        (Cow::Borrowed("nothing to hold."), 0)
    );
    // A tail that could start one is: until the next piece says what it is.
    assert_eq!(
        pieces.redact(&s, "then sk-pr", Ending::More),
        (Cow::Borrowed("then "), 5)
    );
    assert_eq!(
        pieces.redact(&s, "sk-pro is not a key", Ending::Last),
        (Cow::Borrowed("sk-pro is not a key"), 0)
    );
}

proptest::proptest! {
    #![proptest_config(crate::proptest_seeds::config())]

    /// Written in pieces cut anywhere, a text comes out as redacted whole: nothing lost,
    /// nothing shown of a secret, no piece of 8 bytes of one that mixes letters and digits.
    #[test]
    fn redacting_in_pieces_is_redacting_the_whole(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(VALUES.to_vec()).prop_map(String::from),
                "[a-z0-9 \u{e9}-]{0,12}",
                "[0-9a-zA-Z-]{0,16}",
                "[wholyrdinavk3-]{0,10}",
            ],
            0..12,
        ),
        skip in 0usize..9,
        cuts in proptest::collection::vec(0usize..200, 0..12),
    ) {
        let mut s = Secrets::new();
        VALUES.iter().for_each(|v| s.add(v));
        let text: String = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| if i % 3 == 1 { p.chars().skip(skip).collect() } else { p.to_string() })
            .collect();
        let out = in_pieces(&s, &text, &cuts);
        proptest::prop_assert_eq!(&out, &s.redact(&text));
        for v in VALUES {
            for w in v.as_bytes().windows(FRAGMENT).filter(|w| !ordinary_fragment(w)) {
                proptest::prop_assert!(!out.as_bytes().windows(FRAGMENT).any(|o| o == w), "{out}");
            }
            proptest::prop_assert!(!out.contains(v), "{out}");
        }
    }
}

/// A strong secret: letters and digits in turn, of random case, so that every 8-byte piece
/// of it mixes them (none could be an ordinary word), sometimes behind a `sk-` prefix.
pub(super) fn strong_secret() -> impl proptest::strategy::Strategy<Value = String> {
    (
        proptest::collection::vec(("[a-zA-Z]", "[0-9]"), 8..20),
        proptest::bool::ANY,
    )
        .prop_map(|(pairs, prefixed)| {
            let body: String = pairs.into_iter().map(|(l, d)| l + &d).collect();
            if prefixed { format!("sk-{body}") } else { body }
        })
}

/// Ordinary words, among them the dummies and the values of non-secret names that must never
/// be touched.
const WORDS: [&str; 16] = [
    "empty",
    "EMPTY",
    "Empty",
    "ollama",
    "production",
    "Information",
    "true",
    "info",
    "Europe/Paris",
    "en-US,en;q=0.9",
    "application",
    "--- stderr (empty) ---",
    "none",
    "sk-no-key-required",
    "lm-studio",
    " ",
];

/// Values that are secrets when their name says so (long enough, more than one character
/// class, not one word) but whose every 8-byte piece could be ordinary text: hidden whole only.
const MEDIUM: [&str; 3] = [
    "my-secret-key-for-vllm",
    "Wholly-Ordinary-Value",
    "correct-horse-battery-staple",
];

proptest::proptest! {
    #![proptest_config(crate::proptest_seeds::config())]

    /// The property of issue 30. For random secrets, strong, named (hidden whole only) and
    /// dummy, and random texts: a text that contains no secret comes out byte-identical,
    /// whether redacted whole or in pieces; a text that contains one never shows it, nor any
    /// 8-byte piece of a strong one, however it is split.
    #[test]
    fn exact_redaction(
        strong in proptest::collection::vec(strong_secret(), 0..3),
        dummies in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(definition::DUMMY_KEYS.to_vec()).prop_map(String::from),
                proptest::sample::select(vec!["production", "Information", "INFO", "true"])
                    .prop_map(String::from),
                // Anything under 12 bytes is too short to be a credential.
                "[a-zA-Z0-9-]{1,11}",
            ],
            0..4,
        ),
        // Values of names that do not say secret.
        plain in proptest::collection::vec(proptest::sample::select(WORDS.to_vec()), 0..4),
        // Values of names that say secret, strong enough to be hidden but only whole (every
        // 8-byte piece of them could be ordinary text).
        medium in proptest::collection::vec(proptest::sample::select(MEDIUM.to_vec()), 0..2),
        parts in proptest::collection::vec(
            (
                proptest::prop_oneof![
                    proptest::sample::select(WORDS.to_vec()).prop_map(String::from),
                    "[a-zA-Z0-9 .,:/-]{0,12}",
                    // A piece of a strong secret: chosen below.
                    proptest::strategy::Just(String::new()),
                    // A named secret whole, or all but its last byte (ordinary text then).
                    proptest::sample::select(MEDIUM.to_vec()).prop_map(String::from),
                    proptest::sample::select(MEDIUM.to_vec())
                        .prop_map(|m| m[..m.len() - 1].to_owned()),
                ],
                0usize..64,
                0usize..64,
                proptest::bool::ANY,
            ),
            0..10,
        ),
        cuts in proptest::collection::vec(0usize..400, 0..12),
    ) {
        let mut s = Secrets::new();
        for d in &dummies {
            s.add(d);
            s.add_named("OPENAI_API_KEY", d);
        }
        for (name, value) in ["NODE_ENV", "TZ", "Accept-Language", "LOG_LEVEL"].iter().zip(&plain) {
            s.add_named(name, value);
        }
        for v in &strong {
            s.add(v);
        }
        for (name, value) in ["DB_PASSWORD", "X-Api-Key"].iter().zip(&medium) {
            s.add_named(name, value);
        }
        // Text: words, random text, and pieces (or all) of the strong secrets, any case.
        let text: String = parts
            .iter()
            .map(|(word, from, len, upper)| {
                if !word.is_empty() || strong.is_empty() {
                    return word.clone();
                }
                let v = &strong[from % strong.len()];
                let start = from % v.len();
                let piece = &v[start..(start + len).min(v.len())];
                let piece = if *len > 40 { v.as_str() } else { piece };
                if *upper { piece.to_ascii_uppercase() } else { piece.to_owned() }
            })
            .collect();
        let lower = text.to_ascii_lowercase();
        let windows = |v: &String| {
            v.to_ascii_lowercase()
                .into_bytes()
                .windows(FRAGMENT)
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        };
        let has_secret = strong.iter().any(|v| {
            windows(v).iter().any(|w| lower.as_bytes().windows(FRAGMENT).any(|t| t == w.as_slice()))
        }) || medium.iter().any(|m| lower.contains(&m.to_ascii_lowercase()));
        let whole = s.redact(&text).into_owned();
        let split = in_pieces(&s, &text, &cuts);
        proptest::prop_assert_eq!(&split, &whole);
        if !has_secret {
            proptest::prop_assert_eq!(&whole, &text);
        }
        let shown = whole.to_ascii_lowercase();
        for m in &medium {
            proptest::prop_assert!(!shown.contains(&m.to_ascii_lowercase()), "{whole}");
        }
        for v in &strong {
            proptest::prop_assert!(!shown.contains(&v.to_ascii_lowercase()), "{whole}");
            for w in windows(v) {
                proptest::prop_assert!(
                    !shown.as_bytes().windows(FRAGMENT).any(|t| t == w.as_slice()),
                    "{} shows a piece of {v}",
                    whole
                );
            }
        }
    }
}

#[test]
fn json_forms_are_the_values_as_json_strings_hold_them() {
    let mut s = Secrets::new();
    s.add(r#"pa"ss\word-12345"#);
    s.add("plain-value-12345");
    let forms = s.json_forms();
    assert_eq!(format!("{forms:?}"), "Secrets(1 values)");
    assert_eq!(
        forms.redact(r#"{"h":"pa\"ss\\word-12345"}"#),
        r#"{"h":"[redacted]"}"#
    );
}

#[test]
fn secrets_in_another_case_are_redacted_too() {
    let s = secrets();
    let shouted = KEY.to_ascii_uppercase();
    assert_eq!(s.redact(&format!("key {shouted}.")), "key [redacted].");
    assert_eq!(
        s.redact(&format!("invalid key {}", KEY.to_ascii_lowercase())),
        "invalid key [redacted]"
    );
    let mut whole = Secrets::new();
    whole.add("Wholly-Ordinary-Value");
    assert_eq!(
        whole.redact("x wholly-ordinary-value WHOLLY-ORDINARY-VALUE y"),
        "x [redacted] [redacted] y"
    );
    // Held back in pieces as well, whatever the case.
    assert_eq!(
        in_pieces(&s, &format!("a {shouted} b"), &[4, 12]),
        "a [redacted] b"
    );
}
