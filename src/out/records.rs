//! The JSON contract: every record a command prints under `--json` (and
//! `batch`), as Rust types. The man page `git-session-json(7)` and the JSON
//! Schema `git-session schema` prints are generated from these types, and
//! the integration tests check every record they see against that schema.
//!
//! Conventions, the same in every record:
//! - a record is one line, `{"type": <kind>, "data": {…}}`;
//! - the session a record is about is `session` (a `session` row of `list`
//!   is the session itself: `id`);
//! - a time is two fields: `<name>` (unix seconds, a float) and
//!   `<name>_rfc3339` (the same instant, RFC 3339 UTC, whole seconds);
//! - roles are `user`, `assistant`, `tool` (the node files say `llm` and
//!   `code`; `--role` accepts both);
//! - a field that does not apply is `null`, never left out.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::layout::registry::ListRow;

/// A record type: its `type` in the output.
pub trait Record: Serialize {
    const KIND: &'static str;
}

/// The public name of a stored role: `llm` → `assistant`, `code` → `tool`.
pub fn role_name(stored: &str) -> &str {
    match stored {
        "llm" => "assistant",
        "code" => "tool",
        other => other,
    }
}

/// `init`: the session exists (made now, or already there).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Initialized {
    /// The session id.
    pub session: String,
    /// The session directory.
    pub path: PathBuf,
    /// False when the session already existed (`init` of an existing id).
    pub created: bool,
}

/// One node written.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NodeAppended {
    /// The session id.
    pub session: String,
    /// The node id.
    pub id: String,
    /// Its sequence number in the session (the order of writing).
    pub seq: i64,
    /// `user`, `assistant` or `tool` (a stored role of another name is
    /// passed through as it is).
    pub role: String,
    /// The node this one continues; `ROOT` for a first turn; null for a node
    /// with a caller.
    pub predecessor: Option<String>,
    /// The node that called this one (a tool node's assistant reply); null
    /// for a top-level node.
    pub caller: Option<String>,
}

/// One commit written for a turn (by `commit-turn`, `backfill`, `verify
/// --fix`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Commit {
    /// The commit id (40 hex digits).
    pub commit: String,
    /// Its parent; null for a root commit.
    pub parent: Option<String>,
    /// The turn number (1 for the first turn); for a commit that holds
    /// only session files (`files_only`), the turn it follows (0 before
    /// the first).
    pub turn: u64,
    /// The branch the commit is on.
    pub branch: String,
    /// The commit starts this branch (a retry or a regenerated reply).
    pub new_branch: bool,
    /// The first and last node seq the commit holds; null when it holds no
    /// node.
    pub first_seq: Option<u64>,
    /// See `first_seq`.
    pub last_seq: Option<u64>,
    /// How many nodes the commit holds.
    pub nodes: usize,
    /// The commit holds no node: no turn, a change of the session's files
    /// only (meta.json, `workdir/`) brought up to date, subject `session:
    /// update files`.
    pub files_only: bool,
}

impl Commit {
    /// A turn's commit: it holds nodes.
    pub fn is_turn(&self) -> bool {
        !self.files_only
    }
}

/// `import`: one per transcript read.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Imported {
    /// The session the transcript went into (`claude-<sessionId>`,
    /// `codex-<id>`, or for a Codex fork the session it was forked from).
    pub session: String,
    /// The transcript file.
    pub path: String,
    /// The session was created by this import.
    pub new_session: bool,
    /// Turns and nodes added (to be added, with `--dry-run`).
    pub turns: usize,
    /// See `turns`.
    pub nodes: usize,
    /// Nodes of the turn the transcript has not closed yet (no later
    /// message, no turn-end record): kept in the session's pending area,
    /// committed once a later import finds the turn closed, or by
    /// `--finish`.
    pub open_nodes: usize,
    /// Lines not imported, with the reason.
    pub skipped: Vec<SkippedLine>,
    /// Lines read that are not JSON objects: kept as they are (`raw`) in
    /// the node they went into.
    pub raw_lines: usize,
    /// The transcript holds no conversation of this agent's (it is empty,
    /// not a transcript, or the other agent's): nothing was imported, and
    /// no session made of it.
    pub no_conversation: bool,
    /// Nothing was written (`--dry-run`).
    pub dry_run: bool,
}

/// What `hook install` / `hook uninstall` changed in an agent's settings.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HookSettings {
    /// `claude-code` or `codex`.
    pub agent: String,
    /// The settings file.
    pub path: String,
    /// Events our hook was added to.
    pub added: Vec<String>,
    /// Events whose hook of ours now runs another command (this binary).
    pub updated: Vec<String>,
    /// Events our hook was removed from.
    pub removed: Vec<String>,
    /// Nothing was written (`--dry-run`).
    pub dry_run: bool,
}

/// A transcript line `import` left out.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SkippedLine {
    /// 1-based line number.
    pub line: usize,
    pub reason: String,
}

/// `import`, last: the totals.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ImportSummary {
    /// Transcripts read.
    pub transcripts: usize,
    /// Sessions created.
    pub new_sessions: usize,
    pub turns: usize,
    pub nodes: usize,
    /// Lines left out, over every transcript.
    pub skipped: usize,
    /// Transcripts that failed (each also an `error` record).
    pub failed: usize,
    pub dry_run: bool,
}

/// `commit-turn --dry-run`: one per commit the turn would make.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TurnPlanned {
    /// The session id.
    pub session: String,
    /// The turn number (0 for a commit that would hold only session files).
    pub turn: u64,
    /// The branch the commit would land on; empty for a new branch named
    /// by the commit id (files changed while HEAD is detached).
    pub branch: String,
    /// The commit would start this branch (a retry or a regenerated reply).
    pub new_branch: bool,
    /// The first and last node seq it would hold; null when none.
    pub first_seq: Option<u64>,
    /// See `first_seq`.
    pub last_seq: Option<u64>,
    /// How many nodes it would hold.
    pub nodes: usize,
}

/// `commit-turn`: one commit per turn it wrote.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TurnCommitted {
    /// The session id.
    pub session: String,
    #[serde(flatten)]
    pub commit: Commit,
}

/// `commit-turn` of a session bound to a project with `auto_commit`: the
/// agent commit in the project's repository, or why there is none.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProjectCommit {
    /// The session id.
    pub session: String,
    /// The project id.
    pub project: String,
    /// The agent commit; null when skipped.
    pub commit: Option<String>,
    /// The paths it commits (empty when skipped).
    pub paths: Vec<String>,
    /// Why there is no commit: `no_baseline`, `path_missing`, `state_dir`,
    /// `not_a_repo`, `detached_head`, `merge_in_progress`, `dirty_tree`,
    /// `no_changes`, `path_not_utf8` (the agent's changes hold a file name
    /// that is not UTF-8, which no commit here can carry), `hook_refused`,
    /// `file_changing` (a file over 8 MiB
    /// changed while it was read), `head_moved` (the branch moved while
    /// the commit was made: a commit of the user's) or `git_busy` (git held
    /// the index, `index.lock`, for more than 2 s); null when committed.
    pub skipped: Option<String>,
}

/// `log`: one commit of the session repository, newest first.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LogCommit {
    /// The commit id (40 hex digits).
    pub commit: String,
    /// The abbreviated id (7 hex digits).
    pub short: String,
    /// The turn it records; null for a commit that records no turn.
    pub turn: Option<u64>,
    /// The first line of the message.
    pub subject: String,
    /// The committer time.
    pub time: f64,
    /// `time` as RFC 3339 UTC.
    pub time_rfc3339: String,
    /// Its parents' ids.
    pub parents: Vec<String>,
    /// Branches whose tip it is.
    pub branches: Vec<String>,
    /// HEAD points at it.
    pub head: bool,
    /// The node seqs its `Nodes:` trailer names; null when none.
    pub first_seq: Option<u64>,
    /// See `first_seq`.
    pub last_seq: Option<u64>,
    /// The turn failed (`Status: failed`).
    pub failed: bool,
}

/// `branch`: one line of the conversation (a DAG tip), newest first.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Branch {
    /// The node id at the tip.
    pub tip: String,
    /// The git branches that hold it.
    pub branches: Vec<String>,
    /// The commit that holds the tip; null while uncommitted.
    pub commit: Option<String>,
    /// Turns on the line.
    pub turns: u64,
    /// The time of its newest node.
    pub last_activity: f64,
    /// `last_activity` as RFC 3339 UTC.
    pub last_activity_rfc3339: String,
    /// The branch `show` renders.
    pub current: bool,
    /// The first line of its last user message.
    pub subject: String,
}

/// `show`: one node of the rendered branch, in order.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ShownNode {
    /// The turn the node belongs to.
    pub turn: u64,
    /// `user`, `assistant` or `tool` (a stored role of another name is
    /// passed through as it is).
    pub role: String,
    /// The node as its file holds it (see git-session-layout(5)): `role` there
    /// is the stored name (`user`, `llm`, `code`).
    pub node: Map<String, Value>,
    /// A node of the turn an import keeps pending (its transcript has not
    /// closed the turn yet): not in `history/` yet, its `seq` 0.
    pub in_progress: bool,
}

/// `nodes`, `feed`, `cat --json`: one node as stored, with its provenance
/// (the abstract-memory layer's pointer back to the record).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SessionNode {
    /// The project the session is bound to (`default` when none).
    pub project_id: String,
    pub session_id: String,
    pub node_id: String,
    pub seq: i64,
    /// `user`, `assistant` or `tool` (a stored role of another name is
    /// passed through as it is).
    pub role: String,
    /// The session's turn commit that first holds the node; null while the
    /// node is not committed.
    pub commit: Option<String>,
    /// When the node happened: its `created_at`.
    pub event_time: f64,
    /// `event_time` as RFC 3339 UTC.
    pub event_time_rfc3339: String,
    /// When this read happened (`--ingestion-time`, else now): one value for
    /// every record of a run.
    pub ingestion_time: f64,
    /// `ingestion_time` as RFC 3339 UTC.
    pub ingestion_time_rfc3339: String,
    /// The node file's JSON, as stored (see git-session-layout(5)).
    pub node: Map<String, Value>,
}

/// `grep`: one node whose text matches, newest sessions first.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Hit {
    /// The session id.
    pub session: String,
    /// The node id.
    pub node: String,
    pub seq: i64,
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The turn the node belongs to on its branch; null when it belongs to
    /// none (a record node, a node whose chain is broken).
    pub turn: Option<u64>,
    /// Where the match is: `output`, or `input` (a tool's arguments).
    pub field: String,
    /// The line of the text that matches, shortened around the match.
    pub snippet: String,
    /// The match's byte offsets in `snippet`.
    pub start: usize,
    pub end: usize,
}

/// `checkout`: where HEAD and the head node are now.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Checkout {
    /// The session id.
    pub session: String,
    /// The turn checked out.
    pub turn: u64,
    /// The node `head_id` names now.
    pub head_id: String,
    /// The commit checked out; null when the turn's commits carry no
    /// trailers (the Python store's; git HEAD is left where it was).
    pub commit: Option<String>,
    /// The branch HEAD is on; null when detached.
    pub branch: Option<String>,
}

/// `title`: the session's title, set or left.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Title {
    /// The session id.
    pub session: String,
    /// The title now.
    pub title: String,
    /// 1: from the first user message; 2: given or generated later; 0: left
    /// unchanged.
    pub phase: u8,
    /// The title was left as it was.
    pub unchanged: bool,
    /// Why it was left: `user_titled`, `not_due` or `no_new_title`; null
    /// when set.
    pub reason: Option<String>,
}

/// `update`, `archive`, `unarchive`: the fields that changed.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SessionUpdated {
    /// The session id.
    pub session: String,
    /// Each changed meta.json field and its new value (empty: nothing
    /// changed).
    pub changed: Map<String, Value>,
}

/// `delete`: the session is gone.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SessionDeleted {
    /// The session id.
    pub session: String,
    /// The directory that was removed.
    pub path: PathBuf,
}

/// `recover`: one repair.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Recovered {
    /// `index_rebuilt`, `interrupted` (a session left `running`) or
    /// `delete_finished` (a delete a crash cut short, finished).
    pub action: String,
    /// The session set to `interrupted` or whose delete was finished; null
    /// for `index_rebuilt`.
    pub session: Option<String>,
    /// Rows written by `index_rebuilt`; null otherwise.
    pub rows: Option<usize>,
}

/// `gc-shells`, `recover`: an empty session shell removed (or, with
/// `--dry-run`, that would be).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ShellRemoved {
    /// The session id.
    pub session: String,
    /// Nothing was removed (`--dry-run`).
    pub dry_run: bool,
}

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

/// `demo`: what it recorded and where.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Demo {
    /// The demo's directory.
    pub dir: PathBuf,
    /// The state dir it recorded into.
    pub state_dir: PathBuf,
    /// The sessions it made.
    pub sessions: Vec<String>,
    /// The project id.
    pub project: String,
    /// The project's repository (after its relocation).
    pub project_repo: PathBuf,
}

/// `list`: one session row (newest first): the fields of its index row,
/// each as index.json holds it (another program may have written it: a
/// reader takes any JSON value), its times in RFC 3339, and its project.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SessionRow<'a> {
    #[serde(flatten)]
    pub row: &'a ListRow<'a>,
    /// `created_at` as RFC 3339 UTC; null when it is not a number.
    pub created_at_rfc3339: Option<String>,
    /// `updated_at` as RFC 3339 UTC; null when it is not a number.
    pub updated_at_rfc3339: Option<String>,
    /// The project the session is bound to (`default` when none).
    pub project_id: &'a str,
    /// The project's name.
    pub project: &'a str,
}

/// Any command, under `--json`: the command failed (also on stderr as text).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Error {
    /// A stable code naming the problem, `git_session::<area>::<what>`
    /// (`git_session::usage::role`, `git_session::append::no_such_predecessor`,
    /// `git_session::project::not_found`, `git_session::lock::busy`, …);
    /// null when there is none.
    pub code: Option<String>,
    /// The error and its causes, in words.
    pub message: String,
    /// What to do about it.
    pub help: String,
    /// The exit code the command ends with.
    pub exit: u8,
}

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

/// `secrets scan`, `push`: a secret a session holds, told without its value.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Secret {
    /// The session id.
    pub session: String,
    /// The file in the session repository (`history/<seq>-<r>-<id>.json`, `meta.json`,
    /// `workdir/attachments/<name>`); a blob id when the file's name is not known.
    pub path: String,
    /// The node's id, for a node file; null otherwise.
    pub node: Option<String>,
    /// Where in the file: a JSON field (`output`, `input.command`, `metadata.x[0]`); empty
    /// for a file read as text.
    pub field: String,
    /// The rule that found it (gitleaks' rule ids, and `credentialed-url`).
    pub rule: String,
    /// A fragment that tells which secret it is without giving it away (`sk-ant-…f3a9`).
    pub masked: String,
    /// 16 hex digits of the SHA-1 of rule and value: the same on every run and machine;
    /// what `--allow`, the allow-list file and `redact --fingerprint` name.
    pub fingerprint: String,
    /// Let through by `<state>/secrets-allow` or `--allow`.
    pub allowed: bool,
}

/// `redact`: what one redaction did.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Redacted {
    /// The session id.
    pub session: String,
    /// Secrets replaced (distinct fingerprints; each finding is a `secret` record before).
    pub secrets: usize,
    /// Commits written again.
    pub commits: usize,
    /// Each branch moved to its rewritten tip.
    pub branches: Vec<RedactedBranch>,
    /// Files on disk rewritten, relative to the session directory.
    pub files: Vec<String>,
    /// The ref prefix the history before is kept under (`refs/redacted/<time>/`); null when
    /// no commit held a secret.
    pub backup: Option<String>,
    /// The `context/redact` record node's id.
    pub record: Option<String>,
    /// The record's commit; null when it waits for the next turn's.
    pub record_commit: Option<String>,
    /// `--dry-run`: nothing was changed.
    pub dry_run: bool,
}

/// A branch `redact` moved.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RedactedBranch {
    pub branch: String,
    /// The tip before (kept under the backup ref).
    pub old: String,
    /// The rewritten tip.
    pub new: String,
}

/// `secrets scan`: the run, last.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SecretsSummary {
    /// Sessions scanned.
    pub sessions: usize,
    /// Sessions holding a secret not allowed.
    pub sessions_with_secrets: usize,
    /// Findings, allowed ones included.
    pub findings: usize,
    /// Findings let through by the allow-list or `--allow`.
    pub allowed: usize,
    /// Sessions that could not be read, with the reason.
    pub skipped: Vec<SkippedSession>,
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

/// `batch`: the end of one request's answer.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Exit {
    /// The exit code the one-shot command would have had.
    pub code: u8,
}

macro_rules! records {
    ($($ty:ident $(<$lt:lifetime>)? => $kind:literal,)*) => {
        $(impl Record for $ty $(<$lt>)? { const KIND: &'static str = $kind; })*

        /// Every record type: its `type` and the schema of its `data` (a
        /// reference into the definitions, which come last).
        pub fn catalog() -> (Vec<(&'static str, Value)>, Map<String, Value>) {
            let mut g = schemars::generate::SchemaSettings::draft2020_12()
                .for_serialize()
                .into_generator();
            let kinds = vec![$(($kind, g.subschema_for::<$ty $(<$lt>)?>().to_value())),*];
            (kinds, g.take_definitions(true))
        }
    };
}

records! {
    Initialized => "initialized",
    NodeAppended => "node_appended",
    TurnCommitted => "turn_committed",
    TurnPlanned => "turn_planned",
    Imported => "imported",
    ImportSummary => "import_summary",
    HookSettings => "hook_settings",
    ProjectCommit => "project_commit",
    LogCommit => "commit",
    Branch => "branch",
    ShownNode => "node",
    Checkout => "checkout",
    SessionNode => "session_node",
    Hit => "hit",
    Title => "title",
    SessionUpdated => "session_updated",
    SessionDeleted => "session_deleted",
    Recovered => "recovered",
    ShellRemoved => "shell_removed",
    Backfill => "backfill",
    BackfillPlan<'_> => "backfill_plan",
    BackfillSummary => "backfill_summary",
    Finding => "finding",
    Fixed => "fixed",
    SessionStats<'_> => "stats",
    VerifySummary => "verify_summary",
    Migrated => "migrated",
    NodesRenamed => "nodes_renamed",
    Blocked => "blocked",
    MigrateFailed => "migrate_failed",
    Project => "project",
    Bound => "bound",
    ProjectRemoved => "project_removed",
    AgentCommit => "agent_commit",
    RelocateNode => "relocate_node",
    RecordCommitted => "record_committed",
    Relocated => "relocated",
    Baseline => "baseline",
    Demo => "demo",
    SessionRow<'_> => "session",
    Remote => "remote",
    RemoteRemoved => "remote_removed",
    PushedRef => "pushed_ref",
    Secret => "secret",
    Redacted => "redacted",
    SecretsSummary => "secrets_summary",
    PushSummary => "push_summary",
    Fetched => "fetched",
    FetchSummary => "fetch_summary",
    Error => "error",
    Exit => "exit",
}

/// The JSON Schema (draft 2020-12) of one output line: one of the records.
pub fn schema() -> Value {
    let (kinds, defs) = catalog();
    let one_of: Vec<Value> = kinds
        .into_iter()
        .map(|(kind, data)| {
            let description = definition(&defs, &data)
                .and_then(|d| d.get("description").cloned())
                .unwrap_or(Value::Null);
            serde_json::json!({
                "title": kind,
                "description": description,
                "type": "object",
                "properties": {"type": {"const": kind}, "data": data},
                "required": ["type", "data"],
                "additionalProperties": false,
            })
        })
        .collect();
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "git-session record",
        "description": "One line of `--json` (or `batch`) output: {\"type\": kind, \"data\": {...}}.",
        "oneOf": one_of,
        "$defs": defs,
    })
}

/// The definition a `{"$ref": "#/$defs/Name"}` schema names.
pub fn definition<'a>(defs: &'a Map<String, Value>, schema: &Value) -> Option<&'a Value> {
    let name = schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
    defs.get(name)
}
