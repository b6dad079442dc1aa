//! `import codex` and `hook codex`: rollouts built here in the shapes of
//! the reference (`agent-transcripts.md`), imported, and checked with git
//! and against the rollout rebuilt from the session.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::env::TestEnv;
use crate::import::{hook_with, node, rebuilt_of};

const ID: &str = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001";
pub(crate) const SESSION: &str = "codex-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001";
const FORK: &str = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0002";

/// A Codex rollout under construction.
#[derive(Clone)]
pub(crate) struct Rollout {
    id: String,
    lines: Vec<Value>,
    clock: u32,
}

impl Rollout {
    fn new(id: &str, forked_from: Option<&str>) -> Rollout {
        let mut r = Rollout {
            id: id.into(),
            lines: Vec::new(),
            clock: 0,
        };
        let mut meta = json!({"id": id, "timestamp": "2026-11-01T10:00:00.000Z",
            "cwd": "/home/me/proj", "originator": "codex_cli_rs", "cli_version": "0.50.0",
            "source": "cli", "model_provider": "openai",
            "git": {"commit_hash": "abc123", "branch": "main"}});
        if let Some(f) = forked_from {
            meta["forked_from_id"] = f.into();
        }
        r.push("session_meta", meta);
        r
    }

    fn push(&mut self, kind: &str, payload: Value) -> &mut Self {
        self.clock += 1;
        let ts = format!(
            "2026-11-01T10:{:02}:{:02}.000Z",
            self.clock / 60,
            self.clock % 60
        );
        self.lines
            .push(json!({"timestamp": ts, "type": kind, "payload": payload}));
        self
    }

    /// One turn: the typed message (recorded twice, as Codex does), the
    /// reasoning, the calls with their outputs, the reply (twice).
    fn turn(&mut self, turn: &str, text: &str, calls: &[(&str, &str)], reply: &str) -> &mut Self {
        self.push("event_msg", json!({"type": "task_started", "turn_id": turn}))
            .push(
                "turn_context",
                json!({"turn_id": turn, "cwd": "/home/me/proj", "model": "gpt-5-codex",
                    "approval_policy": "on-request"}),
            )
            .push(
                "response_item",
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
            )
            .push(
                "event_msg",
                json!({"type": "user_message", "message": text, "images": []}),
            )
            .push(
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}],
                    "encrypted_content": "gAAA"}),
            )
            .push(
                "event_msg",
                json!({"type": "agent_reasoning", "text": "thinking"}),
            );
        for (call, out) in calls {
            self.push(
                "response_item",
                json!({"type": "function_call", "name": "shell",
                    "arguments": format!("{{\"command\":[\"cat\",\"{call}.rs\"]}}"), "call_id": call}),
            )
            .push(
                "response_item",
                json!({"type": "function_call_output", "call_id": call, "output": out}),
            );
        }
        self.push(
            "event_msg",
            json!({"type": "token_count", "info": {"total_token_usage": {"input_tokens": 100,
                "output_tokens": 9}, "last_token_usage": {"input_tokens": 100, "output_tokens": 9}}}),
        )
        .push(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": reply}]}),
        )
        .push(
            "event_msg",
            json!({"type": "agent_message", "message": reply}),
        )
        .push(
            "event_msg",
            json!({"type": "task_complete", "turn_id": turn, "last_agent_message": reply,
                "duration_ms": 4000}),
        )
    }

    /// Two turns with calls, an injected context message, a compaction
    /// between them and a record type nobody knows.
    pub(crate) fn two_turns() -> Rollout {
        let mut r = Rollout::new(ID, None);
        r.push(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text",
                "text": "<environment_context>\n  <cwd>/home/me/proj</cwd>\n</environment_context>"}]}),
        );
        r.turn(
            "turn-1",
            "Fix the failing test",
            &[("call_1", "fn main() {}"), ("call_2", "ok")],
            "Fixed it.",
        )
        .push(
            "compacted",
            json!({"message": "Summary: the test was fixed", "replacement_history": []}),
        )
        .push("event_msg", json!({"type": "context_compacted"}))
        .push("brand_new_kind", json!({"x": 1}))
        .turn("turn-2", "Now run clippy", &[], "Clippy is clean.");
        r
    }

    fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Written where Codex keeps it under `home` (`$CODEX_HOME`).
    pub(crate) fn write(&self, home: &Path, torn: &str) -> PathBuf {
        let dir = home.join("sessions/2026/11/01");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("rollout-2026-11-01T10-00-00-{}.jsonl", self.id));
        std::fs::write(&file, self.text() + torn).unwrap();
        file
    }
}

fn import(env: &TestEnv, path: &Path) -> String {
    env.ok(&["import", "codex", "--finish", path.to_str().unwrap()])
}

fn commits(env: &TestEnv) -> String {
    env.git(SESSION, &["log", "--all", "--format=%H %s"])
}

#[test]
fn a_codex_rollout_becomes_a_session_with_one_commit_per_turn() {
    let env = TestEnv::new();
    let home = env.tmp.path().join("codex");
    let r = Rollout::two_turns();
    r.write(&home, "{\"timestamp\":\"2026-11-01T10:09");
    // No path: `$CODEX_HOME/sessions`.
    let out = env
        .cmd()
        .env("CODEX_HOME", &home)
        .args(["import", "codex"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("torn last line"), "{stderr}");
    let files = env.history_files(SESSION);
    let compact = files
        .iter()
        .find(|f| f.contains("-t-c-2026"))
        .unwrap_or_else(|| panic!("a compaction node: {files:?}"))
        .clone();
    assert_eq!(
        files,
        [
            "000001-u-u-turn-1.json",
            "000002-a-a-turn-1.json",
            "000003-t-t-call_1.json",
            "000004-t-t-call_2.json",
            compact.as_str(),
            "000006-u-u-turn-2.json",
            "000007-a-a-turn-2.json",
        ]
    );
    // Visible text once; the injected context is no user message.
    let u1 = node(&env, SESSION, "000001-u-u-turn-1.json");
    assert_eq!(u1["output"], "Fix the failing test");
    assert_eq!(u1["predecessor"], "ROOT");
    let a1 = node(&env, SESSION, "000002-a-a-turn-1.json");
    assert_eq!(a1["output"], "Fixed it.");
    assert_eq!(a1["metadata"]["model"], "gpt-5-codex");
    assert_eq!(
        a1["metadata"]["usage"]["total_token_usage"]["output_tokens"],
        9
    );
    let t1 = node(&env, SESSION, "000003-t-t-call_1.json");
    assert_eq!(t1["caller"], "a-turn-1");
    assert_eq!(t1["input"], json!({"command": ["cat", "call_1.rs"]}));
    assert_eq!(t1["output"], "fn main() {}");
    let c = node(&env, SESSION, &compact);
    assert_eq!(c["name"], "context/compact");
    assert_eq!(c["metadata"]["summary"], "Summary: the test was fixed");
    assert_eq!(
        node(&env, SESSION, "000006-u-u-turn-2.json")["predecessor"],
        "a-turn-1"
    );
    let meta: Value =
        serde_json::from_slice(&std::fs::read(env.session_dir(SESSION).join("meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["source"], "codex");
    assert_eq!(meta["agent_id"], "gpt-5-codex");
    assert_eq!(meta["title"], "Fix the failing test");
    let subjects = env.git(SESSION, &["log", "--format=%s"]);
    // The session's first commit, one per turn, the compaction's own.
    assert_eq!(subjects.lines().count(), 4, "{subjects}");
    assert!(subjects.contains("turn 2: Now run clippy"), "{subjects}");
    env.assert_clean(SESSION);
    assert_eq!(env.ok(&["verify", SESSION]), "");
    assert_eq!(rebuilt_of(&env, SESSION, None), r.lines);
}

#[test]
fn a_rollout_gives_the_same_commits_anywhere_and_a_grown_one_only_its_new_turns() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let c = TestEnv::new();
    let full = Rollout::two_turns();
    // Anywhere: two state dirs, the same commits.
    import(&b, &full.write(b.tmp.path(), ""));
    import(&c, &full.write(c.tmp.path(), ""));
    assert_eq!(commits(&b), commits(&c));
    // Twice: nothing new.
    import(&b, &full.write(b.tmp.path(), ""));
    assert_eq!(commits(&b), commits(&c));
    // Grown: the first turn, then the rest; the old commits stay.
    let mut part = full.clone();
    let first_turn_end = part
        .lines
        .iter()
        .position(|l| l["payload"]["type"] == "task_complete")
        .unwrap();
    part.lines.truncate(first_turn_end + 1);
    let fa = part.write(a.tmp.path(), "");
    import(&a, &fa);
    let first = commits(&a);
    assert_eq!(first.lines().count(), 2, "init and turn 1");
    full.write(a.tmp.path(), "");
    let out = import(&a, &fa);
    assert!(out.contains("imported 1 turn(s), 3 node(s)"), "{out}");
    let grown = commits(&a);
    assert!(grown.ends_with(&first), "{grown}");
    let subjects = |e: &TestEnv| e.git(SESSION, &["log", "--format=%s"]);
    assert_eq!(subjects(&a), subjects(&b));
    assert_eq!(a.history_files(SESSION), b.history_files(SESSION));
    assert_eq!(rebuilt_of(&a, SESSION, None), full.lines);
    a.assert_clean(SESSION);
}

#[test]
fn a_fork_is_a_retry_branch_of_the_session_it_was_forked_from() {
    let env = TestEnv::new();
    let home = env.tmp.path().join("codex");
    let orig = Rollout::two_turns();
    orig.write(&home, "");
    // The fork copies the history up to turn 1's end, then goes its own way.
    let mut fork = Rollout::new(FORK, Some(ID));
    let cut = orig
        .lines
        .iter()
        .position(|l| l["payload"]["type"] == "task_complete")
        .unwrap();
    fork.lines.extend(orig.lines[1..=cut].iter().cloned());
    fork.clock = 30;
    fork.turn(
        "turn-3",
        "Instead, delete the test",
        &[("call_3", "removed")],
        "Deleted.",
    );
    fork.write(&home, "");
    let out = import(&env, &home);
    assert!(out.contains(SESSION), "{out}");
    assert!(!env.session_dir(&format!("codex-{FORK}")).exists());
    // Turn 1 once; the fork's turn answers turn 1's reply, on a branch.
    let files = env.history_files(SESSION);
    assert_eq!(
        files.iter().filter(|f| f.contains("-u-u-turn-1.")).count(),
        1
    );
    let u3 = files.iter().find(|f| f.contains("-u-u-turn-3.")).unwrap();
    assert_eq!(node(&env, SESSION, u3)["predecessor"], "a-turn-1");
    let branches = env.git(SESSION, &["branch", "--format=%(refname:short)"]);
    assert_eq!(branches.lines().count(), 2, "{branches}");
    assert!(
        branches.lines().any(|b| b.starts_with("retry-")),
        "{branches}"
    );
    env.assert_clean(SESSION);
    assert_eq!(env.ok(&["verify", SESSION]), "");
    // Both rollouts rebuilt, each from its own records.
    assert_eq!(rebuilt_of(&env, SESSION, None), orig.lines);
    let key = format!("codex-{FORK}");
    assert_eq!(rebuilt_of(&env, SESSION, Some(&key)), fork.lines);
    // Again: nothing new.
    let before = commits(&env);
    import(&env, &home);
    assert_eq!(commits(&env), before);
}

/// The `notify` line `hook install codex` prints names this program and
/// the state dir it was given, as the hooks it installs do: run as Codex
/// runs it (the event as its last argument, no state dir in the
/// environment), it records the turns in that state dir.
#[test]
fn the_notify_line_install_prints_records_into_its_state_dir() {
    let env = TestEnv::new();
    let home = env.tmp.path().join("codex");
    std::fs::create_dir_all(&home).unwrap();
    let mut install = env.cmd();
    install
        .env("CODEX_HOME", &home)
        .args(["hook", "install", "codex"]);
    let out = install.output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let array = stderr
        .split("`notify = ")
        .nth(1)
        .and_then(|rest| rest.split_once('`'))
        .map(|(a, _)| a)
        .unwrap_or_else(|| panic!("no notify line: {stderr}"));
    // A TOML array of basic strings, written as JSON writes them.
    let argv: Vec<String> = serde_json::from_str(array).unwrap();
    let state = env.state();
    assert_eq!(
        argv[1..],
        ["--state-dir", state.to_str().unwrap(), "hook", "codex"],
        "{stderr}"
    );
    Rollout::two_turns().write(&home, "");
    let event = json!({"type": "agent-turn-complete", "thread-id": ID, "turn-id": "turn-2"});
    let out = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .arg(event.to_string())
        .env("HOME", env.tmp.path().join("elsewhere"))
        .env("CODEX_HOME", &home)
        .env_remove("OPENPROGRAM_HOME")
        .env_remove("OPENPROGRAM_PROFILE")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(!state.join("git-session-hooks.log").exists());
    assert_eq!(env.git(SESSION, &["log", "--format=%s"]).lines().count(), 4);
    env.assert_clean(SESSION);
}

#[test]
fn codex_notify_and_hook_events_end_as_one_import_of_the_rollout() {
    let env = TestEnv::new();
    let home = env.tmp.path().join("codex");
    let full = Rollout::two_turns();
    let ends: Vec<usize> = full
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l["payload"]["type"] == "task_complete")
        .map(|(i, _)| i + 1)
        .collect();
    let mut file = PathBuf::new();
    for (n, &cut) in ends.iter().enumerate() {
        let mut part = full.clone();
        part.lines.truncate(cut);
        file = part.write(&home, "");
        // `notify`: the event is the last argument, naming the thread.
        let event = json!({"type": "agent-turn-complete", "thread-id": ID,
            "turn-id": format!("turn-{}", n + 1), "cwd": "/home/me/proj",
            "input-messages": ["…"], "last-assistant-message": "…"});
        let out = env
            .cmd()
            .env("CODEX_HOME", &home)
            .args(["hook", "codex", &event.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
        // init, turn 1; then the compaction and turn 2.
        assert_eq!(
            env.git(SESSION, &["log", "--format=%s"]).lines().count(),
            [2, 4][n]
        );
    }
    // A hooks.json hook: the event on stdin, naming the rollout; nothing new.
    let out = hook_with(
        &env,
        &["hook", "codex"],
        &json!({"session_id": ID, "transcript_path": file, "cwd": "/home/me/proj",
            "hook_event_name": "Stop", "model": "gpt-5-codex", "turn_id": "turn-2"}),
    );
    assert!(out.status.success() && out.stdout.is_empty());
    let one = TestEnv::new();
    import(&one, &full.write(one.tmp.path(), ""));
    assert_eq!(env.history_files(SESSION), one.history_files(SESSION));
    let subjects = |e: &TestEnv| e.git(SESSION, &["log", "--format=%s"]);
    assert_eq!(subjects(&env), subjects(&one));
    assert_eq!(rebuilt_of(&env, SESSION, None), full.lines);
    env.assert_clean(SESSION);
    assert!(!env.state().join("git-session-hooks.log").exists());
    // A thread with no rollout: logged, exit 0.
    let out = env
        .cmd()
        .env("CODEX_HOME", &home)
        .args([
            "hook",
            "codex",
            r#"{"type":"agent-turn-complete","thread-id":"nope"}"#,
        ])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    let log = std::fs::read_to_string(env.state().join("git-session-hooks.log")).unwrap();
    assert!(log.contains("no rollout of Codex thread `nope`"), "{log}");
}

/// What a node is, without the records it carries.
fn shape(env: &TestEnv) -> Vec<Value> {
    env.history_files(SESSION)
        .iter()
        .map(|f| {
            let n = node(env, SESSION, f);
            json!([
                f,
                n["role"],
                n["predecessor"],
                n["caller"],
                n["name"],
                n["input"],
                n["output"],
                n["metadata"]["model"]
            ])
        })
        .collect()
}

#[test]
fn imports_at_every_line_of_a_growing_rollout_end_as_one_import_of_it() {
    // Each run reads on from its cursor, knowing the lines before only by
    // the state it kept: wherever the rollout was cut, the nodes are those
    // of one import of the whole.
    let full = Rollout::two_turns();
    let one = TestEnv::new();
    import(&one, &full.write(one.tmp.path(), ""));
    let mid = TestEnv::new(); // hooks in the middle of turns
    let end = TestEnv::new(); // `Stop` (every node so far) at every line
    for cut in 1..=full.lines.len() {
        let mut part = full.clone();
        part.lines.truncate(cut);
        let f = part.write(mid.tmp.path(), "");
        let out = hook_with(
            &mid,
            &["hook", "codex"],
            &json!({"transcript_path": f, "hook_event_name": "UserPromptSubmit"}),
        );
        assert!(out.status.success());
        let f = part.write(end.tmp.path(), "");
        let out = hook_with(
            &end,
            &["hook", "codex"],
            &json!({"transcript_path": f, "hook_event_name": "Stop"}),
        );
        assert!(out.status.success());
    }
    let f = full.write(mid.tmp.path(), "");
    hook_with(
        &mid,
        &["hook", "codex"],
        &json!({"transcript_path": f, "hook_event_name": "Stop"}),
    );
    assert!(!mid.state().join("git-session-hooks.log").exists());
    let subjects = |e: &TestEnv| e.git(SESSION, &["log", "--format=%s"]);
    for (name, env) in [("mid", &mid), ("end", &end)] {
        assert_eq!(shape(env), shape(&one), "{name}");
        assert_eq!(rebuilt_of(env, SESSION, None), full.lines);
        env.assert_clean(SESSION);
        assert_eq!(env.ok(&["verify", SESSION]), "");
    }
    assert_eq!(subjects(&mid), subjects(&one));
}

/// A call whose arguments string parses into JSON nested deeper than a
/// node (or the pending area that keeps an open turn's nodes) can hold
/// keeps its arguments as the string: the open turn is kept, every later
/// import goes on, each node reads back.
#[test]
fn arguments_nested_too_deep_are_kept_as_their_string() {
    for levels in [121, 124, 127] {
        let env = TestEnv::new();
        let args = format!("{}\"bottom\"{}", "[".repeat(levels), "]".repeat(levels));
        let mut r = Rollout::new(ID, None);
        r.push("event_msg", json!({"type": "task_started", "turn_id": "t1"}))
            .push(
                "response_item",
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go deep"}]}),
            )
            .push(
                "response_item",
                json!({"type": "function_call", "name": "shell", "arguments": args, "call_id": "call_1"}),
            );
        let home = env.tmp.path().join("codex");
        let file = r.write(&home, "");
        // The turn is open: kept pending, then closed by a later import.
        env.ok(&["import", "codex", file.to_str().unwrap()]);
        r.push(
            "response_item",
            json!({"type": "function_call_output", "call_id": "call_1", "output": "done"}),
        )
        .push(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "made it"}]}),
        )
        .push(
            "event_msg",
            json!({"type": "task_complete", "turn_id": "t1", "last_agent_message": "made it"}),
        );
        r.write(&home, "");
        import(&env, &file);
        let nodes: Vec<Value> = env
            .history_files(SESSION)
            .iter()
            .map(|f| {
                serde_json::from_slice(
                    &std::fs::read(env.session_dir(SESSION).join("history").join(f)).unwrap(),
                )
                .unwrap()
            })
            .collect();
        let call = nodes
            .iter()
            .find(|n| n["role"] == "code")
            .expect("the call's node");
        assert_eq!(call["input"], Value::String(args.clone()), "{levels}");
        assert!(env.ok(&["show", SESSION]).contains("made it"));
        env.ok(&["verify", "--all"]);
        env.assert_clean(SESSION);
    }
}
