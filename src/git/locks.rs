//! Locks and temp files left in a session repository by a process that
//! died: which files each sweep looks at. How old is stale is the lock
//! policy's (`layout::lock`).

use std::path::{Path, PathBuf};

use super::SessionRepo;
use super::index::index_lock_is_ours;

pub use crate::layout::lock::{FOREIGN_LOCK, STALE_LOCK};

/// How long ago the file at `path` was last modified (none when it is not
/// there).
fn age(path: &Path) -> Option<std::time::Duration> {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(|m| m.elapsed().unwrap_or_default())
}

/// Whether the file at `path` was last modified [`STALE_LOCK`] ago or more.
fn is_stale(path: &Path) -> bool {
    age(path).is_some_and(|age| age >= STALE_LOCK)
}

/// What a lock file in a session repository is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// `index.lock`.
    Index,
    /// `HEAD.lock` or a lock under `refs/`: git holds one for milliseconds.
    Ref,
    /// `config.lock`, `packed-refs.lock`.
    Other,
}

/// A lock file found in a session repository ([`lock_files`]).
#[derive(Debug)]
pub struct LockFile {
    pub path: PathBuf,
    pub kind: LockKind,
    pub age: std::time::Duration,
    /// Left by git-session (an index.lock that shares its inode with our
    /// index or temp file, or carries an older version's mark), or a ref
    /// lock: in a session repository, under the session's lock, no live
    /// process holds one of these past [`STALE_LOCK`].
    pub ours: bool,
}

impl LockFile {
    /// What `verify` reports: ours once [`STALE_LOCK`] old, any other once
    /// [`FOREIGN_LOCK`] old.
    pub fn stale(&self) -> bool {
        self.age >= FOREIGN_LOCK || (self.ours && self.age >= STALE_LOCK)
    }
}

/// Every lock file git or this tool may leave in the session repository
/// `git_dir` (`index.lock`, `HEAD.lock`, `config.lock`, `packed-refs.lock`
/// and any `refs/**.lock`), with its age and whether it is ours: the one
/// scan the sweeps and `verify` judge by the one policy.
pub fn lock_files(git_dir: &Path) -> Vec<LockFile> {
    let named = [
        ("index.lock", LockKind::Index),
        ("HEAD.lock", LockKind::Ref),
        ("config.lock", LockKind::Other),
        ("packed-refs.lock", LockKind::Other),
    ]
    .map(|(n, k)| (git_dir.join(n), k));
    let refs = walkdir::WalkDir::new(git_dir.join("refs"))
        .into_iter()
        .flatten()
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "lock"))
        .map(|p| (p, LockKind::Ref));
    named
        .into_iter()
        .chain(refs)
        .filter_map(|(path, kind)| {
            let age = age(&path)?;
            let ours = match kind {
                LockKind::Index => index_lock_is_ours(&path),
                LockKind::Ref => true,
                LockKind::Other => false,
            };
            Some(LockFile {
                path,
                kind,
                age,
                ours,
            })
        })
        .collect()
}

/// Temp files left in a project's `.git/` by a process that died: ours
/// (`.gs-tmp-…`) in `.git/`, and gix's loose-object temp files
/// (`objects/.tmp…`: a large file being streamed into an object): the
/// regular files not written to for [`FOREIGN_LOCK`]. No lock of ours
/// covers every writer of a user's repository (git-session of another
/// state dir, or another gix program, may be writing), so only a file that
/// stopped growing counts; a stream writes to its file without pause.
pub fn stale_project_temps(git_dir: &Path) -> Vec<PathBuf> {
    let in_dir = |dir: &Path, ours: &dyn Fn(&[u8]) -> bool| -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        rd.flatten()
            .filter(|e| {
                ours(e.file_name().as_encoded_bytes()) && e.file_type().is_ok_and(|t| t.is_file())
            })
            .map(|e| e.path())
            .filter(|p| age(p).is_some_and(|age| age >= FOREIGN_LOCK))
            .collect()
    };
    let mut out = in_dir(git_dir, &|name| {
        // An index lock's temp file is for `index_lock::recover`.
        name.starts_with(crate::layout::TEMP_PREFIX.as_bytes()) && !super::index_lock::is_ours(name)
    });
    out.extend(in_dir(&git_dir.join("objects"), &|name| {
        name.starts_with(GIX_TEMP_PREFIX)
    }));
    out
}

/// The name prefix of gix's temp files in `objects/` (a loose object being
/// written).
const GIX_TEMP_PREFIX: &[u8] = b".tmp";

impl SessionRepo {
    /// Remove temp files of ours left in `.git/` by a crash (the caller holds
    /// the session's exclusive lock, so none is in use), our marked
    /// index.lock, and stale ref locks ([`STALE_LOCK`]).
    pub fn clear_stale_temps(&self) {
        self.clear_stale_locks();
        self.clear_our_temps();
    }

    /// How many ref locks are stale ([`STALE_LOCK`]).
    pub(super) fn stale_ref_locks(&self) -> usize {
        lock_files(&self.git_dir)
            .iter()
            .filter(|l| l.kind == LockKind::Ref && l.age >= STALE_LOCK)
            .count()
    }

    /// Our marked index.lock, and stale ref locks ([`STALE_LOCK`]). The
    /// caller holds the session's exclusive lock.
    pub fn clear_stale_locks(&self) {
        for l in lock_files(&self.git_dir) {
            let gone = match l.kind {
                LockKind::Index => l.ours,
                LockKind::Ref => l.age >= STALE_LOCK,
                LockKind::Other => false,
            };
            if gone {
                let _ = std::fs::remove_file(&l.path);
            }
        }
    }

    /// Our temp files in `.git/`, and gix's in `objects/` (a loose object
    /// being written, `.tmp…`) once they are older than [`STALE_LOCK`].
    fn clear_our_temps(&self) {
        if let Ok(rd) = std::fs::read_dir(&self.git_dir) {
            for e in rd.flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with(crate::layout::TEMP_PREFIX)
                {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        if let Ok(rd) = std::fs::read_dir(self.git_dir.join("objects")) {
            for e in rd.flatten() {
                if e.file_name()
                    .as_encoded_bytes()
                    .starts_with(GIX_TEMP_PREFIX)
                    && is_stale(&e.path())
                {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}
