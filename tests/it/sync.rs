//! `remote`, `push`, `fetch`, `clone` (issue 24): two state dirs play two
//! machines, against real git remotes (a bare repository over `file://`,
//! and `git daemon` on 127.0.0.1).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::env::TestEnv;

/// A bare repository that keeps a reflog of every ref (to prove nothing was
/// forced).
pub(crate) fn bare_remote(env: &TestEnv, name: &str) -> (PathBuf, String) {
    let dir = env.tmp.path().join(name);
    env.git_ok(
        env.tmp.path(),
        &["init", "-q", "--bare", dir.to_str().unwrap()],
    );
    env.git_ok(&dir, &["config", "core.logAllRefUpdates", "always"]);
    let url = format!("file://{}", dir.display());
    (dir, url)
}

pub(crate) fn records(out: &str, kind: &str) -> Vec<Value> {
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == kind)
        .map(|v| v["data"].clone())
        .collect()
}

/// The conversation as `show --json` prints it: (role, text) per node.
pub(crate) fn conversation(env: &TestEnv, session: &str) -> Vec<(String, String)> {
    records(&env.ok(&["--json", "show", session]), "node")
        .iter()
        .map(|n| {
            (
                n["role"].as_str().unwrap_or("").to_string(),
                n["node"]["output"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Every node's text in the session's files.
fn all_texts(env: &TestEnv, session: &str) -> Vec<String> {
    let mut t: Vec<String> = records(&env.ok(&["--json", "nodes", session]), "session_node")
        .iter()
        .map(|n| n["node"]["output"].as_str().unwrap_or("").to_string())
        .collect();
    t.sort();
    t
}

pub(crate) fn remote_refs(env: &TestEnv, remote: &Path) -> Vec<String> {
    env.git_ok(remote, &["for-each-ref", "--format=%(refname)"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every reflog entry of the remote moves a ref forward: created, or the
/// old commit is an ancestor of the new one.
fn assert_nothing_forced(env: &TestEnv, remote: &Path) {
    let logs = remote.join("logs");
    let mut entries = 0;
    for e in walkdir::WalkDir::new(&logs).into_iter().flatten() {
        if !e.file_type().is_file() {
            continue;
        }
        for line in std::fs::read_to_string(e.path()).unwrap().lines() {
            let mut f = line.split(' ');
            let (old, new) = (f.next().unwrap(), f.next().unwrap());
            entries += 1;
            if old.chars().all(|c| c == '0') {
                continue;
            }
            let anc = env.git_in(remote, &["merge-base", "--is-ancestor", old, new]);
            assert!(
                anc.status.success(),
                "forced: {} {line}",
                e.path().display()
            );
        }
    }
    assert!(entries > 0, "the remote keeps no reflog");
}

pub(crate) fn fsck(env: &TestEnv, dir: &Path) {
    let out = env.git_in(dir, &["fsck", "--strict", "--no-progress"]);
    assert!(
        out.status.success(),
        "fsck in {}: {}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn verify_all(env: &TestEnv) {
    env.ok(&["verify", "--all"]);
}

/// How every sync test ends: each machine verifies clean, the remote
/// passes `git fsck --strict`, and none of its refs was forced.
pub(crate) fn settled(machines: &[&TestEnv], remote: &Path) {
    for m in machines {
        verify_all(m);
    }
    fsck(machines[0], remote);
    assert_nothing_forced(machines[0], remote);
}

#[test]
fn two_machines_push_clone_continue_and_fetch() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    let (proj, pid) = a.project("work", &[]);
    a.ok(&["init", "s1", "--project", &pid]);
    a.turn("s1", "first question", &["read"]);
    a.turn("s1", "second question", &[]);
    a.ok(&["init", "s2"]);
    a.turn("s2", "other session", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    let listed = a.ok(&["--json", "remote", "list"]);
    assert_eq!(records(&listed, "remote")[0]["url"], url.as_str());
    let planned = a.ok(&["--json", "push", "--dry-run"]);
    assert_eq!(records(&planned, "pushed_ref").len(), 3, "{planned}");
    assert!(
        records(&planned, "pushed_ref")
            .iter()
            .all(|r| r["status"] == "planned")
    );
    assert!(
        remote_refs(&a, &remote).is_empty(),
        "a dry run sends nothing"
    );
    let out = a.ok(&["--json", "push"]);
    let summary = &records(&out, "push_summary")[0];
    assert_eq!(summary["pushed"], 3, "two branches and a project: {out}");
    assert_eq!(summary["rejected"], 0);
    let refs = remote_refs(&a, &remote);
    assert!(
        refs.contains(&"refs/sessions/s1/s1/heads/main".to_string()),
        "{refs:?}"
    );
    assert!(refs.contains(&format!("refs/projects/{pid}")), "{refs:?}");
    assert!(
        refs.iter().all(|r| !r.starts_with("refs/heads/")),
        "{refs:?}"
    );
    // A plain clone of the remote fetches no session.
    let plain = a.tmp.path().join("plain");
    a.git_ok(
        a.tmp.path(),
        &["clone", "-q", &url, plain.to_str().unwrap()],
    );
    assert_eq!(a.git_ok(&plain, &["for-each-ref"]), "");
    // Nothing new: a second push sends nothing.
    let again = a.ok(&["--json", "push"]);
    assert_eq!(records(&again, "push_summary")[0]["pushed"], 0, "{again}");

    // The project's directory is not on the second machine.
    std::fs::rename(&proj, a.tmp.path().join("work-moved")).unwrap();
    let cloned = b.ok(&["--json", "clone", &url]);
    let fetched = records(&cloned, "fetched");
    assert_eq!(fetched.len(), 2, "{cloned}");
    assert!(
        fetched.iter().all(|f| f["outcome"] == "created"),
        "{cloned}"
    );
    assert_eq!(conversation(&a, "s1"), conversation(&b, "s1"));
    assert_eq!(conversation(&a, "s2"), conversation(&b, "s2"));
    let bound = b.state().join("sessions/projects").join(&pid).join("s1");
    assert!(
        bound.join("meta.json").is_file(),
        "bound session in its project's place"
    );
    let locations: Value =
        serde_json::from_slice(&std::fs::read(b.state().join("sessions/locations.json")).unwrap())
            .unwrap();
    assert!(locations["s1"].as_str().is_some(), "{locations}");
    let projects = records(&b.ok(&["--json", "project", "list"]), "project");
    let p = projects
        .iter()
        .find(|p| p["id"] == pid.as_str())
        .expect("registered");
    assert_eq!(p["path_missing"], true, "{p}");
    assert_eq!(p["name"], "work");
    let here = b.tmp.path().join("checkout");
    std::fs::create_dir_all(&here).unwrap();
    b.ok(&["relocate", &pid, here.to_str().unwrap()]);
    let listed = b.ok(&["--json", "list"]);
    assert_eq!(records(&listed, "session").len(), 2, "index rows: {listed}");

    std::fs::rename(a.tmp.path().join("work-moved"), &proj).unwrap();
    // The second machine carries on, and pushes.
    b.turn("s2", "continued on b", &[]);
    b.ok(&["push"]);
    let out = a.ok(&["--json", "fetch"]);
    let fetched = records(&out, "fetched");
    let s2 = fetched.iter().find(|f| f["session"] == "s2").unwrap();
    assert_eq!(s2["outcome"], "fast_forward", "{out}");
    let s1 = fetched.iter().find(|f| f["session"] == "s1").unwrap();
    // The relocation record on b is a new turn-less commit: s1 moved too.
    assert_eq!(s1["outcome"], "fast_forward", "{out}");
    assert_eq!(conversation(&a, "s2"), conversation(&b, "s2"));
    assert!(
        conversation(&a, "s2")
            .iter()
            .any(|(_, t)| t == "continued on b")
    );
    for env in [&a, &b] {
        verify_all(env);
    }
    a.assert_clean("s2");
    b.assert_clean("s2");
    fsck(&b, &bound);
    fsck(&a, &remote);
    // The first machine carries on from there: its next turn follows b's.
    a.turn("s2", "back on a", &[]);
    assert_eq!(
        a.git("s2", &["branch", "--format=%(refname:short)"]).trim(),
        "main"
    );
    a.ok(&["push"]);
    assert_nothing_forced(&a, &remote);
}

/// `git daemon` serving the repositories in `env`'s temp dir on a free
/// loopback port, pushes enabled; killed when dropped.
struct Daemon {
    child: std::process::Child,
    port: u16,
}

impl Daemon {
    fn start(env: &TestEnv) -> Daemon {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let mut c = Command::new("git");
        env.isolate(&mut c);
        let child = c
            .args([
                "daemon",
                "--enable=receive-pack",
                "--export-all",
                "--reuseaddr",
                "--listen=127.0.0.1",
            ])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", env.tmp.path().display()))
            .arg(env.tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon starts");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "git daemon did not listen"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Daemon { child, port }
    }

    fn url(&self, repo: &str) -> String {
        format!("git://127.0.0.1:{}/{repo}", self.port)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn push_and_clone_through_git_daemon() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, _) = bare_remote(&a, "served.git");
    let daemon = Daemon::start(&a);
    let url = daemon.url("served.git");
    a.ok(&["init", "d1"]);
    a.turn("d1", "over the daemon", &["grep"]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push", "origin", "d1"]);
    b.ok(&["clone", &url]);
    assert_eq!(conversation(&a, "d1"), conversation(&b, "d1"));
    b.turn("d1", "and back", &[]);
    b.ok(&["push", "origin"]);
    a.ok(&["fetch", "origin", "d1"]);
    assert_eq!(conversation(&a, "d1"), conversation(&b, "d1"));
    verify_all(&a);
    verify_all(&b);
    a.assert_clean("d1");
    fsck(&a, &remote);
    assert_nothing_forced(&a, &remote);
}

/// A loopback server set up as hosting services are (objects checked on
/// receipt, no non-fast-forward, no deletion, a hook that protects refs):
/// a ref it refuses is reported and stays queued while every other lands;
/// a server that dies mid-push loses nothing, and the next push finishes
/// the queue; a deletion travels; the remote passes `git fsck --strict`.
#[test]
fn sync_against_a_server_configured_as_hosts_are() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, _) = bare_remote(&a, "hosted.git");
    for (k, v) in [
        ("receive.fsckObjects", "true"),
        ("transfer.fsckObjects", "true"),
        ("receive.denyNonFastForwards", "true"),
        ("receive.denyDeletes", "true"),
    ] {
        a.git_ok(&remote, &["config", k, v]);
    }
    // The host's own rules: one session's refs are protected; and, while
    // `die` exists, the server process dies as a push arrives.
    let die = a.tmp.path().join("die");
    let hooks = remote.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let script = |name: &str, body: String| {
        use std::os::unix::fs::PermissionsExt;
        let path = hooks.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script(
        "update",
        "case \"$1\" in */protected/*) echo \"protected by the host\" >&2; exit 1;; esac\n".into(),
    );
    script(
        "pre-receive",
        format!(
            "cat >/dev/null\nif [ -e '{}' ]; then kill -9 $PPID; sleep 5; exit 1; fi\n",
            die.display()
        ),
    );
    let daemon = Daemon::start(&a);
    let url = daemon.url("hosted.git");
    for s in ["h1", "h2", "protected"] {
        a.ok(&["init", s]);
        a.turn(s, &format!("{s} over the host"), &["read"]);
    }
    a.ok(&["remote", "add", "origin", &url]);
    let out = a.run(&["--json", "push"]);
    assert_eq!(out.status.code(), Some(1));
    let refs = records(&String::from_utf8_lossy(&out.stdout), "pushed_ref");
    let by = |status: &str| -> Vec<String> {
        refs.iter()
            .filter(|r| r["status"] == status)
            .map(|r| r["session"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(by("created"), ["h1", "h2"]);
    assert_eq!(by("rejected"), ["protected"]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("refused `refs/sessions/ed/protected/heads/main`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        a.ok(&["remote", "list"]).contains("(1 ref(s) queued)"),
        "the refused ref stays queued"
    );
    // The server dies mid-push: an error, nothing lost, all still queued.
    a.turn("h1", "second turn of h1", &[]);
    std::fs::write(&die, "").unwrap();
    let out = a.run(&["push"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("failed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&die).unwrap();
    verify_all(&a);
    let out = a.run(&["--json", "push"]);
    let refs = records(&String::from_utf8_lossy(&out.stdout), "pushed_ref");
    assert!(
        refs.iter()
            .any(|r| r["session"] == "h1" && r["status"] == "advanced"),
        "{refs:?}"
    );
    // Another machine clones, with the one refused session missing, and a
    // deletion travels through the host.
    b.ok(&["clone", &url]);
    assert_eq!(sessions_here(&b), ["h1", "h2"]);
    assert_eq!(conversation(&a, "h1"), conversation(&b, "h1"));
    a.ok(&["delete", "h2", "--yes"]);
    a.run(&["push"]);
    let out = b.ok(&["--json", "fetch"]);
    assert!(
        records(&out, "fetched")
            .iter()
            .any(|f| f["session"] == "h2" && f["outcome"] == "deleted"),
        "{out}"
    );
    verify_all(&b);
    fsck(&a, &remote);
    assert_nothing_forced(&a, &remote);
}

/// No credential prompt ever waits: a remote that asks for a password
/// (HTTP 401 on loopback) fails the push and the fetch at once, naming
/// the remote, with stdin and the terminal left alone.
#[test]
fn a_remote_that_asks_for_credentials_fails_at_once() {
    use std::io::{Read, Write};
    let env = TestEnv::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"host\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    env.ok(&["init", "c1"]);
    env.turn("c1", "secret work", &[]);
    let url = format!("http://127.0.0.1:{port}/sessions.git");
    env.ok(&["remote", "add", "origin", &url]);
    for verb in ["push", "fetch"] {
        let mut c = env.cmd();
        c.args([verb, "origin"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = crate::env::wait_within(
            c.spawn().unwrap(),
            &verb,
            std::time::Duration::from_secs(30),
        );
        assert_eq!(out.status.code(), Some(1), "{verb}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&url) && err.contains("failed"),
            "{verb}: {err}"
        );
    }
    assert!(a_clean_queue_or_one(&env));
    verify_all(&env);
}

/// The push queue after a push that reached nothing: it holds what is
/// still to send (or nothing), never garbage.
fn a_clean_queue_or_one(env: &TestEnv) -> bool {
    let q = env.state().join("sync").join("queue-origin");
    !q.exists()
        || std::fs::read_to_string(&q)
            .unwrap()
            .lines()
            .all(|l| l.contains(" refs/sessions/"))
}

/// Both machines add a turn to one session: both turns survive, the
/// divergence is reported, and either `--take` resolves it.
#[test]
fn divergence_is_reported_and_resolved_either_way() {
    for side in ["remote", "local"] {
        let a = TestEnv::new();
        let b = TestEnv::new();
        let (remote, url) = bare_remote(&a, "remote.git");
        a.ok(&["init", "s1"]);
        a.turn("s1", "common", &[]);
        a.ok(&["remote", "add", "origin", &url]);
        a.ok(&["push"]);
        b.ok(&["clone", &url]);
        a.turn("s1", "from a", &["read"]);
        b.turn("s1", "from b", &[]);
        a.ok(&["push"]);
        let refused = b.fails(&["push"], 1);
        assert!(refused.contains("fetch"), "{refused}");
        let out = b.run(&["--json", "fetch"]);
        assert_eq!(out.status.code(), Some(1));
        let f = &records(&String::from_utf8_lossy(&out.stdout), "fetched")[0];
        assert_eq!(f["outcome"], "diverged");
        // Nothing of b's changed meanwhile, and verify says what to do.
        assert!(conversation(&b, "s1").iter().any(|(_, t)| t == "from b"));
        let v = b.run(&["--json", "verify", "s1"]);
        assert_eq!(v.status.code(), Some(1));
        let findings = records(&String::from_utf8_lossy(&v.stdout), "finding");
        let d = findings
            .iter()
            .find(|f| f["kind"] == "diverged")
            .expect("reported");
        assert!(d["fix"].as_str().unwrap().contains("--take"), "{d}");
        assert!(b.git("s1", &["branch", "-r"]).contains("origin/main"));

        let out = b.ok(&["--json", "fetch", "--take", side, "s1"]);
        assert_eq!(records(&out, "fetched")[0]["outcome"], "taken", "{out}");
        verify_all(&b);
        let texts = all_texts(&b, "s1");
        for t in ["from a", "from b", "re: from a", "re: from b"] {
            assert!(texts.iter().any(|x| x == t), "{t} lost: {texts:?}");
        }
        let current = conversation(&b, "s1");
        let expected = if side == "remote" { "from a" } else { "from b" };
        assert!(
            current.iter().any(|(_, t)| t == expected),
            "--take {side}: {current:?}"
        );
        // Both continuations are branches of the conversation, and the
        // current one goes on.
        assert_eq!(
            records(&b.ok(&["--json", "branch", "s1"]), "branch").len(),
            2
        );
        b.turn("s1", "after the take", &[]);
        b.assert_clean("s1");
        assert_eq!(
            records(&b.ok(&["--json", "branch", "s1"]), "branch").len(),
            2
        );
        let texts = all_texts(&b, "s1");
        b.ok(&["push"]);
        let out = a.ok(&["--json", "fetch"]);
        assert_eq!(
            records(&out, "fetched")[0]["outcome"],
            "fast_forward",
            "{out}"
        );
        assert_eq!(all_texts(&a, "s1"), texts);
        verify_all(&a);
        a.assert_clean("s1");
        fsck(&a, &remote);
        assert_nothing_forced(&a, &remote);
    }
}

/// The command a refused push names, run as it is written, is all it takes
/// for the next push to land: whether this machine only lagged behind the
/// remote or both machines added turns (a plain `fetch` reports the
/// second as diverged and resolves nothing).
#[test]
fn the_command_a_refused_push_names_resolves_it() {
    for diverged in [true, false] {
        let (a, b, remote) = two_machines();
        a.turn("s1", "from a", &[]);
        a.ok(&["push"]);
        if diverged {
            b.turn("s1", "from b", &[]);
        }
        let refused = b.fails(&["push"], 1);
        let named = refused
            .split("run `git-session ")
            .nth(1)
            .and_then(|rest| rest.split_once('`'))
            .map(|(cmd, _)| cmd)
            .unwrap_or_else(|| panic!("no command named: {refused}"));
        assert_eq!(named, "fetch origin --take local s1", "{refused}");
        let args: Vec<&str> = named.split(' ').collect();
        let out = b.ok(&[&["--json"], args.as_slice()].concat());
        let outcome = if diverged { "taken" } else { "fast_forward" };
        assert_eq!(records(&out, "fetched")[0]["outcome"], outcome, "{out}");
        let pushed = b.ok(&["--json", "push"]);
        assert_eq!(
            records(&pushed, "push_summary")[0]["rejected"],
            0,
            "{pushed}"
        );
        a.ok(&["fetch"]);
        assert_eq!(all_texts(&a, "s1"), all_texts(&b, "s1"));
        let texts = all_texts(&b, "s1");
        assert!(texts.iter().any(|t| t == "from a"), "{texts:?}");
        assert_eq!(texts.iter().any(|t| t == "from b"), diverged, "{texts:?}");
        settled(&[&a, &b], &remote);
    }
}

/// `log` marks the commits a remote's branch points at as `fetch` (or a
/// `push` from here) last saw them (`origin/main`), as git does; `log
/// --all` shows the remote's side of a divergence, which no local branch
/// reaches.
#[test]
fn log_marks_the_remote_tips_and_all_shows_them() {
    let (a, b, remote) = two_machines();
    let cloned = b.ok(&["log", "s1"]);
    assert!(
        cloned
            .lines()
            .next()
            .unwrap()
            .ends_with("(HEAD -> main, origin/main)"),
        "{cloned}"
    );
    let (_, from_a) = a.turn("s1", "from a", &[]);
    a.ok(&["push"]);
    // The pushing machine keeps what the remote confirmed, as git does.
    let pushed = a.ok(&["log", "s1"]);
    let first = pushed.lines().next().unwrap();
    assert!(
        first.starts_with(&from_a[..7]) && first.ends_with("(HEAD -> main, origin/main)"),
        "{pushed}"
    );
    assert_eq!(
        a.git("s1", &["rev-parse", "refs/remotes/origin/main"])
            .trim(),
        from_a
    );
    let (_, from_b) = b.turn("s1", "from b", &[]);
    b.fails(&["fetch"], 1);
    assert_eq!(
        b.git("s1", &["rev-parse", "refs/remotes/origin/main"])
            .trim(),
        from_a
    );
    // HEAD's line alone: the remote's turn is not on it.
    let line = b.ok(&["log", "s1"]);
    assert!(!line.contains("origin/main"), "{line}");
    assert!(
        line.lines().next().unwrap().ends_with("(HEAD -> main)"),
        "{line}"
    );
    let all = b.ok(&["log", "--all", "s1"]);
    let marked: Vec<&str> = all.lines().filter(|l| l.contains("origin/main")).collect();
    assert_eq!(marked.len(), 1, "{all}");
    assert!(
        marked[0].contains(&from_a[..7]) && marked[0].ends_with("(origin/main)"),
        "{all}"
    );
    let rows = records(&b.ok(&["--json", "log", "--all", "s1"]), "commit");
    let tips: Vec<(&str, &Value)> = rows
        .iter()
        .filter(|r| r["remotes"] != serde_json::json!([]))
        .map(|r| (r["commit"].as_str().unwrap(), &r["remotes"]))
        .collect();
    assert_eq!(
        tips,
        [(from_a.as_str(), &serde_json::json!(["origin/main"]))]
    );
    assert!(rows.iter().any(|r| r["commit"] == from_b.as_str()));
    b.ok(&["fetch", "--take", "local", "s1"]);
    b.ok(&["push"]);
    a.ok(&["fetch"]);
    settled(&[&a, &b], &remote);
}

/// `argv` as owned strings, for [`TestEnv::batch`].
fn argv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// `n` sessions of one turn each, made through one `batch` process.
fn many_sessions(env: &TestEnv, n: usize) {
    let requests: Vec<Vec<String>> = (0..n)
        .flat_map(|i| {
            let s = format!("m{i:04}");
            [
                argv(&["append", &s, "--create", "--text", "question"]),
                argv(&["append", &s, "--role", "assistant", "--text", "answer"]),
                argv(&["commit-turn", &s]),
            ]
        })
        .collect();
    env.batch(&requests);
}

#[test]
fn a_push_killed_midway_is_finished_by_the_next() {
    let a = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    many_sessions(&a, 500);
    a.ok(&["remote", "add", "origin", &url]);
    let mut push = a
        .cmd()
        .arg("push")
        .env("GIT_SESSION_PUSH_BATCH", "40")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the remote has taken some refs, before it has them all.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let n = remote_refs(&a, &remote).len();
        if n >= 40 || push.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the push made no progress"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = push.kill();
    let _ = push.wait();
    let partial = remote_refs(&a, &remote).len();
    assert!(partial < 500, "killed too late to test anything: {partial}");
    if partial > 0 {
        let queue = a.state().join("sync/queue-origin");
        assert!(queue.is_file(), "a killed push leaves its queue");
        let v = a.ok(&["--json", "verify", "--all"]);
        let notes = records(&v, "finding");
        assert!(
            notes
                .iter()
                .any(|f| f["kind"] == "push_queued" && f["severity"] == "note"),
            "{v}"
        );
    }
    let out = a.ok(&["--json", "push"]);
    let summary = &records(&out, "push_summary")[0];
    assert_eq!(summary["rejected"], 0, "{summary}");
    let refs = remote_refs(&a, &remote);
    assert_eq!(refs.len(), 500, "every session is on the remote");
    assert!(
        !a.state().join("sync/queue-origin").exists(),
        "queue drained"
    );
    assert_nothing_forced(&a, &remote);
    fsck(&a, &remote);
    // And what is there is every session, whole.
    let b = TestEnv::new();
    b.ok(&["clone", &url]);
    assert_eq!(records(&b.ok(&["--json", "list"]), "session").len(), 500);
    verify_all(&b);
}

/// A commit on the remote whose tree is built by hand: `entries` are
/// `mktree` lines with `{meta}` standing for a blob of meta.json.
fn plant(env: &TestEnv, remote: &Path, refname: &str, id: &str, extra: &[(&str, &str, &str)]) {
    let work = env
        .tmp
        .path()
        .join(format!("plant-{}", refname.replace('/', "_")));
    env.git_ok(env.tmp.path(), &["init", "-q", work.to_str().unwrap()]);
    env.git_ok(&work, &["config", "user.name", "Mallory"]);
    env.git_ok(&work, &["config", "user.email", "m@example.com"]);
    let blob = |data: &str| env.git_with_input(&work, &["hash-object", "-w", "--stdin"], data);
    let meta = blob(&format!(
        r#"{{"id":"{id}","title":"t","created_at":1,"updated_at":1}}"#
    ));
    let mut lines = format!("100644 blob {meta}\tmeta.json\n");
    for (mode, name, content) in extra {
        let kind = if *mode == "040000" { "tree" } else { "blob" };
        let oid = if kind == "tree" {
            let inner = blob(content);
            mktree(env, &work, &format!("100644 blob {inner}\tconfig\n"))
        } else {
            blob(content)
        };
        lines.push_str(&format!("{mode} {kind} {oid}\t{name}\n"));
    }
    let tree = mktree(env, &work, &lines);
    let commit = env.git_ok(&work, &["commit-tree", &tree, "-m", "turn 1: planted"]);
    env.git_ok(
        &work,
        &[
            "push",
            "-q",
            remote.to_str().unwrap(),
            &format!("{}:{refname}", commit.trim()),
        ],
    );
}

fn mktree(env: &TestEnv, dir: &Path, lines: &str) -> String {
    env.git_with_input(dir, &["mktree", "--missing"], lines)
}

#[test]
fn hostile_sessions_on_the_remote_are_refused_and_run_nothing() {
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&b, "remote.git");
    let outside = b.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let pwned = b.tmp.path().join("pwned");
    let hook = format!(
        "[core]\n\tfsmonitor = touch {}\n\thooksPath = {}\n",
        pwned.display(),
        outside.display()
    );
    // A `.git/config` carried in the tree, a link out of the session, a
    // link in place of history/, a meta.json naming another session, an
    // id that is not one, a ref in the wrong shard.
    plant(
        &b,
        &remote,
        "refs/sessions/g1/hg1/heads/main",
        "hg1",
        &[("040000", ".git", &hook)],
    );
    plant(
        &b,
        &remote,
        "refs/sessions/l1/hl1/heads/main",
        "hl1",
        &[("120000", "workdir", outside.to_str().unwrap())],
    );
    plant(
        &b,
        &remote,
        "refs/sessions/l2/hl2/heads/main",
        "hl2",
        &[("120000", "history", "/etc")],
    );
    plant(&b, &remote, "refs/sessions/m1/hm1/heads/main", "other", &[]);
    plant(&b, &remote, "refs/sessions/rf/-rf/heads/main", "-rf", &[]);
    plant(&b, &remote, "refs/sessions/zz/ok1/heads/main", "ok1", &[]);
    let out = b.run(&["--json", "clone", &url]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fetched = records(&String::from_utf8_lossy(&out.stdout), "fetched");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        fetched.len(),
        4,
        "the bad id and the wrong shard are skipped: {fetched:?} {stderr}"
    );
    for f in &fetched {
        assert_eq!(f["outcome"], "refused", "{f}");
    }
    assert!(stderr.contains("not a session branch"), "{stderr}");
    assert!(!pwned.exists(), "a fetched config ran a program");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written outside"
    );
    let sessions = b.state().join("sessions");
    let left: Vec<String> = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".json") && !n.ends_with(".lock") && !n.ends_with(".journal"))
        .collect();
    assert!(
        left.is_empty(),
        "nothing published, no staging left: {left:?}"
    );
    verify_all(&b);
}

/// A relative path is kept as the absolute path it names where the command
/// runs (git runs in the transfer repository, where it names another
/// place), and a relative path hand-written into remotes.json is refused,
/// as one into the state dir is: `../repo` from there is the transfer
/// repository itself.
#[test]
fn a_relative_remote_path_means_what_it_says_where_it_was_given() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.ok(&["append", "s1", "--text", "hello"]);
    env.ok(&["commit-turn", "s1"]);
    let remote = env.tmp.path().join("remote.git");
    env.git_ok(env.tmp.path(), &["init", "-q", "--bare", "remote.git"]);
    let mut add = env.cmd();
    add.current_dir(env.tmp.path())
        .args(["remote", "add", "origin", "remote.git"]);
    env.ok_cmd(add);
    assert_eq!(
        env.ok(&["remote", "list"]).trim(),
        format!("origin\t{}", remote.display())
    );
    env.ok(&["push"]);
    let refs = env.git_ok(&remote, &["for-each-ref", "--format=%(refname)"]);
    assert!(refs.contains("refs/sessions/s1/s1/heads/main"), "{refs}");
    // remotes.json edited: relative, and into the state dir.
    let remotes = env.state().join("sync").join("remotes.json");
    for url in ["../repo", "remote.git"] {
        std::fs::write(&remotes, format!("{{\"origin\": {{\"url\": \"{url}\"}}}}")).unwrap();
        let err = env.fails(&["push"], 1);
        assert!(err.contains("relative_remote_url"), "{url}: {err}");
    }
    let inside = env.state().join("sync").join("repo");
    std::fs::write(
        &remotes,
        format!("{{\"origin\": {{\"url\": \"{}\"}}}}", inside.display()),
    )
    .unwrap();
    let err = env.fails(&["fetch"], 1);
    assert!(err.contains("remote_in_state_dir"), "{err}");
    verify_all(&env);
}

#[test]
fn remote_commands_refuse_bad_input() {
    let env = TestEnv::new();
    env.fails(&["push"], 1);
    env.fails(&["remote", "add", "-x", "file:///tmp/x"], 2);
    env.fails(&["remote", "add", "o", "ext::sh -c touch% /tmp/p"], 2);
    env.fails(&["remote", "add", "o", "--upload-pack=touch"], 2);
    env.ok(&["init", "s1"]);
    let inside = env.session_dir("s1");
    let err = env.fails(&["remote", "add", "o", inside.to_str().unwrap()], 1);
    assert!(err.contains("remote_in_state_dir"), "{err}");
    env.fails(
        &[
            "remote",
            "add",
            "o",
            &format!("file://{}", env.state().display()),
        ],
        1,
    );
    env.ok(&["remote", "add", "o", "file:///tmp/one"]);
    env.ok(&["remote", "add", "o", "file:///tmp/one"]);
    let err = env.fails(&["remote", "add", "o", "file:///tmp/two"], 1);
    assert!(err.contains("remote_exists"), "{err}");
    env.fails(&["remote", "remove", "nope"], 1);
    env.fails(&["fetch", "--take", "local"], 2);
    let unreachable = env.fails(&["push"], 1);
    assert!(unreachable.contains("sync::transport"), "{unreachable}");
    env.ok(&["remote", "remove", "o"]);
    assert_eq!(env.ok(&["remote", "list"]), "");
}

/// A clone whose remote cannot be reached leaves the state dir as it found
/// it: the remote it registered for the fetch is gone again, so a clone
/// with the URL put right is not refused for the remote the typo left.
/// A remote that was there before is kept.
#[test]
fn a_clone_that_reaches_nothing_leaves_no_remote_behind() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, url) = bare_remote(&a, "remote.git");
    a.ok(&["init", "s1"]);
    a.turn("s1", "one", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push", "origin"]);
    let typo = format!("{url}-typo");
    let err = b.fails(&["clone", &typo], 1);
    assert!(err.contains("sync::transport"), "{err}");
    assert_eq!(b.ok(&["remote", "list"]), "");
    b.ok(&["clone", &url]);
    assert_eq!(conversation(&a, "s1"), conversation(&b, "s1"));
    // The remote named by a clone that then fails is the user's: kept.
    let err = b.fails(&["clone", "--name", "mirror", &typo], 1);
    assert!(err.contains("sync::transport"), "{err}");
    b.ok(&["remote", "add", "mirror", &typo]);
    b.fails(&["clone", "--name", "mirror", &typo], 1);
    assert!(b.ok(&["remote", "list"]).contains("mirror"));
    verify_all(&b);
}

/// git's `fd::` transport talks over file descriptors its caller hands it;
/// git-session hands it none, and a fetch or push to `fd::3` waited for
/// good, holding the sync lock. It is refused when given, and a registry
/// edited to hold it fails at once.
#[test]
fn the_fd_transport_is_refused_and_never_waited_on() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    for url in ["fd::3", "FD::0,1"] {
        let err = env.fails(&["remote", "add", "o", url], 2);
        assert!(err.contains("usage::remote_url"), "{url}: {err}");
        let err = env.fails(&["clone", url], 2);
        assert!(err.contains("usage::remote_url"), "{url}: {err}");
    }
    assert_eq!(env.ok(&["remote", "list"]), "");
    let remotes = env.state().join("sync").join("remotes.json");
    std::fs::create_dir_all(remotes.parent().unwrap()).unwrap();
    std::fs::write(&remotes, r#"{"origin": {"url": "fd::3"}}"#).unwrap();
    for verb in ["fetch", "push"] {
        let child = env
            .cmd()
            .arg(verb)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = crate::env::wait_within(child, &verb, std::time::Duration::from_secs(20));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{verb}: {err}");
        assert!(err.contains("sync::remote_url"), "{verb}: {err}");
    }
    verify_all(&env);
}

/// A link planted where a fetched session's project directory goes is not
/// written through.
#[test]
fn a_fetch_never_writes_through_a_planted_link() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, url) = bare_remote(&a, "remote.git");
    let (_, pid) = a.project("work", &[]);
    a.ok(&["init", "p1", "--project", &pid]);
    a.turn("p1", "bound", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    let outside = b.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(b.state().join("sessions")).unwrap();
    std::os::unix::fs::symlink(&outside, b.state().join("sessions/projects")).unwrap();
    // The state dir is refused as a whole, the link named.
    let out = b.run(&["--json", "clone", &url]);
    assert_eq!(out.status.code(), Some(1));
    let errors = records(&String::from_utf8_lossy(&out.stdout), "error");
    assert_eq!(
        errors[0]["code"], "git_session::layout::symlink",
        "{errors:?}"
    );
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("sessions/projects")
    );
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written through the link"
    );
}

/// A push queue (refs a push left unconfirmed) is a file of the state dir:
/// one planted as a link or a FIFO is never read (a link to `/dev/zero`
/// was read until memory ran out, one to a file elsewhere read as our
/// refs to push); `remote list` and `push` refuse it, `verify` reports it.
#[test]
fn a_push_queue_that_is_a_link_or_a_fifo_is_refused_never_read() {
    let env = TestEnv::new();
    let (remote, url) = bare_remote(&env, "remote.git");
    env.ok(&["init", "s1"]);
    env.turn("s1", "hello", &[]);
    env.ok(&["remote", "add", "origin", &url]);
    let queue = env.state().join("sync").join("queue-origin");
    let outside = env.tmp.path().join("outside");
    // A ref this machine has, named as a session ref the remote lacks.
    let head = env.git("s1", &["rev-parse", "HEAD"]);
    let planted = format!("{} refs/sessions/s9/main\n", head.trim());
    for plant in crate::env::PLANTS {
        crate::env::plant(plant, &queue, &outside, planted.as_bytes());
        for args in [&["remote", "list"][..], &["push", "origin"]] {
            let out = env.run(args);
            assert_eq!(out.status.code(), Some(1), "{plant} {args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("queue-origin"), "{plant} {args:?}: {err}");
        }
        let out = env.run(&["verify", "--all"]);
        assert_eq!(out.status.code(), Some(1), "{plant}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("layout_link: ") && text.contains("queue-origin"),
            "{plant}: {text}"
        );
        assert_eq!(remote_refs(&env, &remote), Vec::<String>::new(), "{plant}");
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            planted,
            "{plant}"
        );
    }
    std::fs::remove_file(&queue).unwrap();
    env.ok(&["push", "origin"]);
    verify_all(&env);
}

/// A fetch killed before it publishes a session leaves nothing a reader
/// sees; the next fetch brings it in, and `verify --fix` clears the
/// leftover staging directory.
#[test]
fn a_fetch_killed_before_publishing_is_finished_by_the_next() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, url) = bare_remote(&a, "remote.git");
    a.ok(&["init", "k1"]);
    a.turn("k1", "survives a crash", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.crash_at("fetch-before-publish", &["clone", &url]);
    assert!(
        !b.session_dir("k1").exists(),
        "published before the crash point"
    );
    assert_eq!(records(&b.ok(&["--json", "list"]), "session").len(), 0);
    let out = b.ok(&["--json", "fetch"]);
    assert_eq!(records(&out, "fetched")[0]["outcome"], "created", "{out}");
    b.ok(&["verify", "--all", "--fix"]);
    b.ok(&["verify", "--all"]);
    let left: Vec<String> = std::fs::read_dir(b.state().join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".gs-tmp-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(conversation(&a, "k1"), conversation(&b, "k1"));
    b.assert_clean("k1");
}

/// Killed after a session is published and before its row and binding are
/// written: `verify --fix` (or the next `recover`) completes the registry.
#[test]
fn a_fetch_killed_after_publishing_is_repaired_by_verify_fix() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, url) = bare_remote(&a, "remote.git");
    let (_, pid) = a.project("work", &[]);
    a.ok(&["init", "k2", "--project", &pid]);
    a.turn("k2", "bound and killed", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.crash_at("fetch-after-publish", &["clone", &url]);
    b.fails(&["verify", "--all"], 1);
    // The row and the location are repaired; the project waits for its
    // record on the remote.
    b.fails(&["verify", "--all", "--fix"], 1);
    let listed = b.ok(&["--json", "list"]);
    assert_eq!(records(&listed, "session").len(), 1, "{listed}");
    // The next fetch registers the project and the binding.
    b.ok(&["fetch"]);
    b.ok(&["verify", "--all"]);
    let projects = records(&b.ok(&["--json", "project", "list"]), "project");
    assert_eq!(
        projects.iter().find(|p| p["id"] == pid.as_str()).unwrap()["sessions"],
        1
    );
    assert_eq!(conversation(&a, "k2"), conversation(&b, "k2"));
}

/// Turns written while a push runs (and a second push waiting on the
/// first) lose nothing: the next push sends them, and a clone has every
/// node.
#[test]
fn pushes_racing_with_turns_lose_nothing() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    many_sessions(&a, 60);
    a.ok(&["remote", "add", "origin", &url]);
    let spawn_push = || {
        a.cmd()
            .arg("push")
            .env("GIT_SESSION_PUSH_BATCH", "7")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut p1, mut p2) = (spawn_push(), spawn_push());
    for i in 0..5 {
        a.turn(
            &format!("m{:04}", i * 7),
            &format!("during the push {i}"),
            &["read"],
        );
    }
    assert!(p1.wait().unwrap().success());
    assert!(p2.wait().unwrap().success());
    a.ok(&["push"]);
    b.ok(&["clone", &url]);
    for i in 0..5 {
        let s = format!("m{:04}", i * 7);
        assert_eq!(all_texts(&a, &s), all_texts(&b, &s), "{s}");
        assert!(all_texts(&b, &s).contains(&format!("during the push {i}")));
    }
    assert_eq!(records(&b.ok(&["--json", "list"]), "session").len(), 60);
    settled(&[&a, &b], &remote);
}

/// After `--take remote`, the machine that fetches the result continues
/// the remote's conversation on its branch: its next turn advances main,
/// no new retry branch.
#[test]
fn the_fetching_machine_continues_the_current_conversation() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, url) = bare_remote(&a, "remote.git");
    a.ok(&["init", "h1"]);
    a.turn("h1", "common", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.ok(&["clone", &url]);
    a.turn("h1", "from a", &[]);
    b.turn("h1", "from b", &[]);
    a.ok(&["push"]);
    b.fails(&["fetch"], 1);
    b.ok(&["fetch", "--take", "remote", "h1"]);
    b.ok(&["push"]);
    a.ok(&["fetch"]);
    assert_eq!(a.git("h1", &["branch", "--show-current"]).trim(), "main");
    let branches = records(&a.ok(&["--json", "branch", "h1"]), "branch").len();
    a.turn("h1", "next on a", &[]);
    assert_eq!(
        records(&a.ok(&["--json", "branch", "h1"]), "branch").len(),
        branches
    );
    assert_eq!(a.git("h1", &["branch", "--show-current"]).trim(), "main");
    verify_all(&a);
    a.assert_clean("h1");
}

/// A `--take` killed after renumbering (both names of a node on disk) or
/// before committing is finished by running it again: every node once.
#[test]
fn a_take_killed_midway_is_finished_by_running_it_again() {
    for at in ["take-renumbered", "before-rename"] {
        let a = TestEnv::new();
        let b = TestEnv::new();
        let (_, url) = bare_remote(&a, "remote.git");
        a.ok(&["init", "t1"]);
        a.turn("t1", "common", &[]);
        a.ok(&["remote", "add", "origin", &url]);
        a.ok(&["push"]);
        b.ok(&["clone", &url]);
        a.turn("t1", "from a", &[]);
        b.turn("t1", "from b", &["read"]);
        a.ok(&["push"]);
        b.fails(&["fetch"], 1);
        b.crash_at(at, &["fetch", "--take", "local", "t1"]);
        let again = b.run(&["fetch", "--take", "local", "t1"]);
        // A temp file the crash left is what `verify --fix` clears.
        b.run(&["verify", "--all", "--fix"]);
        let v = b.run(&["verify", "--all"]);
        assert!(
            v.status.success(),
            "{at}: {}\n{}{}",
            String::from_utf8_lossy(&again.stderr),
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        );
        let texts = all_texts(&b, "t1");
        for t in ["common", "from a", "from b", "re: from b", "ok"] {
            assert_eq!(
                texts.iter().filter(|x| *x == t).count(),
                1,
                "{at}: {t} in {texts:?}"
            );
        }
        b.ok(&["push"]);
    }
}

/// The transfer repository is ours, but what is on disk is a stranger's: a
/// config planted there (a URL rewrite, a credential helper) does not
/// apply, an alternates file goes, and a link where its packs go is refused.
#[test]
fn a_planted_transfer_repository_config_or_link_is_not_honoured() {
    let a = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    let (elsewhere, _) = bare_remote(&a, "elsewhere.git");
    a.ok(&["init", "x1"]);
    a.turn("x1", "to the right remote", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    a.turn("x1", "still the right one", &[]);
    let git_dir = a.state().join("sync/repo/.git");
    let pwned = a.tmp.path().join("pwned");
    std::fs::write(
        git_dir.join("config"),
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = {url}\n[credential]\n\thelper = \"!touch {}\"\n",
            elsewhere.display(),
            pwned.display()
        ),
    )
    .unwrap();
    std::fs::write(
        git_dir.join("objects/info/alternates"),
        "/nonexistent/objects\n",
    )
    .unwrap();
    a.ok(&["push"]);
    assert!(
        remote_refs(&a, &elsewhere).is_empty(),
        "the planted insteadOf was honoured"
    );
    assert_eq!(remote_refs(&a, &remote).len(), 1);
    assert!(!pwned.exists());
    assert!(!git_dir.join("objects/info/alternates").exists());
    // A link where the packs go.
    a.turn("x1", "and once more", &[]);
    let outside = a.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(git_dir.join("objects/pack")).unwrap();
    std::os::unix::fs::symlink(&outside, git_dir.join("objects/pack")).unwrap();
    let err = a.fails(&["push"], 1);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written through the link"
    );
}

/// A clone of more sessions than one registry write takes (they are bound
/// in groups): every session in its project's list and its location
/// recorded, as one session's fetch does; a fetch with nothing new
/// rewrites neither file.
#[test]
fn a_clone_binds_every_session_of_every_project() {
    use std::os::unix::fs::MetadataExt;
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, url) = bare_remote(&a, "remote.git");
    let (_, big) = a.project("big", &[]);
    let (_, small) = a.project("small", &[]);
    let bound: Vec<(String, &str)> = (0..260)
        .map(|i| (format!("b{i:03}"), big.as_str()))
        .chain([("c1".to_string(), small.as_str())])
        .collect();
    let requests: Vec<Vec<String>> = bound
        .iter()
        .flat_map(|(s, pid)| {
            [
                argv(&["init", s, "--project", pid]),
                argv(&["append", s, "--text", "question"]),
                argv(&["append", s, "--role", "assistant", "--text", "answer"]),
                argv(&["commit-turn", s]),
            ]
        })
        .collect();
    a.batch(&requests);
    a.ok(&["init", "d1"]);
    a.turn("d1", "not bound", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);

    let out = b.ok(&["--json", "clone", &url]);
    assert_eq!(records(&out, "fetched").len(), 262, "{out}");
    let projects = records(&b.ok(&["--json", "project", "list"]), "project");
    let sessions_of = |pid: &str| {
        projects.iter().find(|p| p["id"] == pid).unwrap()["sessions"]
            .as_u64()
            .unwrap()
    };
    assert_eq!((sessions_of(&big), sessions_of(&small)), (260, 1));
    let locations_path = b.state().join("sessions/locations.json");
    let locations: serde_json::Map<String, Value> =
        serde_json::from_slice(&std::fs::read(&locations_path).unwrap()).unwrap();
    assert_eq!(locations.len(), 261, "only the bound sessions are located");
    for (s, pid) in &bound {
        let dir = b.state().join("sessions/projects").join(pid).join(s);
        assert_eq!(locations[s.as_str()], dir.to_str().unwrap(), "{s}");
        assert!(dir.join("meta.json").is_file(), "{s}");
    }
    assert!(!locations.contains_key("d1"));
    b.ok(&["verify", "--all"]);
    b.assert_clean("b259");

    let projects_path = b.state().join("projects/projects.json");
    let before = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.ino(), std::fs::read(p).unwrap())
    };
    let (locations_was, projects_was) = (before(&locations_path), before(&projects_path));
    b.ok(&["fetch"]);
    assert!(
        before(&locations_path) == locations_was,
        "locations.json rewritten"
    );
    assert!(
        before(&projects_path) == projects_was,
        "projects.json rewritten"
    );
}

/// A session here whose meta.json no longer reads, and that the fetch
/// leaves as it is, binds nothing and stops no other: the sessions fetched
/// with it are brought in and bound.
#[test]
fn a_session_with_a_broken_meta_stops_no_other_in_a_fetch() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, url) = bare_remote(&a, "remote.git");
    let (_, pid) = a.project("work", &[]);
    a.ok(&["init", "x1", "--project", &pid]);
    a.turn("x1", "first", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.ok(&["clone", &url]);
    let meta = b
        .state()
        .join("sessions/projects")
        .join(&pid)
        .join("x1/meta.json");
    std::fs::write(&meta, b"{ not json").unwrap();
    a.ok(&["init", "y1", "--project", &pid]);
    a.turn("y1", "new", &[]);
    a.ok(&["push"]);
    let out = b.ok(&["--json", "fetch"]);
    let fetched = records(&out, "fetched");
    let outcome = |s: &str| fetched.iter().find(|f| f["session"] == s).unwrap()["outcome"].clone();
    assert_eq!(outcome("y1"), "created", "{out}");
    assert_eq!(
        std::fs::read(&meta).unwrap(),
        b"{ not json",
        "left as it was"
    );
    let projects = records(&b.ok(&["--json", "project", "list"]), "project");
    assert_eq!(
        projects.iter().find(|p| p["id"] == pid.as_str()).unwrap()["sessions"],
        2
    );
    assert_eq!(conversation(&a, "y1"), conversation(&b, "y1"));
    b.assert_clean("y1");
}

/// A URL hand-written into remotes.json that git would take for an option
/// (`--upload-pack=<command>` runs the command) is refused as `remote add`
/// refuses it, before git runs: nothing is run, for fetch or push.
#[test]
fn a_hand_edited_remote_url_that_is_an_option_runs_nothing() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let dir = env.state().join("sync");
    std::fs::create_dir_all(&dir).unwrap();
    // No slash before the colon: `host:path` to the relative-path check.
    let url = "--upload-pack=touch PWNED;x:y";
    let pwned = || {
        walkdir::WalkDir::new(env.tmp.path())
            .into_iter()
            .flatten()
            .any(|e| e.file_name() == "PWNED")
    };
    std::fs::write(
        dir.join("remotes.json"),
        serde_json::json!({"origin": {"url": url}}).to_string(),
    )
    .unwrap();
    for cmd in ["fetch", "push"] {
        let out = env.run(&[cmd]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains("sync::remote_url"), "{cmd}: {err}");
        assert!(!pwned(), "{cmd} ran the command");
    }
}

/// Two machines on one remote (`origin`): `a` made session `s1` with one
/// turn and pushed it, `b` cloned it. Returns them and the remote's path.
fn two_machines() -> (TestEnv, TestEnv, PathBuf) {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    a.ok(&["init", "s1"]);
    a.turn("s1", "common", &["read"]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.ok(&["clone", &url]);
    (a, b, remote)
}

/// A session renamed to the Python store's naming on one machine
/// (`migrate --node-names python`) and pushed is a fast-forward on the
/// other, which drops the old names too: one naming, every node once,
/// `verify` clean on both, and the turns both add afterwards go back and
/// forth as before.
#[test]
fn a_rename_to_the_python_naming_travels_as_a_fast_forward() {
    let (a, b, remote) = two_machines();
    a.turn("s1", "second question", &[]);
    a.ok(&["push", "origin"]);
    b.ok(&["fetch", "origin"]);
    a.ok(&["migrate", "--node-names", "python"]);
    a.ok(&["push", "origin"]);
    let out = b.ok(&["--json", "fetch", "origin"]);
    assert_eq!(
        records(&out, "fetched")[0]["outcome"],
        "fast_forward",
        "{out}"
    );
    let files = b.history_files("s1");
    assert_eq!(files, a.history_files("s1"));
    assert!(files.iter().all(|f| &f[4..5] == "-"), "{files:?}");
    verify_all(&b);
    b.assert_clean("s1");
    b.turn("s1", "third, on b", &[]);
    b.ok(&["push", "origin"]);
    a.ok(&["fetch", "origin"]);
    assert_eq!(all_texts(&a, "s1"), all_texts(&b, "s1"));
    assert!(a.history_files("s1").iter().all(|f| &f[4..5] == "-"));
    settled(&[&a, &b], &remote);
}

/// The remote holds a node with id `u_X`; this machine holds another node
/// under that id at another seq (ids collide through `--id`, imports or a
/// peer). `fetch --take` keeps both: the remote's under its id, this
/// machine's under an id of its own (`u_X.local-<hash>`, the conflict in
/// its metadata), with the nodes that went on from it; no node is lost.
#[test]
fn take_keeps_a_node_whose_id_the_remote_gave_another() {
    for side in ["local", "remote"] {
        let (a, b, remote) = two_machines();
        a.append("s1", &["--id", "u_X", "--text", "a's question"]);
        a.append("s1", &["--role", "assistant", "--text", "a's answer"]);
        a.ok(&["commit-turn", "s1"]);
        a.ok(&["push"]);
        b.append("s1", &["--text", "b's first"]);
        b.append("s1", &["--role", "assistant", "--text", "b's first answer"]);
        b.ok(&["commit-turn", "s1"]);
        // Same id as a's node, another seq, not committed yet.
        b.append("s1", &["--id", "u_X", "--text", "b's question"]);
        b.append("s1", &["--role", "assistant", "--text", "b's answer"]);
        b.fails(&["fetch"], 1);
        let out = b.ok(&["--json", "fetch", "--take", side, "s1"]);
        let f = &records(&out, "fetched")[0];
        assert_eq!(f["outcome"], "taken", "{out}");
        assert!(
            f["message"].as_str().unwrap().contains("u_X.local-"),
            "{out}"
        );
        let texts = all_texts(&b, "s1");
        for t in [
            "a's question",
            "a's answer",
            "b's question",
            "b's answer",
            "b's first",
        ] {
            assert!(texts.iter().any(|x| x == t), "{side}: {t} lost: {texts:?}");
        }
        let kept: Vec<String> = b
            .history_files("s1")
            .into_iter()
            .filter(|f| f.contains("u_X.local-"))
            .collect();
        assert_eq!(kept.len(), 1, "{kept:?}");
        let node: serde_json::Value = serde_json::from_slice(
            &std::fs::read(b.session_dir("s1").join("history").join(&kept[0])).unwrap(),
        )
        .unwrap();
        assert_eq!(node["output"], "b's question");
        assert_eq!(node["metadata"]["id_conflict"]["id"], "u_X");
        // b's answer goes on from b's question, not a's.
        let answer = b
            .history_files("s1")
            .into_iter()
            .map(|f| {
                serde_json::from_slice::<serde_json::Value>(
                    &std::fs::read(b.session_dir("s1").join("history").join(f)).unwrap(),
                )
                .unwrap()
            })
            .find(|n| n["output"] == "b's answer")
            .unwrap();
        assert_eq!(answer["predecessor"], node["id"]);
        verify_all(&b);
        if side == "local" {
            // (Under `remote`, HEAD is the remote's branch, whose tree
            // holds none of this machine's replayed turns.)
            b.assert_clean("s1");
        }
        b.ok(&["push"]);
        a.ok(&["fetch"]);
        assert_eq!(all_texts(&a, "s1"), all_texts(&b, "s1"));
        verify_all(&a);
        fsck(&a, &remote);
        assert_nothing_forced(&a, &remote);
    }
}

/// One machine renamed a session's files to the Python naming and pushed;
/// the other added a turn in the old naming meanwhile: `fetch --take`
/// replays that turn in the remote's naming (one naming, verify clean).
#[test]
fn take_after_the_remote_renamed_keeps_one_naming() {
    for side in ["local", "remote"] {
        let (x, y, _) = two_machines();
        x.ok(&["migrate", "--node-names", "python"]);
        x.ok(&["push"]);
        y.turn("s1", "on y", &[]);
        y.ok(&["fetch", "--take", side, "s1"]);
        let files = y.history_files("s1");
        assert!(files.iter().all(|f| &f[4..5] == "-"), "{side}: {files:?}");
        assert_eq!(files.len(), 5, "{side}: {files:?}");
        verify_all(&y);
        y.ok(&["push"]);
        x.ok(&["fetch"]);
        assert_eq!(all_texts(&x, "s1"), all_texts(&y, "s1"));
        verify_all(&x);
    }
}

/// A push of 1,000 sessions to a remote that checks what it receives
/// (`receive.fsckObjects`, as hosting services do), one of which holds a
/// commit those checks refuse (a NUL byte in its message, from an older
/// version): the remote refuses the first request whole, each half is sent
/// again, and the other 999 land; the refused one is named, stays queued,
/// and pushes nothing else away.
#[test]
fn a_push_that_the_remote_refuses_whole_lands_every_other_session() {
    let env = TestEnv::new();
    let (remote, url) = bare_remote(&env, "remote.git");
    env.git_ok(&remote, &["config", "receive.fsckObjects", "true"]);
    many_sessions(&env, 1000);
    let bad = env.session_dir("m0500");
    let tree = env.git_ok(&bad, &["rev-parse", "HEAD^{tree}"]);
    let parent = env.git_ok(&bad, &["rev-parse", "HEAD"]);
    let commit = env.git_with_input(
        &bad,
        &["hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
        &format!(
            "tree {}\nparent {}\nauthor a <a@b> 1796017556 +0000\ncommitter a <a@b> 1796017556 +0000\n\nturn 2: a \u{0} byte\n\nSession: m0500\n",
            tree.trim(),
            parent.trim()
        ),
    );
    env.git_ok(&bad, &["update-ref", "refs/heads/main", commit.trim()]);
    // verify names it, as git fsck --strict does.
    let v = env.run(&["verify", "m0500"]);
    assert_eq!(v.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&v.stdout).contains("commit_malformed"));
    env.ok(&["remote", "add", "origin", &url]);
    let out = env.run(&["--json", "push"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let refs = records(&stdout, "pushed_ref");
    let created = refs.iter().filter(|r| r["status"] == "created").count();
    let refused: Vec<&Value> = refs.iter().filter(|r| r["status"] == "rejected").collect();
    assert_eq!(created, 999, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0]["session"], "m0500");
    assert!(String::from_utf8_lossy(&out.stderr).contains("git fsck --strict"));
    let on_remote = env
        .git_ok(
            &remote,
            &["for-each-ref", "--format=%(refname)", "refs/sessions/"],
        )
        .lines()
        .count();
    assert_eq!(on_remote, 999);
    fsck(&env, &remote);
    // Pushed again: the 999 are up to date, the one is refused again alone.
    let again = env.run(&["--json", "push"]);
    let refs = records(&String::from_utf8_lossy(&again.stdout), "pushed_ref");
    assert_eq!(refs.iter().filter(|r| r["status"] == "rejected").count(), 1);
    assert_eq!(refs.iter().filter(|r| r["status"] == "created").count(), 0);
}

/// The tombstone refs on a remote.
fn tombstones(env: &TestEnv, remote: &Path) -> Vec<String> {
    remote_refs(env, remote)
        .into_iter()
        .filter(|r| r.starts_with("refs/tombstones/"))
        .collect()
}

fn sessions_here(env: &TestEnv) -> Vec<String> {
    let mut ids: Vec<String> = records(&env.ok(&["--json", "list"]), "session")
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// `delete` is for good across machines: the deleting machine's `fetch`
/// does not bring the session back, its `push` carries a tombstone (a
/// fast-forward, the remote's session refs left as they are), a peer whose
/// copy held nothing newer deletes its copy on `fetch`, and a `clone`
/// never makes it.
#[test]
fn a_deleted_session_stays_deleted_on_every_machine() {
    let (a, b, remote) = two_machines();
    a.ok(&["init", "s2"]);
    a.turn("s2", "kept", &[]);
    a.ok(&["push"]);
    b.ok(&["fetch"]);
    a.ok(&["delete", "s1", "--yes"]);
    let out = a.ok(&["--json", "fetch"]);
    let fetched = records(&out, "fetched");
    let s1: Vec<&Value> = fetched.iter().filter(|f| f["session"] == "s1").collect();
    assert_eq!(s1[0]["outcome"], "tombstoned", "{out}");
    assert_eq!(sessions_here(&a), ["s2"]);
    assert!(tombstones(&a, &remote).is_empty());
    let out = a.ok(&["--json", "push"]);
    let sent: Vec<Value> = records(&out, "pushed_ref");
    assert_eq!(sent.len(), 1, "{out}");
    assert_eq!(sent[0]["remote_ref"], "refs/tombstones/sessions/s1/s1");
    assert_eq!(tombstones(&a, &remote), ["refs/tombstones/sessions/s1/s1"]);
    // The remote still has the session's refs; nothing was forced.
    assert!(remote_refs(&a, &remote).contains(&"refs/sessions/s1/s1/heads/main".to_string()));
    let again = a.ok(&["--json", "push"]);
    assert!(records(&again, "pushed_ref").is_empty(), "{again}");
    let out = b.ok(&["--json", "fetch"]);
    let s1: Vec<Value> = records(&out, "fetched")
        .into_iter()
        .filter(|f| f["session"] == "s1")
        .collect();
    assert_eq!(s1[0]["outcome"], "deleted", "{out}");
    assert_eq!(records(&out, "fetch_summary")[0]["deleted"], 1);
    assert_eq!(sessions_here(&b), ["s2"]);
    assert!(!b.session_dir("s1").exists());
    let c = TestEnv::new();
    let url = format!("file://{}", remote.display());
    let out = c.ok(&["clone", &url]);
    assert!(!out.contains("s1"), "{out}");
    assert_eq!(sessions_here(&c), ["s2"]);
    // A later push from the peer sends no deletion of its own again.
    let out = b.ok(&["--json", "push"]);
    assert!(records(&out, "pushed_ref").is_empty(), "{out}");
    for env in [&a, &b, &c] {
        verify_all(env);
    }
    fsck(&a, &remote);
    assert_nothing_forced(&a, &remote);
}

/// A tombstone removes nothing it did not see: a peer that added a turn
/// (or holds a node no turn committed) keeps its copy and says so (exit
/// 1); its `push` revives the session on the remote, and the deleting
/// machine's next `fetch` brings it back with every turn.
#[test]
fn a_deletion_never_removes_turns_it_did_not_see() {
    for newer in ["turn", "node"] {
        let (a, b, remote) = two_machines();
        match newer {
            "turn" => {
                b.turn("s1", "b went on", &[]);
            }
            _ => {
                b.append("s1", &["--text", "b's node, not committed"]);
            }
        }
        a.ok(&["delete", "s1", "--yes"]);
        a.ok(&["push"]);
        let run = b.run(&["--json", "fetch"]);
        assert_eq!(run.status.code(), Some(1), "a conflict to settle");
        let out = String::from_utf8_lossy(&run.stdout).into_owned();
        let f = &records(&out, "fetched")[0];
        assert_eq!(f["outcome"], "kept", "{newer}: {out}");
        // The reason, and what to do about it.
        let said = f["message"].as_str().unwrap();
        let (why, next) = match newer {
            "turn" => (
                "turns the deletion did not see",
                "git-session push origin s1",
            ),
            _ => ("nodes no turn committed", "git-session commit-turn s1"),
        };
        assert!(said.contains(why) && said.contains(next), "{out}");
        assert_eq!(records(&out, "fetch_summary")[0]["kept"], 1);
        assert!(
            all_texts(&b, "s1")
                .iter()
                .any(|t| t.starts_with("b went on") || t.starts_with("b's node")),
            "{newer}"
        );
        if newer == "node" {
            b.ok(&["commit-turn", "s1"]);
        }
        let out = b.ok(&["--json", "push"]);
        let revived: Vec<Value> = records(&out, "pushed_ref")
            .into_iter()
            .filter(|r| r["remote_ref"] == "refs/tombstones/sessions/s1/s1")
            .collect();
        assert_eq!(revived.len(), 1, "{out}");
        // Nothing left to say on either side.
        b.ok(&["fetch"]);
        let out = a.ok(&["--json", "fetch"]);
        let f = &records(&out, "fetched")[0];
        assert_eq!(f["outcome"], "created", "{out}");
        assert!(
            f["message"].as_str().unwrap().contains("deleted here"),
            "{out}"
        );
        assert_eq!(all_texts(&a, "s1"), all_texts(&b, "s1"));
        settled(&[&a, &b], &remote);
    }
}

/// A session imported again after it was deleted (the same transcript
/// makes the same commits, which the tombstone names) is alive: the push
/// revives it, and a peer that has it keeps it.
#[test]
fn a_session_made_again_after_its_deletion_is_not_deleted_by_it() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    let file = crate::import::Transcript::two_turns().write(a.tmp.path(), "");
    let session = crate::import::SESSION;
    a.ok(&["import", "claude-code", file.to_str().unwrap()]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.ok(&["clone", &url]);
    a.ok(&["delete", session, "--yes"]);
    a.ok(&["push"]);
    assert_eq!(tombstones(&a, &remote).len(), 1);
    a.ok(&["import", "claude-code", file.to_str().unwrap()]);
    let out = a.ok(&["--json", "push"]);
    assert_eq!(records(&out, "pushed_ref").len(), 1, "the revival: {out}");
    let out = b.ok(&["--json", "fetch"]);
    assert_eq!(
        records(&out, "fetched")[0]["outcome"],
        "up_to_date",
        "{out}"
    );
    assert_eq!(sessions_here(&b), [session]);
    let c = TestEnv::new();
    c.ok(&["clone", &url]);
    assert_eq!(sessions_here(&c), [session]);
    settled(&[&a, &b], &remote);
}

/// `project remove` is for good too: pushed as a tombstone, neither the
/// removing machine's fetch nor a clone registers the project again (its
/// sessions come, keeping their project_id, as `project remove` leaves
/// them).
#[test]
fn a_removed_project_is_not_registered_again_by_a_fetch() {
    let a = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    let (_proj, pid) = a.project("work", &[]);
    a.ok(&["init", "p1", "--project", &pid]);
    a.turn("p1", "in the project", &[]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    a.ok(&["project", "remove", &pid]);
    a.ok(&["fetch"]);
    let listed = |env: &TestEnv| {
        records(&env.ok(&["--json", "project", "list"]), "project")
            .iter()
            .any(|p| p["id"] == pid.as_str())
    };
    assert!(!listed(&a));
    a.ok(&["push"]);
    assert_eq!(
        tombstones(&a, &remote),
        [format!("refs/tombstones/projects/{pid}")]
    );
    a.ok(&["fetch"]);
    assert!(!listed(&a));
    let c = TestEnv::new();
    let out = c.ok(&["--json", "clone", &url]);
    assert!(!listed(&c));
    assert_eq!(sessions_here(&c), ["p1"]);
    let at = records(&out, "fetched")[0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(c.meta_at(Path::new(&at))["project_id"], pid.as_str());
    // (`a`'s own `verify` reports its session bound to the project it
    // removed, as it does without any remote.)
    verify_all(&c);
    assert_nothing_forced(&a, &remote);
}

/// A remote that refuses every pack whole (here: packs over its size
/// limit; in life a full disk, a broken unpacker) is not sent 2N requests
/// to find the one bad session there is not: the splitting stops after a
/// bounded number, every ref is reported refused and stays queued, and
/// nothing reaches the remote.
#[test]
fn a_remote_that_refuses_every_pack_is_not_asked_without_end() {
    let env = TestEnv::new();
    let (remote, url) = bare_remote(&env, "remote.git");
    env.git_ok(&remote, &["config", "receive.maxInputSize", "50"]);
    many_sessions(&env, 100);
    env.ok(&["remote", "add", "origin", &url]);
    let out = env.run(&["--json", "push"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = &records(&stdout, "push_summary")[0];
    assert_eq!(summary["rejected"], 100, "{summary}");
    let batches = summary["batches"].as_u64().unwrap();
    assert!(batches <= 1 + 2 * 64, "{batches} requests for 100 refs");
    assert!(
        env.ok(&["remote", "list"]).contains("(100 ref(s) queued)"),
        "every ref stays queued"
    );
    assert!(remote_refs(&env, &remote).is_empty());
}

/// A node an import made whose id the remote gave another node is kept
/// under an id of its own by `fetch --take`, and the import goes on from
/// it: the transcript's next turn continues this machine's node, not the
/// remote's one of that id.
#[test]
fn an_imported_node_kept_under_a_new_id_is_where_the_import_goes_on() {
    let sid = "11111111-2222-3333-4444-555555555555";
    let session = format!("claude-{sid}");
    let mut lines: Vec<Value> = Vec::new();
    let mut rec = |kind: &str, uuid: &str, parent: Option<&str>, extra: Value| {
        let mut r = serde_json::json!({"type": kind, "uuid": uuid, "parentUuid": parent,
            "timestamp": format!("2026-11-01T10:00:{:02}.000Z", lines.len()),
            "sessionId": sid, "cwd": "/home/me/proj"});
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        lines.push(r);
        lines.iter().map(|l| format!("{l}\n")).collect::<String>()
    };
    type Rec<'a> = dyn FnMut(&str, &str, Option<&str>, Value) -> String + 'a;
    let turn = |rec: &mut Rec, k: u32, parent: Option<&str>| {
        rec(
            "user",
            &format!("u{k}"),
            parent,
            serde_json::json!({"message": {"role": "user", "content": format!("question {k}")}}),
        );
        rec(
            "assistant",
            &format!("a{k}"),
            Some(&format!("u{k}")),
            serde_json::json!({"message": {"id": format!("msg_{k}"), "role": "assistant", "content": [{"type": "text", "text": format!("a's answer {k}")}]}}),
        );
        rec(
            "system",
            &format!("s{k}"),
            Some(&format!("a{k}")),
            serde_json::json!({"subtype": "turn_duration", "durationMs": 1}),
        )
    };
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    let file = a.tmp.path().join(format!("{sid}.jsonl"));
    std::fs::write(&file, turn(&mut rec, 1, None)).unwrap();
    let path = file.to_str().unwrap();
    a.ok(&["import", "claude-code", path]);
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.ok(&["clone", &url]);
    // b gives the id a's next reply will have to a node of its own.
    b.append(&session, &["--text", "b's question"]);
    b.append(
        &session,
        &[
            "--role",
            "assistant",
            "--id",
            "a-msg_2",
            "--text",
            "b's answer",
        ],
    );
    b.ok(&["commit-turn", &session]);
    b.ok(&["push"]);
    std::fs::write(&file, turn(&mut rec, 2, Some("s1"))).unwrap();
    a.ok(&["import", "claude-code", path]);
    a.run(&["fetch"]);
    // Killed after the renumbered copies are written, then after this
    // machine's file left the name the remote's takes: the next run
    // finishes it (the copy says which id it stands for).
    a.crash_at("take-renumbered", &["fetch", "--take", "local", &session]);
    a.crash_at("take-displaced", &["fetch", "--take", "local", &session]);
    let out = a.ok(&["fetch", "--take", "local", &session]);
    assert!(out.contains(".local-"), "{out}");
    let kept: String = a
        .history_files(&session)
        .into_iter()
        .find(|f| f.contains("a-msg_2.local-"))
        .expect("a's reply kept under an id of its own");
    let kept_id = kept
        .trim_end_matches(".json")
        .split_once("-a-")
        .unwrap()
        .1
        .to_string();
    // The transcript goes on from a's reply.
    std::fs::write(&file, turn(&mut rec, 3, Some("s2"))).unwrap();
    a.ok(&["import", "claude-code", path]);
    let u3 = a
        .history_files(&session)
        .into_iter()
        .find(|f| f.ends_with("-u-u-u3.json"))
        .expect("turn 3's message");
    let node: Value = serde_json::from_slice(
        &std::fs::read(a.session_dir(&session).join("history").join(&u3)).unwrap(),
    )
    .unwrap();
    assert_eq!(node["predecessor"], kept_id.as_str(), "{node}");
    let texts: Vec<String> = conversation(&a, &session)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert!(
        texts.iter().any(|t| t == "a's answer 2") && texts.iter().any(|t| t == "question 3"),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t == "b's answer"), "{texts:?}");
    verify_all(&a);
    a.assert_clean(&session);
    a.ok(&["push"]);
    fsck(&a, &remote);
    assert_nothing_forced(&a, &remote);
}

/// A deletion holds without the commits it deleted: a turn never pushed
/// before the delete does not make the deleting machine's fetch bring the
/// session back, and a peer behind it neither revives it by pushing nor
/// keeps it on fetching: the tombstone names every commit it saw.
#[test]
fn a_deletion_holds_on_machines_that_never_had_what_it_deleted() {
    let (a, b, remote) = two_machines();
    a.turn("s1", "never pushed", &[]);
    a.ok(&["delete", "s1", "--yes"]);
    let out = a.ok(&["--json", "fetch"]);
    assert_eq!(
        records(&out, "fetched")[0]["outcome"],
        "tombstoned",
        "{out}"
    );
    assert!(sessions_here(&a).is_empty());
    a.ok(&["push"]);
    // b is behind (it never had a's last turn) and pushes first: nothing
    // of s1 revived.
    let out = b.ok(&["--json", "push"]);
    assert!(records(&out, "pushed_ref").is_empty(), "{out}");
    let out = b.ok(&["--json", "fetch"]);
    assert_eq!(records(&out, "fetched")[0]["outcome"], "deleted", "{out}");
    assert!(sessions_here(&b).is_empty());
    let out = a.ok(&["--json", "fetch"]);
    assert_eq!(
        records(&out, "fetched")[0]["outcome"],
        "tombstoned",
        "{out}"
    );
    assert!(sessions_here(&a).is_empty());
    verify_all(&a);
    verify_all(&b);
    assert_nothing_forced(&a, &remote);
}
