//! A session's git mirror against its files: the commits HEAD and the
//! branches reach, their trees and trailers, committed nodes byte for byte,
//! meta.json's committed copy, the git index, stale git locks, the figures.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::index::{check_index, pending_files};
use super::lost::{lost_tips, lost_turns};
use super::objects::{corrupt_objects, missing_blobs};
use super::session::{NodeFiles, OnDisk, unparsable_uncommitted};
use super::{BranchStats, Checker, Restore, Severity};
use crate::git::{Oid, SessionRepo};
use crate::layout::SessionDir;
use crate::layout::schema::Node;
use crate::session::{self, Trailers};

/// The git mirror of a session whose files were read: none (a backfill
/// makes it), one that does not open, or what it holds against the files
/// (and, with `objects`, every object the branches reach).
pub(super) fn check_repository(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    read: &NodeFiles,
    objects: bool,
) {
    let id = c.id;
    let NodeFiles { nodes, on_disk, .. } = read;
    // The git mirror
    if !sd.git_dir().is_dir() {
        unparsable_uncommitted(c, sd, on_disk, &HashMap::new());
        c.add(
            "no_repository",
            &sd.dir,
            format!("no git repository; {} nodes are not in git", nodes.len()),
            format!("git-session backfill {id}"),
            !c.out.commit_blocked,
        );
        c.out.needs_commit = true;
        return;
    }
    // No background packing while the objects are checked: packs it is
    // replacing could vanish between listing and reading.
    let _packing = crate::git::hold_maintenance(&sd.dir);
    let repo = match SessionRepo::open(&sd.dir) {
        Ok(r) => r,
        Err(e) => {
            c.add(
                "repo_unreadable",
                &sd.git_dir(),
                e.to_string(),
                "inspect the repository with `git fsck`".into(),
                false,
            );
            return;
        }
    };
    stale_git_locks(sd, c);
    check_mirror(c, sd, &repo, read);
    if objects {
        corrupt_objects(c, sd, &repo);
    }
    for d in crate::sync::divergences(sd, &repo) {
        c.add(
            "diverged",
            &sd.git_dir(),
            format!(
                "this machine and remote `{}` both added turns: `{}/{}` holds {} node(s) that are not here",
                d.remote, d.remote, d.branch, d.missing
            ),
            format!(
                "git-session fetch {} --take local {id} (this machine's conversation stays current) or --take remote {id}; both keep every turn",
                d.remote
            ),
            false,
        );
    }
}

/// The lock files git or git-session left in the session repository
/// ([`crate::git::lock_files`]) that the lock policy calls stale.
fn stale_git_locks(sd: &SessionDir, c: &mut Checker<'_>) {
    for l in crate::git::lock_files(&sd.git_dir())
        .into_iter()
        .filter(|l| l.stale())
    {
        // Ours `--fix` removes; any other (an index.lock that may be git's,
        // `config.lock`, `packed-refs.lock`) is the user's to judge.
        c.add(
            "stale_git_lock",
            &l.path,
            format!("a lock file is {}s old", l.age.as_secs()),
            if l.ours {
                format!("git-session verify --fix {}", c.id)
            } else {
                format!(
                    "if no git process is running in `{}`, remove `{}`",
                    sd.dir.display(),
                    l.path.display()
                )
            },
            l.ours,
        );
        c.out.needs_lock_cleanup |= l.ours;
    }
}

/// Commits reachable from every branch and HEAD.
fn all_commits(
    repo: &SessionRepo,
    c: &mut Checker<'_>,
    git_dir: &Path,
) -> Option<(Vec<crate::git::CommitInfo>, Vec<Oid>)> {
    let head = match repo.head() {
        Ok(h) => h,
        Err(e) => {
            c.add(
                "head_unreadable",
                git_dir,
                e.to_string(),
                "point HEAD at a branch: `git symbolic-ref HEAD refs/heads/main`".into(),
                false,
            );
            return None;
        }
    };
    let branches = repo.branches().unwrap_or_default();
    let mut tips: Vec<Oid> = head.commit.into_iter().collect();
    tips.extend(branches.iter().map(|(_, t)| *t));
    let mut seen = HashSet::new();
    let mut stack = tips.clone();
    let mut out = Vec::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        match repo.commit_info(id) {
            Ok(info) => {
                stack.extend(info.parents.iter().copied());
                // What `git fsck --strict` refuses (`nulInCommit`), and with
                // it a remote that checks what it receives: an older
                // version wrote a node's NUL byte into a subject.
                if info.message.contains('\0') {
                    c.add(
                        "commit_malformed",
                        git_dir,
                        format!(
                            "commit {} holds a NUL byte in its message: git fsck --strict refuses it, and so does a remote that checks what it is pushed",
                            id.to_hex_with_len(10)
                        ),
                        "the session's other refs still push; only a rewrite of its history (a backfill into a new session) removes it".into(),
                        false,
                    );
                }
                out.push(info);
            }
            Err(e) => {
                c.add(
                    "object_missing",
                    git_dir,
                    format!("commit {id} is missing or corrupt: {e}"),
                    "restore the repository from a backup; `git fsck` lists what is lost".into(),
                    false,
                );
            }
        }
    }
    tips.sort();
    tips.dedup();
    Some((out, tips))
}

/// A commit of a turn: it holds nodes (trailers), or it is one of the
/// Python store's `turn:` commits (which carry none).
fn is_turn_commit(info: &crate::git::CommitInfo, t: &Trailers) -> bool {
    let subject = info.message.lines().next().unwrap_or("");
    (t.nodes.is_some() && !subject.starts_with("record:"))
        || subject.starts_with("turn:")
        || subject.starts_with("turn (")
}

/// The mirror against the files: commits, trees, committed nodes,
/// trailers, the figures, uncommitted and lost turns, the git index.
fn check_mirror(c: &mut Checker<'_>, sd: &SessionDir, repo: &SessionRepo, read: &NodeFiles) {
    let NodeFiles {
        nodes,
        groups,
        on_disk,
        files,
        damaged,
    } = read;
    let git_dir = sd.git_dir();
    let Some((commits, tips)) = all_commits(repo, c, &git_dir) else {
        return;
    };
    let by_id: HashMap<Oid, &crate::git::CommitInfo> = commits.iter().map(|i| (i.id, i)).collect();
    let trailers: HashMap<Oid, Trailers> = commits
        .iter()
        .map(|i| (i.id, Trailers::parse(&i.message)))
        .collect();
    let turns = session::turn_numbers(nodes, groups);
    let mut group_of_seq: HashMap<u64, usize> = HashMap::new();
    for (gi, g) in groups.iter().enumerate() {
        for n in &nodes[g.range.clone()] {
            group_of_seq.insert(n.seq.max(0) as u64, gi);
        }
    }

    let heads = newest_commits(sd, repo, &by_id, &tips);
    let (committed, newest_entries) =
        committed_files(c, repo, &git_dir, &by_id, &tips, heads.newest);
    c.out.stats.max_committed_seq = on_disk
        .iter()
        .filter(|d| committed.contains_key(&d.file))
        .map(|d| d.seq)
        .max();
    let index = repo.read_index().ok();
    missing_blobs(c, sd, repo, &newest_entries);
    committed_nodes(c, sd, repo, on_disk, &committed, index.as_ref());
    // A committed node that changed is reported as such; what follows from
    // its new content (its name, the turn numbers) is not reported again.
    let changed: HashSet<PathBuf> = c.out.restore.iter().map(|r| sd.dir.join(&r.rel)).collect();
    c.out
        .findings
        .retain(|f| f.kind != "name_mismatch" || !changed.contains(&f.path));
    // Turn numbers need every node as committed: with one that does not
    // parse or changed, the trailers' turns are not checked.
    let turn_check = (!damaged && changed.is_empty()).then_some((&turns[..], &group_of_seq));
    check_trailers(c, &git_dir, &commits, &trailers, files, turn_check);
    stats(c, repo, &commits, &by_id, &trailers, &turns, &group_of_seq);
    meta_repair(c, &newest_entries);
    unparsable_uncommitted(c, sd, on_disk, &committed);
    let uncommitted: Vec<&OnDisk> = on_disk
        .iter()
        .filter(|d| d.unparsable.is_none() && !committed.contains_key(&d.file))
        .collect();
    let mut wanted = uncommitted.clone();
    wanted.extend(lost_tips(nodes, on_disk, &trailers, &committed));
    let unreached = lost_turns(c, sd, repo, &by_id, &wanted);
    uncommitted_nodes(c, sd, nodes, &uncommitted, &unreached);
    if let Some(index) = index.as_ref() {
        check_index(c, sd, repo, &heads, &newest_entries, index);
    }
    c.out.stats.pending_files = pending_files(sd, &newest_entries, index.as_ref());
}

/// The commits the files are checked against.
#[derive(Clone, Copy)]
pub(super) struct Newest {
    /// The latest snapshot (what the files are compared with).
    pub(super) newest: Option<Oid>,
    /// What the index is to mirror.
    pub(super) index_commit: Option<Oid>,
    pub(super) head_commit: Option<Oid>,
}

/// The latest snapshot, the commit the index is to mirror, and HEAD's.
fn newest_commits(
    sd: &SessionDir,
    repo: &SessionRepo,
    by_id: &HashMap<Oid, &crate::git::CommitInfo>,
    tips: &[Oid],
) -> Newest {
    // The latest snapshot: the commit the index mirrors (the last one
    // written); without a marker, HEAD.
    let snapshot = sd.read_snapshot();
    let oid = |c: Option<String>| c.and_then(|c| Oid::from_hex(c.as_bytes()).ok());
    let marker = oid(snapshot.commit);
    // A commit published while the index was not yet written (a crash
    // between the two): the index is to mirror it.
    let published = oid(snapshot.pending).filter(|p| tips.contains(p));
    let head_commit = repo.head().ok().and_then(|h| h.commit);
    let newest = published
        .or(marker.filter(|c| by_id.contains_key(c)))
        .or(head_commit);
    // The index mirrors the marker's commit even when a moved ref left it
    // unreachable (that is reported, and repaired, as a lost turn).
    let index_commit = published
        .or(marker.filter(|c| repo.commit_info(*c).is_ok()))
        .or(head_commit);
    Newest {
        newest,
        index_commit,
        head_commit,
    }
}

/// Every committed node file and the blob the newest tree holding it has,
/// and the entries of the newest tree (`newest` first, then the other tips).
fn committed_files(
    c: &mut Checker<'_>,
    repo: &SessionRepo,
    git_dir: &Path,
    by_id: &HashMap<Oid, &crate::git::CommitInfo>,
    tips: &[Oid],
    newest: Option<Oid>,
) -> (HashMap<String, Oid>, Vec<TreeFile>) {
    let mut order: Vec<Oid> = newest.into_iter().collect();
    order.extend(tips.iter().copied().filter(|t| Some(*t) != newest));
    // Every committed node file and the blob the newest tree holding it has.
    let mut committed: HashMap<String, Oid> = HashMap::new();
    let mut newest_entries: Vec<(String, u32, Oid)> = Vec::new();
    for tip in &order {
        let Some(info) = by_id.get(tip) else { continue };
        match tree_files(repo, info.tree) {
            Ok(entries) => {
                for (path, _, blob) in &entries {
                    if let Some(f) = path.strip_prefix(crate::layout::paths::HISTORY_PREFIX) {
                        committed.entry(f.to_string()).or_insert(*blob);
                    }
                }
                if Some(*tip) == newest {
                    newest_entries = entries;
                }
            }
            Err(e) => c.add(
                "object_missing",
                git_dir,
                format!(
                    "the tree of {} is missing or corrupt: {e}",
                    tip.to_hex_with_len(8)
                ),
                "restore the repository from a backup; `git fsck` lists what is lost".into(),
                false,
            ),
        }
    }
    (committed, newest_entries)
}

/// Uncommitted nodes that no lost commit holds: records waiting for the
/// next turn, a turn at work, or nodes a backfill commits.
fn uncommitted_nodes(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    nodes: &[Node],
    uncommitted: &[&OnDisk],
    unreached: &HashSet<String>,
) {
    // Record nodes (a relocation) are events, not turns: one not yet in git
    // (written while HEAD was on an older turn) waits for the next turn.
    let record_ids: HashSet<&str> = nodes
        .iter()
        .filter(|n| n.role == "code" && session::is_reserved_name(&n.name))
        .map(|n| n.id.as_str())
        .collect();
    let is_record = |f: &str| {
        crate::layout::paths::parse_node_file_name(f)
            .is_some_and(|(_, _, id)| record_ids.contains(id))
    };
    let mut rest: Vec<&str> = uncommitted
        .iter()
        .map(|d| d.file.as_str())
        .filter(|f| !unreached.contains(*f) && !c.twins.contains(*f))
        .collect();
    let records: Vec<&str> = rest.iter().copied().filter(|f| is_record(f)).collect();
    rest.retain(|f| !is_record(f));
    if !records.is_empty() {
        c.push(
            "record_uncommitted",
            Severity::Note,
            &sd.history(),
            format!(
                "{} record node(s) not in git yet: {}",
                records.len(),
                records.join(", ")
            ),
            "the next `commit-turn` commits them".into(),
            false,
        );
    }
    rest.sort();
    if !rest.is_empty() && c.turn_open {
        // A turn at work: its nodes wait for its own commit, and a commit
        // made here, beside its writer, would race it for git's index.
        c.push(
            "turn_in_progress",
            Severity::Note,
            &sd.history(),
            format!(
                "a turn is open (status `running`): {} node(s) not in git yet",
                rest.len()
            ),
            format!(
                "its commit-turn commits them; if no agent works on it, `git-session recover`, then `git-session backfill {}`",
                c.id
            ),
            false,
        );
    } else if !rest.is_empty() {
        let shown: Vec<&str> = rest.iter().take(5).copied().collect();
        let blocked = c.out.commit_blocked;
        c.add(
            "uncommitted_node",
            &sd.history(),
            format!(
                "{} node(s) not in git: {}{}",
                rest.len(),
                shown.join(", "),
                if rest.len() > 5 { ", …" } else { "" }
            ),
            format!("git-session backfill {}", c.id),
            !blocked,
        );
        c.out.needs_commit = true;
    }
}

fn check_trailers(
    c: &mut Checker<'_>,
    git_dir: &Path,
    commits: &[crate::git::CommitInfo],
    trailers: &HashMap<Oid, Trailers>,
    files: &HashMap<u64, Vec<String>>,
    turn_check: Option<(&[u64], &HashMap<u64, usize>)>,
) {
    let mut covered: BTreeMap<u64, Oid> = BTreeMap::new();
    for info in commits {
        let t = &trailers[&info.id];
        let Some((a, b)) = t.nodes else { continue };
        let short = info.id.to_hex_with_len(8).to_string();
        if t.session.as_deref().is_some_and(|s| s != c.id) {
            c.add(
                "trailer_session_mismatch",
                git_dir,
                format!(
                    "commit {short} says `Session: {}`",
                    t.session.as_deref().unwrap_or("")
                ),
                "the commit belongs to another session; restore the right repository".into(),
                false,
            );
        }
        if !files.contains_key(&a) || !files.contains_key(&b) {
            c.add(
                "trailer_nodes_missing",
                git_dir,
                format!(
                    "commit {short} names nodes {a}..{b}, but seq {} has no node file",
                    if files.contains_key(&a) { b } else { a }
                ),
                "restore the node files from git: `git checkout <commit> -- history/`".into(),
                false,
            );
        }
        for s in files.keys().copied().filter(|s| *s >= a && *s <= b) {
            if let Some(prev) = covered.insert(s, info.id)
                && prev != info.id
            {
                c.add("trailer_overlap", git_dir, format!("node seq {s} is named by commits {} and {short}", prev.to_hex_with_len(8)), "the history was rewritten by hand; re-create the repository with backfill from a copy".into(), false);
            }
        }
        if let (Some(turn), Some((turns, group_of_seq))) = (t.turn, turn_check)
            && let Some(&gi) = group_of_seq.get(&a)
            && turns[gi] != turn
        {
            c.add(
                "trailer_turn_mismatch",
                git_dir,
                format!(
                    "commit {short} says turn {turn}, the DAG says turn {}",
                    turns[gi]
                ),
                "the nodes' predecessors changed after the commit; check the node files".into(),
                false,
            );
        }
    }
}

/// The figures: DAG turns and turn commits per branch and in all.
fn stats(
    c: &mut Checker<'_>,
    repo: &SessionRepo,
    commits: &[crate::git::CommitInfo],
    by_id: &HashMap<Oid, &crate::git::CommitInfo>,
    trailers: &HashMap<Oid, Trailers>,
    turns: &[u64],
    group_of_seq: &HashMap<u64, usize>,
) {
    for info in commits {
        if is_turn_commit(info, &trailers[&info.id]) {
            c.out.stats.turn_commits += 1;
        } else if !info.parents.is_empty() {
            c.out.stats.other_commits += 1;
        }
    }
    for (name, tip) in repo.branches().unwrap_or_default() {
        let mut b = BranchStats {
            name,
            tip: tip.to_string(),
            ..Default::default()
        };
        let mut last_turn: Option<u64> = None;
        let mut cur = by_id.get(&tip).copied();
        while let Some(info) = cur {
            let t = &trailers[&info.id];
            if is_turn_commit(info, t) {
                b.turn_commits += 1;
                if last_turn.is_none()
                    && let Some((a, _)) = t.nodes
                {
                    last_turn = group_of_seq.get(&a).map(|g| turns[*g]);
                }
            } else if !info.parents.is_empty() {
                b.other_commits += 1;
            }
            cur = info.parents.first().and_then(|p| by_id.get(p).copied());
        }
        b.dag_turns = last_turn.unwrap_or(b.turn_commits);
        c.out.stats.branches.push(b);
    }
}

/// Whether `path` holds the bytes of blob `id`: the index's stat data
/// answers for a file whose stat did not change; otherwise it is hashed.
pub(super) fn same_as_blob(
    path: &Path,
    rel: &str,
    id: Oid,
    index: Option<&crate::git::Index>,
) -> Option<Vec<u8>> {
    let md = std::fs::symlink_metadata(path).ok()?;
    let cached = index.and_then(|i| {
        let e = i.entry(rel.as_bytes())?;
        Some(e.id == id && e.stat_matches(&md))
    });
    if cached == Some(true) {
        return None;
    }
    if !md.is_file() && !md.file_type().is_symlink() {
        return Some(Vec::new()); // a FIFO or device is never read
    }
    let data = if md.file_type().is_symlink() {
        std::fs::read_link(path)
            .ok()?
            .as_os_str()
            .as_encoded_bytes()
            .to_vec()
    } else {
        crate::layout::atomic::read(path).ok()?
    };
    (crate::git::blob_id(&data) != id).then_some(data)
}

/// Committed nodes on disk against git: byte-identical, or a finding.
fn committed_nodes(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    on_disk: &[OnDisk],
    committed: &HashMap<String, Oid>,
    index: Option<&crate::git::Index>,
) {
    for d in on_disk {
        let Some(&blob) = committed.get(&d.file) else {
            continue;
        };
        let path = sd.history().join(&d.file);
        let rel = crate::layout::paths::history_entry(&d.file);
        let Some(now) = same_as_blob(&path, &rel, blob, index) else {
            continue;
        };
        let restore = Restore {
            rel: rel.clone(),
            blob,
        };
        let fix = format!("git-session verify --fix {}", c.id);
        if let Some(r) = &d.unparsable {
            c.add(
                "node_damaged",
                &path,
                format!("the committed node no longer parses: {r}"),
                fix,
                true,
            );
            c.out.restore.push(restore);
            continue;
        }
        let was = repo.read_blob(blob).ok().and_then(|b| Node::parse(&b).ok());
        let parsed = Node::parse(&now).ok();
        let restamped = match (&was, &parsed) {
            (Some(was), Some(now)) => {
                let mut a = was.clone();
                a.metadata.clear();
                let mut b = now.clone();
                b.metadata.clear();
                a == b
            }
            _ => false,
        };
        if restamped {
            c.push(
                "node_restamped",
                Severity::Note,
                &path,
                "the node's metadata changed after its turn was committed".into(),
                fix,
                true,
            );
            c.out.restamped = true;
        } else {
            c.add(
                "node_changed",
                &path,
                "the committed node's content changed (node files are immutable)".into(),
                fix,
                true,
            );
            c.out.restore.push(restore);
        }
    }
}

/// A missing or unparsable meta.json is restored from the newest tree.
fn meta_repair(c: &mut Checker<'_>, newest: &[(String, u32, Oid)]) {
    let copy = newest
        .iter()
        .find(|(p, _, _)| p == crate::layout::paths::META);
    let id = c.id.to_string();
    for f in c
        .out
        .findings
        .iter_mut()
        .filter(|f| matches!(f.kind, "meta_missing" | "meta_unparsable"))
    {
        match copy {
            Some(_) => {
                f.fix = format!("git-session verify --fix {id}");
                f.fixable = true;
            }
            None => {
                f.fix = "git has no copy: write a meta.json with the session's `id`".into();
            }
        }
    }
    if let Some((_, _, blob)) = copy
        && c.out
            .findings
            .iter()
            .any(|f| matches!(f.kind, "meta_missing" | "meta_unparsable"))
    {
        c.out.restore.push(Restore {
            rel: crate::layout::paths::META.into(),
            blob: *blob,
        });
    }
}

/// A blob path of a tree: (path, mode, id).
type TreeFile = (String, u32, Oid);

/// Every blob path of a tree: (path, mode, id).
pub(super) fn tree_files(
    repo: &SessionRepo,
    tree: Oid,
) -> crate::error::Result<Vec<(String, u32, Oid)>> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), tree)];
    while let Some((prefix, t)) = stack.pop() {
        for (name, mode, id) in repo.tree_entries(t)? {
            let path = format!("{prefix}{name}");
            if mode == 0o040000 {
                stack.push((format!("{path}/"), id));
            } else {
                out.push((path, mode, id));
            }
        }
    }
    Ok(out)
}
