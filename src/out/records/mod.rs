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

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

mod import;
mod project;
mod secrets;
mod session;
mod sync;
mod verify;

pub use import::*;
pub use project::*;
pub use secrets::*;
pub use session::*;
pub use sync::*;
pub use verify::*;

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
    AgentPatch => "agent_patch",
    DiffSummary => "diff",
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
    TurnBegun => "turn_begun",
    Baseline => "baseline",
    Demo => "demo",
    Exported => "exported",
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
