//! `hook install` / `hook uninstall`: our hooks in an agent's hook settings
//! (Claude Code's `settings.json`, Codex's `hooks.json`), both shaped
//! `{"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type": "command",
//! "command": …}]}]}}`. Pure edits of the parsed file: every other key, event,
//! group and hook is left as it was, in its place; ours are the command
//! hooks whose program is `git-session` and whose arguments end with
//! `hook <agent>`.

use serde_json::{Map, Value, json};

use super::HookError;
use crate::error::{Error, Result};

/// What an edit did to one event's hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added {
        event: String,
        command: String,
    },
    /// Ours, with another command (another binary or state dir), now this one.
    Updated {
        event: String,
        from: String,
        to: String,
    },
    Removed {
        event: String,
        command: String,
    },
}

/// The program of a shell command line: its first word, unquoted.
fn program(command: &str) -> String {
    let c = command.trim_start();
    match c.chars().next() {
        Some(q @ ('\'' | '"')) => c[1..].split(q).next().unwrap_or("").to_string(),
        _ => c.split_whitespace().next().unwrap_or("").to_string(),
    }
}

/// A hook command of ours for `agent` (`claude-code`, `codex`).
pub fn is_ours(command: &str, agent: &str) -> bool {
    let prog = program(command);
    let base = prog.rsplit('/').next().unwrap_or("");
    base == "git-session" && command.trim_end().ends_with(&format!(" hook {agent}"))
}

/// Quote a word for a POSIX shell when it needs it.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The `hooks` object of a settings file, made when absent.
fn hooks_of<'a>(settings: &'a mut Value, file: &str) -> Result<&'a mut Map<String, Value>> {
    let Value::Object(top) = settings else {
        return Err(not_an_object(file));
    };
    let hooks = top
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    hooks
        .as_object_mut()
        .ok_or_else(|| hooks_not_an_object(file))
}

fn not_an_object(file: &str) -> Error {
    HookError::SettingsNotObject {
        file: file.to_string(),
    }
    .into()
}

fn hooks_not_an_object(file: &str) -> Error {
    HookError::HooksNotObject {
        file: file.to_string(),
    }
    .into()
}

/// The command hooks of one event's groups, as (group, hook) indexes.
fn ours_in(groups: &[Value], agent: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for (h, hook) in group["hooks"].as_array().into_iter().flatten().enumerate() {
            if let Some(c) = hook["command"].as_str()
                && is_ours(c, agent)
            {
                out.push((g, h, c.to_string()));
            }
        }
    }
    out
}

/// Add `command` to each of `events` unless it is there (an older command
/// of ours is replaced).
pub fn install(
    settings: &mut Value,
    file: &str,
    agent: &str,
    events: &[&str],
    command: &str,
    timeout: u64,
) -> Result<Vec<Change>> {
    let hooks = hooks_of(settings, file)?;
    // Refuse before changing anything.
    for e in events {
        if hooks.get(*e).is_some_and(|v| !v.is_array()) {
            return Err(HookError::EventNotList {
                file: file.to_string(),
                event: e.to_string(),
            }
            .into());
        }
    }
    let mut changes = Vec::new();
    for e in events {
        let groups = hooks
            .entry(e.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .expect("checked above");
        let ours = ours_in(groups, agent);
        if ours.iter().any(|(_, _, c)| c == command) {
            continue;
        }
        if let Some((g, h, from)) = ours.into_iter().next() {
            groups[g]["hooks"][h]["command"] = command.into();
            changes.push(Change::Updated {
                event: e.to_string(),
                from,
                to: command.to_string(),
            });
            continue;
        }
        groups
            .push(json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]}));
        changes.push(Change::Added {
            event: e.to_string(),
            command: command.to_string(),
        });
    }
    Ok(changes)
}

/// Remove every hook of ours; a group or event list left empty by that
/// goes too, and so does a `hooks` object left empty.
pub fn uninstall(settings: &mut Value, file: &str, agent: &str) -> Result<Vec<Change>> {
    let Value::Object(top) = settings else {
        return Err(not_an_object(file));
    };
    let Some(hooks) = top.get_mut("hooks") else {
        return Ok(Vec::new());
    };
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(hooks_not_an_object(file));
    };
    let mut changes = Vec::new();
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        let ours = ours_in(groups, agent);
        if ours.is_empty() {
            continue;
        }
        for (g, h, command) in ours.into_iter().rev() {
            groups[g]["hooks"]
                .as_array_mut()
                .expect("a hook was found in it")
                .remove(h);
            if groups[g]["hooks"].as_array().is_some_and(Vec::is_empty) {
                groups.remove(g);
            }
            changes.push(Change::Removed {
                event: event.clone(),
                command,
            });
        }
        if groups.is_empty() {
            emptied.push(event.clone());
        }
    }
    for e in emptied {
        hooks.shift_remove(&e);
    }
    if hooks.is_empty() && !changes.is_empty() {
        top.shift_remove("hooks");
    }
    changes.reverse();
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "/usr/bin/git-session --state-dir /s hook claude-code";

    fn theirs() -> Value {
        json!({
            "model": "opus",
            "hooks": {
                "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]
            },
            "permissions": {"allow": ["Bash(ls)"]}
        })
    }

    #[test]
    fn install_adds_ours_beside_theirs_and_twice_is_a_no_op() {
        let mut s = theirs();
        let c = install(
            &mut s,
            "f",
            "claude-code",
            &["Stop", "SessionEnd"],
            OURS,
            60,
        )
        .unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(s["hooks"]["Stop"][0], theirs()["hooks"]["Stop"][0]);
        assert_eq!(s["hooks"]["SessionEnd"][0]["hooks"][0]["command"], OURS);
        let again = s.clone();
        assert!(
            install(
                &mut s,
                "f",
                "claude-code",
                &["Stop", "SessionEnd"],
                OURS,
                60
            )
            .unwrap()
            .is_empty()
        );
        assert_eq!(s, again);
        // Another binary: ours updated in place, nothing added.
        let c = install(
            &mut s,
            "f",
            "claude-code",
            &["Stop"],
            "git-session hook claude-code",
            60,
        )
        .unwrap();
        assert!(matches!(&c[..], [Change::Updated { .. }]));
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn uninstall_removes_only_ours() {
        let mut s = theirs();
        install(
            &mut s,
            "f",
            "claude-code",
            &["Stop", "SessionEnd"],
            OURS,
            60,
        )
        .unwrap();
        // Codex's hook is not Claude Code's.
        install(
            &mut s,
            "f",
            "codex",
            &["Stop"],
            "git-session hook codex",
            60,
        )
        .unwrap();
        let c = uninstall(&mut s, "f", "claude-code").unwrap();
        assert_eq!(c.len(), 2);
        let mut want = theirs();
        want["hooks"]["Stop"]
            .as_array_mut()
            .unwrap()
            .push(json!({"hooks": [{"type": "command", "command": "git-session hook codex", "timeout": 60}]}));
        assert_eq!(s, want);
        uninstall(&mut s, "f", "codex").unwrap();
        assert_eq!(s, theirs());
        // A file that only had ours is left without `hooks`.
        let mut s = json!({"a": 1});
        install(&mut s, "f", "claude-code", &["Stop"], OURS, 60).unwrap();
        uninstall(&mut s, "f", "claude-code").unwrap();
        assert_eq!(s, json!({"a": 1}));
    }

    #[test]
    fn commands_are_recognised_and_quoted() {
        assert!(is_ours("'/home/a b/git-session' hook codex", "codex"));
        assert!(is_ours("git-session hook claude-code  ", "claude-code"));
        assert!(!is_ours("git-session hook claude-code", "codex"));
        assert!(!is_ours("my-git-session hook codex", "codex"));
        assert!(!is_ours("echo git-session hook codex x", "codex"));
        assert_eq!(shell_word("/a/b"), "/a/b");
        assert_eq!(shell_word("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn a_file_of_another_shape_is_refused_unchanged() {
        let mut s = json!({"hooks": {"Stop": {"not": "a list"}}});
        let before = s.clone();
        assert!(install(&mut s, "f", "claude-code", &["Stop"], OURS, 60).is_err());
        assert_eq!(s, before);
        assert!(install(&mut json!([1]), "f", "claude-code", &["Stop"], OURS, 60).is_err());
    }
}
