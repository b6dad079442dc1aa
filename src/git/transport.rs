//! git run for the network: `ls-remote`, `push` and `fetch`, always in the
//! transfer repository (ours, its config pinned). The user's own global and
//! system config apply, as they do for git (credentials, ssh,
//! `url.<base>.insteadOf`); what would run a program from a repository's
//! config is forced off on the command line, and the `ext::` transport,
//! which runs a command named in the URL, is refused.

use std::path::Path;
use std::process::{Command, Stdio};

use gix::ObjectId;

use crate::error::{Error, Result};

/// git in `dir`, for the transport.
pub fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir);
    for setting in [
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "core.pager=cat",
        "core.alternateRefsCommand=",
        "gc.auto=0",
        "maintenance.auto=false",
        "protocol.ext.allow=never",
        "transfer.fsckObjects=true",
        // A session whose tree holds `.git` is refused on its own (its
        // checkout is checked); it must not stop every other one.
        "fetch.fsck.hasDotgit=warn",
        "fetch.writeCommitGraph=false",
    ] {
        c.arg("-c").arg(setting);
    }
    c.env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .env_remove("GIT_EXEC_PATH")
        .env("GIT_TERMINAL_PROMPT", "0");
    c
}

fn failed(verb: &str, url: &str, detail: String) -> Error {
    Error::refused(
        "sync::transport",
        format!("`git {verb}` to `{url}` failed: {detail}"),
        Some(format!(
            "check the URL and your access to it: `git ls-remote {url}` should list refs"
        )),
    )
}

fn run(mut c: Command, verb: &str, url: &str) -> Result<std::process::Output> {
    let out = c.stdin(Stdio::null()).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::refused(
                "sync::no_git",
                "`git` is not installed (or not on PATH); push and fetch run it for the transport",
                Some("install git".to_string()),
            )
        } else {
            failed(verb, url, e.to_string())
        }
    })?;
    Ok(out)
}

fn last_lines(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// The remote's refs under `prefixes` (e.g. `refs/sessions/`): `(full
/// name, id)`. Names that are not ours are the caller's to check.
pub fn ls_remote(dir: &Path, url: &str, prefixes: &[&str]) -> Result<Vec<(String, ObjectId)>> {
    let mut c = git(dir);
    c.args(["ls-remote", "--refs", url]);
    c.args(prefixes.iter().map(|p| format!("{p}*")));
    let out = run(c, "ls-remote", url)?;
    if !out.status.success() {
        return Err(failed("ls-remote", url, last_lines(&out.stderr)));
    }
    let mut refs = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((id, name)) = line.split_once('\t') else {
            continue;
        };
        let (Ok(id), true) = (
            ObjectId::from_hex(id.as_bytes()),
            prefixes.iter().any(|p| name.starts_with(p)),
        ) else {
            continue;
        };
        refs.push((name.to_string(), id));
    }
    Ok(refs)
}

/// What the remote said of one ref of a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRef {
    /// The remote ref's full name.
    pub name: String,
    /// Taken (created, advanced or already there).
    pub ok: bool,
    /// git's summary (`[new reference]`, `[rejected] (fetch first)`…).
    pub summary: String,
}

/// Push `specs` (`<id>:<full remote name>`, never forced) to `url` in one
/// request. The refs the remote took and refused, as git reports them
/// (`--porcelain`); an error when git reports nothing (the remote could not
/// be reached).
pub fn push(dir: &Path, url: &str, specs: &[String], progress: bool) -> Result<Vec<PushedRef>> {
    let mut c = git(dir);
    // Not `--quiet`: it silences the porcelain lines too.
    c.args(["push", "--porcelain", "--no-verify"]);
    c.arg(if progress {
        "--progress"
    } else {
        "--no-progress"
    });
    c.arg(url).args(specs);
    if progress {
        c.stderr(Stdio::inherit());
    }
    let out = run(c, "push", url)?;
    let mut refs = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut parts = line.splitn(3, '\t');
        let (Some(flag), Some(spec), Some(summary)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Some((_, to)) = spec.split_once(':') else {
            continue;
        };
        refs.push(PushedRef {
            name: to.to_string(),
            ok: matches!(flag, " " | "*" | "="),
            summary: summary.to_string(),
        });
    }
    if refs.is_empty() && !specs.is_empty() {
        return Err(failed("push", url, last_lines(&out.stderr)));
    }
    Ok(refs)
}

/// Fetch `specs` (`+<remote pattern>:<local pattern>`, into tracking refs of
/// the transfer repository) from `url`, pruning tracking refs the remote no
/// longer has.
pub fn fetch(dir: &Path, url: &str, specs: &[String], progress: bool) -> Result<()> {
    let mut c = git(dir);
    c.args(["fetch", "--no-tags", "--prune", "--no-write-fetch-head"]);
    c.arg(if progress { "--progress" } else { "--quiet" });
    c.arg(url).args(specs);
    if progress {
        c.stderr(Stdio::inherit());
    }
    let out = run(c, "fetch", url)?;
    if !out.status.success() {
        return Err(failed("fetch", url, last_lines(&out.stderr)));
    }
    Ok(())
}
