//! `remote add|list|remove`, `push`, `fetch`, `clone` (SPEC §5.20); the
//! work is `git_session::sync`.
//!
//! Reads and writes: `sync/remotes.json` (under the sync lock), the
//! transfer repository `sync/repo`, the push queue `sync/queue-<remote>`;
//! `fetch` also each fetched session (its repository, files, index row,
//! location, project). Locks: the sync lock, then the registry, then each
//! session. Prints: one record per ref pushed or session fetched, then a
//! summary.

use crate::context::Ctx;
use git_session::error::{Error, Result, Usage, exit};
use git_session::out::records;
use git_session::sync::{self, Selection, Take, remotes};

/// Remotes: git repositories that hold every session, for several machines.
///
/// A remote is any URL git pushes to (`https://`, `ssh://`, `git@host:path`,
/// `file://`, a path); git's own credentials, ssh and helpers are used. The
/// sessions live there under `refs/sessions/<shard>/<id>/heads/<branch>`,
/// outside `refs/heads`, so a plain `git clone` of it fetches none of them.
#[derive(Debug, clap::Args)]
pub struct RemoteArgs {
    #[command(subcommand)]
    pub command: RemoteCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCommand {
    /// Add a remote (kept in the state dir's `sync/remotes.json`)
    Add {
        /// Its name (`origin`)
        name: String,
        /// Its URL (a relative path is kept as an absolute one)
        url: String,
    },
    /// List the remotes, with the refs each push queue still holds
    List,
    /// Forget a remote (nothing on it, and no session, is touched)
    Remove {
        /// Its name
        name: String,
    },
}

/// Send sessions to a remote: each branch a fast-forward, never forced.
///
/// Refs the remote has at the same commit are left alone; the rest go in
/// requests of at most 1,000 refs. A branch the remote took is kept as
/// `refs/remotes/<remote>/<branch>` in the session's repository, where
/// `fetch` keeps the remote's tips (`log` marks it: `origin/main`). A ref
/// the remote refuses (it has turns
/// this machine has not fetched) is reported and stays queued: `fetch
/// REMOTE --take local SESSION` brings them in (and resolves a divergence,
/// this machine's conversation kept current), then push again. A push that is killed leaves its queue
/// (`sync/queue-<remote>`), which the next `push` sends; only refs the
/// remote confirmed leave it. Sessions deleted and projects removed here
/// go as tombstones (`refs/tombstones/…`) when the remote has them
/// (projects' with a push of every session); a
/// session the remote has a tombstone of that is here again (made again,
/// or with turns the deletion did not see) revives it. Exit 1 when a ref
/// was refused or a session could not be read.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// The remote [default: the only one, else `origin`], then the sessions
    /// [default: every session]
    #[arg(value_name = "REMOTE | SESSION")]
    pub args: Vec<String>,
    /// Every session (the default when none is named)
    #[arg(long)]
    pub all: bool,
    /// Say what would be sent; send nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Send a session even though its turns hold this finding (a false
    /// positive): its fingerprint, as the refusal shows it (repeat for
    /// several; `git-session secrets allow` keeps one allowed)
    #[arg(long, value_name = "FINGERPRINT")]
    pub allow: Vec<String>,
}

/// Bring sessions from a remote to this machine.
///
/// A session new here is built, checked as `verify` checks one (no link,
/// no submodule, no `.git`, ids that match) and only then published, with
/// its index row and its project: a project this machine does not know is
/// registered from the remote's record, its path shown as missing until
/// `git-session relocate` points it at the local checkout. A session the
/// remote has more turns of is brought up to them. When both machines
/// added turns to one session, nothing is merged: the remote's tips are
/// kept as `refs/remotes/<remote>/<branch>` in the session's repository,
/// `verify` reports it, and `--take local|remote SESSION` resolves it: the
/// remote's history stays as it is, this machine's extra turns are
/// renumbered after it and committed as a retry branch, and the side named
/// is the current conversation. A node of this machine whose id the remote
/// gave another node is kept under an id of its own (`<id>.local-<hash>`),
/// never dropped. A session deleted on the remote (its tombstone, left by
/// `delete` and carried by `push`) is not brought in, and this machine's
/// copy is deleted when it holds nothing the deletion did not see, else
/// kept and reported (`kept`); a project removed there is not registered
/// again. Exit 1 when a session diverged, was refused or was kept though
/// deleted.
#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// The remote [default: the only one, else `origin`], then the sessions
    /// [default: every session]
    #[arg(value_name = "REMOTE | SESSION")]
    pub args: Vec<String>,
    /// Every session (the default when none is named)
    #[arg(long)]
    pub all: bool,
    /// Resolve the named sessions' divergence: `local` keeps this machine's
    /// conversation current, `remote` the remote's; both keep every turn
    #[arg(long, value_name = "SIDE", value_parser = ["local", "remote"])]
    pub take: Option<String>,
}

/// Set up this machine from a remote: add it as `origin`, fetch every
/// session.
///
/// The state dir is `--state-dir` (or the usual one); it may exist, but
/// must not have a remote of that name with another URL. When the remote
/// cannot be reached, the remote is not kept either: run the command again
/// with the URL put right.
#[derive(Debug, clap::Args)]
pub struct CloneArgs {
    /// The remote's URL (a relative path is kept as an absolute one)
    pub url: String,
    /// The remote's name here
    #[arg(long, default_value = "origin")]
    pub name: String,
}

pub fn remote(ctx: &Ctx, args: RemoteArgs) -> Result<u8> {
    match args.command {
        RemoteCommand::Add { name, url } => {
            remotes::check_name(&name)?;
            remotes::check_url(&url)?;
            let url = remotes::absolute(&url)?;
            remotes::check_not_ours(&ctx.state, &url)?;
            add(ctx, &name, &url)?;
            ctx.out.record(&records::Remote {
                name: name.clone(),
                url: url.clone(),
                queued: 0,
            });
            ctx.out.line(format!("{name}\t{url}"));
        }
        RemoteCommand::List => {
            for (name, row) in remotes::read(&ctx.state)? {
                let url = remotes::url(&row).unwrap_or_default().to_string();
                let queued = sync::queued(&ctx.state, &name)?;
                ctx.out.line(if queued > 0 {
                    format!("{name}\t{url}\t({queued} ref(s) queued)")
                } else {
                    format!("{name}\t{url}")
                });
                ctx.out.record(&records::Remote { name, url, queued });
            }
        }
        RemoteCommand::Remove { name } => {
            remotes::check_name(&name)?;
            if !remove(ctx, &name)? {
                return Err(no_remote(ctx, &name));
            }
            ctx.out
                .record(&records::RemoteRemoved { name: name.clone() });
            ctx.out.note(format!("removed remote `{name}`"));
        }
    }
    Ok(exit::OK)
}

fn no_remote(ctx: &Ctx, name: &str) -> Error {
    let known: Vec<String> = remotes::read(&ctx.state)
        .map(|r| r.into_keys().collect())
        .unwrap_or_default();
    git_session::sync::SyncError::NoRemote {
        message: format!("no remote `{name}`"),
        help: git_session::layout::paths::did_you_mean(
            name,
            &known,
            "`git-session remote list` shows",
        ),
    }
    .into()
}

/// Register remote `name` at `url`; true when it was not there before (a
/// remote already there with the same URL is taken as it is).
fn add(ctx: &Ctx, name: &str, url: &str) -> Result<bool> {
    remotes::update(&ctx.state, ctx.locks, |r| {
        if let Some(old) = r.get(name) {
            if remotes::url(old) == Some(url) {
                return Ok(false);
            }
            return Err(git_session::sync::SyncError::RemoteExists {
                name: name.to_string(),
                url: remotes::url(old).unwrap_or_default().to_string(),
            }
            .into());
        }
        let mut row = serde_json::Map::new();
        row.insert("url".into(), url.into());
        r.insert(name.to_string(), row);
        Ok(true)
    })
}

/// Unregister remote `name`, and its queue of refs a push has yet to get
/// confirmed; false when there was none.
fn remove(ctx: &Ctx, name: &str) -> Result<bool> {
    let removed = remotes::update(&ctx.state, ctx.locks, |r| Ok(r.remove(name).is_some()))?;
    if removed {
        let _ = std::fs::remove_file(ctx.state.push_queue(name));
    }
    Ok(removed)
}

/// The remote and the sessions of `push`'s and `fetch`'s arguments: the
/// first names a remote when one has that name.
fn remote_and_sessions(
    ctx: &Ctx,
    args: &[String],
    all: bool,
) -> Result<(String, String, Selection)> {
    let known = remotes::read(&ctx.state)?;
    let (name, rest) = match args.first() {
        Some(first) if known.contains_key(first) => (Some(first.as_str()), &args[1..]),
        _ => (None, args),
    };
    let (name, url) = remotes::resolve(&ctx.state, name)?;
    if all && !rest.is_empty() {
        return Err(Usage::AllAndSessionIds.into());
    }
    let selection = if rest.is_empty() {
        Selection::All
    } else {
        for id in rest {
            git_session::layout::ids::session_id(id)?;
        }
        Selection::Some(rest.to_vec())
    };
    Ok((name, url, selection))
}

/// What resolves a ref the remote refused because it has turns this
/// machine lacks. `fetch --take local SESSION` does it whether this machine
/// is only behind (a fast-forward) or both added turns (this machine's
/// turns replayed after the remote's, its conversation current); a plain
/// `fetch` only does the first, and reports the second as diverged.
fn refused_hint(remote: &str, session: Option<&str>) -> String {
    match session {
        Some(s) => format!(
            "run `git-session fetch {remote} --take local {s}`, then push again: it brings the remote's turns in and, where both machines added turns, keeps this machine's conversation current (`--take remote`: the remote's); no turn is lost"
        ),
        None => format!("run `git-session fetch {remote}`, then push again"),
    }
}

pub fn push(ctx: &Ctx, args: PushArgs) -> Result<u8> {
    let (name, url, selection) = remote_and_sessions(ctx, &args.args, args.all)?;
    let report = sync::push(
        &ctx.state,
        &name,
        &url,
        &selection,
        ctx.locks,
        &ctx.out,
        sync::PushOptions {
            dry_run: args.dry_run,
            allow: &args.allow,
        },
    )?;
    let mut pushed = 0;
    let mut rejected = 0;
    for r in &report.refs {
        match r.status.as_str() {
            "rejected" => {
                rejected += 1;
                let session = r
                    .session
                    .as_ref()
                    .map(|s| format!(" {s}"))
                    .unwrap_or_default();
                let hint = if git_session::sync::refused_whole(&r.summary) {
                    // Sent alone and still refused: an object of its own.
                    format!(
                        "the remote refused the pack that carried it: its checks refuse an object of it (`git fsck --strict` in the session's repository{session} names it), or it refuses every pack for a reason of its own (its logs say); it stays queued"
                    )
                } else {
                    refused_hint(&name, r.session.as_deref())
                };
                ctx.out.warn(format!(
                    "{} refused `{}`: {} ({hint})",
                    name, r.remote_ref, r.summary
                ));
            }
            "planned" => ctx
                .out
                .line(format!("would push {} {}", r.commit, r.remote_ref)),
            "replaced" => {
                pushed += 1;
                ctx.out.note(format!(
                    "replaced `{}` on {name} with its redacted history (a forced update, checked against {}); the remote keeps the old objects until its own gc",
                    r.remote_ref,
                    r.old.as_deref().unwrap_or("-")
                ));
            }
            _ => pushed += 1,
        }
        ctx.out.record(r);
    }
    for (s, why) in &report.skipped {
        ctx.out.warn(format!("session `{s}` not pushed: {why}"));
    }
    let mut withheld = Vec::new();
    for (s, found) in &report.withheld {
        let why = format!(
            "its turns hold {} secret{} (see above)",
            found.len(),
            if found.len() == 1 { "" } else { "s" }
        );
        for f in found {
            super::secrets::print_finding(ctx, s, f.clone(), false);
        }
        ctx.out.warn(format!(
            "session `{s}` not pushed: {why}; nothing of it was sent (`git-session redact {s}` removes them; `--allow FINGERPRINT` sends a false positive)"
        ));
        withheld.push(records::SkippedSession {
            session: s.clone(),
            reason: why,
        });
    }
    ctx.out.record(&records::PushSummary {
        remote: name.clone(),
        sessions: report.sessions,
        pushed,
        up_to_date: report.up_to_date,
        rejected,
        skipped: report
            .skipped
            .iter()
            .map(|(s, r)| records::SkippedSession {
                session: s.clone(),
                reason: r.clone(),
            })
            .collect(),
        batches: report.batches,
        objects: report.objects,
        withheld,
    });
    if !args.dry_run {
        ctx.out.line(format!(
            "{name}: {pushed} ref(s) pushed, {} up to date, {rejected} refused, {} session(s) skipped{}",
            report.up_to_date,
            report.skipped.len(),
            match report.withheld.len() {
                0 => String::new(),
                n => format!(", {n} withheld for secrets"),
            }
        ));
    }
    Ok(
        if rejected > 0 || !report.skipped.is_empty() || !report.withheld.is_empty() {
            exit::NO
        } else {
            exit::OK
        },
    )
}

pub fn fetch(ctx: &Ctx, args: FetchArgs) -> Result<u8> {
    let (name, url, selection) = remote_and_sessions(ctx, &args.args, args.all)?;
    let take = match args.take.as_deref() {
        None => None,
        Some(side) => {
            if matches!(selection, Selection::All) {
                return Err(Usage::TakeNeedsSessions {
                    remote: name,
                    side: side.to_string(),
                }
                .into());
            }
            Some(if side == "local" {
                Take::Local
            } else {
                Take::Remote
            })
        }
    };
    run_fetch(ctx, &name, &url, &selection, take)
}

fn run_fetch(
    ctx: &Ctx,
    name: &str,
    url: &str,
    selection: &Selection,
    take: Option<Take>,
) -> Result<u8> {
    let out = ctx.out;
    let mut summary = records::FetchSummary {
        remote: name.to_string(),
        sessions: 0,
        created: 0,
        fast_forward: 0,
        diverged: 0,
        taken: 0,
        refused: 0,
        deleted: 0,
        kept: 0,
        redacted: 0,
    };
    let mut count = |f: &records::Fetched| {
        summary.sessions += 1;
        match f.outcome.as_str() {
            "created" => summary.created += 1,
            "fast_forward" => summary.fast_forward += 1,
            "diverged" => summary.diverged += 1,
            "taken" => summary.taken += 1,
            "refused" => summary.refused += 1,
            "deleted" => summary.deleted += 1,
            "kept" => summary.kept += 1,
            "redacted" => summary.redacted += 1,
            _ => {}
        }
    };
    sync::fetch(
        &ctx.state,
        name,
        url,
        selection,
        take,
        ctx.locks,
        &ctx.out,
        &mut |f| {
            count(&f);
            match f.outcome.as_str() {
                "refused" | "diverged" | "kept" => out.warn(format!(
                    "session `{}` {}: {}",
                    f.session,
                    f.outcome,
                    f.message.as_deref().unwrap_or("")
                )),
                // A deletion honoured before: said in the records only.
                "up_to_date" | "ahead" | "tombstoned" => {}
                _ => out.line(format!(
                    "{}\t{}{}",
                    f.session,
                    f.outcome,
                    f.message
                        .as_ref()
                        .map(|m| format!("\t{m}"))
                        .unwrap_or_default()
                )),
            }
            out.record(&f);
        },
    )?;
    let deletions = if summary.deleted + summary.kept > 0 {
        format!(
            ", {} deleted, {} kept though deleted",
            summary.deleted, summary.kept
        )
    } else {
        String::new()
    };
    ctx.out.line(format!(
        "{name}: {} session(s): {} new, {} brought up to date, {} diverged, {} resolved, {} refused{deletions}",
        summary.sessions,
        summary.created,
        summary.fast_forward,
        summary.diverged,
        summary.taken,
        summary.refused
    ));
    let failed = summary.diverged + summary.refused + summary.kept > 0;
    ctx.out.record(&summary);
    Ok(if failed { exit::NO } else { exit::OK })
}

pub fn clone(ctx: &Ctx, args: CloneArgs) -> Result<u8> {
    remotes::check_name(&args.name)?;
    remotes::check_url(&args.url)?;
    let url = remotes::absolute(&args.url)?;
    remotes::check_not_ours(&ctx.state, &url)?;
    let added = add(ctx, &args.name, &url)?;
    ctx.out.note(format!(
        "cloning sessions from `{}` into `{}`",
        url,
        ctx.state.root.display()
    ));
    let result = run_fetch(ctx, &args.name, &url, &Selection::All, None);
    // The remote could not be reached (its one `git fetch` failed, before
    // any session was looked at): the remote this clone registered goes
    // again, and the state dir is as it was.
    if added
        && matches!(
            &result,
            Err(Error::Transport(
                git_session::git::transport::TransportError::Failed { .. }
            ))
        )
    {
        let _ = remove(ctx, &args.name);
    }
    result
}
