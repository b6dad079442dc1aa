//! The core loop: init, append, commit-turn, log, show (SPEC §2, §5.1–§5.5).

use crate::env::{TestEnv, set_snapshot_count};

#[test]
fn init_creates_a_repo_with_an_empty_root_commit() {
    let env = TestEnv::new();
    let out = env.ok(&["init", "s1", "--agent", "bot", "--source", "web"]);
    assert_eq!(out, "s1\n");
    let dir = env.session_dir("s1");
    assert_eq!(
        env.git("s1", &["log", "--format=%s|%an <%ae>|%at"]),
        "session init|OpenProgram <openprogram@local>|1796017556\n"
    );
    assert_eq!(
        env.git("s1", &["ls-tree", "-r", "HEAD"]),
        "",
        "root commit has an empty tree"
    );
    assert_eq!(
        env.git("s1", &["symbolic-ref", "HEAD"]),
        "refs/heads/main\n"
    );
    assert_eq!(env.git("s1", &["config", "core.hooksPath"]), "/dev/null\n");
    assert_eq!(env.git("s1", &["config", "commit.gpgSign"]), "false\n");
    let fsck = env.git_in(&dir, &["fsck", "--strict"]);
    assert!(fsck.status.success());
    // meta.json is new and uncommitted until the first turn.
    assert_eq!(env.git("s1", &["status", "--porcelain"]), "?? meta.json\n");
    let meta = env.meta("s1");
    assert_eq!(meta["id"], "s1");
    assert_eq!(meta["agent_id"], "bot");
    assert_eq!(meta["source"], "web");
    assert_eq!(meta["created_at"], 1_796_017_556.0);
    assert_eq!(meta["updated_at"], 1_796_017_556.0);
    assert_eq!(meta["project_id"], "default");
    // The row is in index.json at once (appends go to the journal later).
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.state().join("sessions/index.json")).unwrap())
            .unwrap();
    let row = &index["s1"];
    assert_eq!(row["id"], "s1");
    assert_eq!(row["status"], "idle");
    assert_eq!(row["agent_id"], "bot");
    // Idempotent.
    assert_eq!(env.ok(&["init", "s1"]), "s1\n");
    assert_eq!(env.git("s1", &["rev-list", "--count", "HEAD"]), "1\n");
    // The state dir is private.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(env.state()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn init_without_id_generates_one() {
    let env = TestEnv::new();
    let id = env.ok(&["init"]).trim().to_string();
    assert_eq!(id.len(), 12);
    assert!(env.session_dir(&id).join(".git").is_dir());
}

#[test]
fn a_turn_is_one_commit_with_the_spec_message() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let u = env.append(
        "s1",
        &["--text", "Find the bug in main.rs\nIt crashes on start."],
    );
    let a = env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--name",
            "m1",
            "--text",
            "The bug is an off-by-one in the loop.",
        ],
    );
    for t in ["read", "grep", "grep"] {
        env.append("s1", &["--role", "tool", "--name", t, "--text", "…"]);
    }
    let commit = env.ok(&[
        "commit-turn",
        "s1",
        "--tokens",
        "4521",
        "--duration",
        "12.3",
    ]);
    let commit = commit.trim();
    assert_eq!(commit.len(), 40);
    env.assert_clean("s1");
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), commit);
    let msg = env.git("s1", &["log", "-1", "--format=%B"]);
    assert_eq!(
        msg,
        "turn 1: Find the bug in main.rs\n\nassistant: The bug is an off-by-one in the loop.\n\
         tools: read, grep × 2\n\n[meta: turn took 12.3s, 3 tools, 4521 tokens]\n\n\
         Session: s1\nTurn: 1\nNodes: 1..5\n\n"
    );
    // The trailers are real git trailers.
    let trailers = env.git("s1", &["log", "-1", "--format=%(trailers:only,unfold)"]);
    assert_eq!(trailers, "Session: s1\nTurn: 1\nNodes: 1..5\n\n");
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%an <%ae>|%cn|%at"]),
        "OpenProgram <openprogram@local>|OpenProgram|1796017556\n"
    );
    let files = env.git("s1", &["ls-tree", "-r", "--name-only", "HEAD"]);
    let files: Vec<&str> = files.lines().collect();
    assert_eq!(files.len(), 6, "{files:?}");
    assert!(files.contains(&format!("history/000001-u-{u}.json").as_str()));
    assert!(files.contains(&format!("history/000002-a-{a}.json").as_str()));
    assert!(
        files
            .iter()
            .filter(|f| f.starts_with("history/00000") && f.contains("-t-"))
            .count()
            == 3
    );
    assert!(files.contains(&"meta.json"));
    // The root commit is the parent.
    assert_eq!(
        env.git("s1", &["log", "--format=%s"]),
        "turn 1: Find the bug in main.rs\nsession init\n"
    );
    // The node files are what git has.
    let node = env.git("s1", &["show", &format!("HEAD:history/000002-a-{a}.json")]);
    let node: serde_json::Value = serde_json::from_str(&node).unwrap();
    assert_eq!(node["role"], "llm");
    assert_eq!(node["predecessor"], u.as_str());
    assert_eq!(node["seq"], 2);
    // First-turn title.
    let meta = env.meta("s1");
    assert_eq!(meta["title"], "Find the bug in main.rs");
    assert_eq!(meta["head_id"], a.as_str());
    assert_eq!(meta["status"], "idle");
}

#[test]
fn nothing_new_makes_no_commit() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "hello", &[]);
    let out = env.run(&["commit-turn", "s1"]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing new to commit"));
    assert_eq!(env.git("s1", &["rev-list", "--count", "HEAD"]), "2\n");
}

#[test]
fn a_retry_forks_a_branch_from_the_earlier_turn() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, c1) = env.turn("s1", "first question", &[]);
    let (_a2, c2) = env.turn("s1", "second question", &["read"]);
    // Retry turn 2: a user node whose predecessor is turn 1's reply.
    env.append(
        "s1",
        &[
            "--text",
            "second question, asked better",
            "--predecessor",
            &a1,
        ],
    );
    let a3 = env.append("s1", &["--role", "assistant", "--text", "better answer"]);
    let c3 = env.ok(&["commit-turn", "s1"]).trim().to_string();
    env.assert_clean("s1");
    let branch = format!("retry-{a3}");
    assert_eq!(env.git("s1", &["rev-parse", &branch]).trim(), c3);
    assert_eq!(env.git("s1", &["rev-parse", &format!("{c3}^")]).trim(), c1);
    assert_eq!(env.git("s1", &["rev-parse", "main"]).trim(), c2);
    assert_eq!(
        env.git("s1", &["symbolic-ref", "--short", "HEAD"]).trim(),
        branch
    );
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s", &c3]),
        "turn 2: second question, asked better\n"
    );
    // The tree is the whole directory: turn 2's nodes are still there.
    let n = env
        .git("s1", &["ls-tree", "--name-only", "HEAD", "history/"])
        .lines()
        .count();
    assert_eq!(n, 7);
    // Continuing on the retry branch advances it.
    let (_a4, c4) = env.turn("s1", "third", &[]);
    assert_eq!(env.git("s1", &["rev-parse", &branch]).trim(), c4);
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s|%P", &c4]),
        format!("turn 3: third|{c3}\n")
    );
    env.assert_clean("s1");
    let graph = env.git("s1", &["log", "--all", "--graph", "--format=%s"]);
    assert!(graph.contains("|/"), "{graph}");
}

/// Node ids may hold what a git ref name may not (`..`, a final `.` or
/// `.lock`). A retry answered by such an id made `retry-<id>`, which git
/// refuses: commit-turn failed with the turn's commit written and no branch
/// to it, every later one too. The branch is now named after the id made
/// safe, with a tag of the id so that two ids never share one; `verify
/// --fix` names a lost tip the same way.
#[test]
fn a_retry_answered_by_an_id_git_cannot_take_as_a_branch_name_still_commits() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, _) = env.turn("s1", "first question", &[]);
    env.turn("s1", "second question", &[]);
    let mut branches = Vec::new();
    for (k, reply) in ["r..1", "r2.lock", "r3.", "r..4.lock"].iter().enumerate() {
        env.append(
            "s1",
            &["--text", &format!("second, take {k}"), "--predecessor", &a1],
        );
        env.append("s1", &["--role", "assistant", "--id", reply, "--text", "a"]);
        let c = env.ok(&["commit-turn", "s1"]).trim().to_string();
        let head = env.git("s1", &["symbolic-ref", "--short", "HEAD"]);
        let head = head.trim().to_string();
        assert!(head.starts_with("retry-r"), "{reply}: HEAD on {head}");
        assert_eq!(env.git("s1", &["rev-parse", &head]).trim(), c, "{reply}");
        env.git("s1", &["check-ref-format", &format!("refs/heads/{head}")]);
        branches.push(head);
    }
    let mut distinct = branches.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), branches.len(), "{branches:?}");
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "s1"]), "");
    // A lost tip is given back under the name the mirror gave it: the last
    // retry's turn is in no other commit once its branch is gone.
    let last = branches.last().unwrap();
    env.git("s1", &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.git("s1", &["branch", "-D", last]);
    let found = env.run(&["verify", "s1"]);
    let found = String::from_utf8_lossy(&found.stdout);
    assert!(found.contains(&format!("creates `{last}`")), "{found}");
    env.ok(&["verify", "--fix", "s1"]);
    let listed = env.git("s1", &["branch", "--list", last]);
    assert_eq!(listed.trim_start_matches(['*', ' ']).trim(), last);
}

#[test]
fn packed_refs_are_read_as_loose_ones_are() {
    // A `git gc` run by hand packs the refs (background maintenance keeps
    // them loose): HEAD's branch and the retry branches are then read from
    // `packed-refs` alone.
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, _) = env.turn("s1", "one", &[]);
    let (_, c2) = env.turn("s1", "two", &[]);
    env.append("s1", &["--text", "two, again", "--predecessor", &a1]);
    let a3 = env.append("s1", &["--role", "assistant", "--text", "better"]);
    let c3 = env.ok(&["commit-turn", "s1"]).trim().to_string();
    let retry = format!("retry-{a3}");
    let dir = env.session_dir("s1");
    env.git_ok(&dir, &["pack-refs", "--all", "--prune"]);
    assert!(!dir.join(".git/refs/heads/main").exists());
    assert!(!dir.join(".git/refs/heads").join(&retry).exists());
    let log = env.ok(&["log", "s1", "--json"]);
    let first: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(first["data"]["commit"], c3.as_str(), "{log}");
    assert_eq!(first["data"]["branches"][0], retry.as_str(), "{log}");
    assert_eq!(first["data"]["head"], true);
    assert!(env.ok(&["branch", "s1"]).contains("main"));
    // The next turn continues the branch HEAD names.
    let (_, c4) = env.turn("s1", "three", &[]);
    assert_eq!(env.git("s1", &["rev-parse", &retry]).trim(), c4);
    assert_eq!(env.git("s1", &["rev-parse", &format!("{c4}^")]).trim(), c3);
    assert_eq!(env.git("s1", &["rev-parse", "main"]).trim(), c2);
    env.assert_clean("s1");
}

#[test]
fn log_lists_turns_newest_first_with_branches() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.turn("s1", "two", &[]);
    let log = env.ok(&["log", "s1"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].ends_with("turn 2: two (HEAD -> main)"), "{log}");
    assert!(lines[1].ends_with("turn 1: one"));
    assert!(lines[2].ends_with("session init"));
    assert_eq!(env.ok(&["log", "s1", "-n", "1"]).lines().count(), 1);
    let json = env.ok(&["log", "s1", "--json"]);
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "commit");
    assert_eq!(first["data"]["turn"], 2);
    assert_eq!(first["data"]["branches"][0], "main");
    assert_eq!(first["data"]["head"], true);
    assert_eq!(first["data"]["first_seq"], 3);
    assert_eq!(first["data"]["last_seq"], 4);
    assert_eq!(first["data"]["time_rfc3339"], "2026-11-30T05:45:56Z");
}

#[test]
fn log_reads_only_as_far_as_it_shows_and_walks_a_merge_whole() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    for q in ["one", "two", "three"] {
        env.turn("s1", q, &[]);
    }
    let whole = env.ok(&["log", "s1"]);
    let first_two: Vec<&str> = whole.lines().take(2).collect();
    assert_eq!(
        env.ok(&["log", "s1", "-n", "2"])
            .lines()
            .collect::<Vec<_>>(),
        first_two
    );
    // A merge on HEAD's line (another writer's): every commit, children first.
    let dir = env.session_dir("s1");
    let tip = env.git("s1", &["rev-parse", "HEAD"]);
    let side = env.git("s1", &["rev-parse", "HEAD~2"]);
    let merge = env.git(
        "s1",
        &[
            "commit-tree",
            "HEAD^{tree}",
            "-p",
            tip.trim(),
            "-p",
            side.trim(),
            "-m",
            "merge",
        ],
    );
    env.git_ok(&dir, &["update-ref", "refs/heads/main", merge.trim()]);
    let log = env.ok(&["--json", "log", "s1"]);
    let shown: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["data"]["commit"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(shown.len(), 5, "{log}");
    assert_eq!(shown[0], merge.trim());
    assert_eq!(
        shown,
        env.git("s1", &["rev-list", "--topo-order", "HEAD"])
            .lines()
            .collect::<Vec<_>>()
    );
    env.git_ok(&dir, &["update-ref", "refs/heads/main", tip.trim()]);
    // The oldest commit gone: what is shown above it still reads.
    let root = env.git("s1", &["rev-list", "--max-parents=0", "HEAD"]);
    let root = root.trim();
    std::fs::remove_file(dir.join(".git/objects").join(&root[..2]).join(&root[2..])).unwrap();
    assert_eq!(
        env.ok(&["log", "s1", "-n", "2"])
            .lines()
            .collect::<Vec<_>>(),
        first_two
    );
    assert!(
        !env.run(&["log", "s1"]).status.success(),
        "the whole log needs it"
    );
}

#[test]
fn show_prints_the_head_branch_as_a_transcript() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, _) = env.turn("s1", "first question", &["read"]);
    env.turn("s1", "abandoned path", &[]);
    env.append("s1", &["--text", "better path", "--predecessor", &a1]);
    env.append(
        "s1",
        &["--role", "assistant", "--text", "line one\nline two"],
    );
    let show = env.ok(&["show", "s1"]);
    assert!(show.contains("user: first question"), "{show}");
    assert!(show.contains("assistant (m1): re: first question"));
    assert!(show.contains("  tool: read() → ok"));
    assert!(show.contains("user: better path"));
    assert!(show.contains("assistant: line one\n  line two"));
    assert!(
        !show.contains("abandoned"),
        "other branches are not shown: {show}"
    );
    let json = env.ok(&["show", "s1", "--json"]);
    let recs: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 5);
    assert!(recs.iter().all(|r| r["type"] == "node"));
    assert_eq!(recs[4]["data"]["turn"], 2);
}

#[test]
fn status_done_marks_unread_and_failed_adds_a_trailer() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "q"]);
    env.ok(&["commit-turn", "s1", "--status", "done"]);
    assert_eq!(env.meta("s1")["unread"], true);
    assert_eq!(env.meta("s1")["status"], "done");
    env.append("s1", &["--text", "q2"]);
    env.ok(&["commit-turn", "s1", "--status", "failed"]);
    assert!(
        env.git("s1", &["log", "-1", "--format=%B"])
            .contains("\nStatus: failed\n")
    );
    env.assert_clean("s1");
}

#[test]
fn message_flag_replaces_the_subject() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "q"]);
    env.ok(&["commit-turn", "s1", "-m", "custom subject\nmore detail"]);
    let msg = env.git("s1", &["log", "-1", "--format=%B"]);
    assert!(
        msg.starts_with("turn 1: custom subject\n\nmore detail\n"),
        "{msg}"
    );
}

#[test]
fn other_files_in_the_session_are_committed_too() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let dir = env.session_dir("s1");
    std::fs::create_dir_all(dir.join("workdir/sub")).unwrap();
    std::fs::write(dir.join("workdir/sub/notes.txt"), "v1").unwrap();
    std::fs::write(dir.join("workdir/run.sh"), "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("workdir/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("sub/notes.txt", dir.join("workdir/link")).unwrap();
    env.turn("s1", "one", &[]);
    env.assert_clean("s1");
    let tree = env.git("s1", &["ls-tree", "-r", "HEAD", "workdir"]);
    assert!(
        tree.contains("100755 blob") && tree.contains("workdir/run.sh"),
        "{tree}"
    );
    assert!(tree.contains("120000 blob") && tree.contains("workdir/link"));
    // Change, delete, add: the next turn mirrors all of it.
    std::fs::write(dir.join("workdir/sub/notes.txt"), "v2 longer").unwrap();
    std::fs::remove_file(dir.join("workdir/run.sh")).unwrap();
    std::fs::write(dir.join("workdir/new.txt"), "n").unwrap();
    env.turn("s1", "two", &[]);
    env.assert_clean("s1");
    assert_eq!(
        env.git("s1", &["show", "HEAD:workdir/sub/notes.txt"]),
        "v2 longer"
    );
    let names = env.git("s1", &["ls-tree", "-r", "--name-only", "HEAD", "workdir"]);
    assert!(!names.contains("run.sh") && names.contains("workdir/new.txt"));
    // Temp files of ours never go in.
    std::fs::write(dir.join("workdir/.gs-tmp-leftover"), "x").unwrap();
    env.turn("s1", "three", &[]);
    assert!(
        !env.git("s1", &["ls-tree", "-r", "--name-only", "HEAD"])
            .contains(".gs-tmp")
    );
    env.assert_clean("s1");
    // A change that adds no node is committed on its own, without a turn.
    std::fs::write(dir.join("workdir/new.txt"), "changed").unwrap();
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s"]),
        "session: update files\n"
    );
    env.assert_clean("s1");
}

#[test]
fn append_defaults_and_head_moves() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let u1 = env.append("s1", &["--text", "hi"]);
    let m = env.meta("s1");
    assert_eq!(m["head_id"], u1.as_str());
    let a1 = env.append("s1", &["--role", "assistant", "--text", "yo"]);
    let t1 = env.append("s1", &["--role", "tool", "--name", "ls"]);
    let files = env.history_files("s1");
    let read = |id: &str| -> serde_json::Value {
        let f = files
            .iter()
            .find(|f| f.ends_with(&format!("-{id}.json")))
            .unwrap();
        serde_json::from_slice(
            &std::fs::read(env.session_dir("s1").join("history").join(f)).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(read(&u1)["predecessor"], "ROOT");
    assert_eq!(read(&a1)["predecessor"], u1.as_str());
    assert_eq!(read(&t1)["caller"], a1.as_str());
    assert_eq!(read(&t1)["predecessor"], serde_json::Value::Null);
    // Tool nodes do not move the head; top-level nodes do.
    assert_eq!(env.meta("s1")["head_id"], a1.as_str());
    let u2 = env.append("s1", &["--text", "next"]);
    assert_eq!(read_after(&env, &u2)["predecessor"], a1.as_str());
    // Key order of a node is the Python store's.
    let raw =
        std::fs::read_to_string(env.session_dir("s1").join("history").join(&files[0])).unwrap();
    assert!(raw.starts_with("{\"id\":"), "{raw}");
    let keys = [
        "\"id\"",
        "\"created_at\"",
        "\"seq\"",
        "\"role\"",
        "\"name\"",
        "\"input\"",
        "\"output\"",
        "\"caller\"",
        "\"predecessor\"",
        "\"reads\"",
        "\"metadata\"",
    ];
    let pos: Vec<usize> = keys.iter().map(|k| raw.find(k).unwrap()).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{raw}");
    // updated_at moves on append only.
    assert_eq!(env.meta("s1")["updated_at"], 1_796_017_556.0);
}

fn read_after(env: &TestEnv, id: &str) -> serde_json::Value {
    let f = env
        .history_files("s1")
        .into_iter()
        .find(|f| f.ends_with(&format!("-{id}.json")))
        .unwrap();
    serde_json::from_slice(&std::fs::read(env.session_dir("s1").join("history").join(f)).unwrap())
        .unwrap()
}

#[test]
fn json_node_from_stdin_and_printed_records() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let mut c = env.cmd();
    c.args(["append", "s1", "--json-node", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            br#"{"id":"n1","role":"user","output":"from json","metadata":{"k":1},"custom":true}"#,
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["type"], "node_appended");
    assert_eq!(rec["data"]["id"], "n1");
    assert_eq!(rec["data"]["seq"], 1);
    let raw =
        std::fs::read_to_string(env.session_dir("s1").join("history/000001-u-n1.json")).unwrap();
    assert!(
        raw.contains("\"custom\":true") && raw.contains("\"metadata\":{\"k\":1}"),
        "{raw}"
    );
}

#[test]
fn global_flags_go_before_or_after_the_command() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let a = env.ok(&["--json", "append", "s1", "--text", "x"]);
    let b = env.ok(&["append", "s1", "--text", "y", "--json"]);
    for out in [a, b] {
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["type"], "node_appended");
    }
    // -q silences notes.
    env.turn("s1", "z", &[]);
    let out = env.run(&["-q", "commit-turn", "s1"]);
    assert!(out.stderr.is_empty());
}

#[test]
fn append_create_makes_the_session_with_its_first_node() {
    let env = TestEnv::new();
    let out = env.ok(&[
        "append", "new1", "--create", "--text", "hello", "--agent", "a", "--source", "tui",
    ]);
    assert!(out.ends_with(" 1\n"), "{out}");
    assert_eq!(env.history_files("new1").len(), 1);
    assert_eq!(env.meta("new1")["source"], "tui");
    env.ok(&["commit-turn", "new1"]);
    env.assert_clean("new1");
    // A failing first append leaves no shell behind.
    env.fails(
        &[
            "append",
            "new2",
            "--create",
            "--text",
            "x",
            "--predecessor",
            "nope",
        ],
        1,
    );
    assert!(!env.session_dir("new2").exists());
    let leftovers: Vec<_> = std::fs::read_dir(env.state().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".gs-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn attachments_are_copied_and_recorded() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let src = env.tmp.path().join("pic.png");
    std::fs::write(&src, b"\x89PNG fake").unwrap();
    let id = env.append("s1", &["--text", "look", "--attach", src.to_str().unwrap()]);
    let copied = env.session_dir("s1").join("workdir/attachments/pic.png");
    assert_eq!(std::fs::read(&copied).unwrap(), b"\x89PNG fake");
    let node = read_after(&env, &id);
    assert_eq!(
        node["metadata"]["attachments"][0]["path"],
        "workdir/attachments/pic.png"
    );
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    // Symlinks are refused, and nothing is written.
    let link = env.tmp.path().join("link.png");
    std::os::unix::fs::symlink(&src, &link).unwrap();
    let before = crate::env::tree_bytes(&env.session_dir("s1"));
    let err = env.fails(
        &[
            "append",
            "s1",
            "--text",
            "x",
            "--attach",
            link.to_str().unwrap(),
        ],
        1,
    );
    assert!(err.contains("not a regular file"), "{err}");
    assert_eq!(before, crate::env::tree_bytes(&env.session_dir("s1")));
}

#[test]
fn state_dir_resolution_order() {
    let env = TestEnv::new();
    let home = env.tmp.path().join("home");
    let run = |envs: &[(&str, &str)]| {
        let mut c = std::process::Command::new(crate::env::BIN);
        env.isolate(&mut c);
        for (k, v) in envs {
            c.env(k, v);
        }
        let out = c.args(["init", "x"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[]);
    assert!(home.join(".openprogram/sessions/x/meta.json").is_file());
    run(&[("OPENPROGRAM_PROFILE", "work")]);
    assert!(
        home.join(".openprogram-work/sessions/x/meta.json")
            .is_file()
    );
    let custom = env.tmp.path().join("custom");
    run(&[
        ("OPENPROGRAM_HOME", custom.to_str().unwrap()),
        ("OPENPROGRAM_PROFILE", "work"),
    ]);
    assert!(custom.join("sessions/x/meta.json").is_file());
}

#[test]
fn fsync_on_works_the_same() {
    let mut env = TestEnv::new();
    env.fsync = true;
    env.ok(&["init", "s1"]);
    env.turn("s1", "durable", &["read"]);
    env.assert_clean("s1");
}

#[test]
fn a_turn_committed_midway_continues_and_the_next_turn_stays_on_main() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "long task"]);
    let a = env.append("s1", &["--role", "assistant", "--text", "working"]);
    let c1 = env.ok(&["commit-turn", "s1"]).trim().to_string();
    // More of the same turn, then the next turn, committed together.
    env.append("s1", &["--role", "tool", "--name", "read", "--caller", &a]);
    env.append("s1", &["--role", "tool", "--name", "edit", "--caller", &a]);
    env.append("s1", &["--text", "next task"]);
    let out = env.ok(&["commit-turn", "s1"]);
    let ids: Vec<&str> = out.lines().collect();
    assert_eq!(ids.len(), 2, "a continuation commit and a turn commit");
    env.assert_clean("s1");
    assert_eq!(
        env.git("s1", &["branch", "--format=%(refname:short)"]),
        "main\n",
        "no retry branch"
    );
    assert_eq!(
        env.git(
            "s1",
            &[
                "log",
                "--format=%s|%(trailers:key=Turn,valueonly,separator=)"
            ]
        ),
        "turn 2: next task|2\nturn 1 (continued): 2 more nodes|1\nturn 1: long task|1\nsession init|\n"
    );
    assert_eq!(
        env.git("s1", &["rev-parse", &format!("{}^", ids[0])])
            .trim(),
        c1
    );
    assert_eq!(
        env.git("s1", &["rev-parse", &format!("{}^", ids[1])])
            .trim(),
        ids[0]
    );
}

#[test]
fn nodes_written_or_removed_by_another_tool_are_seen() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, _) = env.turn("s1", "one", &[]);
    let dir = env.session_dir("s1");
    // Another writer (the Python store) adds a node behind our back.
    std::fs::write(
        dir.join("history/0010-u-ext.json"),
        format!(r#"{{"id":"ext","created_at":1796017600.0,"seq":10,"role":"user","caller":"","predecessor":"{a1}","output":"from python"}}"#),
    )
    .unwrap();
    let err = env.fails(&["append", "s1", "--id", "ext", "--text", "x"], 1);
    assert!(err.contains("node `ext` already exists"), "{err}");
    let id = env.append("s1", &["--role", "assistant", "--text", "reply"]);
    assert!(
        env.history_files("s1")
            .contains(&format!("000011-a-{id}.json")),
        "seq continues after the foreign node"
    );
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    assert!(
        env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"])
            .contains("history/0010-u-ext.json")
    );
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s"]),
        "turn 2: from python\n"
    );
    // A node file removed by hand leaves the next tree too.
    std::fs::remove_file(dir.join("history/0010-u-ext.json")).unwrap();
    env.append("s1", &["--text", "three"]);
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    assert!(
        !env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"])
            .contains("ext")
    );
}

/// Write `n` tool nodes straight into `history/` (as another writer or a
/// long-running turn would), after a user and an assistant node.
fn bulk_nodes(env: &TestEnv, session: &str, n: u64) {
    env.append(session, &["--text", "big task", "--id", "big-u"]);
    env.append(
        session,
        &[
            "--role",
            "assistant",
            "--id",
            "big-a",
            "--text",
            "many tools",
        ],
    );
    let hist = env.session_dir(session).join("history");
    for seq in 3..3 + n {
        std::fs::write(
            hist.join(format!("{seq:06}-t-bulk{seq}.json")),
            format!(r#"{{"id":"bulk{seq}","created_at":1796017556.0,"seq":{seq},"role":"code","name":"probe","input":null,"output":"result {seq}","caller":"big-a","predecessor":null,"reads":[],"metadata":{{}}}}"#),
        )
        .unwrap();
    }
}

#[test]
fn large_history_trees_go_through_the_writer_thread() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    bulk_nodes(&env, "s1", 1500);
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    let size = object_size(&env, "s1", "HEAD:history");
    assert!(
        size > 64 * 1024,
        "the history tree ({size} bytes) takes the writer-thread path"
    );
    assert_eq!(
        env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"])
            .lines()
            .count(),
        1502
    );
    assert!(
        env.git("s1", &["log", "-1", "--format=%B"])
            .contains("tools: probe × 1500")
    );
    // A crash after the commit objects, before their sync, then a new turn.
    env.append("s1", &["--text", "after"]);
    env.crash_at("commit-before-sync", &["commit-turn", "s1"]);
    env.turn("s1", "again", &[]);
    env.assert_clean("s1");
    assert_eq!(
        env.git("s1", &["log", "--format=%s"]),
        "turn 3: again\nturn 2: after\nturn 1: big task\nsession init\n"
    );
}

#[test]
fn demo_records_sessions_that_git_accepts() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("demo");
    let out = env.ok(&["demo", dir.to_str().unwrap()]);
    assert!(
        out.contains("Try:") && out.contains("log refactor --all"),
        "{out}"
    );
    // Every repository the demo made: two sessions and the user's project.
    // The sessions went where `--state-dir` said (TestEnv always gives it).
    let mut repos: Vec<std::path::PathBuf> = walkdir::WalkDir::new(env.state().join("sessions"))
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() == ".git")
        .map(|e| e.path().parent().unwrap().to_path_buf())
        .collect();
    repos.push(dir.join("app-moved"));
    assert_eq!(repos.len(), 3, "{repos:?}");
    for repo in &repos {
        assert!(
            env.git_in(repo, &["fsck", "--strict"]).status.success(),
            "{}",
            repo.display()
        );
        let status = env.git_in(repo, &["status", "--porcelain"]);
        assert!(
            status.stdout.is_empty(),
            "{}: {}",
            repo.display(),
            String::from_utf8_lossy(&status.stdout)
        );
    }
    assert!(!dir.join("state").exists());
    let repo = env.state().join("sessions/refactor");
    let branches = String::from_utf8(
        env.git_in(&repo, &["branch", "--format=%(refname:short)"])
            .stdout,
    )
    .unwrap();
    assert!(
        branches.contains("main") && branches.contains("retry-"),
        "{branches}"
    );
    let app_log = String::from_utf8(
        env.git_in(&dir.join("app-moved"), &["log", "--format=%an|%s"])
            .stdout,
    )
    .unwrap();
    assert!(
        app_log.starts_with("agent (demo-model via OpenProgram)|[agent feature] turn 1:"),
        "{app_log}"
    );
    // The printed commands work as printed.
    let state = env.state();
    let s = state.to_str().unwrap();
    assert!(
        out.contains(&format!("Recorded two sessions into {s}:")),
        "{out}"
    );
    let log = env.ok(&["--state-dir", s, "log", "refactor", "--all"]);
    assert_eq!(
        log.lines()
            .filter(|l| l.contains(" turn ") || l.contains("session init"))
            .count(),
        4,
        "{log}"
    );
    assert_eq!(env.ok(&["--state-dir", s, "verify", "--all"]), "");
    assert!(
        env.ok(&["--state-dir", s, "project", "log", "app"])
            .contains("[agent feature] turn 1")
    );
    let show = env.ok(&["--state-dir", s, "show", "feature"]);
    assert!(show.contains("greet"), "{show}");
    // A second run into the same state dir is refused, not merged.
    let again = env.tmp.path().join("demo2");
    env.fails(&["demo", again.to_str().unwrap()], 1);
}

/// Without `--state-dir`, `demo` records into a new state dir in DIR and
/// leaves the default one (and `$OPENPROGRAM_HOME`'s) alone.
#[test]
fn demo_without_a_state_dir_makes_its_own() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("demo");
    let home = env.tmp.path().join("home");
    let mut c = std::process::Command::new(crate::env::BIN);
    env.isolate(&mut c);
    let out = crate::env::output(c.args(["demo", dir.to_str().unwrap()]));
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let state = dir.join("state").canonicalize().unwrap();
    assert!(
        stdout.contains(&format!("Recorded two sessions into {}:", state.display())),
        "{stdout}"
    );
    assert!(state.join("sessions/refactor/meta.json").is_file());
    assert!(!home.join(".openprogram").exists());
    assert!(!env.state().exists());
    // A second run into the same directory is refused, not merged.
    let mut c = std::process::Command::new(crate::env::BIN);
    env.isolate(&mut c);
    let again = crate::env::output(c.args(["demo", dir.to_str().unwrap()]));
    assert_eq!(again.status.code(), Some(1), "{again:?}");
}

/// Loose object files and packs in a session repo (a background git may be
/// removing directories meanwhile).
fn objects(dir: &std::path::Path) -> (usize, usize) {
    let mut loose = 0;
    let mut packs = 0;
    for e in std::fs::read_dir(dir.join(".git/objects")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if name.len() == 2 {
            loose += std::fs::read_dir(e.path()).map_or(0, |rd| rd.count());
        } else if name == "pack" {
            packs += std::fs::read_dir(e.path())
                .unwrap()
                .filter(|p| {
                    p.as_ref()
                        .is_ok_and(|p| p.path().extension() == Some("pack".as_ref()))
                })
                .count();
        }
    }
    (loose, packs)
}

/// Wait (up to a minute) for the background git to leave `want`.
fn wait_for_objects(dir: &std::path::Path, want: impl Fn((usize, usize)) -> bool) {
    let start = std::time::Instant::now();
    while !want(objects(dir)) || dir.join(".git/gc.pid").exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "background packing left (loose, packs) = {:?}",
            objects(dir)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Size of the object `rev` names in `session`'s repo (`git cat-file -s`).
fn object_size(env: &TestEnv, session: &str, rev: &str) -> usize {
    env.git(session, &["cat-file", "-s", rev])
        .trim()
        .parse()
        .unwrap()
}

/// Bytes `id` takes in its pack, compressed or as a delta (`git
/// verify-pack -v`).
fn packed_size(env: &TestEnv, dir: &std::path::Path, id: &str) -> usize {
    for e in std::fs::read_dir(dir.join(".git/objects/pack")).unwrap() {
        let p = e.unwrap().path();
        if p.extension() != Some("idx".as_ref()) {
            continue;
        }
        let out = env.git_in(dir, &["verify-pack", "-v", p.to_str().unwrap()]);
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.first() == Some(&id) {
                return f[3].parse().unwrap();
            }
        }
    }
    panic!("{id} is in no pack");
}

/// `mirror::ROLL_UP_OBJECTS` and `mirror::ROLL_UP_BYTES`.
const ROLL_UP_OBJECTS: u64 = 700;
const ROLL_UP_BYTES: u64 = 16 << 20;

/// Each turn writes its objects loose, as git does; once they pile up (700
/// objects, about a hundred turns, or 16 MiB) a background git rolls them
/// up into a pack (deltas and all), one run at a time, a skipped run being
/// tried again at the next turn; and from 50 packs on it runs `git gc`.
#[test]
fn piled_up_loose_objects_are_rolled_up_in_the_background() {
    let env = TestEnv::new();
    env.ok(&["init", "s1", "-q"]);
    let dir = env.session_dir("s1");
    // A node no other one resembles, so that it is not stored as a delta.
    let text = "a long and very compressible question ".repeat(100);
    env.append("s1", &["--text", &text]);
    env.append("s1", &["--role", "assistant", "--text", "short"]);
    env.ok(&["commit-turn", "s1"]);
    for k in 2..12 {
        env.turn("s1", &format!("question {k}"), &["read"]);
    }
    // Loose objects only, counted in the snapshot marker.
    let (loose, packs) = objects(&dir);
    assert!(loose > 11 * 4 && packs == 0, "{loose} loose, {packs} packs");
    let snap = std::fs::read_to_string(dir.join(".git/git-session/snapshot")).unwrap();
    let counted: u64 = snap.lines().nth(3).unwrap().parse().unwrap();
    assert!(
        counted as usize >= loose - 2 && counted < ROLL_UP_OBJECTS,
        "{counted} counted, {loose} loose"
    );
    env.assert_clean("s1");
    set_snapshot_count(&dir, 3, ROLL_UP_OBJECTS - 1);
    env.turn("s1", "question 12", &["read"]);
    wait_for_objects(&dir, |o| o == (0, 1));
    env.assert_clean("s1");
    // The roll-up compressed the objects.
    let files = env.git("s1", &["ls-tree", "-r", "--name-only", "HEAD", "history/"]);
    let first = files.lines().next().unwrap();
    let blob = env.git("s1", &["rev-parse", &format!("HEAD:{first}")]);
    let in_pack = packed_size(&env, &dir, blob.trim());
    let size = object_size(&env, "s1", blob.trim());
    assert!(
        size > 3000 && in_pack < size / 4,
        "{first}: {in_pack} of {size}"
    );
    // One run at a time: while one holds the lock, a due run is skipped,
    // and the next turn tries again.
    let lock = std::fs::File::options()
        .write(true)
        .open(dir.join(".git/git-session/maintenance.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    set_snapshot_count(&dir, 4, ROLL_UP_BYTES - 1);
    for k in 13..15 {
        env.turn("s1", &format!("question {k}"), &["grep"]);
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (loose, packs) = objects(&dir);
    assert!(loose > 2 * 4 && packs == 1, "{loose} loose, {packs} packs");
    drop(lock);
    env.turn("s1", "question 15", &["grep"]);
    // Geometric: the new objects' pack beside the first, or both in one.
    wait_for_objects(&dir, |(loose, packs)| {
        loose == 0 && (1..=2).contains(&packs)
    });
    let (_, rolled) = objects(&dir);
    env.assert_clean("s1");
    // Not due again until objects pile up anew.
    env.turn("s1", "question 16", &["grep"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (unpacked, packs) = objects(&dir);
    assert!(
        unpacked > 0 && packs == rolled,
        "{unpacked} loose, {packs} packs"
    );
    // Packs pile up (a git that failed, say): the next run is `git gc`,
    // which puts the unreachable objects into a cruft pack.
    for k in 0..GC_AT_PACKS {
        let id = env.git_with_input(
            &dir,
            &["hash-object", "-w", "--stdin"],
            &format!("blob {k}"),
        );
        env.git_with_input(&dir, &["pack-objects", "-q", ".git/objects/pack/pack"], &id);
    }
    env.git_ok(&dir, &["prune-packed"]);
    assert_eq!(objects(&dir), (unpacked, rolled + GC_AT_PACKS));
    set_snapshot_count(&dir, 3, ROLL_UP_OBJECTS - 1);
    env.turn("s1", "question 17", &[]);
    wait_for_objects(&dir, |o| o == (0, 2));
    env.assert_clean("s1");
    assert_eq!(env.git("s1", &["rev-list", "--count", "HEAD"]), "18\n");
}

/// `git::GC_AT_PACKS`.
const GC_AT_PACKS: usize = 50;

/// `commit-turn --dry-run` prints the plan and commits nothing; the real
/// run then makes exactly the planned commits.
#[test]
fn commit_turn_dry_run_prints_the_plan_and_writes_nothing() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let u = env.append("s1", &["--text", "two"]);
    env.append("s1", &["--role", "assistant", "--text", "answer"]);
    let dir = env.session_dir("s1");
    let log_before = env.git("s1", &["log", "--all", "--format=%H %s"]);
    let meta_before = std::fs::read(dir.join("meta.json")).unwrap();
    let text = env.ok(&["commit-turn", "s1", "--dry-run", "--status", "done"]);
    assert_eq!(
        text,
        "would commit turn 2: 2 node(s) (seqs 3..4) on `main`\n"
    );
    let json = env.ok(&["--json", "commit-turn", "s1", "-n"]);
    let planned: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(planned["type"], "turn_planned");
    assert_eq!(planned["data"]["turn"], 2);
    assert_eq!(planned["data"]["branch"], "main");
    assert_eq!(planned["data"]["nodes"], 2);
    // Nothing was written: no commit, meta.json as it was, the nodes pending.
    assert_eq!(
        env.git("s1", &["log", "--all", "--format=%H %s"]),
        log_before
    );
    assert_eq!(std::fs::read(dir.join("meta.json")).unwrap(), meta_before);
    let status = env.git("s1", &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(
        status
            .lines()
            .filter(|l| l.starts_with("?? history/"))
            .count(),
        2,
        "{status}"
    );
    // The real run makes the planned commit.
    let made = env.ok(&["--json", "commit-turn", "s1"]);
    let made: serde_json::Value = serde_json::from_str(made.lines().next().unwrap()).unwrap();
    for k in [
        "turn",
        "branch",
        "new_branch",
        "first_seq",
        "last_seq",
        "nodes",
    ] {
        assert_eq!(made["data"][k], planned["data"][k], "{k}");
    }
    env.assert_clean("s1");
    // Nothing left: the plan is empty.
    assert_eq!(env.ok(&["commit-turn", "s1", "--dry-run"]), "");
    // A second reply to the message: a regenerated reply, on a branch of its own.
    env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--id",
            "again",
            "--predecessor",
            &u,
            "--text",
            "b",
        ],
    );
    assert_eq!(
        env.ok(&["commit-turn", "s1", "-n"]),
        "would commit turn 2: 1 node(s) (seq 5) on new branch `retry-again`\n"
    );
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(
        env.git("s1", &["branch", "--show-current"]),
        "retry-again\n"
    );
}
