use super::*;
use serde::Deserialize;

#[derive(Debug, Deserialize, PartialEq)]
struct Meta {
    name: Option<String>,
    list: Option<Vec<String>>,
    any: Option<serde_json::Value>,
}

fn ok(text: &str) -> Parsed<Meta> {
    parse::<Meta>(text, "dir/FILE.md").unwrap()
}

fn err(text: &str) -> FrontmatterError {
    parse::<Meta>(text, "dir/FILE.md").unwrap_err()
}

#[test]
fn splits_frontmatter_and_body() {
    let p = ok("---\nname: a\nlist: [x, y]\n---\n\nBody line 1\n---\nstill body\n\n");
    assert_eq!(p.meta.name.as_deref(), Some("a"));
    assert_eq!(p.meta.list, Some(vec!["x".to_owned(), "y".to_owned()]));
    assert_eq!(p.body, "Body line 1\n---\nstill body");
}

#[test]
fn bom_crlf_and_trailing_blanks_on_delimiters() {
    let lf = ok("---\nname: a\n---\nline 1\nline 2\n");
    let crlf = ok("\u{feff}--- \r\nname: a\r\n---\t\r\nline 1\r\nline 2\r\n");
    assert_eq!(lf.meta, crlf.meta);
    assert_eq!(crlf.body, "line 1\nline 2");
    assert_eq!(lf.body, crlf.body);
}

#[test]
fn empty_frontmatter_and_empty_body() {
    let p = ok("---\n---\n");
    assert_eq!(p.meta.name, None);
    assert_eq!(p.body, "");
    let p = ok("---\n   \n---");
    assert_eq!(p.meta.name, None);
}

#[test]
fn missing_frontmatter() {
    for text in [
        "",
        "\n",
        "# Title\n---\nname: a\n---\n",
        "----\nname: a\n---\n",
        " ---\n---\n",
    ] {
        assert!(
            matches!(err(text), FrontmatterError::Missing { .. }),
            "{text:?}"
        );
    }
    assert!(
        err("hello")
            .to_string()
            .starts_with("dir/FILE.md: no frontmatter")
    );
}

#[test]
fn unclosed_frontmatter_names_the_path() {
    for text in ["---", "---\n", "---\nname: a\n", "---\nname: a\n--\n"] {
        let e = err(text);
        assert!(matches!(e, FrontmatterError::Unclosed { .. }), "{text:?}");
        assert!(e.to_string().contains("dir/FILE.md"));
        assert!(e.to_string().contains("never closes"));
    }
    // A long file without a closing line is still just unclosed.
    let long = format!("---\nname: a\n{}", "text\n".repeat(200_000));
    assert!(matches!(err(&long), FrontmatterError::Unclosed { .. }));
}

#[test]
fn a_megabyte_body_is_fine() {
    let body = "x".repeat(1 << 20);
    let p = ok(&format!("---\nname: big\n---\n{body}\n"));
    assert_eq!(p.body.len(), 1 << 20);
}

#[test]
fn oversized_frontmatter() {
    let yaml = format!("name: a\n# {}\n", "c".repeat(MAX_FRONTMATTER_BYTES));
    let e = err(&format!("---\n{yaml}---\nbody"));
    match &e {
        FrontmatterError::TooLarge { size, limit, .. } => {
            assert_eq!(*size, yaml.len());
            assert_eq!(*limit, MAX_FRONTMATTER_BYTES);
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("dir/FILE.md"));
}

#[test]
fn yaml_errors_carry_the_file_line() {
    // Line 4 of the file holds the unclosed flow sequence.
    let e = err("---\nname: a\n\nlist: [x, y\n---\n");
    match &e {
        FrontmatterError::Yaml { line, message, .. } => {
            assert!(line.is_some());
            assert!(message.contains("line"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // A type error points at the line of the value.
    let e = err("---\nname: a\nlist: 7\n---\n");
    match &e {
        FrontmatterError::Yaml { line, message, .. } => {
            assert_eq!(*line, Some(3), "{message}");
            assert!(message.contains("invalid type"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string()
            .starts_with("dir/FILE.md: invalid frontmatter: ")
    );
}

#[test]
fn frontmatter_that_is_not_a_mapping() {
    assert!(matches!(
        err("---\n- a\n- b\n---\n"),
        FrontmatterError::Yaml { .. }
    ));
    assert!(matches!(
        err("---\n[a, b]\n---\n"),
        FrontmatterError::Yaml { .. }
    ));
    assert!(matches!(
        err("---\njust text\n---\n"),
        FrontmatterError::Yaml { .. }
    ));
}

#[test]
fn alias_bomb_is_refused() {
    // "Billion laughs": nine levels of nine-fold aliases would expand to 9^9 strings.
    let mut yaml =
        String::from("name: bomb\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..9 {
        let p = i - 1;
        yaml.push_str(&format!(
            "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    // Unknown keys are skipped without expanding their aliases.
    assert_eq!(
        ok(&format!("---\n{yaml}---\n")).meta.name.as_deref(),
        Some("bomb")
    );
    // A field that takes any value expands them, until the parser's repetition limit.
    let e = err(&format!("---\n{yaml}any: *l8\n---\n"));
    assert!(matches!(e, FrontmatterError::Yaml { .. }), "{e:?}");
    assert!(e.to_string().contains("aliases expand"), "{e}");
}

#[test]
fn deep_nesting_is_refused() {
    let depth = 500;
    let yaml = format!("any: {}{}\n", "[".repeat(depth), "]".repeat(depth));
    let e = err(&format!("---\n{yaml}---\n"));
    assert!(e.to_string().contains("nested too deeply"), "{e}");
}

#[test]
fn bare_star_gets_a_hint() {
    let e = err("---\ntools:\n  *: true\n---\n");
    match &e {
        FrontmatterError::Yaml { line, .. } => assert_eq!(*line, Some(3)),
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string().contains(r#"quote it, as in `"*": true`"#),
        "{e}"
    );
}

#[test]
fn required_fields() {
    assert_eq!(required(Some("  a \n".into()), "name", "p").unwrap(), "a");
    assert!(matches!(
        required(Some("  ".into()), "name", "p"),
        Err(FrontmatterError::MissingField { field: "name", .. })
    ));
    assert!(matches!(
        required_line(Some("a\nb".into()), "name", "p"),
        Err(FrontmatterError::MultiLine { field: "name", .. })
    ));
    let e = required(None, "description", "x/SKILL.md").unwrap_err();
    assert_eq!(
        e.to_string(),
        "x/SKILL.md: the frontmatter has no `description`: add a line `description: …` between \
         the `---` lines"
    );
}
