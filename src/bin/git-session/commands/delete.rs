//! `delete`: remove a session for good (SPEC §5.8).
//!
//! Reads: the session. Writes: removes its repository, index row, location
//! and project bindings. Locks: the registry, then the session. Prints: the
//! removed path. Asks on a terminal; elsewhere `--yes` is required.

use std::io::{BufRead, IsTerminal, Write};

use crate::context::Ctx;
use git_session::error::{Error, Result, Usage, exit};
use git_session::lifecycle;

/// Delete a session: its repository with every turn, its index row, its
/// location and project bindings. There is no undo.
///
/// A session with turns leaves a tombstone (`<state>/sync/tombstones/`):
/// `push` carries it, so that `fetch` and `clone` do not bring the session
/// back, and another machine's `fetch` deletes its copy too when that copy
/// holds nothing the deletion did not see (else it keeps it, and says so).
///
/// On a terminal it asks first; from a script, pass `--yes` (without it the
/// command refuses, exit 2). Run again after a delete a crash cut short, it
/// finishes that delete (as `recover` and `verify --all --fix` do).
#[derive(Debug, clap::Args)]
pub struct DeleteArgs {
    /// Session id
    pub session: String,
    /// Do not ask
    #[arg(long, short = 'y')]
    pub yes: bool,
}

pub fn run(ctx: &Ctx, args: DeleteArgs) -> Result<u8> {
    let sd = match ctx.state.find_session(&args.session) {
        Ok(sd) => sd,
        // A delete a crash cut short: finished now (what it had moved
        // aside says it was deleting this session).
        Err(e @ Error::SessionNotFound { .. }) => {
            let finished = lifecycle::finish_deletes(&ctx.state, ctx.locks, Some(&args.session))?;
            let Some((_, path)) = finished.into_iter().next() else {
                return Err(e);
            };
            ctx.out.record(&git_session::out::records::SessionDeleted {
                session: args.session.clone(),
                path: path.clone(),
            });
            ctx.out.line(format!(
                "deleted {} ({}; finished a delete that was cut short)",
                args.session,
                path.display()
            ));
            return Ok(exit::OK);
        }
        Err(e) => return Err(e),
    };
    if !args.yes {
        if !git_session::out::input_is_terminal() || !std::io::stderr().is_terminal() {
            return Err(Usage::NeedsConfirmation {
                session: args.session,
            }
            .into());
        }
        eprint!(
            "git-session: delete session `{}` at `{}` and all its history? [y/N] ",
            args.session,
            sd.dir.display()
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            ctx.out.note("nothing deleted");
            return Ok(exit::NO);
        }
    }
    let path = lifecycle::delete(&ctx.state, &args.session, ctx.locks)?;
    ctx.out.record(&git_session::out::records::SessionDeleted {
        session: args.session.clone(),
        path: path.clone(),
    });
    ctx.out
        .line(format!("deleted {} ({})", args.session, path.display()));
    Ok(exit::OK)
}
