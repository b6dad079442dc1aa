//! A fetched session's trees: which tip is the newest, how this machine's
//! session relates to the remote's, and the checked checkout of a tree into
//! a session directory (no link, no submodule, no `.git`, no name that
//! leaves its directory).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use super::SyncError;
use crate::error::{Error, IoContext, Result};
use crate::git::{Oid, RefUpdate, SessionRepo};
use crate::layout::paths::{HISTORY, META, Snapshot, is_dotgit};
use crate::layout::schema::Meta;
use crate::layout::{SessionDir, TEMP_PREFIX, atomic};

const MODE_TREE: u32 = 0o040000;
const MODE_FILE: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;

/// The tip whose tree is the session as it was last written: each turn
/// commits the whole session directory, so the tree holding the most node
/// files (main first on a tie, then the later commit).
#[derive(Debug, Clone)]
pub struct Newest {
    /// The branch for HEAD: the one whose tip holds the turn of the
    /// session's `head_id` (the current conversation, which the next turn
    /// continues), else the newest tip's.
    pub branch: String,
    pub commit: Oid,
    pub tree: Oid,
}

pub fn newest_tip(repo: &SessionRepo, branches: &BTreeMap<String, Oid>) -> Result<Newest> {
    let mut best: Option<((usize, bool, i64), Newest)> = None;
    for (b, tip) in branches {
        let info = repo.commit_info(*tip)?;
        let count = history_names(repo, info.tree)?.len();
        let key = (count, b == crate::git::MAIN, info.time);
        if best.as_ref().is_none_or(|(k, _)| key > *k) {
            best = Some((
                key,
                Newest {
                    branch: b.clone(),
                    commit: *tip,
                    tree: info.tree,
                },
            ));
        }
    }
    let mut newest = best
        .map(|(_, n)| n)
        .ok_or_else(|| Error::from(SyncError::NoBranch))?;
    if let Some(b) = head_branch(repo, branches, &newest) {
        newest.branch = b;
    }
    Ok(newest)
}

/// The branch whose tip commit holds the turn of meta.json's `head_id`.
fn head_branch(
    repo: &SessionRepo,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
) -> Option<String> {
    let head = meta_of(repo, newest).ok()?.head_id()?.to_string();
    let seq = history_names(repo, newest.tree)
        .ok()?
        .iter()
        .filter_map(|f| crate::layout::paths::parse_node_file_name(f))
        .find(|(_, _, id)| *id == head)
        .map(|(seq, _, _)| seq)?;
    // main first, as checkout prefers it.
    let mut order: Vec<(&String, &Oid)> = branches.iter().collect();
    order.sort_by_key(|(b, _)| *b != crate::git::MAIN);
    order.into_iter().find_map(|(b, tip)| {
        let info = repo.commit_info(*tip).ok()?;
        crate::session::Trailers::parse(&info.message)
            .holds_seq(seq)
            .then(|| b.clone())
    })
}

/// The node file names of `tree`'s `history/` and their blobs.
pub fn history_blobs(repo: &SessionRepo, tree: Oid) -> Result<BTreeMap<String, Oid>> {
    let Some(h) = repo.tree_entry(tree, HISTORY)? else {
        return Ok(BTreeMap::new());
    };
    Ok(repo
        .tree_entries(h)?
        .into_iter()
        .filter(|(_, mode, _)| *mode != MODE_TREE)
        .map(|(name, _, id)| (name, id))
        .collect())
}

pub fn history_names(repo: &SessionRepo, tree: Oid) -> Result<BTreeSet<String>> {
    Ok(history_blobs(repo, tree)?.into_keys().collect())
}

/// The nodes a set of `history/` names holds, whatever their naming:
/// `<seq>-<id>` for a node file, the name for anything else (a session
/// renamed to one naming holds the same nodes under other names).
pub fn node_keys(names: &BTreeSet<String>) -> BTreeSet<String> {
    names
        .iter()
        .map(|n| match crate::layout::paths::parse_node_file_name(n) {
            Some((seq, _, id)) => format!("{seq}-{id}"),
            None => n.clone(),
        })
        .collect()
}

/// The node files in the session directory's `history/`.
pub fn names_on_disk(sd: &SessionDir) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    let dir = sd.history();
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).io("list", &dir),
    };
    for e in rd {
        let e = e.io("list", &dir)?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(TEMP_PREFIX) && e.file_type().is_ok_and(|t| t.is_file()) {
            out.insert(name);
        }
    }
    Ok(out)
}

/// meta.json of the newest tree.
pub fn meta_of(repo: &SessionRepo, newest: &Newest) -> Result<Meta> {
    let blob = repo
        .tree_entry(newest.tree, META)?
        .ok_or_else(|| Error::from(SyncError::NoMeta))?;
    Meta::parse(&repo.read_blob(blob)?)
        .map_err(|e| Error::from(SyncError::BadMeta { why: e.to_string() }))
}

/// Whether commit `a` is `b` or one of its ancestors.
pub fn is_ancestor(repo: &SessionRepo, a: Oid, b: Oid) -> Result<bool> {
    let mut seen = HashSet::new();
    let mut stack = vec![b];
    while let Some(c) = stack.pop() {
        if c == a {
            return Ok(true);
        }
        if seen.insert(c) {
            stack.extend(repo.commit_info(c)?.parents);
        }
    }
    Ok(false)
}

/// How this machine's session stands to the remote's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    Same,
    /// The remote's turns are all here: nothing to take.
    Ahead,
    /// This machine's turns are all on the remote: a fast-forward.
    Behind,
    Diverged,
}

/// Compare by node files (a turn commits the whole directory, so the files
/// say what each side holds, uncommitted nodes included) and by branch
/// ancestry (a branch on both sides must be one the other's ancestor).
pub fn relation(
    sd: &SessionDir,
    repo: &SessionRepo,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
) -> Result<Relation> {
    let local_files = node_keys(&names_on_disk(sd)?);
    let remote_files = node_keys(&history_names(repo, newest.tree)?);
    let local: BTreeMap<String, Oid> = repo.branches()?.into_iter().collect();
    if branches.iter().all(|(b, t)| local.get(b) == Some(t)) {
        return Ok(if local_files.is_subset(&remote_files) {
            Relation::Same
        } else {
            Relation::Ahead
        });
    }
    let local_tips: Vec<Oid> = local.values().copied().collect();
    let remote_tips: Vec<Oid> = branches.values().copied().collect();
    let within = |tip: Oid, tips: &[Oid]| -> Result<bool> {
        for t in tips {
            if is_ancestor(repo, tip, *t)? {
                return Ok(true);
            }
        }
        Ok(false)
    };
    let mut remote_here = remote_files.is_subset(&local_files);
    let mut local_there = local_files.is_subset(&remote_files);
    for (b, tip) in branches {
        if remote_here {
            remote_here = match local.get(b) {
                Some(l) => is_ancestor(repo, *tip, *l)?,
                None => within(*tip, &local_tips)?,
            };
        }
    }
    for (b, tip) in &local {
        if local_there {
            local_there = match branches.get(b) {
                Some(r) => is_ancestor(repo, *tip, *r)?,
                None => within(*tip, &remote_tips)?,
            };
        }
    }
    Ok(match (remote_here, local_there) {
        (true, _) => Relation::Ahead,
        (false, true) => Relation::Behind,
        (false, false) => Relation::Diverged,
    })
}

/// One file of a tree: its path (`/`-separated), executable bit, blob.
pub struct File {
    pub path: String,
    pub exec: bool,
    pub blob: Oid,
}

fn unsafe_tree(path: &str, why: &str) -> Error {
    SyncError::FetchedUnsafe {
        path: path.to_string(),
        why: why.to_string(),
    }
    .into()
}

/// Every file of `tree`, refusing what a session tree never holds: links,
/// submodules, `.git` in any spelling, our temp names, `.`/`..`.
pub fn files(repo: &SessionRepo, tree: Oid) -> Result<Vec<File>> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), tree, 0usize)];
    while let Some((dir, id, depth)) = stack.pop() {
        if depth > 16 {
            return Err(unsafe_tree(&dir, "directories nest too deep"));
        }
        for (name, mode, oid) in repo.tree_entries(id)? {
            let path = format!("{dir}{name}");
            if name.is_empty()
                || name == "."
                || name == ".."
                || name.contains(['/', '\\', '\0'])
                || is_dotgit(name.as_bytes())
                || name.starts_with(TEMP_PREFIX)
            {
                return Err(unsafe_tree(&path, "a name no session file has"));
            }
            match mode {
                MODE_TREE => stack.push((format!("{path}/"), oid, depth + 1)),
                MODE_FILE | MODE_EXEC => out.push(File {
                    path,
                    exec: mode == MODE_EXEC,
                    blob: oid,
                }),
                0o120000 => return Err(unsafe_tree(&path, "a symbolic link")),
                0o160000 => return Err(unsafe_tree(&path, "a submodule")),
                _ => return Err(unsafe_tree(&path, "an unknown file mode")),
            }
        }
    }
    Ok(out)
}

/// Make every directory of `rel` under `root`, refusing links and files in
/// the way.
fn make_dirs(root: &Path, rel: &str) -> Result<()> {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(atomic::refuse_unsafe(&at).err().unwrap_or_else(|| {
                    Error::corrupt(&at, "a file is where a directory of the session belongs")
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&at).io("create", &at)?;
            }
            Err(e) => return Err(e).io("inspect", &at),
        }
    }
    Ok(())
}

/// Whether `theirs` is `ours` with some spans replaced by redaction marks
/// (`[REDACTED:<rule>:<fingerprint>]`) and nothing else changed: the text
/// between the marks is found in `ours` in order, the first piece at its
/// start and the last at its end.
pub fn is_redaction_of(theirs: &[u8], ours: &[u8]) -> bool {
    static MARK: std::sync::OnceLock<regex::bytes::Regex> = std::sync::OnceLock::new();
    let mark = MARK.get_or_init(|| {
        regex::bytes::Regex::new(r"\[REDACTED:[A-Za-z0-9_.-]+:[0-9a-f]{16}\]").expect("valid")
    });
    let pieces: Vec<&[u8]> = mark.split(theirs).collect();
    if pieces.len() < 2 {
        return false;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !ours.starts_with(first) || !ours[first.len()..].ends_with(last) {
        return false;
    }
    let mut at = first.len();
    let end = ours.len() - last.len();
    for p in &pieces[1..pieces.len() - 1] {
        match ours[at..end].windows(p.len().max(1)).position(|w| w == *p) {
            Some(i) if !p.is_empty() => at += i + p.len(),
            _ if p.is_empty() => {}
            _ => return false,
        }
    }
    at <= end
}

/// meta.json from this machine's and the tree's versions.
pub type MetaMerge<'a> = &'a dyn Fn(&[u8], &[u8]) -> Vec<u8>;

/// How [`check_out`] treats a file that exists with other content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Refuse (a node file is immutable).
    Refuse,
    /// The tree's version replaces it.
    Replace,
    /// This machine's version stays.
    Keep,
    /// The tree is a redaction of this machine's files: as `Replace`, and a
    /// node file whose tree version holds a redaction's mark
    /// (`[REDACTED:`) replaces this machine's too.
    Redaction,
}

/// Write `tree`'s files into `sd` (never through a link): missing files are
/// created; a node file that exists with other content is refused; other
/// files follow `existing`, except meta.json, which `merge_meta` decides
/// when given. Files not in the tree are left alone.
pub fn check_out(
    repo: &SessionRepo,
    sd: &SessionDir,
    tree: Oid,
    existing: Existing,
    merge_meta: Option<MetaMerge<'_>>,
) -> Result<()> {
    let files = files(repo, tree)?;
    sd.check_links()?;
    let history_prefix = format!("{HISTORY}/");
    for f in files {
        make_dirs(&sd.dir, &f.path)?;
        let dest = sd.dir.join(&f.path);
        atomic::refuse_unsafe(&dest)?;
        let theirs = repo.read_blob(f.blob)?;
        let mut bytes = theirs;
        match atomic::read(&dest) {
            Ok(ours) => {
                if crate::git::blob_id(&ours) == f.blob {
                    continue;
                }
                let redacted = existing == Existing::Redaction && is_redaction_of(&bytes, &ours);
                if f.path.starts_with(&history_prefix) && !redacted {
                    return Err(SyncError::NodeDiffers { path: dest.clone() }.into());
                }
                if f.path == META
                    && let Some(merge) = merge_meta
                {
                    bytes = merge(&ours, &bytes);
                } else if existing == Existing::Keep {
                    continue;
                } else if existing == Existing::Refuse {
                    return Err(SyncError::FileDiffers { path: dest.clone() }.into());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).io("read", &dest),
        }
        atomic::write_with_mode(&dest, &bytes, if f.exec { 0o755 } else { 0o644 })?;
    }
    // The catalog of node files is rebuilt from the directory.
    let _ = std::fs::remove_file(sd.catalog_stamp());
    Ok(())
}

/// meta.json after a fast-forward: the remote's, with the keys this machine
/// changed since its last commit (a rename, a flag) kept, except those the
/// DAG owns (`head_id`, `updated_at`, `branches`).
pub fn merge_meta(committed: Option<&[u8]>) -> impl Fn(&[u8], &[u8]) -> Vec<u8> + '_ {
    move |ours: &[u8], theirs: &[u8]| {
        let (Ok(ours), Ok(mut theirs)) = (Meta::parse(ours), Meta::parse(theirs)) else {
            return theirs.to_vec();
        };
        let base = committed
            .and_then(|c| Meta::parse(c).ok())
            .unwrap_or_default();
        for (k, v) in &ours.0 {
            if matches!(k.as_str(), "head_id" | "updated_at" | "branches") {
                continue;
            }
            if base.0.get(k) != Some(v) {
                theirs.0.insert(k.clone(), v.clone());
            }
        }
        theirs.to_json()
    }
}

/// Take the remote's newer turns: its tree checked out, its branches
/// advanced (or created), HEAD on the newest one's branch, the index and
/// the snapshot marker at its commit.
pub fn fast_forward(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
) -> Result<()> {
    forward(sd, repo, branches, newest, Existing::Replace)
}

/// [`fast_forward`] to a remote's redaction of this machine's history:
/// its redacted node files replace this machine's, its tips this
/// machine's (the caller keeps those under a backup ref).
pub fn take_redaction(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
) -> Result<()> {
    forward(sd, repo, branches, newest, Existing::Redaction)
}

fn forward(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
    existing: Existing,
) -> Result<()> {
    let committed_meta = sd
        .read_snapshot()
        .commit
        .and_then(|c| Oid::from_hex(c.as_bytes()).ok())
        .or(repo.head()?.commit)
        .and_then(|c| repo.commit_info(c).ok())
        .and_then(|info| repo.tree_entry(info.tree, META).ok().flatten())
        .and_then(|b| repo.read_blob(b).ok());
    let merge = merge_meta(committed_meta.as_deref());
    check_out(repo, sd, newest.tree, existing, Some(&merge))?;
    let local: BTreeMap<String, Oid> = repo.branches()?.into_iter().collect();
    let mut updates: Vec<RefUpdate> = Vec::new();
    for (b, tip) in branches {
        match local.get(b) {
            Some(old) if old == tip => {}
            Some(old) => updates.push(RefUpdate::Advance {
                branch: b.clone(),
                old: *old,
                new: *tip,
                message: "fetch: fast-forward".into(),
            }),
            None => updates.push(RefUpdate::Create {
                branch: b.clone(),
                new: *tip,
                message: "fetch: new branch".into(),
            }),
        }
    }
    updates.push(RefUpdate::AttachHead {
        branch: newest.branch.clone(),
    });
    publish(sd, repo, &updates, newest)
}

/// Move the refs, then the index and the snapshot marker to `newest`.
pub fn publish(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    updates: &[RefUpdate],
    newest: &Newest,
) -> Result<()> {
    let before = sd.read_snapshot();
    sd.write_snapshot(&Snapshot {
        pending: Some(newest.commit.to_string()),
        ..before.clone()
    })?;
    repo.update_refs(updates)?;
    let mut index = repo.index_from_tree(newest.tree)?;
    repo.write_index(&mut index)?;
    sd.write_snapshot(&Snapshot {
        commit: Some(newest.commit.to_string()),
        pending: None,
        ..before
    })
}

#[cfg(test)]
mod tests {
    use super::is_redaction_of;

    #[test]
    fn a_redaction_changes_nothing_but_the_marked_spans() {
        let ours = br#"{"output":"key sk-1234 and tok-99 end"}"#;
        let mark = "[REDACTED:r:0123456789abcdef]";
        let theirs = format!(r#"{{"output":"key {mark} and {mark} end"}}"#);
        assert!(is_redaction_of(theirs.as_bytes(), ours));
        let forged = format!(r#"{{"output":"key {mark} and tok-99 END"}}"#);
        assert!(!is_redaction_of(forged.as_bytes(), ours));
        assert!(!is_redaction_of(ours, ours), "no mark: no redaction");
    }
}
