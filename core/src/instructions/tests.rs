use super::*;

#[test]
fn directories_run_from_the_root_down_to_the_working_directory() {
    let dirs = directories(Some(Path::new("/repo")), Path::new("/repo/a/b"));
    assert_eq!(
        dirs,
        [
            PathBuf::from("/repo"),
            PathBuf::from("/repo/a"),
            PathBuf::from("/repo/a/b")
        ]
    );
    assert_eq!(
        directories(Some(Path::new("/repo")), Path::new("/repo")),
        [PathBuf::from("/repo")]
    );
}

#[test]
fn without_a_root_or_outside_it_only_the_working_directory() {
    assert_eq!(
        directories(None, Path::new("/w/x")),
        [PathBuf::from("/w/x")]
    );
    // A root that is not an ancestor (a sibling sharing a name prefix) is ignored.
    assert_eq!(
        directories(Some(Path::new("/repo")), Path::new("/repository/x")),
        [PathBuf::from("/repository/x")]
    );
}

#[test]
fn decode_cuts_on_a_character_boundary_and_warns() {
    assert_eq!(
        decode("A.md", b"short", 5, 10).unwrap(),
        ("short".to_owned(), None)
    );
    assert_eq!(decode("A.md", b"exactly10!", 10, 10).unwrap().1, None);
    let bytes = "ééé".as_bytes();
    let (text, warning) = decode("A.md", bytes, 6, 3).unwrap();
    assert_eq!(text, "é");
    let warning = warning.unwrap();
    assert!(
        warning.starts_with("A.md: larger than 3 bytes"),
        "{warning}"
    );
    assert!(warning.contains("first 2 of 6 bytes"), "{warning}");
    // Only a prefix was read, but the file is longer: still cut and warned about.
    let (text, warning) = decode("A.md", b"abcd", 1_000_000, 4).unwrap();
    assert_eq!(text, "abcd");
    assert!(warning.unwrap().contains("of 1000000 bytes"));
    let (text, warning) = decode("A.md", b"abc", 3, 0).unwrap();
    assert_eq!(text, "");
    assert!(warning.is_some());
}

#[test]
fn decode_refuses_bytes_that_are_not_text() {
    let err = decode("bin/AGENTS.md", b"ab\xffcd", 5, 100).unwrap_err();
    assert_eq!(err, "bin/AGENTS.md: skipped, not UTF-8 text");
    // An invalid byte before the cap is an error even when the file is cut.
    assert!(decode("A.md", b"\xff\xfe abc", 100, 4).is_err());
    // A character cut at the end of a complete (short) file is invalid, not a cut.
    assert!(decode("A.md", &"é".as_bytes()[..1], 1, 100).is_err());
}

#[test]
fn names_put_agents_md_first_and_drop_unsafe_fallbacks() {
    let settings = InstructionSettings {
        fallback_names: vec![
            "CLAUDE.md".into(),
            "AGENTS.md".into(),
            "../secret.md".into(),
            "a/b.md".into(),
            "..".into(),
            "".into(),
            "CLAUDE.md".into(),
            ".cursorrules".into(),
        ],
        max_bytes: 10,
    };
    assert_eq!(settings.names(), ["AGENTS.md", "CLAUDE.md", ".cursorrules"]);
}

#[test]
fn settings_from_the_config() {
    let none = Config::parse("{}").unwrap();
    assert_eq!(
        InstructionSettings::from_config(&none).unwrap(),
        InstructionSettings::default()
    );
    let some =
        Config::parse(r#"{"instructions": {"fallbackNames": ["CLAUDE.md"], "maxBytes": 100}}"#)
            .unwrap();
    assert_eq!(
        InstructionSettings::from_config(&some).unwrap(),
        InstructionSettings {
            fallback_names: vec!["CLAUDE.md".into()],
            max_bytes: 100
        }
    );
    let partial = Config::parse(r#"{"instructions": {"fallbackNames": []}}"#).unwrap();
    assert_eq!(
        InstructionSettings::from_config(&partial)
            .unwrap()
            .max_bytes,
        DEFAULT_MAX_BYTES
    );
    for bad in [
        r#"{"instructions": {"fallbackNames": "CLAUDE.md"}}"#,
        r#"{"instructions": {"maxBytes": -1}}"#,
        r#"{"instructions": {"fallbacknames": []}}"#,
        r#"{"instructions": 3}"#,
    ] {
        let config = Config::parse(bad).unwrap();
        let err = InstructionSettings::from_config(&config).unwrap_err();
        assert!(err.contains("`instructions` is not valid"), "{bad}: {err}");
    }
}
