//! Whole documents against the screen text they should give, and streaming against rendering
//! at once.

use super::*;
use highlight::Theme;
use proptest::prelude::*;

fn plain(lines: &[Line]) -> Vec<String> {
    lines.iter().map(Line::plain_text).collect()
}

fn screen(s: &str, width: usize) -> Vec<String> {
    plain(&MarkdownRenderer::render(s, width, Highlight::Off))
}

#[test]
fn block_vectors() {
    assert_eq!(screen("# Title #\ntext", 40), ["Title", "", "text"]);
    assert_eq!(screen("#hashtag", 40), ["#hashtag"]);
    assert_eq!(screen("- a\n  * b\n3. c", 40), ["• a", "  ◦ b", "", "3. c"]);
    assert_eq!(screen("---", 40)[0], "─".repeat(40));
    assert_eq!(screen("-1 degrees", 40), ["-1 degrees"]);
    assert_eq!(screen("**bold** start", 40), ["bold start"]);
    assert_eq!(screen("line one\nline two", 40), ["line one", "line two"]);
}

#[test]
fn blank_lines_collapse_and_trail_nothing() {
    assert_eq!(screen("\n\na\n\n\n\nb\n\n", 40), ["a", "", "b"]);
}

#[test]
fn a_whole_document() {
    let doc = "\
## Results

The run found **three** issues, see [the log](https://ci.example/42):

1. a *flaky* test
2. a slow `build`
   - on arm64
   - on x86_64
3. ~~nothing else~~

> Note: rerun with `--verbose`.

| Check | Status |
|-------|:------:|
| fmt   | ok     |
| tests | 2 ✗    |

- [x] triage
- [ ] fix
";
    assert_eq!(
        screen(doc, 70),
        [
            "Results",
            "",
            "The run found three issues, see the log (https://ci.example/42):",
            "",
            "1. a flaky test",
            "2. a slow build",
            "   • on arm64",
            "   • on x86_64",
            "3. nothing else",
            "",
            "│ Note: rerun with --verbose.",
            "",
            "┌───────┬────────┐",
            "│ Check │ Status │",
            "├───────┼────────┤",
            "│ fmt   │   ok   │",
            "│ tests │  2 ✗   │",
            "└───────┴────────┘",
            "",
            "• ☑ triage",
            "• ☐ fix",
        ]
        .map(|l| l.replace("   • on", "   ◦ on"))
    );
}

#[test]
fn a_loose_list_keeps_its_numbers_and_indentation() {
    assert_eq!(
        screen("1. one\n\n2. two\n\n   more about two\n\n3. three", 40),
        [
            "1. one",
            "",
            "2. two",
            "",
            "   more about two",
            "",
            "3. three"
        ]
    );
}

#[test]
fn code_blocks_in_several_languages() {
    let doc = "text\n```rust\nfn main() {\n\tlet x = \"**not bold**\";\n\n}\n```\n\
        ```python\ndef f():\n    return 1  # one\n```\n~~~sh\nls -la | wc -l\n~~~\nafter";
    assert_eq!(
        screen(doc, 40),
        [
            "text",
            "",
            "  ╭─ rust",
            "  │ fn main() {",
            "  │     let x = \"**not bold**\";",
            "  │ ",
            "  │ }",
            "  ╰─",
            "",
            "  ╭─ python",
            "  │ def f():",
            "  │     return 1  # one",
            "  ╰─",
            "",
            "  ╭─ sh",
            "  │ ls -la | wc -l",
            "  ╰─",
            "",
            "after"
        ]
    );
    // With colours, the code is highlighted by its language; the text is the same.
    let coloured = MarkdownRenderer::render(doc, 40, Highlight::On(Theme::Dark));
    assert_eq!(plain(&coloured), screen(doc, 40));
    for row in [3, 10, 15] {
        assert!(
            coloured[row]
                .0
                .iter()
                .any(|s| matches!(s.style.fg, Some(Color::Rgb(..)))),
            "row {row}: {:?}",
            coloured[row]
        );
    }
    // Hard breaks at the width, not at words; an unclosed block is closed at the end.
    assert_eq!(
        screen("~~~\nabc def ghi\n", 8),
        ["  ╭─", "  │ abc ", "  │ def ", "  │ ghi", "  ╰─"]
    );
    // A shorter fence does not close a longer one.
    assert_eq!(screen("````\n```\n````", 40), ["  ╭─", "  │ ```", "  ╰─"]);
    // A fence inside a list item, with a blank line in its code.
    assert_eq!(
        screen("- step:\n  ```\n  a\n\n  b\n  ```\n- next", 40),
        [
            "• step:",
            "    ╭─",
            "    │ a",
            "    │ ",
            "    │ b",
            "    ╰─",
            "• next"
        ]
    );
}

#[test]
fn tables_narrow_and_wide_with_cjk_and_emoji() {
    let doc = "| 名前 | 状態 |\n|---|---|\n| 東京 | ✅ 完了 |\n| café | 🚧 進行中 |";
    assert_eq!(
        screen(doc, 40),
        [
            "┌──────┬───────────┐",
            "│ 名前 │ 状態      │",
            "├──────┼───────────┤",
            "│ 東京 │ ✅ 完了   │",
            "│ café │ 🚧 進行中 │",
            "└──────┴───────────┘",
        ]
    );
    // Too narrow for a grid of these columns: one record per row.
    assert_eq!(
        screen(doc, 12),
        [
            "名前: 東京",
            "状態: ✅ 完",
            "  了",
            "",
            "名前: café",
            "状態: 🚧 進",
            "  行中",
        ]
    );
    for w in [12, 20, 40, 100] {
        for l in MarkdownRenderer::render(doc, w, Highlight::Off) {
            assert!(l.width() <= w, "{w}: {:?}", l.plain_text());
        }
    }
}

#[test]
fn a_table_in_one_byte_deltas() {
    let doc = "Sizes:\n\n| file | bytes |\n|---|--:|\n| a | 1 |\n| bb | 22 |\n\nDone.";
    let whole = MarkdownRenderer::render(doc, 40, Highlight::Off);
    let mut r = MarkdownRenderer::new(40, Highlight::Off);
    let mut raw_seen = false;
    for (i, c) in doc.char_indices() {
        r.push(&doc[i..i + c.len_utf8()]);
        let mut shown = plain(r.lines_committed());
        shown.extend(plain(&r.lines_pending()));
        // While the table is open its rows are laid out again: the delimiter row never shows.
        raw_seen |= shown.iter().any(|l| l.contains("|--"));
    }
    r.finish();
    assert!(!raw_seen);
    assert_eq!(r.lines_committed(), whole.as_slice());
    assert_eq!(
        plain(&whole),
        [
            "Sizes:",
            "",
            "┌──────┬───────┐",
            "│ file │ bytes │",
            "├──────┼───────┤",
            "│ a    │     1 │",
            "│ bb   │    22 │",
            "└──────┴───────┘",
            "",
            "Done."
        ]
    );
}

#[test]
fn pending_shows_the_open_block() {
    let mut r = MarkdownRenderer::new(40, Highlight::Off);
    r.push("done\n\n**bo");
    assert_eq!(plain(r.lines_committed()), ["done"]);
    assert_eq!(plain(&r.lines_pending()), ["", "**bo"]);
    r.push("ld**");
    assert_eq!(plain(&r.lines_pending()), ["", "bold"]);
    r.push("\n");
    assert_eq!(plain(&r.lines_pending()), ["", "bold"]);
    r.push("\n");
    assert!(r.lines_pending().is_empty());
    assert_eq!(plain(r.lines_committed()), ["done", "", "bold"]);
    r.push("```\nco");
    assert_eq!(plain(&r.lines_pending()), ["  │ co"]);
}

const DOC: &str = "# Plan\n\nFirst **bold** and `code` with [a link](http://x.y).\n\n\
    - item one\n- item *two*\n  1. nested\n\n> a quote\n\n```sh\nls -la\r\n\n```\n\n---\n\
    | a | 日本 |\n|---|---|\n| 🦀 | x |\n\nLast line without newline é 日本";

#[test]
fn committed_lines_never_change() {
    let whole = MarkdownRenderer::render(DOC, 30, Highlight::On(Theme::Dark));
    let mut r = MarkdownRenderer::new(30, Highlight::On(Theme::Dark));
    let mut seen = 0;
    for (i, c) in DOC.char_indices() {
        r.push(&DOC[i..i + c.len_utf8()]);
        let committed = r.lines_committed();
        assert!(committed.len() >= seen);
        assert_eq!(committed, &whole[..committed.len()]);
        seen = committed.len();
    }
    r.finish();
    assert_eq!(r.lines_committed(), whole.as_slice());
}

#[test]
fn lines_fit_the_width() {
    for w in [1, 2, 5, 13, 40] {
        for l in MarkdownRenderer::render(DOC, w, Highlight::Off) {
            // The gutter and list markers may exceed a width too narrow to hold them.
            assert!(l.width() <= w.max(8), "{w}: {:?}", l.plain_text());
        }
    }
}

proptest! {
    /// Any split of the text into deltas gives the same screen as the whole text.
    #[test]
    fn any_split_gives_the_same_screen(
        cuts in proptest::collection::vec(0..DOC.len(), 0..40),
        width in 8usize..90,
    ) {
        let whole = MarkdownRenderer::render(DOC, width, Highlight::On(Theme::Light));
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| DOC.is_char_boundary(c)).collect();
        cuts.sort_unstable();
        let mut r = MarkdownRenderer::new(width, Highlight::On(Theme::Light));
        let mut at = 0;
        for c in cuts.into_iter().chain([DOC.len()]) {
            r.push(&DOC[at..c]);
            at = c;
        }
        r.finish();
        prop_assert_eq!(r.lines_committed(), whole.as_slice());
    }
}

#[test]
fn wrapping_counts_display_columns() {
    // Wide characters take two columns, a combining mark none, an emoji cluster two: every
    // line of a paragraph, a list item and a code block stays within the width.
    let doc = "日本語の文章はとても長いので折り返されます。e\u{301}e\u{301}e\u{301} 👩‍👩‍👧 🦀🦀\n\n\
               - 項目 日本語 日本語 日本語 日本語\n\n```\n日本語のコード 👍👍👍👍👍👍\n```";
    for w in [9, 12, 17] {
        let lines = MarkdownRenderer::render(doc, w, Highlight::Off);
        for l in &lines {
            assert!(
                l.width() <= w,
                "{w}: {:?} is {} wide",
                l.plain_text(),
                l.width()
            );
        }
        // Nothing is lost on the way: the text is all there, in order.
        let all: String = plain(&lines)
            .concat()
            .replace(['│', ' ', '•', '╭', '╰', '─'], "");
        assert!(
            all.contains("日本語の文章はとても長いので折り返されます。"),
            "{all}"
        );
        assert!(all.contains("e\u{301}e\u{301}e\u{301}👩‍👩‍👧🦀🦀"), "{all}");
    }
    assert_eq!(
        screen("日本語 日本語 日本語", 13),
        ["日本語 日本語", "日本語"]
    );
    // A combining accent does not push the line past the width.
    assert_eq!(
        screen("cafe\u{301} cafe\u{301} cafe\u{301}", 10),
        ["cafe\u{301} cafe\u{301}", "cafe\u{301}"]
    );
}

#[test]
fn links_are_hyperlinks_where_the_terminal_opens_them() {
    use crate::tui::text::render_ansi;
    let doc = "see [the docs](https://example.com/a?b=c) and <https://example.org>";
    let osc8 = MarkdownRenderer::new(80, Highlight::Off)
        .with_links(Links::Osc8)
        .document(doc);
    assert_eq!(plain(&osc8), ["see the docs and https://example.org"]);
    let raw = render_ansi(&osc8[0], true);
    assert!(
        raw.contains("\x1b]8;;https://example.com/a?b=c\x1b\\\x1b[4mthe docs\x1b[0m\x1b]8;;\x1b\\"),
        "{raw:?}"
    );
    assert!(raw.contains("\x1b]8;;https://example.org\x1b\\"), "{raw:?}");
    // Without colours (NO_COLOR) no escape at all, the hyperlink included.
    assert_eq!(
        render_ansi(&osc8[0], false),
        "see the docs and https://example.org"
    );
    let text = MarkdownRenderer::new(80, Highlight::Off).document(doc);
    assert_eq!(
        plain(&text),
        ["see the docs (https://example.com/a?b=c) and https://example.org"]
    );
}

#[test]
fn hostile_link_targets_are_never_written_into_an_escape() {
    use crate::tui::text::render_ansi;
    // A URL that would end the OSC 8 sequence early and clear the screen, one with a space
    // or a control character, a `javascript:` and a `file:` target: each is shown as text,
    // cleaned, never inside an escape sequence.
    for url in [
        "https://x.y/\u{1b}\\\u{1b}[2J",
        "https://x.y/a\u{7}b",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://x.y/\u{9b}31m",
    ] {
        let doc = format!("[click](<{url}>)");
        let lines = MarkdownRenderer::new(80, Highlight::Off)
            .with_links(Links::Osc8)
            .document(&doc);
        let raw: String = lines.iter().map(|l| render_ansi(l, true)).collect();
        assert!(!raw.contains("\x1b]8"), "{url:?}: {raw:?}");
        assert!(!raw.contains("[2J"), "{url:?}: {raw:?}");
        assert!(
            !raw.contains('\u{7}') && !raw.contains('\u{9b}'),
            "{url:?}: {raw:?}"
        );
    }
    // Link text with escapes is cleaned like any text.
    let lines = MarkdownRenderer::new(80, Highlight::Off)
        .with_links(Links::Osc8)
        .document("[a\u{1b}\\]8;;https://evil\u{7}b](https://ok.example)");
    let raw = render_ansi(&lines[0], true);
    // Only hrns's own sequences are left: the text's escape and bell are gone, so what
    // remains of the fake sequence is harmless text.
    let ours = raw
        .replace("\x1b]8;;https://ok.example\x1b\\", "")
        .replace("\x1b]8;;\x1b\\", "")
        .replace("\x1b[4m", "")
        .replace("\x1b[0m", "");
    assert!(!ours.contains(['\x1b', '\x07']), "{raw:?}");
    assert_eq!(ours, "a]8;;https://evilb");
    // An over-long URL is text too.
    let long = format!("https://x.y/{}", "a".repeat(3000));
    let lines = MarkdownRenderer::new(80, Highlight::Off)
        .with_links(Links::Osc8)
        .document(&format!("[t]({long})"));
    assert!(
        lines
            .iter()
            .all(|l| !render_ansi(l, true).contains("\x1b]8"))
    );
}
