//! backfill and verify: the DAG and its git mirror agree (SPEC §5.13–§5.14).

use serde_json::Value;

use crate::env::TestEnv;

/// A session whose last three turns were appended but never committed.
fn three_uncommitted(env: &TestEnv) {
    env.ok(&["init", "s1"]);
    env.turn("s1", "committed one", &[]);
    for (i, t) in [1_796_020_000.0, 1_796_020_100.0, 1_796_020_200.0]
        .iter()
        .enumerate()
    {
        let mut c = env.cmd();
        c.env("GIT_SESSION_NOW", format!("{t}"));
        let out = c
            .args(["append", "s1", "--text", &format!("pending {i}")])
            .output()
            .unwrap();
        assert!(out.status.success());
        let out = env
            .cmd()
            .env("GIT_SESSION_NOW", format!("{}", t + 5.0))
            .args(["append", "s1", "--role", "assistant", "--text", "reply"])
            .output()
            .unwrap();
        assert!(out.status.success());
    }
}

fn findings(env: &TestEnv, args: &[&str]) -> Vec<serde_json::Value> {
    let mut a = vec!["verify", "--json"];
    a.extend_from_slice(args);
    let out = env.run(&a);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "finding")
        .map(|r| r["data"].clone())
        .collect()
}

fn kinds(env: &TestEnv, args: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = findings(env, args)
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k.dedup();
    k
}

#[test]
fn uncommitted_turns_are_found_then_backfilled_with_their_times() {
    let env = TestEnv::new();
    three_uncommitted(&env);
    let err = env.fails(&["verify", "s1"], 1);
    let out = env.run(&["verify", "s1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("uncommitted_node: 6 node(s) not in git"),
        "{text}{err}"
    );
    assert!(text.contains("fix: git-session backfill s1"));
    let plan = env.ok(&["backfill", "s1", "--dry-run"]);
    assert!(plan.contains("would commit 3 turns (2, 3, 4)"), "{plan}");
    assert_eq!(
        env.git("s1", &["rev-list", "--count", "HEAD"]),
        "2\n",
        "dry run wrote nothing"
    );
    env.ok(&["backfill", "s1"]);
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "s1"]), "");
    let dates = env.git("s1", &["log", "-3", "--format=%at %ct %s"]);
    assert_eq!(
        dates,
        "1796020205 1796020205 turn 4: pending 2\n1796020105 1796020105 turn 3: pending 1\n1796020005 1796020005 turn 2: pending 0\n"
    );
}

/// Nodes dated before 1970 or past 9999 (a clock set wrong, a hand-written
/// node, another program's import) keep their times; their turn's commit is
/// dated within what git takes. A negative date is one `git fsck --strict`
/// refuses (`badDate`), and so would any remote that checks what it is
/// pushed, so every `push` of the session would fail.
#[test]
fn turns_dated_outside_what_git_dates_are_committed_with_a_date_it_takes() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    for node in [
        r#"{"id":"n1","role":"user","output":"hi","created_at":-2208988800}"#,
        r#"{"id":"n2","role":"assistant","output":"ok","created_at":-2208988700.5}"#,
        r#"{"id":"n3","role":"user","output":"later","created_at":1e300}"#,
        r#"{"id":"n4","role":"assistant","output":"ok","created_at":1e300}"#,
    ] {
        let file = env.tmp.path().join("node.json");
        std::fs::write(&file, node).unwrap();
        let mut c = env.cmd();
        c.args(["append", "s1", "--json-node"])
            .stdin(std::fs::File::open(&file).unwrap());
        env.ok_cmd(c);
    }
    env.ok(&["backfill", "s1"]);
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "s1"]), "");
    assert_eq!(
        env.git("s1", &["log", "-2", "--format=%at %ct %s"]),
        "253402300799 253402300799 turn 2: later\n0 0 turn 1: hi\n"
    );
    let n1 =
        std::fs::read_to_string(env.session_dir("s1").join("history/000001-u-n1.json")).unwrap();
    let n1: serde_json::Value = serde_json::from_str(&n1).unwrap();
    assert_eq!(n1["created_at"], -2208988800.0, "the node keeps its time");
}

/// A turn at work (`begin-turn`, or the Python store between its writes
/// and its `git add -A && git commit`) has nodes no commit holds yet: a
/// note, not a problem, and `--fix` leaves them to the turn's own commit
/// (one made beside the writer would race it for git's index). Once the
/// session is no longer running (`recover` after a crash), they are a
/// problem again, and `--fix` commits them.
#[test]
fn the_nodes_of_a_running_turn_are_a_note_that_fix_leaves_to_the_turn() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.ok(&["begin-turn", "s1"]);
    env.append("s1", &["--text", "two"]);
    env.append("s1", &["--role", "assistant", "--text", "re: two"]);
    assert_eq!(kinds(&env, &["s1"]), ["turn_in_progress"]);
    let f = &findings(&env, &["s1"])[0];
    assert_eq!(f["severity"], "note", "{f}");
    let log = env.git("s1", &["log", "--format=%s"]);
    env.ok(&["verify", "--fix", "s1"]);
    assert_eq!(
        env.git("s1", &["log", "--format=%s"]),
        log,
        "--fix committed a turn at work"
    );
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s"]).trim(),
        "turn 2: two"
    );
    assert_eq!(env.ok(&["verify", "s1"]), "");
    // Left running by a crash: `recover` ends the turn, the nodes are
    // then a problem that `--fix` commits.
    env.ok(&["begin-turn", "s1"]);
    env.append("s1", &["--text", "three"]);
    env.ok(&["recover"]);
    assert_eq!(kinds(&env, &["s1"]), ["uncommitted_node"]);
    env.ok(&["verify", "--fix", "s1"]);
    assert_eq!(env.ok(&["verify", "s1"]), "");
    env.assert_clean("s1");
}

#[test]
fn a_session_without_a_repository_is_backfilled_deterministically() {
    let env = TestEnv::new();
    three_uncommitted(&env);
    std::fs::remove_dir_all(env.session_dir("s1").join(".git")).unwrap();
    assert!(kinds(&env, &["s1"]).contains(&"no_repository".to_string()));
    let copy = env.tmp.path().join("copy");
    let status = std::process::Command::new("cp")
        .args(["-a"])
        .arg(env.state())
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    // Different clocks: the commits must not depend on when backfill runs.
    let mut backfill = env.cmd();
    backfill
        .env("GIT_SESSION_NOW", "1900000000")
        .args(["backfill", "--all"]);
    env.ok_cmd(backfill);
    env.assert_clean("s1");
    let ids = env.git("s1", &["log", "--format=%H %s"]);
    assert_eq!(ids.lines().count(), 5, "{ids}");
    assert!(ids.lines().last().unwrap().ends_with(" session init"));
    // The turns went into one pack (the root commit is a loose object), and
    // gc may repack it (no .keep left).
    let packs: Vec<String> = std::fs::read_dir(env.session_dir("s1").join(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        packs.iter().filter(|p| p.ends_with(".pack")).count(),
        1,
        "{packs:?}"
    );
    assert!(!packs.iter().any(|p| p.ends_with(".keep")), "{packs:?}");
    // Twice: nothing changes.
    let again = env.ok(&["backfill", "--all"]);
    assert_eq!(again, "");
    assert_eq!(env.git("s1", &["log", "--format=%H %s"]), ids);
    // On the copy: the same commit ids.
    let mut c = std::process::Command::new(crate::env::BIN);
    env.isolate(&mut c);
    let out = c
        .env("GIT_SESSION_NOW", "2000000000")
        .arg("--state-dir")
        .arg(&copy)
        .args(["backfill", "s1", "--jobs", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let copied = env.git_in(&copy.join("sessions/s1"), &["log", "--format=%H %s"]);
    assert_eq!(String::from_utf8(copied.stdout).unwrap(), ids);
    assert!(env.ok(&["verify", "--all"]).is_empty());
}

#[test]
fn retry_turns_become_branches_when_backfilled() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "one"]);
    let a1 = env.append("s1", &["--role", "assistant", "--text", "r1"]);
    env.append("s1", &["--text", "two"]);
    env.append("s1", &["--role", "assistant", "--text", "r2"]);
    env.append("s1", &["--text", "two, again", "--predecessor", &a1]);
    let a3 = env.append("s1", &["--role", "assistant", "--text", "r2b"]);
    std::fs::remove_dir_all(env.session_dir("s1").join(".git")).unwrap();
    env.ok(&["backfill", "s1"]);
    env.assert_clean("s1");
    let graph = env.git("s1", &["log", "--all", "--format=%s|%D"]);
    assert!(
        graph.contains(&format!("turn 2: two, again|HEAD -> retry-{a3}")),
        "{graph}"
    );
    assert!(graph.contains("turn 2: two|main"), "{graph}");
    assert!(env.ok(&["verify", "s1"]).is_empty());
}

#[test]
fn each_corruption_is_its_own_finding() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, _) = env.turn("s1", "one", &["read"]);
    env.turn("s1", "two", &[]);
    assert_eq!(env.ok(&["verify", "--all"]), "", "clean to begin with");
    let dir = env.session_dir("s1");
    let hist = dir.join("history");
    let check = |what: &str, expect: &str| {
        let k = kinds(&env, &["--all"]);
        assert!(
            k.contains(&expect.to_string()),
            "{what}: expected {expect} in {k:?}"
        );
    };
    // A node that does not parse.
    std::fs::write(hist.join("000050-u-broken.json"), b"{\"id\":\"broken\",").unwrap();
    check("torn node", "node_unparsable");
    std::fs::remove_file(hist.join("000050-u-broken.json")).unwrap();
    // Name and payload disagree.
    std::fs::write(
        hist.join("000051-u-n51.json"),
        br#"{"id":"other","seq":51,"role":"user"}"#,
    )
    .unwrap();
    check("renamed node", "name_mismatch");
    std::fs::remove_file(hist.join("000051-u-n51.json")).unwrap();
    // Two files with one seq; two files with one id.
    std::fs::write(
        hist.join("000001-t-dupseq.json"),
        br#"{"id":"dupseq","seq":1,"role":"code","caller":""}"#,
    )
    .unwrap();
    check("seq twice", "duplicate_seq");
    std::fs::remove_file(hist.join("000001-t-dupseq.json")).unwrap();
    let first = env.history_files("s1")[0].clone();
    let id = first
        .split('-')
        .nth(2)
        .unwrap()
        .trim_end_matches(".json")
        .to_string();
    std::fs::write(
        hist.join(format!("000060-u-{id}.json")),
        format!(r#"{{"id":"{id}","seq":60,"role":"user"}}"#),
    )
    .unwrap();
    check("id twice", "duplicate_id");
    std::fs::remove_file(hist.join(format!("000060-u-{id}.json"))).unwrap();
    // Dangling head, predecessor, caller.
    let meta_path = dir.join("meta.json");
    let meta = std::fs::read_to_string(&meta_path).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&meta).unwrap();
    m["head_id"] = "ghost".into();
    std::fs::write(&meta_path, serde_json::to_vec(&m).unwrap()).unwrap();
    check("head", "dangling_head");
    std::fs::write(&meta_path, &meta).unwrap();
    std::fs::write(
        hist.join("000070-u-orph.json"),
        br#"{"id":"orph","seq":70,"role":"user","predecessor":"ghost"}"#,
    )
    .unwrap();
    std::fs::write(
        hist.join("000071-t-orph2.json"),
        br#"{"id":"orph2","seq":71,"role":"code","caller":"ghost2"}"#,
    )
    .unwrap();
    let k = kinds(&env, &["s1"]);
    assert!(
        k.contains(&"dangling_predecessor".into())
            && k.contains(&"dangling_caller".into())
            && k.contains(&"uncommitted_node".into()),
        "{k:?}"
    );
    std::fs::remove_file(hist.join("000070-u-orph.json")).unwrap();
    std::fs::remove_file(hist.join("000071-t-orph2.json")).unwrap();
    // meta.json is mutable: a change since the last turn is no problem.
    std::fs::write(
        &meta_path,
        meta.replace("\"status\":\"idle\"", "\"status\":\"idle\",\"x\":1"),
    )
    .unwrap();
    assert_eq!(env.ok(&["verify", "--all"]), "", "edited meta.json");
    std::fs::write(&meta_path, &meta).unwrap();
    // A committed node is immutable.
    let node_path = hist.join(&first);
    let node = std::fs::read_to_string(&node_path).unwrap();
    std::fs::write(&node_path, node.replace("\"one\"", "\"edited\"")).unwrap();
    check("edited node", "node_changed");
    std::fs::write(&node_path, &node).unwrap();
    // Temp files and stale git locks.
    std::fs::write(dir.join(".gs-tmp-meta.json.abc"), b"x").unwrap();
    check("temp", "stray_temp_file");
    std::fs::remove_file(dir.join(".gs-tmp-meta.json.abc")).unwrap();
    let lock = dir.join(".git/index.lock");
    std::fs::write(&lock, b"").unwrap();
    crate::env::age(&lock, 600);
    check("git lock", "stale_git_lock");
    std::fs::remove_file(&lock).unwrap();
    // A trailer that lies about the turn.
    let c2 = env.git("s1", &["rev-parse", "HEAD"]);
    let msg = env
        .git("s1", &["log", "-1", "--format=%B"])
        .replace("Turn: 2", "Turn: 7");
    let tree = env.git("s1", &["rev-parse", "HEAD^{tree}"]);
    let parent = env.git("s1", &["rev-parse", "HEAD^"]);
    let mut ct = std::process::Command::new("git");
    env.isolate(&mut ct);
    let out = ct
        .current_dir(&dir)
        .args(["commit-tree", tree.trim(), "-p", parent.trim(), "-m", &msg])
        .output()
        .unwrap();
    let forged = String::from_utf8(out.stdout).unwrap();
    env.git("s1", &["update-ref", "refs/heads/main", forged.trim()]);
    check("forged trailer", "trailer_turn_mismatch");
    env.git("s1", &["update-ref", "refs/heads/main", c2.trim()]);
    // A missing object: the packs unpacked into loose objects, one removed.
    env.unpack_all(&dir);
    let blob = env.git("s1", &["rev-parse", "HEAD:meta.json"]);
    let obj = dir
        .join(".git/objects")
        .join(&blob[..2])
        .join(blob[2..].trim());
    let saved = std::fs::read(&obj).unwrap();
    std::fs::remove_file(&obj).unwrap();
    check("lost blob", "object_missing");
    std::fs::write(&obj, saved).unwrap();
    // The registries: rows without sessions, sessions without rows, dangling locations.
    env.ok(&["init", "s2"]);
    std::fs::remove_dir_all(env.session_dir("s2")).unwrap();
    check("row without session", "index_row_orphan");
    std::fs::remove_file(env.state().join("sessions/index.json")).unwrap();
    check("index gone", "index_missing");
    env.ok(&["verify", "--all", "--fix"]);
    std::fs::write(
        env.state().join("sessions/locations.json"),
        format!(r#"{{"s1": "{}/nowhere"}}"#, env.tmp.path().display()),
    )
    .unwrap();
    check("location", "location_dangling");
    std::fs::create_dir_all(env.state().join("sessions/not-a-session")).unwrap();
    check("stray dir", "not_a_session_dir");
    std::fs::remove_dir_all(env.state().join("sessions/not-a-session")).unwrap();
    // A session an older version made under a name now kept for the
    // registry's files: no command finds it, so verify names it.
    let reserved = env.state().join("sessions/Index.json");
    std::fs::create_dir_all(reserved.join("history")).unwrap();
    std::fs::write(reserved.join("meta.json"), br#"{"id":"Index.json"}"#).unwrap();
    check("session under a reserved name", "invalid_session_dir");
    std::fs::remove_dir_all(&reserved).unwrap();
    // --fix repairs what is safe; every node is still there.
    let before = env.history_files("s1");
    env.ok(&["verify", "--all", "--fix"]);
    assert_eq!(env.ok(&["verify", "--all"]), "");
    assert_eq!(env.history_files("s1"), before);
    let _ = a1;
}

/// The Python store stamps metadata into committed node files: a note, not
/// a problem; `--fix` commits it as a repair commit that says what it is,
/// and only when HEAD is on the latest turn.
#[test]
fn metadata_stamped_into_committed_nodes_is_a_note_that_fix_commits() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, _) = env.turn("s1", "one", &[]);
    env.turn("s1", "two", &[]);
    let f = env
        .history_files("s1")
        .into_iter()
        .find(|f| f.contains(&a1))
        .unwrap();
    let p = env.session_dir("s1").join("history").join(&f);
    let stamped = std::fs::read_to_string(&p).unwrap().replace(
        "\"metadata\":{}",
        "\"metadata\":{\"project_commit\":{\"sha\":\"abc\"}}",
    );
    std::fs::write(&p, &stamped).unwrap();
    let f_json = findings(&env, &["s1"]);
    assert_eq!(f_json.len(), 1, "{f_json:?}");
    assert_eq!(f_json[0]["kind"], "node_restamped");
    assert_eq!(f_json[0]["severity"], "note");
    let out = env.run(&["verify", "s1"]);
    assert!(out.status.success(), "a note does not fail verify");
    // On an older turn, --fix leaves it (no commit on a checked-out view).
    env.ok(&["checkout", "s1", "1"]);
    let before = env.git("s1", &["rev-list", "--all", "--count"]);
    env.ok(&["verify", "s1", "--fix"]);
    assert_eq!(env.git("s1", &["rev-list", "--all", "--count"]), before);
    env.ok(&["checkout", "s1", "main"]);
    let out = env.ok(&["verify", "s1", "--fix"]);
    assert!(
        out.contains("fixed: committed the stamped node metadata"),
        "{out}"
    );
    assert_eq!(
        env.git("s1", &["log", "-1", "--format=%s"]),
        "session: node metadata stamped after its turn\n"
    );
    env.assert_clean("s1");
    assert!(
        env.git("s1", &["show", &format!("HEAD:history/{f}")])
            .contains("project_commit")
    );
    assert_eq!(env.ok(&["verify", "s1"]), "");
    // Counted apart from the turns.
    let stats = stats(&env, "s1");
    assert_eq!(stats["turn_commits"], 2);
    assert_eq!(stats["other_commits"], 1);
    assert_eq!(stats["dag_turns"], 2);
}

/// The figures of `verify --json` for one session.
pub fn stats(env: &TestEnv, session: &str) -> serde_json::Value {
    let out = env.run(&["--json", "verify", session]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["type"] == "stats")
        .expect("a stats record")["data"]
        .clone()
}

#[test]
fn python_sessions_with_only_the_legacy_commit_style_are_clean() {
    let env = TestEnv::new();
    crate::legacy::python_session(&env, "py1");
    // Its last turn is uncommitted (as the Python store leaves it): one finding.
    assert_eq!(kinds(&env, &["py1"]), vec!["uncommitted_node".to_string()]);
    env.ok(&["backfill", "py1"]);
    assert_eq!(
        env.ok(&["verify", "py1"]),
        "",
        "`turn:` commits without trailers are not a problem"
    );
    env.assert_clean("py1");
}

#[test]
fn backfill_and_verify_refuse_bad_targets() {
    let env = TestEnv::new();
    env.fails(&["backfill"], 2);
    env.fails(&["verify"], 2);
    env.fails(&["backfill", "--all", "s1"], 2);
    env.fails(&["backfill", "nope"], 1);
    env.fails(&["verify", "../x"], 2);
    env.fails(&["backfill", "--all", "--jobs", "0"], 2);
}

/// verify checks a session's objects only while no background packing runs
/// (its packs could vanish under the reading): it waits for the run's lock.
#[test]
fn verify_waits_for_background_packing_to_end() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let lock_path = env
        .session_dir("s1")
        .join(".git/git-session/maintenance.lock");
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.try_lock().unwrap();
    let mut child = env
        .cmd()
        .args(["verify", "s1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "verify ran while packing held the lock"
    );
    drop(lock);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    env.assert_clean("s1");
}

/// A node file another program (the Python store) writes in the instant of
/// an append, the directory's time unchanged (within one tick of the file
/// system's clock): the catalog cache cannot see it, so `commit-turn` and
/// `nodes` miss it. `verify` finds it, and both repairs commit it: `verify
/// --fix` (which rebuilds the catalog) and the `backfill` its finding names.
#[test]
fn a_node_written_by_another_program_in_the_instant_of_an_append_is_repaired() {
    for repair in [&["verify", "--fix", "s1"][..], &["backfill", "s1"]] {
        let env = TestEnv::new();
        env.ok(&["init", "s1"]);
        env.turn("s1", "one", &[]);
        env.append("s1", &["--text", "two"]);
        let history = env.session_dir("s1").join("history");
        let time = std::fs::metadata(&history).unwrap().modified().unwrap();
        let theirs = env.history_files("s1").last().unwrap().clone();
        let mut node: serde_json::Value =
            serde_json::from_slice(&std::fs::read(history.join(&theirs)).unwrap()).unwrap();
        node["id"] = "py_1".into();
        node["seq"] = 4.into();
        node["output"] = "written by another program".into();
        std::fs::write(
            history.join("000004-u-py_1.json"),
            serde_json::to_vec(&node).unwrap(),
        )
        .unwrap();
        std::fs::File::open(&history)
            .unwrap()
            .set_modified(time)
            .unwrap();
        env.ok(&["commit-turn", "s1"]);
        assert!(
            !env.ok(&["nodes", "s1"]).contains("py_1"),
            "the cache hides it"
        );
        let found = kinds(&env, &["s1"]);
        assert!(found.contains(&"uncommitted_node".to_string()), "{found:?}");
        assert!(found.contains(&"catalog_stale".to_string()), "{found:?}");
        env.ok(repair);
        env.assert_clean("s1");
        let nodes = env.ok(&["nodes", "s1"]);
        let line = nodes.lines().find(|l| l.contains("py_1")).unwrap();
        assert!(!line.contains("-------"), "committed: {line}");
        let log = env.git("s1", &["log", "--format=%s", "--name-only"]);
        assert!(log.contains("history/000004-u-py_1.json"), "{log}");
    }
}

/// A link or a FIFO in place of a node file is never read through: verify
/// names it with the repair that fits (not "check the file's permissions").
#[test]
fn a_link_or_a_fifo_in_place_of_a_node_is_named_with_its_repair() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let history = env.session_dir("s1").join("history");
    let secret = env.tmp.path().join("secret.json");
    std::fs::write(&secret, br#"{"token": "not for the record"}"#).unwrap();
    std::os::unix::fs::symlink(&secret, history.join("000003-u-linked.json")).unwrap();
    let fifo = history.join("000004-u-fifo.json");
    crate::env::mkfifo(&fifo);
    let found = findings(&env, &["s1"]);
    let fix_of = |file: &str| {
        found
            .iter()
            .find(|f| f["kind"] == "node_unreadable" && f["path"].as_str().unwrap().ends_with(file))
            .unwrap_or_else(|| panic!("{file}: {found:?}"))["fix"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(fix_of("000003-u-linked.json").starts_with("replace the link"));
    assert!(fix_of("000004-u-fifo.json").starts_with("move it out of history/"));
    let shown = env.run(&["cat", "s1", "linked"]);
    assert!(!String::from_utf8_lossy(&shown.stdout).contains("not for the record"));
}

#[test]
fn objects_reads_every_stored_object_back_loose_or_packed() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &["read"]);
    env.turn("s1", "two", &[]);
    let dir = env.session_dir("s1");
    assert!(kinds(&env, &["--objects", "s1"]).is_empty());
    // A loose blob damaged in place: its name stays, its bytes change.
    let file = env.history_files("s1")[0].clone();
    let id = env.git("s1", &["rev-parse", &format!("HEAD:history/{file}")]);
    let id = id.trim();
    let path = loose_object(&dir, id);
    let original = std::fs::read(&path).unwrap();
    // The bytes of another object (meta.json's blob) under this one's name.
    let other = env.git("s1", &["rev-parse", "HEAD:meta.json"]);
    let damaged = std::fs::read(loose_object(&dir, other.trim())).unwrap();
    writable(&path);
    std::fs::write(&path, &damaged).unwrap();
    // The node file still matches the tree: only reading the object finds it.
    assert!(kinds(&env, &["s1"]).is_empty());
    assert_eq!(kinds(&env, &["--objects", "s1"]), ["object_missing"]);
    let said = env.run(&["verify", "--objects", "s1"]);
    assert_eq!(said.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&said.stdout).contains(id));
    std::fs::write(&path, &original).unwrap();
    assert!(kinds(&env, &["--objects", "s1"]).is_empty());
    // Packed: a byte flipped in the middle of the pack.
    env.git_ok(&dir, &["repack", "-a", "-d", "-q"]);
    env.git_ok(&dir, &["prune-packed"]);
    assert!(kinds(&env, &["--objects", "s1"]).is_empty());
    let pack = std::fs::read_dir(dir.join(".git/objects/pack"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let mut bytes = std::fs::read(&pack).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    writable(&pack);
    std::fs::write(&pack, &bytes).unwrap();
    assert_eq!(kinds(&env, &["--objects", "s1"]), ["object_missing"]);
}

/// The loose file of blob `id` in `dir`'s repository.
fn loose_object(dir: &std::path::Path, id: &str) -> std::path::PathBuf {
    dir.join(".git/objects").join(&id[..2]).join(&id[2..])
}

/// Make a read-only object or pack file writable (git writes them 0444).
fn writable(path: &std::path::Path) {
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(path, perms).unwrap();
}

/// A blob lost from git, or damaged in its loose file, while the session's
/// file still holds its bytes (the files are the record, git their mirror):
/// `verify` says so, `verify --fix` stores it again from the file, the
/// damaged copy quarantined, and git agrees. A blob whose file changed too
/// needs a backup, and `--fix` leaves it alone.
#[test]
fn a_lost_or_damaged_blob_is_stored_again_from_the_file_that_holds_it() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &["read"]);
    env.turn("s1", "two", &[]);
    let dir = env.session_dir("s1");
    env.unpack_all(&dir);
    let files = env.history_files("s1");
    let blob_of = |file: &str| {
        env.git("s1", &["rev-parse", &format!("HEAD:history/{file}")])
            .trim()
            .to_string()
    };
    let fixed_by = |args: &[&str], id: &str| {
        let mut a = vec!["verify", "--fix"];
        a.extend_from_slice(args);
        let out = env.ok(&a);
        assert!(out.contains(&format!("stored blob {id} again")), "{out}");
        assert!(kinds(&env, &["--objects", "s1"]).is_empty());
        env.assert_clean("s1");
    };
    let repairable = |args: &[&str], id: &str| {
        let found = findings(&env, args);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0]["kind"], "object_missing");
        assert_eq!(found[0]["fixable"], true, "{found:?}");
        assert_eq!(found[0]["fix"], "git-session verify --fix s1");
        assert!(found[0]["message"].as_str().unwrap().contains(id));
    };

    // Missing: the loose file is gone.
    let id = blob_of(&files[0]);
    std::fs::remove_file(loose_object(&dir, &id)).unwrap();
    env.fails(&["verify", "s1"], 1);
    repairable(&["s1"], &id);
    fixed_by(&["s1"], &id);

    // Empty: what a crash leaves of an object whose bytes never reached the
    // disk. git fails on it; plain `verify` finds it too.
    let id = blob_of(&files[1]);
    let obj = loose_object(&dir, &id);
    writable(&obj);
    std::fs::write(&obj, b"").unwrap();
    assert!(
        !env.git_in(&dir, &["fsck", "--no-progress"])
            .status
            .success()
    );
    repairable(&["s1"], &id);
    fixed_by(&["s1"], &id);
    let quarantined: Vec<Vec<u8>> = std::fs::read_dir(dir.join(".git/git-session/quarantine"))
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(quarantined, [Vec::<u8>::new()], "the damaged copy is kept");

    // Damaged inside: another object's bytes under its name, which only
    // reading the object (`--objects`) finds.
    let id = blob_of(&files[2]);
    let obj = loose_object(&dir, &id);
    let other = env.git("s1", &["rev-parse", "HEAD:meta.json"]);
    writable(&obj);
    std::fs::copy(loose_object(&dir, other.trim()), &obj).unwrap();
    assert!(kinds(&env, &["s1"]).is_empty());
    repairable(&["--objects", "s1"], &id);
    fixed_by(&["--objects", "s1"], &id);

    // A blob whose file changed since (meta.json is rewritten by `update`):
    // nothing on disk holds its bytes, and nothing is written.
    env.ok(&["update", "s1", "--pin"]);
    let id = env.git("s1", &["rev-parse", "HEAD:meta.json"]);
    let id = id.trim();
    std::fs::remove_file(loose_object(&dir, id)).unwrap();
    let found = findings(&env, &["s1"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["fixable"], false);
    assert!(found[0]["fix"].as_str().unwrap().contains("backup"));
    let out = env.fails(&["verify", "--fix", "s1"], 1);
    assert!(!out.contains("stored blob"), "{out}");
    assert!(!loose_object(&dir, id).exists());
}

/// `verify --fix` stores a lost blob through no planted link: with the
/// object's fan-out directory a link to a directory outside, nothing is
/// written there.
#[test]
fn a_lost_blob_is_stored_again_through_no_link() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let dir = env.session_dir("s1");
    env.unpack_all(&dir);
    let file = env.history_files("s1")[0].clone();
    let id = env.git("s1", &["rev-parse", &format!("HEAD:history/{file}")]);
    let id = id.trim();
    std::fs::remove_file(loose_object(&dir, id)).unwrap();
    let fanout = dir.join(".git/objects").join(&id[..2]);
    let outside = env.tmp.path().join("outside");
    std::fs::rename(&fanout, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &fanout).unwrap();
    let before: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let out = env.run(&["verify", "--fix", "s1"]);
    assert_ne!(out.status.code(), Some(0));
    let after: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before, after, "nothing written through the link");
    assert!(!outside.join(&id[2..]).exists());
}

/// `verify --all` checks sessions on several threads but prints them in id
/// order, whichever finishes first: its output is the same from one run to
/// the next (a CI job can diff it). The first session is the slow one.
#[test]
fn verify_all_prints_sessions_in_id_order_whichever_finishes_first() {
    let env = TestEnv::new();
    let mut reqs = vec![vec!["init".to_string(), "a-big".to_string()]];
    for t in 0..150 {
        reqs.push(
            ["append", "a-big", "--text", &format!("q{t}")]
                .map(String::from)
                .into(),
        );
        reqs.push(["commit-turn", "a-big"].map(String::from).into());
    }
    let small: Vec<String> = (0..12).map(|i| format!("s{i:02}")).collect();
    for id in &small {
        reqs.push(vec!["init".into(), id.clone()]);
        reqs.push(["append", id, "--text", "hi"].map(String::from).into());
        reqs.push(vec!["commit-turn".into(), id.clone()]);
    }
    env.batch(&reqs);
    let mut want = vec!["a-big".to_string()];
    want.extend(small);
    for _ in 0..3 {
        let out = env.ok(&["--json", "verify", "--all", "--stats", "--jobs", "4"]);
        let order: Vec<String> = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["type"] == "stats")
            .map(|r| r["data"]["session"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(order, want);
    }
}

/// Delete `branch` while HEAD is on `main`, as a script or a careless
/// `git branch -D` would, then check that `verify` names the branch it
/// recreates, that `verify --fix` recreates exactly that branch at `tip`
/// and touches no other ref or commit, and that everything is clean after.
fn lost_branch_comes_back_as(env: &TestEnv, branch: &str, tip: &str) {
    env.ok(&["checkout", "s1", "main", "-q"]);
    let refs = env.git("s1", &["for-each-ref", "--format=%(objectname) %(refname)"]);
    assert!(
        refs.contains(&format!("{tip} refs/heads/{branch}\n")),
        "{refs}"
    );
    let commits = env.git("s1", &["rev-list", "--all", "--topo-order"]);
    let head = env.git("s1", &["symbolic-ref", "HEAD"]);
    env.git("s1", &["update-ref", "-d", &format!("refs/heads/{branch}")]);

    let found = findings(env, &["s1"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["kind"], "turn_unreachable");
    assert_eq!(
        found[0]["fix"],
        format!("git-session verify --fix s1 (creates `{branch}`)")
    );
    assert_eq!(
        env.ok(&["verify", "s1", "--fix"]),
        format!("s1: fixed: recreated branch `{branch}` at {}\n", &tip[..8])
    );
    assert_eq!(
        env.git("s1", &["for-each-ref", "--format=%(objectname) %(refname)"]),
        refs,
        "the branch is back under its own name, and nothing else moved"
    );
    assert_eq!(
        env.git("s1", &["rev-list", "--all", "--topo-order"]),
        commits
    );
    assert_eq!(env.git("s1", &["symbolic-ref", "HEAD"]), head);
    assert_eq!(env.ok(&["verify", "s1"]), "");
    let fsck = env.git_in(
        &env.session_dir("s1"),
        &["fsck", "--strict", "--no-progress"],
    );
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// A regenerated reply forks `retry-<its id>`; a turn continued on that
/// branch moves its tip. The branch lost, `--fix` names it after the reply
/// that forked it, not after the reply at its tip.
#[test]
fn a_lost_regenerated_branch_comes_back_under_the_name_it_was_made_with() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let u2 = env.append("s1", &["--text", "two"]);
    env.append("s1", &["--role", "assistant", "--text", "r2"]);
    env.ok(&["commit-turn", "s1"]);
    let again = env.append(
        "s1",
        &[
            "--role",
            "assistant",
            "--predecessor",
            &u2,
            "--text",
            "r2 again",
        ],
    );
    env.ok(&["commit-turn", "s1"]);
    let branch = format!("retry-{again}");
    assert_eq!(
        env.git("s1", &["symbolic-ref", "HEAD"]),
        format!("refs/heads/{branch}\n")
    );
    let (_, c3) = env.turn("s1", "three", &[]);
    assert_eq!(
        env.git("s1", &["log", "--format=%s", &branch]),
        "turn 3: three\nturn 2 (regenerated): two\nturn 1: one\nsession init\n"
    );
    lost_branch_comes_back_as(&env, &branch, &c3);
}

/// The same branch lost after the conversation went on on `main`: every
/// node of the lost branch is in the tree of main's newer commit (a tree
/// holds the whole session), yet its turns are in no commit a branch
/// reaches. verify finds it by the DAG tip no `Nodes:` trailer names, and
/// `--fix` brings the branch back under its own name.
#[test]
fn a_lost_branch_is_found_when_a_later_commit_elsewhere_holds_its_files() {
    let env = TestEnv::new();
    let (branch, _) = turn_two_regenerated(&env);
    let (_, tip) = env.turn("s1", "three", &[]);
    env.ok(&["checkout", "s1", "main", "-q"]);
    env.turn("s1", "three, on main", &[]);
    assert_eq!(
        env.git("s1", &["log", "--format=%s", "main"]),
        "turn 3: three, on main\nturn 2: two\nturn 1: one\nsession init\n"
    );
    lost_branch_comes_back_as(&env, &branch, &tip);
}

/// A user message retried from an earlier turn forks `retry-<its reply>`,
/// or `retry-<the message>` when the message is committed before its reply
/// (the name `commit-turn` gives the branch when it makes it). Lost, the
/// branch comes back under that name, wherever its tip has moved since.
#[test]
fn a_lost_branch_of_a_retried_message_comes_back_under_the_name_it_was_made_with() {
    for reply_first in [true, false] {
        let env = TestEnv::new();
        env.ok(&["init", "s1"]);
        let (a1, _) = env.turn("s1", "one", &[]);
        env.turn("s1", "two", &[]);
        env.turn("s1", "three", &[]);
        let u = env.append("s1", &["--text", "two, again", "--predecessor", &a1]);
        if !reply_first {
            env.ok(&["commit-turn", "s1"]);
        }
        let a = env.append("s1", &["--role", "assistant", "--text", "r2b"]);
        env.ok(&["commit-turn", "s1"]);
        let branch = format!("retry-{}", if reply_first { &a } else { &u });
        let (_, tip) = env.turn("s1", "three, again", &[]);
        assert_eq!(
            env.git("s1", &["rev-parse", &branch]).trim(),
            tip,
            "reply_first: {reply_first}"
        );
        lost_branch_comes_back_as(&env, &branch, &tip);
    }
}

/// `verify --fix` says what it committed in the words of `commit-turn`:
/// the turns by number.
#[test]
fn a_fix_names_the_turns_it_committed() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.append("s1", &["--text", "two"]);
    env.append("s1", &["--role", "assistant", "--text", "r2"]);
    env.append("s1", &["--text", "three"]);
    assert_eq!(
        env.ok(&["verify", "--fix", "s1"]),
        "s1: fixed: committed 2 turns (2, 3)\n"
    );
    assert_eq!(env.ok(&["verify", "s1"]), "");
    // A session it brings in is titled by the title rules, and says so.
    env.ok(&["init", "s2"]);
    env.append("s2", &["--text", "A question"]);
    assert_eq!(
        env.ok(&["verify", "--fix", "s2"]),
        "s2: fixed: committed 1 turn (1)\ns2: fixed: titled \"A question\"\n"
    );
}

/// `main` deleted while HEAD is on a retry branch: its last turn is in no
/// commit a branch reaches, though the retry branch's trees hold its file.
/// verify finds it, and `--fix` brings it back as `main`.
#[test]
fn a_deleted_main_comes_back_as_main() {
    let env = TestEnv::new();
    let (_, c2) = turn_two_regenerated(&env);
    env.turn("s1", "three", &[]);
    let refs = env.git("s1", &["for-each-ref", "--format=%(objectname) %(refname)"]);
    env.git("s1", &["update-ref", "-d", "refs/heads/main"]);
    let found = findings(&env, &["s1"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["kind"], "turn_unreachable");
    assert_eq!(
        env.ok(&["verify", "s1", "--fix"]),
        format!("s1: fixed: recreated branch `main` at {}\n", &c2[..8])
    );
    assert_eq!(
        env.git("s1", &["for-each-ref", "--format=%(objectname) %(refname)"]),
        refs
    );
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

/// A lost retry branch whose first commit another branch forked from (and
/// so still reaches) comes back under its own name, named after the commit
/// that started it, not after the first one no branch reaches; and with
/// `main` lost too, each comes back under its own name.
#[test]
fn a_lost_branch_another_forked_from_comes_back_under_its_own_name() {
    for main_too in [false, true] {
        let env = TestEnv::new();
        let (branch, c2) = turn_two_regenerated(&env);
        let (_, tip) = env.turn("s1", "three", &[]);
        env.ok(&["checkout", "s1", "2", "-q"]);
        let (a3b, _) = env.turn("s1", "three, again", &[]);
        let refs = env.git("s1", &["for-each-ref", "--format=%(objectname) %(refname)"]);
        assert!(
            refs.contains(&format!("refs/heads/retry-{a3b}\n")),
            "{refs}"
        );
        env.git("s1", &["update-ref", "-d", &format!("refs/heads/{branch}")]);
        let mut want = format!("s1: fixed: recreated branch `{branch}` at {}\n", &tip[..8]);
        if main_too {
            env.git("s1", &["update-ref", "-d", "refs/heads/main"]);
            want.push_str(&format!(
                "s1: fixed: recreated branch `main` at {}\n",
                &c2[..8]
            ));
        }
        let out = env.ok(&["verify", "s1", "--fix"]);
        let mut got: Vec<&str> = out.lines().collect();
        let mut wanted: Vec<&str> = want.lines().collect();
        got.sort();
        wanted.sort();
        assert_eq!(got, wanted, "main too: {main_too}");
        assert_eq!(
            env.git("s1", &["for-each-ref", "--format=%(objectname) %(refname)"]),
            refs,
            "main too: {main_too}"
        );
        assert_eq!(env.ok(&["verify", "s1"]), "");
    }
}

/// Session s1: turn 1, turn 2, then turn 2 regenerated (`--regenerate`),
/// HEAD on its retry branch. Returns that branch and turn 2's commit.
fn turn_two_regenerated(env: &TestEnv) -> (String, String) {
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    let (_, c2) = env.turn("s1", "two", &[]);
    let again = env.append(
        "s1",
        &["--role", "assistant", "--regenerate", "--text", "r2 again"],
    );
    env.ok(&["commit-turn", "s1"]);
    (format!("retry-{again}"), c2)
}

/// A directory in sessions/ with neither meta.json nor history/ (a test
/// leftover) is no session: `verify --all` notes it and exits 0, as `list`
/// skips it; one with history/ but no meta.json is still a problem.
#[test]
fn a_directory_that_is_no_session_is_a_note() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    std::fs::create_dir_all(env.state().join("sessions/leftover/workdir")).unwrap();
    let out = env.run(&["--json", "verify", "--all"]);
    assert_eq!(out.status.code(), Some(0));
    let notes: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "finding")
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["data"]["kind"], "not_a_session_dir");
    assert_eq!(notes[0]["data"]["severity"], "note");
    assert!(!env.ok(&["list"]).contains("leftover"));
    std::fs::create_dir_all(env.state().join("sessions/leftover/history")).unwrap();
    env.fails(&["verify", "--all"], 1);
}
