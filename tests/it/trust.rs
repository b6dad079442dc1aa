//! verify that CI can trust (issue 17): no false alarms after ordinary
//! commands, a `--fix` that only makes things better, every fork a branch,
//! one session commit per turn.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use crate::env::TestEnv;

/// Every record `verify --json ARGS` prints, as (type, data).
fn records(env: &TestEnv, args: &[&str]) -> (Option<i32>, Vec<(String, serde_json::Value)>) {
    let mut a = vec!["--json", "verify"];
    a.extend_from_slice(args);
    let out = env.run(&a);
    let recs = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|r| (r["type"].as_str().unwrap().to_string(), r["data"].clone()))
        .collect();
    (out.status.code(), recs)
}

/// The problem codes `verify ARGS` reports (notes left out), sorted.
fn problems(env: &TestEnv, args: &[&str]) -> Vec<String> {
    let (_, recs) = records(env, args);
    let mut k: Vec<String> = recs
        .iter()
        .filter(|(t, d)| t == "finding" && d["severity"] == "problem")
        .map(|(_, d)| d["kind"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k.dedup();
    k
}

fn assert_verifies(env: &TestEnv, what: &str) {
    let out = env.run(&["verify", "--all"]);
    assert!(
        out.status.success(),
        "{what}: verify --all exited {:?}:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// No commit reachable in `dir` holds a node file or a meta.json that does
/// not parse (checked with git itself).
fn every_commit_parses(env: &TestEnv, dir: &Path) {
    let commits = env.git_ok(dir, &["rev-list", "--all"]);
    for c in commits.lines() {
        let files = env.git_ok(dir, &["ls-tree", "-r", "--name-only", c]);
        for f in files.lines() {
            if f == "meta.json" || (f.starts_with("history/") && f.ends_with(".json")) {
                let bytes = env.git_in(dir, &["cat-file", "blob", &format!("{c}:{f}")]);
                if !bytes.status.success() {
                    continue; // a lost object: verify reports it
                }
                assert!(
                    serde_json::from_slice::<serde_json::Value>(&bytes.stdout).is_ok(),
                    "commit {c} holds `{f}` that does not parse"
                );
            }
        }
    }
}

fn three_turns(env: &TestEnv) {
    env.ok(&["init", "s1"]);
    for t in ["one", "two", "three"] {
        env.turn("s1", t, &["read"]);
    }
}

#[test]
fn ordinary_commands_leave_verify_clean() {
    let env = TestEnv::new();
    three_turns(&env);
    let steps: &[&[&str]] = &[
        &["update", "s1", "--pin"],
        &["update", "s1", "--title", "Renamed"],
        &["update", "s1", "--read"],
        &["update", "s1", "--unread"],
        &["update", "s1", "--status", "done"],
        &["update", "s1", "--group", "g"],
        &["archive", "s1"],
        &["unarchive", "s1"],
        &["title", "s1"],
        &["checkout", "s1", "1"],
        &["checkout", "s1", "next"],
        &["checkout", "s1", "main"],
        &["begin-turn", "s1"],
        &["recover", "--older-than", "1000d"],
    ];
    for step in steps {
        env.ok(step);
        assert_verifies(&env, &format!("after {step:?}"));
        assert_eq!(problems(&env, &["s1"]), Vec::<String>::new(), "{step:?}");
    }
    // A fix on a clean session does nothing and commits nothing.
    let before = env.git("s1", &["rev-list", "--all", "--count"]);
    let out = env.ok(&["verify", "--all", "--fix"]);
    assert!(!out.contains("fixed"), "{out}");
    assert_eq!(env.git("s1", &["rev-list", "--all", "--count"]), before);
}

#[test]
fn the_demo_try_list_ends_in_a_clean_verify() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("demo");
    let out = env.ok(&["demo", dir.to_str().unwrap()]);
    let tries: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("git-session "))
        .collect();
    assert!(tries.len() >= 5, "{out}");
    assert!(tries.last().unwrap().ends_with("verify --all"), "{out}");
    let site = dir.join("site");
    let export = format!("export --all --format html -o {}", site.display());
    assert!(tries.iter().any(|l| l.ends_with(&export)), "{out}");
    for line in tries {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        let mut c = std::process::Command::new(crate::env::BIN);
        env.isolate(&mut c);
        let o = c.args(&args).output().unwrap();
        assert!(
            o.status.success(),
            "`{line}` exited {:?}:\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert!(site.join("index.html").is_file());
}

/// The id a `--json append` printed.
fn appended(env: &TestEnv, args: &[&str]) -> String {
    env.append("s1", args)
}

#[test]
fn a_regenerated_reply_is_a_branch_of_its_own() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let u2 = appended(&env, &["--text", "two"]);
    let first = appended(&env, &["--role", "assistant", "--text", "first answer"]);
    env.ok(&["commit-turn", "s1"]);
    // The harness regenerates the reply to the same message.
    let second = appended(
        &env,
        &[
            "--role",
            "assistant",
            "--predecessor",
            &u2,
            "--text",
            "second answer",
        ],
    );
    env.append("s1", &["--role", "tool", "--name", "read", "--text", "ok"]);
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    let branch = format!("retry-{second}");
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s", &branch]),
        "turn 2 (regenerated): two\n"
    );
    // A sibling of the turn it regenerates: same parent (turn 1).
    assert_eq!(
        env.git("s1", &["rev-parse", &format!("{branch}^")]),
        env.git("s1", &["rev-parse", "main^"])
    );
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s", "main"]),
        "turn 2: two\n"
    );
    assert_eq!(
        env.git("s1", &["symbolic-ref", "--short", "HEAD"]),
        format!("{branch}\n")
    );
    // branch tells the tips apart; show follows the one viewed.
    let rows: Vec<serde_json::Value> = env
        .ok(&["--json", "branch", "s1"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["data"].clone())
        .collect();
    let names: Vec<String> = rows.iter().map(|r| r["branches"].to_string()).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(names.contains(&format!("[\"{branch}\"]")), "{names:?}");
    assert!(names.contains(&"[\"main\"]".to_string()), "{names:?}");
    let shown = env.ok(&["show", "s1"]);
    assert!(
        shown.contains("second answer") && !shown.contains("first answer"),
        "{shown}"
    );
    let log = env.ok(&["log", "s1", "--all"]);
    assert!(log.contains(&branch) && log.contains("main"), "{log}");
    // The next message continues the regenerated branch.
    env.turn("s1", "three", &[]);
    assert_eq!(
        env.git("s1", &["log", "--format=%s", &branch]),
        "turn 3: three\nturn 2 (regenerated): two\nturn 1: one\nsession init\n"
    );
    let (code, recs) = records(&env, &["s1"]);
    assert_eq!(code, Some(0));
    let stats = &recs.iter().find(|(t, _)| t == "stats").unwrap().1;
    assert_eq!(stats["dag_turns"], 4, "{stats}");
    assert_eq!(stats["turn_commits"], 4, "{stats}");
    let _ = first;
    // Backfill from scratch draws the same tree.
    let copy = TestEnv::new();
    copy.ok(&["init", "s1"]);
    let from = env.session_dir("s1").join("history");
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(
            e.path(),
            copy.session_dir("s1").join("history").join(e.file_name()),
        )
        .unwrap();
    }
    std::fs::remove_dir_all(copy.session_dir("s1").join(".git")).unwrap();
    copy.ok(&["backfill", "s1"]);
    let graph = copy.git("s1", &["log", "--all", "--format=%s"]);
    assert!(graph.contains("turn 2 (regenerated): two"), "{graph}");
    assert_eq!(copy.ok(&["verify", "s1"]), "");
}

#[test]
fn a_regeneration_committed_with_its_message_is_a_branch_too() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let u1 = appended(&env, &["--text", "one"]);
    appended(&env, &["--role", "assistant", "--text", "a"]);
    let b = appended(
        &env,
        &["--role", "assistant", "--predecessor", &u1, "--text", "b"],
    );
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    assert_eq!(
        env.git("s1", &["log", "--all", "--format=%s|%D"])
            .lines()
            .count(),
        3,
        "two commits and the root"
    );
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s", &format!("retry-{b}")]),
        "turn 1 (regenerated): one\n"
    );
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

#[test]
fn verify_no_wait_on_a_busy_session_exits_75() {
    let env = TestEnv::new();
    three_turns(&env);
    let lock = env.hold_lock(&env.session_dir("s1"));
    env.fails(&["verify", "s1", "--no-wait"], 75);
    env.fails(&["verify", "--all", "--no-wait"], 75);
    drop(lock);
    env.ok(&["verify", "s1", "--no-wait"]);
}

#[test]
fn backfill_leaves_an_index_that_verifies() {
    let env = TestEnv::new();
    crate::legacy::python_session(&env, "py1");
    let _ = std::fs::remove_file(env.state().join("sessions/index.json"));
    env.ok(&["backfill", "--all"]);
    assert!(env.state().join("sessions/index.json").is_file());
    assert_verifies(&env, "backfill then verify");
}

#[test]
fn a_stale_list_row_is_found_and_recover_rebuilds_it() {
    let env = TestEnv::new();
    three_turns(&env);
    env.ok(&["update", "s1", "--title", "Right"]);
    // Another program rewrites the row (and the journal is gone).
    let path = env.state().join("sessions/index.json");
    let _ = std::fs::remove_file(env.state().join("sessions/index.journal"));
    let mut idx: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    idx["s1"]["title"] = "Wrong".into();
    std::fs::write(&path, serde_json::to_vec(&idx).unwrap()).unwrap();
    assert_eq!(
        problems(&env, &["--all"]),
        vec!["index_row_stale".to_string()]
    );
    let out = env.ok(&["recover", "--older-than", "1000d"]);
    assert!(out.contains("rebuilt index.json"), "{out}");
    assert_verifies(&env, "after recover");
    assert!(env.ok(&["list"]).contains("Right"));
}

/// What a damage does, and how a fix must end.
struct Damage {
    name: &'static str,
    code: &'static str,
    /// `--fix` cannot repair it: the second verify still reports it.
    repairable: bool,
    apply: fn(&TestEnv, &Path),
}

fn node_file(dir: &Path, nth: usize) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("history"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files[nth].clone()
}

const DAMAGES: &[Damage] = &[
    Damage {
        name: "corrupt committed node",
        code: "node_damaged",
        repairable: true,
        apply: |_, dir| std::fs::write(node_file(dir, 0), b"{\"id\": broken").unwrap(),
    },
    Damage {
        name: "edited committed node",
        code: "node_changed",
        repairable: true,
        apply: |_, dir| {
            let p = node_file(dir, 1);
            let s = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, s.replace("re: one", "re: forged")).unwrap();
        },
    },
    Damage {
        name: "corrupt uncommitted node",
        code: "node_unparsable",
        repairable: false,
        apply: |_, dir| {
            std::fs::write(dir.join("history/000099-u-late.json"), b"{\"id\":\"late\",").unwrap()
        },
    },
    Damage {
        name: "corrupt meta.json",
        code: "meta_unparsable",
        repairable: true,
        apply: |_, dir| std::fs::write(dir.join("meta.json"), b"{\"id\":").unwrap(),
    },
    Damage {
        name: "deleted ref",
        code: "turn_unreachable",
        repairable: true,
        apply: |env, dir| {
            env.git_ok(dir, &["update-ref", "-d", "refs/heads/main"]);
        },
    },
    Damage {
        name: "moved ref",
        code: "turn_unreachable",
        repairable: true,
        apply: |env, dir| {
            env.git_ok(dir, &["update-ref", "refs/heads/main", "main~2"]);
        },
    },
    Damage {
        name: "staged stale file",
        code: "git_index_stale",
        repairable: true,
        apply: |env, dir| {
            // An old meta.json restored and staged by hand.
            env.git_ok(dir, &["checkout", "HEAD~2", "--", "meta.json"]);
        },
    },
    Damage {
        name: "stale index row",
        code: "index_row_stale",
        repairable: true,
        apply: |env, _| {
            let _ = std::fs::remove_file(env.state().join("sessions/index.journal"));
            let p = env.state().join("sessions/index.json");
            let mut idx: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            idx["s1"]["pinned"] = false.into();
            std::fs::write(&p, serde_json::to_vec(&idx).unwrap()).unwrap();
        },
    },
    Damage {
        name: "missing index",
        code: "index_missing",
        repairable: true,
        apply: |env, _| std::fs::remove_file(env.state().join("sessions/index.json")).unwrap(),
    },
    Damage {
        name: "stray temp file",
        code: "stray_temp_file",
        repairable: true,
        apply: |_, dir| std::fs::write(dir.join("history/.gs-tmp-node.abc"), b"x").unwrap(),
    },
    Damage {
        name: "missing object",
        code: "object_missing",
        repairable: false,
        apply: |env, dir| {
            // Unpack every pack, then lose the newest commit's meta.json blob.
            env.unpack_all(dir);
            let blob = env.git_ok(dir, &["rev-parse", "HEAD:meta.json"]);
            let blob = blob.trim();
            std::fs::remove_file(dir.join(".git/objects").join(&blob[..2]).join(&blob[2..]))
                .unwrap();
        },
    },
    Damage {
        name: "missing object whose file is intact",
        code: "object_missing",
        repairable: true,
        apply: |env, dir| {
            // A node's blob lost: its file still holds the bytes.
            env.unpack_all(dir);
            let file = node_file(dir, 1);
            let rel = file.strip_prefix(dir).unwrap().to_str().unwrap();
            let blob = env.git_ok(dir, &["rev-parse", &format!("HEAD:{rel}")]);
            let blob = blob.trim();
            std::fs::remove_file(dir.join(".git/objects").join(&blob[..2]).join(&blob[2..]))
                .unwrap();
        },
    },
];

#[test]
fn damage_matrix_verify_names_it_and_fix_only_makes_things_better() {
    for d in DAMAGES {
        let env = TestEnv::new();
        three_turns(&env);
        env.ok(&["update", "s1", "--pin"]);
        let dir = env.session_dir("s1");
        let before: Vec<String> = env.history_files("s1");
        (d.apply)(&env, &dir);
        let (code, recs) = records(&env, &["--all"]);
        let found: Vec<&str> = recs
            .iter()
            .filter(|(t, _)| t == "finding")
            .map(|(_, f)| f["kind"].as_str().unwrap())
            .collect();
        assert_eq!(code, Some(1), "{}: verify must exit 1 ({found:?})", d.name);
        assert!(found.contains(&d.code), "{}: {found:?}", d.name);
        let fix = env.run(&["verify", "--all", "--fix"]);
        let fix_out = String::from_utf8_lossy(&fix.stdout).into_owned();
        every_commit_parses(&env, &dir);
        // Nothing lost: every node file that was there is still there.
        let after = env.history_files("s1");
        for f in &before {
            assert!(after.contains(f), "{}: {f} is gone", d.name);
        }
        let left = problems(&env, &["--all"]);
        if d.repairable {
            assert_eq!(
                left,
                Vec::<String>::new(),
                "{}: not clean after --fix:\n{fix_out}",
                d.name
            );
            let fsck = env.git_in(&dir, &["fsck", "--strict", "--no-progress"]);
            assert!(fsck.status.success(), "{}: fsck", d.name);
        } else {
            assert_eq!(left, vec![d.code.to_string()], "{}:\n{fix_out}", d.name);
        }
        // What --fix said it did, it did: a second --fix has nothing to do.
        let again = String::from_utf8(env.run(&["verify", "--all", "--fix"]).stdout).unwrap();
        assert!(
            !again.contains("fixed:"),
            "{}: fixed again: {again}",
            d.name
        );
    }
}

#[test]
fn a_restored_node_is_kept_in_the_quarantine() {
    let env = TestEnv::new();
    three_turns(&env);
    let dir = env.session_dir("s1");
    let f = node_file(&dir, 0);
    let good = std::fs::read(&f).unwrap();
    std::fs::write(&f, b"{\"id\": broken").unwrap();
    let out = env.ok(&["verify", "s1", "--fix"]);
    assert!(out.contains("the damaged copy is"), "{out}");
    assert_eq!(std::fs::read(&f).unwrap(), good);
    let q: Vec<PathBuf> = std::fs::read_dir(dir.join(".git/git-session/quarantine"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(q.len(), 1);
    assert_eq!(std::fs::read(&q[0]).unwrap(), b"{\"id\": broken");
    // Nothing commits a meta.json that does not parse.
    env.append("s1", &["--text", "x"]);
    std::fs::write(dir.join("meta.json"), b"{").unwrap();
    env.fails(&["commit-turn", "s1"], 128);
    env.fails(&["backfill", "s1"], 1);
    every_commit_parses(&env, &dir);
    assert_eq!(
        problems(&env, &["s1"]),
        vec!["meta_unparsable", "uncommitted_node"]
    );
    env.ok(&["verify", "s1", "--fix"]);
    assert_eq!(env.ok(&["verify", "s1"]), "");
    every_commit_parses(&env, &dir);
}

#[test]
fn a_project_turn_is_one_session_commit() {
    let env = TestEnv::new();
    let work = env.tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    env.git_ok(&work, &["init", "-q", "-b", "main"]);
    env.git_ok(&work, &["config", "user.name", "U"]);
    env.git_ok(&work, &["config", "user.email", "u@x"]);
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    env.git_ok(&work, &["add", "-A"]);
    env.git_ok(&work, &["commit", "-qm", "first"]);
    let pid = env
        .ok(&["project", "add", work.to_str().unwrap(), "--auto-commit"])
        .trim()
        .to_string();
    env.ok(&["init", "s1", "--project", &pid]);
    let sdir = env.state().join("sessions/projects").join(&pid).join("s1");
    for n in 1..=3 {
        env.ok(&["begin-turn", "s1"]);
        std::fs::write(work.join(format!("f{n}.txt")), "x\n").unwrap();
        env.append("s1", &["--text", &format!("turn {n}")]);
        env.append("s1", &["--role", "assistant", "--text", "done"]);
        env.ok(&["commit-turn", "s1"]);
    }
    // Three turns, three session commits (and the root), three agent commits.
    assert_eq!(env.git_ok(&sdir, &["rev-list", "--count", "HEAD"]), "4\n");
    assert_eq!(env.git_ok(&work, &["rev-list", "--count", "HEAD"]), "4\n");
    // An idle commit-turn says nothing about the project.
    let out = env.run(&["commit-turn", "s1", "-q"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let (code, recs) = records(&env, &["s1"]);
    assert_eq!(code, Some(0));
    let stats = &recs.iter().find(|(t, _)| t == "stats").unwrap().1;
    assert_eq!(stats["dag_turns"], 3);
    assert_eq!(stats["turn_commits"], 3);
    assert_eq!(stats["other_commits"], 0);
    // A relocation is an event of its own, counted apart.
    let moved = env.tmp.path().join("moved");
    std::fs::rename(&work, &moved).unwrap();
    env.ok(&["relocate", &pid, moved.to_str().unwrap()]);
    let subject = env.git_ok(&sdir, &["log", "-1", "--format=%s"]);
    assert!(
        subject.starts_with("record: project/relocate: "),
        "{subject}"
    );
    let (code, recs) = records(&env, &["s1"]);
    assert_eq!(code, Some(0));
    let stats = &recs.iter().find(|(t, _)| t == "stats").unwrap().1;
    assert_eq!(stats["turn_commits"], 3);
    assert_eq!(stats["other_commits"], 1);
    assert_eq!(env.git_ok(&sdir, &["status", "--porcelain"]), "");
}

/// One ordinary command of the property test.
#[derive(Debug, Clone)]
enum Op {
    Turn(u8),
    Update(u8),
    Archive(bool),
    Checkout(u8),
    CheckoutMain,
    BeginTurn,
    Title,
    Regenerate(u8),
    Retry(u8),
    Relocate,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..3).prop_map(Op::Turn),
        2 => (0u8..6).prop_map(Op::Update),
        1 => any::<bool>().prop_map(Op::Archive),
        2 => (1u8..6).prop_map(Op::Checkout),
        1 => Just(Op::CheckoutMain),
        1 => Just(Op::BeginTurn),
        1 => Just(Op::Title),
        2 => any::<u8>().prop_map(Op::Regenerate),
        1 => any::<u8>().prop_map(Op::Retry),
        1 => Just(Op::Relocate),
    ]
}

/// Run `args`; an ordinary command answers 0 or 1 (refused: e.g. a checkout
/// while running), never a usage error, a fatal error or a panic.
fn ordinary(env: &TestEnv, args: &[&str]) -> Option<String> {
    let out = env.run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    match out.status.code() {
        Some(0) => Some(String::from_utf8(out.stdout).unwrap()),
        Some(1) => None,
        c => panic!("{args:?} exited {c:?}: {err}"),
    }
}

fn run_ops(ops: &[Op]) {
    let env = TestEnv::new();
    let dirs = [env.tmp.path().join("p1"), env.tmp.path().join("p2")];
    std::fs::create_dir_all(&dirs[0]).unwrap();
    let pid = env
        .ok(&["project", "add", dirs[0].to_str().unwrap()])
        .trim()
        .to_string();
    env.ok(&["init", "s1", "--project", &pid]);
    let sdir = env.state().join("sessions/projects").join(&pid).join("s1");
    let mut users: Vec<String> = Vec::new();
    let mut replies: Vec<String> = Vec::new();
    let mut at = 0;
    let mut n = 0;
    let turn =
        |env: &TestEnv, pred: Option<&str>, tools: u8, n: usize| -> Option<(String, String)> {
            let text = format!("message {n}");
            let mut a = vec!["append", "s1", "--text", &text];
            if let Some(p) = pred {
                a.extend(["--predecessor", p]);
            }
            let u = ordinary(env, &a)?.split_whitespace().next()?.to_string();
            let r = ordinary(
                env,
                &["append", "s1", "--role", "assistant", "--text", "reply"],
            )?
            .split_whitespace()
            .next()?
            .to_string();
            for _ in 0..tools {
                ordinary(
                    env,
                    &[
                        "append", "s1", "--role", "tool", "--name", "read", "--text", "ok",
                    ],
                );
            }
            ordinary(env, &["commit-turn", "s1"]);
            Some((u, r))
        };
    for op in ops {
        n += 1;
        match op {
            Op::Turn(tools) => {
                if let Some((u, r)) = turn(&env, None, *tools, n) {
                    users.push(u);
                    replies.push(r);
                }
            }
            Op::Update(k) => {
                let f: &[&str] = match k {
                    0 => &["--pin"],
                    1 => &["--unpin"],
                    2 => &["--title", "T"],
                    3 => &["--read"],
                    4 => &["--status", "done"],
                    _ => &["--group", "G"],
                };
                let mut a = vec!["update", "s1"];
                a.extend_from_slice(f);
                ordinary(&env, &a);
            }
            Op::Archive(on) => {
                ordinary(&env, &[if *on { "archive" } else { "unarchive" }, "s1"]);
            }
            Op::Checkout(k) => {
                ordinary(&env, &["checkout", "s1", &k.to_string()]);
            }
            Op::CheckoutMain => {
                ordinary(&env, &["checkout", "s1", "main"]);
            }
            Op::BeginTurn => {
                ordinary(&env, &["begin-turn", "s1"]);
            }
            Op::Title => {
                ordinary(&env, &["title", "s1", "--auto"]);
            }
            Op::Regenerate(k) if !users.is_empty() => {
                let u = users[*k as usize % users.len()].clone();
                if let Some(out) = ordinary(
                    &env,
                    &[
                        "append",
                        "s1",
                        "--role",
                        "assistant",
                        "--predecessor",
                        &u,
                        "--text",
                        "again",
                    ],
                ) {
                    replies.push(out.split_whitespace().next().unwrap().to_string());
                    ordinary(&env, &["commit-turn", "s1"]);
                }
            }
            Op::Retry(k) if !replies.is_empty() => {
                let r = replies[*k as usize % replies.len()].clone();
                if let Some((u, r)) = turn(&env, Some(&r), 0, n) {
                    users.push(u);
                    replies.push(r);
                }
            }
            Op::Relocate => {
                at = 1 - at;
                std::fs::create_dir_all(&dirs[at]).unwrap();
                ordinary(&env, &["relocate", &pid, dirs[at].to_str().unwrap()]);
            }
            Op::Regenerate(_) | Op::Retry(_) => {}
        }
    }
    let out = env.run(&["verify", "--all"]);
    assert!(
        out.status.success(),
        "{ops:?}\nverify --all exited {:?}:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    let fsck = env.git_in(&sdir, &["fsck", "--strict", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{ops:?}: {}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    every_commit_parses(&env, &sdir);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_ordinary_commands_always_verify(ops in proptest::collection::vec(op(), 1..14)) {
        run_ops(&ops);
    }
}

/// The Python store leaves meta.json uncommitted after its updates, and
/// commits with `git add -A && git commit` on top of ours: all in order.
#[test]
fn a_python_style_commit_on_top_of_ours_verifies() {
    let env = TestEnv::new();
    three_turns(&env);
    let dir = env.session_dir("s1");
    // update_session / set_archived: meta.json changed, not committed.
    let mut meta = env.meta("s1");
    meta["archived"] = true.into();
    meta["title"] = "from python".into();
    std::fs::write(dir.join("meta.json"), serde_json::to_vec(&meta).unwrap()).unwrap();
    assert_eq!(problems(&env, &["s1"]), Vec::<String>::new());
    // Its own turn: a node in its naming, then add -A and commit.
    let u = "u_py";
    std::fs::write(
        dir.join(format!("history/000099-u-{u}.json")),
        format!(
            r#"{{"id":"{u}","created_at":1796017600.0,"seq":99,"role":"user","name":"","input":null,"output":"from python","caller":"","predecessor":"ROOT","reads":[],"metadata":{{}}}}"#
        ),
    )
    .unwrap();
    env.git_ok(&dir, &["add", "-A"]);
    env.git_ok(&dir, &["commit", "-q", "-m", "turn: from python"]);
    assert_eq!(problems(&env, &["s1"]), Vec::<String>::new());
    // And ours on top of that.
    env.turn("s1", "four", &[]);
    assert_eq!(problems(&env, &["s1"]), Vec::<String>::new());
    env.assert_clean("s1");
}

/// A planted link in place of the quarantine: `--fix` writes nothing
/// through it and leaves the damage reported.
#[test]
fn fix_does_not_follow_a_planted_quarantine_link() {
    let env = TestEnv::new();
    three_turns(&env);
    let dir = env.session_dir("s1");
    let outside = env.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join(".git/git-session/quarantine")).unwrap();
    std::fs::write(node_file(&dir, 0), b"{\"id\": broken").unwrap();
    let _ = env.run(&["verify", "s1", "--fix"]);
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert_eq!(problems(&env, &["s1"]), vec!["node_damaged".to_string()]);
    every_commit_parses(&env, &dir);
}

/// SPEC §5.14: project paths exist and bindings agree.
#[test]
fn a_moved_project_and_a_disagreeing_binding_are_reported() {
    let env = TestEnv::new();
    let (work, pid) = env.project("work", &[]);
    env.ok(&["init", "b1", "--project", &pid]);
    env.ok(&["init", "s1"]);
    assert_verifies(&env, "to begin with");
    // projects.json edited: b1 listed nowhere, s1 under the project.
    let pj = env.state().join("projects/projects.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&pj).unwrap()).unwrap();
    v[&pid]["session_ids"] = serde_json::json!(["s1"]);
    std::fs::write(&pj, serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(
        problems(&env, &["--all"]),
        vec!["binding_mismatch".to_string()]
    );
    env.ok(&["verify", "--all", "--fix"]);
    assert_verifies(&env, "after --fix");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&pj).unwrap()).unwrap();
    assert_eq!(v[&pid]["session_ids"], serde_json::json!(["b1"]));
    // The project moves: reported with the command that fixes it.
    let moved = env.tmp.path().join("moved");
    std::fs::rename(&work, &moved).unwrap();
    let out = env.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("project_path_missing")
            && said.contains(&format!("git-session relocate {pid}")),
        "{said}"
    );
    env.ok(&["relocate", &pid, moved.to_str().unwrap()]);
    assert_verifies(&env, "after relocate");
}
