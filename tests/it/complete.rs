//! Dynamic completion: `git-session __complete` names the session ids,
//! project ids and branch names a word of a command line can be, reading
//! the state dir and writing nothing; the bash script `completions` prints
//! asks it, as bash runs the script.

use std::process::Command;

use crate::env::{BIN, TestEnv, tree_bytes};

/// Two sessions and a third, `s1` with a retry branch, and a project.
fn state(env: &TestEnv) -> String {
    env.ok(&["init", "s1"]);
    env.turn("s1", "first", &[]);
    env.turn("s1", "second", &[]);
    env.ok(&["checkout", "s1", "1"]);
    env.turn("s1", "second, again", &[]);
    env.ok(&["init", "s2"]);
    env.ok(&["init", "other"]);
    let (_, pid) = env.project("work", &[]);
    pid
}

/// `__complete` for `line` (split at spaces; the last word is completed),
/// as `shell` asks: its exit code and what it printed.
fn complete(env: &TestEnv, shell: &str, line: &str) -> (i32, Vec<String>) {
    let words: Vec<&str> = line.split(' ').collect();
    let index = (words.len() - 1).to_string();
    let state = env.state();
    let mut c = Command::new(BIN);
    env.isolate(&mut c);
    c.args(["__complete", "--state-dir"])
        .arg(&state)
        .args(["--shell", shell, "--index", &index, "--"])
        .args(&words);
    let out = c.output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (out.status.code().unwrap(), lines)
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn complete_names_sessions_projects_and_a_sessions_branches() {
    let env = TestEnv::new();
    let pid = state(&env);
    let retry = env.git("s1", &["branch", "--format=%(refname:short)"]);
    let retry = retry.lines().find(|b| b.starts_with("retry-")).unwrap();
    let before = tree_bytes(&env.state());

    // Session ids, for a partial word and for none.
    let (code, found) = complete(&env, "bash", "git-session log s");
    assert_eq!((code, sorted(found)), (0, vec!["s1".into(), "s2".into()]));
    let (_, found) = complete(&env, "bash", "git-session show ");
    assert_eq!(sorted(found), ["other", "s1", "s2"]);
    let (_, found) = complete(&env, "bash", "git-session grep x --session o");
    assert_eq!(found, ["other"]);
    // Project ids (zsh and fish: with the project's name).
    let (_, found) = complete(&env, "bash", "git-session project show ");
    assert_eq!(found, [pid.as_str()]);
    let (_, found) = complete(&env, "zsh", "git-session list --project ");
    assert_eq!(found, [format!("{pid}:work")]);
    let (_, found) = complete(&env, "fish", "git-session list --project=");
    assert_eq!(found, [format!("--project={pid}\twork")]);
    // The branches of the session the line names.
    let (_, found) = complete(&env, "bash", "git-session export s1 --branch ");
    assert_eq!(sorted(found), ["main", retry]);
    let (_, found) = complete(&env, "bash", "git-session export s1 --branch r");
    assert_eq!(found, [retry]);
    let (_, found) = complete(&env, "bash", "git-session checkout s1 ");
    assert_eq!(sorted(found), ["main", "next", "prev", retry]);
    let (_, found) = complete(&env, "bash", "git-session export s2 --branch ");
    assert_eq!(found, ["main"]);
    // The state dir the line names, over the one of the call.
    let elsewhere = TestEnv::new();
    elsewhere.ok(&["init", "far"]);
    let line = format!(
        "git-session --state-dir {} log ",
        elsewhere.state().display()
    );
    let (_, found) = complete(&env, "bash", &line);
    assert_eq!(found, ["far"]);
    // Words the state dir does not hold: exit 1, nothing printed (the
    // script completes them itself).
    for line in [
        "git-session lo",
        "git-session log --al",
        "git-session init ",
        "git-session checkout s1 main ",
    ] {
        assert_eq!(complete(&env, "bash", line), (1, Vec::new()), "{line}");
    }
    assert_eq!(tree_bytes(&env.state()), before, "completion wrote nothing");
}

/// The bash script `completions bash` prints, sourced and run as bash runs
/// a completion function: state-dir words come from `__complete`, the rest
/// from the definitions.
#[test]
fn the_bash_script_completes_ids_and_branches_from_the_state_dir() {
    let env = TestEnv::new();
    state(&env);
    let script = env.tmp.path().join("git-session.bash");
    std::fs::write(&script, env.ok(&["completions", "bash"])).unwrap();
    let state = env.state();
    let run = |line: &str| -> String {
        let program = format!(
            r#"source "$1"
COMP_WORDS=("$2" --state-dir "$3" {line})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_git__session_dynamic "$2" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
        );
        let mut c = Command::new("bash");
        env.isolate(&mut c);
        c.args(["-c", &program, "bash"])
            .arg(&script)
            .arg(BIN)
            .arg(&state);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(run("log s"), "s1\ns2\n");
    assert_eq!(run("export s1 --branch m"), "main\n");
    assert_eq!(run("export s1 --branch = m"), "main\n");
    assert_eq!(run("checkout s1 pr"), "prev\n");
    // A command name, and a command's flag: from the definitions.
    assert_eq!(run("chec"), "checkout\n");
    assert_eq!(run("log --al"), "--all\n");
    assert_eq!(run("project log --max"), "--max-count\n");
}
