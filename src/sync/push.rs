//! `push`: each session's new objects copied into the transfer repository
//! (one pack), scanned for secrets, and sent as fast-forwards in batches;
//! a deleted session's tombstone; what a killed run did not get confirmed
//! stays queued (`sync/queue-<remote>`).

use super::tombstones::tombstone_updates;
use super::*;

/// One ref a push sends.
#[derive(Debug, Clone)]
pub(super) struct Update {
    pub(super) session: String,
    pub(super) branch: Option<String>,
    pub(super) remote_ref: String,
    pub(super) new: Oid,
    pub(super) old: Option<Oid>,
    /// The remote's tip is history a redaction here replaced: sent as a
    /// forced update, leased on `old`.
    pub(super) forced: bool,
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
    let targets = push_targets(state, selection, &buried)?;
    let on_remote: HashMap<String, Oid> = crate::git::transport::ls_remote(
        &transfer.dir,
        url,
        &[SESSION_REFS, PROJECT_REFS, tombstones::TOMBSTONE_REFS],
    )?
    .into_iter()
    .collect();
    crate::out::trace("push: remote listed");
    let remote_tombs = remote_tombstones(&mut transfer, remote, url, &on_remote, printer)?;
    // The sessions the remote has a branch of: only theirs are worth a
    // look before the lock (the rest have everything to send).
    let remote_sessions: HashSet<String> = on_remote
        .keys()
        .filter_map(|r| r.strip_prefix(SESSION_REFS))
        .filter_map(parse_remote_ref)
        .map(|(id, _)| id)
        .collect();
    let look = Look {
        targets: &targets,
        on_remote: &on_remote,
        remote_sessions: &remote_sessions,
        allowed: &allowed,
        dry_run,
    };
    let (mut updates, wanted_projects) = collect_all(&look, &mut transfer, printer, &mut report)?;
    updates.extend(project_updates(
        state,
        &mut transfer,
        wanted_projects,
        &on_remote,
        dry_run,
    )?);
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
    let requeued = requeued(state, &queue_path, &updates, &look, &transfer, &buried)?;
    updates.extend(requeued);
    if dry_run {
        for u in &updates {
            report
                .refs
                .push(pushed_record(remote, u, "planned", String::new()));
        }
        return Ok(report);
    }
    write_queue(&queue_path, &updates)?;
    crate::out::trace("push: queue written");
    let to = Destination {
        remote,
        url,
        queue_path: &queue_path,
        progress: printer.progress_shown(),
    };
    send(&transfer, &to, updates, &mut report)?;
    track_pushed(state, remote, &report.refs);
    compact(&transfer.dir, printer);
    Ok(report)
}

/// Each session's branches the remote confirmed, kept as the remote's tips
/// in the session's repository (`refs/remotes/<remote>/<branch>`, where
/// `fetch` keeps them), as git keeps them after a push: `log` marks them.
/// A session busy now (a turn being committed) is left as it was, and so is
/// one that cannot be written: the next fetch sets them (the push is done
/// either way).
fn track_pushed(state: &StateDir, remote: &str, pushed: &[records::PushedRef]) {
    let mut by_session: BTreeMap<&str, Vec<RefUpdate>> = BTreeMap::new();
    let confirmed = pushed
        .iter()
        .filter(|r| matches!(r.status.as_str(), "created" | "advanced" | "replaced"));
    for r in confirmed {
        let (Some(session), Some(branch)) = (&r.session, &r.branch) else {
            continue;
        };
        let Ok(new) = Oid::from_hex(r.commit.as_bytes()) else {
            continue;
        };
        by_session.entry(session).or_default().push(RefUpdate::Set {
            name: format!("refs/remotes/{remote}/{branch}"),
            expected: Expected::Any,
            new,
            message: format!("push: {remote}"),
        });
    }
    let now = LockOptions {
        timeout: std::time::Duration::ZERO,
        no_wait: true,
        announce: false,
    };
    for (id, updates) in by_session {
        let tracked = (|| -> Result<()> {
            let Some(sd) = state.find_session_if_any(id)? else {
                return Ok(());
            };
            let _lock = lock::session(&sd, lock::Kind::Exclusive, now)?;
            SessionRepo::open(&sd.dir)?.update_refs(&updates)
        })();
        if let Err(e) = tracked {
            crate::out::trace(&format!("push: {id}'s tracking refs left: {e}"));
        }
    }
}

/// The sessions a push looks at: every candidate, or those named (one
/// deleted here is not looked at: its tombstone is what is pushed).
fn push_targets(
    state: &StateDir,
    selection: &Selection,
    buried: &BTreeMap<String, tombstones::Tombstone>,
) -> Result<Vec<(String, PathBuf)>> {
    match selection {
        Selection::All => registry::candidates(state),
        Selection::Some(ids) => ids
            .iter()
            .filter_map(|id| match state.find_session(id) {
                Ok(sd) => Some(Ok((id.clone(), sd.dir))),
                // Deleted here: its tombstone is what is pushed.
                Err(Error::SessionNotFound { .. }) if buried.contains_key(id) => None,
                Err(e) => Some(Err(e)),
            })
            .collect(),
    }
}

/// The remote's tombstones, read when it has any: a deletion pushed from
/// here goes on from the remote's last, and a session here that one covers
/// is revived by this push. Fetched only when they moved since this machine
/// last looked.
fn remote_tombstones(
    transfer: &mut SessionRepo,
    remote: &str,
    url: &str,
    on_remote: &HashMap<String, Oid>,
    printer: &crate::out::Printer,
) -> Result<BTreeMap<(tombstones::Kind, String), (Oid, tombstones::Tombstone)>> {
    let track = tracking(remote);
    let listed: BTreeMap<String, Oid> = on_remote
        .iter()
        .filter_map(|(n, id)| Some((n.strip_prefix(tombstones::TOMBSTONE_REFS)?.to_string(), *id)))
        .collect();
    if listed.is_empty() {
        return Ok(BTreeMap::new());
    }
    let tracked: BTreeMap<String, Oid> = transfer
        .refs_under(&format!("{track}tombstones/"))?
        .into_iter()
        .collect();
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
        *transfer = SessionRepo::open(&transfer.dir)?;
    }
    tombstones::fetched(transfer, &track, &mut |w| {
        printer.warn(format!("remote `{remote}`: {w}"))
    })
}

/// What a push looks at, for each session: the targets, the remote's refs
/// and which sessions it has, the allowed secrets, and whether it is a dry
/// run.
struct Look<'a> {
    targets: &'a [(String, PathBuf)],
    on_remote: &'a HashMap<String, Oid>,
    remote_sessions: &'a HashSet<String>,
    allowed: &'a BTreeSet<String>,
    dry_run: bool,
}

/// Read every target session ([`collect_session`]) on several threads
/// (each with its own handle on the transfer repository, to skip what it
/// has) while this one writes their new objects into the transfer
/// repository's pack; the updates to send and the projects they are bound
/// to. Sessions withheld for a secret or skipped are counted in `report`.
fn collect_all(
    look: &Look,
    transfer: &mut SessionRepo,
    printer: &crate::out::Printer,
    report: &mut PushReport,
) -> Result<(Vec<Update>, BTreeSet<String>)> {
    let mut wanted_projects: BTreeSet<String> = BTreeSet::new();
    let mut updates: Vec<Update> = Vec::new();
    let progress =
        crate::out::Progress::new(printer, look.targets.len() as u64, "copying sessions");
    let jobs = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let transfer_dir = transfer.dir.clone();
    let result: Result<()> = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(String, Result<Collected>)>(64);
        for w in 0..jobs {
            let tx = tx.clone();
            let transfer_dir = &transfer_dir;
            scope.spawn(move || {
                let mine = SessionRepo::open_for_reading(transfer_dir);
                for (id, dir) in look.targets.iter().skip(w).step_by(jobs) {
                    let r = match &mine {
                        Ok(t) => collect_session(
                            &SessionDir::new(dir.clone()),
                            id,
                            look.on_remote,
                            look.remote_sessions.contains(id),
                            t,
                            look.dry_run,
                            look.allowed,
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
    Ok((updates, wanted_projects))
}

/// The record of each project the pushed sessions are bound to that the
/// remote lacks (`refs/projects/<id>`, a commit holding `project.json`).
fn project_updates(
    state: &StateDir,
    transfer: &mut SessionRepo,
    wanted: BTreeSet<String>,
    on_remote: &HashMap<String, Oid>,
    dry_run: bool,
) -> Result<Vec<Update>> {
    let known_projects = projects::read(state)?;
    let mut updates = Vec::new();
    for pid in wanted {
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
    Ok(updates)
}

/// The refs an earlier run queued and did not get confirmed, for sessions
/// not looked at now, that still go: a session looked at now is pushed as
/// it is now; one deleted since is not pushed at all; nor a ref that is no
/// longer the branch's tip here, or whose turns hold a secret not allowed.
fn requeued(
    state: &StateDir,
    queue_path: &Path,
    planned: &[Update],
    look: &Look,
    transfer: &SessionRepo,
    buried: &BTreeMap<String, tombstones::Tombstone>,
) -> Result<Vec<Update>> {
    let planned: BTreeSet<&str> = planned.iter().map(|u| u.remote_ref.as_str()).collect();
    let looked: BTreeSet<&str> = look.targets.iter().map(|(id, _)| id.as_str()).collect();
    let mut out = Vec::new();
    for (name, new) in read_queue(queue_path)? {
        if planned.contains(name.as_str()) || look.on_remote.get(&name) == Some(&new) {
            continue;
        }
        let Some(rel) = name.strip_prefix(SESSION_REFS) else {
            continue;
        };
        let Some((session, branch)) = parse_remote_ref(rel) else {
            continue;
        };
        if looked.contains(session.as_str())
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
                Ok(
                    outgoing_secrets(&repo, &prefix, &[new], look.on_remote, look.allowed)?
                        .is_empty(),
                )
            })
            .unwrap_or(false);
        if !still {
            continue;
        }
        out.push(Update {
            session,
            branch: Some(branch),
            old: look.on_remote.get(&name).copied(),
            remote_ref: name,
            new,
            forced: false,
        });
    }
    Ok(out)
}

/// Where a push sends: the remote's name and URL, its queue file, and
/// whether git's progress is shown.
struct Destination<'a> {
    remote: &'a str,
    url: &'a str,
    queue_path: &'a Path,
    progress: bool,
}

/// Send `pending` in batches of [`batch_size`], each ref's answer recorded
/// in `report`; refused refs stay queued for the next run (after a fetch),
/// and only confirmed refs leave the queue.
fn send(
    transfer: &SessionRepo,
    to: &Destination,
    mut pending: Vec<Update>,
    report: &mut PushReport,
) -> Result<()> {
    let size = batch_size();
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
                crate::git::transport::push(&transfer.dir, to.url, &specs, &leases, to.progress)?;
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
                            .push(pushed_record(to.remote, &u, status, a.summary.clone()));
                        continue;
                    }
                    Some(a) => ("rejected", a.summary.clone()),
                    None => ("rejected", "the remote did not answer for it".to_string()),
                };
                report
                    .refs
                    .push(pushed_record(to.remote, &u, status.0, status.1));
                refused.push(u);
            }
            // Only confirmed refs leave the queue.
            let mut left: Vec<Update> = refused.clone();
            left.extend(work.iter().flatten().cloned());
            left.extend(pending.iter().cloned());
            write_queue(to.queue_path, &left)?;
        }
    }
    Ok(())
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
    let prefix = remote_prefix(id).ok_or(SyncError::BadRefId)?;
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
