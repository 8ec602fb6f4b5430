use super::*;

const KEY: &str = "sk-proj-0123456789abcdefXYZ";

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
    // A key cut by a truncation, at either end.
    assert_eq!(
        s.redact("Incorrect key sk-proj-0123…"),
        "Incorrect key [redacted]…"
    );
    assert_eq!(s.redact("…456789abcdefXYZ tail"), "…[redacted] tail");
    // Short fragments and unrelated text stay.
    assert_eq!(s.redact("sk-proj is a prefix"), "sk-proj is a prefix");
    assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
    // Multi-byte text around a secret.
    assert_eq!(s.redact(&format!("ü{KEY}ü")), "ü[redacted]ü");
    assert_eq!(Secrets::new().redact(KEY), KEY);
}

#[test]
fn too_short_values_are_ignored_and_debug_hides_values() {
    let mut s = Secrets::new();
    s.add("abc");
    s.add("   ");
    assert!(s.is_empty());
    s.add("abcd");
    assert_eq!(s.redact("xabcdx"), "x[redacted]x");
    assert_eq!(format!("{s:?}"), "Secrets(1 values)");
}

#[test]
fn provider_secrets_include_sensitive_headers_only() {
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
}

#[test]
fn json_strings_and_keys_are_redacted() {
    let s = secrets();
    let mut v = serde_json::json!({"error": {"message": "m", "type": KEY, "param": [KEY], "code": 1},
        KEY: "k"});
    s.redact_json(&mut v);
    let text = v.to_string();
    assert!(!text.contains("0123456789"), "{text}");
    assert_eq!(v["error"]["type"], REDACTED);
}

use proptest::strategy::Strategy as _;

/// The bytes `redact` must hide, found the slow way: every occurrence of every value, and
/// every window of a value, searched for in full.
fn reference(secrets: &[&str], text: &str) -> Vec<bool> {
    let mut hidden = vec![false; text.len()];
    for value in secrets.iter().filter(|v| v.len() >= MIN_SECRET) {
        let mut parts = vec![*value];
        parts.extend(
            (0..=value.len().saturating_sub(FRAGMENT))
                .filter(|_| value.len() >= FRAGMENT)
                .filter_map(|i| value.get(i..i + FRAGMENT)),
        );
        for part in parts {
            for start in 0..text.len() {
                let at = &text.as_bytes()[start..];
                if at.len() >= part.len() && at[..part.len()].eq_ignore_ascii_case(part.as_bytes())
                {
                    hidden[start..start + part.len()].fill(true);
                }
            }
        }
    }
    hidden
}

proptest::proptest! {
    /// The pair filter and the whole-value shortcut hide exactly what a full search hides:
    /// redacting keeps every byte the reference keeps, and only those.
    #[test]
    fn redaction_hides_what_a_full_search_hides(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(vec!["sk-proj-0123456789abcdef", "abcd", "k3y-\u{e9}t\u{e9}-long-enough"])
                    .prop_map(String::from),
                "[a-z0-9 \u{e9}-]{0,12}",
                // Made of the pairs of a secret: the scan's backward search runs on it.
                "[0-9a-f-]{0,16}",
                // Secrets in another case.
                "[0-9A-Fa-f-]{0,16}",
                proptest::sample::select(vec!["SK-PROJ-0123456789ABCDEF", "AbCd", "K3Y-\u{e9}T\u{e9}-LONG-ENOUGH"])
                    .prop_map(String::from),
            ],
            0..12,
        ),
        cut in 0usize..30,
    ) {
        let values = ["sk-proj-0123456789abcdef", "abcd", "k3y-\u{e9}t\u{e9}-long-enough"];
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
        assert!(keep < FRAGMENT + 3, "held {keep} bytes");
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
    /// Written in pieces cut anywhere, a text comes out as redacted whole: nothing lost,
    /// nothing of 8 bytes or more of a secret shown.
    #[test]
    fn redacting_in_pieces_is_redacting_the_whole(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(vec!["sk-proj-0123456789abcdef", "abcd", "k3y-\u{e9}t\u{e9}-long-enough"])
                    .prop_map(String::from),
                "[a-z0-9 \u{e9}-]{0,12}",
                "[0-9a-f-]{0,16}",
                "[abcdk3y-]{0,10}",
            ],
            0..12,
        ),
        skip in 0usize..9,
        cuts in proptest::collection::vec(0usize..200, 0..12),
    ) {
        let values = ["sk-proj-0123456789abcdef", "abcd", "k3y-\u{e9}t\u{e9}-long-enough"];
        let mut s = Secrets::new();
        values.iter().for_each(|v| s.add(v));
        let text: String = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| if i % 3 == 1 { p.chars().skip(skip).collect() } else { p.to_string() })
            .collect();
        let out = in_pieces(&s, &text, &cuts);
        proptest::prop_assert_eq!(&out, &s.redact(&text));
        for v in values.iter().filter(|v| v.len() >= FRAGMENT) {
            for w in v.as_bytes().windows(FRAGMENT) {
                proptest::prop_assert!(!out.as_bytes().windows(FRAGMENT).any(|o| o == w), "{out}");
            }
        }
        proptest::prop_assert!(!out.contains("abcd"));
    }
}

#[test]
fn json_forms_are_the_values_as_json_strings_hold_them() {
    let mut s = Secrets::new();
    s.add(r#"pa"ss\word-1"#);
    s.add("plain-value-1");
    let forms = s.json_forms();
    assert_eq!(format!("{forms:?}"), "Secrets(1 values)");
    assert_eq!(
        forms.redact(r#"{"h":"pa\"ss\\word-1"}"#),
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
    let mut short = Secrets::new();
    short.add("AbCd");
    assert_eq!(short.redact("x abcd ABCD y"), "x [redacted] [redacted] y");
    // Held back in pieces as well, whatever the case.
    assert_eq!(
        in_pieces(&s, &format!("a {shouted} b"), &[4, 12]),
        "a [redacted] b"
    );
}
