//! Objects of commits copied from one repository to another, in-process:
//! `push` copies a session's new turns into the transfer repository (from
//! which git sends them), `fetch` copies fetched turns from there into a
//! session repository. Written in bulk mode: one pack, whatever the count.
//!
//! The rule that makes the walk stop early: a repository that has a commit
//! has everything it reaches. Objects are written children first (blobs and
//! subtrees before their tree, a tree and the parents before their commit)
//! and refs move only after the pack is synced, so a run killed at any
//! point leaves packs for which the rule holds.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;
use gix::objs::Kind;

use super::SessionRepo;
use crate::error::Result;

/// Objects read from one repository for another, children first.
pub type Objects = Vec<(Kind, ObjectId, Vec<u8>)>;

impl SessionRepo {
    /// Whether this repository has `id`, counting what this process is
    /// about to write.
    pub fn knows(&self, id: &ObjectId) -> Result<bool> {
        if self.objects.pending(id) {
            return Ok(true);
        }
        Ok(self.repo()?.objects.exists_without_refresh(id))
    }

    /// Copy from `src` every object that the commits reachable from `tips`
    /// hold and this repository lacks, in bulk mode (call
    /// [`Self::sync_objects`] before a ref points at them). Returns how
    /// many objects were copied.
    pub fn copy_from(&mut self, src: &SessionRepo, tips: &[ObjectId]) -> Result<usize> {
        let objects = src.objects_for(tips, &|id| self.knows(id))?;
        self.begin_bulk();
        let n = objects.len();
        for (kind, id, data) in objects {
            self.push_bulk(kind, id, data)?;
        }
        Ok(n)
    }

    /// Every object the commits reachable from `tips` hold that `known`
    /// says the other repository lacks, children first (blobs and subtrees
    /// before their tree, a commit after its tree and its parents). Reads
    /// only: several repositories can be read at once, each on a thread.
    pub fn objects_for(
        &self,
        tips: &[ObjectId],
        known: &dyn Fn(&ObjectId) -> Result<bool>,
    ) -> Result<Objects> {
        // The commits to copy, parents before children.
        let mut order: Vec<(ObjectId, ObjectId, Option<ObjectId>, Vec<u8>)> = Vec::new();
        let mut seen: HashSet<ObjectId> = HashSet::new();
        let mut stack: Vec<(ObjectId, bool)> = Vec::new();
        for t in tips {
            if !known(t)? {
                stack.push((*t, false));
            }
        }
        let mut decoded: HashMap<ObjectId, (ObjectId, Vec<ObjectId>, Vec<u8>)> = HashMap::new();
        let mut trees: HashMap<ObjectId, ObjectId> = HashMap::new();
        while let Some((id, parents_done)) = stack.pop() {
            if parents_done {
                let (tree, parents, data) = decoded.remove(&id).expect("decoded on the way down");
                let parent_tree = match parents.first() {
                    Some(p) => Some(match trees.get(p) {
                        Some(t) => *t,
                        None => self.commit_info(*p)?.tree,
                    }),
                    None => None,
                };
                trees.insert(id, tree);
                order.push((id, tree, parent_tree, data));
                continue;
            }
            if !seen.insert(id) {
                continue;
            }
            let data = self.raw_object(id, Kind::Commit)?;
            let (tree, parents) = {
                let commit = gix::objs::CommitRef::from_bytes(&data, gix::hash::Kind::Sha1)
                    .map_err(|e| self.err(&format!("decode commit {id}"), e))?;
                (commit.tree(), commit.parents().collect::<Vec<ObjectId>>())
            };
            stack.push((id, true));
            for p in &parents {
                if !seen.contains(p) && !known(p)? {
                    stack.push((*p, false));
                }
            }
            decoded.insert(id, (tree, parents, data));
        }
        let mut out = Objects::new();
        let (mut last, mut this) = (Entries::new(), Entries::new());
        for (id, tree, parent_tree, data) in order {
            self.tree_objects(tree, parent_tree, &mut seen, &mut out, &last, &mut this)?;
            out.push((Kind::Commit, id, data));
            last = std::mem::take(&mut this);
        }
        Ok(out)
    }

    /// Tree `id` and what it holds, skipping what `parent` (the same
    /// path's tree in the parent commit, which goes first) holds unchanged.
    /// `last` holds the entries of the trees the commit before (its parent,
    /// as a rule) added, so that they are not read twice; the entries of
    /// this commit's trees go into `this`.
    fn tree_objects(
        &self,
        id: ObjectId,
        parent: Option<ObjectId>,
        seen: &mut HashSet<ObjectId>,
        out: &mut Objects,
        last: &Entries,
        this: &mut Entries,
    ) -> Result<()> {
        // What a tree holds is not looked up in the other repository (a
        // lookup per object was a third of a copy's cost): what the parent
        // holds unchanged is skipped, and an object copied although the
        // other side has it (the same file in two sessions) is only a
        // duplicate, which git allows across packs.
        if !seen.insert(id) {
            return Ok(());
        }
        let data = self.raw_object(id, Kind::Tree)?;
        let read;
        let before = match parent {
            Some(p) if p != id => match last.get(&p) {
                Some(names) => names,
                None => {
                    read = names(tree_entries(self, &self.raw_object(p, Kind::Tree)?, p)?);
                    &read
                }
            },
            _ => &HashMap::new(),
        };
        let entries = tree_entries(self, &data, id)?;
        for (name, mode, oid) in &entries {
            let old = before.get(name).copied();
            if old == Some(*oid) {
                continue;
            }
            if mode.is_tree() {
                self.tree_objects(*oid, old, seen, out, last, this)?;
            } else if mode.is_commit() {
                // A submodule's commit lives elsewhere; it is not ours to copy.
            } else if seen.insert(*oid) {
                out.push((Kind::Blob, *oid, self.raw_object(*oid, Kind::Blob)?));
            }
        }
        this.insert(id, names(entries));
        out.push((Kind::Tree, id, data));
        Ok(())
    }

    /// A commit (in bulk mode) whose tree holds one file, `name`, on
    /// `parents`: a project's record or a tombstone on the remote.
    pub fn write_file_commit(
        &mut self,
        name: &str,
        data: Vec<u8>,
        message: &str,
        time: f64,
        parents: &[ObjectId],
    ) -> Result<ObjectId> {
        self.begin_bulk();
        let blob = self.write_blob(data)?;
        let tree = gix::objs::Tree {
            entries: vec![gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Blob.into(),
                filename: name.into(),
                oid: blob,
            }],
        };
        let tree = self.write(tree)?;
        self.write_commit(tree, parents, message, time)
    }

    /// The bytes of object `id`, which must be of `kind`.
    pub(super) fn raw_object(&self, id: ObjectId, kind: Kind) -> Result<Vec<u8>> {
        // A turn's objects are loose until the next roll-up: read without
        // opening the repository.
        if let Some((k, data)) = self.objects.read_loose(&id)
            && k == kind
        {
            return Ok(data);
        }
        let o = self
            .repo()?
            .find_object(id)
            .map_err(|e| self.err(&format!("read object {id}"), e))?;
        if o.kind != kind {
            return Err(self.err(
                &format!("read object {id}"),
                format!("it is a {}, not a {kind}", o.kind),
            ));
        }
        Ok(o.detach().data)
    }
}

/// The entries (name → object) of trees by id.
type Entries = HashMap<ObjectId, HashMap<Vec<u8>, ObjectId>>;

fn names(
    entries: Vec<(Vec<u8>, gix::objs::tree::EntryMode, ObjectId)>,
) -> HashMap<Vec<u8>, ObjectId> {
    entries
        .into_iter()
        .map(|(name, _, oid)| (name, oid))
        .collect()
}

fn tree_entries(
    repo: &SessionRepo,
    data: &[u8],
    id: ObjectId,
) -> Result<Vec<(Vec<u8>, gix::objs::tree::EntryMode, ObjectId)>> {
    let tree = gix::objs::TreeRef::from_bytes(data, gix::hash::Kind::Sha1)
        .map_err(|e| repo.err(&format!("decode tree {id}"), e))?;
    Ok(tree
        .entries
        .iter()
        .map(|e| (e.filename.to_vec(), e.mode, e.oid.to_owned()))
        .collect())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::path::Path;

    use gix::ObjectId;
    use gix::objs::Kind;

    use super::SessionRepo;
    use crate::git::tests::git;

    fn run(dir: &Path, args: &[&str]) -> String {
        let out = git(dir, args);
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> ObjectId {
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        run(dir, &["add", "-A"]);
        run(
            dir,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "-m",
                message,
            ],
        );
        run(dir, &["rev-parse", "HEAD"]).trim().parse().unwrap()
    }

    /// What `git rev-list --objects` lists for `args`.
    fn rev_list(dir: &Path, args: &[&str]) -> HashSet<ObjectId> {
        let mut a = vec!["rev-list", "--objects"];
        a.extend(args);
        run(dir, &a)
            .lines()
            .map(|l| l.split(' ').next().unwrap().parse().unwrap())
            .collect()
    }

    /// Every object the new commits hold, each once, children first: along
    /// a chain (where the parent's trees are not read again) and on a branch
    /// off an older commit (where they are), down to a commit the other
    /// side has.
    #[test]
    fn the_objects_of_new_commits_each_once_children_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        run(dir, &["init", "-q", "-b", "main"]);
        let c1 = commit(dir, &[("meta.json", "{}"), ("history/1.json", "a")], "1");
        let c2 = commit(dir, &[("history/2.json", "b"), ("history/x/1", "x")], "2");
        commit(
            dir,
            &[("meta.json", "{\"n\":3}"), ("history/3.json", "c")],
            "3",
        );
        let c4 = commit(dir, &[("history/x/2", "y"), ("history/4.json", "d")], "4");
        run(dir, &["checkout", "-q", "-b", "retry", &c2.to_string()]);
        let r3 = commit(
            dir,
            &[("history/3-retry.json", "e"), ("history/x/1", "z")],
            "r3",
        );
        let repo = SessionRepo::open_for_reading(dir).unwrap();
        let tips = [c4, r3];
        let c1_name = c1.to_string();
        for (known, not) in [(None, vec![]), (Some(c1), vec!["--not", c1_name.as_str()])] {
            let objects = repo
                .objects_for(&tips, &|id| Ok(Some(*id) == known))
                .unwrap();
            let ids: Vec<ObjectId> = objects.iter().map(|(_, id, _)| *id).collect();
            let unique: HashSet<ObjectId> = ids.iter().copied().collect();
            assert_eq!(unique.len(), ids.len(), "an object twice: {ids:?}");
            let mut args = vec!["main", "retry"];
            args.extend(not.iter());
            assert_eq!(unique, rev_list(dir, &args), "known {known:?}");
            // Children first: what a tree or a commit names comes before it
            // (or is on the other side).
            let pos = |id: &ObjectId| ids.iter().position(|x| x == id);
            for (i, (kind, id, data)) in objects.iter().enumerate() {
                let named: Vec<ObjectId> = match kind {
                    Kind::Tree => gix::objs::TreeRef::from_bytes(data, gix::hash::Kind::Sha1)
                        .unwrap()
                        .entries
                        .iter()
                        .map(|e| e.oid.to_owned())
                        .collect(),
                    Kind::Commit => {
                        let c =
                            gix::objs::CommitRef::from_bytes(data, gix::hash::Kind::Sha1).unwrap();
                        std::iter::once(c.tree()).chain(c.parents()).collect()
                    }
                    _ => vec![],
                };
                for n in named {
                    if let Some(j) = pos(&n) {
                        assert!(j < i, "{n} after {id}, which names it");
                    }
                }
            }
        }
    }
}
