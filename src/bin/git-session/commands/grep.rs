//! `grep`: search node text across sessions (SPEC §5.18).
//!
//! Reads: the list registry, then each session's nodes (newest sessions
//! first), on every core. Writes: nothing. Locks: each session, shared,
//! while it is read. Prints: one `hit` record per matching node and field.

use super::append::Role;
use crate::context::Ctx;
use git_session::error::{Result, Usage, exit};
use git_session::layout::lock;
use git_session::layout::registry::ListRow;
use git_session::out::records::Hit;
use git_session::read::{self, Search};

/// Search the text of every node (its `output`, and a tool's `input`)
/// across sessions, newest sessions first; print each match with its
/// session, node, seq, role, turn and the line that matches.
///
/// The pattern is a regular expression (Rust `regex` syntax, as ripgrep's)
/// unless `-F`. Exit status: 0 when something matched, 1 when nothing did,
/// 2 for a pattern that is not a valid expression.
#[derive(Debug, clap::Args)]
pub struct GrepArgs {
    /// The pattern
    pub pattern: String,
    /// Only this session (repeat for several)
    #[arg(long, value_name = "ID")]
    pub session: Vec<String>,
    /// Only sessions of this agent
    #[arg(long, value_name = "A")]
    pub agent: Option<String>,
    /// Only sessions bound to this project (id or name)
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Only nodes of this role (repeat for several)
    #[arg(long, value_enum, value_name = "ROLE")]
    pub role: Vec<Role>,
    /// Case-insensitive
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// The pattern is a fixed string, not a regular expression
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,
    /// Stop after N matches
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Search archived sessions too
    #[arg(long)]
    pub include_archived: bool,
}

pub fn run(ctx: &Ctx, args: GrepArgs) -> Result<u8> {
    let pattern = if args.fixed_strings {
        regex::escape(&args.pattern)
    } else {
        args.pattern.clone()
    };
    let regex = regex::RegexBuilder::new(&pattern)
        .case_insensitive(args.ignore_case)
        .build()
        .map_err(|e| Usage::Pattern {
            pattern: args.pattern.clone(),
            why: e.to_string(),
        })?;
    let search = Search {
        regex,
        roles: args.role.iter().map(|r| r.stored().to_string()).collect(),
    };
    let sessions = candidates(ctx, &args)?;
    let limit = args.limit.unwrap_or(usize::MAX);
    let mut found = 0usize;
    // Sessions are searched a few at a time on every core and printed in
    // order, so `--limit` stops early and the output stays newest first.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    for chunk in sessions.chunks(workers * 4) {
        let results: Vec<Result<Vec<Hit>>> = std::thread::scope(|s| {
            let per = chunk.len().div_ceil(workers).max(1);
            let handles: Vec<_> = chunk
                .chunks(per)
                .map(|part| {
                    let search = &search;
                    s.spawn(move || {
                        part.iter()
                            .map(|id| search_one(ctx, id, search))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a search thread panicked"))
                .collect()
        });
        for hits in results {
            for h in hits? {
                if found == limit {
                    return Ok(exit::OK);
                }
                found += 1;
                ctx.out.record(&h);
                ctx.out.line(format!(
                    "{}:{}:{} ({}, turn {}): {}",
                    h.session,
                    h.seq,
                    h.node,
                    h.role,
                    h.turn.map_or("-".to_string(), |t| t.to_string()),
                    h.snippet
                ));
            }
        }
    }
    Ok(if found > 0 { exit::OK } else { exit::NO })
}

/// One session's hits; a session that went away meanwhile has none.
fn search_one(ctx: &Ctx, id: &str, search: &Search) -> Result<Vec<Hit>> {
    let Ok(sd) = ctx.state.find_session(id) else {
        return Ok(Vec::new());
    };
    let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
    let out = ctx.out;
    read::search_session(&sd, id, search, &mut |w| out.warn(w))
}

/// The sessions to search, newest first.
fn candidates(ctx: &Ctx, args: &GrepArgs) -> Result<Vec<String>> {
    for s in &args.session {
        ctx.state.find_session(s)?;
    }
    let mut index_text = git_session::lifecycle::RowsText::default();
    let rows = git_session::lifecycle::load_rows(&ctx.state, ctx.locks, &mut index_text)?;
    let (project_of, _) = git_session::lifecycle::projects(&ctx.state);
    let st = ListRow::str;
    let mut ids: Vec<(&String, f64)> = rows
        .iter()
        .filter(|(id, _)| args.session.is_empty() || args.session.contains(id))
        .filter(|(_, r)| {
            args.include_archived || !args.session.is_empty() || !ListRow::flag(&r.archived)
        })
        .filter(|(_, r)| args.agent.as_deref().is_none_or(|a| st(&r.agent_id) == a))
        .filter(|(id, _)| {
            args.project
                .as_deref()
                .is_none_or(|p| git_session::lifecycle::in_project(&project_of, id, p))
        })
        .map(|(id, r)| (id, r.updated_at.as_f64().unwrap_or(0.0)))
        .collect();
    ids.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    Ok(ids.into_iter().map(|(id, _)| id.clone()).collect())
}
