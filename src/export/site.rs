//! `export --all`: every session as a site in a directory: `index.<ext>`,
//! `projects/<project>.<ext>`, and per session `sessions/<id>/index.<ext>`
//! (its current branch), `sessions/<id>/branch-<name>.<ext>` (each other
//! branch) and `sessions/<id>/attachments/`.
//!
//! Incremental: a manifest in the directory ([`MANIFEST`]) records, per
//! session, a key of what its pages are made from (meta.json, the node
//! files and attachments as listed, the refs, its project), each file
//! written with its hash, and its title and preview as the index shows
//! them. A session whose key is unchanged is not read
//! again; a page whose bytes are unchanged is not written again; files of
//! the manifest that are no longer made are removed (and nothing else).

use std::collections::BTreeMap;
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use super::journal::Journal;
use super::model::{Conversation, Patches, Session};
use super::{Format, Links, Mask, Options};
use crate::error::{IoContext, Result, Usage};
use crate::git::patch::CommitPatch;
use crate::layout::lock::{self, LockOptions};
use crate::layout::projects::Project;
use crate::layout::{SessionDir, StateDir};
use crate::out::Printer;

/// The manifest's file name in the output directory.
pub const MANIFEST: &str = ".git-session-export.json";

/// What changes every page: a new revision of the renderers.
const REVISION: u32 = 6;

/// How many agent commits a project page shows.
const PROJECT_COMMITS: usize = 200;

/// A session as the index and the project pages list it.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub title: String,
    pub preview: String,
    pub status: String,
    pub archived: bool,
    pub pinned: bool,
    pub updated_at: f64,
    pub source: String,
    /// Its project's id (none for the default project).
    pub project: Option<String>,
    /// Whether the site has its pages.
    pub has_page: bool,
}

/// An agent commit as a project page shows it.
#[derive(Debug, Clone)]
pub struct CommitView {
    pub commit: String,
    /// The session and turn its subject names (`[agent <session>] turn
    /// <n>: …`).
    pub session: String,
    pub turn: Option<u64>,
    pub subject: String,
    /// The commit read from the repository (masked).
    pub patch: Option<CommitPatch>,
}

/// A project's page.
#[derive(Debug, Clone)]
pub struct ProjectPage {
    pub project: Project,
    /// Its directory, as shown (masked).
    pub path: String,
    /// How many sessions it has.
    pub sessions: usize,
    pub commits: Vec<CommitView>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Manifest {
    /// An export is under way (or was killed): the journal
    /// ([`super::journal`]) lists the files it may have written since.
    #[serde(default)]
    in_progress: bool,
    revision: u32,
    version: String,
    format: String,
    redact: bool,
    /// Per session: its key and its files (path → hash).
    sessions: BTreeMap<String, Entry>,
    /// The index and project pages: path → hash.
    pages: BTreeMap<String, String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Entry {
    key: String,
    files: BTreeMap<String, String>,
    /// Its title and preview as its pages were made (masked, then cut).
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    preview: Option<String>,
}

impl Entry {
    /// `row`'s title and preview made the session's own.
    fn name(&self, row: &mut Row) {
        if let Some(t) = &self.title {
            row.title = t.clone();
        }
        if let Some(p) = &self.preview {
            row.preview = p.clone();
        }
    }
}

/// What [`export_all`] did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Files written, relative to the directory.
    pub written: Vec<String>,
    /// Files of an earlier export removed (no longer made).
    pub removed: Vec<String>,
    /// Sessions on the site.
    pub sessions: u64,
    /// Sessions read and rendered anew.
    pub rendered: Vec<String>,
    /// Sessions whose pages were kept as they were.
    pub unchanged: u64,
    /// Sessions that could not be exported (each warned of).
    pub failed: Vec<String>,
    /// Secrets masked in what was rendered.
    pub masked: u64,
}

/// What every session's export is given, and where it records the files
/// it writes.
struct Run<'a> {
    state: &'a StateDir,
    dir: &'a Path,
    opts: &'a Options,
    locks: LockOptions,
    mask: &'a Mask,
    patches: Patches,
    journal: Journal,
}

impl Run<'_> {
    /// Write `files` (relative to the directory) whose bytes are not what
    /// `before` records (or which are missing), each recorded in the
    /// journal first; their paths, and each file's hash.
    fn write(
        &mut self,
        files: Vec<(String, Vec<u8>)>,
        before: Option<&BTreeMap<String, String>>,
    ) -> Result<(Vec<String>, BTreeMap<String, String>)> {
        let mut hashes = BTreeMap::new();
        let mut changed = Vec::new();
        for (rel, bytes) in files {
            let hash = crate::git::sha1_hex(&bytes);
            let same = before.and_then(|b| b.get(&rel)) == Some(&hash);
            if !same || !self.dir.join(&rel).is_file() {
                changed.push((rel.clone(), bytes));
            }
            hashes.insert(rel, hash);
        }
        let rels: Vec<&str> = changed.iter().map(|(r, _)| r.as_str()).collect();
        self.journal.record(&rels)?;
        let mut written = Vec::new();
        for (rel, bytes) in changed {
            super::write_file(self.dir, Path::new(&rel), &bytes)?;
            written.push(rel);
        }
        Ok((written, hashes))
    }
}

/// Write `m` as the directory's manifest.
fn write_manifest(dir: &Path, m: &Manifest) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(m).expect("the manifest serializes");
    bytes.push(b'\n');
    crate::layout::atomic::write(&dir.join(MANIFEST), &bytes)
}

/// Export every session of `state` into `dir` as a site.
pub fn export_all(
    state: &StateDir,
    dir: &Path,
    opts: &Options,
    locks: LockOptions,
    printer: &Printer,
) -> Result<Summary> {
    let old = open_dir(state, dir, opts)?;
    // The directory is the export's before its first page: a run killed
    // from here on leaves a manifest (under way) and a journal of what it
    // wrote, which the next run adopts.
    write_manifest(
        dir,
        &Manifest {
            in_progress: true,
            ..old.clone()
        },
    )?;
    let mask = Mask::of(state, opts)?;
    let mut run = Run {
        state,
        dir,
        opts,
        locks,
        mask: &mask,
        patches: Patches::default(),
        journal: Journal::start(dir)?,
    };
    let ext = opts.format.ext();
    let registered = crate::layout::projects::read(state)?;
    let mut rows = rows(state, locks, &registered, &mask)?;
    let mut new = Manifest {
        revision: REVISION,
        version: env!("CARGO_PKG_VERSION").into(),
        format: opts.format.name().into(),
        redact: opts.redact,
        ..Manifest::default()
    };
    let mut sum = Summary {
        sessions: rows.len() as u64,
        ..Summary::default()
    };
    let progress = crate::out::Progress::new(printer, rows.len() as u64, "export");
    for row in &mut rows {
        let before = old.sessions.get(&row.id);
        match session_files(&mut run, &row.id, before) {
            Ok((entry, written, rendered)) => {
                sum.written.extend(written);
                if rendered {
                    sum.rendered.push(row.id.clone());
                } else {
                    sum.unchanged += 1;
                }
                row.has_page = true;
                entry.name(row);
                new.sessions.insert(row.id.clone(), entry);
            }
            Err(e) => {
                progress.suspend(|| {
                    printer.warn(format!(
                        "session `{}` is not exported: {}",
                        row.id,
                        crate::out::in_one_line(&e.to_string())
                    ))
                });
                sum.failed.push(row.id.clone());
                // Its pages of an earlier export stay.
                if let Some(b) = before {
                    row.has_page = b
                        .files
                        .contains_key(&format!("sessions/{}/index.{ext}", row.id));
                    b.name(row);
                    new.sessions.insert(row.id.clone(), b.clone());
                }
            }
        }
        crate::layout::atomic::crash_point("export-session-written");
        progress.inc();
    }
    progress.finish();
    let projects = project_pages(&registered, &rows, &mut run.patches, &mask);
    let mut pages: Vec<(String, Vec<u8>)> = vec![(
        format!("index.{ext}"),
        match opts.format {
            Format::Html => super::html::index_page(&rows, &projects),
            Format::Markdown => super::markdown::index_page(&rows, &projects),
        }
        .into_bytes(),
    )];
    for p in &projects {
        pages.push((
            format!("projects/{}.{ext}", p.project.id),
            match opts.format {
                Format::Html => super::html::project_page(p, &rows),
                Format::Markdown => super::markdown::project_page(p, &rows),
            }
            .into_bytes(),
        ));
    }
    let (written, hashes) = run.write(pages, Some(&old.pages))?;
    sum.written.extend(written);
    new.pages = hashes;
    sum.removed = remove_stale(dir, &old, &new);
    sum.masked = mask.count();
    write_manifest(dir, &new)?;
    run.journal.finish()?;
    Ok(sum)
}

/// The sessions of the index as rows, most recent first.
fn rows(
    state: &StateDir,
    locks: LockOptions,
    registered: &crate::layout::projects::Projects,
    mask: &Mask,
) -> Result<Vec<Row>> {
    let mut text = crate::lifecycle::RowsText::default();
    let index = crate::lifecycle::load_rows(state, locks, &mut text)?;
    let (project_of, _) = crate::lifecycle::projects(state);
    let mut rows: Vec<Row> = index
        .iter()
        .map(|(id, r)| {
            use crate::layout::registry::ListRow;
            Row {
                id: id.clone(),
                // Cut before they were masked: replaced by the session's
                // own (cut from its texts masked whole) once it is read.
                title: match ListRow::str(&r.title) {
                    "" => id.clone(),
                    t => mask.cut_str(t),
                },
                preview: mask.cut_str(ListRow::str(&r.preview)),
                status: ListRow::str(&r.status).to_string(),
                archived: ListRow::flag(&r.archived),
                pinned: ListRow::flag(&r.pinned),
                updated_at: r.updated_at.as_f64().unwrap_or(0.0),
                source: mask.str(ListRow::str(&r.source)),
                project: project_of
                    .get(id)
                    .map(|(pid, _)| pid.clone())
                    .filter(|p| p != "default" && registered.contains_key(p)),
                has_page: false,
            }
        })
        .collect();
    drop(index);
    rows.sort_by(|a, b| {
        b.updated_at
            .total_cmp(&a.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    Ok(rows)
}

/// The output directory made ready, and the manifest of the export that
/// is there (empty when there is none, or of another format or kind).
/// A directory that holds other files and no manifest is refused: its
/// files are not ours to replace.
fn open_dir(state: &StateDir, dir: &Path, opts: &Options) -> Result<Manifest> {
    refuse_state_dir(state, dir)?;
    std::fs::create_dir_all(dir).io("create", dir)?;
    let path = dir.join(MANIFEST);
    let Some(bytes) = crate::layout::atomic::read_if_present(&path)? else {
        let used = std::fs::read_dir(dir).io("read", dir)?.next().is_some();
        if used {
            return Err(Usage::ExportDirInUse {
                dir: dir.to_path_buf(),
            }
            .into());
        }
        return Ok(Manifest::default());
    };
    let m: Manifest = serde_json::from_slice(&bytes).unwrap_or_default();
    let same = m.revision == REVISION
        && m.version == env!("CARGO_PKG_VERSION")
        && m.format == opts.format.name()
        && m.redact == opts.redact;
    let was_in_progress = m.in_progress;
    let mut m = match same {
        true => m,
        // Every page made anew; the files it lists are still removed when
        // no longer made.
        false => Manifest {
            sessions: m
                .sessions
                .into_iter()
                .map(|(k, e)| {
                    let files = e.files.into_keys().map(|f| (f, String::new())).collect();
                    (
                        k,
                        Entry {
                            key: String::new(),
                            files,
                            ..Entry::default()
                        },
                    )
                })
                .collect(),
            pages: m.pages.into_keys().map(|p| (p, String::new())).collect(),
            ..Manifest::default()
        },
    };
    // A run killed midway: the files its journal lists are the export's
    // (made again when still made, removed when not).
    if was_in_progress {
        for rel in super::journal::recorded(dir) {
            let listed = m.pages.contains_key(&rel)
                || m.sessions.values().any(|e| e.files.contains_key(&rel));
            if !listed {
                m.pages.insert(rel, String::new());
            }
        }
    }
    m.in_progress = false;
    Ok(m)
}

/// An export into the state dir is refused: its pages would be taken for
/// sessions, or overwrite them.
pub fn refuse_state_dir(state: &StateDir, dir: &Path) -> Result<()> {
    let Ok(s) = state.root.canonicalize() else {
        return Ok(());
    };
    // The directory as it will be: its nearest existing ancestor resolved
    // (links included), the rest as given.
    let mut existing = dir;
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(p), Some(name)) => {
                rest.push(name);
                existing = p;
            }
            _ => break,
        }
    }
    let base = match existing.as_os_str().is_empty() {
        true => Path::new("."),
        false => existing,
    };
    let Ok(mut d) = base.canonicalize() else {
        return Ok(());
    };
    d.extend(rest.iter().rev());
    if d.starts_with(&s) {
        return Err(Usage::ExportInStateDir {
            dir: dir.to_path_buf(),
            state: s.clone(),
        }
        .into());
    }
    Ok(())
}

/// One session's files: kept when its key is the one recorded, else read,
/// rendered and written where changed. (entry, files written, rendered?)
fn session_files(
    run: &mut Run,
    id: &str,
    before: Option<&Entry>,
) -> Result<(Entry, Vec<String>, bool)> {
    let (state, dir, opts, mask) = (run.state, run.dir, run.opts, run.mask);
    let sd = state.find_session(id)?;
    let _lock = lock::session(&sd, lock::Kind::Shared, run.locks)?;
    let project =
        crate::project::of_session(state, id, &crate::layout::schema::Meta::read(&sd.meta())?)?;
    let key = session_key(&sd, project.as_ref(), opts, mask);
    if let Some(b) = before
        && b.key == key
        && b.files.keys().all(|f| dir.join(f).is_file())
    {
        return Ok((b.clone(), Vec::new(), false));
    }
    let session = Session::read(state, &sd, id, mask, &mut |_| {})?;
    let ext = opts.format.ext();
    let base = format!("sessions/{id}");
    let links_for = |s: &Session| Links {
        index: Some(format!("../../index.{ext}")),
        project: s
            .project
            .as_ref()
            .map(|p| format!("../../projects/{}.{ext}", super::url_segment(&p.id))),
        branches: (0..s.branches.len())
            .map(|i| Some(s.page_file(i, ext)))
            .collect(),
        attachments: Some("attachments/".into()),
    };
    let links = links_for(&session);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let count = session.branches.len().max(1);
    for b in 0..count {
        let conv = Conversation::of(&session, b, mask, &mut run.patches);
        let page = match opts.format {
            Format::Html => super::html::session_page(&session, &conv, &links),
            Format::Markdown => super::markdown::session_page(&session, &conv, &links),
        };
        let name = match session.branches.is_empty() {
            true => format!("index.{ext}"),
            false => session.page_file(b, ext),
        };
        files.push((format!("{base}/{name}"), page.into_bytes()));
    }
    for (name, bytes) in session.attachment_files(None, mask) {
        files.push((format!("{base}/attachments/{name}"), bytes));
    }
    let (written, hashes) = run.write(files, before.map(|b| &b.files))?;
    let entry = Entry {
        key,
        files: hashes,
        title: Some(session.title.clone()),
        preview: Some(session.preview.clone()),
    };
    Ok((entry, written, true))
}

/// What a session's pages are made from, hashed: meta.json, the node files,
/// the turns in progress (the import's pending area) and attachments as
/// listed (name, size, time, inode: a file rewritten is
/// a new inode), the refs, its project, and what the export is asked (the
/// secrets allowed included).
fn session_key(sd: &SessionDir, project: Option<&Project>, opts: &Options, mask: &Mask) -> String {
    use std::os::unix::fs::MetadataExt;
    let mut h: Vec<u8> = format!(
        "{REVISION} {} {} {}\n",
        env!("CARGO_PKG_VERSION"),
        opts.format.name(),
        opts.redact
    )
    .into_bytes();
    h.extend(std::fs::read(sd.meta()).unwrap_or_default());
    h.push(0);
    let git = sd.git_dir();
    for listed in [
        sd.history(),
        sd.import_pending(),
        sd.attachments(),
        git.join("refs/heads"),
        git.join("packed-refs"),
        git.join("HEAD"),
    ] {
        let mut entries: Vec<(String, u64, i64, i64, u64)> = walkdir::WalkDir::new(&listed)
            .follow_links(false)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((
                    e.path().to_string_lossy().into_owned(),
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ino(),
                ))
            })
            .collect();
        entries.sort();
        for e in entries {
            h.extend(format!("{e:?}\n").as_bytes());
        }
    }
    if let Some(p) = project {
        h.extend(format!("{} {} {:?} {}\n", p.id, p.name, p.path, p.auto_commit).as_bytes());
    }
    // The secrets the allow-list lets through.
    h.extend(mask.allowed().join(" ").as_bytes());
    h.push(b'\n');
    // HEAD is small: its content, not only its time.
    h.extend(std::fs::read(git.join("HEAD")).unwrap_or_default());
    crate::git::sha1_hex(&h)
}

/// The page of each registered project (not the default one).
fn project_pages(
    registered: &crate::layout::projects::Projects,
    rows: &[Row],
    patches: &mut Patches,
    mask: &Mask,
) -> Vec<ProjectPage> {
    let mut out = Vec::new();
    for (id, p) in registered {
        if id == "default" || crate::layout::ids::project_id(id).is_err() {
            continue;
        }
        let project = Project::from(id, p);
        let listed = patches
            .repo(&project)
            .and_then(|r| r.agent_commits(PROJECT_COMMITS).ok())
            .unwrap_or_default();
        let commits = listed
            .into_iter()
            .map(|(cid, msg, _)| {
                let subject = msg.lines().next().unwrap_or("");
                let session = subject
                    .strip_prefix("[agent ")
                    .and_then(|s| s.split(']').next())
                    .unwrap_or("")
                    .to_string();
                let commit = cid.to_string();
                CommitView {
                    patch: patches.of_project(&project, &commit, mask),
                    turn: crate::session::Trailers::parse(&msg).turn,
                    subject: super::agent_message(mask, subject),
                    session,
                    commit,
                }
            })
            .collect();
        out.push(ProjectPage {
            path: mask.str(
                &project
                    .path
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            sessions: rows
                .iter()
                .filter(|r| r.project.as_deref() == Some(id))
                .count(),
            commits,
            project,
        });
    }
    out.sort_by(|a, b| {
        a.project
            .name
            .cmp(&b.project.name)
            .then(a.project.id.cmp(&b.project.id))
    });
    out
}

/// Remove the files `old` lists that `new` does not (and the session
/// directories left empty); the paths removed.
fn remove_stale(dir: &Path, old: &Manifest, new: &Manifest) -> Vec<String> {
    let made: std::collections::BTreeSet<&String> = new
        .sessions
        .values()
        .flat_map(|e| e.files.keys())
        .chain(new.pages.keys())
        .collect();
    let mut removed = Vec::new();
    let listed = old
        .sessions
        .values()
        .flat_map(|e| e.files.keys())
        .chain(old.pages.keys());
    for rel in listed {
        if made.contains(rel) || !plain_relative(rel) {
            continue;
        }
        // Never through a link planted on the way.
        let Ok(path) = super::under(dir, Path::new(rel)) else {
            continue;
        };
        if std::fs::remove_file(&path).is_ok() {
            removed.push(rel.clone());
            // The session's directories, once empty (never anything else).
            let mut d = path.parent();
            while let Some(p) = d.filter(|p| *p != dir && p.starts_with(dir.join("sessions"))) {
                if std::fs::remove_dir(p).is_err() {
                    break;
                }
                d = p.parent();
            }
        }
    }
    removed.sort();
    removed
}

/// A path the manifest may name: relative, plain names only (no `..`, no
/// name starting with `.`).
fn plain_relative(rel: &str) -> bool {
    !rel.is_empty()
        && Path::new(rel).components().all(|c| match c {
            Component::Normal(n) => !n.to_string_lossy().starts_with('.'),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_only_plain_paths_in_the_directory() {
        assert!(plain_relative("sessions/s1/index.html"));
        assert!(!plain_relative("../x"));
        assert!(!plain_relative("/etc/passwd"));
        assert!(!plain_relative("sessions/.git/x"));
        assert!(!plain_relative(""));
    }
}
