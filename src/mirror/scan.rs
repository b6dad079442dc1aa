//! The session directory against the index: which `history/` files are new
//! or gone (by name: node files are immutable), which other files changed
//! (by stat, then content), and the new node files read and checked.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::git::STREAM_BLOB_BYTES;
use crate::git::{Index, SessionRepo, Staged};
use crate::layout::TEMP_PREFIX;
use crate::layout::history::{self, Catalog};
use crate::layout::paths::{HISTORY, HISTORY_PREFIX, META, is_dotgit};
use crate::layout::schema::Node;

/// The index state we commit from, with the changes still to apply.
pub(super) struct Work {
    pub(super) index: Index,
    /// Paths to drop from the index at the last commit.
    pub(super) gone: HashSet<Vec<u8>>,
    /// Non-history files new or changed, applied at the last commit.
    pub(super) others: Vec<Staged>,
    /// New history files by file name.
    pub(super) new_history: HashMap<String, Staged>,
    /// Unchanged files whose stat data is refreshed.
    pub(super) refreshed: Vec<Staged>,
}

impl Work {
    /// Nothing staged yet; the `history/` paths in `gone` are to be dropped.
    pub(super) fn new(index: Index, gone: Vec<Vec<u8>>) -> Self {
        Work {
            index,
            gone: gone.into_iter().collect(),
            others: Vec::new(),
            new_history: HashMap::new(),
            refreshed: Vec::new(),
        }
    }

    pub(super) fn apply(&mut self, staged: Vec<Staged>) {
        self.index.apply(staged);
    }

    pub(super) fn remove_gone(&mut self) {
        if self.gone.is_empty() {
            return;
        }
        let gone = std::mem::take(&mut self.gone);
        self.index.remove(&gone);
    }
}

/// Walk the session directory besides `history/`: new, changed and removed
/// files against the index (stat first, content only when the stat differs).
pub(super) fn sweep_others(
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
        if name == HISTORY.as_bytes() || name.starts_with(TEMP_PREFIX.as_bytes()) {
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
        // A large file (an agent's tool may write one into `workdir/`) is
        // streamed, never whole in memory.
        let id = if md.is_file() && md.len() > STREAM_BLOB_BYTES && rel != META.as_bytes() {
            match repo.write_blob_streamed(&path, md.len())? {
                Some(id) => id,
                None => {
                    warn(format!(
                        "skipping `{}`: it changed while it was read (the next commit takes it)",
                        path.display()
                    ));
                    continue;
                }
            }
        } else {
            let data = crate::git::index::read_worktree(&path, &md)?;
            // Never commit a meta.json that does not parse (SPEC §2.3: verify
            // restores it from git).
            if rel == META.as_bytes()
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
            repo.write_blob(data)?
        };
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
pub(super) fn modified_history(
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
pub(super) struct HistoryDiff {
    /// New files (node entries, or foreign files with `None`), in seq order.
    pub(super) new_files: Vec<(String, Option<history::Entry>)>,
    /// Index paths whose files are gone.
    pub(super) gone: Vec<Vec<u8>>,
    /// Seqs of committed nodes (at least the last one before the new ones).
    pub(super) committed_seqs: Vec<u64>,
}

/// With a current cached catalog, new nodes are the uncommitted suffix (every
/// commit takes all pending nodes, and a deletion or a foreign write would
/// have invalidated the cache): O(new · log n). After a directory read, a
/// full comparison finds gaps and deletions too.
pub(super) fn diff_history(index: &Index, catalog: &Catalog) -> HistoryDiff {
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

/// The new files of `history/` read (and checked, for node files: each
/// must parse and match its name, or nothing at all is committed): the
/// pending nodes, and every new file's bytes and metadata.
#[allow(clippy::type_complexity)]
pub(super) fn read_pending<'a>(
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
