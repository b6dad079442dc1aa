//! The lock policy, in one place. Advisory locks (SPEC §4): `flock(2)`
//! through std's `File::lock` family, so a lock dies with its holder and is
//! never stale. Lock order: registry, then project, then session. Lock files
//! are created on demand and never deleted. Every wait for a lock (ours, or
//! git's `index.lock` and ref locks) backs off the same way ([`Backoff`]);
//! git's locks are waited for [`GIT_LOCK_WAIT`]; a lock file left by a
//! process that died is judged by its age ([`STALE_LOCK`], [`FOREIGN_LOCK`];
//! the files each sweep looks at are in `git::locks`).

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, IoContext, Result};

/// How long a lock git holds (a ref's, or `index.lock` in a session or a
/// project) is waited for before giving up: a live git holds a ref lock
/// for milliseconds, and `index.lock` for one command (a `git commit`
/// whose message editor is open holds it longer: the agent commit is then
/// skipped, `project::git_busy`).
pub const GIT_LOCK_WAIT: Duration = Duration::from_secs(3);

/// Under a session's exclusive lock no git-session holds a lock in the
/// session repository, and git holds a ref lock for milliseconds: a ref
/// lock (or our index.lock) older than this was left by a process that
/// died, and is removed.
pub const STALE_LOCK: Duration = Duration::from_secs(2);

/// A lock of any other kind, or another program's index.lock, is only
/// reported (by `verify`), and only once it is older than this.
pub const FOREIGN_LOCK: Duration = Duration::from_secs(60);

/// How long a turn's end waits for the registry to fold its journal in:
/// the registry is held for milliseconds, but a `delete` waiting on a busy
/// session holds it for as long as it waits.
pub const REGISTRY_FOLD_WAIT: Duration = Duration::from_secs(2);

/// The pauses between tries at a busy lock: 1 ms, doubling up to 50 ms,
/// until the wait has passed.
pub struct Backoff {
    started: Instant,
    wait: Duration,
    pause: Duration,
}

impl Backoff {
    pub fn new(wait: Duration) -> Backoff {
        Backoff {
            started: Instant::now(),
            wait,
            pause: Duration::from_millis(1),
        }
    }

    /// Pause before the next try; `false` (at once) when the wait has
    /// passed.
    pub fn pause(&mut self) -> bool {
        let left = self.wait.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(self.pause.min(left));
        self.pause = (self.pause * 2).min(Duration::from_millis(50));
        true
    }
}

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
    let mut backoff = Backoff::new(if opts.no_wait {
        Duration::ZERO
    } else {
        opts.timeout
    });
    let mut announced = false;
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
        if !announced && opts.announce && !opts.no_wait && !opts.timeout.is_zero() {
            eprintln!(
                "git-session: waiting for the lock on `{}` (up to {}s)",
                path.display(),
                opts.timeout.as_secs_f64()
            );
            announced = true;
        }
        if !backoff.pause() {
            return Err(Error::LockBusy {
                path: path.to_path_buf(),
            });
        }
    }
}
