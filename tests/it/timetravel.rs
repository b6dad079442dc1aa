//! checkout, branch, show --at, log --all (SPEC §2.3, §5.5–§5.7).

use crate::env::TestEnv;

/// Five turns; returns (assistant ids, commit ids) per turn.
fn five_turns(env: &TestEnv) -> (Vec<String>, Vec<String>) {
    env.ok(&["init", "s1"]);
    let mut a = Vec::new();
    let mut c = Vec::new();
    for i in 1..=5 {
        let (ai, ci) = env.turn(
            "s1",
            &format!("question {i}"),
            if i == 3 { &["read"] } else { &[] },
        );
        a.push(ai);
        c.push(ci);
    }
    (a, c)
}

#[test]
fn checkout_an_earlier_turn_and_fork_from_it() {
    let env = TestEnv::new();
    let (a, c) = five_turns(&env);
    let files_before = env.history_files("s1");
    let transcript_at_3 = env.ok(&["show", "s1", "--at", "3"]);
    assert!(
        transcript_at_3.contains("question 3") && !transcript_at_3.contains("question 4"),
        "{transcript_at_3}"
    );

    let out = checkout(&env, &["checkout", "s1", "2"]);
    assert!(
        out.contains("turn 2: question 2") && out.contains("detached"),
        "{out}"
    );
    assert_eq!(env.meta("s1")["head_id"], a[1].as_str());
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), c[1]);
    assert!(
        env.git_in(&env.session_dir("s1"), &["symbolic-ref", "-q", "HEAD"])
            .stdout
            .is_empty(),
        "detached"
    );
    assert_eq!(
        env.history_files("s1"),
        files_before,
        "checkout deletes nothing"
    );
    assert_eq!(
        env.meta("s1")["updated_at"],
        1_796_017_556.0,
        "a head move is not activity"
    );
    // The past reads as it was, from anywhere.
    assert_eq!(env.ok(&["show", "s1", "--at", "3"]), transcript_at_3);
    // log shows where HEAD is.
    let log = env.ok(&["log", "s1"]);
    assert!(
        log.lines()
            .next()
            .unwrap()
            .contains("turn 2: question 2 (HEAD)"),
        "{log}"
    );

    // Continuing forks a retry branch from turn 2's commit.
    env.append("s1", &["--text", "a different third question"]);
    let a_new = env.append(
        "s1",
        &["--role", "assistant", "--text", "a different answer"],
    );
    let c_new = env.ok(&["commit-turn", "s1"]).trim().to_string();
    let branch = format!("retry-{a_new}");
    assert_eq!(env.git("s1", &["rev-parse", &branch]).trim(), c_new);
    assert_eq!(
        env.git("s1", &["rev-parse", &format!("{c_new}^")]).trim(),
        c[1]
    );
    assert_eq!(
        env.git("s1", &["rev-parse", "main"]).trim(),
        c[4],
        "main is untouched"
    );
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s", &c_new]),
        "turn 3: a different third question\n"
    );
    assert_eq!(env.git("s1", &["fsck", "--strict"]), "");

    // Back to main: the original head.
    let out = checkout(&env, &["checkout", "s1", "main"]);
    assert!(out.contains("on branch `main`"), "{out}");
    assert_eq!(env.meta("s1")["head_id"], a[4].as_str());
    assert_eq!(
        env.git("s1", &["symbolic-ref", "--short", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(env.ok(&["show", "s1", "--at", "3"]), transcript_at_3);

    // `branch` lists both tips, as git does.
    let json = env.ok(&["branch", "s1", "--json"]);
    let rows: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut names: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            r["data"]["branches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_str().unwrap().to_string())
        })
        .collect();
    names.sort();
    let mut git_branches: Vec<String> = env
        .git("s1", &["branch", "--format=%(refname:short)"])
        .lines()
        .map(String::from)
        .collect();
    git_branches.sort();
    assert_eq!(names, git_branches);
    let main_row = rows
        .iter()
        .find(|r| r["data"]["branches"][0] == "main")
        .unwrap();
    assert_eq!(main_row["data"]["turns"], 5);
    assert_eq!(main_row["data"]["current"], true);
    let retry_row = rows
        .iter()
        .find(|r| r["data"]["branches"][0] == branch.as_str())
        .unwrap();
    assert_eq!(retry_row["data"]["turns"], 3);
    assert_eq!(retry_row["data"]["current"], false);
    // The graph draws the fork.
    let graph = env.ok(&["log", "s1", "--all"]);
    assert!(graph.contains("|/"), "{graph}");
    assert_eq!(
        graph
            .lines()
            .filter(|l| l.contains(" turn ") || l.contains("session init"))
            .count(),
        7,
        "{graph}"
    );
}

#[test]
fn prev_and_next_walk_the_current_branch() {
    let env = TestEnv::new();
    let (a, c) = five_turns(&env);
    env.ok(&["checkout", "s1", "prev"]);
    assert_eq!(env.meta("s1")["head_id"], a[3].as_str());
    env.ok(&["checkout", "s1", "prev"]);
    env.ok(&["checkout", "s1", "prev"]);
    assert_eq!(env.meta("s1")["head_id"], a[1].as_str());
    // Forward again along the branch we came from.
    env.ok(&["checkout", "s1", "next"]);
    assert_eq!(env.meta("s1")["head_id"], a[2].as_str());
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), c[2]);
    env.ok(&["checkout", "s1", "5"]);
    assert_eq!(
        env.git("s1", &["symbolic-ref", "--short", "HEAD"]).trim(),
        "main",
        "attached at the tip"
    );
    let err = env.fails(&["checkout", "s1", "next"], 1);
    assert!(err.contains("no turn 6") && err.contains("1..5"), "{err}");
    // By node id (a tool node lands on its turn) and by commit prefix.
    let tool = env
        .history_files("s1")
        .into_iter()
        .find(|f| f.contains("-t-"))
        .unwrap();
    let tool_id = tool
        .split('-')
        .nth(2)
        .unwrap()
        .trim_end_matches(".json")
        .to_string();
    env.ok(&["checkout", "s1", &tool_id]);
    assert_eq!(env.meta("s1")["head_id"], a[2].as_str());
    env.ok(&["checkout", "s1", &c[0][..10]]);
    assert_eq!(env.meta("s1")["head_id"], a[0].as_str());
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), c[0]);
}

/// `next` at a fork goes on along the line being looked at, as before, and
/// names the branches that go on differently from there, each with the
/// command that goes to its next turn (which, run as written, lands there);
/// where nothing forks it says nothing of the kind.
#[test]
fn next_at_a_fork_names_the_other_branches() {
    let env = TestEnv::new();
    let (a, c) = five_turns(&env);
    env.ok(&["checkout", "s1", "2"]);
    let (retry_a, retry_c) = env.turn("s1", "another question 3", &[]);
    let retry = env.git("s1", &["symbolic-ref", "--short", "HEAD"]);
    let retry = retry.trim();
    assert!(retry.starts_with("retry-"), "{retry}");

    env.ok(&["checkout", "s1", "main"]);
    env.ok(&["checkout", "s1", "2"]);
    let note = checkout(&env, &["checkout", "s1", "next"]);
    assert_eq!(env.meta("s1")["head_id"], a[2].as_str(), "main's turn 3");
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), c[2]);
    let said = format!(
        "turn 3 is a fork: `next` followed `main` (the line being looked at); it goes on differently on `{retry}` (`git-session checkout s1 {}` goes to its turn 3)",
        &retry_c[..7]
    );
    assert!(note.contains(&said), "{note}");
    env.ok(&["checkout", "s1", &retry_c[..7]]);
    assert_eq!(env.meta("s1")["head_id"], retry_a.as_str());
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), retry_c);

    // Along the retry branch, `next` follows it and names `main`.
    env.ok(&["checkout", "s1", "prev"]);
    let note = checkout(&env, &["checkout", "s1", "next"]);
    assert_eq!(env.meta("s1")["head_id"], retry_a.as_str());
    assert!(
        note.contains(&format!(
            "`next` followed `{retry}` (the line being looked at); it goes on differently on `main` (`git-session checkout s1 {}` goes to its turn 3)",
            &c[2][..7]
        )),
        "{note}"
    );

    // No fork after turn 3 of main: nothing said of one.
    env.ok(&["checkout", "s1", "main"]);
    env.ok(&["checkout", "s1", "3"]);
    let note = checkout(&env, &["checkout", "s1", "next"]);
    assert_eq!(env.meta("s1")["head_id"], a[3].as_str());
    assert!(!note.contains("fork"), "{note}");
}

/// A commit prefix made only of digits is a commit, not a turn number,
/// when no turn has that number.
#[test]
fn a_commit_prefix_of_digits_is_not_taken_for_a_turn() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    // Commit ids are random (node ids are): add turns until one starts with
    // four digits, not zero (15% a turn; 80 turns miss with p < 1e-5).
    let mut hit = None;
    for k in 1..=80 {
        env.turn("s1", &format!("turn {k}"), &[]);
        let head = env.git("s1", &["rev-parse", "HEAD"]).trim().to_string();
        if head[..4].bytes().all(|b| b.is_ascii_digit()) && !head.starts_with('0') {
            hit = Some((k, head));
            break;
        }
    }
    let (turn, commit) = hit.expect("a commit id starting with four digits");
    let all = env.git("s1", &["rev-list", "--all"]);
    let digits = commit.bytes().take_while(u8::is_ascii_digit).count();
    let prefix = (4..=digits)
        .map(|n| &commit[..n])
        .find(|p| all.lines().filter(|c| c.starts_with(p)).count() == 1)
        .expect("a unique prefix of digits");
    assert!(prefix.parse::<u64>().unwrap() > turn, "not a turn number");
    env.ok(&["checkout", "s1", "1"]);
    env.ok(&["checkout", "s1", prefix]);
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), commit);
    // A number that is neither still says which turns there are.
    let err = env.run(&["checkout", "s1", "99999999"]);
    assert_eq!(err.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&err.stderr).contains("there is no turn 99999999"));
}

#[test]
fn bad_targets_list_the_valid_choices() {
    let env = TestEnv::new();
    five_turns(&env);
    let before = crate::env::tree_bytes(&env.state());
    for (target, needle) in [
        ("0", "turns on the current branch are 1..5"),
        ("6", "turns on the current branch are 1..5"),
        ("no-such-branch", "branches: main"),
        ("ghost-node", "a node id"),
    ] {
        let err = env.fails(&["checkout", "s1", target], 1);
        assert!(
            err.contains("help:") && err.contains(needle),
            "{target}: {err}"
        );
        let err = env.fails(&["show", "s1", "--at", target], 1);
        assert!(err.contains(needle), "{target}: {err}");
    }
    // An ambiguous prefix: find two commits sharing a first hex digit.
    let ids: Vec<String> = env
        .git("s1", &["rev-list", "--all"])
        .lines()
        .map(String::from)
        .collect();
    let mut pair = None;
    for len in (4..8).rev() {
        for i in 0..ids.len() {
            for j in i + 1..ids.len() {
                if ids[i][..len] == ids[j][..len] {
                    pair = Some(ids[i][..len].to_string());
                }
            }
        }
    }
    if let Some(p) = pair {
        let err = env.fails(&["checkout", "s1", &p], 1);
        assert!(err.contains("ambiguous"), "{err}");
    }
    assert_eq!(
        before,
        crate::env::tree_bytes(&env.state()),
        "refused checkouts change nothing"
    );
}

#[test]
fn checkout_is_refused_while_running() {
    let env = TestEnv::new();
    five_turns(&env);
    let meta_path = env.session_dir("s1").join("meta.json");
    let mut m = env.meta("s1");
    m["status"] = "running".into();
    std::fs::write(&meta_path, serde_json::to_vec(&m).unwrap()).unwrap();
    let err = env.fails(&["checkout", "s1", "2"], 1);
    assert!(err.contains("is running"), "{err}");
}

#[test]
fn checkout_survives_a_crash_recovery_and_verify() {
    let env = TestEnv::new();
    five_turns(&env);
    env.ok(&["checkout", "s1", "3"]);
    // The next commit after a checkout must not mistake the index for stale.
    env.append("s1", &["--text", "fork"]);
    env.append("s1", &["--role", "assistant", "--text", "ok"]);
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(env.git("s1", &["rev-list", "--count", "--all"]), "7\n");
    assert_eq!(env.ok(&["verify", "s1"]), "");
    env.assert_clean("s1");
}

/// `checkout`, which says where HEAD is now on stderr (as git does).
fn checkout(env: &TestEnv, args: &[&str]) -> String {
    let out = env.run(args);
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

/// A turn appended since the last `commit-turn` has no commit for HEAD to
/// stand on: checking it out (by node id or turn number) is refused, and so
/// is checking out any other turn while it waits (its commit would land
/// where HEAD was moved to); nothing moves, neither `head_id` nor git HEAD.
/// Once committed, it can be checked out.
#[test]
fn checkout_of_a_turn_in_no_commit_is_refused_and_moves_nothing() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let (_, c2) = env.turn("s1", "two", &[]);
    let u3 = env.append("s1", &["--text", "three"]);
    let a3 = env.append("s1", &["--role", "assistant", "--text", "r3"]);
    let dir = env.session_dir("s1");
    let before = crate::env::tree_bytes(&dir);
    let err = env.fails(&["checkout", "s1", "1"], 1);
    assert_eq!(
        err,
        format!(
            "git-session: error: messages appended since the last `commit-turn` (up to node `{a3}`) are not committed yet\n\
             help: run `git-session commit-turn s1` first, then check out\n\
             code: git_session::checkout::uncommitted\n"
        )
    );
    assert!(crate::env::tree_bytes(&dir) == before, "changed");
    for target in [u3.as_str(), a3.as_str(), "3"] {
        let err = env.fails(&["checkout", "s1", target], 1);
        assert_eq!(
            err,
            format!(
                "git-session: error: turn 3 (up to node `{a3}`) is in no commit yet\n\
                 help: run `git-session commit-turn s1` first, then check it out\n\
                 code: git_session::checkout::not_committed\n"
            ),
            "{target}"
        );
        let out = env.run(&["--json", "checkout", "s1", target]);
        assert_eq!(out.status.code(), Some(1));
        let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(record["type"], "error");
        assert_eq!(
            record["data"]["code"],
            "git_session::checkout::not_committed"
        );
        assert!(crate::env::tree_bytes(&dir) == before, "{target}: changed");
    }
    assert_eq!(env.meta("s1")["head_id"], a3.as_str());
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]).trim(), c2);
    assert_eq!(
        env.git("s1", &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main"
    );

    // Committed on main, the turn can be checked out.
    let c3 = env.ok(&["commit-turn", "s1"]).trim().to_string();
    assert_eq!(env.git("s1", &["rev-parse", "main^"]).trim(), c2);
    checkout(&env, &["checkout", "s1", "1"]);
    let out = checkout(&env, &["checkout", "s1", &u3]);
    assert_eq!(
        out,
        format!(
            "git-session: HEAD is now at {} turn 3: three (on branch `main`)\n",
            &c3[..7]
        )
    );
    assert_eq!(env.meta("s1")["head_id"], a3.as_str());
    let fsck = env.git_in(&dir, &["fsck", "--strict", "--no-progress"]);
    assert!(fsck.status.success(), "{fsck:?}");
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

/// Turns the Python store committed carry no trailers: one whose node a
/// commit's tree holds is committed, and is checked out (git HEAD left
/// where it is); its uncommitted turn is refused.
#[test]
fn checkout_tells_a_turn_committed_without_trailers_from_one_not_committed() {
    let env = TestEnv::new();
    let dir = crate::legacy::python_session(&env, "py1");
    let err = env.fails(&["checkout", "py1", "u2"], 1);
    assert!(
        err.contains("code: git_session::checkout::not_committed\n"),
        "{err}"
    );
    // (The first command to open the repository pins its config.)
    let before = crate::env::tree_bytes(&dir);
    // Nor any other turn while that one waits for its commit.
    let err = env.fails(&["checkout", "py1", "u1_reply"], 1);
    assert!(
        err.contains("code: git_session::checkout::uncommitted\n"),
        "{err}"
    );
    assert!(crate::env::tree_bytes(&dir) == before);
    // The Python store commits its turn (`git add -A && git commit`).
    env.git_ok(&dir, &["add", "-A"]);
    env.git_ok(&dir, &["commit", "-m", "turn: second", "--quiet"]);
    let head = env.git("py1", &["rev-parse", "HEAD"]);
    let out = checkout(&env, &["checkout", "py1", "u1_reply"]);
    assert_eq!(
        out,
        "git-session: head is now at turn 1 (node `u1_reply`); git HEAD unchanged\n"
    );
    assert_eq!(env.meta("py1")["head_id"], "u1_reply");
    assert_eq!(env.git("py1", &["rev-parse", "HEAD"]), head);
}
