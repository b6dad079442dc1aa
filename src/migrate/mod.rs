//! Migrate (SPEC §5.15): bring legacy in-project session repositories
//! (`<project>/.openprogram/sessions/<id>/`, listed in `locations.json`)
//! home to `sessions/projects/<project>/<id>/`, through a journal:
//! copy into `sessions/.migration/staging/`, verify the copy, publish by
//! rename, copy recovery data, update the registries. A run after a crash
//! resumes each session from its last recorded step.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{IoContext, Result};
use crate::layout::lock::LockOptions;
use crate::layout::projects::{self, Project};
use crate::layout::schema::{self, Meta};
use crate::layout::{SessionDir, StateDir, atomic, ids, registry};

/// Steps, in order; the journal records the last one done.
pub const STEPS: [&str; 6] = [
    "planned",
    "copied",
    "verified",
    "published",
    "recovered",
    "done",
];

pub use crate::layout::migration::{Entry, Journal, journal_path, read_journal};

/// What `migrate` refuses (`git_session::migrate::…`, exit 1): the
/// session is left where it was.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum MigrateError {
    /// The copy differs from its source (`why`: the first difference).
    #[error("the copy of `{id}` failed verification: {why}")]
    #[diagnostic(
        code(git_session::migrate::copy_unverified),
        help("run `git-session migrate` again")
    )]
    CopyUnverified { id: String, why: String },

    /// The source changed since it was copied: it is not removed.
    #[error("`{id}`: the source and the published copy differ ({why}); the source is kept")]
    #[diagnostic(
        code(git_session::migrate::source_changed),
        help(
            "the session went on in one of them since it was copied: compare the two by hand before removing the source"
        )
    )]
    SourceChanged { id: String, why: String },
}

fn staging(state: &StateDir, id: &str) -> PathBuf {
    state.sessions().join(".migration").join("staging").join(id)
}

fn write_journal(state: &StateDir, j: &Journal) -> Result<()> {
    let p = journal_path(state);
    state.make_parent_checked(&p)?;
    if j.sessions.is_empty() {
        let _ = std::fs::remove_file(&p);
        return Ok(());
    }
    atomic::write(&p, &serde_json::to_vec_pretty(j).expect("json"))
}

/// A legacy repository to bring home, or one that cannot be reached.
/// A legacy session found: where, its project, and why it cannot be
/// migrated now (and what to run first), if so.
pub type Found = crate::out::records::Blocked;

/// Legacy repositories: `locations.json` entries and the
/// `.openprogram/sessions/*` of every registered project.
pub fn inventory(state: &StateDir) -> Result<Vec<Found>> {
    let ps = projects::read(state)?;
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    let project_for = |id: &str, path: &Path| -> Option<Project> {
        projects::of_session(&ps, id).or_else(|| {
            // <project>/.openprogram/sessions/<id>
            let root = path.parent()?.parent()?.parent()?;
            ps.iter()
                .map(|(pid, p)| Project::from(pid, p))
                .find(|p| p.path.as_deref() == Some(root))
        })
    };
    // The state dir is home, never a legacy source: a location inside it is
    // a bound session's (recorded for the Python store), and the default
    // project, whose path is the home directory, holds the state dir.
    let root = std::fs::canonicalize(&state.root).unwrap_or_else(|_| state.root.clone());
    let at_home = |p: &Path| {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        p.starts_with(&root) || p.starts_with(&state.root)
    };
    for (id, loc) in registry::read_locations(state)? {
        if ids::session_id(&id).is_err() {
            continue;
        }
        let path = PathBuf::from(&loc);
        if at_home(&path) {
            continue;
        }
        let project = project_for(&id, &path);
        let problem = if !path.join(crate::layout::paths::HISTORY).is_dir()
            && !path.join(crate::layout::paths::META).is_file()
        {
            Some(match &project {
                Some(p) => format!(
                    "`{}` does not exist: the project moved; run `git-session relocate {} <new path>` first",
                    path.display(),
                    p.id
                ),
                None => format!(
                    "`{}` does not exist; fix or remove its locations.json entry",
                    path.display()
                ),
            })
        } else if project.is_none() {
            Some(format!(
                "no registered project holds `{}`; run `git-session project add <project dir>` first",
                path.display()
            ))
        } else {
            None
        };
        found.insert(
            id.clone(),
            Found {
                session: id,
                source: path,
                project_id: project.map(|p| p.id),
                problem,
            },
        );
    }
    for (pid, raw) in &ps {
        let p = Project::from(pid, raw);
        let is_default = raw.get("is_default").and_then(|v| v.as_bool()) == Some(true);
        let Some(proot) = p.path.as_deref() else {
            continue;
        };
        let legacy = proot.join(".openprogram").join("sessions");
        if p.id == "default" || is_default || at_home(&legacy) || root.starts_with(proot) {
            continue;
        }
        for e in std::fs::read_dir(&legacy).into_iter().flatten().flatten() {
            let id = e.file_name().to_string_lossy().into_owned();
            if ids::session_id(&id).is_ok()
                && !found.contains_key(&id)
                && e.path().join(crate::layout::paths::META).is_file()
            {
                found.insert(
                    id.clone(),
                    Found {
                        session: id,
                        source: e.path(),
                        project_id: Some(p.id.clone()),
                        problem: None,
                    },
                );
            }
        }
    }
    Ok(found.into_values().collect())
}

/// What a migration does not copy from a legacy repo (a stranger's tree):
/// its git config and hooks (the copy gets the tool's pinned config), our
/// caches, lock and counters (rebuilt), special files (a FIFO would block
/// the copy), and symlinks where the layout expects the tool's own files or
/// directories (`meta.json`, `history/`, `workdir/`, `workdir/attachments/`,
/// anything in `.git/`), which would lead later writes out of the session.
fn not_copied(rel: &Path, ft: std::fs::FileType) -> bool {
    use crate::layout::paths::{is_layout_place, is_local_to_repo};
    let special = !ft.is_dir() && !ft.is_file() && !ft.is_symlink();
    is_local_to_repo(rel) || special || (ft.is_symlink() && is_layout_place(rel))
}

/// Copy a directory tree (files, symlinks, modes) but what
/// [`not_copied`] names, and pin the copy's git config.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let mut walk = walkdir::WalkDir::new(from).into_iter();
    while let Some(e) = walk.next() {
        let e = e
            .map_err(|e| std::io::Error::other(e.to_string()))
            .io("walk", from)?;
        let rel = e.path().strip_prefix(from).expect("below the root");
        let ft = e.file_type();
        if not_copied(rel, ft) {
            if ft.is_dir() {
                walk.skip_current_dir();
            }
            continue;
        }
        let dest = to.join(rel);
        if ft.is_dir() {
            std::fs::create_dir_all(&dest).io("create", &dest)?;
        } else if ft.is_symlink() {
            let target = std::fs::read_link(e.path()).io("read the link", e.path())?;
            std::os::unix::fs::symlink(target, &dest).io("create the link", &dest)?;
        } else {
            std::fs::copy(e.path(), &dest).io("copy", e.path())?;
        }
    }
    if to.join(".git").is_dir() {
        crate::git::write_pinned_config(&to.join(".git"))?;
    }
    Ok(())
}

/// Every file of `a` is in `b` with the same bytes, and the other way round.
fn identical(a: &Path, b: &Path) -> Result<Option<String>> {
    let list = |root: &Path| -> Result<BTreeMap<PathBuf, bool>> {
        let mut m = BTreeMap::new();
        // Our lock file and caches inside `.git` are not session content
        // (any of our commands may create them in the source meanwhile).
        // The config is compared apart: the copy's is pinned.
        let mut walk = walkdir::WalkDir::new(root).min_depth(1).into_iter();
        while let Some(e) = walk.next() {
            let e = e
                .map_err(|e| std::io::Error::other(e.to_string()))
                .io("walk", root)?;
            let rel = e.path().strip_prefix(root).expect("below").to_path_buf();
            if not_copied(&rel, e.file_type()) {
                if e.file_type().is_dir() {
                    walk.skip_current_dir();
                }
                continue;
            }
            m.insert(rel, e.file_type().is_dir());
        }
        Ok(m)
    };
    let (la, lb) = (list(a)?, list(b)?);
    if la.keys().collect::<Vec<_>>() != lb.keys().collect::<Vec<_>>() {
        return Ok(Some("the copy does not hold the same files".into()));
    }
    for (rel, is_dir) in la {
        if is_dir {
            continue;
        }
        let (pa, pb) = (a.join(&rel), b.join(&rel));
        let same = match (
            std::fs::symlink_metadata(&pa),
            std::fs::symlink_metadata(&pb),
        ) {
            (Ok(ma), Ok(mb)) if ma.file_type().is_symlink() => {
                mb.file_type().is_symlink()
                    && std::fs::read_link(&pa).ok() == std::fs::read_link(&pb).ok()
            }
            _ => {
                crate::layout::atomic::read(&pa).io("read", &pa)?
                    == crate::layout::atomic::read(&pb).io("read", &pb)?
            }
        };
        if !same {
            return Ok(Some(format!("`{}` differs in the copy", rel.display())));
        }
    }
    Ok(None)
}

/// Every commit reachable from the copy's refs, and its tree, reads back.
fn objects_readable(dir: &Path) -> Result<()> {
    if !dir.join(".git").is_dir() {
        return Ok(()); // a Python session without a repository: files only
    }
    let repo = crate::git::SessionRepo::open(dir)?;
    let mut stack: Vec<_> = repo.branches()?.into_iter().map(|(_, t)| t).collect();
    stack.extend(repo.head()?.commit);
    let mut seen = std::collections::HashSet::new();
    while let Some(c) = stack.pop() {
        if seen.insert(c) {
            let info = repo.commit_info(c)?;
            repo.tree_entries(info.tree)?;
            stack.extend(info.parents);
        }
    }
    Ok(())
}

fn step_index(step: &str) -> usize {
    STEPS.iter().position(|s| *s == step).unwrap_or(0)
}

/// Run one session's migration from its recorded step to the end.
fn advance(
    state: &StateDir,
    journal: &mut Journal,
    id: &str,
    locks: LockOptions,
    prune: bool,
) -> Result<()> {
    let mut e = journal.sessions[id].clone();
    let stage = staging(state, id);
    // Checked down to it: a link on the way would take the copy, and the
    // removal of a half one, out of the state dir.
    state.make_parent_checked(&stage)?;
    atomic::refuse_unsafe(&stage)?;
    let set = |journal: &mut Journal, e: &mut Entry, step: &str| -> Result<()> {
        e.step = step.into();
        journal.sessions.insert(id.to_string(), e.clone());
        write_journal(state, journal)?;
        atomic::crash_point(&format!("migrate-after-{step}"));
        Ok(())
    };
    if step_index(&e.step) < step_index("copied") {
        if stage.exists() {
            std::fs::remove_dir_all(&stage).io("remove the half copy", &stage)?;
        }
        // A source that is not a repository of its own (its refs and
        // objects in another) would be copied as one that is not either.
        SessionDir::new(e.source.clone()).refuse_redirects()?;
        copy_tree(&e.source, &stage)?;
        set(journal, &mut e, "copied")?;
    }
    if step_index(&e.step) < step_index("verified") {
        if let Some(why) = identical(&e.source, &stage)? {
            std::fs::remove_dir_all(&stage).io("remove the bad copy", &stage)?;
            e.step = "planned".into();
            journal.sessions.insert(id.to_string(), e.clone());
            write_journal(state, journal)?;
            return Err(MigrateError::CopyUnverified {
                id: id.to_string(),
                why,
            }
            .into());
        }
        objects_readable(&stage)?;
        set(journal, &mut e, "verified")?;
    }
    if step_index(&e.step) < step_index("published") {
        if !e.target.exists() {
            state.make_parent_checked(&e.target)?;
            std::fs::rename(&stage, &e.target).io("publish", &e.target)?;
            atomic::sync_dir(e.target.parent().expect("has a parent"))?;
        } else if stage.exists() {
            // Published before a crash: the staging copy is left over.
            std::fs::remove_dir_all(&stage).io("remove", &stage)?;
        }
        set(journal, &mut e, "published")?;
    }
    if step_index(&e.step) < step_index("recovered") {
        let backups = e.source.join("file_backups");
        if backups.is_dir() {
            let dest = state
                .sessions()
                .join(".file-recovery")
                .join(&e.project_id)
                .join(id);
            // Checked down to it (a link on the way would take the copy,
            // and the removal of an older one, out of the state dir).
            state.make_parent_checked(&dest)?;
            atomic::refuse_unsafe(&dest)?;
            if dest.exists() {
                std::fs::remove_dir_all(&dest).io("remove", &dest)?;
            }
            copy_tree(&backups, &dest)?;
        }
        set(journal, &mut e, "recovered")?;
    }
    if step_index(&e.step) < step_index("done") {
        // The registries: the repository is in a standard place now, and
        // recorded there for the Python store.
        registry::set_locations(state, &[(id.to_string(), e.target.clone())], locks)?;
        crate::project::add_session(state, &e.project_id, id, locks)?;
        let sd = SessionDir::new(e.target.clone());
        let mut meta = Meta::read(&sd.meta())?;
        if meta.str("project_id") != Some(e.project_id.as_str()) {
            meta.set("project_id", e.project_id.as_str());
            atomic::write(&sd.meta(), &meta.to_json())?;
        }
        let row = schema::index_row(&meta, id, None);
        let key = id.to_string();
        registry::update_index(
            state,
            locks,
            || registry::rebuild(state),
            move |idx| {
                let entry = idx.entry(key).or_default();
                for (k, v) in row {
                    entry.insert(k, v);
                }
            },
        )?;
        set(journal, &mut e, "done")?;
    }
    if prune && e.source.exists() {
        prune_source(id, &e.source, &e.target)?;
    }
    journal.sessions.remove(id);
    write_journal(state, journal)
}

/// Remove a migrated session's source, only while the published copy still
/// matches it: otherwise the source is kept and the refusal says why.
fn prune_source(id: &str, source: &Path, target: &Path) -> Result<()> {
    match identical(source, target)? {
        None => std::fs::remove_dir_all(source).io("remove the source", source),
        Some(why) => Err(MigrateError::SourceChanged {
            id: id.to_string(),
            why,
        }
        .into()),
    }
}

/// What a run did.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub migrated: Vec<String>,
    pub resumed: Vec<String>,
    pub blocked: Vec<Found>,
    pub failed: Vec<(String, String)>,
}

pub fn run(
    state: &StateDir,
    dry_run: bool,
    prune: bool,
    locks: LockOptions,
    warn: &mut dyn FnMut(String),
) -> Result<Report> {
    let mut report = Report::default();
    let mut journal = read_journal(state)?;
    let pending: Vec<String> = journal.sessions.keys().cloned().collect();
    let found = inventory(state)?;
    for f in found {
        if journal.sessions.contains_key(&f.session) {
            continue;
        }
        match (&f.problem, &f.project_id) {
            (None, Some(pid)) => {
                let target = state.project_session_dir(pid, &f.session);
                if target.exists() && !prune {
                    continue; // already home
                }
                if dry_run {
                    report.migrated.push(f.session.clone());
                    continue;
                }
                if target.exists() {
                    // Already migrated: only the source is left to prune.
                    match prune_source(&f.session, &f.source, &target) {
                        Ok(()) => registry::set_locations(
                            state,
                            &[(f.session.clone(), target.clone())],
                            locks,
                        )?,
                        Err(e) => {
                            warn(e.to_string());
                            report.failed.push((f.session.clone(), e.to_string()));
                        }
                    }
                    continue;
                }
                journal.sessions.insert(
                    f.session.clone(),
                    Entry {
                        project_id: pid.clone(),
                        source: f.source.clone(),
                        target,
                        step: "planned".into(),
                    },
                );
                write_journal(state, &journal)?;
                atomic::crash_point("migrate-after-planned");
            }
            _ => report.blocked.push(f),
        }
    }
    if dry_run {
        report.resumed = pending;
        return Ok(report);
    }
    let ids: Vec<String> = journal.sessions.keys().cloned().collect();
    for id in ids {
        let was_pending = pending.contains(&id);
        match advance(state, &mut journal, &id, locks, prune) {
            Ok(()) => {
                if was_pending {
                    report.resumed.push(id.clone());
                }
                report.migrated.push(id);
            }
            Err(e) => {
                warn(format!("`{id}` was not migrated: {e}"));
                report.failed.push((id, e.to_string()));
            }
        }
    }
    // Nothing left mid-way: no `.migration/` is left behind either (a
    // reader that takes every directory in `sessions/` for a session, as
    // the Python store does, would list it). Only empty directories go.
    if read_journal(state)?.sessions.is_empty() {
        let dir = state.sessions().join(".migration");
        let _ = std::fs::remove_dir(dir.join("staging"));
        let _ = std::fs::remove_dir(&dir);
    }
    Ok(report)
}
