//! Session lifecycle on the registry (SPEC §3, §5.8, §5.12): update fields,
//! delete, recover after a crash, collect empty shells. Lock order: the
//! registry, then the session.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result, Usage};
use crate::layout::history::Catalog;
use crate::layout::lock::{self, LockOptions};
use crate::layout::registry::{self, ListRow};
use crate::layout::schema::{self, Meta};
use crate::layout::{SessionDir, StateDir, TEMP_PREFIX, atomic, ids};

/// What `delete` refuses (`git_session::lifecycle::…`, exit 1).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LifecycleError {
    /// A session directory holding files that are not the session's.
    #[error("`{}` holds files that are not session `{id}`'s: {}", dir.display(), files.join(", "))]
    #[diagnostic(
        code(git_session::lifecycle::foreign_files),
        help("nothing was deleted; move those files out first, or delete the session by hand")
    )]
    ForeignFiles {
        dir: PathBuf,
        id: String,
        files: Vec<String>,
    },
}

/// Fields `update` can change.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub title: Option<String>,
    pub pinned: Option<bool>,
    pub status: Option<String>,
    pub unread: Option<bool>,
    pub group: Option<String>,
    pub archived: Option<bool>,
}

pub const STATUSES: [&str; 6] = [
    "idle",
    "running",
    "needs_input",
    "done",
    "failed",
    "interrupted",
];

/// A status as the layout spells it (`needs_input`); the spelling with a
/// hyphen is accepted everywhere as an alias.
pub fn status(s: &str) -> Result<&'static str> {
    let canon = s.replace('-', "_");
    STATUSES
        .iter()
        .find(|k| **k == canon)
        .copied()
        .ok_or_else(|| {
            Usage::SessionStatus {
                status: s.to_string(),
            }
            .into()
        })
}

/// Apply `changes` to a session's meta.json and index row. Never touches
/// `updated_at` (only appends are activity). Returns the fields that changed.
pub fn update(
    state: &StateDir,
    id: &str,
    changes: &Changes,
    locks: LockOptions,
) -> Result<Map<String, Value>> {
    let sd = state.find_session(id)?;
    let _l = session_lock(&sd, locks)?;
    let mut meta = Meta::read(&sd.meta())?;
    let before = meta.clone();
    if let Some(t) = &changes.title {
        meta.set("title", t.as_str());
        if t.is_empty() {
            meta.0.remove("_user_titled");
        } else {
            meta.set("_user_titled", true);
        }
    }
    if let Some(p) = changes.pinned {
        meta.set("pinned", p);
    }
    if let Some(s) = &changes.status {
        meta.set("status", status(s)?);
    }
    if let Some(u) = changes.unread {
        meta.set("unread", u);
    }
    if let Some(g) = &changes.group {
        if g.is_empty() {
            meta.0.remove("group");
        } else {
            meta.set("group", g.as_str());
        }
    }
    if let Some(a) = changes.archived {
        meta.set("archived", a);
    }
    let mut changed = Map::new();
    for (k, v) in &meta.0 {
        if before.0.get(k) != Some(v) {
            changed.insert(k.clone(), v.clone());
        }
    }
    for k in before.0.keys() {
        if !meta.0.contains_key(k) {
            changed.insert(k.clone(), Value::Null);
        }
    }
    if !changed.is_empty() {
        atomic::write(&sd.meta(), &meta.to_json())?;
        atomic::crash_point("update-before-registry");
        registry::journal_append(state, &schema::index_row(&meta, id, None))?;
    }
    Ok(changed)
}

fn session_lock(sd: &SessionDir, locks: LockOptions) -> Result<Option<lock::Lock>> {
    if sd.git_dir().is_dir() {
        Ok(Some(lock::acquire(
            &sd.lock_file(),
            lock::Kind::Exclusive,
            locks,
        )?))
    } else {
        Ok(None)
    }
}

/// Remove a session: its repository, index row, location and project
/// bindings. The directory is first renamed to a temp name, so it vanishes at
/// once; a crash leaves a temp directory that `verify --fix` removes.
// What a session directory may hold: a directory with anything else in it
// (a path `locations.json` names inside a user's tree) is not deleted.
use crate::layout::paths::SESSION_ENTRIES;
use crate::sync::tombstones;

pub fn delete(state: &StateDir, id: &str, locks: LockOptions) -> Result<PathBuf> {
    Ok(delete_unless(state, id, locks, |_| None, None)?.expect("nothing keeps it"))
}

/// [`delete`], unless `keep`, asked once the session's lock is held (no
/// append can land after it), gives a reason to keep the session: then
/// nothing is deleted (`None`).
///
/// A session with turns leaves a tombstone (`push` carries it, so that no
/// remote brings the session back): `tombstone` when given (a peer's, which
/// a fetch honours), else one naming the session's tips as they are.
pub fn delete_unless(
    state: &StateDir,
    id: &str,
    locks: LockOptions,
    keep: impl Fn(&SessionDir) -> Option<&'static str>,
    tombstone: Option<&tombstones::Tombstone>,
) -> Result<Option<PathBuf>> {
    let sd = state.find_session(id)?;
    let foreign = foreign_entries(&sd)?;
    if !foreign.is_empty() {
        return Err(LifecycleError::ForeignFiles {
            dir: sd.dir,
            id: id.to_string(),
            files: foreign,
        }
        .into());
    }
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, locks)?;
    registry::sweep_temps(state);
    let session = session_lock(&sd, locks)?;
    if keep(&sd).is_some() {
        return Ok(None);
    }
    // Written before the session goes: a kill after it leaves a session
    // and its tombstone, which a `push` drops (the session is here), never
    // a deleted session without one.
    // (A repository whose branches do not read leaves none: it is
    // deleted all the same.)
    if tombstone.is_none()
        && let Ok((tips, commits)) = tombstones::seen_by_deletion(&sd)
        && !tips.is_empty()
    {
        tombstones::record(
            state,
            &tombstones::Tombstone::new(
                tombstones::Kind::Session,
                id,
                crate::out::now(),
                &tips,
                &commits,
            ),
        )?;
    }
    let parent = sd
        .dir
        .parent()
        .expect("a session dir has a parent")
        .to_path_buf();
    let grave = parent.join(format!("{TEMP_PREFIX}delete-{id}-{}", ids::generate("")));
    std::fs::rename(&sd.dir, &grave).io("remove", &sd.dir)?;
    drop(session);
    // A peer's deletion is kept here once the copy is gone (the remote
    // carries it meanwhile): a delete that failed leaves no tombstone of
    // a session that is still here.
    if let Some(t) = tombstone {
        tombstones::record(state, t)?;
    }
    atomic::sync_dir(&parent)?;
    atomic::crash_point("delete-after-rename");
    // The session's row, location and bindings go while what was moved
    // aside still says a delete is under way: a kill at any point leaves
    // it, and `delete`, `recover` or `verify --fix` finish the rest.
    registry::journal_append(
        state,
        &serde_json::from_value(serde_json::json!({"id": id, "_deleted": true}))
            .expect("an object"),
    )?;
    drop(_registry);
    registry::remove_locations(state, &[id.to_string()], locks)?;
    unbind_everywhere(state, id, locks)?;
    registry::fold(state, locks)?;
    // The session is gone from every registry: what cannot be removed (a
    // read-only directory an agent's tool left in workdir/) stays under
    // its temp name, which `verify` reports and `recover` tries again.
    let _ = std::fs::remove_dir_all(&grave);
    atomic::sync_dir(&parent)?;
    Ok(Some(sd.dir))
}

/// Deletes a crash left unfinished (SIGKILL after the rename): each
/// `<TEMP_PREFIX>delete-<id>-<tag>` beside the sessions (what a delete had
/// moved aside: its name says what it was doing) is removed; so is a
/// directory left at `<id>` that is no session (neither meta.json nor
/// history/, and nothing but a session's own entries: a lock file a writer
/// that waited on the session made again), never a user's directory; then
/// the session's row, location and bindings go, unless a session of that
/// id is there again. `only`: that session's alone. Returns the ids and
/// where each session was.
pub fn finish_deletes(
    state: &StateDir,
    locks: LockOptions,
    only: Option<&str>,
) -> Result<Vec<(String, PathBuf)>> {
    let prefix = format!("{TEMP_PREFIX}delete-");
    let mut done: BTreeMap<String, PathBuf> = BTreeMap::new();
    let registry_lock = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, locks)?;
    // What a registry write killed with the delete left.
    registry::sweep_temps(state);
    for parent in state.session_parents() {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some((id, _tag)) = name
                .strip_prefix(&prefix)
                .and_then(|rest| rest.rsplit_once('-'))
            else {
                continue;
            };
            if ids::session_id(id).is_err() || only.is_some_and(|o| o != id) {
                continue;
            }
            let grave = e.path();
            // Never through a link: a link is removed, not what it names.
            let gone = match e.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(&grave),
                _ => std::fs::remove_file(&grave),
            };
            gone.io("remove", &grave)?;
            let left = parent.join(id);
            if is_delete_leftover(&left) {
                std::fs::remove_dir_all(&left).io("remove", &left)?;
            }
            atomic::sync_dir(&parent)?;
            done.insert(id.to_string(), left);
        }
    }
    let done: Vec<(String, PathBuf)> = done
        .into_iter()
        .filter(|(id, _)| matches!(state.find_session_if_any(id), Ok(None)))
        .collect();
    for (id, _) in &done {
        registry::journal_append(
            state,
            &serde_json::from_value(serde_json::json!({"id": id, "_deleted": true}))
                .expect("an object"),
        )?;
    }
    drop(registry_lock);
    for (id, _) in &done {
        registry::remove_locations(state, std::slice::from_ref(id), locks)?;
        unbind_everywhere(state, id, locks)?;
    }
    if !done.is_empty() {
        registry::fold(state, locks)?;
    }
    Ok(done)
}

/// Whether `dir` is what a delete cut short can leave where the session
/// was: a directory (not a link) holding nothing, or only `.git/` holding
/// nothing but the session's lock file. Anything else (a user's files, a
/// repository, a session) is never taken for one.
fn is_delete_leftover(dir: &Path) -> bool {
    fn holds_only(dir: &Path, names: &[&str]) -> bool {
        std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
            && std::fs::read_dir(dir).is_ok_and(|entries| {
                entries
                    .map(|e| e.map(|e| e.file_name()))
                    .all(|n| n.is_ok_and(|n| names.iter().any(|a| n == *a)))
            })
    }
    let sd = SessionDir::new(dir.to_path_buf());
    let lock = sd.lock_file();
    let lock = lock
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    holds_only(dir, &[".git"])
        && (std::fs::symlink_metadata(sd.git_dir()).is_err() || holds_only(&sd.git_dir(), &[lock]))
}

/// The entries of a session directory that are not a session's own: a
/// directory holding any is never deleted.
fn foreign_entries(sd: &SessionDir) -> Result<Vec<String>> {
    Ok(std::fs::read_dir(&sd.dir)
        .io("list", &sd.dir)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !SESSION_ENTRIES.contains(&n.as_str()) && !n.starts_with(TEMP_PREFIX))
        .collect())
}

/// Drop `id` from every project's `session_ids` in projects.json.
fn unbind_everywhere(state: &StateDir, id: &str, locks: LockOptions) -> Result<()> {
    let path = state.projects_json();
    if !path.exists() {
        return Ok(());
    }
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, locks)?;
    let Ok(Value::Object(mut projects)) =
        serde_json::from_slice::<Value>(&crate::layout::atomic::read(&path).io("read", &path)?)
    else {
        return Ok(());
    };
    let mut changed = false;
    for p in projects.values_mut() {
        if let Some(Value::Array(ids)) = p.get_mut("session_ids") {
            let before = ids.len();
            ids.retain(|v| v.as_str() != Some(id));
            changed |= ids.len() != before;
        }
    }
    if changed {
        let mut bytes = serde_json::to_vec_pretty(&projects).expect("an object serializes");
        bytes.push(b'\n');
        atomic::write(&path, &bytes)?;
    }
    Ok(())
}

/// Session id → (project id, project name).
pub type ProjectOf = BTreeMap<String, (String, String)>;
/// Project id → its recorded path.
pub type ProjectPaths = BTreeMap<String, Option<String>>;

/// Whether session `id` is bound to project `p` (its id or name; a session
/// bound to none is in `default`).
pub fn in_project(project_of: &ProjectOf, id: &str, p: &str) -> bool {
    match project_of.get(id) {
        Some((pid, name)) => pid == p || name == p,
        None => p == "default",
    }
}

/// Project of each session and its name, from projects.json's reverse index.
pub fn projects(state: &StateDir) -> (ProjectOf, ProjectPaths) {
    let mut of_session = BTreeMap::new();
    let mut paths = BTreeMap::new();
    let Ok(bytes) = crate::layout::atomic::read(state.projects_json()) else {
        return (of_session, paths);
    };
    let Ok(Value::Object(projects)) = serde_json::from_slice::<Value>(&bytes) else {
        return (of_session, paths);
    };
    for (pid, p) in &projects {
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(pid)
            .to_string();
        paths.insert(
            pid.clone(),
            p.get("path").and_then(Value::as_str).map(str::to_owned),
        );
        for s in p
            .get("session_ids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(s) = s.as_str() {
                of_session
                    .entry(s.to_string())
                    .or_insert((pid.clone(), name.clone()));
            }
        }
    }
    (of_session, paths)
}

/// What the rows of [`load_rows`] borrow their strings from: index.json as
/// read, and as read again after a rebuild. The caller keeps it while it
/// uses the rows.
#[derive(Debug, Default)]
pub struct RowsText {
    read: registry::ListText,
    rebuilt: registry::ListText,
}

/// The index as `list` sees it: index.json with the journal folded in (a
/// missing or corrupt index is rebuilt and saved once), plus rows for
/// session directories the index does not know (self-healing; a scan of
/// names only, no per-session read unless one is missing).
pub fn load_rows<'a>(
    state: &StateDir,
    locks: LockOptions,
    text: &'a mut RowsText,
) -> Result<BTreeMap<String, Box<ListRow<'a>>>> {
    let mut index = match registry::load_list(state, &mut text.read)? {
        Some(i) => i,
        None if state.sessions().is_dir() => {
            registry::rebuild_index(state, locks)?;
            registry::load_list(state, &mut text.rebuilt)?.unwrap_or_default()
        }
        None => BTreeMap::new(),
    };
    crate::out::trace("list: index parsed");
    let mut missing = Vec::new();
    let mut scan = |dir: PathBuf| {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name();
            let Some(n) = name.to_str() else { continue };
            if !index.contains_key(n) && ids::session_id(n).is_ok() {
                missing.push((n.to_string(), dir.join(n)));
            }
        }
    };
    state.session_parents().into_iter().for_each(&mut scan);
    crate::out::trace("list: directories scanned");
    for (id, path) in missing {
        let sd = SessionDir::new(path);
        let Ok(meta) = Meta::read(&sd.meta()) else {
            continue;
        };
        let row = row_from_disk(&sd, &meta);
        let (i, r) = (id.clone(), row.clone());
        registry::update_index(
            state,
            locks,
            || registry::rebuild(state),
            move |idx| {
                idx.entry(i).or_insert(r);
            },
        )?;
        index.insert(id, Box::new(ListRow::from_row(row)));
    }
    Ok(index)
}

fn row_from_disk(sd: &SessionDir, meta: &Meta) -> Map<String, Value> {
    let id = meta.str("id").unwrap_or_default().to_string();
    let preview = Catalog::peek(sd)
        .ok()
        .and_then(|c| crate::layout::registry::latest_preview(sd, &c));
    let id = if id.is_empty() {
        sd.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        id
    };
    schema::index_row(meta, &id, preview.as_deref())
}

/// Sessions named in the migration journal (never collected while migrating).
pub fn migrating(state: &StateDir) -> Result<BTreeSet<String>> {
    Ok(crate::layout::migration::migrating(state)?
        .0
        .into_iter()
        .collect())
}

/// Why a shell is kept, or `None` when it may be collected.
pub fn keep_reason(
    sd: &SessionDir,
    meta: &Meta,
    now: f64,
    older_than: f64,
    projects: &BTreeMap<String, Option<String>>,
    migrating: &BTreeSet<String>,
    id: &str,
) -> Option<&'static str> {
    if meta.flag("archived") {
        return Some("archived");
    }
    if migrating.contains(id) {
        return Some("being migrated");
    }
    if let Some(pid) = meta.str("project_id").filter(|p| *p != "default") {
        let reachable = projects
            .get(pid)
            .and_then(|p| p.as_deref())
            .is_some_and(|p| std::path::Path::new(p).is_dir());
        if !reachable {
            return Some("its project directory is unreachable");
        }
    }
    let created = meta.f64("created_at").unwrap_or(now);
    if now - created < older_than {
        return Some("too young");
    }
    // An empty cache is not enough to delete on: another program may have
    // written the first node in the instant it was made. The directory
    // itself must hold nothing. (The cache first: at start-up, most
    // sessions have nodes, and cost no listing.)
    let empty = |c: &Catalog| c.is_empty() && c.foreign.is_empty();
    if !Catalog::peek(sd).is_ok_and(|c| empty(&c))
        || !Catalog::read(&sd.history()).is_ok_and(|c| empty(&c))
    {
        return Some("has nodes");
    }
    if !foreign_entries(sd).is_ok_and(|f| f.is_empty()) {
        return Some("its directory holds files that are not a session's");
    }
    None
}

/// Parse `90s`, `30m`, `1h`, `2d`, `1w` or plain seconds.
pub fn parse_duration(s: &str) -> Result<f64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let n: f64 = num.trim().parse().map_err(|_| bad_duration(s))?;
    let mult = match unit {
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        "w" => 604_800.0,
        _ => return Err(bad_duration(s)),
    };
    if !(n.is_finite() && n >= 0.0) {
        return Err(bad_duration(s));
    }
    Ok(n * mult)
}

fn bad_duration(s: &str) -> Error {
    Usage::Duration {
        value: s.to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), 90.0);
        assert_eq!(parse_duration("30m").unwrap(), 1800.0);
        assert_eq!(parse_duration("1h").unwrap(), 3600.0);
        assert_eq!(parse_duration("2d").unwrap(), 172_800.0);
        for bad in ["", "h", "1y", "-1h", "abc"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
