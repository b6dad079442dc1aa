//! The records of a session's life and reading it back: `init`, `append`,
//! `commit-turn`, `log`, `branch`, `show`, `nodes`, `feed`, `cat`, `grep`,
//! `checkout`, `title`, `update`, `delete`, `recover`, `gc-shells`, `list`,
//! `demo`, `export`, `diff`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::layout::registry::ListRow;

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
    /// the index, `index.lock`, for more than 3 s); null when committed.
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
    /// A remote's branches whose tip it is, as the last `fetch` or `push`
    /// saw them (`<remote>/<branch>`: the session repository's
    /// `refs/remotes/<remote>/<branch>`).
    pub remotes: Vec<String>,
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

/// `show`: one node of the rendered branch, in order (`diff`: one node
/// the range of turns added).
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
    /// The session commit that holds the node's turn (40 hex digits);
    /// null while the turn is not committed.
    pub commit: Option<String>,
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

/// `export`: what was exported and where: one record for the command.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Exported {
    /// `md` or `html`.
    pub format: String,
    /// The session exported; null for `--all`.
    pub session: Option<String>,
    /// The branch shown (its git branches' names); null for `--all`.
    pub branch: Option<String>,
    /// The file or directory written (`-o`); null when the page went to
    /// stdout.
    pub output: Option<PathBuf>,
    /// The files written, in the order written: paths under `output` for
    /// `--all` (a file whose bytes did not change is not written again),
    /// else the page, then the attachments copied beside it.
    pub written: Vec<String>,
    /// Files of an earlier `--all` export removed because they are no
    /// longer made (paths under `output`).
    pub removed: Vec<String>,
    /// The sessions on the site (1 for one session).
    pub sessions: u64,
    /// The sessions read and rendered anew (for `--all`: those whose
    /// record changed since the last export into `output`).
    pub rendered: Vec<String>,
    /// The sessions whose pages were kept as an earlier export wrote them.
    pub unchanged: u64,
    /// The sessions that could not be exported (`--all`; each named in a
    /// warning, and the command exits 1): the others' pages are written
    /// all the same, and theirs of an earlier export are kept.
    pub failed: Vec<String>,
    /// Whether secrets were masked (false under `--no-redact`).
    pub redacted: bool,
    /// How many secrets were masked in what was rendered.
    pub masked: u64,
    /// The page itself when it went to stdout (no `-o`); else null.
    pub content: Option<String>,
}

/// `diff`: an agent commit a turn of the range recorded in the session's
/// project, after that turn's nodes; or the skip the turn recorded
/// instead.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AgentPatch {
    pub session: String,
    /// The turn that recorded it.
    pub turn: u64,
    /// The project the record names.
    pub project_id: String,
    /// The agent commit (40 hex digits); null for a skip.
    pub commit: Option<String>,
    /// Why the turn made no commit (`no_changes`, `dirty_tree`, …); null
    /// for a commit.
    pub skipped: Option<String>,
    /// Whether the commit was read from the project's repository (false
    /// for a skip, or a commit not there: the repository moved away, the
    /// commit rewritten).
    pub found: bool,
    /// The first line of its message; null when not found.
    pub subject: Option<String>,
    /// `Name <email>`; null when not found.
    pub author: Option<String>,
    /// The author's time; null when not found.
    pub time: Option<f64>,
    /// `time` as RFC 3339 UTC.
    pub time_rfc3339: Option<String>,
    /// The files it changed, with the lines added and removed in each.
    pub files: Vec<PatchFile>,
    /// The commit as `git show <commit>` prints it (no colour); null when
    /// not found, and under `--stat`.
    pub patch: Option<String>,
    /// Diffs left out past the size limit (their files still listed).
    pub cut: bool,
}

/// `diff`: one file an agent commit changed.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PatchFile {
    /// Its path, `/`-separated.
    pub path: String,
    /// `A` added, `M` modified, `D` deleted, `T` its type changed.
    pub status: String,
    /// Either side is binary (no lines counted).
    pub binary: bool,
    pub added: u64,
    pub removed: u64,
}

/// `diff`: the range shown, after its `node` and `agent_patch` records.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DiffSummary {
    pub session: String,
    /// The branch: its git branches' names, or its tip described.
    pub branch: String,
    /// The range: the turns after `from` up to `to` (0: from the start).
    pub from: u64,
    pub to: u64,
    /// The nodes the range added, by role (`user`, `assistant`, `tool`,
    /// and records of the session: `record`).
    pub nodes: u64,
    pub user: u64,
    pub assistant: u64,
    pub tool: u64,
    pub record: u64,
    /// The agent commits shown (skips aside).
    pub agent_commits: u64,
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
