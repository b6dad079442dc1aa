//! `<state>/sync/remotes.json`: the remotes `push` and `fetch` use, an
//! object keyed by name, `{"url": …}` each (an open object: unknown keys
//! survive). Written atomically under the sync lock.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::SyncError;
use crate::error::{Error, IoContext, Result, Usage};
use crate::layout::lock::{self, LockOptions};
use crate::layout::{StateDir, atomic};

pub type Remotes = BTreeMap<String, Map<String, Value>>;

/// The URL of a remote's row.
pub fn url(row: &Map<String, Value>) -> Option<&str> {
    row.get("url").and_then(Value::as_str)
}

pub fn read(state: &StateDir) -> Result<Remotes> {
    let path = state.remotes_json();
    let Some(bytes) = atomic::read_if_present(&path)? else {
        return Ok(Remotes::new());
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => Ok(m
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::Object(r) if url(&r).is_some() => Some((k, r)),
                _ => None,
            })
            .collect()),
        _ => Err(Error::corrupt(&path, "remotes.json does not parse")),
    }
}

/// Create `<state>/sync/` (never through a link) and take the sync lock.
pub fn lock(state: &StateDir, locks: LockOptions) -> Result<lock::Lock> {
    state.ensure()?;
    let dir = state.sync_dir();
    atomic::refuse_unsafe(&dir)?;
    std::fs::create_dir_all(&dir).io("create", &dir)?;
    atomic::refuse_unsafe(&state.sync_lock())?;
    lock::acquire(&state.sync_lock(), lock::Kind::Exclusive, locks)
}

/// Read-modify-write under the sync lock.
pub fn update<T>(
    state: &StateDir,
    locks: LockOptions,
    edit: impl FnOnce(&mut Remotes) -> Result<T>,
) -> Result<T> {
    let _sync = lock(state, locks)?;
    let mut remotes = read(state)?;
    let out = edit(&mut remotes)?;
    let mut bytes = serde_json::to_vec_pretty(&remotes).expect("an object serializes");
    bytes.push(b'\n');
    atomic::write(&state.remotes_json(), &bytes)?;
    Ok(out)
}

/// A remote's name: 1-64 characters of `[A-Za-z0-9._-]`, not starting with
/// `.` or `-` (it names a file and refs).
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['.', '-'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Usage::RemoteName {
            name: name.to_string(),
        }
        .into())
    }
}

/// A URL git may be given: not an option, one line, and not the `ext::`
/// transport (which runs a command named in the URL).
pub fn check_url(url: &str) -> Result<()> {
    let bad = |why: &'static str| {
        Err(Usage::RemoteUrl {
            url: url.to_string(),
            why,
        }
        .into())
    };
    if url.is_empty() {
        return bad("it is empty");
    }
    if url.starts_with('-') {
        return bad("it starts with `-`");
    }
    if url.contains(['\n', '\r', '\0']) {
        return bad("it holds a line break");
    }
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("ext::") {
        return bad("the `ext::` transport runs a command and is refused");
    }
    if lower.starts_with("fd::") {
        return bad(
            "the `fd::` transport talks over file descriptors its caller hands it, \
             and git-session has none to hand: git would wait for good",
        );
    }
    Ok(())
}

/// The directory `url` names when it is a local repository (a path, or
/// `file://`), as git tells them apart: `host:path` (a colon before any
/// slash) and `scheme://` name another host.
fn local_path(url: &str) -> Option<&str> {
    if let Some(p) = url.strip_prefix("file://") {
        return Some(p);
    }
    if url.contains("://") {
        return None;
    }
    match url.find(':') {
        Some(colon) if !url[..colon].contains('/') => None,
        _ => Some(url),
    }
}

/// `url` as a remote is stored: a relative path made absolute against the
/// current directory. (git runs in the transfer repository, where a
/// relative path would name another place: `../repo` is that repository
/// itself.)
pub fn absolute(url: &str) -> Result<String> {
    match local_path(url) {
        Some(p) if !url.starts_with("file://") && !std::path::Path::new(p).is_absolute() => {
            let abs = std::path::absolute(p).io("resolve the path", std::path::Path::new(p))?;
            abs.to_str()
                .map(str::to_string)
                .ok_or_else(|| Usage::RemotePathNotUtf8 { path: abs.clone() }.into())
        }
        _ => Ok(url.to_string()),
    }
}

/// Refuse a URL that names a directory inside the state dir (a session
/// repository, the transfer repository): a push there would write refs
/// into the layout. A relative path is refused too: what it names depends
/// on where git runs (see [`absolute`], which `remote add` applies).
pub fn check_not_ours(state: &StateDir, url: &str) -> Result<()> {
    let Some(path) = local_path(url).map(std::path::PathBuf::from) else {
        return Ok(());
    };
    if !path.is_absolute() {
        return Err(SyncError::RelativeRemoteUrl {
            url: url.to_string(),
        }
        .into());
    }
    let canon = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (root, path) = (canon(&state.root), canon(&path));
    if path.starts_with(&root) || root.starts_with(&path) {
        return Err(SyncError::RemoteInStateDir {
            url: url.to_string(),
            state: state.root.clone(),
        }
        .into());
    }
    Ok(())
}

/// The remote to use: the one named, else the only one, else `origin`.
pub fn resolve(state: &StateDir, name: Option<&str>) -> Result<(String, String)> {
    let remotes = read(state)?;
    let pick = match name {
        Some(n) => remotes.get_key_value(n),
        None if remotes.len() == 1 => remotes.iter().next(),
        None => remotes.get_key_value("origin"),
    };
    match pick {
        Some((n, row)) => {
            let url = url(row).expect("read keeps rows with a url");
            // remotes.json is a file anyone may have edited: a URL there is
            // checked as `remote add` checks one (an option such as
            // `--upload-pack=<command>` would run a command).
            check_url(url).map_err(|e| SyncError::RemoteUrl {
                name: n.clone(),
                why: e.to_string(),
            })?;
            check_not_ours(state, url)?;
            Ok((n.clone(), url.into()))
        }
        None => {
            let known: Vec<&str> = remotes.keys().map(String::as_str).collect();
            Err(SyncError::NoRemote {
                message: match name {
                    Some(n) => format!("no remote `{n}`"),
                    None if known.is_empty() => "no remote is configured".to_string(),
                    None => format!(
                        "several remotes and none is `origin` ({}): name one",
                        known.join(", ")
                    ),
                },
                help: if known.is_empty() {
                    "add one: `git-session remote add origin URL`".into()
                } else {
                    format!("remotes: {}", known.join(", "))
                },
            }
            .into())
        }
    }
}
