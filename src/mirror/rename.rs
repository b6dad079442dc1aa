//! One naming per session: every node file renamed to the Python store's
//! naming (`{seq:04}-{u,l,c}-<id>.json`), so that the store, which lists
//! `history/` by name and rewrites a node under the name it computes, reads
//! and continues the session in order (SPEC §2.2). `verify --fix` applies
//! it to a session whose files use both namings; `migrate --node-names
//! python` to any.
//!
//! As `git mv` does: the same blobs under the new names, one commit on each
//! branch whose tree holds a file to rename (and on a detached HEAD), the
//! files renamed on disk, the index rebuilt. The caller holds the session
//! lock.
//!
//! A kill at any point is finished by running it again: each new name is
//! first made a hard link of the old file (both names on disk, the same
//! bytes), then the commits and refs move in one transaction, then the old
//! names go. A rerun links what is not linked yet, renames in each tree
//! what is not renamed yet, and removes the old names left.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use super::RenameError;
use crate::error::{IoContext, Result};
use crate::git::{Oid, RefUpdate, SessionRepo};
use crate::layout::paths::{Naming, Snapshot, parse_node_file_name};
use crate::layout::{SessionDir, atomic};

/// What a rename did.
#[derive(Debug, Default)]
pub struct Renamed {
    /// Node files renamed on disk.
    pub files: usize,
    /// Each commit made: the branch and its id.
    pub commits: Vec<(String, Oid)>,
}

/// The Python store's name of the node file `name` (`None`: not a node
/// file, or named so already). The letter is the role's first one, as that
/// store writes it: the layout's `a` and `t` are `l` and `c`; for a letter
/// that does not say the role (`x`), the node's own `role` is read.
fn python_name(sd: &SessionDir, name: &str) -> Option<String> {
    if Naming::shown_by(name) == Some(Naming::Python) {
        return None;
    }
    let (seq, letter, id) = parse_node_file_name(name)?;
    let role = match letter {
        'u' => "user".to_string(),
        'a' | 'l' => "llm".to_string(),
        't' | 'c' => "code".to_string(),
        _ => crate::layout::schema::read_bounded(&sd.history().join(name))
            .ok()
            .and_then(|b| crate::layout::schema::Node::parse(&b).ok())
            .map(|n| n.role)?,
    };
    let to = Naming::Python.file_name(seq, &role, id);
    let to = if role.starts_with(['u', 'l', 'c']) {
        to
    } else {
        // The store names any other role by its first letter.
        format!("{seq:04}-{}-{id}.json", role.chars().next()?)
    };
    (to != name).then_some(to)
}

/// The renames of one list of `history/` names: old → new.
fn renames<'a>(sd: &SessionDir, names: impl Iterator<Item = &'a str>) -> BTreeMap<String, String> {
    names
        .filter_map(|n| python_name(sd, n).map(|to| (n.to_string(), to)))
        .collect()
}

/// Whether a node of the session in `sd` is in `history/` under both
/// namings (a rename cut short, or one that came with a fetch).
pub fn named_twice(sd: &SessionDir) -> bool {
    let names: HashSet<String> = std::fs::read_dir(sd.history())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names
        .iter()
        .filter_map(|n| Naming::other_name(n))
        .any(|o| names.contains(&o))
}

/// How many node files of the session in `sd` are not named as the Python
/// store names them (what [`to_python_naming`] would rename on disk).
pub fn not_python_named(sd: &SessionDir) -> usize {
    std::fs::read_dir(sd.history())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| python_name(sd, &e.file_name().to_string_lossy()).is_some())
        .count()
}

/// Rename every node file of the session in `sd` to the Python store's
/// naming, on disk and in git (see the module's documentation). `session`
/// and `now` make the commits' message and time.
pub fn to_python_naming(sd: &SessionDir, session: &str, now: f64) -> Result<Renamed> {
    let mut done = Renamed::default();
    let history = sd.history();
    // 1. The new names on disk, as hard links of the old files.
    let on_disk_renames = renames_on_disk(sd)?;
    check_renames(&history, &on_disk_renames)?;
    let mut repo = SessionRepo::open(&sd.dir)?;
    let head = repo.head()?;
    if head.branch.is_none() && head.commit.is_some() && !on_disk_renames.is_empty() {
        // Its own rename commit would leave the later turns of its branch
        // behind HEAD, to be committed again.
        return Err(RenameError::DetachedHead {
            session: session.to_string(),
        }
        .into());
    }
    link_new_names(&history, &on_disk_renames)?;
    atomic::sync_dir(&history).ok();
    atomic::crash_point("rename-after-links");
    // 2. In git: each branch whose tree holds an old name gets one commit
    // with the same blobs under the new names, of the turn its tip records
    // (`Turn:`: checkout finds a turn's latest commit by it).
    let tips = repo.branches()?;
    let mut updates = Vec::new();
    let mut head_tree = head
        .commit
        .map(|c| repo.commit_info(c).map(|i| i.tree))
        .transpose()?;
    let commit = RenameCommit { sd, session, now };
    for (branch, tip) in tips {
        let Some((new_tree, id)) = commit.make(&mut repo, tip)? else {
            continue;
        };
        if head.commit == Some(tip) && head.branch.as_ref() == Some(&branch) {
            head_tree = Some(new_tree);
        }
        updates.push(RefUpdate::Advance {
            branch: branch.clone(),
            old: tip,
            new: id,
            message: "rename: node files in the Python store's naming".into(),
        });
        done.commits.push((branch, id));
    }
    if !updates.is_empty() {
        repo.sync_objects()?;
        repo.update_refs(&updates)?;
        repo.release_packs();
    }
    atomic::crash_point("rename-after-refs");
    // 3. The index mirrors HEAD's tree (each file hashed again by the next
    // sweep), and the mirror's snapshot names HEAD's commit.
    if let Some(tree) = head_tree.filter(|_| !on_disk_renames.is_empty() || !updates.is_empty()) {
        mirror_head_tree(sd, &repo, tree)?;
    }
    // 4. The old names go.
    done.files = remove_old_names(&history, &on_disk_renames)?;
    atomic::sync_dir(&history).ok();
    crate::layout::history::invalidate(sd);
    Ok(done)
}

/// The renames of the node files on disk in `history/`: old → new.
fn renames_on_disk(sd: &SessionDir) -> Result<BTreeMap<String, String>> {
    let history = sd.history();
    let on_disk: Vec<String> = match std::fs::read_dir(&history) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).io("list", &history),
    };
    Ok(renames(sd, on_disk.iter().map(String::as_str)))
}

/// Every pair checked before the first link: a refusal leaves nothing
/// half done.
fn check_renames(history: &Path, on_disk_renames: &BTreeMap<String, String>) -> Result<()> {
    for (from, to) in on_disk_renames {
        let (src, dst) = (history.join(from), history.join(to));
        // Neither name a link or a special file (one planted at the new
        // name is never kept as a node).
        if [&src, &dst]
            .iter()
            .any(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_file()))
        {
            return Err(RenameError::NotAFile { from: src, to: dst }.into());
        }
        // A rerun finds the link made; another file there is a conflict
        // (the Python store rewrote the node under its own name).
        if std::fs::symlink_metadata(&dst).is_ok()
            && atomic::read(&src).ok() != atomic::read(&dst).ok()
        {
            return Err(RenameError::Conflict { from: src, to: dst }.into());
        }
    }
    Ok(())
}

/// Each new name made a hard link of the old file (one linked already, by
/// a run cut short, is left).
fn link_new_names(history: &Path, on_disk_renames: &BTreeMap<String, String>) -> Result<()> {
    for (from, to) in on_disk_renames {
        let (src, dst) = (history.join(from), history.join(to));
        match std::fs::hard_link(&src, &dst) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).io("link", &dst),
        }
    }
    Ok(())
}

/// The rename commits of a session: its directory, its id and their time.
struct RenameCommit<'a> {
    sd: &'a SessionDir,
    session: &'a str,
    now: f64,
}

impl RenameCommit<'_> {
    /// The commit on `tip` with the node files its tree holds under the
    /// new names: its tree and id (`None`: none to rename there).
    fn make(&self, repo: &mut SessionRepo, tip: Oid) -> Result<Option<(Oid, Oid)>> {
        let (sd, session, now) = (self.sd, self.session, self.now);
        let tree = repo.commit_info(tip)?.tree;
        let mut index = repo.index_from_tree(tree)?;
        let prefix = crate::layout::paths::history_entry("");
        let held: Vec<(String, Oid)> = index
            .entries()
            .filter_map(|(p, id)| {
                let p = std::str::from_utf8(p).ok()?;
                p.strip_prefix(prefix.as_str()).map(|n| (n.to_string(), id))
            })
            .collect();
        let in_tree = renames(sd, held.iter().map(|(n, _)| n.as_str()));
        if in_tree.is_empty() {
            return Ok(None);
        }
        let gone: HashSet<Vec<u8>> = in_tree
            .keys()
            .map(|n| crate::layout::paths::history_entry(n).into_bytes())
            .collect();
        index.remove(&gone);
        let staged = held
            .iter()
            .filter_map(|(n, id)| {
                in_tree.get(n).map(|to| {
                    crate::git::Staged::unstatted(
                        crate::layout::paths::history_entry(to).into_bytes(),
                        *id,
                    )
                })
            })
            .collect();
        index.apply(staged);
        let new_tree = repo.write_tree(&index)?;
        let turn = crate::session::Trailers::parse(&repo.commit_info(tip)?.message).turn;
        let msg = format!(
            "{}\nSession: {session}\n{}Renamed: python\n",
            crate::session::RENAME_SUBJECT,
            turn.map_or(String::new(), |t| format!("Turn: {t}\n"))
        );
        let id = repo.write_commit(new_tree, &[tip], &msg, now)?;
        Ok(Some((new_tree, id)))
    }
}

/// The index made HEAD's `tree` (each file hashed again by the next
/// sweep), and the mirror's snapshot names HEAD's commit.
fn mirror_head_tree(sd: &SessionDir, repo: &SessionRepo, tree: Oid) -> Result<()> {
    let mut index = repo.index_from_tree(tree)?;
    repo.write_index(&mut index)?;
    let now_head = repo.head()?.commit;
    let snap = sd.read_snapshot();
    sd.write_snapshot(&Snapshot {
        commit: now_head.map(|c| c.to_string()),
        pending: None,
        ..snap
    })?;
    Ok(())
}

/// The old names removed: how many were still there.
fn remove_old_names(history: &Path, on_disk_renames: &BTreeMap<String, String>) -> Result<usize> {
    let mut files = 0;
    for from in on_disk_renames.keys() {
        match std::fs::remove_file(history.join(from)) {
            Ok(()) => files += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).io("remove", history.join(from)),
        }
    }
    Ok(files)
}
