//! `sessions/.migration/journal.json` (SPEC §5.15): which legacy sessions
//! are being migrated, and the last step each one finished. Written by
//! `migrate`; read by `list`, `gc-shells`, `verify` and `project bind`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

use super::StateDir;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub project_id: String,
    pub source: PathBuf,
    pub target: PathBuf,
    pub step: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Journal {
    pub sessions: BTreeMap<String, Entry>,
}

pub fn journal_path(state: &StateDir) -> PathBuf {
    state.sessions().join(".migration").join("journal.json")
}

/// The journal's bytes (`None`: no migration under way), never read through
/// a link or from a special file, as its directory is never written through
/// one.
fn journal_bytes(state: &StateDir) -> Result<Option<Vec<u8>>> {
    super::atomic::read_if_present(&journal_path(state))
}

pub fn read_journal(state: &StateDir) -> Result<Journal> {
    match journal_bytes(state)? {
        Some(b) => serde_json::from_slice(&b)
            .map_err(|e| Error::corrupt(journal_path(state), e.to_string())),
        None => Ok(Journal::default()),
    }
}

/// Sessions being migrated, and the projects they belong to.
/// Read loosely: a journal that does not parse as a whole still protects
/// the sessions it names (safer for gc and bindings than ignoring it). One
/// that cannot be read at all (a link, a special file) is an error: what
/// it protects is unknown.
pub fn migrating(state: &StateDir) -> Result<(Vec<String>, Vec<String>)> {
    let Some(bytes) = journal_bytes(state)? else {
        return Ok(Default::default());
    };
    if let Ok(j) = serde_json::from_slice::<Journal>(&bytes) {
        return Ok((
            j.sessions.keys().cloned().collect(),
            j.sessions.values().map(|e| e.project_id.clone()).collect(),
        ));
    }
    let loose = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
    let sessions = loose
        .as_ref()
        .and_then(|v| v.get("sessions"))
        .and_then(|v| v.as_object());
    let ids = sessions
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let projects = sessions
        .map(|m| {
            m.values()
                .filter_map(|e| {
                    e.get("project_id")
                        .and_then(|p| p.as_str())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((ids, projects))
}
