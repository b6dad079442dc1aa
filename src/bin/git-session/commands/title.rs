//! `title`: name a session (SPEC §5.9): phase 1 truncates the first user
//! message; phase 2 asks an external command.
//!
//! Reads: meta.json and the nodes of the current branch. Writes: meta.json
//! (`title`, `_auto_titled`, `_title_gen_count`; never `updated_at`), one
//! index journal row. Locks: the session, exclusive (released while the
//! command runs). Prints: the title.

use crate::context::Ctx;
use git_session::error::{Result, Usage, exit};
use git_session::layout::history::{self, Catalog};
use git_session::layout::schema::{self, Meta, Node};
use git_session::layout::{atomic, lock, registry};
use git_session::session;
use git_session::view::Dag;

/// Retitle when the branch reaches this many assistant replies.
pub const THRESHOLDS: [usize; 4] = [1, 6, 16, 40];

/// Name a session: phase 1 (the first user message, 50 chars) and phase 2
/// (the first line CMD prints, given the conversation on stdin).
///
/// With `--auto`, retitle only when the branch reaches 1, 6, 16 or 40
/// assistant replies, from the last 20 messages. A title typed by the user is
/// never replaced. A failing command keeps the old title (exit 0, a warning).
/// The command runs in a process group of its own: past `--timeout`, or when
/// `title` is interrupted or terminated (SIGINT, SIGTERM, SIGHUP), the whole
/// group is killed, so nothing it started runs on.
#[derive(Debug, clap::Args)]
pub struct TitleArgs {
    /// Session id
    pub session: String,
    /// Retitle only at the progressive thresholds
    #[arg(long)]
    pub auto: bool,
    /// Command that prints a title (run with `sh -c`, prompt on stdin)
    #[arg(long, value_name = "CMD", env = "GIT_SESSION_TITLE_CMD")]
    pub command: Option<String>,
    /// Seconds to wait for the command to end and its output to close;
    /// then it is killed, with every process it started (`inf`: no limit)
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30.0,
        allow_negative_numbers = true
    )]
    pub timeout: f64,
}

/// The title a command printed: first non-empty line, quotes and a `Title:`
/// prefix stripped, cut to 80 characters.
pub fn clean_title(out: &str) -> String {
    let line = out
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = if line.len() >= 6 && line[..6].eq_ignore_ascii_case("title:") {
        &line[6..]
    } else {
        line
    };
    let quotes: &[char] = &['"', '\'', '`', '“', '”', '‘', '’', '«', '»', '*'];
    session::cut(line.trim().trim_matches(quotes).trim(), 80)
}

fn prompt(messages: &[&Node]) -> String {
    let mut p = String::from(
        "Suggest a short title (at most 80 characters) for this conversation. Answer with the title only.\n\n",
    );
    for n in messages {
        let who = if n.role == "user" {
            "User"
        } else {
            "Assistant"
        };
        p.push_str(&format!("{who}: {}\n\n", session::cut(&n.text(), 500)));
    }
    p
}

pub fn run(ctx: &Ctx, args: TitleArgs) -> Result<u8> {
    // `inf` waits without end; NaN is no number of seconds.
    if args.timeout.is_nan() || args.timeout < 0.0 {
        return Err(Usage::Timeout {
            value: args.timeout,
        }
        .into());
    }
    let sd = ctx.state.find_session(&args.session)?;
    let (meta, phase1, messages, replies) = {
        let _l = ctx.lock_session(&sd, lock::Kind::Shared)?;
        let meta = Meta::read(&sd.meta())?;
        let out = ctx.out;
        let nodes = history::read_all(&sd.history(), &Catalog::load(&sd)?, &mut |w| out.warn(w));
        let dag = Dag::new(&nodes);
        let chain: Vec<Node> = meta
            .head_id()
            .map(|h| dag.chain(h))
            .unwrap_or_default()
            .into_iter()
            .cloned()
            .collect();
        let phase1 = chain
            .iter()
            .find(|n| n.starts_turn())
            .map(|n| session::title_from_text(&n.text()))
            .unwrap_or_default();
        let replies = chain.iter().filter(|n| n.role == "llm").count();
        (meta, phase1, chain, replies)
    };
    if meta.flag("_user_titled") {
        ctx.out.note(format!(
            "`{}` has a title typed by the user; left alone",
            args.session
        ));
        return unchanged(ctx, &args.session, meta.title(), "user_titled");
    }
    let generation = meta
        .0
        .get("_title_gen_count")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    let last_at = meta.0.get("_title_gen_replies").and_then(|v| v.as_u64());
    if args.auto {
        let due =
            generation == 0 || (THRESHOLDS.contains(&replies) && last_at != Some(replies as u64));
        if !due {
            ctx.out.note(format!(
                "not due: {replies} assistant replies on this branch"
            ));
            return unchanged(ctx, &args.session, meta.title(), "not_due");
        }
    }
    let mut title = meta.title().to_string();
    let mut phase = 0;
    if title.is_empty() && !phase1.is_empty() {
        title = phase1.clone();
        phase = 1;
    }
    if let Some(cmd) = args.command.as_deref().filter(|c| !c.trim().is_empty()) {
        // The first round only replaces the phase-1 title (not one set meanwhile).
        if generation > 1 || title == phase1 {
            let picked: Vec<&Node> = if args.auto {
                messages
                    .iter()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect()
            } else {
                let first_user = messages.iter().find(|n| n.starts_turn());
                let reply = messages.iter().find(|n| n.role == "llm");
                first_user.into_iter().chain(reply).collect()
            };
            match git_session::child::run_command(cmd, &prompt(&picked), args.timeout)
                .map(|o| clean_title(&o))
            {
                Ok(t) if !t.is_empty() => {
                    title = t;
                    phase = 2;
                }
                Ok(_) => ctx
                    .out
                    .warn("the title command printed nothing; title kept"),
                Err(e) => ctx.out.warn(format!("{e}; title kept")),
            }
        }
    }
    if phase == 0 {
        return unchanged(ctx, &args.session, &title, "no_new_title");
    }
    // Write under the lock, unless the user titled it while the command ran.
    let l = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
    let mut meta = Meta::read(&sd.meta())?;
    if meta.flag("_user_titled") {
        ctx.out
            .note("the user titled the session meanwhile; left alone");
        return unchanged(ctx, &args.session, meta.title(), "user_titled");
    }
    meta.set("title", title.as_str());
    meta.set("_auto_titled", true);
    meta.set("_title_gen_count", generation + 1);
    meta.set("_title_gen_replies", replies as u64);
    atomic::write(&sd.meta(), &meta.to_json())?;
    registry::journal_append(&ctx.state, &schema::index_row(&meta, &args.session, None))?;
    drop(l); // the lock order: registry, then session
    registry::fold(&ctx.state, ctx.locks)?;
    ctx.out.record(&git_session::out::records::Title {
        session: args.session.clone(),
        title: title.clone(),
        phase,
        unchanged: false,
        reason: None,
    });
    ctx.out.line(git_session::out::in_one_line(&title));
    Ok(exit::OK)
}

/// The title stays: the `title` record says so (`unchanged`, and why), and
/// the line is the current title.
fn unchanged(ctx: &Ctx, id: &str, title: &str, reason: &str) -> Result<u8> {
    ctx.out.record(&git_session::out::records::Title {
        session: id.into(),
        title: title.into(),
        phase: 0,
        unchanged: true,
        reason: Some(reason.into()),
    });
    ctx.out.line(git_session::out::in_one_line(title));
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cleaned() {
        assert_eq!(
            clean_title("Title: \"Fixing the CI build\"\nmore"),
            "Fixing the CI build"
        );
        assert_eq!(clean_title("\n\n  “Quoted”  \n"), "Quoted");
        assert_eq!(clean_title(&"x".repeat(100)).chars().count(), 80);
        assert_eq!(clean_title(""), "");
    }
}
