//! `show`: the conversation along the head's branch (SPEC §5.5).
//!
//! Reads: meta.json and every node file. Writes: nothing. Locks: the session,
//! shared. Prints: a transcript (or one `node` record per node).

use std::collections::{BTreeMap, HashMap};

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::git::{Oid, SessionRepo};
use git_session::layout::history::{self, Catalog};
use git_session::layout::lock;
use git_session::layout::schema::{Meta, Node, value_text};
use git_session::out::Printer;
use git_session::out::style::{self, Style, Styled};
use git_session::project::record::Recorded;
use git_session::session;
use git_session::view::{TurnSpan, branch_nodes, callees, is_record};

/// Print the conversation of a session as a person reads it: the branch that
/// ends at the head (or at `--at`), turn by turn, each turn headed by its
/// number, time, the session commit that holds it (`log` lists it) and
/// the seqs of its nodes; each reply followed by its tool calls (a line
/// each and the first lines of their result, or whole with `--full`) and
/// the agent's commit in the project (or why none was made), with records
/// (a relocation, a compaction) where they happened. On a terminal, in
/// colour (see `--color`).
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Session id
    pub session: String,
    /// Show the conversation as it stood at this turn (a turn number, prev,
    /// next, branch, commit or node id) without moving anything
    #[arg(long, value_name = "TARGET")]
    pub at: Option<String>,
    /// Tool calls whole: their input (as JSON) and their result; by default
    /// a tool call is its name and input (cut to 60 characters) and the
    /// first 3 lines of its result (each cut to 120), then how many more
    /// there are
    #[arg(long)]
    pub full: bool,
}

/// What `project_commit` in a reply's metadata says: the agent's commit in
/// the project (its id in colour), or why none was made.
fn project_commit_line(out: &Printer, n: &Node, indent: &str) -> Option<Styled> {
    let line = out.styled().plain(&format!("{indent}  "));
    let recorded = Recorded::of(n)?;
    let project = match recorded.project_id() {
        "" => "?".to_string(),
        id => git_session::out::in_one_line(id).into_owned(),
    };
    Some(match recorded {
        Recorded::Commit { sha, paths, .. } => line
            .plain("agent commit ")
            .paint(
                style::COMMIT,
                &git_session::out::in_one_line(&session::cut(&sha, 7)),
            )
            .plain(&format!(
                " in project `{project}` ({} path{})",
                paths.len(),
                if paths.len() == 1 { "" } else { "s" }
            )),
        Recorded::Skipped { reason, .. } => line.plain(&format!(
            "no agent commit in project `{project}`: {}",
            git_session::out::in_one_line(&reason)
        )),
    })
}

/// How many lines of a tool call's result the default view shows, and how
/// many characters of each.
const TOOL_LINES: usize = 3;
const TOOL_LINE_CHARS: usize = 120;

/// Who says a node's text, and in what colour: `user`, `assistant (model)`,
/// `tool`, or a stored role of another name as it is.
fn who(n: &Node) -> (Style, String) {
    match n.role.as_str() {
        "user" => (style::USER, "user".to_string()),
        "llm" if n.name.is_empty() => (style::ASSISTANT, "assistant".to_string()),
        "llm" => (
            style::ASSISTANT,
            format!("assistant ({})", git_session::out::in_one_line(&n.name)),
        ),
        "code" => (style::TOOL, "tool".to_string()),
        other => (
            style::PLAIN,
            git_session::out::in_one_line(other).into_owned(),
        ),
    }
}

/// What a turn's header says: its number, its first node's time, the
/// session commit that holds it, the seqs of its first and last node.
pub struct Head {
    pub number: u64,
    pub time: f64,
    pub commit: Option<Oid>,
    pub seqs: (i64, i64),
}

impl From<&TurnSpan<'_>> for Head {
    fn from(t: &TurnSpan<'_>) -> Head {
        Head {
            number: t.number,
            time: t.time,
            commit: t.commit,
            seqs: t.seqs,
        }
    }
}

/// Prints a branch's nodes as `show` does (`diff` prints the nodes a range
/// of turns added so): a header per turn, then each node.
pub struct Render<'a> {
    pub ctx: &'a Ctx,
    /// The nodes each node called ([`git_session::view::callees`]).
    pub calls: HashMap<&'a str, Vec<&'a Node>>,
    /// Tool calls whole (`--full`).
    pub full: bool,
}

impl Render<'_> {
    /// A turn's header: `── turn 2 · 2026-11-30 05:45 · 1a2b3c4 · nodes
    /// 5..8` (the session commit that holds it, or `uncommitted`; the seqs
    /// of its nodes); after an empty line (`gap`).
    pub fn header(&self, t: &Head, gap: bool) {
        let commit = t.commit.map_or("uncommitted".to_string(), |c| {
            c.to_hex_with_len(7).to_string()
        });
        let nodes = match t.seqs {
            (a, b) if a == b => format!("node {a}"),
            (a, b) => format!("nodes {a}..{b}"),
        };
        if gap {
            self.ctx.out.line("");
        }
        let line = self
            .ctx
            .out
            .styled()
            .paint(
                style::HEADER,
                &format!(
                    "── turn {} · {}",
                    t.number,
                    git_session::out::short_time(t.time)
                ),
            )
            .plain(" · ")
            .paint(
                if t.commit.is_some() {
                    style::COMMIT
                } else {
                    style::PLAIN
                },
                &commit,
            )
            .plain(&format!(" · {nodes}"));
        self.ctx.out.styled_line(&line);
    }

    /// A header without a turn's facts: `── {text}`.
    pub fn plain_header(&self, text: &str) {
        self.ctx.out.line("");
        let line = self
            .ctx
            .out
            .styled()
            .paint(style::HEADER, &format!("── {text}"));
        self.ctx.out.styled_line(&line);
    }

    /// One node: its record (`--json`, with `turn` and the session
    /// `commit` that holds it), and its lines.
    pub fn node(&self, n: &Node, turn: u64, commit: Option<Oid>, in_progress: bool) {
        let ctx = self.ctx;
        ctx.out.record(&git_session::out::records::ShownNode {
            turn,
            role: git_session::out::records::role_name(&n.role).into(),
            // In the shape its file has (the Python store's keys for
            // a node it wrote).
            node: serde_json::from_slice(&n.to_json()).expect("a node is an object"),
            in_progress,
            commit: commit.map(|c| c.to_string()),
        });
        if ctx.out.json {
            return;
        }
        let (role_style, who) = who(n);
        let indent = if n.is_top_level() { "" } else { "  " };
        let first = ctx
            .out
            .styled()
            .plain(indent)
            .paint(role_style, &who)
            .plain(": ");
        if is_record(n) {
            ctx.out.line(format!(
                "record: {}: {}",
                git_session::out::in_one_line(&n.name),
                session::one_line(&n.text())
            ));
        } else if n.role == "code" && self.full {
            self.full_tool(n, indent, first);
        } else if n.role == "code" {
            self.tool(n, indent, first);
        } else {
            let text = n.text();
            let calls: Vec<String> = self
                .calls
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
                let line = first.plain(&format!("(calls {})", session::tool_summary(&calls)));
                ctx.out.styled_line(&line);
            } else {
                self.text(first, indent, &text);
            }
        }
        if let Some(line) = project_commit_line(&ctx.out, n, indent) {
            ctx.out.styled_line(&line);
        }
        // Where the user stopped the agent, in the transcript's own words.
        if let Some(why) = session::stopped(n) {
            ctx.out.line(format!(
                "(stopped here: {})",
                git_session::out::in_one_line(&why)
            ));
        }
    }

    /// `text` as `{first}{its first line}` and the rest indented by
    /// `indent` + two spaces.
    fn text(&self, first: Styled, indent: &str, text: &str) {
        let mut lines = text.lines();
        let line = first.plain(lines.next().unwrap_or(""));
        self.ctx.out.styled_line(&line);
        for l in lines {
            self.ctx.out.line(format!("{indent}  {l}"));
        }
    }

    /// A tool call in the default view: `tool: name(input)` (the input cut
    /// to 60 characters); a result of one line after `→`, a longer one
    /// below, its first [`TOOL_LINES`] lines (each cut to
    /// [`TOOL_LINE_CHARS`] characters) and how many more there are.
    fn tool(&self, n: &Node, indent: &str, first: Styled) {
        let args = match &n.input {
            serde_json::Value::Null => String::new(),
            v => session::cut_marked(&session::one_line(&value_text(v)), 60),
        };
        let call = format!("{}({args})", session::one_line(&n.name));
        let text = n.text();
        let lines: Vec<&str> = text.trim_end().lines().collect();
        let cut = |l: &str| session::cut_marked(l, TOOL_LINE_CHARS);
        match lines.as_slice() {
            [] => self.ctx.out.styled_line(&first.plain(&call)),
            [one] => {
                let line = first.plain(&format!("{call} → {}", cut(one)));
                self.ctx.out.styled_line(&line);
            }
            many => {
                self.ctx.out.styled_line(&first.plain(&call));
                for l in many.iter().take(TOOL_LINES) {
                    self.ctx.out.line(format!("{indent}    {}", cut(l)));
                }
                let more = many.len().saturating_sub(TOOL_LINES);
                if more > 0 {
                    self.ctx.out.line(format!(
                        "{indent}    … ({more} more line{})",
                        if more == 1 { "" } else { "s" }
                    ));
                }
            }
        }
    }

    /// A tool call whole (`--full`): its name, its input (as JSON) and its
    /// result.
    fn full_tool(&self, n: &Node, indent: &str, first: Styled) {
        let input = match &n.input {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s.clone(),
            v => serde_json::to_string_pretty(v).expect("a value serializes"),
        };
        let inner = format!("{indent}  ");
        let line = first.plain(&git_session::out::in_one_line(&n.name));
        self.ctx.out.styled_line(&line);
        let label = |l: &str| self.ctx.out.styled().plain(&format!("{inner}{l}: "));
        self.text(label("input"), &inner, &input);
        self.text(label("result"), &inner, &n.text());
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
            let repo = SessionRepo::open(&sd.dir)?;
            Some(git_session::view::resolve(target, &meta, &nodes, &repo)?.head)
        }
        None => meta.head_id().map(str::to_owned),
    };
    let rows = branch_nodes(&nodes, tip.as_deref(), args.at.is_some());
    // The turns' commits: a repository that cannot be read shows none.
    let repo = SessionRepo::open(&sd.dir).ok();
    let spans: BTreeMap<u64, TurnSpan<'_>> =
        git_session::view::spans(&rows, repo.as_ref(), &catalog)
            .into_iter()
            .map(|t| (t.number, t))
            .collect();
    if !meta.title().is_empty() {
        ctx.out
            .line(format!("# {}", git_session::out::in_one_line(meta.title())));
    }
    let render = Render {
        ctx,
        calls: callees(&nodes),
        full: args.full,
    };
    let mut last_turn = 0;
    for (turn, n) in rows {
        let span = spans.get(&turn);
        if turn != last_turn {
            match span {
                Some(t) => render.header(&Head::from(t), true),
                None => render.plain_header(&format!(
                    "turn {turn} · {}",
                    git_session::out::short_time(n.created_at)
                )),
            }
            last_turn = turn;
        }
        render.node(n, turn, span.and_then(|t| t.commit), false);
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
            render.plain_header(&format!(
                "in progress (the transcript has not closed this turn yet) · {}",
                git_session::out::short_time(first.created_at)
            ));
            let render = Render {
                calls: callees(&pending),
                ..render
            };
            for n in &pending {
                render.node(n, turn, None, true);
            }
        }
    }
    Ok(exit::OK)
}
