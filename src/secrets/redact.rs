//! `redact`: a session's history rewritten with each chosen secret replaced
//! by `[REDACTED:<rule>:<fingerprint>]`: its node files, `meta.json`,
//! attachments and commit messages, in every commit from the first one
//! that held it, and in the files on disk. The old history stays under
//! `refs/redacted/<time>/<branch>` until the user deletes those refs; a
//! `context/redact` node records what was done (rules, fingerprints, nodes,
//! the commits replaced), never a value.
//!
//! A secret is replaced wherever its value is, as written or JSON-escaped,
//! and where a copy was cut (a title, a commit subject: 20 characters or
//! more of it, up to where the copy ends).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gix::ObjectId;
use serde_json::{Value, json};

use super::session::{Finding, scan_session_values, working_files};
use crate::error::Result;
use crate::git::rewrite::Rewriter;
use crate::git::{RefUpdate, SessionRepo};
use crate::layout::atomic;
use crate::layout::paths::{SessionDir, StateDir};
use crate::layout::schema::Meta;
use crate::store::{self, NewNode};

/// What `redact` refuses (`git_session::redact::…`): the session is left
/// as it is.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RedactError {
    /// HEAD on an earlier turn: the history is rewritten from the latest.
    #[error("HEAD of `{session}` is on an earlier turn (detached)")]
    #[diagnostic(
        code(git_session::redact::detached_head),
        help(
            "`git-session checkout {session} <branch>` (`git-session branch {session}` lists them), then run it again"
        )
    )]
    DetachedHead { session: String },

    /// A fingerprint asked for that no finding has: a usage error (exit 2).
    #[error("no finding of `{session}` has the fingerprint `{fingerprint}`")]
    #[diagnostic(
        code(git_session::redact::no_such_finding),
        help("`git-session secrets scan {session}` lists its findings")
    )]
    NoSuchFinding {
        session: String,
        fingerprint: String,
    },

    /// A value still in the session after the redaction.
    #[error("`{session}` still holds {rule} {masked} in `{path}` after the redaction")]
    #[diagnostic(
        code(git_session::redact::incomplete),
        help(
            "report it: the copy there is written in a way the redaction does not recognise; `git-session redact --fingerprint` it once more after editing the file by hand"
        )
    )]
    Incomplete {
        session: String,
        rule: String,
        masked: String,
        path: String,
    },
}

/// The name of a redaction's record node.
pub const RECORD_NAME: &str = "context/redact";
/// Where the history a redaction replaced is kept.
pub const BACKUP_REFS: &str = "refs/redacted/";

/// The secrets to replace, with their values (in memory only).
pub struct Redactor {
    /// (value, its JSON-escaped form, replacement), longest value first.
    secrets: Vec<(String, String, String)>,
}

/// The shortest cut copy of a secret that is replaced.
const MIN_CUT: usize = 20;

impl Redactor {
    pub fn new(values: &BTreeMap<String, (String, String)>) -> Redactor {
        let mut secrets: Vec<(String, String, String)> = values
            .iter()
            .map(|(fp, (rule, value))| {
                let escaped = serde_json::to_string(value).expect("a string serialises");
                let escaped = escaped[1..escaped.len() - 1].to_string();
                (value.clone(), escaped, super::replacement(rule, fp))
            })
            .collect();
        secrets.sort_by_key(|(v, _, _)| std::cmp::Reverse(v.len()));
        Redactor { secrets }
    }

    /// `data` with every secret replaced; `None` when it holds none.
    pub fn apply(&self, data: &[u8]) -> Option<Vec<u8>> {
        // A binary file is not text a secret was written into.
        if super::is_binary(data) {
            return None;
        }
        let mut out: Option<Vec<u8>> = None;
        for (value, escaped, replacement) in &self.secrets {
            for form in [value, escaped] {
                let cur = out.as_deref().unwrap_or(data);
                if let Some(next) = replace_cut(cur, form.as_bytes(), replacement.as_bytes()) {
                    out = Some(next);
                }
            }
        }
        out
    }

    /// `text` with every secret replaced; `None` when it holds none.
    pub fn apply_str(&self, text: &str) -> Option<String> {
        self.apply(text.as_bytes())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }
}

impl Rewriter for Redactor {
    fn file(&mut self, _path: &str, data: &[u8]) -> Option<Vec<u8>> {
        self.apply(data)
    }

    fn message(&mut self, message: &str) -> Option<String> {
        self.apply_str(message)
    }
}

/// Replace in `data` every copy of `secret`, whole or cut: at least
/// [`MIN_CUT`] bytes of its start ending where the next byte is not one a
/// key is made of, or at least half of it (6 bytes or more) ending where a
/// cut copy ends (a line's end, a JSON string's, `…`).
fn replace_cut(data: &[u8], secret: &[u8], replacement: &[u8]) -> Option<Vec<u8>> {
    let loose = secret.len().min((secret.len() / 2).max(6));
    let strict = secret.len().min(MIN_CUT);
    if loose == 0 {
        return None;
    }
    let head = &secret[..loose];
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    let mut changed = false;
    while i + loose <= data.len() {
        // A copy starts where a word does: `postgres` in `postgresql` or
        // `mypostgres` is no copy of the password `postgres`.
        let glued = i > 0
            && secret[0].is_ascii_alphanumeric()
            && data[i - 1].is_ascii_alphanumeric()
            // `\n` before it in JSON text is a line's end, not a word.
            && !(i > 1 && data[i - 2] == b'\\');
        if &data[i..i + loose] != head || glued {
            i += 1;
            continue;
        }
        let mut k = loose;
        while k < secret.len() && i + k < data.len() && data[i + k] == secret[k] {
            k += 1;
        }
        let next = data.get(i + k);
        let ends_key = next.is_none_or(|b| {
            !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b'='))
        });
        let ends_copy = next.is_none_or(|b| matches!(b, b'\n' | b'\r' | b'"' | 0xE2));
        let whole = k == secret.len()
            && (!secret[k - 1].is_ascii_alphanumeric()
                || next.is_none_or(|b| !b.is_ascii_alphanumeric()));
        if whole || (k >= strict && ends_key) || ends_copy {
            out.extend_from_slice(&data[at..i]);
            out.extend_from_slice(replacement);
            at = i + k;
            i += k;
            changed = true;
        } else {
            i += 1;
        }
    }
    if !changed {
        return None;
    }
    out.extend_from_slice(&data[at..]);
    Some(out)
}

/// Which findings a redaction replaces.
#[derive(Debug, Default)]
pub struct Chosen {
    /// Only findings of these rules.
    pub rules: Vec<String>,
    /// Only findings with these fingerprints.
    pub fingerprints: Vec<String>,
}

/// What a redaction did.
#[derive(Debug, Default)]
pub struct Redacted {
    /// The findings replaced, one per place.
    pub findings: Vec<Finding>,
    /// Each rewritten branch: (name, old tip, new tip).
    pub branches: Vec<(String, ObjectId, ObjectId)>,
    /// Every commit replaced: old → new.
    pub replaced: BTreeMap<ObjectId, ObjectId>,
    /// The ref prefix the old tips are kept under.
    pub backup: Option<String>,
    /// Files on disk rewritten.
    pub files: Vec<String>,
    /// The record node, and its commit.
    pub record: Option<(String, Option<String>)>,
}

/// Redact the session in `sd` (the caller holds its exclusive lock).
/// Findings `allowed` are left unless named by fingerprint.
pub fn redact_session(
    state: &StateDir,
    sd: &SessionDir,
    session: &str,
    chosen: &Chosen,
    allowed: &BTreeSet<String>,
    dry_run: bool,
    warn: &mut dyn FnMut(String),
) -> Result<Redacted> {
    let mut done = Redacted::default();
    let values = choose(sd, session, chosen, allowed, &mut done)?;
    // A redaction killed before its record: what it did is in its journal,
    // and goes into this one's record.
    let journal = sd.private_dir().join("redact.pending");
    // Never through a link or from a special file planted there.
    let prior: Option<serde_json::Map<String, Value>> =
        crate::layout::schema::read_bounded(&journal)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
    if dry_run || (values.is_empty() && prior.is_none()) {
        return Ok(done);
    }
    let mut redactor = Redactor::new(&values);
    let mut repo = SessionRepo::open(&sd.dir)?;
    let head = repo.head()?;
    if head.branch.is_none() && head.commit.is_some() {
        return Err(RedactError::DetachedHead {
            session: session.to_string(),
        }
        .into());
    }
    // 1. The history, written again beside the old one.
    let updates = rewrite_history(&mut repo, &mut redactor, &mut done)?;
    // 2. The journal: what the record will say, kept until it is written.
    let mut record = record_node(&done);
    if let Some(p) = &prior {
        merge_record(&mut record.metadata, p);
    }
    atomic::write(
        &journal,
        &serde_json::to_vec(&record.metadata).expect("json"),
    )?;
    // 3. The files on disk first (a run killed before the refs move finds
    // the history to rewrite again, and the same new commits), and this tool's own beside the repository (an
    // imported turn still open).
    redact_files(sd, &redactor, &mut done)?;
    crate::layout::history::invalidate(sd);
    atomic::crash_point("redact-before-refs");
    // 4. The refs, in one transaction; the snapshot names the commit about
    // to be HEAD first, so that a kill before the index is written is
    // recovered (the index rebuilt) before anything commits from it.
    if !updates.is_empty() {
        if let Some(h) = head.commit {
            let snap = sd.read_snapshot();
            sd.write_snapshot(&crate::layout::paths::Snapshot {
                pending: Some(done.replaced.get(&h).unwrap_or(&h).to_string()),
                ..snap
            })?;
        }
        repo.update_refs(&updates)?;
        repo.release_packs();
    }
    drop(repo);
    atomic::crash_point("redact-after-refs");
    // 5. The index mirrors HEAD's new tree; the mirror's snapshot names it.
    mirror_head_tree(sd)?;
    // 6. The record, committed alone when it can be; then the journal goes.
    done.record = Some(write_record(state, sd, session, record, &journal, warn)?);
    // What it set out to replace is gone, or it says so.
    check_gone(sd, session, &done.findings)?;
    if let Some(row) = crate::layout::registry::fresh_row(sd, session)? {
        crate::layout::registry::journal_append(state, &row)?;
    }
    Ok(done)
}

/// The findings of the session in `sd` a redaction replaces (into
/// `done.findings`, one per place) and their values: fingerprint → (rule,
/// value). A fingerprint `chosen` that no finding has is refused.
fn choose(
    sd: &SessionDir,
    session: &str,
    chosen: &Chosen,
    allowed: &BTreeSet<String>,
    done: &mut Redacted,
) -> Result<BTreeMap<String, (String, String)>> {
    let found = scan_session_values(sd)?;
    for fp in &chosen.fingerprints {
        if !found.iter().any(|(f, _)| &f.fingerprint == fp) {
            return Err(RedactError::NoSuchFinding {
                session: session.to_string(),
                fingerprint: fp.clone(),
            }
            .into());
        }
    }
    let wanted = |f: &Finding| {
        if !chosen.fingerprints.is_empty() || !chosen.rules.is_empty() {
            chosen.fingerprints.contains(&f.fingerprint) || chosen.rules.contains(&f.rule)
        } else {
            !allowed.contains(&f.fingerprint)
        }
    };
    let mut values: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (f, value) in found {
        if wanted(&f) {
            values.insert(f.fingerprint.clone(), (f.rule.clone(), value));
            done.findings.push(f);
        }
    }
    done.findings.sort();
    done.findings.dedup();
    Ok(values)
}

/// Every branch's history written again by `redactor` beside the old one
/// (`done.replaced`, `done.branches`, `done.backup`): the ref updates that
/// keep each old tip under the backup prefix and move the branch to its
/// new tip.
fn rewrite_history(
    repo: &mut SessionRepo,
    redactor: &mut Redactor,
    done: &mut Redacted,
) -> Result<Vec<RefUpdate>> {
    let tips = repo.branches()?;
    let tip_ids: Vec<ObjectId> = tips.iter().map(|(_, t)| *t).collect();
    done.replaced = repo.rewrite_history(&tip_ids, redactor)?;
    let mut updates = Vec::new();
    if !done.replaced.is_empty() {
        let stamp = crate::out::now() as u64;
        let mut backup = format!("{BACKUP_REFS}{stamp}/");
        let mut n = 1;
        while !repo.refs_under(&backup)?.is_empty() {
            backup = format!("{BACKUP_REFS}{stamp}-{n}/");
            n += 1;
        }
        for (branch, tip) in &tips {
            let Some(new) = done.replaced.get(tip) else {
                continue;
            };
            updates.push(RefUpdate::Set {
                name: format!("{backup}{branch}"),
                expected: crate::git::Expected::Absent,
                new: *tip,
                message: "redact: the history before".into(),
            });
            updates.push(RefUpdate::Advance {
                branch: branch.clone(),
                old: *tip,
                new: *new,
                message: "redact: secrets replaced".into(),
            });
            done.branches.push((branch.clone(), *tip, *new));
        }
        repo.sync_objects()?;
        done.backup = Some(backup);
    }
    Ok(updates)
}

/// The session's files on disk and this tool's own beside the repository
/// rewritten by `redactor` (each one changed named in `done.files`).
fn redact_files(sd: &SessionDir, redactor: &Redactor, done: &mut Redacted) -> Result<()> {
    let mut files = working_files(&sd.dir);
    if let Ok(rd) = std::fs::read_dir(sd.private_dir()) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                files.push((
                    format!(".git/git-session/{}", e.file_name().to_string_lossy()),
                    e.path(),
                ));
            }
        }
    }
    for (rel, path) in files {
        let Ok(data) = atomic::read(&path) else {
            continue;
        };
        if let Some(bytes) = redactor.apply(&data) {
            atomic::write(&path, &bytes)?;
            done.files.push(rel);
        }
    }
    Ok(())
}

/// The index made HEAD's tree; the mirror's snapshot, when it names a
/// commit or one pending, names HEAD's.
fn mirror_head_tree(sd: &SessionDir) -> Result<()> {
    let repo = SessionRepo::open(&sd.dir)?;
    if let Some(commit) = repo.head()?.commit {
        let tree = repo.commit_info(commit)?.tree;
        let mut index = repo.index_from_tree(tree)?;
        repo.write_index(&mut index)?;
        let snap = sd.read_snapshot();
        if snap.commit.is_some() || snap.pending.is_some() {
            sd.write_snapshot(&crate::layout::paths::Snapshot {
                commit: Some(commit.to_string()),
                pending: None,
                ..snap
            })?;
        }
    }
    Ok(())
}

/// The record node appended and committed alone when it can be (`warn`
/// hears why not), then the `journal` removed: the node's id, and its
/// commit.
fn write_record(
    state: &StateDir,
    sd: &SessionDir,
    session: &str,
    mut record: NewNode,
    journal: &Path,
    warn: &mut dyn FnMut(String),
) -> Result<(String, Option<String>)> {
    let mut meta = Meta::read(&sd.meta())?;
    record.naming = state.naming_for(sd);
    let node = store::append(sd, &mut meta, record, crate::out::now())?;
    atomic::write(&sd.meta(), &meta.to_json())?;
    let _ = std::fs::remove_file(journal);
    let commit = crate::relocate::commit_record(sd, session, warn).unwrap_or_else(|e| {
        warn(format!(
            "`{session}`: the redaction's record waits for the next turn's commit: {e}"
        ));
        None
    });
    Ok((node.id, commit))
}

/// Refused when the session in `sd` still holds a value of one of
/// `findings` (its copy there written in a way the redaction does not
/// recognise).
fn check_gone(sd: &SessionDir, session: &str, findings: &[Finding]) -> Result<()> {
    let chosen_fps: BTreeSet<&str> = findings.iter().map(|f| f.fingerprint.as_str()).collect();
    if let Some((f, _)) = scan_session_values(sd)?
        .into_iter()
        .find(|(f, _)| chosen_fps.contains(f.fingerprint.as_str()))
    {
        return Err(RedactError::Incomplete {
            session: session.to_string(),
            rule: f.rule,
            masked: f.masked,
            path: f.path,
        }
        .into());
    }
    Ok(())
}

/// Delete the session's backup refs (the history before its redactions),
/// and remote-tracking refs at a commit a redaction replaced, and drop the
/// objects only they kept; how many backup refs went.
pub fn drop_backups(sd: &SessionDir) -> Result<usize> {
    let repo = SessionRepo::open(&sd.dir)?;
    let refs = repo.refs_under(BACKUP_REFS)?;
    let mut updates: Vec<RefUpdate> = refs
        .iter()
        .map(|(name, old)| RefUpdate::Delete {
            name: format!("{BACKUP_REFS}{name}"),
            old: *old,
        })
        .collect();
    // A remote's tip kept from before the redaction (the next fetch sets
    // it again) would keep the history too.
    let replaced = replaced_on_disk(sd);
    for (name, tip) in repo.refs_under("refs/remotes/")? {
        if replaced.contains_key(&tip) {
            updates.push(RefUpdate::Delete {
                name: format!("refs/remotes/{name}"),
                old: tip,
            });
        }
    }
    if !updates.is_empty() {
        repo.update_refs(&updates)?;
    }
    drop(repo);
    crate::git::prune_unreachable(&sd.dir)?;
    Ok(refs.len())
}

/// Fold what an interrupted redaction's journal says into a record's
/// metadata: its secrets, nodes, branches, commits replaced and backup.
fn merge_record(meta: &mut serde_json::Map<String, Value>, prior: &serde_json::Map<String, Value>) {
    for key in ["replaced", "branches"] {
        if let (Some(Value::Object(into)), Some(Value::Object(from))) =
            (meta.get_mut(key), prior.get(key))
        {
            for (k, v) in from {
                into.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    for key in ["secrets", "nodes"] {
        if let (Some(Value::Array(into)), Some(Value::Array(from))) =
            (meta.get_mut(key), prior.get(key))
        {
            for v in from {
                if !into.contains(v) {
                    into.push(v.clone());
                }
            }
        }
    }
    if !meta.contains_key("backup")
        && let Some(b) = prior.get("backup")
    {
        meta.insert("backup".into(), b.clone());
    }
}

/// The `context/redact` node: off the conversation (the head stays).
fn record_node(done: &Redacted) -> NewNode {
    let secrets: BTreeMap<&str, &str> = done
        .findings
        .iter()
        .map(|f| (f.fingerprint.as_str(), f.rule.as_str()))
        .collect();
    let nodes: BTreeSet<&str> = done
        .findings
        .iter()
        .filter_map(|f| f.node.as_deref())
        .collect();
    let mut metadata = serde_json::Map::new();
    metadata.insert("display".into(), "runtime".into());
    metadata.insert(
        "secrets".into(),
        Value::Array(
            secrets
                .iter()
                .map(|(fp, rule)| json!({"rule": rule, "fingerprint": fp}))
                .collect(),
        ),
    );
    metadata.insert("nodes".into(), json!(nodes));
    metadata.insert(
        "branches".into(),
        Value::Object(
            done.branches
                .iter()
                .map(|(b, old, new)| {
                    (
                        b.clone(),
                        json!({"old": old.to_string(), "new": new.to_string()}),
                    )
                })
                .collect(),
        ),
    );
    metadata.insert(
        "replaced".into(),
        Value::Object(
            done.replaced
                .iter()
                .map(|(old, new)| (old.to_string(), Value::String(new.to_string())))
                .collect(),
        ),
    );
    if let Some(b) = &done.backup {
        metadata.insert("backup".into(), b.as_str().into());
    }
    NewNode {
        role: "code".into(),
        id: Some(crate::layout::ids::generate("redact_")),
        caller: Some("ROOT".into()),
        predecessor: Some(None),
        name: Some(RECORD_NAME.into()),
        output: format!(
            "redacted {} secret{} ({}) in {} node{}; {} commit{} rewritten",
            secrets.len(),
            if secrets.len() == 1 { "" } else { "s" },
            secrets
                .values()
                .copied()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", "),
            nodes.len(),
            if nodes.len() == 1 { "" } else { "s" },
            done.replaced.len(),
            if done.replaced.len() == 1 { "" } else { "s" },
        )
        .into(),
        metadata,
        ..Default::default()
    }
}

/// The commits this machine's redactions of the session in `sd` replaced
/// (old → new), from the `context/redact` records in its `history/`.
pub fn replaced_on_disk(sd: &SessionDir) -> BTreeMap<ObjectId, ObjectId> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(sd.history()) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.contains("-redact_") || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(bytes) = crate::layout::schema::read_bounded(&e.path()) {
            replaced_of(&bytes, &mut out);
        }
    }
    out
}

/// The `replaced` map of a record node's bytes, added to `out`.
fn replaced_of(bytes: &[u8], out: &mut BTreeMap<ObjectId, ObjectId>) {
    let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
        return;
    };
    if v.get("name").and_then(Value::as_str) != Some(RECORD_NAME) {
        return;
    }
    if let Some(map) = v.pointer("/metadata/replaced").and_then(Value::as_object) {
        for (old, new) in map {
            if let (Ok(o), Some(Ok(n))) = (
                ObjectId::from_hex(old.as_bytes()),
                new.as_str().map(|n| ObjectId::from_hex(n.as_bytes())),
            ) {
                out.insert(o, n);
            }
        }
    }
}

/// The commits redactions of this session replaced (old → new), from its
/// `context/redact` records in `tree`'s `history/` (what a fetched
/// session's tip holds, or this machine's).
pub fn replaced_in(repo: &SessionRepo, tree: ObjectId) -> Result<BTreeMap<ObjectId, ObjectId>> {
    let mut out = BTreeMap::new();
    let Some(history) = repo.tree_entry(tree, "history")? else {
        return Ok(out);
    };
    for (name, _, id) in repo.tree_entries(history)? {
        if name.contains("-redact_") {
            replaced_of(&repo.read_blob(id)?, &mut out);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_copy_is_replaced_and_another_key_with_the_same_prefix_is_not() {
        let secret = b"sk-ant-api03-Zq8vT2mK9pLxR4wN7bYc";
        let r = b"[R]";
        assert_eq!(
            replace_cut(b"key sk-ant-api03-Zq8vT2mK9pLxR4wN7bYc.", secret, r).unwrap(),
            b"key [R]."
        );
        assert_eq!(
            replace_cut("title: sk-ant-api03-Zq8vT2m…".as_bytes(), secret, r).unwrap(),
            "title: [R]…".as_bytes()
        );
        assert_eq!(
            replace_cut(b"other sk-ant-api03-Zq8vT2mAAAAAAA", secret, r),
            None
        );
        assert_eq!(replace_cut(b"short sk-ant-api03-Z", secret, r), None);
        // A short one cut where a line ends.
        assert_eq!(
            replace_cut(b"db://app:Zq8vT2m\nnext", b"Zq8vT2mK9pLx", r).unwrap(),
            b"db://app:[R]\nnext"
        );
        assert_eq!(replace_cut(b"Zq8vT2mK9 other", b"Zq8vT2mK9pLx", r), None);
        // Whole words only; an escaped line break before one is no word.
        assert_eq!(
            replace_cut(br#"cat\nZq8vT2mK9pLx\n"#, b"Zq8vT2mK9pLx", r).unwrap(),
            br#"cat\n[R]\n"#
        );
        assert_eq!(
            replace_cut(b"postgresql and mypostgres, not postgres!", b"postgres", r).unwrap(),
            b"postgresql and mypostgres, not [R]!"
        );
    }
}
