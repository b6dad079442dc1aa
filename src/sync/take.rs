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

use super::tree::{self, Existing, Newest};

/// Whose conversation is current after the divergence is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    Local,
    Remote,
}

pub fn apply(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    id: &str,
    remote: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &Newest,
    take: Take,
) -> Result<String> {
    let theirs = tree::history_blobs(repo, newest.tree)?;
    let their_ids: BTreeMap<String, Oid> = theirs
        .iter()
        .filter_map(|(f, blob)| parse_node_file_name(f).map(|(_, _, id)| (id.to_string(), *blob)))
        .collect();
    let mut next = theirs
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
    let local_meta = atomic::read(sd.meta())
        .ok()
        .and_then(|b| Meta::parse(&b).ok());
    let local_head = local_meta
        .as_ref()
        .and_then(|m| m.head_id().map(str::to_string));

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
    let their_naming = theirs.keys().find_map(|f| Naming::shown_by(f));
    for (_, file) in &replay {
        let path = history.join(file);
        let bytes = atomic::read(&path).io("read", &path)?;
        let mut node: serde_json::Map<String, Value> = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(&path, format!("the node does not parse: {e}")))?;
        let (_, _, nid) = parse_node_file_name(file).expect("a node file name");
        // A node the remote's id conflicts with takes its kept id, and
        // this machine's nodes that named it name that id.
        let nid = match conflicts.get(nid) {
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
                .and_then(|p| conflicts.get(p))
            {
                node.insert(key.into(), kept.as_str().into());
            }
        }
        if let Some(Value::Object(m)) = node.get_mut("metadata")
            && let Some(kept) = m
                .get("parent_id")
                .and_then(Value::as_str)
                .and_then(|p| conflicts.get(p))
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
    // 2. The remote's files (node files it has and this machine lacks
    //    included), once this machine's at their names are kept elsewhere;
    //    this machine's other files stay under `local`.
    for file in &displaced {
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
        meta.set("head_id", conflicts.get(h).unwrap_or(h).as_str());
    }
    atomic::write(&sd.meta(), &meta.to_json())?;
    // What the importer keeps of this machine's transcripts names the
    // kept ids too.
    crate::import::ids_renamed(sd, &conflicts)?;
    // 4. The old names go once the new ones are written.
    for file in old_names.iter().filter(|f| !displaced.contains(f)) {
        remove(&history.join(file))?;
    }
    // (A name the remote's file took is the remote's now.)
    for file in stale
        .iter()
        .filter(|f| !displaced.contains(f) && !written.contains(f))
    {
        remove(&history.join(file))?;
    }
    let _ = std::fs::remove_file(sd.catalog_stamp());
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
    let branch_note = made
        .iter()
        .filter(|m| m.new_branch)
        .map(|m| format!("`{}`", m.branch))
        .collect::<Vec<_>>();
    let current = match take {
        Take::Local => "this machine's".to_string(),
        Take::Remote => format!("`{remote}`'s"),
    };
    let conflict_note = match conflicts.len() {
        0 => String::new(),
        _ => format!(
            "; {} node(s) of this machine whose id the remote gave another node kept as {}",
            conflicts.len(),
            conflicts
                .values()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Ok(format!(
        "{renamed} node(s) only this machine had were renumbered after the remote's and committed in {} turn(s){}{conflict_note}; {current} conversation is current",
        made.len(),
        if branch_note.is_empty() {
            String::new()
        } else {
            format!(" on {}", branch_note.join(", "))
        }
    ))
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
