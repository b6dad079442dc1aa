//! A turn's record is what the agent did: a reply, a tool call and another
//! reply are one chain and one commit; the commit message names the turn's
//! answer, its tools and its tokens; `show` prints the whole turn; and one
//! conversation fed through one-shot `append`s, `batch` and `import
//! claude-code` is one DAG.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::env::TestEnv;
use crate::import::Transcript;

/// The README's harness recipe for one turn: a reply, a tool call, another
/// reply. Returns the ids (user, first reply, tool, last reply).
fn recipe(env: &TestEnv, s: &str) -> [String; 4] {
    let u = env.append(s, &["--create", "--text", "Fix the bug", "--source", "cli"]);
    let a1 = env.append(
        s,
        &[
            "--role",
            "assistant",
            "--name",
            "m",
            "--text",
            "Let me look.",
        ],
    );
    let t = env.append(
        s,
        &[
            "--role",
            "tool",
            "--name",
            "read",
            "--input",
            r#"{"path": "a.rs"}"#,
            "--text",
            "fn main() {}",
        ],
    );
    let a2 = env.append(
        s,
        &["--role", "assistant", "--name", "m", "--text", "Fixed it."],
    );
    [u, a1, t, a2]
}

/// A node file of session `s` by node id.
fn node_by_id(env: &TestEnv, s: &str, id: &str) -> Value {
    let file = env
        .history_files(s)
        .into_iter()
        .find(|f| f.ends_with(&format!("-{id}.json")))
        .unwrap_or_else(|| panic!("no node {id}"));
    crate::import::node(env, s, &file)
}

fn branches(env: &TestEnv, s: &str) -> Vec<String> {
    env.git(
        s,
        &["for-each-ref", "--format=%(refname:short)", "refs/heads"],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

/// `show` with the turn headers' local times taken out.
fn shown(env: &TestEnv, args: &[&str]) -> String {
    env.ok(args)
        .lines()
        .map(|l| match l.split_once(" · ") {
            Some((head, _)) if l.starts_with("── turn") => head.to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The recipe records one turn, one commit, on `main`: the second reply
/// continues the first (the tool hangs off the first by its caller), no
/// retry branch, and `show` lists the tool call between the two replies.
#[test]
fn the_readme_recipe_is_one_turn_one_commit_on_main() {
    let env = TestEnv::new();
    let [u, a1, t, a2] = recipe(&env, "s1");
    env.ok(&["commit-turn", "s1", "--duration", "3"]);
    assert_eq!(node_by_id(&env, "s1", &a1)["predecessor"], u.as_str());
    assert_eq!(node_by_id(&env, "s1", &t)["caller"], a1.as_str());
    assert_eq!(node_by_id(&env, "s1", &t)["predecessor"], Value::Null);
    assert_eq!(node_by_id(&env, "s1", &a2)["predecessor"], a1.as_str());
    assert_eq!(env.meta("s1")["head_id"], a2.as_str());
    assert_eq!(branches(&env, "s1"), ["main"]);
    assert_eq!(
        gitt(&env, "s1", &["log", "--format=%s", "main"]),
        "turn 1: Fix the bug\nsession init"
    );
    assert_eq!(
        gitt(&env, "s1", &["log", "-1", "--format=%B", "main"]),
        "turn 1: Fix the bug\n\nassistant: Fixed it.\ntools: read\n\n\
         [meta: turn took 3.0s, 1 tool]\n\nSession: s1\nTurn: 1\nNodes: 1..4"
    );
    assert_eq!(
        shown(&env, &["show", "s1"]),
        "# Fix the bug\n\n── turn 1\nuser: Fix the bug\nassistant (m): Let me look.\n  \
         tool: read({\"path\":\"a.rs\"}) → fn main() {}\nassistant (m): Fixed it."
    );
    // The next turn goes on from the last reply, on main.
    env.append("s1", &["--text", "Thanks"]);
    env.append("s1", &["--role", "assistant", "--text", "You're welcome."]);
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(branches(&env, "s1"), ["main"]);
    assert_eq!(
        gitt(&env, "s1", &["log", "--format=%s", "main"]),
        "turn 2: Thanks\nturn 1: Fix the bug\nsession init"
    );
    env.assert_clean("s1");
    env.ok(&["verify", "s1"]);
}

/// `--regenerate` answers the turn's user message again: a sibling of the
/// turn's first reply, committed as the turn regenerated on a retry branch
/// of its own, whose parent is the parent of the turn it regenerates.
#[test]
fn regenerate_forks_the_turn_onto_a_retry_branch() {
    let env = TestEnv::new();
    let [u, ..] = recipe(&env, "s1");
    env.ok(&["commit-turn", "s1"]);
    let turn1 = gitt(&env, "s1", &["rev-parse", "main"]);
    let again = env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--regenerate",
            "--text",
            "Another way.",
        ],
    );
    assert_eq!(node_by_id(&env, "s1", &again)["predecessor"], u.as_str());
    env.ok(&["commit-turn", "s1"]);
    let retry = format!("retry-{again}");
    assert_eq!(branches(&env, "s1"), ["main", retry.as_str()]);
    assert_eq!(
        gitt(&env, "s1", &["rev-parse", "main"]),
        turn1,
        "main stays"
    );
    assert_eq!(
        gitt(&env, "s1", &["log", "--format=%s", &retry]),
        "turn 1 (regenerated): Fix the bug\nsession init"
    );
    assert_eq!(
        gitt(&env, "s1", &["symbolic-ref", "--short", "HEAD"]),
        retry.as_str()
    );
    env.assert_clean("s1");
    env.ok(&["verify", "s1"]);
    // Regenerating is for a reply, and needs a turn to answer.
    let err = env.fails(&["append", "s1", "--regenerate", "--text", "x"], 2);
    assert!(err.contains("usage::regenerate"), "{err}");
    env.ok(&["init", "empty"]);
    let err = env.fails(
        &[
            "append",
            "empty",
            "--role",
            "assistant",
            "--regenerate",
            "--text",
            "x",
        ],
        1,
    );
    assert!(err.contains("append::nothing_to_regenerate"), "{err}");
    let err = env.fails(
        &[
            "append",
            "s1",
            "--role",
            "assistant",
            "--regenerate",
            "--predecessor",
            &u,
        ],
        2,
    );
    assert!(err.contains("cannot be used with"), "{err}");
    // Nor with a predecessor a JSON node names.
    let out = run_json_node(
        &env,
        &["s1", "--regenerate"],
        json!({"role": "assistant", "predecessor": u, "output": "x"}),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage::regenerate"));
}

/// A reply after a checkout goes on from the turn checked out: where the
/// conversation already went on from there, on a branch of its own whose
/// parent is that turn's commit; where it did not (the tip of another
/// branch), as more of that turn on its branch. Every `Turn:` trailer is
/// the turn the DAG says, and verify is clean.
#[test]
fn a_reply_after_a_checkout_goes_on_from_the_turn_checked_out() {
    let env = TestEnv::new();
    env.append("s1", &["--create", "--text", "one"]);
    env.append("s1", &["--role", "assistant", "--text", "re: one"]);
    env.ok(&["commit-turn", "s1"]);
    let turn1 = gitt(&env, "s1", &["rev-parse", "main"]);
    env.turn("s1", "two", &[]);
    env.turn("s1", "three", &["read"]);
    let turn3 = gitt(&env, "s1", &["rev-parse", "main"]);
    env.ok(&["checkout", "s1", "1"]);
    let more = env.append("s1", &["--role", "assistant", "--text", "More on one."]);
    env.ok(&["commit-turn", "s1"]);
    let fork = format!("retry-{more}");
    assert_eq!(branches(&env, "s1"), ["main", fork.as_str()]);
    assert_eq!(
        gitt(&env, "s1", &["rev-parse", "main"]),
        turn3,
        "main stays"
    );
    assert_eq!(gitt(&env, "s1", &["rev-parse", &format!("{fork}^")]), turn1);
    assert_eq!(
        gitt(&env, "s1", &["log", "-1", "--format=%B", &fork]),
        format!(
            "turn 1 (continued): 1 more node\n\nassistant: More on one.\n\nSession: s1\nTurn: 1\nNodes: 8..8"
        )
    );
    // Back to main's tip: a reply there is more of turn 3, on main.
    env.ok(&["checkout", "s1", "main"]);
    env.append("s1", &["--role", "assistant", "--text", "And on three."]);
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(gitt(&env, "s1", &["rev-parse", "main^"]), turn3);
    assert_eq!(
        gitt(
            &env,
            "s1",
            &[
                "log",
                "-1",
                "--format=%s%n%(trailers:key=Turn,valueonly)",
                "main"
            ]
        ),
        "turn 3 (continued): 1 more node\n3"
    );
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

/// A user message that retries from a reply inside a turn (the first reply
/// of a tool loop) forks: the new turn is on a retry branch, `main` keeps
/// the turn as it went on.
#[test]
fn a_retry_from_inside_a_turn_forks() {
    let env = TestEnv::new();
    let [_, a1, ..] = recipe(&env, "s1");
    env.ok(&["commit-turn", "s1"]);
    let turn1 = gitt(&env, "s1", &["rev-parse", "main"]);
    env.append("s1", &["--text", "No, read lib.rs", "--predecessor", &a1]);
    let r = env.append("s1", &["--role", "assistant", "--text", "Reading lib.rs."]);
    env.ok(&["commit-turn", "s1"]);
    let retry = format!("retry-{r}");
    assert_eq!(branches(&env, "s1"), ["main", retry.as_str()]);
    assert_eq!(
        gitt(&env, "s1", &["rev-parse", "main"]),
        turn1,
        "main stays"
    );
    assert_eq!(
        gitt(&env, "s1", &["log", "--format=%s", &retry]),
        "turn 2: No, read lib.rs\nturn 1: Fix the bug\nsession init"
    );
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

/// `branch` names, for each tip, the branches that end there: a fork from
/// inside a turn ends on its retry branch, the turn as it went on ends on
/// `main`; a turn another writer committed without trailers (the Python
/// store's `git add -A && git commit`) ends on the branch it committed.
#[test]
fn branch_names_the_branches_that_end_at_each_tip() {
    let env = TestEnv::new();
    let [_, a1, _, a2] = recipe(&env, "s1");
    env.ok(&["commit-turn", "s1"]);
    let alt = env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--predecessor",
            &a1,
            "--text",
            "Another way.",
        ],
    );
    env.ok(&["commit-turn", "s1"]);
    let rows = |env: &TestEnv| -> Vec<(String, Vec<String>)> {
        let mut v: Vec<(String, Vec<String>)> = env
            .ok(&["--json", "branch", "s1"])
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| {
                let d = &r["data"];
                let names = d["branches"].as_array().unwrap();
                (
                    d["tip"].as_str().unwrap().to_string(),
                    names
                        .iter()
                        .map(|b| b.as_str().unwrap().to_string())
                        .collect(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let mut want = vec![
        (a2.clone(), vec!["main".to_string()]),
        (alt.clone(), vec![format!("retry-{alt}")]),
    ];
    want.sort();
    assert_eq!(rows(&env), want);
    // Back on main, another writer adds a turn and commits it its way.
    env.ok(&["checkout", "s1", "main"]);
    let dir = env.session_dir("s1");
    for (seq, letter, id, node) in [
        (
            7,
            'u',
            "pyq",
            json!({"role": "user", "caller": "", "predecessor": a2, "output": "py"}),
        ),
        (
            8,
            'a',
            "pya",
            json!({"role": "llm", "caller": "", "predecessor": "pyq", "output": "ok"}),
        ),
    ] {
        let mut node = node;
        node["id"] = id.into();
        node["seq"] = seq.into();
        node["created_at"] = 1_796_017_600.0.into();
        std::fs::write(
            dir.join(format!("history/{seq:06}-{letter}-{id}.json")),
            node.to_string(),
        )
        .unwrap();
    }
    env.git_ok(&dir, &["add", "-A"]);
    env.git_ok(
        &dir,
        &[
            "-c",
            "user.name=py",
            "-c",
            "user.email=py@example.com",
            "commit",
            "-qm",
            "turn: py",
        ],
    );
    let mut want = vec![
        ("pya".to_string(), vec!["main".to_string()]),
        (alt.clone(), vec![format!("retry-{alt}")]),
    ];
    want.sort();
    assert_eq!(rows(&env), want);
}

/// A session whose meta.json names no head although it has messages (the
/// Python store sets none before its first commit; a hand edit) goes on
/// from its latest message: one root, one chain, on main.
#[test]
fn a_session_with_no_head_goes_on_from_its_latest_message() {
    let env = TestEnv::new();
    env.append("s1", &["--create", "--text", "one"]);
    let a1 = env.append("s1", &["--role", "assistant", "--text", "r1"]);
    let meta = env.session_dir("s1").join("meta.json");
    let mut m = env.meta("s1");
    m["head_id"] = Value::Null;
    std::fs::write(&meta, m.to_string()).unwrap();
    let u2 = env.append("s1", &["--text", "two"]);
    assert_eq!(node_by_id(&env, "s1", &u2)["predecessor"], a1.as_str());
    env.append("s1", &["--role", "assistant", "--text", "r2"]);
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(branches(&env, "s1"), ["main"]);
    assert_eq!(
        gitt(&env, "s1", &["log", "--format=%s", "main"]),
        "turn 2: two\nturn 1: one\nsession init"
    );
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

/// A tool call appended before the turn's first reply belongs to the
/// turn's user message (not to the previous turn's reply, and never
/// nowhere), and `show` lists it there.
#[test]
fn a_tool_before_any_reply_belongs_to_the_turns_message() {
    let env = TestEnv::new();
    let u1 = env.append("s1", &["--create", "--text", "one"]);
    let t1 = env.append("s1", &["--role", "tool", "--name", "ls", "--text", "a.rs"]);
    env.append("s1", &["--role", "assistant", "--text", "r1"]);
    env.ok(&["commit-turn", "s1"]);
    let u2 = env.append("s1", &["--text", "two"]);
    let t2 = env.append("s1", &["--role", "tool", "--name", "cat", "--text", "fn"]);
    env.append("s1", &["--role", "assistant", "--text", "r2"]);
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(node_by_id(&env, "s1", &t1)["caller"], u1.as_str());
    assert_eq!(node_by_id(&env, "s1", &t2)["caller"], u2.as_str());
    assert_eq!(
        shown(&env, &["show", "s1"]),
        "# one\n\n── turn 1\nuser: one\n  tool: ls() → a.rs\nassistant: r1\n\n── turn 2\n\
         user: two\n  tool: cat() → fn\nassistant: r2"
    );
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

/// A tool call appended after a checkout belongs to the turn checked out:
/// committed as more of that turn (its commit the parent), on a branch of
/// its own, with the turn number the DAG says; and `show --at` that turn
/// leaves out a record made after it.
#[test]
fn a_tool_after_a_checkout_is_more_of_the_turn_checked_out() {
    let env = TestEnv::new();
    let (app, project) = env.project("app", &[]);
    env.ok(&["init", "s1", "--project", &project]);
    env.append("s1", &["--text", "one"]);
    let a1 = env.append("s1", &["--role", "assistant", "--text", "r1"]);
    env.ok(&["commit-turn", "s1"]);
    let turn1 = env
        .git_ok(&env_dir(&env, &project), &["rev-parse", "main"])
        .trim()
        .to_string();
    env.append("s1", &["--text", "two"]);
    env.append("s1", &["--role", "assistant", "--text", "r2"]);
    env.ok(&["commit-turn", "s1"]);
    env.ok(&["checkout", "s1", "1", "-q"]);
    let t = env.append("s1", &["--role", "tool", "--name", "grep", "--text", "x"]);
    env.ok(&["commit-turn", "s1"]);
    let dir = env_dir(&env, &project);
    assert_eq!(
        env.git_ok(
            &dir,
            &[
                "log",
                "-1",
                "--format=%s%n%(trailers:key=Turn,valueonly)%n%P",
                &format!("retry-{t}")
            ]
        )
        .trim(),
        format!("turn 1 (continued): 1 more node\n1\n\n{turn1}")
    );
    let node: Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!("history/000005-t-{t}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(node["caller"], a1.as_str());
    assert_eq!(env.ok(&["verify", "s1"]), "");
    // A relocation after turn 2: shown with the conversation as it is now,
    // not with turn 1 as it stood.
    let moved = env.tmp.path().join("app-moved");
    std::fs::rename(&app, &moved).unwrap();
    env.ok(&["relocate", &project, moved.to_str().unwrap()]);
    env.ok(&["checkout", "s1", "main", "-q"]);
    assert!(shown(&env, &["show", "s1"]).contains("record: project/relocate: "));
    assert_eq!(
        shown(&env, &["show", "s1", "--at", "1"]),
        "# one\n\n── turn 1\nuser: one\nassistant: r1\n  tool: grep() → x"
    );
}

/// The directory of session `s1` bound to `project`.
fn env_dir(env: &TestEnv, project: &str) -> std::path::PathBuf {
    env.state()
        .join("sessions/projects")
        .join(project)
        .join("s1")
}

/// A turn whose first reply only calls tools: `assistant:` is the turn's
/// final answer, `tools:` counts every call, and the tokens are each reply's
/// input + output in Claude Code's `usage` shape (cache reads and writes
/// not added), or the Python store's top-level fields.
#[test]
fn the_message_names_the_final_answer_every_tool_and_the_tokens() {
    let env = TestEnv::new();
    env.append("s1", &["--create", "--text", "Run the tests"]);
    let node = |v: Value| json_node(&env, "s1", v);
    let usage = |i: u64, o: u64| {
        json!({"usage": {"input_tokens": i, "output_tokens": o,
            "cache_read_input_tokens": 50000, "cache_creation_input_tokens": 1200}})
    };
    node(json!({"role": "assistant", "name": "m", "output": "", "metadata": usage(1200, 40)}));
    env.append(
        "s1",
        &["--role", "tool", "--name", "bash", "--text", "3 passed"],
    );
    env.append(
        "s1",
        &["--role", "tool", "--name", "bash", "--text", "1 failed"],
    );
    node(
        json!({"role": "assistant", "name": "m", "output": "One test fails:\ntest_parse.",
        "metadata": usage(1500, 60)}),
    );
    node(json!({"role": "assistant", "name": "m", "output": "",
        "metadata": {"input_tokens": 10, "output_tokens": 5}}));
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(
        gitt(&env, "s1", &["log", "-1", "--format=%B"]),
        "turn 1: Run the tests\n\nassistant: One test fails: test_parse.\ntools: bash × 2\n\n\
         [meta: turn took 0.0s, 2 tools, 2815 tokens]\n\nSession: s1\nTurn: 1\nNodes: 1..6"
    );
    // `--tokens` overrides the sum.
    env.append("s1", &["--text", "again"]);
    node(json!({"role": "assistant", "output": "ok", "metadata": usage(7, 3)}));
    env.ok(&["commit-turn", "s1", "--tokens", "99"]);
    assert!(
        gitt(&env, "s1", &["log", "-1", "--format=%B"])
            .contains("[meta: turn took 0.0s, 99 tokens]")
    );
    env.assert_clean("s1");
}

/// Codex's `token_count` carries running totals: each turn's commit counts
/// its share (its last total minus the previous turn's), never the totals.
#[test]
fn a_codex_turn_counts_its_share_of_the_running_total() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("codex");
    std::fs::create_dir_all(&dir).unwrap();
    let mut lines = vec![
        json!({"timestamp": "2026-11-01T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", "cwd": "/home/me/proj",
        "originator": "codex_cli_rs", "cli_version": "0.50.0"}}),
    ];
    let mut clock = 0;
    let mut ts = || {
        clock += 1;
        format!("2026-11-01T10:00:{clock:02}.000Z")
    };
    for (turn, text, total) in [("t1", "one", (1000, 200)), ("t2", "two", (2500, 450))] {
        for (ty, payload) in [
            (
                "event_msg",
                json!({"type": "task_started", "turn_id": turn}),
            ),
            (
                "turn_context",
                json!({"model": "gpt-5-codex", "cwd": "/home/me/proj"}),
            ),
            (
                "event_msg",
                json!({"type": "user_message", "message": text}),
            ),
            (
                "response_item",
                json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": format!("re: {text}")}]}),
            ),
            (
                "event_msg",
                json!({"type": "token_count", "info": {"total_token_usage":
                {"input_tokens": total.0, "cached_input_tokens": 300, "output_tokens": total.1,
                 "reasoning_output_tokens": 0, "total_tokens": total.0 + total.1},
                "last_token_usage": {"input_tokens": 1, "output_tokens": 1}}}),
            ),
            (
                "event_msg",
                json!({"type": "task_complete", "turn_id": turn,
                "last_agent_message": format!("re: {text}")}),
            ),
        ] {
            lines.push(json!({"timestamp": ts(), "type": ty, "payload": payload}));
        }
    }
    let file = dir.join("rollout-2026-11-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl");
    std::fs::write(
        &file,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    env.ok(&["import", "codex", "--finish", file.to_str().unwrap()]);
    let session = std::fs::read_dir(env.state().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("codex-"))
        .expect("the codex session");
    let metas: Vec<String> = env
        .git(&session, &["log", "--format=%B", "main"])
        .lines()
        .filter(|l| l.starts_with("[meta:"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        metas,
        [
            "[meta: turn took 1.0s, 1750 tokens]",
            "[meta: turn took 1.0s, 1200 tokens]"
        ]
    );
}

/// `show` prints the whole turn: a tool-only reply as its calls, each call
/// with its input and the first lines of its result, each cut (whole with
/// `--full`), the agent's commit in the project or why none was made, and
/// a relocation where it happened.
#[test]
fn show_prints_the_whole_turn() {
    let env = TestEnv::new();
    let (app, project) = env.project("app", &["--auto-commit"]);
    env.ok(&["init", "s1", "--project", &project]);
    env.ok(&["begin-turn", "s1"]);
    env.append("s1", &["--text", "Add a readme"]);
    env.append("s1", &["--role", "assistant", "--name", "m", "--text", ""]);
    let long = format!("# app\n{}\nline 3\nline 4\nend", "x".repeat(130));
    env.append(
        "s1",
        &[
            "--role",
            "tool",
            "--name",
            "write",
            "--input",
            r#"{"path": "README.md"}"#,
            "--text",
            &long,
        ],
    );
    std::fs::write(app.join("README.md"), "# app\n").unwrap();
    env.append(
        "s1",
        &["--role", "assistant", "--name", "m", "--text", "Added it."],
    );
    env.ok(&["commit-turn", "s1"]);
    let sha = env
        .git_ok(&app, &["rev-parse", "--short=7", "HEAD"])
        .trim()
        .to_string();
    // A second turn that finds the tree dirty with the user's own change.
    std::fs::write(app.join("notes.txt"), "mine\n").unwrap();
    env.git_ok(&app, &["add", "notes.txt"]);
    env.ok(&["begin-turn", "s1"]);
    env.append("s1", &["--text", "Thanks"]);
    env.append(
        "s1",
        &["--role", "assistant", "--name", "m", "--text", "Welcome."],
    );
    env.ok(&["commit-turn", "s1"]);
    let moved = env.tmp.path().join("app-moved");
    std::fs::rename(&app, &moved).unwrap();
    env.ok(&["relocate", &project, moved.to_str().unwrap()]);
    let show = shown(&env, &["show", "s1"]);
    let cut = format!("{}…", "x".repeat(120));
    assert_eq!(
        show,
        format!(
            "# Add a readme\n\n── turn 1\nuser: Add a readme\nassistant (m): (calls write)\n  \
             tool: write({{\"path\":\"README.md\"}})\n      # app\n      {cut}\n      line 3\n      \
             … (2 more lines)\nassistant (m): Added it.\n  \
             agent commit {sha} in project `{project}` (1 path)\n\n── turn 2\nuser: Thanks\n\
             assistant (m): Welcome.\n  no agent commit in project `{project}`: dirty_tree\n\
             record: project/relocate: {} → {}",
            app.display(),
            moved.display()
        )
    );
    let full = shown(&env, &["show", "s1", "--full"]);
    assert!(
        full.contains(&format!(
            "  tool: write\n    input: {{\n        \"path\": \"README.md\"\n      }}\n    \
             result: # app\n      {}\n      line 3\n      line 4\n      end\nassistant (m): Added it.\n",
            "x".repeat(130)
        )),
        "{full}"
    );
}

/// `show` heads each turn with the session commit that holds it (as `log`
/// abbreviates it) and the seqs of its nodes; a turn not committed yet
/// says so. Under `--json`, each node names its turn's commit.
#[test]
fn show_heads_each_turn_with_its_commit_and_its_nodes() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &["read"]);
    env.turn("s1", "two", &[]);
    env.append("s1", &["--text", "three"]);
    let commits: Vec<(String, String)> = gitt(&env, "s1", &["log", "--format=%h %H"])
        .lines()
        .map(|l| {
            let (short, full) = l.split_once(' ').unwrap();
            (short.to_string(), full.to_string())
        })
        .collect();
    let headers: Vec<String> = env
        .ok(&["show", "s1"])
        .lines()
        .filter(|l| l.starts_with("── turn"))
        .map(|l| {
            let mut parts: Vec<&str> = l.split(" · ").collect();
            parts.remove(1);
            parts.join(" · ")
        })
        .collect();
    assert_eq!(
        headers,
        [
            format!("── turn 1 · {} · nodes 1..3", commits[1].0),
            format!("── turn 2 · {} · nodes 4..5", commits[0].0),
            "── turn 3 · uncommitted · node 6".to_string(),
        ]
    );
    let records: Vec<Value> = env
        .ok(&["--json", "show", "s1"])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["data"].clone())
        .collect();
    let by_turn: Vec<(u64, Value)> = records
        .iter()
        .map(|r| (r["turn"].as_u64().unwrap(), r["commit"].clone()))
        .collect();
    assert_eq!(
        by_turn,
        [
            (1, Value::from(commits[1].1.as_str())),
            (1, Value::from(commits[1].1.as_str())),
            (1, Value::from(commits[1].1.as_str())),
            (2, Value::from(commits[0].1.as_str())),
            (2, Value::from(commits[0].1.as_str())),
            (3, Value::Null),
        ]
    );
}

// ---------------------------------------------------------------------------
// One conversation, three ways.

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Tool {
    name: String,
    input: Value,
    output: String,
}

struct Reply {
    text: String,
    tools: Vec<Tool>,
}

struct Turn {
    user: String,
    /// The earlier turn whose final reply this one continues (a retry), if
    /// not the one before.
    fork_from: Option<usize>,
    replies: Vec<Reply>,
}

/// A random conversation: turns of one to three replies, each but the last
/// with up to two tool calls (a reply may be tool calls only), the last a
/// plain answer; now and then a turn that retries from an earlier turn.
fn conversation(seed: u64) -> Vec<Turn> {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let turns = 1 + r.below(4) as usize;
    (0..turns)
        .map(|ti| {
            let n = 1 + r.below(3) as usize;
            let replies = (0..n)
                .map(|ri| {
                    let last = ri + 1 == n;
                    let tools = if last { 0 } else { 1 + r.below(2) as usize };
                    Reply {
                        text: match (last, r.below(3)) {
                            (false, 0) => String::new(),
                            _ => format!("reply {ti}.{ri}: step {}", r.below(100)),
                        },
                        tools: (0..tools)
                            .map(|k| Tool {
                                name: ["Read", "Bash", "Edit"][r.below(3) as usize].into(),
                                input: json!({"arg": format!("{ti}-{ri}-{k}")}),
                                output: format!("out {ti}.{ri}.{k}"),
                            })
                            .collect(),
                    }
                })
                .collect();
            Turn {
                user: format!("question {ti}: {}", r.below(1000)),
                fork_from: (ti >= 2 && r.below(3) == 0).then(|| r.below(ti as u64 - 1) as usize),
                replies,
            }
        })
        .collect()
}

/// The argv of each request that records `conv` in session `s`, with the
/// ids given (`u<t>`, `a<t>_<r>`, `t<t>_<r>_<k>`) so that a retry can name
/// its predecessor; a `commit-turn` after each turn.
fn requests(s: &str, conv: &[Turn]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for (ti, t) in conv.iter().enumerate() {
        let uid = format!("u{ti}");
        let mut user = argv(&["append", s, "--id", &uid, "--text", &t.user]);
        if ti == 0 {
            user.push("--create".into());
        }
        if let Some(f) = t.fork_from {
            let last = conv[f].replies.len() - 1;
            user.extend(argv(&["--predecessor", &format!("a{f}_{last}")]));
        }
        out.push(user);
        for (ri, reply) in t.replies.iter().enumerate() {
            out.push(argv(&[
                "append",
                s,
                "--role",
                "assistant",
                "--id",
                &format!("a{ti}_{ri}"),
                "--name",
                "claude-sonnet-4",
                "--text",
                &reply.text,
            ]));
            for (k, tool) in reply.tools.iter().enumerate() {
                out.push(argv(&[
                    "append",
                    s,
                    "--role",
                    "tool",
                    "--id",
                    &format!("t{ti}_{ri}_{k}"),
                    "--name",
                    &tool.name,
                    "--input",
                    &tool.input.to_string(),
                    "--text",
                    &tool.output,
                ]));
            }
        }
        out.push(argv(&["commit-turn", s]));
    }
    out
}

/// `conv` as a Claude Code transcript: each reply one `message.id` over a
/// record per block (its text, then each tool call), each tool result a
/// user record, a retry a user record whose parent is the earlier reply.
fn transcript(conv: &[Turn]) -> Transcript {
    let mut tr = Transcript::default();
    let mut last = String::new();
    // The uuid of each turn's last record.
    let mut ends: Vec<String> = Vec::new();
    for (ti, t) in conv.iter().enumerate() {
        let parent = match (ti, t.fork_from) {
            (0, _) => None,
            (_, Some(f)) => Some(ends[f].clone()),
            _ => Some(last.clone()),
        };
        let uid = format!("user-{ti}");
        tr.user(&uid, parent.as_deref(), &t.user);
        last = uid;
        for (ri, reply) in t.replies.iter().enumerate() {
            let msg = format!("msg_{ti}_{ri}");
            if !reply.text.is_empty() {
                let id = format!("{msg}-text");
                tr.reply(
                    &id,
                    &last.clone(),
                    &msg,
                    json!({"type": "text", "text": reply.text}),
                );
                last = id;
            }
            let mut calls = Vec::new();
            for (k, tool) in reply.tools.iter().enumerate() {
                let id = format!("{msg}-use-{k}");
                let call = format!("toolu_{ti}_{ri}_{k}");
                tr.reply(
                    &id,
                    &last.clone(),
                    &msg,
                    json!({"type": "tool_use", "id": call,
                    "name": tool.name, "input": tool.input}),
                );
                last = id;
                calls.push(call);
            }
            for (k, tool) in reply.tools.iter().enumerate() {
                let id = format!("{msg}-result-{k}");
                tr.tool_result(&id, &last.clone(), &calls[k], &tool.output);
                last = id;
            }
        }
        ends.push(last.clone());
    }
    tr
}

/// A session's DAG with its ids renamed to their order of seq: each node's
/// role, name, text, input, predecessor and caller; its branches with their
/// tips (a retry branch renamed by its reply's place); and each commit's
/// `turn N`, `assistant:` and `tools:` lines.
fn dag(env: &TestEnv, s: &str) -> Value {
    let mut nodes: Vec<Value> = env
        .history_files(s)
        .iter()
        .map(|f| crate::import::node(env, s, f))
        .collect();
    nodes.sort_by_key(|n| n["seq"].as_i64());
    let index: HashMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n["id"].as_str().unwrap().to_string(), i))
        .collect();
    let rename = |v: &Value| match v.as_str() {
        Some(id) => index
            .get(id)
            .map_or_else(|| json!(id), |i| json!(format!("#{i}"))),
        None => Value::Null,
    };
    let shaped: Vec<Value> = nodes
        .iter()
        .map(|n| {
            let text = match &n["output"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                v => v.to_string(),
            };
            json!([
                n["role"],
                n["name"],
                text,
                n["input"],
                rename(&n["predecessor"]),
                rename(&n["caller"])
            ])
        })
        .collect();
    let mut refs: Vec<(String, String)> = Vec::new();
    for line in env
        .git(
            s,
            &[
                "for-each-ref",
                "--format=%(refname:short) %(objectname)",
                "refs/heads",
            ],
        )
        .lines()
    {
        let (name, commit) = line.split_once(' ').unwrap();
        let name = match name.strip_prefix("retry-") {
            Some(id) => format!("retry-{}", rename(&json!(id))),
            None => name.to_string(),
        };
        let lines: Vec<String> = env
            .git(s, &["log", "--format=%B", commit])
            .lines()
            .filter(|l| {
                l.starts_with("turn ") || l.starts_with("assistant:") || l.starts_with("tools:")
            })
            .map(str::to_string)
            .collect();
        refs.push((name, lines.join("\n")));
    }
    refs.sort();
    json!({"nodes": shaped, "branches": refs, "head": rename(&env.meta(s)["head_id"])})
}

/// The same conversation, recorded by one-shot `append`s, by `batch` and
/// by `import claude-code` of a transcript of it: the same DAG up to the
/// renaming of node ids, the same branches and the same turn lines; and
/// every repository clean.
#[test]
fn appends_batch_and_an_import_of_one_conversation_are_one_dag() {
    let mut forked = 0;
    for seed in 1..=8 {
        let conv = conversation(seed);
        let env = TestEnv::new();
        for argv in requests("one", &conv) {
            let a: Vec<&str> = argv.iter().map(String::as_str).collect();
            env.ok(&a);
        }
        env.batch(&requests("batched", &conv));
        let dir = env.tmp.path().join("transcripts");
        let file = transcript(&conv).write(&dir, "");
        env.ok(&["import", "claude-code", "--finish", file.to_str().unwrap()]);
        let one = dag(&env, "one");
        assert_eq!(one, dag(&env, "batched"), "seed {seed}: batch");
        // The same ids and the same clock: the same node files, byte for
        // byte, and the same meta.json but for the session's own id.
        let bytes = |s: &str| crate::env::tree_bytes(&env.session_dir(s).join("history"));
        assert!(bytes("one") == bytes("batched"), "seed {seed}: node files");
        let mut meta = env.meta("batched");
        meta["id"] = "one".into();
        assert_eq!(env.meta("one"), meta, "seed {seed}: meta.json");
        let imported = dag(&env, crate::import::SESSION);
        // Compare the shapes that an import and appends both have: an
        // import's reply names its model, its tool nodes keep the call.
        assert_eq!(one["nodes"], imported["nodes"], "seed {seed}: import nodes");
        assert_eq!(
            one["branches"], imported["branches"],
            "seed {seed}: import branches"
        );
        assert_eq!(one["head"], imported["head"], "seed {seed}: import head");
        for s in ["one", "batched", crate::import::SESSION] {
            env.assert_clean(s);
        }
        forked += usize::from(one["branches"].as_array().unwrap().len() > 1);
    }
    assert!(
        forked > 0,
        "no conversation forked: the retries go untested"
    );
}

/// `git` in session `s`, its output without the final newline.
fn gitt(env: &TestEnv, s: &str, args: &[&str]) -> String {
    env.git(s, args).trim_end().to_string()
}

/// Control characters in what the nodes say (a NUL, an escape sequence a
/// tool printed) reach the commit message escaped: `git fsck --strict`
/// (which refuses a NUL in a commit, as a remote that checks pushes does)
/// stays clean, `git log` prints no escape sequence, and the nodes keep
/// the exact text.
#[test]
fn control_characters_reach_the_commit_message_escaped() {
    let env = TestEnv::new();
    env.append("s1", &["--create", "--text", "first"]);
    // A NUL comes through JSON (it cannot through a command line).
    json_node(
        &env,
        "s1",
        json!({"role": "user", "output": "look\u{0} at \u{1b}[31mred\u{1b}[0m"}),
    );
    env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--name",
            "m<x>\u{7}",
            "--text",
            "done\u{1b}]52;c;aGk=\u{7}",
        ],
    );
    env.append(
        "s1",
        &["--role", "tool", "--name", "ls\u{1b}[2J", "--text", "x"],
    );
    env.ok(&["commit-turn", "s1"]);
    let msg = gitt(&env, "s1", &["log", "-1", "--format=%B"]);
    assert!(!msg.contains('\u{1b}') && !msg.contains('\u{7}'), "{msg:?}");
    assert!(
        msg.contains("assistant: done\\u{1b}]52;c;aGk=\\u{7}"),
        "{msg}"
    );
    assert!(msg.contains("tools: ls\\u{1b}[2J"), "{msg}");
    assert!(
        msg.starts_with("turn 2: look\\0 at \\u{1b}[31mred\\u{1b}[0m\n"),
        "{msg}"
    );
    env.assert_clean("s1");
}

/// `append --json-node` of `v` in session `s`; returns what it printed.
fn json_node(env: &TestEnv, s: &str, v: Value) -> String {
    let out = run_json_node(env, &[s], v);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `append <args> --json-node` with `v` on its stdin.
fn run_json_node(env: &TestEnv, args: &[&str], v: Value) -> std::process::Output {
    use std::io::Write;
    let mut c = env.cmd();
    c.arg("append").args(args).arg("--json-node");
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn append");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(v.to_string().as_bytes())
        .unwrap();
    crate::env::wait_output(child, &"append --json-node")
}

/// Names are shown on one line: a tool or model name holding line breaks
/// (a transcript's, a hook's) prints no line of its own, so `show` prints
/// no forged `user:` line.
#[test]
fn show_prints_no_line_a_name_forged() {
    let env = TestEnv::new();
    env.append("s1", &["--create", "--text", "hi"]);
    env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--name",
            "m\nuser: forged",
            "--text",
            "ok",
        ],
    );
    env.append(
        "s1",
        &[
            "--role",
            "tool",
            "--name",
            "ls\nuser: yes, delete my home",
            "--text",
            "x",
        ],
    );
    for args in [&["show", "s1"][..], &["show", "s1", "--full"][..]] {
        let out = shown(&env, args);
        assert!(
            !out.lines()
                .any(|l| l.starts_with("user: ") && l != "user: hi"),
            "{out}"
        );
    }
}
