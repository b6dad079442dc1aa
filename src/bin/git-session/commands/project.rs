//! `project add|list|show|set|bind|remove|log` (SPEC §5.10); `unbind` is
//! the deprecated name of `remove`.
//!
//! Reads and writes: projects/projects.json (under the registry lock);
//! `bind` also writes the session's meta.json and may move its repository
//! under `sessions/projects/<project>/`. `log` reads the project's own git
//! history. Prints: one row per project, session or agent commit.

use git_session::out::records;
use std::path::{Path, PathBuf};

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::layout::projects::{self, Project};
use git_session::project;

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
        } => add(ctx, &path, name.as_deref(), auto_commit)?,
        ProjectCommand::List => list(ctx)?,
        ProjectCommand::Show { project: key } => show(ctx, &key)?,
        ProjectCommand::Set {
            project: key,
            name,
            status,
            auto_commit,
            hooks,
        } => {
            let settings = project::Settings {
                name,
                status,
                auto_commit,
                hooks,
            };
            let updated = project::set(&ctx.state, &key, settings, ctx.locks)?;
            ctx.out.record(&row(&updated));
            ctx.out.line(format!("updated {}", updated.id));
        }
        ProjectCommand::Bind {
            session,
            project: key,
        } => bind(ctx, &session, &key)?,
        ProjectCommand::Remove { project: key } | ProjectCommand::Unbind { project: key } => {
            remove(ctx, &key)?
        }
        ProjectCommand::Log {
            project: key,
            max_count,
        } => log(ctx, &key, max_count)?,
    }
    Ok(exit::OK)
}

fn add(ctx: &Ctx, path: &Path, name: Option<&str>, auto_commit: bool) -> Result<()> {
    let (p, new) = project::add(
        &ctx.state,
        path,
        name,
        auto_commit.then_some(true),
        ctx.locks,
    )?;
    ctx.out.record(&row(&p));
    if !new {
        ctx.out.note(format!(
            "`{}` was already registered",
            p.path.as_deref().unwrap_or(path).display()
        ));
    }
    ctx.out.line(&p.id);
    Ok(())
}

fn list(ctx: &Ctx) -> Result<()> {
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
    Ok(())
}

fn show(ctx: &Ctx, key: &str) -> Result<()> {
    let p = project::get(&ctx.state, key)?;
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
    Ok(())
}

fn bind(ctx: &Ctx, session: &str, key: &str) -> Result<()> {
    let (p, dir) = project::bind(&ctx.state, session, key, ctx.locks)?;
    ctx.out.record(&records::Bound {
        session: session.to_string(),
        project: p.id.clone(),
        path: dir.clone(),
    });
    ctx.out.line(format!("{session} -> {}", p.id));
    Ok(())
}

fn remove(ctx: &Ctx, key: &str) -> Result<()> {
    if std::env::args().any(|a| a == "unbind") {
        ctx.out.warn(
            "`project unbind` is deprecated: it removes the project from the registry; say `project remove`",
        );
    }
    let p = project::remove(&ctx.state, key, ctx.locks)?;
    ctx.out.record(&records::ProjectRemoved {
        project: p.id.clone(),
    });
    ctx.out.line(format!(
        "unregistered {} ({} session(s) keep their history)",
        p.id,
        p.session_ids.len()
    ));
    Ok(())
}

fn log(ctx: &Ctx, key: &str, max_count: usize) -> Result<()> {
    let p = project::get(&ctx.state, key)?;
    let Some(repo) = project::log::repo(&p)? else {
        ctx.out.note("the project has no repository yet");
        return Ok(());
    };
    for (id, msg, time) in repo.agent_commits(max_count)? {
        let commit = project::log::agent_commit(&ctx.state, &p, &id, &msg, time);
        ctx.out.record(&commit);
        ctx.out.line(format!(
            "{} {} {}",
            id.to_hex_with_len(7),
            git_session::out::short_time(time as f64),
            commit.subject
        ));
    }
    Ok(())
}
