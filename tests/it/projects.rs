//! Projects and Project-Git (SPEC §5.10–§5.11): the user's repository only
//! ever gets the agent's own changes.

use std::path::{Path, PathBuf};

use crate::env::TestEnv;

/// A user repository with a tracked file, an ignore rule and a commit.
fn user_repo(env: &TestEnv) -> PathBuf {
    let dir = env.tmp.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let git = |args: &[&str]| {
        env.git_ok(&dir, args);
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "User"]);
    git(&["config", "user.email", "user@example.com"]);
    std::fs::write(dir.join("main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "*.log\ntarget/\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "user's first commit"]);
    dir
}

/// The text of every relocation record node of the session in `dir`.
fn relocate_records(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("history"))
        .unwrap()
        .filter_map(|e| std::fs::read(e.unwrap().path()).ok())
        .filter_map(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .filter(|n| n["name"] == "project/relocate")
        .map(|n| n["output"].as_str().unwrap().to_string())
        .collect()
}

/// A session bound to an auto-commit project, its turn begun.
fn bound_session(env: &TestEnv, dir: &Path) -> String {
    let id = env
        .ok(&["project", "add", dir.to_str().unwrap(), "--auto-commit"])
        .trim()
        .to_string();
    env.ok(&["init", "s1", "--project", &id]);
    id
}

/// The latest reply's file in s1 of `project`.
fn reply_file(env: &TestEnv, project: &str) -> PathBuf {
    let dir = env
        .state()
        .join("sessions/projects")
        .join(project)
        .join("s1/history");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("-a-"))
        .max()
        .unwrap()
}

fn reply_metadata(env: &TestEnv, project: &str) -> serde_json::Value {
    let f = reply_file(env, project);
    let node: serde_json::Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
    node["metadata"]["project_commit"].clone()
}

/// The reply's bytes as the session's HEAD commit holds them.
fn committed_reply(env: &TestEnv, project: &str) -> String {
    let f = reply_file(env, project);
    let name = f.file_name().unwrap().to_string_lossy().into_owned();
    env.git_ok(
        &session_dir(env, project),
        &["show", &format!("HEAD:history/{name}")],
    )
}

fn turn(env: &TestEnv, extra: &[&str]) -> String {
    env.append("s1", &["--text", "please add the helper"]);
    env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--name",
            "model-x",
            "--text",
            "added",
        ],
    );
    let mut a = vec!["commit-turn", "s1"];
    a.extend_from_slice(extra);
    let out = env.cmd().args(&a).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A user repository, session s1 bound to it (auto-commit), a turn begun
/// and the agent's new `helper.rs` written: the env, the project's
/// directory and its id.
fn turn_writing_helper() -> (TestEnv, PathBuf, String) {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("helper.rs"), "pub fn help() {}\n").unwrap();
    (env, dir, pid)
}

fn session_dir(env: &TestEnv, project: &str) -> PathBuf {
    env.state()
        .join("sessions/projects")
        .join(project)
        .join("s1")
}

#[test]
fn a_clean_tree_gets_one_agent_commit_with_exactly_the_agents_files() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    assert!(
        session_dir(&env, &pid).join(".git").is_dir(),
        "bound sessions live under sessions/projects/<id>/"
    );
    std::fs::write(dir.join("notes.log"), "ignored by the user's rules").unwrap();
    env.ok(&["begin-turn", "s1"]);
    assert_eq!(env.meta_at(&session_dir(&env, &pid))["status"], "running");
    std::fs::write(dir.join("helper.rs"), "pub fn help() {}\n").unwrap();
    std::fs::write(dir.join("main.rs"), "fn main() { helper(); }\n").unwrap();
    turn(&env, &[]);
    let log = env.git_ok(&dir, &["log", "--format=%an <%ae>|%cn <%ce>|%s"]);
    assert_eq!(
        log,
        "agent (model-x via OpenProgram) <agent@openprogram.local>|agent (model-x via OpenProgram) <agent@openprogram.local>|[agent s1] turn 1: please add the helper\nUser <user@example.com>|User <user@example.com>|user's first commit\n"
    );
    let files = env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files, "helper.rs\nmain.rs\n");
    let body = env.git_ok(&dir, &["log", "-1", "--format=%B"]);
    // One session commit for the turn (the project commit is made first and
    // recorded in the reply); the project commit's trailers find it.
    let sdir = session_dir(&env, &pid);
    assert_eq!(
        env.git_ok(&sdir, &["log", "--format=%s"]),
        "turn 1: please add the helper\nsession init\n"
    );
    assert!(
        body.contains("\nSession: s1\nTurn: 1\nNodes: 1..2\n"),
        "{body}"
    );
    let sha = env.git_ok(&dir, &["rev-parse", "HEAD"]);
    let recorded = committed_reply(&env, &pid);
    assert!(recorded.contains(sha.trim()), "{recorded}");
    let log: serde_json::Value = serde_json::from_str(
        env.ok(&["--json", "project", "log", &pid])
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        log["data"]["session_commit"],
        env.git_ok(&sdir, &["rev-parse", "HEAD"]).trim()
    );
    assert_eq!(env.ok(&["verify", "--all"]), "");
    assert_eq!(
        env.git_ok(&dir, &["status", "--porcelain", "--ignored"]),
        "!! notes.log\n",
        "the ignored file is untouched"
    );
    assert!(env.git_in(&dir, &["fsck", "--strict"]).status.success());
    // The assistant node records the commit, and the session repo is clean.
    let rec = reply_metadata(&env, &pid);
    assert_eq!(rec["sha"], env.git_ok(&dir, &["rev-parse", "HEAD"]).trim());
    assert!(
        env.git_ok(&session_dir(&env, &pid), &["status", "--porcelain"])
            .is_empty()
    );
    assert_eq!(env.ok(&["verify", "--all"]), "");
    let plog = env.ok(&["project", "log", &pid, "--json"]);
    let row: serde_json::Value = serde_json::from_str(plog.lines().next().unwrap()).unwrap();
    assert_eq!(row["data"]["session_id"], "s1");
    assert_eq!(row["data"]["turn"], 1);
}

#[test]
fn a_large_file_the_agent_wrote_is_committed_without_reading_it_whole() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    bound_session(&env, &dir);
    env.ok(&["begin-turn", "s1"]);
    // 300 MiB (sparse, zeros), committed with 200 MiB of address space.
    let big = std::fs::File::create(dir.join("data.bin")).unwrap();
    big.set_len(300 << 20).unwrap();
    env.append("s1", &["--text", "please write the data"]);
    env.append("s1", &["--role", "assistant", "--text", "written"]);
    let mut c = env.cmd();
    c.args(["commit-turn", "s1"]);
    crate::bad_input::limit_address_space(&mut c, 200 << 20);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files, "data.bin\n");
    let size = env.git_ok(&dir, &["cat-file", "-s", "HEAD:data.bin"]);
    assert_eq!(size.trim(), (300u64 << 20).to_string());
    assert_eq!(env.git_ok(&dir, &["status", "--porcelain"]), "");
    let fsck = env.git_in(&dir, &["fsck", "--strict", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn a_dirty_tree_at_the_start_means_no_commit_and_the_users_work_untouched() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    std::fs::write(dir.join("main.rs"), "fn main() { /* user's edit */ }\n").unwrap();
    std::fs::write(dir.join("scratch.txt"), "user's untracked notes").unwrap();
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("helper.rs"), "pub fn help() {}\n").unwrap();
    let err = turn(&env, &[]);
    assert!(err.contains("dirty_tree"), "{err}");
    assert_eq!(
        env.git_ok(&dir, &["rev-list", "--count", "HEAD"]),
        "1\n",
        "no agent commit"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("main.rs")).unwrap(),
        "fn main() { /* user's edit */ }\n"
    );
    assert_eq!(
        env.git_ok(&dir, &["diff", "--cached", "--name-only"]),
        "",
        "nothing staged"
    );
    assert_eq!(
        env.git_ok(&dir, &["status", "--porcelain"]),
        " M main.rs\n?? helper.rs\n?? scratch.txt\n"
    );
    assert_eq!(reply_metadata(&env, &pid)["skipped"], "dirty_tree");
}

#[test]
fn declared_paths_commit_only_the_agents_files() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    std::fs::write(dir.join("user-draft.md"), "the user's untracked draft").unwrap();
    env.ok(&["begin-turn", "s1"]);
    // During the turn: the agent writes helper.rs, the user edits main.rs.
    std::fs::write(dir.join("helper.rs"), "pub fn help() {}\n").unwrap();
    std::fs::write(dir.join("main.rs"), "fn main() { /* the user again */ }\n").unwrap();
    let helper = dir.join("helper.rs");
    turn(&env, &["--project-paths", helper.to_str().unwrap()]);
    assert_eq!(
        env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]),
        "helper.rs\n"
    );
    assert_eq!(
        env.git_ok(&dir, &["status", "--porcelain"]),
        " M main.rs\n?? user-draft.md\n",
        "the user's work is as they left it"
    );
    assert_eq!(env.git_ok(&dir, &["diff", "--cached", "--name-only"]), "");
    // A declared path that was dirty at the start: refused.
    env.ok(&["begin-turn", "s1"]);
    let err = turn(&env, &["--project-paths", "main.rs"]);
    assert!(err.contains("dirty_tree"), "{err}");
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "2\n");
    let _ = pid;
    env.fails(&["commit-turn", "s1", "--project-paths", "../outside"], 2);
}

#[test]
fn a_directory_without_a_repository_gets_one_with_a_baseline() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("existing.txt"), "was here before").unwrap();
    let pid = bound_session(&env, &dir);
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("new.txt"), "by the agent").unwrap();
    turn(&env, &[]);
    assert_eq!(
        env.git_ok(&dir, &["log", "--format=%s"]),
        "[agent s1] turn 1: please add the helper\nopenprogram: baseline (pre-existing files)\n"
    );
    assert_eq!(
        env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]),
        "new.txt\n"
    );
    assert_eq!(
        env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD~1"]),
        "existing.txt\n"
    );
    assert_eq!(env.git_ok(&dir, &["status", "--porcelain"]), "");
    let _ = pid;
}

/// A project directory whose path is not UTF-8 was registered under a
/// lossy spelling of it, a path that does not exist: the project was
/// `path_missing` from the start. The registry (shared with the Python
/// store) holds paths as JSON text, so such a directory is refused, for
/// `project add` and for `relocate` alike.
#[test]
fn a_project_path_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let latin = env.tmp.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&latin).unwrap();
    let mut add = env.cmd();
    add.args(["project", "add"]).arg(&latin);
    let out = add.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("project::path_not_utf8"), "{err}");
    assert!(!env.state().join("projects/projects.json").exists());
    let (_, pid) = env.project("work", &[]);
    let before = std::fs::read(env.state().join("projects/projects.json")).unwrap();
    let mut relocate = env.cmd();
    relocate.args(["relocate", &pid]).arg(&latin);
    let out = relocate.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("project::path_not_utf8"), "{err}");
    assert_eq!(
        std::fs::read(env.state().join("projects/projects.json")).unwrap(),
        before
    );
}

/// A file name that is not UTF-8 (a Latin-1 name an agent's tool wrote)
/// was left out of the agent commit without a word, and the note counted
/// it among the commit's paths: a commit that says it holds the turn's
/// changes and does not. The turn now makes no agent commit and says why
/// (`path_not_utf8`), its changes left in the tree; and a tree holding such
/// a name before the turn is a dirty tree.
#[test]
fn a_file_name_that_is_not_utf8_is_no_commit_left_short() {
    use std::os::unix::ffi::OsStrExt;
    let (env, dir, pid) = turn_writing_helper();
    let latin = dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt"));
    std::fs::write(&latin, "latin-1\n").unwrap();
    let head = env.git_ok(&dir, &["rev-parse", "HEAD"]);
    let err = turn(&env, &[]);
    assert!(err.contains("path_not_utf8"), "{err}");
    assert_eq!(reply_metadata(&env, &pid)["skipped"], "path_not_utf8");
    assert_eq!(env.git_ok(&dir, &["rev-parse", "HEAD"]), head);
    assert!(latin.exists() && dir.join("helper.rs").exists());
    // The name is still there when the next turn begins: the tree is dirty.
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("more.rs"), "\n").unwrap();
    let err = turn(&env, &[]);
    assert!(err.contains("dirty_tree"), "{err}");
    assert_eq!(env.git_ok(&dir, &["rev-parse", "HEAD"]), head);
    // Declared paths are committed, whatever else the tree holds.
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("declared.rs"), "\n").unwrap();
    turn(&env, &["--project-paths", "declared.rs"]);
    let files = env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files, "declared.rs\n");
    env.assert_clean("s1");
}

#[test]
fn skip_reasons_are_recorded() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    // Without begin-turn there is no baseline.
    let err = turn(&env, &[]);
    assert!(err.contains("no_baseline"), "{err}");
    // Nothing changed.
    env.ok(&["begin-turn", "s1"]);
    assert!(turn(&env, &[]).contains("no_changes"));
    // Detached HEAD.
    env.ok(&["begin-turn", "s1"]);
    env.git_ok(&dir, &["checkout", "-q", "--detach"]);
    std::fs::write(dir.join("x.rs"), "").unwrap();
    assert!(turn(&env, &[]).contains("detached_head"));
    assert_eq!(reply_metadata(&env, &pid)["skipped"], "detached_head");
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "1\n");
}

#[test]
fn relocate_keeps_the_id_and_records_one_node() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    env.turn("s1", "one", &[]);
    let head = env.meta_at(&session_dir(&env, &pid))["head_id"].clone();
    let moved = env.tmp.path().join("moved");
    std::fs::rename(&dir, &moved).unwrap();
    let list = env.ok(&["project", "list"]);
    assert!(
        list.contains("path_missing") && list.contains(&format!("git-session relocate {pid}")),
        "{list}"
    );
    env.ok(&["init", "s2"]);
    let err = env.fails(&["project", "bind", "s2", &pid], 1);
    assert!(err.contains("relocate"), "{err}");
    env.ok(&["relocate", &pid, moved.to_str().unwrap()]);
    let p = env.ok(&["project", "show", &pid, "--json"]);
    let p: serde_json::Value = serde_json::from_str(p.trim()).unwrap();
    assert_eq!(p["data"]["id"], pid.as_str());
    assert_eq!(
        p["data"]["path"],
        moved.canonicalize().unwrap().to_str().unwrap()
    );
    let meta = env.meta_at(&session_dir(&env, &pid));
    assert_eq!(meta["head_id"], head, "the head does not move");
    let hist = session_dir(&env, &pid).join("history");
    let recs: Vec<serde_json::Value> = std::fs::read_dir(&hist)
        .unwrap()
        .map(|e| {
            serde_json::from_slice::<serde_json::Value>(&std::fs::read(e.unwrap().path()).unwrap())
                .unwrap()
        })
        .filter(|n| n["name"] == "project/relocate")
        .collect();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["role"], "code");
    assert_eq!(recs[0]["caller"], "ROOT");
    assert_eq!(recs[0]["predecessor"], serde_json::Value::Null);
    assert_eq!(recs[0]["metadata"]["display"], "runtime");
    assert!(recs[0]["output"].as_str().unwrap().contains(" → "));
    env.ok(&["project", "bind", "s2", &pid]);
    env.fails(&["relocate", "default", moved.to_str().unwrap()], 1);
    env.fails(&["relocate", &pid, "/nonexistent/dir"], 1);
}

/// One bound session that cannot take its record keeps none of the
/// others from theirs: a planted link in one (its record waits for the next
/// turn's commit), a held lock on another (no record: named, exit 1). Run
/// again, the move is recorded where it was missing, as the move it was,
/// and nowhere twice.
#[test]
fn relocate_records_every_session_it_can_and_a_second_run_the_rest() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    for s in ["s2", "s3"] {
        env.ok(&["init", s, "--project", &pid]);
    }
    for s in ["s1", "s2", "s3"] {
        env.turn(s, "one", &[]);
    }
    let dir_of = |s: &str| env.state().join("sessions/projects").join(&pid).join(s);
    std::os::unix::fs::symlink(
        "/etc/hostname",
        dir_of("s1").join("history/000009-u-link.json"),
    )
    .unwrap();
    let lock = env.hold_lock(&dir_of("s2"));
    let moved = env.tmp.path().join("moved");
    std::fs::rename(&dir, &moved).unwrap();
    let to = moved.to_str().unwrap();
    let out = env.run(&["--lock-timeout", "0.2", "relocate", &pid, to]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("session `s2` got no record node"), "{err}");
    assert!(
        err.contains("`s1`: the record waits for the next turn's commit"),
        "{err}"
    );
    let records = |s: &str| relocate_records(&dir_of(s));
    let the_move = format!(
        "{} → {}",
        dir.display(),
        moved.canonicalize().unwrap().display()
    );
    assert_eq!(records("s1"), std::slice::from_ref(&the_move));
    assert_eq!(records("s2"), Vec::<String>::new());
    assert_eq!(records("s3"), std::slice::from_ref(&the_move));
    lock.unlock().unwrap();
    env.ok(&["relocate", &pid, to]);
    for s in ["s1", "s2", "s3"] {
        assert_eq!(records(s), std::slice::from_ref(&the_move), "{s}");
    }
}

/// A binding records when the session joined its project (`bound_at` in
/// meta.json), and `relocate` run again with the path the project already
/// has completes the move only in the sessions bound before it: one bound
/// after the move never lived at the old path and gets no record of it,
/// nor does one an older version bound (no `bound_at`) whose `created_at`
/// is after the move. The output says what was done.
#[test]
fn a_second_relocate_completes_the_move_only_in_sessions_bound_before_it() {
    let mut env = TestEnv::new();
    let t0 = 1_796_017_556.0;
    let (dir, pid) = env.project("app", &[]);
    let state = env.state();
    let dir_of = |s: &str| state.join("sessions/projects").join(&pid).join(s);
    for s in ["s1", "s3"] {
        env.ok(&["init", s, "--project", &pid]);
        env.turn(s, "one", &[]);
    }
    assert_eq!(env.meta_at(&dir_of("s1"))["bound_at"], t0);
    // The move, at t0 + 100; s3 is busy and gets no record.
    let moved = env.tmp.path().join("app-moved");
    std::fs::rename(&dir, &moved).unwrap();
    let moved = moved.canonicalize().unwrap();
    let to = moved.to_str().unwrap().to_string();
    env.now = Some(t0 + 100.0);
    let lock = env.hold_lock(&dir_of("s3"));
    let out = env.run(&["--lock-timeout", "0.2", "relocate", &pid, &to]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{pid}: {} -> {to} (1 session(s) recorded, 1 failed)\n",
            dir.display()
        )
    );
    drop(lock);
    // After the move: s2 bound at t0 + 200 (bound again later: the time
    // stays), s4 as an older version binds (no bound_at), created after it.
    env.now = Some(t0 + 200.0);
    for s in ["s2", "s4"] {
        env.ok(&["init", s]);
        env.ok(&["project", "bind", s, &pid]);
    }
    env.now = Some(t0 + 250.0);
    env.ok(&["project", "bind", "s2", &pid]);
    assert_eq!(env.meta_at(&dir_of("s2"))["bound_at"], t0 + 200.0);
    let mut m4 = env.meta_at(&dir_of("s4"));
    m4.as_object_mut().unwrap().remove("bound_at");
    std::fs::write(
        dir_of("s4").join("meta.json"),
        serde_json::to_vec(&m4).unwrap(),
    )
    .unwrap();
    for s in ["s2", "s4"] {
        env.turn(s, "one", &[]);
    }
    // Run again: the move is completed in s3 only.
    env.now = Some(t0 + 300.0);
    let the_move = format!("{} → {to}", dir.display());
    assert_eq!(
        env.ok(&["relocate", &pid, &to]),
        format!(
            "{pid}: already at {to}; completing the move from {}: 1 session(s) recorded, 1 already had it, 2 bound after it\n",
            dir.display()
        )
    );
    let records = |s: &str| relocate_records(&dir_of(s));
    for s in ["s1", "s3"] {
        assert_eq!(records(s), std::slice::from_ref(&the_move), "{s}");
    }
    for s in ["s2", "s4"] {
        assert_eq!(records(s), Vec::<String>::new(), "{s}");
        env.assert_clean(s);
    }
    env.assert_clean("s3");
    let log = env.git_ok(&dir_of("s3"), &["log", "--format=%s"]);
    assert!(log.starts_with("record: "), "{log}");
    // Once more: nothing left to do, and the JSON says so.
    let out = env.ok(&["--json", "relocate", &pid, &to]);
    let rec: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(rec["type"], "relocated");
    assert_eq!(rec["data"]["sessions"], 0);
    assert_eq!(rec["data"]["already_recorded"], 2);
    assert_eq!(rec["data"]["bound_after"], serde_json::json!(["s2", "s4"]));
    assert_eq!(rec["data"]["moved_from"], dir.to_str().unwrap());
    for s in ["s1", "s2", "s3", "s4"] {
        assert_eq!(records(s).len(), usize::from(s == "s1" || s == "s3"), "{s}");
    }
    // A project that never moved: no move to complete, nothing recorded.
    let (other, oid) = env.project("other", &[]);
    env.ok(&["init", "s5", "--project", &oid]);
    env.turn("s5", "one", &[]);
    let at = other.canonicalize().unwrap();
    assert_eq!(
        env.ok(&["relocate", &oid, at.to_str().unwrap()]),
        format!(
            "{oid}: already at {}; no session records a move to it: 0 session(s) recorded\n",
            at.display()
        )
    );
    assert_eq!(records_in(&env, &oid, "s5"), 0);
    env.assert_clean("s5");
}

/// How many relocation records session `s` of project `pid` holds.
fn records_in(env: &TestEnv, pid: &str, s: &str) -> usize {
    let hist = env
        .state()
        .join("sessions/projects")
        .join(pid)
        .join(s)
        .join("history");
    std::fs::read_dir(hist)
        .unwrap()
        .filter_map(|e| std::fs::read(e.unwrap().path()).ok())
        .filter_map(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .filter(|n| n["name"] == "project/relocate")
        .count()
}

#[test]
fn a_session_is_frozen_to_its_project_after_the_first_turn() {
    let env = TestEnv::new();
    let a = user_repo(&env);
    let b = env.tmp.path().join("other");
    std::fs::create_dir_all(&b).unwrap();
    let pa = env
        .ok(&["project", "add", a.to_str().unwrap()])
        .trim()
        .to_string();
    let pb = env
        .ok(&["project", "add", b.to_str().unwrap(), "--name", "other"])
        .trim()
        .to_string();
    assert_eq!(
        env.ok(&["project", "add", a.to_str().unwrap()]).trim(),
        pa,
        "the id is stable per path"
    );
    env.ok(&["init", "s1"]);
    env.ok(&["project", "bind", "s1", &pa]);
    assert!(
        env.state()
            .join("sessions/projects")
            .join(&pa)
            .join("s1")
            .is_dir(),
        "moved under its project"
    );
    env.ok(&["project", "bind", "s1", "other"]);
    env.append("s1", &["--text", "first"]);
    let err = env.fails(&["project", "bind", "s1", &pa], 1);
    assert!(err.contains("frozen after the first turn"), "{err}");
    env.ok(&["project", "bind", "s1", &pb]);
    let projects: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.state().join("projects/projects.json")).unwrap())
            .unwrap();
    assert_eq!(projects[&pb]["session_ids"], serde_json::json!(["s1"]));
    assert_eq!(projects[&pa]["session_ids"], serde_json::json!([]));
    let err = env.fails(&["init", "s1", "--project", &pa], 1);
    assert!(err.contains("bound to project"), "{err}");
    env.fails(&["project", "show", "nope"], 1);
    env.fails(&["project", "add", "/nonexistent/dir"], 1);
    env.ok(&["project", "remove", &pa]);
    assert!(!env.ok(&["project", "list"]).contains(&pa));
}

/// A hook in the user's repository that leaves a mark outside the tree and
/// exits with `code`.
#[cfg(unix)]
fn install_hook(dir: &Path, name: &str, mark: &Path, code: i32) {
    use std::os::unix::fs::PermissionsExt;
    let hook = dir.join(".git/hooks").join(name);
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        format!("#!/bin/sh\necho ran >> '{}'\nexit {code}\n", mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(unix)]
#[test]
fn the_projects_hooks_do_not_run_unless_asked() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    let mark = env.tmp.path().join("hook-ran");
    install_hook(&dir, "pre-commit", &mark, 1);
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("helper.rs"), "pub fn help() {}\n").unwrap();
    turn(&env, &[]);
    assert!(
        !mark.exists(),
        "a refusing hook would have blocked the commit"
    );
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "2\n");
    assert!(reply_metadata(&env, &pid)["sha"].is_string());
}

#[cfg(unix)]
#[test]
fn with_hooks_on_the_agent_commit_goes_through_them() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    env.ok(&["project", "set", &pid, "--hooks", "true"]);
    let mark = env.tmp.path().join("hook-ran");
    install_hook(&dir, "pre-commit", &mark, 0);
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("helper.rs"), "pub fn help() {}\n").unwrap();
    std::fs::write(dir.join("main.rs"), "fn main() { helper(); }\n").unwrap();
    std::fs::remove_file(dir.join(".gitignore")).unwrap();
    turn(&env, &[]);
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "ran\n");
    assert_eq!(
        env.git_ok(&dir, &["log", "-1", "--format=%an <%ae>|%cn|%s"]),
        "agent (model-x via OpenProgram) <agent@openprogram.local>|agent (model-x via OpenProgram)|[agent s1] turn 1: please add the helper\n"
    );
    assert_eq!(
        env.git_ok(&dir, &["show", "--name-status", "--format=", "HEAD"]),
        "D\t.gitignore\nA\thelper.rs\nM\tmain.rs\n"
    );
    assert_eq!(env.git_ok(&dir, &["status", "--porcelain"]), "");
    assert_eq!(
        reply_metadata(&env, &pid)["sha"],
        env.git_ok(&dir, &["rev-parse", "HEAD"]).trim()
    );
    assert!(
        env.git_ok(&session_dir(&env, &pid), &["status", "--porcelain"])
            .is_empty()
    );
}

#[cfg(unix)]
#[test]
fn a_refusing_hook_is_a_recorded_skip_and_the_users_index_is_untouched() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    env.ok(&["project", "set", &pid, "--hooks", "true"]);
    let mark = env.tmp.path().join("hook-ran");
    install_hook(&dir, "pre-commit", &mark, 1);
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("helper.rs"), "pub fn help() {}\n").unwrap();
    std::fs::write(dir.join("main.rs"), "fn main() { helper(); }\n").unwrap();
    let err = turn(&env, &[]);
    assert!(err.contains("hook_refused"), "{err}");
    assert!(mark.exists());
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "1\n");
    // The agent's changes stay in the worktree, unstaged, as they were.
    assert_eq!(
        env.git_ok(&dir, &["status", "--porcelain"]),
        " M main.rs\n?? helper.rs\n"
    );
    assert_eq!(reply_metadata(&env, &pid)["skipped"], "hook_refused");
    let sdir = session_dir(&env, &pid);
    assert!(env.git_ok(&sdir, &["status", "--porcelain"]).is_empty());
    assert_eq!(
        env.git_ok(&sdir, &["log", "--format=%s"]),
        "turn 1: please add the helper\nsession init\n",
        "one commit for the turn, the skip recorded in it"
    );
    assert!(committed_reply(&env, &pid).contains("hook_refused"));
    assert_eq!(env.ok(&["verify", "--all"]), "");
}

/// While git holds the project's index (`index.lock`: a `git commit` of
/// the user's, its message being edited), the agent commit waits, then the
/// turn is a recorded skip: git's lock is left alone, nothing is committed
/// or staged, and the session's turn is committed. Once git is done, the
/// next turn commits. A file the user staged meanwhile stays staged.
#[test]
fn a_busy_index_makes_the_agent_commit_a_skip_and_its_lock_is_left_alone() {
    let (env, dir, pid) = turn_writing_helper();
    let lock = dir.join(".git/index.lock");
    std::fs::write(&lock, b"git's own").unwrap();
    let err = turn(&env, &["--project-paths", "helper.rs"]);
    assert!(err.contains("git_busy"), "{err}");
    assert_eq!(std::fs::read(&lock).unwrap(), b"git's own");
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "1\n");
    assert_eq!(reply_metadata(&env, &pid)["skipped"], "git_busy");
    assert!(committed_reply(&env, &pid).contains("git_busy"));
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(
        env.git_ok(&dir, &["status", "--porcelain"]),
        "?? helper.rs\n"
    );

    // git done: the user staged a file of theirs; the next turn commits
    // the agent's file and leaves the user's staged, as it was.
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    env.git_ok(&dir, &["add", "notes.txt"]);
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(dir.join("util.rs"), "pub fn util() {}\n").unwrap();
    turn(&env, &["--project-paths", "util.rs"]);
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "2\n");
    assert_eq!(
        env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]),
        "util.rs\n"
    );
    assert_eq!(
        env.git_ok(&dir, &["status", "--porcelain"]),
        "A  notes.txt\n?? helper.rs\n"
    );
    assert_eq!(env.ok(&["verify", "--all"]), "");
}

/// A commit of the user's that lands while the agent commit is being made
/// (after it read HEAD, while it waits for git's index lock) makes the turn
/// a recorded skip: the user's commit stays the branch's tip, nothing of
/// the agent's is committed or staged, and no lock or temp file is left.
#[test]
fn a_user_commit_landing_midway_makes_the_agent_commit_a_skip() {
    let (env, dir, pid) = turn_writing_helper();
    env.append("s1", &["--text", "please add the helper"]);
    env.append("s1", &["--role", "assistant", "--text", "added"]);
    // The user's commit, made beforehand so that landing it is one write.
    let users = env
        .git_ok(
            &dir,
            &[
                "commit-tree",
                "HEAD^{tree}",
                "-p",
                "HEAD",
                "-m",
                "user's second",
            ],
        )
        .trim()
        .to_string();
    // git holds the index, as a `git commit` of the user's would.
    let lock = dir.join(".git/index.lock");
    std::fs::write(&lock, b"git's own").unwrap();
    let child = env
        .cmd()
        .args(["commit-turn", "s1", "--project-paths", "helper.rs"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The agent commit has read HEAD and waits for the lock (its own lock
    // file, to be linked in git's place, exists): the user's commit lands,
    // then git lets go of the index.
    let git_dir = dir.join(".git");
    let waiting = || {
        std::fs::read_dir(&git_dir)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("agent-index"))
    };
    let started = std::time::Instant::now();
    while !waiting() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the agent commit never waited for the index"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    std::fs::write(git_dir.join("refs/heads/main"), format!("{users}\n")).unwrap();
    std::fs::remove_file(&lock).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("head_moved"), "{err}");
    assert_eq!(env.git_ok(&dir, &["rev-parse", "HEAD"]).trim(), users);
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "2\n");
    assert_eq!(
        env.git_ok(&dir, &["status", "--porcelain"]),
        "?? helper.rs\n"
    );
    assert!(!lock.exists());
    let left: Vec<String> = std::fs::read_dir(&git_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".gs-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(reply_metadata(&env, &pid)["skipped"], "head_moved");
    assert!(committed_reply(&env, &pid).contains("head_moved"));
    let sdir = session_dir(&env, &pid);
    assert!(env.git_ok(&sdir, &["status", "--porcelain"]).is_empty());
    assert_eq!(env.ok(&["verify", "--all"]), "");
    env.git_ok(&dir, &["fsck", "--strict"]);
}

/// The kinds of what `verify --all` finds.
fn verify_all_kinds(env: &TestEnv) -> Vec<String> {
    let out = env.run(&["verify", "--all", "--json"]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "finding")
        .map(|r| r["data"]["kind"].as_str().unwrap().to_string())
        .collect()
}

/// A commit-turn killed while it streams a large file into the project's
/// repository leaves a temp file in the user's `.git/objects/`. Once it
/// has stopped growing, `verify --all` reports it and the next agent
/// commit, or `verify --all --fix`, removes it; one still being written
/// (another state dir's git-session may be streaming) is left alone.
#[test]
fn a_stream_killed_midway_leaves_nothing_for_good_in_the_users_git() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    bound_session(&env, &dir);
    env.ok(&["begin-turn", "s1"]);
    let big = std::fs::File::create(dir.join("data.bin")).unwrap();
    big.set_len(20 << 20).unwrap();
    env.append("s1", &["--text", "please write the data"]);
    env.append("s1", &["--role", "assistant", "--text", "written"]);
    env.crash_at("object-streamed-part", &["commit-turn", "s1"]);
    // The stream's temp file: gix's, in `objects/`.
    let temps = || -> Vec<PathBuf> {
        std::fs::read_dir(dir.join(".git/objects"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".tmp"))
            .collect()
    };
    assert_eq!(temps().len(), 1, "the crash left the stream's temp file");
    assert!(!verify_all_kinds(&env).contains(&"stray_temp_file".to_string()));
    crate::env::age(&temps()[0], 120);
    assert!(verify_all_kinds(&env).contains(&"stray_temp_file".to_string()));
    // The next agent commit sweeps it, and commits the file.
    turn(&env, &[]);
    assert!(temps().is_empty());
    let files = env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files, "data.bin\n");
    assert_eq!(env.git_ok(&dir, &["status", "--porcelain"]), "");
    assert_eq!(env.ok(&["verify", "--all"]), "");
    // One left stale with no agent commit to come: `verify --all --fix`.
    let left = dir.join(".git/.gs-tmp-obj.left");
    std::fs::write(&left, b"part of an object").unwrap();
    crate::env::age(&left, 120);
    assert_eq!(verify_all_kinds(&env), ["stray_temp_file"]);
    env.ok(&["verify", "--all", "--fix"]);
    assert!(temps().is_empty() && !left.exists());
    assert_eq!(env.ok(&["verify", "--all"]), "");
    let fsck = env.git_in(&dir, &["fsck", "--strict", "--no-progress"]);
    assert!(fsck.status.success());
}

/// An agent commit killed at each step while it holds git's `index.lock`
/// leaves that lock, as git itself does, but one known for ours: `verify
/// --all` names it, and `verify --all --fix` (or the next commit-turn)
/// puts the index in place when the commit landed, else removes the lock.
/// The user's repository then agrees with itself: HEAD, index and tree.
#[test]
fn an_agent_commit_killed_holding_the_index_lock_is_finished_or_undone() {
    for (at, landed) in [
        ("project-index-locked", false),
        ("project-before-ref", false),
        ("project-before-index", true),
    ] {
        for by_next_turn in [false, true] {
            let (env, dir, _) = turn_writing_helper();
            env.append("s1", &["--text", "please add the helper"]);
            env.append("s1", &["--role", "assistant", "--text", "added"]);
            env.crash_at(at, &["commit-turn", "s1"]);
            let lock = dir.join(".git/index.lock");
            assert!(lock.exists(), "{at}: git's lock is held");
            let commit = env.git_in(&dir, &["commit", "-q", "--allow-empty", "-m", "user"]);
            assert!(!commit.status.success(), "{at}: git refuses meanwhile");
            // The turn was at work (`begin-turn`): its nodes are a note,
            // left to its commit-turn.
            assert_eq!(
                verify_all_kinds(&env),
                ["turn_in_progress", "project_index_lock"]
            );
            if by_next_turn {
                // The harness runs the turn's commit-turn again.
                env.ok(&["commit-turn", "s1"]);
            } else {
                let out = env.ok(&["verify", "--all", "--fix"]);
                assert!(out.contains("fixed:"), "{at}: {out}");
            }
            assert!(!lock.exists(), "{at}");
            let ours = dir.join(".git");
            let left: Vec<_> = std::fs::read_dir(&ours)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(".gs-tmp-"))
                .collect();
            assert!(left.is_empty(), "{at}: {left:?}");
            let count = env.git_ok(&dir, &["rev-list", "--count", "HEAD"]);
            let committed = landed || by_next_turn;
            assert_eq!(count.trim(), if committed { "2" } else { "1" }, "{at}");
            let status = env.git_ok(&dir, &["status", "--porcelain"]);
            assert_eq!(
                status,
                if committed { "" } else { "?? helper.rs\n" },
                "{at}"
            );
            let fsck = env.git_in(&dir, &["fsck", "--strict", "--no-progress"]);
            assert!(fsck.status.success(), "{at}");
            if !by_next_turn {
                // No commit-turn comes: `recover` ends the turn, and
                // `--fix` then commits its nodes.
                assert_eq!(verify_all_kinds(&env), ["turn_in_progress"], "{at}");
                env.ok(&["recover"]);
            }
            env.ok(&["verify", "--all", "--fix"]);
            assert_eq!(env.ok(&["verify", "--all"]), "", "{at}");
        }
    }
}

/// When every bound session failed to take its record, no record names the
/// move: the warning gives the command that completes it (`--from` the old
/// path), and that command records it. `--from` is refused on a first run.
#[test]
fn a_move_no_session_recorded_is_completed_from_the_path_the_warning_names() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    env.turn("s1", "one", &[]);
    let sd = env.state().join("sessions/projects").join(&pid).join("s1");
    let lock = env.hold_lock(&sd);
    let moved = env.tmp.path().join("moved");
    std::fs::rename(&dir, &moved).unwrap();
    let to = moved.to_str().unwrap();
    let out = env.run(&["--lock-timeout", "0.2", "relocate", &pid, to]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let fix = format!(
        "`git-session relocate {pid} {to} --session s1 --from {}` records it",
        dir.display()
    );
    assert!(err.contains(&fix), "{err}");
    drop(lock);
    let other = env.tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let err = env.fails(
        &["relocate", &pid, other.to_str().unwrap(), "--from", "/x"],
        2,
    );
    assert!(err.contains("usage::relocate_from"), "{err}");
    let out = env.ok(&[
        "relocate",
        &pid,
        to,
        "--session",
        "s1",
        "--from",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out,
        format!(
            "{pid}: already at {to}; completing the move from {}: 1 session(s) recorded, 0 already had it, 0 bound after it\n",
            dir.display()
        )
    );
    assert_eq!(relocate_records(&sd), [format!("{} → {to}", dir.display())]);
}

/// A project whose path in projects.json is relative (`.`: hand-edited, or
/// from a peer) names no directory: run from inside another repository,
/// begin-turn and commit-turn make no agent commit there (the turn is
/// committed in the session, the agent commit skipped as `path_missing`).
#[test]
fn a_relative_project_path_makes_no_agent_commit_where_the_command_runs() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    let registry = env.state().join("projects/projects.json");
    let mut projects: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&registry).unwrap()).unwrap();
    let row = match projects.get_mut("projects") {
        Some(rows) => &mut rows[&pid],
        None => &mut projects[&pid],
    };
    assert!(row.is_object(), "{row}");
    row["path"] = ".".into();
    std::fs::write(&registry, projects.to_string()).unwrap();
    let before = env.git_ok(&dir, &["rev-parse", "HEAD"]);
    let run_in = |args: &[&str]| {
        let mut c = env.cmd();
        c.current_dir(&dir).args(args);
        env.ok_cmd(c)
    };
    run_in(&["begin-turn", "s1"]);
    std::fs::write(dir.join("new.rs"), "fn x() {}\n").unwrap();
    run_in(&["append", "s1", "--text", "add x"]);
    run_in(&["append", "s1", "--role", "assistant", "--text", "added"]);
    run_in(&["--json", "commit-turn", "s1"]);
    assert_eq!(
        env.git_ok(&dir, &["rev-parse", "HEAD"]),
        before,
        "no commit there"
    );
    let log = env.git_ok(&dir, &["log", "--format=%an"]);
    assert!(!log.contains("agent"), "{log}");
}

/// `begin-turn --json` says the turn is running for every session: with
/// no project, one `turn_begun` record (project null); bound, the
/// `turn_begun` record names the project and the `baseline` follows.
#[test]
fn begin_turn_json_answers_with_or_without_a_project() {
    let env = TestEnv::new();
    env.ok(&["init", "s2"]);
    let lines = |out: String| -> Vec<serde_json::Value> {
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let alone = lines(env.ok(&["--json", "begin-turn", "s2"]));
    assert_eq!(
        alone,
        vec![serde_json::json!({
            "type": "turn_begun",
            "data": {"session": "s2", "status": "running", "project": null}
        })]
    );
    let dir = user_repo(&env);
    let pid = bound_session(&env, &dir);
    let bound = lines(env.ok(&["--json", "begin-turn", "s1"]));
    let kinds: Vec<&str> = bound.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["turn_begun", "baseline"]);
    assert_eq!(bound[0]["data"]["project"], pid.as_str());
    assert_eq!(bound[1]["data"]["project"], pid.as_str());
}

/// A project whose branch has no commit yet (`git init`, then the agent
/// writes the first files): the agent's commit is the branch's first, and
/// the turn is committed in the session (before: the turn failed, exit 1,
/// and the session's commit was never made).
#[test]
fn the_agent_commit_in_a_new_repository_is_its_first_commit() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("fresh");
    std::fs::create_dir_all(&dir).unwrap();
    env.git_ok(&dir, &["init", "-q", "-b", "main"]);
    let pid = bound_session(&env, &dir);
    env.ok(&["begin-turn", "s1"]);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    turn(&env, &[]);
    assert_eq!(env.git_ok(&dir, &["rev-list", "--count", "HEAD"]), "1\n");
    assert_eq!(
        env.git_ok(&dir, &["log", "--format=%P|%an|%s"]),
        "|agent (model-x via OpenProgram)|[agent s1] turn 1: please add the helper\n"
    );
    assert_eq!(
        env.git_ok(&dir, &["show", "--name-only", "--format=", "HEAD"]),
        "src/lib.rs\n"
    );
    assert_eq!(env.git_ok(&dir, &["status", "--porcelain"]), "");
    assert!(env.git_in(&dir, &["fsck", "--strict"]).status.success());
    let sha = env.git_ok(&dir, &["rev-parse", "HEAD"]);
    assert_eq!(reply_metadata(&env, &pid)["sha"], sha.trim());
    let log = env.ok(&["log", "s1"]);
    assert!(log.contains("turn 1: please add the helper"), "{log}");
    env.assert_clean("s1");
}

/// `init --project DIR` registers a directory no project has; an
/// unreadable projects.json is not taken for "no such project": the
/// command fails and the file is left as it is.
#[test]
fn init_with_a_project_dir_never_writes_over_an_unreadable_registry() {
    let env = TestEnv::new();
    let dir = user_repo(&env);
    env.ok(&["init", "s0"]);
    let registry = env.state().join("projects/projects.json");
    std::fs::create_dir_all(registry.parent().unwrap()).unwrap();
    std::fs::write(&registry, "{bad").unwrap();
    let err = env.fails(&["init", "s1", "--project", dir.to_str().unwrap()], 128);
    assert!(err.contains("code: git_session::corrupt"), "{err}");
    assert_eq!(std::fs::read_to_string(&registry).unwrap(), "{bad");
    assert!(!env.session_dir("s1").exists());
    // Readable again: the directory is registered and the session bound.
    std::fs::remove_file(&registry).unwrap();
    env.ok(&["init", "s1", "--project", dir.to_str().unwrap()]);
    let listed = env.ok(&["project", "list"]);
    assert!(listed.contains(dir.to_str().unwrap()), "{listed}");
}
