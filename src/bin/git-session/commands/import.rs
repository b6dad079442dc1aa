//! `import`: keep another agent's conversations (SPEC §5; `import::claude`).
//!
//! Reads: the transcripts, the sessions they become (catalog, cursor).
//! Writes: each session's new nodes, meta.json, one commit per new turn,
//! the cursor, one index journal row. Locks: each session, exclusive.
//! Prints: one `imported` record per transcript, then `import_summary`.

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::import::{Agent, Outcome};
use git_session::out::Progress;
use git_session::out::records::{ImportSummary, Imported, SkippedLine};

/// Import an agent's transcripts: each becomes a session
/// (`claude-<sessionId>`, `codex-<id>`), one commit per turn dated by the
/// transcript, so that importing it again, or on another machine, gives
/// the same commits.
///
/// Typed user messages are user nodes; an assistant reply (Claude Code: its
/// records sharing one message id; Codex: one turn's output) is one
/// assistant node with its model and token usage; each tool call is a tool
/// node called by its reply, with the call's arguments as input and the
/// result as output; what a local command (`/model`, `/clear`, …) printed
/// (Claude Code's `<local-command-stdout>` record) is a `local-command` tool
/// node of the command's message, not a message; a compaction is a
/// `context/compact` record node. Every
/// transcript record is kept, unchanged, in `metadata.source_records` of
/// the node it went into. A transcript that grew adds only its new turns; a
/// torn last line is left for next time.
///
/// Live equals replay: for any sequence of prefixes of a transcript (cut
/// anywhere, a torn last line included) imported one after the other, or
/// fed through `hook`, the session ends byte-identical to one import of
/// the final file ended the same way (both with `--finish` or both
/// without), when nothing else wrote to it meanwhile: the same node files,
/// commits, commit ids and refs. A turn is written when the transcript has
/// closed it (a later message began the next turn, or its end record came:
/// Claude Code's `turn_duration`, Codex's `task_complete`), as one commit
/// whose meta.json is the one the turn left; what follows an end record is
/// the next turn's. The turn still open is kept whole in the session's
/// pending area (`.git/git-session/import.pending`, outside `history/`):
/// `show` and `nodes` list it as in progress, `verify` notes it, and no
/// `commit-turn`, `backfill` or `verify --fix` commits it early. `--finish`
/// (the `SessionEnd` hook) commits it, `Status: interrupted` when it was
/// cut off. Where the user stopped the agent (Claude Code writes
/// `[Request interrupted by user]` as a user record, no message of the
/// user's; Codex writes `turn_aborted`), the turn is over at once, its last
/// node keeps the marker (`metadata.interrupted`) and its commit says
/// `Status: interrupted`. A record that goes on from a compaction through
/// `logicalParentUuid` goes on from what came before it: one root.
///
/// A Claude Code subagent's transcript is a session of its own,
/// `claude-<sessionId>-<agentId>`, linked from the `Task` call that ran it
/// (`metadata.subagent_session`), in both layouts: under
/// `<session>/subagents/`, and the older `agent-<agentId>.jsonl` beside
/// the parent's file (whose `sessionId` names the parent). A subagent's
/// transcript has no end record of its own: it is over once the parent's
/// transcript holds the completed result of the call that ran it
/// (`toolUseResult.agentId`, no later call resuming it), or at `--finish`
/// or the `SessionEnd` hook; until then its turn waits. A Codex fork
/// (`forked_from_id`) goes into the session it was forked from, its new
/// turns on a retry branch. Codex rollouts from before `session_meta` (a
/// first line with `id`, `timestamp` and `instructions`, then bare
/// `message`, `function_call` and `function_call_output` items) are read
/// too: their items are dated by the header, their node ids are line
/// numbers (`u-line-3`), the working directory is the one the
/// `<environment_context>` message names.
///
/// A file with no conversation of this agent's in it (empty, not a
/// transcript, or the other agent's) is named in a warning and makes no
/// session; a FIFO, socket or device named on the command line is not read,
/// and counts as failed (exit 1), as does a transcript whose session id is
/// taken by a session no import of this agent made (`append --create`).
/// With no path, an agent whose default directory does not exist has
/// nothing to import: exit 1, before anything is read; so does a
/// `--project` that is not registered.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Whose transcripts
    #[arg(value_enum)]
    pub agent: Agent,
    /// Transcript files or directories (below a directory, every `*.jsonl`;
    /// a link or special file among them is named and not read)
    /// [default: `~/.claude/projects`, `$CODEX_HOME/sessions`
    /// (`~/.codex/sessions`)]
    pub paths: Vec<PathBuf>,
    /// Bind new sessions to this project [default: the registered project
    /// whose directory is the transcript's working directory]
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Print what would be imported and write nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// The sessions are over: also commit the turn each transcript left
    /// open (`Status: interrupted` when it was cut off: a call without its
    /// result, no reply after the last message or result, a Codex turn
    /// that never completed) and the records after its last node, as the
    /// `SessionEnd` hook does
    #[arg(long)]
    pub finish: bool,
}

pub fn run(ctx: &Ctx, args: ImportArgs) -> Result<u8> {
    // One `--project` for every transcript: checked once, before any is read.
    if let Some(p) = &args.project {
        git_session::project::get(&ctx.state, p)?;
    }
    let roots = if args.paths.is_empty() {
        let root = args.agent.default_root()?;
        // The agent's own place, not a path the user gave: its absence is
        // an answer (this agent has kept nothing here), not an I/O fault.
        if std::fs::symlink_metadata(&root).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            return Err(git_session::import::ImportError::NoDefaultTranscripts {
                agent: args.agent,
                root,
            }
            .into());
        }
        vec![root]
    } else {
        args.paths.clone()
    };
    let mut files = Vec::new();
    for r in &roots {
        files.extend(git_session::import::transcripts(r, &mut |w| {
            ctx.out.warn(w)
        })?);
    }
    let opts = git_session::import::Options {
        agent: args.agent,
        project: args.project.as_deref(),
        dry_run: args.dry_run,
        finish: args.finish,
        locks: ctx.locks,
    };
    let progress = Progress::new(&ctx.out, files.len() as u64, "import");
    let mut sum = ImportSummary {
        transcripts: files.len(),
        new_sessions: 0,
        turns: 0,
        nodes: 0,
        skipped: 0,
        failed: 0,
        dry_run: args.dry_run,
    };
    for f in &files {
        let mut warnings = Vec::new();
        let r = git_session::import::transcript(&ctx.state, f, &opts, &mut |w| warnings.push(w));
        progress.inc();
        for w in warnings {
            progress.suspend(|| ctx.out.warn(&w));
        }
        match r {
            Ok(o) => report(ctx, &args, f, &o, &progress, &mut sum),
            Err(e) => {
                sum.failed += 1;
                progress.suspend(|| {
                    eprint!(
                        "git-session: import of `{}` failed:\n{}",
                        git_session::out::terminal_safe(&f.display().to_string()),
                        git_session::out::render_error(&e)
                    )
                });
            }
        }
    }
    progress.finish();
    ctx.out.note(format!(
        "{} {} transcript(s): {} new session(s), {} turn(s), {} node(s), {} line(s) skipped, {} failed",
        if args.dry_run { "would import" } else { "imported" },
        sum.transcripts,
        sum.new_sessions,
        sum.turns,
        sum.nodes,
        sum.skipped,
        sum.failed
    ));
    let failed = sum.failed;
    ctx.out.record(&sum);
    Ok(if failed > 0 { exit::NO } else { exit::OK })
}

/// What one transcript's import did: counted into `sum`, said in
/// warnings, notes and a line, and one `imported` record.
fn report(
    ctx: &Ctx,
    args: &ImportArgs,
    f: &Path,
    o: &Outcome,
    progress: &Progress,
    sum: &mut ImportSummary,
) {
    sum.new_sessions += usize::from(o.created);
    sum.turns += o.turns;
    sum.nodes += o.nodes;
    sum.skipped += o.skipped.len();
    match o.no_conversation {
        Some(lines) => {
            let what = match lines {
                0 => "empty".to_string(),
                n => {
                    format!("no {} conversation in its {n} line(s)", args.agent.name())
                }
            };
            progress.suspend(|| {
                ctx.out
                    .warn(format!("`{}`: {what}: nothing imported", f.display()))
            });
        }
        None if o.unparsed > 0 => progress.suspend(|| {
            ctx.out.note(format!(
                "`{}`: {} line(s) are not JSON: kept as they are (`raw`)",
                f.display(),
                o.unparsed
            ))
        }),
        None => {}
    }
    for (line, why) in &o.skipped {
        progress.suspend(|| ctx.out.warn(format!("{}:{}: {why}", f.display(), line + 1)));
    }
    ctx.out.record(&Imported {
        session: o.session.clone(),
        path: f.display().to_string(),
        new_session: o.created,
        turns: o.turns,
        nodes: o.nodes,
        open_nodes: o.open,
        skipped: o
            .skipped
            .iter()
            .map(|(line, reason)| SkippedLine {
                line: line + 1,
                reason: reason.clone(),
            })
            .collect(),
        raw_lines: o.unparsed,
        no_conversation: o.no_conversation.is_some(),
        dry_run: args.dry_run,
    });
    if o.open > 0 {
        progress.suspend(|| {
            ctx.out.note(format!(
                "`{}`: its last turn is still open ({} node(s)): kept pending until the transcript closes it (`--finish` commits it now)",
                f.display(),
                o.open
            ))
        });
    }
    if o.nodes > 0 {
        progress.suspend(|| {
            ctx.out.line(format!(
                "{}: {} {} turn(s), {} node(s) into session `{}`",
                f.display(),
                if args.dry_run {
                    "would import"
                } else {
                    "imported"
                },
                o.turns,
                o.nodes,
                o.session
            ))
        });
    }
}
