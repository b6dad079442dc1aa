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
mod error;
mod lookup;
mod plan;
mod recover;
pub mod rename;
mod scan;

pub use apply::commit_pending;
pub use error::{MirrorError, RenameError};
pub use lookup::{commit_holding, commit_of_seq, holders_of, tips_of_branches};

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
    /// ([`crate::session::records_alone`]).
    pub records_alone: bool,
    /// meta.json as it stood after the node of each seq (`import`): a
    /// commit whose last node has one commits that meta.json, so that each
    /// commit is the same however many runs wrote its nodes.
    pub metas: Vec<(u64, Vec<u8>)>,
    /// Seqs of nodes that start a commit even where the turn goes on
    /// (`import`: what follows a turn's end record).
    pub split_before: Vec<u64>,
    /// Files outside `history/` that the node of a seq names (`import`:
    /// the attachments of a node too big for one file), committed with
    /// that node, not with the run's last commit.
    pub attached: Vec<(u64, Vec<u8>)>,
    /// The last turn was cut off: `Status: interrupted`.
    pub interrupted: bool,
    /// No commit without a node (`import`: a commit's meta.json is the one
    /// its nodes left, never one of its own).
    pub nodes_only: bool,
}

/// One commit made.
pub type Made = crate::out::records::Commit;

/// Loose objects from which the turns' objects are rolled up into a pack in
/// the background: about a hundred turns (a turn writes about seven); git's
/// own `gc --auto` waits for 6,700.
const ROLL_UP_OBJECTS: u64 = 700;
/// Bytes of loose objects from which they are rolled up: a large session
/// writes its history tree whole each turn (850 KB at 15,000 nodes), which
/// turns write uncompressed.
const ROLL_UP_BYTES: u64 = 16 << 20;
/// Turns between two background `git gc` runs, which expire what crashed
/// turns left unreachable (roll-ups keep the packs few): each one
/// repacks the whole session.
const GC_EVERY: u64 = 1000;

/// Start background packing when due (SPEC §2.3, `git::maintenance_args`):
/// a roll-up of the turns' loose objects once they pile up
/// (`ROLL_UP_OBJECTS` or `ROLL_UP_BYTES`, counted in the snapshot), a `git
/// gc` every 1,000 turns. A due run that is skipped because the previous one
/// is still going is tried again at the next turn. Each run costs a git
/// process or two whatever it packs, which at every 10 turns was as much
/// CPU as the turns themselves (`bench/batch.py` reports it). Returns
/// `None` when not due (or busy), `Some(started)` when due: `false` when
/// there is no git.
pub fn maintain_if_due(sd: &SessionDir) -> Result<Option<bool>> {
    use crate::git::{Maintenance, Spawned};
    let mut snap = sd.read_snapshot();
    let kind = if snap.turns >= GC_EVERY {
        Maintenance::Full
    } else if snap.new_objects >= ROLL_UP_OBJECTS || snap.loose_bytes >= ROLL_UP_BYTES {
        Maintenance::RollUp
    } else {
        return Ok(None);
    };
    let spawned = crate::git::spawn_maintenance(&sd.dir, kind);
    if spawned == Spawned::Busy {
        return Ok(None);
    }
    if kind == Maintenance::Full {
        snap.turns = 0;
    }
    snap.new_objects = 0;
    snap.loose_bytes = 0;
    sd.write_snapshot(&snap)?;
    Ok(Some(spawned == Spawned::Started))
}
