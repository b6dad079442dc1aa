//! `diff` (issue 53): what a range of turns added to the conversation, and
//! the agent's commits those turns recorded in the project, each as `git
//! show` prints it. Real git is the oracle: the patches are compared with
//! what git prints of the same commits.

use crate::env::TestEnv;

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The hunks the library writes for an edit are the ones `git diff`
/// writes (its default algorithm, heuristics and function lines), on
/// random edits of code-like text full of repeated lines, where diff
/// algorithms disagree most.
#[test]
fn the_hunks_of_an_edit_are_the_ones_git_writes() {
    let env = TestEnv::new();
    let dir = env.tmp.path();
    let words = [
        "}",
        "{",
        "",
        "fn a() {",
        "    x += 1;",
        "    return;",
        "let y = 2;",
        "// c",
        "if z {",
        "} else {",
        "\tindented",
        "_private: u8,",
    ];
    let mut rng = Rng(0x5eed_0053);
    for case in 0..200 {
        let n = 1 + rng.below(80);
        let a: Vec<&str> = (0..n).map(|_| words[rng.below(words.len())]).collect();
        let mut b = a.clone();
        for _ in 0..1 + rng.below(12) {
            let i = rng.below(b.len() + 1);
            match rng.below(3) {
                0 if i < b.len() => {
                    b.remove(i);
                }
                1 => b.insert(i, words[rng.below(words.len())]),
                _ if i < b.len() => b[i] = words[rng.below(words.len())],
                _ => {}
            }
        }
        let (a, mut b) = (a.join("\n") + "\n", b.join("\n") + "\n");
        if case % 7 == 0 {
            b.pop();
        }
        std::fs::write(dir.join("a"), &a).unwrap();
        std::fs::write(dir.join("b"), &b).unwrap();
        let out = env.git_in(dir, &["diff", "--no-index", "--no-color", "a", "b"]);
        let git: String = String::from_utf8(out.stdout)
            .unwrap()
            .split_inclusive('\n')
            .skip_while(|l| !l.starts_with("@@"))
            .collect();
        assert_eq!(
            git_session::git::patch::unified(a.as_bytes(), b.as_bytes()),
            git,
            "case {case}:\n{a}\n---\n{b}"
        );
    }
}

/// The fixture: project `work` (auto-commit, a repository with the user's
/// first commit), session `s1` bound to it with an agent commit in each of
/// its two turns (turn 1 adds `helper.rs` and calls a tool, turn 2 edits
/// `main.rs`), and session `s2` bound to the same project, whose turn
/// between them commits `other.rs`.
struct Fixture {
    env: TestEnv,
    work: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let env = TestEnv::new();
    let (work, project) = env.project("work", &["--auto-commit", "--name", "work"]);
    let git = |args: &[&str]| env.git_ok(&work, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "User"]);
    git(&["config", "user.email", "user@example.com"]);
    let main = "use std::fmt;\n\nfn main() {\n    let a = 1;\n\n\n\n    println!(\"{a}\");\n}\n";
    std::fs::write(work.join("main.rs"), main).unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "user's first commit"]);
    env.ok(&["init", "s1", "--project", &project]);
    env.ok(&["init", "s2", "--project", &project]);

    env.ok(&["begin-turn", "s1"]);
    std::fs::write(work.join("helper.rs"), "pub fn help() {}\n").unwrap();
    env.append("s1", &["--text", "Add a helper."]);
    let reply = ["--role", "assistant", "--name", "m1", "--text"];
    env.append("s1", &[&reply[..], &["Writing it."]].concat());
    env.append(
        "s1",
        &[
            "--role",
            "tool",
            "--name",
            "write",
            "--text",
            "wrote\n1 line",
        ],
    );
    env.append("s1", &[&reply[..], &["Wrote helper.rs."]].concat());
    env.ok(&["commit-turn", "s1"]);

    env.ok(&["begin-turn", "s2"]);
    std::fs::write(work.join("other.rs"), "// s2's\n").unwrap();
    env.append("s2", &["--text", "Add other.rs."]);
    env.append("s2", &[&reply[..], &["Added."]].concat());
    env.ok(&["commit-turn", "s2"]);

    env.ok(&["begin-turn", "s1"]);
    std::fs::write(work.join("main.rs"), main.replace("println", "print")).unwrap();
    env.append("s1", &["--text", "Print without a newline."]);
    env.append("s1", &[&reply[..], &["Changed main.rs."]].concat());
    env.ok(&["commit-turn", "s1"]);
    Fixture { env, work }
}

impl Fixture {
    /// The agent commits in the project, oldest first: (id, subject).
    fn agent_commits(&self) -> Vec<(String, String)> {
        let log = self
            .env
            .git_ok(&self.work, &["log", "--reverse", "--format=%H %s"]);
        log.lines()
            .filter(|l| l.contains("[agent "))
            .map(|l| {
                let (id, subject) = l.split_once(' ').unwrap();
                (id.to_string(), subject.to_string())
            })
            .collect()
    }

    /// `git show <id>` in the project, as git prints it.
    fn git_show(&self, id: &str) -> String {
        self.env.git_ok(&self.work, &["show", "--no-color", id])
    }
}

/// `output` from its first `commit ` line on: what `diff` prints of the
/// agent commits.
fn commits_part(output: &str) -> &str {
    let at = output.find("\ncommit ").map_or(output.len(), |i| i + 1);
    &output[at..]
}

#[test]
fn a_turns_agent_commit_is_shown_as_git_shows_it() {
    let f = fixture();
    let commits = f.agent_commits();
    let subjects: Vec<&str> = commits.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        subjects,
        [
            "[agent s1] turn 1: Add a helper.",
            "[agent s2] turn 1: Add other.rs.",
            "[agent s1] turn 2: Print without a newline.",
        ]
    );
    let (s1_turn1, s2_turn1, s1_turn2) = (&commits[0].0, &commits[1].0, &commits[2].0);

    // By default, the last turn: its nodes, then its agent commit exactly
    // as `git show` prints it, the hunk's function line included.
    let last = f.env.ok(&["diff", "s1"]);
    let (nodes, shown) = last.split_at(last.find("\ncommit ").unwrap() + 1);
    assert!(nodes.starts_with("── turn 2 · "), "{nodes}");
    assert!(
        nodes.contains("\nuser: Print without a newline.\nassistant (m1): Changed main.rs.\n"),
        "{nodes}"
    );
    assert!(!nodes.contains("Add a helper"), "{nodes}");
    assert_eq!(shown, f.git_show(s1_turn2));
    assert!(shown.contains("@@ -5,5 +5,5 @@ fn main() {\n"), "{shown}");
    // Its diff is `git diff` of the commit against its parent.
    let diff = f.env.git_ok(
        &f.work,
        &["diff", "--no-color", &format!("{s1_turn2}^"), s1_turn2],
    );
    assert!(shown.ends_with(&diff), "{shown}\n---\n{diff}");

    // One turn named: that turn against the one before.
    let first = f.env.ok(&["diff", "s1", "1"]);
    assert_eq!(commits_part(&first), f.git_show(s1_turn1));
    assert!(
        first.contains("  tool: write()\n      wrote\n      1 line\n"),
        "{first}"
    );

    // Both turns: both commits in order, never s2's, made between them in
    // the same project.
    let both = f.env.ok(&["diff", "s1", "0", "2"]);
    let at = both.find("\n── turn 2 · ").unwrap();
    assert!(both.starts_with("── turn 1 · "), "{both}");
    assert_eq!(commits_part(&both[..at]), f.git_show(s1_turn1));
    assert_eq!(commits_part(&both[at..]), f.git_show(s1_turn2));
    assert!(!both.contains(&s2_turn1[..7]), "{both}");
    assert!(!both.contains("other.rs"), "{both}");
    // And s2's diff is s2's commit alone.
    let other = f.env.ok(&["diff", "s2"]);
    assert_eq!(commits_part(&other), f.git_show(s2_turn1));
}

/// Every kind of change an agent makes, in one commit, as `git show`
/// prints it: a file added empty, one deleted, a mode changed, a file
/// become a link, a binary file changed, a path git quotes, a last line
/// without its newline.
#[test]
fn every_kind_of_change_is_shown_as_git_shows_it() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let (work, project) = env.project("work", &["--auto-commit"]);
    let git = |args: &[&str]| env.git_ok(&work, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "User"]);
    git(&["config", "user.email", "user@example.com"]);
    let write = |name: &str, bytes: &[u8]| std::fs::write(work.join(name), bytes).unwrap();
    write("gone.txt", b"bye\n");
    write("run.sh", b"echo hi\n");
    write("link-me", b"a file\n");
    write("blob.bin", b"\0\x01\x02");
    write("end.txt", b"one\ntwo\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "the user's"]);
    env.ok(&["init", "s1", "--project", &project]);
    env.ok(&["begin-turn", "s1"]);
    write("empty.txt", b"");
    std::fs::remove_file(work.join("gone.txt")).unwrap();
    std::fs::set_permissions(work.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(work.join("link-me")).unwrap();
    std::os::unix::fs::symlink("end.txt", work.join("link-me")).unwrap();
    write("blob.bin", b"\0\x01\x03");
    write("end.txt", b"one\ntwo\nthree");
    write("naïve \"quoted\".txt", b"x\n");
    env.append("s1", &["--text", "Change everything."]);
    env.append("s1", &["--role", "assistant", "--text", "Done."]);
    env.ok(&["commit-turn", "s1"]);
    let sha = git(&["rev-parse", "HEAD"]).trim().to_string();
    let show = env.git_ok(&work, &["show", "--no-color", &sha]);
    assert!(show.contains("[agent s1] turn 1"), "{show}");
    for line in [
        "new file mode 100644\nindex 0000000..e69de29\n",
        "deleted file mode 100644\n",
        "old mode 100644\nnew mode 100755\n",
        "new file mode 120000\n",
        "Binary files a/blob.bin and b/blob.bin differ\n",
        "diff --git \"a/na\\303\\257ve \\\"quoted\\\".txt\"",
        "\\ No newline at end of file\n",
    ] {
        assert!(show.contains(line), "git shows no {line:?}:\n{show}");
    }
    let ours = env.ok(&["diff", "s1"]);
    assert_eq!(commits_part(&ours), show);
    // Under --json, the same text, and each file with its counts.
    let records: Vec<serde_json::Value> = env
        .ok(&["--json", "diff", "s1"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let patch = records.iter().find(|r| r["type"] == "agent_patch").unwrap();
    assert_eq!(patch["data"]["patch"], show.as_str());
    let numstat = env.git_ok(
        &work,
        &["show", "--numstat", "--no-renames", "--format=", &sha],
    );
    let files: Vec<String> = patch["data"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] != "T")
        .map(|f| match f["binary"].as_bool().unwrap() {
            true => format!("-\t-\t{}", f["path"].as_str().unwrap()),
            false => format!(
                "{}\t{}\t{}",
                f["added"],
                f["removed"],
                f["path"].as_str().unwrap()
            ),
        })
        .collect();
    let git_files: Vec<String> = numstat
        .lines()
        .filter(|l| !l.ends_with("\tlink-me"))
        .map(|l| {
            l.replace(
                "\"na\\303\\257ve \\\"quoted\\\".txt\"",
                "naïve \"quoted\".txt",
            )
        })
        .collect();
    assert_eq!(files, git_files);
}

/// `--stat`: each turn's nodes by role and, per agent commit, its files
/// as `git show --stat` counts them.
#[test]
fn stat_counts_the_nodes_and_each_commits_files() {
    let f = fixture();
    let commits = f.agent_commits();
    let out = f.env.ok(&["diff", "s1", "0", "2", "--stat"]);
    let git_stat = |id: &str| f.env.git_ok(&f.work, &["show", "--stat", "--format=", id]);
    assert_eq!(
        out,
        format!(
            "── turn 1 · {t} · {c1} · nodes 1..4\n4 nodes: 1 user, 2 assistant, 1 tool\n\
             agent commit {a1} [agent s1] turn 1: Add a helper.\n{s1}\n\
             ── turn 2 · {t} · {c2} · nodes 5..6\n2 nodes: 1 user, 1 assistant, 0 tool\n\
             agent commit {a2} [agent s1] turn 2: Print without a newline.\n{s2}",
            t = "2026-11-30 05:45",
            c1 = session_commit(&f.env, "s1", 1),
            c2 = session_commit(&f.env, "s1", 2),
            a1 = &commits[0].0[..7],
            a2 = &commits[2].0[..7],
            s1 = git_stat(&commits[0].0),
            s2 = git_stat(&commits[2].0),
        )
    );
}

/// The abbreviated session commit of turn `turn`, as `log` prints it.
fn session_commit(env: &TestEnv, s: &str, turn: u64) -> String {
    env.ok(&["--json", "log", s])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["data"].clone())
        .find(|r| r["turn"] == turn)
        .unwrap()["short"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `--json`: the nodes as `show` gives them, each agent commit with its
/// id, subject, author, files and `git show` text, then the range.
#[test]
fn json_gives_the_nodes_the_agent_commits_and_the_range() {
    let f = fixture();
    let commits = f.agent_commits();
    let records = |args: &[&str]| -> Vec<serde_json::Value> {
        let mut a = vec!["--json", "diff", "s1"];
        a.extend_from_slice(args);
        f.env
            .ok(&a)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = records(&["0", "2"]);
    let kinds: Vec<&str> = all.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "node",
            "node",
            "node",
            "node",
            "agent_patch",
            "node",
            "node",
            "agent_patch",
            "diff"
        ]
    );
    let patch = &all[4]["data"];
    assert_eq!(patch["session"], "s1");
    assert_eq!(patch["turn"], 1);
    assert_eq!(patch["commit"], commits[0].0.as_str());
    assert_eq!(patch["subject"], commits[0].1.as_str());
    assert_eq!(
        patch["author"],
        "agent (m1 via OpenProgram) <agent@openprogram.local>"
    );
    assert_eq!(patch["found"], true);
    assert_eq!(
        patch["files"],
        serde_json::json!([{"path": "helper.rs", "status": "A", "binary": false, "added": 1, "removed": 0}])
    );
    assert_eq!(patch["patch"], f.git_show(&commits[0].0).as_str());
    assert_eq!(all[7]["data"]["patch"], f.git_show(&commits[2].0).as_str());
    assert_eq!(
        all[8]["data"],
        serde_json::json!({"session": "s1", "branch": "main", "from": 0, "to": 2, "nodes": 6,
            "user": 2, "assistant": 3, "tool": 1, "record": 0, "agent_commits": 2})
    );
    // The nodes as `show --json` gives them.
    let show: Vec<serde_json::Value> = f
        .env
        .ok(&["--json", "show", "s1"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let nodes: Vec<&serde_json::Value> = all.iter().filter(|r| r["type"] == "node").collect();
    assert_eq!(nodes, show.iter().collect::<Vec<_>>());
    // --stat: no nodes and no patch text.
    let stat = records(&["--stat"]);
    let kinds: Vec<&str> = stat.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["agent_patch", "diff"]);
    assert_eq!(stat[0]["data"]["patch"], serde_json::Value::Null);
    assert_eq!(stat[0]["data"]["files"][0]["added"], 1);
    assert_eq!(stat[0]["data"]["files"][0]["removed"], 1);
}

/// An unbound session: the nodes alone, no agent commit.
#[test]
fn an_unbound_session_shows_its_nodes_alone() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.turn("s1", "two", &["grep"]);
    let out = env.ok(&["diff", "s1"]);
    assert_eq!(
        out,
        format!(
            "── turn 2 · 2026-11-30 05:45 · {} · nodes 3..5\nuser: two\nassistant (m1): re: two\n  tool: grep() → ok\n",
            session_commit(&env, "s1", 2)
        )
    );
    // --full: tool calls whole, as `show --full` prints them.
    let full = env.ok(&["diff", "s1", "--full"]);
    assert!(
        full.contains("\n  tool: grep\n    input: \n    result: ok\n"),
        "{full}"
    );
    let json = env.ok(&["--json", "diff", "s1", "1"]);
    assert!(!json.contains("agent_patch"), "{json}");
    assert_eq!(json.lines().count(), 3, "{json}");
    // The same turn twice: nothing, said on stderr.
    let out = env.run(&["diff", "s1", "2", "2"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to show"));
}

/// Turns are numbered on the branch asked (`--branch`), by default the one
/// the session is on: a retry is its own branch.
#[test]
fn branch_picks_the_line_whose_turns_are_numbered() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let (a1, _) = env.turn("s1", "one", &[]);
    env.turn("s1", "two", &[]);
    // A retry of turn 2 from turn 1's reply: a branch of its own, HEAD on it.
    env.append("s1", &["--predecessor", &a1, "--text", "two, again"]);
    env.append("s1", &["--role", "assistant", "--text", "again"]);
    env.ok(&["commit-turn", "s1"]);
    let retry = env
        .git("s1", &["branch", "--show-current"])
        .trim()
        .to_string();
    assert!(retry.starts_with("retry-"), "{retry}");
    let user_line = |args: &[&str]| {
        let mut a = vec!["diff", "s1"];
        a.extend_from_slice(args);
        env.ok(&a)
            .lines()
            .find(|l| l.starts_with("user: "))
            .unwrap()
            .to_string()
    };
    assert_eq!(user_line(&[]), "user: two, again");
    assert_eq!(user_line(&["--branch", &retry]), "user: two, again");
    assert_eq!(user_line(&["--branch", "main"]), "user: two");
    assert_eq!(user_line(&["1", "--branch", "main"]), "user: one");
    let err = env.fails(&["diff", "s1", "--branch", "nope"], 1);
    assert!(err.contains("git_session::view::no_such_branch"), "{err}");
    assert!(err.contains(&retry), "{err}");
}

/// What cannot be shown is refused with its code: a turn the branch does
/// not have (exit 1), a range backwards or a turn that is no number (exit
/// 2); nothing is printed on stdout.
#[test]
fn bad_ranges_are_refused() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let err = env.fails(&["diff", "s1"], 1);
    assert!(err.contains("git_session::view::no_such_turn"), "{err}");
    assert!(err.contains("this branch has no turn yet"), "{err}");
    env.turn("s1", "one", &[]);
    env.turn("s1", "two", &[]);
    for args in [&["3"][..], &["0"], &["1", "3"]] {
        let mut a = vec!["diff", "s1"];
        a.extend_from_slice(args);
        let err = env.fails(&a, 1);
        assert!(
            err.contains("git_session::view::no_such_turn"),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("turns on the current branch are 1..2"),
            "{err}"
        );
    }
    let err = env.fails(&["diff", "s1", "2", "1"], 2);
    assert!(err.contains("turn 2 comes after turn 1"), "{err}");
    assert!(err.contains("`git-session diff s1 1 2`"), "{err}");
    assert!(err.contains("git_session::usage::diff_range"), "{err}");
    let err = env.fails(&["diff", "s1", "last"], 2);
    assert!(err.contains("git_session::usage::parse"), "{err}");
    let out = env.run(&["--json", "diff", "s1", "2", "1"]);
    let rec: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(rec["data"]["code"], "git_session::usage::diff_range");
    env.fails(&["diff", "s9"], 1);
}

/// On a terminal (`--color always` here): the commit line yellow, the
/// diff in git's colours; the text is the plain output's.
#[test]
fn colour_is_gits() {
    let f = fixture();
    let plain = f.env.ok(&["diff", "s1"]);
    let coloured = f.env.ok(&["diff", "s1", "--color", "always"]);
    let sgr = regex::Regex::new("\u{1b}\\[[0-9;]*m").unwrap();
    assert_eq!(sgr.replace_all(&coloured, ""), plain);
    for line in [
        "\n\u{1b}[33mcommit ",
        "\n\u{1b}[1mdiff --git a/main.rs b/main.rs\u{1b}[0m\n",
        "\n\u{1b}[36m@@ -5,5 +5,5 @@\u{1b}[0m fn main() {\n",
        "\n\u{1b}[31m-    println!(\"{a}\");\u{1b}[0m\n",
        "\n\u{1b}[32m+    print!(\"{a}\");\u{1b}[0m\n",
    ] {
        assert!(coloured.contains(line), "no {line:?} in:\n{coloured}");
    }
}

/// A record that names a commit the project no longer has is said as
/// such; one that names another session's commit (a node file edited by
/// hand) shows nothing of it, with a warning.
#[test]
fn a_commit_gone_or_not_the_sessions_is_not_shown() {
    let f = fixture();
    let commits = f.agent_commits();
    let (s2_turn1, s1_turn2) = (&commits[1].0, &commits[2].0);
    // s1's turn-2 reply records s2's commit instead of its own.
    let reply = walkdir::WalkDir::new(f.env.state())
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.parent().unwrap().ends_with("s1/history"))
        .find(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains(s1_turn2.as_str())
        })
        .unwrap();
    let text = std::fs::read_to_string(&reply).unwrap();
    std::fs::write(&reply, text.replace(s1_turn2.as_str(), s2_turn1)).unwrap();
    let out = f.env.run(&["diff", "s1"]);
    assert!(out.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!stdout.contains("\ncommit "), "{stdout}");
    assert!(!stdout.contains("other.rs"), "{stdout}");
    assert!(stderr.contains("is not session `s1`'s"), "{stderr}");
    std::fs::write(&reply, text).unwrap();

    // The project's history rewritten: s1's last commit is gone.
    f.env.git_ok(&f.work, &["reset", "-q", "--hard", "HEAD~1"]);
    f.env
        .git_ok(&f.work, &["reflog", "expire", "--expire=now", "--all"]);
    f.env.git_ok(&f.work, &["gc", "-q", "--prune=now"]);
    let out = f.env.ok(&["diff", "s1"]);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("agent commit {} in project `", &s1_turn2[..7]))
            && last.ends_with("` not shown: it is not in the project's repository"),
        "{out}"
    );
    let json = f.env.ok(&["--json", "diff", "s1"]);
    let patch: serde_json::Value =
        serde_json::from_str(json.lines().find(|l| l.contains("agent_patch")).unwrap()).unwrap();
    assert_eq!(patch["data"]["found"], false);
    assert_eq!(patch["data"]["commit"], s1_turn2.as_str());
    assert_eq!(patch["data"]["patch"], serde_json::Value::Null);
}
