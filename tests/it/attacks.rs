//! Hostile repositories, symlinks and registries (issue 19): each class
//! with a planted attack; a marker proves that nothing ran and nothing
//! outside changed, and the honest data stays intact.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::env::{TestEnv, set_snapshot_count};

/// An outside file with known bytes, and a check that it kept them.
pub(crate) struct Victim {
    pub(crate) path: PathBuf,
}

const VICTIM: &[u8] = b"the user's own file\n";

impl Victim {
    pub(crate) fn new(env: &TestEnv, name: &str) -> Victim {
        let path = env.tmp.path().join("outside").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, VICTIM).unwrap();
        Victim { path }
    }

    pub(crate) fn untouched(&self, what: &str) {
        assert_eq!(
            std::fs::read(&self.path).unwrap(),
            VICTIM,
            "{what}: the outside file changed"
        );
    }
}

/// `verify --all` exits 1 with a finding of `kind` that names `what`.
fn verify_names(env: &TestEnv, kind: &str, what: &str) {
    let out = env.run(&["verify", "--all"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{what}: {said}");
    assert!(said.contains(kind) && said.contains(what), "{what}: {said}");
}

/// The commands that go over every session, and those on session `s1`,
/// then `extra`: none changes anything in `outside`.
fn commands_write_nothing_in(env: &TestEnv, outside: &Path, extra: &[&[&str]]) {
    let before = tree_of(outside);
    let every: &[&[&str]] = &[
        &["verify", "--all"],
        &["verify", "--all", "--fix"],
        &["list"],
        &["grep", "one"],
        &["feed"],
        &["gc-shells"],
        &["recover"],
        &["backfill", "--all"],
        &["migrate"],
        &["verify", "s1"],
        &["show", "s1"],
        &["append", "s1", "--text", "x"],
        &["commit-turn", "s1"],
    ];
    for args in every.iter().chain(extra) {
        let _ = env.run(args);
        assert_eq!(tree_of(outside), before, "{args:?} wrote outside");
    }
}

fn session(env: &TestEnv) -> PathBuf {
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &["read"]);
    env.session_dir("s1")
}

/// Wait for the session's background packing run to end.
fn packing_done(dir: &Path) {
    if let Ok(f) = std::fs::File::options()
        .write(true)
        .open(dir.join(".git/git-session/maintenance.lock"))
    {
        f.lock().unwrap();
    }
}

/// A config that runs `touch <marker>` from three places: core.fsmonitor,
/// a hooks directory, and an included file carrying both.
fn plant_config(env: &TestEnv, git_dir: &Path) -> PathBuf {
    let marker = env.tmp.path().join("PWNED");
    let hooks = env.tmp.path().join("evil-hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["reference-transaction", "pre-auto-gc", "post-checkout"] {
        let h = hooks.join(hook);
        std::fs::write(&h, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let inc = env.tmp.path().join("evil.cfg");
    std::fs::write(
        &inc,
        format!(
            "[core]\n\tfsmonitor = \"touch '{}'; false\"\n\thooksPath = {}\n",
            marker.display(),
            hooks.display()
        ),
    )
    .unwrap();
    let mut cfg = std::fs::read_to_string(git_dir.join("config")).unwrap();
    cfg.push_str(&format!(
        "[core]\n\tfsmonitor = \"touch '{}'; false\"\n\thooksPath = {}\n[include]\n\tpath = {}\n",
        marker.display(),
        hooks.display(),
        inc.display()
    ));
    std::fs::write(git_dir.join("config"), cfg).unwrap();
    marker
}

#[test]
fn a_repositorys_own_config_never_runs_code_in_background_packing() {
    let env = TestEnv::new();
    let dir = session(&env);
    let marker = plant_config(&env, &dir.join(".git"));
    // The next turn is due for a full `git gc` (`mirror::GC_EVERY`).
    set_snapshot_count(&dir, 1, 999);
    env.turn("s1", "two", &[]);
    std::thread::sleep(Duration::from_millis(200));
    packing_done(&dir);
    assert!(
        dir.join(".git/objects/info/commit-graph").exists(),
        "the background `git gc` ran (it writes the commit graph)"
    );
    assert!(!marker.exists(), "the planted config ran");
    // The attack is real: plain git in that repository runs it.
    let _ = env.git_in(&dir, &["gc", "-q"]);
    assert!(marker.exists(), "the planted config is not an attack");
    std::fs::remove_file(&marker).unwrap();
    env.ok(&["verify", "s1"]);
}

#[test]
fn migrate_gives_the_copy_the_pinned_config_not_the_sources() {
    let env = TestEnv::new();
    let (_, src) = crate::migrate::legacy(&env);
    let marker = plant_config(&env, &src.join(".git"));
    env.ok(&["migrate"]);
    let dst = crate::migrate::target(&env);
    let cfg = std::fs::read_to_string(dst.join(".git/config")).unwrap();
    assert!(
        !cfg.contains("touch") && !cfg.contains("include") && cfg.contains("hooksPath = /dev/null"),
        "{cfg}"
    );
    assert!(!dst.join(".git/hooks").exists());
    // Turns and packing in the published copy run nothing.
    for n in 0..11 {
        env.turn("p1", &format!("turn {n}"), &[]);
    }
    packing_done(&dst);
    assert!(!marker.exists(), "the source's config ran in the copy");
    let fsck = env.git_in(&dst, &["fsck", "--strict", "--no-progress"]);
    assert!(fsck.status.success());
}

#[test]
fn writes_never_follow_a_planted_link_out_of_the_session() {
    // A link in place of each file the tool rewrites in place or appends to.
    for rel in [
        ".git/git-session/snapshot",
        ".git/logs/HEAD",
        ".git/git-session/catalog.stamp",
        ".git/git-session/catalog",
        ".git/git-session.lock",
    ] {
        let env = TestEnv::new();
        let dir = session(&env);
        let victim = Victim::new(&env, "victim");
        let _ = std::fs::remove_file(dir.join(rel));
        std::os::unix::fs::symlink(&victim.path, dir.join(rel)).unwrap();
        let err = env.fails(&["append", "s1", "--text", "two"], 1);
        assert!(err.contains("symbolic link"), "{rel}: {err}");
        env.fails(&["commit-turn", "s1"], 1);
        victim.untouched(rel);
    }
    // A branch's reflog, appended to when the branch moves: refused as the
    // files above are, and the session carries on once it is gone.
    let env = TestEnv::new();
    let dir = session(&env);
    let victim = Victim::new(&env, "victim");
    let log = dir.join(".git/logs/refs/heads/main");
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&victim.path, &log).unwrap();
    let err = env.fails(&["append", "s1", "--text", "two"], 1);
    assert!(err.contains("symbolic link"), "{err}");
    env.fails(&["commit-turn", "s1"], 1);
    victim.untouched("logs/refs/heads/main");
    std::fs::remove_file(&log).unwrap();
    env.append("s1", &["--text", "two"]);
    env.ok(&["commit-turn", "s1"]);
    env.assert_clean("s1");
    // The registry journal.
    let env = TestEnv::new();
    session(&env);
    let victim = Victim::new(&env, "bashrc");
    let j = env.state().join("sessions/index.journal");
    let _ = std::fs::remove_file(&j);
    std::os::unix::fs::symlink(&victim.path, &j).unwrap();
    let _ = env.run(&["append", "s1", "--text", "two"]);
    let _ = env.run(&["update", "s1", "--pin"]);
    let _ = env.run(&["init", "s2"]);
    victim.untouched("index.journal");
}

/// Every file under `dir`, with a digest of its bytes (short to print).
fn tree_of(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                todo.push(p);
            } else {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&p).unwrap().hash(&mut h);
                out.push((p.clone(), h.finish()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_repository_sent_to_another_for_its_refs_or_objects_is_refused() {
    // A linked worktree's `commondir` sends git to another repository for
    // refs and objects (background packing would pack and prune there);
    // `alternates` borrows objects (a commit could come to depend on them).
    for rel in ["commondir", "objects/info/alternates"] {
        let env = TestEnv::new();
        let dir = session(&env);
        let other = env.tmp.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        env.git_ok(&other, &["init", "-q"]);
        std::fs::write(other.join("f"), "theirs").unwrap();
        env.git_ok(&other, &["add", "f"]);
        env.git_ok(
            &other,
            &[
                "-c",
                "user.name=o",
                "-c",
                "user.email=o@o",
                "commit",
                "-qm",
                "theirs",
            ],
        );
        let target = match rel {
            "commondir" => other.join(".git"),
            _ => other.join(".git/objects"),
        };
        let head = env.git_ok(&dir, &["rev-parse", "HEAD"]);
        let planted = dir.join(".git").join(rel);
        std::fs::write(&planted, format!("{}\n", target.display())).unwrap();
        // The attack is real: git now looks there.
        if rel == "commondir" {
            let common = env.git_ok(&dir, &["rev-parse", "--git-common-dir"]);
            assert_eq!(common.trim(), other.join(".git").to_str().unwrap());
        }
        let before = tree_of(&other);
        for args in [
            &["append", "s1", "--text", "two"][..],
            &["commit-turn", "s1"],
            &["show", "s1"],
        ] {
            let err = env.fails(args, 1);
            assert!(
                err.contains(rel) && err.contains("nothing was read or written"),
                "{rel}: {args:?}: {err}"
            );
        }
        verify_names(&env, "repo_redirected", rel);
        assert_eq!(
            tree_of(&other),
            before,
            "{rel}: the other repository changed"
        );
        assert_eq!(
            env.history_files("s1").len(),
            3,
            "{rel}: a node was written"
        );
        // Removed, the session is whole and goes on.
        std::fs::remove_file(&planted).unwrap();
        assert_eq!(env.git_ok(&dir, &["rev-parse", "HEAD"]), head);
        env.turn("s1", "two", &[]);
        env.assert_clean("s1");
        env.ok(&["verify", "s1"]);
    }
}

#[test]
fn migrate_refuses_a_legacy_repository_sent_to_another() {
    for rel in ["commondir", "objects/info/alternates"] {
        let env = TestEnv::new();
        let (_, src) = crate::migrate::legacy(&env);
        let other = env.tmp.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        env.git_ok(&other, &["init", "-q"]);
        std::fs::write(src.join(".git").join(rel), format!("{}\n", other.display())).unwrap();
        let before = tree_of(&src);
        let err = env.fails(&["migrate"], 1);
        assert!(err.contains(rel) && err.contains("p1"), "{rel}: {err}");
        assert!(!crate::migrate::target(&env).exists(), "{rel}: published");
        assert_eq!(tree_of(&src), before, "{rel}: the source changed");
        // Removed, the session migrates.
        std::fs::remove_file(src.join(".git").join(rel)).unwrap();
        env.ok(&["migrate"]);
        env.assert_clean("p1");
    }
}

#[test]
fn a_replace_ref_hides_no_changed_node_from_verify() {
    let env = TestEnv::new();
    let dir = session(&env);
    let file = env.history_files("s1")[0].clone();
    let rel = format!("history/{file}");
    let committed = env.git_ok(&dir, &["rev-parse", &format!("HEAD:{rel}")]);
    let path = dir.join(&rel);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"one\"", "\"rewritten\"")).unwrap();
    // The changed file's blob stands in for the committed one.
    let forged = env.git_ok(&dir, &["hash-object", "-w", &rel]);
    env.git_ok(&dir, &["replace", committed.trim(), forged.trim()]);
    verify_names(&env, "node_changed", &file);
}

#[test]
fn commands_over_every_session_write_nothing_through_a_linked_session_or_git_dir() {
    // The session directory itself, or its `.git`, moved out of the state
    // dir and replaced by a link to it.
    for linked in ["", ".git"] {
        let env = TestEnv::new();
        let dir = session(&env);
        let outside = env.tmp.path().join("outside");
        let moved = outside.join("moved");
        std::fs::create_dir_all(&outside).unwrap();
        let at = match linked {
            "" => dir.clone(),
            _ => dir.join(linked),
        };
        std::fs::rename(&at, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &at).unwrap();
        // No lock file there yet: a command that took the session's lock
        // through the link would create one.
        let _ = std::fs::remove_file(moved.join(if linked.is_empty() {
            ".git/git-session.lock"
        } else {
            "git-session.lock"
        }));
        commands_write_nothing_in(&env, &outside, &[]);
        verify_names(&env, "layout_link", "s1");
    }
}

#[test]
fn a_linked_project_directory_of_sessions_is_refused_and_reported() {
    let env = TestEnv::new();
    let work = env.tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    env.git_ok(&work, &["init", "-q"]);
    let pid = env.ok(&["project", "add", work.to_str().unwrap()]);
    let pid = pid.trim();
    env.ok(&["init", "s1", "--project", pid]);
    env.turn("s1", "one", &[]);
    // The project's directory of sessions moved out and replaced by a link.
    let pdir = env.state().join("sessions/projects").join(pid);
    let outside = env.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::rename(&pdir, outside.join(pid)).unwrap();
    std::os::unix::fs::symlink(outside.join(pid), &pdir).unwrap();
    commands_write_nothing_in(&env, &outside, &[&["init", "s2", "--project", pid]]);
    let err = env.fails(&["append", "s1", "--text", "x"], 1);
    assert!(err.contains("symbolic link") && err.contains(pid), "{err}");
    verify_names(&env, "layout_link", pid);
}

#[test]
fn a_linked_registry_directory_is_refused_and_reported() {
    for rel in ["projects", "sync"] {
        let env = TestEnv::new();
        session(&env);
        let work = env.tmp.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let outside = env.tmp.path().join("outside");
        std::fs::create_dir_all(outside.join(rel)).unwrap();
        std::os::unix::fs::symlink(outside.join(rel), env.state().join(rel)).unwrap();
        for args in [
            &["project", "add", work.to_str().unwrap()][..],
            &["remote", "add", "o", "file:///tmp/nowhere"],
            &["init", "s2"],
            &["append", "s1", "--text", "x"],
        ] {
            let err = env.fails(args, 1);
            assert!(
                err.contains("symbolic link") && err.contains(rel),
                "{rel}: {args:?}: {err}"
            );
        }
        assert_eq!(
            std::fs::read_dir(outside.join(rel)).unwrap().count(),
            0,
            "{rel}"
        );
        verify_names(&env, "layout_link", rel);
    }
}

#[test]
fn migrate_copies_and_removes_nothing_through_a_link() {
    // Where migrate copies recovery data (removing an older copy first),
    // and where it stages a copy and keeps its journal.
    for (rel, victim_at) in [
        ("sessions/.file-recovery", "proj_2027fdfd/p1/keep.txt"),
        ("sessions/.migration", "staging/p1/keep.txt"),
    ] {
        let env = TestEnv::new();
        crate::migrate::legacy(&env);
        let outside = env.tmp.path().join("outside");
        let victim = Victim::new(&env, victim_at);
        std::os::unix::fs::symlink(&outside, env.state().join(rel)).unwrap();
        let err = env.fails(&["migrate"], 1);
        assert!(
            err.contains("symbolic link") && err.contains(rel),
            "{rel}: {err}"
        );
        victim.untouched(rel);
        assert_eq!(tree_of(&outside).len(), 1, "{rel}: written outside");
    }
}

#[test]
fn a_link_in_place_of_an_object_directory_takes_no_object_out() {
    let env = TestEnv::new();
    let dir = session(&env);
    packing_done(&dir);
    // Every object packed, the fan-out directories gone; then a link in
    // place of each.
    env.git_ok(&dir, &["repack", "-a", "-d", "-q"]);
    env.git_ok(&dir, &["prune-packed"]);
    let outside = env.tmp.path().join("outside-dir");
    std::fs::create_dir_all(&outside).unwrap();
    for i in 0..256 {
        let fan = dir.join(format!(".git/objects/{i:02x}"));
        if !fan.exists() {
            std::os::unix::fs::symlink(&outside, &fan).unwrap();
        }
    }
    env.append("s1", &["--text", "two"]);
    let err = env.fails(&["commit-turn", "s1"], 128);
    assert!(err.contains("is not a directory (a link?)"), "{err}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "an object left the repository"
    );
}

#[test]
fn a_symlinked_history_or_attachments_directory_is_refused() {
    for rel in [
        "history",
        "workdir",
        "workdir/attachments",
        ".git/git-session",
        ".git/objects",
        ".git/refs/heads",
    ] {
        let env = TestEnv::new();
        let dir = session(&env);
        let outside = env.tmp.path().join("outside-dir");
        std::fs::create_dir_all(&outside).unwrap();
        let p = dir.join(rel);
        if p.exists() {
            std::fs::rename(&p, env.tmp.path().join("moved-away")).unwrap();
        }
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&outside, &p).unwrap();
        let file = env.tmp.path().join("a.txt");
        std::fs::write(&file, "attached").unwrap();
        let err = env.fails(
            &[
                "append",
                "s1",
                "--text",
                "x",
                "--attach",
                file.to_str().unwrap(),
            ],
            1,
        );
        assert!(err.contains("symbolic link"), "{rel}: {err}");
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "{rel}: something was written outside"
        );
        // verify names it.
        verify_names(&env, "layout_link", rel);
    }
}

#[test]
fn delete_removes_nothing_on_a_registrys_word_alone() {
    let env = TestEnv::new();
    session(&env);
    // A user directory that looks like a session: it has a history/ folder.
    let victim = env.tmp.path().join("my-project");
    std::fs::create_dir_all(victim.join("history")).unwrap();
    std::fs::write(victim.join("history/notes.txt"), "mine").unwrap();
    std::fs::write(victim.join("thesis.tex"), "mine too").unwrap();
    std::fs::write(
        env.state().join("sessions/locations.json"),
        format!(
            r#"{{"victim": "{}", "alias": "{}"}}"#,
            victim.display(),
            env.session_dir("s1").display()
        ),
    )
    .unwrap();
    let err = env.fails(&["delete", "victim", "--yes"], 1);
    assert!(err.contains("not session `victim`"), "{err}");
    assert!(victim.join("thesis.tex").exists() && victim.join("history/notes.txt").exists());
    // An alias for another session's repo: neither written nor erased.
    let before = env.history_files("s1");
    env.fails(&["append", "alias", "--text", "into s1?"], 1);
    env.fails(&["delete", "alias", "--yes"], 1);
    assert_eq!(env.history_files("s1"), before);
    assert!(env.session_dir("s1").join("meta.json").exists());
    // A legacy location holding the session plus files of the user's: kept.
    let legacy = env.tmp.path().join("legacy-s9");
    std::fs::create_dir_all(legacy.join("history")).unwrap();
    std::fs::write(legacy.join("meta.json"), r#"{"id":"s9"}"#).unwrap();
    std::fs::write(legacy.join("README.md"), "the user's").unwrap();
    std::fs::write(
        env.state().join("sessions/locations.json"),
        format!(r#"{{"s9": "{}"}}"#, legacy.display()),
    )
    .unwrap();
    let err = env.fails(&["delete", "s9", "--yes"], 1);
    assert!(err.contains("README.md"), "{err}");
    assert!(legacy.join("README.md").exists());
    env.ok(&["verify", "s1"]);
}

#[test]
fn the_state_dir_or_a_session_is_never_a_project() {
    let env = TestEnv::new();
    let dir = session(&env);
    let state = env.state();
    for p in [
        state.clone(),
        state.join("sessions"),
        dir.clone(),
        env.tmp.path().to_path_buf(), // holds the state dir
    ] {
        let err = env.fails(&["project", "add", p.to_str().unwrap()], 1);
        assert!(
            err.contains("cannot be a project"),
            "{}: {err}",
            p.display()
        );
    }
    let (_, pid) = env.project("work", &[]);
    let err = env.fails(&["relocate", &pid, state.to_str().unwrap()], 1);
    assert!(err.contains("cannot be a project"), "{err}");
    assert!(
        !state.join(".git").exists(),
        "no repository in the state dir"
    );
    env.ok(&["verify", "--all"]);
}

#[test]
fn a_fifo_in_the_session_tree_is_skipped_not_read() {
    let env = TestEnv::new();
    let dir = session(&env);
    std::fs::create_dir_all(dir.join("workdir")).unwrap();
    let fifo = dir.join("workdir/pipe");
    crate::env::mkfifo(&fifo);
    env.append("s1", &["--text", "two"]);
    let out = ends(&env, &["commit-turn", "s1"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a regular file"), "{err}");
    let files = env.git("s1", &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!files.contains("pipe"), "{files}");
    assert!(files.contains("history/"), "{files}");
    let out = env.run(&["verify", "s1"]);
    assert!(out.status.success());
}

#[test]
fn a_dot_git_in_any_case_is_never_committed() {
    let env = TestEnv::new();
    let dir = session(&env);
    for name in [".GIT", ".Git", ".git."] {
        std::fs::create_dir_all(dir.join("workdir").join(name)).unwrap();
        std::fs::write(dir.join("workdir").join(name).join("config"), "x").unwrap();
    }
    std::fs::write(dir.join("workdir/.gIt"), "a file named so").unwrap();
    env.turn("s1", "two", &[]);
    let files = env.git("s1", &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(
        !files.to_lowercase().contains(".git/") && !files.contains(".gIt"),
        "{files}"
    );
    let fsck = env.git_in(&dir, &["fsck", "--strict", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    env.ok(&["verify", "s1"]);
}

#[test]
fn the_root_sentinel_is_no_node_id() {
    let env = TestEnv::new();
    session(&env);
    let err = env.fails(&["append", "s1", "--id", "ROOT", "--text", "x"], 2);
    assert!(err.contains("reserved"), "{err}");
    let mut c = env.cmd();
    let out = c
        .args(["append", "s1", "--json-node"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut ch| {
            use std::io::Write;
            ch.stdin
                .take()
                .unwrap()
                .write_all(br#"{"id":"ROOT","role":"user","output":"x"}"#)?;
            ch.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    env.ok(&["verify", "s1"]);
}

#[test]
fn migrate_copies_no_planted_links_or_special_files() {
    let env = TestEnv::new();
    let (_, src) = crate::migrate::legacy(&env);
    let victim = Victim::new(&env, "victim");
    let outside = env.tmp.path().join("outside-dir");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(src.join(".git/git-session")).unwrap();
    std::os::unix::fs::symlink(&victim.path, src.join(".git/git-session/commits")).unwrap();
    std::os::unix::fs::symlink(&outside, src.join("workdir")).unwrap();
    crate::env::mkfifo(&src.join("context-pipe"));
    env.ok(&["migrate"]);
    let dst = crate::migrate::target(&env);
    for rel in [".git/git-session/commits", "workdir", "context-pipe"] {
        assert!(
            std::fs::symlink_metadata(dst.join(rel)).is_err(),
            "{rel} was copied"
        );
    }
    env.turn("p1", "after the move", &[]);
    victim.untouched("migrated link");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    env.ok(&["verify", "p1"]);
}

/// A registry edited by hand to point a project at the state dir: the turn
/// is skipped with the reason, and no repository appears there.
#[test]
fn a_project_edited_to_point_at_the_state_dir_gets_no_commit() {
    let env = TestEnv::new();
    let (work, pid) = env.project("work", &["--auto-commit"]);
    env.ok(&["init", "s1", "--project", &pid]);
    let pj = env.state().join("projects/projects.json");
    let text = std::fs::read_to_string(&pj).unwrap();
    let canon = work.canonicalize().unwrap();
    let state = env.state().canonicalize().unwrap();
    std::fs::write(
        &pj,
        text.replace(canon.to_str().unwrap(), state.to_str().unwrap()),
    )
    .unwrap();
    env.ok(&["begin-turn", "s1"]);
    env.append("s1", &["--text", "q"]);
    env.append("s1", &["--role", "assistant", "--text", "a"]);
    let out = env.run(&["commit-turn", "s1"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("state_dir"));
    assert!(
        !env.state().join(".git").exists(),
        "a repository in the state dir"
    );
}

/// Run `args` and fail the test if it has not ended within 20 s (it hung
/// on a FIFO).
fn ends(env: &TestEnv, args: &[&str]) -> std::process::Output {
    let child = env
        .cmd()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::env::wait_within(child, &args, Duration::from_secs(20))
}

/// FIFOs planted where the layout has files (the registry, the settings,
/// a session's meta.json and private markers, the session repository's
/// HEAD, config, index and refs): no command blocks on one;
/// each is refused or read as empty, and nothing is written through it.
#[test]
fn a_fifo_where_the_layout_has_a_file_blocks_nothing() {
    let targets: [(&str, &[&str]); 13] = [
        ("git-session.json", &["append", "s1", "--text", "x"]),
        ("sessions/index.json", &["list"]),
        ("sessions/index.journal", &["append", "s1", "--text", "x"]),
        ("sessions/locations.json", &["show", "s1"]),
        ("projects/projects.json", &["list"]),
        ("sessions/s1/meta.json", &["show", "s1"]),
        (
            "sessions/s1/.git/git-session/snapshot",
            &["commit-turn", "s1"],
        ),
        // What opening the repository reads, and the branches.
        ("sessions/s1/.git/HEAD", &["log", "s1"]),
        ("sessions/s1/.git/config", &["commit-turn", "s1"]),
        ("sessions/s1/.git/index", &["commit-turn", "s1"]),
        ("sessions/s1/.git/packed-refs", &["log", "s1"]),
        ("sessions/s1/.git/refs/heads/main", &["commit-turn", "s1"]),
        (
            "sessions/s1/.git/logs/refs/heads/old/main",
            &["commit-turn", "s1"],
        ),
    ];
    for (rel, args) in targets {
        let env = TestEnv::new();
        session(&env);
        let path = env.state().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        crate::env::mkfifo(&path);
        let out = ends(&env, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{rel}: {err}");
        // In the repository: verify names it with the repair that fits.
        if rel.starts_with("sessions/s1/.git/") && !rel.contains("git-session/") {
            let said =
                String::from_utf8_lossy(&ends(&env, &["verify", "--all"]).stdout).into_owned();
            assert!(
                said.contains("layout_link") && said.contains("the regular file it should be"),
                "{rel}: {said}"
            );
        }
        for extra in [
            &["verify", "--all"][..],
            &["feed"],
            &["grep", "x"],
            &["nodes", "s1"],
        ] {
            let out = ends(&env, extra);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{rel} {extra:?}: {err}");
        }
    }
}

/// Whether `c` would act on a terminal rather than show (what the tool
/// must never print for a person).
fn acts_on_a_terminal(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Agent-written text that would act on a terminal (an OSC 52 clipboard
/// write, cursor moves that rewrite lines already read, a C1 CSI, a bare
/// carriage return, a bidi override), in nodes and in a file name, reaches
/// a person escaped: every command that shows it, on stdout and stderr.
/// `--json` and `cat` keep the exact text.
#[test]
fn text_that_would_act_on_a_terminal_is_shown_escaped() {
    let env = TestEnv::new();
    let hostile = "fetched \u{1b}]52;c;cm0gLXJmIH4K\u{7}\u{1b}[2A\u{1b}[2Kok\rforged \u{9b}31m \u{202e}txt.exe";
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", hostile]);
    env.append(
        "s1",
        &["--role", "assistant", "--name", "m1", "--text", hostile],
    );
    let input = serde_json::json!({ "path": hostile }).to_string();
    env.append(
        "s1",
        &[
            "--role", "tool", "--name", "read", "--input", &input, "--text", hostile,
        ],
    );
    // A FIFO is skipped with a warning that names it.
    let fifo = env
        .session_dir("s1")
        .join("workdir")
        .join("pipe\u{1b}]0;title\u{7}");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    crate::env::mkfifo(&fifo);
    let mut shown = Vec::new();
    for args in [
        &["commit-turn", "s1"][..],
        &["show", "s1"],
        &["log", "s1"],
        &["list"],
        &["grep", "fetched"],
        &["nodes", "s1"],
        &["feed"],
        &["branch", "s1"],
    ] {
        let out = env.run(args);
        assert!(out.status.success(), "{args:?}");
        for bytes in [&out.stdout, &out.stderr] {
            let text = String::from_utf8(bytes.clone()).unwrap();
            let bad: Vec<char> = text.chars().filter(|&c| acts_on_a_terminal(c)).collect();
            assert!(bad.is_empty(), "{args:?} printed {bad:?}:\n{text}");
            shown.push(text);
        }
    }
    let all = shown.concat();
    assert!(all.contains("\\u{1b}]52;c;cm0gLXJmIH4K\\u{7}"), "{all}");
    assert!(
        all.contains("ok\\rforged \\u{9b}31m \\u{202e}txt.exe"),
        "{all}"
    );
    assert!(all.contains("pipe\\u{1b}]0;title\\u{7}"), "{all}");
    // The exact text, for programs.
    let records = env.ok(&["--json", "nodes", "s1"]);
    let exact = records
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["data"]["node"]["output"] == hostile)
        .count();
    assert_eq!(exact, 3, "{records}");
    let file = env
        .history_files("s1")
        .into_iter()
        .find(|f| f.contains("-u-"))
        .unwrap();
    let stored = std::fs::read(env.session_dir("s1").join("history").join(&file)).unwrap();
    let id = file.split('-').nth(2).unwrap().trim_end_matches(".json");
    let cat = env.cmd().args(["cat", "s1", id]).output().unwrap();
    assert_eq!(
        cat.stdout.strip_suffix(b"\n").unwrap_or(&cat.stdout),
        &stored[..]
    );
}

/// A title with line breaks (a stranger's meta.json, or typed so) cannot
/// forge a row of `list` or a line of `show` and `title`: it is shown on
/// its one line; `--json` keeps it exact.
#[test]
fn a_title_cannot_forge_a_line_of_output() {
    let env = TestEnv::new();
    let title = "real title\nforged           2026-01-01 00:00  idle        fake";
    env.ok(&["init", "s1"]);
    env.ok(&["update", "s1", "--title", title]);
    let list = env.ok(&["list"]);
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(!list.lines().any(|l| l.starts_with("forged")), "{list}");
    assert_eq!(
        env.ok(&["show", "s1"])
            .lines()
            .filter(|l| l.contains("forged"))
            .count(),
        1
    );
    assert_eq!(env.ok(&["title", "s1"]).lines().count(), 1);
    let rows = env.ok(&["--json", "list"]);
    let row: serde_json::Value = serde_json::from_str(rows.lines().next().unwrap()).unwrap();
    assert_eq!(row["data"]["title"], title);
    // The other fields of a row, as a stranger's index.json holds them.
    let path = env.state().join("sessions/index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for (field, value) in [
        ("status", "idle\nforged-status"),
        ("preview", "p\nforged-preview"),
        ("source", "x\nforged-source"),
        ("channel", "c"),
    ] {
        index["s1"][field] = value.into();
    }
    std::fs::write(&path, serde_json::to_vec(&index).unwrap()).unwrap();
    let list = env.ok(&["list"]);
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(
        list.contains("forged-status") && list.contains("forged-source"),
        "{list}"
    );
}

/// `verify <id>` on a session whose tree every other command refuses gives
/// the same finding, with its repair, as `verify --all` (not an error):
/// a repository sent elsewhere, a FIFO where git has a file, a linked
/// object directory. Nothing is read or written through them.
#[test]
fn verify_of_a_refused_session_gives_the_finding_not_an_error() {
    for (planted, kind) in [
        ("commondir", "repo_redirected"),
        ("HEAD", "layout_link"),
        ("objects", "layout_link"),
    ] {
        let env = TestEnv::new();
        let dir = session(&env);
        let outside = env.tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let path = dir.join(".git").join(planted);
        match planted {
            "commondir" => std::fs::write(&path, format!("{}\n", outside.display())).unwrap(),
            "HEAD" => {
                std::fs::remove_file(&path).unwrap();
                crate::env::mkfifo(&path);
            }
            _ => {
                std::fs::rename(&path, outside.join("objects")).unwrap();
                std::os::unix::fs::symlink(outside.join("objects"), &path).unwrap();
            }
        }
        let before = tree_of(&outside);
        env.fails(&["show", "s1"], 1);
        for fix in [false, true] {
            let mut args = vec!["verify", "--json", "s1"];
            if fix {
                args.push("--fix");
            }
            let out = ends(&env, &args);
            assert_eq!(out.status.code(), Some(1), "{planted}");
            let records: Vec<serde_json::Value> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert!(
                records.iter().all(|r| r["type"] != "error"),
                "{planted}: {records:?}"
            );
            assert!(
                records
                    .iter()
                    .any(|r| r["type"] == "finding" && r["data"]["kind"] == kind),
                "{planted}: {records:?}"
            );
        }
        assert_eq!(tree_of(&outside), before, "{planted}");
    }
    // A session that is not there is still an error.
    let env = TestEnv::new();
    env.fails(&["verify", "nosuch"], 1);
}

/// A session repository in a format git-session does not write (SHA-256
/// object names, refs in a reftable: a user's `init.defaultObjectFormat`
/// or `init.defaultRefFormat` when the Python store ran `git init`) is
/// refused, never written: commit-turn used to write SHA-1 objects and a
/// loose ref into it, acknowledged, which git then called broken. The
/// nodes wait on disk; with the repository moved aside, `backfill` makes
/// it again.
#[test]
fn a_repository_in_another_format_is_refused_and_backfill_makes_it_again() {
    for format in [&["--object-format=sha256"][..], &["--ref-format=reftable"]] {
        let env = TestEnv::new();
        let dir = session(&env);
        packing_done(&dir);
        std::fs::rename(dir.join(".git"), env.tmp.path().join("ours.git")).unwrap();
        env.git_ok(&dir, &[&["init", "-q"][..], format].concat());
        let theirs = env.git_ok(&dir, &["config", "--list", "--local"]);
        env.append("s1", &["--text", "two"]);
        let out = env.run(&["commit-turn", "s1"]);
        assert_eq!(out.status.code(), Some(1), "{format:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("session::repo_format"), "{format:?}: {err}");
        verify_names(&env, "repo_unreadable", "extensions.");
        // Nothing of ours went in: git still reads it as it was.
        assert_eq!(env.git_ok(&dir, &["config", "--list", "--local"]), theirs);
        let fsck = env.git_in(&dir, &["fsck", "--strict"]);
        assert!(fsck.status.success(), "{format:?}: {fsck:?}");
        assert!(
            env.git_in(&dir, &["rev-parse", "--verify", "-q", "HEAD"])
                .stdout
                .is_empty()
        );
        std::fs::rename(dir.join(".git"), env.tmp.path().join("theirs.git")).unwrap();
        env.ok(&["backfill", "s1"]);
        assert_eq!(env.ok(&["verify", "s1"]), "");
        env.assert_clean("s1");
        let log = env.git("s1", &["log", "--format=%s"]);
        assert!(log.starts_with("turn 2: two\nturn 1: one"), "{log}");
    }
}
