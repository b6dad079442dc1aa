//! A commit of a user's project as `git show` shows it: subject, author,
//! date, the files it changed and their unified diff against its first
//! parent. `export` shows each turn's agent commit so; `diff` prints it
//! as `git show` prints it ([`CommitPatch::git_show`]).

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::prelude::ObjectIdExt;

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
    /// Its mode before the commit; 0 for a file added.
    pub old_mode: u32,
    /// Its blob before and after, abbreviated as git abbreviates ids in its
    /// repository (`index` lines); empty for the side that has none.
    pub old_id: String,
    pub new_id: String,
    /// The unified diff of its text (hunks only, no header), empty for a
    /// binary file or one whose diff was left out past the limit.
    pub patch: String,
    /// A change of type (`T`: a file become a link, …) as git shows one:
    /// the old content removed and the new added, two diffs (their hunks).
    pub split: Option<(String, String)>,
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
    /// The author's time zone, seconds east of UTC.
    pub offset: i32,
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
        self.files.iter().fold((0, 0), |(a, r), f| {
            let (fa, fr) = f.counts();
            (a + fa, r + fr)
        })
    }

    /// The commit as `git show <id>` prints it (without colour, git's
    /// default settings): `commit`, `Author:` and `Date:` lines, the
    /// message indented, then [`CommitPatch::git_diff`]. Renames are shown
    /// as the file deleted and the file added, as `--no-renames` shows them.
    pub fn git_show(&self) -> String {
        let date = gix::date::Time {
            seconds: self.time,
            offset: self.offset,
        }
        .format_or_unix(gix::date::time::format::DEFAULT);
        let mut out = format!(
            "commit {}\nAuthor: {}\nDate:   {date}\n\n",
            self.id, self.author
        );
        // git skips the blank lines the message starts with, indents each
        // line (a blank one too) by four spaces, expands tabs, and trims
        // the end.
        let mut body = String::new();
        for line in self.message.lines().skip_while(|l| l.trim().is_empty()) {
            body.push_str("    ");
            if !line.trim().is_empty() {
                body.push_str(&expand_tabs(line));
            }
            body.push('\n');
        }
        out.push_str(body.trim_end());
        out.push('\n');
        let diff = self.git_diff();
        if !diff.is_empty() {
            out.push('\n');
            out.push_str(&diff);
        }
        out
    }

    /// The diff as `git show --format= <id>` prints it: [`Self::unified`]
    /// with the lines git adds: `index` (the blobs, abbreviated), the old
    /// and new modes of a mode change, and a change of type as a deletion
    /// and an addition; paths quoted as git quotes them.
    pub fn git_diff(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            match &f.split {
                Some((removed, added)) => {
                    let old = FileChange {
                        status: 'D',
                        mode: f.old_mode,
                        new_id: String::new(),
                        patch: removed.clone(),
                        split: None,
                        ..f.clone()
                    };
                    let new = FileChange {
                        status: 'A',
                        old_mode: 0,
                        old_id: String::new(),
                        patch: added.clone(),
                        split: None,
                        ..f.clone()
                    };
                    old.write_git_diff(&mut out);
                    new.write_git_diff(&mut out);
                }
                None => f.write_git_diff(&mut out),
            }
        }
        out
    }
}

impl FileChange {
    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        let mut counts = (0, 0);
        for l in self.patch.lines() {
            if l.starts_with('+') {
                counts.0 += 1;
            } else if l.starts_with('-') {
                counts.1 += 1;
            }
        }
        counts
    }

    /// This file's part of [`CommitPatch::git_diff`].
    fn write_git_diff(&self, out: &mut String) {
        let (a, b) = (quoted("a/", &self.path), quoted("b/", &self.path));
        let zeros = |other: &str| "0".repeat(other.len().max(7));
        out.push_str(&format!("diff --git {a} {b}\n"));
        let (from, to) = match self.status {
            'A' => {
                out.push_str(&format!("new file mode {:o}\n", self.mode));
                out.push_str(&format!("index {}..{}\n", zeros(&self.new_id), self.new_id));
                ("/dev/null".to_string(), b)
            }
            'D' => {
                out.push_str(&format!("deleted file mode {:o}\n", self.mode));
                out.push_str(&format!("index {}..{}\n", self.old_id, zeros(&self.old_id)));
                (a, "/dev/null".to_string())
            }
            _ if self.old_mode != self.mode => {
                out.push_str(&format!(
                    "old mode {:o}\nnew mode {:o}\n",
                    self.old_mode, self.mode
                ));
                if self.old_id != self.new_id {
                    out.push_str(&format!("index {}..{}\n", self.old_id, self.new_id));
                }
                (a, b)
            }
            _ => {
                out.push_str(&format!(
                    "index {}..{} {:o}\n",
                    self.old_id, self.new_id, self.mode
                ));
                (a, b)
            }
        };
        if self.binary && self.old_id != self.new_id {
            out.push_str(&format!("Binary files {from} and {to} differ\n"));
        } else if !self.patch.is_empty() {
            // git ends a name holding a space with a tab, as diff(1) does.
            let tab = |name: &str| if name.contains(' ') { "\t" } else { "" };
            out.push_str(&format!("--- {from}{}\n+++ {to}{}\n", tab(&from), tab(&to)));
            out.push_str(&self.patch);
            if !self.patch.ends_with('\n') {
                out.push('\n');
            }
        }
    }
}

/// `prefix` + `path` as git writes a path in a diff's header: as it is, or
/// between double quotes with C escapes when it holds a control character,
/// a quote, a backslash or a byte past ASCII (`core.quotePath`, on by
/// default).
pub fn quoted(prefix: &str, path: &str) -> String {
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
    let whole = format!("{prefix}{path}");
    if whole.bytes().all(plain) {
        return whole;
    }
    let mut out = String::from("\"");
    for b in whole.bytes() {
        match b {
            b'\x07' => out.push_str("\\a"),
            b'\x08' => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\x0b' => out.push_str("\\v"),
            b'\x0c' => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if plain(b) => out.push(b as char),
            b => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// `line` with its tabs expanded to the next multiple of 8 columns, as
/// `git log` shows a message.
fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_string();
    }
    let mut out = String::new();
    let mut col = 0;
    for c in line.chars() {
        if c == '\t' {
            let n = 8 - col % 8;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
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
    let (time, offset) = match author.time() {
        Ok(t) => (t.seconds, t.offset),
        Err(_) => (author.seconds(), 0),
    };
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
            (Some(b), Some(a)) if b.0 & 0o170000 != a.0 & 0o170000 => 'T',
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
        let mut split = None;
        if !binary && budget > 0 {
            patch = unified(&a, &b);
            if status == 'T' {
                split = Some((unified(&a, b""), unified(b"", &b)));
            }
            let size = patch.len() + split.as_ref().map_or(0, |(r, a)| r.len() + a.len());
            if size > budget {
                patch.clear();
                split = None;
                cut = true;
            }
            budget = budget.saturating_sub(size);
        } else if !binary {
            cut = true;
        }
        let short = |e: Option<&(u32, ObjectId)>| {
            e.map_or(String::new(), |(_, id)| {
                id.attach(&repo.repo).shorten_or_id().to_string()
            })
        };
        files.push(FileChange {
            path: path.clone(),
            status,
            binary,
            mode: after.or(before).map_or(0, |e| e.0),
            old_mode: before.map_or(0, |e| e.0),
            old_id: short(before),
            new_id: short(after),
            patch,
            split,
        });
    }
    Ok(Some(CommitPatch {
        id: oid.to_string(),
        message,
        author: who,
        time,
        offset,
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
/// git writes them with its default settings: Myers' algorithm with the
/// indent heuristic (gix's slider heuristics), `@@ -0,0 +1,3 @@` for a new
/// file, a length of 1 left out, the function line after a hunk's header.
pub fn unified(a: &[u8], b: &[u8]) -> String {
    use gix::diff::blob::unified_diff::{ConsumeHunk, ContextSize, DiffLineKind, HunkHeader};
    use gix::diff::blob::{Algorithm, InternedInput, UnifiedDiff, diff_with_slider_heuristics};

    /// Hunks written out as text; `old`: the old side's lines, where a
    /// hunk's function line is looked for.
    struct Hunks<'a> {
        out: String,
        old: Vec<&'a [u8]>,
    }

    impl ConsumeHunk for Hunks<'_> {
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
            let before = (h.before_hunk_start as usize).saturating_sub(1);
            let func = function_line(&self.old[..before.min(self.old.len())]);
            self.out.push_str(&format!(
                "@@ -{} +{} @@{}\n",
                range(h.before_hunk_start, h.before_hunk_len),
                range(h.after_hunk_start, h.after_hunk_len),
                func.map(|f| format!(" {f}")).unwrap_or_default()
            ));
            for (kind, line) in lines {
                self.out.push(kind.to_prefix());
                let text = line.to_str_lossy();
                match text.strip_suffix('\n') {
                    Some(l) => {
                        self.out.push_str(l);
                        self.out.push('\n');
                    }
                    None => {
                        self.out.push_str(&text);
                        self.out.push_str("\n\\ No newline at end of file\n");
                    }
                }
            }
            Ok(())
        }

        fn finish(self) -> String {
            self.out
        }
    }

    let input = InternedInput::new(
        gix::diff::blob::sources::byte_lines(a),
        gix::diff::blob::sources::byte_lines(b),
    );
    let diff = diff_with_slider_heuristics(Algorithm::Myers, &input);
    UnifiedDiff::new(
        &diff,
        &input,
        Hunks {
            out: String::new(),
            old: a.split_inclusive(|b| *b == b'\n').collect(),
        },
        ContextSize::symmetrical(3),
    )
    .consume()
    .unwrap_or_default()
}

/// The text git puts after a hunk's `@@ … @@`: the last of `before` (the
/// lines above the hunk) that starts with a letter, `_` or `$` (git's
/// default function line, with no `diff` driver set), cut to 80 bytes and
/// its trailing white space dropped.
fn function_line(before: &[&[u8]]) -> Option<String> {
    let line = before.iter().rev().find(
        |l| matches!(l.first(), Some(c) if c.is_ascii_alphabetic() || *c == b'_' || *c == b'$'),
    )?;
    let line = &line[..line.len().min(80)];
    let end = line
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    Some(line[..end].to_str_lossy().into_owned())
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

    #[test]
    fn a_hunk_names_the_function_line_above_it_as_git_does() {
        let a = "fn main() {\n    let a = 1;\n\n\n\n\n    let b = 2;\n}\n";
        let b = a.replace("b = 2", "b = 3");
        assert_eq!(
            unified(a.as_bytes(), b.as_bytes()),
            "@@ -4,5 +4,5 @@ fn main() {\n \n \n \n-    let b = 2;\n+    let b = 3;\n }\n"
        );
        let long = format!("_{}  \n", "x".repeat(100));
        assert_eq!(
            function_line(&[long.as_bytes(), b"  indented\n"]),
            Some(format!("_{}", "x".repeat(79)))
        );
        assert_eq!(function_line(&[b"  x\n", b"{\n"]), None);
    }

    #[test]
    fn paths_are_quoted_and_tabs_expanded_as_git_does() {
        assert_eq!(quoted("a/", "src/main.rs"), "a/src/main.rs");
        assert_eq!(quoted("a/", "a b.txt"), "a/a b.txt");
        assert_eq!(quoted("b/", "é\t\"q\\"), "\"b/\\303\\251\\t\\\"q\\\\\"");
        assert_eq!(expand_tabs("a\tb\t\tc"), "a       b               c");
        let f = FileChange {
            path: "a b.txt".into(),
            status: 'M',
            binary: false,
            mode: 0o100644,
            old_mode: 0o100644,
            old_id: "1111111".into(),
            new_id: "2222222".into(),
            patch: "@@ -1 +1 @@\n-a\n+b\n".into(),
            split: None,
        };
        let mut out = String::new();
        f.write_git_diff(&mut out);
        assert!(
            out.contains("\n--- a/a b.txt\t\n+++ b/a b.txt\t\n"),
            "{out}"
        );
    }

    /// Each kind of change with the header lines git gives it.
    #[test]
    fn each_change_has_the_lines_git_shows() {
        let file =
            |path: &str, status, mode, old_mode, ids: (&str, &str), patch: &str| FileChange {
                path: path.into(),
                status,
                binary: false,
                mode,
                old_mode,
                old_id: ids.0.into(),
                new_id: ids.1.into(),
                patch: patch.into(),
                split: None,
            };
        let mut link = file("l", 'T', 0o100644, 0o120000, ("1111111", "2222222"), "x");
        link.split = Some(("@@ -1 +0,0 @@\n-f\n".into(), "@@ -0,0 +1 @@\n+l\n".into()));
        let mut bin = file("b", 'M', 0o100644, 0o100644, ("3333333", "4444444"), "");
        bin.binary = true;
        let p = CommitPatch {
            id: "0".repeat(40),
            message: "\n\nsubject\n\n\tbody\n\n".into(),
            author: "A <a@e>".into(),
            time: 0,
            offset: 3600,
            files: vec![
                file("f", 'M', 0o100755, 0o100644, ("5555555", "5555555"), ""),
                file(
                    "g",
                    'M',
                    0o100644,
                    0o100644,
                    ("6666666", "7777777"),
                    "@@ -1 +1 @@\n-a\n+b\n",
                ),
                link,
                bin,
                file("n", 'A', 0o100644, 0, ("", "e69de29"), ""),
                file(
                    "d",
                    'D',
                    0o100644,
                    0o100644,
                    ("8888888", ""),
                    "@@ -1 +0,0 @@\n-x\n",
                ),
            ],
            cut: false,
        };
        assert_eq!(
            p.git_show(),
            "commit 0000000000000000000000000000000000000000\n\
             Author: A <a@e>\n\
             Date:   Thu Jan 1 01:00:00 1970 +0100\n\
             \n    subject\n    \n            body\n\n\
             diff --git a/f b/f\nold mode 100644\nnew mode 100755\n\
             diff --git a/g b/g\nindex 6666666..7777777 100644\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\n\
             diff --git a/l b/l\ndeleted file mode 120000\nindex 1111111..0000000\n--- a/l\n+++ /dev/null\n@@ -1 +0,0 @@\n-f\n\
             diff --git a/l b/l\nnew file mode 100644\nindex 0000000..2222222\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+l\n\
             diff --git a/b b/b\nindex 3333333..4444444 100644\nBinary files a/b and b/b differ\n\
             diff --git a/n b/n\nnew file mode 100644\nindex 0000000..e69de29\n\
             diff --git a/d b/d\ndeleted file mode 100644\nindex 8888888..0000000\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        );
    }
}
