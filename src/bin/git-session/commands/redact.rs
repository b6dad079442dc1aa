//! `redact`: replace the secrets a session holds, in its files and its
//! whole history (see `secrets::redact`).
//!
//! Reads: the session's objects and files, the allow-list. Writes: new
//! commits and the branches (the old tips kept under
//! `refs/redacted/<time>/`), the files on disk, the index, a
//! `context/redact` node and its commit, the session's registry row.
//! Locks: the session, exclusive. Prints: a `secret` record per finding
//! replaced, then `redacted`.

use crate::context::Ctx;
use git_session::error::{Result, exit};
use git_session::layout::lock;
use git_session::out::records;
use git_session::secrets::redact::{self, Chosen};

/// Replace a session's secrets with `[REDACTED:<rule>:<fingerprint>]`,
/// in its files and in every commit from the first one that held them.
///
/// Without `--rule` or `--fingerprint`, every finding `git-session secrets
/// scan` reports as not allowed is replaced. Commit messages and the
/// title lose the secret too (a cut copy of 20 characters or more
/// included). The history before stays in this repository under
/// `refs/redacted/<time>/<branch>` until `--drop-backup`; a
/// `context/redact` node records the rules, fingerprints, nodes and the
/// commits replaced, never a value. The next `push` replaces the remote's
/// copy of the session with a forced update of that session's refs alone,
/// checked against what the remote had (the remote keeps the old objects
/// until its own gc); other machines take the redacted history on their
/// next `fetch`.
#[derive(Debug, clap::Args)]
pub struct RedactArgs {
    /// Session id
    pub session: String,
    /// Only findings of this rule (repeat for several)
    #[arg(long, value_name = "R")]
    pub rule: Vec<String>,
    /// Only the finding with this fingerprint (repeat for several; an
    /// allowed one too)
    #[arg(long, value_name = "F")]
    pub fingerprint: Vec<String>,
    /// Say what would be replaced; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Delete the backup refs of earlier redactions and drop the history
    /// they kept (and nothing else)
    #[arg(long, conflicts_with_all = ["rule", "fingerprint", "dry_run"])]
    pub drop_backup: bool,
}

pub fn run(ctx: &Ctx, args: RedactArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
    if args.drop_backup {
        let n = redact::drop_backups(&sd)?;
        ctx.out.note(format!(
            "{n} backup ref{} of `{}` deleted; the history only they kept is gone",
            if n == 1 { "" } else { "s" },
            args.session
        ));
        return Ok(exit::OK);
    }
    let allowed = git_session::secrets::session::allowed(&ctx.state, &[])?;
    let chosen = Chosen {
        rules: args.rule,
        fingerprints: args.fingerprint,
    };
    let done = redact::redact_session(
        &ctx.state,
        &sd,
        &args.session,
        &chosen,
        &allowed,
        args.dry_run,
        &mut |w| ctx.out.warn(w),
    )?;
    for f in &done.findings {
        super::secrets::print_finding(ctx, &args.session, f.clone(), false);
    }
    let secrets: std::collections::BTreeSet<&str> = done
        .findings
        .iter()
        .map(|f| f.fingerprint.as_str())
        .collect();
    let record = records::Redacted {
        session: args.session.clone(),
        secrets: secrets.len(),
        commits: done.replaced.len(),
        branches: done
            .branches
            .iter()
            .map(|(b, old, new)| records::RedactedBranch {
                branch: b.clone(),
                old: old.to_string(),
                new: new.to_string(),
            })
            .collect(),
        files: done.files.clone(),
        backup: done.backup.clone(),
        record: done.record.as_ref().map(|(id, _)| id.clone()),
        record_commit: done.record.as_ref().and_then(|(_, c)| c.clone()),
        dry_run: args.dry_run,
    };
    if secrets.is_empty() {
        ctx.out
            .note(format!("`{}` holds no secret to redact", args.session));
    } else if args.dry_run {
        ctx.out.note(format!(
            "would redact {} secret{} in `{}`",
            secrets.len(),
            if secrets.len() == 1 { "" } else { "s" },
            args.session
        ));
    } else {
        ctx.out.note(format!(
            "redacted {} secret{} in `{}`: {} commit{} rewritten, {} file{}; the history before is kept under {} until `git-session redact {} --drop-backup`",
            secrets.len(),
            if secrets.len() == 1 { "" } else { "s" },
            args.session,
            done.replaced.len(),
            if done.replaced.len() == 1 { "" } else { "s" },
            done.files.len(),
            if done.files.len() == 1 { "" } else { "s" },
            done.backup.as_deref().unwrap_or("(nothing committed held them)"),
            args.session
        ));
    }
    ctx.out.record(&record);
    Ok(exit::OK)
}
