//! `show`: the conversation along the head's branch (SPEC §5.5).
//!
//! Reads: meta.json and every node file. Writes: nothing. Locks: the session,
//! shared. Prints: a transcript (or one `node` record per node).

use std::collections::HashMap;

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::layout::history::{self, Catalog};
use git_session::layout::lock;
use git_session::layout::schema::{Meta, Node};
use git_session::session;
use git_session::view::{branch_nodes, callees, is_record};

/// Print the conversation of a session as a person reads it: the branch that
/// ends at the head (or at `--at`), each reply followed by its tool calls
/// (one line each, or whole with `--full`) and the agent's commit in the
/// project (or why none was made), with records (a relocation, a
/// compaction) where they happened.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Session id
    pub session: String,
    /// Show the conversation as it stood at this turn (a turn number, prev,
    /// next, branch, commit or node id) without moving anything
    #[arg(long, value_name = "TARGET")]
    pub at: Option<String>,
    /// Tool calls whole: their input (as JSON) and their result; by default
    /// a tool call is one line, its input and result cut to 60 characters
    #[arg(long)]
    pub full: bool,
}

/// What `project_commit` in a reply's metadata says: the agent's commit in
/// the project, or why none was made.
fn project_commit_line(n: &Node) -> Option<String> {
    let pc = n.metadata.get("project_commit")?;
    let project = pc["project_id"].as_str().unwrap_or("?");
    let project = git_session::out::in_one_line(project);
    if let Some(sha) = pc["sha"].as_str() {
        let paths = pc["paths"].as_array().map_or(0, Vec::len);
        return Some(format!(
            "agent commit {} in project `{project}` ({paths} path{})",
            git_session::out::in_one_line(&session::cut(sha, 7)),
            if paths == 1 { "" } else { "s" }
        ));
    }
    let reason = pc["skipped"].as_str().unwrap_or("unknown");
    Some(format!(
        "no agent commit in project `{project}`: {}",
        git_session::out::in_one_line(reason)
    ))
}

/// Print `text` as `{first}{its first line}` and the rest indented by
/// `indent` + two spaces.
fn print_text(ctx: &Ctx, first: &str, indent: &str, text: &str) {
    let mut lines = text.lines();
    ctx.out
        .line(format!("{first}{}", lines.next().unwrap_or("")));
    for l in lines {
        ctx.out.line(format!("{indent}  {l}"));
    }
}

/// One node of `show`: its record, and its lines.
fn print_node(
    ctx: &Ctx,
    n: &Node,
    turn: u64,
    in_progress: bool,
    calls: &HashMap<&str, Vec<&Node>>,
    full: bool,
) {
    if ctx.out.json {
        ctx.out.record(&git_session::out::records::ShownNode {
            turn,
            role: git_session::out::records::role_name(&n.role).into(),
            // In the shape its file has (the Python store's keys for
            // a node it wrote).
            node: serde_json::from_slice(&n.to_json()).expect("a node is an object"),
            in_progress,
        });
    }
    let who = match n.role.as_str() {
        "user" => "user".to_string(),
        "llm" if n.name.is_empty() => "assistant".to_string(),
        "llm" => format!("assistant ({})", git_session::out::in_one_line(&n.name)),
        "code" => "tool".to_string(),
        other => git_session::out::in_one_line(other).into_owned(),
    };
    let indent = if n.is_top_level() { "" } else { "  " };
    if is_record(n) {
        ctx.out.line(format!(
            "record: {}: {}",
            git_session::out::in_one_line(&n.name),
            session::one_line(&n.text())
        ));
    } else if n.role == "code" && full {
        let input = match &n.input {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s.clone(),
            v => serde_json::to_string_pretty(v).expect("a value serializes"),
        };
        let inner = format!("{indent}  ");
        ctx.out.line(format!(
            "{indent}{who}: {}",
            git_session::out::in_one_line(&n.name)
        ));
        print_text(ctx, &format!("{inner}input: "), &inner, &input);
        print_text(ctx, &format!("{inner}result: "), &inner, &n.text());
    } else if n.role == "code" {
        ctx.out
            .line(format!("{indent}{who}: {}", session::node_summary(n)));
    } else {
        let text = n.text();
        let calls: Vec<String> = calls
            .get(n.id.as_str())
            .map(|c| {
                c.iter()
                    .filter(|t| t.role == "code")
                    .map(|t| git_session::out::in_one_line(&t.name).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if text.trim().is_empty() && !calls.is_empty() {
            // A reply that only calls tools says so, not an empty line.
            ctx.out.line(format!(
                "{indent}{who}: (calls {})",
                session::tool_summary(&calls)
            ));
        } else {
            print_text(ctx, &format!("{indent}{who}: "), indent, &text);
        }
    }
    if let Some(line) = project_commit_line(n) {
        ctx.out.line(format!("{indent}  {line}"));
    }
    // Where the user stopped the agent, in the transcript's own words.
    if let Some(why) = session::stopped(n) {
        ctx.out.line(format!(
            "(stopped here: {})",
            git_session::out::in_one_line(&why)
        ));
    }
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
            let repo = git_session::git::SessionRepo::open(&sd.dir)?;
            Some(git_session::view::resolve(target, &meta, &nodes, &repo)?.head)
        }
        None => meta.head_id().map(str::to_owned),
    };
    let rows = branch_nodes(&nodes, tip.as_deref(), args.at.is_some());
    if !meta.title().is_empty() {
        ctx.out
            .line(format!("# {}", git_session::out::in_one_line(meta.title())));
    }
    let calls = callees(&nodes);
    let mut last_turn = 0;
    for (turn, n) in rows {
        if turn != last_turn {
            ctx.out.line(format!(
                "\n── turn {turn} · {}",
                git_session::out::short_time(n.created_at)
            ));
            last_turn = turn;
        }
        print_node(ctx, n, turn, false, &calls, args.full);
    }
    // The turn a transcript has not closed yet (an import keeps it pending):
    // after the conversation as it is now.
    if args.at.is_none() {
        for open in git_session::layout::pending::unwritten(&sd).values() {
            let pending = open.nodes();
            let Some(first) = pending.first() else {
                continue;
            };
            let turn = last_turn + 1;
            ctx.out.line(format!(
                "\n── in progress (the transcript has not closed this turn yet) · {}",
                git_session::out::short_time(first.created_at)
            ));
            let calls = callees(&pending);
            for n in &pending {
                print_node(ctx, n, turn, true, &calls, args.full);
            }
        }
    }
    Ok(exit::OK)
}
