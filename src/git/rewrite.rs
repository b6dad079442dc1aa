//! A session's history written again with some files and messages
//! replaced (`redact`): every commit from the first one whose tree or
//! message changes gets a new id; authors, committers, dates and the shape
//! of the history stay as they were. The old commits are not touched (a
//! backup ref keeps them).

use std::collections::{BTreeMap, HashMap};

use gix::ObjectId;
use gix::objs::Kind;

use super::SessionRepo;
use crate::error::Result;

/// What a rewrite replaces: a file's bytes (by its path in the tree) and a
/// commit's message; `None` keeps them.
pub trait Rewriter {
    fn file(&mut self, path: &str, data: &[u8]) -> Option<Vec<u8>>;
    fn message(&mut self, message: &str) -> Option<String>;
}

impl SessionRepo {
    /// Write again every commit the `tips` reach whose tree, message or
    /// parents change under `rewriter`; the old → new id of each that did.
    /// Objects are written in bulk (call [`Self::sync_objects`] before a
    /// ref points at them).
    pub fn rewrite_history(
        &mut self,
        tips: &[ObjectId],
        rewriter: &mut dyn Rewriter,
    ) -> Result<BTreeMap<ObjectId, ObjectId>> {
        // Parents before children.
        let mut order: Vec<ObjectId> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<(ObjectId, bool)> = tips.iter().map(|t| (*t, false)).collect();
        let mut decoded: HashMap<ObjectId, gix::objs::Commit> = HashMap::new();
        while let Some((id, parents_done)) = stack.pop() {
            if parents_done {
                order.push(id);
                continue;
            }
            if !seen.insert(id) {
                continue;
            }
            let data = self.raw_object(id, Kind::Commit)?;
            let commit: gix::objs::Commit =
                gix::objs::CommitRef::from_bytes(&data, gix::hash::Kind::Sha1)
                    .and_then(|c| c.into_owned())
                    .map_err(|e| self.err(&format!("decode commit {id}"), e))?;
            stack.push((id, true));
            for p in &commit.parents {
                if !seen.contains(p) {
                    stack.push((*p, false));
                }
            }
            decoded.insert(id, commit);
        }
        self.begin_bulk();
        let mut trees: HashMap<(ObjectId, String), ObjectId> = HashMap::new();
        let mut blobs: HashMap<(ObjectId, String), ObjectId> = HashMap::new();
        let mut map: BTreeMap<ObjectId, ObjectId> = BTreeMap::new();
        for id in order {
            let mut commit = decoded.remove(&id).expect("decoded on the way down");
            let tree = self.rewrite_tree(commit.tree, "", rewriter, &mut trees, &mut blobs)?;
            let parents: Vec<ObjectId> = commit
                .parents
                .iter()
                .map(|p| map.get(p).copied().unwrap_or(*p))
                .collect();
            let message = rewriter.message(&String::from_utf8_lossy(&commit.message));
            if tree == commit.tree && parents == commit.parents.to_vec() && message.is_none() {
                continue;
            }
            commit.tree = tree;
            commit.parents = parents.into_iter().collect();
            if let Some(m) = message {
                commit.message = m.into();
            }
            let new = self.write(commit)?;
            map.insert(id, new);
        }
        Ok(map)
    }

    fn rewrite_tree(
        &mut self,
        id: ObjectId,
        prefix: &str,
        rewriter: &mut dyn Rewriter,
        trees: &mut HashMap<(ObjectId, String), ObjectId>,
        blobs: &mut HashMap<(ObjectId, String), ObjectId>,
    ) -> Result<ObjectId> {
        if let Some(done) = trees.get(&(id, prefix.to_string())) {
            return Ok(*done);
        }
        let data = self.raw_object(id, Kind::Tree)?;
        let mut tree: gix::objs::Tree =
            gix::objs::TreeRef::from_bytes(&data, gix::hash::Kind::Sha1)
                .map_err(|e| self.err(&format!("decode tree {id}"), e))?
                .into();
        let mut changed = false;
        for entry in &mut tree.entries {
            let path = format!("{prefix}{}", entry.filename);
            let new = if entry.mode.is_tree() {
                self.rewrite_tree(entry.oid, &format!("{path}/"), rewriter, trees, blobs)?
            } else if entry.mode.is_blob() {
                let key = (entry.oid, path.clone());
                match blobs.get(&key) {
                    Some(b) => *b,
                    None => {
                        let data = self.raw_object(entry.oid, Kind::Blob)?;
                        let b = match rewriter.file(&path, &data) {
                            Some(bytes) => self.write_blob(bytes)?,
                            None => entry.oid,
                        };
                        blobs.insert(key, b);
                        b
                    }
                }
            } else {
                entry.oid
            };
            if new != entry.oid {
                entry.oid = new;
                changed = true;
            }
        }
        let out = if changed { self.write(tree)? } else { id };
        trees.insert((id, prefix.to_string()), out);
        Ok(out)
    }
}
