//! `log`: the turn timeline (SPEC §5.4).
//!
//! Reads: the session's git history. Writes: nothing. Locks: the session,
//! shared. Prints: one row per commit, newest first.

use std::collections::{BTreeMap, HashSet};

use crate::cli::Ctx;
use crate::error::{Result, exit};
use crate::git::{CommitInfo, Oid, SessionRepo};
use crate::layout::lock;
use crate::session::Trailers;

/// Show the turn commits of a session, newest first.
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Session id
    pub session: String,
    /// Show at most N commits
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub max_count: Option<usize>,
    /// Every branch, not only HEAD's
    #[arg(long)]
    pub all: bool,
}

#[derive(serde::Serialize)]
struct Row {
    commit: String,
    short: String,
    turn: Option<u64>,
    subject: String,
    time: i64,
    date: String,
    parents: Vec<String>,
    branches: Vec<String>,
    head: bool,
    nodes: Option<(u64, u64)>,
    failed: bool,
}

pub fn run(ctx: &Ctx, args: LogArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
    let repo = SessionRepo::open(&sd.dir)?;
    let head = repo.head()?;
    let branches = repo.branches()?;
    let mut names: BTreeMap<Oid, Vec<String>> = BTreeMap::new();
    for (b, tip) in &branches {
        names.entry(*tip).or_default().push(b.clone());
    }
    let mut tips: Vec<Oid> = head.commit.into_iter().collect();
    if args.all {
        tips.extend(branches.iter().map(|(_, t)| *t));
    }
    // Newest first: a walk by commit time over every parent (ties: id).
    let mut seen = HashSet::new();
    let mut queue: Vec<CommitInfo> = Vec::new();
    for t in tips {
        if seen.insert(t) {
            queue.push(repo.commit_info(t)?);
        }
    }
    let mut printed = 0;
    let limit = args.max_count.unwrap_or(usize::MAX);
    while printed < limit && !queue.is_empty() {
        queue.sort_by(|a, b| a.time.cmp(&b.time).then(a.id.cmp(&b.id)));
        let c = queue.pop().expect("non-empty");
        for p in &c.parents {
            if seen.insert(*p) {
                queue.push(repo.commit_info(*p)?);
            }
        }
        let t = Trailers::parse(&c.message);
        let subject = c.message.lines().next().unwrap_or("").to_string();
        let row = Row {
            commit: c.id.to_string(),
            short: c.id.to_hex_with_len(7).to_string(),
            turn: t.turn,
            subject,
            time: c.time,
            date: crate::out::rfc3339(c.time as f64),
            parents: c.parents.iter().map(|p| p.to_string()).collect(),
            branches: names.get(&c.id).cloned().unwrap_or_default(),
            head: head.commit == Some(c.id),
            nodes: t.nodes,
            failed: t.failed,
        };
        ctx.out.record("commit", &row);
        let mut deco = Vec::new();
        for b in &row.branches {
            if row.head && head.branch.as_deref() == Some(b) {
                deco.push(format!("HEAD -> {b}"));
            } else {
                deco.push(b.clone());
            }
        }
        if row.head && head.branch.is_none() {
            deco.insert(0, "HEAD".into());
        }
        let deco = if deco.is_empty() {
            String::new()
        } else {
            format!(" ({})", deco.join(", "))
        };
        ctx.out.line(format!(
            "{} {} {}{}",
            row.short,
            crate::out::short_time(c.time as f64),
            row.subject,
            deco
        ));
        printed += 1;
    }
    Ok(exit::OK)
}
