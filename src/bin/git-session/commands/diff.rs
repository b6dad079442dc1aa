//! `diff`: what a range of turns added (issue 53).
//!
//! Reads: meta.json, every node file, the session's history, and the
//! project's repository for the agent commits. Writes: nothing. Locks: the
//! session, shared. Prints: each turn of the range as `show` prints it,
//! then each agent commit the turn recorded as `git show` prints it
//! (`--stat`: counts); under `--json`, `node` and `agent_patch` records,
//! then one `diff` record.

use crate::commands::show::{Head, Render};
use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::git::patch::CommitPatch;
use git_session::layout::lock;
use git_session::out::records::{AgentPatch, DiffSummary, PatchFile};
use git_session::out::style;
use git_session::view::diff::{self as view_diff, Agent, Ask, Diff, Turn};
use git_session::view::{callees, is_record};

/// How many bytes of diff one agent commit shows at most.
const DIFF_LIMIT: usize = 16 << 20;

/// Show what a range of turns added: the conversation's nodes, as `show`
/// prints them, and, for a session bound to a project, the agent's
/// commits those turns recorded, each as `git show` prints it (read from
/// the project's repository; another session's commits in the same
/// project never are).
///
/// Turns are numbered as `log` numbers them on the session's current
/// branch (or `--branch`). With no turn given: the last turn against the
/// one before; with one: that turn against the one before; with two:
/// everything after TURN_A up to TURN_B (TURN_A 0: from the start). On a
/// terminal, in colour (see `--color`).
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// Session id
    pub session: String,
    /// The turn to compare from (alone: the turn to show); 0 is the start
    #[arg(value_name = "TURN_A")]
    pub turn_a: Option<u64>,
    /// The turn to compare up to
    #[arg(value_name = "TURN_B")]
    pub turn_b: Option<u64>,
    /// The branch whose turns are numbered: a git branch, or a tip's node id
    /// (`git-session branch` lists them) [default: the session's current
    /// branch]
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Counts instead of text: each turn's nodes by role and, for each agent
    /// commit, the files it changed with the lines added and removed (as
    /// `git show --stat`); under `--json`, no `node` records and no patch
    /// text
    #[arg(long)]
    pub stat: bool,
    /// Tool calls whole, as `show --full` prints them
    #[arg(long)]
    pub full: bool,
}

pub fn run(ctx: &Ctx, args: DiffArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
    let out = ctx.out;
    let ask = Ask {
        branch: args.branch.clone(),
        turns: (args.turn_a, args.turn_b),
        limit: DIFF_LIMIT,
    };
    let d = view_diff::diff(&ctx.state, &sd, &args.session, &ask, &mut |w| out.warn(w))?;
    if d.turns.is_empty() {
        ctx.out.note(format!(
            "no turn after turn {} up to turn {}: nothing to show",
            d.from, d.to
        ));
    }
    for (i, t) in d.turns.iter().enumerate() {
        print_turn(ctx, &args, &d, t, i > 0);
    }
    ctx.out.record(&summary(&args.session, &d));
    Ok(exit::OK)
}

/// One turn: its header (after an empty line: `gap`), its nodes (or their
/// counts), its agent commits.
fn print_turn(ctx: &Ctx, args: &DiffArgs, d: &Diff, t: &Turn, gap: bool) {
    let render = Render {
        ctx,
        calls: callees(&t.nodes),
        full: args.full,
    };
    let head = Head {
        number: t.number,
        time: t.time,
        commit: t.commit,
        seqs: t.seqs,
    };
    render.header(&head, gap);
    if args.stat {
        let c = count(std::slice::from_ref(t));
        ctx.out.line(format!(
            "{} node{}: {} user, {} assistant, {} tool{}",
            c.nodes,
            if c.nodes == 1 { "" } else { "s" },
            c.user,
            c.assistant,
            c.tool,
            match c.record {
                0 => String::new(),
                n => format!(", {n} record{}", if n == 1 { "" } else { "s" }),
            }
        ));
    } else {
        for n in &t.nodes {
            render.node(n, t.number, t.commit, false);
        }
    }
    for a in &t.agent {
        ctx.out
            .record(&agent_record(&args.session, t.number, a, args.stat));
        print_agent(ctx, d, a, args.stat);
    }
}

/// An agent commit (or the skip recorded instead) for a person.
fn print_agent(ctx: &Ctx, d: &Diff, a: &Agent, stat: bool) {
    match a {
        Agent::Commit { patch: Some(p), .. } if stat => print_stat(ctx, p),
        Agent::Commit {
            patch: Some(p),
            sha,
            ..
        } => {
            ctx.out.line("");
            print_git_show(ctx, p);
            if p.cut {
                let at = d
                    .project
                    .as_ref()
                    .and_then(|p| p.path.as_deref())
                    .map_or(String::new(), |p| format!(" -C {}", p.display()));
                ctx.out.note(format!(
                    "diffs of agent commit {} past {} MiB left out; `git{at} show {sha}` shows them",
                    git_session::session::cut(sha, 7),
                    DIFF_LIMIT >> 20
                ));
            }
        }
        Agent::Commit {
            patch: None,
            sha,
            project,
            ..
        } => {
            let why = match &d.project {
                Some(p) if p.id == *project => "it is not in the project's repository",
                _ => "the project is not the session's",
            };
            let line = ctx
                .out
                .styled()
                .plain("agent commit ")
                .paint(style::COMMIT, &git_session::session::cut(sha, 7))
                .plain(&format!(" in project `{project}` not shown: {why}"));
            ctx.out.styled_line(&line);
        }
        // Said with the reply that records it; counts say it here.
        Agent::Skipped { project, reason } if stat => ctx
            .out
            .line(format!("no agent commit in project `{project}`: {reason}")),
        Agent::Skipped { .. } => {}
    }
}

/// `p` as `git show` prints it: the `commit` line yellow, the diff in
/// git's colours.
fn print_git_show(ctx: &Ctx, p: &CommitPatch) {
    let whole = p.git_show();
    let diff = p.git_diff();
    let head = &whole[..whole.len() - diff.len()];
    for (i, l) in head.lines().enumerate() {
        let line = match i {
            0 => ctx.out.styled().paint(style::COMMIT, l),
            _ => ctx.out.styled().plain(l),
        };
        ctx.out.styled_line(&line);
    }
    for line in style::diff_lines(ctx.out.colors(), &diff) {
        ctx.out.styled_line(&line);
    }
}

/// `p`'s files as `git show --stat` counts them: `path | N ++-`, then the
/// totals.
fn print_stat(ctx: &Ctx, p: &CommitPatch) {
    let line = ctx
        .out
        .styled()
        .plain("agent commit ")
        .paint(style::COMMIT, &p.id[..p.id.len().min(7)])
        .plain(&format!(" {}", p.subject()));
    ctx.out.styled_line(&line);
    let counts: Vec<(usize, usize)> = p.files.iter().map(|f| f.counts()).collect();
    let width = p
        .files
        .iter()
        .map(|f| f.path.chars().count())
        .max()
        .unwrap_or(0);
    let most = counts.iter().map(|(a, r)| a + r).max().unwrap_or(0);
    let digits = most.to_string().len();
    // The bars of the largest change fit in 40 columns; any change shows.
    let bar = |n: usize| match most {
        0..=40 => n,
        _ if n == 0 => 0,
        _ => (n * 40 / most).max(1),
    };
    for (f, (a, r)) in p.files.iter().zip(&counts) {
        let line = ctx.out.styled().plain(&format!(" {:<width$} | ", f.path));
        let line = match (f.binary, a + r) {
            (true, _) => line.plain("Bin"),
            (false, 0) => line.plain(&format!("{:>digits$}", 0)),
            (false, n) => line
                .plain(&format!("{n:>digits$} "))
                .paint(style::ADDED, &"+".repeat(bar(*a)))
                .paint(style::REMOVED, &"-".repeat(bar(*r))),
        };
        ctx.out.styled_line(&line);
    }
    let (added, removed) = p.counts();
    let plural = |n: usize, one: &str, many: &str| match n {
        1 => format!("{n} {one}"),
        _ => format!("{n} {many}"),
    };
    let mut total = format!(
        " {}",
        plural(p.files.len(), "file changed", "files changed")
    );
    if added > 0 {
        total.push_str(&format!(
            ", {}",
            plural(added, "insertion(+)", "insertions(+)")
        ));
    }
    if removed > 0 {
        total.push_str(&format!(
            ", {}",
            plural(removed, "deletion(-)", "deletions(-)")
        ));
    }
    ctx.out.line(total);
}

/// The `agent_patch` record of `a`, recorded by turn `turn`.
fn agent_record(session: &str, turn: u64, a: &Agent, stat: bool) -> AgentPatch {
    let mut r = AgentPatch {
        session: session.to_string(),
        turn,
        project_id: String::new(),
        commit: None,
        skipped: None,
        found: false,
        subject: None,
        author: None,
        time: None,
        time_rfc3339: None,
        files: Vec::new(),
        patch: None,
        cut: false,
    };
    match a {
        Agent::Skipped { project, reason } => {
            r.project_id = project.clone();
            r.skipped = Some(reason.clone());
        }
        Agent::Commit {
            project,
            sha,
            patch,
            ..
        } => {
            r.project_id = project.clone();
            r.commit = Some(sha.clone());
            if let Some(p) = patch {
                r.found = true;
                r.subject = Some(p.subject().to_string());
                r.author = Some(p.author.clone());
                r.time = Some(p.time as f64);
                r.time_rfc3339 = Some(git_session::out::rfc3339(p.time as f64));
                r.files = p
                    .files
                    .iter()
                    .map(|f| {
                        let (added, removed) = f.counts();
                        PatchFile {
                            path: f.path.clone(),
                            status: f.status.to_string(),
                            binary: f.binary,
                            added: added as u64,
                            removed: removed as u64,
                        }
                    })
                    .collect();
                r.patch = (!stat).then(|| p.git_show());
                r.cut = p.cut;
            }
        }
    }
    r
}

/// The nodes of `turns` by role.
fn count(turns: &[Turn]) -> DiffSummary {
    let mut s = DiffSummary {
        session: String::new(),
        branch: String::new(),
        from: 0,
        to: 0,
        nodes: 0,
        user: 0,
        assistant: 0,
        tool: 0,
        record: 0,
        agent_commits: 0,
    };
    for t in turns {
        for n in &t.nodes {
            s.nodes += 1;
            match n.role.as_str() {
                _ if is_record(n) => s.record += 1,
                "user" => s.user += 1,
                "llm" => s.assistant += 1,
                "code" => s.tool += 1,
                _ => {}
            }
        }
        s.agent_commits += t
            .agent
            .iter()
            .filter(|a| matches!(a, Agent::Commit { patch: Some(_), .. }))
            .count() as u64;
    }
    s
}

/// The closing `diff` record.
fn summary(session: &str, d: &Diff) -> DiffSummary {
    DiffSummary {
        session: session.to_string(),
        branch: d.branch.clone(),
        from: d.from,
        to: d.to,
        ..count(&d.turns)
    }
}
