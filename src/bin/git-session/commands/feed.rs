//! `feed`: every node not yet handed out, across the state dir, for an
//! ingest job run from cron (SPEC §5.18).
//!
//! Reads: the index journal written since the cursor (index.json whole
//! only when it was rewritten since); then only the sessions whose row
//! changed, and in each only the nodes
//! past the cursor's seq. Writes: the cursor file, atomically, after the
//! output is complete (a killed run repeats, never skips). Locks: each
//! session, shared, while it is read. Prints: `session_node` records.

use std::io::Write;
use std::path::PathBuf;

use crate::context::Ctx;
use git_session::error::{IoContext, Result, exit};
use git_session::layout::lock;
use git_session::lifecycle::ProjectOf;
use git_session::read::{self, Cursor, CursorEntry};
use serde_json::Value;

/// Print every node past the cursor, across every session (archived ones
/// included), with its provenance; then move the cursor.
///
/// Only sessions whose list-registry row changed since the cursor are
/// opened: when index.json was not rewritten since, the index journal
/// written after the cursor names them; otherwise each row's `updated_at`
/// is compared with the cursor's. The cursor file is written after the last record is out, so a
/// run that is killed hands the same nodes out again next time: an ingest
/// job must accept a repeat (the node id and session id are the key),
/// and never misses a node. A session with a node that cannot be read is
/// skipped with a warning, nothing of it printed, and tried again by every
/// later run until it is read.
#[derive(Debug, clap::Args)]
pub struct FeedArgs {
    /// Cursor file: read at the start, written (atomically) at the end
    /// [default: no cursor: every node, nothing written]
    #[arg(long, value_name = "FILE")]
    pub cursor: Option<PathBuf>,
    /// The ingestion time every record of this run carries (unix seconds)
    /// [default: now]
    #[arg(long, value_name = "T")]
    pub ingestion_time: Option<f64>,
}

pub fn run(ctx: &Ctx, args: FeedArgs) -> Result<u8> {
    let at = super::nodes::ingestion_time(args.ingestion_time)?;
    let mut cursor = match &args.cursor {
        Some(p) => Cursor::read(p)?,
        None => Cursor {
            version: 1,
            ..Default::default()
        },
    };
    let read::Changed {
        mark,
        sessions: changed,
    } = read::changed_since(&ctx.state, ctx.locks, &mut cursor)?;
    let (project_of, _) = git_session::lifecycle::projects(&ctx.state);
    let candidates = changed.len();
    // The human lines of several sessions line up: the session column as
    // wide as the longest id among those opened (up to 40), the node id
    // column at its widest (its lines are printed as each session is read).
    let session_width = changed
        .iter()
        .map(|(id, _)| id.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let mut feed = Feed {
        ctx,
        at,
        project_of,
        session_width,
        opened: 0,
        handed: 0,
        out: std::io::BufWriter::new(git_session::out::Stdout),
    };
    for (id, updated_at) in changed {
        feed.session(&mut cursor, &id, updated_at)?;
    }
    cursor.registry = Some(mark);
    let Feed {
        opened,
        handed,
        mut out,
        ..
    } = feed;
    out.flush().io("write", "standard output")?;
    drop(out);
    git_session::layout::atomic::crash_point("feed-output-written");
    if let Some(p) = &args.cursor {
        cursor.write(p)?;
    }
    let skipped = match cursor.retry.len() {
        0 => String::new(),
        n => format!(", {n} skipped"),
    };
    ctx.out.note(format!(
        "{handed} node(s) from {opened} of {candidates} changed session(s){skipped}"
    ));
    Ok(exit::OK)
}

/// A run handing out the nodes of the sessions that changed.
struct Feed<'a> {
    ctx: &'a Ctx,
    /// The ingestion time every record carries.
    at: f64,
    project_of: ProjectOf,
    /// The width of the session column of the human lines.
    session_width: usize,
    /// Sessions opened, and nodes handed out.
    opened: usize,
    handed: usize,
    /// Written here, not through the printer: an output that fails (the
    /// reader went away) must not move the cursor.
    out: std::io::BufWriter<git_session::out::Stdout>,
}

impl Feed<'_> {
    /// Print the nodes of session `id` past the cursor, and move its entry
    /// in the cursor (or list it to be tried again).
    fn session(&mut self, cursor: &mut Cursor, id: &str, updated_at: Value) -> Result<()> {
        let ctx = self.ctx;
        let session_width = self.session_width;
        let after = cursor.sessions.get(id).map_or(-1, |c| c.seq);
        let skip = |e: &dyn std::fmt::Display| {
            ctx.out.warn(format!(
                "skipping session `{id}` (the next run tries it again): {e}; `git-session verify {id}` says what to repair"
            ));
        };
        let sd = match ctx.state.find_session_if_any(id) {
            Ok(Some(sd)) => sd,
            // A row whose directory went away: nothing to read (its cursor
            // entry goes when the row goes).
            Ok(None) => return Ok(()),
            // A session the hostile-tree checks refuse.
            Err(e) => {
                skip(&e);
                cursor.retry.push(id.to_string());
                return Ok(());
            }
        };
        let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
        self.opened += 1;
        let project = self
            .project_of
            .get(id)
            .map_or_else(|| "default".to_string(), |(p, _)| p.clone());
        // A node that cannot be read (a link in its place, bytes that do
        // not parse) holds back its session alone: every node is checked
        // before any is printed; nothing of it is printed, its cursor
        // stays, and the next run tries it again.
        let nodes = match read::session_nodes(&sd, after, None) {
            Ok(n) => n,
            Err(e) => {
                skip(&e);
                cursor.retry.push(id.to_string());
                return Ok(());
            }
        };
        // The records are read again and printed one at a time: memory is
        // that of one node, however many the session has. An error here
        // (the output gone; a node changed since it was checked, which no
        // writer holding the lock does) ends the run with the cursor
        // unmoved.
        let mut last = after;
        let (handed, out) = (&mut self.handed, &mut self.out);
        nodes.each_record(&sd, id, &project, self.at, |r| {
            last = last.max(r.seq);
            *handed += 1;
            let text = if ctx.out.json {
                git_session::out::record_line(&r)
            } else {
                let line = format!(
                    "{id:<session_width$} {}",
                    super::nodes::line(&r, super::nodes::ID_WIDTH)
                );
                git_session::out::terminal_safe(&line).into_owned()
            };
            writeln!(out, "{text}").io("write", "standard output")?;
            git_session::layout::atomic::crash_point("feed-record-written");
            Ok(())
        })?;
        cursor.sessions.insert(
            id.to_string(),
            CursorEntry {
                seq: last,
                updated_at,
            },
        );
        Ok(())
    }
}
