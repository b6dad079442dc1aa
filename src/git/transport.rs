//! git run for the network: `ls-remote`, `push` and `fetch`, always in the
//! transfer repository (ours, its config pinned). The user's own global and
//! system config apply, as they do for git (credentials, ssh,
//! `url.<base>.insteadOf`); what would run a program from a repository's
//! config is forced off on the command line, and the `ext::` transport,
//! which runs a command named in the URL, is refused, as is `fd::`, which
//! would wait for good on file descriptors nobody hands it (a URL edited
//! into the remotes registry by hand meets both here).

use std::path::Path;
use std::process::{Command, Stdio};

use gix::ObjectId;

use crate::error::{Error, Result};

/// git in `dir`, for the transport: the user's own config applies.
pub fn git(dir: &Path) -> Command {
    super::maintenance::git_in(
        dir,
        &[
            "protocol.ext.allow=never",
            "protocol.fd.allow=never",
            // Not `transfer.`: over `file://` it would reach the receiving
            // side of a push too (the remote's own config decides there).
            "fetch.fsckObjects=true",
            // A session whose tree holds `.git` is refused on its own (its
            // checkout is checked); it must not stop every other one.
            "fetch.fsck.hasDotgit=warn",
            "fetch.writeCommitGraph=false",
        ],
    )
}

/// Why git's transport failed: the errors of this area, each with its
/// stable code (`git_session::sync::…`) and its next step; `exit 1`.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum TransportError {
    /// The remote could not be reached, or refused the request as a whole.
    #[error("`git {verb}` to `{url}` failed: {detail}")]
    #[diagnostic(
        code(git_session::sync::transport),
        help("check the URL and your access to it: `git ls-remote {url}` should list refs")
    )]
    Failed {
        verb: String,
        url: String,
        detail: String,
    },
    #[error("`git` is not installed (or not on PATH); push and fetch run it for the transport")]
    #[diagnostic(code(git_session::sync::no_git), help("install git"))]
    NoGit,
}

fn failed(verb: &str, url: &str, detail: String) -> Error {
    TransportError::Failed {
        verb: verb.to_string(),
        url: url.to_string(),
        detail,
    }
    .into()
}

fn run(mut c: Command, verb: &str, url: &str) -> Result<std::process::Output> {
    let out = c.stdin(Stdio::null()).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            TransportError::NoGit.into()
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
    // `--` first: a URL is never taken for an option.
    c.args(["ls-remote", "--refs", "--", url]);
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

/// Where [`push`] stages the refs of one request in the transfer
/// repository: `refs/push/<the remote name without refs/>`.
const STAGED: &str = "refs/push/";

/// Push `updates` (`(commit, full remote name)`, never forced) to `url` in
/// one request. The refs the remote took and refused, as git reports them
/// (`--porcelain`); an error when git reports nothing (the remote could not
/// be reached).
///
/// The refs are staged in the transfer repository's `packed-refs` (one
/// file, written here: gix's transaction would create a lock file per ref)
/// and pushed with one wildcard refspec: given a thousand `<id>:<ref>`
/// arguments, git took 0.6 s where the wildcard takes 0.3 s
/// (`bench/push.py`).
pub fn push(
    dir: &Path,
    url: &str,
    updates: &[(ObjectId, String)],
    leases: &[(String, ObjectId)],
    progress: bool,
) -> Result<Vec<PushedRef>> {
    if updates.is_empty() {
        return Ok(Vec::new());
    }
    stage(dir, updates)?;
    let mut c = git(dir);
    // Not `--quiet`: it silences the porcelain lines too.
    c.args(["push", "--porcelain", "--no-verify"]);
    // The one forced update: each ref named here replaces what the remote
    // has only when that is still `expected` (every other ref goes as a
    // fast-forward or not at all).
    for (name, expected) in leases {
        c.arg(format!("--force-with-lease={name}:{expected}"));
    }
    c.arg(if progress {
        "--progress"
    } else {
        "--no-progress"
    });
    c.arg("--").arg(url).arg(format!("{STAGED}*:refs/*"));
    if progress {
        c.stderr(Stdio::inherit());
    }
    let out = run(c, "push", url);
    stage(dir, &[])?;
    let out = out?;
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
            ok: matches!(flag, " " | "*" | "=" | "+"),
            summary: summary.to_string(),
        });
    }
    if refs.is_empty() {
        return Err(failed("push", url, last_lines(&out.stderr)));
    }
    Ok(refs)
}

/// Make `updates` the staged refs of the transfer repository in `dir`
/// (none: clear them), keeping every other packed ref.
fn stage(dir: &Path, updates: &[(ObjectId, String)]) -> Result<()> {
    use crate::error::IoContext;
    let git_dir = dir.join(".git");
    let path = git_dir.join("packed-refs");
    let old = match crate::layout::atomic::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).io("read", &path),
    };
    // No loose ref may shadow a staged one.
    let loose = git_dir.join(STAGED.trim_end_matches('/'));
    if loose.exists() {
        std::fs::remove_dir_all(&loose).io("remove", &loose)?;
    }
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut keep_peeled = false;
    for line in old.lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(peeled) = line.strip_prefix('^') {
            if keep_peeled && let Some(last) = lines.last_mut() {
                last.1.push_str(&format!("\n^{peeled}"));
            }
            continue;
        }
        let Some((id, name)) = line.split_once(' ') else {
            continue;
        };
        keep_peeled = !name.starts_with(STAGED);
        if keep_peeled {
            lines.push((name.to_string(), id.to_string()));
        }
    }
    for (id, name) in updates {
        let rel = name.strip_prefix("refs/").unwrap_or(name);
        lines.push((format!("{STAGED}{rel}"), id.to_string()));
    }
    if lines.is_empty() && old.is_empty() {
        return Ok(());
    }
    lines.sort();
    let mut text = String::from("# pack-refs with: peeled fully-peeled sorted \n");
    for (name, rest) in lines {
        let (id, peeled) = rest.split_once('\n').unwrap_or((&rest, ""));
        text.push_str(&format!("{id} {name}\n"));
        if !peeled.is_empty() {
            text.push_str(peeled);
            text.push('\n');
        }
    }
    crate::layout::atomic::write(&path, text.as_bytes())
}

/// Fetch `specs` (`+<remote pattern>:<local pattern>`, into tracking refs of
/// the transfer repository) from `url`, pruning tracking refs the remote no
/// longer has.
pub fn fetch(dir: &Path, url: &str, specs: &[String], progress: bool) -> Result<()> {
    let mut c = git(dir);
    c.args(["fetch", "--no-tags", "--prune", "--no-write-fetch-head"]);
    c.arg(if progress { "--progress" } else { "--quiet" });
    c.arg("--").arg(url).args(specs);
    if progress {
        c.stderr(Stdio::inherit());
    }
    let out = run(c, "fetch", url)?;
    if !out.status.success() {
        return Err(failed("fetch", url, last_lines(&out.stderr)));
    }
    Ok(())
}

/// Packs in the transfer repository from which [`compact`] rolls them into
/// one: each push and each fetch adds one.
const COMPACT_AT_PACKS: usize = 32;

/// Roll the transfer repository's packs into one when they pile up. Its
/// pushed objects have no ref there, so unreachable objects are kept
/// (`--keep-unreachable`): the repository is a cache, and losing them would
/// only cost the next push a copy. A failure is the caller's to warn of.
pub fn compact(dir: &Path) -> Result<bool> {
    if super::maintenance::pack_count(&dir.join(".git")) < COMPACT_AT_PACKS {
        return Ok(false);
    }
    let mut c = git(dir);
    c.args(["repack", "-a", "-d", "-q", "--keep-unreachable"]);
    let out = run(c, "repack", &dir.display().to_string())?;
    if !out.status.success() {
        return Err(failed(
            "repack",
            &dir.display().to_string(),
            last_lines(&out.stderr),
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs piled up in the transfer repository roll into one, keeping
    /// the objects no ref reaches (all of a push's).
    #[test]
    fn compacting_the_transfer_repository_keeps_every_object() {
        let dir = tempfile::tempdir().unwrap();
        crate::git::init_transfer_repo(dir.path()).unwrap();
        let mut ids = Vec::new();
        for i in 0..COMPACT_AT_PACKS {
            let mut repo = crate::git::SessionRepo::open(dir.path()).unwrap();
            let id = repo
                .write_file_commit("f", format!("{i}").into_bytes(), "m\n", 1.0, &[])
                .unwrap();
            repo.sync_objects().unwrap();
            repo.release_packs();
            ids.push(id);
        }
        assert!(compact(dir.path()).unwrap());
        assert_eq!(
            super::super::maintenance::pack_count(&dir.path().join(".git")),
            1
        );
        for id in ids {
            let out = crate::git::tests::git(dir.path(), &["cat-file", "-e", &id.to_string()]);
            assert!(out.status.success(), "{id} lost");
        }
        assert!(!compact(dir.path()).unwrap(), "one pack is left alone");
    }

    /// Staging keeps every other packed ref (and its peeled line), and
    /// clearing leaves only those.
    #[test]
    fn staged_refs_replace_only_staged_refs() {
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join(".git");
        std::fs::create_dir_all(&git_dir).unwrap();
        let a = ObjectId::from_hex(b"1111111111111111111111111111111111111111").unwrap();
        let b = ObjectId::from_hex(b"2222222222222222222222222222222222222222").unwrap();
        std::fs::write(
            git_dir.join("packed-refs"),
            format!(
                "# pack-refs with: peeled fully-peeled sorted \n{a} refs/push/sessions/old\n{a} refs/remotes/o/x\n{a} refs/tags/t\n^{b}\n"
            ),
        )
        .unwrap();
        stage(dir.path(), &[(b, "refs/sessions/s1/s1/heads/main".into())]).unwrap();
        let text = std::fs::read_to_string(git_dir.join("packed-refs")).unwrap();
        assert_eq!(
            text,
            format!(
                "# pack-refs with: peeled fully-peeled sorted \n{b} refs/push/sessions/s1/s1/heads/main\n{a} refs/remotes/o/x\n{a} refs/tags/t\n^{b}\n"
            )
        );
        stage(dir.path(), &[]).unwrap();
        let text = std::fs::read_to_string(git_dir.join("packed-refs")).unwrap();
        assert!(!text.contains("refs/push/"), "{text}");
        assert!(text.contains(&format!("{a} refs/tags/t\n^{b}\n")), "{text}");
    }
}
