//! A project's directory moved (SPEC §5.11): the plan, a pure function of
//! the project, its new path and the recorded locations; and its apply,
//! which writes the project's path, the moved locations and one record node
//! per bound session (committed as `record: …` when it can stand alone).
//! Run again for the path the project already has, it completes the move
//! its sessions' records name, only in the sessions bound before it.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::git::SessionRepo;
use crate::layout::lock::{self, LockOptions};
use crate::layout::projects::Project;
use crate::layout::schema::{self, Meta};
use crate::layout::{SessionDir, StateDir, atomic, projects, registry};
use crate::mirror::{self, CommitOptions};
use crate::store::{self, NewNode};

/// What a relocation will write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub project: String,
    pub old: PathBuf,
    pub new: PathBuf,
    /// Locations under the old path and where they are now.
    pub locations: Vec<(String, PathBuf)>,
    /// The sessions that get a record node.
    pub sessions: Vec<String>,
    /// Every session bound to the project: where a run for the path the
    /// project already has finds the move it completes.
    pub bound: Vec<String>,
    /// The path it moved from, for a run that completes a move no
    /// session's record names (every session failed to take its record).
    pub from: Option<PathBuf>,
}

/// A move the sessions' records name: its old path, and when the first of
/// those records was written (the move's time).
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    pub old: PathBuf,
    pub at: f64,
}

/// The plan: the locations (`locations.json` entries) under the project's
/// old path move with it; every bound session, or `only`, gets a record.
pub fn plan(
    project: &Project,
    new: &Path,
    locations: impl IntoIterator<Item = (String, String)>,
    only: Option<&str>,
) -> Plan {
    let old = project.path.clone().unwrap_or_default();
    // A project with no recorded path has nothing under it.
    let moved = locations
        .into_iter()
        .filter(|_| !old.as_os_str().is_empty())
        .filter_map(|(id, loc)| {
            let rest = Path::new(&loc).strip_prefix(&old).ok()?.to_path_buf();
            Some((id, new.join(rest)))
        })
        .collect();
    Plan {
        project: project.id.clone(),
        new: new.to_path_buf(),
        locations: moved,
        sessions: match only {
            Some(s) => vec![s.to_string()],
            None => project.session_ids.clone(),
        },
        bound: project.session_ids.clone(),
        from: None,
        old,
    }
}

/// Whether a run for the path the project already has completes a move
/// (after a run in which some sessions could not take their record).
pub fn repeated(plan: &Plan) -> bool {
    plan.old == plan.new
}

/// The move a repeated run completes: the one to the project's path that
/// the bound sessions' latest records name, dated by the earliest of them;
/// `None` when no session records a move to it (nothing to complete).
fn the_move(state: &StateDir, plan: &Plan) -> Option<Move> {
    // Each session once (`--session` names one of the bound ones, mostly).
    plan.bound
        .iter()
        .chain(plan.sessions.iter().filter(|s| !plan.bound.contains(s)))
        .filter_map(|s| latest_record(&state.find_session(s).ok()?, plan).ok()?)
        .filter(|r| r.new == plan.new)
        .map(|r| Move {
            old: r.old,
            at: r.at,
        })
        .min_by(|a, b| a.at.total_cmp(&b.at))
}

/// Whether a session joined the project after `m`: its `bound_at`, or for
/// one an older version bound, its `created_at`, is later. A session that
/// says neither counts as bound before (it gets the record, as it always
/// did).
pub fn bound_after(meta: &Meta, m: &Move) -> bool {
    meta.earliest_bind_time().is_some_and(|t| t > m.at)
}

/// The record node a session gets: a runtime `project/relocate` node off
/// the conversation (no predecessor; the head does not move).
pub fn record_node(plan: &Plan) -> NewNode {
    let mut metadata = serde_json::Map::new();
    metadata.insert("display".into(), "runtime".into());
    metadata.insert("project_id".into(), plan.project.clone().into());
    metadata.insert(
        "old_path".into(),
        plan.old.to_string_lossy().into_owned().into(),
    );
    metadata.insert(
        "new_path".into(),
        plan.new.to_string_lossy().into_owned().into(),
    );
    NewNode {
        role: "code".into(),
        id: Some(crate::layout::ids::generate("reloc_")),
        caller: Some("ROOT".into()),
        predecessor: Some(None),
        name: Some("project/relocate".into()),
        output: format!("{} → {}", plan.old.display(), plan.new.display()).into(),
        metadata,
        ..Default::default()
    }
}

/// What happened in one session.
pub enum Recorded {
    /// The record node, and its commit when it could stand alone.
    Node { id: String, commit: Option<String> },
    /// The session was not found: no record.
    Missing,
    /// Run again for a path the project already has: the session's latest
    /// relocation record already names it, so none is added.
    Already,
    /// Run again for a path the project already has: the session joined the
    /// project after the move (it never lived at the old path), so none is
    /// added.
    BoundAfter,
    /// Run again for a path the project already has, and no session
    /// records a move to it: there is no move to complete.
    NoMove,
    /// The record could not be written (the session is busy, or refused).
    Failed(String),
}

/// What a relocation did: the move a repeated run completed (`None` on a
/// first run, or with no move to complete), and each session's record.
pub struct Applied {
    pub completed: Option<Move>,
    pub sessions: Vec<(String, Recorded)>,
}

/// Write the plan: the project's path (the registry, first), the moved
/// locations, then each session's record under its exclusive lock.
pub fn apply(
    state: &StateDir,
    plan: &Plan,
    locks: LockOptions,
    now: f64,
    warn: &mut dyn FnMut(String),
) -> Result<Applied> {
    projects::update(state, locks, |ps| {
        ps.get_mut(&plan.project)
            .expect("the plan is of a registered project")
            .insert(
                "path".into(),
                plan.new.to_string_lossy().into_owned().into(),
            );
        Ok(())
    })?;
    atomic::crash_point("relocate-after-project");
    if !plan.locations.is_empty() {
        registry::set_locations(state, &plan.locations, locks)?;
    }
    // Run again for the path the project already has (after a run some
    // sessions could not take their record): a session whose latest record
    // names that path has it, one bound after the move never lived at the
    // old path, and the others get the move those recorded (not "new →
    // new"). No record of a move to it: nothing to complete.
    let repeated = repeated(plan);
    let the_move = if repeated {
        the_move(state, plan).or_else(|| plan.from.clone().map(|old| Move { old, at: now }))
    } else {
        None
    };
    let moved = Plan {
        old: the_move
            .as_ref()
            .map_or_else(|| plan.old.clone(), |m| m.old.clone()),
        ..plan.clone()
    };
    // One session's record, under its exclusive lock.
    let mut record = |sd: &SessionDir, id: &str| -> Result<Recorded> {
        let _l = lock::session(sd, lock::Kind::Exclusive, locks)?;
        if repeated && latest_record(sd, plan)?.is_some_and(|r| r.new == plan.new) {
            return Ok(Recorded::Already);
        }
        let mut meta = Meta::read(&sd.meta())?;
        if let Some(m) = &the_move
            && bound_after(&meta, m)
        {
            return Ok(Recorded::BoundAfter);
        }
        let mut new = record_node(&moved);
        new.naming = state.naming_for(sd);
        let node = store::append(sd, &mut meta, new, now)?;
        atomic::write(&sd.meta(), &meta.to_json())?;
        registry::journal_append(state, &schema::index_row(&meta, id, None))?;
        // The record is in history/ now; when it cannot be committed on its
        // own, it waits for the next turn like any node.
        let commit = commit_record(sd, id, warn).unwrap_or_else(|e| {
            warn(format!(
                "`{id}`: the record waits for the next turn's commit: {e}"
            ));
            None
        });
        Ok(Recorded::Node {
            id: node.id,
            commit,
        })
    };
    // One session that cannot take its record (busy, or refused by the
    // hostile-tree checks) does not keep the others from theirs.
    let mut out = Vec::new();
    for s in &plan.sessions {
        if repeated && the_move.is_none() {
            out.push((s.clone(), Recorded::NoMove));
            continue;
        }
        let recorded = match state.find_session(s) {
            Ok(sd) => record(&sd, s).unwrap_or_else(|e| Recorded::Failed(e.to_string())),
            Err(_) => Recorded::Missing,
        };
        out.push((s.clone(), recorded));
    }
    Ok(Applied {
        completed: the_move,
        sessions: out,
    })
}

/// A relocation record: the move it names and when it was written.
struct Record {
    old: PathBuf,
    new: PathBuf,
    at: f64,
}

/// The session's latest relocation record of the plan's project. Only tool
/// nodes are read, from the newest back.
fn latest_record(sd: &SessionDir, plan: &Plan) -> Result<Option<Record>> {
    let catalog = crate::layout::history::Catalog::load(sd)?;
    let history = sd.history();
    for e in catalog
        .rev_entries()
        .filter(|e| matches!(e.letter, 't' | 'c'))
    {
        let Ok(n) = crate::layout::history::read_node(&history, &e) else {
            continue;
        };
        let meta = |k: &str| {
            n.metadata
                .get(k)
                .and_then(|v| v.as_str())
                .map(PathBuf::from)
        };
        if n.name == "project/relocate"
            && meta("project_id").is_some_and(|p| p == Path::new(&plan.project))
        {
            return Ok(meta("old_path")
                .zip(meta("new_path"))
                .map(|(old, new)| Record {
                    old,
                    new,
                    at: n.created_at,
                }));
        }
    }
    Ok(None)
}

/// Commit the record node as an event of its own (`record: …`), when it is
/// the only node not yet in git and HEAD is on the latest turn; otherwise
/// it waits for the next turn (no commit on a checked-out view, no half turn).
pub(crate) fn commit_record(
    sd: &SessionDir,
    id: &str,
    warn: &mut dyn FnMut(String),
) -> Result<Option<String>> {
    let repo = SessionRepo::open(&sd.dir)?;
    let head = repo.head()?;
    let latest = sd.read_snapshot().commit;
    if head.branch.is_none() || (latest.is_some() && head.commit.map(|c| c.to_string()) != latest) {
        return Ok(None);
    }
    drop(repo);
    let opts = CommitOptions {
        now: crate::out::now(),
        ..Default::default()
    };
    let dry = CommitOptions {
        dry_run: true,
        ..opts.clone()
    };
    let plan = mirror::commit_pending(sd, id, &dry, &mut |_| Ok(()), &mut |_| {})?;
    if plan.len() != 1 || plan[0].nodes != 1 {
        return Ok(None);
    }
    let made = mirror::commit_pending(sd, id, &opts, &mut |_| Ok(()), warn)?;
    Ok(made.last().map(|m| m.commit.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(path: &str, sessions: &[&str]) -> Project {
        Project {
            id: "p1".into(),
            name: "app".into(),
            path: Some(PathBuf::from(path)),
            status: "active".into(),
            auto_commit: false,
            hooks: false,
            session_ids: sessions.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_locations_under_the_old_path_move_and_every_session_gets_a_record() {
        let p = project("/home/u/app", &["s1", "s2"]);
        let locations = [
            ("s1", "/home/u/app/.openprogram/sessions/s1"),
            ("s3", "/home/u/other/.openprogram/sessions/s3"),
            ("s4", "/home/u/application/x"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()));
        let plan = plan(&p, Path::new("/srv/app"), locations, None);
        assert_eq!(
            plan.locations,
            vec![(
                "s1".to_string(),
                PathBuf::from("/srv/app/.openprogram/sessions/s1")
            )],
            "a sibling whose name starts the same does not move"
        );
        assert_eq!(plan.sessions, ["s1", "s2"]);
        assert_eq!(plan.old, PathBuf::from("/home/u/app"));
        let mut pathless = p.clone();
        pathless.path = None;
        let abs = [("s1".to_string(), "/home/u/app/x".to_string())];
        assert!(
            super::plan(&pathless, Path::new("/srv"), abs, None)
                .locations
                .is_empty()
        );
        let only = super::plan(&p, Path::new("/srv/app"), [], Some("s2"));
        assert_eq!(only.sessions, ["s2"]);
        assert!(only.locations.is_empty());
    }

    #[test]
    fn a_session_is_bound_after_a_move_by_its_bind_time_else_its_creation() {
        let m = Move {
            old: "/a".into(),
            at: 100.0,
        };
        let meta = |v: serde_json::Value| Meta(v.as_object().unwrap().clone());
        let after = |v| bound_after(&meta(v), &m);
        assert!(after(
            serde_json::json!({"bound_at": 101.0, "created_at": 1.0})
        ));
        assert!(!after(
            serde_json::json!({"bound_at": 100.0, "created_at": 1.0})
        ));
        assert!(!after(
            serde_json::json!({"bound_at": 99.0, "created_at": 150.0})
        ));
        // Bound by an older version: its creation is the earliest it can be.
        assert!(after(serde_json::json!({"created_at": 150.0})));
        assert!(!after(serde_json::json!({"created_at": 50.0})));
        assert!(!after(serde_json::json!({})), "no time: bound before");
    }

    #[test]
    fn the_record_is_a_runtime_node_off_the_conversation() {
        let plan = plan(&project("/a", &[]), Path::new("/b"), [], None);
        let n = record_node(&plan);
        assert_eq!(n.role, "code");
        assert_eq!(n.name.as_deref(), Some("project/relocate"));
        assert_eq!(n.caller.as_deref(), Some("ROOT"));
        assert_eq!(n.predecessor, Some(None));
        assert_eq!(n.metadata["old_path"], "/a");
        assert_eq!(n.metadata["new_path"], "/b");
        assert!(n.id.unwrap().starts_with("reloc_"));
    }
}
