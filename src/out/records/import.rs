//! The records of `import` and `hook install|uninstall`.

use schemars::JsonSchema;
use serde::Serialize;

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
