//! What `load_skill` returns: the instructions of a SKILL.md without its frontmatter.
//!
//! Discovering skills (walking `.agents/skills/*/SKILL.md`) is the CLI's business; the driver's
//! tool reads the file of the skill the model named and hands its text here.

use super::ToolOutput;

/// The body of a SKILL.md: the text after a leading YAML frontmatter block (`---` to the next
/// `---` or `...` line), with the blank lines that follow it removed. Text without a complete
/// frontmatter block is returned whole; one leading byte-order mark is ignored.
pub fn skill_body(text: &str) -> &str {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(mut rest) = strip_line(text, "---") else {
        return text;
    };
    while !rest.is_empty() {
        if let Some(body) = strip_line(rest, "---").or_else(|| strip_line(rest, "...")) {
            return body.trim_start_matches(['\n', '\r']);
        }
        rest = rest.find('\n').map_or("", |i| &rest[i + 1..]);
    }
    text
}

/// `text` after its first line, if that line is `marker` (trailing spaces and `\r` allowed).
fn strip_line<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let (line, rest) = text.split_once('\n').unwrap_or((text, ""));
    (line.trim_end() == marker).then_some(rest)
}

/// The result of `load_skill` for the skill `name` whose SKILL.md reads `text`.
pub fn render_skill(name: &str, text: &str) -> ToolOutput {
    let body = skill_body(text).trim_end();
    if body.is_empty() {
        ToolOutput::error(format!("the skill `{name}` has no instructions"))
    } else {
        ToolOutput::ok(format!("<skill name=\"{name}\">\n{body}\n</skill>"))
    }
}

/// The refusal of an unknown skill name, listing the known ones.
pub fn unknown_skill(name: &str, known: &[&str]) -> ToolOutput {
    let listed = if known.is_empty() {
        "no skills are available".to_owned()
    } else {
        format!("the available skills are: {}", known.join(", "))
    };
    ToolOutput::error(format!("there is no skill named `{name}`; {listed}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_is_removed() {
        let table = [
            ("---\nname: x\n---\nDo this.\n", "Do this.\n"),
            ("\u{feff}---\r\nname: x\r\n---\r\n\r\nDo this.", "Do this."),
            ("---\nname: x\n...\nbody", "body"),
            ("---  \na: b\n---\n\n\nbody", "body"),
            ("no frontmatter\n---\n", "no frontmatter\n---\n"),
            ("---\nunclosed: yes\nbody", "---\nunclosed: yes\nbody"),
            ("---\n---\n", ""),
            ("", ""),
            ("----\nx\n----\nbody", "----\nx\n----\nbody"),
        ];
        for (text, body) in table {
            assert_eq!(skill_body(text), body, "{text:?}");
        }
    }

    #[test]
    fn rendered_skills_and_unknown_names() {
        let out = render_skill("git", "---\nname: git\n---\nUse git well.\n");
        assert_eq!(
            out,
            ToolOutput::ok("<skill name=\"git\">\nUse git well.\n</skill>")
        );
        assert!(render_skill("empty", "---\nname: e\n---\n\n").is_error);
        let out = unknown_skill("nope", &["git", "rust"]);
        assert!(out.is_error && out.content.contains("git, rust"));
        assert!(unknown_skill("x", &[]).content.contains("no skills"));
    }
}
