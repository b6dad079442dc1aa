//! What `checkout`, `show --at` and `diff` refuse: a target that names no turn
//! (`git_session::view::…`), and a checkout that would move the head from
//! under nodes no commit holds (`git_session::checkout::…`); nothing moves
//! (exit 1).

/// A target that resolves to no turn, or a session that cannot be looked
/// back at now.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ViewError {
    /// A turn number the current branch does not have (`turns`: how many
    /// it has).
    #[error("there is no turn {turn} on the current branch")]
    #[diagnostic(
        code(git_session::view::no_such_turn),
        help("{}; `git-session branch` lists the others", valid_turns(*turns))
    )]
    NoSuchTurn { turn: u64, turns: usize },

    /// `prev` on the first turn.
    #[error("there is no turn before turn {current}")]
    #[diagnostic(code(git_session::view::no_earlier_turn), help("{}", valid_turns(*turns)))]
    NoEarlierTurn { current: u64, turns: usize },

    /// A commit prefix several commits have (`matches`: each, abbreviated).
    #[error("commit prefix `{prefix}` is ambiguous")]
    #[diagnostic(
        code(git_session::view::ambiguous_commit),
        help("it matches {}; give more digits", matches.join(", "))
    )]
    AmbiguousCommit {
        prefix: String,
        matches: Vec<String>,
    },

    /// A target that is none of the things a target can be.
    #[error("`{target}` is not a turn, branch, commit or node of this session")]
    #[diagnostic(
        code(git_session::view::unknown_target),
        help(
            "{}; branches: {}; or `prev`, `next`, a commit id, a node id (see `git-session show`)",
            valid_turns(*turns),
            if branches.is_empty() { "none".to_string() } else { branches.join(", ") }
        )
    )]
    UnknownTarget {
        target: String,
        turns: usize,
        branches: Vec<String>,
    },

    /// A commit (abbreviated) whose message names no turn of the session.
    #[error("commit {commit} records no turn of this session")]
    #[diagnostic(
        code(git_session::view::not_a_turn_commit),
        help("give a turn number or a node id instead (`git-session log` lists the turns)")
    )]
    NotATurnCommit { commit: String },

    /// A branch name (or tip node id) the session does not have
    /// (`branches`: those it has).
    #[error("session `{session}` has no branch `{name}`")]
    #[diagnostic(
        code(git_session::view::no_such_branch),
        help(
            "its branches: {} (`git-session branch {session}` lists them)",
            if branches.is_empty() { "none yet".to_string() } else { branches.join(", ") }
        )
    )]
    NoSuchBranch {
        session: String,
        name: String,
        branches: Vec<String>,
    },

    /// `checkout` while a turn runs.
    #[error("session `{session}` is running a turn")]
    #[diagnostic(
        code(git_session::view::turn_running),
        help("check out after the turn ends (`commit-turn` sets the status back)")
    )]
    TurnRunning { session: String },
}

/// What the turns of the current branch are, for a `help:` line.
fn valid_turns(turns: usize) -> String {
    if turns == 0 {
        "this branch has no turn yet".to_string()
    } else {
        format!("turns on the current branch are 1..{turns}")
    }
}

/// A `checkout` that would leave nodes behind no commit holds.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum CheckoutError {
    /// The target turn is in no commit yet (`head`: its last node).
    #[error("turn {turn} (up to node `{head}`) is in no commit yet")]
    #[diagnostic(
        code(git_session::checkout::not_committed),
        help("run `git-session commit-turn {session}` first, then check it out")
    )]
    NotCommitted {
        session: String,
        turn: u64,
        head: String,
    },

    /// Messages appended since the last `commit-turn` (up to `last`).
    #[error(
        "messages appended since the last `commit-turn` (up to node `{last}`) are not committed yet"
    )]
    #[diagnostic(
        code(git_session::checkout::uncommitted),
        help("run `git-session commit-turn {session}` first, then check out")
    )]
    Uncommitted { session: String, last: String },
}
