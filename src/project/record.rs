//! What a turn recorded of the agent's commit in its project, read back:
//! `metadata.project_commit` of the turn's reply ([`super::stamp`] writes
//! it at `commit-turn`), and the commit it names, read from the project's
//! repository as `git show` shows it. `show`, `diff` and `export` read a
//! turn's agent commit so.

use std::collections::HashMap;

use serde_json::Value;

use crate::git::patch::{self, CommitPatch};
use crate::git::project::UserRepo;
use crate::layout::projects::Project;
use crate::layout::schema::Node;

/// The agent's commit a turn recorded, read for a person (`diff`,
/// `export`), or why it made none.
#[derive(Debug, Clone)]
pub enum Agent {
    Commit {
        /// The project as the reader names it (`diff`: its id; `export`:
        /// its name when it is the session's, else its id).
        project: String,
        sha: String,
        /// The paths the record says it committed.
        paths: Vec<String>,
        /// The commit as the project's repository has it; `None` when it
        /// cannot be read there (the repository moved away, the commit was
        /// rewritten), or the project is not the session's.
        patch: Option<crate::git::patch::CommitPatch>,
    },
    Skipped {
        project: String,
        reason: String,
    },
}

/// What a node's `metadata.project_commit` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// The agent's commit in project `project_id`, with the paths it
    /// committed.
    Commit {
        project_id: String,
        sha: String,
        paths: Vec<String>,
    },
    /// No commit was made: why (`no_changes`, `dirty_tree`, …; see
    /// `export::skip_reason`).
    Skipped { project_id: String, reason: String },
}

impl Recorded {
    /// What node `n` records; `None` for a node that records nothing.
    pub fn of(n: &Node) -> Option<Recorded> {
        Self::from_value(n.metadata.get("project_commit")?)
    }

    /// What a `project_commit` value says, as [`Recorded::of`] reads it: a
    /// `sha` makes it a commit, else a skip (its reason `unknown` when it
    /// gives none).
    pub fn from_value(pc: &Value) -> Option<Recorded> {
        let pc = pc.as_object()?;
        let project_id = pc
            .get("project_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        Some(match pc.get("sha").and_then(Value::as_str) {
            Some(sha) => Recorded::Commit {
                project_id,
                sha: sha.to_string(),
                paths: pc
                    .get("paths")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            },
            None => Recorded::Skipped {
                project_id,
                reason: pc
                    .get("skipped")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_string(),
            },
        })
    }

    pub fn project_id(&self) -> &str {
        match self {
            Recorded::Commit { project_id, .. } | Recorded::Skipped { project_id, .. } => {
                project_id
            }
        }
    }
}

/// The project repositories opened, each once.
#[derive(Default)]
pub struct Repos {
    opened: HashMap<String, Option<Box<UserRepo>>>,
}

impl Repos {
    /// `project`'s repository (in its registered directory); `None` when
    /// it has none there.
    pub fn repo(&mut self, project: &Project) -> Option<&UserRepo> {
        self.opened
            .entry(project.id.clone())
            .or_insert_with(|| super::log::repo(project).ok().flatten())
            .as_deref()
    }

    /// Commit `sha` of `project`'s repository as `git show` shows it, its
    /// diffs cut past `limit` bytes; `None` when the repository or the
    /// commit is not there (moved away, rewritten, collected).
    pub fn patch(&mut self, project: &Project, sha: &str, limit: usize) -> Option<CommitPatch> {
        let repo = self.repo(project)?;
        patch::commit_patch(repo, sha, limit).ok().flatten()
    }
}

/// Whether the commit message `message` is one an agent made for session
/// `session`: its `Session:` trailer names it (older commits: their
/// subject, `[agent <session>] turn N: …`).
pub fn made_for(message: &str, session: &str) -> bool {
    match crate::session::Trailers::parse(message).session {
        Some(s) => s == session,
        None => message
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("[agent "))
            .and_then(|l| l.split_once(']'))
            .is_some_and(|(s, _)| s == session),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_a_commit_or_a_skip() {
        let v = serde_json::json!({"project_id": "p", "sha": "ab12", "paths": ["a", 1, "b"]});
        assert_eq!(
            Recorded::from_value(&v),
            Some(Recorded::Commit {
                project_id: "p".into(),
                sha: "ab12".into(),
                paths: vec!["a".into(), "b".into()],
            })
        );
        let v = serde_json::json!({"project_id": "p", "skipped": "dirty_tree"});
        assert_eq!(
            Recorded::from_value(&v).unwrap(),
            Recorded::Skipped {
                project_id: "p".into(),
                reason: "dirty_tree".into()
            }
        );
        assert_eq!(
            Recorded::from_value(&serde_json::json!({})).unwrap(),
            Recorded::Skipped {
                project_id: String::new(),
                reason: "unknown".into()
            }
        );
        assert_eq!(Recorded::from_value(&serde_json::json!("x")), None);
    }

    #[test]
    fn a_commit_is_the_sessions_by_its_trailer_or_its_subject() {
        let msg = "[agent s1] turn 2: hi\n\nSession: s1\nTurn: 2\nNodes: 5..8\n";
        assert!(made_for(msg, "s1"));
        assert!(!made_for(msg, "s2"));
        assert!(made_for("[agent s1] turn 2: hi\n", "s1"));
        assert!(!made_for("[agent s10] turn 2: hi\n", "s1"));
        // The trailer wins over a subject that says otherwise.
        assert!(!made_for("[agent s1] turn 2: hi\n\nSession: s2\n", "s1"));
        assert!(!made_for("a user's commit\n", "s1"));
    }
}
