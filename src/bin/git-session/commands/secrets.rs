//! `secrets scan|allow`: find the secrets sessions hold; let a known false
//! positive through.
//!
//! Reads: each session's objects (every branch) and its files not committed
//! yet, under the session's shared lock; the allow-list file
//! `<state>/secrets-allow`. Writes: `allow` rewrites that file atomically.
//! Prints: one `secret` record per finding, then `secrets_summary`.

use crate::context::Ctx;
use git_session::error::{Result, Usage, exit};
use git_session::layout::{atomic, lock};
use git_session::out::records;
use git_session::secrets::session as scan;

/// Secrets in sessions: find them before a push does, and let known false
/// positives through.
///
/// A scan applies gitleaks' default rules (cloud provider keys,
/// GitHub/GitLab tokens, OpenAI/Anthropic keys, Slack tokens, private key
/// blocks, JWTs, `password=`/`secret=` assignments of high entropy, and
/// some 200 more) and this tool's own for credentialed URLs and DSNs, to
/// every string a node holds (output, input, metadata), to `meta.json` and
/// to attachment files. A finding never shows the secret: it names the
/// session, the file, the node and field, the rule, a masked fragment and
/// a fingerprint that is the same on every run and machine. `push` refuses
/// to send a session holding a finding not allowed; `redact` is how a
/// session stops holding one.
#[derive(Debug, clap::Args)]
pub struct SecretsArgs {
    #[command(subcommand)]
    pub command: SecretsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SecretsCommand {
    /// Scan sessions: every turn on every branch, and what is not
    /// committed yet. Exit 1 when a secret not allowed was found
    Scan {
        /// Sessions to scan [default: every session]
        #[arg(value_name = "SESSION")]
        sessions: Vec<String>,
        /// Every session (the default when none is named)
        #[arg(long)]
        all: bool,
        /// Count this fingerprint as allowed too (repeat for several)
        #[arg(long, value_name = "FINGERPRINT")]
        allow: Vec<String>,
    },
    /// Let findings through from now on: add their fingerprints to the
    /// state dir's allow-list (`<state>/secrets-allow`, one per line, `#`
    /// starts a comment; a person may edit it)
    Allow {
        /// Fingerprints, as a finding shows them
        #[arg(required = true, value_name = "FINGERPRINT")]
        fingerprints: Vec<String>,
        /// Why, kept as a comment beside each
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
}

pub fn run(ctx: &Ctx, args: SecretsArgs) -> Result<u8> {
    match args.command {
        SecretsCommand::Scan {
            sessions,
            all,
            allow,
        } => scan_sessions(ctx, sessions, all, &allow),
        SecretsCommand::Allow { fingerprints, note } => allow_more(ctx, &fingerprints, note),
    }
}

fn scan_sessions(ctx: &Ctx, names: Vec<String>, all: bool, allow: &[String]) -> Result<u8> {
    if all && !names.is_empty() {
        return Err(Usage::AllAndSessionNames.into());
    }
    let allowed = scan::allowed(&ctx.state, allow)?;
    let targets = if names.is_empty() {
        git_session::layout::registry::candidates(&ctx.state)?
    } else {
        names
            .into_iter()
            .map(|id| ctx.state.find_session(&id).map(|sd| (id, sd.dir)))
            .collect::<Result<_>>()?
    };
    let mut summary = records::SecretsSummary {
        sessions: 0,
        sessions_with_secrets: 0,
        findings: 0,
        allowed: 0,
        skipped: Vec::new(),
    };
    let progress =
        git_session::out::Progress::new(&ctx.out, targets.len() as u64, "scanning sessions");
    for (id, dir) in targets {
        progress.inc();
        let sd = git_session::layout::paths::SessionDir::new(dir);
        let found = lock::session(&sd, lock::Kind::Shared, ctx.locks)
            .and_then(|_held| scan::scan_session(&sd));
        let found = match found {
            Ok(f) => f,
            Err(e) => {
                ctx.out.warn(format!("session `{id}` not scanned: {e}"));
                summary.skipped.push(records::SkippedSession {
                    session: id,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        summary.sessions += 1;
        let mut held = false;
        progress.suspend(|| {
            for f in found {
                let ok = allowed.contains(&f.fingerprint);
                summary.findings += 1;
                summary.allowed += usize::from(ok);
                held |= !ok;
                print_finding(ctx, &id, f, ok);
            }
        });
        summary.sessions_with_secrets += usize::from(held);
    }
    progress.finish();
    let left = summary.findings - summary.allowed;
    ctx.out.note(format!(
        "{} secret{} in {} of {} session{}{}",
        left,
        if left == 1 { "" } else { "s" },
        summary.sessions_with_secrets,
        summary.sessions,
        if summary.sessions == 1 { "" } else { "s" },
        if summary.allowed > 0 {
            format!(" ({} allowed)", summary.allowed)
        } else {
            String::new()
        }
    ));
    let code = if left > 0 || !summary.skipped.is_empty() {
        exit::NO
    } else {
        exit::OK
    };
    ctx.out.record(&summary);
    Ok(code)
}

/// One finding: a line for a person (`session node field: rule masked
/// fingerprint`), a `secret` record under `--json`.
pub fn print_finding(ctx: &Ctx, session: &str, f: scan::Finding, allowed: bool) {
    let place = f.node.as_deref().unwrap_or(&f.path);
    let field = if f.field.is_empty() {
        String::new()
    } else {
        format!(" {}", f.field)
    };
    ctx.out.line(format!(
        "{session} {place}{field}: {} {} {}{}",
        f.rule,
        f.masked,
        f.fingerprint,
        if allowed { " (allowed)" } else { "" }
    ));
    ctx.out.record(&records::Secret {
        session: session.to_string(),
        path: f.path,
        node: f.node,
        field: f.field,
        rule: f.rule,
        masked: f.masked,
        fingerprint: f.fingerprint,
        allowed,
    });
}

fn allow_more(ctx: &Ctx, fingerprints: &[String], note: Option<String>) -> Result<u8> {
    // Checked as the file's own are.
    let known = scan::allowed(&ctx.state, fingerprints)?;
    let path = ctx.state.secrets_allow_file();
    let before = scan::allow_file(&ctx.state)?;
    let mut listed = scan::allowed_in(&before);
    let mut text = before;
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    let note = note
        .map(|n| format!("  # {}", git_session::out::in_one_line(&n)))
        .unwrap_or_default();
    let mut added = 0;
    for fp in fingerprints {
        let fp = fp.trim();
        if !listed.insert(fp.to_string()) {
            continue;
        }
        text.extend_from_slice(format!("{fp}{note}\n").as_bytes());
        added += 1;
    }
    if added > 0 {
        ctx.state.check_links()?;
        atomic::refuse_unsafe(&path)?;
        atomic::write(&path, &text)?;
    }
    ctx.out.note(format!(
        "{added} fingerprint{} added to {} ({} allowed)",
        if added == 1 { "" } else { "s" },
        path.display(),
        known.len()
    ));
    Ok(exit::OK)
}
