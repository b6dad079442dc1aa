//! `title`: name a session (SPEC §5.9): phase 1 truncates the first user
//! message; phase 2 asks an external command.
//!
//! Reads: meta.json and the nodes of the current branch. Writes: meta.json
//! (`title`, `_auto_titled`, `_title_gen_count`; never `updated_at`), one
//! index journal row. Locks: the session, exclusive (released while the
//! command runs). Prints: the title.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::context::Ctx;
use crate::error::{Result, exit};
use crate::layout::history::{self, Catalog};
use crate::layout::schema::{self, Meta, Node};
use crate::layout::{atomic, lock, registry};
use crate::session;
use crate::view::Dag;

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

/// What of a command's output is kept: a title is its first line, and a
/// command that prints without end must not fill the memory.
const OUTPUT_KEPT: u64 = 64 * 1024;

/// Run `cmd` with `prompt` on its stdin and return what it printed. Its
/// stdout is read while it runs (a command that prints more than a pipe
/// holds would otherwise wait on us until the timeout), the first
/// [`OUTPUT_KEPT`] bytes kept and the rest drained; `timeout` bounds the
/// whole run, a descendant holding the pipe open included. The command runs
/// in a process group of its own: at the timeout the whole group is killed,
/// so that nothing it started runs on (holding the pipe, and the thread
/// that reads it, which under `batch` would outlive the request).
fn run_command(cmd: &str, prompt: &str, timeout: f64) -> std::result::Result<String, String> {
    use std::os::unix::process::CommandExt;
    // Out of the terminal's reach, the group goes with this process when
    // it is interrupted or terminated.
    let mut forwarding = EndsWithGroup::install();
    let mut child = Command::new("sh")
        .args(["-c", cmd])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run `{cmd}`: {e}"))?;
    let group = child.id() as libc::pid_t;
    forwarding.watch(group);
    let kill_group = || {
        // SAFETY: a plain system call; the group is the one the command
        // was started in (its leader's id), and may be gone already.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    };
    let mut stdin = child.stdin.take().expect("piped");
    let prompt = prompt.to_string();
    std::thread::spawn(move || {
        let _ = stdin.write_all(prompt.as_bytes());
    });
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut stdout = stdout;
        let kept = (&mut stdout).take(OUTPUT_KEPT).read_to_end(&mut out);
        let drained = std::io::copy(&mut stdout, &mut std::io::sink());
        let _ = tx.send(kept.and(drained).map(|_| out));
    });
    // No deadline: a timeout too large to count (`inf`).
    let deadline = Duration::try_from_secs_f64(timeout.max(0.0))
        .ok()
        .and_then(|d| Instant::now().checked_add(d));
    let late = || format!("`{cmd}` did not answer within {timeout}s");
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if deadline.is_some_and(|d| Instant::now() >= d) => {
                kill_group();
                let _ = child.wait();
                return Err(late());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e.to_string()),
        }
    };
    let out = match deadline {
        Some(d) => rx.recv_timeout(d.saturating_duration_since(Instant::now())),
        None => rx
            .recv()
            .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected),
    };
    let out = match out {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(format!("cannot read what `{cmd}` printed: {e}")),
        // Exited, but something it started still holds its stdout open.
        Err(_) => {
            kill_group();
            return Err(late());
        }
    };
    if !status.success() {
        return Err(format!("`{cmd}` failed ({status})"));
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The process group of the title command running now (0: none). One at
/// a time: `title` runs one command, and a process runs one `title`.
static GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The signals that end this process by default and reach it from a
/// terminal (Ctrl-C, a closed terminal) or a supervisor.
const ENDING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// A signal in [`ENDING`] while a title command runs: kill its group, then
/// end this process as the signal would have.
extern "C" fn end_with_group(sig: libc::c_int) {
    let group = GROUP.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: kill, signal and raise are async-signal-safe. The signal is
    // blocked while this handler runs, so the raise lands when it returns,
    // under the default action: this process ends by it.
    unsafe {
        if group > 0 {
            libc::kill(-group, libc::SIGKILL);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// While alive, an ending signal kills the title command's group before
/// this process ends by it: the command runs in a group of its own (so
/// that its timeout can kill all it started), where the terminal's
/// Ctrl-C no longer reaches it. A signal this process ignores (`nohup`)
/// stays ignored.
struct EndsWithGroup {
    old: Vec<(libc::c_int, libc::sigaction)>,
    /// This thread's signal mask before `install` blocked the ending
    /// signals (until `watch`: a signal while the command is started
    /// waits for its group to be known).
    mask: Option<libc::sigset_t>,
}

impl EndsWithGroup {
    fn install() -> EndsWithGroup {
        // SAFETY: sigemptyset/sigaddset fill the set given; pthread_sigmask
        // reads one set and fills the other. (A child starts with an empty
        // mask: std clears it.)
        let mask = unsafe {
            let mut block: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut block);
            for sig in ENDING {
                libc::sigaddset(&mut block, sig);
            }
            let mut was: libc::sigset_t = std::mem::zeroed();
            (libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut was) == 0).then_some(was)
        };
        let mut old = Vec::new();
        for sig in ENDING {
            // SAFETY: sigaction reads and writes the two structs given; an
            // all-zero sigaction is a valid value for it to fill.
            unsafe {
                let mut was: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut was) != 0
                    || was.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut now: libc::sigaction = std::mem::zeroed();
                now.sa_sigaction = end_with_group as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut now.sa_mask);
                if libc::sigaction(sig, &now, std::ptr::null_mut()) == 0 {
                    old.push((sig, was));
                }
            }
        }
        EndsWithGroup { old, mask }
    }

    /// From now on, the group an ending signal kills (one that came while
    /// the command was started lands now).
    fn watch(&mut self, group: libc::pid_t) {
        GROUP.store(group, std::sync::atomic::Ordering::SeqCst);
        self.unblock();
    }

    fn unblock(&mut self) {
        if let Some(was) = self.mask.take() {
            // SAFETY: puts back the mask read in `install`.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &was, std::ptr::null_mut()) };
        }
    }
}

impl Drop for EndsWithGroup {
    fn drop(&mut self) {
        self.unblock();
        GROUP.store(0, std::sync::atomic::Ordering::SeqCst);
        for (sig, was) in &self.old {
            // SAFETY: puts back the action read in `install`.
            unsafe { libc::sigaction(*sig, was, std::ptr::null_mut()) };
        }
    }
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
        return Err(crate::error::Error::usage(
            "usage::timeout",
            format!("invalid `--timeout` {}", args.timeout),
            Some("give a number of seconds, 0 or more (`inf` waits without end)".into()),
        ));
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
            match run_command(cmd, &prompt(&picked), args.timeout).map(|o| clean_title(&o)) {
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
    ctx.out.record(&crate::out::records::Title {
        session: args.session.clone(),
        title: title.clone(),
        phase,
        unchanged: false,
        reason: None,
    });
    ctx.out.line(crate::out::in_one_line(&title));
    Ok(exit::OK)
}

/// The title stays: the `title` record says so (`unchanged`, and why), and
/// the line is the current title.
fn unchanged(ctx: &Ctx, id: &str, title: &str, reason: &str) -> Result<u8> {
    ctx.out.record(&crate::out::records::Title {
        session: id.into(),
        title: title.into(),
        phase: 0,
        unchanged: true,
        reason: Some(reason.into()),
    });
    ctx.out.line(crate::out::in_one_line(title));
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
