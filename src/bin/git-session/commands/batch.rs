//! `batch`: many operations in one process (SPEC §5.17), as git's own
//! long-lived plumbing (`cat-file --batch`, `update-ref --stdin`) does.
//!
//! Reads: requests on stdin, one JSON value per line: `{"argv": [...],
//! "stdin": "..."}` (or a bare array of arguments). Runs each as the
//! command line would, under `--json`, with the outer global flags as
//! defaults; `stdin` stands in for the request's standard input (`append
//! --file -`, `--json-node`). Writes and locks: what each command does, lock
//! by lock, request by request: no lock is held between requests, and
//! nothing read is trusted across them without checking its file (a
//! session's catalog of node files and the index its last commit wrote are
//! kept, and used while their files are as this process left them:
//! `layout::kept`).
//! Prints: each request's records, then `{"type": "exit", "data": {"code":
//! N}}`, flushed; errors are records. Exit status: the last failure's, or 0.

use std::io::{BufRead, Write};

use serde_json::Value;

use crate::cli::{self, Cli, Command, GlobalArgs};
use git_session::error::{IoContext, Result, exit};
use git_session::layout::schema::MAX_FILE_BYTES;
use git_session::out::records;

/// Run many requests in one process: one JSON request per line on stdin,
/// the answer's records and a closing `exit` record per request on stdout.
///
/// A request is `{"argv": ["append", "s1", "--text", "hi"], "stdin": "…"}`
/// (or just the array): any subcommand and its arguments, exactly as on the
/// command line; `stdin` is what the command reads as its standard input
/// (`--file -`, `--json-node`, a `hook`'s event), so no argument-length
/// limit applies. Every
/// answer is JSON Lines (`--json` is implied); errors are `error` records,
/// never the end of the stream; each answer, its records and its `exit`
/// record, is written at once and flushed (one longer than 64 KiB in
/// pieces, in order). Each request takes its locks as the one-shot command
/// would, and reads the files afresh; only a session's catalog of node
/// files and the git index its last commit wrote are kept between
/// requests, and used while their files are unchanged (same file, length
/// and times), so a turn of a large session reads what it adds. A line that
/// is no request (not JSON, not UTF-8, or longer than 192 MiB, which is
/// skipped as it is read) gets an `error` record and its `exit` record, and
/// the next line is read. At end of input the process exits with the code
/// of the last failed request, or 0; input that cannot be read ends it with
/// an `error` record and exit 128. `man`, `completions`, `schema`, `batch`,
/// `help`, `--help` and `--version` print no records and are refused here.
#[derive(Debug, clap::Args)]
pub struct BatchArgs {}

/// The longest request line read: room for a node at the size limit
/// ([`MAX_FILE_BYTES`]) as `stdin`, with JSON's escapes (which may double
/// it) and its arguments. A longer line is dropped once it passes the
/// limit, and the rest of it as it is read.
const MAX_REQUEST: usize = 3 * MAX_FILE_BYTES as usize;

/// One line of input, as read.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Line(String),
    NotUtf8,
    /// Longer than the limit: its length, its bytes dropped.
    TooLong(u64),
}

/// Read one line (its `\n` or `\r\n` taken off) keeping at most `max`
/// bytes of it; `None` at the end of input.
fn read_request(input: &mut impl BufRead, max: usize) -> Result<Option<Request>> {
    use bstr::ByteSlice;
    let mut line = Vec::new();
    let mut len = 0u64;
    let mut any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).io("read requests from", "<stdin>"),
        };
        if available.is_empty() {
            break;
        }
        any = true;
        let end = available.find_byte(b'\n');
        let part = &available[..end.unwrap_or(available.len())];
        len += part.len() as u64;
        if len > max as u64 {
            // Dropped, not held, as the rest goes by.
            line = Vec::new();
        } else {
            line.extend_from_slice(part);
        }
        let used = end.map_or(available.len(), |i| i + 1);
        input.consume(used);
        if end.is_some() {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if len > max as u64 {
        return Ok(Some(Request::TooLong(len)));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(
        String::from_utf8(line).map_or(Request::NotUtf8, Request::Line),
    ))
}

/// One request line: its argv and standard input.
fn request(line: &str) -> std::result::Result<(Vec<String>, Vec<u8>), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let (argv, stdin) = match v {
        Value::Array(a) => (Value::Array(a), None),
        Value::Object(mut o) => (
            o.remove("argv").ok_or("a request object needs `argv`")?,
            o.remove("stdin"),
        ),
        _ => return Err("a request is an object with `argv`, or an array".into()),
    };
    let Value::Array(words) = argv else {
        return Err("`argv` must be an array of strings".into());
    };
    let argv = words
        .into_iter()
        .map(|w| match w {
            Value::String(s) => Ok(s),
            _ => Err("`argv` must be an array of strings".to_string()),
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let stdin = match stdin {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s.into_bytes(),
        Some(_) => return Err("`stdin` must be a string".into()),
    };
    Ok((argv, stdin))
}

/// The outer global flags, as arguments that come before a request's own
/// (its own win: `args_override_self`). The state dir goes on as it was
/// given: a lossy spelling of a path that is not UTF-8 is another directory.
fn outer_flags(g: &GlobalArgs) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = vec!["git-session".into(), "--json".into()];
    if let Some(d) = &g.state_dir {
        v.push("--state-dir".into());
        v.push(d.clone().into_os_string());
    }
    v.push("--lock-timeout".into());
    v.push(g.lock_timeout.to_string().into());
    if g.no_wait {
        v.push("--no-wait".into());
    }
    if g.quiet {
        v.push("-q".into());
    }
    v
}

/// Print a record on stdout.
fn emit<R: records::Record>(out: &mut impl Write, data: &R) {
    let _ = writeln!(out, "{}", git_session::out::record_line(data));
}

/// A request refused before it ran: its error record; returns its code.
fn refuse(out: &mut impl Write, message: String, help: &str) -> u8 {
    emit(
        out,
        &records::Error {
            code: Some("git_session::batch::request".into()),
            message,
            help: help.into(),
            exit: exit::USAGE,
        },
    );
    exit::USAGE
}

/// Run one request; returns its exit code (its records are printed).
fn answer(g: &GlobalArgs, parser: &mut clap::Command, line: String) -> u8 {
    let mut out = git_session::out::Stdout;
    let parsed = request(&line);
    // A request may be as long as a node: not held twice while it runs.
    drop(line);
    let (argv, stdin) = match parsed {
        Ok(r) => r,
        Err(why) => {
            return refuse(
                &mut out,
                format!("bad request: {why}"),
                r#"send one JSON object a line: {"argv": ["append", "s1", "--text", "hi"]}"#,
            );
        }
    };
    let shown = argv.join(" ");
    let not_here = |out: &mut git_session::out::Stdout| {
        refuse(
            out,
            format!("`{shown}` prints no records: not in batch"),
            "run it as a command of its own",
        )
    };
    let mut full = outer_flags(g);
    full.extend(argv.into_iter().map(Into::into));
    let parsed = Cli::parse_with(parser, full);
    let cli = match parsed {
        // A page, a script, a schema, or another batch: not records.
        Ok(c)
            if matches!(
                c.command,
                Command::Batch(_) | Command::Man(_) | Command::Completions(_) | Command::Schema(_)
            ) =>
        {
            return not_here(&mut out);
        }
        Ok(c) => c,
        Err(_) if shown.is_empty() => {
            return refuse(
                &mut out,
                "bad request: `argv` is empty: it names no command".into(),
                r#"send one JSON object a line: {"argv": ["append", "s1", "--text", "hi"]}"#,
            );
        }
        // Help and version (`--help`, `-h`, `help …`, `--version`).
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp
                    | clap::error::ErrorKind::DisplayVersion
                    | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            return not_here(&mut out);
        }
        Err(e) => {
            let _ = writeln!(
                out,
                "{}",
                git_session::out::parse_error_record(&e.render().to_string())
            );
            return exit::USAGE;
        }
    };
    let result = git_session::out::with_input(stdin, || cli::run(cli));
    match result {
        Ok(code) => code,
        Err(err) => {
            let code = err.exit_code();
            let _ = writeln!(out, "{}", git_session::out::error_record(&err, code));
            eprint!("{}", git_session::out::render_error(&err));
            code
        }
    }
}

/// Whether this process is a `batch` answering requests: `index.json` is
/// then brought up to date by the batch loop, not by each request.
static ANSWERING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn answering() -> bool {
    ANSWERING.load(std::sync::atomic::Ordering::Relaxed)
}

pub fn run(g: &GlobalArgs, _args: BatchArgs) -> Result<u8> {
    ANSWERING.store(true, std::sync::atomic::Ordering::Relaxed);
    // `index.json` is current whenever the batch waits for a request
    // (SPEC §3): folded before the answer of a request after which no
    // other is waiting, so a run fed many requests at once folds once per
    // read, not once per request.
    let locks = crate::context::lock_options(g);
    let mut last_failure = exit::OK;
    // One parser for every request: building it (the root, every
    // subcommand's name, the global options handed down) costs more than
    // most requests' own work; each subcommand's arguments are built the
    // first time it is asked for.
    let mut parser = <Cli as clap::CommandFactory>::command();
    git_session::layout::kept::keep_between_requests();
    // Each answer leaves in one write with its `exit` record (a long one
    // in pieces): a caller waiting on it wakes once.
    git_session::out::hold_stdout(true);
    let mut out = git_session::out::Stdout;
    let stdin = std::io::stdin();
    // Its own buffer, to see whether another request is already here.
    let mut input = std::io::BufReader::with_capacity(64 * 1024, stdin.lock());
    loop {
        // About to wait for input (nothing buffered): index.json first.
        if input.buffer().is_empty() {
            cli::settle_index(locks);
        }
        let refused = match read_request(&mut input, MAX_REQUEST) {
            Ok(None) => break,
            Ok(Some(Request::Line(line))) => {
                if line.trim().is_empty() {
                    continue;
                }
                let code = answer(g, &mut parser, line);
                if code != exit::OK {
                    last_failure = code;
                }
                if input.buffer().is_empty() {
                    cli::settle_index(locks);
                }
                emit(&mut out, &records::Exit { code });
                let _ = out.flush();
                continue;
            }
            Ok(Some(Request::NotUtf8)) => refuse(
                &mut out,
                "bad request: not UTF-8".into(),
                "send UTF-8 JSON lines",
            ),
            Ok(Some(Request::TooLong(len))) => refuse(
                &mut out,
                format!(
                    "bad request: the line is {len} bytes, over the limit of {MAX_REQUEST}; skipped"
                ),
                "send a node's text as `stdin` (at most 64 MiB), \
                 or a larger payload as an attachment (`append --attach PATH`)",
            ),
            Err(err) => {
                // Input that cannot be read (a directory, a device that
                // failed) will not be readable on the next try either.
                let code = exit::FATAL;
                cli::settle_index(locks);
                let _ = writeln!(out, "{}", git_session::out::error_record(&err, code));
                emit(&mut out, &records::Exit { code });
                let _ = out.flush();
                eprint!("{}", git_session::out::render_error(&err));
                git_session::out::hold_stdout(false);
                return Ok(code);
            }
        };
        // A line that is no request: its error record, then on.
        last_failure = refused;
        emit(&mut out, &records::Exit { code: refused });
        let _ = out.flush();
    }
    cli::settle_index(locks);
    git_session::out::hold_stdout(false);
    Ok(last_failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input` as read through a buffer of `cap` bytes, with
    /// lines over `max` bytes skipped.
    fn lines(input: &[u8], cap: usize, max: usize) -> Vec<Request> {
        let mut r = std::io::BufReader::with_capacity(cap, input);
        std::iter::from_fn(|| read_request(&mut r, max).unwrap()).collect()
    }

    fn line(s: &str) -> Request {
        Request::Line(s.into())
    }

    #[test]
    fn request_lines_are_read_whole_across_reads_and_bounded() {
        let input = b"first\r\n\nsecond line\n\xff\xfe\n0123456789abc\nlast";
        for cap in [1, 2, 3, 7, 64] {
            assert_eq!(
                lines(input, cap, 12),
                [
                    line("first"),
                    line(""),
                    line("second line"),
                    Request::NotUtf8,
                    Request::TooLong(13),
                    line("last"),
                ],
                "buffer of {cap}"
            );
        }
        // At the limit a line is kept; the end of input is no line.
        assert_eq!(lines(b"0123456789ab\n", 5, 12), [line("0123456789ab")]);
        assert_eq!(lines(b"", 5, 12), []);
    }
}
