//! A command line that cannot work: the `git_session::usage::…` errors,
//! raised by the library and by the commands alike, each with its stable
//! code and its next step (exit 2). Several variants may share a code: one
//! code, told in more than one way.

use std::path::PathBuf;

use crate::layout::schema::MAX_FILE_BYTES;

/// The `help:` of every hook event that cannot be read.
const HOOK_EVENT_HELP: &str = "an agent runs `git-session hook …` with one JSON object, its hook event, \
     on stdin (Codex's `notify`: as the last argument)";

/// The `help:` of a node over the size limit.
const ATTACH_HELP: &str = "store large payloads as attachments (`--attach`)";

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum Usage {
    // Ids, names and the environment.
    /// An id that breaks the id rules (SPEC §1).
    #[error("invalid {what} `{value}`: {reason}")]
    #[diagnostic(
        code(git_session::usage::invalid_id),
        help("ids are 1-128 characters of [A-Za-z0-9._-], not starting with `.` or `-`")
    )]
    InvalidId {
        what: &'static str,
        value: String,
        reason: &'static str,
    },

    /// A full reference name git refuses.
    #[error("invalid reference name `{name}`: {why}")]
    #[diagnostic(code(git_session::usage::ref_name))]
    RefName { name: String, why: String },

    /// A branch name git refuses.
    #[error("invalid branch name `{name}`: {why}")]
    #[diagnostic(code(git_session::usage::branch_name))]
    BranchName { name: String, why: String },

    /// No `$HOME` where one is needed: `message` says for what.
    #[error("{message}")]
    #[diagnostic(code(git_session::usage::no_home), help("{help}"))]
    NoHome {
        message: &'static str,
        help: &'static str,
    },

    /// An `OPENPROGRAM_PROFILE` that is no plain name.
    #[error("invalid `OPENPROGRAM_PROFILE` `{profile}`")]
    #[diagnostic(
        code(git_session::usage::profile),
        help("a profile is a plain name without `/`")
    )]
    Profile { profile: String },

    // Numbers and options.
    /// `--lock-timeout` negative or not a number.
    #[error("invalid `--lock-timeout` {value}")]
    #[diagnostic(
        code(git_session::usage::lock_timeout),
        help("give a number of seconds, 0 or more")
    )]
    LockTimeout { value: f64 },

    /// `title --timeout` negative or not a number.
    #[error("invalid `--timeout` {value}")]
    #[diagnostic(
        code(git_session::usage::timeout),
        help("give a number of seconds, 0 or more (`inf` waits without end)")
    )]
    Timeout { value: f64 },

    /// `commit-turn --duration` negative or not a number.
    #[error("invalid `--duration` {value}")]
    #[diagnostic(code(git_session::usage::duration), help("give seconds, 0 or more"))]
    DurationSeconds { value: f64 },

    /// A duration such as `90m` that does not parse.
    #[error("invalid duration `{value}`")]
    #[diagnostic(
        code(git_session::usage::duration),
        help("write a number with s, m, h, d or w, e.g. `90m` or `2d`")
    )]
    Duration { value: String },

    /// `--ingestion-time` not a finite number.
    #[error("invalid `--ingestion-time` {value}")]
    #[diagnostic(
        code(git_session::usage::ingestion_time),
        help("give unix seconds, e.g. 1796017556.5")
    )]
    IngestionTime { value: f64 },

    /// `--jobs 0`.
    #[error("`--jobs` must be at least 1")]
    #[diagnostic(code(git_session::usage::jobs))]
    Jobs,

    /// A `grep` pattern that is no regular expression.
    #[error("`{pattern}` is not a valid regular expression: {why}")]
    #[diagnostic(
        code(git_session::usage::pattern),
        help("fix the pattern, or give `-F` to search for it as it is")
    )]
    Pattern { pattern: String, why: String },

    /// A session status that is not one of `lifecycle::STATUSES`.
    #[error("unknown status `{status}`")]
    #[diagnostic(
        code(git_session::usage::status),
        help(
            "statuses are {} (`needs-input` is accepted too)",
            crate::lifecycle::STATUSES.join(", ")
        )
    )]
    SessionStatus { status: String },

    /// A project status that is not one of the three.
    #[error("unknown status `{status}`")]
    #[diagnostic(
        code(git_session::usage::status),
        help("statuses are active, paused, done")
    )]
    ProjectStatus { status: String },

    /// `update` with nothing to change.
    #[error("nothing to update")]
    #[diagnostic(
        code(git_session::usage::nothing_to_update),
        help("give --title, --pin/--unpin, --status, --read/--unread or --group")
    )]
    NothingToUpdate,

    /// `delete` without `--yes` where no one can be asked.
    #[error("deleting `{session}` needs confirmation")]
    #[diagnostic(
        code(git_session::usage::needs_confirmation),
        help("pass `--yes` to delete without asking")
    )]
    NeedsConfirmation { session: String },

    /// A path given for a project that leaves it.
    #[error("`{path}` is not a path inside the project")]
    #[diagnostic(
        code(git_session::usage::project_path),
        help("give paths relative to the project directory, without `..`")
    )]
    ProjectPath { path: String },

    /// `relocate --from` of a project that is not where `--from` says.
    #[error("`--from` completes a move to the path project `{project}` has; it is at `{}`", at.display())]
    #[diagnostic(
        code(git_session::usage::relocate_from),
        help("leave `--from` out to move the project")
    )]
    RelocateFrom { project: String, at: PathBuf },

    // A node and what it is made of (`append`).
    /// A role that is none of the three.
    #[error("unknown role `{role}`")]
    #[diagnostic(
        code(git_session::usage::role),
        help("roles are `user`, `assistant` (llm) and `tool` (code)")
    )]
    Role { role: String },

    /// `--regenerate` of something other than a top-level reply.
    #[error("`--regenerate` is for an assistant reply that names no predecessor or caller")]
    #[diagnostic(
        code(git_session::usage::regenerate),
        help("give `--role assistant`, without `--caller` or a `predecessor`")
    )]
    Regenerate,

    /// A node whose file would be over the limit.
    #[error("the node is {bytes} bytes, over the limit of {MAX_FILE_BYTES}")]
    #[diagnostic(code(git_session::usage::node_too_large), help("{ATTACH_HELP}"))]
    NodeTooLarge { bytes: usize },

    /// A node's text (a file, stdin) over the limit.
    #[error("`{}` is over the limit of {MAX_FILE_BYTES} bytes", path.display())]
    #[diagnostic(code(git_session::usage::node_too_large), help("{ATTACH_HELP}"))]
    InputTooLarge { path: PathBuf },

    /// A node's text that is not UTF-8.
    #[error("`{}` is not valid UTF-8", path.display())]
    #[diagnostic(
        code(git_session::usage::not_utf8),
        help("node text must be UTF-8; attach binary data with `--attach`")
    )]
    NotUtf8 { path: PathBuf },

    /// An attachment over the limit.
    #[error("attachment `{}` is {bytes} bytes, over the limit of {MAX_FILE_BYTES}", path.display())]
    #[diagnostic(code(git_session::usage::attachment_too_large))]
    AttachmentTooLarge { path: PathBuf, bytes: u64 },

    /// `append` with no text.
    #[error("no message: give `--text`, `--file` or `--json-node`")]
    #[diagnostic(
        code(git_session::usage::no_message),
        help("an empty message needs `--text \"\"` said explicitly")
    )]
    NoMessage,

    /// `--json-node` whose stdin does not parse.
    #[error("`--json-node`: stdin is not valid JSON: {why}")]
    #[diagnostic(
        code(git_session::usage::json_node),
        help("send one JSON object, e.g. {{\"role\": \"user\", \"output\": \"hi\"}}")
    )]
    JsonNodeNotJson { why: String },

    /// `--json-node` whose stdin is JSON but no object.
    #[error("`--json-node`: stdin must hold a JSON object")]
    #[diagnostic(code(git_session::usage::json_node))]
    JsonNodeNotObject,

    /// A field of `--json-node` of the wrong type.
    #[error("`--json-node`: `{field}` must be {must_be}")]
    #[diagnostic(code(git_session::usage::json_node))]
    JsonNodeField {
        field: &'static str,
        must_be: &'static str,
    },

    /// A `role` in `--json-node` that is none of the three.
    #[error("`--json-node`: unknown role `{role}`")]
    #[diagnostic(
        code(git_session::usage::role),
        help("roles are user, llm (assistant) and code (tool)")
    )]
    JsonNodeRole { role: String },

    /// `--input` that does not parse.
    #[error("`--input` is not valid JSON: {why}")]
    #[diagnostic(
        code(git_session::usage::input_json),
        help("give the tool's arguments as one JSON value, e.g. '{{\"path\": \"a.rs\"}}'")
    )]
    InputJson { why: String },

    // Remotes.
    /// A remote name that breaks the name rules.
    #[error("invalid remote name `{name}`")]
    #[diagnostic(
        code(git_session::usage::remote_name),
        help("a remote name is 1-64 characters of [A-Za-z0-9._-], not starting with `.` or `-`")
    )]
    RemoteName { name: String },

    /// A remote URL git may not be given.
    #[error("invalid remote URL `{url}`: {why}")]
    #[diagnostic(
        code(git_session::usage::remote_url),
        help(
            "give a URL git can push to: `https://…`, `ssh://…`, `git@host:path`, `file:///…` or a path"
        )
    )]
    RemoteUrl { url: String, why: &'static str },

    /// A remote's path that, made absolute, is not UTF-8.
    #[error("the path `{}` is not UTF-8", path.display())]
    #[diagnostic(code(git_session::usage::remote_url))]
    RemotePathNotUtf8 { path: PathBuf },

    /// A session to fetch whose id cannot be part of a ref name.
    #[error("session `{id}` cannot be fetched: its id cannot be part of a git ref name")]
    #[diagnostic(code(git_session::usage::session_ref))]
    SessionRef { id: String },

    /// `push`/`fetch --all` with session ids.
    #[error("`--all` and session ids do not go together")]
    #[diagnostic(
        code(git_session::usage::all_and_sessions),
        help("give one or the other")
    )]
    AllAndSessionIds,

    /// `secrets scan --all` with session names.
    #[error("`--all` and session names do not go together")]
    #[diagnostic(
        code(git_session::usage::all_and_sessions),
        help("name sessions, or give `--all`")
    )]
    AllAndSessionNames,

    /// `fetch --take` without sessions.
    #[error("`--take` resolves the sessions it is given, not every session")]
    #[diagnostic(
        code(git_session::usage::take_needs_sessions),
        help("name them: `git-session fetch {remote} --take {side} SESSION…`")
    )]
    TakeNeedsSessions { remote: String, side: String },

    // An agent's hook event.
    /// A hook event over the size limit.
    #[error("the hook event is over {max} bytes; nothing was read from it")]
    #[diagnostic(code(git_session::usage::hook_event), help("{HOOK_EVENT_HELP}"))]
    HookEventTooLarge { max: u64 },

    /// An empty hook event.
    #[error("the hook event is empty")]
    #[diagnostic(code(git_session::usage::hook_event), help("{HOOK_EVENT_HELP}"))]
    HookEventEmpty,

    /// A JSON object that is no hook event.
    #[error("the hook event is not an event: {why}")]
    #[diagnostic(code(git_session::usage::hook_event), help("{HOOK_EVENT_HELP}"))]
    HookEventNotEvent { why: String },

    /// A hook event that does not parse.
    #[error("the hook event is not JSON: {why}")]
    #[diagnostic(code(git_session::usage::hook_event), help("{HOOK_EVENT_HELP}"))]
    HookEventNotJson { why: String },

    /// A hook event that is JSON but no object.
    #[error("the hook event is not a JSON object")]
    #[diagnostic(code(git_session::usage::hook_event), help("{HOOK_EVENT_HELP}"))]
    HookEventNotObject,

    /// A hook event without its transcript.
    #[error("the hook event names no `transcript_path`")]
    #[diagnostic(
        code(git_session::usage::hook_event),
        help("run `git-session hook {agent}` as the agent's hook: it reads the event on stdin")
    )]
    HookEventNoTranscript { agent: &'static str },

    /// A Codex `notify` event whose thread cannot be a session id.
    #[error("the Codex event names no usable `thread-id` (`{thread}`)")]
    #[diagnostic(code(git_session::usage::hook_event))]
    HookEventThread { thread: String },

    // Man pages and completions.
    /// `man` of a page there is none of.
    #[error("no man page `{page}`")]
    #[diagnostic(
        code(git_session::usage::no_such_page),
        help(
            "give a command name (`append`, `verify`…), `layout`, `json`, `guide` or `performance`"
        )
    )]
    NoSuchPage { page: String },

    /// `completions --dir` of one shell.
    #[error("with `--dir`, give `all`")]
    #[diagnostic(code(git_session::usage::dir_needs_all))]
    DirNeedsAll,

    /// `completions` of a shell there is no script for.
    #[error("unknown shell `{shell}`")]
    #[diagnostic(code(git_session::usage::shell), help("shells are bash, zsh and fish"))]
    Shell { shell: String },

    // Export.
    /// `export --all` without `-o DIR`.
    #[error("`export --all` needs an output directory")]
    #[diagnostic(
        code(git_session::usage::export_dir),
        help("give one with `-o DIR`, e.g. `git-session export --all -o site`")
    )]
    ExportDir,

    /// An output directory that holds files and no export's manifest.
    #[error("`{}` holds files and no export of git-session", dir.display())]
    #[diagnostic(
        code(git_session::usage::export_dir_in_use),
        help("give an empty or new directory (or one an earlier `export --all` wrote)")
    )]
    ExportDirInUse { dir: PathBuf },

    /// An output path inside the state dir.
    #[error("`{}` is inside the state dir `{}`", dir.display(), state.display())]
    #[diagnostic(
        code(git_session::usage::export_in_state_dir),
        help("export to a directory outside the state dir")
    )]
    ExportInStateDir { dir: PathBuf, state: PathBuf },

    // Diff.
    /// `diff S A B` with A after B.
    #[error("turn {from} comes after turn {to}")]
    #[diagnostic(
        code(git_session::usage::diff_range),
        help("give the earlier turn first: `git-session diff {session} {to} {from}`")
    )]
    DiffRange { session: String, from: u64, to: u64 },
}
