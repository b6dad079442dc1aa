//! A user's project repository (SPEC §5.10): dirty paths, and agent commits
//! that take exactly the chosen paths. Nothing the user changed is staged,
//! reset or deleted: the commit is built from HEAD's tree plus those paths,
//! and only their index entries are updated.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};

use super::index::{self as index_edit, Staged};
use super::index_lock::{self, IndexLock, NotTaken, Recovered};
use crate::error::{Error, IoContext, Result};

/// What is at a project path.
pub enum Found {
    Repo(Box<UserRepo>),
    /// No repository here or above.
    NoRepo,
    /// The directory lies inside another repository (its root is given).
    InsideOther(PathBuf),
}

/// Why [`UserRepo::commit_paths`] made no agent commit, the project left
/// as it was: a skip of the turn's agent commit, not a failure of the turn
/// (`git_session::project::<reason>`, exit 1 when it reaches a command).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum Skip {
    /// A large file changed while it was read (the agent's process is
    /// still writing it).
    #[error("`{}` changed while it was read", path.display())]
    #[diagnostic(code(git_session::project::file_changing), help("{LEFT_AS_IT_WAS}"))]
    FileChanging { path: PathBuf },
    /// The project's branch moved while the agent's commit was made (a
    /// commit of the user's).
    #[error("branch `{branch}` of `{}` moved while the agent's commit was made", root.display())]
    #[diagnostic(code(git_session::project::head_moved), help("{LEFT_AS_IT_WAS}"))]
    HeadMoved { branch: String, root: PathBuf },
    /// git holds the project's index (`index.lock`: a `git add` or `git
    /// commit` of the user's, its message editor open) longer than
    /// [`GIT_BUSY_WAIT`].
    #[error("git holds the index of `{}` (`.git/index.lock`)", root.display())]
    #[diagnostic(code(git_session::project::git_busy), help("{LEFT_AS_IT_WAS}"))]
    GitBusy { root: PathBuf },
}

/// Why [`UserRepo::commit_paths`] cannot make an agent commit at all: not
/// a skip, a refusal (`git_session::project::…`, exit 1).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum Refusal {
    /// HEAD on no branch (detached), found only when the agent's commit is
    /// made: `decide` skips a turn whose project is detached at its end.
    #[error("the project's HEAD is detached")]
    #[diagnostic(
        code(git_session::project::head_detached),
        help("check out a branch in the project")
    )]
    HeadDetached,
}

/// The next step a [`Skip`] names.
const LEFT_AS_IT_WAS: &str =
    "nothing was committed to the project; the agent's changes are left in its working tree";

impl Skip {
    /// The skip reason a turn's record and `project_commit` name.
    pub fn reason(&self) -> &'static str {
        match self {
            Skip::FileChanging { .. } => "file_changing",
            Skip::HeadMoved { .. } => "head_moved",
            Skip::GitBusy { .. } => "git_busy",
        }
    }
}
/// How long an agent commit waits for git's `index.lock` in a project.
use crate::layout::lock::GIT_LOCK_WAIT as GIT_BUSY_WAIT;

/// What differs from HEAD in a project's tree ([`UserRepo::dirty`]).
#[derive(Debug, Default)]
pub struct Dirty {
    /// The paths, `/`-separated.
    pub paths: BTreeSet<String>,
    /// Names that are not UTF-8, their bytes escaped (for messages only).
    pub not_utf8: Vec<String>,
}

pub struct UserRepo {
    pub repo: gix::Repository,
    pub root: PathBuf,
}

/// Open the repository whose root is `path` (the user's config applies:
/// it is the user's repository).
pub fn find(path: &Path) -> Result<Found> {
    if path.join(".git").exists() {
        let repo =
            gix::open(path).map_err(|e| Error::git("open the project repository", path, e))?;
        return Ok(Found::Repo(Box::new(UserRepo {
            repo,
            root: path.to_path_buf(),
        })));
    }
    match gix::discover(path) {
        Ok(r) => Ok(Found::InsideOther(
            r.workdir()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| r.git_dir().to_path_buf()),
        )),
        Err(_) => Ok(Found::NoRepo),
    }
}

fn agent_sig(name: &str, email: &str, time: f64) -> gix::actor::Signature {
    gix::actor::Signature {
        name: name.into(),
        email: email.into(),
        time: gix::date::Time {
            seconds: super::commit_seconds(time),
            offset: 0,
        },
    }
}

/// Create a repository in `path` with a baseline commit of the files already
/// there (honouring a `.gitignore`), or an empty `openprogram: project init`.
pub fn init_with_baseline(path: &Path, time: f64) -> Result<UserRepo> {
    let repo: gix::Repository =
        gix::init(path).map_err(|e| Error::git("init the project repository", path, e))?;
    let me = UserRepo {
        repo,
        root: path.to_path_buf(),
    };
    // A name that is not UTF-8 stays out of the baseline: it is dirty at
    // every turn's start until the user names it anew.
    let files: Vec<String> = me.dirty()?.paths.into_iter().collect();
    let empty = me
        .repo
        .write_object(gix::objs::Tree::empty())
        .map_err(|e| Error::git("write a tree", path, e))?
        .detach();
    let (tree, staged) = me.tree_with(empty, &files)?;
    let msg = if files.is_empty() {
        "openprogram: project init\n"
    } else {
        "openprogram: baseline (pre-existing files)\n"
    };
    let index = me.lock_index()?;
    let sig = agent_sig("OpenProgram", "openprogram@local", time);
    let commit = me.write_commit(tree, None, &sig, msg)?;
    let index = me.prepare_index(index, staged, &HashSet::new(), commit)?;
    use gix::refs::transaction::PreviousValue;
    me.move_branch("HEAD", PreviousValue::MustNotExist, commit, &sig, msg)
        .map_err(|e| Error::git("commit the baseline", path, e))?;
    index.commit().io("put the index in place in", path)?;
    Ok(me)
}

impl UserRepo {
    /// HEAD's commit and branch (None when detached or unborn).
    pub fn head(&self) -> Result<(Option<ObjectId>, Option<String>)> {
        let head = self
            .repo
            .head()
            .map_err(|e| Error::git("read HEAD", &self.root, e))?;
        let branch = head
            .referent_name()
            .map(|n| n.shorten().to_str_lossy().into_owned());
        let detached = head.is_detached();
        let id = head.into_peeled_id().ok().map(|i| i.detach());
        Ok((id, if detached { None } else { branch }))
    }

    /// Every path that differs from HEAD: modified, staged, deleted,
    /// untracked (one by one), never ignored ones. A name that is not UTF-8
    /// is in `not_utf8` (shown with its bytes escaped), not in `paths`:
    /// nothing here can commit it, and no lossy spelling of it is a path.
    pub fn dirty(&self) -> Result<Dirty> {
        let err = |e: gix::Error| Error::git("read the status", &self.root, e);
        let iter = self
            .repo
            .status(gix::progress::Discard)
            .map_err(err)?
            .untracked_files(gix::status::UntrackedFiles::Files)
            .index_worktree_rewrites(None)
            .into_iter(Vec::<BString>::new())
            .map_err(err)?;
        let mut out = Dirty::default();
        for item in iter {
            let item = item.map_err(|e| Error::git("read the status", &self.root, e))?;
            let location = item.location();
            match location.to_str() {
                Ok(p) => {
                    out.paths.insert(p.to_owned());
                }
                Err(_) => out.not_utf8.push(format!("{:?}", location.as_bstr())),
            }
        }
        Ok(out)
    }

    /// A merge, rebase, cherry-pick or revert is under way.
    pub fn operation_in_progress(&self) -> bool {
        let g = self.repo.git_dir();
        [
            "MERGE_HEAD",
            "CHERRY_PICK_HEAD",
            "REVERT_HEAD",
            "rebase-merge",
            "rebase-apply",
        ]
        .iter()
        .any(|f| g.join(f).exists())
    }

    /// `base` with the working-tree state of `paths` (added, changed or
    /// removed); returns the tree and the index entries to update.
    fn tree_with(&self, base: ObjectId, paths: &[String]) -> Result<(ObjectId, Vec<Staged>)> {
        let err = |e: gix::Error| Error::git("build a tree", &self.root, e);
        let tree: gix::objs::Tree = self
            .repo
            .find_tree(base)
            .map_err(err)?
            .decode()
            .map_err(err)?
            .into();
        let mut editor =
            gix::objs::tree::Editor::new(tree, &self.repo.objects, gix::hash::Kind::Sha1);
        let mut staged = Vec::new();
        for p in paths {
            let full = self.root.join(p);
            match std::fs::symlink_metadata(&full) {
                Ok(md) if md.is_file() || md.file_type().is_symlink() => {
                    let id = if md.is_file() && md.len() > super::objects::STREAM_BLOB_BYTES {
                        // Never whole in memory (a build output, a dataset).
                        let objects = self.repo.objects.store_ref().path().to_path_buf();
                        super::objects::stream_loose(&objects, &full, md.len())
                            .io("commit", &full)?
                            .ok_or_else(|| Error::from(Skip::FileChanging { path: full.clone() }))?
                            .0
                    } else {
                        let data = index_edit::read_worktree(&full, &md)?;
                        self.repo.write_blob(&data).map_err(err)?.detach()
                    };
                    let mode = index_edit::mode_of(&md);
                    let kind = if md.file_type().is_symlink() {
                        gix::objs::tree::EntryKind::Link
                    } else if mode == gix::index::entry::Mode::FILE_EXECUTABLE {
                        gix::objs::tree::EntryKind::BlobExecutable
                    } else {
                        gix::objs::tree::EntryKind::Blob
                    };
                    editor.upsert(p.split('/'), kind, id).map_err(err)?;
                    staged.push(Staged {
                        path: p.as_bytes().to_vec(),
                        mode,
                        id,
                        stat: index_edit::stat_of(&md),
                    });
                }
                Ok(_) => {} // a directory: its files are listed on their own
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    editor.remove(p.split('/')).map_err(err)?;
                }
                Err(e) => return Err(e).io("inspect", &full),
            }
        }
        let id = editor
            .write(|t| self.repo.write_object(t).map(|i| i.detach()))
            .map_err(err)?;
        Ok((id, staged))
    }

    /// The skip of an agent commit whose branch moved meanwhile.
    fn head_moved(&self, branch: &str) -> Error {
        Skip::HeadMoved {
            branch: branch.to_string(),
            root: self.root.clone(),
        }
        .into()
    }

    /// Take git's `index.lock` ([`IndexLock`]), as `git commit` does from
    /// its read of the index to its write, so that a `git add` or `git
    /// commit` of the user's at the same moment is neither lost nor
    /// overwritten. A lock git holds means git is busy: wait
    /// [`GIT_BUSY_WAIT`] with backoff, then give up (an error whose code ends
    /// with [`GIT_BUSY`]); another's lock is never removed. One that an agent
    /// commit killed midway left is first finished or undone
    /// ([`Self::recover_index_locks`]).
    fn lock_index(&self) -> Result<IndexLock> {
        self.recover_index_locks(false);
        IndexLock::acquire(self.repo.git_dir(), GIT_BUSY_WAIT).map_err(|e| match e {
            NotTaken::Busy => Skip::GitBusy {
                root: self.root.clone(),
            }
            .into(),
            NotTaken::Io(e) => Error::git("lock the index", &self.root, e),
        })
    }

    /// The index locks an agent commit killed midway left in this
    /// repository ([`index_lock::recover`]): the index put in place where
    /// its commit landed, else the lock removed; with `dry_run`, only said.
    pub fn recover_index_locks(&self, dry_run: bool) -> Vec<(PathBuf, Recovered)> {
        let tip = self.head().ok().and_then(|(id, _)| id);
        index_lock::recover(self.repo.git_dir(), tip, dry_run)
    }

    /// The index with the entries of exactly `staged` set (and `removed`
    /// dropped), read under `lock` and written into it, whole, for commit
    /// `commit` (named on the lock before the branch moves); other entries,
    /// staged or not, stay as the user left them. Dropped instead of
    /// committed, the lock goes and the index is as it was.
    fn prepare_index(
        &self,
        mut lock: IndexLock,
        staged: Vec<Staged>,
        removed: &HashSet<Vec<u8>>,
        commit: ObjectId,
    ) -> Result<IndexLock> {
        let mut index = if self.repo.index_path().exists() {
            self.repo
                .open_index()
                .map_err(|e| Error::git("read the index", &self.root, e))?
        } else {
            gix::index::File::from_state(
                gix::index::State::new(gix::hash::Kind::Sha1),
                self.repo.index_path(),
            )
        };
        index_edit::apply(&mut index, staged);
        index_edit::remove(&mut index, removed);
        index.remove_tree();
        lock.write(|out| {
            index
                .write_to(out, gix::index::write::Options::default())
                .map(drop)
                .map_err(std::io::Error::other)
        })
        .io("write the index of", &self.root)?;
        lock.name_commit(commit)
            .io("write the index of", &self.root)?;
        Ok(lock)
    }

    /// Write a commit of `tree` on `parent` by `sig`.
    fn write_commit(
        &self,
        tree: ObjectId,
        parent: Option<ObjectId>,
        sig: &gix::actor::Signature,
        message: &str,
    ) -> Result<ObjectId> {
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: sig.clone(),
            committer: sig.clone(),
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        Ok(self
            .repo
            .write_object(&commit)
            .map_err(|e| Error::git("write the commit", &self.root, e))?
            .detach())
    }

    /// Move `name` (`HEAD` is followed to its branch) from `expected` to
    /// `commit`, with a reflog entry, as `git commit` does.
    fn move_branch(
        &self,
        name: &str,
        expected: gix::refs::transaction::PreviousValue,
        commit: ObjectId,
        sig: &gix::actor::Signature,
        message: &str,
    ) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
        use gix::refs::transaction::{Change, LogChange, RefEdit, RefLog};
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: format!("commit: {}", message.lines().next().unwrap_or("")).into(),
                },
                expected,
                new: gix::refs::Target::Object(commit),
            },
            name: name.try_into()?,
            deref: true,
        };
        let mut buf = gix::date::parse::TimeBuf::default();
        self.repo
            .edit_references_as([edit], Some(sig.to_ref(&mut buf)))?;
        Ok(())
    }

    /// Commit exactly `paths` on the current branch as the agent (an error
    /// whose code ends with [`FILE_CHANGING`] when a large file changed
    /// while it was read, with [`HEAD_MOVED`] when the branch moved
    /// meanwhile, with [`GIT_BUSY`] when git holds the index). Once the
    /// files are read, git's order: the index locked, the commit written,
    /// the new index written into the lock, the branch moved, the index put
    /// in place. Killed in between, it leaves `index.lock` as a killed `git
    /// commit` does, but known for ours: the next agent commit (or `verify
    /// --all --fix`) finishes or undoes it ([`super::index_lock`]).
    pub fn commit_paths(
        &self,
        paths: &[String],
        name: &str,
        email: &str,
        message: &str,
        time: f64,
    ) -> Result<ObjectId> {
        // A large file's object being streamed when a process died.
        for t in super::locks::stale_project_temps(self.repo.git_dir()) {
            let _ = std::fs::remove_file(t);
        }
        let (head, branch) = self.head()?;
        let Some(branch) = branch else {
            return Err(Refusal::HeadDetached.into());
        };
        // A branch with no commit yet (a `git init` the agent's first
        // files go into): the agent's commit is its first, as `git commit`
        // would make it.
        let base = match head {
            Some(head) => self
                .repo
                .find_commit(head)
                .map_err(|e| Error::git("read HEAD", &self.root, e))?
                .tree_id()
                .map_err(|e| Error::git("read HEAD", &self.root, e))?
                .detach(),
            None => ObjectId::empty_tree(gix::hash::Kind::Sha1),
        };
        let (tree, staged) = self.tree_with(base, paths)?;
        // The files are read; from here to the index written, git's lock,
        // as `git commit` holds it. A commit of the user's since HEAD was
        // read makes this turn a skip.
        let index_lock = self.lock_index()?;
        if self.head()?.0 != head {
            return Err(self.head_moved(&branch));
        }
        let removed: HashSet<Vec<u8>> = paths
            .iter()
            .filter(|p| !staged.iter().any(|s| s.path == p.as_bytes()))
            .map(|p| p.as_bytes().to_vec())
            .collect();
        let sig = agent_sig(name, email, time);
        let id = self.write_commit(tree, head, &sig, message)?;
        let index = self.prepare_index(index_lock, staged, &removed, id)?;
        use gix::refs::transaction::PreviousValue;
        let expected = match head {
            Some(head) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(head)),
            None => PreviousValue::MustNotExist,
        };
        if let Err(e) =
            self.move_branch(&format!("refs/heads/{branch}"), expected, id, &sig, message)
        {
            // Another writer's commit (not through the index: agent
            // commits take the project's lock, git takes `index.lock`)
            // landed since HEAD was read. Nothing is moved or staged: the
            // turn is a skip, its changes left in the tree.
            if self.head().is_ok_and(|(now, _)| now != head) {
                return Err(self.head_moved(&branch));
            }
            return Err(Error::git("move the branch", &self.root, e));
        }
        index.commit().io("put the index in place in", &self.root)?;
        Ok(id)
    }

    /// Commits made by agents, newest first: (commit, message).
    pub fn agent_commits(&self, limit: usize) -> Result<Vec<(ObjectId, String, i64)>> {
        let Ok(head) = self.repo.head_id() else {
            return Ok(Vec::new());
        };
        let walk = self
            .repo
            .rev_walk([head.detach()])
            .all()
            .map_err(|e| Error::git("walk the history", &self.root, e))?;
        let mut out = Vec::new();
        for info in walk {
            let info = info.map_err(|e| Error::git("walk the history", &self.root, e))?;
            let c = info
                .object()
                .map_err(|e| Error::git("read a commit", &self.root, e))?;
            let msg = c.message_raw_sloppy().to_str_lossy().into_owned();
            if msg.starts_with("[agent ") {
                let t = c.time().map(|t| t.seconds).unwrap_or(0);
                out.push((info.id, msg, t));
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }
}

/// An agent commit through git itself, so that the project's hooks run
/// (`project set --hooks true`). The declared paths are staged; others are
/// left as they are (`commit --only`).
pub fn hooked_commit(
    root: &Path,
    paths: &[String],
    name: &str,
    email: &str,
    message: &str,
) -> std::result::Result<String, String> {
    let git = |args: &[&str]| -> std::result::Result<String, String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .env("GIT_AUTHOR_NAME", name)
            .env("GIT_AUTHOR_EMAIL", email)
            .env("GIT_COMMITTER_NAME", name)
            .env("GIT_COMMITTER_EMAIL", email)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "git {} failed: {}",
                args[0],
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // `commit --only` needs new files known to the index; `add -N` records
    // only their intent, and is undone below if the commit is refused.
    let mut intent = vec!["add", "-N", "--"];
    intent.extend(
        paths
            .iter()
            .filter(|p| root.join(p).exists())
            .map(String::as_str),
    );
    if intent.len() > 3 {
        git(&intent)?;
    }
    let mut commit = vec!["commit", "--only", "-q", "-m", message, "--"];
    commit.extend(paths.iter().map(String::as_str));
    if let Err(why) = git(&commit) {
        // Leave the user's index as it was: these paths were clean at the
        // baseline, so their index entries were HEAD's.
        let mut reset = vec!["reset", "-q", "--"];
        reset.extend(paths.iter().map(String::as_str));
        let _ = git(&reset);
        return Err(why);
    }
    git(&["rev-parse", "HEAD"])
}
