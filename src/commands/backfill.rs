//! `backfill`: bring sessions whose DAG is ahead of git up to date (SPEC §5.13).
//!
//! Reads: each session's files and repository. Writes: missing repositories,
//! one commit per uncommitted turn, refs, the git index; `index.json` when
//! it is missing. Locks: each session,
//! exclusive, one at a time per worker. Prints: one record per session
//! changed, then a one-line summary.

use crate::backfill;
use crate::context::Ctx;
use crate::error::{Result, exit};
use crate::layout::registry;
use crate::out::Progress;
use crate::out::records;

/// Commit every node not yet in git, turn by turn, with the nodes' own times.
///
/// A session directory with `history/` but no `.git` gets a repository. The
/// result is deterministic: a second run changes nothing, and a copy of the
/// state dir backfills to the same commit ids.
#[derive(Debug, clap::Args)]
pub struct BackfillArgs {
    /// Sessions to backfill
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub sessions: Vec<String>,
    /// Every session in the state dir
    #[arg(long)]
    pub all: bool,
    /// Say what would be committed, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Sessions processed in parallel; the output stays in id order
    /// [default: the number of cores]
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
}

pub fn run(ctx: &Ctx, args: BackfillArgs) -> Result<u8> {
    let started = std::time::Instant::now();
    let jobs = backfill::jobs(args.jobs)?;
    let targets = backfill::select(&ctx.state, args.all, &args.sessions)?;
    let progress = Progress::new(&ctx.out, targets.len() as u64, "backfill");
    let (mut changed, mut repos, mut commits, mut turns, mut failed) = (0, 0, 0, 0u64, 0);
    let locks = ctx.locks;
    backfill::for_each_parallel(
        &targets,
        jobs,
        |t| {
            let mut warnings = Vec::new();
            let r = backfill::one(t, locks, args.dry_run, &mut |w| warnings.push(w));
            (r, warnings)
        },
        |i, (r, warnings)| {
            progress.inc();
            for w in warnings {
                progress.suspend(|| ctx.out.warn(&w));
            }
            match r {
                Ok(o) => {
                    if o.commits.is_empty() && !o.created_repo {
                        return;
                    }
                    changed += 1;
                    repos += usize::from(o.created_repo);
                    commits += o.commits.len();
                    turns += o.commits.iter().filter(|c| c.nodes > 0).count() as u64;
                    if args.dry_run {
                        ctx.out.record(&records::BackfillPlan(&o));
                    } else {
                        ctx.out.record(&o);
                    }
                    let verb = if args.dry_run {
                        "would commit"
                    } else {
                        "committed"
                    };
                    let turns: Vec<String> =
                        o.commits.iter().map(|c| format!("{}", c.turn)).collect();
                    progress.suspend(|| {
                        ctx.out.line(format!(
                            "{}: {verb} {} turn{}{} ({})",
                            o.session,
                            o.commits.len(),
                            if o.commits.len() == 1 { "" } else { "s" },
                            if o.created_repo {
                                " into a new repository"
                            } else {
                                ""
                            },
                            turns.join(", ")
                        ))
                    });
                }
                Err(e) => {
                    failed += 1;
                    let id = &targets[i].id;
                    progress.suspend(|| {
                        eprint!(
                            "git-session: backfill of `{id}` failed:\n{}",
                            crate::out::render_error(&e)
                        )
                    });
                }
            }
        },
    );
    progress.finish();
    // The list registry is current after every command but `append` (SPEC
    // §3): a state dir the Python store left without one gets it now.
    if !args.dry_run && registry::load_index(&ctx.state)?.is_none() {
        let n = registry::rebuild_index(&ctx.state, ctx.locks)?;
        ctx.out.note(format!("wrote index.json ({n} rows)"));
    }
    let secs = started.elapsed().as_secs_f64();
    ctx.out.record(&records::BackfillSummary {
        sessions: targets.len(),
        changed,
        new_repos: repos,
        commits,
        turns,
        failed,
        dry_run: args.dry_run,
        seconds: secs,
    });
    ctx.out.note(format!(
        "{} {changed} of {} session{} ({repos} new repositor{}), {commits} commit{}, {failed} failed, in {secs:.2}s",
        if args.dry_run { "would backfill" } else { "backfilled" },
        targets.len(),
        if targets.len() == 1 { "" } else { "s" },
        if repos == 1 { "y" } else { "ies" },
        if commits == 1 { "" } else { "s" },
    ));
    Ok(if failed > 0 { exit::NO } else { exit::OK })
}
