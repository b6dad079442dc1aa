//! Bring a session's git mirror up to date with its files (SPEC §2.3): every
//! node not yet in git is committed, turn by turn, in seq order, with the
//! parent/branch rule of the DAG. Used by `commit-turn` (and by `backfill`,
//! `verify --fix`).
//!
//! The work grows with what changed, not with the session: `history/` is
//! compared with the index by name (one `readdir`, nodes are immutable), other
//! files by `lstat` against the index's stat data, and only new or changed
//! files are read and hashed. The flat `history/` tree itself is rewritten per
//! commit, as the layout requires.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::git::{Oid, RefUpdate, SessionRepo};
use crate::layout::history::{self, Catalog};
use crate::layout::paths::{Snapshot, is_dotgit};
use crate::layout::schema::Node;
use crate::layout::{SessionDir, TEMP_PREFIX, atomic};
use crate::session::{self, Trailers};

/// Options of one mirror run.
#[derive(Debug, Clone, Default)]
pub struct CommitOptions {
    /// `--message`: replaces the subject text of the last turn.
    pub message: Option<String>,
    pub duration: Option<f64>,
    pub tokens: Option<u64>,
    pub failed: bool,
    /// Time of a commit that holds no node (a metadata-only change).
    pub now: f64,
    /// Plan only: return the turns that would be committed (without commit
    /// ids) and write nothing.
    pub dry_run: bool,
    /// Also compare committed node files by stat and content (node files are
    /// immutable by contract, so a turn does not; `verify --fix` does).
    pub rescan: bool,
    /// Write the objects as packs, not loose files (backfill: many commits).
    pub bulk: bool,
    /// Committed node files rewritten on purpose (a stamp): re-hash them.
    pub modified: Vec<String>,
    /// Each top-level record node a commit of its own
    /// ([`session::records_alone`]; `import`).
    pub records_alone: bool,
}

/// One commit made.
pub type Made = crate::out::records::Commit;

use crate::layout::paths::HISTORY_PREFIX;

use crate::git::{Index, Staged};

mod plan;
use plan::{Parent, Planned, Planner};

/// The index state we commit from, with the changes still to apply.
struct Work {
    index: Index,
    /// Paths to drop from the index at the last commit.
    gone: HashSet<Vec<u8>>,
    /// Non-history files new or changed, applied at the last commit.
    others: Vec<Staged>,
    /// New history files by file name.
    new_history: HashMap<String, Staged>,
    /// Unchanged files whose stat data is refreshed.
    refreshed: Vec<Staged>,
}

impl Work {
    fn apply(&mut self, staged: Vec<Staged>) {
        self.index.apply(staged);
    }

    fn remove_gone(&mut self) {
        if self.gone.is_empty() {
            return;
        }
        let gone = std::mem::take(&mut self.gone);
        self.index.remove(&gone);
    }
}

/// Walk the session directory besides `history/`: new, changed and removed
/// files against the index (stat first, content only when the stat differs).
fn sweep_others(
    repo: &mut SessionRepo,
    dir: &Path,
    work: &mut Work,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    // The root is listed by hand: `.git` and `history/` (compared by name
    // elsewhere) are never opened; walkdir would read and sort them first.
    let mut files: Vec<(std::path::PathBuf, std::fs::Metadata)> = Vec::new();
    let mut roots: Vec<std::fs::DirEntry> = std::fs::read_dir(dir)
        .io("list", dir)?
        .collect::<std::io::Result<_>>()
        .io("list", dir)?;
    roots.sort_by_key(|e| e.file_name());
    for root in roots {
        let name = root.file_name();
        let name = name.as_bytes();
        if name == b"history" || name.starts_with(TEMP_PREFIX.as_bytes()) {
            continue;
        }
        if is_dotgit(name) {
            if name != b".git" {
                warn(dotgit_skipped(&root.path()));
            }
            continue;
        }
        let md = root.metadata().io("inspect", root.path())?;
        if !md.is_dir() {
            if let Some(md) = committable(&root.path(), md, warn) {
                files.push((root.path(), md));
            }
            continue;
        }
        let walker = walkdir::WalkDir::new(root.path())
            .min_depth(1)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                let temp = e.file_name().as_bytes().starts_with(TEMP_PREFIX.as_bytes());
                let dotgit = is_dotgit(e.file_name().as_bytes());
                if dotgit {
                    warn(dotgit_skipped(e.path()));
                }
                let nested = e.file_type().is_dir() && e.path().join(".git").exists();
                if nested {
                    warn(format!(
                        "skipping `{}`: a nested git repository is not part of the session",
                        e.path().display()
                    ));
                }
                !temp && !nested && !dotgit
            });
        if root.path().join(".git").exists() {
            warn(format!(
                "skipping `{}`: a nested git repository is not part of the session",
                root.path().display()
            ));
            continue;
        }
        let mut found = Vec::new();
        for entry in walker {
            let entry = entry
                .map_err(|e| std::io::Error::other(e.to_string()))
                .io("walk", root.path())?;
            if entry.file_type().is_dir() {
                continue;
            }
            let md = entry
                .metadata()
                .map_err(|e| std::io::Error::other(e.to_string()))
                .io("inspect", entry.path())?;
            found.push((entry.into_path(), md));
        }
        // Judged once the walk (which borrows `warn`) is done.
        for (path, md) in found {
            if let Some(md) = committable(&path, md, warn) {
                files.push((path, md));
            }
        }
    }
    for (path, md) in files {
        let rel = path
            .strip_prefix(dir)
            .expect("every path is below the session dir")
            .as_os_str()
            .as_bytes()
            .to_vec();
        seen.insert(rel.clone());
        if work.index.entry(&rel).is_some_and(|e| e.matches(&md)) {
            continue;
        }
        let data = crate::git::index::read_worktree(&path, &md)?;
        // Never commit a meta.json that does not parse (SPEC §2.3: verify
        // restores it from git).
        if rel == crate::layout::paths::META.as_bytes()
            && let Err(reason) = crate::layout::schema::Meta::parse(&data)
        {
            return Err(Error::Corrupt {
                path,
                reason: format!("meta.json does not parse: {reason}"),
                help: Some(
                    "nothing was committed; `git-session verify --fix <session>` restores it from git"
                        .into(),
                ),
            });
        }
        let id = repo.write_blob(data)?;
        let staged = Staged::new(rel, &md, id);
        match work.index.entry(&staged.path) {
            // Same content, new stat data (e.g. after an index rebuild).
            Some(e) if e.same_content(&staged) => work.refreshed.push(staged),
            _ => work.others.push(staged),
        }
    }
    for (p, _) in work.index.entries() {
        if !p.starts_with(HISTORY_PREFIX.as_bytes()) && !seen.contains(p) {
            work.gone.insert(p.to_vec());
        }
    }
    Ok(())
}

fn dotgit_skipped(path: &Path) -> String {
    format!(
        "skipping `{}`: a `.git` is never part of a session",
        path.display()
    )
}

/// A regular file or a symlink is committed; a FIFO, socket or device (an
/// agent's tool can make one in `workdir/`) is skipped with a warning and
/// never opened: reading a FIFO would block with the session locked.
fn committable(
    path: &Path,
    md: std::fs::Metadata,
    warn: &mut dyn FnMut(String),
) -> Option<std::fs::Metadata> {
    if md.is_file() || md.file_type().is_symlink() {
        return Some(md);
    }
    warn(format!(
        "skipping `{}`: not a regular file (a FIFO, socket or device)",
        path.display()
    ));
    None
}

/// Committed node files whose stat no longer matches the index.
fn modified_history(
    index: &Index,
    history_dir: &Path,
    catalog: &Catalog,
) -> Vec<(String, std::fs::Metadata)> {
    catalog
        .entries()
        .filter_map(|e| {
            let entry = index.entry(crate::layout::paths::history_entry(&e.file).as_bytes())?;
            let md = std::fs::symlink_metadata(history_dir.join(&e.file)).ok()?;
            (!entry.stat_matches(&md)).then_some((e.file, md))
        })
        .collect()
}

/// `history/` against the index.
struct HistoryDiff {
    /// New files (node entries, or foreign files with `None`), in seq order.
    new_files: Vec<(String, Option<history::Entry>)>,
    /// Index paths whose files are gone.
    gone: Vec<Vec<u8>>,
    /// Seqs of committed nodes (at least the last one before the new ones).
    committed_seqs: Vec<u64>,
}

/// With a current cached catalog, new nodes are the uncommitted suffix (every
/// commit takes all pending nodes, and a deletion or a foreign write would
/// have invalidated the cache): O(new · log n). After a directory read, a
/// full comparison finds gaps and deletions too.
fn diff_history(index: &Index, catalog: &Catalog) -> HistoryDiff {
    let in_index =
        |file: &str| index.contains(crate::layout::paths::history_entry(file).as_bytes());
    let mut d = HistoryDiff {
        new_files: Vec::new(),
        gone: Vec::new(),
        committed_seqs: Vec::new(),
    };
    for f in &catalog.foreign {
        if !in_index(f) {
            d.new_files.push((f.clone(), None));
        }
    }
    if !catalog.full_diff {
        let mut suffix = Vec::new();
        for e in catalog.rev_entries() {
            if in_index(&e.file) {
                d.committed_seqs.push(e.seq);
                break;
            }
            suffix.push(e);
        }
        d.new_files
            .extend(suffix.into_iter().rev().map(|e| (e.file.clone(), Some(e))));
        return d;
    }
    let committed: HashSet<&[u8]> = index
        .entries()
        .filter_map(|(p, _)| p.strip_prefix(HISTORY_PREFIX.as_bytes()))
        .collect();
    let mut on_disk: HashSet<&str> = HashSet::new();
    for f in &catalog.foreign {
        on_disk.insert(f);
    }
    let entries: Vec<history::Entry> = catalog.entries().collect();
    for e in &entries {
        if committed.contains(e.file.as_bytes()) {
            d.committed_seqs.push(e.seq);
        } else {
            d.new_files.push((e.file.clone(), Some(e.clone())));
        }
    }
    for e in &entries {
        on_disk.insert(&e.file);
    }
    d.gone = committed
        .iter()
        .filter(|f| {
            std::str::from_utf8(f)
                .map(|s| !on_disk.contains(s))
                .unwrap_or(true)
        })
        .map(|f| [HISTORY_PREFIX.as_bytes(), f].concat())
        .collect();
    d.gone.sort();
    d
}

/// The session's commits, as a plan reads them ([`plan::History`]): each
/// read once, with its tree and time for the read layer.
struct Commits<'a> {
    repo: &'a SessionRepo,
    cache: HashMap<Oid, Decoded>,
}

/// What [`Commits`] keeps of a commit.
struct Decoded {
    parents: Vec<Oid>,
    trailers: Trailers,
    tree: Oid,
    time: i64,
}

impl<'a> Commits<'a> {
    fn new(repo: &'a SessionRepo) -> Self {
        Commits {
            repo,
            cache: HashMap::new(),
        }
    }

    fn decoded(&mut self, id: Oid) -> Result<&Decoded> {
        if !self.cache.contains_key(&id) {
            let info = self.repo.commit_info(id)?;
            let trailers = Trailers::parse(&info.message);
            self.cache.insert(
                id,
                Decoded {
                    parents: info.parents,
                    trailers,
                    tree: info.tree,
                    time: info.time,
                },
            );
        }
        Ok(&self.cache[&id])
    }
}

impl plan::History for Commits<'_> {
    fn commit(&mut self, id: Oid) -> Result<(Vec<Oid>, Trailers)> {
        let d = self.decoded(id)?;
        Ok((d.parents.clone(), d.trailers.clone()))
    }

    fn tree_holds(&mut self, id: Oid, files: &[&str]) -> Result<Vec<bool>> {
        let tree = self.decoded(id)?.tree;
        self.repo
            .dir_holds(tree, crate::layout::paths::HISTORY, files)
    }
}

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

/// The nodes outside `pending` that already have a top-level reply, among
/// the predecessors of pending replies: a further reply to one of them is a
/// regenerated reply (a fork). Only the assistant files written between the
/// message and the new reply are read.
fn answered_before(
    history_dir: &Path,
    catalog: &Catalog,
    pending: &[Node],
    pending_by_id: &HashMap<&str, &Node>,
) -> HashSet<String> {
    let mut out = HashSet::new();
    for n in pending.iter().filter(|n| session::is_reply(n)) {
        let pred = n.predecessor.as_deref().expect("a reply has a predecessor");
        if pending_by_id.contains_key(pred) || out.contains(pred) {
            continue;
        }
        let Some(p) = catalog.get(pred) else { continue };
        let seq = n.seq.max(0) as u64;
        let answered = catalog
            .rev_entries()
            .take_while(|e| e.seq > p.seq)
            .filter(|e| e.seq < seq && matches!(e.letter, 'a' | 'l'))
            .filter(|e| !pending_by_id.contains_key(e.id.as_str()))
            .filter_map(|e| history::read_node(history_dir, &e).ok())
            .any(|r| session::is_reply(&r) && r.predecessor.as_deref() == Some(pred));
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
    turns: u64,
) -> Result<()> {
    repo.write_index(index)?;
    if let Some(c) = mirrors {
        sd.write_snapshot(&Snapshot {
            commit: Some(c.to_string()),
            turns,
            pending: None,
        })?;
    }
    Ok(())
}

/// The index a run commits from, and what it learned getting it.
struct Recovered {
    index: Index,
    /// The index was rebuilt from a commit's tree (unreadable, or behind).
    rebuilt: bool,
    /// The commit the index mirrors.
    mirrors: Option<Oid>,
    /// HEAD's commit and every branch tip.
    tips: Vec<Oid>,
    /// `history/` against the index.
    diff: HistoryDiff,
}

/// Read the index, and rebuild it when it cannot be trusted: unreadable,
/// or behind a commit that a crash (between moving the refs and writing
/// the index) or a git command run by hand left at a ref tip.
fn recover_index(
    repo: &SessionRepo,
    sd: &SessionDir,
    head: &crate::git::Head,
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
    let mut tips: Vec<Oid> = head.commit.into_iter().collect();
    for (_, t) in repo.branches()? {
        if !tips.contains(&t) {
            tips.push(t);
        }
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
    Ok(Recovered {
        index,
        rebuilt: index_rebuilt,
        mirrors,
        tips,
        diff,
    })
}

/// The new files of `history/` read (and checked, for node files: each
/// must parse and match its name, or nothing at all is committed): the
/// pending nodes, and every new file's bytes and metadata.
#[allow(clippy::type_complexity)]
fn read_pending<'a>(
    history_dir: &Path,
    new_files: &'a [(String, Option<history::Entry>)],
    warn: &mut dyn FnMut(String),
) -> Result<(Vec<Node>, Vec<(&'a str, Vec<u8>, std::fs::Metadata)>)> {
    let mut pending: Vec<Node> = Vec::new();
    let mut new_data: Vec<(&str, Vec<u8>, std::fs::Metadata)> = Vec::new();
    for (f, entry) in new_files {
        let (f, entry) = (f.as_str(), entry.as_ref());
        let path = history_dir.join(f);
        let md = std::fs::symlink_metadata(&path).io("inspect", &path)?;
        if md.is_dir() {
            warn(format!(
                "skipping directory `{}` inside history/",
                path.display()
            ));
            continue;
        }
        if is_dotgit(f.as_bytes()) {
            warn(dotgit_skipped(&path));
            continue;
        }
        let Some(md) = committable(&path, md, warn) else {
            continue;
        };
        let data = crate::layout::schema::read_bounded(&path)?;
        if let Some(e) = entry {
            let node = Node::parse(&data).map_err(|r| Error::Corrupt {
                path: path.clone(),
                reason: format!("the node does not parse: {r}"),
                help: Some(
                    "nothing was committed; fix or move the file aside, then run `git-session commit-turn` again"
                        .into(),
                ),
            })?;
            if node.id != e.id || node.seq < 0 || node.seq as u64 != e.seq {
                return Err(Error::Corrupt {
                    path,
                    reason: format!(
                        "the file name says seq {} id `{}`, the node says seq {} id `{}`",
                        e.seq, e.id, node.seq, node.id
                    ),
                    help: Some("nothing was committed; rename the file to match its node".into()),
                });
            }
            pending.push(node);
        }
        new_data.push((f, data, md));
    }
    Ok((pending, new_data))
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
    let catalog = Catalog::load(sd)?;
    crate::out::trace("mirror: catalog read");
    let Recovered {
        index,
        rebuilt: index_rebuilt,
        mirrors,
        tips,
        diff,
    } = recover_index(&repo, sd, &head, &snapshot, &catalog, warn)?;
    let mut work = Work {
        index,
        gone: HashSet::new(),
        others: Vec::new(),
        new_history: HashMap::new(),
        refreshed: Vec::new(),
    };
    crate::out::trace("mirror: diffed against the index");
    let mut rescanned: Vec<(String, std::fs::Metadata)> = if opts.rescan {
        modified_history(&work.index, &history_dir, &catalog)
    } else {
        Vec::new()
    };
    for f in &opts.modified {
        if !rescanned.iter().any(|(r, _)| r == f)
            && let Ok(md) = std::fs::symlink_metadata(history_dir.join(f))
        {
            rescanned.push((f.clone(), md));
        }
    }
    let new_files = diff.new_files;
    let gone_history = diff.gone;
    let committed_seqs = diff.committed_seqs;
    crate::out::trace("mirror: diffed against the index");
    // Phase 1, read-only: every new node must parse and match its name, or
    // nothing at all is written.
    let (mut pending, new_data) = read_pending(&history_dir, &new_files, warn)?;
    let file_of: HashMap<&str, &str> = new_files
        .iter()
        .filter_map(|(f, e)| e.as_ref().map(|e| (e.id.as_str(), f.as_str())))
        .collect();
    crate::out::trace("mirror: pending parsed");
    let pending_by_id: HashMap<&str, &Node> = pending.iter().map(|n| (n.id.as_str(), n)).collect();
    let answered = answered_before(&history_dir, &catalog, &pending, &pending_by_id);
    let mut groups = session::group_pending(&pending, &answered);
    if opts.records_alone {
        groups = session::records_alone(&pending, groups);
    }
    let mut cur_branch = head.branch.clone();
    let mut cur_tip = head.commit;
    // Final value of each branch touched, and its value before.
    let mut branch_moves: Vec<(String, Option<Oid>, Oid)> = Vec::new();
    let mut made: Vec<Made> = Vec::new();

    let input = plan::Input {
        session_id,
        pending: &pending,
        groups: &groups,
        file_of: &file_of,
        committed_seqs: &committed_seqs,
        tips: &tips,
        head: cur_tip,
        opts,
    };
    let mut plans = plan::plan(
        &input,
        &mut Commits::new(&repo),
        &NodeFiles {
            catalog: &catalog,
            dir: &history_dir,
        },
        warn,
    )?;
    if opts.dry_run {
        plan::land(&mut plans, head.branch.clone(), head.commit);
        return Ok(plans
            .iter()
            .map(|p| Made {
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
            })
            .collect());
    }
    before_write(&pending)?;
    crate::out::trace("mirror: ready to write");

    // Phase 2: write.
    for (f, data, md) in new_data {
        let id = repo.write_blob(data)?;
        work.new_history.insert(
            f.to_string(),
            Staged::new(crate::layout::paths::history_entry(f).into_bytes(), &md, id),
        );
    }
    pending.sort_by_key(|n| n.seq);

    crate::out::trace("mirror: blobs written");
    sweep_others(&mut repo, &sd.dir, &mut work, warn)?;
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
    crate::out::trace("mirror: swept");
    work.gone.extend(gone_history);
    // Foreign history files (not node names) go with the last commit.
    let foreign: Vec<String> = new_files
        .iter()
        .filter(|(_, e)| e.is_none())
        .map(|(f, _)| f.clone())
        .filter(|f| work.new_history.contains_key(f))
        .collect();
    for f in foreign {
        let s = work.new_history.remove(&f).expect("key listed above");
        work.others.push(s);
    }

    if pending.is_empty() && work.others.is_empty() && work.gone.is_empty() {
        if !work.refreshed.is_empty() || index_rebuilt {
            let refreshed = std::mem::take(&mut work.refreshed);
            work.apply(refreshed);
            write_index_mirroring(&mut repo, &mut work.index, sd, mirrors, snapshot.turns)?;
        }
        if catalog.full_diff {
            history::mark_diffed(sd);
        }
        return Ok(Vec::new());
    }
    let refreshed = std::mem::take(&mut work.refreshed);
    work.apply(refreshed);

    // A change of files only, while HEAD is detached (a checkout): it goes on
    // the branch of the last commit written (the one the index mirrors); the
    // view stays where the user put it.
    let mut keep_head = false;
    if plans.is_empty()
        && head.branch.is_none()
        && let Some(snap) = snapshot
            .commit
            .as_deref()
            .and_then(|c| Oid::from_hex(c.as_bytes()).ok())
        && let Some((b, _)) = repo.branches()?.into_iter().find(|(_, t)| *t == snap)
    {
        cur_branch = Some(b);
        cur_tip = Some(snap);
        keep_head = true;
    }
    if plans.is_empty() {
        // No node: the directory changed otherwise (meta.json, workdir/).
        let turn = match cur_tip {
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
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "session: update files".into())
        );
        if turn > 0 {
            msg.push_str(&format!("Turn: {turn}\n"));
        }
        plans.push(Planned {
            parent: cur_tip.map(Parent::Commit),
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
    }
    plan::land(&mut plans, cur_branch.clone(), cur_tip);

    // Write the commits in order; parents made in this run are resolved here.
    let mut made_ids: Vec<Oid> = Vec::new();
    let last = plans.len() - 1;
    for (pi, p) in plans.into_iter().enumerate() {
        let staged: Vec<Staged> = p
            .files
            .iter()
            .filter_map(|f| work.new_history.remove(f))
            .collect();
        work.apply(staged);
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
        // A change of files only that leaves the tree as it is: no commit.
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
        match branch_moves.iter_mut().find(|(b, _, _)| *b == branch) {
            Some(m) => m.2 = id,
            None => {
                branch_moves.push((branch.clone(), if new_branch { None } else { cur_tip }, id))
            }
        }
        cur_branch = Some(branch.clone());
        cur_tip = Some(id);
        made_ids.push(id);
        made.push(Made {
            commit: id.to_string(),
            parent: parent.map(|p| p.to_string()),
            turn: p.turn,
            branch,
            new_branch,
            first_seq: p.range.map(|r| r.0),
            last_seq: p.range.map(|r| r.1),
            nodes: p.count,
        });
    }

    if made.is_empty() {
        write_index_mirroring(&mut repo, &mut work.index, sd, mirrors, snapshot.turns)?;
        return Ok(made);
    }
    // The index is written to index.lock while the writer thread finishes.
    crate::out::trace("mirror: commit written");
    let new_index = repo.prepare_index(&mut work.index)?;
    crate::out::trace("mirror: index prepared");
    atomic::crash_point("commit-before-sync");
    if let Err(e) = repo.sync_objects() {
        repo.abandon_index(new_index);
        return Err(e);
    }
    let mut updates: Vec<RefUpdate> = branch_moves
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
    if cur_branch != head.branch && !keep_head {
        updates.push(RefUpdate::AttachHead {
            branch: cur_branch
                .clone()
                .expect("a commit always lands on a branch"),
        });
    }
    sd.write_snapshot(&Snapshot {
        pending: cur_tip.map(|t| t.to_string()),
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
    sd.write_snapshot(&Snapshot {
        commit: Some(cur_tip.expect("at least one commit was made").to_string()),
        turns: snapshot.turns + made.len() as u64,
        pending: None,
    })?;
    if catalog.full_diff {
        history::mark_diffed(sd);
    }
    crate::out::trace("mirror: index written");
    Ok(made)
}

/// Turns between two background roll-ups of the turns' loose objects.
const ROLL_UP_EVERY: u64 = 10;
/// Turns between two background `git gc` runs.
const GC_EVERY: u64 = 200;

/// Start background packing when due (SPEC §2.3, `git::maintenance_args`),
/// `committed` being the commits just made: every 10 turns a roll-up of the
/// small packs, every 200 a `git gc`. The snapshot counts the turns since
/// the last `git gc`. Returns `None` when not due (or the previous run is
/// still going), `Some(started)` when due: `false` when there is no git.
pub fn maintain_if_due(sd: &SessionDir, committed: u64) -> Result<Option<bool>> {
    use crate::git::{Maintenance, Spawned};
    let mut snap = sd.read_snapshot();
    let after = snap.turns;
    let before = after.saturating_sub(committed);
    let kind = if after >= GC_EVERY {
        Maintenance::Full
    } else if before / ROLL_UP_EVERY != after / ROLL_UP_EVERY {
        Maintenance::RollUp
    } else {
        return Ok(None);
    };
    // A busy `git gc` is tried again at the next turn.
    let spawned = crate::git::spawn_maintenance(&sd.dir, kind);
    if kind == Maintenance::Full && spawned != Spawned::Busy {
        snap.turns = 0;
        sd.write_snapshot(&snap)?;
    }
    Ok(match spawned {
        Spawned::Started => Some(true),
        Spawned::NoGit => Some(false),
        Spawned::Busy => None,
    })
}

/// HEAD's commit and every branch tip.
fn every_tip(repo: &SessionRepo) -> Result<Vec<Oid>> {
    let head = repo.head()?;
    let mut tips: Vec<Oid> = head.commit.into_iter().collect();
    for (_, t) in repo.branches()? {
        if !tips.contains(&t) {
            tips.push(t);
        }
    }
    Ok(tips)
}

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
