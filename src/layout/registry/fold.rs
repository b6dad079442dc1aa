//! The fold: the journal's lines written into `index.json` under the
//! registry lock plus the journal's exclusive lock, then the journal
//! emptied; by a registry writer, when the journal grew large, and for
//! every state dir this process owes one when its command ends.

use std::collections::BTreeMap;
use std::io::Read;

use crate::error::{IoContext, Result};
use crate::layout::atomic;
use crate::layout::lock::{self, LockOptions};
use crate::layout::paths::StateDir;

use super::{
    Index, Row, apply_journal, index_written_at, journal_len, journal_rows, owed, read_index_bytes,
    read_index_file, rebuild, write_index,
};

/// Journal size past which an appender folds it (when the registry is free).
/// Every `list` reads the whole journal (a turn adds about four rows of
/// 300 bytes, and 64 KiB take `list` about a millisecond); a fold rewrites
/// `index.json` once per some 200 rows.
pub const FOLD_THRESHOLD: u64 = 64 * 1024;

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

/// Fold the journal into `index.json` now (SPEC §3: the index is current
/// after every command but `append`). The caller holds no session lock
/// (the lock order is registry, then session).
pub fn fold(state: &StateDir, opts: LockOptions) -> Result<()> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts)?;
    fold_journal_locked(state)
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

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::Value;

    use crate::layout::registry::JOURNALED_AT;

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
}
