//! What `import` refuses (`git_session::import::…`), and what the agents'
//! hooks refuse when installed or run (`git_session::hook::…`): the
//! transcript is not added, the settings file is not written (exit 1).

use std::path::PathBuf;

use super::Agent;

/// A transcript `import` does not add.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ImportError {
    /// A session of the transcript's id that no import of this agent made
    /// (`found`: its `source`, if set).
    #[error(
        "session `{session}` exists and is no import of {} (its source is {}): the transcript is not added to it",
        agent.source(),
        found.as_deref().map_or("not set".to_string(), |s| format!("`{s}`"))
    )]
    #[diagnostic(
        code(git_session::import::foreign_session),
        help(
            "move that session aside (`git-session delete {session}` once it is kept elsewhere), then import again"
        )
    )]
    ForeignSession {
        session: String,
        agent: Agent,
        found: Option<String>,
    },

    /// `import` without paths, and no directory where the agent keeps its
    /// transcripts.
    #[error(
        "no {} transcripts to import: `{}`, where {} keeps them, does not exist",
        agent.name(),
        root.display(),
        agent.name()
    )]
    #[diagnostic(
        code(git_session::import::no_default_transcripts),
        help(
            "name the transcripts or a directory of them: `git-session import {} PATH…`",
            agent.source()
        )
    )]
    NoDefaultTranscripts { agent: Agent, root: PathBuf },
}

/// An agent's settings file not edited, or a hook event not imported.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum HookError {
    /// A settings file that is JSON but no object.
    #[error("cannot edit `{file}`: the file is not a JSON object")]
    #[diagnostic(
        code(git_session::hook::settings_shape),
        help("fix the file by hand (nothing was written)")
    )]
    SettingsNotObject { file: String },

    /// A settings file whose `hooks` is no object.
    #[error("cannot edit `{file}`: its `hooks` is not an object")]
    #[diagnostic(
        code(git_session::hook::settings_shape),
        help("fix the file by hand (nothing was written)")
    )]
    HooksNotObject { file: String },

    /// A settings file whose `hooks.<event>` is no list.
    #[error("cannot edit `{file}`: its `hooks.{event}` is not a list")]
    #[diagnostic(
        code(git_session::hook::settings_shape),
        help("fix the file by hand (nothing was written)")
    )]
    EventNotList { file: String, event: String },

    /// A settings file that does not parse.
    #[error("`{file}` is not JSON: {why}")]
    #[diagnostic(
        code(git_session::hook::settings_not_json),
        help("fix the file by hand (nothing was written)")
    )]
    SettingsNotJson { file: String, why: String },

    /// A settings path that is a directory or a special file.
    #[error("`{file}` is not a regular file")]
    #[diagnostic(
        code(git_session::hook::settings_not_a_file),
        help("point the agent's settings at a JSON file (nothing was written)")
    )]
    SettingsNotAFile { file: String },

    /// A project's settings file that leads out of the project.
    #[error("`{file}` leads out of the project, to `{}`", target.display())]
    #[diagnostic(
        code(git_session::hook::settings_outside_project),
        help(
            "a project's settings file is edited inside it: remove the link, or edit the file it leads to itself (nothing was written)"
        )
    )]
    SettingsOutsideProject { file: String, target: PathBuf },

    /// This program's path or the state dir not UTF-8: the hook's
    /// command cannot be written as text.
    #[error("{what} `{}` is not UTF-8, and a settings file holds text", path.display())]
    #[diagnostic(
        code(git_session::hook::path_not_utf8),
        help(
            "use a state dir (and install the program) under a path that is UTF-8; nothing was written"
        )
    )]
    PathNotUtf8 { what: &'static str, path: PathBuf },

    /// A Codex `notify` event whose thread has no rollout file.
    #[error("no rollout of Codex thread `{thread}` under `{}`", root.display())]
    #[diagnostic(
        code(git_session::hook::no_rollout),
        help("set `CODEX_HOME` for the hook as Codex has it")
    )]
    NoRollout { thread: String, root: PathBuf },
}
