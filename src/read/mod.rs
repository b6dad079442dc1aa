//! The read layer (SPEC §5.18): nodes past a cursor with their provenance,
//! one node by id, an incremental feed over the state dir, and a search
//! across sessions. Everything here only reads; the feed's cursor file is
//! the one thing written, atomically, after its output.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};
use crate::git::SessionRepo;
use crate::layout::StateDir;
use crate::layout::history::{self, Catalog, Entry};
use crate::layout::lock::LockOptions;
use crate::layout::paths::SessionDir;
use crate::layout::schema::{Node, read_bounded};
use crate::out::records::{self, SessionNode};

/// What the read layer refuses (`git_session::read::…`, exit 1).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ReadError {
    /// A node id the session does not have.
    #[error("session `{session}` has no node `{id}`")]
    #[diagnostic(code(git_session::read::no_such_node))]
    NoSuchNode {
        session: String,
        id: String,
        /// The closest ids, or where to see them all.
        #[help]
        help: String,
    },

    /// A `--cursor` that is a directory, a FIFO or a device.
    #[error("the cursor `{}` is not a regular file", path.display())]
    #[diagnostic(
        code(git_session::read::cursor_not_a_file),
        help("give `--cursor` the path of a file (it is created when missing)")
    )]
    CursorNotAFile { path: std::path::PathBuf },
}

/// One node file read: its bytes, and its JSON.
pub struct Stored {
    pub entry: Entry,
    pub bytes: Vec<u8>,
    pub json: Map<String, Value>,
}

impl Stored {
    /// Read and parse the file of `entry`; a node that does not parse is an
    /// error naming it (`verify` says more).
    pub fn read(history: &Path, entry: Entry) -> Result<Stored> {
        let path = history.join(&entry.file);
        let bytes = read_bounded(&path)?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(json)) => Ok(Stored { entry, bytes, json }),
            Ok(_) => Err(not_an_object(path)),
            Err(e) => Err(does_not_parse(path, e)),
        }
    }

    /// Whether [`Stored::read`] of `entry` would succeed, keeping nothing:
    /// the file read and its JSON checked, no value built.
    fn check(history: &Path, entry: &Entry) -> Result<()> {
        let path = history.join(&entry.file);
        let bytes = read_bounded(&path)?;
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        match serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
            Ok(_) if first == Some(&b'{') => Ok(()),
            Ok(_) => Err(not_an_object(path)),
            Err(e) => Err(does_not_parse(path, e)),
        }
    }

    fn role(&self) -> &str {
        self.json.get("role").and_then(Value::as_str).unwrap_or("")
    }

    fn created_at(&self) -> f64 {
        self.json
            .get("created_at")
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    }
}

fn not_an_object(path: std::path::PathBuf) -> Error {
    Error::Corrupt {
        path,
        reason: "a node file must hold a JSON object".into(),
        help: Some("run `git-session verify` on the session".into()),
    }
}

fn does_not_parse(path: std::path::PathBuf, e: serde_json::Error) -> Error {
    Error::Corrupt {
        path,
        reason: format!("the node does not parse: {e}"),
        help: Some("run `git-session verify` on the session".into()),
    }
}

/// The catalog entries of seq above `after_seq`, in seq order, at most
/// `limit` of them: read from the end of the catalog back, so the cost
/// follows what is returned.
pub fn entries_after(catalog: &Catalog, after_seq: i64, limit: Option<usize>) -> Vec<Entry> {
    let mut out: Vec<Entry> = catalog
        .rev_entries()
        .take_while(|e| e.seq as i64 > after_seq)
        .collect();
    out.reverse();
    if let Some(n) = limit {
        out.truncate(n);
    }
    out
}

/// The commit that first holds each node of `entries`
/// ([`crate::mirror::holders_of`]). `None`: not committed yet.
pub fn commits_of(sd: &SessionDir, entries: &[Entry]) -> Result<Vec<Option<String>>> {
    if entries.is_empty() || !sd.git_dir().is_dir() {
        return Ok(vec![None; entries.len()]);
    }
    let repo = SessionRepo::open(&sd.dir)?;
    let wanted: Vec<(u64, &str)> = entries.iter().map(|e| (e.seq, e.file.as_str())).collect();
    Ok(crate::mirror::holders_of(&repo, &wanted)?
        .into_iter()
        .map(|c| c.map(|c| c.to_string()))
        .collect())
}

/// The record of node `n`, first held by `commit`.
pub fn record_of(
    n: Stored,
    commit: Option<String>,
    session: &str,
    project: &str,
    ingestion_time: f64,
) -> SessionNode {
    let event = n.created_at();
    SessionNode {
        project_id: project.into(),
        session_id: session.into(),
        node_id: n.entry.id.clone(),
        seq: n.entry.seq as i64,
        role: records::role_name(n.role()).into(),
        commit,
        event_time: event,
        event_time_rfc3339: crate::out::rfc3339(event),
        ingestion_time,
        ingestion_time_rfc3339: crate::out::rfc3339(ingestion_time),
        node: n.json,
    }
}

/// The nodes of one session past a seq, each read and checked, with the
/// commit that holds it: [`Checked::each_record`] hands their records out.
pub struct Checked {
    entries: Vec<Entry>,
    commits: Vec<Option<String>>,
}

/// The nodes of one session past `after_seq` (at most `limit`), read under
/// its shared lock. Every node is read and checked here, and none is kept:
/// a node that cannot be read fails this call before any record is handed
/// out, and memory stays that of one node however many there are.
pub fn session_nodes(sd: &SessionDir, after_seq: i64, limit: Option<usize>) -> Result<Checked> {
    let entries = entries_after(&Catalog::load(sd)?, after_seq, limit);
    let history = sd.history();
    for e in &entries {
        Stored::check(&history, e)?;
    }
    let commits = commits_of(sd, &entries)?;
    Ok(Checked { entries, commits })
}

impl Checked {
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Each node's record, in seq order, handed to `each` as it is read
    /// (again, one at a time); the first error ends it.
    pub fn each_record(
        self,
        sd: &SessionDir,
        session: &str,
        project: &str,
        ingestion_time: f64,
        mut each: impl FnMut(SessionNode) -> Result<()>,
    ) -> Result<()> {
        let history = sd.history();
        for (e, commit) in self.entries.into_iter().zip(self.commits) {
            let n = Stored::read(&history, e)?;
            each(record_of(n, commit, session, project, ingestion_time))?;
        }
        Ok(())
    }
}

/// A node by id, or the refusal naming the closest ids.
pub fn find_node(sd: &SessionDir, session: &str, id: &str) -> Result<Stored> {
    let catalog = Catalog::load(sd)?;
    match catalog.get(id) {
        Some(e) => Stored::read(&sd.history(), e),
        None => {
            let known: Vec<String> = catalog.entries().map(|e| e.id).collect();
            Err(ReadError::NoSuchNode {
                session: session.to_string(),
                id: id.to_string(),
                help: crate::layout::paths::did_you_mean(
                    id,
                    &known,
                    &format!("`git-session nodes {session}` lists"),
                ),
            }
            .into())
        }
    }
}

/// The feed's cursor: per session, the last seq handed out and the index
/// row's `updated_at` it was read at (a row that did not change is not
/// opened again); and where the list registry stood, so that the next run
/// reads only the journal written since when the index was not rewritten.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Cursor {
    pub version: u32,
    #[serde(default)]
    pub registry: Option<crate::layout::registry::Mark>,
    pub sessions: BTreeMap<String, CursorEntry>,
    /// Sessions a run skipped (a node it could not read): every run opens
    /// them again until their nodes are handed out, whatever the registry
    /// says changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry: Vec<String>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CursorEntry {
    pub seq: i64,
    pub updated_at: Value,
}

impl Cursor {
    /// The cursor file, or an empty cursor when there is none yet.
    pub fn read(path: &Path) -> Result<Cursor> {
        // A FIFO or device there would block or never end: only a regular
        // file is read.
        if let Ok(md) = std::fs::metadata(path)
            && !md.is_file()
        {
            return Err(ReadError::CursorNotAFile {
                path: path.to_path_buf(),
            }
            .into());
        }
        let bytes = match crate::layout::atomic::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Cursor {
                    version: 1,
                    ..Default::default()
                });
            }
            Err(e) => return Err(e).io("read", path),
        };
        serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
            path: path.to_path_buf(),
            reason: format!("the cursor does not parse: {e}"),
            help: Some("remove it to feed everything again from the start".into()),
        })
    }

    /// Write it atomically (temp file, rename), one session a line.
    pub fn write(&self, path: &Path) -> Result<()> {
        let mut bytes = serde_json::to_vec(self).expect("a cursor serializes");
        bytes.push(b'\n');
        crate::layout::atomic::write(path, &bytes)
    }
}

/// The sessions a feed opens: every index row (archived ones included)
/// whose `updated_at` differs from the cursor's, in id order.
pub fn changed_sessions<'a>(
    rows: &'a BTreeMap<String, Box<crate::layout::registry::ListRow<'_>>>,
    cursor: &Cursor,
) -> Vec<(&'a String, Value)> {
    rows.iter()
        .filter_map(|(id, row)| {
            let updated = serde_json::to_value(&row.updated_at).unwrap_or(Value::Null);
            match cursor.sessions.get(id) {
                Some(c) if c.updated_at == updated => None,
                _ => Some((id, updated)),
            }
        })
        .collect()
}

/// What a feed run opens: where the registry stood when it was looked at
/// (the cursor's `registry` once the run is out), and the sessions to
/// open, each with the row's `updated_at` it is read at.
pub struct Changed {
    pub mark: crate::layout::registry::Mark,
    pub sessions: Vec<(String, Value)>,
}

/// The sessions a feed opens after `cursor`: those whose row changed since
/// (from the index journal when index.json was not rewritten since, else
/// every row's `updated_at` compared with the cursor's), then those an
/// earlier run skipped. The cursor forgets the sessions deleted since, and
/// its retry list (those sessions are in the result).
pub fn changed_since(state: &StateDir, locks: LockOptions, cursor: &mut Cursor) -> Result<Changed> {
    // Where the registry stands, taken first: whatever is journaled after
    // this is read again next time (harmless), never missed.
    let (mark, journaled) =
        crate::layout::registry::changes_since(state, cursor.registry.as_ref())?;
    let changed: Vec<(String, Value)> = match journaled {
        // The index was not rewritten: the journal says what changed.
        Some(changes) => {
            let mut latest: BTreeMap<String, Option<Value>> = BTreeMap::new();
            for c in changes {
                if c.deleted {
                    latest.remove(&c.id);
                    cursor.sessions.remove(&c.id);
                } else {
                    let old = cursor.sessions.get(&c.id).map(|e| e.updated_at.clone());
                    latest.insert(c.id, c.updated_at.or(old));
                }
            }
            latest
                .into_iter()
                .map(|(id, u)| (id, u.unwrap_or(Value::Null)))
                .collect()
        }
        // Compare every row's `updated_at` with the cursor's.
        None => {
            let mut index_text = crate::lifecycle::RowsText::default();
            let rows = crate::lifecycle::load_rows(state, locks, &mut index_text)?;
            cursor.sessions.retain(|id, _| rows.contains_key(id));
            changed_sessions(&rows, cursor)
                .into_iter()
                .map(|(id, u)| (id.clone(), u))
                .collect()
        }
    };
    // Sessions an earlier run skipped are opened again.
    let mut changed = changed;
    for id in std::mem::take(&mut cursor.retry) {
        if !changed.iter().any(|(c, _)| *c == id) {
            let updated = cursor
                .sessions
                .get(&id)
                .map_or(Value::Null, |e| e.updated_at.clone());
            changed.push((id, updated));
        }
    }
    Ok(Changed {
        mark,
        sessions: changed,
    })
}

/// The text of a node to search: `output`, and `input` for a tool node,
/// each as a string (a JSON value that is not one, as its JSON).
pub fn texts(node: &Node) -> Vec<(&'static str, String)> {
    let mut out = vec![("output", crate::layout::schema::value_text(&node.output))];
    if node.role == "code" && !node.input.is_null() {
        out.push(("input", crate::layout::schema::value_text(&node.input)));
    }
    out
}

/// What `grep` asks.
pub struct Search {
    pub regex: regex::Regex,
    /// Stored role names to keep (`user`, `llm`, `code`); empty: all.
    pub roles: Vec<String>,
}

/// One session's matches, in seq order: (node, field, snippet, start, end)
/// and the node's turn.
pub fn search_session(
    sd: &SessionDir,
    session: &str,
    search: &Search,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<records::Hit>> {
    let catalog = Catalog::load(sd)?;
    let nodes = history::read_all(&sd.history(), &catalog, warn);
    let mut hits = Vec::new();
    let mut turns: Option<HashMap<String, u64>> = None;
    for n in &nodes {
        if !search.roles.is_empty() && !search.roles.contains(&n.role) {
            continue;
        }
        for (field, text) in texts(n) {
            let Some(m) = search.regex.find(&text) else {
                continue;
            };
            let turns = turns.get_or_insert_with(|| turn_of_every_node(&nodes));
            let (snippet, start, end) = snippet(&text, m.start(), m.end());
            hits.push(records::Hit {
                session: session.into(),
                node: n.id.clone(),
                seq: n.seq,
                role: records::role_name(&n.role).into(),
                turn: turns.get(&n.id).copied(),
                field: field.into(),
                snippet,
                start,
                end,
            });
        }
    }
    Ok(hits)
}

/// Each node's turn on its branch: a conversational node's by its chain; a
/// tool node's, its caller's.
fn turn_of_every_node(nodes: &[Node]) -> HashMap<String, u64> {
    let dag = crate::view::Dag::new(nodes);
    let mut turns: HashMap<String, u64> = HashMap::new();
    for tip in dag.tips() {
        let chain = dag.chain(&tip.id);
        let mut turn = 0;
        for n in &chain {
            if n.starts_turn() {
                turn += 1;
            }
            if turn > 0 {
                turns.entry(n.id.clone()).or_insert(turn);
            }
        }
    }
    // Callers first: a tool node called by a tool node gets its turn too.
    for _ in 0..4 {
        for n in nodes {
            if turns.contains_key(&n.id) || n.caller.is_empty() {
                continue;
            }
            if let Some(t) = turns.get(&n.caller).copied() {
                turns.insert(n.id.clone(), t);
            }
        }
    }
    turns
}

/// The line of `text` holding the match at `start..end`, cut to about 160
/// characters around it; the match's offsets in what is returned.
fn snippet(text: &str, start: usize, end: usize) -> (String, usize, usize) {
    const WIDTH: usize = 160;
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    let end = end.min(line_end);
    let mut from = line_start;
    let mut to = line_end;
    if to - from > WIDTH {
        let room = WIDTH.saturating_sub(end - start) / 2;
        from = floor_char(text, start.saturating_sub(room).max(line_start));
        to = ceil_char(text, (end + room).min(line_end));
    }
    let prefix = if from > line_start { "…" } else { "" };
    let suffix = if to < line_end { "…" } else { "" };
    let out = format!("{prefix}{}{suffix}", &text[from..to]);
    let s = start - from + prefix.len();
    (out, s, s + (end - start))
}

/// The nearest char boundary of `s` at or before `i`.
pub fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_hold_the_match_on_its_line() {
        let (s, a, b) = snippet("first\nsecond line with needle in it\nthird", 23, 29);
        assert_eq!(s, "second line with needle in it");
        assert_eq!(&s[a..b], "needle");
        let long = format!("{}needle{}", "x".repeat(500), "é".repeat(300));
        let (s, a, b) = snippet(&long, 500, 506);
        assert_eq!(&s[a..b], "needle");
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.chars().count() < 200);
    }

    /// The check before a feed prints a session agrees with the read that
    /// prints it, whatever a node file holds.
    #[test]
    fn the_check_of_a_node_agrees_with_its_read() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&[u8], bool); 10] = [
            (br#"{"id": "a", "output": "x"}"#, true),
            (b" \n\t{\"id\": \"a\"}\n", true),
            (b"{}", true),
            (b"[1, 2]", false),
            (b"\"a string\"", false),
            (b"42", false),
            (b"{\"id\": ", false),
            (b"{} {}", false),
            (b"", false),
            (b"\xff\xfe{}", false),
        ];
        for (i, (bytes, ok)) in cases.iter().enumerate() {
            let file = format!("{:06}-u-n{i}.json", i + 1);
            std::fs::write(dir.path().join(&file), bytes).unwrap();
            let entry = Entry {
                seq: i as u64 + 1,
                letter: 'u',
                id: format!("n{i}"),
                file,
            };
            let checked = Stored::check(dir.path(), &entry);
            let read = Stored::read(dir.path(), entry);
            assert_eq!(checked.is_ok(), *ok, "case {i}: {checked:?}");
            assert_eq!(read.is_ok(), *ok, "case {i}");
        }
    }
}
