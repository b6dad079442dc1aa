//! Codex CLI rollouts (JSONL, `../shared/reference/agent-transcripts.md`)
//! mapped to nodes: a pure function of the rollout's records, each
//! `{"timestamp", "type", "payload"}`.
//!
//! - a turn (`event_msg` `task_started` … `task_complete`, one `turn_id`)
//!   is a user node `u-<turn_id>` (the typed message) and one assistant
//!   node `a-<turn_id>`: the turn's output, its assistant messages joined,
//!   the model of its `turn_context` and its last `token_count` in
//!   metadata (`model`, `usage`); its predecessor is the turn's user node;
//! - each call (`function_call`, `custom_tool_call`, `local_shell_call`,
//!   `web_search_call`) is a tool node `t-<call_id>` called by the turn's
//!   reply: input = the call's arguments (the JSON string parsed), output =
//!   its `…_output`;
//! - visible text is recorded twice (a `response_item` message and an
//!   `event_msg` `user_message` / `agent_message`): the event is the typed
//!   user message (the `response_item` user messages also carry context the
//!   harness injected), the `response_item` the reply's text; the other
//!   copy goes with the node as a record only. A rollout without one of
//!   the two kinds uses the other;
//! - a compaction (`compacted`) is a `context/compact` record node;
//! - every other record (`session_meta`, `turn_context`, reasoning, token
//!   counts, types not known here, lines that do not parse) goes, unchanged,
//!   with the node before it (or the first node).
//!
//! Ids come from the rollout's own turn and call ids (or, in a rollout
//! without them, the timestamps), never from line numbers: a fork starts a
//! new file that copies the history it forked from, so its copies map to
//! the same nodes, and its first new turn branches off where the fork was
//! made (a retry branch, once imported into the session it was forked
//! from).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Item, Line, Mapped, attach, blocks_text, node_id, place, timestamp};
use crate::layout::schema::ROOT;

/// A call's arguments: the JSON string parsed, else as given (also when
/// parsed they would nest deeper than a node file, or the pending area
/// that keeps an open turn's nodes, can hold: the string is kept).
fn arguments(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s)
            .ok()
            .filter(|a| super::depth(a) <= super::MAX_RECORD_DEPTH)
            .unwrap_or_else(|| v.clone()),
        other => other.clone(),
    }
}

/// The turn being read.
#[derive(Default)]
struct Turn {
    /// `turn_id` of its `task_started` (or the time its message came).
    key: Option<String>,
    user: Option<usize>,
    reply: Option<usize>,
    /// Its user node, its reply were made before the lines mapped here.
    had_user: bool,
    had_reply: bool,
    /// Its user message: the other copy of it is no second message.
    user_text: Option<String>,
}

impl Turn {
    fn has_user(&self) -> bool {
        self.user.is_some() || self.had_user
    }
    fn has_reply(&self) -> bool {
        self.reply.is_some() || self.had_reply
    }
}

/// What the mapping knows before a line: where an import of a grown
/// rollout starts again from (kept in the session's cursor).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct State {
    /// The last top-level node (`None`: ROOT).
    last_top: Option<String>,
    model: Option<String>,
    /// The turn being read: its key, whether it has its user node, reply.
    key: Option<String>,
    user: bool,
    reply: bool,
    user_text: Option<String>,
    /// A `task_started` whose turn has no node yet.
    started: Option<String>,
    /// Kinds of record seen (which copy of visible text makes the nodes).
    user_events: bool,
    assistant_items: bool,
    task_events: bool,
    /// The header's time of a rollout in the format before `session_meta`
    /// (its records carry none of their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    legacy_time: Option<String>,
}

/// The record types of a rollout's items, bare in the format before
/// `session_meta` (in `response_item` envelopes since).
const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// A record of the rollout format before `session_meta` seen as its
/// envelope: the first line (`id`, `timestamp`, `instructions`) as a
/// `session_meta`, a bare item as a `response_item` dated by the header
/// (`time`). `None` for a record in envelopes (and for anything else:
/// `{"record_type": "state"}` lines).
pub fn legacy_view(r: &Value, time: Option<&str>) -> Option<Value> {
    let o = r.as_object()?;
    if o.contains_key("payload") {
        return None;
    }
    match o.get("type").and_then(Value::as_str) {
        None if o.get("id").is_some_and(Value::is_string) && o.contains_key("timestamp") => {
            Some(serde_json::json!({
                "type": "session_meta",
                "timestamp": o["timestamp"],
                "payload": r,
            }))
        }
        Some(t) if ITEM_TYPES.contains(&t) => Some(serde_json::json!({
            "type": "response_item",
            "timestamp": time,
            "payload": r,
        })),
        _ => None,
    }
}

/// The working directory an `<environment_context>` message names.
fn context_cwd(text: &str) -> Option<String> {
    let rest = text.trim_start().strip_prefix("<environment_context>")?;
    let (_, after) = rest.split_once("<cwd>")?;
    let (cwd, _) = after.split_once("</cwd>")?;
    Some(cwd.trim().to_string()).filter(|c| !c.is_empty())
}

/// Map a rollout's lines to nodes, from `start` (the state before the
/// first of them; `None` at the start of the rollout).
pub fn map(lines: Vec<Line>, start: Option<&Value>, taken: &super::Taken) -> Mapped {
    let start: State = start
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let views = legacy_views(&lines, &start);
    // Which copy of visible text makes the nodes.
    let has = |t: &str, p: &str, role: Option<&str>| {
        lines
            .iter()
            .zip(&views)
            .filter_map(|(l, (v, _))| v.as_ref().or(l.record.as_ref()))
            .any(|r| {
                r["type"] == t
                    && r["payload"]["type"] == p
                    && role.is_none_or(|role| r["payload"]["role"] == role)
            })
    };
    let user_from_events = start.user_events || has("event_msg", "user_message", None);
    let reply_from_events =
        !(start.assistant_items || has("response_item", "message", Some("assistant")));
    // A rollout that records when tasks start records when they end: a
    // reply is whole only then.
    let turns_end = start.task_events
        || has("event_msg", "task_started", None)
        || has("event_msg", "task_complete", None)
        || has("event_msg", "turn_aborted", None);

    // An id used again in this rollout: a node of its own. Only within
    // it: a fork copies its history with new times, so an id an earlier
    // import wrote is that same node here.
    let _ = taken;
    let never = |_: &str, _: &super::Made| false;
    let mut mapper = Mapper {
        m: Mapped::default(),
        unique: super::Unique::new(&never),
        user_from_events,
        reply_from_events,
        turns_end,
        // The kinds seen so far, for the state before each line.
        seen: (start.user_events, start.assistant_items, start.task_events),
        turn: Turn {
            key: start.key.clone(),
            had_user: start.user,
            had_reply: start.reply,
            user_text: start.user_text.clone(),
            ..Default::default()
        },
        started: start.started.clone(),
        last_top: start.last_top.clone().unwrap_or_else(|| ROOT.to_string()),
        model: start.model.clone(),
        legacy_time: start.legacy_time.clone(),
        states: Vec::new(),
        tool_of: HashMap::new(),
        leading: Vec::new(),
        cur: None,
    };
    for (l, (view, time_after)) in lines.into_iter().zip(views) {
        mapper.line(l, view, time_after);
    }
    mapper.finish()
}

/// The format before `session_meta`, seen as envelopes.
/// (Each with the header's time as it stands after its line.)
fn legacy_views(lines: &[Line], start: &State) -> Vec<(Option<Value>, Option<String>)> {
    let mut legacy_time = start.legacy_time.clone();
    lines
        .iter()
        .map(|l| {
            let v = l
                .record
                .as_ref()
                .and_then(|r| legacy_view(r, legacy_time.as_deref()));
            if let Some(v) = v.as_ref().filter(|v| v["type"] == "session_meta") {
                legacy_time = v["timestamp"].as_str().map(str::to_string);
            }
            (v, legacy_time.clone())
        })
        .collect()
}

/// The mapping while it reads the rollout's lines: what it made, and the
/// state it goes on from.
struct Mapper<'a> {
    m: Mapped,
    unique: super::Unique<'a>,
    /// The copy of visible text that makes user nodes, and the reply's
    /// text: the events (else the `response_item` messages).
    user_from_events: bool,
    reply_from_events: bool,
    /// The rollout records when turns end: a reply is whole only then.
    turns_end: bool,
    /// The kinds seen so far, for the state before each line.
    seen: (bool, bool, bool),
    turn: Turn,
    started: Option<String>,
    last_top: String,
    model: Option<String>,
    /// The header's time, in the format before `session_meta`.
    legacy_time: Option<String>,
    states: Vec<(usize, State)>,
    tool_of: HashMap<String, usize>,
    leading: Vec<Line>,
    cur: Option<usize>,
}

impl Mapper<'_> {
    /// The mapping's state as it stands: before the line to read (after
    /// the last, at the end).
    fn state(&self) -> State {
        State {
            last_top: Some(self.last_top.clone()).filter(|t| t != ROOT),
            model: self.model.clone(),
            key: self.turn.key.clone(),
            user: self.turn.has_user(),
            reply: self.turn.has_reply(),
            user_text: self.turn.user_text.clone(),
            started: self.started.clone(),
            user_events: self.seen.0,
            assistant_items: self.seen.1,
            task_events: self.seen.2,
            legacy_time: self.legacy_time.clone(),
        }
    }

    /// Close the reply of a turn that is over.
    fn close(&mut self) {
        if let Some(i) = self.turn.reply {
            self.m.items[i].open = false;
        }
    }

    /// One line (`view`: its record seen as an envelope, in the format
    /// before `session_meta`): the node it makes, or the node it goes with.
    fn line(&mut self, mut l: Line, view: Option<Value>, time_after: Option<String>) {
        let Some(record) = l.record.take() else {
            self.m.unparsed += 1;
            attach(&mut self.m.items, self.cur, &mut self.leading, l);
            return;
        };
        let r = view.as_ref().unwrap_or(&record);
        let p = &r["payload"];
        let state = self.state();
        match (r["type"].as_str(), p["type"].as_str()) {
            (Some("event_msg"), Some("user_message")) => self.seen.0 = true,
            (Some("response_item"), Some("message")) if p["role"] == "assistant" => {
                self.seen.1 = true
            }
            (Some("event_msg"), Some("task_started" | "task_complete" | "turn_aborted")) => {
                self.seen.2 = true
            }
            _ => {}
        }
        // A bare item of the format before `session_meta` has no time of
        // its own: it is dated by the header, and named by its line (that
        // format has no forks that copy lines).
        self.legacy_time = time_after;
        let (ts_raw, ts) = match &view {
            Some(v) if v["type"] == "session_meta" => {
                let t = self.legacy_time.clone().unwrap_or_default();
                let ts = timestamp(&t).unwrap_or(0.0);
                (t, ts)
            }
            Some(_) => (
                format!("line-{}", l.line),
                self.legacy_time
                    .as_deref()
                    .and_then(timestamp)
                    .unwrap_or(0.0),
            ),
            None => {
                let t = r["timestamp"].as_str().unwrap_or("").to_string();
                let ts = timestamp(&t).unwrap_or(0.0);
                (t, ts)
            }
        };
        let (made, ended) = self.record(r, &l, &ts_raw, ts);
        // The state before this line, kept where it changed: where a
        // later run may start again (any line, a held-back record too).
        if self.states.last().is_none_or(|(_, s)| *s != state) {
            self.states.push((l.line, state));
        }
        l.record = Some(record);
        match made {
            Some(i) => {
                place(&mut self.m.items, i, &mut self.leading, l);
                self.cur = Some(i);
            }
            None => attach(&mut self.m.items, self.cur, &mut self.leading, l),
        }
        if ended {
            self.m.closed = self.m.items.len();
            self.m.unit_starts.push(self.m.items.len());
            self.cur = None;
            self.tool_of.clear();
            self.turn = Turn::default();
        }
    }

    /// What record `r` does, by its kind: the item it made or went to, and
    /// whether it ended the turn.
    fn record(&mut self, r: &Value, l: &Line, ts_raw: &str, ts: f64) -> (Option<usize>, bool) {
        let p = &r["payload"];
        let mut made: Option<usize> = None;
        let mut ended = false;
        let ptype = p["type"].as_str().unwrap_or("");
        match (r["type"].as_str().unwrap_or(""), ptype) {
            // The rollout's own (a fork may copy its original's too).
            ("session_meta", _) if self.m.cwd.is_none() => {
                self.m.cwd = p["cwd"].as_str().map(str::to_string);
            }
            ("turn_context", _) => {
                if let Some(md) = p["model"].as_str() {
                    self.model = Some(md.to_string());
                    if self.m.model.is_none() {
                        self.m.model = self.model.clone();
                    }
                }
                if self.m.cwd.is_none() {
                    self.m.cwd = p["cwd"].as_str().map(str::to_string);
                }
            }
            // A message recorded before its task started keeps its turn.
            ("event_msg", "task_started") if self.turn.has_reply() || !self.turn.has_user() => {
                self.close();
                self.turn = Turn::default();
                self.started = p["turn_id"].as_str().map(str::to_string);
            }
            // The turn is over: nothing later changes it, and what follows,
            // up to the next node, is the next turn's.
            ("event_msg", "task_complete") => {
                self.close();
                ended = true;
            }
            // The user stopped the turn: over, as its last node says.
            ("event_msg", "turn_aborted") => {
                if let Some(c) = self.cur {
                    let reason = p["reason"].as_str().unwrap_or("interrupted");
                    self.m.items[c]
                        .metadata
                        .insert(super::INTERRUPTED.into(), reason.into());
                }
                self.close();
                ended = true;
            }
            ("event_msg", "user_message") | ("response_item", "message")
                if ptype == "user_message" || p["role"] == "user" =>
            {
                made = self.user_message(p, l, ts_raw, ts);
            }
            ("compacted", _) => made = Some(self.compacted(p, l, ts_raw, ts)),
            (ty, _) if is_output(ty, ptype, p, self.reply_from_events) => {
                made = Some(self.output(p, l, ts_raw, ts));
            }
            ("response_item", "function_call_output" | "custom_tool_call_output") => {
                if let Some(&idx) = p["call_id"].as_str().and_then(|c| self.tool_of.get(c)) {
                    let it = &mut self.m.items[idx];
                    it.output = p["output"].clone();
                    it.open = false;
                    made = Some(idx);
                }
            }
            ("event_msg", "token_count") => {
                if let Some(i) = self.turn.reply
                    && p["info"].is_object()
                {
                    self.m.items[i]
                        .metadata
                        .insert("usage".into(), p["info"].clone());
                }
            }
            _ => {}
        }
        (made, ended)
    }

    /// A user message (`event_msg` `user_message` or a `response_item`
    /// message of the user's): a user node, from the copy that makes them.
    fn user_message(&mut self, p: &Value, l: &Line, ts_raw: &str, ts: f64) -> Option<usize> {
        let from_event = p["type"] == "user_message";
        let text = if from_event {
            p["message"].as_str().map(str::to_string)
        } else {
            blocks_text(&p["content"], &["input_text", "text"])
        };
        // The copy that makes user nodes; without the events, the
        // messages that are not context the harness injected
        // (`<environment_context>…`, `<user_instructions>…`). The
        // other copy of the turn's message (it may come in a later
        // run, which knows the events) is no message of its own.
        if self.m.cwd.is_none() {
            self.m.cwd = text.as_deref().and_then(context_cwd);
        }
        let primary = from_event == self.user_from_events;
        let text = text.filter(|t| {
            primary
                && (from_event || !t.trim_start().starts_with('<'))
                && self.turn.user_text.as_deref() != Some(t)
        })?;
        if self.turn.has_user() {
            // A second message without a new task: a turn of its own.
            self.close();
            self.turn = Turn::default();
        }
        // The turn before is over.
        self.m.closed = self.m.items.len();
        self.tool_of.clear();
        let key = self
            .turn
            .key
            .clone()
            .or_else(|| self.started.take())
            .unwrap_or_else(|| ts_raw.to_string());
        self.turn.key = Some(key.clone());
        self.turn.user_text = Some(text.clone());
        let id = self.unique.id(
            node_id("u-", &key),
            &super::Made {
                at: ts,
                line: None,
                caller: None,
            },
        );
        self.m.items.push(Item {
            id: id.clone(),
            role: "user",
            predecessor: Some(self.last_top.clone()),
            caller: None,
            name: None,
            input: Value::Null,
            output: Value::String(text),
            created_at: ts,
            metadata: Map::new(),
            lines: Vec::new(),
            open: false,
            made_at: (l.line, l.byte),
        });
        self.last_top = id;
        self.turn.user = Some(self.m.items.len() - 1);
        self.turn.user
    }

    /// A compaction (`compacted`): a `context/compact` record node.
    fn compacted(&mut self, p: &Value, l: &Line, ts_raw: &str, ts: f64) -> usize {
        let mut metadata = Map::new();
        metadata.insert("display".into(), "runtime".into());
        if let Some(s) = p["message"].as_str() {
            metadata.insert("summary".into(), s.into());
        }
        self.m.items.push(Item {
            id: self.unique.id(
                node_id("c-", ts_raw),
                &super::Made {
                    at: ts,
                    line: None,
                    caller: None,
                },
            ),
            role: "code",
            predecessor: None,
            caller: Some(ROOT.into()),
            name: Some("context/compact".into()),
            input: Value::Null,
            output: Value::String("context compacted".into()),
            created_at: ts,
            metadata,
            lines: Vec::new(),
            open: false,
            made_at: (l.line, l.byte),
        });
        self.m.items.len() - 1
    }

    /// A record of the turn's output: the turn's reply (made at its first
    /// output) takes its text; a call is a tool node of the reply. The
    /// item it went to.
    fn output(&mut self, p: &Value, l: &Line, ts_raw: &str, ts: f64) -> usize {
        let ptype = p["type"].as_str().unwrap_or("");
        // The turn's reply, made at its first output.
        let idx = match self.turn.reply {
            Some(i) => i,
            None => self.reply(l, ts_raw, ts),
        };
        let text = match ptype {
            "agent_message" => p["message"].as_str().map(str::to_string),
            "message" => blocks_text(&p["content"], &["output_text", "text"]),
            _ => None,
        };
        if let Some(t) = text
            && let Value::String(out) = &mut self.m.items[idx].output
        {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&t);
        }
        self.call(p, idx, l, ts).unwrap_or(idx)
    }

    /// The turn's reply, made at its first output.
    fn reply(&mut self, l: &Line, ts_raw: &str, ts: f64) -> usize {
        let key = self
            .turn
            .key
            .clone()
            .or_else(|| self.started.clone())
            .unwrap_or_else(|| ts_raw.to_string());
        self.turn.key = Some(key.clone());
        let id = self.unique.id(
            node_id("a-", &key),
            &super::Made {
                at: ts,
                line: None,
                caller: None,
            },
        );
        let mut metadata = Map::new();
        if let Some(md) = &self.model {
            metadata.insert("model".into(), md.clone().into());
        }
        self.m.items.push(Item {
            id: id.clone(),
            role: "llm",
            predecessor: Some(self.last_top.clone()),
            caller: None,
            name: self.model.clone(),
            input: Value::Null,
            output: Value::String(String::new()),
            created_at: ts,
            metadata,
            lines: Vec::new(),
            open: self.turns_end,
            made_at: (l.line, l.byte),
        });
        self.last_top = id;
        self.turn.reply = Some(self.m.items.len() - 1);
        self.m.items.len() - 1
    }

    /// A call record: a tool node called by the reply `reply`, if it is
    /// one.
    fn call(&mut self, p: &Value, reply: usize, l: &Line, ts: f64) -> Option<usize> {
        let ptype = p["type"].as_str().unwrap_or("");
        let call = call_id(ptype, p)?;
        let reply = self.m.items[reply].id.clone();
        let input = match ptype {
            "function_call" => arguments(&p["arguments"]),
            "custom_tool_call" => p["input"].clone(),
            _ => p["action"].clone(),
        };
        self.m.items.push(Item {
            id: self.unique.id(
                node_id("t-", &call),
                &super::Made {
                    at: ts,
                    line: None,
                    caller: Some(&reply),
                },
            ),
            role: "code",
            predecessor: None,
            caller: Some(reply),
            name: p["name"]
                .as_str()
                .map(str::to_string)
                .or_else(|| Some(ptype.strip_suffix("_call").unwrap_or(ptype).to_string())),
            input,
            output: Value::Null,
            created_at: ts,
            metadata: Map::new(),
            lines: Vec::new(),
            // A web search has no output record.
            open: ptype != "web_search_call",
            made_at: (l.line, l.byte),
        });
        self.tool_of.insert(call, self.m.items.len() - 1);
        Some(self.m.items.len() - 1)
    }

    /// What the mapping made, with its state after the last line.
    fn finish(mut self) -> Mapped {
        let end = self.state();
        self.m.states = self.states;
        self.m.state_end = Some(end);
        self.m.leftover = self.leading;
        self.m
    }
}

/// A record of the turn's output: reasoning, a call, an assistant message
/// (from the copy that makes the reply's text).
fn is_output(ty: &str, ptype: &str, p: &Value, reply_from_events: bool) -> bool {
    match (ty, ptype) {
        ("response_item", "message") => p["role"] == "assistant" && !reply_from_events,
        ("event_msg", "agent_message") => reply_from_events,
        ("response_item", "reasoning") => true,
        ("response_item", _) => call_id(ptype, p).is_some(),
        _ => false,
    }
}

/// The id of a call record.
fn call_id(ptype: &str, p: &Value) -> Option<String> {
    match ptype {
        "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
            p["call_id"]
                .as_str()
                .or(p["id"].as_str())
                .map(str::to_string)
        }
        _ => None,
    }
}
