//! `hook`: the record written while the agent works (SPEC §5; `import`).
//!
//! Reads: one hook event (JSON) on stdin, the transcript it names.
//! Writes: what `import` writes; a failure is appended to the state dir's
//! hook log instead of failing the agent. Locks: the session, exclusive.
//! Prints: nothing (an agent may feed a hook's output to its model).

use std::io::Read;

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::error::{Error, IoContext, Result, exit};
use crate::import::Upto;
use crate::layout::atomic;

/// The largest hook event read from stdin.
const MAX_EVENT_BYTES: u64 = 1 << 20;

/// Run as an agent's hook: import the conversation so far.
///
/// `hook claude-code` reads one Claude Code hook event on stdin
/// (`UserPromptSubmit`, `PostToolUse`, `Stop`, `SubagentStop`, `PreCompact`,
/// `SessionEnd`, …) and imports its `transcript_path` incrementally, as
/// `import claude-code` does: at the end of a turn (`Stop`, `SubagentStop`,
/// `PreCompact`, `SessionEnd`) everything, in the middle of one the turns
/// before it, so each turn is one commit as with one import (a transcript
/// that lags the event is caught up by the next call). It always exits 0 and prints nothing, so that it never
/// blocks or disturbs the agent: a failure is appended to
/// `git-session-hooks.log` in the state directory, which `verify --all`
/// reports. Configure it in Claude Code's `settings.json`, e.g. `"hooks":
/// {"Stop": [{"hooks": [{"type": "command", "command": "git-session hook
/// claude-code"}]}]}`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// Whose hook event
    #[arg(value_enum)]
    pub agent: super::import::Agent,
}

pub fn run(ctx: &Ctx, args: HookArgs) -> Result<u8> {
    let super::import::Agent::ClaudeCode = args.agent;
    let mut raw = Vec::new();
    let read = std::io::stdin()
        .take(MAX_EVENT_BYTES)
        .read_to_end(&mut raw)
        .io("read the hook event from", "stdin");
    let event: Value = match read {
        Ok(_) => serde_json::from_slice(&raw).unwrap_or(Value::Null),
        Err(e) => {
            log(ctx, &Value::Null, &e);
            return Ok(exit::OK);
        }
    };
    if let Err(e) = import(ctx, &event) {
        log(ctx, &event, &e);
    }
    Ok(exit::OK)
}

fn import(ctx: &Ctx, event: &Value) -> Result<()> {
    let Some(path) = event["transcript_path"].as_str().filter(|p| !p.is_empty()) else {
        return Err(Error::usage(
            "usage::hook_event",
            "the hook event names no `transcript_path`",
            Some("run `git-session hook claude-code` as a Claude Code hook: it reads the event on stdin".into()),
        ));
    };
    // The end of a turn (or of the session) writes everything; an event in
    // the middle of a turn writes the turns before it.
    let upto = match event["hook_event_name"].as_str() {
        Some("Stop" | "SubagentStop" | "SessionEnd" | "PreCompact") => Upto::End,
        _ => Upto::EndedTurns,
    };
    let mut warnings = Vec::new();
    crate::import::claude_code(
        ctx,
        std::path::Path::new(path),
        None,
        false,
        upto,
        &mut |w| warnings.push(w),
    )?;
    Ok(())
}

/// Keep a failure for `verify` (never for the agent).
fn log(ctx: &Ctx, event: &Value, e: &Error) {
    let line = json!({
        "time": crate::out::rfc3339(crate::out::now()),
        "agent": "claude-code",
        "event": event["hook_event_name"],
        "session_id": event["session_id"],
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
