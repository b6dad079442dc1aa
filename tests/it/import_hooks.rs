//! `hook install` / `hook uninstall`: our hooks in an agent's settings,
//! everything else left as it was; and the installed command, run as the
//! agent runs it, records the conversation.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::env::TestEnv;
use crate::import::{SESSION, Transcript};

/// A settings file with the user's own keys and hooks.
fn theirs() -> Value {
    json!({
        "model": "opus",
        "env": {"FOO": "1"},
        "hooks": {
            "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]
        },
        "permissions": {"allow": ["Bash(ls:*)"], "deny": []}
    })
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Our hook commands in a settings file, per event.
fn ours(settings: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (event, groups) in settings["hooks"].as_object().into_iter().flatten() {
        for g in groups.as_array().unwrap() {
            for h in g["hooks"].as_array().unwrap() {
                let c = h["command"].as_str().unwrap();
                if c.contains("git-session") {
                    out.push((event.clone(), c.to_string()));
                }
            }
        }
    }
    out
}

/// A state dir whose path is not UTF-8 went into the hook's command under
/// a lossy spelling: the agent's hooks would have recorded every
/// conversation into another directory, made for the purpose, and the
/// user's own state dir would have had none of them. A settings file is
/// JSON text, so such a path is refused and nothing is written.
#[test]
fn install_refuses_a_state_dir_it_cannot_name_in_a_settings_file() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let proj = env.tmp.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let state = env.tmp.path().join(std::ffi::OsStr::from_bytes(b"st\xe9"));
    for agent in ["claude-code", "codex"] {
        let mut c = std::process::Command::new(crate::env::BIN);
        env.isolate(&mut c);
        c.arg("--state-dir").arg(&state);
        c.args([
            "hook",
            "install",
            agent,
            "--project",
            proj.to_str().unwrap(),
        ]);
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{agent}: {err}");
        assert!(err.contains("hook::path_not_utf8"), "{agent}: {err}");
    }
    assert!(!proj.join(".claude").exists() && !proj.join(".codex").exists());
}

#[test]
fn install_keeps_every_other_key_and_hook_and_twice_is_a_no_op() {
    let env = TestEnv::new();
    let proj = env.tmp.path().join("proj");
    let file = proj.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, serde_json::to_string_pretty(&theirs()).unwrap()).unwrap();
    let p = proj.to_str().unwrap();

    // --dry-run: the change printed, nothing written.
    let before = std::fs::read(&file).unwrap();
    let out = env.ok(&[
        "hook",
        "install",
        "claude-code",
        "--project",
        p,
        "--dry-run",
    ]);
    assert!(out.contains("+ Stop: "), "{out}");
    assert_eq!(std::fs::read(&file).unwrap(), before);

    env.ok(&["hook", "install", "claude-code", "--project", p]);
    let after = read(&file);
    let events: Vec<String> = ours(&after).into_iter().map(|(e, _)| e).collect();
    assert_eq!(
        events,
        [
            "Stop",
            "UserPromptSubmit",
            "SubagentStop",
            "PreCompact",
            "SessionEnd"
        ],
        "{after:#}"
    );
    // Everything else as it was: the file minus our hooks is the original.
    let mut stripped = after.clone();
    for groups in stripped["hooks"].as_object_mut().unwrap().values_mut() {
        groups.as_array_mut().unwrap().retain(|g| {
            !g["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .contains("git-session")
        });
    }
    stripped["hooks"]
        .as_object_mut()
        .unwrap()
        .retain(|_, v| !v.as_array().unwrap().is_empty());
    assert_eq!(stripped, theirs());
    // Twice: nothing changes, byte for byte.
    let bytes = std::fs::read(&file).unwrap();
    let out = env.run(&["--json", "hook", "install", "claude-code", "--project", p]);
    assert!(out.status.success());
    let rec: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["type"], "hook_settings");
    assert_eq!(rec["data"]["added"], json!([]));
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // Uninstall: only ours go.
    env.ok(&["hook", "uninstall", "claude-code", "--project", p]);
    assert_eq!(read(&file), theirs());
    let out = env.run(&["hook", "uninstall", "claude-code", "--project", p]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to change"));
}

/// `hook install --help` describes the agents and what it writes where,
/// not where their transcripts are.
#[test]
fn install_help_describes_the_agents_and_what_it_writes_where() {
    let env = TestEnv::new();
    let help = env.ok(&["hook", "install", "--help"]);
    for said in [
        "`claude-code` (Claude Code) or `codex` (Codex CLI)",
        "--state-dir <the state dir> hook <agent>",
        "~/.claude/settings.json",
        "DIR/.claude/settings.json",
        "$CODEX_HOME/hooks.json",
        "DIR/.codex/hooks.json",
        "`notify` line",
        "`UserPromptSubmit`, `Stop`, `SubagentStop`, `PreCompact` and `SessionEnd`",
    ] {
        assert!(help.contains(said), "lacks {said}: {help}");
    }
    for transcripts in [".jsonl", "rollout", "projects/<dir>"] {
        assert!(!help.contains(transcripts), "{transcripts}: {help}");
    }
    // The events it names are the ones it installs.
    let proj = env.tmp.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let p = proj.to_str().unwrap();
    env.ok(&["hook", "install", "claude-code", "--project", p]);
    let mut events: Vec<String> = ours(&read(&proj.join(".claude/settings.json")))
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    events.sort();
    assert_eq!(
        events,
        [
            "PreCompact",
            "SessionEnd",
            "Stop",
            "SubagentStop",
            "UserPromptSubmit"
        ]
    );
}

#[test]
fn install_creates_a_missing_file_edits_through_a_link_and_refuses_what_is_not_json() {
    let env = TestEnv::new();
    let home = env.tmp.path().join("home");
    // --user, no file yet: created.
    env.ok(&["hook", "install", "claude-code", "--user"]);
    let user = home.join(".claude/settings.json");
    assert_eq!(ours(&read(&user)).len(), 5);

    // A settings file that is a link (dotfiles) stays a link.
    let dotfiles = env.tmp.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("hooks.json");
    std::fs::write(&real, r#"{"hooks": {"Stop": []}, "other": true}"#).unwrap();
    let codex = env.tmp.path().join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::os::unix::fs::symlink(&real, codex.join("hooks.json")).unwrap();
    let mut install = env.cmd();
    install
        .env("CODEX_HOME", &codex)
        .args(["hook", "install", "codex"]);
    env.ok_cmd(install);
    assert!(
        std::fs::symlink_metadata(codex.join("hooks.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let edited = read(&real);
    assert_eq!(edited["other"], true);
    let hooks = ours(&edited);
    assert_eq!(hooks.len(), 2, "{edited:#}");
    assert!(hooks.iter().all(|(_, c)| c.ends_with(" hook codex")));

    // Not JSON: refused, the file untouched.
    let bad = env.tmp.path().join("bad");
    let f = bad.join(".claude/settings.json");
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(&f, "{ not json").unwrap();
    let out = env.run(&[
        "hook",
        "install",
        "claude-code",
        "--project",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hook::settings_not_json"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "{ not json");

    // A FIFO or a directory where the settings file goes: refused, left.
    let odd = env.tmp.path().join("odd");
    let f = odd.join(".claude/settings.json");
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    crate::env::mkfifo(&f);
    let out = env.run(&[
        "hook",
        "install",
        "claude-code",
        "--project",
        odd.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hook::settings_not_a_file"));
    assert!(std::fs::symlink_metadata(&f).unwrap().file_type().is_fifo());
}

#[test]
fn the_installed_command_run_as_claude_code_runs_it_records_the_conversation() {
    let env = TestEnv::new();
    let proj = env.tmp.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    env.ok(&[
        "hook",
        "install",
        "claude-code",
        "--project",
        proj.to_str().unwrap(),
    ]);
    let settings = read(&proj.join(".claude/settings.json"));
    let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let file = Transcript::two_turns().write(&env.tmp.path().join("claude"), "");
    // As Claude Code runs it: a shell, the event on stdin, no state dir of
    // ours in the environment.
    use std::io::Write;
    let mut child = std::process::Command::new("sh")
        .args(["-c", &command])
        .env("HOME", env.tmp.path().join("elsewhere"))
        .env_remove("OPENPROGRAM_HOME")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let event = json!({"session_id": "x", "transcript_path": file, "cwd": proj,
        "hook_event_name": "Stop", "stop_hook_active": false});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    // Turn 1 is committed; turn 2, which no later record closes yet, waits
    // whole in the pending area.
    assert_eq!(env.git(SESSION, &["log", "--format=%s"]).lines().count(), 2);
    assert!(env.ok(&["nodes", SESSION]).contains("in progress"));
    env.assert_clean(SESSION);
}

/// `hook install --project` in a repository whose `.claude/settings.json`
/// (or `.claude/` itself) is a link that leads out of it, to the user's own
/// settings say: refused, naming where it leads, and nothing is written
/// there. A link inside the project is followed as before.
#[test]
fn hook_install_never_writes_through_a_link_out_of_the_project() {
    let env = TestEnv::new();
    let outside = env.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("settings.json"), "{\"theirs\": 1}\n").unwrap();
    for linked_dir in [false, true] {
        let project = env.tmp.path().join(format!("cloned-{linked_dir}"));
        std::fs::create_dir_all(&project).unwrap();
        if linked_dir {
            std::os::unix::fs::symlink(&outside, project.join(".claude")).unwrap();
        } else {
            std::fs::create_dir_all(project.join(".claude")).unwrap();
            std::os::unix::fs::symlink(
                outside.join("settings.json"),
                project.join(".claude/settings.json"),
            )
            .unwrap();
        }
        let p = project.to_str().unwrap();
        let err = env.fails(&["hook", "install", "claude-code", "--project", p], 1);
        assert!(err.contains("hook::settings_outside_project"), "{err}");
        assert!(err.contains(&outside.display().to_string()), "{err}");
        assert_eq!(
            std::fs::read_to_string(outside.join("settings.json")).unwrap(),
            "{\"theirs\": 1}\n"
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    }
    // A fresh project named by a relative path: its settings are made there.
    let fresh = env.tmp.path().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let mut c = env.cmd();
    c.current_dir(&fresh)
        .args(["hook", "install", "claude-code", "--project", "."]);
    env.ok_cmd(c);
    assert!(fresh.join(".claude/settings.json").is_file());
    // Inside the project, a link is followed (and stays a link).
    let project = env.tmp.path().join("inside");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join("real.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink(
        project.join("real.json"),
        project.join(".claude/settings.json"),
    )
    .unwrap();
    env.ok(&[
        "hook",
        "install",
        "claude-code",
        "--project",
        project.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read_to_string(project.join("real.json"))
            .unwrap()
            .contains("hook")
    );
    assert!(
        std::fs::symlink_metadata(project.join(".claude/settings.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
