//! The records of `project`, `relocate` and `begin-turn`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

/// `project add|list|show|set`: one project.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Project {
    /// The project id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The working directory; null when unknown.
    pub path: Option<PathBuf>,
    /// `active`, `paused` or `archived`.
    pub status: String,
    /// `commit-turn` makes agent commits in its repository.
    pub auto_commit: bool,
    /// Run the project's git hooks for agent commits.
    pub hooks: bool,
    /// How many sessions are bound to it.
    pub sessions: usize,
    /// The path no longer exists (`git-session relocate` points it anew).
    pub path_missing: bool,
}

/// `project bind`: a session bound to a project.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Bound {
    /// The session id.
    pub session: String,
    /// The project id.
    pub project: String,
    /// The session directory now.
    pub path: PathBuf,
}

/// `project remove`: a project taken out of the registry (its sessions
/// keep their history).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProjectRemoved {
    /// The project id.
    pub project: String,
}

/// `project log`: one agent commit in the project's repository, newest
/// first, with the provenance fields of `session_node`.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AgentCommit {
    /// The project id.
    pub project_id: String,
    /// The agent commit.
    pub commit: String,
    /// The session whose turn made it.
    pub session_id: String,
    /// That turn; null when the message names none.
    pub turn: Option<u64>,
    /// The session commit that holds the turn's nodes; null when unknown.
    pub session_commit: Option<String>,
    /// The first line of its message.
    pub subject: String,
    /// The committer time.
    pub time: f64,
    /// `time` as RFC 3339 UTC.
    pub time_rfc3339: String,
}

/// `relocate`: the record node written in one session.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RelocateNode {
    /// The session id.
    pub session: String,
    /// The record node's id.
    pub node: String,
}

/// `relocate`: the commit that records the record node.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecordCommitted {
    /// The session id.
    pub session: String,
    /// The commit id.
    pub commit: String,
}

/// `relocate`: the project moved, last.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Relocated {
    /// The project id.
    pub project: String,
    /// Where it was.
    pub old_path: PathBuf,
    /// Where it is now.
    pub new_path: PathBuf,
    /// Sessions that got a record node.
    pub sessions: usize,
    /// Entries of locations.json rewritten.
    pub locations: usize,
    /// Sessions whose record could not be written (each named in a
    /// warning; the command exits 1). The project's path is rewritten all
    /// the same.
    pub failed: Vec<String>,
    /// Run again with the path the project already has: the old path of
    /// the move it completes (the one the sessions' records name); null on
    /// a first run, and when no session records a move to `new_path`
    /// (nothing is recorded then).
    pub moved_from: Option<PathBuf>,
    /// Run again: sessions that already had their record of the move.
    pub already_recorded: usize,
    /// Run again: sessions bound to the project after the move (their
    /// `bound_at`, or for one an older version bound, their `created_at`,
    /// is later than the move's first record); they never lived at the old
    /// path and get no record.
    pub bound_after: Vec<String>,
}

/// `begin-turn`: the turn is running (for every session; a bound one's
/// `baseline` record follows).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TurnBegun {
    /// The session id.
    pub session: String,
    /// The session's status now: `running`.
    pub status: String,
    /// The project the session is bound to with auto-commit, whose
    /// baseline was taken; null for a session without one.
    pub project: Option<String>,
}

/// `begin-turn`: the project's working tree at the start of the turn (also
/// kept in the session's `.git/git-session/baseline.json`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Baseline {
    /// The session id.
    pub session: String,
    /// The project id.
    pub project: String,
    /// The project's path; null when it is missing.
    pub path: Option<PathBuf>,
    /// Its HEAD commit; null in a repository with no commit or on error.
    pub head: Option<String>,
    /// Its branch; null when detached or on error.
    pub branch: Option<String>,
    /// Paths already dirty (never committed for the agent this turn).
    pub dirty: Vec<String>,
    /// Why no agent commit can follow (`path_missing`, `state_dir`,
    /// `not_a_repo`); null when one can.
    pub error: Option<String>,
    /// When the baseline was taken.
    pub at: f64,
    /// `at` as RFC 3339 UTC.
    pub at_rfc3339: String,
}
