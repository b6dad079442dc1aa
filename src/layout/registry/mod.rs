//! The registries of SPEC §3 in `sessions/`: `index.json` (a cache of list
//! rows), its append-only journal, and `locations.json`.
//!
//! Appends must not rewrite a large index per node, so a writer that changes
//! one session appends its fresh row to `index.journal` (one JSON line, under
//! a shared `flock` on the journal, `O_APPEND`); the next registry writer folds
//! the journal into `index.json` under the registry lock plus an exclusive
//! journal lock, then empties it. A torn last line (kill -9 mid-write) is
//! skipped; everything in a row can be rebuilt from `meta.json`.
//!
//! One file a concern; every name is still `layout::registry::…`:
//!
//! - `index.rs`: `index.json` read (as a file, or with the journal folded
//!   in) and written, and its rows rebuilt from `meta.json`;
//! - `journal.rs`: appending to the journal, applying its lines, what
//!   changed since a reader's [`Mark`], and the folds this process owes;
//! - `fold.rs`: the journal folded into `index.json` under the locks
//!   (whole, or spliced row by row), [`fold_owed`] and [`fold_if_large`];
//! - `locations.rs`: `locations.json`;
//! - `discover.rs`: the session directories the registries can name;
//! - `field.rs` and `list.rs`: the index as `list` reads it ([`Field`],
//!   [`ListRow`], [`load_list`]).
//!
//! Here: the row and index types, and the sweep of registry writes' temps.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::paths::StateDir;

mod discover;
mod field;
mod fold;
mod index;
mod journal;
mod list;
mod locations;

pub use discover::{candidates, discover};
pub use field::Field;
pub use fold::{FOLD_THRESHOLD, fold, fold_if_large, fold_owed, folds_owed, update_index};
pub use index::{
    fresh_row, latest_preview, load_index, load_index_as_file_and_folded, put_row, rebuild,
    rebuild_index, stale_rows,
};
pub use journal::{
    Change, Mark, changes_since, journal_append, journal_append_lagging, journal_len, owe_fold,
};
pub use list::{ListRow, ListText, load_list};
pub use locations::{read_locations, remove_locations, set_locations, set_locations_locked};

use index::{read_index_bytes, read_index_file, write_index};
use journal::{JOURNALED_AT, applies, apply_journal, index_written_at, journal_rows, owed};

pub type Row = Map<String, Value>;
pub type Index = BTreeMap<String, Row>;

/// Remove the temp files a registry write killed midway left (`index.json`,
/// `locations.json`, `projects.json` are written under the registry lock,
/// which the caller holds: no such temp is another writer's at work).
pub fn sweep_temps(state: &StateDir) {
    let registries = [
        (
            state.sessions(),
            ["index.json", "locations.json"].as_slice(),
        ),
        (state.root.join("projects"), ["projects.json"].as_slice()),
    ];
    for (dir, names) in registries {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = name.strip_prefix(super::TEMP_PREFIX).is_some_and(|rest| {
                names
                    .iter()
                    .any(|n| rest.strip_prefix(n).is_some_and(|tag| tag.starts_with('.')))
            });
            if ours && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}
