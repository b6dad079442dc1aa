//! The records of `remote`, `push`, `fetch` and `clone`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

/// `remote add`, `remote list`: one configured remote.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Remote {
    /// Its name.
    pub name: String,
    /// Its URL, as git is given it.
    pub url: String,
    /// Refs a push has yet to get confirmed (its queue).
    pub queued: usize,
}

/// `remote remove`: a remote forgotten (nothing on it is touched).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RemoteRemoved {
    /// Its name.
    pub name: String,
}

/// `push`: one ref sent (or planned, under `--dry-run`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PushedRef {
    /// The remote's name.
    pub remote: String,
    /// The session (or, for a tombstone, the session or project it buries); null for a
    /// project's record.
    pub session: Option<String>,
    /// The session's branch; null for a project's record and a tombstone.
    pub branch: Option<String>,
    /// The ref on the remote (`refs/sessions/<shard>/<id>/heads/<branch>`, `refs/projects/<id>`,
    /// `refs/tombstones/sessions/<shard>/<id>`, `refs/tombstones/projects/<id>`).
    pub remote_ref: String,
    /// The commit sent.
    pub commit: String,
    /// What the remote had before; null when it had no such ref.
    pub old: Option<String>,
    /// `created`, `advanced`, `replaced` (the remote's copy was history a `redact` here
    /// replaced: a forced update, leased on `old`), `rejected` (the remote has turns this
    /// machine lacks: fetch first) or `planned`.
    pub status: String,
    /// git's words for it.
    pub summary: String,
}

/// `push`: the run, last.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PushSummary {
    /// The remote's name.
    pub remote: String,
    /// Sessions looked at.
    pub sessions: usize,
    /// Refs sent and taken.
    pub pushed: usize,
    /// Refs the remote had already.
    pub up_to_date: usize,
    /// Refs the remote refused (left in the queue).
    pub rejected: usize,
    /// Sessions not pushed, with the reason.
    pub skipped: Vec<SkippedSession>,
    /// Push requests made.
    pub batches: usize,
    /// Objects copied into the transfer repository.
    pub objects: usize,
    /// Sessions not sent because their outgoing turns hold a secret not allowed (each
    /// finding is a `secret` record before this one); nothing of them reached the remote.
    pub withheld: Vec<SkippedSession>,
}

/// A session a command left out, and why.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SkippedSession {
    /// The session id.
    pub session: String,
    /// Why.
    pub reason: String,
}

/// `fetch`, `clone`: what became of one session of the remote.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Fetched {
    /// The remote's name.
    pub remote: String,
    /// The session id.
    pub session: String,
    /// `created`, `fast_forward`, `up_to_date`, `ahead` (push sends this machine's turns),
    /// `diverged` (see `message`), `taken` (`--take` resolved it), `refused` (see `message`),
    /// `deleted` (the remote's tombstone covered this machine's copy: removed here),
    /// `tombstoned` (not brought in: the remote's copy is what a deletion removed) or
    /// `kept` (deleted elsewhere, but this machine has turns the deletion did not see) or
    /// `redacted` (the remote's copy is a redaction of this machine's: taken, the history
    /// before kept under `refs/redacted/`).
    pub outcome: String,
    /// The session directory; null when refused or tombstoned (not here).
    pub path: Option<PathBuf>,
    /// The remote's branches of the session.
    pub branches: Vec<String>,
    /// What to do next, or why it was refused; null when there is nothing to say.
    pub message: Option<String>,
}

/// `fetch`, `clone`: the run, last.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FetchSummary {
    /// The remote's name.
    pub remote: String,
    /// Sessions of the remote looked at.
    pub sessions: usize,
    /// New on this machine.
    pub created: usize,
    /// Brought up to the remote's turns.
    pub fast_forward: usize,
    /// Both sides have turns the other lacks.
    pub diverged: usize,
    /// Resolved by `--take`.
    pub taken: usize,
    /// Not brought in.
    pub refused: usize,
    /// Deleted here, as a tombstone on the remote said (sessions not
    /// brought in because a deletion removed them are not counted).
    pub deleted: usize,
    /// Deleted elsewhere, kept here: this machine has turns the deletion
    /// did not see.
    pub kept: usize,
    /// Redacted on another machine: the redacted history taken, this machine's kept under
    /// `refs/redacted/`.
    pub redacted: usize,
}
