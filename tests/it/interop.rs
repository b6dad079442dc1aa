//! Side by side with OpenProgram's Python store (issue 18): the released
//! `openprogram` package from PyPI, driven through `tests/interop/store.py`
//! on the same state dir, in both directions and on one session.
//!
//! `.ci/run` installs the pinned package into a virtualenv and points
//! `GIT_SESSION_PYTHON` at its interpreter. Without it, each test says what
//! is missing and passes locally; under CI (`CI` set) it fails.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::env::TestEnv;

/// The interpreter that has the package, or why there is none.
fn python() -> Result<PathBuf, String> {
    let py = std::env::var_os("GIT_SESSION_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let ok = Command::new(&py)
        .args(["-c", "import openprogram.store.session.session_store"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Ok(py)
    } else {
        Err(format!(
            "`{}` cannot import openprogram: run `.ci/run` once, or `python3 -m venv .ci/venv && .ci/venv/bin/pip install --no-deps openprogram==0.5.0` and set GIT_SESSION_PYTHON=.ci/venv/bin/python",
            py.display()
        ))
    }
}

/// The Python store of one test, on the test's state dir (which is
/// `$HOME/.openprogram` for it: the released store knows no other).
struct Py {
    py: PathBuf,
}

impl Py {
    fn new(env: &TestEnv) -> Option<Py> {
        match python() {
            Ok(py) => {
                std::fs::create_dir_all(env.state()).unwrap();
                let home_state = env.tmp.path().join("home/.openprogram");
                if !home_state.exists() {
                    std::os::unix::fs::symlink(env.state(), &home_state).unwrap();
                }
                Some(Py { py })
            }
            Err(why) if std::env::var_os("CI").is_some() => panic!("{why}"),
            Err(why) => {
                eprintln!("interop test skipped: {why}");
                None
            }
        }
    }

    fn run(&self, env: &TestEnv, op: &str, args: Value) -> Value {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/store.py");
        let mut c = Command::new(&self.py);
        env.isolate(&mut c);
        let out = c
            .arg(&script)
            .arg(env.state())
            .arg(op)
            .arg(args.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "python {op} {args}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// What the Python store lists, sorted by id (see [`Listed`]).
    fn listed(&self, env: &TestEnv) -> Vec<Listed> {
        let mut v: Vec<Listed> = self
            .run(env, "list", json!({}))
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["id"] != "projects") // sessions/projects/: see git-session-guide(7)
            .map(|r| Listed {
                id: r["id"].as_str().unwrap().to_string(),
                title: r["title"].as_str().unwrap_or("").to_string(),
                archived: r["archived"].as_bool().unwrap_or(false),
                project: r["project_id"].as_str().unwrap_or("default").to_string(),
                updated_at: (r["updated_at"].as_f64().unwrap_or(0.0) * 1000.0).round() as i64,
                preview: self
                    .run(env, "latest_user_text", json!({"id": r["id"]}))
                    .as_str()
                    .map(|t| t.chars().take(77).collect())
                    .unwrap_or_default(),
            })
            .collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// The node ids of the branch the Python store shows (root to head).
    fn branch(&self, env: &TestEnv, id: &str) -> Vec<String> {
        self.run(env, "branch", json!({"id": id}))
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    fn contents(&self, env: &TestEnv, id: &str) -> Vec<String> {
        self.run(env, "messages", json!({"id": id}))
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// One listed session as both sides must agree on it: title, archived
/// flag, project, `updated_at` (to the millisecond) and the latest user
/// text (the preview).
#[derive(Debug, PartialEq)]
struct Listed {
    id: String,
    title: String,
    archived: bool,
    project: String,
    updated_at: i64,
    preview: String,
}

/// What `git-session list --json` shows, sorted by id.
fn ours(env: &TestEnv) -> Vec<Listed> {
    let mut v: Vec<Listed> = env
        .ok(&["--json", "list", "--include-archived"])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["data"].clone())
        .map(|r| Listed {
            id: r["id"].as_str().unwrap().to_string(),
            title: r["title"].as_str().unwrap_or("").to_string(),
            archived: r["archived"].as_bool().unwrap_or(false),
            project: r["project_id"].as_str().unwrap_or("default").to_string(),
            updated_at: (r["updated_at"].as_f64().unwrap_or(0.0) * 1000.0).round() as i64,
            preview: r["preview"]
                .as_str()
                .unwrap_or("")
                .trim_end_matches('…')
                .chars()
                .take(77)
                .collect(),
        })
        .collect();
    v.sort_by(|a, b| a.id.cmp(&b.id));
    v
}

/// The node ids of the branch `git-session show` shows (root to head).
fn our_branch(env: &TestEnv, id: &str) -> Vec<String> {
    env.ok(&["--json", "show", id])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "node")
        .map(|r| r["data"]["node"].clone())
        .filter(|n| n["role"] == "user" || n["role"] == "llm")
        // As stored: the Python store's nodes say `called_by`.
        .filter(|n| {
            let caller = n.get("caller").or_else(|| n.get("called_by"));
            caller.is_none_or(|c| c == "" || c == "ROOT")
        })
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect()
}

fn clean(env: &TestEnv) {
    let out = env.run(&["verify", "--all"]);
    assert!(
        out.status.success(),
        "verify --all:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The state-dir setting for installations where the Python store writes too.
fn python_naming(env: &TestEnv) {
    std::fs::create_dir_all(env.state()).unwrap();
    std::fs::write(
        env.state().join("git-session.json"),
        r#"{"node_names": "python"}"#,
    )
    .unwrap();
}

#[test]
fn what_git_session_writes_the_python_store_reads_and_continues() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    env.ok(&["init", "s1"]);
    env.turn("s1", "first question", &["read"]);
    env.turn("s1", "second question", &[]);
    env.ok(&["update", "s1", "--title", "Renamed"]);
    assert_eq!(py.listed(&env), ours(&env));
    assert_eq!(py.listed(&env)[0].title, "Renamed");
    assert_eq!(
        py.contents(&env, "s1"),
        vec![
            "first question",
            "re: first question",
            "ok",
            "second question",
            "re: second question"
        ]
    );
    assert_eq!(
        py.run(&env, "latest_user_text", json!({"id": "s1"})),
        "second question"
    );
    // The Python store appends a turn and commits it, `git add -A` style.
    let head = env.meta("s1")["head_id"].as_str().unwrap().to_string();
    let sha = py.run(
        &env,
        "turn",
        json!({"id": "s1", "message": "turn: third", "msgs": [
            {"id": "pu3", "role": "user", "content": "third, from python", "parent_id": head},
            {"id": "pa3", "role": "assistant", "content": "python reply", "parent_id": "pu3"},
        ]}),
    );
    assert!(sha.is_string(), "{sha}");
    env.assert_clean("s1");
    // The Python store's own state dir: one naming, the store's.
    assert!(env.history_files("s1").iter().all(|f| f[4..5] == *"-"));
    env.ok(&["verify", "s1"]);
    let show = env.ok(&["show", "s1"]);
    assert!(
        show.contains("third, from python") && show.contains("python reply"),
        "{show}"
    );
}

#[test]
fn with_the_python_naming_setting_both_writers_keep_one_order() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    python_naming(&env);
    env.ok(&["init", "s1"]);
    for n in 1..=6 {
        env.turn("s1", &format!("q{n}"), &[]);
    }
    assert!(env.history_files("s1")[0].starts_with("0001-u-"));
    py.run(
        &env,
        "append",
        json!({"id": "s1", "msg": {"id": "pu", "role": "user", "content": "q7"}}),
    );
    py.run(&env, "commit", json!({"id": "s1"}));
    env.turn("s1", "q8", &[]);
    let users: Vec<String> = py
        .contents(&env, "s1")
        .into_iter()
        .filter(|c| c.starts_with('q'))
        .collect();
    assert_eq!(users, ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"]);
    assert_eq!(py.run(&env, "latest_user_text", json!({"id": "s1"})), "q8");
    clean(&env);
    env.assert_clean("s1");
}

#[test]
fn a_bound_session_is_found_by_the_python_store_and_not_duplicated() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    python_naming(&env);
    let (_, pid) = env.project("work", &[]);
    env.ok(&["init", "b1", "--project", &pid]);
    env.turn("b1", "bound question", &[]);
    assert_eq!(py.listed(&env), ours(&env));
    assert_eq!(py.contents(&env, "b1")[0], "bound question");
    // Its appends go into the same repository, not a second one.
    py.run(
        &env,
        "append",
        json!({"id": "b1", "msg": {"id": "pu2", "role": "user", "content": "more"}}),
    );
    assert!(!env.state().join("sessions/b1").exists(), "a second repo");
    let sdir = env.state().join("sessions/projects").join(&pid).join("b1");
    assert!(
        std::fs::read_dir(sdir.join("history")).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("pu2"))
    );
    env.ok(&["commit-turn", "b1"]);
    clean(&env);
}

#[test]
fn what_the_python_store_writes_git_session_lists_shows_verifies_and_backfills() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    // Turns, a tool call, a retry, an uncommitted tail, an archived session.
    py.run(&env, "create", json!({"id": "p1", "title": "From Python"}));
    let msg = |id: &str, role: &str, text: &str, parent: Option<&str>| {
        let mut m = json!({"id": id, "role": role, "content": text});
        if let Some(p) = parent {
            m["parent_id"] = p.into();
        }
        json!({"id": "p1", "msg": m})
    };
    let turn = |msgs: Vec<Value>, message: &str| {
        let msgs: Vec<Value> = msgs.into_iter().map(|m| m["msg"].clone()).collect();
        py.run(
            &env,
            "turn",
            json!({"id": "p1", "message": message, "msgs": msgs}),
        );
    };
    turn(
        vec![
            msg("u1", "user", "hello python", None),
            msg("a1", "assistant", "hi", Some("u1")),
            msg("t1", "tool", "tool output", Some("a1")),
        ],
        "turn: hello python",
    );
    turn(
        vec![
            msg("u2", "user", "second", Some("a1")),
            msg("a2", "assistant", "two", Some("u2")),
        ],
        "turn: second",
    );
    // The retry, appended and never committed (as the Python store leaves a tail).
    py.run(
        &env,
        "append",
        msg("u3", "user", "retry of second", Some("a1")),
    );
    py.run(&env, "append", msg("a3", "assistant", "three", Some("u3")));
    // Each node read back with the commit that added it (no trailers: by
    // the trees), the tail with none.
    let provenance = |expect_committed: usize| {
        let recs = crate::read::records(&env.ok(&["--json", "nodes", "p1"]));
        assert_eq!(recs.len(), 7);
        for r in &recs {
            crate::read::committed_where_git_says(&env, "p1", r);
        }
        let committed = recs.iter().filter(|r| !r["data"]["commit"].is_null());
        assert_eq!(committed.count(), expect_committed);
    };
    provenance(5);
    py.run(&env, "create", json!({"id": "p2", "title": "Archived one"}));
    py.run(
        &env,
        "append",
        json!({"id": "p2", "msg": {"id": "x1", "role": "user", "content": "old"}}),
    );
    py.run(&env, "commit", json!({"id": "p2"}));
    py.run(&env, "archive", json!({"id": "p2", "flag": true}));
    // The start-up routine brings the list registry up to date.
    env.ok(&["recover"]);
    assert_eq!(py.listed(&env), ours(&env));
    let archived = env.ok(&["list", "--archived"]);
    assert!(
        archived.contains("p2") && !env.ok(&["list"]).contains("p2"),
        "{archived}"
    );
    // The head's branch, and the retry as a second tip.
    let show = env.ok(&["show", "p1"]);
    assert!(show.contains("second") && show.contains("two"), "{show}");
    let retry = env.ok(&["show", "p1", "--at", "a3"]);
    assert!(
        retry.contains("retry of second") && retry.contains("three"),
        "{retry}"
    );
    assert_eq!(env.ok(&["branch", "p1"]).lines().count(), 2);
    // The uncommitted tail is the only problem, and backfill commits it.
    let out = env.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("uncommitted_node"));
    env.ok(&["backfill", "--all"]);
    clean(&env);
    env.assert_clean("p1");
    provenance(7);
    assert!(
        env.git("p1", &["branch", "--list", "retry-*"])
            .contains("retry-a3"),
        "the retry is a branch"
    );
    // Python reads it back as it was, and its names stayed its own.
    assert_eq!(
        py.contents(&env, "p1"),
        [
            "hello python",
            "hi",
            "tool output",
            "second",
            "two",
            "retry of second",
            "three"
        ]
    );
    assert_eq!(py.branch(&env, "p1"), our_branch(&env, "p1"));
    assert!(
        env.history_files("p1")
            .iter()
            .all(|f| f.len() > 4 && &f[4..5] == "-")
    );
}

/// The index row of `id` as `index.json` holds it, read as a file (as the
/// Python store reads it: no journal).
fn index_row(env: &TestEnv, id: &str) -> Value {
    let index: Value =
        serde_json::from_slice(&std::fs::read(env.state().join("sessions/index.json")).unwrap())
            .unwrap();
    index[id].clone()
}

/// After each step of two writers on `s1`: the Python store reads the
/// messages in order (`expect`), its latest user text and the preview it
/// would rebuild a row with name the last user message, every node file
/// has the Python store's naming, `index.json` as a file agrees with
/// meta.json and `list`, and `verify --all` and `git fsck --strict` are
/// clean. `ours`: the step was git-session's (the released store does not
/// write `index.json`: after its steps `recover` brings the row up to
/// date, as at a start-up). Then the Python store merges metadata into
/// node `merge` as its turn's finalize does, which rewrites the file in
/// place (no second file for the node), and commits.
fn every_reader_agrees(py: &Py, env: &TestEnv, expect: &[String], merge: &str, ours: bool) {
    assert_eq!(py.contents(env, "s1"), expect);
    let last_user = expect
        .iter()
        .rev()
        .find(|t| t.starts_with("rust ") || t.starts_with("python "))
        .unwrap();
    assert_eq!(
        py.run(env, "latest_user_text", json!({"id": "s1"})),
        **last_user
    );
    assert_eq!(
        py.run(env, "rebuilt_preview", json!({"id": "s1"})),
        **last_user
    );
    assert!(
        env.history_files("s1")
            .iter()
            .all(|f| f.len() > 5 && f[..4].bytes().all(|b| b.is_ascii_digit()) && &f[4..5] == "-"),
        "{:?}",
        env.history_files("s1")
    );
    if !ours {
        env.ok(&["recover"]);
    }
    let meta = env.meta("s1");
    let row = index_row(env, "s1");
    assert_eq!(row["updated_at"], meta["updated_at"]);
    assert_eq!(row["title"], meta["title"]);
    assert_eq!(row["preview"], **last_user);
    let listed: Value =
        serde_json::from_str(env.ok(&["--json", "list"]).lines().next().unwrap()).unwrap();
    assert_eq!(listed["data"]["updated_at"], meta["updated_at"]);
    assert_eq!(listed["data"]["title"], meta["title"]);
    clean(env);
    env.assert_clean("s1");
    let files = py.run(
        env,
        "merge_node_metadata",
        json!({"id": "s1", "node": merge, "metadata": {"project_commit": "abc"}}),
    );
    assert_eq!(files.as_array().unwrap().len(), 1, "{files}");
    py.run(
        env,
        "commit",
        json!({"id": "s1", "message": "turn: finalize"}),
    );
    env.ok(&["recover"]);
    clean(env);
    env.assert_clean("s1");
}

/// Two git-session turns, a Python turn, a git-session turn, three times
/// over, in the Python store's own state dir, from a session `first` made.
fn three_rounds(python_first: bool) {
    let mut env = TestEnv::new();
    // Both writers on the wall clock, as they are in use.
    env.now = None;
    let Some(py) = Py::new(&env) else { return };
    let mut expect = Vec::new();
    let mut last: Option<String> = None;
    if python_first {
        py.run(&env, "create", json!({"id": "s1", "title": "Shared"}));
        expect.extend(python_turn(&py, &env, 0, None));
        last = Some("pa0".into());
        env.ok(&["recover"]);
    } else {
        env.ok(&["init", "s1"]);
    }
    for round in 1..=3 {
        for k in 0..2 {
            let text = format!("rust {round}.{k}");
            let (a, _) = env.turn("s1", &text, &["read"]);
            expect.extend([text.clone(), format!("re: {text}"), "ok".into()]);
            last = Some(a);
        }
        let merged = last.clone().unwrap();
        every_reader_agrees(&py, &env, &expect, &merged, true);
        expect.extend(python_turn(&py, &env, round, last.as_deref()));
        every_reader_agrees(&py, &env, &expect, &format!("pa{round}"), false);
        let text = format!("rust {round}.2");
        let (a, _) = env.turn("s1", &text, &[]);
        expect.extend([text.clone(), format!("re: {text}")]);
        every_reader_agrees(&py, &env, &expect, &a, true);
        last = Some(a);
    }
    // The released store walks a branch by its own keys (`called_by`,
    // `metadata.parent_id`), which git-session writes in sessions that
    // store started; in one git-session started it sees the messages (in
    // order, above) but no chain.
    if python_first {
        assert_eq!(py.branch(&env, "s1"), our_branch(&env, "s1"));
    }
}

#[test]
fn both_writers_continue_a_git_session_made_session_in_one_order() {
    three_rounds(false);
}

#[test]
fn both_writers_continue_a_python_made_session_in_one_order() {
    three_rounds(true);
}

/// One turn of the Python store on `s1`: the user message `python
/// <round>` (a child of `last`, when given) and the reply `ok`; returns
/// their texts.
fn python_turn(py: &Py, env: &TestEnv, round: usize, last: Option<&str>) -> [String; 2] {
    let (u, a) = (format!("pu{round}"), format!("pa{round}"));
    let mut m = json!({"id": u, "role": "user", "content": format!("python {round}")});
    if let Some(p) = last {
        m["parent_id"] = p.into();
    }
    py.run(
        env,
        "turn",
        json!({"id": "s1", "message": format!("turn: python {round}"), "msgs": [
            m, {"id": a, "role": "assistant", "content": "ok", "parent_id": u},
        ]}),
    );
    [format!("python {round}"), "ok".to_string()]
}

/// Both writers read `s1` as `expect` says, on the same branch, both list
/// the same sessions, and the session is clean (`verify`, `git status`,
/// `git fsck`).
fn both_read(py: &Py, env: &TestEnv, expect: &[String]) {
    assert_eq!(py.contents(env, "s1"), expect);
    assert_eq!(py.branch(env, "s1"), our_branch(env, "s1"));
    env.ok(&["recover"]);
    assert_eq!(py.listed(env), ours(env));
    clean(env);
    env.assert_clean("s1");
}

#[test]
fn writers_alternating_on_one_session_lose_nothing() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    py.run(&env, "create", json!({"id": "s1", "title": "Shared"}));
    let mut expect = Vec::new();
    let mut last: Option<String> = None;
    for round in 0..3 {
        expect.extend(python_turn(&py, &env, round, last.as_deref()));
        let (ga, _) = env.turn("s1", &format!("rust {round}"), &[]);
        expect.extend([format!("rust {round}"), format!("re: rust {round}")]);
        last = Some(ga);
    }
    both_read(&py, &env, &expect);
}

/// The same with git-session's turns sent to one `batch` process that
/// lives across the Python store's writes: what it keeps between requests
/// (the catalog, the index its last commit wrote) is never used once the
/// other writer has changed the session.
#[test]
fn a_batch_process_and_the_python_store_alternating_lose_nothing() {
    use crate::batch::{ask, req, spawn_batch};
    use std::io::BufReader;
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    py.run(&env, "create", json!({"id": "s1", "title": "Shared"}));
    let mut child = spawn_batch(&env);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut ask_ok = |argv: &[&str]| {
        let (recs, code) = ask(&mut stdin, &mut out, &req(argv));
        assert_eq!(code, 0, "{argv:?}: {recs:?}");
        recs
    };
    let mut expect = Vec::new();
    let mut last: Option<String> = None;
    for round in 0..4 {
        expect.extend(python_turn(&py, &env, round, last.as_deref()));
        // Two turns from the batch process, one after the other: the second
        // uses what the first kept.
        for k in 0..2 {
            let text = format!("rust {round}.{k}");
            ask_ok(&["append", "s1", "--text", &text]);
            let reply = format!("re: {text}");
            let recs = ask_ok(&[
                "append",
                "s1",
                "--role",
                "assistant",
                "--name",
                "m1",
                "--text",
                &reply,
            ]);
            last = recs[0]["data"]["id"].as_str().map(str::to_string);
            let recs = ask_ok(&["commit-turn", "s1"]);
            assert_eq!(recs[0]["type"], "turn_committed", "{recs:?}");
            expect.extend([text, reply]);
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    both_read(&py, &env, &expect);
}

#[test]
fn migrate_leaves_every_session_where_the_python_store_finds_it() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    // Default sessions, and a Python-bound session inside a project.
    py.run(&env, "create", json!({"id": "d1", "title": "Default"}));
    py.run(&env, "append", json!({"id": "d1", "msg": {"id": "u1", "role": "user", "content": "in the default project"}}));
    py.run(&env, "commit", json!({"id": "d1"}));
    let work = env.tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    py.run(
        &env,
        "create",
        json!({"id": "b1", "title": "Bound", "fields": {"project_path": work.to_str().unwrap()}}),
    );
    py.run(
        &env,
        "append",
        json!({"id": "b1", "msg": {"id": "u1", "role": "user", "content": "in the project"}}),
    );
    py.run(&env, "commit", json!({"id": "b1"}));
    let before = py.listed(&env);
    assert_eq!(before.len(), 2, "{before:?}");
    // The project moves: relocated here under the Python store's own id.
    let moved = env.tmp.path().join("work-moved");
    std::fs::rename(&work, &moved).unwrap();
    let projects: Value =
        serde_json::from_slice(&std::fs::read(env.state().join("projects/projects.json")).unwrap())
            .unwrap();
    let pid = projects
        .as_object()
        .unwrap()
        .keys()
        .find(|k| k.starts_with("proj_"))
        .unwrap()
        .clone();
    env.ok(&["relocate", &pid, moved.to_str().unwrap()]);
    // (The relocation record is activity: `updated_at` moves.)
    let before = py.listed(&env);
    assert_eq!(before.len(), 2, "after relocate: {before:?}");
    env.ok(&["migrate"]);
    env.ok(&["migrate", "--prune-sources"]);
    assert!(
        std::fs::read_dir(moved.join(".openprogram/sessions"))
            .map_or(true, |mut d| d.next().is_none()),
        "the source was pruned"
    );
    assert_eq!(py.listed(&env), before, "the Python store lost a session");
    assert_eq!(py.contents(&env, "d1"), ["in the default project"]);
    assert_eq!(py.contents(&env, "b1")[0], "in the project");
    assert!(
        env.state().join("sessions/d1").is_dir(),
        "a default session stays home"
    );
    env.ok(&["recover"]);
    assert_eq!(py.listed(&env), ours(&env));
    clean(&env);
}

/// The Python registry gives the default project `path = $HOME`, so the
/// state dir's own `sessions/` looks like a project's legacy folder: it is
/// never one.
#[test]
fn migrate_never_takes_the_default_project_for_a_legacy_source() {
    let env = TestEnv::new();
    let home = env.tmp.path().join("home");
    // The state dir at its default place, as the Python store has it.
    std::fs::create_dir_all(env.state()).unwrap();
    std::os::unix::fs::symlink(env.state(), home.join(".openprogram")).unwrap();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    std::fs::create_dir_all(env.state().join("projects")).unwrap();
    std::fs::write(
        env.state().join("projects/projects.json"),
        format!(
            r#"{{"default": {{"id": "default", "name": "default", "path": "{}", "is_default": true, "session_ids": ["s1"], "status": "active", "created_at": 1.0}}}}"#,
            home.display()
        ),
    )
    .unwrap();
    let before = crate::env::tree_bytes(&env.session_dir("s1"));
    let out = env.ok(&["migrate"]);
    assert!(!out.contains("s1"), "{out}");
    env.ok(&["migrate", "--prune-sources"]);
    assert!(!env.state().join("sessions/projects/default").exists());
    assert_eq!(crate::env::tree_bytes(&env.session_dir("s1")), before);
    clean(&env);
}

/// A row another writer (the Python store of the reference) puts into
/// index.json after a line of our journal wins over that line.
#[test]
fn a_journal_line_never_overrides_a_row_written_after_it() {
    let env = TestEnv::new();
    env.ok(&["init", "s1", "--title", "Ours"]);
    env.append("s1", &["--text", "appended"]); // a journal line
    std::thread::sleep(std::time::Duration::from_millis(20));
    let path = env.state().join("sessions/index.json");
    let mut idx: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    idx["s1"]["title"] = "Theirs, later".into();
    std::fs::write(&path, serde_json::to_vec(&idx).unwrap()).unwrap();
    assert_eq!(ours(&env)[0].title, "Theirs, later");
    // Our next change is newer than their row, and folded into index.json.
    env.ok(&["update", "s1", "--title", "Ours again"]);
    let idx: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(idx["s1"]["title"], "Ours again");
    assert!(idx["s1"].get("_journaled_at").is_none());
}

/// A bound session recorded nowhere (made by an older version): `verify`
/// says the Python store cannot find it, and `--fix` records it.
#[test]
fn a_bound_session_without_a_location_is_found_and_recorded() {
    let env = TestEnv::new();
    let (_, pid) = env.project("work", &[]);
    env.ok(&["init", "b1", "--project", &pid]);
    env.turn("b1", "q", &[]);
    let locs = env.state().join("sessions/locations.json");
    let recorded: Value = serde_json::from_slice(&std::fs::read(&locs).unwrap()).unwrap();
    let dir = env.state().join("sessions/projects").join(&pid).join("b1");
    assert_eq!(recorded["b1"], dir.to_string_lossy().as_ref());
    std::fs::write(&locs, "{}").unwrap();
    let out = env.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("location_missing"));
    env.ok(&["verify", "--all", "--fix"]);
    clean(&env);
    let recorded: Value = serde_json::from_slice(&std::fs::read(&locs).unwrap()).unwrap();
    assert_eq!(recorded["b1"], dir.to_string_lossy().as_ref());
    // delete forgets it.
    env.ok(&["delete", "b1", "--yes"]);
    let recorded: Value = serde_json::from_slice(&std::fs::read(&locs).unwrap()).unwrap();
    assert!(recorded.get("b1").is_none());
}

/// A state dir copied whole (a backup restored, a new home): its
/// locations.json still names the original's session directories, so the
/// Python store would read those. `verify` says so, and `--fix` points the
/// entry at the copy the Python store must read.
#[test]
fn a_copied_state_dir_is_pointed_at_its_own_sessions() {
    let original = TestEnv::new();
    let (_, pid) = original.project("work", &[]);
    original.ok(&["init", "b1", "--project", &pid]);
    original.turn("b1", "asked in the original", &[]);
    let copy = TestEnv::new();
    copy.copy_state_from(&original);
    copy.turn("b1", "asked in the copy", &[]);
    let theirs = original
        .state()
        .join("sessions/projects")
        .join(&pid)
        .join("b1");
    let ours = copy.state().join("sessions/projects").join(&pid).join("b1");
    let out = copy.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("location_missing"), "{said}");
    assert!(
        said.contains(&format!("points it at `{}`", theirs.display())),
        "{said}"
    );
    let fixed = copy.ok(&["--json", "verify", "--all", "--fix"]);
    let summary: Value = serde_json::from_str(fixed.lines().last().unwrap()).unwrap();
    assert_eq!(summary["data"]["state_repairs"], 1, "{fixed}");
    clean(&copy);
    let locs = copy.state().join("sessions/locations.json");
    let recorded: Value = serde_json::from_slice(&std::fs::read(&locs).unwrap()).unwrap();
    assert_eq!(recorded["b1"], ours.to_string_lossy().as_ref());
    // The original is as it was.
    clean(&original);
    assert_eq!(
        std::fs::read_dir(theirs.join("history")).unwrap().count(),
        2
    );
    let Some(py) = Py::new(&copy) else { return };
    let contents = py.contents(&copy, "b1");
    assert!(
        contents.iter().any(|c| c == "asked in the copy"),
        "{contents:?}"
    );
}

/// A session `import claude-code` made is one the Python store lists and
/// reads like its own.
#[test]
fn an_imported_claude_code_session_is_read_by_the_python_store() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    let file = crate::import::Transcript::two_turns().write(env.tmp.path(), "");
    env.ok(&["import", "claude-code", "--finish", file.to_str().unwrap()]);
    let session = crate::import::SESSION;
    assert_eq!(py.listed(&env), ours(&env));
    assert_eq!(py.listed(&env)[0].title, "Fix the bug in main.rs");
    let contents = py.contents(&env, session);
    for text in [
        "Fix the bug in main.rs",
        "Let me read it.",
        "fn main() {}",
        "Done.",
    ] {
        assert!(contents.iter().any(|c| c == text), "{text}: {contents:?}");
    }
    assert_eq!(
        py.branch(&env, session).last().map(String::as_str),
        Some("a-msg_4")
    );
}

#[test]
fn an_imported_codex_session_is_read_by_the_python_store() {
    let env = TestEnv::new();
    let Some(py) = Py::new(&env) else { return };
    let file = crate::import_codex::Rollout::two_turns().write(env.tmp.path(), "");
    env.ok(&["import", "codex", "--finish", file.to_str().unwrap()]);
    let session = crate::import_codex::SESSION;
    assert_eq!(py.listed(&env), ours(&env));
    assert_eq!(py.listed(&env)[0].title, "Fix the failing test");
    let contents = py.contents(&env, session);
    for text in [
        "Fix the failing test",
        "Fixed it.",
        "fn main() {}",
        "Clippy is clean.",
    ] {
        assert!(contents.iter().any(|c| c == text), "{text}: {contents:?}");
    }
    assert_eq!(
        py.branch(&env, session).last().map(String::as_str),
        Some("a-turn-2")
    );
}

#[test]
fn a_cloned_session_is_where_the_python_store_finds_it() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let Some(py) = Py::new(&b) else { return };
    // Where the Python store writes, sessions are named its way (git-session-guide(7)).
    python_naming(&a);
    python_naming(&b);
    let remote = a.tmp.path().join("remote.git");
    a.git_ok(
        a.tmp.path(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    let (_, pid) = a.project("work", &[]);
    a.ok(&["init", "c1"]);
    a.turn("c1", "a default session", &[]);
    a.ok(&["init", "c2", "--project", &pid]);
    a.turn("c2", "a bound session", &["read"]);
    let url = format!("file://{}", remote.display());
    a.ok(&["remote", "add", "origin", &url]);
    a.ok(&["push"]);
    b.ok(&["clone", &url]);
    assert_eq!(py.listed(&b), ours(&b));
    assert_eq!(py.contents(&b, "c2")[0], "a bound session");
    // The Python store carries the cloned session on, in the same repository.
    py.run(
        &b,
        "append",
        json!({"id": "c2", "msg": {"id": "pu9", "role": "user", "content": "from python"}}),
    );
    assert!(!b.state().join("sessions/c2").exists(), "a second repo");
    b.ok(&["commit-turn", "c2"]);
    let v = b.run(&["verify", "--all"]);
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    b.ok(&["push"]);
    let fetched = a.ok(&["fetch"]);
    assert!(fetched.contains("fast_forward"), "{fetched}");
    let nodes = a.ok(&["--json", "nodes", "c2"]);
    assert!(
        nodes.contains("from python"),
        "the Python store's node reached the first machine: {nodes}"
    );
    a.ok(&["verify", "--all"]);
}

/// A session git-session made in the layout's naming and the Python store
/// continued (`0007-u-…` among `000006-a-…`: out of order for that store)
/// is reported, and `verify --fix` renames every node file to the Python
/// naming in one commit that holds the same blobs (`git mv`): every node
/// kept, the Python store's order right, `verify` and `git fsck --strict`
/// clean, and the next turn goes on on the same branch.
#[test]
fn a_mixed_session_is_renamed_to_one_naming_in_one_commit() {
    let env = TestEnv::new();
    // Made before the Python store used the state dir: the layout's names.
    env.ok(&["init", "s1"]);
    env.turn("s1", "rust 1", &["read"]);
    let (a, _) = env.turn("s1", "rust 2", &[]);
    assert!(env.history_files("s1")[0].starts_with("000001-"));
    let Some(py) = Py::new(&env) else { return };
    python_turn(&py, &env, 3, Some(&a));
    env.turn("s1", "rust 4", &[]);
    let out = env.run(&["verify", "s1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("mixed_node_names"));
    let before = env.history_blobs("s1", "HEAD");
    let commits = env.git("s1", &["rev-list", "--count", "HEAD"]);
    env.ok(&["verify", "--fix", "s1"]);
    // One commit, renames only, the same blobs.
    assert_eq!(
        env.git("s1", &["rev-list", "--count", "HEAD"])
            .trim()
            .parse::<u32>()
            .unwrap(),
        commits.trim().parse::<u32>().unwrap() + 1
    );
    let status = env.git("s1", &["diff", "--name-status", "-M100%", "HEAD~1", "HEAD"]);
    assert!(
        status.lines().all(|l| l.starts_with("R100")),
        "renames only: {status}"
    );
    assert_eq!(env.history_blobs("s1", "HEAD"), before);
    let files = env.history_files("s1");
    assert_eq!(files.len(), before.len());
    assert!(files.iter().all(|f| &f[4..5] == "-"), "{files:?}");
    assert_eq!(
        py.contents(&env, "s1"),
        [
            "rust 1",
            "re: rust 1",
            "ok",
            "rust 2",
            "re: rust 2",
            "python 3",
            "ok",
            "rust 4",
            "re: rust 4"
        ]
    );
    clean(&env);
    env.assert_clean("s1");
    // Each node is still found in the commit that first held it.
    let nodes = env.ok(&["--json", "nodes", "s1"]);
    let renamed = env.git("s1", &["rev-parse", "HEAD"]);
    assert!(!nodes.contains(renamed.trim()), "{nodes}");
    // The next turn goes on from the rename, on the same branch, named the
    // Python store's way.
    env.turn("s1", "rust 5", &[]);
    assert_eq!(env.ok(&["branch", "s1"]).lines().count(), 1);
    assert!(env.history_files("s1").iter().all(|f| &f[4..5] == "-"));
    clean(&env);
    env.assert_clean("s1");
}

/// Which naming a new session gets: the Python store's in a state dir that
/// store uses (its own, reached by default or named; one holding a session
/// in its naming; one whose setting says so), the layout's elsewhere; an
/// import names its nodes the same way.
#[test]
fn a_new_session_takes_the_naming_of_the_state_dir() {
    let first_file = |env: &TestEnv, state: &std::path::Path, id: &str| -> String {
        let mut names: Vec<String> =
            std::fs::read_dir(state.join("sessions").join(id).join("history"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
        names.sort();
        let _ = env;
        names.remove(0)
    };
    let run =
        |env: &TestEnv, state: Option<&std::path::Path>, vars: &[(&str, &str)], args: &[&str]| {
            let mut c = std::process::Command::new(crate::env::BIN);
            env.isolate(&mut c);
            for (k, v) in vars {
                c.env(k, v);
            }
            if let Some(s) = state {
                c.arg("--state-dir").arg(s);
            }
            let out = c.args(args).output().unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
    // A state dir of its own: the layout's.
    let env = TestEnv::new();
    env.append("s1", &["--create", "--text", "hi"]);
    assert!(env.history_files("s1")[0].starts_with("000001-u-"));
    // One holding a session in the Python naming: the Python store's.
    std::fs::create_dir_all(env.state().join("sessions/py/history")).unwrap();
    std::fs::write(
        env.state().join("sessions/py/meta.json"),
        r#"{"id": "py", "agent_id": "main", "created_at": 1.0, "updated_at": 1.0}"#,
    )
    .unwrap();
    std::fs::write(
        env.state().join("sessions/py/history/0001-u-pu1.json"),
        r#"{"id": "pu1", "seq": 1, "role": "user", "output": "from python"}"#,
    )
    .unwrap();
    env.append("s2", &["--create", "--text", "hi"]);
    assert!(env.history_files("s2")[0].starts_with("0001-u-"));
    // An existing session keeps its naming.
    env.append("s1", &["--role", "assistant", "--text", "yo"]);
    assert!(env.history_files("s1")[1].starts_with("000002-a-"));
    // The Python store's own: by default, by name, by profile, by
    // $OPENPROGRAM_HOME; an import there too.
    let env = TestEnv::new();
    let home = env.tmp.path().join("home");
    run(
        &env,
        None,
        &[],
        &["append", "d1", "--create", "--text", "hi"],
    );
    assert!(first_file(&env, &home.join(".openprogram"), "d1").starts_with("0001-u-"));
    let work = home.join(".openprogram-work");
    run(
        &env,
        Some(&work),
        &[],
        &["append", "w1", "--create", "--text", "hi"],
    );
    assert!(first_file(&env, &work, "w1").starts_with("0001-u-"));
    let elsewhere = env.tmp.path().join("op-home");
    run(
        &env,
        Some(&elsewhere),
        &[("OPENPROGRAM_HOME", elsewhere.to_str().unwrap())],
        &["append", "e1", "--create", "--text", "hi"],
    );
    assert!(first_file(&env, &elsewhere, "e1").starts_with("0001-u-"));
    let dir = env.tmp.path().join("claude");
    let path = crate::import::Transcript::two_turns().write(&dir, "");
    run(
        &env,
        None,
        &[],
        &["import", "claude-code", "--finish", path.to_str().unwrap()],
    );
    let imported: Vec<String> = std::fs::read_dir(home.join(".openprogram/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("claude-"))
        .collect();
    assert_eq!(imported.len(), 1);
    assert!(first_file(&env, &home.join(".openprogram"), &imported[0]).starts_with("0001-u-"));
    // A plain state dir beside them stays the layout's; a settings file
    // that says nothing this tool reads changes nothing and is a note.
    let plain = env.tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(
        plain.join("git-session.json"),
        r#"{"node_names": "pyhton"}"#,
    )
    .unwrap();
    run(
        &env,
        Some(&plain),
        &[],
        &["append", "p1", "--create", "--text", "hi"],
    );
    assert!(first_file(&env, &plain, "p1").starts_with("000001-u-"));
    let mut c = std::process::Command::new(crate::env::BIN);
    env.isolate(&mut c);
    let out = c
        .arg("--state-dir")
        .arg(&plain)
        .args(["verify", "--all"])
        .output()
        .unwrap();
    // (Exit 1 for the node appended without its commit-turn.)
    assert!(String::from_utf8_lossy(&out.stdout).contains("note: settings_unread"));
}
