//! `recover`: the start-up routine (SPEC §5.12).
//!
//! Reads: the registry and every session's meta.json. Writes: index.json when
//! missing or corrupt, or when a row disagrees with its meta.json; `running` → `interrupted` in meta.json and the index;
//! then collects empty shells. Locks: the registry, each session in turn.
//! Prints: what it did.

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::layout::registry;
use git_session::layout::schema::Meta;
use git_session::lifecycle::{self, Changes};

/// Start-up repair: rebuild a missing, corrupt or stale index, mark sessions left
/// `running` by a crash as `interrupted`, finish deletes a crash cut short,
/// then collect empty shells.
#[derive(Debug, clap::Args)]
pub struct RecoverArgs {
    /// Shells younger than this are kept (see gc-shells)
    #[arg(long, value_name = "DUR", default_value = "1h")]
    pub older_than: String,
}

pub fn run(ctx: &Ctx, args: RecoverArgs) -> Result<u8> {
    let older = lifecycle::parse_duration(&args.older_than)?;
    ctx.state.ensure()?;
    // A missing or corrupt index, or rows that disagree with meta.json (the
    // truth), are rebuilt.
    let stale = match registry::load_index(&ctx.state)? {
        None => true,
        Some(index) => {
            let fresh = registry::rebuild(&ctx.state)?;
            // A session another writer made without a row, a row left by a
            // session gone, or a row that disagrees.
            !index.keys().eq(fresh.keys()) || !registry::stale_rows(&index, &fresh).is_empty()
        }
    };
    if stale {
        let n = registry::rebuild_index(&ctx.state, ctx.locks)?;
        ctx.out.record(&git_session::out::records::Recovered {
            action: "index_rebuilt".into(),
            session: None,
            rows: Some(n),
        });
        ctx.out.line(format!("rebuilt index.json ({n} rows)"));
    }
    // meta.json is the truth: a row may say idle where meta says running.
    for (id, dir) in registry::discover(&ctx.state)? {
        let Ok(meta) = Meta::read(&dir.join(git_session::layout::paths::META)) else {
            continue;
        };
        if meta.status() == "running" {
            let changes = Changes {
                status: Some("interrupted".into()),
                ..Default::default()
            };
            lifecycle::update(&ctx.state, &id, &changes, ctx.locks)?;
            ctx.out.record(&git_session::out::records::Recovered {
                action: "interrupted".into(),
                session: Some(id.clone()),
                rows: None,
            });
            ctx.out.line(format!("{id}: running -> interrupted"));
        }
    }
    // Deletes a crash cut short.
    for (id, _) in lifecycle::finish_deletes(&ctx.state, ctx.locks, None)? {
        ctx.out.record(&git_session::out::records::Recovered {
            action: "delete_finished".into(),
            session: Some(id.clone()),
            rows: None,
        });
        ctx.out
            .line(format!("{id}: finished a delete that was cut short"));
    }
    super::gc_shells::collect(ctx, older, false)?;
    // Whatever changed, index.json says it now.
    registry::fold(&ctx.state, ctx.locks)?;
    Ok(exit::OK)
}
