//! The index a mirror run commits from, recovered when it cannot be
//! trusted: unreadable, or behind a ref tip (a crash between moving the refs
//! and writing the index, or a git command run by hand).

use super::MirrorError;
use super::commits::tips_of;
use super::scan::{HistoryDiff, diff_history};
use crate::error::Result;
use crate::git::{Head, Index, Oid, SessionRepo};
use crate::layout::SessionDir;
use crate::layout::history::Catalog;
use crate::layout::paths::Snapshot;

/// The index a run commits from, and what it learned getting it.
pub(super) struct Recovered {
    pub(super) index: Index,
    /// The index was rebuilt from a commit's tree (unreadable, or behind).
    pub(super) rebuilt: bool,
    /// The commit the index mirrors.
    pub(super) mirrors: Option<Oid>,
    /// HEAD's commit and every branch tip.
    pub(super) tips: Vec<Oid>,
    /// `history/` against the index.
    pub(super) diff: HistoryDiff,
}

/// Read the index, and rebuild it when it cannot be trusted: unreadable,
/// or behind a commit that a crash (between moving the refs and writing
/// the index) or a git command run by hand left at a ref tip.
pub(super) fn recover_index(
    repo: &SessionRepo,
    sd: &SessionDir,
    head: &Head,
    snapshot: &Snapshot,
    catalog: &Catalog,
    warn: &mut dyn FnMut(String),
) -> Result<Recovered> {
    // The index mirrors the commit recorded in `snapshot`; when HEAD moved
    // without us (a crash between the ref update and the index write, or a
    // git command run by hand), rebuild it from HEAD's tree.
    let mut index_rebuilt = false;
    let index = match head.commit {
        Some(c) => match repo.take_index() {
            Ok(i) => i,
            Err(e) => {
                warn(format!(
                    "the git index of `{}` is unreadable ({e}); rebuilt it from HEAD",
                    sd.dir.display()
                ));
                index_rebuilt = true;
                repo.index_from_tree(repo.commit_info(c)?.tree)?
            }
        },
        None => repo.read_index()?,
    };
    let mut index = index;
    crate::out::trace("mirror: index read");
    // history/: by name against the index.
    let mut diff = diff_history(&index, catalog);
    // The index mirrors the snapshot commit, the last one written. After a
    // crash between moving the refs and writing the index, the marker's
    // `pending` commit is a ref tip: the index is behind it. (Without that
    // record, as after a git command run by hand: a tip whose tree already
    // holds a "new" node tells the same.) The tips are HEAD's commit and
    // every branch's; the planner places the pending turns among them.
    let tips = tips_of(repo, head)?;
    let mut went_back_to = None;
    if !index_rebuilt
        && let Some(c) = head.commit
        && let Some(last) = went_back(repo, snapshot, c, &tips)
    {
        went_back_to = Some(c);
        warn(format!(
            "the branch of `{}` is behind commit {}, the last one written (its move was lost, or reset by hand); the turns after it are committed again",
            sd.dir.display(),
            last.to_hex_with_len(8)
        ));
        index = repo.index_from_tree(repo.commit_info(c)?.tree)?;
        index_rebuilt = true;
        diff = diff_history(&index, catalog);
    }
    let mut behind = snapshot
        .pending
        .as_deref()
        .and_then(|p| Oid::from_hex(p.as_bytes()).ok())
        .filter(|p| tips.contains(p));
    if behind.is_none()
        && !index_rebuilt
        && head.commit.map(|c| c.to_string()) != snapshot.commit
        && let Some(f) = diff
            .new_files
            .iter()
            .find_map(|(f, e)| e.as_ref().map(|_| f))
    {
        for t in &tips {
            if repo
                .tree_entry(
                    repo.commit_info(*t)?.tree,
                    &crate::layout::paths::history_entry(f),
                )?
                .is_some()
            {
                behind = Some(*t);
                break;
            }
        }
    }
    // The commit the index mirrors now.
    let mirrors: Option<Oid> = behind
        .or(went_back_to)
        .or_else(|| {
            snapshot
                .commit
                .as_deref()
                .and_then(|c| Oid::from_hex(c.as_bytes()).ok())
        })
        .or(head.commit);
    if let Some(t) = behind
        && !index_rebuilt
    {
        warn(format!(
            "the git index of `{}` was behind commit {}; rebuilt it",
            sd.dir.display(),
            t.to_hex_with_len(8)
        ));
        index = repo.index_from_tree(repo.commit_info(t)?.tree)?;
        index_rebuilt = true;
        diff = diff_history(&index, catalog);
    }
    // A node under both namings (a rename to one naming cut short, or the
    // Python store's rewrite of a node under its own name): committing the
    // new name would hold the node twice.
    if let Some((f, other)) = diff.new_files.iter().find_map(|(f, e)| {
        e.as_ref()?;
        let other = crate::layout::paths::Naming::other_name(f)?;
        index
            .contains(crate::layout::paths::history_entry(&other).as_bytes())
            .then(|| (f.clone(), other))
    }) {
        let history = sd.history();
        let read = |name: &str| crate::layout::atomic::read(history.join(name)).ok();
        return Err(if read(&f) == read(&other) {
            MirrorError::NodeNamedTwice { file: f, other }
        } else {
            MirrorError::NodeNamedTwiceDiffering {
                file: f,
                other,
                history,
            }
        }
        .into());
    }
    Ok(Recovered {
        index,
        rebuilt: index_rebuilt,
        mirrors,
        tips,
        diff,
    })
}

/// How many first parents below the last commit written a branch that went
/// back is looked for: a lost ref move loses the last turn or two.
const WENT_BACK_TURNS: usize = 16;

/// How many first parents below a tip the last commit written is looked for
/// before it counts as reached by no branch.
const STILL_REACHED_TURNS: usize = 256;

/// The last commit written (the snapshot's), when no branch reaches it any
/// more and HEAD's commit `head` is one of its first parents: the branch
/// went back under the index, which still mirrors that commit. Refs are not
/// synced (their files are renamed into place, as git does), so a power cut
/// can lose a turn's ref move while its objects, nodes and index are on
/// disk; a `git reset --soft` by hand does the same. (A run that died
/// before its refs moved left the marker's `pending`, not its commit: its
/// refs never moved, and nothing is lost.) Any commit that cannot be read
/// on the way counts against the rule.
fn went_back(repo: &SessionRepo, snapshot: &Snapshot, head: Oid, tips: &[Oid]) -> Option<Oid> {
    let last = Oid::from_hex(snapshot.commit.as_deref()?.as_bytes()).ok()?;
    if last == head || tips.contains(&last) {
        return None;
    }
    // HEAD went on past it (another writer's turn on top, a fetch): the
    // usual way the two differ, told in a read or two.
    if first_parent_reaches(repo, head, last, WENT_BACK_TURNS) != Some(false) {
        return None;
    }
    if first_parent_reaches(repo, last, head, WENT_BACK_TURNS) != Some(true) {
        return None;
    }
    // Another writer's turns, or a fetch, put a tip past the last commit
    // written: it is usually a turn or two below.
    let reached = tips
        .iter()
        .any(|t| first_parent_reaches(repo, *t, last, STILL_REACHED_TURNS) != Some(false));
    (!reached).then_some(last)
}

/// Whether `target` is `from` or one of its first `turns` first parents;
/// `None` when a commit on the way cannot be read.
fn first_parent_reaches(repo: &SessionRepo, from: Oid, target: Oid, turns: usize) -> Option<bool> {
    let mut at = from;
    for _ in 0..=turns {
        if at == target {
            return Some(true);
        }
        match repo.commit_info(at).ok()?.parents.first() {
            Some(p) => at = *p,
            None => return Some(false),
        }
    }
    Some(false)
}
