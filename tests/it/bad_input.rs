//! SPEC §6 for the core commands: a clear diagnostic, a non-zero exit, and
//! nothing on disk changed.

use crate::env::{TestEnv, tree_bytes};

/// A session with one committed turn and one pending node.
fn setup() -> TestEnv {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.append("s1", &["--text", "pending", "--id", "p1"]);
    // Take the lock once so its file exists before the snapshots.
    env.ok(&["log", "s1"]);
    env
}

/// Run `args`, expect exit `code` with `needle` in the diagnostic, and no
/// change anywhere in the state dir.
fn refused(env: &TestEnv, args: &[&str], code: i32, needle: &str) {
    let before = tree_bytes(&env.state());
    let err = env.fails(args, code);
    assert!(
        err.contains(needle),
        "{args:?}: diagnostic lacks {needle:?}:\n{err}"
    );
    assert!(
        err.contains("help:") || code == 2,
        "{args:?}: no help line:\n{err}"
    );
    assert_eq!(
        before,
        tree_bytes(&env.state()),
        "{args:?} changed the state dir"
    );
}

#[test]
fn invalid_ids_are_usage_errors() {
    let env = setup();
    // Starting with `-`, it is an unknown flag to the parser: a usage error too.
    refused(&env, &["init", "-x"], 2, "unexpected argument");
    refused(&env, &["init", "--", "-x"], 2, "invalid session id");
    for id in [
        "../x",
        "..",
        ".hidden",
        "a/b",
        "projects",
        "",
        "white space",
    ] {
        refused(&env, &["init", id], 2, "invalid session id");
        refused(
            &env,
            &["append", id, "--text", "x"],
            2,
            "invalid session id",
        );
    }
    refused(
        &env,
        &["append", "s1", "--id", "../../etc", "--text", "x"],
        2,
        "invalid node id",
    );
    refused(
        &env,
        &["append", "s1", "--id", "a/b", "--text", "x"],
        2,
        "invalid node id",
    );
}

/// The files kept beside the session directories in `sessions/` are no
/// session ids: a session made under one of their names took the
/// registry's place, and every later command failed reading it. On a file
/// system that ignores case (macOS's), `Index.json` is the same name.
#[test]
fn ids_that_name_the_registry_files_are_refused() {
    let env = setup();
    for id in [
        "index.json",
        "index.journal",
        "locations.json",
        "Index.JSON",
        "LOCATIONS.json",
        "Projects",
    ] {
        refused(&env, &["init", id], 2, "invalid session id");
        refused(
            &env,
            &["append", id, "--create", "--text", "x"],
            2,
            "invalid session id",
        );
    }
    // Names that only start or end like them are ids like any other.
    env.ok(&["init", "index.json2"]);
    env.ok(&["init", "my-locations.json"]);
    let list = env.ok(&["list"]);
    assert!(
        list.contains("index.json2") && list.contains("my-locations.json"),
        "{list}"
    );
}

/// `init --workdir` stored a lossy spelling of a path that is not UTF-8 in
/// meta.json's `work_dir`: another directory than the agent's. It is now
/// a usage error, nothing made.
#[test]
fn a_workdir_that_is_not_utf8_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let env = setup();
    let before = tree_bytes(&env.state());
    let mut c = env.cmd();
    c.args(["init", "s2", "--workdir"])
        .arg(std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9"));
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(tree_bytes(&env.state()), before);
    env.ok(&["init", "s2", "--workdir", "/tmp/caf\u{e9}"]);
    assert_eq!(env.meta("s2")["work_dir"], "/tmp/caf\u{e9}");
}

#[test]
fn unknown_session() {
    let env = setup();
    refused(
        &env,
        &["append", "nope", "--text", "x"],
        1,
        "no session `nope`",
    );
    refused(&env, &["commit-turn", "nope"], 1, "no session `nope`");
    refused(&env, &["log", "nope"], 1, "no session `nope`");
    refused(&env, &["show", "nope"], 1, "no session `nope`");
}

#[test]
fn unknown_predecessor_or_caller_and_duplicate_ids() {
    let env = setup();
    refused(
        &env,
        &["append", "s1", "--text", "x", "--predecessor", "ghost"],
        1,
        "predecessor `ghost`",
    );
    refused(
        &env,
        &["append", "s1", "--role", "tool", "--caller", "ghost"],
        1,
        "caller `ghost`",
    );
    refused(
        &env,
        &["append", "s1", "--text", "x", "--id", "p1"],
        1,
        "node `p1` already exists",
    );
}

#[test]
fn a_second_root_user_node_needs_a_predecessor() {
    let env = setup();
    let before = tree_bytes(&env.state());
    let mut c = env.cmd();
    c.args(["append", "s1", "--json-node"])
        .stdin(std::process::Stdio::piped());
    let mut child = c.stderr(std::process::Stdio::piped()).spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"role":"user","output":"x","predecessor":null}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a predecessor"));
    assert_eq!(before, tree_bytes(&env.state()));
}

#[test]
fn unparsable_json_node() {
    let env = setup();
    for input in [
        &b"{\"role\": \"user\", \"output\": "[..],
        b"[1,2]",
        b"{\"role\": \"wizard\"}",
        b"{\"id\": 5}",
        b"\xff\xfe",
    ] {
        let before = tree_bytes(&env.state());
        let mut child = env
            .cmd()
            .args(["append", "s1", "--json-node"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{:?}",
            String::from_utf8_lossy(input)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("json-node")
                || String::from_utf8_lossy(&out.stderr).contains("UTF-8")
        );
        assert_eq!(before, tree_bytes(&env.state()));
    }
}

#[test]
fn a_node_file_that_does_not_parse_blocks_the_commit_and_changes_nothing() {
    let env = setup();
    let dir = env.session_dir("s1");
    std::fs::write(
        dir.join("history/000009-u-bad.json"),
        b"{\"id\":\"bad\",\"seq\":",
    )
    .unwrap();
    refused(&env, &["commit-turn", "s1"], 128, "000009-u-bad.json");
    // A name that disagrees with its payload, too.
    std::fs::write(
        dir.join("history/000009-u-bad.json"),
        br#"{"id":"other","seq":9,"role":"user"}"#,
    )
    .unwrap();
    refused(&env, &["commit-turn", "s1"], 128, "the file name says");
    // Readers skip it with a warning.
    let out = env.run(&["show", "s1"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: skipping"));
    // Moved aside, the commit goes through.
    std::fs::remove_file(dir.join("history/000009-u-bad.json")).unwrap();
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
}

#[test]
fn a_busy_lock_exits_75() {
    let env = setup();
    let lock = env.hold_lock(&env.session_dir("s1"));
    refused(
        &env,
        &["append", "s1", "--text", "x", "--no-wait"],
        75,
        "is locked by another process",
    );
    refused(&env, &["commit-turn", "s1", "--no-wait"], 75, "is locked");
    let started = std::time::Instant::now();
    let err = env.fails(
        &["append", "s1", "--text", "x", "--lock-timeout", "0.3"],
        75,
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    assert!(err.contains("waiting for the lock"), "{err}");
    lock.unlock().unwrap();
    env.append("s1", &["--text", "now it works", "--lock-timeout", "0.3"]);
}

#[test]
fn corrupt_meta_missing_git_and_symlinked_sessions() {
    let env = setup();
    let dir = env.session_dir("s1");
    std::fs::write(dir.join("meta.json"), b"{\"id\": \"s1\", ").unwrap();
    refused(&env, &["append", "s1", "--text", "x"], 128, "meta.json");
    refused(&env, &["commit-turn", "s1"], 128, "meta.json");
    std::fs::write(dir.join("meta.json"), b"[\"not an object\"]").unwrap();
    refused(&env, &["append", "s1", "--text", "x"], 128, "JSON object");

    let env = setup();
    let dir = env.session_dir("s1");
    std::fs::rename(dir.join(".git"), env.tmp.path().join("moved-git")).unwrap();
    refused(&env, &["commit-turn", "s1"], 128, "has no `.git`");

    let env = setup();
    let real = env.tmp.path().join("elsewhere");
    std::fs::rename(env.session_dir("s1"), &real).unwrap();
    std::os::unix::fs::symlink(&real, env.session_dir("s1")).unwrap();
    refused(&env, &["append", "s1", "--text", "x"], 1, "symbolic link");
    refused(&env, &["commit-turn", "s1"], 1, "symbolic link");
}

#[test]
fn non_utf8_and_huge_payloads() {
    let env = setup();
    let bad = env.tmp.path().join("latin1.txt");
    std::fs::write(&bad, b"caf\xe9").unwrap();
    refused(
        &env,
        &["append", "s1", "--file", bad.to_str().unwrap()],
        2,
        "not valid UTF-8",
    );
    let huge = env.tmp.path().join("huge.txt");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(64 * 1024 * 1024 + 1).unwrap();
    refused(
        &env,
        &["append", "s1", "--file", huge.to_str().unwrap()],
        2,
        "over the limit",
    );
    refused(
        &env,
        &["append", "s1", "--file", "/nonexistent/file"],
        128,
        "/nonexistent/file",
    );
    refused(
        &env,
        &["append", "s1", "--input", "{not json"],
        2,
        "--input",
    );
    refused(
        &env,
        &["commit-turn", "s1", "--duration", "-1"],
        2,
        "--duration",
    );
    refused(
        &env,
        &["append", "s1", "--text", "x", "--lock-timeout", "-5"],
        2,
        "--lock-timeout",
    );
}

#[test]
fn a_read_only_state_dir_fails_cleanly() {
    if unsafe_is_root() {
        // root ignores permission bits; nothing to test.
        return;
    }
    let env = setup();
    use std::os::unix::fs::PermissionsExt;
    let hist = env.session_dir("s1").join("history");
    std::fs::set_permissions(&hist, std::fs::Permissions::from_mode(0o555)).unwrap();
    refused(&env, &["append", "s1", "--text", "x"], 128, "history");
    std::fs::set_permissions(&hist, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn unsafe_is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() == 0
        })
        .unwrap_or(false)
}

#[test]
fn a_session_repo_whose_config_points_elsewhere_is_refused() {
    let env = setup();
    let dir = env.session_dir("s1");
    let other = env.state().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let other = other.to_str().unwrap().to_string();
    for (key, value) in [("core.worktree", other.as_str()), ("core.bare", "true")] {
        env.git_ok(&dir, &["config", key, value]);
        for args in [&["commit-turn", "s1"][..], &["log", "s1"]] {
            refused(&env, args, 128, "belongs to another work tree");
        }
        env.git_ok(&dir, &["config", "--unset", key]);
    }
    // A `core.worktree` naming the session directory itself is fine.
    env.git_ok(&dir, &["config", "core.worktree", ".."]);
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
}

#[test]
fn a_session_repo_config_that_does_not_parse_is_refused() {
    let env = setup();
    let config = env.session_dir("s1").join(".git").join("config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core\n");
    std::fs::write(&config, text).unwrap();
    refused(&env, &["commit-turn", "s1"], 128, "config does not parse");
}

/// Each refusal and usage error names its problem with a code of its own,
/// in the text on stderr and in the `--json` error record.
#[test]
fn errors_carry_specific_stable_codes() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    for (args, exit, code) in [
        (&["update", "s1"][..], 2, "usage::nothing_to_update"),
        (
            &["append", "s1", "--predecessor", "nope", "--text", "x"][..],
            1,
            "append::no_such_predecessor",
        ),
        (&["append", "s1"][..], 2, "usage::no_message"),
        (
            &["commit-turn", "s1", "--duration", "-1"][..],
            2,
            "usage::duration",
        ),
        (
            &["title", "s1", "--command", "echo T", "--timeout", "nan"][..],
            2,
            "usage::timeout",
        ),
        (
            &["title", "s1", "--command", "echo T", "--timeout", "-1"][..],
            2,
            "usage::timeout",
        ),
        (&["project", "show", "nowhere"][..], 1, "project::not_found"),
        (&["checkout", "s1", "zzz"][..], 1, "view::unknown_target"),
        (&["cat", "s1", "nope"][..], 1, "read::no_such_node"),
    ] {
        let err = env.fails(args, exit);
        assert!(
            err.contains(&format!("code: git_session::{code}\n")),
            "{args:?}: {err}"
        );
        let mut json = vec!["--json"];
        json.extend_from_slice(args);
        let out = env.run(&json);
        let line = String::from_utf8_lossy(&out.stdout);
        let record: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
        assert_eq!(record["type"], "error", "{args:?}");
        assert_eq!(
            record["data"]["code"],
            format!("git_session::{code}"),
            "{args:?}"
        );
    }
}

#[test]
fn a_large_file_in_the_workdir_is_committed_without_reading_it_whole() {
    // 300 MiB (sparse, zeros) committed with 200 MiB of address space: a
    // file read whole into memory would not fit.
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "one"]);
    let dir = env.session_dir("s1");
    std::fs::create_dir_all(dir.join("workdir")).unwrap();
    let big = std::fs::File::create(dir.join("workdir/big.bin")).unwrap();
    big.set_len(300 << 20).unwrap();
    let mut c = env.cmd();
    c.args(["commit-turn", "s1"]);
    limit_address_space(&mut c, 200 << 20);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.assert_clean("s1");
    let size = env.git("s1", &["cat-file", "-s", "HEAD:workdir/big.bin"]);
    assert_eq!(size.trim(), (300u64 << 20).to_string());
    // Stored compressed, as git stores it.
    let stored: u64 = walkdir::WalkDir::new(dir.join(".git/objects"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    assert!(stored < 20 << 20, "{stored} bytes of objects");
    // And read back whole by git.
    let same = env.git_in(&dir, &["diff", "--quiet", "HEAD", "--", "workdir/big.bin"]);
    assert!(same.status.success());
}

/// Run `c` with at most `bytes` of address space.
pub fn limit_address_space(c: &mut std::process::Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        c.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
}

/// A fixed clock (`GIT_SESSION_NOW`, for tests) that is no time a node or
/// a commit can carry is not taken: NaN used to be written as
/// `"created_at": null`, and a time before 1970 dated a commit in the year
/// -292277022657.
#[test]
fn a_fixed_clock_out_of_range_is_not_taken() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    for bad in ["nan", "-1e20", "inf", "1e300"] {
        let mut c = env.cmd();
        c.env("GIT_SESSION_NOW", bad)
            .args(["append", "s1", "--text", &format!("at {bad}")]);
        env.ok_cmd(c);
    }
    env.ok(&["commit-turn", "s1"]);
    let this_year = 1_700_000_000.0..253_402_300_800.0;
    for f in env.history_files("s1") {
        let node = crate::import::node(&env, "s1", &f);
        let at = node["created_at"].as_f64();
        assert!(at.is_some_and(|t| this_year.contains(&t)), "{f}: {node}");
    }
    env.ok(&["verify", "s1"]);
}
