//! Locks and temp files left in a session repository by a process that
//! died: one policy for all of them.

use std::path::{Path, PathBuf};

use super::SessionRepo;
use super::index::index_lock_is_ours;

/// The one stale-lock policy. Under the session's exclusive lock no
/// git-session holds a lock in the session repository, and git holds a
/// ref lock for milliseconds: a ref lock (or our index.lock) older than
/// this was left by a process that died, and is removed. A lock of any
/// other kind, or another program's index.lock, is only reported, and only
/// once it is older than [`FOREIGN_LOCK`].
pub const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(2);
/// When `verify` reports a lock git-session did not make.
pub const FOREIGN_LOCK: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether the file at `path` was last modified [`STALE_LOCK`] ago or more.
fn is_stale(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age >= STALE_LOCK)
}

/// Our temp files in a project's `.git/` (a large file being streamed into
/// an object: `.gs-tmp-obj…`) that were left by a process that died: the
/// regular files of ours not written to for [`FOREIGN_LOCK`]. No lock of
/// ours covers every writer of a user's repository (git-session of another
/// state dir may be streaming into it), so only a file that stopped
/// growing counts; a stream writes to its file without pause.
pub fn stale_project_temps(git_dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(git_dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.as_encoded_bytes();
            // An index lock's temp file is for `index_lock::recover`.
            name.starts_with(crate::layout::TEMP_PREFIX.as_bytes())
                && !super::index_lock::is_ours(name)
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| e.path())
        .filter(|p| {
            std::fs::symlink_metadata(p)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age >= FOREIGN_LOCK)
        })
        .collect()
}

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
        let git = &self.git_dir;
        std::iter::once(git.join("HEAD.lock"))
            .chain(
                walkdir::WalkDir::new(git.join("refs"))
                    .into_iter()
                    .flatten()
                    .map(|e| e.into_path())
                    .filter(|p| p.extension().is_some_and(|x| x == "lock")),
            )
            .filter(|l| is_stale(l))
            .count()
    }

    /// Our marked index.lock, and stale ref locks ([`STALE_LOCK`]). The
    /// caller holds the session's exclusive lock.
    pub fn clear_stale_locks(&self) {
        let git = &self.git_dir;
        let index_lock = git.join("index.lock");
        if index_lock_is_ours(&index_lock) {
            let _ = std::fs::remove_file(&index_lock);
        }
        let mut ref_locks = vec![git.join("HEAD.lock")];
        for e in walkdir::WalkDir::new(git.join("refs"))
            .into_iter()
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "lock") {
                ref_locks.push(e.into_path());
            }
        }
        for l in ref_locks {
            if is_stale(&l) {
                let _ = std::fs::remove_file(&l);
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
                if e.file_name().as_encoded_bytes().starts_with(b".tmp") && is_stale(&e.path()) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}
