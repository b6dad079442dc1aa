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
