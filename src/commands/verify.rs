//! `verify`: prove that every node is in git and git says what the files say
//! (SPEC §5.14).
//!
//! Reads: every session's files and repository, the registries. Writes:
//! nothing, or with `--fix` what is safe to repair (backfill commits, index
//! rebuild, dangling locations of sessions found elsewhere, our temp files).
//! Locks: each session, shared (exclusive while fixing). Prints: one finding
//! per problem with the command that fixes it; exit 1 when any remains.

use crate::backfill::{self, Target};
use crate::cli::Ctx;
use crate::error::{Result, exit};
use crate::layout::{lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::out::Progress;
use crate::verify::{self, Finding, SessionCheck};

/// Check that the DAG files and their git mirror agree.
///
/// Per session: meta.json and every node parse, names match payloads, seqs
/// are unique, head/predecessors/callers resolve, every node is in a commit,
/// the Session/Turn/Nodes trailers agree with the DAG, the latest tree
/// matches the files, git objects are intact, no temp files or stale git
/// locks are left. Per state dir: index rows, locations, invalid directories.
/// A session's objects are checked after its background packing run, if one
/// is going, has ended. Exit 0 when clean, 1 when problems remain.
#[derive(Debug, clap::Args)]
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
    /// Sessions checked in parallel [default: the number of cores]
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
}

fn print_finding(ctx: &Ctx, f: &Finding) {
    ctx.out.record("finding", f);
    let who = f
        .session
        .as_deref()
        .map(|s| format!("{s}: "))
        .unwrap_or_default();
    ctx.out.line(format!(
        "{who}{}: {} ({})",
        f.kind,
        f.message,
        f.path.display()
    ));
    ctx.out.line(format!("    fix: {}", f.fix));
}

/// Apply the safe repairs for one session; returns what was done.
fn repair(ctx: &Ctx, t: &Target, check: &SessionCheck) -> Result<Vec<String>> {
    let mut done = Vec::new();
    if check.needs_lock_cleanup || !check.stray_temps.is_empty() {
        // Exclusive: no command of ours is writing these files. Locks first:
        // our index.lock is known as ours by sharing its inode with a temp file.
        let held = match t.dir.git_dir().is_dir() {
            true => Some((
                ctx.lock_session(&t.dir, lock::Kind::Exclusive)?,
                crate::git::SessionRepo::open(&t.dir.dir)?,
            )),
            false => None,
        };
        // Our index.lock goes whatever its age (no command of ours holds it).
        if let Some((_, r)) = &held {
            r.clear_stale_locks(std::time::Duration::from_secs(1));
            if check.needs_lock_cleanup {
                done.push("removed stale lock files".into());
            }
        }
        for p in &check.stray_temps {
            let r = if p.is_dir() {
                std::fs::remove_dir_all(p)
            } else {
                std::fs::remove_file(p)
            };
            if r.is_ok() {
                done.push(format!("removed `{}`", p.display()));
            }
        }
    }
    if check.needs_commit || !t.dir.git_dir().is_dir() {
        let o = backfill::one(t, ctx.locks, false, &mut |w| ctx.out.warn(w))?;
        if o.created_repo {
            done.push("created the repository".into());
        }
        if !o.commits.is_empty() {
            done.push(format!("committed {} turn(s)", o.commits.len()));
        }
    }
    if check.needs_rescan {
        let _l = ctx.lock_session(&t.dir, lock::Kind::Exclusive)?;
        let meta = crate::layout::schema::Meta::read(&t.dir.meta()).ok();
        let opts = CommitOptions {
            rescan: true,
            now: meta
                .as_ref()
                .and_then(|m| m.f64("updated_at"))
                .unwrap_or_else(crate::out::now),
            message: Some("session: commit files changed after their turn".into()),
            ..Default::default()
        };
        let made = mirror::commit_pending(&t.dir, &t.id, &opts, &mut |_| Ok(()), &mut |w| {
            ctx.out.warn(w)
        })?;
        if !made.is_empty() {
            done.push(format!(
                "committed the changed files ({})",
                made[made.len() - 1].commit
            ));
        }
    }
    Ok(done)
}

pub fn run(ctx: &Ctx, args: VerifyArgs) -> Result<u8> {
    let jobs = backfill::jobs(args.jobs)?;
    let targets = backfill::select(&ctx.state, args.all, &args.sessions)?;
    let progress = Progress::new(&ctx.out, targets.len() as u64, "verify");
    let mut remaining = 0usize;
    let mut fixed = 0usize;
    let mut clean = 0usize;
    backfill::for_each_parallel(
        &targets,
        jobs,
        |t| -> Result<SessionCheck> {
            let _l = if t.dir.lock_file().parent().is_some_and(|p| p.is_dir()) {
                Some(ctx.lock_session(&t.dir, lock::Kind::Shared)?)
            } else {
                None
            };
            Ok(verify::check_session(&t.id, &t.dir))
        },
        |i, r| {
            progress.inc();
            let t = &targets[i];
            let check = match r {
                Ok(c) => c,
                Err(e) => {
                    remaining += 1;
                    progress.suspend(|| {
                        eprintln!(
                            "git-session: cannot verify `{}`:\n{:?}",
                            t.id,
                            miette::Report::new(e)
                        )
                    });
                    return;
                }
            };
            if check.findings.is_empty() {
                clean += 1;
                return;
            }
            let mut findings = check.findings.clone();
            if args.fix && findings.iter().any(|f| f.fixable) {
                match repair(ctx, t, &check) {
                    Ok(done) => {
                        for d in &done {
                            ctx.out.record(
                                "fixed",
                                &serde_json::json!({"session": t.id, "action": d}),
                            );
                            progress.suspend(|| ctx.out.line(format!("{}: fixed: {d}", t.id)));
                        }
                        fixed += 1;
                        findings = verify::check_session(&t.id, &t.dir).findings;
                    }
                    Err(e) => progress.suspend(|| {
                        eprintln!(
                            "git-session: repair of `{}` failed:\n{:?}",
                            t.id,
                            miette::Report::new(e)
                        )
                    }),
                }
            }
            if findings.is_empty() {
                clean += 1;
            }
            remaining += findings.len();
            progress.suspend(|| findings.iter().for_each(|f| print_finding(ctx, f)));
        },
    );
    progress.finish();
    if args.all {
        let (mut state_findings, temps) = verify::check_state(&ctx.state, &targets);
        if args.fix && state_findings.iter().any(|f| f.fixable) {
            for p in &temps {
                let r = if p.is_dir() {
                    std::fs::remove_dir_all(p)
                } else {
                    std::fs::remove_file(p)
                };
                if r.is_ok() {
                    ctx.out.record(
                        "fixed",
                        &serde_json::json!({"action": format!("removed `{}`", p.display())}),
                    );
                    ctx.out.line(format!("fixed: removed `{}`", p.display()));
                }
            }
            let dangling: Vec<String> = state_findings
                .iter()
                .filter(|f| f.kind == "location_dangling" && f.fixable)
                .filter_map(|f| f.message.split('`').nth(1).map(str::to_owned))
                .collect();
            if !dangling.is_empty() {
                registry::remove_locations(&ctx.state, &dangling, ctx.locks)?;
                ctx.out.line(format!(
                    "fixed: removed {} dangling location(s)",
                    dangling.len()
                ));
            }
            if state_findings.iter().any(|f| f.kind.starts_with("index_")) {
                let n = registry::rebuild_index(&ctx.state, ctx.locks)?;
                ctx.out.record(
                    "fixed",
                    &serde_json::json!({"action": format!("rebuilt index.json ({n} rows)")}),
                );
                ctx.out
                    .line(format!("fixed: rebuilt index.json ({n} rows)"));
            }
            state_findings = verify::check_state(&ctx.state, &targets).0;
        }
        remaining += state_findings.len();
        for f in &state_findings {
            print_finding(ctx, f);
        }
    }
    ctx.out.record(
        "summary",
        &serde_json::json!({"sessions": targets.len(), "clean": clean, "repaired": fixed, "problems": remaining}),
    );
    ctx.out.note(format!(
        "verified {} session{}: {clean} clean, {remaining} problem{}{}",
        targets.len(),
        if targets.len() == 1 { "" } else { "s" },
        if remaining == 1 { "" } else { "s" },
        if args.fix {
            format!(", {fixed} repaired")
        } else {
            String::new()
        }
    ));
    Ok(if remaining > 0 { exit::NO } else { exit::OK })
}
