//! Fault injection (issue 9): a crash at every write step of each command
//! leaves old-or-new files, never torn ones, and `recover` + `verify --fix`
//! make the state dir verify clean.

use crate::env::TestEnv;

/// Every JSON file of the state dir parses (temp files aside).
fn nothing_torn(env: &TestEnv, what: &str) {
    for e in walkdir::WalkDir::new(env.state())
        .into_iter()
        .filter_map(|e| e.ok())
    {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy();
        if name.starts_with(".gs-tmp")
            || p.components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with(".gs-tmp"))
        {
            continue;
        }
        if name.ends_with(".json") && !p.to_string_lossy().contains("/.git/") {
            let bytes = std::fs::read(p).unwrap();
            assert!(
                serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                "{what}: {} is torn",
                p.display()
            );
        }
    }
}

fn crash_then_repair(env: &TestEnv, at: &str, args: &[&str]) {
    env.crash_at(at, args);
    let what = format!("{args:?} crashed at {at}");
    nothing_torn(env, &what);
    env.ok(&["recover", "--older-than", "1000d"]);
    let _ = env.run(&["verify", "--all", "--fix"]);
    let v = env.run(&["verify", "--all"]);
    assert!(
        v.status.success(),
        "{what}: still not clean after verify --fix:\n{}",
        String::from_utf8_lossy(&v.stdout)
    );
}

fn session_with_a_turn() -> TestEnv {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &["read"]);
    env
}

#[test]
fn append() {
    for at in [
        "before-rename",
        "after-rename",
        "append-after-node",
        "before-rename#2",
        "after-rename#2",
        "append-before-registry",
    ] {
        let env = session_with_a_turn();
        crash_then_repair(&env, at, &["append", "s1", "--text", "two"]);
        // The node is there or not; if it is, it is committed now.
        let files = env.history_files("s1");
        assert!(files.len() == 3 || files.len() == 4, "{at}: {files:?}");
        env.assert_clean("s1");
    }
}

#[test]
fn append_create() {
    for at in ["create-before-publish", "before-rename", "after-rename"] {
        let env = TestEnv::new();
        env.ok(&["init", "other"]);
        crash_then_repair(
            &env,
            at,
            &["append", "fresh", "--create", "--text", "hello"],
        );
        // Either no session at all (no empty shell), or the whole one.
        let dir = env.session_dir("fresh");
        if dir.exists() {
            assert_eq!(env.history_files("fresh").len(), 1, "{at}");
        }
    }
}

#[test]
fn commit_turn() {
    for at in [
        "before-rename",
        "after-rename",
        "commit-before-sync",
        "commit-before-ref",
        "commit-before-index",
        "index-locked",
        "index-replaced",
        "object-written",
    ] {
        let env = session_with_a_turn();
        env.append("s1", &["--text", "two"]);
        env.append("s1", &["--role", "assistant", "--text", "answer"]);
        crash_then_repair(&env, at, &["commit-turn", "s1", "--status", "done"]);
        let subjects = env.git("s1", &["log", "--all", "--format=%s"]);
        assert_eq!(
            subjects
                .lines()
                .filter(|s| s.starts_with("turn 2:"))
                .count(),
            1,
            "{at}: one commit for turn 2:\n{subjects}"
        );
        env.assert_clean("s1");
    }
}

#[test]
fn update_and_archive() {
    for at in ["before-rename", "after-rename", "update-before-registry"] {
        let env = session_with_a_turn();
        crash_then_repair(&env, at, &["update", "s1", "--title", "New title", "--pin"]);
        let title = env.meta("s1")["title"].clone();
        assert!(title == "one" || title == "New title", "{at}: {title}");
    }
}

#[test]
fn delete() {
    let env = session_with_a_turn();
    env.ok(&["init", "keep"]);
    crash_then_repair(&env, "delete-after-rename", &["delete", "s1", "--yes"]);
    assert!(!env.session_dir("s1").exists());
    let list = env.ok(&["list"]);
    assert!(!list.contains("s1") && list.contains("keep"), "{list}");
}

/// A delete killed after it moved the session aside, with a lock file a
/// waiting writer made again where the session was (a directory with
/// neither meta.json nor history/): `delete` run again, `recover`, or
/// `verify --all --fix` finishes it: nothing of the session is left (no
/// temp, no directory, no row, no location, no binding), the other
/// sessions are untouched, and `verify --all` is clean. A user's directory
/// of that name is never removed.
#[test]
fn a_delete_cut_short_is_finished_by_delete_recover_or_verify() {
    for how in ["delete", "recover", "verify"] {
        let env = TestEnv::new();
        let (_, pid) = env.project("app", &[]);
        env.ok(&["init", "s1", "--project", &pid]);
        env.turn("s1", "one", &["read"]);
        env.ok(&["init", "keep"]);
        env.turn("keep", "kept", &[]);
        let kept = crate::env::tree_bytes(&env.session_dir("keep"));
        env.crash_at("delete-after-rename", &["delete", "s1", "--yes"]);
        let dir = env.state().join("sessions/projects").join(&pid).join("s1");
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/git-session.lock"), "").unwrap();
        let out = match how {
            "delete" => env.ok(&["delete", "s1", "--yes"]),
            "recover" => env.ok(&["recover", "--older-than", "1000d"]),
            _ => {
                let _ = env.run(&["verify", "--all", "--fix"]);
                String::new()
            }
        };
        if how == "delete" {
            assert!(
                out.contains("finished a delete that was cut short"),
                "{out}"
            );
        }
        let parent = dir.parent().unwrap();
        let left: Vec<String> = std::fs::read_dir(parent)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.is_empty(), "{how}: {left:?}");
        assert!(!env.ok(&["list"]).contains("s1"), "{how}");
        let index = std::fs::read_to_string(env.state().join("sessions/index.json")).unwrap();
        assert!(!index.contains("\"s1\""), "{how}: {index}");
        // The project's session count (its path, a temp dir, may hold "s1").
        let shown: serde_json::Value =
            serde_json::from_str(env.ok(&["--json", "project", "show", &pid]).trim()).unwrap();
        assert_eq!(shown["data"]["sessions"], 0, "{how}");
        assert!(
            crate::env::tree_bytes(&env.session_dir("keep")) == kept,
            "{how}"
        );
        let v = env.run(&["verify", "--all"]);
        assert!(
            v.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&v.stdout)
        );
    }
    // A directory of a user's where the session was is not taken for one.
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.crash_at("delete-after-rename", &["delete", "s1", "--yes"]);
    std::fs::create_dir_all(env.session_dir("s1")).unwrap();
    std::fs::write(env.session_dir("s1").join("notes.txt"), "mine").unwrap();
    env.ok(&["delete", "s1", "--yes"]);
    assert_eq!(
        std::fs::read_to_string(env.session_dir("s1").join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn backfill() {
    for at in [
        "before-rename",
        "before-rename#2",
        "backfill-before-publish",
        "commit-before-sync",
        "commit-before-ref",
        "commit-before-index",
        "index-locked",
        "index-replaced",
    ] {
        let env = session_with_a_turn();
        env.append("s1", &["--text", "two"]);
        std::fs::remove_dir_all(env.session_dir("s1").join(".git")).unwrap();
        crash_then_repair(&env, at, &["backfill", "s1"]);
        env.assert_clean("s1");
        assert_eq!(
            env.git("s1", &["log", "--format=%s"]),
            "turn 2: two\nturn 1: one\nsession init\n",
            "{at}"
        );
    }
}

#[test]
fn relocate() {
    for at in [
        "before-rename",
        "relocate-after-project",
        "before-rename#2",
        "append-after-node",
    ] {
        let env = TestEnv::new();
        let dir = env.tmp.path().join("proj");
        std::fs::create_dir_all(&dir).unwrap();
        let pid = env
            .ok(&["project", "add", dir.to_str().unwrap()])
            .trim()
            .to_string();
        env.ok(&["init", "s1", "--project", &pid]);
        let moved = env.tmp.path().join("moved");
        std::fs::rename(&dir, &moved).unwrap();
        env.crash_at(at, &["relocate", &pid, moved.to_str().unwrap()]);
        nothing_torn(&env, at);
        env.ok(&["recover", "--older-than", "1000d"]);
        let _ = env.run(&["verify", "--all", "--fix"]);
        // What is left needs the person's command: the project's path.
        let v = env.run(&["verify", "--all"]);
        let said = String::from_utf8_lossy(&v.stdout).into_owned();
        assert!(
            v.status.success()
                || said
                    .lines()
                    .filter(|l| !l.starts_with(' '))
                    .all(|l| l.starts_with("project_path_missing")),
            "{at}: {said}"
        );
        // Relocating again completes it: same id, the new path.
        env.ok(&["relocate", &pid, moved.to_str().unwrap()]);
        let v = env.run(&["verify", "--all"]);
        assert!(
            v.status.success(),
            "{at}: {}",
            String::from_utf8_lossy(&v.stdout)
        );
        let p: serde_json::Value =
            serde_json::from_str(env.ok(&["project", "show", &pid, "--json"]).trim()).unwrap();
        assert_eq!(p["data"]["path_missing"], false, "{at}");
    }
}

#[test]
fn a_stale_index_lock_of_ours_is_cleared_but_gits_is_respected() {
    let env = session_with_a_turn();
    let lock = env.session_dir("s1").join(".git/index.lock");
    // Left by a killed git-session (our mark): the next commit proceeds.
    std::fs::write(&lock, "git-session index lock\n").unwrap();
    env.turn("s1", "two", &[]);
    assert!(!lock.exists());
    env.assert_clean("s1");
    // git's own lock (index data): waited for, never deleted.
    std::fs::write(&lock, b"DIRC\x00\x00\x00\x02").unwrap();
    env.append("s1", &["--text", "three"]);
    let err = env.fails(&["commit-turn", "s1"], 128);
    assert!(err.contains("index lock"), "{err}");
    assert!(lock.exists(), "git's lock is left alone");
    std::fs::remove_file(&lock).unwrap();
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
}

#[test]
fn a_crash_before_the_index_then_a_checkout_commits_nothing_twice() {
    let env = session_with_a_turn();
    env.turn("s1", "two", &[]);
    env.append("s1", &["--text", "three"]);
    env.crash_at("commit-before-index", &["commit-turn", "s1"]);
    // The view moves away before the next commit.
    env.ok(&["checkout", "s1", "1"]);
    env.append("s1", &["--text", "a fork from turn one"]);
    env.ok(&["commit-turn", "s1"]);
    assert_eq!(env.ok(&["verify", "s1"]), "", "no node in two commits");
    let subjects = env.git("s1", &["log", "--all", "--format=%s"]);
    assert_eq!(
        subjects
            .lines()
            .filter(|s| s.starts_with("turn 3: three"))
            .count(),
        1,
        "{subjects}"
    );
}

#[test]
fn files_changed_while_detached_go_on_the_last_written_branch() {
    let env = session_with_a_turn();
    env.turn("s1", "two", &[]);
    env.ok(&["checkout", "s1", "1"]);
    let detached = env.git("s1", &["rev-parse", "HEAD"]);
    for title in ["first title", "second title"] {
        env.ok(&["update", "s1", "--title", title]);
        env.ok(&["commit-turn", "s1"]);
    }
    assert_eq!(
        env.git("s1", &["rev-parse", "HEAD"]),
        detached,
        "the view stays"
    );
    assert_eq!(
        env.git("s1", &["log", "-2", "--format=%s", "main"]),
        "session: update files\nsession: update files\n"
    );
    assert!(!env.git("s1", &["branch"]).contains("retry-\n"));
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

#[test]
fn a_ref_lock_left_by_a_killed_commit_does_not_block_the_next_one() {
    let env = session_with_a_turn();
    let lock = env.session_dir("s1").join(".git/refs/heads/main.lock");
    std::fs::write(&lock, "0000000000000000000000000000000000000000\n").unwrap();
    crate::env::age(&lock, 5);
    env.turn("s1", "two", &[]);
    assert!(!lock.exists());
    env.assert_clean("s1");
}

#[test]
fn a_lock_whose_holder_died_never_blocks_and_a_live_one_is_never_broken() {
    let env = session_with_a_turn();
    let lock = env.session_dir("s1").join(".git/git-session.lock");
    // A holder that takes the lock and is then killed with SIGKILL.
    let mut holder = std::process::Command::new("python3")
        .arg("-c")
        .arg("import fcntl,sys,time; f=open(sys.argv[1],'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)")
        .arg(&lock)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "held");
    // Alive: refused at once, and the lock file stays.
    env.fails(&["append", "s1", "--text", "x", "--no-wait"], 75);
    holder.kill().unwrap();
    holder.wait().unwrap();
    // Dead: the lock went with it.
    env.append("s1", &["--text", "after the holder died", "--no-wait"]);
    assert!(lock.exists(), "lock files are never deleted");
}

/// A small tmpfs mounted over the state dir, unmounted on drop. `None` where
/// mounting is not allowed (not root, no tmpfs): the caller skips, saying so.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(at: &std::path::Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(at.to_path_buf()))
    }

    /// Fill what is left with one file; returns its path.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let p = self.0.join("filler");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .unwrap();
        for chunk in [65536, 4096, 512, 1] {
            while f.write_all(&vec![0u8; chunk]).is_ok() {}
        }
        p
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

fn no_temp_files(env: &TestEnv, what: &str) {
    for e in walkdir::WalkDir::new(env.state())
        .into_iter()
        .filter_map(|e| e.ok())
    {
        let name = e.file_name().to_string_lossy();
        assert!(
            !name.starts_with(".gs-tmp") && !name.ends_with(".tmp"),
            "{what}: {} left behind",
            e.path().display()
        );
    }
}

#[test]
fn a_full_disk_fails_cleanly_and_the_next_run_after_freeing_space_completes() {
    let env = TestEnv::new();
    let Some(disk) = SmallDisk::mount(&env.state(), "1m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "first"]);
    env.ok(&["commit-turn", "s1"]);
    let head = env.git("s1", &["rev-parse", "HEAD"]);

    // append on a full disk: refused with the OS's reason, nothing written.
    let filler = disk.fill();
    let before = {
        let mut s = crate::env::tree_bytes(&env.state());
        s.0.remove(std::path::Path::new("filler"));
        s
    };
    let out = env.run(&["append", "s1", "--text", &"x".repeat(20_000)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("free some disk space"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    no_temp_files(&env, "append");
    let mut after = crate::env::tree_bytes(&env.state());
    after.0.remove(std::path::Path::new("filler"));
    assert_eq!(before, after, "a refused append changes nothing");

    // commit-turn on a full disk: fails, the ref does not move, the repo
    // stays sound, and the node waits for the next commit.
    std::fs::remove_file(&filler).unwrap();
    env.append("s1", &["--text", &"y".repeat(20_000)]);
    let filler = disk.fill();
    let out = env.run(&["commit-turn", "s1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "commit-turn on a full disk: {err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]), head);
    no_temp_files(&env, "commit-turn");

    std::fs::remove_file(&filler).unwrap();
    env.ok(&["verify", "--fix", "s1"]);
    let fsck = env.git_in(&env.session_dir("s1"), &["fsck", "--strict"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert_eq!(env.git("s1", &["status", "--porcelain"]), "");
    assert_eq!(env.git("s1", &["rev-list", "--count", "HEAD"]), "3\n");
    assert_eq!(env.ok(&["verify", "s1"]), "");
    drop(disk);
}

/// `delete` of a 300-turn session killed (SIGKILL) at points spread over
/// its run, then `delete` again: the session is gone, no directory or temp
/// of it is left, the other session is untouched, `verify --all` is clean.
#[test]
fn a_delete_killed_anywhere_is_finished_by_delete_again() {
    use std::process::Stdio;
    let template = TestEnv::new();
    template.ok(&["init", "keep"]);
    template.turn("keep", "kept", &[]);
    let mut requests = Vec::new();
    for t in 0..300 {
        let text = format!("question {t}");
        requests.push(vec![
            "append".into(),
            "s1".into(),
            "--create".into(),
            "--text".into(),
            text,
        ]);
        requests.push(vec![
            "append".into(),
            "s1".into(),
            "--role".into(),
            "assistant".into(),
            "--text".into(),
            format!("answer {t}"),
        ]);
        requests.push(vec!["commit-turn".into(), "s1".into()]);
    }
    template.batch(&requests);
    let kept = crate::env::tree_bytes(&template.session_dir("keep"));
    let copy = |env: &TestEnv| env.copy_state_from(&template);
    // How long one delete takes here, to spread the kills over it.
    let whole = {
        let env = TestEnv::new();
        copy(&env);
        let start = std::time::Instant::now();
        env.ok(&["delete", "s1", "--yes"]);
        start.elapsed()
    };
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut cut_short = 0;
    for trial in 0..10u64 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let at = whole.mul_f64(((seed >> 33) % 1000) as f64 / 1000.0 * 1.2);
        let env = TestEnv::new();
        copy(&env);
        let mut child = env
            .cmd()
            .args(["delete", "s1", "--yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        let _ = child.kill();
        let _ = child.wait();
        // Killed after it moved the session aside, before it was done.
        cut_short += std::fs::read_dir(env.state().join("sessions"))
            .unwrap()
            .any(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".gs-tmp-delete-s1-")
            }) as usize;
        let again = env.run(&["delete", "s1", "--yes"]);
        let said = String::from_utf8_lossy(&again.stderr);
        assert!(
            again.status.success() || said.contains("session::not_found"),
            "trial {trial} (kill after {at:?}): {said}"
        );
        let left: Vec<String> = std::fs::read_dir(env.state().join("sessions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("s1"))
            .collect();
        assert!(
            left.is_empty(),
            "trial {trial} (kill after {at:?}): {left:?}"
        );
        let index = std::fs::read_to_string(env.state().join("sessions/index.json")).unwrap();
        assert!(!index.contains("\"s1\""), "trial {trial}: {index}");
        assert!(
            crate::env::tree_bytes(&env.session_dir("keep")) == kept,
            "trial {trial}"
        );
        let v = env.run(&["verify", "--all"]);
        assert!(
            v.status.success(),
            "trial {trial} (kill after {at:?}): {}",
            String::from_utf8_lossy(&v.stdout)
        );
    }
    assert!(cut_short > 0, "no kill landed inside a delete ({whole:?})");
    // And at each registry file it writes (killed before a temp file took
    // its place): the second delete leaves no temp either.
    for n in 1..=4 {
        let env = TestEnv::new();
        copy(&env);
        let at = format!("before-rename#{n}");
        let out = env
            .cmd()
            .env("GIT_SESSION_CRASH_AT", &at)
            .args(["delete", "s1", "--yes"])
            .output()
            .unwrap();
        if out.status.code().is_some() {
            break; // fewer registry writes than n
        }
        let again = env.run(&["delete", "s1", "--yes"]);
        let said = String::from_utf8_lossy(&again.stderr);
        assert!(
            again.status.success() || said.contains("session::not_found"),
            "{at}: {said}"
        );
        let v = env.run(&["verify", "--all"]);
        assert!(
            v.status.success(),
            "{at}: {}",
            String::from_utf8_lossy(&v.stdout)
        );
        assert!(
            crate::env::tree_bytes(&env.session_dir("keep")) == kept,
            "{at}"
        );
    }
}

/// `migrate --node-names python` on a session with a retry branch: one
/// commit per branch, the same blobs; killed after its links or after its
/// refs moved, `verify` names one finding and `verify --fix` (or the
/// migrate again) finishes it.
#[test]
fn renaming_to_the_python_naming_is_one_commit_a_branch_and_survives_a_kill() {
    for at in [None, Some("rename-after-links"), Some("rename-after-refs")] {
        for finish in ["verify", "migrate"] {
            let env = TestEnv::new();
            env.ok(&["init", "s1"]);
            env.turn("s1", "one", &["read"]);
            env.turn("s1", "two", &[]);
            env.ok(&["checkout", "s1", "1"]);
            env.turn("s1", "two again", &[]);
            let blobs = |rev: &str| env.history_blobs("s1", rev);
            let branches: Vec<String> = env
                .git(
                    "s1",
                    &["for-each-ref", "--format=%(refname:short)", "refs/heads"],
                )
                .lines()
                .map(str::to_string)
                .collect();
            assert_eq!(branches.len(), 2);
            let before: Vec<Vec<String>> = branches.iter().map(|b| blobs(b)).collect();
            match at {
                None => {
                    let out = env.ok(&["migrate", "--node-names", "python", "--dry-run"]);
                    assert!(out.contains("would rename s1: 7 node file(s)"), "{out}");
                    assert!(env.history_files("s1")[0].starts_with("000001-"));
                    let out = env.ok(&["migrate", "--node-names", "python"]);
                    assert!(out.contains("in 2 commits"), "{out}");
                }
                Some(at) => {
                    env.crash_at(at, &["migrate", "--node-names", "python"]);
                    let v = env.run(&["verify", "--all"]);
                    let said = String::from_utf8_lossy(&v.stdout);
                    assert_eq!(v.status.code(), Some(1), "{at}: {said}");
                    assert_eq!(
                        said.lines().filter(|l| l.starts_with("s1: ")).count(),
                        1,
                        "{at}: {said}"
                    );
                    assert!(said.contains("mixed_node_names"), "{at}: {said}");
                    if finish == "verify" {
                        env.ok(&["verify", "--all", "--fix"]);
                    } else {
                        env.ok(&["migrate", "--node-names", "python", "--session", "s1"]);
                    }
                }
            }
            for (b, was) in branches.iter().zip(&before) {
                assert_eq!(&blobs(b), was, "{at:?}: {b}");
                assert_eq!(
                    env.git("s1", &["log", "-1", "--format=%s", b]).trim(),
                    "session: node files named as the Python store names them"
                );
            }
            let files = env.history_files("s1");
            assert_eq!(files.len(), 7);
            assert!(files.iter().all(|f| &f[4..5] == "-"), "{at:?}: {files:?}");
            env.ok(&["verify", "--all"]);
            env.assert_clean("s1");
            // Named so already: nothing more to do.
            let out = env.ok(&["migrate", "--node-names", "python"]);
            assert!(!out.contains("renamed s1"), "{out}");
            if at.is_none() {
                break;
            }
        }
    }
}

/// One node under both namings with different contents (the Python store
/// rewrote a layout-named node under its own name): the rename refuses
/// before it links anything, and no commit holds the node twice.
#[test]
fn a_node_rewritten_under_the_other_name_is_refused_not_committed_twice() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.turn("s1", "two", &[]);
    let files = env.history_files("s1");
    let layout = &files[1]; // 000002-a-<id>.json
    let id = &layout["000002-a-".len()..];
    let history = env.session_dir("s1").join("history");
    let mut node: serde_json::Value =
        serde_json::from_slice(&std::fs::read(history.join(layout)).unwrap()).unwrap();
    node["metadata"]["project_commit"] = "abc".into();
    std::fs::write(history.join(format!("0002-l-{id}")), node.to_string()).unwrap();
    let before = env.history_files("s1");
    let out = env.run(&["migrate", "--node-names", "python"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rename::conflict"));
    assert_eq!(env.history_files("s1"), before, "nothing linked");
    env.append("s1", &["--text", "three"]);
    let out = env.run(&["commit-turn", "s1"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mirror::node_named_twice"));
    assert_eq!(
        env.git("s1", &["ls-tree", "--name-only", "HEAD", "history/"])
            .lines()
            .filter(|l| l.contains(id))
            .count(),
        1
    );
    // Keeping one copy (here the later writer's, renamed as the layout
    // names it) clears it.
    std::fs::rename(history.join(format!("0002-l-{id}")), history.join(layout)).unwrap();
    env.ok(&["commit-turn", "s1"]);
    env.ok(&["verify", "--all"]);
}

/// After a rename, `checkout` goes back and forth as before: a turn's
/// latest commit is the rename (it carries the turn), `checkout S main`
/// and `checkout S 2` put HEAD back on the branch, and the next turn goes
/// on there. On an earlier turn (HEAD detached) the rename is refused
/// before it touches anything.
#[test]
fn checkout_after_a_rename_and_a_rename_on_an_earlier_turn() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.turn("s1", "two", &[]);
    env.ok(&["checkout", "s1", "1"]);
    let before = env.history_files("s1");
    let out = env.run(&["migrate", "--node-names", "python", "--session", "s1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rename::detached_head"));
    assert_eq!(env.history_files("s1"), before);
    env.ok(&["checkout", "s1", "main"]);
    env.ok(&["migrate", "--node-names", "python"]);
    for target in ["main", "2", "next"] {
        env.ok(&["checkout", "s1", "1"]);
        env.ok(&["checkout", "s1", target]);
        assert_eq!(
            env.git("s1", &["symbolic-ref", "HEAD"]).trim(),
            "refs/heads/main",
            "{target}"
        );
        env.assert_clean("s1");
    }
    env.turn("s1", "three", &[]);
    assert_eq!(env.ok(&["branch", "s1"]).lines().count(), 1);
    assert!(env.history_files("s1").iter().all(|f| &f[4..5] == "-"));
    env.ok(&["verify", "--all"]);
    env.assert_clean("s1");
}
