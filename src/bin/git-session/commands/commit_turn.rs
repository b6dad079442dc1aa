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
use git_session::error::{Result, Usage, exit};
use git_session::layout::SessionDir;
use git_session::layout::history::Catalog;
use git_session::layout::schema::{self, Meta};
use git_session::layout::{atomic, lock, registry};
use git_session::mirror::{self, CommitOptions};
use git_session::project;

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
        return Err(Usage::DurationSeconds { value: d }.into());
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
    // The turn's secret scan comes after the commit; its rules are built
    // meanwhile.
    git_session::secrets::rules::Rules::warm_in_background();
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
            git_session::project::agent::project_turn(
                &ctx.out,
                &sd,
                &args.session,
                p,
                &declared,
                &baseline_path,
                last,
            )?;
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
        ctx.out.record(&git_session::out::records::TurnCommitted {
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
            git_session::out::commits_done(&made, false)
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
    made: &[git_session::out::records::Commit],
) {
    let (Some(first), Some(last)) = (
        made.iter().filter_map(|m| m.first_seq).min(),
        made.iter().filter_map(|m| m.last_seq).max(),
    ) else {
        return;
    };
    git_session::out::trace("commit-turn: committed");
    let found = git_session::secrets::session::scan_seqs(sd, first, last).unwrap_or_default();
    git_session::out::trace("commit-turn: secrets scanned");
    // The allow-list is read only when there is something to hold it to.
    if found.is_empty() {
        return;
    }
    let Ok(allowed) = git_session::secrets::session::allowed(&ctx.state, &[]) else {
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
        now: git_session::out::now(),
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
        ctx.out.record(&git_session::out::records::TurnPlanned {
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

/// Status after the turn, and the phase-1 title on the first turn.
fn update_meta(sd: &SessionDir, meta: &mut Meta, status: TurnStatus) -> Result<()> {
    meta.set("status", status.as_str());
    if status == TurnStatus::Done {
        meta.set("unread", true);
    }
    if meta.title().is_empty() && !meta.flag("_user_titled") {
        // The first turn's user message, wherever it is (cheap: the first user files).
        git_session::store::first_turn_title(sd, &Catalog::load(sd)?, meta);
    }
    Ok(())
}
