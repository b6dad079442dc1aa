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

use crate::context::Ctx;
use git_session::backfill::{self, Target};
use git_session::error::{Error, Result, exit};
use git_session::out::records;
use git_session::out::{Progress, style};
use git_session::verify::{self, Finding, SessionCheck, Severity, Stats};

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
#[command(after_long_help = git_session::verify::kinds_help())]
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
    let (note, kind_style) = match f.severity {
        Severity::Note => ("note: ", style::NOTE),
        Severity::Problem => ("", style::PROBLEM),
    };
    let line = ctx
        .out
        .styled()
        .plain(&who)
        .paint(kind_style, &format!("{note}{}", f.kind))
        .plain(&format!(": {} ({})", f.message, f.path.display()));
    ctx.out.styled_line(&line);
    ctx.out.line(format!("    fix: {}", f.fix));
}

fn print_stats(ctx: &Ctx, id: &str, s: &Stats, human: bool) {
    ctx.out.record(&git_session::out::records::SessionStats {
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
            Err(e @ Error::Layout(_)) => {
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

/// What the checks and repairs of the sessions came to.
#[derive(Default)]
struct Tally {
    /// Problems left.
    remaining: usize,
    /// Sessions repaired.
    fixed: usize,
    clean: usize,
    /// Sessions whose lock was busy.
    busy: usize,
}

pub fn run(ctx: &Ctx, args: VerifyArgs) -> Result<u8> {
    let jobs = backfill::jobs(args.jobs)?;
    // What this process journaled and has not folded yet (a `batch` folds
    // when it waits for input; the demo before it verifies) is in
    // index.json before it is checked as a file, as after a one-shot
    // command.
    git_session::layout::registry::fold_owed(ctx.locks)?;
    let targets = targets(ctx, &args)?;
    let Tally {
        mut remaining,
        fixed,
        clean,
        busy,
    } = verify_sessions(ctx, &args, &targets, jobs);
    // Repairs of the state dir's registries and leftovers (`--all --fix`).
    let mut state_fixed = 0usize;
    if args.all {
        remaining += verify_state(ctx, &args, &targets, &mut state_fixed)?;
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

/// Check each session (in parallel, printed in id order) and, with
/// `--fix`, repair it.
fn verify_sessions(ctx: &Ctx, args: &VerifyArgs, targets: &[Target], jobs: usize) -> Tally {
    let progress = Progress::new(&ctx.out, targets.len() as u64, "verify");
    let mut tally = Tally::default();
    backfill::for_each_parallel(
        targets,
        jobs,
        |t| verify::check_session_locked(t, ctx.locks, args.objects),
        |i, r| {
            progress.inc();
            let t = &targets[i];
            let check = match r {
                Ok(c) => c,
                Err(e) => {
                    if matches!(e, Error::LockBusy { .. }) {
                        tally.busy += 1;
                    } else {
                        tally.remaining += 1;
                    }
                    progress.suspend(|| {
                        eprint!(
                            "git-session: cannot verify `{}`:\n{}",
                            t.id,
                            git_session::out::render_error(&e)
                        )
                    });
                    return;
                }
            };
            let (check, repaired) = fix_session(ctx, args, t, check, &progress, &mut tally.busy);
            tally.fixed += usize::from(repaired);
            let problems = check.problems();
            if problems == 0 {
                tally.clean += 1;
            }
            tally.remaining += problems;
            progress.suspend(|| {
                check.findings.iter().for_each(|f| print_finding(ctx, f));
                print_stats(ctx, &t.id, &check.stats, args.stats);
            });
        },
    );
    progress.finish();
    tally
}

/// With `--fix`, repair a session and check it again; returns the last
/// check and whether something was repaired.
fn fix_session(
    ctx: &Ctx,
    args: &VerifyArgs,
    t: &Target,
    mut check: SessionCheck,
    progress: &Progress,
    busy: &mut usize,
) -> (SessionCheck, bool) {
    // One repair can enable the next (a recreated ref leaves the
    // index to rebuild): repeat while a pass does something.
    let mut repaired = false;
    for _ in 0..3 {
        if !args.fix || !check.findings.iter().any(|f| f.fixable) {
            break;
        }
        match verify::repair_session(&ctx.state, ctx.locks, &ctx.out, t, &check) {
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
                        *busy += 1;
                    }
                    eprint!(
                        "git-session: repair of `{}` failed:\n{}",
                        t.id,
                        git_session::out::render_error(&e)
                    )
                });
                break;
            }
        }
    }
    (check, repaired)
}

/// The state dir's checks (`--all`) and, with `--fix`, its repairs;
/// returns the problems left.
fn verify_state(
    ctx: &Ctx,
    args: &VerifyArgs,
    targets: &[Target],
    state_fixed: &mut usize,
) -> Result<usize> {
    let (mut state_findings, temps) = verify::check_state(&ctx.state, targets);
    if args.fix && state_findings.iter().any(|f| f.fixable) {
        verify::repair_state(
            &ctx.state,
            ctx.locks,
            targets,
            &state_findings,
            &temps,
            &mut |session, d| {
                report_fixed(ctx, session, d);
                *state_fixed += 1;
            },
        )?;
        state_findings = verify::check_state(&ctx.state, targets).0;
    }
    let remaining = state_findings
        .iter()
        .filter(|f| f.severity == Severity::Problem)
        .count();
    for f in &state_findings {
        print_finding(ctx, f);
    }
    Ok(remaining)
}
