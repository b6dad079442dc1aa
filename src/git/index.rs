//! The index, read and written through gix's reader and writer, and its
//! entries edited: stat data from the file system, staged entries applied
//! (for session repos and users' project repos alike).
//!
//! A new index is written to a temp file of ours ([`SessionRepo::prepare_index`])
//! and put in place once the refs have moved ([`SessionRepo::commit_index`]),
//! holding git's `index.lock` only for the rename.

use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

use super::SessionRepo;
use crate::error::{IoContext, Result};
use crate::layout::atomic;

/// What git stores for a working-tree file: its bytes, or a symlink's target.
pub fn read_worktree(path: &Path, md: &std::fs::Metadata) -> Result<Vec<u8>> {
    if md.file_type().is_symlink() {
        Ok(std::fs::read_link(path)
            .io("read the link", path)?
            .as_os_str()
            .as_encoded_bytes()
            .to_vec())
    } else {
        atomic::read(path).io("read", path)
    }
}

/// A file to add or update in the index.
pub struct Staged {
    pub path: Vec<u8>,
    pub id: gix::ObjectId,
    pub(super) mode: gix::index::entry::Mode,
    pub(super) stat: gix::index::entry::Stat,
}

impl Staged {
    /// The file at `path` (relative, `/`-separated) as `md` describes it,
    /// its content being blob `id`.
    pub fn new(path: Vec<u8>, md: &std::fs::Metadata, id: gix::ObjectId) -> Staged {
        Staged {
            path,
            id,
            mode: mode_of(md),
            stat: stat_of(md),
        }
    }
}

/// A repository's index (gix's, behind this type: outside `src/git/` no
/// gix type is named).
pub struct Index(pub(super) gix::index::File);

/// What the index holds for one path.
#[derive(Clone, Copy)]
pub struct IndexEntry {
    pub id: gix::ObjectId,
    mode: gix::index::entry::Mode,
    stat: gix::index::entry::Stat,
}

impl IndexEntry {
    /// Whether the entry's stat data and mode describe the file as it is
    /// (then its content need not be read).
    pub fn matches(&self, md: &std::fs::Metadata) -> bool {
        self.stat == stat_of(md) && self.mode == mode_of(md)
    }

    /// Whether the entry's stat data describes the file as it is.
    pub fn stat_matches(&self, md: &std::fs::Metadata) -> bool {
        self.stat == stat_of(md)
    }

    /// Whether `staged` has this entry's content and mode.
    pub fn same_content(&self, staged: &Staged) -> bool {
        self.id == staged.id && self.mode == staged.mode
    }
}

impl Index {
    /// The entry at `path` (stage 0).
    pub fn entry(&self, path: &[u8]) -> Option<IndexEntry> {
        self.0.entry_by_path(path.as_bstr()).map(|e| IndexEntry {
            id: e.id,
            mode: e.mode,
            stat: e.stat,
        })
    }

    pub fn contains(&self, path: &[u8]) -> bool {
        self.0.entry_by_path(path.as_bstr()).is_some()
    }

    /// Every entry's path and id, in index order.
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], gix::ObjectId)> {
        self.0
            .entries()
            .iter()
            .map(|e| (e.path(&self.0).as_bytes(), e.id))
    }

    /// Add or update `staged` ([`apply`]).
    pub fn apply(&mut self, staged: Vec<Staged>) {
        apply(&mut self.0, staged);
    }

    /// Remove the entries at `paths`.
    pub fn remove(&mut self, paths: &std::collections::HashSet<Vec<u8>>) {
        remove(&mut self.0, paths);
    }
}

pub(super) fn stat_of(md: &std::fs::Metadata) -> gix::index::entry::Stat {
    use std::os::unix::fs::MetadataExt;
    let t = |s: i64, ns: i64| gix::index::entry::stat::Time {
        secs: s as u32,
        nsecs: ns as u32,
    };
    gix::index::entry::Stat {
        mtime: t(md.mtime(), md.mtime_nsec()),
        ctime: t(md.ctime(), md.ctime_nsec()),
        dev: md.dev() as u32,
        ino: md.ino() as u32,
        uid: md.uid(),
        gid: md.gid(),
        size: md.len() as u32,
    }
}

pub(super) fn mode_of(md: &std::fs::Metadata) -> gix::index::entry::Mode {
    use gix::index::entry::Mode;
    use std::os::unix::fs::PermissionsExt;
    if md.file_type().is_symlink() {
        Mode::SYMLINK
    } else if md.permissions().mode() & 0o111 != 0 {
        Mode::FILE_EXECUTABLE
    } else {
        Mode::FILE
    }
}

/// Update existing entries in place (lookups need sorted entries), then push
/// the new ones and sort once.
pub(super) fn apply(index: &mut gix::index::State, staged: Vec<Staged>) {
    let mut new = Vec::new();
    for s in staged {
        match index
            .entry_mut_by_path_and_stage(s.path.as_bstr(), gix::index::entry::Stage::Unconflicted)
        {
            Some(e) => {
                e.id = s.id;
                e.mode = s.mode;
                e.stat = s.stat;
            }
            None => new.push(s),
        }
    }
    if new.is_empty() {
        return;
    }
    for s in new {
        index.dangerously_push_entry(
            s.stat,
            s.id,
            gix::index::entry::Flags::empty(),
            s.mode,
            s.path.as_bstr(),
        );
    }
    index.sort_entries();
}

/// Remove the entries at `paths`.
pub(super) fn remove(index: &mut gix::index::State, paths: &std::collections::HashSet<Vec<u8>>) {
    if !paths.is_empty() {
        index.remove_entries(|_, path, _| paths.contains(path.as_bytes()));
    }
}

/// The new index, written to a temp file of ours and put in place by
/// [`SessionRepo::commit_index`] once the refs have moved.
pub struct PendingIndex {
    tmp: PathBuf,
    index: PathBuf,
}

/// Whether an `index.lock` was left by a git-session process that died (the
/// caller holds the session's exclusive lock, so none is alive): ours is a
/// second name of our prepared index or of the index itself (git's lock is
/// a file of its own), or, from older versions, a file with this mark.
pub fn index_lock_is_ours(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    const OLD_MARK: &[u8] = b"git-session index lock\n";
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.nlink() > 1)
        || atomic::read(path).is_ok_and(|b| b == OLD_MARK)
}

impl SessionRepo {
    pub(super) fn index_path(&self) -> PathBuf {
        self.git_dir.join("index")
    }

    /// Read the index (an empty one when there is none).
    pub fn read_index(&self) -> Result<Index> {
        gix::index::File::at_or_default(
            self.index_path(),
            gix::hash::Kind::Sha1,
            true,
            Default::default(),
        )
        .map(Index)
        .map_err(|e| self.err("read the index", e))
    }

    /// An index that mirrors `tree`, with empty stat data (every file is
    /// re-hashed once by the next sweep).
    pub fn index_from_tree(&self, tree: gix::ObjectId) -> Result<Index> {
        self.repo()?
            .index_from_tree(&tree)
            .map(Index)
            .map_err(|e| self.err("build the index from a tree", e))
    }

    /// Write the index (through [`Self::prepare_index`] and
    /// [`Self::commit_index`], so that a crash never leaves a lock of git's).
    pub fn write_index(&self, index: &mut Index) -> Result<()> {
        let pending = self.prepare_index(index)?;
        self.commit_index(pending)
    }

    /// Write `index` with gix's writer (no trailing hash: the pinned
    /// `index.skipHash`) to a temp file of ours in `.git/`;
    /// [`Self::commit_index`] puts it in place once the refs have moved.
    pub fn prepare_index(&self, index: &mut Index) -> Result<PendingIndex> {
        let index = &mut index.0;
        // A tree cache would be written stale (gitoxide#2421).
        index.remove_tree();
        index.remove_resolve_undo();
        let opts = gix::index::write::Options {
            skip_hash: true,
            ..Default::default()
        };
        let mut bytes = Vec::with_capacity(index.entries().len() * 96 + 64);
        index
            .write_to(&mut bytes, opts)
            .map_err(|e| self.err("write the index", e))?;
        let pending = PendingIndex {
            tmp: crate::layout::temp_path(&self.git_dir, "index"),
            index: self.index_path(),
        };
        let written = std::fs::write(&pending.tmp, &bytes).io("write", &pending.tmp);
        if let Err(e) = written {
            let _ = std::fs::remove_file(&pending.tmp);
            return Err(e);
        }
        Ok(pending)
    }

    /// Put a prepared index in place, holding git's `index.lock` for just the
    /// rename (git busy means back off; its lock is never deleted).
    ///
    /// The lock is a hard link to the prepared file itself (taken with
    /// `link`, which fails like O_EXCL when git holds it), and the prepared
    /// file is then renamed over the index: no extra file is created, and a
    /// kill at any moment leaves either no lock or one that shares its inode
    /// with our temp file or with the index ([`index_lock_is_ours`]).
    pub fn commit_index(&self, pending: PendingIndex) -> Result<()> {
        let lock = pending.index.with_extension("lock");
        let mut attempts = 0;
        let taken = loop {
            match std::fs::hard_link(&pending.tmp, &lock) {
                Ok(()) => break Ok(()),
                Err(e)
                    if e.kind() == std::io::ErrorKind::AlreadyExists
                        && index_lock_is_ours(&lock) =>
                {
                    let _ = std::fs::remove_file(&lock);
                }
                // git's own lock: git is busy; back off, never delete it.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 250 => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = taken {
            let _ = std::fs::remove_file(&pending.tmp);
            return Err(e).io(
                "take git's index lock (is git running in the session?)",
                &lock,
            );
        }
        atomic::crash_point("index-locked");
        let renamed = std::fs::rename(&pending.tmp, &pending.index).io("replace", &pending.index);
        atomic::crash_point("index-replaced");
        let _ = std::fs::remove_file(&lock);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&pending.tmp);
        }
        renamed
    }

    /// Drop a prepared index (the commit did not happen).
    pub fn abandon_index(&self, pending: PendingIndex) {
        let _ = std::fs::remove_file(&pending.tmp);
    }
}
