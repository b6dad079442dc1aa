//! Every git operation. Session repositories are read and written
//! in-process through gix (outside this module, only `secrets` names a gix
//! object type, to walk what it scans); the git CLI runs only where git
//! itself must: background packing, the transport, and a project commit
//! whose hooks must run. One concern per file:
//!
//! - [`repo`]: create and open a session repo, its own config, reads;
//! - [`objects`]: every object written, loose through gix's loose store or
//!   one pack through gix's pack writer in bulk mode, and their durability
//!   rule (one flush for a turn's objects);
//! - [`trees`]: trees from index entries (gix has no `write-tree`);
//! - [`index`]: the index, read by gix and written by an encoder of gix's
//!   format (gix's writer for anything else);
//! - [`index_lock`]: git's `index.lock`, taken as a hard link of a temp
//!   file of ours, in sessions and projects alike;
//! - [`refs`]: references, through gix's ref transactions;
//! - [`locks`]: the lock and temp files a dead process leaves, found in one
//!   scan (how old is stale: `layout::lock`);
//! - [`rewrite`]: history written again (`redact`);
//! - [`maintenance`]: background packing (`git repack`, `git gc`);
//! - [`project`]: a user's project repository;
//! - [`copy`]: objects of commits copied from one repository to another
//!   (`push` and `fetch`, through the transfer repository);
//! - [`transport`]: git run for `push`, `fetch` and `ls-remote`.

use gix::ObjectId;
use gix::refs::FullName;

pub mod copy;
pub mod index;
pub mod index_lock;
pub mod locks;
pub mod maintenance;
mod objects;
pub mod patch;
pub mod rewrite;
pub use objects::{Compressed, Compressor, STREAM_BLOB_BYTES};
pub mod project;
mod refs;
mod repo;
pub mod transport;
mod trees;

pub use copy::Objects;
pub use gix::ObjectId as Oid;
pub use index::{Index, IndexEntry, PendingIndex, Staged, index_lock_is_ours};
pub use locks::{FOREIGN_LOCK, LockFile, LockKind, STALE_LOCK, lock_files, stale_project_temps};
pub use maintenance::{
    Maintenance, Spawned, hold_maintenance, prune_unreachable, spawn_maintenance, untrusted_git,
};
pub use repo::{BadObject, SessionRepo, init_transfer_repo, write_pinned_config};

use crate::error::{Result, Usage};

pub const DEFAULT_NAME: &str = "OpenProgram";
pub const DEFAULT_EMAIL: &str = "openprogram@local";
pub const MAIN: &str = "main";

/// The last second git dates a commit with everywhere (9999-12-31T23:59:59Z).
pub const LAST_COMMIT_SECOND: i64 = 253_402_300_799;

/// The seconds a commit dated `time` (unix seconds, as a node's
/// `created_at`) is written with: within 1970 to 9999. A node's time is the
/// agent's or a transcript's word: before 1970 git's `fsck` refuses the
/// commit (`badDate`), and so does any remote that checks what it is sent,
/// so every later `push` of the session would fail; past 9999 git prints
/// no date. The node keeps its own time; only the commit's is held in range.
pub fn commit_seconds(time: f64) -> i64 {
    // `as` saturates, and takes NaN to 0.
    (time.floor() as i64).clamp(0, LAST_COMMIT_SECOND)
}

/// The retry branch named after node `id` (SPEC §2.3: `retry-<id>`). A
/// node id may hold what a ref name may not (`..`, a final `.` or `.lock`):
/// such an id is made safe (each run of dots one dot, final dots dropped, a
/// final `.lock` made `_lock`) and a tag of its SHA-1 appended, so that two
/// ids never share a branch and every machine names it alike.
pub fn retry_branch(id: &str) -> String {
    let plain = format!("retry-{id}");
    if valid_ref_name(&format!("refs/heads/{plain}")) {
        return plain;
    }
    let mut safe = String::with_capacity(id.len());
    for c in id.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            c
        } else {
            '_'
        };
        if !(c == '.' && safe.ends_with('.')) {
            safe.push(c);
        }
    }
    while safe.ends_with('.') {
        safe.pop();
    }
    if let Some(stem) = safe.strip_suffix(".lock") {
        safe = format!("{stem}_lock");
    }
    let tag = &sha1_hex(id.as_bytes())[..12];
    let named = format!("retry-{safe}-{tag}");
    if valid_ref_name(&format!("refs/heads/{named}")) {
        named
    } else {
        format!("retry-{tag}")
    }
}

/// The SHA-1 of `bytes` in hex (a project id is derived from its path's).
pub fn sha1_hex(bytes: &[u8]) -> String {
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(bytes);
    h.try_finalize().expect("sha1 of a buffer").to_string()
}

/// The id git gives `data` as a blob.
pub fn blob_id(data: &[u8]) -> ObjectId {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, data)
        .expect("sha1 hashing of a buffer cannot fail")
}

/// Where HEAD stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Short branch name when HEAD is attached (`main`, `retry-…`).
    pub branch: Option<String>,
    /// The commit HEAD resolves to (None while unborn).
    pub commit: Option<ObjectId>,
}

/// What a commit says, decoded.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    pub message: String,
    pub time: i64,
}

/// A reference move in one transaction.
#[derive(Debug, Clone)]
pub enum RefUpdate {
    /// Move branch `name` from `old` to `new` (compare-and-swap).
    Advance {
        branch: String,
        old: ObjectId,
        new: ObjectId,
        message: String,
    },
    /// Create branch `name` at `new`; it must not exist.
    Create {
        branch: String,
        new: ObjectId,
        message: String,
    },
    /// Point HEAD at branch `name` (symbolic).
    AttachHead { branch: String },
    /// Point HEAD at a commit (detached).
    DetachHead { commit: ObjectId },
    /// Set any reference (a full name, `refs/remotes/origin/main`) to `new`,
    /// if it holds what `expected` says.
    Set {
        name: String,
        expected: Expected,
        new: ObjectId,
        message: String,
    },
    /// Delete a reference (a full name) that holds `old`.
    Delete { name: String, old: ObjectId },
}

/// What a reference must hold for [`RefUpdate::Set`] to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    Any,
    Absent,
    Is(ObjectId),
}

fn full_name(name: &str) -> Result<FullName> {
    FullName::try_from(name.to_string()).map_err(|e| {
        Usage::RefName {
            name: name.to_string(),
            why: e.to_string(),
        }
        .into()
    })
}

/// Whether `name` is a valid full reference name.
pub fn valid_ref_name(name: &str) -> bool {
    FullName::try_from(name.to_string()).is_ok()
}

fn full_branch(name: &str) -> Result<FullName> {
    FullName::try_from(format!("refs/heads/{name}")).map_err(|e| {
        Usage::BranchName {
            name: name.to_string(),
            why: e.to_string(),
        }
        .into()
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    #[test]
    fn commit_dates_stay_within_what_git_takes() {
        use super::{LAST_COMMIT_SECOND, commit_seconds};
        assert_eq!(commit_seconds(1_796_000_000.75), 1_796_000_000);
        assert_eq!(commit_seconds(-2_208_988_800.0), 0);
        assert_eq!(commit_seconds(-0.5), 0);
        assert_eq!(commit_seconds(f64::NAN), 0);
        assert_eq!(commit_seconds(f64::NEG_INFINITY), 0);
        assert_eq!(commit_seconds(1e300), LAST_COMMIT_SECOND);
        assert_eq!(commit_seconds(f64::INFINITY), LAST_COMMIT_SECOND);
    }

    #[test]
    fn retry_branches_are_valid_ref_names_and_never_shared() {
        assert_eq!(super::retry_branch("a_1b2c"), "retry-a_1b2c");
        assert_eq!(super::retry_branch("x.y-z"), "retry-x.y-z");
        let odd = [
            "r..1", "r.1", "r1.", "r1", "x.lock", "x_lock", "x..lock", "y...", "a b", "é", "@{x",
        ];
        let names: Vec<String> = odd.iter().map(|id| super::retry_branch(id)).collect();
        for (id, n) in odd.iter().zip(&names) {
            assert!(
                super::valid_ref_name(&format!("refs/heads/{n}")),
                "{id}: {n}"
            );
            assert_eq!(*n, super::retry_branch(id), "{id}: the same every time");
        }
        let mut distinct = names.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        assert!(names[0].starts_with("retry-r.1-"), "{}", names[0]);
        assert!(names[4].starts_with("retry-x_lock-"), "{}", names[4]);
    }

    /// The git CLI, without the system's or the user's config.
    pub(crate) fn git(dir: &Path, args: &[&str]) -> std::process::Output {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs")
    }
}
