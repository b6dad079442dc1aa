//! What the mirror refuses: a node under both namings when a turn is
//! committed (`git_session::mirror::…`), and a rename to one naming that
//! cannot be done (`git_session::rename::…`); nothing is committed or
//! renamed (exit 1).

use std::path::PathBuf;

/// A commit of the pending nodes that would hold a node twice.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum MirrorError {
    /// `file` is node `other` under the other naming, with the same bytes.
    #[error(
        "`{file}` is node `{other}` under the other naming (a rename to one naming cut short?): nothing was committed"
    )]
    #[diagnostic(
        code(git_session::mirror::node_named_twice),
        help("`git-session verify --fix` finishes the rename")
    )]
    NodeNamedTwice { file: String, other: String },

    /// The same, the two files differing (another writer rewrote the
    /// node in `history`).
    #[error(
        "`{file}` is node `{other}` under the other naming (a rename to one naming cut short?): nothing was committed"
    )]
    #[diagnostic(
        code(git_session::mirror::node_named_twice),
        help(
            "the two files differ (another writer rewrote the node under its naming): keep one, move the other out of `{}`, then commit again",
            history.display()
        )
    )]
    NodeNamedTwiceDiffering {
        file: String,
        other: String,
        history: PathBuf,
    },
}

/// A rename to the Python store's naming that cannot be done.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RenameError {
    /// HEAD on an earlier turn: the node files are renamed from the latest.
    #[error(
        "HEAD of `{session}` is on an earlier turn (detached): the node files are renamed from the latest"
    )]
    #[diagnostic(
        code(git_session::rename::detached_head),
        help(
            "`git-session checkout {session} <branch>` (`git-session branch {session}` lists them), then run it again"
        )
    )]
    DetachedHead { session: String },

    /// One of the two names a link or a special file.
    #[error("`{}` or `{}` is not a regular file", from.display(), to.display())]
    #[diagnostic(
        code(git_session::rename::not_a_file),
        help("move it out of history/ (`git-session verify` says what it is)")
    )]
    NotAFile { from: PathBuf, to: PathBuf },

    /// Both names on disk with different bytes.
    #[error(
        "`{}` and `{}` are one node under two names with different contents",
        from.display(),
        to.display()
    )]
    #[diagnostic(
        code(git_session::rename::conflict),
        help(
            "keep the right one (the later writer's, as a rule) and move the other out of history/, then run it again"
        )
    )]
    Conflict { from: PathBuf, to: PathBuf },
}
