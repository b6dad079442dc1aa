//! `gc-shells`: delete empty sessions left behind (SPEC §5.12).
//!
//! Reads: the registry, each candidate's meta.json and history/. Writes:
//! removes shells (as `delete` does). Locks: the registry, then the session.
//! Prints: what it removed (or would remove).

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::layout::schema::Meta;
use git_session::lifecycle;

/// Delete unarchived sessions older than `--older-than` that have no node.
///
/// Kept always: archived sessions, sessions whose project directory is
/// unreachable, sessions being migrated. Nothing else is ever deleted by age.
/// A session is deleted only when its history/, listed once the session's
/// lock is held, holds nothing (not on the word of the catalog cache), and
/// its directory nothing but a session's own entries. One that cannot go
/// (busy) is kept with a warning; the exit stays 0.
#[derive(Debug, clap::Args)]
pub struct GcShellsArgs {
    /// Minimum age (by created_at): 90s, 30m, 1h, 2d…
    #[arg(long, value_name = "DUR", default_value = "1h")]
    pub older_than: String,
    /// Say what would be removed, remove nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// Collect shells; returns how many were (or would be) removed.
pub fn collect(ctx: &Ctx, older_than: f64, dry_run: bool) -> Result<usize> {
    let mut index_text = git_session::lifecycle::RowsText::default();
    let rows = lifecycle::load_rows(&ctx.state, ctx.locks, &mut index_text)?;
    let (_, project_paths) = lifecycle::projects(&ctx.state);
    let migrating = lifecycle::migrating(&ctx.state)?;
    let now = git_session::out::now();
    let mut removed = 0;
    for id in rows.keys() {
        let Ok(sd) = ctx.state.find_session(id) else {
            continue;
        };
        let Ok(meta) = Meta::read(&sd.meta()) else {
            continue;
        };
        if lifecycle::keep_reason(&sd, &meta, now, older_than, &project_paths, &migrating, id)
            .is_some()
        {
            continue;
        }
        // Asked again under the session's lock: an append since the check
        // above makes it a session to keep.
        let still_a_shell = |sd: &git_session::layout::SessionDir| match Meta::read(&sd.meta()) {
            Ok(meta) => {
                lifecycle::keep_reason(sd, &meta, now, older_than, &project_paths, &migrating, id)
            }
            Err(_) => Some("meta.json unreadable"),
        };
        if !dry_run {
            match lifecycle::delete_unless(&ctx.state, id, ctx.locks, still_a_shell, None) {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                // Kept: one session that cannot go (busy, say) is no reason
                // to fail the start-up routine that collects the others.
                Err(e) => {
                    ctx.out.warn(format!("kept `{id}`: {e}"));
                    continue;
                }
            }
        }
        removed += 1;
        ctx.out.record(&git_session::out::records::ShellRemoved {
            session: id.to_string(),
            dry_run,
        });
        ctx.out.line(format!(
            "{} {id}",
            if dry_run { "would remove" } else { "removed" }
        ));
    }
    Ok(removed)
}

pub fn run(ctx: &Ctx, args: GcShellsArgs) -> Result<u8> {
    let older = lifecycle::parse_duration(&args.older_than)?;
    let n = collect(ctx, older, args.dry_run)?;
    ctx.out.note(format!(
        "{} {n} empty session(s)",
        if args.dry_run {
            "would remove"
        } else {
            "removed"
        }
    ));
    Ok(exit::OK)
}
