//! The registry and the session lifecycle (SPEC §3, §5.8, §5.9, §5.12).

use crate::env::TestEnv;

fn ids(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// Three sessions with one turn each, the later the newer.
fn three(env: &mut TestEnv) {
    for (i, s) in ["old", "mid", "new"].iter().enumerate() {
        env.now = Some(1_796_017_556.0 + 100.0 * i as f64);
        env.ok(&["append", s, "--create", "--text", &format!("hello {s}")]);
        env.ok(&["commit-turn", s]);
    }
    env.now = Some(1_796_018_000.0);
}

fn rows(env: &TestEnv, args: &[&str]) -> Vec<serde_json::Value> {
    let mut a = vec!["list", "--json"];
    a.extend_from_slice(args);
    env.ok(&a)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["data"].clone())
        .collect()
}

#[test]
fn list_order_survives_renames_pins_and_archiving() {
    let mut env = TestEnv::new();
    three(&mut env);
    assert_eq!(ids(&env.ok(&["list"])), ["new", "mid", "old"]);
    let out = env.ok(&["update", "mid", "--title", "Renamed", "--pin", "--json"]);
    let rec: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(rec["type"], "session_updated");
    assert_eq!(
        rec["data"],
        serde_json::json!({"session": "mid", "changed": {"title": "Renamed", "_user_titled": true, "pinned": true}})
    );
    env.ok(&[
        "update",
        "old",
        "--status",
        "needs_input",
        "--unread",
        "--group",
        "work",
    ]);
    assert_eq!(
        ids(&env.ok(&["list"])),
        ["new", "mid", "old"],
        "updates are not activity"
    );
    env.ok(&["archive", "mid"]);
    assert_eq!(ids(&env.ok(&["list"])), ["new", "old"]);
    assert_eq!(ids(&env.ok(&["list", "--archived"])), ["mid"]);
    env.ok(&["unarchive", "mid"]);
    assert_eq!(
        ids(&env.ok(&["list"])),
        ["new", "mid", "old"],
        "back in its old place"
    );
    let r = rows(&env, &["--status", "needs_input"]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["group"], "work");
    assert_eq!(r[0]["unread"], true);
    assert_eq!(
        ids(&env.ok(&["list", "--limit", "1", "--offset", "1"])),
        ["mid"]
    );
    // Every row carries the 15 fields, the preview and the project.
    for f in [
        "id",
        "agent_id",
        "title",
        "created_at",
        "updated_at",
        "source",
        "channel",
        "account_id",
        "peer_display",
        "peer_id",
        "pinned",
        "archived",
        "group",
        "status",
        "unread",
        "preview",
        "project",
    ] {
        assert!(r[0].get(f).is_some(), "row lacks {f}: {}", r[0]);
    }
    assert_eq!(r[0]["preview"], "hello old");
    assert_eq!(env.meta("mid")["updated_at"], 1_796_017_656.0);
}

#[test]
fn a_missing_or_corrupt_index_is_rebuilt_with_the_same_rows() {
    let mut env = TestEnv::new();
    three(&mut env);
    env.ok(&["update", "old", "--title", "Kept title"]);
    let before = rows(&env, &[]);
    let index = env.state().join("sessions/index.json");
    std::fs::remove_file(&index).unwrap();
    std::fs::remove_file(env.state().join("sessions/index.journal")).unwrap();
    assert_eq!(
        rows(&env, &[]),
        before,
        "rebuilt from meta.json, preview included"
    );
    assert!(index.exists(), "list saved the rebuilt index");
    std::fs::write(&index, b"{ not json").unwrap();
    assert_eq!(rows(&env, &[]), before);
    // A session the index does not know is picked up by the directory scan.
    env.ok(&["append", "late", "--create", "--text", "late one"]);
    let mut idx: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    idx.as_object_mut().unwrap().remove("late");
    std::fs::write(&index, serde_json::to_vec(&idx).unwrap()).unwrap();
    std::fs::remove_file(env.state().join("sessions/index.journal")).ok();
    assert!(ids(&env.ok(&["list"])).contains(&"late".to_string()));
}

#[test]
fn recover_marks_running_sessions_interrupted() {
    let mut env = TestEnv::new();
    three(&mut env);
    env.ok(&["update", "mid", "--status", "running"]);
    // As the Python store leaves it: the row says idle, meta.json says running.
    let meta_path = env.session_dir("old").join("meta.json");
    let mut m = env.meta("old");
    m["status"] = "running".into();
    std::fs::write(&meta_path, serde_json::to_vec(&m).unwrap()).unwrap();
    let out = env.ok(&["recover"]);
    assert!(
        out.contains("mid: running -> interrupted") && out.contains("old: running -> interrupted"),
        "{out}"
    );
    assert_eq!(env.meta("mid")["status"], "interrupted");
    assert_eq!(env.meta("old")["status"], "interrupted");
    let r = rows(&env, &["--status", "interrupted"]);
    assert_eq!(r.len(), 2);
    assert!(env.ok(&["recover"]).is_empty(), "nothing left to do");
}

#[test]
fn gc_shells_removes_only_old_empty_unprotected_sessions() {
    let mut env = TestEnv::new();
    env.now = Some(1_796_000_000.0);
    for s in [
        "shell",
        "archived-shell",
        "project-shell",
        "migrating-shell",
        "with-node",
    ] {
        env.ok(&["init", s]);
    }
    env.ok(&["append", "with-node", "--text", "x"]);
    env.ok(&["archive", "archived-shell"]);
    // Bound to a project whose directory is gone.
    let meta_path = env.session_dir("project-shell").join("meta.json");
    let mut m = env.meta("project-shell");
    m["project_id"] = "proj_ab12".into();
    std::fs::write(&meta_path, serde_json::to_vec(&m).unwrap()).unwrap();
    std::fs::create_dir_all(env.state().join("projects")).unwrap();
    std::fs::write(
        env.state().join("projects/projects.json"),
        r#"{"proj_ab12": {"id": "proj_ab12", "name": "gone", "path": "/nonexistent/project", "session_ids": ["project-shell"]}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(env.state().join("sessions/.migration")).unwrap();
    std::fs::write(
        env.state().join("sessions/.migration/journal.json"),
        r#"{"sessions": {"migrating-shell": {"step": "copied"}}}"#,
    )
    .unwrap();
    env.now = Some(1_796_000_000.0 + 1800.0);
    assert_eq!(env.ok(&["gc-shells"]), "", "nothing is an hour old yet");
    env.now = Some(1_796_000_000.0 + 7200.0);
    assert_eq!(env.ok(&["gc-shells", "--dry-run"]), "would remove shell\n");
    assert!(env.session_dir("shell").exists());
    assert_eq!(env.ok(&["gc-shells"]), "removed shell\n");
    assert!(!env.session_dir("shell").exists());
    for kept in [
        "archived-shell",
        "project-shell",
        "migrating-shell",
        "with-node",
    ] {
        assert!(env.session_dir(kept).exists(), "{kept} must be kept");
    }
    assert!(!ids(&env.ok(&["list", "--include-archived"])).contains(&"shell".to_string()));
    env.fails(&["gc-shells", "--older-than", "soon"], 2);
}

/// A shell is deleted only on the word of the directory, asked under the
/// session's lock: an empty catalog cache while another program wrote the
/// first node (the directory's time unchanged) keeps it; so does a node
/// appended while gc-shells waited for the lock, after it had found the
/// session empty.
#[test]
fn gc_shells_deletes_no_session_that_holds_a_node() {
    use std::io::{BufRead, BufReader};
    let mut env = TestEnv::new();
    env.now = Some(1_796_000_000.0);
    env.ok(&["init", "cached"]);
    env.ok(&["init", "raced"]);
    let node = |id: &str| {
        serde_json::json!({"id": id, "created_at": 1_796_000_001.0, "seq": 1, "role": "user",
            "name": null, "caller": null, "predecessor": null, "input": null,
            "output": "typed by the user", "metadata": {}})
        .to_string()
    };
    // The cache says empty; the first node came in the same instant.
    env.ok(&["nodes", "cached"]);
    let history = env.session_dir("cached").join("history");
    let time = std::fs::metadata(&history).unwrap().modified().unwrap();
    std::fs::write(history.join("0001-u-theirs.json"), node("theirs")).unwrap();
    std::fs::File::open(&history)
        .unwrap()
        .set_modified(time)
        .unwrap();
    env.now = Some(1_796_000_000.0 + 7200.0);
    // `raced` is empty when gc-shells looks; it waits for the session's
    // lock, held here, and a node lands meanwhile (as an append holding
    // that lock would write it).
    let lock = env.hold_lock(&env.session_dir("raced"));
    let mut gc = env
        .cmd()
        .args(["gc-shells", "--lock-timeout", "60"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(gc.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("waiting for the lock") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "gc-shells ended first"
        );
    }
    let raced = env.session_dir("raced").join("history");
    std::fs::write(raced.join("0001-u-late.json"), node("late")).unwrap();
    lock.unlock().unwrap();
    let out = gc.wait_with_output().unwrap();
    assert!(out.status.success());
    for kept in ["cached", "raced"] {
        assert!(env.session_dir(kept).exists(), "{kept} was deleted");
    }
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

/// `recover` runs gc-shells at every start-up: a shell it may not delete
/// (its directory holds a file of someone else's, or it is busy) is kept,
/// and the routine still collects the others and exits 0.
#[test]
fn a_shell_that_cannot_go_does_not_fail_recover() {
    let mut env = TestEnv::new();
    env.now = Some(1_796_000_000.0);
    for s in ["stray", "busy", "shell"] {
        env.ok(&["init", s]);
    }
    std::fs::write(env.session_dir("stray").join("notes.txt"), "mine").unwrap();
    let _lock = env.hold_lock(&env.session_dir("busy"));
    env.now = Some(1_796_000_000.0 + 7200.0);
    let plan = env.ok(&["gc-shells", "--dry-run"]);
    assert!(!plan.contains("stray"), "{plan}");
    let out = env.run(&["--lock-timeout", "0.2", "recover"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("kept `busy`"), "{err}");
    assert!(!env.session_dir("shell").exists());
    assert!(env.session_dir("stray").join("notes.txt").exists());
    assert!(env.session_dir("busy").exists());
}

#[test]
fn concurrent_updates_of_different_sessions_both_land() {
    let mut env = TestEnv::new();
    three(&mut env);
    std::thread::scope(|s| {
        for id in ["old", "new"] {
            let env = &env;
            s.spawn(move || {
                for i in 0..15 {
                    env.ok(&["update", id, "--title", &format!("{id} v{i}")]);
                }
            });
        }
    });
    // A creation folds the journal into index.json.
    env.ok(&["init", "another"]);
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.state().join("sessions/index.json")).unwrap())
            .unwrap();
    assert_eq!(index["old"]["title"], "old v14");
    assert_eq!(index["new"]["title"], "new v14");
}

#[test]
fn a_killed_append_leaves_an_index_list_can_read() {
    let mut env = TestEnv::new();
    three(&mut env);
    for i in 0..20u64 {
        let mut child = env
            .cmd()
            .args(["append", "mid", "--text", &format!("message {i}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros((i * 211) % 3000));
        let _ = child.kill();
        let _ = child.wait();
    }
    // A torn journal line, as a kill mid-write could leave.
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(env.state().join("sessions/index.journal"))
        .unwrap()
        .write_all(b"{\"id\":\"mid\",\"tit")
        .unwrap();
    assert_eq!(ids(&env.ok(&["list"])).len(), 3);
    // The killed appends' nodes (if any got out) are committed by --fix; then all is clean.
    env.run(&["verify", "--all", "--fix"]);
    assert_eq!(env.ok(&["verify", "--all"]), "");
}

#[test]
fn python_sessions_are_listed_with_titles_and_previews() {
    let env = TestEnv::new();
    crate::legacy::python_session(&env, "py1");
    // A legacy in-project repo, found through locations.json.
    let project = env.tmp.path().join("proj/.openprogram/sessions/p1");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::rename(env.session_dir("py1"), &project).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(project.join("meta.json")).unwrap()).unwrap();
    m["id"] = "p1".into();
    std::fs::write(project.join("meta.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    std::fs::write(
        env.state().join("sessions/locations.json"),
        format!("{{\n  \"p1\": \"{}\"\n}}", project.display()),
    )
    .unwrap();
    crate::legacy::python_session(&env, "py2");
    let r = rows(&env, &[]);
    assert_eq!(r.len(), 2, "{r:?}");
    for row in &r {
        assert_eq!(row["title"], "Hello");
        assert_eq!(row["preview"], "second question");
    }
    let out = env.ok(&["show", "p1"]);
    assert!(out.contains("hello world"));
}

#[test]
fn lifecycle_refusals() {
    let mut env = TestEnv::new();
    three(&mut env);
    env.fails(&["update", "ghost", "--pin"], 1);
    env.fails(&["archive", "ghost"], 1);
    env.fails(&["unarchive", "ghost"], 1);
    env.fails(&["update", "old"], 2);
    env.fails(&["update", "old", "--status", "sleeping"], 2);
    let err = env.fails(&["delete", "old"], 2);
    assert!(err.contains("--yes"), "{err}");
    assert!(env.session_dir("old").exists());
    env.ok(&["delete", "old", "--yes"]);
    assert!(!env.session_dir("old").exists());
    assert_eq!(ids(&env.ok(&["list"])), ["new", "mid"]);
    env.fails(&["delete", "old", "--yes"], 1);
    assert_eq!(env.ok(&["verify", "--all"]), "");
}

#[test]
fn titles_in_two_phases_and_at_thresholds() {
    let mut env = TestEnv::new();
    env.ok(&["init", "t1"]);
    env.append(
        "t1",
        &[
            "--text",
            "Please refactor the parser so that errors carry spans and messages",
        ],
    );
    env.append("t1", &["--role", "assistant", "--text", "Done"]);
    env.ok(&["commit-turn", "t1"]);
    assert_eq!(
        env.meta("t1")["title"],
        "Please refactor the parser so that errors carry sp…"
    );
    let script = env.tmp.path().join("namer.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat > /dev/null\necho 'Title: \"Parser error spans\"'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cmd = script.to_str().unwrap();
    assert_eq!(
        env.ok(&["title", "t1", "--auto", "--command", cmd]),
        "Parser error spans\n"
    );
    assert_eq!(env.meta("t1")["_title_gen_count"], 2);
    // Not due again until the branch has 6 replies.
    std::fs::write(&script, "#!/bin/sh\necho 'Another name'\n").unwrap();
    assert_eq!(
        env.ok(&["title", "t1", "--auto", "--command", cmd]),
        "Parser error spans\n"
    );
    for i in 0..5 {
        env.append("t1", &["--text", &format!("more {i}")]);
        env.append("t1", &["--role", "assistant", "--text", "ok"]);
    }
    assert_eq!(
        env.ok(&["title", "t1", "--auto", "--command", cmd]),
        "Another name\n"
    );
    // A failing command keeps the title: exit 0 and a warning.
    let out = env
        .cmd()
        .args(["title", "t1", "--command", "exit 3"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("title kept"));
    assert_eq!(env.meta("t1")["title"], "Another name");
    // A typed title is never replaced; the env var names the command too.
    env.ok(&["update", "t1", "--title", "Mine"]);
    let out = env
        .cmd()
        .env("GIT_SESSION_TITLE_CMD", cmd)
        .args(["title", "t1"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Mine\n");
    assert_eq!(env.meta("t1")["updated_at"], 1_796_017_556.0);
    env.now = None;
}

/// A title command's output is read while it runs: one that prints more
/// than a pipe holds after its title is answered, not left blocked until
/// the timeout; one that leaves something holding its output open is cut
/// off at the timeout, the title kept.
#[test]
fn a_title_command_that_prints_much_is_read_while_it_runs() {
    let env = TestEnv::new();
    env.ok(&["init", "t1"]);
    env.append("t1", &["--text", "Please name this"]);
    env.append("t1", &["--role", "assistant", "--text", "ok"]);
    // 1 MiB after the title: 16 pipes' worth.
    let loud = "cat > /dev/null; echo 'Loud name'; head -c 1048576 /dev/zero | tr '\\0' x; echo";
    let out = env
        .cmd()
        .args(["title", "t1", "--command", loud, "--timeout", "60"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Loud name\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.meta("t1")["title"], "Loud name");
    // The command ends, but a process it started keeps its stdout open.
    env.ok(&["init", "t2"]);
    env.append("t2", &["--text", "Please name this too"]);
    let held = "cat > /dev/null; echo 'Held name'; sleep 5 &";
    let out = env
        .cmd()
        .args(["title", "t2", "--command", held, "--timeout", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did not answer within 1s") && err.contains("title kept"),
        "{err} / {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(env.meta("t2")["title"], "Please name this too");
    // A timeout too large to count is none.
    let out = env
        .cmd()
        .args([
            "title",
            "t2",
            "--command",
            "echo 'Patient name'",
            "--timeout",
            "inf",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Patient name\n");
}

/// Processes whose command line holds `marker`.
fn running_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker) && !c.contains("sh -c"))
        .collect()
}

/// A session `t1` to title, and a sleep of a minute or two for its title
/// command, its length unique to this run (`base` apart from another
/// test's).
fn title_case(base: u32) -> (TestEnv, String) {
    let env = TestEnv::new();
    env.ok(&["init", "t1"]);
    env.append("t1", &["--text", "Please name this"]);
    let pid = std::process::id();
    (env, format!("{}.{pid}", base + pid % 50))
}

/// Whether the title command's `sleep {marker}` runs (not `title`, whose
/// arguments name it too).
fn sleeping(marker: &str) -> bool {
    running_with(marker).iter().any(|c| c.starts_with("sleep "))
}

/// Whether the sleep is gone within 5 s (a SIGKILL is delivered at once; a
/// moment for it to land).
fn sleep_gone(marker: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while sleeping(marker) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    !sleeping(marker)
}

/// A title command cut off at its timeout leaves nothing it started
/// running: neither what it waits on, nor what it left in the background
/// holding its output. The whole process group goes.
#[test]
fn a_title_command_past_its_timeout_leaves_nothing_running() {
    let (env, marker) = title_case(61);
    for cmd in [
        // Still running at the timeout, waiting on its own child.
        format!("cat > /dev/null; sleep {marker}; echo late"),
        // Ended, its child left behind holding the output.
        format!("cat > /dev/null; echo 'Held'; sleep {marker} &"),
    ] {
        let started = std::time::Instant::now();
        let out = env
            .cmd()
            .args(["title", "t1", "--command", &cmd, "--timeout", "0.5"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("did not answer within 0.5s"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        assert!(sleep_gone(&marker), "{cmd}: {:?}", running_with(&marker));
    }
    assert_eq!(env.meta("t1")["title"], "Please name this");
}

/// The title command runs in a process group of its own, out of the
/// terminal's reach: when `title` is interrupted or terminated, the group
/// goes with it. A signal `title` was started to ignore (`nohup`) stays
/// ignored, and the command is cut off at its timeout as usual.
#[test]
fn an_interrupted_title_takes_its_command_with_it() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let (env, marker) = title_case(111);
    let cmd = format!("cat > /dev/null; sleep {marker}; echo late");
    for (sig, ignored) in [
        (libc::SIGINT, false),
        (libc::SIGTERM, false),
        (libc::SIGHUP, false),
        (libc::SIGHUP, true),
    ] {
        let mut c = env.cmd();
        c.args(["title", "t1", "--command", &cmd, "--timeout", "3"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        // SAFETY: only signal() between fork and exec, which is
        // async-signal-safe. The test's own dispositions (a background
        // shell ignores SIGINT) are not the case under test.
        unsafe {
            c.pre_exec(move || {
                for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    libc::signal(s, libc::SIG_DFL);
                }
                if ignored {
                    libc::signal(sig, libc::SIG_IGN);
                }
                Ok(())
            });
        }
        let child = c.spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !sleeping(&marker) {
            assert!(
                std::time::Instant::now() < deadline,
                "the command never ran"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // SAFETY: a plain system call to our own child.
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if ignored {
            assert!(out.status.success(), "{sig}: {:?} {err}", out.status);
            assert!(err.contains("did not answer within 3s"), "{err}");
        } else {
            assert_eq!(out.status.signal(), Some(sig), "{err}");
        }
        assert!(
            sleep_gone(&marker),
            "signal {sig} (ignored: {ignored}): the command runs on"
        );
    }
    assert_eq!(env.meta("t1")["title"], "Please name this");
}

#[test]
fn an_append_folds_a_large_journal_and_list_reads_the_same_rows() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.ok(&["init", "s2"]);
    let journal = env.state().join("sessions/index.journal");
    // Many title changes, as hundreds of turns would leave (past the 64 KiB fold size).
    let mut rows = String::new();
    for i in 0..1500 {
        rows.push_str(&format!(
            "{{\"id\":\"s2\",\"title\":\"title {i}\",\"updated_at\":{}}}\n",
            1_800_000_000 + i
        ));
    }
    assert!(rows.len() > 64 * 1024, "{}", rows.len());
    std::fs::write(&journal, &rows).unwrap();
    let before = env.ok(&["list", "--json"]);
    env.append("s1", &["--text", "hello"]);
    // Folded: index.json holds the journal's rows, and the journal is small again.
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.state().join("sessions/index.json")).unwrap())
            .unwrap();
    assert_eq!(index["s2"]["title"], "title 1499");
    let left = std::fs::metadata(&journal).map(|m| m.len()).unwrap_or(0);
    assert!(left < 4096, "journal still {left} bytes");
    // The list is the same but for s1, which the append moved to the top.
    let after = env.ok(&["list", "--json"]);
    let s2 = |out: &str| {
        out.lines()
            .find(|l| l.contains("\"s2\""))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(s2(&before), s2(&after));
    assert!(s2(&after).contains("title 1499"), "{after}");
}

#[test]
fn the_listing_shows_pins_unread_and_channels_and_pads_by_characters() {
    let mut env = TestEnv::new();
    three(&mut env);
    env.ok(&["update", "old", "--pin"]);
    env.ok(&["update", "mid", "--unread", "--title", "Ünïcödé"]);
    // A channel session (as the Python store's gateway writes them) shows
    // its source as a prefix; rebuilt from meta.json.
    let meta_path = env.session_dir("new").join("meta.json");
    let mut meta = env.meta("new");
    meta["channel"] = "slack".into();
    meta["source"] = "slack".into();
    meta["status"] = "rünning-long".into();
    std::fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();
    std::fs::remove_file(env.state().join("sessions/index.json")).unwrap();
    let _ = std::fs::remove_file(env.state().join("sessions/index.journal"));
    let out = env.ok(&["list"]);
    assert_eq!(
        out,
        "new              2026-11-30 05:49  rünning-long [slack] hello new  — hello new\n\
         mid              2026-11-30 05:47  idle        ● Ünïcödé  — hello mid\n\
         old              2026-11-30 05:45  idle        📌 hello old  — hello old\n",
        "{out}"
    );
}

/// `index.json` read as a file (as the Python store reads it: no journal),
/// `list --json` and meta.json agree on `updated_at`, title and preview.
fn index_agrees(env: &TestEnv, id: &str, what: &str) {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.state().join("sessions/index.json")).unwrap())
            .unwrap();
    let row = &index[id];
    let meta = env.meta(id);
    let listed: serde_json::Value = env
        .ok(&["--json", "list", "--include-archived"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["data"]["id"] == id)
        .unwrap_or_else(|| panic!("{what}: {id} not listed"));
    for key in ["updated_at", "title", "archived", "pinned"] {
        // A flag meta.json does not hold yet is false.
        let want = match &meta[key] {
            serde_json::Value::Null if key != "updated_at" && key != "title" => false.into(),
            v => v.clone(),
        };
        assert_eq!(row[key], want, "{what}: index.json {key}");
        assert_eq!(listed["data"][key], row[key], "{what}: list {key}");
    }
    assert_eq!(listed["data"]["preview"], row["preview"], "{what}: preview");
}

#[test]
fn index_json_is_current_after_the_last_command_of_each_kind() {
    let mut env = TestEnv::new();
    env.now = None;
    // Create.
    env.ok(&["init", "s1", "--title", "Made"]);
    index_agrees(&env, "s1", "init");
    env.append("s2", &["--create", "--text", "made by an append"]);
    index_agrees(&env, "s2", "append --create");
    // A turn: its title (phase 1), preview and time.
    env.turn("s2", "a second question", &["read"]);
    index_agrees(&env, "s2", "turn");
    // A bare append may leave its row in the journal, until its turn ends.
    env.append("s1", &["--text", "the first question of s1"]);
    env.append("s1", &["--role", "assistant", "--text", "an answer"]);
    env.ok(&["commit-turn", "s1"]);
    index_agrees(&env, "s1", "commit-turn after bare appends");
    // Title (phase 2, from a command), flags.
    env.ok(&["title", "s2", "--command", "echo Better Title"]);
    index_agrees(&env, "s2", "title");
    assert_eq!(env.meta("s2")["title"], "Better Title");
    env.ok(&["update", "s1", "--title", "Renamed"]);
    index_agrees(&env, "s1", "update --title");
    env.ok(&["update", "s1", "--pin"]);
    index_agrees(&env, "s1", "update --pin");
    env.ok(&["archive", "s1"]);
    index_agrees(&env, "s1", "archive");
    env.ok(&["unarchive", "s1"]);
    index_agrees(&env, "s1", "unarchive");
    // A turn with an attachment.
    let file = env.tmp.path().join("notes.txt");
    std::fs::write(&file, "attached").unwrap();
    env.append(
        "s2",
        &["--text", "see the file", "--attach", file.to_str().unwrap()],
    );
    env.append("s2", &["--role", "assistant", "--text", "seen"]);
    env.ok(&["commit-turn", "s2"]);
    index_agrees(&env, "s2", "attachment turn");
    // Begin-turn, then a turn by batch (index.json current when it waits).
    env.ok(&["begin-turn", "s2"]);
    index_agrees(&env, "s2", "begin-turn");
    env.batch(&[
        vec![
            "append".into(),
            "s2".into(),
            "--text".into(),
            "by batch".into(),
        ],
        vec![
            "append".into(),
            "s2".into(),
            "--role".into(),
            "assistant".into(),
            "--text".into(),
            "ok".into(),
        ],
        vec!["commit-turn".into(), "s2".into()],
    ]);
    index_agrees(&env, "s2", "batch");
    // An import and a hook call.
    let dir = env.tmp.path().join("claude");
    let full = crate::import::Transcript::two_turns();
    let path = full.write(&dir, "");
    env.ok(&["import", "claude-code", path.to_str().unwrap()]);
    let imported = env
        .ok(&["list", "--include-archived"])
        .lines()
        .find_map(|l| {
            l.split_whitespace()
                .find(|w| w.starts_with("claude-"))
                .map(str::to_string)
        })
        .expect("the imported session is listed");
    index_agrees(&env, &imported, "import");
    crate::import::hook_with(
        &env,
        &["hook", "claude-code"],
        &serde_json::json!({"session_id": imported.trim_start_matches("claude-"),
            "transcript_path": path, "hook_event_name": "SessionEnd"}),
    );
    index_agrees(&env, &imported, "hook SessionEnd");
    // Delete: no row left.
    env.ok(&["delete", "s1", "--yes"]);
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.state().join("sessions/index.json")).unwrap())
            .unwrap();
    assert!(index.get("s1").is_none(), "a deleted session's row");
    env.ok(&["verify", "--all"]);
}

/// The registry held by another process past the wait when a turn ends:
/// the turn is committed (exit 0), a warning says index.json waits, and the
/// next command that writes the registry brings it up to date.
#[test]
fn a_turn_end_does_not_wait_long_for_a_held_registry() {
    let env = TestEnv::new();
    env.append("s1", &["--create", "--text", "first"]);
    env.append("s1", &["--role", "assistant", "--text", "ok"]);
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(env.state().join("sessions/.registry.lock"))
        .unwrap();
    lock.lock().unwrap();
    let out = env.run(&["--lock-timeout", "0.2", "commit-turn", "s1"]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("index.json was not brought up to date"),
        "{err}"
    );
    drop(lock);
    let v = env.run(&["verify", "--all"]);
    assert!(String::from_utf8_lossy(&v.stdout).contains("index_row_stale"));
    env.ok(&["update", "s1", "--pin"]);
    index_agrees(&env, "s1", "the next registry writer");
    env.ok(&["verify", "--all"]);
}
