//! Sessions on several machines (SPEC §5.20): `push`, `fetch` and `clone`
//! through any git remote.
//!
//! One remote repository holds every session. A session's branches are
//! `refs/sessions/<shard>/<id>/heads/<branch>` there (the shard is the id's
//! last two characters), outside `refs/heads`, so a plain `git clone` of
//! the remote fetches none of them; each bound project's name and path is
//! `refs/projects/<project_id>`, a commit holding `project.json`.
//!
//! git does the transport, from the transfer repository `<state>/sync/repo`:
//! `push` copies each session's new objects there (one pack) and pushes
//! fast-forwards only, never forced, at most [`BATCH`] refs a request;
//! `fetch` fetches there and then brings each session's turns into its own
//! repository, validated like a legacy repository before anything is
//! published. The transfer repository holds copies only: deleting it loses
//! nothing.
//!
//! Locks: the sync lock (one `push`, `fetch` or `remote` change at a time),
//! then the registry, then each session.

mod clone;
mod error;
mod fetch;
mod push;
pub mod remotes;
mod take;
pub mod tombstones;
mod tree;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};
use crate::git::{Expected, Oid, RefUpdate, SessionRepo};
use crate::layout::lock::{self, LockOptions};
use crate::layout::paths::Snapshot;
use crate::layout::schema::Meta;
use crate::layout::{SessionDir, StateDir, TEMP_PREFIX, atomic, ids, projects, registry};
use crate::out::records;

pub use error::SyncError;
pub use fetch::{Divergence, Outcome, divergences, fetch};
pub use push::{PushOptions, PushReport, push, queued, refused_whole};
pub use take::Take;

/// At most this many ref updates go in one push request (hosts cope badly
/// with tens of thousands). `GIT_SESSION_PUSH_BATCH` lowers it (tests).
pub const BATCH: usize = 1000;

/// How many refused packs of one batch a push splits in two and sends
/// again, at most.
const MAX_SPLITS: usize = 64;

pub const SESSION_REFS: &str = "refs/sessions/";
pub const PROJECT_REFS: &str = "refs/projects/";

/// The shard of a session id: its last two characters (`.` as `_`, since
/// a ref name component cannot start with a dot).
pub fn shard(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(2)..]
        .iter()
        .map(|c| if *c == '.' { '_' } else { *c })
        .collect();
    if tail.len() < 2 {
        format!("{tail}_")
    } else {
        tail
    }
}

/// `refs/sessions/<shard>/<id>/heads/`: where a session's branches are on
/// the remote. `None` for an id that cannot be part of a ref name
/// (`a..b`, `x.lock`).
pub fn remote_prefix(id: &str) -> Option<String> {
    let prefix = format!("{SESSION_REFS}{}/{id}/heads/", shard(id));
    crate::git::valid_ref_name(&format!("{prefix}main")).then_some(prefix)
}

/// The session and branch a remote ref names, given its name after
/// `refs/sessions/`; `None` for a ref that is not a session branch in its
/// shard (it is skipped, never trusted).
pub fn parse_remote_ref(rel: &str) -> Option<(String, String)> {
    let mut parts = rel.splitn(4, '/');
    let (sh, id, heads, branch) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if heads != "heads" || ids::session_id(id).is_err() || shard(id) != sh || branch.is_empty() {
        return None;
    }
    crate::git::valid_ref_name(&format!("refs/heads/{branch}"))
        .then(|| (id.to_string(), branch.to_string()))
}

/// Where `remote`'s tips are kept in the transfer repository.
fn tracking(remote: &str) -> String {
    format!("refs/remotes/{remote}/")
}

fn batch_size() -> usize {
    std::env::var("GIT_SESSION_PUSH_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(BATCH)
        .min(BATCH)
}

/// The transfer repository, created on first use.
fn transfer_repo(state: &StateDir) -> Result<SessionRepo> {
    let dir = state.sync_repo();
    crate::git::init_transfer_repo(&dir)?;
    SessionRepo::open(&dir)
}

/// Roll the transfer repository's packs up when they pile up; a failure
/// is a warning (the push or fetch is done).
fn compact(dir: &Path, printer: &crate::out::Printer) {
    if let Err(e) = crate::git::transport::compact(dir) {
        printer.warn(format!("the transfer repository was not repacked: {e}"));
    }
}

/// Which sessions a command is about.
#[derive(Debug, Clone)]
pub enum Selection {
    All,
    Some(Vec<String>),
}

impl Selection {
    fn wants(&self, id: &str) -> bool {
        match self {
            Selection::All => true,
            Selection::Some(ids) => ids.iter().any(|i| i == id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_refs_are_sharded_and_read_back_only_when_they_fit() {
        assert_eq!(shard("s1"), "s1");
        assert_eq!(shard("claude-abc"), "bc");
        assert_eq!(shard("a"), "a_");
        assert_eq!(shard("x."), "x_");
        assert_eq!(shard("a.b"), "_b");
        assert_eq!(
            remote_prefix("s1").as_deref(),
            Some("refs/sessions/s1/s1/heads/")
        );
        assert_eq!(remote_prefix("x.lock"), None);
        assert_eq!(remote_prefix("a..b"), None);
        for id in ["s1", "a", "claude-1.2", "x_y"] {
            let prefix = remote_prefix(id).unwrap();
            let rel = format!("{prefix}retry-a1").replace(SESSION_REFS, "");
            assert_eq!(
                parse_remote_ref(&rel),
                Some((id.to_string(), "retry-a1".into())),
                "{id}"
            );
        }
        for rel in [
            "zz/s1/heads/main",       // the wrong shard
            "rf/-rf/heads/main",      // not an id
            "s1/s1/tags/main",        // not a branch
            "s1/s1/heads/",           // no branch
            "s1/s1/heads/a..b",       // not a branch name
            "ts/projects/heads/main", // a reserved name, not an id
        ] {
            assert_eq!(parse_remote_ref(rel), None, "{rel}");
        }
    }
}
