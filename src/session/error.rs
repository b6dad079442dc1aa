//! What is refused about a session's directory or repository
//! (`git_session::session::…`): a directory that is a link, that is
//! another session, or a repository in a format this tool does not write;
//! nothing is read or written (exit 1). A session that is not there at
//! all is `Error::SessionNotFound`.

use std::path::PathBuf;

/// The `help:` of a repository in another format.
const REPO_FORMAT_HELP: &str = "git-session writes git's default repository format (SHA-1 object names, refs as \
     files), which a repository in another one (made under git's \
     `init.defaultObjectFormat` or `init.defaultRefFormat`, say) would not read: move its \
     `.git` aside, and `git-session backfill <session>` makes it again from the node files";

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SessionError {
    /// A session directory that is a symbolic link (SPEC §6).
    #[error("session directory `{}` is a symbolic link", dir.display())]
    #[diagnostic(
        code(git_session::session::linked_dir),
        help(
            "git-session does not follow symlinked session directories; \
             move the repository to where the link points"
        )
    )]
    LinkedDir { dir: PathBuf },

    /// The same, met by `backfill`.
    #[error("session directory `{}` is a symbolic link", dir.display())]
    #[diagnostic(
        code(git_session::session::linked_dir),
        help("backfill does not follow symlinked session directories")
    )]
    LinkedDirToBackfill { dir: PathBuf },

    /// A directory whose meta.json names another session.
    #[error("`{}` is not session `{id}`: its meta.json names `{named}`", dir.display())]
    #[diagnostic(
        code(git_session::session::not_this_session),
        help(
            "nothing was read or written; fix the entry for `{id}` in locations.json, or run `git-session verify --all`"
        )
    )]
    NamesAnother {
        dir: PathBuf,
        id: String,
        named: String,
    },

    /// A directory from `locations.json` with no meta.json naming it.
    #[error("`{}` is not session `{id}`: it has no meta.json naming it", dir.display())]
    #[diagnostic(
        code(git_session::session::not_this_session),
        help(
            "nothing was read or written; fix the entry for `{id}` in locations.json, or run `git-session verify --all`"
        )
    )]
    NotNamed { dir: PathBuf, id: String },

    /// A repository format version above 1.
    #[error("`{}` says repository format version {version}", path.display())]
    #[diagnostic(code(git_session::session::repo_format), help("{REPO_FORMAT_HELP}"))]
    FormatVersion { path: PathBuf, version: i64 },

    /// A repository format version that is no number.
    #[error("`{}` has a repository format version that is no number", path.display())]
    #[diagnostic(code(git_session::session::repo_format), help("{REPO_FORMAT_HELP}"))]
    FormatVersionNotNumber { path: PathBuf },

    /// An `extensions.*` setting git would read the repository by.
    #[error("`{}` sets `extensions.{key} = {value}`", path.display())]
    #[diagnostic(code(git_session::session::repo_format), help("{REPO_FORMAT_HELP}"))]
    Extension {
        path: PathBuf,
        key: String,
        value: String,
    },
}
