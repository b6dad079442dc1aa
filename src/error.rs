//! The crate's error type: every failure a command can report, with a stable
//! diagnostic code, a `help:` line phrased as the next action, and the exit
//! code of SPEC §5 (2 usage, 1 refused/not found, 75 lock busy, 128 fatal).
//!
//! Each area has an enum of its own, in its module, wrapped here as it is
//! (`#[error(transparent)]`): [`Usage`] (`git_session::usage::…`, from the
//! library and the commands alike), `sync::SyncError`,
//! `project::ProjectError`, `view::ViewError`, `store::AppendError`, … Its
//! variants carry the code (`git_session::<area>::<what>`: scripts match on
//! it, the `--json` error records carry it), the message and the next
//! step. Code that tells errors apart matches their variants; the exit
//! code is decided in one place, [`Error::exit_code`].

use std::path::PathBuf;

use miette::Diagnostic;
use thiserror::Error;

mod usage;

pub use usage::Usage;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Exit codes of SPEC §5.
pub mod exit {
    pub const OK: u8 = 0;
    pub const NO: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const BUSY: u8 = 75;
    pub const FATAL: u8 = 128;
}

#[derive(Debug, Error, Diagnostic)]
pub enum Error {
    /// A command line that cannot work (`git_session::usage::<what>`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Usage(#[from] Usage),

    #[error("no session `{id}` in `{state}`")]
    #[diagnostic(code(git_session::session::not_found))]
    SessionNotFound {
        id: String,
        state: PathBuf,
        /// The next action: the closest existing ids, or where to look.
        #[help]
        help: String,
    },

    #[error("`{path}` is locked by another process")]
    #[diagnostic(
        code(git_session::lock::busy),
        help(
            "wait for the other git-session command to finish, or raise `--lock-timeout` (seconds); \
             lock files are never stale: the lock is released when its holder exits"
        )
    )]
    LockBusy { path: PathBuf },

    /// What the layout refuses to go through (`git_session::layout::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Layout(#[from] crate::layout::Refusal),

    /// An agent commit skipped, the project as it was
    /// (`git_session::project::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    ProjectSkip(#[from] crate::git::project::Skip),

    /// What the project commands refuse (`git_session::project::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Project(#[from] crate::project::ProjectError),

    /// An agent commit that cannot be made at all
    /// (`git_session::project::head_detached`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    ProjectRepo(#[from] crate::git::project::Refusal),

    /// A target that names no turn (`git_session::view::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    View(#[from] crate::view::ViewError),

    /// A checkout that would leave nodes behind no commit holds
    /// (`git_session::checkout::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Checkout(#[from] crate::view::CheckoutError),

    /// A node or an attachment `append` cannot add
    /// (`git_session::append::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Append(#[from] crate::store::AppendError),

    /// What `init` refuses (`git_session::init::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Init(#[from] crate::store::InitError),

    /// A session directory or repository refused
    /// (`git_session::session::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Session(#[from] crate::session::SessionError),

    /// A commit of the pending nodes that would hold a node twice
    /// (`git_session::mirror::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Mirror(#[from] crate::mirror::MirrorError),

    /// A rename to one naming that cannot be done
    /// (`git_session::rename::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Rename(#[from] crate::mirror::RenameError),

    /// What the read layer refuses (`git_session::read::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Read(#[from] crate::read::ReadError),

    /// What `migrate` refuses (`git_session::migrate::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Migrate(#[from] crate::migrate::MigrateError),

    /// What `delete` refuses (`git_session::lifecycle::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Lifecycle(#[from] crate::lifecycle::LifecycleError),

    /// What `demo` refuses (`git_session::demo::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Demo(#[from] crate::demo::DemoError),

    /// A transcript `import` does not add (`git_session::import::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Import(#[from] crate::import::ImportError),

    /// An agent's settings file not edited, or a hook event not imported
    /// (`git_session::hook::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Hook(#[from] crate::import::HookError),

    /// What push, fetch, clone and remote refuse (`git_session::sync::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Sync(#[from] crate::sync::SyncError),

    /// What `redact` refuses (`git_session::redact::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Redact(#[from] crate::secrets::redact::RedactError),

    /// What the secrets scanner refuses (`git_session::secrets::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Secrets(#[from] crate::secrets::SecretsError),

    /// git's transport to a remote failed (`git_session::sync::…`).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Transport(#[from] crate::git::transport::TransportError),

    #[error("cannot {action} `{path}`")]
    #[diagnostic(code(git_session::io), help("{help}"))]
    Io {
        action: &'static str,
        path: PathBuf,
        help: String,
        #[source]
        source: std::io::Error,
    },

    #[error("`{path}` is not valid: {reason}")]
    #[diagnostic(code(git_session::corrupt))]
    Corrupt {
        path: PathBuf,
        reason: String,
        #[help]
        help: Option<String>,
    },

    #[error("git operation failed in `{path}`: {action}")]
    #[diagnostic(
        code(git_session::git),
        help(
            "run `git-session verify` on this session; `git fsck` in the repo shows what git thinks"
        )
    )]
    Git {
        action: String,
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// The exit code of SPEC §5, from the kind of the error: decided here
    /// and nowhere else.
    pub fn exit_code(&self) -> u8 {
        use crate::secrets::{SecretsError, redact::RedactError};
        match self {
            // A command line that cannot work; two areas' codes are usage
            // errors too.
            Error::Usage(_)
            | Error::Redact(RedactError::NoSuchFinding { .. })
            | Error::Secrets(SecretsError::BadFingerprint { .. }) => exit::USAGE,
            // Refused, or not found: the files are left as they are.
            Error::SessionNotFound { .. }
            | Error::Session(_)
            | Error::Layout(_)
            | Error::ProjectSkip(_)
            | Error::ProjectRepo(_)
            | Error::Project(_)
            | Error::View(_)
            | Error::Checkout(_)
            | Error::Append(_)
            | Error::Init(_)
            | Error::Mirror(_)
            | Error::Rename(_)
            | Error::Read(_)
            | Error::Migrate(_)
            | Error::Lifecycle(_)
            | Error::Demo(_)
            | Error::Import(_)
            | Error::Hook(_)
            | Error::Sync(_)
            | Error::Redact(_)
            | Error::Transport(_) => exit::NO,
            Error::LockBusy { .. } => exit::BUSY,
            Error::Io { .. } | Error::Corrupt { .. } | Error::Git { .. } => exit::FATAL,
        }
    }

    pub fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            path: path.into(),
            reason: reason.into(),
            help: Some(
                "the file is left as it is; repair or move it aside, then run `git-session verify`"
                    .into(),
            ),
        }
    }

    pub fn git(
        action: impl Into<String>,
        path: impl Into<PathBuf>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Error::Git {
            action: action.into(),
            path: path.into(),
            source: source.into(),
        }
    }
}

/// Attach a path and an action to an I/O error.
pub trait IoContext<T> {
    fn io(self, action: &'static str, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io(self, action: &'static str, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|source| {
            let help = match source.kind() {
                std::io::ErrorKind::PermissionDenied => {
                    "check the permissions of the file and its directory".to_string()
                }
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
                    "free some disk space and run the command again; nothing was half-written"
                        .to_string()
                }
                std::io::ErrorKind::NotFound => "check that the path exists".to_string(),
                _ => "check the path and run the command again".to_string(),
            };
            Error::Io {
                action,
                path: path.into(),
                help,
                source,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::project::{Refusal as ProjectRepoRefusal, Skip};
    use crate::git::transport::TransportError;
    use crate::import::{Agent, HookError, ImportError};
    use crate::mirror::{MirrorError, RenameError};
    use crate::secrets::{SecretsError, redact::RedactError};
    use crate::store::{AppendError, InitError};
    use crate::view::{CheckoutError, ViewError};

    /// One error of each area's enum (both kinds where an area has two):
    /// the area its code names, and its exit code.
    #[test]
    fn each_area_has_its_code_and_its_exit_code() {
        let p = || PathBuf::from("p");
        let s = || "s".to_string();
        let cases: Vec<(Error, &str, u8)> = vec![
            (Usage::Jobs.into(), "usage", exit::USAGE),
            (
                Usage::InvalidId {
                    what: "node id",
                    value: s(),
                    reason: "r",
                }
                .into(),
                "usage",
                exit::USAGE,
            ),
            (
                Error::SessionNotFound {
                    id: s(),
                    state: p(),
                    help: s(),
                },
                "session",
                exit::NO,
            ),
            (
                crate::session::SessionError::LinkedDir { dir: p() }.into(),
                "session",
                exit::NO,
            ),
            (Error::LockBusy { path: p() }, "lock", exit::BUSY),
            (
                crate::layout::Refusal::SpecialFile { path: p() }.into(),
                "layout",
                exit::NO,
            ),
            (Skip::GitBusy { root: p() }.into(), "project", exit::NO),
            (Usage::ExportDir.into(), "usage", exit::USAGE),
            (
                Usage::DiffRange {
                    session: s(),
                    from: 2,
                    to: 1,
                }
                .into(),
                "usage",
                exit::USAGE,
            ),
            (
                ViewError::NoSuchBranch {
                    session: s(),
                    name: s(),
                    branches: vec![],
                }
                .into(),
                "view",
                exit::NO,
            ),
            (ProjectRepoRefusal::HeadDetached.into(), "project", exit::NO),
            (
                crate::project::ProjectError::DefaultRemoved.into(),
                "project",
                exit::NO,
            ),
            (
                ViewError::TurnRunning { session: s() }.into(),
                "view",
                exit::NO,
            ),
            (
                CheckoutError::Uncommitted {
                    session: s(),
                    last: s(),
                }
                .into(),
                "checkout",
                exit::NO,
            ),
            (AppendError::SecondRoot.into(), "append", exit::NO),
            (
                InitError::BoundElsewhere {
                    id: s(),
                    project: s(),
                }
                .into(),
                "init",
                exit::NO,
            ),
            (
                MirrorError::NodeNamedTwice {
                    file: s(),
                    other: s(),
                }
                .into(),
                "mirror",
                exit::NO,
            ),
            (
                RenameError::Conflict { from: p(), to: p() }.into(),
                "rename",
                exit::NO,
            ),
            (
                crate::read::ReadError::CursorNotAFile { path: p() }.into(),
                "read",
                exit::NO,
            ),
            (
                crate::migrate::MigrateError::CopyUnverified { id: s(), why: s() }.into(),
                "migrate",
                exit::NO,
            ),
            (
                crate::lifecycle::LifecycleError::ForeignFiles {
                    dir: p(),
                    id: s(),
                    files: vec![s()],
                }
                .into(),
                "lifecycle",
                exit::NO,
            ),
            (
                crate::demo::DemoError::Unverified { state: p() }.into(),
                "demo",
                exit::NO,
            ),
            (
                ImportError::NoDefaultTranscripts {
                    agent: Agent::Codex,
                    root: p(),
                }
                .into(),
                "import",
                exit::NO,
            ),
            (
                HookError::NoRollout {
                    thread: s(),
                    root: p(),
                }
                .into(),
                "hook",
                exit::NO,
            ),
            (crate::sync::SyncError::NoBranch.into(), "sync", exit::NO),
            (TransportError::NoGit.into(), "sync", exit::NO),
            (
                RedactError::DetachedHead { session: s() }.into(),
                "redact",
                exit::NO,
            ),
            (
                RedactError::NoSuchFinding {
                    session: s(),
                    fingerprint: s(),
                }
                .into(),
                "redact",
                exit::USAGE,
            ),
            (
                SecretsError::BadFingerprint {
                    masked: s(),
                    allow_file: p(),
                }
                .into(),
                "secrets",
                exit::USAGE,
            ),
            (
                Err::<(), _>(std::io::Error::other("x"))
                    .io("read", p())
                    .unwrap_err(),
                "io",
                exit::FATAL,
            ),
            (Error::corrupt(p(), "r"), "corrupt", exit::FATAL),
            (Error::git("read", p(), "x"), "git", exit::FATAL),
        ];
        for (e, area, code) in cases {
            let shown = e.code().expect("every error has a code").to_string();
            let named = shown
                .strip_prefix("git_session::")
                .and_then(|c| c.split("::").next());
            assert_eq!(named, Some(area), "{shown}");
            assert_eq!(e.exit_code(), code, "{shown}");
        }
    }
}
