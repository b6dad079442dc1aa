//! `import`: other agents' transcripts as sessions, one commit per turn,
//! dated by the transcript, so that importing the same transcript twice or
//! on another machine gives the same commits; a transcript that grew adds
//! only its new turns.
//!
//! The mapping of records to nodes is a pure function ([`claude::map`]);
//! this module writes what it maps: the session (created dated by its first
//! record), the new nodes, meta.json (title by the usual rule, `updated_at`
//! by the last node), and one mirror run that commits each new turn. How far a transcript
//! was read (its lines) is kept in the session's private cursor file, so a
//! grown transcript's new lines go into new nodes only (nodes are never
//! rewritten).

pub mod claude;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::context::Ctx;
use crate::error::{IoContext, Result};
use crate::layout::history::Catalog;
use crate::layout::schema::{self, Meta};
use crate::layout::{SessionDir, atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::store::{self, Created, NewNode, NewSession};

use claude::{Item, Line};

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
}

/// Read a transcript's lines. A last line without its newline that does
/// not parse is torn (the agent is writing it): left for the next import.
pub fn read_lines(path: &Path) -> Result<(Vec<Line>, Option<usize>)> {
    let bytes = atomic::read(path).io("read", path)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = Vec::new();
    let mut torn = None;
    let complete = text.ends_with('\n');
    let parts: Vec<&str> = text.split_terminator('\n').collect();
    for (i, raw) in parts.iter().enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str::<Value>(raw)
            .ok()
            .filter(Value::is_object);
        if record.is_none() && i + 1 == parts.len() && !complete {
            torn = Some(i);
            break;
        }
        lines.push(Line {
            line: i,
            raw: if record.is_none() {
                raw.to_string()
            } else {
                String::new()
            },
            record,
        });
    }
    Ok((lines, torn))
}

/// The lines already read from the transcript into `sd` (its cursor).
fn cursor(sd: &SessionDir) -> usize {
    atomic::read(sd.import_cursor())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// How much of a transcript to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upto {
    /// Everything (an import, or the end of an agent's turn).
    End,
    /// The turns that are over: a later message has begun the next one (a
    /// hook in the middle of a turn). The turn still running waits, so that
    /// each turn is one commit however many events came during it.
    EndedTurns,
}

/// Import one Claude Code transcript.
pub fn claude_code(
    ctx: &Ctx,
    path: &Path,
    project: Option<&str>,
    dry_run: bool,
    upto: Upto,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let (lines, torn) = read_lines(path)?;
    // A subagent's file: its own session, named after its parent's.
    let agent = lines
        .iter()
        .find_map(|l| {
            l.record
                .as_ref()?
                .get("agentId")?
                .as_str()
                .map(str::to_string)
        })
        .filter(|_| path.components().any(|c| c.as_os_str() == "subagents"));
    let mut mapped = claude::map(lines);
    if upto == Upto::EndedTurns {
        let last_turn = mapped
            .items
            .iter()
            .rposition(Item::starts_turn)
            .unwrap_or(0);
        mapped.items.truncate(last_turn);
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let raw_id = mapped.session_id.clone().unwrap_or(stem);
    let session = match &agent {
        Some(a) => format!("claude-{raw_id}-{a}"),
        None => format!("claude-{raw_id}"),
    };
    crate::layout::ids::session_id(&session)?;
    let mut out = Outcome {
        session: session.clone(),
        path: path.to_path_buf(),
        unparsed: mapped.unparsed,
        duplicates: mapped.duplicates,
        ..Default::default()
    };
    if let Some(t) = torn {
        out.skipped
            .push((t, "torn last line (left for the next import)".into()));
    }
    if mapped.items.is_empty() {
        return Ok(out);
    }
    let existing = ctx.state.find_session(&session).ok();
    // What is new: the nodes the session lacks, the lines after its cursor.
    let pending = |sd: Option<&SessionDir>, items: Vec<Item>| -> Result<(Vec<Item>, usize)> {
        let Some(sd) = sd else {
            return Ok((new_items(items, &HashSet::new(), &|_| HashSet::new(), 0), 0));
        };
        let catalog = Catalog::load(sd)?;
        let done: HashSet<String> = items
            .iter()
            .filter(|i| catalog.contains(&i.id))
            .map(|i| i.id.clone())
            .collect();
        let kept = |id: &str| -> HashSet<usize> {
            catalog
                .get(id)
                .and_then(|e| crate::layout::history::read_node(&sd.history(), &e).ok())
                .map(|n| {
                    n.metadata
                        .get("source_records")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|r| r["line"].as_u64().map(|l| l as usize))
                        .collect()
                })
                .unwrap_or_default()
        };
        let read_before = cursor(sd);
        Ok((new_items(items, &done, &kept, read_before), read_before))
    };
    if dry_run {
        let _lock = match &existing {
            Some(sd) => Some(ctx.lock_session(sd, lock::Kind::Shared)?),
            None => None,
        };
        let (items, _) = pending(existing.as_ref(), mapped.items)?;
        out.nodes = items.len();
        out.turns = items.iter().filter(|i| i.starts_turn()).count();
        return Ok(out);
    }
    let sd = match existing {
        Some(sd) => sd,
        None => {
            let spec = NewSession {
                id: session.clone(),
                agent_id: mapped.model.clone(),
                title: None,
                source: Some("claude-code".into()),
                work_dir: mapped.cwd.clone(),
                project: bind_to(ctx, project, mapped.cwd.as_deref())?,
            };
            let first = mapped.items[0].created_at;
            match store::create(&ctx.state, &spec, None, first, ctx.locks)? {
                Created::New(sd) => {
                    out.created = true;
                    sd
                }
                Created::Existing(sd) => sd,
            }
        }
    };
    // Decided under the lock: two imports of one transcript (a hook and a
    // cron job) add each node once.
    let _lock = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
    let (items, read_before) = pending(Some(&sd), mapped.items)?;
    out.nodes = items.len();
    out.turns = items.iter().filter(|i| i.starts_turn()).count();
    if items.is_empty() {
        // Nodes an import wrote before it was killed are committed now.
        mirror::commit_pending(
            &sd,
            &session,
            &CommitOptions {
                now: crate::out::now(),
                bulk: true,
                ..Default::default()
            },
            &mut |_| Ok(()),
            warn,
        )?;
        return Ok(out);
    }
    let mut meta = Meta::read(&sd.meta())?;
    let before = meta.clone();
    // Every new node, then one mirror run: one commit per turn (each dated
    // by its nodes), their objects in one pack.
    let last = items.iter().map(|i| i.created_at).fold(0.0, f64::max);
    let read = items
        .iter()
        .flat_map(|i| i.lines.iter().map(|l| l.line + 1))
        .max()
        .unwrap_or(0)
        .max(read_before);
    // The list's preview: the latest user message.
    let preview = items
        .iter()
        .rev()
        .find(|i| i.role == "user")
        .and_then(|i| i.output.as_str())
        .map(schema::preview);
    for item in items {
        let time = item.created_at.max(0.0);
        store::append(&sd, &mut meta, node(item), time)?;
    }
    if meta.title().is_empty() && !meta.flag("_user_titled") {
        let text = store::first_user_text(&sd, &Catalog::load(&sd)?);
        let title = text
            .map(|t| crate::session::title_from_text(&t))
            .unwrap_or_default();
        if !title.is_empty() {
            meta.set("title", title);
            meta.set("_auto_titled", true);
        }
    }
    meta.set("updated_at", last);
    atomic::write(&sd.meta(), &meta.to_json())?;
    let made = mirror::commit_pending(
        &sd,
        &session,
        &CommitOptions {
            now: last,
            bulk: true,
            ..Default::default()
        },
        &mut |_| Ok(()),
        warn,
    )?
    .len() as u64;
    atomic::write(&sd.import_cursor(), format!("{read}\n").as_bytes())?;
    if meta != before || preview.is_some() {
        registry::journal_append(
            &ctx.state,
            &schema::index_row(&meta, &session, preview.as_deref()),
        )?;
    }
    if mirror::maintain_if_due(&sd, made)? == Some(false) {
        warn("`git` was not found: skipping background packing of the session repo".into());
    }
    Ok(out)
}

/// The project a new session is bound to: `--project`, else the registered
/// project whose directory is the transcript's `cwd`.
fn bind_to(ctx: &Ctx, project: Option<&str>, cwd: Option<&str>) -> Result<Option<String>> {
    if let Some(key) = project {
        return Ok(Some(crate::project::get(&ctx.state, key)?.id).filter(|p| p != "default"));
    }
    let Some(cwd) = cwd else { return Ok(None) };
    let projects = crate::layout::projects::read(&ctx.state)?;
    Ok(crate::layout::projects::find(&projects, cwd)
        .filter(|p| p.id != "default" && !p.path_missing())
        .map(|p| p.id))
}

/// The items still to write: those not in the session yet. Lines read
/// after the cursor that the mapping gave to a node already written go
/// with the next new node (a written node is never changed), or, when
/// there is none, into a `context/transcript` record node of their own.
///
/// After the cursor, a line may already be in a written node all the same
/// (an import that died after writing nodes, before moving the cursor):
/// `kept` says which lines a written node holds, and those are not carried.
fn new_items(
    items: Vec<Item>,
    done: &HashSet<String>,
    kept: &dyn Fn(&str) -> HashSet<usize>,
    read_before: usize,
) -> Vec<Item> {
    let have: HashSet<usize> = items
        .iter()
        .filter(|i| done.contains(&i.id) && i.lines.iter().any(|l| l.line >= read_before))
        .flat_map(|i| kept(&i.id))
        .collect();
    // A tool call still waiting for its result, in the last turn: it and
    // what follows wait for the next import (a written node never changes).
    let mut items = items;
    let last_turn = items.iter().rposition(Item::starts_turn).unwrap_or(0);
    if let Some(open) = items
        .iter()
        .skip(last_turn)
        .position(|i| i.open && !done.contains(&i.id))
    {
        items.truncate(last_turn + open);
    }
    let mut out: Vec<Item> = Vec::new();
    let mut carried: Vec<Line> = Vec::new();
    for mut item in items {
        if done.contains(&item.id) {
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
        out.push(item);
    }
    if !carried.is_empty() {
        let first = carried[0].line;
        let time = carried
            .iter()
            .filter_map(|l| {
                l.record.as_ref()?["timestamp"]
                    .as_str()
                    .and_then(claude::timestamp)
            })
            .next_back()
            .unwrap_or(0.0);
        let mut metadata = serde_json::Map::new();
        metadata.insert("display".into(), "runtime".into());
        out.push(Item {
            id: format!("k-line{first}"),
            role: "code",
            predecessor: None,
            caller: Some(crate::layout::schema::ROOT.into()),
            name: Some("context/transcript".into()),
            input: Value::Null,
            output: Value::String(format!("{} transcript record(s)", carried.len())),
            created_at: time,
            metadata,
            lines: carried,
            open: false,
        });
    }
    out
}

/// The node an item is written as.
fn node(item: Item) -> NewNode {
    let mut metadata = item.metadata;
    metadata.insert("source".into(), "claude-code".into());
    metadata.insert("source_records".into(), claude::kept(&item.lines));
    NewNode {
        role: item.role.into(),
        id: Some(item.id),
        predecessor: Some(item.predecessor),
        caller: item.caller,
        name: item.name,
        input: item.input,
        output: item.output,
        metadata,
        created_at: Some(item.created_at),
        ..Default::default()
    }
}

/// Transcripts under `path`: the file itself, or every `*.jsonl` below the
/// directory, sorted (main transcripts before their subagents').
pub fn transcripts(path: &Path) -> Result<Vec<PathBuf>> {
    let md = std::fs::metadata(path).io("read", path)?;
    if md.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(path)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    out.sort_by_key(|p| {
        (
            p.components().any(|c| c.as_os_str() == "subagents"),
            p.clone(),
        )
    });
    Ok(out)
}
