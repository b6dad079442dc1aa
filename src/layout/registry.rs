//! The registries of SPEC §3 in `sessions/`: `index.json` (a cache of list
//! rows), its append-only journal, and `locations.json`.
//!
//! Appends must not rewrite a large index per node, so a writer that changes
//! one session appends its fresh row to `index.journal` (one JSON line, under
//! a shared `flock` on the journal, `O_APPEND`); the next registry writer folds
//! the journal into `index.json` under the registry lock plus an exclusive
//! journal lock, then empties it. A torn last line (kill -9 mid-write) is
//! skipped; everything in a row can be rebuilt from `meta.json`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::error::{IoContext, Result};

use super::atomic;
use super::lock::{self, LockOptions};
use super::paths::StateDir;

pub type Row = Map<String, Value>;
pub type Index = BTreeMap<String, Row>;

/// Journal size past which an appender folds it (when the registry is free).
/// Every `list` reads the whole journal (a turn adds about four rows of
/// 300 bytes, and 64 KiB take `list` about a millisecond); a fold rewrites
/// `index.json` once per some 200 rows.
pub const FOLD_THRESHOLD: u64 = 64 * 1024;

/// `locations.json`: session id → absolute repo path. Missing or unparsable
/// reads as empty (like the Python store); `verify` reports a bad file.
pub fn read_locations(state: &StateDir) -> Result<BTreeMap<String, String>> {
    let path = state.locations_json();
    let bytes = match atomic::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(e).io("read", path),
    };
    let map = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => m
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k, s)),
                _ => None,
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    Ok(map)
}

/// The state dirs whose journal this process wrote rows to that
/// `index.json` must show before the command ends ([`fold_owed`]).
static OWED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn owed() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    OWED.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Append one row (or a partial row: only the keys given change) to the
/// journal; `index.json` shows it when the command ends ([`fold_owed`]).
pub fn journal_append(state: &StateDir, row: &Row) -> Result<()> {
    journal_append_lagging(state, row)?;
    owe_fold(state);
    Ok(())
}

/// Have `index.json` show every journaled row when the command ends
/// ([`fold_owed`]): a command that ends a turn folds in what the turn's
/// bare appends left in the journal.
pub fn owe_fold(state: &StateDir) {
    let mut owed = owed();
    if !owed.contains(&state.root) {
        owed.push(state.root.clone());
    }
}

/// [`journal_append`] for a bare `append`: its preview and `updated_at`
/// may wait in the journal for the command that ends the turn (SPEC §3).
pub fn journal_append_lagging(state: &StateDir, row: &Row) -> Result<()> {
    let path = state.index_journal();
    let mut f = atomic::no_follow(std::fs::OpenOptions::new().append(true).create(true))
        .open(&path)
        .io("open the index journal", &path)?;
    f.lock_shared().io("lock", &path)?;
    // When the line was written (the wall clock, as file times are): a row
    // another writer put into index.json later wins over it.
    let mut row = row.clone();
    row.insert(JOURNALED_AT.into(), Value::from(wall_clock()));
    let mut line = serde_json::to_vec(&row).expect("a row always serializes");
    line.push(b'\n');
    // One write(2) of the whole line under O_APPEND: lines never interleave.
    f.write_all(&line).io("append to", &path)?;
    if atomic::durable() {
        f.sync_data().io("sync", &path)?;
    }
    Ok(())
}

/// The key of a journal line's time; never part of a row.
const JOURNALED_AT: &str = "_journaled_at";

fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// When `index.json` was last written, as unix seconds. Our folds empty the
/// journal as they write it, so a journal line older than this was either
/// folded already (a crash before the journal was emptied) or overtaken by
/// another writer's row: either way it is not applied.
fn index_written_at(state: &StateDir) -> Option<f64> {
    let m = std::fs::metadata(state.index_json())
        .ok()?
        .modified()
        .ok()?;
    Some(m.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64())
}

/// Whether a journal line of time `at` still applies over an index.json
/// written at `written` (lines from older versions carry no time: they do).
fn applies(at: Option<f64>, written: Option<f64>) -> bool {
    match (at, written) {
        (Some(at), Some(w)) => at >= w,
        _ => true,
    }
}

pub fn journal_len(state: &StateDir) -> u64 {
    std::fs::metadata(state.index_journal())
        .map(|m| m.len())
        .unwrap_or(0)
}

/// Each journal line, in order: (id, Some(row)) to merge, (id, None) to
/// delete. Empty and torn lines are skipped.
fn journal_rows(bytes: &[u8], mut f: impl FnMut(String, Option<Row>)) {
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(Value::Object(row)) = serde_json::from_slice::<Value>(line) else {
            continue; // empty or torn line
        };
        let Some(id) = row.get("id").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        if row.get("_deleted").and_then(Value::as_bool) == Some(true) {
            f(id, None);
        } else {
            f(id, Some(row));
        }
    }
}

/// Where a reader of the list registry stood: which index.json (inode, size,
/// modification time) and how much of the journal it had read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mark {
    pub index: Option<(u64, u64, i64, i64)>,
    pub journal: u64,
}

/// A row the journal changed since a [`Mark`].
#[derive(Debug, Clone)]
pub struct Change {
    pub id: String,
    pub deleted: bool,
    /// The row's `updated_at` after the change, when the line sets it.
    pub updated_at: Option<Value>,
}

/// The mark now, and, when `since` still describes index.json (no fold or
/// rewrite since), the rows journaled after it, in order: what changed,
/// without reading the index. `None`: the index was rewritten; compare it
/// whole. Only whole lines are taken (a line being written is read next
/// time).
pub fn changes_since(
    state: &StateDir,
    since: Option<&Mark>,
) -> Result<(Mark, Option<Vec<Change>>)> {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::MetadataExt;
    let jpath = state.index_journal();
    // The journal's shared lock: a fold (which rewrites index.json, then
    // empties the journal) holds it exclusively, so the two agree here.
    let journal = match atomic::open_read(&jpath) {
        Ok(f) => {
            f.lock_shared().io("lock", &jpath)?;
            Some(f)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).io("open", jpath),
    };
    let index = std::fs::metadata(state.index_json())
        .ok()
        .map(|m| (m.ino(), m.size(), m.mtime(), m.mtime_nsec()));
    let len = match &journal {
        Some(f) => f.metadata().io("read", &jpath)?.len(),
        None => 0,
    };
    let from = match since {
        Some(m) if m.index == index && m.index.is_some() && m.journal <= len => m.journal,
        _ => {
            return Ok((
                Mark {
                    index,
                    journal: len,
                },
                None,
            ));
        }
    };
    let mut bytes = Vec::new();
    if let Some(mut f) = journal {
        f.seek(SeekFrom::Start(from)).io("read", &jpath)?;
        (&mut f)
            .take(len - from)
            .read_to_end(&mut bytes)
            .io("read", &jpath)?;
    }
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut changes = Vec::new();
    journal_rows(&bytes[..whole], |id, row| {
        changes.push(Change {
            id,
            deleted: row.is_none(),
            updated_at: row.and_then(|mut r| r.remove("updated_at")),
        })
    });
    Ok((
        Mark {
            index,
            journal: from + whole as u64,
        },
        Some(changes),
    ))
}

fn apply_journal(index: &mut Index, bytes: &[u8], written: Option<f64>) {
    journal_rows(bytes, |id, row| match row {
        None => {
            index.remove(&id);
        }
        Some(mut row) => {
            let at = row.remove(JOURNALED_AT).and_then(|v| v.as_f64());
            if !applies(at, written) {
                return;
            }
            let entry = index.entry(id).or_default();
            for (k, v) in row {
                entry.insert(k, v);
            }
        }
    });
}

/// The bytes of `index.json` (mapped when large), `None` when missing.
fn read_index_bytes(state: &StateDir) -> Result<Option<super::mapped::Bytes>> {
    let path = state.index_json();
    let mut file = match atomic::open_read(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).io("read", path),
    };
    let len = file.metadata().io("read", &path)?.len();
    super::mapped::read(&mut file, len)
        .io("read", path)
        .map(Some)
}

/// Read `index.json` (None when missing or unparsable: rebuild it).
fn read_index_file(state: &StateDir) -> Result<Option<Index>> {
    let Some(bytes) = read_index_bytes(state)? else {
        return Ok(None);
    };
    // Validated as UTF-8 once, not string by string.
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    Ok(match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Some(
            m.into_iter()
                .filter_map(|(k, v)| match v {
                    Value::Object(row) => Some((k, row)),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    })
}

/// `index.json` as a file (as the Python store reads it), and as this
/// tool's readers see it (the journal folded in), read under the journal's
/// shared lock so that no fold falls between the two. `None` when
/// `index.json` is missing or corrupt.
pub fn load_index_as_file_and_folded(state: &StateDir) -> Result<Option<(Index, Index)>> {
    let path = state.index_journal();
    let journal = atomic::open_read(&path).ok();
    if let Some(f) = &journal {
        f.lock_shared().io("lock", &path)?;
    }
    let Some(file) = read_index_file(state)? else {
        return Ok(None);
    };
    let mut folded = file.clone();
    if let Some(mut f) = journal {
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).io("read", &path)?;
        apply_journal(&mut folded, &bytes, index_written_at(state));
    }
    Ok(Some((file, folded)))
}

/// The index as a reader sees it: `index.json` with the journal folded in.
/// Returns `None` when `index.json` is missing or corrupt.
pub fn load_index(state: &StateDir) -> Result<Option<Index>> {
    let Some(mut index) = read_index_file(state)? else {
        return Ok(None);
    };
    let path = state.index_journal();
    if let Ok(mut f) = atomic::open_read(&path) {
        f.lock_shared().io("lock", &path)?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).io("read", &path)?;
        apply_journal(&mut index, &bytes, index_written_at(state));
    }
    Ok(Some(index))
}

/// Fold the journal into `index.json` under the registry lock and apply `edit`.
/// `rebuild` supplies the rows when `index.json` is missing or corrupt.
pub fn update_index(
    state: &StateDir,
    opts: LockOptions,
    rebuild: impl FnOnce() -> Result<Index>,
    edit: impl FnOnce(&mut Index),
) -> Result<Index> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts)?;
    fold_locked(state, rebuild, edit)
}

fn fold_locked(
    state: &StateDir,
    rebuild: impl FnOnce() -> Result<Index>,
    edit: impl FnOnce(&mut Index),
) -> Result<Index> {
    with_journal(state, |journal| {
        let (mut index, written) = match read_index_file(state)? {
            Some(i) => (i, index_written_at(state)),
            None => (rebuild()?, None),
        };
        apply_journal(&mut index, journal, written);
        edit(&mut index);
        write_index(state, &index)?;
        Ok(index)
    })
}

/// Fold the journal into `index.json` (the caller holds the registry lock):
/// the rows the journal names are parsed and rewritten, every other row's
/// text is copied as it is ([`spliced`]), so that a fold at the end of
/// each turn costs a copy of the file, not a parse of every row.
fn fold_journal_locked(state: &StateDir) -> Result<()> {
    with_journal(state, |journal| match spliced(state, journal)? {
        Some(bytes) => atomic::write_with_mode(&state.index_json(), &bytes, 0o600),
        None => {
            let (mut index, written) = match read_index_file(state)? {
                Some(i) => (i, index_written_at(state)),
                None => (rebuild(state)?, None),
            };
            apply_journal(&mut index, journal, written);
            write_index(state, &index)
        }
    })
}

/// Run `fold` on the journal's lines under its exclusive lock (readers hold
/// it shared), then empty it.
fn with_journal<T>(state: &StateDir, fold: impl FnOnce(&[u8]) -> Result<T>) -> Result<T> {
    let jpath = state.index_journal();
    let journal = atomic::no_follow(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(&jpath)
    .io("open the index journal", &jpath)?;
    journal.lock().io("lock", &jpath)?;
    let mut bytes = Vec::new();
    (&journal).read_to_end(&mut bytes).io("read", &jpath)?;
    let out = fold(&bytes)?;
    owed().retain(|r| *r != state.root);
    journal.set_len(0).io("empty", &jpath)?;
    if atomic::durable() {
        journal.sync_all().io("sync", &jpath)?;
    }
    Ok(out)
}

/// `index.json` with `journal` folded in, byte for byte what
/// [`write_index`] writes of the folded index, made by parsing only the
/// rows the journal names. `None` when the file is not as this tool writes
/// it (missing, not compact: the general fold rewrites it).
fn spliced(state: &StateDir, journal: &[u8]) -> Result<Option<Vec<u8>>> {
    use serde_json::value::RawValue;
    use std::borrow::Cow;
    let Some(bytes) = read_index_bytes(state)? else {
        return Ok(None);
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    if !(text.starts_with("{\"") || text.trim_end() == "{}") {
        return Ok(None);
    }
    let Ok(raw) = serde_json::from_str::<BTreeMap<String, &RawValue>>(text) else {
        return Ok(None);
    };
    let mut touched = std::collections::HashSet::new();
    journal_rows(journal, |id, _| {
        touched.insert(id);
    });
    let mut rows: BTreeMap<&str, Cow<'_, [u8]>> = BTreeMap::new();
    let mut changed = Index::new();
    for (id, row) in &raw {
        // As the general reader has it: a row that is no object is dropped.
        if !row.get().starts_with('{') {
            continue;
        }
        if touched.contains(id) {
            match serde_json::from_str::<Row>(row.get()) {
                Ok(r) => {
                    changed.insert(id.clone(), r);
                }
                Err(_) => return Ok(None),
            }
        } else {
            rows.insert(id, Cow::Borrowed(row.get().as_bytes()));
        }
    }
    apply_journal(&mut changed, journal, index_written_at(state));
    for (id, row) in &changed {
        let text = serde_json::to_vec(row).expect("a row always serializes");
        rows.insert(id, Cow::Owned(text));
    }
    let mut out = Vec::with_capacity(bytes.len() + journal.len());
    out.push(b'{');
    for (i, (id, row)) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend(serde_json::to_vec(id).expect("a string serializes"));
        out.push(b':');
        out.extend_from_slice(row);
    }
    out.extend_from_slice(b"}\n");
    Ok(Some(out))
}

/// Every valid session directory (the directory exists and holds a parsable
/// `meta.json`): the default place, bound projects' places, `locations.json`.
pub fn discover(state: &StateDir) -> Result<Vec<(String, PathBuf)>> {
    Ok(candidates(state)?
        .into_iter()
        .filter(|(_, p)| {
            crate::layout::atomic::read(p.join("meta.json"))
                .ok()
                .is_some_and(|b| super::schema::Meta::parse(&b).is_ok())
        })
        .collect())
}

/// [`discover`] without parsing each meta.json: the directories with a
/// valid id and a `meta.json` file.
pub fn candidates(state: &StateDir) -> Result<Vec<(String, PathBuf)>> {
    let mut found = BTreeMap::new();
    let mut scan = |dir: PathBuf| {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return;
        };
        for de in rd.flatten() {
            let name = de.file_name().to_string_lossy().into_owned();
            if super::ids::session_id(&name).is_err() {
                continue;
            }
            let path = de.path();
            if path.join("meta.json").is_file() {
                found.entry(name).or_insert(path);
            }
        }
    };
    state.session_parents().into_iter().for_each(&mut scan);
    for (id, path) in read_locations(state)? {
        let path = PathBuf::from(path);
        if path.join("meta.json").is_file() {
            found.entry(id).or_insert(path);
        }
    }
    Ok(found.into_iter().collect())
}

/// Rebuild every row from `meta.json`, with the preview of the latest user node.
pub fn rebuild(state: &StateDir) -> Result<Index> {
    let mut index = Index::new();
    for (id, dir) in discover(state)? {
        if let Some(row) = fresh_row(&super::SessionDir::new(dir), &id)? {
            index.insert(id, row);
        }
    }
    Ok(index)
}

/// Write `row` as session `id`'s row of index.json now (the journal folded
/// first), for a change rare enough not to go through the journal: a
/// session created or fetched.
pub fn put_row(state: &StateDir, locks: LockOptions, id: &str, row: Row) -> Result<()> {
    let id = id.to_string();
    update_index(
        state,
        locks,
        || rebuild(state),
        move |index| {
            index.insert(id, row);
        },
    )?;
    Ok(())
}

/// The index row of the session in `sd`, from its meta.json, with the
/// preview of the latest user node; `None` when meta.json does not parse.
pub fn fresh_row(sd: &super::SessionDir, id: &str) -> Result<Option<Row>> {
    let Ok(meta) = super::schema::Meta::read(&sd.meta()) else {
        return Ok(None);
    };
    let catalog = super::history::Catalog::peek(sd)?;
    let preview = catalog
        .rev_entries()
        .filter(|e| e.letter == 'u')
        .filter_map(|e| super::history::read_node(&sd.history(), &e).ok())
        .find(|n| n.starts_turn())
        .map(|n| super::schema::preview(&n.text()));
    Ok(Some(super::schema::index_row(
        &meta,
        id,
        preview.as_deref(),
    )))
}

/// Rows of `index` (as a reader sees it) whose fields disagree with the rows
/// `fresh` rebuilt from meta.json: `(id, the fields that differ)`. Only the
/// fields meta.json holds are compared (the preview is the registry's own);
/// a missing flag reads as `false`, a missing field as `null`.
pub fn stale_rows(index: &Index, fresh: &Index) -> Vec<(String, Vec<&'static str>)> {
    fn same(a: Option<&Value>, b: Option<&Value>, key: &str) -> bool {
        let flag = matches!(key, "pinned" | "archived" | "unread");
        let norm = |v: Option<&Value>| match v {
            None | Some(Value::Null) if flag => Value::Bool(false),
            None => Value::Null,
            Some(v) => v.clone(),
        };
        match (norm(a), norm(b)) {
            (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() < 1e-6,
                _ => x == y,
            },
            (x, y) => x == y,
        }
    }
    let mut out = Vec::new();
    for (id, want) in fresh {
        let Some(have) = index.get(id) else { continue };
        let differ: Vec<&'static str> = super::schema::INDEX_FIELDS
            .into_iter()
            .filter(|k| !same(have.get(*k), want.get(*k), k))
            .collect();
        if !differ.is_empty() {
            out.push((id.clone(), differ));
        }
    }
    out
}

/// Fold the journal into `index.json` now (SPEC §3: the index is current
/// after every command but `append`). The caller holds no session lock
/// (the lock order is registry, then session).
pub fn fold(state: &StateDir, opts: LockOptions) -> Result<()> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts)?;
    fold_journal_locked(state)
}

/// Remove the temp files a registry write killed midway left (`index.json`,
/// `locations.json`, `projects.json` are written under the registry lock,
/// which the caller holds: no such temp is another writer's at work).
pub fn sweep_temps(state: &StateDir) {
    let registries = [
        (
            state.sessions(),
            ["index.json", "locations.json"].as_slice(),
        ),
        (state.root.join("projects"), ["projects.json"].as_slice()),
    ];
    for (dir, names) in registries {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = name.strip_prefix(super::TEMP_PREFIX).is_some_and(|rest| {
                names
                    .iter()
                    .any(|n| rest.strip_prefix(n).is_some_and(|tag| tag.starts_with('.')))
            });
            if ours && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Whether this process journaled rows `index.json` does not show yet.
pub fn folds_owed() -> bool {
    !owed().is_empty()
}

/// Fold the journal of every state dir this process journaled rows to
/// since it last folded, so that `index.json` itself is current when the
/// command ends (SPEC §3: the Python store reads it alone). Every state
/// dir is tried; the first failure is returned.
pub fn fold_owed(opts: LockOptions) -> Result<()> {
    let roots = std::mem::take(&mut *owed());
    let mut first = Ok(());
    for root in roots {
        let state = StateDir { root };
        // An empty journal: index.json shows every row already.
        if journal_len(&state) == 0 {
            continue;
        }
        if let Err(e) = fold(&state, opts) {
            owed().push(state.root);
            if first.is_ok() {
                first = Err(e);
            }
        }
    }
    first
}

/// Fold the journal if it grew large and nobody holds the registry; never waits.
pub fn fold_if_large(state: &StateDir) -> Result<()> {
    if journal_len(state) < FOLD_THRESHOLD {
        return Ok(());
    }
    let opts = LockOptions {
        timeout: std::time::Duration::ZERO,
        no_wait: true,
        announce: false,
    };
    match lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts) {
        Ok(_registry) => fold_journal_locked(state),
        Err(crate::error::Error::LockBusy { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

fn write_index(state: &StateDir, index: &Index) -> Result<()> {
    // Compact: the same shape as the Python store's, 40% less to parse.
    let mut bytes = serde_json::to_vec(index).expect("the index always serializes");
    bytes.push(b'\n');
    atomic::write_with_mode(&state.index_json(), &bytes, 0o600)
}

/// Replace the index with rows rebuilt from every valid session's meta.json.
pub fn rebuild_index(state: &StateDir, opts: LockOptions) -> Result<usize> {
    let fresh = rebuild(state)?;
    let n = fresh.len();
    update_index(state, opts, || Ok(Index::new()), move |idx| *idx = fresh)?;
    Ok(n)
}

/// Record where sessions live that are not at `sessions/<id>/` (SPEC §3:
/// that is how the Python store finds them): `(id, absolute repo path)`.
pub fn set_locations(
    state: &StateDir,
    entries: &[(String, PathBuf)],
    opts: LockOptions,
) -> Result<()> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts)?;
    set_locations_locked(state, entries)
}

/// [`set_locations`] for a caller that holds the registry lock.
pub fn set_locations_locked(state: &StateDir, entries: &[(String, PathBuf)]) -> Result<()> {
    let path = state.locations_json();
    let mut map: Map<String, Value> = match crate::layout::atomic::read(&path) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
        Err(_) => Map::new(),
    };
    let mut changed = false;
    for (id, dir) in entries {
        let v = Value::String(dir.to_string_lossy().into_owned());
        if map.get(id) != Some(&v) {
            map.insert(id.clone(), v);
            changed = true;
        }
    }
    if !changed {
        return Ok(());
    }
    let mut bytes = serde_json::to_vec_pretty(&map).expect("a map always serializes");
    bytes.push(b'\n');
    atomic::write_with_mode(&path, &bytes, 0o600)
}

/// Drop entries from `locations.json`.
pub fn remove_locations(state: &StateDir, ids: &[String], opts: LockOptions) -> Result<()> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts)?;
    let path = state.locations_json();
    let mut map: Map<String, Value> = match crate::layout::atomic::read(&path) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(Value::Object(m)) => m,
            _ => return Ok(()),
        },
        Err(_) => return Ok(()),
    };
    for id in ids {
        map.remove(id);
    }
    let mut bytes = serde_json::to_vec_pretty(&map).expect("a map always serializes");
    bytes.push(b'\n');
    atomic::write_with_mode(&path, &bytes, 0o600)
}

/// One field of an index row as `list` reads it: any JSON value, held in
/// 24 bytes (a `serde_json::Value` takes 72, and `list` holds 16 per row for
/// every session). It writes back out as the same JSON.
///
/// A string without escapes is borrowed from the bytes parsed (no allocation
/// per string: at 10,000 rows, 60,000 of them).
#[derive(Debug, Clone, Default)]
pub enum Field<'a> {
    #[default]
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(Box<str>),
    Borrowed(&'a str),
    /// An array or an object: rare in an index row, kept as it is.
    Other(Box<Value>),
}

impl<'a> Field<'a> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            Field::Borrowed(s) => Some(s),
            _ => None,
        }
    }

    /// The same value, owning its string.
    pub fn into_owned(self) -> Field<'static> {
        match self {
            Field::Null => Field::Null,
            Field::Bool(b) => Field::Bool(b),
            Field::Num(n) => Field::Num(n),
            Field::Str(s) => Field::Str(s),
            Field::Borrowed(s) => Field::Str(s.into()),
            Field::Other(v) => Field::Other(v),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Field::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Field::Num(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Field::Null)
    }
}

/// Equal when the JSON is: a borrowed string equals an owned one.
impl PartialEq for Field<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Field::Null, Field::Null) => true,
            (Field::Bool(a), Field::Bool(b)) => a == b,
            (Field::Num(a), Field::Num(b)) => a == b,
            (Field::Other(a), Field::Other(b)) => a == b,
            _ => matches!((self.as_str(), other.as_str()), (Some(a), Some(b)) if a == b),
        }
    }
}

impl From<Value> for Field<'_> {
    fn from(v: Value) -> Self {
        match v {
            Value::Null => Field::Null,
            Value::Bool(b) => Field::Bool(b),
            Value::Number(n) => Field::Num(n),
            Value::String(s) => Field::Str(s.into_boxed_str()),
            other => Field::Other(Box::new(other)),
        }
    }
}

/// Any JSON value: the index is written by other programs too.
impl schemars::JsonSchema for Field<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AnyValue".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The value as index.json holds it: normally a string, number or boolean"
        })
    }
}

impl serde::Serialize for Field<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Field::Null => s.serialize_unit(),
            Field::Bool(b) => s.serialize_bool(*b),
            Field::Num(n) => n.serialize(s),
            Field::Str(t) => s.serialize_str(t),
            Field::Borrowed(t) => s.serialize_str(t),
            Field::Other(v) => v.serialize(s),
        }
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Field<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Field<'a>, D::Error> {
        use serde::Deserialize;
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Any<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Any<'a> {
            type Value = Field<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Null)
            }
            fn visit_none<E>(self) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Null)
            }
            fn visit_bool<E>(self, b: bool) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Bool(b))
            }
            fn visit_u64<E>(self, n: u64) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Num(n.into()))
            }
            fn visit_i64<E>(self, n: i64) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Num(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> std::result::Result<Field<'a>, E> {
                Ok(serde_json::Number::from_f64(n).map_or(Field::Null, Field::Num))
            }
            fn visit_borrowed_str<E>(self, t: &'de str) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Borrowed(t))
            }
            fn visit_str<E>(self, t: &str) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Str(t.into()))
            }
            fn visit_string<E>(self, t: String) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Str(t.into_boxed_str()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                a: A,
            ) -> std::result::Result<Field<'a>, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(a)).map(Field::from)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> std::result::Result<Field<'a>, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(a)).map(Field::from)
            }
        }
        d.deserialize_any(Any(std::marker::PhantomData))
    }
}

/// An index row as `list` reads it: the known fields only, no map per row
/// (parsing 10,000 rows as open maps costs several times more). Any JSON
/// value is accepted in each field; readers interpret it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ListRow<'a> {
    #[serde(borrow)]
    pub id: Field<'a>,
    #[serde(borrow)]
    pub status: Field<'a>,
    #[serde(borrow)]
    pub pinned: Field<'a>,
    #[serde(borrow)]
    pub archived: Field<'a>,
    #[serde(borrow)]
    pub unread: Field<'a>,
    #[serde(borrow)]
    pub agent_id: Field<'a>,
    #[serde(borrow)]
    pub title: Field<'a>,
    #[serde(borrow)]
    pub created_at: Field<'a>,
    #[serde(borrow)]
    pub updated_at: Field<'a>,
    #[serde(borrow)]
    pub source: Field<'a>,
    #[serde(borrow)]
    pub channel: Field<'a>,
    #[serde(borrow)]
    pub account_id: Field<'a>,
    #[serde(borrow)]
    pub peer_display: Field<'a>,
    #[serde(borrow)]
    pub peer_id: Field<'a>,
    #[serde(borrow)]
    pub group: Field<'a>,
    #[serde(skip_serializing_if = "Field::is_null")]
    #[serde(borrow)]
    pub preview: Field<'a>,
}

impl<'a> ListRow<'a> {
    /// The field named `key`, if the list has one: the index's fields and `preview`.
    fn field(key: &str) -> Option<&'static str> {
        super::schema::INDEX_FIELDS
            .into_iter()
            .chain(["preview"])
            .find(|f| *f == key)
    }

    fn set(&mut self, key: &str, v: Field<'a>) {
        match key {
            "id" => self.id = v,
            "status" => self.status = v,
            "pinned" => self.pinned = v,
            "archived" => self.archived = v,
            "unread" => self.unread = v,
            "agent_id" => self.agent_id = v,
            "title" => self.title = v,
            "created_at" => self.created_at = v,
            "updated_at" => self.updated_at = v,
            "source" => self.source = v,
            "channel" => self.channel = v,
            "account_id" => self.account_id = v,
            "peer_display" => self.peer_display = v,
            "peer_id" => self.peer_id = v,
            "group" => self.group = v,
            "preview" => self.preview = v,
            _ => {}
        }
    }

    pub fn from_row(row: Row) -> ListRow<'a> {
        let mut r = ListRow::default();
        for (k, v) in row {
            r.set(&k, v.into());
        }
        r
    }

    pub fn str<'b>(v: &'b Field<'_>) -> &'b str {
        v.as_str().unwrap_or("")
    }

    pub fn flag(v: &Field<'_>) -> bool {
        v.as_bool().unwrap_or(false)
    }
}

/// `index.json`'s bytes as [`load_list`] read them: the rows borrow their
/// strings from them, so the caller keeps this while it uses the rows and
/// both go at the end of its command (a `batch` process lists many times).
#[derive(Debug, Default)]
pub struct ListText(Option<super::mapped::Bytes>);

/// The index for listing: `index.json` parsed into [`ListRow`]s with the
/// journal folded in, the rows borrowing from `text`. `None` when
/// `index.json` is missing or corrupt.
pub fn load_list<'a>(
    state: &StateDir,
    text: &'a mut ListText,
) -> Result<Option<BTreeMap<String, Box<ListRow<'a>>>>> {
    let Some(bytes) = read_index_bytes(state)? else {
        return Ok(None);
    };
    let bytes: &'a [u8] = text.0.insert(bytes);
    // Boxed: the rows are moved around while the map is built and sorted.
    // Validated as UTF-8 once, not string by string; the rows are collected
    // in file order (sorted, as written here) and the map built in one pass.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(None);
    };
    let Ok(Pairs(pairs)) = serde_json::from_str::<Pairs<Box<ListRow>>>(text) else {
        return Ok(None);
    };
    let mut rows: BTreeMap<String, Box<ListRow>> = pairs.into_iter().collect();
    let written = index_written_at(state);
    let jpath = state.index_journal();
    if let Ok(mut f) = atomic::open_read(&jpath) {
        f.lock_shared().io("lock", &jpath)?;
        let mut journal = Vec::new();
        f.read_to_end(&mut journal).io("read", &jpath)?;
        for line in journal.split(|b| *b == b'\n') {
            // Empty and torn lines are skipped, as in `journal_rows`.
            let Ok(ListPatch {
                id: Some(id),
                deleted,
                fields,
                at,
            }) = serde_json::from_slice::<ListPatch>(line)
            else {
                continue;
            };
            if !deleted && !applies(at, written) {
                continue;
            }
            if deleted {
                rows.remove(&id);
                continue;
            }
            let entry = rows.entry(id).or_default();
            for (k, v) in fields {
                entry.set(k, v.into_owned());
            }
        }
    }
    Ok(Some(rows))
}

/// A JSON object's entries in file order (a later duplicate key wins once
/// they are collected into a map, as with a map deserialized directly).
struct Pairs<T>(Vec<(String, T)>);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Pairs<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Entries<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Entries<T> {
            type Value = Pairs<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Pairs<T>, A::Error> {
                let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(kv) = a.next_entry()? {
                    v.push(kv);
                }
                Ok(Pairs(v))
            }
        }
        d.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A journal line as `list` reads it: the list's fields it sets (null
/// included) and whether it deletes the row. Other keys are skipped
/// unparsed, and no map is built per line (the journal can hold a
/// thousand lines between folds).
struct ListPatch<'a> {
    id: Option<String>,
    deleted: bool,
    fields: Vec<(&'static str, Field<'a>)>,
    at: Option<f64>,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for ListPatch<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Lines<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Lines<'a> {
            type Value = ListPatch<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an index row")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<ListPatch<'a>, A::Error> {
                let mut p = ListPatch {
                    id: None,
                    deleted: false,
                    fields: Vec::with_capacity(16),
                    at: None,
                };
                while let Some(key) = m.next_key::<String>()? {
                    match ListRow::field(&key) {
                        Some(name) => {
                            let v: Field = m.next_value()?;
                            if name == "id" {
                                p.id = v.as_str().map(str::to_owned);
                            }
                            p.fields.push((name, v));
                        }
                        None if key == "_deleted" => {
                            p.deleted = m.next_value::<Field>()?.as_bool() == Some(true);
                        }
                        None if key == JOURNALED_AT => {
                            p.at = m.next_value::<Field>()?.as_f64();
                        }
                        None => {
                            m.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(p)
            }
        }
        d.deserialize_map(Lines(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fold that copies the rows the journal does not name writes what
    /// the fold that parses every row writes, byte for byte: random rows
    /// (titles with escapes and any script, times, flags, nulls) and
    /// random journals (partial rows, new sessions, deletes, lines older
    /// than the index, a torn last line).
    #[test]
    fn a_spliced_fold_writes_what_a_whole_fold_writes() {
        let mut seed: u64 = 7;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let titles = [
            "",
            "plain",
            "quote \" and \\ slash",
            "é ü 漢字 🙂",
            "tab\tnew\nline",
            "\u{1b}[31m",
        ];
        for case in 0..300 {
            let dir = tempfile::tempdir().unwrap();
            let state = StateDir {
                root: dir.path().to_path_buf(),
            };
            std::fs::create_dir_all(state.sessions()).unwrap();
            let row = |next: &mut dyn FnMut(u64) -> u64, id: &str| -> Row {
                let mut r = Row::new();
                r.insert("id".into(), id.into());
                r.insert("status".into(), "idle".into());
                r.insert("pinned".into(), (next(2) == 0).into());
                r.insert(
                    "title".into(),
                    titles[next(titles.len() as u64) as usize].into(),
                );
                r.insert(
                    "updated_at".into(),
                    (1_796_000_000.0 + next(1_000_000) as f64 / 7.0).into(),
                );
                r.insert("channel".into(), Value::Null);
                if next(3) == 0 {
                    r.insert("preview".into(), titles[next(6) as usize].into());
                }
                r
            };
            let ids = ["a", "b", "c", "d", "e", "f", "g", "h"];
            let mut index = Index::new();
            for id in ids {
                if next(2) == 0 {
                    index.insert(id.into(), row(&mut next, id));
                }
            }
            write_index(&state, &index).unwrap();
            let written = index_written_at(&state);
            let mut journal = Vec::new();
            for _ in 0..next(6) {
                let id = ids[next(8) as usize];
                let mut line = match next(4) {
                    0 => serde_json::json!({"id": id, "_deleted": true}),
                    1 => serde_json::json!({"id": id, "title": titles[next(6) as usize]}),
                    _ => Value::Object(row(&mut next, id)),
                };
                if next(4) == 0 {
                    line[JOURNALED_AT] = 1.0.into(); // older than the index
                }
                journal.extend(serde_json::to_vec(&line).unwrap());
                journal.push(b'\n');
            }
            if next(5) == 0 {
                journal.extend(b"{\"id\":\"a\",\"ti");
            }
            let mut whole = index.clone();
            apply_journal(&mut whole, &journal, written);
            let mut want = serde_json::to_vec(&whole).unwrap();
            want.push(b'\n');
            let got = spliced(&state, &journal)
                .unwrap()
                .expect("our own index is spliced");
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap(),
                "case {case}"
            );
        }
        // Not as this tool writes it (the Python store's indented file):
        // the whole fold.
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir {
            root: dir.path().to_path_buf(),
        };
        std::fs::create_dir_all(state.sessions()).unwrap();
        std::fs::write(state.index_json(), "{\n  \"a\": {\"id\": \"a\"}\n}\n").unwrap();
        assert!(spliced(&state, b"").unwrap().is_none());
    }

    #[test]
    fn pairs_keep_file_order_and_the_last_duplicate_wins_in_a_map() {
        let Pairs(p) = serde_json::from_str::<Pairs<u32>>(r#"{"b":1,"a":2,"b":3}"#).unwrap();
        assert_eq!(p, [("b".into(), 1), ("a".into(), 2), ("b".into(), 3)]);
        let m: BTreeMap<String, u32> = p.into_iter().collect();
        let direct: BTreeMap<String, u32> = serde_json::from_str(r#"{"b":1,"a":2,"b":3}"#).unwrap();
        assert_eq!(m, direct);
        assert!(serde_json::from_str::<Pairs<u32>>("[1]").is_err());
    }

    #[test]
    fn journal_lines_merge_and_torn_lines_are_skipped() {
        let mut index = Index::new();
        apply_journal(
            &mut index,
            b"{\"id\":\"a\",\"title\":\"x\",\"pinned\":false}\n{\"id\":\"a\",\"title\":\"y\"}\n{\"id\":\"b\",\"ti",
            None,
        );
        assert_eq!(index.len(), 1);
        assert_eq!(index["a"]["title"], "y");
        assert_eq!(index["a"]["pinned"], false);
        apply_journal(&mut index, b"{\"id\":\"a\",\"_deleted\":true}\n", None);
        assert!(index.is_empty());
    }

    #[test]
    fn a_journal_line_never_overrides_a_row_written_after_it() {
        let mut index = Index::new();
        index.insert(
            "a".into(),
            serde_json::from_str(r#"{"id":"a","title":"later"}"#).unwrap(),
        );
        let line = b"{\"id\":\"a\",\"title\":\"earlier\",\"_journaled_at\":100.0}\n";
        apply_journal(&mut index, line, Some(200.0));
        assert_eq!(index["a"]["title"], "later");
        apply_journal(&mut index, line, Some(50.0));
        assert_eq!(index["a"]["title"], "earlier");
        assert!(
            index["a"].get("_journaled_at").is_none(),
            "never part of a row"
        );
    }

    #[test]
    fn a_field_writes_back_the_json_it_read() {
        for json in [
            r#"null"#,
            r#"true"#,
            r#"17"#,
            r#"-3"#,
            r#"1796009999.0"#,
            r#"1.5e-7"#,
            r#""text with \"quotes\" and \u00e9""#,
            r#""plain text, é""#,
            r#"[1,{"a":null}]"#,
            r#"{"nested":{"b":[true]}}"#,
        ] {
            let field: Field = serde_json::from_str(json).unwrap();
            let value: Value = serde_json::from_str(json).unwrap();
            assert_eq!(
                serde_json::to_string(&field).unwrap(),
                serde_json::to_string(&value).unwrap(),
                "{json}"
            );
            // A string without escapes is borrowed, one with escapes owned.
            assert_eq!(
                matches!(field, Field::Borrowed(_)),
                json.starts_with('"') && !json.contains('\\'),
                "{json}"
            );
            assert_eq!(field, Field::from(value.clone()), "{json}");
            assert_eq!(field.into_owned(), Field::from(value), "{json}");
        }
        assert!(std::mem::size_of::<Field>() <= 24);
    }

    /// `list` reads the journal its own way (no map per line): it must see
    /// what folding the journal into the index would give.
    #[test]
    fn the_list_reads_the_journal_as_the_fold_does() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir {
            root: dir.path().to_path_buf(),
        };
        std::fs::create_dir_all(state.sessions()).unwrap();
        let index = r#"{"a":{"id":"a","title":"A","group":"g","preview":"p","x":1},
            "b":{"id":"b","title":"B"},"c":{"id":"c","title":"C"}}"#;
        std::fs::write(state.index_json(), index).unwrap();
        let journal = concat!(
            "{\"id\":\"a\",\"title\":\"A2\",\"group\":null,\"unknown\":{\"deep\":[1,2]}}\n",
            "{\"id\":\"b\",\"_deleted\":true}\n",
            "{\"id\":\"d\",\"status\":\"running\",\"t\\u0069tle\":\"escaped key\"}\n",
            "{\"title\":\"no id\"}\n",
            "[1,2]\n",
            "\n",
            "{\"id\":\"c\",\"_deleted\":false,\"pinned\":true,\"preview\":\"q\"}\n",
            "{\"id\":\"a\",\"updated_at\":5.5,\"ti",
        );
        std::fs::write(state.index_journal(), journal).unwrap();
        let listed: Vec<(String, String)> = load_list(&state, &mut ListText::default())
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|(id, r)| (id, serde_json::to_string(&r).unwrap()))
            .collect();
        let mut folded = read_index_file(&state).unwrap().unwrap();
        apply_journal(&mut folded, journal.as_bytes(), None);
        let folded: Vec<(String, String)> = folded
            .into_iter()
            .map(|(id, row)| (id, serde_json::to_string(&ListRow::from_row(row)).unwrap()))
            .collect();
        assert_eq!(listed, folded);
        assert_eq!(listed.len(), 3, "{listed:?}");
        assert!(listed[0].1.contains(r#""title":"A2""#) && listed[0].1.contains(r#""group":null"#));
        assert!(
            listed[2].1.contains(r#""title":"escaped key""#),
            "{listed:?}"
        );
    }
}
