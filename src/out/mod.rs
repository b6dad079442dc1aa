//! Output: data records on stdout (`--json`: one `{"type", "data"}` per
//! line), notes and warnings on stderr, the clock.
//!
//! What is written for a person (not `--json`) goes through
//! [`terminal_safe`]: the text it shows was written by agents and their
//! tools, and must not act on the terminal that shows it.

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;

pub mod records;
pub mod style;

/// Now, as float unix seconds; `GIT_SESSION_NOW` fixes the clock (tests)
/// to a time from 1970 to 9999 (another value is no time a node or a
/// commit can carry, and is not taken).
pub fn now() -> f64 {
    if let Some(v) = std::env::var("GIT_SESSION_NOW")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| (0.0..253_402_300_800.0).contains(v))
    {
        return v;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// `GIT_SESSION_TRACE=1`: print each phase's elapsed time on stderr.
pub fn trace(phase: &str) {
    use std::sync::OnceLock;
    static START: OnceLock<Option<std::time::Instant>> = OnceLock::new();
    if let Some(start) = START
        .get_or_init(|| std::env::var_os("GIT_SESSION_TRACE").map(|_| std::time::Instant::now()))
    {
        eprintln!(
            "git-session: trace: {:>8.3} ms {phase}",
            start.elapsed().as_secs_f64() * 1000.0
        );
    }
}

/// RFC 3339 UTC (`2026-11-30T07:05:05Z`) of unix seconds.
pub fn rfc3339(secs: f64) -> String {
    let ((y, m, d), rem) = civil(secs);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Unix seconds → ((year, month, day), seconds into that day), UTC.
fn civil(secs: f64) -> ((i64, u32, u32), i64) {
    let s = secs.floor() as i64;
    (civil_from_days(s.div_euclid(86_400)), s.rem_euclid(86_400))
}

/// Human form: `2026-11-30 07:05`, written where it is formatted (a listing
/// formats thousands: no string of its own each).
pub fn short_time(secs: f64) -> impl std::fmt::Display {
    struct Short(f64);
    impl std::fmt::Display for Short {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let mut out = Vec::with_capacity(16);
            push_short_time(&mut out, self.0);
            f.write_str(std::str::from_utf8(&out).expect("digits and separators"))
        }
    }
    Short(secs)
}

/// [`short_time`] appended to `out` digit by digit (a listing writes
/// thousands; the formatting machinery costs several times more).
pub fn push_short_time(out: &mut Vec<u8>, secs: f64) {
    let ((y, m, d), rem) = civil(secs);
    let two = |out: &mut Vec<u8>, n: u32| {
        out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8])
    };
    if (0..=9999).contains(&y) {
        let y = y as u32;
        two(out, y / 100);
        two(out, y % 100);
    } else {
        use std::io::Write;
        let _ = write!(out, "{y:04}");
    }
    out.push(b'-');
    two(out, m);
    out.push(b'-');
    two(out, d);
    out.push(b' ');
    two(out, (rem / 3600) as u32);
    out.push(b':');
    two(out, (rem % 3600 / 60) as u32);
}

/// What a mirror run did to a session, in the words `commit-turn` and
/// `backfill` share: `committed 2 turns (2, 3)` for the commits that hold
/// turns; `brought the session's files up to date (no new turn)` for a
/// commit that holds no node (a change of meta.json or `workdir/` only).
/// With `dry_run`, what it would do.
pub fn commits_done(commits: &[records::Commit], dry_run: bool) -> String {
    let turns: Vec<String> = commits
        .iter()
        .filter(|c| c.is_turn())
        .map(|c| c.turn.to_string())
        .collect();
    let files = commits.iter().any(|c| !c.is_turn());
    let (commit, bring) = match dry_run {
        true => ("would commit", "would bring"),
        false => ("committed", "brought"),
    };
    match (turns.len(), files) {
        (0, true) => format!("{bring} the session's files up to date (no new turn)"),
        (0, false) => format!("{commit} no turn"),
        (n, files) => format!(
            "{commit} {n} turn{} ({}){}",
            if n == 1 { "" } else { "s" },
            turns.join(", "),
            if files {
                format!(" and {bring} the session's files up to date")
            } else {
                String::new()
            }
        ),
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Where a command's output goes.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    pub json: bool,
    pub quiet: bool,
    /// Print no data and no notes (a command run inside another, as `demo` does).
    pub silent: bool,
    /// Colour what is printed for a person ([`style::wanted`] decides it).
    pub color: bool,
}

impl Printer {
    /// One data record: a JSON line under `--json`, else nothing (the
    /// command prints its human form with [`Printer::line`]).
    pub fn record<R: records::Record>(&self, data: &R) {
        if self.json && !self.silent {
            let mut line = record_line(data);
            line.push('\n');
            let _ = stdout_write(line.as_bytes());
        }
    }

    /// A line of human data on stdout (not under `--json`), made
    /// [`terminal_safe`].
    pub fn line(&self, text: impl AsRef<str>) {
        if !self.json && !self.silent {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", terminal_safe(text.as_ref()));
        }
    }

    /// A new line to build for [`Printer::styled_line`], coloured when the
    /// output is.
    pub fn styled(&self) -> style::Styled {
        style::Styled::new(self.colors())
    }

    /// Whether what is printed for a person is coloured (never under
    /// `--json`).
    pub fn colors(&self) -> bool {
        self.color && !self.json
    }

    /// A line of human data on stdout (not under `--json`), built of
    /// pieces each already made [`terminal_safe`].
    pub fn styled_line(&self, line: &style::Styled) {
        if !self.json && !self.silent {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", line.as_str());
        }
    }

    /// Already formatted output (records under `--json`, else lines made
    /// [`terminal_safe`]) in one write.
    pub fn block(&self, text: &str) {
        self.block_bytes(text.as_bytes());
    }

    /// [`Printer::block`] for text built as bytes.
    pub fn block_bytes(&self, text: &[u8]) {
        if self.silent {
            return;
        }
        if self.json {
            let _ = stdout_write(text);
        } else {
            let _ = stdout_write(terminal_safe(&String::from_utf8_lossy(text)).as_bytes());
        }
        if !stdout_held() {
            let _ = std::io::stdout().flush();
        }
    }

    /// A note for a person on stderr (not under `-q`).
    pub fn note(&self, text: impl AsRef<str>) {
        if !self.quiet && !self.silent {
            eprintln!("git-session: {}", terminal_safe(text.as_ref()));
        }
    }

    /// Whether progress is shown (a person watches stderr: a terminal, and
    /// neither `--json` nor `-q`).
    pub fn progress_shown(&self) -> bool {
        use std::io::IsTerminal;
        !self.json && !self.quiet && !self.silent && std::io::stderr().is_terminal()
    }

    /// A warning on stderr (shown even under `-q`? no: `-q` silences notes,
    /// warnings still show).
    pub fn warn(&self, text: impl AsRef<str>) {
        eprintln!("git-session: warning: {}", terminal_safe(text.as_ref()));
    }
}

/// An answer's output held back under `batch` ([`hold_stdout`]); one for
/// the process, whichever thread prints.
static HELD: std::sync::Mutex<Option<Vec<u8>>> = std::sync::Mutex::new(None);

fn held() -> std::sync::MutexGuard<'static, Option<Vec<u8>>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// How much held output is written out at once, before the answer ends:
/// a long answer leaves in pieces of about this size, whole and in order.
const HOLD_MAX: usize = 64 << 10;

/// From `true` until `false`: output written through [`stdout_write`] is
/// held back and leaves in one write at the next [`stdout_flush`] (or each
/// time [`HOLD_MAX`] bytes are held). `batch` holds each answer, so that a
/// caller waiting on it wakes once, not once per record.
pub fn hold_stdout(on: bool) {
    *held() = on.then(Vec::new);
}

fn stdout_held() -> bool {
    held().is_some()
}

/// Write `bytes` on standard output (held back under [`hold_stdout`]).
pub fn stdout_write(bytes: &[u8]) -> std::io::Result<()> {
    match held().as_mut() {
        Some(h) => {
            h.extend_from_slice(bytes);
            if h.len() >= HOLD_MAX {
                write_out(h)?;
            }
            Ok(())
        }
        None => std::io::stdout().lock().write_all(bytes),
    }
}

/// Write out what is held, and flush standard output.
pub fn stdout_flush() -> std::io::Result<()> {
    if let Some(h) = held().as_mut() {
        write_out(h)?;
    }
    std::io::stdout().flush()
}

/// `held` written out in one write, and emptied (emptied on an error too:
/// what could not be written is not written twice).
fn write_out(held: &mut Vec<u8>) -> std::io::Result<()> {
    let r = std::io::stdout().lock().write_all(held);
    held.clear();
    r
}

/// Standard output through [`stdout_write`] and [`stdout_flush`], for code
/// that writes with `std::io::Write`.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        stdout_write(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        stdout_flush()
    }
}

/// `text` as it may reach a person's terminal: each character that would act
/// on the terminal instead of showing is written as its escape (`\u{1b}`,
/// `\r`). These are the C0 controls but tab and newline (a carriage return
/// only where it ends a line), DEL, the C1 controls, and the bidirectional
/// overrides and isolates, which reorder what is shown.
///
/// The text comes from agents and their tools (a fetched page, a file read):
/// printed as it is, an OSC 52 sequence writes the user's clipboard, an OSC
/// 8 one shows a link to somewhere else, and cursor moves rewrite output
/// already read. `--json` and `cat` keep the exact text.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    fn acts(c: char, next: Option<char>) -> bool {
        match c {
            '\t' | '\n' => false,
            '\r' => next != Some('\n'),
            '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
            _ => false,
        }
    }
    let mut chars = text.char_indices().peekable();
    let first = loop {
        match chars.next() {
            None => return Cow::Borrowed(text),
            Some((i, c)) if acts(c, chars.peek().map(|&(_, n)| n)) => break i,
            Some(_) => {}
        }
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut rest = text[first..].chars().peekable();
    while let Some(c) = rest.next() {
        if acts(c, rest.peek().copied()) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A stored value shown inside one line (a title in `list`, `show`'s
/// header): its line breaks become spaces, so that no value (a title a
/// stranger's meta.json carries) can start a line of its own, a forged row.
pub fn in_one_line(text: &str) -> Cow<'_, str> {
    let breaks = |c: char| {
        matches!(
            c,
            '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        )
    };
    match text.contains(breaks) {
        true => Cow::Owned(text.replace(breaks, " ")),
        false => Cow::Borrowed(text),
    }
}

/// A progress bar on stderr, only when a person is watching: stderr is a
/// terminal, and neither `--json` nor `-q` was given. It appears after a
/// short delay so quick runs stay silent.
pub struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    pub fn new(printer: &Printer, len: u64, what: &str) -> Progress {
        if !printer.progress_shown() {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(len),
            indicatif::ProgressDrawTarget::stderr_with_hz(10),
        );
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} ({eta})")
                .expect("the template is valid"),
        );
        bar.set_message(what.to_string());
        Progress(Some(bar))
    }

    pub fn inc(&self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }

    /// Print a line above the bar (or plainly, without one).
    pub fn suspend(&self, f: impl FnOnce()) {
        match &self.0 {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

thread_local! {
    /// The standard input of the request `batch` is running, in place of the
    /// process's own (which carries the requests).
    static INPUT: std::cell::RefCell<Option<std::io::Cursor<Vec<u8>>>> =
        const { std::cell::RefCell::new(None) };
}

/// Run `f` with `bytes` as the standard input commands read (`batch`).
pub fn with_input<R>(bytes: Vec<u8>, f: impl FnOnce() -> R) -> R {
    INPUT.with(|i| *i.borrow_mut() = Some(std::io::Cursor::new(bytes)));
    let r = f();
    INPUT.with(|i| *i.borrow_mut() = None);
    r
}

/// All of the standard input a command reads (`--file -`, `--json-node`),
/// up to `limit` bytes: a request's payload under `batch`.
pub fn read_input(limit: u64) -> std::io::Result<Vec<u8>> {
    with_stdin(limit, |r| {
        let mut buf = Vec::new();
        r.read_to_end(&mut buf).map(|_| buf)
    })
}

/// Run `f` on the standard input a command reads, at most `limit` bytes of
/// it: under `batch` the request's payload (never the requests that follow
/// it), else the process's own.
pub fn with_stdin<R>(limit: u64, f: impl FnOnce(&mut dyn std::io::Read) -> R) -> R {
    use std::io::Read;
    match INPUT.with(|i| i.borrow_mut().take()) {
        Some(mut given) => {
            let r = f(&mut Read::by_ref(&mut given).take(limit));
            INPUT.with(|i| *i.borrow_mut() = Some(given));
            r
        }
        None => f(&mut std::io::stdin().lock().take(limit)),
    }
}

/// Whether a person can answer a question on the standard input: never
/// under `batch` (its input is the requests).
pub fn input_is_terminal() -> bool {
    use std::io::IsTerminal;
    INPUT.with(|i| i.borrow().is_none()) && std::io::stdin().is_terminal()
}

/// A diagnostic as the tool prints it on stderr: the message first, its
/// causes, a `help:` line with the next action, then the stable code (what
/// `--json` error records carry as `code`).
pub fn render_error(e: &dyn miette::Diagnostic) -> String {
    let mut s = format!("git-session: error: {e}\n");
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        s.push_str(&format!("  caused by: {c}\n"));
        cause = c.source();
    }
    s.push_str(&format!("help: {}\n", help_of(e)));
    if let Some(code) = e.code() {
        s.push_str(&format!("code: {code}\n"));
    }
    terminal_safe(&s).into_owned()
}

fn help_of(e: &dyn miette::Diagnostic) -> String {
    e.help()
        .map(|h| h.to_string())
        .unwrap_or_else(|| "see the command's `--help`".into())
}

/// One record as its output line (no newline): `{"type": …, "data": …}`.
pub fn record_line<R: records::Record>(data: &R) -> String {
    #[derive(Serialize)]
    struct Line<'a, R> {
        r#type: &'static str,
        data: &'a R,
    }
    serde_json::to_string(&Line {
        r#type: R::KIND,
        data,
    })
    .expect("records always serialize")
}

/// The help line of a command line the parser refused.
pub const PARSE_HELP: &str =
    "run `git-session help <command>` or `git-session <command> --help` for the usage";

/// The `--json` record of a command line the parser refused: its first line
/// of clap's message, and [`PARSE_HELP`].
pub fn parse_error_record(clap_text: &str) -> String {
    let message = clap_text
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ");
    record_line(&records::Error {
        code: Some("git_session::usage::parse".into()),
        message: message.into(),
        help: PARSE_HELP.into(),
        exit: crate::error::exit::USAGE,
    })
}

/// The `--json` record of an error: `{"type": "error", "data": {code,
/// message, help, exit}}`, on stdout like every record.
pub fn error_record(e: &dyn miette::Diagnostic, exit: u8) -> String {
    let mut message = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        message.push_str(&format!(": {c}"));
        cause = c.source();
    }
    record_line(&records::Error {
        code: e.code().map(|c| c.to_string()),
        message,
        help: help_of(e),
        exit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_would_act_on_a_terminal_is_escaped() {
        for (given, shown) in [
            (
                "plain text, tabs\tand\nlines",
                "plain text, tabs\tand\nlines",
            ),
            ("crlf line\r\nnext", "crlf line\r\nnext"),
            (
                "\u{1b}]52;c;cm0gLXJmIH4=\u{7}",
                "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}",
            ),
            ("\u{1b}[2J\u{1b}[31mred", "\\u{1b}[2J\\u{1b}[31mred"),
            ("safe\rforged", "safe\\rforged"),
            (
                "nul\u{0} del\u{7f} csi\u{9b}1A",
                "nul\\0 del\\u{7f} csi\\u{9b}1A",
            ),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
            ("isolate\u{2066}x\u{2069}", "isolate\\u{2066}x\\u{2069}"),
            ("ends in cr\r", "ends in cr\\r"),
            ("ünïcödé — ─ · 📌", "ünïcödé — ─ · 📌"),
        ] {
            assert_eq!(terminal_safe(given), shown, "{given:?}");
        }
        assert!(matches!(terminal_safe("nothing to do"), Cow::Borrowed(_)));
        assert_eq!(
            in_one_line("a title\ns2   fake row\r\nmore\u{2028}end"),
            "a title s2   fake row  more end"
        );
        assert!(matches!(in_one_line("one line"), Cow::Borrowed(_)));
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_017_556.44), "2026-11-30T05:45:56Z");
        assert_eq!(rfc3339(951_782_400.0), "2000-02-29T00:00:00Z");
        assert_eq!(short_time(1_796_017_556.0).to_string(), "2026-11-30 05:45");
        assert_eq!(short_time(-1.0).to_string(), "1969-12-31 23:59");
        // Digit by digit, as the formatting machinery writes it.
        for secs in [
            -62_200_000_000.0,
            -1.5,
            0.0,
            951_782_400.0,
            1_796_017_556.9,
            253_402_300_799.0,
            253_402_300_800.0,
        ] {
            let ((y, m, d), rem) = civil(secs);
            let reference = format!(
                "{y:04}-{m:02}-{d:02} {:02}:{:02}",
                rem / 3600,
                rem % 3600 / 60
            );
            assert_eq!(short_time(secs).to_string(), reference, "{secs}");
        }
    }
}
