//! Editing index entries: stat data from the file system, and applying
//! staged entries (used for session repos and users' project repos alike).

use gix::bstr::ByteSlice;

/// What git stores for a working-tree file: its bytes, or a symlink's target.
pub fn read_worktree(
    path: &std::path::Path,
    md: &std::fs::Metadata,
) -> crate::error::Result<Vec<u8>> {
    use crate::error::IoContext;
    if md.file_type().is_symlink() {
        Ok(std::fs::read_link(path)
            .io("read the link", path)?
            .as_os_str()
            .as_encoded_bytes()
            .to_vec())
    } else {
        crate::layout::atomic::read(path).io("read", path)
    }
}

/// A file to add or update in the index.
pub struct Staged {
    pub path: Vec<u8>,
    pub mode: gix::index::entry::Mode,
    pub id: gix::ObjectId,
    pub stat: gix::index::entry::Stat,
}

/// Does an index entry's stat data describe this file as it is?
pub fn stat_matches(stat: &gix::index::entry::Stat, md: &std::fs::Metadata) -> bool {
    *stat == stat_of(md)
}

pub fn stat_of(md: &std::fs::Metadata) -> gix::index::entry::Stat {
    use std::os::unix::fs::MetadataExt;
    let t = |s: i64, ns: i64| gix::index::entry::stat::Time {
        secs: s as u32,
        nsecs: ns as u32,
    };
    gix::index::entry::Stat {
        mtime: t(md.mtime(), md.mtime_nsec()),
        ctime: t(md.ctime(), md.ctime_nsec()),
        dev: md.dev() as u32,
        ino: md.ino() as u32,
        uid: md.uid(),
        gid: md.gid(),
        size: md.len() as u32,
    }
}

pub fn mode_of(md: &std::fs::Metadata) -> gix::index::entry::Mode {
    use gix::index::entry::Mode;
    use std::os::unix::fs::PermissionsExt;
    if md.file_type().is_symlink() {
        Mode::SYMLINK
    } else if md.permissions().mode() & 0o111 != 0 {
        Mode::FILE_EXECUTABLE
    } else {
        Mode::FILE
    }
}

/// Update existing entries in place (lookups need sorted entries), then push
/// the new ones and sort once.
pub fn apply(index: &mut gix::index::State, staged: Vec<Staged>) {
    let mut new = Vec::new();
    for s in staged {
        match index
            .entry_mut_by_path_and_stage(s.path.as_bstr(), gix::index::entry::Stage::Unconflicted)
        {
            Some(e) => {
                e.id = s.id;
                e.mode = s.mode;
                e.stat = s.stat;
            }
            None => new.push(s),
        }
    }
    if new.is_empty() {
        return;
    }
    for s in new {
        index.dangerously_push_entry(
            s.stat,
            s.id,
            gix::index::entry::Flags::empty(),
            s.mode,
            s.path.as_bstr(),
        );
    }
    index.sort_entries();
}

/// Remove the entries at `paths`.
pub fn remove(index: &mut gix::index::State, paths: &std::collections::HashSet<Vec<u8>>) {
    if !paths.is_empty() {
        index.remove_entries(|_, path, _| paths.contains(path.as_bytes()));
    }
}

/// The index file for `state` as gix writes it with a null trailing hash
/// (`skip_hash`), for the plain case: version 2, SHA-1, no extension left
/// to write. `None` otherwise (the caller lets gix write it).
///
/// gix writes each entry field by field through `dyn Write`, 14 calls an
/// entry; for the thousands of entries a session's index holds on every
/// turn, that was most of the time spent writing it (0.4 ms at 770 entries).
pub fn encode_plain(state: &gix::index::State) -> Option<Vec<u8>> {
    use gix::index::entry::Flags;
    if state.object_hash() != gix::hash::Kind::Sha1
        || state.is_sparse()
        || state.tree().is_some()
        || state
            .entries()
            .iter()
            .any(|e| e.flags.intersects(Flags::EXTENDED | Flags::REMOVE))
    {
        return None;
    }
    // Each entry: 62 bytes, the path, then 1 to 8 NULs to a multiple of 8.
    let entry_len = |path: usize| (62 + path + 8) & !7;
    let size = 12
        + state
            .entries()
            .iter()
            .map(|e| entry_len(e.path(state).len()))
            .sum::<usize>()
        + 20;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&(state.entries().len() as u32).to_be_bytes());
    for e in state.entries() {
        let s = &e.stat;
        for n in [
            s.ctime.secs,
            s.ctime.nsecs,
            s.mtime.secs,
            s.mtime.nsecs,
            s.dev,
            s.ino,
            e.mode.bits(),
            s.uid,
            s.gid,
            s.size,
        ] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        out.extend_from_slice(e.id.as_bytes());
        let path = e.path(state);
        let path_len = path.len().min(Flags::PATH_LEN.bits() as usize) as u16;
        out.extend_from_slice(&(e.flags.to_storage().bits() | path_len).to_be_bytes());
        out.extend_from_slice(path);
        out.resize(out.len() + entry_len(path.len()) - 62 - path.len(), 0);
    }
    out.extend_from_slice(&[0; 20]);
    debug_assert_eq!(out.len(), size);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let out = crate::git::tests::git(dir, args);
        assert!(out.status.success(), "git {args:?}");
    }

    fn gix_bytes(state: &gix::index::State) -> Vec<u8> {
        let file = gix::index::File::from_state(state.clone(), std::path::PathBuf::from("unused"));
        let mut out = Vec::new();
        file.write_to(
            &mut out,
            gix::index::write::Options {
                skip_hash: true,
                ..Default::default()
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn the_plain_encoding_is_what_gix_writes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        // Paths of every length modulo 8, an executable, a symlink, and a
        // path longer than the 12 bits of the flags' length field.
        for n in 1..=17 {
            std::fs::write(root.join("f".repeat(n)), format!("{n}")).unwrap();
        }
        std::fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            root.join("run.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::os::unix::fs::symlink("run.sh", root.join("link")).unwrap();
        git(root, &["add", "-A"]);
        git(root, &["update-index", "--assume-unchanged", "fff"]);
        git(
            root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "c",
            ],
        );
        let repo = gix::open(root).unwrap();
        let mut index = repo.open_index().unwrap();
        // No file system takes a path that long: the entry is made here.
        let long = "d/".repeat(2100) + "x";
        let first = index.entries()[0].clone();
        index.dangerously_push_entry(
            first.stat,
            first.id,
            first.flags,
            first.mode,
            long.as_str().into(),
        );
        index.sort_entries();
        assert!(index.entries().iter().any(|e| e.path(&index).len() > 0xfff));
        // Written as it is, the tree cache makes it gix's job.
        assert!(index.tree().is_some() && encode_plain(&index).is_none());
        index.remove_tree();
        let ours = encode_plain(&index).expect("a plain index");
        assert_eq!(ours, gix_bytes(&index));
        // skip-worktree needs version 3: not ours to write.
        git(root, &["update-index", "--skip-worktree", "ff"]);
        let mut index = repo.open_index().unwrap();
        index.remove_tree();
        assert!(encode_plain(&index).is_none());
        // Empty.
        let empty = gix::index::State::new(gix::hash::Kind::Sha1);
        assert_eq!(encode_plain(&empty).unwrap(), gix_bytes(&empty));
    }
}
