//! Session operations shared by several commands: create a session atomically
//! (staged under a temp name, published by rename) and append a node.

mod error;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result, Usage};
use crate::git::SessionRepo;
use crate::layout::history::{Catalog, Entry};
use crate::layout::paths::{ATTACHMENTS, Naming, WORKDIR};
use crate::layout::schema::{self, MAX_FILE_BYTES, Meta, Node, ROOT};
use crate::layout::{SessionDir, StateDir, TEMP_PREFIX, atomic, ids, registry};

pub use error::{AppendError, InitError};

/// Fields of a new session's `meta.json`.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    pub id: String,
    pub agent_id: Option<String>,
    pub title: Option<String>,
    pub source: Option<String>,
    pub work_dir: Option<String>,
    /// Bound project id (`None`: the default project).
    pub project: Option<String>,
}

/// What `create` did.
#[derive(Debug)]
pub enum Created {
    New(SessionDir),
    Existing(SessionDir),
}

/// The agent of a session made without one.
pub const DEFAULT_AGENT: &str = "main";

/// Create session `spec.id` in the default place, with `first` as its first
/// node when given. The repo is built under a temp name and renamed into
/// place, so no reader ever sees a half-made session or an empty shell.
pub fn create(
    state: &StateDir,
    spec: &NewSession,
    first: Option<NewNode>,
    now: f64,
    locks: crate::layout::lock::LockOptions,
) -> Result<Created> {
    ids::session_id(&spec.id)?;
    state.ensure()?;
    // A session that is there but refused (a planted link) stays refused.
    if let Some(sd) = state.find_session_if_any(&spec.id)? {
        return Ok(Created::Existing(sd));
    }
    let target = match &spec.project {
        Some(p) => state.project_session_dir(p, &spec.id),
        None => state.default_session_dir(&spec.id),
    };
    let staging = state.make_parent_checked(&target)?.join(format!(
        "{TEMP_PREFIX}init-{}-{}",
        spec.id,
        ids::generate("")
    ));
    let result = (|| {
        std::fs::create_dir(&staging).io("create", &staging)?;
        let sd = SessionDir::new(staging.clone());
        let mut meta = Meta::default();
        meta.set("id", spec.id.as_str());
        meta.set(
            "agent_id",
            spec.agent_id.as_deref().unwrap_or(DEFAULT_AGENT),
        );
        meta.set("title", spec.title.as_deref().unwrap_or(""));
        meta.set("source", spec.source.as_deref().unwrap_or("cli"));
        meta.set("created_at", now);
        meta.set("updated_at", now);
        meta.set("project_id", spec.project.as_deref().unwrap_or("default"));
        if spec.project.is_some() {
            // When the session joined its project (`relocate` completes a
            // move only in the sessions bound before it).
            meta.set(schema::BOUND_AT, now);
        }
        meta.set("status", "idle");
        if let Some(w) = &spec.work_dir {
            meta.set("work_dir", w.as_str());
        }
        if spec.title.as_deref().is_some_and(|t| !t.is_empty()) {
            meta.set("_user_titled", true);
        }
        meta.set("head_id", Value::Null);
        SessionRepo::init(&staging, now)?;
        std::fs::create_dir(sd.history()).io("create", sd.history())?;
        let node = match first {
            Some(n) => Some(append(&sd, &mut meta, n, now)?),
            None => None,
        };
        atomic::write(&sd.meta(), &meta.to_json())?;
        atomic::sync_dir(&staging)?;
        Ok::<_, Error>((meta, node))
    })();
    let (meta, node) = match result {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    atomic::crash_point("create-before-publish");
    match std::fs::rename(&staging, &target) {
        Ok(()) => {}
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::DirectoryNotEmpty
            ) =>
        {
            // Another process published it first: theirs stands, checked
            // as any session found.
            let _ = std::fs::remove_dir_all(&staging);
            return Ok(Created::Existing(state.find_session(&spec.id)?));
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e).io("publish the session", &target);
        }
    }
    atomic::sync_dir(target.parent().expect("a session dir has a parent"))?;
    if let Some(p) = &spec.project {
        crate::project::add_session(state, p, &spec.id, locks)?;
        registry::set_locations(state, &[(spec.id.clone(), target.clone())], locks)?;
    }
    let preview = node
        .as_ref()
        .filter(|n| n.role == "user")
        .map(|n| schema::preview(&n.text()));
    // A new session is rare: fold the journal and write its row into
    // index.json now, so the index exists from the first session on.
    let row = schema::index_row(&meta, &spec.id, preview.as_deref());
    registry::put_row(state, locks, &spec.id, row)?;
    Ok(Created::New(SessionDir::new(target)))
}

/// A node to append; `None` fields take the defaults of SPEC §5.2.
#[derive(Debug, Clone, Default)]
pub struct NewNode {
    /// `user`, `llm` or `code`.
    pub role: String,
    pub id: Option<String>,
    /// `None`: default; `Some(None)`: explicitly no predecessor.
    pub predecessor: Option<Option<String>>,
    /// An assistant reply that answers the head's turn's user message again
    /// (a sibling of that turn's first reply), instead of continuing the head.
    pub regenerate: bool,
    pub caller: Option<String>,
    pub name: Option<String>,
    pub input: Value,
    pub output: Value,
    pub reads: Vec<String>,
    pub metadata: Map<String, Value>,
    pub created_at: Option<f64>,
    pub extra: Map<String, Value>,
    pub attach: Vec<PathBuf>,
    /// The naming of a session's first node file (later ones keep the
    /// naming the session's files have).
    pub naming: crate::layout::paths::Naming,
    /// Replace the secrets its strings and text attachments hold before
    /// anything is written (the state dir's `redact = on-write`).
    pub redact: bool,
}

/// Append `new` to the session in `sd` (the caller holds the session lock and
/// has read `meta`); updates `meta` in memory (head, `updated_at`) without
/// writing it.
pub fn append(sd: &SessionDir, meta: &mut Meta, new: NewNode, now: f64) -> Result<Node> {
    let mut nodes = append_all(sd, meta, [(new, now)])?;
    Ok(nodes.pop().expect("one node appended"))
}

/// [`append`] each of `nodes` in turn (each one's time beside it), reading
/// the catalog once and writing its cache once for them all (an import's
/// turn). The nodes before one that fails stay written and catalogued, and
/// the error is returned.
pub fn append_all(
    sd: &SessionDir,
    meta: &mut Meta,
    nodes: impl IntoIterator<Item = (NewNode, f64)>,
) -> Result<Vec<Node>> {
    append_all_with(sd, meta, nodes, &mut |_, _| {})
}

/// [`append_all`], with `after` run on meta.json and each node once it is
/// written (an import keeps meta.json as it stands after each).
pub fn append_all_with(
    sd: &SessionDir,
    meta: &mut Meta,
    nodes: impl IntoIterator<Item = (NewNode, f64)>,
    after: &mut dyn FnMut(&mut Meta, &Node),
) -> Result<Vec<Node>> {
    let catalog = Catalog::load(sd)?;
    let mut known = Known {
        catalog: &catalog,
        added: Vec::new(),
        added_ids: HashSet::new(),
    };
    let mut out = Vec::new();
    let written = || -> Result<()> {
        for (new, now) in nodes {
            let node = append_one(sd, &mut known, meta, new, now)?;
            after(meta, &node);
            out.push(node);
        }
        Ok(())
    };
    let result = written();
    let added = known.added;
    if !added.is_empty() {
        crate::layout::history::record(sd, catalog, &added)?;
    }
    result.map(|()| out)
}

/// The most conversational nodes after meta.json's head that an append
/// reads to find the head the files have moved on to.
const HEAD_LAG: usize = 64;

/// The nodes of a session as an [`append_all`] sees them: the catalog it
/// read and the nodes it wrote since, in seq order.
struct Known<'a> {
    catalog: &'a Catalog,
    added: Vec<Entry>,
    /// The ids of `added` (an import adds thousands).
    added_ids: HashSet<String>,
}

impl Known<'_> {
    fn contains(&self, id: &str) -> bool {
        self.added_ids.contains(id) || self.catalog.contains(id)
    }

    fn latest(&self, letters: &str) -> Option<Entry> {
        self.added
            .iter()
            .rev()
            .find(|e| letters.contains(e.letter))
            .cloned()
            .or_else(|| self.catalog.latest(letters))
    }

    fn get(&self, id: &str) -> Option<Entry> {
        match self.added_ids.contains(id) {
            true => self.added.iter().rev().find(|e| e.id == id).cloned(),
            false => self.catalog.get(id),
        }
    }

    /// `head` (when it is a node), moved on along the top-level user and
    /// assistant nodes written after it that go on from it in turn. Only the
    /// conversational files after the head are read: none, mostly.
    fn head_from(&self, history: &Path, head: &str) -> Option<String> {
        let at = self.get(head)?;
        let mut later: Vec<Entry> = self
            .catalog
            .rev_entries()
            .take_while(|e| e.seq > at.seq)
            .collect();
        later.reverse();
        later.extend(self.added.iter().filter(|e| e.seq > at.seq).cloned());
        later.retain(|e| matches!(e.letter, 'u' | 'a' | 'l'));
        // A head far back was put there (a checkout), not left behind by
        // a crash or another writer (a node or a few): it stands.
        if later.len() > HEAD_LAG {
            return Some(at.id);
        }
        let mut cur = at.id;
        for e in &later {
            // A file that is no node (a planted link, a torn write) moves
            // nothing; verify names it.
            let Ok(node) = crate::layout::history::read_node(history, e) else {
                continue;
            };
            if crate::session::goes_on_from(&node) == Some(cur.as_str()) {
                cur = node.id;
            }
        }
        Some(cur)
    }

    /// The latest top-level user or assistant node, by seq (of the last
    /// [`HEAD_LAG`] messages).
    fn latest_message(&self, history: &Path) -> Option<String> {
        self.added
            .iter()
            .rev()
            .cloned()
            .chain(self.catalog.rev_entries())
            .filter(|e| matches!(e.letter, 'u' | 'a' | 'l'))
            .take(HEAD_LAG)
            .filter_map(|e| crate::layout::history::read_node(history, &e).ok())
            .find(Node::is_conversational)
            .map(|n| n.id)
    }

    /// The user message that starts the turn `head` is in: `head`'s
    /// predecessor chain walked back to its first top-level user node.
    fn turn_start(&self, history: &Path, head: &str) -> Result<Option<String>> {
        let mut id = head.to_string();
        // A chain is at most as long as the session; a cycle someone wrote
        // into the files ends the walk.
        for _ in 0..=self.catalog.len() + self.added.len() {
            let Some(entry) = self.get(&id) else {
                return Ok(None);
            };
            let node = crate::layout::history::read_node(history, &entry)?;
            if node.starts_turn() {
                return Ok(Some(node.id));
            }
            match node.predecessor {
                Some(p) if !p.is_empty() && p != ROOT => id = p,
                _ => return Ok(None),
            }
        }
        Ok(None)
    }

    fn has_first(&self, letters: &str, except: &str) -> bool {
        self.added
            .iter()
            .any(|e| letters.contains(e.letter) && e.id != except)
            || self.catalog.first(letters, except).is_some()
    }

    fn max_seq(&self) -> Option<u64> {
        self.added
            .last()
            .map(|e| e.seq)
            .or_else(|| self.catalog.max_seq())
    }

    fn first_entry(&self) -> Option<Entry> {
        self.catalog
            .entries()
            .next()
            .or_else(|| self.added.first().cloned())
    }
}

fn append_one(
    sd: &SessionDir,
    known: &mut Known,
    meta: &mut Meta,
    mut new: NewNode,
    now: f64,
) -> Result<Node> {
    if new.redact {
        crate::secrets::redact_node_values(
            &mut [&mut new.input, &mut new.output],
            &mut [&mut new.metadata, &mut new.extra],
        );
    }
    let history = sd.history();
    let id = new_id(sd, known, &new.role, new.id.take())?;
    let place = Placing {
        known,
        meta,
        history: &history,
    }
    .place(&mut new)?;
    let seq = known.max_seq().map_or(1, |s| s + 1);
    let naming = new.naming;
    let mut node = node(sd, new, id, seq, place, now)?;
    std::fs::create_dir_all(&history).io("create", &history)?;
    let naming = session_keys(known, &history, naming, &mut node);
    let file = NodeFile {
        history: &history,
        seq,
        naming,
    };
    file.write(sd, known, &node)?;
    moved(meta, &node, now);
    Ok(node)
}

/// The id of a new node of `role`: the one `given` (checked: a node id, not
/// a node of the session yet), or a fresh one.
fn new_id(sd: &SessionDir, known: &Known, role: &str, given: Option<String>) -> Result<String> {
    let letter_prefix = match role {
        "user" => "u_",
        "llm" => "a_",
        "code" => "t_",
        other => {
            return Err(Usage::Role {
                role: other.to_string(),
            }
            .into());
        }
    };
    let id = match given {
        Some(id) => {
            ids::node_id(&id)?;
            if known.contains(&id) {
                return Err(AppendError::NodeExists {
                    id,
                    dir: sd.dir.clone(),
                }
                .into());
            }
            id
        }
        None => loop {
            let id = ids::generate(letter_prefix);
            if !known.contains(&id) {
                break id;
            }
        },
    };
    Ok(id)
}

/// What placing a new node reads: the session's nodes as an append sees
/// them, its meta.json and its history directory.
struct Placing<'a> {
    known: &'a Known<'a>,
    meta: &'a Meta,
    history: &'a Path,
}

/// Where a new node goes: its caller (empty or `ROOT` at the top level)
/// and its predecessor.
struct Place {
    caller: String,
    top_level: bool,
    predecessor: Option<String>,
}

impl Placing<'_> {
    /// The caller and predecessor of `new` (taken from it when given),
    /// checked against the session's nodes.
    fn place(&self, new: &mut NewNode) -> Result<Place> {
        let head = self.head(new);
        // A tool call belongs to the turn's latest reply, or to its user
        // message when no reply has come yet.
        let caller = match new.caller.take() {
            Some(c) => c,
            None if new.role == "code" => head.clone().unwrap_or_default(),
            None => String::new(),
        };
        let top_level = caller.is_empty() || caller == ROOT;
        if new.regenerate && (new.role != "llm" || !top_level || new.predecessor.is_some()) {
            return Err(Usage::Regenerate.into());
        }
        let predecessor = self.predecessor(new, head, top_level)?;
        let place = Place {
            caller,
            top_level,
            predecessor,
        };
        place.check(self.known, &new.role)?;
        Ok(place)
    }

    /// The head `new` goes on from, when it needs one.
    fn head(&self, new: &NewNode) -> Option<String> {
        let (known, meta, history) = (self.known, self.meta, self.history);
        // A head a checkout put on an earlier turn (it says so in `view_tip`,
        // which the next append clears) stands where it was put.
        let placed = meta
            .str("view_tip")
            .is_some_and(|v| Some(v) != meta.head_id());
        // Only a node that continues the conversation, or a tool call of no
        // caller given, needs the head.
        let needs_head = match new.role.as_str() {
            "code" => new.caller.is_none(),
            _ => {
                new.predecessor.is_none()
                    && new
                        .caller
                        .as_deref()
                        .is_none_or(|c| c.is_empty() || c == ROOT)
            }
        };
        // The head, as far as it is a node of this session (a head another
        // program left pointing at nothing is no predecessor), moved on along
        // conversational nodes written after it that go on from it: meta.json
        // lags the node files after a crash between the two, or when another
        // writer did not move it. A session with no head but with messages (the
        // Python store sets none before its first commit) goes on from its
        // latest message.
        match meta.head_id().filter(|h| *h != ROOT) {
            _ if !needs_head => None,
            Some(h) if placed => known.get(h).map(|e| e.id),
            h => h
                .and_then(|h| known.head_from(history, h))
                .or_else(|| known.latest_message(history)),
        }
    }

    /// The predecessor of `new` (taken from it when given): the turn's user
    /// message for a regenerated reply, else from the head.
    fn predecessor(
        &self,
        new: &mut NewNode,
        head: Option<String>,
        top_level: bool,
    ) -> Result<Option<String>> {
        let (known, meta, history) = (self.known, self.meta, self.history);
        let predecessor = match new.predecessor.take() {
            Some(p) => p,
            None if new.regenerate => {
                let start = match &head {
                    Some(h) => known.turn_start(history, h)?,
                    None => None,
                };
                Some(start.ok_or(AppendError::NothingToRegenerate)?)
            }
            None if !top_level || new.role == "code" => None,
            // A reply continues the conversation: after the turn's user message,
            // or after the turn's previous reply (a tool call in between hangs
            // off that reply by its caller and leaves the head where it was).
            None if new.role == "llm" => Some(
                head.or_else(|| {
                    known
                        .latest("u")
                        .filter(|e| e.id != ROOT)
                        .map(|e| e.id.clone())
                })
                .unwrap_or_else(|| ROOT.to_string()),
            ),
            None => Some(
                head.or_else(|| meta.head_id().map(str::to_owned))
                    .unwrap_or_else(|| ROOT.into()),
            ),
        };
        Ok(predecessor)
    }
}

impl Place {
    /// Refuse a predecessor or caller that is no node of the session, and
    /// a second top-level user node with no predecessor.
    fn check(&self, known: &Known, role: &str) -> Result<()> {
        let (caller, top_level, predecessor) = (&self.caller, self.top_level, &self.predecessor);
        if let Some(p) = predecessor
            && p != ROOT
            && !known.contains(p)
        {
            return Err(AppendError::NoSuchPredecessor { id: p.to_string() }.into());
        }
        if !top_level && !known.contains(caller) {
            return Err(AppendError::NoSuchCaller {
                id: caller.to_string(),
            }
            .into());
        }
        if role == "user" && top_level && predecessor.is_none() && known.has_first("u", ROOT) {
            return Err(AppendError::SecondRoot.into());
        }
        Ok(())
    }
}

/// The node `new` makes as `id` at `seq`, where `place` puts it, its
/// attachments copied into the session.
fn node(
    sd: &SessionDir,
    new: NewNode,
    id: String,
    seq: u64,
    place: Place,
    now: f64,
) -> Result<Node> {
    let mut metadata = new.metadata;
    if !new.attach.is_empty() {
        let mut list = Vec::new();
        for src in &new.attach {
            list.push(attach(sd, &id, src, new.redact)?);
        }
        metadata.insert("attachments".into(), Value::Array(list));
    }
    let node = Node {
        id,
        created_at: new.created_at.unwrap_or(now),
        seq: seq as i64,
        role: new.role,
        name: new.name.unwrap_or_default(),
        input: new.input,
        output: new.output,
        caller: place.caller,
        predecessor: place.predecessor,
        reads: new.reads,
        metadata,
        extra: new.extra,
        python_keys: false,
    };
    Ok(node)
}

/// The naming of the node's file (the session's files', else `naming`);
/// `node` given the keys its session's files have.
fn session_keys(known: &Known, history: &Path, naming: Naming, node: &mut Node) -> Naming {
    let first = known.first_entry();
    let naming = first
        .as_ref()
        .map_or(naming, |e| crate::layout::paths::Naming::of(&e.file));
    // A session the released Python store started keeps its node keys
    // (`called_by`, the predecessor in `metadata.parent_id`), which is all
    // that store reads.
    let python_keys = naming == crate::layout::paths::Naming::Python
        && first
            .as_ref()
            .and_then(|e| crate::layout::history::read_node(history, e).ok())
            .is_some_and(|n| n.python_keys);
    if python_keys {
        node.python_keys = true;
        if let Some(p) = node.predecessor.as_deref().filter(|p| *p != ROOT) {
            node.metadata
                .insert("parent_id".into(), Value::String(p.to_string()));
        }
    }
    naming
}

/// Where a new node's file goes: the session's history directory, the
/// node's seq and the naming of the session's files.
struct NodeFile<'a> {
    history: &'a Path,
    seq: u64,
    naming: Naming,
}

impl NodeFile<'_> {
    /// Write `node`'s file (a new file, never over another writer's) and
    /// catalogue it among the nodes `known` added.
    fn write(&self, sd: &SessionDir, known: &mut Known, node: &Node) -> Result<()> {
        let (history, seq, naming) = (self.history, self.seq, self.naming);
        let bytes = node.to_json();
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(Usage::NodeTooLarge { bytes: bytes.len() }.into());
        }
        let path = history.join(naming.file_name(seq, &node.role, &node.id));
        if known.added.is_empty() {
            crate::layout::history::invalidate(sd);
        }
        if !atomic::create_new(&path, &bytes)? {
            return Err(AppendError::SeqTaken { path }.into());
        }
        atomic::crash_point("append-after-node");
        known.added_ids.insert(node.id.clone());
        known.added.push(Entry {
            seq,
            letter: node.letter(),
            id: node.id.clone(),
            file: path
                .file_name()
                .expect("a node path has a file name")
                .to_string_lossy()
                .into_owned(),
        });
        Ok(())
    }
}

/// meta.json once `node` is written at `now`: its time, and its head.
pub fn moved(meta: &mut Meta, node: &Node, now: f64) {
    meta.set("updated_at", now);
    if node.is_top_level() && node.predecessor.is_some() {
        meta.set("head_id", node.id.as_str());
        // Browsing is over: the conversation goes on from the new head.
        meta.0.remove("view_tip");
    }
}

/// Copy `src` into `workdir/attachments/`, refusing symlinks, directories and
/// traversal; returns the record stored in the node's metadata.
fn attach(sd: &SessionDir, node_id: &str, src: &Path, redact: bool) -> Result<Value> {
    let md = std::fs::symlink_metadata(src).io("read the attachment", src)?;
    if md.file_type().is_symlink() || !md.is_file() {
        return Err(AppendError::AttachmentNotAFile {
            path: src.to_path_buf(),
        }
        .into());
    }
    if md.len() > MAX_FILE_BYTES {
        return Err(Usage::AttachmentTooLarge {
            path: src.to_path_buf(),
            bytes: md.len(),
        }
        .into());
    }
    let name = src
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.starts_with('.') && !n.contains('/') && !n.contains('\\'))
        .ok_or_else(|| AppendError::AttachmentName {
            path: src.to_path_buf(),
        })?;
    let dir = sd.attachments();
    std::fs::create_dir_all(&dir).io("create", &dir)?;
    let mut dest_name = name.to_string();
    if dir.join(&dest_name).exists() {
        dest_name = format!("{node_id}-{name}");
    }
    let mut data = std::fs::read(src).io("read the attachment", src)?;
    if redact {
        data = crate::secrets::redact_file(data);
    }
    let dest = dir.join(&dest_name);
    if !atomic::create_new(&dest, &data)? {
        return Err(AppendError::AttachmentExists { path: dest }.into());
    }
    Ok(serde_json::json!({
        "name": name,
        "path": format!("{WORKDIR}/{ATTACHMENTS}/{dest_name}"),
        "size": data.len(),
    }))
}

/// The user text that names a session: the first turn's user message.
pub fn first_user_text(sd: &SessionDir, catalog: &Catalog) -> Option<String> {
    catalog
        .entries()
        .filter(|e| e.letter == 'u')
        .take(8)
        .filter_map(|e| crate::layout::history::read_node(&sd.history(), &e).ok())
        .find(|n| n.starts_turn())
        .map(|n| n.text())
}

/// The first-turn title (SPEC §5.3), for a session that has no title and
/// whose title the user never gave (`_user_titled`): the first line of its
/// first turn's user message, 50 chars + `…`. Set in `meta` with
/// `_auto_titled` (and `_title_gen_count` 1, phase 1 of `title --auto`,
/// when unset) and returned; `None` when the session keeps its title or
/// has no user text. `commit-turn` and `backfill` give it alike.
pub fn first_turn_title(sd: &SessionDir, catalog: &Catalog, meta: &mut Meta) -> Option<String> {
    if !meta.title().is_empty() || meta.flag("_user_titled") {
        return None;
    }
    let title = first_user_text(sd, catalog)
        .map(|t| crate::session::title_from_text(&t))
        .filter(|t| !t.is_empty())?;
    meta.set("title", title.as_str());
    meta.set("_auto_titled", true);
    if meta.0.get("_title_gen_count").is_none() {
        meta.set("_title_gen_count", 1);
    }
    Some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::layout::paths::test_session as session;

    fn role(role: &str) -> NewNode {
        NewNode {
            role: role.into(),
            ..Default::default()
        }
    }

    /// Each node of one call sees the ones before it, as one call per node
    /// would, and the catalog's cache is left current.
    #[test]
    fn one_call_for_many_nodes_is_one_call_per_node() {
        let (_dir, sd) = session();
        let mut meta = Meta::default();
        let nodes = [role("user"), role("llm"), role("code"), role("llm")];
        let made = append_all(&sd, &mut meta, nodes.map(|n| (n, 1.0))).unwrap();
        let (user, reply, tool, last) = (&made[0], &made[1], &made[2], &made[3]);
        assert_eq!(made.iter().map(|n| n.seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(user.predecessor.as_deref(), Some(ROOT));
        assert_eq!(reply.predecessor.as_deref(), Some(user.id.as_str()));
        assert_eq!(tool.caller, reply.id, "a tool's caller: the latest reply");
        // A reply after a tool call continues the reply before it.
        assert_eq!(last.predecessor.as_deref(), Some(reply.id.as_str()));
        assert_eq!(meta.head_id(), Some(last.id.as_str()));
        // A second top-level user node needs a predecessor, in the same call too.
        let mut second = role("user");
        second.predecessor = Some(None);
        let err = append_all(&sd, &mut meta, [(role("llm"), 2.0), (second, 2.0)]).unwrap_err();
        assert!(err.to_string().contains("second top-level"), "{err}");
        // The cache holds every node written, the one before the error too,
        // as the directory does, and its stamp is current: the directory's
        // time and the cache's length as they are now.
        use std::os::unix::fs::MetadataExt;
        let stamp = std::fs::read_to_string(sd.catalog_stamp()).unwrap();
        let h = std::fs::metadata(sd.history()).unwrap();
        let len = std::fs::metadata(sd.catalog_file()).unwrap().len();
        let now = format!(
            "{} {len} ",
            h.mtime() as i128 * 1_000_000_000 + h.mtime_nsec() as i128
        );
        assert!(stamp.starts_with(&now), "{stamp} against {now}");
        let cached = Catalog::load(&sd).unwrap();
        let listed = Catalog::read(&sd.history()).unwrap();
        assert_eq!(cached.len(), 5);
        assert_eq!(
            cached.entries().collect::<Vec<_>>(),
            listed.entries().collect::<Vec<_>>()
        );
    }
}
