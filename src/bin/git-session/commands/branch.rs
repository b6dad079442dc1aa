//! `branch`: the DAG tips with their git branches (SPEC §5.7).
//!
//! Reads: meta.json, every node, the session's refs. Writes: nothing. Locks:
//! the session, shared. Prints: one row per tip, the current one marked.

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::git::SessionRepo;
use git_session::layout::history::{self, Catalog};
use git_session::layout::lock;
use git_session::layout::schema::Meta;
use git_session::out::style;
use git_session::session;
use git_session::view::{self, Dag};

/// List the conversation's branches: every DAG tip with its git branch, turn
/// count and last activity; `*` marks the one being viewed.
#[derive(Debug, clap::Args)]
pub struct BranchArgs {
    /// Session id
    pub session: String,
}

use git_session::out::records::Branch as Row;

pub fn run(ctx: &Ctx, args: BranchArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
    let meta = Meta::read(&sd.meta())?;
    let out = ctx.out;
    let catalog = Catalog::load(&sd)?;
    let nodes = history::read_all(&sd.history(), &catalog, &mut |w| out.warn(w));
    let repo = SessionRepo::open(&sd.dir)?;
    // The tips with their git branches, turns and last activity, most
    // recent first: as `export` and `diff --branch` see them.
    let (lines, _) = view::branches(&meta, &nodes, &catalog, Some(&repo))?;
    let git_branches = repo.branches()?;
    let dag = Dag::new(&nodes);
    let current = view::view_tip(&meta, &dag);
    let mut rows = Vec::new();
    for line in lines {
        let Some(tip) = dag.by_id.get(line.tip.as_str()).copied() else {
            continue;
        };
        let chain = dag.chain(&tip.id);
        // The commit of the first branch that ends at this tip; a tip no
        // branch ends at: the commit that holds it, if any (by its trailer,
        // else by the trees: the Python store's commits carry none).
        let on_branch = line
            .names
            .first()
            .and_then(|n| git_branches.iter().find(|(b, _)| b == n))
            .map(|(_, c)| *c);
        let commit = match on_branch {
            Some(c) => Some(c),
            None => {
                let seq = tip.seq.max(0) as u64;
                let file = catalog.get(&tip.id).map(|e| e.file).unwrap_or_default();
                match git_session::mirror::commit_of_seq(&repo, seq)? {
                    Some(c) => Some(c),
                    None => git_session::mirror::holders_of(&repo, &[(seq, file.as_str())])?
                        .pop()
                        .flatten(),
                }
            }
        };
        let subject = chain
            .iter()
            .rev()
            .find(|n| n.starts_turn())
            .map(|n| session::cut(&session::one_line(&n.text()), 50))
            .unwrap_or_default();
        rows.push(Row {
            current: current
                .as_deref()
                .is_some_and(|c| c == tip.id || dag.chain(c).iter().any(|n| n.id == tip.id)),
            tip: tip.id.clone(),
            branches: line.names,
            commit: commit.map(|c| c.to_string()),
            turns: line.turns,
            last_activity: line.last_activity,
            last_activity_rfc3339: git_session::out::rfc3339(line.last_activity),
            subject,
        });
    }
    let width = rows
        .iter()
        .map(|r| r.branches.join(",").len().max(13))
        .max()
        .unwrap_or(13);
    for r in &rows {
        ctx.out.record(r);
        let name = if r.branches.is_empty() {
            if r.commit.is_some() {
                "(no branch)".to_string()
            } else {
                "(uncommitted)".to_string()
            }
        } else {
            r.branches.join(",")
        };
        let (marker, name_style) = match (r.current, r.branches.is_empty()) {
            (true, _) => ("*", style::CURRENT),
            (false, false) => (" ", style::BRANCH),
            (false, true) => (" ", style::PLAIN),
        };
        let line = ctx
            .out
            .styled()
            .paint(style::CURRENT, marker)
            .plain(" ")
            .paint(name_style, &format!("{name:<width$}"))
            .plain(&format!(
                "  turn {:<3} {}  {}  {}",
                r.turns,
                git_session::out::short_time(r.last_activity),
                r.tip,
                r.subject
            ));
        ctx.out.styled_line(&line);
    }
    Ok(exit::OK)
}
