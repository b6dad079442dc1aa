//! Claude Code transcripts (JSONL, `../shared/reference/agent-transcripts.md`)
//! mapped to nodes: a pure function of the transcript's records.
//!
//! - a typed user message (text, not a tool result, not `isMeta`, not a
//!   compaction summary) is a user node; its predecessor is the node that
//!   holds its `parentUuid` record (a rewind names an older reply: a retry
//!   branch), ROOT for the first;
//! - an assistant reply (every record sharing one `message.id`) is one
//!   assistant node: its text blocks joined, `model` and `usage` (counted
//!   once) in metadata; its predecessor is the turn's user node or the
//!   previous reply of the tool loop;
//! - each `tool_use` block is a tool node called by its reply: input = the
//!   call's arguments, output = the matching `tool_result`'s content; a
//!   `Task` call whose result names a subagent (`toolUseResult.agentId`)
//!   links that subagent's session (`metadata.subagent_session`, the session
//!   its own transcript becomes);
//! - what a local command printed (`<local-command-stdout>`) is a
//!   `local-command` tool node of the message that ran it; the interrupt
//!   marker (`[Request interrupted by user]`) ends the turn it stopped;
//! - a compaction (`system` `compact_boundary` and the summary that follows)
//!   is a `context/compact` record node (visible, not a turn);
//! - every other record (progress, system, snapshots, summaries, types not
//!   known here, resume copies of a `uuid` already seen, lines that do not
//!   parse) goes, unchanged, with the node before it (or the first node).
//!
//! Every record a node was made from or carries is kept in its
//! `metadata.source_records` as `{"line": <0-based line>, "record": …}` (or
//! `"raw": "<text>"` for a line that is not JSON), so the transcript can be
//! rebuilt line for line.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{Indexed, Item, Line, Mapped, Seed, attach, blocks_text, node_id, timestamp};
use crate::layout::schema::ROOT;

/// The marker Claude Code writes, as a user record, where the user stopped
/// the agent (Esc): no message of the user's, the end of the turn.
fn interrupt_marker(r: &Value) -> Option<&str> {
    if r["type"] != "user" {
        return None;
    }
    // (As a text block: typed prompts are strings, and a prompt may say
    // the same words.)
    let text = match &r["message"]["content"] {
        Value::Array(blocks) if blocks.len() == 1 && blocks[0]["type"] == "text" => {
            blocks[0]["text"].as_str()?
        }
        _ => return None,
    };
    text.strip_prefix("[Request interrupted by user")
        .filter(|rest| *rest == "]" || *rest == " for tool use]")
        .map(|_| text)
}

/// What a local command the user ran (`/clear`, `/model`, …) printed:
/// Claude Code writes it as a user record after the command's, its text
/// wholly `<local-command-stdout>…</local-command-stdout>` (or stderr). No
/// message of the user's: the output of the command.
fn local_command_output(r: &Value) -> Option<String> {
    if r["type"] != "user" || r["isMeta"].as_bool() == Some(true) {
        return None;
    }
    let text = match &r["message"]["content"] {
        Value::String(s) => s.as_str(),
        Value::Array(blocks) if blocks.len() == 1 && blocks[0]["type"] == "text" => {
            blocks[0]["text"].as_str()?
        }
        _ => return None,
    };
    let t = text.trim();
    ["stdout", "stderr"].iter().find_map(|k| {
        t.strip_prefix(&format!("<local-command-{k}>"))?
            .strip_suffix(&format!("</local-command-{k}>"))
            .map(str::to_string)
    })
}

/// The typed text of a user record, if it is one (not a tool result, not
/// meta, not a compaction summary, not an interrupt marker, not a local
/// command's output).
fn typed_text(r: &Value) -> Option<String> {
    if r["isMeta"].as_bool() == Some(true)
        || r["isCompactSummary"].as_bool() == Some(true)
        || interrupt_marker(r).is_some()
        || local_command_output(r).is_some()
    {
        return None;
    }
    let content = &r["message"]["content"];
    if let Value::Array(blocks) = content
        && blocks.iter().any(|b| b["type"] == "tool_result")
    {
        return None;
    }
    blocks_text(content, &["text"])
}

/// A tool result's content as text when it is text blocks, else as given.
fn result_output(content: &Value) -> Value {
    match content {
        Value::Array(blocks) if blocks.iter().all(|b| b["type"] == "text") => Value::String(
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => other.clone(),
    }
}

/// Map a transcript's lines to nodes, after what `seed` says of the lines
/// before them (an import of a grown transcript; empty from the start).
pub fn map(lines: Vec<Line>, seed: &Seed, taken: &super::Taken) -> Mapped {
    let mut mapper = Mapper::new(seed, taken);
    for l in lines {
        mapper.line(l);
    }
    mapper.finish()
}

/// The mapping while it reads the lines: what it made, and what it knows
/// of the records read.
struct Mapper<'a> {
    m: Mapped,
    seed: &'a Seed<'a>,
    /// A message or tool id used again in a later turn: a node of its own.
    unique: super::Unique<'a>,
    /// The transcript's `sessionId`.
    sid: Option<String>,
    /// (line, uuid) of every record with one, for the seed of the next run.
    uuids: Vec<(usize, String)>,
    typed_at: HashMap<usize, (String, String)>,
    /// Records before the first node (of the lines mapped here): they lead
    /// where their parent does.
    lead: HashMap<String, String>,
    /// uuid → the item holding that record.
    owner: HashMap<String, usize>,
    seen: HashSet<String>,
    reply_of: HashMap<String, usize>,
    tool_of: HashMap<String, usize>,
    /// A compaction node → the uuid of the record before it.
    logical_parent: HashMap<usize, String>,
    /// (parent uuid, timestamp) of typed user records: a second one with the
    /// same timestamp is a replay, not a rewind.
    typed_children: HashSet<(String, String)>,
    leading: Vec<Line>,
    cur: Option<usize>,
}

impl<'a> Mapper<'a> {
    fn new(seed: &'a Seed<'a>, taken: &'a super::Taken<'a>) -> Self {
        Mapper {
            m: Mapped::default(),
            seed,
            unique: super::Unique::new(taken),
            sid: None,
            uuids: Vec::new(),
            typed_at: HashMap::new(),
            lead: HashMap::new(),
            owner: HashMap::new(),
            seen: HashSet::new(),
            reply_of: HashMap::new(),
            tool_of: HashMap::new(),
            logical_parent: HashMap::new(),
            typed_children: HashSet::new(),
            leading: Vec::new(),
            cur: None,
        }
    }

    /// The top-level node a record's `parentUuid` leads to (a record before
    /// the lines mapped here: as the seed says).
    fn top(&self, uuid: Option<&str>) -> String {
        let mut uuid = uuid.map(str::to_string);
        for _ in 0..64 {
            let Some(idx) = uuid.as_deref().and_then(|u| self.owner.get(u)).copied() else {
                return uuid
                    .and_then(|u| {
                        self.lead
                            .get(&u)
                            .cloned()
                            .or_else(|| self.seed.tops.get(u.as_str()).map(|t| t.to_string()))
                    })
                    .unwrap_or_else(|| ROOT.into());
            };
            let it = &self.m.items[idx];
            match (it.role, it.caller.as_deref()) {
                ("code", Some(ROOT)) => uuid = self.logical_parent.get(&idx).cloned(),
                ("code", Some(reply)) => return reply.to_string(),
                _ => return it.id.clone(),
            }
        }
        ROOT.into()
    }

    /// One line: the node it makes, or the node it goes with.
    fn line(&mut self, mut l: Line) {
        let m = &mut self.m;
        // Owned while it is read, put back before the line is kept.
        let Some(record) = l.record.take() else {
            m.unparsed += 1;
            attach(&mut m.items, self.cur, &mut self.leading, l);
            return;
        };
        let r = &record;
        let uuid = r["uuid"].as_str().map(str::to_string);
        if let Some(u) = &uuid
            && (self.seed.tops.contains_key(u.as_str()) || !self.seen.insert(u.clone()))
        {
            m.duplicates += 1;
            l.record = Some(record);
            attach(&mut m.items, self.cur, &mut self.leading, l);
            return;
        }
        if self.sid.is_none() {
            self.sid = r["sessionId"].as_str().map(str::to_string);
        }
        if m.cwd.is_none() {
            m.cwd = r["cwd"].as_str().map(str::to_string);
        }
        if let Some(u) = &uuid {
            self.uuids.push((l.line, u.clone()));
        }
        let ts = r["timestamp"].as_str().and_then(timestamp);
        // A record after a compaction may name what it continues only as
        // its logical parent.
        let parent = r["parentUuid"]
            .as_str()
            .or_else(|| r["logicalParentUuid"].as_str());
        let mut made: Option<usize> = None;
        match r["type"].as_str().unwrap_or("") {
            "user" => made = self.user(r, &l, &uuid, ts, parent),
            "assistant" => {
                let idx = self.assistant(r, &l, &uuid, ts, parent);
                l.record = Some(record);
                super::place(&mut self.m.items, idx, &mut self.leading, l);
                return;
            }
            "system" if r["subtype"] == "compact_boundary" => {
                made = Some(self.compact_boundary(r, &l, &uuid, ts));
            }
            _ => {}
        }
        // A compaction summary: the text of its compaction node.
        if made.is_none() && r["isCompactSummary"].as_bool() == Some(true) {
            self.compact_summary(r);
        }
        // The end of a turn (Claude Code 2.x writes its duration, and a
        // marker where the user stopped the agent, which the turn's last
        // node keeps): what follows, up to the next node, is the next turn's.
        let interrupted = interrupt_marker(r).map(str::to_string);
        let turn_end =
            (r["type"] == "system" && r["subtype"] == "turn_duration") || interrupted.is_some();
        if let (Some(marker), Some(c)) = (&interrupted, self.cur) {
            self.m.items[c]
                .metadata
                .insert(super::INTERRUPTED.into(), marker.as_str().into());
        }
        let lead_top =
            (made.is_none() && self.cur.is_none() && uuid.is_some()).then(|| self.top(parent));
        l.record = Some(record);
        self.keep(l, uuid, made, lead_top);
        if turn_end {
            let m = &mut self.m;
            m.closed = m.items.len();
            m.unit_starts.push(m.items.len());
            self.cur = None;
            self.reply_of.clear();
            self.tool_of.clear();
        }
    }

    /// Keep line `l` with the node it made, or with the current node (or
    /// until the first node comes, leading where `lead_top` says).
    fn keep(
        &mut self,
        l: Line,
        uuid: Option<String>,
        made: Option<usize>,
        lead_top: Option<String>,
    ) {
        let m = &mut self.m;
        match made {
            Some(i) => {
                super::place(&mut m.items, i, &mut self.leading, l);
                if let Some(u) = uuid {
                    self.owner.insert(u, i);
                }
                // Records that follow, until the next node, go with this one.
                self.cur = Some(i);
            }
            None => {
                match (uuid, self.cur) {
                    (Some(u), Some(c)) => {
                        self.owner.insert(u, c);
                    }
                    (Some(u), None) => {
                        self.lead
                            .insert(u, lead_top.expect("computed for a leading record"));
                    }
                    _ => {}
                }
                attach(&mut m.items, self.cur, &mut self.leading, l);
            }
        }
    }

    /// A user record: a typed message, what a local command printed, or
    /// tool results. The item it made or went to, if any.
    fn user(
        &mut self,
        r: &Value,
        l: &Line,
        uuid: &Option<String>,
        ts: Option<f64>,
        parent: Option<&str>,
    ) -> Option<usize> {
        if let (Some(text), Some(u)) = (typed_text(r), uuid) {
            self.typed_message(r, l, u, text, ts, parent)
        } else if let (Some(text), Some(u), Some(caller)) = (
            local_command_output(r),
            uuid,
            // The message that ran it (the turn's node that calls
            // tools), not a record.
            self.cur
                .and_then(|c| match self.m.items[c].role {
                    "code" => self.m.items[c].caller.clone(),
                    _ => Some(self.m.items[c].id.clone()),
                })
                .filter(|c| c != ROOT),
        ) {
            // A local command's output: a tool node of that message.
            self.m.items.push(Item {
                id: node_id("t-", u),
                role: "code",
                predecessor: None,
                caller: Some(caller),
                name: Some("local-command".into()),
                input: Value::Null,
                output: Value::String(text),
                created_at: ts.unwrap_or(0.0),
                metadata: Map::new(),
                lines: Vec::new(),
                open: false,
                made_at: (l.line, l.byte),
            });
            Some(self.m.items.len() - 1)
        } else if let Value::Array(blocks) = &r["message"]["content"] {
            self.tool_results(r, blocks)
        } else {
            None
        }
    }

    /// A typed user message: a user node, unless it is a replay.
    fn typed_message(
        &mut self,
        r: &Value,
        l: &Line,
        u: &str,
        text: String,
        ts: Option<f64>,
        parent: Option<&str>,
    ) -> Option<usize> {
        let key = (
            parent.unwrap_or("").to_string(),
            r["timestamp"].as_str().unwrap_or("").to_string(),
        );
        if self.seed.typed.contains(&(key.0.as_str(), key.1.as_str()))
            || !self.typed_children.insert(key.clone())
        {
            return None;
        }
        self.typed_at.insert(l.line, key);
        // The turn before is over: nothing later changes it.
        self.m.closed = self.m.items.len();
        self.reply_of.clear();
        self.tool_of.clear();
        let pred = self.top(parent);
        self.m.items.push(Item {
            id: node_id("u-", u),
            role: "user",
            predecessor: Some(pred),
            caller: None,
            name: None,
            input: Value::Null,
            output: Value::String(text),
            created_at: ts.unwrap_or(0.0),
            metadata: Map::new(),
            lines: Vec::new(),
            open: false,
            made_at: (l.line, l.byte),
        });
        Some(self.m.items.len() - 1)
    }

    /// Tool results: each to its call's node (the record goes with the
    /// first).
    fn tool_results(&mut self, r: &Value, blocks: &[Value]) -> Option<usize> {
        let mut made = None;
        for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
            let Some(&idx) = b["tool_use_id"].as_str().and_then(|t| self.tool_of.get(t)) else {
                continue;
            };
            let it = &mut self.m.items[idx];
            it.output = result_output(&b["content"]);
            it.open = false;
            if b["is_error"].as_bool() == Some(true) {
                it.metadata.insert("is_error".into(), true.into());
            }
            // A subagent's run (a `Task` call): its session.
            if let (Some(agent), Some(sid)) = (
                r["toolUseResult"]["agentId"].as_str(),
                r["sessionId"].as_str().or(self.sid.as_deref()),
            ) {
                it.metadata.insert(
                    "subagent_session".into(),
                    format!("claude-{sid}-{agent}").into(),
                );
            }
            if made.is_none() {
                made = Some(idx);
            }
        }
        made
    }

    /// An assistant record: its message's node (made by its first record),
    /// which gets its text and its tool calls. The node.
    fn assistant(
        &mut self,
        r: &Value,
        l: &Line,
        uuid: &Option<String>,
        ts: Option<f64>,
        parent: Option<&str>,
    ) -> usize {
        let msg = &r["message"];
        let mid = msg["id"]
            .as_str()
            .map(str::to_string)
            .or_else(|| uuid.clone())
            .unwrap_or_else(|| format!("line{}", l.line));
        let idx = match self.reply_of.get(&mid) {
            Some(&i) => i,
            None => {
                let pred = self.top(parent);
                let m = &mut self.m;
                let mut metadata = Map::new();
                if let Some(model) = msg["model"].as_str() {
                    metadata.insert("model".into(), model.into());
                    if m.model.is_none() {
                        m.model = Some(model.to_string());
                    }
                }
                if msg["usage"].is_object() {
                    metadata.insert("usage".into(), msg["usage"].clone());
                }
                m.items.push(Item {
                    id: self.unique.id(
                        node_id("a-", &mid),
                        &super::Made {
                            at: ts.unwrap_or(0.0),
                            line: Some(l.line),
                            caller: None,
                        },
                    ),
                    role: "llm",
                    predecessor: Some(pred),
                    caller: None,
                    name: msg["model"].as_str().map(str::to_string),
                    input: Value::Null,
                    output: Value::String(String::new()),
                    created_at: ts.unwrap_or(0.0),
                    metadata,
                    lines: Vec::new(),
                    open: false,
                    made_at: (l.line, l.byte),
                });
                let i = m.items.len() - 1;
                self.reply_of.insert(mid.clone(), i);
                i
            }
        };
        if let Some(u) = uuid {
            self.owner.insert(u.clone(), idx);
        }
        self.cur = Some(idx);
        self.reply_content(msg, idx, l, ts);
        idx
    }

    /// A reply record's content blocks: text joins the reply's, a
    /// `tool_use` is a tool node it calls.
    fn reply_content(&mut self, msg: &Value, idx: usize, l: &Line, ts: Option<f64>) {
        let m = &mut self.m;
        let reply_id = m.items[idx].id.clone();
        for b in msg["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("text") => {
                    if let (Value::String(out), Some(t)) =
                        (&mut m.items[idx].output, b["text"].as_str())
                    {
                        if !out.is_empty() {
                            out.push('\n');
                        }
                        out.push_str(t);
                    }
                }
                Some("tool_use") => {
                    let call = b["id"].as_str().unwrap_or("").to_string();
                    m.items.push(Item {
                        id: self.unique.id(
                            node_id("t-", &call),
                            &super::Made {
                                at: ts.unwrap_or(0.0),
                                line: None,
                                caller: Some(&reply_id),
                            },
                        ),
                        role: "code",
                        predecessor: None,
                        caller: Some(reply_id.clone()),
                        name: b["name"].as_str().map(str::to_string),
                        input: b["input"].clone(),
                        output: Value::Null,
                        created_at: ts.unwrap_or(0.0),
                        metadata: Map::new(),
                        lines: Vec::new(),
                        open: true,
                        made_at: (l.line, l.byte),
                    });
                    self.tool_of.insert(call, m.items.len() - 1);
                }
                _ => {}
            }
        }
    }

    /// A compaction (`system` `compact_boundary`): a `context/compact`
    /// record node.
    fn compact_boundary(
        &mut self,
        r: &Value,
        l: &Line,
        uuid: &Option<String>,
        ts: Option<f64>,
    ) -> usize {
        let m = &mut self.m;
        let meta = &r["compactMetadata"];
        let mut metadata = Map::new();
        metadata.insert("display".into(), "runtime".into());
        metadata.insert("compact_metadata".into(), meta.clone());
        m.items.push(Item {
            id: node_id("c-", uuid.as_deref().unwrap_or("compact")),
            role: "code",
            predecessor: None,
            caller: Some(ROOT.into()),
            name: Some("context/compact".into()),
            input: Value::Null,
            output: Value::String(format!(
                "context compacted ({}, {} tokens before)",
                meta["trigger"].as_str().unwrap_or("auto"),
                meta["preTokens"]
            )),
            created_at: ts.unwrap_or(0.0),
            metadata,
            lines: Vec::new(),
            open: false,
            made_at: (l.line, l.byte),
        });
        let i = m.items.len() - 1;
        if let Some(lp) = r["logicalParentUuid"].as_str() {
            self.logical_parent.insert(i, lp.to_string());
        }
        i
    }

    /// A compaction summary (made no node): the text of its compaction
    /// node, when that is the current node.
    fn compact_summary(&mut self, r: &Value) {
        let m = &mut self.m;
        if let Some(i) = self
            .cur
            .filter(|&i| m.items[i].name.as_deref() == Some("context/compact"))
        {
            let summary = match &r["message"]["content"] {
                Value::String(s) => s.clone(),
                other => result_output(other).as_str().unwrap_or("").to_string(),
            };
            m.items[i].metadata.insert("summary".into(), summary.into());
        }
    }

    /// What the mapping made, with the lines no node took and the index of
    /// the records with a uuid.
    fn finish(mut self) -> Mapped {
        self.m.leftover = std::mem::take(&mut self.leading);
        let mut typed_at = std::mem::take(&mut self.typed_at);
        let index = std::mem::take(&mut self.uuids)
            .into_iter()
            .map(|(line, uuid)| Indexed {
                top: self.top(Some(&uuid)),
                typed: typed_at.remove(&line),
                line,
                uuid,
            })
            .collect();
        self.m.index = index;
        self.m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(records: &[Value]) -> Vec<Line> {
        records
            .iter()
            .enumerate()
            .map(|(i, r)| Line {
                line: i,
                byte: 0,
                record: Some(r.clone()),
                raw: String::new(),
            })
            .collect()
    }

    fn user(uuid: &str, parent: Option<&str>, ts: &str, text: &str) -> Value {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "timestamp": ts,
            "message": {"role": "user", "content": text}})
    }

    fn reply(uuid: &str, parent: &str, msg: &str, block: Value) -> Value {
        json!({"type": "assistant", "uuid": uuid, "parentUuid": parent,
            "timestamp": "2026-11-01T10:00:05Z",
            "message": {"id": msg, "model": "m1", "content": [block],
                "usage": {"output_tokens": 3}}})
    }

    #[test]
    fn a_reply_of_several_records_is_one_node_and_its_tool_calls_are_called_by_it() {
        let m = map(
            lines(&[
                user("u1", None, "2026-11-01T10:00:00Z", "hi"),
                reply("a1", "u1", "msg_1", json!({"type": "text", "text": "one"})),
                reply("a2", "a1", "msg_1", json!({"type": "text", "text": "two"})),
                reply(
                    "a3",
                    "a2",
                    "msg_1",
                    json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"cmd": "ls"}}),
                ),
                json!({"type": "user", "uuid": "r1", "parentUuid": "a3", "timestamp": "2026-11-01T10:00:06Z",
                "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "a.rs"}], "is_error": true}]}}),
                reply("a4", "r1", "msg_2", json!({"type": "text", "text": "done"})),
            ]),
            &Seed::default(),
            &|_: &str, _: &crate::import::Made| false,
        );
        let ids: Vec<&str> = m.items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["u-u1", "a-msg_1", "t-toolu_1", "a-msg_2"]);
        assert_eq!(m.items[1].output, "one\ntwo");
        assert_eq!(m.items[1].lines.len(), 3);
        assert_eq!(m.items[2].caller.as_deref(), Some("a-msg_1"));
        assert_eq!(m.items[2].output, "a.rs");
        assert_eq!(m.items[2].metadata["is_error"], true);
        assert_eq!(m.items[3].predecessor.as_deref(), Some("a-msg_1"));
        assert_eq!(m.model.as_deref(), Some("m1"));
    }

    /// A message id and a tool id the agent uses again in a later turn are
    /// nodes of their own (`-2`), in one import as against an id an earlier
    /// import gave another node.
    #[test]
    fn a_message_or_tool_id_used_again_in_a_later_turn_is_a_node_of_its_own() {
        let tool = |uuid: &str, parent: &str| {
            reply(
                uuid,
                parent,
                "msg_1",
                json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}),
            )
        };
        let result = |uuid: &str, parent: &str| {
            json!({"type": "user", "uuid": uuid, "parentUuid": parent, "timestamp": "2026-11-01T10:00:06Z",
                "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": uuid}]}})
        };
        let all = [
            user("u1", None, "2026-11-01T10:00:00Z", "hi"),
            tool("a1", "u1"),
            result("r1", "a1"),
            user("u2", Some("r1"), "2026-11-01T10:01:00Z", "again"),
            tool("a2", "u2"),
            result("r2", "a2"),
        ];
        let m = map(
            lines(&all),
            &Seed::default(),
            &|_: &str, _: &crate::import::Made| false,
        );
        let ids: Vec<&str> = m.items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "u-u1",
                "a-msg_1",
                "t-toolu_1",
                "u-u2",
                "a-msg_1-2",
                "t-toolu_1-2"
            ]
        );
        assert_eq!(m.items[5].caller.as_deref(), Some("a-msg_1-2"));
        assert_eq!(m.items[5].output, "r2");
        assert_eq!(m.items[2].output, "r1");
        // The later turn alone, the first imported before (the lines
        // numbered as in the whole file): the same ids.
        let earlier: Vec<(String, usize, Option<String>)> = m.items[..3]
            .iter()
            .map(|i| (i.id.clone(), i.made_at.0, i.caller.clone()))
            .collect();
        let taken = |id: &str, made: &crate::import::Made| {
            earlier.iter().any(|(e, line, caller)| {
                e == id
                    && (made.line.is_some_and(|l| l != *line)
                        || made.caller.is_some_and(|c| caller.as_deref() != Some(c)))
            })
        };
        let mut later_lines = lines(&all);
        let later_lines = later_lines.split_off(3);
        let later = map(later_lines, &Seed::default(), &taken);
        let ids: Vec<&str> = later.items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["u-u2", "a-msg_1-2", "t-toolu_1-2"]);
    }

    #[test]
    fn a_rewind_names_the_older_reply_and_a_replay_is_no_node() {
        let m = map(
            lines(&[
                user("u1", None, "2026-11-01T10:00:00Z", "hi"),
                reply("a1", "u1", "msg_1", json!({"type": "text", "text": "one"})),
                user("u2", Some("a1"), "2026-11-01T10:01:00Z", "next"),
                reply("a2", "u2", "msg_2", json!({"type": "text", "text": "two"})),
                // Rewound: another message answering a1, later.
                user("u3", Some("a1"), "2026-11-01T10:02:00Z", "instead"),
                // A replay of u3 (same parent, same time): not a node.
                user("u3r", Some("a1"), "2026-11-01T10:02:00Z", "instead"),
                json!("not an object"),
            ]),
            &Seed::default(),
            &|_: &str, _: &crate::import::Made| false,
        );
        let users: Vec<(&str, Option<&str>)> = m
            .items
            .iter()
            .filter(|i| i.role == "user")
            .map(|i| (i.id.as_str(), i.predecessor.as_deref()))
            .collect();
        assert_eq!(
            users,
            [
                ("u-u1", Some(ROOT)),
                ("u-u2", Some("a-msg_1")),
                ("u-u3", Some("a-msg_1"))
            ]
        );
        // Every line is kept somewhere.
        let kept: usize = m.items.iter().map(|i| i.lines.len()).sum();
        assert_eq!(kept, 7);
    }
}
