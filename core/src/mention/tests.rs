use super::*;

fn paths(text: &str, files: &[&str]) -> Vec<(String, String)> {
    find_mentions(text, |p| files.contains(&p))
        .into_iter()
        .map(|m| (text[m.range.clone()].to_owned(), m.path))
        .collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn mentions_at_word_starts_that_name_files() {
    let files = ["src/main.rs", "README.md", "notes.txt."];
    assert_eq!(
        paths("look at @src/main.rs and @README.md", &files),
        [
            pair("@src/main.rs", "src/main.rs"),
            pair("@README.md", "README.md")
        ]
    );
    assert_eq!(
        paths("@README.md", &files),
        [pair("@README.md", "README.md")]
    );
    // Trailing punctuation is not part of the path, unless the name has it.
    assert_eq!(
        paths("see (@README.md), or @src/main.rs.", &files),
        [
            pair("@README.md", "README.md"),
            pair("@src/main.rs", "src/main.rs")
        ]
    );
    assert_eq!(
        paths("odd @notes.txt. name", &files),
        [pair("@notes.txt.", "notes.txt.")]
    );
    assert_eq!(paths("\"@README.md\"", &files).len(), 1);
    // Several in a row, and multi-byte text around them.
    assert_eq!(paths("é @README.md\n@README.md", &files).len(), 2);
}

#[test]
fn plain_text_stays_plain() {
    let files = ["README.md", "example.com"];
    for text in [
        "mail me@example.com",
        "x@README.md",
        "@ README.md",
        "@",
        "@@README.md",
        "@missing.rs",
        "@.",
        "",
        "email: a.b@example.com.",
        "@README",
    ] {
        assert_eq!(paths(text, &files), [], "{text:?}");
    }
}

#[test]
fn each_candidate_is_checked_a_bounded_number_of_times() {
    let mut asked = Vec::new();
    find_mentions("@a.rs...)))", |p| {
        asked.push(p.to_owned());
        false
    });
    assert_eq!(asked.len(), 7, "{asked:?}");
    assert_eq!(asked.last().unwrap(), "a.rs");
}

#[test]
fn image_types_by_signature() {
    assert_eq!(image_type(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
    assert_eq!(image_type(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
    assert_eq!(image_type(b"GIF89a..."), Some("image/gif"));
    assert_eq!(image_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
    assert_eq!(image_type(b"RIFF\0\0\0\0WAVE"), None);
    assert_eq!(image_type(b"\x89PN"), None);
    assert_eq!(image_type(b""), None);
    assert!(has_image_extension("a/b.PNG"));
    assert!(has_image_extension("x.jpeg"));
    assert!(!has_image_extension("png"));
    assert!(!has_image_extension("x.svg"));
}

#[test]
fn text_of_refuses_binary_and_keeps_a_cut_character_out() {
    assert_eq!(text_of(b"hello\n", 6).as_deref(), Some("hello\n"));
    assert_eq!(text_of(b"a\0b", 3), None);
    assert_eq!(text_of(b"\xff\xfe", 2), None);
    // A character cut at the end of a prefix of a longer file.
    assert_eq!(text_of(&"aé".as_bytes()[..2], 100).as_deref(), Some("a"));
    // The same bytes as a whole file are not text.
    assert_eq!(text_of(&"aé".as_bytes()[..2], 2), None);
    let big = "x".repeat(MAX_TEXT_BYTES + 10);
    assert_eq!(
        text_of(big.as_bytes(), big.len() as u64).unwrap().len(),
        MAX_TEXT_BYTES
    );
}

#[test]
fn attach_fences_text_and_notes_refusals() {
    let message = attach(
        "explain @a.rs",
        &[
            Attachment::Text {
                path: "a.rs".into(),
                text: "fn main() {}\n// ``` inside\n".into(),
                total: 27,
            },
            Attachment::Text {
                path: "big.txt".into(),
                text: "abc".into(),
                total: 1000,
            },
            Attachment::Refused {
                path: "x.bin".into(),
                reason: "a binary file".into(),
            },
        ],
    );
    let Some(Content::Text(text)) = message.content else {
        panic!("plain text without images");
    };
    assert_eq!(
        text,
        "explain @a.rs\n\na.rs:\n````\nfn main() {}\n// ``` inside\n````\n\n\
         big.txt:\n```\nabc\n```\n(only the first 3 of 1000 bytes; read_file has the rest)\n\n\
         x.bin: not attached (a binary file)."
    );
    assert_eq!(message.role, crate::wire::Role::User);
}

#[test]
fn attach_puts_images_in_parts() {
    let message = attach(
        "what is @p.png",
        &[Attachment::Image {
            path: "p.png".into(),
            media_type: "image/png",
            base64: "iVBORw0KGgo=".into(),
        }],
    );
    let json = serde_json::to_value(&message).unwrap();
    assert_eq!(
        json["content"],
        json!([
            {"type": "text", "text": "what is @p.png\n\np.png: attached as an image below."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ])
    );
    // Without attachments the prompt is sent exactly as typed.
    assert_eq!(attach("hi @x", &[]), Message::user("hi @x"));
}

#[test]
fn summaries() {
    let t = Attachment::Text {
        path: "a".into(),
        text: "ab".into(),
        total: 2,
    };
    assert_eq!(t.summary(), "attached a (2 bytes)");
    let cut = Attachment::Text {
        path: "a".into(),
        text: "ab".into(),
        total: 9,
    };
    assert_eq!(cut.summary(), "attached a (first 2 of 9 bytes)");
    assert_eq!(cut.path(), "a");
}
