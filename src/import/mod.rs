//! `import`: other agents' transcripts as sessions, one commit per turn,
//! dated by the transcript, so that importing the same transcript twice or
//! on another machine gives the same commits; a transcript that grew adds
//! only its new turns, and any sequence of its prefixes imported one after
//! the other (the hooks while the agent works) ends as one import of the
//! whole, to the commit id.
//!
//! The mapping of records to nodes is a pure function per agent
//! ([`claude::map`], [`codex::map`]), which also says how far the
//! transcript has closed its turns (a later message, a turn-end record).
//! This module writes what it maps: the session (created dated by its
//! first record), the nodes of the closed turns with meta.json as each
//! left it (title by the usual rule, `updated_at` by the last node), one
//! mirror run that commits each turn with that meta.json, and the turn
//! still open in the pending area ([`crate::layout::pending`]). How far
//! each transcript was read is kept in the session's private cursor file:
//! the first line no written node holds (the open turn's first) and its
//! byte offset, so a grown transcript is read from there on (nodes are
//! never rewritten). What the lines before it said is kept beside: for
//! Claude Code each record's uuid and the node it leads to
//! (`import.uuids`), for Codex the mapping's state at the cursor. A Codex
//! fork is imported into the session it was forked from; its records name
//! it (`"transcript"`).
//!
//! A run goes read → map → plan → write; each stage is a file:
//!
//! - `read`: the transcript files: finding them, reading their lines from
//!   an offset on, the session a transcript names;
//! - `map`: what mapping takes and gives ([`Line`], [`Item`], [`Mapped`])
//!   and the helpers the two mappings share; `claude` and `codex`: the
//!   mappings, one function per record kind;
//! - `plan`: which session a transcript goes into, what of the mapping a
//!   run writes and how it is cut into commits, which nodes the session
//!   lacks;
//! - `write`: the session, node files, meta.json, commits, the pending
//!   area, the index journal, under the session's lock;
//! - `cursor`: what an import keeps in the session between runs (the
//!   cursors, the uuid rows, the base of an import cut short);
//! - `spill`: a node too big for one file, its long strings stored apart;
//! - `settings`: `hook install`'s edits of an agent's hook settings.
//!
//! This file: the agents ([`Agent`]), what a command asks of an import
//! ([`Options`]) and learns ([`Outcome`]), and the run itself
//! ([`transcript`]). It takes no command context: the state directory,
//! the options and where warnings go are given.

pub mod claude;
pub mod codex;
mod cursor;
mod error;
mod map;
mod plan;
mod read;
pub mod settings;
pub mod spill;
mod write;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::Result;
use crate::layout::StateDir;
use crate::layout::history::Catalog;
use crate::layout::lock::{self, LockOptions};

pub use cursor::{Seed, ids_renamed, known_path};
pub use error::{HookError, ImportError};
pub use map::{Indexed, Item, Line, Made, Mapped, Taken, Unique, timestamp};
pub(crate) use map::{MAX_RECORD_DEPTH, attach, blocks_text, depth, node_id, place};
pub use read::{Read, is_subagent_file, read_lines, subagents_beside, transcripts};

/// Whose transcripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code: `~/.claude/projects/<dir>/<sessionId>.jsonl`.
    ClaudeCode,
    /// Codex CLI: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`.
    Codex,
}

impl Agent {
    /// The session's `source` and its nodes' `metadata.source`.
    pub fn source(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }

    /// The agent's name, for people.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
        }
    }

    /// Where the agent keeps its transcripts.
    pub fn default_root(self) -> Result<PathBuf> {
        Ok(match self {
            Agent::ClaudeCode => crate::layout::paths::home_dir(
                "no `$HOME`, so no default transcript directory",
                "give the transcripts' paths",
            )?
            .join(".claude")
            .join("projects"),
            Agent::Codex => codex_home()?.join("sessions"),
        })
    }

    /// Map lines to nodes: from the start, or after what `seed` (Claude
    /// Code) or `state` (Codex) says of the lines before them; `taken` says
    /// which node ids an earlier import gave other nodes ([`Taken`]).
    fn map(self, lines: Vec<Line>, seed: &Seed, state: Option<&Value>, taken: &Taken) -> Mapped {
        match self {
            Agent::ClaudeCode => claude::map(lines, seed, taken),
            Agent::Codex => codex::map(lines, state, taken),
        }
    }
}

/// `$CODEX_HOME`, or `~/.codex`.
pub fn codex_home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    Ok(crate::layout::paths::home_dir(
        "neither `$CODEX_HOME` nor `$HOME` is set",
        "set `CODEX_HOME` or give the rollouts' paths",
    )?
    .join(".codex"))
}

/// The metadata key of a node whose turn the user stopped (Claude Code's
/// interrupt marker, Codex's `turn_aborted`): its commit says
/// `Status: interrupted`.
use crate::session::INTERRUPTED;

/// How one transcript went.
#[derive(Debug, Default)]
pub struct Outcome {
    pub session: String,
    pub path: PathBuf,
    /// The session was created by this import.
    pub created: bool,
    pub turns: usize,
    pub nodes: usize,
    /// Lines not imported, with the reason (a torn last line).
    pub skipped: Vec<(usize, String)>,
    /// Lines kept raw because they are not JSON objects.
    pub unparsed: usize,
    /// Records seen twice (resume copies), kept but not made nodes again.
    pub duplicates: usize,
    /// Nodes of the turn the transcript has not closed yet, kept pending.
    pub open: usize,
    /// Lines read from a transcript no session was made of, none of them
    /// part of a conversation (not a transcript of this agent's): nothing
    /// was imported. `None` when a conversation was found, or read before.
    pub no_conversation: Option<usize>,
}

/// What a command asks of an import of one transcript.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Whose transcript.
    pub agent: Agent,
    /// Bind a new session to this project (`--project`); else to the
    /// registered project whose directory is the transcript's `cwd`.
    pub project: Option<&'a str>,
    /// Say what would be imported, and write nothing.
    pub dry_run: bool,
    /// The session is over (`SessionEnd`, `import --finish`).
    pub finish: bool,
    /// How long to wait for a session's lock.
    pub locks: LockOptions,
}

/// Import one transcript of `agent`.
///
/// Where it starts reading (the cursor) is read before the session lock:
/// another run may move the cursor meanwhile. That is safe both ways: every
/// line before any cursor ever written is in a node, and so is its uuid row
/// (rows are written before the cursor), so lines this run did not read are
/// in the session already, and lines it read that another run wrote are
/// found there (their nodes exist) and added no second time.
///
/// What is written is a function of the transcript alone, so that any
/// sequence of its prefixes imported one after the other ends as one
/// import of the whole: the turns the transcript has closed (a later turn
/// began, or the turn's end record came) go into `history/`, committed one
/// commit per turn, each with meta.json as it stood after the turn; the
/// turn still open is kept whole in the session's pending area
/// ([`crate::layout::pending`]), outside the committed tree, until a later
/// import finds it closed. `finish` (the session is over: `SessionEnd`,
/// `import --finish`) writes the open turn too, `Status: interrupted` when
/// it was cut off, and the records after the last node.
pub fn transcript(
    state: &StateDir,
    path: &Path,
    opts: &Options,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    crate::out::trace("import: start");
    let target = plan::locate(state, opts.agent, path)?;
    let resume = cursor::resume(&target);
    crate::out::trace("import: cursor");
    let reading = read_and_map(&target, &resume)?;
    let mut out = Outcome {
        session: target.session.clone(),
        path: path.to_path_buf(),
        unparsed: reading.mapped.unparsed,
        duplicates: reading.mapped.duplicates,
        ..Default::default()
    };
    if let Some(t) = reading.torn {
        out.skipped
            .push((t, "torn last line (left for the next import)".into()));
    }
    let plan = plan::plan(&target, reading, resume.from, opts.finish);
    if plan.items.is_empty() && plan.open.is_empty() && target.existing.is_none() {
        out.no_conversation = Some(plan.end.0);
        return Ok(out);
    }
    if opts.dry_run {
        let _lock = match &target.existing {
            Some(sd) => Some(lock::session(sd, lock::Kind::Shared, opts.locks)?),
            None => None,
        };
        out.created = target.existing.is_none();
        let f = plan::fresh(target.existing.as_ref(), plan.items, &target)?;
        out.nodes = f.items.len();
        out.turns = f.items.iter().filter(|(i, _)| i.starts_turn()).count();
        out.open = plan.open.len();
        return Ok(out);
    }
    write::write(state, opts, target, plan, &mut out, warn)?;
    Ok(out)
}

/// What a run read of its transcript, mapped.
struct Reading {
    mapped: Mapped,
    /// The transcript's first time, when it was read from its start.
    first_time: Option<f64>,
    /// The torn last line, left for the next import.
    torn: Option<usize>,
    /// After the last line read whole (line number, offset).
    end: (usize, u64),
}

/// Read `target`'s transcript from where `resume` says and map its lines.
fn read_and_map(target: &plan::Target, resume: &cursor::Resume) -> Result<Reading> {
    let (agent, path, from) = (target.agent, target.path, resume.from);
    let read = read_lines(path, from, u64::MAX)?;
    crate::out::trace("import: lines read");
    // A new session is dated by the transcript's first record that has a
    // time: a line every prefix that makes the session has read.
    let first_time = read
        .lines
        .iter()
        .filter(|_| from.1 == 0)
        .filter_map(|l| l.record.as_ref()?["timestamp"].as_str().and_then(timestamp))
        .next();
    let wanted: cursor::Wanted = read
        .lines
        .iter()
        .filter_map(|l| l.record.as_ref())
        .flat_map(|r| ["uuid", "parentUuid", "logicalParentUuid"].map(|k| r[k].as_str()))
        .flatten()
        .map(str::as_bytes)
        .collect();
    let seed = Seed::parse(&resume.rows, from.1, &wanted);
    drop(wanted);
    let torn = read.torn;
    let end = (read.end_line, read.end);
    crate::out::trace("import: read and parsed");
    // Node ids an earlier import gave other nodes.
    let catalog = match &target.existing {
        // Without the session lock (mapping takes none): the cache is not
        // written.
        Some(sd) => Some((sd.history(), Catalog::peek(sd)?)),
        None => None,
    };
    let taken = |id: &str, made: &Made| -> bool {
        let Some((history, catalog)) = &catalog else {
            return false;
        };
        // Read without the session lock: a node another import is writing
        // this instant may not read whole yet, and is taken for the same
        // node (what it most likely is; a wrong guess fails the write with
        // node_exists, not a node written twice).
        catalog.get(id).is_some_and(|e| {
            crate::layout::history::read_node(history, &e).is_ok_and(|n| made.is_not(&n))
        })
    };
    let mapped = agent.map(read.lines, &seed, resume.state.as_ref(), &taken);
    drop(catalog);
    crate::out::trace("import: mapped");
    Ok(Reading {
        mapped,
        first_time,
        torn,
        end,
    })
}
