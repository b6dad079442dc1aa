//! The plan of a mirror run: which commits the pending nodes become (their
//! turns, parents, messages, files) and which branch each lands on, decided
//! before anything is written. [`plan`] and [`land`] are pure: what they
//! know of the recorded session comes through [`History`] (commits) and
//! [`Nodes`] (committed node files), so the unit tests below give them any
//! history. `commit-turn --dry-run` prints the plan.

use std::collections::{HashMap, HashSet};

use super::CommitOptions;
use crate::error::Result;
use crate::git::Oid;
use crate::layout::schema::{Node, ROOT};
use crate::session::{self, Group, MessageParts, Trailers};

/// A commit that exists, or one planned earlier in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Parent {
    Commit(Oid),
    Planned(usize),
}

/// What a plan reads of the session's commits.
pub(super) trait History {
    /// The parents and trailers of commit `id`.
    fn commit(&mut self, id: Oid) -> Result<(Vec<Oid>, Trailers)>;
    /// Which of `files` commit `id`'s tree holds in `history/` (one read of
    /// the tree, however many files).
    fn tree_holds(&mut self, id: Oid, files: &[&str]) -> Result<Vec<bool>>;
}

/// What a plan reads of the session's node files (`history/`).
pub(super) trait Nodes {
    /// Node `id`'s seq, by its file name.
    fn seq_of(&self, id: &str) -> Option<u64>;
    /// Node `id`'s file name in `history/`.
    fn file_of(&self, id: &str) -> Option<String>;
    /// Node `id`, read.
    fn node(&self, id: &str) -> Option<Node>;
    /// The latest node before seq `before` that starts a turn.
    fn turn_start_before(&self, before: u64) -> Option<Node>;
}

/// The branch a planned commit lands on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Landing {
    pub(super) branch: String,
    /// A branch created for it (a retry branch).
    pub(super) new: bool,
}

/// One commit to make.
#[derive(Debug, Clone)]
pub(super) struct Planned {
    pub(super) parent: Option<Parent>,
    pub(super) turn: u64,
    pub(super) msg: String,
    pub(super) time: f64,
    /// The `history/` files it adds.
    pub(super) files: Vec<String>,
    /// First and last seq of its nodes (`None`: a change of files only).
    pub(super) range: Option<(u64, u64)>,
    pub(super) count: usize,
    /// What a retry branch for it is named after (`retry-<name>`); empty:
    /// the commit id.
    pub(super) retry_name: String,
    /// A fork (a regenerated reply, a reply after a checkout of a turn the
    /// conversation went on from, a turn retried from inside or after an
    /// earlier one): a branch of its own even when its parent is a branch
    /// tip.
    pub(super) forks: bool,
    /// Set by [`land`]; `None` before, or for a new branch named by the
    /// commit id once it is known.
    pub(super) landing: Option<Landing>,
}

/// What [`plan`] plans from.
pub(super) struct Input<'a> {
    pub(super) session_id: &'a str,
    /// The pending nodes, in seq order, and their groups
    /// ([`session::group_pending`]).
    pub(super) pending: &'a [Node],
    pub(super) groups: &'a [Group],
    /// Node id → its `history/` file name, for the pending nodes.
    pub(super) file_of: &'a HashMap<&'a str, &'a str>,
    /// Seqs of committed nodes (at least the last one before the pending).
    pub(super) committed_seqs: &'a [u64],
    /// HEAD's commit and every branch tip.
    pub(super) tips: &'a [Oid],
    /// HEAD's commit.
    pub(super) head: Option<Oid>,
    pub(super) opts: &'a CommitOptions,
}

/// The commits the pending nodes become, one per group, in order: a turn
/// continues from the commit holding its predecessor, more nodes of a turn
/// from that turn's latest commit, a regenerated reply forks from its
/// message's parent. `warn` hears of a predecessor that does not exist.
pub(super) fn plan(
    input: &Input<'_>,
    history: &mut dyn History,
    recorded: &dyn Nodes,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<Planned>> {
    let pending_by_id: HashMap<&str, &Node> =
        input.pending.iter().map(|n| (n.id.as_str(), n)).collect();
    let renamed_over = renamed_over(history, input.head)?;
    let mut run = Run {
        input,
        recorded,
        pending_by_id,
        renamed_over,
        planner: Planner::new(history),
        plans: Vec::new(),
    };
    let last_group = input.groups.len().saturating_sub(1);
    for (gi, g) in input.groups.iter().enumerate() {
        run.group(g, gi == last_group, warn)?;
    }
    Ok(run.plans)
}

/// Commits that only renamed node files on top of HEAD's commit `cur_tip`:
/// (the commit below them, HEAD's commit). A turn that goes on from the
/// commit below them goes on from them.
fn renamed_over(history: &mut dyn History, cur_tip: Option<Oid>) -> Result<Option<(Oid, Oid)>> {
    let mut renamed_over: Option<(Oid, Oid)> = None;
    if let Some(tip) = cur_tip {
        let mut cur = tip;
        loop {
            let (parents, t) = history.commit(cur)?;
            match parents.first() {
                Some(p) if t.renamed => cur = *p,
                _ => break,
            }
        }
        if cur != tip {
            renamed_over = Some((cur, tip));
        }
    }
    Ok(renamed_over)
}

/// Where a regenerated reply forks from: its parent (`None`: none) and
/// its turn.
struct Fork {
    parent: Option<Parent>,
    turn: u64,
}

/// A plan in the making: what it plans from, the search of recorded
/// commits, and the commits planned so far.
struct Run<'r, 'a> {
    input: &'r Input<'a>,
    recorded: &'r dyn Nodes,
    pending_by_id: HashMap<&'a str, &'a Node>,
    /// Commits that only renamed node files on top of HEAD's commit: a
    /// turn that goes on from the commit below them goes on from them.
    renamed_over: Option<(Oid, Oid)>,
    planner: Planner<'r>,
    plans: Vec<Planned>,
}

impl Run<'_, '_> {
    /// Node `id`: pending, or recorded.
    fn node(&self, id: &str) -> Option<Node> {
        self.pending_by_id
            .get(id)
            .map(|n| (*n).clone())
            .or_else(|| self.recorded.node(id))
    }

    /// Node `id`'s seq: pending, or recorded.
    fn seq_of(&self, id: &str) -> Option<u64> {
        self.pending_by_id
            .get(id)
            .map(|n| n.seq.max(0) as u64)
            .or_else(|| self.recorded.seq_of(id))
    }

    /// Plan the commit of group `g` (`last`: the last group, the one the
    /// options' message, duration and tokens go to).
    fn group(&mut self, g: &Group, last: bool, warn: &mut dyn FnMut(String)) -> Result<()> {
        let pending = self.input.pending;
        let nodes = &pending[g.range.clone()];
        let first = &nodes[0];
        // A regenerated reply: a sibling of the turn that holds the message it
        // answers, so its parent is that turn's parent.
        let (regenerated, fork) = match g.regenerates {
            true => self.regenerated(first)?,
            false => (None, None),
        };
        let (located, turn) = if let Some(fork) = fork {
            (
                fork.parent.map(|commit| Located {
                    commit,
                    turn: fork.turn,
                }),
                fork.turn,
            )
        } else if g.starts_turn {
            self.locate_turn_start(first, warn)?
        } else {
            self.locate_more_of_turn(g, first)?
        };
        let parent = self.parent(g, first, located)?;
        let parts = self.message(g, last, nodes, turn, regenerated.as_ref());
        let retry_name = session::retry_name(nodes).unwrap_or_default().to_string();
        let range = (parts.first_seq, parts.last_seq);
        self.plans.push(Planned {
            parent,
            turn,
            msg: parts.render(),
            time: nodes.iter().map(|n| n.created_at).fold(f64::MIN, f64::max),
            files: nodes
                .iter()
                .filter_map(|n| self.input.file_of.get(n.id.as_str()).map(|f| f.to_string()))
                .collect(),
            range: Some(range),
            count: nodes.len(),
            retry_name,
            forks: g.forks,
            landing: None,
        });
        // Later groups may continue this one.
        let me = Located {
            commit: Parent::Planned(self.plans.len() - 1),
            turn,
        };
        self.planner.made.push((range, me));
        if !g.starts_turn
            && !g.regenerates
            && let Some(l) = located
        {
            self.planner.continued.push((l.commit, me));
        }
        Ok(())
    }

    /// A regenerated reply (`first`, its group's first node): the message
    /// it answers when the reply is a sibling of that message's turn, and
    /// where it forks from, when found.
    fn regenerated(&mut self, first: &Node) -> Result<(Option<Node>, Option<Fork>)> {
        let mut fork = None;
        let pred = first
            .predecessor
            .as_deref()
            .expect("a regenerated reply has a predecessor");
        let mut regenerated = self.node(pred);
        if let Some(user) = &regenerated {
            let useq = user.seq.max(0) as u64;
            // A reply to the turn's user message is a sibling of the
            // turn: its parent is the turn's parent. A reply after a
            // reply the conversation already went on from continues
            // that turn on a fork: its parent is the commit holding it.
            let sibling = user.starts_turn();
            let planned = self
                .planner
                .made
                .iter()
                .rev()
                .find(|((a, b), _)| *a <= useq && useq <= *b)
                .map(|(_, l)| l.commit);
            let plans = &self.plans;
            let found = match planned {
                Some(Parent::Planned(i)) if sibling => Some((plans[i].parent, plans[i].turn)),
                Some(Parent::Planned(i)) => Some((Some(Parent::Planned(i)), plans[i].turn)),
                _ => self
                    .planner
                    .holder_committed(useq, self.input.tips)?
                    .map(|(c, p, t)| {
                        let parent = if sibling { p } else { Some(c) };
                        (parent.map(Parent::Commit), t)
                    }),
            };
            if let Some((p, t)) = found {
                fork = Some(Fork { parent: p, turn: t });
            }
            if !sibling {
                regenerated = None;
            }
        }
        Ok((regenerated, fork))
    }

    /// A group that starts a turn (`first`, its first node): the commit
    /// holding its predecessor, and its turn.
    fn locate_turn_start(
        &mut self,
        first: &Node,
        warn: &mut dyn FnMut(String),
    ) -> Result<(Option<Located>, u64)> {
        let (recorded, tips) = (self.recorded, self.input.tips);
        Ok(match first.predecessor.as_deref() {
            None | Some("") | Some(ROOT) => (None, 1),
            Some(pred) => {
                let seq = self.seq_of(pred);
                let loc = match seq {
                    Some(s) => self.planner.locate(s, tips)?,
                    None => {
                        warn(format!(
                            "node `{}`: predecessor `{pred}` does not exist",
                            first.id
                        ));
                        None
                    }
                };
                let pending_by_id = &self.pending_by_id;
                let turn = || chain_turns(recorded, pending_by_id, pred) + 1;
                match loc {
                    Some(l) => (Some(l), l.turn + 1),
                    // Commits without trailers (the Python store's): the
                    // commit whose tree first holds the predecessor.
                    None => match recorded
                        .file_of(pred)
                        .filter(|_| !pending_by_id.contains_key(pred))
                        .map(|file| self.planner.first_holding_tree(&file, tips))
                        .transpose()?
                        .flatten()
                    {
                        Some(c) => {
                            let t = turn();
                            (
                                Some(Located {
                                    commit: Parent::Commit(c),
                                    turn: t - 1,
                                }),
                                t,
                            )
                        }
                        None => (None, turn()),
                    },
                }
            }
        })
    }

    /// More nodes of a turn (group `g`, `first` its first node): the turn
    /// of the reply they go on from, or of what called them (the head need
    /// not be the latest node: after a checkout), else the turn committed
    /// last before them.
    fn locate_more_of_turn(&mut self, g: &Group, first: &Node) -> Result<(Option<Located>, u64)> {
        let before = first.seq.max(0) as u64;
        let from = match first.is_top_level() {
            true => session::goes_on_from(first),
            false => Some(first.caller.as_str()),
        };
        let goes_on = from.and_then(|p| self.seq_of(p));
        // The node before them: committed, or planned in this run (a
        // group after a record node cut out of its turn).
        let planned_before = self.input.pending[..g.range.start]
            .last()
            .map(|n| n.seq.max(0) as u64);
        let prev = goes_on.or_else(|| {
            self.input
                .committed_seqs
                .iter()
                .rev()
                .find(|&&s| s < before)
                .copied()
                .max(planned_before)
        });
        let loc = match prev {
            Some(s) => self.planner.locate(s, self.input.tips)?,
            None => None,
        };
        // Without trailers to say it: the turn of the latest turn start
        // before these nodes, counted along its chain.
        let turn = match loc {
            Some(l) => l.turn,
            None => self.recorded.turn_start_before(before).map_or(0, |n| {
                chain_turns(self.recorded, &self.pending_by_id, &n.id)
            }),
        };
        Ok((loc, turn))
    }

    /// The parent of a group's commit (`first`, its first node): the commit
    /// it was located at (HEAD's commit for the one below renames on top of
    /// it); else, for a turn on the root, the root commit; else the commit
    /// planned last in this run, or HEAD's.
    fn parent(
        &mut self,
        g: &Group,
        first: &Node,
        located: Option<Located>,
    ) -> Result<Option<Parent>> {
        let (renamed_over, cur_tip) = (self.renamed_over, self.input.head);
        Ok(match located {
            Some(Located {
                commit: Parent::Commit(c),
                ..
            }) if renamed_over.is_some_and(|(below, _)| below == c) => {
                renamed_over.map(|(_, tip)| Parent::Commit(tip))
            }
            Some(l) => Some(l.commit),
            None if g.starts_turn
                && matches!(first.predecessor.as_deref(), None | Some("") | Some(ROOT)) =>
            {
                match cur_tip {
                    Some(t) => Some(Parent::Commit(self.planner.root(t)?)),
                    None => None,
                }
            }
            None => match self.plans.len() {
                0 => cur_tip.map(Parent::Commit),
                n => Some(Parent::Planned(n - 1)),
            },
        })
    }

    /// The message of a group's commit (`nodes`, its nodes): the options'
    /// message, duration, tokens, failure and interruption go to the last
    /// group's.
    fn message(
        &self,
        g: &Group,
        last: bool,
        nodes: &[Node],
        turn: u64,
        regenerated: Option<&Node>,
    ) -> MessageParts {
        let opts = self.input.opts;
        let earlier = |id: &str| self.node(id);
        let mut parts = MessageParts::from_nodes(
            self.input.session_id,
            turn,
            g.starts_turn,
            nodes,
            regenerated,
            &earlier,
        );
        if last {
            if let Some(m) = &opts.message {
                let mut lines = m.splitn(2, '\n');
                parts.subject = session::one_line(lines.next().unwrap_or(""));
                parts.body = lines.next().map(str::to_string);
            }
            if opts.duration.is_some() {
                parts.duration = opts.duration;
            }
            if opts.tokens.is_some() {
                parts.tokens = opts.tokens;
            }
            parts.failed = opts.failed;
            parts.interrupted |= opts.interrupted;
        }
        parts
    }
}

/// Decide the branch of each planned commit, HEAD being on `branch` at
/// `tip`: a commit whose parent is the current branch's tip advances it (the
/// first on an unborn branch too); any other, and a regenerated reply, gets
/// a retry branch of its own, named after its reply (`retry-<id>`).
pub(super) fn land(plans: &mut [Planned], branch: Option<String>, tip: Option<Oid>) {
    let mut cur_branch = branch;
    let mut cur_tip = tip.map(Parent::Commit);
    for (i, p) in plans.iter_mut().enumerate() {
        let landing = match (&cur_branch, cur_tip) {
            (Some(b), Some(t)) if Some(t) == p.parent && !p.forks => Some(Landing {
                branch: b.clone(),
                new: false,
            }),
            (Some(b), None) if !p.forks => Some(Landing {
                branch: b.clone(),
                new: false,
            }),
            _ if p.retry_name.is_empty() => None,
            _ => Some(Landing {
                branch: crate::git::retry_branch(&p.retry_name),
                new: true,
            }),
        };
        cur_branch = landing.as_ref().map(|l| l.branch.clone());
        cur_tip = Some(Parent::Planned(i));
        p.landing = landing;
    }
}

/// Where a located node's turn was committed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Located {
    pub(super) commit: Parent,
    pub(super) turn: u64,
}

/// The search of recorded commits for where nodes went, and the commits
/// planned so far in this run.
pub(super) struct Planner<'a> {
    history: &'a mut dyn History,
    /// Commits planned in this run: seq range → (plan, turn).
    made: Vec<((u64, u64), Located)>,
    /// Planned continuations: (the commit continued, the continuation).
    continued: Vec<(Parent, Located)>,
}

impl<'a> Planner<'a> {
    pub(super) fn new(history: &'a mut dyn History) -> Self {
        Planner {
            history,
            made: Vec::new(),
            continued: Vec::new(),
        }
    }

    fn decoded(&mut self, id: Oid) -> Result<(Vec<Oid>, Trailers)> {
        self.history.commit(id)
    }

    /// The commit that holds node `seq`, searched from `tips` back, and the
    /// latest commit of that same turn on that line of history.
    fn locate(&mut self, seq: u64, tips: &[Oid]) -> Result<Option<Located>> {
        let found = match self
            .made
            .iter()
            .rev()
            .find(|((a, b), _)| *a <= seq && seq <= *b)
        {
            Some((_, l)) => Some(*l),
            None => self.locate_committed(seq, tips)?,
        };
        // A continuation of that turn planned in this run is its latest commit.
        Ok(found.map(|mut l| {
            while let Some((_, next)) = self.continued.iter().find(|(of, _)| *of == l.commit) {
                l = *next;
            }
            l
        }))
    }

    /// The commit whose `Nodes:` trailer holds `seq` itself (not a later
    /// commit of its turn): its first parent and its turn.
    pub(super) fn holder_committed(
        &mut self,
        seq: u64,
        tips: &[Oid],
    ) -> Result<Option<(Oid, Option<Oid>, u64)>> {
        let mut visited = HashSet::new();
        for &tip in tips {
            let mut cur = Some(tip);
            while let Some(c) = cur {
                if !visited.insert(c) {
                    break;
                }
                let (parents, t) = self.decoded(c)?;
                if t.holds_seq(seq) {
                    let turn = t.turn.expect("a commit holding nodes names its turn");
                    return Ok(Some((c, parents.first().copied(), turn)));
                }
                cur = parents.first().copied();
            }
        }
        Ok(None)
    }

    /// For commits without trailers: the oldest commit on a tip's
    /// first-parent line whose tree holds `history/<file>`, searched from
    /// each tip in turn (the first line that holds it answers).
    pub(super) fn first_holding_tree(&mut self, file: &str, tips: &[Oid]) -> Result<Option<Oid>> {
        for &tip in tips {
            let mut found = None;
            let mut cur = Some(tip);
            while let Some(c) = cur {
                if !self.history.tree_holds(c, &[file])?[0] {
                    break;
                }
                found = Some(c);
                cur = self.decoded(c)?.0.first().copied();
            }
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// For commits without trailers: for each of `files`, the commits on the
    /// first-parent lines from `tips` whose tree holds `history/<file>` and
    /// whose parent's does not (where the file was added; a retry branch's
    /// commits add the other branch's files too, its tree being the whole
    /// session directory). Each line is walked back while its trees hold
    /// any of the files, and only until a commit an earlier line walked:
    /// each tree is read once for every file at once, not once a file.
    pub(super) fn adders(&mut self, files: &[&str], tips: &[Oid]) -> Result<Vec<Vec<Oid>>> {
        let mut out: Vec<Vec<Oid>> = vec![Vec::new(); files.len()];
        let mut walked: HashSet<Oid> = HashSet::new();
        for &tip in tips {
            if walked.contains(&tip) {
                continue;
            }
            // The files `cur`'s tree holds.
            let mut held: Vec<usize> = (0..files.len())
                .zip(self.history.tree_holds(tip, files)?)
                .filter_map(|(i, h)| h.then_some(i))
                .collect();
            let mut cur = tip;
            while !held.is_empty() && walked.insert(cur) {
                let Some(parent) = self.decoded(cur)?.0.first().copied() else {
                    for &i in &held {
                        out[i].push(cur);
                    }
                    break;
                };
                let names: Vec<&str> = held.iter().map(|&i| files[i]).collect();
                let in_parent = self.history.tree_holds(parent, &names)?;
                let mut next = Vec::with_capacity(held.len());
                for (i, h) in held.into_iter().zip(in_parent) {
                    if h {
                        next.push(i);
                    } else {
                        out[i].push(cur);
                    }
                }
                held = next;
                cur = parent;
            }
        }
        Ok(out)
    }

    pub(super) fn locate_committed(&mut self, seq: u64, tips: &[Oid]) -> Result<Option<Located>> {
        let mut visited = HashSet::new();
        for &tip in tips {
            // (commit, turn) along the first-parent line from this tip
            let mut line: Vec<(Oid, Option<u64>)> = Vec::new();
            let mut cur = Some(tip);
            while let Some(c) = cur {
                if !visited.insert(c) {
                    break;
                }
                let (parents, t) = self.decoded(c)?;
                line.push((c, t.turn));
                if t.holds_seq(seq) {
                    let turn = t.turn.expect("a commit holding nodes names its turn");
                    // Later commits of the same turn (continuations) come first on the line.
                    let k = line.len() - 1;
                    let mut best = c;
                    for (id, tt) in line[..k].iter().rev() {
                        if *tt == Some(turn) {
                            best = *id;
                        } else {
                            break;
                        }
                    }
                    return Ok(Some(Located {
                        commit: Parent::Commit(best),
                        turn,
                    }));
                }
                cur = parents.first().copied();
            }
        }
        Ok(None)
    }

    /// The root commit (`session init`) reached from `tip`.
    fn root(&mut self, tip: Oid) -> Result<Oid> {
        let mut cur = tip;
        loop {
            let (parents, _) = self.decoded(cur)?;
            match parents.first() {
                Some(p) => cur = *p,
                None => return Ok(cur),
            }
        }
    }
}

/// Count the turns on the predecessor chain ending at `id` (for sessions whose
/// commits carry no trailers, like the Python store's).
fn chain_turns(nodes: &dyn Nodes, pending: &HashMap<&str, &Node>, id: &str) -> u64 {
    let mut turns = 0;
    let mut cur = Some(id.to_string());
    let mut seen = HashSet::new();
    while let Some(c) = cur {
        if c == ROOT || !seen.insert(c.clone()) {
            break;
        }
        let node = match pending.get(c.as_str()) {
            Some(n) => (*n).clone(),
            None => match nodes.node(&c) {
                Some(n) => n,
                None => break,
            },
        };
        if node.starts_turn() {
            turns += 1;
        }
        cur = node.predecessor.clone();
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded history in memory: commits with their parents and
    /// trailers, the node files each tree holds, and the committed nodes.
    #[derive(Default)]
    struct Fake {
        commits: HashMap<Oid, (Vec<Oid>, Trailers, Vec<String>)>,
        nodes: Vec<(String, Node)>,
    }

    fn oid(n: u8) -> Oid {
        Oid::from_bytes_or_panic(&[n; 20])
    }

    impl Fake {
        fn commit(&mut self, id: u8, parent: Option<u8>, message: &str, files: &[&str]) -> Oid {
            let files = files.iter().map(|f| f.to_string()).collect();
            let parents = parent.map(oid).into_iter().collect();
            self.commits
                .insert(oid(id), (parents, Trailers::parse(message), files));
            oid(id)
        }
    }

    impl History for Fake {
        fn commit(&mut self, id: Oid) -> Result<(Vec<Oid>, Trailers)> {
            let (p, t, _) = &self.commits[&id];
            Ok((p.clone(), t.clone()))
        }
        fn tree_holds(&mut self, id: Oid, files: &[&str]) -> Result<Vec<bool>> {
            let held = &self.commits[&id].2;
            Ok(files.iter().map(|f| held.iter().any(|h| h == f)).collect())
        }
    }

    impl Nodes for Fake {
        fn seq_of(&self, id: &str) -> Option<u64> {
            self.node(id).map(|n| n.seq as u64)
        }
        fn file_of(&self, id: &str) -> Option<String> {
            self.nodes
                .iter()
                .find(|(_, n)| n.id == id)
                .map(|(f, _)| f.clone())
        }
        fn node(&self, id: &str) -> Option<Node> {
            self.nodes
                .iter()
                .find(|(_, n)| n.id == id)
                .map(|(_, n)| n.clone())
        }
        fn turn_start_before(&self, before: u64) -> Option<Node> {
            self.nodes
                .iter()
                .rev()
                .map(|(_, n)| n)
                .find(|n| (n.seq as u64) < before && n.starts_turn())
                .cloned()
        }
    }

    fn node(seq: i64, id: &str, role: &str, pred: Option<&str>, caller: &str) -> Node {
        Node::parse(
            serde_json::json!({"id": id, "seq": seq, "role": role, "caller": caller,
                "predecessor": pred, "output": format!("text of {id}"),
                "created_at": 1_796_000_000.0 + seq as f64})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    }

    fn file(n: &Node) -> String {
        format!("{:06}-{}.json", n.seq, n.id)
    }

    /// Plan and land `pending` on `history`, HEAD on `main` at `head`.
    fn planned(
        history: &mut Fake,
        pending: &[Node],
        answered: &[&str],
        committed_seqs: &[u64],
        head: Option<Oid>,
        tips: &[Oid],
    ) -> Vec<Planned> {
        let answered = answered.iter().map(|s| s.to_string()).collect();
        let groups = session::group_pending(pending, &answered);
        let files: Vec<(String, String)> =
            pending.iter().map(|n| (n.id.clone(), file(n))).collect();
        let file_of: HashMap<&str, &str> = files
            .iter()
            .map(|(i, f)| (i.as_str(), f.as_str()))
            .collect();
        let opts = CommitOptions::default();
        let input = Input {
            session_id: "s1",
            pending,
            groups: &groups,
            file_of: &file_of,
            committed_seqs,
            tips,
            head,
            opts: &opts,
        };
        let nodes = Fake {
            commits: HashMap::new(),
            nodes: std::mem::take(&mut history.nodes),
        };
        let mut warnings = Vec::new();
        let mut plans = plan(&input, history, &nodes, &mut |w| warnings.push(w)).unwrap();
        history.nodes = nodes.nodes;
        land(&mut plans, Some("main".into()), head);
        assert!(warnings.is_empty(), "{warnings:?}");
        plans
    }

    /// A session with one committed turn (u1, a1 on commit 2, after the
    /// root commit 1); returns it and its tip.
    fn one_turn() -> (Fake, Oid) {
        let mut h = Fake::default();
        h.commit(1, None, "session init\n", &[]);
        let u1 = node(1, "u1", "user", None, "");
        let a1 = node(2, "a1", "llm", Some("u1"), "");
        let tip = h.commit(
            2,
            Some(1),
            "turn 1: hi\n\nSession: s1\nTurn: 1\nNodes: 1..2\n",
            &[&file(&u1), &file(&a1)],
        );
        h.nodes = vec![(file(&u1), u1), (file(&a1), a1)];
        (h, tip)
    }

    fn landing(p: &Planned) -> (&str, bool) {
        let l = p.landing.as_ref().expect("landed");
        (l.branch.as_str(), l.new)
    }

    #[test]
    fn two_turns_on_a_fresh_session_chain_on_main() {
        let mut h = Fake::default();
        let root = h.commit(1, None, "session init\n", &[]);
        let pending = [
            node(1, "u1", "user", None, ""),
            node(2, "a1", "llm", Some("u1"), ""),
            node(3, "u2", "user", Some("a1"), ""),
            node(4, "a2", "llm", Some("u2"), ""),
        ];
        let plans = planned(&mut h, &pending, &[], &[], Some(root), &[root]);
        assert_eq!(plans.len(), 2);
        assert_eq!((plans[0].turn, plans[1].turn), (1, 2));
        assert_eq!(plans[0].parent, Some(Parent::Commit(root)));
        assert_eq!(plans[1].parent, Some(Parent::Planned(0)));
        assert_eq!(plans[0].range, Some((1, 2)));
        assert_eq!(plans[1].files, vec![file(&pending[2]), file(&pending[3])]);
        assert!(plans[0].msg.starts_with("turn 1: "), "{}", plans[0].msg);
        assert!(plans[1].msg.contains("\nTurn: 2\n"), "{}", plans[1].msg);
        assert_eq!(plans[1].time, 1_796_000_004.0, "dated by its last node");
        assert_eq!(landing(&plans[0]), ("main", false));
        assert_eq!(landing(&plans[1]), ("main", false));
    }

    #[test]
    fn more_nodes_of_a_turn_continue_its_commit() {
        let (mut h, tip) = one_turn();
        let pending = [node(3, "t1", "code", None, "a1")];
        let plans = planned(&mut h, &pending, &[], &[2], Some(tip), &[tip]);
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0].turn, 1, "the same turn");
        assert_eq!(plans[0].parent, Some(Parent::Commit(tip)));
        assert_eq!(landing(&plans[0]), ("main", false));
    }

    #[test]
    fn a_regenerated_reply_forks_a_retry_branch_from_its_message_s_parent() {
        let (mut h, tip) = one_turn();
        // A second reply to u1, which a1 answered already.
        let pending = [node(3, "a1b", "llm", Some("u1"), "")];
        let plans = planned(&mut h, &pending, &["u1"], &[2], Some(tip), &[tip]);
        assert_eq!(plans.len(), 1);
        assert!(plans[0].forks);
        assert_eq!(plans[0].turn, 1);
        assert_eq!(
            plans[0].parent,
            Some(Parent::Commit(oid(1))),
            "u1's commit's parent"
        );
        assert_eq!(landing(&plans[0]), ("retry-a1b", true));
    }

    #[test]
    fn a_turn_after_an_older_message_branches_off() {
        let mut h = Fake::default();
        h.commit(1, None, "session init\n", &[]);
        let u1 = node(1, "u1", "user", None, "");
        let a1 = node(2, "a1", "llm", Some("u1"), "");
        let u2 = node(3, "u2", "user", Some("a1"), "");
        let a2 = node(4, "a2", "llm", Some("u2"), "");
        let c1 = h.commit(
            2,
            Some(1),
            "turn 1: a\n\nSession: s1\nTurn: 1\nNodes: 1..2\n",
            &[],
        );
        let c2 = h.commit(
            3,
            Some(2),
            "turn 2: b\n\nSession: s1\nTurn: 2\nNodes: 3..4\n",
            &[],
        );
        h.nodes = [u1, a1, u2, a2]
            .into_iter()
            .map(|n| (file(&n), n))
            .collect();
        // A new message answering a1 again (a rewind to turn 1).
        let pending = [
            node(5, "u3", "user", Some("a1"), ""),
            node(6, "a3", "llm", Some("u3"), ""),
        ];
        let plans = planned(&mut h, &pending, &[], &[4], Some(c2), &[c2]);
        assert_eq!(plans[0].turn, 2);
        assert_eq!(plans[0].parent, Some(Parent::Commit(c1)));
        assert_eq!(landing(&plans[0]), ("retry-a3", true));
    }

    #[test]
    fn history_without_trailers_is_read_from_its_trees() {
        // The Python store's commits: no trailers; where a node first
        // appears in a tree says which commit holds it.
        let mut h = Fake::default();
        h.commit(1, None, "session init\n", &[]);
        let u1 = node(1, "u1", "user", None, "");
        let a1 = node(2, "a1", "llm", Some("u1"), "");
        let tip = h.commit(2, Some(1), "save", &[&file(&u1), &file(&a1)]);
        h.nodes = vec![(file(&u1), u1), (file(&a1), a1)];
        let pending = [
            node(3, "u2", "user", Some("a1"), ""),
            node(4, "a2", "llm", Some("u2"), ""),
        ];
        let plans = planned(&mut h, &pending, &[], &[2], Some(tip), &[tip]);
        assert_eq!(plans[0].turn, 2, "counted along the predecessor chain");
        assert_eq!(plans[0].parent, Some(Parent::Commit(tip)));
        assert_eq!(landing(&plans[0]), ("main", false));
    }

    /// Counts the trees read, to show each is read once for all files.
    struct Counting<'a>(&'a mut Fake, usize);

    impl History for Counting<'_> {
        fn commit(&mut self, id: Oid) -> Result<(Vec<Oid>, Trailers)> {
            History::commit(self.0, id)
        }
        fn tree_holds(&mut self, id: Oid, files: &[&str]) -> Result<Vec<bool>> {
            self.1 += 1;
            self.0.tree_holds(id, files)
        }
    }

    #[test]
    fn adders_are_found_on_every_line_reading_each_tree_once() {
        // Commits without trailers: 1 <- 2 <- 3 <- 5 (main), and 2 <- 4 (a
        // retry line, whose tree holds the files main added after 2).
        let mut h = Fake::default();
        h.commit(1, None, "session init\n", &[]);
        h.commit(2, Some(1), "turn: a\n", &["a.json"]);
        h.commit(3, Some(2), "turn: b\n", &["a.json", "b.json"]);
        let main = h.commit(5, Some(3), "turn: c\n", &["a.json", "b.json", "c.json"]);
        let retry = h.commit(
            4,
            Some(2),
            "turn: b again\n",
            &["a.json", "b.json", "d.json"],
        );
        let files = ["c.json", "a.json", "b.json", "d.json", "none.json"];
        let mut counting = Counting(&mut h, 0);
        let found = Planner::new(&mut counting)
            .adders(&files, &[main, retry, oid(3)])
            .unwrap();
        assert_eq!(
            found,
            vec![
                vec![main],
                vec![oid(2)],
                vec![oid(3), retry],
                vec![retry],
                vec![]
            ]
        );
        // main's line: 5, 3, 2, 1 (holds none of them); the retry line: 4,
        // then 2, walked already (read as 4's parent). Tip 3: walked.
        assert_eq!(counting.1, 6, "one read of each tree, and one a line");
        // The first line that holds a file answers.
        let mut p = Planner::new(&mut h);
        assert_eq!(
            p.first_holding_tree("b.json", &[retry, main]).unwrap(),
            Some(retry)
        );
        assert_eq!(
            p.first_holding_tree("d.json", &[main, retry]).unwrap(),
            Some(retry)
        );
        assert_eq!(
            p.first_holding_tree("none.json", &[main, retry]).unwrap(),
            None
        );
    }
}
