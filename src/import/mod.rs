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
//! `settings`: `hook install`'s edits of an agent's hook settings.

pub mod claude;
pub mod codex;
pub mod settings;
pub mod spill;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::context::Ctx;
use crate::error::{Error, IoContext, Result};
use crate::layout::history::Catalog;
use crate::layout::schema::{self, Meta, Node};
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

/// Whether the session holds a node of id `id` other than the one a
/// transcript record made at time `at` (a message or tool id the agent used
/// again in a later turn, imported before): the new node then takes a
/// derived id ([`Unique`]). The node made at `at` itself (an import killed
/// after it wrote it, run again) keeps its id.
pub type Taken<'a> = dyn Fn(&str, &Made) -> bool + 'a;

/// What tells the node a record made from another node of its id: its
/// time, the line of the record that made it (kept in the node's
/// `source_records`; none for a tool call, whose record is its reply's),
/// and its caller.
pub struct Made<'a> {
    pub at: f64,
    pub line: Option<usize>,
    pub caller: Option<&'a str>,
}

impl Made<'_> {
    /// Whether `node` is another node than the one this made.
    pub fn is_not(&self, node: &crate::layout::schema::Node) -> bool {
        let lines = || {
            node.metadata
                .get("source_records")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r["line"].as_u64())
        };
        node.created_at != self.at
            || self.caller.is_some_and(|c| node.caller != c)
            || self.line.is_some_and(|l| !lines().any(|n| n == l as u64))
    }
}

/// Node ids made unique within a mapping and against the session: an id
/// used again gets `-2`, `-3`, … (the same on every import of the
/// transcript, whole or grown a turn at a time).
pub struct Unique<'a> {
    used: HashSet<String>,
    taken: &'a Taken<'a>,
}

impl<'a> Unique<'a> {
    pub fn new(taken: &'a Taken<'a>) -> Self {
        Unique {
            used: HashSet::new(),
            taken,
        }
    }

    /// `id` for the node `made` describes, or the first derived id that
    /// is free.
    pub fn id(&mut self, id: String, made: &Made) -> String {
        let mut cand = id.clone();
        let mut n = 2;
        while self.used.contains(&cand) || (self.taken)(&cand, made) {
            cand = node_id("", &format!("{id}-{n}"));
            n += 1;
        }
        self.used.insert(cand.clone());
        cand
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

/// One line of a transcript.
#[derive(Debug, Clone)]
pub struct Line {
    pub line: usize,
    /// Where it starts in the file.
    pub byte: u64,
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
    /// The line (number, offset) of the record that made it (a tool call:
    /// its reply's record), where reading starts again when it is held back.
    pub made_at: (usize, u64),
}

impl Item {
    /// A top-level user node: the start of a turn.
    pub fn starts_turn(&self) -> bool {
        self.role == "user"
    }
}

/// The metadata key of a node whose turn the user stopped (Claude Code's
/// interrupt marker, Codex's `turn_aborted`): its commit says
/// `Status: interrupted`.
use crate::session::INTERRUPTED;

/// What a mapping learned besides the nodes.
#[derive(Debug, Default)]
pub struct Mapped {
    pub items: Vec<Item>,
    pub cwd: Option<String>,
    /// The first reply's model: the session's agent id.
    pub model: Option<String>,
    /// Records seen twice (resume copies), kept but not made nodes again.
    pub duplicates: usize,
    /// Lines that are not JSON objects (kept raw).
    pub unparsed: usize,
    /// Lines read that no node took: read before any node, or after the
    /// last turn's end record (they go with the next node made).
    pub leftover: Vec<Line>,
    /// How many of `items` are in turns the transcript has closed (a later
    /// turn began, or a turn-end record came): no later line changes them.
    /// The rest, and `leftover`, may still change as the transcript grows.
    pub closed: usize,
    /// The items made first after a turn-end record: each starts a commit,
    /// as a turn does, wherever the transcript was cut.
    pub unit_starts: Vec<usize>,
    /// Every record with a `uuid` (Claude Code) and the node it leads to.
    pub index: Vec<Indexed>,
    /// The mapping's state before a line, at each line where it changed,
    /// and after the last line (Codex): where a later import starts again.
    pub states: Vec<(usize, codex::State)>,
    pub state_end: Option<codex::State>,
}

/// A record with a `uuid`, and the top-level node it leads to (what a
/// later record naming it as parent continues).
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    pub line: usize,
    pub uuid: String,
    pub top: String,
    /// A typed user message's (`parentUuid`, `timestamp`): a second one is
    /// a replay.
    pub typed: Option<(String, String)>,
}

/// What the records before the lines being mapped tell of them: an import
/// of a grown transcript maps only its new lines. Borrowed from the text of
/// the session's `import.uuids` (one `line\tuuid\ttop[\tparent\ttime]` row
/// per record, appended by each import): no string is copied.
#[derive(Debug, Default)]
pub struct Seed<'a> {
    /// uuid → the top-level node its record leads to.
    pub tops: std::collections::HashMap<&'a str, &'a str>,
    /// (`parentUuid`, `timestamp`) of typed user messages.
    pub typed: HashSet<(&'a str, &'a str)>,
}

impl<'a> Seed<'a> {
    /// The bytes of `import.uuids`, if the session has one.
    fn load(sd: &SessionDir) -> Option<Vec<u8>> {
        atomic::read(sd.import_uuids()).ok()
    }

    /// The rows of `text` before line `before` (rows at or after it, from
    /// an import killed before its cursor moved, are not believed) of the
    /// uuids `wanted` (the records and parents of the lines to map): the
    /// rest cannot matter to them.
    ///
    /// Every row of the session is looked at, so this runs on every hook
    /// call: a row is cut at its tabs and its uuid looked up before
    /// anything else is parsed, with a fast hash (foldhash, seeded per
    /// process like std's: the uuids come from the transcript).
    fn parse(text: &'a [u8], before: usize, wanted: &Wanted) -> Seed<'a> {
        use bstr::ByteSlice;
        let mut seed = Seed::default();
        for row in text.lines() {
            let mut f = row.splitn(6, |&b| b == b'\t');
            let (Some(line), Some(uuid), Some(top)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let typed = (f.next(), f.next());
            let parent_wanted = typed.0.is_some_and(|p| wanted.contains(p));
            if !parent_wanted && !wanted.contains(uuid) {
                continue;
            }
            let str = |b: &'a [u8]| std::str::from_utf8(b).ok();
            let believed = str(line)
                .and_then(|l| l.parse::<usize>().ok())
                .is_some_and(|l| l < before);
            let (Some(uuid), Some(top), true) = (str(uuid), str(top), believed) else {
                continue;
            };
            seed.tops.insert(uuid, top);
            if let (Some(p), Some(t)) = (typed.0.and_then(str), typed.1.and_then(str)) {
                seed.typed.insert((p, t));
            }
        }
        seed
    }
}

/// The uuids [`Seed::parse`] looks for.
type Wanted<'a> = HashSet<&'a [u8], foldhash::fast::RandomState>;

impl Seed<'_> {
    /// Append the rows of `index` before line `upto` (from `from` on).
    fn append(sd: &SessionDir, index: &[Indexed], from: usize, upto: usize) -> Result<()> {
        use std::io::Write;
        let mut text = String::new();
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        for i in index.iter().filter(|i| i.line >= from && i.line < upto) {
            text.push_str(&format!(
                "{}\t{}\t{}",
                i.line,
                clean(&i.uuid),
                clean(&i.top)
            ));
            if let Some((p, t)) = &i.typed {
                text.push_str(&format!("\t{}\t{}", clean(p), clean(t)));
            }
            text.push('\n');
        }
        if text.is_empty() {
            return Ok(());
        }
        let path = sd.import_uuids();
        let mut f = atomic::no_follow(std::fs::OpenOptions::new().append(true).create(true))
            .open(&path)
            .io("open", &path)?;
        f.write_all(text.as_bytes()).io("write", &path)
    }
}

/// The deepest a transcript record is read as JSON: a node holds it four
/// levels down (node, `metadata`, `source_records`, the entry), and a node
/// file is read with serde_json's limit of 128 levels; a deeper record is
/// kept as its text (`raw`), like a line that does not parse.
pub(crate) const MAX_RECORD_DEPTH: usize = 120;

/// How many arrays and objects are nested in `v` (a scalar: 0).
pub(crate) fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(a) => {
                deepest = deepest.max(d);
                stack.extend(a.iter().map(|x| (x, d + 1)));
            }
            Value::Object(o) => {
                deepest = deepest.max(d);
                stack.extend(o.values().map(|x| (x, d + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// A node id from a transcript id (`uuid`, `msg_…`, `toolu_…`, a turn id):
/// the characters node ids allow, at most 128. An id that had to be
/// changed for that (another character, too long) ends in a hash of
/// itself, so that two ids that would change into one (`x/1` and `x_1`)
/// stay two nodes; the ids agents write (hex, `_`, `-`) are kept as they
/// are.
pub(crate) fn node_id(prefix: &str, raw: &str) -> String {
    const MAX: usize = 128;
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
    if clean != raw || id.len() > MAX {
        let tag = &crate::git::sha1_hex(raw.as_bytes())[..12];
        // ASCII throughout: any byte is a char boundary.
        id.truncate(MAX - tag.len() - 1);
        id.push('-');
        id.push_str(tag);
    }
    id
}

/// The text of a message's content blocks of `kinds` (`text`,
/// `input_text`, `output_text`) joined, or the content itself when it is a
/// string.
pub(crate) fn blocks_text(content: &Value, kinds: &[&str]) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let text: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"].as_str().is_some_and(|t| kinds.contains(&t)))
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

/// Keep a line that makes no node with the current node, or, before the
/// first node, until it comes.
pub(crate) fn attach(items: &mut [Item], cur: Option<usize>, leading: &mut Vec<Line>, l: Line) {
    match cur {
        Some(i) => items[i].lines.push(l),
        None => leading.push(l),
    }
}

/// Keep line `l` with node `i`, after the lines read while no node was
/// current (before the first node, after a turn's end), which are its too.
pub(crate) fn place(items: &mut [Item], i: usize, leading: &mut Vec<Line>, l: Line) {
    let lines = &mut items[i].lines;
    lines.append(leading);
    lines.push(l);
}

/// Unix seconds of an ISO 8601 UTC timestamp (`2026-01-05T10:00:00.123Z`),
/// for the years 0 to 9999 that RFC 3339 names: `None` for any other (a
/// transcript's `+275760-09-13T…` or an eighteen-digit year would overflow
/// the arithmetic below) and for a field out of its range.
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
    let in_range = (0..=9999).contains(&y)
        && (1..=12).contains(&m)
        && (1..=31).contains(&dd)
        && (0..=24).contains(&h)
        && (0..=59).contains(&mi)
        && (0.0..61.0).contains(&sec);
    if !in_range {
        return None;
    }
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
    /// Nodes of the turn the transcript has not closed yet, kept pending.
    pub open: usize,
    /// Lines read from a transcript no session was made of, none of them
    /// part of a conversation (not a transcript of this agent's): nothing
    /// was imported. `None` when a conversation was found, or read before.
    pub no_conversation: Option<usize>,
}

/// A transcript opened for reading: a regular file (a link to one is
/// followed, as the agent names its own transcript), never a FIFO, socket
/// or device, which would block or never end (`/dev/zero`) in a hook that
/// must not hold the agent up.
fn open_transcript(path: &Path) -> std::io::Result<std::fs::File> {
    let f = atomic::open_read(path)?;
    let kind = f.metadata()?.file_type();
    if kind.is_file() {
        Ok(f)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            if kind.is_dir() {
                "a directory, not a transcript: not read"
            } else {
                "not a regular file (a FIFO, socket or device): not read"
            },
        ))
    }
}

/// A transcript's lines from byte `from.0` (line number `from.1`) on, the
/// end of the last complete one, and the torn last line if any: a last line
/// without its newline that does not parse (the agent is writing it) is
/// left for the next import.
pub fn read_lines(path: &Path, from: (u64, usize), max: u64) -> Result<Read> {
    use std::io::{Read as _, Seek, SeekFrom};
    let mut f = open_transcript(path).io("read", path)?;
    let mut bytes = Vec::new();
    f.seek(SeekFrom::Start(from.0)).io("read", path)?;
    f.take(max).read_to_end(&mut bytes).io("read", path)?;
    let mut out = Read {
        lines: Vec::new(),
        torn: None,
        end: from.0,
        end_line: from.1,
    };
    let mut at = 0usize;
    let mut line = from.1;
    while at < bytes.len() {
        let (raw, next, complete) = match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(n) => (&bytes[at..at + n], at + n + 1, true),
            None => (&bytes[at..], bytes.len(), false),
        };
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = String::from_utf8_lossy(raw);
        let byte = from.0 + at as u64;
        at = next;
        let this = line;
        line += 1;
        if text.trim().is_empty() {
            if complete {
                out.end = from.0 + at as u64;
                out.end_line = line;
            }
            continue;
        }
        // A record nested too deep to be read back once inside a node (its
        // `metadata.source_records` adds levels) is kept as its text.
        let record = serde_json::from_str::<Value>(&text)
            .ok()
            .filter(|r| r.is_object() && depth(r) <= MAX_RECORD_DEPTH);
        if record.is_none() && !complete {
            out.torn = Some(this);
            break;
        }
        out.end = from.0 + at as u64;
        out.end_line = line;
        out.lines.push(Line {
            line: this,
            byte,
            raw: if record.is_none() {
                text.into_owned()
            } else {
                String::new()
            },
            record,
        });
    }
    Ok(out)
}

/// What [`read_lines`] read.
pub struct Read {
    pub lines: Vec<Line>,
    /// The torn last line.
    pub torn: Option<usize>,
    /// The offset after the last line read whole, and its line number.
    pub end: u64,
    pub end_line: usize,
}

/// The session a transcript is, and the one it was forked from (Codex),
/// named by its first record that names one (read one line at a time), as
/// the mapping names them.
fn probe(agent: Agent, path: &Path) -> Result<(Option<String>, Option<String>)> {
    use std::io::BufRead as _;
    let f = open_transcript(path).io("read", path)?;
    for raw in std::io::BufReader::new(f).split(b'\n') {
        let raw = raw.io("read", path)?;
        let Ok(r) = serde_json::from_slice::<Value>(&raw) else {
            continue;
        };
        match agent {
            Agent::ClaudeCode => {
                if let Some(sid) = r["sessionId"].as_str() {
                    // A subagent's records name its parent's session: its
                    // own is named by its agent too.
                    let agent = is_subagent_file(path).then(|| {
                        r["agentId"].as_str().map(str::to_string).or_else(|| {
                            let stem = path.file_stem()?.to_str()?;
                            stem.strip_prefix("agent-").map(str::to_string)
                        })
                    });
                    let own = match agent.flatten() {
                        Some(a) => format!("claude-{sid}-{a}"),
                        None => format!("claude-{sid}"),
                    };
                    return Ok((Some(own), None));
                }
            }
            Agent::Codex => {
                let r = codex::legacy_view(&r, None).unwrap_or(r);
                let p = &r["payload"];
                if r["type"] == "session_meta"
                    && let Some(id) = p["id"].as_str().or(p["session_id"].as_str())
                {
                    let fork = p["forked_from_id"].as_str().map(|f| format!("codex-{f}"));
                    return Ok((Some(format!("codex-{id}")), fork));
                }
            }
        }
    }
    Ok((None, None))
}

/// Where an incremental import of a Claude Code transcript starts: the
/// session's first line no node holds, when the file still has the bytes
/// the cursor was taken on (a newline just before it); else the start.
fn window(path: &Path, cursor: Option<&Cursor>) -> (u64, usize) {
    use std::io::{Read as _, Seek, SeekFrom};
    let Some((bytes, lines)) = cursor.and_then(|c| Some((c.bytes?, c.lines))) else {
        return (0, 0);
    };
    if bytes == 0 {
        return (0, 0);
    }
    let mut b = [0u8];
    let aligned = open_transcript(path)
        .and_then(|mut f| {
            f.seek(SeekFrom::Start(bytes - 1))?;
            f.read_exact(&mut b)
        })
        .is_ok()
        && b[0] == b'\n';
    if aligned { (bytes, lines) } else { (0, 0) }
}

/// How far each transcript of a session was read: the session's private
/// `import.lines`, a JSON object from transcript key (the session id for
/// its own transcript) to `{"lines": <lines read>, "path": <file>}`. A
/// bare number (the first format) is the lines of the session's own.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Cursors(BTreeMap<String, Cursor>);

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Cursor {
    /// The first line no node holds (every line before it is in the
    /// session); `bytes`, where it starts.
    lines: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// The mapping's state at `lines` (Codex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<Value>,
}

impl Cursors {
    fn read(sd: &SessionDir, session: &str) -> Cursors {
        let Ok(bytes) = atomic::read(sd.import_cursor()) else {
            return Cursors::default();
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(lines) = text.trim().parse::<usize>() {
            let mut c = Cursors::default();
            c.0.insert(
                session.to_string(),
                Cursor {
                    lines,
                    ..Default::default()
                },
            );
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

/// Node ids a session's nodes no longer have (`fetch --take` kept a node
/// under an id of its own: old → new): what the importer keeps of its
/// transcripts' records (the node each record leads to in `import.uuids`,
/// the nodes of the open turns in `import.pending`, the last top-level node
/// of a Codex cursor) names the new ids, so the turns the transcript adds
/// later go on from the right node.
pub fn ids_renamed(sd: &SessionDir, renamed: &BTreeMap<String, String>) -> Result<()> {
    if renamed.is_empty() {
        return Ok(());
    }
    let to = |id: &str| renamed.get(id).cloned();
    if let Some(bytes) = atomic::read_if_present(&sd.import_uuids())? {
        let text = String::from_utf8_lossy(&bytes);
        let mut out = String::with_capacity(text.len());
        let mut changed = false;
        for row in text.split_inclusive('\n') {
            let mut f: Vec<&str> = row.splitn(4, '\t').collect();
            let (body, nl) = match f.last().and_then(|l| l.strip_suffix('\n')) {
                Some(b) => (b, "\n"),
                None => (*f.last().unwrap_or(&""), ""),
            };
            let last = f.len() - 1;
            f[last] = body;
            let top = (f.len() >= 3).then(|| to(f[2])).flatten();
            if let Some(new) = &top {
                f[2] = new;
                changed = true;
            }
            out.push_str(&f.join("\t"));
            out.push_str(nl);
        }
        if changed {
            atomic::write(&sd.import_uuids(), out.as_bytes())?;
        }
    }
    let mut cursors = Cursors::read(sd, "");
    let mut moved = false;
    for c in cursors.0.values_mut() {
        if let Some(Value::Object(st)) = &mut c.state
            && let Some(new) = st.get("last_top").and_then(Value::as_str).and_then(&to)
        {
            st.insert("last_top".into(), new.into());
            moved = true;
        }
    }
    if moved {
        cursors.write(sd)?;
    }
    if let Some(bytes) = atomic::read_if_present(&sd.import_pending())?
        && let Ok(mut v) = serde_json::from_slice::<Value>(&bytes)
    {
        // Only the nodes' own fields: their content and the transcript's
        // records are kept as they are.
        let rename = |s: &mut String, changed: &mut bool| {
            if let Some(new) = to(s) {
                *s = new;
                *changed = true;
            }
        };
        let walk = |v: &mut Value, changed: &mut bool| {
            let Value::Object(opens) = v else { return };
            for open in opens.values_mut() {
                let Some(Value::Array(nodes)) = open.get_mut("nodes") else {
                    continue;
                };
                for node in nodes.iter_mut().filter_map(Value::as_object_mut) {
                    for key in ["id", "predecessor", "caller", "called_by"] {
                        if let Some(Value::String(s)) = node.get_mut(key) {
                            rename(s, changed);
                        }
                    }
                    if let Some(Value::Array(reads)) = node.get_mut("reads") {
                        for r in reads.iter_mut() {
                            if let Value::String(s) = r {
                                rename(s, changed);
                            }
                        }
                    }
                    if let Some(Value::String(s)) = node
                        .get_mut("metadata")
                        .and_then(Value::as_object_mut)
                        .and_then(|m| m.get_mut("parent_id"))
                    {
                        rename(s, changed);
                    }
                }
            }
        };
        let mut changed = false;
        walk(&mut v, &mut changed);
        if changed {
            let mut out = serde_json::to_vec(&v).expect("json");
            out.push(b'\n');
            atomic::write(&sd.import_pending(), &out)?;
        }
    }
    Ok(())
}

/// The transcript file a session last read for `key`, if it still exists.
pub fn known_path(ctx: &Ctx, session: &str, key: &str) -> Option<PathBuf> {
    let sd = ctx.state.find_session(session).ok()?;
    let path = PathBuf::from(Cursors::read(&sd, session).0.get(key)?.path.clone()?);
    path.is_file().then_some(path)
}

/// Above this many new nodes an import writes its objects as one pack.
const BULK_NODES: usize = 64;

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
    ctx: &Ctx,
    agent: Agent,
    path: &Path,
    project: Option<&str>,
    dry_run: bool,
    finish: bool,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    crate::out::trace("import: start");
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
        Ok(crate::layout::ids::session_id(id).is_ok()
            && ctx.state.find_session_if_any(id)?.is_some())
    };
    let session = match forked_from {
        Some(f) if !is_session(&own)? && is_session(&f)? => f,
        _ => own.clone(),
    };
    // A transcript imported before is read from its cursor on, what came
    // before known from the uuid rows (Claude Code) or the state kept in
    // the cursor (Codex).
    let mut rows = Vec::new();
    let mut state: Option<Value> = None;
    let mut from = (0, 0);
    let existing = ctx.state.find_session_if_any(&session)?;
    // A session of that name that no import of this agent made (one made
    // by hand, by `append --create`) is not added to: its records and the
    // transcript's would read as one conversation.
    if let Some(sd) = &existing
        && let Ok(meta) = Meta::read(&sd.meta())
        && meta.str("source") != Some(agent.source())
    {
        return Err(Error::refused(
            "import::foreign_session",
            format!(
                "session `{session}` exists and is no import of {} (its source is {}): the transcript is not added to it",
                agent.source(),
                meta.str("source")
                    .map_or("not set".into(), |s| format!("`{s}`"))
            ),
            Some(format!(
                "move that session aside (`git-session delete {session}` once it is kept elsewhere), then import again"
            )),
        ));
    }
    if probed.is_some()
        && let Some(sd) = &existing
    {
        let cursors = Cursors::read(sd, &session);
        let cursor = cursors.0.get(&own);
        let at = window(path, cursor);
        match agent {
            Agent::ClaudeCode => {
                if let Some(r) = Seed::load(sd).filter(|_| at.1 > 0) {
                    rows = r;
                    from = at;
                }
            }
            Agent::Codex => {
                if let Some(st) = cursor.and_then(|c| c.state.clone()).filter(|_| at.1 > 0) {
                    state = Some(st);
                    from = at;
                }
            }
        }
    }
    crate::out::trace("import: cursor");
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
    let wanted: Wanted = read
        .lines
        .iter()
        .filter_map(|l| l.record.as_ref())
        .flat_map(|r| ["uuid", "parentUuid", "logicalParentUuid"].map(|k| r[k].as_str()))
        .flatten()
        .map(str::as_bytes)
        .collect();
    let seed = Seed::parse(&rows, from.1, &wanted);
    drop(wanted);
    let torn = read.torn;
    let end = (read.end_line, read.end);
    crate::out::trace("import: read and parsed");
    // Node ids an earlier import gave other nodes.
    let catalog = match &existing {
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
    let mut mapped = agent.map(read.lines, &seed, state.as_ref(), &taken);
    drop(catalog);
    crate::out::trace("import: mapped");
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
            .and_then(|sd| saved_base(sd, &key))
            .is_some_and(|(_, ended)| ended)
        // A subagent is over once its parent has the result of the call
        // that ran it (its own transcript has no end record); asked only
        // when something is left open.
        || ((closed < mapped.items.len() || !mapped.leftover.is_empty())
            && agent == Agent::ClaudeCode
            && is_subagent_file(path)
            && probed
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
    if mapped.items.is_empty() && open.is_empty() && existing.is_none() {
        out.no_conversation = Some(end.0);
        return Ok(out);
    }
    // Marks the first item of each unit (a turn, or what came after a
    // turn's end) as a commit's start.
    let items: Vec<(Item, bool)> = mapped
        .items
        .into_iter()
        .enumerate()
        .map(|(i, item)| (item, unit_starts.contains(&i)))
        .collect();
    // What is new: the nodes the session lacks.
    let fresh = |sd: Option<&SessionDir>, items: Vec<(Item, bool)>| -> Result<Fresh> {
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
        let cursors = Cursors::read(sd, &session);
        let read_before = cursors.0.get(&key).map_or(0, |c| c.lines);
        let (items, written) = new_items(items, &catalog, sd, read_before, foreign);
        Ok(Fresh {
            items,
            written,
            cursors,
            read_before,
        })
    };
    if dry_run {
        let _lock = match &existing {
            Some(sd) => Some(ctx.lock_session(sd, lock::Kind::Shared)?),
            None => None,
        };
        out.created = existing.is_none();
        let f = fresh(existing.as_ref(), items)?;
        out.nodes = f.items.len();
        out.turns = f.items.iter().filter(|(i, _)| i.starts_turn()).count();
        out.open = open.len();
        return Ok(out);
    }
    let sd = match existing {
        Some(sd) => sd,
        None => {
            let spec = NewSession {
                id: session.clone(),
                // Set by the first reply written, as every field of a
                // committed meta.json is: by the transcript up to its turn.
                agent_id: None,
                title: None,
                source: Some(agent.source().into()),
                work_dir: mapped.cwd.clone(),
                project: bind_to(ctx, project, mapped.cwd.as_deref())?,
            };
            let first = first_time
                .or(items.first().map(|(i, _)| i.created_at))
                .or(open.first().map(|i| i.created_at))
                .unwrap_or(0.0);
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
    let Fresh {
        items,
        written,
        mut cursors,
        read_before,
    } = fresh(Some(&sd), items)?;
    crate::out::trace("import: new items found");
    out.nodes = items.len();
    out.turns = items.iter().filter(|(i, _)| i.starts_turn()).count();
    out.open = open.len();
    let latest = items.iter().map(|(i, _)| i.created_at).fold(0.0, f64::max);
    // `redact = on-write`: nothing below writes a secret.
    let redact = ctx.state.redacts_on_write();
    let preview = items
        .iter()
        .rev()
        .find(|(i, _)| i.role == "user")
        .and_then(|(i, _)| i.output.as_str())
        .map(|text| {
            if redact {
                schema::preview(&crate::secrets::redact_str(text))
            } else {
                schema::preview(text)
            }
        });
    let before = Meta::read(&sd.meta())?;
    // An import of this transcript cut short: meta.json goes on from where
    // that one began, over the nodes it wrote.
    let (mut meta, written) = match saved_base(&sd, &key) {
        Some((base, _)) => (moved_back(before.clone(), &base), written),
        None => (before.clone(), Vec::new()),
    };
    let saving = !items.is_empty() || !written.is_empty();
    if saving {
        save_base(&sd, &key, Some((&meta, finish)))?;
    }
    // Every new node, then one mirror run: one commit per unit (each dated
    // by its nodes, its meta.json as it stood after its last node), their
    // objects in one pack.
    let mut metas: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut split_before: Vec<u64> = Vec::new();
    // The attachments each node names, committed with it.
    let mut attached: Vec<(u64, String)> = Vec::new();
    let mut updated = meta.f64("updated_at").unwrap_or(0.0);
    // meta.json after each node, as it moves: the same for the nodes an
    // import cut short wrote (read again) as for those written now.
    let mut after = |meta: &mut Meta, n: &Node, start: bool| {
        if start {
            split_before.push(n.seq as u64);
        }
        updated = updated.max(n.created_at);
        meta.set("updated_at", updated);
        follow(meta, n);
        metas.push((n.seq as u64, meta.to_json()));
        attached.extend(
            spill::named(&n.metadata)
                .into_iter()
                .map(|p| (n.seq as u64, p)),
        );
    };
    for Written { node: n, start, .. } in &written {
        store::moved(&mut meta, n, n.created_at.max(0.0));
        after(&mut meta, n, *start);
    }
    if !items.is_empty() {
        let mut starts = Vec::with_capacity(items.len());
        let naming = ctx.state.naming_for(&sd);
        let nodes: Vec<(NewNode, f64)> = items
            .into_iter()
            .map(|(item, start)| {
                starts.push(start);
                let time = item.created_at.max(0.0);
                let mut new = node(agent, item, foreign);
                new.naming = naming;
                // Secrets go before the long strings are stored apart.
                if redact {
                    crate::secrets::redact_node_values(
                        &mut [&mut new.input, &mut new.output],
                        &mut [&mut new.metadata, &mut new.extra],
                    );
                }
                // Too big for a node file: its long strings are stored
                // once, whole, beside it.
                spill::fit(&sd, &mut new)?;
                Ok((new, time))
            })
            .collect::<Result<_>>()?;
        let mut k = 0;
        store::append_all_with(&sd, &mut meta, nodes, &mut |meta, n| {
            after(meta, n, starts[k]);
            k += 1;
        })?;
        crate::out::trace("import: nodes written");
    }
    if meta != before {
        atomic::write(&sd.meta(), &meta.to_json())?;
    }
    mirror::commit_pending(
        &sd,
        &session,
        &CommitOptions {
            // (Never the clock: with `nodes_only`, every commit is dated
            // by its nodes.)
            now: latest,
            // A pack for many commits; a hook's turn or two as loose
            // objects, as `commit-turn` writes them (a pack costs more).
            bulk: out.nodes > BULK_NODES,
            metas,
            split_before,
            attached: attached
                .into_iter()
                .map(|(seq, p)| (seq, p.into_bytes()))
                .collect(),
            interrupted,
            nodes_only: true,
            ..Default::default()
        },
        &mut |_| Ok(()),
        warn,
    )?;
    if saving {
        save_base(&sd, &key, None)?;
    }
    // (Read whole, every row is known again: rows of a session imported
    // before rows were kept are written too.)
    let rows_from = if from.1 == 0 { 0 } else { read_before };
    Seed::append(&sd, &mapped.index, rows_from, next.0)?;
    // Codex: the state to go on from, if the mapping knows it there (else
    // the next run reads the rollout whole).
    let state = match agent {
        Agent::ClaudeCode => None,
        Agent::Codex if next == end => mapped.state_end.take(),
        // The state before line `next`: the last change at or before it.
        Agent::Codex => mapped
            .states
            .iter()
            .take_while(|(l, _)| *l <= next.0)
            .last()
            .map(|(_, s)| s.clone()),
    }
    .map(|s| serde_json::to_value(s).expect("a state serialises"));
    let bytes = (agent == Agent::ClaudeCode || state.is_some()).then_some(next.1);
    let cursor = Cursor {
        lines: next.0,
        bytes,
        state,
        path: std::path::absolute(path)
            .ok()
            .map(|p| p.to_string_lossy().into_owned()),
    };
    // A run that read the transcript before another one read more of it
    // (it waited for the lock) leaves that one's cursor and pending turn.
    let behind = read_before > next.0 && window(path, cursors.0.get(&key)).1 > 0;
    if behind {
        return Ok(out);
    }
    if cursors.0.get(&key) != Some(&cursor) {
        cursors.0.insert(key.clone(), cursor);
        cursors.write(&sd)?;
    }
    // The turn still open, whole, outside `history/`.
    let mut open_nodes: Vec<Node> = open
        .into_iter()
        .map(|item| pending_node(agent, item, foreign))
        .collect();
    let mut kept: Vec<Value> = trailing.iter().map(|l| l.kept(foreign)).collect();
    if redact {
        for n in &mut open_nodes {
            crate::secrets::redact_node_values(
                &mut [&mut n.input, &mut n.output],
                &mut [&mut n.metadata, &mut n.extra],
            );
        }
        crate::secrets::redact_node_values(&mut kept.iter_mut().collect::<Vec<_>>(), &mut []);
    }
    crate::layout::pending::write(&sd, &key, path, next.0, &open_nodes, &kept)?;
    if meta != before || preview.is_some() {
        registry::journal_append(
            &ctx.state,
            &schema::index_row(&meta, &session, preview.as_deref()),
        )?;
    }
    if mirror::maintain_if_due(&sd)? == Some(false) {
        warn("`git` was not found: skipping background packing of the session repo".into());
    }
    Ok(out)
}

/// The new items of an import, each with whether it starts a commit.
struct Fresh {
    items: Vec<(Item, bool)>,
    /// The nodes written before of what this one read.
    written: Vec<Written>,
    cursors: Cursors,
    read_before: usize,
}

/// A node an earlier import wrote of what this one read.
struct Written {
    node: Node,
    /// It starts a commit.
    start: bool,
}

/// meta.json before an import of transcript `key` that was cut short
/// (killed after it wrote nodes, before it made their commits), if one
/// was: a rerun goes on from it over the nodes that one wrote, so that the
/// commits are those of an import not cut short. (Written in place without
/// a flush: a torn or missing one is no base, and the rerun goes on from
/// meta.json as it is.)
fn saved_base(sd: &SessionDir, key: &str) -> Option<(Meta, bool)> {
    let bytes = atomic::read_if_present(&sd.import_base()).ok()??;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    if v["transcript"] != key {
        return None;
    }
    let meta = Meta::parse(v["meta"].to_string().as_bytes()).ok()?;
    Some((meta, v["finish"] == true))
}

/// Keep `meta` (and whether the import ends the session) as
/// [`saved_base`] gives it back, or (`None`) say no import is in flight.
fn save_base(sd: &SessionDir, key: &str, meta: Option<(&Meta, bool)>) -> Result<()> {
    let bytes = match meta {
        Some((m, finish)) => {
            let meta: Value = serde_json::from_slice(&m.to_json()).expect("meta.json is JSON");
            serde_json::to_vec(&json!({"transcript": key, "meta": meta, "finish": finish}))
                .expect("serialises")
        }
        None => Vec::new(),
    };
    let path = sd.import_base();
    if bytes.is_empty() && std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    atomic::overwrite(&path, &bytes).io("write", &path)
}

/// `meta` with what an import's nodes move (its times, head, agent and,
/// unless a person gave it, its title) as `base` had them.
fn moved_back(mut meta: Meta, base: &Meta) -> Meta {
    let mut keys = vec!["updated_at", "head_id", "view_tip", "agent_id"];
    if !meta.flag("_user_titled") {
        keys.extend(["title", "_auto_titled"]);
    }
    for k in keys {
        match base.0.get(k) {
            Some(v) => {
                meta.0.insert(k.to_string(), v.clone());
            }
            None => {
                meta.0.remove(k);
            }
        }
    }
    meta
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

/// meta.json after node `n` of an import: the agent is the first reply's
/// model (a session is made with the default agent, `main`, for the first
/// prefix of a transcript to make it may hold no reply yet), the title
/// (unless a person gave one) the first message.
fn follow(meta: &mut Meta, n: &Node) {
    if n.role == "llm"
        && meta
            .str("agent_id")
            .is_none_or(|a| a.is_empty() || a == crate::store::DEFAULT_AGENT)
        && let Some(model) = n.metadata.get("model").and_then(Value::as_str)
    {
        meta.set("agent_id", model);
    }
    if n.role == "user"
        && n.is_top_level()
        && meta.title().is_empty()
        && !meta.flag("_user_titled")
        && let Some(text) = n.output.as_str()
    {
        let title = crate::session::title_from_text(text);
        if !title.is_empty() {
            meta.set("title", title);
            meta.set("_auto_titled", true);
        }
    }
}

/// A node of the turn still open, as it would be written (no seq yet).
fn pending_node(agent: Agent, item: Item, transcript: Option<&str>) -> Node {
    let new = node(agent, item, transcript);
    Node {
        id: new.id.unwrap_or_default(),
        created_at: new.created_at.unwrap_or(0.0),
        seq: 0,
        role: new.role,
        name: new.name.unwrap_or_default(),
        input: new.input,
        output: new.output,
        caller: new.caller.unwrap_or_default(),
        predecessor: new.predecessor.flatten(),
        reads: Vec::new(),
        metadata: new.metadata,
        extra: Default::default(),
        python_keys: false,
    }
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
/// directory, sorted (main transcripts before their subagents'). Below a
/// directory, a `*.jsonl` that is a link or a special file is not read, and
/// a part that cannot be listed is left out; each is named in `warn`. A
/// path that is neither a file nor a directory (a FIFO, a device) is given
/// back, for its import to fail on it, named.
pub fn transcripts(path: &Path, warn: &mut dyn FnMut(String)) -> Result<Vec<PathBuf>> {
    let md = std::fs::metadata(path).io("read", path)?;
    if !md.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for e in walkdir::WalkDir::new(path).follow_links(false) {
        let e = match e {
            Ok(e) => e,
            Err(e) => {
                warn(format!("skipping part of `{}`: {e}", path.display()));
                continue;
            }
        };
        if e.path().extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        match e.file_type() {
            t if t.is_file() => out.push(e.into_path()),
            t if t.is_dir() => {}
            t if t.is_symlink() => warn(format!(
                "skipping `{}`: a link is not followed (give the path it points to, to import that)",
                e.path().display()
            )),
            _ => warn(format!(
                "skipping `{}`: not a regular file (a FIFO, socket or device)",
                e.path().display()
            )),
        }
    }
    out.sort_by_key(|p| (is_subagent_file(p), p.clone()));
    Ok(out)
}

/// The older layout's subagent transcripts of session `session` (a Claude
/// Code session id, `claude-<sessionId>`): `agent-*.jsonl` in `dir` whose
/// records name that session.
pub fn subagents_beside(dir: &Path, session: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && is_subagent_file(p)
                && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
        })
        .filter(|p| {
            probe(Agent::ClaudeCode, p).is_ok_and(|(id, _)| {
                id.and_then(|id| id.strip_prefix(session).map(|r| r.starts_with('-')))
                    .unwrap_or(false)
            })
        })
        .collect();
    out.sort();
    out
}

/// Whether the parent of Claude Code subagent transcript `path` (session
/// `claude-<sessionId>-<agentId>`) says the subagent is done: the last of
/// its complete records that names the agent is the completed result of
/// the call that ran it (`toolUseResult.agentId`, status completed; a later
/// call that resumes the agent names it again). The parent's transcript is
/// `<session>.jsonl` above `<session>/subagents/`, or, in the older layout,
/// `<sessionId>.jsonl` beside it.
fn subagent_returned(path: &Path, session: &str) -> bool {
    use std::io::BufRead as _;
    let Some(agent_id) = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("agent-"))
    else {
        return false;
    };
    let Some(sid) = session
        .strip_prefix("claude-")
        .and_then(|s| s.strip_suffix(agent_id))
        .and_then(|s| s.strip_suffix('-'))
    else {
        return false;
    };
    let Some(dir) = path.parent() else {
        return false;
    };
    let parent = if dir.file_name().is_some_and(|n| n == "subagents") {
        match dir.parent() {
            Some(d) => d.with_extension("jsonl"),
            None => return false,
        }
    } else {
        dir.join(format!("{sid}.jsonl"))
    };
    let Ok(f) = open_transcript(&parent) else {
        return false;
    };
    let needle = format!("\"{agent_id}\"");
    let mut reader = std::io::BufReader::new(f);
    let mut line = Vec::new();
    let mut done = false;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            // A line the parent is still writing says nothing yet.
            Ok(_) if line.last() == Some(&b'\n') => {}
            _ => return done,
        }
        if !line.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            continue;
        }
        let Ok(r) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let res = &r["toolUseResult"];
        done =
            res["agentId"] == agent_id && res["status"].as_str().is_none_or(|s| s == "completed");
    }
}

/// Whether a Claude Code transcript is a subagent's: one under a
/// `subagents/` directory, or (the older layout) an `agent-*.jsonl` beside
/// its parent's transcript, whose `sessionId` names the parent.
pub fn is_subagent_file(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "subagents")
        || path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-"))
}

#[cfg(test)]
mod tests {
    use super::node_id;

    #[test]
    fn node_ids_keep_agents_ids_and_never_merge_two() {
        // As agents write them: kept.
        let uuid = "6f1c2d3e-aaaa-bbbb-cccc-0123456789ab";
        assert_eq!(node_id("u-", uuid), format!("u-{uuid}"));
        assert_eq!(node_id("t-", "toolu_01AbC.x"), "t-toolu_01AbC.x");
        // Changed: two that would change into one stay two, every time.
        let pairs = [
            ("x/1".to_string(), "x_1".to_string()),
            ("x/1".to_string(), "x:1".to_string()),
            ("é".to_string(), "_".to_string()),
            ("a".repeat(200), format!("{}b", "a".repeat(199))),
            ("a".repeat(127), "a".repeat(126)),
        ];
        for (a, b) in &pairs {
            let (ia, ib) = (node_id("u-", a), node_id("u-", b));
            assert_ne!(ia, ib, "{a} / {b}");
            assert_eq!(ia, node_id("u-", a));
            for id in [&ia, &ib] {
                assert!(id.len() <= 128, "{id}");
                crate::layout::ids::node_id(id).unwrap();
            }
        }
    }
}
