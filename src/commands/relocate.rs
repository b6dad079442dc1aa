//! `relocate`: a project's directory moved (SPEC §5.11); the plan and its
//! apply are `crate::relocate`.
//!
//! Reads: projects.json, locations.json. Writes: the project's path (same
//! id), legacy locations under the old path, and one record node in each
//! bound session (or the one named), committed as `record: …` when HEAD is
//! on the latest turn. Locks: the registry, then each session.
//! Prints: what changed.

use std::path::PathBuf;

use crate::context::Ctx;
use crate::error::{Error, Result, exit};
use crate::layout::registry;
use crate::out::records;
use crate::relocate;

/// Point a project at its new directory: the id stays, the path changes,
/// and each bound session (or `--session`) gets a `project/relocate` record
/// node (the head does not move). The default project is refused.
///
/// A session that cannot take its record (busy, or refused) is named and
/// the others still get theirs (exit 1). Run again for the same path, it
/// records the move in the sessions that lack it, and in none twice.
#[derive(Debug, clap::Args)]
pub struct RelocateArgs {
    /// Project id, name or old path
    pub project: String,
    /// The existing directory it moved to
    pub new_path: PathBuf,
    /// Record the move in this session only
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
}

pub fn run(ctx: &Ctx, args: RelocateArgs) -> Result<u8> {
    let p = crate::project::get(&ctx.state, &args.project)?;
    if p.id == "default" {
        return Err(Error::refused(
            "project::default_is_label",
            "the default project cannot be relocated",
            Some("it is a label with no directory".into()),
        ));
    }
    let new = std::fs::canonicalize(&args.new_path)
        .ok()
        .filter(|n| n.is_dir())
        .ok_or_else(|| {
            Error::refused(
                "project::no_such_dir",
                format!("`{}` is not an existing directory", args.new_path.display()),
                Some("give the directory the project moved to".into()),
            )
        })?;
    crate::project::refuse_ours(&ctx.state, &new)?;
    let locations = registry::read_locations(&ctx.state)?;
    let plan = relocate::plan(&p, &new, locations, args.session.as_deref());
    let out = ctx.out;
    let done = relocate::apply(&ctx.state, &plan, ctx.locks, crate::out::now(), &mut |w| {
        out.warn(w)
    })?;
    let (mut recorded, mut failed) = (0usize, Vec::new());
    for (s, r) in done {
        match r {
            relocate::Recorded::Missing => ctx.out.warn(format!(
                "session `{s}` of project `{}` was not found; no record node",
                p.id
            )),
            relocate::Recorded::Already => {
                ctx.out
                    .note(format!("session `{s}` already has its record of this move"));
            }
            relocate::Recorded::Failed(why) => {
                ctx.out.warn(format!(
                    "session `{s}` got no record node: {why}; once that is fixed, `git-session relocate {} {} --session {s}` records it",
                    p.id,
                    plan.new.display()
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
    ctx.out.record(&records::Relocated {
        project: p.id.clone(),
        old_path: plan.old.clone(),
        new_path: plan.new.clone(),
        sessions: recorded,
        locations: plan.locations.len(),
        failed: failed.clone(),
    });
    ctx.out.line(format!(
        "{}: {} -> {} ({recorded} session(s) recorded{})",
        p.id,
        plan.old.display(),
        plan.new.display(),
        match failed.len() {
            0 => String::new(),
            n => format!(", {n} failed"),
        }
    ));
    Ok(if failed.is_empty() {
        exit::OK
    } else {
        exit::NO
    })
}
