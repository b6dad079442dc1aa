//! `commit-turn`: mirror the turn into git (SPEC §5.3, §2.3).
//!
//! Reads: meta.json, `history/` names, the index, other files by stat.
//! Writes: meta.json (status, first-turn title) when it changes, git objects,
//! refs (compare-and-swap), the index, one index journal row. Locks: the
//! session, exclusive. Prints: one commit id per commit made.

use crate::cli::Ctx;
use crate::error::{Result, exit};
use crate::layout::SessionDir;
use crate::layout::history::Catalog;
use crate::layout::schema::{self, Meta};
use crate::layout::{atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::session;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TurnStatus {
    Idle,
    Done,
    Failed,
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
    /// Tokens the turn used [default: from the nodes' metadata]
    #[arg(long, value_name = "N")]
    pub tokens: Option<u64>,
    /// Session status after the turn (`done` also marks it unread; `failed` adds a trailer)
    #[arg(long, value_enum, default_value_t = TurnStatus::Idle)]
    pub status: TurnStatus,
}

pub fn run(ctx: &Ctx, args: CommitTurnArgs) -> Result<u8> {
    if let Some(d) = args.duration
        && !(d.is_finite() && d >= 0.0)
    {
        return Err(crate::error::Error::usage(
            format!("invalid `--duration` {d}"),
            Some("give seconds, 0 or more".into()),
        ));
    }
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
    let opts = CommitOptions {
        message: args.message.clone(),
        duration: args.duration,
        tokens: args.tokens,
        failed: args.status == TurnStatus::Failed,
        now: crate::out::now(),
        dry_run: false,
        rescan: false,
        bulk: false,
    };
    let out = ctx.out;
    let before = Meta::read(&sd.meta())?;
    let mut meta = before.clone();
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
    if made.is_empty() {
        ctx.out.note(format!(
            "nothing new to commit in session `{}`",
            args.session
        ));
        return Ok(exit::OK);
    }
    for m in &made {
        ctx.out.record(
            "turn_committed",
            &serde_json::json!({"session": args.session, "commit": m}),
        );
        ctx.out.line(&m.commit);
        if m.new_branch {
            ctx.out
                .note(format!("turn {} starts branch `{}`", m.turn, m.branch));
        }
    }
    if mirror::maintain_if_due(&sd)? == Some(false) {
        ctx.out
            .warn("`git` was not found: skipping background packing of the session repo");
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
        let text = crate::store::first_user_text(sd, &Catalog::load(sd)?);
        let title = text
            .map(|t| session::title_from_text(&t))
            .unwrap_or_default();
        if !title.is_empty() {
            meta.set("title", title);
            meta.set("_auto_titled", true);
            if meta.0.get("_title_gen_count").is_none() {
                meta.set("_title_gen_count", 1);
            }
        }
    }
    Ok(())
}
