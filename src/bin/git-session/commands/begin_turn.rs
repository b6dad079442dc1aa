//! `begin-turn`: a turn starts (SPEC §5.10).
//!
//! Reads: the session, its project's working tree. Writes: meta.json
//! (`status=running`), one index journal row, and for a bound project the
//! baseline in `.git/git-session/baseline.json`; with auto-commit on, a
//! project directory without a repository gets one, with a baseline commit
//! of the files already there. Locks: the project (when the session is
//! bound to one with auto-commit), then the session, both exclusive.
//! Prints: that the turn is running, and the baseline.

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::layout::schema;
use git_session::layout::{atomic, registry};
use git_session::out::records;
use git_session::project;

/// Mark a turn as running and, for a bound project, record the baseline of
/// its working tree (HEAD and the dirty paths, .gitignore honoured), so that
/// `commit-turn` can tell the agent's changes from the user's.
#[derive(Debug, clap::Args)]
pub struct BeginTurnArgs {
    /// Session id
    pub session: String,
}

/// The `baseline` record of what baseline.json holds.
fn baseline_record(session: &str, project: &str, b: &serde_json::Value) -> records::Baseline {
    let text = |k: &str| b.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    let at = b.get("at").and_then(|v| v.as_f64()).unwrap_or(0.0);
    records::Baseline {
        session: session.into(),
        project: project.into(),
        path: text("path").map(Into::into),
        head: text("head"),
        branch: text("branch"),
        dirty: b
            .get("dirty")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        error: text("error"),
        at,
        at_rfc3339: git_session::out::rfc3339(at),
    }
}

pub fn run(ctx: &Ctx, args: BeginTurnArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let locks = ctx.lock_project_and_session(&sd, &args.session)?;
    let mut meta = locks.meta.clone();
    meta.set("status", "running");
    atomic::write(&sd.meta(), &meta.to_json())?;
    registry::journal_append(&ctx.state, &schema::index_row(&meta, &args.session, None))?;
    let path = sd.private_dir().join("baseline.json");
    ctx.out.record(&records::TurnBegun {
        session: args.session.clone(),
        status: "running".into(),
        project: locks.project.as_ref().map(|p| p.id.clone()),
    });
    match &locks.project {
        Some(p) => {
            let b = project::baseline(&ctx.state, p, git_session::out::now())?;
            atomic::write(&path, &serde_json::to_vec_pretty(&b).expect("json"))?;
            if ctx.out.json {
                ctx.out.record(&baseline_record(&args.session, &p.id, &b));
            }
            match b.get("error").and_then(|e| e.as_str()) {
                Some(e) => ctx.out.warn(format!(
                    "project `{}`: {e}; no agent commit this turn",
                    p.id
                )),
                None => ctx.out.line(format!(
                    "{}: running; project `{}` at {} with {} dirty path(s)",
                    args.session,
                    p.id,
                    b["head"]
                        .as_str()
                        .map(|h| &h[..7.min(h.len())])
                        .unwrap_or("(no commit)"),
                    b["dirty"].as_array().map_or(0, |d| d.len())
                )),
            }
        }
        None => {
            let _ = std::fs::remove_file(&path);
            ctx.out.line(format!("{}: running", args.session));
        }
    }
    Ok(exit::OK)
}
