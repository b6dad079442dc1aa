//! `backfill`: bring sessions whose DAG is ahead of git up to date (SPEC §5.13).
//!
//! Reads: each session's files and repository. Writes: missing repositories,
//! one commit per uncommitted turn, refs, the git index; meta.json and the
//! session's index journal row when it gives an untitled session its
//! first-turn title (SPEC §5.3); `index.json` when it is missing. Locks:
//! each session, exclusive, one at a time per worker. Prints: one record per
//! session changed, saying what it did in `commit-turn`'s words (turns
//! committed, or the session's files brought up to date) and the title it
//! gave, then a one-line summary.

use crate::context::Ctx;
use git_session::backfill;
use git_session::error::{Result, exit};
use git_session::layout::registry;
use git_session::out::Progress;
use git_session::out::records;

/// Commit every node not yet in git, turn by turn, with the nodes' own times.
///
/// A session directory with `history/` but no `.git` gets a repository. The
/// result is deterministic: a second run changes nothing, and a copy of the
/// state dir backfills to the same commit ids.
///
/// Each session changed is one line, in `commit-turn`'s words: the turns
/// committed (`s1: committed 2 turns (2, 3)`), or, for a change of files
/// only (meta.json, `workdir/`: a commit that holds no node),
/// `s1: brought the session's files up to date (no new turn)`. A session
/// with no title gets the first-turn title, as at `commit-turn` (never over
/// a title the user gave): in meta.json, with the turn, and in its list row.
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
            let r = backfill::one(&ctx.state, t, locks, args.dry_run, &mut |w| {
                warnings.push(w)
            });
            (r, warnings)
        },
        |i, (r, warnings)| {
            progress.inc();
            for w in warnings {
                progress.suspend(|| ctx.out.warn(&w));
            }
            match r {
                Ok(o) => {
                    if o.commits.is_empty() && !o.created_repo && o.title.is_none() {
                        return;
                    }
                    changed += 1;
                    repos += usize::from(o.created_repo);
                    commits += o.commits.len();
                    turns += o.turns as u64;
                    if args.dry_run {
                        ctx.out.record(&records::BackfillPlan(&o));
                    } else {
                        ctx.out.record(&o);
                    }
                    progress.suspend(|| ctx.out.line(said(&o, args.dry_run)));
                }
                Err(e) => {
                    failed += 1;
                    let id = &targets[i].id;
                    progress.suspend(|| {
                        eprint!(
                            "git-session: backfill of `{id}` failed:\n{}",
                            git_session::out::render_error(&e)
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
        "{} {changed} of {} session{} ({repos} new repositor{}), {commits} commit{} ({turns} turn{}), {failed} failed, in {secs:.2}s",
        if args.dry_run { "would backfill" } else { "backfilled" },
        targets.len(),
        if targets.len() == 1 { "" } else { "s" },
        if repos == 1 { "y" } else { "ies" },
        if commits == 1 { "" } else { "s" },
        if turns == 1 { "" } else { "s" },
    ));
    Ok(if failed > 0 { exit::NO } else { exit::OK })
}

/// One session's line: in `commit-turn`'s words, the turns committed or the
/// session's files brought up to date; the repository made; the title given.
fn said(o: &backfill::Outcome, dry_run: bool) -> String {
    let mut parts = Vec::new();
    match (o.commits.is_empty(), o.created_repo) {
        (false, made) => parts.push(format!(
            "{}{}",
            git_session::out::commits_done(&o.commits, dry_run),
            if made { " into a new repository" } else { "" }
        )),
        (true, true) if dry_run => parts.push("would create a repository".to_string()),
        (true, true) => parts.push("created a repository".to_string()),
        (true, false) => {}
    }
    if let Some(t) = &o.title {
        parts.push(format!(
            "{} {}",
            if dry_run { "would title" } else { "titled" },
            serde_json::Value::from(t.as_str())
        ));
    }
    format!("{}: {}", o.session, parts.join(", "))
}
