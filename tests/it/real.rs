//! Live equals replay (issue 49) on real transcripts (`tests/fixtures/
//! transcripts/`, public, licences in their MANIFEST) and on a fixture for
//! each shape the issue names: a reply whose records are written one by
//! one, a compaction in the middle of a turn, a session cut off mid-turn,
//! subagents (`SubagentStop`, both layouts), the Codex rollout format
//! before `session_meta`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::env::TestEnv;
use crate::live::{hook, state_of};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(rel)
}

fn sessions(env: &TestEnv) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(env.state().join("sessions"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("meta.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn jsonl(lines: &[Value]) -> Vec<u8> {
    lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

/// Every node file of a session, parsed.
fn nodes(env: &TestEnv, session: &str) -> Vec<Value> {
    env.history_files(session)
        .iter()
        .map(|f| {
            let p = env.session_dir(session).join("history").join(f);
            serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
        })
        .collect()
}

/// Subjects of the session's commits, oldest first.
fn subjects(env: &TestEnv, session: &str) -> Vec<String> {
    env.git(session, &["log", "--reverse", "--format=%s", "HEAD"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// The session whole: `verify` exits 0, git finds it clean.
fn sound(env: &TestEnv, session: &str) {
    let v = env.run(&["verify", session]);
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    env.assert_clean(session);
}

/// A hook call that went through: exit 0, nothing printed, nothing logged.
fn hooked(env: &TestEnv, agent: &str, event: &Value) {
    let out = hook(env, agent, event);
    assert!(out.status.success() && out.stdout.is_empty());
    let log = env.state().join("git-session-hooks.log");
    assert!(!log.exists(), "{}", std::fs::read_to_string(&log).unwrap());
}

fn import(env: &TestEnv, agent: &str, path: &Path, finish: bool) -> String {
    let mut args = vec!["import", agent, path.to_str().unwrap()];
    if finish {
        args.push("--finish");
    }
    env.ok(&args)
}

/// Imports `bytes` cut at each of `cuts` (written to `name` in a temp
/// directory), then whole; and one import of the whole in another state
/// dir; every session the two made is the same to the byte.
fn prefixes_equal_one_import(agent: &str, name: &str, bytes: &[u8], cuts: &[usize], finish: bool) {
    let live = TestEnv::new();
    let file = live.tmp.path().join("t").join(name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    for &cut in cuts {
        std::fs::write(&file, &bytes[..cut]).unwrap();
        import(&live, agent, &file, false);
    }
    std::fs::write(&file, bytes).unwrap();
    import(&live, agent, &file, finish);
    let one = TestEnv::new();
    let whole = one.tmp.path().join("t").join(name);
    std::fs::create_dir_all(whole.parent().unwrap()).unwrap();
    std::fs::write(&whole, bytes).unwrap();
    import(&one, agent, &whole, finish);
    let made = sessions(&one);
    assert!(!made.is_empty());
    assert_eq!(sessions(&live), made);
    for s in &made {
        assert_eq!(state_of(&live, s), state_of(&one, s), "session {s}");
        sound(&live, s);
    }
}

/// Byte offsets of line ends: cuts at whole lines.
fn line_ends(bytes: &[u8]) -> Vec<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect()
}

/// Every `step`-th line end, and one torn line (half of the next line) after
/// each.
fn some_cuts(bytes: &[u8], step: usize) -> Vec<usize> {
    let ends = line_ends(bytes);
    let mut cuts = Vec::new();
    for w in ends.windows(2).step_by(step) {
        cuts.push(w[0]);
        cuts.push(w[0] + (w[1] - w[0]) / 2);
    }
    cuts
}

const SIMPLE: &str = "claude/codemie-ai_codemie-code/incremental-simple";
const SIMPLE_SESSION: &str = "claude-3fb74381-1bf4-475e-8c6f-442d872b1bcf";

#[test]
fn a_real_claude_transcript_through_the_hooks_is_one_import() {
    // The real file after turn 1, then after turn 2: a Stop event each,
    // then the session's end.
    let env = TestEnv::new();
    let file = env.tmp.path().join("p/3fb74381.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let event = |name: &str| {
        json!({"session_id": "3fb74381-1bf4-475e-8c6f-442d872b1bcf",
            "transcript_path": file, "hook_event_name": name})
    };
    for (turn, name) in [
        ("turn-1", "Stop"),
        ("turn-2", "Stop"),
        ("turn-2", "SessionEnd"),
    ] {
        std::fs::copy(fixture(&format!("{SIMPLE}/{turn}.jsonl")), &file).unwrap();
        hooked(&env, "claude-code", &event(name));
    }
    let one = TestEnv::new();
    import(
        &one,
        "claude-code",
        &fixture(&format!("{SIMPLE}/turn-2.jsonl")),
        true,
    );
    assert_eq!(sessions(&env), [SIMPLE_SESSION]);
    assert_eq!(
        state_of(&env, SIMPLE_SESSION),
        state_of(&one, SIMPLE_SESSION)
    );
    sound(&env, SIMPLE_SESSION);
    // Every reply holds its text (none left empty by the partial view).
    let subjects = subjects(&env, SIMPLE_SESSION);
    assert!(
        subjects.iter().all(|s| !s.contains("(continued)")),
        "{subjects:?}"
    );
    for n in nodes(&env, SIMPLE_SESSION) {
        if n["role"] == "llm" && n["metadata"]["tool_calls"].is_null() {
            assert!(n["output"].as_str().is_some_and(|t| !t.is_empty()), "{n}");
        }
    }
}

#[test]
fn real_claude_transcripts_cut_anywhere_are_one_import() {
    let bytes = std::fs::read(fixture(&format!("{SIMPLE}/turn-2.jsonl"))).unwrap();
    let ends = line_ends(&bytes);
    // turn-1.jsonl is a byte prefix of turn-2.jsonl: cut there, and at
    // every fifth line, torn lines included.
    let first = std::fs::metadata(fixture(&format!("{SIMPLE}/turn-1.jsonl")))
        .unwrap()
        .len() as usize;
    assert!(ends.contains(&first));
    let mut cuts = some_cuts(&bytes, 5);
    cuts.push(first);
    cuts.sort_unstable();
    cuts.dedup();
    prefixes_equal_one_import("claude-code", "3fb74381.jsonl", &bytes, &cuts, true);
    prefixes_equal_one_import("claude-code", "3fb74381.jsonl", &bytes, &cuts, false);
}

#[test]
fn a_real_compaction_keeps_one_root_and_whole_turns() {
    let file = fixture("claude/codemie-ai_codemie-code/session-624a4a58.first180.jsonl");
    let env = TestEnv::new();
    import(&env, "claude-code", &file, false);
    let [session] = &sessions(&env)[..] else {
        panic!()
    };
    let roots: Vec<Value> = nodes(&env, session)
        .into_iter()
        .filter(|n| n["predecessor"] == "ROOT")
        .map(|n| n["id"].clone())
        .collect();
    assert_eq!(roots.len(), 1, "{roots:?}");
    let subjects = subjects(&env, session);
    assert!(
        subjects.iter().all(|s| !s.contains("(continued)")),
        "{subjects:?}"
    );
    // Where the user stopped the agent (three times), the marker Claude Code
    // writes is no message: the turn it stopped is interrupted.
    assert!(
        subjects.iter().all(|s| !s.contains("[Request interrupted")),
        "{subjects:?}"
    );
    let log = env.git(session, &["log", "--format=%B%x00", "HEAD"]);
    let stopped: Vec<&str> = log
        .split('\0')
        .filter(|m| m.contains("\nStatus: interrupted"))
        .collect();
    assert_eq!(stopped.len(), 3, "{stopped:?}");
    let shown = env.ok(&["show", session]);
    assert_eq!(
        shown
            .matches("\n(stopped here: [Request interrupted by user])\n")
            .count(),
        3
    );
    sound(&env, session);
    // Cut at every twentieth line (and torn there): the same session.
    let bytes = std::fs::read(&file).unwrap();
    prefixes_equal_one_import(
        "claude-code",
        "624a4a58.jsonl",
        &bytes,
        &some_cuts(&bytes, 20),
        false,
    );
}

#[test]
fn a_real_subagent_through_subagent_stop_is_its_own_session() {
    let dir = "claude/codemie-ai_codemie-code/incremental-subagents";
    let parent = "claude-e9fb405b-169f-40eb-9396-7e75076f045d";
    let child = format!("{parent}-a485154");
    let env = TestEnv::new();
    let home = env.tmp.path().join("p");
    let main = home.join("turn-2.jsonl");
    let sub = home.join("turn-2/subagents/agent-a485154.jsonl");
    std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
    std::fs::copy(fixture(&format!("{dir}/turn-2.jsonl")), &main).unwrap();
    std::fs::copy(
        fixture(&format!("{dir}/turn-2/subagents/agent-a485154.jsonl")),
        &sub,
    )
    .unwrap();
    let sid = "e9fb405b-169f-40eb-9396-7e75076f045d";
    for event in [
        json!({"session_id": sid, "transcript_path": main, "agent_id": "a485154",
            "agent_transcript_path": sub, "hook_event_name": "SubagentStop"}),
        json!({"session_id": sid, "transcript_path": main, "hook_event_name": "Stop"}),
    ] {
        hooked(&env, "claude-code", &event);
    }
    assert_eq!(sessions(&env), [parent.to_string(), child.clone()]);
    // The parent's Task call names the subagent's session.
    let task = nodes(&env, parent)
        .into_iter()
        .find(|n| n["name"] == "Task")
        .expect("a Task node");
    assert_eq!(task["metadata"]["subagent_session"], child.as_str());
    // The subagent's turn is committed at its stop, as one import of its
    // finished transcript commits it.
    assert_eq!(subjects(&env, &child).len(), 2);
    let one = TestEnv::new();
    import(
        &one,
        "claude-code",
        &fixture(&format!("{dir}/turn-2.jsonl")),
        false,
    );
    import(
        &one,
        "claude-code",
        &fixture(&format!("{dir}/turn-2/subagents/agent-a485154.jsonl")),
        true,
    );
    for s in [parent, &child] {
        assert_eq!(state_of(&env, s), state_of(&one, s), "{s}");
        sound(&env, s);
    }
    // The parent holds the subagent's result: one import of the directory,
    // not ended, ends the subagent all the same.
    let dir_import = TestEnv::new();
    import(&dir_import, "claude-code", &fixture(dir), false);
    assert_eq!(state_of(&dir_import, &child), state_of(&one, &child));
}

const CODEX: &str = "codex/codemie-ai_codemie-code";

#[test]
fn real_codex_rollouts_cut_anywhere_are_one_import() {
    // The growing pair through the hook (notify after each turn).
    let env = TestEnv::new();
    let file = env.tmp.path().join("rollout.jsonl");
    for turn in ["turn-1", "turn-2"] {
        std::fs::copy(fixture(&format!("{CODEX}/incremental/{turn}.jsonl")), &file).unwrap();
        hooked(
            &env,
            "codex",
            &json!({"hook_event_name": "Stop", "transcript_path": file}),
        );
    }
    let one = TestEnv::new();
    import(
        &one,
        "codex",
        &fixture(&format!("{CODEX}/incremental/turn-2.jsonl")),
        false,
    );
    let made = sessions(&one);
    assert_eq!(sessions(&env), made);
    assert_eq!(state_of(&env, &made[0]), state_of(&one, &made[0]));
    sound(&env, &made[0]);
    for name in [
        "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl",
    ] {
        let bytes = std::fs::read(fixture(&format!("{CODEX}/{name}"))).unwrap();
        let cuts = some_cuts(&bytes, line_ends(&bytes).len() / 8);
        prefixes_equal_one_import("codex", name, &bytes, &cuts, true);
    }
}

#[test]
fn a_real_codex_first_message_after_a_blank_line_names_its_turn() {
    let name = "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl";
    let env = TestEnv::new();
    import(&env, "codex", &fixture(&format!("{CODEX}/{name}")), true);
    let [session] = &sessions(&env)[..] else {
        panic!()
    };
    let subjects = subjects(&env, session);
    assert!(
        subjects.iter().all(|s| !s.contains("(no text)")),
        "{subjects:?}"
    );
}

// ---- fixtures for each shape ----

fn claude_rec(kind: &str, uuid: &str, parent: Option<&str>, n: u32, extra: Value) -> Value {
    let mut r = json!({"type": kind, "uuid": uuid, "parentUuid": parent,
        "timestamp": format!("2026-11-02T09:00:{n:02}.000Z"), "sessionId": "s1",
        "cwd": "/home/me/proj", "version": "2.1.0", "isSidechain": false});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

fn user(uuid: &str, parent: Option<&str>, n: u32, text: &str) -> Value {
    claude_rec(
        "user",
        uuid,
        parent,
        n,
        json!({"message": {"role": "user", "content": text}}),
    )
}

fn reply(uuid: &str, parent: &str, n: u32, msg: &str, block: Value) -> Value {
    claude_rec(
        "assistant",
        uuid,
        Some(parent),
        n,
        json!({"message": {"id": msg, "model": "claude-opus-4", "role": "assistant",
            "content": [block], "usage": {"input_tokens": 3, "output_tokens": 4}}}),
    )
}

fn result(uuid: &str, parent: &str, n: u32, call: &str) -> Value {
    claude_rec(
        "user",
        uuid,
        Some(parent),
        n,
        json!({"message": {"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": call, "content": "a.txt"}]}}),
    )
}

/// One reply written as two records (its text, then its tool call) under one
/// `message.id`, a tool result, the closing reply; then a second turn.
fn multi_record_reply() -> Vec<Value> {
    vec![
        user("u1", None, 1, "list the files"),
        reply(
            "a1",
            "u1",
            2,
            "msg_1",
            json!({"type": "text", "text": "Let me look."}),
        ),
        reply(
            "a2",
            "a1",
            3,
            "msg_1",
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}),
        ),
        result("r1", "a2", 4, "toolu_1"),
        reply(
            "a3",
            "r1",
            5,
            "msg_2",
            json!({"type": "text", "text": "There is a.txt."}),
        ),
        user("u2", Some("a3"), 6, "thanks"),
        reply(
            "a4",
            "u2",
            7,
            "msg_3",
            json!({"type": "text", "text": "You're welcome."}),
        ),
    ]
}

#[test]
fn a_reply_imported_before_its_tool_call_keeps_its_text() {
    let lines = multi_record_reply();
    let bytes = jsonl(&lines);
    let ends = line_ends(&bytes);
    // After the reply's text record alone, then everything.
    prefixes_equal_one_import(
        "claude-code",
        "s1.jsonl",
        &bytes,
        &[ends[1], ends[2] - 5],
        true,
    );
    let env = TestEnv::new();
    let file = env.tmp.path().join("s1.jsonl");
    std::fs::write(&file, &bytes[..ends[1]]).unwrap();
    import(&env, "claude-code", &file, false);
    std::fs::write(&file, &bytes).unwrap();
    import(&env, "claude-code", &file, true);
    let first = nodes(&env, "claude-s1")
        .into_iter()
        .find(|n| n["id"] == "a-msg_1")
        .expect("the reply's node");
    assert_eq!(first["output"], "Let me look.");
    let shown = env.ok(&["show", "claude-s1"]);
    assert!(shown.contains("Let me look."), "{shown}");
    assert_eq!(
        subjects(&env, "claude-s1")[1..],
        ["turn 1: list the files", "turn 2: thanks"]
    );
}

/// A compaction between a tool call and the reply after it: the records
/// after the boundary name what they go on from only as `logicalParentUuid`.
fn mid_turn_compaction() -> Vec<Value> {
    let mut boundary = claude_rec(
        "system",
        "c1",
        None,
        4,
        json!({"subtype": "compact_boundary", "compactMetadata": {"trigger": "auto", "preTokens": 9}}),
    );
    boundary["logicalParentUuid"] = "r1".into();
    let summary = claude_rec(
        "user",
        "cs1",
        Some("c1"),
        5,
        json!({"isCompactSummary": true, "message": {"role": "user", "content": "Summary so far"}}),
    );
    let mut after = reply(
        "a3",
        "cs1",
        6,
        "msg_2",
        json!({"type": "text", "text": "Done: a.txt."}),
    );
    after["parentUuid"] = Value::Null;
    after["logicalParentUuid"] = "cs1".into();
    vec![
        user("u1", None, 1, "list the files"),
        reply(
            "a2",
            "u1",
            2,
            "msg_1",
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}),
        ),
        result("r1", "a2", 3, "toolu_1"),
        boundary,
        summary,
        after,
        user("u2", Some("a3"), 7, "next"),
        reply(
            "a4",
            "u2",
            8,
            "msg_3",
            json!({"type": "text", "text": "Ok."}),
        ),
    ]
}

#[test]
fn a_compaction_in_the_middle_of_a_turn_keeps_one_root() {
    let bytes = jsonl(&mid_turn_compaction());
    let env = TestEnv::new();
    let file = env.tmp.path().join("s1.jsonl");
    std::fs::write(&file, &bytes).unwrap();
    import(&env, "claude-code", &file, true);
    let all = nodes(&env, "claude-s1");
    let roots: Vec<&Value> = all.iter().filter(|n| n["predecessor"] == "ROOT").collect();
    assert_eq!(roots.len(), 1, "{roots:?}");
    let after = all.iter().find(|n| n["id"] == "a-msg_2").unwrap();
    assert_ne!(after["predecessor"], "ROOT");
    assert_eq!(
        subjects(&env, "claude-s1")[1..],
        ["turn 1: list the files", "turn 2: next"]
    );
    sound(&env, "claude-s1");
    prefixes_equal_one_import("claude-code", "s1.jsonl", &bytes, &line_ends(&bytes), true);
}

/// A Codex turn cut off after its reasoning, a message and a call that
/// never got its output.
fn codex_cut_off() -> Vec<Value> {
    let mut n = 0;
    let mut rec = |kind: &str, payload: Value| {
        n += 1;
        json!({"timestamp": format!("2026-11-02T09:00:{n:02}.000Z"), "type": kind, "payload": payload})
    };
    vec![
        rec("session_meta", json!({"id": "c1", "cwd": "/home/me/proj"})),
        rec(
            "event_msg",
            json!({"type": "task_started", "turn_id": "t1"}),
        ),
        rec(
            "turn_context",
            json!({"turn_id": "t1", "cwd": "/home/me/proj", "model": "gpt-5-codex"}),
        ),
        rec(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the build"}]}),
        ),
        rec(
            "event_msg",
            json!({"type": "user_message", "message": "fix the build"}),
        ),
        rec(
            "response_item",
            json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Reading the error"}]}),
        ),
        rec(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Running the tests first."}]}),
        ),
        rec(
            "response_item",
            json!({"type": "function_call", "name": "shell", "call_id": "call_1",
                "arguments": "{\"command\":[\"cargo\",\"test\"]}"}),
        ),
    ]
}

#[test]
fn a_codex_session_cut_off_mid_turn_keeps_its_last_answer() {
    let bytes = jsonl(&codex_cut_off());
    let env = TestEnv::new();
    let file = env.tmp.path().join("rollout.jsonl");
    std::fs::write(&file, &bytes).unwrap();
    let out = env.run(&["import", "codex", file.to_str().unwrap()]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("still open"), "{err}");
    // Pending, not lost: `nodes` and `show` name it; `verify` notes it.
    let listed = env.ok(&["nodes", "codex-c1"]);
    assert!(listed.contains("Running the tests first."), "{listed}");
    let v = env.run(&["verify", "codex-c1"]);
    assert!(v.status.success());
    assert!(String::from_utf8_lossy(&v.stdout).contains("import_turn_open"));
    import(&env, "codex", &file, true);
    let body = env.git("codex-c1", &["log", "-1", "--format=%B"]);
    assert!(body.contains("Status: interrupted"), "{body}");
    let all = nodes(&env, "codex-c1");
    let has = |pred: &dyn Fn(&Value) -> bool| all.iter().any(pred);
    assert!(has(&|n| n["output"] == "Running the tests first."));
    assert!(has(
        &|n| n["name"] == "shell" || n["metadata"]["tool_calls"].to_string().contains("call_1")
    ));
    assert!(has(&|n| n.to_string().contains("Reading the error")));
    sound(&env, "codex-c1");
    prefixes_equal_one_import("codex", "rollout.jsonl", &bytes, &line_ends(&bytes), true);
}

#[test]
fn an_older_layout_subagent_is_a_session_of_its_own() {
    // `agent-*.jsonl` beside the parent's file, its `sessionId` the parent's.
    let env = TestEnv::new();
    let dir = env.tmp.path().join("p");
    std::fs::create_dir_all(&dir).unwrap();
    let mut main = multi_record_reply();
    main[2]["message"]["content"][0]["name"] = "Task".into();
    main[3]["toolUseResult"] = json!({"agentId": "abc123", "status": "completed"});
    std::fs::write(dir.join("s1.jsonl"), jsonl(&main)).unwrap();
    let sub: Vec<Value> = [
        user("su1", None, 2, "find the files"),
        reply(
            "sa1",
            "su1",
            3,
            "msg_s1",
            json!({"type": "text", "text": "Found a.txt."}),
        ),
    ]
    .into_iter()
    .map(|mut r| {
        r["isSidechain"] = true.into();
        r["agentId"] = "abc123".into();
        r
    })
    .collect();
    std::fs::write(dir.join("agent-abc123.jsonl"), jsonl(&sub)).unwrap();
    env.ok(&["import", "claude-code", dir.to_str().unwrap(), "--finish"]);
    assert_eq!(sessions(&env), ["claude-s1", "claude-s1-abc123"]);
    // The parent has one root; its Task call names the subagent's session.
    let parent = nodes(&env, "claude-s1");
    assert_eq!(
        parent.iter().filter(|n| n["predecessor"] == "ROOT").count(),
        1
    );
    assert!(parent.iter().all(|n| n["output"] != "Found a.txt."));
    let task = parent.iter().find(|n| n["name"] == "Task").unwrap();
    assert_eq!(task["metadata"]["subagent_session"], "claude-s1-abc123");
    let child = nodes(&env, "claude-s1-abc123");
    assert!(child.iter().any(|n| n["output"] == "Found a.txt."));
    for s in ["claude-s1", "claude-s1-abc123"] {
        sound(&env, s);
    }
    // Through the hooks (no `SubagentStop`: hooks installed before it was
    // ours), the session's end finds the subagent beside it and ends it.
    let live = TestEnv::new();
    let file = dir.join("s1.jsonl");
    for name in ["Stop", "SessionEnd"] {
        hooked(
            &live,
            "claude-code",
            &json!({"session_id": "s1", "transcript_path": file, "hook_event_name": name}),
        );
    }
    for s in ["claude-s1", "claude-s1-abc123"] {
        assert_eq!(state_of(&live, s), state_of(&env, s), "{s}");
    }
    // The subagent resumed (a later call names it again, no result yet):
    // not over while it runs, though its first result is there.
    let mut resumed = main.clone();
    let n = resumed.len();
    resumed.extend([
        user("u3", Some("a4"), 8, "go on"),
        reply(
            "a5",
            "u3",
            9,
            "msg_4",
            json!({"type": "tool_use", "id": "toolu_2", "name": "Task",
                "input": {"resume": "abc123", "prompt": "more"}}),
        ),
    ]);
    assert_eq!(resumed.len(), n + 2);
    let later = TestEnv::new();
    let dir2 = later.tmp.path().join("p");
    std::fs::create_dir_all(&dir2).unwrap();
    std::fs::write(dir2.join("s1.jsonl"), jsonl(&resumed)).unwrap();
    std::fs::write(dir2.join("agent-abc123.jsonl"), jsonl(&sub)).unwrap();
    later.ok(&["import", "claude-code", dir2.to_str().unwrap()]);
    assert_eq!(subjects(&later, "claude-s1-abc123").len(), 1);
    assert!(
        later
            .ok(&["nodes", "claude-s1-abc123"])
            .contains("in progress")
    );
}

#[test]
fn a_typed_prompt_with_the_markers_words_is_a_message() {
    // Claude Code writes its interrupt marker as a text block; a prompt the
    // user typed is a string, whatever it says.
    let lines = [
        user("u1", None, 1, "start"),
        reply(
            "a1",
            "u1",
            2,
            "msg_1",
            json!({"type": "text", "text": "ok"}),
        ),
        user("u2", Some("a1"), 3, "[Request interrupted by user]"),
        reply("a2", "u2", 4, "msg_2", json!({"type": "text", "text": "?"})),
    ];
    let env = TestEnv::new();
    let file = env.tmp.path().join("s1.jsonl");
    std::fs::write(&file, jsonl(&lines)).unwrap();
    import(&env, "claude-code", &file, true);
    assert_eq!(
        subjects(&env, "claude-s1")[1..],
        ["turn 1: start", "turn 2: [Request interrupted by user]"]
    );
    assert!(
        !env.git("claude-s1", &["log", "--format=%B"])
            .contains("Status:")
    );
}

#[test]
fn an_older_codex_rollout_imports() {
    // Before `session_meta`: a header, then the items bare.
    let lines = [
        json!({"id": "0a1b", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": null,
            "git": {"branch": "main"}}),
        json!({"record_type": "state"}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text",
            "text": "<environment_context>\n  <cwd>/home/me/old</cwd>\n</environment_context>"}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what is here?"}]}),
        json!({"type": "function_call", "name": "shell", "call_id": "call_1", "arguments": "{\"command\":[\"ls\"]}"}),
        json!({"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One file, a.txt."}]}),
        json!({"record_type": "state"}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "thanks"}]}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Welcome."}]}),
    ];
    let bytes = jsonl(&lines);
    let env = TestEnv::new();
    let file = env.tmp.path().join("rollout-2025-05-01-0a1b.jsonl");
    std::fs::write(&file, &bytes).unwrap();
    import(&env, "codex", &file, true);
    assert_eq!(sessions(&env), ["codex-0a1b"]);
    assert_eq!(
        subjects(&env, "codex-0a1b")[1..],
        ["turn 1: what is here?", "turn 2: thanks"]
    );
    let all = nodes(&env, "codex-0a1b");
    assert!(all.iter().any(|n| n["output"] == "One file, a.txt."));
    assert!(all.iter().any(|n| n["output"] == "Welcome."));
    assert_eq!(env.meta("codex-0a1b")["work_dir"], "/home/me/old");
    sound(&env, "codex-0a1b");
    prefixes_equal_one_import("codex", "r.jsonl", &bytes, &line_ends(&bytes), true);
}

/// Imports `first` (a prefix of `whole`), then `whole` by a process killed
/// at `at` (ended when `killed_ends`), then again (`again`: a plain import,
/// `--finish`, or the `SessionEnd` hook); the session must be the one an
/// import of `whole` with `--finish` makes.
fn killed_then_again(
    one: &TestEnv,
    session: &str,
    (first, whole): (&[u8], &[u8]),
    at: &str,
    killed_ends: bool,
    again: &str,
) {
    let env = TestEnv::new();
    let file = env.tmp.path().join("s1.jsonl");
    std::fs::write(&file, first).unwrap();
    import(&env, "claude-code", &file, false);
    std::fs::write(&file, whole).unwrap();
    let mut killed = env.cmd();
    killed.env("GIT_SESSION_CRASH_AT", at);
    killed.args(["import", "claude-code", file.to_str().unwrap()]);
    if killed_ends {
        killed.arg("--finish");
    }
    let out = crate::env::output(&mut killed);
    assert!(
        out.status.code() != Some(1),
        "{at}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    match again {
        "import" => {
            import(&env, "claude-code", &file, false);
        }
        "finish" => {
            import(&env, "claude-code", &file, true);
        }
        _ => hooked(
            &env,
            "claude-code",
            &json!({"session_id": "x", "transcript_path": file, "hook_event_name": "SessionEnd"}),
        ),
    }
    // (A temp file the killed process left is `verify --fix`'s to remove.)
    env.run(&["verify", "--fix", session]);
    assert_eq!(
        state_of(&env, session),
        state_of(one, session),
        "killed at {at} (ending: {killed_ends}), then {again}"
    );
    sound(&env, session);
}

fn crash_points() -> Vec<String> {
    let mut points = Vec::new();
    for n in [1, 2, 5, 9] {
        points.push(format!("append-after-node#{n}"));
        points.push(format!("object-written#{n}"));
        points.push(format!("after-rename#{n}"));
    }
    points.push("index-replaced".into());
    points
}

#[test]
fn an_import_killed_anywhere_then_run_again_is_one_import() {
    // The real transcript after turn 1 imported, then the grown one
    // imported by a process killed at each write step, then again.
    let turn1 = std::fs::read(fixture(&format!("{SIMPLE}/turn-1.jsonl"))).unwrap();
    let turn2 = std::fs::read(fixture(&format!("{SIMPLE}/turn-2.jsonl"))).unwrap();
    let one = TestEnv::new();
    import(
        &one,
        "claude-code",
        &fixture(&format!("{SIMPLE}/turn-2.jsonl")),
        true,
    );
    for (i, at) in crash_points().iter().enumerate() {
        let again = if i % 2 == 0 { "finish" } else { "hook" };
        killed_then_again(
            &one,
            SIMPLE_SESSION,
            (&turn1, &turn2),
            at,
            i % 2 == 0,
            again,
        );
    }
}

#[test]
fn an_ending_import_killed_anywhere_is_ended_by_any_run_after_it() {
    // A last turn the transcript never closes (a message without its
    // reply): the run that ends the session is killed; whatever runs next,
    // a plain import too, ends it as it would have.
    let mut lines = multi_record_reply();
    lines.pop();
    let whole = jsonl(&lines);
    let first = &whole[..line_ends(&whole)[2]];
    let one = TestEnv::new();
    let file = one.tmp.path().join("s1.jsonl");
    std::fs::write(&file, &whole).unwrap();
    import(&one, "claude-code", &file, true);
    assert!(
        env_body(&one, "claude-s1").contains("Status: interrupted"),
        "{}",
        env_body(&one, "claude-s1")
    );
    for (i, at) in crash_points().iter().enumerate() {
        let again = ["import", "finish", "hook"][i % 3];
        killed_then_again(&one, "claude-s1", (first, &whole), at, true, again);
    }
}

fn env_body(env: &TestEnv, session: &str) -> String {
    env.git(session, &["log", "-1", "--format=%B"])
}

#[test]
fn a_turn_the_user_stopped_is_committed_at_once_and_says_so() {
    // Codex: `turn_aborted` where the user pressed Esc, then a new turn.
    let mut lines = codex_cut_off();
    let at = |n: usize| format!("2026-11-02T09:01:{n:02}.000Z");
    for (n, (kind, payload)) in [
        (
            "event_msg",
            json!({"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted"}),
        ),
        (
            "event_msg",
            json!({"type": "task_started", "turn_id": "t2"}),
        ),
        (
            "response_item",
            json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "just build it"}]}),
        ),
        (
            "event_msg",
            json!({"type": "user_message", "message": "just build it"}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        lines.push(json!({"timestamp": at(n), "type": kind, "payload": payload}));
    }
    let bytes = jsonl(&lines);
    let env = TestEnv::new();
    let file = env.tmp.path().join("rollout.jsonl");
    // Up to the abort: the turn is over, committed by a plain import.
    let abort = line_ends(&bytes)[8];
    std::fs::write(&file, &bytes[..abort]).unwrap();
    import(&env, "codex", &file, false);
    let body = env.git("codex-c1", &["log", "-1", "--format=%B"]);
    assert!(body.starts_with("turn 1: fix the build"), "{body}");
    assert!(body.contains("Status: interrupted"), "{body}");
    let shown = env.ok(&["show", "codex-c1"]);
    assert!(shown.contains("\n(stopped here: interrupted)\n"), "{shown}");
    std::fs::write(&file, &bytes).unwrap();
    import(&env, "codex", &file, true);
    assert_eq!(
        subjects(&env, "codex-c1")[1..],
        ["turn 1: fix the build", "turn 2: just build it"]
    );
    sound(&env, "codex-c1");
    prefixes_equal_one_import("codex", "rollout.jsonl", &bytes, &line_ends(&bytes), true);
}

#[test]
fn a_local_commands_output_is_no_message() {
    // `/model` run in Claude Code: the command's record, then what it
    // printed as a record of its own; then a typed message.
    let lines = [
        user(
            "u1",
            None,
            1,
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>",
        ),
        user(
            "o1",
            Some("u1"),
            2,
            "<local-command-stdout>Set model to opus</local-command-stdout>",
        ),
        user("u2", Some("o1"), 3, "hello"),
        reply(
            "a2",
            "u2",
            4,
            "msg_2",
            json!({"type": "text", "text": "hi"}),
        ),
    ];
    let bytes = jsonl(&lines);
    let env = TestEnv::new();
    let file = env.tmp.path().join("s1.jsonl");
    std::fs::write(&file, &bytes).unwrap();
    import(&env, "claude-code", &file, true);
    assert_eq!(
        subjects(&env, "claude-s1")[1..],
        [
            "turn 1: <command-name>/model</command-name>",
            "turn 2: hello"
        ]
    );
    let out = nodes(&env, "claude-s1")
        .into_iter()
        .find(|n| n["name"] == "local-command")
        .expect("the command's output");
    assert_eq!(out["output"], "Set model to opus");
    assert_eq!(out["caller"], "u-u1");
    let hello = nodes(&env, "claude-s1")
        .into_iter()
        .find(|n| n["id"] == "u-u2")
        .unwrap();
    assert_eq!(hello["predecessor"], "u-u1");
    sound(&env, "claude-s1");
    prefixes_equal_one_import("claude-code", "s1.jsonl", &bytes, &line_ends(&bytes), true);
    // The real one: `/clear` and its (empty) output are one turn.
    let real = TestEnv::new();
    import(
        &real,
        "claude-code",
        &fixture("claude/codemie-ai_codemie-code/session-624a4a58.first180.jsonl"),
        false,
    );
    let [session] = &sessions(&real)[..] else {
        panic!()
    };
    let subjects = subjects(&real, session);
    assert!(subjects[1].contains("/clear"), "{subjects:?}");
    assert!(
        !subjects.iter().any(|s| s.contains("local-command-stdout")),
        "{subjects:?}"
    );
}

#[test]
fn a_subagent_transcript_that_lags_its_stop_is_caught_up() {
    // `SubagentStop` comes while the subagent's file lacks its last line,
    // and before the parent holds the call's result; the next event sees
    // both written.
    let dir = "claude/codemie-ai_codemie-code/incremental-subagents";
    let parent = "claude-e9fb405b-169f-40eb-9396-7e75076f045d";
    let child = format!("{parent}-a485154");
    let main_bytes = std::fs::read(fixture(&format!("{dir}/turn-2.jsonl"))).unwrap();
    let sub_bytes = std::fs::read(fixture(&format!(
        "{dir}/turn-2/subagents/agent-a485154.jsonl"
    )))
    .unwrap();
    let result = main_bytes
        .windows(b"\"agentId\":\"a485154\"".len())
        .position(|w| w == b"\"agentId\":\"a485154\"")
        .unwrap();
    let before_result = main_bytes[..result]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap()
        + 1;
    let sub_ends = line_ends(&sub_bytes);
    let env = TestEnv::new();
    let home = env.tmp.path().join("p");
    let main = home.join("turn-2.jsonl");
    let sub = home.join("turn-2/subagents/agent-a485154.jsonl");
    std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
    std::fs::write(&main, &main_bytes[..before_result]).unwrap();
    std::fs::write(&sub, &sub_bytes[..sub_ends[sub_ends.len() - 2]]).unwrap();
    let sid = "e9fb405b-169f-40eb-9396-7e75076f045d";
    hooked(
        &env,
        "claude-code",
        &json!({"session_id": sid, "transcript_path": main, "agent_id": "a485154",
            "agent_transcript_path": sub, "hook_event_name": "SubagentStop"}),
    );
    std::fs::write(&main, &main_bytes).unwrap();
    std::fs::write(&sub, &sub_bytes).unwrap();
    hooked(
        &env,
        "claude-code",
        &json!({"session_id": sid, "transcript_path": main, "hook_event_name": "Stop"}),
    );
    let one = TestEnv::new();
    import(&one, "claude-code", &fixture(dir), false);
    for s in [parent, &child] {
        assert_eq!(state_of(&env, s), state_of(&one, s), "{s}");
        sound(&env, s);
    }
    let body = env.git(&child, &["log", "--format=%B"]);
    assert!(!body.contains("Status: interrupted"), "{body}");
}

#[test]
fn an_event_before_its_transcript_is_written_is_no_failure() {
    let env = TestEnv::new();
    let file = env.tmp.path().join("p/not-yet.jsonl");
    hooked(
        &env,
        "claude-code",
        &json!({"session_id": "s1", "transcript_path": file, "hook_event_name": "UserPromptSubmit"}),
    );
    let v = env.run(&["verify", "--all"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}
