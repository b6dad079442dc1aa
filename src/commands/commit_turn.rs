//! `commit-turn`: mirror the turn into git (SPEC §5.3, §2.3).
//!
//! Reads: meta.json, `history/` names, the index, other files by stat.
//! Writes: meta.json (status, first-turn title) when it changes, git objects,
//! refs (compare-and-swap), the index, one index journal row; with a
//! project's auto-commit, first the agent's commit in the project and its
//! record in the turn's assistant node (one session commit per turn). Locks:
//! the session's project (when it is bound to one with auto-commit), then
//! the session, both exclusive. Prints: one commit id per commit made (and
//! a note when a commit holds no turn: the session's files brought up to
//! date).

use crate::context::Ctx;
use crate::error::{Result, exit};
use crate::layout::SessionDir;
use crate::layout::history::{self, Catalog};
use crate::layout::schema::{self, Meta};
use crate::layout::{atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::project::{self, Decision};
use crate::session;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TurnStatus {
    Idle,
    Done,
    Failed,
    /// The layout's spelling; `needs-input` is accepted too.
    #[value(name = "needs_input", alias = "needs-input")]
    NeedsInput,
}

impl TurnStatus {
    fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Idle => "idle",
            TurnStatus::Done => "done",
            TurnStatus::Failed => "failed",
            TurnStatus::NeedsInput => "needs_input",
        }
    }
}

/// Commit the turn: one git commit per turn not yet in git.
///
/// The tree is the whole session directory; afterwards `git status` in the
/// session repo is clean. With nothing new, no commit is made (exit 0).
#[derive(Debug, clap::Args)]
pub struct CommitTurnArgs {
    /// Session id
    pub session: String,
    /// Subject text instead of the user message's first line (more lines become the body)
    #[arg(long, short, value_name = "M")]
    pub message: Option<String>,
    /// How long the turn took, in seconds [default: from the nodes' times]
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Tokens the turn used [default: each reply's input + output tokens from
    /// its metadata (`usage` as Claude Code writes it; Codex's running totals
    /// as the turn's share), summed; see git-session-layout(5)]
    #[arg(long, value_name = "N")]
    pub tokens: Option<u64>,
    /// Session status after the turn (`done` also marks it unread; `failed` adds a trailer)
    #[arg(long, value_enum, default_value_t = TurnStatus::Idle)]
    pub status: TurnStatus,
    /// The files the agent changed in the project (relative to it): with
    /// auto-commit, only these are committed, and only if none was dirty
    /// when the turn began
    #[arg(long, value_name = "P", num_args = 1..)]
    pub project_paths: Vec<String>,
    /// Print the commits the turn would make (turn, branch, nodes) and
    /// commit nothing: meta.json, the project and git are left as they are
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

pub fn run(ctx: &Ctx, args: CommitTurnArgs) -> Result<u8> {
    if let Some(d) = args.duration
        && !(d.is_finite() && d >= 0.0)
    {
        return Err(crate::error::Error::usage(
            "usage::duration",
            format!("invalid `--duration` {d}"),
            Some("give seconds, 0 or more".into()),
        ));
    }
    let sd = ctx.state.find_session(&args.session)?;
    // The project's lock too: two sessions of one project end their turns
    // at once, and each agent commit is decided and made on the other's.
    if args.dry_run {
        let _lock = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
        return dry_run(ctx, &sd, &args.session, &opts(&args));
    }
    let locks = ctx.lock_project_and_session(&sd, &args.session)?;
    let opts = opts(&args);
    let out = ctx.out;
    let before = locks.meta.clone();
    let mut meta = before.clone();
    // Project-Git first (SPEC §5.10): the project commit is made before the
    // session commit and its id (or the skip reason) recorded in the turn's
    // assistant node, so that the turn is one session commit. Only a turn
    // with new nodes gets one: the plan says which.
    let project = locks.project.clone().filter(|p| p.auto_commit);
    let baseline_path = sd.private_dir().join("baseline.json");
    if let Some(p) = &project {
        // A bad path is a usage error whether or not there is a turn.
        let root = p.path.clone().unwrap_or_default();
        let declared: Vec<String> = args
            .project_paths
            .iter()
            .map(|d| project::project_relative(&root, d))
            .collect::<Result<_>>()?;
        let plan = mirror::commit_pending(
            &sd,
            &args.session,
            &CommitOptions {
                dry_run: true,
                ..opts.clone()
            },
            &mut |_| Ok(()),
            &mut |_| {},
        )?;
        if let Some(last) = plan.last() {
            project_turn(ctx, &sd, &args.session, p, &declared, &baseline_path, last)?;
        }
    }
    let made = mirror::commit_pending(
        &sd,
        &args.session,
        &opts,
        &mut |_pending| {
            update_meta(&sd, &mut meta, args.status)?;
            if meta != before {
                atomic::write(&sd.meta(), &meta.to_json())?;
            }
            Ok(())
        },
        &mut |w| out.warn(w),
    )?;
    if meta != before {
        registry::journal_append(&ctx.state, &schema::index_row(&meta, &args.session, None))?;
    }
    // The turn's appends left their rows in the journal: index.json shows
    // them once the turn is committed (SPEC §3).
    registry::owe_fold(&ctx.state);
    let _ = std::fs::remove_file(&baseline_path);
    if made.is_empty() {
        ctx.out.note(format!(
            "nothing new to commit in session `{}`",
            args.session
        ));
        return Ok(exit::OK);
    }
    for m in &made {
        ctx.out.record(&crate::out::records::TurnCommitted {
            session: args.session.clone(),
            commit: m.clone(),
        });
        ctx.out.line(&m.commit);
        if m.new_branch {
            ctx.out
                .note(format!("turn {} starts branch `{}`", m.turn, m.branch));
        }
    }
    // A commit that holds no node is no turn: say so, in the words
    // `backfill` uses.
    if made.iter().any(|m| !m.is_turn()) {
        ctx.out.note(format!(
            "session `{}`: {}",
            args.session,
            crate::out::commits_done(&made, false)
        ));
    }
    warn_of_secrets(ctx, &sd, &args.session, &made);
    if mirror::maintain_if_due(&sd)? == Some(false) {
        ctx.out
            .warn("`git` was not found: skipping background packing of the session repo");
    }
    Ok(exit::OK)
}

/// Say which secrets the turns just committed hold (a scan of their nodes
/// alone): `push` will withhold the session until they are redacted or
/// allowed. The record is as it was: a warning, never a refusal.
fn warn_of_secrets(
    ctx: &Ctx,
    sd: &SessionDir,
    session: &str,
    made: &[crate::out::records::Commit],
) {
    let (Some(first), Some(last)) = (
        made.iter().filter_map(|m| m.first_seq).min(),
        made.iter().filter_map(|m| m.last_seq).max(),
    ) else {
        return;
    };
    crate::out::trace("commit-turn: committed");
    let found = crate::secrets::session::scan_seqs(sd, first, last).unwrap_or_default();
    crate::out::trace("commit-turn: secrets scanned");
    // The allow-list is read only when there is something to hold it to.
    if found.is_empty() {
        return;
    }
    let Ok(allowed) = crate::secrets::session::allowed(&ctx.state, &[]) else {
        return;
    };
    let found: Vec<_> = found
        .into_iter()
        .filter(|f| !allowed.contains(&f.fingerprint))
        .collect();
    if found.is_empty() {
        return;
    }
    let listed: Vec<String> = found
        .iter()
        .map(|f| {
            format!(
                "{} {} in {} {}",
                f.rule,
                f.masked,
                f.node.as_deref().unwrap_or(&f.path),
                f.field
            )
        })
        .collect();
    ctx.out.warn(format!(
        "this turn of `{session}` holds {} secret{}: {}; `git-session push` withholds the session until `git-session redact {session}` (or `git-session secrets allow` for a false positive)",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        listed.join("; ").trim_end()
    ));
}

/// What `commit-turn` asks of the mirror.
fn opts(args: &CommitTurnArgs) -> CommitOptions {
    CommitOptions {
        message: args.message.clone(),
        duration: args.duration,
        tokens: args.tokens,
        failed: args.status == TurnStatus::Failed,
        now: crate::out::now(),
        dry_run: false,
        rescan: false,
        bulk: false,
        modified: Vec::new(),
        ..Default::default()
    }
}

/// `--dry-run`: the plan (`mirror::plan`), printed.
fn dry_run(ctx: &Ctx, sd: &SessionDir, session_id: &str, opts: &CommitOptions) -> Result<u8> {
    let plan = mirror::commit_pending(
        sd,
        session_id,
        &CommitOptions {
            dry_run: true,
            ..opts.clone()
        },
        &mut |_| Ok(()),
        &mut |w| ctx.out.warn(w),
    )?;
    if plan.is_empty() {
        ctx.out
            .note(format!("nothing new to commit in session `{session_id}`"));
    }
    for p in plan {
        let seqs = match (p.first_seq, p.last_seq) {
            (Some(a), Some(b)) if a == b => format!(" (seq {a})"),
            (Some(a), Some(b)) => format!(" (seqs {a}..{b})"),
            _ => String::new(),
        };
        let on = match (p.branch.as_str(), p.new_branch) {
            ("", _) => "a new branch".to_string(),
            (b, true) => format!("new branch `{b}`"),
            (b, false) => format!("`{b}`"),
        };
        ctx.out.line(format!(
            "would commit turn {}: {} node(s){seqs} on {on}",
            p.turn, p.nodes
        ));
        ctx.out.record(&crate::out::records::TurnPlanned {
            session: session_id.to_string(),
            turn: p.turn,
            branch: p.branch,
            new_branch: p.new_branch,
            first_seq: p.first_seq,
            last_seq: p.last_seq,
            nodes: p.nodes,
        });
    }
    Ok(exit::OK)
}

/// The node that records the project commit: the turn's assistant reply
/// among the nodes about to be committed, else the last of them (a committed
/// node is never rewritten).
fn record_node(sd: &SessionDir, first: u64, last: u64) -> Result<Option<history::Entry>> {
    let catalog = Catalog::load(sd)?;
    let pending: Vec<history::Entry> = catalog
        .rev_entries()
        .take_while(|e| e.seq >= first)
        .filter(|e| e.seq <= last)
        .collect();
    Ok(pending
        .iter()
        .find(|e| matches!(e.letter, 'a' | 'l'))
        .or(pending.first())
        .cloned())
}

/// Decide, make the agent's commit in the project (or skip it), and record
/// the outcome in the turn's node, all before the session commit.
fn project_turn(
    ctx: &Ctx,
    sd: &SessionDir,
    session_id: &str,
    p: &crate::layout::projects::Project,
    declared: &[String],
    baseline_path: &std::path::Path,
    turn: &mirror::Made,
) -> Result<()> {
    let baseline: Option<serde_json::Value> = crate::layout::atomic::read(baseline_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let (first, last) = (
        turn.first_seq.unwrap_or(0),
        turn.last_seq.unwrap_or(u64::MAX),
    );
    let target = record_node(sd, first, last)?;
    let record = match project::decide(p, baseline.as_ref(), declared)? {
        Decision::Skip(reason) => {
            ctx.out
                .warn(format!("no agent commit in project `{}`: {reason}", p.id));
            ctx.out.record(&crate::out::records::ProjectCommit {
                session: session_id.into(),
                project: p.id.clone(),
                commit: None,
                paths: Vec::new(),
                skipped: Some(reason.into()),
            });
            serde_json::json!({"project_id": p.id, "skipped": reason})
        }
        Decision::Commit { repo, paths } => {
            agent_commit(ctx, sd, session_id, p, &repo, &paths, turn, target.as_ref())?
        }
    };
    if let Some(t) = &target {
        project::stamp(sd, t, record)?;
    }
    Ok(())
}

/// Commit the agent's paths in the project's repository; returns the record
/// for the turn's node. The trailers name the session, the turn and its
/// nodes: `project log` finds the session commit by them.
#[allow(clippy::too_many_arguments)]
fn agent_commit(
    ctx: &Ctx,
    sd: &SessionDir,
    session_id: &str,
    p: &crate::layout::projects::Project,
    repo: &crate::git::project::UserRepo,
    paths: &[String],
    turn: &mirror::Made,
    reply: Option<&history::Entry>,
) -> Result<serde_json::Value> {
    let reply_node = reply.and_then(|e| history::read_node(&sd.history(), e).ok());
    let model = reply_node
        .as_ref()
        .filter(|n| n.role == "llm")
        .map(|n| n.name.as_str())
        .filter(|n| !n.is_empty())
        .unwrap_or("agent");
    // An author name git takes: no control characters, no `<` or `>`.
    let model: String = model
        .chars()
        .map(|c| match c {
            '<' | '>' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    let catalog = Catalog::load(sd)?;
    let user_text = catalog
        .rev_entries()
        .filter(|e| e.letter == 'u')
        .filter_map(|e| history::read_node(&sd.history(), &e).ok())
        .find(|n| n.starts_turn())
        .map(|n| {
            let first = session::one_line(n.text().lines().next().unwrap_or(""));
            // Text git accepts and a terminal shows as it is (see
            // `MessageParts::render`).
            crate::out::terminal_safe(&session::cut(&first, 60)).into_owned()
        })
        .unwrap_or_default();
    let message = format!(
        "[agent {session_id}] turn {}: {user_text}\n\nSession: {session_id}\nTurn: {}\nNodes: {}..{}\n",
        turn.turn,
        turn.turn,
        turn.first_seq.unwrap_or(0),
        turn.last_seq.unwrap_or(0),
    );
    let name = format!("agent ({model} via OpenProgram)");
    let email = "agent@openprogram.local";
    let now = crate::out::now();
    let made = if p.hooks {
        crate::git::project::hooked_commit(&repo.root, paths, &name, email, &message)
            .map_err(|why| (HOOK_REFUSED, why))
    } else {
        match repo.commit_paths(paths, &name, email, &message, now) {
            Ok(id) => Ok(id.to_string()),
            // A file the agent's process is still writing, a branch the
            // user moved meanwhile, or git busy with the index: this turn
            // has no project commit (a skip, as when a hook refuses it).
            Err(e) => {
                let code = miette::Diagnostic::code(&e).map(|c| c.to_string());
                match [FILE_CHANGING, HEAD_MOVED, GIT_BUSY]
                    .into_iter()
                    .find(|r| code.as_deref().is_some_and(|c| c.ends_with(r)))
                {
                    Some(reason) => Err((reason, e.to_string())),
                    None => return Err(e),
                }
            }
        }
    };
    let (sha, skip) = match made {
        Ok(sha) => (Some(sha), None),
        Err((reason, why)) => {
            ctx.out.warn(format!(
                "no agent commit in project `{}`: {reason}: {why}",
                p.id
            ));
            (None, Some(reason))
        }
    };
    ctx.out.record(&crate::out::records::ProjectCommit {
        session: session_id.into(),
        project: p.id.clone(),
        commit: sha.clone(),
        paths: if sha.is_some() {
            paths.to_vec()
        } else {
            Vec::new()
        },
        skipped: skip.map(Into::into),
    });
    Ok(match &sha {
        Some(sha) => {
            ctx.out.note(format!(
                "agent commit {} in project `{}` ({} path(s))",
                &sha[..7.min(sha.len())],
                p.id,
                paths.len()
            ));
            serde_json::json!({
                "project_id": p.id, "repo": repo.root, "sha": sha, "paths": paths,
            })
        }
        None => serde_json::json!({"project_id": p.id, "skipped": skip}),
    })
}

/// The skip reason when the project's own hooks refuse the agent commit.
const HOOK_REFUSED: &str = "hook_refused";
/// The skip reason when a large file changed while it was read.
const FILE_CHANGING: &str = crate::git::project::FILE_CHANGING;
/// The skip reason when the project's branch moved while the commit was made.
const HEAD_MOVED: &str = crate::git::project::HEAD_MOVED;
/// The skip reason when git held the project's index too long.
const GIT_BUSY: &str = crate::git::project::GIT_BUSY;

/// Status after the turn, and the phase-1 title on the first turn.
fn update_meta(sd: &SessionDir, meta: &mut Meta, status: TurnStatus) -> Result<()> {
    meta.set("status", status.as_str());
    if status == TurnStatus::Done {
        meta.set("unread", true);
    }
    if meta.title().is_empty() && !meta.flag("_user_titled") {
        // The first turn's user message, wherever it is (cheap: the first user files).
        crate::store::first_turn_title(sd, &Catalog::load(sd)?, meta);
    }
    Ok(())
}
