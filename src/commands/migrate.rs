//! `migrate`: bring legacy in-project session repositories home (SPEC §5.15).
//!
//! Reads: locations.json, projects.json, each legacy repository. Writes:
//! `sessions/.migration/` (journal, staging), the published repositories
//! under `sessions/projects/<project>/<id>/`, `sessions/.file-recovery/`,
//! the registries; with `--prune-sources`, removes sources that still match
//! their published copy. Locks: the registry for each registry write.
//! Prints: what was migrated, resumed, blocked or failed.

use crate::context::Ctx;
use crate::error::{Result, exit};
use crate::migrate;
use crate::out::records;

/// Move legacy `<project>/.openprogram/sessions/<id>/` repositories into
/// `sessions/projects/<project>/<id>/`, crash-safe.
///
/// Each repository is copied to a staging area, verified (every file
/// identical, every commit and tree readable), published by rename; its
/// recovery data is copied to `sessions/.file-recovery/`; then
/// locations.json and the index are updated. A journal records each step:
/// run it again after a crash and it resumes. The source stays in place
/// unless `--prune-sources` (and then only when the copy still matches).
#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// Say what would be migrated, change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Remove each source once its published copy is verified identical
    #[arg(long)]
    pub prune_sources: bool,
}

pub fn run(ctx: &Ctx, args: MigrateArgs) -> Result<u8> {
    let out = ctx.out;
    let r = migrate::run(
        &ctx.state,
        args.dry_run,
        args.prune_sources,
        ctx.locks,
        &mut |w| out.warn(w),
    )?;
    let verb = if args.dry_run {
        "would migrate"
    } else {
        "migrated"
    };
    for id in &r.migrated {
        ctx.out.record(&records::Migrated {
            session: id.clone(),
            dry_run: args.dry_run,
            resumed: r.resumed.contains(id),
        });
        ctx.out.line(format!(
            "{verb} {id}{}",
            if r.resumed.contains(id) {
                " (resumed)"
            } else {
                ""
            }
        ));
    }
    for b in &r.blocked {
        ctx.out.record(b);
        ctx.out.line(format!(
            "blocked {}: {}",
            b.session,
            b.problem.as_deref().unwrap_or("")
        ));
    }
    for (session, message) in &r.failed {
        ctx.out.record(&records::MigrateFailed {
            session: session.clone(),
            message: message.clone(),
        });
    }
    ctx.out.note(format!(
        "{verb} {} session(s); {} blocked, {} failed",
        r.migrated.len(),
        r.blocked.len(),
        r.failed.len()
    ));
    Ok(if r.failed.is_empty() && r.blocked.is_empty() {
        exit::OK
    } else {
        exit::NO
    })
}
