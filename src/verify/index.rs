//! The git index against the commit it is to mirror, and the files the
//! next turn will commit.

use std::collections::{BTreeMap, HashSet};

use super::Checker;
use super::mirror::{Newest, same_as_blob, tree_files};
use crate::git::{Oid, SessionRepo};
use crate::layout::{SessionDir, TEMP_PREFIX};

/// The git index against the commit it is to mirror, unless it is at HEAD.
pub(super) fn check_index(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    heads: &Newest,
    newest_entries: &[(String, u32, Oid)],
    index: &crate::git::Index,
) {
    let Newest {
        newest,
        index_commit,
        head_commit,
    } = *heads;
    if let Some(n) = index_commit {
        let entries_of = |commit: Oid| match Some(commit) == newest {
            true => Ok(newest_entries.to_vec()),
            false => repo
                .commit_info(commit)
                .and_then(|info| tree_files(repo, info.tree)),
        };
        // Another writer's `git add -A && git commit` (the Python store's
        // turn) leaves the index at HEAD: that is in order too.
        let at_head = head_commit
            .filter(|h| *h != n)
            .and_then(|h| entries_of(h).ok())
            .is_some_and(|e| index_matches(&e, index).is_empty());
        if !at_head && let Ok(entries) = entries_of(n) {
            git_index(c, sd, n, &entries, index);
        }
    }
}

/// The git index against the newest commit's tree (the index mirrors the
/// last commit written; HEAD may be on an older turn).
fn git_index(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    newest: Oid,
    entries: &[(String, u32, Oid)],
    index: &crate::git::Index,
) {
    let differ = index_matches(entries, index);
    if !differ.is_empty() {
        c.add(
            "git_index_stale",
            &sd.git_dir().join("index"),
            format!(
                "{} index entr(ies) differ from commit {}: {}",
                differ.len(),
                newest.to_hex_with_len(8),
                differ
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!("git-session verify --fix {}", c.id),
            true,
        );
        c.out.index_from = Some(newest);
    }
}

/// The paths where the index and a tree's entries disagree, sorted.
fn index_matches(entries: &[(String, u32, Oid)], index: &crate::git::Index) -> Vec<String> {
    let tree: BTreeMap<&str, Oid> = entries.iter().map(|(p, _, id)| (p.as_str(), *id)).collect();
    let mut differ: Vec<String> = Vec::new();
    let mut seen = 0usize;
    for (path, id) in index.entries() {
        let path = String::from_utf8_lossy(path).into_owned();
        match tree.get(path.as_str()) {
            Some(t) if *t == id => seen += 1,
            Some(_) => {
                seen += 1;
                differ.push(path);
            }
            None => differ.push(path),
        }
    }
    if seen < tree.len() {
        differ.extend(
            tree.keys()
                .filter(|p| !index.contains(p.as_bytes()))
                .map(|p| p.to_string()),
        );
    }
    differ.sort();
    differ
}

/// Files other than nodes that differ from the newest tree, or that it
/// lacks: what the next turn will commit.
pub(super) fn pending_files(
    sd: &SessionDir,
    entries: &[(String, u32, Oid)],
    index: Option<&crate::git::Index>,
) -> usize {
    let mut n = 0;
    let mut in_tree: HashSet<&str> = HashSet::new();
    for (path, _, id) in entries {
        in_tree.insert(path);
        if path.starts_with(crate::layout::paths::HISTORY_PREFIX) {
            continue;
        }
        let full = sd.dir.join(path);
        if std::fs::symlink_metadata(&full).is_err()
            || same_as_blob(&full, path, *id, index).is_some()
        {
            n += 1;
        }
    }
    for root in std::fs::read_dir(&sd.dir).into_iter().flatten().flatten() {
        let name = root.file_name().to_string_lossy().into_owned();
        if name == ".git" || name == "history" || name.starts_with(TEMP_PREFIX) {
            continue;
        }
        for e in walkdir::WalkDir::new(root.path())
            .into_iter()
            .filter_entry(|e| !e.file_name().to_string_lossy().starts_with(TEMP_PREFIX))
            .flatten()
        {
            if e.file_type().is_dir() {
                continue;
            }
            if let Ok(rel) = e.path().strip_prefix(&sd.dir)
                && let Some(rel) = rel.to_str()
                && !in_tree.contains(rel)
            {
                n += 1;
            }
        }
    }
    n
}
