//! Ref updates of a session repository, written the way git's files backend
//! writes loose refs: lock every ref (`<ref>.lock`, created exclusively),
//! check each one's current value, write the new values into the locks,
//! append the reflogs, then rename each lock over its ref.
//!
//! gix's ref transaction does the same, but its lock files register in a
//! process-wide table whose set-up reads the cgroup CPU quota, and its
//! lock timeout comes from a config override: together about a quarter of
//! a millisecond of every `commit-turn`, for two or three small files. The
//! reflog lines are the ones gix wrote: object updates are logged (in
//! `logs/<ref>`, when `core.logAllRefUpdates` allows or the log exists),
//! symbolic ones are not.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gix::ObjectId;

/// A ref's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Object(ObjectId),
    Symbolic(String),
}

/// What a ref must hold before an edit.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    Any,
    Absent,
    Object(ObjectId),
}

/// One ref to set: `name` is `HEAD` or a full name (`refs/heads/main`).
#[derive(Debug)]
pub struct Edit {
    pub name: String,
    pub value: Value,
    pub expect: Expect,
    pub message: String,
}

/// How the edits are written.
pub struct Options<'a> {
    /// `Name <email>` of the reflog lines.
    pub committer: &'a str,
    /// Seconds since the epoch of the reflog lines (UTC).
    pub time: i64,
    /// `core.logAllRefUpdates`: log refs whose log does not exist yet.
    pub log_all: bool,
    /// How long to wait for a ref another process has locked.
    pub lock_timeout: Duration,
}

/// A held `<ref>.lock`; removed on drop unless renamed over its ref.
struct Lock {
    path: PathBuf,
    file: Option<File>,
    done: bool,
}

impl Drop for Lock {
    fn drop(&mut self) {
        if !self.done {
            self.file.take();
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Lock {
    fn acquire(target: &Path, deadline: Instant) -> io::Result<Lock> {
        let mut path = target.as_os_str().to_owned();
        path.push(".lock");
        let path = PathBuf::from(path);
        let mut pause = Duration::from_millis(1);
        loop {
            match create(&path, |o| o.write(true).create_new(true)) {
                Ok(file) => {
                    return Ok(Lock {
                        path,
                        file: Some(file),
                        done: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("`{}` is held by another process", path.display()),
                    ));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// What ref `name` holds: its loose file, else its line in `packed-refs`.
pub fn read(git_dir: &Path, name: &str) -> io::Result<Option<Value>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{name}: {what}"));
    match crate::layout::atomic::read(git_dir.join(name)) {
        Ok(bytes) => {
            let text = std::str::from_utf8(&bytes).map_err(|_| bad("not UTF-8"))?;
            let text = text.trim_end();
            if let Some(target) = text.strip_prefix("ref: ") {
                return Ok(Some(Value::Symbolic(target.trim().to_string())));
            }
            let id = ObjectId::from_hex(text.as_bytes()).map_err(|_| bad("not an object id"))?;
            Ok(Some(Value::Object(id)))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => packed(git_dir, name),
        Err(e) => Err(e),
    }
}

/// Ref `name` in `packed-refs`, if that file lists it.
fn packed(git_dir: &Path, name: &str) -> io::Result<Option<Value>> {
    let bytes = match crate::layout::atomic::read(git_dir.join("packed-refs")) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    for line in bytes.split(|&b| b == b'\n') {
        if line.starts_with(b"#") || line.starts_with(b"^") {
            continue;
        }
        if let Some(sp) = line.iter().position(|&b| b == b' ')
            && &line[sp + 1..] == name.as_bytes()
        {
            let id = ObjectId::from_hex(&line[..sp]).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("packed-refs: a bad object id for {name}"),
                )
            })?;
            return Ok(Some(Value::Object(id)));
        }
    }
    Ok(None)
}

/// Apply `edits`: all or, when a lock or a check fails, none.
pub fn apply(git_dir: &Path, edits: &[Edit], opts: &Options) -> io::Result<()> {
    let deadline = Instant::now() + opts.lock_timeout;
    let mut locks = Vec::with_capacity(edits.len());
    for e in edits {
        locks.push(Lock::acquire(&git_dir.join(&e.name), deadline)?);
    }
    let mut olds = Vec::with_capacity(edits.len());
    for e in edits {
        let current = read(git_dir, &e.name)?;
        let ok = match (e.expect, &current) {
            (Expect::Any, _) | (Expect::Absent, None) => true,
            (Expect::Object(want), Some(Value::Object(have))) => want == *have,
            _ => false,
        };
        if !ok {
            return Err(io::Error::other(format!(
                "`{}` is {}, not {}",
                e.name,
                describe(current.as_ref()),
                match e.expect {
                    Expect::Object(id) => id.to_string(),
                    _ => "absent".into(),
                }
            )));
        }
        olds.push(match current {
            Some(Value::Object(id)) => id,
            _ => ObjectId::null(gix::hash::Kind::Sha1),
        });
    }
    for (lock, e) in locks.iter_mut().zip(edits) {
        let line = match &e.value {
            Value::Object(id) => format!("{id}\n"),
            Value::Symbolic(target) => format!("ref: {target}\n"),
        };
        let mut file = lock.file.take().expect("an acquired lock has its file");
        file.write_all(line.as_bytes())?;
    }
    for ((lock, e), old) in locks.iter_mut().zip(edits).zip(olds) {
        if let Value::Object(new) = e.value {
            log(git_dir, e, old, new, opts)?;
        }
        std::fs::rename(&lock.path, git_dir.join(&e.name))?;
        lock.done = true;
    }
    Ok(())
}

fn describe(v: Option<&Value>) -> String {
    match v {
        None => "absent".into(),
        Some(Value::Object(id)) => id.to_string(),
        Some(Value::Symbolic(t)) => format!("a symbolic ref to {t}"),
    }
}

/// Append the reflog line of `e` (git's format).
fn log(git_dir: &Path, e: &Edit, old: ObjectId, new: ObjectId, opts: &Options) -> io::Result<()> {
    let path = git_dir.join("logs").join(&e.name);
    if !opts.log_all && !path.is_file() {
        return Ok(());
    }
    // One line: a newline in the message would start a malformed entry.
    let message: String = e
        .message
        .chars()
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    let line = format!(
        "{old} {new} {} {} +0000\t{message}\n",
        opts.committer, opts.time
    );
    create(&path, |o| o.append(true).create(true))?.write_all(line.as_bytes())
}

/// Open `path` with `how`, creating its directory first only when it is
/// missing (not on every update: a `mkdir` and a `stat` per ref).
fn create(path: &Path, how: impl Fn(&mut OpenOptions) -> &mut OpenOptions) -> io::Result<File> {
    let open = || crate::layout::atomic::no_follow(how(&mut OpenOptions::new())).open(path);
    match open() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            open()
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
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

    /// A repo with two commits on `main`; returns (dir, first, second).
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

    fn opts() -> Options<'static> {
        Options {
            committer: "OpenProgram <openprogram@local>",
            time: 1_700_000_000,
            log_all: true,
            lock_timeout: Duration::from_millis(50),
        }
    }

    fn edit(name: &str, value: Value, expect: Expect, message: &str) -> Edit {
        Edit {
            name: name.into(),
            value,
            expect,
            message: message.into(),
        }
    }

    fn locks(git_dir: &Path) -> Vec<PathBuf> {
        walkdir::WalkDir::new(git_dir)
            .into_iter()
            .flatten()
            .map(|e| e.into_path())
            .filter(|p| p.extension().is_some_and(|x| x == "lock"))
            .collect()
    }

    #[test]
    fn refs_and_reflogs_read_back_with_git() {
        let (dir, one, two) = repo();
        let (d, g) = (dir.path(), dir.path().join(".git"));
        let edits = [
            edit(
                "refs/heads/retry-a",
                Value::Object(one),
                Expect::Absent,
                "commit: made",
            ),
            edit(
                "HEAD",
                Value::Symbolic("refs/heads/retry-a".into()),
                Expect::Any,
                "",
            ),
        ];
        apply(&g, &edits, &opts()).unwrap();
        assert_eq!(out(d, &["rev-parse", "retry-a"]), one.to_string());
        assert_eq!(out(d, &["symbolic-ref", "HEAD"]), "refs/heads/retry-a");
        assert_eq!(
            std::fs::read_to_string(g.join("logs/refs/heads/retry-a")).unwrap(),
            format!(
                "{} {one} OpenProgram <openprogram@local> 1700000000 +0000\tcommit: made\n",
                ObjectId::null(gix::hash::Kind::Sha1)
            )
        );
        assert_eq!(
            out(d, &["reflog", "show", "--format=%H %gs", "retry-a"]),
            format!("{one} commit: made")
        );

        // Advancing a packed ref: the loose file is written over it.
        out(d, &["pack-refs", "--all"]);
        assert!(!g.join("refs/heads/retry-a").exists());
        assert_eq!(
            read(&g, "refs/heads/retry-a").unwrap(),
            Some(Value::Object(one))
        );
        let up = edit(
            "refs/heads/retry-a",
            Value::Object(two),
            Expect::Object(one),
            "commit: next",
        );
        apply(&g, &[up], &opts()).unwrap();
        assert_eq!(out(d, &["rev-parse", "HEAD"]), two.to_string());
        assert_eq!(
            out(d, &["reflog", "show", "--format=%gs", "retry-a"]),
            "commit: next\ncommit: made"
        );

        // Detached: HEAD holds the id, and its log says so.
        apply(
            &g,
            &[edit("HEAD", Value::Object(one), Expect::Any, "checkout")],
            &opts(),
        )
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
        apply(
            &g,
            &[edit(
                "refs/heads/deep/er/x",
                Value::Object(two),
                Expect::Absent,
                "made deep",
            )],
            &opts(),
        )
        .unwrap();
        assert_eq!(out(d, &["rev-parse", "deep/er/x"]), two.to_string());
        assert_eq!(
            out(d, &["reflog", "show", "--format=%gs", "deep/er/x"]),
            "made deep"
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
    fn a_failed_check_or_a_held_lock_changes_nothing() {
        let (dir, one, two) = repo();
        let g = dir.path().join(".git");
        let before = std::fs::read(g.join("refs/heads/main")).unwrap();
        // The second edit's check fails: the first is not applied either.
        let edits = [
            edit("refs/heads/new", Value::Object(one), Expect::Absent, "m"),
            edit(
                "refs/heads/main",
                Value::Object(one),
                Expect::Object(one),
                "m",
            ),
        ];
        let err = apply(&g, &edits, &opts()).unwrap_err();
        assert!(
            err.to_string().contains(&format!("is {two}, not {one}")),
            "{err}"
        );
        assert_eq!(read(&g, "refs/heads/new").unwrap(), None);
        assert!(!g.join("logs/refs/heads/new").exists());
        // Creating a ref that exists is refused.
        let err = apply(
            &g,
            &[edit(
                "refs/heads/main",
                Value::Object(one),
                Expect::Absent,
                "m",
            )],
            &opts(),
        );
        assert!(err.is_err());
        assert!(locks(&g).is_empty());
        // Another process's lock is waited for, then left alone.
        std::fs::write(g.join("refs/heads/main.lock"), "").unwrap();
        let up = edit(
            "refs/heads/main",
            Value::Object(one),
            Expect::Object(two),
            "m",
        );
        let err = apply(&g, &[up], &opts()).unwrap_err();
        assert!(err.to_string().contains("held by another process"), "{err}");
        assert_eq!(locks(&g), vec![g.join("refs/heads/main.lock")]);
        assert_eq!(std::fs::read(g.join("refs/heads/main")).unwrap(), before);
    }

    #[test]
    fn without_log_all_only_existing_logs_grow() {
        let (dir, one, two) = repo();
        let g = dir.path().join(".git");
        let quiet = Options {
            log_all: false,
            ..opts()
        };
        apply(
            &g,
            &[edit(
                "refs/heads/x",
                Value::Object(one),
                Expect::Absent,
                "m",
            )],
            &quiet,
        )
        .unwrap();
        assert!(!g.join("logs/refs/heads/x").exists());
        let main_log = std::fs::read_to_string(g.join("logs/refs/heads/main")).unwrap();
        let up = edit(
            "refs/heads/main",
            Value::Object(one),
            Expect::Object(two),
            "back",
        );
        apply(&g, &[up], &quiet).unwrap();
        let grown = std::fs::read_to_string(g.join("logs/refs/heads/main")).unwrap();
        assert_eq!(grown.lines().count(), main_log.lines().count() + 1);
        assert!(grown.ends_with("\tback\n"));
    }
}
