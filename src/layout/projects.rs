//! `projects/projects.json` (SPEC §3): the project registry, an object keyed
//! by project id. Each value is an open object (unknown keys survive):
//! `id name path is_default session_ids status created_at auto_commit` (and
//! `hooks`). Written atomically under the registry lock, pretty-printed as
//! the Python store writes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};

use super::lock::{self, LockOptions};
use super::{StateDir, atomic};

pub type Projects = BTreeMap<String, Map<String, Value>>;

pub fn read(state: &StateDir) -> Result<Projects> {
    let path = state.projects_json();
    let bytes = match atomic::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Projects::new()),
        Err(e) => return Err(e).io("read", path),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => Ok(m
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::Object(p) => Some((k, p)),
                _ => None,
            })
            .collect()),
        _ => Err(Error::corrupt(&path, "projects.json does not parse")),
    }
}

fn write(state: &StateDir, projects: &Projects) -> Result<()> {
    let path = state.projects_json();
    std::fs::create_dir_all(path.parent().expect("projects/ has a parent")).io("create", &path)?;
    let mut bytes = serde_json::to_vec_pretty(projects).expect("an object serializes");
    bytes.push(b'\n');
    atomic::write(&path, &bytes)
}

/// Read-modify-write under the registry lock.
pub fn update<T>(
    state: &StateDir,
    locks: LockOptions,
    edit: impl FnOnce(&mut Projects) -> Result<T>,
) -> Result<T> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, locks)?;
    let mut projects = read(state)?;
    let out = edit(&mut projects)?;
    write(state, &projects)?;
    Ok(out)
}

/// `proj_` + the first 8 hex digits of SHA-1 of the canonical path (more
/// digits if that collides with another path's project).
pub fn id_for(path: &Path, projects: &Projects) -> String {
    let hex = crate::git::sha1_hex(path.as_os_str().as_encoded_bytes());
    for len in [8, 12, 16, 40] {
        let id = format!("proj_{}", &hex[..len]);
        match projects.get(&id) {
            Some(p) if p.get("path").and_then(Value::as_str) != Some(&*path.to_string_lossy()) => {
                continue;
            }
            _ => return id,
        }
    }
    format!("proj_{hex}")
}

/// A project's fields, read.
#[derive(Debug, Clone)]
pub struct Project {
    pub id: String,
    pub name: String,
    pub path: Option<PathBuf>,
    pub auto_commit: bool,
    pub hooks: bool,
    pub status: String,
    pub session_ids: Vec<String>,
}

impl Project {
    pub fn from(id: &str, p: &Map<String, Value>) -> Project {
        Project {
            id: id.to_string(),
            name: p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or(id)
                .to_string(),
            // Only an absolute path names the project's directory: a
            // relative one (`.`, hand-edited or from a peer) would name
            // wherever a command runs, and its agent commits land there.
            path: p
                .get("path")
                .and_then(Value::as_str)
                .filter(|s| Path::new(s).is_absolute())
                .map(PathBuf::from),
            auto_commit: p
                .get("auto_commit")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            hooks: p.get("hooks").and_then(Value::as_bool).unwrap_or(false),
            status: p
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("active")
                .to_string(),
            session_ids: p
                .get("session_ids")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The directory is gone (the project moved): relocate it first.
    pub fn path_missing(&self) -> bool {
        self.id != "default" && !self.path.as_deref().is_some_and(Path::is_dir)
    }
}

/// Find a project by id, name or path.
pub fn find(projects: &Projects, key: &str) -> Option<Project> {
    if let Some(p) = projects.get(key) {
        return Some(Project::from(key, p));
    }
    let canon = std::fs::canonicalize(key).ok();
    projects
        .iter()
        .map(|(id, p)| Project::from(id, p))
        .find(|p| p.name == key || (canon.is_some() && p.path.as_deref() == canon.as_deref()))
}

/// The project a session is bound to, by the reverse index.
pub fn of_session(projects: &Projects, session: &str) -> Option<Project> {
    projects
        .iter()
        .map(|(id, p)| Project::from(id, p))
        .find(|p| p.session_ids.iter().any(|s| s == session))
}
