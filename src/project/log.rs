//! `project log`'s reading: the agent's commits in a project's own
//! repository, each with the session and turn its message names and the
//! session commit that holds the turn's nodes.

use gix::ObjectId;

use crate::error::Result;
use crate::git::project::{self as pgit, Found, UserRepo};
use crate::layout::StateDir;
use crate::layout::projects::Project;
use crate::out::records;

/// The repository in the project's directory; `None` when it has none yet.
/// A project without its directory is refused.
pub fn repo(p: &Project) -> Result<Option<Box<UserRepo>>> {
    let Some(path) = p.path.as_deref().filter(|p| p.is_dir()) else {
        return Err(super::ProjectError::NoDirToLog { id: p.id.clone() }.into());
    };
    let Found::Repo(repo) = pgit::find(path)? else {
        return Ok(None);
    };
    Ok(Some(repo))
}

/// The record of one agent commit (`id`, its message and time) in project
/// `p`: the session and turn its subject names, and the session commit.
pub fn agent_commit(
    state: &StateDir,
    p: &Project,
    id: &ObjectId,
    msg: &str,
    time: i64,
) -> records::AgentCommit {
    let subject = msg.lines().next().unwrap_or("").to_string();
    let session = subject
        .strip_prefix("[agent ")
        .and_then(|s| s.split(']').next())
        .unwrap_or("")
        .to_string();
    let turn = subject
        .split("turn ")
        .nth(1)
        .and_then(|t| t.split(':').next())
        .and_then(|t| t.parse::<u64>().ok());
    let t = crate::session::Trailers::parse(msg);
    // The session commit holds the nodes the trailers name (older
    // agent commits named it in a `Session-Commit:` trailer).
    let session_commit = msg
        .lines()
        .find_map(|l| l.strip_prefix("Session-Commit: "))
        .map(str::to_owned)
        .or_else(|| {
            let (_, last) = t.nodes?;
            let id = t.session.as_deref().unwrap_or(&session);
            let sd = state.find_session(id).ok()?;
            let repo = crate::git::SessionRepo::open(&sd.dir).ok()?;
            crate::mirror::commit_of_seq(&repo, last)
                .ok()
                .flatten()
                .map(|c| c.to_string())
        });
    records::AgentCommit {
        project_id: p.id.clone(),
        commit: id.to_string(),
        session_id: t.session.unwrap_or(session.clone()),
        turn,
        session_commit,
        subject,
        time: time as f64,
        time_rfc3339: crate::out::rfc3339(time as f64),
    }
}
