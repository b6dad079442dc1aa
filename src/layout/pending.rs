//! The pending area of an imported session: `.git/git-session/import.pending`,
//! the turn each of its transcripts has not closed yet (no later message, no
//! turn-end record), kept whole outside `history/` so that no commit holds
//! it early (a turn commit's tree is the whole session directory, and
//! `commit-turn`, `backfill` and `verify --fix` commit every node file
//! there). One JSON object, from transcript key (the session id for its own
//! transcript) to `{"transcript": <file>, "line": <first line not in
//! history/>, "nodes": [<node, as it will be written, seq 0>…], "records":
//! [<kept lines no node holds yet>…]}`. Each import of the transcript
//! writes its entry anew from the transcript (it is derived, never the only
//! copy while the transcript is there); the import that finds the turn
//! closed writes its nodes into `history/` and drops the entry.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::schema::Node;
use super::{SessionDir, atomic};
use crate::error::{IoContext, Result};

/// One transcript's open turn.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Open {
    /// The transcript file it was read from.
    pub transcript: String,
    /// Its first line not in `history/` (0-based).
    pub line: usize,
    /// Its nodes, in transcript order, as they will be written (seq 0).
    pub nodes: Vec<Value>,
    /// Lines read that no node holds yet, as nodes keep them.
    pub records: Vec<Value>,
}

impl Open {
    /// Its nodes, parsed (one that does not parse is left out).
    pub fn nodes(&self) -> Vec<Node> {
        self.nodes
            .iter()
            .filter_map(|v| Node::parse(v.to_string().as_bytes()).ok())
            .collect()
    }
}

/// The session's open turns, by transcript key; none when there is no
/// pending area, or one that is not ours to read (a link, a special file,
/// not JSON: the next import writes it anew).
pub fn read(sd: &SessionDir) -> BTreeMap<String, Open> {
    atomic::read_if_present(&sd.import_pending())
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// The session's open turns as [`read`] gives them, less the nodes
/// `history/` already holds (an import killed after it wrote them, before
/// it moved the pending area on): what is still to come.
pub fn unwritten(sd: &SessionDir) -> BTreeMap<String, Open> {
    let mut open = read(sd);
    if open.is_empty() {
        return open;
    }
    let Ok(catalog) = super::history::Catalog::load(sd) else {
        return open;
    };
    for o in open.values_mut() {
        o.nodes.retain(|n| {
            n.get("id")
                .and_then(Value::as_str)
                .is_none_or(|id| !catalog.contains(id))
        });
    }
    open.retain(|_, o| !o.nodes.is_empty() || !o.records.is_empty());
    open
}

/// Keep transcript `key`'s open turn (`nodes`, `records`), or drop its
/// entry when there is none. The caller holds the session lock.
pub fn write(
    sd: &SessionDir,
    key: &str,
    transcript: &Path,
    line: usize,
    nodes: &[Node],
    records: &[Value],
) -> Result<()> {
    let path = sd.import_pending();
    let mut all = read(sd);
    let entry = (!nodes.is_empty() || !records.is_empty()).then(|| Open {
        transcript: std::path::absolute(transcript)
            .unwrap_or_else(|_| transcript.to_path_buf())
            .to_string_lossy()
            .into_owned(),
        line,
        nodes: nodes
            .iter()
            .filter_map(|n| serde_json::from_slice(&n.to_json()).ok())
            .collect(),
        records: records.to_vec(),
    });
    let had = all.contains_key(key);
    match entry {
        Some(e) => {
            all.insert(key.to_string(), e);
        }
        None if !had => return Ok(()),
        None => {
            all.remove(key);
        }
    }
    atomic::refuse_unsafe(&sd.private_dir())?;
    atomic::refuse_unsafe(&path)?;
    if all.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).io("remove", &path),
            _ => Ok(()),
        };
    }
    let mut bytes = serde_json::to_vec(&all).expect("pending turns serialise");
    bytes.push(b'\n');
    std::fs::create_dir_all(sd.private_dir()).io("create", sd.private_dir())?;
    atomic::write(&path, &bytes)
}
