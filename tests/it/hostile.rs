//! Hostile input, table-driven (SPEC §6, issue 9): every case exits
//! non-zero with a diagnostic, never panics, and leaves the state dir as it
//! was, byte for byte.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::env::{TestEnv, tree_bytes};

struct Case {
    name: &'static str,
    /// Prepare the state (after the common setup).
    setup: fn(&TestEnv) -> Option<Vec<u8>>,
    /// Bytes on stdin (`DEEP`: 64 KiB of `{`).
    input: Option<&'static [u8]>,
    args: &'static [&'static str],
    /// Expected exit code.
    code: i32,
}

fn none(_: &TestEnv) -> Option<Vec<u8>> {
    None
}

fn file(p: &Path, b: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, b).unwrap();
}

const CASES: &[Case] = &[
    Case {
        name: "id with ..",
        setup: none,
        input: None,
        args: &["append", "../escape", "--text", "x"],
        code: 2,
    },
    Case {
        name: "id with a slash",
        setup: none,
        input: None,
        args: &["init", "a/b"],
        code: 2,
    },
    Case {
        name: "id starting with a dot",
        setup: none,
        input: None,
        args: &["init", ".hidden"],
        code: 2,
    },
    Case {
        name: "reserved id",
        setup: none,
        input: None,
        args: &["init", "projects"],
        code: 2,
    },
    Case {
        name: "id of 129 chars",
        setup: none,
        input: None,
        args: &[
            "init",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ],
        code: 2,
    },
    Case {
        name: "non-ASCII id",
        setup: none,
        input: None,
        args: &["init", "séance"],
        code: 2,
    },
    Case {
        name: "node id with ..",
        setup: none,
        input: None,
        args: &["append", "s1", "--id", "..", "--text", "x"],
        code: 2,
    },
    Case {
        name: "unknown session",
        setup: none,
        input: None,
        args: &["commit-turn", "ghost"],
        code: 1,
    },
    Case {
        name: "unknown predecessor",
        setup: none,
        input: None,
        args: &["append", "s1", "--predecessor", "ghost", "--text", "x"],
        code: 1,
    },
    Case {
        name: "unknown caller",
        setup: none,
        input: None,
        args: &["append", "s1", "--role", "tool", "--caller", "ghost"],
        code: 1,
    },
    Case {
        name: "duplicate node id",
        setup: none,
        input: None,
        args: &["append", "s1", "--id", "fixed", "--text", "x"],
        code: 1,
    },
    Case {
        name: "json-node not json",
        setup: none,
        input: Some(b"{not json"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "json-node truncated",
        setup: none,
        input: Some(b"{\"role\":\"user\",\"output\":"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "json-node not an object",
        setup: none,
        input: Some(b"[]"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "json-node not UTF-8",
        setup: none,
        input: Some(b"\xff\xfe\x00"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "json-node id with ..",
        setup: none,
        input: Some(b"{\"role\":\"user\",\"id\":\"../x\"}"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "json-node metadata not an object",
        setup: none,
        input: Some(b"{\"role\":\"user\",\"metadata\":[1]}"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "json-node reads not a list",
        setup: none,
        input: Some(b"{\"role\":\"user\",\"reads\":\"x\"}"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "json-node deeply nested",
        setup: none,
        input: Some(b"deep"),
        args: &["append", "s1", "--json-node"],
        code: 2,
    },
    Case {
        name: "non-UTF-8 text file",
        setup: |e| {
            file(&e.tmp.path().join("latin1.txt"), b"caf\xe9");
            None
        },
        input: None,
        args: &["append", "s1", "--file", "latin1.txt"],
        code: 2,
    },
    Case {
        name: "huge payload",
        setup: |e| {
            std::fs::File::create(e.tmp.path().join("huge.bin"))
                .unwrap()
                .set_len(64 * 1024 * 1024 + 1)
                .unwrap();
            None
        },
        input: None,
        args: &["append", "s1", "--file", "huge.bin"],
        code: 2,
    },
    Case {
        name: "attach a directory",
        setup: |e| {
            std::fs::create_dir_all(e.tmp.path().join("adir")).unwrap();
            None
        },
        input: None,
        args: &["append", "s1", "--text", "x", "--attach", "adir"],
        code: 1,
    },
    Case {
        name: "attach a symlink",
        setup: |e| {
            std::os::unix::fs::symlink("/etc/passwd", e.tmp.path().join("link")).unwrap();
            None
        },
        input: None,
        args: &["append", "s1", "--text", "x", "--attach", "link"],
        code: 1,
    },
    Case {
        name: "attach a missing file",
        setup: none,
        input: None,
        args: &["append", "s1", "--text", "x", "--attach", "nope.png"],
        code: 128,
    },
    Case {
        name: "meta.json truncated",
        setup: |e| {
            file(
                &e.session_dir("s1").join("meta.json"),
                b"{\"id\": \"s1\", \"ti",
            );
            None
        },
        input: None,
        args: &["append", "s1", "--text", "x"],
        code: 128,
    },
    Case {
        name: "meta.json is a directory",
        setup: |e| {
            let m = e.session_dir("s1").join("meta.json");
            std::fs::remove_file(&m).unwrap();
            std::fs::create_dir(&m).unwrap();
            None
        },
        input: None,
        args: &["append", "s1", "--text", "x"],
        code: 128,
    },
    Case {
        name: "torn pending node",
        setup: |e| {
            file(
                &e.session_dir("s1").join("history/000099-u-torn.json"),
                b"{\"id\":\"torn\",\"seq\":99,",
            );
            None
        },
        input: None,
        args: &["commit-turn", "s1"],
        code: 128,
    },
    Case {
        name: "missing .git",
        setup: |e| {
            std::fs::rename(
                e.session_dir("s1").join(".git"),
                e.tmp.path().join("git-aside"),
            )
            .unwrap();
            None
        },
        input: None,
        args: &["commit-turn", "s1"],
        code: 128,
    },
    Case {
        name: ".git is a file (a foreign gitdir)",
        setup: |e| {
            std::fs::rename(
                e.session_dir("s1").join(".git"),
                e.tmp.path().join("git-aside"),
            )
            .unwrap();
            file(
                &e.session_dir("s1").join(".git"),
                b"gitdir: /somewhere/else/.git\n",
            );
            None
        },
        input: None,
        args: &["commit-turn", "s1"],
        code: 128,
    },
    Case {
        name: "foreign HEAD",
        setup: |e| {
            file(
                &e.session_dir("s1").join(".git/HEAD"),
                b"ref: refs/heads/nowhere/../../x\n",
            );
            None
        },
        input: None,
        args: &["log", "s1"],
        code: 128,
    },
    Case {
        name: "symlinked session dir",
        setup: |e| {
            let real = e.tmp.path().join("real");
            std::fs::rename(e.session_dir("s1"), &real).unwrap();
            std::os::unix::fs::symlink(&real, e.session_dir("s1")).unwrap();
            None
        },
        input: None,
        args: &["append", "s1", "--text", "x"],
        code: 1,
    },
    Case {
        name: "locked session, --no-wait",
        setup: none,
        input: None,
        args: &["append", "s1", "--text", "x", "--no-wait"],
        code: 75,
    },
    Case {
        name: "negative duration",
        setup: none,
        input: None,
        args: &["commit-turn", "s1", "--duration", "-3"],
        code: 2,
    },
    Case {
        name: "bad status",
        setup: none,
        input: None,
        args: &["update", "s1", "--status", "asleep"],
        code: 2,
    },
    Case {
        name: "bad gc duration",
        setup: none,
        input: None,
        args: &["gc-shells", "--older-than", "forever"],
        code: 2,
    },
    Case {
        name: "checkout past the end",
        setup: none,
        input: None,
        args: &["checkout", "s1", "99"],
        code: 1,
    },
    Case {
        name: "relocate the default project",
        setup: none,
        input: None,
        args: &["relocate", "default", "/tmp"],
        code: 1,
    },
    Case {
        name: "project add of a file",
        setup: |e| {
            file(&e.tmp.path().join("plain.txt"), b"x");
            None
        },
        input: None,
        args: &["project", "add", "plain.txt"],
        code: 1,
    },
    Case {
        name: "corrupt projects.json",
        setup: |e| {
            file(&e.state().join("projects/projects.json"), b"{\"proj_1\": ");
            None
        },
        input: None,
        args: &["project", "list"],
        code: 128,
    },
    Case {
        name: "unknown project",
        setup: none,
        input: None,
        args: &["project", "bind", "s1", "proj_ffff"],
        code: 1,
    },
    Case {
        name: "unknown shell",
        setup: none,
        input: None,
        args: &["completions", "tcsh"],
        code: 2,
    },
];

#[test]
fn every_hostile_input_is_refused_cleanly() {
    let mut passed = 0;
    for case in CASES {
        let env = TestEnv::new();
        env.ok(&["init", "s1"]);
        env.ok(&["append", "s1", "--id", "fixed", "--text", "hello"]);
        env.ok(&["commit-turn", "s1"]);
        (case.setup)(&env);
        let input = case.input.map(|b| {
            if b == b"deep" {
                vec![b'{'; 1 << 16]
            } else {
                b.to_vec()
            }
        });
        // The lock case: hold the session's lock from here.
        let _held = (case.name == "locked session, --no-wait")
            .then(|| env.hold_lock(&env.session_dir("s1")));
        let before = tree_bytes(&env.state());
        let mut cmd = env.cmd();
        cmd.current_dir(env.tmp.path())
            .args(case.args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().unwrap();
        if let Some(bytes) = input {
            let mut s = child.stdin.take().unwrap();
            let _ = s.write_all(&bytes);
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(case.code), "{}: {err}", case.name);
        assert!(!err.contains("panicked"), "{}: panic: {err}", case.name);
        assert!(
            err.contains("help:")
                || err.contains("error:")
                || err.contains("×")
                || err.contains(" x "),
            "{}: no diagnostic: {err}",
            case.name
        );
        assert_eq!(
            before,
            tree_bytes(&env.state()),
            "{}: the state dir changed",
            case.name
        );
        passed += 1;
    }
    assert!(CASES.len() >= 30);
    eprintln!("hostile cases passed: {passed}/{}", CASES.len());
}
