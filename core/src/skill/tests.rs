use super::*;

const PDF: &str = "---
name: pdf
description: >
  Extracts text and tables from PDF files.
  Use when the user mentions a PDF.
license: MIT
---

# PDF

Run `pdftotext -layout FILE -`.
";

fn skill(name: &str, path: &str) -> Skill {
    parse_skill_md(
        &format!("---\nname: {name}\ndescription: d of {path}\n---\nbody of {path}"),
        path,
    )
    .unwrap()
}

#[test]
fn parses_a_skill_file() {
    let s = parse_skill_md(PDF, "/home/u/.agents/skills/pdf/SKILL.md").unwrap();
    assert_eq!(s.name, "pdf");
    assert_eq!(
        s.description,
        "Extracts text and tables from PDF files. Use when the user mentions a PDF."
    );
    assert_eq!(s.body, "# PDF\n\nRun `pdftotext -layout FILE -`.");
    assert_eq!(s.path, "/home/u/.agents/skills/pdf/SKILL.md");
}

#[test]
fn bom_and_crlf_give_the_same_skill() {
    let crlf = format!("\u{feff}{}", PDF.replace('\n', "\r\n"));
    assert_eq!(
        parse_skill_md(PDF, "p/SKILL.md").unwrap(),
        parse_skill_md(&crlf, "p/SKILL.md").unwrap()
    );
}

#[test]
fn name_defaults_to_the_directory() {
    let text = "---\ndescription: Does things.\n---\nsteps";
    assert_eq!(
        parse_skill_md(text, ".agents/skills/do-things/SKILL.md")
            .unwrap()
            .name,
        "do-things"
    );
    let blank = "---\nname: '  '\ndescription: Does things.\n---\n";
    assert_eq!(
        parse_skill_md(blank, "skills/x/SKILL.md").unwrap().name,
        "x"
    );
    let e = parse_skill_md(text, "SKILL.md").unwrap_err();
    assert!(
        matches!(e, FrontmatterError::MissingField { field: "name", .. }),
        "{e:?}"
    );
}

#[test]
fn bad_skill_files() {
    let path = "./.agents/skills/bad/SKILL.md";
    let cases: &[(&str, &str)] = &[
        ("", "no frontmatter"),
        ("# Just markdown\n", "no frontmatter"),
        ("---\nname: x\ndescription: d\n", "never closes"),
        ("---\nname: x\n---\nbody", "has no `description`"),
        ("---\ndescription: ''\n---\n", "has no `description`"),
        ("---\ndescription: [a, b]\n---\n", "invalid type"),
        ("---\nname: x\ndescription: {a: 1}\n---\n", "line 3"),
        ("---\nname: \"a\\nb\"\ndescription: d\n---\n", "single line"),
        ("---\nname: x\ndescription: 'unterminated\n---\n", "line"),
    ];
    for (text, needle) in cases {
        let msg = parse_skill_md(text, path).unwrap_err().to_string();
        assert!(msg.starts_with(path), "{msg}");
        assert!(msg.contains(needle), "{text:?}: {msg}");
    }
}

#[test]
fn large_body_and_empty_body() {
    let body = "y".repeat(1 << 20);
    let s = parse_skill_md(
        &format!("---\ndescription: big\n---\n{body}"),
        "s/big/SKILL.md",
    )
    .unwrap();
    assert_eq!(s.body.len(), 1 << 20);
    let s = parse_skill_md("---\ndescription: tiny\n---", "s/tiny/SKILL.md").unwrap();
    assert_eq!(s.body, "");
    assert_eq!(
        load_skill(&[s], "tiny"),
        ToolOutput::ok("The skill `tiny` has no instructions beyond its description.")
    );
}

#[test]
fn project_skills_win() {
    let skills = resolve_skills(
        vec![
            skill("Deploy", "project/deploy"),
            skill("lint", "project/lint"),
            skill("lint", "project/lint2"),
        ],
        vec![skill("deploy", "user/deploy"), skill("notes", "user/notes")],
    );
    let paths: Vec<&str> = skills.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths, ["project/deploy", "project/lint", "user/notes"]);
}

#[test]
fn finding_and_loading() {
    let skills = vec![skill("Notes", "a"), skill("notes", "b"), skill("lint", "c")];
    assert_eq!(find_skill(&skills, "notes").unwrap().path, "b");
    assert_eq!(find_skill(&skills, "NOTES").unwrap().path, "a");
    assert_eq!(find_skill(&skills, " lint ").unwrap().path, "c");
    assert_eq!(load_skill(&skills, "lint"), ToolOutput::ok("body of c"));
    assert_eq!(
        load_skill(&skills, "nope"),
        ToolOutput::error("There is no skill named `nope`. Available skills: Notes, notes, lint.")
    );
    assert_eq!(
        load_skill(&[], "nope"),
        ToolOutput::error("There is no skill named `nope`; no skills are available.")
    );
}
