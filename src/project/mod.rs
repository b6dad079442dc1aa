//! Projects (SPEC §5.10–§5.11): register working directories, bind sessions
//! to them, and commit the agent's changes in the project's own repository
//! (Project-Git), never touching what the user changed. Lock order: the
//! registry, then the project, then the session.

pub mod agent;
mod error;
pub mod log;
pub mod record;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::error::{Error, IoContext, Result, Usage};
use crate::git::project::{self as pgit, Found};
use crate::layout::history::{self, Catalog};
use crate::layout::lock::LockOptions;
use crate::layout::projects::{self, Project, Projects};
use crate::layout::schema::{Meta, Node};
use crate::layout::{SessionDir, StateDir, atomic, ids};

pub use error::ProjectError;

/// Register `path` (an existing directory); the id is stable per path.
/// A project directory is the user's: never the state dir, anything inside
/// it or holding it, nor a session repository (SPEC §4), nor a path that
/// is not UTF-8. `canon` is canonical.
pub fn refuse_ours(state: &StateDir, canon: &Path) -> Result<()> {
    // The registry, shared with the Python store, holds paths as JSON text:
    // a lossy spelling would name a directory that does not exist.
    if canon.to_str().is_none() {
        return Err(ProjectError::PathNotUtf8 {
            path: canon.to_path_buf(),
        }
        .into());
    }
    let root = std::fs::canonicalize(&state.root).unwrap_or_else(|_| state.root.clone());
    let why = if canon.starts_with(&root) {
        Some("it is inside the state directory")
    } else if root.starts_with(canon) {
        Some("it holds the state directory")
    } else if crate::layout::paths::is_session_dir(canon)
        && canon.join(crate::layout::paths::META).is_file()
        && canon.join(".git").is_dir()
    {
        Some("it is a session repository")
    } else {
        None
    };
    match why {
        Some(why) => Err(ProjectError::UnusableDir {
            path: canon.to_path_buf(),
            why,
        }
        .into()),
        None => Ok(()),
    }
}

pub fn add(
    state: &StateDir,
    path: &Path,
    name: Option<&str>,
    auto_commit: Option<bool>,
    locks: LockOptions,
) -> Result<(Project, bool)> {
    let canon = std::fs::canonicalize(path).map_err(|_| ProjectError::NoSuchDir {
        path: path.to_path_buf(),
    })?;
    if !canon.is_dir() {
        return Err(ProjectError::NotADir { path: canon }.into());
    }
    refuse_ours(state, &canon)?;
    let now = crate::out::now();
    projects::update(state, locks, |ps| {
        let existing = ps
            .iter()
            .find(|(_, p)| p.get("path").and_then(Value::as_str) == Some(&*canon.to_string_lossy()))
            .map(|(id, _)| id.clone());
        let (id, new) = match existing {
            Some(id) => (id, false),
            None => {
                let id = projects::id_for(&canon, ps);
                let default_name = canon
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| id.clone());
                let mut p = Map::new();
                p.insert("id".into(), id.clone().into());
                p.insert("name".into(), default_name.into());
                p.insert("path".into(), canon.to_string_lossy().into_owned().into());
                p.insert("is_default".into(), false.into());
                p.insert("session_ids".into(), json!([]));
                p.insert("status".into(), "active".into());
                p.insert("created_at".into(), now.into());
                p.insert("auto_commit".into(), false.into());
                ps.insert(id.clone(), p);
                (id, true)
            }
        };
        let p = ps.get_mut(&id).expect("inserted or found");
        if let Some(n) = name {
            p.insert("name".into(), n.into());
        }
        if let Some(a) = auto_commit {
            p.insert("auto_commit".into(), a.into());
        }
        Ok((Project::from(&id, p), new))
    })
}

/// Resolve a project by id, name or path.
pub fn get(state: &StateDir, key: &str) -> Result<Project> {
    let ps = projects::read(state)?;
    projects::find(&ps, key).ok_or_else(|| {
        let known: Vec<String> = ps.keys().cloned().collect();
        ProjectError::NotFound {
            key: key.to_string(),
            help: if known.is_empty() {
                "register one with `git-session project add <path>`".into()
            } else {
                format!("projects: {}", known.join(", "))
            },
        }
        .into()
    })
}

/// What `project set` changes: each setting given replaces the project's.
#[derive(Debug, Default)]
pub struct Settings {
    /// A new display name (the id and path stay).
    pub name: Option<String>,
    /// active, paused or done.
    pub status: Option<String>,
    /// Commit the agent's changes at the end of each turn.
    pub auto_commit: Option<bool>,
    /// Let git run the project's hooks on agent commits.
    pub hooks: Option<bool>,
}

/// Change the settings of the project `key` names (id, name or path), under
/// the registry lock; an unknown status is refused before anything is
/// written. Returns the project as it now is.
pub fn set(state: &StateDir, key: &str, settings: Settings, locks: LockOptions) -> Result<Project> {
    let Settings {
        name,
        status,
        auto_commit,
        hooks,
    } = settings;
    let p = get(state, key)?;
    if let Some(s) = &status
        && !["active", "paused", "done"].contains(&s.as_str())
    {
        return Err(Usage::ProjectStatus {
            status: s.to_string(),
        }
        .into());
    }
    projects::update(state, locks, |ps| {
        let e = ps.get_mut(&p.id).expect("found above");
        if let Some(n) = name {
            e.insert("name".into(), n.into());
        }
        if let Some(s) = status {
            e.insert("status".into(), s.into());
        }
        if let Some(a) = auto_commit {
            e.insert("auto_commit".into(), a.into());
        }
        if let Some(h) = hooks {
            e.insert("hooks".into(), h.into());
        }
        Ok(Project::from(&p.id, e))
    })
}

/// Remove the project `key` names from the registry (its directory,
/// repository and sessions are untouched); the default project cannot be.
/// Returns the project as it was.
pub fn remove(state: &StateDir, key: &str, locks: LockOptions) -> Result<Project> {
    let p = get(state, key)?;
    if p.id == "default" {
        return Err(ProjectError::DefaultRemoved.into());
    }
    // `push` carries the removal: no remote registers it again here.
    // Recorded first: a removal cut short leaves a tombstone of a
    // registered project, which a push drops.
    crate::sync::tombstones::record(
        state,
        &crate::sync::tombstones::Tombstone::new(
            crate::sync::tombstones::Kind::Project,
            &p.id,
            crate::out::now(),
            &[],
            &[],
        ),
    )?;
    projects::update(state, locks, |ps| {
        ps.remove(&p.id);
        Ok(())
    })?;
    Ok(p)
}

/// Projects with a session being migrated (they refuse new bindings).
fn migrating_projects(state: &StateDir) -> Result<BTreeSet<String>> {
    Ok(crate::layout::migration::migrating(state)?
        .1
        .into_iter()
        .collect())
}

/// Bind a session to a project: allowed before its first node; after it,
/// only to the same project. A session in the default place moves to
/// `sessions/projects/<project>/<id>/`.
pub fn bind(
    state: &StateDir,
    session: &str,
    key: &str,
    locks: LockOptions,
) -> Result<(Project, PathBuf)> {
    ids::session_id(session)?;
    let project = get(state, key)?;
    if project.id == "default" {
        return Err(ProjectError::DefaultBound.into());
    }
    if project.path_missing() {
        return Err(ProjectError::DirMissingAt {
            id: project.id,
            path: project.path.unwrap_or_default(),
        }
        .into());
    }
    if migrating_projects(state)?.contains(&project.id) {
        return Err(ProjectError::MigrationInProgress { id: project.id }.into());
    }
    let sd = state.find_session(session)?;
    let mut meta = Meta::read(&sd.meta())?;
    let current = meta.str("project_id").unwrap_or("default").to_string();
    if current == project.id {
        let dir = sd.dir.clone();
        add_session(state, &project.id, session, locks)?;
        return Ok((project, dir));
    }
    if !Catalog::peek(&sd)?.is_empty() {
        return Err(ProjectError::Frozen {
            session: session.to_string(),
            current,
        }
        .into());
    }
    let target = state.project_session_dir(&project.id, session);
    let dir = {
        let _registry = crate::layout::lock::acquire(
            &state.registry_lock(),
            crate::layout::lock::Kind::Exclusive,
            locks,
        )?;
        let _session = if sd.git_dir().is_dir() {
            Some(crate::layout::lock::acquire(
                &sd.lock_file(),
                crate::layout::lock::Kind::Exclusive,
                locks,
            )?)
        } else {
            None
        };
        meta.set("project_id", project.id.as_str());
        // When it joined (a bind again to the same project keeps the first
        // time, above): `relocate` completes a move only in the sessions
        // bound before it.
        meta.set(crate::layout::schema::BOUND_AT, crate::out::now());
        atomic::write(&sd.meta(), &meta.to_json())?;
        if sd.dir != target && sd.dir.starts_with(state.sessions()) {
            state.make_parent_checked(&target)?;
            std::fs::rename(&sd.dir, &target).io("move the session to", &target)?;
            atomic::sync_dir(target.parent().expect("has a parent"))?;
            // Still under the registry lock: the other reader finds it.
            crate::layout::registry::set_locations_locked(
                state,
                &[(session.to_string(), target.clone())],
            )?;
            target
        } else {
            sd.dir.clone()
        }
    };
    add_session(state, &project.id, session, locks)?;
    Ok((project, dir))
}

/// Add `session` to `project`'s `session_ids`, and drop it from the others.
pub fn add_session(
    state: &StateDir,
    project: &str,
    session: &str,
    locks: LockOptions,
) -> Result<()> {
    add_sessions(state, &[(project.to_string(), session.to_string())], locks)
}

/// [`add_session`] for many `(project, session)` pairs at once: one read
/// and one write of projects.json.
pub fn add_sessions(
    state: &StateDir,
    pairs: &[(String, String)],
    locks: LockOptions,
) -> Result<()> {
    let project_of: HashMap<&str, &str> = pairs
        .iter()
        .map(|(p, s)| (s.as_str(), p.as_str()))
        .collect();
    projects::update(state, locks, |ps: &mut Projects| {
        for (id, p) in ps.iter_mut() {
            let list = p.entry("session_ids").or_insert_with(|| json!([]));
            if let Value::Array(a) = list {
                a.retain(|v| {
                    v.as_str()
                        .and_then(|s| project_of.get(s))
                        .is_none_or(|p| p == id)
                });
                let mut listed: HashSet<&str> = a.iter().filter_map(Value::as_str).collect();
                let new: Vec<Value> = pairs
                    .iter()
                    .filter(|(p, s)| p == id && listed.insert(s))
                    .map(|(_, s)| Value::from(s.as_str()))
                    .collect();
                a.extend(new);
            }
        }
        Ok(())
    })
}

/// The project a session is bound to, unless it is the default.
pub fn of_session(state: &StateDir, session: &str, meta: &Meta) -> Result<Option<Project>> {
    let ps = projects::read(state)?;
    if let Some(p) = projects::of_session(&ps, session) {
        return Ok(Some(p));
    }
    Ok(meta
        .str("project_id")
        .filter(|p| *p != "default")
        .and_then(|p| ps.get(p).map(|v| Project::from(p, v))))
}

/// What `begin-turn` records about the project's working tree.
pub fn baseline(state: &StateDir, project: &Project, time: f64) -> Result<Value> {
    let Some(path) = project.path.as_deref().filter(|p| p.is_dir()) else {
        return Ok(json!({"project_id": project.id, "error": "path_missing", "at": time}));
    };
    // A registry edited to point a project at the state dir (or a session)
    // gets no repository and no commit there.
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if refuse_ours(state, &canon).is_err() {
        return Ok(json!({"project_id": project.id, "error": "state_dir", "at": time}));
    }
    let repo = match pgit::find(path)? {
        Found::Repo(r) => r,
        Found::InsideOther(root) => {
            return Ok(
                json!({"project_id": project.id, "error": "not_a_repo", "inside": root, "at": time}),
            );
        }
        Found::NoRepo if project.auto_commit => Box::new(pgit::init_with_baseline(path, time)?),
        Found::NoRepo => {
            return Ok(json!({"project_id": project.id, "error": "not_a_repo", "at": time}));
        }
    };
    // What an agent commit killed midway left (git's index.lock) is
    // finished or undone first, so that the baseline is the tree as git
    // will see it: only where agent commits are made, whose lock the caller
    // holds (`Ctx::lock_project_and_session`).
    if project.auto_commit {
        repo.recover_index_locks(false);
    }
    let (head, branch) = repo.head()?;
    let dirty = repo.dirty()?;
    let mut baseline = json!({
        "project_id": project.id, "path": path, "head": head.map(|h| h.to_string()),
        "branch": branch, "dirty": dirty.paths, "at": time,
    });
    if !dirty.not_utf8.is_empty() {
        baseline["dirty_not_utf8"] = json!(dirty.not_utf8);
    }
    Ok(baseline)
}

/// The skip reason when the agent's changes hold a file name that is not
/// UTF-8.
pub const NOT_UTF8: &str = "path_not_utf8";

/// The agent commit a turn will make, or why not.
pub enum Decision {
    Commit {
        repo: Box<pgit::UserRepo>,
        paths: Vec<String>,
    },
    Skip(&'static str),
}

/// Decide from the baseline and the tree now: commit the changed paths (only
/// the declared ones when given) if none of them was dirty at the baseline.
pub fn decide(
    project: &Project,
    baseline: Option<&Value>,
    declared: &[String],
) -> Result<Decision> {
    let Some(b) = baseline else {
        return Ok(Decision::Skip("no_baseline"));
    };
    if let Some(e) = b.get("error").and_then(Value::as_str) {
        return Ok(Decision::Skip(match e {
            "path_missing" => "path_missing",
            "state_dir" => "state_dir",
            _ => "not_a_repo",
        }));
    }
    let Some(path) = project.path.as_deref() else {
        return Ok(Decision::Skip("path_missing"));
    };
    let repo = match pgit::find(path)? {
        Found::Repo(r) => r,
        _ => return Ok(Decision::Skip("not_a_repo")),
    };
    let (_, branch) = repo.head()?;
    if branch.is_none() {
        return Ok(Decision::Skip("detached_head"));
    }
    if repo.operation_in_progress() {
        return Ok(Decision::Skip("merge_in_progress"));
    }
    // An agent commit killed midway (the caller holds the project's lock):
    // finished or undone before the tree is compared with HEAD.
    repo.recover_index_locks(false);
    let listed = |key: &str| -> BTreeSet<String> {
        b.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let before = listed("dirty");
    let now = repo.dirty()?;
    let paths: Vec<String> = if declared.is_empty() {
        if !before.is_empty() || !listed("dirty_not_utf8").is_empty() {
            return Ok(Decision::Skip("dirty_tree"));
        }
        // A change under a name that is not UTF-8 cannot be committed here:
        // a commit without it would not be the turn's changes.
        if !now.not_utf8.is_empty() {
            return Ok(Decision::Skip(NOT_UTF8));
        }
        now.paths.into_iter().collect()
    } else {
        if declared.iter().any(|d| before.contains(d)) {
            return Ok(Decision::Skip("dirty_tree"));
        }
        declared
            .iter()
            .filter(|d| now.paths.contains(*d))
            .cloned()
            .collect()
    };
    if paths.is_empty() {
        return Ok(Decision::Skip("no_changes"));
    }
    Ok(Decision::Commit { repo, paths })
}

/// A declared path, relative to the project root; refuses paths outside it.
pub fn project_relative(root: &Path, p: &str) -> Result<String> {
    let path = Path::new(p);
    let rel = if path.is_absolute() {
        path.strip_prefix(root)
            .map_err(|_| outside(p))?
            .to_path_buf()
    } else {
        path.to_path_buf()
    };
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            std::path::Component::CurDir => {}
            _ => return Err(outside(p)),
        }
    }
    if parts.is_empty() || parts[0] == ".git" {
        return Err(outside(p));
    }
    Ok(parts.join("/"))
}

fn outside(p: &str) -> Error {
    Usage::ProjectPath {
        path: p.to_string(),
    }
    .into()
}

/// Record `value` as `metadata.project_commit` of the node `entry` (an
/// atomic rewrite of its file; the catalog stays current).
pub fn stamp(sd: &SessionDir, entry: &history::Entry, value: Value) -> Result<()> {
    let path = sd.history().join(&entry.file);
    let mut node: Node = history::read_node(&sd.history(), entry)?;
    node.metadata.insert("project_commit".into(), value);
    history::rewrite(sd, entry, &node.to_json())?;
    let _ = path;
    Ok(())
}

/// The latest assistant node of the session (the turn's reply).
pub fn reply_node(sd: &SessionDir) -> Result<Option<history::Entry>> {
    Ok(Catalog::load(sd)?.latest("al"))
}
