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

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::context::Ctx;
use git_session::error::{Error, IoContext, Result, Usage, exit};
use git_session::import::settings::{self, Change};
use git_session::import::{Agent, HookError};
use git_session::layout::atomic;
use git_session::layout::paths::HOOK_LOG_BYTES;
use git_session::out::records::HookSettings;

/// The largest hook event read (its fields but a few are skipped as they
/// are read: the size bounds the time, not the memory).
const MAX_EVENT_BYTES: u64 = git_session::layout::schema::MAX_FILE_BYTES;

/// Seconds an agent gives our hook before it gives up on it.
const HOOK_TIMEOUT: u64 = 60;

/// Run as an agent's hook, or add the hooks to an agent's settings.
///
/// `hook claude-code` reads one Claude Code hook event on stdin
/// (`UserPromptSubmit`, `PostToolUse`, `Stop`, `SubagentStop`, `PreCompact`,
/// `SessionEnd`, …) and imports its `transcript_path` incrementally, as
/// `import claude-code` does: every turn the transcript has closed (a later
/// message, or its `turn_duration` record), one commit each; the turn still
/// open waits, whole, in the session's pending area; `SessionEnd` commits
/// it too, as `import --finish` does (`Status: interrupted` when it was cut
/// off). `Stop`, `SubagentStop` and `SessionEnd` also import the
/// session's subagent transcripts (under its `subagents/` directory, the
/// older `agent-*.jsonl` beside it naming it, `SubagentStop`'s
/// `agent_transcript_path`) into sessions of their own, each over once the
/// parent holds its result, or with `SessionEnd`.
/// So a session built by the hooks while the agent works is, to the
/// commit id, the one a single import of the finished transcript makes,
/// ended the same way, however many events came and whatever each saw (a
/// transcript that lags the event is caught up by the next call). `hook
/// codex` does the same for Codex (a turn closes at its `task_complete`):
/// its `notify` program gets the event as its last argument
/// (`agent-turn-complete`, naming the thread, whose rollout is found under
/// `$CODEX_HOME/sessions`), its hooks on stdin. A hook always exits 0 (even
/// on a command line it cannot use, said on stderr) and prints nothing on
/// stdout, so that it never blocks or disturbs the agent: a failure
/// is appended to `git-session-hooks.log` in the state directory (past
/// 1 MiB moved to `git-session-hooks.log.1` first), which `verify --all`
/// reports.
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
    ///
    /// Each hook runs this program on this state dir: `<its path>
    /// --state-dir <the state dir> hook <agent>` (60 seconds allowed), so
    /// that the agent's turns are recorded where this command would look.
    /// `claude-code`: on `UserPromptSubmit`, `Stop`, `SubagentStop`,
    /// `PreCompact` and `SessionEnd`, in `~/.claude/settings.json`
    /// (`$CLAUDE_CONFIG_DIR/settings.json` when set; with `--project DIR`,
    /// `DIR/.claude/settings.json`). `codex`: on `UserPromptSubmit` and
    /// `Stop`, in `$CODEX_HOME/hooks.json` (`~/.codex/hooks.json`; with
    /// `--project DIR`, `DIR/.codex/hooks.json`), and for a Codex without
    /// hooks it prints the `notify` line to set in its `config.toml`,
    /// running the same command. Every other key and hook is kept; twice
    /// changes nothing; `--dry-run` prints the change and writes nothing.
    Install(InstallArgs),
    /// Remove our hooks from an agent's hook settings (only ours)
    Uninstall(InstallArgs),
}

/// An agent whose hook settings `hook install` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookAgent {
    /// Claude Code: its `settings.json`
    ClaudeCode,
    /// Codex CLI: its `hooks.json` (and the `notify` line of its `config.toml`)
    Codex,
}

impl HookAgent {
    fn agent(self) -> Agent {
        match self {
            HookAgent::ClaudeCode => Agent::ClaudeCode,
            HookAgent::Codex => Agent::Codex,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent: `claude-code` (Claude Code) or `codex` (Codex CLI)
    #[arg(value_enum)]
    pub agent: HookAgent,
    /// The user's settings (`~/.claude/settings.json`,
    /// `$CODEX_HOME/hooks.json`) [default]
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// A project's settings (`DIR/.claude/settings.json`,
    /// `DIR/.codex/hooks.json`); a link there that leads out of DIR is
    /// refused
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the change and write nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

impl HookArgs {
    /// A call as an agent's hook (not `install`/`uninstall`): it exits 0.
    pub fn is_agent_event(&self) -> bool {
        matches!(
            self.command,
            HookCommand::ClaudeCode | HookCommand::Codex { .. }
        )
    }
}

/// Whether a command line the parser refused was meant as an agent's hook
/// (`hook claude-code`, `hook codex`): it exits 0 all the same, for Claude
/// Code takes exit 2 for "block" and would stop the agent on it.
pub fn is_agent_hook_line(argv: &[std::ffi::OsString]) -> bool {
    argv.windows(2)
        .any(|w| w[0] == "hook" && (w[1] == "claude-code" || w[1] == "codex"))
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
    let event = match arg {
        Some(a) => Event::read(&mut a.as_bytes()),
        None => git_session::out::with_stdin(MAX_EVENT_BYTES + 1, Event::read),
    };
    let (event, result) = match event {
        Ok(event) => {
            let result = import(ctx, agent, &event);
            (event, result)
        }
        Err(e) => (Event::default(), Err(e)),
    };
    if let Err(e) = result {
        log(ctx, agent, &event, &e);
    }
    exit::OK
}

/// The fields of a hook event that a hook reads. Every other field (a
/// pasted `prompt`, a `tool_response` of megabytes) is skipped as it is
/// parsed, never kept. A field of another type than a string counts as
/// absent.
#[derive(Debug, Default, serde::Deserialize)]
struct Event {
    /// Codex's `notify`: `agent-turn-complete`.
    #[serde(rename = "type")]
    kind: Option<Value>,
    #[serde(rename = "thread-id")]
    thread_id: Option<Value>,
    hook_event_name: Option<Value>,
    session_id: Option<Value>,
    transcript_path: Option<Value>,
    /// `SubagentStop`: the subagent's own transcript.
    agent_transcript_path: Option<Value>,
}

fn text(v: &Option<Value>) -> Option<&str> {
    v.as_ref().and_then(Value::as_str)
}

impl Event {
    /// One event from `input`, which ends at most one byte past
    /// [`MAX_EVENT_BYTES`].
    fn read(input: &mut dyn Read) -> Result<Event> {
        struct Counted<'a>(&'a mut dyn Read, u64);
        impl Read for Counted<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.read(buf)?;
                self.1 += n as u64;
                Ok(n)
            }
        }
        let mut counted = Counted(input, 0);
        let (first, parsed) = {
            let mut reader = std::io::BufReader::with_capacity(1 << 16, &mut counted);
            let first = (|| loop {
                let buf = reader.fill_buf()?;
                match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                    Some(at) => {
                        let first = buf[at];
                        reader.consume(at);
                        return Ok(Some(first));
                    }
                    None if buf.is_empty() => return Ok(None),
                    None => {
                        let n = buf.len();
                        reader.consume(n);
                    }
                }
            })()
            .io("read the hook event from", "stdin")?;
            // Only an object: serde would take an array for the fields in
            // their order.
            let parsed = (first == Some(b'{')).then(|| serde_json::from_reader::<_, Event>(reader));
            (first, parsed)
        };
        let invalid = match (first, parsed) {
            (_, Some(Ok(event))) => return Ok(event),
            _ if counted.1 > MAX_EVENT_BYTES => Usage::HookEventTooLarge {
                max: MAX_EVENT_BYTES,
            },
            (_, Some(Err(e))) if e.is_io() => {
                return Err(std::io::Error::from(e)).io("read the hook event from", "stdin");
            }
            (None, _) => Usage::HookEventEmpty,
            (_, Some(Err(e))) if e.is_data() => Usage::HookEventNotEvent { why: e.to_string() },
            (_, Some(Err(e))) => Usage::HookEventNotJson { why: e.to_string() },
            (Some(_), None) => Usage::HookEventNotObject,
        };
        Err(invalid.into())
    }
}

fn import(ctx: &Ctx, agent: Agent, event: &Event) -> Result<()> {
    let (path, finish) = match text(&event.kind) {
        // Codex `notify`: the turn is over.
        Some("agent-turn-complete") => {
            let thread = text(&event.thread_id).unwrap_or_default();
            (rollout_of(ctx, thread)?, false)
        }
        _ => {
            let Some(path) = text(&event.transcript_path).filter(|p| !p.is_empty()) else {
                return Err(Usage::HookEventNoTranscript {
                    agent: agent.source(),
                }
                .into());
            };
            // Every event writes the turns the transcript has closed; the
            // end of the session also the turn it left open.
            let finish = text(&event.hook_event_name) == Some("SessionEnd");
            (PathBuf::from(path), finish)
        }
    };
    let opts = git_session::import::Options {
        agent,
        project: None,
        dry_run: false,
        finish,
        locks: ctx.locks,
    };
    let mut warnings = Vec::new();
    let mut warn = |w| warnings.push(w);
    // A transcript not written yet (an event may come before the agent
    // writes its file): nothing to record yet, no failure.
    let absent = |p: &Path| {
        std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    };
    let main = if absent(&path) {
        Ok(git_session::import::Outcome::default())
    } else {
        git_session::import::transcript(&ctx.state, &path, &opts, &mut warn)
    };
    // A subagent's transcript is a session of its own, over once the
    // parent's transcript holds the result of the call that ran it (an
    // import of it says so), or with the session's end. The events that
    // end a turn or a subagent (`Stop`, `SubagentStop`, `SessionEnd`: about
    // once a turn, not at every prompt) look at the session's subagents,
    // under `<session>/subagents/` and the older layout's `agent-*.jsonl`
    // beside the session's transcript, naming it (so one whose file lagged
    // its `SubagentStop` is caught up by the next `Stop`); `SubagentStop`
    // at its own. Each is tried whatever became of the others.
    let name = text(&event.hook_event_name);
    let mut subagents: Vec<PathBuf> = Vec::new();
    let mut listed = Ok(());
    if agent == Agent::ClaudeCode && matches!(name, Some("Stop" | "SubagentStop" | "SessionEnd")) {
        let dir = path.with_extension("").join("subagents");
        if dir.is_dir() {
            match git_session::import::transcripts(&dir, &mut warn) {
                Ok(found) => subagents = found,
                Err(e) => listed = Err(e),
            }
        }
        let session = match &main {
            Ok(out) if !out.session.is_empty() => Some(out.session.clone()),
            _ => text(&event.session_id).map(|s| format!("claude-{s}")),
        };
        if let (Some(session), Some(beside)) = (session, path.parent()) {
            subagents.extend(git_session::import::subagents_beside(beside, &session));
        }
    }
    if name == Some("SubagentStop")
        && let Some(own) = text(&event.agent_transcript_path).filter(|p| !p.is_empty())
        && !subagents.iter().any(|p| p == Path::new(own))
    {
        subagents.push(PathBuf::from(own));
    }
    let mut failed = main.err().or(listed.err());
    for sub in subagents.iter().filter(|p| !absent(p)) {
        if let Err(e) = git_session::import::transcript(&ctx.state, sub, &opts, &mut warn) {
            failed.get_or_insert(e);
        }
    }
    failed.map_or(Ok(()), Err)
}

/// The rollout of Codex thread `thread`: the file its session last read,
/// else the newest `rollout-…-<thread>.jsonl` under `$CODEX_HOME/sessions`.
fn rollout_of(ctx: &Ctx, thread: &str) -> Result<PathBuf> {
    let session = format!("codex-{thread}");
    if git_session::layout::ids::session_id(&session).is_err() {
        return Err(Usage::HookEventThread {
            thread: thread.to_string(),
        }
        .into());
    }
    if let Some(p) = git_session::import::known_path(&ctx.state, &session, &session) {
        return Ok(p);
    }
    let root = git_session::import::codex_home()?.join("sessions");
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
            HookError::NoRollout {
                thread: thread.to_string(),
                root,
            }
            .into()
        })
}

/// Keep a failure for `verify` (never for the agent).
fn log(ctx: &Ctx, agent: Agent, event: &Event, e: &Error) {
    let line = json!({
        "time": git_session::out::rfc3339(git_session::out::now()),
        "agent": agent.source(),
        "event": logged(event.hook_event_name.as_ref().or(event.kind.as_ref())),
        "session_id": logged(event.session_id.as_ref().or(event.thread_id.as_ref())),
        "transcript_path": logged(event.transcript_path.as_ref()),
        "error": clipped(git_session::out::render_error(e).trim_end()),
    });
    let _ = ctx.state.ensure();
    let _ = (|| {
        use std::io::Write;
        open_log(&ctx.state)?.write_all(format!("{line}\n").as_bytes())
    })();
}

/// The hook log, to append to: never through a link, and past
/// [`HOOK_LOG_BYTES`] moved to the older part first, under the log's own
/// `flock` (a hook that finds it taken appends without moving anything:
/// never a wait for the agent).
fn open_log(state: &git_session::layout::StateDir) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::MetadataExt;
    let path = state.hook_log();
    let open =
        || atomic::no_follow(std::fs::OpenOptions::new().append(true).create(true)).open(&path);
    for _ in 0..3 {
        let f = open()?;
        if f.try_lock().is_err() {
            return Ok(f);
        }
        let md = f.metadata()?;
        // Moved aside by another hook since it was opened: open the new one.
        let here = std::fs::symlink_metadata(&path)
            .is_ok_and(|m| (m.dev(), m.ino()) == (md.dev(), md.ino()));
        if !here {
            continue;
        }
        // Moved aside past the limit; where it cannot be (a directory
        // planted in the older part's place), the line still goes in.
        if md.len() < HOOK_LOG_BYTES || std::fs::rename(&path, state.hook_log_older()).is_err() {
            return Ok(f);
        }
    }
    open()
}

/// The most of one field of a hook event, or of an error, that goes into
/// the hook log: an event of megabytes leaves a line of a few kilobytes.
const MAX_LOGGED: usize = 4096;

/// A field of an event as the hook log keeps it.
fn logged(v: Option<&Value>) -> Value {
    match v {
        None => Value::Null,
        Some(Value::String(s)) => clipped(s).into(),
        Some(v) => match v.to_string() {
            t if t.len() > MAX_LOGGED => clipped(&t).into(),
            _ => v.clone(),
        },
    }
}

/// `s`, cut after [`MAX_LOGGED`] bytes with its length said.
fn clipped(s: &str) -> String {
    if s.len() <= MAX_LOGGED {
        return s.to_string();
    }
    let cut = git_session::read::floor_char(s, MAX_LOGGED);
    format!("{}… ({} bytes)", &s[..cut], s.len())
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
    Ok(match (a.agent.agent(), &a.project) {
        (Agent::ClaudeCode, Some(dir)) => dir.join(".claude").join("settings.json"),
        (Agent::Codex, Some(dir)) => dir.join(".codex").join("hooks.json"),
        (Agent::ClaudeCode, None) => {
            match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
                Some(d) => PathBuf::from(d).join("settings.json"),
                None => git_session::layout::paths::home_dir(
                    "no `$HOME`, so no user settings file",
                    "use `--project DIR`",
                )?
                .join(".claude")
                .join("settings.json"),
            }
        }
        (Agent::Codex, None) => git_session::import::codex_home()?.join("hooks.json"),
    })
}

/// The command our hook runs, word by word: this binary, this state dir.
fn hook_argv(ctx: &Ctx, agent: Agent) -> Result<Vec<String>> {
    let exe = std::env::current_exe().io("find", "this program")?;
    let state = std::path::absolute(&ctx.state.root).io("resolve", &ctx.state.root)?;
    // A settings file is JSON text: a lossy spelling of either path would
    // name another program or another state dir, and the agent's hooks
    // would record every conversation where the user never looks.
    fn utf8(p: &std::path::Path, what: &'static str) -> Result<String> {
        p.to_str().map(str::to_string).ok_or_else(|| {
            HookError::PathNotUtf8 {
                what,
                path: p.to_path_buf(),
            }
            .into()
        })
    }
    Ok(vec![
        utf8(&exe, "this program's path")?,
        "--state-dir".into(),
        utf8(&state, "the state dir")?,
        "hook".into(),
        agent.source().into(),
    ])
}

/// The command our hook runs, as a shell command line (hook settings).
fn hook_command(argv: &[String]) -> String {
    argv.iter()
        .map(|w| settings::shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Codex's `notify` setting running `argv`: a TOML array of strings (a
/// JSON string is a TOML basic string).
fn notify_line(argv: &[String]) -> String {
    let words: Vec<String> = argv
        .iter()
        .map(|w| serde_json::to_string(w).expect("a string serialises"))
        .collect();
    format!("notify = [{}]", words.join(", "))
}

/// `path` with its longest part that exists resolved (links followed, made
/// absolute) and the rest after it as written.
fn resolved(path: &std::path::Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut there = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(there) {
            return rest.iter().rev().fold(real, |p, n| p.join(n));
        }
        match (there.parent(), there.file_name()) {
            (Some(up), Some(name)) => {
                rest.push(name.to_os_string());
                there = if up.as_os_str().is_empty() {
                    std::path::Path::new(".")
                } else {
                    up
                };
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `hook install` (`add`) and `hook uninstall`.
fn edit(ctx: &Ctx, a: InstallArgs, add: bool) -> Result<u8> {
    let file = settings_file(&a)?;
    // A settings file that is a link (a dotfiles checkout) is edited where
    // it points, and stays a link.
    let target = match std::fs::canonicalize(&file) {
        Ok(t) => t,
        // Not there yet: where the part of its path that is there (perhaps
        // a link) leads, and the rest.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => resolved(&file),
        Err(e) => return Err(e).io("resolve", &file),
    };
    let shown = file.display().to_string();
    // A project's settings are the project's: a link in a repository (one
    // cloned from anywhere) that leads out of it, to the user's own
    // settings say, is not followed.
    if let Some(dir) = &a.project {
        let root = std::fs::canonicalize(dir).io("resolve", dir)?;
        if !target.starts_with(&root) {
            return Err(HookError::SettingsOutsideProject {
                file: shown,
                target,
            }
            .into());
        }
    }
    if let Ok(md) = std::fs::metadata(&target)
        && !md.is_file()
    {
        return Err(HookError::SettingsNotAFile { file: shown }.into());
    }
    let before = match atomic::read(&target) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).io("read", &target),
    };
    let mut doc: Value = match &before {
        Some(b) if !b.iter().all(u8::is_ascii_whitespace) => {
            serde_json::from_slice(b).map_err(|e| HookError::SettingsNotJson {
                file: shown.clone(),
                why: e.to_string(),
            })?
        }
        _ => json!({}),
    };
    let agent = a.agent.agent().source();
    // Only an install names the command (an uninstall finds ours by it).
    let argv = if add {
        hook_argv(ctx, a.agent.agent())?
    } else {
        Vec::new()
    };
    let changes = if add {
        settings::install(
            &mut doc,
            &shown,
            agent,
            events(a.agent.agent()),
            &hook_command(&argv),
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
        if add && a.agent == HookAgent::Codex {
            ctx.out.note(format!(
                "for a Codex without hooks, set `{}` in its config.toml",
                notify_line(&argv)
            ));
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
