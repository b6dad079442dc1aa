//! The map stage's vocabulary, shared by the two mappings ([`super::claude`],
//! [`super::codex`]): a transcript's [`Line`]s in, the [`Item`]s (nodes to
//! write) and what else a mapping learned ([`Mapped`]) out; node ids made
//! from the transcript's ids ([`node_id`]) and kept unique ([`Unique`]);
//! the helpers both mappings read records with (times, text blocks, where a
//! line goes).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::codex;

/// Whether the session holds a node of id `id` other than the one a
/// transcript record made at time `at` (a message or tool id the agent used
/// again in a later turn, imported before): the new node then takes a
/// derived id ([`Unique`]). The node made at `at` itself (an import killed
/// after it wrote it, run again) keeps its id.
pub type Taken<'a> = dyn Fn(&str, &Made) -> bool + 'a;

/// What tells the node a record made from another node of its id: its
/// time, the line of the record that made it (kept in the node's
/// `source_records`; none for a tool call, whose record is its reply's),
/// and its caller.
pub struct Made<'a> {
    pub at: f64,
    pub line: Option<usize>,
    pub caller: Option<&'a str>,
}

impl Made<'_> {
    /// Whether `node` is another node than the one this made.
    pub fn is_not(&self, node: &crate::layout::schema::Node) -> bool {
        let lines = || {
            node.metadata
                .get("source_records")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r["line"].as_u64())
        };
        node.created_at != self.at
            || self.caller.is_some_and(|c| node.caller != c)
            || self.line.is_some_and(|l| !lines().any(|n| n == l as u64))
    }
}

/// Node ids made unique within a mapping and against the session: an id
/// used again gets `-2`, `-3`, … (the same on every import of the
/// transcript, whole or grown a turn at a time).
pub struct Unique<'a> {
    used: HashSet<String>,
    taken: &'a Taken<'a>,
}

impl<'a> Unique<'a> {
    pub fn new(taken: &'a Taken<'a>) -> Self {
        Unique {
            used: HashSet::new(),
            taken,
        }
    }

    /// `id` for the node `made` describes, or the first derived id that
    /// is free.
    pub fn id(&mut self, id: String, made: &Made) -> String {
        let mut cand = id.clone();
        let mut n = 2;
        while self.used.contains(&cand) || (self.taken)(&cand, made) {
            cand = node_id("", &format!("{id}-{n}"));
            n += 1;
        }
        self.used.insert(cand.clone());
        cand
    }
}

/// One line of a transcript.
#[derive(Debug, Clone)]
pub struct Line {
    pub line: usize,
    /// Where it starts in the file.
    pub byte: u64,
    /// The record, or `None` for a line that is not a JSON object.
    pub record: Option<Value>,
    pub raw: String,
}

impl Line {
    /// The line as a node keeps it: `{"line", "record"|"raw"}`, and
    /// `"transcript"` when it is not the session's own transcript (a Codex
    /// fork imported into the session it forked from).
    pub(super) fn kept(&self, transcript: Option<&str>) -> Value {
        let mut v = match &self.record {
            Some(r) => json!({"line": self.line, "record": r}),
            None => json!({"line": self.line, "raw": self.raw}),
        };
        if let Some(t) = transcript {
            v["transcript"] = t.into();
        }
        v
    }
}

/// One node to write.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    /// `user`, `llm` or `code`.
    pub role: &'static str,
    /// `Some(ROOT)` for a first turn; `None` for a node with a caller.
    pub predecessor: Option<String>,
    pub caller: Option<String>,
    pub name: Option<String>,
    pub input: Value,
    pub output: Value,
    pub created_at: f64,
    pub metadata: Map<String, Value>,
    /// The source lines it carries, in file order.
    pub lines: Vec<Line>,
    /// Still growing: a tool call whose result has not arrived, a Codex
    /// reply whose turn has not completed.
    pub open: bool,
    /// The line (number, offset) of the record that made it (a tool call:
    /// its reply's record), where reading starts again when it is held back.
    pub made_at: (usize, u64),
}

impl Item {
    /// A top-level user node: the start of a turn.
    pub fn starts_turn(&self) -> bool {
        self.role == "user"
    }
}

/// What a mapping learned besides the nodes.
#[derive(Debug, Default)]
pub struct Mapped {
    pub items: Vec<Item>,
    pub cwd: Option<String>,
    /// The first reply's model: the session's agent id.
    pub model: Option<String>,
    /// Records seen twice (resume copies), kept but not made nodes again.
    pub duplicates: usize,
    /// Lines that are not JSON objects (kept raw).
    pub unparsed: usize,
    /// Lines read that no node took: read before any node, or after the
    /// last turn's end record (they go with the next node made).
    pub leftover: Vec<Line>,
    /// How many of `items` are in turns the transcript has closed (a later
    /// turn began, or a turn-end record came): no later line changes them.
    /// The rest, and `leftover`, may still change as the transcript grows.
    pub closed: usize,
    /// The items made first after a turn-end record: each starts a commit,
    /// as a turn does, wherever the transcript was cut.
    pub unit_starts: Vec<usize>,
    /// Every record with a `uuid` (Claude Code) and the node it leads to.
    pub index: Vec<Indexed>,
    /// The mapping's state before a line, at each line where it changed,
    /// and after the last line (Codex): where a later import starts again.
    pub states: Vec<(usize, codex::State)>,
    pub state_end: Option<codex::State>,
}

/// A record with a `uuid`, and the top-level node it leads to (what a
/// later record naming it as parent continues).
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    pub line: usize,
    pub uuid: String,
    pub top: String,
    /// A typed user message's (`parentUuid`, `timestamp`): a second one is
    /// a replay.
    pub typed: Option<(String, String)>,
}

/// The deepest a transcript record is read as JSON: a node holds it four
/// levels down (node, `metadata`, `source_records`, the entry), and a node
/// file is read with serde_json's limit of 128 levels; a deeper record is
/// kept as its text (`raw`), like a line that does not parse.
pub(crate) const MAX_RECORD_DEPTH: usize = 120;

/// How many arrays and objects are nested in `v` (a scalar: 0).
pub(crate) fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(a) => {
                deepest = deepest.max(d);
                stack.extend(a.iter().map(|x| (x, d + 1)));
            }
            Value::Object(o) => {
                deepest = deepest.max(d);
                stack.extend(o.values().map(|x| (x, d + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// A node id from a transcript id (`uuid`, `msg_…`, `toolu_…`, a turn id):
/// the characters node ids allow, at most 128. An id that had to be
/// changed for that (another character, too long) ends in a hash of
/// itself, so that two ids that would change into one (`x/1` and `x_1`)
/// stay two nodes; the ids agents write (hex, `_`, `-`) are kept as they
/// are.
pub(crate) fn node_id(prefix: &str, raw: &str) -> String {
    const MAX: usize = 128;
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut id = format!("{prefix}{clean}");
    if clean != raw || id.len() > MAX {
        let tag = &crate::git::sha1_hex(raw.as_bytes())[..12];
        // ASCII throughout: any byte is a char boundary.
        id.truncate(MAX - tag.len() - 1);
        id.push('-');
        id.push_str(tag);
    }
    id
}

/// The text of a message's content blocks of `kinds` (`text`,
/// `input_text`, `output_text`) joined, or the content itself when it is a
/// string.
pub(crate) fn blocks_text(content: &Value, kinds: &[&str]) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let text: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"].as_str().is_some_and(|t| kinds.contains(&t)))
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

/// Keep a line that makes no node with the current node, or, before the
/// first node, until it comes.
pub(crate) fn attach(items: &mut [Item], cur: Option<usize>, leading: &mut Vec<Line>, l: Line) {
    match cur {
        Some(i) => items[i].lines.push(l),
        None => leading.push(l),
    }
}

/// Keep line `l` with node `i`, after the lines read while no node was
/// current (before the first node, after a turn's end), which are its too.
pub(crate) fn place(items: &mut [Item], i: usize, leading: &mut Vec<Line>, l: Line) {
    let lines = &mut items[i].lines;
    lines.append(leading);
    lines.push(l);
}

/// Unix seconds of an ISO 8601 UTC timestamp (`2026-01-05T10:00:00.123Z`),
/// for the years 0 to 9999 that RFC 3339 names: `None` for any other (a
/// transcript's `+275760-09-13T…` or an eighteen-digit year would overflow
/// the arithmetic below) and for a field out of its range.
pub fn timestamp(s: &str) -> Option<f64> {
    let s = s.strip_suffix('Z').unwrap_or(s);
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, dd) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.splitn(3, ':');
    let (h, mi) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let sec: f64 = t.next()?.parse().ok()?;
    let in_range = (0..=9999).contains(&y)
        && (1..=12).contains(&m)
        && (1..=31).contains(&dd)
        && (0..=24).contains(&h)
        && (0..=59).contains(&mi)
        && (0.0..61.0).contains(&sec);
    if !in_range {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + dd - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3_600 + mi * 60) as f64 + sec)
}

#[cfg(test)]
mod tests {
    use super::{node_id, timestamp};

    #[test]
    fn node_ids_keep_agents_ids_and_never_merge_two() {
        // As agents write them: kept.
        let uuid = "6f1c2d3e-aaaa-bbbb-cccc-0123456789ab";
        assert_eq!(node_id("u-", uuid), format!("u-{uuid}"));
        assert_eq!(node_id("t-", "toolu_01AbC.x"), "t-toolu_01AbC.x");
        // Changed: two that would change into one stay two, every time.
        let pairs = [
            ("x/1".to_string(), "x_1".to_string()),
            ("x/1".to_string(), "x:1".to_string()),
            ("é".to_string(), "_".to_string()),
            ("a".repeat(200), format!("{}b", "a".repeat(199))),
            ("a".repeat(127), "a".repeat(126)),
        ];
        for (a, b) in &pairs {
            let (ia, ib) = (node_id("u-", a), node_id("u-", b));
            assert_ne!(ia, ib, "{a} / {b}");
            assert_eq!(ia, node_id("u-", a));
            for id in [&ia, &ib] {
                assert!(id.len() <= 128, "{id}");
                crate::layout::ids::node_id(id).unwrap();
            }
        }
    }

    #[test]
    fn timestamps_parse_to_unix_seconds() {
        assert_eq!(timestamp("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            timestamp("2026-12-01T13:34:53.250Z"),
            Some(1_796_132_093.25)
        );
        assert_eq!(timestamp("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(timestamp("not a time"), None);
        // Before 1970 is a time (the node keeps it; its commit is dated 1970).
        assert_eq!(timestamp("1969-12-31T23:59:59Z"), Some(-1.0));
        assert_eq!(
            timestamp("9999-12-31T23:59:59Z"),
            Some(crate::git::LAST_COMMIT_SECOND as f64)
        );
        // Out of range: none, never an overflowed number.
        for s in [
            "+275760-09-13T00:00:00.000Z",
            "99999999999999999-01-01T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-32T00:00:00Z",
            "2026-01-01T25:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:61Z",
            "2026-01-01T00:00:NaNZ",
            "2026-01-01T00:00:infZ",
            "2026-01-01T00:00:-1Z",
        ] {
            assert_eq!(timestamp(s), None, "{s}");
        }
    }
}
