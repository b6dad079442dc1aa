//! N processes on one session lose nothing (SPEC §4).

use std::collections::HashSet;

use crate::env::TestEnv;

#[test]
fn eight_processes_append_fifty_nodes_each() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "run the tools"]);
    let a = env.append(
        "s1",
        &["--role", "assistant", "--id", "a1", "--text", "calling"],
    );
    std::thread::scope(|scope| {
        for t in 0..8 {
            let env = &env;
            let a = &a;
            scope.spawn(move || {
                for i in 0..50 {
                    env.append(
                        "s1",
                        &[
                            "--role",
                            "tool",
                            "--caller",
                            a,
                            "--id",
                            &format!("t{t}-{i}"),
                            "--name",
                            "probe",
                            "--text",
                            "x",
                        ],
                    );
                }
            });
        }
    });
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    let files = env.history_files("s1");
    assert_eq!(files.len(), 402);
    let mut seqs = HashSet::new();
    let mut ids = HashSet::new();
    for f in &files {
        let raw = std::fs::read(env.session_dir("s1").join("history").join(f)).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&raw).expect("every node parses");
        assert!(
            seqs.insert(v["seq"].as_u64().unwrap()),
            "duplicate seq in {f}"
        );
        ids.insert(v["id"].as_str().unwrap().to_string());
        assert!(f.starts_with(&format!("{:06}-", v["seq"].as_u64().unwrap())));
    }
    assert_eq!(ids.len(), 402);
    assert_eq!(seqs, (1..=402).collect());
    // All in the one turn commit.
    let tree = env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"]);
    assert_eq!(tree.lines().count(), 402);
    assert_eq!(env.git("s1", &["rev-list", "--count", "HEAD"]), "2\n");
    let msg = env.git("s1", &["log", "-1", "--format=%B"]);
    assert!(msg.contains("tools: probe × 400"), "{msg}");
    assert!(msg.contains("Nodes: 1..402"));
}

#[test]
fn concurrent_turns_and_commits_lose_nothing() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    std::thread::scope(|scope| {
        for t in 0..4 {
            let env = &env;
            scope.spawn(move || {
                for i in 0..8 {
                    env.append("s1", &["--text", &format!("q {t}.{i}")]);
                    env.append("s1", &["--role", "assistant", "--text", "a"]);
                    env.ok(&["commit-turn", "s1"]);
                }
            });
        }
    });
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    let files = env.history_files("s1");
    assert_eq!(files.len(), 64);
    let all = env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"]);
    assert_eq!(all.lines().count(), 64);
    // Every node is named by exactly one commit's Nodes range, over all branches.
    let log = env.git(
        "s1",
        &["log", "--all", "--format=%(trailers:key=Nodes,valueonly)"],
    );
    let mut covered = Vec::new();
    for l in log.lines().filter(|l| !l.is_empty()) {
        let (a, b) = l.split_once("..").unwrap();
        covered.extend(a.parse::<u64>().unwrap()..=b.parse::<u64>().unwrap());
    }
    covered.sort();
    assert_eq!(covered, (1..=64).collect::<Vec<u64>>());
}

/// Two sessions of one auto-commit project end their turns at the same
/// moment, round after round: each turn gets its own agent commit, one on
/// top of the other (the project's lock), holding exactly its own file; no
/// turn fails and the user's index mirrors the last commit. Without the
/// lock, the second commit's compare-and-swap failed and so did its turn.
#[test]
fn two_sessions_of_one_project_end_their_turns_at_once() {
    let env = TestEnv::new();
    let (work, pid) = env.project("work", &["--auto-commit"]);
    env.git_ok(&work, &["init", "-q", "-b", "main"]);
    env.git_ok(&work, &["config", "user.name", "U"]);
    env.git_ok(&work, &["config", "user.email", "u@x"]);
    env.git_ok(&work, &["commit", "-q", "--allow-empty", "-m", "first"]);
    let sessions = ["s1", "s2"];
    for s in sessions {
        env.ok(&["init", s, "--project", &pid]);
    }
    let rounds = 12;
    for round in 0..rounds {
        for s in sessions {
            env.ok(&["begin-turn", s]);
            std::fs::write(
                work.join(format!("{s}-{round}.txt")),
                format!("{s} {round}\n"),
            )
            .unwrap();
            env.append(s, &["--text", &format!("round {round}")]);
            env.append(s, &["--role", "assistant", "--text", "done"]);
        }
        std::thread::scope(|scope| {
            for s in sessions {
                let env = &env;
                scope.spawn(move || {
                    let file = format!("{s}-{round}.txt");
                    env.ok(&["commit-turn", s, "--project-paths", &file]);
                });
            }
        });
    }
    let count = env.git_ok(&work, &["rev-list", "--count", "HEAD"]);
    assert_eq!(count.trim(), (2 * rounds + 1).to_string());
    assert_eq!(env.git_ok(&work, &["status", "--porcelain"]), "");
    // Each agent commit holds its own session's file, and only it.
    let log = env.git_ok(
        &work,
        &["log", "--format=%s", "--name-only", "HEAD~24..HEAD"],
    );
    let mut lines = log.lines().filter(|l| !l.is_empty());
    while let (Some(subject), Some(file)) = (lines.next(), lines.next()) {
        let session = subject
            .strip_prefix("[agent ")
            .and_then(|r| r.split(']').next())
            .unwrap_or_else(|| panic!("{subject}"));
        assert!(
            file.starts_with(&format!("{session}-")),
            "{subject}: {file}"
        );
    }
    for s in sessions {
        env.assert_clean(s);
        let sdir = env.state().join("sessions/projects").join(&pid).join(s);
        assert_eq!(
            env.git_ok(&sdir, &["rev-list", "--count", "HEAD"]).trim(),
            (rounds + 1).to_string()
        );
    }
}
