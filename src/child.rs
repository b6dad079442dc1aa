//! Running a user's command (`title --command`): in a process group of its
//! own, its output read while it runs and bounded, within a timeout, and
//! killed with every process it started when the timeout passes or when
//! this process is interrupted or terminated (SIGINT, SIGTERM, SIGHUP).
//! And a reader's program on the terminal (`man -l -`, a pager), which the
//! terminal's Ctrl-C is for. The one place this tool handles signals.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
pub fn run_command(cmd: &str, prompt: &str, timeout: f64) -> std::result::Result<String, String> {
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

/// Run `cmd` on the terminal with `input` on its stdin (a page for `man
/// -l -` or a pager), and wait for it. It is the program the reader talks
/// to, in this process's group: the terminal's SIGINT and SIGQUIT reach
/// both, and are its to act on (a pager stops a search on them), so this
/// process ignores them while it waits, as git does for its pager, and
/// takes them up again after. A reader who quits before the end (a closed
/// pipe) is no error. `Err` only when it could not be started.
pub fn run_on_terminal(
    cmd: &mut Command,
    input: &[u8],
) -> std::io::Result<std::process::ExitStatus> {
    let mut child = cmd.stdin(Stdio::piped()).spawn()?;
    // After the spawn: an ignored signal stays ignored across exec, and the
    // reader's program must get it.
    let _ignoring = Ignoring::install(&[libc::SIGINT, libc::SIGQUIT]);
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    child.wait()
}

/// While alive, the signals given are ignored (those already ignored
/// stay so); dropped, each is back as it was.
struct Ignoring {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl Ignoring {
    fn install(signals: &[libc::c_int]) -> Ignoring {
        let mut old = Vec::new();
        for &sig in signals {
            // SAFETY: sigaction reads and writes the structs given; an
            // all-zero sigaction is a valid value for it to fill.
            unsafe {
                let mut was: libc::sigaction = std::mem::zeroed();
                let mut now: libc::sigaction = std::mem::zeroed();
                now.sa_sigaction = libc::SIG_IGN;
                libc::sigemptyset(&mut now.sa_mask);
                if libc::sigaction(sig, &now, &mut was) == 0 {
                    old.push((sig, was));
                }
            }
        }
        Ignoring { old }
    }
}

impl Drop for Ignoring {
    fn drop(&mut self) {
        for (sig, was) in &self.old {
            // SAFETY: puts back the action read in `install`.
            unsafe { libc::sigaction(*sig, was, std::ptr::null_mut()) };
        }
    }
}
