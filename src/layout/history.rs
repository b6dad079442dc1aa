//! The `history/` directory: the catalog of node files as their names tell
//! (one `readdir`, no file opened), and reading nodes by payload.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, IoContext, Result};

use super::paths::{TEMP_PREFIX, parse_node_file_name};
use super::schema::{Node, read_bounded};

/// One node file as its name tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    pub letter: char,
    pub id: String,
    pub file: String,
}

/// All node files of a session, sorted by the seq their names carry.
#[derive(Debug, Default)]
pub struct Catalog {
    pub entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    /// Ids that more than one file claims.
    pub duplicate_ids: Vec<String>,
    /// Files in `history/` whose names are not node names (left alone, reported by `verify`).
    pub foreign: Vec<String>,
}

impl Catalog {
    pub fn read(history: &Path) -> Result<Catalog> {
        let mut entries = Vec::new();
        let mut foreign = Vec::new();
        let rd = match std::fs::read_dir(history) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Catalog::default()),
            Err(e) => return Err(e).io("list", history),
        };
        for de in rd {
            let de = de.io("list", history)?;
            let name = de.file_name();
            let Some(name) = name.to_str() else {
                foreign.push(name.to_string_lossy().into_owned());
                continue;
            };
            if name.starts_with(TEMP_PREFIX) {
                continue;
            }
            match parse_node_file_name(name) {
                Some((seq, letter, id)) => entries.push(Entry {
                    seq,
                    letter,
                    id: id.to_string(),
                    file: name.to_string(),
                }),
                None => foreign.push(name.to_string()),
            }
        }
        entries.sort_by(|a, b| a.seq.cmp(&b.seq).then_with(|| a.file.cmp(&b.file)));
        let mut by_id = HashMap::with_capacity(entries.len());
        let mut duplicate_ids = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if by_id.insert(e.id.clone(), i).is_some() {
                duplicate_ids.push(e.id.clone());
            }
        }
        foreign.sort();
        Ok(Catalog {
            entries,
            by_id,
            duplicate_ids,
            foreign,
        })
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    pub fn max_seq(&self) -> Option<u64> {
        self.entries.last().map(|e| e.seq)
    }

    /// The latest node whose letter is one of `letters`.
    pub fn latest(&self, letters: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .rev()
            .find(|e| letters.contains(e.letter))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Parse one node file; the name must agree with the payload's id.
pub fn read_node(history: &Path, entry: &Entry) -> Result<Node> {
    let path = history.join(&entry.file);
    let bytes = read_bounded(&path)?;
    let node = Node::parse(&bytes).map_err(|r| Error::corrupt(&path, r))?;
    if node.id != entry.id {
        return Err(Error::corrupt(
            &path,
            format!(
                "the file name says id `{}` but the node says `{}`",
                entry.id, node.id
            ),
        ));
    }
    Ok(node)
}

/// Parse every node, in payload `seq` order; a file that does not parse is
/// skipped with a warning (SPEC §2.2).
pub fn read_all(history: &Path, catalog: &Catalog, warn: &mut dyn FnMut(String)) -> Vec<Node> {
    let mut nodes: Vec<Node> = catalog
        .entries
        .iter()
        .filter_map(|e| match read_node(history, e) {
            Ok(n) => Some(n),
            Err(err) => {
                warn(format!(
                    "skipping `{}`: {err}",
                    history.join(&e.file).display()
                ));
                None
            }
        })
        .collect();
    nodes.sort_by_key(|n| n.seq);
    nodes
}
