//! `diff`: what a range of turns of one branch added — its nodes, and the
//! agent's commits those turns recorded in the session's project, each
//! read from the project's repository as `git show` shows it. Turns are
//! numbered as `log` and `checkout` number them; the range is the turns
//! after `from` up to `to`.
//!
//! Only the commits the session's own nodes record are shown, and only
//! those whose message names the session: another session's commits in
//! the same project never are.

use crate::error::{Result, Usage};
use crate::git::{Oid, SessionRepo};
use crate::layout::history::{self, Catalog};
use crate::layout::projects::Project;
use crate::layout::schema::{Meta, Node};
use crate::layout::{SessionDir, StateDir};
pub use crate::project::record::Agent;
use crate::project::record::{self, Recorded, Repos};

use super::ViewError;

/// What `diff` is asked.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// The branch: a git branch or a tip's node id; the session's current
    /// branch when `None`.
    pub branch: Option<String>,
    /// TURN_A and TURN_B as given: none (the last turn against the one
    /// before), one (that turn against the one before) or both.
    pub turns: (Option<u64>, Option<u64>),
    /// How many bytes of diff one agent commit shows at most.
    pub limit: usize,
}

/// One turn of the range.
#[derive(Debug, Clone)]
pub struct Turn {
    pub number: u64,
    /// Its first node's time.
    pub time: f64,
    /// The seqs of its first and last node (records aside).
    pub seqs: (i64, i64),
    /// The session commit that holds it (`None`: not committed yet).
    pub commit: Option<Oid>,
    /// Its nodes in reading order, as `show` prints them.
    pub nodes: Vec<Node>,
    pub agent: Vec<Agent>,
}

/// What the range added.
#[derive(Debug, Clone)]
pub struct Diff {
    /// The branch shown: its git branches' names, or its tip described.
    pub branch: String,
    /// The range: the turns after `from` up to `to`.
    pub from: u64,
    pub to: u64,
    /// The project the session is bound to.
    pub project: Option<Project>,
    pub turns: Vec<Turn>,
}

/// The range `turns` asks (TURN_A, TURN_B) on a branch of `count` turns:
/// (from, to), the turns after `from` up to `to`. None: the last turn;
/// one: that turn; two: from the first (0: the start) to the second.
pub fn range(session: &str, count: u64, turns: (Option<u64>, Option<u64>)) -> Result<(u64, u64)> {
    let no_such = |turn: u64| ViewError::NoSuchTurn {
        turn,
        turns: count as usize,
    };
    match turns {
        (None, None) if count == 0 => Err(no_such(1).into()),
        (None, None) => Ok((count - 1, count)),
        (Some(n), None) | (None, Some(n)) if n == 0 || n > count => Err(no_such(n).into()),
        (Some(n), None) | (None, Some(n)) => Ok((n - 1, n)),
        (Some(a), Some(b)) if a > b => Err(Usage::DiffRange {
            session: session.to_string(),
            from: a,
            to: b,
        }
        .into()),
        (Some(_), Some(b)) if b > count => Err(no_such(b).into()),
        (Some(a), Some(b)) => Ok((a, b)),
    }
}

/// What the turns `ask` names added to session `id` (in `sd`; the caller
/// holds its lock): their nodes and the agent commits they recorded.
/// `warn` hears about node files that cannot be read and commits left out.
pub fn diff(
    state: &StateDir,
    sd: &SessionDir,
    id: &str,
    ask: &Ask,
    warn: &mut dyn FnMut(String),
) -> Result<Diff> {
    let meta = Meta::read(&sd.meta())?;
    let catalog = Catalog::load(sd)?;
    let nodes = history::read_all(&sd.history(), &catalog, warn);
    // A repository that cannot be read: the nodes are shown all the same,
    // without their commits.
    let repo = SessionRepo::open(&sd.dir).ok();
    let (branches, current) = super::branches(&meta, &nodes, &catalog, repo.as_ref())?;
    let shown = match &ask.branch {
        Some(name) => super::branch_named(id, &branches, name)?,
        None => current,
    };
    let branch = branches.get(shown);
    let rows = super::branch_nodes(&nodes, branch.map(|b| b.tip.as_str()), false);
    let count = rows.iter().map(|(t, _)| *t).max().unwrap_or(0);
    let (from, to) = range(id, count, ask.turns)?;
    let rows: Vec<(u64, &Node)> = rows
        .into_iter()
        .filter(|(t, _)| *t > from && *t <= to)
        .collect();
    let project = crate::project::of_session(state, id, &meta)?;
    let mut repos = Repos::default();
    let read = AgentRead {
        session: id,
        project: project.as_ref(),
        limit: ask.limit,
    };
    let mut turns = Vec::new();
    for span in super::spans(&rows, repo.as_ref(), &catalog) {
        let nodes: Vec<Node> = rows
            .iter()
            .filter(|(t, _)| *t == span.number)
            .map(|(_, n)| (*n).clone())
            .collect();
        let mut agent = Vec::new();
        for r in nodes.iter().filter_map(Recorded::of) {
            agent.extend(read.agent(r, &mut repos, warn));
        }
        turns.push(Turn {
            number: span.number,
            time: span.time,
            seqs: span.seqs,
            commit: span.commit,
            nodes,
            agent,
        });
    }
    Ok(Diff {
        branch: branch.map_or(String::new(), |b| b.label.clone()),
        from,
        to,
        project,
        turns,
    })
}

/// How a turn's record is read: for which session, in which project.
struct AgentRead<'a> {
    session: &'a str,
    project: Option<&'a Project>,
    limit: usize,
}

impl AgentRead<'_> {
    /// What record `r` says, the commit read from the session's project;
    /// `None` for a commit whose message names another session (left out,
    /// with a warning).
    fn agent(&self, r: Recorded, repos: &mut Repos, warn: &mut dyn FnMut(String)) -> Option<Agent> {
        match r {
            Recorded::Skipped { project_id, reason } => Some(Agent::Skipped {
                project: project_id,
                reason,
            }),
            Recorded::Commit {
                project_id,
                sha,
                paths,
            } => {
                let patch = self
                    .project
                    .filter(|p| p.id == project_id)
                    .and_then(|p| repos.patch(p, &sha, self.limit));
                if let Some(p) = &patch
                    && !record::made_for(&p.message, self.session)
                {
                    warn(format!(
                        "agent commit {sha} in project `{project_id}` is not session `{}`'s (its message names another); left out",
                        self.session
                    ));
                    return None;
                }
                Some(Agent::Commit {
                    project: project_id,
                    sha,
                    paths,
                    patch,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn the_range_is_the_last_turn_one_turn_or_two_bounds() {
        let r = |turns| range("s", 3, turns);
        assert_eq!(r((None, None)).unwrap(), (2, 3));
        assert_eq!(r((Some(1), None)).unwrap(), (0, 1));
        assert_eq!(r((Some(3), None)).unwrap(), (2, 3));
        assert_eq!(r((Some(0), Some(3))).unwrap(), (0, 3));
        assert_eq!(r((Some(2), Some(2))).unwrap(), (2, 2));
        let no_such = |e: Error| match e {
            Error::View(ViewError::NoSuchTurn { turn, turns: 3 }) => turn,
            e => panic!("{e:?}"),
        };
        assert_eq!(no_such(r((Some(4), None)).unwrap_err()), 4);
        assert_eq!(no_such(r((Some(0), None)).unwrap_err()), 0);
        assert_eq!(no_such(r((Some(1), Some(9))).unwrap_err()), 9);
        assert!(matches!(
            r((Some(3), Some(1))).unwrap_err(),
            Error::Usage(Usage::DiffRange { from: 3, to: 1, .. })
        ));
        assert!(matches!(
            range("s", 0, (None, None)).unwrap_err(),
            Error::View(ViewError::NoSuchTurn { turn: 1, turns: 0 })
        ));
    }
}
