//! `import claude-code`: transcripts built here in the shapes of the
//! reference (`agent-transcripts.md`), imported, and checked with git and
//! against the transcript rebuilt from the session.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::env::TestEnv;

pub(crate) const SID: &str = "11111111-2222-3333-4444-555555555555";
pub(crate) const SESSION: &str = "claude-11111111-2222-3333-4444-555555555555";

/// A Claude Code transcript under construction: one JSON record per line.
#[derive(Default, Clone)]
pub(crate) struct Transcript {
    lines: Vec<Value>,
    /// Seconds after 2026-11-01T10:00:00Z of the next record.
    clock: u32,
}

impl Transcript {
    fn ts(&mut self) -> String {
        self.clock += 1;
        format!(
            "2026-11-01T10:{:02}:{:02}.000Z",
            self.clock / 60,
            self.clock % 60
        )
    }

    pub(crate) fn record(
        &mut self,
        kind: &str,
        uuid: &str,
        parent: Option<&str>,
        extra: Value,
    ) -> &mut Self {
        let mut r = json!({"type": kind, "uuid": uuid, "parentUuid": parent,
            "timestamp": self.ts(), "sessionId": SID, "cwd": "/home/me/proj",
            "version": "2.0.1", "isSidechain": false, "userType": "external"});
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        self.lines.push(r);
        self
    }

    pub(crate) fn user(&mut self, uuid: &str, parent: Option<&str>, text: &str) -> &mut Self {
        self.record(
            "user",
            uuid,
            parent,
            json!({"message": {"role": "user", "content": text}}),
        )
    }

    /// One record of reply `msg` holding one content block.
    pub(crate) fn reply(&mut self, uuid: &str, parent: &str, msg: &str, block: Value) -> &mut Self {
        self.record(
            "assistant",
            uuid,
            Some(parent),
            json!({"requestId": format!("req_{msg}"), "message": {"id": msg, "role": "assistant",
                "model": "claude-sonnet-4", "content": [block], "stop_reason": null,
                "usage": {"input_tokens": 100, "output_tokens": 7}}}),
        )
    }

    pub(crate) fn tool_result(
        &mut self,
        uuid: &str,
        parent: &str,
        call: &str,
        out: &str,
    ) -> &mut Self {
        self.record(
            "user",
            uuid,
            Some(parent),
            json!({"message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": call, "content": out}]}, "toolUseResult": {"stdout": out},
                "sourceToolAssistantUUID": parent}),
        )
    }

    /// Two turns: a reply of three records with a tool loop, progress, a
    /// system record and a record type nobody knows; then a short turn.
    pub(crate) fn two_turns() -> Transcript {
        let mut t = Transcript::default();
        t.lines
            .push(json!({"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}}));
        t.user("u1", None, "Fix the bug in main.rs")
            .reply("a1", "u1", "msg_1", json!({"type": "thinking", "thinking": "hmm", "signature": "sig"}))
            .reply("a2", "a1", "msg_1", json!({"type": "text", "text": "Let me read it."}))
            .reply("a3", "a2", "msg_1", json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "main.rs"}}))
            .record("progress", "p1", Some("a3"), json!({"data": {"type": "hook_progress"}, "toolUseID": "toolu_1"}))
            .tool_result("r1", "a3", "toolu_1", "fn main() {}")
            .reply("a4", "r1", "msg_2", json!({"type": "tool_use", "id": "toolu_2", "name": "Edit", "input": {"old": "{}", "new": "{ ok() }"}}))
            .tool_result("r2", "a4", "toolu_2", "edited")
            .reply("a5", "r2", "msg_3", json!({"type": "text", "text": "Fixed."}))
            .record("system", "s1", Some("a5"), json!({"subtype": "turn_duration", "durationMs": 6000}))
            .record("brand-new-type", "w1", Some("s1"), json!({"payload": {"x": 1}}))
            .user("u2", Some("w1"), "Thanks! Now add a test.")
            .reply("a6", "u2", "msg_4", json!({"type": "text", "text": "Done."}));
        t
    }

    /// Two turns, a resume copy, a rewind, a compaction and the turn after.
    pub(crate) fn eventful() -> Transcript {
        let mut t = Transcript::two_turns();
        // A resume copy of an earlier record: kept, not a node again.
        let copy = t.lines[1].clone();
        t.lines.push(copy);
        // A rewind: a new message answering turn 1's first reply again.
        t.user("u3", Some("a3"), "No, read lib.rs instead").reply(
            "a7",
            "u3",
            "msg_5",
            json!({"type": "text", "text": "Reading lib.rs."}),
        );
        // A compaction: the boundary, its summary, then the conversation goes on.
        let last = "a7";
        t.record(
            "system",
            "c1",
            None,
            json!({"subtype": "compact_boundary", "logicalParentUuid": last,
                "compactMetadata": {"trigger": "auto", "preTokens": 150000}}),
        )
        .record(
            "user",
            "cs1",
            Some("c1"),
            json!({"isCompactSummary": true, "message": {"role": "user", "content": "Summary: fixed main.rs"}}),
        )
        .user("u4", Some("cs1"), "Carry on")
        .reply("a8", "u4", "msg_6", json!({"type": "text", "text": "Carrying on."}));
        t
    }

    fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    pub(crate) fn write(&self, dir: &Path, torn: &str) -> PathBuf {
        let p = dir.join("-home-me-proj");
        std::fs::create_dir_all(&p).unwrap();
        let file = p.join(format!("{SID}.jsonl"));
        std::fs::write(&file, self.text() + torn).unwrap();
        file
    }
}

/// The transcript rebuilt from the session: every node's source records,
/// in line order.
fn rebuilt(env: &TestEnv, session: &str) -> Vec<Value> {
    rebuilt_of(env, session, None)
}

/// The transcript `transcript` (the session's own: `None`) rebuilt from
/// the session's source records.
pub(crate) fn rebuilt_of(env: &TestEnv, session: &str, transcript: Option<&str>) -> Vec<Value> {
    let mut kept: Vec<(u64, Value)> = Vec::new();
    for e in std::fs::read_dir(env.session_dir(session).join("history")).unwrap() {
        let path = e.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".gs-tmp")
        {
            continue; // a temp file a killed command left (`recover` removes it)
        }
        let node: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        for r in node["metadata"]["source_records"].as_array().unwrap() {
            if r["transcript"].as_str() != transcript {
                continue;
            }
            kept.push((r["line"].as_u64().unwrap(), r["record"].clone()));
        }
    }
    kept.sort_by_key(|(l, _)| *l);
    let lines: Vec<u64> = kept.iter().map(|(l, _)| *l).collect();
    assert_eq!(
        lines,
        (0..lines.len() as u64).collect::<Vec<_>>(),
        "every line once"
    );
    kept.into_iter().map(|(_, r)| r).collect()
}

pub(crate) fn node(env: &TestEnv, session: &str, file: &str) -> Value {
    let path = env.session_dir(session).join("history").join(file);
    serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|_| panic!("{file}"))).unwrap()
}

/// Import the whole transcript, the session over (`--finish`).
fn import(env: &TestEnv, path: &Path) -> String {
    env.ok(&["import", "claude-code", "--finish", path.to_str().unwrap()])
}

/// Import what the transcript has closed, the session still going.
fn import_open(env: &TestEnv, path: &Path) -> String {
    env.ok(&["import", "claude-code", path.to_str().unwrap()])
}

#[test]
fn a_claude_code_transcript_becomes_a_session_with_one_commit_per_turn() {
    let env = TestEnv::new();
    let t = Transcript::two_turns();
    let file = t.write(
        &env.tmp.path().join("claude"),
        "{\"type\":\"user\",\"uuid\":\"torn",
    );
    let out = env.run(&[
        "import",
        "claude-code",
        "--finish",
        env.tmp.path().join("claude").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(":15: torn last line"), "{stderr}");
    // Nodes: the user messages, one node per reply, one per tool call.
    let files = env.history_files(SESSION);
    assert_eq!(
        files,
        [
            "000001-u-u-u1.json",
            "000002-a-a-msg_1.json",
            "000003-t-t-toolu_1.json",
            "000004-a-a-msg_2.json",
            "000005-t-t-toolu_2.json",
            "000006-a-a-msg_3.json",
            "000007-u-u-u2.json",
            "000008-a-a-msg_4.json",
        ]
    );
    let reply = node(&env, SESSION, "000002-a-a-msg_1.json");
    assert_eq!(reply["output"], "Let me read it.");
    assert_eq!(reply["predecessor"], "u-u1");
    assert_eq!(reply["metadata"]["model"], "claude-sonnet-4");
    assert_eq!(
        reply["metadata"]["usage"]["output_tokens"], 7,
        "counted once"
    );
    assert_eq!(
        reply["metadata"]["source_records"]
            .as_array()
            .unwrap()
            .len(),
        4,
        "three records and the progress"
    );
    let tool = node(&env, SESSION, "000003-t-t-toolu_1.json");
    assert_eq!(tool["caller"], "a-msg_1");
    assert_eq!(tool["name"], "Read");
    assert_eq!(tool["input"]["file_path"], "main.rs");
    assert_eq!(tool["output"], "fn main() {}");
    // The tool loop's next reply continues the reply before it.
    assert_eq!(
        node(&env, SESSION, "000004-a-a-msg_2.json")["predecessor"],
        "a-msg_1"
    );
    assert_eq!(
        node(&env, SESSION, "000007-u-u-u2.json")["predecessor"],
        "a-msg_3"
    );
    // One commit per turn, dated by its last node's first record.
    let log = env.git(SESSION, &["log", "--format=%s|%ad", "--date=iso-strict"]);
    assert_eq!(
        log,
        "turn 2: Thanks! Now add a test.|2026-11-01T10:00:13Z\n\
         turn 1: Fix the bug in main.rs|2026-11-01T10:00:09Z\n\
         session init|2026-11-01T10:00:01Z\n"
    );
    env.assert_clean(SESSION);
    assert_eq!(env.ok(&["verify", SESSION]), "");
    let meta = env.meta(SESSION);
    assert_eq!(meta["source"], "claude-code");
    assert_eq!(meta["agent_id"], "claude-sonnet-4");
    assert_eq!(meta["title"], "Fix the bug in main.rs");
    // Nothing of the transcript is lost: it is rebuilt from the session
    // (minus the torn line).
    assert_eq!(rebuilt(&env, SESSION), t.lines);
    // Twice: nothing new.
    let again = env.ok(&["--json", "import", "claude-code", file.to_str().unwrap()]);
    let rec: Value = serde_json::from_str(again.lines().next().unwrap()).unwrap();
    assert_eq!(
        (rec["type"].as_str(), rec["data"]["nodes"].as_u64()),
        (Some("imported"), Some(0))
    );
}

#[test]
fn the_same_transcript_gives_the_same_commits_anywhere() {
    let t = Transcript::two_turns();
    let mut logs = Vec::new();
    for now in ["1800000000", "1900000000"] {
        let mut env = TestEnv::new();
        env.now = Some(now.parse().unwrap());
        let file = t.write(env.tmp.path(), "");
        import(&env, &file);
        logs.push(env.git(SESSION, &["log", "--all", "--format=%H %T"]));
    }
    assert_eq!(logs[0], logs[1]);
}

/// What an import cannot use it says: a special file named on the command
/// line fails (exit 1, named); a file with no conversation in it (not a
/// transcript, or another agent's) or an empty one is named in a warning,
/// and no session is made of it. A dry run of a new transcript counts the
/// session it would make, and makes none.
#[test]
fn an_import_names_what_it_cannot_use() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("in");
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    crate::env::mkfifo(&dir.join("fifo"));
    for special in [path("fifo"), "/dev/zero".into()] {
        let err = env.fails(&["import", "claude-code", &special], 1);
        assert!(
            err.contains(&format!("import of `{special}` failed"))
                && err.contains("not a regular file"),
            "{err}"
        );
    }
    std::fs::write(dir.join("notes.jsonl"), "not json\n[1, 2]\n{\"a\": 1}\n").unwrap();
    std::fs::write(dir.join("empty.jsonl"), "").unwrap();
    let claude = Transcript::two_turns().write(&dir, "");
    let claude = claude.to_str().unwrap();
    for (agent, file, says) in [
        (
            "claude-code",
            path("notes.jsonl"),
            "no Claude Code conversation in its 3 line(s)",
        ),
        ("claude-code", path("empty.jsonl"), "empty"),
        ("codex", claude.to_string(), "no Codex conversation in its"),
    ] {
        let out = env.run(&["--json", "import", agent, &file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(
            err.contains(&format!("`{file}`: {says}")) && err.contains("nothing imported"),
            "{agent} {file}: {err}"
        );
        let imported: Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap())
                .unwrap();
        assert_eq!(imported["type"], "imported");
        assert_eq!(imported["data"]["no_conversation"], true, "{imported}");
    }
    assert!(env.run(&["list"]).stdout.is_empty());
    let plan = env.ok(&["--json", "import", "claude-code", claude, "--dry-run"]);
    let records: Vec<Value> = plan
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let imported = records.iter().find(|r| r["type"] == "imported").unwrap();
    assert_eq!(imported["data"]["new_session"], true, "{plan}");
    let summary = records
        .iter()
        .find(|r| r["type"] == "import_summary")
        .unwrap();
    assert_eq!(summary["data"]["new_sessions"], 1, "{plan}");
    assert!(env.run(&["list"]).stdout.is_empty());
    // Imported for real, it says the same; again, there is nothing new and
    // no warning. A line that is not JSON is kept raw, and counted.
    let mut text = std::fs::read_to_string(claude).unwrap();
    text.insert_str(text.find('\n').unwrap() + 1, "not json\n");
    std::fs::write(claude, text).unwrap();
    let out = env.run(&["--json", "import", "claude-code", claude]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"new_sessions\":1"), "{stdout}");
    assert!(
        stdout.contains("\"raw_lines\":1,\"no_conversation\":false"),
        "{stdout}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 line(s) are not JSON: kept as they are"),
        "{err}"
    );
    let again = env.run(&["import", "claude-code", claude]);
    assert!(again.status.success());
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    env.assert_clean(SESSION);
}

/// A transcript's times outside what git dates (a clock set wrong, a year
/// too large to compute with): the nodes keep what can be read, the records
/// keep it all, and every commit has a date `git fsck --strict` takes.
#[test]
fn transcript_times_git_cannot_date_still_make_a_clean_repository() {
    let env = TestEnv::new();
    let mut t = Transcript::two_turns();
    let u2 = t.lines.iter().position(|l| l["uuid"] == "u2").unwrap();
    for (i, l) in t.lines.iter_mut().enumerate() {
        if l.get("timestamp").is_some() {
            l["timestamp"] = json!(if i < u2 {
                "1900-01-01T00:00:00.000Z"
            } else {
                "99999999999999999-01-01T00:00:00.000Z"
            });
        }
    }
    let file = t.write(&env.tmp.path().join("claude"), "");
    import(&env, &file);
    env.assert_clean(SESSION);
    assert_eq!(env.ok(&["verify", SESSION]), "");
    assert_eq!(
        env.git(SESSION, &["log", "--format=%at %ct %s"]),
        "0 0 turn 2: Thanks! Now add a test.\n0 0 turn 1: Fix the bug in main.rs\n0 0 session init\n"
    );
    assert_eq!(
        node(&env, SESSION, "000001-u-u-u1.json")["created_at"],
        -2208988800.0
    );
    assert_eq!(rebuilt(&env, SESSION), t.lines, "every record as it was");
}

#[test]
fn a_grown_transcript_adds_only_its_new_turns() {
    let env = TestEnv::new();
    let full = Transcript::two_turns();
    // First the transcript up to the middle of turn 2, its last line torn.
    let mut part = full.clone();
    let cut = part.lines.iter().position(|l| l["uuid"] == "u2").unwrap();
    let rest = part.lines.split_off(cut);
    let torn = &rest[0].to_string()[..20];
    let file = part.write(env.tmp.path(), torn);
    // Turn 1 is closed by its duration record: committed. The record after
    // it is turn 2's, which has not begun: it waits.
    let out = import_open(&env, &file);
    assert!(out.contains("imported 1 turn(s), 6 node(s)"), "{out}");
    let first = env.git(SESSION, &["log", "--format=%H"]);
    assert_eq!(first.lines().count(), 2, "init and turn 1");
    // It grew: the torn line completed, and more. Turn 2 is not closed yet
    // (no later message, no end record): kept pending, whole.
    full.write(env.tmp.path(), "");
    let out = import_open(&env, &file);
    assert!(!out.contains("imported"), "{out}");
    assert_eq!(env.git(SESSION, &["log", "--format=%H"]), first);
    let pending = env.ok(&["nodes", SESSION]);
    assert!(pending.contains("in progress"), "{pending}");
    assert!(env.ok(&["show", SESSION]).contains("in progress"));
    // The session is over: turn 2 too.
    let out = import(&env, &file);
    assert!(out.contains("imported 1 turn(s), 2 node(s)"), "{out}");
    let log = env.git(SESSION, &["log", "--format=%H"]);
    assert!(log.ends_with(&first), "the old commits stay as they were");
    assert_eq!(log.lines().count(), 3);
    env.assert_clean(SESSION);
    assert_eq!(rebuilt(&env, SESSION), full.lines);
    // The same commits, to the id, as one import of the whole transcript.
    let one = TestEnv::new();
    import(&one, &full.write(one.tmp.path(), ""));
    assert_eq!(one.history_files(SESSION), env.history_files(SESSION));
    assert_eq!(
        one.git(SESSION, &["log", "--format=%H %s"]),
        env.git(SESSION, &["log", "--format=%H %s"])
    );
}

/// A typed message written again with a new uuid, its parent and time
/// unchanged (a resume replays it), is a replay, not a rewind, when it
/// comes in a later import too: the earlier import's rows tell of the first.
#[test]
fn a_replay_in_a_later_import_is_no_rewind() {
    let env = TestEnv::new();
    let mut t = Transcript::two_turns();
    let file = t.write(env.tmp.path(), "");
    import(&env, &file);
    let u2 = t.lines.iter().find(|l| l["uuid"] == "u2").unwrap();
    let mut replay = u2.clone();
    replay["uuid"] = "u2-again".into();
    t.lines.push(replay);
    t.reply(
        "a6b",
        "u2-again",
        "msg_4b",
        json!({"type": "text", "text": "Done, again."}),
    );
    t.write(env.tmp.path(), "");
    import(&env, &file);
    let one = TestEnv::new();
    import(&one, &t.write(one.tmp.path(), ""));
    let branches = one.git(SESSION, &["branch", "--format=%(refname:short)"]);
    assert_eq!(branches.trim(), "main", "no retry branch: {branches}");
    // The same nodes as one import of the whole transcript. (Not yet the
    // same predecessor: the later import leads the replay to its parent's
    // node, turn 1's last reply, so its reply is a fork of turn 1 there
    // and committed as one, where one import continues turn 2: the live
    // path that issue 49 makes equal to one import.)
    assert_eq!(one.history_files(SESSION), env.history_files(SESSION));
    assert_eq!(env.ok(&["verify", SESSION]), "");
    env.assert_clean(SESSION);
    assert_eq!(rebuilt(&env, SESSION), t.lines);
}

#[test]
fn rewinds_compactions_and_resume_copies() {
    let env = TestEnv::new();
    let t = Transcript::eventful();
    let file = t.write(env.tmp.path(), "");
    import(&env, &file);
    let files = env.history_files(SESSION);
    assert_eq!(
        files.iter().filter(|f| f.contains("-u-u-u1.")).count(),
        1,
        "{files:?}"
    );
    // The rewind is a retry branch off turn 1's reply.
    assert_eq!(
        node(&env, SESSION, "000009-u-u-u3.json")["predecessor"],
        "a-msg_1"
    );
    let branches = env.git(SESSION, &["branch", "--format=%(refname:short)"]);
    assert!(
        branches.lines().any(|b| b.starts_with("retry-")),
        "{branches}"
    );
    // The compaction is a record node, not a turn; the turn after it
    // continues the conversation it summarised.
    let compact = files
        .iter()
        .find(|f| f.contains("-c-c1."))
        .expect("a compaction node");
    let c = node(&env, SESSION, compact);
    assert_eq!(c["name"], "context/compact");
    assert_eq!(c["metadata"]["summary"], "Summary: fixed main.rs");
    let u4 = files.iter().find(|f| f.contains("-u-u-u4.")).unwrap();
    assert_eq!(node(&env, SESSION, u4)["predecessor"], "a-msg_5");
    let subjects = env.git(SESSION, &["log", "--all", "--format=%s"]);
    assert!(subjects.contains("turn 3: Carry on"), "{subjects}");
    env.assert_clean(SESSION);
    assert_eq!(env.ok(&["verify", SESSION]), "");
    assert_eq!(rebuilt(&env, SESSION), t.lines);
}

#[test]
fn a_subagent_transcript_is_a_session_of_its_own() {
    let env = TestEnv::new();
    let root = env.tmp.path().join("claude");
    // Turn 3 runs a subagent: a Task call, its progress, its result.
    let mut main = Transcript::two_turns();
    main.user("u5", Some("a6"), "Find the tests with a subagent")
        .reply(
            "a9",
            "u5",
            "msg_9",
            json!({"type": "tool_use", "id": "toolu_9", "name": "Task",
            "input": {"description": "find tests", "prompt": "Find the tests"}}),
        )
        .record(
            "progress",
            "p9",
            Some("a9"),
            json!({"data": {"type": "agent_progress",
            "agentId": "x1"}, "toolUseID": "toolu_9", "parentToolUseID": "toolu_9"}),
        )
        .record(
            "user",
            "r9",
            Some("a9"),
            json!({"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_9", "content": "Found 3."}]},
            "toolUseResult": {"agentId": "x1", "status": "completed"}}),
        )
        .reply(
            "a10",
            "r9",
            "msg_10",
            json!({"type": "text", "text": "There are 3 tests."}),
        );
    main.write(&root, "");
    let mut sub = Transcript::default();
    sub.user("s-u1", None, "Find the tests").reply(
        "s-a1",
        "s-u1",
        "msg_s1",
        json!({"type": "text", "text": "Found 3."}),
    );
    for l in &mut sub.lines {
        l["isSidechain"] = true.into();
        l["agentId"] = "x1".into();
    }
    let dir = root.join("-home-me-proj").join(SID).join("subagents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent-x1.jsonl"), sub.text()).unwrap();
    // A dry run says what it would do and writes nothing.
    let plan = env.ok(&[
        "import",
        "claude-code",
        "--finish",
        root.to_str().unwrap(),
        "--dry-run",
    ]);
    assert!(
        plan.contains("would import 3 turn(s), 12 node(s)"),
        "{plan}"
    );
    assert!(env.run(&["list"]).stdout.is_empty());
    let out = env.ok(&[
        "--json",
        "import",
        "claude-code",
        "--finish",
        root.to_str().unwrap(),
    ]);
    let sessions: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "imported")
        .map(|r| r["data"]["session"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sessions, [SESSION.to_string(), format!("{SESSION}-x1")]);
    let sub_session = format!("{SESSION}-x1");
    assert_eq!(env.history_files(&sub_session).len(), 2);
    env.assert_clean(&sub_session);
    // The Task call links the subagent's session.
    let task = env
        .history_files(SESSION)
        .into_iter()
        .find(|f| f.contains("-t-t-toolu_9."))
        .unwrap();
    let task = node(&env, SESSION, &task);
    assert_eq!(task["name"], "Task");
    assert_eq!(task["output"], "Found 3.");
    assert_eq!(task["metadata"]["subagent_session"], sub_session.as_str());
    env.assert_clean(SESSION);
}

#[test]
fn two_imports_at_once_add_each_node_once() {
    let env = TestEnv::new();
    let file = Transcript::two_turns().write(env.tmp.path(), "");
    let children: Vec<_> = (0..3)
        .map(|_| {
            env.cmd()
                .args(["import", "claude-code", "--finish", file.to_str().unwrap()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(env.history_files(SESSION).len(), 8);
    assert_eq!(env.git(SESSION, &["log", "--format=%s"]).lines().count(), 3);
    env.assert_clean(SESSION);
}

#[test]
fn an_import_killed_midway_is_finished_by_the_next_with_every_line_once() {
    for at in [
        "after-rename#3",
        "commit-before-sync",
        "commit-before-ref",
        "commit-before-index",
    ] {
        let env = TestEnv::new();
        let full = Transcript::two_turns();
        let mut part = full.clone();
        part.lines.truncate(6);
        let file = part.write(env.tmp.path(), "");
        import(&env, &file);
        full.write(env.tmp.path(), "");
        env.crash_at(at, &["import", "claude-code", file.to_str().unwrap()]);
        import(&env, &file);
        assert_eq!(rebuilt(&env, SESSION), full.lines, "{at}");
        env.assert_clean(SESSION);
        // The kill may have left a temp file: `verify --fix` removes it.
        let _ = env.run(&["verify", "--fix", SESSION]);
        assert_eq!(env.ok(&["verify", SESSION]), "", "{at}");
    }
}

/// Transcript ids that node ids cannot hold as they are (`x/1`) are made
/// into node ids that never merge two of them (`x/1` and `x_1` were one id,
/// and the import failed half-way on every try): each record its own node,
/// the same ids on a second import.
#[test]
fn transcript_ids_that_change_into_one_node_id_stay_two_nodes() {
    let env = TestEnv::new();
    let mut t = Transcript::default();
    let text = |c: &str| json!({"type": "text", "text": c});
    t.user("x/1", None, "first")
        .reply("r1", "x/1", "msg/1", text("one"))
        .user("x_1", Some("r1"), "second")
        .reply("r2", "x_1", "msg_1", text("two"));
    let file = t.write(env.tmp.path(), "");
    import(&env, &file);
    let files = env.history_files(SESSION);
    assert_eq!(files.len(), 4, "{files:?}");
    let outputs: Vec<Value> = files
        .iter()
        .map(|f| node(&env, SESSION, f)["output"].clone())
        .collect();
    assert_eq!(outputs, ["first", "one", "second", "two"]);
    assert_eq!(env.ok(&["verify", SESSION]), "");
    env.assert_clean(SESSION);
    let again = TestEnv::new();
    import(&again, &t.write(again.tmp.path(), ""));
    assert_eq!(again.history_files(SESSION), files);
    assert_eq!(rebuilt(&env, SESSION), t.lines);
}

/// With no path, an agent that has kept nothing in its place is an answer
/// (exit 1, what to do), not an I/O fault; a `--project` that does not
/// exist is refused once, before any transcript is read.
#[test]
fn an_import_with_nothing_to_read_or_nowhere_to_bind_says_so_once() {
    let env = TestEnv::new();
    let err = env.fails(&["import", "claude-code"], 1);
    assert!(
        err.contains("no Claude Code transcripts to import"),
        "{err}"
    );
    assert!(err.contains(".claude/projects"), "{err}");
    assert!(err.contains("import::no_default_transcripts"), "{err}");
    let out = env
        .cmd()
        .env("CODEX_HOME", env.tmp.path().join("no-codex"))
        .args(["import", "codex"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no Codex transcripts to import"), "{err}");
    let dir = env.tmp.path().join("claude");
    let file = Transcript::two_turns().write(&dir, "");
    let other = file.with_file_name("22222222-2222-3333-4444-555555555555.jsonl");
    std::fs::copy(&file, &other).unwrap();
    let err = env.fails(
        &[
            "import",
            "claude-code",
            dir.to_str().unwrap(),
            "--project",
            "nope",
        ],
        1,
    );
    assert_eq!(err.matches("no project `nope`").count(), 1, "{err}");
    assert_eq!(env.ok(&["list"]), "", "nothing imported");
}

/// A session of the transcript's name that no import made (here one made
/// by hand with `append --create`) is never added to: its nodes and the
/// transcript's would read as one conversation. The import fails naming
/// it, and so does a hook (logged); nothing is written.
#[test]
fn an_import_never_adds_to_a_session_it_did_not_make() {
    let env = TestEnv::new();
    env.ok(&["append", SESSION, "--create", "--text", "my own"]);
    env.ok(&["commit-turn", SESSION]);
    let before = env.history_files(SESSION);
    let file = Transcript::two_turns().write(env.tmp.path(), "");
    let out = env.run(&["import", "claude-code", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("import::foreign_session"), "{err}");
    let event = json!({"session_id": SID, "transcript_path": file, "hook_event_name": "Stop"});
    assert_eq!(hook(&env, &event).status.code(), Some(0));
    let log = std::fs::read_to_string(env.state().join("git-session-hooks.log")).unwrap();
    assert!(log.contains("is no import of claude-code"), "{log}");
    assert_eq!(env.history_files(SESSION), before);
    env.assert_clean(SESSION);
}

/// Run `git-session hook claude-code` with `event` on stdin; its output.
fn hook(env: &TestEnv, event: &Value) -> std::process::Output {
    hook_with(env, &["hook", "claude-code"], event)
}

/// Run a hook command with `event` on stdin; its output.
pub(crate) fn hook_with(env: &TestEnv, args: &[&str], event: &Value) -> std::process::Output {
    spawn_hook(env, args, event).wait_with_output().unwrap()
}

/// Start a hook command with `event` written to its stdin (then closed).
fn spawn_hook(env: &TestEnv, args: &[&str], event: &Value) -> std::process::Child {
    use std::io::Write;
    let mut child = env
        .cmd()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    child
}

#[test]
fn hook_events_as_the_transcript_grows_end_as_one_import_of_it() {
    let env = TestEnv::new();
    let full = Transcript::two_turns();
    let dir = env.tmp.path().join("claude");
    // The events of the conversation, each seeing the transcript as it was
    // then (the last one torn while the agent writes).
    for (cut, event) in [
        (2, "UserPromptSubmit"),
        (7, "PostToolUse"),
        (9, "PostToolUse"),
        (12, "Stop"),
        (13, "UserPromptSubmit"),
        (14, "Stop"),
    ] {
        let mut part = full.clone();
        part.lines.truncate(cut);
        let torn = full
            .lines
            .get(cut)
            .map(|l| l.to_string()[..12].to_string())
            .unwrap_or_default();
        let file = part.write(&dir, &torn);
        let out = hook(
            &env,
            &json!({"session_id": SID, "transcript_path": file, "cwd": "/home/me/proj",
                "hook_event_name": event, "permission_mode": "default"}),
        );
        assert_eq!(out.status.code(), Some(0), "{event}");
        assert!(
            out.stdout.is_empty(),
            "a hook prints nothing: {:?}",
            out.stdout
        );
    }
    assert!(!env.state().join("git-session-hooks.log").exists());
    // Turn 2 is not closed by the transcript: it waits, as in one import.
    assert_as_one_import(&env, &full, false);
    // The session ends: turn 2 too, as one import of the ended session.
    let file = full.write(&dir, "");
    hook(
        &env,
        &json!({"session_id": SID, "transcript_path": file, "hook_event_name": "SessionEnd"}),
    );
    assert_as_one_import(&env, &full, true);
}

#[test]
fn a_hook_that_fails_exits_0_and_verify_reports_it() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    for event in [
        json!({"session_id": SID, "hook_event_name": "Stop"}),
        // (A directory: no transcript to read. One not there yet is no
        // failure: the agent writes it after the event.)
        json!({"session_id": SID, "hook_event_name": "Stop", "transcript_path": env.tmp.path().join("home")}),
    ] {
        let out = hook(&env, &event);
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty());
    }
    let log = std::fs::read_to_string(env.state().join("git-session-hooks.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(
        log.contains("names no `transcript_path`") && log.contains("not a transcript"),
        "{log}"
    );
    let out = env.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hook_failed: 2 hook call(s) failed"),
        "{text}"
    );
    // A hook killed as it wrote leaves a line torn, maybe inside a
    // character: the failures are still reported, the last whole one named.
    let mut torn = std::fs::OpenOptions::new()
        .append(true)
        .open(env.state().join("git-session-hooks.log"))
        .unwrap();
    std::io::Write::write_all(
        &mut torn,
        b"{\"time\":\"2026-12-03T10:00:00Z\",\"error\":\"\xc3",
    )
    .unwrap();
    let out = env.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hook_failed: 3 hook call(s) failed")
            && text.contains("/home`")
            && !text.contains("unreadable entry"),
        "{text}"
    );
    std::fs::remove_file(env.state().join("git-session-hooks.log")).unwrap();
    env.ok(&["verify", "--all"]);
}

/// The hook log is a file of the state dir: `verify` never reads it
/// through a link (one to `/dev/zero` was read until memory ran out) or
/// from a special file, and says so; a hook never writes through either.
#[test]
fn a_hook_log_that_is_a_link_or_a_fifo_is_reported_never_read() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let log = env.state().join("git-session-hooks.log");
    let outside = env.tmp.path().join("outside.log");
    let failing = json!({"session_id": SID, "hook_event_name": "Stop"});
    for plant in crate::env::PLANTS {
        crate::env::plant(plant, &log, &outside, b"{\"error\": \"planted\"}\n");
        let out = env.run(&["verify", "--all"]);
        assert_eq!(out.status.code(), Some(1), "{plant}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("hook_failed: the hook log cannot be read") && !text.contains("planted"),
            "{plant}: {text}"
        );
        assert_eq!(hook(&env, &failing).status.code(), Some(0), "{plant}");
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "{\"error\": \"planted\"}\n",
            "{plant}: written through"
        );
    }
}

/// The hook log is bounded: past 1 MiB it is moved to
/// `git-session-hooks.log.1` (replacing an older one) and begun anew, so a
/// hook left failing for months keeps about 2 MiB of its failures. Hooks
/// failing at once as it passes the limit lose no line, and `verify`
/// counts both parts.
#[test]
fn the_hook_log_is_kept_to_two_parts_and_no_failure_is_lost_moving_it() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let log = env.state().join("git-session-hooks.log");
    let older = env.state().join("git-session-hooks.log.1");
    let old_line =
        json!({"time": "2026-11-01T10:00:00Z", "error": "old failure", "pad": "x".repeat(1000)});
    let old: String = (0..1100).map(|_| format!("{old_line}\n")).collect();
    std::fs::write(&log, &old).unwrap();
    let event = json!({"session_id": SID, "hook_event_name": "Stop", "transcript_path": env.tmp.path().join("home")});
    let hooks: Vec<_> = (0..8)
        .map(|_| spawn_hook(&env, &["hook", "claude-code"], &event))
        .collect();
    for h in hooks {
        assert_eq!(h.wait_with_output().unwrap().status.code(), Some(0));
    }
    let lines = |p: &std::path::Path| std::fs::read_to_string(p).map_or(0, |t| t.lines().count());
    assert!(older.exists(), "the log was not moved aside");
    assert_eq!(lines(&older) + lines(&log), 1100 + 8);
    assert!(std::fs::metadata(&log).unwrap().len() < 1 << 20);
    let out = env.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hook_failed: 1108 hook call(s) failed"),
        "{text}"
    );
    assert!(text.contains("git-session-hooks.log.1"), "{text}");
    std::fs::remove_file(&log).unwrap();
    std::fs::remove_file(&older).unwrap();
    env.ok(&["verify", "--all"]);
    // The older part's place taken by a directory: the log cannot move,
    // and the failure is still kept in it, and the directory reported.
    std::fs::create_dir(&older).unwrap();
    std::fs::write(&log, &old).unwrap();
    assert_eq!(hook(&env, &event).status.code(), Some(0));
    assert_eq!(lines(&log), 1100 + 1);
    let text = String::from_utf8_lossy(&env.run(&["verify", "--all"]).stdout).into_owned();
    assert!(
        text.contains("the hook log cannot be read") && text.contains("1101 hook call(s) failed"),
        "{text}"
    );
}

/// A hook event carries what the agent has at hand: a `UserPromptSubmit`
/// the pasted prompt, a `PostToolUse` the tool's whole response. One of
/// several megabytes is an event like any other (its fields but the few a
/// hook reads are skipped, not kept); stdin that is not an event is logged
/// as what it is, and one past the limit as such, never as an event without
/// a transcript.
#[test]
fn a_hook_event_of_megabytes_imports_and_a_bad_one_is_logged_as_it_is() {
    let env = TestEnv::new();
    let full = Transcript::two_turns();
    let file = full.write(env.tmp.path(), "");
    let big = "x".repeat(3 << 20);
    for event in [
        json!({"session_id": SID, "transcript_path": file, "hook_event_name": "UserPromptSubmit",
            "prompt": big}),
        json!({"session_id": SID, "transcript_path": file, "hook_event_name": "PostToolUse",
            "tool_name": "Read", "tool_response": {"file": {"content": big}}}),
        json!({"session_id": SID, "transcript_path": file, "hook_event_name": "Stop"}),
    ] {
        let out = hook(&env, &event);
        assert_eq!(out.status.code(), Some(0));
        let log = std::fs::read_to_string(env.state().join("git-session-hooks.log"));
        assert!(log.is_err(), "{:.2000}", log.unwrap());
    }
    assert_as_one_import(&env, &full, false);

    let bad = TestEnv::new();
    let send = |bytes: &[u8]| {
        use std::io::Write;
        let mut child = bad
            .cmd()
            .args(["hook", "claude-code"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The hook may stop reading at its limit: a broken pipe is its right.
        let _ = child.stdin.take().unwrap().write_all(bytes);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty());
    };
    send(b"Stop\n");
    send(b" \n");
    send(br#"["agent-turn-complete", "t1"]"#);
    send(br#"{"hook_event_name": Stop}"#);
    let mut huge =
        format!(r#"{{"hook_event_name": "Stop", "transcript_path": {file:?}, "x": ""#).into_bytes();
    huge.resize(65 << 20, b'y');
    huge.extend_from_slice(b"\"}");
    send(&huge);
    // A field of megabytes is logged clipped.
    let far = format!("/nowhere/{}", "d".repeat(2 << 20));
    send(
        json!({"hook_event_name": "Stop", "transcript_path": far})
            .to_string()
            .as_bytes(),
    );
    let log = std::fs::read_to_string(bad.state().join("git-session-hooks.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 6, "{:.20000}", log);
    for (line, what) in lines.iter().zip([
        "the hook event is not a JSON object",
        "the hook event is empty",
        "the hook event is not a JSON object",
        "the hook event is not JSON: expected value at line 1 column 21",
        "the hook event is over 67108864 bytes",
        "bytes)",
    ]) {
        assert!(line.contains(what), "{what}: {:.2000}", line);
        assert!(line.len() < 10_000, "{:.2000}", line);
    }
    assert!(!log.contains("names no `transcript_path`"), "{log}");
    assert_eq!(bad.ok(&["list"]), "");
}

/// A hook exits 0 even when it cannot start: no state dir to be found, a
/// command line it cannot read. Claude Code takes exit 2 for "block", and
/// would stop the agent on our usage error. `hook install` is no hook: its
/// usage errors exit 2.
#[test]
fn a_hook_exits_0_even_on_a_command_line_it_cannot_use() {
    use std::io::Write;
    let env = TestEnv::new();
    let run = |c: &mut std::process::Command| {
        let mut child = c
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A command line that does not parse ends the hook before it reads
        // its stdin: the write may then meet a closed pipe.
        let _ = child.stdin.take().unwrap().write_all(b"{}");
        child.wait_with_output().unwrap()
    };
    let mut no_home = std::process::Command::new(crate::env::BIN);
    no_home
        .env_remove("HOME")
        .env_remove("OPENPROGRAM_HOME")
        .args(["hook", "claude-code"]);
    for (c, says) in [
        (&mut no_home, "usage::no_home"),
        (
            env.cmd().args(["hook", "claude-code", "--bogus"]),
            "unexpected argument",
        ),
        (
            env.cmd()
                .args(["--lock-timeout", "nan", "hook", "codex", "{}"]),
            "usage::lock_timeout",
        ),
    ] {
        let out = run(c);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{says}: {err}");
        assert!(err.contains(says) && out.stdout.is_empty(), "{says}: {err}");
    }
    let out = run(env
        .cmd()
        .args(["hook", "install", "claude-code", "--bogus"]));
    assert_eq!(out.status.code(), Some(2));
}

/// A hook whose event names a device or a FIFO as its transcript (one that
/// never ends, or blocks) ends at once, exit 0, with the failure logged
/// and nothing imported: a hook must never hold the agent up.
#[test]
fn a_hook_on_a_device_or_a_fifo_ends_at_once() {
    let env = TestEnv::new();
    let fifo = env.tmp.path().join("t.jsonl");
    crate::env::mkfifo(&fifo);
    for path in ["/dev/zero", fifo.to_str().unwrap()] {
        let event = json!({"session_id": SID, "hook_event_name": "Stop", "transcript_path": path});
        let child = spawn_hook(&env, &["hook", "claude-code"], &event);
        let what = format!("the hook on `{path}`");
        let out = crate::env::wait_within(child, &what, std::time::Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(0), "{path}");
    }
    let log = std::fs::read_to_string(env.state().join("git-session-hooks.log")).unwrap();
    assert_eq!(log.matches("not a regular file").count(), 2, "{log}");
    assert_eq!(env.ok(&["list"]), "");
    // A directory is named as one.
    let dir = env.tmp.path().join("claude");
    std::fs::create_dir_all(&dir).unwrap();
    let event = json!({"session_id": SID, "hook_event_name": "Stop", "transcript_path": dir});
    assert_eq!(hook(&env, &event).status.code(), Some(0));
    let log = std::fs::read_to_string(env.state().join("git-session-hooks.log")).unwrap();
    assert!(log.contains("a directory, not a transcript"), "{log}");
    assert_eq!(log.matches("not a regular file").count(), 2, "{log}");
}

/// `env`'s session is the one a single import of `full` makes, ended the
/// same way (`finished`: the session is over, `--finish`; else its last
/// turn waits): the same node files, the same commits to the id, the same
/// refs, the same turn in progress, every line kept once; git and `verify`
/// find nothing wrong.
fn assert_as_one_import(env: &TestEnv, full: &Transcript, finished: bool) {
    let one = TestEnv::new();
    let file = full.write(one.tmp.path(), "");
    match finished {
        true => import(&one, &file),
        false => import_open(&one, &file),
    };
    assert_same_session(env, &one);
    if finished {
        assert_eq!(rebuilt(env, SESSION), full.lines);
    }
}

/// Two sessions `SESSION` alike to the byte: node files, commits, refs, the
/// turn kept pending; both clean.
fn assert_same_session(env: &TestEnv, one: &TestEnv) {
    assert_eq!(shape(env, SESSION), shape(one, SESSION));
    for f in env.history_files(SESSION) {
        assert_eq!(node(env, SESSION, &f), node(one, SESSION, &f), "{f}");
    }
    let refs = |e: &TestEnv| {
        e.git(
            SESSION,
            &["for-each-ref", "--format=%(refname) %(objectname)"],
        )
    };
    assert_eq!(refs(env), refs(one));
    let log = |e: &TestEnv| e.git(SESSION, &["log", "--all", "--format=%H %s"]);
    assert_eq!(log(env), log(one));
    let shown = |e: &TestEnv| e.ok(&["--json", "show", SESSION]);
    assert_eq!(shown(env), shown(one));
    env.assert_clean(SESSION);
    env.ok(&["verify", SESSION]);
}

/// What a node is, without the records it carries: id, role, links, text.
fn shape(env: &TestEnv, session: &str) -> Vec<Value> {
    env.history_files(session)
        .iter()
        .map(|f| {
            let n = node(env, session, f);
            json!([
                f,
                n["role"],
                n["predecessor"],
                n["caller"],
                n["name"],
                n["output"]
            ])
        })
        .collect()
}

#[test]
fn hooks_at_every_line_of_a_growing_transcript_end_as_one_import_of_it() {
    // Each run reads on from where the last stopped (its cursor), knowing
    // the records before it only by what it kept of them: wherever the
    // transcript was cut, the session is the one a whole import gives.
    let env = TestEnv::new();
    let full = Transcript::eventful();
    let dir = env.tmp.path().join("claude");
    let mut file = PathBuf::new();
    for cut in 1..=full.lines.len() {
        let mut part = full.clone();
        part.lines.truncate(cut);
        file = part.write(&dir, "");
        // In the middle of a turn (a `Stop` there would commit half a
        // turn, and the rest as its continuation).
        let out = hook(
            &env,
            &json!({"session_id": SID, "transcript_path": file, "hook_event_name": "PostToolUse"}),
        );
        assert!(out.status.success());
        assert!(
            !env.state().join("git-session-hooks.log").exists(),
            "{}",
            std::fs::read_to_string(env.state().join("git-session-hooks.log")).unwrap_or_default()
        );
    }
    hook(
        &env,
        &json!({"session_id": SID, "transcript_path": file, "hook_event_name": "Stop"}),
    );
    assert_as_one_import(&env, &full, false);
    hook(
        &env,
        &json!({"session_id": SID, "transcript_path": file, "hook_event_name": "SessionEnd"}),
    );
    assert_as_one_import(&env, &full, true);
    let one = TestEnv::new();
    import(&one, &full.write(one.tmp.path(), ""));

    // A `Stop` before the transcript has the turn's last records (the
    // file lags the event): the next run starts with records that are no
    // node, and the message after them still answers the reply before.
    let lag = TestEnv::new();
    let mut part = full.clone();
    part.lines.truncate(10);
    let file = part.write(lag.tmp.path(), "");
    import_open(&lag, &file);
    full.write(lag.tmp.path(), "");
    import(&lag, &file);
    assert_same_session(&lag, &one);
    assert_eq!(rebuilt(&lag, SESSION), full.lines);
}

#[test]
fn a_transcript_rewritten_shorter_is_read_again_from_its_start() {
    let env = TestEnv::new();
    let full = Transcript::two_turns();
    let file = full.write(env.tmp.path(), "");
    import(&env, &file);
    // The file now ends before the cursor, then grows other lines: the
    // cursor's offset means nothing in it.
    let mut other = full.clone();
    other.lines.truncate(4);
    other.user("u9", Some("a2"), "Something else entirely");
    other.write(env.tmp.path(), "");
    let out = import(&env, &file);
    assert!(out.contains("imported 1 turn(s), 1 node(s)"), "{out}");
    let u9 = env
        .history_files(SESSION)
        .into_iter()
        .find(|f| f.contains("-u-u-u9."))
        .unwrap();
    assert_eq!(node(&env, SESSION, &u9)["predecessor"], "a-msg_1");
    env.assert_clean(SESSION);
    assert_eq!(env.ok(&["verify", SESSION]), "");
}

#[test]
fn hooks_and_imports_racing_on_a_growing_transcript_add_each_line_once() {
    // Each reads its cursor before it takes the session lock: another
    // run may move the cursor on (or back) in between.
    let env = TestEnv::new();
    let full = Transcript::eventful();
    let dir = env.tmp.path().join("claude");
    let mut part = full.clone();
    part.lines.truncate(6);
    let file = part.write(&dir, "");
    import_open(&env, &file);
    for cut in [12, 16, full.lines.len()] {
        let mut part = full.clone();
        part.lines.truncate(cut);
        part.write(&dir, "");
        let event = json!({"session_id": SID, "transcript_path": file,
            "hook_event_name": "UserPromptSubmit"})
        .to_string();
        let children: Vec<_> = (0..4)
            .map(|i| {
                let mut c = env.cmd();
                if i % 2 == 0 {
                    c.args(["import", "claude-code", file.to_str().unwrap()]);
                } else {
                    c.args(["hook", "claude-code"])
                        .stdin(std::process::Stdio::piped());
                }
                let mut child = c
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                if let Some(mut stdin) = child.stdin.take() {
                    use std::io::Write;
                    stdin.write_all(event.as_bytes()).unwrap();
                }
                child
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(!env.state().join("git-session-hooks.log").exists());
    assert_as_one_import(&env, &full, false);
}

#[test]
fn an_import_whose_cursor_moved_back_while_it_waited_adds_each_line_once() {
    let env = TestEnv::new();
    let full = Transcript::eventful();
    let dir = env.tmp.path().join("claude");
    let mut part = full.clone();
    part.lines.truncate(12);
    let file = part.write(&dir, "");
    import_open(&env, &file);
    full.write(&dir, "");
    let sd = env.session_dir(SESSION);
    // Another run holds the session and, as a hook in the middle of a turn
    // would, moves the cursor back to a turn it holds back.
    let holder = std::process::Command::new("python3")
        .args([
            "-c",
            "import fcntl,sys,time; f=open(sys.argv[1],'a'); fcntl.flock(f,fcntl.LOCK_EX); \
             print('held', flush=True); time.sleep(1.5)",
        ])
        .arg(sd.join(".git/git-session.lock"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut holder = holder;
    {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(holder.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "held");
    }
    let waiting = env
        .cmd()
        .args(["import", "claude-code", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // Line 1 (turn 1's message) and its offset: before everything written.
    let offset = std::fs::read(&file)
        .unwrap()
        .iter()
        .position(|&b| b == b'\n')
        .unwrap()
        + 1;
    std::fs::write(
        sd.join(".git/git-session/import.lines"),
        format!("{{\"{SESSION}\":{{\"lines\":1,\"bytes\":{offset}}}}}\n"),
    )
    .unwrap();
    holder.wait().unwrap();
    let out = waiting.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_as_one_import(&env, &full, false);
}

#[test]
fn records_after_the_last_node_wait_for_the_next_node_and_an_import_keeps_them() {
    // Turn 2 ends (its duration record closes it); a record comes after
    // its end, which is the next turn's; then the next turn.
    let mut full = Transcript::two_turns();
    full.record(
        "system",
        "s2",
        Some("a6"),
        json!({"subtype": "turn_duration", "durationMs": 900}),
    );
    full.lines
        .push(json!({"type": "file-history-snapshot", "messageId": "m3", "snapshot": {}}));
    let trailing = full.lines.len();
    full.user("u3", Some("s2"), "One more thing").reply(
        "a7",
        "u3",
        "msg_7",
        json!({"type": "text", "text": "Sure."}),
    );
    let events = |env: &TestEnv, cuts: &[(usize, &str)]| {
        let dir = env.tmp.path().join("claude");
        for &(cut, event) in cuts {
            let mut part = full.clone();
            part.lines.truncate(cut);
            let file = part.write(&dir, "");
            let out = hook(
                env,
                &json!({"session_id": SID, "transcript_path": file, "hook_event_name": event}),
            );
            assert!(out.status.success());
        }
    };
    // `before`: the lines up to turn 2's reply; `trailing`: its end, and the
    // record after it.
    let before = trailing - 2;
    let env = TestEnv::new();
    events(
        &env,
        &[
            (before, "Stop"),
            (before, "UserPromptSubmit"),
            (trailing, "Stop"),
            (full.lines.len(), "Stop"),
        ],
    );
    assert_as_one_import(&env, &full, false);
    // At the end of a session (`SessionEnd`, `import --finish`), such
    // records are kept at once, in a record node of their own.
    let ended = TestEnv::new();
    events(
        &ended,
        &[
            (before, "Stop"),
            (before, "UserPromptSubmit"),
            (trailing, "SessionEnd"),
        ],
    );
    let files = ended.history_files(SESSION);
    let k = files
        .iter()
        .find(|f| f.contains("-t-k-line"))
        .unwrap_or_else(|| panic!("{files:?}"));
    assert_eq!(node(&ended, SESSION, k)["name"], "context/transcript");
    let mut part = full.clone();
    part.lines.truncate(trailing);
    assert_eq!(rebuilt(&ended, SESSION), part.lines);
    ended.assert_clean(SESSION);
}

#[test]
fn links_and_fifos_planted_at_the_import_files_are_never_written_through() {
    use crate::attacks::Victim;
    // The cursor and the uuid rows of an imported session.
    for rel in [
        ".git/git-session/import.lines",
        ".git/git-session/import.uuids",
    ] {
        let env = TestEnv::new();
        let mut part = Transcript::two_turns();
        part.lines.truncate(12);
        let file = part.write(env.tmp.path(), "");
        import(&env, &file);
        Transcript::two_turns().write(env.tmp.path(), "");
        let at = env.session_dir(SESSION).join(rel);
        let victim = Victim::new(&env, "victim");
        std::fs::remove_file(&at).unwrap();
        std::os::unix::fs::symlink(&victim.path, &at).unwrap();
        let err = env.fails(&["import", "claude-code", file.to_str().unwrap()], 1);
        assert!(err.contains("symbolic link"), "{rel}: {err}");
        victim.untouched(rel);
        std::fs::remove_file(&at).unwrap();
        crate::env::mkfifo(&at);
        let err = env.fails(&["import", "claude-code", file.to_str().unwrap()], 1);
        assert!(
            err.contains("not a regular file") || err.contains("special"),
            "{rel}: {err}"
        );
    }
    // The hook log: a failure is not written through a link (and the hook
    // still exits 0).
    let env = TestEnv::new();
    std::fs::create_dir_all(env.state()).unwrap();
    let victim = Victim::new(&env, "bashrc");
    std::os::unix::fs::symlink(&victim.path, env.state().join("git-session-hooks.log")).unwrap();
    let out = hook(&env, &json!({"hook_event_name": "Stop"}));
    assert_eq!(out.status.code(), Some(0));
    victim.untouched("git-session-hooks.log");
}

/// Below a directory given to `import`, a `*.jsonl` that is a link or a
/// FIFO is not read (never blocks, never follows), and is named: a
/// transcript passed over in silence would look imported.
#[test]
fn a_link_or_a_fifo_among_transcripts_is_named_not_read() {
    let env = TestEnv::new();
    let root = env.tmp.path().join("claude");
    let file = Transcript::two_turns().write(&root, "");
    let dir = file.parent().unwrap();
    std::os::unix::fs::symlink(&file, dir.join("linked.jsonl")).unwrap();
    crate::env::mkfifo(&dir.join("fifo.jsonl"));
    let out = env.run(&["import", "claude-code", root.to_str().unwrap()]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("linked.jsonl`: a link is not followed"),
        "{err}"
    );
    assert!(err.contains("fifo.jsonl`: not a regular file"), "{err}");
    assert!(err.contains("imported 1 transcript(s)"), "{err}");
}

/// A message id and a tool id that Claude Code uses again in a later turn
/// (ids are not unique across a long session's API calls): each later use
/// is a node of its own (`a-msg_1-2`, `t-toolu_1-2`), its result goes to its
/// own call, nothing is merged into the first turn, and hooks at every line
/// of the growing transcript end as one import of it.
#[test]
fn a_message_or_tool_id_used_again_in_a_later_turn_is_a_node_of_its_own() {
    let mut full = Transcript::default();
    let mut before: Option<String> = None;
    // Two turns with the same ids: each a tool call, its result, a reply.
    for (t, (text, cmd, out, answer)) in [
        ("first", "ls", "out one", "answer one"),
        ("second", "pwd", "out two", "answer two"),
    ]
    .into_iter()
    .enumerate()
    {
        let id = |p: &str| format!("{p}{t}");
        full.user(&id("u"), before.as_deref(), text)
            .reply(
                &id("a"),
                &id("u"),
                "msg_1",
                json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"c": cmd}}),
            )
            .tool_result(&id("r"), &id("a"), "toolu_1", out)
            .reply(
                &id("b"),
                &id("r"),
                "msg_2",
                json!({"type": "text", "text": answer}),
            )
            .record(
                "system",
                &id("d"),
                Some(&id("b")),
                json!({"subtype": "turn_duration", "durationMs": 5}),
            );
        before = Some(id("d"));
    }
    let one = TestEnv::new();
    import(&one, &full.write(one.tmp.path(), ""));
    let show = one.ok(&["show", SESSION]);
    for line in ["answer one", "answer two", "→ out one", "→ out two"] {
        assert!(show.contains(line), "{line}: {show}");
    }
    assert_eq!(
        one.ok(&["log", SESSION])
            .lines()
            .filter(|l| l.contains("turn "))
            .count(),
        2
    );
    let files = one.history_files(SESSION);
    for id in [
        "a-msg_1.json",
        "a-msg_1-2.json",
        "t-toolu_1.json",
        "t-toolu_1-2.json",
        "a-msg_2-2.json",
    ] {
        assert!(files.iter().any(|f| f.ends_with(id)), "{id}: {files:?}");
    }
    one.ok(&["verify", "--all"]);
    // Hooks as it grows: the same session.
    let env = TestEnv::new();
    let dir = env.tmp.path().join("claude");
    let mut file = PathBuf::new();
    for cut in 1..=full.lines.len() {
        let mut part = full.clone();
        part.lines.truncate(cut);
        file = part.write(&dir, "");
        let out = hook(
            &env,
            &json!({"session_id": SID, "transcript_path": file, "hook_event_name": "PostToolUse"}),
        );
        assert!(out.status.success());
        assert!(!env.state().join("git-session-hooks.log").exists());
    }
    hook(
        &env,
        &json!({"session_id": SID, "transcript_path": file, "hook_event_name": "SessionEnd"}),
    );
    assert_as_one_import(&env, &full, true);
}

/// A record nested deeper than a node file can hold it (a tool input 122
/// levels deep: the transcript line reads, the node that keeps it would be
/// 130 levels, past the reader's 128) is kept as its text, like a line
/// that does not parse: the import and every later one go on, each node
/// reads back, `verify` is clean.
#[test]
fn a_record_nested_too_deep_for_a_node_is_kept_as_its_text() {
    let env = TestEnv::new();
    let mut deep = json!("bottom");
    for _ in 0..122 {
        deep = json!([deep]);
    }
    let mut full = Transcript::default();
    full.user("u1", None, "go deep")
        .reply(
            "a1",
            "u1",
            "msg_1",
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"x": deep}}),
        )
        .tool_result("r1", "a1", "toolu_1", "done")
        .reply(
            "a2",
            "r1",
            "msg_2",
            json!({"type": "text", "text": "made it"}),
        );
    let dir = env.tmp.path().join("claude");
    let mut part = full.clone();
    part.lines.truncate(3);
    let file = part.write(&dir, "");
    import_open(&env, &file);
    full.user("u2", Some("a2"), "and again");
    full.reply(
        "a3",
        "u2",
        "msg_3",
        json!({"type": "text", "text": "again"}),
    );
    full.write(&dir, "");
    let out = import(&env, &file);
    assert!(out.contains("imported"), "{out}");
    for f in env.history_files(SESSION) {
        node(&env, SESSION, &f); // every node reads back
    }
    let show = env.ok(&["show", SESSION]);
    assert!(show.contains("made it") && show.contains("again"), "{show}");
    env.ok(&["verify", "--all"]);
    // The deep line is kept whole, as its text.
    let kept = env
        .history_files(SESSION)
        .iter()
        .map(|f| node(&env, SESSION, f))
        .flat_map(|n| {
            n["metadata"]["source_records"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|r| {
            r["raw"]
                .as_str()
                .is_some_and(|t| t.contains("toolu_1") && t.contains("bottom"))
        });
    assert!(kept.is_some(), "the deep record is kept as its text");
}

/// A tool result too big for a node file (24 MB, which its record holds
/// three times: the result, the record kept in `source_records`, Claude
/// Code's `toolUseResult`) is stored once and whole beside the node, as a
/// content-addressed attachment the node names with its size, blob id and
/// the places it stood: putting it back gives the record the transcript
/// had. Committed with its turn, the same whether the transcript was
/// imported whole or as it grew; later imports go on.
#[test]
fn a_tool_result_too_big_for_a_node_is_stored_once_beside_it() {
    let line = "a line of a long build log, 0123456789\n";
    let big: String = line.repeat(24_000_000 / line.len());
    let mut t = Transcript::default();
    t.user("u1", None, "Dump the build log")
        .reply("a1", "u1", "msg_1", json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat build.log"}}))
        .tool_result("r1", "a1", "toolu_1", &big)
        .reply("a2", "r1", "msg_2", json!({"type": "text", "text": "It built."}))
        .record("system", "s1", Some("a2"), json!({"subtype": "turn_duration", "durationMs": 1000}))
        .user("u2", Some("s1"), "Thanks")
        .reply("a3", "u2", "msg_3", json!({"type": "text", "text": "Welcome."}));
    let live = TestEnv::new();
    let dir = live.tmp.path().join("claude");
    for cut in [3, 4, 6] {
        let mut part = t.clone();
        part.lines.truncate(cut);
        import_open(&live, &part.write(&dir, ""));
    }
    import(&live, &t.write(&dir, ""));
    let one = TestEnv::new();
    import(&one, &t.write(one.tmp.path(), ""));
    assert_same_session(&live, &one);
    let files = one.history_files(SESSION);
    for f in &files {
        let size = std::fs::metadata(one.session_dir(SESSION).join("history").join(f))
            .unwrap()
            .len();
        assert!(size < 1 << 20, "{f}: {size} bytes");
    }
    let (file, n) = files
        .iter()
        .map(|f| (f.clone(), node(&one, SESSION, f)))
        .find(|(_, n)| n["metadata"]["attachments"].is_array())
        .expect("the tool node names its attachment");
    let atts = n["metadata"]["attachments"].as_array().unwrap();
    assert_eq!(atts.len(), 1, "one text, one file: {atts:?}");
    let att = &atts[0];
    let path = att["path"].as_str().unwrap();
    let stored = std::fs::read_to_string(one.session_dir(SESSION).join(path)).unwrap();
    assert!(stored == big, "the attachment holds the text whole");
    assert_eq!(att["size"], big.len());
    let blob = one.git(SESSION, &["hash-object", path]);
    assert_eq!(att["blob"].as_str().unwrap(), blob.trim());
    assert_eq!(path, format!("workdir/attachments/{}.txt", blob.trim()));
    let holds: Vec<&str> = att["holds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(holds.len(), 3, "{holds:?}");
    assert!(holds.contains(&"/output"), "{holds:?}");
    assert!(
        n["output"].as_str().unwrap().contains(path),
        "the node says where its text is"
    );
    // Lossless: the text put back at each place gives the record as the
    // transcript has it.
    let mut whole = n.clone();
    for p in &holds {
        *whole.pointer_mut(p).unwrap() = Value::String(big.clone());
    }
    assert_eq!(whole["metadata"]["source_records"][0]["record"], t.lines[2]);
    assert_eq!(whole["output"], Value::String(big.clone()));
    // Committed in the commit that added its node.
    let added = |rel: &str| {
        one.git(
            SESSION,
            &["log", "--all", "--format=%H", "--diff-filter=A", "--", rel],
        )
    };
    assert_eq!(added(path), added(&format!("history/{file}")));
    assert_eq!(added(path).lines().count(), 1);
    for env in [&live, &one] {
        env.assert_clean(SESSION);
        env.ok(&["verify", "--all"]);
    }
    // The transcript goes on: the next turn imports as any other.
    let mut more = t.clone();
    more.user("u3", Some("a3"), "And now?").reply(
        "a4",
        "u3",
        "msg_4",
        json!({"type": "text", "text": "Now we rest."}),
    );
    import(&one, &more.write(one.tmp.path(), ""));
    one.assert_clean(SESSION);
    assert_eq!(one.history_files(SESSION).len(), files.len() + 2);
    // `verify` checks it is there, whole.
    let at = one.session_dir(SESSION).join(path);
    std::fs::write(&at, "cut").unwrap();
    let v = one.run(&["verify", SESSION]);
    assert_eq!(v.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("attachment_missing"),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
    one.git(SESSION, &["checkout", "--", path]);
    one.ok(&["verify", SESSION]);
}
