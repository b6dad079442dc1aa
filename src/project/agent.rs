//! The agent's commit in a bound project at the end of a turn: decided
//! from the turn's baseline and the paths it declared, made in the user's
//! repository (or skipped, with the reason), and recorded in the turn's
//! reply node before the session commit.

use crate::error::{Error, Result};
use crate::layout::SessionDir;
use crate::layout::history::{self, Catalog};
use crate::mirror;
use crate::out::Printer;
use crate::session;

use super::Decision;

/// How many characters of the user's first line an agent commit's subject
/// holds (`[agent <session>] turn <n>: <them>`).
pub const SUBJECT_CHARS: usize = 60;

/// The node that records the project commit: the turn's assistant reply
/// among the nodes about to be committed, else the last of them (a committed
/// node is never rewritten).
fn record_node(sd: &SessionDir, first: u64, last: u64) -> Result<Option<history::Entry>> {
    let catalog = Catalog::load(sd)?;
    let pending: Vec<history::Entry> = catalog
        .rev_entries()
        .take_while(|e| e.seq >= first)
        .filter(|e| e.seq <= last)
        .collect();
    Ok(pending
        .iter()
        .find(|e| matches!(e.letter, 'a' | 'l'))
        .or(pending.first())
        .cloned())
}

/// Decide, make the agent's commit in the project (or skip it), and record
/// the outcome in the turn's node, all before the session commit.
pub fn project_turn(
    out: &Printer,
    sd: &SessionDir,
    session_id: &str,
    p: &crate::layout::projects::Project,
    declared: &[String],
    baseline_path: &std::path::Path,
    turn: &mirror::Made,
) -> Result<()> {
    let baseline: Option<serde_json::Value> = crate::layout::atomic::read(baseline_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let (first, last) = (
        turn.first_seq.unwrap_or(0),
        turn.last_seq.unwrap_or(u64::MAX),
    );
    let target = record_node(sd, first, last)?;
    let record = match super::decide(p, baseline.as_ref(), declared)? {
        Decision::Skip(reason) => {
            out.warn(format!("no agent commit in project `{}`: {reason}", p.id));
            out.record(&crate::out::records::ProjectCommit {
                session: session_id.into(),
                project: p.id.clone(),
                commit: None,
                paths: Vec::new(),
                skipped: Some(reason.into()),
            });
            serde_json::json!({"project_id": p.id, "skipped": reason})
        }
        Decision::Commit { repo, paths } => {
            agent_commit(out, sd, session_id, p, &repo, &paths, turn, target.as_ref())?
        }
    };
    if let Some(t) = &target {
        super::stamp(sd, t, record)?;
    }
    Ok(())
}

/// Commit the agent's paths in the project's repository; returns the record
/// for the turn's node. The trailers name the session, the turn and its
/// nodes: `project log` finds the session commit by them.
#[allow(clippy::too_many_arguments)]
fn agent_commit(
    out: &Printer,
    sd: &SessionDir,
    session_id: &str,
    p: &crate::layout::projects::Project,
    repo: &crate::git::project::UserRepo,
    paths: &[String],
    turn: &mirror::Made,
    reply: Option<&history::Entry>,
) -> Result<serde_json::Value> {
    let reply_node = reply.and_then(|e| history::read_node(&sd.history(), e).ok());
    let model = reply_node
        .as_ref()
        .filter(|n| n.role == "llm")
        .map(|n| n.name.as_str())
        .filter(|n| !n.is_empty())
        .unwrap_or("agent");
    // An author name git takes: no control characters, no `<` or `>`.
    let model: String = model
        .chars()
        .map(|c| match c {
            '<' | '>' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    let catalog = Catalog::load(sd)?;
    let user_text = history::latest_turn_start(sd, &catalog)
        .map(|n| {
            let first = session::one_line(n.text().lines().next().unwrap_or(""));
            // Text git accepts and a terminal shows as it is (see
            // `MessageParts::render`).
            crate::out::terminal_safe(&session::cut(&first, SUBJECT_CHARS)).into_owned()
        })
        .unwrap_or_default();
    let message = format!(
        "[agent {session_id}] turn {}: {user_text}\n\nSession: {session_id}\nTurn: {}\nNodes: {}..{}\n",
        turn.turn,
        turn.turn,
        turn.first_seq.unwrap_or(0),
        turn.last_seq.unwrap_or(0),
    );
    let name = format!("agent ({model} via OpenProgram)");
    let email = "agent@openprogram.local";
    let now = crate::out::now();
    let made = if p.hooks {
        crate::git::project::hooked_commit(&repo.root, paths, &name, email, &message)
            .map_err(|why| (HOOK_REFUSED, why))
    } else {
        match repo.commit_paths(paths, &name, email, &message, now) {
            Ok(id) => Ok(id.to_string()),
            // A file the agent's process is still writing, a branch the
            // user moved meanwhile, or git busy with the index: this turn
            // has no project commit (a skip, as when a hook refuses it).
            Err(Error::ProjectSkip(skip)) => Err((skip.reason(), skip.to_string())),
            Err(e) => return Err(e),
        }
    };
    let (sha, skip) = match made {
        Ok(sha) => (Some(sha), None),
        Err((reason, why)) => {
            out.warn(format!(
                "no agent commit in project `{}`: {reason}: {why}",
                p.id
            ));
            (None, Some(reason))
        }
    };
    out.record(&crate::out::records::ProjectCommit {
        session: session_id.into(),
        project: p.id.clone(),
        commit: sha.clone(),
        paths: if sha.is_some() {
            paths.to_vec()
        } else {
            Vec::new()
        },
        skipped: skip.map(Into::into),
    });
    Ok(match &sha {
        Some(sha) => {
            out.note(format!(
                "agent commit {} in project `{}` ({} path(s))",
                &sha[..7.min(sha.len())],
                p.id,
                paths.len()
            ));
            serde_json::json!({
                "project_id": p.id, "repo": repo.root, "sha": sha, "paths": paths,
            })
        }
        None => serde_json::json!({"project_id": p.id, "skipped": skip}),
    })
}

/// The skip reason when the project's own hooks refuse the agent commit.
const HOOK_REFUSED: &str = "hook_refused";
