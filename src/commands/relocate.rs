//! `relocate`: a project's directory moved (SPEC §5.11).
//!
//! Reads: projects.json, locations.json. Writes: the project's path (same
//! id), legacy locations under the old path, and one record node in each
//! bound session (or the one named), committed as `record: …` when HEAD is
//! on the latest turn. Locks: the registry, then each session.
//! Prints: what changed.

use crate::out::records;
use std::path::PathBuf;

use crate::context::Ctx;
use crate::error::{Error, Result, exit};
use crate::git::SessionRepo;
use crate::layout::projects;
use crate::layout::schema::{self, Meta};
use crate::layout::{SessionDir, atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::store::{self, NewNode};

/// Point a project at its new directory: the id stays, the path changes,
/// and each bound session (or `--session`) gets a `project/relocate` record
/// node (the head does not move). The default project is refused.
#[derive(Debug, clap::Args)]
pub struct RelocateArgs {
    /// Project id, name or old path
    pub project: String,
    /// The existing directory it moved to
    pub new_path: PathBuf,
    /// Record the move in this session only
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
}

pub fn run(ctx: &Ctx, args: RelocateArgs) -> Result<u8> {
    let p = crate::project::get(&ctx.state, &args.project)?;
    if p.id == "default" {
        return Err(Error::refused(
            "the default project cannot be relocated",
            Some("it is a label with no directory".into()),
        ));
    }
    let new = std::fs::canonicalize(&args.new_path)
        .ok()
        .filter(|n| n.is_dir())
        .ok_or_else(|| {
            Error::refused(
                format!("`{}` is not an existing directory", args.new_path.display()),
                Some("give the directory the project moved to".into()),
            )
        })?;
    crate::project::refuse_ours(&ctx.state, &new)?;
    let old = p.path.clone().unwrap_or_default();
    projects::update(&ctx.state, ctx.locks, |ps| {
        ps.get_mut(&p.id)
            .expect("found above")
            .insert("path".into(), new.to_string_lossy().into_owned().into());
        Ok(())
    })?;
    crate::layout::atomic::crash_point("relocate-after-project");
    // Legacy in-project repositories moved with the directory.
    let mut moved = Vec::new();
    for (id, loc) in registry::read_locations(&ctx.state)? {
        let lp = PathBuf::from(&loc);
        if let Ok(rest) = lp.strip_prefix(&old) {
            moved.push((id, new.join(rest)));
        }
    }
    if !moved.is_empty() {
        registry::set_locations(&ctx.state, &moved, ctx.locks)?;
    }
    let sessions: Vec<String> = match &args.session {
        Some(s) => vec![s.clone()],
        None => p.session_ids.clone(),
    };
    let now = crate::out::now();
    for s in &sessions {
        let Ok(sd) = ctx.state.find_session(s) else {
            ctx.out.warn(format!(
                "session `{s}` of project `{}` was not found; no record node",
                p.id
            ));
            continue;
        };
        let _l = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
        let mut meta = Meta::read(&sd.meta())?;
        let mut metadata = serde_json::Map::new();
        metadata.insert("display".into(), "runtime".into());
        metadata.insert("project_id".into(), p.id.clone().into());
        metadata.insert("old_path".into(), old.to_string_lossy().into_owned().into());
        metadata.insert("new_path".into(), new.to_string_lossy().into_owned().into());
        let node = store::append(
            &sd,
            &mut meta,
            NewNode {
                role: "code".into(),
                id: Some(crate::layout::ids::generate("reloc_")),
                caller: Some("ROOT".into()),
                predecessor: Some(None),
                name: Some("project/relocate".into()),
                output: format!("{} → {}", old.display(), new.display()).into(),
                metadata,
                ..Default::default()
            },
            now,
        )?;
        atomic::write(&sd.meta(), &meta.to_json())?;
        registry::journal_append(&ctx.state, &schema::index_row(&meta, s, None))?;
        ctx.out.record(&records::RelocateNode {
            session: s.clone(),
            node: node.id.clone(),
        });
        if let Some(c) = commit_record(ctx, &sd, s)? {
            ctx.out.record(&records::RecordCommitted {
                session: s.clone(),
                commit: c.to_string(),
            });
        }
    }
    ctx.out.record(&records::Relocated {
        project: p.id.clone(),
        old_path: old.to_path_buf(),
        new_path: new.clone(),
        sessions: sessions.len(),
        locations: moved.len(),
    });
    ctx.out.line(format!(
        "{}: {} -> {} ({} session(s) recorded)",
        p.id,
        old.display(),
        new.display(),
        sessions.len()
    ));
    Ok(exit::OK)
}

/// Commit the record node as an event of its own (`record: …`), when it is
/// the only node not yet in git and HEAD is on the latest turn; otherwise
/// it waits for the next turn (no commit on a checked-out view, no half turn).
fn commit_record(ctx: &Ctx, sd: &SessionDir, id: &str) -> Result<Option<String>> {
    let repo = SessionRepo::open(&sd.dir)?;
    let head = repo.head()?;
    let latest = sd.read_snapshot().commit;
    if head.branch.is_none() || (latest.is_some() && head.commit.map(|c| c.to_string()) != latest) {
        return Ok(None);
    }
    drop(repo);
    let out = ctx.out;
    let opts = CommitOptions {
        now: crate::out::now(),
        ..Default::default()
    };
    let dry = CommitOptions {
        dry_run: true,
        ..opts.clone()
    };
    let plan = mirror::commit_pending(sd, id, &dry, &mut |_| Ok(()), &mut |_| {})?;
    if plan.len() != 1 || plan[0].nodes != 1 {
        return Ok(None);
    }
    let made = mirror::commit_pending(sd, id, &opts, &mut |_| Ok(()), &mut |w| out.warn(w))?;
    Ok(made.last().map(|m| m.commit.clone()))
}
