//! `show`: the conversation along the head's branch (SPEC §5.5).
//!
//! Reads: meta.json and every node file. Writes: nothing. Locks: the session,
//! shared. Prints: a transcript (or one `node` record per node).

use std::collections::HashMap;

use crate::context::Ctx;
use crate::error::{Result, exit};
use crate::layout::history::{self, Catalog};
use crate::layout::lock;
use crate::layout::schema::{Meta, Node, ROOT};
use crate::session;

/// Print the conversation of a session as a person reads it: the branch that
/// ends at the head (or at `--at`), with tool calls folded to one line each.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Session id
    pub session: String,
    /// Show the conversation as it stood at this turn (a turn number, prev,
    /// next, branch, commit or node id) without moving anything
    #[arg(long, value_name = "TARGET")]
    pub at: Option<String>,
}

/// The branch ending at `tip`: conversation nodes root → tip, each followed by
/// the nodes it called, in seq order.
pub fn branch_nodes<'a>(nodes: &'a [Node], tip: Option<&str>) -> Vec<(u64, &'a Node)> {
    let by_id: HashMap<&str, &Node> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let mut chain = Vec::new();
    let mut cur = tip;
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = cur {
        if id == ROOT || !seen.insert(id) {
            break;
        }
        let Some(n) = by_id.get(id) else { break };
        chain.push(*n);
        cur = n.predecessor.as_deref();
    }
    chain.reverse();
    let mut callees: HashMap<&str, Vec<&Node>> = HashMap::new();
    for n in nodes {
        if !n.is_top_level() {
            callees.entry(n.caller.as_str()).or_default().push(n);
        }
    }
    let mut out = Vec::new();
    let mut turn = 0;
    fn push<'a>(
        n: &'a Node,
        turn: u64,
        callees: &HashMap<&str, Vec<&'a Node>>,
        out: &mut Vec<(u64, &'a Node)>,
        depth: usize,
    ) {
        out.push((turn, n));
        if depth < 16
            && let Some(cs) = callees.get(n.id.as_str())
        {
            for c in cs {
                push(c, turn, callees, out, depth + 1);
            }
        }
    }
    for n in chain {
        if n.is_root_marker() {
            continue;
        }
        if n.starts_turn() {
            turn += 1;
        }
        push(n, turn, &callees, &mut out, 0);
    }
    out
}

pub fn run(ctx: &Ctx, args: ShowArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
    let meta = Meta::read(&sd.meta())?;
    let catalog = Catalog::load(&sd)?;
    let out = ctx.out;
    let nodes = history::read_all(&sd.history(), &catalog, &mut |w| out.warn(w));
    let tip = match &args.at {
        Some(target) => {
            let repo = crate::git::SessionRepo::open(&sd.dir)?;
            Some(crate::view::resolve(target, &meta, &nodes, &repo)?.head)
        }
        None => meta.head_id().map(str::to_owned),
    };
    let rows = branch_nodes(&nodes, tip.as_deref());
    if !meta.title().is_empty() {
        ctx.out
            .line(format!("# {}", crate::out::in_one_line(meta.title())));
    }
    let mut last_turn = 0;
    for (turn, n) in rows {
        if ctx.out.json {
            ctx.out.record(&crate::out::records::ShownNode {
                turn,
                role: crate::out::records::role_name(&n.role).into(),
                // In the shape its file has (the Python store's keys for
                // a node it wrote).
                node: serde_json::from_slice(&n.to_json()).expect("a node is an object"),
            });
        }
        if turn != last_turn {
            ctx.out.line(format!(
                "\n── turn {turn} · {}",
                crate::out::short_time(n.created_at)
            ));
            last_turn = turn;
        }
        let who = match n.role.as_str() {
            "user" => "user".to_string(),
            "llm" if n.name.is_empty() => "assistant".to_string(),
            "llm" => format!("assistant ({})", n.name),
            "code" => "tool".to_string(),
            other => other.to_string(),
        };
        let indent = if n.is_top_level() { "" } else { "  " };
        if n.role == "code" {
            ctx.out
                .line(format!("{indent}{who}: {}", session::node_summary(n)));
        } else {
            let text = n.text();
            let mut lines = text.lines();
            ctx.out
                .line(format!("{indent}{who}: {}", lines.next().unwrap_or("")));
            for l in lines {
                ctx.out.line(format!("{indent}  {l}"));
            }
        }
    }
    Ok(exit::OK)
}
