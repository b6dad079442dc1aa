//! A commit of a user's project as `git show` shows it: subject, author,
//! date, the files it changed and their unified diff against its first
//! parent. `export` shows each turn's agent commit so.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::project::UserRepo;
use crate::error::{Error, Result};

/// One file a commit changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Its path, `/`-separated.
    pub path: String,
    /// `A` added, `M` modified, `D` deleted, `T` its type changed (a file
    /// became a link, …).
    pub status: char,
    /// Whether either side is binary (no text diff shown).
    pub binary: bool,
    /// Its mode (the old one for a file deleted), as git writes it (`100644`).
    pub mode: u32,
    /// The unified diff of its text (hunks only, no header), empty for a
    /// binary file or one whose diff was left out past the limit.
    pub patch: String,
}

/// A commit and what it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitPatch {
    pub id: String,
    pub message: String,
    /// `Name <email>`.
    pub author: String,
    /// The author's time, unix seconds.
    pub time: i64,
    pub files: Vec<FileChange>,
    /// Whether diffs were left out past the limit given.
    pub cut: bool,
}

impl CommitPatch {
    pub fn subject(&self) -> &str {
        self.message.lines().next().unwrap_or("")
    }

    /// The diff as `git show` prints it after the message: a `diff --git`
    /// header per file, then its hunks.
    pub fn unified(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            let (a, b) = match f.status {
                'A' => ("/dev/null".to_string(), format!("b/{}", f.path)),
                'D' => (format!("a/{}", f.path), "/dev/null".to_string()),
                _ => (format!("a/{}", f.path), format!("b/{}", f.path)),
            };
            out.push_str(&format!("diff --git a/{0} b/{0}\n", f.path));
            match f.status {
                'A' => out.push_str(&format!("new file mode {:o}\n", f.mode)),
                'D' => out.push_str(&format!("deleted file mode {:o}\n", f.mode)),
                _ => {}
            }
            if f.binary {
                out.push_str(&format!("Binary files {a} and {b} differ\n"));
            } else if !f.patch.is_empty() {
                out.push_str(&format!("--- {a}\n+++ {b}\n"));
                out.push_str(&f.patch);
                if !f.patch.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        out
    }

    /// Lines added and removed, over every file.
    pub fn counts(&self) -> (usize, usize) {
        let mut counts = (0, 0);
        for f in &self.files {
            for l in f.patch.lines() {
                if l.starts_with('+') {
                    counts.0 += 1;
                } else if l.starts_with('-') {
                    counts.1 += 1;
                }
            }
        }
        counts
    }
}

/// Commit `id` of `repo` with its changes against its first parent (the
/// empty tree for a root commit); `None` when the repository has no such
/// commit (it was rewritten or collected). The diffs stop after `limit`
/// bytes of them (`cut` says so).
pub fn commit_patch(repo: &UserRepo, id: &str, limit: usize) -> Result<Option<CommitPatch>> {
    let Ok(oid) = ObjectId::from_hex(id.as_bytes()) else {
        return Ok(None);
    };
    let err = |what: &str, e: &dyn std::fmt::Display| {
        Error::git(what, &repo.root, std::io::Error::other(e.to_string()))
    };
    let Ok(commit) = repo.repo.find_commit(oid) else {
        return Ok(None);
    };
    let decoded = commit.decode().map_err(|e| err("decode a commit", &e))?;
    let author = decoded.author().map_err(|e| err("decode a commit", &e))?;
    let message = decoded.message.to_str_lossy().into_owned();
    let who = format!(
        "{} <{}>",
        author.name.to_str_lossy(),
        author.email.to_str_lossy()
    );
    let time = author.seconds();
    let tree = decoded.tree();
    let parent = decoded.parents().next();
    let new = flatten(repo, Some(tree))?;
    let old = match parent {
        Some(p) => {
            let pt = repo
                .repo
                .find_commit(p)
                .map_err(|e| err("read a commit", &e))?
                .tree_id()
                .map_err(|e| err("read a commit", &e))?
                .detach();
            flatten(repo, Some(pt))?
        }
        None => BTreeMap::new(),
    };
    let mut files = Vec::new();
    let mut budget = limit;
    let mut cut = false;
    let paths: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for path in paths {
        let (before, after) = (old.get(path), new.get(path));
        let status = match (before, after) {
            (None, Some(_)) => 'A',
            (Some(_), None) => 'D',
            (Some(b), Some(a)) if b == a => continue,
            (Some(b), Some(a)) if b.0 != a.0 => 'T',
            _ => 'M',
        };
        let read = |e: Option<&(u32, ObjectId)>| -> Result<Vec<u8>> {
            match e {
                Some((mode, id)) if is_blob(*mode) => Ok(repo
                    .repo
                    .find_object(*id)
                    .map_err(|e| err("read a blob", &e))?
                    .data
                    .clone()),
                _ => Ok(Vec::new()),
            }
        };
        let (a, b) = (read(before)?, read(after)?);
        let binary = crate::secrets::is_binary(&a) || crate::secrets::is_binary(&b);
        let mut patch = String::new();
        if !binary && budget > 0 {
            patch = unified(&a, &b);
            if patch.len() > budget {
                patch.clear();
                cut = true;
            }
            budget = budget.saturating_sub(patch.len());
        } else if !binary {
            cut = true;
        }
        files.push(FileChange {
            path: path.clone(),
            status,
            binary,
            mode: after.or(before).map_or(0, |e| e.0),
            patch,
        });
    }
    Ok(Some(CommitPatch {
        id: oid.to_string(),
        message,
        author: who,
        time,
        files,
        cut,
    }))
}

/// A tree entry's mode that holds file content (a regular file, an
/// executable or a link), not a directory or a submodule.
fn is_blob(mode: u32) -> bool {
    matches!(mode & 0o170000, 0o100000 | 0o120000)
}

/// Every non-tree entry under `tree`: path → (mode, id).
fn flatten(repo: &UserRepo, tree: Option<ObjectId>) -> Result<BTreeMap<String, (u32, ObjectId)>> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<(String, ObjectId)> = tree.into_iter().map(|t| (String::new(), t)).collect();
    while let Some((prefix, id)) = stack.pop() {
        let t = repo
            .repo
            .find_tree(id)
            .map_err(|e| Error::git("read a tree", &repo.root, e))?;
        let decoded = t
            .decode()
            .map_err(|e| Error::git("decode a tree", &repo.root, e))?;
        for e in &decoded.entries {
            let path = format!("{prefix}{}", e.filename.to_str_lossy());
            let mode = e.mode.value() as u32;
            if mode & 0o170000 == 0o040000 {
                stack.push((format!("{path}/"), e.oid.to_owned()));
            } else {
                out.insert(path, (mode, e.oid.to_owned()));
            }
        }
    }
    Ok(out)
}

/// The hunks of a unified diff (3 lines of context) from `a` to `b`, as
/// git writes them (`@@ -0,0 +1,3 @@` for a new file, a length of 1 left
/// out).
pub fn unified(a: &[u8], b: &[u8]) -> String {
    use gix::diff::blob::unified_diff::{ConsumeHunk, ContextSize, DiffLineKind, HunkHeader};
    use gix::diff::blob::{Algorithm, InternedInput, UnifiedDiff, diff_with_slider_heuristics};

    /// Hunks written out as text.
    struct Hunks(String);

    impl ConsumeHunk for Hunks {
        type Out = String;

        fn consume_hunk(
            &mut self,
            h: HunkHeader,
            lines: &[(DiffLineKind, &[u8])],
        ) -> std::io::Result<()> {
            let range = |start: u32, len: u32| match len {
                0 => format!("{},0", start.saturating_sub(1)),
                1 => start.to_string(),
                n => format!("{start},{n}"),
            };
            self.0.push_str(&format!(
                "@@ -{} +{} @@\n",
                range(h.before_hunk_start, h.before_hunk_len),
                range(h.after_hunk_start, h.after_hunk_len)
            ));
            for (kind, line) in lines {
                self.0.push(kind.to_prefix());
                let text = line.to_str_lossy();
                match text.strip_suffix('\n') {
                    Some(l) => {
                        self.0.push_str(l);
                        self.0.push('\n');
                    }
                    None => {
                        self.0.push_str(&text);
                        self.0.push_str("\n\\ No newline at end of file\n");
                    }
                }
            }
            Ok(())
        }

        fn finish(self) -> String {
            self.0
        }
    }

    let input = InternedInput::new(
        gix::diff::blob::sources::byte_lines(a),
        gix::diff::blob::sources::byte_lines(b),
    );
    let diff = diff_with_slider_heuristics(Algorithm::Histogram, &input);
    UnifiedDiff::new(
        &diff,
        &input,
        Hunks(String::new()),
        ContextSize::symmetrical(3),
    )
    .consume()
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_one_hunk_with_its_context() {
        let a = b"one\ntwo\nthree\nfour\n";
        let b = b"one\ntwo\n3\nfour\n";
        assert_eq!(
            unified(a, b),
            "@@ -1,4 +1,4 @@\n one\n two\n-three\n+3\n four\n"
        );
        assert_eq!(unified(b"", b"new\n"), "@@ -0,0 +1 @@\n+new\n");
        assert_eq!(
            unified(b"a\n", b"a"),
            "@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"
        );
        assert_eq!(unified(a, a), "");
    }
}
