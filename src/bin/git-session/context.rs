//! `Ctx`: what every command gets — the state dir, the printer, the lock
//! options — built from the global flags.

use std::time::Duration;

use crate::cli::{Color, GlobalArgs};
use git_session::error::{Result, Usage};
use git_session::layout::StateDir;
use git_session::layout::lock::{self, LockOptions};
use git_session::out::{Printer, style};

/// The locks [`Ctx::lock_project_and_session`] took, held until dropped,
/// and what it read under them: the session's meta.json and the project
/// it is bound to (with or without auto-commit).
pub struct SessionLocks {
    _project: Option<lock::Lock>,
    _session: lock::Lock,
    pub meta: git_session::layout::schema::Meta,
    pub project: Option<git_session::layout::projects::Project>,
}

/// What every command gets.
pub struct Ctx {
    pub state: StateDir,
    pub out: Printer,
    pub locks: LockOptions,
}

/// The lock waits the global flags ask for (`--lock-timeout` checked by
/// [`Ctx::new`]).
pub fn lock_options(g: &GlobalArgs) -> LockOptions {
    LockOptions {
        timeout: Duration::from_secs_f64(g.lock_timeout.max(0.0)),
        no_wait: g.no_wait,
        announce: !g.quiet,
    }
}

/// Whether what a command prints is coloured: `--color`, the environment
/// (`NO_COLOR`, `CLICOLOR_FORCE`) and whether stdout is a terminal, by
/// [`style::wanted`]'s rule.
fn color(g: &GlobalArgs) -> bool {
    use std::io::IsTerminal;
    let choice = match g.color {
        Color::Auto => style::Choice::Auto,
        Color::Always => style::Choice::Always,
        Color::Never => style::Choice::Never,
    };
    style::wanted(
        choice,
        g.json,
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("CLICOLOR_FORCE").as_deref(),
    )
}

impl Ctx {
    pub fn new(g: &GlobalArgs) -> Result<Ctx> {
        if !(g.lock_timeout.is_finite() && g.lock_timeout >= 0.0) {
            return Err(Usage::LockTimeout {
                value: g.lock_timeout,
            }
            .into());
        }
        Ok(Ctx {
            state: StateDir::resolve(g.state_dir.as_deref())?,
            out: Printer {
                json: g.json,
                quiet: g.quiet,
                silent: false,
                color: color(g),
            },
            locks: lock_options(g),
        })
    }

    /// The same context with output silenced (for commands run by commands).
    pub fn silent(&self) -> Ctx {
        Ctx {
            state: self.state.clone(),
            out: Printer {
                silent: true,
                ..self.out
            },
            locks: self.locks,
        }
    }

    /// Take the locks of a command that works in a session's project as
    /// well as in the session (`begin-turn`, `commit-turn`), in the
    /// documented order: the project's (when the session is bound to one
    /// with auto-commit, where agent commits are decided and made), then the
    /// session's, both exclusive. The binding is read before the session's
    /// lock and again under it; one that changed meanwhile has the locks
    /// taken again. What was read under the lock is returned with them.
    pub fn lock_project_and_session(
        &self,
        sd: &git_session::layout::SessionDir,
        session: &str,
    ) -> Result<SessionLocks> {
        use git_session::layout::schema::Meta;
        let auto_commit = |p: &Option<git_session::layout::projects::Project>| {
            p.as_ref().filter(|p| p.auto_commit).map(|p| p.id.clone())
        };
        let mut bound =
            git_session::project::of_session(&self.state, session, &Meta::read(&sd.meta())?)?;
        loop {
            let wanted = auto_commit(&bound);
            let project_lock = match &wanted {
                Some(id) => Some(lock::project(
                    &self.state,
                    id,
                    lock::Kind::Exclusive,
                    self.locks,
                )?),
                None => None,
            };
            let session_lock = self.lock_session(sd, lock::Kind::Exclusive)?;
            let meta = Meta::read(&sd.meta())?;
            bound = git_session::project::of_session(&self.state, session, &meta)?;
            if auto_commit(&bound) == wanted {
                return Ok(SessionLocks {
                    _project: project_lock,
                    _session: session_lock,
                    meta,
                    project: bound,
                });
            }
        }
    }

    /// Take a session's lock; a session without `.git` is reported as such.
    pub fn lock_session(
        &self,
        sd: &git_session::layout::SessionDir,
        kind: lock::Kind,
    ) -> Result<lock::Lock> {
        lock::session(sd, kind, self.locks)
    }
}
