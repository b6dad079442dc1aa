//! The records of `verify`, `backfill` and `migrate`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::Commit;

/// `backfill` (`backfill_plan` with `--dry-run`): the commits written (or
/// planned) for one session.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Backfill {
    /// The session id.
    pub session: String,
    /// The session had no repository: one was created.
    pub created_repo: bool,
    /// The commits, oldest first.
    pub commits: Vec<Commit>,
    /// Of `commits`, those that hold turns (the others are `files_only`:
    /// the session's files brought up to date, no new turn).
    pub turns: usize,
    /// The title backfill gave the session (the first-turn title, SPEC
    /// §5.3: it had none, and none typed by the user), in meta.json and its
    /// list row; null when it kept its title.
    pub title: Option<String>,
}

/// `backfill --dry-run`: as `backfill`, nothing written.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct BackfillPlan<'a>(pub &'a Backfill);

/// `backfill`: the totals, last.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BackfillSummary {
    /// Sessions looked at.
    pub sessions: usize,
    /// Sessions that got commits (turns, or only their files brought up
    /// to date).
    pub changed: usize,
    /// Repositories created.
    pub new_repos: usize,
    /// Commits written (or planned).
    pub commits: usize,
    /// Of them, commits that hold turns.
    pub turns: u64,
    /// Sessions that failed (each named on stderr).
    pub failed: usize,
    /// Nothing was written (`--dry-run`).
    pub dry_run: bool,
    /// Wall time.
    pub seconds: f64,
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something is wrong: exit 1.
    Problem,
    /// Worth knowing, not wrong (e.g. node metadata stamped after its turn).
    Note,
}

/// `verify`: one finding (see git-session-verify(1), FINDINGS).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Finding {
    /// The session; null for a finding about the state dir.
    pub session: Option<String>,
    /// The stable code of the finding.
    pub kind: &'static str,
    /// `problem` (exit 1) or `note` (never fails).
    pub severity: Severity,
    /// The file or directory concerned.
    pub path: PathBuf,
    /// What is wrong, in words.
    pub message: String,
    /// The command or action that fixes it.
    pub fix: String,
    /// `verify --fix` repairs it.
    pub fixable: bool,
}

/// `verify --fix`: one repair made.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Fixed {
    /// The session; null for a repair of the state dir.
    pub session: Option<String>,
    /// What was done, in words.
    pub action: String,
}

/// One branch of a `stats` record.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BranchStats {
    /// The branch.
    pub name: String,
    /// The tip commit.
    pub tip: String,
    /// Turns on the DAG path to the branch's last turn.
    pub dag_turns: u64,
    /// Commits on the branch's first-parent line that hold turn nodes.
    pub turn_commits: u64,
    /// Other commits on that line (records, repairs), the root left out.
    pub other_commits: u64,
}

/// `verify --stats`: the figures a CI job compares, per session.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SessionStats<'a> {
    /// The session id.
    pub session: &'a str,
    #[serde(flatten)]
    pub stats: &'a Stats,
}

/// The figures of one session.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Stats {
    /// Turns in the DAG (every fork counted: a retry or a regenerated reply).
    pub dag_turns: u64,
    /// Reachable commits that hold turn nodes.
    pub turn_commits: u64,
    /// Reachable commits that hold none (records, repairs), the root left out.
    pub other_commits: u64,
    /// The highest node seq; null for a session with no node.
    pub max_seq: Option<u64>,
    /// The highest seq a commit holds; null when none is committed.
    pub max_committed_seq: Option<u64>,
    /// Files other than nodes changed since the last turn (meta.json,
    /// workdir/): normal; the next turn commits them.
    pub pending_files: usize,
    /// Per branch.
    pub branches: Vec<BranchStats>,
}

/// `verify`: the totals, last.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VerifySummary {
    /// Sessions verified.
    pub sessions: usize,
    /// Sessions with no problem.
    pub clean: usize,
    /// Sessions `--fix` repaired.
    pub repaired: usize,
    /// Repairs `--all --fix` made to the state dir (its registries and
    /// leftover temp files), each also a `fixed` record.
    pub state_repairs: usize,
    /// Problems left (notes not counted).
    pub problems: usize,
    /// Sessions skipped because another process held them (`--no-wait`).
    pub busy: usize,
}

/// `migrate`: one legacy session moved into the state dir (or, with
/// `--dry-run`, that would be).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Migrated {
    /// The session id.
    pub session: String,
    /// Nothing was moved (`--dry-run`).
    pub dry_run: bool,
    /// It finished a migration an earlier run began.
    pub resumed: bool,
}

/// `migrate --node-names python`: a session whose node files were renamed
/// to the Python store's naming (or, with `--dry-run`, would be).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NodesRenamed {
    /// The session id.
    pub session: String,
    /// Node files renamed (to rename, with `--dry-run`).
    pub files: usize,
    /// The commits made, one per branch whose tree held an old name.
    pub commits: Vec<String>,
    /// Nothing was renamed (`--dry-run`).
    pub dry_run: bool,
}

/// `migrate`: a legacy session that cannot be migrated now.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Blocked {
    /// The session id.
    pub session: String,
    /// Where it is.
    pub source: PathBuf,
    /// The project it belongs to; null when unknown.
    pub project_id: Option<String>,
    /// Why, and what to run first.
    pub problem: Option<String>,
}

/// `migrate`: a session whose migration failed (retried by the next run).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct MigrateFailed {
    /// The session id.
    pub session: String,
    /// Why.
    pub message: String,
}
