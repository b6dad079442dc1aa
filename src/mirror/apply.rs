//! The apply of a mirror run: phase 1 reads what is new against the index
//! and plans the commits it becomes ([`super::plan`]); phase 2 writes the
//! objects, the commits, the refs and the index, in an order that a crash
//! can stop anywhere ([`super::recover`] finds where).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::commits::Commits;
use super::plan::{self, Parent, Planned};
use super::recover::{Recovered, recover_index};
use super::scan::{HistoryDiff, Work, modified_history, read_pending, sweep_others};
use super::{CommitOptions, Made};
use crate::error::{IoContext, Result};
use crate::git::{Head, Index, Oid, RefUpdate, SessionRepo, Staged};
use crate::layout::history::{self, Catalog};
use crate::layout::paths::Snapshot;
use crate::layout::schema::Node;
use crate::layout::{SessionDir, atomic};
use crate::session::{self, Trailers};

/// The session's node files, as a plan reads them ([`plan::Nodes`]).
struct NodeFiles<'a> {
    catalog: &'a Catalog,
    dir: &'a Path,
}

impl plan::Nodes for NodeFiles<'_> {
    fn seq_of(&self, id: &str) -> Option<u64> {
        self.catalog.get(id).map(|e| e.seq)
    }

    fn file_of(&self, id: &str) -> Option<String> {
        self.catalog.get(id).map(|e| e.file)
    }

    fn node(&self, id: &str) -> Option<Node> {
        let e = self.catalog.get(id)?;
        history::read_node(self.dir, &e).ok()
    }

    fn turn_start_before(&self, before: u64) -> Option<Node> {
        self.catalog
            .rev_entries()
            .filter(|e| e.seq < before && e.letter == 'u')
            .filter_map(|e| history::read_node(self.dir, &e).ok())
            .find(|n| n.starts_turn())
    }
}

/// The nodes outside `pending` that the conversation already goes on from
/// (a top-level user or assistant node has them as its predecessor), among
/// the predecessors of pending conversational nodes: a further reply or
/// user message from one of them is a fork (a regenerated reply, a reply
/// after a turn that was continued, a retry from inside a turn).
/// Only the conversational files written between the predecessor and the
/// new reply are read: none, when the reply continues the head.
fn answered_before(
    recorded: &NodeFiles,
    pending: &[Node],
    pending_by_id: &HashMap<&str, &Node>,
) -> HashSet<String> {
    let mut out = HashSet::new();
    for n in pending {
        let Some(pred) = session::goes_on_from(n) else {
            continue;
        };
        if pending_by_id.contains_key(pred) || out.contains(pred) {
            continue;
        }
        let Some(p) = recorded.catalog.get(pred) else {
            continue;
        };
        let seq = n.seq.max(0) as u64;
        // Read forward from the predecessor: its successor, if any, mostly
        // comes right after it.
        let mut between: Vec<history::Entry> = recorded
            .catalog
            .rev_entries()
            .take_while(|e| e.seq > p.seq)
            .filter(|e| e.seq < seq && matches!(e.letter, 'a' | 'l' | 'u'))
            .filter(|e| !pending_by_id.contains_key(e.id.as_str()))
            .collect();
        between.reverse();
        let answered = between
            .iter()
            .filter_map(|e| history::read_node(recorded.dir, e).ok())
            .any(|r| session::goes_on_from(&r) == Some(pred));
        if answered {
            out.insert(pred.to_string());
        }
    }
    out
}

/// Write the index, and when it mirrors a commit (`mirrors`), say so in the
/// snapshot marker.
fn write_index_mirroring(
    repo: &mut SessionRepo,
    index: &mut Index,
    sd: &SessionDir,
    mirrors: Option<Oid>,
    snapshot: &Snapshot,
) -> Result<()> {
    repo.write_index(index)?;
    if let Some(c) = mirrors {
        sd.write_snapshot(&Snapshot {
            commit: Some(c.to_string()),
            pending: None,
            ..snapshot.clone()
        })?;
    }
    Ok(())
}

/// Commit everything new in the session directory. Returns the commits made
/// (empty when nothing changed). `before_write` runs once every pending node
/// has parsed and before anything is written (`commit-turn` updates
/// meta.json there, so that a refused commit changes nothing on disk).
pub fn commit_pending(
    sd: &SessionDir,
    session_id: &str,
    opts: &CommitOptions,
    before_write: &mut dyn FnMut(&[Node]) -> Result<()>,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<Made>> {
    crate::out::trace("mirror: start");
    let mut repo = SessionRepo::open(&sd.dir)?;
    crate::out::trace("mirror: config read");
    repo.clear_stale_temps();
    if opts.bulk {
        repo.begin_bulk();
    }
    let head = repo.head()?;
    crate::out::trace("mirror: repo open");
    let snapshot = sd.read_snapshot();
    let history_dir = sd.history();
    let catalog = if opts.list_history {
        Catalog::load_listed(sd)?
    } else {
        Catalog::load(sd)?
    };
    crate::out::trace("mirror: catalog read");

    // Phase 1, read-only: every new node must parse and match its name, or
    // nothing at all is written.
    let Recovered {
        index,
        rebuilt,
        mirrors,
        tips,
        diff,
    } = recover_index(&repo, sd, &head, &snapshot, &catalog, warn)?;
    let HistoryDiff {
        new_files,
        gone,
        committed_seqs,
    } = diff;
    crate::out::trace("mirror: diffed against the index");
    let rescanned = to_rescan(&index, &history_dir, &catalog, opts);
    let (pending, new_data) = read_pending(&history_dir, &new_files, warn)?;
    crate::out::trace("mirror: pending parsed");
    let recorded = NodeFiles {
        catalog: &catalog,
        dir: &history_dir,
    };
    let found = Found {
        pending: &pending,
        new_files: &new_files,
        committed_seqs: &committed_seqs,
        tips: &tips,
    };
    let mut plans = plan_turns(
        &repo,
        &recorded,
        &found,
        head.commit,
        session_id,
        opts,
        warn,
    )?;
    if opts.dry_run {
        plan::land(&mut plans, head.branch.clone(), head.commit);
        return Ok(plans.iter().map(as_planned).collect());
    }
    before_write(&pending)?;
    crate::out::trace("mirror: ready to write");

    // Phase 2: write.
    let mut work = Work::new(index, gone);
    stage(
        &mut repo, sd, &mut work, new_data, rescanned, &new_files, warn,
    )?;
    crate::out::trace("mirror: swept");
    let refreshed = std::mem::take(&mut work.refreshed);
    let refreshes = !refreshed.is_empty();
    work.apply(refreshed);
    if pending.is_empty() && work.others.is_empty() && work.gone.is_empty() {
        if refreshes || rebuilt {
            write_index_mirroring(&mut repo, &mut work.index, sd, mirrors, &snapshot)?;
        }
        if catalog.full_diff {
            history::mark_diffed(sd);
        }
        return Ok(Vec::new());
    }
    if plans.is_empty() && opts.nodes_only {
        return Ok(Vec::new());
    }
    let ((branch, tip), keep_head) = if plans.is_empty() {
        files_only(&repo, &mut plans, &head, &snapshot, session_id, opts)?
    } else {
        ((head.branch.clone(), head.commit), false)
    };
    plan::land(&mut plans, branch, tip);
    let written = write_commits(
        &mut repo,
        &mut work,
        plans,
        tip,
        &opts.metas,
        &opts.attached,
    )?;
    let Some((last_branch, _)) = &written.last else {
        // The one commit planned would have changed nothing.
        write_index_mirroring(&mut repo, &mut work.index, sd, mirrors, &snapshot)?;
        return Ok(written.made);
    };
    crate::out::trace("mirror: commit written");
    let attach_head = Some(last_branch) != head.branch.as_ref() && !keep_head;
    publish(&mut repo, sd, work, &written, attach_head, &snapshot)?;
    if catalog.full_diff {
        history::mark_diffed(sd);
    }
    crate::out::trace("mirror: index written");
    Ok(written.made)
}

/// The committed node files to hash again: with `rescan`, every one whose
/// stat no longer matches the index; and the ones `modified` names.
fn to_rescan(
    index: &Index,
    history_dir: &Path,
    catalog: &Catalog,
    opts: &CommitOptions,
) -> Vec<(String, std::fs::Metadata)> {
    let mut out = if opts.rescan {
        modified_history(index, history_dir, catalog)
    } else {
        Vec::new()
    };
    for f in &opts.modified {
        if !out.iter().any(|(r, _)| r == f)
            && let Ok(md) = std::fs::symlink_metadata(history_dir.join(f))
        {
            out.push((f.clone(), md));
        }
    }
    out
}

/// What phase 1 found new in `history/`.
struct Found<'a> {
    /// The pending nodes, in seq order.
    pending: &'a [Node],
    /// Every new file, with its catalog entry when it is a node's.
    new_files: &'a [(String, Option<history::Entry>)],
    /// Seqs of committed nodes (at least the last one before the pending).
    committed_seqs: &'a [u64],
    /// HEAD's commit and every branch tip.
    tips: &'a [Oid],
}

/// The commits the pending nodes become ([`plan::plan`]): grouped into
/// turns, a further reply to a message that has one forking.
fn plan_turns(
    repo: &SessionRepo,
    recorded: &NodeFiles,
    found: &Found,
    head: Option<Oid>,
    session_id: &str,
    opts: &CommitOptions,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<Planned>> {
    let file_of: HashMap<&str, &str> = found
        .new_files
        .iter()
        .filter_map(|(f, e)| e.as_ref().map(|e| (e.id.as_str(), f.as_str())))
        .collect();
    let pending_by_id: HashMap<&str, &Node> =
        found.pending.iter().map(|n| (n.id.as_str(), n)).collect();
    let answered = answered_before(recorded, found.pending, &pending_by_id);
    let mut groups = session::group_pending(found.pending, &answered);
    if opts.records_alone {
        groups = session::records_alone(found.pending, groups);
    }
    if !opts.split_before.is_empty() {
        groups = session::split_before(found.pending, groups, &opts.split_before);
    }
    let input = plan::Input {
        session_id,
        pending: found.pending,
        groups: &groups,
        file_of: &file_of,
        committed_seqs: found.committed_seqs,
        tips: found.tips,
        head,
        opts,
    };
    plan::plan(&input, &mut Commits::new(repo), recorded, warn)
}

/// A planned commit as `--dry-run` reports it: no commit id yet.
fn as_planned(p: &Planned) -> Made {
    Made {
        commit: String::new(),
        parent: None,
        turn: p.turn,
        branch: p
            .landing
            .as_ref()
            .map(|l| l.branch.clone())
            .unwrap_or_default(),
        new_branch: p.landing.as_ref().is_some_and(|l| l.new),
        first_seq: p.range.map(|r| r.0),
        last_seq: p.range.map(|r| r.1),
        nodes: p.count,
        files_only: p.range.is_none(),
    }
}

/// Stage what phase 1 found: the new `history/` files as blobs, the rest of
/// the session directory against the index ([`sweep_others`]), and the
/// committed node files to hash again. A foreign `history/` file (not a
/// node's name) goes with the last commit.
fn stage(
    repo: &mut SessionRepo,
    sd: &SessionDir,
    work: &mut Work,
    new_data: Vec<(&str, Vec<u8>, std::fs::Metadata)>,
    rescanned: Vec<(String, std::fs::Metadata)>,
    new_files: &[(String, Option<history::Entry>)],
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    for (f, data, md) in new_data {
        let id = repo.write_blob(data)?;
        work.new_history.insert(
            f.to_string(),
            Staged::new(crate::layout::paths::history_entry(f).into_bytes(), &md, id),
        );
    }
    crate::out::trace("mirror: blobs written");
    sweep_others(repo, &sd.dir, work, warn)?;
    let history_dir = sd.history();
    for (f, md) in rescanned {
        let path = history_dir.join(&f);
        let data = crate::layout::schema::read_bounded(&path)?;
        let id = repo.write_blob(data)?;
        let staged = Staged::new(
            crate::layout::paths::history_entry(&f).into_bytes(),
            &md,
            id,
        );
        match work.index.entry(&staged.path) {
            Some(e) if e.id == id => work.refreshed.push(staged),
            _ => work.others.push(staged),
        }
    }
    for (f, _) in new_files.iter().filter(|(_, e)| e.is_none()) {
        if let Some(s) = work.new_history.remove(f) {
            work.others.push(s);
        }
    }
    Ok(())
}

/// Where a run's commits start: a branch (`None`: HEAD detached) and its tip.
type Start = (Option<String>, Option<Oid>);

/// Plan the commit of a change of files only (no node: meta.json,
/// `workdir/`), into `plans` (empty), and say where it starts: HEAD's branch
/// and commit; or, while HEAD is detached (a checkout), the branch of the
/// last commit written (the one the index mirrors), with the view left
/// where the user put it (`true`).
fn files_only(
    repo: &SessionRepo,
    plans: &mut Vec<Planned>,
    head: &Head,
    snapshot: &Snapshot,
    session_id: &str,
    opts: &CommitOptions,
) -> Result<(Start, bool)> {
    let mut start = (head.branch.clone(), head.commit);
    let mut keep_head = false;
    if head.branch.is_none()
        && let Some(snap) = snapshot
            .commit
            .as_deref()
            .and_then(|c| Oid::from_hex(c.as_bytes()).ok())
        && let Some((b, _)) = repo.branches()?.into_iter().find(|(_, t)| *t == snap)
    {
        start = (Some(b), Some(snap));
        keep_head = true;
    }
    let turn = match start.1 {
        Some(t) => Trailers::parse(&repo.commit_info(t)?.message)
            .turn
            .unwrap_or(0),
        None => 0,
    };
    let mut msg = format!(
        "{}\n\nSession: {session_id}\n",
        opts.message
            .as_deref()
            .map(|m| session::cut(&session::one_line(m.lines().next().unwrap_or("")), 72))
            .map(|m| crate::out::terminal_safe(&m).into_owned())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "session: update files".into())
    );
    if turn > 0 {
        msg.push_str(&format!("Turn: {turn}\n"));
    }
    plans.push(Planned {
        parent: start.1.map(Parent::Commit),
        turn,
        msg,
        time: opts.now,
        files: Vec::new(),
        range: None,
        count: 0,
        retry_name: String::new(),
        forks: false,
        landing: None,
    });
    Ok((start, keep_head))
}

/// The commits [`write_commits`] made, and how they move the branches.
struct Written {
    made: Vec<Made>,
    /// Each branch touched: its value before (`None`: created here), its new tip.
    moves: Vec<(String, Option<Oid>, Oid)>,
    /// The branch and id of the last commit made.
    last: Option<(String, Oid)>,
}

/// Write the planned commits in order, from `tip`: each one's tree is the
/// index with its files added, and the last one's takes every other change
/// too. Parents planned in this run are resolved here. A change of files
/// only that leaves the tree as it is makes no commit.
fn write_commits(
    repo: &mut SessionRepo,
    work: &mut Work,
    plans: Vec<Planned>,
    tip: Option<Oid>,
    metas: &[(u64, Vec<u8>)],
    attached: &[(u64, Vec<u8>)],
) -> Result<Written> {
    let mut w = Written {
        made: Vec::new(),
        moves: Vec::new(),
        last: None,
    };
    let mut cur_tip = tip;
    let mut made_ids: Vec<Oid> = Vec::new();
    let last = plans.len() - 1;
    for (pi, p) in plans.into_iter().enumerate() {
        let staged: Vec<Staged> = p
            .files
            .iter()
            .filter_map(|f| work.new_history.remove(f))
            .collect();
        work.apply(staged);
        // The files its nodes name go with them.
        if let Some((first, last_seq)) = p.range {
            let mine: Vec<&[u8]> = attached
                .iter()
                .filter(|(seq, _)| (first..=last_seq).contains(seq))
                .map(|(_, path)| path.as_slice())
                .collect();
            if !mine.is_empty() {
                let (with, rest): (Vec<Staged>, Vec<Staged>) = std::mem::take(&mut work.others)
                    .into_iter()
                    .partition(|s| mine.contains(&s.path.as_slice()));
                work.others = rest;
                work.apply(with);
            }
        }
        // meta.json as it stood after the commit's last node.
        if let Some((_, last_seq)) = p.range
            && let Ok(at) = metas.binary_search_by_key(&last_seq, |(s, _)| *s)
        {
            let id = repo.write_blob(metas[at].1.clone())?;
            work.apply(vec![Staged::unstatted(b"meta.json".to_vec(), id)]);
        }
        if pi == last {
            let rest: Vec<Staged> = work.new_history.drain().map(|(_, s)| s).collect();
            work.apply(rest);
            let others = std::mem::take(&mut work.others);
            work.apply(others);
            work.remove_gone();
        }
        let parent = p.parent.map(|pr| match pr {
            Parent::Commit(id) => id,
            Parent::Planned(i) => made_ids[i],
        });
        let tree = repo.write_tree(&work.index)?;
        crate::out::trace("mirror: tree written");
        if p.range.is_none()
            && let Some(pid) = parent
            && repo.commit_info(pid)?.tree == tree
        {
            continue;
        }
        let parents: Vec<Oid> = parent.into_iter().collect();
        let id = repo.write_commit(tree, &parents, &p.msg, p.time)?;
        let (branch, new_branch) = match &p.landing {
            Some(l) => (l.branch.clone(), l.new),
            None => (format!("retry-{}", id.to_hex_with_len(12)), true),
        };
        match w.moves.iter_mut().find(|(b, _, _)| *b == branch) {
            Some(m) => m.2 = id,
            None => w
                .moves
                .push((branch.clone(), if new_branch { None } else { cur_tip }, id)),
        }
        cur_tip = Some(id);
        made_ids.push(id);
        w.made.push(Made {
            commit: id.to_string(),
            parent: parent.map(|p| p.to_string()),
            turn: p.turn,
            branch: branch.clone(),
            new_branch,
            first_seq: p.range.map(|r| r.0),
            last_seq: p.range.map(|r| r.1),
            nodes: p.count,
            files_only: p.range.is_none(),
        });
        w.last = Some((branch, id));
    }
    Ok(w)
}

/// Publish the commits written: the index is written to `index.lock` while
/// the object writer finishes, then the refs move (compare-and-swap; HEAD
/// attached to the last commit's branch when `attach_head`) and the index
/// follows. From before the refs move until the index mirrors the new tip,
/// the snapshot names that tip as `pending`: a crash between the two is
/// found and the index rebuilt ([`recover_index`]).
fn publish(
    repo: &mut SessionRepo,
    sd: &SessionDir,
    mut work: Work,
    written: &Written,
    attach_head: bool,
    snapshot: &Snapshot,
) -> Result<()> {
    let (branch, tip) = written.last.clone().expect("at least one commit was made");
    let new_index = repo.prepare_index(&mut work.index)?;
    crate::out::trace("mirror: index prepared");
    atomic::crash_point("commit-before-sync");
    if let Err(e) = repo.sync_objects() {
        repo.abandon_index(new_index);
        return Err(e);
    }
    let mut updates: Vec<RefUpdate> = written
        .moves
        .iter()
        .map(|(b, old, new)| match old {
            Some(old) => RefUpdate::Advance {
                branch: b.clone(),
                old: *old,
                new: *new,
                message: "commit: git-session turn".into(),
            },
            None => RefUpdate::Create {
                branch: b.clone(),
                new: *new,
                message: "commit: git-session turn (new branch)".into(),
            },
        })
        .collect();
    if attach_head {
        updates.push(RefUpdate::AttachHead { branch });
    }
    sd.write_snapshot(&Snapshot {
        pending: Some(tip.to_string()),
        ..snapshot.clone()
    })?;
    atomic::crash_point("commit-before-ref");
    if let Err(e) = repo.update_refs(&updates) {
        repo.abandon_index(new_index);
        return Err(e);
    }
    repo.release_packs();
    crate::out::trace("mirror: refs moved");
    atomic::crash_point("commit-before-index");
    repo.commit_index(new_index)?;
    repo.keep_index(work.index);
    std::fs::create_dir_all(sd.private_dir()).io("create", sd.private_dir())?;
    let (objects, bytes) = repo.written_since_packing();
    sd.write_snapshot(&Snapshot {
        commit: Some(tip.to_string()),
        turns: snapshot.turns + written.made.len() as u64,
        pending: None,
        new_objects: snapshot.new_objects + objects,
        loose_bytes: snapshot.loose_bytes + bytes,
    })
}
