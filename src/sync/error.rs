//! What `push`, `fetch`, `clone` and `remote` refuse: the errors of this
//! area, each with its stable code (`git_session::sync::…`) and its next
//! step; nothing is published (exit 1). The transport's own failures are
//! `git::transport::TransportError`.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SyncError {
    /// The remote's tree names another session than its refs.
    #[error("the remote's session `{id}` has a meta.json that names {names}")]
    #[diagnostic(
        code(git_session::sync::meta_mismatch),
        help("nothing was written; the remote holds a session that is not what its refs say")
    )]
    MetaMismatch { id: String, names: String },

    /// The remote's session, checked out aside, does not verify.
    #[error("the remote's session `{id}` does not verify: {problems}")]
    #[diagnostic(
        code(git_session::sync::fetched_invalid),
        help("nothing was published; repair it on the machine that pushed it, then push again")
    )]
    FetchedInvalid { id: String, problems: String },

    /// A remote URL in `remotes.json` that is a relative path.
    #[error("the remote URL `{url}` is a relative path")]
    #[diagnostic(
        code(git_session::sync::relative_remote_url),
        help("add the remote again with an absolute path")
    )]
    RelativeRemoteUrl { url: String },

    /// A remote inside the state dir, or holding it.
    #[error("`{url}` is inside (or holds) the state directory `{}`", state.display())]
    #[diagnostic(
        code(git_session::sync::remote_in_state_dir),
        help("a remote is a repository of its own: `git init --bare` one elsewhere")
    )]
    RemoteInStateDir { url: String, state: PathBuf },

    /// A remote's URL in `remotes.json` that is refused.
    #[error("remote `{name}` in remotes.json: {why}")]
    #[diagnostic(
        code(git_session::sync::remote_url),
        help(
            "set it again: `git-session remote remove {name}`, then `git-session remote add {name} URL`"
        )
    )]
    RemoteUrl { name: String, why: String },

    /// No remote of that name, none at all, or several and none named.
    #[error("{message}")]
    #[diagnostic(code(git_session::sync::no_remote))]
    NoRemote {
        message: String,
        #[help]
        help: String,
    },

    /// `remote add` of a name that has another URL.
    #[error("remote `{name}` exists with URL `{url}`")]
    #[diagnostic(
        code(git_session::sync::remote_exists),
        help("remove it first: `git-session remote remove {name}`")
    )]
    RemoteExists { name: String, url: String },

    /// A session fetched by name that the remote does not have.
    #[error("session `{id}` is not on remote `{remote}`")]
    #[diagnostic(
        code(git_session::sync::not_on_remote),
        help("push it from the machine that has it: `git-session push {remote} {id}`")
    )]
    NotOnRemote { id: String, remote: String },

    /// A session whose id cannot be part of a ref name.
    #[error("its id cannot be part of a git ref name")]
    #[diagnostic(code(git_session::sync::bad_ref_id))]
    BadRefId,

    /// The remote holds no branch of the session.
    #[error("the remote holds no branch of this session")]
    #[diagnostic(code(git_session::sync::no_branch))]
    NoBranch,

    /// The remote's session has no meta.json.
    #[error("the remote's session has no meta.json")]
    #[diagnostic(code(git_session::sync::no_meta), help("nothing was written"))]
    NoMeta,

    /// The remote's meta.json does not parse.
    #[error("the remote's meta.json does not parse: {why}")]
    #[diagnostic(code(git_session::sync::bad_meta), help("nothing was written"))]
    BadMeta { why: String },

    /// The remote's tree holds what a session tree never holds.
    #[error("the remote's session tree holds `{path}`: {why}")]
    #[diagnostic(
        code(git_session::sync::fetched_unsafe),
        help("nothing was written; a session tree holds plain files only")
    )]
    FetchedUnsafe { path: String, why: String },

    /// A node file here that the remote has with other bytes.
    #[error("node file `{}` here differs from the remote's", path.display())]
    #[diagnostic(
        code(git_session::sync::node_differs),
        help("node files are immutable; run `git-session verify` on this session")
    )]
    NodeDiffers { path: PathBuf },

    /// Another file here that the remote has with other bytes.
    #[error("`{}` here differs from the remote's", path.display())]
    #[diagnostic(code(git_session::sync::file_differs))]
    FileDiffers { path: PathBuf },
}
