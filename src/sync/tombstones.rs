//! Deletions that sync: `delete` and `project remove` leave a tombstone
//! that `push` carries and `fetch` and `clone` honour, so that what a user
//! deleted does not come back from a remote.
//!
//! On this machine a tombstone is `<state>/sync/tombstones/sessions/<id>.json`
//! or `…/projects/<id>.json`; on a remote it is a commit holding
//! `tombstone.json` at `refs/tombstones/sessions/<shard>/<id>` or
//! `refs/tombstones/projects/<id>`, each new one a child of the last (pushed
//! as a fast-forward, like every ref). The JSON is [`Tombstone`]: a session's
//! names the tips it deleted. It covers a copy of the session whose every
//! branch tip is one of those tips or an ancestor of one, and nothing else:
//! a copy with turns the deletion did not see is never removed on its word
//! (it is kept, and the conflict reported), and pushing that copy revokes
//! the tombstone (`revived_at`), as does pushing a session made again here
//! after it was deleted.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{IoContext, Result};
use crate::git::{Oid, SessionRepo};
use crate::layout::{SessionDir, StateDir, atomic, ids};

use super::push::Update;
use super::{PROJECT_REFS, PushReport, Selection, remote_prefix};
use crate::layout::projects;

pub const TOMBSTONE_REFS: &str = "refs/tombstones/";
/// The file a tombstone commit holds.
const FILE: &str = "tombstone.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Session,
    Project,
}

impl Kind {
    fn dir(self) -> &'static str {
        match self {
            Kind::Session => "sessions",
            Kind::Project => "projects",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Session => "session",
            Kind::Project => "project",
        }
    }
}

/// What a deletion left (`tombstone.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tombstone {
    /// `session` or `project`.
    pub kind: String,
    pub id: String,
    /// When it was deleted (seconds since the epoch).
    pub deleted_at: f64,
    /// A session's branch tips when it was deleted (commit ids, sorted).
    #[serde(default)]
    pub tips: Vec<String>,
    /// Every commit the deleted branches reached (sorted): what the
    /// deletion saw, so that any machine decides what it covers without
    /// the deleted commits.
    #[serde(default)]
    pub commits: Vec<String>,
    /// Set when the deleted thing was made or pushed again after: the
    /// tombstone covers nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revived_at: Option<f64>,
}

impl Tombstone {
    pub fn new(kind: Kind, id: &str, deleted_at: f64, tips: &[Oid], commits: &[Oid]) -> Tombstone {
        let sorted = |ids: &[Oid]| {
            let mut v: Vec<String> = ids.iter().map(Oid::to_string).collect();
            v.sort();
            v.dedup();
            v
        };
        Tombstone {
            kind: kind.name().into(),
            id: id.into(),
            deleted_at,
            tips: sorted(tips),
            commits: sorted(commits),
            revived_at: None,
        }
    }

    pub fn revived(&self) -> bool {
        self.revived_at.is_some()
    }

    /// Whether this one, a revival, revoked deletion `other`: it names
    /// every commit `other` saw (a revival keeps what it revoked), whatever
    /// the machines' clocks say.
    pub fn supersedes(&self, other: &Tombstone) -> bool {
        self.revived()
            && other
                .commits
                .iter()
                .all(|c| self.commits.binary_search(c).is_ok())
    }

    /// This one and `other` (of the same thing) as one: every tip either
    /// deleted, the later time. A revived one counts for nothing.
    pub fn merged(&self, other: Option<&Tombstone>) -> Tombstone {
        let Some(o) = other.filter(|o| !o.revived()) else {
            return self.clone();
        };
        if self.revived() {
            return o.clone();
        }
        let mut t = self.clone();
        for (mine, theirs) in [(&mut t.tips, &o.tips), (&mut t.commits, &o.commits)] {
            mine.extend(theirs.iter().cloned());
            mine.sort();
            mine.dedup();
        }
        t.deleted_at = t.deleted_at.max(o.deleted_at);
        t
    }

    /// Whether every one of `tips` is a commit this tombstone's deletion
    /// saw (a deleted tip or one of its ancestors): decided from the
    /// tombstone alone, on any machine.
    pub fn covers(&self, tips: &[Oid]) -> bool {
        !self.revived()
            && tips.iter().all(|t| {
                let hex = t.to_string();
                self.commits.binary_search(&hex).is_ok() || self.tips.binary_search(&hex).is_ok()
            })
    }

    /// This one, revoked: it covers nothing, and names what it revoked.
    pub fn revoked(&self, at: f64) -> Tombstone {
        let mut t = self.clone();
        t.revived_at = Some(at);
        t
    }

    /// When it was deleted, as a person reads it.
    pub fn when(&self) -> String {
        crate::out::rfc3339(self.deleted_at)
    }

    fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a tombstone serialises");
        bytes.push(b'\n');
        bytes
    }
}

/// The ref of a tombstone on a remote, after `refs/tombstones/`; `None`
/// for an id that cannot be part of a ref name.
fn ref_rel(kind: Kind, id: &str) -> Option<String> {
    let rel = match kind {
        Kind::Session => format!("sessions/{}/{id}", super::shard(id)),
        Kind::Project => format!("projects/{id}"),
    };
    crate::git::valid_ref_name(&format!("{TOMBSTONE_REFS}{rel}")).then_some(rel)
}

/// The full name of a tombstone's ref on a remote.
pub fn remote_ref(kind: Kind, id: &str) -> Option<String> {
    ref_rel(kind, id).map(|rel| format!("{TOMBSTONE_REFS}{rel}"))
}

/// What a ref name after `refs/tombstones/` names; `None` for anything
/// that is not a tombstone of ours in its place.
fn parse_rel(rel: &str) -> Option<(Kind, String)> {
    let (kind, id) = if let Some(rest) = rel.strip_prefix("sessions/") {
        let (_, id) = rest.split_once('/')?;
        ids::session_id(id).ok()?;
        (Kind::Session, id)
    } else {
        let id = rel.strip_prefix("projects/")?;
        ids::project_id(id).ok()?;
        (Kind::Project, id)
    };
    (ref_rel(kind, id).as_deref() == Some(rel)).then(|| (kind, id.to_string()))
}

fn local_dir(state: &StateDir, kind: Kind) -> PathBuf {
    state.sync_dir().join("tombstones").join(kind.dir())
}

fn local_path(state: &StateDir, kind: Kind, id: &str) -> PathBuf {
    local_dir(state, kind).join(format!("{id}.json"))
}

/// This machine's tombstones of `kind`, by id. A file that does not parse,
/// or names another id, is skipped.
pub fn local(state: &StateDir, kind: Kind) -> Result<BTreeMap<String, Tombstone>> {
    let dir = local_dir(state, kind);
    let mut out = BTreeMap::new();
    for d in [
        state.sync_dir(),
        dir.parent().expect("a parent").into(),
        dir.clone(),
    ] {
        atomic::refuse_unsafe(&d)?;
    }
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).io("list", &dir),
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        if let Some(t) = read_local(state, kind, id)? {
            out.insert(id.to_string(), t);
        }
    }
    Ok(out)
}

/// This machine's tombstone of one thing.
pub fn read_local(state: &StateDir, kind: Kind, id: &str) -> Result<Option<Tombstone>> {
    let Some(bytes) = atomic::read_if_present(&local_path(state, kind, id))? else {
        return Ok(None);
    };
    Ok(serde_json::from_slice::<Tombstone>(&bytes)
        .ok()
        .filter(|t| t.id == id && t.kind == kind.name()))
}

/// Record a deletion on this machine, merged with a tombstone of the same
/// thing recorded before. Never written through a link.
pub fn record(state: &StateDir, t: &Tombstone) -> Result<()> {
    let kind = if t.kind == "project" {
        Kind::Project
    } else {
        Kind::Session
    };
    let dir = local_dir(state, kind);
    for d in [
        state.sync_dir(),
        dir.parent().expect("a parent").into(),
        dir.clone(),
    ] {
        atomic::refuse_unsafe(&d)?;
        if !d.is_dir() {
            std::fs::create_dir(&d)
                .or_else(|e| {
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
                .io("create", &d)?;
        }
    }
    let merged = t.merged(read_local(state, kind, &t.id)?.as_ref());
    atomic::write(&local_path(state, kind, &t.id), &merged.to_json())
}

/// Drop this machine's tombstone of a thing that exists here again.
pub fn forget(state: &StateDir, kind: Kind, id: &str) -> Result<()> {
    let path = local_path(state, kind, id);
    atomic::refuse_unsafe(&path)?;
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).io("remove", &path),
        _ => Ok(()),
    }
}

/// The tips of a session's branches.
pub fn tips_of(sd: &SessionDir) -> Result<Vec<Oid>> {
    if !sd.git_dir().is_dir() {
        return Ok(Vec::new());
    }
    let repo = SessionRepo::open_for_reading(&sd.dir)?;
    Ok(repo.branches()?.into_iter().map(|(_, t)| t).collect())
}

/// The tips of a session's branches, and every commit they reach: what a
/// deletion of it sees.
pub fn seen_by_deletion(sd: &SessionDir) -> Result<(Vec<Oid>, Vec<Oid>)> {
    let tips = tips_of(sd)?;
    if tips.is_empty() {
        return Ok((tips, Vec::new()));
    }
    let repo = SessionRepo::open_for_reading(&sd.dir)?;
    let mut seen = std::collections::HashSet::new();
    let mut stack = tips.clone();
    while let Some(c) = stack.pop() {
        if seen.insert(c) {
            stack.extend(repo.commit_info(c)?.parents);
        }
    }
    Ok((tips, seen.into_iter().collect()))
}

/// Why a session must not be removed on a tombstone's word (`None`: it
/// may): it holds a turn the deletion did not see, or nodes no commit
/// holds, or a turn an import keeps open.
pub fn keeps(sd: &SessionDir, t: &Tombstone) -> Option<&'static str> {
    let Ok(repo) = SessionRepo::open_for_reading(&sd.dir) else {
        return Some("its repository does not open");
    };
    let Ok(branches) = repo.branches() else {
        return Some("its branches do not read");
    };
    let tips: Vec<Oid> = branches.iter().map(|(_, t)| *t).collect();
    if !t.covers(&tips) {
        return Some("this machine has turns the deletion did not see");
    }
    let mut committed = std::collections::BTreeSet::new();
    for tip in &tips {
        let Ok(info) = repo.commit_info(*tip) else {
            return Some("a commit does not read");
        };
        match super::tree::history_names(&repo, info.tree) {
            Ok(n) => committed.extend(super::tree::node_keys(&n)),
            Err(_) => return Some("a commit does not read"),
        }
    }
    let on_disk = match super::tree::names_on_disk(sd) {
        Ok(n) => super::tree::node_keys(&n),
        Err(_) => return Some("its history/ does not read"),
    };
    if !on_disk.is_subset(&committed) {
        return Some("this machine has nodes no turn committed yet");
    }
    if sd.import_pending().exists() {
        return Some("an import keeps a turn of it open");
    }
    None
}

/// The tombstones a remote has, as fetched into the transfer repository's
/// `<track>tombstones/`: `(kind, id) -> (commit, tombstone)`. One that does
/// not read is skipped with a warning.
pub fn fetched(
    transfer: &SessionRepo,
    track: &str,
    warn: &mut dyn FnMut(String),
) -> Result<BTreeMap<(Kind, String), (Oid, Tombstone)>> {
    let mut out = BTreeMap::new();
    for (rel, commit) in transfer.refs_under(&format!("{track}tombstones/"))? {
        let Some((kind, id)) = parse_rel(&rel) else {
            warn(format!(
                "`{TOMBSTONE_REFS}{rel}` on the remote is not a tombstone; skipped"
            ));
            continue;
        };
        match read_commit(transfer, commit) {
            Some(t) if t.id == id && t.kind == kind.name() => {
                out.insert((kind, id), (commit, t));
            }
            _ => warn(format!(
                "`{TOMBSTONE_REFS}{rel}` on the remote does not hold a tombstone of {} `{id}`; skipped",
                kind.name()
            )),
        }
    }
    Ok(out)
}

fn read_commit(repo: &SessionRepo, commit: Oid) -> Option<Tombstone> {
    let info = repo.commit_info(commit).ok()?;
    let blob = repo.tree_entry(info.tree, FILE).ok()??;
    let bytes = repo.read_blob(blob).ok()?;
    if bytes.len() > 1 << 20 {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// A tombstone's commit in the transfer repository, a child of the
/// remote's last one of the same thing (`parent`).
pub fn write_commit(repo: &mut SessionRepo, t: &Tombstone, parent: Option<Oid>) -> Result<Oid> {
    let time = t.revived_at.unwrap_or(t.deleted_at);
    let what = if t.revived() { "revived" } else { "deleted" };
    repo.write_file_commit(
        FILE,
        t.to_json(),
        &format!("{} {} {what}\n", t.kind, t.id),
        time,
        parent.as_slice(),
    )
}

/// The tombstone refs a push sends: this machine's deletions of what the
/// remote has (sessions the selection names, projects with a push of
/// everything), each merged with the remote's tombstone of it; and a
/// revival of each remote tombstone that covers a session pushed now which
/// is here again after this machine deleted it, or holds turns the
/// deletion did not see. Tombstones of things that exist here again are
/// dropped.
#[allow(clippy::too_many_arguments)]
pub(super) fn tombstone_updates(
    state: &StateDir,
    transfer: &mut SessionRepo,
    selection: &Selection,
    targets: &[(String, PathBuf)],
    on_remote: &HashMap<String, Oid>,
    remote_sessions: &HashSet<String>,
    remote_tombs: &BTreeMap<(Kind, String), (Oid, Tombstone)>,
    buried: &BTreeMap<String, Tombstone>,
    report: &mut PushReport,
    dry_run: bool,
) -> Result<Vec<Update>> {
    let mut out = Vec::new();
    let mut send =
        |transfer: &mut SessionRepo, kind: Kind, id: &str, t: &Tombstone| -> Result<()> {
            let Some(name) = remote_ref(kind, id) else {
                return Ok(());
            };
            let last = remote_tombs.get(&(kind, id.to_string()));
            if last.is_some_and(|(_, r)| r == t) {
                report.up_to_date += 1;
                return Ok(());
            }
            let parent = last.map(|(c, _)| *c);
            let new = if dry_run {
                crate::git::blob_id(&serde_json::to_vec(t).expect("a tombstone serialises"))
            } else {
                write_commit(transfer, t, parent)?
            };
            out.push(Update {
                session: id.to_string(),
                branch: None,
                remote_ref: name,
                new,
                old: parent,
                forced: false,
            });
            Ok(())
        };
    let pushed: HashMap<&str, &PathBuf> = targets.iter().map(|(id, p)| (id.as_str(), p)).collect();
    for (id, t) in buried {
        if !selection.wants(id) {
            continue;
        }
        if state.find_session_if_any(id)?.is_some() {
            if !dry_run {
                forget(state, Kind::Session, id)?;
            }
            continue;
        }
        let last = remote_tombs
            .get(&(Kind::Session, id.clone()))
            .map(|(_, r)| r);
        // A revival on the remote after this deletion: someone went on
        // with the session since; this machine's deletion is older.
        if last.is_some_and(|r| r.supersedes(t)) {
            continue;
        }
        if !remote_sessions.contains(id) && last.is_none() {
            continue;
        }
        let merged = t.merged(last);
        // The remote has turns this deletion did not see: it stands for
        // nothing there (a fetch here brings the session back).
        if !merged.covers(&remote_tips(on_remote, id)) {
            continue;
        }
        send(transfer, Kind::Session, id, &merged)?;
    }
    for ((kind, id), (_, r)) in remote_tombs {
        let Some(dir) = pushed.get(id.as_str()).filter(|_| *kind == Kind::Session) else {
            continue;
        };
        // A session withheld for its secrets is not sent: nor is its revival.
        if r.revived() || report.withheld.iter().any(|(w, _)| w == id) {
            continue;
        }
        let sd = SessionDir::new((*dir).clone());
        let Ok(tips) = tips_of(&sd) else {
            continue;
        };
        // Made again here after this machine deleted it, or gone on with
        // past what the deletion saw: alive. (A copy the deletion covers
        // is one a fetch deletes, never a reason to revive.)
        if buried.contains_key(id) || !r.covers(&tips) {
            send(transfer, Kind::Session, id, &r.revoked(crate::out::now()))?;
        }
    }
    if matches!(selection, Selection::All) {
        let registered = projects::read(state)?;
        for (pid, t) in local(state, Kind::Project)? {
            let last = remote_tombs
                .get(&(Kind::Project, pid.clone()))
                .map(|(_, r)| r);
            // Registered again here after it was removed: alive.
            if registered.contains_key(&pid) {
                if !dry_run {
                    forget(state, Kind::Project, &pid)?;
                }
                if let Some(r) = last.filter(|r| !r.revived()) {
                    send(transfer, Kind::Project, &pid, &r.revoked(crate::out::now()))?;
                }
                continue;
            }
            if last.is_some_and(|r| r.supersedes(&t)) {
                continue;
            }
            if !on_remote.contains_key(&format!("{PROJECT_REFS}{pid}")) && last.is_none() {
                continue;
            }
            send(transfer, Kind::Project, &pid, &t.merged(last))?;
        }
    }
    Ok(out)
}

/// The tips the remote has of session `id`'s branches.
pub(super) fn remote_tips(on_remote: &HashMap<String, Oid>, id: &str) -> Vec<Oid> {
    let Some(prefix) = remote_prefix(id) else {
        return Vec::new();
    };
    on_remote
        .iter()
        .filter(|(n, _)| n.starts_with(&prefix))
        .map(|(_, t)| *t)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tombstone_refs_are_read_back_only_in_their_place() {
        for (kind, id) in [(Kind::Session, "s1"), (Kind::Project, "proj_1a")] {
            let rel = ref_rel(kind, id).unwrap();
            assert_eq!(parse_rel(&rel), Some((kind, id.to_string())));
        }
        assert_eq!(ref_rel(Kind::Session, "s1").unwrap(), "sessions/s1/s1");
        for rel in [
            "sessions/zz/s1",
            "sessions/s1",
            "projects/a/b",
            "other/x",
            "sessions/s1/-x",
        ] {
            assert_eq!(parse_rel(rel), None, "{rel}");
        }
    }

    #[test]
    fn a_revived_tombstone_counts_for_nothing_in_a_merge() {
        let a = Oid::from_hex(b"1111111111111111111111111111111111111111").unwrap();
        let b = Oid::from_hex(b"2222222222222222222222222222222222222222").unwrap();
        let t1 = Tombstone::new(Kind::Session, "s", 10.0, &[a], &[a]);
        let t2 = Tombstone::new(Kind::Session, "s", 20.0, &[b, a], &[b, a]);
        let m = t1.merged(Some(&t2));
        assert_eq!(m.tips.len(), 2);
        assert_eq!(m.deleted_at, 20.0);
        let r = t2.revoked(30.0);
        assert_eq!(t1.merged(Some(&r)), t1);
        assert_eq!(r.merged(Some(&t1)), t1);
        assert!(r.supersedes(&t1) && !t1.supersedes(&r));
        assert!(!r.covers(&[a]) && t2.covers(&[a, b]) && !t1.covers(&[b]));
    }
}
