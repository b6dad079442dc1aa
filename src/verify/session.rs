//! One session's files and DAG: its links, meta.json, history/'s names and
//! payloads, seqs and ids, predecessors and callers, attachments, temp files.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::{Checker, Severity};
use crate::error::Error;
use crate::git::Oid;
use crate::layout::history::{self, Catalog};
use crate::layout::schema::{Meta, Node, ROOT};
use crate::layout::{Refusal, SessionDir, TEMP_PREFIX};
use crate::session;

fn letter_fits(letter: char, role: &str) -> bool {
    match role {
        "user" => letter == 'u',
        "llm" => matches!(letter, 'a' | 'l'),
        "code" => matches!(letter, 't' | 'c'),
        "" => letter == 'x',
        other => other.starts_with(letter) || letter == 'x' || letter == 's',
    }
}

/// A node file as found on disk.
pub(super) struct OnDisk {
    pub(super) file: String,
    pub(super) seq: u64,
    /// The parse error, for a file that does not parse.
    pub(super) unparsable: Option<String>,
}

/// A session's node files as read, for the checks of its git mirror.
pub(super) struct NodeFiles {
    /// The nodes that parse, in seq order.
    pub(super) nodes: Vec<Node>,
    pub(super) on_disk: Vec<OnDisk>,
    /// The node files of each seq.
    pub(super) files: HashMap<u64, Vec<String>>,
    /// The nodes in turns (`session::group_pending`).
    pub(super) groups: Vec<session::Group>,
    /// A node file does not parse.
    pub(super) damaged: bool,
}

/// The checks of one session's files and DAG, in order; `None` when what
/// they found leaves nothing more to check.
pub(super) fn check_files(c: &mut Checker, sd: &SessionDir) -> Option<NodeFiles> {
    if !check_links(c, sd) {
        return None;
    }
    let meta = check_meta(c, sd);
    imports_open(c, sd);
    // history/: names, payloads, seqs, ids
    let catalog = read_catalog(c, sd)?;
    check_names(c, sd, &catalog);
    let (nodes, on_disk, files) = read_nodes(c, sd, &catalog);
    for n in &nodes {
        check_attachments(c, sd, n);
    }
    let damaged = check_references(c, sd, meta.as_ref(), &catalog, &nodes, &on_disk);
    let groups = session::group_pending(&nodes, &HashSet::new());
    c.out.stats.dag_turns = groups
        .iter()
        .filter(|g| g.starts_turn || g.regenerates)
        .count() as u64;

    stray_temps(sd, c);

    Some(NodeFiles {
        nodes,
        on_disk,
        files,
        groups,
        damaged,
    })
}

/// `false` when one of the session's own directories is a link out of it,
/// or its repository is sent elsewhere (nothing more is read).
fn check_links(c: &mut Checker, sd: &SessionDir) -> bool {
    // The session's own directories are not links out of it.
    if let Err(e) = sd.check_links() {
        if matches!(e, Error::Layout(Refusal::Redirected { .. })) {
            let help = miette::Diagnostic::help(&e).map(|h| h.to_string());
            c.add(
                "repo_redirected",
                &sd.git_dir(),
                e.to_string(),
                help.unwrap_or_default(),
                false,
            );
            return false;
        }
        let special = matches!(e, Error::Layout(Refusal::SpecialFile { .. }));
        let fix = match special {
            true => {
                "replace it with the regular file it should be (no special file in a session is opened)"
            }
            false => {
                "replace the link with the directory or file it should be (nothing is read or written through it)"
            }
        };
        c.add("layout_link", &sd.dir, e.to_string(), fix.into(), false);
        return false;
    }
    true
}

/// meta.json: parses and names this session.
fn check_meta(c: &mut Checker, sd: &SessionDir) -> Option<Meta> {
    let id = c.id;
    match Meta::read(&sd.meta()) {
        Ok(m) => {
            if let Some(other) = m.str("id").filter(|other| *other != id) {
                c.add(
                    "meta_id_mismatch",
                    &sd.meta(),
                    format!("meta.json says it is session `{other}`"),
                    "this repository belongs to another session; put it back where it belongs"
                        .into(),
                    false,
                );
            }
            c.turn_open = m.status() == "running";
            Some(m)
        }
        Err(e) => {
            let kind = if sd.meta().exists() {
                "meta_unparsable"
            } else {
                "meta_missing"
            };
            // Fixable once the repository is known to hold a copy (below).
            c.add(kind, &sd.meta(), e.to_string(), String::new(), false);
            None
        }
    }
}

/// An import's turn its transcript has not closed: a note.
fn imports_open(c: &mut Checker, sd: &SessionDir) {
    for (key, open) in crate::layout::pending::unwritten(sd) {
        c.push(
            "import_turn_open",
            Severity::Note,
            &sd.import_pending(),
            format!(
                "{} node(s) of transcript `{key}` wait for the transcript to close their turn ({})",
                open.nodes.len(),
                crate::out::in_one_line(&open.transcript)
            ),
            "nothing to do while the agent works; once the session is over, `git-session import --finish` commits them".into(),
            false,
        );
    }
}

/// history/'s catalog; `None` when it cannot be read (nothing more is
/// checked).
fn read_catalog(c: &mut Checker, sd: &SessionDir) -> Option<Catalog> {
    match Catalog::read(&sd.history()) {
        Ok(cat) => Some(cat),
        Err(e) => {
            c.add(
                "history_unreadable",
                &sd.history(),
                e.to_string(),
                "check the permissions of history/".into(),
                false,
            );
            None
        }
    }
}

/// history/'s names: the catalog cache, nodes under both namings,
/// duplicate ids, foreign files, mixed namings.
fn check_names(c: &mut Checker, sd: &SessionDir, catalog: &Catalog) {
    if let Some((missed, gone)) = history::stale_cache(sd, catalog) {
        c.out.catalog_stale = true;
        c.add(
            "catalog_stale",
            &sd.catalog_file(),
            format!(
                "the catalog of history/ misses {missed} node file(s) and names {gone} gone: another program wrote history/ in the instant of an append"
            ),
            format!("git-session verify --fix {}", c.id),
            true,
        );
    }
    // One node under both namings, the same bytes: a rename cut short.
    {
        let names: HashSet<String> = catalog.entries().map(|e| e.file).collect();
        for e in catalog.entries() {
            if let Some(other) = crate::layout::paths::Naming::other_name(&e.file)
                && names.contains(other.as_str())
                && crate::layout::atomic::read(sd.history().join(&e.file)).ok()
                    == crate::layout::atomic::read(sd.history().join(&other)).ok()
            {
                c.twins.insert(e.file.clone());
            }
        }
    }
    let twin_ids: HashSet<String> = c
        .twins
        .iter()
        .filter_map(|f| {
            crate::layout::paths::parse_node_file_name(f).map(|(_, _, id)| id.to_string())
        })
        .collect();
    for dup in catalog
        .duplicate_ids
        .iter()
        .filter(|d| !twin_ids.contains(d.as_str()))
    {
        c.add(
            "duplicate_id",
            &sd.history(),
            format!("more than one node file claims id `{dup}`"),
            "move one of the files aside; node ids are unique".into(),
            false,
        );
    }
    for f in &catalog.foreign {
        let p = sd.history().join(f);
        if f.starts_with(TEMP_PREFIX) {
            continue;
        }
        c.add(
            "foreign_file",
            &p,
            "a file in history/ that is not named like a node".into(),
            "move it out of history/".into(),
            false,
        );
    }
    let namings: BTreeSet<String> = catalog
        .entries()
        .filter_map(|e| crate::layout::paths::Naming::shown_by(&e.file))
        .map(|n| format!("{n:?}"))
        .collect();
    if namings.len() > 1 {
        c.add(
            "mixed_node_names",
            &sd.history(),
            if c.twins.is_empty() {
                "node files are named both as the layout (`000012-a-…`) and as the Python store (`0012-l-…`) names them; the Python store orders and rewrites them by name".into()
            } else {
                format!(
                    "a rename of the node files to the Python store's naming was cut short: {} node(s) are under both names",
                    c.twins.len() / 2
                )
            },
            format!("git-session verify --fix {} (renames them all as the Python store names them, one commit)", c.id),
            true,
        );
        c.out.mixed_names = true;
    }
}

/// Read every node file: the nodes that parse (in seq order), each file as
/// found, and the files of each seq (names against payloads, seqs unique).
fn read_nodes(
    c: &mut Checker,
    sd: &SessionDir,
    catalog: &Catalog,
) -> (Vec<Node>, Vec<OnDisk>, HashMap<u64, Vec<String>>) {
    let mut nodes: Vec<Node> = Vec::new();
    let mut on_disk: Vec<OnDisk> = Vec::new();
    let mut files: HashMap<u64, Vec<String>> = HashMap::new();
    for e in catalog.entries() {
        let path = sd.history().join(&e.file);
        files.entry(e.seq).or_default().push(e.file.clone());
        let bytes = match crate::layout::schema::read_bounded(&path) {
            Ok(b) => b,
            Err(err) => {
                let kind = std::fs::symlink_metadata(&path).map(|m| m.file_type());
                let fix = match kind {
                    Ok(t) if t.is_symlink() => {
                        "replace the link with the node file itself (no link in a session is followed), or move it out of history/"
                    }
                    Ok(t) if !t.is_file() => "move it out of history/: a node is a regular file",
                    _ => "check the file's permissions",
                };
                c.add("node_unreadable", &path, err.to_string(), fix.into(), false);
                continue;
            }
        };
        let mut unparsable = None;
        match Node::parse(&bytes) {
            Err(r) => unparsable = Some(r),
            Ok(n) => {
                if n.id != e.id
                    || n.seq < 0
                    || n.seq as u64 != e.seq
                    || !letter_fits(e.letter, &n.role)
                {
                    c.add(
                        "name_mismatch",
                        &path,
                        format!("the name says seq {} `{}` id `{}`, the node says seq {} role `{}` id `{}`", e.seq, e.letter, e.id, n.seq, n.role, n.id),
                        "rename the file to `{seq:06}-{letter}-{id}.json` of its payload".into(),
                        false,
                    );
                }
                nodes.push(n);
            }
        }
        on_disk.push(OnDisk {
            file: e.file.clone(),
            seq: e.seq,
            unparsable,
        });
    }
    for (seq, fs) in &files {
        if fs.len() > 1 && !(fs.len() == 2 && fs.iter().all(|f| c.twins.contains(f))) {
            c.add(
                "duplicate_seq",
                &sd.history(),
                format!("seq {seq} is used by {}", fs.join(", ")),
                "renumber one of the nodes (seqs are unique)".into(),
                false,
            );
        }
    }
    nodes.sort_by_key(|n| n.seq);
    c.out.stats.max_seq = catalog.max_seq();
    (nodes, on_disk, files)
}

/// DAG references: meta.json's head, predecessors, callers; whether a
/// node file does not parse.
fn check_references(
    c: &mut Checker,
    sd: &SessionDir,
    meta: Option<&Meta>,
    catalog: &Catalog,
    nodes: &[Node],
    on_disk: &[OnDisk],
) -> bool {
    let id = c.id;
    // DAG references (a node file that does not parse still names its id:
    // its successors are not reported for it)
    let mut ids: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let names: Vec<crate::layout::history::Entry> = catalog.entries().collect();
    ids.extend(names.iter().map(|e| e.id.as_str()));
    let damaged = on_disk.iter().any(|d| d.unparsable.is_some());
    if let Some(m) = meta
        && let Some(h) = m.head_id()
        && !ids.contains(h)
    {
        c.add(
            "dangling_head",
            &sd.meta(),
            format!("head_id `{h}` is not a node"),
            format!("git-session checkout {id} <node id>"),
            false,
        );
    }
    for n in nodes {
        if let Some(p) = n.predecessor.as_deref()
            && p != ROOT
            && !p.is_empty()
            && !ids.contains(p)
        {
            c.add(
                "dangling_predecessor",
                &sd.history(),
                format!("node `{}`: predecessor `{p}` is not a node", n.id),
                "restore the missing node from git or another copy".into(),
                false,
            );
        }
        if !n.is_top_level() && !ids.contains(n.caller.as_str()) {
            c.add(
                "dangling_caller",
                &sd.history(),
                format!("node `{}`: caller `{}` is not a node", n.id, n.caller),
                "restore the missing node from git or another copy".into(),
                false,
            );
        }
    }
    damaged
}

/// The attachments a node too big for one file names (`import::spill`):
/// each is in the session, of the size and blob id the node says.
fn check_attachments(c: &mut Checker, sd: &SessionDir, n: &Node) {
    for a in n
        .metadata
        .get("attachments")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("holds").is_some())
    {
        let (Some(path), Some(blob), Some(size)) =
            (a["path"].as_str(), a["blob"].as_str(), a["size"].as_u64())
        else {
            continue;
        };
        let expected = format!("workdir/attachments/{blob}.txt");
        let file = sd.dir.join(&expected);
        let why = if path != expected {
            Some(format!("names `{path}`, not `{expected}`"))
        } else {
            match std::fs::symlink_metadata(&file) {
                Err(_) => Some(format!("names `{path}` ({size} bytes), which is missing")),
                Ok(m) if !m.is_file() => {
                    Some(format!("names `{path}`, which is not a regular file"))
                }
                Ok(m) if m.len() != size => Some(format!(
                    "names `{path}` of {size} bytes; it holds {}",
                    m.len()
                )),
                Ok(_) => match std::fs::read(&file) {
                    Ok(b) if crate::git::blob_id(&b) == blob => None,
                    _ => Some(format!("names `{path}`, whose bytes are not blob {blob}")),
                },
            }
        };
        if let Some(why) = why {
            c.add(
                "attachment_missing",
                &file,
                format!("node `{}` {why}", n.id),
                format!(
                    "restore it from git: `git -C {} checkout -- {expected}`",
                    sd.dir.display()
                ),
                false,
            );
        }
    }
}

/// Uncommitted node files that do not parse: nothing can commit them.
pub(super) fn unparsable_uncommitted(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    on_disk: &[OnDisk],
    committed: &HashMap<String, Oid>,
) {
    for d in on_disk {
        if let Some(r) = &d.unparsable
            && !committed.contains_key(&d.file)
        {
            c.add(
                "node_unparsable",
                &sd.history().join(&d.file),
                format!("the node does not parse (and git has no copy): {r}"),
                "repair the file or move it aside; nothing commits a node that does not parse"
                    .into(),
                false,
            );
            c.out.commit_blocked = true;
        }
    }
}

fn stray_temps(sd: &SessionDir, c: &mut Checker<'_>) {
    let mut dirs = vec![sd.dir.clone(), sd.history(), sd.git_dir(), sd.private_dir()];
    let workdir = sd.dir.join(crate::layout::paths::WORKDIR);
    if let Ok(rd) = std::fs::read_dir(&workdir) {
        dirs.push(workdir);
        dirs.extend(
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path()),
        );
    }
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                c.out.stray_temps.push(e.path());
            }
        }
    }
    let n = c.out.stray_temps.len();
    if n > 0 {
        let first = c.out.stray_temps[0].clone();
        c.add(
            "stray_temp_file",
            &first,
            format!("{n} temporary file(s) left by an interrupted command"),
            format!("git-session verify --fix {}", c.id),
            true,
        );
    }
}
