//! Locks and temp files left in a session repository by a process that
//! died: which files each sweep looks at. How old is stale is the lock
//! policy's (`layout::lock`).

use std::path::{Path, PathBuf};

use super::SessionRepo;
use super::index::index_lock_is_ours;

pub use crate::layout::lock::{FOREIGN_LOCK, STALE_LOCK};

/// Whether the file at `path` was last modified [`STALE_LOCK`] ago or more.
fn is_stale(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age >= STALE_LOCK)
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
            .filter(|p| {
                std::fs::symlink_metadata(p)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age >= FOREIGN_LOCK)
            })
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
