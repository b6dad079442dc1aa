//! A session repository: create it, open it (its own config only, read and
//! checked), and read its objects.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{CommitInfo, DEFAULT_EMAIL, DEFAULT_NAME, MAIN, RefUpdate};
use crate::error::{Error, IoContext, Result};
use crate::layout::{SessionDir, atomic};
use crate::session::SessionError;

/// Bytes of decoded objects kept while reading packed objects, for the
/// deltas based on them (git's `core.deltaBaseCacheLimit`, 96 MiB by
/// default): a session's history trees are deltas of one another, and
/// without it each tree read inflates its chain of bases again. 8 MiB does
/// as well as 64 on `nodes` over a 4,000-node session read in line order
/// (0.7–1.0 s against 1.3–1.8 s without), at a quarter of the memory.
const DELTA_BASE_CACHE: usize = 8 << 20;

/// Repo-local config pinned at init so a user's global settings cannot break
/// or slow session commits (SPEC §2.3).
const PINNED_CONFIG: &str = "\
[core]
\thooksPath = /dev/null
\tfsmonitor = false
\tuntrackedCache = false
\tautocrlf = false
\tsymlinks = true
[commit]
\tgpgSign = false
[tag]
\tgpgSign = false
[index]
\tskipHash = true
[user]
\tname = OpenProgram
\temail = openprogram@local
";

/// An object [`SessionRepo::check_reachable`] found missing, damaged or
/// unparsable: its id, the path a blob was reached by, and what is wrong.
#[derive(Debug)]
pub struct BadObject {
    pub id: ObjectId,
    pub path: Option<String>,
    pub why: String,
}

pub struct SessionRepo {
    /// Opened on first use ([`Self::repo`]): a turn reads its refs, its
    /// index and its (loose) tip commit without it, and opening a
    /// repository with gix costs about half a millisecond.
    gix: std::cell::OnceCell<gix::Repository>,
    pub(super) refs: gix::refs::file::Store,
    /// What a turn reads from the repository's own config.
    pub(super) config: OwnConfig,
    pub dir: PathBuf,
    pub(super) git_dir: PathBuf,
    /// What this process writes objects with ([`super::objects`]).
    pub(super) objects: super::objects::Writer,
}

impl SessionRepo {
    /// Create `.git` in `dir` with branch `main`, the pinned config and an empty
    /// root commit `session init` dated `time`. Returns the root commit.
    pub fn init(dir: &Path, time: f64) -> Result<ObjectId> {
        let mut me = SessionRepo::init_empty(dir)?;
        let tree = me.write(gix::objs::Tree::empty())?;
        let root = me.write_commit(tree, &[], "session init\n", time)?;
        me.sync_objects()?;
        me.update_refs(&[RefUpdate::Create {
            branch: MAIN.into(),
            new: root,
            message: "commit (initial): session init".into(),
        }])?;
        let mut index = super::index::Index(gix::index::File::from_state(
            gix::index::State::new(gix::hash::Kind::Sha1),
            me.index_path(),
        ));
        me.write_index(&mut index)?;
        let sd = SessionDir::new(dir.to_path_buf());
        sd.write_snapshot(&crate::layout::paths::Snapshot {
            commit: Some(root.to_string()),
            ..Default::default()
        })?;
        Ok(root)
    }

    /// Create `.git` in `dir` with the pinned config, our temp files
    /// excluded and the private directory, but no commit and no branch (a
    /// fetched session's come from the remote).
    pub fn init_empty(dir: &Path) -> Result<SessionRepo> {
        // Isolated: a user's global `init.defaultBranch` must not rename `main`.
        // Known capabilities: probing would create and delete test files.
        let mac = cfg!(target_os = "macos");
        let repo: gix::Repository = gix::ThreadSafeRepository::init_opts(
            dir,
            gix::create::Kind::WithWorktree,
            gix::create::Options {
                fs_capabilities: Some(gix::fs::Capabilities {
                    precompose_unicode: mac,
                    ignore_case: mac,
                    executable_bit: true,
                    symlink: true,
                }),
                ..Default::default()
            },
            gix::open::Options::isolated(),
        )
        .map_err(|e| Error::git("init the repository", dir, e))?
        .into();
        write_pinned_config(repo.git_dir())?;
        let exclude = repo.git_dir().join("info").join("exclude");
        std::fs::create_dir_all(exclude.parent().expect("info/ has a parent"))
            .io("create", &exclude)?;
        atomic::write(
            &exclude,
            format!(
                "# temporary files of git-session\n{}*\n",
                crate::layout::TEMP_PREFIX
            )
            .as_bytes(),
        )?;
        let sd = SessionDir::new(dir.to_path_buf());
        std::fs::create_dir_all(sd.private_dir()).io("create", sd.private_dir())?;
        SessionRepo::open(dir)
    }

    /// Open a session repo: its own config is read and checked (no global or
    /// system config, no environment) and its refs are read directly; gix
    /// opens the repository only when a packed object is read
    /// ([`Self::repo`]).
    pub fn open(dir: &Path) -> Result<SessionRepo> {
        let mut me = SessionRepo::open_for_reading(dir)?;
        me.config = OwnConfig::read(dir, &me.git_dir)?;
        Ok(me)
    }

    /// The session repo in `dir` opened to read its refs and objects only:
    /// its config is not read (nothing is written, nothing runs). `push`
    /// reads every session this way.
    pub fn open_for_reading(dir: &Path) -> Result<SessionRepo> {
        let git_dir = dir.join(".git");
        if !git_dir.is_dir() {
            return Err(Error::corrupt(
                dir,
                "the session has no `.git` repository".to_string(),
            ));
        }
        Ok(SessionRepo {
            gix: std::cell::OnceCell::new(),
            refs: gix::refs::file::Store::at(git_dir.clone(), Default::default()),
            config: OwnConfig {
                name: None,
                email: None,
            },
            dir: dir.to_path_buf(),
            objects: super::objects::Writer::new(&git_dir),
            git_dir,
        })
    }

    /// The repository opened with gix, for reading objects; opened on first
    /// use, reading only its own config (no global or system config, no
    /// environment).
    pub fn repo(&self) -> Result<&gix::Repository> {
        if let Some(repo) = self.gix.get() {
            return Ok(repo);
        }
        // Slots for pack indices, from one directory listing: by default gix
        // also `stat`s every file there to count them. Room for packs added
        // meanwhile (a background roll-up writes before it deletes).
        let slots =
            (2 * super::maintenance::pack_count(&self.git_dir) + 32).min(i16::MAX as usize) as u16;
        let mut repo = gix::open_opts(
            &self.dir,
            gix::open::Options::isolated()
                // A `refs/replace/` ref would show another object in place
                // of the one committed: a node changed after its turn
                // would read as unchanged to `verify`.
                .cli_overrides(["core.useReplaceRefs=false"])
                .object_store_slots(gix::odb::store::init::Slots::Given(slots)),
        )
        .map_err(|e| Error::git("open the repository", &self.dir, e))?;
        repo.objects.set_pack_cache(|| {
            Box::new(gix_pack::cache::lru::MemoryCappedHashmap::new(
                DELTA_BASE_CACHE,
            ))
        });
        Ok(self.gix.get_or_init(|| repo))
    }

    pub(super) fn err(
        &self,
        action: &str,
        e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error::git(action, &self.dir, e)
    }

    /// The configured identity, `OpenProgram <openprogram@local>` by default.
    pub fn signature(&self, time: f64) -> gix::actor::Signature {
        let name = (self.config.name.clone()).unwrap_or_else(|| DEFAULT_NAME.into());
        let email = (self.config.email.clone()).unwrap_or_else(|| DEFAULT_EMAIL.into());
        gix::actor::Signature {
            name,
            email,
            time: gix::date::Time {
                seconds: super::commit_seconds(time),
                offset: 0,
            },
        }
    }

    pub fn commit_info(&self, id: ObjectId) -> Result<CommitInfo> {
        let mut buf = Vec::new();
        let found;
        // A turn's tip is a loose object until the next roll-up: read it
        // without opening the repository.
        let data = match self.objects.find_commit(id, &mut buf) {
            Some(data) => data,
            None => {
                found = self
                    .repo()?
                    .find_commit(id)
                    .map_err(|e| self.err(&format!("read commit {id}"), e))?;
                &found.data
            }
        };
        let decoded = gix::objs::CommitRef::from_bytes(data, gix::hash::Kind::Sha1)
            .map_err(|e| self.err(&format!("decode commit {id}"), e))?;
        Ok(CommitInfo {
            id,
            tree: decoded.tree(),
            parents: decoded.parents().collect(),
            message: decoded.message.to_str_lossy().into_owned(),
            time: decoded.committer().map(|c| c.seconds()).unwrap_or(0),
        })
    }

    /// The entries of one tree: (name, mode as octal number, id).
    pub fn tree_entries(&self, tree: ObjectId) -> Result<Vec<(String, u32, ObjectId)>> {
        let t = self
            .repo()?
            .find_tree(tree)
            .map_err(|e| self.err(&format!("read tree {tree}"), e))?;
        let decoded = t
            .decode()
            .map_err(|e| self.err(&format!("decode tree {tree}"), e))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| {
                (
                    e.filename.to_str_lossy().into_owned(),
                    e.mode.value() as u32,
                    e.oid.to_owned(),
                )
            })
            .collect())
    }

    /// Which of `names` the directory `dir` (one name) of `tree` holds
    /// (none, when `tree` has no directory `dir`): one read of that
    /// directory's tree, however many names are asked for.
    pub fn dir_holds(&self, tree: ObjectId, dir: &str, names: &[&str]) -> Result<Vec<bool>> {
        let mut out = vec![false; names.len()];
        let root = self
            .repo()?
            .find_tree(tree)
            .map_err(|e| self.err(&format!("read tree {tree}"), e))?;
        let entry = root
            .lookup_entry_by_path(dir)
            .map_err(|e| self.err("look up a tree entry", e))?;
        // `dir` that is not a directory (a file, a link or a submodule of
        // that name) holds nothing.
        let Some(sub) = entry.filter(|e| e.mode().is_tree()).map(|e| e.object_id()) else {
            return Ok(out);
        };
        let mut wanted: std::collections::HashMap<&[u8], Vec<usize>> =
            std::collections::HashMap::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            wanted.entry(n.as_bytes()).or_default().push(i);
        }
        let t = self
            .repo()?
            .find_tree(sub)
            .map_err(|e| self.err(&format!("read tree {sub}"), e))?;
        for e in t.iter() {
            let e = e.map_err(|e| self.err(&format!("decode tree {sub}"), e))?;
            for &i in wanted.get(e.filename().as_bytes()).into_iter().flatten() {
                out[i] = true;
            }
        }
        Ok(out)
    }

    /// The id of the entry of `tree` at `path` (like `history/x.json`), if present.
    pub fn tree_entry(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let t = self
            .repo()?
            .find_tree(tree)
            .map_err(|e| self.err("read a tree", e))?;
        let found = t
            .lookup_entry_by_path(path)
            .map_err(|e| self.err("look up a tree entry", e))?;
        Ok(found.map(|e| e.object_id()))
    }

    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// Whether the object database has `id` (`false` when the repository
    /// cannot be opened).
    pub fn object_exists(&self, id: ObjectId) -> bool {
        self.repo().is_ok_and(|r| r.has_object(id))
    }

    /// Where object `id` is, or would be, stored loose.
    pub fn loose_path(&self, id: ObjectId) -> PathBuf {
        self.objects.loose_path(&id)
    }

    /// Store blob `id` again from `data`, its bytes, and sync it: the repair
    /// of a blob that is missing, or whose damaged loose file was moved
    /// aside first (a loose file already there is taken as the object).
    /// Refuses bytes that are not that blob.
    pub fn rewrite_blob(&mut self, id: ObjectId, data: Vec<u8>) -> Result<()> {
        if super::blob_id(&data) != id {
            return Err(self.err(
                "write a blob again",
                format!("the bytes given are not blob {id}"),
            ));
        }
        self.write_blob(data)?;
        self.sync_objects()
    }

    /// Every commit, tree and blob that `tips` reach, each read from the
    /// object database and hashed (as `git fsck` does, without git): how
    /// many were reached, and those missing, damaged or that do not parse.
    /// A blob is named by its path in the tree, so that one whose file
    /// still holds its bytes can be stored again.
    pub fn check_reachable(
        &self,
        tips: impl IntoIterator<Item = ObjectId>,
    ) -> (usize, Vec<BadObject>) {
        use gix::objs::Kind;
        let mut stack: Vec<(ObjectId, Option<String>)> =
            tips.into_iter().map(|id| (id, None)).collect();
        // The directory each tree reached stands for ("" for a commit's tree).
        let mut dirs: std::collections::HashMap<ObjectId, String> = Default::default();
        let mut seen = std::collections::HashSet::new();
        let mut bad = Vec::new();
        while let Some((id, path)) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let (kind, data) = match self.read_checked(id) {
                Ok(found) => found,
                Err(why) => {
                    bad.push(BadObject { id, path, why });
                    continue;
                }
            };
            let parsed = match kind {
                Kind::Commit => {
                    gix::objs::CommitRef::from_bytes(&data, gix::hash::Kind::Sha1).map(|commit| {
                        dirs.entry(commit.tree()).or_default();
                        stack.push((commit.tree(), None));
                        stack.extend(commit.parents().map(|p| (p, None)));
                    })
                }
                Kind::Tree => {
                    gix::objs::TreeRef::from_bytes(&data, gix::hash::Kind::Sha1).map(|tree| {
                        let dir = dirs.get(&id).cloned().unwrap_or_default();
                        // A submodule's commit is not in this repository.
                        for e in tree.entries.iter().filter(|e| !e.mode.is_commit()) {
                            let name = format!("{dir}{}", e.filename);
                            let oid = e.oid.to_owned();
                            if e.mode.is_tree() {
                                dirs.entry(oid).or_insert_with(|| format!("{name}/"));
                                stack.push((oid, None));
                            } else {
                                stack.push((oid, e.mode.is_blob().then_some(name)));
                            }
                        }
                    })
                }
                Kind::Blob | Kind::Tag => Ok(()),
            };
            if let Err(e) = parsed {
                bad.push(BadObject {
                    id,
                    path: None,
                    why: format!("a {kind} that does not parse: {e}"),
                });
            }
        }
        (seen.len(), bad)
    }

    /// Object `id` read from the object database and checked against its
    /// id: its kind and bytes, or what is wrong with it (missing, not
    /// readable, or other bytes than its name says).
    fn read_checked(
        &self,
        id: ObjectId,
    ) -> std::result::Result<(gix::objs::Kind, Vec<u8>), String> {
        let repo = self.repo().map_err(|e| e.to_string())?;
        let mut buf = Vec::new();
        use gix::objs::Find as _;
        let data = match repo.objects.try_find(&id, &mut buf) {
            Ok(Some(d)) => d,
            Ok(None) => return Err("missing".into()),
            Err(e) => return Err(format!("unreadable: {e}")),
        };
        let actual = gix::objs::compute_hash(gix::hash::Kind::Sha1, data.kind, data.data)
            .map_err(|e| e.to_string())?;
        if actual != id {
            return Err(format!("its bytes are object {actual}"));
        }
        Ok((data.kind, data.data.to_vec()))
    }

    /// The bytes of blob `id`.
    pub fn read_blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        let blob = self
            .repo()?
            .find_blob(id)
            .map_err(|e| self.err(&format!("read blob {id}"), e))?;
        Ok(blob.data.clone())
    }

    /// Every commit in the object database, reachable or not (`verify`
    /// looks there for turns whose branch was deleted or moved).
    pub fn every_commit(&self) -> Result<Vec<ObjectId>> {
        let repo = self.repo()?;
        let what = "list the object database";
        let mut out: Vec<ObjectId> = Vec::new();
        for id in repo.objects.iter().map_err(|e| self.err(what, e))? {
            let id = id.map_err(|e| self.err(what, e))?;
            if repo
                .find_header(id)
                .is_ok_and(|h| h.kind() == gix::objs::Kind::Commit)
            {
                out.push(id);
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// The transfer repository at `dir` (`<state>/sync/repo`), created when
/// missing: a repository with an empty work tree and the pinned config. It
/// holds only objects copied from sessions or fetched, and the tracking
/// refs of fetches: deleting it loses nothing.
///
/// It is ours, but what is on disk is a stranger's: on every use its config
/// is rewritten (git reads a repository's own config for the transport:
/// `url.*.insteadOf`, `credential.helper`, `core.sshCommand` would run or
/// redirect), an alternates file is removed (objects from elsewhere), and a
/// link or special file where its directories, config or `packed-refs`
/// belong is refused (a pack or a ref would be written through it).
pub fn init_transfer_repo(dir: &Path) -> Result<()> {
    let git_dir = dir.join(".git");
    let refuse_all = || -> Result<()> {
        for p in [
            dir.to_path_buf(),
            git_dir.clone(),
            git_dir.join("config"),
            git_dir.join("objects"),
            git_dir.join("objects/pack"),
            git_dir.join("objects/info"),
            git_dir.join("refs"),
            git_dir.join("refs/remotes"),
            git_dir.join("logs"),
            git_dir.join("packed-refs"),
        ] {
            atomic::refuse_unsafe(&p)?;
        }
        Ok(())
    };
    refuse_all()?;
    if !git_dir.is_dir() {
        gix::ThreadSafeRepository::init_opts(
            dir,
            gix::create::Kind::WithWorktree,
            gix::create::Options::default(),
            gix::open::Options::isolated(),
        )
        .map_err(|e| Error::git("create the transfer repository", dir, e))?;
        refuse_all()?;
    }
    let alternates = git_dir.join("objects/info/alternates");
    match std::fs::remove_file(&alternates) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).io("remove", &alternates);
        }
        _ => {}
    }
    write_pinned_config(&git_dir)
}

/// Replace `git_dir/config` with the tool's own: the repository basics and
/// the pinned settings (no hooks, no fsmonitor, no signing). A session
/// repo's config is never taken from a stranger (`migrate`, `init`).
pub fn write_pinned_config(git_dir: &Path) -> Result<()> {
    let text = format!(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n{PINNED_CONFIG}"
    );
    atomic::write(&git_dir.join("config"), text.as_bytes())
}

/// Refuse a repository whose config makes git read it otherwise than this
/// tool writes it: a format version above 1, SHA-256 object names
/// (`extensions.objectFormat`), refs in a reftable
/// (`extensions.refStorage`), or an extension git-session does not know.
/// Written to anyway, such a repository gets SHA-1 objects and loose refs
/// that git does not read: commits acknowledged, and lost to git.
fn check_format(config: &gix::config::File, path: &Path) -> Result<()> {
    let path = || path.to_path_buf();
    match config.integer("core.repositoryformatversion") {
        Ok(None | Some(0 | 1)) => {}
        Ok(Some(version)) => {
            let path = path();
            return Err(SessionError::FormatVersion { path, version }.into());
        }
        Err(_) => return Err(SessionError::FormatVersionNotNumber { path: path() }.into()),
    }
    for section in config.sections_by_name("extensions").into_iter().flatten() {
        for key in section.body().value_names() {
            let key = key.to_string().to_ascii_lowercase();
            let value = section
                .body()
                .value(&key)
                .map(|v| v.to_string().to_ascii_lowercase())
                .unwrap_or_default();
            let ours = match key.as_str() {
                "noop" | "noop-v1" | "worktreeconfig" => true,
                "objectformat" => value == "sha1",
                "refstorage" => value == "files",
                _ => false,
            };
            if !ours {
                let path = path();
                return Err(SessionError::Extension { path, key, value }.into());
            }
        }
    }
    Ok(())
}

/// What a turn reads from a session repository's own config (sessions are
/// opened isolated: no global or system config, no environment, no
/// includes).
pub(super) struct OwnConfig {
    /// `user.name` and `user.email`.
    name: Option<gix::bstr::BString>,
    email: Option<gix::bstr::BString>,
}

impl OwnConfig {
    /// Read `git_dir/config`, checking that it makes `dir` the work tree as
    /// gix would see it: a bare repository, or one whose `core.worktree` is
    /// elsewhere, is not a session's.
    fn read(dir: &Path, git_dir: &Path) -> Result<OwnConfig> {
        let path = git_dir.join("config");
        let bytes = match crate::layout::atomic::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).io("read", &path),
        };
        let config = gix::config::File::from_bytes_no_includes(
            &bytes,
            gix::config::file::Metadata::from(gix::config::Source::Local),
            Default::default(),
        )
        .map_err(|e| Error::corrupt(&path, format!("the config does not parse: {e}")))?;
        let elsewhere = || Error::corrupt(dir, "the `.git` here belongs to another work tree");
        if matches!(config.boolean("core.bare"), Ok(Some(true))) {
            return Err(elsewhere());
        }
        if let Some(worktree) = config.string("core.worktree") {
            let worktree = gix::path::from_bstring(worktree)
                .ok()
                .and_then(|w| git_dir.join(w).canonicalize().ok());
            if worktree.is_none() || worktree != dir.canonicalize().ok() {
                return Err(elsewhere());
            }
        }
        check_format(&config, &path)?;
        Ok(OwnConfig {
            name: config.string("user.name"),
            email: config.string("user.email"),
        })
    }
}
