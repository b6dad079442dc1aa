//! The state directory: where it is (SPEC §1), and the path of every
//! file of its own (registries, locks, projects, sync, settings).

use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result, Usage};

use super::*;

/// The state directory: `<state>/sessions`, `<state>/projects`.
#[derive(Debug, Clone)]
pub struct StateDir {
    pub root: PathBuf,
}

/// `$HOME` (set and not empty), else a usage error saying `message` (what
/// cannot be found without it) with `help`.
pub fn home_dir(message: &'static str, help: &'static str) -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Usage::NoHome { message, help }.into())
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
                        return Err(Usage::Profile { profile }.into());
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
            crate::layout::atomic::refuse_unsafe(&dir)?;
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
        if let Ok(locs) = crate::layout::registry::read_locations(self) {
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
        let bytes = crate::layout::schema::read_bounded(&self.settings_file()).ok()?;
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
        let Ok(sessions) = crate::layout::registry::candidates(self) else {
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
            crate::layout::atomic::refuse_unsafe(&p)?;
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
                crate::layout::atomic::refuse_unsafe(&linked)?;
            }
        }
        if let Some(p) = crate::layout::registry::read_locations(self)?.get(id) {
            let p = PathBuf::from(p);
            if let Some(linked) = self.linked_ancestor(&p) {
                crate::layout::atomic::refuse_unsafe(&linked)?;
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
