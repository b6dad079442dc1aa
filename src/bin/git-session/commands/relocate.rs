//! `relocate`: a project's directory moved (SPEC §5.11); the plan and its
//! apply are `git_session::relocate`.
//!
//! Reads: projects.json, locations.json. Writes: the project's path (same
//! id), legacy locations under the old path, and one record node in each
//! bound session (or the one named), committed as `record: …` when HEAD is
//! on the latest turn; run again for the path the project has, the move its
//! sessions' records name, in the sessions bound before it that lack it.
//! Locks: the registry, then each session. Prints: what changed, or on a
//! run again, what it completed.

use std::path::PathBuf;

use crate::context::Ctx;
use git_session::error::{Result, Usage, exit};
use git_session::layout::registry;
use git_session::out::records;
use git_session::project::ProjectError;
use git_session::relocate;

/// Point a project at its new directory: the id stays, the path changes,
/// and each bound session (or `--session`) gets a `project/relocate` record
/// node (the head does not move). The default project is refused.
///
/// A session that cannot take its record (busy, or refused) is named and
/// the others still get theirs (exit 1). Run again for the same path, it
/// completes the move the other sessions' records name: it records it in
/// the sessions that lack it, in none twice, and only in sessions bound
/// before the move (by their `bound_at` in meta.json; one bound by an
/// older version, which has none, counts as bound before unless its
/// `created_at` is later). When no session records a move to that path,
/// there is none to complete and nothing is recorded, unless `--from` names
/// the path it moved from (the command a failed record's warning prints).
/// A session whose record failed is named with that command.
#[derive(Debug, clap::Args)]
pub struct RelocateArgs {
    /// Project id, name or old path
    pub project: String,
    /// The existing directory it moved to
    pub new_path: PathBuf,
    /// Record the move in this session only
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
    /// Run again for the path the project has: the path it moved from, for
    /// a move no session's record names yet (every session failed to take
    /// its record the first time)
    #[arg(long, value_name = "OLD-PATH")]
    pub from: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, args: RelocateArgs) -> Result<u8> {
    let p = git_session::project::get(&ctx.state, &args.project)?;
    if p.id == "default" {
        return Err(ProjectError::DefaultRelocated.into());
    }
    let new = std::fs::canonicalize(&args.new_path)
        .ok()
        .filter(|n| n.is_dir())
        .ok_or_else(|| ProjectError::NoSuchNewDir {
            path: args.new_path.clone(),
        })?;
    git_session::project::refuse_ours(&ctx.state, &new)?;
    let locations = registry::read_locations(&ctx.state)?;
    let mut plan = relocate::plan(&p, &new, locations, args.session.as_deref());
    if args.from.is_some() && !relocate::repeated(&plan) {
        return Err(Usage::RelocateFrom {
            project: p.id.clone(),
            at: plan.old.clone(),
        }
        .into());
    }
    plan.from = args.from.clone();
    let out = ctx.out;
    let done = relocate::apply(
        &ctx.state,
        &plan,
        ctx.locks,
        git_session::out::now(),
        &mut |w| out.warn(w),
    )?;
    let (mut recorded, mut already, mut failed, mut after) =
        (0usize, 0usize, Vec::new(), Vec::new());
    for (s, r) in done.sessions {
        match r {
            relocate::Recorded::NoMove => {}
            relocate::Recorded::BoundAfter => {
                ctx.out.note(format!(
                    "session `{s}` was bound to project `{}` after the move: no record",
                    p.id
                ));
                after.push(s);
            }
            relocate::Recorded::Missing => ctx.out.warn(format!(
                "session `{s}` of project `{}` was not found; no record node",
                p.id
            )),
            relocate::Recorded::Already => {
                already += 1;
                ctx.out
                    .note(format!("session `{s}` already has its record of this move"));
            }
            relocate::Recorded::Failed(why) => {
                let from = done
                    .completed
                    .as_ref()
                    .map_or(plan.old.as_path(), |m| m.old.as_path());
                ctx.out.warn(format!(
                    "session `{s}` got no record node: {why}; once that is fixed, `git-session relocate {} {} --session {s} --from {}` records it",
                    p.id,
                    plan.new.display(),
                    from.display()
                ));
                failed.push(s);
            }
            relocate::Recorded::Node { id, commit } => {
                recorded += 1;
                ctx.out.record(&records::RelocateNode {
                    session: s.clone(),
                    node: id,
                });
                if let Some(commit) = commit {
                    ctx.out
                        .record(&records::RecordCommitted { session: s, commit });
                }
            }
        }
    }
    let repeated = relocate::repeated(&plan);
    let moved_from = done.completed.map(|m| m.old);
    ctx.out.record(&records::Relocated {
        project: p.id.clone(),
        old_path: plan.old.clone(),
        new_path: plan.new.clone(),
        sessions: recorded,
        locations: plan.locations.len(),
        failed: failed.clone(),
        moved_from: moved_from.clone(),
        already_recorded: already,
        bound_after: after.clone(),
    });
    let failed_n = match failed.len() {
        0 => String::new(),
        n => format!(", {n} failed"),
    };
    ctx.out.line(match (repeated, &moved_from) {
        (false, _) => format!(
            "{}: {} -> {} ({recorded} session(s) recorded{failed_n})",
            p.id,
            plan.old.display(),
            plan.new.display(),
        ),
        (true, Some(old)) => format!(
            "{}: already at {}; completing the move from {}: {recorded} session(s) recorded, {already} already had it, {} bound after it{failed_n}",
            p.id,
            plan.new.display(),
            old.display(),
            after.len(),
        ),
        (true, None) => format!(
            "{}: already at {}; no session records a move to it: {recorded} session(s) recorded{failed_n}",
            p.id,
            plan.new.display(),
        ),
    });
    Ok(if failed.is_empty() {
        exit::OK
    } else {
        exit::NO
    })
}
