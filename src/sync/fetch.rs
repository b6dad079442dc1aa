//! `fetch` (and `clone`, a fetch of every session into a new state dir):
//! the remote's refs fetched into the transfer repository, then each
//! session brought into its own repository (created, fast-forwarded,
//! diverged, deleted by a tombstone, or its redaction taken), validated
//! before anything is published.

use super::clone::{BIND_EVERY, create, ensure_bound};
use super::take::redacted;
use super::*;
use crate::error::Usage;

/// What `fetch` did to one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// New on this machine: published.
    Created,
    /// The remote had more turns: taken.
    FastForward,
    UpToDate,
    /// This machine has more turns: `push` sends them.
    Ahead,
    /// Both have turns the other lacks: the remote's tips are kept as
    /// `refs/remotes/<remote>/<branch>`; `fetch --take` resolves it.
    Diverged,
    /// `--take` resolved a divergence.
    Taken,
    /// Not brought in (its records say why).
    Refused,
    /// Deleted here: the remote's tombstone covers this machine's copy,
    /// which held nothing the deletion did not see.
    Deleted,
    /// Not brought in: the remote's copy is what a deletion (here or on
    /// another machine) removed.
    Tombstoned,
    /// Deleted on another machine, kept here: this machine has turns the
    /// deletion did not see.
    Kept,
    /// The remote's copy is a redaction of this machine's history: taken,
    /// this machine's history before kept under `refs/redacted/`.
    Redacted,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Created => "created",
            Outcome::FastForward => "fast_forward",
            Outcome::UpToDate => "up_to_date",
            Outcome::Ahead => "ahead",
            Outcome::Diverged => "diverged",
            Outcome::Taken => "taken",
            Outcome::Refused => "refused",
            Outcome::Deleted => "deleted",
            Outcome::Tombstoned => "tombstoned",
            Outcome::Kept => "kept",
            Outcome::Redacted => "redacted",
        }
    }
}

/// Fetch the selected sessions from `remote` and bring each into its
/// repository; with `take`, resolve the named sessions' divergence.
#[allow(clippy::too_many_arguments)]
pub fn fetch(
    state: &StateDir,
    remote: &str,
    url: &str,
    selection: &Selection,
    take: Option<Take>,
    locks: LockOptions,
    printer: &crate::out::Printer,
    on_session: &mut dyn FnMut(records::Fetched),
) -> Result<Vec<Outcome>> {
    let _sync = remotes::lock(state, locks)?;
    let transfer = transfer_repo(state)?;
    let track = tracking(remote);
    let specs = fetch_specs(&track, selection)?;
    crate::git::transport::fetch(&transfer.dir, url, &specs, printer.progress_shown())?;
    crate::out::trace("fetch: fetched");
    let transfer = SessionRepo::open(&transfer.dir)?;
    let mut sessions = fetched_sessions(&transfer, remote, selection, printer)?;
    let remote_tombs = tombstones::fetched(&transfer, &track, &mut |w| {
        printer.warn(format!("remote `{remote}`: {w}"))
    })?;
    let local_tombs = tombstones::local(state, tombstones::Kind::Session)?;
    let removed_projects = removed_projects(state, &remote_tombs)?;
    // A session the remote has only a tombstone of is looked at too: this
    // machine's copy may be what it deleted.
    for (kind, id) in remote_tombs.keys() {
        if *kind == tombstones::Kind::Session && selection.wants(id) {
            sessions.entry(id.clone()).or_default();
        }
    }
    if let Selection::Some(ids) = selection {
        for id in ids {
            if !sessions.contains_key(id) {
                return Err(SyncError::NotOnRemote {
                    id: id.clone(),
                    remote: remote.to_string(),
                }
                .into());
            }
        }
    }
    let run = Fetching {
        state,
        remote,
        transfer: &transfer,
        take,
        locks,
        remote_tombs: &remote_tombs,
        local_tombs: &local_tombs,
    };
    let mut outcomes = Vec::new();
    let progress =
        crate::out::Progress::new(printer, sessions.len() as u64, "bringing sessions in");
    let mut unbound = Vec::new();
    for (id, branches) in &sessions {
        progress.inc();
        let result = run.session(id, branches, &mut unbound);
        if unbound.len() >= BIND_EVERY {
            ensure_bound(
                state,
                remote,
                &transfer,
                &std::mem::take(&mut unbound),
                &removed_projects,
                locks,
            )?;
        }
        let (outcome, path, message) = match result {
            Ok(done) => done,
            Err(e) => (Outcome::Refused, None, Some(e.to_string())),
        };
        outcomes.push(outcome);
        progress.suspend(|| {
            on_session(records::Fetched {
                remote: remote.to_string(),
                session: id.clone(),
                outcome: outcome.name().to_string(),
                path,
                branches: branches.keys().cloned().collect(),
                message,
            })
        });
    }
    progress.finish();
    ensure_bound(state, remote, &transfer, &unbound, &removed_projects, locks)?;
    // index.json is current when the command ends (SPEC §3).
    registry::fold(state, locks)?;
    compact(&transfer.dir, printer);
    Ok(outcomes)
}

/// The refspecs of a fetch into the transfer repository under `track`:
/// every project record and tombstone, and the selected sessions' refs.
fn fetch_specs(track: &str, selection: &Selection) -> Result<Vec<String>> {
    let mut specs = vec![
        format!("+{PROJECT_REFS}*:{track}projects/*"),
        // Every tombstone (they are small): what the remote's sessions and
        // projects are, deleted.
        format!("+{}*:{track}tombstones/*", tombstones::TOMBSTONE_REFS),
    ];
    match selection {
        Selection::All => specs.push(format!("+{SESSION_REFS}*:{track}sessions/*")),
        Selection::Some(ids) => {
            for id in ids {
                ids::session_id(id)?;
                let prefix =
                    remote_prefix(id).ok_or_else(|| Usage::SessionRef { id: id.to_string() })?;
                let rel = prefix.strip_prefix(SESSION_REFS).expect("a session prefix");
                specs.push(format!("+{prefix}*:{track}sessions/{rel}*"));
            }
        }
    }
    Ok(specs)
}

/// The selected sessions' branches as fetched: session → branch → tip. A
/// ref that is no session branch is skipped with a warning.
fn fetched_sessions(
    transfer: &SessionRepo,
    remote: &str,
    selection: &Selection,
    printer: &crate::out::Printer,
) -> Result<BTreeMap<String, BTreeMap<String, Oid>>> {
    let track = tracking(remote);
    let mut sessions: BTreeMap<String, BTreeMap<String, Oid>> = BTreeMap::new();
    for (rel, tip) in transfer.refs_under(&format!("{track}sessions/"))? {
        match parse_remote_ref(&rel) {
            Some((id, branch)) if selection.wants(&id) => {
                sessions.entry(id).or_default().insert(branch, tip);
            }
            Some(_) => {}
            None => printer.warn(format!(
                "remote `{remote}`: `refs/sessions/{rel}` is not a session branch; skipped"
            )),
        }
    }
    Ok(sessions)
}

/// Projects removed, here or on the remote: a fetched session bound to one
/// does not register it again. A removal on the remote is kept here too
/// (what `verify` reads) unless the project is registered here: then it
/// stays, the user's to remove. A revival on the remote after this
/// machine's removal forgets the removal.
fn removed_projects(state: &StateDir, remote_tombs: &RemoteTombstones) -> Result<BTreeSet<String>> {
    let registered = projects::read(state)?;
    let mut removed: BTreeSet<String> = tombstones::local(state, tombstones::Kind::Project)?
        .into_keys()
        .collect();
    for ((kind, id), (_, t)) in remote_tombs {
        if *kind != tombstones::Kind::Project {
            continue;
        }
        if t.revived() {
            if let Some(h) = tombstones::read_local(state, *kind, id)?
                && t.supersedes(&h)
            {
                tombstones::forget(state, *kind, id)?;
                removed.remove(id);
            }
            continue;
        }
        if !registered.contains_key(id) {
            if !removed.contains(id) {
                tombstones::record(state, t)?;
            }
            removed.insert(id.clone());
        }
    }
    Ok(removed)
}

/// The remote's tombstones as fetched: (kind, id) → (its commit, it).
type RemoteTombstones = BTreeMap<(tombstones::Kind, String), (Oid, tombstones::Tombstone)>;

/// One fetch's run: what every session is brought in with.
struct Fetching<'a> {
    state: &'a StateDir,
    remote: &'a str,
    transfer: &'a SessionRepo,
    take: Option<Take>,
    locks: LockOptions,
    remote_tombs: &'a RemoteTombstones,
    local_tombs: &'a BTreeMap<String, tombstones::Tombstone>,
}

impl Fetching<'_> {
    /// Bring session `id` (the remote's `branches` of it) in, with what
    /// the tombstones say: honoured, deleted, kept, or fetched; a session
    /// whose project is to be bound is added to `unbound`.
    fn session(
        &self,
        id: &str,
        branches: &BTreeMap<String, Oid>,
        unbound: &mut Vec<(String, PathBuf)>,
    ) -> Result<Done> {
        let (state, remote) = (self.state, self.remote);
        let last = self
            .remote_tombs
            .get(&(tombstones::Kind::Session, id.to_string()))
            .map(|(_, t)| t);
        let mut here = self.local_tombs.get(id);
        let mut past = None;
        // Revived on the remote after this machine deleted it: someone went
        // on with it (or made it again); this deletion is past.
        if let Some(h) = here
            && last.is_some_and(|r| r.supersedes(h))
        {
            tombstones::forget(state, tombstones::Kind::Session, id)?;
            (here, past) = (None, Some(h));
        }
        let remote_tips: Vec<Oid> = branches.values().copied().collect();
        let mut deleted = Deleted {
            // A deletion that did not see the remote's own turns stands for
            // nothing: someone went on with the session after it.
            remote: last.filter(|t| t.covers(&remote_tips)),
            here,
            past,
            why: None,
        };
        // Why this machine's copy was kept though the remote deleted it.
        let mut why = None;
        let honoured = honour(state, remote, id, branches, &deleted, self.locks, &mut why);
        deleted.why = why;
        match honoured? {
            Some(done) => Ok(done),
            // Only a tombstone on the remote, which this machine's copy
            // holds turns it did not see.
            None if branches.is_empty() => match state.find_session_if_any(id)? {
                Some(sd) => deleted.noted(state, remote, id, Outcome::Ahead, sd.dir, None),
                None => Ok((Outcome::Tombstoned, None, None)),
            },
            None => fetch_one(
                state,
                remote,
                self.transfer,
                id,
                branches,
                self.take,
                self.locks,
                unbound,
            )
            .and_then(|(o, p, m)| deleted.noted(state, remote, id, o, p, m)),
        }
    }
}

/// The tombstones of one session: the remote's (not revived) and this
/// machine's.
struct Deleted<'a> {
    remote: Option<&'a tombstones::Tombstone>,
    here: Option<&'a tombstones::Tombstone>,
    /// This machine's, which a revival on the remote came after.
    past: Option<&'a tombstones::Tombstone>,
    /// Why this machine's copy was kept (`tombstones::keeps`).
    why: Option<&'static str>,
}

/// What `fetch` did to one session: the outcome, its directory (none when
/// it is not here), a note.
type Done = (Outcome, Option<PathBuf>, Option<String>);

impl Deleted<'_> {
    /// [`fetch_one`]'s result, with what the tombstones say of it: a
    /// session this machine had deleted and the remote holds turns of that
    /// the deletion did not see is here again (its tombstone dropped); one
    /// the remote deleted that this machine has turns of is kept, the
    /// conflict reported.
    fn noted(
        &self,
        state: &StateDir,
        remote: &str,
        id: &str,
        outcome: Outcome,
        path: PathBuf,
        note: Option<String>,
    ) -> Result<Done> {
        let why = self.why;
        let joined = |m: String| Some(note.clone().map_or(m.clone(), |n| format!("{m}; {n}")));
        if outcome == Outcome::Created {
            let Some(t) = self.here.or(self.past).or(self.remote) else {
                return Ok((outcome, Some(path), note));
            };
            let whence = if self.here.is_some() || self.past.is_some() {
                tombstones::forget(state, tombstones::Kind::Session, id)?;
                "here".to_string()
            } else {
                format!("on `{remote}`")
            };
            return Ok((
                outcome,
                Some(path),
                joined(format!(
                    "deleted {whence} at {}, but `{remote}` has turns the deletion did not see: brought in (`git-session delete {id}` drops it)",
                    t.when()
                )),
            ));
        }
        if let Some(t) = self.remote {
            let next = match why {
                Some(w) if w.contains("nodes no turn") => format!(
                    "`git-session commit-turn {id}` then `git-session push {remote} {id}` keeps it everywhere"
                ),
                Some(w) if w.contains("import") => format!(
                    "once the import commits that turn, `git-session push {remote} {id}` keeps it everywhere"
                ),
                _ => format!("`git-session push {remote} {id}` keeps it everywhere"),
            };
            let message = joined(format!(
                "deleted on `{remote}` at {}, but {}: kept; {next}, `git-session delete {id}` deletes it here too",
                t.when(),
                why.unwrap_or("this machine has turns the deletion did not see")
            ));
            // A divergence (or its resolution) stays what it is: `--take`
            // is owed either way.
            let outcome = match outcome {
                Outcome::Diverged | Outcome::Taken => outcome,
                _ => Outcome::Kept,
            };
            return Ok((outcome, Some(path), message));
        }
        Ok((outcome, Some(path), note))
    }
}

/// What the tombstones of session `id` settle before anything is fetched:
/// `Some` when the session is not to be brought in (the remote's copy is
/// what was deleted, here or there) or was deleted here now (the remote's
/// tombstone covers this machine's copy, which holds nothing it did not
/// see); `None`: fetch it as any other.
fn honour(
    state: &StateDir,
    remote: &str,
    id: &str,
    branches: &BTreeMap<String, Oid>,
    deleted: &Deleted,
    locks: LockOptions,
    why: &mut Option<&'static str>,
) -> Result<Option<Done>> {
    // No tombstone of it, here or there: nothing to settle (and no second
    // lookup of the session, which the fetch makes anyway).
    if deleted.remote.is_none() && deleted.here.is_none() {
        return Ok(None);
    }
    let here = state.find_session_if_any(id)?;
    if here.is_some() {
        // Made again here after this machine deleted it: alive.
        if deleted.here.is_some() {
            tombstones::forget(state, tombstones::Kind::Session, id)?;
        }
        let Some(t) = deleted.remote else {
            return Ok(None);
        };
        let reason = std::cell::Cell::new(None);
        let gone = crate::lifecycle::delete_unless(
            state,
            id,
            locks,
            |sd| {
                let r = tombstones::keeps(sd, t);
                reason.set(r);
                r
            },
            Some(t),
        )?;
        *why = reason.get();
        return Ok(gone.map(|path| {
            (
                Outcome::Deleted,
                Some(path),
                Some(format!(
                    "deleted on `{remote}` at {}; this machine's copy held nothing the deletion did not see",
                    t.when()
                )),
            )
        }));
    }
    let tips: Vec<Oid> = branches.values().copied().collect();
    let tomb = match (deleted.remote, deleted.here) {
        (Some(r), h) => r.merged(h),
        (None, Some(h)) => h.clone(),
        (None, None) => return Ok(None),
    };
    if tips.is_empty() || tomb.covers(&tips) {
        let whence = if deleted.here.is_some() && deleted.remote.is_none() {
            "deleted here (`push` carries the deletion)".to_string()
        } else {
            format!("deleted on `{remote}`")
        };
        return Ok(Some((
            Outcome::Tombstoned,
            None,
            Some(format!("{whence} at {}: not brought in", tomb.when())),
        )));
    }
    Ok(None)
}

/// Bring one session in: `(what happened, its directory, a note)`; the
/// session, found or created, goes on `unbound` for [`ensure_bound`].
#[allow(clippy::too_many_arguments)]
fn fetch_one(
    state: &StateDir,
    remote: &str,
    transfer: &SessionRepo,
    id: &str,
    branches: &BTreeMap<String, Oid>,
    take: Option<Take>,
    locks: LockOptions,
    unbound: &mut Vec<(String, PathBuf)>,
) -> Result<(Outcome, PathBuf, Option<String>)> {
    let newest = tree::newest_tip(transfer, branches)?;
    let Some(sd) = state.find_session_if_any(id)? else {
        let path = create(state, remote, transfer, id, branches, &newest)?;
        unbound.push((id.to_string(), path.clone()));
        return Ok((Outcome::Created, path, None));
    };
    sd.check_links()?;
    unbound.push((id.to_string(), sd.dir.clone()));
    let (outcome, note) = {
        let _lock = lock::session(&sd, lock::Kind::Exclusive, locks)?;
        bring_in(&sd, remote, transfer, id, branches, &newest, take)?
    };
    if matches!(
        outcome,
        Outcome::FastForward | Outcome::Taken | Outcome::Redacted
    ) {
        refresh_row(state, &sd, id)?;
    }
    Ok((outcome, sd.dir.clone(), note))
}

/// [`fetch_one`] for a session this machine has, under its lock.
fn bring_in(
    sd: &SessionDir,
    remote: &str,
    transfer: &SessionRepo,
    id: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &tree::Newest,
    take: Option<Take>,
) -> Result<(Outcome, Option<String>)> {
    let mut repo = SessionRepo::open(&sd.dir)?;
    let tips: Vec<Oid> = branches.values().copied().collect();
    repo.copy_from(transfer, &tips)?;
    repo.sync_objects()?;
    repo.release_packs();
    // The remote's tips, as git keeps a remote's: `refs/remotes/<r>/<b>`.
    let mut updates: Vec<RefUpdate> = branches
        .iter()
        .map(|(b, tip)| RefUpdate::Set {
            name: format!("refs/remotes/{remote}/{b}"),
            expected: Expected::Any,
            new: *tip,
            message: format!("fetch: {remote}"),
        })
        .collect();
    for (b, old) in repo.refs_under(&format!("refs/remotes/{remote}/"))? {
        if !branches.contains_key(&b) {
            updates.push(RefUpdate::Delete {
                name: format!("refs/remotes/{remote}/{b}"),
                old,
            });
        }
    }
    repo.update_refs(&updates)?;
    if let Some(done) = redacted(sd, &mut repo, remote, id, branches, newest)? {
        return Ok(done);
    }
    Ok(match (tree::relation(sd, &repo, branches, newest)?, take) {
        (tree::Relation::Same, _) => (Outcome::UpToDate, None),
        (tree::Relation::Ahead, _) => (Outcome::Ahead, None),
        (tree::Relation::Behind, _) => {
            tree::fast_forward(sd, &mut repo, branches, newest)?;
            // The remote renamed the node files to the Python store's
            // naming (`migrate --node-names`, `verify --fix`): the old
            // names go here too.
            if crate::mirror::rename::named_twice(sd) {
                drop(repo);
                crate::mirror::rename::to_python_naming(sd, id, crate::out::now())?;
            }
            (Outcome::FastForward, None)
        }
        (tree::Relation::Diverged, None) => (
            Outcome::Diverged,
            Some(format!(
                "this machine and `{remote}` both have turns the other lacks; the remote's are kept as `{remote}/<branch>`: `git-session fetch {remote} --take local {id}` keeps this machine's conversation current, `--take remote` the remote's; both keep every turn"
            )),
        ),
        (tree::Relation::Diverged, Some(t)) => {
            let note = take::apply(sd, &mut repo, id, remote, branches, newest, t)?;
            (Outcome::Taken, Some(note))
        }
    })
}

/// A remote's tip a session has not taken in (see [`divergences`]).
pub struct Divergence {
    pub remote: String,
    pub branch: String,
    /// Node files of the remote's tip that are not in `history/`.
    pub missing: usize,
}

/// The remote tips (`refs/remotes/<remote>/<branch>`, kept by `fetch`)
/// whose node files are not all in the session's `history/`: both sides
/// added turns, and `fetch --take` is owed.
pub fn divergences(sd: &SessionDir, repo: &SessionRepo) -> Vec<Divergence> {
    let Ok(tips) = repo.refs_under("refs/remotes/") else {
        return Vec::new();
    };
    if tips.is_empty() {
        return Vec::new();
    }
    let Ok(here) = tree::names_on_disk(sd).map(|n| tree::node_keys(&n)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (rel, tip) in tips {
        let Some((remote, branch)) = rel.split_once('/') else {
            continue;
        };
        let Ok(info) = repo.commit_info(tip) else {
            continue;
        };
        let missing = tree::history_names(repo, info.tree)
            .map(|names| tree::node_keys(&names).difference(&here).count())
            .unwrap_or(0);
        if missing > 0 {
            out.push(Divergence {
                remote: remote.to_string(),
                branch: branch.to_string(),
                missing,
            });
        }
    }
    out
}

/// Rewrite the session's index row from its meta.json.
pub(super) fn refresh_row(state: &StateDir, sd: &SessionDir, id: &str) -> Result<()> {
    match registry::fresh_row(sd, id)? {
        // Journaled (a fetch of a thousand sessions rewrote index.json a
        // thousand times), folded into index.json when the fetch ends.
        Some(row) => registry::journal_append(state, &row),
        None => Ok(()),
    }
}
