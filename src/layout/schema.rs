//! Schema types of the files of SPEC §2: `meta.json` (an open object whose
//! unknown keys survive every rewrite) and the history node.

use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};

/// Largest node or meta file this tool reads or writes (SPEC §6: huge payloads).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

fn null_as_default<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// One DAG node, keys in the order the Python store writes them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Node {
    pub id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub created_at: f64,
    pub seq: i64,
    pub role: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(default)]
    pub input: Value,
    #[serde(default)]
    pub output: Value,
    #[serde(default, deserialize_with = "null_as_default")]
    pub caller: String,
    #[serde(default)]
    pub predecessor: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub reads: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: Map<String, Value>,
    /// Keys this tool does not know, kept as they were.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// The released Python store (0.5) writes `called_by` for the caller and
    /// keeps the predecessor in `metadata.parent_id`, with no `caller` or
    /// `predecessor` key: read so, and written back so.
    #[serde(skip)]
    pub python_keys: bool,
}

pub const ROOT: &str = "ROOT";

impl Node {
    /// The file-name letter of a role (SPEC §2.2).
    pub fn letter(&self) -> char {
        match self.role.as_str() {
            "user" => 'u',
            "llm" => 'a',
            "code" => 't',
            "" => 'x',
            other => {
                let c = other.chars().next().unwrap_or('x');
                if "ulcatsx".contains(c) { c } else { 'x' }
            }
        }
    }

    /// Top level: no real caller (`""` or `"ROOT"`).
    pub fn is_top_level(&self) -> bool {
        self.caller.is_empty() || self.caller == ROOT
    }

    /// The Python store's literal ROOT marker node of web sessions.
    pub fn is_root_marker(&self) -> bool {
        self.metadata.get("display").and_then(Value::as_str) == Some("root")
    }

    /// A message of the conversation: a top-level user or assistant node
    /// (not the Python store's ROOT marker).
    pub fn is_conversational(&self) -> bool {
        (self.role == "user" || self.role == "llm") && self.is_top_level() && !self.is_root_marker()
    }

    /// A top-level user node: the start of a turn (SPEC §2.2).
    pub fn starts_turn(&self) -> bool {
        self.role == "user" && self.is_top_level() && !self.is_root_marker()
    }

    /// The node's text, as far as it has one.
    pub fn text(&self) -> String {
        value_text(&self.output)
    }

    pub fn to_json(&self) -> Vec<u8> {
        if !self.python_keys {
            return serde_json::to_vec(self).expect("a node always serializes");
        }
        // In the shape it was read in: `called_by`, and no `caller` or
        // `predecessor` key (the predecessor is `metadata.parent_id`).
        let Value::Object(m) = serde_json::to_value(self).expect("a node always serializes") else {
            unreachable!("a node serializes as an object")
        };
        let shaped: Map<String, Value> = m
            .into_iter()
            .filter(|(k, _)| k != "predecessor" && k != "called_by")
            .map(|(k, v)| match k.as_str() {
                "caller" => ("called_by".to_string(), v),
                _ => (k, v),
            })
            .collect();
        serde_json::to_vec(&shaped).expect("a node always serializes")
    }

    pub fn parse(bytes: &[u8]) -> std::result::Result<Node, String> {
        let mut node: Node = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if node.id.is_empty() {
            return Err("the node has an empty `id`".into());
        }
        if let Some(Value::String(by)) = node.extra.get("called_by")
            && !has_key(bytes, "caller")
        {
            node.python_keys = true;
            node.caller = by.clone();
            if node.predecessor.is_none() {
                node.predecessor = node
                    .metadata
                    .get("parent_id")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned);
            }
        }
        Ok(node)
    }
}

/// Whether the JSON object in `bytes` has a top-level `key` (the node
/// parsed already, so this only tells apart a missing key from a default).
fn has_key(bytes: &[u8], key: &str) -> bool {
    serde_json::from_slice::<Map<String, Value>>(bytes).is_ok_and(|m| m.contains_key(key))
}

/// Text of a JSON value: strings as they are, anything else as compact JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Read a file that must be small enough and valid UTF-8.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    let md = std::fs::symlink_metadata(path).io("read", path)?;
    if md.file_type().is_symlink() {
        return Err(super::Refusal::Symlink {
            path: path.to_path_buf(),
            help: "git-session never follows symlinks inside a session",
        }
        .into());
    }
    if !md.is_file() {
        // A FIFO would block the reader forever; a device is no node.
        return Err(Error::Corrupt {
            path: path.to_path_buf(),
            reason: "it is not a regular file".into(),
            help: Some("move it out of the session; it is never opened".into()),
        });
    }
    if md.len() > MAX_FILE_BYTES {
        return Err(Error::corrupt(
            path,
            format!(
                "it is {} bytes, over the limit of {MAX_FILE_BYTES}",
                md.len()
            ),
        ));
    }
    crate::layout::atomic::read(path).io("read", path)
}

/// meta.json's `bound_at`: when the session joined its project
/// (`project_id`), float unix seconds; written by `init --project` and
/// `project bind`, kept by a bind again to the same project. A session
/// bound by an older version or by the Python store has none.
pub const BOUND_AT: &str = "bound_at";

/// `meta.json`: an open object (SPEC §2.1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta(pub Map<String, Value>);

impl Meta {
    pub fn read(path: &Path) -> Result<Meta> {
        let bytes = read_bounded(path)?;
        Meta::parse(&bytes).map_err(|reason| Error::corrupt(path, reason))
    }

    pub fn parse(bytes: &[u8]) -> std::result::Result<Meta, String> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Ok(Meta(map)),
            Ok(_) => Err("meta.json must hold a JSON object".into()),
            Err(e) => Err(format!("meta.json does not parse: {e}")),
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.0).expect("a map always serializes")
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
    pub fn f64(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(Value::as_f64)
    }
    pub fn flag(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or(false)
    }
    pub fn set(&mut self, key: &str, v: impl Into<Value>) {
        self.0.insert(key.to_string(), v.into());
    }
    /// The active DAG tip (`head_id`, or the legacy `last_node_id`).
    pub fn head_id(&self) -> Option<&str> {
        self.str("head_id")
            .or_else(|| self.str("last_node_id"))
            .filter(|s| !s.is_empty())
    }
    pub fn title(&self) -> &str {
        self.str("title").unwrap_or("")
    }
    pub fn status(&self) -> &str {
        self.str("status").unwrap_or("idle")
    }
    /// The earliest the session can have joined its project: [`BOUND_AT`],
    /// else `created_at` (an older version's bind came at or after it);
    /// `None` when neither is there.
    pub fn earliest_bind_time(&self) -> Option<f64> {
        self.f64(BOUND_AT).or_else(|| self.f64("created_at"))
    }
}

/// The fields of an index row (SPEC §3), besides `preview`.
pub const INDEX_FIELDS: [&str; 15] = [
    "id",
    "agent_id",
    "title",
    "created_at",
    "updated_at",
    "source",
    "channel",
    "account_id",
    "peer_display",
    "peer_id",
    "pinned",
    "archived",
    "group",
    "status",
    "unread",
];

/// How many characters a preview holds whole; a longer one keeps
/// [`PREVIEW_KEPT`] and `…`.
pub const PREVIEW_CHARS: usize = 80;
pub const PREVIEW_KEPT: usize = 77;

/// Preview text: strip, newlines → spaces, > 80 chars → first 77 + `…`.
pub fn preview(text: &str) -> String {
    let flat = preview_line(text);
    if flat.chars().count() > PREVIEW_CHARS {
        let mut s: String = flat.chars().take(PREVIEW_KEPT).collect();
        s.push('…');
        s
    } else {
        flat
    }
}

/// The line a preview is cut from: the text stripped, its line breaks
/// spaces.
pub fn preview_line(text: &str) -> String {
    text.trim().replace(['\r', '\n'], " ")
}

/// An index row built from `meta.json` and the latest user text.
pub fn index_row(meta: &Meta, id: &str, preview_text: Option<&str>) -> Map<String, Value> {
    let mut row = Map::new();
    row.insert("id".into(), Value::String(id.into()));
    row.insert("status".into(), Value::String(meta.status().into()));
    for key in ["pinned", "archived", "unread"] {
        row.insert(key.into(), Value::Bool(meta.flag(key)));
    }
    for key in INDEX_FIELDS {
        if matches!(key, "id" | "status" | "pinned" | "archived" | "unread") {
            continue;
        }
        row.insert(key.into(), meta.0.get(key).cloned().unwrap_or(Value::Null));
    }
    if let Some(p) = preview_text {
        row.insert("preview".into(), Value::String(p.into()));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A time Python wrote is read and written back to the last digit
    /// (serde_json's default float parser may be one unit off in the last
    /// place: `list` and meta.json then showed two times for one write).
    #[test]
    fn times_round_trip_exactly() {
        for src in [
            "1796392460.5493977",
            "1796392460.5493975",
            "1796470378.1599395",
            "1796017556.442044",
            "0.1",
        ] {
            let v: Value = serde_json::from_str(src).unwrap();
            assert_eq!(serde_json::to_string(&v).unwrap(), src);
            let f: f64 = src.parse().unwrap();
            assert_eq!(v.as_f64(), Some(f));
        }
    }

    #[test]
    fn python_node_round_trips_with_key_order() {
        let src = r#"{"id":"u1_reply","created_at":1796017556.5,"seq":2,"role":"llm","name":"m1","input":null,"output":"hi there","caller":"","predecessor":"u1","reads":[],"metadata":{"status":"completed"}}"#;
        let n = Node::parse(src.as_bytes()).unwrap();
        assert_eq!(n.letter(), 'a');
        assert_eq!(String::from_utf8(n.to_json()).unwrap(), src);
    }

    #[test]
    fn the_released_python_stores_keys_are_read_and_written_back() {
        let src = r#"{"id":"a1","created_at":1.0,"seq":1,"role":"llm","name":"","input":null,"output":"yo","called_by":"","reads":[],"metadata":{"parent_id":"u1"}}"#;
        let n = Node::parse(src.as_bytes()).unwrap();
        assert_eq!(n.predecessor.as_deref(), Some("u1"));
        assert!(n.is_top_level());
        assert_eq!(String::from_utf8(n.to_json()).unwrap(), src);
        let tool = r#"{"id":"t1","created_at":1.0,"seq":2,"role":"code","name":"","input":{},"output":"r","called_by":"a1","reads":[],"metadata":{}}"#;
        let t = Node::parse(tool.as_bytes()).unwrap();
        assert_eq!(t.caller, "a1");
        assert_eq!(t.predecessor, None);
        assert_eq!(String::from_utf8(t.to_json()).unwrap(), tool);
    }

    #[test]
    fn nulls_fall_back_and_unknown_keys_survive() {
        let src = r#"{"id":"x","seq":1,"role":"user","name":null,"caller":null,"reads":null,"metadata":null,"extra_key":{"a":1}}"#;
        let n = Node::parse(src.as_bytes()).unwrap();
        assert_eq!(n.caller, "");
        assert!(n.starts_turn());
        assert!(
            String::from_utf8(n.to_json())
                .unwrap()
                .contains(r#""extra_key":{"a":1}"#)
        );
    }

    #[test]
    fn meta_keeps_unknown_keys_in_order() {
        let src = r#"{"id":"s1","zzz":[1,2],"title":"t","head_id":"a"}"#;
        let mut m = Meta::parse(src.as_bytes()).unwrap();
        m.set("title", "new");
        assert_eq!(
            String::from_utf8(m.to_json()).unwrap(),
            r#"{"id":"s1","zzz":[1,2],"title":"new","head_id":"a"}"#
        );
        assert!(Meta::parse(b"[1]").is_err());
        assert!(Meta::parse(b"{\"id\":").is_err());
    }

    #[test]
    fn preview_rules() {
        assert_eq!(preview("  a\nb  "), "a b");
        let long = "x".repeat(81);
        let p = preview(&long);
        assert_eq!(p.chars().count(), 78);
        assert!(p.ends_with('…'));
        assert_eq!(preview(&"y".repeat(80)), "y".repeat(80));
    }
}
