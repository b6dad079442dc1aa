//! Which commit holds a node: the read layer's questions to the mirror.

use std::collections::{HashMap, HashSet};

use super::commits::{Commits, every_tip};
use super::plan::{self, Parent, Planner};
use crate::error::Result;
use crate::git::{Oid, SessionRepo};

/// The commit that holds each node of `nodes` (its seq and its file in
/// `history/`), for the read layer: the oldest of the commits whose `Nodes:`
/// trailer names its seq and whose tree holds its file (a later commit of a
/// retry branch may name a range that covers it too); for a node that no
/// such commit holds (committed without trailers, by another writer), the
/// oldest of the commits on the lines from HEAD and the branches that add
/// its file. `None`: not committed yet.
///
/// Each commit's tree is read once, however many of the nodes it holds: a
/// tree read per node and commit made `nodes` on a whole session cost the
/// square of its size (the cube, without trailers).
pub fn holders_of(repo: &SessionRepo, nodes: &[(u64, &str)]) -> Result<Vec<Option<Oid>>> {
    let Some(first) = nodes.iter().map(|n| n.0).min() else {
        return Ok(Vec::new());
    };
    let files: Vec<&str> = nodes.iter().map(|n| n.1).collect();
    let tips = every_tip(repo)?;
    let mut commits = Commits::new(repo);
    let walked = trailer_ranges_after(&mut commits, &tips, first as i64 - 1, &files)?;
    let mut named = walked.clone();
    named.sort_unstable_by_key(|r| r.0);
    let widest = named.iter().map(|(a, b, _)| b.saturating_sub(*a)).max();
    // The commits whose trailers name each node's seq.
    let mut by_commit: HashMap<Oid, Vec<usize>> = HashMap::new();
    for (i, &(seq, _)) in nodes.iter().enumerate() {
        let from = named.partition_point(|r| r.0 < seq.saturating_sub(widest.unwrap_or(0)));
        for &(_, b, c) in named[from..].iter().take_while(|r| r.0 <= seq) {
            if seq <= b {
                by_commit.entry(c).or_default().push(i);
            }
        }
    }
    let mut oldest: Vec<Option<(i64, Oid)>> = vec![None; nodes.len()];
    // In the order the lines were walked: a tree is most often a delta of
    // the one read before it, still in the cache.
    for (_, _, c) in &walked {
        let Some(of) = by_commit.remove(c) else {
            continue;
        };
        let here = (commits.decoded(*c)?.time, *c);
        let named_files: Vec<&str> = of.iter().map(|&i| nodes[i].1).collect();
        // A tree that cannot be read holds nothing here.
        let Ok(holds) = plan::History::tree_holds(&mut commits, *c, &named_files) else {
            continue;
        };
        for (&i, _) in of.iter().zip(holds).filter(|(_, held)| *held) {
            if oldest[i].is_none_or(|o| here < o) {
                oldest[i] = Some(here);
            }
        }
    }
    let unnamed: Vec<usize> = (0..nodes.len()).filter(|&i| oldest[i].is_none()).collect();
    if !unnamed.is_empty() {
        let files: Vec<&str> = unnamed.iter().map(|&i| nodes[i].1).collect();
        let adders = Planner::new(&mut commits).adders(&files, &tips)?;
        for (i, of) in unnamed.into_iter().zip(adders) {
            for c in of {
                let here = (commits.decoded(c)?.time, c);
                if oldest[i].is_none_or(|o| here < o) {
                    oldest[i] = Some(here);
                }
            }
        }
    }
    Ok(oldest.into_iter().map(|o| o.map(|(_, c)| c)).collect())
}

/// The commits that hold nodes of seq above `after_seq`, by their `Nodes:`
/// trailers: (first seq, last seq, commit). Each first-parent line from HEAD
/// and every branch is walked back only until a commit holds nothing above
/// `after_seq` (seqs grow along a line), so the cost follows what is asked
/// for, not the session's length.
///
/// Commits without trailers (the Python store's) say nothing of their seqs:
/// through a run of them, the walk also stops at a commit whose tree holds
/// none of `files` (a file, once on a line, stays there, as
/// [`plan::Planner::adders`] has it). Their trees are looked at after 8, 16,
/// 32, … such commits in a row: a few tree reads on a whole session, and an
/// incremental read of a Python-store session no longer reads every commit.
fn trailer_ranges_after(
    commits: &mut Commits,
    tips: &[Oid],
    after_seq: i64,
    files: &[&str],
) -> Result<Vec<(u64, u64, Oid)>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for &tip in tips {
        let mut cur = Some(tip);
        let (mut bare, mut look_at) = (0usize, 8usize);
        while let Some(c) = cur {
            if !seen.insert(c) {
                break;
            }
            let d = commits.decoded(c)?;
            let parent = d.parents.first().copied();
            match d.trailers.nodes {
                Some((a, b)) => {
                    if (b as i64) <= after_seq {
                        break;
                    }
                    out.push((a, b, c));
                    (bare, look_at) = (0, 8);
                }
                None => {
                    bare += 1;
                    if bare == look_at {
                        look_at *= 2;
                        // A tree that cannot be read says nothing: walk on.
                        let holds = plan::History::tree_holds(commits, c, files);
                        if holds.is_ok_and(|h| !h.contains(&true)) {
                            break;
                        }
                    }
                }
            }
            cur = parent;
        }
    }
    Ok(out)
}

/// The commit whose `Nodes:` trailer holds node `seq` itself, searched from
/// HEAD and every branch.
pub fn commit_of_seq(repo: &SessionRepo, seq: u64) -> Result<Option<Oid>> {
    let tips = every_tip(repo)?;
    let mut commits = Commits::new(repo);
    let mut p = Planner::new(&mut commits);
    Ok(p.holder_committed(seq, &tips)?.map(|(c, _, _)| c))
}

/// The commit that holds node `seq` (by the `Nodes:` trailers) and its turn,
/// searched from HEAD and every branch; the latest commit of that turn on
/// its line of history.
pub fn commit_holding(repo: &SessionRepo, seq: u64) -> Result<Option<(Oid, u64)>> {
    let tips = every_tip(repo)?;
    let mut commits = Commits::new(repo);
    let mut p = Planner::new(&mut commits);
    Ok(p.locate_committed(seq, &tips)?
        .and_then(|l| match l.commit {
            Parent::Commit(c) => Some((c, l.turn)),
            Parent::Planned(_) => None,
        }))
}

/// The DAG tip each branch ends at, of `tips` (each a seq and its file in
/// `history/`): walking back from the branch's tip commit, the tip of the
/// greatest seq that the first `Nodes:` trailer naming one names; else (the
/// Python store's commits carry no trailer) the tip of the greatest seq past
/// every node a trailer on the line names whose file the branch's tip
/// commit holds. `None` for a branch that ends at no tip (the conversation
/// went on from its last message elsewhere).
pub fn tips_of_branches(
    repo: &SessionRepo,
    branches: &[(String, Oid)],
    tips: &[(u64, &str)],
) -> Result<Vec<Option<usize>>> {
    let mut commits = Commits::new(repo);
    let mut out = Vec::with_capacity(branches.len());
    for (_, tip) in branches {
        let mut found = None;
        // The greatest seq a trailer on the line names.
        let mut named = 0;
        let mut seen = HashSet::new();
        let mut cur = Some(*tip);
        while let Some(c) = cur {
            if !seen.insert(c) {
                break;
            }
            let (parents, t) = plan::History::commit(&mut commits, c)?;
            if let Some((a, b)) = t.nodes {
                named = named.max(b);
                found = (0..tips.len())
                    .filter(|&i| a <= tips[i].0 && tips[i].0 <= b)
                    .max_by_key(|&i| tips[i].0);
                if found.is_some() {
                    break;
                }
            }
            cur = parents.first().copied();
        }
        if found.is_none() {
            let files: Vec<&str> = tips.iter().map(|t| t.1).collect();
            let held = plan::History::tree_holds(&mut commits, *tip, &files).unwrap_or_default();
            found = (0..tips.len())
                .filter(|&i| tips[i].0 > named && held.get(i).copied().unwrap_or(false))
                .max_by_key(|&i| tips[i].0);
        }
        out.push(found);
    }
    Ok(out)
}
