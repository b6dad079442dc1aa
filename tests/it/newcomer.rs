//! What a new user trips over (issue 25): each item as the user sees it.

use crate::env::TestEnv;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn two_sessions() -> TestEnv {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.ok(&["init", "s2"]);
    env
}

#[test]
fn unarchive_says_unarchived() {
    let env = two_sessions();
    assert_eq!(env.ok(&["archive", "s2"]), "updated s2: archived\n");
    assert_eq!(env.ok(&["unarchive", "s2"]), "updated s2: unarchived\n");
    assert_eq!(env.ok(&["update", "s2", "--pin"]), "updated s2: pinned\n");
    assert_eq!(
        env.ok(&["update", "s2", "--unpin"]),
        "updated s2: unpinned\n"
    );
}

#[test]
fn one_status_spelling_the_other_an_alias() {
    let env = two_sessions();
    env.ok(&["update", "s1", "--status", "needs-input"]);
    assert_eq!(env.meta("s1")["status"], "needs_input");
    env.ok(&["update", "s1", "--status", "needs_input"]);
    env.append("s1", &["--text", "two"]);
    env.ok(&["commit-turn", "s1", "--status", "needs_input"]);
    assert_eq!(env.meta("s1")["status"], "needs_input");
    env.append("s1", &["--text", "three"]);
    env.ok(&["commit-turn", "s1", "--status", "needs-input"]);
    assert_eq!(env.meta("s1")["status"], "needs_input");
    let listed = env.ok(&["list", "--status", "needs-input"]);
    assert!(listed.contains("s1") && !listed.contains("s2"), "{listed}");
    let err = env.fails(&["update", "s1", "--status", "napping"], 2);
    assert!(err.contains("needs_input"), "{err}");
}

#[test]
fn title_json_says_unchanged_with_the_current_title() {
    let env = two_sessions();
    env.ok(&["update", "s1", "--title", "Mine"]);
    let out = env.ok(&["--json", "title", "s1"]);
    let rec: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(rec["type"], "title");
    assert_eq!(rec["data"]["title"], "Mine");
    assert_eq!(rec["data"]["unchanged"], true);
}

#[test]
fn an_append_without_text_is_refused_unless_empty_on_purpose() {
    let env = two_sessions();
    let before = env.history_files("s1");
    let err = env.fails(&["append", "s1"], 2);
    assert!(err.contains("--text \"\""), "{err}");
    assert_eq!(env.history_files("s1"), before);
    env.ok(&["append", "s1", "--text", ""]);
    assert_eq!(env.history_files("s1").len(), before.len() + 1);
}

#[test]
fn an_idle_commit_turn_on_a_project_session_says_nothing_under_q() {
    let env = TestEnv::new();
    let (_, pid) = env.project("work", &["--auto-commit"]);
    env.ok(&["init", "s1", "--project", &pid]);
    let out = env.run(&["commit-turn", "s1"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        !err.contains("no_baseline") && !err.contains("warning"),
        "{err}"
    );
    let out = env.run(&["commit-turn", "s1", "-q"]);
    assert_eq!(stderr(&out), "");
}

#[test]
fn every_diagnostic_leads_with_its_message_and_has_a_help_line() {
    let env = two_sessions();
    for (args, code) in [
        (vec!["append", "s1", "--txt", "x"], 2),
        (vec!["append", "s1", "--text"], 2),
        (
            vec!["append", "s1", "--input", "{bad json", "--text", "x"],
            2,
        ),
        (vec!["show", "nope"], 1),
        (vec!["update", "s1", "--status", "napping"], 2),
    ] {
        let err = env.fails(&args, code);
        let first = err.lines().next().unwrap_or("");
        assert!(!first.starts_with("git_session::"), "{args:?}: {err}");
        assert!(err.contains("\nhelp: "), "{args:?}: {err}");
        assert!(err.contains("\ncode: git_session::"), "{args:?}: {err}");
    }
    // Non-UTF-8 argv.
    use std::os::unix::ffi::OsStrExt;
    let out = env
        .cmd()
        .arg("show")
        .arg(std::ffi::OsStr::from_bytes(b"s\xff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("\nhelp: "), "{}", stderr(&out));
    // Under --json, the error is a record with its code.
    for args in [
        vec!["--json", "append", "s1", "--txt", "x"],
        vec!["--json", "show", "nope"],
    ] {
        let out = env.run(&args);
        let rec: serde_json::Value =
            serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
        assert_eq!(rec["type"], "error", "{args:?}");
        assert!(
            rec["data"]["code"]
                .as_str()
                .unwrap()
                .starts_with("git_session::"),
            "{rec}"
        );
        assert!(rec["data"]["help"].is_string() && rec["data"]["message"].is_string());
        assert_eq!(rec["data"]["exit"], out.status.code().unwrap());
    }
}

#[test]
fn a_mistyped_id_gets_the_closest_ones_and_no_offer_to_create() {
    let env = two_sessions();
    for args in [
        vec!["show", "s11"],
        vec!["log", "s11"],
        vec!["delete", "s11", "--yes"],
    ] {
        let err = env.fails(&args, 1);
        assert!(err.contains("did you mean `s1`"), "{args:?}: {err}");
        assert!(
            !err.contains("init") && !err.contains("--create"),
            "{args:?}: {err}"
        );
    }
    let err = env.fails(&["show", "zzzzzzzz"], 1);
    assert!(err.contains("git-session list"), "{err}");
    // Appending is where creating is offered.
    let err = env.fails(&["append", "s3", "--text", "x"], 1);
    assert!(err.contains("--create"), "{err}");
}

#[test]
fn init_on_an_existing_session_says_what_it_left_and_checkout_q_is_quiet() {
    let env = two_sessions();
    let out = env.run(&["init", "s1", "--title", "X"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("--title") && err.contains("update s1 --title"),
        "{err}"
    );
    assert_ne!(env.meta("s1")["title"], "X");
    env.turn("s1", "two", &[]);
    let out = env.run(&["checkout", "s1", "1", "-q"]);
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let out = env.run(&["checkout", "s1", "main"]);
    assert!(stderr(&out).contains("HEAD is now at"));
}

#[test]
fn docs_name_every_command_and_render_without_backticks() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for cmd in [
        "`migrate",
        "`verify",
        "`backfill",
        "project add",
        "man --install",
    ] {
        assert!(readme.contains(cmd), "README lacks {cmd}");
    }
    for e in std::fs::read_dir(root.join("man")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains('`'), "{} shows backticks", p.display());
    }
    let env = TestEnv::new();
    let help = env.ok(&["update", "--help"]);
    assert!(
        help.contains("--unpin") && help.contains("Take the pin off"),
        "{help}"
    );
    let help = env.ok(&["project", "set", "--help"]);
    assert!(help.contains("A new display name"), "{help}");
    let help = env.ok(&["project", "--help"]);
    assert!(
        help.contains("remove") && !help.contains("unbind"),
        "{help}"
    );
}

#[test]
fn project_remove_and_its_deprecated_name() {
    let env = TestEnv::new();
    for name in ["a", "b"] {
        std::fs::create_dir_all(env.tmp.path().join(name)).unwrap();
    }
    let a = env
        .ok(&["project", "add", env.tmp.path().join("a").to_str().unwrap()])
        .trim()
        .to_string();
    let b = env
        .ok(&["project", "add", env.tmp.path().join("b").to_str().unwrap()])
        .trim()
        .to_string();
    env.ok(&["project", "remove", &a]);
    let out = env.run(&["project", "unbind", &b]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("deprecated"), "{}", stderr(&out));
    let list = env.ok(&["project", "list"]);
    assert!(!list.contains(&a) && !list.contains(&b), "{list}");
    assert!(
        env.tmp.path().join("a").is_dir(),
        "the directory is untouched"
    );
}

#[test]
fn man_install_puts_the_pages_where_man_looks() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("share/man");
    env.ok(&["man", "--install", dir.to_str().unwrap()]);
    assert!(dir.join("man1/git-session.1").is_file());
    assert!(dir.join("man1/git-session-verify.1").is_file());
    assert!(dir.join("man5/git-session-layout.5").is_file());
    // The default: under $HOME/.local/share/man.
    env.ok(&["man", "--install"]);
    assert!(
        env.tmp
            .path()
            .join("home/.local/share/man/man1/git-session.1")
            .is_file()
    );
}

#[test]
fn nodes_and_feed_line_their_columns_up_whatever_the_id_lengths() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "a question"]);
    env.append(
        "s1",
        &["--role", "assistant", "--id", "a1", "--text", "a reply"],
    );
    env.append(
        "s1",
        &["--role", "tool", "--name", "read", "--text", "a result"],
    );
    // A second session with a longer id: the `feed` lines of both line up.
    env.ok(&["init", "a-longer-session"]);
    env.append(
        "a-longer-session",
        &["--id", "q1", "--text", "another question"],
    );
    // The role column starts at one offset on every line.
    let role_at = |text: &str| -> Vec<usize> {
        text.lines()
            .map(|l| {
                ["user", "assistant", "tool"]
                    .iter()
                    .filter_map(|r| l.find(&format!(" {r} ")))
                    .min()
                    .unwrap_or_else(|| panic!("no role in {l:?}"))
            })
            .collect()
    };
    for (text, lines) in [(env.ok(&["nodes", "s1"]), 3), (env.ok(&["feed"]), 4)] {
        let at = role_at(&text);
        assert_eq!(at.len(), lines, "{text}");
        assert!(at.iter().all(|a| *a == at[0]), "{text}");
    }
}
