//! kill -9 at any point: the next `commit-turn` commits what was written,
//! nothing is lost, nothing is torn.

use std::process::Stdio;
use std::time::Duration;

use crate::env::TestEnv;

#[test]
fn a_node_orphaned_between_append_and_commit_is_committed_next_time() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    // The process dies after the node file is published, before meta.json.
    env.crash_at("append-after-node", &["append", "s1", "--text", "two"]);
    assert_eq!(env.history_files("s1").len(), 3);
    env.append("s1", &["--role", "assistant", "--text", "answer two"]);
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    let tree = env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"]);
    assert_eq!(tree.lines().count(), 4);
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s"]),
        "turn 2: two\n"
    );
}

#[test]
fn a_crash_before_the_rename_leaves_the_old_file_and_a_temp_file() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let meta_before = std::fs::read(env.session_dir("s1").join("meta.json")).unwrap();
    env.crash_at("before-rename", &["append", "s1", "--text", "two"]);
    // The node's temp file never became a node; meta.json is untouched.
    assert_eq!(
        env.history_files("s1")
            .iter()
            .filter(|f| !f.starts_with(".gs-tmp"))
            .count(),
        2
    );
    assert_eq!(
        std::fs::read(env.session_dir("s1").join("meta.json")).unwrap(),
        meta_before
    );
    // git does not see our temp files.
    env.assert_clean("s1");
    env.turn("s1", "two again", &[]);
    env.assert_clean("s1");
}

#[test]
fn every_crash_point_of_commit_turn_is_recovered() {
    for at in [
        "commit-before-sync",
        "commit-before-ref",
        "commit-before-index",
        "index-locked",
        "index-replaced",
        "before-rename",
        "after-rename",
        "object-written",
    ] {
        let env = TestEnv::new();
        env.ok(&["init", "s1"]);
        env.turn("s1", "one", &[]);
        env.append("s1", &["--text", "two"]);
        env.append("s1", &["--role", "assistant", "--text", "answer"]);
        // `--status done` makes commit-turn rewrite meta.json, so the atomic
        // write's crash points are on its path too.
        env.crash_at(at, &["commit-turn", "s1", "--status", "done"]);
        // Whatever state the crash left, the next commit-turn completes the turn exactly once.
        let out = env.run(&["commit-turn", "s1", "--status", "done"]);
        assert!(
            out.status.success(),
            "{at}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        env.assert_clean("s1");
        let temps: Vec<_> = std::fs::read_dir(env.session_dir("s1").join(".git"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".gs-tmp"))
            .collect();
        assert!(temps.is_empty(), "{at}: temp files left: {temps:?}");
        let subjects = env.git("s1", &["log", "--all", "--format=%s"]);
        assert_eq!(
            subjects, "turn 2: two\nturn 1: one\nsession init\n",
            "after a crash at {at}"
        );
        env.turn("s1", "three", &[]);
        env.assert_clean("s1");
    }
}

#[test]
fn a_crash_among_a_large_turns_objects_is_recovered() {
    // A turn of 80 nodes writes 80 blobs, meta.json's, two trees and the
    // commit; the process dies after the 70th object, before any of them
    // was made durable or a ref moved.
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let requests: Vec<Vec<String>> = (0..80)
        .map(|i| {
            let role = if i == 0 { "user" } else { "assistant" };
            [
                "append",
                "s1",
                "--role",
                role,
                "--text",
                &format!("node {i}"),
            ]
            .map(str::to_owned)
            .to_vec()
        })
        .collect();
    env.batch(&requests);
    let loose = || {
        std::fs::read_dir(env.session_dir("s1").join(".git/objects"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().len() == 2)
            .flat_map(|e| std::fs::read_dir(e.path()).unwrap())
            .count()
    };
    let before = loose();
    env.crash_at("object-written#70", &["commit-turn", "s1"]);
    assert_eq!(loose(), before + 70, "70 objects, then the crash");
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    let subjects = env.git("s1", &["log", "--format=%s"]);
    let subjects: Vec<_> = subjects.lines().collect();
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    assert!(subjects[0].starts_with("turn 2"), "{subjects:?}");
    let files = env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"]);
    assert_eq!(files.lines().count(), 82);
}

#[test]
fn sigkill_at_random_moments_tears_nothing() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "start"]);
    let a = env.append("s1", &["--role", "assistant", "--id", "a1", "--text", "go"]);
    let mut acknowledged = Vec::new();
    for i in 0..40u64 {
        let id = format!("k{i}");
        let mut child = env
            .cmd()
            .args([
                "append",
                "s1",
                "--role",
                "tool",
                "--caller",
                &a,
                "--id",
                &id,
                "--name",
                "t",
                "--text",
                &"x".repeat(20_000),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // A spread of kill times across the process's life.
        std::thread::sleep(Duration::from_micros((i * 397) % 4000));
        let _ = child.kill(); // SIGKILL
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            acknowledged.push(id);
        }
    }
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    let dir = env.session_dir("s1");
    let files = env.history_files("s1");
    for f in files.iter().filter(|f| !f.starts_with(".gs-tmp")) {
        let raw = std::fs::read(dir.join("history").join(f)).unwrap();
        serde_json::from_slice::<serde_json::Value>(&raw)
            .unwrap_or_else(|e| panic!("{f} is torn: {e}"));
    }
    for id in &acknowledged {
        assert!(
            files.iter().any(|f| f.ends_with(&format!("-{id}.json"))),
            "acknowledged node {id} lost"
        );
    }
    serde_json::from_slice::<serde_json::Value>(&std::fs::read(dir.join("meta.json")).unwrap())
        .expect("meta.json parses");
}

/// Refs are not synced: a power cut can lose a turn's ref move while its
/// objects, node files, index and snapshot are on disk. The next
/// `commit-turn` commits that turn again as its own turn (not folded into
/// the next one's commit, whose trailer would not name its nodes), and
/// `verify` finds the record whole.
#[test]
fn a_lost_ref_move_has_its_turn_committed_again_as_a_turn() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let one = env.git("s1", &["rev-parse", "HEAD"]);
    env.turn("s1", "two", &[]);
    // The power cut: `main` back at turn 1, all else as it was.
    env.git("s1", &["update-ref", "refs/heads/main", one.trim()]);
    env.append("s1", &["--text", "three"]);
    let out = env.run(&["commit-turn", "s1"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is behind commit"), "{err}");
    let log = env.git(
        "s1",
        &["log", "--format=%s%n%(trailers:key=Nodes,valueonly)"],
    );
    let log: Vec<&str> = log.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(log.len(), 7, "{log:?}");
    assert!(log[0].starts_with("turn 3: three"), "{log:?}");
    assert!(log[2].starts_with("turn 2: two"), "{log:?}");
    assert!(log[4].starts_with("turn 1: one"), "{log:?}");
    assert_eq!(env.ok(&["verify", "s1"]), "");
    env.assert_clean("s1");
}
