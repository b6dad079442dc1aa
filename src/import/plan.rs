//! The plan of a run: which session a transcript goes into ([`locate`]),
//! what of the mapping is written and how it is cut into commits (the
//! closed turns, each unit's first node starting a commit; the turn still
//! open; the records after the last node; where the next run starts:
//! [`plan`]), and which of those nodes the session lacks ([`fresh`]: nodes
//! an import cut short wrote are not written again, and the lines read
//! again go with the next new node).

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::cursor::{Cursors, saved_base};
use super::read::{probe, subagent_returned};
use super::{Agent, Item, Line, Mapped, is_subagent_file, node_id, timestamp};
use crate::error::Result;
use crate::layout::history::Catalog;
use crate::layout::schema::{self, Meta, Node};
use crate::layout::{SessionDir, StateDir};

/// Where a transcript goes: the session it names, or, for a Codex fork,
/// the session it was forked from.
pub(super) struct Target<'a> {
    pub agent: Agent,
    pub path: &'a Path,
    /// The session the transcript's records name, if they name one.
    pub probed: Option<String>,
    /// The transcript's own session id.
    pub own: String,
    /// The session it is imported into.
    pub session: String,
    /// That session, if it exists.
    pub existing: Option<SessionDir>,
}

impl Target<'_> {
    /// The transcript's key in the session's cursors and pending area.
    pub fn key(&self) -> &str {
        &self.own
    }

    /// Lines of another transcript than the session's own name it.
    pub fn foreign(&self) -> Option<&str> {
        (self.own != self.session).then_some(self.own.as_str())
    }
}

/// The session `agent`'s transcript at `path` goes into.
pub(super) fn locate<'a>(state: &StateDir, agent: Agent, path: &'a Path) -> Result<Target<'a>> {
    // The session, from the transcript's first records: its own, or, for a
    // fork, the one it was forked from (when that was imported), where it
    // is a retry branch. (A fork imported before its original stays a
    // session of its own.)
    let (probed, forked_from) = probe(agent, path)?;
    crate::out::trace("import: probed");
    let own = probed.clone().unwrap_or_else(|| {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match agent {
            Agent::ClaudeCode => format!("claude-{stem}"),
            Agent::Codex => format!("codex-{stem}"),
        }
    });
    crate::layout::ids::session_id(&own)?;
    let is_session = |id: &str| -> Result<bool> {
        Ok(crate::layout::ids::session_id(id).is_ok() && state.find_session_if_any(id)?.is_some())
    };
    let session = match forked_from {
        Some(f) if !is_session(&own)? && is_session(&f)? => f,
        _ => own.clone(),
    };
    let existing = state.find_session_if_any(&session)?;
    // A session of that name that no import of this agent made (one made
    // by hand, by `append --create`) is not added to: its records and the
    // transcript's would read as one conversation.
    if let Some(sd) = &existing
        && let Ok(meta) = Meta::read(&sd.meta())
        && meta.str("source") != Some(agent.source())
    {
        return Err(super::ImportError::ForeignSession {
            session,
            agent,
            found: meta.str("source").map(str::to_string),
        }
        .into());
    }
    Ok(Target {
        agent,
        path,
        probed,
        own,
        session,
        existing,
    })
}

/// What a run writes.
pub(super) struct Plan {
    /// The nodes of the turns the transcript has closed (all, when the
    /// session is over), each with whether it starts a commit.
    pub items: Vec<(Item, bool)>,
    /// The turn still open, kept pending.
    pub open: Vec<Item>,
    /// The lines after the last node, kept pending.
    pub trailing: Vec<Line>,
    /// The session is over: the open turn is written too.
    pub finish: bool,
    /// The last turn written was cut off (`Status: interrupted`).
    pub interrupted: bool,
    /// Where reading started (offset, line number).
    pub from: (u64, usize),
    /// Where the next import starts (line number, offset).
    pub next: (usize, u64),
    /// After the last line read whole (line number, offset).
    pub end: (usize, u64),
    /// The transcript's first time, when it was read from its start: a
    /// new session's date.
    pub first_time: Option<f64>,
    /// The rest of the mapping (its items and leftover lines taken).
    pub mapped: Mapped,
}

/// The plan of a run over what it mapped of `target`'s transcript.
pub(super) fn plan(
    target: &Target,
    reading: super::Reading,
    from: (u64, usize),
    finish: bool,
) -> Plan {
    let super::Reading {
        mut mapped,
        first_time,
        end,
        ..
    } = reading;
    let (agent, path, existing) = (target.agent, target.path, &target.existing);
    let foreign = target.foreign();
    // What the transcript has closed is written; the turn it has not is
    // kept pending, unless the session is over: then it is written too
    // (interrupted when it was cut off), and the lines after the last node
    // go into a record node of their own.
    let closed = mapped.closed;
    // A run that ended the session was cut short after it wrote the open
    // turn's nodes: this one ends it as that one would have.
    let finish = finish
        || existing
            .as_ref()
            .and_then(|sd| saved_base(sd, target.key()))
            .is_some_and(|(_, ended)| ended)
        // A subagent is over once its parent has the result of the call
        // that ran it (its own transcript has no end record); asked only
        // when something is left open.
        || ((closed < mapped.items.len() || !mapped.leftover.is_empty())
            && agent == Agent::ClaudeCode
            && is_subagent_file(path)
            && target
                .probed
                .as_deref()
                .is_some_and(|s| subagent_returned(path, s)));
    let open = if finish {
        Vec::new()
    } else {
        mapped.items.split_off(closed)
    };
    let mut trailing = std::mem::take(&mut mapped.leftover);
    let interrupted = finish && cut_off(&mapped.items[closed.min(mapped.items.len())..]);
    let mut unit_starts: HashSet<usize> = mapped.unit_starts.iter().copied().collect();
    if finish && !trailing.is_empty() && (existing.is_some() || !mapped.items.is_empty()) {
        unit_starts.insert(mapped.items.len());
        mapped
            .items
            .push(record_of(std::mem::take(&mut trailing), foreign));
    }
    // Where the next import starts: the first line of what is still open.
    let next = first_line(&open)
        .into_iter()
        .chain(trailing.first().map(|l| (l.line, l.byte)))
        .min()
        .unwrap_or(end);
    // Marks the first item of each unit (a turn, or what came after a
    // turn's end) as a commit's start.
    let items: Vec<(Item, bool)> = std::mem::take(&mut mapped.items)
        .into_iter()
        .enumerate()
        .map(|(i, item)| (item, unit_starts.contains(&i)))
        .collect();
    Plan {
        items,
        open,
        trailing,
        finish,
        interrupted,
        from,
        next,
        end,
        first_time,
        mapped,
    }
}

/// The new items of an import, each with whether it starts a commit.
pub(super) struct Fresh {
    pub(super) items: Vec<(Item, bool)>,
    /// The nodes written before of what this one read.
    pub(super) written: Vec<Written>,
    pub(super) cursors: Cursors,
    pub(super) read_before: usize,
}

/// A node an earlier import wrote of what this one read.
pub(super) struct Written {
    pub(super) node: Node,
    /// It starts a commit.
    pub(super) start: bool,
}

/// What is new: the nodes the session lacks.
pub(super) fn fresh(
    sd: Option<&SessionDir>,
    items: Vec<(Item, bool)>,
    target: &Target,
) -> Result<Fresh> {
    let Some(sd) = sd else {
        return Ok(Fresh {
            items,
            written: Vec::new(),
            cursors: Cursors::default(),
            read_before: 0,
        });
    };
    let catalog = Catalog::load(sd)?;
    crate::out::trace("import: catalog loaded");
    let cursors = Cursors::read(sd, &target.session);
    let read_before = cursors.0.get(target.key()).map_or(0, |c| c.lines);
    let (items, written) = new_items(items, &catalog, sd, read_before, target.foreign());
    Ok(Fresh {
        items,
        written,
        cursors,
        read_before,
    })
}

/// Whether the last turn of a transcript stopped before its agent was done:
/// a call with no result, a reply its turn did not end (Codex), or no reply
/// after the last message or result.
fn cut_off(turn: &[Item]) -> bool {
    let last = turn
        .iter()
        .rfind(|i| !(i.role == "code" && i.caller.as_deref() == Some(schema::ROOT)));
    turn.iter().any(|i| i.open) || last.is_some_and(|i| i.role != "llm")
}

/// The items still to write: those not in the session yet. An import cut
/// short (killed after it wrote nodes, before it moved its cursor) wrote
/// the same nodes this one maps: they are skipped. Lines read after the
/// cursor that the mapping gave to a node written before (a session an
/// earlier version imported, whose cursor could stop inside a turn) go
/// with the next new node (a written node is never changed), or into a
/// `context/transcript` record node of their own when none follows. `kept`
/// lines (those a written node holds) are not carried.
fn new_items(
    items: Vec<(Item, bool)>,
    catalog: &Catalog,
    sd: &SessionDir,
    read_before: usize,
    foreign: Option<&str>,
) -> (Vec<(Item, bool)>, Vec<Written>) {
    // The nodes read again: those of the items written before.
    let written: Vec<Written> = items
        .iter()
        .filter(|(i, _)| i.lines.iter().any(|l| l.line >= read_before))
        .filter_map(|(i, start)| {
            let entry = catalog.get(&i.id)?;
            let node = crate::layout::history::read_node(&sd.history(), &entry).ok()?;
            Some(Written {
                node,
                start: *start,
            })
        })
        .collect();
    let have: HashSet<usize> = written
        .iter()
        .flat_map(|Written { node: n, .. }| {
            n.metadata
                .get("source_records")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|r| r.get("transcript").and_then(Value::as_str) == foreign)
                .filter_map(|r| r["line"].as_u64().map(|l| l as usize))
        })
        .collect();
    let mut out: Vec<(Item, bool)> = Vec::new();
    let mut carried: Vec<Line> = Vec::new();
    for (mut item, start) in items {
        if catalog.contains(&item.id) {
            carried.extend(
                item.lines
                    .into_iter()
                    .filter(|l| l.line >= read_before && !have.contains(&l.line)),
            );
            continue;
        }
        if !carried.is_empty() {
            carried.append(&mut item.lines);
            item.lines = std::mem::take(&mut carried);
        }
        out.push((item, start));
    }
    if !carried.is_empty() {
        out.push((record_of(carried, foreign), true));
    }
    (out, written)
}

/// A `context/transcript` record node for lines no node can take (they
/// come after nodes already written), dated by the last of them.
fn record_of(lines: Vec<Line>, foreign: Option<&str>) -> Item {
    let first = lines[0].line;
    let made_at = (lines[0].line, lines[0].byte);
    let time = lines
        .iter()
        .filter_map(|l| l.record.as_ref()?["timestamp"].as_str().and_then(timestamp))
        .next_back()
        .unwrap_or(0.0);
    let mut metadata = serde_json::Map::new();
    metadata.insert("display".into(), "runtime".into());
    Item {
        id: match foreign {
            Some(key) => node_id("k-", &format!("{key}-line{first}")),
            None => format!("k-line{first}"),
        },
        role: "code",
        predecessor: None,
        caller: Some(crate::layout::schema::ROOT.into()),
        name: Some("context/transcript".into()),
        input: Value::Null,
        output: Value::String(format!("{} transcript record(s)", lines.len())),
        created_at: time,
        metadata,
        lines,
        open: false,
        made_at,
    }
}

/// The first line (number, offset) the items were made from or hold.
fn first_line(items: &[Item]) -> Option<(usize, u64)> {
    items
        .iter()
        .flat_map(|i| i.lines.iter().map(|l| (l.line, l.byte)).chain([i.made_at]))
        .min()
}
