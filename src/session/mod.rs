//! The DAG and turn model: pure functions, no I/O, no git, no clap.
//!
//! A turn starts at a top-level user node and holds every node appended after
//! it up to the next one (SPEC §2.2). Commit messages and their trailers
//! (SPEC §2.3) are formatted and parsed here.

mod error;

use std::collections::HashSet;

use crate::layout::schema::{Node, ROOT, value_text};

pub use error::SessionError;

/// Nodes that belong to one commit: a new turn (`starts_turn`), a
/// regenerated reply (`regenerates`: a second top-level reply to a node that
/// already has one, SPEC §2.3: a fork, so a branch of its own), or more
/// nodes of the turn already committed before them (neither).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Index range into the seq-sorted pending nodes.
    pub range: std::ops::Range<usize>,
    pub starts_turn: bool,
    pub regenerates: bool,
    /// A turn that starts from a node the conversation already went on
    /// from (a retry from inside or after an earlier turn): a branch of its
    /// own even when its parent commit is a branch tip.
    pub forks: bool,
}

/// Whether `n` is a top-level reply (it answers its predecessor).
pub fn is_reply(n: &Node) -> bool {
    n.role == "llm"
        && n.is_top_level()
        && n.predecessor
            .as_deref()
            .is_some_and(|p| !p.is_empty() && p != ROOT)
}

/// The node a conversational node (a top-level user or assistant node, not
/// a marker) goes on from: its predecessor, unless that is ROOT.
pub fn goes_on_from(n: &Node) -> Option<&str> {
    n.predecessor
        .as_deref()
        .filter(|p| n.is_conversational() && !p.is_empty() && *p != ROOT)
}

/// The node a retry branch is named after (`retry-<id>`, SPEC §2.3) when
/// the commit of `nodes` (seq-sorted) starts one: its first top-level reply,
/// else its first node (a user message committed before its reply). The
/// mirror names a new branch so, and `verify --fix` names a lost one so.
pub fn retry_name(nodes: &[Node]) -> Option<&str> {
    nodes
        .iter()
        .find(|n| n.role == "llm" && n.is_top_level())
        .or(nodes.first())
        .map(|n| n.id.as_str())
}

/// Split seq-sorted pending nodes into commit groups. `answered` holds the
/// ids of nodes outside `nodes` (committed earlier) that the conversation
/// already goes on from: a reply to one of them is a fork (`regenerates`),
/// as is a reply to a node that an earlier pending node goes on from.
pub fn group_pending(nodes: &[Node], answered: &std::collections::HashSet<String>) -> Vec<Group> {
    let mut replied: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut groups: Vec<Group> = Vec::new();
    // The latest conversational node so far: a reply that goes on from
    // another one (the head was moved back: a checkout) is a group of its
    // own, in the turn it goes on from.
    let mut latest: Option<&str> = None;
    // The message each call hangs off, through the calls before it: a
    // call that hangs off another message than the latest (after a
    // checkout, or an earlier turn's) is a group of its own too.
    let mut message_of: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let regenerates = is_reply(n) && {
            let p = n.predecessor.as_deref().expect("a reply has a predecessor");
            replied.contains(p) || answered.contains(p)
        };
        let called_from = (!n.is_top_level()).then(|| {
            message_of
                .get(n.caller.as_str())
                .copied()
                .unwrap_or(n.caller.as_str())
        });
        let elsewhere = match called_from {
            Some(m) => latest.is_some_and(|l| l != m),
            None => is_reply(n) && latest.is_some_and(|l| n.predecessor.as_deref() != Some(l)),
        };
        match called_from {
            Some(m) => message_of.insert(&n.id, m),
            None => message_of.insert(&n.id, &n.id),
        };
        let forks = regenerates
            || (n.starts_turn()
                && goes_on_from(n).is_some_and(|p| replied.contains(p) || answered.contains(p)));
        if let Some(p) = goes_on_from(n) {
            replied.insert(p);
        }
        if n.is_conversational() {
            latest = Some(&n.id);
        }
        if n.starts_turn() || regenerates || elsewhere || groups.is_empty() {
            groups.push(Group {
                range: i..i + 1,
                starts_turn: n.starts_turn(),
                regenerates,
                forks,
            });
        } else {
            groups.last_mut().expect("non-empty").range.end = i + 1;
        }
    }
    groups
}

/// `groups` with every top-level record node (a `code` node called by
/// ROOT: a compaction, a relocation) a group of its own, and the nodes
/// after it in its group another. An import commits this way, so that a
/// record node is one commit whether the nodes around it came in the same
/// run or not: the commits are the same however a transcript was read.
pub fn records_alone(nodes: &[Node], groups: Vec<Group>) -> Vec<Group> {
    let record = |n: &Node| n.role == "code" && n.caller == crate::layout::schema::ROOT;
    cut_groups(nodes, groups, &|n| (record(n), record(n)))
}

/// `groups` with a group starting at each node whose seq is in `seqs`.
pub fn split_before(nodes: &[Node], groups: Vec<Group>, seqs: &[u64]) -> Vec<Group> {
    let seqs: HashSet<i64> = seqs.iter().map(|&s| s as i64).collect();
    cut_groups(nodes, groups, &|n| (seqs.contains(&n.seq), false))
}

/// `groups` cut before and after the nodes `cut` says (before, after).
fn cut_groups(
    nodes: &[Node],
    groups: Vec<Group>,
    cut: &dyn Fn(&Node) -> (bool, bool),
) -> Vec<Group> {
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let mut start = g.range.start;
        let mut first = true;
        for i in g.range.clone() {
            let (before, cut_after) = cut(&nodes[i]);
            let cut_before = before && i > start;
            if cut_before {
                out.push(Group {
                    range: start..i,
                    starts_turn: first && g.starts_turn,
                    regenerates: first && g.regenerates,
                    forks: first && g.forks,
                });
                first = false;
                start = i;
            }
            if cut_after {
                out.push(Group {
                    range: start..i + 1,
                    starts_turn: first && g.starts_turn,
                    regenerates: first && g.regenerates,
                    forks: first && g.forks,
                });
                first = false;
                start = i + 1;
            }
        }
        if start < g.range.end {
            out.push(Group {
                range: start..g.range.end,
                starts_turn: first && g.starts_turn,
                regenerates: first && g.regenerates,
                forks: first && g.forks,
            });
        }
    }
    out
}

/// The turn number of each group (SPEC §2.2: the N-th turn on the path from
/// the root): for a group that starts a turn, or goes on after a reply, the
/// count of turn starts on its first node's predecessor chain; for more
/// nodes of a turn (tool calls), the number of the group before. `nodes`
/// are every node of the session in seq order (a predecessor is written
/// before its successors, so one pass suffices).
pub fn turn_numbers(nodes: &[Node], groups: &[Group]) -> Vec<u64> {
    use std::collections::HashMap;
    let mut depth: HashMap<&str, u64> = HashMap::with_capacity(nodes.len());
    for n in nodes {
        if !n.is_top_level() {
            // A call is in the turn of what called it (a caller not known
            // here says nothing).
            if let Some(&d) = depth.get(n.caller.as_str()) {
                depth.insert(&n.id, d);
            }
            continue;
        }
        let before = n
            .predecessor
            .as_deref()
            .and_then(|p| depth.get(p).copied())
            .unwrap_or(0);
        depth.insert(&n.id, before + u64::from(n.starts_turn()));
    }
    let mut out = Vec::with_capacity(groups.len());
    let mut last = 0;
    for g in groups {
        let first = &nodes[g.range.start];
        let t = if g.starts_turn || g.regenerates {
            depth.get(first.id.as_str()).copied().unwrap_or(1)
        } else if goes_on_from(first).is_some() || !first.is_top_level() {
            // More of a turn, after a reply of it or called by one: that
            // reply's turn (not always the turn before in seq order: after
            // a checkout).
            depth.get(first.id.as_str()).copied().unwrap_or(last)
        } else {
            last
        };
        out.push(t);
        last = t;
    }
    out
}

/// The first `n` characters of `s`.
pub fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The first `n` characters of `s`, and `…` after them when there were more.
pub fn cut_marked(s: &str, n: usize) -> String {
    let mut out = cut(s, n);
    if s.chars().nth(n).is_some() {
        out.push('…');
    }
    out
}

/// The first line of `s` that says something, as [`one_line`].
fn first_line(s: &str) -> String {
    one_line(s.lines().find(|l| !l.trim().is_empty()).unwrap_or(""))
}

/// One line: whitespace runs (newlines included) folded to single spaces.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Remove the attachment markers the Python store puts into user text.
fn strip_attachment_markers(text: &str) -> String {
    let mut out = text.to_string();
    for (open, close) in [
        ("<attachment-preview", "</attachment-preview>"),
        ("<file ", "</file>"),
    ] {
        while let Some(start) = out.find(open) {
            match out[start..].find(close) {
                Some(end) => out.replace_range(start..start + end + close.len(), ""),
                None => break,
            }
        }
    }
    for open in ["[attachment:", "[attached file:", "[attached:"] {
        while let Some(start) = out.find(open) {
            match out[start..].find(']') {
                Some(end) => out.replace_range(start..start + end + 1, ""),
                None => break,
            }
        }
    }
    out
}

/// How many characters of its line a phase-1 title keeps.
pub const TITLE_CHARS: usize = 50;

/// Phase-1 title: first line of the user text, 50 chars + `…` (SPEC §5.3).
pub fn title_from_text(text: &str) -> String {
    let first = title_line(text);
    if first.chars().count() > TITLE_CHARS {
        format!("{}…", cut(&first, TITLE_CHARS))
    } else {
        first
    }
}

/// The line a phase-1 title is cut from: the user text's first line, the
/// attachment markers out, trimmed.
pub fn title_line(text: &str) -> String {
    let cleaned = strip_attachment_markers(text);
    cleaned
        .trim()
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// What a turn commit message says.
#[derive(Debug, Clone, Default)]
pub struct MessageParts {
    pub session: String,
    pub turn: u64,
    /// `true` for more nodes of a turn committed earlier.
    pub continued: bool,
    /// `true` for a regenerated reply (the subject is the user message).
    pub regenerated: bool,
    /// `true` for record nodes only (a relocation): an event, not a turn.
    pub record: bool,
    /// The subject text (user message or `--message`).
    pub subject: String,
    /// Further lines of `--message`.
    pub body: Option<String>,
    pub reply: Option<String>,
    pub tools: Vec<String>,
    pub tool_count: usize,
    pub duration: Option<f64>,
    pub tokens: Option<u64>,
    pub first_seq: u64,
    pub last_seq: u64,
    pub failed: bool,
    /// The transcript stopped in the middle of the turn (`import`).
    pub interrupted: bool,
}

/// The metadata key of a node whose turn was stopped before the agent was
/// done (the user interrupted it): the turn's commit says
/// `Status: interrupted`.
pub const INTERRUPTED: &str = "interrupted";

/// Where node `n` says its turn was stopped (its `interrupted` metadata: a
/// reason, or `true`), in words.
pub fn stopped(n: &Node) -> Option<String> {
    match n.metadata.get(INTERRUPTED)? {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        serde_json::Value::Bool(true) => Some("interrupted".into()),
        _ => None,
    }
}

impl MessageParts {
    /// Gather what the nodes of one group say. `regenerated` is the user
    /// message a regenerated reply answers (its group starts with the reply).
    /// `earlier` finds a node of the session by id (committed or pending):
    /// a running token total (Codex) counts from the one before the group.
    pub fn from_nodes(
        session: &str,
        turn: u64,
        starts_turn: bool,
        nodes: &[Node],
        regenerated: Option<&Node>,
        earlier: &dyn Fn(&str) -> Option<Node>,
    ) -> Self {
        let subject = if starts_turn {
            first_line(&nodes[0].text())
        } else if let Some(user) = regenerated {
            first_line(&user.text())
        } else {
            format!(
                "{} more node{}",
                nodes.len(),
                if nodes.len() == 1 { "" } else { "s" }
            )
        };
        let record = !starts_turn
            && regenerated.is_none()
            && nodes
                .iter()
                .all(|n| n.role == "code" && is_reserved_name(&n.name));
        let subject = match record {
            true => one_line(&format!("{}: {}", nodes[0].name, nodes[0].text())),
            false => subject,
        };
        // The turn's answer: its last reply that says something (the first
        // ones of a tool loop are often tool calls only).
        let reply = nodes
            .iter()
            .rev()
            .filter(|n| n.role == "llm" && n.is_top_level())
            .map(|n| one_line(&n.text()))
            .find(|s| !s.is_empty());
        let tool_nodes: Vec<&Node> = nodes
            .iter()
            .filter(|n| n.role == "code" && !is_reserved_name(&n.name))
            .collect();
        let tools = tool_nodes.iter().map(|n| n.name.clone()).collect();
        let (first, last) = (
            nodes.first().expect("a group is never empty"),
            nodes.last().expect("a group is never empty"),
        );
        let duration = (nodes.len() > 1).then(|| (last.created_at - first.created_at).max(0.0));
        // A turn that says it cost nothing says no tokens (as before).
        let tokens = turn_tokens(nodes, earlier).filter(|&t| t > 0);
        MessageParts {
            session: session.to_string(),
            turn,
            continued: !starts_turn && regenerated.is_none(),
            regenerated: regenerated.is_some(),
            record,
            subject,
            body: None,
            reply,
            tool_count: tool_nodes.len(),
            tools,
            duration,
            tokens,
            first_seq: first.seq.max(0) as u64,
            last_seq: last.seq.max(0) as u64,
            failed: false,
            interrupted: nodes.iter().any(|n| stopped(n).is_some()),
        }
    }

    /// The full message of SPEC §2.3.
    pub fn render(&self) -> String {
        // What the nodes say goes in as text a terminal shows as it is and
        // git accepts (`git fsck --strict` refuses a NUL in a commit, and so
        // does a remote that checks what it is pushed): control characters
        // escaped (`\u{0}`, `\u{1b}`); the nodes keep the exact text.
        let safe = |s: &str| crate::out::terminal_safe(s).into_owned();
        let mut subject_text = safe(&cut(&self.subject, 60));
        if subject_text.is_empty() {
            subject_text = "(no text)".into();
        }
        let marker = if self.continued {
            " (continued)"
        } else if self.regenerated {
            " (regenerated)"
        } else {
            ""
        };
        let mut msg = match self.record {
            true => format!("record: {}\n", safe(&cut(&self.subject, 64))),
            false => format!("turn {}{marker}: {subject_text}\n", self.turn),
        };
        if let Some(body) = self.body.as_deref().filter(|b| !b.trim().is_empty()) {
            msg.push('\n');
            msg.push_str(&safe(body.trim_end()));
            msg.push('\n');
        }
        let mut block = Vec::new();
        if let Some(reply) = &self.reply {
            block.push(format!("assistant: {}", safe(&cut(reply, 80))));
        }
        if !self.tools.is_empty() {
            let tools = one_line(&tool_summary(&self.tools));
            block.push(format!("tools: {}", safe(&tools)));
        }
        if !block.is_empty() {
            msg.push('\n');
            msg.push_str(&block.join("\n"));
            msg.push('\n');
        }
        let mut meta = Vec::new();
        if let Some(d) = self.duration {
            meta.push(format!("turn took {d:.1}s"));
        }
        if self.tool_count > 0 {
            meta.push(format!(
                "{} tool{}",
                self.tool_count,
                if self.tool_count == 1 { "" } else { "s" }
            ));
        }
        if let Some(t) = self.tokens {
            meta.push(format!("{t} tokens"));
        }
        if !meta.is_empty() {
            msg.push_str(&format!("\n[meta: {}]\n", meta.join(", ")));
        }
        msg.push_str(&format!(
            "\nSession: {}\nTurn: {}\nNodes: {}..{}\n",
            self.session, self.turn, self.first_seq, self.last_seq
        ));
        if self.failed {
            msg.push_str("Status: failed\n");
        } else if self.interrupted {
            msg.push_str("Status: interrupted\n");
        }
        msg
    }
}

/// Names that are records, not tool calls.
pub fn is_reserved_name(name: &str) -> bool {
    name == "project/relocate" || name.starts_with("context/")
}

/// What a node says it cost, in the shapes agents write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Usage {
    /// This node's own tokens.
    Own(u64),
    /// A running total of the whole session so far (Codex `token_count`).
    Running(u64),
}

/// A node's token usage: `metadata.tokens`; `metadata.input_tokens` +
/// `output_tokens` (the Python store's fields); `metadata.usage` as Claude
/// Code writes it (`input_tokens` + `output_tokens`; cache reads and writes
/// are not added); Codex's `token_count` info (`total_token_usage`: a
/// running total, input + output); or a `usage.total_tokens`.
fn node_usage(n: &Node) -> Option<Usage> {
    use serde_json::Value;
    /// `input_tokens` + `output_tokens` of an object, if it has either.
    fn sum<'a>(get: impl Fn(&str) -> Option<&'a Value>) -> Option<u64> {
        match (
            get("input_tokens").and_then(Value::as_u64),
            get("output_tokens").and_then(Value::as_u64),
        ) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        }
    }
    let m = &n.metadata;
    if let Some(t) = m.get("tokens").and_then(Value::as_u64) {
        return Some(Usage::Own(t));
    }
    if let Some(t) = sum(|k| m.get(k)) {
        return Some(Usage::Own(t));
    }
    let usage = m.get("usage")?;
    if let Some(total) = usage.get("total_token_usage") {
        return sum(|k| total.get(k)).map(Usage::Running);
    }
    sum(|k| usage.get(k))
        .or_else(|| usage.get("total_tokens").and_then(Value::as_u64))
        .map(Usage::Own)
}

/// The most nodes read back along the predecessor chain for the running
/// total before a group.
const RUNNING_TOTAL_WALK: usize = 64;

/// The tokens of a group of nodes (`None`: none of them says): every
/// node's own usage summed, plus, for a running total
/// (Codex), the group's last total minus the last total before the group
/// on its predecessor chain (a total smaller than that one started over,
/// and counts whole).
pub fn turn_tokens(nodes: &[Node], earlier: &dyn Fn(&str) -> Option<Node>) -> Option<u64> {
    let mut own: Option<u64> = None;
    let mut running: Option<(&Node, u64)> = None;
    for n in nodes {
        match node_usage(n) {
            Some(Usage::Own(t)) => own = Some(own.unwrap_or(0).saturating_add(t)),
            Some(Usage::Running(t)) => running = Some((n, t)),
            None => {}
        }
    }
    let Some((last, total)) = running else {
        return own;
    };
    let ids: std::collections::HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    // The first node of the group with a running total: its chain back
    // leads to the previous turn's.
    let first = nodes
        .iter()
        .find(|n| matches!(node_usage(n), Some(Usage::Running(_))))
        .unwrap_or(last);
    let mut before = 0;
    let mut cur = first.predecessor.clone();
    // A walk of a few nodes (this turn's user message, the previous
    // turn's reply); bounded (a session whose replies carry no total would
    // be walked whole on every commit, and a cycle someone wrote into the
    // files never ends): past the bound the total counts whole.
    for _ in 0..RUNNING_TOTAL_WALK {
        let Some(id) = cur.filter(|p| !p.is_empty() && p != crate::layout::schema::ROOT) else {
            break;
        };
        let Some(n) = earlier(&id) else { break };
        if !ids.contains(n.id.as_str())
            && let Some(Usage::Running(t)) = node_usage(&n)
        {
            before = t;
            break;
        }
        cur = n.predecessor.clone();
    }
    let share = if total >= before {
        total - before
    } else {
        total
    };
    Some(own.unwrap_or(0).saturating_add(share))
}

/// `read, grep × 3, list`: names in first-use order with counts.
pub fn tool_summary(names: &[String]) -> String {
    let mut order: Vec<(&str, usize)> = Vec::new();
    for n in names {
        match order.iter_mut().find(|(name, _)| *name == n.as_str()) {
            Some((_, k)) => *k += 1,
            None => order.push((n.as_str(), 1)),
        }
    }
    order
        .iter()
        .map(|(n, k)| {
            if *k > 1 {
                format!("{n} × {k}")
            } else {
                n.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The subject of a commit that renames node files to one naming
/// (`mirror::rename`).
pub const RENAME_SUBJECT: &str = "session: node files named as the Python store names them\n";

/// The trailers a turn commit carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailers {
    pub session: Option<String>,
    pub turn: Option<u64>,
    pub nodes: Option<(u64, u64)>,
    pub failed: bool,
    pub interrupted: bool,
    /// `Renamed:`: a commit that only renames node files (the same blobs
    /// under another naming): a turn after it goes on from it.
    pub renamed: bool,
}

impl Trailers {
    pub fn parse(message: &str) -> Trailers {
        let mut t = Trailers::default();
        // Trailers live in the last paragraph.
        let last = message.trim_end().rsplit("\n\n").next().unwrap_or("");
        for line in last.lines() {
            let Some((k, v)) = line.split_once(": ") else {
                continue;
            };
            match k {
                "Session" => t.session = Some(v.trim().to_string()),
                "Turn" => t.turn = v.trim().parse().ok(),
                "Nodes" => {
                    t.nodes = v
                        .trim()
                        .split_once("..")
                        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                }
                // Only on the commit the rename makes (another writer's
                // commit with such a line is no rename).
                "Renamed" => t.renamed = message.starts_with(RENAME_SUBJECT),
                "Status" => {
                    t.failed = v.trim() == "failed";
                    t.interrupted = v.trim() == "interrupted";
                }
                _ => {}
            }
        }
        t
    }

    pub fn holds_seq(&self, seq: u64) -> bool {
        self.nodes.is_some_and(|(a, b)| a <= seq && seq <= b)
    }
}

/// A short description of a node for one-line displays.
pub fn node_summary(n: &Node) -> String {
    match n.role.as_str() {
        "code" => {
            let args = match &n.input {
                serde_json::Value::Null => String::new(),
                v => cut_marked(&one_line(&value_text(v)), 60),
            };
            let out = cut_marked(&one_line(&n.text()), 60);
            // A name is one line too: one holding a line break would print
            // a line of its own (a forged `user:` line).
            format!("{}({args}) → {out}", one_line(&n.name))
        }
        _ => one_line(&n.text()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(seq: i64, role: &str, caller: &str, name: &str, out: &str, t: f64) -> Node {
        Node::parse(
            serde_json::json!({"id": format!("n{seq}"), "seq": seq, "role": role,
                "caller": caller, "name": name, "output": out, "created_at": t})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    }

    /// A node on a predecessor chain.
    fn mk(seq: i64, role: &str, caller: &str, pred: Option<&str>) -> Node {
        let mut n = node(seq, role, caller, "", "", 0.0);
        n.predecessor = pred.map(str::to_string);
        n
    }

    #[test]
    fn only_a_reason_or_true_says_a_turn_was_stopped() {
        let mut n = node(1, "llm", "", "", "hi", 0.0);
        for (v, said) in [
            (
                serde_json::json!("[Request interrupted by user]"),
                Some("[Request interrupted by user]"),
            ),
            (serde_json::json!(true), Some("interrupted")),
            (serde_json::json!(false), None),
            (serde_json::json!(null), None),
            (serde_json::json!(""), None),
            (serde_json::json!({"by": "user"}), None),
        ] {
            n.metadata.insert(INTERRUPTED.into(), v.clone());
            assert_eq!(stopped(&n).as_deref(), said, "{v}");
            let parts = MessageParts::from_nodes("s", 1, true, &[n.clone()], None, &|_| None);
            assert_eq!(parts.interrupted, said.is_some(), "{v}");
        }
    }

    #[test]
    fn a_retry_branch_is_named_after_the_first_top_level_reply_else_the_first_node() {
        let user = node(2, "user", "", "", "hi", 0.0);
        let sub = node(3, "llm", "n9", "m", "sub-agent", 0.0);
        let tool = node(4, "code", "n5", "read", "", 0.0);
        let reply = node(5, "llm", "ROOT", "m", "yo", 0.0);
        assert_eq!(
            retry_name(&[user.clone(), sub.clone(), tool, reply.clone()]),
            Some("n5")
        );
        assert_eq!(retry_name(&[reply]), Some("n5"));
        assert_eq!(retry_name(&[user, sub]), Some("n2"));
        assert_eq!(retry_name(&[]), None);
    }

    #[test]
    fn grouping_splits_at_top_level_user_nodes() {
        let nodes = vec![
            node(1, "code", "a0", "read", "", 0.0),
            node(2, "user", "", "", "hi", 0.0),
            node(3, "llm", "", "m", "yo", 0.0),
            node(4, "user", "n3", "", "sub-call user", 0.0),
            node(5, "user", "ROOT", "", "again", 0.0),
        ];
        let g = group_pending(&nodes, &Default::default());
        let shape: Vec<(std::ops::Range<usize>, bool, bool)> = g
            .into_iter()
            .map(|g| (g.range, g.starts_turn, g.regenerates))
            .collect();
        assert_eq!(
            shape,
            vec![
                (0..1, false, false),
                (1..4, true, false),
                (4..5, true, false)
            ]
        );
    }

    #[test]
    fn records_alone_cuts_around_each_top_level_record() {
        let nodes = vec![
            node(1, "user", "", "", "hi", 0.0),
            node(2, "llm", "", "m", "yo", 0.0),
            node(3, "code", "ROOT", "context/compact", "", 0.0),
            node(4, "code", "n2", "read", "", 0.0),
            node(5, "code", "ROOT", "context/compact", "", 0.0),
            node(6, "user", "", "", "again", 0.0),
        ];
        let g = records_alone(&nodes, group_pending(&nodes, &Default::default()));
        let shape: Vec<(std::ops::Range<usize>, bool)> =
            g.into_iter().map(|g| (g.range, g.starts_turn)).collect();
        assert_eq!(
            shape,
            vec![
                (0..2, true),
                (2..3, false),
                (3..4, false),
                (4..5, false),
                (5..6, true)
            ]
        );
    }

    #[test]
    fn turn_numbers_follow_the_predecessor_chain() {
        let nodes = vec![
            mk(1, "user", "", Some("ROOT")),
            mk(2, "llm", "", Some("n1")),
            mk(3, "code", "n2", None),
            mk(4, "user", "", Some("n2")),
            mk(5, "llm", "", Some("n4")),
            mk(6, "user", "", Some("n2")), // a retry of turn 2
            mk(7, "user", "", Some("n5")),
        ];
        let groups = group_pending(&nodes, &Default::default());
        assert_eq!(turn_numbers(&nodes, &groups), vec![1, 2, 2, 3]);
    }

    #[test]
    fn a_second_reply_to_one_message_is_its_own_group() {
        let nodes = vec![
            mk(1, "user", "", Some("ROOT")),
            mk(2, "llm", "", Some("n1")),
            mk(3, "code", "n2", None),
            mk(4, "llm", "", Some("n1")), // regenerated
            mk(5, "code", "n4", None),
            mk(6, "user", "", Some("n4")),
        ];
        let groups = group_pending(&nodes, &Default::default());
        let shape: Vec<(std::ops::Range<usize>, bool, bool)> = groups
            .iter()
            .map(|g| (g.range.clone(), g.starts_turn, g.regenerates))
            .collect();
        assert_eq!(
            shape,
            vec![
                (0..3, true, false),
                (3..5, false, true),
                (5..6, true, false)
            ]
        );
        assert_eq!(turn_numbers(&nodes, &groups), vec![1, 1, 2]);
        // The first reply committed earlier: the set says so.
        let answered = std::collections::HashSet::from(["n1".to_string()]);
        let later = group_pending(&nodes[3..], &answered);
        assert!(later[0].regenerates);
        let msg = MessageParts::from_nodes("s", 1, false, &nodes[3..5], Some(&nodes[0]), &|_| None)
            .render();
        assert!(msg.starts_with("turn 1 (regenerated): "), "{msg}");
    }

    #[test]
    fn message_has_every_part_and_parses_back() {
        let nodes = vec![
            node(4, "user", "", "", "Find the bug\nsecond line", 100.0),
            node(5, "llm", "", "m1", "It is in main.rs", 101.0),
            node(6, "code", "n5", "read", "x", 102.0),
            node(7, "code", "n5", "grep", "x", 103.0),
            node(8, "code", "n5", "grep", "x", 112.3),
        ];
        let mut parts = MessageParts::from_nodes("s1", 2, true, &nodes, None, &|_| None);
        parts.tokens = Some(4521);
        let msg = parts.render();
        assert_eq!(
            msg,
            "turn 2: Find the bug\n\nassistant: It is in main.rs\ntools: read, grep × 2\n\n\
             [meta: turn took 12.3s, 3 tools, 4521 tokens]\n\nSession: s1\nTurn: 2\nNodes: 4..8\n"
        );
        let t = Trailers::parse(&msg);
        assert_eq!(t.turn, Some(2));
        assert_eq!(t.nodes, Some((4, 8)));
        assert!(t.holds_seq(6) && !t.holds_seq(9));
    }

    /// A node with metadata, on a predecessor chain.
    fn with_meta(
        seq: i64,
        role: &str,
        pred: Option<&str>,
        out: &str,
        meta: serde_json::Value,
    ) -> Node {
        let mut n = mk(seq, role, "", pred);
        n.output = out.into();
        n.metadata = meta.as_object().cloned().unwrap_or_default();
        n
    }

    /// A tool loop: the first reply only calls a tool, the last one answers.
    /// `assistant:` is the answer; tokens are each reply's input + output
    /// (Claude Code's `usage`, cache reads and writes not added).
    #[test]
    fn the_answer_and_the_tokens_of_a_tool_loop() {
        let usage = |i: u64, o: u64| {
            serde_json::json!({"usage": {"input_tokens": i, "output_tokens": o,
                "cache_read_input_tokens": 9000, "cache_creation_input_tokens": 700}})
        };
        let mut tool = node(3, "code", "n2", "read", "fn main() {}", 2.0);
        tool.input = serde_json::json!({"path": "a.rs"});
        let nodes = vec![
            with_meta(
                1,
                "user",
                Some("ROOT"),
                "Fix the bug",
                serde_json::json!({}),
            ),
            with_meta(2, "llm", Some("n1"), "", usage(100, 20)),
            tool,
            with_meta(
                4,
                "llm",
                Some("n2"),
                "Fixed it.\nDetails follow.",
                usage(150, 30),
            ),
        ];
        let msg = MessageParts::from_nodes("s", 1, true, &nodes, None, &|_| None).render();
        assert_eq!(
            msg,
            "turn 1: Fix the bug\n\nassistant: Fixed it. Details follow.\ntools: read\n\n\
             [meta: turn took 0.0s, 1 tool, 300 tokens]\n\nSession: s\nTurn: 1\nNodes: 1..4\n"
        );
    }

    /// Codex's `token_count` carries running totals: a turn counts its last
    /// total minus the previous turn's, never a sum of totals.
    #[test]
    fn a_running_total_counts_the_turns_share() {
        let total = |i: u64, o: u64| {
            serde_json::json!({"usage": {"total_token_usage": {"input_tokens": i,
                "cached_input_tokens": 5, "output_tokens": o, "total_tokens": i + o},
                "last_token_usage": {"input_tokens": 1, "output_tokens": 1}}})
        };
        let earlier = [
            with_meta(1, "user", Some("ROOT"), "one", serde_json::json!({})),
            with_meta(2, "llm", Some("n1"), "first", total(1000, 200)),
        ];
        let nodes = vec![
            with_meta(3, "user", Some("n2"), "two", serde_json::json!({})),
            with_meta(4, "llm", Some("n3"), "second", total(2500, 450)),
        ];
        let find = |id: &str| earlier.iter().chain(&nodes).find(|n| n.id == id).cloned();
        assert_eq!(turn_tokens(&nodes, &find), Some(1500 + 250));
        // The first turn counts from zero; a total that started over counts whole.
        assert_eq!(turn_tokens(&earlier, &find), Some(1200));
        let restarted = vec![
            with_meta(3, "user", Some("n2"), "two", serde_json::json!({})),
            with_meta(4, "llm", Some("n3"), "second", total(10, 5)),
        ];
        assert_eq!(turn_tokens(&restarted, &find), Some(15));
        // No usage anywhere: no tokens.
        assert_eq!(turn_tokens(&[mk(1, "user", "", Some("ROOT"))], &find), None);
        // A turn whose share is nothing says no tokens in its message.
        let parts = MessageParts::from_nodes("s", 2, true, &restarted[..1], None, &find);
        assert_eq!(parts.tokens, None);
        let same = vec![
            with_meta(3, "user", Some("n2"), "two", serde_json::json!({})),
            with_meta(4, "llm", Some("n3"), "second", total(1000, 200)),
        ];
        let find = |id: &str| earlier.iter().chain(&same).find(|n| n.id == id).cloned();
        assert_eq!(turn_tokens(&same, &find), Some(0));
        let parts = MessageParts::from_nodes("s", 2, true, &same, None, &find);
        assert_eq!(parts.tokens, None, "0 tokens is not said");
    }

    #[test]
    fn unknown_lines_are_left_out_and_subject_is_cut() {
        let long = "x".repeat(100);
        let nodes = vec![node(1, "user", "", "", &long, 1.0)];
        let msg = MessageParts::from_nodes("s", 1, true, &nodes, None, &|_| None).render();
        let subject = msg.lines().next().unwrap();
        assert_eq!(subject, format!("turn 1: {}", "x".repeat(60)));
        assert!(!msg.contains("assistant:") && !msg.contains("tools:") && !msg.contains("[meta"));
    }

    #[test]
    fn titles() {
        assert_eq!(title_from_text("  hello\nworld"), "hello");
        assert_eq!(
            title_from_text(&"a".repeat(60)),
            format!("{}…", "a".repeat(50))
        );
        assert_eq!(title_from_text("[attachment: x.png] look"), "look");
    }

    #[test]
    fn tool_summary_counts_in_first_use_order() {
        let names: Vec<String> = ["read", "grep", "list", "grep", "grep"]
            .map(String::from)
            .into();
        assert_eq!(tool_summary(&names), "read, grep × 3, list");
    }
}
