//! `init`: create a session repo (SPEC §5.1).
//!
//! Reads: the state dir. Writes: `sessions/<id>/` (built under a temp name and
//! renamed into place: meta.json, `.git` with the `session init` root commit),
//! one index journal row. Locks: none (the publishing rename is atomic).
//! Prints: the session id.

use crate::context::Ctx;
use git_session::error::{Error, Result, exit};
use git_session::layout::{ids, schema::Meta};
use git_session::project::ProjectError;
use git_session::store::{self, Created, NewSession};

/// Create a session: its repository, meta.json and index row.
///
/// Prints the id (a generated one when none is given). Running it again for
/// an existing id is a no-op that prints the id.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Session id: 1-128 of [A-Za-z0-9._-] [default: generated]
    pub session: Option<String>,
    /// Agent id stored in meta.json
    #[arg(long, value_name = "A")]
    pub agent: Option<String>,
    /// Title (a title given here counts as typed by the user)
    #[arg(long, value_name = "T")]
    pub title: Option<String>,
    /// Where the session comes from: cli, web, tui, a channel name…
    #[arg(long, value_name = "S")]
    pub source: Option<String>,
    /// Working directory of the agent, stored as `work_dir` (UTF-8: meta.json holds it as text)
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::DirPath)]
    pub workdir: Option<String>,
    /// Bind to a project: its id, name, or a directory (registered on the fly)
    #[arg(long, value_name = "ID|PATH")]
    pub project: Option<String>,
}

impl InitArgs {
    pub fn spec(&self, id: String) -> NewSession {
        NewSession {
            id,
            agent_id: self.agent.clone(),
            title: self.title.clone(),
            source: self.source.clone(),
            work_dir: self.workdir.clone(),
            project: None,
        }
    }
}

pub fn run(ctx: &Ctx, args: InitArgs) -> Result<u8> {
    let id = match &args.session {
        Some(id) => {
            ids::session_id(id)?;
            id.clone()
        }
        None => ids::generate(""),
    };
    let mut spec = args.spec(id.clone());
    spec.project = match args.project.as_deref().filter(|p| *p != "default") {
        None => None,
        Some(key) => {
            let p = match git_session::project::get(&ctx.state, key) {
                Ok(p) => p,
                // A directory no project has yet: registered here. Any
                // other failure (the registry unreadable, a lock busy) is
                // the command's.
                Err(Error::Project(ProjectError::NotFound { .. }))
                    if std::path::Path::new(key).is_dir() =>
                {
                    git_session::project::add(
                        &ctx.state,
                        std::path::Path::new(key),
                        None,
                        None,
                        ctx.locks,
                    )?
                    .0
                }
                Err(e) => return Err(e),
            };
            if p.path_missing() {
                return Err(git_session::project::ProjectError::DirMissing { id: p.id }.into());
            }
            Some(p.id)
        }
    };
    let created = store::create(&ctx.state, &spec, None, git_session::out::now(), ctx.locks)?;
    let (sd, new) = match created {
        Created::New(sd) => (sd, true),
        Created::Existing(sd) => {
            // Idempotent for the same project; sessions bound elsewhere are refused.
            let meta = Meta::read(&sd.meta())?;
            let project = meta.str("project_id").unwrap_or("default");
            if project != spec.project.as_deref().unwrap_or("default") {
                return Err(store::InitError::BoundElsewhere {
                    id: id.to_string(),
                    project: project.to_string(),
                }
                .into());
            }
            ctx.out.note(format!("session `{id}` already exists"));
            // Options that describe the session are not dropped silently.
            let ignored: Vec<&str> = [
                ("--title", spec.title.is_some()),
                ("--agent", spec.agent_id.is_some()),
                ("--source", spec.source.is_some()),
            ]
            .into_iter()
            .filter(|(_, given)| *given)
            .map(|(f, _)| f)
            .collect();
            if !ignored.is_empty() {
                ctx.out.warn(format!(
                    "{} left as they were: `{id}` existed already (change the title with `git-session update {id} --title …`)",
                    ignored.join(", ")
                ));
            }
            (sd, false)
        }
    };
    ctx.out.record(&git_session::out::records::Initialized {
        session: id.clone(),
        path: sd.dir.clone(),
        created: new,
    });
    ctx.out.line(&id);
    Ok(exit::OK)
}
