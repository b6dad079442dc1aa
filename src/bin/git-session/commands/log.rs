//! `log`: the turn timeline (SPEC §5.4).
//!
//! Reads: the session's git history. Writes: nothing. Locks: the session,
//! shared. Prints: one row per commit, newest first.

use std::collections::{BTreeMap, HashMap};

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::git::{CommitInfo, Oid, SessionRepo};
use git_session::layout::lock;
use git_session::out::style::{self, Styled};
use git_session::session::Trailers;

/// Show the turn commits of a session, newest first.
///
/// A commit is marked with the branches at it, as `git log` marks them:
/// `HEAD -> main`, and a remote's branch as the last `fetch` or `push` saw
/// it (`origin/main`).
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Session id
    pub session: String,
    /// Show at most N commits
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub max_count: Option<usize>,
    /// Every branch, not only HEAD's, and the remotes' branches `fetch`
    /// keeps (`origin/main`)
    #[arg(long)]
    pub all: bool,
}

use git_session::out::records::LogCommit as Row;

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
    // A remote's tips as `fetch` keeps them (`origin/main`), as git
    // decorates them; `--all` walks them too (a divergence's other side).
    let tracked = repo.refs_under("refs/remotes/")?;
    let mut remote_names: BTreeMap<Oid, Vec<String>> = BTreeMap::new();
    for (r, tip) in &tracked {
        remote_names.entry(*tip).or_default().push(r.clone());
    }
    let limit = args.max_count.unwrap_or(usize::MAX);
    let mut tips: Vec<Oid> = head.commit.into_iter().collect();
    if args.all {
        tips.extend(branches.iter().map(|(_, t)| *t));
        tips.extend(tracked.iter().map(|(_, t)| *t));
    }
    // HEAD's line alone, with no merge in what is shown: read only as far as
    // shown.
    let line = match head.commit {
        Some(tip) if !args.all => first_parent_line(&repo, tip, limit)?,
        _ => None,
    };
    let commits = match line {
        Some(line) => line,
        None => newest_first(&repo, &tips, limit)?,
    };
    let mut graph = Graph::default();
    for c in commits {
        let t = Trailers::parse(&c.message);
        let subject = c.message.lines().next().unwrap_or("").to_string();
        let row = Row {
            commit: c.id.to_string(),
            short: c.id.to_hex_with_len(7).to_string(),
            turn: t.turn,
            subject,
            time: c.time as f64,
            time_rfc3339: git_session::out::rfc3339(c.time as f64),
            parents: c.parents.iter().map(|p| p.to_string()).collect(),
            branches: names.get(&c.id).cloned().unwrap_or_default(),
            remotes: remote_names.get(&c.id).cloned().unwrap_or_default(),
            head: head.commit == Some(c.id),
            first_seq: t.nodes.map(|n| n.0),
            last_seq: t.nodes.map(|n| n.1),
            failed: t.failed,
        };
        ctx.out.record(&row);
        let (lane, joins) = if args.all {
            graph.place(c.id, c.parents.first().copied())
        } else {
            (String::new(), None)
        };
        let line = ctx
            .out
            .styled()
            .plain(&lane)
            .paint(style::COMMIT, &row.short)
            .plain(&format!(
                " {} {}",
                git_session::out::short_time(c.time as f64),
                row.subject
            ));
        ctx.out
            .styled_line(&decorate(line, &row, head.branch.as_deref()));
        if let Some(j) = joins {
            ctx.out.line(j);
        }
    }
    Ok(exit::OK)
}

/// `line` with the row's branches after it, as git decorates a commit:
/// ` (HEAD -> main, retry-a2)`; ` (HEAD, …)` for a detached HEAD.
fn decorate(mut line: Styled, row: &Row, head_branch: Option<&str>) -> Styled {
    use git_session::out::style::Style;
    let mut deco: Vec<(Option<&str>, Style, &str)> = Vec::new();
    if row.head && head_branch.is_none() {
        deco.push((Some("HEAD"), style::BRANCH, ""));
    }
    for b in &row.branches {
        match row.head && head_branch == Some(b) {
            true => deco.push((Some("HEAD -> "), style::BRANCH, b)),
            false => deco.push((None, style::BRANCH, b)),
        }
    }
    // A remote's branch, as git shows `origin/main`.
    for r in &row.remotes {
        deco.push((None, style::REMOTE, r));
    }
    if deco.is_empty() {
        return line;
    }
    line = line.plain(" (");
    for (i, (head, color, b)) in deco.into_iter().enumerate() {
        if i > 0 {
            line = line.plain(", ");
        }
        if let Some(h) = head {
            line = line.paint(style::CURRENT, h);
        }
        line = line.paint(color, b);
    }
    line.plain(")")
}

/// The first `limit` commits of the line from `tip` back, when none of them
/// is a merge (session histories never merge): newest first in topological
/// order, as [`newest_first`] gives them, without reading the rest of the
/// history. `None` at a merge.
fn first_parent_line(
    repo: &SessionRepo,
    tip: Oid,
    limit: usize,
) -> Result<Option<Vec<CommitInfo>>> {
    let mut line = Vec::new();
    let mut cur = Some(tip);
    while let Some(c) = cur.filter(|_| line.len() < limit) {
        let info = repo.commit_info(c)?;
        if info.parents.len() > 1 {
            return Ok(None);
        }
        cur = info.parents.first().copied();
        line.push(info);
    }
    Ok(Some(line))
}

/// Every commit reachable from `tips`, newest first in topological order: a
/// commit only after all its children (ties: later time, then the later
/// turn's nodes); the first `limit` of them.
fn newest_first(repo: &SessionRepo, tips: &[Oid], limit: usize) -> Result<Vec<CommitInfo>> {
    let mut all: BTreeMap<Oid, CommitInfo> = BTreeMap::new();
    let mut stack = tips.to_vec();
    while let Some(c) = stack.pop() {
        if let std::collections::btree_map::Entry::Vacant(slot) = all.entry(c) {
            let info = repo.commit_info(c)?;
            stack.extend(info.parents.iter().copied());
            slot.insert(info);
        }
    }
    let mut children: HashMap<Oid, usize> = HashMap::new();
    for info in all.values() {
        for p in &info.parents {
            *children.entry(*p).or_default() += 1;
        }
    }
    let key = |i: &CommitInfo| (i.time, Trailers::parse(&i.message).nodes.map(|n| n.1), i.id);
    let mut ready: Vec<Oid> = all
        .keys()
        .filter(|c| !children.contains_key(*c))
        .copied()
        .collect();
    let mut order = Vec::with_capacity(all.len().min(limit));
    while order.len() < limit && !ready.is_empty() {
        ready.sort_by_key(|c| key(&all[c]));
        let c = ready.pop().expect("non-empty");
        for p in &all[&c].parents {
            let n = children.get_mut(p).expect("counted above");
            *n -= 1;
            if *n == 0 {
                ready.push(*p);
            }
        }
        order.push(c);
    }
    Ok(order
        .into_iter()
        .map(|c| all.remove(&c).expect("listed above"))
        .collect())
}

/// An ASCII graph of forks (session histories never merge): one lane per
/// line of history still to be drawn.
#[derive(Default)]
struct Graph {
    lanes: Vec<Oid>,
}

impl Graph {
    /// The prefix for commit `c`, and a connector line when its lane joins
    /// another one (a fork point below).
    fn place(&mut self, c: Oid, parent: Option<Oid>) -> (String, Option<String>) {
        let col = match self.lanes.iter().position(|l| *l == c) {
            Some(i) => i,
            None => {
                self.lanes.push(c);
                self.lanes.len() - 1
            }
        };
        let prefix: String = (0..self.lanes.len())
            .map(|i| if i == col { "* " } else { "| " })
            .collect();
        let mut join = None;
        match parent {
            Some(p) => match self.lanes.iter().position(|l| *l == p) {
                Some(other) if other != col => {
                    // This line forks off `p`'s lane: draw it joining.
                    let n = self.lanes.len();
                    let line: String = (0..n)
                        .map(|i| {
                            if i < col {
                                "| "
                            } else if i == col {
                                "|/"
                            } else {
                                " /"
                            }
                        })
                        .collect::<String>();
                    let line = line.replacen("| |/", "|/", 1);
                    self.lanes.remove(col);
                    join = Some(line.trim_end().to_string());
                }
                _ => self.lanes[col] = p,
            },
            None => {
                self.lanes.remove(col);
            }
        }
        (prefix, join)
    }
}
