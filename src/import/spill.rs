//! A node too big for one file (a tool's whole output, which a transcript
//! record holds up to three times: the tool result, the record kept in
//! `metadata.source_records`, Claude Code's `toolUseResult`) keeps every
//! byte: each long string in it is stored once, whole, as a
//! content-addressed attachment, `workdir/attachments/<blob>.txt` (`<blob>`:
//! git's object id of the text, so identical strings are one file and
//! `git hash-object` checks it), and the node names it in
//! `metadata.attachments`: `{"name", "path", "size", "blob", "holds"}`,
//! `holds` the JSON pointers (RFC 6901, from the node's root) of every place
//! the string stood, where the node now says where it is. Putting the
//! string back at each pointer gives the node as the transcript made it.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::error::{Error, IoContext, Result};
use crate::layout::paths::{ATTACHMENTS, WORKDIR};
use crate::layout::schema::MAX_FILE_BYTES;
use crate::layout::{SessionDir, atomic};
use crate::store::NewNode;

/// Strings this long or longer go to attachments when a node must shrink.
const LONG: usize = 1 << 20;
/// Room left in a node file for what is not its long strings.
const MARGIN: u64 = 1 << 20;

/// What one long string became.
struct Spilled {
    size: usize,
    holds: Vec<String>,
}

/// Make `node` fit in a node file: when it would not (within [`MARGIN`]),
/// its long strings move to attachments. Returns the attachments' paths
/// (relative to the session), none when the node fits as it is.
pub fn fit(sd: &SessionDir, node: &mut NewNode) -> Result<Vec<String>> {
    let size = |node: &NewNode| {
        [&node.output, &node.input]
            .iter()
            .map(|v| serde_json::to_vec(v).map_or(0, |b| b.len()))
            .sum::<usize>()
            + serde_json::to_vec(&node.metadata).map_or(0, |b| b.len())
    };
    let fits = |node: &NewNode| (size(node) as u64) + MARGIN <= MAX_FILE_BYTES;
    // Every node of every import comes here: most are told apart by a walk
    // that bounds their JSON from above, never serialised twice.
    let most = most_bytes(&node.output)
        + most_bytes(&node.input)
        + node
            .metadata
            .iter()
            .map(|(k, v)| 6 * k.len() + 4 + most_bytes(v))
            .sum::<usize>();
    if (most as u64) + MARGIN <= MAX_FILE_BYTES || fits(node) {
        return Ok(Vec::new());
    }
    let mut found: BTreeMap<String, Spilled> = BTreeMap::new();
    // Strings of a megabyte first; shorter ones too while it does not fit
    // (many strings just under a megabyte).
    for long in [LONG, LONG / 16, LONG / 256] {
        walk(sd, &mut node.output, "/output".into(), long, &mut found)?;
        walk(sd, &mut node.input, "/input".into(), long, &mut found)?;
        for (k, v) in node.metadata.iter_mut() {
            walk(sd, v, format!("/metadata/{}", escape(k)), long, &mut found)?;
        }
        if fits(node) {
            break;
        }
    }
    let mut list = match node.metadata.remove("attachments") {
        Some(Value::Array(a)) => a,
        // Not a list of ours: kept beside it.
        Some(other) => {
            node.metadata.insert("attachments_of_source".into(), other);
            Vec::new()
        }
        None => Vec::new(),
    };
    let mut paths = Vec::new();
    for (blob, s) in found {
        let path = relative(&blob);
        list.push(json!({
            "name": format!("{blob}.txt"),
            "path": path,
            "size": s.size,
            "blob": blob,
            "holds": s.holds,
        }));
        paths.push(path);
    }
    node.metadata
        .insert("attachments".into(), Value::Array(list));
    Ok(paths)
}

/// The attachment paths a written node names (the ones [`fit`] made).
pub fn named(metadata: &Map<String, Value>) -> Vec<String> {
    metadata
        .get("attachments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("blob").is_some() && a.get("holds").is_some())
        .filter_map(|a| a["path"].as_str().map(str::to_string))
        .collect()
}

/// At least as many bytes as `v`'s JSON takes: a character escapes to at
/// most six (`\u0000`), a number to at most 32, and each value costs a
/// separator or two.
fn most_bytes(v: &Value) -> usize {
    match v {
        Value::String(s) => 6 * s.len() + 2,
        Value::Array(a) => 2 + a.iter().map(|x| most_bytes(x) + 1).sum::<usize>(),
        Value::Object(m) => {
            2 + m
                .iter()
                .map(|(k, x)| 6 * k.len() + 4 + most_bytes(x))
                .sum::<usize>()
        }
        Value::Number(_) => 32,
        Value::Bool(_) | Value::Null => 5,
    }
}

fn relative(blob: &str) -> String {
    format!("{WORKDIR}/{ATTACHMENTS}/{blob}.txt")
}

/// A JSON pointer's escaping of one key.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn walk(
    sd: &SessionDir,
    v: &mut Value,
    at: String,
    long: usize,
    found: &mut BTreeMap<String, Spilled>,
) -> Result<()> {
    match v {
        Value::String(s) if s.len() >= long => {
            let blob = crate::git::blob_id(s.as_bytes()).to_string();
            if !found.contains_key(&blob) {
                store(sd, &blob, s.as_bytes())?;
            }
            let size = s.len();
            found
                .entry(blob.clone())
                .or_insert(Spilled {
                    size,
                    holds: Vec::new(),
                })
                .holds
                .push(at);
            *v = Value::String(format!(
                "[{size} bytes, stored whole in {}]",
                relative(&blob)
            ));
        }
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                walk(sd, x, format!("{at}/{i}"), long, found)?;
            }
        }
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                walk(sd, x, format!("{at}/{}", escape(k)), long, found)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Write one attachment, once: a file of that name holds that text already
/// (an import cut short wrote it) unless its size says otherwise.
fn store(sd: &SessionDir, blob: &str, bytes: &[u8]) -> Result<()> {
    let workdir = sd.dir.join(WORKDIR);
    let dir = sd.attachments();
    for d in [&workdir, &dir] {
        atomic::refuse_unsafe(d)?;
        if !d.is_dir() {
            std::fs::create_dir_all(d).io("create", d)?;
        }
    }
    let path = dir.join(format!("{blob}.txt"));
    atomic::refuse_unsafe(&path)?;
    if atomic::create_new(&path, bytes)? {
        return Ok(());
    }
    let len = std::fs::metadata(&path).io("read", &path)?.len();
    if len == bytes.len() as u64 {
        return Ok(());
    }
    Err(Error::corrupt(
        &path,
        format!(
            "an attachment named by its content's id holds {len} bytes, not the {} of that content",
            bytes.len()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many strings just under a megabyte: shorter ones go too, until the
    /// node fits; each text once, every place named, each file whole.
    #[test]
    fn a_node_of_many_long_strings_is_made_to_fit() {
        let (_tmp, sd) = crate::layout::paths::test_session();
        let mut node = NewNode::default();
        let texts: Vec<String> = (0..80).map(|i| format!("{i:03}").repeat(300_000)).collect();
        node.output = json!(texts[0].clone());
        node.metadata.insert(
            "blocks".into(),
            Value::Array(texts.iter().map(|t| json!(t)).collect()),
        );
        let paths = fit(&sd, &mut node).unwrap();
        assert_eq!(paths.len(), 80);
        let size = serde_json::to_vec(&node.metadata).unwrap().len();
        assert!((size as u64) + MARGIN <= MAX_FILE_BYTES, "{size}");
        let blob0 = crate::git::blob_id(texts[0].as_bytes()).to_string();
        let first = node.metadata["attachments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["blob"] == blob0.as_str())
            .unwrap();
        assert_eq!(first["holds"], json!(["/output", "/metadata/blocks/0"]));
        for (i, t) in texts.iter().enumerate() {
            let blob = crate::git::blob_id(t.as_bytes()).to_string();
            let stored = std::fs::read_to_string(sd.attachments().join(format!("{blob}.txt")));
            assert_eq!(stored.unwrap(), *t, "{i}");
        }
    }

    /// The bound a node is told apart by is never below its JSON.
    #[test]
    fn the_bound_is_never_below_the_json() {
        let v = json!({"a\u{0}\"": ["\u{1}\u{7f}é\n", 1.5e300, -1, true, null, {}, []],
            "k": {"deep": [[["x\\"]]]}});
        for x in [v.clone(), v["a\u{0}\""].clone(), json!("\u{0}".repeat(100))] {
            assert!(
                most_bytes(&x) >= serde_json::to_vec(&x).unwrap().len(),
                "{x}"
            );
        }
    }

    #[test]
    fn keys_are_escaped_as_json_pointers_escape_them() {
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(escape("plain"), "plain");
    }
}
