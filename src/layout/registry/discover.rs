//! The session directories the registries can name: the default place,
//! bound projects' places and `locations.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::Result;
use crate::layout::paths::StateDir;

use super::read_locations;

/// Every valid session directory (the directory exists and holds a parsable
/// `meta.json`): the default place, bound projects' places, `locations.json`.
pub fn discover(state: &StateDir) -> Result<Vec<(String, PathBuf)>> {
    Ok(candidates(state)?
        .into_iter()
        .filter(|(_, p)| {
            crate::layout::atomic::read(p.join("meta.json"))
                .ok()
                .is_some_and(|b| crate::layout::schema::Meta::parse(&b).is_ok())
        })
        .collect())
}

/// [`discover`] without parsing each meta.json: the directories with a
/// valid id and a `meta.json` file.
pub fn candidates(state: &StateDir) -> Result<Vec<(String, PathBuf)>> {
    let mut found = BTreeMap::new();
    let mut scan = |dir: PathBuf| {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return;
        };
        for de in rd.flatten() {
            let name = de.file_name().to_string_lossy().into_owned();
            if crate::layout::ids::session_id(&name).is_err() {
                continue;
            }
            let path = de.path();
            if path.join("meta.json").is_file() {
                found.entry(name).or_insert(path);
            }
        }
    };
    state.session_parents().into_iter().for_each(&mut scan);
    for (id, path) in read_locations(state)? {
        let path = PathBuf::from(path);
        if path.join("meta.json").is_file() {
            found.entry(id).or_insert(path);
        }
    }
    Ok(found.into_iter().collect())
}
