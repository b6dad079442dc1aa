//! Every command's output, human and `--json`, on one fixed fixture, as
//! insta snapshots in `tests/it/snapshots/`: a change of output is a
//! reviewed diff. After a deliberate change, write the new snapshots with
//! `INSTA_UPDATE=always cargo test --test it snapshots::` (or `cargo insta
//! review`) and read `git diff tests/it/snapshots/` before committing.
//!
//! The fixture is deterministic (`GIT_SESSION_NOW`, given node ids, a
//! fixed identity), so commit ids are too; the temp directory is shown as
//! `[TMP]`, the binary's path as `[BIN]`. Each variant of each case runs on
//! a fresh fixture, so a case that changes the state shows its own effect
//! only. Which commands have no case here, and why, is [`NOT_HERE`]; a test
//! checks that every command of the clap definition is one or the other.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::env::TestEnv;
use crate::import::{SID, Transcript};

/// Commands with no snapshot here: (command, why).
const NOT_HERE: &[(&str, &str)] = &[
    (
        "man",
        "its pages are golden files in man/ (docs::man_pages_are_fresh)",
    ),
    (
        "completions",
        "its scripts are golden files in completions/ (docs::completions_are_fresh)",
    ),
    ("help", "clap's own"),
    (
        "schema",
        "the JSON Schema of every record, which git-session-json(7), a golden file in man/, is generated from",
    ),
];

/// One invocation: its snapshot name, the commands run before it on the
/// fresh fixture, its arguments, and what it reads on stdin. `{TMP}` in
/// an argument or in stdin stands for the fixture's temp directory. A
/// setup step `["!write", PATH, TEXT]` writes a file (an agent's change
/// in a project) instead of running a command. `masks`: what differs from
/// run to run in this case alone (a pattern, and what is shown instead).
struct Case {
    name: &'static str,
    setup: &'static [&'static [&'static str]],
    args: &'static [&'static str],
    stdin: Option<&'static str>,
    masks: &'static [(&'static str, &'static str)],
}

const fn case(name: &'static str, args: &'static [&'static str]) -> Case {
    Case {
        name,
        setup: &[],
        args,
        stdin: None,
        masks: &[],
    }
}

const fn after(
    name: &'static str,
    setup: &'static [&'static [&'static str]],
    args: &'static [&'static str],
) -> Case {
    Case {
        name,
        setup,
        args,
        stdin: None,
        masks: &[],
    }
}

/// Two sessions: `s1` with two turns (a reply, a tool call, another reply
/// in the first), `s2` with one; a git repository `proj/` and a bare
/// remote `remote.git` not yet known to the state dir; a Claude Code
/// transcript under `claude/`.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    let turn = |s: &str, nodes: &[&[&str]], duration: &str| {
        for n in nodes {
            let mut a = vec!["append", s];
            a.extend_from_slice(n);
            env.ok(&a);
        }
        env.ok(&["commit-turn", s, "--duration", duration]);
    };
    env.ok(&["init", "s1"]);
    turn(
        "s1",
        &[
            &["--id", "u1", "--text", "What is in README.md?"],
            &[
                "--id",
                "a1",
                "--role",
                "assistant",
                "--name",
                "claude",
                "--text",
                "Let me read it.",
            ],
            &[
                "--id",
                "t1",
                "--role",
                "tool",
                "--name",
                "read",
                "--input",
                r#"{"path":"README.md"}"#,
                "--text",
                "# git-session\nEntity memory on git.",
            ],
            &[
                "--id",
                "a2",
                "--role",
                "assistant",
                "--name",
                "claude",
                "--text",
                "It is the README of git-session.",
            ],
        ],
        "2.5",
    );
    turn(
        "s1",
        &[
            &["--id", "u2", "--text", "Now add a test."],
            &[
                "--id",
                "a3",
                "--role",
                "assistant",
                "--name",
                "claude",
                "--text",
                "Done: tests/readme.rs.",
            ],
        ],
        "4",
    );
    env.ok(&["init", "s2", "--title", "Second thoughts"]);
    turn(
        "s2",
        &[
            &["--id", "v1", "--text", "Is git a database?"],
            &[
                "--id",
                "b1",
                "--role",
                "assistant",
                "--name",
                "claude",
                "--text",
                "A content-addressed one.",
            ],
        ],
        "1",
    );
    let proj = env.tmp.path().join("proj");
    std::fs::create_dir(&proj).unwrap();
    env.git_ok(&proj, &["init", "-q", "-b", "main"]);
    std::fs::write(proj.join("README.md"), "# proj\n").unwrap();
    env.git_ok(&proj, &["add", "-A"]);
    // Dated, as the sessions are: the same commit id on every run.
    let mut commit = std::process::Command::new("git");
    env.isolate(&mut commit);
    let date = "2026-11-30T05:45:56Z";
    commit
        .current_dir(&proj)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .args(["-c", "user.name=me", "-c", "user.email=me@example.com"])
        .args(["commit", "-q", "-m", "init"]);
    assert!(crate::env::output(&mut commit).status.success());
    env.git_ok(env.tmp.path(), &["init", "-q", "--bare", "remote.git"]);
    Transcript::two_turns().write(&env.tmp.path().join("claude"), "");
    env
}

/// `s` with `{TMP}` standing for `tmp`.
fn expand(s: &str, tmp: &Path) -> String {
    s.replace("{TMP}", tmp.to_str().unwrap())
}

/// One variant of `c` (human, or `--json`) on a fresh fixture: the command
/// line, exit code, stdout and stderr, the temp directory as `[TMP]`.
fn run(c: &Case, json: bool) -> String {
    let env = fixture();
    let tmp = env.tmp.path();
    for s in c.setup {
        let args: Vec<String> = s.iter().map(|a| expand(a, tmp)).collect();
        match args.as_slice() {
            [write, path, text] if write == "!write" => std::fs::write(path, text).unwrap(),
            _ => {
                env.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
            }
        }
    }
    let mut args: Vec<String> = c.args.iter().map(|a| expand(a, tmp)).collect();
    if json {
        args.insert(0, "--json".into());
    }
    let mut child = env
        .cmd()
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if let Some(input) = c.stdin {
        stdin.write_all(expand(input, tmp).as_bytes()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    crate::records::check_stdout(&format!("{args:?}"), &out.stdout);
    let shown = format!(
        "$ git-session {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // The canonical path too (macOS's /private/var, a linked TMPDIR).
    let canonical = tmp.canonicalize().unwrap();
    // The binary's path (the hooks name it, as the running process sees it:
    // links resolved), which is the checkout's.
    let bin_canonical = Path::new(crate::env::BIN).canonicalize().unwrap();
    let shown = shown
        .replace(crate::env::BIN, "[BIN]")
        .replace(bin_canonical.to_str().unwrap(), "[BIN]")
        .replace(canonical.to_str().unwrap(), "[TMP]")
        .replace(tmp.to_str().unwrap(), "[TMP]");
    let shown = c.masks.iter().fold(shown, |text, (pattern, with)| {
        regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, *with)
            .into_owned()
    });
    steady(&shown)
}

/// What differs from run to run shown as such: a project id's hash of its
/// path (under a new temp directory each run), and how long a run took.
fn steady(shown: &str) -> String {
    let rules = [
        (r"\bproj_[0-9a-f]{8}\b", "proj_[HASH]"),
        (r#""seconds":[0-9.e-]+"#, r#""seconds":[SECONDS]"#),
        (r"\bin [0-9]+\.[0-9]+s\b", "in [SECONDS]s"),
    ];
    rules
        .iter()
        .fold(shown.to_string(), |text, (pattern, with)| {
            regex::Regex::new(pattern)
                .unwrap()
                .replace_all(&text, *with)
                .into_owned()
        })
}

/// Each case's two variants against their snapshots.
fn check(cases: &[Case]) {
    for c in cases {
        for json in [false, true] {
            let name = format!("{}{}", c.name, if json { "-json" } else { "" });
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path("snapshots");
            settings.set_prepend_module_to_snapshot(false);
            settings.set_omit_expression(true);
            settings.bind(|| insta::assert_snapshot!(name, run(c, json)));
        }
    }
}

/// The command names the cases run (`project add`, `log`, …).
fn commands_covered(tree: &[(String, Vec<String>)]) -> Vec<String> {
    let has_subcommands = |name: &str| tree.iter().any(|(n, subs)| n == name && !subs.is_empty());
    ALL.iter()
        .flat_map(|cases| cases.iter())
        .map(|c| {
            let args: Vec<&str> = c.args.to_vec();
            let top = args[0];
            match args.get(1) {
                Some(sub) if !sub.starts_with('-') && has_subcommands(top) => {
                    format!("{top} {sub}")
                }
                _ => top.to_string(),
            }
        })
        .collect()
}

const READ: &[Case] = &[
    case("log", &["log", "s1"]),
    case("show", &["show", "s1"]),
    case("show-full", &["show", "s1", "--full"]),
    // An unbound session: the nodes of its last turn.
    case("diff", &["diff", "s1"]),
    case("diff-stat", &["diff", "s1", "0", "2", "--stat"]),
    case("export", &["export", "s1"]),
    case("branch", &["branch", "s1"]),
    case("list", &["list"]),
    case("nodes", &["nodes", "s1"]),
    case("cat", &["cat", "s1", "t1"]),
    case("feed", &["feed"]),
    case("grep", &["grep", "README"]),
    case("verify", &["verify", "--all"]),
    case("secrets-scan", &["secrets", "scan", "--all"]),
    case("unknown-session", &["show", "s3"]),
];

const WRITE: &[Case] = &[
    case("init", &["init", "s3", "--title", "A new session"]),
    case(
        "append",
        &["append", "s1", "--id", "u3", "--text", "And the docs?"],
    ),
    after(
        "commit-turn",
        &[&["append", "s1", "--id", "u3", "--text", "And the docs?"]],
        &["commit-turn", "s1", "--duration", "1.5"],
    ),
    after(
        "commit-turn-dry-run",
        &[&["append", "s1", "--id", "u3", "--text", "And the docs?"]],
        &["commit-turn", "s1", "--dry-run"],
    ),
    case("checkout", &["checkout", "s1", "1"]),
    case("update", &["update", "s1", "--title", "Reading the README"]),
    case("archive", &["archive", "s2"]),
    after("unarchive", &[&["archive", "s2"]], &["unarchive", "s2"]),
    case("delete", &["delete", "s2", "--yes"]),
    case("delete-unconfirmed", &["delete", "s2"]),
    case("title", &["title", "s2"]),
    case("recover", &["recover"]),
    case("gc-shells", &["gc-shells", "--older-than", "0"]),
    case("backfill", &["backfill", "s1"]),
    case("migrate", &["migrate", "--dry-run"]),
    case("redact", &["redact", "s1", "--dry-run"]),
    case(
        "secrets-allow",
        &[
            "secrets",
            "allow",
            "0123456789abcdef",
            "--note",
            "a test key",
        ],
    ),
    case("demo", &["demo", "{TMP}/demo"]),
];

const PROJECTS: &[Case] = &[
    case(
        "project-add",
        &["project", "add", "{TMP}/proj", "--name", "proj"],
    ),
    after("project-list", &[ADD_PROJ], &["project", "list"]),
    after("project-show", &[ADD_PROJ], &["project", "show", "proj"]),
    after(
        "project-set",
        &[ADD_PROJ],
        &["project", "set", "proj", "--name", "project"],
    ),
    after(
        "project-bind",
        &[ADD_PROJ, &["init", "s3"]],
        &["project", "bind", "s3", "proj"],
    ),
    after(
        "project-unbind",
        &[ADD_PROJ, &["init", "s3", "--project", "proj"]],
        &["project", "unbind", "proj"],
    ),
    after(
        "project-remove",
        &[ADD_PROJ],
        &["project", "remove", "proj"],
    ),
    after(
        "begin-turn",
        &[ADD_PROJ, &["init", "s3", "--project", "proj"]],
        &["begin-turn", "s3"],
    ),
    // A turn whose agent wrote nothing in the project: no agent commit.
    after(
        "project-log",
        &[
            ADD_PROJ,
            &["init", "s3", "--project", "proj"],
            &["begin-turn", "s3"],
            &["append", "s3", "--id", "w1", "--text", "Look around."],
            &["commit-turn", "s3"],
        ],
        &["project", "log", "proj"],
    ),
    after(
        "relocate",
        &[ADD_PROJ],
        &["relocate", "proj", "{TMP}/claude"],
    ),
    // A turn whose agent added a file: the turn, then its agent commit as
    // `git show` prints it. The session commit holds the project's path
    // (in the reply's record): masked.
    Case {
        name: "diff-agent-commit",
        setup: &[
            &[
                "project",
                "add",
                "{TMP}/proj",
                "--name",
                "proj",
                "--auto-commit",
            ],
            &["init", "s3", "--project", "proj"],
            &["begin-turn", "s3"],
            &["append", "s3", "--id", "w1", "--text", "Take notes."],
            &["!write", "{TMP}/proj/notes.txt", "Notes.\nMore notes.\n"],
            &[
                "append",
                "s3",
                "--id",
                "x1",
                "--role",
                "assistant",
                "--name",
                "claude",
                "--text",
                "Wrote notes.txt.",
            ],
            &["commit-turn", "s3"],
        ],
        args: &["diff", "s3"],
        stdin: None,
        masks: &[
            (r"· [0-9a-f]{7} · nodes", "· [SESSION COMMIT] · nodes"),
            (
                r#""in_progress":false,"commit":"[0-9a-f]{40}""#,
                r#""in_progress":false,"commit":"[SESSION COMMIT]""#,
            ),
        ],
    },
];

/// Register `proj/` as project `proj`.
const ADD_PROJ: &[&str] = &["project", "add", "{TMP}/proj", "--name", "proj"];

const SYNC: &[Case] = &[
    case(
        "remote-add",
        &["remote", "add", "origin", "{TMP}/remote.git"],
    ),
    after(
        "remote-list",
        &[&["remote", "add", "origin", "{TMP}/remote.git"]],
        &["remote", "list"],
    ),
    after(
        "remote-remove",
        &[&["remote", "add", "origin", "{TMP}/remote.git"]],
        &["remote", "remove", "origin"],
    ),
    after(
        "push",
        &[&["remote", "add", "origin", "{TMP}/remote.git"]],
        &["push"],
    ),
    after(
        "fetch",
        &[&["remote", "add", "origin", "{TMP}/remote.git"], &["push"]],
        &["fetch"],
    ),
    // Into the state dir that pushed: every session already here.
    after(
        "clone",
        &[
            &["remote", "add", "origin", "{TMP}/remote.git"],
            &["push"],
            &["remote", "remove", "origin"],
        ],
        &["clone", "{TMP}/remote.git"],
    ),
];

const AGENTS: &[Case] = &[
    case(
        "import",
        &[
            "import",
            "claude-code",
            "{TMP}/claude/-home-me-proj/11111111-2222-3333-4444-555555555555.jsonl",
        ],
    ),
    Case {
        name: "hook-claude-code",
        setup: &[],
        masks: &[],
        args: &["hook", "claude-code"],
        stdin: Some(
            r#"{"session_id": "11111111-2222-3333-4444-555555555555", "transcript_path": "{TMP}/claude/-home-me-proj/11111111-2222-3333-4444-555555555555.jsonl", "hook_event_name": "Stop"}"#,
        ),
    },
    // An event whose transcript is not there: logged, never the agent's
    // failure.
    Case {
        name: "hook-codex",
        setup: &[],
        masks: &[],
        args: &["hook", "codex"],
        stdin: Some(
            r#"{"session_id": "019a0000-0000-7000-8000-000000000001", "transcript_path": "{TMP}/codex/none.jsonl", "hook_event_name": "Stop"}"#,
        ),
    },
    case(
        "hook-install",
        &["hook", "install", "claude-code", "--project", "{TMP}/proj"],
    ),
    after(
        "hook-uninstall",
        &[&["hook", "install", "claude-code", "--project", "{TMP}/proj"]],
        &[
            "hook",
            "uninstall",
            "claude-code",
            "--project",
            "{TMP}/proj",
        ],
    ),
    Case {
        name: "batch",
        setup: &[],
        masks: &[],
        args: &["batch"],
        stdin: Some(
            "{\"argv\": [\"append\", \"s1\", \"--id\", \"u3\", \"--text\", \"One more.\"]}\n{\"argv\": [\"commit-turn\", \"s1\"]}\n{\"argv\": [\"log\", \"s1\", \"-n\", \"1\"]}\n",
        ),
    },
];

const ALL: &[&[Case]] = &[READ, WRITE, PROJECTS, SYNC, AGENTS];

#[test]
fn reading_commands_print_as_reviewed() {
    check(READ);
}

#[test]
fn writing_commands_print_as_reviewed() {
    check(WRITE);
}

#[test]
fn project_commands_print_as_reviewed() {
    check(PROJECTS);
}

#[test]
fn sync_commands_print_as_reviewed() {
    check(SYNC);
}

#[test]
fn agent_commands_print_as_reviewed() {
    // The import and the hook event name the fixture's transcript.
    for c in AGENTS
        .iter()
        .filter(|c| c.name == "import" || c.name == "hook-claude-code")
    {
        let mut named = c.args.iter().copied().chain(c.stdin);
        assert!(named.any(|a| a.contains(SID)), "{}", c.name);
    }
    check(AGENTS);
}

/// Every command and subcommand of the clap definition has a snapshot
/// case, or is named in [`NOT_HERE`] with the reason.
#[test]
fn every_command_has_a_snapshot_or_a_reason() {
    let tree = crate::env::command_tree(&TestEnv::new());
    let covered = commands_covered(&tree);
    let mut missing = Vec::new();
    for (name, subs) in &tree {
        if NOT_HERE.iter().any(|(n, _)| n == name) {
            continue;
        }
        if subs.is_empty() {
            if !covered.contains(name) {
                missing.push(name.clone());
            }
        } else {
            missing.extend(
                subs.iter()
                    .map(|s| format!("{name} {s}"))
                    .filter(|s| !covered.contains(s)),
            );
        }
    }
    assert!(tree.len() > 30, "only {} commands", tree.len());
    assert!(missing.is_empty(), "no snapshot case: {missing:?}");
}
