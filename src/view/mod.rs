//! Views of the past (SPEC §2.3, §5.5–§5.7): resolve a target (turn number,
//! `prev`/`next`, branch, commit, node id) to a turn: its number, its last
//! conversational node and its commit. Used by `checkout`, `show --at` and
//! `branch`; a branch's nodes in reading order and its turns, for `show`,
//! `diff` and `export`; the branches ([`branches`]).

mod branches;
pub mod diff;
mod error;

use std::collections::{HashMap, HashSet};

use crate::error::Result;
use crate::git::{Oid, SessionRepo};
use crate::layout::history::Catalog;
use crate::layout::schema::{Meta, Node, ROOT};
use crate::session::Trailers;

pub use branches::{Branch, branch_named, branches};
pub use error::{CheckoutError, ViewError};

/// A turn to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub turn: u64,
    /// Its last conversational node: the head to move to.
    pub head: String,
    /// Its commit, when the turn is in git.
    pub commit: Option<Oid>,
}

/// The DAG, indexed.
pub struct Dag<'a> {
    pub nodes: &'a [Node],
    pub by_id: HashMap<&'a str, &'a Node>,
}

impl<'a> Dag<'a> {
    pub fn new(nodes: &'a [Node]) -> Dag<'a> {
        Dag {
            nodes,
            by_id: nodes.iter().map(|n| (n.id.as_str(), n)).collect(),
        }
    }

    /// Conversational nodes root → `tip` along predecessors.
    pub fn chain(&self, tip: &str) -> Vec<&'a Node> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if id == ROOT || !seen.insert(id) {
                break;
            }
            let Some(n) = self.by_id.get(id) else { break };
            if n.is_conversational() {
                out.push(*n);
            }
            cur = n.predecessor.as_deref();
        }
        out.reverse();
        out
    }

    /// The turns of a chain: (turn number, its last conversational node).
    pub fn turns(chain: &[&'a Node]) -> Vec<(u64, &'a Node)> {
        let mut out: Vec<(u64, &Node)> = Vec::new();
        for n in chain {
            if n.starts_turn() {
                out.push((out.len() as u64 + 1, n));
            } else if let Some(last) = out.last_mut() {
                last.1 = n;
            }
        }
        out
    }

    /// Tips: conversational nodes that no conversational node continues.
    pub fn tips(&self) -> Vec<&'a Node> {
        let continued: HashSet<&str> = self
            .nodes
            .iter()
            .filter(|n| n.is_conversational())
            .filter_map(|n| n.predecessor.as_deref())
            .collect();
        self.nodes
            .iter()
            .filter(|n| n.is_conversational() && !continued.contains(n.id.as_str()))
            .collect()
    }
}

/// The tip being browsed: `view_tip` while the head lies on its chain (set by
/// `checkout`, so that `next` can go forward again), else the head.
pub fn view_tip(meta: &Meta, dag: &Dag<'_>) -> Option<String> {
    let head = meta.head_id()?.to_string();
    if let Some(v) = meta.str("view_tip")
        && dag.chain(v).iter().any(|n| n.id == head)
    {
        return Some(v.to_string());
    }
    Some(head)
}

/// The number of the turn `head` is in, on `chain`.
fn turn_of(chain: &[&Node], head: &str) -> Option<u64> {
    let pos = chain.iter().position(|n| n.id == head)?;
    Some(chain[..=pos].iter().filter(|n| n.starts_turn()).count() as u64)
}

/// The branch ending at `tip`: conversation nodes root → tip, each followed by
/// the nodes it called, in seq order.
pub fn branch_nodes<'a>(nodes: &'a [Node], tip: Option<&str>, at: bool) -> Vec<(u64, &'a Node)> {
    let by_id: HashMap<&str, &Node> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let mut chain = Vec::new();
    let mut cur = tip;
    let mut seen = HashSet::new();
    while let Some(id) = cur {
        if id == ROOT || !seen.insert(id) {
            break;
        }
        let Some(n) = by_id.get(id) else { break };
        chain.push(*n);
        cur = n.predecessor.as_deref();
    }
    chain.reverse();
    let callees = callees(nodes);
    // Records (a relocation, a compaction) stand outside the conversation
    // (caller ROOT, no predecessor): each is shown where its seq falls.
    let mut records: Vec<&Node> = nodes.iter().filter(|n| is_record(n)).collect();
    records.sort_by_key(|n| n.seq);
    let mut records = records.into_iter().peekable();
    let mut out = Vec::new();
    let mut turn = 0;
    fn push<'a>(
        n: &'a Node,
        turn: u64,
        callees: &HashMap<&str, Vec<&'a Node>>,
        out: &mut Vec<(u64, &'a Node)>,
        depth: usize,
    ) {
        out.push((turn, n));
        if depth < 16
            && let Some(cs) = callees.get(n.id.as_str())
        {
            for c in cs {
                push(c, turn, callees, out, depth + 1);
            }
        }
    }
    for n in chain {
        if n.is_root_marker() || is_record(n) {
            continue;
        }
        while let Some(r) = records.next_if(|r| r.seq < n.seq) {
            out.push((turn, r));
        }
        if n.starts_turn() {
            turn += 1;
        }
        push(n, turn, &callees, &mut out, 0);
    }
    // Records after the last message: shown with the conversation as it is
    // now, not with a view of how it stood at an earlier turn (`--at`).
    let last = out.last().map(|(_, n)| n.seq);
    out.extend(
        records
            .filter(|r| !at || last.is_some_and(|l| r.seq < l))
            .map(|r| (turn, r)),
    );
    out
}

/// One turn of a branch, as `show` and `diff` head it.
#[derive(Debug, Clone)]
pub struct TurnSpan<'a> {
    pub number: u64,
    /// Its first node's time.
    pub time: f64,
    /// The seqs of its first and its last node (records aside).
    pub seqs: (i64, i64),
    /// Its last conversational node (the commit that holds it holds the
    /// turn).
    pub last: &'a Node,
    /// The session commit that holds it; `None` while it is not committed
    /// (or no commit can be read).
    pub commit: Option<Oid>,
}

/// The turns of `rows` ([`branch_nodes`]'s), in order, each with the
/// session commit that holds it (looked up in `repo`, by the seq of its
/// last conversational node and that node's file in `catalog`). A
/// history that cannot be read gives no commits rather than an error: the
/// conversation is shown all the same.
pub fn spans<'a>(
    rows: &[(u64, &'a Node)],
    repo: Option<&SessionRepo>,
    catalog: &Catalog,
) -> Vec<TurnSpan<'a>> {
    let mut out: Vec<TurnSpan<'a>> = Vec::new();
    for &(turn, n) in rows {
        if turn == 0 || is_record(n) {
            continue;
        }
        match out.last_mut() {
            Some(t) if t.number == turn => {
                t.seqs = (t.seqs.0.min(n.seq), t.seqs.1.max(n.seq));
                if n.is_conversational() {
                    t.last = n;
                }
            }
            _ => out.push(TurnSpan {
                number: turn,
                time: n.created_at,
                seqs: (n.seq, n.seq),
                last: n,
                commit: None,
            }),
        }
    }
    let files: Vec<String> = out
        .iter()
        .map(|t| catalog.get(&t.last.id).map(|e| e.file).unwrap_or_default())
        .collect();
    let lasts: Vec<(u64, &str)> = out
        .iter()
        .zip(&files)
        .map(|(t, f)| (t.last.seq.max(0) as u64, f.as_str()))
        .collect();
    if let Some(found) = repo.and_then(|r| crate::mirror::holders_of(r, &lasts).ok()) {
        for (t, c) in out.iter_mut().zip(found) {
            t.commit = c;
        }
    }
    out
}

/// The nodes each node called (its caller's id → them, in seq order).
pub fn callees(nodes: &[Node]) -> HashMap<&str, Vec<&Node>> {
    let mut out: HashMap<&str, Vec<&Node>> = HashMap::new();
    for n in nodes.iter().filter(|n| !n.is_top_level()) {
        out.entry(n.caller.as_str()).or_default().push(n);
    }
    out
}

/// A record node: a tool node of a reserved name called by ROOT (SPEC §2.2).
pub fn is_record(n: &Node) -> bool {
    n.role == "code" && n.caller == ROOT && crate::session::is_reserved_name(&n.name)
}

/// Resolve `target` for a session.
pub fn resolve(target: &str, meta: &Meta, nodes: &[Node], repo: &SessionRepo) -> Result<Resolved> {
    let dag = Dag::new(nodes);
    let view = view_tip(meta, &dag);
    let chain = view.as_deref().map(|v| dag.chain(v)).unwrap_or_default();
    let turns = Dag::turns(&chain);
    let by_turn = |n: u64| -> Result<Resolved> {
        match turns.iter().find(|(t, _)| *t == n) {
            Some((t, last)) => Ok(Resolved {
                turn: *t,
                head: last.id.clone(),
                commit: commit_of(repo, last)?,
            }),
            None => Err(ViewError::NoSuchTurn {
                turn: n,
                turns: turns.len(),
            }
            .into()),
        }
    };
    // A number is a turn; one that is not a turn here may still be a commit
    // prefix made only of digits (4 or more of them), tried below.
    let number = target.parse::<u64>().ok();
    if let Some(n) = number {
        match by_turn(n) {
            Ok(r) => return Ok(r),
            Err(e) if target.len() < 4 => return Err(e),
            Err(_) => {}
        }
    }
    if target == "prev" || target == "next" {
        let head = meta.head_id().unwrap_or_default();
        let cur = turn_of(&chain, head).unwrap_or(0);
        let want = if target == "prev" {
            cur.checked_sub(1)
        } else {
            Some(cur + 1)
        };
        return match want {
            Some(n) if n >= 1 => by_turn(n),
            _ => Err(ViewError::NoEarlierTurn {
                current: cur,
                turns: turns.len(),
            }
            .into()),
        };
    }
    // A node id.
    if let Some(n) = dag.by_id.get(target) {
        return turn_holding(&dag, n, repo);
    }
    // A branch name.
    let branches = repo.branches()?;
    if let Some((_, tip)) = branches.iter().find(|(b, _)| b == target) {
        return at_commit(*tip, &dag, repo);
    }
    // A commit id or a unique prefix of at least 4 hex digits.
    if target.len() >= 4 && target.bytes().all(|b| b.is_ascii_hexdigit()) {
        let lower = target.to_ascii_lowercase();
        let mut found: Vec<Oid> = reachable(repo, &branches)?
            .into_iter()
            .filter(|c| c.to_string().starts_with(&lower))
            .collect();
        found.sort();
        match found.len() {
            1 => return at_commit(found[0], &dag, repo),
            0 => {}
            _ => {
                return Err(ViewError::AmbiguousCommit {
                    prefix: target.to_string(),
                    matches: found
                        .iter()
                        .map(|c| c.to_hex_with_len(10).to_string())
                        .collect(),
                }
                .into());
            }
        }
    }
    if let Some(n) = number {
        return by_turn(n);
    }
    Err(ViewError::UnknownTarget {
        target: target.to_string(),
        turns: turns.len(),
        branches: branches.into_iter().map(|(b, _)| b).collect(),
    }
    .into())
}

/// Another way the conversation goes on from the turn `next` started at:
/// the turn on other branches, where it is not the one `next` picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fork {
    /// The branches whose line goes on this way.
    pub branches: Vec<String>,
    /// Their turn (the number `next` went to), to check out.
    pub turn: Resolved,
}

/// The git branches that go on from node `from` (the head before a
/// `next`) into a turn `picked.turn` other than `picked`: one [`Fork`] for
/// each such turn, with every branch that goes on through it; and the
/// branches that go on through `picked` itself. A branch whose tip records
/// no turn is left out.
pub fn forks_at(
    from: &str,
    picked: &Resolved,
    nodes: &[Node],
    repo: &SessionRepo,
) -> Result<(Vec<String>, Vec<Fork>)> {
    let dag = Dag::new(nodes);
    let mut taken = Vec::new();
    let mut forks: Vec<Fork> = Vec::new();
    for (branch, tip) in repo.branches()? {
        let Ok(at) = at_commit(tip, &dag, repo) else {
            continue;
        };
        let chain = dag.chain(&at.head);
        if !chain.iter().any(|n| n.id == from) {
            continue;
        }
        let Some((_, last)) = Dag::turns(&chain)
            .into_iter()
            .find(|(t, _)| *t == picked.turn)
        else {
            continue;
        };
        if last.id == picked.head {
            taken.push(branch);
            continue;
        }
        match forks.iter_mut().find(|f| f.turn.head == last.id) {
            Some(f) => f.branches.push(branch),
            None => forks.push(Fork {
                branches: vec![branch],
                turn: Resolved {
                    turn: picked.turn,
                    head: last.id.clone(),
                    commit: commit_of(repo, last)?,
                },
            }),
        }
    }
    Ok((taken, forks))
}

/// Every commit reachable from the branches and HEAD.
fn reachable(repo: &SessionRepo, branches: &[(String, Oid)]) -> Result<Vec<Oid>> {
    let mut stack: Vec<Oid> = branches.iter().map(|(_, t)| *t).collect();
    stack.extend(repo.head()?.commit);
    let mut seen = HashSet::new();
    while let Some(c) = stack.pop() {
        if seen.insert(c) {
            stack.extend(repo.commit_info(c)?.parents);
        }
    }
    Ok(seen.into_iter().collect())
}

/// The turn that holds node `n`: its number, and its last conversational
/// node (following the conversation forward while it stays in the turn).
fn turn_holding(dag: &Dag<'_>, n: &Node, repo: &SessionRepo) -> Result<Resolved> {
    // A tool node belongs to its caller's turn.
    let mut anchor = n;
    for _ in 0..64 {
        if anchor.is_conversational() {
            break;
        }
        match dag.by_id.get(anchor.caller.as_str()) {
            Some(c) => anchor = c,
            None => break,
        }
    }
    let number = dag
        .chain(&anchor.id)
        .iter()
        .filter(|m| m.starts_turn())
        .count() as u64;
    let mut last = anchor;
    while let Some(m) = dag
        .nodes
        .iter()
        .filter(|m| {
            m.is_conversational()
                && !m.starts_turn()
                && m.predecessor.as_deref() == Some(last.id.as_str())
        })
        .min_by_key(|m| m.seq)
    {
        last = m;
    }
    Ok(Resolved {
        turn: number.max(1),
        head: last.id.clone(),
        commit: commit_of(repo, last)?,
    })
}

/// The turn a commit records.
fn at_commit(c: Oid, dag: &Dag<'_>, repo: &SessionRepo) -> Result<Resolved> {
    let mut info = repo.commit_info(c)?;
    let mut t = Trailers::parse(&info.message);
    // A commit that changed files only (node files renamed to one naming,
    // metadata stamped after a turn) records the turn of the commit below.
    for _ in 0..64 {
        match info.parents.first() {
            Some(p) if t.nodes.is_none() && (t.renamed || t.turn.is_some()) => {
                info = repo.commit_info(*p)?;
                t = Trailers::parse(&info.message);
            }
            _ => break,
        }
    }
    let last = t.nodes.and_then(|(a, b)| {
        dag.nodes
            .iter()
            .filter(|n| n.is_conversational() && (n.seq as u64) >= a && (n.seq as u64) <= b)
            .max_by_key(|n| n.seq)
    });
    match last {
        Some(n) => Ok(Resolved {
            turn: t.turn.unwrap_or(0),
            head: n.id.clone(),
            commit: Some(c),
        }),
        None => Err(ViewError::NotATurnCommit {
            commit: c.to_hex_with_len(10).to_string(),
        }
        .into()),
    }
}

/// The commit of the turn whose last conversational node is `last`.
fn commit_of(repo: &SessionRepo, last: &Node) -> Result<Option<Oid>> {
    Ok(crate::mirror::commit_holding(repo, last.seq.max(0) as u64)?.map(|(c, _)| c))
}
