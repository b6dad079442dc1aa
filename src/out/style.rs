//! Colour on a person's terminal: whether to use it, decided once
//! ([`wanted`], from `--color`, `NO_COLOR`, `CLICOLOR_FORCE` and whether
//! stdout is a terminal), the styles of what is coloured, and [`Styled`],
//! the line a command builds from plain and coloured pieces. Each piece of
//! text goes through [`super::terminal_safe`] before its colour is put
//! around it: text from the record never acts on the terminal, only the
//! escapes written here do.

use std::ffi::OsStr;

use anstyle::AnsiColor;
pub use anstyle::Style;

/// No style: text as it is.
pub const PLAIN: Style = Style::new();
/// A commit id (`log`, `show`'s turn headers, `diff`), as git shows one.
pub const COMMIT: Style = AnsiColor::Yellow.on_default();
/// A branch name (`log`'s decorations, `branch`).
pub const BRANCH: Style = AnsiColor::Green.on_default();
/// A remote's branch (`origin/main`), red as git shows it.
pub const REMOTE: Style = AnsiColor::Red.on_default();
/// The current branch, or HEAD (`branch`'s `*`, `log`'s `HEAD ->`).
pub const CURRENT: Style = AnsiColor::Green.on_default().bold();
/// A turn's header (`show`, `diff`).
pub const HEADER: Style = Style::new().bold();
/// The roles of `show`'s lines.
pub const USER: Style = AnsiColor::Blue.on_default().bold();
pub const ASSISTANT: Style = AnsiColor::Magenta.on_default().bold();
pub const TOOL: Style = AnsiColor::Cyan.on_default();
/// A diff, in git's colours: lines added and removed, hunk headers, and
/// the lines that name the file (`diff --git`, `index`, `---`, `+++`).
pub const ADDED: Style = AnsiColor::Green.on_default();
pub const REMOVED: Style = AnsiColor::Red.on_default();
pub const HUNK: Style = AnsiColor::Cyan.on_default();
pub const META: Style = Style::new().bold();
/// What `verify` found: a problem, a note.
pub const PROBLEM: Style = AnsiColor::Red.on_default();
pub const NOTE: Style = AnsiColor::Yellow.on_default();

/// What `--color` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Colour when stdout is a terminal; `NO_COLOR` (set and not empty)
    /// turns it off, `CLICOLOR_FORCE` (set and not `0`) on.
    Auto,
    Always,
    Never,
}

/// Whether a command colours what it prints: never under `--json`; as
/// `--color` says when it says `always` or `never`; else (`auto`) not
/// when `NO_COLOR` is set and not empty, yes when `CLICOLOR_FORCE` is set
/// and not `0`, else when stdout is a terminal. The environment's values
/// are given (`no_color`, `force`), so that the rule is tested alone.
pub fn wanted(
    choice: Choice,
    json: bool,
    terminal: bool,
    no_color: Option<&OsStr>,
    force: Option<&OsStr>,
) -> bool {
    if json {
        return false;
    }
    match choice {
        Choice::Always => true,
        Choice::Never => false,
        Choice::Auto if no_color.is_some_and(|v| !v.is_empty()) => false,
        Choice::Auto if force.is_some_and(|v| v != "0") => true,
        Choice::Auto => terminal,
    }
}

/// A line of human output, built piece by piece: each piece made
/// [`super::terminal_safe`], the coloured ones between their style's escape
/// and the reset (when colour is on). Printed with
/// [`super::Printer::styled_line`].
#[derive(Debug, Clone, Default)]
pub struct Styled {
    color: bool,
    text: String,
}

impl Styled {
    /// An empty line, coloured or not.
    pub fn new(color: bool) -> Styled {
        Styled {
            color,
            text: String::new(),
        }
    }

    /// `text` as it is.
    pub fn plain(mut self, text: &str) -> Styled {
        self.text.push_str(&super::terminal_safe(text));
        self
    }

    /// `text` in `style` (as it is, without colour).
    pub fn paint(mut self, style: Style, text: &str) -> Styled {
        let safe = super::terminal_safe(text);
        if self.color && !safe.is_empty() && style != PLAIN {
            self.text.push_str(&format!("{style}{safe}{style:#}"));
        } else {
            self.text.push_str(&safe);
        }
        self
    }

    /// The line as it is printed.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// The lines of a diff (as `git show` prints one after its message) as
/// git colours them: the lines that name a file (`diff --git`, `index`,
/// modes, `---`, `+++`) bold, a hunk's `@@ … @@` cyan (what follows it
/// plain), lines added green, removed red, context plain.
pub fn diff_lines(color: bool, text: &str) -> Vec<Styled> {
    let mut in_hunk = false;
    text.lines()
        .map(|line| {
            let l = Styled::new(color);
            if line.starts_with("diff ") {
                in_hunk = false;
            }
            if let Some(rest) = line.strip_prefix("@@ ")
                && let Some(end) = rest.find(" @@")
            {
                in_hunk = true;
                let (head, tail) = line.split_at(end + 6);
                return l.paint(HUNK, head).plain(tail);
            }
            match line.as_bytes().first() {
                Some(b'+') if in_hunk => l.paint(ADDED, line),
                Some(b'-') if in_hunk => l.paint(REMOVED, line),
                _ if in_hunk || line.starts_with("Binary files ") => l.plain(line),
                _ => l.paint(META, line),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_never_win_always_wins_then_the_environment_then_the_terminal() {
        let set = |s: &'static str| Some(OsStr::new(s));
        for choice in [Choice::Auto, Choice::Always, Choice::Never] {
            assert!(!wanted(choice, true, true, None, set("1")));
        }
        assert!(wanted(Choice::Always, false, false, set("1"), None));
        assert!(!wanted(Choice::Never, false, true, None, set("1")));
        assert!(wanted(Choice::Auto, false, true, None, None));
        assert!(!wanted(Choice::Auto, false, false, None, None));
        assert!(!wanted(Choice::Auto, false, true, set("1"), None));
        // An empty NO_COLOR is no request.
        assert!(wanted(Choice::Auto, false, true, set(""), None));
        assert!(wanted(Choice::Auto, false, false, None, set("1")));
        assert!(!wanted(Choice::Auto, false, false, None, set("0")));
        // NO_COLOR wins over CLICOLOR_FORCE.
        assert!(!wanted(Choice::Auto, false, false, set("1"), set("1")));
    }

    #[test]
    fn text_is_made_safe_before_it_is_coloured() {
        let l = Styled::new(true)
            .plain("a\u{1b}[2J")
            .paint(COMMIT, "b\u{1b}]52;c");
        assert_eq!(l.as_str(), "a\\u{1b}[2J\u{1b}[33mb\\u{1b}]52;c\u{1b}[0m");
        let l = Styled::new(false).plain("a").paint(COMMIT, "b");
        assert_eq!(l.as_str(), "ab");
    }

    #[test]
    fn diff_lines_take_gits_colours() {
        let text = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@ fn main\n-a\n+b\n c\n--- x\n\\ No newline at end of file\n";
        let lines: Vec<String> = diff_lines(true, text).into_iter().map(|l| l.text).collect();
        let (b, c, r, g, o) = (
            "\u{1b}[1m",
            "\u{1b}[36m",
            "\u{1b}[31m",
            "\u{1b}[32m",
            "\u{1b}[0m",
        );
        assert_eq!(
            lines,
            vec![
                format!("{b}diff --git a/x b/x{o}"),
                format!("{b}--- a/x{o}"),
                format!("{b}+++ b/x{o}"),
                format!("{c}@@ -1,2 +1,2 @@{o} fn main"),
                format!("{r}-a{o}"),
                format!("{g}+b{o}"),
                " c".to_string(),
                // Inside a hunk, `---` is a line removed.
                format!("{r}--- x{o}"),
                "\\ No newline at end of file".to_string(),
            ]
        );
        let plain: Vec<String> = diff_lines(false, text)
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert_eq!(plain.join("\n") + "\n", text);
    }
}
