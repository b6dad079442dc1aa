//! What `append` refuses (`git_session::append::…`): a node or an
//! attachment that cannot be added as asked; nothing is written (exit 1).
//! And `init` of a session that exists bound to another project
//! (`git_session::init::…`).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum AppendError {
    /// `--id` of a node the session has.
    #[error("node `{id}` already exists in session `{}`", dir.display())]
    #[diagnostic(
        code(git_session::append::node_exists),
        help("node ids are unique in a session; omit `--id` to get a fresh one")
    )]
    NodeExists { id: String, dir: PathBuf },

    /// `--regenerate` with the head in no turn.
    #[error("the head is in no turn: there is no user message to answer again")]
    #[diagnostic(
        code(git_session::append::nothing_to_regenerate),
        help("append the user message first, or name the node to answer with `--predecessor`")
    )]
    NothingToRegenerate,

    /// A predecessor the session does not have.
    #[error("predecessor `{id}` is not a node of this session")]
    #[diagnostic(
        code(git_session::append::no_such_predecessor),
        help("name an existing node id (see `git-session show`), or `ROOT` for a first turn")
    )]
    NoSuchPredecessor { id: String },

    /// A caller the session does not have.
    #[error("caller `{id}` is not a node of this session")]
    #[diagnostic(
        code(git_session::append::no_such_caller),
        help("name an existing node id, or leave `--caller` out")
    )]
    NoSuchCaller { id: String },

    /// A second first turn without a predecessor.
    #[error("a second top-level user node needs a predecessor")]
    #[diagnostic(
        code(git_session::append::second_root),
        help("give `--predecessor <node id>` (or `ROOT` to retry the first turn)")
    )]
    SecondRoot,

    /// A node file of this seq written meanwhile by another writer.
    #[error("`{}` already exists", path.display())]
    #[diagnostic(
        code(git_session::append::seq_taken),
        help("another writer used this seq; run the command again")
    )]
    SeqTaken { path: PathBuf },

    /// An attachment's file written meanwhile by another writer.
    #[error("`{}` already exists", path.display())]
    #[diagnostic(
        code(git_session::append::attachment_exists),
        help("rename the attachment")
    )]
    AttachmentExists { path: PathBuf },

    /// An attachment that is a link, a directory or a special file.
    #[error("attachment `{}` is not a regular file", path.display())]
    #[diagnostic(
        code(git_session::append::attachment_not_a_file),
        help("attach regular files only; symlinks and directories are refused")
    )]
    AttachmentNotAFile { path: PathBuf },

    /// An attachment whose name cannot be a file name in the session.
    #[error("attachment name of `{}` is not usable", path.display())]
    #[diagnostic(
        code(git_session::append::attachment_name),
        help("rename the file: a UTF-8 name not starting with `.`")
    )]
    AttachmentName { path: PathBuf },
}

/// What `init` refuses.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum InitError {
    /// `init --project` of a session bound to another project.
    #[error("session `{id}` exists and is bound to project `{project}`")]
    #[diagnostic(
        code(git_session::init::bound_elsewhere),
        help("use another session id")
    )]
    BoundElsewhere { id: String, project: String },
}
