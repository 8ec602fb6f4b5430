use super::*;

fn cmd(name: &str, path: &str) -> CustomCommand {
    parse_command_md(name, "body", path).unwrap()
}

#[test]
fn parses_frontmatter_and_body() {
    let text = "---\ndescription: |\n  Reviews the\n  staged change\nagent: Explorer\nmodel: gpt-x\n---\n\nReview $ARGUMENTS.\n";
    let c = parse_command_md("review", text, ".hrns/commands/review.md").unwrap();
    assert_eq!(c.name, "review");
    assert_eq!(c.description, "Reviews the staged change");
    assert_eq!(c.agent.as_deref(), Some("Explorer"));
    assert_eq!(c.model.as_deref(), Some("gpt-x"));
    assert_eq!(c.body, "Review $ARGUMENTS.");
    // Without frontmatter the whole file is the body.
    let plain = parse_command_md("p", "\u{feff}Just do it.\r\nNow.\r\n", "p.md").unwrap();
    assert_eq!(plain.body, "Just do it.\nNow.");
    assert_eq!(plain.description, "");
    assert_eq!(plain.agent, None);
}

#[test]
fn bad_files_are_errors_naming_the_path() {
    for text in [
        "---\ndescription: x\n",
        "---\ndescription: [unclosed\n---\nbody",
        "---\ndescripton: typo\n---\nbody",
        "---\nagent: [a, b]\n---\nbody",
    ] {
        let err = parse_command_md("x", text, "c/x.md").unwrap_err();
        assert!(err.to_string().starts_with("c/x.md"), "{text:?}: {err}");
    }
}

#[test]
fn names_and_invocations() {
    assert!(is_valid_name("review-pr_2"));
    for bad in ["", "a b", "a/b", "é", ".hidden", &"x".repeat(65)] {
        assert!(!is_valid_name(bad), "{bad:?}");
    }
    assert_eq!(
        split_invocation("/review  src/a.rs now "),
        Some(("review", "src/a.rs now"))
    );
    assert_eq!(split_invocation("  /fix"), Some(("fix", "")));
    assert_eq!(split_invocation("/usr/bin/env is a path"), None);
    assert_eq!(split_invocation("review"), None);
    assert_eq!(split_invocation("/"), None);
}

#[test]
fn arguments_split_like_a_shell_line() {
    assert_eq!(split_arguments("a  b\tc"), ["a", "b", "c"]);
    assert_eq!(
        split_arguments(r#"one "two words" 'three'"#),
        ["one", "two words", "three"]
    );
    assert_eq!(split_arguments(r#"x"y z"w"#), ["xy zw"]);
    assert_eq!(split_arguments(r#""unclosed rest"#), ["unclosed rest"]);
    assert_eq!(split_arguments(r#""""#), [""]);
    assert!(split_arguments("   ").is_empty());
}

#[test]
fn placeholders_expand() {
    let table = [
        ("Fix $ARGUMENTS now", "issue 12", "Fix issue 12 now"),
        (
            "First $1, then $2, none $3.",
            "a \"b c\"",
            "First a, then b c, none .",
        ),
        ("$1$1 and $10", "x", "xx and x0"),
        ("Costs $5 or $$ or $X", "", "Costs  or $$ or $X"),
        (
            "No placeholders.",
            "extra words",
            "No placeholders.\n\nextra words",
        ),
        ("No placeholders.\n", "", "No placeholders.\n"),
        ("trailing $", "a", "trailing $\n\na"),
        ("é$ARGUMENTSé", "ü", "éüé"),
    ];
    for (body, args, expected) in table {
        assert_eq!(expand(body, args), expected, "{body:?} {args:?}");
    }
}

#[test]
fn project_wins_and_builtins_win_with_a_warning() {
    let project = vec![cmd("review", "p/review.md"), cmd("help", "p/help.md")];
    let user = vec![
        cmd("Review", "u/review.md"),
        cmd("deploy", "u/deploy.md"),
        cmd("QUIT", "u/quit.md"),
    ];
    let (commands, warnings) = resolve_commands(project, user, &["help", "quit", "exit"]);
    let names: Vec<(&str, &str)> = commands
        .iter()
        .map(|c| (c.name.as_str(), c.path.as_str()))
        .collect();
    assert_eq!(
        names,
        [("deploy", "u/deploy.md"), ("review", "p/review.md")]
    );
    assert_eq!(warnings.len(), 2);
    assert_eq!(
        warnings[0],
        "p/help.md: the built-in /help wins; rename the file to use it"
    );
    assert!(warnings[1].starts_with("u/quit.md"));
    assert_eq!(
        find_command(&commands, "REVIEW").unwrap().path,
        "p/review.md"
    );
    assert!(find_command(&commands, "nope").is_none());
}
