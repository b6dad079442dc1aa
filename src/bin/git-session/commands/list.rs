//! `list`: sessions from the registry (SPEC §5.8), newest activity first.
//!
//! Reads: index.json and its journal, projects.json (no per-session reads,
//! except to self-heal a session the index lacks). Writes: index.json only
//! when it was missing, corrupt or incomplete. Locks: the registry, briefly,
//! for those writes. Prints: one row per session.

use git_session::layout::registry::{Field, ListRow};
use git_session::out::records::{Record as _, SessionRow};

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::lifecycle;

/// List sessions, most recently active first (archived ones hidden).
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only archived sessions
    #[arg(long, conflicts_with = "include_archived")]
    pub archived: bool,
    /// Archived sessions too
    #[arg(long)]
    pub include_archived: bool,
    /// Only this agent's sessions
    #[arg(long, value_name = "A")]
    pub agent: Option<String>,
    /// Only sessions from this source (cli, web, a channel…)
    #[arg(long, value_name = "S")]
    pub source: Option<String>,
    /// Only sessions of this project (id or name)
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Only sessions with this status
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    /// At most N rows
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Skip the first N rows
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,
}

/// One `--json` line: `{"type": "session", "data": …}`.
#[derive(serde::Serialize)]
struct Record<'a> {
    r#type: &'static str,
    data: SessionRow<'a>,
}

/// `s` left-aligned in `width` characters (as `{:<width}` pads).
fn push_padded(text: &mut Vec<u8>, s: &str, width: usize) {
    text.extend_from_slice(s.as_bytes());
    let chars = if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    };
    text.resize(text.len() + width.saturating_sub(chars), b' ');
}

pub fn run(ctx: &Ctx, args: ListArgs) -> Result<u8> {
    let status = args.status.as_deref().map(lifecycle::status).transpose()?;
    let mut index_text = git_session::lifecycle::RowsText::default();
    let index = lifecycle::load_rows(&ctx.state, ctx.locks, &mut index_text)?;
    let (project_of, _) = lifecycle::projects(&ctx.state);
    let st = ListRow::str;
    let mut rows: Vec<(&String, &ListRow)> = index
        .iter()
        .map(|(id, r)| (id, &**r))
        .filter(|(_, r)| {
            let archived = ListRow::flag(&r.archived);
            if args.archived {
                archived
            } else {
                args.include_archived || !archived
            }
        })
        .filter(|(_, r)| args.agent.as_deref().is_none_or(|a| st(&r.agent_id) == a))
        .filter(|(_, r)| args.source.as_deref().is_none_or(|a| st(&r.source) == a))
        .filter(|(_, r)| status.is_none_or(|a| st(&r.status) == a))
        .filter(|(id, _)| {
            args.project
                .as_deref()
                .is_none_or(|p| git_session::lifecycle::in_project(&project_of, id, p))
        })
        .collect();
    let updated = |r: &ListRow| r.updated_at.as_f64().unwrap_or(0.0);
    rows.sort_by(|(ia, a), (ib, b)| updated(b).total_cmp(&updated(a)).then_with(|| ia.cmp(ib)));
    git_session::out::trace("list: filtered and sorted");
    // Written in blocks of 64 KiB: thousands of rows in a few system calls,
    // and one buffer reused (a megabyte of fresh memory costs 250 page faults).
    const BLOCK: usize = 64 * 1024;
    let mut text: Vec<u8> = Vec::with_capacity(BLOCK + 4096);
    let default = ("default".to_string(), "default".to_string());
    for &(id, row) in rows
        .iter()
        .skip(args.offset)
        .take(args.limit.unwrap_or(usize::MAX))
    {
        if text.len() >= BLOCK {
            ctx.out.block_bytes(&text);
            text.clear();
        }
        let (pid, pname) = project_of.get(id).unwrap_or(&default);
        if ctx.out.json {
            // Serialized straight from the row (no JSON tree per row).
            let time = |f: &Field| f.as_f64().map(git_session::out::rfc3339);
            let rec = Record {
                r#type: SessionRow::KIND,
                data: SessionRow {
                    row,
                    created_at_rfc3339: time(&row.created_at),
                    updated_at_rfc3339: time(&row.updated_at),
                    project_id: pid,
                    project: pname,
                },
            };
            serde_json::to_writer(&mut text, &rec).expect("a row always serializes");
            text.push(b'\n');
            continue;
        }
        let title = match st(&row.title) {
            "" => "(untitled)",
            t => t,
        };
        // Written piece by piece: the formatting machinery (padding, a
        // dozen arguments) cost about a microsecond a row.
        // Every field on the row's one line (`in_one_line`): the registry
        // is a stranger's file too.
        use git_session::out::in_one_line as one;
        push_padded(&mut text, &one(id), 16);
        text.push(b' ');
        git_session::out::push_short_time(&mut text, updated(row));
        text.extend_from_slice(b"  ");
        push_padded(&mut text, &one(st(&row.status)), 11);
        text.push(b' ');
        if ListRow::flag(&row.pinned) {
            text.extend_from_slice("📌 ".as_bytes());
        }
        if ListRow::flag(&row.unread) {
            text.extend_from_slice("● ".as_bytes());
        }
        // A channel session shows its source as a prefix; its title is untouched.
        if !st(&row.channel).is_empty() && !st(&row.source).is_empty() {
            text.push(b'[');
            text.extend_from_slice(one(st(&row.source)).as_bytes());
            text.extend_from_slice(b"] ");
        }
        text.extend_from_slice(one(title).as_bytes());
        text.extend_from_slice("  — ".as_bytes());
        text.extend_from_slice(one(st(&row.preview)).as_bytes());
        text.push(b'\n');
    }
    git_session::out::trace("list: formatted");
    ctx.out.block_bytes(&text);
    drop(rows);
    if git_session::layout::kept::on() {
        // A `batch` process runs more requests: what one holds is freed.
        drop(index);
    } else {
        // A one-shot process ends here: freeing 10,000 rows one allocation
        // at a time would cost milliseconds and return nothing to anyone.
        std::mem::forget(index);
    }
    Ok(exit::OK)
}
