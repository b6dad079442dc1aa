//! `export`: a session as a page a person reads, or every session as a
//! site (issue 53).
//!
//! Reads: the session (with `--all`, every session of the index), the
//! secrets allow-list, the registries, and the projects' repositories
//! (each turn's agent commit).
//! Writes: only `-o`'s file (and its attachments beside it) or directory,
//! each file atomically; with `--all`, only what changed since the last
//! export there, and its manifest (written first, as under way, and a
//! journal of the files written beside it until the end: a run killed
//! midway is finished by the next) (and, as `list` does, index.json when
//! it was missing or corrupt). Locks: each session, shared, while it is read.
//! Prints: the page on stdout without `-o`; one `exported` record.

use std::path::PathBuf;

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::export::{self, Format, Options};
use git_session::out::records::Exported;

/// Export a session, or every session, as pages a person reads.
///
/// One session becomes one page: Markdown (to stdout, or to a file with
/// -o), or self-contained HTML with --format html (inline style, no
/// script, nothing fetched). The page holds the conversation on one branch
/// (the session's current one unless --branch names another): a heading
/// per turn with links to the turns before and after, the tool calls
/// folded with their input and output (each cut at 64 KiB, with a note of
/// what is left out), attachments, relocation and
/// compaction records, the turn an imported transcript has not closed yet
/// (marked in progress), and for each turn of a bound session the agent's
/// commit in the project (its subject, author, files and diff) or why none
/// was made.
///
/// With --all and -o DIR, every session becomes a site in DIR: an index
/// (the sessions by project, most recent first, archived ones apart), a
/// page per project (its sessions and agent commits) and per session and
/// branch (sessions/<id>/index.html for the current branch, with a branch
/// switcher to sessions/<id>/branch-<name>.html). Run again, it rewrites
/// only the pages of sessions that changed (a manifest in DIR keeps
/// track) and removes what it no longer makes; it writes into an empty or
/// new directory, or one an earlier export --all wrote. A session that
/// cannot be read is named in a warning and in the record's failed list,
/// the others are exported all the same, and the command exits 1.
///
/// Every secret the scanner finds is masked, as [REDACTED:<rule>:<id>],
/// unless --no-redact is given; a secret the allow-list lets through
/// (git-session secrets allow, as push reads it) is shown.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Session id
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub session: Option<String>,
    /// Every session, as a site in the directory -o names
    #[arg(long)]
    pub all: bool,
    /// md (Markdown) or html
    #[arg(long, value_enum, default_value_t = FormatArg::Md, value_name = "FORMAT")]
    pub format: FormatArg,
    /// Show this branch (a git branch of the session, or a tip node id)
    /// instead of the current one
    #[arg(long, value_name = "B", conflicts_with = "all")]
    pub branch: Option<String>,
    /// Write to PATH: a file for one session (its attachments are copied
    /// into <name>_files/ beside it), a directory for --all
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Keep the secrets the scanner finds instead of masking them
    #[arg(long)]
    pub no_redact: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Markdown, as code hosts render it
    Md,
    /// HTML, each page one self-contained file
    Html,
}

pub fn run(ctx: &Ctx, args: ExportArgs) -> Result<u8> {
    let opts = Options {
        format: match args.format {
            FormatArg::Md => Format::Markdown,
            FormatArg::Html => Format::Html,
        },
        redact: !args.no_redact,
    };
    let record = match &args.session {
        None => {
            let dir = args.output.clone().ok_or_else(export::needs_dir)?;
            let sum = export::site::export_all(&ctx.state, &dir, &opts, ctx.locks, &ctx.out)?;
            let failed = match sum.failed.len() {
                0 => String::new(),
                n => format!(", {n} failed ({})", sum.failed.join(", ")),
            };
            ctx.out.note(format!(
                "exported {} sessions to `{}`: {} rendered, {} unchanged{failed}; {} files written, {} removed",
                sum.sessions,
                dir.display(),
                sum.rendered.len(),
                sum.unchanged,
                sum.written.len(),
                sum.removed.len()
            ));
            Exported {
                format: opts.format.name().into(),
                session: None,
                branch: None,
                output: Some(dir),
                written: sum.written,
                removed: sum.removed,
                sessions: sum.sessions,
                rendered: sum.rendered,
                unchanged: sum.unchanged,
                failed: sum.failed,
                redacted: opts.redact,
                masked: sum.masked,
                content: None,
            }
        }
        Some(id) => {
            if let Some(out) = &args.output {
                export::site::refuse_state_dir(
                    &ctx.state,
                    out.parent().unwrap_or(std::path::Path::new(".")),
                )?;
            }
            let out = ctx.out;
            let one = export::one(
                &ctx.state,
                id,
                args.branch.as_deref(),
                &opts,
                ctx.locks,
                args.output.as_deref(),
                &mut |w| out.warn(w),
            )?;
            let to_stdout = args.output.is_none();
            if to_stdout && !ctx.out.json && !ctx.out.silent {
                print_page(&one.text)?;
            } else if !to_stdout {
                ctx.out.note(format!(
                    "exported `{id}` (branch {}) to `{}`",
                    one.branch,
                    one.written[0].display()
                ));
            }
            Exported {
                format: opts.format.name().into(),
                session: Some(id.clone()),
                branch: Some(one.branch),
                output: args.output.clone(),
                written: one
                    .written
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                removed: Vec::new(),
                sessions: 1,
                rendered: vec![id.clone()],
                unchanged: 0,
                failed: Vec::new(),
                redacted: opts.redact,
                masked: one.masked,
                content: to_stdout.then_some(one.text),
            }
        }
    };
    let code = match record.failed.is_empty() {
        true => exit::OK,
        false => exit::NO,
    };
    ctx.out.record(&record);
    Ok(code)
}

/// The page on stdout: as it is into a pipe or a file, made
/// [`git_session::out::terminal_safe`] on a terminal.
fn print_page(text: &str) -> Result<()> {
    use std::io::IsTerminal;
    let shown = match std::io::stdout().is_terminal() {
        true => git_session::out::terminal_safe(text),
        false => std::borrow::Cow::Borrowed(text),
    };
    use git_session::error::IoContext;
    match git_session::out::stdout_write(shown.as_bytes())
        .and_then(|_| git_session::out::stdout_flush())
    {
        // A reader that stopped early (`| head`) wanted no more.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.io("write", "stdout"),
    }
}
