//! The read layer (issue 22): `nodes` past a cursor with provenance, `feed`
//! across the state dir, `cat` one node, `grep` across sessions.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::FileTypeExt;

use serde_json::Value;

use crate::env::TestEnv;

pub fn records(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn ids(recs: &[Value]) -> Vec<String> {
    recs.iter()
        .map(|r| r["data"]["node_id"].as_str().unwrap().to_string())
        .collect()
}

/// The clock runs: `updated_at` moves with every append, as `feed` expects.
fn real_clock() -> TestEnv {
    let mut env = TestEnv::new();
    env.now = None;
    env
}

/// Two sessions, one with a retry branch and a node not yet committed.
fn sessions(env: &TestEnv) {
    env.ok(&["init", "s1"]);
    env.turn("s1", "first question", &["read"]);
    let (a2, _) = env.turn("s1", "second question", &["edit", "run_tests"]);
    let _ = a2;
    // A retry from the first turn: its own branch.
    let first_user = env.ok(&["--json", "nodes", "s1", "--limit", "1"]);
    let u1 = records(&first_user)[0]["data"]["node_id"]
        .as_str()
        .unwrap()
        .to_string();
    let a1 = env.ok(&["--json", "nodes", "s1", "--after-seq", "1", "--limit", "1"]);
    let a1 = records(&a1)[0]["data"]["node_id"]
        .as_str()
        .unwrap()
        .to_string();
    let _ = u1;
    env.append("s1", &["--predecessor", &a1, "--text", "retry the second"]);
    env.append("s1", &["--role", "assistant", "--text", "retried answer"]);
    env.ok(&["commit-turn", "s1"]);
    env.append("s1", &["--text", "pending NEEDLE question"]);
    env.ok(&["init", "s2", "--agent", "other"]);
    env.turn("s2", "a needle in s2", &[]);
}

/// Checks a `session_node` record's `commit` against git: the commits that
/// add the node's file on any branch (a retry branch's commits hold the
/// other branch's files too: the tree is the whole session directory), and
/// the record names the earliest of them (`null` when there is none).
pub fn committed_where_git_says(env: &TestEnv, session: &str, rec: &Value) {
    let d = &rec["data"];
    let id = d["node_id"].as_str().unwrap();
    let spec = format!(":(glob)history/*-{id}.json");
    let adders: Vec<(String, u64)> = env
        .git(
            session,
            &[
                "log",
                "--all",
                "--diff-filter=A",
                "--format=%H %ct",
                "--",
                &spec,
            ],
        )
        .lines()
        .map(|l| l.split_once(' ').unwrap())
        .map(|(c, t)| (c.to_string(), t.parse().unwrap()))
        .collect();
    match d["commit"].as_str() {
        Some(c) => {
            let Some((_, t)) = adders.iter().find(|(a, _)| a == c) else {
                panic!("node {id}: {c} does not add it: {adders:?}")
            };
            assert!(adders.iter().all(|(_, u)| t <= u), "node {id}: {adders:?}");
        }
        None => assert!(adders.is_empty(), "node {id} is committed: {adders:?}"),
    }
}

#[test]
fn nodes_carry_the_commit_whose_tree_first_holds_them() {
    let env = real_clock();
    sessions(&env);
    let recs = records(&env.ok(&["--json", "nodes", "s1", "--ingestion-time", "1800000000"]));
    assert_eq!(
        recs.len(),
        10,
        "7 nodes in two turns, a retry of 2, 1 pending"
    );
    let mut seqs = Vec::new();
    for r in &recs {
        let d = &r["data"];
        assert_eq!(r["type"], "session_node");
        assert_eq!(d["session_id"], "s1");
        assert_eq!(d["project_id"], "default");
        assert_eq!(d["ingestion_time"], 1_800_000_000.0);
        assert_eq!(d["ingestion_time_rfc3339"], "2027-01-15T08:00:00Z");
        assert_eq!(d["event_time"], d["node"]["created_at"]);
        seqs.push(d["seq"].as_i64().unwrap());
        committed_where_git_says(&env, "s1", r);
        match d["commit"].as_str() {
            Some(c) => {
                // Its trailer names the node.
                let msg = env.git("s1", &["log", "-1", "--format=%B", c]);
                let nodes = msg.lines().find_map(|l| l.strip_prefix("Nodes: ")).unwrap();
                let (lo, hi) = nodes.split_once("..").unwrap();
                let seq = d["seq"].as_u64().unwrap();
                assert!(lo.parse::<u64>().unwrap() <= seq && seq <= hi.parse().unwrap());
            }
            None => assert!(d["node"]["output"].as_str().unwrap().contains("pending")),
        }
    }
    let mut sorted = seqs.clone();
    sorted.sort();
    assert_eq!(seqs, sorted, "seq order");
    // Past a cursor: only what is newer, in order.
    let after = records(&env.ok(&["--json", "nodes", "s1", "--after-seq", "10"]));
    assert!(
        after
            .iter()
            .all(|r| r["data"]["seq"].as_i64().unwrap() > 10)
    );
    assert_eq!(after.len(), seqs.iter().filter(|s| **s > 10).count());
    // The human form: one line a node.
    let text = env.ok(&["nodes", "s1", "--after-seq", "10"]);
    assert_eq!(text.lines().count(), after.len());
}

#[test]
fn cat_prints_the_file_as_stored_and_names_the_closest_ids() {
    let env = real_clock();
    sessions(&env);
    let recs = records(&env.ok(&["--json", "nodes", "s1"]));
    let d = &recs[3]["data"];
    let id = d["node_id"].as_str().unwrap();
    let out = env.ok(&["cat", "s1", id]);
    let dir = env.session_dir("s1").join("history");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(&format!("-{id}.json")))
        .unwrap();
    let stored = std::fs::read_to_string(file).unwrap();
    assert_eq!(out.trim_end(), stored.trim_end(), "byte for byte");
    let rec = records(&env.ok(&["--json", "cat", "s1", id]));
    assert_eq!(rec[0]["data"]["node_id"], id);
    // Unknown node: exit 1 and the closest ids.
    let typo = format!("{}x", &id[..id.len() - 1]);
    let err = env.fails(&["cat", "s1", &typo], 1);
    assert!(err.contains(&format!("no node `{typo}`")), "{err}");
    assert!(err.contains(id), "the closest id is named: {err}");
    // Unknown session: exit 1.
    let err = env.fails(&["cat", "nope", id], 1);
    assert!(err.contains("no session `nope`"), "{err}");
    let err = env.fails(&["nodes", "nope"], 1);
    assert!(err.contains("no session `nope`"), "{err}");
}

#[test]
fn every_node_is_handed_out_once_while_others_append() {
    let env = real_clock();
    env.ok(&["init", "s1"]);
    env.ok(&["init", "s2"]);
    let cursor = env.tmp.path().join("cursor.json");
    let cursor = cursor.to_str().unwrap();
    let mut by_nodes: Vec<String> = Vec::new();
    let mut by_feed: Vec<(String, String)> = Vec::new();
    let mut last = -1i64;
    let writers = std::thread::scope(|s| {
        let w: Vec<_> = ["s1", "s2"]
            .into_iter()
            .map(|sid| {
                let env = &env;
                s.spawn(move || {
                    let mut written = Vec::new();
                    for i in 0..30 {
                        let id = format!("{sid}n{i}");
                        env.append(sid, &["--role", "tool", "--id", &id, "--text", "x"]);
                        written.push((sid.to_string(), id));
                        if i % 10 == 9 {
                            env.ok(&["commit-turn", sid]);
                        }
                    }
                    written
                })
            })
            .collect();
        // Read while they write.
        for _ in 0..25 {
            let after = last.to_string();
            let recs = records(&env.ok(&["--json", "nodes", "s1", "--after-seq", &after]));
            for r in &recs {
                last = last.max(r["data"]["seq"].as_i64().unwrap());
            }
            by_nodes.extend(ids(&recs));
            let recs = records(&env.ok(&["--json", "feed", "--cursor", cursor]));
            by_feed.extend(recs.iter().map(|r| {
                (
                    r["data"]["session_id"].as_str().unwrap().to_string(),
                    r["data"]["node_id"].as_str().unwrap().to_string(),
                )
            }));
        }
        w.into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    // And once more after the writers are done.
    let recs = records(&env.ok(&["--json", "nodes", "s1", "--after-seq", &last.to_string()]));
    by_nodes.extend(ids(&recs));
    let recs = records(&env.ok(&["--json", "feed", "--cursor", cursor]));
    by_feed.extend(recs.iter().map(|r| {
        (
            r["data"]["session_id"].as_str().unwrap().to_string(),
            r["data"]["node_id"].as_str().unwrap().to_string(),
        )
    }));
    let s1: Vec<String> = writers
        .iter()
        .filter(|(s, _)| s == "s1")
        .map(|(_, id)| id.clone())
        .collect();
    assert_eq!(by_nodes, s1, "nodes --after-seq: each node once, in order");
    let mut fed = by_feed.clone();
    fed.sort();
    fed.dedup();
    assert_eq!(fed.len(), by_feed.len(), "feed handed a node out twice");
    let mut all = writers.clone();
    all.sort();
    assert_eq!(fed, all, "feed: every node");
    // Nothing new: nothing out.
    assert_eq!(env.ok(&["--json", "feed", "--cursor", cursor]), "");
}

#[test]
fn a_feed_killed_mid_output_repeats_and_never_skips() {
    let env = real_clock();
    sessions(&env);
    let cursor = env.tmp.path().join("cursor.json");
    let c = cursor.to_str().unwrap();
    let everything = records(&env.ok(&["--json", "feed"]));
    assert_eq!(everything.len(), 12);
    // Killed after the fifth record, and after the whole output but before
    // the cursor is written: nothing moves.
    for at in ["feed-record-written#5", "feed-output-written"] {
        let out = env
            .cmd()
            .args(["--json", "feed", "--cursor", c])
            .env("GIT_SESSION_CRASH_AT", at)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{at}: the crash point was reached");
        assert!(!cursor.exists(), "{at}: the cursor moved");
    }
    // The next run hands out everything, then nothing.
    let again = records(&env.ok(&["--json", "feed", "--cursor", c]));
    let key = |r: &Value| {
        (
            r["data"]["session_id"].clone().to_string(),
            r["data"]["node_id"].to_string(),
        )
    };
    let a: BTreeSet<_> = everything.iter().map(key).collect();
    let b: BTreeSet<_> = again.iter().map(key).collect();
    assert_eq!(a, b);
    assert_eq!(env.ok(&["--json", "feed", "--cursor", c]), "");
    // A reader that goes away mid-output: the cursor does not move either.
    env.ok(&["append", "s2", "--text", "new after the cursor"]);
    let before = std::fs::read(&cursor).unwrap();
    // (Its stdout is closed before it starts: it cannot write first.)
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = env
        .cmd()
        .args(["--json", "feed", "--cursor", c])
        .stdout(writer)
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "a closed stdout is an error");
    assert_eq!(std::fs::read(&cursor).unwrap(), before);
    // Archived sessions are fed too.
    env.ok(&["archive", "s1"]);
    env.ok(&["append", "s1", "--text", "in an archived session"]);
    let recs = records(&env.ok(&["--json", "feed", "--cursor", c]));
    let sessions: BTreeSet<&str> = recs
        .iter()
        .map(|r| r["data"]["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, BTreeSet::from(["s1", "s2"]));
}

#[test]
fn grep_finds_every_role_and_keeps_to_its_filters() {
    let env = real_clock();
    sessions(&env);
    let hits = |args: &[&str]| -> Vec<Value> {
        let mut a = vec!["--json", "grep"];
        a.extend_from_slice(args);
        let out = env.run(&a);
        records(&String::from_utf8(out.stdout).unwrap())
    };
    // Every role: the user's question, the assistant's reply, a tool's input.
    env.append(
        "s2",
        &[
            "--role",
            "tool",
            "--name",
            "search",
            "--input",
            r#"{"q": "findme"}"#,
            "--text",
            "nothing",
        ],
    );
    env.append("s2", &["--text", "FINDME please"]);
    let all = hits(&["-i", "findme"]);
    let roles: BTreeSet<&str> = all
        .iter()
        .map(|h| h["data"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, BTreeSet::from(["tool", "user"]), "{all:?}");
    let tool = all.iter().find(|h| h["data"]["role"] == "tool").unwrap();
    assert_eq!(tool["data"]["field"], "input");
    let h = &all[0]["data"];
    let snippet = h["snippet"].as_str().unwrap();
    let (a, b) = (
        h["start"].as_u64().unwrap() as usize,
        h["end"].as_u64().unwrap() as usize,
    );
    assert!(snippet[a..b].eq_ignore_ascii_case("findme"), "{snippet}");
    // An assistant reply, with its turn.
    let r = hits(&["retried answer"]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["data"]["role"], "assistant");
    assert_eq!(r[0]["data"]["turn"], 2, "the retry is turn 2 of its branch");
    // Case: without -i, only the exact case.
    assert_eq!(hits(&["NEEDLE"]).len(), 1);
    // s1's pending question; s2's question and its reply.
    assert_eq!(hits(&["-i", "needle"]).len(), 3);
    // Filters.
    assert_eq!(hits(&["-i", "needle", "--session", "s2"]).len(), 2);
    assert_eq!(hits(&["-i", "needle", "--agent", "other"]).len(), 2);
    assert_eq!(hits(&["-i", "needle", "--role", "assistant"]).len(), 1);
    assert_eq!(
        hits(&["-i", "needle", "--role", "user", "--role", "tool"]).len(),
        2
    );
    assert_eq!(hits(&["-i", "needle", "--limit", "1"]).len(), 1);
    assert_eq!(hits(&["-i", "needle", "--project", "default"]).len(), 3);
    assert_eq!(hits(&["-i", "needle", "--project", "elsewhere"]).len(), 0);
    // Newest sessions first: s2 was written last.
    assert_eq!(hits(&["-i", "needle"])[0]["data"]["session"], "s2");
    // -F: the pattern as it is.
    assert_eq!(hits(&["-F", "run_tests("]).len(), 0);
    assert!(hits(&["-F", "question"]).len() >= 2);
    // Archived sessions only with --include-archived.
    env.ok(&["archive", "s2"]);
    assert_eq!(hits(&["-i", "needle"]).len(), 1);
    assert_eq!(hits(&["-i", "needle", "--include-archived"]).len(), 3);
    // Nothing found: exit 1; not a regex: exit 2; unknown session: exit 1.
    env.fails(&["grep", "no such text anywhere"], 1);
    let err = env.fails(&["grep", "(unclosed"], 2);
    assert!(err.contains("not a valid regular expression"), "{err}");
    assert!(err.contains("-F"), "{err}");
    env.fails(&["grep", "x", "--session", "nope"], 1);
    // The human form names session, seq, node, role and turn.
    let text = env.ok(&["grep", "retried answer"]);
    assert!(text.starts_with("s1:"), "{text}");
    assert!(
        text.contains("(assistant, turn 2): retried answer"),
        "{text}"
    );
}

#[test]
fn project_log_carries_provenance() {
    let env = TestEnv::new();
    let project = env.tmp.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    env.python_repo(&project);
    env.ok(&[
        "project",
        "add",
        project.to_str().unwrap(),
        "--name",
        "proj",
        "--auto-commit",
    ]);
    let init = records(&env.ok(&["--json", "init", "s1", "--project", "proj"]));
    let sdir = std::path::PathBuf::from(init[0]["data"]["path"].as_str().unwrap());
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(project.join("a.txt"), "agent\n").unwrap();
    env.turn("s1", "write a.txt", &["edit"]);
    let recs = records(&env.ok(&["--json", "project", "log", "proj"]));
    let d = &recs[0]["data"];
    assert_eq!(recs[0]["type"], "agent_commit");
    assert_eq!(d["session_id"], "s1");
    assert_eq!(d["turn"], 1);
    let head = env.git_ok(&project, &["rev-parse", "HEAD"]);
    assert_eq!(d["commit"], head.trim());
    let session_head = env.git_ok(&sdir, &["rev-parse", "HEAD"]);
    assert_eq!(d["session_commit"], session_head.trim());
    // The node records of that turn name the same session commit.
    let nodes = records(&env.ok(&["--json", "nodes", "s1"]));
    let commits: BTreeMap<String, Value> = nodes
        .iter()
        .map(|r| {
            (
                r["data"]["node_id"].to_string(),
                r["data"]["commit"].clone(),
            )
        })
        .collect();
    assert!(
        commits.values().all(|c| c == &d["session_commit"]),
        "{commits:?}"
    );
    assert!(d["project_id"].as_str().unwrap().len() > 4);
}

#[test]
fn feed_reads_the_journal_and_falls_back_to_the_index_after_a_fold() {
    let env = real_clock();
    sessions(&env);
    let cursor = env.tmp.path().join("cursor.json");
    let c = cursor.to_str().unwrap();
    let feed = || -> Vec<String> { ids(&records(&env.ok(&["--json", "feed", "--cursor", c]))) };
    assert_eq!(feed().len(), 12);
    // Appends only journal their rows: the next feed reads the journal.
    let a = env.append("s1", &["--text", "journaled"]);
    let b = env.append("s2", &["--text", "journaled too"]);
    assert_eq!(feed(), vec![a, b]);
    assert!(feed().is_empty());
    // A change that rewrites index.json: the next feed compares the rows.
    env.ok(&["update", "s1", "--pin"]);
    let c2 = env.append("s2", &["--text", "after a fold"]);
    assert_eq!(feed(), vec![c2]);
    // A deleted session leaves the cursor.
    env.ok(&["delete", "s2", "--yes"]);
    assert!(feed().is_empty());
    let saved: Value = serde_json::from_slice(&std::fs::read(&cursor).unwrap()).unwrap();
    assert!(saved["sessions"].get("s2").is_none(), "{saved}");
    assert!(saved["sessions"].get("s1").is_some(), "{saved}");
}

#[test]
fn a_cursor_that_is_not_a_regular_file_is_refused_and_left_alone() {
    let env = real_clock();
    sessions(&env);
    let fifo = env.tmp.path().join("cursor.fifo");
    crate::env::mkfifo(&fifo);
    let err = env.fails(&["feed", "--cursor", fifo.to_str().unwrap()], 1);
    assert!(err.contains("not a regular file"), "{err}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let dir = env.tmp.path().join("a-dir");
    std::fs::create_dir(&dir).unwrap();
    env.fails(&["feed", "--cursor", dir.to_str().unwrap()], 1);
    assert!(dir.is_dir());
}

#[test]
fn a_commit_whose_history_is_not_a_directory_holds_no_node() {
    // Another writer's commits on top: one with a node (no trailers), then
    // one whose tree has a file, or a submodule, named `history`.
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (u1, _) = env.turn("s1", "one", &[]);
    let u2 = env.append("s1", &["--text", "by git"]);
    let dir = env.session_dir("s1");
    env.git_ok(&dir, &["add", "-A"]);
    env.git_ok(&dir, &["commit", "-q", "-m", "turn: by git"]);
    let by_git = env.git("s1", &["rev-parse", "HEAD"]);
    let turn = env.git("s1", &["rev-parse", "HEAD~1"]);
    let blob = env.git_with_input(&dir, &["hash-object", "-w", "--stdin"], "not a directory");
    for entry in [
        format!("100644 blob {blob}\thistory\n"),
        format!("160000 commit {}\thistory\n", "1".repeat(40)),
    ] {
        let tree = env.git_with_input(&dir, &["mktree", "--missing"], &entry);
        let top = env.git(
            "s1",
            &["commit-tree", &tree, "-p", by_git.trim(), "-m", "turn: odd"],
        );
        env.git_ok(&dir, &["update-ref", "refs/heads/main", top.trim()]);
        let recs = records(&env.ok(&["--json", "nodes", "s1"]));
        let commit_of = |id: &str| {
            let r = recs.iter().find(|r| r["data"]["node_id"] == id).unwrap();
            r["data"]["commit"].clone()
        };
        // Named by its trailer: its commit; the tip's line holds nothing.
        assert_eq!(commit_of(&u1), turn.trim(), "{entry}");
        assert!(commit_of(&u2).is_null(), "{entry}");
    }
}

#[test]
fn an_incremental_read_of_a_session_without_trailers_stops_where_its_files_end() {
    // 20 turns committed as the Python store does: `git add -A && git
    // commit`, no trailers.
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let dir = env.session_dir("s1");
    let mut last = String::new();
    for k in 0..20 {
        last = env.append("s1", &["--text", &format!("question {k}")]);
        env.git_ok(&dir, &["add", "-A"]);
        env.git_ok(
            &dir,
            &["commit", "-q", "-m", &format!("turn: question {k}")],
        );
    }
    let tip = env.git("s1", &["rev-parse", "HEAD"]);
    // The session's first commit gone: what is past a recent seq still reads.
    let root = env.git("s1", &["rev-list", "--max-parents=0", "HEAD"]);
    let root = root.trim();
    std::fs::remove_file(dir.join(".git/objects").join(&root[..2]).join(&root[2..])).unwrap();
    let recs = records(&env.ok(&["--json", "nodes", "s1", "--after-seq", "19"]));
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["data"]["node_id"], last.as_str());
    assert_eq!(recs[0]["data"]["commit"], tip.trim());
    assert!(
        !env.run(&["nodes", "s1"]).status.success(),
        "the whole read needs it"
    );
}

/// One session with a node that cannot be read (a link in its place) holds
/// back that session alone: the feed hands out the others, names the one
/// it skipped, and hands it out whole once it is repaired.
#[test]
fn a_feed_skips_an_unreadable_session_and_tries_it_again() {
    let env = real_clock();
    env.ok(&["init", "good"]);
    env.turn("good", "readable", &[]);
    env.ok(&["init", "bad"]);
    env.turn("bad", "held back", &[]);
    let link = env.session_dir("bad").join("history/000003-u-linked.json");
    std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
    let cursor = env.tmp.path().join("cursor.json");
    let c = cursor.to_str().unwrap();
    let out = env.run(&["--json", "feed", "--cursor", c]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skipping session `bad`"), "{err}");
    let first = records(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|r| r["data"]["session_id"] == "good"));
    // Still unreadable: skipped again, nothing of it handed out.
    let out = env.run(&["--json", "feed", "--cursor", c]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipping session `bad`"));
    assert_eq!(records(&String::from_utf8_lossy(&out.stdout)).len(), 0);
    // Repaired: its nodes come, then nothing.
    std::fs::remove_file(&link).unwrap();
    let then = records(&env.ok(&["--json", "feed", "--cursor", c]));
    assert_eq!(then.len(), 2);
    assert!(then.iter().all(|r| r["data"]["session_id"] == "bad"));
    assert_eq!(env.ok(&["--json", "feed", "--cursor", c]), "");
}

/// Peak resident memory (KiB) of `cmd` run to its end, stdout to a file;
/// and its exit code. Measured by a small python3 parent: a child's peak
/// counts its parent's memory up to the `exec` (the test process's own,
/// here, which the other tests running beside it make large).
fn peak_rss_kib(cmd: &std::process::Command, out: &std::path::Path) -> (i32, i64) {
    let mut argv = vec![cmd.get_program().to_string_lossy().into_owned()];
    argv.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    let script = "import json, resource, subprocess, sys\n\
        argv, out = json.loads(sys.argv[1]), sys.argv[2]\n\
        code = subprocess.run(argv, stdout=open(out, 'wb'), stderr=subprocess.DEVNULL).returncode\n\
        print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)";
    let mut py = std::process::Command::new("python3");
    py.arg("-c")
        .arg(script)
        .arg(serde_json::to_string(&argv).unwrap())
        .arg(out);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => py.env(k, v),
            None => py.env_remove(k),
        };
    }
    let o = py.output().expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut words = text.split_whitespace().map(|w| w.parse::<i64>().unwrap());
    (words.next().unwrap() as i32, words.next().unwrap())
}

/// `feed` and `nodes` hand a session's nodes out one at a time: their
/// memory is that of one node, not of the session (a memory pipeline's
/// first run over a large imported session). 40 nodes of 1 MiB each.
#[test]
fn feed_and_nodes_keep_one_node_in_memory_not_the_session() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let big = "x".repeat(1 << 20);
    let mut child = env
        .cmd()
        .arg("batch")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        for i in 0..40 {
            let argv = ["append", "s1", "--role", "tool", "--name", "read", "--id"];
            let mut argv: Vec<String> = argv.map(String::from).into();
            argv.extend([format!("n{i}"), "--file".into(), "-".into()]);
            writeln!(stdin, "{}", serde_json::json!({"argv": argv, "stdin": big})).unwrap();
        }
        writeln!(
            stdin,
            "{}",
            serde_json::json!({"argv": ["commit-turn", "s1"]})
        )
        .unwrap();
    }
    assert!(child.wait().unwrap().success());
    let out = env.tmp.path().join("out.jsonl");
    for args in [
        &["--json", "feed"][..],
        &["feed"],
        &["--json", "nodes", "s1"],
        &["nodes", "s1"],
    ] {
        let mut c = env.cmd();
        c.args(args);
        let (code, kib) = peak_rss_kib(&c, &out);
        assert_eq!(code, 0, "{args:?}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 40, "{args:?}");
        if args[0] == "--json" {
            let recs = records(&text);
            assert!(
                recs.iter()
                    .all(|r| r["data"]["node"]["output"].as_str() == Some(&big))
            );
            assert!(recs.iter().all(|r| r["data"]["commit"].is_string()));
        }
        // The session is 40 MiB of node files; one node and its record
        // are a few MiB.
        assert!(kib < 24 * 1024, "{args:?}: peak {kib} KiB");
    }
}
