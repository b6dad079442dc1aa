//! backfill reports what it did as `commit-turn` does, and a session it
//! brings in is titled as any session is (SPEC §5.3, §5.13; issue 48).

use serde_json::Value;

use crate::env::TestEnv;

/// The records of a `--json` run's stdout, as (type, data).
fn records(stdout: &str) -> Vec<(String, Value)> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["type"].as_str().unwrap().to_string(), r["data"].clone()))
        .collect()
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A change of files only (a flag in meta.json) after the last turn holds no
/// node: backfill commits it as `commit-turn` does (`session: update
/// files`) and says it brought the files up to date, not that it committed a
/// turn; in its JSON the commit is `files_only` and the session counts no
/// turn. `commit-turn` says the same in the same words, and a real turn is
/// still a turn in both.
#[test]
fn a_change_of_files_only_is_reported_as_files_brought_up_to_date_not_a_turn() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &[]);
    env.ok(&["update", "s1", "--pin"]);
    let out = env.run(&["backfill", "s1"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "s1: brought the session's files up to date (no new turn)\n"
    );
    assert!(
        stderr_of(&out).starts_with(
            "git-session: backfilled 1 of 1 session (0 new repositories), 1 commit (0 turns), 0 failed, in "
        ),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(
        env.git("s1", &["log", "--format=%s"]),
        "session: update files\nturn 1: one\nsession init\n"
    );
    let committed: Value =
        serde_json::from_str(&env.git("s1", &["show", "HEAD:meta.json"])).unwrap();
    assert_eq!(committed["pinned"], true, "the flag is in the commit");
    env.assert_clean("s1");

    env.ok(&["update", "s1", "--unpin"]);
    let json = records(&env.ok(&["--json", "backfill", "s1"]));
    assert_eq!(json.len(), 2, "{json:?}");
    let (kind, data) = &json[0];
    assert_eq!(kind, "backfill");
    assert_eq!(data["turns"], 0);
    assert_eq!(data["commits"].as_array().unwrap().len(), 1);
    assert_eq!(data["commits"][0]["files_only"], true);
    assert_eq!(data["commits"][0]["nodes"], 0);
    assert_eq!(json[1].0, "backfill_summary");
    assert_eq!(json[1].1["commits"], 1);
    assert_eq!(json[1].1["turns"], 0);
    env.assert_clean("s1");

    // commit-turn: the commit id on stdout, the same words on stderr.
    env.ok(&["update", "s1", "--pin"]);
    let out = env.run(&["commit-turn", "s1"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim().len(), 40);
    assert_eq!(
        stderr_of(&out),
        "git-session: session `s1`: brought the session's files up to date (no new turn)\n"
    );
    env.ok(&["update", "s1", "--unpin"]);
    let json = records(&env.ok(&["--json", "commit-turn", "s1"]));
    assert_eq!(json[0].0, "turn_committed");
    assert_eq!(json[0].1["files_only"], true);
    assert_eq!(json[0].1["turn"], 1, "the turn it follows");
    env.assert_clean("s1");

    // A turn is a turn, in both.
    env.append("s1", &["--text", "two"]);
    env.append("s1", &["--role", "assistant", "--text", "re: two"]);
    assert_eq!(env.ok(&["backfill", "s1"]), "s1: committed 1 turn (2)\n");
    env.append("s1", &["--text", "three"]);
    env.append("s1", &["--role", "assistant", "--text", "re: three"]);
    let json = records(&env.ok(&["--json", "backfill", "s1"]));
    assert_eq!(json[0].1["turns"], 1);
    assert_eq!(json[0].1["commits"][0]["files_only"], false);
    assert_eq!(json[0].1["commits"][0]["turn"], 3);
    let out = env.run(&["commit-turn", "s1"]);
    assert_eq!(
        stderr_of(&out),
        "git-session: nothing new to commit in session `s1`\n"
    );
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "s1"]), "");
}

/// A session backfill brings in (the Python store's: nodes, no repository,
/// no title) gets the first-turn title of SPEC §5.3, as `commit-turn` gives
/// it: in meta.json, committed with the turn, and in the list registry. A
/// title the user gave is never replaced. A second run changes nothing.
#[test]
fn backfill_titles_an_untitled_session_and_keeps_a_users_title() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.ok(&["init", "s2", "--title", "Mine"]);
    for s in ["s1", "s2"] {
        env.append(s, &["--text", "Plan the weekend trip\nwith the details"]);
        env.append(s, &["--role", "assistant", "--text", "sure"]);
        std::fs::remove_dir_all(env.session_dir(s).join(".git")).unwrap();
    }
    assert_eq!(env.meta("s1")["title"], "");
    let out = env.run(&["backfill", "--all"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "s1: committed 1 turn (1) into a new repository, titled \"Plan the weekend trip\"\n\
         s2: committed 1 turn (1) into a new repository\n"
    );
    let m1 = env.meta("s1");
    assert_eq!(m1["title"], "Plan the weekend trip");
    assert_eq!(m1["_auto_titled"], true);
    assert_eq!(m1["_title_gen_count"], 1);
    assert!(m1.get("_user_titled").is_none(), "{m1}");
    let m2 = env.meta("s2");
    assert_eq!(m2["title"], "Mine");
    assert!(m2.get("_auto_titled").is_none(), "{m2}");
    for s in ["s1", "s2"] {
        env.assert_clean(s);
        assert_eq!(
            env.git(s, &["log", "--format=%s"]),
            "turn 1: Plan the weekend trip\nsession init\n"
        );
    }
    // The title is in the turn's commit, not one of its own.
    let committed: Value =
        serde_json::from_str(&env.git("s1", &["show", "HEAD:meta.json"])).unwrap();
    assert_eq!(committed["title"], "Plan the weekend trip");
    // The registry's row.
    let rows: Vec<(String, String)> = records(&env.ok(&["list", "--json"]))
        .into_iter()
        .map(|(_, d)| {
            (
                d["id"].as_str().unwrap().to_string(),
                d["title"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows.iter().find(|r| r.0 == "s1").unwrap().1,
        "Plan the weekend trip"
    );
    assert_eq!(rows.iter().find(|r| r.0 == "s2").unwrap().1, "Mine");
    let list = env.ok(&["list"]);
    assert!(!list.contains("(untitled)"), "{list}");
    // The JSON record names the title given (null: none).
    std::fs::remove_dir_all(env.session_dir("s1").join(".git")).unwrap();
    let mut m = env.meta("s1");
    m["title"] = "".into();
    std::fs::write(
        env.session_dir("s1").join("meta.json"),
        serde_json::to_vec(&m).unwrap(),
    )
    .unwrap();
    let json = records(&env.ok(&["--json", "backfill", "--all", "--dry-run"]));
    assert_eq!(json[0].0, "backfill_plan");
    assert_eq!(json[0].1["title"], "Plan the weekend trip");
    assert_eq!(env.meta("s1")["title"], "", "a dry run writes nothing");
    let json = records(&env.ok(&["--json", "backfill", "--all"]));
    assert_eq!(json[0].0, "backfill");
    assert_eq!(json[0].1["session"], "s1");
    assert_eq!(json[0].1["title"], "Plan the weekend trip");
    // Twice: nothing changes.
    let head = env.git("s1", &["rev-parse", "HEAD"]);
    assert_eq!(env.ok(&["backfill", "--all"]), "");
    assert_eq!(env.git("s1", &["rev-parse", "HEAD"]), head);
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "--all"]), "");
}
