//! References of a session repository, through gix's ref store: reads, and
//! updates as one transaction (every ref locked, then each checked against
//! what it must hold, then all written), with git's reflog lines.

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{Expected, Head, RefUpdate, SessionRepo, full_branch, full_name};
use crate::error::{Error, Result};

use crate::layout::lock::GIT_LOCK_WAIT as LOCK_WAIT;

impl SessionRepo {
    /// Apply all `updates` in one transaction (locks all refs first, then
    /// commits; a changed ref fails the compare-and-swap). Branch moves and a
    /// detached HEAD are logged by gix's rule (branches and HEAD always, as
    /// git does by default in a repository with a work tree); pointing HEAD
    /// at a branch is not, as gix does not log symbolic changes.
    pub fn update_refs(&self, updates: &[RefUpdate]) -> Result<()> {
        use gix::refs::Target;
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let head = || gix::refs::FullName::try_from("HEAD").expect("HEAD is a valid name");
        let mut edits = Vec::with_capacity(updates.len());
        for u in updates {
            let (name, new, expected, message) = match u {
                RefUpdate::Advance {
                    branch,
                    old,
                    new,
                    message,
                } => (
                    full_branch(branch)?,
                    Target::Object(*new),
                    PreviousValue::MustExistAndMatch(Target::Object(*old)),
                    message.as_str(),
                ),
                RefUpdate::Create {
                    branch,
                    new,
                    message,
                } => (
                    full_branch(branch)?,
                    Target::Object(*new),
                    PreviousValue::MustNotExist,
                    message.as_str(),
                ),
                RefUpdate::AttachHead { branch } => (
                    head(),
                    Target::Symbolic(full_branch(branch)?),
                    PreviousValue::Any,
                    "",
                ),
                RefUpdate::DetachHead { commit } => (
                    head(),
                    Target::Object(*commit),
                    PreviousValue::Any,
                    "checkout",
                ),
                RefUpdate::Set {
                    name,
                    expected,
                    new,
                    message,
                } => (
                    full_name(name)?,
                    Target::Object(*new),
                    match expected {
                        Expected::Any => PreviousValue::Any,
                        Expected::Absent => PreviousValue::MustNotExist,
                        Expected::Is(old) => PreviousValue::MustExistAndMatch(Target::Object(*old)),
                    },
                    message.as_str(),
                ),
                RefUpdate::Delete { name, old } => {
                    let name = full_name(name)?;
                    self.refuse_linked_log(name.as_bstr())?;
                    edits.push(RefEdit {
                        change: Change::Delete {
                            expected: PreviousValue::MustExistAndMatch(Target::Object(*old)),
                            log: RefLog::AndReference,
                        },
                        name,
                        deref: false,
                    });
                    continue;
                }
            };
            self.refuse_linked_log(name.as_bstr())?;
            edits.push(RefEdit {
                change: Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        // One line: a newline would start a malformed entry.
                        message: message.replace('\n', " ").into(),
                    },
                    expected,
                    new,
                },
                name,
                deref: false,
            });
        }
        let sig = self.signature(crate::out::now());
        let mut time = gix::date::parse::TimeBuf::default();
        let committer = sig.to_ref(&mut time);
        let apply = || {
            self.refs
                .transaction()
                .prepare(
                    edits.iter().cloned(),
                    gix::lock::acquire::Fail::AfterDurationWithBackoff(LOCK_WAIT),
                    gix::lock::acquire::Fail::AfterDurationWithBackoff(LOCK_WAIT),
                )
                .and_then(|t| t.commit(Some(committer)))
        };
        let what = "move a reference (another writer changed it?)";
        match apply() {
            Ok(_) => Ok(()),
            Err(first) => {
                // A ref lock left by a git-session that was killed mid-update
                // (we hold the session's exclusive lock): clear it, retry once.
                if self.stale_ref_locks() == 0 {
                    return Err(self.err(what, first));
                }
                self.clear_stale_locks();
                apply().map(|_| ()).map_err(|e| self.err(what, e))
            }
        }
    }

    /// gix appends to a reflog through whatever is at its path: a link
    /// planted there is refused, never written through.
    fn refuse_linked_log(&self, name: &gix::bstr::BStr) -> Result<()> {
        let Ok(name) = name.to_str() else {
            return Ok(()); // not a name gix takes
        };
        let log = self.git_dir.join("logs").join(name);
        match std::fs::symlink_metadata(&log) {
            Ok(m) if !m.is_file() => Err(Error::corrupt(
                &log,
                "the reflog is not a regular file (a link or a special file); nothing was written through it",
            )),
            _ => Ok(()),
        }
    }

    /// The commit the reference `name` (a full name) points to.
    pub fn ref_tip(&self, name: &str) -> Result<Option<ObjectId>> {
        self.ref_target(name.as_bytes().as_bstr())
    }

    pub fn head(&self) -> Result<Head> {
        use gix::refs::Target;
        let head = self
            .refs
            .try_find("HEAD")
            .map_err(|e| self.err("read HEAD", e))?
            .ok_or_else(|| self.err("read HEAD", "the repository has no HEAD"))?;
        Ok(match head.target {
            Target::Object(id) => Head {
                branch: None,
                commit: Some(id),
            },
            Target::Symbolic(name) => Head {
                branch: Some(name.shorten().to_str_lossy().into_owned()),
                commit: self.ref_target(name.as_bstr())?,
            },
        })
    }

    /// What the reference `name` names, following symbolic references; `None`
    /// when there is no such reference (an unborn branch). Our refs name
    /// commits directly: no object is read to peel them.
    fn ref_target(&self, name: &gix::bstr::BStr) -> Result<Option<ObjectId>> {
        use gix::refs::Target;
        let what = "resolve a reference";
        let mut name = name.to_owned();
        for _ in 0..5 {
            let Some(r) = self
                .refs
                .try_find(name.as_bstr())
                .map_err(|e| self.err(what, e))?
            else {
                return Ok(None);
            };
            match r.target {
                Target::Object(id) => return Ok(Some(id)),
                Target::Symbolic(next) => name = next.as_bstr().to_owned(),
            }
        }
        Err(self.err(what, format!("`{name}`: symbolic references nest too deep")))
    }

    /// The commit a local branch points to.
    pub fn branch_tip(&self, branch: &str) -> Result<Option<ObjectId>> {
        let name = full_branch(branch)?;
        self.ref_target(name.as_bstr())
    }

    /// Every local branch: `(short name, tip)`, sorted by name.
    pub fn branches(&self) -> Result<Vec<(String, ObjectId)>> {
        self.refs_under("refs/heads/")
    }

    /// Every reference whose full name starts with `prefix` (which ends in
    /// `/`): `(the name after the prefix, tip)`, sorted by name.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
        use gix::refs::Target;
        let what = "list references";
        let platform = self.refs.iter().map_err(|e| self.err(what, e))?;
        let rel: &gix::bstr::BStr = prefix.as_bytes().as_bstr();
        let prefix_name = rel.try_into().map_err(|e| self.err(what, Box::new(e)))?;
        let mut out = Vec::new();
        for r in platform
            .prefixed(prefix_name)
            .map_err(|e| self.err(what, e))?
        {
            let r = r.map_err(|e| self.err("read a reference", e))?;
            let full = r.name.as_bstr().to_str_lossy().into_owned();
            let name = full.strip_prefix(prefix).unwrap_or(&full).to_string();
            let tip = match r.target {
                Target::Object(id) => Some(id),
                Target::Symbolic(next) => self.ref_target(next.as_bstr()).ok().flatten(),
            };
            if let Some(id) = tip {
                out.push((name, id));
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::git::tests::git;

    fn out(dir: &Path, args: &[&str]) -> String {
        let o = git(dir, args);
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    }

    /// A repo made by git with two commits on `main`; returns (dir, first, second).
    fn repo() -> (tempfile::TempDir, ObjectId, ObjectId) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        out(d, &["init", "-q", "-b", "main"]);
        let mut ids = Vec::new();
        for m in ["one", "two"] {
            let args = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q"];
            out(d, &[&args[..], &["--allow-empty", "-m", m]].concat());
            ids.push(ObjectId::from_hex(out(d, &["rev-parse", "HEAD"]).as_bytes()).unwrap());
        }
        (dir, ids[0], ids[1])
    }

    fn locks(git_dir: &Path) -> Vec<PathBuf> {
        walkdir::WalkDir::new(git_dir)
            .into_iter()
            .flatten()
            .map(|e| e.into_path())
            .filter(|p| p.extension().is_some_and(|x| x == "lock"))
            .collect()
    }

    fn create(branch: &str, new: ObjectId, message: &str) -> RefUpdate {
        RefUpdate::Create {
            branch: branch.into(),
            new,
            message: message.into(),
        }
    }

    fn advance(branch: &str, old: ObjectId, new: ObjectId, message: &str) -> RefUpdate {
        RefUpdate::Advance {
            branch: branch.into(),
            old,
            new,
            message: message.into(),
        }
    }

    #[test]
    fn refs_and_reflogs_read_back_with_git() {
        let (dir, one, two) = repo();
        let (d, g) = (dir.path(), dir.path().join(".git"));
        let repo = SessionRepo::open(d).unwrap();
        repo.update_refs(&[
            create("retry-a", one, "commit: made"),
            RefUpdate::AttachHead {
                branch: "retry-a".into(),
            },
        ])
        .unwrap();
        assert_eq!(out(d, &["rev-parse", "retry-a"]), one.to_string());
        assert_eq!(out(d, &["symbolic-ref", "HEAD"]), "refs/heads/retry-a");
        let log = std::fs::read_to_string(g.join("logs/refs/heads/retry-a")).unwrap();
        assert!(
            log.starts_with(&format!(
                "{} {one} OpenProgram <openprogram@local> ",
                ObjectId::null(gix::hash::Kind::Sha1)
            )),
            "{log}"
        );
        assert!(log.ends_with(" +0000\tcommit: made\n"), "{log}");
        assert_eq!(
            out(d, &["reflog", "show", "--format=%H %gs", "retry-a"]),
            format!("{one} commit: made")
        );
        assert_eq!(
            repo.head().unwrap(),
            Head {
                branch: Some("retry-a".into()),
                commit: Some(one)
            }
        );

        // Advancing a packed ref: the loose file is written over it.
        out(d, &["pack-refs", "--all"]);
        assert!(!g.join("refs/heads/retry-a").exists());
        repo.update_refs(&[advance("retry-a", one, two, "commit: next\nsecond line")])
            .unwrap();
        assert_eq!(out(d, &["rev-parse", "HEAD"]), two.to_string());
        assert_eq!(
            out(d, &["reflog", "show", "--format=%gs", "retry-a"]),
            "commit: next second line\ncommit: made"
        );

        // Detached: HEAD holds the id, and its log says so.
        repo.update_refs(&[RefUpdate::DetachHead { commit: one }])
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(g.join("HEAD")).unwrap(),
            format!("{one}\n")
        );
        assert!(
            std::fs::read_to_string(g.join("logs/HEAD"))
                .unwrap()
                .ends_with("\tcheckout\n")
        );
        // A ref, and its log, in directories that do not exist yet.
        repo.update_refs(&[create("deep/er/x", two, "made deep")])
            .unwrap();
        assert_eq!(out(d, &["rev-parse", "deep/er/x"]), two.to_string());
        assert_eq!(
            out(d, &["reflog", "show", "--format=%gs", "deep/er/x"]),
            "made deep"
        );
        assert_eq!(
            repo.branches().unwrap(),
            vec![
                ("deep/er/x".into(), two),
                ("main".into(), two),
                ("retry-a".into(), two)
            ]
        );
        assert!(locks(&g).is_empty());
        let fsck = git(d, &["fsck", "--strict"]);
        assert!(
            fsck.status.success(),
            "{}",
            String::from_utf8_lossy(&fsck.stderr)
        );
    }

    #[test]
    fn a_failed_check_changes_nothing() {
        let (dir, one, two) = repo();
        let g = dir.path().join(".git");
        let repo = SessionRepo::open(dir.path()).unwrap();
        let before = std::fs::read(g.join("refs/heads/main")).unwrap();
        // The second edit's check fails: the first is not applied either.
        let err = repo
            .update_refs(&[create("new", one, "m"), advance("main", one, one, "m")])
            .unwrap_err();
        assert!(
            err.to_string().contains("another writer changed it"),
            "{err}"
        );
        assert_eq!(repo.branch_tip("new").unwrap(), None);
        assert!(!g.join("logs/refs/heads/new").exists());
        // Creating a ref that exists is refused.
        assert!(repo.update_refs(&[create("main", one, "m")]).is_err());
        assert!(locks(&g).is_empty());
        assert_eq!(std::fs::read(g.join("refs/heads/main")).unwrap(), before);
        assert_eq!(repo.branch_tip("main").unwrap(), Some(two));
    }
}
