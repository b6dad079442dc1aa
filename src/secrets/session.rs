//! Secrets in a session: in the objects a push carries, in everything a
//! session repository holds, and the fingerprints the user let through.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use gix::ObjectId;
use gix::objs::Kind;
use serde_json::Value;

use crate::error::{Error, IoContext, Result};
use crate::git::SessionRepo;
use crate::layout::paths::{SessionDir, StateDir};

/// One secret in a session, told without its value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The file in the session (`history/000003-u-n3.json`, `meta.json`,
    /// `workdir/attachments/env.txt`).
    pub path: String,
    /// The node's id, for a node file.
    pub node: Option<String>,
    /// Where in the file: a JSON field (`output`, `input.command`), or
    /// empty for a file read as text.
    pub field: String,
    pub rule: String,
    pub masked: String,
    pub fingerprint: String,
}

/// The secrets of one file of a session, read as what its path says it is:
/// JSON for nodes, `meta.json` and context files, text for the rest
/// (binary files are not looked at).
pub fn scan_file(path: &str, data: &[u8]) -> Vec<Finding> {
    scan_file_values(path, data)
        .into_iter()
        .map(|(f, _)| f)
        .collect()
}

/// [`scan_file`], each finding with the secret's value (for a redaction).
pub(crate) fn scan_file_values(path: &str, data: &[u8]) -> Vec<(Finding, String)> {
    let json = path.ends_with(".json")
        && (path.starts_with("history/") || path == "meta.json" || path.starts_with("context/"));
    let mut out = Vec::new();
    if json && let Ok(mut v) = serde_json::from_slice::<Value>(data) {
        let node = path
            .starts_with("history/")
            .then(|| v.get("id").and_then(Value::as_str).map(str::to_string))
            .flatten();
        for f in super::scan_json(&mut v) {
            out.push((
                Finding {
                    path: path.to_string(),
                    node: node.clone(),
                    field: f.field,
                    rule: f.hit.rule.to_string(),
                    masked: f.hit.masked,
                    fingerprint: f.hit.fingerprint,
                },
                f.hit.value,
            ));
        }
        return out;
    }
    if super::is_binary(data) {
        return out;
    }
    for hit in super::scan_text(data) {
        out.push((
            Finding {
                path: path.to_string(),
                node: None,
                field: String::new(),
                rule: hit.rule.to_string(),
                masked: hit.masked,
                fingerprint: hit.fingerprint,
            },
            hit.value,
        ));
    }
    out
}

/// The secrets in `objects` (what a push sends: commits, trees and blobs
/// read children first): each blob is named by the path a tree among them
/// gives it. A blob no tree among them names (a tree the other side has
/// holds it too) is named by its id.
pub fn scan_objects(objects: &[(Kind, ObjectId, Vec<u8>)]) -> Vec<Finding> {
    let mut out: Vec<Finding> = scan_objects_values(objects)
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// [`scan_objects`], each finding with its value.
fn scan_objects_values(objects: &[(Kind, ObjectId, Vec<u8>)]) -> Vec<(Finding, String)> {
    let mut trees: HashMap<ObjectId, Vec<(String, bool, ObjectId)>> = HashMap::new();
    let mut roots = Vec::new();
    let mut messages = Vec::new();
    for (kind, id, data) in objects {
        match kind {
            Kind::Tree => {
                if let Ok(t) = gix::objs::TreeRef::from_bytes(data, gix::hash::Kind::Sha1) {
                    trees.insert(
                        *id,
                        t.entries
                            .iter()
                            .map(|e| (e.filename.to_string(), e.mode.is_tree(), e.oid.to_owned()))
                            .collect(),
                    );
                }
            }
            Kind::Commit => {
                if let Ok(c) = gix::objs::CommitRef::from_bytes(data, gix::hash::Kind::Sha1) {
                    roots.push(c.tree());
                    messages.push((*id, c.message.to_vec()));
                }
            }
            _ => {}
        }
    }
    let mut named: HashMap<ObjectId, String> = HashMap::new();
    let mut walked: HashSet<ObjectId> = HashSet::new();
    let mut stack: Vec<(ObjectId, String)> =
        roots.into_iter().map(|t| (t, String::new())).collect();
    while let Some((tree, prefix)) = stack.pop() {
        if !walked.insert(tree) {
            continue;
        }
        let Some(entries) = trees.get(&tree) else {
            continue;
        };
        for (name, is_tree, oid) in entries {
            let path = format!("{prefix}{name}");
            if *is_tree {
                stack.push((*oid, format!("{path}/")));
            } else {
                named.entry(*oid).or_insert(path);
            }
        }
    }
    let mut out = Vec::new();
    for (kind, id, data) in objects {
        if *kind == Kind::Blob {
            let path = named.get(id).cloned().unwrap_or_else(|| id.to_string());
            out.extend(scan_file_values(&path, data));
        }
    }
    // A commit's message quotes the turn's first words.
    for (id, message) in messages {
        out.extend(scan_file_values(&format!("commit {id}"), &message));
    }
    out
}

/// Every secret a session holds: in each blob its branches reach, and in
/// its files not committed yet (nodes, `meta.json`, attachments). Files
/// that are links or not regular are not read.
pub fn scan_session(sd: &SessionDir) -> Result<Vec<Finding>> {
    let mut out: Vec<Finding> = scan_session_values(sd)?
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// [`scan_session`], each finding with its value.
pub(crate) fn scan_session_values(sd: &SessionDir) -> Result<Vec<(Finding, String)>> {
    sd.check_links()?;
    let repo = SessionRepo::open_for_reading(&sd.dir)?;
    let tips: Vec<ObjectId> = repo.branches()?.into_iter().map(|(_, t)| t).collect();
    let objects = repo.objects_for(&tips, &|_| Ok(false))?;
    let scanned: HashSet<ObjectId> = objects
        .iter()
        .filter(|(k, _, _)| *k == Kind::Blob)
        .map(|(_, id, _)| *id)
        .collect();
    let mut out = scan_objects_values(&objects);
    drop(objects);
    for (rel, path) in working_files(&sd.dir) {
        // Regular files, as listed (a FIFO swapped in since never blocks).
        let data = crate::layout::atomic::read(&path).io("read", &path)?;
        if scanned.contains(&crate::git::blob_id(&data)) {
            continue;
        }
        out.extend(scan_file_values(&rel, &data));
    }
    Ok(out)
}

/// The secrets in the nodes of seqs `first..=last` (what a turn's commit
/// holds) and in the attachment files they name: a turn's scan, its cost
/// the turn's, not the session's.
pub fn scan_seqs(sd: &SessionDir, first: u64, last: u64) -> Result<Vec<Finding>> {
    let catalog = crate::layout::history::Catalog::load(sd)?;
    let history = sd.history();
    let mut out = Vec::new();
    for e in catalog.rev_entries() {
        if e.seq < first {
            break;
        }
        if e.seq > last {
            continue;
        }
        let path = history.join(&e.file);
        let Ok(data) = crate::layout::schema::read_bounded(&path) else {
            continue;
        };
        out.extend(scan_file(&format!("history/{}", e.file), &data));
        let Ok(node) = serde_json::from_slice::<Value>(&data) else {
            continue;
        };
        for a in node
            .pointer("/metadata/attachments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(rel) = a.get("path").and_then(Value::as_str) else {
                continue;
            };
            if !rel.starts_with("workdir/attachments/") || rel.contains("..") {
                continue;
            }
            if let Ok(bytes) = crate::layout::schema::read_bounded(&sd.dir.join(rel)) {
                out.extend(scan_file(rel, &bytes));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The regular files of a session directory outside `.git`, by path
/// relative to it (`/`-separated), in name order.
pub(crate) fn working_files(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() != 1 || e.file_name() != ".git")
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(dir).ok()?;
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_str())
                .collect::<Option<Vec<&str>>>()?
                .join("/");
            Some((rel, e.path().to_path_buf()))
        })
        .collect()
}

/// The allow-list file's text (`<state>/secrets-allow`); empty when there
/// is none. A link or a special file there is refused, never read.
pub fn allow_file(state: &StateDir) -> Result<Vec<u8>> {
    match crate::layout::schema::read_bounded(&state.secrets_allow_file()) {
        Ok(bytes) => Ok(bytes),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(Vec::new())
        }
        Err(e) => Err(e),
    }
}

/// The fingerprints an allow-list file's text names.
pub fn allowed_in(text: &[u8]) -> BTreeSet<String> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|fp| !fp.is_empty())
        .map(str::to_string)
        .collect()
}

/// The fingerprints let through: the state dir's allow-list file
/// (`<state>/secrets-allow`: one fingerprint per line, `#` starts a
/// comment) and those given on the command line.
pub fn allowed(state: &StateDir, extra: &[String]) -> Result<BTreeSet<String>> {
    let path = state.secrets_allow_file();
    let mut out: BTreeSet<String> = extra.iter().map(|s| s.trim().to_string()).collect();
    out.extend(allowed_in(&allow_file(state)?));
    for fp in &out {
        if fp.len() != 16 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(super::SecretsError::BadFingerprint {
                // The line may be a secret pasted by mistake: masked.
                masked: super::mask(fp.as_bytes()),
                allow_file: path,
            }
            .into());
        }
    }
    Ok(out)
}
