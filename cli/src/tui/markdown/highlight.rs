//! Syntax colours for code: a fast lexer of our own for the languages models write most
//! (`lexer.rs`), `syntect` with its bundled syntaxes for the others; both take their colours
//! from syntect's bundled themes, loaded on first use so that start-up does not pay for them.

use super::lexer::{Class, Lang, Lexer};
use crate::tui::text::{Color, Line, SpanStyle};
use std::sync::OnceLock;
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme as SyntectTheme, ThemeSet,
};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

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

/// The two themes' highlighters, deserialised the first time code is coloured.
fn highlighters() -> &'static (Highlighter<'static>, Highlighter<'static>) {
    static THEMES: OnceLock<(SyntectTheme, SyntectTheme)> = OnceLock::new();
    static HIGHLIGHTERS: OnceLock<(Highlighter<'static>, Highlighter<'static>)> = OnceLock::new();
    HIGHLIGHTERS.get_or_init(|| {
        let (dark, light) = THEMES.get_or_init(|| {
            let mut set = ThemeSet::load_defaults();
            let mut take = |name: &str| set.themes.remove(name).unwrap_or_default();
            (take("base16-ocean.dark"), take("InspiredGitHub"))
        });
        (Highlighter::new(dark), Highlighter::new(light))
    })
}

fn highlighter(theme: Theme) -> &'static Highlighter<'static> {
    let (dark, light) = highlighters();
    match theme {
        Theme::Dark => dark,
        Theme::Light => light,
    }
}

/// The bundled syntaxes, deserialised the first time a language the fast lexer does not know
/// is coloured.
fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// A span style from a syntect style: its foreground, and bold if the theme says so.
fn span_style(style: syntect::highlighting::Style) -> SpanStyle {
    let c = style.foreground;
    let span = SpanStyle::fg(Color::Rgb(c.r, c.g, c.b));
    if style.font_style.contains(FontStyle::BOLD) {
        span.bold()
    } else {
        span
    }
}

/// The colour of each class of the fast lexer, taken once from the theme for a representative
/// scope, so that code looks as it did under syntect's grammars.
#[derive(Debug)]
struct Palette {
    plain: SpanStyle,
    keyword: SpanStyle,
    constant: SpanStyle,
    string: SpanStyle,
    comment: SpanStyle,
    number: SpanStyle,
}

impl Palette {
    fn of(theme: Theme) -> &'static Palette {
        static DARK: OnceLock<Palette> = OnceLock::new();
        static LIGHT: OnceLock<Palette> = OnceLock::new();
        let cell = match theme {
            Theme::Dark => &DARK,
            Theme::Light => &LIGHT,
        };
        cell.get_or_init(|| {
            let h = highlighter(theme);
            let style = |scope: &str| {
                let scopes: Vec<Scope> = ["source", scope]
                    .iter()
                    .filter_map(|s| Scope::new(s).ok())
                    .collect();
                span_style(h.style_for_stack(&scopes))
            };
            Palette {
                plain: span_style(h.style_for_stack(&[])),
                keyword: style("keyword.control"),
                constant: style("constant.language"),
                string: style("string.quoted.double"),
                comment: style("comment.line"),
                number: style("constant.numeric"),
            }
        })
    }

    fn style(&self, class: Class) -> SpanStyle {
        match class {
            Class::Plain => self.plain,
            Class::Keyword => self.keyword,
            Class::Constant => self.constant,
            Class::String => self.string,
            Class::Comment => self.comment,
            Class::Number => self.number,
        }
    }
}

/// Colours the lines of one code block in order; the parser's state carries from line to
/// line (a string or comment that spans lines), so each line is parsed once.
#[derive(Clone)]
pub(crate) struct CodeHighlighter {
    engine: Engine,
}

/// Which engine colours a block: the fast lexer for the languages models write most (about
/// a tenth of syntect's cost per line), syntect's grammars for every other language.
#[derive(Clone)]
enum Engine {
    Off,
    Fast {
        lang: Lang,
        lexer: Lexer,
        palette: &'static Palette,
    },
    Syntect(Box<State>),
}

#[derive(Clone)]
struct State {
    highlighter: &'static Highlighter<'static>,
    parse: ParseState,
    highlight: HighlightState,
    syntax: &'static SyntaxReference,
}

impl State {
    fn new(syntax: &'static SyntaxReference, highlighter: &'static Highlighter<'static>) -> State {
        State {
            highlighter,
            parse: ParseState::new(syntax),
            highlight: HighlightState::new(highlighter, ScopeStack::new()),
            syntax,
        }
    }
}

impl std::fmt::Debug for CodeHighlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let engine = match &self.engine {
            Engine::Off => "off",
            Engine::Fast { .. } => "fast",
            Engine::Syntect(_) => "syntect",
        };
        f.debug_struct("CodeHighlighter")
            .field("engine", &engine)
            .finish()
    }
}

impl CodeHighlighter {
    /// A highlighter for code in `lang` (a fence's info word such as `rust`, or a file
    /// extension such as `rs`); plain when `lang` is unknown or `highlight` is off.
    pub(crate) fn new(lang: &str, highlight: Highlight) -> CodeHighlighter {
        let Highlight::On(theme) = highlight else {
            return CodeHighlighter {
                engine: Engine::Off,
            };
        };
        let lang = lang.trim();
        if lang.is_empty() {
            return CodeHighlighter {
                engine: Engine::Off,
            };
        }
        if let Some(fast) = Lang::from_token(lang) {
            return CodeHighlighter {
                engine: Engine::Fast {
                    lang: fast,
                    lexer: Lexer::new(fast),
                    palette: Palette::of(theme),
                },
            };
        }
        let syntaxes = syntaxes();
        let syntax = syntaxes
            .find_syntax_by_token(lang)
            .or_else(|| syntaxes.find_syntax_by_extension(lang));
        let engine = match syntax {
            Some(syntax) => Engine::Syntect(Box::new(State::new(syntax, highlighter(theme)))),
            None => Engine::Off,
        };
        CodeHighlighter { engine }
    }

    /// Whether this highlighter colours anything (a known language, colours on).
    pub(crate) fn is_on(&self) -> bool {
        match self.engine {
            Engine::Off => false,
            Engine::Fast { .. } | Engine::Syntect(_) => true,
        }
    }

    /// The same language and theme, parsing afresh (for a diff hunk that starts mid-file).
    pub(crate) fn restarted(&self) -> CodeHighlighter {
        let engine = match &self.engine {
            Engine::Off => Engine::Off,
            Engine::Fast { lang, palette, .. } => Engine::Fast {
                lang: *lang,
                lexer: Lexer::new(*lang),
                palette,
            },
            Engine::Syntect(s) => Engine::Syntect(Box::new(State::new(s.syntax, s.highlighter))),
        };
        CodeHighlighter { engine }
    }

    /// One line of code (without its line end) as coloured spans.
    pub(crate) fn line(&mut self, code: &str) -> Line {
        match &mut self.engine {
            Engine::Off => Line::plain(code),
            Engine::Fast { lexer, palette, .. } => {
                let mut line = Line::new();
                lexer.line(code, |piece, class| {
                    line.push(piece, palette.style(class));
                });
                line
            }
            Engine::Syntect(state) => {
                let with_end = format!("{code}\n");
                let Ok(ops) = state.parse.parse_line(&with_end, syntaxes()) else {
                    // A syntax the regex engine cannot run: the rest of the block stays plain.
                    self.engine = Engine::Off;
                    return Line::plain(code);
                };
                let mut line = Line::new();
                for (style, piece) in
                    HighlightIterator::new(&mut state.highlight, &ops, &with_end, state.highlighter)
                {
                    let piece = piece.strip_suffix('\n').unwrap_or(piece);
                    line.push(piece, span_style(style));
                }
                line
            }
        }
    }

    /// Which engine colours this block, for the tests that the fast one is used.
    #[cfg(test)]
    fn engine_name(&self) -> &'static str {
        match self.engine {
            Engine::Off => "off",
            Engine::Fast { .. } => "fast",
            Engine::Syntect(_) => "syntect",
        }
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
    fn the_fast_lexer_serves_the_common_languages_and_syntect_the_rest() {
        for lang in [
            "rust", "rs", "py", "python", "js", "ts", "sh", "bash", "json", "c", "go",
        ] {
            let h = CodeHighlighter::new(lang, Highlight::On(Theme::Dark));
            assert_eq!(h.engine_name(), "fast", "{lang}");
            assert_eq!(h.restarted().engine_name(), "fast", "{lang}");
        }
        for lang in ["diff", "yaml", "rb", "html"] {
            let h = CodeHighlighter::new(lang, Highlight::On(Theme::Dark));
            assert_eq!(h.engine_name(), "syntect", "{lang}");
            assert_eq!(h.restarted().engine_name(), "syntect", "{lang}");
        }
        let h = CodeHighlighter::new("rust", Highlight::Off);
        assert_eq!(h.engine_name(), "off");
    }

    #[test]
    fn the_fast_lexer_takes_the_themes_colours() {
        // base16-ocean.dark: keywords mauve, strings green, comments grey, as under syntect.
        let mut fast = CodeHighlighter::new("rust", Highlight::On(Theme::Dark));
        let line = fast.line("let s = \"x\"; // c");
        let fg = |piece: &str| {
            line.0
                .iter()
                .find(|s| s.text == piece)
                .and_then(|s| s.style.fg)
                .unwrap_or_else(|| panic!("{piece}"))
        };
        assert_eq!(fg("let"), Color::Rgb(0xb4, 0x8e, 0xad));
        assert_eq!(fg("\"x\""), Color::Rgb(0xa3, 0xbe, 0x8c));
        assert_eq!(fg("// c"), Color::Rgb(0x65, 0x73, 0x7e));
        assert_ne!(fg("let"), fg(" s = "));
    }

    proptest::proptest! {
        #[test]
        fn spans_concatenate_to_the_line_in_both_engines(
            lines in proptest::collection::vec("[ -~\t\u{e9}\u{1F600}\\\\\"'`#/*<r]{0,40}", 1..5),
            lang in proptest::sample::select(vec!["rust", "py", "sh", "js", "json", "yaml", "rb"]),
        ) {
            let mut h = CodeHighlighter::new(lang, Highlight::On(Theme::Light));
            for line in &lines {
                let spans = h.line(line);
                let text: String = spans.0.iter().map(|s| s.text.as_str()).collect();
                proptest::prop_assert_eq!(&text, line);
            }
        }
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
