//! The journal, `index.journal`: a writer that changes one session appends
//! its row there (one JSON line, under a shared `flock`, `O_APPEND`), and
//! readers apply the lines over `index.json` ([`apply_journal`]); which
//! state dirs this process owes a fold; what changed since a reader's
//! [`Mark`].

use std::io::{Read, Write};
use std::path::PathBuf;

use serde_json::Value;

use crate::error::{IoContext, Result};
use crate::layout::atomic;
use crate::layout::paths::StateDir;

use super::{Index, Row};

/// The state dirs whose journal this process wrote rows to that
/// `index.json` must show before the command ends
/// ([`fold_owed`](super::fold_owed)).
static OWED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

pub(super) fn owed() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    OWED.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Append one row (or a partial row: only the keys given change) to the
/// journal; `index.json` shows it when the command ends
/// ([`fold_owed`](super::fold_owed)).
pub fn journal_append(state: &StateDir, row: &Row) -> Result<()> {
    journal_append_lagging(state, row)?;
    owe_fold(state);
    Ok(())
}

/// Have `index.json` show every journaled row when the command ends
/// ([`fold_owed`](super::fold_owed)): a command that ends a turn folds in
/// what the turn's bare appends left in the journal.
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
pub(super) const JOURNALED_AT: &str = "_journaled_at";

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
pub(super) fn index_written_at(state: &StateDir) -> Option<f64> {
    let m = std::fs::metadata(state.index_json())
        .ok()?
        .modified()
        .ok()?;
    Some(m.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64())
}

/// Whether a journal line of time `at` still applies over an index.json
/// written at `written` (lines from older versions carry no time: they do).
pub(super) fn applies(at: Option<f64>, written: Option<f64>) -> bool {
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
pub(super) fn journal_rows(bytes: &[u8], mut f: impl FnMut(String, Option<Row>)) {
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

pub(super) fn apply_journal(index: &mut Index, bytes: &[u8], written: Option<f64>) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
