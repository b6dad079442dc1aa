//! What an import keeps in the session between runs, outside `history/`:
//! how far each transcript was read (`import.lines`, [`Cursors`]) and
//! where a run starts again ([`resume`]); each Claude Code record's uuid
//! and the node it leads to (`import.uuids`, [`Seed`]); meta.json before
//! an import that was cut short (`import.base`, [`saved_base`]); and those
//! files' node ids after `fetch --take` renamed nodes ([`ids_renamed`]).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::plan::Target;
use super::read::open_transcript;
use super::{Agent, Indexed};
use crate::error::{IoContext, Result};
use crate::layout::schema::Meta;
use crate::layout::{SessionDir, StateDir, atomic};

/// What the records before the lines being mapped tell of them: an import
/// of a grown transcript maps only its new lines. Borrowed from the text of
/// the session's `import.uuids` (one `line\tuuid\ttop[\tparent\ttime]` row
/// per record, appended by each import): no string is copied.
#[derive(Debug, Default)]
pub struct Seed<'a> {
    /// uuid → the top-level node its record leads to.
    pub tops: std::collections::HashMap<&'a str, &'a str>,
    /// (`parentUuid`, `timestamp`) of typed user messages.
    pub typed: HashSet<(&'a str, &'a str)>,
}

impl<'a> Seed<'a> {
    /// The bytes of `import.uuids`, if the session has one.
    pub(super) fn load(sd: &SessionDir) -> Option<Vec<u8>> {
        atomic::read(sd.import_uuids()).ok()
    }

    /// The rows of `text` before line `before` (rows at or after it, from
    /// an import killed before its cursor moved, are not believed) of the
    /// uuids `wanted` (the records and parents of the lines to map): the
    /// rest cannot matter to them.
    ///
    /// Every row of the session is looked at, so this runs on every hook
    /// call: a row is cut at its tabs and its uuid looked up before
    /// anything else is parsed, with a fast hash (foldhash, seeded per
    /// process like std's: the uuids come from the transcript).
    pub(super) fn parse(text: &'a [u8], before: usize, wanted: &Wanted) -> Seed<'a> {
        use bstr::ByteSlice;
        let mut seed = Seed::default();
        for row in text.lines() {
            let mut f = row.splitn(6, |&b| b == b'\t');
            let (Some(line), Some(uuid), Some(top)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let typed = (f.next(), f.next());
            let parent_wanted = typed.0.is_some_and(|p| wanted.contains(p));
            if !parent_wanted && !wanted.contains(uuid) {
                continue;
            }
            let str = |b: &'a [u8]| std::str::from_utf8(b).ok();
            let believed = str(line)
                .and_then(|l| l.parse::<usize>().ok())
                .is_some_and(|l| l < before);
            let (Some(uuid), Some(top), true) = (str(uuid), str(top), believed) else {
                continue;
            };
            seed.tops.insert(uuid, top);
            if let (Some(p), Some(t)) = (typed.0.and_then(str), typed.1.and_then(str)) {
                seed.typed.insert((p, t));
            }
        }
        seed
    }
}

/// The uuids [`Seed::parse`] looks for.
pub(super) type Wanted<'a> = HashSet<&'a [u8], foldhash::fast::RandomState>;

impl Seed<'_> {
    /// Append the rows of `index` before line `upto` (from `from` on).
    pub(super) fn append(
        sd: &SessionDir,
        index: &[Indexed],
        from: usize,
        upto: usize,
    ) -> Result<()> {
        use std::io::Write;
        let mut text = String::new();
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        for i in index.iter().filter(|i| i.line >= from && i.line < upto) {
            text.push_str(&format!(
                "{}\t{}\t{}",
                i.line,
                clean(&i.uuid),
                clean(&i.top)
            ));
            if let Some((p, t)) = &i.typed {
                text.push_str(&format!("\t{}\t{}", clean(p), clean(t)));
            }
            text.push('\n');
        }
        if text.is_empty() {
            return Ok(());
        }
        let path = sd.import_uuids();
        let mut f = atomic::no_follow(std::fs::OpenOptions::new().append(true).create(true))
            .open(&path)
            .io("open", &path)?;
        f.write_all(text.as_bytes()).io("write", &path)
    }
}

/// Where an incremental import of a Claude Code transcript starts: the
/// session's first line no node holds, when the file still has the bytes
/// the cursor was taken on (a newline just before it); else the start.
pub(super) fn window(path: &Path, cursor: Option<&Cursor>) -> (u64, usize) {
    use std::io::{Read as _, Seek, SeekFrom};
    let Some((bytes, lines)) = cursor.and_then(|c| Some((c.bytes?, c.lines))) else {
        return (0, 0);
    };
    if bytes == 0 {
        return (0, 0);
    }
    let mut b = [0u8];
    let aligned = open_transcript(path)
        .and_then(|mut f| {
            f.seek(SeekFrom::Start(bytes - 1))?;
            f.read_exact(&mut b)
        })
        .is_ok()
        && b[0] == b'\n';
    if aligned { (bytes, lines) } else { (0, 0) }
}

/// Where a run starts reading its transcript, and what it knows of the
/// lines before.
pub(super) struct Resume {
    /// The session's `import.uuids` (Claude Code), read from the cursor on.
    pub rows: Vec<u8>,
    /// The mapping's state at the cursor (Codex).
    pub state: Option<Value>,
    /// The offset and line number reading starts at.
    pub from: (u64, usize),
}

/// Where a run reads `target`'s transcript from.
pub(super) fn resume(target: &Target) -> Resume {
    // A transcript imported before is read from its cursor on, what came
    // before known from the uuid rows (Claude Code) or the state kept in
    // the cursor (Codex).
    let mut rows = Vec::new();
    let mut state: Option<Value> = None;
    let mut from = (0, 0);
    if target.probed.is_some()
        && let Some(sd) = &target.existing
    {
        let cursors = Cursors::read(sd, &target.session);
        let cursor = cursors.0.get(&target.own);
        let at = window(target.path, cursor);
        match target.agent {
            Agent::ClaudeCode => {
                if let Some(r) = Seed::load(sd).filter(|_| at.1 > 0) {
                    rows = r;
                    from = at;
                }
            }
            Agent::Codex => {
                if let Some(st) = cursor.and_then(|c| c.state.clone()).filter(|_| at.1 > 0) {
                    state = Some(st);
                    from = at;
                }
            }
        }
    }
    Resume { rows, state, from }
}

/// How far each transcript of a session was read: the session's private
/// `import.lines`, a JSON object from transcript key (the session id for
/// its own transcript) to `{"lines": <lines read>, "path": <file>}`. A
/// bare number (the first format) is the lines of the session's own.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Cursors(pub(super) BTreeMap<String, Cursor>);

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Cursor {
    /// The first line no node holds (every line before it is in the
    /// session); `bytes`, where it starts.
    pub(super) lines: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) path: Option<String>,
    /// The mapping's state at `lines` (Codex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) state: Option<Value>,
}

impl Cursors {
    pub(super) fn read(sd: &SessionDir, session: &str) -> Cursors {
        let Ok(bytes) = atomic::read(sd.import_cursor()) else {
            return Cursors::default();
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(lines) = text.trim().parse::<usize>() {
            let mut c = Cursors::default();
            c.0.insert(
                session.to_string(),
                Cursor {
                    lines,
                    ..Default::default()
                },
            );
            return c;
        }
        serde_json::from_str(&text).unwrap_or_default()
    }

    pub(super) fn write(&self, sd: &SessionDir) -> Result<()> {
        let mut text = serde_json::to_string(self).expect("cursors serialise");
        text.push('\n');
        atomic::write(&sd.import_cursor(), text.as_bytes())
    }
}

/// Node ids a session's nodes no longer have (`fetch --take` kept a node
/// under an id of its own: old → new): what the importer keeps of its
/// transcripts' records (the node each record leads to in `import.uuids`,
/// the nodes of the open turns in `import.pending`, the last top-level node
/// of a Codex cursor) names the new ids, so the turns the transcript adds
/// later go on from the right node.
pub fn ids_renamed(sd: &SessionDir, renamed: &BTreeMap<String, String>) -> Result<()> {
    if renamed.is_empty() {
        return Ok(());
    }
    let to = |id: &str| renamed.get(id).cloned();
    if let Some(bytes) = atomic::read_if_present(&sd.import_uuids())? {
        let text = String::from_utf8_lossy(&bytes);
        let mut out = String::with_capacity(text.len());
        let mut changed = false;
        for row in text.split_inclusive('\n') {
            let mut f: Vec<&str> = row.splitn(4, '\t').collect();
            let (body, nl) = match f.last().and_then(|l| l.strip_suffix('\n')) {
                Some(b) => (b, "\n"),
                None => (*f.last().unwrap_or(&""), ""),
            };
            let last = f.len() - 1;
            f[last] = body;
            let top = (f.len() >= 3).then(|| to(f[2])).flatten();
            if let Some(new) = &top {
                f[2] = new;
                changed = true;
            }
            out.push_str(&f.join("\t"));
            out.push_str(nl);
        }
        if changed {
            atomic::write(&sd.import_uuids(), out.as_bytes())?;
        }
    }
    let mut cursors = Cursors::read(sd, "");
    let mut moved = false;
    for c in cursors.0.values_mut() {
        if let Some(Value::Object(st)) = &mut c.state
            && let Some(new) = st.get("last_top").and_then(Value::as_str).and_then(&to)
        {
            st.insert("last_top".into(), new.into());
            moved = true;
        }
    }
    if moved {
        cursors.write(sd)?;
    }
    if let Some(bytes) = atomic::read_if_present(&sd.import_pending())?
        && let Ok(mut v) = serde_json::from_slice::<Value>(&bytes)
    {
        // Only the nodes' own fields: their content and the transcript's
        // records are kept as they are.
        let rename = |s: &mut String, changed: &mut bool| {
            if let Some(new) = to(s) {
                *s = new;
                *changed = true;
            }
        };
        let walk = |v: &mut Value, changed: &mut bool| {
            let Value::Object(opens) = v else { return };
            for open in opens.values_mut() {
                let Some(Value::Array(nodes)) = open.get_mut("nodes") else {
                    continue;
                };
                for node in nodes.iter_mut().filter_map(Value::as_object_mut) {
                    for key in ["id", "predecessor", "caller", "called_by"] {
                        if let Some(Value::String(s)) = node.get_mut(key) {
                            rename(s, changed);
                        }
                    }
                    if let Some(Value::Array(reads)) = node.get_mut("reads") {
                        for r in reads.iter_mut() {
                            if let Value::String(s) = r {
                                rename(s, changed);
                            }
                        }
                    }
                    if let Some(Value::String(s)) = node
                        .get_mut("metadata")
                        .and_then(Value::as_object_mut)
                        .and_then(|m| m.get_mut("parent_id"))
                    {
                        rename(s, changed);
                    }
                }
            }
        };
        let mut changed = false;
        walk(&mut v, &mut changed);
        if changed {
            let mut out = serde_json::to_vec(&v).expect("json");
            out.push(b'\n');
            atomic::write(&sd.import_pending(), &out)?;
        }
    }
    Ok(())
}

/// The transcript file a session last read for `key`, if it still exists.
pub fn known_path(state: &StateDir, session: &str, key: &str) -> Option<PathBuf> {
    let sd = state.find_session(session).ok()?;
    let path = PathBuf::from(Cursors::read(&sd, session).0.get(key)?.path.clone()?);
    path.is_file().then_some(path)
}

/// meta.json before an import of transcript `key` that was cut short
/// (killed after it wrote nodes, before it made their commits), if one
/// was: a rerun goes on from it over the nodes that one wrote, so that the
/// commits are those of an import not cut short. (Written in place without
/// a flush: a torn or missing one is no base, and the rerun goes on from
/// meta.json as it is.)
pub(super) fn saved_base(sd: &SessionDir, key: &str) -> Option<(Meta, bool)> {
    let bytes = atomic::read_if_present(&sd.import_base()).ok()??;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    if v["transcript"] != key {
        return None;
    }
    let meta = Meta::parse(v["meta"].to_string().as_bytes()).ok()?;
    Some((meta, v["finish"] == true))
}

/// Keep `meta` (and whether the import ends the session) as
/// [`saved_base`] gives it back, or (`None`) say no import is in flight.
pub(super) fn save_base(sd: &SessionDir, key: &str, meta: Option<(&Meta, bool)>) -> Result<()> {
    let bytes = match meta {
        Some((m, finish)) => {
            let meta: Value = serde_json::from_slice(&m.to_json()).expect("meta.json is JSON");
            serde_json::to_vec(&json!({"transcript": key, "meta": meta, "finish": finish}))
                .expect("serialises")
        }
        None => Vec::new(),
    };
    let path = sd.import_base();
    if bytes.is_empty() && std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    atomic::overwrite(&path, &bytes).io("write", &path)
}

/// `meta` with what an import's nodes move (its times, head, agent and,
/// unless a person gave it, its title) as `base` had them.
pub(super) fn moved_back(mut meta: Meta, base: &Meta) -> Meta {
    let mut keys = vec!["updated_at", "head_id", "view_tip", "agent_id"];
    if !meta.flag("_user_titled") {
        keys.extend(["title", "_auto_titled"]);
    }
    for k in keys {
        match base.0.get(k) {
            Some(v) => {
                meta.0.insert(k.to_string(), v.clone());
            }
            None => {
                meta.0.remove(k);
            }
        }
    }
    meta
}
