//! `migrate`: bring legacy in-project session repositories home (SPEC §5.15).
//!
//! Reads: locations.json, projects.json, each legacy repository. Writes:
//! `sessions/.migration/` (journal, staging), the published repositories
//! under `sessions/projects/<project>/<id>/`, `sessions/.file-recovery/`,
//! the registries; with `--prune-sources`, removes sources that still match
//! their published copy. Locks: the registry for each registry write.
//! With `--node-names python`: each session's node files renamed
//! (`mirror::rename`) under its session lock.
//! Prints: what was migrated, resumed, blocked or failed.

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::migrate;
use git_session::out::records;

/// Move legacy `<project>/.openprogram/sessions/<id>/` repositories into
/// `sessions/projects/<project>/<id>/`, crash-safe.
///
/// Each repository is copied to a staging area, verified (every file
/// identical, every commit and tree readable), published by rename; its
/// recovery data is copied to `sessions/.file-recovery/`; then
/// locations.json and the index are updated. A journal records each step:
/// run it again after a crash and it resumes. The source stays in place
/// unless `--prune-sources` (and then only when the copy still matches).
///
/// With `--node-names python` it renames sessions' node files instead, to
/// the naming of the Python store (which lists `history/` by name: a
/// session whose files are named both ways reads out of order there;
/// `verify --fix` renames such a session too).
#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// Say what would be migrated, change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Remove each source once its published copy is verified identical
    #[arg(long)]
    pub prune_sources: bool,
    /// Instead: rename the node files of every session (or of each
    /// `--session`) to the naming NAMING, `python` the Python store's
    /// (`0012-l-<id>.json`), so that it can continue them: the same blobs,
    /// one commit per branch that held an old name, the files renamed on
    /// disk. A session named so already is left as it is
    #[arg(long, value_name = "NAMING", value_parser = ["python"], conflicts_with = "prune_sources")]
    pub node_names: Option<String>,
    /// With `--node-names`: this session only (repeatable)
    #[arg(long = "session", value_name = "SESSION", requires = "node_names")]
    pub sessions: Vec<String>,
}

/// `migrate --node-names python`.
fn rename_nodes(ctx: &Ctx, args: &MigrateArgs) -> Result<u8> {
    let targets: Vec<(String, git_session::layout::SessionDir)> = if args.sessions.is_empty() {
        git_session::layout::registry::discover(&ctx.state)?
            .into_iter()
            .map(|(id, dir)| (id, git_session::layout::SessionDir::new(dir)))
            .collect()
    } else {
        args.sessions
            .iter()
            .map(|id| Ok((id.clone(), ctx.state.find_session(id)?)))
            .collect::<Result<_>>()?
    };
    let mut renamed = 0;
    let mut failed = 0;
    for (id, sd) in targets {
        // Each session whatever became of the others.
        let done = (|| -> Result<(usize, Vec<String>)> {
            let _lock = ctx.lock_session(&sd, git_session::layout::lock::Kind::Exclusive)?;
            Ok(if args.dry_run {
                (
                    git_session::mirror::rename::not_python_named(&sd),
                    Vec::new(),
                )
            } else {
                let r = git_session::mirror::rename::to_python_naming(
                    &sd,
                    &id,
                    git_session::out::now(),
                )?;
                (
                    r.files,
                    r.commits.iter().map(|(_, c)| c.to_string()).collect(),
                )
            })
        })();
        let (files, commits) = match done {
            Ok(d) => d,
            Err(e) => {
                failed += 1;
                ctx.out.record(&records::MigrateFailed {
                    session: id.clone(),
                    message: e.to_string(),
                });
                eprint!("{id}: {}", git_session::out::render_error(&e));
                continue;
            }
        };
        if files == 0 && commits.is_empty() {
            continue;
        }
        renamed += 1;
        ctx.out.record(&records::NodesRenamed {
            session: id.clone(),
            files,
            commits: commits.clone(),
            dry_run: args.dry_run,
        });
        ctx.out.line(format!(
            "{} {id}: {files} node file(s){}",
            if args.dry_run {
                "would rename"
            } else {
                "renamed"
            },
            match commits.len() {
                0 => String::new(),
                1 => " in 1 commit".into(),
                n => format!(" in {n} commits (one per branch)"),
            }
        ));
    }
    ctx.out.note(format!(
        "{} {renamed} session(s) to the Python store's naming{}",
        if args.dry_run {
            "would rename"
        } else {
            "renamed"
        },
        if failed > 0 {
            format!("; {failed} failed")
        } else {
            String::new()
        }
    ));
    Ok(if failed == 0 { exit::OK } else { exit::NO })
}

pub fn run(ctx: &Ctx, args: MigrateArgs) -> Result<u8> {
    if args.node_names.is_some() {
        return rename_nodes(ctx, &args);
    }
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
