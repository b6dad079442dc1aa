//! The repairs of `verify --fix`: what is safe to repair in a session
//! (damaged committed files restored from git, the damaged bytes kept in a
//! quarantine; blobs stored again from the files that hold their bytes; lost
//! branch refs recreated; the git index rebuilt; uncommitted turns
//! committed; stale locks and temp files removed) and in the state dir (its
//! registries, the projects' index locks, leftovers). Nothing here commits
//! bytes that do not parse or deletes a node.

use std::path::PathBuf;

use super::{Finding, Restore, SessionCheck};
use crate::backfill::{self, Target};
use crate::error::{IoContext, Result};
use crate::git::{RefUpdate, SessionRepo};
use crate::layout::lock::{self, LockOptions};
use crate::layout::{SessionDir, StateDir, atomic, registry};
use crate::mirror::{self, CommitOptions};
use crate::out::Printer;

/// Remove stray temp files; returns what was removed.
fn remove_temps(paths: &[std::path::PathBuf]) -> Vec<String> {
    let mut done = Vec::new();
    for p in paths {
        let r = match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(p),
            _ => std::fs::remove_file(p),
        };
        if r.is_ok() {
            done.push(format!("removed `{}`", p.display()));
        }
    }
    done
}

/// Finish or undo what agent commits killed midway left in the projects'
/// repositories (git's index.lock), each under its project's lock; returns
/// what was done.
fn recover_project_index_locks(state: &StateDir, locks: LockOptions) -> Result<Vec<String>> {
    use crate::git::index_lock::Recovered;
    use crate::layout::projects::{self, Project};
    let mut done = Vec::new();
    for p in projects::read(state)?
        .iter()
        .map(|(id, p)| Project::from(id, p))
        .filter(|p| p.id != "default")
    {
        let _l = lock::project(state, &p.id, lock::Kind::Exclusive, locks)?;
        for (_, what) in super::project_index_locks(state, &p, false) {
            let root = p
                .path
                .as_deref()
                .unwrap_or(std::path::Path::new(""))
                .display();
            match what {
                Recovered::Finished => done.push(format!(
                    "put the index of the agent's last commit in place in `{root}` (git's index.lock it was left in)"
                )),
                Recovered::Undone => done.push(format!(
                    "removed the index.lock an agent commit that did not land left in `{root}`"
                )),
                Recovered::TempOnly => {}
            }
        }
    }
    Ok(done)
}

/// Refuse to write below `path` when it, or a directory between the session
/// and it, is a symlink: a write must not follow a planted link out of the
/// session.
fn refuse_links(sd: &SessionDir, path: &std::path::Path) -> Result<()> {
    let rel = path.strip_prefix(&sd.dir).unwrap_or(path);
    let mut cur = sd.dir.clone();
    for part in rel.components() {
        cur.push(part);
        if std::fs::symlink_metadata(&cur).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(crate::layout::Refusal::Symlink {
                path: cur,
                help: "nothing was written; replace the link with a directory",
            }
            .into());
        }
    }
    Ok(())
}

/// Move a damaged file into the session's quarantine
/// (`.git/git-session/quarantine/`); returns where it went. A symlink is
/// moved as the link, never followed.
fn quarantine(sd: &SessionDir, rel: &str) -> Result<Option<std::path::PathBuf>> {
    let src = sd.dir.join(rel);
    if std::fs::symlink_metadata(&src).is_err() {
        return Ok(None);
    }
    let dir = sd.quarantine_dir();
    refuse_links(sd, &dir)?;
    std::fs::create_dir_all(&dir).io("create", &dir)?;
    let stamp = crate::out::now();
    let base = rel.replace('/', "_");
    let mut dest = dir.join(format!("{stamp:.0}-{base}"));
    let mut k = 1;
    while std::fs::symlink_metadata(&dest).is_ok() {
        k += 1;
        dest = dir.join(format!("{stamp:.0}-{k}-{base}"));
    }
    std::fs::rename(&src, &dest).io("move aside", &src)?;
    Ok(Some(dest))
}

/// Store blob `r.blob` again from the session's file `r.rel`, which holds
/// its bytes (read again here, under the lock, never through a link): a
/// damaged loose copy is moved to the quarantine first, since a loose file
/// there is taken as the object. Nothing is done when the file no longer
/// holds those bytes (the next `verify` reports the blob again).
fn rewrite_blob(sd: &SessionDir, repo: &mut SessionRepo, r: &Restore) -> Result<Option<String>> {
    let path = sd.dir.join(&r.rel);
    refuse_links(sd, &path)?;
    let Some(data) = super::blob_in_file(&path, r.blob).io("read", &path)? else {
        return Ok(None);
    };
    let loose = repo.loose_path(r.blob);
    refuse_links(sd, loose.parent().unwrap_or(&sd.dir))?;
    let rel = loose
        .strip_prefix(&sd.dir)
        .expect("the objects are in the session")
        .to_string_lossy()
        .into_owned();
    let moved = quarantine(sd, &rel)?;
    repo.rewrite_blob(r.blob, data)?;
    Ok(Some(match moved {
        Some(q) => format!(
            "stored blob {} again from `{}` (the damaged copy is `{}`)",
            r.blob,
            r.rel,
            q.display()
        ),
        None => format!("stored blob {} again from `{}`", r.blob, r.rel),
    }))
}

/// The repairs done under the session's exclusive lock: locks and temp
/// files, blobs stored again, damaged committed files, lost refs, the git
/// index.
fn repair_locked(
    sd: &SessionDir,
    id: &str,
    check: &SessionCheck,
    locks: LockOptions,
) -> Result<Vec<String>> {
    let mut done = Vec::new();
    let _l = lock::session(sd, lock::Kind::Exclusive, locks)?;
    let mut repo = SessionRepo::open(&sd.dir)?;
    // Our index.lock goes whatever its age (no command of ours holds it),
    // and before the temp file it may share its inode with.
    repo.clear_stale_locks();
    if check.needs_lock_cleanup {
        done.push("removed stale lock files".into());
    }
    done.extend(remove_temps(&check.stray_temps));
    for r in &check.rewrite {
        done.extend(rewrite_blob(sd, &mut repo, r)?);
    }
    if check.catalog_stale {
        crate::layout::history::Catalog::load_listed(sd)?;
        done.push("rebuilt the catalog of history/ from the directory".into());
    }
    for r in &check.restore {
        let bytes = repo.read_blob(r.blob)?;
        let target = sd.dir.join(&r.rel);
        refuse_links(sd, target.parent().unwrap_or(&sd.dir))?;
        let moved = quarantine(sd, &r.rel)?;
        atomic::write(&sd.dir.join(&r.rel), &bytes)?;
        done.push(match moved {
            Some(q) => format!(
                "restored `{}` from git (the damaged copy is `{}`)",
                r.rel,
                q.display()
            ),
            None => format!("restored `{}` from git", r.rel),
        });
    }
    // A fast-forward of HEAD's branch moves what the index must mirror.
    let mut index_from = check.index_from;
    if !check.lost.is_empty() {
        let head = repo.head()?;
        if let Some(l) = check
            .lost
            .iter()
            .find(|l| head.branch.as_deref() == Some(l.branch.as_str()))
        {
            index_from = Some(l.commit);
        }
        let updates: Vec<RefUpdate> = check
            .lost
            .iter()
            .map(|l| match l.old {
                Some(old) => RefUpdate::Advance {
                    branch: l.branch.clone(),
                    old,
                    new: l.commit,
                    message: "verify --fix: branch restored".into(),
                },
                None => RefUpdate::Create {
                    branch: l.branch.clone(),
                    new: l.commit,
                    message: "verify --fix: branch restored".into(),
                },
            })
            .collect();
        repo.update_refs(&updates)?;
        for l in &check.lost {
            done.push(format!(
                "{} branch `{}` at {}",
                if l.old.is_some() {
                    "fast-forwarded"
                } else {
                    "recreated"
                },
                l.branch,
                l.commit.to_hex_with_len(8)
            ));
        }
    }
    if check.mixed_names {
        drop(repo);
        let r = crate::mirror::rename::to_python_naming(sd, id, crate::out::now())?;
        done.push(format!(
            "renamed {} node file(s) as the Python store names them ({} commit(s))",
            r.files,
            r.commits.len()
        ));
        return Ok(done);
    }
    if let Some(c) = index_from {
        let mut index = repo.index_from_tree(repo.commit_info(c)?.tree)?;
        repo.write_index(&mut index)?;
        let snap = sd.read_snapshot();
        sd.write_snapshot(&crate::layout::paths::Snapshot {
            commit: Some(c.to_string()),
            pending: None,
            ..snap
        })?;
        done.push(format!(
            "rebuilt the git index from commit {}",
            c.to_hex_with_len(8)
        ));
    }
    Ok(done)
}

/// Commit node metadata stamped after its turn, only where that is a commit
/// on the latest turn: HEAD on a branch whose tip is the last commit written.
fn commit_restamps(locks: LockOptions, out: &Printer, t: &Target) -> Result<Option<String>> {
    let _l = lock::session(&t.dir, lock::Kind::Exclusive, locks)?;
    let repo = SessionRepo::open(&t.dir.dir)?;
    let head = repo.head()?;
    let latest = t.dir.read_snapshot().commit;
    if head.branch.is_none() || head.commit.map(|c| c.to_string()) != latest {
        return Ok(None);
    }
    drop(repo);
    let meta = crate::layout::schema::Meta::read(&t.dir.meta()).ok();
    let opts = CommitOptions {
        rescan: true,
        list_history: true,
        now: meta
            .as_ref()
            .and_then(|m| m.f64("updated_at"))
            .unwrap_or_else(crate::out::now),
        message: Some("session: node metadata stamped after its turn".into()),
        ..Default::default()
    };
    let made = mirror::commit_pending(&t.dir, &t.id, &opts, &mut |_| Ok(()), &mut |w| out.warn(w))?;
    Ok(made.last().map(|m| m.commit.clone()))
}

/// Apply the safe repairs for one session; returns what was done.
pub fn repair_session(
    state: &StateDir,
    locks: LockOptions,
    out: &Printer,
    t: &Target,
    check: &SessionCheck,
) -> Result<Vec<String>> {
    let mut done = Vec::new();
    if t.dir.git_dir().is_dir() {
        done.extend(repair_locked(&t.dir, &t.id, check, locks)?);
    } else {
        done.extend(remove_temps(&check.stray_temps));
    }
    // Uncommitted turns (backfill takes the session lock itself). A node that
    // does not parse blocks it: nothing commits such bytes.
    if (check.needs_commit || !t.dir.git_dir().is_dir()) && !check.commit_blocked {
        let o = backfill::one(state, t, locks, false, &mut |w| out.warn(w))?;
        if o.created_repo {
            done.push("created the repository".into());
        }
        if !o.commits.is_empty() {
            done.push(crate::out::commits_done(&o.commits, false));
        }
        if let Some(t) = &o.title {
            done.push(format!("titled \"{}\"", crate::out::in_one_line(t)));
        }
    }
    if check.restamped {
        match commit_restamps(locks, out, t)? {
            Some(c) => done.push(format!("committed the stamped node metadata ({c})")),
            None => out.note(format!(
                "{}: stamped node metadata left uncommitted: HEAD is not on the latest turn",
                t.id
            )),
        }
    }
    Ok(done)
}

/// Repairs of the state dir's registries and leftovers (`--all --fix`),
/// for the `findings` of [`super::check_state`] over `sessions` and the
/// leftovers it found (`temps`). `fixed` is told each repair as it is made:
/// the session it concerns, if one, and what was done.
pub fn repair_state(
    state: &StateDir,
    locks: LockOptions,
    sessions: &[Target],
    findings: &[Finding],
    temps: &[PathBuf],
    fixed: &mut dyn FnMut(Option<&str>, String),
) -> Result<()> {
    // A delete a crash cut short: finished, not only its temp removed.
    for (id, _) in crate::lifecycle::finish_deletes(state, locks, None)? {
        fixed(None, format!("finished deleting `{id}`"));
    }
    for d in remove_temps(temps) {
        fixed(None, d);
    }
    if findings.iter().any(|f| f.kind == "project_index_lock") {
        for d in recover_project_index_locks(state, locks)? {
            fixed(None, d);
        }
    }
    let known: std::collections::BTreeSet<&str> = sessions.iter().map(|t| t.id.as_str()).collect();
    let dangling: Vec<String> = super::dangling_locations(state, &known)
        .into_iter()
        .filter(|(_, _, elsewhere)| *elsewhere)
        .map(|(id, _, _)| id)
        .collect();
    for (session, project) in super::binding_fixes(state) {
        // Under its project and only there (bound to `default`:
        // taken off the others).
        crate::project::add_session(state, &project, &session, locks)?;
        let d = format!("listed `{session}` under project `{project}` in projects.json");
        fixed(Some(&session), d);
    }
    let missing = super::missing_locations(state, sessions);
    if !missing.is_empty() {
        registry::set_locations(state, &missing, locks)?;
        let d = format!("recorded {} location(s) in locations.json", missing.len());
        fixed(None, d);
    }
    if !dangling.is_empty() {
        registry::remove_locations(state, &dangling, locks)?;
        let d = format!("removed {} dangling location(s)", dangling.len());
        fixed(None, d);
    }
    if findings
        .iter()
        .any(|f| f.kind.starts_with("index_") && f.fixable)
    {
        let n = registry::rebuild_index(state, locks)?;
        let d = format!("rebuilt index.json ({n} rows)");
        fixed(None, d);
    }
    Ok(())
}
