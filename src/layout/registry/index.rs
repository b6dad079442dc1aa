//! `index.json` and its rows: read as a file or with the journal folded in,
//! written whole, and each row rebuilt from its session's `meta.json`.

use std::io::Read;

use serde_json::Value;

use crate::error::{IoContext, Result};
use crate::layout::atomic;
use crate::layout::lock::LockOptions;
use crate::layout::paths::StateDir;

use super::{Index, Row, apply_journal, discover, index_written_at, update_index};

/// The bytes of `index.json` (mapped when large), `None` when missing.
pub(super) fn read_index_bytes(state: &StateDir) -> Result<Option<crate::layout::mapped::Bytes>> {
    let path = state.index_json();
    let mut file = match atomic::open_read(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).io("read", path),
    };
    let len = file.metadata().io("read", &path)?.len();
    crate::layout::mapped::read(&mut file, len)
        .io("read", path)
        .map(Some)
}

/// Read `index.json` (None when missing or unparsable: rebuild it).
pub(super) fn read_index_file(state: &StateDir) -> Result<Option<Index>> {
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

/// Rebuild every row from `meta.json`, with the preview of the latest user node.
pub fn rebuild(state: &StateDir) -> Result<Index> {
    let mut index = Index::new();
    for (id, dir) in discover(state)? {
        if let Some(row) = fresh_row(&crate::layout::SessionDir::new(dir), &id)? {
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

/// The preview a session's index row shows: the user message that starts
/// its latest turn (SPEC §3).
pub fn latest_preview(
    sd: &crate::layout::SessionDir,
    catalog: &crate::layout::history::Catalog,
) -> Option<String> {
    crate::layout::history::latest_turn_start(sd, catalog)
        .map(|n| crate::layout::schema::preview(&n.text()))
}

/// The index row of the session in `sd`, from its meta.json, with the
/// preview of the latest user node; `None` when meta.json does not parse.
pub fn fresh_row(sd: &crate::layout::SessionDir, id: &str) -> Result<Option<Row>> {
    let Ok(meta) = crate::layout::schema::Meta::read(&sd.meta()) else {
        return Ok(None);
    };
    let catalog = crate::layout::history::Catalog::peek(sd)?;
    let preview = latest_preview(sd, &catalog);
    Ok(Some(crate::layout::schema::index_row(
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
        let differ: Vec<&'static str> = crate::layout::schema::INDEX_FIELDS
            .into_iter()
            .filter(|k| !same(have.get(*k), want.get(*k), k))
            .collect();
        if !differ.is_empty() {
            out.push((id.clone(), differ));
        }
    }
    out
}

pub(super) fn write_index(state: &StateDir, index: &Index) -> Result<()> {
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
