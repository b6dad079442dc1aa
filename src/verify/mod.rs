//! Verify (SPEC §5.14): the DAG files and their git mirror agree.
//!
//! The model of what is mirrored (SPEC §2.3, `git-session-verify(1)`):
//! node files are immutable records, so a committed node must be
//! byte-identical to the commit that holds it, and every node must be held
//! by a commit that a branch (or HEAD) reaches; `meta.json` and the other
//! files of the session are mutable, and what changed since the last turn is
//! committed with the next one, so they are checked for sense (meta.json
//! parses, names the session, its head resolves), never against HEAD.
//!
//! Each check yields findings with a stable code ([`KINDS`]) and the way out;
//! `SessionCheck` carries what `verify --fix` needs to repair them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::git::{BadObject, Oid, SessionRepo};
use crate::layout::history::{self, Catalog};
use crate::layout::schema::{Meta, Node, ROOT};
use crate::layout::{SessionDir, TEMP_PREFIX};
use crate::session::{self, Trailers};

mod kinds;
mod state;
pub use kinds::{KINDS, Kind, kinds_help};
pub use state::{binding_fixes, check_state, missing_locations, project_index_locks};

/// Whether a finding makes `verify` exit 1.
pub use crate::out::records::{BranchStats, Finding, Severity, Stats};

/// A committed file to bring back from git (its damaged bytes quarantined).
#[derive(Debug, Clone)]
pub struct Restore {
    /// The path relative to the session directory.
    pub rel: String,
    pub blob: Oid,
}

/// A commit no branch reaches that holds turns, and the ref that gets it back.
#[derive(Debug, Clone)]
pub struct LostTip {
    pub commit: Oid,
    pub branch: String,
    /// The branch's tip now (`None`: the branch is created); the lost
    /// commit descends from it, so the branch fast-forwards.
    pub old: Option<Oid>,
}

/// The figures a CI job compares, per branch.
/// What a session check learned besides its findings (for `--fix`).
#[derive(Debug, Default)]
pub struct SessionCheck {
    pub findings: Vec<Finding>,
    /// Nodes not in git, or no repository: a backfill commits them.
    pub needs_commit: bool,
    /// An uncommitted node does not parse: a backfill would refuse.
    pub commit_blocked: bool,
    /// Committed files to restore from git.
    pub restore: Vec<Restore>,
    /// The other way: blobs missing from git, or damaged in a loose file,
    /// whose file in the session still holds their bytes, to be stored
    /// again from it (the damaged file quarantined).
    pub rewrite: Vec<Restore>,
    /// Branches to recreate or fast-forward.
    pub lost: Vec<LostTip>,
    /// The git index is to be rebuilt from this commit's tree.
    pub index_from: Option<Oid>,
    /// Committed nodes whose metadata was stamped after their turn.
    pub restamped: bool,
    /// Node files named both ways: `verify --fix` renames them all to the
    /// Python store's naming.
    pub mixed_names: bool,
    pub stray_temps: Vec<PathBuf>,
    /// The catalog cache names other files than `history/` holds.
    pub catalog_stale: bool,
    /// Stale locks of ours (or ref locks) in the session's `.git`.
    pub needs_lock_cleanup: bool,
    pub stats: Stats,
}

impl SessionCheck {
    /// Findings that make `verify` exit 1.
    pub fn problems(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Problem)
            .count()
    }
}

struct Ctx<'a> {
    id: &'a str,
    out: SessionCheck,
    /// meta.json says a turn is open (`status: running`).
    turn_open: bool,
    /// Node files that are one node under both namings, the same bytes (a
    /// rename to one naming cut short, which `verify --fix` finishes):
    /// neither a duplicate nor a node to commit.
    twins: HashSet<String>,
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
        self.push(kind, Severity::Problem, path, message, fix, fixable);
    }

    fn push(
        &mut self,
        kind: &'static str,
        severity: Severity,
        path: &Path,
        message: String,
        fix: String,
        fixable: bool,
    ) {
        debug_assert!(KINDS.iter().any(|k| k.code == kind), "undocumented {kind}");
        self.out.findings.push(Finding {
            session: Some(self.id.to_string()),
            kind,
            severity,
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

/// A node file as found on disk.
struct OnDisk {
    file: String,
    seq: u64,
    /// The parse error, for a file that does not parse.
    unparsable: Option<String>,
}

/// Check one session; with `objects`, also read every object its branches
/// reach and check it against its id ([`corrupt_objects`]).
/// The attachments a node too big for one file names (`import::spill`):
/// each is in the session, of the size and blob id the node says.
fn check_attachments(c: &mut Ctx, sd: &SessionDir, n: &Node) {
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

pub fn check_session(id: &str, sd: &SessionDir, objects: bool) -> SessionCheck {
    let mut c = Ctx {
        id,
        out: SessionCheck::default(),
        turn_open: false,
        twins: HashSet::new(),
    };

    // The session's own directories are not links out of it.
    if let Err(e) = sd.check_links() {
        let code = miette::Diagnostic::code(&e).map(|c| c.to_string());
        if code.as_deref().is_some_and(|c| c.ends_with("redirected")) {
            let help = miette::Diagnostic::help(&e).map(|h| h.to_string());
            c.add(
                "repo_redirected",
                &sd.git_dir(),
                e.to_string(),
                help.unwrap_or_default(),
                false,
            );
            return c.out;
        }
        let special = code.is_some_and(|c| c.ends_with("special_file"));
        let fix = match special {
            true => {
                "replace it with the regular file it should be (no special file in a session is opened)"
            }
            false => {
                "replace the link with the directory or file it should be (nothing is read or written through it)"
            }
        };
        c.add("layout_link", &sd.dir, e.to_string(), fix.into(), false);
        return c.out;
    }
    // meta.json: parses and names this session.
    let meta = match Meta::read(&sd.meta()) {
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
    };

    // An import's turn its transcript has not closed: a note.
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
    if let Some((missed, gone)) = history::stale_cache(sd, &catalog) {
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
    for n in &nodes {
        check_attachments(&mut c, sd, n);
    }

    // DAG references (a node file that does not parse still names its id:
    // its successors are not reported for it)
    let mut ids: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let names: Vec<crate::layout::history::Entry> = catalog.entries().collect();
    ids.extend(names.iter().map(|e| e.id.as_str()));
    let damaged = on_disk.iter().any(|d| d.unparsable.is_some());
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
    let groups = session::group_pending(&nodes, &HashSet::new());
    c.out.stats.dag_turns = groups
        .iter()
        .filter(|g| g.starts_turn || g.regenerates)
        .count() as u64;

    stray_temps(sd, &mut c);

    // The git mirror
    if !sd.git_dir().is_dir() {
        unparsable_uncommitted(&mut c, sd, &on_disk, &HashMap::new());
        c.add(
            "no_repository",
            &sd.dir,
            format!("no git repository; {} nodes are not in git", nodes.len()),
            format!("git-session backfill {id}"),
            !c.out.commit_blocked,
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
    check_mirror(
        &mut c, sd, &repo, &nodes, &groups, &on_disk, &files, damaged,
    );
    if objects {
        corrupt_objects(&mut c, sd, &repo);
    }
    for d in crate::sync::divergences(sd, &repo) {
        c.add(
            "diverged",
            &sd.git_dir(),
            format!(
                "this machine and remote `{}` both added turns: `{}/{}` holds {} node(s) that are not here",
                d.remote, d.remote, d.branch, d.missing
            ),
            format!(
                "git-session fetch {} --take local {id} (this machine's conversation stays current) or --take remote {id}; both keep every turn",
                d.remote
            ),
            false,
        );
    }
    c.out
}

/// `--objects`: every commit, tree and blob that HEAD and the branches
/// reach, read from the object database and hashed (as `git fsck` does,
/// without git): a stored object that is damaged, though its name is still
/// there, is found even when the file it was made from is intact. A blob
/// is followed with its path in the tree, so that one whose file still
/// holds its bytes can be stored again ([`report_lost_blobs`]).
fn corrupt_objects(c: &mut Ctx<'_>, sd: &SessionDir, repo: &SessionRepo) {
    let tips = repo.head().ok().and_then(|h| h.commit).into_iter().chain(
        repo.branches()
            .unwrap_or_default()
            .into_iter()
            .map(|(_, t)| t),
    );
    let (reached, bad) = repo.check_reachable(tips);
    report_lost_blobs(c, sd, repo, bad, |n| {
        format!("{n} of the {reached} object(s) the branches reach are missing or damaged")
    });
}

/// Uncommitted node files that do not parse: nothing can commit them.
fn unparsable_uncommitted(
    c: &mut Ctx<'_>,
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

fn stray_temps(sd: &SessionDir, c: &mut Ctx<'_>) {
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
            if age >= crate::git::FOREIGN_LOCK || (ours && age >= crate::git::STALE_LOCK) {
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

/// Commits reachable from every branch and HEAD.
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
                // What `git fsck --strict` refuses (`nulInCommit`), and with
                // it a remote that checks what it receives: an older
                // version wrote a node's NUL byte into a subject.
                if info.message.contains('\0') {
                    c.add(
                        "commit_malformed",
                        git_dir,
                        format!(
                            "commit {} holds a NUL byte in its message: git fsck --strict refuses it, and so does a remote that checks what it is pushed",
                            id.to_hex_with_len(10)
                        ),
                        "the session's other refs still push; only a rewrite of its history (a backfill into a new session) removes it".into(),
                        false,
                    );
                }
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

/// A commit of a turn: it holds nodes (trailers), or it is one of the
/// Python store's `turn:` commits (which carry none).
fn is_turn_commit(info: &crate::git::CommitInfo, t: &Trailers) -> bool {
    let subject = info.message.lines().next().unwrap_or("");
    (t.nodes.is_some() && !subject.starts_with("record:"))
        || subject.starts_with("turn:")
        || subject.starts_with("turn (")
}

#[allow(clippy::too_many_arguments)]
fn check_mirror(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    nodes: &[Node],
    groups: &[session::Group],
    on_disk: &[OnDisk],
    files: &HashMap<u64, Vec<String>>,
    damaged: bool,
) {
    let git_dir = sd.git_dir();
    let Some((commits, tips)) = all_commits(repo, c, &git_dir) else {
        return;
    };
    let by_id: HashMap<Oid, &crate::git::CommitInfo> = commits.iter().map(|i| (i.id, i)).collect();
    let trailers: HashMap<Oid, Trailers> = commits
        .iter()
        .map(|i| (i.id, Trailers::parse(&i.message)))
        .collect();
    let turns = session::turn_numbers(nodes, groups);
    let mut group_of_seq: HashMap<u64, usize> = HashMap::new();
    for (gi, g) in groups.iter().enumerate() {
        for n in &nodes[g.range.clone()] {
            group_of_seq.insert(n.seq.max(0) as u64, gi);
        }
    }

    // The latest snapshot: the commit the index mirrors (the last one
    // written); without a marker, HEAD.
    let snapshot = sd.read_snapshot();
    let oid = |c: Option<String>| c.and_then(|c| Oid::from_hex(c.as_bytes()).ok());
    let marker = oid(snapshot.commit);
    // A commit published while the index was not yet written (a crash
    // between the two): the index is to mirror it.
    let published = oid(snapshot.pending).filter(|p| tips.contains(p));
    let head_commit = repo.head().ok().and_then(|h| h.commit);
    let newest = published
        .or(marker.filter(|c| by_id.contains_key(c)))
        .or(head_commit);
    // The index mirrors the marker's commit even when a moved ref left it
    // unreachable (that is reported, and repaired, as a lost turn).
    let index_commit = published
        .or(marker.filter(|c| repo.commit_info(*c).is_ok()))
        .or(head_commit);
    let mut order: Vec<Oid> = newest.into_iter().collect();
    order.extend(tips.iter().copied().filter(|t| Some(*t) != newest));
    // Every committed node file and the blob the newest tree holding it has.
    let mut committed: HashMap<String, Oid> = HashMap::new();
    let mut newest_entries: Vec<(String, u32, Oid)> = Vec::new();
    for tip in &order {
        let Some(info) = by_id.get(tip) else { continue };
        match tree_files(repo, info.tree) {
            Ok(entries) => {
                for (path, _, blob) in &entries {
                    if let Some(f) = path.strip_prefix(crate::layout::paths::HISTORY_PREFIX) {
                        committed.entry(f.to_string()).or_insert(*blob);
                    }
                }
                if Some(*tip) == newest {
                    newest_entries = entries;
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
    c.out.stats.max_committed_seq = on_disk
        .iter()
        .filter(|d| committed.contains_key(&d.file))
        .map(|d| d.seq)
        .max();
    let index = repo.read_index().ok();
    missing_blobs(c, sd, repo, &newest_entries);
    committed_nodes(c, sd, repo, on_disk, &committed, index.as_ref());
    // A committed node that changed is reported as such; what follows from
    // its new content (its name, the turn numbers) is not reported again.
    let changed: HashSet<PathBuf> = c.out.restore.iter().map(|r| sd.dir.join(&r.rel)).collect();
    c.out
        .findings
        .retain(|f| f.kind != "name_mismatch" || !changed.contains(&f.path));
    // Turn numbers need every node as committed: with one that does not
    // parse or changed, the trailers' turns are not checked.
    let turn_check = (!damaged && changed.is_empty()).then_some((&turns[..], &group_of_seq));
    check_trailers(c, &git_dir, &commits, &trailers, files, turn_check);
    stats(c, repo, &commits, &by_id, &trailers, &turns, &group_of_seq);
    meta_repair(c, &newest_entries);
    unparsable_uncommitted(c, sd, on_disk, &committed);
    let uncommitted: Vec<&OnDisk> = on_disk
        .iter()
        .filter(|d| d.unparsable.is_none() && !committed.contains_key(&d.file))
        .collect();
    // A branch deleted after the conversation went on elsewhere: its nodes
    // are in the trees of later commits on other branches (a tree holds the
    // whole session), but its DAG tip is in no turn commit a branch reaches
    // (no `Nodes:` trailer of one names it). Tips past every trailer (turns
    // the Python store committed last, which carry none) are not looked at.
    let last_named = trailers
        .values()
        .filter_map(|t| t.nodes.map(|(_, b)| b))
        .max();
    let named = |seq: u64| trailers.values().any(|t| t.holds_seq(seq));
    let lost_tips: Vec<&OnDisk> = crate::view::Dag::new(nodes)
        .tips()
        .into_iter()
        .map(|n| n.seq.max(0) as u64)
        .filter(|&seq| last_named.is_some_and(|last| seq < last) && !named(seq))
        .filter_map(|seq| {
            on_disk
                .iter()
                .find(|d| d.seq == seq && committed.contains_key(&d.file))
        })
        .collect();
    let mut wanted = uncommitted.clone();
    wanted.extend(lost_tips);
    let unreached = lost_turns(c, sd, repo, &by_id, &wanted);
    // Record nodes (a relocation) are events, not turns: one not yet in git
    // (written while HEAD was on an older turn) waits for the next turn.
    let record_ids: HashSet<&str> = nodes
        .iter()
        .filter(|n| n.role == "code" && session::is_reserved_name(&n.name))
        .map(|n| n.id.as_str())
        .collect();
    let is_record = |f: &str| {
        crate::layout::paths::parse_node_file_name(f)
            .is_some_and(|(_, _, id)| record_ids.contains(id))
    };
    let mut rest: Vec<&str> = uncommitted
        .iter()
        .map(|d| d.file.as_str())
        .filter(|f| !unreached.contains(*f) && !c.twins.contains(*f))
        .collect();
    let records: Vec<&str> = rest.iter().copied().filter(|f| is_record(f)).collect();
    rest.retain(|f| !is_record(f));
    if !records.is_empty() {
        c.push(
            "record_uncommitted",
            Severity::Note,
            &sd.history(),
            format!(
                "{} record node(s) not in git yet: {}",
                records.len(),
                records.join(", ")
            ),
            "the next `commit-turn` commits them".into(),
            false,
        );
    }
    rest.sort();
    if !rest.is_empty() && c.turn_open {
        // A turn at work: its nodes wait for its own commit, and a commit
        // made here, beside its writer, would race it for git's index.
        c.push(
            "turn_in_progress",
            Severity::Note,
            &sd.history(),
            format!(
                "a turn is open (status `running`): {} node(s) not in git yet",
                rest.len()
            ),
            format!(
                "its commit-turn commits them; if no agent works on it, `git-session recover`, then `git-session backfill {}`",
                c.id
            ),
            false,
        );
    } else if !rest.is_empty() {
        let shown: Vec<&str> = rest.iter().take(5).copied().collect();
        let blocked = c.out.commit_blocked;
        c.add(
            "uncommitted_node",
            &sd.history(),
            format!(
                "{} node(s) not in git: {}{}",
                rest.len(),
                shown.join(", "),
                if rest.len() > 5 { ", …" } else { "" }
            ),
            format!("git-session backfill {}", c.id),
            !blocked,
        );
        c.out.needs_commit = true;
    }
    if let (Some(n), Some(index)) = (index_commit, index.as_ref()) {
        let entries_of = |commit: Oid| match Some(commit) == newest {
            true => Ok(newest_entries.clone()),
            false => repo
                .commit_info(commit)
                .and_then(|info| tree_files(repo, info.tree)),
        };
        // Another writer's `git add -A && git commit` (the Python store's
        // turn) leaves the index at HEAD: that is in order too.
        let at_head = head_commit
            .filter(|h| *h != n)
            .and_then(|h| entries_of(h).ok())
            .is_some_and(|e| index_matches(&e, index).is_empty());
        if !at_head && let Ok(entries) = entries_of(n) {
            git_index(c, sd, n, &entries, index);
        }
    }
    c.out.stats.pending_files = pending_files(sd, &newest_entries, index.as_ref());
}

fn check_trailers(
    c: &mut Ctx<'_>,
    git_dir: &Path,
    commits: &[crate::git::CommitInfo],
    trailers: &HashMap<Oid, Trailers>,
    files: &HashMap<u64, Vec<String>>,
    turn_check: Option<(&[u64], &HashMap<u64, usize>)>,
) {
    let mut covered: BTreeMap<u64, Oid> = BTreeMap::new();
    for info in commits {
        let t = &trailers[&info.id];
        let Some((a, b)) = t.nodes else { continue };
        let short = info.id.to_hex_with_len(8).to_string();
        if t.session.as_deref().is_some_and(|s| s != c.id) {
            c.add(
                "trailer_session_mismatch",
                git_dir,
                format!(
                    "commit {short} says `Session: {}`",
                    t.session.as_deref().unwrap_or("")
                ),
                "the commit belongs to another session; restore the right repository".into(),
                false,
            );
        }
        if !files.contains_key(&a) || !files.contains_key(&b) {
            c.add(
                "trailer_nodes_missing",
                git_dir,
                format!(
                    "commit {short} names nodes {a}..{b}, but seq {} has no node file",
                    if files.contains_key(&a) { b } else { a }
                ),
                "restore the node files from git: `git checkout <commit> -- history/`".into(),
                false,
            );
        }
        for s in files.keys().copied().filter(|s| *s >= a && *s <= b) {
            if let Some(prev) = covered.insert(s, info.id)
                && prev != info.id
            {
                c.add("trailer_overlap", git_dir, format!("node seq {s} is named by commits {} and {short}", prev.to_hex_with_len(8)), "the history was rewritten by hand; re-create the repository with backfill from a copy".into(), false);
            }
        }
        if let (Some(turn), Some((turns, group_of_seq))) = (t.turn, turn_check)
            && let Some(&gi) = group_of_seq.get(&a)
            && turns[gi] != turn
        {
            c.add(
                "trailer_turn_mismatch",
                git_dir,
                format!(
                    "commit {short} says turn {turn}, the DAG says turn {}",
                    turns[gi]
                ),
                "the nodes' predecessors changed after the commit; check the node files".into(),
                false,
            );
        }
    }
}

/// The figures: DAG turns and turn commits per branch and in all.
fn stats(
    c: &mut Ctx<'_>,
    repo: &SessionRepo,
    commits: &[crate::git::CommitInfo],
    by_id: &HashMap<Oid, &crate::git::CommitInfo>,
    trailers: &HashMap<Oid, Trailers>,
    turns: &[u64],
    group_of_seq: &HashMap<u64, usize>,
) {
    for info in commits {
        if is_turn_commit(info, &trailers[&info.id]) {
            c.out.stats.turn_commits += 1;
        } else if !info.parents.is_empty() {
            c.out.stats.other_commits += 1;
        }
    }
    for (name, tip) in repo.branches().unwrap_or_default() {
        let mut b = BranchStats {
            name,
            tip: tip.to_string(),
            ..Default::default()
        };
        let mut last_turn: Option<u64> = None;
        let mut cur = by_id.get(&tip).copied();
        while let Some(info) = cur {
            let t = &trailers[&info.id];
            if is_turn_commit(info, t) {
                b.turn_commits += 1;
                if last_turn.is_none()
                    && let Some((a, _)) = t.nodes
                {
                    last_turn = group_of_seq.get(&a).map(|g| turns[*g]);
                }
            } else if !info.parents.is_empty() {
                b.other_commits += 1;
            }
            cur = info.parents.first().and_then(|p| by_id.get(p).copied());
        }
        b.dag_turns = last_turn.unwrap_or(b.turn_commits);
        c.out.stats.branches.push(b);
    }
}

/// Blobs of the newest tree that the object database lacks, or holds as an
/// empty loose file: what a crash leaves of an object whose bytes never
/// reached the disk (the file is there, so nothing writes it again, and git
/// fails on it). Other damage inside a file is found by `--objects`, which
/// reads every object.
fn missing_blobs(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    entries: &[(String, u32, Oid)],
) {
    let lost: Vec<BadObject> = entries
        .iter()
        .filter(|(_, mode, _)| *mode != 0o160000)
        .filter_map(|(path, _, id)| {
            let why = if !repo.object_exists(*id) {
                "missing"
            } else if std::fs::symlink_metadata(repo.loose_path(*id)).is_ok_and(|m| m.len() == 0) {
                "an empty file"
            } else {
                return None;
            };
            Some(BadObject {
                id: *id,
                path: Some(path.clone()),
                why: why.into(),
            })
        })
        .collect();
    report_lost_blobs(c, sd, repo, lost, |n| {
        format!("{n} blob(s) of the latest commit are missing or damaged")
    });
}

/// Report lost objects, as one finding for those `verify --fix` stores
/// again from a file of the session that holds their bytes (queued in
/// `rewrite`), and one for the rest, which need a backup. A blob counts as
/// repairable only when it is missing or its copy is loose: a damaged copy
/// inside a pack would still be read first.
fn report_lost_blobs(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    lost: Vec<BadObject>,
    what: impl Fn(usize) -> String,
) {
    let (fixable, rest): (Vec<BadObject>, Vec<BadObject>) = lost.into_iter().partition(|l| {
        l.path
            .as_deref()
            .is_some_and(|p| file_holds_blob(&sd.dir.join(p), l.id))
            && (!repo.object_exists(l.id)
                || std::fs::symlink_metadata(repo.loose_path(l.id)).is_ok())
    });
    let listed = |ls: &[BadObject]| {
        ls.iter()
            .take(3)
            .map(|l| match &l.path {
                Some(p) => format!("{p} ({}, {})", l.id, l.why),
                None => format!("{} ({})", l.id, l.why),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !fixable.is_empty() {
        c.add(
            "object_missing",
            &sd.git_dir(),
            format!(
                "{}: {}; the session's files still hold their bytes",
                what(fixable.len()),
                listed(&fixable)
            ),
            format!("git-session verify --fix {}", c.id),
            true,
        );
        for l in fixable {
            if !c.out.rewrite.iter().any(|r| r.blob == l.id) {
                c.out.rewrite.push(Restore {
                    rel: l.path.expect("a repairable blob has a path"),
                    blob: l.id,
                });
            }
        }
    }
    if !rest.is_empty() {
        c.add(
            "object_missing",
            &sd.git_dir(),
            format!("{}: {}", what(rest.len()), listed(&rest)),
            "restore the repository from a backup; `git fsck` lists what is lost".into(),
            false,
        );
    }
}

/// Whether the regular file at `path` (never through a link) holds the
/// bytes of blob `id`.
fn file_holds_blob(path: &Path, id: Oid) -> bool {
    matches!(blob_in_file(path, id), Ok(Some(_)))
}

/// The bytes of the file at `path` when it is a regular file (never read
/// through a link) holding blob `id`; `None` when it is not one, or holds
/// other bytes: what `verify --fix` stores a lost blob again from.
pub fn blob_in_file(path: &Path, id: Oid) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    if !std::fs::symlink_metadata(path)?.is_file() {
        return Ok(None);
    }
    let mut data = Vec::new();
    crate::layout::atomic::no_follow(std::fs::OpenOptions::new().read(true))
        .open(path)?
        .read_to_end(&mut data)?;
    Ok((crate::git::blob_id(&data) == id).then_some(data))
}

/// Whether `path` holds the bytes of blob `id`: the index's stat data
/// answers for a file whose stat did not change; otherwise it is hashed.
fn same_as_blob(
    path: &Path,
    rel: &str,
    id: Oid,
    index: Option<&crate::git::Index>,
) -> Option<Vec<u8>> {
    let md = std::fs::symlink_metadata(path).ok()?;
    let cached = index.and_then(|i| {
        let e = i.entry(rel.as_bytes())?;
        Some(e.id == id && e.stat_matches(&md))
    });
    if cached == Some(true) {
        return None;
    }
    if !md.is_file() && !md.file_type().is_symlink() {
        return Some(Vec::new()); // a FIFO or device is never read
    }
    let data = if md.file_type().is_symlink() {
        std::fs::read_link(path)
            .ok()?
            .as_os_str()
            .as_encoded_bytes()
            .to_vec()
    } else {
        crate::layout::atomic::read(path).ok()?
    };
    (crate::git::blob_id(&data) != id).then_some(data)
}

/// Committed nodes on disk against git: byte-identical, or a finding.
fn committed_nodes(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    on_disk: &[OnDisk],
    committed: &HashMap<String, Oid>,
    index: Option<&crate::git::Index>,
) {
    for d in on_disk {
        let Some(&blob) = committed.get(&d.file) else {
            continue;
        };
        let path = sd.history().join(&d.file);
        let rel = crate::layout::paths::history_entry(&d.file);
        let Some(now) = same_as_blob(&path, &rel, blob, index) else {
            continue;
        };
        let restore = Restore {
            rel: rel.clone(),
            blob,
        };
        let fix = format!("git-session verify --fix {}", c.id);
        if let Some(r) = &d.unparsable {
            c.add(
                "node_damaged",
                &path,
                format!("the committed node no longer parses: {r}"),
                fix,
                true,
            );
            c.out.restore.push(restore);
            continue;
        }
        let was = repo.read_blob(blob).ok().and_then(|b| Node::parse(&b).ok());
        let parsed = Node::parse(&now).ok();
        let restamped = match (&was, &parsed) {
            (Some(was), Some(now)) => {
                let mut a = was.clone();
                a.metadata.clear();
                let mut b = now.clone();
                b.metadata.clear();
                a == b
            }
            _ => false,
        };
        if restamped {
            c.push(
                "node_restamped",
                Severity::Note,
                &path,
                "the node's metadata changed after its turn was committed".into(),
                fix,
                true,
            );
            c.out.restamped = true;
        } else {
            c.add(
                "node_changed",
                &path,
                "the committed node's content changed (node files are immutable)".into(),
                fix,
                true,
            );
            c.out.restore.push(restore);
        }
    }
}

/// A missing or unparsable meta.json is restored from the newest tree.
fn meta_repair(c: &mut Ctx<'_>, newest: &[(String, u32, Oid)]) {
    let copy = newest
        .iter()
        .find(|(p, _, _)| p == crate::layout::paths::META);
    let id = c.id.to_string();
    for f in c
        .out
        .findings
        .iter_mut()
        .filter(|f| matches!(f.kind, "meta_missing" | "meta_unparsable"))
    {
        match copy {
            Some(_) => {
                f.fix = format!("git-session verify --fix {id}");
                f.fixable = true;
            }
            None => {
                f.fix = "git has no copy: write a meta.json with the session's `id`".into();
            }
        }
    }
    if let Some((_, _, blob)) = copy
        && c.out
            .findings
            .iter()
            .any(|f| matches!(f.kind, "meta_missing" | "meta_unparsable"))
    {
        c.out.restore.push(Restore {
            rel: crate::layout::paths::META.into(),
            blob: *blob,
        });
    }
}

/// Uncommitted nodes that a commit no branch reaches holds: a deleted or
/// moved ref. Returns the files such commits hold.
fn lost_turns(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    reachable: &HashMap<Oid, &crate::git::CommitInfo>,
    uncommitted: &[&OnDisk],
) -> HashSet<String> {
    let mut found = HashSet::new();
    if uncommitted.is_empty() {
        return found;
    }
    let wanted: HashSet<&str> = uncommitted.iter().map(|d| d.file.as_str()).collect();
    // Each unreachable commit and the wanted files its tree holds.
    let mut candidates: Vec<(crate::git::CommitInfo, HashSet<String>)> = Vec::new();
    for id in repo.every_commit().unwrap_or_default() {
        if reachable.contains_key(&id) {
            continue;
        }
        let Ok(info) = repo.commit_info(id) else {
            continue;
        };
        let t = Trailers::parse(&info.message);
        if t.session.as_deref().is_some_and(|s| s != c.id) {
            continue;
        }
        let Ok(Some(hist)) = repo.tree_entry(info.tree, "history") else {
            continue;
        };
        let Ok(entries) = repo.tree_entries(hist) else {
            continue;
        };
        let holds: HashSet<String> = entries
            .into_iter()
            .map(|(name, _, _)| name)
            .filter(|n| wanted.contains(n.as_str()))
            .collect();
        if !holds.is_empty() {
            candidates.push((info, holds));
        }
    }
    // Few refs: the commit holding the most of what is still lost first.
    let head = repo.head().ok();
    let branches = repo.branches().unwrap_or_default();
    // Read once: each commit walked below is named from it.
    let catalog = Catalog::read(&sd.history()).ok();
    let owned = owned_commits(repo, &branches, sd, catalog.as_ref());
    let mut used: HashSet<String> = HashSet::new();
    loop {
        let best = candidates
            .iter()
            .enumerate()
            .map(|(i, (info, holds))| {
                (
                    holds.iter().filter(|f| !found.contains(*f)).count(),
                    info.time,
                    i,
                )
            })
            .filter(|(n, _, _)| *n > 0)
            .max();
        let Some((_, _, i)) = best else { break };
        let (info, holds) = &candidates[i];
        found.extend(holds.iter().cloned());
        let lost = restore_ref(
            info,
            repo,
            &owned,
            &branches,
            head.as_ref(),
            &used,
            (sd, catalog.as_ref()),
        );
        used.insert(lost.branch.clone());
        c.add(
            "turn_unreachable",
            &sd.git_dir(),
            format!(
                "{} node(s) are only in commit {} ({}), which no branch reaches",
                holds.len(),
                info.id.to_hex_with_len(8),
                info.message.lines().next().unwrap_or("")
            ),
            format!(
                "git-session verify --fix {} ({} `{}`)",
                c.id,
                if lost.old.is_some() {
                    "fast-forwards"
                } else {
                    "creates"
                },
                lost.branch
            ),
            true,
        );
        c.out.lost.push(lost);
    }
    found
}

/// The commits each branch was made of: from its tip back to the commit
/// that started it (the one its name was made after: [`retry_branch_of`]),
/// or, for `main` (and a branch whose start is not found), to the root.
/// A commit no branch owns is on no branch's own line of history, even when
/// a later branch forked from it reaches it.
fn owned_commits(
    repo: &SessionRepo,
    branches: &[(String, Oid)],
    sd: &SessionDir,
    catalog: Option<&Catalog>,
) -> HashMap<Oid, String> {
    let mut owned: HashMap<Oid, String> = HashMap::new();
    for (name, tip) in branches {
        let mut line = Vec::new();
        let mut started = false;
        let mut cur = Some(*tip);
        while let Some(id) = cur {
            if line.len() > 100_000 || line.contains(&id) {
                break;
            }
            let Ok(info) = repo.commit_info(id) else {
                break;
            };
            line.push(id);
            if name != crate::git::MAIN && retry_branch_of(&info, sd, catalog) == *name {
                started = true;
                break;
            }
            cur = info.parents.first().copied();
        }
        // A retry branch whose start is not found owns its tip alone.
        if name != crate::git::MAIN && !started {
            line.truncate(1);
        }
        for id in line {
            owned.entry(id).or_insert_with(|| name.clone());
        }
    }
    owned
}

/// The ref that brings a lost commit back: the branch it descends from (a
/// moved ref fast-forwards), HEAD's unborn branch (a deleted one), `main`
/// for a lost line that goes back to the root when the session has no
/// `main`, or the retry branch its line of history was created as: named,
/// as the mirror named it, after the commit that forked that line (the
/// oldest on it that no branch owns, [`owned_commits`], or a regenerated
/// turn, which always starts a branch), not after its tip, so that what
/// knows the branch by name finds it again.
fn restore_ref(
    info: &crate::git::CommitInfo,
    repo: &SessionRepo,
    owned: &HashMap<Oid, String>,
    branches: &[(String, Oid)],
    head: Option<&crate::git::Head>,
    used: &HashSet<String>,
    (sd, catalog): (&SessionDir, Option<&Catalog>),
) -> LostTip {
    // Walk back along first parents to the first commit a branch owns; the
    // oldest commit before it forked the line.
    let mut fork = info.clone();
    let mut to_root = false;
    let mut steps = 0;
    loop {
        if Trailers::parse(&fork.message).nodes.is_some()
            && fork
                .message
                .lines()
                .next()
                .is_some_and(|s| s.contains(" (regenerated): "))
        {
            break;
        }
        let Some(id) = fork.parents.first().copied() else {
            to_root = true;
            break;
        };
        if let Some(b) = owned.get(&id) {
            // A branch whose tip it is: moved back (fast-forward it).
            if let Some((name, t)) = branches.iter().find(|(n, t)| n == b && *t == id)
                && !used.contains(name)
            {
                return LostTip {
                    commit: info.id,
                    branch: name.clone(),
                    old: Some(*t),
                };
            }
            break;
        }
        steps += 1;
        if steps > 100_000 {
            break;
        }
        let Ok(older) = repo.commit_info(id) else {
            break;
        };
        fork = older;
    }
    if let Some(h) = head
        && h.commit.is_none()
        && let Some(b) = &h.branch
        && !used.contains(b)
    {
        return LostTip {
            commit: info.id,
            branch: b.clone(),
            old: None,
        };
    }
    // A session has `main`: without it, the lost line from the root is main.
    let main = crate::git::MAIN;
    if to_root && !branches.iter().any(|(b, _)| b == main) && !used.contains(main) {
        return LostTip {
            commit: info.id,
            branch: main.to_string(),
            old: None,
        };
    }
    let base = retry_branch_of(&fork, sd, catalog);
    let mut name = base.clone();
    let mut k = 1;
    while used.contains(&name) || branches.iter().any(|(b, _)| *b == name) {
        k += 1;
        name = format!("{base}-{k}");
    }
    LostTip {
        commit: info.id,
        branch: name,
        old: None,
    }
}

/// The retry branch commit `fork` was the first commit of, named as the
/// mirror names it: [`session::retry_name`] of the nodes its `Nodes:`
/// trailer names (`retry-<its first top-level reply>`, else `retry-<its
/// first node>`), or `retry-<commit id>` when it names none that can be
/// read. (Its tree holds every node committed before it, on any branch: the
/// trailer, not the tree, says which nodes it committed.) `catalog`: the
/// session's, read once by the caller.
fn retry_branch_of(
    fork: &crate::git::CommitInfo,
    sd: &SessionDir,
    catalog: Option<&Catalog>,
) -> String {
    let held = Trailers::parse(&fork.message).nodes;
    let mut nodes: Vec<crate::layout::schema::Node> = match (held, catalog) {
        (Some((a, b)), Some(cat)) => cat
            .entries()
            .filter(|e| a <= e.seq && e.seq <= b)
            .filter_map(|e| crate::layout::history::read_node(&sd.history(), &e).ok())
            .collect(),
        _ => Vec::new(),
    };
    nodes.sort_by_key(|n| n.seq);
    match session::retry_name(&nodes) {
        Some(id) => crate::git::retry_branch(id),
        None => format!("retry-{}", fork.id.to_hex_with_len(12)),
    }
}

/// The git index against the newest commit's tree (the index mirrors the
/// last commit written; HEAD may be on an older turn).
fn git_index(
    c: &mut Ctx<'_>,
    sd: &SessionDir,
    newest: Oid,
    entries: &[(String, u32, Oid)],
    index: &crate::git::Index,
) {
    let differ = index_matches(entries, index);
    if !differ.is_empty() {
        c.add(
            "git_index_stale",
            &sd.git_dir().join("index"),
            format!(
                "{} index entr(ies) differ from commit {}: {}",
                differ.len(),
                newest.to_hex_with_len(8),
                differ
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!("git-session verify --fix {}", c.id),
            true,
        );
        c.out.index_from = Some(newest);
    }
}

/// The paths where the index and a tree's entries disagree, sorted.
fn index_matches(entries: &[(String, u32, Oid)], index: &crate::git::Index) -> Vec<String> {
    let tree: BTreeMap<&str, Oid> = entries.iter().map(|(p, _, id)| (p.as_str(), *id)).collect();
    let mut differ: Vec<String> = Vec::new();
    let mut seen = 0usize;
    for (path, id) in index.entries() {
        let path = String::from_utf8_lossy(path).into_owned();
        match tree.get(path.as_str()) {
            Some(t) if *t == id => seen += 1,
            Some(_) => {
                seen += 1;
                differ.push(path);
            }
            None => differ.push(path),
        }
    }
    if seen < tree.len() {
        differ.extend(
            tree.keys()
                .filter(|p| !index.contains(p.as_bytes()))
                .map(|p| p.to_string()),
        );
    }
    differ.sort();
    differ
}

/// Files other than nodes that differ from the newest tree, or that it
/// lacks: what the next turn will commit.
fn pending_files(
    sd: &SessionDir,
    entries: &[(String, u32, Oid)],
    index: Option<&crate::git::Index>,
) -> usize {
    let mut n = 0;
    let mut in_tree: HashSet<&str> = HashSet::new();
    for (path, _, id) in entries {
        in_tree.insert(path);
        if path.starts_with(crate::layout::paths::HISTORY_PREFIX) {
            continue;
        }
        let full = sd.dir.join(path);
        if std::fs::symlink_metadata(&full).is_err()
            || same_as_blob(&full, path, *id, index).is_some()
        {
            n += 1;
        }
    }
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
                n += 1;
            }
        }
    }
    n
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
