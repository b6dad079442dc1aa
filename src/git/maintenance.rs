//! Background packing of session repositories: the one place git runs on
//! a session repo, as a child that outlives the command.

use std::path::{Path, PathBuf};

/// Packs in `git_dir` (one directory listing, no `stat` per file).
pub(super) fn pack_count(git_dir: &Path) -> usize {
    std::fs::read_dir(git_dir.join("objects/pack")).map_or(0, |rd| {
        rd.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().as_encoded_bytes().ends_with(b".idx"))
        })
        .count()
    })
}

/// Packs from which background maintenance runs `git gc` whatever is due:
/// rolling up has not kept up (git failed, or was missing for a while).
const GC_AT_PACKS: usize = 50;

/// What background maintenance does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maintenance {
    /// Roll the turns' loose objects (and small packs) up into a pack,
    /// keeping the packs' sizes a geometric progression: the work follows
    /// the new objects, not the session's size.
    RollUp,
    /// `git gc`: everything into one pack, refs packed, unreachable objects
    /// (a crashed turn's objects) expired.
    Full,
}

/// The git command of `kind` for a session repo (SPEC §2.3).
///
/// Not `git gc --auto`: it counts loose objects from a sample of
/// `objects/17` and knows nothing of many small packs. Refs stay loose
/// (`gc.packRefs=false`): with a `packed-refs` file, every ref update
/// through gix also locks it (a file created and removed per turn).
fn maintenance_args(git_dir: &Path, kind: Maintenance) -> &'static [&'static str] {
    if kind == Maintenance::Full || pack_count(git_dir) >= GC_AT_PACKS {
        &["-c", "gc.packRefs=false", "gc", "--quiet"]
    } else {
        // -F: compress the objects, which turns write uncompressed.
        &["repack", "-d", "-l", "-q", "-F", "--geometric=2"]
    }
}

/// `.git/git-session/maintenance.lock` of the session repo in `dir`.
fn maintenance_lock(dir: &Path) -> PathBuf {
    dir.join(".git")
        .join("git-session")
        .join("maintenance.lock")
}

/// Wait for a background packing run of the session repo in `dir` to end,
/// and keep the next one from starting while the returned file is open (it
/// is skipped). `None` when the session has no lock file (it never had a
/// run), or it cannot be locked.
pub fn hold_maintenance(dir: &Path) -> Option<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(maintenance_lock(dir))
        .ok()?;
    f.lock().ok()?;
    Some(f)
}

/// What [`spawn_maintenance`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spawned {
    Started,
    /// The previous run is still going: this one is skipped.
    Busy,
    /// No `git` to run (a warning, not an error).
    NoGit,
}

/// The git CLI for a repository whose config is not trusted (SPEC §4): no
/// system or global config, and the settings that run programs forced off
/// on the command line, which wins over the repository's config and its
/// includes: no hooks, no fsmonitor, no pager, no alternate-refs command.
/// Its refs and objects are its own (`GIT_COMMON_DIR`, over any
/// `commondir` file planted after the session was checked).
pub fn untrusted_git(dir: &Path) -> std::process::Command {
    let mut c = git_in(dir, &["core.sshCommand=false"]);
    c.env("GIT_COMMON_DIR", dir.join(".git"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_CONFIG")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT");
    c
}

/// git in `dir` with the settings that run programs from a repository's
/// config forced off on the command line (which wins over the
/// repository's config and its includes), and `extra`; the environment
/// that would point it at another repository removed, and no prompt.
pub(super) fn git_in(dir: &Path, extra: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new("git");
    c.arg("-C").arg(dir);
    for setting in [
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "core.pager=cat",
        "core.alternateRefsCommand=",
        "gc.auto=0",
        "maintenance.auto=false",
    ]
    .iter()
    .chain(extra)
    {
        c.arg("-c").arg(setting);
    }
    c.env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .env_remove("GIT_EXEC_PATH");
    c
}

/// Start packing in the background (see `maintenance_args`), one run at a
/// time per session: the run holds `.git/git-session/maintenance.lock`,
/// handed to git as its stdin, so that the lock lives exactly as long as git
/// and the commands git starts, whatever becomes of this process. Without
/// it, runs that take longer than the turns between them pile up and
/// compete for the same packs.
pub fn spawn_maintenance(dir: &Path, kind: Maintenance) -> Spawned {
    let git_dir = dir.join(".git");
    let Ok(lock) = crate::layout::atomic::no_follow(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(maintenance_lock(dir)) else {
        return Spawned::Busy; // no private dir: nothing to maintain yet
    };
    if lock.try_lock().is_err() {
        return Spawned::Busy;
    }
    match untrusted_git(dir)
        .args(maintenance_args(&git_dir, kind))
        .stdin(lock)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(_) => Spawned::Started,
        Err(_) => Spawned::NoGit,
    }
}

/// Drop from the repository in `dir` every object no ref reaches, at once:
/// the reflogs' entries for them expire, then `git gc --prune=now` (what
/// `redact --drop-backup` does once the history before is unreferenced).
pub fn prune_unreachable(dir: &Path) -> crate::error::Result<()> {
    let _held = hold_maintenance(dir);
    for args in [
        &["reflog", "expire", "--expire-unreachable=now", "--all"][..],
        &["gc", "--prune=now", "--quiet"][..],
    ] {
        let out = git_in(dir, &[])
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| crate::error::Error::git("run git", dir, e.to_string()))?;
        if !out.status.success() {
            return Err(crate::error::Error::git(
                "drop unreachable objects",
                dir,
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_untrusted_git_keeps_to_the_repositorys_own_refs_and_objects() {
        let tmp = tempfile::tempdir().unwrap();
        let (session, other) = (tmp.path().join("s"), tmp.path().join("other"));
        for d in [&session, &other] {
            std::fs::create_dir_all(d).unwrap();
            let init = super::untrusted_git(d)
                .args(["init", "-q"])
                .status()
                .unwrap();
            assert!(init.success());
        }
        // Planted after the session was checked: git would use the other's.
        std::fs::write(
            session.join(".git/commondir"),
            format!("{}\n", other.join(".git").display()),
        )
        .unwrap();
        let common = |c: &mut std::process::Command| {
            let out = c
                .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        let plain = common(std::process::Command::new("git").arg("-C").arg(&session));
        assert_eq!(
            plain,
            other.join(".git").to_str().unwrap(),
            "the attack is real"
        );
        let ours = common(&mut super::untrusted_git(&session));
        assert_eq!(ours, session.join(".git").to_str().unwrap());
    }
}
