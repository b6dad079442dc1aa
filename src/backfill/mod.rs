//! Backfill (SPEC §5.13): bring sessions whose DAG is ahead of git up to
//! date, turn by turn, in seq order. A directory with `history/` but no
//! `.git` gets a repository first; a repository with uncommitted nodes gets
//! the missing turns. Commit times come from the nodes, so the result is
//! deterministic: run twice, or on a copy, and the commit ids are the same.
//! A session that has no title gets the first-turn title (SPEC §5.3), as
//! any session does at `commit-turn`.

use std::path::PathBuf;

use crate::error::{IoContext, Result, Usage};
use crate::git::SessionRepo;
use crate::layout::history::{self, Catalog};
use crate::layout::lock::{self, LockOptions};
use crate::layout::paths::is_session_dir;
use crate::layout::schema::{self, Meta};
use crate::layout::{SessionDir, StateDir, TEMP_PREFIX, atomic, ids, registry};
use crate::mirror::{self, CommitOptions, Made};
use crate::store;

/// One session to backfill.
#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    pub dir: SessionDir,
}

/// Every session directory in the state dir: those with a `meta.json` or a
/// `history/` (a session the Python store never gave a repository still
/// counts), in the standard places and in `locations.json`. Sorted by id.
pub fn all_targets(state: &StateDir) -> Result<Vec<Target>> {
    let mut found = std::collections::BTreeMap::new();
    let mut scan = |dir: PathBuf| {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return;
        };
        for de in rd.flatten() {
            let name = de.file_name().to_string_lossy().into_owned();
            if ids::session_id(&name).is_err() {
                continue;
            }
            let p = de.path();
            let is_dir = de.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && is_session_dir(&p) {
                found.entry(name).or_insert(p);
            }
        }
    };
    state.session_parents().into_iter().for_each(&mut scan);
    for (id, path) in registry::read_locations(state)? {
        let p = PathBuf::from(path);
        // Not through a link in the state dir (`verify` reports the link).
        if ids::session_id(&id).is_ok() && state.linked_ancestor(&p).is_none() && is_session_dir(&p)
        {
            found.entry(id).or_insert(p);
        }
    }
    Ok(found
        .into_iter()
        .map(|(id, dir)| Target {
            id,
            dir: SessionDir::new(dir),
        })
        .collect())
}

/// What backfill did (or, dry, would do) to one session.
pub type Outcome = crate::out::records::Backfill;

/// The time a session began, for its root commit: `created_at`, else its
/// first node's time.
fn start_time(sd: &SessionDir, meta: Option<&Meta>, catalog: &Catalog) -> f64 {
    if let Some(t) = meta.and_then(|m| m.f64("created_at")) {
        return t;
    }
    catalog
        .entries()
        .next()
        .and_then(|e| history::read_node(&sd.history(), &e).ok())
        .map(|n| n.created_at)
        .unwrap_or(0.0)
}

/// The time of a commit that holds no node: the session's last activity.
fn last_time(meta: Option<&Meta>) -> f64 {
    meta.and_then(|m| m.f64("updated_at").or_else(|| m.f64("created_at")))
        .unwrap_or(0.0)
}

/// Give `sd` a repository: built beside it under a temp name, then its `.git`
/// renamed into place, so a crash leaves either no repo or a whole one.
/// Returns false when another process made it first.
fn init_in_place(sd: &SessionDir, time: f64) -> Result<bool> {
    let tmp = sd
        .dir
        .join(format!("{TEMP_PREFIX}gitinit-{}", ids::generate("")));
    std::fs::create_dir(&tmp).io("create", &tmp)?;
    let result = (|| {
        SessionRepo::init(&tmp, time)?;
        atomic::crash_point("backfill-before-publish");
        match std::fs::rename(tmp.join(".git"), sd.git_dir()) {
            Ok(()) => Ok(true),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::DirectoryNotEmpty
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e).io("publish the repository", sd.git_dir()),
        }
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    let made = result?;
    atomic::sync_dir(&sd.dir)?;
    Ok(made)
}

/// Backfill one session: its repository when it has none, its missing
/// turns, and the first-turn title when it has none (SPEC §5.3, as
/// `commit-turn` gives it; never over a title the user gave), which goes
/// into the session's row of the list registry too.
pub fn one(
    state: &StateDir,
    t: &Target,
    locks: LockOptions,
    dry_run: bool,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let sd = &t.dir;
    let md = std::fs::symlink_metadata(&sd.dir).io("inspect the session directory", &sd.dir)?;
    if md.file_type().is_symlink() {
        return Err(crate::session::SessionError::LinkedDirToBackfill {
            dir: sd.dir.clone(),
        }
        .into());
    }
    sd.check_links()?;
    let meta = match Meta::read(&sd.meta()) {
        Ok(m) => Some(m),
        Err(_) if !sd.meta().exists() => None,
        Err(e) => return Err(e),
    };
    let mut created_repo = false;
    if !sd.git_dir().exists() {
        let catalog = Catalog::read(&sd.history())?;
        if dry_run {
            // Plan against an empty history: every turn is new.
            let nodes = history::read_all(&sd.history(), &catalog, warn);
            let groups = crate::session::group_pending(&nodes, &Default::default());
            let turns = crate::session::turn_numbers(&nodes, &groups);
            let title = meta
                .clone()
                .and_then(|mut m| store::first_turn_title(sd, &catalog, &mut m));
            let commits: Vec<Made> = groups
                .iter()
                .zip(turns)
                .map(|(g, turn)| {
                    let ns = &nodes[g.range.clone()];
                    Made {
                        commit: String::new(),
                        parent: None,
                        turn,
                        branch: String::new(),
                        new_branch: false,
                        first_seq: ns.first().map(|n| n.seq.max(0) as u64),
                        last_seq: ns.last().map(|n| n.seq.max(0) as u64),
                        nodes: ns.len(),
                        files_only: ns.is_empty(),
                    }
                })
                .collect();
            return Ok(outcome(t, true, commits, title));
        }
        created_repo = init_in_place(sd, start_time(sd, meta.as_ref(), &catalog))?;
    }
    let _lock = lock::acquire(&sd.lock_file(), lock::Kind::Exclusive, locks)?;
    let opts = CommitOptions {
        now: last_time(meta.as_ref()),
        dry_run,
        bulk: true,
        list_history: true,
        ..Default::default()
    };
    // meta.json as it is under the lock; titled before anything is
    // written, so that the title goes into the turn's commit.
    let mut meta = match sd.meta().exists() {
        true => Some(Meta::read(&sd.meta())?),
        false => None,
    };
    let mut title = None;
    let commits = mirror::commit_pending(
        sd,
        &t.id,
        &opts,
        &mut |_| {
            if let Some(m) = meta.as_mut() {
                title = store::first_turn_title(sd, &Catalog::load_listed(sd)?, m);
                if title.is_some() {
                    atomic::write(&sd.meta(), &m.to_json())?;
                }
            }
            Ok(())
        },
        warn,
    )?;
    if dry_run {
        title = meta.and_then(|mut m| {
            let catalog = Catalog::read(&sd.history()).ok()?;
            store::first_turn_title(sd, &catalog, &mut m)
        });
    } else {
        if let (Some(m), Some(_)) = (&meta, &title) {
            registry::journal_append(state, &schema::index_row(m, &t.id, None))?;
        }
        mirror::maintain_if_due(sd)?;
    }
    Ok(outcome(t, created_repo, commits, title))
}

fn outcome(t: &Target, created_repo: bool, commits: Vec<Made>, title: Option<String>) -> Outcome {
    Outcome {
        session: t.id.clone(),
        created_repo,
        turns: commits.iter().filter(|c| c.is_turn()).count(),
        commits,
        title,
    }
}

/// The sessions a command names, or every one with `--all`.
pub fn select(state: &StateDir, all: bool, ids: &[String]) -> Result<Vec<Target>> {
    if all {
        return all_targets(state);
    }
    ids.iter()
        .map(|id| {
            Ok(Target {
                id: id.clone(),
                dir: state.find_session(id)?,
            })
        })
        .collect()
}

/// Workers for `--jobs` (default: the number of cores).
pub fn jobs(requested: Option<usize>) -> Result<usize> {
    match requested {
        Some(0) => Err(Usage::Jobs.into()),
        Some(n) => Ok(n.min(64)),
        None => Ok(std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(64)),
    }
}

/// Run `work` on every target with `jobs` threads; results reach `sink` on
/// this thread in the targets' order, whichever finishes first, so a
/// command's output is the same from one run to the next. A worker runs at
/// most a few targets ahead of the oldest result not yet given to `sink`:
/// memory stays flat however many targets, and however slow one of them.
pub fn for_each_parallel<R: Send>(
    targets: &[Target],
    jobs: usize,
    work: impl Fn(&Target) -> R + Sync,
    mut sink: impl FnMut(usize, R),
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let jobs = jobs.min(targets.len()).max(1);
    let next = AtomicUsize::new(0);
    let gate = Gate::new(4 * jobs);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, work, gate) = (&next, &work, &gate);
            scope.spawn(move || {
                // A worker that panics lets the others run on (the panic
                // then reaches the caller when the scope ends).
                let _open = gate.opened_on_panic();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(t) = targets.get(i) else { break };
                    gate.wait_for(i);
                    if tx.send((i, work(t))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let _open = gate.opened_on_panic();
        let mut early = std::collections::BTreeMap::new();
        let mut want = 0usize;
        for (i, r) in rx {
            early.insert(i, r);
            while let Some(r) = early.remove(&want) {
                sink(want, r);
                want += 1;
                gate.given(want);
            }
        }
    });
}

/// How far `for_each_parallel`'s workers may run ahead: target `i` starts
/// once fewer than `window` results before it are still to be given. Never
/// a deadlock: the oldest result not yet given is being worked on by a
/// worker that does not wait.
struct Gate {
    given: std::sync::Mutex<usize>,
    moved: std::sync::Condvar,
    window: usize,
}

impl Gate {
    fn new(window: usize) -> Gate {
        Gate {
            given: std::sync::Mutex::new(0),
            moved: std::sync::Condvar::new(),
            window,
        }
    }

    fn wait_for(&self, i: usize) {
        let mut n = self.given.lock().unwrap_or_else(|e| e.into_inner());
        while i >= n.saturating_add(self.window) {
            n = self.moved.wait(n).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn given(&self, n: usize) {
        *self.given.lock().unwrap_or_else(|e| e.into_inner()) = n;
        self.moved.notify_all();
    }

    /// A guard that, dropped by a panic, lets every waiter through.
    fn opened_on_panic(&self) -> impl Drop + '_ {
        struct Open<'a>(&'a Gate);
        impl Drop for Open<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.given(usize::MAX);
                }
            }
        }
        Open(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn targets(n: usize) -> Vec<Target> {
        (0..n)
            .map(|i| Target {
                id: format!("s{i}"),
                dir: SessionDir::new(format!("/nonexistent/s{i}").into()),
            })
            .collect()
    }

    #[test]
    fn results_come_in_the_targets_order_whichever_finishes_first() {
        let ts = targets(40);
        // The first of each ten is slow: the others finish before it.
        let mut got = Vec::new();
        for_each_parallel(
            &ts,
            4,
            |t| {
                let i: usize = t.id[1..].parse().unwrap();
                if i.is_multiple_of(10) {
                    std::thread::sleep(Duration::from_millis(30));
                }
                t.id.clone()
            },
            |i, id| got.push((i, id)),
        );
        let want: Vec<(usize, String)> = (0..40).map(|i| (i, format!("s{i}"))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn workers_run_only_a_window_ahead_of_the_oldest_result() {
        let ts = targets(100);
        let started = AtomicUsize::new(0);
        let most_ahead = AtomicUsize::new(0);
        let given = AtomicUsize::new(0);
        for_each_parallel(
            &ts,
            2,
            |t| {
                let i: usize = t.id[1..].parse().unwrap();
                started.fetch_add(1, Ordering::SeqCst);
                most_ahead.fetch_max(i - given.load(Ordering::SeqCst), Ordering::SeqCst);
                if i == 0 {
                    // Held up: the other worker must stop at the window.
                    std::thread::sleep(Duration::from_millis(100));
                }
            },
            |_, ()| {
                given.fetch_add(1, Ordering::SeqCst);
            },
        );
        assert_eq!(started.load(Ordering::SeqCst), 100);
        // Window 4 × 2 jobs: target i starts once i < given + 8.
        assert!(most_ahead.load(Ordering::SeqCst) < 8, "{most_ahead:?}");
    }

    #[test]
    fn a_panicking_worker_reaches_the_caller_and_hangs_nothing() {
        let ts = targets(50);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for_each_parallel(
                &ts,
                2,
                |t| {
                    if t.id == "s1" {
                        panic!("worker fails");
                    }
                },
                |_, ()| {},
            )
        }));
        assert!(r.is_err());
    }
}
