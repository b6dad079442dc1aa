//! `verify`: prove that every node is in git and git says what the files say
//! (SPEC §5.14).
//!
//! Reads: every session's files and repository, the registries. Writes:
//! nothing, or with `--fix` what is safe to repair: damaged committed files
//! restored from git (the damaged bytes kept in a quarantine), blobs missing
//! or damaged in git stored again from the files that hold their bytes (a
//! damaged loose copy quarantined), lost branch
//! refs recreated under the names they were made with, the git index rebuilt, uncommitted turns committed, index
//! rows rebuilt, dangling locations of sessions found elsewhere, our temp
//! files. It never commits bytes that do not parse, never deletes a node,
//! and never adds a commit on a checked-out view. Locks: each session,
//! shared (exclusive while fixing). Prints: one finding per problem with the
//! command that fixes it, per-session figures under `--json` (and with
//! `--stats`); exit 1 when a problem remains, 75 when a session was busy.

use crate::backfill::{self, Target};
use crate::context::Ctx;
use crate::error::{Error, IoContext, Result, exit};
use crate::git::{RefUpdate, SessionRepo};
use crate::layout::{SessionDir, atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::out::Progress;
use crate::out::records;
use crate::verify::{self, Finding, SessionCheck, Severity, Stats};

/// Check that the DAG files and their git mirror agree.
///
/// Node files are immutable records: every node must be held by a commit
/// that a branch reaches, byte for byte. meta.json and the session's other
/// files are mutable: what changed since the last turn is committed with the
/// next one, so they are checked for sense (meta.json parses, names the
/// session, its head resolves), not against HEAD. Per session: names match
/// payloads, seqs and ids are unique, predecessors and callers resolve, the
/// Session/Turn/Nodes trailers agree with the DAG, the git index mirrors the
/// latest commit, git objects are intact, no temp files or stale git locks
/// are left. Per state dir (`--all`): index rows agree with meta.json,
/// locations resolve, no invalid directories. A session's objects are
/// checked after its background packing run, if one is going, has ended.
/// Exit 0 when clean (notes do not count), 1 when problems remain, 75 when a
/// session's lock was busy.
#[derive(Debug, clap::Args)]
#[command(after_long_help = crate::verify::kinds_help())]
pub struct VerifyArgs {
    /// Sessions to verify
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub sessions: Vec<String>,
    /// Every session and the state dir itself
    #[arg(long)]
    pub all: bool,
    /// Repair what is safe (never deletes a node) and say what was done
    #[arg(long)]
    pub fix: bool,
    /// Also read every object the branches reach (commits, trees, blobs)
    /// and check it against its id, as `git fsck` does: finds a stored
    /// object damaged on disk; reads the whole history, so it is slower
    #[arg(long)]
    pub objects: bool,
    /// Sessions checked in parallel; the output stays in id order
    /// [default: the number of cores]
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Print each session's figures: DAG turns and turn commits per branch,
    /// highest seq and highest committed seq (always in `--json`)
    #[arg(long)]
    pub stats: bool,
}

/// A repair of the state dir (or a binding) made: its record and its line.
fn report_fixed(ctx: &Ctx, session: Option<&str>, action: String) {
    ctx.out.line(format!("fixed: {action}"));
    ctx.out.record(&records::Fixed {
        session: session.map(str::to_owned),
        action,
    });
}

fn print_finding(ctx: &Ctx, f: &Finding) {
    ctx.out.record(f);
    let who = f
        .session
        .as_deref()
        .map(|s| format!("{s}: "))
        .unwrap_or_default();
    let note = if f.severity == Severity::Note {
        "note: "
    } else {
        ""
    };
    ctx.out.line(format!(
        "{who}{note}{}: {} ({})",
        f.kind,
        f.message,
        f.path.display()
    ));
    ctx.out.line(format!("    fix: {}", f.fix));
}

fn print_stats(ctx: &Ctx, id: &str, s: &Stats, human: bool) {
    ctx.out.record(&crate::out::records::SessionStats {
        session: id,
        stats: s,
    });
    if !human {
        return;
    }
    let seq = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    ctx.out.line(format!(
        "{id}: {} DAG turn(s), {} turn commit(s), {} other commit(s); highest seq {}, committed {}; {} file(s) pending",
        s.dag_turns,
        s.turn_commits,
        s.other_commits,
        seq(s.max_seq),
        seq(s.max_committed_seq),
        s.pending_files
    ));
    for b in &s.branches {
        ctx.out.line(format!(
            "    {}: {} DAG turn(s), {} turn commit(s), {} other",
            b.name, b.dag_turns, b.turn_commits, b.other_commits
        ));
    }
}

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
fn recover_project_index_locks(ctx: &Ctx) -> Result<Vec<String>> {
    use crate::git::index_lock::Recovered;
    use crate::layout::projects::{self, Project};
    let mut done = Vec::new();
    for p in projects::read(&ctx.state)?
        .iter()
        .map(|(id, p)| Project::from(id, p))
        .filter(|p| p.id != "default")
    {
        let _l = lock::project(&ctx.state, &p.id, lock::Kind::Exclusive, ctx.locks)?;
        for (_, what) in verify::project_index_locks(&ctx.state, &p, false) {
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
            return Err(Error::refused(
                "layout::symlink",
                format!("`{}` is a symbolic link", cur.display()),
                Some("nothing was written; replace the link with a directory".into()),
            ));
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
fn rewrite_blob(
    sd: &SessionDir,
    repo: &mut SessionRepo,
    r: &verify::Restore,
) -> Result<Option<String>> {
    let path = sd.dir.join(&r.rel);
    refuse_links(sd, &path)?;
    let Some(data) = verify::blob_in_file(&path, r.blob).io("read", &path)? else {
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
    ctx: &Ctx,
) -> Result<Vec<String>> {
    let mut done = Vec::new();
    let _l = ctx.lock_session(sd, lock::Kind::Exclusive)?;
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
fn commit_restamps(ctx: &Ctx, t: &Target) -> Result<Option<String>> {
    let _l = ctx.lock_session(&t.dir, lock::Kind::Exclusive)?;
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
    let made = mirror::commit_pending(&t.dir, &t.id, &opts, &mut |_| Ok(()), &mut |w| {
        ctx.out.warn(w)
    })?;
    Ok(made.last().map(|m| m.commit.clone()))
}

/// Apply the safe repairs for one session; returns what was done.
fn repair(ctx: &Ctx, t: &Target, check: &SessionCheck) -> Result<Vec<String>> {
    let mut done = Vec::new();
    if t.dir.git_dir().is_dir() {
        done.extend(repair_locked(&t.dir, &t.id, check, ctx)?);
    } else {
        done.extend(remove_temps(&check.stray_temps));
    }
    // Uncommitted turns (backfill takes the session lock itself). A node that
    // does not parse blocks it: nothing commits such bytes.
    if (check.needs_commit || !t.dir.git_dir().is_dir()) && !check.commit_blocked {
        let o = backfill::one(&ctx.state, t, ctx.locks, false, &mut |w| ctx.out.warn(w))?;
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
        match commit_restamps(ctx, t)? {
            Some(c) => done.push(format!("committed the stamped node metadata ({c})")),
            None => ctx.out.note(format!(
                "{}: stamped node metadata left uncommitted: HEAD is not on the latest turn",
                t.id
            )),
        }
    }
    Ok(done)
}

/// The sessions to check. A named session that every other command
/// refuses for its tree (a link, a special file, a repository sent
/// elsewhere) is still checked, so that what is wrong is a finding with
/// its repair, as under `--all`, rather than an error.
fn targets(ctx: &Ctx, args: &VerifyArgs) -> Result<Vec<Target>> {
    if args.all {
        return backfill::select(&ctx.state, true, &[]);
    }
    let mut everywhere: Option<Vec<Target>> = None;
    let mut out = Vec::new();
    for id in &args.sessions {
        match ctx.state.find_session(id) {
            Ok(dir) => out.push(Target {
                id: id.clone(),
                dir,
            }),
            Err(e)
                if miette::Diagnostic::code(&e)
                    .is_some_and(|c| c.to_string().starts_with("git_session::layout::")) =>
            {
                if everywhere.is_none() {
                    everywhere = Some(backfill::all_targets(&ctx.state)?);
                }
                match everywhere
                    .as_ref()
                    .and_then(|all| all.iter().find(|t| t.id == *id))
                {
                    Some(t) => out.push(Target {
                        id: t.id.clone(),
                        dir: t.dir.clone(),
                    }),
                    None => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

pub fn run(ctx: &Ctx, args: VerifyArgs) -> Result<u8> {
    let jobs = backfill::jobs(args.jobs)?;
    // What this process journaled and has not folded yet (a `batch` folds
    // when it waits for input; the demo before it verifies) is in
    // index.json before it is checked as a file, as after a one-shot
    // command.
    crate::layout::registry::fold_owed(ctx.locks)?;
    let targets = targets(ctx, &args)?;
    let progress = Progress::new(&ctx.out, targets.len() as u64, "verify");
    let mut remaining = 0usize;
    let mut fixed = 0usize;
    let mut clean = 0usize;
    let mut busy = 0usize;
    backfill::for_each_parallel(
        &targets,
        jobs,
        |t| -> Result<SessionCheck> {
            // Not through a link (`check_session` reports it, reading
            // nothing through it).
            let git_dir = std::fs::symlink_metadata(t.dir.git_dir());
            let linked = std::fs::symlink_metadata(&t.dir.dir).is_ok_and(|m| m.is_symlink());
            let _l = if !linked && git_dir.is_ok_and(|m| m.is_dir()) {
                Some(ctx.lock_session(&t.dir, lock::Kind::Shared)?)
            } else {
                None
            };
            Ok(verify::check_session(&t.id, &t.dir, args.objects))
        },
        |i, r| {
            progress.inc();
            let t = &targets[i];
            let mut check = match r {
                Ok(c) => c,
                Err(e) => {
                    if matches!(e, Error::LockBusy { .. }) {
                        busy += 1;
                    } else {
                        remaining += 1;
                    }
                    progress.suspend(|| {
                        eprint!(
                            "git-session: cannot verify `{}`:\n{}",
                            t.id,
                            crate::out::render_error(&e)
                        )
                    });
                    return;
                }
            };
            // One repair can enable the next (a recreated ref leaves the
            // index to rebuild): repeat while a pass does something.
            let mut repaired = false;
            for _ in 0..3 {
                if !args.fix || !check.findings.iter().any(|f| f.fixable) {
                    break;
                }
                match repair(ctx, t, &check) {
                    Ok(done) => {
                        for d in &done {
                            ctx.out.record(&records::Fixed {
                                session: Some(t.id.clone()),
                                action: d.clone(),
                            });
                            progress.suspend(|| ctx.out.line(format!("{}: fixed: {d}", t.id)));
                        }
                        check = verify::check_session(&t.id, &t.dir, args.objects);
                        if done.is_empty() {
                            break;
                        }
                        repaired = true;
                    }
                    Err(e) => {
                        progress.suspend(|| {
                            if matches!(e, Error::LockBusy { .. }) {
                                busy += 1;
                            }
                            eprint!(
                                "git-session: repair of `{}` failed:\n{}",
                                t.id,
                                crate::out::render_error(&e)
                            )
                        });
                        break;
                    }
                }
            }
            fixed += usize::from(repaired);
            let problems = check.problems();
            if problems == 0 {
                clean += 1;
            }
            remaining += problems;
            progress.suspend(|| {
                check.findings.iter().for_each(|f| print_finding(ctx, f));
                print_stats(ctx, &t.id, &check.stats, args.stats);
            });
        },
    );
    progress.finish();
    // Repairs of the state dir's registries and leftovers (`--all --fix`).
    let mut state_fixed = 0usize;
    if args.all {
        let (mut state_findings, temps) = verify::check_state(&ctx.state, &targets);
        if args.fix && state_findings.iter().any(|f| f.fixable) {
            // A delete a crash cut short: finished, not only its temp removed.
            for (id, _) in crate::lifecycle::finish_deletes(&ctx.state, ctx.locks, None)? {
                report_fixed(ctx, None, format!("finished deleting `{id}`"));
                state_fixed += 1;
            }
            for d in remove_temps(&temps) {
                report_fixed(ctx, None, d);
                state_fixed += 1;
            }
            if state_findings
                .iter()
                .any(|f| f.kind == "project_index_lock")
            {
                for d in recover_project_index_locks(ctx)? {
                    report_fixed(ctx, None, d);
                    state_fixed += 1;
                }
            }
            let dangling: Vec<String> = state_findings
                .iter()
                .filter(|f| f.kind == "location_dangling" && f.fixable)
                .filter_map(|f| f.message.split('`').nth(1).map(str::to_owned))
                .collect();
            for (session, project) in verify::binding_fixes(&ctx.state) {
                // Under its project and only there (bound to `default`:
                // taken off the others).
                crate::project::add_session(&ctx.state, &project, &session, ctx.locks)?;
                let d = format!("listed `{session}` under project `{project}` in projects.json");
                report_fixed(ctx, Some(&session), d);
                state_fixed += 1;
            }
            let missing = verify::missing_locations(&ctx.state, &targets);
            if !missing.is_empty() {
                registry::set_locations(&ctx.state, &missing, ctx.locks)?;
                let d = format!("recorded {} location(s) in locations.json", missing.len());
                report_fixed(ctx, None, d);
                state_fixed += 1;
            }
            if !dangling.is_empty() {
                registry::remove_locations(&ctx.state, &dangling, ctx.locks)?;
                let d = format!("removed {} dangling location(s)", dangling.len());
                report_fixed(ctx, None, d);
                state_fixed += 1;
            }
            if state_findings
                .iter()
                .any(|f| f.kind.starts_with("index_") && f.fixable)
            {
                let n = registry::rebuild_index(&ctx.state, ctx.locks)?;
                let d = format!("rebuilt index.json ({n} rows)");
                report_fixed(ctx, None, d);
                state_fixed += 1;
            }
            state_findings = verify::check_state(&ctx.state, &targets).0;
        }
        remaining += state_findings
            .iter()
            .filter(|f| f.severity == Severity::Problem)
            .count();
        for f in &state_findings {
            print_finding(ctx, f);
        }
    }
    ctx.out.record(&records::VerifySummary {
        sessions: targets.len(),
        clean,
        repaired: fixed,
        state_repairs: state_fixed,
        problems: remaining,
        busy,
    });
    ctx.out.note(format!(
        "verified {} session{}: {clean} clean, {remaining} problem{}{}{}",
        targets.len(),
        if targets.len() == 1 { "" } else { "s" },
        if remaining == 1 { "" } else { "s" },
        if args.fix && state_fixed > 0 {
            format!(
                ", {fixed} repaired, {state_fixed} state-dir repair{}",
                if state_fixed == 1 { "" } else { "s" }
            )
        } else if args.fix {
            format!(", {fixed} repaired")
        } else {
            String::new()
        },
        if busy > 0 {
            format!(", {busy} busy (not checked)")
        } else {
            String::new()
        }
    ));
    Ok(if busy > 0 {
        exit::BUSY
    } else if remaining > 0 {
        exit::NO
    } else {
        exit::OK
    })
}
