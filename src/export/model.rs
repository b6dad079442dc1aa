//! What an export shows of a session, read once: its fields, its nodes
//! (masked), its branches (the DAG's tips and the git branches that end at
//! them); and one branch of it as turns ([`Conversation`]), each with its
//! session commit and the agent's commit in the project or why none was
//! made.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Mask;
use crate::error::Result;
use crate::git::SessionRepo;
use crate::git::patch::CommitPatch;
use crate::layout::history::{self, Catalog};
use crate::layout::projects::Project;
use crate::layout::schema::{Meta, Node};
use crate::layout::{SessionDir, StateDir};
pub use crate::project::record::Agent;
use crate::project::record::{Recorded, Repos};
use crate::view;

pub use crate::view::Branch;

/// How many bytes of diff one agent commit shows.
const DIFF_LIMIT: usize = 512 * 1024;

/// How many bytes of a tool call's input, and of its output, a page shows.
pub const TOOL_LIMIT: usize = 64 * 1024;

/// A session read for export.
pub struct Session {
    pub id: String,
    pub dir: PathBuf,
    /// Its title (cut from the text masked whole); its id when it has none.
    pub title: String,
    /// The preview of its latest turn's user message, as the index shows
    /// it (cut from the text masked whole).
    pub preview: String,
    pub status: String,
    pub archived: bool,
    pub source: String,
    pub created_at: f64,
    pub updated_at: f64,
    /// The project it is bound to (none for the default project).
    pub project: Option<Project>,
    /// Every node, masked.
    pub nodes: Vec<Node>,
    /// The turns a transcript has not closed yet (the import's pending
    /// area, less what `history/` holds), one per transcript, masked.
    pub pending: Vec<Vec<Node>>,
    /// What each node's `metadata.project_commit` said, as written.
    agent_records: HashMap<String, Recorded>,
    /// Each node's file in `history/`.
    files: HashMap<String, String>,
    pub branches: Vec<Branch>,
    /// The branch the session is on (its index in `branches`).
    pub current: usize,
    repo: Option<SessionRepo>,
}

impl Session {
    /// Read session `id` from `sd` (the caller holds its lock).
    pub fn read(
        state: &StateDir,
        sd: &SessionDir,
        id: &str,
        mask: &Mask,
        warn: &mut dyn FnMut(String),
    ) -> Result<Session> {
        let meta = Meta::read(&sd.meta())?;
        let catalog = Catalog::load(sd)?;
        let mut nodes = history::read_all(&sd.history(), &catalog, warn);
        let mut pending: Vec<Vec<Node>> = crate::layout::pending::unwritten(sd)
            .values()
            .map(|o| o.nodes())
            .filter(|p| !p.is_empty())
            .collect();
        let files = catalog.entries().map(|e| (e.id, e.file)).collect();
        let project = crate::project::of_session(state, id, &meta)?;
        let repo = match sd.git_dir().is_dir() {
            true => Some(SessionRepo::open(&sd.dir)?),
            false => None,
        };
        let (branches, current) = view::branches(&meta, &nodes, &catalog, repo.as_ref())?;
        // The texts the title and the preview were cut from: masked whole
        // below, then cut again (a cut made first would hide a secret's
        // start from the scanner).
        let title_source = match meta.title() {
            "" => None,
            t => nodes
                .iter()
                .position(|n| n.starts_turn() && crate::session::title_from_text(&n.text()) == t),
        };
        let preview_source = nodes.iter().rposition(Node::starts_turn);
        let mut agent_records = HashMap::new();
        for n in nodes.iter_mut().chain(pending.iter_mut().flatten()) {
            if let Some(r) = Recorded::of(n) {
                agent_records.insert(n.id.clone(), r);
            }
            mask.json(&mut n.input);
            mask.json(&mut n.output);
            let mut m = Value::Object(std::mem::take(&mut n.metadata));
            mask.json(&mut m);
            if let Value::Object(m) = m {
                n.metadata = m;
            }
            n.name = mask.str(&n.name);
        }
        let title = match (meta.title(), title_source) {
            ("", _) => id.to_string(),
            (_, Some(i)) => super::title_of(&nodes[i].text()),
            (t, None) => mask.cut_str(t),
        };
        let preview = preview_source
            .map(|i| super::preview_of(&nodes[i].text()))
            .unwrap_or_default();
        Ok(Session {
            id: id.to_string(),
            dir: sd.dir.clone(),
            title,
            preview,
            status: meta.status().to_string(),
            archived: meta.flag("archived"),
            source: mask.str(meta.str("source").unwrap_or("")),
            created_at: meta.f64("created_at").unwrap_or(0.0),
            updated_at: meta.f64("updated_at").unwrap_or(0.0),
            project,
            nodes,
            pending,
            agent_records,
            files,
            branches,
            current,
            repo,
        })
    }

    /// The branch `name` names (a git branch, or a tip's node id).
    pub fn branch_named(&self, name: &str) -> Result<usize> {
        view::branch_named(&self.id, &self.branches, name)
    }

    /// The file of a branch's page: `index.<ext>` for the current branch,
    /// [`super::branch_file`] for another.
    pub fn page_file(&self, branch: usize, ext: &str) -> String {
        if branch == self.current {
            return format!("index.{ext}");
        }
        let b = &self.branches[branch];
        match b.names.first() {
            Some(name) => super::branch_file(name, ext),
            // `~` is in no git branch name: no clash with one.
            None => super::branch_file(&format!("~{}", b.tip), ext),
        }
    }

    /// The branch the turns in progress continue: the one whose tip their
    /// first message follows, else the current one.
    pub fn pending_branch(&self) -> usize {
        self.pending
            .iter()
            .flatten()
            .find(|n| n.is_top_level())
            .and_then(|n| n.predecessor.as_deref())
            .and_then(|p| self.branches.iter().position(|b| b.tip == p))
            .unwrap_or(self.current)
    }

    /// The attachments to copy for `conv` (every node's, when `None`):
    /// (file name, bytes masked), each file once.
    pub fn attachment_files(
        &self,
        conv: Option<&Conversation>,
        mask: &Mask,
    ) -> Vec<(String, Vec<u8>)> {
        let mut names: Vec<String> = match conv {
            Some(c) => c
                .items()
                .flat_map(|i| i.attachments.iter())
                .filter_map(|a| a.file.clone())
                .collect(),
            None => self
                .nodes
                .iter()
                .chain(self.pending.iter().flatten())
                .flat_map(attachments)
                .filter_map(|a| a.file)
                .collect(),
        };
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter_map(|name| {
                let rel = format!("workdir/attachments/{name}");
                let bytes = super::attachment_bytes(&self.dir, &rel)?;
                Some((name, mask.file(bytes)))
            })
            .collect()
    }

    /// [`Session::attachment_files`] of `conv` as files under `dir`.
    pub fn attachment_copies(
        &self,
        conv: &Conversation,
        dir: &Path,
        mask: &Mask,
    ) -> Vec<(PathBuf, Vec<u8>)> {
        self.attachment_files(Some(conv), mask)
            .into_iter()
            .map(|(name, bytes)| (dir.join(name), bytes))
            .collect()
    }
}

/// What a node is, for a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    User,
    Assistant,
    Tool,
    /// A record of the session (a relocation, a compaction).
    Record,
}

/// A file a node carries.
#[derive(Debug, Clone)]
pub struct Attachment {
    pub name: String,
    /// Its file name in the session's `workdir/attachments/`, when it is
    /// there to link.
    pub file: Option<String>,
    pub size: Option<u64>,
}

/// One node as a page shows it (its strings masked).
#[derive(Debug, Clone)]
pub struct Item {
    pub kind: Kind,
    pub id: String,
    /// How deep in sub-calls (0: the conversation itself).
    pub depth: usize,
    pub time: f64,
    /// The model (assistant), the tool, or the record's name.
    pub name: String,
    /// Its text: the message, the tool's result, the record's words.
    pub text: String,
    /// A tool call's input (pretty JSON, or the string as it is).
    pub input: String,
    /// How many bytes of a tool call's text and input are not shown (each
    /// cut at [`TOOL_LIMIT`]).
    pub text_left_out: usize,
    pub input_left_out: usize,
    pub attachments: Vec<Attachment>,
    /// Where the turn was stopped, in the transcript's words.
    pub stopped: Option<String>,
    /// A compaction's summary of the conversation before it
    /// (`metadata.summary`, as an import keeps it).
    pub summary: Option<String>,
    /// The tools an assistant node called.
    pub calls: Vec<String>,
}

/// One turn of a branch.
#[derive(Debug, Clone)]
pub struct Turn {
    pub number: u64,
    pub time: f64,
    /// The session commit that holds it.
    pub commit: Option<String>,
    pub items: Vec<Item>,
    pub agent: Vec<Agent>,
    /// A turn the transcript has not closed yet (not in `history/`, in no
    /// commit).
    pub in_progress: bool,
}

/// One branch of a session as turns.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// Its index in [`Session::branches`].
    pub branch: usize,
    /// Records before the first turn.
    pub before: Vec<Item>,
    pub turns: Vec<Turn>,
}

impl Conversation {
    /// Branch `branch` of `s`.
    pub fn of(s: &Session, branch: usize, mask: &Mask, patches: &mut Patches) -> Conversation {
        let tip = s.branches.get(branch).map(|b| b.tip.as_str());
        let rows = view::branch_nodes(&s.nodes, tip, false);
        let by_id: HashMap<&str, &Node> = s.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
        let calls = view::callees(&s.nodes);
        let mut before = Vec::new();
        let mut turns: BTreeMap<u64, Turn> = BTreeMap::new();
        for (number, n) in rows {
            let item = item(n, depth(n, &by_id), &calls);
            if number == 0 {
                before.push(item);
                continue;
            }
            let turn = turns.entry(number).or_insert_with(|| Turn {
                number,
                time: n.created_at,
                commit: None,
                items: Vec::new(),
                agent: Vec::new(),
                in_progress: false,
            });
            if let Some(r) = s.agent_records.get(&n.id) {
                turn.agent.push(agent(s, r, mask, patches));
            }
            turn.items.push(item);
        }
        let mut turns: Vec<Turn> = turns.into_values().collect();
        turn_commits(s, &mut turns);
        if branch == s.pending_branch() {
            in_progress(s, &mut turns);
        }
        Conversation {
            branch,
            before,
            turns,
        }
    }

    /// Every item, in order.
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.before
            .iter()
            .chain(self.turns.iter().flat_map(|t| t.items.iter()))
    }
}

/// The turns in progress after `turns`, each as the transcript has it so
/// far (as `show` prints them).
fn in_progress(s: &Session, turns: &mut Vec<Turn>) {
    let mut number = turns.last().map_or(0, |t| t.number);
    for open in &s.pending {
        let Some(first) = open.first() else { continue };
        number += 1;
        let by_id: HashMap<&str, &Node> = s
            .nodes
            .iter()
            .chain(open)
            .map(|n| (n.id.as_str(), n))
            .collect();
        let calls = view::callees(open);
        turns.push(Turn {
            number,
            time: first.created_at,
            commit: None,
            items: open
                .iter()
                .map(|n| item(n, depth(n, &by_id), &calls))
                .collect(),
            agent: Vec::new(),
            in_progress: true,
        });
    }
}

/// How deep `n` is in sub-calls: the callers up to the conversation.
fn depth(n: &Node, by_id: &HashMap<&str, &Node>) -> usize {
    let mut d = 0;
    let mut cur = n;
    while !cur.is_top_level() && d < 16 {
        match by_id.get(cur.caller.as_str()) {
            Some(c) if c.is_top_level() => return d,
            Some(c) => {
                d += 1;
                cur = c;
            }
            None => return d,
        }
    }
    d
}

/// The page's view of node `n`.
fn item(n: &Node, depth: usize, calls: &HashMap<&str, Vec<&Node>>) -> Item {
    let kind = if view::is_record(n) {
        Kind::Record
    } else {
        match n.role.as_str() {
            "user" => Kind::User,
            "llm" => Kind::Assistant,
            _ => Kind::Tool,
        }
    };
    let input = match &n.input {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        v => serde_json::to_string_pretty(v).expect("a value serializes"),
    };
    let mut text = n.text();
    let (mut text_left_out, mut input_left_out) = (0, 0);
    let mut input = input;
    if kind == Kind::Tool {
        text_left_out = cut_tool(&mut text);
        input_left_out = cut_tool(&mut input);
    }
    let called = calls
        .get(n.id.as_str())
        .map(|c| {
            c.iter()
                .filter(|t| t.role == "code")
                .map(|t| t.name.clone())
                .collect()
        })
        .unwrap_or_default();
    Item {
        depth: if n.is_top_level() { 0 } else { depth + 1 },
        kind,
        id: n.id.clone(),
        time: n.created_at,
        name: n.name.clone(),
        text,
        input,
        text_left_out,
        input_left_out,
        attachments: attachments(n),
        stopped: crate::session::stopped(n),
        summary: match kind {
            Kind::Record => n
                .metadata
                .get("summary")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned),
            _ => None,
        },
        calls: called,
    }
}

/// `s` cut at [`TOOL_LIMIT`] bytes (no marker split); how many bytes went.
fn cut_tool(s: &mut String) -> usize {
    if s.len() <= TOOL_LIMIT {
        return 0;
    }
    let kept = super::cut_masked_bytes(s, TOOL_LIMIT).len();
    let gone = s.len() - kept;
    s.truncate(kept);
    gone
}

/// The attachments node `n` records (`metadata.attachments`).
fn attachments(n: &Node) -> Vec<Attachment> {
    n.metadata
        .get("attachments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|a| {
            let path = a.get("path").and_then(Value::as_str).unwrap_or("");
            let file = super::attachment_name(path).map(str::to_owned);
            let name = a
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| file.clone())
                .unwrap_or_else(|| path.to_string());
            Attachment {
                name,
                file,
                size: a.get("size").and_then(Value::as_u64),
            }
        })
        .collect()
}

/// The agent commit a turn's record names, or its skip.
fn agent(s: &Session, r: &Recorded, mask: &Mask, patches: &mut Patches) -> Agent {
    let pid = r.project_id();
    // Named as the registry names it now, when it is the session's.
    let project = match &s.project {
        Some(p) if p.id == pid => mask.str(&p.name),
        _ => mask.str(pid),
    };
    match r {
        Recorded::Commit { sha, paths, .. } => Agent::Commit {
            patch: patches.get(s, pid, sha, mask),
            paths: paths.iter().map(|p| mask.str(p)).collect(),
            sha: sha.clone(),
            project,
        },
        Recorded::Skipped { reason, .. } => Agent::Skipped {
            reason: reason.clone(),
            project,
        },
    }
}

/// Each turn's session commit: the one that holds its last node.
fn turn_commits(s: &Session, turns: &mut [Turn]) {
    let Some(repo) = &s.repo else { return };
    let lasts: Vec<(u64, &str)> = turns
        .iter()
        .map(|t| {
            let last = t
                .items
                .iter()
                .rev()
                .find(|i| i.depth == 0)
                .or(t.items.last());
            let id = last.map(|i| i.id.as_str()).unwrap_or("");
            let seq = s.nodes.iter().find(|n| n.id == id).map_or(0, |n| n.seq);
            (
                seq.max(0) as u64,
                s.files.get(id).map_or("", String::as_str),
            )
        })
        .collect();
    if let Ok(found) = crate::mirror::holders_of(repo, &lasts) {
        for (t, c) in turns.iter_mut().zip(found) {
            t.commit = c.map(|c| c.to_string());
        }
    }
}

/// The agent commits read so far (masked), and the project repositories
/// opened.
#[derive(Default)]
pub struct Patches {
    repos: Repos,
    found: HashMap<(String, String), Option<CommitPatch>>,
}

impl Patches {
    /// Commit `sha` of project `pid` (the session's own project: its
    /// registered directory), masked.
    pub fn get(&mut self, s: &Session, pid: &str, sha: &str, mask: &Mask) -> Option<CommitPatch> {
        let project = s.project.as_ref().filter(|p| p.id == pid)?;
        self.of_project(project, sha, mask)
    }

    /// Commit `sha` in `project`'s repository, masked.
    pub fn of_project(&mut self, project: &Project, sha: &str, mask: &Mask) -> Option<CommitPatch> {
        let key = (project.id.clone(), sha.to_string());
        if let Some(found) = self.found.get(&key) {
            return found.clone();
        }
        let found = self.repos.patch(project, sha, DIFF_LIMIT).map(|mut p| {
            p.message = super::agent_message(mask, &p.message);
            p.author = mask.str(&p.author);
            for f in &mut p.files {
                f.path = mask.str(&f.path);
                f.patch = mask.str(&f.patch);
                if let Some((removed, added)) = &mut f.split {
                    *removed = mask.str(removed);
                    *added = mask.str(added);
                }
            }
            p
        });
        self.found.insert(key, found.clone());
        found
    }

    /// The project's repository, opened once.
    pub fn repo(&mut self, project: &Project) -> Option<&crate::git::project::UserRepo> {
        self.repos.repo(project)
    }
}
