//! Bring a session's git mirror up to date with its files (SPEC §2.3): every
//! node not yet in git is committed, turn by turn, in seq order, with the
//! parent/branch rule of the DAG. Used by `commit-turn` (and by `backfill`,
//! `verify --fix`).
//!
//! The work grows with what changed, not with the session: `history/` is
//! compared with the index by name (one `readdir`, nodes are immutable), other
//! files by `lstat` against the index's stat data, and only new or changed
//! files are read and hashed. The flat `history/` tree itself is rewritten per
//! commit, as the layout requires.
//!
//! A run is [`scan`] (the directory against the index), [`recover`] (an
//! index a crash left behind), [`plan`] (which commits, pure) and [`apply`]
//! (the writes). [`lookup`] answers the read layer: which commit holds a
//! node.

mod apply;
mod commits;
mod lookup;
mod plan;
mod recover;
mod scan;

pub use apply::commit_pending;
pub use lookup::{commit_holding, commit_of_seq, holders_of};

use crate::error::Result;
use crate::layout::SessionDir;

/// Options of one mirror run.
#[derive(Debug, Clone, Default)]
pub struct CommitOptions {
    /// `--message`: replaces the subject text of the last turn.
    pub message: Option<String>,
    pub duration: Option<f64>,
    pub tokens: Option<u64>,
    pub failed: bool,
    /// Time of a commit that holds no node (a metadata-only change).
    pub now: f64,
    /// Plan only: return the turns that would be committed (without commit
    /// ids) and write nothing.
    pub dry_run: bool,
    /// Also compare committed node files by stat and content (node files are
    /// immutable by contract, so a turn does not; `verify --fix` does).
    pub rescan: bool,
    /// Write the objects as packs, not loose files (backfill: many commits).
    pub bulk: bool,
    /// Committed node files rewritten on purpose (a stamp): re-hash them.
    pub modified: Vec<String>,
    /// Read `history/` from the directory, not trusting the catalog cache
    /// ([`crate::layout::history::Catalog::load_listed`]): a repair must see
    /// what another program wrote in the instant of an append.
    pub list_history: bool,
    /// Each top-level record node a commit of its own
    /// ([`crate::session::records_alone`]; `import`).
    pub records_alone: bool,
}

/// One commit made.
pub type Made = crate::out::records::Commit;

/// Turns between two background roll-ups of the turns' loose objects.
const ROLL_UP_EVERY: u64 = 10;
/// Turns between two background `git gc` runs.
const GC_EVERY: u64 = 200;

/// Start background packing when due (SPEC §2.3, `git::maintenance_args`),
/// `committed` being the commits just made: every 10 turns a roll-up of the
/// small packs, every 200 a `git gc`. The snapshot counts the turns since
/// the last `git gc`. Returns `None` when not due (or the previous run is
/// still going), `Some(started)` when due: `false` when there is no git.
pub fn maintain_if_due(sd: &SessionDir, committed: u64) -> Result<Option<bool>> {
    use crate::git::{Maintenance, Spawned};
    let mut snap = sd.read_snapshot();
    let after = snap.turns;
    let before = after.saturating_sub(committed);
    let kind = if after >= GC_EVERY {
        Maintenance::Full
    } else if before / ROLL_UP_EVERY != after / ROLL_UP_EVERY {
        Maintenance::RollUp
    } else {
        return Ok(None);
    };
    // A busy `git gc` is tried again at the next turn.
    let spawned = crate::git::spawn_maintenance(&sd.dir, kind);
    if kind == Maintenance::Full && spawned != Spawned::Busy {
        snap.turns = 0;
        sd.write_snapshot(&snap)?;
    }
    Ok(match spawned {
        Spawned::Started => Some(true),
        Spawned::NoGit => Some(false),
        Spawned::Busy => None,
    })
}
