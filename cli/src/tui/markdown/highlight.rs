//! Syntax colours for code: `syntect` with its bundled syntaxes and themes, loaded on first
//! use so that start-up does not pay for them.

use crate::tui::text::{Color, Line, SpanStyle};
use std::sync::OnceLock;
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme as SyntectTheme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

/// The colours of code, chosen for the terminal's background.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Theme {
    Dark,
    Light,
}

/// Whether code is coloured, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Highlight {
    /// Plain code: `NO_COLOR`, a terminal without colours, or a test that wants plain text.
    Off,
    On(Theme),
}

impl Highlight {
    /// The setting for this terminal: off under `NO_COLOR` or `TERM=dumb`; else the theme the
    /// config names (`"theme": "dark" | "light"`); else the one that suits the background the
    /// terminal tells when `ask` asks it (OSC 11); else the one `COLORFGBG` suggests; else dark.
    pub(crate) fn detect(
        config_theme: Option<&str>,
        ask: impl FnOnce() -> Option<Theme>,
    ) -> Highlight {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        if no_color || dumb {
            return Highlight::Off;
        }
        let theme = match config_theme {
            Some("light") => Theme::Light,
            Some("dark") => Theme::Dark,
            _ => ask().unwrap_or_else(|| {
                background_from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref())
            }),
        };
        Highlight::On(theme)
    }
}

/// `COLORFGBG` is `fg;bg` (sometimes `fg;default;bg`) in the 16 ANSI colours; a background of
/// 7 (white) or 9–15 (bright colours) is a light terminal.
fn background_from_colorfgbg(value: Option<&str>) -> Theme {
    let bg = value
        .and_then(|v| v.rsplit(';').next())
        .and_then(|bg| bg.parse::<u8>().ok());
    match bg {
        Some(7 | 9..=15) => Theme::Light,
        _ => Theme::Dark,
    }
}

struct Assets {
    syntaxes: SyntaxSet,
    dark: Highlighter<'static>,
    light: Highlighter<'static>,
}

/// The bundled syntaxes and the two themes, deserialised the first time code is coloured.
fn assets() -> &'static Assets {
    static THEMES: OnceLock<(SyntectTheme, SyntectTheme)> = OnceLock::new();
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let (dark, light) = THEMES.get_or_init(|| {
            let mut set = ThemeSet::load_defaults();
            let mut take = |name: &str| set.themes.remove(name).unwrap_or_default();
            (take("base16-ocean.dark"), take("InspiredGitHub"))
        });
        Assets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            dark: Highlighter::new(dark),
            light: Highlighter::new(light),
        }
    })
}

/// Colours the lines of one code block in order; the parser's state carries from line to
/// line (a string or comment that spans lines), so each line is parsed once.
#[derive(Clone)]
pub(crate) struct CodeHighlighter {
    state: Option<State>,
}

#[derive(Clone)]
struct State {
    highlighter: &'static Highlighter<'static>,
    parse: ParseState,
    highlight: HighlightState,
    syntax: &'static SyntaxReference,
}

impl std::fmt::Debug for CodeHighlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeHighlighter")
            .field("on", &self.state.is_some())
            .finish()
    }
}

impl CodeHighlighter {
    /// A highlighter for code in `lang` (a fence's info word such as `rust`, or a file
    /// extension such as `rs`); plain when `lang` is unknown or `highlight` is off.
    pub(crate) fn new(lang: &str, highlight: Highlight) -> CodeHighlighter {
        let Highlight::On(theme) = highlight else {
            return CodeHighlighter { state: None };
        };
        let lang = lang.trim();
        if lang.is_empty() {
            return CodeHighlighter { state: None };
        }
        let assets = assets();
        let syntax = assets
            .syntaxes
            .find_syntax_by_token(lang)
            .or_else(|| assets.syntaxes.find_syntax_by_extension(lang));
        let Some(syntax) = syntax else {
            return CodeHighlighter { state: None };
        };
        let highlighter = match theme {
            Theme::Dark => &assets.dark,
            Theme::Light => &assets.light,
        };
        CodeHighlighter {
            state: Some(State {
                highlighter,
                parse: ParseState::new(syntax),
                highlight: HighlightState::new(highlighter, ScopeStack::new()),
                syntax,
            }),
        }
    }

    /// Whether this highlighter colours anything (a known language, colours on).
    pub(crate) fn is_on(&self) -> bool {
        self.state.is_some()
    }

    /// The same language and theme, parsing afresh (for a diff hunk that starts mid-file).
    pub(crate) fn restarted(&self) -> CodeHighlighter {
        let state = self.state.as_ref().map(|s| State {
            highlighter: s.highlighter,
            parse: ParseState::new(s.syntax),
            highlight: HighlightState::new(s.highlighter, ScopeStack::new()),
            syntax: s.syntax,
        });
        CodeHighlighter { state }
    }

    /// One line of code (without its line end) as coloured spans.
    pub(crate) fn line(&mut self, code: &str) -> Line {
        let Some(state) = &mut self.state else {
            return Line::plain(code);
        };
        let with_end = format!("{code}\n");
        let Ok(ops) = state.parse.parse_line(&with_end, &assets().syntaxes) else {
            // A syntax the regex engine cannot run: the rest of the block stays plain.
            self.state = None;
            return Line::plain(code);
        };
        let mut line = Line::new();
        for (style, piece) in
            HighlightIterator::new(&mut state.highlight, &ops, &with_end, state.highlighter)
        {
            let piece = piece.strip_suffix('\n').unwrap_or(piece);
            let c = style.foreground;
            let mut span = SpanStyle::fg(Color::Rgb(c.r, c.g, c.b));
            if style.font_style.contains(FontStyle::BOLD) {
                span = span.bold();
            }
            line.push(piece, span);
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_colours_and_unknown_ones_stay_plain() {
        for lang in ["rust", "rs", "python", "js", "sh", "json", "diff"] {
            let mut h = CodeHighlighter::new(lang, Highlight::On(Theme::Dark));
            let line = h.line("let x = \"s\"; // c");
            assert!(
                line.0
                    .iter()
                    .any(|s| matches!(s.style.fg, Some(Color::Rgb(..)))),
                "{lang}"
            );
            assert_eq!(line.plain_text(), "let x = \"s\"; // c");
        }
        let mut h = CodeHighlighter::new("no-such-language", Highlight::On(Theme::Dark));
        assert_eq!(h.line("x"), Line::plain("x"));
        let mut h = CodeHighlighter::new("rust", Highlight::Off);
        assert_eq!(h.line("fn x"), Line::plain("fn x"));
    }

    #[test]
    fn state_carries_across_lines() {
        let mut h = CodeHighlighter::new("rust", Highlight::On(Theme::Light));
        let open = h.line("/* a comment");
        let inside = h.line("still comment */ fn");
        // The comment's colour continues on the second line.
        assert_eq!(
            open.0.last().map(|s| s.style),
            inside.0.first().map(|s| s.style)
        );
    }

    #[test]
    fn colorfgbg_tells_light_from_dark() {
        assert_eq!(background_from_colorfgbg(Some("0;15")), Theme::Light);
        assert_eq!(background_from_colorfgbg(Some("0;default;7")), Theme::Light);
        assert_eq!(background_from_colorfgbg(Some("15;0")), Theme::Dark);
        assert_eq!(background_from_colorfgbg(Some("junk")), Theme::Dark);
        assert_eq!(background_from_colorfgbg(None), Theme::Dark);
    }
}
