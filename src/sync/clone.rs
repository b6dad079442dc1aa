//! Sessions and projects new to this machine (what `clone` brings, and
//! `fetch` of a session not here yet): a session created from the remote's
//! branches, validated before it is published, and bound to its project,
//! which is registered from the remote's record unless it was removed.

use super::fetch::refresh_row;
use super::*;

/// A session new on this machine: built in a staging directory beside its
/// place, checked as `verify` checks a session, then published by rename,
/// with its index row (its location and its project come with the next
/// [`ensure_bound`]).
pub(super) fn create(
    state: &StateDir,
    remote: &str,
    transfer: &SessionRepo,
    id: &str,
    branches: &BTreeMap<String, Oid>,
    newest: &tree::Newest,
) -> Result<PathBuf> {
    let meta = tree::meta_of(transfer, newest)?;
    if meta.str("id") != Some(id) {
        return Err(SyncError::MetaMismatch {
            id: id.to_string(),
            names: meta
                .str("id")
                .map_or("no session".to_string(), |o| format!("session `{o}`")),
        }
        .into());
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
            return Err(SyncError::FetchedInvalid {
                id: id.to_string(),
                problems: shown.join("; "),
            }
            .into());
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
pub(super) fn ensure_bound(
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
pub(super) fn register_project(
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

/// Sessions brought in between two [`ensure_bound`] calls: each call reads
/// and writes projects.json and locations.json, which list every session,
/// so one call a session would make a fetch quadratic in the sessions.
pub(super) const BIND_EVERY: usize = 256;
