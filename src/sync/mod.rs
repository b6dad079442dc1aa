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

/// One ref a push sends.
#[derive(Debug, Clone)]
struct Update {
    session: String,
    branch: Option<String>,
    remote_ref: String,
    new: Oid,
    old: Option<Oid>,
    /// The remote's tip is history a redaction here replaced: sent as a
    /// forced update, leased on `old`.
    forced: bool,
}

/// What `push` did.
#[derive(Debug, Default)]
pub struct PushReport {
    pub refs: Vec<records::PushedRef>,
    pub sessions: usize,
    pub up_to_date: usize,
    pub skipped: Vec<(String, String)>,
    pub batches: usize,
    pub objects: usize,
    /// Sessions not sent because their outgoing turns hold a secret not
    /// allowed: each with what was found.
    pub withheld: Vec<(String, Vec<crate::secrets::session::Finding>)>,
}

/// How `push` goes about it.
pub struct PushOptions<'a> {
    /// Say what would be sent; send nothing.
    pub dry_run: bool,
    /// Fingerprints of findings to send anyway (besides the allow-list).
    pub allow: &'a [String],
}

/// Push the selected sessions' branches (and their projects' records) to
/// `remote`. Refs the remote has at the same commit are left; everything
/// else is sent as a fast-forward in batches, and what a killed run did not
/// get confirmed stays in the queue (`sync/queue-<remote>`) for the next.
pub fn push(
    state: &StateDir,
    remote: &str,
    url: &str,
    selection: &Selection,
    locks: LockOptions,
    printer: &crate::out::Printer,
    options: PushOptions,
) -> Result<PushReport> {
    let dry_run = options.dry_run;
    let allowed = crate::secrets::session::allowed(state, options.allow)?;
    let _sync = remotes::lock(state, locks)?;
    let mut transfer = transfer_repo(state)?;
    let mut report = PushReport::default();
    let buried = tombstones::local(state, tombstones::Kind::Session)?;
    let targets: Vec<(String, PathBuf)> = match selection {
        Selection::All => registry::candidates(state)?,
        Selection::Some(ids) => ids
            .iter()
            .filter_map(|id| match state.find_session(id) {
                Ok(sd) => Some(Ok((id.clone(), sd.dir))),
                // Deleted here: its tombstone is what is pushed.
                Err(Error::SessionNotFound { .. }) if buried.contains_key(id) => None,
                Err(e) => Some(Err(e)),
            })
            .collect::<Result<_>>()?,
    };
    let on_remote: HashMap<String, Oid> = crate::git::transport::ls_remote(
        &transfer.dir,
        url,
        &[SESSION_REFS, PROJECT_REFS, tombstones::TOMBSTONE_REFS],
    )?
    .into_iter()
    .collect();
    crate::out::trace("push: remote listed");
    // The remote's tombstones, read when it has any: a deletion pushed from
    // here goes on from the remote's last, and a session here that one
    // covers is revived by this push.
    let track = tracking(remote);
    let listed: BTreeMap<String, Oid> = on_remote
        .iter()
        .filter_map(|(n, id)| Some((n.strip_prefix(tombstones::TOMBSTONE_REFS)?.to_string(), *id)))
        .collect();
    let tracked: BTreeMap<String, Oid> = transfer
        .refs_under(&format!("{track}tombstones/"))?
        .into_iter()
        .collect();
    let remote_tombs = if listed.is_empty() {
        BTreeMap::new()
    } else {
        // Fetched only when they moved since this machine last looked.
        if listed != tracked {
            crate::git::transport::fetch(
                &transfer.dir,
                url,
                &[format!(
                    "+{}*:{track}tombstones/*",
                    tombstones::TOMBSTONE_REFS
                )],
                false,
            )?;
            transfer = SessionRepo::open(&transfer.dir)?;
        }
        tombstones::fetched(&transfer, &track, &mut |w| {
            printer.warn(format!("remote `{remote}`: {w}"))
        })?
    };
    // The sessions the remote has a branch of: only theirs are worth a
    // look before the lock (the rest have everything to send).
    let remote_sessions: HashSet<String> = on_remote
        .keys()
        .filter_map(|r| r.strip_prefix(SESSION_REFS))
        .filter_map(parse_remote_ref)
        .map(|(id, _)| id)
        .collect();
    let known_projects = projects::read(state)?;
    let mut wanted_projects: BTreeSet<String> = BTreeSet::new();
    let mut updates: Vec<Update> = Vec::new();
    let looked: BTreeSet<String> = targets.iter().map(|(id, _)| id.clone()).collect();
    let progress = crate::out::Progress::new(printer, targets.len() as u64, "copying sessions");
    // Sessions are read on several threads (each with its own handle on the
    // transfer repository, to skip what it has); this one writes.
    let jobs = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let transfer_dir = transfer.dir.clone();
    let result: Result<()> = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(String, Result<Collected>)>(64);
        for w in 0..jobs {
            let tx = tx.clone();
            let (targets, on_remote, transfer_dir) = (&targets, &on_remote, &transfer_dir);
            let remote_sessions = &remote_sessions;
            let allowed = &allowed;
            scope.spawn(move || {
                let mine = SessionRepo::open_for_reading(transfer_dir);
                for (id, dir) in targets.iter().skip(w).step_by(jobs) {
                    let r = match &mine {
                        Ok(t) => collect_session(
                            &SessionDir::new(dir.clone()),
                            id,
                            on_remote,
                            remote_sessions.contains(id),
                            t,
                            dry_run,
                            allowed,
                        ),
                        Err(e) => Err(Error::git(
                            "open the transfer repository",
                            transfer_dir,
                            e.to_string(),
                        )),
                    };
                    if tx.send((id.clone(), r)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        for (id, r) in rx {
            progress.inc();
            match r {
                Ok(c) if !c.secrets.is_empty() => {
                    report.sessions += 1;
                    report.withheld.push((id, c.secrets));
                }
                Ok(c) => {
                    report.sessions += 1;
                    report.up_to_date += c.same;
                    report.objects += c.objects.len();
                    for o in c.objects {
                        transfer.push_compressed(o)?;
                    }
                    wanted_projects.extend(c.project);
                    updates.extend(c.updates);
                }
                Err(e) => report.skipped.push((id, e.to_string())),
            }
        }
        Ok(())
    });
    result?;
    crate::out::trace("push: sessions read");
    progress.finish();
    updates.sort_by(|a, b| a.remote_ref.cmp(&b.remote_ref));
    report.skipped.sort();
    report.withheld.sort_by(|a, b| a.0.cmp(&b.0));
    for pid in wanted_projects {
        let name = format!("{PROJECT_REFS}{pid}");
        if on_remote.contains_key(&name) || !crate::git::valid_ref_name(&name) {
            continue;
        }
        let Some(p) = known_projects.get(&pid) else {
            continue;
        };
        let record = project_record(&pid, p);
        let time = p.get("created_at").and_then(Value::as_f64).unwrap_or(0.0);
        let commit = if dry_run {
            crate::git::blob_id(&record)
        } else {
            transfer.write_file_commit(
                "project.json",
                record,
                &format!("project {pid}\n"),
                time,
                &[],
            )?
        };
        updates.push(Update {
            session: String::new(),
            branch: None,
            remote_ref: name,
            new: commit,
            old: None,
            forced: false,
        });
    }
    updates.extend(tombstone_updates(
        state,
        &mut transfer,
        selection,
        &targets,
        &on_remote,
        &remote_sessions,
        &remote_tombs,
        &buried,
        &mut report,
        dry_run,
    )?);
    if !dry_run {
        transfer.sync_objects()?;
        transfer.release_packs();
    }
    crate::out::trace("push: objects copied");
    // What an earlier run left unconfirmed, for sessions not pushed now.
    let queue_path = state.push_queue(remote);
    let planned: BTreeSet<String> = updates.iter().map(|u| u.remote_ref.clone()).collect();
    for (name, new) in read_queue(&queue_path)? {
        if planned.contains(&name) || on_remote.get(&name) == Some(&new) {
            continue;
        }
        let Some(rel) = name.strip_prefix(SESSION_REFS) else {
            continue;
        };
        let Some((session, branch)) = parse_remote_ref(rel) else {
            continue;
        };
        // A session looked at now is pushed as it is now; one deleted
        // since is not pushed at all; nor a ref that is no longer the
        // branch's tip here, or whose turns hold a secret not allowed.
        if looked.contains(&session)
            || !transfer.object_exists(new)
            || buried.contains_key(&session)
        {
            continue;
        }
        let Some(sd) = state.find_session_if_any(&session)? else {
            continue;
        };
        let still = SessionRepo::open_for_reading(&sd.dir)
            .and_then(|repo| {
                if repo.branch_tip(&branch)? != Some(new) {
                    return Ok(false);
                }
                let prefix = remote_prefix(&session).unwrap_or_default();
                Ok(outgoing_secrets(&repo, &prefix, &[new], &on_remote, &allowed)?.is_empty())
            })
            .unwrap_or(false);
        if !still {
            continue;
        }
        updates.push(Update {
            session,
            branch: Some(branch),
            old: on_remote.get(&name).copied(),
            remote_ref: name,
            new,
            forced: false,
        });
    }
    if dry_run {
        for u in &updates {
            report
                .refs
                .push(pushed_record(remote, u, "planned", String::new()));
        }
        return Ok(report);
    }
    let mut pending: Vec<Update> = updates;
    write_queue(&queue_path, &pending)?;
    crate::out::trace("push: queue written");
    let size = batch_size();
    let progress_git = printer.progress_shown();
    // Refused refs stay queued for the next run (after a fetch).
    let mut refused: Vec<Update> = Vec::new();
    // Requests a batch may spend splitting refused packs: enough to isolate
    // a few bad sessions among a thousand (about 2·log2(1000) each), not 2N
    // requests when the remote refuses every pack for a reason of its own
    // (a full disk, a broken unpacker).
    while !pending.is_empty() {
        let mut splits_left = MAX_SPLITS;
        let take = pending.len().min(size);
        let mut work: Vec<Vec<Update>> = vec![pending.drain(..take).collect()];
        while let Some(batch) = work.pop() {
            let specs: Vec<(Oid, String)> = batch
                .iter()
                .map(|u| (u.new, u.remote_ref.clone()))
                .collect();
            let leases: Vec<(String, Oid)> = batch
                .iter()
                .filter(|u| u.forced)
                .filter_map(|u| Some((u.remote_ref.clone(), u.old?)))
                .collect();
            atomic::crash_point("push-batch");
            let answers =
                crate::git::transport::push(&transfer.dir, url, &specs, &leases, progress_git)?;
            crate::out::trace("push: batch sent");
            report.batches += 1;
            let by_name: HashMap<&str, &crate::git::transport::PushedRef> =
                answers.iter().map(|a| (a.name.as_str(), a)).collect();
            // A pack the remote refused whole (its checks refused an object
            // of one session: `receive.fsckObjects`) names every ref: each
            // half is sent again, until every ref it can take has landed
            // and the one it cannot is refused alone.
            if batch.len() > 1
                && splits_left > 0
                && batch.iter().all(|u| {
                    by_name
                        .get(u.remote_ref.as_str())
                        .is_some_and(|a| !a.ok && refused_whole(&a.summary))
                })
            {
                splits_left -= 1;
                let mut first = batch;
                let second = first.split_off(first.len() / 2);
                work.push(second);
                work.push(first);
                continue;
            }
            for u in batch {
                let status = match by_name.get(u.remote_ref.as_str()) {
                    Some(a) if a.ok => {
                        let status = if u.old.is_none() {
                            "created"
                        } else if u.forced {
                            "replaced"
                        } else {
                            "advanced"
                        };
                        report
                            .refs
                            .push(pushed_record(remote, &u, status, a.summary.clone()));
                        continue;
                    }
                    Some(a) => ("rejected", a.summary.clone()),
                    None => ("rejected", "the remote did not answer for it".to_string()),
                };
                report
                    .refs
                    .push(pushed_record(remote, &u, status.0, status.1));
                refused.push(u);
            }
            // Only confirmed refs leave the queue.
            let mut left: Vec<Update> = refused.clone();
            left.extend(work.iter().flatten().cloned());
            left.extend(pending.iter().cloned());
            write_queue(&queue_path, &left)?;
        }
    }
    compact(&transfer.dir, printer);
    Ok(report)
}

/// The tombstone refs a push sends: this machine's deletions of what the
/// remote has (sessions the selection names, projects with a push of
/// everything), each merged with the remote's tombstone of it; and a
/// revival of each remote tombstone that covers a session pushed now which
/// is here again after this machine deleted it, or holds turns the
/// deletion did not see. Tombstones of things that exist here again are
/// dropped.
#[allow(clippy::too_many_arguments)]
fn tombstone_updates(
    state: &StateDir,
    transfer: &mut SessionRepo,
    selection: &Selection,
    targets: &[(String, PathBuf)],
    on_remote: &HashMap<String, Oid>,
    remote_sessions: &HashSet<String>,
    remote_tombs: &BTreeMap<(tombstones::Kind, String), (Oid, tombstones::Tombstone)>,
    buried: &BTreeMap<String, tombstones::Tombstone>,
    report: &mut PushReport,
    dry_run: bool,
) -> Result<Vec<Update>> {
    use tombstones::{Kind, Tombstone};
    let mut out = Vec::new();
    let mut send =
        |transfer: &mut SessionRepo, kind: Kind, id: &str, t: &Tombstone| -> Result<()> {
            let Some(name) = tombstones::remote_ref(kind, id) else {
                return Ok(());
            };
            let last = remote_tombs.get(&(kind, id.to_string()));
            if last.is_some_and(|(_, r)| r == t) {
                report.up_to_date += 1;
                return Ok(());
            }
            let parent = last.map(|(c, _)| *c);
            let new = if dry_run {
                crate::git::blob_id(&serde_json::to_vec(t).expect("a tombstone serialises"))
            } else {
                tombstones::write_commit(transfer, t, parent)?
            };
            out.push(Update {
                session: id.to_string(),
                branch: None,
                remote_ref: name,
                new,
                old: parent,
                forced: false,
            });
            Ok(())
        };
    let pushed: HashMap<&str, &PathBuf> = targets.iter().map(|(id, p)| (id.as_str(), p)).collect();
    for (id, t) in buried {
        if !selection.wants(id) {
            continue;
        }
        if state.find_session_if_any(id)?.is_some() {
            if !dry_run {
                tombstones::forget(state, Kind::Session, id)?;
            }
            continue;
        }
        let last = remote_tombs
            .get(&(Kind::Session, id.clone()))
            .map(|(_, r)| r);
        // A revival on the remote after this deletion: someone went on
        // with the session since; this machine's deletion is older.
        if last.is_some_and(|r| r.supersedes(t)) {
            continue;
        }
        if !remote_sessions.contains(id) && last.is_none() {
            continue;
        }
        let merged = t.merged(last);
        // The remote has turns this deletion did not see: it stands for
        // nothing there (a fetch here brings the session back).
        if !merged.covers(&remote_tips(on_remote, id)) {
            continue;
        }
        send(transfer, Kind::Session, id, &merged)?;
    }
    for ((kind, id), (_, r)) in remote_tombs {
        let Some(dir) = pushed.get(id.as_str()).filter(|_| *kind == Kind::Session) else {
            continue;
        };
        // A session withheld for its secrets is not sent: nor is its revival.
        if r.revived() || report.withheld.iter().any(|(w, _)| w == id) {
            continue;
        }
        let sd = SessionDir::new((*dir).clone());
        let Ok(tips) = tombstones::tips_of(&sd) else {
            continue;
        };
        // Made again here after this machine deleted it, or gone on with
        // past what the deletion saw: alive. (A copy the deletion covers
        // is one a fetch deletes, never a reason to revive.)
        if buried.contains_key(id) || !r.covers(&tips) {
            send(transfer, Kind::Session, id, &r.revoked(crate::out::now()))?;
        }
    }
    if matches!(selection, Selection::All) {
        let registered = projects::read(state)?;
        for (pid, t) in tombstones::local(state, Kind::Project)? {
            let last = remote_tombs
                .get(&(Kind::Project, pid.clone()))
                .map(|(_, r)| r);
            // Registered again here after it was removed: alive.
            if registered.contains_key(&pid) {
                if !dry_run {
                    tombstones::forget(state, Kind::Project, &pid)?;
                }
                if let Some(r) = last.filter(|r| !r.revived()) {
                    send(transfer, Kind::Project, &pid, &r.revoked(crate::out::now()))?;
                }
                continue;
            }
            if last.is_some_and(|r| r.supersedes(&t)) {
                continue;
            }
            if !on_remote.contains_key(&format!("{PROJECT_REFS}{pid}")) && last.is_none() {
                continue;
            }
            send(transfer, Kind::Project, &pid, &t.merged(last))?;
        }
    }
    Ok(out)
}

/// The tips the remote has of session `id`'s branches.
fn remote_tips(on_remote: &HashMap<String, Oid>, id: &str) -> Vec<Oid> {
    let Some(prefix) = remote_prefix(id) else {
        return Vec::new();
    };
    on_remote
        .iter()
        .filter(|(n, _)| n.starts_with(&prefix))
        .map(|(_, t)| *t)
        .collect()
}

/// Whether git's summary of a refused ref says the remote refused the
/// request's pack as a whole (`[remote rejected] (unpacker error)`, `(unpack
/// failed)`), not that ref.
pub fn refused_whole(summary: &str) -> bool {
    summary.contains("unpacker error") || summary.contains("unpack failed")
}

fn pushed_record(remote: &str, u: &Update, status: &str, summary: String) -> records::PushedRef {
    records::PushedRef {
        remote: remote.to_string(),
        session: (!u.session.is_empty()).then(|| u.session.clone()),
        branch: u.branch.clone(),
        remote_ref: u.remote_ref.clone(),
        commit: u.new.to_string(),
        old: u.old.map(|o| o.to_string()),
        status: status.to_string(),
        summary,
    }
}

/// How many refs the push queue of `remote` holds (a push that did not
/// finish, or refs the remote refused).
pub fn queued(state: &StateDir, remote: &str) -> Result<usize> {
    Ok(read_queue(&state.push_queue(remote))?.len())
}

/// The queue of refs still to push: `<id> <remote ref>` per line. Never
/// read through a link or from a special file.
fn read_queue(path: &Path) -> Result<Vec<(String, Oid)>> {
    let Some(bytes) = atomic::read_if_present(path)? else {
        return Ok(Vec::new());
    };
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| {
            let (id, name) = l.split_once(' ')?;
            Some((name.to_string(), Oid::from_hex(id.as_bytes()).ok()?))
        })
        .collect())
}

fn write_queue(path: &Path, updates: &[Update]) -> Result<()> {
    if updates.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).io("remove", path),
            _ => Ok(()),
        };
    }
    let text: String = updates
        .iter()
        .map(|u| format!("{} {}\n", u.new, u.remote_ref))
        .collect();
    atomic::write(path, text.as_bytes())
}

/// What one session has to push.
struct Collected {
    updates: Vec<Update>,
    /// Its refs the remote has already.
    same: usize,
    /// Its project, when bound.
    project: Option<String>,
    /// The objects the transfer repository lacks, compressed for its pack.
    objects: Vec<crate::git::Compressed>,
    /// The secrets those objects hold that are not allowed: when there are
    /// any, nothing of the session is sent.
    secrets: Vec<crate::secrets::session::Finding>,
}

/// One session's branches to push and the objects they need that the
/// transfer repository lacks. Its refs are read first, alone: a session
/// the remote is up to date with costs a directory listing.
fn collect_session(
    sd: &SessionDir,
    id: &str,
    on_remote: &HashMap<String, Oid>,
    on_remote_already: bool,
    transfer: &SessionRepo,
    dry_run: bool,
    allowed: &BTreeSet<String>,
) -> Result<Collected> {
    let prefix = remote_prefix(id).ok_or_else(|| {
        Error::refused(
            "sync::bad_ref_id",
            "its id cannot be part of a git ref name",
            None,
        )
    })?;
    let mut out = Collected {
        updates: Vec::new(),
        same: 0,
        project: None,
        objects: Vec::new(),
        secrets: Vec::new(),
    };
    let repo = SessionRepo::open_for_reading(&sd.dir)?;
    // Up to date: a look at its branches, without the checks and the lock
    // that reading more takes. (A session the remote has nothing of is not
    // looked at twice.)
    if on_remote_already {
        let tips = repo.branches()?;
        if tips
            .iter()
            .all(|(b, tip)| on_remote.get(&format!("{prefix}{b}")) == Some(tip))
        {
            out.same = tips.len();
            return Ok(out);
        }
    }
    sd.check_links()?;
    let meta = Meta::read(&sd.meta())?;
    let _shared = lock::acquire(
        &sd.lock_file(),
        lock::Kind::Shared,
        LockOptions {
            timeout: std::time::Duration::from_secs(30),
            no_wait: false,
            announce: false,
        },
    )?;
    let mut new_tips = Vec::new();
    // The commits a redaction here replaced: a remote tip among them is
    // replaced too (read only when the remote has the session).
    let replaced = if on_remote_already {
        crate::secrets::redact::replaced_on_disk(sd)
    } else {
        Default::default()
    };
    for (branch, tip) in repo.branches()? {
        let name = format!("{prefix}{branch}");
        if !crate::git::valid_ref_name(&name) {
            continue;
        }
        let old = on_remote.get(&name).copied();
        if old == Some(tip) {
            out.same += 1;
            continue;
        }
        new_tips.push(tip);
        out.updates.push(Update {
            session: id.to_string(),
            branch: Some(branch),
            remote_ref: name,
            new: tip,
            old,
            // Only onto what replaced it: a history that goes on from the
            // redaction of the remote's tip.
            forced: match old.and_then(|o| replaced.get(&o)) {
                Some(r) => crate::sync::tree::is_ancestor(&repo, *r, tip)?,
                None => false,
            },
        });
    }
    out.project = meta
        .str("project_id")
        .map(str::to_string)
        .filter(|p| p != "default" && ids::project_id(p).is_ok());
    if !new_tips.is_empty() {
        thread_local! {
            static Z: std::cell::RefCell<crate::git::Compressor> = Default::default();
        }
        // What this push carries that the remote lacks is scanned; a
        // session holding a secret not allowed is not sent at all (its
        // other branches neither: they share the turns).
        out.secrets = outgoing_secrets(&repo, &prefix, &new_tips, on_remote, allowed)?;
        if !out.secrets.is_empty() || dry_run {
            return Ok(out);
        }
        let objects = repo.objects_for(&new_tips, &|o| transfer.knows(o))?;
        out.objects = Z
            .with_borrow_mut(|z| {
                objects
                    .into_iter()
                    .map(|(kind, oid, data)| z.compress(kind, oid, &data))
                    .collect::<std::result::Result<_, String>>()
            })
            .map_err(|e| Error::git("compress an object", &sd.dir, e))?;
    }
    Ok(out)
}

/// The secrets not `allowed` in what `tips` hold beyond the commits the
/// remote's refs of the session (under `prefix`) reach: what a push of
/// them would give the remote, whatever else this machine's transfer
/// repository holds. Only commits are walked to find where to stop.
fn outgoing_secrets(
    repo: &SessionRepo,
    prefix: &str,
    tips: &[Oid],
    on_remote: &HashMap<String, Oid>,
    allowed: &BTreeSet<String>,
) -> Result<Vec<crate::secrets::session::Finding>> {
    let mut there: HashSet<Oid> = HashSet::new();
    let mut stack: Vec<Oid> = on_remote
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(_, tip)| *tip)
        .collect();
    while let Some(c) = stack.pop() {
        if there.contains(&c) {
            continue;
        }
        // A commit this machine lacks reaches nothing it could send.
        let Ok(info) = repo.commit_info(c) else {
            continue;
        };
        there.insert(c);
        stack.extend(info.parents);
    }
    let objects = repo.objects_for(tips, &|o| Ok(there.contains(o)))?;
    let mut found = crate::secrets::session::scan_objects(&objects);
    found.retain(|f| !allowed.contains(&f.fingerprint));
    Ok(found)
}

/// `project.json` of a project's record on the remote.
fn project_record(id: &str, p: &Map<String, Value>) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("id".into(), id.into());
    for k in ["name", "path", "created_at"] {
        if let Some(v) = p.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    let mut bytes = serde_json::to_vec_pretty(&Value::Object(m)).expect("json");
    bytes.push(b'\n');
    bytes
}

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
                let prefix = remote_prefix(id).ok_or_else(|| {
                    Error::usage(
                        "usage::session_ref",
                        format!("session `{id}` cannot be fetched: its id cannot be part of a git ref name"),
                        None,
                    )
                })?;
                let rel = prefix.strip_prefix(SESSION_REFS).expect("a session prefix");
                specs.push(format!("+{prefix}*:{track}sessions/{rel}*"));
            }
        }
    }
    crate::git::transport::fetch(&transfer.dir, url, &specs, printer.progress_shown())?;
    crate::out::trace("fetch: fetched");
    let transfer = SessionRepo::open(&transfer.dir)?;
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
    let remote_tombs = tombstones::fetched(&transfer, &track, &mut |w| {
        printer.warn(format!("remote `{remote}`: {w}"))
    })?;
    let local_tombs = tombstones::local(state, tombstones::Kind::Session)?;
    // Projects removed, here or on the remote: a fetched session bound to
    // one does not register it again.
    let registered = projects::read(state)?;
    let mut removed_projects: BTreeSet<String> =
        tombstones::local(state, tombstones::Kind::Project)?
            .into_keys()
            .collect();
    for ((kind, id), (_, t)) in &remote_tombs {
        if *kind != tombstones::Kind::Project {
            continue;
        }
        if t.revived() {
            if let Some(h) = tombstones::read_local(state, *kind, id)?
                && t.supersedes(&h)
            {
                tombstones::forget(state, *kind, id)?;
                removed_projects.remove(id);
            }
            continue;
        }
        // Kept here too (what `verify` reads) unless the project is
        // registered here: then it stays, the user's to remove.
        if !registered.contains_key(id) {
            if !removed_projects.contains(id) {
                tombstones::record(state, t)?;
            }
            removed_projects.insert(id.clone());
        }
    }
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
                return Err(Error::refused(
                    "sync::not_on_remote",
                    format!("session `{id}` is not on remote `{remote}`"),
                    Some(format!(
                        "push it from the machine that has it: `git-session push {remote} {id}`"
                    )),
                ));
            }
        }
    }
    let mut outcomes = Vec::new();
    let progress =
        crate::out::Progress::new(printer, sessions.len() as u64, "bringing sessions in");
    let mut unbound = Vec::new();
    for (id, branches) in &sessions {
        progress.inc();
        let last = remote_tombs
            .get(&(tombstones::Kind::Session, id.clone()))
            .map(|(_, t)| t);
        let mut here = local_tombs.get(id);
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
        let honoured = honour(state, remote, id, branches, &deleted, locks, &mut why);
        deleted.why = why;
        let result = match honoured {
            Ok(Some(done)) => Ok(done),
            // Only a tombstone on the remote, which this machine's copy
            // holds turns it did not see.
            Ok(None) if branches.is_empty() => match state.find_session_if_any(id) {
                Ok(Some(sd)) => deleted.noted(state, remote, id, Outcome::Ahead, sd.dir, None),
                Ok(None) => Ok((Outcome::Tombstoned, None, None)),
                Err(e) => Err(e),
            },
            Ok(None) => fetch_one(
                state,
                remote,
                &transfer,
                id,
                branches,
                take,
                locks,
                &mut unbound,
            )
            .and_then(|(o, p, m)| deleted.noted(state, remote, id, o, p, m)),
            Err(e) => Err(e),
        };
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

/// Sessions brought in between two [`ensure_bound`] calls: each call reads
/// and writes projects.json and locations.json, which list every session,
/// so one call a session would make a fetch quadratic in the sessions.
const BIND_EVERY: usize = 256;

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

/// A redaction on one side, never a divergence to keep: the remote's tips
/// that a redaction here replaced count as what replaced them (`push`
/// replaces them: `ahead`); a remote whose history is a redaction of this
/// machine's whole history is taken, this machine's kept under
/// `refs/redacted/` (`redacted`). `None`: neither.
fn redacted(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    remote: &str,
    id: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &tree::Newest,
) -> Result<Option<(Outcome, Option<String>)>> {
    use crate::secrets::redact;
    let here = redact::replaced_on_disk(sd);
    if branches.values().any(|t| here.contains_key(t)) {
        let mapped: BTreeMap<String, Oid> = branches
            .iter()
            .map(|(b, t)| (b.clone(), *here.get(t).unwrap_or(t)))
            .collect();
        let newest = tree::newest_tip(repo, &mapped)?;
        if matches!(
            tree::relation(sd, repo, &mapped, &newest)?,
            tree::Relation::Same | tree::Relation::Ahead
        ) {
            return Ok(Some((
                Outcome::Ahead,
                Some(format!(
                    "`{remote}` has this session as it was before its redaction here: `git-session push {remote}` replaces it"
                )),
            )));
        }
    }
    let there = redact::replaced_in(repo, newest.tree)?;
    if there.is_empty() {
        return Ok(None);
    }
    let local: BTreeMap<String, Oid> = repo.branches()?.into_iter().collect();
    let remote_tips: Vec<Oid> = branches.values().copied().collect();
    // Every local tip is history the redaction replaced (or the remote
    // has it as it is), and every node here is in the remote's tree.
    let mut covered = !local.is_empty();
    for tip in local.values() {
        if !covered {
            break;
        }
        let target = *there.get(tip).unwrap_or(tip);
        let mut within = false;
        for r in &remote_tips {
            if tree::is_ancestor(repo, target, *r)? {
                within = true;
                break;
            }
        }
        covered = within;
    }
    if !covered
        || local.values().all(|t| !there.contains_key(t))
        || !tree::node_keys(&tree::names_on_disk(sd)?)
            .is_subset(&tree::node_keys(&tree::history_names(repo, newest.tree)?))
    {
        return Ok(None);
    }
    let backup = format!(
        "{}{}-{remote}/",
        redact::BACKUP_REFS,
        crate::out::now() as u64
    );
    let keep: Vec<RefUpdate> = local
        .iter()
        .filter(|(_, t)| there.contains_key(*t))
        .map(|(b, t)| RefUpdate::Set {
            name: format!("{backup}{b}"),
            expected: Expected::Any,
            new: *t,
            message: format!("fetch: the history before `{remote}`'s redaction"),
        })
        .collect();
    repo.update_refs(&keep)?;
    tree::take_redaction(sd, repo, branches, newest)?;
    // Branches the remote does not have go to their redacted commits too.
    let others: Vec<RefUpdate> = local
        .iter()
        .filter(|(b, _)| !branches.contains_key(*b))
        .filter_map(|(b, t)| {
            Some(RefUpdate::Advance {
                branch: b.clone(),
                old: *t,
                new: *there.get(t)?,
                message: format!("fetch: `{remote}`'s redaction"),
            })
        })
        .collect();
    if !others.is_empty() {
        repo.update_refs(&others)?;
    }
    Ok(Some((
        Outcome::Redacted,
        Some(format!(
            "`{remote}` has this session redacted: taken; the history before is kept here under {backup} until `git-session redact {id} --drop-backup`"
        )),
    )))
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
fn refresh_row(state: &StateDir, sd: &SessionDir, id: &str) -> Result<()> {
    match registry::fresh_row(sd, id)? {
        // Journaled (a fetch of a thousand sessions rewrote index.json a
        // thousand times), folded into index.json when the fetch ends.
        Some(row) => registry::journal_append(state, &row),
        None => Ok(()),
    }
}

/// A session new on this machine: built in a staging directory beside its
/// place, checked as `verify` checks a session, then published by rename,
/// with its index row (its location and its project come with the next
/// [`ensure_bound`]).
fn create(
    state: &StateDir,
    remote: &str,
    transfer: &SessionRepo,
    id: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &tree::Newest,
) -> Result<PathBuf> {
    let meta = tree::meta_of(transfer, newest)?;
    if meta.str("id") != Some(id) {
        return Err(Error::refused(
            "sync::meta_mismatch",
            format!(
                "the remote's session `{id}` has a meta.json that names {}",
                meta.str("id")
                    .map_or("no session".to_string(), |o| format!("session `{o}`"))
            ),
            Some(
                "nothing was written; the remote holds a session that is not what its refs say"
                    .into(),
            ),
        ));
    }
    let project = meta
        .str("project_id")
        .filter(|p| *p != "default")
        .map(str::to_string);
    if let Some(p) = &project {
        ids::project_id(p)?;
    }
    state.ensure()?;
    let target = match &project {
        Some(p) => state.project_session_dir(p, id),
        None => state.default_session_dir(id),
    };
    let parent = state.make_parent_checked(&target)?;
    let staging = parent.join(format!("{TEMP_PREFIX}fetch-{id}-{}", ids::generate("")));
    let result = (|| {
        std::fs::create_dir(&staging).io("create", &staging)?;
        let mut repo = SessionRepo::init_empty(&staging)?;
        let tips: Vec<Oid> = branches.values().copied().collect();
        repo.copy_from(transfer, &tips)?;
        repo.sync_objects()?;
        repo.release_packs();
        let sd = SessionDir::new(staging.clone());
        tree::check_out(&repo, &sd, newest.tree, tree::Existing::Refuse, None)?;
        let mut updates: Vec<RefUpdate> = branches
            .iter()
            .map(|(b, tip)| RefUpdate::Create {
                branch: b.clone(),
                new: *tip,
                message: format!("fetch: {remote}"),
            })
            .collect();
        updates.extend(branches.iter().map(|(b, tip)| RefUpdate::Set {
            name: format!("refs/remotes/{remote}/{b}"),
            expected: Expected::Absent,
            new: *tip,
            message: format!("fetch: {remote}"),
        }));
        updates.push(RefUpdate::AttachHead {
            branch: newest.branch.clone(),
        });
        repo.update_refs(&updates)?;
        let mut index = repo.index_from_tree(newest.tree)?;
        repo.write_index(&mut index)?;
        sd.write_snapshot(&Snapshot {
            commit: Some(newest.commit.to_string()),
            ..Default::default()
        })?;
        // Validated as a legacy repository before it is published.
        let check = crate::verify::check_session(id, &sd, false);
        if check.problems() > 0 {
            let shown: Vec<String> = check
                .findings
                .iter()
                .filter(|f| f.severity == records::Severity::Problem)
                .take(3)
                .map(|f| format!("{}: {}", f.kind, f.message))
                .collect();
            return Err(Error::refused(
                "sync::fetched_invalid",
                format!("the remote's session `{id}` does not verify: {}", shown.join("; ")),
                Some("nothing was published; repair it on the machine that pushed it, then push again".into()),
            ));
        }
        atomic::sync_dir(&staging)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    atomic::crash_point("fetch-before-publish");
    if let Err(e) = std::fs::rename(&staging, &target) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e).io("publish the session", &target);
    }
    atomic::sync_dir(&parent)?;
    atomic::crash_point("fetch-after-publish");
    refresh_row(state, &SessionDir::new(target.clone()), id)?;
    Ok(target)
}

/// Sessions bound to a project (`unbound`: id and directory): each
/// project registered (from the remote's record when this machine does not
/// know it), each session in its project's list, each location recorded;
/// projects.json and locations.json read once and written once for them
/// all, and not written when everything is there (a fetch killed after
/// publishing a session is completed by the next, which finds it in place).
fn ensure_bound(
    state: &StateDir,
    remote: &str,
    transfer: &SessionRepo,
    unbound: &[(String, PathBuf)],
    removed: &BTreeSet<String>,
    locks: LockOptions,
) -> Result<()> {
    let mut bound = Vec::new();
    for (id, dir) in unbound {
        // A meta.json that does not read binds nothing (that session's own
        // fetch said why; `verify` reports it), and stops no other.
        let Ok(meta) = Meta::read(&SessionDir::new(dir.clone()).meta()) else {
            continue;
        };
        if let Some(p) = meta
            .str("project_id")
            .filter(|p| *p != "default" && ids::project_id(p).is_ok())
        {
            bound.push((id.as_str(), p.to_string(), dir));
        }
    }
    if bound.is_empty() {
        return Ok(());
    }
    let ps = projects::read(state)?;
    // A removed project this machine does not have is not made again (its
    // sessions keep their project_id, as `project remove` leaves them).
    let registered = |p: &String| ps.contains_key(p) || !removed.contains(p);
    let unlisted: Vec<(String, String)> = bound
        .iter()
        .filter(|(_, p, _)| registered(p))
        .filter(|(id, p, _)| {
            !ps.get(p).is_some_and(|row| {
                row.get("session_ids")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(id)))
            })
        })
        .map(|(id, p, _)| (p.clone(), id.to_string()))
        .collect();
    // Only a project this machine does not know is registered (each
    // registration reads and writes projects.json).
    let new_projects: BTreeSet<&str> = unlisted
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| !ps.contains_key(*p))
        .collect();
    for p in new_projects {
        register_project(state, remote, transfer, p, locks)?;
    }
    if !unlisted.is_empty() {
        crate::project::add_sessions(state, &unlisted, locks)?;
    }
    let located = registry::read_locations(state)?;
    let unlocated: Vec<(String, PathBuf)> = bound
        .iter()
        .filter(|(id, _, dir)| {
            located
                .get(*id)
                .is_none_or(|l| Path::new(l) != dir.as_path())
        })
        .map(|(id, _, dir)| (id.to_string(), dir.to_path_buf()))
        .collect();
    if !unlocated.is_empty() {
        registry::set_locations(state, &unlocated, locks)?;
    }
    Ok(())
}

/// Register project `pid` when this machine does not know it: its name and
/// path from the remote's record (a path that does not exist here shows as
/// missing; `git-session relocate` points it at the local checkout).
fn register_project(
    state: &StateDir,
    remote: &str,
    transfer: &SessionRepo,
    pid: &str,
    locks: LockOptions,
) -> Result<()> {
    let record = transfer
        .ref_tip(&format!("{}projects/{pid}", tracking(remote)))?
        .and_then(|c| transfer.commit_info(c).ok())
        .and_then(|info| {
            transfer
                .tree_entry(info.tree, "project.json")
                .ok()
                .flatten()
        })
        .and_then(|blob| transfer.read_blob(blob).ok())
        .and_then(|b| serde_json::from_slice::<Map<String, Value>>(&b).ok())
        .unwrap_or_default();
    let now = crate::out::now();
    projects::update(state, locks, |ps| {
        if ps.contains_key(pid) {
            return Ok(());
        }
        let text = |k: &str| record.get(k).and_then(Value::as_str).map(str::to_string);
        let mut row = Map::new();
        row.insert("id".into(), pid.into());
        row.insert(
            "name".into(),
            text("name").unwrap_or_else(|| pid.to_string()).into(),
        );
        row.insert("path".into(), text("path").map_or(Value::Null, Value::from));
        row.insert("is_default".into(), false.into());
        row.insert("session_ids".into(), Value::Array(Vec::new()));
        row.insert("status".into(), "active".into());
        row.insert(
            "created_at".into(),
            record
                .get("created_at")
                .and_then(Value::as_f64)
                .unwrap_or(now)
                .into(),
        );
        row.insert("auto_commit".into(), false.into());
        ps.insert(pid.to_string(), row);
        Ok(())
    })
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
