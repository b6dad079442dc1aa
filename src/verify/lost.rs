//! Turns that only commits no branch reaches hold (a deleted or moved
//! ref), and the ref that gets each back under the name it was made with.

use std::collections::{HashMap, HashSet};

use super::session::OnDisk;
use super::{Checker, LostTip};
use crate::git::{Oid, SessionRepo};
use crate::layout::SessionDir;
use crate::layout::history::Catalog;
use crate::layout::schema::Node;
use crate::session::{self, Trailers};

/// Committed node files that are a DAG tip no turn commit names: what to
/// look for in commits no branch reaches, besides the uncommitted nodes.
pub(super) fn lost_tips<'a>(
    nodes: &[Node],
    on_disk: &'a [OnDisk],
    trailers: &HashMap<Oid, Trailers>,
    committed: &HashMap<String, Oid>,
) -> Vec<&'a OnDisk> {
    // A branch deleted after the conversation went on elsewhere: its nodes
    // are in the trees of later commits on other branches (a tree holds the
    // whole session), but its DAG tip is in no turn commit a branch reaches
    // (no `Nodes:` trailer of one names it). Tips past every trailer (turns
    // the Python store committed last, which carry none) are not looked at.
    let last_named = trailers
        .values()
        .filter_map(|t| t.nodes.map(|(_, b)| b))
        .max();
    let named = |seq: u64| trailers.values().any(|t| t.holds_seq(seq));
    crate::view::Dag::new(nodes)
        .tips()
        .into_iter()
        .map(|n| n.seq.max(0) as u64)
        .filter(|&seq| last_named.is_some_and(|last| seq < last) && !named(seq))
        .filter_map(|seq| {
            on_disk
                .iter()
                .find(|d| d.seq == seq && committed.contains_key(&d.file))
        })
        .collect()
}

/// Uncommitted nodes that a commit no branch reaches holds: a deleted or
/// moved ref. Returns the files such commits hold.
pub(super) fn lost_turns(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    reachable: &HashMap<Oid, &crate::git::CommitInfo>,
    uncommitted: &[&OnDisk],
) -> HashSet<String> {
    let mut found = HashSet::new();
    if uncommitted.is_empty() {
        return found;
    }
    let wanted: HashSet<&str> = uncommitted.iter().map(|d| d.file.as_str()).collect();
    // Each unreachable commit and the wanted files its tree holds.
    let mut candidates: Vec<(crate::git::CommitInfo, HashSet<String>)> = Vec::new();
    for id in repo.every_commit().unwrap_or_default() {
        if reachable.contains_key(&id) {
            continue;
        }
        let Ok(info) = repo.commit_info(id) else {
            continue;
        };
        let t = Trailers::parse(&info.message);
        if t.session.as_deref().is_some_and(|s| s != c.id) {
            continue;
        }
        let Ok(Some(hist)) = repo.tree_entry(info.tree, "history") else {
            continue;
        };
        let Ok(entries) = repo.tree_entries(hist) else {
            continue;
        };
        let holds: HashSet<String> = entries
            .into_iter()
            .map(|(name, _, _)| name)
            .filter(|n| wanted.contains(n.as_str()))
            .collect();
        if !holds.is_empty() {
            candidates.push((info, holds));
        }
    }
    // Few refs: the commit holding the most of what is still lost first.
    let head = repo.head().ok();
    let branches = repo.branches().unwrap_or_default();
    // Read once: each commit walked below is named from it.
    let catalog = Catalog::read(&sd.history()).ok();
    let owned = owned_commits(repo, &branches, sd, catalog.as_ref());
    let mut used: HashSet<String> = HashSet::new();
    loop {
        let best = candidates
            .iter()
            .enumerate()
            .map(|(i, (info, holds))| {
                (
                    holds.iter().filter(|f| !found.contains(*f)).count(),
                    info.time,
                    i,
                )
            })
            .filter(|(n, _, _)| *n > 0)
            .max();
        let Some((_, _, i)) = best else { break };
        let (info, holds) = &candidates[i];
        found.extend(holds.iter().cloned());
        let lost = restore_ref(
            info,
            repo,
            &owned,
            &branches,
            head.as_ref(),
            &used,
            (sd, catalog.as_ref()),
        );
        used.insert(lost.branch.clone());
        c.add(
            "turn_unreachable",
            &sd.git_dir(),
            format!(
                "{} node(s) are only in commit {} ({}), which no branch reaches",
                holds.len(),
                info.id.to_hex_with_len(8),
                info.message.lines().next().unwrap_or("")
            ),
            format!(
                "git-session verify --fix {} ({} `{}`)",
                c.id,
                if lost.old.is_some() {
                    "fast-forwards"
                } else {
                    "creates"
                },
                lost.branch
            ),
            true,
        );
        c.out.lost.push(lost);
    }
    found
}

/// The commits each branch was made of: from its tip back to the commit
/// that started it (the one its name was made after: [`retry_branch_of`]),
/// or, for `main` (and a branch whose start is not found), to the root.
/// A commit no branch owns is on no branch's own line of history, even when
/// a later branch forked from it reaches it.
fn owned_commits(
    repo: &SessionRepo,
    branches: &[(String, Oid)],
    sd: &SessionDir,
    catalog: Option<&Catalog>,
) -> HashMap<Oid, String> {
    let mut owned: HashMap<Oid, String> = HashMap::new();
    for (name, tip) in branches {
        let mut line = Vec::new();
        let mut started = false;
        let mut cur = Some(*tip);
        while let Some(id) = cur {
            if line.len() > 100_000 || line.contains(&id) {
                break;
            }
            let Ok(info) = repo.commit_info(id) else {
                break;
            };
            line.push(id);
            if name != crate::git::MAIN && retry_branch_of(&info, sd, catalog) == *name {
                started = true;
                break;
            }
            cur = info.parents.first().copied();
        }
        // A retry branch whose start is not found owns its tip alone.
        if name != crate::git::MAIN && !started {
            line.truncate(1);
        }
        for id in line {
            owned.entry(id).or_insert_with(|| name.clone());
        }
    }
    owned
}

/// The ref that brings a lost commit back: the branch it descends from (a
/// moved ref fast-forwards), HEAD's unborn branch (a deleted one), `main`
/// for a lost line that goes back to the root when the session has no
/// `main`, or the retry branch its line of history was created as: named,
/// as the mirror named it, after the commit that forked that line (the
/// oldest on it that no branch owns, [`owned_commits`], or a regenerated
/// turn, which always starts a branch), not after its tip, so that what
/// knows the branch by name finds it again.
fn restore_ref(
    info: &crate::git::CommitInfo,
    repo: &SessionRepo,
    owned: &HashMap<Oid, String>,
    branches: &[(String, Oid)],
    head: Option<&crate::git::Head>,
    used: &HashSet<String>,
    (sd, catalog): (&SessionDir, Option<&Catalog>),
) -> LostTip {
    // Walk back along first parents to the first commit a branch owns; the
    // oldest commit before it forked the line.
    let mut fork = info.clone();
    let mut to_root = false;
    let mut steps = 0;
    loop {
        if Trailers::parse(&fork.message).nodes.is_some()
            && fork
                .message
                .lines()
                .next()
                .is_some_and(|s| s.contains(" (regenerated): "))
        {
            break;
        }
        let Some(id) = fork.parents.first().copied() else {
            to_root = true;
            break;
        };
        if let Some(b) = owned.get(&id) {
            // A branch whose tip it is: moved back (fast-forward it).
            if let Some((name, t)) = branches.iter().find(|(n, t)| n == b && *t == id)
                && !used.contains(name)
            {
                return LostTip {
                    commit: info.id,
                    branch: name.clone(),
                    old: Some(*t),
                };
            }
            break;
        }
        steps += 1;
        if steps > 100_000 {
            break;
        }
        let Ok(older) = repo.commit_info(id) else {
            break;
        };
        fork = older;
    }
    if let Some(h) = head
        && h.commit.is_none()
        && let Some(b) = &h.branch
        && !used.contains(b)
    {
        return LostTip {
            commit: info.id,
            branch: b.clone(),
            old: None,
        };
    }
    // A session has `main`: without it, the lost line from the root is main.
    let main = crate::git::MAIN;
    if to_root && !branches.iter().any(|(b, _)| b == main) && !used.contains(main) {
        return LostTip {
            commit: info.id,
            branch: main.to_string(),
            old: None,
        };
    }
    let base = retry_branch_of(&fork, sd, catalog);
    let mut name = base.clone();
    let mut k = 1;
    while used.contains(&name) || branches.iter().any(|(b, _)| *b == name) {
        k += 1;
        name = format!("{base}-{k}");
    }
    LostTip {
        commit: info.id,
        branch: name,
        old: None,
    }
}

/// The retry branch commit `fork` was the first commit of, named as the
/// mirror names it: [`session::retry_name`] of the nodes its `Nodes:`
/// trailer names (`retry-<its first top-level reply>`, else `retry-<its
/// first node>`), or `retry-<commit id>` when it names none that can be
/// read. (Its tree holds every node committed before it, on any branch: the
/// trailer, not the tree, says which nodes it committed.) `catalog`: the
/// session's, read once by the caller.
fn retry_branch_of(
    fork: &crate::git::CommitInfo,
    sd: &SessionDir,
    catalog: Option<&Catalog>,
) -> String {
    let held = Trailers::parse(&fork.message).nodes;
    let mut nodes: Vec<crate::layout::schema::Node> = match (held, catalog) {
        (Some((a, b)), Some(cat)) => cat
            .entries()
            .filter(|e| a <= e.seq && e.seq <= b)
            .filter_map(|e| crate::layout::history::read_node(&sd.history(), &e).ok())
            .collect(),
        _ => Vec::new(),
    };
    nodes.sort_by_key(|n| n.seq);
    match session::retry_name(&nodes) {
        Some(id) => crate::git::retry_branch(id),
        None => format!("retry-{}", fork.id.to_hex_with_len(12)),
    }
}
