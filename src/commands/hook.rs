//! `hook`: the record written while the agent works (SPEC §5; `import`).
//!
//! `hook claude-code` / `hook codex`: reads one hook event (JSON, on stdin,
//! or Codex's `notify` argument) and the transcript it names; writes what
//! `import` writes; a failure is appended to the state dir's hook log
//! instead of failing the agent; locks the session, exclusive; prints
//! nothing (an agent may feed a hook's output to its model).
//!
//! `hook install` / `hook uninstall`: reads and rewrites the agent's hook
//! settings file (keeping every other key and hook); prints the change.

use std::io::Read;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::error::{Error, IoContext, Result, exit};
use crate::import::settings::{self, Change};
use crate::import::{Agent, Upto};
use crate::layout::atomic;
use crate::out::records::HookSettings;

/// The largest hook event read from stdin.
const MAX_EVENT_BYTES: u64 = 1 << 20;

/// Seconds an agent gives our hook before it gives up on it.
const HOOK_TIMEOUT: u64 = 60;

/// Run as an agent's hook, or add the hooks to an agent's settings.
///
/// `hook claude-code` reads one Claude Code hook event on stdin
/// (`UserPromptSubmit`, `PostToolUse`, `Stop`, `SubagentStop`, `PreCompact`,
/// `SessionEnd`, …) and imports its `transcript_path` incrementally, as
/// `import claude-code` does: at the end of a turn (`Stop`, `SubagentStop`,
/// `PreCompact`) every node so far, in the middle of one the turns before
/// it, so each turn is one commit and the session ends as one import of the
/// whole would make it (a transcript that lags the event is caught up by the
/// next call); at `SessionEnd` also the records after the last node. `hook codex` does the
/// same for Codex: its `notify` program gets the event as its last argument
/// (`agent-turn-complete`, naming the thread, whose rollout is found under
/// `$CODEX_HOME/sessions`), its hooks on stdin. A hook always exits 0 and
/// prints nothing, so that it never blocks or disturbs the agent: a failure
/// is appended to `git-session-hooks.log` in the state directory, which
/// `verify --all` reports.
///
/// `hook install claude-code` adds the hooks to Claude Code's
/// `settings.json` (`hook install codex`: Codex's `hooks.json`), keeping
/// every other key and hook as it was; twice changes nothing; `hook
/// uninstall` removes only ours.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub command: HookCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// A Claude Code hook: the event on stdin
    ClaudeCode,
    /// A Codex hook: the event as the last argument (`notify`) or on stdin
    Codex {
        /// The event (Codex's `notify` passes it here) [default: read stdin]
        event: Option<String>,
    },
    /// Add our hooks to an agent's hook settings
    Install(InstallArgs),
    /// Remove our hooks from an agent's hook settings (only ours)
    Uninstall(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Whose settings
    #[arg(value_enum)]
    pub agent: Agent,
    /// The user's settings (`~/.claude/settings.json`,
    /// `$CODEX_HOME/hooks.json`) [default]
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// A project's settings (`DIR/.claude/settings.json`,
    /// `DIR/.codex/hooks.json`)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the change and write nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

pub fn run(ctx: &Ctx, args: HookArgs) -> Result<u8> {
    match args.command {
        HookCommand::ClaudeCode => Ok(on_event(ctx, Agent::ClaudeCode, None)),
        HookCommand::Codex { event } => Ok(on_event(ctx, Agent::Codex, event)),
        HookCommand::Install(a) => edit(ctx, a, true),
        HookCommand::Uninstall(a) => edit(ctx, a, false),
    }
}

/// One hook call: import, and never fail the agent.
fn on_event(ctx: &Ctx, agent: Agent, arg: Option<String>) -> u8 {
    let raw = match arg {
        Some(a) => Ok(a.into_bytes()),
        None => {
            let mut raw = Vec::new();
            std::io::stdin()
                .take(MAX_EVENT_BYTES)
                .read_to_end(&mut raw)
                .io("read the hook event from", "stdin")
                .map(|_| raw)
        }
    };
    let event: Value = match raw {
        Ok(raw) => serde_json::from_slice(&raw).unwrap_or(Value::Null),
        Err(e) => {
            log(ctx, agent, &Value::Null, &e);
            return exit::OK;
        }
    };
    if let Err(e) = import(ctx, agent, &event) {
        log(ctx, agent, &event, &e);
    }
    exit::OK
}

fn import(ctx: &Ctx, agent: Agent, event: &Value) -> Result<()> {
    let (path, upto) = match event["type"].as_str() {
        // Codex `notify`: the turn is over.
        Some("agent-turn-complete") => {
            let thread = event["thread-id"].as_str().unwrap_or_default();
            (rollout_of(ctx, thread)?, Upto::End)
        }
        _ => {
            let Some(path) = event["transcript_path"].as_str().filter(|p| !p.is_empty()) else {
                return Err(Error::usage(
                    "usage::hook_event",
                    "the hook event names no `transcript_path`",
                    Some(format!(
                        "run `git-session hook {}` as the agent's hook: it reads the event on stdin",
                        agent.source()
                    )),
                ));
            };
            // The end of a turn (or of the session) writes everything; an
            // event in the middle of a turn writes the turns before it.
            let upto = match event["hook_event_name"].as_str() {
                Some("SessionEnd") => Upto::Final,
                Some("Stop" | "SubagentStop" | "PreCompact") => Upto::End,
                _ => Upto::EndedTurns,
            };
            (PathBuf::from(path), upto)
        }
    };
    let mut warnings = Vec::new();
    crate::import::transcript(ctx, agent, &path, None, false, upto, &mut |w| {
        warnings.push(w)
    })?;
    Ok(())
}

/// The rollout of Codex thread `thread`: the file its session last read,
/// else the newest `rollout-…-<thread>.jsonl` under `$CODEX_HOME/sessions`.
fn rollout_of(ctx: &Ctx, thread: &str) -> Result<PathBuf> {
    let session = format!("codex-{thread}");
    if crate::layout::ids::session_id(&session).is_err() {
        return Err(Error::usage(
            "usage::hook_event",
            format!("the Codex event names no usable `thread-id` (`{thread}`)"),
            None,
        ));
    }
    if let Some(p) = crate::import::known_path(ctx, &session, &session) {
        return Ok(p);
    }
    let root = crate::import::codex_home()?.join("sessions");
    let suffix = format!("-{thread}.jsonl");
    // Date directories newest first: a running thread's file is recent.
    walkdir::WalkDir::new(&root)
        .follow_links(false)
        .sort_by(|a, b| b.file_name().cmp(a.file_name()))
        .into_iter()
        .flatten()
        .find(|e| e.file_type().is_file() && e.file_name().to_string_lossy().ends_with(&suffix))
        .map(|e| e.into_path())
        .ok_or_else(|| {
            Error::refused(
                "hook::no_rollout",
                format!(
                    "no rollout of Codex thread `{thread}` under `{}`",
                    root.display()
                ),
                Some("set `CODEX_HOME` for the hook as Codex has it".into()),
            )
        })
}

/// Keep a failure for `verify` (never for the agent).
fn log(ctx: &Ctx, agent: Agent, event: &Value, e: &Error) {
    let line = json!({
        "time": crate::out::rfc3339(crate::out::now()),
        "agent": agent.source(),
        "event": event.get("hook_event_name").or(event.get("type")).unwrap_or(&Value::Null),
        "session_id": event.get("session_id").or(event.get("thread-id")).unwrap_or(&Value::Null),
        "transcript_path": event["transcript_path"],
        "error": crate::out::render_error(e).trim_end(),
    });
    let path = ctx.state.hook_log();
    let _ = ctx.state.ensure();
    let _ = (|| {
        use std::io::Write;
        let mut f =
            atomic::no_follow(std::fs::OpenOptions::new().append(true).create(true)).open(&path)?;
        f.write_all(format!("{line}\n").as_bytes())
    })();
}

/// The events our hooks run on.
fn events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::ClaudeCode => &[
            "UserPromptSubmit",
            "Stop",
            "SubagentStop",
            "PreCompact",
            "SessionEnd",
        ],
        Agent::Codex => &["UserPromptSubmit", "Stop"],
    }
}

/// The settings file `hook install` edits.
fn settings_file(a: &InstallArgs) -> Result<PathBuf> {
    Ok(match (a.agent, &a.project) {
        (Agent::ClaudeCode, Some(dir)) => dir.join(".claude").join("settings.json"),
        (Agent::Codex, Some(dir)) => dir.join(".codex").join("hooks.json"),
        (Agent::ClaudeCode, None) => {
            match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
                Some(d) => PathBuf::from(d).join("settings.json"),
                None => crate::layout::paths::home_dir(
                    "no `$HOME`, so no user settings file",
                    "use `--project DIR`",
                )?
                .join(".claude")
                .join("settings.json"),
            }
        }
        (Agent::Codex, None) => crate::import::codex_home()?.join("hooks.json"),
    })
}

/// The command our hook runs: this binary, this state dir.
fn hook_command(ctx: &Ctx, agent: Agent) -> Result<String> {
    let exe = std::env::current_exe().io("find", "this program")?;
    let state = std::path::absolute(&ctx.state.root).io("resolve", &ctx.state.root)?;
    Ok(format!(
        "{} --state-dir {} hook {}",
        settings::shell_word(&exe.to_string_lossy()),
        settings::shell_word(&state.to_string_lossy()),
        agent.source()
    ))
}

/// `hook install` (`add`) and `hook uninstall`.
fn edit(ctx: &Ctx, a: InstallArgs, add: bool) -> Result<u8> {
    let file = settings_file(&a)?;
    // A settings file that is a link (a dotfiles checkout) is edited where
    // it points, and stays a link.
    let target = match std::fs::canonicalize(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => file.clone(),
        Err(e) => return Err(e).io("resolve", &file),
    };
    let shown = file.display().to_string();
    if let Ok(md) = std::fs::metadata(&target)
        && !md.is_file()
    {
        return Err(Error::refused(
            "hook::settings_not_a_file",
            format!("`{shown}` is not a regular file"),
            Some("point the agent's settings at a JSON file (nothing was written)".into()),
        ));
    }
    let before = match atomic::read(&target) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).io("read", &target),
    };
    let mut doc: Value = match &before {
        Some(b) if !b.iter().all(u8::is_ascii_whitespace) => {
            serde_json::from_slice(b).map_err(|e| {
                Error::refused(
                    "hook::settings_not_json",
                    format!("`{shown}` is not JSON: {e}"),
                    Some("fix the file by hand (nothing was written)".into()),
                )
            })?
        }
        _ => json!({}),
    };
    let agent = a.agent.source();
    let changes = if add {
        let command = hook_command(ctx, a.agent)?;
        settings::install(
            &mut doc,
            &shown,
            agent,
            events(a.agent),
            &command,
            HOOK_TIMEOUT,
        )?
    } else {
        settings::uninstall(&mut doc, &shown, agent)?
    };
    let would = if a.dry_run { "would " } else { "" };
    for c in &changes {
        ctx.out.line(match c {
            Change::Added { event, command } => format!("+ {event}: {command}"),
            Change::Updated { event, from, to } => format!("~ {event}: {from} -> {to}"),
            Change::Removed { event, command } => format!("- {event}: {command}"),
        });
    }
    if changes.is_empty() {
        ctx.out.note(format!(
            "nothing to change in `{shown}`: {}",
            if add {
                "the hooks are installed"
            } else {
                "no hook of ours"
            }
        ));
    } else {
        if !a.dry_run {
            let mut text = serde_json::to_string_pretty(&doc).expect("JSON serialises");
            text.push('\n');
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir).io("create", dir)?;
            }
            let mode = std::fs::metadata(&target).map_or(0o644, |m| {
                use std::os::unix::fs::PermissionsExt;
                m.permissions().mode() & 0o7777
            });
            atomic::write_with_mode(&target, text.as_bytes(), mode)?;
        }
        ctx.out.note(format!(
            "{would}{} {} hook(s) {} `{shown}`",
            if add { "install" } else { "remove" },
            changes.len(),
            if add { "in" } else { "from" }
        ));
        if add && a.agent == Agent::Codex {
            ctx.out.note(
                "for a Codex without hooks, set `notify = [\"git-session\", \"hook\", \"codex\"]` in its config.toml",
            );
        }
    }
    let names = |f: fn(&Change) -> Option<&String>| -> Vec<String> {
        changes.iter().filter_map(f).cloned().collect()
    };
    ctx.out.record(&HookSettings {
        agent: agent.to_string(),
        path: shown,
        added: names(|c| match c {
            Change::Added { event, .. } => Some(event),
            _ => None,
        }),
        updated: names(|c| match c {
            Change::Updated { event, .. } => Some(event),
            _ => None,
        }),
        removed: names(|c| match c {
            Change::Removed { event, .. } => Some(event),
            _ => None,
        }),
        dry_run: a.dry_run,
    });
    Ok(exit::OK)
}
