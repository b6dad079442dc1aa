//! What the layout refuses to go through: the errors of this area, each
//! with its stable code (`git_session::layout::…`) and its next step; the
//! files are left as they are (exit 1).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum Refusal {
    /// A link where the layout has a directory or a file of its own.
    #[error("`{}` is a symbolic link", path.display())]
    #[diagnostic(code(git_session::layout::symlink), help("{help}"))]
    Symlink { path: PathBuf, help: &'static str },
    /// A FIFO, socket or device where the layout has a file.
    #[error("`{}` is not a regular file (a FIFO, socket or device)", path.display())]
    #[diagnostic(
        code(git_session::layout::special_file),
        help("remove it; git-session never opens special files")
    )]
    SpecialFile { path: PathBuf },
    /// A session repository sent elsewhere for its refs or objects.
    #[error("`{}` {what}", path.display())]
    #[diagnostic(
        code(git_session::layout::redirected),
        help("{help}; nothing was read or written")
    )]
    Redirected {
        path: PathBuf,
        what: &'static str,
        help: &'static str,
    },
}
