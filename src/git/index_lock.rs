//! git's `index.lock` in a user's project, taken for an agent commit as git
//! takes it (an exclusive create, held from the read of the index to its
//! replacement) but recognisable as ours after a crash, so that the next
//! agent commit finishes or undoes what a killed one left, instead of
//! leaving the user's git refusing to run until the file is removed by hand.
//!
//! This is the protocol of a session's `index.lock` too
//! (`SessionRepo::commit_index`), with one difference: there the session's
//! own lock covers every writer, so the lock is taken only for the rename
//! and no `flock` or commit name is needed to judge what a kill left.
//!
//! The lock is a second name (a hard link) of a temp file of ours in `.git/`
//! (`.gs-tmp-agent-index.<random>`), on which this process holds an `flock`: the
//! link is made with `link(2)`, which fails when `index.lock` exists, as
//! git's `O_EXCL` create does. Once the commit the new index goes with is
//! written, the temp file is renamed to end with that commit's id. What a
//! process that died leaves (no `flock` held on the temp file) is then read
//! as: the `index.lock` that is the same file as the temp file is ours; if
//! the branch points at the commit the temp file names, the index in it is
//! put in place (the commit landed), else it is removed (it did not). On a
//! file system without hard links (FAT, some network mounts) the lock is
//! made as git makes it, and a kill leaves one as git's would.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::ObjectId;

use crate::layout::TEMP_PREFIX;
use crate::layout::lock::Backoff;

/// The label of our temp files that are index locks of a project (after
/// [`TEMP_PREFIX`]; a session's own prepared index is `index`).
const LABEL: &str = "agent-index";

/// The name prefix of those temp files.
fn prefix() -> String {
    format!("{TEMP_PREFIX}{LABEL}.")
}

/// Whether `name` (a file name in `.git/`) is one of our index locks' temp
/// files: the stale-temp sweep leaves them to [`recover`].
pub fn is_ours(name: &[u8]) -> bool {
    name.starts_with(prefix().as_bytes())
}

/// `index.lock`, held.
pub struct IndexLock {
    /// Our temp file that `index.lock` is a second name of; `None` on a
    /// file system without hard links, where `index.lock` is made as git
    /// makes it (a kill then leaves one that is not known for ours).
    tmp: Option<PathBuf>,
    lock: PathBuf,
    index: PathBuf,
    /// The new index is written here: the temp file, or `index.lock`.
    file: File,
    done: bool,
}

/// Why the lock was not taken.
pub enum NotTaken {
    /// git (or another process) held `index.lock` for all of `wait`.
    Busy,
    Io(std::io::Error),
}

impl IndexLock {
    /// Take the `index.lock` of `git_dir`, waiting up to `wait` (with
    /// backoff) while another process holds it; never removes another's.
    pub fn acquire(git_dir: &Path, wait: Duration) -> Result<IndexLock, NotTaken> {
        Self::take(git_dir, wait, true)
    }

    /// [`Self::acquire`]; without `hard_links`, as on a file system that
    /// has none.
    fn take(git_dir: &Path, wait: Duration, hard_links: bool) -> Result<IndexLock, NotTaken> {
        use std::os::unix::fs::OpenOptionsExt;
        let create = |path: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
        };
        let tmp = crate::layout::temp_path(git_dir, LABEL);
        let file = create(&tmp).map_err(NotTaken::Io)?;
        let mut me = IndexLock {
            tmp: Some(tmp),
            lock: git_dir.join("index.lock"),
            index: git_dir.join("index"),
            file,
            done: true, // nothing to undo until the lock is taken
        };
        me.file.lock().map_err(NotTaken::Io)?;
        let mut backoff = Backoff::new(wait);
        loop {
            let taken = match &me.tmp {
                Some(_) if !hard_links => Err(std::io::ErrorKind::Unsupported.into()),
                Some(tmp) => std::fs::hard_link(tmp, &me.lock),
                None => create(&me.lock).map(|f| me.file = f),
            };
            match taken {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if !backoff.pause() {
                        return Err(NotTaken::Busy);
                    }
                }
                // No hard links here (a FAT or network file system): the
                // lock made as git makes it.
                Err(_) if me.tmp.is_some() => {
                    if let Some(tmp) = me.tmp.take() {
                        let _ = std::fs::remove_file(tmp);
                    }
                }
                Err(e) => return Err(NotTaken::Io(e)),
            }
        }
        me.done = false;
        crate::layout::atomic::crash_point("project-index-locked");
        Ok(me)
    }

    /// Write the new index (its whole bytes, `write` given the file).
    pub fn write(
        &mut self,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, &self.file);
        write(&mut out)?;
        out.flush()
    }

    /// Name the commit this index goes with, before the branch moves to it
    /// (what [`recover`] decides by).
    pub fn name_commit(&mut self, commit: ObjectId) -> std::io::Result<()> {
        if let Some(tmp) = &self.tmp {
            let mut named = tmp.clone().into_os_string();
            named.push(format!(".{commit}"));
            std::fs::rename(tmp, &named)?;
            self.tmp = Some(named.into());
        }
        crate::layout::atomic::crash_point("project-before-ref");
        Ok(())
    }

    /// Put the index in place (the branch has moved), as git does: one
    /// rename of `index.lock`.
    pub fn commit(mut self) -> std::io::Result<()> {
        crate::layout::atomic::crash_point("project-before-index");
        std::fs::rename(&self.lock, &self.index)?;
        self.done = true;
        if let Some(tmp) = &self.tmp {
            let _ = std::fs::remove_file(tmp);
        }
        Ok(())
    }

    /// Whether `index.lock` is still the file this lock wrote.
    fn holds_lock(&self) -> bool {
        one_file(self.file.metadata(), std::fs::symlink_metadata(&self.lock))
    }
}

impl Drop for IndexLock {
    /// Not committed: the index stays as it was; `index.lock` goes only
    /// while it is still ours.
    fn drop(&mut self) {
        if !self.done && self.holds_lock() {
            let _ = std::fs::remove_file(&self.lock);
        }
        if let Some(tmp) = &self.tmp {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Whether `a` and `b` are one file (neither followed if a link).
fn same_file(a: &Path, b: &Path) -> bool {
    one_file(std::fs::symlink_metadata(a), std::fs::symlink_metadata(b))
}

/// Whether two looks at files saw one regular file.
fn one_file(a: std::io::Result<std::fs::Metadata>, b: std::io::Result<std::fs::Metadata>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => a.is_file() && b.is_file() && a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// What [`recover`] found and did about one index lock a process left.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovered {
    /// The commit it went with landed: its index was put in place.
    Finished,
    /// It did not: `index.lock` was removed, the index is as it was.
    Undone,
    /// Only our temp file was left (the lock was put in place, or is not
    /// ours any more): removed.
    TempOnly,
}

/// The index locks of ours in `git_dir` whose process died (no `flock` on
/// the temp file): each finished or undone, `branch_tip` telling where the
/// branch points now. With `dry_run`, nothing is changed and what would be
/// done is returned. A lock of a process still running is left alone.
pub fn recover(
    git_dir: &Path,
    branch_tip: Option<ObjectId>,
    dry_run: bool,
) -> Vec<(PathBuf, Recovered)> {
    let Ok(rd) = std::fs::read_dir(git_dir) else {
        return Vec::new();
    };
    let lock = git_dir.join("index.lock");
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name();
        if !is_ours(name.as_encoded_bytes()) || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let tmp = e.path();
        let Ok(f) =
            crate::layout::atomic::no_follow(std::fs::OpenOptions::new().read(true)).open(&tmp)
        else {
            continue;
        };
        if f.try_lock().is_err() {
            continue; // its process is running
        }
        // `.gs-tmp-agent-index.<random>.<commit>` once the commit was named.
        let named = name
            .to_string_lossy()
            .rsplit('.')
            .next()
            .and_then(|hex| ObjectId::from_hex(hex.as_bytes()).ok());
        let what = if !same_file(&tmp, &lock) {
            Recovered::TempOnly
        } else if named.is_some() && named == branch_tip {
            Recovered::Finished
        } else {
            Recovered::Undone
        };
        if !dry_run {
            match what {
                Recovered::Finished => {
                    let _ = std::fs::rename(&lock, git_dir.join("index"));
                }
                Recovered::Undone => {
                    let _ = std::fs::remove_file(&lock);
                }
                Recovered::TempOnly => {}
            }
            let _ = std::fs::remove_file(&tmp);
        }
        out.push((tmp, what));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// With and without hard links: the lock is taken only when free,
    /// written and put in place, or dropped leaving the index as it was.
    #[test]
    fn the_lock_is_taken_written_put_in_place_or_dropped() {
        for links in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let git = dir.path();
            std::fs::write(git.join("index"), b"old").unwrap();
            // Held by git: busy, and git's lock left alone.
            std::fs::write(git.join("index.lock"), b"git's").unwrap();
            let busy = IndexLock::take(git, Duration::from_millis(30), links);
            assert!(matches!(busy, Err(NotTaken::Busy)), "{links}");
            assert_eq!(names(git), ["index", "index.lock"], "{links}");
            std::fs::remove_file(git.join("index.lock")).unwrap();
            // Dropped: the index as it was, nothing of ours left.
            let mut l = IndexLock::take(git, Duration::ZERO, links).ok().unwrap();
            l.write(|o| o.write_all(b"new")).unwrap();
            drop(l);
            assert_eq!(names(git), ["index"], "{links}");
            assert_eq!(std::fs::read(git.join("index")).unwrap(), b"old");
            // Committed: the new index in place.
            let mut l = IndexLock::take(git, Duration::ZERO, links).ok().unwrap();
            assert!(git.join("index.lock").exists());
            l.write(|o| o.write_all(b"new")).unwrap();
            l.name_commit(ObjectId::null(gix::hash::Kind::Sha1))
                .unwrap();
            l.commit().unwrap();
            assert_eq!(names(git), ["index"], "{links}");
            assert_eq!(std::fs::read(git.join("index")).unwrap(), b"new");
        }
    }

    /// What a dead process left is finished when the branch is at the
    /// commit it names, else undone; a live one is left alone.
    #[test]
    fn a_dead_processs_lock_is_finished_or_undone_a_live_ones_left() {
        let commit = ObjectId::from_hex(b"1111111111111111111111111111111111111111").unwrap();
        let other = ObjectId::from_hex(b"2222222222222222222222222222222222222222").unwrap();
        for (tip, want, index) in [
            (Some(commit), Recovered::Finished, &b"new"[..]),
            (Some(other), Recovered::Undone, &b"old"[..]),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let git = dir.path();
            std::fs::write(git.join("index"), b"old").unwrap();
            let mut l = IndexLock::acquire(git, Duration::ZERO).ok().unwrap();
            l.write(|o| o.write_all(b"new")).unwrap();
            l.name_commit(commit).unwrap();
            // Alive: left alone, even by a run that would act.
            assert!(recover(git, tip, false).is_empty());
            assert!(git.join("index.lock").exists());
            // Dead: as a kill leaves it (no Drop, the flock released).
            let tmp = l.tmp.clone().unwrap();
            drop(std::mem::replace(
                &mut l.file,
                File::open(git.join("index")).unwrap(),
            ));
            std::mem::forget(l);
            let found = recover(git, tip, true);
            assert_eq!(found, [(tmp.clone(), want)]);
            assert!(git.join("index.lock").exists(), "a dry run changes nothing");
            recover(git, tip, false);
            assert_eq!(names(git), ["index"]);
            assert_eq!(std::fs::read(git.join("index")).unwrap(), index);
        }
    }
}
