//! `checkout`: look at an earlier turn (SPEC §2.3, §5.6): a read-only view
//! that moves `meta.head_id` and git HEAD, deletes nothing, and makes the next
//! turn fork from there.
//!
//! Reads: meta.json, every node, the session's history. Writes: meta.json
//! (`head_id`, `view_tip`; never `updated_at`), git HEAD. Locks: the session,
//! exclusive. Prints: a `checkout` record; where HEAD is now as a note.
//! Refuses a turn no commit holds yet, before anything is written.

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::git::{RefUpdate, SessionRepo};
use git_session::layout::history::{self, Catalog};
use git_session::layout::schema::Meta;
use git_session::layout::{atomic, lock};
use git_session::view::{self, CheckoutError, Dag, ViewError};

/// Move the session's head to an earlier turn (or back to a branch tip).
///
/// TARGET is a turn number on the current branch, `prev` or `next`, a branch
/// name (`main`, `retry-…`), a commit id or unique prefix (4+ hex digits; a
/// number is a turn when that turn exists), or a node id. No file is
/// deleted; git HEAD is attached when the turn's commit is a branch tip and
/// detached otherwise. The next `append` + `commit-turn` fork a
/// `retry-<assistant id>` branch from the checked-out turn.
///
/// `next` follows the line being looked at (the branch `checkout` came back
/// along, else HEAD's). At a fork, where other branches go on differently
/// from the turn, it still does, and names the others, each with the
/// command that goes to its next turn.
///
/// Refused while the session's status is `running`, while messages appended
/// since the last `commit-turn` are not committed, and for a turn not in a
/// commit yet: commit it first; nothing moves.
#[derive(Debug, clap::Args)]
pub struct CheckoutArgs {
    /// Session id
    pub session: String,
    /// Turn number, prev, next, branch, commit or node id
    pub target: String,
}

pub fn run(ctx: &Ctx, args: CheckoutArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
    let mut meta = Meta::read(&sd.meta())?;
    if meta.status() == "running" {
        return Err(ViewError::TurnRunning {
            session: args.session,
        }
        .into());
    }
    let out = ctx.out;
    let catalog = Catalog::load(&sd)?;
    let nodes = history::read_all(&sd.history(), &catalog, &mut |w| out.warn(w));
    let repo = SessionRepo::open(&sd.dir)?;
    let r = view::resolve(&args.target, &meta, &nodes, &repo)?;
    if r.commit.is_none() && !committed(&repo, &catalog, &r.head)? {
        return Err(CheckoutError::NotCommitted {
            session: args.session,
            turn: r.turn,
            head: r.head,
        }
        .into());
    }

    // Messages appended since the last `commit-turn` belong to the turn
    // HEAD is on: with HEAD moved first, they would be committed elsewhere.
    if let Some(last) = nodes.iter().rev().find(|n| n.is_conversational())
        && !committed(&repo, &catalog, &last.id)?
    {
        return Err(CheckoutError::Uncommitted {
            session: args.session,
            last: last.id.clone(),
        }
        .into());
    }

    // Where `next` went from, to name the other ways on from there.
    let from = meta.head_id().unwrap_or_default().to_string();
    // Keep browsing the same tip while the new head lies on its chain.
    let dag = Dag::new(&nodes);
    let viewing = view::view_tip(&meta, &dag).unwrap_or_else(|| r.head.clone());
    let on_chain = dag.chain(&viewing).iter().any(|n| n.id == r.head);
    let tip = if on_chain { viewing } else { r.head.clone() };
    meta.set("head_id", r.head.as_str());
    if tip == r.head {
        meta.0.remove("view_tip");
    } else {
        meta.set("view_tip", tip.as_str());
    }
    atomic::write(&sd.meta(), &meta.to_json())?;

    // git HEAD: attached to a branch whose tip is the turn's commit.
    let head = repo.head()?;
    let mut branch = None;
    if let Some(c) = r.commit {
        let at: Vec<String> = repo
            .branches()?
            .into_iter()
            .filter(|(_, t)| *t == c)
            .map(|(b, _)| b)
            .collect();
        branch = head
            .branch
            .clone()
            .filter(|b| at.contains(b))
            .or_else(|| at.iter().find(|b| *b == git_session::git::MAIN).cloned())
            .or_else(|| at.first().cloned());
        let update = match &branch {
            Some(b) => RefUpdate::AttachHead { branch: b.clone() },
            None => RefUpdate::DetachHead { commit: c },
        };
        if head.commit != Some(c) || head.branch != branch {
            repo.update_refs(&[update])?;
        }
    }
    ctx.out.record(&git_session::out::records::Checkout {
        session: args.session.clone(),
        turn: r.turn,
        head_id: r.head.clone(),
        commit: r.commit.map(|c| c.to_string()),
        branch: branch.clone(),
    });
    // A message, as git's own: on stderr, silenced by `-q`.
    match r.commit {
        Some(c) => {
            let info = repo.commit_info(c)?;
            let subject = info.message.lines().next().unwrap_or("");
            let at = match &branch {
                Some(b) => format!("on branch `{b}`"),
                None => format!("detached at {}", c.to_hex_with_len(7)),
            };
            ctx.out.note(format!(
                "HEAD is now at {} {subject} ({at})",
                c.to_hex_with_len(7)
            ));
        }
        // Committed without trailers (the Python store's): no commit is
        // known as the turn's.
        None => ctx.out.note(format!(
            "head is now at turn {} (node `{}`); git HEAD unchanged",
            r.turn, r.head
        )),
    }
    if args.target == "next" {
        let (taken, forks) = view::forks_at(&from, &r, &nodes, &repo)?;
        if !forks.is_empty() {
            ctx.out
                .note(fork_note(&args.session, r.turn, &taken, &forks));
        }
    }
    if branch.is_none() && r.commit.is_some() {
        let back = head.branch.as_deref().unwrap_or(git_session::git::MAIN);
        ctx.out.note(format!(
            "the next turn starts a retry branch from here; `git-session checkout {} {back}` goes back",
            args.session
        ));
    }
    Ok(exit::OK)
}

/// What `next` at a fork says: the branch it followed, and for each other
/// way on, its branches and the command that goes to its turn.
fn fork_note(session: &str, turn: u64, taken: &[String], forks: &[view::Fork]) -> String {
    let quoted = |bs: &[String]| {
        bs.iter()
            .map(|b| format!("`{b}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let followed = if taken.is_empty() {
        "the line being looked at".to_string()
    } else {
        format!("{} (the line being looked at)", quoted(taken))
    };
    let others: Vec<String> = forks
        .iter()
        .map(|f| {
            let target = match f.turn.commit {
                Some(c) => c.to_hex_with_len(7).to_string(),
                None => f.turn.head.clone(),
            };
            format!(
                "{} (`git-session checkout {session} {target}` goes to its turn {turn})",
                quoted(&f.branches)
            )
        })
        .collect();
    format!(
        "turn {turn} is a fork: `next` followed {followed}; it goes on differently on {}",
        others.join("; on ")
    )
}

/// Whether node `id` is in a commit: by the `Nodes:` trailers, or, in a
/// session whose commits have none (the Python store's), by the trees on
/// the lines from HEAD and the branches.
fn committed(repo: &SessionRepo, catalog: &Catalog, id: &str) -> Result<bool> {
    let Some(e) = catalog.get(id) else {
        return Ok(false);
    };
    Ok(git_session::mirror::holders_of(repo, &[(e.seq, e.file.as_str())])?[0].is_some())
}
