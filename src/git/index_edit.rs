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
        std::fs::read(path).io("read", path)
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
