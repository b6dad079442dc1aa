//! Sessions written by OpenProgram's Python store (4-digit names, `u/l/c`
//! letters, `turn:` subjects without trailers, uncommitted nodes) are read
//! and continued.

use std::path::Path;

use crate::env::TestEnv;

fn node(dir: &Path, seq: u64, letter: char, id: &str, body: serde_json::Value) {
    let mut v = serde_json::json!({"id": id, "created_at": 1796017556.0 + seq as f64, "seq": seq});
    for (k, val) in body.as_object().unwrap() {
        v[k] = val.clone();
    }
    std::fs::write(
        dir.join(format!("history/{seq:04}-{letter}-{id}.json")),
        serde_json::to_vec(&v).unwrap(),
    )
    .unwrap();
}

/// Built the way the Python store builds a session (reference §3.3, §4).
pub fn python_session(env: &TestEnv, id: &str) -> std::path::PathBuf {
    let dir = env.session_dir(id);
    std::fs::create_dir_all(dir.join("history")).unwrap();
    std::fs::create_dir_all(dir.join("workdir")).unwrap();
    std::fs::write(dir.join("workdir/.gitkeep"), b"").unwrap();
    env.python_repo(&dir);
    std::fs::write(
        dir.join("meta.json"),
        format!(r#"{{"id": "{id}", "agent_id": "main", "title": "Hello", "source": "web", "created_at": 1796017556.44, "updated_at": 1796017556.5, "project_id": "default", "head_id": "u2_reply"}}"#),
    )
    .unwrap();
    node(
        &dir,
        0,
        'u',
        "ROOT",
        serde_json::json!({"role": "user", "output": "", "metadata": {"display": "root"}}),
    );
    node(
        &dir,
        1,
        'u',
        "u1",
        serde_json::json!({"role": "user", "caller": "ROOT", "predecessor": "ROOT", "output": "hello world"}),
    );
    node(
        &dir,
        2,
        'l',
        "u1_reply",
        serde_json::json!({"role": "llm", "name": "m1", "caller": "", "predecessor": "u1", "output": "hi there"}),
    );
    node(
        &dir,
        3,
        'c',
        "u1_reply_t_x",
        serde_json::json!({"role": "code", "name": "read", "caller": "u1_reply", "predecessor": null, "output": "file"}),
    );
    env.git_ok(&dir, &["add", "-A"]);
    env.git_ok(&dir, &["commit", "-m", "turn: hello world", "--quiet"]);
    // Uncommitted: the second turn.
    node(
        &dir,
        4,
        'u',
        "u2",
        serde_json::json!({"role": "user", "caller": "ROOT", "predecessor": "u1_reply", "output": "second question"}),
    );
    node(
        &dir,
        5,
        'l',
        "u2_reply",
        serde_json::json!({"role": "llm", "name": "m1", "caller": "", "predecessor": "u2", "output": "second answer"}),
    );
    dir
}

#[test]
fn python_sessions_are_shown_and_continued() {
    let env = TestEnv::new();
    python_session(&env, "py1");
    let show = env.ok(&["show", "py1"]);
    assert!(show.starts_with("# Hello\n"), "{show}");
    assert!(show.contains("── turn 1"));
    assert!(
        show.contains("user: hello world\nassistant (m1): hi there\n  tool: read() → file\n"),
        "{show}"
    );
    assert!(show.contains("── turn 2"));
    assert!(show.contains("user: second question\nassistant (m1): second answer"));
    assert!(
        !show.contains("user: \n"),
        "the ROOT marker node is not shown: {show}"
    );
    let log = env.ok(&["log", "py1"]);
    assert!(
        log.lines()
            .next()
            .unwrap()
            .ends_with("turn: hello world (HEAD -> main)"),
        "{log}"
    );
    // The uncommitted turn is committed with our format; its number comes from the DAG.
    env.ok(&["commit-turn", "py1"]);
    env.assert_clean("py1");
    let msg = env.git("py1", &["log", "-1", "--format=%B"]);
    assert!(msg.starts_with("turn 2: second question\n"), "{msg}");
    assert!(msg.contains("Nodes: 4..5"));
    assert_eq!(
        env.git("py1", &["log", "--format=%s"]),
        "turn 2: second question\nturn: hello world\nsession init\n"
    );
    // The session keeps the Python store's naming, which that store sorts
    // by and rebuilds from a seq: new nodes get 4-digit names too.
    let id = env.append("py1", &["--text", "third"]);
    assert!(
        env.history_files("py1")
            .contains(&format!("0006-u-{id}.json"))
    );
    assert!(
        env.history_files("py1")
            .contains(&"0001-u-u1.json".to_string())
    );
    env.ok(&["commit-turn", "py1"]);
    assert!(
        env.git("py1", &["log", "-1", "--format=%s"])
            .starts_with("turn 3: third")
    );
    env.assert_clean("py1");
}

#[test]
fn seq_order_is_numeric_past_9999() {
    let env = TestEnv::new();
    env.ok(&["init", "big"]);
    let dir = env.session_dir("big");
    std::fs::create_dir_all(dir.join("history")).unwrap();
    node(
        &dir,
        9999,
        'u',
        "q",
        serde_json::json!({"role": "user", "caller": "", "predecessor": "ROOT", "output": "question 9999"}),
    );
    node(
        &dir,
        10000,
        'l',
        "r",
        serde_json::json!({"role": "llm", "caller": "", "predecessor": "q", "output": "reply 10000"}),
    );
    node(
        &dir,
        10001,
        'u',
        "q2",
        serde_json::json!({"role": "user", "caller": "", "predecessor": "r", "output": "question 10001"}),
    );
    let mut meta = env.meta("big");
    meta["head_id"] = "q2".into();
    std::fs::write(dir.join("meta.json"), serde_json::to_vec(&meta).unwrap()).unwrap();
    let show = env.ok(&["show", "big"]);
    let (a, b, c) = (
        show.find("question 9999").unwrap(),
        show.find("reply 10000").unwrap(),
        show.find("question 10001").unwrap(),
    );
    assert!(a < b && b < c, "{show}");
    // The next node continues after the highest seq.
    let id = env.append("big", &["--role", "assistant", "--text", "x"]);
    assert!(
        env.history_files("big")
            .contains(&format!("10002-l-{id}.json"))
    );
    env.ok(&["commit-turn", "big"]);
    env.assert_clean("big");
    let subjects = env.git("big", &["log", "--format=%s"]);
    assert_eq!(
        subjects,
        "turn 2: question 10001\nturn 1: question 9999\nsession init\n"
    );
}
