//! `import`: other agents' transcripts as sessions, one commit per turn,
//! dated by the transcript, so that importing the same transcript twice or
//! on another machine gives the same commits; a transcript that grew adds
//! only its new turns.
//!
//! The mapping of records to nodes is a pure function per agent
//! ([`claude::map`], [`codex::map`]); this module writes what it maps: the
//! session (created dated by its first record), the new nodes, meta.json
//! (title by the usual rule, `updated_at` by the last node), and one mirror
//! run that commits each new turn (and each record node on its own, so the
//! commits do not depend on how the transcript was cut). How far each
//! transcript was read (its lines) is kept in the session's private cursor
//! file, so a grown transcript's new lines go into new nodes only (nodes are
//! never rewritten). A Codex fork is imported into the session it was
//! forked from; its records name it (`"transcript"`).
//!
//! `settings`: `hook install`'s edits of an agent's hook settings.

pub mod claude;
pub mod codex;
pub mod settings;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::context::Ctx;
use crate::error::{IoContext, Result};
use crate::layout::history::Catalog;
use crate::layout::schema::{self, Meta};
use crate::layout::{SessionDir, atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::store::{self, Created, NewNode, NewSession};

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

    /// Where the agent keeps its transcripts.
    pub fn default_root(self) -> Result<PathBuf> {
        let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let home = || {
            non_empty("HOME").map(PathBuf::from).ok_or_else(|| {
                crate::error::Error::usage(
                    "usage::no_home",
                    "no `$HOME`, so no default transcript directory",
                    Some("give the transcripts' paths".into()),
                )
            })
        };
        Ok(match self {
            Agent::ClaudeCode => home()?.join(".claude").join("projects"),
            Agent::Codex => codex_home()?.join("sessions"),
        })
    }

    fn map(self, path: &Path, lines: Vec<Line>) -> Mapped {
        match self {
            Agent::ClaudeCode => claude::map(path, lines),
            Agent::Codex => codex::map(lines),
        }
    }
}

/// `$CODEX_HOME`, or `~/.codex`.
pub fn codex_home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".codex"))
        .ok_or_else(|| {
            crate::error::Error::usage(
                "usage::no_home",
                "neither `$CODEX_HOME` nor `$HOME` is set",
                Some("set `CODEX_HOME` or give the rollouts' paths".into()),
            )
        })
}

/// One line of a transcript.
#[derive(Debug, Clone)]
pub struct Line {
    pub line: usize,
    /// The record, or `None` for a line that is not a JSON object.
    pub record: Option<Value>,
    pub raw: String,
}

impl Line {
    /// The line as a node keeps it: `{"line", "record"|"raw"}`, and
    /// `"transcript"` when it is not the session's own transcript (a Codex
    /// fork imported into the session it forked from).
    fn kept(&self, transcript: Option<&str>) -> Value {
        let mut v = match &self.record {
            Some(r) => json!({"line": self.line, "record": r}),
            None => json!({"line": self.line, "raw": self.raw}),
        };
        if let Some(t) = transcript {
            v["transcript"] = t.into();
        }
        v
    }
}

/// One node to write.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    /// `user`, `llm` or `code`.
    pub role: &'static str,
    /// `Some(ROOT)` for a first turn; `None` for a node with a caller.
    pub predecessor: Option<String>,
    pub caller: Option<String>,
    pub name: Option<String>,
    pub input: Value,
    pub output: Value,
    pub created_at: f64,
    pub metadata: Map<String, Value>,
    /// The source lines it carries, in file order.
    pub lines: Vec<Line>,
    /// Still growing: a tool call whose result has not arrived, a Codex
    /// reply whose turn has not completed.
    pub open: bool,
}

impl Item {
    /// A top-level user node: the start of a turn.
    pub fn starts_turn(&self) -> bool {
        self.role == "user"
    }
}

/// What a mapping learned besides the nodes.
#[derive(Debug, Default)]
pub struct Mapped {
    pub items: Vec<Item>,
    /// The session the transcript is (`claude-<sessionId>`, `codex-<id>`),
    /// when the transcript names it.
    pub session: Option<String>,
    /// The session it was forked from (Codex `forked_from_id`).
    pub forked_from: Option<String>,
    pub cwd: Option<String>,
    /// The first reply's model: the session's agent id.
    pub model: Option<String>,
    /// Records seen twice (resume copies), kept but not made nodes again.
    pub duplicates: usize,
    /// Lines that are not JSON objects (kept raw).
    pub unparsed: usize,
}

/// A node id from a transcript id (`uuid`, `msg_…`, `toolu_…`, a turn id):
/// the characters node ids allow, at most 128.
pub(crate) fn node_id(prefix: &str, raw: &str) -> String {
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut id = format!("{prefix}{clean}");
    id.truncate(128);
    id
}

/// Unix seconds of an ISO 8601 UTC timestamp (`2026-01-05T10:00:00.123Z`).
pub fn timestamp(s: &str) -> Option<f64> {
    let s = s.strip_suffix('Z').unwrap_or(s);
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, dd) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.splitn(3, ':');
    let (h, mi) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let sec: f64 = t.next()?.parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + dd - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3_600 + mi * 60) as f64 + sec)
}

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

/// How far each transcript of a session was read: the session's private
/// `import.lines`, a JSON object from transcript key (the session id for
/// its own transcript) to `{"lines": <lines read>, "path": <file>}`. A
/// bare number (the first format) is the lines of the session's own.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Cursors(BTreeMap<String, Cursor>);

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Cursor {
    lines: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
}

impl Cursors {
    fn read(sd: &SessionDir, session: &str) -> Cursors {
        let Ok(bytes) = atomic::read(sd.import_cursor()) else {
            return Cursors::default();
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(lines) = text.trim().parse::<usize>() {
            let mut c = Cursors::default();
            c.0.insert(session.to_string(), Cursor { lines, path: None });
            return c;
        }
        serde_json::from_str(&text).unwrap_or_default()
    }

    fn write(&self, sd: &SessionDir) -> Result<()> {
        let mut text = serde_json::to_string(self).expect("cursors serialise");
        text.push('\n');
        atomic::write(&sd.import_cursor(), text.as_bytes())
    }
}

/// The transcript file a session last read for `key`, if it still exists.
pub fn known_path(ctx: &Ctx, session: &str, key: &str) -> Option<PathBuf> {
    let sd = ctx.state.find_session(session).ok()?;
    let path = PathBuf::from(Cursors::read(&sd, session).0.get(key)?.path.clone()?);
    path.is_file().then_some(path)
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

/// Import one transcript of `agent`.
pub fn transcript(
    ctx: &Ctx,
    agent: Agent,
    path: &Path,
    project: Option<&str>,
    dry_run: bool,
    upto: Upto,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let (lines, torn) = read_lines(path)?;
    let mut mapped = agent.map(path, lines);
    if upto == Upto::EndedTurns {
        let last_turn = mapped
            .items
            .iter()
            .rposition(Item::starts_turn)
            .unwrap_or(0);
        mapped.items.truncate(last_turn);
    }
    // The transcript's own session; a fork goes into the session it was
    // forked from (when that was imported), where it is a retry branch.
    let own = mapped.session.clone().unwrap_or_else(|| {
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
    // (A fork imported before its original stays a session of its own.)
    let session = mapped
        .forked_from
        .clone()
        .filter(|_| ctx.state.find_session(&own).is_err())
        .filter(|f| crate::layout::ids::session_id(f).is_ok() && ctx.state.find_session(f).is_ok())
        .unwrap_or_else(|| own.clone());
    let key = own;
    // Lines of another transcript than the session's own name it.
    let foreign = (key != session).then_some(key.as_str());
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
    let pending = |sd: Option<&SessionDir>, items: Vec<Item>| -> Result<(Vec<Item>, Cursors)> {
        let Some(sd) = sd else {
            let items = new_items(items, &HashSet::new(), &|_| HashSet::new(), 0, foreign);
            return Ok((items, Cursors::default()));
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
                        .filter(|r| r.get("transcript").and_then(Value::as_str) == foreign)
                        .filter_map(|r| r["line"].as_u64().map(|l| l as usize))
                        .collect()
                })
                .unwrap_or_default()
        };
        let cursors = Cursors::read(sd, &session);
        let read_before = cursors.0.get(&key).map_or(0, |c| c.lines);
        Ok((
            new_items(items, &done, &kept, read_before, foreign),
            cursors,
        ))
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
                source: Some(agent.source().into()),
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
    let (items, mut cursors) = pending(Some(&sd), mapped.items)?;
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
                records_alone: true,
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
    let read_before = cursors.0.get(&key).map_or(0, |c| c.lines);
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
        store::append(&sd, &mut meta, node(agent, item, foreign), time)?;
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
    if last > meta.f64("updated_at").unwrap_or(0.0) {
        meta.set("updated_at", last);
    }
    atomic::write(&sd.meta(), &meta.to_json())?;
    let made = mirror::commit_pending(
        &sd,
        &session,
        &CommitOptions {
            now: last,
            bulk: true,
            records_alone: true,
            ..Default::default()
        },
        &mut |_| Ok(()),
        warn,
    )?
    .len() as u64;
    cursors.0.insert(
        key,
        Cursor {
            lines: read,
            path: std::path::absolute(path)
                .ok()
                .map(|p| p.to_string_lossy().into_owned()),
        },
    );
    cursors.write(&sd)?;
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
    foreign: Option<&str>,
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
            .filter_map(|l| l.record.as_ref()?["timestamp"].as_str().and_then(timestamp))
            .next_back()
            .unwrap_or(0.0);
        let mut metadata = serde_json::Map::new();
        metadata.insert("display".into(), "runtime".into());
        out.push(Item {
            id: match foreign {
                Some(key) => node_id("k-", &format!("{key}-line{first}")),
                None => format!("k-line{first}"),
            },
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
fn node(agent: Agent, item: Item, transcript: Option<&str>) -> NewNode {
    let mut metadata = item.metadata;
    metadata.insert("source".into(), agent.source().into());
    metadata.insert(
        "source_records".into(),
        Value::Array(item.lines.iter().map(|l| l.kept(transcript)).collect()),
    );
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
