//! `fetch --take local|remote`: resolve a session that both this machine
//! and the remote carried on, losing nothing and forcing nothing.
//!
//! The rule: the remote's history is published, so it stays as it is; the
//! turns only this machine has are replayed on top of it. Node ids are
//! unique, seqs are not: each of this machine's nodes the remote lacks gets
//! the next seq after the remote's last (its file renamed to match, its
//! content otherwise unchanged) and is committed again, turn by turn, by
//! the mirror. A replayed turn continues from the node it continued from
//! before, which the remote's branch has since moved past, so it becomes a
//! retry branch: the two continuations are siblings in the DAG, as a rewind
//! would have made them. `local` makes this machine's conversation the
//! current one (`head_id`, git HEAD); `remote` makes the remote's. This
//! machine's old tips are kept as `refs/kept/<remote>/<branch>-<commit>`.
//! Everything is a fast-forward for the remote afterwards.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, IoContext, Result};
use crate::git::{Expected, Oid, RefUpdate, SessionRepo};
use crate::layout::paths::{Naming, parse_node_file_name};
use crate::layout::schema::Meta;
use crate::layout::{SessionDir, atomic};

use super::Outcome;
use super::tree::{self, Existing, Newest};

/// Whose conversation is current after the divergence is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    Local,
    Remote,
}

/// Resolve session `id`'s divergence from `remote` (its `branches`, the
/// newest being `newest`) by taking `take`'s conversation as current: this
/// machine's nodes the remote lacks are renumbered after the remote's and
/// committed on top; the remote's files and branches are taken, this
/// machine's old tips kept under `refs/kept/`. Returns what it did, in
/// words.
pub fn apply(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    id: &str,
    remote: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
    take: Take,
) -> Result<String> {
    let s = survey(sd, repo, newest)?;
    let local_meta = atomic::read(sd.meta())
        .ok()
        .and_then(|b| Meta::parse(&b).ok());
    let r = renumber(sd, &s, remote)?;
    take_files(sd, repo, &s, &r, newest, take, local_meta)?;
    let updates = branch_updates(repo, remote, branches, newest)?;
    tree::publish(sd, repo, &updates, newest)?;
    // 6. The replayed nodes committed, turn by turn.
    let opts = crate::mirror::CommitOptions {
        now: crate::out::now(),
        ..Default::default()
    };
    let made = crate::mirror::commit_pending(sd, id, &opts, &mut |_| Ok(()), &mut |_| {})?;
    let reopened = SessionRepo::open(&sd.dir)?;
    if take == Take::Remote && !made.is_empty() {
        // The remote's conversation is current: HEAD back on its branch.
        reopened.update_refs(&[RefUpdate::AttachHead {
            branch: newest.branch.clone(),
        }])?;
    }
    Ok(summary(&s, &r, &made, remote, take))
}

/// This machine's node files against the remote's tree: what a take
/// replays, drops, keeps under another id, and moves out of the way.
struct Survey {
    /// The remote's node files: name → blob.
    theirs: BTreeMap<String, Oid>,
    /// The seq after the remote's last.
    next: u64,
    /// This machine's nodes the remote lacks, in seq order: (seq, file).
    replay: Vec<(u64, String)>,
    /// Copies left by an interrupted take, and older files of a node.
    stale: Vec<String>,
    /// This machine's nodes whose id the remote gave another node: id →
    /// the id each is kept under here.
    conflicts: BTreeMap<String, String>,
    /// This machine's files at a name the remote's tree has with other
    /// bytes (the same seq and id, another node): moved to their kept id
    /// before the remote's file takes the name.
    displaced: Vec<String>,
}

fn survey(sd: &SessionDir, repo: &SessionRepo, newest: &Newest) -> Result<Survey> {
    let theirs = tree::history_blobs(repo, newest.tree)?;
    let their_ids: BTreeMap<String, Oid> = theirs
        .iter()
        .filter_map(|(f, blob)| parse_node_file_name(f).map(|(_, _, id)| (id.to_string(), *blob)))
        .collect();
    let next = theirs
        .keys()
        .filter_map(|f| parse_node_file_name(f).map(|(seq, _, _)| seq))
        .max()
        .map_or(0, |s| s + 1);
    // This machine's nodes the remote lacks, by id (a file of a node the
    // remote has under another seq is a copy left by an interrupted take).
    let mut ours: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut stale: Vec<String> = Vec::new();
    // This machine's nodes whose id the remote gave another node: id → the
    // id each is kept under here.
    let mut conflicts: BTreeMap<String, String> = BTreeMap::new();
    // This machine's files at a name the remote's tree has with other
    // bytes (the same seq and id, another node): moved to their kept id
    // before the remote's file takes the name.
    let mut displaced: Vec<String> = Vec::new();
    for f in tree::names_on_disk(sd)? {
        let Some((seq, _, nid)) = parse_node_file_name(&f) else {
            continue;
        };
        if let Some(blob) = theirs.get(&f) {
            let path = sd.history().join(&f);
            let mine = atomic::read(&path).io("read", &path)?;
            if crate::git::blob_id(&mine) == *blob {
                continue;
            }
            displaced.push(f.clone());
        }
        // A copy a take that was cut short kept under its own id says
        // which id it stands for: the conflict holds on this run too.
        if nid.contains(".local-") {
            let path = sd.history().join(&f);
            if let Some(orig) = atomic::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .and_then(|n| {
                    n["metadata"]["id_conflict"]["id"]
                        .as_str()
                        .map(str::to_string)
                })
                .filter(|o| their_ids.contains_key(o))
            {
                conflicts.entry(orig).or_insert_with(|| nid.to_string());
            }
        }
        if let Some(blob) = their_ids.get(nid) {
            // The same node under another seq (a copy an interrupted take
            // renumbered) goes; another node under that id is kept, under
            // an id of its own: never a deletion on an id's word alone.
            let path = sd.history().join(&f);
            let mine = atomic::read(&path).io("read", &path)?;
            if same_but_seq(&mine, &repo.read_blob(*blob)?) {
                stale.push(f.clone());
                continue;
            }
            let kept = kept_id(nid, &mine);
            conflicts.insert(nid.to_string(), kept);
        }
        let key = conflicts.get(nid).map_or(nid, String::as_str).to_string();
        match ours.get(&key) {
            Some((s, _)) if *s >= seq => stale.push(f.clone()),
            Some((_, older)) => {
                stale.push(older.clone());
                ours.insert(key, (seq, f.clone()));
            }
            None => {
                ours.insert(key, (seq, f.clone()));
            }
        }
    }
    let mut replay: Vec<(u64, String)> = ours.into_values().collect();
    replay.sort();
    Ok(Survey {
        theirs,
        next,
        replay,
        stale,
        conflicts,
        displaced,
    })
}

/// What [`renumber`] did: how many nodes it renumbered, the names they
/// had, and the names it wrote.
struct Renumbered {
    renamed: usize,
    old_names: Vec<String>,
    written: Vec<String>,
}

/// Step 1 of a take: this machine's nodes, renumbered after the remote's
/// (names the remote's tree does not have).
fn renumber(sd: &SessionDir, s: &Survey, remote: &str) -> Result<Renumbered> {
    // 1. This machine's nodes, renumbered after the remote's (names the
    //    remote's tree does not have).
    let history = sd.history();
    let mut renamed = 0;
    let mut old_names = Vec::new();
    // The names written here: never removed below as stale.
    let mut written: Vec<String> = Vec::new();
    // The remote's naming, when its files show one (it renamed them to
    // the Python store's): the replayed nodes take it, so the session keeps
    // one naming.
    let their_naming = s.theirs.keys().find_map(|f| Naming::shown_by(f));
    let mut next = s.next;
    for (_, file) in &s.replay {
        let path = history.join(file);
        let bytes = atomic::read(&path).io("read", &path)?;
        let mut node: serde_json::Map<String, Value> = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(&path, format!("the node does not parse: {e}")))?;
        let (_, _, nid) = parse_node_file_name(file).expect("a node file name");
        // A node the remote's id conflicts with takes its kept id, and
        // this machine's nodes that named it name that id.
        let nid = match s.conflicts.get(nid) {
            Some(kept) => {
                node.insert("id".into(), kept.as_str().into());
                let meta = node
                    .entry("metadata")
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Value::Object(m) = meta {
                    m.insert(
                        "id_conflict".into(),
                        serde_json::json!({"id": nid, "remote": remote}),
                    );
                }
                kept.as_str()
            }
            None => nid,
        };
        for key in ["predecessor", "caller", "called_by"] {
            if let Some(kept) = node
                .get(key)
                .and_then(Value::as_str)
                .and_then(|p| s.conflicts.get(p))
            {
                node.insert(key.into(), kept.as_str().into());
            }
        }
        if let Some(Value::Object(m)) = node.get_mut("metadata")
            && let Some(kept) = m
                .get("parent_id")
                .and_then(Value::as_str)
                .and_then(|p| s.conflicts.get(p))
        {
            m.insert("parent_id".into(), kept.as_str().into());
        }
        let role = node
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user")
            .to_string();
        let name = their_naming
            .unwrap_or_else(|| Naming::of(file))
            .file_name(next, &role, nid);
        next += 1;
        renamed += 1;
        if name == *file {
            continue; // renumbered by a take that was interrupted
        }
        node.insert("seq".into(), (next - 1).into());
        let out = serde_json::to_vec(&Value::Object(node)).expect("json");
        if !atomic::create_new(&history.join(&name), &out)?
            && atomic::read(history.join(&name)).ok().as_deref() != Some(&out[..])
        {
            return Err(Error::corrupt(
                history.join(&name),
                "a node file of that name exists already",
            ));
        }
        old_names.push(file.clone());
        written.push(name);
    }
    atomic::crash_point("take-renumbered");
    Ok(Renumbered {
        renamed,
        old_names,
        written,
    })
}

/// Steps 2 to 4 of a take: the remote's files, `meta.json` with the chosen
/// side's head, and this machine's old names removed once the new ones are
/// written.
#[allow(clippy::too_many_arguments)]
fn take_files(
    sd: &SessionDir,
    repo: &SessionRepo,
    s: &Survey,
    r: &Renumbered,
    newest: &Newest,
    take: Take,
    local_meta: Option<Meta>,
) -> Result<()> {
    let history = sd.history();
    let local_head = local_meta
        .as_ref()
        .and_then(|m| m.head_id().map(str::to_string));
    // 2. The remote's files (node files it has and this machine lacks
    //    included), once this machine's at their names are kept elsewhere;
    //    this machine's other files stay under `local`.
    for file in &s.displaced {
        remove(&history.join(file))?;
    }
    atomic::crash_point("take-displaced");
    let existing = match take {
        Take::Local => Existing::Keep,
        Take::Remote => Existing::Replace,
    };
    tree::check_out(repo, sd, newest.tree, existing, None)?;
    // 3. meta.json: the chosen side's head.
    let mut meta = Meta::read(&sd.meta())?;
    match take {
        Take::Local => {
            if let Some(m) = &local_meta {
                meta = m.clone();
            }
        }
        Take::Remote => {
            let remote_meta = tree::meta_of(repo, newest)?;
            meta.set(
                "head_id",
                remote_meta.0.get("head_id").cloned().unwrap_or(Value::Null),
            );
        }
    }
    if take == Take::Local
        && let Some(h) = &local_head
    {
        meta.set("head_id", s.conflicts.get(h).unwrap_or(h).as_str());
    }
    atomic::write(&sd.meta(), &meta.to_json())?;
    // What the importer keeps of this machine's transcripts names the
    // kept ids too.
    crate::import::ids_renamed(sd, &s.conflicts)?;
    // 4. The old names go once the new ones are written.
    for file in r.old_names.iter().filter(|f| !s.displaced.contains(f)) {
        remove(&history.join(file))?;
    }
    // (A name the remote's file took is the remote's now.)
    for file in s
        .stale
        .iter()
        .filter(|f| !s.displaced.contains(f) && !r.written.contains(f))
    {
        remove(&history.join(file))?;
    }
    let _ = std::fs::remove_file(sd.catalog_stamp());
    Ok(())
}

/// Step 5 of a take: the remote's branches; this machine's old tips kept
/// aside under `refs/kept/<remote>/`.
fn branch_updates(
    repo: &SessionRepo,
    remote: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
) -> Result<Vec<RefUpdate>> {
    // 5. Branches: the remote's; this machine's old tips kept aside.
    let local: BTreeMap<String, Oid> = repo.branches()?.into_iter().collect();
    let remote_tips: Vec<Oid> = branches.values().copied().collect();
    let mut updates = Vec::new();
    for (b, tip) in &local {
        let kept = format!("refs/kept/{remote}/{b}-{}", tip.to_hex_with_len(12));
        match branches.get(b) {
            Some(r) if r == tip => continue,
            Some(r) => {
                if !tree::is_ancestor(repo, *tip, *r)? {
                    updates.push(keep(kept, *tip));
                }
                updates.push(RefUpdate::Set {
                    name: format!("refs/heads/{b}"),
                    expected: Expected::Is(*tip),
                    new: *r,
                    message: format!("fetch --take: {remote}'s"),
                });
            }
            None => {
                let mut inside = false;
                for r in &remote_tips {
                    inside |= tree::is_ancestor(repo, *tip, *r)?;
                }
                if !inside {
                    updates.push(keep(kept, *tip));
                    updates.push(RefUpdate::Delete {
                        name: format!("refs/heads/{b}"),
                        old: *tip,
                    });
                }
            }
        }
    }
    for (b, tip) in branches {
        if !local.contains_key(b) {
            updates.push(RefUpdate::Create {
                branch: b.clone(),
                new: *tip,
                message: format!("fetch --take: {remote}'s"),
            });
        }
    }
    updates.push(RefUpdate::AttachHead {
        branch: newest.branch.clone(),
    });
    Ok(updates)
}

/// What a take did, in words.
fn summary(
    s: &Survey,
    r: &Renumbered,
    made: &[crate::mirror::Made],
    remote: &str,
    take: Take,
) -> String {
    let branch_note = made
        .iter()
        .filter(|m| m.new_branch)
        .map(|m| format!("`{}`", m.branch))
        .collect::<Vec<_>>();
    let current = match take {
        Take::Local => "this machine's".to_string(),
        Take::Remote => format!("`{remote}`'s"),
    };
    let conflict_note = match s.conflicts.len() {
        0 => String::new(),
        _ => format!(
            "; {} node(s) of this machine whose id the remote gave another node kept as {}",
            s.conflicts.len(),
            s.conflicts
                .values()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "{} node(s) only this machine had were renumbered after the remote's and committed in {} turn(s){}{conflict_note}; {current} conversation is current",
        r.renamed,
        made.len(),
        if branch_note.is_empty() {
            String::new()
        } else {
            format!(" on {}", branch_note.join(", "))
        }
    )
}

/// Whether two node files are one node, but for their `seq`.
fn same_but_seq(a: &[u8], b: &[u8]) -> bool {
    let parse = |bytes: &[u8]| {
        serde_json::from_slice::<serde_json::Map<String, Value>>(bytes)
            .ok()
            .map(|mut m| {
                m.remove("seq");
                m
            })
    };
    match (parse(a), parse(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// The id a node of this machine is kept under when the remote gave its id
/// to another node: the id, `.local-` and eight hex digits of the node's
/// bytes but its seq (the same on every run, so an interrupted take is
/// finished, and for two files of one node under two seqs).
fn kept_id(id: &str, bytes: &[u8]) -> String {
    let unseq = serde_json::from_slice::<serde_json::Map<String, Value>>(bytes)
        .ok()
        .map(|mut m| {
            m.remove("seq");
            serde_json::to_vec(&m).expect("json")
        });
    let hash = crate::git::blob_id(unseq.as_deref().unwrap_or(bytes))
        .to_hex_with_len(8)
        .to_string();
    let room = 128 - ".local-".len() - hash.len();
    let mut cut = id.len().min(room);
    while !id.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}.local-{hash}", &id[..cut])
}

fn keep(name: String, tip: Oid) -> RefUpdate {
    RefUpdate::Set {
        name,
        expected: Expected::Any,
        new: tip,
        message: "fetch --take: kept".into(),
    }
}

fn remove(path: &std::path::Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).io("remove", path),
        _ => Ok(()),
    }
}

/// A redaction on one side, never a divergence to keep: the remote's tips
/// that a redaction here replaced count as what replaced them (`push`
/// replaces them: `ahead`); a remote whose history is a redaction of this
/// machine's whole history is taken, this machine's kept under
/// `refs/redacted/` (`redacted`). `None`: neither.
pub(super) fn redacted(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    remote: &str,
    id: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &tree::Newest,
) -> Result<Option<(Outcome, Option<String>)>> {
    use crate::secrets::redact;
    let here = redact::replaced_on_disk(sd);
    if branches.values().any(|t| here.contains_key(t)) {
        let mapped: BTreeMap<String, Oid> = branches
            .iter()
            .map(|(b, t)| (b.clone(), *here.get(t).unwrap_or(t)))
            .collect();
        let newest = tree::newest_tip(repo, &mapped)?;
        if matches!(
            tree::relation(sd, repo, &mapped, &newest)?,
            tree::Relation::Same | tree::Relation::Ahead
        ) {
            return Ok(Some((
                Outcome::Ahead,
                Some(format!(
                    "`{remote}` has this session as it was before its redaction here: `git-session push {remote}` replaces it"
                )),
            )));
        }
    }
    let there = redact::replaced_in(repo, newest.tree)?;
    if there.is_empty() {
        return Ok(None);
    }
    let local: BTreeMap<String, Oid> = repo.branches()?.into_iter().collect();
    let remote_tips: Vec<Oid> = branches.values().copied().collect();
    // Every local tip is history the redaction replaced (or the remote
    // has it as it is), and every node here is in the remote's tree.
    let mut covered = !local.is_empty();
    for tip in local.values() {
        if !covered {
            break;
        }
        let target = *there.get(tip).unwrap_or(tip);
        let mut within = false;
        for r in &remote_tips {
            if tree::is_ancestor(repo, target, *r)? {
                within = true;
                break;
            }
        }
        covered = within;
    }
    if !covered
        || local.values().all(|t| !there.contains_key(t))
        || !tree::node_keys(&tree::names_on_disk(sd)?)
            .is_subset(&tree::node_keys(&tree::history_names(repo, newest.tree)?))
    {
        return Ok(None);
    }
    let backup = format!(
        "{}{}-{remote}/",
        redact::BACKUP_REFS,
        crate::out::now() as u64
    );
    let keep: Vec<RefUpdate> = local
        .iter()
        .filter(|(_, t)| there.contains_key(*t))
        .map(|(b, t)| RefUpdate::Set {
            name: format!("{backup}{b}"),
            expected: Expected::Any,
            new: *t,
            message: format!("fetch: the history before `{remote}`'s redaction"),
        })
        .collect();
    repo.update_refs(&keep)?;
    tree::take_redaction(sd, repo, branches, newest)?;
    // Branches the remote does not have go to their redacted commits too.
    let others: Vec<RefUpdate> = local
        .iter()
        .filter(|(b, _)| !branches.contains_key(*b))
        .filter_map(|(b, t)| {
            Some(RefUpdate::Advance {
                branch: b.clone(),
                old: *t,
                new: *there.get(t)?,
                message: format!("fetch: `{remote}`'s redaction"),
            })
        })
        .collect();
    if !others.is_empty() {
        repo.update_refs(&others)?;
    }
    Ok(Some((
        Outcome::Redacted,
        Some(format!(
            "`{remote}` has this session redacted: taken; the history before is kept here under {backup} until `git-session redact {id} --drop-backup`"
        )),
    )))
}
