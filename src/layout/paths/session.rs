//! A session directory: the path of every file of a session (SPEC §2).

use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};
use crate::session::SessionError;

use super::*;

/// A session directory: it has a `meta.json` or a `history/` (a session the
/// Python store never gave a repository still counts).
pub fn is_session_dir(p: &Path) -> bool {
    p.join(META).is_file() || p.join(HISTORY).is_dir()
}

/// The snapshot marker in `.git/git-session/snapshot`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub commit: Option<String>,
    pub turns: u64,
    /// A commit about to be published: written before the refs move, cleared
    /// once the index mirrors it. If it is a ref tip at start-up, the index is
    /// behind (a crash between the ref update and the index write).
    pub pending: Option<String>,
    /// The objects the turns wrote since background packing last started
    /// (`mirror::maintain_if_due`): how many (loose or in a bulk pack), and
    /// the loose ones' bytes.
    pub new_objects: u64,
    pub loose_bytes: u64,
}

/// Typed paths inside one session repository (SPEC §2).
#[derive(Debug, Clone)]
pub struct SessionDir {
    pub dir: PathBuf,
}

impl SessionDir {
    pub fn new(dir: PathBuf) -> Self {
        SessionDir { dir }
    }

    /// Refuse a session directory that is a symlink (SPEC §6).
    pub(super) fn checked(dir: PathBuf) -> Result<Self> {
        let md = std::fs::symlink_metadata(&dir).io("inspect the session directory", &dir)?;
        if md.file_type().is_symlink() {
            return Err(SessionError::LinkedDir { dir }.into());
        }
        let sd = SessionDir { dir };
        sd.check_links()?;
        Ok(sd)
    }

    /// Refuse a session whose own directories (`.git/`, `.git/git-session/`,
    /// `.git/objects/`, `.git/refs/`, `history/`, `workdir/`, …) are symlinks (every
    /// write below them would leave the session, SPEC §4), or whose files
    /// there are special files (a FIFO would block with the lock held).
    pub fn check_links(&self) -> Result<()> {
        let git = self.git_dir();
        let private = self.private_dir();
        for p in [
            self.meta(),
            git.clone(),
            self.history(),
            self.dir.join(WORKDIR),
            self.attachments(),
        ] {
            crate::layout::atomic::refuse_unsafe(&p)?;
        }
        // `.git/` and the private dir below it are small: one listing of
        // each gives the kind of every entry, where a look at each name
        // would walk the whole path once a name.
        refuse_unsafe_among(
            &git,
            &[
                private.clone(),
                self.lock_file(),
                // Written below: objects, refs and their logs.
                git.join("objects"),
                git.join("refs"),
                git.join("logs"),
                // Read by every command that opens the repository: a FIFO
                // there would block it, `verify` included.
                git.join("HEAD"),
                git.join("config"),
                git.join("index"),
                git.join("packed-refs"),
            ],
        )?;
        refuse_unsafe_among(
            &private,
            &[
                self.snapshot_file(),
                self.catalog_file(),
                self.catalog_stamp(),
                private.join("baseline.json"),
                self.import_cursor(),
                self.import_uuids(),
                private.join("maintenance.lock"),
            ],
        )?;
        for p in [
            git.join("refs").join("heads"),
            // Appended to by gix's ref transactions (`git::refs`).
            git.join("logs").join("HEAD"),
        ] {
            crate::layout::atomic::refuse_unsafe(&p)?;
        }
        // The branches (and their reflogs), read on every listing of them.
        for dir in [
            git.join("refs").join("heads"),
            git.join("logs").join("refs").join("heads"),
        ] {
            refuse_unsafe_below(&dir)?;
        }
        self.refuse_redirects()
    }

    /// The files that make git look for a repository's refs and objects in
    /// another one: a linked worktree's `commondir` (git would read refs
    /// and objects there, and background packing pack and prune there),
    /// and `objects/info/alternates` (objects read from elsewhere, so a
    /// commit could come to depend on them). A session repository stands
    /// alone; neither is ever written by this tool or the Python store.
    pub fn refuse_redirects(&self) -> Result<()> {
        let git = self.git_dir();
        for (path, what, help) in [
            (
                git.join("commondir"),
                "points the repository at another one for its refs and objects (as a linked worktree's does)",
                "a session repository stands alone: if its history is in that repository, copy it back (`git clone`), then remove the file",
            ),
            (
                git.join("objects").join("info").join("alternates"),
                "makes the repository borrow objects from other repositories",
                "copy the borrowed objects in (`git repack -a -d` in the session), then remove the file",
            ),
        ] {
            if std::fs::symlink_metadata(&path).is_ok() {
                return Err(crate::layout::Refusal::Redirected { path, what, help }.into());
            }
        }
        Ok(())
    }

    /// This directory as session `id`: refused when its meta.json names
    /// another session, or (`strict`, a path from `locations.json`) when it
    /// has no meta.json naming `id`.
    pub(super) fn of(self, id: &str, strict: bool) -> Result<Self> {
        let named = crate::layout::atomic::read(self.meta())
            .ok()
            .and_then(|b| crate::layout::schema::Meta::parse(&b).ok())
            .and_then(|m| m.str("id").map(str::to_owned));
        match named {
            Some(n) if n == id => Ok(self),
            None if !strict => Ok(self),
            Some(named) => Err(SessionError::NamesAnother {
                dir: self.dir,
                id: id.to_string(),
                named,
            }
            .into()),
            None => Err(SessionError::NotNamed {
                dir: self.dir,
                id: id.to_string(),
            }
            .into()),
        }
    }

    pub fn meta(&self) -> PathBuf {
        self.dir.join(META)
    }
    pub fn history(&self) -> PathBuf {
        self.dir.join(HISTORY)
    }
    pub fn git_dir(&self) -> PathBuf {
        self.dir.join(".git")
    }
    /// The per-session advisory lock (never committed, never deleted).
    pub fn lock_file(&self) -> PathBuf {
        self.dir.join(".git").join("git-session.lock")
    }
    /// Our private state inside `.git/`.
    pub fn private_dir(&self) -> PathBuf {
        self.dir.join(".git").join("git-session")
    }
    /// Where `verify --fix` keeps the damaged files it replaced.
    pub fn quarantine_dir(&self) -> PathBuf {
        self.private_dir().join("quarantine")
    }
    /// The commit whose tree the git index mirrors.
    pub fn snapshot_file(&self) -> PathBuf {
        self.private_dir().join("snapshot")
    }
    /// Cached catalog of `history/` (see `layout::history`).
    pub fn catalog_file(&self) -> PathBuf {
        self.private_dir().join("catalog")
    }
    pub fn catalog_stamp(&self) -> PathBuf {
        self.private_dir().join("catalog.stamp")
    }
    /// How far each transcript of an imported session was read (`import`;
    /// not committed: a fresh import elsewhere reads them all).
    pub fn import_cursor(&self) -> PathBuf {
        self.private_dir().join("import.lines")
    }
    /// The records of its transcript an imported session holds, and the
    /// node each leads to (`import`: read instead of the lines before the
    /// cursor).
    pub fn import_uuids(&self) -> PathBuf {
        self.private_dir().join("import.uuids")
    }
    /// meta.json as it stood before an import began writing nodes, with
    /// the transcript it read (`import`; emptied once its commits are
    /// made): what a rerun of an import cut short goes on from.
    pub fn import_base(&self) -> PathBuf {
        self.private_dir().join("import.base")
    }
    /// The turns its transcripts have not closed yet, kept whole outside
    /// `history/` ([`crate::layout::pending`]).
    pub fn import_pending(&self) -> PathBuf {
        self.private_dir().join("import.pending")
    }
    /// Read the snapshot marker: the commit whose tree the index mirrors,
    /// the turns committed since the last background `git gc`, and the
    /// loose objects written since packing last started (five lines).
    pub fn read_snapshot(&self) -> Snapshot {
        let text = crate::layout::atomic::read_to_string(self.snapshot_file()).unwrap_or_default();
        let mut lines = text.lines();
        Snapshot {
            commit: lines
                .next()
                .map(str::trim)
                .filter(|c| c.len() == 40)
                .map(str::to_owned),
            turns: lines
                .next()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
            pending: lines
                .next()
                .map(str::trim)
                .filter(|c| c.len() == 40)
                .map(str::to_owned),
            new_objects: lines
                .next()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
            loose_bytes: lines
                .next()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
        }
    }

    /// Overwrite the snapshot marker in place: no new file per turn. A torn
    /// marker reads as "no commit", which only makes the next commit rebuild
    /// the index from HEAD.
    pub fn write_snapshot(&self, s: &Snapshot) -> Result<()> {
        let path = self.snapshot_file();
        if !self.private_dir().is_dir() {
            std::fs::create_dir_all(self.private_dir()).io("create", self.private_dir())?;
        }
        let text = format!(
            "{}\n{}\n{}\n{}\n{}\n",
            s.commit.as_deref().unwrap_or(""),
            s.turns,
            s.pending.as_deref().unwrap_or(""),
            s.new_objects,
            s.loose_bytes
        );
        crate::layout::atomic::overwrite(&path, text.as_bytes()).io("write", &path)
    }
    pub fn attachments(&self) -> PathBuf {
        self.dir.join(WORKDIR).join(ATTACHMENTS)
    }
    /// Path of a history node file, relative to the session dir, as written here.
    pub fn node_rel(seq: u64, letter: char, id: &str) -> String {
        format!("history/{}", node_file_name(seq, letter, id))
    }
}

/// [`crate::layout::atomic::refuse_unsafe`] for each of `paths`, entries of `dir`
/// (which must not be a link: check it first), from one listing of `dir`:
/// the kind of each entry comes from the listing itself. A `dir` that
/// cannot be listed has each path looked at instead.
pub(super) fn refuse_unsafe_among(dir: &Path, paths: &[PathBuf]) -> Result<()> {
    debug_assert!(paths.iter().all(|p| p.parent() == Some(dir)));
    let one_by_one = || {
        paths
            .iter()
            .try_for_each(|p| crate::layout::atomic::refuse_unsafe(p))
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return one_by_one();
    };
    for e in entries {
        let Ok(e) = e else {
            return one_by_one();
        };
        let name = e.file_name();
        if !paths
            .iter()
            .any(|p| p.file_name() == Some(name.as_os_str()))
        {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_dir() || t.is_file() => {}
            _ => crate::layout::atomic::refuse_unsafe(&e.path())?,
        }
    }
    Ok(())
}

/// [`crate::layout::atomic::refuse_unsafe`] for everything below `dir` (none when it
/// does not exist): the kind of each entry comes from the directory listing
/// itself, so a clean tree costs one listing a directory.
pub(super) fn refuse_unsafe_below(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => refuse_unsafe_below(&e.path())?,
            Ok(t) if t.is_file() => {}
            _ => crate::layout::atomic::refuse_unsafe(&e.path())?,
        }
    }
    Ok(())
}
