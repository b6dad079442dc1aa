//! migrate: legacy in-project repositories come home, crash-safe (SPEC §5.15).

use std::path::{Path, PathBuf};

use crate::env::{TestEnv, tree_bytes};

/// A project directory with one fully committed Python-store session inside,
/// registered the way the Python store registers it.
pub fn legacy(env: &TestEnv) -> (PathBuf, PathBuf) {
    let project = env.tmp.path().join("proj");
    let src = project.join(".openprogram/sessions/p1");
    std::fs::create_dir_all(src.join("history")).unwrap();
    std::fs::create_dir_all(src.join("file_backups/t1")).unwrap();
    std::fs::write(src.join("file_backups/t1/main.rs"), "fn main() {}").unwrap();
    std::fs::write(project.join(".openprogram/.gitignore"), "*\n").unwrap();
    env.python_repo(&src);
    std::fs::write(src.join("meta.json"), r#"{"id": "p1", "title": "Legacy", "created_at": 1796017556.0, "updated_at": 1796017600.0, "project_id": "proj_2027fdfd", "head_id": "u1_reply"}"#).unwrap();
    std::fs::write(src.join("history/0001-u-u1.json"), r#"{"id": "u1", "created_at": 1796017556.0, "seq": 1, "role": "user", "caller": "ROOT", "predecessor": "ROOT", "output": "legacy question"}"#).unwrap();
    std::fs::write(src.join("history/0002-l-u1_reply.json"), r#"{"id": "u1_reply", "created_at": 1796017560.0, "seq": 2, "role": "llm", "name": "m1", "caller": "", "predecessor": "u1", "output": "legacy answer"}"#).unwrap();
    env.git_ok(&src, &["add", "-A"]);
    env.git_ok(&src, &["commit", "-m", "turn: legacy question", "--quiet"]);
    std::fs::create_dir_all(env.state().join("sessions")).unwrap();
    std::fs::create_dir_all(env.state().join("projects")).unwrap();
    std::fs::write(
        env.state().join("sessions/locations.json"),
        format!("{{\n  \"p1\": \"{}\"\n}}", src.display()),
    )
    .unwrap();
    std::fs::write(
        env.state().join("projects/projects.json"),
        format!(r#"{{"proj_2027fdfd": {{"id": "proj_2027fdfd", "name": "proj", "path": "{}", "is_default": false, "session_ids": ["p1"], "status": "active", "created_at": 1796017556.0}}}}"#, project.canonicalize().unwrap().display()),
    )
    .unwrap();
    (project, src)
}

pub fn target(env: &TestEnv) -> PathBuf {
    env.state().join("sessions/projects/proj_2027fdfd/p1")
}

fn git_log(env: &TestEnv, dir: &Path) -> String {
    String::from_utf8(env.git_in(dir, &["log", "--all", "--format=%H %s"]).stdout).unwrap()
}

/// The state after a migration, for comparing runs.
fn end_state(env: &TestEnv) -> (String, String, String, Vec<String>) {
    // Each fixture's commits carry its own clock: show's turn headers name
    // the commit, so its id is masked (the ids are compared with the
    // source's below).
    let show: String = env
        .ok(&["show", "p1"])
        .split(" · ")
        .map(|part| {
            let hex = part.len() == 7 && part.bytes().all(|b| b.is_ascii_hexdigit());
            if hex { "<commit>" } else { part }
        })
        .collect::<Vec<_>>()
        .join(" · ");
    // Subjects only: each fixture's commits carry its own clock.
    let log: String = git_log(env, &target(env))
        .lines()
        .map(|l| format!("{}\n", &l[41..]))
        .collect();
    let source = env.tmp.path().join("proj/.openprogram/sessions/p1");
    assert_eq!(
        git_log(env, &target(env)),
        git_log(env, &source),
        "the same commit ids as the source"
    );
    let locations =
        std::fs::read_to_string(env.state().join("sessions/locations.json")).unwrap_or_default();
    let mut listing: Vec<String> = walkdir::WalkDir::new(env.state().join("sessions"))
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| {
            e.path()
                .strip_prefix(env.state())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|p| !p.contains("/.git/") && !p.contains("index.") && !p.contains(".registry.lock"))
        .collect();
    listing.sort();
    (show, log, locations, listing)
}

#[test]
fn legacy_repositories_come_home_and_read_the_same() {
    let env = TestEnv::new();
    let (_project, src) = legacy(&env);
    let show_before = env.ok(&["show", "p1"]);
    let log_before = git_log(&env, &src);
    let plan = env.ok(&["migrate", "--dry-run"]);
    assert_eq!(plan, "would migrate p1\n");
    assert!(!target(&env).exists(), "a dry run changes nothing");
    assert_eq!(env.ok(&["migrate"]), "migrated p1\n");
    assert!(target(&env).join(".git").is_dir());
    assert_eq!(env.ok(&["show", "p1"]), show_before);
    assert_eq!(git_log(&env, &target(&env)), log_before, "the same commits");
    assert!(src.exists(), "the source stays without --prune-sources");
    // The Python store finds the published repo through locations.json.
    let locs: serde_json::Value = serde_json::from_slice(
        &std::fs::read(env.state().join("sessions/locations.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(locs["p1"], target(&env).to_string_lossy().as_ref());
    assert_eq!(
        std::fs::read_to_string(
            env.state()
                .join("sessions/.file-recovery/proj_2027fdfd/p1/t1/main.rs")
        )
        .unwrap(),
        "fn main() {}"
    );
    assert!(
        !env.state()
            .join("sessions/.migration/journal.json")
            .exists()
    );
    let v = env.run(&["verify", "--all"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // Twice: nothing to do.
    let before = tree_bytes(&env.state());
    assert_eq!(env.ok(&["migrate"]), "");
    assert_eq!(before, tree_bytes(&env.state()));
    // Pruning: only once the copy still matches.
    assert_eq!(env.ok(&["migrate", "--prune-sources"]), "");
    assert!(!src.exists());
    assert_eq!(env.ok(&["show", "p1"]), show_before);
}

/// A session that went on after its migration: its source no longer
/// matches the published copy, so `--prune-sources` keeps it, and says so
/// (it used to pass over it without a word).
#[test]
fn a_source_that_differs_from_its_copy_is_kept_and_named() {
    let env = TestEnv::new();
    let (_project, src) = legacy(&env);
    env.ok(&["migrate"]);
    env.turn("p1", "after the move", &[]);
    let out = env.run(&["migrate", "--prune-sources"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`p1`: the source and the published copy differ"),
        "{err}"
    );
    assert!(
        src.join("history/0001-u-u1.json").exists(),
        "the source is kept"
    );
    assert!(env.ok(&["show", "p1"]).contains("after the move"));
}

#[test]
fn a_crash_after_any_step_resumes_to_the_same_end_state() {
    let reference = {
        let env = TestEnv::new();
        legacy(&env);
        env.ok(&["migrate"]);
        end_state(&env)
    };
    for step in [
        "planned",
        "copied",
        "verified",
        "published",
        "recovered",
        "done",
    ] {
        let env = TestEnv::new();
        legacy(&env);
        env.crash_at(&format!("migrate-after-{step}"), &["migrate"]);
        if step != "done" {
            // Mid-migration: verify says so, and the project takes no new bindings.
            let v = env.run(&["verify", "--all"]);
            assert!(
                String::from_utf8_lossy(&v.stdout).contains("migration_in_progress"),
                "{step}"
            );
            env.ok(&["init", "other"]);
            let err = env.fails(&["project", "bind", "other", "proj_2027fdfd"], 1);
            assert!(err.contains("migration in progress"), "{step}: {err}");
            env.ok(&["delete", "other", "--yes"]);
        }
        env.ok(&["migrate"]);
        let mut got = end_state(&env);
        let mut want = reference.clone();
        // Paths differ between the two temp dirs.
        got.2 = got.2.replace(env.tmp.path().to_str().unwrap(), "");
        want.2 = String::new();
        got.2 = String::new();
        assert_eq!(got, want, "after a crash following `{step}`");
        assert_eq!(env.ok(&["verify", "--all"]), "", "{step}");
    }
}

#[test]
fn a_moved_project_is_reported_with_the_relocate_command() {
    let env = TestEnv::new();
    let (project, _) = legacy(&env);
    let moved = env.tmp.path().join("moved");
    std::fs::rename(&project, &moved).unwrap();
    let out = env.run(&["migrate"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("blocked p1") && text.contains("git-session relocate proj_2027fdfd"),
        "{text}"
    );
    env.ok(&["relocate", "proj_2027fdfd", moved.to_str().unwrap()]);
    assert_eq!(env.ok(&["migrate"]), "migrated p1\n");
    assert!(target(&env).exists());
}

/// The migration journal is a file of the state dir, written only through
/// checked directories: one planted as a link or a FIFO is never read (a
/// link to `/dev/zero` was read until memory ran out, and `verify --all`
/// then said nothing). `verify` reports it, and what depends on knowing
/// which sessions are mid-way (`migrate`, `gc-shells`) refuses.
#[test]
fn a_migration_journal_that_is_a_link_or_a_fifo_is_refused_never_read() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let dir = env.state().join("sessions").join(".migration");
    std::fs::create_dir_all(&dir).unwrap();
    let journal = dir.join("journal.json");
    let outside = env.tmp.path().join("outside.json");
    let planted = r#"{"sessions": {"s1": {"project_id": "p", "source": "/x", "target": "/y", "step": "copied"}}}"#;
    for plant in crate::env::PLANTS {
        crate::env::plant(plant, &journal, &outside, planted.as_bytes());
        let out = env.run(&["verify", "--all"]);
        assert_eq!(out.status.code(), Some(1), "{plant}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("migration_in_progress: the migration journal cannot be read"),
            "{plant}: {text}"
        );
        for args in [&["gc-shells", "--dry-run"][..], &["migrate", "--dry-run"]] {
            let out = env.run(args);
            assert_eq!(out.status.code(), Some(1), "{plant} {args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("journal.json"), "{plant} {args:?}: {err}");
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), planted);
    }
    std::fs::remove_file(&journal).unwrap();
    env.ok(&["gc-shells", "--dry-run"]);
}
