//! `sessions/.migration/journal.json` (SPEC §5.15): which legacy sessions
//! are being migrated, and the last step each one finished. Written by
//! `migrate`; read by `list`, `gc-shells`, `verify` and `project bind`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};

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

pub fn read_journal(state: &StateDir) -> Result<Journal> {
    match crate::layout::atomic::read(journal_path(state)) {
        Ok(b) => serde_json::from_slice(&b)
            .map_err(|e| Error::corrupt(journal_path(state), e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Journal::default()),
        Err(e) => Err(e).io("read", journal_path(state)),
    }
}

/// Sessions being migrated, and the projects they belong to.
/// Read loosely: a journal that does not parse as a whole still protects
/// the sessions it names (safer for gc and bindings than ignoring it).
pub fn migrating(state: &StateDir) -> (Vec<String>, Vec<String>) {
    if let Ok(j) = read_journal(state) {
        return (
            j.sessions.keys().cloned().collect(),
            j.sessions.values().map(|e| e.project_id.clone()).collect(),
        );
    }
    let loose = crate::layout::atomic::read(journal_path(state))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
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
    (ids, projects)
}
