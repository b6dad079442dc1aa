//! What the project commands refuse (`project add`, `set`, `remove`,
//! `bind`, `log`, `relocate`, and `init --project`): the errors of this
//! area, each with its stable code (`git_session::project::…`) and its
//! next step; the registry is left as it is (exit 1). An agent commit's
//! skips and the project's HEAD on no branch are `git::project`'s.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ProjectError {
    /// A directory whose path is not UTF-8: the registry holds paths as
    /// text.
    #[error("`{}` cannot be a project: its path is not UTF-8", path.display())]
    #[diagnostic(
        code(git_session::project::path_not_utf8),
        help(
            "the project registry holds paths as text; rename the directory (or the one above it that is not UTF-8)"
        )
    )]
    PathNotUtf8 { path: PathBuf },

    /// A directory that is the tool's own (the state dir, inside it or
    /// holding it, a session repository).
    #[error("`{}` cannot be a project: {why}", path.display())]
    #[diagnostic(
        code(git_session::project::unusable_dir),
        help("give the directory of your own work tree")
    )]
    UnusableDir { path: PathBuf, why: &'static str },

    /// `project add` of a path that is no existing directory.
    #[error("`{}` is not an existing directory", path.display())]
    #[diagnostic(
        code(git_session::project::no_such_dir),
        help("create the directory first, or give the right path")
    )]
    NoSuchDir { path: PathBuf },

    /// `relocate` to a path that is no existing directory.
    #[error("`{}` is not an existing directory", path.display())]
    #[diagnostic(
        code(git_session::project::no_such_dir),
        help("give the directory the project moved to")
    )]
    NoSuchNewDir { path: PathBuf },

    /// `project add` of something other than a directory.
    #[error("`{}` is not a directory", path.display())]
    #[diagnostic(code(git_session::project::not_a_dir))]
    NotADir { path: PathBuf },

    /// No project of that id, name or path.
    #[error("no project `{key}`")]
    #[diagnostic(code(git_session::project::not_found))]
    NotFound {
        key: String,
        /// How to register one, or the projects there are.
        #[help]
        help: String,
    },

    /// `project remove default`.
    #[error("the default project cannot be unregistered")]
    #[diagnostic(code(git_session::project::default_is_label))]
    DefaultRemoved,

    /// `bind` to the default project.
    #[error("the default project is a label, not a binding")]
    #[diagnostic(
        code(git_session::project::default_is_label),
        help("bind to a project added with `git-session project add`")
    )]
    DefaultBound,

    /// `relocate default`.
    #[error("the default project cannot be relocated")]
    #[diagnostic(
        code(git_session::project::default_is_label),
        help("it is a label with no directory")
    )]
    DefaultRelocated,

    /// `project log` of a project whose directory is gone.
    #[error("project `{id}` has no directory")]
    #[diagnostic(
        code(git_session::project::dir_missing),
        help("run `git-session relocate {id} <new path>`")
    )]
    NoDirToLog { id: String },

    /// `init --project` of a project whose directory is gone.
    #[error("project `{id}` has no directory")]
    #[diagnostic(
        code(git_session::project::dir_missing),
        help("run `git-session relocate {id} <new path>` first")
    )]
    DirMissing { id: String },

    /// `bind` to a project whose directory is gone.
    #[error("project `{id}` has no directory at `{}`", path.display())]
    #[diagnostic(
        code(git_session::project::dir_missing),
        help("run `git-session relocate {id} <new path>` first")
    )]
    DirMissingAt { id: String, path: PathBuf },

    /// `bind` to a project `migrate` is moving.
    #[error("project `{id}` has a migration in progress")]
    #[diagnostic(
        code(git_session::project::migration_in_progress),
        help("run `git-session migrate` to finish it first")
    )]
    MigrationInProgress { id: String },

    /// `bind` of a session with turns to another project.
    #[error("project is frozen after the first turn: session `{session}` belongs to `{current}`")]
    #[diagnostic(
        code(git_session::project::frozen),
        help("start a new session for the other project")
    )]
    Frozen { session: String, current: String },
}
