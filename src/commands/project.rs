//! `project add|list|show|set|bind|remove|log` (SPEC §5.10); `unbind` is
//! the deprecated name of `remove`.
//!
//! Reads and writes: projects/projects.json (under the registry lock);
//! `bind` also writes the session's meta.json and may move its repository
//! under `sessions/projects/<project>/`. `log` reads the project's own git
//! history. Prints: one row per project, session or agent commit.

use crate::out::records;
use std::path::PathBuf;

use crate::context::Ctx;
use crate::error::{Error, Result, exit};
use crate::git::project::{self as pgit, Found};
use crate::layout::projects::{self, Project};
use crate::project;

/// Projects: working directories whose repositories receive the agent's
/// commits.
#[derive(Debug, clap::Args)]
pub struct ProjectArgs {
    #[command(subcommand)]
    pub command: ProjectCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ProjectCommand {
    /// Register a working directory (the id is stable per path)
    Add {
        /// An existing directory
        path: PathBuf,
        /// Display name [default: the directory's name]
        #[arg(long)]
        name: Option<String>,
        /// Commit the agent's changes at the end of each turn
        #[arg(long)]
        auto_commit: bool,
    },
    /// List projects; a moved directory is shown with the relocate command
    List,
    /// Show one project and its sessions
    Show {
        /// Project id, name or path
        project: String,
    },
    /// Change a project's settings
    Set {
        /// Project id, name or path
        project: String,
        /// A new display name (the id and path stay)
        #[arg(long)]
        name: Option<String>,
        /// active, paused or done
        #[arg(long)]
        status: Option<String>,
        /// Commit the agent's changes at the end of each turn
        #[arg(long, value_name = "BOOL")]
        auto_commit: Option<bool>,
        /// Let git run the project's hooks on agent commits
        #[arg(long, value_name = "BOOL")]
        hooks: Option<bool>,
    },
    /// Bind a session to a project (before its first turn; after it, only to the same project)
    Bind {
        /// Session id
        session: String,
        /// Project id, name or path
        project: String,
    },
    /// Remove a project from the registry (its directory, repository and
    /// sessions are untouched; the sessions keep their history and project_id;
    /// `push` carries the removal, so no fetch registers it again)
    Remove {
        /// Project id, name or path
        project: String,
    },
    /// Deprecated name of `project remove`
    #[command(hide = true)]
    Unbind {
        /// Project id, name or path
        project: String,
    },
    /// The agent's commits in the project's repository, with their session and turn
    Log {
        /// Project id, name or path
        project: String,
        /// At most N commits
        #[arg(short = 'n', long, default_value_t = 50)]
        max_count: usize,
    },
}

fn row(p: &Project) -> records::Project {
    records::Project {
        id: p.id.clone(),
        name: p.name.clone(),
        path: p.path.clone(),
        status: p.status.clone(),
        auto_commit: p.auto_commit,
        hooks: p.hooks,
        sessions: p.session_ids.len(),
        path_missing: p.path_missing(),
    }
}

pub fn run(ctx: &Ctx, args: ProjectArgs) -> Result<u8> {
    match args.command {
        ProjectCommand::Add {
            path,
            name,
            auto_commit,
        } => {
            let (p, new) = project::add(
                &ctx.state,
                &path,
                name.as_deref(),
                auto_commit.then_some(true),
                ctx.locks,
            )?;
            ctx.out.record(&row(&p));
            if !new {
                ctx.out.note(format!(
                    "`{}` was already registered",
                    p.path.as_deref().unwrap_or(&path).display()
                ));
            }
            ctx.out.line(&p.id);
        }
        ProjectCommand::List => {
            for (id, p) in projects::read(&ctx.state)? {
                let p = Project::from(&id, &p);
                ctx.out.record(&row(&p));
                let path = p
                    .path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                let state = if p.path_missing() {
                    format!(
                        "  path_missing: run `git-session relocate {} <new path>`",
                        p.id
                    )
                } else {
                    String::new()
                };
                ctx.out.line(format!(
                    "{:<22} {:<16} {:<7} {} session(s){}  {path}{state}",
                    p.id,
                    p.name,
                    p.status,
                    p.session_ids.len(),
                    if p.auto_commit { ", auto-commit" } else { "" },
                ));
            }
        }
        ProjectCommand::Show { project: key } => {
            let p = project::get(&ctx.state, &key)?;
            ctx.out.record(&row(&p));
            ctx.out.line(format!("{} ({})", p.id, p.name));
            ctx.out.line(format!(
                "path:        {}{}",
                p.path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                if p.path_missing() { " (missing)" } else { "" }
            ));
            ctx.out.line(format!("status:      {}", p.status));
            ctx.out.line(format!("auto-commit: {}", p.auto_commit));
            ctx.out
                .line(format!("sessions:    {}", p.session_ids.join(", ")));
            if p.path_missing() {
                ctx.out.note(format!(
                    "the directory is gone: run `git-session relocate {} <new path>`",
                    p.id
                ));
            }
        }
        ProjectCommand::Set {
            project: key,
            name,
            status,
            auto_commit,
            hooks,
        } => {
            let p = project::get(&ctx.state, &key)?;
            if let Some(s) = &status
                && !["active", "paused", "done"].contains(&s.as_str())
            {
                return Err(Error::usage(
                    "usage::status",
                    format!("unknown status `{s}`"),
                    Some("statuses are active, paused, done".into()),
                ));
            }
            let updated = projects::update(&ctx.state, ctx.locks, |ps| {
                let e = ps.get_mut(&p.id).expect("found above");
                if let Some(n) = name {
                    e.insert("name".into(), n.into());
                }
                if let Some(s) = status {
                    e.insert("status".into(), s.into());
                }
                if let Some(a) = auto_commit {
                    e.insert("auto_commit".into(), a.into());
                }
                if let Some(h) = hooks {
                    e.insert("hooks".into(), h.into());
                }
                Ok(Project::from(&p.id, e))
            })?;
            ctx.out.record(&row(&updated));
            ctx.out.line(format!("updated {}", updated.id));
        }
        ProjectCommand::Bind {
            session,
            project: key,
        } => {
            let (p, dir) = project::bind(&ctx.state, &session, &key, ctx.locks)?;
            ctx.out.record(&records::Bound {
                session: session.clone(),
                project: p.id.clone(),
                path: dir.clone(),
            });
            ctx.out.line(format!("{session} -> {}", p.id));
        }
        ProjectCommand::Remove { project: key } | ProjectCommand::Unbind { project: key } => {
            if std::env::args().any(|a| a == "unbind") {
                ctx.out.warn(
                    "`project unbind` is deprecated: it removes the project from the registry; say `project remove`",
                );
            }
            let p = project::get(&ctx.state, &key)?;
            if p.id == "default" {
                return Err(Error::refused(
                    "project::default_is_label",
                    "the default project cannot be unregistered",
                    None,
                ));
            }
            // `push` carries the removal: no remote registers it again here.
            // Recorded first: a removal cut short leaves a tombstone of a
            // registered project, which a push drops.
            crate::sync::tombstones::record(
                &ctx.state,
                &crate::sync::tombstones::Tombstone::new(
                    crate::sync::tombstones::Kind::Project,
                    &p.id,
                    crate::out::now(),
                    &[],
                    &[],
                ),
            )?;
            projects::update(&ctx.state, ctx.locks, |ps| {
                ps.remove(&p.id);
                Ok(())
            })?;
            ctx.out.record(&records::ProjectRemoved {
                project: p.id.clone(),
            });
            ctx.out.line(format!(
                "unregistered {} ({} session(s) keep their history)",
                p.id,
                p.session_ids.len()
            ));
        }
        ProjectCommand::Log {
            project: key,
            max_count,
        } => {
            let p = project::get(&ctx.state, &key)?;
            let Some(path) = p.path.as_deref().filter(|p| p.is_dir()) else {
                return Err(Error::refused(
                    "project::dir_missing",
                    format!("project `{}` has no directory", p.id),
                    Some(format!("run `git-session relocate {} <new path>`", p.id)),
                ));
            };
            let Found::Repo(repo) = pgit::find(path)? else {
                ctx.out.note("the project has no repository yet");
                return Ok(exit::OK);
            };
            for (id, msg, time) in repo.agent_commits(max_count)? {
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
                let t = crate::session::Trailers::parse(&msg);
                // The session commit holds the nodes the trailers name (older
                // agent commits named it in a `Session-Commit:` trailer).
                let session_commit = msg
                    .lines()
                    .find_map(|l| l.strip_prefix("Session-Commit: "))
                    .map(str::to_owned)
                    .or_else(|| {
                        let (_, last) = t.nodes?;
                        let id = t.session.as_deref().unwrap_or(&session);
                        let sd = ctx.state.find_session(id).ok()?;
                        let repo = crate::git::SessionRepo::open(&sd.dir).ok()?;
                        crate::mirror::commit_of_seq(&repo, last)
                            .ok()
                            .flatten()
                            .map(|c| c.to_string())
                    });
                ctx.out.record(&records::AgentCommit {
                    project_id: p.id.clone(),
                    commit: id.to_string(),
                    session_id: t.session.unwrap_or(session.clone()),
                    turn,
                    session_commit,
                    subject: subject.clone(),
                    time: time as f64,
                    time_rfc3339: crate::out::rfc3339(time as f64),
                });
                ctx.out.line(format!(
                    "{} {} {subject}",
                    id.to_hex_with_len(7),
                    crate::out::short_time(time as f64)
                ));
            }
        }
    }
    Ok(exit::OK)
}
