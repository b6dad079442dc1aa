//! `TestEnv`: a temp state dir, `HOME` inside it, git isolated from the
//! user's config, the binary run as a process, real git as the oracle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-session");

/// The longest one command of the tests may run (the slowest take seconds):
/// a command that hangs is killed and fails its test, named, instead of
/// holding up the whole run until CI's limit.
const COMMAND_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Run `c` to its end, its stdout and stderr captured, as
/// [`Command::output`] does; one still running after [`COMMAND_LIMIT`] is
/// killed, and the test fails naming it.
pub fn output(c: &mut Command) -> Output {
    output_within(c, COMMAND_LIMIT)
}

fn output_within(c: &mut Command, limit: std::time::Duration) -> Output {
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{c:?}: {e}"));
    wait_within(child, &*c, limit)
}

/// [`std::process::Child::wait_with_output`] for a child started by the
/// test itself (`what` names it): killed after [`COMMAND_LIMIT`], and the
/// test fails naming it.
pub fn wait_output(child: std::process::Child, what: &dyn std::fmt::Debug) -> Output {
    wait_within(child, what, COMMAND_LIMIT)
}

/// [`wait_output`] with a limit of its own: for a command that must end
/// soon (one that would hang on a FIFO).
pub fn wait_within(
    child: std::process::Child,
    what: &dyn std::fmt::Debug,
    limit: std::time::Duration,
) -> Output {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let pid = child.id() as libc::pid_t;
    let (done, wait) = channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let late = wait.recv_timeout(limit) == Err(RecvTimeoutError::Timeout);
        if late {
            // SAFETY: a plain system call. The child is reaped only once it
            // ends; one ending at the very limit is the one race, and its
            // pid is not given to another process that fast.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        late
    });
    let out = child.wait_with_output().expect("wait for the command");
    drop(done);
    assert!(
        !watchdog.join().unwrap(),
        "{what:?} ran past {limit:?} and was killed; stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    pub now: Option<f64>,
    pub fsync: bool,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        TestEnv {
            tmp,
            now: Some(1_796_017_556.0),
            fsync: false,
        }
    }

    pub fn state(&self) -> PathBuf {
        self.tmp.path().join("state")
    }

    pub fn session_dir(&self, id: &str) -> PathBuf {
        self.state().join("sessions").join(id)
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        c.arg("--state-dir").arg(self.state());
        self.isolate(&mut c);
        c
    }

    /// The same isolation for the binary and for git.
    pub fn isolate(&self, c: &mut Command) {
        c.env("HOME", self.tmp.path().join("home"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("OPENPROGRAM_HOME")
            .env_remove("OPENPROGRAM_PROFILE")
            .env_remove("GIT_SESSION_CRASH_AT")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            // Colour is asked for by the tests that want it.
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env("GIT_SESSION_FSYNC", if self.fsync { "1" } else { "0" })
            .stdin(Stdio::null());
        match self.now {
            Some(t) => c.env("GIT_SESSION_NOW", format!("{t}")),
            None => c.env_remove("GIT_SESSION_NOW"),
        };
    }

    /// Run the binary; every record it prints is checked against the
    /// schema (`crate::records`).
    pub fn run(&self, args: &[&str]) -> Output {
        let out = output(self.cmd().args(args));
        crate::records::check_stdout(&format!("git-session {args:?}"), &out.stdout);
        out
    }

    /// Run and require exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let mut c = self.cmd();
        c.args(args);
        self.ok_cmd(c)
    }

    /// Run `c` (from [`Self::cmd`], given its own environment or
    /// directory) and require exit 0; returns stdout.
    pub fn ok_cmd(&self, mut c: Command) -> String {
        let out = output(&mut c);
        crate::records::check_stdout(&format!("{c:?}"), &out.stdout);
        assert!(
            out.status.success(),
            "{c:?} failed ({:?}):\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    /// Run and require exit `code`; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "git-session {args:?}: expected exit {code}\nstdout: {}\nstderr: {err}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!err.contains("panicked"), "panic: {err}");
        err
    }

    /// Append a node, returning its id.
    pub fn append(&self, session: &str, args: &[&str]) -> String {
        let mut a = vec!["append", session];
        a.extend_from_slice(args);
        let out = self.ok(&a);
        out.split_whitespace()
            .next()
            .expect("id printed")
            .to_string()
    }

    /// `user` + `assistant` (+ tools), then `commit-turn`; returns (assistant id, commit).
    pub fn turn(&self, session: &str, text: &str, tools: &[&str]) -> (String, String) {
        self.append(session, &["--text", text]);
        let a = self.append(
            session,
            &[
                "--role",
                "assistant",
                "--name",
                "m1",
                "--text",
                &format!("re: {text}"),
            ],
        );
        for t in tools {
            self.append(session, &["--role", "tool", "--name", t, "--text", "ok"]);
        }
        let commit = self.ok(&["commit-turn", session]).trim().to_string();
        (a, commit)
    }

    /// Hold the session lock of the session directory `dir`, as another
    /// command would, until the returned file is dropped (or unlocked).
    pub fn hold_lock(&self, dir: &Path) -> std::fs::File {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(".git/git-session.lock"))
            .expect("the lock file opens");
        f.lock().expect("the lock is taken");
        f
    }

    pub fn git_in(&self, dir: &Path, args: &[&str]) -> Output {
        let mut c = Command::new("git");
        self.isolate(&mut c);
        output(c.current_dir(dir).args(args))
    }

    /// Real git in `dir` with `input` on its stdin; requires success,
    /// returns stdout trimmed.
    pub fn git_with_input(&self, dir: &Path, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut c = Command::new("git");
        self.isolate(&mut c);
        let mut child = c
            .current_dir(dir)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run git");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?} in {}", dir.display());
        String::from_utf8(out.stdout)
            .expect("utf-8 git output")
            .trim()
            .to_string()
    }

    /// Run `requests` (each an argv) through one `batch` process (fast),
    /// the process required to succeed.
    pub fn batch(&self, requests: &[Vec<String>]) {
        use std::io::Write;
        let mut child = self
            .cmd()
            .arg("batch")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for argv in requests {
            writeln!(stdin, "{}", serde_json::json!({ "argv": argv })).unwrap();
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
    }

    /// Run with `GIT_SESSION_CRASH_AT=at` and require the process to die
    /// there (killed by its own signal, no exit code).
    pub fn crash_at(&self, at: &str, args: &[&str]) {
        let out = output(self.cmd().env("GIT_SESSION_CRASH_AT", at).args(args));
        assert_eq!(
            out.status.code(),
            None,
            "{args:?} did not reach crash point {at}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Real git in `dir`; requires success, returns stdout.
    pub fn git_ok(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_in(dir, args);
        assert!(
            out.status.success(),
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 git output")
    }

    /// A session repo as the Python store made it (reference §3.3): branch
    /// `main`, its identity, an empty `session init` commit.
    pub fn python_repo(&self, dir: &Path) {
        self.git_ok(dir, &["init", "--quiet", "--initial-branch=main"]);
        self.git_ok(dir, &["config", "user.email", "openprogram@local"]);
        self.git_ok(dir, &["config", "user.name", "OpenProgram"]);
        self.git_ok(
            dir,
            &["commit", "--allow-empty", "-m", "session init", "--quiet"],
        );
    }

    /// Real git in a session repo; requires success, returns stdout.
    pub fn git(&self, session: &str, args: &[&str]) -> String {
        let out = self.git_in(&self.session_dir(session), args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// A directory `name` in the test's temp dir, registered as a project
    /// (`flags` as for `project add`): (the directory, the project id).
    pub fn project(&self, name: &str, flags: &[&str]) -> (PathBuf, String) {
        let dir = self.tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec!["project", "add", dir.to_str().unwrap()];
        args.extend_from_slice(flags);
        let id = self.ok(&args).trim().to_string();
        (dir, id)
    }

    /// Unpack every pack of the repository in `dir` into loose objects (so
    /// that a test can remove one object).
    pub fn unpack_all(&self, dir: &Path) {
        let pack_dir = dir.join(".git/objects/pack");
        for e in std::fs::read_dir(&pack_dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension() == Some("pack".as_ref()) {
                let moved = self.tmp.path().join(p.file_name().unwrap());
                std::fs::rename(&p, &moved).unwrap();
                std::fs::remove_file(p.with_extension("idx")).unwrap();
                let _ = std::fs::remove_file(p.with_extension("rev"));
                let mut c = Command::new("git");
                self.isolate(&mut c);
                let st = c
                    .current_dir(dir)
                    .args(["unpack-objects", "-q"])
                    .stdin(std::fs::File::open(&moved).unwrap())
                    .status()
                    .unwrap();
                assert!(st.success());
            }
        }
    }

    /// `git fsck --strict` and `git status --porcelain` clean in the session's
    /// repository (in the default place or a project's).
    pub fn assert_clean(&self, session: &str) {
        let bound = std::fs::read_dir(self.state().join("sessions/projects"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join(session))
            .find(|d| d.is_dir());
        let dir = bound.unwrap_or_else(|| self.session_dir(session));
        // Not while background packing replaces packs (fsck would see them
        // go), and none starts meanwhile.
        let _packing = std::fs::File::options()
            .write(true)
            .open(dir.join(".git/git-session/maintenance.lock"))
            .ok()
            .filter(|f| f.lock().is_ok());
        let fsck = self.git_in(&dir, &["fsck", "--strict", "--no-progress"]);
        assert!(
            fsck.status.success(),
            "fsck failed: {}{}",
            String::from_utf8_lossy(&fsck.stdout),
            String::from_utf8_lossy(&fsck.stderr)
        );
        let status = self.git_ok(&dir, &["status", "--porcelain", "--untracked-files=all"]);
        assert_eq!(status, "", "git status not clean in {session}");
    }

    /// Make this test's state dir a copy of `other`'s (`cp -a`).
    pub fn copy_state_from(&self, other: &TestEnv) {
        let st = Command::new("cp")
            .arg("-a")
            .arg(other.state())
            .arg(self.state())
            .status()
            .unwrap();
        assert!(st.success());
    }

    /// The blob ids `history/` holds in the tree of `rev`, sorted.
    pub fn history_blobs(&self, session: &str, rev: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .git(session, &["ls-tree", rev, "history/"])
            .lines()
            .map(|l| l.split_whitespace().nth(2).unwrap().to_string())
            .collect();
        v.sort();
        v
    }

    pub fn meta(&self, session: &str) -> serde_json::Value {
        let bytes = std::fs::read(self.session_dir(session).join("meta.json")).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    pub fn meta_at(&self, dir: &Path) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap()
    }

    pub fn history_files(&self, session: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.session_dir(session).join("history"))
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// Every file under `root` (including `.git`) with its bytes: for "nothing on
/// disk changed" assertions. The catalog cache may be refreshed by any
/// command (it is rebuilt from `history/`), so it is left out.
pub fn tree_bytes(root: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    if !root.exists() {
        return Snapshot(out);
    }
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
        if rel.to_string_lossy().contains(".git/git-session/catalog") {
            continue;
        }
        if e.file_type().is_file() {
            out.insert(rel, std::fs::read(e.path()).unwrap());
        } else if e.file_type().is_dir() {
            out.insert(rel, b"<dir>".to_vec());
        }
    }
    Snapshot(out)
}

/// Files and their bytes; `Debug` lists paths only, so a failed comparison
/// reads well.
#[derive(PartialEq, Eq)]
pub struct Snapshot(pub BTreeMap<PathBuf, Vec<u8>>);

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.0
                    .iter()
                    .map(|(p, b)| format!("{} ({} bytes)", p.display(), b.len())),
            )
            .finish()
    }
}

/// Set line `line` (0-based) of the snapshot marker of the session repo in
/// `dir`, where it counts the turns since `git gc` (1) and the objects (3)
/// and loose bytes (4) written since packing last started: so that the next
/// turn is due for background packing.
pub fn set_snapshot_count(dir: &Path, line: usize, value: u64) {
    let snap = dir.join(".git/git-session/snapshot");
    let text = std::fs::read_to_string(&snap).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.resize(5.max(lines.len()), "0".into());
    lines[line] = value.to_string();
    std::fs::write(&snap, lines.join("\n") + "\n").unwrap();
}

/// Make a FIFO at `path` (hostile-tree tests: a special file where the
/// layout has a file).
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The two plants of a file of the layout: a link to `outside` (which is
/// given `content`: what a reader that follows it would take for ours), or
/// a FIFO. Whatever was at `at` is removed first.
pub const PLANTS: [&str; 2] = ["link", "fifo"];

pub fn plant(kind: &str, at: &Path, outside: &Path, content: &[u8]) {
    let _ = std::fs::remove_file(at);
    std::fs::write(outside, content).unwrap();
    match kind {
        "link" => std::os::unix::fs::symlink(outside, at).unwrap(),
        "fifo" => mkfifo(at),
        _ => unreachable!("a plant is a link or a fifo"),
    }
}

/// Backdate a file's mtime by `secs` (stale-lock tests).
pub fn age(path: &Path, secs: u64) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

/// A command past its limit is killed, and fails its test naming it; one
/// within it is run as `Command::output` would.
#[test]
fn a_command_past_its_limit_is_killed_and_named() {
    let started = std::time::Instant::now();
    let hung = std::panic::catch_unwind(|| {
        output_within(
            Command::new("sleep").arg("60"),
            std::time::Duration::from_millis(300),
        )
    });
    let message = *hung.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("\"sleep\" \"60\" ran past 300ms"),
        "{message}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let out = output_within(
        Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
        COMMAND_LIMIT,
    );
    assert_eq!(
        (out.status.code(), &out.stdout[..], &out.stderr[..]),
        (Some(3), &b"out\n"[..], &b"err\n"[..])
    );
}

/// The binary's commands, as a user finds them: each command its `--help`
/// lists, with the subcommands its own `--help` lists (`help` left out),
/// and the hidden ones that have a man page (`project unbind`), found from
/// `man/git-session-<command>-<sub>.1`. The clap definition lives on the
/// binary's side, so this is how a test reads it.
pub fn command_tree(env: &TestEnv) -> Vec<(String, Vec<String>)> {
    fn listed(help: &str) -> Vec<String> {
        help.lines()
            .skip_while(|l| *l != "Commands:")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter(|l| l.starts_with("  ") && !l[2..].starts_with(' '))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|name| *name != "help")
            .map(str::to_string)
            .collect()
    }
    let man = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let pages: Vec<String> = std::fs::read_dir(&man)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    listed(&env.ok(&["--help"]))
        .into_iter()
        .map(|name| {
            let mut subs = listed(&env.ok(&[&name, "--help"]));
            if !subs.is_empty() {
                let prefix = format!("git-session-{name}-");
                for page in &pages {
                    if let Some(sub) = page
                        .strip_prefix(&prefix)
                        .and_then(|p| p.strip_suffix(".1"))
                        && !subs.iter().any(|s| s == sub)
                    {
                        subs.push(sub.to_string());
                    }
                }
            }
            (name, subs)
        })
        .collect()
}
