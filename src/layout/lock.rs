//! Advisory locks (SPEC §4): `flock(2)` through std's `File::lock` family, so a
//! lock dies with its holder and is never stale. Lock order: registry, then
//! project, then session. Lock files are created on demand and never deleted.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, IoContext, Result};

#[derive(Debug, Clone, Copy)]
pub struct LockOptions {
    /// How long to wait for a busy lock.
    pub timeout: Duration,
    /// `--no-wait`: fail at once when busy.
    pub no_wait: bool,
    /// Say "waiting" on stderr (not under `-q`).
    pub announce: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Shared,
    Exclusive,
}

/// A held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct Lock {
    _file: File,
    pub path: PathBuf,
}

/// A session's lock; a session without `.git` is reported as such.
pub fn session(sd: &super::SessionDir, kind: Kind, opts: LockOptions) -> Result<Lock> {
    // The lock file is created if missing: never through a session
    // directory or a `.git` that is a link (out of the state dir).
    super::atomic::refuse_unsafe(&sd.dir)?;
    super::atomic::refuse_unsafe(&sd.git_dir())?;
    if !sd.git_dir().is_dir() {
        return Err(Error::Corrupt {
            path: sd.dir.clone(),
            reason: "the session has no `.git` repository".into(),
            help: Some(
                "restore the session's `.git` directory; its node files are untouched".into(),
            ),
        });
    }
    acquire(&sd.lock_file(), kind, opts)
}

/// A project's lock ([`super::StateDir::project_lock`]), its file made on
/// demand: only for a valid project id, never through a link in the state
/// dir.
pub fn project(state: &super::StateDir, id: &str, kind: Kind, opts: LockOptions) -> Result<Lock> {
    super::ids::project_id(id)?;
    let path = state.project_lock(id);
    state.make_parent_checked(&path)?;
    acquire(&path, kind, opts)
}

pub fn acquire(path: &Path, kind: Kind, opts: LockOptions) -> Result<Lock> {
    let file = super::atomic::no_follow(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(path)
    .io("open the lock file", path)?;
    let try_once = |f: &File| match kind {
        Kind::Shared => f.try_lock_shared(),
        Kind::Exclusive => f.try_lock(),
    };
    let started = Instant::now();
    let mut announced = false;
    let mut pause = Duration::from_millis(1);
    loop {
        match try_once(&file) {
            Ok(()) => {
                return Ok(Lock {
                    _file: file,
                    path: path.to_path_buf(),
                });
            }
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(e).io("lock", path),
        }
        if opts.no_wait || started.elapsed() >= opts.timeout {
            return Err(Error::LockBusy {
                path: path.to_path_buf(),
            });
        }
        if !announced && opts.announce {
            eprintln!(
                "git-session: waiting for the lock on `{}` (up to {}s)",
                path.display(),
                opts.timeout.as_secs_f64()
            );
            announced = true;
        }
        std::thread::sleep(pause.min(opts.timeout.saturating_sub(started.elapsed())));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}
