//! Verify (SPEC §5.14): the DAG files and their git mirror agree.
//!
//! The model of what is mirrored (SPEC §2.3, `git-session-verify(1)`):
//! node files are immutable records, so a committed node must be
//! byte-identical to the commit that holds it, and every node must be held
//! by a commit that a branch (or HEAD) reaches; `meta.json` and the other
//! files of the session are mutable, and what changed since the last turn is
//! committed with the next one, so they are checked for sense (meta.json
//! parses, names the session, its head resolves), never against HEAD.
//!
//! Each check yields findings with a stable code ([`KINDS`]) and the way out;
//! `SessionCheck` carries what `verify --fix` needs to repair them.
//!
//! The files:
//!
//! - `mod.rs`: the entry points ([`check_session`], and the re-exports of
//!   the others below) and what a session check yields ([`SessionCheck`]).
//! - `session.rs`: one session's files and DAG: its links, meta.json,
//!   history/'s names and payloads, seqs and ids, predecessors and callers,
//!   attachments, temp files.
//! - `mirror.rs`: the session's git mirror against its files: the commits
//!   the branches reach, their trees and trailers, committed nodes and
//!   meta.json's committed copy, uncommitted nodes, stale git locks, the
//!   figures.
//! - `index.rs`: the git index against the commit it is to mirror, and the
//!   files the next turn will commit.
//! - `objects.rs`: git objects missing or damaged (and `--objects`), and
//!   which of them a file of the session can store again.
//! - `lost.rs`: turns that only commits no branch reaches hold, and the ref
//!   that gets each back.
//! - `state.rs`: the state dir as a whole (`--all`): the registries
//!   (index.json, locations.json, projects.json), invalid directories,
//!   leftovers, the hook log, push queues.
//! - `repair.rs`: the repairs of `verify --fix`, of a session and of the
//!   state dir.
//! - `kinds.rs`: every finding's code, meaning, fix and repair (the man
//!   page's table).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::backfill::Target;
use crate::error::Result;
use crate::git::Oid;
use crate::layout::SessionDir;
use crate::layout::lock::{self, LockOptions};

mod index;
mod kinds;
mod lost;
mod mirror;
mod objects;
mod repair;
mod session;
mod state;
pub use kinds::{KINDS, Kind, kinds_help};
pub use objects::blob_in_file;
pub use repair::{repair_session, repair_state};
pub use state::{
    binding_fixes, check_state, dangling_locations, missing_locations, project_index_locks,
};

/// Whether a finding makes `verify` exit 1.
pub use crate::out::records::{BranchStats, Finding, Severity, Stats};

/// A committed file to bring back from git (its damaged bytes quarantined).
#[derive(Debug, Clone)]
pub struct Restore {
    /// The path relative to the session directory.
    pub rel: String,
    pub blob: Oid,
}

/// A commit no branch reaches that holds turns, and the ref that gets it back.
#[derive(Debug, Clone)]
pub struct LostTip {
    pub commit: Oid,
    pub branch: String,
    /// The branch's tip now (`None`: the branch is created); the lost
    /// commit descends from it, so the branch fast-forwards.
    pub old: Option<Oid>,
}

/// The figures a CI job compares, per branch.
/// What a session check learned besides its findings (for `--fix`).
#[derive(Debug, Default)]
pub struct SessionCheck {
    pub findings: Vec<Finding>,
    /// Nodes not in git, or no repository: a backfill commits them.
    pub needs_commit: bool,
    /// An uncommitted node does not parse: a backfill would refuse.
    pub commit_blocked: bool,
    /// Committed files to restore from git.
    pub restore: Vec<Restore>,
    /// The other way: blobs missing from git, or damaged in a loose file,
    /// whose file in the session still holds their bytes, to be stored
    /// again from it (the damaged file quarantined).
    pub rewrite: Vec<Restore>,
    /// Branches to recreate or fast-forward.
    pub lost: Vec<LostTip>,
    /// The git index is to be rebuilt from this commit's tree.
    pub index_from: Option<Oid>,
    /// Committed nodes whose metadata was stamped after their turn.
    pub restamped: bool,
    /// Node files named both ways: `verify --fix` renames them all to the
    /// Python store's naming.
    pub mixed_names: bool,
    pub stray_temps: Vec<PathBuf>,
    /// The catalog cache names other files than `history/` holds.
    pub catalog_stale: bool,
    /// Stale locks of ours (or ref locks) in the session's `.git`.
    pub needs_lock_cleanup: bool,
    pub stats: Stats,
}

impl SessionCheck {
    /// Findings that make `verify` exit 1.
    pub fn problems(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Problem)
            .count()
    }
}

/// A session check under way: the session, its findings so far, and what
/// the checks learned that later ones need.
struct Checker<'a> {
    id: &'a str,
    out: SessionCheck,
    /// meta.json says a turn is open (`status: running`).
    turn_open: bool,
    /// Node files that are one node under both namings, the same bytes (a
    /// rename to one naming cut short, which `verify --fix` finishes):
    /// neither a duplicate nor a node to commit.
    twins: HashSet<String>,
}

impl Checker<'_> {
    fn add(
        &mut self,
        kind: &'static str,
        path: &Path,
        message: String,
        fix: String,
        fixable: bool,
    ) {
        self.push(kind, Severity::Problem, path, message, fix, fixable);
    }

    fn push(
        &mut self,
        kind: &'static str,
        severity: Severity,
        path: &Path,
        message: String,
        fix: String,
        fixable: bool,
    ) {
        debug_assert!(KINDS.iter().any(|k| k.code == kind), "undocumented {kind}");
        self.out.findings.push(Finding {
            session: Some(self.id.to_string()),
            kind,
            severity,
            path: path.to_path_buf(),
            message,
            fix,
            fixable,
        });
    }
}

/// Check one session; with `objects`, also read every object its branches
/// reach and check it against its id ([`corrupt_objects`](objects::corrupt_objects)).
pub fn check_session(id: &str, sd: &SessionDir, objects: bool) -> SessionCheck {
    let mut c = Checker {
        id,
        out: SessionCheck::default(),
        turn_open: false,
        twins: HashSet::new(),
    };
    let Some(read) = session::check_files(&mut c, sd) else {
        return c.out;
    };
    mirror::check_repository(&mut c, sd, &read, objects);
    c.out
}

/// [`check_session`] under the session's shared lock (taken when the
/// session has a `.git` directory).
pub fn check_session_locked(t: &Target, locks: LockOptions, objects: bool) -> Result<SessionCheck> {
    // Not through a link (`check_session` reports it, reading
    // nothing through it).
    let git_dir = std::fs::symlink_metadata(t.dir.git_dir());
    let linked = std::fs::symlink_metadata(&t.dir.dir).is_ok_and(|m| m.is_symlink());
    let _l = if !linked && git_dir.is_ok_and(|m| m.is_dir()) {
        Some(lock::session(&t.dir, lock::Kind::Shared, locks)?)
    } else {
        None
    };
    Ok(check_session(&t.id, &t.dir, objects))
}
