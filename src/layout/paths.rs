//! State-directory resolution (SPEC §1) and every path of the on-disk layout.
//! No other module spells a file name.

use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};

use super::ids;

/// Prefix of every temporary file this tool writes; `verify` reports leftovers,
/// and session commits never include them.
pub const TEMP_PREFIX: &str = ".gs-tmp-";

/// Past this size the hook log is moved to [`StateDir::hook_log_older`]
/// (replacing it) and begun anew.
pub const HOOK_LOG_BYTES: u64 = 1 << 20;

/// A session's metadata file, relative to its directory.
pub const META: &str = "meta.json";
/// The directory of a session's node files, relative to its directory.
pub const HISTORY: &str = "history";
/// The agent's working directory of a session, relative to its directory.
pub const WORKDIR: &str = "workdir";
/// Where `append --attach` copies files, relative to [`WORKDIR`].
pub const ATTACHMENTS: &str = "attachments";
/// Every entry a session directory may hold (SPEC §2).
pub const SESSION_ENTRIES: &[&str] = &[META, HISTORY, WORKDIR, "context", "large_nodes", ".git"];

/// Whether `rel` (relative to a session directory) is its repository's
/// own to this place, never copied to another: `.git/config`, its hooks,
/// our private directory and the session lock.
pub fn is_local_to_repo(rel: &Path) -> bool {
    let git = Path::new(".git");
    rel == git.join("config")
        || rel.starts_with(git.join("hooks"))
        || rel.starts_with(git.join("git-session"))
        || rel == git.join("git-session.lock")
}

/// Whether `rel` (relative to a session directory) is a place of the
/// layout that must be a directory or a file, never a link: `.git/` and
/// everything below it, meta.json, `history/`, `workdir/` and its
/// attachments.
pub fn is_layout_place(rel: &Path) -> bool {
    rel.starts_with(".git")
        || [
            Path::new(META),
            Path::new(HISTORY),
            Path::new(WORKDIR),
            &Path::new(WORKDIR).join(ATTACHMENTS),
        ]
        .contains(&rel)
}
/// How the paths of node files start, relative to the session directory.
pub const HISTORY_PREFIX: &str = "history/";

/// The path of node file `file` relative to the session directory (as the
/// git tree and index name it).
pub fn history_entry(file: &str) -> String {
    format!("{HISTORY_PREFIX}{file}")
}

/// Whether a file name is `.git` as git (and `git fsck --strict`, which
/// rejects it as `hasDotgit`) sees it: any case, trailing dots or spaces, or
/// the 8.3 short name `git~1`. Such an entry is never committed.
pub fn is_dotgit(name: &[u8]) -> bool {
    let mut n = name.to_ascii_lowercase();
    while n.last().is_some_and(|b| *b == b'.' || *b == b' ') {
        n.pop();
    }
    n == b".git" || n == b"git~1"
}

/// A fresh temporary path of ours in `dir`: `.gs-tmp-<label>.<random>`
/// (sweeps after a crash find our temps by the prefix).
pub fn temp_path(dir: &Path, label: &str) -> PathBuf {
    dir.join(format!("{TEMP_PREFIX}{label}.{}", ids::generate("")))
}

/// The state directory: `<state>/sessions`, `<state>/projects`.
#[derive(Debug, Clone)]
pub struct StateDir {
    pub root: PathBuf,
}

/// `$HOME` (set and not empty), else a usage error saying `message` (what
/// cannot be found without it) with `help`.
pub fn home_dir(message: &str, help: &str) -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Error::usage("usage::no_home", message.to_string(), Some(help.into())))
}

impl StateDir {
    /// `--state-dir`, `$OPENPROGRAM_HOME`, `~/.openprogram-$OPENPROGRAM_PROFILE`, `~/.openprogram`.
    pub fn resolve(flag: Option<&Path>) -> Result<Self> {
        let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let root = if let Some(dir) = flag {
            dir.to_path_buf()
        } else if let Some(home) = non_empty("OPENPROGRAM_HOME") {
            PathBuf::from(home)
        } else {
            let home = home_dir(
                "cannot find the state directory: `$HOME` is not set",
                "pass `--state-dir DIR` or set `OPENPROGRAM_HOME`",
            )?;
            match non_empty("OPENPROGRAM_PROFILE") {
                Some(profile) => {
                    let profile = profile.to_string_lossy().into_owned();
                    if profile.contains('/') || profile == ".." || profile == "." {
                        return Err(Error::usage(
                            "usage::profile",
                            format!("invalid `OPENPROGRAM_PROFILE` `{profile}`"),
                            Some("a profile is a plain name without `/`".into()),
                        ));
                    }
                    home.join(format!(".openprogram-{profile}"))
                }
                None => home.join(".openprogram"),
            }
        };
        let root = if root.is_relative() {
            std::env::current_dir()
                .io("read the current directory", ".")?
                .join(root)
        } else {
            root
        };
        Ok(StateDir { root })
    }

    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }
    pub fn index_json(&self) -> PathBuf {
        self.sessions().join("index.json")
    }
    /// Append-only journal of index rows, folded into `index.json` by the next writer.
    pub fn index_journal(&self) -> PathBuf {
        self.sessions().join("index.journal")
    }
    /// The registry lock (SPEC §4): taken before any project or session lock.
    pub fn registry_lock(&self) -> PathBuf {
        self.sessions().join(".registry.lock")
    }
    pub fn locations_json(&self) -> PathBuf {
        self.sessions().join("locations.json")
    }
    pub fn projects_json(&self) -> PathBuf {
        self.root.join("projects").join("projects.json")
    }
    /// The lock of project `id`'s repository (SPEC §4): what is decided and
    /// written there for the agent (a turn's baseline, its agent commit) is
    /// done by one session at a time. Taken after the registry lock and
    /// before a session's.
    pub fn project_lock(&self, id: &str) -> PathBuf {
        self.root.join("projects").join(format!("{id}.lock"))
    }
    /// Where `git-session hook` writes the failures it keeps from the agent
    /// (one JSON object per line); `verify --all` reports them.
    pub fn hook_log(&self) -> PathBuf {
        self.root.join("git-session-hooks.log")
    }
    /// The hook log's older part: what it held when it passed
    /// [`HOOK_LOG_BYTES`], so that the two never hold much more than twice
    /// that.
    pub fn hook_log_older(&self) -> PathBuf {
        self.root.join("git-session-hooks.log.1")
    }
    /// `<state>/sync/`: what `remote`, `push` and `fetch` keep (SPEC §5.20).
    pub fn sync_dir(&self) -> PathBuf {
        self.root.join("sync")
    }
    /// The configured remotes: an object keyed by name, `{"url": …}` each.
    pub fn remotes_json(&self) -> PathBuf {
        self.sync_dir().join("remotes.json")
    }
    /// The sync lock: one `push`, `fetch` or `remote` change at a time. Taken
    /// before the registry lock.
    pub fn sync_lock(&self) -> PathBuf {
        self.sync_dir().join("sync.lock")
    }
    /// The transfer repository: a cache of the objects last pushed or
    /// fetched (rebuildable from the sessions and the remote), from which
    /// git pushes and into which it fetches.
    pub fn sync_repo(&self) -> PathBuf {
        self.sync_dir().join("repo")
    }
    /// What a push still has to send to remote `name`: one line per ref,
    /// rewritten as batches are confirmed.
    pub fn push_queue(&self, name: &str) -> PathBuf {
        self.sync_dir().join(format!("queue-{name}"))
    }
    /// Repo of a session in the default project.
    pub fn default_session_dir(&self, id: &str) -> PathBuf {
        self.sessions().join(id)
    }
    /// Repo of a session bound to project `project_id`.
    pub fn project_session_dir(&self, project_id: &str, id: &str) -> PathBuf {
        self.sessions().join("projects").join(project_id).join(id)
    }

    /// Make the directories down to the place of `target` (a session
    /// directory, a registry file, inside the state dir) and return its
    /// parent: never through a link planted in the state dir, each
    /// directory is checked, then made.
    pub fn make_parent_checked(&self, target: &Path) -> Result<PathBuf> {
        let parent = target
            .parent()
            .expect("a path in the state dir has a parent")
            .to_path_buf();
        let mut dir = self.root.clone();
        for part in parent
            .strip_prefix(&self.root)
            .unwrap_or(&parent)
            .components()
        {
            dir.push(part);
            super::atomic::refuse_unsafe(&dir)?;
            match std::fs::create_dir(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(e).io("create", &dir);
                }
                _ => {}
            }
        }
        Ok(parent)
    }

    /// Create `<state>/` (mode 0700) and `<state>/sessions/`.
    pub fn ensure(&self) -> Result<()> {
        if !self.root.exists() {
            std::fs::create_dir_all(&self.root).io("create the state directory", &self.root)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&self.root, std::fs::Permissions::from_mode(0o700))
                    .io("set permissions of", &self.root)?;
            }
        }
        let sessions = self.sessions();
        std::fs::create_dir_all(&sessions).io("create", &sessions)?;
        // Every writer of the state dir's own files comes here first.
        self.check_links()
    }

    /// The help line of an unknown session: the closest existing ids (as
    /// clap suggests commands), else where to see the sessions. Never an
    /// offer to create it: a read or a delete of a mistyped id is no request
    /// for a new session.
    fn not_found_help(&self, id: &str) -> String {
        let mut known: Vec<String> = Vec::new();
        for parent in self.session_parents() {
            for e in std::fs::read_dir(&parent).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if ids::session_id(&name).is_ok() && is_session_dir(&e.path()) {
                    known.push(name);
                }
            }
        }
        if let Ok(locs) = super::registry::read_locations(self) {
            known.extend(locs.into_keys());
        }
        known.sort();
        known.dedup();
        did_you_mean(id, &known, "`git-session list` shows")
    }

    /// `<state>/secrets-allow`: the fingerprints of findings the user let
    /// through (`push`, `secrets scan`), one per line.
    pub fn secrets_allow_file(&self) -> PathBuf {
        self.root.join("secrets-allow")
    }

    /// Whether the settings file says `"redact": "on-write"`: secrets are
    /// replaced in a node before it is written at all.
    pub fn redacts_on_write(&self) -> bool {
        self.setting("redact").as_deref() == Some("on-write")
    }

    /// `<state>/git-session.json`: this tool's settings for the state dir.
    pub fn settings_file(&self) -> PathBuf {
        self.root.join("git-session.json")
    }

    /// The naming of new sessions' node files (SPEC §2.2): the Python
    /// store's (`{seq:04}-{u,l,c}-<id>.json`) in a state dir that store
    /// uses, so that either writer can continue a session: its own state dir
    /// (`~/.openprogram`, `~/.openprogram-<profile>`, `$OPENPROGRAM_HOME`,
    /// reached by default or named with `--state-dir`), one whose settings
    /// file says `{"node_names": "python"}`, or one that holds a session in
    /// that naming; elsewhere the layout's. Found once per process and
    /// state dir (a run that creates many sessions looks once).
    pub fn naming(&self) -> Naming {
        static FOUND: std::sync::Mutex<Vec<(PathBuf, Naming)>> = std::sync::Mutex::new(Vec::new());
        let mut found = FOUND
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, n)) = found.iter().find(|(r, _)| *r == self.root) {
            return *n;
        }
        let naming = if self.setting("node_names").as_deref() == Some("python")
            || self.is_python_store_home()
            || self.holds_python_named_session()
        {
            Naming::Python
        } else {
            Naming::Layout
        };
        found.push((self.root.clone(), naming));
        naming
    }

    /// The naming of the next node file of the session in `sd`: the naming
    /// its files have, or for a session with none yet, the state dir's
    /// ([`StateDir::naming`], which may look at every session: asked only
    /// then).
    pub fn naming_for(&self, sd: &SessionDir) -> Naming {
        let first = std::fs::read_dir(sd.history()).ok().and_then(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|n| parse_node_file_name(n).is_some())
        });
        match first {
            Some(f) => Naming::of(&f),
            None => self.naming(),
        }
    }

    /// A string setting of the settings file; `None` when it is missing,
    /// unreadable or not a string.
    pub fn setting(&self, key: &str) -> Option<String> {
        let bytes = super::schema::read_bounded(&self.settings_file()).ok()?;
        let v = serde_json::from_slice::<serde_json::Value>(&bytes).ok()?;
        v.get(key)?.as_str().map(str::to_string)
    }

    /// Whether this is a state dir the Python store resolves on its own:
    /// `$OPENPROGRAM_HOME`, or `.openprogram` or `.openprogram-<profile>`
    /// in `$HOME` (compared as the file system resolves them).
    fn is_python_store_home(&self) -> bool {
        // As the file system resolves it; one not made yet (the first
        // session of a fresh state dir) by its parent.
        let resolved = |p: &Path| {
            p.canonicalize().ok().or_else(|| {
                let parent = p.parent()?.canonicalize().ok()?;
                Some(parent.join(p.file_name()?))
            })
        };
        let Some(root) = resolved(&self.root) else {
            return false;
        };
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if var("OPENPROGRAM_HOME").is_some_and(|h| resolved(Path::new(&h)).as_ref() == Some(&root))
        {
            return true;
        }
        let Some(home) = var("HOME").and_then(|h| Path::new(&h).canonicalize().ok()) else {
            return false;
        };
        let python_named = |name: &str| {
            name == ".openprogram"
                || name
                    .strip_prefix(".openprogram-")
                    .is_some_and(|p| !p.is_empty())
        };
        // `~/.openprogram` or `~/.openprogram-<profile>` as named, or the
        // directory one of them leads to (a link to elsewhere).
        let named = root.parent() == Some(home.as_path())
            && root
                .file_name()
                .is_some_and(|n| python_named(&n.to_string_lossy()));
        let profile =
            var("OPENPROGRAM_PROFILE").map(|p| format!(".openprogram-{}", p.to_string_lossy()));
        named
            || std::iter::once(".openprogram".to_string())
                .chain(profile)
                .any(|n| resolved(&home.join(n)).as_ref() == Some(&root))
    }

    /// Whether a session here has its node files in the Python store's
    /// naming (the store writes here): the first node file of each is
    /// looked at, until one is found.
    fn holds_python_named_session(&self) -> bool {
        let Ok(sessions) = super::registry::candidates(self) else {
            return false;
        };
        sessions.iter().any(|(_, dir)| {
            std::fs::read_dir(dir.join("history"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name())
                .find(|n| parse_node_file_name(&n.to_string_lossy()).is_some())
                .is_some_and(|n| Naming::shown_by(&n.to_string_lossy()) == Some(Naming::Python))
        })
    }

    /// Refuse a state dir whose registry files are symlinks (the journal and
    /// the locks are appended to or opened in place, SPEC §4) or special
    /// files (a FIFO would block every reader).
    pub fn check_links(&self) -> Result<()> {
        for p in [
            // The directories every session is found in and made below,
            // and those of the registries.
            self.sessions(),
            self.sessions().join("projects"),
            self.root.join("projects"),
            self.sync_dir(),
            self.settings_file(),
            self.index_journal(),
            self.index_json(),
            self.locations_json(),
            self.registry_lock(),
            self.projects_json(),
        ] {
            super::atomic::refuse_unsafe(&p)?;
        }
        Ok(())
    }

    /// The directories that hold session directories: `sessions/` itself,
    /// then each project's `sessions/projects/<project>/`, in name order.
    /// A project's directory that is a link is none of them: its sessions
    /// are refused ([`Self::linked_project_dirs`]).
    pub fn session_parents(&self) -> Vec<PathBuf> {
        let (projects, _) = self.project_dirs();
        std::iter::once(self.sessions()).chain(projects).collect()
    }

    /// The entries of `sessions/projects/` that are links (where a
    /// project's directory belongs): nothing is read or written through
    /// them.
    pub fn linked_project_dirs(&self) -> Vec<PathBuf> {
        self.project_dirs().1
    }

    /// `sessions/projects/` in one listing, in name order: the projects'
    /// directories, and the entries that are links in their place.
    fn project_dirs(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let (mut dirs, mut links) = (Vec::new(), Vec::new());
        for e in std::fs::read_dir(self.sessions().join("projects"))
            .into_iter()
            .flatten()
            .flatten()
        {
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(e.path()),
                Ok(t) if t.is_symlink() => links.push(e.path()),
                _ => {}
            }
        }
        dirs.sort();
        links.sort();
        (dirs, links)
    }

    /// The first directory between the state dir and `p` (inside it) that
    /// is a link; `None` for a path outside the state dir (a legacy
    /// in-project repository, the user's own tree).
    pub fn linked_ancestor(&self, p: &Path) -> Option<PathBuf> {
        let rel = p.strip_prefix(&self.root).ok()?;
        let mut dir = self.root.clone();
        let parts: Vec<_> = rel.components().collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            dir.push(part);
            if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_symlink()) {
                return Some(dir);
            }
        }
        None
    }

    /// Find the repo of session `id`: the default place, a bound project's
    /// place, then `locations.json` (legacy in-project repos). `None` when
    /// there is no such session; every other failure (a planted link, a bad
    /// id) is an error.
    ///
    /// A session resolves only to a directory that is that session (SPEC §4):
    /// in a standard place, its meta.json must not name another id; through
    /// `locations.json` (a path anyone may have edited), its meta.json must
    /// name this id.
    pub fn find_session_if_any(&self, id: &str) -> Result<Option<SessionDir>> {
        ids::session_id(id)?;
        self.check_links()?;
        let candidate = self.default_session_dir(id);
        if is_session_dir(&candidate) {
            return SessionDir::checked(candidate)?.of(id, false).map(Some);
        }
        let (projects, linked) = self.project_dirs();
        if let Some(p) = projects
            .iter()
            .map(|parent| parent.join(id))
            .find(|p| is_session_dir(p))
        {
            return SessionDir::checked(p)?.of(id, false).map(Some);
        }
        // In a project's place that is a link: refused, naming the link.
        for linked in linked {
            if is_session_dir(&linked.join(id)) {
                super::atomic::refuse_unsafe(&linked)?;
            }
        }
        if let Some(p) = super::registry::read_locations(self)?.get(id) {
            let p = PathBuf::from(p);
            if let Some(linked) = self.linked_ancestor(&p) {
                super::atomic::refuse_unsafe(&linked)?;
            }
            if is_session_dir(&p) {
                return SessionDir::checked(p)?.of(id, true).map(Some);
            }
        }
        Ok(None)
    }

    /// [`find_session_if_any`](Self::find_session_if_any), with a session
    /// not found an error whose help names the closest ids (it lists every
    /// session: a fetch of a thousand new sessions asks the other).
    pub fn find_session(&self, id: &str) -> Result<SessionDir> {
        self.find_session_if_any(id)?
            .ok_or_else(|| Error::SessionNotFound {
                id: id.into(),
                state: self.root.clone(),
                help: self.not_found_help(id),
            })
    }
}

/// A session directory: it has a `meta.json` or a `history/` (a session the
/// Python store never gave a repository still counts).
pub fn is_session_dir(p: &Path) -> bool {
    p.join(META).is_file() || p.join(HISTORY).is_dir()
}

/// The snapshot marker in `.git/git-session/snapshot`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub commit: Option<String>,
    pub turns: u64,
    /// A commit about to be published: written before the refs move, cleared
    /// once the index mirrors it. If it is a ref tip at start-up, the index is
    /// behind (a crash between the ref update and the index write).
    pub pending: Option<String>,
    /// The objects the turns wrote since background packing last started
    /// (`mirror::maintain_if_due`): how many (loose or in a bulk pack), and
    /// the loose ones' bytes.
    pub new_objects: u64,
    pub loose_bytes: u64,
}

/// Typed paths inside one session repository (SPEC §2).
#[derive(Debug, Clone)]
pub struct SessionDir {
    pub dir: PathBuf,
}

impl SessionDir {
    pub fn new(dir: PathBuf) -> Self {
        SessionDir { dir }
    }

    /// Refuse a session directory that is a symlink (SPEC §6).
    fn checked(dir: PathBuf) -> Result<Self> {
        let md = std::fs::symlink_metadata(&dir).io("inspect the session directory", &dir)?;
        if md.file_type().is_symlink() {
            return Err(Error::refused(
                "session::linked_dir",
                format!("session directory `{}` is a symbolic link", dir.display()),
                Some(
                    "git-session does not follow symlinked session directories; \
                     move the repository to where the link points"
                        .to_string(),
                ),
            ));
        }
        let sd = SessionDir { dir };
        sd.check_links()?;
        Ok(sd)
    }

    /// Refuse a session whose own directories (`.git/`, `.git/git-session/`,
    /// `.git/objects/`, `.git/refs/`, `history/`, `workdir/`, …) are symlinks (every
    /// write below them would leave the session, SPEC §4), or whose files
    /// there are special files (a FIFO would block with the lock held).
    pub fn check_links(&self) -> Result<()> {
        let git = self.git_dir();
        let private = self.private_dir();
        for p in [
            self.meta(),
            git.clone(),
            self.history(),
            self.dir.join(WORKDIR),
            self.attachments(),
        ] {
            super::atomic::refuse_unsafe(&p)?;
        }
        // `.git/` and the private dir below it are small: one listing of
        // each gives the kind of every entry, where a look at each name
        // would walk the whole path once a name.
        refuse_unsafe_among(
            &git,
            &[
                private.clone(),
                self.lock_file(),
                // Written below: objects, refs and their logs.
                git.join("objects"),
                git.join("refs"),
                git.join("logs"),
                // Read by every command that opens the repository: a FIFO
                // there would block it, `verify` included.
                git.join("HEAD"),
                git.join("config"),
                git.join("index"),
                git.join("packed-refs"),
            ],
        )?;
        refuse_unsafe_among(
            &private,
            &[
                self.snapshot_file(),
                self.catalog_file(),
                self.catalog_stamp(),
                private.join("baseline.json"),
                self.import_cursor(),
                self.import_uuids(),
                private.join("maintenance.lock"),
            ],
        )?;
        for p in [
            git.join("refs").join("heads"),
            // Appended to by gix's ref transactions (`git::refs`).
            git.join("logs").join("HEAD"),
        ] {
            super::atomic::refuse_unsafe(&p)?;
        }
        // The branches (and their reflogs), read on every listing of them.
        for dir in [
            git.join("refs").join("heads"),
            git.join("logs").join("refs").join("heads"),
        ] {
            refuse_unsafe_below(&dir)?;
        }
        self.refuse_redirects()
    }

    /// The files that make git look for a repository's refs and objects in
    /// another one: a linked worktree's `commondir` (git would read refs
    /// and objects there, and background packing pack and prune there),
    /// and `objects/info/alternates` (objects read from elsewhere, so a
    /// commit could come to depend on them). A session repository stands
    /// alone; neither is ever written by this tool or the Python store.
    pub fn refuse_redirects(&self) -> Result<()> {
        let git = self.git_dir();
        for (path, what, help) in [
            (
                git.join("commondir"),
                "points the repository at another one for its refs and objects (as a linked worktree's does)",
                "a session repository stands alone: if its history is in that repository, copy it back (`git clone`), then remove the file",
            ),
            (
                git.join("objects").join("info").join("alternates"),
                "makes the repository borrow objects from other repositories",
                "copy the borrowed objects in (`git repack -a -d` in the session), then remove the file",
            ),
        ] {
            if std::fs::symlink_metadata(&path).is_ok() {
                return Err(Error::refused(
                    "layout::redirected",
                    format!("`{}` {what}", path.display()),
                    Some(format!("{help}; nothing was read or written")),
                ));
            }
        }
        Ok(())
    }

    /// This directory as session `id`: refused when its meta.json names
    /// another session, or (`strict`, a path from `locations.json`) when it
    /// has no meta.json naming `id`.
    fn of(self, id: &str, strict: bool) -> Result<Self> {
        let named = super::atomic::read(self.meta())
            .ok()
            .and_then(|b| super::schema::Meta::parse(&b).ok())
            .and_then(|m| m.str("id").map(str::to_owned));
        match named {
            Some(n) if n == id => Ok(self),
            None if !strict => Ok(self),
            other => Err(Error::refused(
                "session::not_this_session",
                format!(
                    "`{}` is not session `{id}`: {}",
                    self.dir.display(),
                    match other {
                        Some(n) => format!("its meta.json names `{n}`"),
                        None => "it has no meta.json naming it".into(),
                    }
                ),
                Some(format!(
                    "nothing was read or written; fix the entry for `{id}` in locations.json, or run `git-session verify --all`"
                )),
            )),
        }
    }

    pub fn meta(&self) -> PathBuf {
        self.dir.join(META)
    }
    pub fn history(&self) -> PathBuf {
        self.dir.join(HISTORY)
    }
    pub fn git_dir(&self) -> PathBuf {
        self.dir.join(".git")
    }
    /// The per-session advisory lock (never committed, never deleted).
    pub fn lock_file(&self) -> PathBuf {
        self.dir.join(".git").join("git-session.lock")
    }
    /// Our private state inside `.git/`.
    pub fn private_dir(&self) -> PathBuf {
        self.dir.join(".git").join("git-session")
    }
    /// Where `verify --fix` keeps the damaged files it replaced.
    pub fn quarantine_dir(&self) -> PathBuf {
        self.private_dir().join("quarantine")
    }
    /// The commit whose tree the git index mirrors.
    pub fn snapshot_file(&self) -> PathBuf {
        self.private_dir().join("snapshot")
    }
    /// Cached catalog of `history/` (see `layout::history`).
    pub fn catalog_file(&self) -> PathBuf {
        self.private_dir().join("catalog")
    }
    pub fn catalog_stamp(&self) -> PathBuf {
        self.private_dir().join("catalog.stamp")
    }
    /// How far each transcript of an imported session was read (`import`;
    /// not committed: a fresh import elsewhere reads them all).
    pub fn import_cursor(&self) -> PathBuf {
        self.private_dir().join("import.lines")
    }
    /// The records of its transcript an imported session holds, and the
    /// node each leads to (`import`: read instead of the lines before the
    /// cursor).
    pub fn import_uuids(&self) -> PathBuf {
        self.private_dir().join("import.uuids")
    }
    /// meta.json as it stood before an import began writing nodes, with
    /// the transcript it read (`import`; emptied once its commits are
    /// made): what a rerun of an import cut short goes on from.
    pub fn import_base(&self) -> PathBuf {
        self.private_dir().join("import.base")
    }
    /// The turns its transcripts have not closed yet, kept whole outside
    /// `history/` ([`crate::layout::pending`]).
    pub fn import_pending(&self) -> PathBuf {
        self.private_dir().join("import.pending")
    }
    /// Read the snapshot marker: the commit whose tree the index mirrors,
    /// the turns committed since the last background `git gc`, and the
    /// loose objects written since packing last started (five lines).
    pub fn read_snapshot(&self) -> Snapshot {
        let text = crate::layout::atomic::read_to_string(self.snapshot_file()).unwrap_or_default();
        let mut lines = text.lines();
        Snapshot {
            commit: lines
                .next()
                .map(str::trim)
                .filter(|c| c.len() == 40)
                .map(str::to_owned),
            turns: lines
                .next()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
            pending: lines
                .next()
                .map(str::trim)
                .filter(|c| c.len() == 40)
                .map(str::to_owned),
            new_objects: lines
                .next()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
            loose_bytes: lines
                .next()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
        }
    }

    /// Overwrite the snapshot marker in place: no new file per turn. A torn
    /// marker reads as "no commit", which only makes the next commit rebuild
    /// the index from HEAD.
    pub fn write_snapshot(&self, s: &Snapshot) -> Result<()> {
        let path = self.snapshot_file();
        if !self.private_dir().is_dir() {
            std::fs::create_dir_all(self.private_dir()).io("create", self.private_dir())?;
        }
        let text = format!(
            "{}\n{}\n{}\n{}\n{}\n",
            s.commit.as_deref().unwrap_or(""),
            s.turns,
            s.pending.as_deref().unwrap_or(""),
            s.new_objects,
            s.loose_bytes
        );
        super::atomic::overwrite(&path, text.as_bytes()).io("write", &path)
    }
    pub fn attachments(&self) -> PathBuf {
        self.dir.join(WORKDIR).join(ATTACHMENTS)
    }
    /// Path of a history node file, relative to the session dir, as written here.
    pub fn node_rel(seq: u64, letter: char, id: &str) -> String {
        format!("history/{}", node_file_name(seq, letter, id))
    }
}

/// `{seq:06}-{letter}-{id}.json` (SPEC §2.2).
pub fn node_file_name(seq: u64, letter: char, id: &str) -> String {
    format!("{seq:06}-{letter}-{id}.json")
}

/// How a session's node files are named (SPEC §2.2): the layout's
/// `{seq:06}-{u,a,t}-<id>.json`, or the Python store's
/// `{seq:04}-{u,l,c}-<id>.json`, which that store sorts by name and
/// rebuilds from a node's seq when it rewrites one. A session keeps the
/// naming its files have; a new one takes the state dir's setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Naming {
    #[default]
    Layout,
    Python,
}

impl Naming {
    /// The naming an existing file name shows (the layout's when it shows
    /// neither: see [`Naming::shown_by`]).
    pub fn of(file: &str) -> Naming {
        Naming::shown_by(file).unwrap_or(Naming::Layout)
    }

    /// The naming a node file's name shows: `None` when it fits both (a
    /// `u`, `s` or `x` file past seq 99,999, which both name with six or
    /// more digits) or is no node file.
    pub fn shown_by(file: &str) -> Option<Naming> {
        let (seq, letter, _) = parse_node_file_name(file)?;
        let digits = file.split('-').next().map_or(0, str::len);
        if digits < 6 || matches!(letter, 'l' | 'c') {
            // The layout pads to six digits and writes `u a t x`.
            Some(Naming::Python)
        } else if matches!(letter, 'a' | 't') || seq < 100_000 {
            // The Python store pads to four: six digits below 100,000 are
            // the layout's.
            Some(Naming::Layout)
        } else {
            None
        }
    }

    /// The name node file `file` has in the other naming (`None`: not a
    /// node file, or a letter that does not say the role). A node renamed
    /// to one naming (`verify --fix`, `migrate --node-names`) is held
    /// under its old name by the commits before.
    pub fn other_name(file: &str) -> Option<String> {
        let (seq, letter, id) = parse_node_file_name(file)?;
        let role = match letter {
            'u' => "user",
            'a' | 'l' => "llm",
            't' | 'c' => "code",
            _ => return None,
        };
        let other = match Naming::shown_by(file)? {
            Naming::Layout => Naming::Python,
            Naming::Python => Naming::Layout,
        };
        Some(other.file_name(seq, role, id)).filter(|o| o != file)
    }

    /// The file name of a node with this naming.
    pub fn file_name(self, seq: u64, role: &str, id: &str) -> String {
        match self {
            Naming::Layout => {
                let letter = match role {
                    "user" => 'u',
                    "llm" => 'a',
                    "code" => 't',
                    _ => 'x',
                };
                node_file_name(seq, letter, id)
            }
            Naming::Python => {
                let letter = role
                    .chars()
                    .next()
                    .filter(|c| "ulc".contains(*c))
                    .unwrap_or('x');
                format!("{seq:04}-{letter}-{id}.json")
            }
        }
    }
}

/// What a history file name says: `(seq, letter, id)`. Accepts any padding and
/// the letters `u l c a t s x` (SPEC §2.2).
pub fn parse_node_file_name(name: &str) -> Option<(u64, char, &str)> {
    let stem = name.strip_suffix(".json")?;
    let (digits, rest) = stem.split_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seq: u64 = digits.parse().ok()?;
    let mut chars = rest.chars();
    let letter = chars.next()?;
    if !"ulcatsx".contains(letter) || chars.next() != Some('-') {
        return None;
    }
    let id = &rest[2..];
    if id.is_empty() {
        return None;
    }
    Some((seq, letter, id))
}

/// Up to three of `known` closest to `id` by edit distance (at most a third
/// of its length, and at least 1), nearest first.
/// The help line for an unknown id: the closest of `known` (as clap
/// suggests commands), else where to see them all (`everything`: "`git-session
/// list` shows").
pub fn did_you_mean(id: &str, known: &[String], everything: &str) -> String {
    let close = closest(id, known);
    if close.is_empty() {
        return format!("{everything} them all");
    }
    format!(
        "did you mean {}? ({everything} them all)",
        close
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(" or ")
    )
}

pub fn closest<'a>(id: &str, known: &'a [String]) -> Vec<&'a str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    let limit = (id.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = known
        .iter()
        .map(|k| (distance(id, k), k.as_str()))
        .filter(|(d, k)| *d <= limit && *k != id)
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, k)| k).collect()
}

/// [`super::atomic::refuse_unsafe`] for each of `paths`, entries of `dir`
/// (which must not be a link: check it first), from one listing of `dir`:
/// the kind of each entry comes from the listing itself. A `dir` that
/// cannot be listed has each path looked at instead.
fn refuse_unsafe_among(dir: &Path, paths: &[PathBuf]) -> Result<()> {
    debug_assert!(paths.iter().all(|p| p.parent() == Some(dir)));
    let one_by_one = || {
        paths
            .iter()
            .try_for_each(|p| super::atomic::refuse_unsafe(p))
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return one_by_one();
    };
    for e in entries {
        let Ok(e) = e else {
            return one_by_one();
        };
        let name = e.file_name();
        if !paths
            .iter()
            .any(|p| p.file_name() == Some(name.as_os_str()))
        {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_dir() || t.is_file() => {}
            _ => super::atomic::refuse_unsafe(&e.path())?,
        }
    }
    Ok(())
}

/// [`super::atomic::refuse_unsafe`] for everything below `dir` (none when it
/// does not exist): the kind of each entry comes from the directory listing
/// itself, so a clean tree costs one listing a directory.
fn refuse_unsafe_below(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => refuse_unsafe_below(&e.path())?,
            Ok(t) if t.is_file() => {}
            _ => super::atomic::refuse_unsafe(&e.path())?,
        }
    }
    Ok(())
}

/// For unit tests: a session directory with its `history/` and private
/// dir, in a temp dir (kept alive by the first value).
#[cfg(test)]
pub(crate) fn test_session() -> (tempfile::TempDir, SessionDir) {
    let dir = tempfile::tempdir().unwrap();
    let sd = SessionDir::new(dir.path().to_path_buf());
    std::fs::create_dir_all(sd.private_dir()).unwrap();
    std::fs::create_dir(sd.history()).unwrap();
    (dir, sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which naming a name shows, and its name in the other: a `u` file
    /// past seq 99,999 has one name in both, which shows neither.
    #[test]
    fn a_name_shows_its_naming_unless_both_name_it_so() {
        for (name, shown, other) in [
            (
                "000003-u-x.json",
                Some(Naming::Layout),
                Some("0003-u-x.json"),
            ),
            (
                "000004-a-x.json",
                Some(Naming::Layout),
                Some("0004-l-x.json"),
            ),
            (
                "000005-t-x.json",
                Some(Naming::Layout),
                Some("0005-c-x.json"),
            ),
            (
                "0003-u-x.json",
                Some(Naming::Python),
                Some("000003-u-x.json"),
            ),
            (
                "0004-l-x.json",
                Some(Naming::Python),
                Some("000004-a-x.json"),
            ),
            (
                "12345-c-x.json",
                Some(Naming::Python),
                Some("012345-t-x.json"),
            ),
            ("123456-u-x.json", None, None),
            ("1234567-u-x.json", None, None),
            (
                "123456-a-x.json",
                Some(Naming::Layout),
                Some("123456-l-x.json"),
            ),
            (
                "123456-l-x.json",
                Some(Naming::Python),
                Some("123456-a-x.json"),
            ),
            ("000007-x-x.json", Some(Naming::Layout), None),
            ("notes.txt", None, None),
        ] {
            assert_eq!(Naming::shown_by(name), shown, "{name}");
            assert_eq!(Naming::other_name(name).as_deref(), other, "{name}");
        }
    }

    #[test]
    fn the_places_a_copy_leaves_out_or_refuses_as_links() {
        let local = [
            ".git/config",
            ".git/hooks/pre-commit",
            ".git/git-session/catalog",
            ".git/git-session.lock",
        ];
        let shared = [
            ".git/HEAD",
            ".git/objects/ab/cd",
            "meta.json",
            "history/000001-u-a.json",
            "workdir/x",
        ];
        for p in local {
            assert!(is_local_to_repo(Path::new(p)), "{p}");
        }
        for p in shared {
            assert!(!is_local_to_repo(Path::new(p)), "{p}");
        }
        let places = [
            ".git",
            ".git/objects",
            "meta.json",
            "history",
            "workdir",
            "workdir/attachments",
        ];
        let others = [
            "history/000001-u-a.json",
            "workdir/notes.md",
            "context",
            "meta.json.bak",
        ];
        for p in places {
            assert!(is_layout_place(Path::new(p)), "{p}");
        }
        for p in others {
            assert!(!is_layout_place(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn node_names_round_trip_and_legacy() {
        assert_eq!(node_file_name(7, 'u', "u1"), "000007-u-u1.json");
        assert_eq!(
            parse_node_file_name("000007-u-u1.json"),
            Some((7, 'u', "u1"))
        );
        assert_eq!(
            parse_node_file_name("0002-l-u1_reply.json"),
            Some((2, 'l', "u1_reply"))
        );
        assert_eq!(
            parse_node_file_name("12345-c-a-b.json"),
            Some((12345, 'c', "a-b"))
        );
        for bad in [
            "x.json",
            "0001-q-a.json",
            "0001-u-.json",
            "-u-a.json",
            "0001-u-a.txt",
            "0001-ua.json",
        ] {
            assert_eq!(parse_node_file_name(bad), None, "{bad}");
        }
    }

    /// Each entry of `.git/` and of the private dir the check lists is
    /// refused as a link (to a file or a directory) and as a FIFO; a file
    /// or directory of its own kind passes, and so does a link of a name
    /// the check does not look at.
    #[test]
    fn a_link_or_fifo_at_any_checked_entry_is_refused() {
        let names = [
            ".git/git-session",
            ".git/git-session.lock",
            ".git/objects",
            ".git/refs",
            ".git/logs",
            ".git/HEAD",
            ".git/config",
            ".git/index",
            ".git/packed-refs",
            ".git/git-session/snapshot",
            ".git/git-session/catalog",
            ".git/git-session/catalog.stamp",
            ".git/git-session/baseline.json",
            ".git/git-session/import.lines",
            ".git/git-session/import.uuids",
            ".git/git-session/maintenance.lock",
        ];
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("file"), b"x").unwrap();
        for name in names {
            for planted in ["link to a file", "link to a directory", "fifo"] {
                let (_tmp, sd) = test_session();
                let p = sd.dir.join(name);
                let _ = std::fs::remove_dir_all(&p);
                let _ = std::fs::remove_file(&p);
                match planted {
                    "link to a file" => {
                        std::os::unix::fs::symlink(elsewhere.path().join("file"), &p).unwrap()
                    }
                    "link to a directory" => {
                        std::os::unix::fs::symlink(elsewhere.path(), &p).unwrap()
                    }
                    _ => {
                        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
                        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                    }
                }
                let err = sd.check_links().expect_err(&format!("{name}: {planted}"));
                let said = err.to_string();
                assert!(
                    said.contains(name.rsplit('/').next().unwrap()),
                    "{name}: {said}"
                );
            }
        }
        let (_tmp, sd) = test_session();
        for dir in [".git/objects", ".git/refs/heads", ".git/logs"] {
            std::fs::create_dir_all(sd.dir.join(dir)).unwrap();
        }
        for file in [
            ".git/HEAD",
            ".git/config",
            ".git/index",
            ".git/git-session/catalog",
        ] {
            std::fs::write(sd.dir.join(file), b"").unwrap();
        }
        std::os::unix::fs::symlink(elsewhere.path(), sd.dir.join(".git/description")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), sd.private_dir().join("notes")).unwrap();
        sd.check_links().unwrap();
    }

    #[test]
    fn nearest_ids_first() {
        let known: Vec<String> = ["s1", "s2", "refactor", "feature"].map(String::from).into();
        assert_eq!(closest("s11", &known), vec!["s1"]);
        assert_eq!(closest("refactr", &known), vec!["refactor"]);
        assert!(closest("zzzzzz", &known).is_empty());
    }
}
