//! Verify (SPEC §5.14): the DAG files and their git mirror agree. Each check
//! yields findings with the command that fixes them; `repair` applies the
//! safe fixes (backfill, index rebuild, location repair, temp-file removal).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::git::{Oid, SessionRepo};
use crate::layout::history::Catalog;
use crate::layout::schema::{Meta, Node, ROOT};
use crate::layout::{SessionDir, StateDir, TEMP_PREFIX, registry};
use crate::session::{self, Trailers};

/// One problem, with the way out.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub session: Option<String>,
    pub kind: &'static str,
    pub path: PathBuf,
    pub message: String,
    /// The command (or action) that fixes it.
    pub fix: String,
    /// `verify --fix` repairs it.
    pub fixable: bool,
}

/// What a session check learned besides its findings (for `--fix`).
#[derive(Debug, Default)]
pub struct SessionCheck {
    pub findings: Vec<Finding>,
    /// Nodes or files not in git, or no repository: a backfill commits them.
    pub needs_commit: bool,
    /// Committed files whose content changed: a rescanning commit is needed.
    pub needs_rescan: bool,
    pub stray_temps: Vec<PathBuf>,
    /// Stale locks of ours (or ref locks) in the session's `.git`.
    pub needs_lock_cleanup: bool,
}

struct Ctx<'a> {
    id: &'a str,
    out: SessionCheck,
}

impl Ctx<'_> {
    fn add(
        &mut self,
        kind: &'static str,
        path: &Path,
        message: String,
        fix: String,
        fixable: bool,
    ) {
        self.out.findings.push(Finding {
            session: Some(self.id.to_string()),
            kind,
            path: path.to_path_buf(),
            message,
            fix,
            fixable,
        });
    }
}

fn letter_fits(letter: char, role: &str) -> bool {
    match role {
        "user" => letter == 'u',
        "llm" => matches!(letter, 'a' | 'l'),
        "code" => matches!(letter, 't' | 'c'),
        "" => letter == 'x',
        other => other.starts_with(letter) || letter == 'x' || letter == 's',
    }
}

/// Check one session.
pub fn check_session(id: &str, sd: &SessionDir) -> SessionCheck {
    let mut c = Ctx {
        id,
        out: SessionCheck::default(),
    };
    let backfill = format!("git-session backfill {id}");
    let verify_fix = format!("git-session verify --fix {id}");

    // meta.json
    let meta = match Meta::read(&sd.meta()) {
        Ok(m) => Some(m),
        Err(e) => {
            let kind = if sd.meta().exists() {
                "meta_unparsable"
            } else {
                "meta_missing"
            };
            c.add(
                kind,
                &sd.meta(),
                e.to_string(),
                "restore meta.json from git: `git checkout HEAD -- meta.json` in the session repo"
                    .into(),
                false,
            );
            None
        }
    };

    // history/: names, payloads, seqs, ids
    let catalog = match Catalog::read(&sd.history()) {
        Ok(cat) => cat,
        Err(e) => {
            c.add(
                "history_unreadable",
                &sd.history(),
                e.to_string(),
                "check the permissions of history/".into(),
                false,
            );
            return c.out;
        }
    };
    for dup in &catalog.duplicate_ids {
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
    let mut nodes: Vec<Node> = Vec::new();
    let mut files: HashMap<u64, Vec<String>> = HashMap::new();
    for e in catalog.entries() {
        let path = sd.history().join(&e.file);
        files.entry(e.seq).or_default().push(e.file.clone());
        let bytes = match crate::layout::schema::read_bounded(&path) {
            Ok(b) => b,
            Err(err) => {
                c.add(
                    "node_unreadable",
                    &path,
                    err.to_string(),
                    "check the file's permissions".into(),
                    false,
                );
                continue;
            }
        };
        match Node::parse(&bytes) {
            Err(r) => c.add(
                "node_unparsable",
                &path,
                format!("the node does not parse: {r}"),
                "restore it from git (`git checkout HEAD -- <file>`) or move it aside".into(),
                false,
            ),
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
    }
    for (seq, fs) in &files {
        if fs.len() > 1 {
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

    // DAG references
    let ids: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    if let Some(m) = &meta
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
    for n in &nodes {
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

    stray_temps(sd, &mut c);

    // The git mirror
    if !sd.git_dir().is_dir() {
        c.add(
            "no_repository",
            &sd.dir,
            format!("no git repository; {} nodes are not in git", nodes.len()),
            backfill,
            true,
        );
        c.out.needs_commit = true;
        return c.out;
    }
    // No background packing while the objects are checked: packs it is
    // replacing could vanish between listing and reading.
    let _packing = crate::git::hold_maintenance(&sd.dir);
    let repo = match SessionRepo::open(&sd.dir) {
        Ok(r) => r,
        Err(e) => {
            c.add(
                "repo_unreadable",
                &sd.git_dir(),
                e.to_string(),
                "inspect the repository with `git fsck`".into(),
                false,
            );
            return c.out;
        }
    };
    stale_git_locks(sd, &mut c);
    check_mirror(&mut c, sd, &repo, &nodes, &files, &backfill, &verify_fix);
    c.out
}

fn stray_temps(sd: &SessionDir, c: &mut Ctx<'_>) {
    let mut dirs = vec![sd.dir.clone(), sd.history(), sd.git_dir(), sd.private_dir()];
    if let Ok(rd) = std::fs::read_dir(sd.dir.join("workdir")) {
        dirs.push(sd.dir.join("workdir"));
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

fn stale_git_locks(sd: &SessionDir, c: &mut Ctx<'_>) {
    let mut locks = Vec::new();
    for name in ["index.lock", "HEAD.lock", "config.lock", "packed-refs.lock"] {
        locks.push(sd.git_dir().join(name));
    }
    if let Ok(w) = walkdir::WalkDir::new(sd.git_dir().join("refs"))
        .into_iter()
        .collect::<std::result::Result<Vec<_>, _>>()
    {
        locks.extend(
            w.into_iter()
                .map(|e| e.into_path())
                .filter(|p| p.extension().is_some_and(|x| x == "lock")),
        );
    }
    for l in locks {
        if let Ok(md) = std::fs::metadata(&l) {
            let age = md
                .modified()
                .ok()
                .and_then(|m| m.elapsed().ok())
                .unwrap_or_default();
            // Ours (an index.lock sharing its inode with our index or temp
            // file, or marked by an older version), or a ref lock: a session
            // repository is ours, and `--fix` removes them; any other
            // index.lock may be git's.
            let ours = (l.ends_with("index.lock") && crate::git::index_lock_is_ours(&l))
                || l.starts_with(sd.git_dir().join("refs"))
                || l.ends_with("HEAD.lock");
            if age.as_secs() >= 60 || (ours && age.as_secs() >= 1) {
                c.add(
                    "stale_git_lock",
                    &l,
                    format!("a lock file is {}s old", age.as_secs()),
                    if ours {
                        format!("git-session verify --fix {}", c.id)
                    } else {
                        format!(
                            "if no git process is running in `{}`, remove `{}`",
                            sd.dir.display(),
                            l.display()
                        )
                    },
                    ours,
                );
                c.out.needs_lock_cleanup |= ours;
            }
        }
    }
}

/// Commits reachable from every branch and HEAD, newest first per line.
fn all_commits(
    repo: &SessionRepo,
    c: &mut Ctx<'_>,
    git_dir: &Path,
) -> Option<(Vec<crate::git::CommitInfo>, Vec<Oid>)> {
    let head = match repo.head() {
        Ok(h) => h,
        Err(e) => {
            c.add(
                "head_unreadable",
                git_dir,
                e.to_string(),
                "point HEAD at a branch: `git symbolic-ref HEAD refs/heads/main`".into(),
                false,
            );
            return None;
        }
    };
    let branches = repo.branches().unwrap_or_default();
    let mut tips: Vec<Oid> = head.commit.into_iter().collect();
    tips.extend(branches.iter().map(|(_, t)| *t));
    if tips.is_empty() {
        c.add(
            "no_commits",
            git_dir,
            "the repository has no commit".into(),
            format!("git-session backfill {}", c.id),
            true,
        );
        c.out.needs_commit = true;
        return None;
    }
    let mut seen = HashSet::new();
    let mut stack = tips.clone();
    let mut out = Vec::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        match repo.commit_info(id) {
            Ok(info) => {
                stack.extend(info.parents.iter().copied());
                out.push(info);
            }
            Err(e) => {
                c.add(
                    "object_missing",
                    git_dir,
                    format!("commit {id} is missing or corrupt: {e}"),
                    "restore the repository from a backup; `git fsck` lists what is lost".into(),
                    false,
                );
            }
        }
    }
    tips.sort();
    tips.dedup();
    Some((out, tips))
}

#[allow(clippy::too_many_arguments)]
fn check_mirror(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    nodes: &[Node],
    files: &HashMap<u64, Vec<String>>,
    backfill: &str,
    verify_fix: &str,
) {
    let git_dir = sd.git_dir();
    let Some((commits, tips)) = all_commits(repo, c, &git_dir) else {
        return;
    };
    let by_id: HashMap<Oid, &crate::git::CommitInfo> = commits.iter().map(|i| (i.id, i)).collect();

    // Trailers against the DAG.
    let groups = session::group_pending(nodes);
    let turns = session::turn_numbers(nodes, &groups);
    let mut group_of_seq: HashMap<u64, usize> = HashMap::new();
    for (gi, g) in groups.iter().enumerate() {
        for n in &nodes[g.range.clone()] {
            group_of_seq.insert(n.seq.max(0) as u64, gi);
        }
    }
    let mut covered: BTreeMap<u64, Oid> = BTreeMap::new();
    for info in &commits {
        let t = Trailers::parse(&info.message);
        let Some((a, b)) = t.nodes else { continue };
        let short = info.id.to_hex_with_len(8).to_string();
        if t.session.as_deref().is_some_and(|s| s != c.id) {
            c.add(
                "trailer_session_mismatch",
                &git_dir,
                format!(
                    "commit {short} says `Session: {}`",
                    t.session.as_deref().unwrap_or("")
                ),
                "the commit belongs to another session; restore the right repository".into(),
                false,
            );
        }
        let in_range: Vec<u64> = files
            .keys()
            .copied()
            .filter(|s| *s >= a && *s <= b)
            .collect();
        if !files.contains_key(&a) || !files.contains_key(&b) {
            c.add(
                "trailer_nodes_missing",
                &git_dir,
                format!(
                    "commit {short} names nodes {a}..{b}, but seq {} has no node file",
                    if files.contains_key(&a) { b } else { a }
                ),
                "restore the node files from git: `git checkout <commit> -- history/`".into(),
                false,
            );
        }
        for s in in_range {
            if let Some(prev) = covered.insert(s, info.id)
                && prev != info.id
            {
                c.add("trailer_overlap", &git_dir, format!("node seq {s} is named by commits {} and {short}", prev.to_hex_with_len(8)), "the history was rewritten by hand; re-create the repository with backfill from a copy".into(), false);
            }
        }
        if let (Some(turn), Some(&gi)) = (t.turn, group_of_seq.get(&a))
            && turns[gi] != turn
        {
            c.add(
                "trailer_turn_mismatch",
                &git_dir,
                format!(
                    "commit {short} says turn {turn}, the DAG says turn {}",
                    turns[gi]
                ),
                "the nodes' predecessors changed after the commit; check the node files".into(),
                false,
            );
        }
    }

    // The latest tree against the files: every node committed, nothing changed.
    // The latest snapshot is the commit the index mirrors (the last one
    // written); without a marker, HEAD.
    let marker = sd
        .read_snapshot()
        .commit
        .and_then(|c| Oid::from_hex(c.as_bytes()).ok())
        .filter(|c| by_id.contains_key(c));
    let newest = marker.or_else(|| repo.head().ok().and_then(|h| h.commit));
    let mut tips = tips;
    if let Some(n) = newest
        && !tips.contains(&n)
    {
        tips.push(n);
    }
    let mut committed_nodes: BTreeSet<String> = BTreeSet::new();
    for tip in &tips {
        let Some(info) = by_id.get(tip) else { continue };
        match tree_files(repo, info.tree) {
            Ok(entries) => {
                for (path, _, _) in &entries {
                    if let Some(f) = path.strip_prefix("history/") {
                        committed_nodes.insert(f.to_string());
                    }
                }
                if Some(*tip) == newest {
                    compare_tree(c, sd, repo, &entries, verify_fix);
                }
            }
            Err(e) => c.add(
                "object_missing",
                &git_dir,
                format!(
                    "the tree of {} is missing or corrupt: {e}",
                    tip.to_hex_with_len(8)
                ),
                "restore the repository from a backup; `git fsck` lists what is lost".into(),
                false,
            ),
        }
    }
    let mut uncommitted: Vec<&str> = files
        .values()
        .flatten()
        .map(String::as_str)
        .filter(|f| !committed_nodes.contains(*f))
        .collect();
    uncommitted.sort();
    if !uncommitted.is_empty() {
        let shown: Vec<&str> = uncommitted.iter().take(5).copied().collect();
        c.add(
            "uncommitted_node",
            &sd.history(),
            format!(
                "{} node(s) not in git: {}{}",
                uncommitted.len(),
                shown.join(", "),
                if uncommitted.len() > 5 { ", …" } else { "" }
            ),
            backfill.to_string(),
            true,
        );
        c.out.needs_commit = true;
    }
}

/// Every blob path of a tree: (path, mode, id).
fn tree_files(repo: &SessionRepo, tree: Oid) -> crate::error::Result<Vec<(String, u32, Oid)>> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), tree)];
    while let Some((prefix, t)) = stack.pop() {
        for (name, mode, id) in repo.tree_entries(t)? {
            let path = format!("{prefix}{name}");
            if mode == 0o040000 {
                stack.push((format!("{path}/"), id));
            } else {
                out.push((path, mode, id));
            }
        }
    }
    Ok(out)
}

/// The newest commit's tree against the files on disk, with the index as a
/// stat cache: only files whose stat changed are hashed.
fn compare_tree(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    entries: &[(String, u32, Oid)],
    verify_fix: &str,
) {
    let index = repo.read_index().ok();
    let mut in_tree: HashSet<&str> = HashSet::new();
    let mut changed = Vec::new();
    let mut missing_blobs = Vec::new();
    for (path, mode, id) in entries {
        in_tree.insert(path);
        if !repo.object_exists(*id) {
            missing_blobs.push(path.clone());
            continue;
        }
        let full = sd.dir.join(path);
        let Ok(md) = std::fs::symlink_metadata(&full) else {
            changed.push(format!("{path} (deleted)"));
            continue;
        };
        let cached = index.as_ref().and_then(|i| {
            let e = i.entry_by_path(path.as_str().into())?;
            Some(e.id == *id && crate::mirror::stat_matches(&e.stat, &md))
        });
        if cached == Some(true) {
            continue;
        }
        let data = if md.file_type().is_symlink() {
            std::fs::read_link(&full).map(|p| p.as_os_str().as_encoded_bytes().to_vec())
        } else {
            std::fs::read(&full)
        };
        match data {
            Ok(d)
                if crate::git::blob_id(&d) == *id
                    && (*mode == 0o120000) == md.file_type().is_symlink() => {}
            _ => changed.push(path.clone()),
        }
    }
    if !missing_blobs.is_empty() {
        c.add(
            "object_missing",
            &sd.git_dir(),
            format!(
                "{} blob(s) of the latest commit are missing: {}",
                missing_blobs.len(),
                missing_blobs
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "restore the repository from a backup; the files on disk are intact".into(),
            false,
        );
    }
    if !changed.is_empty() {
        let shown: Vec<String> = changed.iter().take(5).cloned().collect();
        c.add(
            "tree_differs",
            &sd.dir,
            format!(
                "{} committed file(s) differ from git: {}",
                changed.len(),
                shown.join(", ")
            ),
            verify_fix.to_string(),
            true,
        );
        c.out.needs_rescan = true;
    }
    // Files on disk that git does not have (nodes are reported separately).
    let mut extra = Vec::new();
    for root in std::fs::read_dir(&sd.dir).into_iter().flatten().flatten() {
        let name = root.file_name().to_string_lossy().into_owned();
        if name == ".git" || name == "history" || name.starts_with(TEMP_PREFIX) {
            continue;
        }
        for e in walkdir::WalkDir::new(root.path())
            .into_iter()
            .filter_entry(|e| !e.file_name().to_string_lossy().starts_with(TEMP_PREFIX))
            .flatten()
        {
            if e.file_type().is_dir() {
                continue;
            }
            if let Ok(rel) = e.path().strip_prefix(&sd.dir)
                && let Some(rel) = rel.to_str()
                && !in_tree.contains(rel)
            {
                extra.push(rel.to_string());
            }
        }
    }
    if !extra.is_empty() {
        extra.sort();
        c.add(
            "uncommitted_file",
            &sd.dir,
            format!(
                "{} file(s) not in git: {}",
                extra.len(),
                extra.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ),
            verify_fix.to_string(),
            true,
        );
        c.out.needs_commit = true;
    }
}

/// Checks of the state dir as a whole: index rows, locations, invalid
/// session directories, leftover staging directories.
pub fn check_state(
    state: &StateDir,
    sessions: &[crate::backfill::Target],
) -> (Vec<Finding>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut temps = Vec::new();
    let add =
        |out: &mut Vec<Finding>, kind, path: PathBuf, message: String, fix: String, fixable| {
            out.push(Finding {
                session: None,
                kind,
                path,
                message,
                fix,
                fixable,
            });
        };
    let fix = "git-session verify --fix".to_string();
    let known: BTreeSet<&str> = sessions.iter().map(|t| t.id.as_str()).collect();
    // Index rows exist for valid sessions: a directory with a parsable meta.json.
    let valid: Vec<String> = registry::discover(state)
        .unwrap_or_default()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let valid: BTreeSet<&str> = valid.iter().map(String::as_str).collect();
    match registry::load_index(state) {
        Ok(None) if !valid.is_empty() => add(
            &mut out,
            "index_missing",
            state.index_json(),
            "index.json is missing or does not parse".into(),
            fix.clone(),
            true,
        ),
        Ok(None) => {}
        Ok(Some(index)) => {
            for id in index.keys().filter(|k| !valid.contains(k.as_str())) {
                add(
                    &mut out,
                    "index_row_orphan",
                    state.index_json(),
                    format!("row `{id}` has no valid session directory"),
                    fix.clone(),
                    true,
                );
            }
            for id in valid.iter().filter(|k| !index.contains_key(**k)) {
                add(
                    &mut out,
                    "index_row_missing",
                    state.index_json(),
                    format!("session `{id}` has no row"),
                    fix.clone(),
                    true,
                );
            }
        }
        Err(e) => add(
            &mut out,
            "index_unreadable",
            state.index_json(),
            e.to_string(),
            "check the permissions of the state dir".into(),
            false,
        ),
    }
    if state.locations_json().exists() {
        let parses = std::fs::read(state.locations_json()).ok().is_some_and(|b| {
            matches!(
                serde_json::from_slice::<serde_json::Value>(&b),
                Ok(serde_json::Value::Object(_))
            )
        });
        if !parses {
            add(
                &mut out,
                "locations_unparsable",
                state.locations_json(),
                "locations.json does not parse".into(),
                fix.clone(),
                true,
            );
        }
    }
    for (id, path) in registry::read_locations(state).unwrap_or_default() {
        let p = PathBuf::from(&path);
        if !p.join("meta.json").is_file() && !p.join("history").is_dir() {
            let elsewhere = known.contains(id.as_str());
            add(
                &mut out,
                "location_dangling",
                state.locations_json(),
                format!(
                    "`{id}` → `{path}` does not exist{}",
                    if elsewhere {
                        " (the session is in a standard place)"
                    } else {
                        ""
                    }
                ),
                if elsewhere {
                    fix.clone()
                } else {
                    format!(
                        "the project moved: run `git-session relocate <project> <new path>`, or remove `{id}` from locations.json"
                    )
                },
                elsewhere,
            );
        }
    }
    // Directories that look like sessions but are not valid, and our leftovers.
    let mut scan = |dir: PathBuf| {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(TEMP_PREFIX) {
                temps.push(e.path());
                continue;
            }
            if !e.file_type().is_ok_and(|t| t.is_dir())
                || name == "projects"
                || name.starts_with('.')
            {
                continue;
            }
            if crate::layout::ids::session_id(&name).is_ok() && !known.contains(name.as_str()) {
                add(
                    &mut out,
                    "invalid_session_dir",
                    e.path(),
                    "neither a meta.json nor a history/ here".into(),
                    "move the directory out of the state dir".into(),
                    false,
                );
            }
        }
    };
    state.session_parents().into_iter().for_each(&mut scan);
    if let Ok(j) = crate::migrate::read_journal(state)
        && !j.sessions.is_empty()
    {
        let ids: Vec<&str> = j.sessions.keys().map(String::as_str).collect();
        add(
            &mut out,
            "migration_in_progress",
            state.sessions().join(".migration"),
            format!(
                "{} session(s) are mid-migration: {}",
                ids.len(),
                ids.join(", ")
            ),
            "git-session migrate".into(),
            false,
        );
    }
    if !temps.is_empty() {
        add(
            &mut out,
            "stray_temp_file",
            temps[0].clone(),
            format!(
                "{} temporary file(s) or staging director(ies) left by an interrupted command",
                temps.len()
            ),
            fix,
            true,
        );
    }
    (out, temps)
}
