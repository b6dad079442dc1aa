//! Git objects missing or damaged: the blobs of the newest tree, every
//! object the branches reach (`--objects`), and which of them a file of the
//! session still holds, for `verify --fix` to store again.

use std::path::Path;

use super::{Checker, Restore};
use crate::git::{BadObject, Oid, SessionRepo};
use crate::layout::SessionDir;

/// `--objects`: every commit, tree and blob that HEAD and the branches
/// reach, read from the object database and hashed (as `git fsck` does,
/// without git): a stored object that is damaged, though its name is still
/// there, is found even when the file it was made from is intact. A blob
/// is followed with its path in the tree, so that one whose file still
/// holds its bytes can be stored again ([`report_lost_blobs`]).
pub(super) fn corrupt_objects(c: &mut Checker<'_>, sd: &SessionDir, repo: &SessionRepo) {
    let tips = repo.head().ok().and_then(|h| h.commit).into_iter().chain(
        repo.branches()
            .unwrap_or_default()
            .into_iter()
            .map(|(_, t)| t),
    );
    let (reached, bad) = repo.check_reachable(tips);
    report_lost_blobs(c, sd, repo, bad, |n| {
        format!("{n} of the {reached} object(s) the branches reach are missing or damaged")
    });
}

/// Blobs of the newest tree that the object database lacks, or holds as an
/// empty loose file: what a crash leaves of an object whose bytes never
/// reached the disk (the file is there, so nothing writes it again, and git
/// fails on it). Other damage inside a file is found by `--objects`, which
/// reads every object.
pub(super) fn missing_blobs(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    entries: &[(String, u32, Oid)],
) {
    let lost: Vec<BadObject> = entries
        .iter()
        .filter(|(_, mode, _)| *mode != 0o160000)
        .filter_map(|(path, _, id)| {
            let why = if !repo.object_exists(*id) {
                "missing"
            } else if std::fs::symlink_metadata(repo.loose_path(*id)).is_ok_and(|m| m.len() == 0) {
                "an empty file"
            } else {
                return None;
            };
            Some(BadObject {
                id: *id,
                path: Some(path.clone()),
                why: why.into(),
            })
        })
        .collect();
    report_lost_blobs(c, sd, repo, lost, |n| {
        format!("{n} blob(s) of the latest commit are missing or damaged")
    });
}

/// Report lost objects, as one finding for those `verify --fix` stores
/// again from a file of the session that holds their bytes (queued in
/// `rewrite`), and one for the rest, which need a backup. A blob counts as
/// repairable only when it is missing or its copy is loose: a damaged copy
/// inside a pack would still be read first.
fn report_lost_blobs(
    c: &mut Checker<'_>,
    sd: &SessionDir,
    repo: &SessionRepo,
    lost: Vec<BadObject>,
    what: impl Fn(usize) -> String,
) {
    let (fixable, rest): (Vec<BadObject>, Vec<BadObject>) = lost.into_iter().partition(|l| {
        l.path
            .as_deref()
            .is_some_and(|p| file_holds_blob(&sd.dir.join(p), l.id))
            && (!repo.object_exists(l.id)
                || std::fs::symlink_metadata(repo.loose_path(l.id)).is_ok())
    });
    let listed = |ls: &[BadObject]| {
        ls.iter()
            .take(3)
            .map(|l| match &l.path {
                Some(p) => format!("{p} ({}, {})", l.id, l.why),
                None => format!("{} ({})", l.id, l.why),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !fixable.is_empty() {
        c.add(
            "object_missing",
            &sd.git_dir(),
            format!(
                "{}: {}; the session's files still hold their bytes",
                what(fixable.len()),
                listed(&fixable)
            ),
            format!("git-session verify --fix {}", c.id),
            true,
        );
        for l in fixable {
            if !c.out.rewrite.iter().any(|r| r.blob == l.id) {
                c.out.rewrite.push(Restore {
                    rel: l.path.expect("a repairable blob has a path"),
                    blob: l.id,
                });
            }
        }
    }
    if !rest.is_empty() {
        c.add(
            "object_missing",
            &sd.git_dir(),
            format!("{}: {}", what(rest.len()), listed(&rest)),
            "restore the repository from a backup; `git fsck` lists what is lost".into(),
            false,
        );
    }
}

/// Whether the regular file at `path` (never through a link) holds the
/// bytes of blob `id`.
fn file_holds_blob(path: &Path, id: Oid) -> bool {
    matches!(blob_in_file(path, id), Ok(Some(_)))
}

/// The bytes of the file at `path` when it is a regular file (never read
/// through a link) holding blob `id`; `None` when it is not one, or holds
/// other bytes: what `verify --fix` stores a lost blob again from.
pub fn blob_in_file(path: &Path, id: Oid) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    if !std::fs::symlink_metadata(path)?.is_file() {
        return Ok(None);
    }
    let mut data = Vec::new();
    crate::layout::atomic::no_follow(std::fs::OpenOptions::new().read(true))
        .open(path)?
        .read_to_end(&mut data)?;
    Ok((crate::git::blob_id(&data) == id).then_some(data))
}
