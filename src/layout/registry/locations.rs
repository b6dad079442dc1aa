//! `locations.json`: where sessions live that are not at `sessions/<id>/`
//! (session id → absolute repo path), read, recorded and dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::error::{IoContext, Result};
use crate::layout::atomic;
use crate::layout::lock::{self, LockOptions};
use crate::layout::paths::StateDir;

/// `locations.json`: session id → absolute repo path. Missing or unparsable
/// reads as empty (like the Python store); `verify` reports a bad file.
pub fn read_locations(state: &StateDir) -> Result<BTreeMap<String, String>> {
    let path = state.locations_json();
    let bytes = match atomic::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(e).io("read", path),
    };
    let map = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => m
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k, s)),
                _ => None,
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    Ok(map)
}

/// Record where sessions live that are not at `sessions/<id>/` (SPEC §3:
/// that is how the Python store finds them): `(id, absolute repo path)`.
pub fn set_locations(
    state: &StateDir,
    entries: &[(String, PathBuf)],
    opts: LockOptions,
) -> Result<()> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts)?;
    set_locations_locked(state, entries)
}

/// [`set_locations`] for a caller that holds the registry lock.
pub fn set_locations_locked(state: &StateDir, entries: &[(String, PathBuf)]) -> Result<()> {
    let path = state.locations_json();
    let mut map: Map<String, Value> = match crate::layout::atomic::read(&path) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
        Err(_) => Map::new(),
    };
    let mut changed = false;
    for (id, dir) in entries {
        let v = Value::String(dir.to_string_lossy().into_owned());
        if map.get(id) != Some(&v) {
            map.insert(id.clone(), v);
            changed = true;
        }
    }
    if !changed {
        return Ok(());
    }
    let mut bytes = serde_json::to_vec_pretty(&map).expect("a map always serializes");
    bytes.push(b'\n');
    atomic::write_with_mode(&path, &bytes, 0o600)
}

/// Drop entries from `locations.json`.
pub fn remove_locations(state: &StateDir, ids: &[String], opts: LockOptions) -> Result<()> {
    state.ensure()?;
    let _registry = lock::acquire(&state.registry_lock(), lock::Kind::Exclusive, opts)?;
    let path = state.locations_json();
    let mut map: Map<String, Value> = match crate::layout::atomic::read(&path) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(Value::Object(m)) => m,
            _ => return Ok(()),
        },
        Err(_) => return Ok(()),
    };
    for id in ids {
        map.remove(id);
    }
    let mut bytes = serde_json::to_vec_pretty(&map).expect("a map always serializes");
    bytes.push(b'\n');
    atomic::write_with_mode(&path, &bytes, 0o600)
}
